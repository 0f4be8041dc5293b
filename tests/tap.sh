# tap.sh: the Test Anything Protocol for the shell tests, sourced by
# them (. "$SRCDIR/tests/tap.sh"): result OK NAME [DETAILS] writes one
# test point (OK 0 passes; DETAILS, if any, go below a failure as
# comments), check NAME COMMAND... one that passes when COMMAND
# succeeds, and tap_done the plan, with the status to exit with.

n=0
failed=0

result() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/#   /'
	fi
	return 0
}

check() {
	local name=$1
	shift
	"$@" >/dev/null 2>&1
	result $? "$name"
}

tap_done() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}
