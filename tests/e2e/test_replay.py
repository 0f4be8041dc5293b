"""test_replay: evalgate-admin replay (README, "Challengers") over real
lighttpd, the lexical backend answering the clients and fake System One
upstreams answering the replays:

- decisions of an application with log_state and of one without; replay
  --limit 5 asks about the first 5 kept states in id order and records
  them (source replay, the upstream's distributions, the states it was
  sent are those kept); a second run records the rest, passes over the
  first 5 (resumable) and counts those without a state as skipped; a
  third asks nothing;
- --since walks those created at or after it, among them one whose id
  was made 30 s before its created_at_ms (a clock stepped forward
  between the two readings): on PostgreSQL the walk starts at the
  smallest id of a minute before the since, not at the since itself;
- --rate bounds the run (10 calls at --rate 20 span at least 0.45 s at
  the upstream: a lower bound only);
- a failing backend is counted, records nothing, and the run exits 0;
- an unknown schema, version or backend, the version's own backend and
  a bad --rate or --since exit 1 with a clear line; a missing --backend
  is bad usage (2);
- SIGINT stops the run after the call in flight: exit 130, the summary
  printed, what was recorded kept, and the next run goes on from there;
- on a terminal the progress line is rewritten in place (\\r), off one
  it is whole lines;
- the application's rate and quota are untouched: the day's counter in
  quota_days, and the RateLimit header's day quota an evaluation sees."""

import json
import os
import pty
import signal
import subprocess
import time

from gateway import Gateway, TAP, Upstream

QUESTIONS = {
    "mood": {"type": "choice", "instructions": "which letter",
             "criteria": {"x": "the letter x", "y": "the letter y"}},
    "level": {"type": "score", "instructions": "how much",
              "criteria": ["low", "mid", "high"]},
    "ok": {"type": "noul", "instructions": "is it fine?"},
}
# The fake upstream's default distributions (fake_upstream.py).
WANT = {"mood": {"x": 1 / 3, "y": 2 / 3}, "level": [1 / 6, 2 / 6, 3 / 6],
        "ok": 0.7}
KEPT = 40		# decisions of the application with log_state: two
		# pages of the walk (REPLAY_PAGE, src/admin/replay.c)
PLAIN = 3		# and of the one without


def summary(p):
    """The summary's lines on stdout as a dict."""
    out = {}
    for line in p.stdout.splitlines():
        k, _, v = line.partition(": ")
        out[k] = v
    return out


def counts(p):
    s = summary(p)
    return tuple(int(s.get(k, -1)) for k in
                 ("asked", "recorded", "failed", "skipped",
                  "already_recorded"))


def replay(g, backend, *args, check=False):
    return g.admin("replay", "rs", "--backend", backend, *args, check=check)


def rows(g, backend):
    return g.sql("SELECT c.decision_id, c.answers, c.source, d.state,"
                 " c.input_tokens, c.output_tokens FROM challenger_answers c"
                 " JOIN decisions d ON d.id = c.decision_id"
                 " WHERE c.backend = ? ORDER BY c.decision_id", (backend,))


def kept_ids(g):
    return [i for (i,) in g.sql(
        "SELECT id FROM decisions WHERE state IS NOT NULL ORDER BY id")]


def close(a, b):
    if isinstance(a, dict):
        return sorted(a) == sorted(b) and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    return abs(a - b) < 1e-9


def day_left(r):
    for part in r.headers.get("ratelimit", "").split(","):
        part = part.strip()
        if part.startswith('"day"'):
            for kv in part.split(";")[1:]:
                k, v = kv.split("=")
                if k == "r":
                    return int(v)
    return None


def evaluate(g, key, state):
    r = g.post("/v1/systemone", {"state": state, "x_schema": {"id": "rs"}},
               key=key)
    assert r.status == 200, r
    return r


def test_limit_and_resume(t, g, k, up):
    up.reset()
    p = replay(g, "up", "--limit", "5", "--rate", "1000")
    t.ok((p.returncode, counts(p)[:3]) == (0, (5, 5, 0)),
         "replay --limit 5: exit 0, 5 asked and recorded",
         p.stdout + p.stderr)
    got = rows(g, "up")
    kept = kept_ids(g)
    t.eq([r[0] for r in got], kept[:5],
         "the first 5 decisions with a kept state, in id order")
    t.ok(all(r[2] == "replay" for r in got), "with source replay")
    t.ok(all(close(json.loads(r[1]), WANT) for r in got),
         "and the distributions the upstream answers", got[:1])
    sent = sorted(r["body"]["state"] for r in up.requests())
    t.eq(sent, sorted(json.loads(r[3]) for r in got),
         "the upstream was sent exactly their kept states")
    t.ok(all(r[4] is not None and r[4] > 0 and r[5] == 3 for r in got),
         "with the upstream's tokens")
    skipped = counts(p)[3]
    p = replay(g, "up", "--rate", "1000")
    t.ok((p.returncode, counts(p)) ==
         (0, (KEPT - 5, KEPT - 5, 0, PLAIN, 5)),
         "a second run: the rest asked and recorded, the first 5 passed "
         "over, those without a state skipped", p.stdout + p.stderr)
    t.ok(skipped <= PLAIN, "the first run skipped no more than those "
         "(%d)" % skipped)
    t.eq([r[0] for r in rows(g, "up")], kept,
         "every decision with a state has its replay row, once")
    t.eq(len(up.requests()), KEPT, "each asked once in all")
    p = replay(g, "up")
    t.eq((p.returncode, counts(p)), (0, (0, 0, 0, PLAIN, KEPT)),
         "a third run asks nothing")
    s = summary(p)
    t.eq((s.get("schema"), s.get("version"), s.get("backend")),
         ("rs", "1", "up"), "the summary names what was replayed")


def test_since(t, g, k):
    p = replay(g, "up5", "--since", "2100-01-01", "--rate", "1000")
    t.eq((p.returncode, counts(p)), (0, (0, 0, 0, 0, 0)),
         "--since after every decision: nothing walked")
    p = replay(g, "up5", "--since", "2000-01-01", "--limit", "1",
               "--rate", "1000")
    t.eq((p.returncode, counts(p)[:2]), (0, (1, 1)),
         "--since before them: walked")


def test_since_margin(t, g, k):
    last = kept_ids(g)[-1]
    id_ms = int(last.replace("-", "")[:12], 16)
    g.sql("UPDATE decisions SET created_at_ms = ? WHERE id = ?",
          (id_ms + 30000, last))
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                          time.gmtime((id_ms + 30000) // 1000))
    p = replay(g, "up5", "--since", since, "--rate", "1000")
    t.ok(p.returncode == 0 and last in [r[0] for r in rows(g, "up5")],
         "--since %s: a decision created then whose id was made 30 s "
         "before is walked" % since, p.stdout + p.stderr)


def test_rate(t, g, k, up):
    up.reset()
    t0 = time.time()
    p = replay(g, "up2", "--limit", "10", "--rate", "20")
    took = time.time() - t0
    times = [r["time"] for r in up.requests()]
    t.ok((p.returncode, counts(p)[:2], len(times)) == (0, (10, 10), 10),
         "--limit 10 --rate 20: 10 calls", p.stdout + p.stderr)
    span = max(times) - min(times) if times else 0
    t.ok(span >= 0.44 and took >= 0.44,
         "spread over at least 0.45 s at the upstream (%.3f s; run %.3f s)"
         % (span, took))


def test_failing(t, g, k, bad):
    p = replay(g, "bad", "--limit", "3", "--rate", "1000")
    t.ok((p.returncode, counts(p)[:3]) == (0, (3, 0, 3)),
         "a failing backend: exit 0, 3 asked, 0 recorded, 3 failed",
         p.stdout + p.stderr)
    t.ok("evalgate-admin: decision " in p.stderr,
         "each failure told on stderr", p.stderr)
    t.eq(rows(g, "bad"), [], "nothing recorded for it")
    t.ok(len(bad.requests()) >= 1, "it was asked")


def test_refused(t, g, k):
    for args, why, want in (
            (("replay", "nosuch", "--backend", "up"), "an unknown schema",
             "no schema named 'nosuch'"),
            (("replay", "rs", "--backend", "up", "--version", "9"),
             "an unknown version", "no version 9 of a schema named 'rs'"),
            (("replay", "rs", "--backend", "nosuch"), "an unknown backend",
             "no backend named 'nosuch'"),
            (("replay", "rs", "--backend", "lex"), "the version's own "
             "backend", "the version's own backend"),
            (("replay", "rs", "--backend", "up", "--rate", "0"),
             "--rate 0", "--rate: must be from"),
            (("replay", "rs", "--backend", "up", "--since", "yesterday"),
             "a bad --since", "--since: must be a date")):
        p = g.admin(*args, check=False)
        t.ok(p.returncode == 1 and want in p.stderr and
             p.stdout == "", "%s: exit 1, %r" % (why, want),
             (p.returncode, p.stdout, p.stderr))
    p = g.admin("replay", "rs", check=False)
    t.ok(p.returncode == 2 and "--backend is missing" in p.stderr,
         "a missing --backend: bad usage, exit 2", p.stderr)


def test_sigint(t, g, k):
    e = dict(os.environ)
    e.update(g.env)
    proc = subprocess.Popen(
        g.admin_argv(["replay", "rs", "--backend", "up3", "--rate", "4"]),
        env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.6)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    p = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    c = counts(p)
    n = len(rows(g, "up3"))
    t.ok(proc.returncode == 130 and "stopped: SIGINT" in out and
         0 < c[1] < KEPT, "SIGINT: exit 130 and the summary (%d recorded)"
         % c[1], (proc.returncode, out, err))
    t.eq(n, c[1], "what it recorded stays")
    p = replay(g, "up3", "--rate", "1000")
    t.eq((p.returncode, counts(p)),
         (0, (KEPT - n, KEPT - n, 0, PLAIN, n)),
         "the next run goes on from there")


def test_progress(t, g, k):
    p = replay(g, "up4", "--limit", "2", "--rate", "1000")
    t.ok(p.returncode == 0 and "\r" not in p.stderr and
         p.stderr.startswith("replay: ") and p.stderr.endswith(
             "already recorded\n"), "off a terminal: whole progress "
         "lines", p.stderr)
    e = dict(os.environ)
    e.update(g.env)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        g.admin_argv(["replay", "rs", "--backend", "up4", "--limit", "3",
                      "--rate", "1000"]),
        env=e, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    out = proc.communicate(timeout=30)[0]
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    t.ok(proc.returncode == 0 and err.count(b"\rreplay: ") >= 3 and
         b"3 asked" in err, "on a terminal: one line rewritten in place",
         (proc.returncode, out, err))


def test_limits(t, g, k):
    key = k["kept"]
    r1 = evaluate(g, key, "limits one")
    r2 = evaluate(g, key, "limits two")
    per = day_left(r1) - day_left(r2)
    q = "SELECT q.used FROM quota_days q JOIN applications a" \
        " ON a.id = q.app_id WHERE a.name = 'kept'"
    before = g.sql(q)
    p = replay(g, "up6", "--rate", "1000")
    t.ok(p.returncode == 0 and counts(p)[1] == KEPT + 2,
         "a replay asked about every kept decision", p.stdout)
    t.eq(g.sql(q), before, "the day's counter in quota_days is the same")
    r3 = evaluate(g, key, "limits three")
    t.ok(per > 0 and day_left(r2) - day_left(r3) == per,
         "the next evaluation sees the day's quota charged for itself "
         "alone (%d units)" % per)
    t.eq((r3.headers.get("ratelimit-policy"), r3.status),
         (r2.headers.get("ratelimit-policy"), 200),
         "and the same policy")


def main():
    t = TAP()
    g = Gateway()
    up, bad = Upstream(), Upstream("error500")
    try:
        a = g.admin
        a("backend", "add", "lex", "--kind", "lexical")
        for name in ("up", "up2", "up3", "up4", "up5", "up6"):
            a("backend", "add", name, "--kind", "systemone", "--url", up.url)
        a("backend", "add", "bad", "--kind", "systemone", "--url", bad.url)
        g.publish("rs", QUESTIONS, "lex")
        k = {"kept": g.new_key("kept", "--log-state", "--rate-per-minute",
                               "100000", "--daily-quota", "100000"),
             "plain": g.new_key("plain", "--rate-per-minute", "100000")}
        a("grant", "kept", "rs")
        a("grant", "plain", "rs")
        g.start()
        # Interleaved, so that the skipped ones fall among the others.
        for i in range(KEPT):
            evaluate(g, k["kept"], "case %d: the letter x, fine" % i)
            if i % 4 == 0 and i // 4 < PLAIN:
                evaluate(g, k["plain"], "plain %d: the letter y" % i)
        t.run([test_limit_and_resume, test_rate], g, k, up)
        t.run([test_since, test_since_margin, test_refused, test_sigint,
               test_progress], g, k)
        t.run([test_failing], g, k, bad)
        t.run([test_limits], g, k)
        t.stop_clean(g)
    finally:
        for u in (up, bad):
            u.stop()
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
