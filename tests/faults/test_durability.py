"""test_durability: with SERVICE_DB_SYNC=full an acknowledged decision or
outcome is on disk before its answer leaves the worker; with normal no
request waits for the disk.

Power loss cannot be staged here, so the test watches the order of the
worker's system calls: strace follows it while it answers an evaluation
and an outcome.

- full: after the last write a request makes to the database's WAL comes
  an fdatasync of that WAL, and only then the answer's write to the web
  server's socket.  (store_sqlite.c syncs after COMMIT, once the write lock is
  released, instead of inside it: this is what keeps that promise.)
- Both: the cache file (rate windows, quota running totals) is never
  synced: it may be lost.
- normal: no fdatasync at all while answering (checkpoints, which sync,
  come once per 1000 WAL frames, after an answer has gone).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import setup_demo, strace_worker  # noqa: E402
from gateway import Gateway, TAP  # noqa: E402

EVAL = {"state": "the checkout is broken, refund now",
        "x_schema": {"id": "demo"}}


def traced(g, key):
    """Evaluates and records an outcome under strace; returns the two
    statuses and the calls seen as (name, file) in order."""
    def action():
        r1 = g.post("/v1/systemone", EVAL, key=key)
        did = r1.json().get("x_decision_id", "none")
        r2 = g.post("/v1/decisions/%s/outcome" % did,
                    {"answers": {"refund": True}}, key=key)
        return r1.status, r2.status
    statuses, calls = strace_worker(
        g, ["pwrite64", "pwritev", "fdatasync", "fsync", "write"], action)
    return statuses, [(name, path) for name, _, path in calls]


def answers(calls):
    """The calls split at each write to a socket (an answer going out):
    [(calls before it, since the previous answer)]."""
    parts, cur = [], []
    for name, path in calls:
        if name == "write" and path.startswith("socket:"):
            if cur:
                parts.append(cur)
            cur = []
        else:
            cur.append((name, path))
    return parts


def check(t, g, key, sync):
    statuses, calls = traced(g, key)
    t.eq(statuses, (200, 200), "%s: evaluation and outcome answered" % sync)
    wal, cache_wal = g.db + "-wal", os.path.join(g.dir, "cache.db-wal")
    parts = answers(calls)
    writing = [p for p in parts if ("pwrite64", wal) in p]
    t.eq(len(writing), 2, "%s: both requests wrote the WAL before their "
         "answers" % sync)
    synced = [p for p in writing
              if ("fdatasync", wal) in p and
              max(i for i, c in enumerate(p) if c == ("pwrite64", wal)) <
              max(i for i, c in enumerate(p) if c == ("fdatasync", wal))]
    if sync == "full":
        t.eq(len(synced), 2, "full: each request's last WAL write is "
             "followed by an fdatasync of the WAL before its answer")
    else:
        t.eq([c for c in calls if c[0] in ("fdatasync", "fsync")], [],
             "normal: no fsync while answering")
    t.ok(("fdatasync", cache_wal) not in calls and
         ("fsync", cache_wal) not in calls,
         "%s: the cache file is never synced" % sync)


def main():
    t = TAP()
    for sync in ("full", "normal"):
        g = Gateway(workers=1, env={"SERVICE_DB_SYNC": sync})
        try:
            key = setup_demo(g)
            g.start()
            # The first call opens the files and checks the key.
            t.eq(g.post("/v1/systemone", EVAL, key=key).status, 200,
                 "%s: warm-up evaluation" % sync)
            check(t, g, key, sync)
            t.stop_clean(g, "%s: no sanitizer reports" % sync)
        finally:
            g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
