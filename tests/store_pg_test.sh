#!/bin/bash
# store_pg_test.sh: runs tests/unit/store_pg_sql_test (the PostgreSQL
# engine's schema, statements and connection) against a throw-away
# PostgreSQL cluster it starts and stops: initdb and pg_ctl, a unix
# socket in a temporary directory, no TCP.  PostgreSQL refuses to run as
# root: as root, the cluster runs as the unprivileged user pgtest (made
# if missing).  Speaks TAP (the program's).

set -u

BUILDDIR=${EVALGATE_BUILDDIR:-.}
PGBIN=${EVALGATE_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null |
    sort -V | tail -n 1)}
if [ ! -x "$PGBIN/initdb" ]; then
	echo "Bail out! no PostgreSQL server (initdb) in '$PGBIN':" \
	    "install postgresql-15 (tools/deps.sh)"
	exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/evalgate-pg.XXXXXX") || exit 1
chmod 755 "$T"

as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		su pgtest -s /bin/sh -c "$1"
	else
		sh -c "$1"
	fi
}

if [ "$(id -u)" -eq 0 ]; then
	id pgtest >/dev/null 2>&1 || useradd -r -M -s /bin/sh pgtest
	chown pgtest "$T"
fi
stop() {
	as_owner "'$PGBIN/pg_ctl' -D '$T/data' -m immediate stop" \
	    >/dev/null 2>&1
	rm -rf "$T"
}
trap stop EXIT

if ! as_owner "'$PGBIN/initdb' -D '$T/data' -A trust -U evalgate" \
    >"$T/initdb.log" 2>&1 ||
    ! as_owner "'$PGBIN/pg_ctl' -D '$T/data' -l '$T/log' -w -o \
    \"-k '$T' -c listen_addresses='' -c fsync=off\" start" \
    >"$T/start.log" 2>&1 ||
    ! as_owner "'$PGBIN/createdb' -h '$T' -U evalgate evalgate" \
    >>"$T/start.log" 2>&1; then
	echo "Bail out! cannot start a PostgreSQL cluster:"
	sed 's/^/# /' "$T/initdb.log" "$T/start.log" "$T/log" 2>/dev/null
	exit 1
fi
EVALGATE_TEST_PG_URL="postgresql:///evalgate?host=$T&user=evalgate"
export EVALGATE_TEST_PG_URL
"$BUILDDIR/tests/unit/store_pg_sql_test"
