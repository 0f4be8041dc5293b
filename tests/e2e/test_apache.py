"""test_apache: the worker under Apache 2.4 with mod_fcgid, configured
by examples/apache-fcgid.conf as shipped (only its Define lines and a few
mod_fcgid numbers changed, see ApacheGateway).

Through the sample: health, authentication (a working key proves
CGIPassAuth), an evaluation on the lexical backend, its decision and an
outcome, 4xx answers in the spec's format, the worker's own JSON 413 for
a body over SERVICE_MAX_BODY_BYTES, /admin/v1 only on the internal
virtual host (a spoofed Host header on the public port still 404), and
several workers writing one database at once.  Under mod_fcgid's process
management: workers recycled after 5 requests, stopped when idle and
started again on demand, and every stop a clean exit on SIGTERM (never
SIGKILL).  A control with the sample's protections turned off shows each
is what makes its check pass.  No sanitizer reports."""

import json
import os
import re
import signal
import sqlite3
import threading
import time

from gateway import ApacheGateway, TAP, Upstream

UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
                   r"[0-9a-f]{12}$")
HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")
LIMIT = 1048576                 # SERVICE_MAX_BODY_BYTES, the default


def evaluate_body():
    with open(os.path.join(EXAMPLES, "evaluate.json")) as f:
        return json.load(f)


def setup(g):
    """The demo schema on the lexical backend, granted to `client`; an
    administrator `root`.  Returns (client key, root key)."""
    a = g.admin
    a("backend", "add", "lexical", "--kind", "lexical")
    a("schema", "publish", "demo", "--questions",
      os.path.join(EXAMPLES, "demo-questions.json"), "--backend", "lexical")
    key = g.new_key("client", "--rate-per-minute", "100000")
    a("grant", "client", "demo")
    return key, g.new_key("root", "--admin", "--rate-per-minute", "100000")


def db_rows(g, sql, *args):
    db = sqlite3.connect(g.db, timeout=10)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def fcgid_exits(g):
    """mod_fcgid's line for each worker that ended."""
    return [line for line in g.log().splitlines()
            if "mod_fcgid: process" in line and " exit(" in line]


def clean_exit(line):
    return "terminated by calling exit(), return code: 0" in line


def spawned(g):
    return len(re.findall(r"mod_fcgid: server \S+evalgate\.fcgi\(\d+\) "
                          r"started", g.log()))


# -- through the sample ---------------------------------------------------

def test_health(t, g):
    r = g.get("/health")
    t.eq((r.status, r.json()), (200, {"status": "ok"}), "GET /health")
    t.ok(UUID7.match(r.headers.get("x-service-request-id", "")) is not None,
         "x-service-request-id through Apache")
    r = g.get("/health/ready")
    t.eq((r.status, r.json()), (200, {"status": "ok", "database": True,
                                      "cache": True}),
         "GET /health/ready: the workers (www-data) reach both files")


def test_auth(t, g, key):
    t.error_is(g.get("/v1/models"), 401, "invalid_api_key", "no key: 401")
    t.error_is(g.get("/v1/models", key=key[:-1] + ("a" if key[-1] != "a"
                                                   else "b")),
               401, "invalid_api_key", "a wrong secret: 401")
    r = g.get("/v1/models", key=key)
    t.eq(r.status, 200, "a good key works: Authorization reaches the "
         "worker (CGIPassAuth On)")
    t.eq([m["name"] for m in r.json().get("models", [])], ["lexical"],
         "GET /v1/models lists the lexical backend")


def test_evaluation_and_outcome(t, g, key):
    r = g.post("/v1/systemone", evaluate_body(), key=key)
    t.ok(r.status == 200, "POST /v1/systemone through Apache: 200", r)
    if r.status != 200:
        return
    b = r.json()
    t.eq(sorted(b["answers"]), ["refund", "sentiment", "urgency"],
         "every question answered")
    t.eq(b["answers"]["sentiment"]["choice"], "negative",
         "the lexical backend's answer")
    t.eq((b["x_backend"], b["x_schema"]), ("lexical", {"id": "demo",
                                                      "version": 1}),
         "x_backend and x_schema")
    did = b["x_decision_id"]
    t.ok(UUID7.match(did) is not None, "x_decision_id is a UUIDv7", did)
    d = g.get("/v1/decisions/" + did, key=key)
    t.eq((d.status, d.json().get("answers")), (200, b["answers"]),
         "GET /v1/decisions/{id}: the answers recorded")
    path = "/v1/decisions/%s/outcome" % did
    body = {"answers": {"sentiment": "negative", "refund": True},
            "source": "apache"}
    r = g.post(path, body, key=key)
    t.eq((r.status, r.json()), (200, {"decision_id": did,
                                      "recorded": ["sentiment", "refund"]}),
         "POST outcome: 200, both questions recorded")
    t.eq(g.post(path, body, key=key).status, 200, "the same again: 200")
    t.error_is(g.post(path, {"answers": {"sentiment": "positive"}}, key=key),
               409, "conflict", "a different value: 409 conflict")
    t.eq(db_rows(g, "SELECT question, value FROM outcomes WHERE "
                 "decision_id = ? ORDER BY question", did),
         [("refund", "true"), ("sentiment", '"negative"')],
         "the outcomes are in the database")


def test_errors(t, g, key):
    t.error_is(g.get("/nope"), 404, "not_found", "unknown path: 404")
    t.error_is(g.get("/v1/decisions/a%2Fb", key=key), 404, "not_found",
               "an encoded slash reaches the worker: its 404, not Apache's "
               "(AllowEncodedSlashes NoDecode)")
    t.error_is(g.request("DELETE", "/v1/models", key=key), 405,
               "method_not_allowed", "wrong method: 405")
    t.error_is(g.post("/v1/systemone", "{not json", key=key,
                      headers={"Content-Type": "application/json"}),
               422, "validation_error", "malformed JSON: 422")
    t.error_is(g.post("/v1/systemone", {"state": "x", "questions": {}},
                      key=key), 422, "validation_error",
               "no questions: 422")
    r = g.post("/v1/systemone", {"state": "x", "questions": {
        "q": {"type": "noul"}}}, key=key)
    t.ok(r.status == 422 and r.json()["error"]["code"] == "invalid_schema",
         "an ungranted shape: 422 invalid_schema", r)


def test_body_limit(t, g, key):
    h = {"Content-Type": "application/json"}
    r = g.post("/v1/systemone", b"x" * (LIMIT + 1), key=key, headers=h)
    t.error_is(r, 413, "payload_too_large",
               "a body over SERVICE_MAX_BODY_BYTES: the worker's JSON 413 "
               "(FcgidMaxRequestLen is above it)")
    r = g.post("/v1/systemone", b"x" * (2 * LIMIT), key=key, headers=h)
    t.error_is(r, 413, "payload_too_large",
               "up to FcgidMaxRequestLen, still the JSON 413")
    r = g.post("/v1/systemone", b"x" * (2 * LIMIT + 1), key=key, headers=h)
    t.eq(r.status, 500, "over FcgidMaxRequestLen mod_fcgid answers itself "
         "(the boundary the sample documents)")
    t.eq(g.get("/health").status, 200, "the gateway is fine afterwards")


def test_admin_listener(t, g, key, root):
    r = g.admin_request("GET", "/admin/v1/applications", key=root)
    t.ok(r.status == 200, "GET /admin/v1/applications on the internal "
         "virtual host: 200", r)
    t.ok(r.status == 200 and "client" in
         [a.get("name") for a in r.json().get("applications", [])],
         "it lists the applications")
    t.error_is(g.admin_request("GET", "/admin/v1/applications", key=key),
               403, "forbidden", "a non-admin key there: 403")
    t.error_is(g.get("/admin/v1/applications", key=root), 404, "not_found",
               "/admin/v1 on the public virtual host: 404")
    spoof = {"Host": "127.0.0.1:%d" % g.admin_port}
    t.error_is(g.get("/admin/v1/applications", key=root, headers=spoof),
               404, "not_found", "a spoofed Host: 127.0.0.1:<admin port> "
               "on the public port: still 404 (UseCanonicalName On, "
               "UseCanonicalPhysicalPort On)")
    r = g.get("http://127.0.0.1:%d/admin/v1/applications" % g.admin_port,
              key=root)
    t.eq(r.status, 404, "an absolute request-target naming the internal "
         "port, on the public port: 404")
    r = g.post("/admin/v1/applications", {"name": "intruder"}, key=root,
               headers=spoof)
    t.eq(r.status, 404, "POST with the spoofed Host: 404")
    t.eq(db_rows(g, "SELECT count(*) FROM applications WHERE name = ?",
                 "intruder"), [(0,)], "and nothing was created")


def test_several_workers(t, g, key):
    """Evaluations at once over the pool: every one answered and recorded
    once, by more than one worker process."""
    n = 16
    before = db_rows(g, "SELECT count(*) FROM decisions")[0][0]
    results, pids = [], set()
    lock = threading.Lock()

    def one():
        r = g.post("/v1/systemone", evaluate_body(), key=key)
        with lock:
            results.append(r)
            pids.update(g.worker_pids())

    threads = [threading.Thread(target=one) for _ in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    t.eq(sorted(r.status for r in results), [200] * n,
         "%d evaluations at once: all 200" % n)
    ids = {r.json()["x_decision_id"] for r in results if r.status == 200}
    t.eq(len(ids), n, "%d distinct decisions" % n)
    after = db_rows(g, "SELECT count(*) FROM decisions")[0][0]
    t.eq(after - before, n, "each recorded once in the one database")
    t.ok(len(pids) >= 2, "served by several worker processes", pids)
    t.ok(len(g.worker_pids()) <= g.workers + 2,
         "no more workers than FcgidMaxProcessesPerClass allows (public "
         "and internal classes)", g.worker_pids())


def test_stop(t, g):
    pids = g.worker_pids()
    g.stop()
    exits = fcgid_exits(g)
    t.ok(len(exits) >= len(pids) and all(clean_exit(x) for x in exits),
         "on Apache's stop every worker exited cleanly on SIGTERM",
         "\n".join(exits))
    t.eq(g.sanitizer_reports(), [], "no sanitizer reports")


# -- mod_fcgid's process management ---------------------------------------

def test_recycling(t, g, key):
    start = spawned(g)
    statuses = [g.get("/v1/models", key=key).status for _ in range(20)]
    t.eq(statuses, [200] * 20, "20 requests with FcgidMaxRequestsPerProcess "
         "5: all 200")
    t.ok(spawned(g) - start >= 3, "workers were replaced along the way",
         spawned(g) - start)
    r = g.post("/v1/systemone", evaluate_body(), key=key)
    t.eq(r.status, 200, "an evaluation after the recycling: 200")


def wait_for(cond, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def test_idle(t, g, key):
    gone = wait_for(lambda: g.worker_pids() == [], 20)
    t.ok(gone, "idle workers are stopped (FcgidIdleTimeout 2, "
         "FcgidMinProcessesPerClass 0)", g.worker_pids())
    # mod_fcgid logs an exit once it has reaped the process.
    idle = wait_for(lambda: any("exit(idle timeout)" in x
                                for x in fcgid_exits(g)), 10)
    exits = fcgid_exits(g)
    t.ok(idle, "mod_fcgid says idle timeout", "\n".join(exits[-5:]))
    t.ok(len(exits) >= 4 and all(clean_exit(x) for x in exits),
         "every stop so far (recycled or idle) was a clean exit on SIGTERM, "
         "none needed SIGKILL", "\n".join(exits))
    r = g.get("/v1/models", key=key)
    t.eq(r.status, 200, "a request after that starts a worker again")
    t.eq(len(g.worker_pids()), 1, "one worker, started on demand")


def test_term_mid_request(t, g, key, up):
    """SIGTERM while a worker waits for its backend: the answer still
    arrives, then the worker exits, and mod_fcgid starts another."""
    up.control(mode="slow", delay_ms=1000)
    body = {"state": "x", "questions": {"slow": {"type": "noul"}}}
    g.get("/v1/models", key=key)
    res = []
    th = threading.Thread(target=lambda: res.append(
        g.post("/v1/systemone", body, key=key)))
    th.start()
    time.sleep(0.4)
    pids = g.worker_pids()
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    th.join(30)
    up.control(mode="ok", delay_ms=0)
    t.ok(len(pids) >= 1 and res and res[0].status == 200,
         "SIGTERM during a request: that request still gets its 200",
         res and res[0])
    t.ok(wait_for(lambda: not set(pids) & set(g.worker_pids()), 5),
         "then the worker exits", pids)
    t.eq(g.get("/v1/models", key=key).status, 200,
         "the next request is served by a new worker")


def test_restarts(t, g, key):
    """Apache's graceful restart (SIGUSR1) and restart (SIGHUP) stop the
    workers and start new ones; requests keep being answered."""
    for sig, name in ((signal.SIGUSR1, "graceful restart"),
                      (signal.SIGHUP, "restart")):
        g.proc.send_signal(sig)
        time.sleep(0.2)

        def answered():
            try:
                return g.get("/v1/models", key=key).status == 200
            except OSError:
                return False
        t.ok(wait_for(answered, 15), "after a %s, requests are answered"
             % name)


# -- a control: the sample without its protections ------------------------

def test_control(t, c, key, root):
    """With UseCanonicalName Off, CGIPassAuth Off and mod_fcgid's default
    FcgidMaxRequestLen, the checks above fail: each directive is needed."""
    t.eq(c.get("/v1/models", key=key).status, 401,
         "control, CGIPassAuth Off: a good key is 401 (Apache hid it)")
    spoof = {"Host": "127.0.0.1:%d" % c.admin_port}
    r = c.get("/admin/v1/applications", key=root, headers=spoof)
    t.ok(r.status != 404, "control, UseCanonicalName Off: the spoofed Host "
         "reaches /admin/v1 from the public port", r)
    r = c.post("/v1/systemone", b"x" * (LIMIT + 1),
               headers={"Content-Type": "application/json"})
    t.ok(r.status == 500 and not r.body.startswith(b"{"),
         "control, FcgidMaxRequestLen 131072: mod_fcgid's own HTML 500 "
         "instead of the worker's 413", r)


def main():
    t = TAP()
    began = time.time()
    g = ApacheGateway(workers=3)
    try:
        g.start()
        key, root = setup(g)
        t.run([test_health], g)
        t.run([test_auth, test_evaluation_and_outcome, test_errors,
               test_body_limit], g, key)
        t.run([test_admin_listener], g, key, root)
        t.run([test_several_workers], g, key)
        t.run([test_stop], g)
    finally:
        g.cleanup()

    p = ApacheGateway(workers=2, directives={
        "FcgidMaxRequestsPerProcess": 5, "FcgidIdleTimeout": 2,
        "FcgidIdleScanInterval": 1, "FcgidErrorScanInterval": 1,
        "FcgidMinProcessesPerClass": 0})
    try:
        p.start()
        key, _ = setup(p)
        t.run([test_recycling, test_idle], p, key)
        up = Upstream()
        try:
            p.admin("backend", "add", "up", "--kind", "systemone",
                    "--url", up.url)
            with open(os.path.join(p.dir, "slow.json"), "w") as f:
                json.dump({"slow": {"type": "noul"}}, f)
            p.admin("schema", "publish", "slow", "--questions",
                    os.path.join(p.dir, "slow.json"), "--backend", "up")
            p.admin("grant", "client", "slow")
            t.run([test_term_mid_request], p, key, up)
        finally:
            up.stop()
        t.run([test_restarts], p, key)
        t.run([test_stop], p)
    finally:
        p.cleanup()

    c = ApacheGateway(workers=1, directives={
        "UseCanonicalName": "Off", "CGIPassAuth": "Off",
        "FcgidMaxRequestLen": 131072})
    try:
        c.start()
        key, root = setup(c)
        t.run([test_control], c, key, root)
        c.stop()
        t.eq(c.sanitizer_reports(), [], "control: no sanitizer reports")
    finally:
        c.cleanup()
    print("# test_apache took %.1f s" % (time.time() - began))
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
