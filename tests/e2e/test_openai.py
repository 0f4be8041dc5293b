"""test_openai: the `openai` backend kind (doc/design.md, section
7.1) end to end, over real
lighttpd, against tests/e2e/fake_openai.py running as its own processes.

What is proven:
- the request sent upstream, once per question, to {url}/chat/completions:
  the backend's model, max_tokens 1, temperature 0, logprobs true,
  top_logprobs = --max-options (20 when not given), n 1, stream false, the
  --extra-json object merged in, `Authorization: Bearer` from --auth-env
  only when it is given; the messages: a system message first, then the
  state (a string as is, an object as compact JSON), then the question
  with its labels (A, B, ... / 0..k-1 / yes, no), option keys,
  descriptions and levels, the part before the question the same for every
  question of an evaluation (a server's prefix cache);
- the distribution: label masses summed over token variants (" A", "a"),
  renormalised, then tempered by the schema version's temperature (1 and
  2, against values computed here); the raw label mass kept in the
  answer's label_mass (decisions.answers); usage = the sums of prompt_tokens and
  completion_tokens; /v1/models lists the backend;
- each fault mode of the fake (500, 429, hang, slow past the timeout, no
  logprobs, labels missing, label mass 0.3, garbage JSON): 503
  backend_unavailable with Retry-After; slow within the timeout and
  spaced, mixed-case label tokens: 200; failover from a failing first
  replica to a fitting second; one reply that does not fit (no logprobs,
  labels missing, label mass 0.3, garbage JSON) fails its own evaluation
  only: the next call to the same only replica is a 200, and no
  cool-down is written;
- refusals, console (exit 1) and /admin/v1 (422): a choice question with
  more options than --max-options at schema publish (naming the question
  and the limit), --max-options outside 2..26, --extra-json overriding a
  reserved field, a URL that is not http(s); --auth-env naming an unset
  variable: 503 and a log line naming the variable, never the key;
- concurrency: 8 questions against a fake taking 300 ms a call take less
  than a third of the time at --concurrency 8 than at --concurrency 1, and
  the fake never sees more calls at once than --concurrency;
- calibration (evalgate-admin calibration) works on these decisions.
"""

import json
import math
import os
import re
import time

from gateway import Gateway, OpenAIUpstream, TAP

KEY_VAR = "EVALGATE_TEST_OPENAI_KEY"
KEY = "sk-test-openai-0a1b2c3d4e5f"
UNSET_VAR = "EVALGATE_TEST_OPENAI_UNSET"
MODEL = "m-fake-1"
RESERVED = {"model": "other", "max_tokens": 5, "temperature": 1,
            "logprobs": False, "top_logprobs": 3, "n": 2, "stream": True}
EXTRA = {"chat_template_kwargs": {"enable_thinking": False}, "seed": 7}

# The main schema; the markers (MOODQ...) pick the fake's answer rule.
TRI = {
    "mood": {"type": "choice", "instructions": "MOODQ which mood is it?",
             "criteria": {"calm": "quiet and settled", "tense": "on edge",
                          "angry": "shouting loudly"}},
    "level": {"type": "score", "instructions": "LEVELQ how urgent is it?",
              "criteria": ["none", "some", "much", "all"]},
    "yes": {"type": "noul", "instructions": "YESQ is a refund asked for?",
            "criteria": {"true": "money back wanted",
                         "false": "keeps the purchase"}},
}
LABELS = {"mood": ["A", "B", "C"], "level": ["0", "1", "2", "3"],
          "yes": ["yes", "no"]}
MARK = {"mood": "MOODQ", "level": "LEVELQ", "yes": "YESQ"}
# The fake's top_logprobs for each question (token -> probability).
RULES = {
    "MOODQ": {"A": 0.30, " a": 0.15, "B": 0.20, " C": 0.10, "c": 0.05,
              "Sure": 0.20},
    "LEVELQ": {"0": 0.05, " 1": 0.15, "2": 0.35, "3 ": 0.20, "Level": 0.25},
    "YESQ": {" Yes": 0.30, "yes": 0.15, "NO": 0.15, "Maybe": 0.40},
}
STATE_OBJ = {"ticket": "T-42", "body": "OBJSTATE the parcel came broken"}
STATE_STR = "STRSTATE my parcel came broken, please help"

FAULTS = {"fq_pick": {"type": "choice", "instructions": "FQ pick one",
                      "criteria": {"x": "the first", "y": "the second"}},
          "fq_yes": {"type": "noul", "instructions": "FQ is it so?"}}
PAIR = {"pq": {"type": "choice", "instructions": "PQ-MARK which one?",
               "criteria": {"x": None, "y": None}}}
PLAIN = {"pl": {"type": "choice", "instructions": "PLQ which one?",
                "criteria": {"left": "to the left", "right": None}}}
CAL = {"cal_mood": {"type": "choice", "instructions": "CALMOOD which mood?",
                    "criteria": {"calm": None, "tense": None,
                                 "angry": None}},
       "cal_yes": {"type": "noul", "instructions": "CALYES is it?"}}
N_CAL, N_CAL_OUTCOMES = 12, 10


# -- figures computed here ------------------------------------------------

def merge(tokens, labels):
    """Label masses: each token stripped and case-folded, summed per
    label; (masses in label order, total label mass)."""
    m = [0.0] * len(labels)
    for tok, p in tokens.items():
        f = tok.strip().casefold()
        for i, lab in enumerate(labels):
            if f == lab.casefold():
                m[i] += p
    return m, sum(m)


def renorm(m):
    s = sum(m)
    return [x / s for x in m]


def temper(p, t):
    w = [x ** (1.0 / t) for x in p]
    s = sum(w)
    return [x / s for x in w]


def close(a, b, eps=1e-9):
    return a is not None and b is not None and abs(a - b) <= eps


def all_close(got, want, eps=1e-9):
    return len(got) == len(want) and all(close(a, b, eps)
                                         for a, b in zip(got, want))


def default_choice(k):
    """The fake's default rule, renormalised: p_i = (i+1)/(k(k+1)/2)."""
    return [(i + 1) / (k * (k + 1) / 2.0) for i in range(k)]


# -- helpers ----------------------------------------------------------------

def write_json(g, name, obj):
    path = os.path.join(g.dir, name)
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


def texts(req):
    return [m.get("content") if isinstance(m.get("content"), str) else
            json.dumps(m.get("content")) for m in req["body"]["messages"]]


def joined(req):
    return "\n".join(texts(req))


def by_mark(reqs, mark):
    found = [r for r in reqs if r["body"] and mark in joined(r)]
    return found[-1] if found else None


def evaluate(g, key, schema, state="s", version=None, timeout=60):
    ref = {"id": schema}
    if version is not None:
        ref["version"] = version
    return g.post("/v1/systemone", {"state": state, "x_schema": ref},
                  key=key, timeout=timeout)


def stored_answers(g, decision_id):
    """The decision's answers as its row keeps them (decisions.answers):
    a list of {question, type, distribution, answer[, label_mass]}."""
    return json.loads(g.sql("SELECT answers FROM decisions WHERE id = ?",
                            (decision_id,))[0][0])


def label_masses(g, decision_id):
    return {a["question"]: a.get("label_mass")
            for a in stored_answers(g, decision_id)}


# -- setup ------------------------------------------------------------------

def setup(g, fa, fb, ff, fc):
    """Every openai backend and schema; raises at the first refusal."""
    a = g.admin
    a("backend", "add", "main", "--kind", "openai", "--url", fa.url,
      "--model", MODEL, "--auth-env", KEY_VAR, "--max-options", "8",
      "--concurrency", "4", "--extra-json", write_json(g, "extra.json",
                                                       EXTRA),
      "--timeout-ms", "5000", "--description", "fake openai server",
      "--release-date", "2026-10-02")
    a("backend", "add", "plain", "--kind", "openai", "--url", fa.url,
      "--model", "m-plain")
    a("backend", "add", "flaky", "--kind", "openai", "--url", ff.url,
      "--model", MODEL, "--timeout-ms", "1500")
    a("backend", "add", "pair", "--kind", "openai", "--url", fb.url,
      "--url", fa.url, "--model", MODEL, "--timeout-ms", "3000")
    a("backend", "add", "nokey", "--kind", "openai", "--url", fa.url,
      "--model", MODEL, "--auth-env", UNSET_VAR)
    for n in (8, 1):
        a("backend", "add", "c%d" % n, "--kind", "openai", "--url", fc.url,
          "--model", MODEL, "--concurrency", str(n), "--timeout-ms", "10000")
    a("backend", "add", "narrow", "--kind", "openai", "--url", fa.url,
      "--model", MODEL, "--max-options", "3")
    a("backend", "add", "lex", "--kind", "lexical")
    tri = write_json(g, "tri.json", TRI)
    a("schema", "publish", "tri", "--questions", tri, "--backend", "main")
    a("schema", "publish", "tri", "--questions", tri, "--backend", "main",
      "--temperature", "2")
    schemas = [("fq", FAULTS, "flaky"), ("pq", PAIR, "pair"),
               ("pl", PLAIN, "plain"), ("cal", CAL, "plain"),
               ("nk", {"nk_q": {"type": "noul"}}, "nokey")]
    for n in (8, 1):
        schemas.append(("c%ds" % n, {
            "c%d_q%d" % (n, i): {"type": "noul",
                                 "instructions": "C%d question %d" % (n, i)}
            for i in range(8)}, "c%d" % n))
    for sid, qs, backend in schemas:
        a("schema", "publish", sid, "--questions",
          write_json(g, sid + ".json", qs), "--backend", backend)
    for sid in ["tri"] + [s[0] for s in schemas]:
        a("grant", "caller", sid)


# -- the request sent upstream ---------------------------------------------

def check_fields(t, req, model, top, what):
    b = req["body"]
    t.eq(req["path"], "/v1/chat/completions",
         "%s: POST {url}/chat/completions" % what)
    t.eq({k: b.get(k) for k in ("model", "max_tokens", "temperature",
                                "logprobs", "top_logprobs", "n", "stream")},
         {"model": model, "max_tokens": 1, "temperature": 0,
          "logprobs": True, "top_logprobs": top, "n": 1, "stream": False},
         "%s: model, max_tokens 1, temperature 0, logprobs, top_logprobs "
         "%d, n 1, stream false" % (what, top))
    msgs = b.get("messages")
    t.ok(isinstance(msgs, list) and len(msgs) >= 2 and
         msgs[0].get("role") == "system" and
         all(m.get("role") in ("system", "user", "assistant") for m in msgs),
         "%s: messages, a system message first" % what, msgs)


def label_before(text, label, word):
    """label appears as a word shortly before word, after the state."""
    pos = text.find(word)
    return pos >= 0 and re.search(r"(?<![A-Za-z0-9])%s(?![A-Za-z0-9])" %
                                  re.escape(label),
                                  text[max(0, pos - 80):pos]) is not None


def check_question_text(t, req, name, state_text):
    text = joined(req)
    after = text[text.find(state_text) + len(state_text):]
    q = TRI[name]
    t.eq((req["kind"], req["labels"]), ({"mood": "choice", "level": "score",
                                         "yes": "noul"}[name], LABELS[name]),
         "%s: the prompt offers the labels %s" % (name, LABELS[name]))
    t.ok(q["instructions"] in after,
         "%s: the question's instructions after the state" % name)
    if name == "mood":
        keys = list(q["criteria"])
        pos = [after.find(k) for k in keys]
        t.ok(all(p >= 0 for p in pos) and pos == sorted(pos),
             "mood: every option key, in the criteria's order", pos)
        t.ok(all(d in after for d in q["criteria"].values()),
             "mood: every option's description")
        t.ok(all(label_before(after, lab, k) for lab, k in
                 zip(LABELS["mood"], keys)),
             "mood: A, B, C each given just before its option key", after)
    elif name == "level":
        pos = [after.find(lv) for lv in q["criteria"]]
        t.ok(all(p >= 0 for p in pos) and pos == sorted(pos),
             "level: every level, in order", pos)
        t.ok(all(label_before(after, str(i), lv) for i, lv in
                 enumerate(q["criteria"])),
             "level: 0..3 each given just before its level", after)
    else:
        t.ok(all(d in after for d in q["criteria"].values()),
             "yes: the true and false descriptions", after)


def test_request_shape(t, g, key, fa):
    fa.reset()
    fa.control(answers=RULES)
    r = evaluate(g, key, "tri", STATE_OBJ, version=1)
    if not t.eq(r.status, 200, "an evaluation through the openai backend"):
        t.ok(False, "the request shape", r)
        return None
    reqs = fa.requests()
    t.eq(len(reqs), 3, "one chat completion per question")
    compact = json.dumps(STATE_OBJ, separators=(",", ":"))
    for req in reqs:
        check_fields(t, req, MODEL, 8, "main")
        t.eq({k: req["body"].get(k) for k in EXTRA}, EXTRA,
             "the --extra-json object is merged into the body")
        t.eq(req["authorization"], "Bearer " + KEY,
             "the key of --auth-env as Authorization: Bearer")
        ts = texts(req)
        t.ok(compact not in ts[0] and compact in "\n".join(ts[1:]),
             "the object state as compact JSON, after the system message",
             ts)
    prefix = os.path.commonprefix([joined(q) for q in reqs])
    t.ok(compact in prefix, "everything up to the state is the same for "
         "every question (prefix first)", prefix[-300:])
    for name in TRI:
        req = by_mark(reqs, MARK[name])
        if t.ok(req is not None, "%s: a request for the question" % name):
            text = joined(req)
            t.ok(text.find(compact) < text.find(MARK[name]),
                 "%s: the state before the question" % name)
            check_question_text(t, req, name, compact)
    return r.json()


def test_plain_request(t, g, key, fa):
    """No --auth-env, no --max-options, no --extra-json; a string state."""
    fa.reset()
    r = evaluate(g, key, "pl", STATE_STR)
    t.eq(r.status, 200, "plain: 200")
    reqs = fa.requests()
    if not t.eq(len(reqs), 1, "plain: one question, one call"):
        return
    req = reqs[0]
    check_fields(t, req, "m-plain", 20, "plain")
    t.eq(req["authorization"], None, "no --auth-env: no Authorization sent")
    t.ok(not set(EXTRA) & set(req["body"]), "no --extra-json: nothing added")
    text = joined(req)
    t.ok(STATE_STR in text and json.dumps(STATE_STR) not in text,
         "a string state is sent as is, not as a JSON string", text)
    t.ok(STATE_STR not in texts(req)[0] and
         text.find(STATE_STR) < text.find("PLQ"),
         "the string state after the system message, before the question")
    if r.status == 200:
        p = r.json()["answers"]["pl"]["probabilities"]
        t.ok(all_close([p["left"], p["right"]], default_choice(2)),
             "plain: the fake's default rule, renormalised", p)


# -- the distribution --------------------------------------------------------

def expected(name):
    m, mass = merge(RULES[MARK[name]], LABELS[name])
    return renorm(m), mass


def test_distribution(t, g, key, fa, body):
    if body is None:
        return t.ok(False, "distribution: no answer to check")
    ans = body["answers"]
    p, _ = expected("mood")
    got = [ans["mood"]["probabilities"][k] for k in TRI["mood"]["criteria"]]
    t.ok(all_close(got, p), "choice: \" A\" + \"A\", \" C\" + \"c\" merged "
         "and renormalised over the labels", (got, p))
    t.eq(ans["mood"]["choice"], "calm", "choice: the most probable, A = calm")
    t.ok(close(ans["mood"]["confidence"], max(p)), "choice: confidence")
    p, _ = expected("level")
    got = [ans["level"]["probabilities"][str(i)] for i in range(4)]
    t.ok(all_close(got, p), "score: \" 1\" and \"3 \" merged, renormalised",
         (got, p))
    t.ok(close(ans["level"]["score"], sum(i * x for i, x in enumerate(p))),
         "score: the expected level")
    p, _ = expected("yes")
    t.ok(close(ans["yes"]["noul"], p[0]), "noul: \" Yes\" + \"yes\" over "
         "yes + \"NO\" = %.4f" % p[0], ans["yes"])
    t.eq(body["x_backend"], "main", "x_backend names the openai backend")
    reqs = fa.requests()
    want = {"input_tokens": sum(q["usage"]["prompt_tokens"] for q in reqs),
            "output_tokens": sum(q["usage"]["completion_tokens"]
                                 for q in reqs)}
    t.eq(body.get("usage"), want, "usage: the sums of prompt_tokens and "
         "completion_tokens")
    masses = label_masses(g, body["x_decision_id"])
    for name in TRI:
        req = by_mark(reqs, MARK[name])
        _, mass = expected(name)
        t.ok(close(masses.get(name), mass) and req is not None and
             close(masses.get(name), req["label_mass"]),
             "%s: the answer's label_mass %.2f, the mass the fake "
             "returned" % (name, mass), (masses, req and req["label_mass"]))
    dist = [a["distribution"] for a in stored_answers(
        g, body["x_decision_id"]) if a["question"] == "mood"][0]
    t.ok(all_close([dist[k] for k in TRI["mood"]["criteria"]],
                   expected("mood")[0]),
         "the renormalised, untempered distribution is kept", dist)


def test_temperature(t, g, key, fa):
    fa.reset()
    fa.control(answers=RULES)
    r = evaluate(g, key, "tri", STATE_OBJ, version=2)
    if not t.eq(r.status, 200, "version 2 (temperature 2): 200"):
        return
    b = r.json()
    t.eq(b["x_schema"], {"id": "tri", "version": 2}, "version 2 answered")
    q = temper(expected("mood")[0], 2)
    got = [b["answers"]["mood"]["probabilities"][k]
           for k in TRI["mood"]["criteria"]]
    t.ok(all_close(got, q), "choice tempered at T = 2", (got, q))
    t.ok(close(b["answers"]["mood"]["confidence"], max(q)),
         "choice confidence tempered")
    q = temper(expected("level")[0], 2)
    t.ok(close(b["answers"]["level"]["score"],
               sum(i * x for i, x in enumerate(q))),
         "score tempered at T = 2", (b["answers"]["level"], q))
    q = temper(expected("yes")[0], 2)
    t.ok(close(b["answers"]["yes"]["noul"], q[0]),
         "noul tempered over (p, 1 - p)", b["answers"]["yes"])
    masses = label_masses(g, b["x_decision_id"])
    t.ok(all(close(masses.get(n), expected(n)[1]) for n in TRI),
         "the label mass is the raw one at any temperature", masses)


def test_models(t, g, key):
    r = g.get("/v1/models", key=key)
    models = {m["name"]: m for m in r.json().get("models", [])} \
        if r.status == 200 else {}
    t.eq(models.get("main"), {"name": "main",
                              "description": "fake openai server",
                              "release_date": "2026-10-02"},
         "/v1/models lists the openai backend")


# -- faults ---------------------------------------------------------------

def fault(g, key, ff, mode, **extra):
    g.clear_cooldowns()
    ff.reset()
    ff.control(mode=mode, **extra)
    start = time.time()
    r = evaluate(g, key, "fq", "fault state")
    took = time.time() - start
    ff.control(mode="ok")
    return r, took


def test_faults(t, g, key, ff):
    for mode, extra in (("error500", {}), ("error429", {}), ("hang", {}),
                        ("slow", {"delay_ms": 3000}), ("no_logprobs", {}),
                        ("labels_missing", {}), ("low_mass", {}),
                        ("garbage", {})):
        what = mode + (" past the timeout" if mode == "slow" else "")
        r, took = fault(g, key, ff, mode, **extra)
        if t.error_is(r, 503, "backend_unavailable",
                      "%s: 503 backend_unavailable" % what):
            t.ok(int(r.headers.get("retry-after", "0")) >= 1,
                 "%s: Retry-After" % what, r.headers)
        t.ok(took < 10, "%s: answered in %.1f s (timeout 1.5 s)" %
             (what, took))
        seen = ff.requests()
        t.ok(len(seen) >= 1, "%s: the fake was asked" % what)
        if mode == "low_mass":
            t.ok(all(close(q["label_mass"], 0.3) for q in seen if
                     q["status"] == 200), "low_mass: the fake sent mass 0.3",
                 [q["label_mass"] for q in seen])


def test_usable_faults(t, g, key, ff):
    want_pick, want_yes = default_choice(2), 0.7
    for mode, extra in (("ok", {}), ("slow", {"delay_ms": 300}),
                        ("spaced_mixed_case", {})):
        r, _ = fault(g, key, ff, mode, **extra)
        if not t.eq(r.status, 200, "%s: 200" % mode):
            continue
        a = r.json()["answers"]
        got = [a["fq_pick"]["probabilities"][k] for k in ("x", "y")]
        t.ok(all_close(got, want_pick) and close(a["fq_yes"]["noul"],
                                                 want_yes),
             "%s: the fake's default distribution (1/3, 2/3; 0.7)" % mode,
             a)
        masses = label_masses(g, r.json()["x_decision_id"])
        t.ok(all(close(m, 0.9) for m in masses.values()) and
             len(masses) == 2, "%s: label mass 0.9 kept" % mode, masses)
    t.ok(all(not any(tok in ("x", "y", "A", "B", "yes", "no")
                     for tok, _ in (q["tokens"] or []))
             for q in ff.requests()),
         "spaced_mixed_case: no bare label token was sent")


def test_unfit_once(t, g, key, ff):
    g.clear_cooldowns()
    for mode in ("no_logprobs", "labels_missing", "low_mass", "garbage"):
        ff.reset()
        ff.control(mode=mode, times=1)
        r = evaluate(g, key, "fq", "unfit once")
        t.error_is(r, 503, "backend_unavailable", "one reply in %s: 503"
                   % mode)
        r = evaluate(g, key, "fq", "unfit once")
        t.eq(r.status, 200, "%s once: the next call to the same only "
             "replica is answered" % mode)
        rows = g.sql("SELECT until_ms FROM cooldowns WHERE url = ?",
                     (ff.url,), cache=True)
        t.ok(not rows or rows[0][0] <= time.time() * 1000,
             "%s once: the replica does not rest" % mode, rows)


def test_failover(t, g, key, fa, fb):
    want = renorm([0.6, 0.3])
    for mode in ("error500", "low_mass", "garbage"):
        fa.reset()
        fa.control(answers={"PQ-MARK": [0.6, 0.3]})
        fb.reset()
        fb.control(mode=mode)
        statuses, fits = [], True
        for _ in range(4):
            g.clear_cooldowns()
            r = evaluate(g, key, "pq")
            statuses.append(r.status)
            if r.status == 200:
                p = r.json()["answers"]["pq"]["probabilities"]
                fits = fits and all_close([p["x"], p["y"]], want)
        t.eq(statuses, [200] * 4, "failover from a first replica in %s: "
             "200 every time" % mode)
        t.ok(fits, "%s: the answer is the second replica's" % mode)
        t.ok(len(fb.requests()) >= 1 and len(fa.requests()) >= 1,
             "%s: the failing replica was asked, then the other" % mode,
             (len(fb.requests()), len(fa.requests())))


def test_unset_auth_env(t, g, key, fa):
    fa.reset()
    r = evaluate(g, key, "nk")
    t.error_is(r, 503, "backend_unavailable",
               "--auth-env naming an unset variable: 503")
    t.ok(int(r.headers.get("retry-after", "0")) >= 1,
         "unset variable: Retry-After", r.headers)
    t.ok(any(UNSET_VAR in line for line in g.log().splitlines()),
         "a log line names the variable %s" % UNSET_VAR, g.log()[-1500:])


# -- refusals -------------------------------------------------------------

def refused(t, p, what, *words):
    t.ok(p.returncode == 1 and p.stdout == "" and
         all(w in p.stderr for w in words),
         "console refuses %s (exit 1, naming %s)" % (what, ", ".join(words)),
         "exit %d: %s" % (p.returncode, p.stderr))


def test_option_refusals(t, g, fa, admin_key):
    a = g.admin
    base = ["backend", "add", "x", "--kind", "openai", "--url", fa.url,
            "--model", MODEL]
    for n in ("1", "27", "0", "-3"):
        p = a(*(base + ["--max-options", n]), check=False)
        refused(t, p, "--max-options %s" % n, "max")
    for field, value in sorted(RESERVED.items()):
        path = write_json(g, "bad-%s.json" % field, {field: value})
        p = a(*(base + ["--extra-json", path]), check=False)
        refused(t, p, "--extra-json overriding %s" % field, field)
    p = a(*(base + ["--extra-json", write_json(g, "arr.json", [1])]),
          check=False)
    refused(t, p, "--extra-json that is not an object", "extra")
    for url in ("ftp://127.0.0.1/v1", "file:///etc/passwd", "127.0.0.1/v1"):
        p = a("backend", "add", "x", "--kind", "openai", "--url", url,
              "--model", MODEL, check=False)
        refused(t, p, "the URL %s" % url, "url")
    listed = a("backend", "list", check=False).stdout
    t.ok(not re.search(r"^x\s", listed, re.M), "nothing refused was added",
         listed)
    for n in ("2", "26"):
        p = a("backend", "add", "mo" + n, "--kind", "openai", "--url",
              fa.url, "--model", MODEL, "--max-options", n, check=False)
        t.eq(p.returncode, 0, "--max-options %s accepted" % n)
    body = {"name": "h", "kind": "openai", "urls": [fa.url], "model": MODEL}
    for extra, field, what in (
            ({"max_options": 27}, "max_options", "max_options 27"),
            ({"max_options": 1}, "max_options", "max_options 1"),
            ({"extra": {"temperature": 1}}, "extra", "extra temperature"),
            ({"extra": {"top_logprobs": 2}}, "extra", "extra top_logprobs"),
            ({"urls": ["ftp://127.0.0.1/v1"]}, "urls[0]", "an ftp URL")):
        r = g.admin_request("POST", "/admin/v1/backends",
                            dict(body, **extra), key=admin_key)
        if t.error_is(r, 422, "validation_error",
                      "POST /admin/v1/backends refuses %s: 422" % what):
            t.eq(r.json()["error"]["details"].get("field"), field,
                 "%s: details name the field" % what)
    r = g.admin_request("POST", "/admin/v1/backends", dict(
        body, name="hok", max_options=26, concurrency=2,
        extra={"seed": 1}), key=admin_key)
    t.eq(r.status, 201, "POST /admin/v1/backends: an openai backend with "
         "max_options, concurrency and extra")


def test_update_fits(t, g):
    """backend update is checked as add is, and against what is published
    on the backend: "tri" (4 levels) is published on "main"."""
    a = g.admin
    row = "SELECT options, model FROM backends WHERE name = 'main'"
    before = g.sql(row)
    p = a("backend", "update", "main", "--max-options", "3", check=False)
    refused(t, p, "--max-options 3 under a published 4-level schema",
            "tri", "max_options")
    p = a("backend", "update", "main", "--model", "", check=False)
    refused(t, p, "removing the model of an openai backend", "model")
    p = a("backend", "update", "main", "--max-options", "27", check=False)
    refused(t, p, "backend update --max-options 27", "max")
    t.eq(g.sql(row), before, "no refused update changed the backend")
    p = a("backend", "update", "main", "--max-options", "4", check=False)
    t.eq(p.returncode, 0, "--max-options 4 still fits every schema: "
         "accepted")
    a("backend", "update", "main", "--max-options", "8")


WIDE = {"wide_q": {"type": "choice", "instructions": "which letter?",
                   "criteria": {"a": None, "b": None, "c": None,
                                "d": None}}}
FIT = {"fit_q": {"type": "choice", "criteria": {"a": None, "b": None,
                                                "c": None}}}


def test_publish_limit(t, g, admin_key):
    wide = write_json(g, "wide.json", WIDE)
    p = g.admin("schema", "publish", "wide", "--questions", wide,
                "--backend", "narrow", check=False)
    refused(t, p, "a 4-option choice for --max-options 3", "wide_q", "3")
    r = g.admin_request("POST", "/admin/v1/schemas/widehttp/versions",
                        {"questions": WIDE, "backend": "narrow"},
                        key=admin_key)
    if t.error_is(r, 422, "validation_error",
                  "POST /admin/v1/schemas/{id}/versions: the same, 422"):
        msg = r.json()["error"]["message"]
        t.ok("wide_q" in msg and "3" in msg,
             "the message names the question and the limit", msg)
    r = g.admin_request("GET", "/admin/v1/schemas", key=admin_key)
    t.ok(r.status == 200 and not any(s["id"] in ("wide", "widehttp")
                                     for s in r.json()["schemas"]),
         "nothing was published", r)
    p = g.admin("schema", "publish", "fit", "--questions",
                write_json(g, "fit.json", FIT), "--backend", "narrow",
                check=False)
    t.eq((p.returncode, p.stdout), (0, "1\n"),
         "3 options for --max-options 3: published")
    p = g.admin("schema", "publish", "widelex", "--questions", wide,
                "--backend", "lex", check=False)
    t.eq(p.returncode, 0, "the limit is the openai kind's: 4 options on a "
         "lexical backend are published")


# -- concurrency -----------------------------------------------------------

def timed(g, key, fc, schema):
    fc.reset()
    fc.control(call_delay_ms=300)
    start = time.time()
    r = evaluate(g, key, schema)
    return r, time.time() - start, fc.config()["in_flight_max"]


def test_concurrency(t, g, key, fc):
    r8, t8, max8 = timed(g, key, fc, "c8s")
    r1, t1, max1 = timed(g, key, fc, "c1s")
    print("# 8 questions, 300 ms a call: %.3f s at --concurrency 8, "
          "%.3f s at --concurrency 1" % (t8, t1))
    t.eq((r8.status, r1.status), (200, 200), "8 questions at concurrency "
         "8 and at 1: 200")
    t.ok(r8.status == 200 and len(r8.json()["answers"]) == 8,
         "every question answered")
    t.ok(t8 < t1 / 3, "--concurrency 8 takes less than a third of "
         "--concurrency 1 (%.2f s, %.2f s)" % (t8, t1))
    t.ok(t1 >= 8 * 0.3, "--concurrency 1: the calls one after another")
    t.eq(max1, 1, "--concurrency 1: never two calls at once")
    t.ok(1 < max8 <= 8, "--concurrency 8: calls at once, at most 8 (%d)" %
         max8)


# -- calibration -----------------------------------------------------------

def test_calibration(t, g, key, fa):
    keys = list(CAL["cal_mood"]["criteria"])
    right, bad = 0, []
    for i in range(N_CAL):
        w = [((i * 7 + j * 3) % 5) + 1.0 for j in range(3)]
        p = [0.9 * x / sum(w) for x in w]
        fa.reset()
        fa.control(answers={"CALMOOD": p,
                            "CALYES": [0.2 + 0.05 * i, 0.7 - 0.05 * i]})
        r = evaluate(g, key, "cal", "case %d" % i)
        if r.status != 200:
            bad.append(r)
            continue
        if i >= N_CAL_OUTCOMES:
            continue
        y = i % 3
        right += 1 if max(range(3), key=lambda k: p[k]) == y else 0
        r = g.post("/v1/decisions/%s/outcome" % r.json()["x_decision_id"],
                   {"answers": {"cal_mood": keys[y],
                                "cal_yes": i % 2 == 0}, "source": "e2e"},
                   key=key)
        if r.status != 200:
            bad.append(r)
    t.eq(bad, [], "%d decisions, %d with outcomes" % (N_CAL,
                                                      N_CAL_OUTCOMES))
    p = g.admin("calibration", "cal", "--format", "json", check=False)
    if not t.eq(p.returncode, 0, "calibration cal --format json"):
        return
    rep = json.loads(p.stdout)
    t.eq((rep["schema"], rep["version"]), ("cal", 1), "the report's schema")
    qs = rep["questions"]
    t.eq((qs["cal_mood"]["count"], qs["cal_yes"]["count"]),
         (N_CAL_OUTCOMES, N_CAL_OUTCOMES),
         "every question counts its %d outcomes" % N_CAL_OUTCOMES)
    t.ok(close(qs["cal_mood"]["accuracy"], right / N_CAL_OUTCOMES),
         "choice accuracy %d/%d, from the fake's distributions" %
         (right, N_CAL_OUTCOMES), qs["cal_mood"].get("accuracy"))
    tt = qs["cal_mood"]["temperature"]
    t.eq(tt["fit_count"] + tt["holdout_count"], N_CAL_OUTCOMES,
         "the fit and held-out parts hold every outcome")


# -- main -----------------------------------------------------------------

def main():
    t = TAP()
    os.environ.pop(UNSET_VAR, None)
    fakes = [OpenAIUpstream() for _ in range(4)]
    fa, fb, ff, fc = fakes
    g = Gateway(workers=2, env={KEY_VAR: KEY})
    try:
        key = g.new_key("caller", "--rate-per-minute", "100000")
        admin_key = g.new_key("ops", "--admin", "--rate-per-minute",
                              "100000")
        g.start()
        t.run([test_option_refusals], g, fa, admin_key)
        try:
            setup(g, fa, fb, ff, fc)
            ready = t.ok(True, "setup: backends of kind openai, schemas "
                         "bound to them")
        except Exception as e:
            ready = t.ok(False, "setup: backends of kind openai, schemas "
                         "bound to them", e)
        if ready:
            body = None
            try:
                body = test_request_shape(t, g, key, fa)
            except Exception as e:
                t.ok(False, "test_request_shape raised %r" % e)
            t.run([test_distribution], g, key, fa, body)
            t.run([test_temperature, test_plain_request], g, key, fa)
            t.run([test_models], g, key)
            t.run([test_faults, test_usable_faults, test_unfit_once], g,
                  key, ff)
            t.run([test_failover], g, key, fa, fb)
            t.run([test_unset_auth_env], g, key, fa)
            t.run([test_publish_limit], g, admin_key)
            t.run([test_update_fits], g)
            t.run([test_concurrency], g, key, fc)
            t.run([test_calibration], g, key, fa)
        log = g.log()
        t.ok(KEY not in log, "the key is never logged")
        t.ok(not any(s in log for s in ("OBJSTATE", "STRSTATE", "MOODQ",
                                        "PLQ")),
             "no state or prompt text is logged")
        t.stop_clean(g)
    finally:
        g.cleanup()
        for f in fakes:
            f.stop()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
