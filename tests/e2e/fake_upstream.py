#!/usr/bin/env python3
"""Fake System One upstream with fault modes, for evalgate's end-to-end tests.

Python 3 standard library only. Run as its own process:

    python3 tests/e2e/fake_upstream.py --port 0 [--mode MODE] [--host 127.0.0.1]
                                       [--delay-ms N] [--api-key KEY] [--verbose]

The first line on stdout is `PORT <n>` (the bound port; --port 0 picks a free
one), flushed as soon as the socket listens. SIGTERM or SIGINT ends it at once.

Wire format (the public System One contract, see tests/sdk/NOTES.md):

    POST /v1/systemone   {state, model, questions}
      200 {"model": M,
           "answers": {name: answer},
           "usage": {"input_tokens": int, "output_tokens": int}}
        choice: {"type": "choice", "choice": key, "confidence": max p,
                 "probabilities": {option key: p}}        (criteria key order)
        score:  {"type": "score", "score": sum(i * p_i), "confidence": max p,
                 "legend": {"0": criteria[0], ...},
                 "probabilities": {"0": p_0, ..., "n-1": p_n-1}}
        noul:   {"type": "noul", "noul": p_true}
      M is the request's `model` echoed (default "jev-latest"), unless the
      control field `response_model` is set (the real API answers with the
      resolved version, e.g. "jev-1.14.0").
      usage: input_tokens = ceil(len(compact JSON of state and questions) / 4),
             output_tokens = number of questions.
    GET /v1/models       200 {"models": [{"name", "description", "release_date"}]}

Default distributions (computable by hand):
    choice with k options:  p_i = (i + 1) / (k (k + 1) / 2), i = 0..k-1, in the
                            criteria's key order (so the last key wins);
    score with n levels:    p_i = (i + 1) / (n (n + 1) / 2);
    noul:                   0.7.
    e.g. choice {a, b, c} -> a 1/6, b 2/6, c 3/6; score of 4 levels ->
    0.1 0.2 0.3 0.4, score = 2.0, confidence 0.4.
A distribution override (control `distributions`, by question name) is used as
given, never renormalised: a list (key / level order; extra values ignored,
missing ones omitted), an object {key: p} (used verbatim), or a number (noul).

Control (never subject to the fault modes):
    POST /_control  JSON, every field optional, only given fields change:
        {"mode": MODE, "delay_ms": n, "distributions": {name: [p...] | {k: p} | p},
         "times": n,              # the mode applies to the next n evaluation
                                  # requests only, then the mode becomes "ok"
         "retry_after_ms": n,     # for error429 / error529 (default 1000)
         "response_model": str | null, "api_key": str | null,
         "usage": {...} | false,  # override usage object, or false to omit it
         "raw_body": str,         # the body of mode raw
         "models": [...]}         # override the /v1/models list
        -> 200 the whole current configuration
    GET  /_control  -> the current configuration
    GET  /_requests -> JSON array of every request received on /v1/systemone:
        {"seq", "time", "method", "path", "authorization", "headers", "body"}
        (body is the parsed JSON, or null with "raw_body" when not JSON)
    POST /_reset    -> clears the configuration (mode back to the --mode given
                       at start, delay to --delay-ms) and the request log

Modes (apply to POST /v1/systemone only):
    ok             normal answer
    slow           sleep delay_ms, then answer ok
    hang           read the request, never answer; returns after 600 s or when
                   the client closes the connection
    error500       500 {"error": {"type": "api_error", "message": ...}}
    error529       529 {"error": {"type": "overloaded_error", ...}},
                   Retry-After and retry-after-ms headers
    error429       429 {"error": {"type": "rate_limit_error", ...}}, same headers
    malformed      200 application/json whose body is not JSON
    missing_option 200, but the first choice question's probabilities lack its
                   last option (if there is no choice question: the first score
                   question lacks its last level)
    wrong_shape    200 {"model": ..., "answers": [], "usage": {...}}
    huge           200, a valid response padded to about 20 MB (Content-Length set)
    huge_chunked   the same 20 MB, chunked: no Content-Length tells its size
    raw            200 application/json, the control field `raw_body` (a
                   string) sent verbatim: any shape of answer (a lone
                   surrogate \udc80-\udcff is sent as that raw byte, for
                   invalid UTF-8)
    trickle        headers (with the full Content-Length), then the body 1 byte
                   per second
    reset          headers (with the full Content-Length), half the body, then
                   the connection is reset (RST)

Every response carries `x-typesafe-request-id`. An `api_key` (flag or control)
makes /v1/* answer 401 unless `Authorization: Bearer <api_key>` is sent.
A request body that is not JSON, or lacks `questions`, or has a question of an
unknown type, gets a 422 {"detail": [{"loc", "msg", "type"}]}.
"""

import argparse
import json
import math
import os
import socket
import struct
import threading
import time
import uuid

from fake_http import FakeHandler, compact, log, serve

MODES = (
    "ok", "slow", "hang", "error500", "error529", "error429", "malformed",
    "missing_option", "wrong_shape", "huge", "trickle", "reset",
    "huge_chunked", "raw",
)
HUGE_BYTES = 20 * 1024 * 1024
HANG_SECONDS = 600
DEFAULT_MODELS = [
    {"name": "jev-latest",
     "description": "Fake System One model (alias of jev-1.14.0) for tests.",
     "release_date": "2025-06-01"},
    {"name": "jev-1.14.0",
     "description": "Fake System One model, pinned version, for tests.",
     "release_date": "2025-06-01"},
]






class State:
    """Configuration and request log shared by all handler threads."""

    def __init__(self, mode, delay_ms, api_key):
        self.lock = threading.Lock()
        self.start_mode = mode
        self.start_delay = delay_ms
        self.start_key = api_key
        self.requests = []
        self.seq = 0
        self.reset()

    def reset(self):
        with self.lock:
            self.mode = self.start_mode
            self.delay_ms = self.start_delay
            self.distributions = {}
            self.times = None
            self.retry_after_ms = 1000
            self.response_model = None
            self.api_key = self.start_key
            self.usage = None
            self.models = None
            self.raw_body = ""
            self.requests = []
            self.seq = 0

    def config(self):
        return {
            "mode": self.mode, "delay_ms": self.delay_ms,
            "distributions": self.distributions, "times": self.times,
            "retry_after_ms": self.retry_after_ms,
            "response_model": self.response_model, "api_key": self.api_key,
            "usage": self.usage,
            "models": self.models if self.models is not None else DEFAULT_MODELS,
            "raw_body": self.raw_body,
        }

    def update(self, cfg):
        """Apply a control object; returns an error string or None."""
        if not isinstance(cfg, dict):
            return "control body must be a JSON object"
        if "mode" in cfg and cfg["mode"] not in MODES:
            return "unknown mode %r; modes: %s" % (cfg["mode"], ", ".join(MODES))
        for k in ("delay_ms", "retry_after_ms"):
            if k in cfg and not (isinstance(cfg[k], (int, float))
                                 and not isinstance(cfg[k], bool) and cfg[k] >= 0):
                return "%s must be a number >= 0" % k
        if "times" in cfg and cfg["times"] is not None and not (
                isinstance(cfg["times"], int) and cfg["times"] >= 0):
            return "times must be an integer >= 0 or null"
        if "distributions" in cfg and not isinstance(cfg["distributions"], dict):
            return "distributions must be an object"
        if "models" in cfg and cfg["models"] is not None and not isinstance(cfg["models"], list):
            return "models must be an array or null"
        if "raw_body" in cfg and not isinstance(cfg["raw_body"], str):
            return "raw_body must be a string"
        with self.lock:
            for k in ("mode", "delay_ms", "distributions", "times", "retry_after_ms",
                      "response_model", "api_key", "usage", "models",
                      "raw_body"):
                if k in cfg:
                    setattr(self, k, cfg[k])
        return None

    def take_mode(self):
        """Mode and delay for one evaluation request (consumes `times`)."""
        with self.lock:
            mode, delay = self.mode, self.delay_ms
            if self.times is not None:
                if self.times <= 0:
                    mode = self.mode = "ok"
                    self.times = None
                else:
                    self.times -= 1
            return mode, delay

    def record(self, entry):
        with self.lock:
            self.seq += 1
            entry["seq"] = self.seq
            self.requests.append(entry)


STATE = None


# ---------------------------------------------------------------- answers

def default_dist(n):
    total = n * (n + 1) / 2.0
    return [(i + 1) / total for i in range(n)]


def keyed_dist(keys, override):
    """Probabilities keyed by `keys` (ordered) from an override or the default."""
    if isinstance(override, dict):
        return dict(override)
    if isinstance(override, list):
        return {k: p for k, p in zip(keys, override)}
    return dict(zip(keys, default_dist(len(keys))))


def argmax_key(probs):
    best_k, best_p = None, None
    for k, p in probs.items():
        if isinstance(p, (int, float)) and (best_p is None or p > best_p):
            best_k, best_p = k, p
    return best_k, best_p


def build_answers(questions, dists):
    answers = {}
    for name, q in questions.items():
        qtype = q.get("type")
        crit = q.get("criteria")
        override = dists.get(name)
        if qtype == "choice":
            keys = list(crit.keys()) if isinstance(crit, dict) else []
            probs = keyed_dist(keys, override)
            choice, conf = argmax_key(probs)
            answers[name] = {"type": "choice", "choice": choice,
                             "confidence": conf if conf is not None else 0.0,
                             "probabilities": probs}
        elif qtype == "score":
            levels = crit if isinstance(crit, list) else []
            keys = [str(i) for i in range(len(levels))]
            probs = keyed_dist(keys, override)
            score = 0.0
            for k, p in probs.items():
                try:
                    score += int(k) * float(p)
                except (TypeError, ValueError):
                    pass
            _, conf = argmax_key(probs)
            answers[name] = {"type": "score", "score": score,
                             "confidence": conf if conf is not None else 0.0,
                             "legend": {str(i): lv for i, lv in enumerate(levels)},
                             "probabilities": probs}
        else:  # noul
            p = override if isinstance(override, (int, float)) and not isinstance(
                override, bool) else 0.7
            answers[name] = {"type": "noul", "noul": p}
    return answers


def validate(body):
    """FastAPI-style validation errors for what the upstream refuses."""
    errs = []
    if not isinstance(body, dict):
        return [{"loc": ["body"], "msg": "Input should be a valid dictionary",
                 "type": "dict_type"}]
    qs = body.get("questions")
    if not isinstance(qs, dict) or not qs:
        errs.append({"loc": ["body", "questions"],
                     "msg": "At least one question is required", "type": "value_error"})
        return errs
    for name, q in qs.items():
        if not isinstance(q, dict) or q.get("type") not in ("choice", "score", "noul"):
            errs.append({"loc": ["body", "questions", name, "type"],
                         "msg": "Input tag should be 'noul', 'choice' or 'score'",
                         "type": "union_tag_invalid"})
        elif q["type"] == "choice" and not (isinstance(q.get("criteria"), dict)
                                            and q["criteria"]):
            errs.append({"loc": ["body", "questions", name, "criteria"],
                         "msg": "Choice criteria must be a non-empty object",
                         "type": "value_error"})
        elif q["type"] == "score" and not (isinstance(q.get("criteria"), list)
                                           and len(q["criteria"]) >= 2):
            errs.append({"loc": ["body", "questions", name, "criteria"],
                         "msg": "Score criteria must be a list of at least 2 levels",
                         "type": "value_error"})
    return errs


# ---------------------------------------------------------------- handler

class Handler(FakeHandler):
    server_version = "fake-systemone/1.0"

    def extra_headers(self):
        return {"x-typesafe-request-id": "req_" + uuid.uuid4().hex}

    def bug_body(self, e):
        return {"error": {"type": "api_error",
                          "message": "fake upstream bug: %r" % (e,)}}

    def check_key(self):
        key = STATE.api_key
        if key is None:
            return True
        if self.headers.get("Authorization") == "Bearer " + key:
            return True
        self.send_json(401, {"error": {"type": "authentication_error",
                                       "message": "Invalid API key."}})
        return False

    # -- routes

    def route(self):
        path = self.path.split("?", 1)[0]
        method = self.command
        try:
            raw = self.read_body() if method in ("POST", "PUT", "PATCH") else b""
        except ValueError as e:
            self.send_json(413, {"error": {"type": "request_too_large",
                                           "message": str(e)}}, close=True)
            return

        if path == "/_control":
            if method == "GET":
                with STATE.lock:
                    cfg = STATE.config()
                self.send_json(200, cfg)
                return
            if method != "POST":
                return self.not_allowed()
            try:
                cfg = json.loads(raw.decode("utf-8") or "{}")
            except ValueError:
                self.send_json(400, {"error": {"message": "control body is not JSON"}})
                return
            err = STATE.update(cfg)
            if err:
                self.send_json(400, {"error": {"message": err}})
                return
            with STATE.lock:
                cfg = STATE.config()
            log("control: %s" % compact(cfg))
            self.send_json(200, cfg)
            return
        if path == "/_requests":
            if method != "GET":
                return self.not_allowed()
            with STATE.lock:
                out = compact(STATE.requests).encode("utf-8")
            self.send_bytes(200, out)
            return
        if path == "/_reset":
            if method != "POST":
                return self.not_allowed()
            STATE.reset()
            self.send_json(200, {"ok": True})
            return
        if path == "/v1/models":
            if method != "GET":
                return self.not_allowed()
            if not self.check_key():
                return
            with STATE.lock:
                models = STATE.models if STATE.models is not None else DEFAULT_MODELS
            self.send_json(200, {"models": models})
            return
        if path == "/v1/systemone":
            if method != "POST":
                return self.not_allowed()
            self.systemone(raw)
            return
        self.send_json(404, {"error": {"type": "not_found_error",
                                       "message": "Not found: %s" % path}})

    def not_allowed(self):
        self.send_json(405, {"error": {"type": "method_not_allowed",
                                       "message": "Method not allowed."}})

    def systemone(self, raw):
        entry = {"time": time.time(), "method": self.command, "path": self.path,
                 "authorization": self.headers.get("Authorization"),
                 "headers": {k: v for k, v in self.headers.items()}}
        try:
            body = json.loads(raw.decode("utf-8"))
            entry["body"] = body
        except (ValueError, UnicodeDecodeError):
            body = None
            entry["body"] = None
            entry["raw_body"] = raw.decode("utf-8", "replace")
        STATE.record(entry)

        if not self.check_key():
            return
        if body is None:
            self.send_json(422, {"detail": [{"loc": ["body"], "msg": "JSON decode error",
                                             "type": "json_invalid"}]})
            return
        errs = validate(body)
        if errs:
            self.send_json(422, {"detail": errs})
            return

        mode, delay_ms = STATE.take_mode()
        log("systemone mode=%s" % mode)
        with STATE.lock:
            dists = dict(STATE.distributions)
            retry_ms = int(STATE.retry_after_ms)
            response_model = STATE.response_model
            usage_cfg = STATE.usage
            raw_body = STATE.raw_body

        questions = body["questions"]
        model = response_model or body.get("model") or "jev-latest"
        if not isinstance(model, str):
            model = str(model)
        usage = {"input_tokens": int(math.ceil(len(compact(
                     [body.get("state"), questions]).encode("utf-8")) / 4.0)),
                 "output_tokens": len(questions)}
        if isinstance(usage_cfg, dict):
            usage = usage_cfg
        answers = build_answers(questions, dists)

        def response(ans):
            obj = {"model": model, "answers": ans}
            if usage_cfg is not False:
                obj["usage"] = usage
            return obj

        retry_headers = {"Retry-After": str(max(1, int(math.ceil(retry_ms / 1000.0)))),
                         "retry-after-ms": str(retry_ms)}

        if mode == "slow":
            time.sleep(delay_ms / 1000.0)
            mode = "ok"
        if mode == "ok":
            self.send_json(200, response(answers))
        elif mode == "hang":
            deadline = time.time() + HANG_SECONDS
            while time.time() < deadline:
                if self.client_gone(1.0):
                    break
            self.close_connection = True
        elif mode == "error500":
            self.send_json(500, {"error": {"type": "api_error",
                                           "message": "Internal server error (fake)."}})
        elif mode == "error529":
            self.send_json(529, {"error": {"type": "overloaded_error",
                                           "message": "Overloaded (fake)."}},
                           extra=retry_headers)
        elif mode == "error429":
            self.send_json(429, {"error": {"type": "rate_limit_error",
                                           "message": "Rate limit exceeded (fake)."}},
                           extra=retry_headers)
        elif mode == "malformed":
            self.send_bytes(200, b'{"model": "jev-latest", "answers": {"x": {"type": '
                                 b'"choice", "probabilities": {0.5, oops')
        elif mode == "missing_option":
            target = None
            for want in ("choice", "score"):
                for name, a in answers.items():
                    if a["type"] == want and a["probabilities"]:
                        target = name
                        break
                if target:
                    break
            if target:
                probs = answers[target]["probabilities"]
                probs.pop(list(probs.keys())[-1])
            self.send_json(200, response(answers))
        elif mode == "wrong_shape":
            obj = response([])
            self.send_json(200, obj)
        elif mode == "huge":
            self.send_huge(response(answers))
        elif mode == "huge_chunked":
            self.send_huge(response(answers), chunked=True)
        elif mode == "raw":
            # surrogateescape: "\udcff" in the control JSON is a raw 0xff
            self.send_bytes(200, raw_body.encode("utf-8", "surrogateescape"))
        elif mode == "trickle":
            self.send_slowly(compact(response(answers)).encode("utf-8"))
        elif mode == "reset":
            self.send_reset(compact(response(answers)).encode("utf-8"))
        else:
            self.send_json(500, {"error": {"message": "unknown mode %s" % mode}})

    def start_body(self, length, ctype="application/json"):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(length))
        self.send_header("x-typesafe-request-id", "req_" + uuid.uuid4().hex)
        self.end_headers()
        self.wfile.flush()

    def send_huge(self, obj, chunked=False):
        # {"padding":"xxx...", <rest of the object>}
        rest = compact(obj).encode("utf-8")
        head = b'{"padding":"'
        tail = b'",' + rest[1:]
        pad = max(0, HUGE_BYTES - len(head) - len(tail))
        if chunked:
            self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("x-typesafe-request-id", "req_" + uuid.uuid4().hex)
            self.end_headers()

            def write(data):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        else:
            self.start_body(len(head) + pad + len(tail))
            write = self.wfile.write
        write(head)
        block = b"x" * 65536
        left = pad
        while left > 0:
            n = min(left, len(block))
            write(block[:n])
            left -= n
        write(tail)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def send_slowly(self, data):
        self.close_connection = True
        self.start_body(len(data))
        for i in range(len(data)):
            self.wfile.write(data[i:i + 1])
            self.wfile.flush()
            if i + 1 < len(data) and self.client_gone(1.0):
                return

    def send_reset(self, data):
        self.close_connection = True
        self.start_body(len(data))
        self.wfile.write(data[:len(data) // 2])
        self.wfile.flush()
        # SO_LINGER 0 then close: the kernel sends RST. detach() leaves the
        # socket object without a descriptor, so the server's own cleanup
        # can never close a descriptor number reused by another thread.
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            os.close(self.connection.detach())
        except OSError:
            pass


def main():
    global STATE
    ap = argparse.ArgumentParser(description="Fake System One upstream for tests.")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--mode", default="ok", choices=MODES)
    ap.add_argument("--delay-ms", type=float, default=0)
    ap.add_argument("--api-key", default=None,
                    help="require Authorization: Bearer KEY on /v1/*")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    STATE = State(args.mode, args.delay_ms, args.api_key)

    serve(Handler, args.host, args.port, "fake_upstream", args.verbose,
          "mode=%s" % args.mode)


if __name__ == "__main__":
    main()
