#!/bin/bash
# console_test.sh: evalgate-admin on a fresh database, command by command:
# exit statuses (0 done, 1 refused, 2 bad usage), what is printed, what
# is refused and why, and one audit row per mutation.  Speaks TAP.

set -u

BUILDDIR=${EVALGATE_BUILDDIR:-.}
ADMIN="$BUILDDIR/evalgate-admin"
T=$(mktemp -d "${TMPDIR:-/tmp}/evalgate-console.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
DB="$T/var/evalgate.db"

# Only what this test sets reaches the console.
for v in $(env | sed -n 's/^\(SERVICE_[A-Z_]*\)=.*/\1/p'); do
	unset "$v"
done

n=0
failed=0

pass() {
	n=$((n + 1))
	echo "ok $n - $1"
}

fail() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	for line in "$@"; do
		echo "# $line"
	done
}

# run ARGS...: runs the console; sets rc, out and err.
run() {
	"$ADMIN" --db "$DB" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
}

# expect RC DESCRIPTION ARGS...: runs the console and checks its status.
expect() {
	local want=$1 what=$2

	shift 2
	run "$@"
	if [ "$rc" -eq "$want" ]; then
		pass "$what"
	else
		fail "$what" "evalgate-admin $*" "exit $rc, want $want" \
		    "stdout: $out" "stderr: $err"
	fi
}

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
	local what=$1

	shift
	if "$@"; then
		pass "$what"
	else
		fail "$what" "stdout: $out" "stderr: $err"
	fi
}

# refused DESCRIPTION PATTERN ARGS...: exit 1 and PATTERN on stderr.
refused() {
	local what=$1 pattern=$2

	shift 2
	run "$@"
	if [ "$rc" -eq 1 ] && [[ $err =~ $pattern ]] &&
	    [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ]; then
		pass "$what"
	else
		fail "$what" "evalgate-admin $*" "exit $rc, want 1" \
		    "stderr: $err (want one line matching $pattern)"
	fi
}

sql() {
	sqlite3 "$DB" "$1"
}

# Files the commands read.
cat >"$T/mood.json" <<'EOF'
{"mood": {"type": "choice", "instructions": "How does the writer feel?",
  "criteria": {"happy": "content, pleased", "sad": null, "angry": null}},
 "level": {"type": "score", "criteria": ["low", "medium", "high"]},
 "urgent": {"type": "noul"}}
EOF
# The same shape, other texts: a new version, the same fingerprint.
cat >"$T/mood2.json" <<'EOF'
{"urgent": {"type": "noul", "instructions": "Is it urgent?"},
 "level": {"type": "score", "instructions": {"scale": "effort"},
  "criteria": ["low", "medium", "high"]},
 "mood": {"type": "choice",
  "criteria": {"angry": "cross", "sad": "down", "happy": "glad"}}}
EOF
cat >"$T/bad-questions.json" <<'EOF'
{"level": {"type": "score", "criteria": {"0": "low", "1": "high"}}}
EOF
echo '{"mood": ' >"$T/not-json.json"
printf 'Ticket from {{name}} ({{count}} earlier):\n{{#tags}}- {{.}}\n{{/tags}}' \
    >"$T/body.txt"
echo '{"name": "string", "count": "integer", "tags": "array"}' \
    >"$T/vars.json"
echo 'Hello {{who}}' >"$T/undeclared.txt"

# init, the pepper, applications, keys.
expect 0 "init creates database, cache and pepper" init
check "init reports the pepper created" grep -q 'pepper .* created' "$T/out"
expect 0 "init again is idempotent" init
check "init again keeps the pepper" grep -q 'pepper .* kept' "$T/out"
check "the pepper has mode 0600" \
    test "$(stat -c %a "$T/var/pepper")" = 600
check "the cache is beside the database" test -f "$T/var/cache.db"
check "the database records schema version 10" \
    test "$(sql 'PRAGMA user_version')" = 10
check "without decisions_time, which no query reads since version 7" \
    test "$(sql "SELECT count(*) FROM sqlite_schema \
    WHERE name = 'decisions_time'")" = 0
# A version-1 database (no decisions_schema index, no catalog generation
# and its triggers, no keyed hash of keys, no in-flight limit of
# backends, no options of backend kinds, no label mass of answers, no
# challengers, answers in a table of their own) is brought forward.
for trigger in $(sql "SELECT name FROM sqlite_schema WHERE type = 'trigger'")
do
    sql "DROP TRIGGER $trigger"
done
sql 'DROP TABLE catalog_generation; DROP TABLE challenger_answers;
    DROP TABLE schema_challengers; DROP TABLE outcomes;
    CREATE TABLE decisions_1 AS SELECT id, app_id, created_at_ms, model,
        backend, schema_id, schema_version, template_id, template_version,
        state, input_tokens, output_tokens, latency_gateway_ms,
        latency_backend_ms FROM decisions;
    DROP TABLE decisions; ALTER TABLE decisions_1 RENAME TO decisions;
    CREATE INDEX decisions_app_time ON decisions(app_id, created_at_ms, id);
    CREATE TABLE decision_answers (decision_id TEXT NOT NULL,
        question TEXT NOT NULL, position INTEGER NOT NULL, type TEXT NOT NULL,
        distribution TEXT NOT NULL, answer TEXT NOT NULL,
        PRIMARY KEY (decision_id, question)) WITHOUT ROWID;
    CREATE TABLE outcomes (decision_id TEXT NOT NULL, question TEXT NOT NULL,
        value TEXT NOT NULL, source TEXT, recorded_at_ms INTEGER NOT NULL,
        PRIMARY KEY (decision_id, question)) WITHOUT ROWID;
    ALTER TABLE api_keys DROP COLUMN secret_check;
    ALTER TABLE backends DROP COLUMN max_in_flight;
    ALTER TABLE backends DROP COLUMN options;
    ALTER TABLE applications DROP COLUMN retention_days;
    PRAGMA user_version=1'
expect 0 "init migrates a version-1 database" init
check "the migration brought it to version 10" \
    test "$(sql 'PRAGMA user_version')" = 10
check "the migration added the keyed hash of keys and the in-flight limit" \
    sql 'SELECT secret_check FROM api_keys; SELECT max_in_flight FROM backends' 
check "and the options of backend kinds, in one column, and answers in \
the decision's row, outcomes by schema version" \
    sql 'SELECT options FROM backends; SELECT rid, answers FROM decisions;
    SELECT schema_id, schema_version FROM outcomes'
check "and the retention of applications and its indexes" \
    test "$(sql "SELECT count(retention_days) FROM applications; \
    SELECT group_concat(name) FROM (SELECT name FROM sqlite_schema \
    WHERE name LIKE 'decisions_%time' ORDER BY name)")" = \
    "0
decisions_app_time,decisions_state_time"
check "the migration made outcomes_schema, not decisions_schema" \
    test "$(sql "SELECT group_concat(name) FROM sqlite_schema \
    WHERE name IN ('decisions_schema', 'outcomes_schema')")" = outcomes_schema
check "the migration created the catalog generation, one row" \
    test "$(sql 'SELECT count(*) FROM catalog_generation')" = 1
check "and its triggers: insert, update, delete on 10 catalog tables" \
    test "$(sql "SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' \
    AND sql LIKE '%catalog_generation SET n = n + 1%'")" = 30
generation() { sql 'SELECT n FROM catalog_generation'; }
sql 'PRAGMA user_version=99'
refused "a database newer than the program is refused" 'newer' init
sql 'PRAGMA user_version=10'

before=$(generation)
expect 0 "app create" app create alpha --rate-per-minute 60
check "a catalog change moves the generation" \
    test "$(generation)" -gt "$before"
expect 0 "app create an admin application" app create ops --admin
refused "app create refuses a duplicate name" "alpha" app create alpha
expect 0 "app update" app update alpha --log-state on --daily-quota 500
check "app update prints the new settings" \
    grep -q '^log_state: true$' "$T/out"
expect 0 "app list" app list
check "app list shows both applications" \
    test "$(grep -cE '^(alpha|ops) ' "$T/out")" -eq 2
check "app list shows the quota" grep -qE '^alpha .* 500 ' "$T/out"

expect 0 "key issue" key issue alpha
key=$out
check "key issue prints only the key, svc_<prefix>_<secret>" \
    eval '[[ $key =~ ^svc_[a-z0-9]{8}_[A-Za-z0-9]{32}$ ]]'
prefix=${key:4:8}
expect 0 "key list APP" key list alpha
check "key list shows the prefix, never the secret" \
    eval 'grep -q "^$prefix " "$T/out" && ! grep -q "${key:13}" "$T/out"'
expect 0 "key revoke" key revoke "$prefix"
run key list
check "key list shows the revocation" \
    eval '[[ $(grep "^$prefix " "$T/out") =~ [0-9]{4}-[0-9]{2}-[0-9]{2}T.*[0-9]{4}-[0-9]{2}-[0-9]{2}T ]]'
refused "key revoke of an unknown prefix" "no key" key revoke zzzzzzzz
refused "key issue for an unknown application" "no application" \
    key issue nobody

# Backends.
expect 0 "backend add lexical" backend add lex --kind lexical \
    --description "built-in baseline" --release-date 2026-01-31
expect 0 "backend add systemone with two replicas" backend add up \
    --kind systemone --url http://127.0.0.1:9/ --url https://b.example/api \
    --model jev-1 --auth-env UPSTREAM_KEY --timeout-ms 5000
check "backend add prints the replicas, without a trailing /" \
    grep -qF 'urls: ["http://127.0.0.1:9","https://b.example/api"]' \
    "$T/out"
check "backend add prints the variable's name" \
    grep -q '^auth_env: UPSTREAM_KEY$' "$T/out"
refused "backend add refuses an unknown kind" "^evalgate-admin: kind: " \
    backend add x --kind oracle
refused "backend add systemone needs a URL" "urls: .*systemone" \
    backend add x --kind systemone
refused "backend add lexical refuses URLs" "urls: " \
    backend add x --kind lexical --url http://a.example
refused "backend add refuses a URL that is not http(s)" "urls\[1\]: " \
    backend add x --kind systemone --url http://a.example --url ftp://b
refused "backend add refuses credentials in a URL" "urls\[0\]: .*auth_env" \
    backend add x --kind systemone --url https://u:secret@a.example
refused "backend add refuses a repeated URL" "urls\[1\]: repeats" \
    backend add x --kind systemone --url http://a.example \
    --url http://a.example/
refused "backend add refuses a date that is not a day" "release_date: " \
    backend add x --kind lexical --release-date 2026-02-30
refused "backend add refuses a date in another format" "release_date: " \
    backend add x --kind lexical --release-date 31/01/2026
refused "backend add refuses a key given as auth-env" "auth_env: " \
    backend add x --kind systemone --url http://a.example \
    --auth-env sk-live-abc123
refused "backend add refuses a timeout out of range" "timeout_ms: " \
    backend add x --kind lexical --timeout-ms 50
refused "backend add refuses a duplicate name" "lex" \
    backend add lex --kind lexical
expect 2 "backend add without --kind is bad usage" backend add x
check "no refused backend was stored" \
    test "$(sql 'SELECT count(*) FROM backends')" -eq 2
check "the secret-free auth_env name is stored" \
    test "$(sql "SELECT auth_env FROM backends WHERE name = 'up'")" = \
    UPSTREAM_KEY
check "replicas are stored in order" \
    test "$(sql "SELECT group_concat(url, ' ') FROM (SELECT url FROM backend_replicas ORDER BY position)")" = \
    "http://127.0.0.1:9 https://b.example/api"

expect 0 "backend disable" backend disable lex
check "backend disable prints enabled: false" \
    grep -q '^enabled: false$' "$T/out"
expect 0 "backend list" backend list
check "backend list shows lex disabled" grep -qE '^lex +lexical +false ' \
    "$T/out"
expect 0 "backend enable" backend enable lex
run backend list
check "backend list shows both, lex enabled" \
    eval 'grep -qE "^lex +lexical +true " "$T/out" &&
    grep -qE "^up +systemone +true +jev-1 " "$T/out"'
refused "backend disable of an unknown backend" "no backend named 'zz'" \
    backend disable zz

# backend update: any option of backend add but --kind, checked as add
# checks them, all or nothing.
backend_row() {
	sql "SELECT coalesce(model, '-') || ' ' || coalesce(auth_env, '-') ||
	    ' ' || coalesce(timeout_ms, '-') || ' ' || description || ' ' ||
	    (SELECT group_concat(url, ' ') FROM (SELECT url FROM
	    backend_replicas r WHERE r.backend_id = b.id ORDER BY position))
	    FROM backends b WHERE name = 'up'"
}
expect 0 "backend update replaces replicas, model, timeout, description" \
    backend update up --url http://127.0.0.1:10 --model jev-2 \
    --timeout-ms 7000 --description "second model"
check "backend update stored every field given, the rest kept" \
    test "$(backend_row)" = \
    "jev-2 UPSTREAM_KEY 7000 second model http://127.0.0.1:10"
check "backend update prints the backend" \
    grep -qF 'urls: ["http://127.0.0.1:10"]' "$T/out"
expect 0 "backend update --auth-env '' and --timeout-ms default clear them" \
    backend update up --auth-env '' --timeout-ms default
check "auth_env and timeout_ms are back to none and the default" \
    test "$(backend_row)" = \
    "jev-2 - - second model http://127.0.0.1:10"
before=$(backend_row)
refused "backend update refuses a bad URL, and changes nothing else" \
    "urls\[0\]: " backend update up --model jev-3 --url ftp://x
refused "backend update refuses a key given as auth-env" "auth_env: " \
    backend update up --auth-env sk-live-abc123
refused "backend update refuses URLs for a built-in backend" "urls: " \
    backend update lex --url http://a.example
refused "backend update of an unknown backend" "no backend named 'zz'" \
    backend update zz --model m
refused "backend update with nothing to change" "enabled: nothing to change" \
    backend update up
expect 2 "backend update --kind is bad usage" backend update up \
    --kind lexical
check "no refused update changed anything" test "$(backend_row)" = "$before"

# Schemas.
expect 0 "schema publish" schema publish mood --questions "$T/mood.json" \
    --backend lex
check "schema publish prints version 1, bare" test "$out" = 1
expect 0 "schema publish again with other texts" schema publish mood \
    --questions "$T/mood2.json" --backend up --temperature 1.5 \
    --abstain-threshold 0.4
check "schema publish prints version 2, bare" test "$out" = 2
check "both versions share one fingerprint" \
    test "$(sql 'SELECT count(DISTINCT fingerprint) FROM schema_versions')" -eq 1
check "questions are stored as compact JSON" \
    test "$(sql "SELECT questions FROM schema_versions WHERE version = 1" | head -c 20)" = \
    '{"mood":{"type":"cho'
expect 0 "schema publish of a second schema" schema publish other.v2 \
    --questions "$T/mood.json" --backend lex
check "a new schema starts at version 1" test "$out" = 1
refused "schema publish refuses bad questions, naming the field" \
    "questions\.level\.criteria" \
    schema publish bad --questions "$T/bad-questions.json" --backend lex
refused "schema publish refuses an unknown backend" \
    "backend: no backend named 'nope'" \
    schema publish mood --questions "$T/mood.json" --backend nope
refused "schema publish refuses a bad id" "^evalgate-admin: id: " \
    schema publish Mood! --questions "$T/mood.json" --backend lex
refused "schema publish refuses temperature 0" "temperature: " \
    schema publish mood --questions "$T/mood.json" --backend lex \
    --temperature 0
refused "schema publish refuses a threshold over 1" "abstain_threshold: " \
    schema publish mood --questions "$T/mood.json" --backend lex \
    --abstain-threshold 1.5
refused "schema publish refuses a file that is not JSON" "not JSON" \
    schema publish mood --questions "$T/not-json.json" --backend lex
refused "schema publish refuses a missing file" "no-such" \
    schema publish mood --questions "$T/no-such.json" --backend lex
truncate -s $((16 * 1024 * 1024 + 1)) "$T/huge.json"
refused "schema publish refuses a file over 16 MiB, naming it" \
    "huge.json: larger than 16 MiB" \
    schema publish mood --questions "$T/huge.json" --backend lex
rm -f "$T/huge.json"
check "refused publications stored nothing" \
    test "$(sql 'SELECT count(*) FROM schema_versions')" -eq 3
expect 0 "schema list" schema list
check "schema list shows one row per version" \
    test "$(grep -cE '^(mood|other\.v2) ' "$T/out")" -eq 3
check "schema list shows backend, temperature and threshold" \
    grep -qE '^mood +2 +[0-9a-f]{64} +up +1\.5 +0\.4 ' "$T/out"
expect 0 "schema list ID" schema list mood
check "schema list ID shows that schema only" \
    test "$(grep -cE '^mood ' "$T/out")" -eq 2 -a \
    "$(grep -c other "$T/out")" -eq 0
refused "schema list of an unknown schema" "no schema" schema list nope

# Grants.
expect 0 "grant APP SCHEMA" grant alpha mood
expect 0 "grant is idempotent" grant alpha mood
expect 0 "grant APP SCHEMA --version N" grant alpha other.v2 --version 1
check "grants are stored (version 0: every version)" \
    test "$(sql 'SELECT group_concat(version) FROM (SELECT version FROM grants ORDER BY schema_id)')" = "0,1"
refused "grant to an unknown application" "no application" \
    grant nobody mood
refused "grant of an unknown schema" "no schema" grant alpha nope
refused "grant of an unknown version" "no version 7" \
    grant alpha mood --version 7
expect 0 "ungrant APP SCHEMA --version N" ungrant alpha other.v2 \
    --version 1
refused "ungrant of nothing" "no grant" ungrant alpha other.v2 --version 1
expect 0 "ungrant APP SCHEMA" ungrant alpha mood
refused "ungrant again" "no grant" ungrant alpha mood
refused "ungrant for an unknown application" "no application" \
    ungrant nobody mood
check "no grant is left" test "$(sql 'SELECT count(*) FROM grants')" -eq 0

# Templates.
expect 0 "template publish" template publish ticket --body "$T/body.txt" \
    --variables "$T/vars.json"
check "template publish prints version 1, bare" test "$out" = 1
expect 0 "template publish --escape html" template publish ticket \
    --body "$T/body.txt" --variables "$T/vars.json" --escape html
check "template publish prints version 2, bare" test "$out" = 2
refused "template publish refuses an undeclared variable" "who" \
    template publish hello --body "$T/undeclared.txt" \
    --variables "$T/vars.json"
refused "template publish refuses another escape" "escape: " \
    template publish ticket --body "$T/body.txt" \
    --variables "$T/vars.json" --escape xml
refused "template publish refuses a bad declaration" "variables: " \
    template publish ticket --body "$T/body.txt" --variables "$T/mood.json"
expect 0 "template render" template render ticket --version 1 \
    --values '{"name": "Ann & Bo", "count": 2, "tags": ["a", "b"]}'
check "template render prints the state" test "$out" = \
    "$(printf 'Ticket from Ann & Bo (2 earlier):\n- a\n- b')"
expect 0 "template render of the latest version escapes HTML" \
    template render ticket \
    --values '{"name": "Ann & Bo", "count": 2, "tags": []}'
check "the latest version is escaped" \
    test "$out" = "Ticket from Ann &amp; Bo (2 earlier):"
refused "template render refuses a missing variable, naming it" "count" \
    template render ticket --values '{"name": "x", "tags": []}'
refused "template render refuses a wrong type, naming it" "tags" \
    template render ticket --values '{"name": "x", "count": 1, "tags": 3}'
refused "template render of an unknown template" "nope" \
    template render nope --values '{}'
refused "template render of an unknown version" "version 9" \
    template render ticket --version 9 --values '{}'

# Bad usage.
expect 2 "no command is bad usage" 
expect 2 "an unknown command is bad usage" frobnicate
expect 2 "an unknown subcommand is bad usage" backend frobnicate
expect 2 "a missing argument is bad usage" grant alpha
expect 2 "an extra argument is bad usage" backend list extra
expect 2 "an unknown option is bad usage" schema publish x --nope 1
expect 2 "an option without its value is bad usage" backend add x --kind
expect 2 "a non-integer is bad usage" backend add x --kind lexical \
    --timeout-ms soon
expect 2 "a non-number is bad usage" schema publish x --questions \
    "$T/mood.json" --backend lex --temperature warm
expect 2 "values that are not JSON are bad usage" template render ticket \
    --values '{name'
check "bad usage prints the command's usage" \
    grep -q '^usage: evalgate-admin template render ID' "$T/err"

# A database that is not there, nor its pepper: the console names the
# path it looked at and how to select another, and makes nothing.
"$ADMIN" --db "$T/elsewhere/evalgate.db" backend list >"$T/out" 2>"$T/err"
rc=$?
out=$(cat "$T/out")
err=$(cat "$T/err")
check "no database there: refused" test "$rc" -eq 1
check "no database there: the path it looked at is named" \
    grep -qF "$T/elsewhere/evalgate.db" "$T/err"
check "no database there: --db and SERVICE_DB_PATH select another" \
    sh -c "grep -q -- '--db' '$T/err' && grep -q SERVICE_DB_PATH '$T/err'"
check "no database there: nothing is made" test ! -e "$T/elsewhere"
SERVICE_DB_PATH="$T/elsewhere/evalgate.db" "$ADMIN" app list >"$T/out" \
    2>"$T/err"
rc=$?
err=$(cat "$T/err")
check "SERVICE_DB_PATH naming no database: refused, the path named" \
    sh -c "test $rc -eq 1 && grep -qF '$T/elsewhere/evalgate.db' '$T/err'"

# The audit log: one row per mutation that was done, none for refusals.
audit=$(sql "SELECT action || '=' || count(*) FROM audit_log
    GROUP BY action ORDER BY action" | tr '\n' ' ')
check "one audit row per mutation done" test "$audit" = \
    "app.create=2 app.update=1 backend.add=2 backend.disable=1 backend.enable=1 backend.update=2 grant=3 key.issue=1 key.revoke=1 schema.publish=3 template.publish=2 ungrant=2 "
check "audit rows name the console and their target" \
    test "$(sql "SELECT actor || ' ' || target FROM audit_log
    WHERE action = 'schema.publish' ORDER BY id LIMIT 1")" = "console mood"
check "no audit row holds the key's secret" \
    test "$(sql "SELECT count(*) FROM audit_log
    WHERE details LIKE '%${key:13}%'")" -eq 0

echo "1..$n"
exit 0
