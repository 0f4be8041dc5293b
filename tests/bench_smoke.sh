#!/bin/bash
# bench_smoke.sh: proves bench/run still works, as TAP: a 2-second run of
# every scenario, the slow backend at 4 workers (an optimised build of its
# own, lighttpd, nginx, wrk).
# Its figures mean nothing; bench/RESULTS.md holds real ones.
set -u
src=${EVALGATE_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${EVALGATE_BUILDDIR:-$src}
out=$build/bench-smoke.md
log=$build/bench-smoke.log

BENCH_BUILDDIR=$build/bench-build "$src/bench/run" --smoke --out "$out" \
    >"$log" 2>&1
rc=$?
n=0
check() {
	n=$((n + 1))
	if eval "$2"; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		sed 's/^/#   /' "$log" | tail -20
	fi
}
check "bench/run --smoke exits 0" '[ "$rc" -eq 0 ]'
for s in floor "lexical full" "lexical normal" "upstream normal" \
    "nginx direct"; do
	check "a figure for $s" "grep -q '^| $s | [0-9]' '$out' 2>/dev/null"
done
# PostgreSQL (doc/design.md, section 21): its figures and round trips in a build with
# the engine, else a line saying why they are skipped.
check "a figure for postgresql full, or why not" \
    "grep -q '^| postgresql full | [0-9]' '$out' 2>/dev/null ||
    grep -q '^PostgreSQL skipped: ' '$out' 2>/dev/null"
check "the round trips per evaluation, or why not" \
    "grep -q '^Round trips per evaluation.*\*\*[0-9]' '$out' 2>/dev/null ||
    grep -q '^PostgreSQL skipped: ' '$out' 2>/dev/null"
check "metrics on against off is reported" \
    "grep -q 'Metrics on against off.*ratio \\*\\*[0-9]' '$out' 2>/dev/null"
for s in floor evalgate; do
	check "a slow-backend figure for $s" \
	    "grep -q '^| lighttpd | 4 | $s | [0-9]' '$out' 2>/dev/null"
done
check "the gateway-added latency is reported" \
    "grep -q 'Gateway-added latency.*[0-9] ms' '$out' 2>/dev/null"
check "the lexical pipeline's added latency is reported" \
    "grep -q \"the lexical pipeline's.*[0-9] ms\" '$out' 2>/dev/null"
check "the fast-path targets are reported" \
    "grep -q '^| lexical .normal., at least 0.30 of the floor | [0-9]' \
    '$out' 2>/dev/null"
echo "1..$n"
