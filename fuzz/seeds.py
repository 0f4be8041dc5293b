#!/usr/bin/env python3
"""fuzz/seeds.py: writes the seed corpora of the libFuzzer targets into
fuzz/corpus/TARGET/seed-*, from examples/ (the demo request and
questions), the templates of tests/unit/template_test.c and upstream
answers made by tests/e2e/fake_upstream.py's own build_answers().

Run it after changing it; it rewrites the seed-* files and leaves the
regression-* files (inputs that once crashed a target) alone.

Input formats (see each fuzz/fuzz_TARGET.c):
  request      a request body
  fingerprint  a questions map
  template     body NUL declaration NUL values NUL flags (flags: one
               byte, bit 0 escape_html, upper bits max_chars)
  upstream     an upstream answer for the demo questions, or
               questions NUL answer
  openai       an openai server's reply, parsed for each of the demo
               questions, or questions NUL reply
  query        size byte, query NUL name (size: low 6 bits, 1 to 64)
  route        method NUL path (without a NUL: GET and the path); the
               routes are read from src/routes.c
"""

import json
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tests", "e2e"))
import fake_openai  # noqa: E402
import fake_upstream  # noqa: E402


def compact(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def load(path):
    with open(os.path.join(TOP, path), encoding="utf-8") as f:
        return f.read()


DEMO_TEXT = load("examples/demo-questions.json")
DEMO = json.loads(DEMO_TEXT)
EVALUATE_TEXT = load("examples/evaluate.json")
EVALUATE = json.loads(EVALUATE_TEXT)


def request_seeds():
    q = DEMO
    s = EVALUATE["state"]
    one = {k: {kk: vv for kk, vv in v.items()} for k, v in q.items()}
    yield "evaluate", EVALUATE_TEXT
    yield "evaluate-compact", compact(EVALUATE)
    yield "state-object", compact({"state": {"ticket": s, "tags": ["a"]},
                                   "questions": q})
    yield "state-array", compact({"state": [s, 1, None], "questions": q})
    yield "state-number", compact({"state": 5, "questions": q})
    yield "x-template", compact({"x_template": {"id": "ticket", "version": 1,
                                 "variables": {"subject": "x", "n": 2}},
                                 "questions": q})
    yield "x-schema", compact({"x_schema": {"id": "support", "version": 2},
                               "state": s})
    for name in q:
        yield "only-" + name, compact({"state": s,
                                       "questions": {name: one[name]}})
    yield "value-choice", compact({"state": s, "questions": q,
                                   "value": "negative"})
    yield "value-score", compact({"state": s, "questions": q, "value": 3})
    yield "value-noul", compact({"state": s, "questions": q, "value": True})
    yield "noul-null", compact({"state": s, "questions": {
        "a": {"type": "noul", "criteria": None},
        "b": {"type": "noul"}}})
    yield "score-10", compact({"state": s, "questions": {"l": {
        "type": "score", "criteria": [str(i) for i in range(10)]}}})
    yield "unicode", compact({"state": "h\u00e9llo \u263a \U0001f600",
                              "questions": {"\u00e9t\u00e9": {
                                  "type": "choice", "criteria": {
                                      "\u263a": None, "\U0001f600": [1]}}}})
    yield "escapes", ('{"state":"\\u00e9\\ud83d\\ude00","questions":'
                      '{"a\\u0000b":{"type":"noul"}}}')
    yield "bad-type", compact({"state": s, "questions": {"a": {
        "type": "choices"}}})
    yield "bad-criteria", compact({"state": s, "questions": {"a": {
        "type": "score", "criteria": {"0": "low", "1": "high"}}}})
    yield "duplicate-keys", ('{"state":"x","state":"y","questions":'
                             '{"a":{"type":"noul"},"a":{"type":"score",'
                             '"criteria":["x","y"]}}}')
    yield "too-many", compact({"state": s, "questions": {
        "q%d" % i: {"type": "noul"} for i in range(33)}})
    yield "deep", '{"state":' + "[" * 70 + "]" * 70 + "}"
    yield "trailing", compact(EVALUATE) + " x"
    yield "numbers", ('{"state":"s","questions":{"a":{"type":"score",'
                      '"criteria":["a","b"]}},"value":1e400}')
    yield "big-integers", ('{"state":[18446744073709551615,'
                           '-9223372036854775808,18446744073709551616,'
                           '1e-400,-0],"questions":{}}')
    yield "nan", '{"state":[NaN,-Infinity],"questions":{}}'
    yield "long-state", compact({"state": "\u00e9" * 301, "questions": q})
    yield "instructions-number", compact({"state": s, "questions": {"a": {
        "type": "noul", "instructions": 3}}})
    yield "options-256", compact({"state": s, "questions": {"c": {
        "type": "choice", "criteria": {"o%d" % i: "" for i in range(256)}}}})


def fingerprint_seeds():
    yield "demo", DEMO_TEXT
    yield "demo-compact", compact(DEMO)
    yield "reordered", compact({k: DEMO[k] for k in reversed(list(DEMO))})
    yield "texts", compact({"a": {"type": "choice", "instructions": {
        "en": "x"}, "criteria": {"k": {"d": 1}, "l": ["x"], "m": None}}})
    yield "options-255", compact({"c": {"type": "choice", "criteria": {
        "o%d" % i: "" for i in range(255)}}})
    yield "questions-300", compact({"q%03d" % i: {"type": "noul"}
                                    for i in range(300)})
    yield "prefixes", compact({"a": {"type": "choice", "criteria": {
        "a": "", "ab": "", "b": ""}}, "ab": {"type": "noul"}})
    yield "score-labels", compact({"s": {"type": "score", "criteria": [
        "same", "same", ""]}})
    yield "unicode", compact({"\u00e9": {"type": "choice", "criteria": {
        "\u00ff": "", "\U0001f600": "", "z": ""}}})
    yield "noul-texts", compact({"n": {"type": "noul", "instructions": None,
                                       "criteria": {"true": "yes",
                                                    "false": None}}})


# Body, declaration (None: the target derives it from the values), values,
# flags byte (bit 0 escape_html, upper bits max_chars).
TEMPLATES = [
    ("interpolation", "Hello, {{subject}}!\n", None, {"subject": "world"}),
    ("triple", "{{{mph}}}/{{&mph}}/{{mph}}", None, {"mph": -3}),
    ("decimals", "{{a}} {{b}} {{c}} {{d}}", None,
     {"a": 1.5, "b": 2.0, "c": 0.1, "d": 1e21}),
    ("dotted", '"{{person.name}}" == "{{#person}}{{name}}{{/person}}"',
     None, {"person": {"name": "Joe"}}),
    ("deep-dotted", "{{a.b.c.d.e.name}}", None,
     {"a": {"b": {"c": {"d": {"e": {"name": "Phil"}}}}}}),
    ("leading-dot", "{{#a}}{{.name}}{{/a}}{{#b}}{{.name}}{{/b}}", None,
     {"a": {}, "b": {"name": "Name"}, "name": "Fail"}),
    ("list", "{{#list}}{{item}},{{/list}}", None,
     {"list": [{"item": 1}, {"item": 2}, {"item": 3}]}),
    ("iterator", "{{#l}}({{.}}){{/l}}{{^l}}none{{/l}}", None,
     {"l": ["a", 1, None, True, [2]]}),
    ("inverted", "{{^boolean}}rendered{{/boolean}}|{{^o.n}}x{{/o.n}}",
     None, {"boolean": False, "o": {"n": None}}),
    ("comments", "a{{! comment }}b{{! {{undeclared }}c", None, {}),
    ("standalone", "| This Is\n  {{#boolean}}\n|\n  {{/boolean}}\n| A Line\n",
     None, {"boolean": True}),
    ("delimiters", "{{=<% %>=}}(<%text%>)<%={{ }}=%>{{text}}", None,
     {"text": "Hey!"}),
    ("escaping", "{{forbidden}}|{{{forbidden}}}", None,
     {"forbidden": "& \" < > '"}),
    ("object-json", "{{o}}", None, {"o": {"a": "<", "b": [1, "x/y"]}}),
    ("nested", "{{#a}}{{#b}}{{#c}}{{d}}{{/c}}{{/b}}{{/a}}", None,
     {"a": {"b": {"c": {"d": "deep"}}}}),
    ("depth-32", "{{#b}}" * 32 + "x" + "{{/b}}" * 32, None, {"b": True}),
    ("partial", "{{>partial}}", None, {}),
    ("unclosed", "{{#a}}open", None, {"a": True}),
    ("undeclared", "{{x}}", {"y": "string"}, {"y": "v"}),
    ("typed", "{{n}} {{i}} {{s}}",
     {"n": "number", "i": "integer", "s": "string"},
     {"n": 2.5, "i": 7, "s": "t"}),
    ("type-mismatch", "{{i}}", {"i": "integer"}, {"i": 1.5}),
    ("bad-decl", "{{a.b}}", {"a.b": "string"}, {"a.b": "x"}),
    ("utf8-cap", "{{s}}{{s}}", None, {"s": "\u00e9\u00e9\u263a"}),
    ("repeat", "{{#l}}{{#l}}{{#l}}{{x}}{{/l}}{{/l}}{{/l}}", None,
     {"l": [1, 2, 3, 4], "x": "ab"}),
    ("costly", "{{#l}}" * 4 + "{{/l}}" * 4, None, {"l": [0] * 50}),
]


def template_seeds():
    for name, body, decl, values in TEMPLATES:
        flags = bytes([(64 << 1) | (name == "escaping")])
        parts = [body.encode(),
                 b"" if decl is None else compact(decl).encode(),
                 compact(values).encode(), flags]
        yield name, b"\0".join(parts)
    # The cap: a byte of 3 << 1 (3 characters) and of 0 (nothing).
    yield "cap-3", b"{{s}}\0\0" + compact({"s": "abcde"}).encode() + b"\0\x06"
    yield "cap-0", b"\0\0{}\0\x00"


def upstream_seeds():
    ok = fake_upstream.build_answers(DEMO, {})
    usage = {"input_tokens": 318, "output_tokens": 3}
    yield "ok", compact({"model": "jev-1.14.0", "answers": ok, "usage": usage})
    yield "ok-pretty", json.dumps({"model": "jev-latest", "answers": ok,
                                   "usage": usage}, indent=2)
    yield "no-usage", compact({"model": "jev-latest", "answers": ok})
    yield "bad-usage", compact({"answers": ok, "usage": {
        "input_tokens": -1, "output_tokens": 1.5}})
    over = fake_upstream.build_answers(DEMO, {
        "sentiment": [0, 0, 1e308], "urgency": {"3": 5e-324, "0": 0,
                                                "1": 0, "2": 0},
        "refund": 1})
    yield "extremes", compact({"answers": over})
    missing = json.loads(compact(ok))
    del missing["sentiment"]["probabilities"]["negative"]
    yield "missing-option", compact({"answers": missing})
    yield "wrong-shape", compact({"model": "m", "answers": [], "usage": usage})
    yield "malformed", ('{"model": "jev-latest", "answers": {"x": {"type": '
                        '"choice", "probabilities": {0.5, oops')
    yield "wrong-type", compact({"answers": dict(ok, refund={
        "type": "score", "noul": 0.5})})
    yield "noul-range", compact({"answers": dict(ok, refund={
        "type": "noul", "noul": 1.5})})
    yield "zero-mass", compact({"answers": dict(ok, urgency={
        "type": "score", "probabilities": {"0": 0, "1": 0, "2": 0, "3": 0}})})
    yield "bare-number", "5"
    yield "null", "null"
    for name, u in USAGE_EXTREMES:
        yield "usage-" + name, compact({"answers": ok, "usage": {
            "input_tokens": u, "output_tokens": u}})
    for name, text in REFLECTED:
        yield "reflected-" + name, text
    qs = {"only": {"type": "choice", "criteria": {"x": None, "y": None}},
          "flag": {"type": "noul"}}
    custom = fake_upstream.build_answers(qs, {})
    yield "questions-custom", (compact(qs) + "\0" +
                               compact({"answers": custom}))
    many = {"s%d" % i: {"type": "score", "criteria": ["a", "b"]}
            for i in range(5)}
    yield "questions-scores", (compact(many) + "\0" + compact(
        {"answers": fake_upstream.build_answers(many, {}), "usage": usage}))


# Usage counts an upstream may send: huge, negative, not integers.
USAGE_EXTREMES = [("int64-max", 9223372036854775807),
                  ("int64-max-1", 9223372036854775806),
                  ("past-1e9", 1000000001), ("1e9", 1000000000),
                  ("negative", -4), ("fraction", 1.5), ("exponent", 1e3),
                  ("string", "7")]
# The key an upstream was sent, reflected back: the reason for refusing
# it must never hold it (the targets check that "sk-" is not there).
REFLECTED = [
    ("key-nul", '{"Bearer sk-fuzz-secret\\u0000x":1}'),
    ("key-nan", '{"Bearer sk-fuzz-secret":NaN}'),
    ("key-inf", '{"Bearer sk-fuzz-secret":1e999}'),
    ("key-surrogate", '{"Bearer sk-fuzz-secret\\ud800":1}'),
    ("cut", '{"Bearer sk-fuzz-secret'),
    ("trailing", '{} Bearer sk-fuzz-secret'),
    ("error", '{"error":{"message":"Incorrect API key: Bearer '
              'sk-fuzz-secret"}}'),
    ("header", 'HTTP/1.1 200 OK\r\nX-Echo: Bearer sk-fuzz-secret\r\n'),
]


def openai_reply(tokens, usage=True):
    """A chat completion whose first token's top_logprobs are tokens
    (token, probability), as fake_openai.py answers; usage True, False
    or the usage object."""
    top = [fake_openai.token_entry(t, p) for t, p in tokens]
    reply = {"id": "x", "object": "chat.completion", "choices": [{
        "index": 0, "message": {"role": "assistant",
                                "content": tokens[0][0]},
        "logprobs": {"content": [dict(top[0], top_logprobs=top)]},
        "finish_reason": "length"}]}
    if usage is True:
        reply["usage"] = {"prompt_tokens": 120, "completion_tokens": 1}
    elif usage:
        reply["usage"] = usage
    return compact(reply)


def openai_seeds():
    """Replies to the demo questions (choice A..C, score 0..3, noul
    yes/no), or questions NUL reply."""
    yield "letters", openai_reply([("A", 0.5), ("B", 0.3), ("C", 0.15),
                                   ("The", 0.05)])
    yield "digits", openai_reply([("0", 0.1), ("1", 0.2), ("2", 0.3),
                                  ("3", 0.4)], usage=False)
    yield "yes-no", openai_reply([("yes", 0.7), (" No", 0.2),
                                  ("YES", 0.1)])
    yield "spaced-case", openai_reply([(" a", 0.4), ("b ", 0.4),
                                       ("\tc", 0.2)])
    yield "low-mass", openai_reply([("A", 0.2), ("Sorry", 0.8)])
    yield "no-logprobs", compact({"choices": [{"message": {
        "content": "A"}}]})
    yield "extremes", compact({"choices": [{"logprobs": {"content": [{
        "token": "A", "logprob": 0, "top_logprobs": [
            {"token": "A", "logprob": 1e308}, {"token": "B", "logprob":
                                               -1e308},
            {"token": "C", "logprob": 0}, {"token": 5, "logprob": 0},
            {"token": "yes", "logprob": "x"}]}]}}],
        "usage": {"prompt_tokens": -1, "completion_tokens": 1.5}})
    for name, u in USAGE_EXTREMES:
        yield "usage-" + name, openai_reply([("A", 0.6), ("yes", 0.3)],
                                            usage={"prompt_tokens": u,
                                                   "completion_tokens": u})
    yield "duplicates", openai_reply([("A", 0.4), ("A", 0.4), ("A", 0.4),
                                      ("B", 0.2), ("yes", 0.4),
                                      ("yes", 0.4), ("0", 0.3), ("0", 0.3)])
    yield "variants-past-1", openai_reply([("A", 0.9), (" A", 0.9),
                                           ("a", 0.9), ("yes", 0.9),
                                           ("YES", 0.9)])
    for name, text in REFLECTED:
        yield "reflected-" + name, text
    yield "reflected-token", openai_reply([("Bearer sk-fuzz-secret", 0.9),
                                           ("A", 0.1)])
    qs = {"wide": {"type": "choice", "criteria": {
        k: None for k in "abcdefghijklmnopqrstuvwxyz"}}}
    yield "questions-wide", (compact(qs) + "\0" + openai_reply(
        [("Z", 0.6), ("Y", 0.4)]))


def query_seeds():
    def q(size, query, name):
        return bytes([size]) + query.encode() + b"\0" + name.encode()
    page = ("since=2026-11-21T00%3A00%3A00Z&until=2026-11-22&"
            "cursor=0193a1b2c3d4e5f6&limit=50")
    for name in ("since", "until", "cursor", "limit", "none"):
        yield "decisions-" + name, q(63, page, name)
    yield "calibration", q(63, "version=2&question=refund&since=2026-11-01"
                           "&target_accuracy=0.9&format=html&apply=1",
                           "target_accuracy")
    yield "plus-and-escapes", q(15, "q=a+b%20c%2Bd%zz%4&x", "q")
    yield "cut", q(3, "limit=%31%32%33%34%35", "limit")
    yield "bare-name", q(8, "&&apply&apply=0", "apply")
    yield "repeated", q(8, "a=1&a=2&a", "a")
    yield "empty-name", q(8, "=x&a=1", "")
    yield "utf8", q(31, "question=%C3%A9t%C3%A9%00x", "question")


def route_seeds():
    text = load("src/routes.c")
    rows = re.findall(r'\.method = "([A-Z]+)",\s*\.pattern = "([^"]+)"',
                      text)
    rows += [(m, "/admin/v1" + p) for m, p in
             re.findall(r'ADMIN\("([A-Z]+)", "([^"]+)"', text)]
    for i, (method, pattern) in enumerate(rows):
        path = pattern.replace("{}", "x")
        slug = re.sub(r"[^a-z0-9]+", "-", (method + path).lower()).strip("-")
        yield slug, method + "\0" + path
        if "{}" in pattern:
            yield slug + "-encoded", (method + "\0" +
                                      pattern.replace("{}", "a%2Fb+%zz"))
    yield "get-bare", "/v1/models"
    yield "wrong-method", "BREW\0/v1/models"
    yield "admin-unknown", "GET\0/admin/v1/nothing"
    yield "admin-encoded", "GET\0/%61dmin/v1/applications"
    yield "double-slash", "GET\0//admin/v1/applications"
    yield "trailing-slash", "GET\0/health/"
    yield "empty-segment", "POST\0/v1/decisions//outcome"
    yield "long-method", "GETGETGETGETGETGET\0/health"
    yield "empty", "\0"


def main():
    for target, gen in (("request", request_seeds),
                        ("fingerprint", fingerprint_seeds),
                        ("template", template_seeds),
                        ("upstream", upstream_seeds),
                        ("openai", openai_seeds),
                        ("query", query_seeds),
                        ("route", route_seeds)):
        d = os.path.join(TOP, "fuzz", "corpus", target)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            if f.startswith("seed-"):
                os.unlink(os.path.join(d, f))
        n = 0
        for name, data in gen():
            if isinstance(data, str):
                data = data.encode("utf-8")
            with open(os.path.join(d, "seed-" + name), "wb") as f:
                f.write(data)
            n += 1
        print("%s: %d seeds" % (target, n))


if __name__ == "__main__":
    main()
