"""A local OpenAI-compatible server for tests: a real HTTP process whose answers tests script.

Run as ``python -m tests.support.llm_server PORT``. It serves ``POST /v1/chat/completions`` (and
the same under ``/openai/deployments/<name>/chat/completions`` for Azure clients) and
``POST /v1/responses``. Tests control it over HTTP:

- ``POST /_script`` with ``{"rules": [...], "default": {...}, "faults": {...}, "latency_ms": N}``:
  a rule ``{"match": "text", "reply": {...}}`` answers requests whose messages contain ``text``;
  a reply is ``{"content": "..."}``, ``{"tool_calls": [...]}``, ``{"status": 500}``,
  ``{"status": 429, "retry_after": 1, "code": "rate_limit_exceeded"}`` or ``{"drop": true}``.
  ``faults`` ``{"rate_429": 0.3, "rate_500": 0.05, "retry_after": 1, "seed": 1}`` injects errors at
  random; ``rpm`` enforces a requests-per-minute budget with 429s.
- ``GET /_stats`` returns ``{"requests": N, "completions": N, "by_status": {...}, "last": {...}}``.
- ``POST /_reset`` clears the script and the counters.
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from collections import Counter, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.script: dict[str, Any] = {}
        self.random = random.Random(1)
        self.requests = 0
        self.completions = 0
        self.by_status: Counter[int] = Counter()
        self.last: dict[str, Any] = {}
        self.window: deque[float] = deque()

    def choose(self, body: dict[str, Any]) -> dict[str, Any]:
        """The reply for this request: a fault, an over-budget 429, a matching rule or the default."""
        with self.lock:
            self.requests += 1
            self.last = body
            faults = self.script.get("faults") or {}
            roll = self.random.random()
            if roll < faults.get("rate_429", 0):
                return {"status": 429, "retry_after": faults.get("retry_after", 1)}
            if roll < faults.get("rate_429", 0) + faults.get("rate_500", 0):
                return {"status": 500}
            rpm = self.script.get("rpm")
            if rpm:
                now = time.monotonic()
                while self.window and now - self.window[0] > 60:
                    self.window.popleft()
                if len(self.window) >= rpm:
                    wait = 60 - (now - self.window[0])
                    return {"status": 429, "retry_after_ms": int(wait * 1000) + 1}
                self.window.append(now)
        text = json.dumps(body.get("messages") or body.get("input") or "", ensure_ascii=False)
        for rule in self.script.get("rules", []):
            if rule.get("match", "") in text:
                return dict(rule["reply"])
        return dict(self.script.get("default") or {"content": '{"reason": "default reply", "score": 3}'})


STATE = State()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        with STATE.lock:
            STATE.by_status[status] += 1

    def do_GET(self) -> None:
        if self.path == "/_stats":
            with STATE.lock:
                stats = {"requests": STATE.requests, "completions": STATE.completions,
                         "by_status": dict(STATE.by_status), "last": STATE.last}  # fmt: skip
            self._send(200, stats)
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path == "/_script":
            with STATE.lock:
                STATE.script = body
                STATE.random = random.Random((body.get("faults") or {}).get("seed", 1))
            return self._send(200, {"ok": True})
        if self.path == "/_reset":
            with STATE.lock:
                STATE.reset()
            return self._send(200, {"ok": True})
        if self.path.endswith("/chat/completions"):
            return self._reply(body, chat=True)
        if self.path.endswith("/responses"):
            return self._reply(body, chat=False)
        self._send(404, {"error": {"message": f"no route {self.path}"}})

    def _reply(self, body: dict[str, Any], chat: bool) -> None:
        reply = STATE.choose(body)
        latency = reply.get("latency_ms", STATE.script.get("latency_ms", 0))
        if latency:
            time.sleep(latency / 1000)
        if reply.get("drop"):
            self.close_connection = True
            self.connection.shutdown(2)
            return
        status = reply.get("status", 200)
        if status == 429:
            headers = {}
            if "retry_after_ms" in reply:
                headers["retry-after-ms"] = str(reply["retry_after_ms"])
            if "retry_after" in reply:
                headers["retry-after"] = str(reply["retry_after"])
            code = reply.get("code", "rate_limit_exceeded")
            error = {"message": "Rate limit reached", "type": "requests" if code != "insufficient_quota" else code,
                     "param": None, "code": code}  # fmt: skip
            return self._send(429, {"error": error}, headers)
        if status >= 400:
            return self._send(status, {"error": {"message": "scripted failure", "type": "server_error",
                                                 "param": None, "code": None}})  # fmt: skip
        with STATE.lock:
            STATE.completions += 1
        prompt_tokens = max(1, len(json.dumps(body.get("messages") or body.get("input") or "")) // 4)
        content = reply.get("content")
        completion_tokens = max(1, len(content or "") // 4)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens,
                 "prompt_tokens_details": {"cached_tokens": 0}}  # fmt: skip
        model = body.get("model", "test-model")
        if chat:
            message: dict[str, Any] = {"role": "assistant", "content": content}
            if reply.get("tool_calls"):
                message["tool_calls"] = reply["tool_calls"]
            finish = "tool_calls" if reply.get("tool_calls") else "stop"
            return self._send(200, {"id": f"chatcmpl-{STATE.requests}", "object": "chat.completion",
                                    "created": int(time.time()), "model": model,
                                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                                    "usage": usage})  # fmt: skip
        output = [{"type": "message", "id": f"msg_{STATE.requests}", "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": content or "", "annotations": []}]}]  # fmt: skip
        self._send(200, {"id": f"resp_{STATE.requests}", "object": "response", "created_at": int(time.time()),
                         "status": "completed", "model": model, "output": output,
                         "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens,
                                   "total_tokens": prompt_tokens + completion_tokens}})  # fmt: skip


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # listen() backlog: a burst of connects must not overflow it


def main(port: int) -> None:
    server = Server(("127.0.0.1", port), Handler)
    server.serve_forever()


if __name__ == "__main__":
    main(int(sys.argv[1]))
