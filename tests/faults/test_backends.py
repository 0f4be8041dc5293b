"""test_backends: a misbehaving upstream ends in a 503 within the
configured timeout and leaves the worker healthy.

One worker (so that every request meets the same process) and one
systemone backend per fault, each with a single replica and a timeout of
TIMEOUT_MS.  For each misbehaviour:

- an upstream that never accepts (a listening socket whose backlog is
  full, so that the kernel drops the SYNs);
- one that accepts and then never answers (hang);
- one that trickles its answer one byte a second (trickle);
- one that resets the connection in the middle of the body (reset);
- huge answers: 20 MB with a Content-Length, and 20 MB chunked with no
  Content-Length (the 8 MiB cap must stop both);
- valid JSON of the wrong shape, in many forms, and JSON json-c takes
  but would not keep as sent (a key cut at \\u0000, an integer beyond 64
  bits, NaN), nesting 100000 deep (mode raw);

the evaluation gets 503 backend_unavailable in the spec's error format,
with Retry-After and retry-after-ms, in less than the timeout plus a
margin; the next evaluation (through a healthy upstream) is a 200 from
the same worker process (its pid has not changed: nothing crashed); and
when the gateway stops, no sanitizer has reported anything.  Answers that
are odd but usable (invalid UTF-8 in members the gateway ignores, extra
options, unnormalised probabilities) are a 200 whose body is valid UTF-8
and names only the question's options.

A replica rests only after 2 failures in a row of its transport or its
server, host-wide; an answer that does not fit fails only its own
evaluation.  Through a backend whose one replica is a fake upstream:

- one answer of the wrong shape: that call is a 503, and the next call
  to the same backend (the upstream answering well again) is a 200;
- one 500, then a success: no cool-down (the next call is a 200 that
  reached the upstream, the log says "failure 1 of 2"); one more 500
  after that success starts the count again: still no cool-down;
- two 500s in a row: the second cools the replica ("cooling down 30
  s"), and the next call is a 503 at once with Retry-After, without a
  request reaching the upstream.
"""

import json
import os
import socket
import sqlite3
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from gateway import Gateway, TAP, Upstream  # noqa: E402

TIMEOUT_MS = 1500
MARGIN_S = 2.0          # ASan, a loaded machine, the 503's own work
CHOICE = {"type": "choice", "criteria": {"x": None, "y": None}}

# Valid JSON that is not an answer to {"q": choice x|y}.
WRONG_SHAPES = [
    ("an array", []),
    ("null", None),
    ("a number", 42),
    ("a string", "answers"),
    ("answers an array", {"model": "m", "answers": []}),
    ("answers missing", {"model": "m"}),
    ("the question missing", {"answers": {}}),
    ("another question", {"answers": {"other": {
        "type": "choice", "choice": "x", "probabilities": {"x": 1}}}}),
    ("answer an array", {"answers": {"q": [0.5, 0.5]}}),
    ("no probabilities", {"answers": {"q": {"type": "choice",
                                            "choice": "x"}}}),
    ("probabilities an array", {"answers": {"q": {
        "type": "choice", "probabilities": [0.5, 0.5]}}}),
    ("probabilities as strings", {"answers": {"q": {
        "type": "choice", "probabilities": {"x": "0.5", "y": "0.5"}}}}),
    ("a negative probability", {"answers": {"q": {
        "type": "choice", "probabilities": {"x": -1, "y": 2}}}}),
    ("no mass", {"answers": {"q": {
        "type": "choice", "probabilities": {"x": 0, "y": 0}}}}),
    ("an option missing", {"answers": {"q": {
        "type": "choice", "probabilities": {"x": 1}}}}),
    ("booleans", {"answers": {"q": {
        "type": "choice", "probabilities": {"x": True, "y": False}}}}),
    ("nulls", {"answers": {"q": {
        "type": "choice", "probabilities": {"x": None, "y": None}}}}),
]
# Raw texts: numbers out of range and nesting deeper than any parser
# should follow.
WRONG_TEXTS = [
    ("an infinite probability",
     '{"answers": {"q": {"type": "choice", "probabilities":'
     ' {"x": 1e999, "y": 0}}}}'),
    ("a huge integer probability",
     '{"answers": {"q": {"type": "choice", "probabilities":'
     ' {"x": 123456789012345678901234567890, "y": 0}}}}'),
    ("nesting 100000 deep", '{"answers": ' + "[" * 100000 + "]" * 100000 +
     "}"),
    ("probabilities nested 40 deep",
     '{"answers": {"q": {"type": "choice", "probabilities": {"x": ' +
     "[" * 40 + "1" + "]" * 40 + ', "y": 0}}}}'),
    ("a NUL escaped in a key",
     '{"answers": {"q\\u0000": {"type": "choice", "probabilities":'
     ' {"x": 0.5, "y": 0.5}}}}'),
    ("invalid UTF-8 in a probability's key",
     '{"answers": {"q": {"type": "choice", "probabilities":'
     ' {"x\udcff": 0.5, "y": 0.5}}}}'),
]
# Odd but usable: the gateway reads only what it asked for, and writes
# its answer from its own keys.
ACCEPTED_TEXTS = [
    ("invalid UTF-8 in a member the gateway ignores",
     '{"answers": {"q": {"type": "choice", "probabilities": {"x": 0.5,'
     ' "y": 0.5}, "note": "\udcff\udcfe"}}, "z": "\udcff"}'),
    ("extra options and members",
     '{"answers": {"q": {"type": "choice", "probabilities": {"x": 0.25,'
     ' "y": 0.75, "zz": 9}, "extra": [1, 2]}, "other": {}}, "usage": 7}'),
    ("probabilities summing to 3 (renormalised)",
     '{"answers": {"q": {"type": "choice", "probabilities": {"x": 1,'
     ' "y": 2}}}}'),
]


def never_accepting():
    """A listening socket that never accepts and whose backlog is full:
    the kernel drops further SYNs, so a client waits in connect().
    Returns (port, sockets to close)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    port = srv.getsockname()[1]
    held = [srv]
    for _ in range(8):
        c = socket.socket()
        c.setblocking(False)
        try:
            c.connect(("127.0.0.1", port))
        except (BlockingIOError, OSError):
            pass
        held.append(c)
    time.sleep(0.2)
    return port, held


def connect_hangs(port):
    """True if a new connection to port does not complete within 1 s."""
    c = socket.socket()
    c.settimeout(1.0)
    try:
        c.connect(("127.0.0.1", port))
        return False
    except socket.timeout:
        return True
    except OSError:
        return False
    finally:
        c.close()



def evaluate(g, key, schema):
    start = time.time()
    r = g.post("/v1/systemone", {"state": "s", "x_schema": {"id": schema}},
               key=key, timeout=60)
    return r, time.time() - start


def check_fault(t, g, key, name, schema, pid):
    g.clear_cooldowns()
    r, took = evaluate(g, key, schema)
    if t.error_is(r, 503, "backend_unavailable", "%s: 503" % name):
        t.ok(int(r.headers.get("retry-after", "0")) >= 1 and
             int(r.headers.get("retry-after-ms", "0")) >= 1,
             "%s: Retry-After and retry-after-ms" % name, r.headers)
    t.ok(took < TIMEOUT_MS / 1000.0 + MARGIN_S,
         "%s: answered in %.2f s (timeout %.1f s + %.0f s)" %
         (name, took, TIMEOUT_MS / 1000.0, MARGIN_S))
    r, _ = evaluate(g, key, "good")
    t.eq(r.status, 200, "%s: the next evaluation is answered" % name)
    t.eq(g.worker_pids(), [pid], "%s: by the same worker process" % name)


def resting(g, url):
    """Whether the cache holds a cool-down of url that is not over."""
    rows = g.sql("SELECT until_ms FROM cooldowns WHERE url = ?", (url,),
                 cache=True)
    return bool(rows) and rows[0][0] > time.time() * 1000


def test_unfit_once(t, g, key, up):
    up.reset()
    up.control(mode="wrong_shape", times=1)
    r, _ = evaluate(g, key, "lone")
    t.error_is(r, 503, "backend_unavailable", "one answer of the wrong "
               "shape: 503")
    r, _ = evaluate(g, key, "lone")
    t.eq(r.status, 200, "the next call to the same only replica: 200 (an "
         "answer that does not fit does not rest the replica)")
    t.eq(len(up.requests()), 2, "both calls reached the upstream")
    t.ok(not resting(g, up.url), "no cool-down was written")


def test_one_failure(t, g, key, up):
    for turn in ("one 500", "one more 500 after a success"):
        up.reset()
        up.control(mode="error500", times=1)
        r, _ = evaluate(g, key, "lone")
        t.error_is(r, 503, "backend_unavailable", "%s: 503" % turn)
        t.ok(not resting(g, up.url), "%s: the replica does not rest" % turn)
        r, _ = evaluate(g, key, "lone")
        t.eq(r.status, 200, "%s, then the next call: 200" % turn)
        t.eq(len(up.requests()), 2, "%s: both calls reached the upstream"
             % turn)
    t.ok("(failure 1 of 2)" in g.log(), "the log counts the failure "
         "(failure 1 of 2)")


def test_two_failures(t, g, key, up):
    up.reset()
    up.control(mode="error500")
    first, _ = evaluate(g, key, "lone")
    second, _ = evaluate(g, key, "lone")
    t.eq((first.status, second.status), (503, 503), "two 500s in a row: "
         "503 twice")
    t.eq(len(up.requests()), 2, "both reached the upstream")
    t.ok(resting(g, up.url), "the second cools the replica")
    t.ok("(cooling down 30 s)" in g.log(), "the log says it "
         "(cooling down 30 s)")
    r, took = evaluate(g, key, "lone")
    if t.error_is(r, 503, "backend_unavailable", "the next call: 503"):
        t.ok("cooling down" in r.json()["error"]["message"],
             "the next call: refused as cooling down", r.json())
        ra = int(r.headers.get("retry-after", "0"))
        t.ok(1 <= ra <= 30, "the next call: Retry-After %d s, the time "
             "left of the cool-down" % ra, r.headers)
    t.ok(took < 1.0, "the next call: answered at once (%.2f s)" % took)
    t.eq(len(up.requests()), 2, "the next call reached no upstream")
    up.control(mode="ok")
    g.clear_cooldowns()


def main():
    t = TAP()
    good, bad, flaky = Upstream(), Upstream(), Upstream()
    port, held = never_accepting()
    g = Gateway(workers=1)
    try:
        key = g.new_key("client", "--rate-per-minute", "100000")
        a = g.admin
        qfile = os.path.join(g.dir, "q.json")
        with open(qfile, "w") as f:
            json.dump({"q": CHOICE}, f)
        a("backend", "add", "good", "--kind", "systemone", "--url", good.url)
        a("backend", "add", "bad", "--kind", "systemone", "--url", bad.url,
          "--timeout-ms", str(TIMEOUT_MS))
        a("backend", "add", "closed", "--kind", "systemone", "--url",
          "http://127.0.0.1:%d" % port, "--timeout-ms", str(TIMEOUT_MS))
        a("backend", "add", "lone", "--kind", "systemone", "--url",
          flaky.url, "--timeout-ms", str(TIMEOUT_MS))
        for schema in ("good", "bad", "closed", "lone"):
            a("schema", "publish", schema, "--questions", qfile,
              "--backend", schema)
            a("grant", "client", schema)
        g.start()
        r, _ = evaluate(g, key, "good")
        t.eq(r.status, 200, "a healthy upstream answers")
        pid = g.worker_pids()
        t.eq(len(pid), 1, "one worker")
        pid = pid[0]

        t.ok(connect_hangs(port), "the never-accepting socket really "
             "leaves a connect() hanging")
        check_fault(t, g, key, "never accepts", "closed", pid)
        for mode in ("hang", "trickle", "reset", "huge", "huge_chunked"):
            bad.reset()
            bad.control(mode=mode)
            check_fault(t, g, key, mode, "bad", pid)
            t.ok(len(bad.requests()) == 1, "%s: the upstream was asked "
                 "once" % mode)
        for name, obj in WRONG_SHAPES:
            bad.reset()
            bad.control(mode="raw", raw_body=json.dumps(obj))
            check_fault(t, g, key, "wrong shape, " + name, "bad", pid)
        for name, text in WRONG_TEXTS:
            bad.reset()
            bad.control(mode="raw", raw_body=text)
            check_fault(t, g, key, "wrong answer, " + name, "bad", pid)
        for name, text in ACCEPTED_TEXTS:
            bad.reset()
            bad.control(mode="raw", raw_body=text)
            g.clear_cooldowns()
            r, _ = evaluate(g, key, "bad")
            t.eq(r.status, 200, "usable answer, %s: 200" % name)
            if r.status == 200:
                r.body.decode("utf-8")      # raises unless valid UTF-8
                t.eq(sorted(r.json()["answers"]["q"]["probabilities"]),
                     ["x", "y"], "%s: our options only" % name)
        log = g.log()
        t.ok("answer too large" in log, "the size cap is what stopped the "
             "huge answers (logged)")
        t.run([test_unfit_once, test_one_failure, test_two_failures], g,
              key, flaky)
        t.stop_clean(g)
    finally:
        g.cleanup()
        good.stop()
        bad.stop()
        flaky.stop()
        for s in held:
            s.close()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
