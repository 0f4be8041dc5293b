"""test_evaluation: POST /v1/systemone and GET /v1/models over real
lighttpd, against the built-in lexical backend and a fake System One
upstream running as its own process: exact answers at temperatures 1 and
2, what the upstream received, schema resolution and grants, every
refusal, failover, each upstream fault ending in a 503, and catalog
changes reaching every worker at once."""

import json
import math
import os
import re
import time

from gateway import Gateway, TAP, Upstream, free_port

UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
                   r"[0-9a-f]{12}$")
HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")

# The shape the fake upstream answers by default: choice p_i = (i+1)/6,
# score p_i = (i+1)/10, noul 0.7.
QUESTIONS = {
    "mood": {"type": "choice", "instructions": "client text",
             "criteria": {"a": "first", "b": None, "c": "third"}},
    "level": {"type": "score", "instructions": "how much",
              "criteria": ["none", "some", "much", "all"]},
    "yes": {"type": "noul", "instructions": "is it?"},
}
# Same structure under other names, published with temperature 2.
HOT = {
    "hmood": {"type": "choice", "instructions": "STORED TEXT",
              "criteria": {"a": "first", "b": "second", "c": "third"}},
    "hlevel": {"type": "score", "instructions": "STORED LEVEL",
               "criteria": ["none", "some", "much", "all"]},
    "hyes": {"type": "noul", "instructions": "STORED NOUL"},
}


def temper(p, t):
    w = [x ** (1.0 / t) for x in p]
    s = sum(w)
    return [x / s for x in w]


def close(a, b, eps=1e-9):
    return abs(a - b) <= eps


def write_json(g, name, obj):
    path = os.path.join(g.dir, name)
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


def setup(g, up, faulty):
    a = g.admin
    a("backend", "add", "lexical", "--kind", "lexical", "--description",
      "built-in baseline", "--release-date", "2026-11-01")
    a("backend", "add", "up", "--kind", "systemone", "--url", up.url,
      "--model", "jev-upstream-7", "--auth-env", "UPSTREAM_KEY",
      "--description", "fake upstream", "--release-date", "2026-10-01")
    a("backend", "add", "failover", "--kind", "systemone",
      "--url", "http://127.0.0.1:%d" % free_port(), "--url", up.url,
      "--timeout-ms", "2000")
    a("backend", "add", "faulty", "--kind", "systemone", "--url", faulty.url,
      "--timeout-ms", "1500")
    a("backend", "add", "dead", "--kind", "systemone",
      "--url", "http://127.0.0.1:%d" % free_port(),
      "--url", "http://127.0.0.1:%d" % free_port(), "--timeout-ms", "1000")
    a("backend", "add", "off", "--kind", "lexical")
    a("backend", "disable", "off")
    q = write_json(g, "q.json", QUESTIONS)
    hot = write_json(g, "hot.json", HOT)
    demo = os.path.join(EXAMPLES, "demo-questions.json")
    a("schema", "publish", "up1", "--questions", q, "--backend", "up",
      "--abstain-threshold", "0.45")
    a("schema", "publish", "hot", "--questions", hot, "--backend", "up",
      "--temperature", "2")
    a("schema", "publish", "demo", "--questions", demo, "--backend",
      "lexical")
    for name, backend in (("viafail", "failover"), ("viafaulty", "faulty"),
                          ("viadead", "dead"), ("viaoff", "off")):
        single = {name + "_q": {"type": "choice",
                                "criteria": {"x": None, "y": None}}}
        a("schema", "publish", name, "--questions",
          write_json(g, name + ".json", single), "--backend", backend)
        a("grant", "evaluator", name)
    secret = {"secret_q": {"type": "noul"}}
    a("schema", "publish", "secret", "--questions",
      write_json(g, "secret.json", secret), "--backend", "lexical")
    for s in ("up1", "hot", "demo"):
        a("grant", "evaluator", s)


def post(g, key, body):
    return g.post("/v1/systemone", body, key=key)


def test_inline_exact(t, g, key, up):
    up.reset()
    r = post(g, key, {"model": "my-model-x", "state": "hello there",
                      "questions": QUESTIONS})
    t.eq(r.status, 200, "inline questions of a granted schema: 200")
    b = r.json()
    t.eq(b["model"], "my-model-x", "model echoed unchanged")
    mood, level, yes = (b["answers"][k] for k in ("mood", "level", "yes"))
    p = [1 / 6, 2 / 6, 3 / 6]
    t.ok(all(close(mood["probabilities"][k], v) for k, v in
             zip("abc", p)), "choice probabilities as the upstream gave",
         mood)
    t.eq(mood["choice"], "c", "choice is the most probable option")
    t.ok(close(mood["confidence"], 0.5), "choice confidence = max p")
    t.eq(mood["x_abstain"], False, "0.5 >= threshold 0.45: no abstain")
    t.eq(mood["type"], "choice", "choice type")
    t.eq(level["legend"], {"0": "none", "1": "some", "2": "much",
                           "3": "all"}, "score legend keyed 0..n-1")
    t.ok(all(close(level["probabilities"][str(i)], (i + 1) / 10)
             for i in range(4)), "score probabilities", level)
    t.ok(close(level["score"], 2.0), "score = sum i*p_i = 2.0")
    t.ok(close(level["confidence"], 0.4), "score confidence 0.4")
    t.eq(level["x_abstain"], True, "0.4 < 0.45: abstains")
    t.ok(close(yes["noul"], 0.7) and "confidence" not in yes,
         "noul is P(true), without confidence", yes)
    t.eq(yes["x_abstain"], False, "noul confidence 0.7: no abstain")
    t.eq(b["usage"], {"input_tokens": b["usage"]["input_tokens"],
                      "output_tokens": 3}, "usage relayed")
    t.ok(isinstance(b["usage"]["input_tokens"], int), "usage integers")
    t.ok(UUID7.match(b["x_decision_id"]) is not None, "x_decision_id UUIDv7")
    t.eq(b["x_backend"], "up", "x_backend names the backend")
    t.eq(b["x_schema"], {"id": "up1", "version": 1}, "x_schema")
    t.eq(b["x_schema_version"], 1, "x_schema_version")
    lat = b["x_latency_ms"]
    t.ok(isinstance(lat["gateway"], int) and isinstance(lat["backend"], int)
         and lat["gateway"] >= 0, "x_latency_ms integers", lat)
    t.ok("x_template" not in b, "no x_template without a template")
    seen = up.requests()
    t.eq(len(seen), 1, "the upstream was asked once")
    sent = seen[-1]
    t.eq(sent["body"]["model"], "jev-upstream-7",
         "the upstream gets the backend's model, not the client's")
    t.eq(sent["authorization"], "Bearer upstream-secret-1",
         "the upstream key comes from the named environment variable")
    t.eq(sent["body"]["questions"], QUESTIONS,
         "inline: the client's own texts reach the upstream")
    t.eq(sent["body"]["state"], "hello there", "the state reaches it")
    return b["x_decision_id"]


def test_temperature_two(t, g, key, up):
    up.reset()
    r = post(g, key, {"state": {"ticket": [1, 2]},
                      "x_schema": {"id": "hot"},
                      "questions": {"ignored": {"type": "noul"}}})
    t.eq(r.status, 200, "x_schema at temperature 2: 200")
    b = r.json()
    q = temper([1 / 6, 2 / 6, 3 / 6], 2)
    m = b["answers"]["hmood"]
    t.ok(all(close(m["probabilities"][k], v) for k, v in zip("abc", q)),
         "choice tempered: sqrt(p) renormalised", (m, q))
    t.ok(close(m["confidence"], max(q)), "confidence is the tempered max")
    s = temper([0.1, 0.2, 0.3, 0.4], 2)
    lv = b["answers"]["hlevel"]
    t.ok(close(lv["score"], sum(i * x for i, x in enumerate(s))),
         "score is the tempered expectation", (lv, s))
    n = temper([0.7, 0.3], 2)[0]
    t.ok(close(b["answers"]["hyes"]["noul"], n),
         "noul tempered over (p, 1-p)", b["answers"]["hyes"])
    t.eq(b["x_schema"], {"id": "hot", "version": 1}, "x_schema echoed")
    t.ok("ignored" not in b["answers"], "questions ignored with x_schema")
    sent = up.requests()[-1]["body"]
    t.eq(sent["questions"], HOT, "x_schema: the stored texts are sent")
    t.eq(sent["state"], {"ticket": [1, 2]}, "object state sent as is")
    t.eq(sent["model"], "jev-upstream-7", "backend model again")
    return b["x_decision_id"]


def test_decision_recorded(t, g, first, hot):
    row = g.sql("SELECT backend, schema_version, model FROM"
                " decisions WHERE id = ?", (hot,))
    t.eq(row, [("up", 1, "jev-latest")],
         "the decision is stored (model defaults to jev-latest)")
    hot_answers = json.loads(g.sql("SELECT answers FROM decisions"
                                   " WHERE id = ?", (hot,))[0][0])
    dist = [a["distribution"] for a in hot_answers
            if a["question"] == "hmood"][0]
    t.ok(all(close(dist[k], v) for k, v in
             zip("abc", [1 / 6, 2 / 6, 3 / 6])),
         "the untempered distribution is kept", dist)
    n = len(json.loads(g.sql("SELECT answers FROM decisions WHERE id = ?",
                             (first,))[0][0]))
    t.eq(n, 3, "one answer per question in the decision's row")
    state = g.sql("SELECT state FROM decisions WHERE id = ?",
                  (first,))[0][0]
    t.eq(state, None, "no state kept without log_state")


def test_lexical(t, g, key):
    with open(os.path.join(EXAMPLES, "evaluate.json")) as f:
        body = json.load(f)
    r1, r2 = post(g, key, body), post(g, key, body)
    t.eq(r1.status, 200, "lexical backend answers the demo request")
    a1, a2 = r1.json(), r2.json()
    t.eq(a1["answers"], a2["answers"], "lexical is deterministic")
    t.ok(a1["x_decision_id"] != a2["x_decision_id"], "new decision each")
    t.eq(a1["answers"]["sentiment"]["choice"], "negative",
         "the overlapping option wins")
    t.ok("usage" in a1 and a1["usage"]["output_tokens"] == 3,
         "lexical reports usage", a1.get("usage"))
    t.eq(a1["x_backend"], "lexical", "x_backend lexical")


def test_models(t, g, key):
    r = g.get("/v1/models", key=key)
    t.eq(r.status, 200, "GET /v1/models")
    models = r.json()["models"]
    names = sorted(m["name"] for m in models)
    t.eq(names, ["dead", "failover", "faulty", "lexical", "up"],
         "one entry per enabled backend")
    up = [m for m in models if m["name"] == "up"][0]
    t.eq(up, {"name": "up", "description": "fake upstream",
              "release_date": "2026-10-01"}, "name, description, date")


def test_refusals(t, g, key):
    ok_q = {"q": {"type": "choice", "criteria": {"x": None, "y": None}}}
    deep = "[" * 70 + "]" * 70
    cases = [
        ("malformed JSON", b'{"state": "x", ', "validation_error", "body"),
        ("a JSON array body", b"[1, 2]", "validation_error", "body"),
        ("nesting past 64", ('{"state": %s, "questions": {}}' % deep)
         .encode(), "validation_error", "body"),
        ("trailing garbage", b'{"state": "x"} x', "validation_error",
         "body"),
        ("state missing", {"questions": ok_q}, "validation_error", "state"),
        ("state a number", {"state": 5, "questions": ok_q},
         "validation_error", "state"),
        ("state too long", {"state": "x" * 32001, "questions": ok_q},
         "validation_error", "state"),
        ("model not a string", {"model": 5, "state": "s",
                                "questions": ok_q},
         "validation_error", "model"),
        ("questions missing", {"state": "s"}, "validation_error",
         "questions"),
        ("questions empty", {"state": "s", "questions": {}},
         "validation_error", "questions"),
        ("type unknown", {"state": "s", "questions":
                          {"q": {"type": "maybe"}}},
         "validation_error", "questions.q.type"),
        ("type missing", {"state": "s", "questions": {"q": {}}},
         "validation_error", "questions.q.type"),
        ("choice criteria empty", {"state": "s", "questions": {
            "q": {"type": "choice", "criteria": {}}}},
         "validation_error", "questions.q.criteria"),
        ("choice criteria a list", {"state": "s", "questions": {
            "q": {"type": "choice", "criteria": ["x"]}}},
         "validation_error", "questions.q.criteria"),
        ("256 options", {"state": "s", "questions": {
            "q": {"type": "choice",
                  "criteria": {str(i): None for i in range(256)}}}},
         "validation_error", "questions.q.criteria"),
        ("score criteria an object", {"state": "s", "questions": {
            "q": {"type": "score", "criteria": {"0": "a", "1": "b"}}}},
         "validation_error", "questions.q.criteria"),
        ("one level", {"state": "s", "questions": {
            "q": {"type": "score", "criteria": ["a"]}}},
         "validation_error", "questions.q.criteria"),
        ("11 levels", {"state": "s", "questions": {
            "q": {"type": "score", "criteria": list("abcdefghijk")}}},
         "validation_error", "questions.q.criteria"),
        ("33 questions", {"state": "s", "questions": {
            "q%d" % i: {"type": "noul"} for i in range(33)}},
         "validation_error", "questions"),
        ("x_schema not an object", {"state": "s", "x_schema": "hot"},
         "validation_error", "x_schema"),
        ("x_schema version not an integer", {"state": "s", "x_schema":
                                             {"id": "hot", "version": "1"}},
         "validation_error", "x_schema.version"),
    ]
    for name, body, code, field in cases:
        r = g.post("/v1/systemone", body, key=key,
                   headers={"Content-Type": "application/json"})
        if t.error_is(r, 422, code, "422 %s for %s" % (code, name)):
            t.eq(r.json()["error"]["details"].get("field"), field,
                 "%s: details name the field" % name)
    r = post(g, key, {"state": "s", "questions": {
        "nope": {"type": "choice", "criteria": {"x": None}}}})
    t.error_is(r, 422, "invalid_schema", "a shape no schema has: 422")
    t.ok(re.match("^[0-9a-f]{64}$", r.json()["error"]["details"]
                  .get("fingerprint", "")) is not None,
         "invalid_schema details carry the fingerprint", r.body)
    r = post(g, key, {"state": "s", "questions": {"secret_q": {
        "type": "noul"}}})
    t.error_is(r, 403, "schema_not_granted",
               "a published but ungranted shape: 403")
    for ref in ({"id": "secret"}, {"id": "no-such-schema"},
                {"id": "hot", "version": 9}):
        r = post(g, key, {"state": "s", "x_schema": ref})
        t.error_is(r, 403, "schema_not_granted",
                   "x_schema %r: 403 (existence not revealed)" % ref)


def test_liberal(t, g, key, up):
    """What upstream clients send that a strict reading would refuse."""
    q = {"mood": {"type": "choice", "instructions": {"any": ["json"]},
                  "criteria": {"a": ["list"], "b": {"o": 1}, "c": None}},
         "level": {"type": "score",
                   "criteria": ["none", "some", "much", "all"]},
         "yes": {"type": "noul", "instructions": None,
                 "criteria": {"true": "only true"}}}
    r = post(g, key, {"state": ["a", {"b": 1}], "questions": q,
                      "unknown_field": 1})
    t.eq(r.status, 200, "non-string texts, omitted instructions, partial "
         "noul criteria and unknown fields are accepted")


def fault(t, g, key, faulty, mode, **extra):
    faulty.reset()
    faulty.control(mode=mode, **extra)
    start = time.time()
    r = post(g, key, {"state": "s", "questions": {
        "viafaulty_q": {"type": "choice", "criteria": {"x": None, "y": None}}}})
    took = time.time() - start
    faulty.control(mode="ok")
    return r, took


def test_faults(t, g, key, faulty):
    for mode in ("error500", "error529", "error429", "malformed",
                 "missing_option", "wrong_shape", "hang", "reset", "huge"):
        # A cooled-down replica is still tried when it is the only one;
        # clear the cool-down anyway so that each mode is really sent.
        g.clear_cooldowns()
        r, took = fault(t, g, key, faulty, mode)
        if t.error_is(r, 503, "backend_unavailable",
                      "upstream %s: 503 backend_unavailable" % mode):
            t.ok(int(r.headers.get("retry-after", "0")) >= 1 and
                 int(r.headers.get("retry-after-ms", "0")) >= 1,
                 "%s: Retry-After and retry-after-ms" % mode, r.headers)
        t.ok(took < 10, "%s: answered in %.1f s (timeout 1.5 s)" %
             (mode, took))
        t.ok(len(faulty.requests()) >= 1, "%s: the upstream was asked" % mode)
    g.clear_cooldowns()
    r, _ = fault(t, g, key, faulty, "slow", delay_ms=300)
    t.eq(r.status, 200, "a slow upstream within the timeout answers")
    r = post(g, key, {"state": "s", "questions": {
        "viafaulty_q": {"type": "choice", "criteria": {"x": None, "y": None}}}})
    t.eq(r.status, 200, "after every fault, service resumes")



def test_failover(t, g, key):
    q = {"viafail_q": {"type": "choice", "criteria": {"x": None, "y": None}}}
    for i in range(3):
        r = post(g, key, {"state": "s", "questions": q})
        t.eq(r.status, 200, "failover from a dead replica, call %d" % i)
    t.eq(r.json()["x_backend"], "failover", "x_backend is the backend")
    r = post(g, key, {"state": "s", "questions": {
        "viadead_q": {"type": "choice", "criteria": {"x": None, "y": None}}}})
    t.error_is(r, 503, "backend_unavailable", "every replica dead: 503")
    t.ok("retry-after" in r.headers and "retry-after-ms" in r.headers,
         "503 carries both retry headers", r.headers)
    r = post(g, key, {"state": "s", "questions": {
        "viaoff_q": {"type": "choice", "criteria": {"x": None, "y": None}}}})
    t.error_is(r, 503, "backend_unavailable", "a disabled backend: 503")


def test_quota_cost(t, g):
    key = g.new_key("costly")
    g.admin("grant", "costly", "up1")
    post(g, key, {"state": "s", "questions": QUESTIONS})
    used = g.sql("SELECT used FROM quota_days q JOIN applications"
                 " a ON a.id = q.app_id WHERE a.name = 'costly'")[0][0]
    t.eq(used, 4, "a call with 3 questions costs 1 + 3 units")


HAND = {"sqlite": "sqlite3", "postgresql": "psql"}
KEPT = {"kept_q": {"type": "choice", "criteria": {"red": None,
                                                  "blue": None}}}


def test_kept_rows(t, g):
    """Each worker keeps the catalog rows an evaluation reads (key,
    application, schema match, backend) between requests; any change to
    the catalog, through the console or by hand with sqlite3 (psql),
    reaches
    every worker at its next request."""
    g.admin("backend", "add", "keptlex", "--kind", "lexical")
    g.admin("schema", "publish", "kept", "--questions",
            write_json(g, "kept.json", KEPT), "--backend", "keptlex")
    key = g.new_key("keeper")
    g.admin("grant", "keeper", "kept")
    prefix = key.split("_")[1]
    body = {"state": "a red one", "questions": KEPT}

    def calls(n=8):
        out = []
        for _ in range(n):
            r = post(g, key, body)
            out.append((r.status, r.json().get("error", {}).get("code")
                        if r.status != 200 else None))
        return sorted(set(out))

    ok, off = [(200, None)], [(503, "backend_unavailable")]
    t.eq(calls(), ok, "kept rows: every worker has answered")
    steps = [
        (lambda: g.admin("backend", "disable", "keptlex"), off,
         "backend disable: at once on every worker"),
        (lambda: g.admin("backend", "enable", "keptlex"), ok,
         "backend enable: at once"),
        (lambda: g.sql("UPDATE backends SET enabled = 0"
                       " WHERE name = 'keptlex'"), off,
         "a backend disabled by hand with %s: at once" % HAND[g.engine]),
        (lambda: g.sql("UPDATE backends SET enabled = 1"
                       " WHERE name = 'keptlex'"), ok,
         "enabled again by hand"),
        (lambda: g.admin("ungrant", "keeper", "kept"),
         [(403, "schema_not_granted")], "ungrant: at once"),
        (lambda: g.admin("grant", "keeper", "kept"), ok, "grant: at once"),
        (lambda: g.sql("UPDATE api_keys SET revoked_at = 1"
                       " WHERE prefix = ?", (prefix,)),
         [(401, "invalid_api_key")], "a key revoked by hand: at once"),
    ]
    for change, want, name in steps:
        change()
        t.eq(calls(), want, name)


def main():
    t = TAP()
    up, faulty = Upstream(), Upstream()
    g = Gateway(workers=2, env={"UPSTREAM_KEY": "upstream-secret-1"})
    try:
        key = g.new_key("evaluator")
        setup(g, up, faulty)
        g.start()
        first = hot = None
        try:
            first = test_inline_exact(t, g, key, up)
            hot = test_temperature_two(t, g, key, up)
        except Exception as e:
            t.ok(False, "exact answers raised %r" % e)
        if first and hot:
            t.run([test_decision_recorded], g, first, hot)
        t.run([test_lexical, test_models, test_refusals], g, key)
        t.run([test_liberal], g, key, up)
        t.run([test_faults], g, key, faulty)
        t.run([test_failover], g, key)
        t.run([test_quota_cost, test_kept_rows], g)
        t.ok("upstream-secret-1" not in g.log(),
             "the upstream key is never logged")
        t.ok("hello there" not in g.log(), "the state is never logged")
        t.stop_clean(g)
    finally:
        g.cleanup()
        up.stop()
        faulty.stop()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
