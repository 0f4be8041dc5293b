"""peers.py: bench/run --peers: the Portkey AI gateway (npm
@portkey-ai/gateway), started headless in front of the bench's nginx, as
the peer the proxy path is compared with (doc/design.md, section 21).

The package is installed with npm into ~/.cache/evalgate-bench/portkey
(or $BENCH_PEERS_DIR) on first use.  Portkey is told to call an OpenAI
provider at a custom host, the same nginx, which answers a fixed chat
completion: x-portkey-provider: openai, x-portkey-custom-host.
"""

import json
import os
import re
import shutil
import subprocess
import time

import gateway  # noqa: E402  (bench/run put tests/e2e on the path)

PACKAGE = "@portkey-ai/gateway"
CHAT_BODY = {"model": "bench", "messages": [
    {"role": "user", "content": "The checkout page is broken. Refund?"}]}
CHAT_ANSWER = {
    "id": "chatcmpl-bench", "object": "chat.completion", "created": 0,
    "model": "bench",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "negative"}}],
    "usage": {"prompt_tokens": 12, "completion_tokens": 1,
              "total_tokens": 13}}
HEADERS = {"x-portkey-provider": "openai",
           "Authorization": "Bearer bench-not-a-key"}


class Unavailable(Exception):
    """npm or the package cannot be had: --peers is skipped."""


def install():
    """The package's directory, installing it if needed."""
    root = os.environ.get("BENCH_PEERS_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "evalgate-bench", "portkey")
    pkg = os.path.join(root, "node_modules", "@portkey-ai", "gateway")
    if os.path.exists(os.path.join(pkg, "build", "start-server.js")):
        return pkg
    if shutil.which("npm") is None or shutil.which("node") is None:
        raise Unavailable("npm or node is not installed")
    os.makedirs(root, exist_ok=True)
    try:
        p = subprocess.run(["npm", "install", "--no-audit", "--no-fund",
                            "--prefix", root, PACKAGE],
                           capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise Unavailable("npm install %s timed out" % PACKAGE)
    if p.returncode != 0 or not os.path.exists(
            os.path.join(pkg, "build", "start-server.js")):
        raise Unavailable("npm install %s failed: %s" % (
            PACKAGE, (p.stderr.strip().splitlines() or ["?"])[-1]))
    return pkg


class Portkey:
    """A headless Portkey gateway on a free port, its OpenAI provider's
    host set to upstream_url (which must answer /v1/chat/completions)."""

    def __init__(self, workdir, upstream_url):
        pkg = install()
        with open(os.path.join(pkg, "package.json")) as f:
            self.version = json.load(f).get("version", "?")
        self.port = gateway.free_port()
        self.log = open(os.path.join(workdir, "portkey.log"), "w")
        self.proc = subprocess.Popen(
            ["node", os.path.join(pkg, "build", "start-server.js"),
             "--port=%d" % self.port, "--headless"],
            stdout=self.log, stderr=subprocess.STDOUT,
            env=dict(os.environ, NODE_ENV="production"))
        if not gateway.wait_port(self.port):
            self.stop()
            raise Unavailable("the Portkey gateway did not start")
        HEADERS["x-portkey-custom-host"] = upstream_url + "/v1"
        self.url = "http://127.0.0.1:%d/v1/chat/completions" % self.port
        time.sleep(0.5)

    def rss_kib(self):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
        except (OSError, AttributeError):
            return 0

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
