"""test_admin: the /admin/v1 routes over real lighttpd.

Hidden on the public listener (404 as if they did not exist, whatever
the key); 401 without a key and 403 for a non-admin key on the internal
listener; a whole setup done over HTTP alone followed by evaluations
with the new key on the public listener; application update, key
revocation and ungrant taking effect at once; every refusal with its
code, changing nothing; one audit row per mutation naming the admin
application; decisions paged by cursor and filtered by time; the export
as JSON lines across several internal pages, outcomes included."""

import json
import os
import re

from gateway import Gateway, TAP

KEY = re.compile(r"^svc_[a-z0-9]{8}_[A-Za-z0-9]{32}$")
ADMIN_APP = "root"

QUESTIONS = {
    "topic": {"type": "choice", "instructions": "What is it about?",
              "criteria": {"billing": "money invoice refund charge",
                           "shipping": "delivery parcel late courier"}},
    "urgent": {"type": "noul", "instructions": "Is it urgent?"},
}
TEMPLATE = {"body": "Customer {{name}} writes: {{text}}",
            "variables": {"name": "string", "text": "string"}}

DAY_A = 1578614400000           # 2020-01-10T00:00:00Z
DAY_B = DAY_A + 86400000        # 2020-01-11T00:00:00Z


class Admin:
    """The admin key on the internal listener, counting the mutations
    that succeeded so that the audit log can be checked against them."""

    def __init__(self, g, key):
        self.g = g
        self.key = key
        self.actions = []

    def __call__(self, method, path, body=None, key=None, **kw):
        return self.g.admin_request(method, path, body,
                                    key=key or self.key, **kw)

    def ok(self, t, method, path, body, status, action, name):
        r = self(method, path, body)
        if t.eq(r.status, status, name + " (%d)" % status) and action:
            self.actions.append(action)
        elif r.status != status:
            print("#   " + r.body[:300].decode("utf-8", "replace"))
        return r


def audit_rows(g, actor=ADMIN_APP):
    return g.sql("SELECT actor, action, target, details, at_ms"
                 " FROM audit_log WHERE actor = ? ORDER BY id", (actor,))


def count(g, sql):
    return g.sql(sql)[0][0]


def field_of(r):
    try:
        return r.json()["error"]["details"].get("field")
    except (ValueError, KeyError, AttributeError):
        return None


def set_clock(g, ms):
    with open(os.path.join(g.dir, "clock"), "w") as f:
        f.write("" if ms is None else str(ms))


EVERY_ROUTE = [
    ("POST", "/admin/v1/applications"),
    ("GET", "/admin/v1/applications"),
    ("PATCH", "/admin/v1/applications/shop"),
    ("POST", "/admin/v1/applications/shop/keys"),
    ("GET", "/admin/v1/applications/shop/keys"),
    ("DELETE", "/admin/v1/keys/abcdefgh"),
    ("POST", "/admin/v1/backends"),
    ("GET", "/admin/v1/backends"),
    ("PATCH", "/admin/v1/backends/lex"),
    ("POST", "/admin/v1/schemas/shopq/versions"),
    ("GET", "/admin/v1/schemas"),
    ("GET", "/admin/v1/schemas/shopq/versions"),
    ("GET", "/admin/v1/schemas/shopq/versions/1"),
    ("POST", "/admin/v1/grants"),
    ("DELETE", "/admin/v1/grants/shop/shopq"),
    ("DELETE", "/admin/v1/grants/shop/shopq/1"),
    ("POST", "/admin/v1/templates/greet/versions"),
    ("GET", "/admin/v1/templates"),
    ("POST", "/admin/v1/templates/greet/render"),
    ("GET", "/admin/v1/applications/shop/decisions"),
    ("GET", "/admin/v1/applications/shop/decisions/export"),
]


def test_hidden_on_public(t, g, adm, plain):
    before = count(g, "SELECT count(*) FROM applications")
    for method, path in EVERY_ROUTE + [("GET", "/admin/v1/nothing"),
                                       ("PUT", "/admin/v1/applications")]:
        for who, key in (("admin key", adm.key), ("no key", None),
                         ("plain key", plain)):
            body = {"name": "sneaky"} if method in ("POST", "PATCH") \
                else None
            r = g.request(method, path, body, key=key)
            t.error_is(r, 404, "not_found", "public %s %s with %s: 404" %
                       (method, path, who))
    t.eq(count(g, "SELECT count(*) FROM applications"), before,
         "nothing was created through the public listener")
    nope = g.get("/nothing/at/all").json()["error"]
    hidden = g.get("/admin/v1/applications", key=adm.key).json()["error"]
    t.eq((hidden["code"], hidden["details"]),
         (nope["code"], nope["details"]),
         "a hidden route answers like a route that does not exist")


def test_refused_keys(t, g, adm, plain):
    before = count(g, "SELECT count(*) FROM applications")
    for method, path in EVERY_ROUTE:
        body = {"name": "sneaky"} if method in ("POST", "PATCH") else None
        t.error_is(adm(method, path, body, key=plain), 403, "forbidden",
                   "internal %s %s with a non-admin key: 403" %
                   (method, path))
    r = g.admin_request("GET", "/admin/v1/applications")
    t.error_is(r, 401, "invalid_api_key", "internal listener, no key: 401")
    r = adm("GET", "/admin/v1/applications", key="svc_zzzzzzzz_" + "A" * 32)
    t.error_is(r, 401, "invalid_api_key",
               "internal listener, unknown key: 401")
    r = g.admin_request("POST", "/admin/v1/applications",
                        {"name": "sneaky"})
    t.error_is(r, 401, "invalid_api_key", "a mutation without a key: 401")
    t.eq(count(g, "SELECT count(*) FROM applications"), before,
         "refused keys created nothing")
    t.eq(count(g, "SELECT count(*) FROM audit_log WHERE actor != 'console'"),
         0, "refused keys wrote no audit row")
    r = adm("GET", "/admin/v1/applications")
    t.eq(r.status, 200, "the admin key lists applications")
    t.eq(r.headers.get("content-type"), "application/json", "as JSON")


def test_full_setup(t, g, adm, state):
    r = adm.ok(t, "POST", "/admin/v1/applications",
               {"name": "shop", "rate_per_minute": 1000000,
                "daily_quota": 5000000},
               201, "app.create", "create an application")
    t.eq(r.json().get("name"), "shop", "the answer names it")
    t.eq((r.json().get("log_state"), r.json().get("admin")), (False, False),
         "log_state and admin default to false")

    r = adm.ok(t, "POST", "/admin/v1/applications/shop/keys", None, 201,
               "key.issue", "issue a key (empty body)")
    key = r.json().get("key", "")
    t.ok(KEY.match(key) is not None, "the answer carries the full key", key)
    t.eq(r.json().get("prefix"), key[4:12], "and its prefix")
    t.eq(r.json().get("expires"), None, "no expiry unless asked")
    state["key"] = key
    secret = key.split("_")[2]
    r = adm("GET", "/admin/v1/applications/shop/keys")
    t.eq(r.status, 200, "list the application's keys")
    keys = r.json().get("keys", [])
    t.eq([k["prefix"] for k in keys], [key[4:12]], "the key is listed")
    t.ok(secret.encode() not in r.body and b"svc_" not in r.body and
         "hash" not in keys[0], "the listing shows no secret", r.body)
    t.ok(all(set(("prefix", "created_at", "expires", "revoked_at")) <=
             set(k) for k in keys), "each key: prefix, created_at, expires,"
         " revoked_at", keys)

    r = adm.ok(t, "POST", "/admin/v1/backends",
               {"name": "lex", "kind": "lexical",
                "description": "offline baseline",
                "release_date": "2026-11-01"},
               201, "backend.add", "add a lexical backend")
    t.eq((r.json().get("name"), r.json().get("enabled")), ("lex", True),
         "the backend is enabled")
    r = adm("GET", "/admin/v1/backends")
    t.ok(r.status == 200 and any(b["name"] == "lex" for b in
                                 r.json()["backends"]),
         "the backend is listed", r)

    r = adm.ok(t, "POST", "/admin/v1/schemas/shopq/versions",
               {"questions": QUESTIONS, "backend": "lex",
                "abstain_threshold": 0.2},
               201, "schema.publish", "publish a schema version")
    t.eq((r.json().get("id"), r.json().get("version")), ("shopq", 1),
         "the answer gives id and version")
    r = adm("GET", "/admin/v1/schemas/shopq/versions/1")
    t.eq(r.status, 200, "show the version")
    t.eq(r.json().get("questions"), QUESTIONS, "with its questions")
    t.eq((r.json().get("backend"), r.json().get("abstain_threshold")),
         ("lex", 0.2), "and its backend and threshold")
    r = adm("GET", "/admin/v1/schemas")
    t.ok(r.status == 200 and [(s["id"], s["version"]) for s in
                              r.json()["schemas"]] == [("shopq", 1)],
         "the schemas listing has it", r)
    r = adm("GET", "/admin/v1/schemas/shopq/versions")
    t.ok(r.status == 200 and len(r.json()["schemas"]) == 1,
         "the versions of one schema", r)

    adm.ok(t, "POST", "/admin/v1/grants",
           {"application": "shop", "schema": "shopq"},
           201, "grant", "grant the schema")

    r = adm.ok(t, "POST", "/admin/v1/templates/greet/versions", TEMPLATE,
               201, "template.publish", "publish a template version")
    t.eq((r.json().get("id"), r.json().get("version")), ("greet", 1),
         "the answer gives id and version")
    r = adm("GET", "/admin/v1/templates")
    t.ok(r.status == 200 and [v["id"] for v in r.json()["templates"]] ==
         ["greet"], "the templates listing has it", r)
    r = adm("POST", "/admin/v1/templates/greet/render",
            {"values": {"name": "Ann", "text": "where is my parcel"}})
    t.eq(r.status, 200, "render the template")
    t.eq(r.json().get("state"), "Customer Ann writes: where is my parcel",
         "the rendered state")

    # The new key, on the public listener.
    r = g.get("/v1/models", key=key)
    t.ok(r.status == 200 and {"name": "lex", "description":
                              "offline baseline", "release_date":
                              "2026-11-01"} in r.json()["models"],
         "the new key lists the new backend as a model", r)
    r = g.post("/v1/systemone", {"state": "my invoice charge is wrong",
                                 "questions": QUESTIONS}, key=key)
    t.eq(r.status, 200, "an evaluation with the new key succeeds")
    b = r.json() if r.status == 200 else {}
    t.eq((b.get("x_backend"), b.get("x_schema")),
         ("lex", {"id": "shopq", "version": 1}),
         "answered by the new backend under the new schema")
    t.eq(b.get("answers", {}).get("topic", {}).get("choice"), "billing",
         "the lexical backend reads the state")
    r = g.post("/v1/systemone", {
        "x_template": {"id": "greet", "variables":
                       {"name": "Bo", "text": "the courier is late"}},
        "questions": QUESTIONS}, key=key)
    t.eq(r.status, 200, "an evaluation with x_template succeeds")
    b = r.json() if r.status == 200 else {}
    t.eq(b.get("x_template"), {"id": "greet", "version": 1},
         "x_template names the new template")
    t.eq(b.get("answers", {}).get("topic", {}).get("choice"), "shipping",
         "the rendered state is what was evaluated")
    t.ok(secret not in g.log(), "the key's secret is never logged")


def test_updates(t, g, adm, state):
    r = adm.ok(t, "PATCH", "/admin/v1/applications/shop",
               {"log_state": True, "rate_per_minute": 7},
               200, "app.update", "update an application")
    t.eq((r.json().get("log_state"), r.json().get("rate_per_minute"),
          r.json().get("daily_quota")), (True, 7, 5000000),
         "the update answers the new values, others kept")
    r = adm.ok(t, "PATCH", "/admin/v1/applications/shop",
               {"rate_per_minute": None}, 200, "app.update",
               "null sets the default")
    t.eq((r.json().get("log_state"), r.json().get("rate_per_minute")),
         (True, None), "rate back to the default, log_state kept")
    t.eq(count(g, "SELECT rate_per_minute IS NULL FROM applications"
                  " WHERE name = 'shop'"), 1, "stored as the default")
    adm.ok(t, "PATCH", "/admin/v1/applications/shop",
           {"rate_per_minute": 1000000, "log_state": False}, 200,
           "app.update", "restore a large rate")
    r = adm.ok(t, "PATCH", "/admin/v1/applications/shop", None, 200,
               "app.update", "an empty PATCH changes nothing")
    t.eq((r.json().get("rate_per_minute"), r.json().get("log_state")),
         (1000000, False), "an empty PATCH answers the application")

    r = adm.ok(t, "PATCH", "/admin/v1/backends/lex", {"enabled": False},
               200, "backend.update", "disable a backend")
    t.eq(r.json().get("enabled"), False, "answered disabled")
    models = g.get("/v1/models", key=state["key"]).json()["models"]
    t.ok(all(m["name"] != "lex" for m in models),
         "a disabled backend is no model", models)
    r = adm.ok(t, "PATCH", "/admin/v1/backends/lex", {"enabled": True},
               200, "backend.update", "enable it again")
    t.eq(r.json().get("enabled"), True, "answered enabled")
    models = g.get("/v1/models", key=state["key"]).json()["models"]
    t.ok(any(m["name"] == "lex" for m in models), "a model again", models)
    r = adm.ok(t, "PATCH", "/admin/v1/backends/lex",
               {"description": "the baseline, renamed",
                "release_date": "2026-03-01"},
               200, "backend.update", "describe it anew")
    t.eq((r.json().get("description"), r.json().get("release_date"),
          r.json().get("enabled")),
         ("the baseline, renamed", "2026-03-01", True),
         "answered with the new fields, the rest kept")
    models = g.get("/v1/models", key=state["key"]).json()["models"]
    t.ok(any(m["name"] == "lex" and "renamed" in json.dumps(m)
             for m in models), "the workers list the new description",
         models)


def evaluate(g, key, text="my invoice is wrong"):
    return g.post("/v1/systemone", {"state": text, "questions": QUESTIONS},
                  key=key)


def test_revoke_and_ungrant(t, g, adm, state):
    r = adm.ok(t, "POST", "/admin/v1/applications/shop/keys",
               {"expires": "2099-01-01T00:00:00Z"}, 201, "key.issue",
               "issue a second key with an expiry")
    t.eq(r.json().get("expires"), "2099-01-01T00:00:00.000Z",
         "the expiry is answered")
    second = r.json()["key"]
    t.eq(evaluate(g, second).status, 200, "the second key works")
    prefix = second[4:12]
    r = adm.ok(t, "DELETE", "/admin/v1/keys/" + prefix, None, 200,
               "key.revoke", "revoke it")
    t.eq(r.json(), {"prefix": prefix, "revoked": True}, "the revoke answer")
    t.error_is(evaluate(g, second), 401, "invalid_api_key",
               "a revoked key is refused at once")
    t.eq(evaluate(g, state["key"]).status, 200, "the first key still works")
    keys = adm("GET", "/admin/v1/applications/shop/keys").json()["keys"]
    t.ok([k["prefix"] for k in keys if k["revoked_at"]] == [prefix],
         "the listing shows which key is revoked", keys)

    adm.ok(t, "DELETE", "/admin/v1/grants/shop/shopq", None, 200,
           "ungrant", "ungrant the schema")
    t.error_is(evaluate(g, state["key"]), 403, "schema_not_granted",
               "without the grant: 403 schema_not_granted")
    adm.ok(t, "POST", "/admin/v1/grants",
           {"application": "shop", "schema": "shopq", "version": 1}, 201,
           "grant", "grant version 1 only")
    t.eq(evaluate(g, state["key"]).status, 200, "granted again")
    t.error_is(adm("DELETE", "/admin/v1/grants/shop/shopq/2"), 404,
               "not_found", "ungrant of an unknown version: 404")
    for bad in ("0", "x", "1x", "-1", "%31%20", "1.0"):
        t.error_is(adm("DELETE", "/admin/v1/grants/shop/shopq/" + bad), 404,
                   "not_found", "version '%s' in a path is no route" % bad)
        t.error_is(adm("GET", "/admin/v1/schemas/shopq/versions/" + bad),
                   404, "not_found", "schema version '%s': 404" % bad)
    adm.ok(t, "DELETE", "/admin/v1/grants/shop/shopq/1", None, 200,
           "ungrant", "ungrant version 1")
    t.error_is(evaluate(g, state["key"]), 403, "schema_not_granted",
               "version grant gone: 403 schema_not_granted")
    adm.ok(t, "POST", "/admin/v1/grants",
           {"application": "shop", "schema": "shopq"}, 201, "grant",
           "grant every version again")


def test_refusals(t, g, adm):
    apps = count(g, "SELECT count(*) FROM applications")
    audits = len(audit_rows(g))
    cases = [
        # method, path, body, status, code, field
        ("PATCH", "/admin/v1/applications/nope", {}, 404, "not_found",
         None),
        ("POST", "/admin/v1/applications/nope/keys", {}, 404, "not_found",
         None),
        ("GET", "/admin/v1/applications/nope/keys", None, 404, "not_found",
         None),
        ("GET", "/admin/v1/applications/nope/decisions", None, 404,
         "not_found", None),
        ("GET", "/admin/v1/applications/nope/decisions/export", None, 404,
         "not_found", None),
        ("DELETE", "/admin/v1/keys/zzzzzzzz", None, 404, "not_found", None),
        ("PATCH", "/admin/v1/backends/nope", {"enabled": True}, 404,
         "not_found", None),
        ("GET", "/admin/v1/schemas/nope/versions/1", None, 404, "not_found",
         None),
        ("GET", "/admin/v1/schemas/shopq/versions/99", None, 404,
         "not_found", None),
        ("DELETE", "/admin/v1/grants/nope/shopq", None, 404, "not_found",
         None),
        ("DELETE", "/admin/v1/grants/shop/nope", None, 404, "not_found",
         None),
        ("POST", "/admin/v1/grants", {"application": "nope",
                                      "schema": "shopq"}, 404,
         "not_found", None),
        ("POST", "/admin/v1/applications", {"name": "shop"}, 409,
         "conflict", "name"),
        ("POST", "/admin/v1/backends", {"name": "lex", "kind": "lexical"},
         409, "conflict", "name"),
        ("POST", "/admin/v1/applications", {}, 422, "validation_error",
         "name"),
        ("POST", "/admin/v1/applications", {"name": "a b"}, 422,
         "validation_error", "name"),
        ("POST", "/admin/v1/applications", {"name": "x1",
                                            "rate_per_minute": "fast"},
         422, "validation_error", "rate_per_minute"),
        ("POST", "/admin/v1/applications", {"name": "x1", "admin": "yes"},
         422, "validation_error", "admin"),
        ("PATCH", "/admin/v1/applications/shop", {"daily_quota": 0}, 422,
         "validation_error", "daily_quota"),
        ("PATCH", "/admin/v1/applications/shop", {"name": "other"}, 422,
         "validation_error", "name"),
        ("POST", "/admin/v1/applications/shop/keys", {"expires": "soon"},
         422, "validation_error", "expires"),
        ("POST", "/admin/v1/backends", {"name": "b2", "kind": "weird"},
         422, "validation_error", "kind"),
        ("POST", "/admin/v1/backends", {"name": "b2", "kind": "systemone"},
         422, "validation_error", "urls"),
        ("PATCH", "/admin/v1/backends/lex", {}, 422, "validation_error",
         "enabled"),
        ("PATCH", "/admin/v1/backends/lex", {"enabled": "no"}, 422,
         "validation_error", "enabled"),
        ("PATCH", "/admin/v1/backends/lex", {"kind": "systemone"}, 422,
         "validation_error", "kind"),
        ("PATCH", "/admin/v1/backends/lex", {"urls": ["http://a.example"]},
         422, "validation_error", "urls"),
        ("PATCH", "/admin/v1/backends/lex", {"timeout_ms": 5}, 422,
         "validation_error", "timeout_ms"),
        ("POST", "/admin/v1/schemas/shopq/versions",
         {"questions": QUESTIONS}, 422, "validation_error", "backend"),
        ("POST", "/admin/v1/schemas/shopq/versions",
         {"questions": QUESTIONS, "backend": "nope"}, 422,
         "validation_error", "backend"),
        ("POST", "/admin/v1/schemas/Bad%20Id/versions",
         {"questions": QUESTIONS, "backend": "lex"}, 422,
         "validation_error", "id"),
        ("POST", "/admin/v1/schemas/shopq/versions",
         {"questions": QUESTIONS, "backend": "lex", "temperature": 0}, 422,
         "validation_error", "temperature"),
        ("POST", "/admin/v1/grants", {"application": "shop"}, 422,
         "validation_error", "schema"),
        ("POST", "/admin/v1/templates/greet/versions",
         {"body": "{{who}}", "variables": {}}, 422, None, None),
        ("POST", "/admin/v1/templates/greet/render", {"values": {}}, 422,
         "template_render_error", None),
        ("POST", "/admin/v1/templates/greet/render", {}, 422,
         "validation_error", "values"),
        ("POST", "/admin/v1/applications", "{not json", 422,
         "validation_error", "body"),
        ("POST", "/admin/v1/applications", "[1, 2]", 422,
         "validation_error", "body"),
        ("POST", "/admin/v1/applications", '{"name": "x1"} trailing', 422,
         "validation_error", "body"),
        ("PATCH", "/admin/v1/applications/shop", "null", 422,
         "validation_error", "body"),
    ]
    for method, path, body, status, code, field in cases:
        headers = {"Content-Type": "application/json"} \
            if isinstance(body, str) else None
        r = adm(method, path, body, headers=headers)
        name = "%s %s %s" % (method, path, body if isinstance(body, str)
                             else json.dumps(body))
        if code is None:
            t.ok(r.status == status and r.json()["error"]["code"] in
                 ("validation_error", "template_render_error"),
                 name + ": %d" % status, r)
        else:
            t.error_is(r, status, code, name + ": %d %s" % (status, code))
        if field is not None:
            t.eq(field_of(r), field, name + ": names the field " + field)
    t.error_is(adm("PUT", "/admin/v1/applications"), 405,
               "method_not_allowed", "PUT on a collection: 405")
    t.error_is(adm("DELETE", "/admin/v1/applications/shop"), 405,
               "method_not_allowed", "DELETE of an application: 405")
    t.error_is(adm("GET", "/admin/v1/nothing"), 404, "not_found",
               "an unknown admin path on the internal listener: 404")
    t.eq(count(g, "SELECT count(*) FROM applications"), apps,
         "refusals created nothing")
    t.eq(len(audit_rows(g)), audits, "refusals wrote no audit row")


def test_audit(t, g, adm, state):
    rows = audit_rows(g)
    t.eq([r[1] for r in rows], adm.actions,
         "one audit row per mutation, in order, with the admin "
         "application as actor")
    by_action = {}
    for actor, action, target, details, at_ms in rows:
        by_action.setdefault(action, []).append((target, details, at_ms))
    t.eq(by_action.get("app.create", [(None,)])[0][0], "shop",
         "the audit row names its target")
    t.ok(all(isinstance(r[4], int) and r[4] > 0 for r in rows),
         "each row has its time")
    secret = state["key"].split("_")[2]
    t.ok(all(secret not in (r[3] or "") for r in rows),
         "no audit row holds a key")
    issue = json.loads(by_action["key.issue"][0][1])
    t.eq(issue.get("application"), "shop",
         "the path's fields are in the audited input")


def decisions_page(adm, app, query):
    r = adm("GET", "/admin/v1/applications/%s/decisions%s" % (app, query))
    return r, (r.json() if r.status == 200 else {})


def test_pagination(t, g, adm, state):
    adm.ok(t, "POST", "/admin/v1/applications",
           {"name": "pager", "rate_per_minute": 1000000}, 201, "app.create",
           "create the paged application")
    key = adm.ok(t, "POST", "/admin/v1/applications/pager/keys", {}, 201,
                 "key.issue", "its key").json()["key"]
    adm.ok(t, "POST", "/admin/v1/grants",
           {"application": "pager", "schema": "shopq"}, 201, "grant",
           "grant it the schema")
    made = []
    try:
        # 10 decisions on one day and 15 on the next, each batch at one
        # millisecond: ties are cut by id.
        for i in range(25):
            set_clock(g, DAY_A + 3600000 if i < 10 else DAY_B + 7200000)
            r = evaluate(g, key, "parcel %d is late" % i)
            if r.status == 200:
                made.append(r.json()["x_decision_id"])
    finally:
        set_clock(g, None)
    t.eq(len(made), 25, "25 decisions made")
    state["pager"] = (key, made)

    pages, cursor, seen = [], None, []
    for _ in range(5):
        r, b = decisions_page(adm, "pager", "?limit=10" +
                              ("&cursor=" + cursor if cursor else ""))
        if r.status != 200:
            t.ok(False, "a page answers 200", r)
            break
        pages.append(len(b["decisions"]))
        seen += [d["id"] for d in b["decisions"]]
        cursor = b["next_cursor"]
        if cursor is None:
            break
        t.ok(isinstance(cursor, str) and re.match(r"^[A-Za-z0-9_-]+$",
                                                  cursor),
             "the cursor is an opaque URL-safe string", cursor)
    t.eq(pages, [10, 10, 5], "pages of 10, 10 and 5")
    t.eq(cursor, None, "next_cursor is null on the last page")
    t.eq(len(seen), len(set(seen)), "no decision twice")
    t.eq(set(seen), set(made), "no decision missing")
    t.eq(seen[:10], sorted(made[:10]), "oldest first, ties in id order")
    t.eq(seen[10:], sorted(made[10:]), "then the next day's, in id order")

    r, b = decisions_page(adm, "pager", "")
    t.eq((len(b.get("decisions", [])), b.get("next_cursor", "x")),
         (25, None), "the default limit (100) takes all 25, no cursor")
    d = b["decisions"][0]
    t.ok({"id", "created_at", "x_backend", "x_schema", "answers",
          "outcomes"} <= set(d), "a listed decision has the fields of "
         "GET /v1/decisions/{id}", d)
    t.eq(d["created_at"], "2020-01-10T01:00:00.000Z",
         "created_at as recorded")
    t.eq(d, g.get("/v1/decisions/" + d["id"], key=key).json(),
         "a listed decision is exactly what GET /v1/decisions/{id} gives")

    for query, want, name in (
            ("?since=2020-01-11", made[10:], "since a date"),
            ("?until=2020-01-11", made[:10], "until a date (exclusive)"),
            ("?since=2020-01-10T01:00:00.001Z&until=2020-01-12",
             made[10:], "since an RFC 3339 time with milliseconds"),
            ("?since=2020-01-10T02:00:00%2B01:00&until=2020-01-10T01:00:01Z",
             made[:10], "an offset time, %2B-encoded"),
            ("?since=2020-01-12", [], "nothing after the last")):
        r, b = decisions_page(adm, "pager", query)
        t.eq(sorted(d["id"] for d in b.get("decisions", [])), sorted(want),
             "filter: " + name)
    # Exactly full last page: 15 in 3 pages of 5, no 4th empty page.
    pages, cursor = [], None
    for _ in range(5):
        r, b = decisions_page(adm, "pager", "?since=2020-01-11&limit=5" +
                              ("&cursor=" + cursor if cursor else ""))
        pages.append(len(b.get("decisions", [])))
        cursor = b.get("next_cursor")
        if not cursor:
            break
    t.eq(pages, [5, 5, 5], "a range that fills its last page exactly ends "
         "there")
    # Refusals name the parameter.
    for query, field in (("?limit=0", "limit"), ("?limit=1001", "limit"),
                         ("?limit=ten", "limit"), ("?limit=-1", "limit"),
                         ("?limit=", "limit"), ("?limit=5.0", "limit"),
                         ("?cursor=garbage!", "cursor"),
                         ("?cursor=bm9wZQ", "cursor"),
                         ("?since=yesterday", "since"),
                         ("?until=2020-13-01", "until"),
                         ("?since=2020-01-11&until=2020-01-10", "until")):
        r, _ = decisions_page(adm, "pager", query)
        t.error_is(r, 422, "validation_error", "decisions%s: 422" % query)
        t.eq(field_of(r), field, "decisions%s names %s" % (query, field))


def export(adm, app, query=""):
    return adm("GET", "/admin/v1/applications/%s/decisions/export%s" %
               (app, query))


def lines_of(r):
    text = r.body.decode("utf-8")
    return [json.loads(line) for line in text.split("\n")[:-1]], text


def test_export(t, g, adm, state):
    key, made = state["pager"]
    r = g.post("/v1/decisions/%s/outcome" % made[3],
               {"answers": {"topic": "shipping", "urgent": True},
                "source": "support desk"}, key=key)
    t.ok(r.status in (200, 201), "an outcome is recorded", r)

    r = export(adm, "pager")
    t.eq(r.status, 200, "export answers 200")
    t.eq(r.headers.get("content-type"), "application/x-ndjson",
         "as JSON lines")
    rid = r.headers.get("x-service-request-id")
    t.ok(rid and r.headers.get("x-typesafe-request-id") == rid,
         "the streamed answer carries the request id headers", r.headers)
    t.ok(r.body.endswith(b"\n"), "every line ends with a newline")
    try:
        rows, text = lines_of(r)
    except ValueError as e:
        t.ok(False, "every line is one JSON value", "%r: %r" % (e, r.body))
        return
    t.ok(all(isinstance(x, dict) and "\n" not in json.dumps(x)
             for x in rows), "every line is one JSON object")
    t.eq(len(rows), 25, "one line per decision")
    t.eq([x["id"] for x in rows], sorted(made[:10]) + sorted(made[10:]),
         "in the listing's order")
    with3 = [x for x in rows if x["id"] == made[3]][0]
    out = with3.get("outcomes", {})
    t.eq({k: (v.get("value"), v.get("source")) for k, v in out.items()},
         {"topic": ("shipping", "support desk"), "urgent": (True,
                                                           "support desk")},
         "the decision's outcomes are in its line")
    t.ok(all(set(x["answers"]) == {"topic", "urgent"} for x in rows),
         "every line carries its answers")
    t.ok(all(x["outcomes"] == {} for x in rows if x["id"] != made[3]),
         "the others have no outcomes")
    r = export(adm, "pager", "?since=2020-01-11")
    t.eq(len(lines_of(r)[0]) if r.status == 200 else -1, 15,
         "export honours since")
    r = export(adm, "pager", "?until=2020-01-11")
    t.eq(len(lines_of(r)[0]) if r.status == 200 else -1, 10,
         "export honours until")
    r = export(adm, "pager", "?since=2021-01-01")
    t.eq((r.status, r.body), (200, b""), "an empty range is an empty body")
    r = export(adm, "pager", "?since=nope")
    t.error_is(r, 422, "validation_error", "a bad since: 422")
    t.eq(field_of(r), "since", "naming since")

    # More decisions than one internal page (100) of the export.
    adm.ok(t, "POST", "/admin/v1/applications",
           {"name": "bulk", "rate_per_minute": 1000000}, 201, "app.create",
           "create a bulk application")
    bkey = adm.ok(t, "POST", "/admin/v1/applications/bulk/keys", {}, 201,
                  "key.issue", "its key").json()["key"]
    adm.ok(t, "POST", "/admin/v1/grants",
           {"application": "bulk", "schema": "shopq"}, 201, "grant",
           "grant it the schema")
    bulk = []
    try:
        set_clock(g, DAY_A)
        for i in range(230):
            if i % 50 == 0:
                set_clock(g, DAY_A + i)
            r = evaluate(g, bkey, "invoice %d" % i)
            if r.status == 200:
                bulk.append(r.json()["x_decision_id"])
    finally:
        set_clock(g, None)
    t.eq(len(bulk), 230, "230 decisions made")
    r = export(adm, "bulk")
    rows, _ = lines_of(r) if r.status == 200 else ([], "")
    t.eq(len(rows), 230, "the export has all 230 across its pages")
    t.eq(len({x["id"] for x in rows}), 230, "none twice")
    t.eq({x["id"] for x in rows}, set(bulk), "none missing, none foreign")
    t.ok(not (set(made) & {x["id"] for x in rows}),
         "another application's decisions are not exported")
    seen, cursor = [], ""
    while True:
        rr, b = decisions_page(adm, "bulk", "?limit=1000" + cursor)
        seen += [d["id"] for d in b.get("decisions", [])]
        if not b.get("next_cursor"):
            break
        cursor = "&cursor=" + b["next_cursor"]
    t.eq(seen, [x["id"] for x in rows], "listing and export agree")


def main():
    t = TAP()
    g = Gateway(workers=2)
    g.env["SERVICE_TEST_CLOCK_FILE"] = os.path.join(g.dir, "clock")
    try:
        adm = Admin(g, g.new_key(ADMIN_APP, "--admin"))
        plain = g.new_key("plain")
        g.start()
        state = {}
        t.run([test_hidden_on_public, test_refused_keys], g, adm, plain)
        t.run([test_full_setup], g, adm, state)
        if "key" in state:
            t.run([test_updates, test_revoke_and_ungrant], g, adm, state)
        t.run([test_refusals], g, adm)
        if "key" in state:
            t.run([test_pagination], g, adm, state)
        if "pager" in state:
            t.run([test_export], g, adm, state)
        t.run([test_audit], g, adm, state)
        t.stop_clean(g)
    finally:
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
