"""test_concurrency: the gateway's own concurrency as shipped, with only
the web server's pool size set (no SERVICE_WORKERS, no --max-in-flight):

- a burst of concurrent evaluations to one healthy backend, sent the
  moment the server is up (the first burst a new host sees, when the
  backend has answered nothing yet), is answered 200, every one: the
  in-flight limit does not refuse a healthy backend while workers are
  free.  Then again once the backend has a normal, and once more against
  an upstream that takes 300 ms (calls over the limit wait for the first
  answers rather than being refused);
- a pool larger than any setting (40 workers, where the shared memory
  used to hold slots for 2 x SERVICE_WORKERS + 16 = 24 processes) is
  counted whole: /metrics' evalgate_worker_processes says 40.

The hung-backend side of the same limit is tests/faults/test_bulkhead.py.
"""

import threading
import time

from gateway import Gateway, TAP, Upstream
from test_metrics import scrape, value

QUESTIONS = {"q": {"type": "choice", "criteria": {"x": None, "y": None}}}


def setup(g, up):
    g.admin("backend", "add", "model", "--kind", "systemone", "--url",
            up.url)
    g.publish("qs", QUESTIONS, "model")
    key = g.new_key("client", "--rate-per-minute", "1000000")
    g.admin("grant", "client", "qs")
    return key


def burst(g, key, n):
    """n evaluations sent at once; their statuses, sorted."""
    out = [None] * n
    gate = threading.Barrier(n)

    def fire(i):
        gate.wait()
        r = g.post("/v1/systemone", {"state": "x", "questions": QUESTIONS},
                   key=key, timeout=60)
        out[i] = (r.status, r.body[:200])

    threads = [threading.Thread(target=fire, args=(i,)) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    return sorted(out, key=lambda x: x[0] if x else -1)


def statuses(out):
    return {s: sum(1 for x in out if x and x[0] == s)
            for s in sorted({x[0] for x in out if x})}


def test_burst(t, g, key, up, n):
    out = burst(g, key, n)
    t.ok(statuses(out) == {200: n}, "a burst of %d to a healthy backend "
         "the moment the server is up (nothing answered yet): every one "
         "200" % n, (statuses(out), [x for x in out if x[0] != 200][:3]))
    out = burst(g, key, n)
    t.eq(statuses(out), {200: n}, "again, the backend answering at its "
         "normal: every one 200")
    up.control(mode="slow", delay_ms=300)
    out = burst(g, key, n)
    t.eq(statuses(out), {200: n}, "an upstream now taking 300 ms, more "
         "calls than workers: every one 200, none refused")


def test_cold_slow(t):
    """A 300 ms upstream that has answered nothing yet: calls over the
    limit wait for the first answers, then go in."""
    up = Upstream()
    g = Gateway(workers=8)
    try:
        key = setup(g, up)
        up.control(mode="slow", delay_ms=300)
        g.start()
        out = burst(g, key, 16)
        t.ok(statuses(out) == {200: 16}, "16 calls at once to a 300 ms "
             "upstream that has answered nothing yet, 8 workers: every "
             "one 200", (statuses(out), [x for x in out if x[0] != 200][:3]))
        t.stop_clean(g)
    finally:
        g.cleanup()
        up.stop()


def test_large_pool(t):
    g = Gateway(workers=40)
    try:
        g.admin("backend", "add", "lex", "--kind", "lexical")
        admin = g.new_key("ops", "--admin")
        g.start()
        # lighttpd starts them one after the other: wait for the last.
        deadline = time.time() + 60
        while True:
            n = value(scrape(g, admin), "evalgate_worker_processes")
            if n >= 40 or time.time() > deadline:
                break
            time.sleep(0.2)
        t.eq(n, 40, "a pool of 40 (no SERVICE_WORKERS): "
             "evalgate_worker_processes counts every worker")
        t.stop_clean(g)
    finally:
        g.cleanup()


def main():
    t = TAP()
    up = Upstream()
    g = Gateway(workers=8)
    try:
        key = setup(g, up)
        g.start()
        t.run([test_burst], g, key, up, 48)
        t.stop_clean(g)
    finally:
        g.cleanup()
        up.stop()
    test_cold_slow(t)
    test_large_pool(t)
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
