"""A small order-support agent: an HTTP server speaking the OpenAI Responses protocol.

    python examples/support_agent/agent.py --port 8765 --base-url http://localhost:11434/v1 --model llama3.1

``POST /responses`` takes ``{input: [messages], conversation?}``; the agent asks its model (through
assay's model layer: retries, budgets, usage) which tools to call, runs them, feeds the results
back, and stops when the model answers in text or after ``MAX_STEPS`` rounds. The reply lists every
step as Responses items: ``function_call``, ``function_call_output``, then the final ``message``,
which is what ``{{sample.output_items}}`` shows evaluators.

With ``--otlp-endpoint http://127.0.0.1:8000/v1/traces`` (``assay serve``) it also sends
OpenTelemetry spans (see ``tracing.py``), which assay evaluates as traces.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from tools import IMPLEMENTATIONS, TOOLS  # run as a script, so its folder is on the path
from tracing import AGENT, AgentTracer, agent_attributes, output_messages

from assay.llm import Model, ModelConfig, ModelError

# instructions.md is the agent's system prompt (``assay eval generate`` and ``optimize`` read it too).
INSTRUCTIONS = (Path(__file__).parent / "instructions.md").read_text(encoding="utf-8").strip()
MAX_STEPS = 4


def create_agent(model: Model, tracer: AgentTracer | None = None) -> FastAPI:
    tracer = tracer or AgentTracer(None)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        tracer.shutdown()  # flushes the spans still batched

    app = FastAPI(title="support agent", lifespan=lifespan)

    @app.post("/responses")
    async def respond(body: dict[str, Any]) -> JSONResponse:
        raw = body.get("input")
        history = [{"role": "user", "content": raw}] if isinstance(raw, str) else list(raw or [])
        messages: list[dict[str, Any]] = [{"role": "system", "content": INSTRUCTIONS}, *history]
        conversation = body.get("conversation")
        conversation_id = str(
            (conversation or {}).get("id") if isinstance(conversation, dict) else conversation or uuid.uuid4().hex
        )
        with tracer.span(
            f"invoke_agent {AGENT['name']}", agent_attributes(conversation_id, INSTRUCTIONS, history, TOOLS)
        ) as span:
            try:
                output, usage = await run_turn(model, messages, tracer)
            except ModelError as exc:
                if span is not None:
                    span.set_attribute("error.type", "ModelError")
                return JSONResponse({"error": {"message": str(exc), "type": "server_error"}}, status_code=502)
            if span is not None:
                span.set_attribute("gen_ai.output.messages", output_messages(output))
        return JSONResponse(
            {
                "id": f"resp_{uuid.uuid4().hex}",
                "object": "response",
                "status": "completed",
                "model": model.config.model,
                "output": output,
                "usage": usage,
            }
        )

    return app


async def run_turn(
    model: Model, messages: list[dict[str, Any]], tracer: AgentTracer
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Call the model, run the tools it asks for, repeat; every step becomes an output item."""
    output: list[dict[str, Any]] = []
    usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    for _ in range(MAX_STEPS):
        chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model.config.model}
        with tracer.span(f"chat {model.config.model}", chat):
            completion = await model.generate(messages, tools=TOOLS, temperature=0)
        usage["input_tokens"] += completion.usage.prompt_tokens
        usage["output_tokens"] += completion.usage.completion_tokens
        usage["total_tokens"] += completion.usage.total_tokens
        if not completion.tool_calls:
            output.append(_message(completion.text, "completed"))
            return output, usage
        messages.append({"role": "assistant", "content": completion.text or None, "tool_calls": completion.tool_calls})
        for call in completion.tool_calls:
            name, arguments = call["function"]["name"], call["function"].get("arguments") or "{}"
            tool = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": call["id"],
            }
            with tracer.span(f"execute_tool {name}", tool) as span:
                result = call_tool(name, arguments)
                if span is not None:
                    span.set_attribute("gen_ai.tool.call.result", result)
            output.append({"type": "function_call", "call_id": call["id"], "name": name, "arguments": arguments})
            output.append({"type": "function_call_output", "call_id": call["id"], "output": result})
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    output.append(_message("Sorry, I could not finish that.", "incomplete"))
    return output, usage


def _message(text: str, status: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}]
    return {"type": "message", "role": "assistant", "status": status, "content": content}


def call_tool(name: str, arguments: str) -> str:
    """A tool's result as the JSON text the model reads; a bad call is reported, not raised."""
    tool = IMPLEMENTATIONS.get(name)
    if tool is None:
        return json.dumps({"error": f"unknown tool {name}"})
    try:
        return json.dumps(tool(**json.loads(arguments)))
    except (TypeError, ValueError) as exc:
        return json.dumps({"error": f"bad arguments for {name}: {exc}"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765, help="0: a free port, the one chosen printed")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: OPENAI_BASE_URL or OpenAI)")
    parser.add_argument("--model", default="gpt-4.1-mini")
    parser.add_argument("--api-key", default=None, help="default: OPENAI_API_KEY")
    parser.add_argument("--otlp-endpoint", help="send OpenTelemetry spans here, e.g. http://127.0.0.1:8000/v1/traces")
    args = parser.parse_args()
    config = ModelConfig(name="agent", model=args.model, base_url=args.base_url, api_key=args.api_key, json_mode=False)
    agent = create_agent(Model(config), AgentTracer(args.otlp_endpoint))
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    print(f"support agent on http://127.0.0.1:{listener.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(agent, log_level="warning")).run(sockets=[listener])


if __name__ == "__main__":
    main()
