"""test_upgrade: what an operator meets upgrading an install (README,
"Upgrading"), over real lighttpd.

A database three schema versions behind the workers (version 7: a column
per option of the openai kind instead of backends.options, no tables of
challengers, a decision's answers as rows of decision_answers and
outcomes without their schema version, as an install of that version had
it, holding an openai backend's options and decisions with outcomes):
/health/ready is 503 naming the version, and evaluations are 503, until
`evalgate-admin init`, run while the gateway serves, migrates it and
says so, the options moved into the one column, the answer rows into
their decision's row as the workers write it; then ready is 200,
evaluations answer, and each decision reads back (GET
/v1/decisions/{id}) byte for byte as before. Both programs print their
version (--version), which is `git describe --always --dirty` in a
checkout, and /metrics's evalgate_build_info carries it. A shared-memory
file of another layout version, left by another build, is replaced with
one log line naming both versions."""

import json
import os
import sqlite3
import struct
import subprocess
import time

from gateway import ADMIN, WORKER, Gateway, TAP, build_version

STATE = "the delivery was late and the driver was rude"
QUESTIONS = {"rude": {"type": "noul", "instructions": "Was it rude?"},
             "late": {"type": "noul", "instructions": "Was it late?"},
             "kind": {"type": "choice", "instructions": "What about?",
                      "criteria": {"delivery": "the delivery",
                                   "driver": "the driver"}}}


def evaluate(g, key):
    return g.post("/v1/systemone", {"state": STATE,
                                    "x_schema": {"id": "upgrade"}}, key=key)


def within(seconds, fn):
    """fn() until it is true or seconds have passed (a worker reconnects
    by itself, at most every second); its last value."""
    end = time.time() + seconds
    while True:
        got = fn()
        if got or time.time() > end:
            return got
        time.sleep(0.2)


def test_versions(t, g):
    want = build_version()
    for prog, name in ((WORKER, "evalgate.fcgi"),
                       (ADMIN, "evalgate-admin")):
        try:
            p = subprocess.run([prog, "--version"], capture_output=True,
                               text=True, timeout=10,
                               stdin=subprocess.DEVNULL)
            out, rc = p.stdout.strip(), p.returncode
        except subprocess.TimeoutExpired:
            out, rc = "(no answer in 10 s)", -1
        t.eq((rc, out), (0, "%s %s" % (name, want)),
             "%s --version prints its version, %s, and exits 0" %
             (name, want))
    r = g.admin_request("GET", "/metrics")
    t.ok('evalgate_build_info{version="%s"} 1' % want in
         r.body.decode("utf-8", "replace"),
         "/metrics: evalgate_build_info carries the same version",
         [line for line in r.body.decode("utf-8", "replace").splitlines()
          if "build_info" in line])


# The openai backend's options, as the version before kept them: a
# column each (max_options, concurrency, extra; NULL the default).
OLD_OPTIONS = {"max_options": 8, "concurrency": None,
               "extra": {"seed": 1, "top_p": 0.5}}


def set_back_answers(g):
    """Schema version 10's decisions and outcomes as version 9 had them
    on PostgreSQL: each answer a row of decision_answers (its position
    the element's place in decisions.answers, label_mass NULL where the
    element has none), outcomes without their decision's schema version,
    decisions_schema in place of outcomes_schema."""
    g.sql("CREATE TABLE decision_answers ("
          " decision_id TEXT COLLATE \"C\" NOT NULL"
          " REFERENCES decisions(id),"
          " question TEXT COLLATE \"C\" NOT NULL,"
          " position BIGINT NOT NULL, type TEXT NOT NULL,"
          " distribution TEXT NOT NULL, answer TEXT NOT NULL,"
          " label_mass DOUBLE PRECISION,"
          " PRIMARY KEY (decision_id, question))")
    g.sql("INSERT INTO decision_answers SELECT d.id, a.e ->> 'question',"
          " a.n - 1, a.e ->> 'type', (a.e -> 'distribution')::text,"
          " (a.e -> 'answer')::text, (a.e ->> 'label_mass')::float8"
          " FROM decisions d, json_array_elements(d.answers::json)"
          " WITH ORDINALITY AS a(e, n)")
    g.sql("ALTER TABLE decisions DROP COLUMN answers")
    g.sql("ALTER TABLE outcomes DROP COLUMN schema_id,"
          " DROP COLUMN schema_version")
    g.sql("CREATE INDEX decisions_schema"
          " ON decisions(schema_id, schema_version)")


def set_back(g):
    """The database as the version before left it: schema version 7,
    each option of the openai kind in a column of its own, the openai
    backend's set as OLD_OPTIONS, no backends.options and no tables of
    challengers; answers as rows (on PostgreSQL set_back_answers, on
    SQLite SQLITE_DECISIONS_7, each decision with a twin of its key)."""
    pg = g.engine == "postgresql"
    if pg:
        set_back_answers(g)
    for col, typ in (("max_options", "INTEGER"), ("concurrency", "INTEGER"),
                     ("extra", "TEXT")):
        g.sql("ALTER TABLE backends ADD COLUMN %s %s" % (col, typ))
    g.sql("UPDATE backends SET max_options = ?1, concurrency = ?2,"
          " extra = ?3 WHERE name = 'oa'",
          (OLD_OPTIONS["max_options"], OLD_OPTIONS["concurrency"],
           json.dumps(OLD_OPTIONS["extra"])))
    g.sql("ALTER TABLE backends DROP COLUMN options")
    g.sql("DROP TABLE challenger_answers")
    g.sql("DROP TABLE schema_challengers")
    if pg:
        g.sql("UPDATE schema_version SET v = 7")
    else:
        db = sqlite3.connect(g.db)
        try:
            db.executescript(SQLITE_DECISIONS_7 + SQLITE_TWINS_7)
        finally:
            db.close()
        g.sql("PRAGMA user_version = 7")


# Decisions, their answers and outcomes as SQLite kept them before
# schema version 10: decisions keyed by id, an answer row per question,
# outcomes without their decision's schema version (sql/migrate-10.sql
# moves them to today's layout).
SQLITE_DECISIONS_7 = """
CREATE TABLE decisions_7 (
    id TEXT PRIMARY KEY, app_id INTEGER NOT NULL REFERENCES applications(id),
    created_at_ms INTEGER NOT NULL, model TEXT, backend TEXT NOT NULL,
    schema_id INTEGER NOT NULL REFERENCES schemas(id),
    schema_version INTEGER NOT NULL,
    template_id INTEGER REFERENCES templates(id), template_version INTEGER,
    state TEXT, input_tokens INTEGER, output_tokens INTEGER,
    latency_gateway_ms INTEGER, latency_backend_ms INTEGER) WITHOUT ROWID;
INSERT INTO decisions_7 SELECT id, app_id, created_at_ms, model, backend,
    schema_id, schema_version, template_id, template_version, state,
    input_tokens, output_tokens, latency_gateway_ms, latency_backend_ms
    FROM decisions;
CREATE TABLE decision_answers (
    decision_id TEXT NOT NULL REFERENCES decisions(id),
    question TEXT NOT NULL, position INTEGER NOT NULL, type TEXT NOT NULL,
    distribution TEXT NOT NULL, answer TEXT NOT NULL, label_mass REAL,
    PRIMARY KEY (decision_id, question)) WITHOUT ROWID;
INSERT INTO decision_answers SELECT d.id, a.value ->> 'question', a.key,
    a.value ->> 'type', a.value -> 'distribution', a.value -> 'answer',
    a.value ->> 'label_mass' FROM decisions d, json_each(d.answers) a;
CREATE TABLE outcomes_7 (
    decision_id TEXT NOT NULL REFERENCES decisions(id),
    question TEXT NOT NULL, value TEXT NOT NULL, source TEXT,
    recorded_at_ms INTEGER NOT NULL,
    PRIMARY KEY (decision_id, question)) WITHOUT ROWID;
INSERT INTO outcomes_7 SELECT decision_id, question, value, source,
    recorded_at_ms FROM outcomes;
DROP TABLE outcomes;
DROP TABLE decisions;
ALTER TABLE decisions_7 RENAME TO decisions;
ALTER TABLE outcomes_7 RENAME TO outcomes;
CREATE INDEX decisions_app_time ON decisions(app_id, created_at_ms, id);
CREATE INDEX decisions_schema ON decisions(schema_id, schema_version);
CREATE INDEX decisions_state_time ON decisions(created_at_ms)
    WHERE state IS NOT NULL;
"""

# A twin of each decision whose id has the same time and counter (two
# workers in one ms drawing the same counter): the migration gives each
# a slot of their key (src/store_sqlite_rid.c), where both are found.
# The twin's answer to "rude" has a label mass (as an openai backend's
# would), which the migration writes as the workers write numbers.
SQLITE_TWINS_7 = """
INSERT INTO decisions SELECT substr(id, 1, 24) || 'ffffffffffff', app_id,
    created_at_ms, model, backend, schema_id, schema_version, template_id,
    template_version, state, input_tokens, output_tokens,
    latency_gateway_ms, latency_backend_ms FROM decisions;
INSERT INTO decision_answers SELECT substr(decision_id, 1, 24) ||
    'ffffffffffff', question, position, type, distribution, answer,
    CASE WHEN question = 'rude' THEN 2.0 / 3 END FROM decision_answers;
"""


def twin(did):
    return did[:24] + "ffffffffffff"


def slot0(did):
    """The first rid of a decision id's key: its 48 bits of ms and 12 of
    counter, times 16."""
    return int(did[:8] + did[9:13] + did[15:18], 16) * 16


def decisions(t, g, key):
    """Three decisions, two with outcomes (one of every question): each
    id with its GET's body and its row's answers text."""
    made = {}
    for i in range(3):
        r = evaluate(g, key)
        t.eq(r.status, 200, "setup: an evaluation answers")
        made[r.json()["x_decision_id"]] = None
    ids = list(made)
    for did, values in ((ids[0], {"late": True, "kind": "driver",
                                  "rude": False}),
                        (ids[1], {"late": False})):
        r = g.post("/v1/decisions/%s/outcome" % did,
                   {"answers": values, "source": "upgrade"}, key=key)
        t.eq(r.status, 200, "setup: outcomes recorded")
    for did in ids:
        made[did] = (g.get("/v1/decisions/%s" % did, key=key).body,
                     g.sql("SELECT answers FROM decisions WHERE id = ?",
                           (did,))[0][0])
    return made


def test_schema_upgrade(t, g, key):
    made = decisions(t, g, key)
    g.stop()
    set_back(g)
    g.start()
    why = "schema version 7, want 10: run evalgate-admin init"
    r = g.get("/health/ready")
    t.eq(r.status, 503, "ready is 503 while the database is at schema "
         "version 7 and the workers need 10")
    body = r.json() if r.body else {}
    t.eq((body.get("status"), body.get("database"), body.get("cache"),
          body.get("reason")), ("unavailable", False, True, why),
         "its body says the database, with the reason")
    err = body.get("error", {})
    t.ok(why in err.get("message", "") and
         err.get("details", {}).get("reason") == why,
         "and the error object names it too", r.body)
    r = evaluate(g, key)
    t.error_is(r, 503, "service_unavailable",
               "an evaluation meanwhile is 503")
    t.ok(why in g.log(), "the log says the same", g.log()[-600:])

    p = g.admin("init", check=False)
    t.eq(p.returncode, 0, "init while the gateway serves: exit 0")
    t.ok("migrated the database from schema version 7 to 10" in p.stdout,
         "init says what it migrated", p.stdout)
    t.ok(within(15, lambda: g.get("/health/ready").status == 200),
         "ready is 200 once migrated")
    t.eq(g.get("/health/ready").json(),
         {"status": "ok", "database": True, "cache": True},
         "with the body of old, no reason")
    t.ok(within(15, lambda: all(evaluate(g, key).status == 200
                                for _ in range(4 * g.workers))),
         "evaluations answer again, on every worker, without a restart")
    p = g.admin("init", check=False)
    t.ok(p.returncode == 0 and
         "schema version 10, nothing to migrate" in p.stdout,
         "init again: nothing to migrate", p.stdout)
    for did, (body, answers) in made.items():
        t.eq(g.get("/v1/decisions/%s" % did, key=key).body, body,
             "decision %s reads back byte for byte as before" % did)
        if answers is not None:
            t.eq(g.sql("SELECT answers FROM decisions WHERE id = ?",
                       (did,))[0][0], answers,
                 "its answers are the text the worker wrote")
    t.eq(g.sql("SELECT count(*) FROM outcomes o JOIN decisions d"
               " ON d.id = o.decision_id WHERE o.schema_id ="
               " d.schema_id AND o.schema_version = d.schema_version"
               )[0][0], 4, "the outcomes have their decision's "
         "schema version")
    if g.engine == "sqlite":
        for did, (body, _) in made.items():
            r = g.get("/v1/decisions/" + twin(did), key=key)
            t.ok(r.status == 200 and r.json().get("answers") ==
                 json.loads(body).get("answers"),
                 "its twin of the same key found in the next slot, with "
                 "the same answers", r.body)
            t.eq(g.sql("SELECT rid - ? FROM decisions WHERE id IN (?, ?)"
                       " ORDER BY id", (slot0(did), did, twin(did))),
                 [(0,), (1,)], "the two in slots 0 and 1 of their key, in "
                 "id order")
            stored = g.answers(twin(did))
            t.ok(stored[0]["question"] == "rude" and
                 '"x_abstain":false},"label_mass":0.6666666666666666},'
                 in g.sql("SELECT answers FROM decisions WHERE id = ?",
                          (twin(did),))[0][0],
                 "its label mass written as the workers write it, "
                 "shortest", stored)
    rows = g.sql("SELECT kind, options FROM backends ORDER BY name")
    t.eq([(k, json.loads(o) if o is not None else None) for k, o in rows],
         [("lexical", None), ("openai", {"max_options": 8,
                                          "extra": {"seed": 1,
                                                    "top_p": 0.5}})],
         "the migration moved the openai options into backends.options, "
         "only those set; none for the lexical backend")
    if g.engine == "postgresql":
        cols = g.sql("SELECT count(*) FROM information_schema.columns"
                     " WHERE table_name = 'backends' AND column_name IN"
                     " ('max_options', 'concurrency', 'extra')")
    else:
        cols = g.sql("SELECT count(*) FROM pragma_table_info('backends')"
                     " WHERE name IN ('max_options', 'concurrency',"
                     " 'extra')")
    t.eq(cols[0][0], 0, "and dropped their old columns")
    t.eq(g.sql("SELECT count(*) FROM schema_challengers")[0][0] +
         g.sql("SELECT count(*) FROM challenger_answers")[0][0], 0,
         "and made the tables of challengers, empty")
    r = g.admin_request("GET", "/admin/v1/backends",
                        key=g.new_key("upgrade-admin", "--admin"))
    oa = [b for b in r.json().get("backends", []) if b["name"] == "oa"]
    t.ok(len(oa) == 1 and oa[0].get("max_options") == 8 and
         oa[0].get("concurrency") is None and
         oa[0].get("extra") == OLD_OPTIONS["extra"],
         "/admin/v1/backends shows them as before", r.body)


def test_shm_replaced(t, g, key):
    path = os.path.join(g.dir, "evalgate.shm")
    g.stop()
    with open(path, "r+b") as f:
        f.seek(4)
        ours = struct.unpack("<I", f.read(4))[0]
        f.seek(4)
        f.write(struct.pack("<I", ours - 1))
    g.start()
    for _ in range(4 * g.workers):
        g.get("/health")
    said = [line for line in g.log().splitlines()
            if "shared memory %s: layout version %d, this build's is %d: "
            "made anew (the metrics start again from 0)" %
            (path, ours - 1, ours) in line]
    t.eq(len(said), 1, "a shared-memory file of layout version %d is "
         "replaced with one log line naming both versions" % (ours - 1))
    with open(path, "rb") as f:
        f.seek(4)
        t.eq(struct.unpack("<I", f.read(4))[0], ours,
             "and the file at the path is this build's")


def main():
    t = TAP()
    g = Gateway(workers=2)
    try:
        key = g.new_key("upgrade")
        g.admin("backend", "add", "lex", "--kind", "lexical")
        g.admin("backend", "add", "oa", "--kind", "openai", "--url",
                "http://127.0.0.1:9", "--model", "m")
        g.publish("upgrade", QUESTIONS, "lex")
        g.admin("grant", "upgrade", "upgrade")
        g.start()
        t.run([test_versions], g)
        t.run([test_schema_upgrade, test_shm_replaced], g, key)
        t.stop_clean(g)
    finally:
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
