#!/usr/bin/env python3
"""bench/burst.py: the first burst of calls a new user sends, against
the gateway as shipped; the answers counted by status.

Both send bench/run's evaluation (3 questions) through a systemone
backend on bench/run's fixed-answer nginx (fast and healthy), added
without --max-in-flight (its default limit), each call on a connection
of its own:

  apache  Apache with mod_fcgid on examples/apache-fcgid.conf as
          shipped, only its pool (FcgidMaxProcessesPerClass) set, to
          --procs (8): no SERVICE_WORKERS (the conf's FcgidInitialEnv
          line, while it has one, removed); an application with a new
          user's limits.  As soon as the server answers /health (a cold
          start: one worker runs), --calls (200) evaluations at once
          (Apache's event MPM sized to hold them all).
  hosts   two lighttpd hosts, each with the pool lighttpd.conf.sample
          ships, on one database of a throw-away PostgreSQL cluster
          (tests/e2e/pg.py), as tests/e2e/test_pg_hosts.py runs them;
          one application at 20 calls a minute; 40 evaluations at once,
          alternately through each host.  Expected: exactly 20 admitted
          (200), 20 refused (429), no 503.

Prints a Markdown table (--out FILE writes it too): per burst, the
answers by status (200, 429, 503, other: another status, or none at
all), the seconds from the first call to the last answer, and each
error's status and code ("(web server)": the server's own page, no
worker answered).

  bench/burst.py [--out FILE] [--only apache|hosts] [--procs N]
                 [--calls N]

It builds bench/run's optimised worker in _build-bench/ (or
$BENCH_BUILDDIR); Apache comes with tools/deps.sh --test.
"""

import argparse
import collections
import os
import re
import shlex
import shutil
import sys
import tempfile
import threading
import time

import probe
from probe import br

gateway, slow = br.gateway, br.slow
JSON = {"Content-Type": "application/json"}
HOST_CALLS, HOST_RATE = 40, 20


def answer(r):
    """What an answer counts as: (status, an error's code or None), the
    code marked "(web server)" when the server answered itself."""
    try:
        err = r.json().get("error")
    except (ValueError, AttributeError):
        return r.status, None
    if not isinstance(err, dict):
        return r.status, None
    own = (err.get("details") or {}).get("source") == "web server"
    return r.status, "%s%s" % (err.get("code"), " (web server)" if own
                               else "")


def burst(n, send):
    """send(i) for each i < n, from n threads let go at once: the
    answers (answer()'s, or (0, the exception's name) for none) and the
    seconds from letting them go to the last answer."""
    gate = threading.Barrier(n + 1)
    out = [None] * n

    def fire(i):
        gate.wait()
        try:
            out[i] = answer(send(i))
        except Exception as e:      # no answer: counted as "other"
            out[i] = (0, type(e).__name__)
    threads = [threading.Thread(target=fire, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    gate.wait()
    t0 = time.time()
    for t in threads:
        t.join()
    return out, time.time() - t0


def poster(hosts, key, data):
    """send(i) for burst(): the evaluation data through hosts[i % len]."""
    return lambda i: hosts[i % len(hosts)].post(
        "/v1/systemone", data, key=key, headers=JSON)


def apache(up_url, procs, calls):
    """The apache burst, its backend at up_url: (answers, seconds)."""
    g, key, _ = slow.start(
        "apache", procs, None, {}, lambda g: br.bench_setup(
            g, g.dir, up_url, tuned=False, limits=()), clients=calls)
    try:
        return burst(calls, poster((g,), key, probe.body(True)))
    finally:
        g.cleanup()


def sample_pool():
    """The pool lighttpd.conf.sample ships ("max-procs")."""
    with open(gateway.LIGHTTPD_SAMPLE) as f:
        return int(re.search(r'"max-procs"\s*=>\s*(\d+)', f.read())
                   .group(1))


def hosts(up_url, pool):
    """The hosts burst, each host with pool workers, the backend at
    up_url: (answers, seconds)."""
    env = dict(slow.SAMPLE_ENV)
    a = gateway.Gateway(workers=pool, engine="postgresql", env=env)
    b = None
    try:
        key = br.bench_setup(a, a.dir, up_url, tuned=False, limits=(
            "--rate-per-minute", str(HOST_RATE)))
        b = gateway.Gateway(workers=pool, share=a, env=env)
        a.start()
        b.start()
        return burst(HOST_CALLS, poster((a, b), key, probe.body(True)))
    finally:
        for g in (a, b):
            if g is not None:
                g.cleanup()


def row(name, out, took, expected=None):
    """A table row: the answers by status, and `expected` ({status:
    count}) said met or not."""
    n = collections.Counter(s if s in (200, 429, 503) else "other"
                            for s, _ in out)
    errors = collections.Counter(
        ("%s %s" % (s or "no answer", c or "")).strip()
        for s, c in out if s != 200)
    met = expected and all(n[s] == k for s, k in expected.items())
    return "| %s | %d | %d | %d | %d | %d | %.2f | %s | %s |" % (
        name, len(out), n[200], n[429], n[503], n["other"], took,
        "; ".join("%s x %d" % e for e in sorted(errors.items())) or "-",
        "-" if not expected else "%s: %s" % (
            ", ".join("%d x %d" % (k, s) for s, k in expected.items()),
            "met" if met else "**not met**"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", choices=("apache", "hosts"))
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--calls", type=int, default=200)
    a = ap.parse_args()
    br.build()
    pool = sample_pool()
    lines = ["| burst | calls | 200 | 429 | 503 | other | seconds | "
             "errors | expected |", "|---|---:|---:|---:|---:|---:|---:|"
             "---|---|"]
    skipped = []
    work = tempfile.mkdtemp(prefix="evalgate-burst-")
    ng = br.Nginx(work)
    try:
        if a.only != "hosts":
            name = "Apache mod_fcgid, %d processes, cold start" % a.procs
            if os.path.exists(gateway.APACHE):
                lines.append(row(name, *apache(ng.url, a.procs, a.calls)))
            else:
                skipped.append("%s: skipped, no %s (tools/deps.sh --test)"
                               % (name, gateway.APACHE))
        if a.only != "apache":
            name = "2 lighttpd hosts x %d workers, PostgreSQL, %d/min" % (
                pool, HOST_RATE)
            why = br.pg_missing()
            if why:
                skipped.append("%s: skipped, %s" % (name, why))
            else:
                lines.append(row(name, *hosts(ng.url, pool), expected={
                    200: HOST_RATE, 429: HOST_CALLS - HOST_RATE, 503: 0}))
    finally:
        ng.stop()
        shutil.rmtree(work, ignore_errors=True)
    report = "\n".join(
        ["# Bursts, as shipped", "",
         "Measured by `bench/burst.py %s` on %s." % (
             shlex.join(sys.argv[1:]), time.strftime("%Y-%m-%d")), ""] +
        lines + ([""] + skipped if skipped else []) + [""])
    print(report)
    if a.out:
        with open(a.out, "w") as f:
            f.write(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
