"""test_prometheus: a real Prometheus (Debian's `prometheus`) scraping the
internal listener of a gateway over real lighttpd with two workers,
configured by examples/prometheus.yml as shipped with its target pointed
at this gateway (and a 1 s scrape interval, for time).

After a known mix of calls, Prometheus's own /api/v1/query answers
sum(evalgate_requests_total) (the scrapes and health checks left out)
with the number of calls made, and histogram_quantile(0.99, ...) over
the evaluations' request durations with what the exposition's buckets
give by Prometheus's interpolation; the rate() form of the quantile is a
number too.  Every query of examples/grafana-dashboard.json is valid
PromQL to this Prometheus, and those of the panels the calls feed
(requests, latency, version, workers) have data.  Skipped, saying why, only when prometheus is not installed
(tools/deps.sh --test installs it)."""

import json
import math
import os
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request

from gateway import Gateway, TAP, free_port, wait_port
from test_metrics import parse

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "..", "examples", "prometheus.yml")
DASHBOARD = os.path.join(HERE, "..", "..", "examples",
                         "grafana-dashboard.json")
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
STATE = "the box was empty when it arrived"
QUESTIONS = {"empty": {"type": "noul", "instructions": "empty?"}}
CALLS, BAD = 15, 3
QUIET = '{route!~"/metrics|/health"}'


def config(g):
    """examples/prometheus.yml with its target set to g's internal
    listener, as a user sets it, and scraping every second."""
    with open(SAMPLE) as f:
        text = f.read()
    text, n = re.subn(r"(- )127\.0\.0\.1:8081", r"\g<1>127.0.0.1:%d" %
                      g.admin_port, text)
    text, m = re.subn(r"(scrape_interval: )15s", r"\g<1>1s", text)
    if n != 1 or m != 1:
        raise RuntimeError("%s: no target or scrape_interval line" % SAMPLE)
    return text


def query(port, expr):
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (
        port, urllib.parse.urlencode({"query": expr}))
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.loads(r.read())
    if body.get("status") != "success":
        raise RuntimeError("query %s: %r" % (expr, body))
    return [float(x["value"][1]) for x in body["data"]["result"]]


def until(port, expr, want, timeout=60):
    """The query's values once they equal want (or at the timeout)."""
    end, got = time.time() + timeout, None
    while time.time() < end:
        got = query(port, expr)
        if got == want:
            return got
        time.sleep(0.25)
    return got


def ready(port, timeout=60):
    """Whether Prometheus says it is ready (its API answers 503 while
    its storage starts)."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/-/ready" %
                                        port, timeout=5) as r:
                if r.status == 200:
                    return True
        except OSError:     # urllib's HTTPError and URLError too
            pass
        time.sleep(0.25)
    return False


def quantile(q, buckets):
    """Prometheus's histogram_quantile over [(le, cumulative)], sorted."""
    total = buckets[-1][1]
    rank = q * total
    prev_le, prev_n = 0.0, 0.0
    for le, n in buckets:
        if n >= rank:
            if math.isinf(le):
                return prev_le
            return prev_le + (le - prev_le) * (rank - prev_n) / (n - prev_n)
        prev_le, prev_n = le, n
    return float("nan")


def test_dashboard(t, port):
    """The dashboard's queries, with Grafana's $__rate_interval as 1m."""
    with open(DASHBOARD) as f:
        board = json.load(f)
    fed = {"Requests per second by status", "Requests per second by route",
           "Evaluation latency (POST /v1/systemone)", "Version",
           "Workers that answered in the last minute"}
    titles = set()
    for panel in board["panels"]:
        titles.add(panel["title"])
        for target in panel["targets"]:
            expr = target["expr"].replace("$__rate_interval", "1m")
            try:
                got = query(port, expr)
                good = True
            except Exception as e:      # refused by Prometheus
                got, good = e, False
            t.ok(good, "dashboard: %s: %s is valid PromQL" %
                 (panel["title"], target["refId"]), got)
            if good and panel["title"] in fed:
                t.ok(len(got) > 0 and all(not math.isnan(v) for v in got),
                     "dashboard: %s: %s has data" % (panel["title"],
                                                     target["refId"]), got)
    t.ok({"Backend failures per second", "Refusals per second",
          "Abstention rate per schema"} | fed <= titles,
         "dashboard: requests, latency quantiles, backend failures, "
         "refusals, abstention rate per schema", titles)


def main():
    t = TAP()
    if not os.path.exists(PROMETHEUS):
        print("1..0 # SKIP prometheus is not installed (Debian package "
              "prometheus; tools/deps.sh --test installs it)")
        return 0
    g = Gateway(workers=2, env={"SERVICE_WORKERS": "2"})
    prom = None
    try:
        g.admin("backend", "add", "lex", "--kind", "lexical")
        path = os.path.join(g.dir, "q.json")
        with open(path, "w") as f:
            json.dump(QUESTIONS, f)
        g.admin("schema", "publish", "box", "--questions", path,
                "--backend", "lex")
        key = g.new_key("p", "--rate-per-minute", "100000")
        g.admin("grant", "p", "box")
        g.start()
        port = free_port()
        conf = os.path.join(g.dir, "prometheus.yml")
        with open(conf, "w") as f:
            f.write(config(g))
        prom = subprocess.Popen(
            [PROMETHEUS, "--config.file=" + conf,
             "--storage.tsdb.path=" + os.path.join(g.dir, "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % port],
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(g.dir, "prometheus.log"), "w"))
        t.ok(wait_port(port, 30) and ready(port), "prometheus is ready",
             open(os.path.join(g.dir, "prometheus.log")).read()[-2000:])
        t.eq(until(port, 'up{job="evalgate"}', [1.0]), [1.0],
             "it scrapes the internal listener: up is 1")
        def evaluate():
            return g.post("/v1/systemone", {
                "state": STATE, "x_schema": {"id": "box"}}, key=key).status

        # One call, seen by a scrape, then the others: rate() has an
        # increase to work on.
        statuses = [evaluate()]
        until(port, "sum(evalgate_request_duration_seconds_count%s)" % QUIET,
              [1.0])
        statuses += [evaluate() for _ in range(CALLS - 1)]
        statuses += [g.get("/v1/models", key="svc_aaaaaaaa_" + "A" * 32)
                     .status for _ in range(BAD)]
        t.eq(statuses, [200] * CALLS + [401] * BAD, "the calls")
        t.eq(until(port, "sum(evalgate_requests_total%s)" % QUIET,
                   [float(CALLS + BAD)]), [float(CALLS + BAD)],
             "/api/v1/query: sum(evalgate_requests_total) is the number "
             "of calls made")
        samples = parse(g.admin_request("GET", "/metrics").body.decode())[0]
        buckets = sorted(
            (float(dict(l)["le"].replace("+Inf", "inf")), v)
            for (n, l), v in samples.items()
            if n == "evalgate_request_duration_seconds_bucket" and
            dict(l)["route"] == "/v1/systemone")
        want = quantile(0.99, buckets)
        expr = ('histogram_quantile(0.99, sum by (le) '
                '(evalgate_request_duration_seconds_bucket'
                '{route="/v1/systemone"}))')
        got = until(port, expr, [want])
        t.ok(len(got) == 1 and abs(got[0] - want) < 1e-9,
             "/api/v1/query: histogram_quantile(0.99, ...) of the "
             "evaluations' durations is what their buckets give (%r)" %
             want, got)
        expr = ('histogram_quantile(0.99, sum by (le) (rate('
                'evalgate_request_duration_seconds_bucket'
                '{route="/v1/systemone"}[1m])))')
        end = time.time() + 30
        while time.time() < end:
            got = query(port, expr)
            if len(got) == 1 and not math.isnan(got[0]):
                break
            time.sleep(0.25)
        t.ok(len(got) == 1 and 0 < got[0] <= buckets[-2][0],
             "the rate() form, as a dashboard asks: a latency in the "
             "buckets", got)
        test_dashboard(t, port)
        t.stop_clean(g)
    finally:
        if prom is not None:
            prom.terminate()
            try:
                prom.wait(10)
            except subprocess.TimeoutExpired:
                prom.kill()
                prom.wait()
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
