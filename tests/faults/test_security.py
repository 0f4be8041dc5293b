"""test_security: the checks of the key path, the logs, the pepper and
the administration listener.

- A wrong secret costs the same whether 0 or 31 of its 32 characters are
  right, and costs no argon2id.  Method: the secret is never compared as
  text.  Each key row keeps a keyed BLAKE2b of its secret (key derived
  from the pepper, compared with sodium_memcmp); a secret whose keyed
  hash does not match is refused at once, and only a matching one
  reaches argon2id, as HMAC(pepper, secret), whose stored hash libsodium
  compares in constant time.  The memo is looked up by a keyed BLAKE2b
  of the whole token.  So a secret right but for its last character is,
  to every comparison, as wrong as one wrong from the first.  Over HTTP,
  interleaving the two kinds, the test prints the medians and asserts
  they differ by less than a generous bound (a real leak through a text
  comparison would be nanoseconds, far below what HTTP can show, which
  is why the argument above is the proof and the measurement its check).
- A stranger cannot lock a key out: during a flood of wrong secrets for
  its prefix the right key authenticates, the first time too, and the
  flood runs no argon2id at all.  A key issued before the keyed hash
  existed (its row has none) gets it at its first successful argon2id;
  until then wrong secrets for it run argon2id at most AUTH_MAX_FAILURES
  times a minute per prefix, after which they are refused unhashed.
- An unknown prefix costs no argon2id: no "argon2id verification" line is
  logged for it, nor for a malformed token.  Every cause of refusal gets
  the same 401 body.
- Keys and states never appear in the logs (error log, lighttpd's output,
  sanitizer logs), whatever path a request took.
- A pepper file readable by group or others is refused: the worker exits
  with a clear line, lighttpd answers every request (health included)
  with its own error, and a 0600 or 0400 pepper starts.
- An administration route is unreachable from the public listener: 404
  in the spec's format for the admin key, with a spoofed Host naming the
  admin port, with an absolute URI naming it, and under path variants.
"""

import os
import random
import statistics
import string
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import DEMO_QUESTIONS, head, raw  # noqa: E402
from gateway import Gateway, TAP, wait_port  # noqa: E402

BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
MARKER = "zq-secret-state-8841"
STATE = "the checkout is broken %s refund now" % MARKER
EVAL = {"state": STATE, "x_schema": {"id": "demo"}}
MAX_FAILURES = 10               # AUTH_MAX_FAILURES
# The medians may differ by half the larger one, or 1 ms: generous for a
# noisy machine running other tests at once, and still far below what
# skipping argon2id for some secrets would show (25 ms against 0.5 ms).
RELATIVE = 0.5
ABSOLUTE_MS = 1.0


def with_secret(key, secret):
    return key[:13] + secret


def wrong(secret, right):
    """A secret sharing its first `right` characters with secret."""
    rest = "".join(random.choice(BASE62) for _ in range(32 - right))
    if rest[0] == secret[right]:
        rest = BASE62[(BASE62.index(rest[0]) + 1) % 62] + rest[1:]
    return secret[:right] + rest


def timed(g, key):
    start = time.perf_counter()
    r = g.get("/v1/models", key=key)
    return r, (time.perf_counter() - start) * 1000


def argon_lines(g, prefix):
    return g.log().count("argon2id verification for key %s" % prefix)


def medians(t, name, samples):
    m0, m31 = statistics.median(samples[0]), statistics.median(samples[31])
    print("# %s: median of %d attempts sharing 0 characters %.3f ms, "
          "31 characters %.3f ms" % (name, len(samples[0]), m0, m31))
    t.ok(abs(m0 - m31) <= max(RELATIVE * max(m0, m31), ABSOLUTE_MS),
         "%s: the medians differ by less than %d%% or %.0f ms (%.3f vs "
         "%.3f ms)" % (name, RELATIVE * 100, ABSOLUTE_MS, m0, m31))


def test_timing(t, g, key):
    refusal = None
    samples = {0: [], 31: []}
    for i in range(4):
        k = g.new_key("timing")
        s = k[13:]
        order = [0, 31] * 10
        random.shuffle(order)
        for right in order:
            r, ms = timed(g, with_secret(k, wrong(s, right)))
            samples[right].append(ms)
            refusal = refusal or r.body
            t.ok(r.status == 401, "wrong secret, %d right: 401" % right)
        t.eq(argon_lines(g, k[4:12]), 0, "none of the 20 wrong attempts on "
             "key %d ran argon2id, almost right or not" % i)
    medians(t, "keyed-hash path", samples)
    return refusal


def test_no_lockout(t, g):
    """The right key works during a flood of wrong ones for its prefix,
    the first time it is used too; the flood costs no argon2id."""
    k = g.new_key("flooded")
    for _ in range(3 * MAX_FAILURES):
        r, _ = timed(g, with_secret(k, wrong(k[13:], 0)))
    t.eq(r.status, 401, "a flood of %d wrong secrets: 401" %
         (3 * MAX_FAILURES))
    r, _ = timed(g, k)
    t.eq(r.status, 200, "then the right key, never used before: 200")
    for _ in range(MAX_FAILURES):
        timed(g, with_secret(k, wrong(k[13:], 31)))
    t.eq(timed(g, k)[0].status, 200, "and again during more of the flood")
    t.eq(argon_lines(g, k[4:12]), 1, "argon2id ran once: for the right key")
    # The cache deleted (the memo gone): still no lock-out.
    os.unlink(os.path.join(g.dir, "cache.db"))
    for _ in range(MAX_FAILURES + 1):
        timed(g, with_secret(k, wrong(k[13:], 0)))
    t.eq(timed(g, k)[0].status, 200, "the cache deleted, the right key "
         "after another flood: 200")

    # A key from before the keyed hash: its row has none.
    old = g.new_key("legacy")
    g.sql("UPDATE api_keys SET secret_check = NULL WHERE prefix = ?",
          (old[4:12],))
    for _ in range(2 * MAX_FAILURES):
        timed(g, with_secret(old, wrong(old[13:], 0)))
    t.eq(argon_lines(g, old[4:12]), MAX_FAILURES,
         "a key without a keyed hash: wrong secrets ran argon2id %d times "
         "in the minute, then none (the budget)" % MAX_FAILURES)
    old2 = g.new_key("legacy")
    g.sql("UPDATE api_keys SET secret_check = NULL WHERE prefix = ?",
          (old2[4:12],))
    t.eq(timed(g, old2)[0].status, 200, "another such key, used: 200")
    t.ok(g.sql("SELECT secret_check IS NOT NULL FROM api_keys WHERE "
               "prefix = ?", (old2[4:12],)) == [(1,)],
         "its keyed hash is stored at that first verification")
    for _ in range(2 * MAX_FAILURES):
        timed(g, with_secret(old2, wrong(old2[13:], 0)))
    t.eq(argon_lines(g, old2[4:12]), 1, "from then on a flood costs it no "
         "argon2id")
    t.eq(timed(g, old2)[0].status, 200, "and the right key works")


def test_unknown_prefix(t, g, key, refusal):
    before = g.log().count("argon2id verification")
    bodies = set()
    prefixes = []
    for _ in range(20):
        p = "".join(random.choice(string.ascii_lowercase + string.digits)
                    for _ in range(8))
        prefixes.append(p)
        r, _ = timed(g, "svc_%s_%s" % (p, key[13:]))
        bodies.add((r.status, r.body))
    for token in ("svc_short_x", key + "x", key[:-1], "svc_" + key[4:12],
                  key.upper(), "Basic " + key, ""):
        r = g.get("/v1/models", headers={"Authorization": "Bearer " + token}
                  if not token.startswith("Basic") else
                  {"Authorization": token})
        bodies.add((r.status, r.body))
    r = g.get("/v1/models")
    bodies.add((r.status, r.body))
    t.eq(g.log().count("argon2id verification") - before, 0,
         "20 unknown prefixes and 7 malformed tokens: no argon2id")
    t.ok(all(g.log().count("for key %s" % p) == 0 for p in prefixes),
         "no log line names an unknown prefix")
    revoked = g.new_key("timing")
    g.admin("key", "revoke", revoked[4:12])
    r = g.get("/v1/models", key=revoked)
    bodies.add((r.status, r.body))
    t.eq(bodies, {(401, refusal)}, "one 401 body for every cause (unknown "
         "prefix, wrong secret, malformed, missing, revoked)")


def test_logs(t, g, key, up_key, admin_key):
    """Every path a key and a state can take, then the logs."""
    # Valid, wrong, unknown and malformed keys; states on success,
    # refusal, template and backend failure; the admin key on both ports.
    g.post("/v1/systemone", EVAL, key=key)
    g.post("/v1/systemone", dict(EVAL, state=STATE * 2000), key=key)
    g.post("/v1/systemone", {"state": STATE, "questions": {"x": {
        "type": "noul"}}}, key=key)
    g.post("/v1/systemone", {"state": STATE, "x_schema": {"id": "up"}},
           key=key)
    g.post("/v1/systemone", {"x_template": {"id": "t", "variables": {
        "v": MARKER}}, "x_schema": {"id": "demo"}}, key=key)
    g.post("/v1/systemone", {"x_template": {"id": "t", "variables": {
        "v": 5}}, "x_schema": {"id": "demo"}}, key=key)
    g.post("/v1/systemone", EVAL, key=with_secret(key, wrong(key[13:], 31)))
    g.post("/v1/systemone", EVAL, key="svc_zzzzzzzz_" + key[13:])
    g.post("/v1/systemone", EVAL, key=key + "junk")
    g.get("/admin/v1/applications", key=admin_key)
    g.admin_request("GET", "/admin/v1/applications", key=admin_key)
    g.admin_request("GET", "/admin/v1/applications/sec/decisions/export",
                    key=admin_key)
    g.stop()
    logs = g.log()
    for name in sorted(os.listdir(g.dir)):
        if name.startswith("sanitizer"):
            with open(os.path.join(g.dir, name), errors="replace") as f:
                logs += f.read()
    t.ok("argon2id verification" in logs, "the logs were written and read")
    for what, secret in (("the key", key), ("its secret", key[13:]),
                         ("the admin key", admin_key),
                         ("the admin key's secret", admin_key[13:]),
                         ("the upstream key", up_key),
                         ("the state", MARKER)):
        t.ok(secret not in logs, "%s is not in any log" % what)
    g.start()


def test_pepper(t):
    for mode, starts in ((0o644, False), (0o640, False), (0o604, False),
                         (0o600, True), (0o400, True)):
        g = Gateway(workers=2)
        try:
            os.chmod(os.path.join(g.dir, "pepper"), mode)
            conf = os.path.join(g.dir, "lighttpd.conf")
            with open(conf, "w") as f:
                f.write(g.config())
            g.proc = subprocess.Popen(
                ["lighttpd", "-D", "-f", conf], stdout=subprocess.DEVNULL,
                stderr=open(os.path.join(g.dir, "lighttpd.out"), "w"))
            wait_port(g.port)
            time.sleep(0.5)
            codes = []
            for path in ("/health", "/health/ready", "/v1/models"):
                try:
                    codes.append(g.get(path, timeout=10).status)
                except OSError:
                    codes.append(0)
            time.sleep(0.3)
            g.stop()
            said = "group or others may access it (chmod 600 it)" in g.log()
            if starts:
                t.eq(codes, [200, 200, 401], "pepper %o: the gateway starts"
                     % mode)
                t.ok(not said, "pepper %o: nothing said" % mode)
            else:
                t.ok(all(c != 200 and c not in (401, 404) for c in codes),
                     "pepper %o: health, readiness and every route get "
                     "lighttpd's error, never a 200 (%r)" % (mode, codes))
                t.ok(said, "pepper %o: the worker exits with a clear line"
                     % mode, g.log()[-600:])
        finally:
            g.cleanup()


def test_admin_listener(t, g, admin_key):
    r = g.admin_request("GET", "/admin/v1/applications", key=admin_key)
    t.eq(r.status, 200, "the admin route answers on the internal listener")
    for name, path, extra in (
            ("plain", "/admin/v1/applications", {}),
            ("spoofed Host", "/admin/v1/applications",
             {"Host": "127.0.0.1:%d" % g.admin_port}),
            ("X-Forwarded headers", "/admin/v1/applications",
             {"X-Forwarded-Host": "127.0.0.1:%d" % g.admin_port,
              "X-Forwarded-Port": str(g.admin_port),
              "X-Forwarded-For": "127.0.0.1"}),
            ("a query", "/admin/v1/applications?x=1", {}),
            ("a dot segment", "/v1/../admin/v1/applications", {}),
            ("a double slash", "//admin/v1/applications", {}),
            ("percent-encoded", "/%61dmin/v1/applications", {}),
            ("upper case", "/ADMIN/v1/applications", {}),
            ("another route", "/admin/v1/backends", {}),
            ("a POST", "/admin/v1/applications", {})):
        method = "POST" if name == "a POST" else "GET"
        body = {"name": "intruder"} if method == "POST" else None
        r = g.request(method, path, body, key=admin_key, headers=extra)
        t.error_is(r, 404, "not_found", "public listener, %s: 404" % name)
    resp = raw(g.port, [head("GET", "http://127.0.0.1:%d/admin/v1/"
                             "applications" % g.admin_port,
                             {"Authorization": "Bearer " + admin_key,
                              "Connection": "close"})])
    t.ok(resp is not None and resp.status in (400, 404),
         "public listener, an absolute URI naming the admin port: "
         "lighttpd's 400 (its host is not the Host header) or a 404",
         resp)
    resp = raw(g.port, [("GET http://127.0.0.1:%d/admin/v1/applications "
                         "HTTP/1.1\r\nAuthorization: Bearer %s\r\n"
                         "Connection: close\r\n\r\n" %
                         (g.admin_port, admin_key)).encode()])
    t.ok(resp is not None and resp.status in (400, 404),
         "public listener, an absolute URI and no Host: a 4xx", resp)
    r = g.admin_request("GET", "/admin/v1/applications", key=admin_key)
    t.ok("intruder" not in r.body.decode(), "the POST created nothing")


def main():
    t = TAP()
    random.seed()
    g = Gateway(workers=2, env={"UPSTREAM_KEY": "upstream-secret-key-5521"})
    try:
        g.admin("backend", "add", "lex", "--kind", "lexical")
        g.admin("backend", "add", "up", "--kind", "systemone", "--url",
                "http://127.0.0.1:9", "--auth-env", "UPSTREAM_KEY",
                "--timeout-ms", "1000")
        g.admin("schema", "publish", "demo", "--questions", DEMO_QUESTIONS,
                "--backend", "lex")
        qfile = os.path.join(g.dir, "up.json")
        with open(qfile, "w") as f:
            f.write('{"upq": {"type": "noul"}}')
        g.admin("schema", "publish", "up", "--questions", qfile,
                "--backend", "up")
        with open(os.path.join(g.dir, "t.txt"), "w") as f:
            f.write("{{v}} is broken")
        with open(os.path.join(g.dir, "t.json"), "w") as f:
            f.write('{"v": "string"}')
        g.admin("template", "publish", "t", "--body",
                os.path.join(g.dir, "t.txt"), "--variables",
                os.path.join(g.dir, "t.json"))
        key = g.new_key("sec", "--log-state", "--rate-per-minute", "100000")
        g.admin("grant", "sec", "demo")
        g.admin("grant", "sec", "up")
        g.admin("app", "create", "timing", "--rate-per-minute", "100000")
        admin_key = g.new_key("root", "--admin", "--rate-per-minute",
                              "100000")
        g.start()
        refusal = None
        try:
            refusal = test_timing(t, g, key)
        except Exception as e:
            import traceback
            t.ok(False, "test_timing raised %r" % e, traceback.format_exc())
        t.run([test_unknown_prefix], g, key, refusal)
        t.run([test_no_lockout], g)
        t.run([test_logs], g, key, "upstream-secret-key-5521", admin_key)
        t.run([test_admin_listener], g, admin_key)
        t.stop_clean(g)
    finally:
        g.cleanup()
    t.run([test_pepper])
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
