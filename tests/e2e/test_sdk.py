"""test_sdk: the official TypeSafe JavaScript SDK as a drop-in client.

Starts the gateway (lexical backends, the "sdk" schema published and
granted, a second application limited to a few calls per minute),
installs the pinned @typesafe-ai/sdk with npm, runs tests/sdk/sdk.test.mjs
with `node --test` against the gateway, and re-emits each of node's
top-level tests as one TAP point.  It does so twice: with the "sdk" schema
bound to a lexical backend, then bound to an `openai` backend on the fake
OpenAI-compatible server (tests/e2e/fake_openai.py), so that the SDK's
typed answers also hold for distributions read from token
log-probabilities.  npm installs into the build tree's
tests/sdk (a copy of package.json and the test file), so the source tree
stays untouched and concurrent builds do not share a node_modules.  An
install that cannot happen (no node, no npm, no registry) is a failure,
never a skip.
"""

import fcntl
import json
import os
import re
import shutil
import subprocess
import time
import traceback

from gateway import BUILDDIR, SRCDIR, Gateway, OpenAIUpstream, TAP

SDK_SRC = os.path.abspath(os.path.join(SRCDIR, "tests", "sdk"))
SDK_RUN = os.path.abspath(os.path.join(BUILDDIR, "tests", "sdk"))
SDK_FILES = ("package.json", "sdk.test.mjs")
PACKAGE = "@typesafe-ai/sdk"
LIMITED_RATE = 2

# The structure of QUESTIONS in sdk.test.mjs (texts aside: the
# fingerprint ignores them, but not the score levels).
SCHEMA = {
    "department": {"type": "choice", "instructions": "Team?",
                   "criteria": {"billing": None, "technical": None,
                                "sales": None}},
    "urgency": {"type": "score", "instructions": "Urgency?",
                "criteria": ["whenever", "this week", "today",
                             "outage right now"]},
    "refund": {"type": "noul"},
    "escalate": {"type": "noul"},
}
MODELS = [
    {"name": "lexical", "description": "built-in baseline",
     "release_date": "2026-11-01"},
    {"name": "jev-mirror", "description": "a second lexical backend",
     "release_date": "2026-12-24"},
]

# The openai pass: its backend, listed with the others, and the fake's
# answer for the department question (billing first, as the lexical
# backend finds from the state: the client's texts reach the prompt).
OPENAI_MODEL = {"name": "local", "description": "an OpenAI-compatible fake",
                "release_date": "2026-12-31"}
BILLING = "invoice charged twice payment"   # billing's description

POINT = re.compile(r"^(not )?ok (\d+) - (.*?)(?: # (SKIP|TODO)\b.*)?$")
PLAN = re.compile(r"^1\.\.(\d+)$")


def write_json(g, name, obj):
    path = os.path.join(g.dir, name)
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


def setup(g, fake=None):
    """Backends, schemas, the two applications; returns their keys.  With
    a fake OpenAI-compatible server, "sdk" is bound to an openai backend
    on it."""
    a = g.admin
    for m in MODELS:
        a("backend", "add", m["name"], "--kind", "lexical", "--description",
          m["description"], "--release-date", m["release_date"])
    a("backend", "add", "off", "--kind", "lexical", "--description",
      "disabled", "--release-date", "2026-01-01")
    a("backend", "disable", "off")
    backend = "lexical"
    if fake is not None:
        backend = OPENAI_MODEL["name"]
        a("backend", "add", backend, "--kind", "openai", "--url", fake.url,
          "--model", "m-sdk", "--description", OPENAI_MODEL["description"],
          "--release-date", OPENAI_MODEL["release_date"])
        fake.control(answers={BILLING: [0.6, 0.3, 0.1]})
    a("schema", "publish", "sdk", "--questions",
      write_json(g, "sdk.json", SCHEMA), "--backend", backend)
    a("schema", "publish", "sdk_secret", "--questions",
      write_json(g, "secret.json", {"secret": {"type": "noul"}}),
      "--backend", "lexical")
    key = g.new_key("sdk")
    limited = g.new_key("sdk_limited", "--rate-per-minute",
                        str(LIMITED_RATE))
    a("grant", "sdk", "sdk")
    a("grant", "sdk_limited", "sdk")
    return key, limited


def pinned_version():
    with open(os.path.join(SDK_SRC, "package.json")) as f:
        return json.load(f)["dependencies"][PACKAGE]


def installed_version():
    try:
        with open(os.path.join(SDK_RUN, "node_modules", PACKAGE,
                               "package.json")) as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


def install(t):
    """Puts the test and the pinned SDK in SDK_RUN; one TAP point.  One
    test at a time (test_shared_hosting.py runs the SDK too)."""
    os.makedirs(SDK_RUN, exist_ok=True)
    with open(os.path.join(SDK_RUN, ".install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return install_locked(t)


def install_locked(t):
    want = pinned_version()
    if SDK_RUN != SDK_SRC:
        for name in SDK_FILES:
            shutil.copyfile(os.path.join(SDK_SRC, name),
                            os.path.join(SDK_RUN, name))
    if installed_version() == want:
        return t.ok(True, "%s %s already installed" % (PACKAGE, want))
    if shutil.which("npm") is None:
        return t.ok(False, "npm install %s %s" % (PACKAGE, want),
                    "npm is not installed: run tools/deps.sh --test")
    try:
        p = subprocess.run(["npm", "install", "--no-save", "--no-audit",
                            "--no-fund"], cwd=SDK_RUN, capture_output=True,
                           text=True, timeout=300)
        out, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired:
        out, rc = "npm install ran past 300 s (registry unreachable?)", -1
    got = installed_version()
    return t.ok(rc == 0 and got == want,
                "npm install %s %s" % (PACKAGE, want),
                "the SDK test needs the npm registry (%s): npm exit %d, "
                "installed %r\n%s" % (npm_registry(), rc, got, out[-2000:]))


def npm_registry():
    try:
        return subprocess.run(["npm", "config", "get", "registry"],
                              capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def parse_tap(text):
    """node's TAP -> ([(ok, name, diagnostics)], plan or None).  Only
    top-level points count; a point's YAML block and indented subtests
    are its diagnostics."""
    points, plan, block = [], None, None
    for line in text.splitlines():
        m = POINT.match(line)
        if m:
            block = []
            name = m.group(3).replace("\\#", "#").replace("\\\\", "\\")
            # A skipped or todo SDK test did not pass.
            points.append((m.group(1) is None and m.group(4) is None,
                           name, block))
            continue
        m = PLAN.match(line)
        if m:
            plan = int(m.group(1))
        elif line.startswith(" ") and block is not None and \
                "duration_ms" not in line:
            block.append(line)
        elif not line.startswith(" "):
            block = None
    return points, plan


def run_node(t, g, key, limited, backend="lexical", models=MODELS,
             prefix="sdk: ", base=None):
    """The SDK's tests against g, with baseURL `base` (default: g's
    root)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TYPESAFE_")}
    env.update({
        "EVALGATE_URL": base or "http://127.0.0.1:%d" % g.port,
        "EVALGATE_KEY": key,
        "EVALGATE_LIMITED_KEY": limited,
        "EVALGATE_LIMITED_RATE": str(LIMITED_RATE),
        "EVALGATE_MODELS": json.dumps(models),
        "EVALGATE_BACKEND": backend,
    })
    started = time.time()
    try:
        p = subprocess.run(["node", "--test", "--test-reporter=tap",
                            "sdk.test.mjs"], cwd=SDK_RUN, env=env,
                           capture_output=True, text=True, timeout=300)
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, err, rc = e.stdout or "", "node --test ran past 300 s", -1
        out = out if isinstance(out, str) else out.decode()
    took = time.time() - started
    points, plan = parse_tap(out)
    for ok, name, diag in points:
        t.ok(ok, prefix + name, "\n".join(diag))
    print("# node --test (%s): %d tests in %.2f s" % (backend, len(points),
                                                      took))
    # node exits 1 when a test failed; anything else (a crash, a missing
    # plan, fewer points than planned) is a failure of its own.
    want_rc = 0 if all(ok for ok, _, _ in points) else 1
    t.ok(points and plan == len(points) and rc == want_rc,
         "%snode --test ran every SDK test to the end" % prefix,
         "exit %d (want %d), %d points, plan %r\n%s\n%s" %
         (rc, want_rc, len(points), plan, err[-2000:],
          "" if points else out[-1500:]))


def run_pass(t, installed, openai):
    """One gateway, the SDK test against it; with openai, "sdk" is bound
    to an openai backend on a fake OpenAI-compatible server."""
    g = Gateway(workers=2)
    fake = OpenAIUpstream() if openai else None
    what = " (openai backend)" if openai else ""
    try:
        keys = setup(g, fake)
        g.start()
        if installed:
            if openai:
                run_node(t, g, *keys, backend=OPENAI_MODEL["name"],
                         models=MODELS + [OPENAI_MODEL],
                         prefix="sdk (openai backend): ")
            else:
                run_node(t, g, *keys)
        if installed and openai:
            seen = fake.requests()
            t.ok(bool(seen) and all(r["status"] == 200 and
                              r["body"]["model"] == "m-sdk" for r in seen),
                 "the openai backend's fake answered every call (%d)" %
                 len(seen), [r["status"] for r in seen])
            t.ok(any(r["matched"] == BILLING for r in seen),
                 "the department question's texts reached the prompt")
        t.ok(keys[0] not in g.log() and keys[1] not in g.log(),
             "keys are never logged" + what)
        t.stop_clean(g, "no sanitizer reports" + what)
    finally:
        g.cleanup()
        if fake is not None:
            fake.stop()


def main():
    t = TAP()
    installed = False
    if shutil.which("node") is None:
        t.ok(False, "node is installed",
             "node is missing: run tools/deps.sh --test")
    else:
        installed = install(t)
    for openai in (False, True):
        try:
            run_pass(t, installed, openai)
        except Exception:
            t.ok(False, "the %s pass raised" %
                 ("openai" if openai else "lexical"), traceback.format_exc())
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
