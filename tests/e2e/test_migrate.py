"""test_migrate: evalgate-admin migrate --from PATH --to URL, the move of
an install from SQLite to PostgreSQL, end to end.

A SQLite install gets every kind of row through its real console and a
real gateway (lighttpd, the lexical backend): applications (one an
administrator, one with its own limits and retention), keys (valid,
revoked, expired, one from before keyed secret checks), backends
(lexical, systemone with two replicas, openai with its options),
schemas with two versions and grants of both kinds, templates with
versions, decisions (some through a template, with kept states) with
their answers and outcomes, the day's quota counters, the audit log.
Then it is moved into a PostgreSQL database of a throw-away cluster
(tests/e2e/pg.py), and a gateway on that database, given the same
pepper file, serves the same public contract: the old keys
authenticate (revoked and expired ones do not), every decision reads
back exactly as before with its outcomes, outcomes can still be
recorded, the calibration report (console and /admin/v1) is the same as
before the move, new rows get ids past the copied ones.

Also: every table's rows counted on both sides; the SQLite file is not
written, and may be in use (one snapshot; the output warns); a
database without the schema gets it; a file of an older
schema version (5) is moved; a non-empty target is refused and left
unchanged; a target that loses rows (a rule dropping the outcomes'
inserts) is caught by the row count, named, and rolled back; bad input
(not a URL, a missing file, a file that is not an evalgate database)
is refused with one line, exit 1.
"""

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys

from gateway import ADMIN, SRCDIR, Gateway, TAP, require_postgresql

require_postgresql()

TABLES = ["applications", "api_keys", "backends", "backend_replicas",
          "schemas", "schema_versions", "grants", "templates",
          "template_versions", "decisions", "outcomes", "quota_days", "audit_log", "schema_challengers",
          "challenger_answers"]
DEMO = os.path.join(SRCDIR, "examples", "demo-questions.json")
STATES = ["the checkout is broken, refund now, critical outage",
          "thank you, great service, question about the invoice",
          "angry and disappointed, I want my money back today",
          "how do I change my address this week",
          "terrible, broken again, refund please",
          "love it, satisfied"]


def write(g, name, obj):
    path = os.path.join(g.dir, name)
    with open(path, "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def console(env, *args):
    """evalgate-admin with exactly the SERVICE_ settings in env."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    e.update(env)
    return subprocess.run([ADMIN] + list(args), env=e, capture_output=True,
                          text=True, timeout=300)


def refused(t, p, what, words):
    lines = p.stderr.strip().splitlines()
    t.ok(p.returncode == 1 and len(lines) == 1 and
         all(w in p.stderr for w in words),
         "%s: exit 1, one line saying %s" % (what, " / ".join(words)),
         "exit %d, stdout %r, stderr %r" % (p.returncode, p.stdout,
                                             p.stderr))


def fill(t, g):
    """Every kind of row, through the console and the gateway.  Returns
    the keys and the decisions made."""
    a = g.admin
    a("app", "create", "app", "--log-state", "--rate-per-minute", "100000")
    a("app", "create", "adm", "--admin")
    a("app", "create", "other", "--rate-per-minute", "7",
      "--daily-quota", "900")
    a("app", "update", "other", "--retention-days", "30")
    keys = {"app": a("key", "issue", "app").stdout.strip(),
            "old": a("key", "issue", "app").stdout.strip(),
            "revoked": a("key", "issue", "other").stdout.strip(),
            "expired": a("key", "issue", "other", "--expires",
                         "2020-01-01T00:00:00Z").stdout.strip(),
            "adm": a("key", "issue", "adm").stdout.strip()}
    a("key", "revoke", keys["revoked"].split("_")[1])
    # A key issued before keyed secret checks existed has none (the
    # first successful verification stores it).
    g.sql("UPDATE api_keys SET secret_check = NULL WHERE prefix = ?",
          (keys["old"].split("_")[1],))
    a("backend", "add", "lex", "--kind", "lexical", "--description",
      "lexical, ünïcode", "--release-date", "2026-01-02")
    a("backend", "add", "up", "--kind", "systemone", "--url",
      "http://127.0.0.1:9/a", "--url", "http://127.0.0.1:9/b",
      "--timeout-ms", "1500", "--max-in-flight", "3")
    a("backend", "add", "oa", "--kind", "openai", "--url",
      "http://127.0.0.1:9/v1", "--model", "m", "--auth-env", "OA_KEY",
      "--max-options", "12", "--concurrency", "4", "--extra-json",
      write(g, "extra.json", {"seed": 1, "top_p": 0.5}))
    a("backend", "disable", "up")
    a("schema", "publish", "demo", "--questions", DEMO, "--backend", "lex",
      "--temperature", "1.25", "--abstain-threshold", "0.3")
    a("schema", "publish", "demo", "--questions", DEMO, "--backend", "lex")
    a("grant", "app", "demo")
    a("grant", "other", "demo", "--version", "1")
    # A challenger of both versions: its answers are rows to carry.
    a("backend", "add", "lexc", "--kind", "lexical")
    for v in ("1", "2"):
        a("schema", "challenger", "add", "demo", "--backend", "lexc",
          "--share", "1", "--version", v)
    a("template", "publish", "ticket", "--body",
      write(g, "b1.txt", "Ticket: {{text}}"), "--variables",
      write(g, "v1.json", {"text": "string"}))
    a("template", "publish", "ticket", "--body",
      write(g, "b2.txt", "Ticket (v2): {{text}}"), "--variables",
      write(g, "v2.json", {"text": "string"}), "--escape", "html")
    g.start()
    made, bad = [], []
    for i in range(18):
        state = STATES[i % len(STATES)] + " #%d" % i
        if i % 4 == 3:
            body = {"x_template": {"id": "ticket", "variables":
                                   {"text": state}},
                    "x_schema": {"id": "demo"}}
        else:
            body = {"state": state, "x_schema": {"id": "demo",
                                                 "version": 1 + i % 2}}
        r = g.post("/v1/systemone", body, key=keys["app"])
        if r.status != 200:
            bad.append(r)
            continue
        made.append(r.json()["x_decision_id"])
    for i, did in enumerate(made[:12]):
        answers = {"sentiment": ["positive", "neutral", "negative"][i % 3],
                   "urgency": i % 4}
        if i % 2 == 0:
            answers["refund"] = i % 3 == 0
        r = g.post("/v1/decisions/%s/outcome" % did,
                   {"answers": answers, "source": "e2e %d" % i},
                   key=keys["app"])
        if r.status != 200:
            bad.append(r)
    t.eq(bad, [], "18 decisions made through the gateway, 12 with outcomes")
    return keys, made


def counts(g):
    return {name: g.sql("SELECT count(*) FROM " + name)[0][0]
            for name in TABLES}


def reads(g, keys, made):
    """Every decision as GET /v1/decisions/{id} answers it."""
    out = {}
    for did in made:
        r = g.get("/v1/decisions/" + did, key=keys["app"])
        out[did] = (r.status, r.json() if r.status == 200 else r.body)
    return out


def calibration(g, version):
    return json.loads(g.admin("calibration", "demo", "--version",
                              str(version), "--format", "json").stdout)


def admin_calibration(g, key):
    r = g.admin_request("GET", "/admin/v1/schemas/demo/calibration"
                        "?version=1&format=json", key=key)
    return r.status, r.json() if r.status == 200 else r.body


def migrate(src, url, env=None):
    e = {"SERVICE_DB_PATH": src.db,
         "SERVICE_PEPPER_FILE": os.path.join(src.dir, "pepper")}
    e.update(env or {})
    return console(e, "migrate", "--from", src.db, "--to", url)


def old_version_file(d):
    """A SQLite file at schema version 5, made from the repository's own
    steps (schema.sql, sql/migrate-2.sql to migrate-5.sql) as an install
    of that version had it, with a few rows: an openai backend's options
    in the columns of that version."""
    path = os.path.join(d, "v5.db")
    db = sqlite3.connect(path)
    for name in ["schema.sql"] + ["sql/migrate-%d.sql" % n
                                  for n in range(2, 6)]:
        with open(os.path.join(SRCDIR, name)) as f:
            db.executescript(f.read())
    db.executescript("""
        INSERT INTO applications (id, name, created_at) VALUES (4, 'v5', 1);
        INSERT INTO api_keys (prefix, app_id, hash, created_at)
            VALUES ('abcdefgh', 4, 'x', 1);
        INSERT INTO backends (id, name, kind, created_at)
            VALUES (2, 'lex', 'lexical', 1);
        INSERT INTO backends (id, name, kind, model, created_at,
            max_options, concurrency, extra)
            VALUES (5, 'oa', 'openai', 'm', 1, 8, NULL, '{"seed": 1}');
        INSERT INTO backend_replicas (backend_id, position, url)
            VALUES (5, 0, 'http://127.0.0.1:9');
        INSERT INTO schemas (id, slug, created_at) VALUES (3, 's', 1);
        INSERT INTO schema_versions (schema_id, version, questions,
            fingerprint, backend_id, created_at)
            VALUES (3, 1, '{"q": {"type": "noul"}}', 'f', 2, 1);
        INSERT INTO decisions (id, app_id, created_at_ms, backend,
            schema_id, schema_version)
            VALUES ('0190aaaa-0000-7000-8000-000000000001', 4, 5, 'lex',
                    3, 1);
        INSERT INTO decision_answers (decision_id, question, position,
            type, distribution, answer, label_mass)
            VALUES ('0190aaaa-0000-7000-8000-000000000001', 'q', 0,
                    'noul', '[0.25,0.75]', 'false', 0.1);
        PRAGMA user_version = 5;
    """)
    db.commit()
    db.close()
    return path


def main():
    t = TAP()
    src = Gateway(engine="sqlite")
    dst = None
    try:
        keys, made = fill(t, src)
        # Some state of every table: the gateway's own writes included.
        before = reads(src, keys, made)
        t.ok(all(s == 200 for s, _ in before.values()) and
             sum(1 for _, d in before.values() if d.get("outcomes")) == 12,
             "every decision reads back on SQLite, 12 with outcomes",
             before)
        cal_before = {v: calibration(src, v) for v in (1, 2)}
        http_before = admin_calibration(src, keys["adm"])
        t.eq(http_before[0], 200, "calibration over /admin/v1 on SQLite")
        src.stop()
        want = counts(src)
        t.ok(all(want[n] > 0 for n in TABLES),
             "the SQLite file has rows in every table", want)
        file_digest = digest(src.db)

        dst = Gateway(engine="postgresql")
        cluster = dst.pg
        # The harness's init made the schema and a pepper of its own: the
        # operator gives the new host the old install's pepper instead.
        shutil.copy2(os.path.join(src.dir, "pepper"),
                     dst.env["SERVICE_PEPPER_FILE"])
        p = migrate(src, dst.url)
        t.eq((p.returncode, p.stderr), (0, ""), "migrate: exit 0")
        out = p.stdout
        t.ok(all("  %-18s %d rows" % (n, want[n]) in out for n in TABLES),
             "migrate prints the rows of every table", out)
        t.ok("schema version 10" in out and "pepper" in out and
             "same" in out and dst.url not in out,
             "it names the schema version and the pepper to keep, never "
             "the URL", out)
        t.eq(counts(dst), want, "PostgreSQL holds as many rows as the "
             "file, table by table")
        t.eq(digest(src.db), file_digest, "the SQLite file was not written")
        same = dst.sql("SELECT prefix, app_id, hash, created_at, expires_at,"
                       " revoked_at, encode(secret_check, 'hex') FROM "
                       "api_keys ORDER BY prefix")
        db = sqlite3.connect(src.db)
        orig = db.execute("SELECT prefix, app_id, hash, created_at, "
                          "expires_at, revoked_at, CASE WHEN secret_check "
                          "IS NOT NULL THEN lower(hex(secret_check)) END "
                          "FROM api_keys ORDER BY prefix").fetchall()
        t.eq([tuple(r) for r in same], [tuple(r) for r in orig],
             "keys copied byte for byte (secret checks, NULLs)")
        num = "SELECT temperature, abstain_threshold FROM schema_versions " \
              "ORDER BY schema_id, version"
        t.eq([tuple(r) for r in dst.sql(num)],
             [tuple(r) for r in db.execute(num).fetchall()],
             "doubles copied exactly")
        db.close()

        dst.start()
        r = dst.post("/v1/systemone", {"state": STATES[0],
                                       "x_schema": {"id": "demo"}},
                     key=keys["app"])
        t.eq(r.status, 200, "an old key authenticates on PostgreSQL")
        r = dst.post("/v1/systemone", {"state": STATES[1],
                                       "x_schema": {"id": "demo"}},
                     key=keys["old"])
        t.eq(r.status, 200, "an old key without a secret check too")
        for name in ("revoked", "expired"):
            r = dst.post("/v1/systemone", {"state": STATES[0],
                                           "x_schema": {"id": "demo"}},
                         key=keys[name])
            t.error_is(r, 401, "invalid_api_key",
                       "the %s key stays refused" % name)
        after = reads(dst, keys, made)
        differ = [d for d in made if after[d] != before[d]]
        t.ok(not differ, "every decision reads back as before, outcomes "
             "included", differ and "%s: got %r, want %r" % (
                 differ[0], after[differ[0]], before[differ[0]]))
        t.eq({v: calibration(dst, v) for v in (1, 2)}, cal_before,
             "the calibration report is the same as before the move")
        t.eq(admin_calibration(dst, keys["adm"]), http_before,
             "and over /admin/v1, with the old administrator's key")
        r = dst.post("/v1/decisions/%s/outcome" % made[-1],
                     {"answers": {"urgency": 2}}, key=keys["app"])
        t.eq(r.status, 200, "an outcome recorded on a moved decision")
        r = dst.post("/v1/decisions/%s/outcome" % made[0],
                     {"answers": {"sentiment": "negative"}}, key=keys["app"])
        t.error_is(r, 409, "conflict", "a moved outcome still conflicts")
        ids = {n: dst.sql("SELECT max(id) FROM " + n)[0][0]
               for n in ("applications", "backends", "schemas",
                         "templates")}
        dst.admin("app", "create", "after")
        dst.admin("backend", "add", "lex2", "--kind", "lexical")
        dst.admin("schema", "publish", "more", "--questions", DEMO,
                  "--backend", "lex2")
        dst.admin("template", "publish", "t2", "--body",
                  write(dst, "b3.txt", "{{x}}"), "--variables",
                  write(dst, "v3.json", {"x": "string"}))
        new = {n: dst.sql("SELECT max(id) FROM " + n)[0][0] for n in ids}
        t.eq(new, {n: v + 1 for n, v in ids.items()},
             "new rows get the ids after the copied ones")
        t.stop_clean(dst, "no sanitizer reports from the gateway on "
                     "PostgreSQL")

        # A non-empty target: refused, unchanged.
        held = counts(dst)
        p = migrate(src, dst.url)
        refused(t, p, "into a database with rows", ["not empty",
                                                    "applications"])
        t.eq(counts(dst), held, "the non-empty target is unchanged")

        # A database without the schema: migrate makes it.
        bare = cluster.create_database("bare")
        p = migrate(src, cluster.url(bare))
        t.eq((p.returncode, p.stderr), (0, ""),
             "into a database without the schema: done")
        t.eq({n: cluster.query(bare, "SELECT count(*) FROM " + n)[0][0]
              for n in TABLES}, want, "all rows there")

        # Rows lost on the way: the count catches it, all rolled back.
        lossy = cluster.create_database("lossy")
        p = console({"SERVICE_DB_PATH": os.path.join(dst.dir, "x.db"),
                     "SERVICE_PEPPER_FILE": os.path.join(dst.dir, "pp")},
                    "--db", cluster.url(lossy), "init")
        t.ok(p.returncode == 0, "init of another database", p.stderr)
        cluster.query(lossy, "CREATE RULE lose AS ON INSERT TO outcomes "
                      "DO INSTEAD NOTHING")
        p = migrate(src, cluster.url(lossy))
        refused(t, p, "a target that loses rows", ["outcomes", "rolled back"])
        t.eq({n: cluster.query(lossy, "SELECT count(*) FROM " + n)[0][0]
              for n in TABLES}, {n: 0 for n in TABLES},
             "every table left empty")

        # A file of schema version 5: a migrated copy is read.
        v5 = old_version_file(dst.dir)
        v5_digest = digest(v5)
        old = cluster.create_database("old")
        p = console({"SERVICE_DB_PATH": v5,
                     "SERVICE_PEPPER_FILE": os.path.join(dst.dir, "pp")},
                    "migrate", "--from", v5, "--to", cluster.url(old))
        t.ok(p.returncode == 0 and "schema version 5" in p.stdout,
             "a version 5 file is moved", p)
        t.eq(cluster.query(old, "SELECT a.name, k.prefix, d.id, "
                           "d.answers, a.retention_days FROM "
                           "applications a JOIN api_keys k ON k.app_id = "
                           "a.id JOIN decisions d ON d.app_id = a.id"),
             [("v5", "abcdefgh", "0190aaaa-0000-7000-8000-000000000001",
               '[{"question":"q","type":"noul","distribution":'
               '[0.25,0.75],"answer":false,"label_mass":0.1}]', None)],
             "its rows are there, the answer row in its decision's row "
             "as store_answers.c writes it")
        t.eq(cluster.query(old, "SELECT name, options FROM backends "
                           "ORDER BY name"),
             [("lex", None), ("oa", '{"max_options":8,"extra":{"seed":1}}')],
             "an openai backend's options moved into backends.options, "
             "only those set, and copied")
        t.eq(digest(v5), v5_digest, "the version 5 file was not written")
        t.eq([n for n in os.listdir(os.environ.get("TMPDIR") or "/tmp")
              if n.startswith("evalgate-migrate-")], [],
             "no temporary copy left behind")

        # From a file a gateway is serving: one snapshot, and a warning.
        src.start()
        busy = cluster.create_database("busy")
        p = migrate(src, cluster.url(busy))
        t.ok(p.returncode == 0 and "warning: process" in p.stdout and
             "stop the web server" in p.stdout,
             "from a file in use: done, with a warning that later writes "
             "are not copied", p)
        src.stop()

        # Bad input.
        spare = cluster.create_database("spare")
        p = migrate(src, "/not/a/url")
        refused(t, p, "--to not a URL", ["--to", "postgresql://"])
        p = console({}, "migrate", "--from", "/nonexistent.db", "--to",
                    cluster.url(spare))
        refused(t, p, "--from a missing file", ["/nonexistent.db"])
        p = console({}, "migrate", "--from", DEMO, "--to",
                    cluster.url(spare))
        refused(t, p, "--from a file that is not a database", [DEMO])
        p = console({}, "migrate", "--from", src.db)
        t.eq(p.returncode, 2, "--to missing: bad usage, exit 2")
        p = migrate(src, cluster.url("nosuchdb"))
        refused(t, p, "a database that does not exist",
                ["PostgreSQL", "the database does not exist"])
        t.ok("host=" not in p.stderr and "user=" not in p.stderr,
             "the URL is not in the message", p.stderr)
    finally:
        src.cleanup()
        if dst is not None:
            dst.cleanup()
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
