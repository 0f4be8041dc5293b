"""test_pg_hosts: two gateways, one PostgreSQL database (doc/design.md,
section 10).

Two lighttpd instances on different ports, each with its own worker
pool, its own cache file and its own copy of the pepper, both on one
database of a throw-away PostgreSQL cluster: two hosts behind a load
balancer.  Proves, with their clock pinned (SERVICE_TEST_CLOCK_FILE, the
same file for both):

- admission is exact across hosts: 40 concurrent calls spread over both
  at 20 a minute admit exactly 20 (the others 429 rate_limited), and a
  daily quota of 40 units admits exactly 10 calls of 4 out of 30;
- a decision made through one host is read through the other, given an
  outcome there, and the outcome is read back through the first;
- a catalog change through one host's console (a revoked key, a removed
  grant; doc/design.md, section 6.3), through its /admin/v1, or by
  hand with psql reaches every worker of the other host at its next
  request, though they all kept the rows it changed;
- a password in the URL (SERVICE_DB_URL, --db) is never shown: not in
  the error log when the database refuses the workers, nor in their 503,
  nor in the console's error for a database that does not exist;
- a wrong password, an unknown role and an unreachable port: the log
  and the console name the server (its socket, or host:port) and why,
  never the role, the password, the database or the URL.

It runs whatever EVALGATE_TEST_ENGINE says (it is PostgreSQL's by
nature), and is skipped in a build without the PostgreSQL engine.
"""

import os
import subprocess
import threading

from gateway import ADMIN, Gateway, TAP, require_postgresql

HERE = os.path.dirname(os.path.abspath(__file__))
DEMO = os.path.join(HERE, "..", "..", "examples", "demo-questions.json")
T0 = 1899640800000              # 2030-03-13T12:00:00Z
BODY = {"state": "my order arrived broken, I want a refund",
        "x_schema": {"id": "demo"}}
BURST = 40


def set_clock(path, ms):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % ms)
    os.replace(tmp, path)


def evaluate(g, key):
    return g.post("/v1/systemone", BODY, key=key)


def code(r):
    """An answer's status and, for an error, its code."""
    try:
        return r.status, r.json().get("error", {}).get("code")
    except ValueError:
        return r.status, None


def burst(hosts, key, n=BURST):
    """n evaluations at once, alternately through each host; the
    answers, in order."""
    gate = threading.Barrier(n)
    out = [None] * n

    def fire(i):
        gate.wait()
        try:
            out[i] = code(evaluate(hosts[i % len(hosts)], key))
        except Exception as e:      # counted as neither 200 nor 429
            out[i] = (0, repr(e))
    threads = [threading.Thread(target=fire, args=(i,)) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    return out


def new_app(g, name, *limits):
    g.admin("app", "create", name, *limits)
    g.admin("grant", name, "demo")
    return g.admin("key", "issue", name).stdout.strip()


def test_admission(t, a, b, clock):
    set_clock(clock, T0)
    key = new_app(a, "burst", "--rate-per-minute", "20",
                  "--daily-quota", "1000000")
    out = burst((a, b), key)
    t.ok((out.count((200, None)), out.count((429, "rate_limited"))) ==
         (20, 20), "40 concurrent calls over both hosts at 20/min: exactly "
         "20 admitted, 20 refused rate_limited", out)
    # Which host wins the race above is the scheduler's; that each host
    # counts what the other admitted is shown without one: 10 calls
    # through A, then 20 at once through B, which alone would admit 20.
    split = new_app(a, "split", "--rate-per-minute", "20",
                    "--daily-quota", "1000000")
    first = [code(evaluate(a, split)) for _ in range(10)]
    t.ok(first == [(200, None)] * 10, "10 calls through host A: all "
         "admitted", first)
    out = burst((b,), split, 20)
    t.ok((out.count((200, None)), out.count((429, "rate_limited"))) ==
         (10, 10), "then 20 at once through host B: exactly 10 admitted, "
         "B counting A's 10", out)
    t.eq(a.sql("SELECT sum(q.used) FROM quota_days q JOIN applications a"
               " ON a.id = q.app_id WHERE a.name = 'burst'"), [(80,)],
         "the 20 calls of cost 4 used 80 units in the shared counter")

    key = new_app(a, "quota", "--rate-per-minute", "1000000",
                  "--daily-quota", "40")
    out = burst((a, b), key, 30)
    t.ok((out.count((200, None)), out.count((429, "quota_exceeded"))) ==
         (10, 20), "30 concurrent calls of 4 units over both hosts, a "
         "quota of 40: exactly 10 admitted, 20 refused quota_exceeded", out)


def test_decision_across(t, a, b):
    key = new_app(a, "shared")
    r = evaluate(a, key)
    t.eq(r.status, 200, "a decision made through host A")
    did = r.json()["x_decision_id"]
    answers = r.json()["answers"]
    r = b.get("/v1/decisions/" + did, key=key)
    t.eq((r.status, r.json().get("answers") if r.status == 200 else r.body),
         (200, answers), "is read through host B, with its answers")
    r = b.post("/v1/decisions/%s/outcome" % did,
               {"answers": {"refund": True}, "source": "host-b"}, key=key)
    t.ok(r.status == 200, "host B records its outcome", r)
    r = a.get("/v1/decisions/" + did, key=key)
    out = r.json().get("outcomes", {}) if r.status == 200 else {}
    t.eq((r.status, out.get("refund", {}).get("value"),
          out.get("refund", {}).get("source")), (200, True, "host-b"),
         "host A reads the outcome host B recorded")
    r = a.post("/v1/decisions/%s/outcome" % did,
               {"answers": {"refund": False}}, key=key)
    t.error_is(r, 409, "conflict", "a conflicting outcome through host A "
               "is 409: one decision, one outcome per question")


def each_worker(g, key, n=8):
    """The set of (status, code) of n evaluations through g: every worker
    of g answers at least one of them (lighttpd spreads them)."""
    return sorted(set(code(evaluate(g, key)) for _ in range(n)))


def test_catalog_across(t, a, b):
    """Every worker of B keeps the rows (key, application, grant,
    backend) of its last request; a change made elsewhere must still be
    seen at its next one."""
    ok = [(200, None)]
    key = new_app(a, "keeper")
    prefix = key.split("_")[1]
    t.eq(each_worker(b, key), ok, "host B's workers answer (and keep the "
         "key's rows)")
    a.admin("key", "revoke", prefix)
    t.eq(each_worker(b, key), [(401, "invalid_api_key")],
         "a key revoked through host A's console is refused at host B's "
         "next request")
    t.eq(each_worker(a, key), [(401, "invalid_api_key")], "and at A's")

    key = new_app(a, "granted")
    t.eq(each_worker(b, key), ok, "a second application answers on B")
    a.admin("ungrant", "granted", "demo")
    t.eq(each_worker(b, key), [(403, "schema_not_granted")],
         "a grant removed through host A's console is refused at host B's "
         "next request")
    a.admin("grant", "granted", "demo")
    t.eq(each_worker(b, key), ok, "granted again: B answers")

    adm = a.new_key("ops", "--admin")
    r = a.admin_request("DELETE", "/admin/v1/grants/granted/demo", key=adm)
    t.eq(r.status, 200, "the grant removed through host A's /admin/v1")
    t.eq(each_worker(b, key), [(403, "schema_not_granted")],
         "is refused at host B's next request")
    a.admin("grant", "granted", "demo")
    t.eq(each_worker(b, key), ok, "granted again")

    b.sql("UPDATE api_keys SET revoked_at = 1 WHERE prefix = ?",
          (key.split("_")[1],))
    t.eq(each_worker(b, key), [(401, "invalid_api_key")],
         "a key revoked by hand with psql is refused at host B's next "
         "request")
    t.eq(each_worker(a, key), [(401, "invalid_api_key")], "and at A's")

    key = new_app(a, "handmade")
    t.eq(each_worker(b, key), ok, "a third application answers on B")
    b.sql("DELETE FROM grants WHERE app_id = (SELECT id FROM applications"
          " WHERE name = 'handmade')")
    t.eq(each_worker(b, key), [(403, "schema_not_granted")],
         "a grant deleted by hand with psql is refused at host B's next "
         "request")
    t.eq(each_worker(a, key), [(403, "schema_not_granted")], "and at A's")


def test_password_hidden(t, a):
    """A third host whose URL has a password (the cluster trusts its
    socket, so any password is accepted)."""
    secret = "Pw-never-shown-42"
    url = a.url.replace("postgresql://", "postgresql://%s:%s@" % (
        a.url.split("user=")[1], secret), 1)
    c = Gateway(workers=1, share=a, env={"SERVICE_DB_URL": url})
    c.url = url
    try:
        c.start()
        key = new_app(c, "hidden")
        t.eq(evaluate(c, key).status, 200, "a URL with a password works")
        a.pg.query("postgres", "ALTER DATABASE %s WITH ALLOW_CONNECTIONS "
                   "false" % a.pgdb)
        try:
            a.pg.query("postgres", "SELECT pg_terminate_backend(pid) FROM"
                       " pg_stat_activity WHERE datname = ?", (a.pgdb,))
            r = evaluate(c, key)
            t.eq(code(r), (503, "service_unavailable"), "the database "
                 "refusing connections: 503 service_unavailable")
            ready = c.get("/health/ready")
            p = c.admin("app", "list", check=False)
        finally:
            a.pg.query("postgres", "ALTER DATABASE %s WITH "
                       "ALLOW_CONNECTIONS true" % a.pgdb)
        t.ok(p.returncode != 0, "the console, refused: an error", p)
        shown = c.log() + r.body.decode() + ready.body.decode() + \
            p.stdout + p.stderr
        t.ok(secret not in shown and url not in shown,
             "neither the log, the answers nor the console show the "
             "password", shown[-2000:])
        p = subprocess.run([ADMIN, "--db", url.replace(
            "/%s?" % a.pgdb, "/nosuchdb?"), "app", "list"],
            capture_output=True, text=True, timeout=60,
            env=dict(os.environ, **c.env))
        t.ok(p.returncode == 1 and "PostgreSQL" in p.stderr and
             secret not in p.stdout + p.stderr,
             "a database that does not exist: exit 1, one line without "
             "the password", p.stderr)
        t.stop_clean(c, "host C: no sanitizer reports")
    finally:
        c.cleanup()


def test_connection_errors(t, a):
    """A host refused by the database, or that cannot reach it: its log
    and the console's error name the server (its socket, or host:port)
    and why, never the role, the password, the database or the URL."""
    role, password = "pw_role_x7", "Right-pw-51"
    a.pg.add_password_role(role, password)
    db = a.pg.create_database("dbname_hidden_")
    a.pg.query(db, "GRANT ALL ON SCHEMA public TO %s" % role)
    sock = "%s/.s.PGSQL.5432" % a.pg.dir
    url = "postgresql:///%s?host=%s&port=%s&user=%s&password=%s"
    cases = [
        ("a wrong password", url % (db, a.pg.dir, 5432, role, "Wrong-pw-93"),
         sock, "password", (role, "Wrong-pw-93")),
        ("an unknown role", url % (db, a.pg.dir, 5432, "ghost_role_q3",
                                   password), sock, "SQLSTATE 28000",
         ("ghost_role_q3", password)),
        ("an unreachable port", url % (db, "127.0.0.1", 1, role, password),
         "127.0.0.1:1", "refused", (role, password)),
    ]
    for what, bad, server, why, hidden in cases:
        c = Gateway(workers=1, share=a, env={"SERVICE_DB_URL": bad})
        c.url = bad
        try:
            c.start()
            r = c.get("/health/ready")
            t.eq(r.status, 503, "%s: /health/ready is 503" % what)
            p = c.admin("app", "list", check=False)
            log = c.log()
            lines = [line for line in (log + p.stderr).splitlines()
                     if "PostgreSQL" in line]
            t.ok(p.returncode != 0 and
                 "cannot connect to PostgreSQL at %s: " % server in
                 p.stderr and "cannot connect to PostgreSQL at %s: " %
                 server in log and why in log,
                 "%s: the log and the console name %s and why" % (
                     what, server), "\n".join(lines) or log[-2000:])
            shown = log + p.stdout + p.stderr + r.body.decode()
            t.ok(not [s for s in hidden + (db, bad) if s in shown],
                 "%s: never the role, the password, the database or the "
                 "URL" % what, "\n".join(lines))
            t.stop_clean(c, "%s: no sanitizer reports" % what)
        finally:
            c.cleanup()
    good = Gateway(workers=1, share=a, env={"SERVICE_DB_URL": url % (
        db, a.pg.dir, 5432, role, password)})
    good.url = good.env["SERVICE_DB_URL"]
    try:
        p = good.admin("init", check=False)
        t.ok(p.returncode == 0, "the right password connects", p.stderr)
    finally:
        good.cleanup()


def main():
    require_postgresql()
    t = TAP()
    a = Gateway(workers=2, engine="postgresql")
    b = None
    try:
        clock = os.path.join(a.dir, "clock")
        set_clock(clock, T0)
        a.env["SERVICE_TEST_CLOCK_FILE"] = clock
        b = Gateway(workers=2, share=a,
                    env={"SERVICE_TEST_CLOCK_FILE": clock})
        a.admin("backend", "add", "lex", "--kind", "lexical")
        a.admin("schema", "publish", "demo", "--questions", DEMO,
                "--backend", "lex")
        a.start()
        b.start()
        t.ok(a.port != b.port and a.env["SERVICE_CACHE_PATH"] !=
             b.env["SERVICE_CACHE_PATH"] and a.url == b.url,
             "two hosts: two ports, two cache files, one database")
        t.run([test_admission], a, b, clock)
        t.run([test_decision_across, test_catalog_across], a, b)
        t.run([test_password_hidden, test_connection_errors], a)
        t.ok(os.path.exists(a.env["SERVICE_CACHE_PATH"]) and
             os.path.exists(b.env["SERVICE_CACHE_PATH"]),
             "each host made its own cache file")
        t.ok(a.url not in a.log() + b.log(), "no log line has the URL")
        t.stop_clean(a, "host A: no sanitizer reports")
        t.stop_clean(b, "host B: no sanitizer reports")
    finally:
        a.cleanup()
        if b is not None:
            b.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
