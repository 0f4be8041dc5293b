"""test_durability: with SERVICE_DB_SYNC=full an acknowledged decision or
outcome is on disk before its answer leaves the worker; with normal no
request waits for the disk.

Power loss cannot be staged here, so the test watches the order of the
worker's system calls: strace follows it while it answers an evaluation
and an outcome.

- full: after the last write a request makes to the database's WAL comes
  an fdatasync of that WAL, and only then the answer's write to the web
  server's socket.  (store.c syncs after COMMIT, once the write lock is
  released, instead of inside it: this is what keeps that promise.)
- Both: the cache file (rate windows, quota running totals) is never
  synced: it may be lost.
- normal: no fdatasync at all while answering (checkpoints, which sync,
  come once per 1000 WAL frames, after an answer has gone).
"""

import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import DEMO_QUESTIONS  # noqa: E402
from gateway import Gateway, TAP  # noqa: E402

EVAL = {"state": "the checkout is broken, refund now",
        "x_schema": {"id": "demo"}}
# strace -y: 1234 pwrite64(7</path/evalgate.db-wal>, ...) = 4096
CALL = re.compile(r"^\d+\s+(\w+)\(\d+<([^>]*)>")


def traced(g, key, sync):
    """Evaluates and records an outcome under strace; returns the two
    statuses and the calls seen as (name, file) in order."""
    pid = g.worker_pids()[0]
    out = os.path.join(g.dir, "strace-%s.txt" % sync)
    st = subprocess.Popen(["strace", "-f", "-y", "-o", out, "-e",
                           "trace=pwrite64,pwritev,fdatasync,fsync,write",
                           "-p", str(pid)], stderr=subprocess.PIPE)
    st.stderr.readline()            # "strace: Process N attached"
    r1 = g.post("/v1/systemone", EVAL, key=key)
    did = r1.json().get("x_decision_id", "none")
    r2 = g.post("/v1/decisions/%s/outcome" % did,
                {"answers": {"refund": True}}, key=key)
    time.sleep(0.2)
    st.send_signal(signal.SIGINT)
    st.wait(10)
    calls = []
    with open(out) as f:
        for line in f:
            m = CALL.match(line)
            if m:
                calls.append((m.group(1), m.group(2)))
    return (r1.status, r2.status), calls


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
    statuses, calls = traced(g, key, sync)
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
            g.admin("backend", "add", "lex", "--kind", "lexical")
            g.admin("schema", "publish", "demo", "--questions",
                    DEMO_QUESTIONS, "--backend", "lex")
            key = g.new_key("app")
            g.admin("grant", "app", "demo")
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
