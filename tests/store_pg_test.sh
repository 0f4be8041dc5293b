#!/bin/sh
# store_pg_test.sh: runs tests/unit/store_pg_sql_test (the PostgreSQL
# engine's schema, statements and connection) against a throw-away
# PostgreSQL cluster, the one the end-to-end tests use (tests/e2e/pg.py:
# a unix socket in a temporary directory, no TCP, an unprivileged user
# when run as root), stopped after it.  Speaks TAP (the program's).
BUILDDIR=${EVALGATE_BUILDDIR:-.}
SRCDIR=${EVALGATE_SRCDIR:-.}
exec python3 "$SRCDIR/tests/e2e/pg.py" "$BUILDDIR/tests/unit/store_pg_sql_test"
