"""test_decisions: GET /v1/decisions/{id} and POST
/v1/decisions/{id}/outcome over real lighttpd with 4 workers and the
built-in lexical backend: the exact layout of a decision, every row of
the spec's outcome table, every refusal (and that it wrote nothing), the
same 404 for a malformed, an unknown and another application's decision,
the state shown only while the application has log_state on, and a race
of conflicting outcomes posted at once."""

import json
import re
import threading
import time

from gateway import Gateway, TAP

UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
                   r"[0-9a-f]{12}$")
RFC3339_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
QUESTIONS = {
    "mood": {"type": "choice", "instructions": "which letter",
             "criteria": {"x": "the letter x", "y": "the letter y",
                          "z": None}},
    "level": {"type": "score", "instructions": "how much",
              "criteria": ["low", "mid", "high"]},
    "ok": {"type": "noul", "instructions": "is it fine?"},
}
SECRET_STATE = "zebra-quartz-7731 the letter x"
NOT_FOUND_ID = "01890a5d-ac96-774b-bcce-b302099a8057"     # valid, unknown


def write_json(g, name, obj):
    path = "%s/%s" % (g.dir, name)
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


def setup(g):
    a = g.admin
    a("backend", "add", "lex", "--kind", "lexical")
    a("schema", "publish", "fb", "--questions",
      write_json(g, "q.json", QUESTIONS), "--backend", "lex")
    with open("%s/body.txt" % g.dir, "w") as f:
        f.write("hello {{name}}, the letter x")
    a("template", "publish", "greet", "--body", "%s/body.txt" % g.dir,
      "--variables", write_json(g, "vars.json", {"name": "string"}))
    keys = {
        "owner": g.new_key("owner", "--log-state",
                           "--rate-per-minute", "100000"),
        "other": g.new_key("other", "--rate-per-minute", "100000"),
        "limited": g.new_key("limited", "--rate-per-minute", "3"),
    }
    for app in keys:
        a("grant", app, "fb")
    return keys


def db_query(g, sql, *args):
    return g.sql(sql, args)


def evaluate(g, key, state=SECRET_STATE, **extra):
    body = {"state": state, "x_schema": {"id": "fb"}}
    body.update(extra)
    r = g.post("/v1/systemone", body, key=key)
    if r.status != 200:
        raise RuntimeError("evaluation failed: %r" % r)
    return r.json()


def get(g, key, did):
    return g.get("/v1/decisions/" + did, key=key)


def outcome(g, key, did, body):
    return g.post("/v1/decisions/%s/outcome" % did, body, key=key)


def test_layout(t, g, keys):
    ev = evaluate(g, keys["owner"], state={"ticket": SECRET_STATE},
                  model="my-model-1")
    r = get(g, keys["owner"], ev["x_decision_id"])
    t.eq(r.status, 200, "GET /v1/decisions/{id}: 200")
    d = r.json()
    t.eq(sorted(d), sorted(["id", "created_at", "model", "x_backend",
                            "x_schema", "answers", "outcomes", "state"]),
         "exactly the fields of doc/design.md 14 (no template: no x_template)")
    t.eq(d["id"], ev["x_decision_id"], "id is x_decision_id")
    t.ok(RFC3339_MS.match(d["created_at"]) is not None,
         "created_at is RFC 3339 UTC", d["created_at"])
    t.eq(d["model"], "my-model-1", "model as the request gave it")
    t.eq(d["x_backend"], "lex", "x_backend")
    t.eq(d["x_schema"], {"id": "fb", "version": 1}, "x_schema {id, version}")
    t.eq(d["answers"], ev["answers"], "answers exactly as returned")
    t.eq(list(d["answers"]), list(QUESTIONS), "answers in question order")
    t.eq(d["outcomes"], {}, "no outcomes yet: {}")
    t.eq(d["state"], {"ticket": SECRET_STATE}, "state as sent (log_state)")
    t.eq(r.headers.get("content-type"), "application/json", "JSON")

    ev = evaluate(g, keys["owner"], x_template={"id": "greet",
                                               "variables": {"name": "Ann"}})
    d = get(g, keys["owner"], ev["x_decision_id"]).json()
    t.eq(d["x_template"], {"id": "greet", "version": 1},
         "x_template {id, version} when a template was rendered")
    t.eq(d["state"], "hello Ann, the letter x", "the rendered state")
    t.eq(d["model"], "jev-latest", "the default model name")

    first = evaluate(g, keys["owner"])
    time.sleep(0.01)
    second = evaluate(g, keys["other"])
    a, b = first["x_decision_id"], second["x_decision_id"]
    t.ok(a != b and UUID7.match(a) and UUID7.match(b),
         "two evaluations: two different UUIDv7", (a, b))
    t.ok(a < b, "decision ids sort in time order", (a, b))
    da = get(g, keys["owner"], a).json()
    db = get(g, keys["other"], b).json()
    t.ok(da["created_at"] <= db["created_at"], "created_at in order too")
    ms = int(a.replace("-", "")[:12], 16)
    created = db_query(g, "SELECT created_at_ms FROM decisions WHERE id = ?",
                       a)[0][0]
    t.ok(abs(ms - created) <= 5, "the id carries the creation time",
         (ms, created))
    up = get(g, keys["owner"], a.upper())
    t.eq((up.status, up.json().get("id")), (200, a),
         "an uppercase id finds the decision, shown lowercase")


def test_outcome_table(t, g, keys):
    key = keys["owner"]
    did = evaluate(g, key)["x_decision_id"]
    want = {"decision_id": did, "recorded": ["mood"]}
    r1 = outcome(g, key, did, {"answers": {"mood": "x"}, "source": "crm"})
    t.eq((r1.status, r1.json()), (200, want),
         "no outcome yet, valid value: 200, question listed in recorded")
    r2 = outcome(g, key, did, {"answers": {"mood": "x"}, "source": "crm"})
    t.eq((r2.status, r2.body), (200, r1.body),
         "same value again: 200 with a byte-identical body")
    r3 = outcome(g, key, did, {"answers": {"mood": "x"}, "source": "other"})
    t.eq((r3.status, r3.json()), (200, want),
         "same value, another source: 200 (the first source stays)")
    r = outcome(g, key, did, {"answers": {"mood": "y"}})
    if t.error_is(r, 409, "conflict", "different value: 409 conflict"):
        det = r.json()["error"]["details"]
        t.eq((det.get("field"), det.get("recorded")), ("answers.mood", "x"),
             "409 details name the question and the recorded value")
    r = outcome(g, key, did, {"answers": {"nope": "x"}})
    if t.error_is(r, 422, "validation_error", "question not in the "
                  "decision: 422"):
        t.eq(r.json()["error"]["details"].get("field"), "answers.nope",
             "422 names the unknown question")
    r = outcome(g, key, did, {"answers": {"level": 2, "ok": False}})
    t.eq((r.status, r.json()),
         (200, {"decision_id": did, "recorded": ["level", "ok"]}),
         "two new questions at once, without source: 200")
    r = outcome(g, key, did, {"answers": {"ok": False, "mood": "x",
                                          "level": 2}})
    t.eq((r.status, r.json().get("recorded")), (200, ["ok", "mood", "level"]),
         "a replay of several: recorded lists every question of the request")
    d = get(g, key, did).json()
    out = d["outcomes"]
    t.eq(list(out), ["mood", "level", "ok"], "outcomes in question order")
    t.eq({k: (v["value"], v["source"]) for k, v in out.items()},
         {"mood": ("x", "crm"), "level": (2, None), "ok": (False, None)},
         "outcomes {value, source}: typed values, first source kept")
    t.ok(all(sorted(v) == ["recorded_at", "source", "value"] and
             RFC3339_MS.match(v["recorded_at"]) and
             v["recorded_at"] >= d["created_at"] for v in out.values()),
         "each outcome has exactly value, source, recorded_at", out)
    t.ok(out["mood"]["recorded_at"] <= out["level"]["recorded_at"],
         "recorded_at is when it was first recorded", out)
    rows = db_query(g, "SELECT question, value, source FROM outcomes WHERE"
                    " decision_id = ? ORDER BY question", did)
    t.eq(rows, [("level", "2", None), ("mood", '"x"', "crm"),
                ("ok", "false", None)], "the outcomes table holds JSON values")

    # A 409 writes nothing of its request: level is new, mood conflicts.
    did2 = evaluate(g, key)["x_decision_id"]
    t.eq(outcome(g, key, did2, {"answers": {"mood": "z"}}).status, 200,
         "second decision: mood recorded")
    r = outcome(g, key, did2, {"answers": {"level": 1, "mood": "y"},
                               "source": "batch"})
    t.error_is(r, 409, "conflict", "{new question, conflicting one}: 409")
    out = get(g, key, did2).json()["outcomes"]
    t.eq(list(out), ["mood"], "after the 409 the new question is still "
         "without an outcome")
    t.eq(db_query(g, "SELECT count(*) FROM outcomes WHERE decision_id = ?",
                  did2)[0][0], 1, "and the table holds one row")
    r = outcome(g, key, did2, {"answers": {"level": 0}})
    t.eq(r.status, 200, "the new question can then be recorded alone")


def test_refusals(t, g, keys):
    key = keys["owner"]
    did = evaluate(g, key)["x_decision_id"]
    cases = [
        ("choice: unknown option key", {"answers": {"mood": "w"}},
         "answers.mood"),
        ("choice: a number", {"answers": {"mood": 0}}, "answers.mood"),
        ("choice: null", {"answers": {"mood": None}}, "answers.mood"),
        ("noul: the string 'true'", {"answers": {"ok": "true"}},
         "answers.ok"),
        ("noul: 1", {"answers": {"ok": 1}}, "answers.ok"),
        ("score: 1.0", {"answers": {"level": 1.0}}, "answers.level"),
        ("score: 3 of 3 levels", {"answers": {"level": 3}}, "answers.level"),
        ("score: -1", {"answers": {"level": -1}}, "answers.level"),
        ("score: a string", {"answers": {"level": "1"}}, "answers.level"),
        ("score: a boolean", {"answers": {"level": True}}, "answers.level"),
        ("score: huge", b'{"answers": {"level": 99999999999999999999}}',
         "answers.level"),
        ("unknown question", {"answers": {"nope": 1}}, "answers.nope"),
        ("valid and unknown", {"answers": {"ok": True, "Mood": "x"}},
         "answers.Mood"),
        ("valid then invalid", {"answers": {"mood": "x", "level": 7}},
         "answers.level"),
        ("empty answers", {"answers": {}}, "answers"),
        ("answers missing", {"source": "s"}, "answers"),
        ("answers an array", {"answers": [["mood", "x"]]}, "answers"),
        ("answers null", {"answers": None}, "answers"),
        ("source too long", {"answers": {"mood": "x"}, "source": "s" * 201},
         "source"),
        ("source a number", {"answers": {"mood": "x"}, "source": 5},
         "source"),
        ("source an object", {"answers": {"mood": "x"}, "source": {}},
         "source"),
        ("source with a NUL", {"answers": {"mood": "x"}, "source": "a\0b"},
         "source"),
        ("malformed JSON", b'{"answers": {"mood": "x"', "body"),
        ("a JSON array", b'[{"answers": {"mood": "x"}}]', "body"),
        ("empty body", b"", "body"),
    ]
    for name, body, field in cases:
        r = outcome(g, key, did, body)
        if t.error_is(r, 422, "validation_error", "422 for %s" % name):
            t.eq(r.json()["error"]["details"].get("field"), field,
                 "%s: details name %s" % (name, field))
    t.eq(get(g, key, did).json()["outcomes"], {},
         "after every refusal the decision has no outcome")
    t.eq(db_query(g, "SELECT count(*) FROM outcomes WHERE decision_id = ?",
                  did)[0][0], 0, "and the outcomes table has no row for it")
    r = outcome(g, key, did, {"answers": {"mood": "x"}, "source": "é" * 200})
    t.eq(r.status, 200, "source of 200 characters (400 bytes): accepted")
    r = outcome(g, key, did, {"answers": {"ok": True}, "source": None})
    t.eq(r.status, 200, "source null: as if absent")
    t.eq(get(g, key, did).json()["outcomes"]["mood"]["source"], "é" * 200,
         "the source is kept as sent")
    r = g.request("DELETE", "/v1/decisions/" + did, key=key)
    t.error_is(r, 405, "method_not_allowed", "DELETE on a decision: 405")
    r = g.get("/v1/decisions/" + did)
    t.error_is(r, 401, "invalid_api_key", "GET without a key: 401")
    r = g.post("/v1/decisions/%s/outcome" % did, {"answers": {"ok": True}})
    t.error_is(r, 401, "invalid_api_key", "outcome without a key: 401")


def test_not_found(t, g, keys):
    owner, other = keys["owner"], keys["other"]
    did = evaluate(g, owner)["x_decision_id"]
    t.eq(outcome(g, owner, did, {"answers": {"mood": "x"}}).status, 200,
         "the owner records an outcome")
    v4 = "01890a5d-ac96-474b-bcce-b302099a8057"
    ids = [("unknown id", NOT_FOUND_ID), ("malformed id", "not-a-uuid"),
           ("a UUIDv4", v4), ("id too long", did + "0"),
           ("id with an encoded slash", did[:8] + "%2F" + did[9:])]
    bodies = set()
    for name, i in ids:
        r = get(g, owner, i)
        t.error_is(r, 404, "not_found", "GET, %s: 404" % name)
        bodies.add(r.body)
        r = outcome(g, owner, i, {"answers": {"mood": "x"}})
        t.error_is(r, 404, "not_found", "outcome, %s: 404" % name)
        bodies.add(r.body)
    r = get(g, other, did)
    t.error_is(r, 404, "not_found", "another application reads: 404")
    bodies.add(r.body)
    for name, body in (("a conflicting value", {"answers": {"mood": "y"}}),
                       ("a new question", {"answers": {"ok": True}}),
                       ("an invalid body", b"{"),
                       ("an unknown question", {"answers": {"q": 1}})):
        r = outcome(g, other, did, body)
        t.error_is(r, 404, "not_found",
                   "another application records %s: 404" % name)
        bodies.add(r.body)
    t.eq(len(bodies), 1, "every 404 has the same body: nothing tells an "
         "unknown decision from another application's")
    t.eq(json.loads(bodies.pop())["error"]["details"], {},
         "and its details name nothing")
    out = get(g, owner, did).json()["outcomes"]
    t.eq(sorted(out), ["mood"], "another application's posts wrote nothing")
    t.eq(out["mood"]["value"], "x", "the owner's value stands")
    r = get(g, other, NOT_FOUND_ID)
    t.error_is(r, 404, "not_found", "unknown id for the other app: 404")


def test_state(t, g, keys):
    owner, other = keys["owner"], keys["other"]

    def has_state(did, key):
        d = get(g, key, did).json()
        stored = db_query(g, "SELECT state FROM decisions WHERE id = ?",
                          did)[0][0]
        return "state" in d, stored is not None

    on = evaluate(g, owner)["x_decision_id"]
    off_app = evaluate(g, other)["x_decision_id"]
    t.eq(has_state(on, owner), (True, True),
         "log_state on: the state is kept and returned")
    t.eq(get(g, owner, on).json()["state"], SECRET_STATE,
         "returned exactly as sent")
    t.eq(has_state(off_app, other), (False, False),
         "log_state off: neither kept nor returned")

    g.admin("app", "update", "owner", "--log-state", "off")
    t.eq(has_state(on, owner), (False, True),
         "after app update --log-state off: a kept state is not returned")
    while_off = evaluate(g, owner)["x_decision_id"]
    t.eq(has_state(while_off, owner), (False, False),
         "the next decision keeps no state")

    g.admin("app", "update", "owner", "--log-state", "on")
    again = evaluate(g, owner)["x_decision_id"]
    t.eq(has_state(again, owner), (True, True),
         "after --log-state on: the next decision carries the state")
    t.eq(has_state(on, owner), (True, True),
         "the first decision's state shows again")
    t.eq(has_state(while_off, owner), (False, False),
         "the one made while off has none")

    # A state larger than a record of the shared memory (16 KiB; the
    # default SERVICE_MAX_STATE_CHARS is 32000): its decision is written
    # alone, not in a group, and kept whole.
    big = "x" * 30000
    r = g.post("/v1/systemone", {"state": big, "x_schema": {"id": "fb"}},
               key=owner)
    t.eq(r.status, 200, "a 30,000-character state: 200")
    did = r.json()["x_decision_id"]
    t.eq(get(g, owner, did).json().get("state"), big,
         "its decision is stored with the whole state")
    t.eq(has_state(evaluate(g, owner)["x_decision_id"], owner),
         (True, True), "and the next small one as before")


def test_rate_charged(t, g, keys):
    key = keys["limited"]
    did = evaluate(g, key)["x_decision_id"]
    r1 = get(g, key, did)
    r2 = outcome(g, key, did, {"answers": {"ok": True}})
    t.eq((r1.status, r2.status), (200, 200), "two calls within the rate")
    r = get(g, key, did)
    t.error_is(r, 429, "rate_limited", "every decision call counts 1 "
               "against the rate limit (3 per minute: the 4th is 429)")
    r = outcome(g, key, did, {"answers": {"ok": False}})
    t.error_is(r, 429, "rate_limited", "outcome over the rate: 429")
    used = db_query(g, "SELECT used FROM quota_days q JOIN applications a"
                    " ON a.id = q.app_id WHERE a.name = 'limited'")[0][0]
    t.eq(used, 4, "quota: only the evaluation's 1 + 3 units, decision "
         "calls cost 0")
    t.eq(get(g, keys["owner"], did).status, 404,
         "(and the owner app cannot see limited's decision)")


def race_once(t, g, key, n_each, round_no):
    did = evaluate(g, key)["x_decision_id"]
    barrier = threading.Barrier(2 * n_each)
    results = []
    lock = threading.Lock()

    def post(value):
        body = {"answers": {"mood": value}, "source": "race"}
        barrier.wait()
        try:
            r = outcome(g, key, did, body)
            res = (value, r.status, r.json())
        except Exception as e:      # counted as a failure below
            res = (value, -1, repr(e))
        with lock:
            results.append(res)

    threads = [threading.Thread(target=post, args=(v,))
               for v in ["x", "y"] * n_each]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    statuses = sorted(set(s for _, s, _ in results))
    t.ok(len(results) == 2 * n_each and set(statuses) <= {200, 409},
         "race %d: %d answers, each 200 or 409" % (round_no, 2 * n_each),
         results)
    won = set(v for v, s, _ in results if s == 200)
    t.eq(len(won), 1, "race %d: every 200 sent the same value" % round_no)
    if len(won) != 1:
        return
    winner = won.pop()
    ok = [b for v, s, b in results if s == 200]
    t.eq(len(ok), sum(1 for v, _, _ in results if v == winner),
         "race %d: the number of 200s is the number of requests that "
         "sent %r" % (round_no, winner))
    t.ok(all(b == {"decision_id": did, "recorded": ["mood"]} for b in ok),
         "race %d: every 200 is {decision_id, recorded: [mood]}" % round_no)
    lost = [b for v, s, b in results if s == 409]
    t.ok(len(lost) == n_each and all(
        b["error"]["code"] == "conflict" and
        b["error"]["details"].get("recorded") == winner for b in lost),
        "race %d: every other answer is a 409 naming the stored %r" %
        (round_no, winner), lost[:3])
    t.eq(get(g, key, did).json()["outcomes"]["mood"]["value"], winner,
         "race %d: GET shows the winning value" % round_no)
    t.eq(db_query(g, "SELECT question, value FROM outcomes WHERE"
                  " decision_id = ?", did), [("mood", json.dumps(winner))],
         "race %d: exactly one row in the database file" % round_no)


def test_race(t, g, keys):
    # 24 posts at once on 4 workers: 12 byte-identical ones for "x", 12
    # for "y".  Rounds make a lost update likely to show if the check and
    # the write were not one transaction (one round in ten caught that
    # when the transaction was removed).
    for i in range(20):
        race_once(t, g, keys["owner"], 12, i + 1)


def main():
    t = TAP()
    g = Gateway(workers=4)
    try:
        keys = setup(g)
        g.start()
        t.run([test_layout, test_outcome_table, test_refusals,
               test_not_found, test_state, test_rate_charged, test_race],
              g, keys)
        t.ok(SECRET_STATE not in g.log(), "the state is never logged")
        t.ok(not any(k in g.log() for k in keys.values()),
             "no key is logged")
        t.stop_clean(g)
    finally:
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
