#!/bin/sh
# tests/pg/engine.sh STUB: runs the test program a stub of tests/pg names
# (its one line that is not a comment, a path from the source tree's
# top) with EVALGATE_TEST_ENGINE=postgresql: the same suite as the SQLite
# run, each gateway on a database of a throw-away PostgreSQL cluster
# (tests/e2e/pg.py).  make check runs it for each tests/pg/*.pg
# (Makefile.am: TEST_EXTENSIONS .pg, PG_LOG_COMPILER); its log is
# tests/pg/NAME.log, beside the SQLite run's tests/e2e/NAME.log.
set -eu
suite=$(grep -v '^#' "$1" | head -n 1)
[ -n "$suite" ] || { echo "Bail out! $1 names no test program"; exit 1; }
EVALGATE_TEST_ENGINE=postgresql
export EVALGATE_TEST_ENGINE
exec "${PYTHON3:-python3}" "${EVALGATE_SRCDIR:-.}/$suite"
