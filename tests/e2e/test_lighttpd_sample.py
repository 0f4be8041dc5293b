"""test_lighttpd_sample: the worker under lighttpd configured by
lighttpd.conf.sample as shipped (only its var.* lines, "max-procs" and
the sanitizer options changed, see LighttpdSampleGateway in gateway.py),
through the checks of deploy_checks.py, as test_apache does for
examples/apache-fcgid.conf.  The rest of the end-to-end suite runs over
lighttpd too, with the harness's own configuration.

Then the workers' error lines, with lighttpd run exactly as shipped: as
a daemon (no -D, which would keep its stderr for the workers): a pepper
file that others may read stops every worker with one line, which must
reach the file the sample's server.breakagelog names; without that
directive it reaches no file at all (what an operator saw before)."""

import os
import signal
import subprocess
import time

from deploy_checks import from_server, run_shared
from gateway import LighttpdSampleGateway, TAP

PEPPER_LINE = "group or others may access it"


def logged(directory):
    """Every line any file of directory holds that names the pepper."""
    found = []
    for name in sorted(os.listdir(directory)):
        try:
            with open(os.path.join(directory, name), errors="replace") as f:
                found += [line for line in f if PEPPER_LINE in line]
        except OSError:
            pass
    return found


def daemonised(t, breakagelog):
    """lighttpd as a daemon with a world-readable pepper: where the
    workers' line goes, with and without the sample's breakagelog."""
    what = "with" if breakagelog else "without"
    g = LighttpdSampleGateway(workers=2)
    pid = None
    try:
        os.chmod(os.path.join(g.dir, "pepper"), 0o644)
        text = g.config()
        if not breakagelog:
            lines = [line for line in text.splitlines(True)
                     if not line.startswith("server.breakagelog")]
            t.ok(len(lines) < len(text.splitlines()),
                 "the sample sets server.breakagelog")
            text = "".join(lines)
        conf = os.path.join(g.dir, "lighttpd.conf")
        with open(conf, "w") as f:
            f.write(text)
        p = subprocess.run(["lighttpd", "-f", conf], capture_output=True,
                           text=True, timeout=30)
        t.eq(p.returncode, 0, "%s breakagelog: lighttpd starts as a daemon"
             % what)
        # The workers exit at once; lighttpd says "child exited" in its
        # own error log, and tries again.
        errlog = os.path.join(g.dir, "lighttpd-error.log")
        end = time.time() + 15
        while time.time() < end:
            with open(errlog, errors="replace") as f:
                if "child exited" in f.read():
                    break
            time.sleep(0.1)
        time.sleep(0.5)
        r = g.get("/health")
        t.ok(r.status in (500, 503) and from_server(r),
             "%s breakagelog: with no worker, the client gets the "
             "server's %d in the spec's format (errors/)" % (what, r.status),
             r)
        lines = logged(g.dir)
        if breakagelog:
            path = os.path.join(g.dir, "evalgate-error.log")
            text = open(path).read() if os.path.exists(path) else ""
            t.ok(PEPPER_LINE in text, "with breakagelog: the workers' "
                 "line is in evalgate-error.log", lines)
        else:
            t.eq(lines, [], "without breakagelog: the line is in no file "
                 "(why the sample sets it)")
        with open(os.path.join(g.dir, "lighttpd.pid")) as f:
            pid = int(f.read())
    finally:
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
            end = time.time() + 15
            while time.time() < end and os.path.exists("/proc/%d" % pid):
                time.sleep(0.05)
        g.cleanup()


def main():
    t = TAP()
    g = LighttpdSampleGateway(workers=3)
    try:
        g.start()
        # server.max-request-size = 2048 KiB; lighttpd's HTML 413.
        run_shared(t, g, 413)
        t.stop_clean(g)
    finally:
        g.cleanup()
    daemonised(t, breakagelog=True)
    daemonised(t, breakagelog=False)
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
