"""test_lighttpd_sample: the worker under lighttpd configured by
lighttpd.conf.sample as shipped (only its var.* lines, "max-procs" and
the sanitizer options changed, see LighttpdSampleGateway in gateway.py),
through the checks of deploy_checks.py, as test_apache does for
examples/apache-fcgid.conf.  The rest of the end-to-end suite runs over
lighttpd too, with the harness's own configuration."""

from deploy_checks import run_shared
from gateway import LighttpdSampleGateway, TAP


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
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
