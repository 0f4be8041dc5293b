#!/usr/bin/env python3
"""test_package.py: the Debian package (debian/), built, installed in a
Debian 12 chroot, run behind lighttpd, Apache and nginx with the
configurations exactly as it installs them, upgraded, removed and purged.

Heavy (two package builds, a chroot): it runs only with
EVALGATE_TEST_PACKAGE=1, which .ci/run sets, and skips otherwise.  The
chroot is made with debootstrap from Debian's mirror, with the three web
servers and the package's dependencies, and kept as a tarball in
/var/cache/evalgate-test (EVALGATE_TEST_CACHE), so that a second run
unpacks it in seconds; the package's own install (apt-get install ./deb)
then needs no network.

No systemd runs in the chroot (nor on this machine): nginx's worker pool
is started as evalgate.socket and evalgate.service say, read from the
installed unit files: the socket made at ListenStream= with SocketUser=,
SocketGroup= and SocketMode=, handed to ExecStart= on descriptor 0
(StandardInput=socket) as User=, Group= and SupplementaryGroups=.  The
web servers run their Debian configuration in the foreground, on ports
80 and 8081 of this machine (the chroot shares its network): the test
stops, saying why, when either is taken.  Speaks TAP."""

import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

SRC = os.environ.get("EVALGATE_SRCDIR",
                     os.path.dirname(os.path.dirname(os.path.dirname(
                         os.path.abspath(__file__)))))
BUILD = os.environ.get("EVALGATE_BUILDDIR", os.path.join(SRC, "_build-test"))
WORK = os.path.join(BUILD, "tests", "debian", "work")
CACHE = os.environ.get("EVALGATE_TEST_CACHE", "/var/cache/evalgate-test")
ROOT = os.path.join(WORK, "root")
# What the chroot holds besides Debian's minimal base: the web servers and
# what the package depends on (so that installing it needs no network).
INCLUDE = ["lighttpd", "apache2", "libapache2-mod-fcgid", "nginx-light",
           "curl", "ca-certificates", "adduser", "multiwatch",
           "libcurl4", "libfcgi0ldbl", "libjson-c5", "libpq5",
           "libsodium23", "libsqlite3-0"]

count = 0
failed = 0
procs = []


def tap(ok, name, detail=""):
    global count, failed
    count += 1
    if not ok:
        failed += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", count, name))
    if not ok and detail:
        for line in str(detail).splitlines()[-30:]:
            print("#   " + line)
    sys.stdout.flush()
    return ok


def bail(why):
    print("Bail out! " + why.replace("\n", "\n# "))
    cleanup()
    sys.exit(1)


def run(argv, check=True, **kw):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, **kw)
    if check and p.returncode != 0:
        bail("%s: exit %d\n%s" % (" ".join(argv), p.returncode, p.stdout))
    return p


def inroot(cmd, check=True, user=None):
    """A shell command line in the chroot, as root or as user."""
    argv = ["chroot"]
    if user is not None:
        uid, gid, groups = ids(user)
        argv += ["--userspec=%d:%d" % (uid, gid),
                 "--groups=" + ",".join(str(g) for g in groups)]
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
           "DEBIAN_FRONTEND": "noninteractive", "HOME": "/root"}
    return run(argv + [ROOT, "/bin/sh", "-c", cmd], check=check, env=env)


def ids(user):
    """The uid, gid and groups of a user of the chroot, from its files."""
    with open(os.path.join(ROOT, "etc/passwd")) as f:
        pw = [l.split(":") for l in f.read().splitlines()]
    with open(os.path.join(ROOT, "etc/group")) as f:
        gr = [l.split(":") for l in f.read().splitlines()]
    ent = [p for p in pw if p[0] == user][0]
    uid, gid = int(ent[2]), int(ent[3])
    groups = [gid] + [int(g[2]) for g in gr
                      if user in g[3].split(",") and int(g[2]) != gid]
    return uid, gid, groups


def gid_of(group):
    with open(os.path.join(ROOT, "etc/group")) as f:
        for l in f.read().splitlines():
            g = l.split(":")
            if g[0] == group:
                return int(g[2])
    raise KeyError(group)


def port_free(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("0.0.0.0", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def listening(host, port):
    s = socket.socket()
    s.settimeout(1)
    try:
        s.connect((host, port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def wait_port(port, seconds=15):
    end = time.time() + seconds
    while time.time() < end:
        if listening("127.0.0.1", port):
            return True
        time.sleep(0.1)
    return False


def http(method, url, key=None, body=None, host=None):
    """(status, parsed JSON or text) of one request."""
    req = urllib.request.Request(url, method=method,
                                 data=None if body is None else
                                 json.dumps(body).encode())
    if key:
        req.add_header("Authorization", "Bearer " + key)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    if host:
        req.add_header("Host", host)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, data = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, data = e.code, e.read()
    except OSError as e:
        return 0, str(e)
    try:
        return status, json.loads(data)
    except ValueError:
        return status, data.decode("utf-8", "replace")


def start(argv, log, **kw):
    f = open(os.path.join(WORK, log), "ab")
    p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT,
                         start_new_session=True, **kw)
    f.close()
    procs.append(p)
    return p


def stop(p):
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    if p in procs:
        procs.remove(p)


def log_of(name):
    try:
        with open(os.path.join(WORK, name)) as f:
            return f.read()
    except OSError:
        return ""


def cleanup():
    for p in list(procs):
        stop(p)
    # Workers a server started in a session of their own (mod_fcgid's
    # process manager, multiwatch's children) die with it; any left,
    # by their root, are killed here.
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.readlink("/proc/%s/root" % pid) == ROOT:
                os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.5)
    for m in ("proc", "dev/pts"):
        subprocess.run(["umount", "-l", os.path.join(ROOT, m)],
                       stderr=subprocess.DEVNULL)


# ---- the chroot --------------------------------------------------------

def chroot_tarball():
    tag = hashlib.sha1(" ".join(INCLUDE).encode()).hexdigest()[:12]
    tarball = os.path.join(CACHE, "bookworm-%s.tar.gz" % tag)
    if os.path.exists(tarball):
        return tarball
    os.makedirs(CACHE, exist_ok=True)
    tmp = os.path.join(CACHE, "bookworm-%s.new" % tag)
    shutil.rmtree(tmp, ignore_errors=True)
    run(["debootstrap", "--variant=minbase", "--include=" + ",".join(INCLUDE),
         "bookworm", tmp, "http://deb.debian.org/debian"])
    # The web servers' packages start nothing in the chroot
    # (invoke-rc.d asks policy-rc.d).
    with open(os.path.join(tmp, "usr/sbin/policy-rc.d"), "w") as f:
        f.write("#!/bin/sh\nexit 101\n")
    os.chmod(os.path.join(tmp, "usr/sbin/policy-rc.d"), 0o755)
    run(["chroot", tmp, "apt-get", "clean"])
    run(["tar", "-C", tmp, "-czf", tarball + ".tmp", "."])
    os.rename(tarball + ".tmp", tarball)
    shutil.rmtree(tmp, ignore_errors=True)
    return tarball


def make_root():
    cleanup()
    shutil.rmtree(ROOT, ignore_errors=True)
    os.makedirs(ROOT)
    run(["tar", "-C", ROOT, "-xzf", chroot_tarball()])
    run(["mount", "-t", "proc", "proc", os.path.join(ROOT, "proc")])
    shutil.copy(os.path.join(SRC, "examples/demo-questions.json"),
                os.path.join(ROOT, "tmp"))


# ---- the package -------------------------------------------------------

def build(version):
    out = os.path.join(WORK, "deb-" + version.replace("+", "_"))
    p = run([os.path.join(SRC, "tools/build-deb"), "--version", version,
             out], check=False)
    if p.returncode != 0:
        bail("tools/build-deb: " + p.stdout)
    deb = p.stdout.strip().splitlines()[-1]
    # The copy of the tree it was built from is not needed any more.
    shutil.rmtree(os.path.join(out, "src"), ignore_errors=True)
    return out, deb


def install(deb):
    shutil.copy(deb, os.path.join(ROOT, "tmp"))
    return inroot("apt-get install -y -q --no-install-recommends "
                  "/tmp/%s 2>&1" % os.path.basename(deb), check=False)


def admin(args, user=None, check=True):
    return inroot("evalgate-admin " + args, user=user, check=check)


# ---- the servers -------------------------------------------------------

def unit(name):
    """The sections of an installed systemd unit: {section: {key: value}}."""
    sections, cur = {}, None
    with open(os.path.join(ROOT, "lib/systemd/system", name)) as f:
        for line in f.read().splitlines():
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                cur = sections.setdefault(line.strip("[]"), {})
            else:
                k, v = line.split("=", 1)
                cur[k.strip()] = v.strip()
    return sections


def start_pool():
    """evalgate.socket and evalgate.service, as the units say."""
    sock = unit("evalgate.socket")["Socket"]
    svc = unit("evalgate.service")["Service"]
    path = ROOT + sock["ListenStream"]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.chmod(os.path.dirname(path), int(sock.get("DirectoryMode", "0755"), 8))
    if os.path.exists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    os.chown(path, ids(sock["SocketUser"])[0], gid_of(sock["SocketGroup"]))
    os.chmod(path, int(sock["SocketMode"], 8))
    s.listen(128)
    if svc.get("StandardInput") != "socket":
        bail("evalgate.service: StandardInput is not socket")
    uid = ids(svc["User"])[0]
    gid = gid_of(svc["Group"])
    groups = [gid] + [gid_of(g) for g in
                      svc.get("SupplementaryGroups", "").split()]
    argv = ["chroot", "--userspec=%d:%d" % (uid, gid),
            "--groups=" + ",".join(map(str, groups)), ROOT] + \
        shlex.split(svc["ExecStart"])
    p = start(argv, "pool.log", stdin=s.fileno(),
              env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    s.close()
    return p, sock


def evaluate(base, key):
    with open(os.path.join(SRC, "examples/evaluate.json")) as f:
        body = json.load(f)
    return http("POST", base + "/v1/systemone", key, body)


def other_address():
    """An address of this machine that is not the loopback, or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))
        a = s.getsockname()[0]
        return None if a.startswith("127.") else a
    except OSError:
        return None
    finally:
        s.close()


def serves(name, key, log, decisions):
    """What each server must do, once its configuration is enabled and it
    runs: evaluate with the key, the admin routes on 127.0.0.1:8081
    only."""
    st, out = evaluate("http://127.0.0.1", key)
    ok = st == 200 and isinstance(out, dict) and "x_decision_id" in out
    tap(ok, "%s: evaluates with a key evalgate-admin issued" % name,
        "%s %s\n%s" % (st, out, log_of(log)))
    if ok:
        decisions.append(out["x_decision_id"])
    st, out = http("GET", "http://127.0.0.1:8081/admin/v1/applications",
                   key)
    tap(st == 200 and "applications" in out,
        "%s: /admin/v1 answers on the internal listener" % name,
        "%s %s" % (st, out))
    st, out = http("GET", "http://127.0.0.1/admin/v1/applications", key)
    st2, _ = http("GET", "http://127.0.0.1/admin/v1/applications", key,
                  host="127.0.0.1:8081")
    tap(st == 404 and st2 == 404,
        "%s: /admin/v1 is 404 on the public address (any Host)" % name,
        "%s %s / %s" % (st, out, st2))
    st, out = http("GET", "http://127.0.0.1:8081/metrics")
    st2, _ = http("GET", "http://127.0.0.1/metrics")
    tap(st == 200 and st2 == 404,
        "%s: /metrics on the internal listener only" % name,
        "%s / %s" % (st, st2))
    addr = other_address()
    if addr is None:
        tap(True, "%s: internal listener on 127.0.0.1 only "
            "# SKIP no address but the loopback" % name)
    else:
        tap(listening(addr, 80) and not listening(addr, 8081),
            "%s: the internal listener is on 127.0.0.1 only (%s:8081 "
            "refused, %s:80 open)" % (name, addr, addr))


def too_big(name, url, key, status):
    """A body over the server's own limit: its answer is the JSON of
    errors/."""
    big = {"model": "jev-latest", "state": "x" * (3 << 20), "questions": {}}
    st, out = http("POST", url, key, big)
    return tap(st == status and isinstance(out, dict) and
               out["error"]["details"].get("source") == "web server",
               "%s: a body over its limit gets the JSON %d of errors/ "
               "(%s)" % (name, status, url.split("/")[2]),
               "%s %s" % (st, str(out)[:300]))


def stopped(name):
    end = time.time() + 10
    while time.time() < end and (listening("127.0.0.1", 80) or
                                 listening("127.0.0.1", 8081)):
        time.sleep(0.1)
    return not listening("127.0.0.1", 80) and \
        not listening("127.0.0.1", 8081)


def lighttpd(key, decisions):
    p = inroot("lighty-enable-mod evalgate", check=False)
    tap(p.returncode == 0 and os.path.islink(
        ROOT + "/etc/lighttpd/conf-enabled/50-evalgate.conf"),
        "lighttpd: lighty-enable-mod evalgate", p.stdout)
    # Debian's lighttpd.service: lighttpd -D -f /etc/lighttpd/lighttpd.conf
    srv = start(["chroot", ROOT, "/usr/sbin/lighttpd", "-D", "-f",
                 "/etc/lighttpd/lighttpd.conf"], "lighttpd.log")
    if not (wait_port(80) and wait_port(8081)):
        tap(False, "lighttpd: starts", log_of("lighttpd.log"))
        stop(srv)
        return None
    serves("lighttpd", key, "lighttpd.log", decisions)
    too_big("lighttpd", "http://127.0.0.1/v1/systemone", key, 413)
    too_big("lighttpd", "http://127.0.0.1:8081/admin/v1/applications/x/keys",
            key, 413)
    return srv


def apache(key, decisions):
    p = inroot("a2enconf evalgate", check=False)
    tap(p.returncode == 0 and os.path.islink(
        ROOT + "/etc/apache2/conf-enabled/evalgate.conf"),
        "apache: a2enconf evalgate", p.stdout)
    srv = start(["chroot", ROOT, "/usr/sbin/apache2ctl", "-D",
                 "FOREGROUND"], "apache.log")
    if not (wait_port(80) and wait_port(8081)):
        tap(False, "apache: starts", log_of("apache.log") +
            log_of("root/var/log/apache2/error.log"))
        stop(srv)
        return
    serves("apache", key, "apache.log", decisions)
    # mod_fcgid answers a body over FcgidMaxRequestLen with its 500.
    too_big("apache", "http://127.0.0.1/v1/systemone", key, 500)
    too_big("apache", "http://127.0.0.1:8081/admin/v1/applications/x/keys",
            key, 500)
    stop(srv)
    tap(stopped("apache"), "apache: stopped")
    inroot("a2disconf -q evalgate")


def nginx(key, decisions):
    # The README's nginx lines: the snippet in a server block (Debian's
    # default site), the internal site linked into sites-enabled.
    p = inroot("sed -i 's|^\\s*server_name _;|&\\n\\tinclude "
               "snippets/evalgate.conf;|' "
               "/etc/nginx/sites-available/default && "
               "ln -s ../sites-available/evalgate-internal "
               "/etc/nginx/sites-enabled/ && nginx -t 2>&1", check=False)
    tap(p.returncode == 0, "nginx: snippet included, internal site "
        "enabled, nginx -t", p.stdout)
    pool, sock = start_pool()
    path = sock["ListenStream"]
    st = os.stat(ROOT + path)
    tap(st.st_uid == ids("evalgate")[0] and st.st_gid == gid_of("www-data")
        and (st.st_mode & 0o777) == 0o660,
        "nginx: the pool's socket is evalgate:www-data 0660",
        "%o %d:%d" % (st.st_mode, st.st_uid, st.st_gid))
    # curl speaks HTTP to a FastCGI socket: exit 7 is "could not
    # connect", anything else got through.
    a = inroot("curl -s -m 2 --unix-socket %s http://x/ >/dev/null; "
               "echo $?" % path, user="www-data", check=False)
    b = inroot("curl -s -m 2 --unix-socket %s http://x/ >/dev/null; "
               "echo $?" % path, user="nobody", check=False)
    tap(a.stdout.strip() != "7" and b.stdout.strip() == "7",
        "nginx: www-data may connect to the pool's socket, nobody else",
        "www-data: %s nobody: %s" % (a.stdout, b.stdout))
    # Debian's nginx.service runs it as a daemon; in the foreground here.
    srv = start(["chroot", ROOT, "/usr/sbin/nginx", "-g", "daemon off;"],
                "nginx.log")
    if not (wait_port(80) and wait_port(8081)):
        tap(False, "nginx: starts", log_of("nginx.log"))
    else:
        serves("nginx", key, "nginx.log", decisions)
        too_big("nginx", "http://127.0.0.1/v1/systemone", key, 413)
        too_big("nginx", "http://127.0.0.1:8081/admin/v1/applications/x/"
                "keys", key, 413)
        stop(pool)
        for url in ("http://127.0.0.1/v1/systemone",
                    "http://127.0.0.1:8081/admin/v1/applications"):
            st, out = http("POST" if "v1/sys" in url else "GET", url, key,
                           {} if "v1/sys" in url else None)
            tap(st == 502 and isinstance(out, dict) and
                out["error"]["details"].get("source") == "web server",
                "nginx: no pool on the socket: the JSON 502 of errors/ "
                "(%s)" % url.split("/")[2], "%s %s" % (st, str(out)[:300]))
    stop(srv)
    stop(pool)
    tap(stopped("nginx"), "nginx: stopped")


def state_files():
    """{path: (uid, gid, mode)} of /var/lib/evalgate."""
    out = {}
    base = ROOT + "/var/lib/evalgate"
    for d, dirs, files in os.walk(base):
        for n in dirs + files:
            st = os.lstat(os.path.join(d, n))
            out[os.path.join(d, n)[len(ROOT):]] = (st.st_uid, st.st_gid,
                                                   st.st_mode)
    return out


def main():
    if os.environ.get("EVALGATE_TEST_PACKAGE") != "1":
        print("1..0 # SKIP the package test runs with "
              "EVALGATE_TEST_PACKAGE=1 (.ci/run sets it)")
        return 0
    if os.getuid() != 0:
        print("1..0 # SKIP needs root (chroot, mount)")
        return 0
    for port in (80, 8081):
        if not port_free(port):
            bail("port %d is taken on this machine: the packaged "
                 "configurations listen on it" % port)
    # A run starts from nothing of the last one (its chroot, builds and
    # logs).
    cleanup()
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)

    # Two builds of this tree: the second, a newer version, for the
    # upgrade.
    describe = subprocess.run(
        [os.path.join(SRC, "tools/build-deb"), "--print-version"],
        stdout=subprocess.PIPE, text=True).stdout.strip()
    if not describe:
        bail("tools/build-deb --print-version printed nothing")
    out1, deb1 = build(describe)
    out2, deb2 = build(describe + "+1")
    tap(os.path.exists(deb1) and os.path.exists(deb2),
        "dpkg-buildpackage -us -uc -b builds evalgate_%s" % describe)
    lint = run(["lintian", "--no-tag-display-limit"] +
               glob.glob(os.path.join(out1, "*.changes")), check=False)
    errors = [l for l in lint.stdout.splitlines() if l.startswith("E:")]
    tap(not errors, "lintian: no error", "\n".join(errors))
    for l in lint.stdout.splitlines():
        if l.startswith("W:"):
            print("# lintian " + l)

    make_root()
    p = install(deb1)
    tap(p.returncode == 0, "apt-get install ./%s in a Debian 12 chroot"
        % os.path.basename(deb1), p.stdout)

    # The install.
    st = os.stat(ROOT + "/var/lib/evalgate")
    ev = ids("evalgate")[0]
    www = gid_of("www-data")
    tap(st.st_uid == ev and st.st_gid == www and
        (st.st_mode & 0o7777) == 0o2770,
        "/var/lib/evalgate: evalgate:www-data, 2770",
        "%o %d:%d" % (st.st_mode, st.st_uid, st.st_gid))
    st = os.stat(ROOT + "/var/lib/evalgate/pepper")
    tap(st.st_uid == ev and (st.st_mode & 0o007) == 0 and
        (st.st_mode & 0o777) in (0o600, 0o640),
        "the pepper: evalgate's, no one else but its group reads it",
        "%o %d:%d" % (st.st_mode, st.st_uid, st.st_gid))
    with open(ROOT + "/var/lib/evalgate/pepper") as f:
        pepper = f.read()
    tap(os.path.exists(ROOT + "/var/lib/evalgate/evalgate.db"),
        "the database made at install")
    tap(os.path.exists(ROOT + "/etc/evalgate/evalgate.conf") and
        "/etc/evalgate/evalgate.conf" in open(
            ROOT + "/var/lib/dpkg/info/evalgate.conffiles").read(),
        "/etc/evalgate/evalgate.conf is a conffile")
    with open(os.path.join(SRC, "src/settings.c")) as f:
        names = set(re.findall(r'\{ "(SERVICE_[A-Z_]+)"', f.read()))
    with open(ROOT + "/etc/evalgate/evalgate.conf") as f:
        given = set(re.findall(r"^(SERVICE_[A-Z_]+)=", f.read(), re.M))
    missing = sorted(n for n in names - given
                     if not n.startswith("SERVICE_TEST_"))
    tap(names and not missing, "every setting of settings.c in "
        "/etc/evalgate/evalgate.conf", " ".join(missing))
    # systemd's own check of the installed units, as far as it goes
    # without running them: this machine's systemd-analyze (the chroot
    # has no systemd), on copies of them (ExecStart='s program is looked
    # for here: tools/deps.sh --test installs multiwatch).
    if shutil.which("systemd-analyze"):
        units = os.path.join(WORK, "units")
        shutil.rmtree(units, ignore_errors=True)
        os.makedirs(units)
        for u in ("evalgate.socket", "evalgate.service"):
            shutil.copy(ROOT + "/lib/systemd/system/" + u, units)
        p = run(["systemd-analyze", "verify", "--man=no",
                 os.path.join(units, "evalgate.socket"),
                 os.path.join(units, "evalgate.service")], check=False)
        tap(p.returncode == 0 and p.stdout.strip() == "",
            "systemd-analyze verify evalgate.socket evalgate.service",
            p.stdout)
    else:
        tap(True, "systemd-analyze verify # SKIP no systemd-analyze")
    tap(not listening("127.0.0.1", 80) and
        not listening("127.0.0.1", 8081) and
        not os.path.exists(ROOT + "/run/evalgate/evalgate.sock") and
        not os.path.exists(ROOT +
                           "/etc/lighttpd/conf-enabled/50-evalgate.conf")
        and not os.path.exists(ROOT +
                               "/etc/apache2/conf-enabled/evalgate.conf"),
        "nothing listens and nothing is enabled after the install")

    # The console finds the packaged settings, as root and as evalgate.
    admin("app create demo --admin")
    admin("backend add lexical --kind lexical --description Baseline "
          "--release-date 2026-11-01")
    admin("schema publish demo --questions /tmp/demo-questions.json "
          "--backend lexical", user="evalgate")
    admin("grant demo demo")
    key = admin("key issue demo").stdout.strip().splitlines()[-1]
    lst = admin("app list", user="evalgate").stdout
    tap("demo" in lst, "evalgate-admin without flags, as root and as "
        "evalgate, on the packaged database", lst)
    roots = [f for f, (u, g, m) in state_files().items() if u == 0]
    tap(not roots, "evalgate-admin run by root leaves no file of root's "
        "in /var/lib/evalgate", "\n".join(roots))
    conf = ROOT + "/etc/evalgate/evalgate.conf"
    with open(conf) as f:
        saved = f.read()
    with open(conf, "a") as f:
        f.write("SERVICE_MAX_QUESTIONS=many\n")
    bad = admin("app list", check=False)
    over = inroot("SERVICE_MAX_QUESTIONS=32 evalgate-admin app list",
                  check=False)
    with open(conf, "w") as f:
        f.write(saved)
    tap(bad.returncode != 0 and "SERVICE_MAX_QUESTIONS" in bad.stdout and
        over.returncode == 0,
        "evalgate-admin reads /etc/evalgate/evalgate.conf, the "
        "environment wins", bad.stdout + over.stdout)

    # Each server with its own tool, its configuration as installed.
    decisions = []
    srv = lighttpd(key, decisions)
    if srv is not None:
        stop(srv)
        tap(stopped("lighttpd"), "lighttpd: stopped")
    inroot("lighty-disable-mod evalgate >/dev/null")
    apache(key, decisions)
    nginx(key, decisions)

    # The upgrade, lighttpd serving meanwhile; a changed setting kept.
    with open(conf, "a") as f:
        f.write("# the operator's line\n")
    inroot("lighty-enable-mod evalgate >/dev/null")
    srv = start(["chroot", ROOT, "/usr/sbin/lighttpd", "-D", "-f",
                 "/etc/lighttpd/lighttpd.conf"], "lighttpd-upgrade.log")
    wait_port(80)
    wait_port(8081)
    p = install(deb2)
    tap(p.returncode == 0, "apt-get install of a newer build over it",
        p.stdout)
    ver = admin("--version").stdout
    tap(describe + "+1" in ver, "the newer build's console runs", ver)
    tap(glob.glob(ROOT + "/var/lib/evalgate/backups/evalgate-%s-*.db"
                  % describe) != [],
        "the upgrade backed the database up first",
        "\n".join(os.listdir(ROOT + "/var/lib/evalgate")))
    with open(ROOT + "/var/lib/evalgate/pepper") as f:
        tap(f.read() == pepper, "the pepper survived the upgrade")
    with open(conf) as f:
        tap("# the operator's line" in f.read(),
            "the operator's settings survived the upgrade")
    tap(srv.poll() is None, "the upgrade left lighttpd running")
    st, out = evaluate("http://127.0.0.1", key)
    tap(st == 200, "the key still evaluates after the upgrade",
        "%s %s" % (st, out))
    kept = [http("GET", "http://127.0.0.1/v1/decisions/" + d, key)[0]
            for d in decisions]
    tap(len(decisions) == 3 and kept == [200] * 3,
        "the decisions of the three servers survived the upgrade",
        "%s %s" % (decisions, kept))
    stop(srv)

    # Removal: the data and the settings stay; the servers still start.
    inroot("a2enconf -q evalgate")
    p = inroot("apt-get remove -y -q evalgate 2>&1", check=False)
    tap(p.returncode == 0 and
        not os.path.exists(ROOT + "/usr/lib/evalgate/evalgate.fcgi"),
        "apt-get remove", p.stdout)
    tap(os.path.exists(conf) and
        os.path.exists(ROOT + "/var/lib/evalgate/evalgate.db") and
        os.path.exists(ROOT + "/var/lib/evalgate/pepper"),
        "remove keeps the settings, the database and the pepper")
    tap(not os.path.exists(ROOT +
                           "/etc/lighttpd/conf-enabled/50-evalgate.conf")
        and not os.path.exists(ROOT +
                               "/etc/apache2/conf-enabled/evalgate.conf"),
        "remove disables the lighttpd and Apache configurations")
    p = inroot("lighttpd -tt -f /etc/lighttpd/lighttpd.conf && "
               "apache2ctl configtest 2>&1", check=False)
    tap(p.returncode == 0, "lighttpd and Apache configurations still "
        "valid after remove", p.stdout)
    p = inroot("apt-get purge -y -q evalgate 2>&1", check=False)
    tap(p.returncode == 0 and not os.path.exists(ROOT + "/etc/evalgate"),
        "apt-get purge removes /etc/evalgate", p.stdout)
    tap(os.path.exists(ROOT + "/var/lib/evalgate/evalgate.db") and
        not os.path.exists(ROOT + "/etc/nginx/sites-enabled/"
                           "evalgate-internal"),
        "purge keeps the database, and unlinks the internal nginx site")
    p = inroot("nginx -t 2>&1", check=False)
    tap(p.returncode != 0 and "snippets/evalgate.conf" in p.stdout,
        "after purge, nginx -t names the include the README says to "
        "remove", p.stdout)

    # Purge with the flag: the data goes too.
    p = install(deb2)
    pepper2 = open(ROOT + "/var/lib/evalgate/pepper").read()
    tap(p.returncode == 0 and pepper2 == pepper,
        "installed again over the kept data: the same pepper", p.stdout)
    open(ROOT + "/etc/evalgate/purge-data", "w").close()
    p = inroot("apt-get purge -y -q evalgate 2>&1", check=False)
    tap(p.returncode == 0 and not os.path.exists(ROOT + "/var/lib/evalgate")
        and not os.path.exists(ROOT + "/etc/evalgate"),
        "purge with /etc/evalgate/purge-data removes the data", p.stdout)

    cleanup()
    print("1..%d" % count)
    shutil.rmtree(ROOT, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        cleanup()
