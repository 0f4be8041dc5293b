"""test_close: how a worker ends its connection with the web server.

libfcgi ends a request by shutting down its side of the connection and
waiting for the server to close first, so that data the server is still
sending cannot turn into a reset that loses the answer.  That wait is a
round trip through the server in which the worker sits idle, so
src/main.c skips it when everything the server sent has been read (the
body, and the empty record that ends it), and keeps it when a body is
left unread.  strace follows the worker through one request at a time:

- an evaluation (body read) and GET /v1/models (no body): closed at
  once, no shutdown();
- a body over SERVICE_MAX_BODY_BYTES (the 413 is decided before reading)
  and a POST with a body to an unknown route: shutdown() first, and the
  client still gets the whole JSON error.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import setup_demo, strace_worker  # noqa: E402
from gateway import Gateway, TAP  # noqa: E402

LIMIT = 4096
EVAL = {"state": "the checkout is broken, refund now",
        "x_schema": {"id": "demo"}}


def closing(g, request):
    """(the response, whether the worker shut its side down first)."""
    r, calls = strace_worker(g, ["shutdown", "close", "write"], request)
    return r, any(name == "shutdown" for name, _, _ in calls)


def main():
    t = TAP()
    g = Gateway(workers=1, env={"SERVICE_MAX_BODY_BYTES": str(LIMIT)})
    try:
        key = setup_demo(g)
        g.start()
        t.eq(g.post("/v1/systemone", EVAL, key=key).status, 200,
             "warm-up evaluation")
        cases = [
            ("an evaluation", lambda: g.post("/v1/systemone", EVAL,
                                             key=key), 200, None, False),
            ("GET /v1/models", lambda: g.get("/v1/models", key=key), 200,
             None, False),
            ("a body over the limit", lambda: g.post(
                "/v1/systemone", {"state": "x" * (LIMIT + LIMIT // 2)},
                key=key), 413, "payload_too_large", True),
            ("a body to an unknown route", lambda: g.post(
                "/v1/nowhere", {"state": "x" * 100}, key=key), 404,
             "not_found", True),
        ]
        for name, request, status, code, graceful in cases:
            r, shut = closing(g, request)
            if code is None:
                t.eq(r.status, status, "%s: answered" % name)
            else:
                t.error_is(r, status, code, "%s: the whole JSON error "
                           "arrives" % name)
            t.eq(shut, graceful, "%s: %s" % (name, (
                "shutdown() first, a body is left unread" if graceful
                else "closed at once, everything was read")))
        t.stop_clean(g)
    finally:
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
