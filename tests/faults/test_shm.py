"""test_shm: the host's shared-memory file (evalgate.shm) damaged while
four workers serve a steady load of evaluations, as a file-level
restore, an rsync of the state directory, a full disk or a stray write
would damage it:

- replaced by a copy of itself ten times, half a second apart (`cp`
  then `mv`): the copy names a group-commit leader that does not lead in
  it, and once stalled every evaluation for good;
- truncated to nothing (which killed every worker with SIGBUS), and to
  one page with its header whole (after which new workers never
  attached again);
- cut short again and again, a few ms apart, so that it is cut while
  the workers set up and take a slot in the file that replaces it (a
  SIGBUS there, outside the mapping in use, killed a worker now and
  then);
- its slot count, then its lock word, overwritten with garbage.

After each, the load goes on: no answer other than 200 but for a few
503s, none slower than a few seconds, no worker dies (the same pids
serve throughout), /health/ready says 200 and means it (an evaluation
right after it is answered 200).  The daily quota stays exact through
all of it: it is rebuilt from the database's counter in each new file.
"""

import os
import random
import shutil
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from gateway import Gateway, TAP  # noqa: E402

QUESTIONS = {"mood": {"type": "choice",
                      "criteria": {"happy": None, "sad": None}}}
COST = 1 + len(QUESTIONS)         # quota units per evaluation
LOCK_AT = 48                      # struct shm_file: the mutex's offset
NSLOTS_AT = 8                     # and the slot count's


def evaluate(g, key):
    return g.post("/v1/systemone", {"state": "a happy day",
                                    "questions": QUESTIONS}, key=key,
                  timeout=60)


class Load:
    """Evaluations one after the other on two connections' worth of
    threads until stopped: (status, seconds) each."""

    def __init__(self, g, key):
        self.g, self.key = g, key
        self.out, self.lock = [], threading.Lock()
        self.stopping = False
        self.odd = None
        self.threads = [threading.Thread(target=self.run) for _ in range(3)]
        for th in self.threads:
            th.start()

    def run(self):
        while not self.stopping:
            t0 = time.time()
            try:
                r = evaluate(self.g, self.key)
                status = r.status
                if status not in (200, 503) and not self.odd:
                    self.odd = r.body[:300]
            except OSError:
                status = 0
            with self.lock:
                self.out.append((status, time.time() - t0))

    def stop(self):
        self.stopping = True
        for th in self.threads:
            th.join(120)
        return self.out


def shm_path(g):
    return os.path.join(g.dir, "evalgate.shm")


def replace_with_copy(g):
    copy = shm_path(g) + ".copy"
    shutil.copyfile(shm_path(g), copy)
    os.replace(copy, shm_path(g))


def truncate(size):
    return lambda g: os.truncate(shm_path(g), size)


def truncate_often(g):
    """200 cuts, to nothing or one page, 1 to 30 ms apart."""
    for _ in range(200):
        try:
            os.truncate(shm_path(g), random.choice([0, 4096]))
        except OSError:           # between a discard and its new file
            pass
        time.sleep(random.uniform(0.001, 0.03))


def overwrite(at, data):
    def damage(g):
        with open(shm_path(g), "r+b") as f:
            f.seek(at)
            f.write(data)
    return damage


DAMAGES = [
    ("replaced by a copy of itself, 10 times", lambda g: [
        (replace_with_copy(g), time.sleep(0.5)) for _ in range(10)]),
    ("truncated to nothing", truncate(0)),
    ("truncated to one page, its header whole", truncate(4096)),
    ("cut short 200 times, 1 to 30 ms apart", truncate_often),
    ("its slot count overwritten", overwrite(NSLOTS_AT,
                                             (1 << 40).to_bytes(8, "little"))),
    ("its lock word overwritten", overwrite(LOCK_AT, b"\x5a" * 40)),
]


def test_damage(t, g, key):
    pids = sorted(g.worker_pids())
    load = Load(g, key)
    time.sleep(1)
    for name, damage in DAMAGES:
        damage(g)
        time.sleep(1.5)
        ready = g.get("/health/ready")
        r = evaluate(g, key)
        t.ok(ready.status == 200 and r.status == 200, "%s, under load: "
             "/health/ready %d, and an evaluation right after %d"
             % (name, ready.status, r.status), r)
    out = load.stop()
    statuses = {}
    for status, _ in out:
        statuses[status] = statuses.get(status, 0) + 1
    slowest = max(s for _, s in out)
    print("# %d evaluations under load: %r, slowest %.2f s"
          % (len(out), statuses, slowest))
    if load.odd:
        print("# an answer other than 200 or 503: %r" % load.odd)
        for line in g.log().splitlines():
            if "warn" in line or "error" in line:
                print("# log: " + line[:300])
    t.ok(set(statuses) <= {200, 503} and statuses.get(503, 0) <=
         0.02 * len(out) and statuses.get(200, 0) > 100,
         "the load: 200 but for a few 503s (%r)" % statuses)
    t.ok(slowest < 10, "no evaluation waited anywhere near the 30 s a "
         "stalled group commit waits (slowest %.2f s)" % slowest)
    t.eq(sorted(g.worker_pids()), pids, "no worker died: the same four "
         "served throughout")
    t.ok(os.path.getsize(shm_path(g)) > 4096, "the file in place is a "
         "whole one, made anew")


def test_quota(t, g, quota_key):
    """A daily quota of 20 evaluations: 10 before the file is cut short,
    exactly 10 after."""
    first = [evaluate(g, quota_key).status for _ in range(10)]
    os.truncate(shm_path(g), 4096)
    then = [evaluate(g, quota_key).status for _ in range(15)]
    t.eq(first, [200] * 10, "quota: 10 evaluations before")
    t.eq(sorted(then), [200] * 10 + [429] * 5, "after the file was cut "
         "short, the quota rebuilt from the database: exactly 10 more "
         "of 15")


def main():
    t = TAP()
    g = Gateway(workers=4)
    try:
        g.admin("backend", "add", "lexical", "--kind", "lexical")
        g.publish("mood", QUESTIONS, "lexical")
        key = g.new_key("load", "--rate-per-minute", "1000000",
                        "--daily-quota", "100000000")
        quota_key = g.new_key("quota", "--rate-per-minute", "1000000",
                              "--daily-quota", str(20 * COST))
        g.admin("grant", "load", "mood")
        g.admin("grant", "quota", "mood")
        g.start()
        t.run([test_damage], g, key)
        t.run([test_quota], g, quota_key)
        t.stop_clean(g)
    finally:
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
