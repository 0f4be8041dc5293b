"""deploy_checks: the checks every shipped web server configuration must
pass, shared by test_apache (examples/apache-fcgid.conf) and
test_lighttpd_sample (lighttpd.conf.sample): health, authentication
(a working key proves the Authorization header reaches the worker), an
evaluation on the lexical backend with its decision and an outcome, 4xx
answers in the spec's format (and no TRACE echo of a key), the worker's JSON 413 for a body over
SERVICE_MAX_BODY_BYTES and the server's own refusal past its limit,
/admin/v1 only on the internal listener (a spoofed Host header or an
absolute request-target naming the internal port, on the public port:
404), several workers writing one database at once, and those workers
spread over the CPUs, each kept to one (SERVICE_CPU_AFFINITY=1, as both
ship)."""

import json
import os
import re
import socket
import threading
import time

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


def test_health(t, g):
    r = g.get("/health")
    t.eq((r.status, r.json()), (200, {"status": "ok"}), "GET /health")
    t.ok(UUID7.match(r.headers.get("x-service-request-id", "")) is not None,
         "x-service-request-id through the server")
    r = g.get("/health/ready")
    t.eq((r.status, r.json()), (200, {"status": "ok", "database": True,
                                      "cache": True}),
         "GET /health/ready: the workers reach both files")


def test_auth(t, g, key):
    t.error_is(g.get("/v1/models"), 401, "invalid_api_key", "no key: 401")
    t.error_is(g.get("/v1/models", key=key[:-1] + ("a" if key[-1] != "a"
                                                   else "b")),
               401, "invalid_api_key", "a wrong secret: 401")
    r = g.get("/v1/models", key=key)
    t.eq(r.status, 200, "a good key works: Authorization reaches the "
         "worker")
    t.eq([m["name"] for m in r.json().get("models", [])], ["lexical"],
         "GET /v1/models lists the lexical backend")


def test_evaluation_and_outcome(t, g, key):
    r = g.post("/v1/systemone", evaluate_body(), key=key)
    t.ok(r.status == 200, "POST /v1/systemone: 200", r)
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
    t.eq(g.sql("SELECT question, value FROM outcomes WHERE "
               "decision_id = ? ORDER BY question", (did,)),
         [("refund", "true"), ("sentiment", '"negative"')],
         "the outcomes are in the database")


def test_errors(t, g, key):
    t.error_is(g.get("/nope"), 404, "not_found", "unknown path: 404")
    t.error_is(g.get("/v1/decisions/a%2Fb", key=key), 404, "not_found",
               "an encoded slash reaches the worker: its 404, not the "
               "server's")
    t.error_is(g.request("DELETE", "/v1/models", key=key), 405,
               "method_not_allowed", "wrong method: 405")
    t.error_is(g.post("/v1/systemone", "{not json", key=key,
                      headers={"Content-Type": "application/json"}),
               422, "validation_error", "malformed JSON: 422")
    t.error_is(g.post("/v1/systemone", {"state": "x", "questions": {}},
                      key=key), 422, "validation_error",
               "no questions: 422")
    r = g.request("TRACE", "/v1/models", key=key)
    t.ok(r.status == 405 and key.encode() not in r.body,
         "TRACE: 405, never an echo of the request and its key", r)
    r = g.post("/v1/systemone", {"state": "x", "questions": {
        "q": {"type": "noul"}}}, key=key)
    t.ok(r.status == 422 and r.json()["error"]["code"] == "invalid_schema",
         "an ungranted shape: 422 invalid_schema", r)


def from_server(r):
    """Whether r is one of errors/status-*.html: the spec's error body,
    as JSON, with the status it is for, said to come from the server."""
    try:
        err = json.loads(r.body)["error"]
    except (ValueError, KeyError, TypeError):
        return False
    return (r.headers.get("content-type", "").startswith("application/json")
            and isinstance(err.get("code"), str)
            and isinstance(err.get("message"), str)
            and err.get("details") == {"status": r.status,
                                       "source": "web server"})


def raw(g, data):
    """Sends data as it is to the public port; (status, headers, body)."""
    s = socket.create_connection(("127.0.0.1", g.port), timeout=10)
    try:
        s.sendall(data)
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    except OSError:
        pass
    finally:
        s.close()
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        status = 0
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return Answer(status, headers, body)


class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def __repr__(self):
        return "<%d %r>" % (self.status, self.body[:200])


SERVER_ERRORS = [
    ("a NUL in the URL", b"GET /v1/models%00x HTTP/1.1\r\nHost: x\r\n"
     b"Connection: close\r\n\r\n"),
    ("a raw NUL in the request line", b"GET /v1/a\x00b HTTP/1.1\r\n"
     b"Host: x\r\nConnection: close\r\n\r\n"),
    ("a request line that is not HTTP", b"GARBAGE\r\n\r\n"),
    ("a header over the server's limit", b"GET /health HTTP/1.1\r\n"
     b"Host: x\r\nX-Big: " + b"a" * 70000 + b"\r\nConnection: close"
     b"\r\n\r\n"),
    ("a Content-Length that is no number", b"POST /v1/systemone "
     b"HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n"
     b"Connection: close\r\n\r\n"),
]


def test_server_errors(t, g):
    """What the web server refuses before any worker sees it is a 4xx
    in the spec's format (errors/), never HTML."""
    for what, data in SERVER_ERRORS:
        r = raw(g, data)
        t.ok(400 <= r.status < 500 and from_server(r),
             "%s: the server's %d, in the spec's format" % (what, r.status),
             r)


def wait_for(cond, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def test_body_limit(t, g, key, server_limit, server_status):
    """server_limit: the web server's own body limit (FcgidMaxRequestLen,
    server.max-request-size), above which it answers server_status
    itself, not in JSON."""
    h = {"Content-Type": "application/json"}
    r = g.post("/v1/systemone", b"x" * (LIMIT + 1), key=key, headers=h)
    t.error_is(r, 413, "payload_too_large",
               "a body over SERVICE_MAX_BODY_BYTES: the worker's JSON 413 "
               "(the server's own limit is above it)")
    r = g.post("/v1/systemone", b"x" * server_limit, key=key, headers=h)
    t.error_is(r, 413, "payload_too_large",
               "up to the server's own limit, still the JSON 413")
    r = g.post("/v1/systemone", b"x" * (server_limit + 1), key=key,
               headers=h)
    t.ok(r.status == server_status and from_server(r),
         "past it the server answers %d itself (the boundary the sample "
         "documents), in the spec's format from errors/" % server_status,
         r)
    t.eq(g.get("/health").status, 200, "the gateway is fine afterwards")


def test_admin_listener(t, g, key, root):
    r = g.admin_request("GET", "/admin/v1/applications", key=root)
    t.ok(r.status == 200, "GET /admin/v1/applications on the internal "
         "listener: 200", r)
    t.ok(r.status == 200 and "client" in
         [a.get("name") for a in r.json().get("applications", [])],
         "it lists the applications")
    t.error_is(g.admin_request("GET", "/admin/v1/applications", key=key),
               403, "forbidden", "a non-admin key there: 403")
    t.error_is(g.get("/admin/v1/applications", key=root), 404, "not_found",
               "/admin/v1 on the public listener: 404")
    spoof = {"Host": "127.0.0.1:%d" % g.admin_port}
    t.error_is(g.get("/admin/v1/applications", key=root, headers=spoof),
               404, "not_found", "a spoofed Host: 127.0.0.1:<admin port> "
               "on the public port: still 404")
    r = g.get("http://127.0.0.1:%d/admin/v1/applications" % g.admin_port,
              key=root)
    t.eq(r.status, 404, "an absolute request-target naming the internal "
         "port, on the public port: 404")
    r = g.post("/admin/v1/applications", {"name": "intruder"}, key=root,
               headers=spoof)
    t.eq(r.status, 404, "POST with the spoofed Host: 404")
    t.eq(g.sql("SELECT count(*) FROM applications WHERE name = ?",
               ("intruder",)), [(0,)], "and nothing was created")


def test_several_workers(t, g, key):
    """Evaluations at once over the pool: every one answered and recorded
    once, by more than one worker process."""
    n = 16
    before = g.sql("SELECT count(*) FROM decisions")[0][0]
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
    after = g.sql("SELECT count(*) FROM decisions")[0][0]
    t.eq(after - before, n, "each recorded once in the one database")
    t.ok(len(pids) >= 2, "served by several worker processes", pids)
    t.ok(len(g.worker_pids()) <= g.workers + 2,
         "no more workers than the pool allows (public and internal)",
         g.worker_pids())


def cpu_list(text):
    """The CPUs of a list such as "0-2,5": a set."""
    cpus = set()
    for part in text.strip().split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def test_cpu_affinity(t, g):
    """SERVICE_CPU_AFFINITY=1: each worker keeps to one CPU, and the pool
    is spread evenly over the CPUs the server may use."""
    kept = {}
    for pid in g.worker_pids():
        try:
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("Cpus_allowed_list:"):
                        kept[pid] = cpu_list(line.split(":", 1)[1])
        except OSError:
            pass                # exited meanwhile
    mine = os.sched_getaffinity(0)
    t.ok(kept and all(len(c) == 1 and c <= mine for c in kept.values()),
         "each worker keeps to one CPU", kept)
    per = [sum(1 for c in kept.values() if cpu in c) for cpu in mine]
    t.ok(max(per) - min(per) <= 1,
         "the workers spread evenly over the %d CPUs" % len(mine), per)


def run_shared(t, g, over_limit_status):
    """Every check above, in order, on a started gateway g whose web
    server answers bodies over twice the limit itself with
    over_limit_status.  Returns (key, admin key)."""
    key, root = setup(g)
    t.run([test_health], g)
    t.run([test_auth, test_evaluation_and_outcome, test_errors], g, key)
    t.run([test_body_limit], g, key, 2 * LIMIT, over_limit_status)
    t.run([test_server_errors], g)
    t.run([test_admin_listener], g, key, root)
    t.run([test_several_workers], g, key)
    t.run([test_cpu_affinity], g)
    return key, root
