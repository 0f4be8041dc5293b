"""bench/probe.py: what the counting tools share (bench/syscalls.py,
bench/instructions.py, bench/frames.py): bench/run loaded as a module
(`br`), their command line's common part, the build, a work folder and,
with --upstream, bench/run's fixed-answer nginx; the bench's body, and
evaluations sent one after the other."""

import atexit
import http.client
import importlib.machinery
import importlib.util
import json
import os
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
_loader = importlib.machinery.SourceFileLoader(
    "benchrun", os.path.join(TOP, "bench", "run"))
_spec = importlib.util.spec_from_loader("benchrun", _loader)
br = importlib.util.module_from_spec(_spec)
_loader.exec_module(br)


def setup(ap, name):
    """Adds --upstream and the worker programs to argument parser ap,
    parses the command line, builds bench/run's worker, makes a work
    folder and, with --upstream, starts the nginx (stopped at exit).
    Returns (arguments, folder, nginx or None)."""
    ap.add_argument("--upstream", action="store_true",
                    help="the systemone path to bench/run's fixed-answer"
                    " nginx")
    ap.add_argument("workers", nargs="+")
    a = ap.parse_args()
    br.build()
    work = tempfile.mkdtemp(prefix="evalgate-%s-" % name)
    upstream = br.Nginx(work) if a.upstream else None
    atexit.register(lambda: upstream and upstream.stop())
    return a, work, upstream


def body(upstream):
    """The bench's request, as bytes: the lexical schema's questions, or
    the systemone backend's with an upstream."""
    return json.dumps({"model": "jev-latest", "state": br.STATE,
                       "questions": br.UP_QUESTIONS if upstream
                       else br.QUESTIONS}).encode()


def post(g, key, data, n, each=None):
    """Sends n evaluations of data to gateway g one after the other over
    one connection, each answered 200 or RuntimeError; each(i), if
    given, after the i-th (from 1)."""
    c = http.client.HTTPConnection("127.0.0.1", g.port, timeout=120)
    headers = {"Authorization": "Bearer " + key,
               "Content-Type": "application/json"}
    try:
        for i in range(1, n + 1):
            c.request("POST", "/v1/systemone", body=data, headers=headers)
            r = c.getresponse()
            text = r.read()
            if r.status != 200:
                raise RuntimeError("%d: %s" % (r.status, text))
            if each:
                each(i)
    finally:
        c.close()
