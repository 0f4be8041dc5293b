"""test_restore: a database file is taken only as evalgate makes it, and
a worker never crashes on what a file holds.

A real install (lighttpd, two workers, the lexical backend, the demo
schema) is backed up; each hostile file is that backup edited with
sqlite3:

- objects evalgate does not make: a trigger that makes an application
  an administrator at its first evaluation, one that deletes decisions,
  one of evalgate's own triggers rewritten, a view, a table, an index;
  a column missing;
- values out of what the console accepts: rate per minute, daily quota,
  retention days and created_at at the 64-bit limits, a key's
  expires_at, a backend's timeout, in-flight cap, the options of its
  kind (out of range, not JSON, or an option its kind does not have),
  a schema version's temperature and threshold, names and
  slugs the console refuses, questions that are not JSON and criteria
  that are not what `schema publish` takes.

Each one: `restore` into a stopped install is refused, exit 1, one line
naming the object (or table, row and column), and the install's
database, pepper and cache are unchanged; `init` on the file in place
is refused and leaves it unchanged; with the PostgreSQL engine built,
`migrate` of it is refused and the target database gets nothing, not
even the schema.

Then the live database of the running gateway is edited with sqlite3
(as restore refuses, this is the only way in): every stored value a
worker reads on an evaluation, out of range, makes that evaluation a
clean 500 in the spec's format, never a crash: the workers are the ones
that started, and no sanitizer reported anything.  The same goes for a
decision read back whose version's questions were made malformed.

With EVALGATE_TEST_ENGINE=postgresql (tests/pg/test_restore.pg) the
files are not the point, so only the live part runs: the gateway's
PostgreSQL database is edited with psql, as an operator would.
"""

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import setup_demo  # noqa: E402
from gateway import ADMIN, TAP, Gateway  # noqa: E402
import pg  # noqa: E402
from gateway import BUILDDIR  # noqa: E402
from test_backup import digest, refused  # noqa: E402

BIG = 9223372036854775807
SMALL = -9223372036854775808
EVAL = {"state": "the checkout is broken, refund now",
        "x_schema": {"id": "demo"}}
BAD_CRITERIA = ('{"sentiment": {"type": "choice", "criteria": 5}, '
                '"urgency": {"type": "score", "criteria": ["a"]}}')

# name: (the SQL that makes the file hostile, words the refusal says)
OBJECTS = {
    "escalating trigger": (
        "CREATE TRIGGER escalate AFTER INSERT ON decisions BEGIN "
        "UPDATE applications SET is_admin = 1 WHERE id = new.app_id; END",
        ["trigger 'escalate'", "table 'decisions'",
         "not one evalgate makes"]),
    "deleting trigger": (
        "CREATE TRIGGER forget AFTER INSERT ON outcomes BEGIN "
        "DELETE FROM decisions WHERE id <> new.decision_id; END",
        ["trigger 'forget'", "table 'outcomes'"]),
    "rewritten trigger": (
        "DROP TRIGGER applications_update; CREATE TRIGGER "
        "applications_update AFTER update ON applications BEGIN UPDATE "
        "applications SET is_admin = 1; END",
        ["trigger 'applications_update'", "table 'applications'"]),
    "view": ("CREATE VIEW keys_seen AS SELECT prefix FROM api_keys",
             ["view 'keys_seen'"]),
    "table": ("CREATE TABLE stash (x TEXT)", ["table 'stash'"]),
    "index": ("CREATE INDEX by_admin ON applications(is_admin)",
              ["index 'by_admin'", "table 'applications'"]),
    "missing column": (
        "ALTER TABLE applications DROP COLUMN retention_days",
        ["table 'applications'", "column 'retention_days'"]),
}
VALUES = {
    "rate per minute": (
        "UPDATE applications SET rate_per_minute = %d" % BIG,
        ["table 'applications'", "'app'", "column 'rate_per_minute'"]),
    "daily quota": (
        "UPDATE applications SET daily_quota = %d" % BIG,
        ["table 'applications'", "column 'daily_quota'"]),
    "retention days": (
        "UPDATE applications SET retention_days = %d" % BIG,
        ["table 'applications'", "column 'retention_days'"]),
    "created_at": (
        "UPDATE applications SET created_at = %d" % BIG,
        ["table 'applications'", "column 'created_at'"]),
    "key expiry": (
        "UPDATE api_keys SET expires_at = %d" % SMALL,
        ["table 'api_keys'", "column 'expires_at'"]),
    "backend timeout": (
        "UPDATE backends SET timeout_ms = %d" % BIG,
        ["table 'backends'", "'lex'", "column 'timeout_ms'"]),
    "in-flight cap": (
        "UPDATE backends SET max_in_flight = 0",
        ["table 'backends'", "column 'max_in_flight'"]),
    "max options": (
        "UPDATE backends SET kind = 'openai',"
        " options = '{\"max_options\":1000}'",
        ["table 'backends'", "column 'options'", "max_options",
         "from 2 to 26"]),
    "concurrency": (
        "UPDATE backends SET kind = 'openai',"
        " options = '{\"concurrency\":-1}'",
        ["table 'backends'", "column 'options'", "concurrency"]),
    "option of another kind": (
        "UPDATE backends SET options = '{\"max_options\":8}'",
        ["table 'backends'", "'lex'", "column 'options'",
         "'max_options' is not an option of its kind"]),
    "options not JSON": (
        "UPDATE backends SET options = '{\"max_options\":'",
        ["table 'backends'", "column 'options'", "not a JSON object"]),
    "temperature": (
        "UPDATE schema_versions SET temperature = 1e308",
        ["table 'schema_versions'", "'demo/1'", "column 'temperature'"]),
    "threshold": (
        "UPDATE schema_versions SET abstain_threshold = -3",
        ["table 'schema_versions'", "column 'abstain_threshold'"]),
    "application name": (
        "UPDATE applications SET name = 'a b/c'",
        ["table 'applications'", "column 'name'"]),
    "schema slug": (
        "UPDATE schemas SET slug = 'Demo Schema'",
        ["table 'schemas'", "column 'slug'"]),
    "questions not JSON": (
        "UPDATE schema_versions SET questions = '{\"sentiment\":'",
        ["table 'schema_versions'", "column 'questions'"]),
    "malformed criteria": (
        "UPDATE schema_versions SET questions = '%s'" % BAD_CRITERIA,
        ["table 'schema_versions'", "column 'questions'", "criteria"]),
}
# Asked of init and migrate: one of each kind is enough there.
SOME = ["escalating trigger", "view", "missing column", "rate per minute",
        "malformed criteria"]
# What a worker reads on an evaluation, edited in the live database:
# (table, column, value, which rows; None: all of them).
APP = "name = 'app'"
LIVE = {
    "rate per minute": ("applications", "rate_per_minute", BIG, APP),
    "rate per minute, negative": ("applications", "rate_per_minute",
                                  SMALL, APP),
    "daily quota": ("applications", "daily_quota", BIG, APP),
    "retention days": ("applications", "retention_days", BIG, APP),
    "created_at": ("applications", "created_at", BIG, APP),
    "key expiry": ("api_keys", "expires_at", SMALL, None),
    "backend timeout": ("backends", "timeout_ms", BIG, None),
    "in-flight cap": ("backends", "max_in_flight", -1, None),
    "option of another kind": ("backends", "options",
                               '{"max_options":8}', None),
    "temperature": ("schema_versions", "temperature", 1e308, None),
    "threshold": ("schema_versions", "abstain_threshold", -3.0, None),
    "questions not JSON": ("schema_versions", "questions",
                           '{"sentiment":', None),
    "malformed criteria": ("schema_versions", "questions", BAD_CRITERIA,
                           None),
}
# How the rows of each table edited live are told apart, to put back.
KEYS = {"applications": "id", "api_keys": "prefix", "backends": "id",
        "schema_versions": "schema_id || '/' || version"}

def console(env, *args):
    """evalgate-admin with exactly the SERVICE_ settings in env."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    e.update(env)
    return subprocess.run([ADMIN] + list(args), env=e, capture_output=True,
                          text=True, timeout=120)


def hostile(good, d, name, sql):
    """A copy of the backup good, edited with sqlite3, and its pepper."""
    path = os.path.join(d, name.replace(" ", "-") + ".db")
    shutil.copy(good, path)
    shutil.copy(good + ".pepper", path + ".pepper")
    db = sqlite3.connect(path)
    db.executescript(sql)
    db.commit()
    db.close()
    return path


def restores(t, good, d, cases):
    """restore of each hostile file into a stopped install is refused
    and changes nothing there."""
    target = os.path.join(d, "install")
    os.mkdir(target)
    env = {"SERVICE_DB_PATH": os.path.join(target, "evalgate.db"),
           "SERVICE_PEPPER_FILE": os.path.join(target, "pepper"),
           "SERVICE_CACHE_PATH": os.path.join(target, "cache.db"),
           "SERVICE_SHM_PATH": os.path.join(target, "shm")}
    p = console(env, "init")
    t.ok(p.returncode == 0, "a stopped install to restore into", p.stderr)
    shutil.copy(good + ".pepper", env["SERVICE_PEPPER_FILE"])
    files = [env[k] for k in ("SERVICE_DB_PATH", "SERVICE_PEPPER_FILE",
                              "SERVICE_CACHE_PATH")]
    state = [digest(f) for f in files]
    for name, (sql, words) in cases.items():
        path = hostile(good, d, name, sql)
        p = console(env, "restore", path)
        refused(t, p, "restore of a file with a %s" % name,
                ["refused"] + words)
        t.eq([digest(f) for f in files], state,
             "%s: database, pepper and cache unchanged" % name)
        if [digest(f) for f in files] != state:     # restored: undo
            shutil.copy(good, env["SERVICE_DB_PATH"])
            state = [digest(f) for f in files]
    p = console(env, "restore", good)
    t.ok(p.returncode == 0 and "restored" in p.stdout,
         "the backup itself, as made, is restored", p.stderr)


def inits(t, good, d, cases):
    """init on each hostile file in place is refused, the file kept."""
    for name in SOME:
        sql, words = cases[name]
        path = hostile(good, d, "init-" + name, sql)
        before = digest(path)
        env = {"SERVICE_DB_PATH": path,
               "SERVICE_PEPPER_FILE": path + ".pepper",
               "SERVICE_CACHE_PATH": path + ".cache",
               "SERVICE_SHM_PATH": path + ".shm"}
        p = console(env, "init")
        refused(t, p, "init on a file with a %s" % name, ["refused"] + words)
        t.eq(digest(path), before, "%s: the file is unchanged" % name)


def migrates(t, good, d, cases):
    """migrate of each hostile file is refused; the target stays
    empty."""
    if not pg.built(BUILDDIR):
        t.ok(True, "# SKIP migrate: this build has no PostgreSQL engine")
        return
    c = pg.cluster()
    for name in SOME:
        sql, words = cases[name]
        path = hostile(good, d, "pg-" + name, sql)
        before = digest(path)
        dbname = c.create_database()
        env = {"SERVICE_DB_PATH": path,
               "SERVICE_PEPPER_FILE": path + ".pepper",
               "SERVICE_CACHE_PATH": path + ".cache",
               "SERVICE_SHM_PATH": path + ".shm"}
        p = console(env, "migrate", "--from", path, "--to", c.url(dbname))
        refused(t, p, "migrate of a file with a %s" % name,
                ["refused"] + words)
        t.eq((digest(path), c.query(dbname, "SELECT count(*) FROM "
                                    "pg_tables WHERE schemaname = "
                                    "'public'")[0][0]),
             (before, 0), "%s: the file unchanged, the target without "
             "even a table" % name)


def edit(g, table, column, value, where):
    """Sets column of table to value (in the rows where says) in the
    live database, with sqlite3 or psql; what puts it back."""
    key = KEYS[table]
    rows = g.sql("SELECT %s, %s FROM %s" % (key, column, table))
    g.sql("UPDATE %s SET %s = ?%s" % (table, column, " WHERE " + where
                                       if where else ""), (value,))

    def put_back():
        for k, v in rows:
            g.sql("UPDATE %s SET %s = ?1 WHERE %s = ?2" % (table, column,
                                                           key), (v, k))
    return put_back


def live(t, g, key):
    """Each hostile value in the live database: a clean 500, and the
    gateway answers again once it is put back."""
    pids = sorted(g.worker_pids())
    for name, (table, column, value, where) in LIVE.items():
        put_back = edit(g, table, column, value, where)
        for _ in range(2):          # both workers, whichever answers
            r = g.post("/v1/systemone", EVAL, key=key)
            t.error_is(r, 500, "internal_error",
                       "live %s: a clean 500" % name)
        put_back()
        r = g.post("/v1/systemone", EVAL, key=key)
        t.ok(r.status == 200, "live %s put back: 200 again" % name, r.body)
    # A decision read back: its version's questions are checked too.
    did = r.json().get("x_decision_id", "") if r.status == 200 else ""
    put_back = edit(g, "schema_versions", "questions", BAD_CRITERIA, None)
    for _ in range(2):
        r = g.get("/v1/decisions/" + did, key=key)
        t.error_is(r, 500, "internal_error",
                   "live malformed criteria: a decision read is a clean "
                   "500")
    put_back()
    r = g.get("/v1/decisions/" + did, key=key)
    t.ok(r.status == 200, "malformed criteria put back: the decision "
         "reads again", r.body)
    t.eq(sorted(g.worker_pids()), pids, "no worker crashed")

def main():
    t = TAP()
    g = Gateway(workers=2)
    d = tempfile.mkdtemp(prefix="evalgate-restore-")
    try:
        key = setup_demo(g)
        g.start()
        r = g.post("/v1/systemone", EVAL, key=key)
        t.ok(r.status == 200, "an evaluation before the backup", r.body)
        if t.sqlite_only(g, "restore, init and migrate of hostile files",
                         "what a SQLite file may hold"):
            good = os.path.join(d, "good.db")
            g.admin("backup", good)
            cases = dict(OBJECTS)
            cases.update(VALUES)
            restores(t, good, d, cases)
            inits(t, good, d, cases)
            migrates(t, good, d, cases)
        live(t, g, key)
        t.stop_clean(g)
    finally:
        g.cleanup()
        shutil.rmtree(d, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
