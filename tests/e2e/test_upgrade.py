"""test_upgrade: what an operator meets upgrading an install (README,
"Upgrading"), over real lighttpd.

A database one schema version behind the workers (version 6: version
7's database with the index migrate-7 drops, as an install of the
version before had it): /health/ready is 503 naming the version, and
evaluations are 503, until `evalgate-admin init`, run while the gateway
serves, migrates it and says so; then ready is 200 and evaluations
answer.  Both programs print their version (--version), which is
`git describe --always --dirty` in a checkout, and /metrics's
evalgate_build_info carries it.  A shared-memory file of another
layout version, left by another build, is replaced with one log line
naming both versions."""

import os
import struct
import subprocess
import time

from gateway import ADMIN, WORKER, Gateway, TAP, build_version

STATE = "the delivery was late and the driver was rude"
QUESTIONS = {"late": {"type": "noul", "instructions": "Was it late?"}}


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


def set_back(g):
    """The database as the version before left it: schema version 6,
    with the index version 7 dropped."""
    g.sql("CREATE INDEX decisions_time ON decisions(created_at_ms)")
    if g.engine == "postgresql":
        g.sql("UPDATE schema_version SET v = 6")
    else:
        g.sql("PRAGMA user_version = 6")


def test_schema_upgrade(t, g, key):
    t.eq(evaluate(g, key).status, 200, "setup: an evaluation answers")
    g.stop()
    set_back(g)
    g.start()
    why = "schema version 6, want 9: run evalgate-admin init"
    r = g.get("/health/ready")
    t.eq(r.status, 503, "ready is 503 while the database is at schema "
         "version 6 and the workers need 9")
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
    t.ok("migrated the database from schema version 6 to 9" in p.stdout,
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
         "schema version 9, nothing to migrate" in p.stdout,
         "init again: nothing to migrate", p.stdout)
    if g.engine == "postgresql":
        idx = g.sql("SELECT count(*) FROM pg_indexes"
                    " WHERE indexname = 'decisions_time'")
    else:
        idx = g.sql("SELECT count(*) FROM sqlite_master"
                    " WHERE name = 'decisions_time'")
    t.eq(idx[0][0], 0, "the migration ran (decisions_time dropped)")


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
