#!/usr/bin/env python3
"""bench/frames.py: pages a decision writes, build against build,
without a clock.

For each worker program given: a gateway as bench/run makes it
(lighttpd, the lexical schema, the bench's body, SERVICE_DB_SYNC=normal)
but with one worker, so that each commit holds one decision; N
evaluations sent one after the other over one connection; then the WAL
is read as SQLite's file format documents it (a 32-byte header, then
frames of a 24-byte header and a page, valid while their salts match
the header's) and each commit's pages are named by the b-tree they
belong to (the dbstat table of a copy of the database).  Printed:
frames per commit (their mean and spread) and pages per commit of each
b-tree.  A frame is a page written to the WAL, checksummed, copied to
the database at the next checkpoint: what a decision costs the disk.
The WAL is read every 20 evaluations, since a checkpoint starts it
over every thousand frames or so.  The counts do not depend on the
machine's load.

  bench/frames.py [--requests N] [--upstream] WORKER ...

Needs Python's sqlite3 module with dbstat (Debian's has it).  Figures
only: nothing is asserted.
"""

import argparse
import collections
import os
import shutil
import sqlite3
import struct
import tempfile

import probe

br = probe.br

WAL_HEADER = 32
FRAME_HEADER = 24
SNAPSHOT_EVERY = 20


def commits(wal):
    """{(salts, offset of its last frame): its page numbers} of each
    commit the WAL holds, and the page size."""
    with open(wal, "rb") as f:
        data = f.read()
    if len(data) < WAL_HEADER:
        return {}, 4096
    page_size = struct.unpack(">I", data[8:12])[0]
    salts = data[16:24]
    out, pages, off = {}, [], WAL_HEADER
    while off + FRAME_HEADER + page_size <= len(data):
        page, size_after = struct.unpack(">II", data[off:off + 8])
        if data[off + 8:off + 16] != salts:
            break                       # left over from before a restart
        pages.append(page)
        if size_after != 0:             # a commit's last frame
            out[(salts, off)] = pages
            pages = []
        off += FRAME_HEADER + page_size
    return out, page_size


def owners(db, page_size):
    """Page number -> the b-tree (table or index) holding it, or what
    else it is: page 1 (sqlite_schema's root) carries the header, with
    the database's size in pages; with auto_vacuum (retention's
    incremental vacuum), the pointer-map pages, which dbstat does not
    list, name each page's parent."""
    c = sqlite3.connect(db)
    try:
        out = dict(c.execute("SELECT pageno, name FROM dbstat"))
        out[1] = "page 1 (header, sqlite_schema)"
        if c.execute("PRAGMA auto_vacuum").fetchone()[0] != 0:
            every = page_size // 5 + 1
            last = c.execute("PRAGMA page_count").fetchone()[0]
            for p in range(2, last + 1, every):
                out[p] = "pointer map (auto_vacuum)"
        return out
    finally:
        c.close()


def one(worker, work, n, upstream):
    """(commits, page owners) after n evaluations by worker."""
    g, key = br.gateway_with("normal", upstream.url if upstream else None,
                             work, workers=1, worker=worker)
    copy = tempfile.mkdtemp(prefix="frames-", dir=work)
    wal = os.path.join(copy, "frames")
    seen, page_size = {}, [4096]

    # A checkpoint starts the WAL over every thousand frames or so: it
    # is read every SNAPSHOT_EVERY evaluations, each commit kept once
    # (by its salts and place).
    def snapshot(i):
        if i % SNAPSHOT_EVERY == 0 or i == n:
            shutil.copy(g.db + "-wal", wal)
            found, page_size[0] = commits(wal)
            seen.update(found)
    try:
        probe.post(g, key, probe.body(upstream), n, snapshot)
        # The database after the WAL: a checkpoint between the two
        # copies only puts into it pages the WAL copy names too.  With
        # the WAL beside it, dbstat sees the pages not copied back yet.
        shutil.copy(g.db, os.path.join(copy, "db"))
        shutil.copy(wal, os.path.join(copy, "db-wal"))
    finally:
        g.cleanup()
    return list(seen.values()), owners(os.path.join(copy, "db"),
                                       page_size[0])


def report(worker, found, owner):
    # A decision's commits only (not the set-up's, should the WAL still
    # hold them).
    found = [c for c in found
             if any(owner.get(p) == "decisions" for p in c)]
    if not found:
        print("%s: no decision in the WAL" % worker)
        return
    sizes = collections.Counter(len(c) for c in found)
    per = collections.Counter()
    for c in found:
        for p in c:
            per[owner.get(p, "(freed since)")] += 1
    print("%s: %.2f frames per commit over %d commits (%s)" % (
        worker, sum(len(c) for c in found) / len(found), len(found),
        ", ".join("%d x%d" % kv for kv in sorted(sizes.items()))))
    for name, k in per.most_common():
        print("    %-32s %.2f per commit" % (name, k / len(found)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=400)
    a, work, upstream = probe.setup(ap, "frames")
    for w in a.workers:
        found, owner = one(os.path.abspath(w), work, a.requests, upstream)
        report(w, found, owner)


if __name__ == "__main__":
    main()
