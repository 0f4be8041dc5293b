"""gateway.py: the end-to-end harness.

Starts a real lighttpd on free loopback ports, spawning the built
evalgate.fcgi with a fresh database made by the real evalgate-admin, and
drives it over HTTP.  Also runs the fake System One upstream as its own
process, and a tiny TAP emitter the test files share.

Nothing here imitates the gateway: every request goes through lighttpd,
mod_fastcgi and the worker as a user's would.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import http.client

BUILDDIR = os.environ.get("EVALGATE_BUILDDIR",
                          os.path.join(os.path.dirname(__file__), "..", ".."))
SRCDIR = os.environ.get("EVALGATE_SRCDIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
WORKER = os.path.abspath(os.path.join(BUILDDIR, "evalgate.fcgi"))
ADMIN = os.path.abspath(os.path.join(BUILDDIR, "evalgate-admin"))
FAKE_UPSTREAM = os.path.abspath(os.path.join(SRCDIR, "tests", "e2e",
                                             "fake_upstream.py"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=15.0):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), 0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers          # lower-case name -> value
        self.body = body                # bytes

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def __repr__(self):
        return "<%d %r>" % (self.status, self.body[:300])


class Gateway:
    """One lighttpd + worker pool over one fresh database."""

    def __init__(self, workers=2, env=None, admin_listener=True):
        self.dir = tempfile.mkdtemp(prefix="evalgate-e2e-")
        self.db = os.path.join(self.dir, "evalgate.db")
        self.port = free_port()
        self.admin_port = free_port() if admin_listener else None
        self.workers = workers
        self.env = {
            "SERVICE_DB_PATH": self.db,
            "SERVICE_ADMIN_LISTEN": "127.0.0.1:%d" % self.admin_port
            if admin_listener else "",
        }
        self.env.update(env or {})
        self.proc = None
        self.admin("init")

    # -- the console -----------------------------------------------------
    def admin(self, *args, check=True, env=None):
        e = dict(os.environ)
        e.update(self.env)
        e.update(env or {})
        p = subprocess.run([ADMIN] + list(args), env=e,
                           capture_output=True, text=True, timeout=60)
        if check and p.returncode != 0:
            raise RuntimeError("evalgate-admin %s: exit %d: %s" %
                               (" ".join(args), p.returncode, p.stderr))
        return p

    def new_key(self, app, *app_args):
        """Creates an application (exit 1 if it exists: fine) and returns
        a fresh key for it."""
        self.admin("app", "create", app, *app_args, check=False)
        return self.admin("key", "issue", app).stdout.strip()

    # -- lighttpd --------------------------------------------------------
    def config(self):
        env = dict(self.env)
        env.setdefault("ASAN_OPTIONS",
                       "detect_leaks=1:log_path=%s/sanitizer" % self.dir)
        env.setdefault("UBSAN_OPTIONS",
                       "print_stacktrace=1:halt_on_error=1:log_path=%s/sanitizer"
                       % self.dir)
        envs = ",\n".join('        "%s" => "%s"' % (k, v)
                          for k, v in sorted(env.items()))
        os.makedirs(os.path.join(self.dir, "www"), exist_ok=True)
        max_kb = int(env.get("SERVICE_MAX_BODY_BYTES", "1048576")) // 1024 * 2
        admin = ""
        if self.admin_port:
            admin = '$SERVER["socket"] == "127.0.0.1:%d" { }\n' % \
                self.admin_port
        return """
server.modules = ("mod_fastcgi")
server.document-root = "%(dir)s/www"
server.bind = "127.0.0.1"
server.port = %(port)d
%(admin)s
server.errorlog = "%(dir)s/error.log"
server.pid-file = "%(dir)s/lighttpd.pid"
server.max-request-size = %(max_kb)d
server.max-read-idle = 60
server.max-write-idle = 120
fastcgi.server = ( "/" => ((
    "bin-path" => "%(worker)s",
    "socket" => "%(dir)s/evalgate.sock",
    "max-procs" => %(workers)d,
    "check-local" => "disable",
    "bin-environment" => (
%(envs)s
    ),
)))
""" % {"dir": self.dir, "port": self.port, "admin": admin,
            "worker": WORKER, "workers": self.workers, "envs": envs,
            "max_kb": max_kb}

    def start(self):
        conf = os.path.join(self.dir, "lighttpd.conf")
        with open(conf, "w") as f:
            f.write(self.config())
        self.proc = subprocess.Popen(["lighttpd", "-D", "-f", conf],
                                     stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(
                                         self.dir, "lighttpd.out"), "w"))
        if not wait_port(self.port):
            raise RuntimeError("lighttpd did not start: " + self.log())
        # The workers are up once the health route answers.
        end = time.time() + 15
        while time.time() < end:
            try:
                if self.get("/health").status == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("gateway did not answer: " + self.log())

    def worker_pids(self):
        pids = []
        if self.proc is None:
            return pids
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % d) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == self.proc.pid:
                    pids.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
        return pids

    def stop(self):
        if self.proc is None:
            return
        pids = self.worker_pids()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        # Workers finish their request and exit; LeakSanitizer reports then.
        end = time.time() + 15
        while time.time() < end and any(
                os.path.exists("/proc/%d" % p) and
                open("/proc/%d/stat" % p).read().rsplit(")", 1)[1].split()[0]
                != "Z" for p in pids):
            time.sleep(0.05)
        self.proc = None

    def restart(self):
        self.stop()
        return self.start()

    def log(self):
        out = ""
        for name in ("error.log", "lighttpd.out"):
            try:
                with open(os.path.join(self.dir, name),
                          errors="replace") as f:
                    out += f.read()
            except OSError:
                pass
        return out

    def sanitizer_reports(self):
        reports = []
        for name in sorted(os.listdir(self.dir)):
            if name.startswith("sanitizer"):
                with open(os.path.join(self.dir, name),
                          errors="replace") as f:
                    reports.append(f.read())
        for line in self.log().splitlines():
            if "runtime error:" in line or "Sanitizer" in line:
                reports.append(line)
        return reports

    def cleanup(self):
        self.stop()
        if os.environ.get("EVALGATE_KEEP") is None:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- HTTP ------------------------------------------------------------
    def request(self, method, path, body=None, key=None, headers=None,
                port=None, timeout=60):
        h = {}
        if key is not None:
            h["Authorization"] = "Bearer " + key
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
            h["Content-Type"] = "application/json"
        if isinstance(body, str):
            body = body.encode("utf-8")
        h.update(headers or {})
        c = http.client.HTTPConnection("127.0.0.1", port or self.port,
                                       timeout=timeout)
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            return Response(r.status,
                            {k.lower(): v for k, v in r.getheaders()},
                            r.read())
        finally:
            c.close()

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def admin_request(self, method, path, body=None, **kw):
        return self.request(method, path, body, port=self.admin_port, **kw)


class Upstream:
    """The fake System One upstream, as its own process."""

    def __init__(self, mode="ok"):
        self.proc = subprocess.Popen(
            [sys.executable, FAKE_UPSTREAM, "--port", "0", "--mode", mode],
            stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().split()
        self.port = int(line[1])
        self.url = "http://127.0.0.1:%d" % self.port
        wait_port(self.port)

    def _call(self, method, path, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            c.request(method, path, body=json.dumps(body) if body is not None
                      else None, headers={"Content-Type": "application/json"})
            r = c.getresponse()
            return json.loads(r.read() or b"null")
        finally:
            c.close()

    def control(self, **settings):
        return self._call("POST", "/_control", settings)

    def requests(self):
        return self._call("GET", "/_requests")

    def reset(self):
        return self._call("POST", "/_reset", {})

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class TAP:
    """Test Anything Protocol output for automake's tap-driver.sh."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, name, diag=None):
        self.n += 1
        if not cond:
            self.failed += 1
        print("%sok %d - %s" % ("" if cond else "not ", self.n, name))
        if not cond and diag is not None:
            for line in str(diag).splitlines()[:40]:
                print("#   " + line)
        sys.stdout.flush()
        return cond

    def eq(self, got, want, name):
        return self.ok(got == want, name,
                       "got:  %r\nwant: %r" % (got, want))

    def error_is(self, r, status, code, name):
        """r is an error response of the spec's format with this code."""
        try:
            body = r.json()
            good = (r.status == status and
                    set(body) == {"error"} and
                    body["error"].get("code") == code and
                    isinstance(body["error"].get("message"), str) and
                    body["error"]["message"] != "" and
                    isinstance(body["error"].get("details"), dict) and
                    r.headers.get("content-type") == "application/json")
        except (ValueError, KeyError, AttributeError):
            good = False
        return self.ok(good, name, "got: %d %r (want %d %s)" %
                       (r.status, r.body[:400], status, code))

    def run(self, tests, *args):
        """Runs test functions in order; an exception fails that test."""
        for fn in tests:
            try:
                fn(self, *args)
            except Exception:
                self.ok(False, "%s raised" % fn.__name__,
                        traceback.format_exc())

    def done(self):
        print("1..%d" % self.n)
        sys.stdout.flush()
        return 0
