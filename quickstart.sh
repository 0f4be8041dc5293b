#!/bin/sh
# quickstart.sh: from a fresh Debian machine to a running gateway.
# Installs the dependencies, builds in _build/, creates a database in
# _run/ with a demo application, key, the built-in lexical backend and a
# demo schema granted to it, starts lighttpd on 127.0.0.1:8080 (PORT=...
# to change), evaluates examples/evaluate.json and prints the key and a
# curl line to try.  Running it again keeps the database and restarts
# lighttpd.  Stop with: kill $(cat _run/lighttpd.pid)
set -eu
cd "$(dirname "$0")"
top=$(pwd)
port=${PORT:-8080}
admin_port=${ADMIN_PORT:-8081}
run=$top/_run

tools/deps.sh
autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
mkdir -p _build
(cd _build && { [ -f Makefile ] || "$top/configure" -q; } && make -j2 >/dev/null)

mkdir -p "$run/www"
export SERVICE_DB_PATH="$run/evalgate.db"
admin="$top/_build/evalgate-admin"
"$admin" init >/dev/null
"$admin" app create demo --admin >/dev/null 2>&1 || true
"$admin" backend add lexical --kind lexical \
    --description "Built-in word-overlap baseline (offline)" \
    --release-date 2026-11-01 >/dev/null 2>&1 || true
if ! "$admin" schema list demo 2>/dev/null | grep -q '^demo '; then
	"$admin" schema publish demo --questions examples/demo-questions.json \
	    --backend lexical >/dev/null
	"$admin" grant demo demo >/dev/null
fi
key=$("$admin" key issue demo)

# The sample configuration, with its var.* lines pointing here.
sed -e "s|^var.evalgate_worker = .*|var.evalgate_worker = \"$top/_build/evalgate.fcgi\"|" \
    -e "s|^var.evalgate_state  = .*|var.evalgate_state  = \"$run\"|" \
    -e "s|^var.evalgate_public = .*|var.evalgate_public = $port|" \
    -e "s|^var.evalgate_admin  = .*|var.evalgate_admin  = \"127.0.0.1:$admin_port\"|" \
    -e "s|^var.evalgate_errors = .*|var.evalgate_errors = \"$top/errors\"|" \
    lighttpd.conf.sample > "$run/lighttpd.conf"
if [ -f "$run/lighttpd.pid" ]; then
	kill "$(cat "$run/lighttpd.pid")" 2>/dev/null || true
	sleep 1
fi
lighttpd -f "$run/lighttpd.conf"
i=0
until curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 50 ] || { echo "gateway did not start: see $run/lighttpd-error.log and $run/evalgate-error.log" >&2; exit 1; }
	sleep 0.2
done

echo "evalgate is running on http://127.0.0.1:$port (admin: 127.0.0.1:$admin_port)"
echo
echo "A demo evaluation on the built-in lexical backend:"
curl -sS "http://127.0.0.1:$port/v1/systemone" \
    -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    --data @examples/evaluate.json
echo
echo
echo "Your demo key (shown once): $key"
echo "Try:"
echo "  curl -sS http://127.0.0.1:$port/v1/systemone -H 'Authorization: Bearer $key' -H 'Content-Type: application/json' --data @examples/evaluate.json"
echo "Stop: kill \$(cat _run/lighttpd.pid)"
