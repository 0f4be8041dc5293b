"""test_crash: nothing acknowledged is lost when workers die.

A gateway with 4 workers (lexical backend) is loaded by client threads
that evaluate and record outcomes, while a killer sends SIGKILL to a
random worker every 50-150 ms for a while; lighttpd respawns them.  Run
once with SERVICE_DB_SYNC=normal (protects against a process crash) and
once with full (adds power loss, which a test cannot cut).  Proves,
for each:

- PRAGMA integrity_check is "ok" and foreign_key_check finds nothing;
- every decision id a client received with a 200 reads back
  (GET /v1/decisions/{id}) with exactly the answers it was given;
- every outcome acknowledged with a 200 is stored with its value;
- the day's quota counter is never below the cost of the calls answered
  200 (and never above the cost of every call that may have been
  admitted: 200s plus the ones cut off by a kill);
- service resumes without operator action: /health, /health/ready and an
  evaluation answer 200 once the killing stops.

A third run ("queue", SERVICE_DB_SYNC=normal, 8 workers) has every
writer hold the host's write-lock queue for 20 ms
(SERVICE_TEST_QUEUE_HOLD_MS, a test hook), so that at any moment one
worker holds each queue and the others wait in line, asleep; the killer
picks its victims among them (by /proc/PID/wchan: the holder sleeps in
nanosleep, a waiter in a futex) and the same checks prove that a worker
killed holding or waiting for the lock stalls nobody and loses nothing
acknowledged (doc/design.md, section 9.3).

A fourth run ("group", SERVICE_DB_SYNC=normal, 8 workers) is the same
for group commit: the worker leading one sleeps 20 ms before its COMMIT
and again after it once it holds other workers' decisions
(SERVICE_TEST_GROUP_HOLD_MS), and
the killer picks leaders sleeping there and owners waiting (a futex)
for their decision to be written.  The owners of decisions a killed
leader held must still be answered 200 by the worker that takes over
(nothing but 200s and lighttpd's answers for killed workers), and the
same checks prove nothing acknowledged lost and no charge lost or
counted twice; the log shows that decisions held by a leader killed
before its COMMIT were written by the next, and those of one killed
after it found committed.

On PostgreSQL (EVALGATE_TEST_ENGINE=postgresql) the "normal" run is
the same (a worker's death loses nothing the server committed), and a
"server" run (SERVICE_DB_SYNC=full, synchronous_commit on) adds the
server's own crash: under the same load and worker kills, the postmaster
is killed with SIGKILL once and restarted 2 s later.  While it is down,
calls are answered 503 service_unavailable with Retry-After (by our
worker, not lighttpd); once it is back the workers reconnect by
themselves and serve again; and the same checks prove that every
decision and outcome acknowledged before, during and after is there.
The runs "full" and "queue" are SQLite's (power loss a test cannot cut;
the write-lock queue of doc/design.md, section 9.3, is SQLite's
writers'): skipped there, saying so.  integrity_check and
foreign_key_check are SQLite's; on PostgreSQL the same query finds no
answer or outcome without its decision.

The figures (kills, requests, outcomes) are printed as TAP comments.
"""

import os
import random
import re
import signal
import sys
import threading
import time
import http.client
import json

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from gateway import ENGINE, Gateway, TAP  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEMO = os.path.join(HERE, "..", "..", "examples", "demo-questions.json")
COST = 1 + 3            # the demo schema has three questions
CLIENTS = 8
KILL_SECONDS = float(os.environ.get("EVALGATE_CRASH_SECONDS", "12"))
WORDS = ("broken angry refund happy great love question asking how down "
         "now urgent today soon week money back thankful terrible").split()


def request(g, method, path, body, key, timeout=30, headers=None):
    """(status, parsed body or None); status 0 when the connection broke.
    lighttpd's own answers (a worker died under a request, or every
    worker is down) are HTML: their body is None.  headers, a dict, is
    given the answer's headers (lower-case names)."""
    c = http.client.HTTPConnection("127.0.0.1", g.port, timeout=timeout)
    try:
        c.request(method, path, body=json.dumps(body) if body is not None
                  else None, headers={"Authorization": "Bearer " + key,
                                      "Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        if headers is not None:
            headers.update((k.lower(), v) for k, v in r.getheaders())
        try:
            return r.status, json.loads(data)
        except ValueError:
            return r.status, None
    except (OSError, http.client.HTTPException):
        return 0, None
    finally:
        c.close()


class Ledger:
    """What the clients were told, shared by their threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.decisions = {}         # id -> answers received
        self.outcomes = {}          # (id, question) -> value acknowledged
        self.sent_outcomes = {}     # (id, question) -> value sent, any answer
        self.eval_status = {}       # status -> count
        self.outcome_status = {}
        self.other = []             # unexpected answers, for diagnosis
        self.ok_times = []          # when each evaluation answered 200
        self.down = None            # (from, to) while the server was down
        self.unavailable = []       # 503 service_unavailable: Retry-After

    def count(self, table, status):
        with self.lock:
            table[status] = table.get(status, 0) + 1

    def unexpected(self, what, status, body, headers=None):
        """Keeps an answer that is not lighttpd's for a dead worker (a
        broken connection, or an HTML 500/502/503): any answer of ours but
        a 200 is one, and a 503 service_unavailable when the database
        server was killed (kept apart, with its Retry-After)."""
        if status in (0, 500, 502, 503) and body is None:
            return
        if self.down is not None and status == 503 and \
                body.get("error", {}).get("code") == "service_unavailable":
            with self.lock:
                self.unavailable.append((headers or {}).get("retry-after"))
            return
        with self.lock:
            self.other.append((what, status, body))


def client(g, key, ledger, stop, seed):
    rnd = random.Random(seed)
    while not stop.is_set():
        state = " ".join(rnd.choice(WORDS) for _ in range(8))
        h = {}
        st, body = request(g, "POST", "/v1/systemone",
                           {"state": state, "x_schema": {"id": "demo"}}, key,
                           headers=h)
        ledger.count(ledger.eval_status, st)
        if st != 200:
            ledger.unexpected("evaluate", st, body, h)
            time.sleep(0.02)
            continue
        did, answers = body["x_decision_id"], body["answers"]
        with ledger.lock:
            ledger.decisions[did] = answers
            ledger.ok_times.append(time.time())
        if rnd.random() < 0.3:
            continue
        values = {"sentiment": answers["sentiment"]["choice"],
                  "refund": rnd.random() < 0.5,
                  "urgency": rnd.randrange(4)}
        if rnd.random() < 0.5:
            values.pop("urgency")
        with ledger.lock:
            for q, v in values.items():
                ledger.sent_outcomes[(did, q)] = v
        h = {}
        st, obody = request(g, "POST", "/v1/decisions/%s/outcome" % did,
                            {"answers": values, "source": "crash-test"},
                            key, headers=h)
        ledger.count(ledger.outcome_status, st)
        if st == 200:
            with ledger.lock:
                for q, v in values.items():
                    ledger.outcomes[(did, q)] = v
        else:
            ledger.unexpected("outcome", st, obody, h)


def live_workers(g):
    """The workers that are running (not zombies awaiting lighttpd)."""
    pids = []
    for pid in g.worker_pids():
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    pids.append(pid)
        except (OSError, IndexError):
            pass
    return pids


def role(pid):
    """What a worker is doing, by where it sleeps: "holding" a write-lock
    queue or others' decisions (a test hook's nanosleep), "waiting" in
    the queue or for its decision (a futex), or "other"."""
    try:
        with open("/proc/%d/wchan" % pid) as f:
            wchan = f.read()
    except OSError:
        return "other"
    if "nanosleep" in wchan:
        return "holding"
    if "futex" in wchan:
        return "waiting"
    return "other"


def killer(g, stop, rnd, kills, roles=None):
    """Kills a worker every 50-150 ms; with roles (a dict), one holding
    or waiting for a write-lock queue when there is one, counting which."""
    while not stop.is_set():
        time.sleep(rnd.uniform(0.05, 0.15))
        pids = live_workers(g)
        if not pids:
            continue
        pid, what = rnd.choice(pids), None
        if roles is not None:
            # The role killed least so far, among those found now.
            found = [(p, role(p)) for p in pids]
            queued = [(roles.get(r, 0), rnd.random(), p, r)
                      for p, r in found if r != "other"]
            pid, what = min(queued)[2:] if queued else rnd.choice(found)
        try:
            os.kill(pid, signal.SIGKILL)
            kills.append(pid)
            if roles is not None:
                roles[what] = roles.get(what, 0) + 1
        except ProcessLookupError:
            pass


def quota_used(g):
    rows = g.sql("SELECT q.used FROM quota_days q JOIN applications"
                 " a ON a.id = q.app_id WHERE a.name = 'crash'")
    return sum(r[0] for r in rows)


def server_crash(g, key, ledger, stop, probes):
    """Kills PostgreSQL's postmaster once, a third into the run, probes
    the gateway while it is down, and starts it again 2 s later (or once
    every probe was answered, at most 20 s later).  probes
    gets, per kind of call, the first answer of ours (JSON) while it was
    down: (status, error code, Retry-After)."""
    if stop.wait(KILL_SECONDS / 3):
        return
    with ledger.lock:
        known = next(iter(ledger.decisions), "0")
    down = time.time()
    ledger.down = (down, None)
    g.pg.kill()
    calls = (("evaluate", "POST", "/v1/systemone",
              {"state": "broken", "x_schema": {"id": "demo"}}),
             ("decision", "GET", "/v1/decisions/" + known, None),
             ("ready", "GET", "/health/ready", None))
    # Down 2 s, or longer until each kind of call got an answer of ours
    # (a probe may meet a worker being killed, or wait behind one).
    while time.time() < down + 2.0 or (len(probes) < len(calls) and
                                        time.time() < down + 20.0):
        for what, method, path, body in calls:
            if what in probes:
                continue
            h = {}
            st, b = request(g, method, path, body, key, timeout=10,
                            headers=h)
            if b is not None:   # not lighttpd's answer for a killed worker
                probes[what] = (st, (b.get("error") or {}).get("code"),
                                h.get("retry-after"))
        time.sleep(0.1)
    g.pg.start()
    ledger.down = (down, time.time())


def wait_ready(g, key, timeout=30):
    """(seconds, evaluations sent): the first time health, readiness and
    an evaluation all answer 200 after the killing stopped (None if
    never), and how many evaluations that took."""
    start, sent = time.time(), 0
    while time.time() - start < timeout:
        try:
            if g.get("/health", timeout=5).status == 200 and \
                    g.get("/health/ready", timeout=5).status == 200:
                sent += 1
                if request(g, "POST", "/v1/systemone",
                           {"state": "broken", "x_schema": {"id": "demo"}},
                           key, timeout=10)[0] == 200:
                    return time.time() - start, sent
        except OSError:
            pass
        time.sleep(0.1)
    return None, sent


def run(t, name):
    sync = "full" if name in ("full", "server") else "normal"
    env = {"SERVICE_DB_SYNC": sync}
    roles = None
    if name in ("queue", "group"):
        env["SERVICE_TEST_%s_HOLD_MS" % name.upper()] = "20"
        roles = {}
    g = Gateway(workers=8 if roles is not None else 4, env=env)
    try:
        g.admin("backend", "add", "lex", "--kind", "lexical")
        g.admin("schema", "publish", "demo", "--questions", DEMO,
                "--backend", "lex")
        key = g.new_key("crash", "--rate-per-minute", "10000000",
                        "--daily-quota", "1000000000")
        g.admin("grant", "crash", "demo")
        g.start()
        ledger, stop, kills = Ledger(), threading.Event(), []
        rnd = random.Random(os.environ.get("EVALGATE_CRASH_SEED") or
                            time.time_ns())
        threads = [threading.Thread(target=client,
                                    args=(g, key, ledger, stop,
                                          rnd.random()))
                   for _ in range(CLIENTS)]
        threads.append(threading.Thread(target=killer,
                                        args=(g, stop, rnd, kills, roles)))
        probes = {}
        if name == "server":
            threads.append(threading.Thread(
                target=server_crash, args=(g, key, ledger, stop, probes)))
        for th in threads:
            th.start()
        time.sleep(KILL_SECONDS)
        stop.set()
        for th in threads:
            th.join(60)
        requests = sum(ledger.eval_status.values())
        outcome_requests = sum(ledger.outcome_status.values())
        print("# %s (SERVICE_DB_SYNC=%s): %d kills in %.0f s; %d "
              "evaluations %r; %d outcome requests %r; %d decisions and %d "
              "outcomes acknowledged" % (name, sync, len(kills), KILL_SECONDS, requests,
                                ledger.eval_status, outcome_requests,
                                ledger.outcome_status,
                                len(ledger.decisions), len(ledger.outcomes)))
        sync = name     # the runs' names, in what follows
        t.ok(len(kills) >= KILL_SECONDS * 2,
             "%s: workers were killed (%d)" % (sync, len(kills)))
        if roles is not None:
            print("# %s: killed %r" % (name, roles))
            held, waited = (("holding a write-lock queue", "waiting in one")
                            if name == "queue" else
                            ("leading a group commit, holding others' "
                             "decisions", "waiting for theirs"))
            t.ok(roles.get("holding", 0) >= 1, "%s: workers were killed "
                 "%s (%d)" % (name, held, roles.get("holding", 0)))
            t.ok(roles.get("waiting", 0) >= 1, "%s: workers were killed "
                 "%s (%d)" % (name, waited, roles.get("waiting", 0)))
        if name == "group":
            log = g.log()
            led = log.count("test: leading ")
            t.ok(led >= 10, "group: leaders wrote several workers' "
                 "decisions in one transaction (%d times)" % led)
            took = re.findall(r"took over (\d+) decisions from a worker "
                              r"that died writing them; it had committed "
                              r"(\d+)", log)
            print("# group: taken over (decisions, committed): %r" % took)
            t.ok(any(int(c) == 0 for _, c in took),
                 "group: the decisions of a leader killed before its "
                 "COMMIT were written by the next")
            t.ok(any(int(c) > 0 for _, c in took),
                 "group: those of a leader killed after it were found "
                 "committed, not written twice")
        t.ok(len(ledger.decisions) >= 50 and len(ledger.outcomes) >= 50,
             "%s: load went through between kills (%d decisions, "
             "%d outcomes)" % (sync, len(ledger.decisions),
                               len(ledger.outcomes)))
        t.eq(ledger.other, [], "%s: no answer but 200s and lighttpd's own "
             "for a killed worker (HTML 500/502/503, a cut connection)"
             % sync + (", and 503 service_unavailable while PostgreSQL "
                       "was down" if name == "server" else ""))
        if name == "server":
            server_checks(t, ledger, probes)

        took, ready_calls = wait_ready(g, key)
        t.ok(took is not None, "%s: health, readiness and an evaluation "
             "answer without operator action (after %s s)" %
             (sync, "%.2f" % took if took is not None else "never"))

        lost, wrong = [], []
        got_outcomes = {}
        for did, answers in sorted(ledger.decisions.items()):
            st, body = request(g, "GET", "/v1/decisions/" + did, None, key)
            if st != 200:
                lost.append((did, st))
                continue
            if body["answers"] != answers:
                wrong.append((did, body["answers"], answers))
            for q, o in body["outcomes"].items():
                got_outcomes[(did, q)] = o["value"]
        t.eq(lost, [], "%s: every one of %d decisions received reads back"
             % (sync, len(ledger.decisions)))
        t.eq(wrong, [], "%s: with the answers the client was given" % sync)
        missing = [(k, v) for k, v in ledger.outcomes.items()
                   if got_outcomes.get(k) != v]
        t.eq(missing, [], "%s: every one of %d acknowledged outcomes is "
             "stored with its value" % (sync, len(ledger.outcomes)))
        # An outcome cut off by a kill may or may not be stored, but never
        # with another value than the one sent.
        strange = [(k, v) for k, v in got_outcomes.items()
                   if k[0] in ledger.decisions and
                   ledger.sent_outcomes.get(k) != v]
        t.eq(strange, [], "%s: no outcome was stored that was not sent"
             % sync)

        g.stop()
        used = quota_used(g)
        answered = ledger.eval_status.get(200, 0) + (took is not None)
        uncertain = requests - ledger.eval_status.get(200, 0) + \
            ready_calls - (took is not None)
        print("# %s: quota used %d; answered 200: %d calls = %d units; "
              "cut off or refused: %d calls" %
              (sync, used, answered, answered * COST, uncertain))
        t.ok(used >= answered * COST,
             "%s: quota counter %d >= %d units of the calls answered 200"
             % (sync, used, answered * COST))
        t.ok(used <= (answered + uncertain) * COST,
             "%s: and <= %d units of every call that may have been admitted"
             % (sync, (answered + uncertain) * COST))

        if g.engine == "sqlite":
            t.eq(g.sql("PRAGMA integrity_check"), [("ok",)],
                 "%s: PRAGMA integrity_check ok" % sync)
            t.eq(g.sql("PRAGMA foreign_key_check"), [],
                 "%s: PRAGMA foreign_key_check finds nothing" % sync)
        else:
            t.eq(g.sql("SELECT (SELECT count(*) FROM outcomes"
                       " WHERE decision_id NOT IN (SELECT id FROM"
                       " decisions)) + (SELECT count(*) FROM decisions"
                       " WHERE answers NOT LIKE '[{%}]')")[0][0], 0,
                 "%s: no outcome without its decision, no decision"
                 " without its answers" % sync)
        n = g.sql("SELECT count(*) FROM decisions")[0][0]
        t.ok(n >= len(ledger.decisions), "%s: %d decisions stored, at "
             "least the %d acknowledged" % (sync, n, len(ledger.decisions)))
        # SIGKILL leaves no sanitizer report; every worker that was
        # stopped normally must not have one either.
        t.eq(g.sanitizer_reports(), [], "%s: no sanitizer reports" % sync)
        return len(kills), requests + outcome_requests, len(ledger.outcomes)
    finally:
        g.cleanup()


def server_checks(t, ledger, probes):
    """The server run: the gateway's answers while PostgreSQL was down,
    and its service once it was back."""
    down, up = ledger.down
    print("# server: PostgreSQL down for %.2f s; %d answers 503 "
          "service_unavailable meanwhile; probes %r" %
          (up - down, len(ledger.unavailable), probes))
    for what in ("evaluate", "decision", "ready"):
        got = probes.get(what)
        t.ok(got is not None and got[:2] == (503, "service_unavailable")
             and (got[2] or "").isdigit(),
             "server: while PostgreSQL is down, %s is 503 "
             "service_unavailable with Retry-After" % what, got)
    t.ok(all((ra or "").isdigit() for ra in ledger.unavailable),
         "server: every 503 service_unavailable the clients got carries "
         "Retry-After", ledger.unavailable[:10])
    after = [x - up for x in ledger.ok_times if x > up]
    t.ok(after and after[0] < 15, "server: once it is back, the workers "
         "reconnect by themselves (first evaluation answered %s s after "
         "the restart; %d after it)" %
         ("%.2f" % after[0] if after else "never", len(after)))


def main():
    t = TAP()
    totals = [0, 0, 0]
    runs = ("normal", "full", "queue", "group")
    if ENGINE == "postgresql":
        runs = ("normal", "server")
        t.skip("full: power loss", "SQLite only: on PostgreSQL the server "
               "run has SERVICE_DB_SYNC=full")
        t.skip("queue: workers killed in the write-lock queue",
               "SQLite only: the queue is SQLite's writers' (doc/design.md, "
               "section 9.3)")
        t.skip("group: leaders killed in a group commit",
               "SQLite only: group commit is SQLite's writers'")
    for sync in runs:
        try:
            for i, n in enumerate(run(t, sync)):
                totals[i] += n
        except Exception as e:
            import traceback
            t.ok(False, "%s raised %r" % (sync, e), traceback.format_exc())
    print("# total: %d kills, %d requests, %d outcomes acknowledged" %
          tuple(totals))
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
