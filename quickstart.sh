#!/bin/sh
# quickstart.sh: from a fresh Debian machine to a running gateway.
# Installs the dependencies (tools/deps.sh: nothing when they are all
# there; --no-deps skips it), builds in _build/, creates a database in
# _run/ with a demo application, the built-in lexical backend and a demo
# schema granted to it, starts lighttpd on 127.0.0.1:8080 with its
# internal listener on 127.0.0.1:8081 (EVALGATE_PORT=... and
# EVALGATE_ADMIN_PORT=... to change them), issues a demo key once
# (kept in _run/demo-key, mode 0600), evaluates examples/evaluate.json
# and prints the key, a curl line to try and the console's command line
# (_run/evalgate-admin, which names the demo database).
#
# It checks both ports before doing anything else, and stops if another
# program holds one.  Running it again reuses the database, application,
# backend, schema and key it made, and restarts its own gateway (the
# lighttpd whose pid _run/lighttpd.pid names and that runs
# _run/lighttpd.conf; no other process is ever stopped).  A run that
# fails issues no key.  Stop with: kill $(cat _run/lighttpd.pid)
set -eu
cd "$(dirname "$0")"
top=$(pwd)
run=$top/_run
deps=yes

for arg; do
	case $arg in
	--no-deps) deps=no ;;
	-h|--help)
		sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
		exit 0 ;;
	*)
		echo "usage: $0 [--no-deps]" >&2
		exit 2 ;;
	esac
done
port=${EVALGATE_PORT:-${PORT:-8080}}
admin_port=${EVALGATE_ADMIN_PORT:-${ADMIN_PORT:-8081}}
for p in "$port" "$admin_port"; do
	case $p in
	''|*[!0-9]*) echo "quickstart.sh: port '$p' is not a number" >&2
		exit 2 ;;
	esac
done
if [ "$port" = "$admin_port" ]; then
	echo "quickstart.sh: EVALGATE_PORT and EVALGATE_ADMIN_PORT are both" \
	    "$port" >&2
	exit 2
fi

# The pid of this tree's own gateway from an earlier run, if it runs:
# the process _run/lighttpd.pid names, if it is lighttpd on
# _run/lighttpd.conf (a pid file left behind may name another process).
own_gateway() {
	[ -f "$run/lighttpd.pid" ] || return 0
	pid=$(cat "$run/lighttpd.pid" 2>/dev/null) || return 0
	case $pid in ''|*[!0-9]*) return 0 ;; esac
	[ -r "/proc/$pid/cmdline" ] || return 0
	if tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qx "$run/lighttpd.conf" &&
	    tr '\0' '\n' <"/proc/$pid/cmdline" | head -n 1 |
	    grep -q 'lighttpd$'; then
		echo "$pid"
	fi
}

# The ports the earlier run's configuration gave it.
own_ports() {
	[ -f "$run/lighttpd.conf" ] || return 0
	sed -n -e 's/^var\.evalgate_public = \([0-9]*\).*/\1/p' \
	    -e 's/^var\.evalgate_admin  = "[^:]*:\([0-9]*\)".*/\1/p' \
	    "$run/lighttpd.conf"
}

# Whether a socket listens on 127.0.0.1:$1 already (any address of the
# host's, or a loopback one), from the kernel's tables.
port_busy() {
	hex=$(printf '%04X' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v hex="$hex" '
	    $4 == "0A" {
		split($2, a, ":")
		if (a[2] != hex)
			next
		addr = a[1]
		if (addr == "00000000" || (length(addr) == 8 &&
		    substr(addr, 7, 2) == "7F") ||
		    addr == "00000000000000000000000000000000" ||
		    addr == "00000000000000000000000001000000" ||
		    (substr(addr, 1, 24) == "0000000000000000FFFF0000" &&
		    substr(addr, 31, 2) == "7F"))
			found = 1
	    }
	    END { exit found ? 0 : 1 }'
}

own=$(own_gateway)
held=
[ -z "$own" ] || held=$(own_ports)
for p in "$port" "$admin_port"; do
	if [ "$p" = "$port" ]; then
		var=EVALGATE_PORT what="public port"
	else
		var=EVALGATE_ADMIN_PORT what="internal (admin) port"
	fi
	if port_busy "$p" && ! echo "$held" | grep -qx "$p"; then
		echo "quickstart.sh: the $what $p is in use by another" \
		    "program; nothing was changed.  Stop it, or choose" \
		    "another port: $var=N ./quickstart.sh" >&2
		exit 1
	fi
done

[ "$deps" = no ] || tools/deps.sh
autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
mkdir -p _build
(cd _build && { [ -f Makefile ] || "$top/configure" -q; } && make -j2 >/dev/null)

# The console, on the demo database: _run/evalgate-admin COMMAND.
mkdir -p "$run/www"
export SERVICE_DB_PATH="$run/evalgate.db"
admin="$top/_build/evalgate-admin"
quote() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}
{
	echo '#!/bin/sh'
	echo '# evalgate-admin on the database quickstart.sh made.'
	echo "SERVICE_DB_PATH=$(quote "$SERVICE_DB_PATH")" \
	    "exec $(quote "$admin") \"\$@\""
} >"$run/evalgate-admin.tmp"
chmod 755 "$run/evalgate-admin.tmp"
mv "$run/evalgate-admin.tmp" "$run/evalgate-admin"

# The demo data, each made once.
"$admin" init >/dev/null
if ! "$admin" app list | awk 'NR > 1 && $1 == "demo" { f = 1 }
    END { exit !f }'; then
	"$admin" app create demo --admin >/dev/null
fi
if ! "$admin" backend list | awk 'NR > 1 && $1 == "lexical" { f = 1 }
    END { exit !f }'; then
	"$admin" backend add lexical --kind lexical \
	    --description "Built-in word-overlap baseline (offline)" \
	    --release-date 2026-11-01 >/dev/null
fi
if ! "$admin" schema list demo | awk 'NR > 1 && $1 == "demo" { f = 1 }
    END { exit !f }'; then
	"$admin" schema publish demo --questions examples/demo-questions.json \
	    --backend lexical >/dev/null
	"$admin" grant demo demo >/dev/null
fi

# The sample configuration, with its var.* lines pointing here.
sed -e "s|^var.evalgate_worker = .*|var.evalgate_worker = \"$top/_build/evalgate.fcgi\"|" \
    -e "s|^var.evalgate_state  = .*|var.evalgate_state  = \"$run\"|" \
    -e "s|^var.evalgate_public = .*|var.evalgate_public = $port|" \
    -e "s|^var.evalgate_admin  = .*|var.evalgate_admin  = \"127.0.0.1:$admin_port\"|" \
    -e "s|^var.evalgate_errors = .*|var.evalgate_errors = \"$top/errors\"|" \
    lighttpd.conf.sample > "$run/lighttpd.conf.new"
own=$(own_gateway)
if [ -n "$own" ]; then
	kill "$own"
	i=0
	while [ -d "/proc/$own" ] && [ $i -lt 100 ]; do
		i=$((i + 1))
		sleep 0.1
	done
fi
mv "$run/lighttpd.conf.new" "$run/lighttpd.conf"
if ! lighttpd -f "$run/lighttpd.conf"; then
	echo "quickstart.sh: lighttpd did not start (port $port or" \
	    "$admin_port taken meanwhile?): see $run/lighttpd-error.log" >&2
	exit 1
fi
i=0
until curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 50 ] || { echo "gateway did not start: see $run/lighttpd-error.log and $run/evalgate-error.log" >&2; exit 1; }
	sleep 0.2
done

# The demo key: the one saved, while it is valid; else a new one.
key=
if [ -f "$run/demo-key" ]; then
	key=$(cat "$run/demo-key")
	prefix=$(echo "$key" | sed -n 's/^svc_\([^_]*\)_.*/\1/p')
	"$admin" key list demo | awk -v p="$prefix" 'NR > 1 && $1 == p &&
	    $4 == "-" && $5 == "-" { f = 1 } END { exit !f }' || key=
fi
if [ -z "$key" ]; then
	key=$("$admin" key issue demo)
	(umask 077 && echo "$key" >"$run/demo-key.tmp")
	mv "$run/demo-key.tmp" "$run/demo-key"
fi

echo "evalgate is running on http://127.0.0.1:$port (admin: 127.0.0.1:$admin_port)"
echo
echo "A demo evaluation on the built-in lexical backend:"
curl -sS "http://127.0.0.1:$port/v1/systemone" \
    -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    --data @examples/evaluate.json
echo
echo
echo "Your demo key (saved in _run/demo-key): $key"
echo "Try:"
echo "  curl -sS http://127.0.0.1:$port/v1/systemone -H \"Authorization: Bearer \$(cat _run/demo-key)\" -H 'Content-Type: application/json' --data @examples/evaluate.json"
echo "The console on this database (either line):"
echo "  _run/evalgate-admin backend list"
echo "  SERVICE_DB_PATH=$run/evalgate.db _build/evalgate-admin backend list"
echo "Stop: kill \$(cat _run/lighttpd.pid)"
