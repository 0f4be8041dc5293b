#!/usr/bin/env python3
"""Fake OpenAI-compatible chat-completions server with fault modes, for
evalgate's end-to-end tests of the `openai` backend kind
(doc/design.md, section 7.1).

Python 3 standard library only. Run as its own process:

    python3 tests/e2e/fake_openai.py --port 0 [--mode MODE] [--host 127.0.0.1]
                                     [--delay-ms N] [--api-key KEY] [--verbose]

The first line on stdout is `PORT <n>` (the bound port; --port 0 picks a free
one), flushed as soon as the socket listens. SIGTERM or SIGINT ends it at once.
A backend's --url is http://127.0.0.1:<n>/v1.

Wire format (the OpenAI chat-completions contract, the part evalgate uses):

    POST /v1/chat/completions  {model, messages, max_tokens, temperature,
                                logprobs, top_logprobs, n, stream, ...}
      200 {"id": "chatcmpl-fake-<seq>", "object": "chat.completion",
           "created": <unix s>, "model": <request's model>,
           "choices": [{"index": 0, "finish_reason": "length",
                        "message": {"role": "assistant", "content": <top token>},
                        "logprobs": {"content": [{"token": <top token>,
                            "logprob": <its logprob>, "bytes": [...],
                            "top_logprobs": [{"token", "logprob", "bytes"}, ...]}]}}],
           "usage": {"prompt_tokens", "completion_tokens", "total_tokens"}}
      top_logprobs holds at most the request's `top_logprobs` entries (0 when
      absent), the most probable first; `logprobs` is null unless the request
      has `logprobs: true` (as the OpenAI API does).
      usage: prompt_tokens = ceil(len(compact JSON of messages) / 4),
             completion_tokens = 1.
      A body that is not a JSON object with a `messages` array: 400
      {"error": {"message", "type": "invalid_request_error"}}.
    GET /v1/models  200 {"object": "list", "data": [{"id": "fake-model", ...}]}

How the labels are found (the prompt's last message is the question):
    1. lines that begin with a label, optionally after "-", "*" or a bracket
       or quote, followed by a separator (":", ".", ")", "=", "-", a dash, a
       space or the end of the line): `A`, `B`, ... (choice: A and B both
       there, then as many consecutive letters as there are), `0`, `1`, ...
       (score: 0 and 1 both there, consecutive), `yes` and `no` (noul, any
       case);
    2. else the same labels as whole words anywhere in the last message
       (letters upper case only), in the same order of preference.
    Found labels are recorded (`labels`, `kind`); none found: no label token
    is answered (as labels_missing).

The deterministic rule (what the answer's top_logprobs are):
    1. control `answers` {MATCH: spec}: the first MATCH (in the object's
       order) that is a substring of the messages' texts joined gives the
       tokens. spec is
         - an object {token: p}: those tokens verbatim, with logprob ln p;
         - a list [p0, p1, ...]: p_i for the i-th found label as a plain
           token (`A`, `0`, `yes`), and the rest of 1 - sum as the filler
           token `The` (when above 1e-12).
    2. else the default: the found labels share `label_mass` (control,
       default 0.9) and `The` has the rest; within the labels,
         choice and score with k labels: p_i = (i + 1) / (k (k + 1) / 2)
                                         (the last label wins),
         noul: yes 0.7, no 0.3.
       e.g. choice of 3 at mass 0.9: A 0.15, B 0.3, C 0.45, The 0.1; the
       gateway's renormalised distribution is then 1/6, 2/6, 3/6.
    3. control `skill` {"accuracy": a, "confidence": c, "salt": s}, when
       set and no `answers` match: a model right with probability a and
       confident c, deterministic from the text.  The first "item N" of
       the messages names the case (none: the default rule); its true
       label is label number skill_truth(N, k) of the k found labels,
       sha256("truth:N") mod k, the same for every server (a test
       computes it with this file's skill_truth()); the server is right
       on it when sha256("s:N")'s first 8 hex digits / 16^8 < a, else it
       picks the label (truth + 1 + sha256("wrong:s:N") mod (k - 1))
       mod k; the label picked gets c and the others share 1 - c, with
       no filler.  Two servers with the same skill answer the same.
    Then the mode may transform these tokens (below), they are sorted by
    probability (highest first; ties keep their order) and cut to the
    request's top_logprobs. Each recorded request keeps the `tokens` sent
    ([[token, p], ...]) and their `label_mass`: the sum of p over the tokens
    that, stripped of surrounding whitespace and case-folded, equal a found
    label (what the gateway should store as the decision's label mass).

Control (never subject to the fault modes):
    POST /_control  JSON, every field optional, only given fields change:
        {"mode": MODE, "delay_ms": n,      # delay_ms: mode slow's sleep
         "call_delay_ms": n,               # sleep before every answer, any mode
         "times": n,                       # the mode applies to the next n
                                           # completion calls, then "ok"
         "retry_after_ms": n,              # error429's Retry-After (default 1000)
         "answers": {match: {token: p} | [p, ...]},
         "label_mass": x,                  # the default rule's label mass
         "skill": {"accuracy": a, "confidence": c, "salt": s} | null,
         "usage": {...} | false,           # override usage, or false: omit it
         "response_model": str | null, "api_key": str | null,
         "raw_body": str | null,           # sent as the completion's body
         "raw_status": n,                  # with raw_body (default 200)
         "raw_headers": {name: value},     # on every completion answer
         "pad_bytes": n}                   # a member "pad" of n bytes in
                                           # the answer of mode ok
        In raw_body and raw_headers' values, %AUTH% stands for the
        request's Authorization header (a hostile server reflecting it).
        -> 200 the whole current configuration
    GET  /_control  -> the configuration, with "in_flight" (completion calls
                       being answered now) and "in_flight_max" (the most at
                       once since the last reset)
    GET  /_requests -> JSON array of every POST /v1/chat/completions:
        {"seq", "time", "method", "path", "authorization", "headers", "body",
         "mode", "kind", "labels", "matched", "tokens", "label_mass", "usage",
         "status"}   (body is the parsed JSON, or null with "raw_body")
    POST /_reset    -> clears the configuration (mode back to the --mode given
                       at start, delay to --delay-ms), the request log and
                       in_flight_max

Modes (apply to POST /v1/chat/completions only):
    ok                 the answer above
    slow               sleep delay_ms, then answer ok
    hang               read the request, never answer; returns after 600 s or
                       when the client closes the connection
    error500           500 {"error": {"message", "type": "server_error"}}
    error429           429 {"error": {..., "type": "rate_limit_exceeded"}},
                       Retry-After (whole seconds, at least 1)
    no_logprobs        200, the answer with "logprobs": null
    labels_missing     200, the label tokens removed (the filler tokens stay;
                       none: `The` 0.6, `Sorry` 0.4)
    low_mass           200, the label tokens scaled to a total of 0.3 (their
                       ratios kept), the others to 0.7 (none: `The` 0.7)
    spaced_mixed_case  200, each label token of probability p replaced by
                       " " + L with 0.6 p and a case variant with 0.4 p: L
                       lower-cased if that differs, else upper-cased if that
                       differs, else L + " " (" A"/"a", " yes"/"YES",
                       " 0"/"0 "): the label masses and the label mass are
                       those of mode ok, but no token is a bare label
    garbage            200 application/json whose body is not JSON

An `api_key` (flag or control) makes /v1/* answer 401 unless
`Authorization: Bearer <api_key>` is sent.
"""

import argparse
import hashlib
import json
import math
import re
import threading
import time

from fake_http import FakeHandler, compact, log, serve

MODES = (
    "ok", "slow", "hang", "error500", "error429", "no_logprobs",
    "labels_missing", "low_mass", "spaced_mixed_case", "garbage",
)
HANG_SECONDS = 600
FILLER = "The"
LOW_MASS = 0.3









class State:
    """Configuration, request log and in-flight count shared by the
    handler threads."""

    FIELDS = ("mode", "delay_ms", "call_delay_ms", "times", "retry_after_ms",
              "answers", "label_mass", "usage", "response_model", "api_key",
              "raw_body", "raw_status", "raw_headers", "pad_bytes",
              "skill")

    def __init__(self, mode, delay_ms, api_key):
        self.lock = threading.Lock()
        self.start_mode = mode
        self.start_delay = delay_ms
        self.start_key = api_key
        self.in_flight = 0
        self.reset()

    def reset(self):
        with self.lock:
            self.mode = self.start_mode
            self.delay_ms = self.start_delay
            self.call_delay_ms = 0
            self.times = None
            self.retry_after_ms = 1000
            self.answers = {}
            self.label_mass = 0.9
            self.usage = None
            self.response_model = None
            self.api_key = self.start_key
            self.raw_body = None
            self.raw_status = 200
            self.raw_headers = {}
            self.pad_bytes = 0
            self.skill = None
            self.requests = []
            self.seq = 0
            self.in_flight_max = self.in_flight

    def config(self):
        cfg = {k: getattr(self, k) for k in self.FIELDS}
        cfg["in_flight"] = self.in_flight
        cfg["in_flight_max"] = self.in_flight_max
        return cfg

    def update(self, cfg):
        """Applies a control object; returns an error string or None."""
        if not isinstance(cfg, dict):
            return "control body must be a JSON object"
        unknown = sorted(set(cfg) - set(self.FIELDS))
        if unknown:
            return "unknown control fields: %s" % ", ".join(unknown)
        if "mode" in cfg and cfg["mode"] not in MODES:
            return "unknown mode %r; modes: %s" % (cfg["mode"],
                                                   ", ".join(MODES))
        for k in ("delay_ms", "call_delay_ms", "retry_after_ms"):
            if k in cfg and not (isinstance(cfg[k], (int, float)) and
                                 not isinstance(cfg[k], bool) and cfg[k] >= 0):
                return "%s must be a number >= 0" % k
        for k in ("raw_status", "pad_bytes"):
            if k in cfg and not (isinstance(cfg[k], int) and cfg[k] >= 0):
                return "%s must be an integer >= 0" % k
        if "raw_body" in cfg and not isinstance(cfg["raw_body"],
                                                (str, type(None))):
            return "raw_body must be a string or null"
        if "raw_headers" in cfg and not (
                isinstance(cfg["raw_headers"], dict) and all(
                    isinstance(v, str) for v in cfg["raw_headers"].values())):
            return "raw_headers must be {name: string}"
        if "times" in cfg and cfg["times"] is not None and not (
                isinstance(cfg["times"], int) and cfg["times"] >= 0):
            return "times must be an integer >= 0 or null"
        if "label_mass" in cfg and not (
                isinstance(cfg["label_mass"], (int, float)) and
                0 < cfg["label_mass"] <= 1):
            return "label_mass must be in (0, 1]"
        if "answers" in cfg:
            a = cfg["answers"]
            if not isinstance(a, dict) or not all(
                    isinstance(v, (dict, list)) for v in a.values()):
                return "answers must be {match: {token: p} | [p, ...]}"
        if "skill" in cfg and cfg["skill"] is not None:
            sk = cfg["skill"]
            if not (isinstance(sk, dict) and
                    isinstance(sk.get("accuracy"), (int, float)) and
                    0 <= sk["accuracy"] <= 1 and
                    isinstance(sk.get("confidence"), (int, float)) and
                    0 < sk["confidence"] < 1 and
                    isinstance(sk.get("salt", ""), str)):
                return "skill must be {accuracy: [0, 1], confidence: " \
                    "(0, 1), salt: text} or null"
        with self.lock:
            for k in self.FIELDS:
                if k in cfg:
                    setattr(self, k, cfg[k])
        return None

    def take_mode(self):
        """Mode and delay for one completion call (consumes `times`)."""
        with self.lock:
            mode, delay = self.mode, self.delay_ms
            if self.times is not None:
                if self.times <= 0:
                    mode = self.mode = "ok"
                    self.times = None
                else:
                    self.times -= 1
            return mode, delay

    def enter(self):
        with self.lock:
            self.in_flight += 1
            self.in_flight_max = max(self.in_flight_max, self.in_flight)

    def leave(self):
        with self.lock:
            self.in_flight -= 1

    def record(self, entry):
        with self.lock:
            self.seq += 1
            entry["seq"] = self.seq
            self.requests.append(entry)


STATE = None


# ---------------------------------------------------------------- the prompt

def message_text(m):
    """A message's text: its content string, or its text parts joined."""
    if not isinstance(m, dict):
        return ""
    c = m.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "".join(p.get("text", "") for p in c
                       if isinstance(p, dict) and isinstance(p.get("text"),
                                                             str))
    return ""


LINE_LABEL = re.compile(
    r"^[ \t]*(?:[-*\u2022][ \t]*)?[(\[\"'`]?[ \t]*([A-Za-z]+|[0-9]+)"
    r"[ \t]*[)\]\"'`]?(?=[ \t]*(?:[:.)=\-\u2013\u2014]|[ \t]|$))",
    re.M)


def consecutive(found, first):
    """Labels first, first+1, ... while each is in found (letters or
    digits)."""
    out = []
    if first == "A":
        for i in range(26):
            c = chr(ord("A") + i)
            if c not in found:
                break
            out.append(c)
    else:
        i = 0
        while str(i) in found:
            out.append(str(i))
            i += 1
    return out


def classify(found_letters, found_digits, found_yesno):
    if "A" in found_letters and "B" in found_letters:
        return "choice", consecutive(found_letters, "A")
    if "0" in found_digits and "1" in found_digits:
        return "score", consecutive(found_digits, "0")
    if {"yes", "no"} <= found_yesno:
        return "noul", ["yes", "no"]
    return None, []


def find_labels(text):
    """(kind, labels) the question text offers; (None, []) if none."""
    letters, digits, yesno = set(), set(), set()
    for m in LINE_LABEL.finditer(text):
        w = m.group(1)
        if len(w) == 1 and "A" <= w <= "Z":
            letters.add(w)
        elif w.isdigit():
            digits.add(str(int(w)))
        elif w.lower() in ("yes", "no"):
            yesno.add(w.lower())
    kind, labels = classify(letters, digits, yesno)
    if kind is not None:
        return kind, labels
    letters = set(re.findall(r"\b([A-Z])\b", text))
    digits = set(re.findall(r"\b([0-9])\b", text))
    yesno = set(w.lower() for w in re.findall(r"\b(yes|no)\b", text, re.I))
    return classify(letters, digits, yesno)


def fold(token):
    return token.strip().casefold()


def default_tokens(kind, labels, mass):
    k = len(labels)
    if kind == "noul":
        w = [0.7, 0.3]
    else:
        total = k * (k + 1) / 2.0
        w = [(i + 1) / total for i in range(k)]
    tokens = [(lab, mass * x) for lab, x in zip(labels, w)]
    if mass < 1 - 1e-12:
        tokens.append((FILLER, 1.0 - mass))
    return tokens


def digest(text):
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


def skill_truth(case, k):
    """The index of the true label of case "item N" among k labels."""
    return digest("truth:%s" % case) % k


def skill_tokens(skill, joined, labels):
    """Rule 3 of the docstring: the tokens, or None without a case."""
    m = re.search(r"item (\d+)", joined)
    k = len(labels)
    if m is None or k < 2:
        return None
    case, salt = m.group(1), skill.get("salt", "")
    pick = truth = skill_truth(case, k)
    h = int(hashlib.sha256(("%s:%s" % (salt, case)).encode())
            .hexdigest()[:8], 16) / float(16 ** 8)
    if h >= skill["accuracy"]:
        pick = (truth + 1 + digest("wrong:%s:%s" % (salt, case)) %
                (k - 1)) % k
    c = float(skill["confidence"])
    return [(lab, c if i == pick else (1 - c) / (k - 1))
            for i, lab in enumerate(labels)]


def rule_tokens(spec, labels):
    if isinstance(spec, dict):
        return [(str(tok), float(p)) for tok, p in spec.items()]
    tokens = [(lab, float(p)) for lab, p in zip(labels, spec)]
    rest = 1.0 - sum(p for _, p in tokens)
    if rest > 1e-12:
        tokens.append((FILLER, rest))
    return tokens


def variant(label):
    lo, up = label.lower(), label.upper()
    if lo != label:
        return lo
    if up != label:
        return up
    return label + " "


def transform(mode, tokens, labels):
    """The tokens a fault mode answers instead."""
    folded = set(fold(lab) for lab in labels)
    is_label = [fold(tok) in folded for tok, _ in tokens]
    lab = [(t, p) for (t, p), y in zip(tokens, is_label) if y]
    other = [(t, p) for (t, p), y in zip(tokens, is_label) if not y]
    if mode == "labels_missing":
        return other or [(FILLER, 0.6), ("Sorry", 0.4)]
    if mode == "low_mass":
        lm = sum(p for _, p in lab)
        om = sum(p for _, p in other)
        out = [(t, LOW_MASS * p / lm) for t, p in lab if lm > 0]
        if om > 0:
            out += [(t, (1 - LOW_MASS) * p / om) for t, p in other]
        else:
            out.append((FILLER, 1 - LOW_MASS))
        return out
    if mode == "spaced_mixed_case":
        merged = {}
        for (t, p), y in zip(tokens, is_label):
            if y:
                canon = [x for x in labels if fold(x) == fold(t)][0]
                for v, share in ((" " + canon, 0.6), (variant(canon), 0.4)):
                    merged[v] = merged.get(v, 0.0) + share * p
            else:
                merged[t] = merged.get(t, 0.0) + p
        return list(merged.items())
    return tokens


def token_entry(tok, p):
    return {"token": tok, "logprob": math.log(p),
            "bytes": list(tok.encode("utf-8"))}


# ---------------------------------------------------------------- handler

class Handler(FakeHandler):
    server_version = "fake-openai/1.0"

    def key_refused(self):
        key = STATE.api_key
        if key is None or self.headers.get("Authorization") == \
                "Bearer " + key:
            return False
        self.send_json(401, {"error": {
            "message": "Incorrect API key provided.",
            "type": "invalid_request_error", "code": "invalid_api_key"}})
        return True

    def route(self):
        path = self.path.split("?", 1)[0]
        method = self.command
        try:
            raw = self.read_body() if method == "POST" else b""
        except ValueError as e:
            self.send_json(413, {"error": {"message": str(e)}}, close=True)
            return
        if path == "/_control":
            if method == "POST":
                try:
                    cfg = json.loads(raw.decode("utf-8") or "{}")
                except ValueError:
                    self.send_json(400, {"error": {
                        "message": "control body is not JSON"}})
                    return
                err = STATE.update(cfg)
                if err:
                    self.send_json(400, {"error": {"message": err}})
                    return
            with STATE.lock:
                cfg = STATE.config()
            self.send_json(200, cfg)
        elif path == "/_requests" and method == "GET":
            with STATE.lock:
                out = compact(STATE.requests).encode("utf-8")
            self.send_bytes(200, out)
        elif path == "/_reset" and method == "POST":
            STATE.reset()
            self.send_json(200, {"ok": True})
        elif path == "/v1/models" and method == "GET":
            if not self.key_refused():
                self.send_json(200, {"object": "list", "data": [{
                    "id": "fake-model", "object": "model", "created": 0,
                    "owned_by": "evalgate-tests"}]})
        elif path == "/v1/chat/completions" and method == "POST":
            STATE.enter()
            try:
                self.completion(raw)
            finally:
                STATE.leave()
        else:
            self.send_json(404, {"error": {
                "message": "Not found: %s %s" % (method, path),
                "type": "invalid_request_error"}})

    def completion(self, raw):
        entry = {"time": time.time(), "method": self.command,
                 "path": self.path,
                 "authorization": self.headers.get("Authorization"),
                 "headers": {k: v for k, v in self.headers.items()},
                 "mode": None, "kind": None, "labels": [], "matched": None,
                 "tokens": None, "label_mass": None, "usage": None,
                 "status": None}
        try:
            body = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            body = None
            entry["raw_body"] = raw.decode("utf-8", "replace")
        entry["body"] = body
        STATE.record(entry)

        if self.key_refused():
            entry["status"] = 401
            return
        if not isinstance(body, dict) or not isinstance(
                body.get("messages"), list) or not body["messages"]:
            entry["status"] = 400
            self.send_json(400, {"error": {
                "message": "a JSON object with a non-empty messages array "
                           "is required", "type": "invalid_request_error"}})
            return

        mode, delay_ms = STATE.take_mode()
        entry["mode"] = mode
        with STATE.lock:
            answers = dict(STATE.answers)
            mass = float(STATE.label_mass)
            usage_cfg = STATE.usage
            retry_ms = int(STATE.retry_after_ms)
            call_delay = STATE.call_delay_ms
            response_model = STATE.response_model
            raw_body, raw_status = STATE.raw_body, STATE.raw_status
            pad = STATE.pad_bytes
            skill = STATE.skill
            auth = self.headers.get("Authorization") or ""
            headers = {k: v.replace("%AUTH%", auth)
                       for k, v in STATE.raw_headers.items()}
        log("completion mode=%s" % mode)
        if raw_body is not None:
            entry["status"] = raw_status
            self.send_bytes(raw_status, raw_body.replace(
                "%AUTH%", auth).encode("utf-8"), extra=headers)
            return

        texts = [message_text(m) for m in body["messages"]]
        kind, labels = find_labels(texts[-1])
        entry["kind"], entry["labels"] = kind, labels
        joined = "\n".join(texts)
        tokens = None
        for match, spec in answers.items():
            if match in joined:
                entry["matched"] = match
                tokens = rule_tokens(spec, labels)
                break
        if tokens is None and skill is not None:
            tokens = skill_tokens(skill, joined, labels)
        if tokens is None:
            tokens = default_tokens(kind, labels, mass) if labels else \
                [(FILLER, 0.6), ("Sorry", 0.4)]
        tokens = transform(mode, tokens, labels)
        tokens = [(t, p) for t, p in tokens if p > 0]
        tokens.sort(key=lambda tp: -tp[1])       # stable: ties keep order
        n = body.get("top_logprobs")
        n = n if isinstance(n, int) and not isinstance(n, bool) and n > 0 \
            else 0
        sent = tokens[:n]
        folded = set(fold(x) for x in labels)
        entry["tokens"] = [[t, p] for t, p in sent]
        entry["label_mass"] = sum(p for t, p in sent if fold(t) in folded)

        usage = {"prompt_tokens": int(math.ceil(len(compact(
                     body["messages"]).encode("utf-8")) / 4.0)),
                 "completion_tokens": 1}
        usage["total_tokens"] = usage["prompt_tokens"] + 1
        if isinstance(usage_cfg, dict):
            usage = usage_cfg

        if call_delay:
            time.sleep(call_delay / 1000.0)
        if mode == "slow":
            time.sleep(delay_ms / 1000.0)
        if mode == "hang":
            deadline = time.time() + HANG_SECONDS
            while time.time() < deadline and not self.client_gone(0.5):
                pass
            self.close_connection = True
            return
        if mode == "error500":
            entry["status"] = 500
            self.send_json(500, {"error": {
                "message": "The server had an error (fake).",
                "type": "server_error"}})
            return
        if mode == "error429":
            entry["status"] = 429
            self.send_json(429, {"error": {
                "message": "Rate limit reached (fake).",
                "type": "rate_limit_exceeded"}},
                extra={"Retry-After": str(max(1, int(math.ceil(
                    retry_ms / 1000.0))))})
            return
        if mode == "garbage":
            entry["status"] = 200
            self.send_bytes(200, b'{"id": "chatcmpl-fake", "choices": '
                                 b'[{"logprobs": {"content": [oops')
            return

        top = sent[0] if sent else (FILLER, 1.0)
        logprobs = {"content": [dict(token_entry(*top), top_logprobs=[
            token_entry(t, p) for t, p in sent])]}
        if mode == "no_logprobs" or body.get("logprobs") is not True:
            logprobs = None
            entry["label_mass"] = None
        obj = {"id": "chatcmpl-fake-%d" % entry["seq"],
               "object": "chat.completion", "created": int(time.time()),
               "model": response_model or str(body.get("model", "")),
               "choices": [{"index": 0, "finish_reason": "length",
                            "message": {"role": "assistant",
                                        "content": top[0]},
                            "logprobs": logprobs}]}
        if usage_cfg is not False:
            obj["usage"] = usage
            entry["usage"] = usage
        if pad:
            obj["pad"] = "p" * pad
        entry["status"] = 200
        self.send_json(200, obj, extra=headers)


def main():
    global STATE
    ap = argparse.ArgumentParser(
        description="Fake OpenAI-compatible chat-completions server.")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--mode", default="ok", choices=MODES)
    ap.add_argument("--delay-ms", type=float, default=0)
    ap.add_argument("--api-key", default=None,
                    help="require Authorization: Bearer KEY on /v1/*")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    STATE = State(args.mode, args.delay_ms, args.api_key)

    serve(Handler, args.host, args.port, "fake_openai", args.verbose,
          "mode=%s" % args.mode)


if __name__ == "__main__":
    main()
