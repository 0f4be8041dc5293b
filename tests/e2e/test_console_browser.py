"""test_console_browser: the operator's console in a real browser.

Installs the pinned puppeteer-core and the official SDK with npm (the
SDK test's way: into the build tree's tests/console), starts the
gateway under lighttpd with nothing but an administrator's key, and
runs tests/console/browser.test.mjs, which drives Debian's headless
Chromium through the console: log in, add a backend, create an application,
issue a key (and copy it), publish a schema from pasted JSON and grant
it, evaluate with the SDK, find the decision in the list and open it,
record an outcome through the API and see it, open the calibration
page, add a challenger on a schema's page, log out.  Every step saves a
screenshot under tests/e2e/artifacts/console/ in the build tree, and
the run fails on any
console error, uncaught exception, failed request or 4xx/5xx a page
saw.  No Chromium or no npm registry is a failure, not a skip: run
tools/deps.sh --test."""

import fcntl
import os
import shutil
import subprocess

from gateway import BUILDDIR, SRCDIR, Gateway, TAP
from test_sdk import parse_tap

SRC = os.path.abspath(os.path.join(SRCDIR, "tests", "console"))
RUN = os.path.abspath(os.path.join(BUILDDIR, "tests", "console"))
FILES = ("package.json", "browser.test.mjs")
SHOTS = os.path.abspath(os.path.join(BUILDDIR, "tests", "e2e", "artifacts",
                                     "console"))


def install(t):
    """The test and its pinned packages in RUN; one TAP point."""
    os.makedirs(RUN, exist_ok=True)
    with open(os.path.join(RUN, ".install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if RUN != SRC:
            for name in FILES:
                shutil.copyfile(os.path.join(SRC, name),
                                os.path.join(RUN, name))
        if shutil.which("npm") is None:
            return t.ok(False, "npm install", "npm is not installed: run "
                        "tools/deps.sh --test")
        try:
            p = subprocess.run(["npm", "install", "--no-save", "--no-audit",
                                "--no-fund"], cwd=RUN, capture_output=True,
                               text=True, timeout=300)
            out, rc = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired:
            out, rc = "npm install ran past 300 s (registry?)", -1
        return t.ok(rc == 0 and os.path.isdir(os.path.join(
            RUN, "node_modules", "puppeteer-core")),
            "npm install puppeteer-core and the SDK", out[-2000:])


def run(t, g, admin_key, chromium):
    shutil.rmtree(SHOTS, ignore_errors=True)
    os.makedirs(SHOTS)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TYPESAFE_")}
    env.update({
        "EVALGATE_CONSOLE": "http://127.0.0.1:%d/admin/console" %
        g.admin_port,
        "EVALGATE_URL": "http://127.0.0.1:%d" % g.port,
        "EVALGATE_ADMIN_KEY": admin_key,
        "EVALGATE_CHROMIUM": chromium,
        "EVALGATE_SHOTS": SHOTS,
    })
    try:
        p = subprocess.run(["node", "--test", "--test-reporter=tap",
                            "--test-concurrency=1", "browser.test.mjs"],
                           cwd=RUN, env=env, capture_output=True, text=True,
                           timeout=600)
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, err, rc = e.stdout or "", "node --test ran past 600 s", -1
        out = out if isinstance(out, str) else out.decode()
    points, plan = parse_tap(out)
    for ok, name, diag in points:
        t.ok(ok, "browser: " + name, "\n".join(diag))
    want_rc = 0 if all(ok for ok, _, _ in points) else 1
    t.ok(points and plan == len(points) and rc == want_rc,
         "node --test ran every step to the end",
         "exit %d, %d points, plan %r\n%s\n%s" % (rc, len(points), plan,
                                                  err[-2000:], out[-1500:]))
    for name in ("login", "overview", "backends", "application", "key",
                 "schemas",
                 "decisions", "decision", "decision-outcome",
                 "calibration", "schema", "logged-out"):
        path = os.path.join(SHOTS, name + ".png")
        with open(path, "rb") if os.path.exists(path) else \
                open(os.devnull, "rb") as f:
            t.eq(f.read(8), b"\x89PNG\r\n\x1a\n",
                 "screenshot %s.png kept" % name)


def main():
    t = TAP()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not t.ok(chromium is not None, "Chromium is installed",
                "run tools/deps.sh --test"):
        return t.done()
    if not install(t):
        return t.done()
    g = Gateway(workers=2)
    try:
        admin_key = g.new_key("root", "--admin")
        g.start()
        run(t, g, admin_key, chromium)
        t.stop_clean(g)
    finally:
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
