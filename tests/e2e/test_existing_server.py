"""test_existing_server: each drop-in sample added to a web server that
serves a static site already, set up as Debian installs it, as a new
user adds evalgate to a server in use.

lighttpd: Debian's /etc/lighttpd/lighttpd.conf and the files its
conf-enabled/ holds, copied into a temporary directory with only their
paths and port changed (and the IPv6 listener left out: the test
listens on loopback), serving an index.html; then
examples/lighttpd-evalgate.conf as conf-enabled/50-evalgate.conf, its
var.* lines edited as the user does.

Apache: Debian's apache2.conf, ports.conf, and the files of
mods-enabled/ and conf-enabled/, copied the same way, with the default
site 000-default.conf; then examples/apache-fcgid.conf as
sites-enabled/evalgate.conf (name-based, on the default site's address)
and examples/apache-fcgid-server.conf in conf-enabled/.

Each server runs first without evalgate and then with it, and the static
site must answer the same both times: its page (the same body and
content type) and its own 404 for an unknown path, never JSON, and no
path taken by the gateway on another Host.  The gateway answers on its
host name (GET /health, an evaluation with a real key, its JSON 404) and
its internal listener (/admin/v1, which stays 404 on the public
address).  Requests name the host in a Host header without a port, as a
browser does on port 80.  No sanitizer reports."""

import glob
import os
import re
import shutil
import subprocess

from deploy_checks import UUID7, setup, evaluate_body
from gateway import (ApacheGateway, Gateway, TAP, ERRORS, SRCDIR, APACHE,
                     APACHE_SERVER_SAMPLE, sanitizer_env, set_directive,
                     wait_port)

NAME = "evalgate.test"          # the gateway's host name
SITE = "www.example.test"       # the existing site's, any other Host
PAGE = b"<html><body>The site that was here first.</body></html>\n"
LIGHTTPD_DROPIN = os.path.join(SRCDIR, "examples", "lighttpd-evalgate.conf")
LIGHTTPD_ETC = "/etc/lighttpd"
APACHE_ETC = "/etc/apache2"


def copy_enabled(src, dst):
    """The files of a Debian *-enabled directory (links into
    *-available), copied as plain files."""
    os.makedirs(dst, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(src, "*"))):
        shutil.copyfile(path, os.path.join(dst, os.path.basename(path)))


def sub(text, pattern, repl, where):
    """text with the one line matching pattern replaced; raises if there
    is none, so that a changed stock file fails loudly."""
    text, n = re.subn(pattern, lambda m: repl, text, count=1, flags=re.M)
    if n != 1:
        raise RuntimeError("%s: no line %r" % (where, pattern))
    return text


class ExistingServer(ApacheGateway):
    """A stock server with a static site, and evalgate's drop-in once
    self.dropin is set; the Gateway interface, requests to NAME unless a
    Host is given.  The console runs as www-data (ApacheGateway)."""

    def __init__(self):
        super().__init__(workers=2)
        self.www = os.path.join(self.dir, "www")
        os.makedirs(self.www, exist_ok=True)
        with open(os.path.join(self.www, "index.html"), "wb") as f:
            f.write(PAGE)
        self.dropin = False

    def request(self, method, path, body=None, key=None, headers=None,
                port=None, timeout=60):
        h = {"Host": NAME}
        h.update(headers or {})
        return super().request(method, path, body, key, h, port, timeout)

    def static(self, path):
        """GET path of the static site: (status, content type, body)."""
        r = self.get(path, headers={"Host": SITE})
        return r.status, r.headers.get("content-type"), r.body

    def own(self):
        """Gives the test directory, as it is now, to the workers' user
        (ApacheGateway._own does it once)."""
        self._owned = False
        self._own()

    def spawn(self, argv, out, env=None):
        """Starts the server in the foreground; waits for its ports."""
        self.own()
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, env=env,
            stderr=open(os.path.join(self.dir, out), "w"))
        for port in (self.port, self.admin_port) if self.dropin else \
                (self.port,):
            if not wait_port(port):
                raise RuntimeError("%s did not start: %s" %
                                   (argv[0], self.log()))
        return self


class DebianLighttpd(ExistingServer):
    def config_dir(self):
        root = os.path.join(self.dir, "etc")
        copy_enabled(os.path.join(LIGHTTPD_ETC, "conf-enabled"),
                     os.path.join(root, "conf-enabled"))
        where = os.path.join(LIGHTTPD_ETC, "lighttpd.conf")
        with open(where) as f:
            text = f.read()
        for key, value in (
                ("server.document-root", '"%s"' % self.www),
                ("server.upload-dirs", '( "%s" )' % self.dir),
                ("server.errorlog", '"%s/error.log"' % self.dir),
                ("server.pid-file", '"%s/lighttpd.pid"' % self.dir),
                ("server.port", "%d\nserver.bind = \"127.0.0.1\""
                 % self.port)):
            text = sub(text, r"^%s\s*=.*$" % re.escape(key),
                       "%s = %s" % (key, value), where)
        if self.user is None:
            text = re.sub(r"^server\.(username|groupname)\s*=.*$", "",
                          text, flags=re.M)
        text = sub(text, r"^include_shell .*use-ipv6\.pl.*$", "", where)
        text = sub(text, r'^include "/etc/lighttpd/conf-enabled/\*\.conf"$',
                   'include "%s/conf-enabled/*.conf"' % root, where)
        with open(os.path.join(root, "lighttpd.conf"), "w") as f:
            f.write(text)
        if self.dropin:
            self.write_dropin(os.path.join(root, "conf-enabled",
                                           "50-evalgate.conf"))
        return os.path.join(root, "lighttpd.conf")

    def write_dropin(self, path):
        with open(LIGHTTPD_DROPIN) as f:
            text = f.read()
        for name, value in (
                ("var.evalgate_worker", '"%s"' % self.worker),
                ("var.evalgate_state", '"%s"' % self.dir),
                ("var.evalgate_name", '"%s"' % NAME),
                ("var.evalgate_admin", '"127.0.0.1:%d"' % self.admin_port),
                ("var.evalgate_errors", '"%s"' % ERRORS)):
            text = set_directive(text, name, "= " + value,
                                 where=LIGHTTPD_DROPIN)
        for name, value in sorted(self.env.items()):
            text = set_directive(text, '"%s"' % name, '=> "%s",' % value,
                                 where=LIGHTTPD_DROPIN)
        extra = "".join('\t\t"%s" => "%s",\n' % kv
                        for kv in sorted(sanitizer_env(self.dir).items()))
        text = sub(text, r'^(\t"bin-environment" => \()$',
                   '\t"bin-environment" => (\n' + extra.rstrip("\n"),
                   LIGHTTPD_DROPIN)
        with open(path, "w") as f:
            f.write(text)

    def check(self):
        """lighttpd -tt on the configuration: (ok, what it said)."""
        p = subprocess.run(["lighttpd", "-tt", "-f", self.config_dir()],
                           capture_output=True, text=True, timeout=60)
        return p.returncode == 0, p.stdout + p.stderr

    def start(self):
        return self.spawn(["lighttpd", "-D", "-f", self.config_dir()],
                          "lighttpd.out")

    # lighttpd's own logs, as the harness's lighttpd writes them.
    log = Gateway.log


class DebianApache(ExistingServer):
    def config_dir(self):
        root = os.path.join(self.dir, "etc")
        for d in ("mods-enabled", "conf-enabled"):
            copy_enabled(os.path.join(APACHE_ETC, d), os.path.join(root, d))
        os.makedirs(os.path.join(root, "sites-enabled"), exist_ok=True)
        shutil.copyfile(os.path.join(APACHE_ETC, "apache2.conf"),
                        os.path.join(root, "apache2.conf"))
        where = os.path.join(APACHE_ETC, "ports.conf")
        with open(where) as f:
            text = f.read()
        text = sub(text, r"^Listen 80$", "Listen 127.0.0.1:%d" % self.port,
                   where)
        with open(os.path.join(root, "ports.conf"), "w") as f:
            f.write(text)
        where = os.path.join(APACHE_ETC, "sites-available",
                             "000-default.conf")
        with open(where) as f:
            text = f.read()
        text = sub(text, r"^<VirtualHost \*:80>$",
                   "<VirtualHost *:%d>" % self.port, where)
        text = sub(text, r"^\s*DocumentRoot /var/www/html$",
                   "\tDocumentRoot %s\n\t<Directory %s>\n\t\tRequire all "
                   "granted\n\t</Directory>" % (self.www, self.www), where)
        with open(os.path.join(root, "sites-enabled", "000-default.conf"),
                  "w") as f:
            f.write(text)
        # mod_fcgid's sockets and table under the test's directory.
        with open(os.path.join(root, "mods-enabled", "fcgid.conf"),
                  "a") as f:
            f.write('FcgidIPCDir "%s/fcgid"\nFcgidProcessTableFile '
                    '"%s/fcgid/shm"\n' % (self.dir, self.dir))
        if self.dropin:
            with open(os.path.join(root, "sites-enabled", "evalgate.conf"),
                      "w") as f:
                f.write(self.site(NAME, "*:%d" % self.port))
            shutil.copyfile(APACHE_SERVER_SAMPLE, os.path.join(
                root, "conf-enabled", "evalgate-fcgid.conf"))
        return root

    def environment(self):
        """What Debian's /etc/apache2/envvars sets."""
        user = self.user or __import__("pwd").getpwuid(os.getuid())[0]
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C",
                "APACHE_RUN_USER": user, "APACHE_RUN_GROUP": user,
                "APACHE_PID_FILE": os.path.join(self.dir, "apache2.pid"),
                "APACHE_RUN_DIR": os.path.join(self.dir, "run"),
                "APACHE_LOCK_DIR": os.path.join(self.dir, "lock"),
                "APACHE_LOG_DIR": self.dir}

    def apache(self, *args):
        root = self.config_dir()
        for d in ("run", "lock"):
            os.makedirs(os.path.join(self.dir, d), exist_ok=True)
        return [APACHE, "-d", root, "-f", os.path.join(root, "apache2.conf")
                ] + list(args)

    def check(self):
        p = subprocess.run(self.apache("-t"), capture_output=True,
                           text=True, timeout=60, env=self.environment())
        return p.returncode == 0, p.stdout + p.stderr

    def start(self):
        return self.spawn(self.apache("-k", "start", "-DFOREGROUND"),
                          "apache2.out", self.environment())


def run(t, g, what):
    """The static site alone, then with the drop-in: the same answers;
    the gateway on its host and internal listener."""
    g.start()
    before = {p: g.static(p) for p in ("/", "/nope", "/health")}
    t.ok(before["/"][0] == 200 and before["/"][2] == PAGE and
         before["/nope"][0] == 404,
         "%s without evalgate: the static site answers" % what, before)
    g.stop()
    g.dropin = True
    ok, said = g.check()
    t.ok(ok, "%s: the configuration with the drop-in is valid" % what,
         said)
    if not ok:
        return
    try:
        g.start()
    except RuntimeError as e:
        t.ok(False, "%s starts with the drop-in" % what, str(e)[-2000:])
        return
    for path, name in (("/", "page"), ("/nope", "404"),
                       ("/health", "404 for a gateway path")):
        after = g.static(path)
        t.eq(after, before[path], "%s: the static site's %s (%s) as before"
             " (status, content type, body)" % (what, name, path))
        t.ok(not (after[1] or "").startswith("application/json"),
             "%s: %s is not JSON" % (what, path), after)
    try:
        g.wait_ready()
    except RuntimeError as e:
        t.ok(False, "%s: the gateway answers on its host" % what,
             str(e)[-2000:])
        return
    r = g.get("/health")
    t.ok(r.status == 200 and r.headers.get("content-type", "")
         .startswith("application/json") and r.json() == {"status": "ok"},
         "%s: GET /health on the gateway's host: 200 JSON" % what, r)
    key, root = setup(g)
    r = g.post("/v1/systemone", evaluate_body(), key=key)
    t.ok(r.status == 200 and UUID7.match(r.json().get("x_decision_id", ""))
         is not None and r.json()["answers"]["sentiment"]["choice"] ==
         "negative", "%s: an evaluation with a real key: 200" % what, r)
    t.error_is(g.get("/nope"), 404, "not_found",
               "%s: an unknown path on the gateway's host: its JSON 404"
               % what)
    r = g.admin_request("GET", "/admin/v1/applications", key=root)
    t.ok(r.status == 200 and "client" in [a.get("name") for a in
                                         r.json().get("applications", [])],
         "%s: /admin/v1 on the internal listener: 200" % what, r)
    t.error_is(g.get("/admin/v1/applications", key=root), 404, "not_found",
               "%s: /admin/v1 on the public address: 404" % what)
    t.stop_clean(g, "%s: no sanitizer reports" % what)


def main():
    t = TAP()
    servers = []
    if os.path.exists(os.path.join(LIGHTTPD_ETC, "lighttpd.conf")):
        servers.append((DebianLighttpd, "lighttpd"))
    else:
        t.skip("lighttpd", "no Debian lighttpd configuration in "
               + LIGHTTPD_ETC)
    if os.path.exists(APACHE) and os.path.exists(
            os.path.join(APACHE_ETC, "apache2.conf")):
        servers.append((DebianApache, "Apache"))
    else:
        t.skip("Apache", "no Debian Apache configuration in " + APACHE_ETC)
    for cls, what in servers:
        g = cls()
        try:
            run(t, g, what)
        finally:
            g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
