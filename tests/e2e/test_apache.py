"""test_apache: the worker under Apache 2.4 with mod_fcgid, configured
by examples/apache-fcgid.conf as shipped (only its Define lines and a few
mod_fcgid numbers changed, see ApacheGateway in gateway.py).

Through the sample, the checks of deploy_checks.py.  Under mod_fcgid's
process management: workers recycled after 5 requests, stopped when idle
and started again on demand, SIGTERM in the middle of a request (the
answer still arrives), Apache's graceful restart and restart, and every
stop a clean exit on SIGTERM, never SIGKILL.  A control with the
sample's protections turned off (CGIPassAuth, UseCanonicalName,
TraceEnable, FcgidMaxRequestLen) shows each is what makes its check
pass.  No sanitizer reports."""

import json
import os
import re
import signal
import threading
import time

from deploy_checks import (LIMIT, setup, evaluate_body, wait_for,
                           run_shared, from_server)
from gateway import ApacheGateway, TAP, Upstream


def fcgid_exits(g):
    """mod_fcgid's line for each worker that ended."""
    return [line for line in g.log().splitlines()
            if "mod_fcgid: process" in line and " exit(" in line]


def clean_exit(line):
    return "terminated by calling exit(), return code: 0" in line


def spawned(g):
    return len(re.findall(r"mod_fcgid: server \S+evalgate\.fcgi\(\d+\) "
                          r"started", g.log()))


def test_stop(t, g):
    pids = g.worker_pids()
    g.stop()
    exits = fcgid_exits(g)
    t.ok(len(exits) >= len(pids) and all(clean_exit(x) for x in exits),
         "on Apache's stop every worker exited cleanly on SIGTERM",
         "\n".join(exits))
    t.eq(g.sanitizer_reports(), [], "no sanitizer reports")


# -- mod_fcgid's process management ---------------------------------------

def test_recycling(t, g, key):
    start = spawned(g)
    statuses = [g.get("/v1/models", key=key).status for _ in range(20)]
    t.eq(statuses, [200] * 20, "20 requests with FcgidMaxRequestsPerProcess "
         "5: all 200")
    t.ok(spawned(g) - start >= 3, "workers were replaced along the way",
         spawned(g) - start)
    r = g.post("/v1/systemone", evaluate_body(), key=key)
    t.eq(r.status, 200, "an evaluation after the recycling: 200")


def test_idle(t, g, key):
    gone = wait_for(lambda: g.worker_pids() == [], 20)
    t.ok(gone, "idle workers are stopped (FcgidIdleTimeout 2, "
         "FcgidMinProcessesPerClass 0)", g.worker_pids())
    # mod_fcgid logs an exit once it has reaped the process.
    idle = wait_for(lambda: any("exit(idle timeout)" in x
                                for x in fcgid_exits(g)), 10)
    exits = fcgid_exits(g)
    t.ok(idle, "mod_fcgid says idle timeout", "\n".join(exits[-5:]))
    t.ok(len(exits) >= 4 and all(clean_exit(x) for x in exits),
         "every stop so far (recycled or idle) was a clean exit on SIGTERM, "
         "none needed SIGKILL", "\n".join(exits))
    r = g.get("/v1/models", key=key)
    t.eq(r.status, 200, "a request after that starts a worker again")
    t.eq(len(g.worker_pids()), 1, "one worker, started on demand")


def test_term_mid_request(t, g, key, up):
    """SIGTERM while a worker waits for its backend: the answer still
    arrives, then the worker exits, and mod_fcgid starts another."""
    up.control(mode="slow", delay_ms=1000)
    body = {"state": "x", "questions": {"slow": {"type": "noul"}}}
    g.get("/v1/models", key=key)
    res = []
    th = threading.Thread(target=lambda: res.append(
        g.post("/v1/systemone", body, key=key)))
    th.start()
    time.sleep(0.4)
    pids = g.worker_pids()
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    th.join(30)
    up.control(mode="ok", delay_ms=0)
    t.ok(len(pids) >= 1 and res and res[0].status == 200,
         "SIGTERM during a request: that request still gets its 200",
         res and res[0])
    t.ok(wait_for(lambda: not set(pids) & set(g.worker_pids()), 5),
         "then the worker exits", pids)
    # Until mod_fcgid's process manager has reaped it (its scan runs
    # every FcgidErrorScanInterval), the dead worker is still in its
    # table, and a request sent to it is Apache's own 503: wait for the
    # exit line, as an operator's next request after a scan would.
    reaped = wait_for(lambda: all(
        any("(%d) exit(" % pid in x for x in fcgid_exits(g))
        for pid in pids), 15)
    t.ok(reaped, "mod_fcgid reaps it", "\n".join(fcgid_exits(g)[-5:]))
    r = g.get("/v1/models", key=key)
    t.ok(r.status == 200, "the next request is served by a new worker", r)


def test_restarts(t, g, key):
    """Apache's graceful restart (SIGUSR1) and restart (SIGHUP) stop the
    workers and start new ones; requests keep being answered."""
    for sig, name in ((signal.SIGUSR1, "graceful restart"),
                      (signal.SIGHUP, "restart")):
        g.proc.send_signal(sig)
        time.sleep(0.2)

        def answered():
            try:
                return g.get("/v1/models", key=key).status == 200
            except OSError:
                return False
        t.ok(wait_for(answered, 15), "after a %s, requests are answered"
             % name)


# -- a control: the sample without its protections ------------------------

def test_control(t, c, key, root):
    """With UseCanonicalName Off, CGIPassAuth Off, TraceEnable On and
    mod_fcgid's default FcgidMaxRequestLen, the checks above fail: each
    directive is needed."""
    t.eq(c.get("/v1/models", key=key).status, 401,
         "control, CGIPassAuth Off: a good key is 401 (Apache hid it)")
    spoof = {"Host": "127.0.0.1:%d" % c.admin_port}
    r = c.get("/admin/v1/applications", key=root, headers=spoof)
    t.ok(r.status != 404, "control, UseCanonicalName Off: the spoofed Host "
         "reaches /admin/v1 from the public port", r)
    r = c.request("TRACE", "/v1/models", key=key)
    t.ok(r.status == 200 and key.encode() in r.body,
         "control, TraceEnable On: Apache echoes the request, key and all",
         r)
    r = c.post("/v1/systemone", b"x" * (LIMIT + 1),
               headers={"Content-Type": "application/json"})
    t.ok(r.status == 500 and from_server(r),
         "control, FcgidMaxRequestLen 131072: mod_fcgid's own 500 "
         "(errors/status-500.html) instead of the worker's 413", r)


def main():
    t = TAP()
    began = time.time()
    g = ApacheGateway(workers=3)
    try:
        g.start()
        # FcgidMaxRequestLen: twice the body limit; mod_fcgid's HTML 500.
        run_shared(t, g, 500)
        t.run([test_stop], g)
    finally:
        g.cleanup()

    p = ApacheGateway(workers=2, directives={
        "FcgidMaxRequestsPerProcess": 5, "FcgidIdleTimeout": 2,
        "FcgidIdleScanInterval": 1, "FcgidErrorScanInterval": 1,
        "FcgidMinProcessesPerClass": 0})
    try:
        p.start()
        key, _ = setup(p)
        t.run([test_recycling, test_idle], p, key)
        up = Upstream()
        try:
            p.admin("backend", "add", "up", "--kind", "systemone",
                    "--url", up.url)
            with open(os.path.join(p.dir, "slow.json"), "w") as f:
                json.dump({"slow": {"type": "noul"}}, f)
            p.admin("schema", "publish", "slow", "--questions",
                    os.path.join(p.dir, "slow.json"), "--backend", "up")
            p.admin("grant", "client", "slow")
            t.run([test_term_mid_request], p, key, up)
        finally:
            up.stop()
        t.run([test_restarts], p, key)
        t.run([test_stop], p)
    finally:
        p.cleanup()

    c = ApacheGateway(workers=1, directives={
        "UseCanonicalName": "Off", "CGIPassAuth": "Off",
        "FcgidMaxRequestLen": 131072, "TraceEnable": "On"})
    try:
        c.start()
        key, root = setup(c)
        t.run([test_control], c, key, root)
        t.stop_clean(c, "control: no sanitizer reports")
    finally:
        c.cleanup()
    print("# test_apache took %.1f s" % (time.time() - began))
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
