"""test_syscalls: what a worker no longer does for every request
(doc/design.md, section 21), and what it still notices.

strace follows the one worker through six evaluations in a row: no
poll() of the connection it accepted (src/main.c accepts it, not
libfcgi, whose accept polls each one before reading it), and each
accepted.  The stat() of the cache and of the shared-memory file stays,
one each a request (doc/design.md, section 12): the cache deleted, the
very next evaluation is answered from a new cache file, which the
worker says in its log.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import setup_demo, strace_lines  # noqa: E402
from gateway import Gateway, TAP  # noqa: E402

EVAL = {"state": "the checkout is broken, refund now",
        "x_schema": {"id": "demo"}}
RUNS = 6
CALL = re.compile(r"^\d+\s+(\w+)\((.*)")


def traced(g, action):
    """Runs action() under strace of g's worker: (its result, the calls
    seen as (name, arguments))."""
    result, lines = strace_lines(
        g, ["poll", "ppoll", "accept", "accept4", "restart_syscall"],
        action)
    return result, [(m.group(1), m.group(2))
                    for m in map(CALL.match, lines) if m]


def main():
    t = TAP()
    g = Gateway(workers=1)
    try:
        key = setup_demo(g)
        g.start()
        t.eq(g.post("/v1/systemone", EVAL, key=key).status, 200,
             "warm-up evaluation")
        statuses, seen = traced(g, lambda: [
            g.post("/v1/systemone", EVAL, key=key).status
            for _ in range(RUNS)])
        t.eq(statuses, [200] * RUNS, "%d evaluations answered" % RUNS)
        # The worker may be waiting in accept4 when strace attaches:
        # that accept is then shown as a restart_syscall resuming it.
        accepts = [a for n, a in seen if (n.startswith("accept") or
                                          "interrupted accept" in a) and
                   re.search(r"\) = \d+", a)]
        t.eq(len(accepts), RUNS, "strace saw each accepted")
        polls = [a for n, a in seen if n in ("poll", "ppoll") and
                 not a.startswith("[{fd=0<")]
        t.eq(polls, [], "no poll() of an accepted connection")

        cache = os.path.join(g.dir, "cache.db")
        t.eq(g.post("/v1/systemone", EVAL, key=key).status, 200,
             "an evaluation")
        old = os.stat(cache).st_ino
        os.unlink(cache)
        r = g.post("/v1/systemone", EVAL, key=key)
        t.ok(r.status == 200 and os.path.exists(cache) and
             os.stat(cache).st_ino != old, "the cache deleted: the next "
             "evaluation answered, from a new cache file", r)
        t.ok("was deleted or replaced: reopened" in g.log(), "and the "
             "worker says so")
        t.stop_clean(g)
    finally:
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
