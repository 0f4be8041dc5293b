"""test_metrics: GET /metrics and the access log over real lighttpd with
two workers (and Apache with mod_fcgid recycling its workers).

On a fresh gateway every reason of evalgate_unavailable_total is there
at 0.  After a known mix of calls (200s from the built-in lexical
backend, 401s for each way a key fails, 422s, a 429 from the rate limit,
503s from a System One upstream answering 500, the third refused while
its replica cools down, an outcome report), every counter on the
internal listener has exactly the expected value, summed over the two
workers that served them.  Each kind of 503 counts once under its
reason: a disabled backend (disabled), an answer of the wrong shape
(unfit), a connection refused (no_replica), a replica resting after two
of those (cooling), a second call while the only one allowed is in
flight (in_flight), /health/ready while the cache is write-locked
(database); the reasons add up to the 503s of evalgate_requests_total.
A worker killed with -9 and replaced loses
nothing counted before; the shared-memory file deleted resets the
figures and breaks nothing.  /metrics is 404 on the public port (as
/admin/v1 is), needs an administrator's key only with
SERVICE_METRICS_KEY_REQUIRED=1, and is 404 with SERVICE_METRICS=0, which
counts nothing.  SERVICE_ACCESS_LOG=1 writes one logfmt line per
request, never the state or the key.  No sanitizer reports."""

import json
import os
import re
import signal
import sqlite3
import threading
import time

from gateway import ApacheGateway, Gateway, TAP, Upstream, build_version, \
    free_port

STATE = "my parcel arrived crushed and I want my money back"
DEMO = {"refunded": {"type": "noul", "instructions": "refund?"}}
DEAD = {"lost": {"type": "noul", "instructions": "lost?"}}
BAD_KEY = "svc_aaaaaaaa_" + "A" * 32
CONTENT_TYPE = "text/plain; version=0.0.4"
FAMILIES = {
    "evalgate_requests_total": "counter",
    "evalgate_request_duration_seconds": "histogram",
    "evalgate_backend_requests_total": "counter",
    "evalgate_backend_duration_seconds": "histogram",
    "evalgate_replica_cooldowns_total": "counter",
    "evalgate_admission_refusals_total": "counter",
    "evalgate_decisions_total": "counter",
    "evalgate_outcomes_total": "counter",
    "evalgate_abstentions_total": "counter",
    "evalgate_auth_failures_total": "counter",
    "evalgate_db_busy_total": "counter",
    "evalgate_unavailable_total": "counter",
    "evalgate_workers": "gauge",
    "evalgate_worker_processes": "gauge",
    "evalgate_build_info": "gauge",
}

REASONS = ("in_flight", "cooling", "no_replica", "unfit", "database",
           "disabled", "other")

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


def parse(text):
    """({(name, ((label, value), ...)): float}, {family: type}); raises
    on a line that is not of the format."""
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ", 3)
            types[name] = typ
            continue
        if line.startswith("# HELP ") or line == "":
            continue
        m = SAMPLE.match(line)
        if m is None:
            raise ValueError("not a sample line: %r" % line)
        labels, rest = [], m.group(2) or ""
        while rest:
            lm = LABEL.match(rest)
            if lm is None:
                raise ValueError("bad labels: %r" % line)
            value = re.sub(r'\\(.)', lambda x: {"n": "\n"}.get(
                x.group(1), x.group(1)), lm.group(2))
            labels.append((lm.group(1), value))
            rest = rest[lm.end():]
        key = (m.group(1), tuple(sorted(labels)))
        if key in samples:
            raise ValueError("a series twice: %r" % line)
        samples[key] = float(m.group(3).replace("+Inf", "inf"))
    return samples, types


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))), 0)


def scrape(g, key=None):
    r = g.admin_request("GET", "/metrics", key=key)
    if r.status != 200:
        raise RuntimeError("/metrics: %r" % r)
    return parse(r.body.decode("utf-8"))[0]


def settled(samples):
    """The series that the scrapes and health checks themselves do not
    move (nor the gauge of workers)."""
    return {k: v for k, v in samples.items()
            if dict(k[1]).get("route") not in ("/metrics", "/health")
            and k[0] not in ("evalgate_workers",
                             "evalgate_worker_processes")}


def evaluate(g, key, schema="demo"):
    return g.post("/v1/systemone", {"state": STATE,
                                    "x_schema": {"id": schema}}, key=key)


def unavailable(samples):
    return {r: value(samples, "evalgate_unavailable_total", reason=r)
            for r in REASONS}


def test_fresh(t, g, keys):
    samples = scrape(g)
    t.eq(sorted(dict(k[1])["reason"] for k in samples
                if k[0] == "evalgate_unavailable_total"), sorted(REASONS),
         "a fresh gateway: every reason of evalgate_unavailable_total")
    t.eq(unavailable(samples), {r: 0 for r in REASONS}, "each at 0")


def test_mix(t, g, keys):
    """The known mix; keys["did"] gets the first decision's id."""
    key, slow = keys["m"], keys["slow"]
    out = [None] * 12
    gate = threading.Barrier(12)

    def fire(i):
        gate.wait()
        out[i] = evaluate(g, key)

    threads = [threading.Thread(target=fire, args=(i,)) for i in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    t.eq([r.status for r in out], [200] * 12, "12 concurrent evaluations")
    t.eq(g.get("/v1/models").status, 401, "no key: 401")
    t.eq(g.get("/v1/models", key=BAD_KEY).status, 401, "unknown key")
    t.eq(g.get("/v1/models", key=BAD_KEY).status, 401, "again")
    t.eq(g.get("/v1/models", headers={"Authorization": "Bearer nonsense"})
         .status, 401, "malformed key")
    for _ in range(3):
        t.eq(g.post("/v1/systemone", {"state": STATE}, key=key).status, 422,
             "no questions: 422")
    t.eq([g.get("/v1/models", key=slow).status for _ in range(3)],
         [200, 200, 429], "2 calls a minute: the third is 429")
    t.eq([evaluate(g, key, "dead").status for _ in range(3)],
         [503, 503, 503], "a backend answering 500: 503 twice (the second "
         "rests its replica), then 503 at once (cooling down)")
    did = out[0].json()["x_decision_id"]
    t.eq(g.post("/v1/decisions/%s/outcome" % did,
                {"answers": {"refunded": True}}, key=key).status, 200,
         "an outcome is recorded")
    keys["did"] = did


def test_counters(t, g, keys):
    key, did = keys["m"], keys["did"]
    r = g.admin_request("GET", "/metrics")
    t.eq((r.status, r.headers.get("content-type")), (200, CONTENT_TYPE),
         "/metrics on the internal listener: 200, text format 0.0.4")
    samples, types = parse(r.body.decode("utf-8"))
    t.eq({k: v for k, v in types.items() if k in FAMILIES}, FAMILIES,
         "every family has its TYPE")
    req = "evalgate_requests_total"
    got = {
        "200 evaluations": value(samples, req, route="/v1/systemone",
                                 method="POST", status="200"),
        "422 evaluations": value(samples, req, route="/v1/systemone",
                                 method="POST", status="422"),
        "503 evaluations": value(samples, req, route="/v1/systemone",
                                 method="POST", status="503"),
        "401 models": value(samples, req, route="/v1/models",
                            method="GET", status="401"),
        "200 models": value(samples, req, route="/v1/models",
                            method="GET", status="200"),
        "429 models": value(samples, req, route="/v1/models",
                            method="GET", status="429"),
        "200 outcome": value(samples, req,
                             route="/v1/decisions/{}/outcome",
                             method="POST", status="200"),
        "evaluation durations": value(
            samples, "evalgate_request_duration_seconds_count",
            route="/v1/systemone", method="POST"),
        "evaluation +Inf": value(
            samples, "evalgate_request_duration_seconds_bucket",
            route="/v1/systemone", method="POST", le="+Inf"),
        "lex ok": value(samples, "evalgate_backend_requests_total",
                        backend="lex", outcome="ok"),
        "failing http_5xx": value(samples,
                                  "evalgate_backend_requests_total",
                                  backend="failing", outcome="http_5xx"),
        "failing attempts timed": value(
            samples, "evalgate_backend_duration_seconds_count",
            backend="failing"),
        "failing cool-downs": value(samples,
                                    "evalgate_replica_cooldowns_total",
                                    backend="failing"),
        "rate refusals": value(samples, "evalgate_admission_refusals_total",
                               reason="rate"),
        "quota refusals": value(samples,
                                "evalgate_admission_refusals_total",
                                reason="quota"),
        "demo decisions": value(samples, "evalgate_decisions_total",
                                schema="demo"),
        "demo outcomes": value(samples, "evalgate_outcomes_total",
                               schema="demo"),
        "missing keys": value(samples, "evalgate_auth_failures_total",
                              reason="missing"),
        "unknown keys": value(samples, "evalgate_auth_failures_total",
                              reason="unknown"),
        "malformed keys": value(samples, "evalgate_auth_failures_total",
                                reason="malformed"),
        "db busy": value(samples, "evalgate_db_busy_total"),
        "build_info": value(samples, "evalgate_build_info",
                            version=BUILD_VERSION),
        "503s": unavailable(samples),
    }
    want = {
        "200 evaluations": 12, "422 evaluations": 3, "503 evaluations": 3,
        "401 models": 4, "200 models": 2, "429 models": 1, "200 outcome": 1,
        "evaluation durations": 18, "evaluation +Inf": 18, "lex ok": 12,
        "failing http_5xx": 2, "failing attempts timed": 2,
        "failing cool-downs": 1, "rate refusals": 1, "quota refusals": 0,
        "demo decisions": 12, "demo outcomes": 1, "missing keys": 1,
        "unknown keys": 2, "malformed keys": 1, "db busy": 0,
        "build_info": 1,
        "503s": dict({r: 0 for r in REASONS}, no_replica=2, cooling=1),
    }
    t.eq(got, want, "every counter has exactly the expected value")
    other = sorted(k for k in samples if k[0] == req and dict(k[1])["route"]
                   not in ("/v1/systemone", "/v1/models", "/health",
                           "/metrics", "/v1/decisions/{}/outcome"))
    t.eq(other, [], "no other route counted anything")
    abst = value(samples, "evalgate_abstentions_total", schema="demo")
    t.ok(0 <= abst <= 12, "abstentions of demo within its decisions", abst)
    buckets = [v for (n, l), v in sorted(samples.items(), key=lambda kv: (
        float(dict(kv[0][1]).get("le", "0").replace("+Inf", "inf"))))
        if n == "evalgate_request_duration_seconds_bucket" and
        dict(l).get("route") == "/v1/systemone"]
    t.ok(len(buckets) == 13 and buckets == sorted(buckets),
         "13 cumulative buckets, increasing", buckets)

    log = g.log()
    lines = [x for x in log.splitlines() if " access: " in x]
    pids = {re.match(r"evalgate\[(\d+)\]", x).group(1) for x in lines
            if "route=/v1/systemone" in x and "status=200" in x}
    t.eq(len(pids), 2, "the evaluations were served by both workers: the "
         "figures above are their sum")
    t.eq(value(samples, "evalgate_workers"), 2,
         "evalgate_workers: both answered in the last minute")
    t.eq(value(samples, "evalgate_worker_processes"), 2,
         "evalgate_worker_processes: the pool of 2, as the workers count "
         "themselves")
    mine = [x for x in lines if "decision=" + did in x]
    t.ok(len(mine) == 1 and re.search(
        r"access: request_id=[0-9a-f-]{36} method=POST route=/v1/systemone"
        r" status=200 app=m schema=demo schema_version=1 backend=lex"
        r" decision=" + did + r" gateway_ms=\d+ backend_ms=\d+$", mine[0]),
        "the access line of an evaluation: request id, route, status, "
        "application, schema and version, backend, decision, timings",
        mine)
    t.eq(len([x for x in lines if "route=/v1/models status=401" in x]), 4,
         "one access line per request, none throttled as repeats")
    t.ok(STATE not in log and key not in log and
         key.split("_")[2] not in log and BAD_KEY not in log,
         "never the state or a key in the log")


def test_public(t, g, keys):
    r = g.get("/metrics")
    a = g.get("/admin/v1/applications")
    t.error_is(r, 404, "not_found", "/metrics on the public port: 404")
    t.eq(r.json()["error"]["message"], "no such route: /metrics",
         "as any unknown path, like /admin/v1 there: " +
         a.json()["error"]["message"])
    t.eq(g.request("POST", "/metrics").status, 404,
         "another method on the public port: 404 too, not 405")
    t.eq(g.admin_request("POST", "/metrics").status, 405,
         "on the internal listener: 405")


def test_unavailable(t, g, keys):
    """Each kind of 503, once, counted under its reason."""
    key = keys["m"]
    before = unavailable(scrape(g))
    r = evaluate(g, key, "off")
    t.error_is(r, 503, "backend_unavailable", "a disabled backend: 503")
    r = evaluate(g, key, "shaped")
    t.error_is(r, 503, "backend_unavailable", "an answer of the wrong "
               "shape: 503")
    statuses = [evaluate(g, key, "refused").status for _ in range(3)]
    t.eq(statuses, [503] * 3, "connection refused: 503 twice, then 503 "
         "while the replica rests")
    out = {}

    def hung():
        out["r"] = evaluate(g, key, "one")

    th = threading.Thread(target=hung)
    th.start()
    time.sleep(1.0)
    r = evaluate(g, key, "one")
    th.join(60)
    t.error_is(r, 503, "backend_unavailable", "a second call while the "
               "only one allowed is in flight: 503")
    t.eq(out["r"].status, 503, "the call in flight: 503 at its timeout")
    db = sqlite3.connect(os.path.join(g.dir, "cache.db"), timeout=5,
                         isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    try:
        time.sleep(0.1)
        t.eq(g.get("/health/ready").status, 503,
             "/health/ready while the cache is write-locked: 503")
    finally:
        db.execute("ROLLBACK")
        db.close()
    samples = scrape(g)
    after = unavailable(samples)
    t.eq({r: after[r] - before[r] for r in REASONS},
         dict({r: 0 for r in REASONS}, disabled=1, unfit=1, no_replica=3,
              cooling=1, in_flight=1, database=1),
         "each 503 counted once, under its reason")
    t.eq(sum(after.values()), sum(v for k, v in samples.items()
                                  if k[0] == "evalgate_requests_total" and
                                  dict(k[1])["status"] == "503"),
         "the reasons add up to the 503s answered")


def test_kill9(t, g, keys):
    before = settled(scrape(g))
    pids = g.worker_pids()
    t.eq(len(pids), 2, "two workers")
    os.kill(pids[0], signal.SIGKILL)
    end = time.time() + 30
    while time.time() < end and pids[0] in g.worker_pids():
        time.sleep(0.05)
    end = time.time() + 30
    while time.time() < end:
        try:
            g.get("/health", timeout=5)
        except OSError:
            pass
        now = g.worker_pids()
        if len(now) == 2 and pids[0] not in now:
            break
        time.sleep(0.1)
    t.ok(pids[0] not in g.worker_pids() and len(g.worker_pids()) == 2,
         "a worker killed -9 was replaced", g.worker_pids())
    t.eq(settled(scrape(g)), before, "nothing counted before was lost")
    t.eq(evaluate(g, keys["m"]).status, 200, "the new pool evaluates")
    after = settled(scrape(g))
    t.eq(value(after, "evalgate_requests_total", route="/v1/systemone",
               method="POST", status="200"), 13, "and counts on top")


def test_deleted(t, g, keys):
    shm = os.path.join(g.dir, "evalgate.shm")
    t.ok(os.path.exists(shm), "the shared memory is beside the cache")
    os.unlink(shm)
    t.eq(evaluate(g, keys["m"]).status, 200,
         "the shared memory deleted: evaluations go on")
    s = scrape(g)
    got = value(s, "evalgate_requests_total", route="/v1/systemone",
                method="POST", status="200")
    t.ok(got <= 1 and value(s, "evalgate_decisions_total",
                            schema="demo") <= 1,
         "the figures start again from nothing", got)


def test_key_required(t, g, keys):
    g.env["SERVICE_METRICS_KEY_REQUIRED"] = "1"
    g.restart()
    t.error_is(g.admin_request("GET", "/metrics"), 401, "invalid_api_key",
               "SERVICE_METRICS_KEY_REQUIRED=1: no key, 401")
    t.error_is(g.admin_request("GET", "/metrics", key=keys["m"]), 403,
               "forbidden", "an application's key, not an administrator's")
    r = g.admin_request("GET", "/metrics", key=keys["root"])
    t.eq((r.status, r.headers.get("content-type")), (200, CONTENT_TYPE),
         "an administrator's key: 200")
    s = parse(r.body.decode())[0]
    t.eq((value(s, "evalgate_auth_failures_total", reason="missing"),
          value(s, "evalgate_auth_failures_total", reason="not_admin")),
         (1, 1), "the refusals were counted by reason")
    t.error_is(g.get("/metrics", key=keys["root"]), 404, "not_found",
               "still 404 on the public port, key or not")
    del g.env["SERVICE_METRICS_KEY_REQUIRED"]
    g.env["SERVICE_METRICS"] = "0"
    g.restart()
    t.eq(evaluate(g, keys["m"]).status, 200, "SERVICE_METRICS=0: "
         "evaluations as ever")
    t.error_is(g.admin_request("GET", "/metrics"), 404, "not_found",
               "and /metrics is 404")
    del g.env["SERVICE_METRICS"]
    g.restart()
    t.eq(value(scrape(g), "evalgate_decisions_total", schema="demo"),
         value(scrape(g), "evalgate_decisions_total", schema="demo"),
         "on again: scrapes answer")


def test_apache(t):
    g = ApacheGateway(workers=2, env={"SERVICE_WORKERS": "2"},
                      directives={"FcgidMaxRequestsPerProcess": 5})
    try:
        key = g.new_key("a", "--rate-per-minute", "100000")
        g.start()
        statuses = [g.get("/v1/models", key=key).status for _ in range(20)]
        t.eq(statuses, [200] * 20, "Apache: 20 calls, workers recycled "
             "every 5 requests")
        s = scrape(g)
        t.eq(value(s, "evalgate_requests_total", route="/v1/models",
                   method="GET", status="200"), 20,
             "Apache: every call counted, though the workers that "
             "counted them are gone")
        t.error_is(g.get("/metrics"), 404, "not_found",
                   "Apache: /metrics on the public port: 404")
        t.eq(g.get("/admin/v1/applications").status, 404,
             "as /admin/v1 is there")
        t.stop_clean(g, "Apache: no sanitizer reports")
    finally:
        g.cleanup()


BUILD_VERSION = None


def main():
    global BUILD_VERSION
    BUILD_VERSION = build_version()
    t = TAP()
    up = Upstream(mode="error500")
    shaped = Upstream(mode="wrong_shape")
    hanging = Upstream(mode="hang")
    g = Gateway(workers=2, env={"SERVICE_WORKERS": "2",
                                "SERVICE_ACCESS_LOG": "1"})
    try:
        g.admin("backend", "add", "lex", "--kind", "lexical")
        g.admin("backend", "add", "failing", "--kind", "systemone",
                "--url", up.url)
        g.admin("backend", "add", "lexoff", "--kind", "lexical")
        g.admin("backend", "add", "shapeless", "--kind", "systemone",
                "--url", shaped.url)
        g.admin("backend", "add", "closed", "--kind", "systemone",
                "--url", "http://127.0.0.1:%d" % free_port())
        g.admin("backend", "add", "narrow", "--kind", "systemone",
                "--url", hanging.url, "--timeout-ms", "3000",
                "--max-in-flight", "1")
        for name, questions, backend in (("demo", DEMO, "lex"),
                                         ("dead", DEAD, "failing"),
                                         ("off", DEAD, "lexoff"),
                                         ("shaped", DEAD, "shapeless"),
                                         ("refused", DEAD, "closed"),
                                         ("one", DEAD, "narrow")):
            path = os.path.join(g.dir, name + ".json")
            with open(path, "w") as f:
                json.dump(questions, f)
            g.admin("schema", "publish", name, "--questions", path,
                    "--backend", backend)
        keys = {"m": g.new_key("m", "--rate-per-minute", "100000"),
                "slow": g.new_key("slow", "--rate-per-minute", "2"),
                "root": g.new_key("root", "--admin")}
        for app in ("m", "slow"):
            g.admin("grant", app, "demo")
        for schema in ("dead", "off", "shaped", "refused", "one"):
            g.admin("grant", "m", schema)
        g.admin("backend", "disable", "lexoff")
        g.start()
        t.run([test_fresh, test_mix, test_counters, test_public,
               test_unavailable, test_kill9, test_deleted,
               test_key_required], g, keys)
        t.stop_clean(g)
    finally:
        g.cleanup()
        up.stop()
        shaped.stop()
        hanging.stop()
    t.run([test_apache])
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
