"""test_challengers: challengers of a schema version (README,
"Challengers") over real lighttpd with 4 workers, the lexical backend
answering the clients and fake System One upstreams as challengers:

- the console and /admin/v1 name, list and remove them, refuse a bad
  share (422 validation_error), an unknown schema, version or backend (404), and audit
  each change;
- at share 1 every decision gets its challenger's row (distributions,
  latency, tokens), which the admin listing and export carry, and a
  decision without one keeps its shape;
- at share 0.5 the decisions asked are exactly those the FNV-1a hash of
  decision id and backend name selects, computed again here;
- a challenger that takes 5 s delays no client: not the one answered,
  nor the next one, for which the call in flight is given up (shed);
  neither it nor a failing one (500) changes the client's status,
  answer or charge;
- evalgate_challenger_calls_total counts ok, failed and shed calls
  apart from the client's backend calls;
- a challenger whose replica failed twice in a row rests: its next calls
  are shed, not made; one whose backend has no room in flight is shed,
  never queued;
- a prune removes the challengers' rows with their decisions, and a
  backup and its restore keep them;
- a challenger added (through /admin/v1) or removed (by the console)
  takes effect on the next evaluations, whichever worker answers them
  and whether the version is named or its questions matched: the
  workers keep a version's challengers with the catalog rows, and the
  change moves the catalog generation."""

import json
import os
import sqlite3
import threading
import time

from gateway import Gateway, TAP, Upstream

QUESTIONS = {
    "mood": {"type": "choice", "instructions": "which letter",
             "criteria": {"x": "the letter x", "y": "the letter y"}},
    "level": {"type": "score", "instructions": "how much",
              "criteria": ["low", "mid", "high"]},
    "ok": {"type": "noul", "instructions": "is it fine?"},
}
STATE = "the letter x, fine and high"


def fnv_selects(decision_id, backend, share):
    """compare.c's choice (cmp_share_point): FNV-1a 64 over id, NUL,
    backend name, mixed by MurmurHash3's fmix64; its top 53 bits as a
    number in [0, 1), below share."""
    m = 0xFFFFFFFFFFFFFFFF
    h = 14695981039346656037
    for b in decision_id.encode() + b"\0" + backend.encode():
        h ^= b
        h = (h * 1099511628211) & m
    h ^= h >> 33
    h = (h * 0xff51afd7ed558ccd) & m
    h ^= h >> 33
    h = (h * 0xc4ceb9fe1a85ec53) & m
    h ^= h >> 33
    return (h >> 11) / float(1 << 53) < share


def evaluate(g, key, state=STATE, pause=0):
    """One evaluation; then, with pause, a rest in which the worker may
    ask its challengers: a request sent at once would have them shed."""
    r = g.post("/v1/systemone", {"state": state, "x_schema": {"id": "cs"}},
                  key=key)
    time.sleep(pause)
    return r


def rows(g, backend=None):
    q = "SELECT decision_id, backend, answers, latency_ms, input_tokens," \
        " output_tokens, source FROM challenger_answers"
    if backend is not None:
        return g.sql(q + " WHERE backend = ?", (backend,))
    return g.sql(q)


def wait_rows(g, backend, n, timeout=20):
    end = time.time() + timeout
    while time.time() < end:
        if len(rows(g, backend)) >= n:
            return True
        time.sleep(0.05)
    return False


def metric(g, key, backend, outcome):
    r = g.admin_request("GET", "/metrics", key=key)
    want = 'evalgate_challenger_calls_total{backend="%s",outcome="%s"} ' % (
        backend, outcome)
    for line in r.body.decode().splitlines():
        if line.startswith(want):
            return float(line.split()[-1])
    return 0


def client_metric(g, key, backend):
    r = g.admin_request("GET", "/metrics", key=key)
    return [line for line in r.body.decode().splitlines()
            if line.startswith("evalgate_backend_requests_total") and
            'backend="%s"' % backend in line]


def challengers(g, adm, **kw):
    return g.admin_request("POST", "/admin/v1/schemas/cs/challengers", kw,
                           key=adm)


def day_left(r):
    for part in r.headers.get("ratelimit", "").split(","):
        part = part.strip()
        if part.startswith('"day"'):
            for kv in part.split(";")[1:]:
                k, v = kv.split("=")
                if k == "r":
                    return int(v)
    return None


def test_admin(t, g, k):
    adm = k["adm"]
    r = challengers(g, adm, backend="chal", share=1)
    t.eq((r.status, r.json() if r.status == 201 else r.body),
         (201, {"id": "cs", "version": 1, "backend": "chal", "share": 1}),
         "POST .../challengers: 201, the latest version by default")
    for share, why in ((0, "0"), (1.5, "over 1"), ("x", "not a number"),
                       (None, "missing")):
        body = {"backend": "chal"}
        if share is not None:
            body["share"] = share
        r = g.admin_request("POST", "/admin/v1/schemas/cs/challengers", body,
                            key=adm)
        t.error_is(r, 422, "validation_error", "a share %s: 422" % why)
    r = challengers(g, adm, backend="nosuch", share=0.5)
    t.error_is(r, 404, "not_found", "an unknown backend: 404")
    r = g.admin_request("POST", "/admin/v1/schemas/nosuch/challengers",
                        {"backend": "chal", "share": 0.5}, key=adm)
    t.error_is(r, 404, "not_found", "an unknown schema: 404")
    r = challengers(g, adm, backend="chal", share=0.5, version=9)
    t.error_is(r, 404, "not_found", "an unknown version: 404")
    r = challengers(g, adm, backend="lex", share=0.5)
    t.error_is(r, 422, "validation_error", "the version's own backend: 422")
    r = g.admin_request("GET", "/admin/v1/schemas/cs/challengers?version=1",
                        key=adm)
    t.eq((r.status, [(c["backend"], c["share"])
                     for c in r.json().get("challengers", [])]),
         (200, [("chal", 1)]), "GET lists it (?version=1)")
    r = g.admin_request("GET", "/admin/v1/schemas/cs/challengers?version=x",
                        key=adm)
    t.error_is(r, 422, "validation_error", "?version=x: 422")
    p = g.admin("schema", "challenger", "add", "cs", "--backend", "bad",
                "--share", "0.25")
    t.ok("share: 0.25" in p.stdout, "the console adds one", p.stdout)
    p = g.admin("schema", "challenger", "add", "cs", "--backend", "bad",
                "--share", "1", "--version", "1")
    p = g.admin("schema", "challenger", "list", "cs")
    t.ok("bad" in p.stdout and "chal" in p.stdout and "0.25" not in p.stdout,
         "adding again changes the share; list shows both", p.stdout)
    p = g.admin("schema", "challenger", "remove", "cs", "--backend", "bad")
    t.eq(p.returncode, 0, "the console removes one")
    p = g.admin("schema", "challenger", "remove", "cs", "--backend", "bad",
                check=False)
    t.ok(p.returncode == 1 and "no challenger" in p.stderr,
         "removing it again: exit 1", p.stderr)
    r = g.admin_request("DELETE", "/admin/v1/schemas/cs/challengers/chal"
                        "?version=1", key=adm)
    t.eq(r.status, 200, "DELETE .../challengers/chal: 200")
    r = g.admin_request("DELETE", "/admin/v1/schemas/cs/challengers/chal",
                        key=adm)
    t.error_is(r, 404, "not_found", "DELETE again: 404")
    actions = [a for (a,) in g.sql("SELECT action FROM audit_log WHERE"
                                   " action LIKE 'schema.challenger.%'")]
    t.eq(sorted(set(actions)), ["schema.challenger.add",
                                "schema.challenger.remove"],
         "each change is in the audit log")


def test_most(t, g, k):
    """A version has at most 32 challengers (an evaluation looks up that
    many): the 33rd is refused, changing the share of one is not."""
    adm = k["adm"]
    g.publish("most", QUESTIONS, "lex")
    names = ["m%02d" % i for i in range(33)]
    for n in names:
        g.admin_request("POST", "/admin/v1/backends",
                        {"name": n, "kind": "lexical"}, key=adm)
    codes = [g.admin_request("POST", "/admin/v1/schemas/most/challengers",
                             {"backend": n, "share": 0.01}, key=adm).status
             for n in names[:32]]
    t.eq(codes, [201] * 32, "32 challengers of one version: each 201")
    r = g.admin_request("POST", "/admin/v1/schemas/most/challengers",
                        {"backend": names[32], "share": 0.01}, key=adm)
    t.error_is(r, 422, "validation_error", "the 33rd: 422")
    r = g.admin_request("POST", "/admin/v1/schemas/most/challengers",
                        {"backend": names[0], "share": 0.02}, key=adm)
    t.eq(r.status, 201, "a new share for one of the 32: 201")


def test_share_one(t, g, k):
    before = evaluate(g, k["app"])
    challengers(g, k["adm"], backend="chal", share=1)
    ids = [evaluate(g, k["app"], pause=0.3).json()["x_decision_id"]
           for _ in range(5)]
    t.ok(wait_rows(g, "chal", 5), "at share 1, a row for each decision")
    got = {r[0]: r for r in rows(g, "chal")}
    t.eq(sorted(got), sorted(ids), "of exactly those decisions")
    r = got[ids[0]]
    answers = json.loads(r[2])
    t.ok(sorted(answers) == sorted(QUESTIONS) and
         abs(sum(answers["mood"].values()) - 1) < 1e-9 and
         len(answers["level"]) == 3 and isinstance(answers["ok"], float),
         "untempered distributions of every question", answers)
    t.ok(r[3] >= 0 and r[4] is not None and r[4] > 0 and r[5] == 3 and
         r[6] == "live", "latency, tokens and source", r)
    lst = g.admin_request("GET", "/admin/v1/applications/app/decisions",
                          key=k["adm"]).json()["decisions"]
    by_id = {d["id"]: d for d in lst}
    c = by_id[ids[0]].get("challengers")
    t.ok(c is not None and len(c) == 1 and c[0]["backend"] == "chal" and
         c[0]["answers"] == answers and c[0]["latency_ms"] == r[3] and
         c[0]["input_tokens"] == r[4] and c[0]["output_tokens"] == 3 and
         c[0]["source"] == "live", "the listing carries it", c)
    t.ok("challengers" not in by_id[before.json()["x_decision_id"]],
         "a decision without challengers keeps its shape")
    ex = g.admin_request("GET", "/admin/v1/applications/app/decisions/"
                         "export", key=k["adm"]).body.decode()
    lines = [json.loads(x) for x in ex.splitlines()]
    t.ok(sum(1 for d in lines if d.get("challengers")) >= 5,
         "and so does the export")
    t.ok(client_metric(g, k["adm"], "chal") == [],
         "challenger calls are not in the client's backend metrics")
    t.ok(metric(g, k["adm"], "chal", "ok") >= 5,
         "evalgate_challenger_calls_total{outcome=ok} counts them")


def test_hash(t, g, k):
    challengers(g, k["adm"], backend="chal", share=0.5)
    g.sql("DELETE FROM challenger_answers")
    time.sleep(0.3)
    ok0, shed0 = (metric(g, k["adm"], "chal", o) for o in ("ok", "shed"))
    time.sleep(0.3)
    ids = [evaluate(g, k["app"], pause=0.05).json()["x_decision_id"]
           for _ in range(100)]
    want = sorted(i for i in ids if fnv_selects(i, "chal", 0.5))
    time.sleep(0.5)
    got = sorted(r[0] for r in rows(g, "chal"))
    ok1, shed1 = (metric(g, k["adm"], "chal", o) for o in ("ok", "shed"))
    t.ok(25 <= len(want) <= 75, "share 0.5: about half (%d of 100)" %
         len(want))
    t.ok(set(got) <= set(want) and len(got) == ok1 - ok0 and
         len(got) + (shed1 - shed0) == len(want) and
         len(got) >= len(want) * 3 // 4,
         "exactly the decisions the hash selects, recomputed, were asked "
         "(%d answered, %d shed)" % (len(got), shed1 - shed0),
         (got, want, ok1 - ok0, shed1 - shed0))


def test_slow(t, g, k, slow):
    g.admin("schema", "challenger", "remove", "cs", "--backend", "chal")
    plain = evaluate(g, k["app"], "a slow one, the letter y")
    challengers(g, k["adm"], backend="slow", share=1)
    slow.control(mode="slow", delay_ms=5000)
    t0 = time.time()
    r = evaluate(g, k["app"], "a slow one, the letter y")
    took = time.time() - t0
    t.ok(took < 1.0, "a challenger taking 5 s: the client is answered in "
         "%.3f s" % took)
    t.eq((r.status, r.json()["answers"]), (plain.status,
                                           plain.json()["answers"]),
         "with the same status and answers as without it")
    # Nothing asks the gateway meanwhile (g.sql reads the file).
    t.ok(wait_rows(g, "slow", 1) and rows(g, "slow")[0][3] >= 4900,
         "its answer is recorded afterwards, with its latency",
         rows(g, "slow"))
    # The web server hands the worker that answered its next request at
    # once: the challenger in flight gives way to it.
    shed = metric(g, k["adm"], "slow", "shed")
    evaluate(g, k["app"])
    time.sleep(0.3)
    t0 = time.time()
    r = evaluate(g, k["app"])
    took = time.time() - t0
    t.ok(r.status == 200 and took < 2.5, "the next client, sent while the "
         "challenger is in flight, is answered in %.3f s, not after its "
         "5 s" % took)
    t.ok(metric(g, k["adm"], "slow", "shed") > shed,
         "the challenger's call was given up: outcome=shed")
    g.admin("schema", "challenger", "remove", "cs", "--backend", "slow")


def test_failing(t, g, k, bad):
    r1 = evaluate(g, k["quota"])
    r2 = evaluate(g, k["quota"])
    per = day_left(r1) - day_left(r2)
    challengers(g, k["adm"], backend="bad", share=1)
    failed = metric(g, k["adm"], "bad", "failed")
    r3 = evaluate(g, k["quota"], pause=0.5)
    t.eq((r3.status, r3.json()["answers"]), (r2.status, r2.json()["answers"]),
         "a failing challenger: the same status and answers")
    t.eq(day_left(r2) - day_left(r3), per, "and the same charge (%d units)"
         % per)
    end = time.time() + 5
    while time.time() < end and metric(g, k["adm"], "bad", "failed") == \
            failed:
        time.sleep(0.05)
    t.ok(metric(g, k["adm"], "bad", "failed") > failed,
         "counted as failed")
    t.ok(len(bad.requests()) >= 1, "it was asked")
    t.eq(rows(g, "bad"), [], "no row for a failed challenger")
    r4 = evaluate(g, k["quota"])
    t.eq(day_left(r3) - day_left(r4), per, "nor a charge later")
    g.admin("schema", "challenger", "remove", "cs", "--backend", "bad")


def test_cooling(t, g, k, bad):
    """A challenger whose replica failed twice in a row rests: its calls
    are shed, not made, until its cool-down is over.  bad: an upstream
    of its own, answering 500."""
    g.admin("backend", "add", "bad2", "--kind", "systemone", "--url",
            bad.url)
    challengers(g, k["adm"], backend="bad2", share=1)
    asked = len(bad.requests())
    failed = metric(g, k["adm"], "bad2", "failed")
    shed = metric(g, k["adm"], "bad2", "shed")
    for _ in range(4):
        evaluate(g, k["quota"], pause=0.5)
    end = time.time() + 5
    while time.time() < end and (metric(g, k["adm"], "bad2", "failed") +
                                 metric(g, k["adm"], "bad2", "shed") <
                                 failed + shed + 4):
        time.sleep(0.05)
    t.eq((metric(g, k["adm"], "bad2", "failed") - failed,
          metric(g, k["adm"], "bad2", "shed") - shed), (2, 2),
         "four evaluations: two failed calls rest the replica, the next "
         "two are shed")
    t.eq(len(bad.requests()) - asked, 2, "and only the two were made")
    g.admin("schema", "challenger", "remove", "cs", "--backend", "bad2")


def test_in_flight(t, g, k, held):
    """A challenger call never waits for room in flight: with its
    backend's one call (--max-in-flight 1) taken by a client, it is
    shed, not queued behind it."""
    g.admin("backend", "add", "held", "--kind", "systemone", "--url",
            held.url, "--max-in-flight", "1", "--timeout-ms", "8000")
    g.publish("held", QUESTIONS, "held")
    g.admin("grant", "app", "held")
    held.control(mode="slow", delay_ms=2000)
    challengers(g, k["adm"], backend="held", share=1)
    shed = metric(g, k["adm"], "held", "shed")
    client = {}

    def hold():
        client["r"] = g.post("/v1/systemone", {"state": STATE, "x_schema":
                                               {"id": "held"}},
                             key=k["app"])
    th = threading.Thread(target=hold)
    th.start()
    time.sleep(0.5)
    r = evaluate(g, k["app"], pause=0.5)
    th.join()
    t.ok(r.status == 200 and client["r"].status == 200,
         "setup: both clients answered (%d, %d)" % (r.status,
                                                    client["r"].status))
    t.eq(metric(g, k["adm"], "held", "shed") - shed, 1,
         "the challenger's call, with the backend's one call in flight "
         "taken by a client, is shed")
    t.eq(len(held.requests()), 1, "the upstream saw the client's call only")
    g.admin("schema", "challenger", "remove", "cs", "--backend", "held")


def test_prune_backup(t, g, k):
    challengers(g, k["adm"], backend="chal", share=1)
    evaluate(g, k["quota"], pause=0.5)
    wait_rows(g, "chal", len(rows(g, "chal")) + 1)
    n = len(rows(g))
    t.ok(n > 0, "challenger rows to keep (%d)" % n)
    path = os.path.join(g.dir, "b.db")
    if g.engine == "sqlite":
        g.admin("backup", path)
        db = sqlite3.connect(path)
        kept = db.execute("SELECT count(*) FROM challenger_answers")
        t.eq(kept.fetchone()[0], n, "the backup holds them")
        db.close()
    r = g.admin_request("POST", "/admin/v1/decisions/prune",
                        {"before": "2100-01-01", "application": "app"},
                        key=k["adm"])
    t.eq(r.status, 200, "prune every decision of app")
    left = g.sql("SELECT count(*) FROM challenger_answers c JOIN decisions d"
                 " ON d.id = c.decision_id JOIN applications a"
                 " ON a.id = d.app_id WHERE a.name = 'app'")[0][0]
    orphans = g.sql("SELECT count(*) FROM challenger_answers WHERE"
                    " decision_id NOT IN (SELECT id FROM decisions)")[0][0]
    t.eq((left, orphans), (0, 0), "their challenger rows went with them")
    t.ok(len(rows(g)) > 0, "those of another application's decisions stay")
    if g.engine != "sqlite":
        return
    g.stop()
    p = g.admin("restore", path, check=False)
    t.ok(p.returncode == 0, "restore the backup", p.stderr)
    t.eq(g.sql("SELECT count(*) FROM challenger_answers")[0][0], n,
         "the restore has them again")


def evaluate_both(g, key, n):
    """n evaluations, naming the version and matching its questions in
    turn, each followed by a rest for its challengers: their ids."""
    ids = []
    for i in range(n):
        body = {"state": STATE}
        if i % 2:
            body["questions"] = QUESTIONS
        else:
            body["x_schema"] = {"id": "cs"}
        r = g.post("/v1/systemone", body, key=key)
        ids.append(r.json()["x_decision_id"])
        time.sleep(0.3)
    return ids


def test_kept(t, g, k):
    evaluate_both(g, k["app"], 12)
    t.eq(rows(g, "gen"), [], "a backend not named a challenger: no row")
    r = challengers(g, k["adm"], backend="gen", share=1)
    t.eq(r.status, 201, "named a challenger through /admin/v1")
    ids = evaluate_both(g, k["app"], 8)
    t.ok(wait_rows(g, "gen", 8, timeout=10),
         "the evaluations after it each get a row")
    t.eq(sorted(r[0] for r in rows(g, "gen")), sorted(ids),
         "of exactly those decisions")
    p = g.admin("schema", "challenger", "remove", "cs", "--backend", "gen")
    t.eq(p.returncode, 0, "removed by the console")
    ids = evaluate_both(g, k["app"], 8)
    time.sleep(0.5)
    got = [r[0] for r in rows(g, "gen") if r[0] in ids]
    t.eq(got, [], "the evaluations after it get none")


def main():
    t = TAP()
    g = Gateway(workers=4)
    up, slow, bad = Upstream(), Upstream(), Upstream("error500")
    bad2, held = Upstream("error500"), Upstream()
    try:
        a = g.admin
        a("backend", "add", "lex", "--kind", "lexical")
        a("backend", "add", "chal", "--kind", "systemone", "--url", up.url)
        a("backend", "add", "slow", "--kind", "systemone", "--url", slow.url,
          "--timeout-ms", "8000")
        a("backend", "add", "bad", "--kind", "systemone", "--url", bad.url)
        a("backend", "add", "gen", "--kind", "systemone", "--url", up.url)
        g.publish("cs", QUESTIONS, "lex")
        k = {"app": g.new_key("app", "--rate-per-minute", "100000"),
             "quota": g.new_key("quota", "--rate-per-minute", "100000"),
             "adm": g.new_key("adm", "--admin")}
        a("grant", "app", "cs")
        a("grant", "quota", "cs")
        g.start()
        t.run([test_admin, test_most, test_share_one, test_hash, test_kept],
              g, k)
        t.run([test_slow], g, k, slow)
        t.run([test_failing], g, k, bad)
        t.run([test_cooling], g, k, bad2)
        t.run([test_in_flight], g, k, held)
        t.run([test_prune_backup], g, k)
        t.stop_clean(g)
    finally:
        for u in (up, slow, bad, bad2, held):
            u.stop()
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
