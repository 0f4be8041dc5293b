"""test_hostile_upstream: an `openai` upstream that answers in bad faith
fails only what it answered, and none of its bytes reach a client or
the log (README, "Faults and hardening").

Over real lighttpd with two workers, against tests/e2e/fake_openai.py
sending what each case sets (control raw_body, raw_status, raw_headers,
pad_bytes):

- the key of --auth-env reflected back in an object key (with \\u0000,
  or with NaN or 1e999 as its value), a string value, a token, an error
  message, a truncated or trailing text, and a response header: each is
  a 503 whose body does not hold the key, and the gateway's whole log
  never holds it (nor any upstream text: a marker the fake sends);
- usage out of range (INT64_MAX, 10^9 + 1, negative, 1.5, or two
  replies whose sum passes 10^9): 503, the answer does not fit; within
  range, the sums are relayed and stored;
- the same token repeated in top_logprobs counts once; a label mass
  above 1 (distinct tokens of one label summing past it) and a logprob
  above 0 do not fit;
- an evaluation's replies total at most 8 MiB (12 replies of 1 MiB:
  503; 12 of 600 KB: 200), and its calls end by the backend's timeout;
- a 200 KB response header: 503 "headers too large" (not "out of
  memory"), a failure of the replica: two in a row rest it;
- Retry-After beyond a minute is cut to one.

Afterwards no sanitizer reported anything.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from gateway import Gateway, OpenAIUpstream, TAP  # noqa: E402

KEY_VAR = "EVALGATE_TEST_HOSTILE_KEY"
KEY = "sk-hostile-7f3e9a1c5b2d4e6f"
MARK = "UPSTREAM-TEXT-MARK"      # upstream text that must not be logged
QS = {"hq_pick": {"type": "choice", "instructions": "HQ pick one",
                  "criteria": {"x": "the first", "y": "the second"}},
      "hq_yes": {"type": "noul", "instructions": "HQ is it so?"}}
WIDE = {"w%d" % i: {"type": "noul", "instructions": "W%d" % i}
        for i in range(12)}
SLOW = {"s%d" % i: {"type": "noul", "instructions": "S%d" % i}
        for i in range(4)}


def reply(top, usage=None, extra=""):
    """A chat completion whose first token's top_logprobs are top, a
    list of (token, logprob) pairs, as JSON text."""
    entries = ",".join('{"token":%s,"logprob":%s}' % (json.dumps(t), lp)
                       for t, lp in top)
    u = ',"usage":%s' % json.dumps(usage) if usage is not None else ""
    return ('{"choices":[{"index":0,"logprobs":{"content":[{"token":"x",'
            '"logprob":0,"top_logprobs":[%s]}]}}]%s%s}' % (entries, u,
                                                           extra))


GOOD = [("A", -0.2), ("yes", -0.2)]     # fits both questions

# (name, status, body, headers): the key reflected in every way.
REFLECTED = [
    ("an object key with \\u0000", 200,
     '{"Bearer %AUTH%\\u0000x":1,"m":"' + MARK + '"}', {}),
    ("an object key whose value is NaN", 200,
     '{"%AUTH%":NaN,"m":"' + MARK + '"}', {}),
    ("an object key whose value is 1e999", 200,
     '{"' + MARK + ' %AUTH%":1e999}', {}),
    ("an object key holding a lone surrogate", 200,
     '{"%AUTH%\\ud800":1}', {}),
    ("a string value", 200,
     '{"choices":[{"message":{"content":"%AUTH% ' + MARK + '"}}]}', {}),
    ("a token", 200, reply([("%AUTH%", 0), (MARK, -1)]), {}),
    ("an error message", 401,
     '{"error":{"message":"Incorrect API key provided: %AUTH% ' + MARK +
     '"}}', {}),
    ("a server error", 500, '{"error":"%AUTH%"}', {}),
    ("a truncated body", 200, '{"%AUTH% ' + MARK, {}),
    ("trailing text", 200, '{} %AUTH% ' + MARK, {}),
    ("single quotes", 200, "{'%AUTH%': 1}", {}),
    ("a response header of a 503", 503, "{}",
     {"X-Echo": "%AUTH%", "Retry-After": "%AUTH%"}),
    ("a response header of a 429", 429, "{}",
     {"X-Echo": "%AUTH% " + MARK, "Retry-After": "%AUTH%"}),
]

# (name, usage of every reply): out of range, so the answer does not fit.
BAD_USAGE = [
    ("INT64_MAX - 1", {"prompt_tokens": 9223372036854775806,
                       "completion_tokens": 9223372036854775806}),
    ("10^9 + 1", {"prompt_tokens": 1000000001, "completion_tokens": 1}),
    ("negative", {"prompt_tokens": -4, "completion_tokens": 1}),
    ("not an integer", {"prompt_tokens": 1.5, "completion_tokens": 1}),
    ("a sum past 10^9", {"prompt_tokens": 600000000,
                         "completion_tokens": 1}),
]


def evaluate(g, key, schema, timeout=60):
    return g.post("/v1/systemone", {"state": "hostile state",
                                    "x_schema": {"id": schema}},
                  key=key, timeout=timeout)


def raw(g, f, body, status=200, headers=None):
    g.clear_cooldowns()
    f.reset()
    f.control(raw_body=body, raw_status=status, raw_headers=headers or {})


def setup(g, f, fh):
    a = g.admin
    a("backend", "add", "hostile", "--kind", "openai", "--url", f.url,
      "--model", "m", "--auth-env", KEY_VAR, "--timeout-ms", "5000",
      "--concurrency", "4")
    a("backend", "add", "heady", "--kind", "openai", "--url", fh.url,
      "--model", "m", "--auth-env", KEY_VAR, "--timeout-ms", "5000")
    a("backend", "add", "slowish", "--kind", "openai", "--url", f.url,
      "--model", "m", "--timeout-ms", "1500", "--concurrency", "1")
    for sid, qs, backend in (("hq", QS, "hostile"), ("wide", WIDE, "hostile"),
                             ("hh", QS, "heady"), ("slow", SLOW, "slowish")):
        path = os.path.join(g.dir, sid + ".json")
        with open(path, "w") as fp:
            json.dump(qs, fp)
        a("schema", "publish", sid, "--questions", path, "--backend", backend)
        a("grant", "caller", sid)


def test_reflected_key(t, g, key, f):
    seen = 0
    for name, status, body, headers in REFLECTED:
        raw(g, f, body, status, headers)
        r = evaluate(g, key, "hq")
        t.error_is(r, 503, "backend_unavailable", "key reflected in %s: 503"
                   % name)
        t.ok(KEY.encode() not in r.body and MARK.encode() not in r.body,
             "key reflected in %s: the client's body holds neither the key "
             "nor the upstream's text" % name, r.body[:300])
        seen += sum(1 for q in f.requests()
                    if q["authorization"] == "Bearer " + KEY)
    t.ok(seen >= len(REFLECTED), "the fake was sent the key to reflect "
         "(%d calls)" % seen)
    log = g.log()
    t.ok(KEY not in log and KEY[3:] not in log,
         "the key is nowhere in the gateway's log",
         [l for l in log.splitlines() if KEY[3:13] in l][:3])
    t.ok(MARK not in log, "no upstream text is in the gateway's log",
         [l for l in log.splitlines() if MARK in l][:3])


def test_usage(t, g, key, f):
    for name, usage in BAD_USAGE:
        raw(g, f, reply(GOOD, usage))
        r = evaluate(g, key, "hq")
        t.error_is(r, 503, "backend_unavailable", "usage %s: 503" % name)
        t.ok(b"not fit" in r.body, "usage %s: the answer does not fit"
             % name, r.body[:300])
    raw(g, f, reply(GOOD, {"prompt_tokens": 400000000,
                           "completion_tokens": 7}))
    r = evaluate(g, key, "hq")
    if t.eq(r.status, 200, "usage within range: 200"):
        t.eq(r.json().get("usage"), {"input_tokens": 800000000,
                                     "output_tokens": 14},
             "usage within range: the sums relayed")
        rows = g.sql("SELECT input_tokens, output_tokens FROM decisions "
                     "WHERE id = ?", (r.json()["x_decision_id"],))
        t.eq([tuple(x) for x in rows], [(800000000, 14)],
             "usage within range: the sums stored")


def masses(g, r):
    """Each question's label_mass as the decision's row keeps it
    (decisions.answers), None where it has none."""
    stored = g.sql("SELECT answers FROM decisions WHERE id = ?",
                   (r.json()["x_decision_id"],))
    return {a["question"]: a.get("label_mass")
            for a in json.loads(stored[0][0])}


def test_duplicates(t, g, key, f):
    lp = -0.916290731874155         # ln 0.4
    raw(g, f, reply([("A", lp), ("A", lp), ("A", lp), ("B", lp),
                     ("yes", lp), ("yes", lp), ("no", lp)]))
    r = evaluate(g, key, "hq")
    if t.eq(r.status, 200, "a token repeated in top_logprobs: 200"):
        p = r.json()["answers"]["hq_pick"]["probabilities"]
        t.ok(abs(p["x"] - 0.5) < 1e-9 and abs(p["y"] - 0.5) < 1e-9,
             "the repeated token counts once: A 0.4, B 0.4", p)
        m = masses(g, r)
        t.ok(all(abs(v - 0.8) < 1e-9 for v in m.values()) and len(m) == 2,
             "the label mass stored is 0.8", m)
    raw(g, f, reply([("A", -0.1), (" A", -0.1), ("a", -0.1), ("yes", 0)]))
    r = evaluate(g, key, "hq")
    t.error_is(r, 503, "backend_unavailable",
               "label tokens summing past 1: 503")
    t.ok(b"does not fit" in r.body, "label mass past 1: does not fit",
         r.body[:300])
    raw(g, f, reply([("A", 3), ("yes", 0)]))
    r = evaluate(g, key, "hq")
    t.error_is(r, 503, "backend_unavailable", "a logprob above 0: 503")


def test_total_cap(t, g, key, f):
    g.clear_cooldowns()
    f.reset()
    f.control(pad_bytes=1 << 20)
    r = evaluate(g, key, "wide")
    t.error_is(r, 503, "backend_unavailable",
               "12 replies of 1 MiB (past 8 MiB in all): 503")
    t.ok(b"too large" in r.body, "12 MiB in all: too large", r.body[:300])
    f.control(pad_bytes=600000)
    r = evaluate(g, key, "wide")
    t.eq(r.status, 200, "12 replies of 600 KB (7.2 MB in all): 200")


def test_deadline(t, g, key, f):
    g.clear_cooldowns()
    f.reset()
    f.control(call_delay_ms=700)
    start = time.time()
    r = evaluate(g, key, "slow")
    took = time.time() - start
    t.error_is(r, 503, "backend_unavailable", "4 calls of 700 ms one at a "
               "time, timeout 1.5 s: 503")
    t.ok(took < 2.5, "the calls end by the timeout (%.2f s)" % took)


def test_big_header(t, g, key, fh):
    g.clear_cooldowns()
    fh.reset()
    fh.control(raw_headers={"X-Big": "b" * 200000})
    r = evaluate(g, key, "hh")
    t.error_is(r, 503, "backend_unavailable", "a 200 KB header: 503")
    t.ok(b"out of memory" not in r.body and b"headers are too large" in r.body,
         "a 200 KB header: headers too large, not out of memory",
         r.body[:300])
    rows = g.sql("SELECT until_ms FROM cooldowns WHERE url = ?", (fh.url,),
                 cache=True)
    t.ok(not rows or rows[0][0] <= time.time() * 1000,
         "one such answer: the replica does not rest yet", rows)
    evaluate(g, key, "hh")
    rows = g.sql("SELECT until_ms FROM cooldowns WHERE url = ?", (fh.url,),
                 cache=True)
    t.ok(rows and rows[0][0] > time.time() * 1000,
         "two in a row: the replica rests", rows)


def test_retry_after(t, g, key, f):
    raw(g, f, "{}", 429, {"Retry-After": "99999999999"})
    r = evaluate(g, key, "hq")
    t.error_is(r, 503, "backend_unavailable", "429 with a huge Retry-After")
    t.ok(1 <= int(r.headers.get("retry-after", "0")) <= 60,
         "Retry-After is at most a minute", r.headers.get("retry-after"))
    raw(g, f, reply(GOOD), 200, {"X-Echo": "%AUTH% " + MARK})
    r = evaluate(g, key, "hq")
    t.eq(r.status, 200, "a 200 reflecting the key in a header: answered")
    t.ok(KEY.encode() not in r.body, "and the key is not in the answer")


def main():
    t = TAP()
    f, fh = OpenAIUpstream(), OpenAIUpstream()
    g = Gateway(workers=2, env={KEY_VAR: KEY})
    try:
        key = g.new_key("caller", "--rate-per-minute", "100000")
        g.start()
        setup(g, f, fh)
        t.run([test_reflected_key, test_usage, test_duplicates,
               test_total_cap, test_deadline, test_retry_after], g, key, f)
        t.run([test_big_header], g, key, fh)
        t.ok(KEY not in g.log(), "the key is never logged")
        t.stop_clean(g)
    finally:
        g.cleanup()
        f.stop()
        fh.stop()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
