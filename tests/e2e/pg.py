"""pg.py: a throw-away PostgreSQL 15 cluster for the tests.

The tests of the PostgreSQL engine (EVALGATE_TEST_ENGINE=postgresql, and
the tests that need it whatever the engine) run against a real server:
this module makes one with initdb in a temporary directory, starts its
postmaster on a unix socket in that directory only (no TCP), gives each
gateway a database of its own, and stops it and removes the directory
when the test program ends.

PostgreSQL refuses to run as root, and CI runs as root: then the server
runs as an unprivileged user, PG_USER, made if missing (useradd).  Run as
anyone else, it runs as the caller.  Connections need no password (trust,
on a socket only its directory's users reach).

If the test program dies without stopping it (killed by make's timeout,
say), a watchdog process, which reads a pipe the program holds, stops the
server (SIGQUIT, PostgreSQL's immediate shutdown) and removes the
directory when the pipe closes.

Queries for the tests (Cluster.query) go through psql, as an operator's
would by hand: the query's ? placeholders become psql variables (quoted
by psql) and a SELECT's rows come back as JSON, so that the rows are
tuples of Python values as sqlite3 gives them.
"""

import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PG_BIN = os.environ.get("EVALGATE_PG_BIN", "/usr/lib/postgresql/15/bin")
PG_USER = "evalgate-pg"         # the server's user when the tests run as root
SUPERUSER = "evalgate"          # the cluster's superuser (initdb -U)
BUILT = None                    # set by built() from config.h


def built(builddir):
    """Whether the build in builddir has the PostgreSQL engine."""
    global BUILT
    if BUILT is None:
        try:
            with open(os.path.join(builddir, "config.h")) as f:
                BUILT = re.search(r"^#define HAVE_POSTGRESQL 1$", f.read(),
                                  re.M) is not None
        except OSError:
            BUILT = False
    return BUILT


def psql_path():
    """psql: the cluster's own version first."""
    p = os.path.join(PG_BIN, "psql")
    return p if os.path.exists(p) else "psql"


def server_user():
    """(uid, gid) the server runs as: the caller's, or PG_USER's when the
    caller is root (made here if missing)."""
    if os.geteuid() != 0:
        return None
    import pwd
    try:
        pw = pwd.getpwnam(PG_USER)
    except KeyError:
        # Two test programs may add it at once: the loser's useradd
        # fails, and the user exists all the same.
        subprocess.run(["useradd", "--system", "--no-create-home",
                        "--shell", "/usr/sbin/nologin", PG_USER],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pw = pwd.getpwnam(PG_USER)
    return pw.pw_uid, pw.pw_gid


class QueryError(RuntimeError):
    pass


class Cluster:
    """One PostgreSQL server in a directory of its own (self.dir): data
    in data/, the socket in the directory itself, the log in log."""

    def __init__(self, settings=None):
        self.dir = os.path.realpath(tempfile.mkdtemp(prefix="evalgate-pg-"))
        os.chmod(self.dir, 0o755)   # the workers' users reach the socket
        self.data = os.path.join(self.dir, "data")
        self.logfile = os.path.join(self.dir, "log")
        self.user = server_user()
        if self.user is not None:
            os.chown(self.dir, *self.user)
        self.settings = {"listen_addresses": "''",
                         "unix_socket_directories": "'%s'" % self.dir,
                         # The tests kill the server, never the machine:
                         # the OS keeps what was written.
                         "fsync": "off",
                         "max_connections": "200"}
        self.settings.update(settings or {})
        self.databases = 0
        self.proc = None
        self.watchdog = None
        self.stopped = False
        self.run([os.path.join(PG_BIN, "initdb"), "-D", self.data, "-N",
                  "-A", "trust", "-U", SUPERUSER, "-E", "UTF8",
                  "--locale=C"])
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n# tests/e2e/pg.py\n")
            for k, v in sorted(self.settings.items()):
                f.write("%s = %s\n" % (k, v))
        self.start_watchdog()
        self.start()

    # -- the server ------------------------------------------------------
    def run(self, argv, check=True):
        kw = {}
        if self.user is not None:
            kw = {"user": self.user[0], "group": self.user[1],
                  "extra_groups": []}
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                           cwd=self.dir, env={"PATH": "/usr/bin:/bin",
                                              "LANG": "C", "LC_ALL": "C"},
                           **kw)
        if check and p.returncode != 0:
            raise RuntimeError("%s: exit %d: %s%s" % (
                " ".join(argv), p.returncode, p.stdout, p.stderr))
        return p

    def start(self):
        """Starts the server (again) and waits until it accepts
        connections.  The postmaster is this program's own child, not
        pg_ctl's daemon: killed, it is reaped here, even where the
        container's init reaps nothing, so that its pid in
        postmaster.pid is gone and start() can follow kill()."""
        kw = {}
        if self.user is not None:
            kw = {"user": self.user[0], "group": self.user[1],
                  "extra_groups": []}
        log = open(self.logfile, "a")
        self.proc = subprocess.Popen(
            [os.path.join(PG_BIN, "postgres"), "-D", self.data],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=self.dir,
            env={"PATH": "/usr/bin:/bin", "LANG": "C", "LC_ALL": "C"},
            start_new_session=True, **kw)
        log.close()
        end = time.time() + 60
        while time.time() < end:
            if self.proc.poll() is not None:
                break
            if self.run([os.path.join(PG_BIN, "pg_isready"), "-q", "-h",
                         self.dir, "-U", SUPERUSER, "-d", "postgres"],
                        check=False).returncode == 0:
                self.stopped = False
                return self
            time.sleep(0.05)
        raise RuntimeError("PostgreSQL did not start: " + self.log()[-2000:])

    def processes(self):
        """The pids of the server's processes: the postmaster and its
        children, or after a crash the children it left."""
        out = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    cmd = f.read()
                if b"postgres" not in cmd:
                    continue
                if os.path.realpath("/proc/%s/cwd" % d) == \
                        os.path.realpath(self.data):
                    out.append(int(d))
            except OSError:
                pass
        return out

    def kill(self):
        """SIGKILL to the postmaster, as a crash would; waits until every
        process it left has gone (they notice its death and exit), so that
        start() can follow.  Returns the postmaster's pid."""
        pid = self.proc.pid
        self.proc.kill()
        self.proc.wait()
        end = time.time() + 30
        while self.processes() and time.time() < end:
            time.sleep(0.05)
        if self.processes():
            raise RuntimeError("PostgreSQL's processes outlived the "
                               "postmaster: %r" % self.processes())
        self.stopped = True
        return pid

    def stop(self):
        """Stops the server (fast shutdown: SIGINT ends the sessions and
        writes a checkpoint); True if it stopped cleanly."""
        if self.stopped:
            return True
        self.stopped = True
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(60) == 0
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return False

    def log(self):
        try:
            with open(self.logfile, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def cleanup(self):
        """Stops the server and removes its directory (kept when
        EVALGATE_KEEP is set)."""
        ok = self.stop()
        if self.watchdog is not None:
            self.watchdog.stdin.close()
            self.watchdog.wait(60)
            self.watchdog = None
        elif os.environ.get("EVALGATE_KEEP") is None:
            shutil.rmtree(self.dir, ignore_errors=True)
        return ok

    def start_watchdog(self):
        keep = os.environ.get("EVALGATE_KEEP") is not None
        script = ('read x; pid=$(head -n 1 "$1/postmaster.pid" 2>/dev/null);'
                  ' if [ -n "$pid" ] && [ "$(readlink /proc/$pid/cwd)" = "$1" ]'
                  ' && kill -QUIT "$pid" 2>/dev/null; then'
                  ' n=0; while kill -0 "$pid" 2>/dev/null &&'
                  ' [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done; fi;'
                  + ('' if keep else ' rm -rf "$2"'))
        self.watchdog = subprocess.Popen(
            ["sh", "-c", script, "pg-watchdog", self.data, self.dir],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)

    def add_password_role(self, role, password):
        """A role that logs in with password only (SCRAM on the socket,
        where every other role is trusted): pg_hba.conf gets its line
        first, and the server reloads it."""
        self.query("postgres", "CREATE ROLE \"%s\" LOGIN PASSWORD '%s'" %
                   (role, password))
        hba = os.path.join(self.data, "pg_hba.conf")
        with open(hba) as f:
            text = f.read()
        with open(hba, "w") as f:       # owner and mode stay
            f.write("local all %s scram-sha-256\n%s" % (role, text))
        self.query("postgres", "SELECT pg_reload_conf()")

    # -- databases -------------------------------------------------------
    def url(self, db):
        """The URL a gateway is given for database db (SERVICE_DB_URL,
        evalgate-admin --db)."""
        return "postgresql:///%s?host=%s&user=%s" % (db, self.dir,
                                                      SUPERUSER)

    def create_database(self, prefix="g"):
        """A new empty database; its name."""
        self.databases += 1
        name = "%s%d" % (prefix, self.databases)
        self.query("postgres", "CREATE DATABASE " + name)
        return name

    def psql(self, db, text, variables=(), check=True):
        """Runs text through psql on database db, as an operator by hand;
        the CompletedProcess."""
        argv = [psql_path(), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                "-h", self.dir, "-U", SUPERUSER, "-d", db]
        for name, value in variables:
            argv += ["-v", "%s=%s" % (name, value)]
        p = subprocess.run(argv + ["-f", "-"], input=text,
                           capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, PGCONNECT_TIMEOUT="10"))
        if check and p.returncode != 0:
            raise QueryError("psql: %s: %s" % (text[:200],
                                               p.stderr.strip()))
        return p

    def query(self, db, sql, args=()):
        """Runs one statement on database db and returns its rows as a
        list of tuples (sqlite3's fetchall()): ? marks a parameter, ?N
        the Nth (from 1), as in SQLite.  Integers and floats are written
        as numbers, None as NULL, anything else as a string literal
        quoted by psql."""
        args = list(args)
        variables, following = [], [0]

        def param(m):
            if m.group(1):
                i = int(m.group(1)) - 1
            else:
                i = following[0]
                following[0] += 1
            a = args[i]
            if a is None:
                return "NULL"
            if isinstance(a, bool):
                return str(int(a))
            if isinstance(a, int):
                return "(%d)" % a
            if isinstance(a, float):
                return "(%r)" % a
            if isinstance(a, bytes):
                a = a.decode("utf-8")
            variables.append(("p%d" % i, a))
            return ":'p%d'" % i
        text = re.sub(r"\?(\d*)", param, sql).strip().rstrip(";")
        first = text.split(None, 1)[0].lower() if text else ""
        if first in ("select", "with", "values", "table"):
            text = "SELECT json_agg(q) FROM (%s) q" % text
        elif re.search(r"\breturning\b", text, re.I):
            text = "WITH q AS (%s) SELECT json_agg(q) FROM q" % text
        else:
            self.psql(db, text + ";\n", variables)
            return []
        out = self.psql(db, text + ";\n", variables).stdout.strip()
        if out == "":
            return []
        return json.loads(out, object_pairs_hook=lambda kv: tuple(
            v for _, v in kv))


CLUSTER = None


def cluster():
    """The test program's cluster, started at its first use and stopped
    when the program exits."""
    global CLUSTER
    if CLUSTER is None:
        CLUSTER = Cluster()
        atexit.register(shutdown)
    return CLUSTER


def shutdown():
    """Stops the program's cluster if it has one; True if there was none
    or it stopped cleanly."""
    global CLUSTER
    if CLUSTER is None:
        return True
    c, CLUSTER = CLUSTER, None
    return c.cleanup()


if __name__ == "__main__":
    # python3 tests/e2e/pg.py: starts a cluster, prints its directory and
    # a URL, and waits for Enter (for trying things by hand).
    # python3 tests/e2e/pg.py PROGRAM...: runs PROGRAM with the URL of a
    # fresh database in EVALGATE_TEST_PG_URL, then stops the cluster;
    # exits with the program's status (tests/store_pg_test.sh).
    c = Cluster()
    db = c.create_database("try")
    if len(sys.argv) > 1:
        env = dict(os.environ, EVALGATE_TEST_PG_URL=c.url(db))
        status = subprocess.run(sys.argv[1:], env=env).returncode
        if not c.cleanup():
            print("# the PostgreSQL cluster did not stop cleanly")
            status = status or 1
        sys.exit(status)
    print(c.dir)
    print(c.url(db))
    sys.stdin.readline()
    c.cleanup()
