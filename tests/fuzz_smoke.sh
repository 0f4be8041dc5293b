#!/bin/bash
# fuzz_smoke.sh: a short run (10 s each, FUZZ_SMOKE_SECONDS to change it)
# of every libFuzzer target of fuzz/ over its seed corpus, which holds
# the inputs that once crashed a target.  One TAP point per target: ok
# with its executions, not ok on a crash, a leak, undefined behaviour, a
# broken property or a build failure (see fuzz/run and fuzz/README.md).

set -u

SRCDIR=${EVALGATE_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
EVALGATE_BUILDDIR=${EVALGATE_BUILDDIR:-.}
export EVALGATE_BUILDDIR

# fuzz/run builds into $EVALGATE_BUILDDIR/fuzz.
exec "$SRCDIR/fuzz/run" --tap "${FUZZ_SMOKE_SECONDS:-10}"
