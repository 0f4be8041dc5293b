"""test_lighttpd_sample: the worker under lighttpd configured by
lighttpd.conf.sample as shipped (only its var.* lines, "max-procs" and
the sanitizer options changed, see LighttpdSampleGateway in gateway.py),
through the checks of deploy_checks.py, as test_apache does for
examples/apache-fcgid.conf.  The rest of the end-to-end suite runs over
lighttpd too, with the harness's own configuration."""

from deploy_checks import (LIMIT, setup, test_health, test_auth,
                           test_evaluation_and_outcome, test_errors,
                           test_body_limit, test_admin_listener,
                           test_several_workers)
from gateway import LighttpdSampleGateway, TAP


def main():
    t = TAP()
    g = LighttpdSampleGateway(workers=3)
    try:
        g.start()
        key, root = setup(g)
        t.run([test_health], g)
        t.run([test_auth, test_evaluation_and_outcome, test_errors], g, key)
        # server.max-request-size = 2048 KiB; lighttpd's HTML 413.
        t.run([test_body_limit], g, key, 2 * LIMIT, 413)
        t.run([test_admin_listener], g, key, root)
        t.run([test_several_workers], g, key)
        t.stop_clean(g)
    finally:
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
