"""test_readme_sdk: the README's "From your code" section, run as
written, against a real gateway: its JavaScript block with the official
SDK (@typesafe-ai/sdk, installed as test_sdk.py installs it) and its
curl block with sh.  The blocks are read from README.md, so that the
README and this test cannot drift apart.  Each must evaluate (the SDK
through TYPESAFE_BASE_URL and TYPESAFE_API_KEY, the gateway's root
without /v1), print the decision's x_decision_id, and record an outcome
that GET /v1/decisions/{id} then shows."""

import os
import re
import shutil
import subprocess

from gateway import SRCDIR, Gateway, TAP
from test_sdk import SDK_RUN, install

README = os.path.join(SRCDIR, "README.md")
SECTION = "## From your code"
UUID7 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
                   r"[0-9a-f]{12}")


def blocks():
    """{language: [code]} of the fenced blocks of the section."""
    with open(README) as f:
        text = f.read()
    start = text.find("\n" + SECTION + "\n")
    if start == -1:
        return {}
    end = text.find("\n## ", start + 1)
    section = text[start:end if end != -1 else len(text)]
    found = {}
    for lang, code in re.findall(r"\n```(\w*)\n(.*?)\n```", section, re.S):
        found.setdefault(lang, []).append(code + "\n")
    return found


def outcomes(g, key, did):
    r = g.get("/v1/decisions/" + did, key=key)
    return r.json().get("outcomes", {}) if r.status == 200 else r


def run_block(t, g, key, argv, cwd, what):
    """One block of the section, run with the environment it names; it
    must print the decision's id and record its outcome."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TYPESAFE_")}
    env.update(TYPESAFE_BASE_URL="http://127.0.0.1:%d" % g.port,
               TYPESAFE_API_KEY=key)
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=120)
    ids = UUID7.findall(p.stdout)
    t.ok(p.returncode == 0 and ids,
         "README's %s block: evaluates and prints x_decision_id" % what,
         "exit %d\n%s\n%s" % (p.returncode, p.stdout, p.stderr))
    if ids:
        got = outcomes(g, key, ids[0])
        t.ok(isinstance(got, dict) and got and
             all(o.get("source") for o in got.values()),
             "README's %s block: the outcome it posted is recorded" % what,
             got)


def run_js(t, g, key, code):
    """The SDK block, beside the SDK installed in SDK_RUN."""
    path = os.path.join(SDK_RUN, "readme-from-your-code.mjs")
    with open(path, "w") as f:
        f.write(code)
    run_block(t, g, key, ["node", path], SDK_RUN, "SDK")


def run_sh(t, g, key, code):
    """The curl block, from the top of the tree (examples/)."""
    run_block(t, g, key, ["sh", "-eu", "-c", code], SRCDIR, "curl")


def main():
    t = TAP()
    found = blocks()
    js = found.get("js", [])
    curl = [c for c in found.get("sh", []) if "curl" in c]
    t.ok(js and curl, "README.md has a section %r with a js block and a "
         "curl block" % SECTION[3:], sorted(found))
    t.ok(any("npm install @typesafe-ai/sdk" in c for c in found.get("sh", [])),
         "the section says how to install the SDK")
    t.ok(js and "x_decision_id" in js[0] and "/outcome" in js[0],
         "the SDK block reads x_decision_id and posts an outcome")
    installed = False
    if shutil.which("node") is None:
        t.ok(False, "node is installed", "run tools/deps.sh --test")
    else:
        installed = install(t)
    g = Gateway()
    try:
        g.admin("backend", "add", "lexical", "--kind", "lexical")
        g.admin("schema", "publish", "demo", "--questions",
                os.path.join(SRCDIR, "examples", "demo-questions.json"),
                "--backend", "lexical")
        key = g.new_key("demo")
        g.admin("grant", "demo", "demo")
        g.start()
        if js and installed:
            run_js(t, g, key, js[0])
        if curl:
            run_sh(t, g, key, curl[0])
        t.stop_clean(g)
    finally:
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
