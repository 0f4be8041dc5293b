"""test_database: the database under pressure gives clear 503s, never a
hang, and the gateway recovers by itself.

- Locked: another process holds BEGIN EXCLUSIVE for longer than the
  busy timeout (5 s) while clients evaluate (two at once, whose
  decisions would be written in one group commit) and record outcomes:
  each gets a 503 service_unavailable with Retry-After and
  retry-after-ms after about 5 s (never a hang, nor one busy timeout
  after another), the error log says "database is
  locked", and once the lock is released the next call is a 200; the
  evaluations answered 503 were given back their units (no 503 is
  charged).
- Full disk: the database lives on a small tmpfs mounted for the test
  (mount -t tmpfs -o size=...; the test runs as root), which is then
  filled to the last byte: evaluations and outcomes get a 503 and the log
  says "database or disk is full"; no worker dies; freeing the space is
  enough for the next evaluation to be a 200, and the database passes
  PRAGMA integrity_check.
- Read-only: the same tmpfs remounted read-only (chmod does not stop
  root; a remount does) before the gateway starts: the workers start,
  log that the database is read-only, answer every call that writes with
  a 503 service_unavailable naming the cause, and /health/ready is a 503
  with "database": false.
- A deleted cache, with two workers starting on it together, ten
  times: every evaluation after each restart is answered.
- The WAL under steady load from 8 clients (3000 evaluations): it
  starts over again and again, its index (-shm) never grows past one
  chunk.
- The WAL while a long reader is open: another connection holds a read
  transaction (a snapshot) while clients write; SQLite must keep every
  frame written since, so the WAL grows, and writers are not blocked.
  Once the reader ends, the workers' own automatic checkpoint and the
  journal_size_limit store_sqlite.c sets bring the WAL file back under
  STORE_WAL_LIMIT without operator action.

Without root (no mount), the tmpfs parts are skipped with a note.
"""

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import setup_demo  # noqa: E402
from gateway import Gateway, TAP  # noqa: E402

BUSY_S = 5.0                    # STORE_BUSY_TIMEOUT_MS
MARGIN_S = 3.0
WAL_LIMIT = 4 << 20             # STORE_WAL_LIMIT in src/store_sqlite.h
SHM_CHUNK = 32768               # the WAL index grows by this per 4096 frames
STEADY_EVALUATIONS = 3000       # about 6 WAL frames each
CACHE_ROUNDS = 10
EVAL = {"state": "the checkout is broken, refund now",
        "x_schema": {"id": "demo"}}


def evaluate(g, key):
    start = time.time()
    r = g.post("/v1/systemone", EVAL, key=key, timeout=60)
    return r, time.time() - start


def unavailable(t, r, took, name, cause):
    if t.error_is(r, 503, "service_unavailable", "%s: 503" % name):
        t.ok(int(r.headers.get("retry-after", "0")) >= 1 and
             int(r.headers.get("retry-after-ms", "0")) >= 1,
             "%s: Retry-After and retry-after-ms" % name, r.headers)
        t.ok(cause in r.json()["error"]["message"],
             "%s: the message names the cause (%s)" % (name, cause),
             r.json()["error"]["message"])
    return took


def test_locked(t):
    g = Gateway(workers=3)
    try:
        key = setup_demo(g)
        g.start()
        r, _ = evaluate(g, key)
        t.eq(r.status, 200, "locked: an evaluation before the lock")
        did = r.json()["x_decision_id"]
        held = threading.Event()
        release = threading.Event()

        def locker():
            db = sqlite3.connect(g.db, timeout=10, isolation_level=None)
            db.execute("BEGIN EXCLUSIVE")
            held.set()
            release.wait(60)
            db.execute("ROLLBACK")
            db.close()

        th = threading.Thread(target=locker)
        th.start()
        held.wait(10)
        results = []

        def call(what):
            start = time.time()
            if what.startswith("evaluate"):
                r = g.post("/v1/systemone", EVAL, key=key, timeout=60)
            else:
                r = g.post("/v1/decisions/%s/outcome" % did,
                           {"answers": {"refund": True}}, key=key,
                           timeout=60)
            results.append((what, r, time.time() - start))

        calls = [threading.Thread(target=call, args=(w,))
                 for w in ("evaluate", "evaluate again", "outcome")]
        for c in calls:
            c.start()
        for c in calls:
            c.join(60)
        t.ok(g.get("/health", timeout=10).status == 200,
             "locked: /health still answers")
        release.set()
        th.join(30)
        for what, r, took in results:
            unavailable(t, r, took, "locked, %s" % what, "locked")
            t.ok(BUSY_S - 0.5 <= took < BUSY_S + MARGIN_S,
                 "locked, %s: after the busy timeout, no hang (%.2f s)" %
                 (what, took))
        t.ok("database is locked" in g.log(), "locked: the log says so")
        r, took = evaluate(g, key)
        t.eq(r.status, 200, "locked: released, the next call is a 200")
        t.ok(took < 2, "locked: promptly (%.2f s)" % took)
        day = re.search(r'"day";r=([0-9]+)', r.headers.get("ratelimit", ""))
        t.eq((int(day.group(1)) if day else None,
              g.sql("SELECT sum(used) FROM quota_days")),
             (100000 - 8, [(8,)]), "locked: the two evaluations answered"
             " 503 cost no units: 8 used, the two decisions' 4 each")
        t.stop_clean(g, "locked: no sanitizer reports")
    finally:
        g.cleanup()


def mount_tmpfs(size):
    """A fresh directory with a tmpfs of `size` on it, or None."""
    d = tempfile.mkdtemp(prefix="evalgate-tmpfs-")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size,
                        "tmpfs", d], capture_output=True, text=True)
    if p.returncode != 0:
        os.rmdir(d)
        print("# cannot mount a tmpfs (%s): skipped" % p.stderr.strip())
        return None
    return d


def umount(d):
    subprocess.run(["umount", "-l", d], capture_output=True)
    shutil.rmtree(d, ignore_errors=True)


def fill(path):
    """Writes path until the filesystem is full."""
    with open(path, "wb", buffering=0) as f:
        for block in (b"\0" * 65536, b"\0" * 512, b"\0"):
            try:
                while True:
                    f.write(block)
            except OSError:
                pass


def integrity(path):
    db = sqlite3.connect(path, timeout=30)
    try:
        return db.execute("PRAGMA integrity_check").fetchall()
    finally:
        db.close()


def test_full(t):
    d = mount_tmpfs("16m")
    if d is None:
        t.ok(True, "# SKIP full disk: no tmpfs")
        return
    g = None
    try:
        g = Gateway(workers=2, env={
            "SERVICE_DB_PATH": os.path.join(d, "evalgate.db")})
        key = setup_demo(g)
        g.start()
        pids = sorted(g.worker_pids())
        r, _ = evaluate(g, key)
        t.eq(r.status, 200, "full: an evaluation while there is room")
        did = r.json()["x_decision_id"]
        fill(os.path.join(d, "filler"))
        st = os.statvfs(d)
        print("# full: %d bytes free on the tmpfs" %
              (st.f_bavail * st.f_frsize))
        codes = []
        for i in range(30):
            r, took = evaluate(g, key)
            codes.append(r.status)
            if r.status != 200:
                break
        print("# full: statuses until the first refusal: %r" % codes)
        unavailable(t, r, took, "full, evaluate", "full")
        t.ok(took < MARGIN_S, "full: at once (%.2f s)" % took)
        r = g.post("/v1/decisions/%s/outcome" % did,
                   {"answers": {"refund": True}}, key=key)
        t.ok(r.status in (200, 503), "full: an outcome is a 200 (if a page "
             "was free) or a 503, never another 5xx", r)
        t.ok("database or disk is full" in g.log(), "full: the log says "
             "\"database or disk is full\"")
        r = g.get("/health/ready")
        t.ok(r.status == 503 and False in (r.json().get("database"),
                                           r.json().get("cache")),
             "full: /health/ready is a 503 naming the file whose write met "
             "the full disk in the last second (both are on it)", r)
        for i in range(40):
            evaluate(g, key)
        said = g.log().count("database or disk is full")
        t.ok(0 < said <= 8, "full: 40 more refusals add no line per "
             "request: a repeated warning is written once, then counted "
             "(%d lines)" % said)
        t.eq(sorted(g.worker_pids()), pids, "full: no worker died")
        os.unlink(os.path.join(d, "filler"))
        r, _ = evaluate(g, key)
        t.eq(r.status, 200, "full: space freed, the next evaluation is a "
             "200 without operator action")
        g.stop()
        t.eq(integrity(g.db), [("ok",)], "full: integrity_check ok")
        t.eq(g.sanitizer_reports(), [], "full: no sanitizer reports")
    finally:
        if g is not None:
            g.cleanup()
        umount(d)


def test_readonly(t):
    d = mount_tmpfs("8m")
    if d is None:
        t.ok(True, "# SKIP read-only: no tmpfs")
        return
    g = None
    try:
        g = Gateway(workers=2, env={
            "SERVICE_DB_PATH": os.path.join(d, "evalgate.db")})
        key = setup_demo(g)
        g.start()
        r, _ = evaluate(g, key)
        t.eq(r.status, 200, "read-only: an evaluation while writable")
        did = r.json()["x_decision_id"]
        g.stop()
        # Two workers closing at once may each see the other still there
        # and leave the -wal and -shm (the second case below): one more
        # connection, alone, closes the database cleanly first.
        g.admin("app", "list")
        t.ok(not os.path.exists(g.db + "-shm"), "read-only: the database "
             "was closed cleanly (no -shm)")
        p = subprocess.run(["mount", "-o", "remount,ro", d],
                           capture_output=True, text=True)
        t.eq(p.returncode, 0, "read-only: the tmpfs is remounted read-only",
             )
        g.start()
        r, took = evaluate(g, key)
        unavailable(t, r, took, "read-only, evaluate", "read-only")
        r = g.post("/v1/decisions/%s/outcome" % did,
                   {"answers": {"refund": True}}, key=key)
        unavailable(t, r, 0, "read-only, outcome", "read-only")
        r = g.get("/health/ready")
        t.eq((r.status, r.json().get("database")), (503, False),
             "read-only: /health/ready is a 503 with database false")
        t.eq(g.get("/health").status, 200, "read-only: /health answers")
        log = g.log()
        t.ok("file system is read-only" in log, "read-only: the log says "
             "the database's file system is read-only")
        t.ok(log.count("database: unavailable") <= 2 * 2,
             "read-only: once per worker, not once per request (%d)" %
             log.count("database: unavailable"))
        p = subprocess.run(["mount", "-o", "remount,rw", d],
                           capture_output=True, text=True)
        time.sleep(1.1)         # STORE_RETRY_MS
        codes = [evaluate(g, key)[0].status for _ in range(4)]
        t.eq(codes, [200] * 4, "read-only: writable again, the workers "
             "reconnect by themselves")
        t.eq(g.get("/health/ready").status, 200, "read-only: and are ready")
        # Killed, the workers leave the -wal and -shm behind: SQLite then
        # opens the database read-only, and each write is refused.
        kill_all(g)
        for _ in range(100):    # until their files are closed
            p = subprocess.run(["mount", "-o", "remount,ro", d],
                               capture_output=True, text=True)
            if p.returncode == 0:
                break
            time.sleep(0.1)
        t.ok(p.returncode == 0 and
             os.path.exists(g.db + "-shm"), "read-only with a -shm: "
             "remounted", p.stderr)
        g.start()
        r, took = evaluate(g, key)
        unavailable(t, r, took, "read-only with a -shm, evaluate",
                    "readonly")
        t.eq(g.get("/health/ready").status, 503,
             "read-only with a -shm: /health/ready is a 503")
        t.ok("is read-only: every write will be refused" in g.log(),
             "read-only with a -shm: the log says the database is "
             "read-only")
        subprocess.run(["mount", "-o", "remount,rw", d],
                       capture_output=True)
        time.sleep(1.1)
        codes = [evaluate(g, key)[0].status for _ in range(4)]
        t.eq(codes, [200] * 4, "read-only with a -shm: writable again, "
             "the workers reopen the database by themselves")
        t.stop_clean(g, "read-only: no sanitizer reports")
    finally:
        if g is not None:
            g.cleanup()
        umount(d)


def workers_of(g):
    """Every worker process using g's database, lighttpd's child or not."""
    pids = []
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                env = f.read().split(b"\0")
        except (OSError, ValueError):
            continue
        if ("SERVICE_DB_PATH=" + g.db).encode() in env:
            pids.append(int(d))
    return pids


def kill_all(g):
    """SIGKILL to lighttpd first (so that it respawns nothing), then to
    every worker of g; returns once they are gone."""
    g.proc.kill()
    g.proc.wait()
    g.proc = None
    for _ in range(100):
        pids = workers_of(g)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)


def wal_size(g):
    try:
        return os.path.getsize(g.db + "-wal")
    except OSError:
        return 0


def shm_size(g):
    try:
        return os.path.getsize(g.db + "-shm")
    except OSError:
        return 0


def test_wal(t):
    g = Gateway(workers=4)
    try:
        key = setup_demo(g)
        g.start()
        evaluate(g, key)
        reader = sqlite3.connect(g.db, timeout=10, isolation_level=None)
        reader.execute("BEGIN")
        before = reader.execute("SELECT count(*) FROM decisions"
                                ).fetchone()[0]
        stop = threading.Event()
        counts = {}
        lock = threading.Lock()

        def writer():
            while not stop.is_set():
                r = g.post("/v1/systemone", EVAL, key=key, timeout=60)
                with lock:
                    counts[r.status] = counts.get(r.status, 0) + 1

        writers = [threading.Thread(target=writer) for _ in range(6)]
        for w in writers:
            w.start()
        deadline = time.time() + 60
        while wal_size(g) < 2 * WAL_LIMIT and time.time() < deadline:
            time.sleep(0.2)
        stop.set()
        for w in writers:
            w.join(60)
        grown = wal_size(g)
        still = reader.execute("SELECT count(*) FROM decisions"
                               ).fetchone()[0]
        print("# wal: %d evaluations %r while the reader held its snapshot;"
              " WAL %d bytes" % (sum(counts.values()), counts, grown))
        t.eq(list(counts), [200], "wal: writers are not blocked by the "
             "reader")
        t.eq(still, before, "wal: the reader's snapshot is stable")
        t.ok(grown >= 2 * WAL_LIMIT, "wal: the WAL grew past %d bytes "
             "while the reader was open (%d)" % (2 * WAL_LIMIT, grown))
        reader.execute("COMMIT")
        reader.close()
        sizes = []
        for i in range(300):
            r, _ = evaluate(g, key)
            sizes.append(wal_size(g))
            if sizes[-1] <= WAL_LIMIT:
                break
        print("# wal: %d evaluations after the reader ended; WAL %d -> %d "
              "bytes" % (len(sizes), grown, sizes[-1]))
        t.ok(sizes[-1] <= WAL_LIMIT, "wal: back under %d bytes once the "
             "reader ended, by the workers' own checkpoints (%d bytes)" %
             (WAL_LIMIT, sizes[-1]))
        for i in range(200):
            evaluate(g, key)
        t.ok(wal_size(g) <= WAL_LIMIT, "wal: and it stays there (%d)" %
             wal_size(g))
        g.stop()
        t.eq(integrity(g.db), [("ok",)], "wal: integrity_check ok")
        t.eq(g.sanitizer_reports(), [], "wal: no sanitizer reports")
    finally:
        g.cleanup()


def test_wal_steady(t):
    """Under steady load from many clients there is nearly always a
    reader somewhere: the WAL must still start over, not grow for as
    long as the load lasts (its index, the -shm file, is mapped by every
    worker and would grow with it)."""
    g = Gateway(workers=2)
    try:
        key = setup_demo(g)
        g.start()
        evaluate(g, key)
        counts, lock, biggest = {}, threading.Lock(), [0, 0]

        def writer():
            while sum(counts.values()) < STEADY_EVALUATIONS:
                r = g.post("/v1/systemone", EVAL, key=key, timeout=60)
                with lock:
                    counts[r.status] = counts.get(r.status, 0) + 1
                    biggest[0] = max(biggest[0], wal_size(g))
                    biggest[1] = max(biggest[1], shm_size(g))

        writers = [threading.Thread(target=writer) for _ in range(8)]
        for w in writers:
            w.start()
        for w in writers:
            w.join(120)
        print("# steady: %r; largest WAL %d bytes, -shm %d bytes" %
              (counts, biggest[0], biggest[1]))
        t.eq(list(counts), [200], "steady: every evaluation answered")
        t.ok(biggest[0] <= 2 * WAL_LIMIT, "steady: the WAL stayed under "
             "%d bytes (%d)" % (2 * WAL_LIMIT, biggest[0]))
        t.eq(biggest[1], SHM_CHUNK, "steady: its index stayed at one "
             "chunk (%d bytes, for 4096 frames)" % SHM_CHUNK)
        t.stop_clean(g, "steady: no sanitizer reports")
    finally:
        g.cleanup()


def test_cache_deleted(t):
    """Workers that start together on a deleted cache all set it up: a
    new file turned to WAL needs it to themselves, and SQLite answers
    busy at once rather than wait."""
    g = Gateway(workers=2)
    try:
        key = setup_demo(g)
        g.start()
        statuses = set()
        for _ in range(CACHE_ROUNDS):
            g.stop()
            for name in os.listdir(g.dir):
                if name.startswith("cache.db"):
                    os.unlink(os.path.join(g.dir, name))
            g.start()
            for _ in range(4):
                statuses.add(evaluate(g, key)[0].status)
        t.eq(statuses, {200}, "cache deleted %d times: every evaluation "
             "after each restart answered" % CACHE_ROUNDS)
        t.stop_clean(g, "cache deleted: no sanitizer reports")
    finally:
        g.cleanup()


def main():
    t = TAP()
    t.run([test_locked, test_full, test_readonly, test_wal,
           test_wal_steady, test_cache_deleted])
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
