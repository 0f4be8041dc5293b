"""test_backup: evalgate-admin backup while the gateway serves, and
restore into a fresh install that then serves what was backed up.

- Under load: clients evaluate while `backup` runs; none of them fails,
  the backup and its pepper are 0600, and the console says what it
  wrote.  Restored into a fresh directory: integrity_check ok, every
  decision acknowledged before the backup started is there, and a
  gateway started on it authenticates the old key (with the pepper the
  backup carried) and finds those decisions.
- Refused, exit 1 with one line on stderr, nothing changed: a backup
  into a missing directory, over an existing file without --force; a
  restore over a database a running gateway has open (the same file,
  the same rows), of a truncated or scribbled backup, and over an
  install whose pepper differs (until --replace-pepper).
"""

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import setup_demo  # noqa: E402
from gateway import ADMIN, Gateway, TAP  # noqa: E402

EVAL = {"state": "the checkout is broken, refund now",
        "x_schema": {"id": "demo"}}
CLIENTS = 3


def console(db, *args, env_more=None):
    """evalgate-admin on the install whose database is db."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SERVICE_")}
    env["SERVICE_DB_PATH"] = db
    env.update(env_more or {})
    return subprocess.run([ADMIN] + list(args), env=env,
                          capture_output=True, text=True, timeout=120)


def refused(t, p, what, words):
    """p exited 1 with one line on stderr naming words."""
    lines = p.stderr.strip().splitlines()
    t.ok(p.returncode == 1 and len(lines) == 1 and
         all(w in p.stderr for w in words),
         "%s: exit 1, one line saying %s" % (what, " / ".join(words)),
         "exit %d, stderr %r" % (p.returncode, p.stderr))


def digest(path):
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def ids(db):
    import sqlite3
    c = sqlite3.connect(db)
    try:
        return {r[0] for r in c.execute("SELECT id FROM decisions")}
    finally:
        c.close()


def counts(g):
    return [g.sql("SELECT count(*) FROM " + table)[0][0]
            for table in ("decisions", "applications", "api_keys")]


def loaded_backup(t, g, key, path):
    """Runs backup while CLIENTS threads evaluate; returns the ids
    acknowledged before it started."""
    stop = threading.Event()
    acked, bad = [], []

    def client():
        while not stop.is_set():
            r = g.post("/v1/systemone", EVAL, key=key)
            if r.status == 200:
                acked.append((time.monotonic(), r.json()["x_decision_id"]))
            else:
                bad.append(r)

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for th in threads:
        th.start()
    time.sleep(1.5)
    started = time.monotonic()
    p = g.admin("backup", path, check=False)
    after = len(acked)
    time.sleep(0.5)
    stop.set()
    for th in threads:
        th.join()
    before = {i for at, i in acked if at < started}
    t.ok(p.returncode == 0 and path in p.stdout and "pepper" in p.stdout,
         "backup under load: exit 0, says what it wrote", p)
    t.ok(len(before) > 0 and len(acked) > after,
         "clients were evaluating before and after the backup (%d before, "
         "%d in all)" % (len(before), len(acked)))
    t.eq(bad, [], "no evaluation failed while the backup ran")
    for f in (path, path + ".pepper"):
        t.eq(stat.S_IMODE(os.stat(f).st_mode) if os.path.exists(f) else None,
             0o600, "%s is 0600" % os.path.basename(f))
    return before


def restore_modes(t, path):
    """A restored database has the mode init gives one: 0600, or 0660
    with SERVICE_GROUP_WRITABLE=1 (doc/design.md, section 19.3)."""
    for group, want in (("0", 0o600), ("1", 0o660)):
        fresh = tempfile.mkdtemp(prefix="evalgate-restore-")
        db = os.path.join(fresh, "var", "evalgate.db")
        try:
            p = console(db, "restore", path,
                        env_more={"SERVICE_GROUP_WRITABLE": group})
            mode = os.stat(db).st_mode & 0o777 if p.returncode == 0 \
                else None
            t.eq(mode, want, "restore with SERVICE_GROUP_WRITABLE=%s: "
                 "the database is %04o" % (group, want))
        finally:
            shutil.rmtree(fresh, ignore_errors=True)


def restored(t, path, before, key):
    """Restores path into a fresh directory and serves it."""
    fresh = tempfile.mkdtemp(prefix="evalgate-restore-")
    db = os.path.join(fresh, "var", "evalgate.db")
    try:
        p = console(db, "restore", path)
        t.ok(p.returncode == 0 and "restart" in p.stdout and
             "pepper" in p.stdout,
             "restore into a fresh directory: exit 0, says to restart the "
             "web server", p)
        t.eq(console(db, "init").returncode, 0, "init on it: nothing to do")
        import sqlite3
        c = sqlite3.connect(db)
        t.eq(c.execute("PRAGMA integrity_check").fetchall(), [("ok",)],
             "restored database: integrity_check ok")
        c.close()
        missing = before - ids(db)
        t.eq(len(missing), 0, "every decision acknowledged before the "
             "backup started is in the restore (%d)" % len(before))
        g2 = Gateway(workers=1, env={"SERVICE_DB_PATH": db})
        try:
            g2.start()
            r = g2.post("/v1/systemone", EVAL, key=key)
            t.eq(r.status, 200, "a gateway on the restore authenticates "
                 "the old key (the backup's pepper)")
            some = sorted(before)[0]
            t.eq(g2.get("/v1/decisions/" + some, key=key).status, 200,
                 "and finds a decision made before the backup")
            t.stop_clean(g2, "restored gateway: no sanitizer reports")
        finally:
            g2.cleanup()
    finally:
        shutil.rmtree(fresh, ignore_errors=True)


def bad_backups(t, g, good):
    """Backups refused."""
    p = g.admin("backup", os.path.join(g.dir, "nowhere", "b.db"),
                check=False)
    refused(t, p, "backup into a missing directory", ["no such directory"])
    t.ok(not os.path.exists(os.path.join(g.dir, "nowhere")),
         "and nothing was made")
    before = digest(good), digest(good + ".pepper")
    p = g.admin("backup", good, check=False)
    refused(t, p, "backup over an existing file", ["exists", "--force"])
    t.eq((digest(good), digest(good + ".pepper")), before,
         "the existing backup and pepper are as they were")
    leftovers = [f for f in os.listdir(os.path.dirname(good))
                 if f.startswith(os.path.basename(good) + ".") and
                 f != os.path.basename(good) + ".pepper"]
    t.eq(leftovers, [], "no partial file left beside it")


def bad_restores(t, g, good):
    """Restores refused, each leaving the target as it was."""
    rows, ino = counts(g), os.stat(g.db).st_ino
    p = g.admin("restore", good, check=False)
    refused(t, p, "restore over a live database", ["in use",
            "stop the web server"])
    t.eq((counts(g), os.stat(g.db).st_ino), (rows, ino),
         "the live database is the same file with the same rows")
    t.eq(g.get("/health/ready").status, 200, "and the gateway still serves")

    other = tempfile.mkdtemp(prefix="evalgate-target-")
    db = os.path.join(other, "evalgate.db")
    try:
        console(db, "init")
        files = [db, os.path.join(other, "pepper"),
                 os.path.join(other, "cache.db")]
        state = [digest(f) for f in files]

        truncated = os.path.join(other, "truncated.db")
        with open(good, "rb") as f:
            data = f.read()
        with open(truncated, "wb") as f:
            f.write(data[:len(data) // 2])
        scribbled = os.path.join(other, "scribbled.db")
        with open(scribbled, "wb") as f:
            f.write(data[:4096 + 100] + b"\xff" * 3000 + data[4096 + 3100:])
        garbage = os.path.join(other, "garbage.db")
        with open(garbage, "wb") as f:
            f.write(b"not a database at all\n" * 300)
        for name, path in (("truncated", truncated),
                           ("scribbled", scribbled),
                           ("garbage", garbage)):
            shutil.copy(good + ".pepper", path + ".pepper")
            p = console(db, "restore", path)
            refused(t, p, "restore of a %s backup" % name,
                    [os.path.basename(path)])
            t.eq([digest(f) for f in files], state,
                 "%s: database, pepper and cache unchanged" % name)

        p = console(db, "restore", good)
        refused(t, p, "restore over an install with another pepper",
                ["differs", "--replace-pepper"])
        t.eq([digest(f) for f in files], state,
             "other pepper: database, pepper and cache unchanged")
        p = console(db, "restore", good, "--replace-pepper")
        t.ok(p.returncode == 0 and "restored from the backup" in p.stdout,
             "with --replace-pepper it is restored", p)
        t.eq(digest(os.path.join(other, "pepper")), digest(good + ".pepper"),
             "and the pepper is the backup's")
        t.ok(not os.path.exists(os.path.join(other, "cache.db")),
             "the stale cache is removed")
    finally:
        shutil.rmtree(other, ignore_errors=True)


def main():
    t = TAP()
    g = Gateway(workers=2)
    try:
        key = setup_demo(g)
        g.start()
        good = os.path.join(g.dir, "backups", "evalgate.backup")
        os.mkdir(os.path.dirname(good))
        before = loaded_backup(t, g, key, good)
        restored(t, good, before, key)
        restore_modes(t, good)
        bad_backups(t, g, good)
        bad_restores(t, g, good)
        t.stop_clean(g)
    finally:
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
