#!/bin/bash
# docs_test.sh: the manual pages and sample configurations keep up with
# the code.  Every command and option the console's usage lists is in
# doc/evalgate-admin.8; every kind of backend and every kind option it
# lists (made from the kinds' tables) in doc/evalgate-admin.8 and
# doc/admin-api.md, the option by its JSON name; every setting of src/settings.c is in
# doc/evalgate.fcgi.8, and (but the tests-only one) in every file that
# gives the workers their settings: the FcgidInitialEnv lines of
# examples/apache-fcgid.conf (inside its virtual host), the
# bin-environment of lighttpd.conf.sample and of the drop-in
# examples/lighttpd-evalgate.conf, and the wrapper
# tools/shared-hosting-install writes.  (examples/apache-fcgid-server.conf
# holds mod_fcgid's server-wide settings only, none of the workers'.)
# Every setting but the tests-only ones has a row in the README's
# settings table, and the default that row and the manual page give
# ("Default: ...") is src/settings.c's, as its table prints it
# (tests/unit/settings_test --describe): the same value, or for one the
# code derives or leaves empty, "empty ..." or "... beside ...".
# Both pages format without warnings.  Speaks TAP.

set -u

BUILDDIR=${EVALGATE_BUILDDIR:-.}
SRCDIR=${EVALGATE_SRCDIR:-.}
ADMIN_MAN="$SRCDIR/doc/evalgate-admin.8"
FCGI_MAN="$SRCDIR/doc/evalgate.fcgi.8"

. "$SRCDIR/tests/tap.sh"

# The console's usage: "  app create NAME [--log-state] ...", one a line.
usage=$("$BUILDDIR/evalgate-admin" --help 2>&1 | sed -n 's/^  //p')
check "evalgate-admin --help lists commands" test -n "$usage"
while read -r line; do
	words=$(echo "$line" | sed 's/ [A-Z[].*//')
	check "evalgate-admin.8 has the command '$words'" \
	    grep -Eq "^\.It Cm $words( |$)" "$ADMIN_MAN"
	for opt in $(echo "$line" | grep -o -- '--[a-z-]*'); do
		check "evalgate-admin.8 has $words $opt" \
		    grep -Eq "Fl ${opt#-}( |$)" "$ADMIN_MAN"
	done
done <<EOF
$usage
EOF
# The kinds: "--kind lexical|systemone|openai" of backend add.  The
# options backend add and update take, kind options among them, by
# their JSON name: --max-options max_options, --extra-json extra.
API="$SRCDIR/doc/admin-api.md"
kinds=$(echo "$usage" | sed -n 's/^backend add .*--kind \([^ ]*\).*/\1/p' |
    tr '|' ' ')
check "evalgate-admin --help lists the kinds of backends" test -n "$kinds"
for k in $kinds; do
	check "evalgate-admin.8 names the kind $k" grep -qw -- "$k" "$ADMIN_MAN"
	check "admin-api.md names the kind $k" grep -qw -- "$k" "$API"
done
fields=$(echo "$usage" | grep -E '^backend (add|update) ' |
    grep -o -- '--[a-z-]*' | grep -v -- '^--url$' |
    sed -e 's/^--//' -e 's/-json$//' -e 's/-/_/g' | sort -u)
for f in $fields; do
	check "admin-api.md names the backend field $f" grep -qw -- "$f" "$API"
done

check "evalgate-admin.8 has the global --db" grep -q '^\.It Fl -db' \
    "$ADMIN_MAN"
check "evalgate-admin --help names --version" \
    grep -q -- '--version' <<<"$("$BUILDDIR/evalgate-admin" --help 2>&1)"
check "evalgate-admin.8 has --version" grep -q '^\.It Fl -version' \
    "$ADMIN_MAN"
check "evalgate.fcgi.8 has --version" grep -q '^\.It Fl -version' \
    "$SRCDIR/doc/evalgate.fcgi.8"

settings=$(grep -o '"SERVICE_[A-Z_]*"' "$SRCDIR/src/settings.c" | tr -d '"')
check "src/settings.c has settings" test -n "$settings"
for s in $settings; do
	check "evalgate.fcgi.8 describes $s" grep -q "^\.It Ev $s\$" "$FCGI_MAN"
	case $s in *_TEST_*) continue ;; esac
	# SERVICE_WORKERS repeats the web server's pool, which the workers
	# count themselves: each sample names it, for a pool over 4096,
	# and sets it nowhere.
	if [ "$s" = SERVICE_WORKERS ]; then
		for f in examples/apache-fcgid.conf lighttpd.conf.sample \
		    examples/lighttpd-evalgate.conf \
		    tools/shared-hosting-install; do
			check "$(basename $f) names $s and does not set it" \
			    sh -c "grep -q '^[[:space:]]*#.*$s' '$SRCDIR/$f' &&
			    ! grep -Eq '^[^#]*$s' '$SRCDIR/$f'"
		done
		continue
	fi
	check "apache-fcgid.conf sets $s" \
	    grep -Eq "^[[:space:]]*FcgidInitialEnv +$s " \
	    "$SRCDIR/examples/apache-fcgid.conf"
	for f in lighttpd.conf.sample examples/lighttpd-evalgate.conf; do
		check "$(basename $f) sets $s" \
		    grep -Eq "^[[:space:]]*\"$s\" +=>" "$SRCDIR/$f"
	done
	check "shared-hosting-install's wrapper sets $s" \
	    grep -Eq "^export $s=" "$SRCDIR/tools/shared-hosting-install"
done

# The defaults, from src/settings.c's own table.
table=$("$BUILDDIR/tests/unit/settings_test" --describe)
check "settings_test --describe prints src/settings.c's table" \
    test -n "$table"
out=$(printf '%s\n' "$table" | "${PYTHON3:-python3}" -c '
import re, sys
readme, man = (open(f, encoding="utf-8").read() for f in sys.argv[1:3])
rows = dict(re.findall(r"^\| `(SERVICE_[A-Z_]+)` \| ([^|]*) \|", readme,
                       re.M))

def same(code, doc):
    """Whether a document'"'"'s default (its words) says the code'"'"'s."""
    doc = doc.replace("`", "").strip()
    if code == "":
        return doc.startswith("empty") or " beside " in doc
    return re.split(r"[ ,:;]", doc, 1)[0].rstrip(".") == code

def man_default(name):
    """The words after "Default:" in the manual page entry, no macros."""
    m = re.search(r"^\.It Ev %s\n(.*?)(?=^\.It Ev |^\.El)" % name, man,
                  re.M | re.S)
    if m is None or "Default:" not in m.group(1):
        return ""
    text = m.group(1).split("Default:", 1)[1]
    text = re.sub(r"^\.(Ar|Pa|Cm|Li|Ev) ", "", text, flags=re.M)
    text = re.sub(r" Ns (Pa )?", "", text).replace("\n", " ").strip()
    if text.startswith("localstatedir"):
        text = "$" + text
    return text

for line in sys.stdin:
    name, code = line.rstrip("\n").split("\t")
    if "_TEST_" in name:
        continue
    doc = rows.get(name)
    print("%d\tREADME has a row for %s" % (doc is None, name))
    if doc is not None:
        ok = same(code, doc)
        print("%d\tREADME gives %s the default %r%s" % (not ok, name,
              code, "" if ok else ", not %r" % doc.strip()[:60]))
    md = man_default(name)
    ok = same(code, md)
    print("%d\tevalgate.fcgi.8 gives %s the default %r%s" % (not ok,
          name, code, "" if ok else ", not %r" % md[:60]))
' "$SRCDIR/README.md" "$FCGI_MAN")
while IFS=$'\t' read -r status name; do
	[ -n "$name" ] && result "$status" "$name"
done <<EOF
$out
EOF

if command -v groff >/dev/null 2>&1; then
	for page in "$ADMIN_MAN" "$FCGI_MAN"; do
		check "$(basename "$page") formats without warnings" \
		    test -z "$(groff -mdoc -Tutf8 -ww -z "$page" 2>&1)"
	done
fi

tap_done
