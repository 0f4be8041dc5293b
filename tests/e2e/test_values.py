"""test_values: what a decision and its outcomes store comes back byte
for byte, however awkward, on either storage engine (the PostgreSQL
engine sends a decision's answers and an outcome's questions as array
parameters, whose text form quotes and escapes each value): criteria
labels and outcome values with quotes, backslashes, braces, commas, the
word NULL and non-ASCII; a state and an outcome source likewise.  An
outcome request whose second question conflicts writes nothing, its
first one included, and names the recorded value; a decision's units
are in the day's counter with it.  Over
real lighttpd, two workers, the built-in lexical backend; run against
SQLite, and against PostgreSQL by tests/pg/test_values.pg."""

import json

from gateway import Gateway, TAP

ODD = ['a"b', 'c\\d', '{e,f}', 'NULL', '\u00fcn\u00ef \u2603', "g'h",
       '\\"}']
QUESTIONS = {
    "pick": {"type": "choice", "instructions": "which one?",
             "criteria": {k: "word%d" % i for i, k in enumerate(ODD)}},
    "flag": {"type": "noul", "instructions": "is it?",
             "criteria": {"true": "yes", "false": "no"}},
    "other": {"type": "choice", "instructions": "and this?",
              "criteria": {"p": "pea", "q": "queue"}},
}
STATE = 'word2 "quoted" back\\slash {x,y} NULL \u2603'
SOURCE = 'reviewer "x" \\ {1,2}'


def setup(g):
    path = "%s/questions.json" % g.dir
    with open(path, "w") as f:
        json.dump(QUESTIONS, f)
    g.admin("backend", "add", "lex", "--kind", "lexical")
    g.admin("schema", "publish", "odd", "--questions", path,
            "--backend", "lex")
    g.admin("app", "create", "odd", "--log-state")
    g.admin("grant", "odd", "odd")
    return g.admin("key", "issue", "odd").stdout.strip()


def decide(g, key):
    return g.post("/v1/systemone", {"state": STATE, "questions": QUESTIONS},
                  key=key)


def outcome(g, key, did, answers, source=None):
    body = {"answers": answers}
    if source is not None:
        body["source"] = source
    return g.post("/v1/decisions/%s/outcome" % did, body, key=key)


def test_round_trip(t, g, key):
    r = decide(g, key)
    t.eq(r.status, 200, "a decision with awkward labels and state")
    did = r.json()["x_decision_id"]
    got = g.get("/v1/decisions/" + did, key=key)
    t.eq(got.status, 200, "read back")
    t.eq(got.json()["answers"], r.json()["answers"],
         "its answers read back exactly as answered")
    t.eq(list(got.json()["answers"]), list(QUESTIONS),
         "in the questions' order")
    t.eq(got.json().get("state"), STATE, "the state kept byte for byte")
    stored = json.loads(g.sql("SELECT answers FROM decisions WHERE id = ?",
                              (did,))[0][0])
    t.eq([a["question"] for a in stored], list(QUESTIONS),
         "one answer per question in the decision's row, in order")
    dist = stored[0]["distribution"]
    t.eq(sorted(dist), sorted(ODD),
         "the stored distribution names every awkward label")
    for i, v in enumerate(ODD):
        r = decide(g, key)
        d = r.json()["x_decision_id"]
        o = outcome(g, key, d, {"pick": v}, SOURCE)
        t.eq(o.status, 200, "outcome %d (%r) recorded" % (i, v))
        rec = g.get("/v1/decisions/" + d, key=key).json()["outcomes"]
        t.eq((rec["pick"]["value"], rec["pick"]["source"]), (v, SOURCE),
             "outcome %d and its source read back byte for byte" % i)
        o = outcome(g, key, d, {"pick": v})
        t.eq(o.status, 200, "the same value again: 200 (%d)" % i)
        other = ODD[(i + 1) % len(ODD)]
        o = outcome(g, key, d, {"pick": other})
        t.error_is(o, 409, "conflict", "another value: 409 (%d)" % i)
        t.eq(o.json()["error"].get("details", {}).get("recorded"), v,
             "naming the recorded value exactly (%d)" % i)


def test_nothing_on_conflict(t, g, key):
    did = decide(g, key).json()["x_decision_id"]
    t.eq(outcome(g, key, did, {"pick": ODD[0]}).status, 200,
         "pick recorded")
    # flag first (new), then pick (conflicting): the whole request is
    # refused and flag is not kept either.
    o = outcome(g, key, did, {"flag": True, "pick": ODD[1]})
    t.error_is(o, 409, "conflict", "a request whose second question "
               "conflicts: 409")
    det = o.json()["error"].get("details", {})
    t.eq((det.get("field"), det.get("recorded")), ("answers.pick", ODD[0]),
         "naming answers.pick and its recorded value")
    rows = g.sql("SELECT question, value FROM outcomes"
                 " WHERE decision_id = ? ORDER BY question", (did,))
    t.eq(rows, [("pick", json.dumps(ODD[0]))],
         "nothing was written: only the first outcome is stored")
    o = outcome(g, key, did, {"flag": True, "pick": ODD[0],
                              "other": "q"})
    t.eq(o.status, 200, "two new and one the same: 200")
    got = g.get("/v1/decisions/" + did, key=key).json()["outcomes"]
    t.eq(list(got), ["pick", "flag", "other"],
         "outcomes read back in the questions' order")


def test_quota_with_decision(t, g, key):
    before = sum(u for u, in g.sql(
        "SELECT used FROM quota_days q JOIN applications a"
        " ON a.id = q.app_id WHERE a.name = 'odd'"))
    n = len(g.sql("SELECT id FROM decisions"))
    t.eq(decide(g, key).status, 200, "one more decision")
    after = sum(u for u, in g.sql(
        "SELECT used FROM quota_days q JOIN applications a"
        " ON a.id = q.app_id WHERE a.name = 'odd'"))
    t.eq(len(g.sql("SELECT id FROM decisions")), n + 1, "it is stored")
    t.eq(after - before, 1 + len(QUESTIONS),
         "with its units in the day's counter (1 + 1 per question)")


def main():
    t = TAP()
    g = Gateway(workers=2)
    try:
        key = setup(g)
        g.start()
        t.run([test_round_trip, test_nothing_on_conflict,
               test_quota_with_decision], g, key)
        t.ok(STATE not in g.log(), "the state is never logged")
        t.stop_clean(g)
    finally:
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
