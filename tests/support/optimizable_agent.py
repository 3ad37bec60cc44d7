"""A hosted agent written for Foundry's optimizer, for tests: a Responses endpoint that runs its own
tool loop (``lookup_order``) on a model at ``$LLM_BASE_URL``.

Its instructions come, as Foundry's ``load_config()`` resolves them, from ``OPTIMIZATION_CONFIG``
(or ``AGENT_OPTIMIZATION_CONFIG``) when it starts, else its defaults; with ``--per-request`` a
request's own ``optimization_config`` wins. Every request it served is appended to ``$AGENT_LOG``
(instructions, candidate id) so a test can see what each candidate was run as.

    python optimizable_agent.py PORT [--per-request]
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai

DEFAULT_INSTRUCTIONS = "You are the shop's assistant. Answer briefly and politely.\n"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "Look an order up by its number.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
]


def load_config() -> dict:
    """What Foundry's ``load_config()`` would return: the inline JSON, else the defaults."""
    for name in ("OPTIMIZATION_CONFIG", "AGENT_OPTIMIZATION_CONFIG"):
        if os.environ.get(name):
            return json.loads(os.environ[name])
    return {"instructions": DEFAULT_INSTRUCTIONS}


STARTUP_CONFIG = load_config()
PER_REQUEST = "--per-request" in sys.argv
client = openai.OpenAI(base_url=os.environ["LLM_BASE_URL"], api_key="t", max_retries=0)


def lookup_order(order_id: str) -> str:
    return f"order {order_id}: delivered on 2026-11-28"


def answer(config: dict, query: str) -> list[dict]:
    """The agent's loop: the model, the tool, the model again; the trajectory in Responses items."""
    messages: list = [{"role": "system", "content": config["instructions"]}, {"role": "user", "content": query}]
    items: list[dict] = []
    for _ in range(4):
        reply = client.chat.completions.create(model=config.get("model") or "agent-m", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            text = message.content or ""
            items.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})
            return items
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = lookup_order(**json.loads(call.function.arguments))
            items.append(
                {
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.function.name,
                    "arguments": call.function.arguments,
                }
            )
            items.append({"type": "function_call_output", "call_id": call.id, "output": result})
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return items


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        config = body.get("optimization_config") if PER_REQUEST and body.get("optimization_config") else STARTUP_CONFIG
        given = body["input"]
        query = given if isinstance(given, str) else " ".join(_texts(given))
        with open(os.environ["AGENT_LOG"], "a", encoding="utf-8") as log:
            header = self.headers.get("x-optimization-candidate-id")
            entry = {"instructions": config["instructions"], "candidate": config.get("candidate_id"), "header": header}
            log.write(json.dumps(entry) + "\n")
        output = answer(config, query)
        data = json.dumps({"id": "resp_1", "object": "response", "model": "agent-m", "output": output}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def _texts(messages: list) -> list[str]:
    texts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        else:
            texts += [part.get("text", "") for part in content or [] if isinstance(part, dict)]
    return texts


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
