"""test_shared_hosting: evalgate on a shared host, installed as its
customer would (README, "Shared hosting").

The host is a real Apache 2.4 with Debian's default modules and their
.conf files, mod_fcgid and mod_rewrite at Debian's defaults
(FcgidMaxRequestLen 131072), and one virtual host whose DocumentRoot
directory has "AllowOverride All": nothing of evalgate's in the server
configuration.  Run as root with apache2-suexec-pristine, the workers run
as the customer through suexec (checked); otherwise without (said).
Then only tools/shared-hosting-install into the "evalgate" directory of
the document root, with the state outside it, as the customer; the
console as the customer over "SSH".  Through the prefix /evalgate: health,
an evaluation, an outcome and the decision read back, the official JS SDK
with baseURL ending in /evalgate, Authorization by CGIPassAuth and by
the rewrite's variable (each alone, and neither: 401), /admin/v1 and
/metrics 404, the state unreachable over HTTP, bodies on both sides of
the wrapper's limit and over mod_fcgid's, and the installer run again
(upgrade in place, data kept).  Then, with Apache in the customer's
group (SERVICE_GROUP_WRITABLE=1, so that it could read the state files):
a state directory below the document root, directly, through ".." or
through a symbolic link, refused with nothing made, and no state file
served at any path below the document root or the web directory.

EVALGATE_SH_BINDIR: where evalgate.fcgi and evalgate-admin are taken
from (default: the build directory); tests/static_binary_test.sh points
it at a copied --enable-static-binary build.
"""

import grp
import hashlib
import json
import os
import pwd
import re
import shutil
import stat
import textwrap

from gateway import BUILDDIR, SH_INSTALL, SRCDIR, TAP, SharedHostingGateway, \
    free_port, grp_gid
import test_sdk

BINDIR = os.path.abspath(os.environ.get("EVALGATE_SH_BINDIR", BUILDDIR))
BASE = "/evalgate"
STATE = "invoice charged twice payment refund"


def read(path):
    with open(path) as f:
        return f.read()


def wrapper_setting(g, name):
    m = re.search(r"^export %s=(\S*)$" % name,
                  read(os.path.join(g.webdir, "evalgate.fcgi")), re.M)
    return m.group(1) if m else None


def test_install(t, g, out):
    t.ok(out.returncode == 0, "the installer succeeds as the customer",
         out.stdout + out.stderr)
    t.ok(re.search(r"^Base URL path: /evalgate$", out.stdout, re.M),
         "it prints the base URL path", out.stdout)
    t.ok("key issue APP" in out.stdout and "app create APP" in out.stdout,
         "it prints the next commands (create an application, issue a key)",
         out.stdout)
    t.ok("WARNING" not in out.stdout,
         "no warning where suexec is there" if g.suexec else
         "(no suexec here: its warning is tested below)", out.stdout)
    t.eq(sorted(os.listdir(g.webdir)),
         [".htaccess", "evalgate-worker", "evalgate.fcgi"],
         "WEBDIR holds the worker, the wrapper and .htaccess only")
    names = sorted(os.listdir(g.statedir))
    t.ok({"evalgate.db", "cache.db", "pepper"} <= set(names),
         "STATEDIR holds the database, cache and pepper", names)
    modes = {n: stat.S_IMODE(os.stat(os.path.join(g.statedir, n)).st_mode)
             for n in names}
    t.ok(all(m == 0o600 for m in modes.values()),
         "every state file is mode 0600",
         {n: oct(m) for n, m in modes.items()})
    t.eq(oct(stat.S_IMODE(os.stat(g.statedir).st_mode)), oct(0o700),
         "STATEDIR is mode 0700")
    if g.customer is not None:
        uid = __import__("pwd").getpwnam(g.customer[0]).pw_uid
        t.ok(all(os.stat(os.path.join(d, n)).st_uid == uid
                 for d in (g.webdir, g.statedir)
                 for n in os.listdir(d)), "every file is the customer's")
    htaccess = read(os.path.join(g.webdir, ".htaccess"))
    t.ok(not re.search(r"^\s*Fcgid", htaccess, re.M),
         ".htaccess sets no mod_fcgid directive (server configuration only)")
    t.ok(not os.path.commonpath([g.statedir, g.docroot]) == g.docroot,
         "the state is outside the document root")
    body = int(wrapper_setting(g, "SERVICE_MAX_BODY_BYTES"))
    t.ok(body < 131072, "the wrapper's body limit is below mod_fcgid's "
         "default FcgidMaxRequestLen (%d)" % body)


def test_suexec(t, g):
    if not g.suexec:
        why = "not root" if os.geteuid() != 0 else \
            "no setuid /usr/lib/apache2/suexec (apache2-suexec-pristine)"
        t.ok(True, "# SKIP suexec: %s; the workers run as Apache's user" %
             why)
        return
    pids = g.worker_pids()
    uids = set()
    for pid in pids:
        for line in read("/proc/%d/status" % pid).splitlines():
            if line.startswith("Uid:"):
                uids.add(int(line.split()[1]))
    want = __import__("pwd").getpwnam(g.customer[0]).pw_uid
    t.ok(pids and uids == {want}, "suexec runs the workers as the customer",
         "pids %r, uids %r (want %d)\n%s" % (pids, uids, want,
                                              g.log()[-1500:]))


def test_routes(t, g, keys):
    key = keys[0]
    t.eq(g.get(BASE + "/health").json(), {"status": "ok"},
         "GET /evalgate/health")
    r = g.get(BASE + "/health/ready")
    t.eq(r.status, 200, "GET /evalgate/health/ready: the worker opens "
         "the state files (runs as their owner)")
    r = g.get(BASE + "/v1/models", key=key)
    t.ok(r.status == 200 and len(r.json()["models"]) == len(test_sdk.MODELS),
         "GET /evalgate/v1/models", r)
    r = g.post(BASE + "/v1/systemone", {"state": STATE,
                                        "x_schema": {"id": "sdk"}}, key=key)
    t.ok(r.status == 200 and "x_decision_id" in r.json(),
         "an evaluation through the prefix", r)
    did = r.json().get("x_decision_id")
    r = g.post(BASE + "/v1/decisions/%s/outcome" % did,
               {"answers": {"department": "billing"}, "source": "crm"},
               key=key)
    t.eq(r.status, 200, "an outcome through the prefix")
    r = g.get(BASE + "/v1/decisions/%s" % did, key=key)
    t.ok(r.status == 200 and r.json()["id"] == did and
         r.json()["outcomes"]["department"]["value"] == "billing",
         "the decision read back through the prefix, with its outcome", r)
    r = g.get(BASE + "/v1/decisions/%s?x=1" % did, key=key)
    t.eq(r.status, 200, "a query string after the prefix")
    t.error_is(g.get(BASE + "/nope"), 404, "not_found",
               "an unknown path below the prefix: the worker's 404")
    return did


def test_unreachable(t, g, keys):
    admin = g.new_key("root", "--admin")
    for path in ("/admin/v1/applications", "/admin/v1/backends",
                 "/metrics", "/admin/console/", "/admin/console/login",
                 "/admin/console/static/console.css"):
        t.error_is(g.get(BASE + path, key=admin), 404, "not_found",
                   "%s%s is 404, even with an administrator's key" %
                   (BASE, path))
    t.error_is(g.post(BASE + "/admin/v1/applications", {"name": "x"},
                      key=admin), 404, "not_found",
               "POST %s/admin/v1/applications is 404" % BASE)
    t.error_is(g.post(BASE + "/admin/console/login", "key=" + admin,
                      headers={"Content-Type":
                               "application/x-www-form-urlencoded"}),
               404, "not_found", "POST %s/admin/console/login is 404 "
               "(no console in the shared-hosting layout)" % BASE)
    t.ok(g.get("/admin/v1/applications", key=admin).status == 404,
         "/admin/v1 outside the prefix is Apache's 404")
    pepper = read(os.path.join(g.statedir, "pepper")).strip()
    rel = os.path.relpath(g.statedir, g.docroot)   # ../home/evalgate-state
    bodies = []
    for path in ["/evalgate/evalgate.db", "/evalgate/pepper",
                 "/evalgate/cache.db", "/evalgate/evalgate.fcgi",
                 "/evalgate/.htaccess", "/evalgate/evalgate-worker",
                 "/" + rel + "/pepper", "/" + rel + "/evalgate.db",
                 "/evalgate/" + rel + "/pepper",
                 "/evalgate/%2e%2e/" + rel + "/pepper",
                 "/evalgate/..%2f" + rel + "/pepper",
                 "/home/evalgate-state/pepper"]:
        r = g.get(path)
        bodies.append(r.body)
        t.ok(r.status in (400, 403, 404) and
             b"SQLite format" not in r.body,
             "GET %s: %d, nothing of the state" % (path, r.status), r)
    t.ok(all(pepper.encode() not in b for b in bodies),
         "the pepper is in no answer")


def test_bodies(t, g, keys):
    limit = int(wrapper_setting(g, "SERVICE_MAX_BODY_BYTES"))
    doc = json.dumps({"state": STATE, "x_schema": {"id": "sdk"}})

    def body(n):
        return (doc[:-1] + " " * (n - len(doc)) + "}").encode()

    r = g.post(BASE + "/v1/systemone", body(limit), key=keys[0],
               headers={"Content-Type": "application/json"})
    t.eq(r.status, 200, "a body of exactly SERVICE_MAX_BODY_BYTES (%d) "
         "is answered" % limit)
    r = g.post(BASE + "/v1/systemone", body(limit + 1), key=keys[0],
               headers={"Content-Type": "application/json"})
    t.error_is(r, 413, "payload_too_large",
               "one byte more: the worker's JSON 413")
    r = g.post(BASE + "/v1/systemone", body(131072 + 1), key=keys[0],
               headers={"Content-Type": "application/json"})
    t.ok(r.status == 500 and "x-service-request-id" not in r.headers,
         "over FcgidMaxRequestLen (131072): mod_fcgid's own 500 (the "
         "README says so)", r)


def test_authorization(t, g, keys):
    path = os.path.join(g.webdir, ".htaccess")
    shipped = read(path)
    ways = {
        "CGIPassAuth alone": lambda s: re.sub(
            r"^RewriteRule \^ - \[E=HTTP_AUTHORIZATION.*\n", "", s,
            flags=re.M),
        "the rewrite's E=HTTP_AUTHORIZATION alone": lambda s: re.sub(
            r"^CGIPassAuth On\n", "", s, flags=re.M),
    }
    ways["neither"] = lambda s: ways["CGIPassAuth alone"](
        ways["the rewrite's E=HTTP_AUTHORIZATION alone"](s))
    try:
        for name, edit in ways.items():
            text = edit(shipped)
            t.ok(text != shipped, ".htaccess edited for %s" % name)
            with open(path, "w") as f:      # owner and mode stay
                f.write(text)
            r = g.get(BASE + "/v1/models", key=keys[0])
            if name == "neither":
                t.error_is(r, 401, "invalid_api_key",
                           "with neither, the key does not arrive: 401")
            else:
                t.eq(r.status, 200, "the key arrives with %s" % name)
    finally:
        with open(path, "w") as f:
            f.write(shipped)
    t.eq(g.get(BASE + "/v1/models", key=keys[0]).status, 200,
         "the key arrives with the .htaccess as shipped (both)")


def test_upgrade(t, g, did, keys):
    worker = os.path.join(g.webdir, "evalgate-worker")
    wrapper = os.path.join(g.webdir, "evalgate.fcgi")
    before = os.stat(worker).st_ino
    with open(os.path.join(g.statedir, "pepper"), "rb") as f:
        pepper = hashlib.sha256(f.read()).hexdigest()
    edited = read(wrapper)
    out = g.install()
    t.ok(out.returncode == 0 and "kept" in out.stdout,
         "the installer runs again, keeping the wrapper",
         out.stdout + out.stderr)
    t.ok(os.stat(worker).st_ino != before,
         "the worker is replaced (a new file, renamed into place)")
    t.eq(read(wrapper), edited, "the wrapper's edits are kept")
    with open(os.path.join(g.statedir, "pepper"), "rb") as f:
        t.eq(hashlib.sha256(f.read()).hexdigest(), pepper,
             "the pepper is kept")
    r = g.get(BASE + "/v1/decisions/%s" % did, key=keys[0])
    t.ok(r.status == 200 and r.json()["id"] == did,
         "the decision and the key survive the upgrade", r)


def test_installer_refusals(t, bindir):
    """Without Apache: what the installer refuses, says, and its group
    mode."""
    g = SharedHostingGateway(bindir=bindir, suexec=False)
    try:
        inside = os.path.join(g.webdir, "state")
        out = g.install(statedir=inside)
        t.ok(out.returncode != 0 and "outside the web root" in out.stderr
             and not os.path.exists(os.path.join(inside, "evalgate.db")),
             "STATEDIR inside WEBDIR is refused, nothing made",
             out.stdout + out.stderr)
        out = g.install(env={"EVALGATE_SUEXEC": "/nonexistent"})
        t.ok(out.returncode == 0 and "WARNING: no suexec" in out.stdout and
             "SERVICE_GROUP_WRITABLE=1" in out.stdout,
             "without suexec it says the worker may not run as the "
             "customer and offers SERVICE_GROUP_WRITABLE=1",
             out.stdout + out.stderr)
        shutil.rmtree(g.webdir)
        shutil.rmtree(g.statedir)
        out = g.install(env={"EVALGATE_SUEXEC": "/nonexistent",
                             "SERVICE_GROUP_WRITABLE": "1"})
        modes = {n: oct(stat.S_IMODE(os.stat(
            os.path.join(g.statedir, n)).st_mode))
            for n in os.listdir(g.statedir)}
        pepper = modes.pop("pepper", None)
        t.ok(out.returncode == 0 and "WARNING" not in out.stdout and
             set(modes.values()) == {oct(0o660)} and pepper == oct(0o640)
             and
             stat.S_IMODE(os.stat(g.statedir).st_mode) == 0o2770 and
             wrapper_setting(g, "SERVICE_GROUP_WRITABLE") == "1",
             "SERVICE_GROUP_WRITABLE=1: database and cache files 0660, the "
             "pepper 0640, STATEDIR 2770 (setgid), the wrapper says 1", "%r\n%s" % (modes, out.stdout))
        with open(os.path.join(g.webdir, ".htaccess"), "w") as f:
            f.write("# someone else's\n")
        out = g.install()
        t.ok(out.returncode != 0 and "not evalgate's" in out.stderr,
             "an .htaccess that is not evalgate's is never overwritten",
             out.stdout + out.stderr)
    finally:
        shutil.rmtree(g.dir, ignore_errors=True)


def state_paths(g, webdir, statedir):
    """The URL paths of the state files if Apache served them: where
    STATEDIR is, if under the document root; where it would be at the
    top of the document root, in WEBDIR, and WEBDIR itself."""
    rel = os.path.relpath(statedir, g.docroot)
    base = "/" + os.path.relpath(webdir, g.docroot)
    name = "/" + os.path.basename(statedir)
    dirs = [name, base + name, base]
    if not rel.startswith(".."):
        dirs.append("/" + rel)
    return ["%s/%s" % (d, n) for d in dirs
            for n in ("evalgate.db", "pepper", "cache.db")]


def apache_run(t, g, what, body):
    """Runs body(), g's tests, then stops g and checks the sanitizers'
    silence; an exception fails the run, with the end of g's log.  g is
    removed in the end."""
    try:
        body()
        t.stop_clean(g)
    except Exception:
        import traceback
        t.ok(False, "%s raised" % what,
             traceback.format_exc() + "\n" + g.log()[-2000:])
    finally:
        g.cleanup()


def test_state_in_docroot(t, bindir):
    """A state directory anywhere under the document root is refused,
    whatever path leads there.  Apache runs as www-data in the
    customer's group with SERVICE_GROUP_WRITABLE=1, the install that
    mode is for (no suexec): it could read the state files wherever they
    are, so only their place keeps them from being served."""
    g = SharedHostingGateway(bindir=bindir, suexec=False, shared_group=True)
    env = {"EVALGATE_SUEXEC": "/nonexistent", "SERVICE_GROUP_WRITABLE": "1"}

    def body():
        out = g.install(env=env)
        t.ok(out.returncode == 0, "a state directory outside the document "
             "root is accepted", out.stdout + out.stderr)
        g.start()
        t.eq(g.get(BASE + "/health/ready").status, 200,
             "Apache's user reads the state files (the worker opens them)")
        eg2 = os.path.join(g.docroot, "eg2")
        link = os.path.join(g.home, "site")
        os.symlink(g.docroot, link)
        g._give(link)
        tried = [("beside WEBDIR", os.path.join(g.docroot, "eg2-state")),
                 ("through ..", os.path.join(g.home, "..", "html",
                                             "eg2-dots")),
                 ("through a symbolic link", os.path.join(link, "eg2-link"))]
        paths = state_paths(g, g.webdir, g.statedir)
        for what, statedir in tried:
            out = g.install(webdir=eg2, statedir=statedir, env=env)
            real = os.path.realpath(statedir)
            t.ok(out.returncode != 0 and "document root" in out.stderr and
                 real in out.stderr and "~/evalgate-state" in out.stderr
                 and not os.path.exists(real) and
                 not os.path.exists(eg2),
                 "STATEDIR under the document root %s is refused, naming "
                 "it and where to put it instead; nothing made" % what,
                 out.stdout + out.stderr)
            paths += state_paths(g, eg2, real)
        pepper = read(os.path.join(g.statedir, "pepper")).strip().encode()
        served = []
        for path in dict.fromkeys(paths):
            r = g.get(path)
            if r.status not in (400, 403, 404) or \
                    b"SQLite format" in r.body or pepper in r.body:
                served.append((path, r.status))
        t.eq(served, [], "the database, the pepper and the cache are not "
             "served at any path, below the document root or WEBDIR "
             "(400, 403 or 404)")
    apache_run(t, g, "the document-root run", body)


def said(out, *words):
    """Whether the installer's output (both streams) has every word."""
    text = out.stdout + out.stderr
    return all(w in text for w in words)


def test_check_url(t, bindir):
    """The installer's --check-url: after installing it asks the site
    over HTTP and names what the host lacks when the route does not
    answer JSON.  One host, reconfigured between the runs."""
    g = SharedHostingGateway(bindir=bindir)
    suexec = g.suexec

    def check():
        g.stop()
        g.run_apache()
        return g.install(args=["--check-url", g.url(BASE)])

    def body():
        out = g.install()
        t.ok(out.returncode == 0 and
             "curl -sS https://YOUR-SITE/evalgate/health/ready" in
             out.stdout, "without --check-url it says how to check by "
             "hand", out.stdout + out.stderr)
        g.modules_off = ("rewrite",)
        out = check()
        t.ok(out.returncode != 0 and said(out, "mod_rewrite", "a2enmod"),
             "mod_rewrite off: the check names it", out.stdout + out.stderr)
        r = g.get(BASE + "/health")
        t.ok(r.status == 404 and b"mod_rewrite" in r.body,
             "mod_rewrite off: a 404 that names it, not a bare HTML 500", r)
        r = g.get(BASE + "/v1/models")
        t.ok(r.status == 404 and b"mod_rewrite" in r.body,
             "mod_rewrite off: every path says so", r)
        g.modules_off = ("fcgid",)
        out = check()
        r = g.get(BASE + "/evalgate.fcgi")
        t.ok(out.returncode != 0 and said(out, "mod_fcgid") and
             r.status == 403 and b"export" not in r.body,
             "mod_fcgid off: the check names it, and the wrapper is not "
             "served as text", out.stdout + out.stderr + repr(r))
        g.modules_off = ()
        for override, lacks in (("AuthConfig Options", "FileInfo"),
                                ("FileInfo AuthConfig", "Options")):
            g.allow_override = override
            out = check()
            t.ok(out.returncode != 0 and
                 said(out, "AllowOverride", lacks, "error log"),
                 "AllowOverride %s: the check says the .htaccess is "
                 "refused, and what AllowOverride needs" % override,
                 out.stdout + out.stderr)
        g.allow_override = "None"
        out = check()
        t.ok(out.returncode != 0 and
             said(out, ".htaccess", "not read", "AllowOverride"),
             "AllowOverride None: the check says the .htaccess is not read",
             out.stdout + out.stderr)
        g.allow_override = "All"
        if suexec:
            g.suexec = False
            out = check()
            t.ok(out.returncode != 0 and
                 said(out, "0700", "suexec", "SERVICE_GROUP_WRITABLE=1"),
                 "no suexec for the site: the check says the 0700 wrapper "
                 "runs only through suexec, and offers the group mode",
                 out.stdout + out.stderr)
            g.suexec = True
        else:
            t.skip("no suexec for the site: the check names it",
                   "needs root and Debian's suexec")
        out = check()
        t.ok(out.returncode == 0 and said(out, "answers"),
             "the host as it should be: the check passes",
             out.stdout + out.stderr)
        out = g.install(args=["--check-url", "http://127.0.0.1:%d%s" %
                              (free_port(), BASE)])
        t.ok(out.returncode != 0 and
             said(out, "could not reach", "curl -sS"),
             "a URL it cannot reach: it says how to check by hand",
             out.stdout + out.stderr)
    apache_run(t, g, "the --check-url run", body)


def group_state(g):
    """The modes of STATEDIR and what is in it, WEBDIR's programs, and
    the wrapper's SERVICE_GROUP_WRITABLE."""
    modes = {n: oct(stat.S_IMODE(os.stat(os.path.join(g.statedir,
                                                     n)).st_mode))
             for n in os.listdir(g.statedir)}
    st = {"pepper": modes.pop("pepper"),
          "files": sorted(set(modes.values()))}
    st["STATEDIR"] = oct(stat.S_IMODE(os.stat(g.statedir).st_mode))
    for n in ("evalgate.fcgi", "evalgate-worker"):
        st[n] = oct(stat.S_IMODE(os.stat(os.path.join(g.webdir,
                                                      n)).st_mode))
    st["SERVICE_GROUP_WRITABLE"] = wrapper_setting(g,
                                                   "SERVICE_GROUP_WRITABLE")
    return st


def test_group_mode_again(t, bindir):
    """Running the installer again applies the mode asked for, to the
    state files, STATEDIR, the programs and the wrapper's setting, and
    keeps the one installed when none is asked for."""
    g = SharedHostingGateway(bindir=bindir, suexec=False)
    no = {"EVALGATE_SUEXEC": "/nonexistent"}
    group = dict(no, SERVICE_GROUP_WRITABLE="1")
    private = dict(no, SERVICE_GROUP_WRITABLE="0")
    want_group = {"files": [oct(0o660)],
                  "pepper": oct(0o640), "STATEDIR": oct(0o2770),
                  "evalgate.fcgi": oct(0o750),
                  "evalgate-worker": oct(0o750),
                  "SERVICE_GROUP_WRITABLE": "1"}
    want_private = {"files": [oct(0o600)],
                    "pepper": oct(0o600), "STATEDIR": oct(0o700),
                    "evalgate.fcgi": oct(0o700),
                    "evalgate-worker": oct(0o700),
                    "SERVICE_GROUP_WRITABLE": "0"}
    try:
        out = g.install(env=private)
        t.eq(group_state(g), want_private, "installed: 0600, 0700")
        open(os.path.join(g.statedir, "evalgate.shm"), "w").close()
        os.chmod(os.path.join(g.statedir, "evalgate.shm"), 0o600)
        g._give(os.path.join(g.statedir, "evalgate.shm"))
        for n in range(2):
            out = g.install(env=group)
            t.ok(out.returncode == 0 and "files mode 0660" in out.stdout,
                 "again with SERVICE_GROUP_WRITABLE=1 (%d)" % (n + 1),
                 out.stdout + out.stderr)
            t.eq(group_state(g), want_group, "... the state files 0660 "
                 "(the pepper 0640), STATEDIR 2770, the programs 0750, the "
                 "wrapper's setting 1 (%d)" % (n + 1))
        out = g.install(env=no)
        t.ok(out.returncode == 0 and "files mode 0660" in out.stdout,
             "again with no SERVICE_GROUP_WRITABLE: the installed mode",
             out.stdout + out.stderr)
        t.eq(group_state(g), want_group, "... kept as it was")
        out = g.install(env=private)
        t.ok(out.returncode == 0 and "files mode 0600" in out.stdout,
             "again with SERVICE_GROUP_WRITABLE=0", out.stdout + out.stderr)
        t.eq(group_state(g), want_private, "... back to 0600 and 0700, "
             "STATEDIR no longer setgid, the wrapper's setting 0")
    finally:
        shutil.rmtree(g.dir, ignore_errors=True)


def readme_blocks():
    """The sh blocks of README.md's "Shared hosting" section."""
    text = read(os.path.join(SRCDIR, "README.md"))
    section = text.split("\n## Shared hosting\n", 1)[1].split("\n## ", 1)[0]
    return [textwrap.dedent(b) for b in
            re.findall(r"^ *```sh\n(.*?)^ *```$", section, re.M | re.S)]


def test_readme_commands(t, bindir):
    """README's shared-hosting steps 2 and 3, pasted into sh (and bash)
    as they are, as the customer in its home directory: the installer's
    and the console's lines, then the group mode's, after which the
    console still works with nothing exported.  The site is not served
    here: curl's lines and the installer's --check-url (test_check_url's)
    are left out."""
    blocks = [b for b in readme_blocks() if "scp " not in b and
              ("shared-hosting-install" in b or "evalgate-admin" in b)]
    t.eq(len(blocks), 3, "README's Shared hosting has the install, the "
         "set-up and the group-mode blocks")
    for shell in ("sh", "bash"):
        if shutil.which(shell) is None:
            t.skip("README's commands in %s" % shell, "no " + shell)
            continue
        g = SharedHostingGateway(bindir=bindir, suexec=False)
        try:
            bindir2 = os.path.join(g.dir, "bin")
            os.makedirs(bindir2)
            os.symlink(SH_INSTALL, os.path.join(bindir2,
                                                "shared-hosting-install"))
            g._give(bindir2)
            shutil.copy(os.path.join(SRCDIR, "examples",
                                     "demo-questions.json"),
                        os.path.join(g.home, "triage.json"))
            g._give(os.path.join(g.home, "triage.json"))
            script = "set -e\n" + "\n".join(
                re.sub(r" --check-url \S+", "", line)
                for b in blocks for line in b.splitlines()
                if not line.startswith("curl ")) + \
                '\nevalgate-admin --db "$db" app list\n'
            out = g.as_customer([shell, "-c", script], env={
                "PATH": "%s:%s:/usr/bin:/bin" % (bindir2, g.bindir),
                "EVALGATE_SUEXEC": "/nonexistent"})
            t.ok(out.returncode == 0 and
                 os.path.exists(os.path.join(g.home, "evalgate-state",
                                             "evalgate.db")),
                 "README's commands pasted into %s install and set up "
                 "evalgate, in either mode" % shell, out.stdout + out.stderr)
        finally:
            shutil.rmtree(g.dir, ignore_errors=True)


def test_group_host(t, bindir):
    """The host puts the customer and www-data in a group of the
    customer's; Apache's own group stays www-data and there is no
    suexec.  Installed with SERVICE_GROUP_WRITABLE=1, the workers make
    their files (-wal, -shm, evalgate.shm) in STATEDIR; the customer's
    console, without SERVICE_GROUP_WRITABLE exported, keeps working."""
    if os.geteuid() != 0:
        t.skip("a host's group", "needs root (groupadd, Apache as "
               "www-data)")
        return
    g = SharedHostingGateway(bindir=bindir, suexec=False, host_group=True)

    def body():
        out = g.install(env={"EVALGATE_SUEXEC": "/nonexistent",
                             "SERVICE_GROUP_WRITABLE": "1"})
        t.ok(out.returncode == 0, "installed in group mode",
             out.stdout + out.stderr)
        t.ok(os.stat(g.statedir).st_mode & stat.S_ISGID,
             "STATEDIR is setgid")
        # Set up as the customer would have before: the mode exported.
        admin = g.admin
        g.admin = lambda *a, **kw: admin(*a, env={
            "SERVICE_GROUP_WRITABLE": "1"}, **kw)
        keys = test_sdk.setup(g)
        g.admin = admin
        g.start()
        r = g.post(BASE + "/v1/systemone", {"state": STATE,
                                            "x_schema": {"id": "sdk"}},
                   key=keys[0])
        t.ok(r.status == 200, "the workers (www-data) evaluate", r)
        gid = grp_gid(g.made_group)
        files = {n: os.stat(os.path.join(g.statedir, n))
                 for n in os.listdir(g.statedir)}
        made = [n for n, st in files.items()
                if st.st_uid == pwd.getpwnam("www-data").pw_uid]
        t.ok(made, "the workers made files in STATEDIR", sorted(files))
        t.eq({n: grp.getgrgid(st.st_gid).gr_name
              for n, st in files.items() if st.st_gid != gid}, {},
             "every file in STATEDIR is the shared group's, those the "
             "workers made too")
        for env in ({"SERVICE_GROUP_WRITABLE": "1"}, None):
            for args in (("app", "create", "later%d" % (env is None)),
                         ("key", "issue", "later%d" % (env is None)),
                         ("app", "list")):
                p = g.admin(*args, check=False, env=env)
                t.ok(p.returncode == 0, "the console, %s, after the "
                     "workers wrote: %s" % (
                         "with SERVICE_GROUP_WRITABLE=1 exported" if env
                         else "with nothing exported", " ".join(args)),
                     p.stdout + p.stderr)
        r = g.post(BASE + "/v1/systemone", {"state": STATE,
                                            "x_schema": {"id": "sdk"}},
                   key=keys[0])
        t.ok(r.status == 200, "and the workers still evaluate", r)
    apache_run(t, g, "the host-group run", body)


def test_pepper_advice(t, bindir):
    """The console's advice on a group-readable pepper never breaks the
    workers, and the default mode is not weakened: a 0640 pepper in a
    plain 0700 directory is still refused."""
    g = SharedHostingGateway(bindir=bindir, suexec=False)
    try:
        out = g.install(env={"EVALGATE_SUEXEC": "/nonexistent",
                             "SERVICE_GROUP_WRITABLE": "1"})
        p = g.admin("app", "list", check=False)
        t.ok(p.returncode == 0, "group mode: the console reads the 0640 "
             "pepper without SERVICE_GROUP_WRITABLE exported",
             p.stdout + p.stderr)
        p = g.admin("app", "list", check=False,
                    env={"SERVICE_GROUP_WRITABLE": "0"})
        t.ok(p.returncode != 0 and "chmod 600" not in p.stderr and
             "SERVICE_GROUP_WRITABLE" in p.stderr,
             "SERVICE_GROUP_WRITABLE=0 in group mode: refused, and the "
             "advice is not chmod 600 (which would lock the workers out)",
             p.stdout + p.stderr)
        os.chmod(g.statedir, 0o700)
        p = g.admin("app", "list", check=False)
        t.ok(p.returncode != 0 and "pepper" in p.stderr,
             "a 0640 pepper in a plain 0700 directory is still refused",
             p.stdout + p.stderr)
    finally:
        shutil.rmtree(g.dir, ignore_errors=True)


def run(t, bindir=BINDIR):
    """The whole test with evalgate.fcgi and evalgate-admin from
    bindir."""
    g = SharedHostingGateway(bindir=bindir)
    print("# binaries from %s; suexec %s" % (bindir, g.suexec))

    def body():
        out = g.install()
        test_install(t, g, out)
        # The customer adds variables to the wrapper as for an upstream
        # key: here the sanitizers' (suexec passes none of Apache's).
        g.add_to_wrapper([
            ("ASAN_OPTIONS", "detect_leaks=1:log_path=%s/sanitizer" %
             g.sandir),
            ("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1:"
             "log_path=%s/sanitizer" % g.sandir)])
        keys = test_sdk.setup(g)
        g.start()
        test_suexec(t, g)
        did = test_routes(t, g, keys)
        test_unreachable(t, g, keys)
        test_bodies(t, g, keys)
        test_authorization(t, g, keys)
        if test_sdk.install(t):
            test_sdk.run_node(t, g, *keys, base="http://127.0.0.1:%d%s" % (g.port, BASE),
                              prefix="sdk at .../evalgate: ")
        test_upgrade(t, g, did, keys)
        t.ok(keys[0] not in g.log() and keys[1] not in g.log(),
             "keys are never logged")
    apache_run(t, g, "the shared-hosting run", body)
    t.run([test_installer_refusals, test_state_in_docroot,
           test_group_mode_again, test_readme_commands, test_pepper_advice,
           test_group_host, test_check_url], bindir)


def main():
    t = TAP()
    run(t)
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
