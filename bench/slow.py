"""slow.py: bench/run's slow-backend scenario (doc/design.md,
section 21; bench/README.md).

A System One upstream that answers after 300 ms (nginx with Debian's
echo module, `echo_sleep 0.3`, which holds thousands of connections on
one process), and for each pool size W: the sleeping floor (bench/floor.c
with FLOOR_SLEEP_MS=300, a worker that only waits) and the gateway
(POST /v1/systemone, 3 questions, through a systemone backend) under
the same server settings, loaded by wrk with 2W connections.  The
gateway runs in one or both modes: "shipped", only the pool's size set
(the workers not told it, the backend's default in-flight limit), and
"tuned", SERVICE_WORKERS=W and the backend's --max-in-flight W.
Reported per row: req/s against the ideal (W / 0.3 s) and against the
floor of the same W, p50/p99, the machine's busy CPU time per answered
call and its ratio to the same program's at the run's smallest W,
non-2xx answers, client timeouts (wrk's 2 s), "database is locked"
lines in the log, how long the pool took to start and with how many
errors, and memory as PSS (/proc/PID/smaps_rollup) of the workers and
of the server.
"""

import os
import re
import subprocess
import time

import gateway  # noqa: E402  (bench/run put tests/e2e on the path)

SLEEP_S = 0.3
ECHO_MODULE = "/usr/lib/nginx/modules/ngx_http_echo_module.so"
# The modes, in the order of the report, and their headings' words.
MODES = {"shipped": "as shipped", "tuned": "tuned"}
# What both sample configurations set that the harness's lighttpd
# configuration does not (examples/apache-fcgid.conf has it already).
SAMPLE_ENV = {"SERVICE_CPU_AFFINITY": "1"}
# What only the tuned mode tells the workers: removed from
# examples/apache-fcgid.conf's FcgidInitialEnv lines unless set.
TUNING = ("SERVICE_WORKERS",)


def gateway_env(mode, workers):
    """The workers' settings of the bench's own in a mode."""
    env = dict(SAMPLE_ENV)
    if mode == "tuned":
        env["SERVICE_WORKERS"] = str(workers)
    return env


def sample_sets(name):
    """Whether examples/apache-fcgid.conf sets variable name."""
    with open(gateway.APACHE_SAMPLE) as f:
        return re.search(r"^\s*FcgidInitialEnv\s+%s\s" % name, f.read(),
                         re.M) is not None


class SlowUpstream:
    """nginx answering the bench's System One body after 300 ms."""

    def __init__(self, workdir, body, chat_body=None):
        if not os.path.exists(ECHO_MODULE):
            raise RuntimeError("%s missing: apt-get install "
                               "libnginx-mod-http-echo" % ECHO_MODULE)
        self.dir = os.path.join(workdir, "nginx-slow")
        os.makedirs(self.dir)
        self.port = gateway.free_port()
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write("""
load_module %(module)s;
daemon off;
worker_processes 1;
worker_rlimit_nofile 20000;
pid %(d)s/nginx.pid;
error_log %(d)s/error.log;
events { worker_connections 16384; }
http {
    access_log off;
    client_body_temp_path %(d)s;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:%(port)d backlog=4096;
        location = /v1/systemone {
            default_type application/json;
            echo_sleep %(sleep)s;
            echo '%(body)s';
        }
        location = /v1/chat/completions {
            default_type application/json;
            echo_sleep %(sleep)s;
            echo '%(chat)s';
        }
    }
}
""" % {"module": ECHO_MODULE, "d": self.dir, "port": self.port,
                "sleep": SLEEP_S, "body": body.replace("'", "\\'"),
                "chat": (chat_body or "{}").replace("'", "\\'")})
        self.proc = subprocess.Popen(["nginx", "-c", conf, "-p", self.dir],
                                     stderr=subprocess.DEVNULL)
        gateway.wait_port(self.port)
        self.url = "http://127.0.0.1:%d" % self.port

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


class ManyGateway(gateway.Gateway):
    """The harness's lighttpd (min-procs = max-procs, as the sample) with
    room for thousands of connections."""

    def config(self):
        return gateway.Gateway.config(self) + """
server.max-fds = 16384
server.max-connections = 8192
server.listen-backlog = 4096
"""


class ManyApache(gateway.ApacheGateway):
    """The harness's Apache (examples/apache-fcgid.conf as shipped) with
    an event MPM as large as the clients (2W unless given): the harness
    keeps it at 32 for the tests, which would cap the pool it feeds.
    The conf's FcgidInitialEnv lines of the TUNING variables not in env
    are removed."""

    def __init__(self, clients=None, **kw):
        super().__init__(**kw)
        self.clients = clients or 2 * self.workers

    def config(self):
        text = gateway.ApacheGateway.config(self)
        threads = 64
        limit = -(-max(32, self.clients + threads) // threads)
        for name, value in (("ServerLimit", limit), ("ThreadLimit", threads),
                            ("ThreadsPerChild", threads),
                            ("MaxSpareThreads", limit * threads),
                            ("MaxRequestWorkers", limit * threads)):
            text = re.sub(r"^%s\s+\d+$" % name, "%s %d" % (name, value),
                          text, count=1, flags=re.M)
        for name in TUNING:
            if name not in self.env:
                text = re.sub(r"^\s*FcgidInitialEnv\s+%s\s.*\n" % name, "",
                              text, flags=re.M)
        return text


def pss_kib(pid):
    """PSS of process pid in KiB (0 if gone)."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            m = re.search(r"^Pss:\s+(\d+) kB", f.read(), re.M)
            return int(m.group(1)) if m else 0
    except OSError:
        return 0


def server_pids(g):
    """The web server's own processes: lighttpd, or Apache and its
    children that are not workers (mod_fcgid's process manager)."""
    if g.proc is None:
        return []
    workers = set(g.worker_pids())
    out = [g.proc.pid]
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in workers:
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == g.proc.pid:
            out.append(int(d))
    return out


def memory(g):
    """(workers, PSS per worker MiB, workers' PSS MiB, server's MiB)."""
    pids = g.worker_pids()
    w = sum(pss_kib(p) for p in pids) / 1024.0
    s = sum(pss_kib(p) for p in server_pids(g)) / 1024.0
    return len(pids), (w / len(pids) if pids else 0.0), w, s


def start(kind, workers, worker_bin, env, setup=None, clients=None):
    """A started server of kind "lighttpd" or "apache", set up (the
    console) before it starts, and when it started (time.time());
    clients: how many connections Apache must hold at once."""
    if kind == "apache":
        g = ManyApache(workers=workers, env=env, worker=worker_bin,
                       clients=clients)
    else:
        g = ManyGateway(workers=workers, env=env, worker=worker_bin)
    key = setup(g) if setup else None
    t0 = time.time()
    try:
        g.start()
    except Exception:
        g.cleanup()
        raise
    return g, key, t0


def ticks(g):
    """{pid: user + system CPU ticks} of the web server's processes and
    the workers: what the gateway (or the floor) itself spends, apart
    from wrk, the upstream and whatever else shares the machine."""
    out = {}
    for pid in set(server_pids(g)) | set(g.worker_pids()):
        try:
            with open("/proc/%d/stat" % pid) as f:
                x = f.read().rsplit(")", 1)[1].split()
            out[pid] = int(x[11]) + int(x[12])
        except (OSError, IndexError, ValueError):
            pass
    return out


def own_ms(before, after):
    """Milliseconds of CPU the processes spent between two ticks(): a
    process gone by the end is missed, one new counts whole."""
    hz = os.sysconf("SC_CLK_TCK")
    return sum(t - before.get(p, 0) for p, t in after.items()) * 1000.0 / hz


def measure(g, t0, run_wrk, url, body, key, workers, seconds):
    """(wrk with 2W connections (2 s timeout), seconds until the pool of
    W ran or None), after a warm-up: one call first (the key verified
    once and remembered), then load in 2 s rounds until the pool is
    whole (lighttpd starts it at once, mod_fcgid on demand), at most
    10 rounds."""
    conns = max(2, 2 * workers)
    run_wrk(url, body, key, 1, 1, 1)
    took = None
    for _ in range(10):
        if len(g.worker_pids()) >= workers:
            took = time.time() - t0
            break
        run_wrk(url, body, key, 2, conns, 2)
    if took is None and len(g.worker_pids()) >= workers:
        took = time.time() - t0
    run_wrk(url, body, key, 2, conns, 2)
    before = ticks(g)
    r = run_wrk(url, body, key, seconds, conns, 2)
    ok = r["rps"] * seconds - r["non2xx"]
    r["own_ms"] = own_ms(before, ticks(g)) / ok if ok > 0 else float("nan")
    return r, took


def scenario(kind, sizes, floor_bin, workers_bins, up_url, body_file,
             setup, run_wrk, seconds, log, modes=("shipped",)):
    """The rows of one server kind: per pool size, the floor (its mode
    None) then each gateway build in each mode."""
    rows = []

    def one(w, label, binary, mode, floor_rps):
        is_floor = mode is None
        env = {"FLOOR_SLEEP_MS": str(int(SLEEP_S * 1000))} if is_floor \
            else gateway_env(mode, w)
        g, key, t0 = start(kind, w, binary, env, None if is_floor else
                           lambda g: setup(g, up_url, w, mode == "tuned"))
        try:
            url = "http://127.0.0.1:%d/%s" % (
                g.port, "" if is_floor else "v1/systemone")
            r, took = measure(g, t0, run_wrk, url, body_file, key, w,
                              seconds)
            start_errors = len(re.findall(r"database:|shared memory",
                                          g.log()))
            n, per, total, server = memory(g)
            locked = g.log().count("database is locked")
        finally:
            g.cleanup()
        base = r["rps"] if is_floor else floor_rps
        row = {"kind": kind, "W": w, "label": label, "mode": mode,
               "rps": r["rps"], "ideal": r["rps"] / (w / SLEEP_S),
               "floor": r["rps"] / base if base else float("nan"),
               "p50": r["p50"], "p99": r["p99"], "idle": r["idle"],
               "cpu_ms": r["cpu_ms"], "own_ms": r["own_ms"],
               "non2xx": r["non2xx"],
               "timeouts": r["timeouts"], "locked": locked,
               "start_s": took, "start_errors": start_errors,
               "workers": n, "pss_worker": per, "pss_workers": total,
               "pss_server": server}
        log(row)
        rows.append(row)
        return row["rps"]

    for w in sizes:
        floor_rps = one(w, "floor", floor_bin, None, None)
        for mode in modes:
            for label, binary in workers_bins:
                one(w, label, binary, mode, floor_rps)
    return rows


def peer_rows(peer, sizes, chat_body_file, headers, run_wrk, seconds, log):
    """--peers: the Portkey gateway (peers.Portkey, one node process) in
    front of the same 300 ms upstream, at the client concurrency of each
    pool size W (2W connections): a row per W, beside the gateway's."""
    rows = []
    for w in sizes:
        conns = max(2, 2 * w)
        run_wrk(peer.url, chat_body_file, None, 2, conns, 2, headers)
        r = run_wrk(peer.url, chat_body_file, None, seconds, conns, 2,
                    headers)
        rss = peer.rss_kib() / 1024.0
        row = {"kind": "node", "W": w, "label": "portkey %s" % peer.version,
               "mode": None,
               "rps": r["rps"], "ideal": r["rps"] / (w / SLEEP_S),
               "floor": float("nan"), "p50": r["p50"], "p99": r["p99"],
               "idle": r["idle"], "cpu_ms": r["cpu_ms"],
               "own_ms": float("nan"),
               "non2xx": r["non2xx"], "timeouts": r["timeouts"],
               "locked": 0, "start_s": 0.0, "start_errors": 0,
               "workers": 1, "pss_worker": pss_kib(peer.proc.pid) / 1024.0,
               "pss_workers": pss_kib(peer.proc.pid) / 1024.0,
               "pss_server": 0.0, "rss": rss}
        log(row)
        rows.append(row)
    return rows


def cpu_ratios(rows, column="cpu_ms"):
    """Each row's CPU time per answered call (column) over that of the
    same server and program at the smallest W among rows: {id(row):
    ratio}."""
    first = {}
    for r in sorted(rows, key=lambda r: r["W"]):
        first.setdefault((r["kind"], r["label"]), r[column])
    return {id(r): r[column] / first[(r["kind"], r["label"])]
            if first[(r["kind"], r["label"])] else float("nan")
            for r in rows}


def fmt(value, spec):
    """value in spec, or "-" for NaN or None."""
    return "-" if value is None or value != value else spec % value


def table(rows):
    """The rows (of one mode, and the floor's) as Markdown."""
    ratio = cpu_ratios(rows)
    own = cpu_ratios(rows, "own_ms")
    out = ["| server | W | program | req/s | / ideal | / floor | p50 ms | "
           "p99 ms | CPU idle | CPU ms/call | x smallest W | "
           "own CPU ms/call | x smallest W | non-2xx | "
           "timeouts | locked | start s (errors) | PSS/worker MiB | "
           "workers + server MiB |",
           "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
           "---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append("| %s | %d | %s | %.0f | %.2f | %s | %.0f | %.0f "
                   "| %.0f%% | %s | %s | %s | %s | %d | %d | %d | %s (%d) "
                   "| %.2f | %.0f |" % (
                       r["kind"], r["W"], r["label"], r["rps"], r["ideal"],
                       fmt(r["floor"], "%.2f"), r["p50"], r["p99"],
                       100 * r["idle"], fmt(r["cpu_ms"], "%.2f"),
                       fmt(ratio[id(r)], "%.2f"), fmt(r["own_ms"], "%.3f"),
                       fmt(own[id(r)], "%.2f"), r["non2xx"],
                       r["timeouts"], r["locked"],
                       "never" if r["start_s"] is None else
                       "%.1f" % r["start_s"],
                       r["start_errors"], r["pss_worker"],
                       r["pss_workers"] + r["pss_server"]))
    return out


def cpu_target(rows, small=16, large=1024, most=1.5):
    """Lines saying, for each gateway program measured at both pool
    sizes small and large, whether its CPU time per answered call at
    large is at most `most` times its figure at small: the machine's,
    and the server's and workers' own."""
    pair = [r for r in rows if r["W"] in (small, large)]
    lines = []
    for column, what in (("cpu_ms", "the machine's"),
                         ("own_ms", "the server's and workers' own")):
        ratio = cpu_ratios(pair, column)
        for r in rows:
            if r["W"] == large and r["mode"] is not None and \
                    any(s["W"] == small and (s["kind"], s["label"]) ==
                        (r["kind"], r["label"]) for s in rows):
                x = ratio[id(r)]
                lines.append("- %s %s: %s CPU per answered call at %d "
                             "workers %s times its figure at %d (target: "
                             "at most %.1f, %s)" % (
                                 r["kind"], r["label"], what, large,
                                 fmt(x, "%.2f"), small, most,
                                 "reached" if x <= most else
                                 "**not reached**"))
    return lines
