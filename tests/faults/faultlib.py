"""faultlib: what the tests of tests/faults share beyond the e2e harness.

Makes tests/e2e/gateway.py importable, speaks raw HTTP over a socket
for what http.client refuses to send: chunked bodies, bodies shorter
than their Content-Length, bytes dribbled slowly, header values with
line breaks; and follows a worker's system calls with strace.
"""

import os
import re
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
import gateway  # noqa: E402,F401  (re-exported for the tests)
from gateway import Response  # noqa: E402

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..", "examples")
DEMO_QUESTIONS = os.path.join(EXAMPLES, "demo-questions.json")


def setup_demo(g):
    """The demo schema on the lexical backend, granted to an application
    "app" with room for any load; returns its key."""
    g.admin("backend", "add", "lex", "--kind", "lexical")
    g.admin("schema", "publish", "demo", "--questions", DEMO_QUESTIONS,
            "--backend", "lex")
    key = g.new_key("app", "--rate-per-minute", "1000000")
    g.admin("grant", "app", "demo")
    return key


# strace -y: 1234 pwrite64(7</path/evalgate.db-wal>, ...) = 4096
STRACE_CALL = re.compile(r"^\d+\s+(\w+)\((\d+)<([^>]*)>")


def strace_lines(g, calls, action):
    """Runs action() while strace follows g's first worker, tracing the
    given system calls (strace's -e trace= list); returns action's
    result and the lines strace wrote, in order."""
    out = os.path.join(g.dir, "strace.txt")
    st = subprocess.Popen(["strace", "-f", "-y", "-o", out,
                           "-e", "trace=" + ",".join(calls),
                           "-p", str(g.worker_pids()[0])],
                          stderr=subprocess.PIPE)
    st.stderr.readline()            # "strace: Process N attached"
    try:
        result = action()
        time.sleep(0.2)
    finally:
        st.send_signal(signal.SIGINT)
        st.wait(10)
    with open(out) as f:
        return result, f.read().splitlines()


def strace_worker(g, calls, action):
    """strace_lines(), the calls on a file descriptor as (name, fd, the
    file or socket strace names)."""
    result, lines = strace_lines(g, calls, action)
    return result, [(m.group(1), int(m.group(2)), m.group(3))
                    for m in map(STRACE_CALL.match, lines) if m]


def head(method, path, headers):
    """The request line and headers, as bytes (values sent verbatim)."""
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1"]
    lines += ["%s: %s" % kv for kv in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def parse_response(data):
    """A Response from the raw bytes of one answer, or None."""
    if b"\r\n\r\n" not in data:
        return None
    top, body = data.split(b"\r\n\r\n", 1)
    lines = top.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        return None
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        out, rest = b"", body
        while rest:
            size, _, rest = rest.partition(b"\r\n")
            n = int(size.split(b";")[0] or b"0", 16)
            if n == 0:
                break
            out, rest = out + rest[:n], rest[n + 2:]
        body = out
    elif "content-length" in headers:
        body = body[:int(headers["content-length"])]
    return Response(status, headers, body)


def raw(port, pieces, timeout=30, delay=0.0, close=False):
    """Sends pieces (bytes each) with delay seconds between them, then
    reads one answer (the server closes: Connection: close is the
    caller's to send).  close=True closes right after sending instead,
    and returns None.  Returns a Response, or None if the connection
    ended without one."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        for i, p in enumerate(pieces):
            if i and delay:
                time.sleep(delay)
            s.sendall(p)
        if close:
            return None
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            data += chunk
        return parse_response(data)
    except (BrokenPipeError, ConnectionResetError):
        return None
    finally:
        s.close()


def chunked(body, size=65536):
    """body (bytes) in chunked transfer coding."""
    out = b""
    for i in range(0, len(body), size):
        piece = body[i:i + size]
        out += b"%x\r\n%s\r\n" % (len(piece), piece)
    return out + b"0\r\n\r\n"
