"""gateway.py: the end-to-end harness.

Starts a real lighttpd on free loopback ports, spawning the built
evalgate.fcgi with a fresh database made by the real evalgate-admin, and
drives it over HTTP.  Also runs the fake System One upstream as its own
process, and a tiny TAP emitter the test files share.

Nothing here imitates the gateway: every request goes through lighttpd,
mod_fastcgi and the worker as a user's would.

The storage engine is SQLite unless EVALGATE_TEST_ENGINE=postgresql:
then each Gateway has a database of its own in a throw-away PostgreSQL
cluster the test program starts (tests/e2e/pg.py), SERVICE_DB_URL for
the workers and `evalgate-admin --db URL` for the console, and its own
cache file and pepper in its directory.  g.sql() reads and writes the
database whichever it is; a check that only means something for SQLite
is skipped, with the reason, through TAP.sqlite_only().  In a build
without the PostgreSQL engine such a run is skipped as a whole.
"""

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
import http.client

import pg

BUILDDIR = os.environ.get("EVALGATE_BUILDDIR",
                          os.path.join(os.path.dirname(__file__), "..", ".."))
SRCDIR = os.environ.get("EVALGATE_SRCDIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
WORKER = os.path.abspath(os.path.join(BUILDDIR, "evalgate.fcgi"))
ADMIN = os.path.abspath(os.path.join(BUILDDIR, "evalgate-admin"))
FAKE_UPSTREAM = os.path.abspath(os.path.join(SRCDIR, "tests", "e2e",
                                             "fake_upstream.py"))
FAKE_OPENAI = os.path.abspath(os.path.join(SRCDIR, "tests", "e2e",
                                           "fake_openai.py"))
ERRORS = os.path.abspath(os.path.join(SRCDIR, "errors"))  # status-*.html
ENGINE = os.environ.get("EVALGATE_TEST_ENGINE") or "sqlite"
if ENGINE not in ("sqlite", "postgresql"):
    raise SystemExit("EVALGATE_TEST_ENGINE=%s: want sqlite or postgresql"
                     % ENGINE)


def skip_all(reason):
    """Skips the whole test program (TAP's plan of none), saying why."""
    print("1..0 # SKIP " + reason)
    sys.stdout.flush()
    raise SystemExit(0)


def require_postgresql():
    """Skips the test program unless this build has the PostgreSQL
    engine."""
    if not pg.built(BUILDDIR):
        skip_all("this build has no PostgreSQL engine (configure "
                 "--with-postgresql)")


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


def build_version():
    """The version the build says (--version, evalgate_build_info), by
    the rule of Makefile.am's src/version.h: `git describe --always
    --dirty` of a checkout, else AC_INIT's release number."""
    if os.path.exists(os.path.join(SRCDIR, ".git")):
        p = subprocess.run(["git", "-C", SRCDIR, "describe", "--always",
                            "--dirty"], capture_output=True, text=True)
        if p.returncode == 0 and p.stdout.strip():
            return p.stdout.strip()
    with open(os.path.join(SRCDIR, "configure.ac")) as f:
        return re.search(r"AC_INIT\(\[[^]]*\], *\[([^]]*)\]",
                         f.read()).group(1)


class Gateway:
    """One lighttpd + worker pool over one fresh database: a SQLite file
    (self.db), or with engine "postgresql" (EVALGATE_TEST_ENGINE's by
    default) a new database of the program's PostgreSQL cluster
    (self.pg, self.pgdb, self.url).  share: another PostgreSQL Gateway
    whose database this one uses too, a second host beside it: the
    database is not made again, and its pepper is copied here (as an
    operator copies it to a new host) so that its keys authenticate."""

    def __init__(self, workers=2, env=None, admin_listener=True,
                 worker=None, engine=None, share=None):
        self.dir = tempfile.mkdtemp(prefix="evalgate-e2e-")
        self.worker = worker or WORKER  # another FastCGI program: bench/
        # Another build's worker is set up by that build's console when
        # it has one beside it: its database is of that build's schema
        # version (bench/frames.py OLD NEW across a migration).
        beside = os.path.join(os.path.dirname(self.worker), "evalgate-admin")
        self.admin_bin = beside if worker and os.access(beside, os.X_OK) \
            else ADMIN
        self.port = free_port()
        self.admin_port = free_port() if admin_listener else None
        self.workers = workers
        self.engine = "postgresql" if share is not None else \
            engine or ENGINE
        self.pg = self.pgdb = self.url = None
        self.env = {
            "SERVICE_ADMIN_LISTEN": "127.0.0.1:%d" % self.admin_port
            if admin_listener else "",
        }
        if self.engine == "postgresql":
            require_postgresql()
            self.pg = share.pg if share is not None else pg.cluster()
            self.pgdb = share.pgdb if share is not None else \
                self.pg.create_database()
            self.url = self.pg.url(self.pgdb)
            # No SERVICE_DB_PATH: nothing may be written to a SQLite
            # database; the cache and the pepper are this host's.
            self.env.update({
                "SERVICE_DB_URL": self.url,
                "SERVICE_CACHE_PATH": os.path.join(self.dir, "cache.db"),
                "SERVICE_PEPPER_FILE": os.path.join(self.dir, "pepper"),
            })
        else:
            self.env["SERVICE_DB_PATH"] = os.path.join(self.dir,
                                                       "evalgate.db")
        self.env.update(env or {})
        self.db = self.env.get("SERVICE_DB_PATH")   # the caller's, if given
        self.proc = None
        if share is not None:
            shutil.copy2(share.env["SERVICE_PEPPER_FILE"],
                         self.env["SERVICE_PEPPER_FILE"])
            return
        self.admin("init")
        if self.engine == "postgresql":
            # The console made its tables in PostgreSQL, not in a file.
            self.sql("SELECT v FROM schema_version")

    # -- the console -----------------------------------------------------
    def admin_argv(self, args):
        """The console's command line: --db URL first on PostgreSQL."""
        return [self.admin_bin] + (["--db", self.url] if self.url else []) + \
            list(args)

    def admin(self, *args, check=True, env=None):
        e = dict(os.environ)
        e.update(self.env)
        e.update(env or {})
        p = subprocess.run(self.admin_argv(args), env=e,
                           capture_output=True, text=True, timeout=60)
        if check and p.returncode != 0:
            raise RuntimeError("evalgate-admin %s: exit %d: %s" %
                               (" ".join(args), p.returncode, p.stderr))
        return p

    def publish(self, schema, questions, backend, *args):
        """Publishes questions (a dict, written to a file in the test's
        directory) as a version of schema on backend; args: more of
        `schema publish`'s options."""
        path = os.path.join(self.dir, schema + ".questions.json")
        with open(path, "w") as f:
            json.dump(questions, f)
        return self.admin("schema", "publish", schema, "--questions", path,
                          "--backend", backend, *args)

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
    "min-procs" => %(workers)d,
    "check-local" => "disable",
    "bin-environment" => (
%(envs)s
    ),
)))
""" % {"dir": self.dir, "port": self.port, "admin": admin,
            "worker": self.worker, "workers": self.workers, "envs": envs,
            "max_kb": max_kb}

    def start(self):
        # free_port() cannot hold a port: a test running beside this
        # one may bind it first.  lighttpd then cannot, and the port
        # answers for someone else; try again on new ports.
        for attempt in range(3):
            conf = os.path.join(self.dir, "lighttpd.conf")
            with open(conf, "w") as f:
                f.write(self.config())
            out = os.path.join(self.dir, "lighttpd.out")
            self.proc = subprocess.Popen(["lighttpd", "-D", "-f", conf],
                                         stdout=subprocess.DEVNULL,
                                         stderr=open(out, "w"))
            if wait_port(self.port) and not self.bind_failed():
                try:
                    return self.wait_ready()
                except RuntimeError:
                    if not self.bind_failed() or attempt == 2:
                        raise
            elif not self.bind_failed() or attempt == 2:
                raise RuntimeError("lighttpd did not start: " + self.log())
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            self.new_ports()
        raise RuntimeError("lighttpd did not start: " + self.log())

    def bind_failed(self):
        """Whether lighttpd said it could not bind its sockets."""
        time.sleep(0.05)
        return "can't bind to socket" in self.log() and \
            (self.proc is None or self.proc.poll() is not None)

    def new_ports(self):
        """Other free ports for the next start; the old logs go."""
        self.port = free_port()
        if self.admin_port:
            self.admin_port = free_port()
            self.env["SERVICE_ADMIN_LISTEN"] = "127.0.0.1:%d" % \
                self.admin_port
        for name in ("error.log", "lighttpd.out"):
            try:
                os.unlink(os.path.join(self.dir, name))
            except OSError:
                pass

    def wait_ready(self, path="/health"):
        """The workers are up once the health route (at path) answers."""
        end = time.time() + 15
        while time.time() < end:
            try:
                if self.get(path).status == 200:
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

    def sql(self, query, args=(), cache=False):
        """Runs one statement on the database (or the cache file), as an
        operator would with sqlite3 or psql, and returns its rows as
        tuples.  ? marks a parameter (?N the Nth) on either engine; the
        SQL itself must be what both understand, or the caller's
        choice by g.engine."""
        if self.engine == "postgresql" and not cache:
            return self.pg.query(self.pgdb, query, args)
        path = self.db
        if cache:
            path = self.env.get("SERVICE_CACHE_PATH") or \
                os.path.join(self.dir, "cache.db")
        db = sqlite3.connect(path, timeout=30)
        try:
            rows = db.execute(query, args).fetchall()
            db.commit()
            return rows
        finally:
            db.close()

    def answers(self, decision_id):
        """The stored answers of a decision, as both engines keep them in
        its row (decisions.answers): a list, in the answer's order, of
        {question, type, distribution, answer, label_mass?} with the
        distribution and the answer parsed; None for no such decision."""
        rows = self.sql("SELECT answers FROM decisions WHERE id = ?",
                        (decision_id,))
        return json.loads(rows[0][0]) if rows else None

    def clear_cooldowns(self):
        """Forgets every replica cool-down (the cache may be emptied at
        any time), so that the next call really asks each replica."""
        self.sql("DELETE FROM cooldowns", cache=True)

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

    SCRIPT = FAKE_UPSTREAM

    def __init__(self, mode="ok"):
        self.proc = subprocess.Popen(
            [sys.executable, self.SCRIPT, "--port", "0", "--mode", mode],
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


class OpenAIUpstream(Upstream):
    """The fake OpenAI-compatible chat-completions server
    (tests/e2e/fake_openai.py), as its own process.  url is the base URL
    a backend of kind openai is given: it ends in /v1."""

    SCRIPT = FAKE_OPENAI

    def __init__(self, mode="ok"):
        super().__init__(mode)
        self.url = "http://127.0.0.1:%d/v1" % self.port

    def config(self):
        """The current configuration, with in_flight and in_flight_max."""
        return self._call("GET", "/_control")


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

    def skip(self, name, reason):
        """One check that does not apply here, and why (TAP's SKIP)."""
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, name, reason))
        sys.stdout.flush()

    def sqlite_only(self, g, name, reason=None):
        """Whether g runs on SQLite, where the checks `name` apply; on
        another engine, one skipped check saying so and why."""
        if g.engine == "sqlite":
            return True
        self.skip(name, "SQLite only: " + (reason or "a property of the "
                                             "SQLite file"))
        return False

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

    def pg_stop(self):
        """Stops the program's PostgreSQL cluster: it must stop cleanly.
        The server's ERROR, FATAL and PANIC lines are shown (as comments:
        a refused statement may be the engine's way)."""
        log = pg.CLUSTER.log()
        said = []
        for line in log.splitlines():
            m = re.search(r"\b(ERROR|FATAL|PANIC):\s+(.*)", line)
            if m and m.group(0) not in said:
                said.append(m.group(0))
        for line in said[:20]:
            print("# PostgreSQL: " + line)
        self.ok(pg.shutdown(), "the PostgreSQL cluster stopped cleanly")
        self.ok(not any(s.startswith("PANIC") for s in said),
                "PostgreSQL never panicked", "\n".join(said))

    def stop_clean(self, g, what="no sanitizer reports"):
        """Stops g (workers exit, LeakSanitizer reports) and checks that
        no sanitizer said anything."""
        g.stop()
        return self.eq(g.sanitizer_reports(), [], what)

    def done(self):
        if pg.CLUSTER is not None:
            self.pg_stop()
        print("1..%d" % self.n)
        sys.stdout.flush()
        return 0


# -- Apache with mod_fcgid ----------------------------------------------

import pwd  # noqa: E402  (this part was added after the lighttpd one)

APACHE = "/usr/sbin/apache2"
APACHE_MODULES = "/usr/lib/apache2/modules"
APACHE_SAMPLE = os.path.abspath(os.path.join(SRCDIR, "examples",
                                             "apache-fcgid.conf"))
# mod_fcgid's server-wide spawn settings, the sample's companion.
APACHE_SERVER_SAMPLE = os.path.abspath(os.path.join(
    SRCDIR, "examples", "apache-fcgid-server.conf"))


def sanitizer_env(directory):
    """The sanitizer options of the workers: reports go to files in
    `directory`, which sanitizer_reports() reads."""
    return {
        "ASAN_OPTIONS": "detect_leaks=1:log_path=%s/sanitizer" % directory,
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:"
                         "log_path=%s/sanitizer" % directory,
    }


def set_directive(text, name, value, key=None, where=APACHE_SAMPLE):
    """text (of the file `where`) with every line of directive `name` (and
    first argument `key`, if given) set to `value`; raises if there is
    none, so that a sample that changed under the test fails loudly
    instead of going untested."""
    head = re.escape(name) + (r"[ \t]+" + re.escape(key) if key else "")
    pat = re.compile(r"^([ \t]*" + head + r")[ \t]+.*$", re.M)
    text, n = pat.subn(lambda m: m.group(1) + " " + str(value), text)
    if n == 0:
        raise RuntimeError("%s: no %s %s line" % (where, name, key or ""))
    return text


class ApacheGateway(Gateway):
    """One Apache httpd with mod_fcgid spawning the built worker, over one
    fresh database: the same interface as Gateway.

    Its configuration is examples/apache-fcgid-server.conf and
    examples/apache-fcgid.conf as shipped, with the site's Define lines
    pointing here (as a user edits them), the settings of self.env in its
    FcgidInitialEnv lines (the sanitizer options added beside them), and
    the directives in `directives` (name -> value, every occurrence in
    either file: FcgidIdleTimeout, FcgidMaxRequestsPerProcess,
    UseCanonicalName...) changed; a prelude adds what Debian's
    apache2.conf would (modules, user, logs, the public Listen).  Run as root, Apache runs the
    workers as www-data, so the test directory and every file the
    console makes belong to www-data."""

    USER = "www-data"

    def __init__(self, workers=2, env=None, admin_listener=True,
                 directives=None, worker=None):
        self.user = self.USER if os.geteuid() == 0 else None
        self.directives = {"FcgidMaxProcessesPerClass": workers}
        self.directives.update(directives or {})
        self._owned = False
        # The sample always has the internal virtual host.
        super().__init__(workers, env, admin_listener=True, worker=worker)
        if not admin_listener:
            self.env["SERVICE_ADMIN_LISTEN"] = ""

    def _own(self):
        """Gives the test directory to the workers' user."""
        if self.user is None or self._owned:
            return
        pw = pwd.getpwnam(self.user)
        for root, dirs, files in os.walk(self.dir):
            for name in [root] + [os.path.join(root, f)
                                  for f in dirs + files]:
                os.chown(name, pw.pw_uid, pw.pw_gid)
        self._owned = True

    def admin(self, *args, check=True, env=None):
        """The console, as the user the workers run as."""
        self._own()
        e = dict(os.environ)
        e.update(self.env)
        e.update(env or {})
        kw = {}
        if self.user is not None:
            kw = {"user": self.user, "group": self.user, "extra_groups": []}
        p = subprocess.run(self.admin_argv(args), env=e, capture_output=True,
                           text=True, timeout=60, cwd=self.dir, **kw)
        if check and p.returncode != 0:
            raise RuntimeError("evalgate-admin %s: exit %d: %s" %
                               (" ".join(args), p.returncode, p.stderr))
        return p

    def site(self, name="127.0.0.1", public=None):
        """examples/apache-fcgid.conf with its Define lines pointing here
        (host name `name`, public address `public`), self.env in its
        FcgidInitialEnv lines and the sanitizer options added there."""
        with open(APACHE_SAMPLE) as f:
            text = f.read()
        defines = {
            "EVALGATE_WORKER": self.worker,
            "EVALGATE_STATE": self.dir,
            "EVALGATE_NAME": name,
            "EVALGATE_PUBLIC": public or "127.0.0.1:%d" % self.port,
            "EVALGATE_ADMIN": "127.0.0.1:%d" % self.admin_port,
            "EVALGATE_ADMIN_PORT": self.admin_port,
            "EVALGATE_ERRORS": ERRORS,
        }
        for key, value in defines.items():
            text = set_directive(text, "Define", value, key=key)
        extra = sanitizer_env(self.dir)
        for key, value in sorted(self.env.items()):
            if re.search(r"^\s*FcgidInitialEnv\s+%s\s" % key, text, re.M):
                text = set_directive(text, "FcgidInitialEnv",
                                     '"%s"' % value, key=key)
            else:
                extra[key] = value
        envs = "".join('\tFcgidInitialEnv %s "%s"\n' % kv
                       for kv in sorted(extra.items()))
        text, n = re.subn(r"^(<VirtualHost [^>]*>\n)",
                          lambda m: m.group(1) + envs, text, flags=re.M)
        if n != 1:
            raise RuntimeError(APACHE_SAMPLE + ": no <VirtualHost>")
        return text

    def config(self):
        with open(APACHE_SERVER_SAMPLE) as f:
            text = f.read() + self.site()
        directives = dict(self.directives)
        directives.setdefault("FcgidMaxRequestLen", 2 * int(
            self.env.get("SERVICE_MAX_BODY_BYTES", "1048576")))
        for name, value in directives.items():
            text = set_directive(text, name, value)
        for d in ("run", "www"):
            os.makedirs(os.path.join(self.dir, d), exist_ok=True)
        mods = "".join("LoadModule %s_module %s/mod_%s.so\n" %
                       (m, APACHE_MODULES, m) for m in
                       ("mpm_event", "authz_core", "authz_host", "alias",
                        "fcgid"))
        user = ("User %s\nGroup %s\n" % (self.user, self.user)
                if self.user else "")
        prelude = """# Generated by tests/e2e/gateway.py: what Debian's apache2.conf would
# hold, then examples/apache-fcgid-server.conf and apache-fcgid.conf
# with the latter's lines pointing here.
ServerRoot "%(dir)s"
ServerName 127.0.0.1
PidFile "%(dir)s/apache2.pid"
DefaultRuntimeDir "%(dir)s/run"
DocumentRoot "%(dir)s/www"
ErrorLog "%(dir)s/error.log"
LogLevel warn fcgid:info
Define APACHE_LOG_DIR %(dir)s
%(mods)s%(user)s
StartServers 1
ServerLimit 2
ThreadLimit 16
ThreadsPerChild 16
MinSpareThreads 1
MaxSpareThreads 32
MaxRequestWorkers 32
Listen 127.0.0.1:%(port)d
FcgidIPCDir "%(dir)s/fcgid"
FcgidProcessTableFile "%(dir)s/fcgid/shm"
""" % {"dir": self.dir, "mods": mods, "user": user, "port": self.port}
        return prelude + text

    def start(self):
        self._own()
        if self.user is not None and subprocess.run(
                ["test", "-x", self.worker], user=self.user).returncode != 0:
            raise RuntimeError("%s cannot run %s: give it a build directory "
                               "it can reach" % (self.user, self.worker))
        self.run_apache()
        if not wait_port(self.admin_port):
            raise RuntimeError("apache2 did not start: " + self.log())
        return self.wait_ready()

    def run_apache(self):
        """Writes self.config() and starts Apache in the foreground on
        it, as the tests run every server; waits for its port."""
        conf = os.path.join(self.dir, "apache2.conf")
        with open(conf, "w") as f:
            f.write(self.config())
        self.proc = subprocess.Popen(
            [APACHE, "-f", conf, "-k", "start", "-DFOREGROUND"],
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.dir, "apache2.out"), "w"),
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                 "LANG": "C"})
        if not wait_port(self.port):
            raise RuntimeError("apache2 did not start: " + self.log())

    def worker_pids(self):
        """The workers: descendants of Apache running the built worker
        (under Apache they are the process manager's children)."""
        if self.proc is None:
            return []
        parent = {}
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % d) as f:
                    parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
        pids = []
        for pid in parent:
            p, seen = pid, 0
            while p in parent and p != self.proc.pid and seen < 64:
                p, seen = parent[p], seen + 1
            if p != self.proc.pid:
                continue
            try:
                if os.path.realpath("/proc/%d/exe" % pid) == \
                        os.path.realpath(self.worker):
                    pids.append(pid)
            except OSError:
                pass
        return sorted(pids)

    def log(self):
        out = ""
        for name in ("error.log", "evalgate-error.log", "apache2.out"):
            try:
                with open(os.path.join(self.dir, name),
                          errors="replace") as f:
                    out += f.read()
            except OSError:
                pass
        return out


# -- lighttpd.conf.sample as shipped ------------------------------------

LIGHTTPD_SAMPLE = os.path.abspath(os.path.join(SRCDIR,
                                               "lighttpd.conf.sample"))


class LighttpdSampleGateway(Gateway):
    """Gateway with lighttpd.conf.sample as shipped instead of the
    harness's own configuration: its var.* lines pointing here (as
    quickstart.sh and a user set them), "max-procs" and "min-procs" set to
    `workers`,
    the settings of self.env in its bin-environment, the sanitizer
    options added there."""

    def config(self):
        with open(LIGHTTPD_SAMPLE) as f:
            text = f.read()
        for name, value in (
                ("var.evalgate_worker", '"%s"' % self.worker),
                ("var.evalgate_state", '"%s"' % self.dir),
                ("var.evalgate_public", str(self.port)),
                ("var.evalgate_admin", '"127.0.0.1:%d"' % self.admin_port),
                ("var.evalgate_errors", '"%s"' % ERRORS)):
            text = set_directive(text, name, "= " + value,
                                 where=LIGHTTPD_SAMPLE)
        for name in ('"max-procs"', '"min-procs"'):
            text = set_directive(text, name, "=> %d," % self.workers,
                                 where=LIGHTTPD_SAMPLE)
        env = sanitizer_env(self.dir)
        env.update(self.env)
        extra = ""
        for name, value in sorted(env.items()):
            if re.search(r'^\s*"%s"\s*=>' % name, text, re.M):
                text = set_directive(text, '"%s"' % name,
                                     '=> "%s",' % value,
                                     where=LIGHTTPD_SAMPLE)
            else:
                extra += '\t\t"%s" => "%s",\n' % (name, value)
        text, n = re.subn(r'("bin-environment" => \(\n)',
                          lambda m: m.group(1) + extra, text)
        if n != 1:
            raise RuntimeError(LIGHTTPD_SAMPLE + ": no bin-environment")
        os.makedirs(os.path.join(self.dir, "www"), exist_ok=True)
        return text

    def log(self):
        out = Gateway.log(self)
        try:
            with open(os.path.join(self.dir, "lighttpd-error.log"),
                      errors="replace") as f:
                out += f.read()
        except OSError:
            pass
        return out


# -- shared hosting: Apache at Debian's defaults, then the installer ----

SH_INSTALL = os.path.abspath(os.path.join(SRCDIR, "tools",
                                          "shared-hosting-install"))
SUEXEC = "/usr/lib/apache2/suexec"
DEBIAN_MODS = "/etc/apache2/mods-available"
# The modules Debian's apache2 package enables, and the two a shared host
# adds for FastCGI programs (suexec too, when the test can use it).
DEBIAN_MODULES = ("mpm_event", "access_compat", "alias", "auth_basic",
                  "authn_core", "authn_file", "authz_core", "authz_host",
                  "authz_user", "autoindex", "deflate", "dir", "env",
                  "filter", "mime", "negotiation", "reqtimeout", "setenvif",
                  "status", "fcgid", "rewrite")


def suexec_usable():
    """suexec works for the test: run as root (Apache switches to
    www-data, suexec's compiled-in caller), and Debian's setuid suexec
    (apache2-suexec-pristine) whose document root is /var/www."""
    if os.geteuid() != 0:
        return False
    try:
        st = os.stat(SUEXEC)
        out = subprocess.run([SUEXEC, "-V"], capture_output=True, text=True,
                             timeout=10).stderr
    except (OSError, subprocess.TimeoutExpired):
        return False
    return bool(st.st_mode & 0o4000) and st.st_uid == 0 and \
        'AP_DOC_ROOT="/var/www"' in out and \
        'AP_HTTPD_USER="www-data"' in out


class SharedHostingGateway(ApacheGateway):
    """Apache 2.4 as a shared host runs it, then evalgate as its customer
    installs it: the same interface as Gateway.

    The server configuration is what Debian's apache2.conf and its
    default modules make (their .load and .conf files from
    /etc/apache2/mods-available, mod_fcgid's and mod_rewrite's
    included) and one virtual host whose DocumentRoot directory has
    "AllowOverride All": nothing of evalgate's.  Run as root, Apache runs
    as www-data and the virtual host has "SuexecUserGroup" the customer
    (nobody:nogroup), under /var/www as Debian's suexec requires; else
    everything runs as the caller, without suexec.

    The customer's part is only tools/shared-hosting-install WEBDIR
    STATEDIR (install()), run as the customer with `bindir` first in
    PATH, WEBDIR the "evalgate" directory of the document root and
    STATEDIR outside it; the console runs as the customer too."""

    CUSTOMER = ("nobody", "nogroup")
    groups_made = 0

    def __init__(self, bindir=BUILDDIR, suexec=None, shared_group=False,
                 host_group=False, allow_override="All", modules_off=()):
        """shared_group: Apache (run as root) runs as www-data in the
        customer's group, the host SERVICE_GROUP_WRITABLE=1 is for: it
        can read the customer's group-readable files wherever they
        are.  host_group: the same as a host does it, with a group of
        its own for the customer (made for the test, removed by
        cleanup()) that www-data is a member of, while Apache's group
        stays www-data: files a worker makes belong to www-data's group
        unless their directory says otherwise.  allow_override: the
        virtual host's AllowOverride; modules_off: Debian's default
        modules the host does not load (e.g. "rewrite")."""
        self.suexec = suexec_usable() if suexec is None else suexec
        root = os.geteuid() == 0
        self.user = self.USER if root else None
        self.customer = self.CUSTOMER if root else None
        self.made_group = None
        if root and host_group:
            self.made_group = "evalgate-sh-%d-%d" % (
                os.getpid(), SharedHostingGateway.groups_made)
            SharedHostingGateway.groups_made += 1
            subprocess.run(["groupadd", "-U", self.USER, self.made_group],
                           check=True)
            self.customer = (self.CUSTOMER[0], self.made_group)
        self.group = self.customer[1] if root and shared_group else \
            self.user
        self.allow_override = allow_override
        self.modules_off = tuple(modules_off)
        if self.suexec:
            os.makedirs("/var/www", exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="evalgate-sh-",
                                    dir="/var/www" if self.suexec else None)
        os.chmod(self.dir, 0o755)
        self.bindir = os.path.abspath(bindir)
        self.docroot = os.path.join(self.dir, "html")
        self.home = os.path.join(self.dir, "home")
        self.webdir = os.path.join(self.docroot, "evalgate")
        self.statedir = os.path.join(self.home, "evalgate-state")
        self.sandir = os.path.join(self.dir, "san")
        for d in (self.docroot, self.home, self.sandir):
            os.makedirs(d)
            self._give(d)
        self.worker = os.path.join(self.webdir, "evalgate-worker")
        self.port = free_port()
        self.admin_port = None
        self.workers = 0
        self.env = {"SERVICE_DB_PATH": os.path.join(self.statedir,
                                                    "evalgate.db")}
        self.db = self.env["SERVICE_DB_PATH"]
        self.proc = None
        self.directives = {}

    def _give(self, path):
        """path belongs to the customer (the host made their home)."""
        if self.customer is not None:
            pw = pwd.getpwnam(self.customer[0])
            os.chown(path, pw.pw_uid, grp_gid(self.customer[1]))

    def as_customer(self, argv, env=None, **kw):
        """Runs argv as the customer, over SSH as it were: PATH has
        `bindir` first."""
        e = {"PATH": self.bindir + ":/usr/local/bin:/usr/bin:/bin",
             "HOME": self.home, "LANG": "C"}
        e.update(env or {})
        if self.customer is not None:
            kw.update(user=self.customer[0], group=self.customer[1],
                      extra_groups=[])
        return subprocess.run(argv, env=e, capture_output=True, text=True,
                              timeout=120, cwd=self.home, **kw)

    def install(self, webdir=None, statedir=None, env=None, args=()):
        """tools/shared-hosting-install [args] WEBDIR STATEDIR as the
        customer: the CompletedProcess."""
        return self.as_customer(["sh", SH_INSTALL] + list(args) +
                                [webdir or self.webdir,
                                 statedir or self.statedir], env=env)

    def url(self, path=""):
        """The site's URL for path."""
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def cleanup(self):
        ApacheGateway.cleanup(self)
        if self.made_group is not None:
            subprocess.run(["groupdel", self.made_group])
            self.made_group = None

    def add_to_wrapper(self, lines):
        """Adds export lines to the wrapper's "your own variables", as
        the customer adds an upstream key there."""
        path = os.path.join(self.webdir, "evalgate.fcgi")
        with open(path) as f:
            text = f.read()
        text = text.replace("\nexec ", "\n" + "".join(
            "export %s='%s'\n" % kv for kv in lines) + "\nexec ", 1)
        with open(path, "w") as f:      # owner and mode stay
            f.write(text)

    def admin(self, *args, check=True, env=None):
        """The console, as the customer, with the database the installer
        made (cache and pepper beside it)."""
        p = self.as_customer([os.path.join(self.bindir, "evalgate-admin"),
                              "--db", self.db] + list(args), env=env)
        if check and p.returncode != 0:
            raise RuntimeError("evalgate-admin %s: exit %d: %s" %
                               (" ".join(args), p.returncode, p.stderr))
        return p

    def config(self):
        mods = ""
        for m in DEBIAN_MODULES + (("suexec",) if self.suexec else ()):
            if m in self.modules_off:
                continue
            with open(os.path.join(DEBIAN_MODS, m + ".load")) as f:
                mods += f.read()
            conf = os.path.join(DEBIAN_MODS, m + ".conf")
            if os.path.exists(conf):
                mods += "Include %s\n" % conf
        user = ("User %s\nGroup %s\n" % (self.user, self.group)
                if self.user else "")
        suexec = ("\tSuexecUserGroup %s %s\n" % self.customer
                  if self.suexec else "")
        # mod_fcgid makes its FcgidIPCDir itself, for Apache's user.
        os.makedirs(os.path.join(self.dir, "run"), exist_ok=True)
        return """# Generated by tests/e2e/gateway.py: a shared host's Apache,
# Debian's apache2.conf and default modules; nothing of evalgate's.
ServerRoot "%(dir)s"
ServerName 127.0.0.1
PidFile "%(dir)s/apache2.pid"
DefaultRuntimeDir "%(dir)s/run"
ErrorLog "%(dir)s/error.log"
LogLevel warn
Timeout 300
KeepAlive On
HostnameLookups Off
%(user)s%(mods)s
<Directory />
	Options FollowSymLinks
	AllowOverride None
	Require all denied
</Directory>
<Directory /var/www/>
	Options Indexes FollowSymLinks
	AllowOverride None
	Require all granted
</Directory>
AccessFileName .htaccess
<FilesMatch "^\\.ht">
	Require all denied
</FilesMatch>
<IfModule mod_fcgid.c>
FcgidIPCDir "%(dir)s/fcgid"
FcgidProcessTableFile "%(dir)s/fcgid/shm"
</IfModule>
Listen 127.0.0.1:%(port)d
<VirtualHost 127.0.0.1:%(port)d>
	ServerName 127.0.0.1
	DocumentRoot "%(docroot)s"
%(suexec)s	<Directory "%(docroot)s">
		Options Indexes FollowSymLinks
		AllowOverride %(override)s
		Require all granted
	</Directory>
	CustomLog "%(dir)s/access.log" common
</VirtualHost>
""" % {"dir": self.dir, "user": user, "mods": mods, "port": self.port,
            "docroot": self.docroot, "suexec": suexec,
            "override": self.allow_override}

    def start(self):
        self.run_apache()
        return self.wait_ready("/evalgate/health")

    def sanitizer_reports(self):
        reports = ApacheGateway.sanitizer_reports(self)
        for name in sorted(os.listdir(self.sandir)):
            with open(os.path.join(self.sandir, name),
                      errors="replace") as f:
                reports.append(f.read())
        return reports

    def log(self):
        out = ApacheGateway.log(self)
        if self.suexec:
            try:
                with open("/var/log/apache2/suexec.log",
                          errors="replace") as f:
                    out += "".join(line for line in f
                                   if self.dir in line)
            except OSError:
                pass
        return out


def grp_gid(name):
    import grp
    return grp.getgrnam(name).gr_gid
