#!/bin/bash
# layering_test.sh: the layers of src/README.md hold.  Every file of src/
# belongs to exactly one layer of its table "Layers" (by the globs in its
# second column), and every #include "x.h" of a file names a header of
# its own layer or of one the table lets it include.  Then, from the
# objects make built in the build directory, tests/layering_objects.py:
# the engines' headers reach only the storage files, and no two files of
# the storage or of the support layer call each other around a cycle.
# Speaks TAP.

set -u

SRCDIR=${EVALGATE_SRCDIR:-.}
BUILDDIR=${EVALGATE_BUILDDIR:-.}
PY=${PYTHON3:-python3}
TOP=$PWD
MAP="$SRCDIR/src/README.md"

. "$SRCDIR/tests/tap.sh"

# The table's rows: "| `layer` | `glob` `glob` | `layer` `layer` |",
# between the "## Layers" heading and the next heading.
rows=$(sed -n '/^## Layers/,/^## /p' "$MAP" | grep '^| `')
names=() globs=() allows=()
while IFS='|' read -r _ name files allowed _; do
	names+=("$(echo "$name" | tr -d '` ')")
	globs+=("$(echo "$files" | tr -d '`')")
	allows+=("$(echo "$allowed" | tr -d '`')")
done <<EOF
$rows
EOF
result $([ ${#names[@]} -ge 4 ]; echo $?) "src/README.md has a table of layers"

# layer_of PATH (relative to src/): the layer's name, or "" for none;
# "?" when two layers claim it.
layer_of() {
	local path=$1 found="" i g
	for i in "${!names[@]}"; do
		for g in ${globs[$i]}; do
			# shellcheck disable=SC2053
			if [[ $path == $g ]]; then
				[ -n "$found" ] && [ "$found" != "${names[$i]}" ] &&
				    { echo "?"; return; }
				found=${names[$i]}
			fi
		done
	done
	echo "$found"
}

allowed() {	# allowed FROM TO: 0 when layer FROM may include layer TO
	local i
	[ "$1" = "$2" ] && return 0
	for i in "${!names[@]}"; do
		if [ "${names[$i]}" = "$1" ]; then
			case " ${allows[$i]} " in *" $2 "*) return 0 ;; esac
			return 1
		fi
	done
	return 1
}

cd "$SRCDIR/src" || exit 1
files=$(find . -name '*.[ch]' | sed 's|^\./||' | sort)
for f in $files; do
	from=$(layer_of "$f")
	if [ -z "$from" ] || [ "$from" = "?" ]; then
		result 1 "$f: in exactly one layer (found '${from}')"
		continue
	fi
	bad=""
	for h in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		[ "$h" = "config.h" ] && continue
		to=$(layer_of "$h")
		if [ -z "$to" ] || [ "$to" = "?" ]; then
			bad="$bad $h (no layer)"
		elif ! allowed "$from" "$to"; then
			bad="$bad $h ($to)"
		fi
	done
	result $([ -z "$bad" ]; echo $?) "$f ($from) includes only what its layer may${bad:+:$bad}"
done

# The built objects: one "0|1<TAB>name<TAB>details" line per test point,
# or "skip<TAB>why" without a build.
cd "$TOP" || exit 1
objs=$(for i in "${!names[@]}"; do
	printf '%s\t%s\t%s\n' "${names[$i]}" "${globs[$i]}" "${allows[$i]}"
done | "$PY" "$SRCDIR/tests/layering_objects.py" "$BUILDDIR")
result $? "tests/layering_objects.py reads the objects"
while IFS=$'\t' read -r status name details; do
	case $status in
	skip)	echo "# $name" ;;
	0|1)	result "$status" "$name" "$details" ;;
	esac
done <<EOF
$objs
EOF

tap_done
