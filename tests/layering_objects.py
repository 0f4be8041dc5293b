# layering_objects.py: the layers of src/README.md, from the built
# objects rather than the sources.  tests/layering_test.sh runs it with
# the build directory, the source directory and the layers of README's
# table (one "name<TAB>globs<TAB>allowed" line each, on standard input),
# and turns each line it prints, "0|1<TAB>name<TAB>details", into a TAP
# test point.  Two rules:
#
# (a) The engines stay behind store.h: the headers of the engines
#     (store_engine.h, store_sqlite*.h, store_pg*.h) and of the
#     databases' libraries (sqlite3.h, libpq-fe.h) reach only the
#     storage files, directly or through another header.  What each
#     object was compiled from is the compiler's own list, the
#     dependency file make keeps beside it (src/.deps/NAME.Po).
# (b) No file-level call cycle inside the storage or the support layer:
#     "file A calls a function defined in file B" is an edge when nm
#     shows A's object needing (U) a symbol B's object defines (T, D, B,
#     R, ...); a strongly connected component of more than one file of
#     one of those layers fails, naming its files.  Every object must
#     be in exactly one layer.

import fnmatch
import os
import re
import subprocess
import sys

ENGINE_HEADERS = ("store_engine.h", "store_sqlite*.h", "store_pg*.h",
                  "sqlite3.h", "libpq-fe.h")
ENGINE_LAYER = "storage"
ACYCLIC_LAYERS = ("storage", "support")


def report(ok, name, details=""):
    details = details.replace("\t", " ").replace("\n", "; ")
    print("%d\t%s\t%s" % (0 if ok else 1, name, details))


def read_layers():
    layers = []
    for line in sys.stdin:
        name, globs, allowed = (line.rstrip("\n").split("\t") + ["", ""])[:3]
        layers.append((name, globs.split(), allowed.split()))
    return layers


def layer_of(layers, path):
    found = {name for name, globs, _ in layers
             if any(fnmatch.fnmatchcase(path, g) for g in globs)}
    return found.pop() if len(found) == 1 else None


def objects(builddir):
    """{source path relative to src/: object path}, for the library's
    members and the two programs' own objects."""
    objs = {}
    for sub in ("src", "src/admin"):
        d = os.path.join(builddir, sub)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith(".o"):
                rel = os.path.relpath(os.path.join(d, f),
                                      os.path.join(builddir, "src"))
                objs[rel[:-2] + ".c"] = os.path.join(d, f)
    return objs


def symbols(path):
    """(defined, needed): the external symbols an object defines and
    the ones it needs from elsewhere."""
    out = subprocess.run(["nm", "-P", path], check=True,
                         capture_output=True, text=True).stdout
    defined, needed = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        if f[1] == "U":
            needed.add(f[0])
        elif f[1] in "TDBRCGSVW":
            defined.add(f[0])
    return defined, needed


def included(obj):
    """The headers the compiler read for obj (its .Po file), or None
    when make kept no list (--disable-dependency-tracking)."""
    d, f = os.path.split(obj)
    po = os.path.join(d, ".deps", f[:-2] + ".Po")
    try:
        text = open(po, encoding="utf-8", errors="replace").read()
    except OSError:
        return None
    words = text.replace("\\\n", " ").split(":", 1)
    if len(words) < 2:
        return None
    deps = words[1].split("\n", 1)[0].split()
    return [os.path.basename(h) for h in deps if h.endswith(".h")]


def sccs(nodes, edges):
    """Tarjan's strongly connected components of a small graph."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    builddir = sys.argv[1]
    layers = read_layers()
    objs = objects(builddir)
    if not objs:
        print("skip\tno objects in %s/src: build first" % builddir)
        return

    layer = {}
    for src in objs:
        layer[src] = layer_of(layers, src)
        if layer[src] is None:
            report(False, "object of %s in exactly one layer" % src)

    # (a) Engine headers, as the compiler read them.
    for src, obj in sorted(objs.items()):
        heads = included(obj)
        if heads is None:
            continue
        bad = sorted({h for h in heads
                      if any(fnmatch.fnmatchcase(h, g)
                             for g in ENGINE_HEADERS)})
        ok = layer[src] == ENGINE_LAYER or not bad
        report(ok, "%s reads no engine header (%s)" % (src, layer[src]),
               "" if ok else "reads " + " ".join(bad))

    # (b) Calls between files of one layer, and their cycles.
    syms = {src: symbols(obj) for src, obj in objs.items()}
    owner = {}
    for src, (defined, _) in syms.items():
        for s in defined:
            owner.setdefault(s, src)
    for name in ACYCLIC_LAYERS:
        nodes = {s for s in objs if layer[s] == name}
        edges = {}
        for a in nodes:
            for s in syms[a][1]:
                b = owner.get(s)
                if b in nodes and b != a:
                    edges.setdefault(a, set()).add(b)
        cycles = [c for c in sccs(nodes, edges)
                  if len(c) > 1]
        detail = []
        for c in cycles:
            calls = ["%s -> %s" % (a, b) for a in c
                     for b in sorted(edges.get(a, ())) if b in c]
            detail.append("cycle: %s (%s)" % (" ".join(c),
                                               ", ".join(calls)))
        report(bool(nodes) and not cycles,
               "no call cycle between files of the %s layer (%d files)"
               % (name, len(nodes)), "\n".join(detail))


if __name__ == "__main__":
    main()
