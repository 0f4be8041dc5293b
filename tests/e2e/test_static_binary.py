"""test_static_binary: ./configure --enable-static-binary, the build a
shared-hosting customer copies to a host without a compiler (README,
"Shared hosting"; doc/design.md, section 19.4).

Configures and builds evalgate.fcgi and evalgate-admin that way once, in
the build directory's static-binary/ (kept: a second run only relinks
what changed), checks that each program needs, besides the C library,
only libcurl (its own NEEDED entries: libcurl, libm, libc) and that
everything ldd lists is the C library's, libcurl's or libcurl's own
dependencies, copies both programs into a fresh directory as a customer
would, and runs the whole shared-hosting test (test_shared_hosting.py)
with them.
"""

import os
import re
import shutil
import subprocess
import tempfile

from gateway import BUILDDIR, SRCDIR, TAP
import test_shared_hosting

STATIC = os.path.join(BUILDDIR, "static-binary")
PROGRAMS = ("evalgate.fcgi", "evalgate-admin")
C_LIBRARY = {"linux-vdso.so.1", "libc.so.6", "libm.so.6",
             "ld-linux-x86-64.so.2"}


def build(t):
    """One TAP point: the static build exists and is current."""
    os.makedirs(STATIC, exist_ok=True)
    out = ""
    if not os.path.exists(os.path.join(STATIC, "Makefile")):
        p = subprocess.run([os.path.join(SRCDIR, "configure"), "-q",
                            "--enable-static-binary", "--enable-werror"],
                           cwd=STATIC, capture_output=True, text=True,
                           timeout=600)
        out += p.stdout + p.stderr
        if p.returncode != 0:
            return t.ok(False, "./configure --enable-static-binary", out)
    p = subprocess.run(["make", "-j2"] + list(PROGRAMS), cwd=STATIC,
                       capture_output=True, text=True, timeout=1200)
    out += p.stdout[-2000:] + p.stderr[-2000:]
    return t.ok(p.returncode == 0 and all(
        os.path.exists(os.path.join(STATIC, n)) for n in PROGRAMS),
        "./configure --enable-static-binary && make builds both programs",
        out)


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True,
                         text=True, timeout=60).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.*?)\]", out))


def ldd(path):
    out = subprocess.run(["ldd", path], capture_output=True, text=True,
                         timeout=60).stdout
    libs = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+)(?: => (\S+))?", line)
        if m:
            libs[os.path.basename(m.group(1))] = m.group(2)
    return libs


def test_links(t):
    for name in PROGRAMS:
        path = os.path.join(STATIC, name)
        direct = needed(path)
        t.eq(sorted(direct - C_LIBRARY), ["libcurl.so.4"],
             "%s needs only libcurl besides the C library (NEEDED %s)" %
             (name, " ".join(sorted(direct))))
        libs = ldd(path)
        curl = libs.get("libcurl.so.4")
        allowed = set(C_LIBRARY) | {"libcurl.so.4"}
        if curl:
            allowed |= set(ldd(curl))
        extra = sorted(set(libs) - allowed)
        t.ok(curl and not extra,
             "ldd %s lists only the C library, libcurl and libcurl's own "
             "dependencies" % name, "also: %r" % extra)
        for lib in ("libfcgi", "libjson-c", "libsqlite3", "libsodium"):
            t.ok(not any(k.startswith(lib + ".so") for k in libs),
                 "%s links %s statically" % (name, lib))


def main():
    t = TAP()
    if os.path.realpath(SRCDIR) == os.path.realpath(BUILDDIR):
        t.ok(True, "# SKIP an in-tree build cannot hold a second, static "
             "one (tests/run builds out of tree)")
        return t.done()
    if not build(t):
        return t.done()
    test_links(t)
    copied = tempfile.mkdtemp(prefix="evalgate-copied-")
    os.chmod(copied, 0o755)
    try:
        for name in PROGRAMS:
            shutil.copy2(os.path.join(STATIC, name), copied)
        test_shared_hosting.run(t, copied)
    finally:
        shutil.rmtree(copied, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
