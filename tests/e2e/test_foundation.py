"""test_foundation: health, routing, the error format, request ids,
authentication (every 401 cause, revocation at once, argon2id once per
key), the body limit and readiness, over real lighttpd."""

import os
import re
import time

from gateway import Gateway, TAP

UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
                   r"[0-9a-f]{12}$")


def test_health(t, g):
    r = g.get("/health")
    t.eq(r.status, 200, "GET /health is 200")
    t.eq(r.json(), {"status": "ok"}, "GET /health body")
    t.eq(r.headers.get("content-type"), "application/json",
         "health is JSON")
    r = g.get("/health/ready")
    t.eq(r.status, 200, "GET /health/ready is 200")
    t.eq(r.json(), {"status": "ok", "database": True, "cache": True},
         "ready body reports database and cache")


def test_request_ids(t, g):
    seen = set()
    for method, path in (("GET", "/health"), ("GET", "/nope"),
                         ("POST", "/health"), ("GET", "/v1/models")):
        r = g.request(method, path)
        rid = r.headers.get("x-service-request-id", "")
        t.ok(UUID7.match(rid) is not None,
             "%s %s (%d) carries x-service-request-id" %
             (method, path, r.status), rid)
        t.eq(r.headers.get("x-typesafe-request-id"), rid,
             "%s %s: x-typesafe-request-id is the same" % (method, path))
        seen.add(rid)
    t.eq(len(seen), 4, "request ids differ")


def test_routing_errors(t, g):
    t.error_is(g.get("/nope"), 404, "not_found", "unknown path is 404")
    t.error_is(g.get("/v1/systemone/extra"), 404, "not_found",
               "unknown subpath is 404")
    t.error_is(g.post("/health", {}), 405, "method_not_allowed",
               "POST /health is 405")
    t.error_is(g.request("DELETE", "/v1/models"), 405, "method_not_allowed",
               "DELETE /v1/models is 405")
    t.error_is(g.get("/admin/v1/applications"), 404, "not_found",
               "admin routes are 404 on the public listener")


def test_body_limit(t, g):
    limit = 1048576
    r = g.post("/v1/systemone", b"x" * (limit + 1),
               headers={"Content-Type": "application/json"})
    t.error_is(r, 413, "payload_too_large", "a body over the limit is 413")
    t.ok("1048577" in r.json()["error"]["message"],
         "the 413 message says the size", r.body)


def test_unauthenticated(t, g, key):
    prefix = key.split("_")[1]
    wrong = key[:-4] + ("aaaa" if not key.endswith("aaaa") else "bbbb")
    cases = [
        ("missing header", None),
        ("wrong scheme", "Basic " + key),
        ("no token", "Bearer "),
        ("malformed token", "Bearer svc_short_x"),
        ("token with bad characters", "Bearer svc_" + prefix + "_" +
         "!" * 32),
        ("unknown prefix", "Bearer svc_zzzzzzzz_" + "A" * 32),
        ("wrong secret", "Bearer " + wrong),
    ]
    bodies = set()
    for name, value in cases:
        h = {} if value is None else {"Authorization": value}
        r = g.get("/v1/models", headers=h)
        t.error_is(r, 401, "invalid_api_key", "401 for " + name)
        bodies.add(r.body)
    t.eq(len(bodies), 1, "every 401 has the same body")
    t.eq(g.get("/v1/models", key=key).status, 200, "the right key works")


def test_expired_and_revoked(t, g):
    g.admin("app", "create", "expiring", check=False)
    old = g.admin("key", "issue", "expiring", "--expires",
                  "2020-01-01T00:00:00Z").stdout.strip()
    t.error_is(g.get("/v1/models", key=old), 401, "invalid_api_key",
               "an expired key is 401")
    soon = g.admin("key", "issue", "expiring", "--expires",
                   "2999-01-01T00:00:00+02:00").stdout.strip()
    t.eq(g.get("/v1/models", key=soon).status, 200,
         "a key expiring in the future works")
    key = g.admin("key", "issue", "expiring").stdout.strip()
    t.eq(g.get("/v1/models", key=key).status, 200, "a fresh key works")
    t.eq(g.get("/v1/models", key=key).status, 200, "twice (memo)")
    g.admin("key", "revoke", key.split("_")[1])
    t.error_is(g.get("/v1/models", key=key), 401, "invalid_api_key",
               "revocation takes effect on the very next request")
    t.ok(g.admin("key", "revoke", "zzzzzzzz", check=False).returncode == 1,
         "revoking an unknown prefix is refused")


def test_argon2_once(t, g):
    key = g.new_key("counted")
    prefix = key.split("_")[1]
    for _ in range(6):
        g.get("/v1/models", key=key)
    line = "argon2id verification for key " + prefix
    t.eq(g.log().count(line), 1,
         "six requests over %d workers paid argon2id once" % g.workers)
    t.ok(key.split("_")[2] not in g.log(), "the secret is not logged")


def test_guessing_costs_nothing(t, g):
    """A wrong secret is refused by the keyed hash its key row keeps,
    without argon2id; the right key still works after the guesses."""
    key = g.new_key("guessed")
    prefix = key.split("_")[1]
    for i in range(15):
        g.get("/v1/models", key="svc_%s_%032d" % (prefix, i))
    line = "argon2id verification for key " + prefix
    t.eq(g.log().count(line), 0,
         "15 wrong secrets for one prefix cost no argon2id run")
    t.error_is(g.get("/v1/models", key="svc_%s_%032d" % (prefix, 99)), 401,
               "invalid_api_key", "a wrong secret is still a 401")
    t.eq(g.get("/v1/models", key=key).status, 200,
         "and the right key, never used before, works")


def refuse_connections(g, refuse):
    """PostgreSQL: the gateway's database refuses new connections (and
    its workers' sessions are ended), or accepts them again."""
    g.pg.query("postgres", "ALTER DATABASE %s WITH ALLOW_CONNECTIONS %s"
               % (g.pgdb, "false" if refuse else "true"))
    if refuse:
        g.pg.query("postgres", "SELECT pg_terminate_backend(pid) FROM"
                   " pg_stat_activity WHERE datname = ?", (g.pgdb,))


def ready_again(g, timeout=15):
    """The first status of /health/ready that is 200 within timeout
    seconds (a worker reconnects by itself, at most every second), or
    the last one."""
    end = time.time() + timeout
    while True:
        st = g.get("/health/ready").status
        if st == 200 or time.time() > end:
            return st
        time.sleep(0.2)


def not_ready(t, g, why):
    """/health/ready while the database cannot be written: a 503 in the
    spec's shape that names the database, not the cache."""
    r = g.get("/health/ready")
    t.eq(r.status, 503, "ready is 503 when " + why)
    t.eq(r.json().get("database"), False, "and says the database")
    t.eq(r.json().get("cache"), True, "and that the cache answers")
    t.ok("retry-after" in r.headers, "503 carries Retry-After")
    err = r.json().get("error", {})
    t.ok(err.get("code") == "service_unavailable" and
         err.get("message") and isinstance(err.get("details"), dict),
         "the 503 carries the spec's error object too", r.body)
    return r


def test_ready_fails_without_database(t, g, key):
    if g.engine == "postgresql":
        return ready_without_postgresql(t, g, key)
    os.rename(g.db, g.db + ".away")
    try:
        not_ready(t, g, "the database is gone")
    finally:
        os.rename(g.db + ".away", g.db)
    t.eq(g.get("/health/ready").status, 200, "ready again when it is back")
    with open(g.db, "r+b") as f:
        saved = f.read(100)
        f.seek(0)
        f.write(b"garbage" * 10)
    try:
        t.eq(g.get("/health/ready").status, 503,
             "ready is 503 when the database is not a database")
    finally:
        with open(g.db, "r+b") as f:
            f.write(saved)
    t.eq(g.get("/health/ready").status, 200, "ready again once repaired")


def ready_without_postgresql(t, g, key):
    """The SQLite test's file moved away or overwritten, on PostgreSQL:
    the database refuses connections."""
    refuse_connections(g, True)
    try:
        not_ready(t, g, "PostgreSQL refuses connections to the database")
        r = g.get("/v1/models", key=key)
        t.error_is(r, 503, "service_unavailable", "an authenticated call "
                   "meanwhile is 503 service_unavailable")
        t.ok(r.headers.get("retry-after", "").isdigit(),
             "with Retry-After", r.headers)
        t.ok(g.url not in g.log() + r.body.decode(),
             "neither the log nor the answer has the URL")
    finally:
        refuse_connections(g, False)
    t.eq(ready_again(g), 200, "ready again once it accepts them, the "
         "workers reconnected by themselves")
    # A worker tries again at most every second: within a few, every
    # worker answers.
    end, run = time.time() + 15, 0
    while run < 4 * g.workers and time.time() < end:
        run = run + 1 if g.get("/v1/models", key=key).status == 200 else 0
        time.sleep(0.05)
    t.eq(run, 4 * g.workers, "and calls answer, on every worker")


def test_outage_logged_once(t):
    """PostgreSQL: two seconds of calls while the database refuses
    connections, on a gateway that has answered one: each worker logs
    the failure once per change (lost, back), not at every call."""
    g = Gateway(workers=2)
    try:
        g.start()
        key = g.new_key("outage")
        g.get("/v1/models", key=key)
        refuse_connections(g, True)
        try:
            end, calls = time.time() + 2, 0
            while time.time() < end:
                g.get("/v1/models", key=key)
                calls += 1
                time.sleep(0.01)
        finally:
            refuse_connections(g, False)
        ready_again(g)
        t.stop_clean(g, "outage: no sanitizer reports")
        said = [line for line in g.log().splitlines() if "PostgreSQL" in line]
        t.ok(len(said) <= 4 * g.workers, "%d calls while PostgreSQL "
             "refused connections: at most 4 lines a worker name it, the "
             "failure logged once per change (%d lines)" % (calls,
                                                            len(said)),
             said[:6])
    finally:
        g.cleanup()


def main():
    t = TAP()
    g = Gateway(workers=2)
    try:
        g.start()
        key = g.new_key("foundation")
        t.run([test_health, test_request_ids, test_routing_errors,
               test_body_limit], g)
        t.run([test_unauthenticated], g, key)
        t.run([test_expired_and_revoked, test_argon2_once,
               test_guessing_costs_nothing], g)
        t.run([test_ready_fails_without_database], g, key)
        t.stop_clean(g)
    finally:
        g.cleanup()
    if g.engine == "postgresql":
        t.run([test_outage_logged_once])
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
