#!/usr/bin/env python3
"""mock_provider.py - a loopback model provider for shiro's tests and benches.

It speaks the three wire formats the model worker knows, for real: HTTP/1.1
with keep-alive, server-sent events with the providers' event names and JSON
shapes, chunked transfer, and the providers' error bodies and headers.

    mock_provider.py --port-file FILE --log FILE [--script FILE] [--tls PEM]

It binds 127.0.0.1 on a port the kernel picks and writes that port to
--port-file (atomically: a reader sees all of it or nothing).  With --tls
it speaks HTTPS with the key and certificate in PEM (tests/mock_tls.pem
is a self-signed one for 127.0.0.1 and localhost, which no client
trusts: it shows a TLS failure).  It exits on
SIGTERM, and when its parent process dies.

Paths (the wire is chosen by the path, as the worker's base URL + path):
    POST .../v1/messages          anthropic (Messages API)
    POST .../responses            openai-responses (Responses API)
    POST .../chat/completions     openai-chat (Chat Completions)
    GET  .../models               200, an empty model list (for --probe)
    POST /_mock/script            replace the script with the body (JSON)
    GET  /_mock/ping              200 "pong"

The log (--log) gets one JSON object per line:
    {"kind": "request", "n": 1, "t_ns": CLOCK_MONOTONIC ns once the body
     was read, "t0_ns": the same once its request line was read,
     "method": "POST", "path": "/v1/messages",
     "headers": [["Host", "127.0.0.1:4242"], ...],   (in order, as sent)
     "body": "<the raw body, UTF-8 text>"}
    {"kind": "disconnect", "n": 1, "t_ns": ...}       (a client left a
                                                      stalled or endless
                                                      response)
    {"kind": "closed", "n": 1, "t_ns": ...}           (the mock ended a
                                                      response early: cut)

The script (--script FILE, or POST /_mock/script) is a JSON object:
    {"responses": [R, ...],      taken in order, each once unless "times"
     "auto": A}                  what to answer when no response is left
A request takes the first response R whose "match" (if any) is a substring
of its body; a used response is removed when its "times" (default 1) runs
out ("times": -1 keeps it).  With no response left and no "auto", the
answer is a short reply "(mock: no scripted response left)".

R, every key optional:
    "match": "text"            only for a request whose body holds this
    "times": N                 use it N times (-1: forever)
    "status": 200              the HTTP status; not 2xx sends an error body
    "error": {"type": T, "message": M, "code": C}
                               the error body in the wire's own format
    "body": "raw"              a raw body instead (any status)
    "content_type": "..."      override the content type
    "headers": {"name": "value"}   more response headers (retry-after,
                               retry-after-ms, x-should-retry, ...)
    "request_id": "req_1"      the request id header (request-id for
                               anthropic, x-request-id for openai); by
                               default "req_mock_<n>"
    "delay_ms": N              wait before the status line
    "text": "reply"            the reply's text, streamed in deltas
    "chunk": 8                 characters per text or thinking delta
    "thinking": "..."          thinking before the text
    "signature": "sig"         its signature (anthropic) or encrypted
                               content (openai-responses)
    "redacted": "data"         an anthropic redacted_thinking block
    "tools": [{"id": "t1", "name": "zoom", "input": {...}}]
                               tool calls after the text ("input_raw": a
                               string sent as the arguments instead)
    "usage": {"input": I, "output": O, "cache_read": R, "cache_write": W}
                               in the wire's fields (openai: prompt or
                               input tokens = I + R, cached tokens = R)
    "stop": "..."              the wire's own stop reason (end_turn,
                               max_tokens, length, max_output_tokens, ...)
    "model": "m"               the model reported (default: the request's)
    "drip": {"bytes": B, "ms": M}   send the stream B bytes every M ms
    "cut_after": N             close the connection after N events
    "stall_after": N           after N events send nothing more, until
                               the client leaves (at most 120 s)
    "error_after": N           after N events send the wire's error event
                               ("error" gives its type and message)
    "endless": true            the events but the last, then keep-alive
                               events (pings) until the client leaves
    "omit_end": true           leave out the last event (message_stop,
                               response.completed, finish_reason+[DONE])
    "no_done": true            openai-chat: no "data: [DONE]"
    "garbage": "bytes"         a 200 whose body is this text (content type
                               text/event-stream unless content_type says)
    "long_line": N             a 200 stream of one data line of N bytes
                               and no line end
    "raw_events": [[name, data], ...]
                               these events verbatim (name null: a data
                               line only) instead of the generated ones

Top-level script keys besides "responses" and "auto":
    "strict": true             check each request as the providers do and
                               answer their 400s for the shapes they
                               refuse (see strict_check): a tool result
                               without its call, a call without its
                               result, a final assistant message without
                               its thinking (anthropic, thinking on), an
                               item without its reasoning item or a
                               reasoning item without its following item
                               (openai-responses), a tool message without
                               its tool_calls (openai-chat).  The log gets
                               {"kind": "refused", "n": N, "why": ...}.
In any string of a response, "{n}" becomes the request's number (so a
response used many times gives each tool call its own id and input).

A, the automatic mode (for benches and long runs):
    {"latency_ms": 100,        wait before answering
     "marker": "<512 dashes>", a body holding it is a compaction
     "summary_bytes": 300,     a compaction's line: this many bytes, made
                               from a hash of the request body
     "reply": "ok"}            any other request's reply
"""

import argparse
import ctypes
import hashlib
import json
import os
import select
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = {"responses": [], "auto": None, "log": None, "n": 0, "strict": False,
         "issued": {}}
LOCK = threading.Lock()
RULER = "-" * 512


def log_line(obj):
    line = json.dumps(obj, ensure_ascii=False) + "\n"
    with LOCK:
        STATE["log"].write(line)
        STATE["log"].flush()


def take(body):
    """The scripted response for this body, or None."""
    with LOCK:
        rs = STATE["responses"]
        for k, r in enumerate(rs):
            m = r.get("match")
            if m is not None and m not in body:
                continue
            times = r.get("times", 1)
            if times != -1:
                times -= 1
                if times <= 0:
                    del rs[k]
                else:
                    r["times"] = times
            return r
        auto = STATE["auto"]
    if auto is None:
        return {"text": "(mock: no scripted response left)"}
    if auto.get("latency_ms"):
        time.sleep(auto["latency_ms"] / 1000.0)
    if auto.get("marker", RULER) in body:
        n = int(auto.get("summary_bytes", 300))
        h = hashlib.sha256(body.encode("utf-8", "replace")).hexdigest()
        line = ""
        while len(line) < n:
            line += "summary " + h[: 8 + len(line) % 24] + " "
        return {"text": line[:n].rstrip() or "summary"}
    return {"text": auto.get("reply", "ok")}


def chunks(s, n):
    n = max(1, int(n))
    return [s[k : k + n] for k in range(0, len(s), n)] if s else []


# --- the three wires' events ------------------------------------------------


def ev(name, obj):
    return (name, json.dumps(obj, ensure_ascii=False, separators=(",", ":")))


def anthropic_events(r, req, n):
    model = r.get("model", req.get("model", "mock"))
    u = r.get("usage", {})
    step = r.get("chunk", 8)
    out = [
        ev(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_mock_%d" % n,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": u.get("input", 0),
                        "cache_creation_input_tokens": u.get("cache_write", 0),
                        "cache_read_input_tokens": u.get("cache_read", 0),
                        "output_tokens": 1,
                    },
                },
            },
        ),
        ev("ping", {"type": "ping"}),
    ]
    idx = 0
    if "redacted" in r:
        out.append(ev("content_block_start", {"type": "content_block_start", "index": idx,
                      "content_block": {"type": "redacted_thinking", "data": r["redacted"]}}))
        out.append(ev("content_block_stop", {"type": "content_block_stop", "index": idx}))
        idx += 1
    if "thinking" in r:
        out.append(ev("content_block_start", {"type": "content_block_start", "index": idx,
                      "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
        for c in chunks(r["thinking"], step):
            out.append(ev("content_block_delta", {"type": "content_block_delta", "index": idx,
                          "delta": {"type": "thinking_delta", "thinking": c}}))
        out.append(ev("content_block_delta", {"type": "content_block_delta", "index": idx,
                      "delta": {"type": "signature_delta", "signature": r.get("signature", "")}}))
        out.append(ev("content_block_stop", {"type": "content_block_stop", "index": idx}))
        idx += 1
    if r.get("text") is not None and (r.get("text") != "" or not r.get("tools")):
        out.append(ev("content_block_start", {"type": "content_block_start", "index": idx,
                      "content_block": {"type": "text", "text": ""}}))
        for c in chunks(r.get("text", ""), step):
            out.append(ev("content_block_delta", {"type": "content_block_delta", "index": idx,
                          "delta": {"type": "text_delta", "text": c}}))
        out.append(ev("content_block_stop", {"type": "content_block_stop", "index": idx}))
        idx += 1
    for t in r.get("tools", []):
        out.append(ev("content_block_start", {"type": "content_block_start", "index": idx,
                      "content_block": {"type": "tool_use", "id": t["id"], "name": t["name"], "input": {}}}))
        args = t.get("input_raw", json.dumps(t.get("input", {}), separators=(",", ":")))
        for c in chunks(args, step):
            out.append(ev("content_block_delta", {"type": "content_block_delta", "index": idx,
                          "delta": {"type": "input_json_delta", "partial_json": c}}))
        out.append(ev("content_block_stop", {"type": "content_block_stop", "index": idx}))
        idx += 1
    stop = r.get("stop", "tool_use" if r.get("tools") else "end_turn")
    out.append(ev("message_delta", {"type": "message_delta",
                  "delta": {"stop_reason": stop, "stop_sequence": None},
                  "usage": {"output_tokens": u.get("output", 0)}}))
    out.append(ev("message_stop", {"type": "message_stop"}))
    return out


def anthropic_error_event(r):
    e = r.get("error", {})
    return ev("error", {"type": "error", "error": {"type": e.get("type", "overloaded_error"),
              "message": e.get("message", "Overloaded")}})


def responses_events(r, req, n):
    model = r.get("model", req.get("model", "mock"))
    u = r.get("usage", {})
    step = r.get("chunk", 8)
    seq = [0]
    rid = "resp_mock_%d" % n

    def e(t, obj):
        obj = dict(obj)
        obj["type"] = t
        obj["sequence_number"] = seq[0]
        seq[0] += 1
        return ev(t, obj)

    base = {"id": rid, "object": "response", "created_at": int(time.time()),
            "model": model, "output": []}
    out = [e("response.created", {"response": dict(base, status="in_progress")}),
           e("response.in_progress", {"response": dict(base, status="in_progress")})]
    output = []
    k = 0
    if "thinking" in r:
        iid = "rs_mock_%d" % n
        out.append(e("response.output_item.added", {"output_index": k,
                     "item": {"type": "reasoning", "id": iid, "summary": []}}))
        out.append(e("response.reasoning_summary_part.added", {"item_id": iid, "output_index": k,
                     "summary_index": 0, "part": {"type": "summary_text", "text": ""}}))
        for c in chunks(r["thinking"], step):
            out.append(e("response.reasoning_summary_text.delta", {"item_id": iid, "output_index": k,
                         "summary_index": 0, "delta": c}))
        out.append(e("response.reasoning_summary_text.done", {"item_id": iid, "output_index": k,
                     "summary_index": 0, "text": r["thinking"]}))
        item = {"type": "reasoning", "id": iid,
                "summary": [{"type": "summary_text", "text": r["thinking"]}],
                "encrypted_content": r.get("signature", "")}
        out.append(e("response.output_item.done", {"output_index": k, "item": item}))
        output.append(item)
        k += 1
    # The items of this response that need its reasoning item when they
    # are sent back by id (strict mode checks it).
    reasoning = "rs_mock_%d" % n if "thinking" in r else None
    if r.get("text") is not None and (r.get("text") != "" or not r.get("tools")):
        iid = "msg_mock_%d" % n
        if reasoning:
            with LOCK:
                STATE["issued"][iid] = reasoning
        out.append(e("response.output_item.added", {"output_index": k,
                     "item": {"type": "message", "id": iid, "status": "in_progress",
                              "role": "assistant", "content": []}}))
        out.append(e("response.content_part.added", {"item_id": iid, "output_index": k,
                     "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}))
        for c in chunks(r.get("text", ""), step):
            out.append(e("response.output_text.delta", {"item_id": iid, "output_index": k,
                         "content_index": 0, "delta": c}))
        out.append(e("response.output_text.done", {"item_id": iid, "output_index": k,
                     "content_index": 0, "text": r.get("text", "")}))
        item = {"type": "message", "id": iid, "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": r.get("text", ""), "annotations": []}]}
        out.append(e("response.content_part.done", {"item_id": iid, "output_index": k,
                     "content_index": 0, "part": item["content"][0]}))
        out.append(e("response.output_item.done", {"output_index": k, "item": item}))
        output.append(item)
        k += 1
    for t in r.get("tools", []):
        iid = "fc_mock_%d_%d" % (n, k)
        if reasoning:
            with LOCK:
                STATE["issued"][iid] = reasoning
        args = t.get("input_raw", json.dumps(t.get("input", {}), separators=(",", ":")))
        out.append(e("response.output_item.added", {"output_index": k,
                     "item": {"type": "function_call", "id": iid, "call_id": t["id"],
                              "name": t["name"], "arguments": "", "status": "in_progress"}}))
        for c in chunks(args, step):
            out.append(e("response.function_call_arguments.delta", {"item_id": iid,
                         "output_index": k, "delta": c}))
        out.append(e("response.function_call_arguments.done", {"item_id": iid,
                     "output_index": k, "arguments": args}))
        item = {"type": "function_call", "id": iid, "call_id": t["id"], "name": t["name"],
                "arguments": args, "status": "completed"}
        out.append(e("response.output_item.done", {"output_index": k, "item": item}))
        output.append(item)
        k += 1
    usage = {"input_tokens": u.get("input", 0) + u.get("cache_read", 0),
             "input_tokens_details": {"cached_tokens": u.get("cache_read", 0)},
             "output_tokens": u.get("output", 0),
             "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": u.get("input", 0) + u.get("cache_read", 0) + u.get("output", 0)}
    stop = r.get("stop")
    if stop in ("max_output_tokens", "content_filter"):
        out.append(e("response.incomplete", {"response": dict(base, status="incomplete",
                     output=output, usage=usage, incomplete_details={"reason": stop})}))
    else:
        out.append(e("response.completed", {"response": dict(base, status="completed",
                     output=output, usage=usage)}))
    return out


def responses_error_event(r):
    er = r.get("error", {})
    return ev("error", {"type": "error", "code": er.get("code", "server_error"),
              "message": er.get("message", "The server had an error"), "param": None})


def chat_events(r, req, n):
    model = r.get("model", req.get("model", "mock"))
    u = r.get("usage", {})
    step = r.get("chunk", 8)
    cid = "chatcmpl-mock-%d" % n
    created = int(time.time())

    def c(delta, finish=None):
        return ev(None, {"id": cid, "object": "chat.completion.chunk", "created": created,
                         "model": model, "choices": [{"index": 0, "delta": delta,
                                                      "logprobs": None, "finish_reason": finish}]})

    out = [c({"role": "assistant", "content": ""})]
    for x in chunks(r.get("thinking", ""), step):
        out.append(c({"reasoning_content": x}))
    for x in chunks(r.get("text", ""), step):
        out.append(c({"content": x}))
    for i, t in enumerate(r.get("tools", [])):
        args = t.get("input_raw", json.dumps(t.get("input", {}), separators=(",", ":")))
        out.append(c({"tool_calls": [{"index": i, "id": t["id"], "type": "function",
                                      "function": {"name": t["name"], "arguments": ""}}]}))
        for x in chunks(args, step):
            out.append(c({"tool_calls": [{"index": i, "function": {"arguments": x}}]}))
    stop = r.get("stop", "tool_calls" if r.get("tools") else "stop")
    out.append(c({}, stop))
    prompt = u.get("input", 0) + u.get("cache_read", 0)
    out.append(ev(None, {"id": cid, "object": "chat.completion.chunk", "created": created,
                         "model": model, "choices": [],
                         "usage": {"prompt_tokens": prompt, "completion_tokens": u.get("output", 0),
                                   "total_tokens": prompt + u.get("output", 0),
                                   "prompt_tokens_details": {"cached_tokens": u.get("cache_read", 0)}}}))
    if not r.get("no_done"):
        out.append((None, "[DONE]"))
    return out


def chat_error_event(r):
    er = r.get("error", {})
    return ev(None, {"error": {"message": er.get("message", "The server had an error"),
                               "type": er.get("type", "server_error"), "param": None,
                               "code": er.get("code")}})


def error_body(wire, r, n):
    er = r.get("error", {})
    if wire == "anthropic":
        return {"type": "error", "error": {"type": er.get("type", "api_error"),
                "message": er.get("message", "mock error")}, "request_id": "req_mock_%d" % n}
    return {"error": {"message": er.get("message", "mock error"),
                      "type": er.get("type", "server_error"), "param": None,
                      "code": er.get("code")}}


def strict_anthropic(req):
    msgs = req.get("messages") or []
    thinking = isinstance(req.get("thinking"), dict) and \
        req["thinking"].get("type") == "enabled"
    for i, m in enumerate(msgs):
        content = m.get("content")
        if not isinstance(content, list):
            continue
        if m.get("role") == "user":
            prev = msgs[i - 1] if i > 0 else {}
            uses = set()
            if prev.get("role") == "assistant" and isinstance(prev.get("content"), list):
                uses = {b.get("id") for b in prev["content"] if b.get("type") == "tool_use"}
            for j, b in enumerate(content):
                if b.get("type") == "tool_result" and b.get("tool_use_id") not in uses:
                    return ("messages.%d.content.%d: unexpected `tool_use_id` found in "
                            "`tool_result` blocks: %s. Each `tool_result` block must have a "
                            "corresponding `tool_use` block in the previous message."
                            % (i, j, b.get("tool_use_id")))
        if m.get("role") == "assistant":
            ids = [b.get("id") for b in content if b.get("type") == "tool_use"]
            if ids and i + 1 < len(msgs):
                nxt = msgs[i + 1]
                got = set()
                if nxt.get("role") == "user" and isinstance(nxt.get("content"), list):
                    got = {b.get("tool_use_id") for b in nxt["content"]
                           if b.get("type") == "tool_result"}
                missing = [x for x in ids if x not in got]
                if missing:
                    return ("messages.%d: `tool_use` ids were found without `tool_result` "
                            "blocks immediately after: %s. Each `tool_use` block must have a "
                            "corresponding `tool_result` block in the next message."
                            % (i, ", ".join(missing)))
    if thinking and len(msgs) >= 2 and msgs[-1].get("role") == "user":
        last = msgs[-1].get("content")
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            a = msgs[-2]
            c = a.get("content") if isinstance(a.get("content"), list) else []
            first = c[0].get("type") if c else "nothing"
            if first not in ("thinking", "redacted_thinking"):
                return ("messages.%d.content.0.type: Expected `thinking` or "
                        "`redacted_thinking`, but found `%s`. When `thinking` is enabled, "
                        "a final `assistant` message must start with a thinking block "
                        "(preceeding the lastmost set of `tool_use` and `tool_result` "
                        "blocks)." % (len(msgs) - 2, first))
    return None


def strict_responses(req):
    items = req.get("input") or []
    if not isinstance(items, list):
        return None
    present = {it.get("id") for it in items if isinstance(it, dict) and it.get("id")}
    calls = set()
    with LOCK:
        issued = dict(STATE["issued"])
    for k, it in enumerate(items):
        if not isinstance(it, dict):
            continue
        t = it.get("type")
        if t == "function_call":
            calls.add(it.get("call_id"))
        if t == "function_call_output" and it.get("call_id") not in calls:
            return ("No tool call found for function call output with call_id %s."
                    % it.get("call_id"))
        ref = it.get("id")
        if ref and ref in issued and issued[ref] not in present:
            return ("Item '%s' of type '%s' was provided without its required "
                    "'reasoning' item: '%s'." % (ref, t, issued[ref]))
        if t == "reasoning":
            nxt = items[k + 1] if k + 1 < len(items) else None
            if not isinstance(nxt, dict) or nxt.get("type") not in ("function_call", "message") \
                    or (nxt.get("type") == "message" and nxt.get("role") != "assistant"):
                return ("Item '%s' of type 'reasoning' was provided without its required "
                        "following item." % it.get("id"))
    return None


def strict_chat(req):
    msgs = req.get("messages") or []
    calls = set()
    for m in msgs:
        if not isinstance(m, dict):
            continue
        if m.get("role") == "assistant":
            calls = {c.get("id") for c in (m.get("tool_calls") or []) if isinstance(c, dict)}
        elif m.get("role") == "tool":
            if m.get("tool_call_id") not in calls:
                return ("Invalid parameter: messages with role 'tool' must be a response "
                        "to a preceeding message with 'tool_calls'.")
        else:
            calls = set()
    return None


def strict_check(wire, req):
    """The provider's 400 for a request shape it refuses, or None."""
    if wire == "anthropic":
        return strict_anthropic(req)
    if wire == "openai-responses":
        return strict_responses(req)
    if wire == "openai-chat":
        return strict_chat(req)
    return None


def with_n(r, n):
    """r with every "{n}" in its strings made the request's number."""
    if r is None:
        return None
    return json.loads(json.dumps(r).replace("{n}", str(n)))


WIRES = {
    "anthropic": (anthropic_events, anthropic_error_event, "request-id"),
    "openai-responses": (responses_events, responses_error_event, "x-request-id"),
    "openai-chat": (chat_events, chat_error_event, "x-request-id"),
}


def wire_of(path):
    p = path.split("?")[0]
    if p.endswith("/v1/messages"):
        return "anthropic"
    if p.endswith("/responses"):
        return "openai-responses"
    if p.endswith("/chat/completions"):
        return "openai-chat"
    return None


class Gone(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet
        pass

    def setup(self):
        super().setup()
        # Events go out as small writes: without this, Nagle's algorithm
        # and the client's delayed ACK hold each one back by ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def parse_request(self):
        # The request line has just been read: about its first byte.
        self.t0_ns = time.monotonic_ns()
        return super().parse_request()

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def record(self, raw):
        with LOCK:
            STATE["n"] += 1
            n = STATE["n"]
        now = time.monotonic_ns()
        entry = {"kind": "request", "n": n, "t_ns": now,
                 "t0_ns": getattr(self, "t0_ns", now),
                 "method": self.command, "path": self.path,
                 "headers": [[k, v] for k, v in self.headers.items()]}
        try:
            entry["body"] = raw.decode("utf-8")
        except UnicodeDecodeError:
            entry["body"] = raw.decode("latin-1")
            entry["body_not_utf8"] = True
        log_line(entry)
        return n

    def plain(self, status, body, ctype="application/json", headers=None):
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_GET(self):
        raw = b""
        if self.path == "/_mock/ping":
            self.plain(200, "pong", "text/plain")
            return
        self.record(raw)
        if self.path.split("?")[0].endswith("/models"):
            self.plain(200, json.dumps({"object": "list", "data": []}))
            return
        self.plain(404, json.dumps({"error": {"message": "no such path", "type": "not_found"}}))

    def do_POST(self):
        raw = self.read_body()
        if self.path == "/_mock/script":
            script = json.loads(raw.decode("utf-8"))
            with LOCK:
                STATE["responses"] = list(script.get("responses", []))
                STATE["auto"] = script.get("auto")
                STATE["strict"] = bool(script.get("strict"))
            self.plain(200, "{}")
            return
        n = self.record(raw)
        wire = wire_of(self.path)
        if wire is None:
            self.plain(404, json.dumps({"error": {"message": "no such path", "type": "not_found"}}))
            return
        body = raw.decode("utf-8", "replace")
        try:
            req = json.loads(body)
        except ValueError:
            req = {}
        with LOCK:
            strict = STATE["strict"]
        why = strict_check(wire, req) if strict and isinstance(req, dict) else None
        if why is not None:
            log_line({"kind": "refused", "n": n, "why": why, "t_ns": time.monotonic_ns()})
            er = {"error": {"type": "invalid_request_error", "message": why,
                            "code": None if wire == "anthropic" else "invalid_request_error"}}
            self.plain(400, json.dumps(error_body(wire, er, n)))
            return
        r = with_n(take(body), n)
        try:
            self.answer(wire, r, req if isinstance(req, dict) else {}, n)
        except (BrokenPipeError, ConnectionResetError):
            # The client left while we were writing to it.
            log_line({"kind": "disconnect", "n": n, "t_ns": time.monotonic_ns()})
            self.close_connection = True
        except Gone:
            self.close_connection = True

    # -- sending -------------------------------------------------------------

    def gone(self, n):
        """Whether the client closed its end (checked without blocking)."""
        try:
            r, _, _ = select.select([self.connection], [], [], 0)
            if r and self.connection.recv(1, socket.MSG_PEEK) == b"":
                log_line({"kind": "disconnect", "n": n, "t_ns": time.monotonic_ns()})
                return True
        except OSError:
            log_line({"kind": "disconnect", "n": n, "t_ns": time.monotonic_ns()})
            return True
        return False

    def wait_gone(self, n, limit_s):
        end = time.monotonic() + limit_s
        while time.monotonic() < end:
            if self.gone(n):
                raise Gone()
            time.sleep(0.005)

    def chunk(self, data, drip, n):
        if not data:
            return
        if drip:
            step = max(1, int(drip.get("bytes", 1)))
            for k in range(0, len(data), step):
                piece = data[k : k + step]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
                time.sleep(drip.get("ms", 100) / 1000.0)
                if self.gone(n):
                    raise Gone()
        else:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    def answer(self, wire, r, req, n):
        events_of, error_event, id_header = WIRES[wire]
        if r.get("delay_ms"):
            end = time.monotonic() + r["delay_ms"] / 1000.0
            while time.monotonic() < end:
                if self.gone(n):
                    raise Gone()
                time.sleep(0.005)
        status = int(r.get("status", 200))
        headers = {id_header: r.get("request_id", "req_mock_%d" % n)}
        headers.update(r.get("headers", {}))
        if "body" in r:
            self.plain(status, r["body"], r.get("content_type", "application/json"), headers)
            return
        if status < 200 or status > 299:
            self.plain(status, json.dumps(error_body(wire, r, n)),
                       r.get("content_type", "application/json"), headers)
            return
        self.send_response(status)
        self.send_header("Content-Type", r.get("content_type", "text/event-stream; charset=utf-8"))
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.flush()
        drip = r.get("drip")
        if "garbage" in r:
            self.chunk(r["garbage"].encode("utf-8"), drip, n)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            return
        if "long_line" in r:
            block = b"data: " + b"x" * 65530
            left = int(r["long_line"])
            while left > 0:
                piece = block[: min(left, len(block))]
                self.chunk(piece, None, n)
                left -= len(piece)
                if self.gone(n):
                    raise Gone()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            return
        if "raw_events" in r:
            evs = [(a, b) for a, b in r["raw_events"]]
        else:
            evs = events_of(r, req, n)
        if r.get("omit_end") or r.get("endless"):
            if wire == "openai-chat":
                evs = [x for x in evs if x[1] != "[DONE]" and '"finish_reason":"' not in x[1]]
            else:
                evs = evs[:-1]
        for k, (name, data) in enumerate(evs):
            if r.get("cut_after") is not None and k >= r["cut_after"]:
                log_line({"kind": "closed", "n": n, "t_ns": time.monotonic_ns()})
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            if r.get("stall_after") is not None and k >= r["stall_after"]:
                self.wait_gone(n, 120)
                return
            if r.get("error_after") is not None and k >= r["error_after"]:
                name, data = error_event(r)
                self.chunk(sse(name, data), drip, n)
                break
            self.chunk(sse(name, data), drip, n)
        if r.get("endless"):
            ping = sse("ping", '{"type":"ping"}') if wire == "anthropic" else b": keep-alive\n\n"
            end = time.monotonic() + 120
            while time.monotonic() < end:
                self.chunk(ping, None, n)
                if self.gone(n):
                    raise Gone()
                time.sleep(0.001)
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def sse(name, data):
    out = ""
    if name is not None:
        out += "event: %s\n" % name
    for line in data.split("\n"):
        out += "data: %s\n" % line
    return (out + "\n").encode("utf-8")


def watch_parent(ppid):
    while True:
        if os.getppid() != ppid:
            os._exit(0)
        time.sleep(0.2)


def main():
    ap = argparse.ArgumentParser(description="a loopback model provider")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--script")
    ap.add_argument("--tls")
    a = ap.parse_args()
    try:  # PR_SET_PDEATHSIG: SIGTERM when the parent dies
        ctypes.CDLL(None).prctl(1, signal.SIGTERM, 0, 0, 0)
    except Exception:
        pass
    ppid = os.getppid()
    signal.signal(signal.SIGTERM, lambda *x: os._exit(0))
    STATE["log"] = open(a.log, "a", encoding="utf-8")
    if a.script:
        with open(a.script, encoding="utf-8") as f:
            script = json.load(f)
        STATE["responses"] = list(script.get("responses", []))
        STATE["auto"] = script.get("auto")
        STATE["strict"] = bool(script.get("strict"))
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.request_queue_size = 64
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if a.tls:
        import ssl

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    threading.Thread(target=watch_parent, args=(ppid,), daemon=True).start()
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
