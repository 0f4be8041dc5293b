"""test_hostile: hostile clients get a 4xx in the spec's format (or a 200
when what they sent is valid), never a 5xx, and crash or leak nothing.

Over real lighttpd with two workers and the lexical backend, in every
field a request has (state, model, questions, a question, its type,
instructions, criteria, an option description, a level label, x_schema,
x_template and its variables, an outcome's answers and source):

- bodies over the limit: by Content-Length and chunked (lighttpd buffers
  a chunked body and hands the worker its CONTENT_LENGTH: the worker's
  own 413 is what the client gets), and past lighttpd's own limit;
- truncated bodies (a Content-Length larger than what is sent, then the
  connection closed): nothing is recorded and nothing blocks;
- invalid UTF-8 (overlong forms, surrogates, truncated sequences, bytes
  that never occur) in strings and keys;
- NUL: a raw NUL byte is refused.  An escaped \\u0000 is decided per
  field: in free text (the state, instructions, descriptions, template
  values) it is kept and round-trips; in every name the gateway matches
  or echoes (a key of any object, so question names, option keys, state
  keys and outcome answers; model; x_schema.id; x_template.id; a
  question's type; an outcome's source) it is a 422, because json-c
  cuts keys at a NUL and a name cut short would silently be another
  name;
- nesting deeper than 64 in each field: 422 naming the body; deep but
  within the bound in free text: accepted;
- duplicate keys: the last one wins, as in the upstream's own parser;
- numbers out of range: 1e999, NaN, Infinity and integers beyond 64 bits
  are a 422 anywhere (json-c would turn them into inf or a saturated
  integer, and write back text that is not JSON or not the number sent);
  -0 is a 0; huge integers in version and limit fields are refused or
  not found, never a 5xx;
- huge strings (900 kB) in every field, and 10,000 keys in the places
  that take maps;
- header injection: CR/LF in values that are echoed (model, source, a
  path segment, a query) never produce a header; no response header is
  built from client input;
- a slowloris body: other requests are answered meanwhile.

Afterwards the two worker processes are the ones that started (nothing
crashed) and no sanitizer reported anything.
"""

import copy
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import DEMO_QUESTIONS, chunked, head, raw  # noqa: E402
from gateway import Gateway, TAP  # noqa: E402

STATE = "The checkout page is broken, I want a refund now."
HUGE = "h" * 900000
DEEP = "[" * 100 + "]" * 100          # nesting past 64 wherever it is
with open(DEMO_QUESTIONS) as f:
    DEMO = json.load(f)
BODIES = {
    "eval": {"state": STATE, "x_schema": {"id": "demo"}},
    "inline": {"state": STATE, "questions": DEMO},
    "tmpl": {"x_template": {"id": "greet", "variables": {"name": "x"}},
             "x_schema": {"id": "demo"}},
    "outcome": {"answers": {"sentiment": "negative", "urgency": 3},
                "source": "crm"},
}
# Where each field lives: (body, path).
FIELDS = {
    "state": ("eval", ["state"]),
    "model": ("eval", ["model"]),
    "x_schema": ("eval", ["x_schema"]),
    "x_schema.id": ("eval", ["x_schema", "id"]),
    "x_schema.version": ("eval", ["x_schema", "version"]),
    "questions": ("inline", ["questions"]),
    "a question": ("inline", ["questions", "sentiment"]),
    "type": ("inline", ["questions", "sentiment", "type"]),
    "instructions": ("inline", ["questions", "sentiment", "instructions"]),
    "criteria": ("inline", ["questions", "sentiment", "criteria"]),
    "option description": ("inline", ["questions", "sentiment", "criteria",
                                      "positive"]),
    "level label": ("inline", ["questions", "urgency", "criteria", 0]),
    "x_template": ("tmpl", ["x_template"]),
    "x_template.id": ("tmpl", ["x_template", "id"]),
    "x_template.version": ("tmpl", ["x_template", "version"]),
    "x_template.variables": ("tmpl", ["x_template", "variables"]),
    "a variable": ("tmpl", ["x_template", "variables", "name"]),
    "outcome answers": ("outcome", ["answers"]),
    "an outcome value": ("outcome", ["answers", "sentiment"]),
    "source": ("outcome", ["source"]),
}
# Where a key can be put: (body, path of the object).
KEYS = {
    "a question name": ("inline", ["questions"]),
    "an option key": ("inline", ["questions", "sentiment", "criteria"]),
    "a state key": ("eval", ["state"]),
    "an outcome answer": ("outcome", ["answers"]),
    "a variable name": ("tmpl", ["x_template", "variables"]),
    "a top-level key": ("eval", []),
}
MARK = "@@RAW@@"

# Expected answers: 200, or (status, code, field) of the error.
V = "validation_error"
BAD_BODY = (422, V, "body")


def dotted(path):
    """A path as error.details.field names it: a.b[0].c"""
    out = ""
    for p in path:
        out += "[%d]" % p if isinstance(p, int) else ("." if out else "") + p
    return out


def lossy(field, table=None, key=None):
    """The refusal of what json-c would not keep as sent: a 422 naming
    where it is (a field of FIELDS, or a key put in an object of KEYS)."""
    if key is None:
        return (422, V, dotted(FIELDS[field][1]))
    path = dotted(KEYS[field][1])
    return (422, V, path + "." + key if path else key)


def place(name, value, table=FIELDS):
    """(kind, JSON text) with value at the field's place; value is raw
    JSON text when it is a str starting with '@', else a Python value."""
    kind, path = table[name]
    obj = copy.deepcopy(BODIES[kind])
    if kind == "eval" and name == "state":
        obj = {"x_schema": {"id": "demo"}}
    target = obj
    for p in path[:-1]:
        target = target[p]
    if kind == "eval" and name == "state":
        target = obj
    rawtext = isinstance(value, str) and value.startswith("@")
    target[path[-1]] = MARK if rawtext else value
    text = json.dumps(obj)
    if rawtext:
        text = text.replace('"%s"' % MARK, value[1:])
    return kind, text


def place_key(name, keytext, value='"x"'):
    """(kind, JSON text) with one more member "keytext": value in the
    object; keytext is raw JSON string content."""
    kind, path = KEYS[name]
    obj = copy.deepcopy(BODIES[kind])
    target = obj
    for p in path:
        if kind == "eval" and p == "state":
            obj["state"] = target = {"text": STATE}
        else:
            target = target[p]
    target[MARK] = MARK
    text = json.dumps(obj).replace('"%s": "%s"' % (MARK, MARK),
                                   '"%s": %s' % (keytext, value))
    return kind, text


class Client:
    """Sends bodies of each kind and keeps every 5xx seen."""

    def __init__(self, g, key):
        self.g, self.key = g, key
        self.fivexx = []
        self.decision = None

    def fresh(self):
        """A new decision for the next outcome: no earlier outcome can
        make a valid one a conflict."""
        r = self.g.post("/v1/systemone", BODIES["eval"], key=self.key)
        self.decision = r.json()["x_decision_id"]

    def send(self, kind, body, headers=None):
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        if isinstance(body, str):
            body = body.encode("utf-8", "surrogatepass")
        if kind == "outcome":
            self.fresh()
            path = "/v1/decisions/%s/outcome" % self.decision
        else:
            path = "/v1/systemone"
        r = self.g.post(path, body, key=self.key, headers=h)
        if r.status >= 500:
            self.fivexx.append((kind, r.status, r.body[:200]))
        return r


def expect(t, r, want, name):
    if want == 200:
        return t.ok(r.status == 200, "%s: 200" % name, r)
    status, code, field = want
    if t.error_is(r, status, code, "%s: %d %s" % (name, status, code)) and \
            field is not None:
        got = r.json()["error"]["details"].get("field")
        t.ok(got == field, "%s: names %s" % (name, field),
             "got %r" % (got[:200] if isinstance(got, str) else got))


def run_table(t, c, cases):
    for name, kind, text, want in cases:
        expect(t, c.send(kind, text), want, name)


def test_nesting(t, c):
    cases = []
    for field in FIELDS:
        kind, text = place(field, "@" + DEEP)
        cases.append(("nesting 100 deep in %s" % field, kind, text,
                      BAD_BODY))
    within = "[" * 55 + '"deep"' + "]" * 55
    for field in ("instructions", "option description", "state"):
        kind, text = place(field, "@" + within)
        cases.append(("nesting 55 deep in %s" % field, kind, text, 200))
    run_table(t, c, cases)


def test_huge_strings(t, c):
    want = {
        "state": (422, V, "state"), "model": 200,
        "x_schema": (422, V, "x_schema"),
        "x_schema.id": (422, V, "x_schema.id"),
        "x_schema.version": (422, V, "x_schema.version"),
        "questions": (422, V, "questions"),
        "a question": (422, V, "questions.sentiment"),
        "type": (422, V, "questions.sentiment.type"),
        "instructions": 200,
        "criteria": (422, V, "questions.sentiment.criteria"),
        "option description": 200,
        "level label": (422, "invalid_schema", "questions"),
        "x_template": (422, V, "x_template"),
        "x_template.id": (422, V, "x_template.id"),
        "x_template.version": (422, V, "x_template.version"),
        "x_template.variables": (422, "template_render_error",
                                 "x_template.variables"),
        "a variable": (422, "template_render_error", None),
        "outcome answers": (422, V, "answers"),
        "an outcome value": (422, V, "answers.sentiment"),
        "source": (422, V, "source"),
    }
    for field in FIELDS:
        kind, text = place(field, HUGE)
        start = time.time()
        r = c.send(kind, text)
        took = time.time() - start
        expect(t, r, want[field], "a 900 kB string in %s" % field)
        t.ok(took < 10, "a 900 kB string in %s: answered in %.2f s" %
             (field, took))
        if field == "model" and r.status == 200:
            t.ok(r.json()["model"] == HUGE, "the huge model is echoed "
                 "unchanged")
    for name, want in (("a question name", (422, V, None)),
                       ("an option key", (422, "invalid_schema",
                                          "questions")),
                       ("a state key", (422, V, "state")),
                       ("an outcome answer", (422, V, None)),
                       ("a variable name", 200),
                       ("a top-level key", 200)):
        kind, text = place_key(name, HUGE)
        expect(t, c.send(kind, text), want, "a 900 kB key: %s" % name)


def test_many_keys(t, c):
    many = {"k%05d" % i: None for i in range(10000)}
    cases = [
        ("10,000 option keys", "inline", ["questions", "sentiment",
                                          "criteria"], many,
         (422, V, "questions.sentiment.criteria")),
        ("10,000 questions", "inline", ["questions"],
         {"q%05d" % i: {"type": "noul"} for i in range(10000)},
         (422, V, "questions")),
        ("10,000 keys in instructions", "inline",
         ["questions", "sentiment", "instructions"], many, 200),
        ("10,000 keys in the state", "eval", ["state"], many,
         (422, V, "state")),
        ("10,000 outcome answers", "outcome", ["answers"],
         {"k%05d" % i: True for i in range(10000)}, (422, V, None)),
        ("10,000 variables", "tmpl", ["x_template", "variables"],
         dict(many, name="x"), 200),
    ]
    for name, kind, path, value, want in cases:
        obj = copy.deepcopy(BODIES[kind])
        target = obj
        for p in path[:-1]:
            target = target[p]
        target[path[-1]] = value
        start = time.time()
        r = c.send(kind, json.dumps(obj))
        expect(t, r, want, name)
        t.ok(time.time() - start < 10, "%s: answered in %.2f s" %
             (name, time.time() - start))


def test_utf8(t, c):
    bad = [("an overlong /", b"\xc0\xaf"), ("a surrogate", b"\xed\xa0\x80"),
           ("a cut sequence", b"\xe2\x82"), ("0xff", b"\xff"),
           ("a 5-byte form", b"\xf8\x88\x80\x80\x80"),
           ("above U+10FFFF", b"\xf4\x90\x80\x80"),
           ("a lone continuation byte", b"\x80")]
    for what, seq in bad:
        for field in ("state", "model", "instructions", "source",
                      "a variable"):
            kind, text = place(field, "x")
            body = text.encode().replace(b'"x"', b'"a' + seq + b'b"', 1)
            expect(t, c.send(kind, body), BAD_BODY,
                   "%s in %s" % (what, field))
        for name in ("a question name", "an outcome answer"):
            kind, text = place_key(name, "KEY")
            body = text.encode().replace(b'"KEY"', b'"k' + seq + b'"', 1)
            expect(t, c.send(kind, body), BAD_BODY,
                   "%s in %s" % (what, name))
    # Escaped lone surrogates are JSON text json-c would not keep as sent
    # (it turns them into U+FFFD): refused like a key cut at \u0000.
    kind, text = place("state", "@" + '"\\ud800 and \\udfff"')
    r = c.send(kind, text)
    expect(t, r, (422, V, "state"), "escaped lone surrogates in the state")
    kind, text = place("state", "@" + '"\\ud83d\\ude00"')
    expect(t, c.send(kind, text), 200, "an escaped surrogate pair: 200")


def test_nul(t, c, g):
    t.error_is(c.send("eval", b'{"state": "a\x00b", "x_schema": '
                              b'{"id": "demo"}}'), 422, V,
               "a raw NUL byte in a string: 422")
    t.error_is(c.send("eval", b'{"state": "ab", "x_schema": '
                              b'{"id": "demo"}}\x00'), 422, V,
               "a raw NUL byte after the body: 422")
    nul = '@"a\\u0000b"'
    keep = {"state": 200, "instructions": 200, "option description": 200,
            "a variable": 200}
    refuse = {"model": (422, V, "model"),
              "x_schema.id": (422, V, "x_schema.id"),
              "type": (422, V, "questions.sentiment.type"),
              "level label": (422, "invalid_schema", "questions"),
              "x_template.id": (422, V, "x_template.id"),
              "an outcome value": (422, V, "answers.sentiment"),
              "source": (422, V, "source")}
    for field, want in list(keep.items()) + list(refuse.items()):
        kind, text = place(field, nul)
        expect(t, c.send(kind, text), want, "\\u0000 in %s" % field)
    # A NUL after a real name must not make it that name.
    for field, value, want in (
            ("type", '@"choice\\u0000x"', (422, V,
                                           "questions.sentiment.type")),
            ("x_schema.id", '@"demo\\u0000x"', (422, V, "x_schema.id")),
            ("x_template.id", '@"greet\\u0000x"', (422, V,
                                                   "x_template.id")),
            ("an outcome value", '@"negative\\u0000x"',
             (422, V, "answers.sentiment"))):
        kind, text = place(field, value)
        expect(t, c.send(kind, text), want,
               "a real name then \\u0000 in %s" % field)
    for name in KEYS:
        kind, text = place_key(name, "k\\u0000x")
        expect(t, c.send(kind, text), lossy(name, key="k\\u0000x"),
               "\\u0000 in %s" % name)
    # The question "sentiment\u0000x" is not the question "sentiment".
    kind, text = place_key("an outcome answer", "sentiment\\u0000x",
                           '"positive"')
    expect(t, c.send(kind, text), (422, V, "answers.sentiment\\u0000x"),
           "an outcome for \\u0000 after a real question name")
    # A key that is only the escape text, not a NUL, is a plain name.
    kind, text = place_key("a top-level key", "\\\\u0000")
    expect(t, c.send(kind, text), 200,
           "an escaped backslash then u0000 in a key is no NUL")
    # The state keeps its NUL: it reads back byte for byte.
    r = c.send("eval", '{"state": "a\\u0000b", "x_schema": {"id": "demo"}}')
    if t.eq(r.status, 200, "\\u0000 in the state: 200"):
        got = g.get("/v1/decisions/" + r.json()["x_decision_id"],
                    key=c.key).json()
        t.eq(got.get("state"), "a\u0000b", "and the stored state keeps it")


def test_duplicates(t, c):
    last = '{"state": 5, "state": "%s", "x_schema": {"id": "demo"}}' % STATE
    first = '{"state": "%s", "state": 5, "x_schema": {"id": "demo"}}' % STATE
    expect(t, c.send("eval", last), 200, "duplicate state, valid last")
    expect(t, c.send("eval", first), (422, V, "state"),
           "duplicate state, invalid last")
    q = json.dumps({"state": STATE, "questions": DEMO})
    dup_q = q.replace('"questions": {', '"questions": {"sentiment": '
                      '{"type": "noul"}, ', 1)
    expect(t, c.send("inline", dup_q), 200,
           "a question name twice: the last one counts")
    dup_o = q.replace('"positive": "', '"negative": "x", "positive": "', 1)
    expect(t, c.send("inline", dup_o), 200,
           "an option key twice: counted once")
    r = c.send("outcome", '{"answers": {"sentiment": "positive", '
               '"sentiment": "negative"}}')
    expect(t, r, 200, "an outcome question twice")
    if r.status == 200:
        t.eq(r.json()["recorded"], ["sentiment"], "recorded once")


def test_numbers(t, c):
    cases = []
    for text in ("1e999", "-1e999", "NaN", "Infinity", "-Infinity",
                 "123456789012345678901234567890",
                 "-123456789012345678901234567890"):
        for field in ("state", "x_schema.version", "x_template.version",
                      "an outcome value", "instructions"):
            kind, body = place(field, "@" + text)
            cases.append(("%s in %s" % (text, field), kind, body,
                          lossy(field)))
        kind, body = place("state", '@{"n": [0, {"m": %s}]}' % text)
        cases.append(("%s inside the state" % text, kind, body,
                      (422, V, "state.n[1].m")))
    for text, want in (("-0", (422, V, "x_schema.version")),
                       ("0", (422, V, "x_schema.version")),
                       ("1.0", (422, V, "x_schema.version")),
                       ("1e2", (422, V, "x_schema.version")),
                       ("9223372036854775807",
                        (403, "schema_not_granted", None)),
                       ("18446744073709551615",
                        (403, "schema_not_granted", None)),
                       ("-9223372036854775808",
                        (422, V, "x_schema.version"))):
        kind, body = place("x_schema.version", "@" + text)
        cases.append(("%s in x_schema.version" % text, kind, body, want))
    for text, want in (("-0", 200), ("4", (422, V, "answers.urgency")),
                       ("9223372036854775807", (422, V, "answers.urgency")),
                       ("-1", (422, V, "answers.urgency")),
                       ("2.5", (422, V, "answers.urgency"))):
        body = '{"answers": {"urgency": %s}}' % text
        cases.append(("%s as a score outcome" % text, "outcome", body, want))
    kind, body = place("state", '@{"n": -0, "m": -0.0, "big": 1e308}')
    cases.append(("-0, -0.0 and 1e308 inside the state", kind, body, 200))
    run_table(t, c, cases)


def test_admin_numbers(t, g, admin_key):
    for value in ("1e999", "NaN", "99999999999999999999", "-0", "0",
                  "-1", "1.5", '"10"'):
        body = '{"name": "n%d", "rate_per_minute": %s}' % (
            abs(hash(value)) % 100000, value)
        r = g.admin_request("POST", "/admin/v1/applications", body.encode(),
                            key=admin_key,
                            headers={"Content-Type": "application/json"})
        t.ok(r.status in (400, 422) or (r.status == 201 and value == "-0"),
             "admin rate_per_minute %s: refused with a 4xx" % value, r)
        t.ok(r.status < 500, "admin rate_per_minute %s: no 5xx" % value)
    for q in ("limit=1e999", "limit=99999999999999999999", "limit=-0",
              "limit=0", "since=99999999999-01-01", "limit=" + "9" * 5000,
              "cursor=" + "A" * 5000):
        r = g.admin_request("GET", "/admin/v1/applications/hostile/"
                            "decisions?" + q, key=admin_key)
        t.error_is(r, 422, V, "admin listing ?%s: 422" % q[:40])
    for q in ("limit=%0d%0a", "cursor=%0d%0aSet-Cookie:%20x=1"):
        r = g.admin_request("GET", "/admin/v1/applications/hostile/"
                            "decisions?" + q, key=admin_key)
        t.ok(r.status in (400, 422) and "set-cookie" not in r.headers,
             "admin listing ?%s: a 4xx (lighttpd's or ours), no header"
             % q, r)


def test_injection(t, c, g):
    evil = "jev\r\nSet-Cookie: evil=1\r\nX-Injected: yes\r\n\r\n<html>"
    body = dict(BODIES["eval"], model=evil)
    r = c.send("eval", json.dumps(body))
    if t.eq(r.status, 200, "a model with CR/LF: 200"):
        t.eq(r.json()["model"], evil, "echoed unchanged in the JSON body")
        t.ok(b"\\r\\nSet-Cookie" in r.body, "with CR/LF escaped")
    t.ok("set-cookie" not in r.headers and "x-injected" not in r.headers,
         "and no header came of it", r.headers)
    r = c.send("outcome", json.dumps({"answers": {"urgency": 1},
                                      "source": "a\r\nSet-Cookie: y=1"}))
    t.ok(r.status in (200, 409) and "set-cookie" not in r.headers,
         "a source with CR/LF: no header", r)
    # lighttpd refuses control characters in a decoded path or query
    # itself (400); a 404 of ours would do as well.
    r = g.get("/v1/decisions/x%0d%0aSet-Cookie:%20z=1", key=c.key)
    t.ok(r.status in (400, 404) and "set-cookie" not in r.headers,
         "CR/LF in a path segment: a 4xx and no header", r)
    # A header value with a bare CR: lighttpd refuses the request itself.
    resp = raw(g.port, [head("GET", "/v1/models", {
        "Authorization": "Bearer %s\rSet-Cookie: w=1" % c.key,
        "Connection": "close"})])
    t.ok(resp is not None and 400 <= resp.status < 500 and
         "set-cookie" not in resp.headers,
         "CR inside a request header: a 4xx, no header", resp)
    # Every header the gateway writes, on a success and on errors.
    seen = set()
    for r in (c.send("eval", json.dumps(BODIES["eval"])),
              c.send("eval", "{"), g.get("/nope"),
              g.get("/health/ready")):
        seen |= set(r.headers)
    allowed = {"content-type", "content-length", "cache-control",
               "x-service-request-id", "x-typesafe-request-id",
               "ratelimit-policy", "ratelimit", "date", "server",
               "retry-after", "retry-after-ms", "connection",
               "transfer-encoding", "accept-ranges"}
    t.eq(sorted(seen - allowed), [], "only the gateway's own headers")


def count_decisions(g):
    return g.sql("SELECT count(*) FROM decisions")[0][0]


def test_limits(t, c, g):
    big = json.dumps(dict(BODIES["eval"], pad="p" * 1500000)).encode()
    r = c.send("eval", big)
    t.error_is(r, 413, "payload_too_large", "a 1.5 MB body: 413")
    hdr = {"Authorization": "Bearer " + c.key,
           "Content-Type": "application/json", "Connection": "close"}
    resp = raw(g.port, [head("POST", "/v1/systemone",
                             dict(hdr, **{"Transfer-Encoding": "chunked"})),
                        chunked(big)])
    t.ok(resp is not None, "a 1.5 MB chunked body is answered")
    if resp is not None:
        t.error_is(resp, 413, "payload_too_large",
                   "a 1.5 MB chunked body: the worker's own 413")
    small = json.dumps(BODIES["eval"]).encode()
    resp = raw(g.port, [head("POST", "/v1/systemone",
                             dict(hdr, **{"Transfer-Encoding": "chunked"})),
                        chunked(small, 7)])
    t.ok(resp is not None and resp.status == 200,
         "a valid chunked body in 7-byte chunks: 200", resp)
    huge = b"x" * (3 << 20)
    for name, pieces in (
            ("3 MB by Content-Length",
             [head("POST", "/v1/systemone",
                   dict(hdr, **{"Content-Length": str(len(huge))})), huge]),
            ("3 MB chunked",
             [head("POST", "/v1/systemone",
                   dict(hdr, **{"Transfer-Encoding": "chunked"})),
              chunked(huge)])):
        resp = raw(g.port, pieces)
        t.ok(resp is None or resp.status == 413,
             "%s (past lighttpd's limit): lighttpd's 413 or a close" % name,
             resp)
    for cl in ("abc", "-5", "1" * 30):
        resp = raw(g.port, [head("POST", "/v1/systemone",
                                 dict(hdr, **{"Content-Length": cl})),
                            small])
        t.ok(resp is not None and 400 <= resp.status < 500,
             "Content-Length %s: a 4xx" % cl[:12], resp)
    before = count_decisions(g)
    for n in (5000, len(small) + 1):
        raw(g.port, [head("POST", "/v1/systemone",
                          dict(hdr, **{"Content-Length": str(n)})), small],
            close=True)
    time.sleep(0.5)
    r = c.send("eval", json.dumps(BODIES["eval"]))
    t.eq(r.status, 200, "after truncated bodies, the next request: 200")
    t.eq(count_decisions(g), before + 1,
         "the truncated bodies recorded nothing")


def test_slowloris(t, c, g):
    hdr = {"Authorization": "Bearer " + c.key,
           "Content-Type": "application/json", "Connection": "close"}
    small = json.dumps(BODIES["eval"]).encode()
    results = []

    def slow():
        pieces = [head("POST", "/v1/systemone",
                       dict(hdr, **{"Content-Length": str(len(small))}))]
        pieces += [small[i:i + 8] for i in range(0, len(small), 8)]
        results.append(raw(g.port, pieces, delay=0.25, timeout=60))

    threads = [threading.Thread(target=slow) for _ in range(6)]
    for th in threads:
        th.start()
    time.sleep(0.5)
    worst = 0
    for _ in range(8):
        start = time.time()
        r = c.send("eval", json.dumps(BODIES["eval"]))
        worst = max(worst, time.time() - start)
        if r.status != 200:
            break
    t.eq(r.status, 200, "requests are answered while 6 bodies dribble in")
    t.ok(worst < 3, "each in under 3 s (worst %.2f s)" % worst)
    for th in threads:
        th.join(120)
    t.ok(len(results) == 6 and all(x is not None and x.status == 200
                                   for x in results),
         "and the slow bodies are answered once complete",
         [x and x.status for x in results])


def setup(g):
    g.admin("backend", "add", "lex", "--kind", "lexical")
    g.admin("schema", "publish", "demo", "--questions", DEMO_QUESTIONS,
            "--backend", "lex")
    with open(os.path.join(g.dir, "greet.txt"), "w") as f:
        f.write("hello {{name}}, the checkout is broken")
    with open(os.path.join(g.dir, "greet.json"), "w") as f:
        json.dump({"name": "string"}, f)
    g.admin("template", "publish", "greet", "--body",
            os.path.join(g.dir, "greet.txt"), "--variables",
            os.path.join(g.dir, "greet.json"))
    key = g.new_key("hostile", "--log-state", "--rate-per-minute",
                    "1000000")
    g.admin("grant", "hostile", "demo")
    return key, g.new_key("root", "--admin", "--rate-per-minute", "100000")


def main():
    t = TAP()
    g = Gateway(workers=2)
    try:
        key, admin_key = setup(g)
        g.start()
        pids = sorted(g.worker_pids())
        c = Client(g, key)
        r = c.send("eval", json.dumps(BODIES["eval"]))
        t.eq(r.status, 200, "a valid evaluation: 200")
        c.decision = r.json()["x_decision_id"]
        expect(t, c.send("outcome", json.dumps(BODIES["outcome"])), 200,
               "a valid outcome: 200")
        expect(t, c.send("tmpl", json.dumps(BODIES["tmpl"])), 200,
               "a valid template evaluation: 200")
        t.run([test_nesting, test_huge_strings, test_many_keys, test_utf8,
               test_duplicates, test_numbers], c)
        t.run([test_nul, test_injection, test_limits, test_slowloris], c, g)
        t.run([test_admin_numbers], g, admin_key)
        t.eq(c.fivexx, [], "never a 5xx")
        t.eq(sorted(g.worker_pids()), pids,
             "the workers that started are the ones still running")
        t.ok(STATE not in g.log(), "no state in the log")
        t.stop_clean(g)
    finally:
        g.cleanup()
    return t.done()


if __name__ == "__main__":
    raise SystemExit(main())
