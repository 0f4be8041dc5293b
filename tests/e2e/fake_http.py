"""fake_http: the HTTP plumbing the tests' fake upstreams share
(fake_upstream.py, fake_openai.py), so that each holds only what it
fakes: a threaded HTTP/1.1 server, a handler base that reads a body
(chunked too, capped), answers JSON, notices a client that went away, and
answers a bug of its own with a 500 instead of dying, and the start-up
that prints the bound port.  Python 3 standard library only.

A fake subclasses FakeHandler, sets `server_version`, defines `route()`
and, if it wants, `extra_headers()` and `bug_body()`, and calls
`serve(handler, host, port, name, verbose, what)` from its main()."""

import json
import os
import select
import signal
import socket
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 64 * 1024 * 1024     # bytes of a request body
NAME = "fake"                   # prefix of log lines: serve() sets it
VERBOSE = False                 # serve() sets it


def log(msg):
    if VERBOSE:
        sys.stderr.write("%s: %s\n" % (NAME, msg))
        sys.stderr.flush()


def compact(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class FakeHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without this, each
    # reused connection waits for a delayed ACK (about 40 ms).
    disable_nagle_algorithm = True
    server_version = "fake/1.0"

    def version_string(self):
        return self.server_version

    def log_message(self, fmt, *args):
        if VERBOSE:
            log("%s %s" % (self.address_string(), fmt % args))

    def extra_headers(self):
        """Headers every answer carries."""
        return {}

    def bug_body(self, e):
        """The 500's body when route() raised."""
        return {"error": {"type": "server_error",
                          "message": "fake server bug: %r" % (e,)}}

    def read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            chunks, total = [], 0
            while True:
                line = self.rfile.readline(65537)
                if not line:
                    break
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n",
                                                             b""):
                        pass
                    break
                total += size
                if total > MAX_BODY:
                    raise ValueError("body too large")
                chunks.append(self.rfile.read(size))
                self.rfile.readline(3)
            return b"".join(chunks)
        n = int(self.headers.get("Content-Length") or 0)
        if n < 0 or n > MAX_BODY:
            raise ValueError("bad Content-Length")
        return self.rfile.read(n) if n else b""

    def send_bytes(self, status, body, ctype="application/json", extra=None,
                   close=False):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in list(self.extra_headers().items()) + \
                list((extra or {}).items()):
            self.send_header(k, v)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def send_json(self, status, obj, extra=None, close=False):
        self.send_bytes(status, compact(obj).encode("utf-8"), extra=extra,
                        close=close)

    def client_gone(self, timeout):
        """Waits up to `timeout` s; True if the peer closed its side."""
        try:
            r, _, _ = select.select([self.connection], [], [], timeout)
            if r:
                if not self.connection.recv(1, socket.MSG_PEEK):
                    return True
                time.sleep(timeout)  # pipelined bytes: not a close
        except (OSError, ValueError):
            return True
        return False

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def do_PATCH(self):
        self.dispatch()

    def dispatch(self):
        try:
            self.route()
        except (BrokenPipeError, ConnectionResetError,
                ConnectionAbortedError, socket.timeout):
            self.close_connection = True
        except Exception as e:  # never crash the server
            log("handler error: %r" % (e,))
            self.close_connection = True
            try:
                self.send_json(500, self.bug_body(e), close=True)
            except Exception:
                pass

    def route(self):
        raise NotImplementedError


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        if VERBOSE:
            super().handle_error(request, client_address)


def serve(handler, host, port, name, verbose, what=""):
    """Listens on host:port (0: a free port), prints "PORT n" on stdout
    at once, and serves until SIGTERM or SIGINT, which end it at once."""
    global NAME, VERBOSE
    NAME, VERBOSE = name, verbose

    def stop(signum, frame):
        try:
            sys.stdout.flush()
        finally:
            os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    Server.address_family = socket.AF_INET6 if ":" in host \
        else socket.AF_INET
    srv = Server((host, port), handler)
    sys.stdout.write("PORT %d\n" % srv.server_address[1])
    sys.stdout.flush()
    log("listening on %s:%d %s" % (host, srv.server_address[1], what))
    srv.serve_forever(poll_interval=0.5)
