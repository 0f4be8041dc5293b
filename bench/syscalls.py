#!/usr/bin/env python3
"""bench/syscalls.py: system calls and CPU per evaluation, build against
build, in one run.

The probe bench/RESULTS.md's Notes describe, as a script: for each
worker program given (say, an -O2 build of an older commit and the one
bench/run builds), a gateway as bench/run makes it (lighttpd, 2 workers,
the lexical schema, SERVICE_DB_SYNC=normal unless SYNC says otherwise),
each worker kept to its own CPU as both sample configurations set it,
2 s of warm-up, then wrk -c16 for N s alone (requests/s, p50, p99) and
N s again with `perf stat -e 'syscalls:sys_enter_*'` attached to both
workers: each system call per evaluation, the workers' CPU time per
evaluation and the largest worker's PSS.  --upstream measures the
systemone path to bench/run's fixed-answer nginx instead (started for
the run), the `upstream normal` row's body.  Builds run in the order
A B .. B A .. (--rounds times), so that a trend over the run cancels.

  bench/syscalls.py [--seconds N] [--rounds N] [--upstream] WORKER ...

Needs perf with access to the syscall tracepoints (root, or
perf_event_paranoid below 2).  Figures only: nothing is asserted.
"""

import argparse
import os
import re
import subprocess
import sys
import time

import probe

br = probe.br


def cpu_ticks(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


def pss_kib(pid):
    try:
        s = open("/proc/%d/smaps_rollup" % pid).read()
        return int(re.search(r"^Pss:\s+(\d+)", s, re.M).group(1))
    except (OSError, AttributeError):
        return 0


def one(worker, work, body, seconds, upstream=None):
    g, key = br.gateway_with(os.environ.get("SYNC", "normal"),
                             upstream.url if upstream else None, work,
                             worker=worker)
    try:
        url = "http://127.0.0.1:%d/v1/systemone" % g.port
        br.wrk(url, body, key, 2, 16, 2)
        clean = br.wrk(url, body, key, seconds, 16, 2)
        pids = g.worker_pids()
        c0 = sum(cpu_ticks(p) for p in pids)
        perf = subprocess.Popen(
            ["perf", "stat", "-x,", "-e", "syscalls:sys_enter_*", "-e",
             "context-switches", "-p", ",".join(map(str, pids)), "--",
             "sleep", str(seconds + 0.5)],
            stderr=subprocess.PIPE, text=True)
        time.sleep(0.2)
        traced = br.wrk(url, body, key, seconds, 16, 2)
        out = perf.communicate()[1]
        c1 = sum(cpu_ticks(p) for p in pids)
        n = traced["rps"] * seconds
        per = {}
        for line in out.splitlines():
            f = line.split(",")
            if len(f) > 2 and f[0].strip().isdigit():
                per[f[2].replace("syscalls:sys_enter_", "")] = \
                    int(f[0]) / n
        total = sum(v for k, v in per.items() if k != "context-switches")
        us = (c1 - c0) / os.sysconf("SC_CLK_TCK") / n * 1e6
        return clean, per, total, us, max(pss_kib(p) for p in pids)
    finally:
        g.cleanup()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    a, work, upstream = probe.setup(ap, "syscalls")
    body = os.path.join(work, "body.json")
    with open(body, "wb") as f:
        f.write(probe.body(upstream))
    order = []
    for i in range(a.rounds):
        order += a.workers if i % 2 == 0 else a.workers[::-1]
    for w in order:
        r, per, total, us, pss = one(os.path.abspath(w), work, body,
                                     a.seconds, upstream)
        print("%s: %.0f req/s, p50 %.3f ms, p99 %.3f ms; %.1f system "
              "calls and %.0f us of CPU per evaluation; PSS %.1f MiB" % (
                  w, r["rps"], r["p50"], r["p99"], total, us,
                  pss / 1024.0))
        print("    " + " ".join(
            "%s %.2f" % kv for kv in sorted(per.items(),
                                            key=lambda kv: -kv[1])
            if kv[1] >= 0.01))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
