"""test_templates: x_template on POST /v1/systemone over real lighttpd, with
a fake System One upstream as its own process, and the template commands
of evalgate-admin: the upstream receives the rendered text as the state,
version selection, escaping per version, sections over lists and objects,
dotted names and set delimiters end to end, the decision row, every
refusal (which changes nothing), and publish / render / list on the
console.  The gateway runs with SERVICE_MAX_STATE_CHARS=200."""

import json
import os
import time

from gateway import Gateway, TAP, Upstream

MAX_STATE = 200
QUESTIONS = {"topic": {"type": "choice",
                       "criteria": {"billing": None, "other": None}}}
NASTY = "Ann & Bo <ab@x> \"q\" 'y'"
ESCAPED = ("Ann &amp; Bo &lt;ab@x&gt; &quot;q&quot; &#39;y&#39;")

# name -> (body, variables, extra publish arguments), published in order.
TEMPLATES = [
    ("ticket",
     "Ticket from {{name}} ({{count}} earlier){{#vip}}, VIP{{/vip}}:\n"
     "{{#tags}}\n- {{.}}\n{{/tags}}\n{{^tags}}\nno tags\n{{/tags}}\n",
     {"name": "string", "count": "integer", "vip": "boolean",
      "tags": "array"}, []),
    ("ticket",
     "v2 {{name}} | {{{name}}} | {{& name}} | {{count}}",
     {"name": "string", "count": "integer", "vip": "boolean",
      "tags": "array"}, ["--escape", "html"]),
    ("kinds",
     "s={{s}} i={{i}} n={{n}} b={{b}} a={{#a}}[{{.}}]{{/a}} "
     "o={{o.who.name}}{{#o}}/{{who.name}}/{{#pets}}{{kind}};{{/pets}}{{/o}}"
     "{{^b}} (b is false){{/b}}",
     {"s": "string", "i": "integer", "n": "number", "b": "boolean",
      "a": "array", "o": "object"}, []),
    ("delims",
     "{{=<% %>=}}Hello <%who%>, {{who}} stays.\n<%={{ }}=%>Bye {{who}}.",
     {"who": "string"}, []),
    ("long", "{{#items}}{{.}}\n{{/items}}", {"items": "array"}, []),
    ("plain", "{{s}}", {"s": "string"}, []),
    ("costly", "{{#l}}{{#l}}{{#l}}{{/l}}{{/l}}{{/l}}", {"l": "array"}, []),
]

KINDS = {"s": "x", "i": 7, "n": 2.5, "b": True, "a": [1, "two"],
         "o": {"who": {"name": "Zoe"}, "pets": [{"kind": "cat"},
                                                {"kind": "dog"}]}}


def write(g, name, text):
    path = os.path.join(g.dir, name)
    with open(path, "w") as f:
        f.write(text if isinstance(text, str) else json.dumps(text))
    return path


def setup(g, up):
    a = g.admin
    a("backend", "add", "up", "--kind", "systemone", "--url", up.url)
    a("schema", "publish", "tq", "--questions",
      write(g, "q.json", QUESTIONS), "--backend", "up")
    a("grant", "writer", "tq")
    a("grant", "logger", "tq")
    versions = {}
    for i, (name, body, variables, extra) in enumerate(TEMPLATES):
        p = a("template", "publish", name,
              "--body", write(g, "body%d.txt" % i, body),
              "--variables", write(g, "vars%d.json" % i, variables), *extra)
        versions.setdefault(name, []).append(p.stdout.strip())
    return versions


def ok200(t, r, name):
    return t.ok(r.status == 200, name, r)


def post(g, key, xt, **extra):
    body = {"x_template": xt, "x_schema": {"id": "tq"}}
    body.update(extra)
    return g.post("/v1/systemone", body, key=key)


def sent_state(up):
    seen = up.requests()
    return seen[-1]["body"]["state"] if seen else None


def count_rows(g):
    n = g.sql("SELECT count(*) FROM decisions")[0][0]
    used = g.sql("SELECT coalesce(sum(used), 0) FROM quota_days")[0][0]
    versions = g.sql("SELECT count(*) FROM template_versions")[0][0]
    return n, used, versions


def test_publish_versions(t, g, versions):
    t.eq(versions, {"ticket": ["1", "2"], "kinds": ["1"], "delims": ["1"],
                    "long": ["1"], "plain": ["1"], "costly": ["1"]},
         "template publish prints each new version, bare")


def test_rendered_state(t, g, key, up):
    up.reset()
    values = {"name": NASTY, "count": 3, "vip": True, "tags": ["a", "b"]}
    r = post(g, key, {"id": "ticket", "version": 1, "variables": values})
    ok200(t, r, "x_template version 1 without state: 200")
    want = ("Ticket from %s (3 earlier), VIP:\n- a\n- b\n" % NASTY)
    t.eq(sent_state(up), want,
         "the upstream receives the rendered text (standalone lines "
         "dropped, escaping off by default)")
    b = r.json()
    t.eq(b.get("x_template"), {"id": "ticket", "version": 1},
         "x_template {id, version} in the response")
    t.eq(b.get("x_schema"), {"id": "tq", "version": 1}, "x_schema as usual")
    t.ok("billing" in json.dumps(b["answers"]), "answers as usual", b)
    p = g.admin("template", "render", "ticket", "--version", "1",
                "--values", json.dumps(values))
    t.eq((p.returncode, p.stdout), (0, want),
         "template render on the console prints the same state")
    return b["x_decision_id"]


def test_state_ignored(t, g, key, up):
    values = {"name": "Ann", "count": 0, "vip": False, "tags": []}
    want = "Ticket from Ann (0 earlier):\nno tags\n"
    for state in ("IGNORED STATE", 12345, {"k": "IGNORED"}, "x" * 50000):
        up.reset()
        r = post(g, key, {"id": "ticket", "version": 1,
                          "variables": values}, state=state)
        ok200(t, r, "state %.20r is ignored with x_template" % (state,))
        t.eq(sent_state(up), want, "the rendered text replaces state %.20r"
             % (state,))
    up.reset()
    r = g.post("/v1/systemone", {"x_template": {
        "id": "ticket", "version": 1, "variables": values},
        "questions": QUESTIONS}, key=key)
    ok200(t, r, "x_template with inline questions")
    t.eq(sent_state(up), want, "inline questions: the rendered state sent")


def test_versions_and_escaping(t, g, key, up):
    up.reset()
    values = {"name": NASTY, "count": 1, "vip": False, "tags": []}
    r = post(g, key, {"id": "ticket", "variables": values})
    ok200(t, r, "no version: 200")
    t.eq(r.json().get("x_template"), {"id": "ticket", "version": 2},
         "no version: the latest published (2) is used")
    t.eq(sent_state(up), "v2 %s | %s | %s | 1" % (ESCAPED, NASTY, NASTY),
         "--escape html: {{x}} escaped, {{{x}}} and {{& x}} not")
    up.reset()
    r = post(g, key, {"id": "ticket", "version": None, "variables": values})
    t.eq(r.json().get("x_template"), {"id": "ticket", "version": 2},
         "version null: the latest too")
    up.reset()
    r = post(g, key, {"id": "ticket", "version": 1, "variables": values})
    t.eq(r.json().get("x_template"), {"id": "ticket", "version": 1},
         "an explicit older version is used")
    t.ok(sent_state(up).startswith("Ticket from " + NASTY),
         "version 1 (no escaping) was rendered", sent_state(up))


def test_sections_and_delimiters(t, g, key, up):
    up.reset()
    r = post(g, key, {"id": "kinds", "variables": KINDS})
    ok200(t, r, "every declared type accepted")
    t.eq(sent_state(up), 's=x i=7 n=2.5 b=true a=[1][two] '
         'o=Zoe/Zoe/cat;dog;',
         "sections over a list and an object, dotted names")
    up.reset()
    v = dict(KINDS, b=False, a=[], o={}, n=3)
    r = post(g, key, {"id": "kinds", "variables": v})
    t.eq(sent_state(up), "s=x i=7 n=3 b=false a= o=// (b is false)",
         "empty list falsy, empty object truthy, inverted on false; an "
         "integer is a number")
    up.reset()
    r = post(g, key, {"id": "delims", "variables": {"who": "Eve"}})
    ok200(t, r, "set delimiters: 200")
    t.eq(sent_state(up), "Hello Eve, {{who}} stays.\nBye Eve.",
         "set delimiters change and change back")


def test_decision_row(t, g, key, first):
    row = g.sql(
        "SELECT t.slug, d.template_version FROM decisions d JOIN"
        " templates t ON t.id = d.template_id WHERE d.id = ?", (first,))
    t.eq(row, [("ticket", 1)], "the decision records template and version")
    per = g.sql(
        "SELECT t.slug, d.template_version, count(*) FROM decisions d"
        " JOIN templates t ON t.id = d.template_id"
        " GROUP BY t.slug, d.template_version ORDER BY t.slug,"
        " d.template_version")
    t.eq(per, [("delims", 1, 1), ("kinds", 1, 2), ("ticket", 1, 7),
               ("ticket", 2, 2)],
         "one decision per rendering, each with its template version")
    state = g.sql("SELECT state FROM decisions WHERE id = ?",
                  (first,))[0][0]
    t.eq(state, None, "no state kept without log_state")
    key2 = g.new_key("plainapp")
    g.admin("grant", "plainapp", "tq")
    r = g.post("/v1/systemone", {"state": "s", "questions": QUESTIONS},
               key=key2)
    row = g.sql("SELECT template_id, template_version FROM decisions"
                " WHERE id = ?", (r.json()["x_decision_id"],))[0]
    t.eq(row, (None, None), "no template: both columns null")
    t.ok("x_template" not in r.json(), "no x_template without a template")


def test_log_state(t, g, logger_key, up):
    up.reset()
    r = post(g, logger_key, {"id": "plain", "variables": {"s": "kept é"}})
    ok200(t, r, "log_state application: 200")
    state = g.sql("SELECT state FROM decisions WHERE id = ?",
                  (r.json()["x_decision_id"],))[0][0]
    t.eq(json.loads(state), "kept é",
         "with log_state the rendered text is the stored state")


def test_state_limit(t, g, key, up):
    up.reset()
    r = post(g, key, {"id": "plain", "variables": {"s": "x" * MAX_STATE}})
    ok200(t, r, "rendered state of exactly %d characters: 200" % MAX_STATE)
    r = post(g, key, {"id": "plain", "variables": {"s": "é" * MAX_STATE}})
    ok200(t, r, "%d two-byte characters: 200 (characters, not bytes)"
          % MAX_STATE)
    t.eq(sent_state(up), "é" * MAX_STATE, "sent whole")
    r = post(g, key, {"id": "plain", "variables": {"s": "a\u0000b"}})
    t.eq(sent_state(up), "a\u0000b", "a NUL in a variable is kept")


def refusal(t, g, key, up, xt, status, code, want, name, body=None):
    """One refused request: its error, its details, and nothing changed."""
    before = count_rows(g)
    up.reset()
    if body is None:
        body = {"x_template": xt, "x_schema": {"id": "tq"}}
    r = g.post("/v1/systemone", body, key=key)
    if t.error_is(r, status, code, "%d %s: %s" % (status, code, name)):
        details = r.json()["error"]["details"]
        got = {k: details.get(k, "(absent)") for k in want}
        t.eq(got, want, "%s: details" % name)
    t.eq((count_rows(g), up.requests()), (before, []),
         "%s: no decision, no quota, no upstream call" % name)
    return r


def test_refusals(t, g, key, up):
    good = {"name": "n", "count": 1, "vip": False, "tags": []}
    tre, ve = "template_render_error", "validation_error"
    refusal(t, g, key, up, {"id": "nope", "variables": {}}, 422, tre,
            {"field": "x_template.id", "variable": None},
            "unknown template")
    refusal(t, g, key, up, {"id": "ticket", "version": 9,
                            "variables": good}, 422, tre,
            {"field": "x_template.version", "variable": None},
            "unknown version")
    refusal(t, g, key, up, {"id": "ticket", "variables": {
        "name": "n", "vip": False, "tags": []}}, 422, tre,
            {"variable": "count", "field": "x_template.variables.count",
             "reason": "missing"}, "missing variable")
    wrong = [("s", 1, "expected string, got integer"),
             ("s", None, "expected string, got null"),
             ("i", 1.5, "expected integer, got number"),
             ("i", "1", "expected integer, got string"),
             ("n", "2.5", "expected number, got string"),
             ("b", 0, "expected boolean, got integer"),
             ("b", "true", "expected boolean, got string"),
             ("a", {"0": 1}, "expected array, got object"),
             ("a", "x,y", "expected array, got string"),
             ("o", [1], "expected object, got array"),
             ("o", None, "expected object, got null")]
    for var, value, reason in wrong:
        v = dict(KINDS)
        v[var] = value
        refusal(t, g, key, up, {"id": "kinds", "variables": v}, 422, tre,
                {"variable": var, "reason": reason,
                 "field": "x_template.variables." + var},
                "wrong type for %s: %r" % (var, value))
    refusal(t, g, key, up, {"id": "plain", "variables": {
        "s": "x" * (MAX_STATE + 1)}}, 422, tre,
            {"variable": "s", "reason": "rendered text over %d characters"
             % MAX_STATE}, "rendered state one over SERVICE_MAX_STATE_CHARS")
    refusal(t, g, key, up, {"id": "long", "variables": {
        "items": ["item %03d" % i for i in range(30)]}}, 422, tre,
            {"variable": "items", "field": "x_template.variables.items"},
            "a long list over SERVICE_MAX_STATE_CHARS")
    start = time.time()
    refusal(t, g, key, up, {"id": "costly", "variables": {
        "l": list(range(200))}}, 422, tre,
            {"variable": "l", "reason": "rendering takes over 4000000 steps"},
            "work over the step bound")
    took = time.time() - start
    t.ok(took < 10, "the step bound answers in %.2f s" % took)
    refusal(t, g, key, up, {"id": "ticket", "variables": [1]}, 422, tre,
            {"field": "x_template.variables", "variable": None},
            "variables not an object")
    refusal(t, g, key, up, {"id": "ticket", "variables": "name=n"}, 422, tre,
            {"field": "x_template.variables"}, "variables a string")
    refusal(t, g, key, up, {"id": "ticket"}, 422, tre,
            {"field": "x_template.variables"}, "variables missing")
    refusal(t, g, key, up, "ticket", 422, ve, {"field": "x_template"},
            "x_template not an object")
    refusal(t, g, key, up, ["ticket"], 422, ve, {"field": "x_template"},
            "x_template an array")
    refusal(t, g, key, up, {"variables": good}, 422, ve,
            {"field": "x_template.id"}, "id missing")
    refusal(t, g, key, up, {"id": 5, "variables": good}, 422, ve,
            {"field": "x_template.id"}, "id not a string")
    refusal(t, g, key, up, {"id": "ticket", "version": "1",
                            "variables": good}, 422, ve,
            {"field": "x_template.version"}, "version not an integer")
    refusal(t, g, key, up, {"id": "ticket", "version": 0,
                            "variables": good}, 422, ve,
            {"field": "x_template.version"}, "version 0")
    refusal(t, g, key, up, None, 422, ve, {"field": "state"},
            "neither x_template nor state",
            body={"x_schema": {"id": "tq"}})
    r = post(g, key, {"id": "ticket", "variables": good})
    t.eq(r.status, 200, "after every refusal, service goes on")


def test_console(t, g):
    a = g.admin
    listed = a("template", "list").stdout
    bad = [
        ("undeclared name", "Hi {{who}}", {"name": "string"}, [],
         "undeclared variable 'who'"),
        ("undeclared name in an inverted section",
         "{{^f}}{{who}}{{/f}}", {"f": "boolean"}, [],
         "undeclared variable 'who'"),
        ("unclosed section", "{{#tags}}x", {"tags": "array"}, [],
         "unclosed section 'tags'"),
        ("mismatched close", "{{#a}}{{/b}}", {"a": "array"}, [],
         "'b' closes section 'a'"),
        ("unclosed tag", "Hi {{name", {"name": "string"}, [],
         "unclosed tag"),
        ("a partial", "{{> other}}", {}, [], "partials are not supported"),
        ("'=' in a delimiter", "{{==| |==}}", {}, [], "'='"),
        ("bad declaration type", "{{a}}", {"a": "text"}, [],
         "variables: variable 'a'"),
        ("declaration not an object", "x", ["a"], [], "variables: "),
        ("another escape", "x", {}, ["--escape", "xml"], "escape: "),
    ]
    for i, (name, body, variables, extra, reason) in enumerate(bad):
        p = a("template", "publish", "bad",
              "--body", write(g, "bad%d.txt" % i, body),
              "--variables", write(g, "badvars%d.json" % i, variables),
              *extra, check=False)
        t.ok(p.returncode == 1 and p.stdout == "" and reason in p.stderr
             and len(p.stderr.strip().splitlines()) == 1,
             "template publish refuses %s: exit 1, one line" % name,
             (p.returncode, p.stdout, p.stderr))
    t.eq(a("template", "list").stdout, listed,
         "refused publishes add no version")

    p = a("template", "render", "kinds", "--values", json.dumps(KINDS),
          check=False)
    t.eq((p.returncode, p.stdout),
         (0, "s=x i=7 n=2.5 b=true a=[1][two] o=Zoe/Zoe/cat;dog;\n"),
         "template render prints the state")
    p = a("template", "render", "ticket", "--version", "2", "--values",
          json.dumps({"name": "<b>", "count": 2, "vip": True, "tags": []}),
          check=False)
    t.eq(p.stdout, "v2 &lt;b&gt; | <b> | <b> | 2\n",
         "template render --version 2 escapes as published")
    for name, args, reason in (
            ("a missing variable", ["kinds", "--values", "{}"],
             "variable 's': missing"),
            ("a wrong type", ["kinds", "--values",
                              json.dumps(dict(KINDS, i="7"))],
             "variable 'i': expected integer, got string"),
            ("a state over the limit", ["plain", "--values",
                                        json.dumps({"s": "y" * 201})],
             "over 200 characters"),
            ("an unknown template", ["nope", "--values", "{}"], "nope"),
            ("an unknown version", ["plain", "--version", "4", "--values",
                                    "{\"s\": \"x\"}"], "version 4")):
        p = a("template", "render", *args, check=False)
        t.ok(p.returncode == 1 and p.stdout == "" and reason in p.stderr,
             "template render refuses %s: exit 1, the error" % name,
             (p.returncode, p.stdout, p.stderr))

    lines = listed.splitlines()
    t.ok(lines[0].split()[:2] == ["id", "version"],
         "template list has a header", listed)
    rows = [ln.split()[:2] for ln in lines[1:]]
    t.eq(rows, [["ticket", "1"], ["ticket", "2"], ["kinds", "1"],
                ["delims", "1"], ["long", "1"], ["plain", "1"],
                ["costly", "1"]], "template list: every version")
    t.ok("html" in lines[2] and "html" not in lines[1],
         "template list shows the escape of each version", listed)


def main():
    t = TAP()
    up = Upstream()
    g = Gateway(workers=2, env={"SERVICE_MAX_STATE_CHARS": str(MAX_STATE)})
    try:
        key = g.new_key("writer")
        logger_key = g.new_key("logger", "--log-state")
        versions = setup(g, up)
        g.start()
        t.run([test_publish_versions], g, versions)
        first = None
        try:
            first = test_rendered_state(t, g, key, up)
        except Exception as e:
            t.ok(False, "the first rendering raised %r" % e)
        t.run([test_state_ignored, test_versions_and_escaping,
               test_sections_and_delimiters], g, key, up)
        if first:
            t.run([test_decision_row], g, key, first)
        t.run([test_log_state], g, logger_key, up)
        t.run([test_state_limit, test_refusals], g, key, up)
        t.run([test_console], g)
        t.ok(NASTY not in g.log() and "kept" not in g.log(),
             "rendered states are never logged")
        t.stop_clean(g)
    finally:
        g.cleanup()
        up.stop()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
