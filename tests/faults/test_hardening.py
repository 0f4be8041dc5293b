"""test_hardening: what a review as an attacker and a chaos tester found
(README, "Faults"), each shown by a check that failed before its fix.

- Readiness tells the truth: /health/ready is a 503 naming the file when
  a decision could not be written now (the cache write-locked by
  another process: "cache"; the database write-locked: "database"), and
  a 200 again once the lock is gone.
- The cache deleted under load is noticed by every worker between
  requests: afterwards the workers share one new cache, so exactly
  `rate` calls are admitted in the next window (not `rate` per worker).
- Files: init leaves the database, its -wal/-shm, the cache and the
  pepper 0600, and the state directory it made 0700.
- Impossible dates (2026-02-31, 2026-02-29, 2026-04-31) are refused,
  not rolled over: a key's expiry (console exit 1; /admin/v1 422) and a
  listing's `since` (422).
- Control characters (C0, C1, U+2028, U+2029) are refused in names and
  descriptions at input, and what the console prints is escaped.
- A lone surrogate ("a\\ud800b") is refused with a 422, like other JSON
  that cannot be kept as sent.
- HEAD on every GET route is the GET without a body.
- `schema publish ID` without --questions is bad usage: exit 2.
- An upstream answering bytes that are not HTTP, or a 302, is a replica
  failure with a true reason, and its replica cools down like any other:
  after 2 of them in a row.
"""

import json
import os
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import setup_demo  # noqa: E402
from gateway import Gateway, TAP, free_port, wait_port  # noqa: E402

EVAL = {"state": "refund now", "x_schema": {"id": "demo"}}

# A fake upstream that is not HTTP, or answers 302: its own process.
ODD_UPSTREAM = r'''
import socket, sys
mode = sys.argv[1]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    try:
        c.settimeout(5)
        c.recv(65536)
        if mode == "ssh":
            c.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")
        else:
            c.sendall(b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/"
                      b"\r\nContent-Length: 0\r\n\r\n")
    except OSError:
        pass
    c.close()
'''


def odd_upstream(mode):
    p = subprocess.Popen([sys.executable, "-c", ODD_UPSTREAM, mode],
                         stdout=subprocess.PIPE, text=True)
    port = int(p.stdout.readline())
    wait_port(port)
    return p, "http://127.0.0.1:%d" % port


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_files(t, g):
    state = os.path.join(g.dir, "fresh", "state")
    env = {"SERVICE_DB_PATH": os.path.join(state, "evalgate.db")}
    files = ("evalgate.db", "cache.db", "pepper")
    if not t.sqlite_only(g, "init: the database file and its -wal, -shm "
                         "are 0600", "the database is no file here"):
        # The host's own files, beside the shared database.
        env = {"SERVICE_CACHE_PATH": os.path.join(state, "cache.db"),
               "SERVICE_PEPPER_FILE": os.path.join(state, "pepper")}
        files = ("cache.db", "pepper")
    p = g.admin("init", env=env, check=False)
    t.eq(p.returncode, 0, "init in a directory that does not exist yet")
    for name in files:
        t.eq(oct(mode_of(os.path.join(state, name))), oct(0o600),
             "init: %s is 0600" % name)
    for name in ("evalgate.db-wal", "evalgate.db-shm"):
        path = os.path.join(state, name)
        if os.path.exists(path):
            t.eq(oct(mode_of(path)), oct(0o600), "init: %s is 0600" % name)
    t.eq(oct(mode_of(state)), oct(0o700), "init: the directory it made "
         "is 0700")


def test_dates(t, g, admin_key):
    for bad in ("2026-02-31", "2026-02-29T00:00:00Z", "2026-04-31"):
        p = g.admin("key", "issue", "app", "--expires", bad, check=False)
        t.eq(p.returncode, 1, "key issue --expires %s: exit 1" % bad)
        r = g.admin_request("POST", "/admin/v1/applications/app/keys",
                            {"expires": bad}, key=admin_key)
        t.error_is(r, 422, "validation_error", "POST keys, expires %s: 422"
                   % bad)
        r = g.admin_request("GET", "/admin/v1/applications/app/decisions"
                            "?since=" + bad, key=admin_key)
        t.error_is(r, 422, "validation_error", "decisions since=%s: 422"
                   % bad)
    p = g.admin("key", "issue", "app", "--expires", "2028-02-29", check=False)
    t.eq(p.returncode, 0, "a real leap day is fine")


def test_control_characters(t, g, admin_key):
    for what, text in (("ESC", "a\x1b[2Jb"), ("C1", "a\u009bb"),
                       ("U+2028", "a\u2028b"), ("U+2029", "a\u2029b"),
                       ("BEL", "a\x07b")):
        r = g.admin_request("POST", "/admin/v1/backends", {
            "name": "b" + what.replace("+", ""), "kind": "lexical",
            "description": text}, key=admin_key)
        t.error_is(r, 422, "validation_error", "a description with %s: 422"
                   % what)
        p = g.admin("backend", "add", "c" + what.replace("+", ""), "--kind", "lexical",
                    "--description", text, check=False)
        t.eq(p.returncode, 1, "the console refuses a description with %s"
             % what)
    # A row written by hand is printed escaped.
    g.sql("UPDATE backends SET description = ? WHERE name = ?",
          ("evil\x1b]0;title\x07", "lex"))
    out = g.admin("backend", "list").stdout
    t.ok("\x1b" not in out and "\x07" not in out,
         "backend list escapes control characters from the database")


def test_lone_surrogate(t, g, key):
    for text in ('{"state": "a\\ud800b", "x_schema": {"id": "demo"}}',
                 '{"state": "a\\udc00", "x_schema": {"id": "demo"}}',
                 '{"state": {"k\\ud800": 1}, "x_schema": {"id": "demo"}}'):
        r = g.post("/v1/systemone", text.encode(), key=key,
                   headers={"Content-Type": "application/json"})
        t.error_is(r, 422, "validation_error", "a lone surrogate: 422 (%s)"
                   % text[:30])
    r = g.post("/v1/systemone", '{"state": "a\\ud83d\\ude00", "x_schema": '
               '{"id": "demo"}}'.encode(), key=key,
               headers={"Content-Type": "application/json"})
    t.eq(r.status, 200, "a surrogate pair is fine")


def test_head(t, g, key, admin_key):
    r = g.post("/v1/systemone", EVAL, key=key)
    did = r.json()["x_decision_id"]
    for path, k, admin in (("/health", None, False),
                           ("/health/ready", None, False),
                           ("/v1/models", key, False),
                           ("/v1/decisions/" + did, key, False),
                           ("/admin/v1/applications", admin_key, True)):
        send = g.admin_request if admin else g.request
        get = send("GET", path, key=k)
        head = send("HEAD", path, key=k)
        t.ok(head.status == get.status == 200 and head.body == b"" and
             head.headers.get("content-type") ==
             get.headers.get("content-type"),
             "HEAD %s: 200 like GET, no body" % path, head)
    t.eq(g.request("HEAD", "/v1/systemone", key=key).status, 405,
         "HEAD on a POST route: 405")


def test_usage(t, g):
    p = g.admin("schema", "publish", "x", "--backend", "lex", check=False)
    t.eq(p.returncode, 2, "schema publish without --questions: exit 2")
    decl = os.path.join(g.dir, "decl.json")
    with open(decl, "w") as f:
        f.write("{}")
    p = g.admin("template", "publish", "x", "--variables", decl,
                check=False)
    t.eq(p.returncode, 2, "template publish without --body: exit 2")


def test_odd_upstreams(t, g, key):
    for mode, reason in (("ssh", "not HTTP"), ("302", "HTTP 302")):
        proc, url = odd_upstream(mode)
        try:
            name = "odd" + mode
            g.admin("backend", "add", name, "--kind", "systemone", "--url",
                    url, "--timeout-ms", "3000")
            path = os.path.join(g.dir, name + ".json")
            with open(path, "w") as f:
                json.dump({mode: {"type": "noul"}}, f)
            g.admin("schema", "publish", name, "--questions", path,
                    "--backend", name)
            g.admin("grant", "app", name)
            body = {"state": "x", "x_schema": {"id": name}}
            for turn in ("", ", again"):
                r = g.post("/v1/systemone", body, key=key)
                t.error_is(r, 503, "backend_unavailable",
                           "an upstream answering %s%s: 503" % (mode, turn))
                t.ok(reason in r.json()["error"]["message"],
                     "the reason is true: '%s'" % reason, r.json())
            rows = g.sql("SELECT until_ms FROM cooldowns WHERE url = ?",
                         (url,), cache=True)
            t.ok(rows and rows[0][0] > time.time() * 1000,
                 "twice in a row: the replica cools down (%s)" % mode, rows)
        finally:
            proc.kill()
            proc.wait()


def test_ready(t, g):
    r = g.get("/health/ready")
    t.eq(r.status, 200, "ready while nothing holds a lock")
    files = [("cache", os.path.join(g.dir, "cache.db"))]
    if t.sqlite_only(g, "the database write-locked: 503 naming it",
                     "SQLite's write lock"):
        files.append(("database", g.db))
    for name, path in files:
        db = sqlite3.connect(path, timeout=5, isolation_level=None)
        db.execute("BEGIN IMMEDIATE")
        try:
            time.sleep(0.1)
            r = g.get("/health/ready")
            t.ok(r.status == 503 and r.json().get(name) is False,
                 "the %s write-locked: 503 naming it" % name, r)
        finally:
            db.execute("ROLLBACK")
            db.close()
        r = g.get("/health/ready")
        t.eq(r.status, 200, "%s released: ready again" % name)


def test_cache_deleted(t, g):
    """Two workers with the cache open; the cache deleted and one worker
    replaced (the new one makes a new cache file): afterwards both share
    the new file, so a window admits exactly `rate` calls, not `rate`
    per cache."""
    for _ in range(20):             # both workers have the cache open
        g.get("/health/ready")
        g.get("/v1/models", key=g.warm_key)
    os.unlink(os.path.join(g.dir, "cache.db"))
    victim = g.worker_pids()[0]
    os.kill(victim, signal.SIGKILL)
    deadline = time.time() + 10
    while time.time() < deadline and (victim in g.worker_pids() or
                                      len(g.worker_pids()) < 2):
        g.get("/health")
        time.sleep(0.05)
    g.admin("app", "create", "five", "--rate-per-minute", "5")
    k5 = g.admin("key", "issue", "five").stdout.strip()
    codes = []
    lock = threading.Lock()

    def call():
        for _ in range(4):
            r = g.get("/v1/models", key=k5)
            with lock:
                codes.append(r.status)

    threads = [threading.Thread(target=call) for _ in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(30)
    t.eq(codes.count(200), 5, "the cache deleted and a worker replaced: "
         "exactly 5 of %d calls admitted at 5/min (%s)" %
         (len(codes), ", ".join("%d: %d" % (c, codes.count(c))
                               for c in sorted(set(codes)))))
    t.ok(os.path.exists(os.path.join(g.dir, "cache.db")),
         "a new cache file is there")


def main():
    t = TAP()
    g = Gateway(workers=2)
    try:
        key = setup_demo(g)
        admin_key = g.new_key("root", "--admin", "--rate-per-minute",
                              "100000")
        g.warm_key = key
        t.run([test_files, test_usage], g)
        g.start()
        t.run([test_dates, test_control_characters], g, admin_key)
        t.run([test_lone_surrogate, test_odd_upstreams], g, key)
        t.run([test_head], g, key, admin_key)
        t.run([test_ready, test_cache_deleted], g)
        t.stop_clean(g)
    finally:
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
