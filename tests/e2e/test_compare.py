"""test_compare: comparing a schema version's backend with its
challengers and promoting one (README, "Comparing models";
doc/design.md, section 15.1) over real lighttpd with 4 workers and
fake OpenAI-compatible servers (tests/e2e/fake_openai.py, mode ok with
a `skill`) as their own processes:

- good: right 80% of the time and calibrated (confidence 0.8); poor:
  right 60% and overconfident (0.95); twin: the same answers as good;
  sure: always right at 0.95 (its fit runs into the search's bound);
- schema cmp answered by good with poor and sure as challengers, rev by
  poor with good, same by good with twin, every decision to each
  challenger (share 1), what the workers shed filled in by `replay`
  (the application keeps its states); outcomes, the truth fake_openai
  derives from the state, recorded through POST
  /v1/decisions/{id}/outcome;
- `compare` (console text, json, html; GET .../compare in json and
  html) names poor "worse" on cmp and good "better" on rev, each with
  the log loss interval excluding 0, and twin "not yet decided";
- promotion refuses a backend that is no challenger of the version, a
  fit at the bound (422), an unknown schema or version (404), and
  nothing changes; `compare rev --promote good` and POST .../promote
  publish a version with the same fingerprint, the challenger as
  backend and its fitted temperature, without challengers, which
  evaluations then answer from, with its audit row."""

import json
import threading
import time

from fake_openai import skill_truth
from gateway import Gateway, TAP, OpenAIUpstream

QUESTIONS = {"ok": {"type": "noul", "instructions": "is the item fine?"}}
N_CASES = 200           # decisions of cmp and rev each
N_SAME = 60             # of same
SKILLS = {
    "good": {"accuracy": 0.8, "confidence": 0.8, "salt": "g"},
    "poor": {"accuracy": 0.6, "confidence": 0.95, "salt": "p"},
    "twin": {"accuracy": 0.8, "confidence": 0.8, "salt": "g"},
    "sure": {"accuracy": 1.0, "confidence": 0.95, "salt": "s"},
}
SCHEMAS = {"cmp": ("good", ["poor", "sure"]), "rev": ("poor", ["good"]),
           "same": ("good", ["twin"])}


def truth(case):
    """The outcome of case "item N": yes (true) when the fake servers'
    true label is the first of (yes, no)."""
    return skill_truth(str(case), 2) == 0


def evaluate(g, key, schema, case):
    return g.post("/v1/systemone", {"state": "item %d" % case,
                                    "x_schema": {"id": schema}}, key=key)


def count_rows(g, schema, backend):
    return g.sql("SELECT count(*) FROM challenger_answers c"
                 " JOIN decisions d ON d.id = c.decision_id"
                 " JOIN schemas s ON s.id = d.schema_id"
                 " WHERE s.slug = ? AND c.backend = ?",
                 (schema, backend))[0][0]


def run_cases(t, g, key, schema, cases):
    """Evaluates each case from two threads with a short rest after each
    (the worker asks its challengers then), records each outcome, and
    waits until the challengers' rows are in."""
    ids, bad = {}, []

    def worker(part):
        for case in part:
            r = evaluate(g, key, schema, case)
            if r.status != 200:
                bad.append(r.status)
                continue
            ids[case] = r.json()["x_decision_id"]
            time.sleep(0.02)
    threads = [threading.Thread(target=worker, args=(cases[i::2],))
               for i in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for case, did in ids.items():
        r = g.post("/v1/decisions/%s/outcome" % did,
                   {"answers": {"ok": truth(case)}}, key=key)
        if r.status != 200:
            bad.append(r.status)
    # What the workers shed while the next request waited, replay fills
    # in (README, "Comparing models"): the application keeps its states.
    time.sleep(0.5)
    live = {c: count_rows(g, schema, c) for c in SCHEMAS[schema][1]}
    for c in SCHEMAS[schema][1]:
        g.admin("replay", schema, "--backend", c, "--rate", "1000")
    got = {c: count_rows(g, schema, c) for c in SCHEMAS[schema][1]}
    t.ok(bad == [] and min(live.values()) > 0 and
         set(got.values()) == {len(ids)},
         "%s: %d decisions with outcomes, challengers' rows %s live, %s "
         "with a replay" % (schema, len(ids), live, got), bad)


def verdict_of(rep, challenger):
    return rep["questions"]["ok"]["challengers"][challenger]


def test_reports(t, g, k):
    for schema in SCHEMAS:
        n = N_SAME if schema == "same" else N_CASES
        base = {"cmp": 0, "rev": 10000, "same": 20000}[schema]
        run_cases(t, g, k["app"], schema, list(range(base, base + n)))
    p = g.admin("compare", "cmp", "--format", "json")
    rep = json.loads(p.stdout)
    c = verdict_of(rep, "poor")
    ll, acc = c["difference"]["log_loss"], c["difference"]["accuracy"]
    t.ok(c["verdict"] == "worse" and ll["low"] > 0 and
         c["more_outcomes"] == 0,
         "cmp: the overconfident 60%% challenger is worse, its log loss "
         "interval [%.3f, %.3f] above 0" % (ll["low"], ll["high"]), c)
    t.ok(acc["high"] < 0, "and its accuracy interval below 0", acc)
    cur, ch = c["current"], c["challenger"]
    t.ok(c["count"] >= N_CASES * 3 // 4 and
         0.7 <= cur["at_version"]["accuracy"] <= 0.9 and
         0.5 <= ch["at_version"]["accuracy"] <= 0.7,
         "the count and each arm's accuracy (about 0.8 and 0.6)",
         (c["count"], cur["at_version"], ch["at_version"]))
    t.ok(0.6 <= cur["fitted"]["temperature"] <= 1.6 and
         ch["fitted"]["temperature"] > 2 and
         ch["at_fitted"]["log_loss"] < ch["at_version"]["log_loss"],
         "fitted temperatures: about 1 for the calibrated arm, above 2 "
         "for the overconfident one, whose loss it lowers",
         (cur["fitted"], ch["fitted"]))
    t.ok(cur["latency_ms"]["count"] > 0 and ch["latency_ms"]["count"] > 0
         and cur["tokens"]["count"] > 0 and ch["tokens"]["total"] > 0 and
         ch["at_version"]["abstain_rate"] is not None,
         "latency, tokens and abstain rate of both arms",
         (cur["latency_ms"], ch["tokens"]))
    t.ok(verdict_of(rep, "sure")["verdict"] == "better" and
         verdict_of(rep, "sure")["challenger"]["fitted"]["at_bound"],
         "cmp: the challenger always right is better, its fit at the bound")
    t.eq((rep["schema"], rep["version"], rep["backend"]), ("cmp", 1, "good"),
         "the report names the schema, version and current backend")

    p = g.admin("compare", "rev")
    t.ok("better: the challenger's log loss is lower" in p.stdout and
         "good" in p.stdout,
         "rev (console text): the calibrated 80% challenger is better",
         p.stdout)
    r = g.admin_request("GET", "/admin/v1/schemas/rev/compare", key=k["adm"])
    c = verdict_of(r.json(), "good") if r.status == 200 else {}
    t.ok(r.status == 200 and c.get("verdict") == "better" and
         c["difference"]["log_loss"]["high"] < 0 and
         c["difference"]["accuracy"]["low"] > 0,
         "GET .../rev/compare: better, the log loss interval below 0 and "
         "the accuracy interval above", c)
    p = g.admin("compare", "rev", "--format", "html")
    t.ok(p.stdout.lstrip().lower().startswith("<!doctype html") and
         "Verdict: better" in p.stdout and "<script" not in p.stdout and
         "src=" not in p.stdout and "href=" not in p.stdout and
         "@import" not in p.stdout and "url(" not in p.stdout,
         "the HTML page: self-contained, with the verdict",
         p.stdout[:300])
    r = g.admin_request("GET", "/admin/v1/schemas/rev/compare?format=html",
                        key=k["adm"])
    t.ok(r.status == 200 and
         r.headers.get("content-type", "").startswith("text/html") and
         b"Verdict: better" in r.body, "and over HTTP (?format=html)",
         r.headers)

    r = g.admin_request("GET", "/admin/v1/schemas/same/compare?format=json",
                        key=k["adm"])
    c = verdict_of(r.json(), "twin") if r.status == 200 else {}
    t.ok(c.get("verdict") == "undecided" and c["count"] >= N_SAME * 3 // 4
         and c["difference"]["log_loss"]["mean"] == 0,
         "identical upstreams: not yet decided (%s decisions)" %
         c.get("count"), c)
    p = g.admin("compare", "same")
    t.ok("not yet decided" in p.stdout, "the console says so", p.stdout)

    r = g.admin_request("GET", "/admin/v1/schemas/cmp/compare?question=ok"
                        "&since=2000-01-01&version=1", key=k["adm"])
    t.ok(r.status == 200 and verdict_of(r.json(), "poor")["count"] ==
         verdict_of(rep, "poor")["count"],
         "question, since and version select the same decisions")
    r = g.admin_request("GET", "/admin/v1/schemas/cmp/compare"
                        "?since=2100-01-01", key=k["adm"])
    t.ok(r.status == 200 and verdict_of(r.json(), "poor")["count"] == 0 and
         verdict_of(r.json(), "poor")["verdict"] == "undecided",
         "since after every decision: a count of 0, undecided")
    for q, code, status in (("question=nope", "validation_error", 422),
                            ("format=pdf", "validation_error", 422),
                            ("since=yesterday", "validation_error", 422),
                            ("version=7", "not_found", 404)):
        r = g.admin_request("GET", "/admin/v1/schemas/cmp/compare?" + q,
                            key=k["adm"])
        t.error_is(r, status, code, "?%s: %d" % (q, status))
    r = g.admin_request("GET", "/admin/v1/schemas/nosuch/compare",
                        key=k["adm"])
    t.error_is(r, 404, "not_found", "an unknown schema: 404")


def versions(g, schema):
    return g.sql("SELECT count(*) FROM schema_versions v JOIN schemas s"
                 " ON s.id = v.schema_id WHERE s.slug = ?", (schema,))[0][0]


def test_refused(t, g, k):
    before = {s: versions(g, s) for s in SCHEMAS}
    p = g.admin("compare", "cmp", "--promote", "twin", check=False)
    t.ok(p.returncode == 1 and "not a challenger" in p.stderr,
         "--promote of a backend that is no challenger of the version: "
         "refused", p.stderr)
    r = g.admin_request("POST", "/admin/v1/schemas/cmp/promote",
                        {"backend": "twin"}, key=k["adm"])
    t.error_is(r, 422, "validation_error", "POST .../promote of it: 422")
    r = g.admin_request("POST", "/admin/v1/schemas/cmp/promote",
                        {"backend": "sure"}, key=k["adm"])
    t.error_is(r, 422, "validation_error",
               "a challenger whose fit reached the bound: 422")
    t.ok("bound" in r.body.decode(), "saying so", r.body)
    r = g.admin_request("POST", "/admin/v1/schemas/cmp/promote",
                        {"backend": "poor", "version": 9}, key=k["adm"])
    t.error_is(r, 404, "not_found", "an unknown version: 404")
    r = g.admin_request("POST", "/admin/v1/schemas/nosuch/promote",
                        {"backend": "poor"}, key=k["adm"])
    t.error_is(r, 404, "not_found", "an unknown schema: 404")
    r = g.admin_request("POST", "/admin/v1/schemas/cmp/promote", {},
                        key=k["adm"])
    t.error_is(r, 422, "validation_error", "no backend: 422")
    r = g.admin_request("GET", "/admin/v1/schemas/cmp/compare?promote=poor",
                        key=k["adm"])
    t.ok(r.status == 200 and "promoted" not in r.json(),
         "GET .../compare?promote=poor: the report alone")
    t.eq({s: versions(g, s) for s in SCHEMAS}, before,
         "a refused promotion, or a GET, changes nothing")


def version_row(g, schema, version):
    return g.sql("SELECT b.name, v.temperature, v.fingerprint,"
                 " v.abstain_threshold FROM schema_versions v"
                 " JOIN schemas s ON s.id = v.schema_id"
                 " JOIN backends b ON b.id = v.backend_id"
                 " WHERE s.slug = ? AND v.version = ?", (schema, version))[0]


def test_promote(t, g, k, rep_rev):
    fitted = rep_rev["questions"]["ok"]["challengers"]["good"][
        "challenger"]["fitted"]["temperature"]
    p = g.admin("compare", "rev", "--promote", "good")
    t.eq(p.stdout.strip(), "2", "compare rev --promote good prints the new "
         "version's number")
    old, new = version_row(g, "rev", 1), version_row(g, "rev", 2)
    t.ok(new[0] == "good" and abs(new[1] - fitted) < 1e-9 and
         new[2] == old[2] and new[3] == old[3],
         "version 2: the challenger as backend, its fitted temperature "
         "%.4f, the same fingerprint and abstain threshold" % fitted,
         (old, new))
    r = g.admin_request("GET", "/admin/v1/schemas/rev/challengers",
                        key=k["adm"])
    t.eq((r.status, r.json().get("version"), r.json().get("challengers")),
         (200, 2, []), "the new version has no challengers")
    r = evaluate(g, k["app"], "rev", 99999)
    t.eq((r.status, r.json().get("x_backend")), (200, "good"),
         "evaluations of rev now answer from good")
    audit = g.sql("SELECT details FROM audit_log WHERE action ="
                  " 'schema.publish' AND target = 'rev'")
    t.ok(any(json.loads(d).get("promoted_from") == 1 and
             json.loads(d).get("backend") == "good" for (d,) in audit),
         "its audit row names the version it was promoted from", audit)

    r = g.admin_request("POST", "/admin/v1/schemas/same/promote",
                        {"backend": "twin", "version": 1}, key=k["adm"])
    body = r.json() if r.status == 201 else {}
    want_t = verdict_of(g.admin_request(
        "GET", "/admin/v1/schemas/same/compare?version=1",
        key=k["adm"]).json(), "twin")["challenger"]["fitted"]["temperature"]
    t.ok(r.status == 201 and body.get("id") == "same" and
         body.get("version") == 2 and body.get("backend") == "twin" and
         body.get("fingerprint") == version_row(g, "same", 1)[2] and
         abs(body.get("temperature", -1) - want_t) < 1e-9,
         "POST .../promote: 201 {id, version, fingerprint, backend, "
         "temperature}", (r.status, body, want_t))
    r = evaluate(g, k["app"], "same", 99998)
    t.eq(r.json().get("x_backend"), "twin", "and same answers from twin")


def main():
    t = TAP()
    g = Gateway(workers=4)
    ups = {name: OpenAIUpstream() for name in SKILLS}
    try:
        for name, up in ups.items():
            up.control(skill=SKILLS[name])
            g.admin("backend", "add", name, "--kind", "openai", "--url",
                    up.url, "--model", "m-" + name)
        for schema, (backend, challengers) in SCHEMAS.items():
            g.publish(schema, QUESTIONS, backend)
            for c in challengers:
                g.admin("schema", "challenger", "add", schema, "--backend",
                        c, "--share", "1")
        k = {"app": g.new_key("app", "--rate-per-minute", "100000",
                              "--log-state"),
             "adm": g.new_key("adm", "--admin")}
        for schema in SCHEMAS:
            g.admin("grant", "app", schema)
        g.start()
        t.run([test_reports], g, k)
        rep = g.admin_request("GET", "/admin/v1/schemas/rev/compare",
                              key=k["adm"]).json()
        t.run([test_refused], g, k)
        t.run([test_promote], g, k, rep)
        t.stop_clean(g)
    finally:
        for up in ups.values():
            up.stop()
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
