"""test_limits: the per-minute rate limit (GCRA, in the host's shared memory)
and the
daily quota in cost units (in the database) over real lighttpd with two
workers and the built-in lexical backend, with the clock pinned through
SERVICE_TEST_CLOCK_FILE: exact admission under a concurrent burst, the
Retry-After values (rate, quota, UTC midnight, both refusing), what counts
and what does not, refused calls consuming nothing, no 503 charged (a
client retrying one never turns it into a 429), `app update` and the
SERVICE_DEFAULT_* limits, the RateLimit-Policy and RateLimit fields, and
what survives a restart or the loss of the shared memory or the cache
file.  On PostgreSQL the rate window and the running total are in the
database (its admission table), so losing the host's files loses
nothing at all."""

import calendar
import json
import os
import re
import struct
import threading
import time

from gateway import Gateway, TAP

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")
with open(os.path.join(EXAMPLES, "demo-questions.json")) as f:
    DEMO = json.load(f)         # 3 questions: a call costs 4 units
ONE = {"refunded": {"type": "noul", "instructions": "refund?"}}  # costs 2
DEAD = {"lost": {"type": "noul", "instructions": "lost?"}}  # costs 2
SHAKY = {"retried": {"type": "noul", "instructions": "retried?"}}  # 2
STATE = "my order arrived broken, I want a refund"
DEFAULT_RATE, DEFAULT_QUOTA = 7, 20     # SERVICE_DEFAULT_* of this gateway
BURST = 40

# One Structured Fields list item: "name";key=integer;...
SF_ITEM = re.compile(r'"([a-z]+)"((?:;[a-z]+=[0-9]+)+)')


def utc_ms(text):
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")) * 1000


class Clock:
    """The gateway's clock: a file of epoch milliseconds, replaced
    atomically so that a worker never reads half a number."""

    def __init__(self, path):
        self.path = path

    def set(self, ms):
        self.now = ms
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % ms)
        os.replace(tmp, self.path)

    def advance(self, ms):
        self.set(self.now + ms)


def sf_list(value):
    """Parses a RateLimit or RateLimit-Policy value strictly: a list of
    "name";k=v items.  Returns {name: {k: int}} or None."""
    if value is None:
        return None
    out = {}
    for part in value.split(","):
        m = SF_ITEM.fullmatch(part.strip())
        if m is None:
            return None
        out[m.group(1)] = {k: int(v) for k, v in
                           (p.split("=") for p in m.group(2)[1:].split(";"))}
    return out


def remaining(r):
    """(minute r, day r) of a RateLimit field."""
    rl = sf_list(r.headers.get("ratelimit")) or {}
    return (rl.get("minute", {}).get("r"), rl.get("day", {}).get("r"))


def retry(r):
    """(Retry-After, retry-after-ms) as integers, or None if malformed."""
    ra, ms = r.headers.get("retry-after"), r.headers.get("retry-after-ms")
    if ra is None or ms is None or not ra.isdigit() or not ms.isdigit():
        return None
    return int(ra), int(ms)


def new_app(g, name, *limits):
    g.admin("app", "create", name, *limits)
    g.admin("grant", name, "demo")
    g.admin("grant", name, "one")
    return g.admin("key", "issue", name).stdout.strip()


def evaluate(g, key, questions=DEMO):
    return g.post("/v1/systemone", {"state": STATE, "questions": questions},
                  key=key)


def models(g, key):
    return g.get("/v1/models", key=key)


def counters(g, name):
    """({day: units used}, theoretical arrival time or None) of an app,
    read from the database and the cache file as they are on disk."""
    return all_counters(g, name)[:2]


def all_counters(g, name):
    """counters(), and the running total {day: units} (the units charged
    at admission, ahead of the database's quota_days by the calls in
    flight): the host's shared memory's, or PostgreSQL's admission
    row's."""
    app = g.sql("SELECT id FROM applications WHERE name = ?",
                (name,))[0][0]
    used = dict(g.sql("SELECT day, used FROM quota_days WHERE app_id = ?",
                      (app,)))
    row = shared_admission(g, app) if g.engine == "sqlite" else \
        pg_admission(g, app)
    running = {row[1]: row[2]} if row and row[2] else {}
    return used, row[0] if row else None, running


DAY_MS = 86400000


def pg_admission(g, app):
    """(arrival time, UTC day, running total) of application id app in
    PostgreSQL's admission table, or None."""
    rows = g.sql("SELECT tat_ms, day, used FROM admission WHERE app_id = ?"
                 " ORDER BY day DESC", (app,))
    return tuple(rows[0]) if rows else None


def shared_admission(g, app):
    """(arrival time, UTC day, running total) of application id app in the
    host's shared memory (evalgate.shm beside the cache), or None.  Its
    entry (src/shm.c, struct shm_admit) is eight-byte integers: app_id,
    day (days since the epoch), then tat_ms, tat_rate, tat_at_ms, used;
    it is found by the first two, a day of these tests' years."""
    try:
        with open(os.path.join(g.dir, "evalgate.shm"), "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    n = len(data) // 8
    words = struct.unpack("<%dq" % n, data[:n * 8])
    for i in range(n - 5):
        if words[i] == app and 21900 <= words[i + 1] <= 22300:
            day = time.strftime("%Y-%m-%d",
                                time.gmtime(words[i + 1] * DAY_MS / 1000))
            return words[i + 2], day, words[i + 5]
    return None


def refused(t, r, code, want_ms, name):
    """A 429 of the given code whose retry headers say want_ms."""
    t.error_is(r, 429, code, name)
    t.eq(retry(r), (-(-want_ms // 1000), want_ms),
         name + ": Retry-After = ceil(retry-after-ms / 1000)")


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def test_burst(t, g, clock):
    t0 = utc_ms("2030-03-10T12:00:00Z")
    clock.set(t0)
    key = new_app(g, "burst", "--rate-per-minute", "20",
                  "--daily-quota", "1000000")
    pids = g.worker_pids()
    before = {p: cpu_ticks(p) for p in pids}
    gate = threading.Barrier(BURST)
    out = [None] * BURST

    def fire(i):
        gate.wait()
        try:
            out[i] = evaluate(g, key)
        except Exception as e:      # counted as neither 200 nor 429
            out[i] = e

    threads = [threading.Thread(target=fire, args=(i,))
               for i in range(BURST)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    ok = [r for r in out if getattr(r, "status", None) == 200]
    no = [r for r in out if getattr(r, "status", None) == 429]
    t.eq((len(ok), len(no)), (20, 20),
         "40 concurrent calls at one instant, 20/min: exactly 20 admitted,"
         " 20 refused")
    t.eq(len(pids), 2, "two workers served the burst")
    t.ok(all(cpu_ticks(p) > before[p] for p in pids),
         "both workers did work during the burst (each hashed the key)")
    t.ok(all(r.json()["error"]["code"] == "rate_limited" for r in no),
         "every refusal is rate_limited", [r.body[:200] for r in no][:3])
    rs = [retry(r) for r in no]
    t.ok(all(x is not None and x[0] >= 1 and x[0] == -(-x[1] // 1000)
             for x in rs),
         "every 429 has integer Retry-After >= 1 and retry-after-ms,"
         " Retry-After = ceil(ms / 1000)", rs)
    t.eq(set(rs), {(3, 3000)},
         "the clock stood still: each waits one interval (60 s / 20)")
    t.ok(all(r.headers.get("ratelimit-policy") ==
             '"minute";q=20;w=60, "day";q=1000000;w=86400' for r in ok),
         "every admitted call names both policies",
         ok[0].headers if ok else None)
    t.eq(sorted(remaining(r)[0] for r in ok), list(range(20)),
         "the admitted calls saw 19, 18, ... 0 calls remaining")
    t.eq(counters(g, "burst"), ({"2030-03-10": 80}, t0 + 60000),
         "20 calls of cost 4 used 80 units; the arrival time is a minute"
         " ahead: the 20 refusals consumed nothing")

    snap = counters(g, "burst")
    refused(t, evaluate(g, key), "rate_limited", 3000,
            "one more at the same instant")
    t.eq(counters(g, "burst"), snap, "that refusal changed no counter")
    clock.set(t0 + 2999)
    refused(t, evaluate(g, key), "rate_limited", 1, "1 ms early")
    clock.set(t0 + 3000)
    r = evaluate(g, key)
    t.eq(r.status, 200, "at exactly Retry-After later, a call fits")
    t.eq(remaining(r)[0], 0, "and it was the only one")
    refused(t, evaluate(g, key), "rate_limited", 3000,
            "the next waits one interval again")


def test_what_counts(t, g, clock):
    clock.set(utc_ms("2030-03-10T13:00:00Z"))
    key = new_app(g, "counting", "--rate-per-minute", "3",
                  "--daily-quota", "100")
    r = models(g, key)
    t.eq((r.status, remaining(r)), (200, (2, 100)),
         "GET /v1/models counts 1 call and costs 0 units")
    for _ in range(3):
        t.error_is(g.post("/v1/systemone", {"state": "no questions"},
                          key=key), 422, "validation_error",
                   "a 422 from /v1/systemone")
    t.error_is(g.get("/v1/models", key="svc_aaaaaaaa_" + "A" * 32), 401,
               "invalid_api_key", "a bad key")
    for path in ("/health", "/health/ready"):
        for _ in range(4):
            r = g.get(path, key=key)
    t.eq(r.status, 200, "health answers")
    t.ok("ratelimit" not in r.headers, "health carries no RateLimit")
    t.eq(counters(g, "counting")[0], {},
         "no units used yet: models cost nothing")
    r = models(g, key)
    t.eq(remaining(r), (1, 100),
         "health, the 422s and the 401 were not counted")
    r = evaluate(g, key)
    t.eq((r.status, remaining(r)), (200, (0, 96)),
         "POST /v1/systemone with 3 questions: 1 call, 4 units")
    refused(t, models(g, key), "rate_limited", 20000,
            "the 4th authenticated call of the minute, on any route")
    t.eq(counters(g, "counting")[0], {"2030-03-10": 4}, "4 units in all")


def test_daily_quota(t, g, clock):
    late = utc_ms("2030-03-10T23:59:30Z")
    clock.set(late)
    key = new_app(g, "daily", "--rate-per-minute", "1000",
                  "--daily-quota", "10")
    r1, r2 = evaluate(g, key), evaluate(g, key)
    t.eq((r1.status, r2.status), (200, 200), "two calls of cost 4 fit")
    t.eq((remaining(r1)[1], remaining(r2)[1]), (6, 2),
         "RateLimit day: 6 then 2 units left")
    t.eq(sf_list(r2.headers.get("ratelimit"))["day"]["t"], 30,
         "the day resets in 30 s")
    snap = all_counters(g, "daily")
    t.eq(snap[0], {"2030-03-10": 8}, "8 units used, in the database")
    t.eq(snap[2], {"2030-03-10": 8},
         "and in the shared running total, which nothing is in flight for")
    refused(t, evaluate(g, key), "quota_exceeded", 30000,
            "a third (4 more than the 2 left): refused until midnight UTC")
    t.eq(all_counters(g, "daily"), snap,
         "the refused call consumed nothing: the database's quota_days and"
         " the shared admission entry unchanged")
    clock.set(late + 400)
    refused(t, evaluate(g, key), "quota_exceeded", 29600,
            "400 ms later: Retry-After still rounds up to 30")
    r = evaluate(g, key, ONE)
    t.eq((r.status, remaining(r)[1]), (200, 0),
         "a one-question call (cost 2) still fits exactly at 10")
    refused(t, evaluate(g, key, ONE), "quota_exceeded", 29600,
            "then even cost 2 is refused")
    r = models(g, key)
    t.eq((r.status, remaining(r)[1]), (200, 0),
         "a call costing 0 is never refused by the quota")
    clock.set(utc_ms("2030-03-11T00:00:00Z"))
    r = evaluate(g, key)
    t.eq((r.status, remaining(r)[1]), (200, 6),
         "past midnight UTC: admitted, a new day's quota")
    t.eq(sf_list(r.headers.get("ratelimit"))["day"]["t"], 86400,
         "the new day resets in 86400 s")
    t.eq(counters(g, "daily")[0], {"2030-03-10": 10, "2030-03-11": 4},
         "one counter per UTC day")


def test_both_refuse(t, g, clock):
    noon = utc_ms("2030-03-12T12:00:00Z")
    clock.set(noon)
    key = new_app(g, "both", "--rate-per-minute", "1", "--daily-quota", "4")
    t.eq(evaluate(g, key).status, 200, "1/min, 4 units: one call fits")
    refused(t, evaluate(g, key), "quota_exceeded", 12 * 3600 * 1000,
            "both refuse at noon: the quota's 12 h is later than the"
            " rate's 60 s")
    clock.set(utc_ms("2030-03-12T23:59:20Z"))
    key = new_app(g, "both2", "--rate-per-minute", "1", "--daily-quota", "4")
    t.eq(evaluate(g, key).status, 200, "one call at 23:59:20")
    clock.set(utc_ms("2030-03-12T23:59:50Z"))
    snap = counters(g, "both2")
    refused(t, evaluate(g, key), "rate_limited", 30000,
            "both refuse at 23:59:50: the rate's 30 s is later than"
            " midnight's 10 s")
    t.eq(counters(g, "both2"), snap, "that refusal consumed nothing")
    clock.set(utc_ms("2030-03-13T00:00:20Z") - 1)
    refused(t, evaluate(g, key), "rate_limited", 1,
            "the quota has reset; the rate still waits 1 ms")
    clock.set(utc_ms("2030-03-13T00:00:20Z"))
    t.eq(evaluate(g, key).status, 200, "at the later time: admitted")


def test_update_and_defaults(t, g, clock):
    noon = utc_ms("2030-03-14T12:00:00Z")
    clock.set(noon)
    key = new_app(g, "plain")
    r = models(g, key)
    t.eq(r.headers.get("ratelimit-policy"),
         '"minute";q=%d;w=60, "day";q=%d;w=86400' % (DEFAULT_RATE,
                                                     DEFAULT_QUOTA),
         "an app without limits gets SERVICE_DEFAULT_*")
    t.eq(r.headers.get("ratelimit"),
         '"minute";r=6;t=9, "day";r=20;t=43200',
         "RateLimit: 6 calls left (whole again in ceil(60/7) s),"
         " 20 units until midnight")
    codes = [models(g, key).status for _ in range(DEFAULT_RATE)]
    t.eq(codes, [200] * (DEFAULT_RATE - 1) + [429],
         "the default rate admits 7 calls a minute")
    clock.advance(120000)
    days = [remaining(evaluate(g, key))[1] for _ in range(5)]
    t.eq(days, [16, 12, 8, 4, 0], "the default quota is 20 units")
    refused(t, evaluate(g, key), "quota_exceeded", 12 * 3600 * 1000 -
            120000, "then quota_exceeded")

    clock.set(utc_ms("2030-03-14T13:00:00Z"))
    key = new_app(g, "tuned", "--rate-per-minute", "2",
                  "--daily-quota", "1000")
    t.eq([models(g, key).status for _ in range(2)], [200, 200],
         "2/min: two calls")
    refused(t, models(g, key), "rate_limited", 30000, "the third waits 30 s")
    g.admin("app", "update", "tuned", "--rate-per-minute", "60")
    r = models(g, key)
    t.eq((r.status, remaining(r)[0]), (200, 57),
         "after --rate-per-minute 60 the next call is admitted at once,"
         " 57 left: the 2 calls made count against the new rate")
    clock.advance(1000)
    r = models(g, key)
    t.eq((r.status, sf_list(r.headers.get("ratelimit-policy"))["minute"]),
         (200, {"q": 60, "w": 60}), "1 s later: admitted under 60/min")
    g.admin("app", "update", "tuned", "--rate-per-minute", "default")
    clock.advance(120000)
    r = models(g, key)
    t.eq((r.status, sf_list(r.headers.get("ratelimit-policy"))["minute"],
          remaining(r)[0]), (200, {"q": DEFAULT_RATE, "w": 60},
                             DEFAULT_RATE - 1),
         "--rate-per-minute default: the next call is under the default")

    r = evaluate(g, key)
    t.eq((r.status, remaining(r)[1]), (200, 996), "4 of 1000 units used")
    g.admin("app", "update", "tuned", "--daily-quota", "3")
    refused(t, evaluate(g, key), "quota_exceeded", 11 * 3600 * 1000 -
            121000, "--daily-quota 3 (below the 4 used): the next call is"
            " refused")
    r = models(g, key)
    t.eq((r.status, remaining(r)[1]), (200, 0),
         "a call costing 0 still passes, with 0 units left")
    g.admin("app", "update", "tuned", "--daily-quota", "default")
    r = evaluate(g, key)
    t.eq((r.status, sf_list(r.headers.get("ratelimit-policy"))["day"],
          remaining(r)[1]), (200, {"q": DEFAULT_QUOTA, "w": 86400},
                             DEFAULT_QUOTA - 8),
         "--daily-quota default: admitted under the default, 8 used")


def test_rate_change(t, g, clock):
    """A change of rate carries over the calls made, not the share of
    the minute used: a raised limit is never stricter than the old one,
    and a lowered one never lets more through than it allows."""
    clock.set(utc_ms("2030-03-16T12:00:00Z"))
    key = new_app(g, "raised", "--rate-per-minute", "3")
    t.eq([models(g, key).status for _ in range(4)], [200, 200, 200, 429],
         "3/min: three calls, the fourth refused")
    g.admin("app", "update", "raised", "--rate-per-minute", "600")
    codes = [models(g, key).status for _ in range(598)]
    t.eq((codes.count(200), codes[-1]), (597, 429),
         "raised to 600 (clock still): the 3 made count, 597 more pass")

    key = new_app(g, "lowered", "--rate-per-minute", "600")
    t.eq([models(g, key).status for _ in range(3)], [200] * 3,
         "600/min: three calls")
    g.admin("app", "update", "lowered", "--rate-per-minute", "3")
    refused(t, models(g, key), "rate_limited", 20000,
            "lowered to 3 after 3 calls: the minute is used up, the next"
            " waits one interval (20 s)")
    clock.advance(20000)
    t.eq([models(g, key).status for _ in range(2)], [200, 429],
         "20 s later: one call, not more")


def test_backend_failure(t, g, clock):
    """Units are charged at admission, before the backend is asked; a
    call its backend then fails with 503 is given them back, and its
    call of the minute: no 503 is charged."""
    clock.set(utc_ms("2030-03-14T12:00:00Z"))
    key = new_app(g, "unlucky", "--rate-per-minute", "1",
                  "--daily-quota", "10")
    g.admin("grant", "unlucky", "dead")
    r = g.post("/v1/systemone", {"state": STATE, "questions": DEAD},
               key=key)
    t.error_is(r, 503, "backend_unavailable", "the backend refuses")
    t.ok("ratelimit" not in r.headers and
         "ratelimit-policy" not in r.headers,
         "the 503 tells no charged counts", r.headers)
    used, _, running = all_counters(g, "unlucky")
    t.eq((used, running), ({}, {}),
         "the failed call cost nothing, in the database or the running"
         " total")
    r = evaluate(g, key)
    t.eq((r.status, remaining(r)), (200, (0, 6)),
         "at 1 call a minute the next call is admitted: 6 of 10 units"
         " left")
    t.eq(all_counters(g, "unlucky")[0], {"2030-03-14": 4},
         "its units are recorded with its decision")


def test_503_not_charged(t, g, clock):
    """A client retrying 503s (its backend disabled) keeps its whole
    minute and its day: once the backend is back, exactly the rate's
    calls pass in the same minute, and only their units are used."""
    clock.set(utc_ms("2030-03-17T12:00:00Z"))
    key = new_app(g, "retrier", "--rate-per-minute", "3",
                  "--daily-quota", "20")
    g.admin("grant", "retrier", "shaky")
    g.admin("backend", "disable", "flaky")
    rs = [evaluate(g, key, SHAKY) for _ in range(6)]
    t.ok(all(r.status == 503 and
             r.json()["error"]["code"] == "backend_unavailable"
             for r in rs), "the backend disabled: 6 calls are 503",
         [(r.status, r.body[:200]) for r in rs])
    t.ok(not any("ratelimit" in r.headers for r in rs),
         "none tells RateLimit counts")
    used, _, running = all_counters(g, "retrier")
    t.eq((used, running), ({}, {}),
         "the 503s used no units, in the database or the running total")
    g.admin("backend", "enable", "flaky")
    rs = [evaluate(g, key, SHAKY) for _ in range(3)]
    t.eq([(r.status, remaining(r)) for r in rs],
         [(200, (2, 18)), (200, (1, 16)), (200, (0, 14))],
         "enabled, the same minute: 3 calls pass, each costing 2 units")
    refused(t, evaluate(g, key, SHAKY), "rate_limited", 20000,
            "the 4th is refused by the rate, as without the 503s")
    t.eq(all_counters(g, "retrier"),
         ({"2030-03-17": 6}, clock.now + 60000, {"2030-03-17": 6}),
         "6 units used, and the minute full")


def test_persistence(t, g, clock):
    clock.set(utc_ms("2030-03-15T12:00:00Z"))
    durable = new_app(g, "durable", "--rate-per-minute", "1000",
                      "--daily-quota", "8")
    windowed = new_app(g, "windowed", "--rate-per-minute", "2",
                       "--daily-quota", "1000")
    t.eq([evaluate(g, durable).status for _ in range(2)], [200, 200],
         "8 units used")
    t.error_is(evaluate(g, durable), 429, "quota_exceeded", "quota spent")
    t.eq([models(g, windowed).status for _ in range(3)], [200, 200, 429],
         "rate spent")
    g.restart()
    t.error_is(evaluate(g, durable), 429, "quota_exceeded",
               "after a restart the day's quota is still spent")
    t.eq(counters(g, "durable")[0], {"2030-03-15": 8},
         "the counter is in the database")
    where = "in the shared memory's file" if g.engine == "sqlite" else \
        "in the database"
    t.error_is(models(g, windowed), 429, "rate_limited",
               "and the rate window, %s, too" % where)
    g.stop()
    for name in os.listdir(g.dir):
        if name.startswith("cache.db"):
            os.unlink(os.path.join(g.dir, name))
    g.start()
    r = g.get("/health/ready")
    t.eq((r.status, r.json()), (200, {"status": "ok", "database": True,
                                      "cache": True}),
         "the cache file deleted: recreated, ready")
    t.error_is(evaluate(g, durable), 429, "quota_exceeded",
               "the quota survives losing the cache")
    t.error_is(models(g, windowed), 429, "rate_limited",
               "and so does the rate window, which is not in it")
    # The shared memory is deleted while the workers run: each maps a
    # new file before its next request.
    os.unlink(os.path.join(g.dir, "evalgate.shm"))
    t.error_is(evaluate(g, durable), 429, "quota_exceeded",
               "the shared memory deleted: the quota survives, rebuilt from"
               " the database's counter")
    r = models(g, windowed)
    if g.engine == "sqlite":
        t.eq((r.status, remaining(r)[0]), (200, 1),
             "the rate window was lost without harm: a fresh minute")
    else:
        t.error_is(r, 429, "rate_limited", "the rate window, in "
                   "PostgreSQL, was not lost with it")
        clock.advance(60000)
    t.eq(evaluate(g, windowed).status, 200, "evaluation continues")
    t.eq(counters(g, "windowed")[1] is not None, True,
         "rate windows are kept in the new file" if g.engine == "sqlite"
         else "rate windows are kept in the database")
    t.eq(all_counters(g, "durable")[2], {"2030-03-15": 8},
         "its running total, rebuilt, is the database's 8 units")


def test_without_shared_memory(t):
    """A host whose shared memory cannot be made keeps admission in the
    cache file, as exactly."""
    g = Gateway(workers=2, env={
        "SERVICE_SHM_PATH": "/nonexistent/evalgate-test/evalgate.shm"})
    try:
        g.admin("backend", "add", "lexical", "--kind", "lexical")
        for name, questions in (("demo", DEMO), ("one", ONE)):
            g.publish(name, questions, "lexical")
        g.admin("backend", "add", "off", "--kind", "lexical")
        g.publish("shaky", SHAKY, "off")
        g.admin("backend", "disable", "off")
        key = new_app(g, "noshm", "--rate-per-minute", "3",
                      "--daily-quota", "8")
        g.admin("grant", "noshm", "shaky")
        g.start()
        rs = [evaluate(g, key, SHAKY).status for _ in range(5)]
        t.eq(rs, [503] * 5, "no shared memory: the backend disabled, 5"
             " calls are 503")
        where = "cache file" if g.engine == "sqlite" else "database"
        t.eq(g.sql("SELECT used FROM admission", cache=g.engine == "sqlite"),
             [(0,)], "and cost no units in the %s" % where)
        st = [evaluate(g, key).status for _ in range(3)]
        t.eq(st, [200, 200, 429], "no shared memory: the quota of 8 units"
             " admits two calls of 4")
        t.eq([models(g, key).status for _ in range(2)], [200, 429],
             "and the rate of 3 a minute admits one call more (the refused"
             " one counted for nothing), then refuses")
        if g.engine == "sqlite":
            t.eq(g.sql("SELECT used FROM admission", cache=True), [(8,)],
                 "its running total is in the cache file")
        else:
            t.eq(g.sql("SELECT used FROM admission"), [(8,)],
                 "its running total is in PostgreSQL's admission table")
        t.ok("host-wide limits off" in g.log(), "the log says why")
        t.stop_clean(g, "no shared memory: no sanitizer reports")
    finally:
        g.cleanup()


def main():
    t = TAP()
    g = Gateway(workers=2, env={
        "SERVICE_DEFAULT_RATE_PER_MINUTE": str(DEFAULT_RATE),
        "SERVICE_DEFAULT_DAILY_QUOTA": str(DEFAULT_QUOTA)})
    try:
        clock = Clock(os.path.join(g.dir, "clock"))
        clock.set(utc_ms("2030-03-10T12:00:00Z"))
        g.env["SERVICE_TEST_CLOCK_FILE"] = clock.path
        g.admin("backend", "add", "lexical", "--kind", "lexical")
        # Nothing listens on port 1: every call to it fails.
        g.admin("backend", "add", "nowhere", "--kind", "systemone",
                "--url", "http://127.0.0.1:1")
        g.admin("backend", "add", "flaky", "--kind", "lexical")
        for name, questions, backend in (("demo", DEMO, "lexical"),
                                         ("one", ONE, "lexical"),
                                         ("dead", DEAD, "nowhere"),
                                         ("shaky", SHAKY, "flaky")):
            g.publish(name, questions, backend)
        g.start()
        t.run([test_burst, test_what_counts, test_daily_quota,
               test_both_refuse, test_update_and_defaults,
               test_rate_change, test_backend_failure,
               test_503_not_charged, test_persistence],
              g, clock)
        t.ok(STATE not in g.log(), "the state is never logged")
        t.stop_clean(g)
    finally:
        g.cleanup()
    test_without_shared_memory(t)
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
