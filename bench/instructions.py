#!/usr/bin/env python3
"""bench/instructions.py: a worker's user-space instructions and
allocator calls per evaluation, build against build, without a clock.

For each worker program given (say, an -O2 build of an older commit and
the one bench/run builds): a gateway as bench/run makes it (lighttpd, the
lexical schema, the bench's body, SERVICE_DB_SYNC=normal) but with one
worker, run under valgrind's callgrind; 20 requests of warm-up, the
counters zeroed, N requests one after the other over one connection,
the counters dumped.  Then per evaluation: instructions executed in
user space (the worker and its libraries; the kernel's are not
counted), calls to malloc, calloc, realloc and free, the functions
with the most instructions of their own and the callers of the
allocator.  The figures do not depend on the machine's load: the same
build gives the same counts again.

  bench/instructions.py [--requests N] [--top N] [--upstream] WORKER ...

Needs valgrind.  Figures only: nothing is asserted.
"""

import argparse
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

import probe

br = probe.br
gateway = br.gateway

ALLOC = ("malloc", "calloc", "realloc", "free")


def callgrind(worker, work, n, upstream=None):
    """The callgrind file of n evaluations by worker; with upstream (a
    bench/run Nginx), of the systemone path to it instead of lexical."""
    out = tempfile.mkdtemp(prefix="cg-", dir=work)
    wrap = os.path.join(out, "worker.sh")
    with open(wrap, "w") as f:
        f.write("#!/bin/sh\nexec valgrind -q --tool=callgrind "
                "--callgrind-out-file=%s/cg.%%p %s \"$@\"\n" % (out, worker))
    os.chmod(wrap, 0o755)
    # The worker's own console beside the wrapper: the database is set
    # up at that build's schema version (tests/e2e/gateway.py).
    admin = os.path.join(os.path.dirname(worker), "evalgate-admin")
    if os.path.exists(admin):
        os.symlink(admin, os.path.join(out, "evalgate-admin"))
    g = gateway.Gateway(workers=1, worker=wrap, env={
        "SERVICE_DB_SYNC": os.environ.get("SYNC", "normal")})
    key = br.bench_setup(g, out, upstream.url if upstream else None)
    g.start()
    try:
        pid, = g.worker_pids()
        body = probe.body(upstream)
        probe.post(g, key, body, 20)
        subprocess.run(["callgrind_control", "-z", str(pid)], check=True,
                       capture_output=True)
        probe.post(g, key, body, n)
        subprocess.run(["callgrind_control", "-d", str(pid)], check=True,
                       capture_output=True)
    finally:
        g.cleanup()
    return sorted(glob.glob(os.path.join(out, "cg.%d.*" % pid)))[0]


def parse(path):
    """Total instructions, each function's own, and calls per (callee,
    caller), from a callgrind file (names compressed as "(id) name")."""
    names, objs, fn_obj = {}, {}, {}
    own = collections.Counter()
    calls = collections.Counter()
    total = 0
    ob = fn = cfn = None
    pending = False

    def name(table, s):
        m = re.match(r"\((\d+)\)(?: (.*))?", s)
        if not m:
            return s
        if m.group(2):
            table[m.group(1)] = m.group(2)
        return table[m.group(1)]
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("ob="):
                ob = name(objs, line[3:])
            elif line.startswith("cob="):
                name(objs, line[4:])
            elif line.startswith("fn="):
                fn = name(names, line[3:])
                fn_obj[fn] = ob
            elif line.startswith("cfn="):
                cfn = name(names, line[4:])
            elif line.startswith("calls="):
                calls[(cfn, fn)] += int(line[6:].split()[0])
                pending = True
            elif line.startswith("summary:") or line.startswith("totals:"):
                total = int(line.split()[1])
            elif line[:1].isdigit() or line[:1] in ("+", "-", "*"):
                if pending:
                    pending = False     # the call's inclusive cost
                else:
                    fields = line.split()
                    if len(fields) > 1:
                        own[fn] += int(fields[1])

    def label(f):
        if f.startswith("0x"):          # no symbol: say whose
            return "%s (%s)" % (f, os.path.basename(fn_obj.get(f) or "?"))
        return f
    return total, {label(k): v for k, v in own.items()}, \
        {(k[0], label(k[1])): v for k, v in calls.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--top", type=int, default=15)
    a, work, upstream = probe.setup(ap, "instructions")
    for w in a.workers:
        report(a, w, parse(callgrind(os.path.abspath(w), work, a.requests,
                                     upstream)))


def report(a, w, parsed):
    """Prints one worker's figures."""
    n = a.requests
    total, own, calls = parsed
    per = {k: sum(v for (callee, _), v in calls.items() if callee == k)
           / n for k in ALLOC}
    print("%s: %.0f user-space instructions per evaluation; %s" % (
        w, total / n, ", ".join("%s %.1f" % (k, per[k])
                                for k in ALLOC)))
    print("    own instructions per evaluation:")
    for f, v in sorted(own.items(), key=lambda kv: -kv[1])[:a.top]:
        print("    %8.0f %5.1f%%  %s" % (v / n, 100.0 * v / total, f))
    print("    allocator calls per evaluation, by caller:")
    rows = [(k, v) for k, v in calls.items() if k[0] in ALLOC]
    for (callee, caller), v in sorted(rows,
                                      key=lambda kv: -kv[1])[:a.top]:
        print("    %8.1f  %-7s from %s" % (v / n, callee, caller))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
