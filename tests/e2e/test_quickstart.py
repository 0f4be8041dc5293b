"""test_quickstart: quickstart.sh as a user runs it, in a temporary copy
of the tree (the files git tracks), on ports of its own
(EVALGATE_PORT, EVALGATE_ADMIN_PORT).  It skips tools/deps.sh only
through its documented --no-deps option; what tools/deps.sh does when
every package is installed (nothing: no apt-get) is checked on its own,
with dpkg-query, sudo and apt-get replaced by stand-ins.

The runs, in order: with its port taken (it stops before touching
anything, naming the port and EVALGATE_PORT), likewise with its admin
port taken; a first run (the gateway answers the saved key, the console
wrapper _run/evalgate-admin works); a second run (the same key, no
second key, application, backend or schema version); a run on a port
another program holds while the first gateway runs (refused, the
gateway untouched); a run whose _run/lighttpd.pid names a process that
is not its gateway (that process is left alone)."""

import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import urllib.request

from gateway import SRCDIR, TAP, free_port

KEY = re.compile(r"svc_[A-Za-z0-9]+_[A-Za-z0-9]+")


def copy_tree(dst):
    """The files git tracks (as they are in the work tree), else every
    file but builds and state."""
    try:
        names = subprocess.run(["git", "-C", SRCDIR, "ls-files", "-z"],
                               capture_output=True, check=True,
                               timeout=60).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        names = None
    if not names or names == [""]:
        shutil.copytree(SRCDIR, dst, symlinks=True, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(
                            "_build*", "_run", ".git", "node_modules",
                            "autom4te.cache"))
        return
    for name in names:
        src = os.path.join(SRCDIR, name)
        if not name or not os.path.lexists(src):
            continue
        os.makedirs(os.path.dirname(os.path.join(dst, name)), exist_ok=True)
        shutil.copy2(src, os.path.join(dst, name), follow_symlinks=False)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SERVICE_", "EVALGATE_", "TYPESAFE_")) and
           k not in ("PORT", "ADMIN_PORT", "MAKEFLAGS", "MFLAGS")}
    env.update(extra)
    return env


class Listener:
    """Another program's socket on 127.0.0.1:port."""

    def __init__(self, port):
        self.s = socket.socket()
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.s.bind(("127.0.0.1", port))
        self.s.listen(8)

    def close(self):
        self.s.close()


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def pid_of(top):
    try:
        with open(os.path.join(top, "_run", "lighttpd.pid")) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def stop(pid):
    if pid is None or not alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    end = time.time() + 15
    while time.time() < end and alive(pid):
        time.sleep(0.05)


def evaluate(port, key):
    with open(os.path.join(SRCDIR, "examples", "evaluate.json"), "rb") as f:
        body = f.read()
    req = urllib.request.Request(
        "http://127.0.0.1:%d/v1/systemone" % port, data=body,
        headers={"Authorization": "Bearer " + key,
                 "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except OSError as e:
        return None, str(e)


class Quickstart:
    def __init__(self, top):
        self.top = top
        self.run_dir = os.path.join(top, "_run")
        self.port = free_port()
        self.admin_port = free_port()
        while self.admin_port == self.port:
            self.admin_port = free_port()

    def __call__(self, port=None, admin_port=None):
        env = clean_env(EVALGATE_PORT=str(port or self.port),
                        EVALGATE_ADMIN_PORT=str(admin_port or
                                                self.admin_port))
        try:
            return subprocess.run(["./quickstart.sh", "--no-deps"],
                                  cwd=self.top, env=env, capture_output=True,
                                  text=True, timeout=1800)
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(e.cmd, -1, e.stdout or "",
                                               "ran past 30 minutes")

    def console(self, *args):
        """The console through the wrapper the run left in _run."""
        argv = [os.path.join(self.run_dir, "evalgate-admin")] + list(args)
        try:
            return subprocess.run(argv, env=clean_env(), capture_output=True,
                                  text=True, timeout=60)
        except OSError as e:
            return subprocess.CompletedProcess(argv, 127, "", str(e))

    def saved_key(self):
        try:
            with open(os.path.join(self.run_dir, "demo-key")) as f:
                return f.read().strip()
        except OSError:
            return None

    def count(self, *args):
        """Rows of a console table (its header aside)."""
        p = self.console(*args)
        return len(p.stdout.splitlines()) - 1 if p.returncode == 0 else None


def said(p):
    return "exit %d\nstdout: %s\nstderr: %s" % (p.returncode, p.stdout[-1500:],
                                               p.stderr[-1500:])


def test_deps_installed(t, top):
    """tools/deps.sh with every package installed: exit 0, no apt-get."""
    fake = tempfile.mkdtemp(prefix="evalgate-qs-bin-")
    log = os.path.join(fake, "called")
    try:
        for name, body in (("dpkg-query", "printf 'install ok installed'"),
                           ("apt-get", 'echo "apt-get $*" >> %s' % log),
                           ("sudo", 'echo "sudo $*" >> %s' % log)):
            path = os.path.join(fake, name)
            with open(path, "w") as f:
                f.write("#!/bin/sh\n%s\n" % body)
            os.chmod(path, 0o755)
        env = clean_env(PATH=fake + ":" + os.environ["PATH"])
        p = subprocess.run(["tools/deps.sh"], cwd=top, env=env,
                           capture_output=True, text=True, timeout=60)
        t.ok(p.returncode == 0 and not os.path.exists(log),
             "tools/deps.sh with every package installed: exit 0, no "
             "apt-get (what quickstart.sh runs first)", said(p))
    finally:
        shutil.rmtree(fake, ignore_errors=True)


def test_readme_ports(t):
    """The README's llama-server example keeps off the quick start's
    default ports."""
    with open(os.path.join(SRCDIR, "quickstart.sh")) as f:
        defaults = set(re.findall(r"PORT:-(\d+)\}", f.read()))
    with open(os.path.join(SRCDIR, "README.md")) as f:
        readme = f.read()
    llama = set(re.findall(r"llama-server [^`]*--port (\d+)", readme))
    urls = set(re.findall(r"--kind openai --url http://127\.0\.0\.1:(\d+)",
                          readme))
    t.ok(defaults and llama and not (llama | urls) & defaults,
         "README's llama-server example is not on the quick start's ports",
         "quick start %s, llama-server %s, openai urls %s" %
         (sorted(defaults), sorted(llama), sorted(urls)))


def test_busy_first(t, qs):
    """A port taken before the first run: nothing is touched."""
    for which in ("port", "admin_port"):
        port = getattr(qs, which)
        var = "EVALGATE_PORT" if which == "port" else "EVALGATE_ADMIN_PORT"
        other = Listener(port)
        try:
            p = qs()
        finally:
            other.close()
        t.ok(p.returncode != 0 and str(port) in p.stderr and
             var in p.stderr,
             "%s %d taken: quickstart.sh stops, naming the port and %s" %
             (which.replace("_", " "), port, var), said(p))
        t.ok(not os.path.exists(qs.run_dir) and
             not os.path.exists(os.path.join(qs.top, "_build")),
             "%s taken: nothing built, no database, no key" %
             which.replace("_", " "))


def test_first(t, qs):
    p = qs()
    t.ok(p.returncode == 0, "the first run sets up and starts the gateway",
         said(p))
    keys = KEY.findall(p.stdout)
    key = qs.saved_key()
    t.ok(key is not None and keys and keys[-1] == key,
         "the key printed is the one saved in _run/demo-key", said(p))
    mode = os.stat(os.path.join(qs.run_dir, "demo-key")).st_mode \
        if key else 0
    t.eq(stat.S_IMODE(mode), 0o600, "_run/demo-key has mode 0600")
    status, body = evaluate(qs.port, key or "")
    t.ok(status == 200 and "x_decision_id" in body,
         "the saved key evaluates on EVALGATE_PORT", body)
    t.ok("_run/evalgate-admin" in p.stdout,
         "the run names the console command to use", p.stdout)
    c = qs.console("backend", "list")
    t.ok(c.returncode == 0 and "lexical" in c.stdout,
         "_run/evalgate-admin backend list: the demo database's backend",
         said(c))
    m = re.search(r"^\s*(SERVICE_DB_PATH=\S+ \S*evalgate-admin) ",
                  p.stdout, re.M)
    if m:
        c = subprocess.run(m.group(1).split(" ", 1)[1].split() +
                           ["app", "list"], cwd=qs.top,
                           env=clean_env(SERVICE_DB_PATH=m.group(1)
                                         .split("=", 1)[1].split(" ")[0]),
                           capture_output=True, text=True, timeout=60)
    t.ok(m is not None and c.returncode == 0 and "demo" in c.stdout,
         "the printed SERVICE_DB_PATH=... line works as shown",
         p.stdout if m is None else said(c))
    t.eq(qs.count("key", "list", "demo"), 1, "one key issued")
    return key


def test_second(t, qs, key):
    before = pid_of(qs.top)
    p = qs()
    t.ok(p.returncode == 0, "a second run succeeds", said(p))
    t.eq(KEY.findall(p.stdout)[-1:], [key],
         "the second run prints the saved key")
    t.eq(qs.saved_key(), key, "_run/demo-key is kept")
    t.eq((qs.count("key", "list", "demo"), qs.count("app", "list"),
          qs.count("backend", "list"), qs.count("schema", "list", "demo")),
         (1, 1, 1, 1), "no second key, application, backend or schema "
         "version")
    now = pid_of(qs.top)
    t.ok(before is not None and now is not None and now != before and
         not alive(before) and alive(now),
         "its own previous gateway restarted (pid %r -> %r)" % (before, now))
    status, body = evaluate(qs.port, key)
    t.eq(status, 200, "the key still evaluates")


def test_busy_running(t, qs, key):
    """Another program on the port asked for, while the gateway runs."""
    pid = pid_of(qs.top)
    port = free_port()
    other = Listener(port)
    try:
        p = qs(port=port)
    finally:
        other.close()
    t.ok(p.returncode != 0 and str(port) in p.stderr and
         "EVALGATE_PORT" in p.stderr,
         "port %d taken by another program: refused, naming it" % port,
         said(p))
    t.ok(pid is not None and alive(pid) and pid_of(qs.top) == pid,
         "the running gateway was not stopped")
    status, _ = evaluate(qs.port, key)
    t.eq(status, 200, "and still answers")
    t.eq(qs.count("key", "list", "demo"), 1, "a failed run issues no key")


def test_foreign_pid(t, qs, key):
    """_run/lighttpd.pid naming a process that is not the gateway."""
    stop(pid_of(qs.top))
    other = subprocess.Popen(["sleep", "300"])
    try:
        with open(os.path.join(qs.run_dir, "lighttpd.pid"), "w") as f:
            f.write("%d\n" % other.pid)
        p = qs()
        t.ok(p.returncode == 0, "a run with a stale pid file succeeds",
             said(p))
        t.ok(other.poll() is None,
             "the process the stale pid file named was left alone")
        t.eq(KEY.findall(p.stdout)[-1:], [key], "the same key again")
    finally:
        other.kill()
        other.wait()


def main():
    t = TAP()
    if shutil.which("lighttpd") is None:
        t.skip("quickstart.sh", "lighttpd is not installed "
               "(tools/deps.sh)")
        return t.done()
    top = tempfile.mkdtemp(prefix="evalgate-quickstart-")
    qs = Quickstart(top)
    try:
        copy_tree(top)
        test_readme_ports(t)
        test_deps_installed(t, top)
        test_busy_first(t, qs)
        key = test_first(t, qs)
        if key:
            test_second(t, qs, key)
            test_busy_running(t, qs, key)
            test_foreign_pid(t, qs, key)
    except Exception:
        import traceback
        t.ok(False, "raised", traceback.format_exc())
    finally:
        stop(pid_of(top))
        shutil.rmtree(top, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
