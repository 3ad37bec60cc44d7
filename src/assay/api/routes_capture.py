"""The capture pass-through: ``POST /chat/completions`` and ``POST /responses``, streaming included.

An application points its ``openai`` client at assay instead of its provider. Each request goes to
the configured model of the same name (a ``models:`` entry of ``assay serve --models``, else the
environment's endpoint) through the one model layer, so budgets and retries apply, and each
answer is stored under its id, for ``azure_ai_responses`` runs to evaluate later. A request with
``store: false`` is forwarded but not kept. ``GET /responses/{id}`` and ``GET /chat/completions/{id}``
give a stored answer back.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from assay.api.context import ApiContext, JsonBody, Owner, context
from assay.api.errors import error
from assay.api.rules import record_response
from assay.errors import ConfigError, ItemError, NotFoundError
from assay.llm import ModelError
from assay.run.sources import agents_in
from assay.targets.agents import find_agent, post_json
from assay.targets.prompt_agents import PromptAgent

router = APIRouter()
Api = Literal["chat", "responses"]


@router.post("/chat/completions")
async def chat_completions(request: Request, body: JsonBody, owner: Owner) -> Response:
    return await _forward(context(request), owner, "chat", body)


@router.post("/deployments/{deployment}/chat/completions")
async def azure_chat_completions(request: Request, deployment: str, body: JsonBody, owner: Owner) -> Response:
    """Azure OpenAI clients name the deployment in the path rather than the body."""
    return await _forward(context(request), owner, "chat", {**body, "model": body.get("model") or deployment})


@router.post("/responses")
async def responses(request: Request, body: JsonBody, owner: Owner) -> Response:
    return await _forward(context(request), owner, "responses", body)


@router.get("/responses/{response_id}")
def retrieve_response(request: Request, response_id: str, owner: Owner) -> dict[str, Any]:
    return _stored(context(request), owner, response_id, "responses")


@router.get("/chat/completions/{completion_id}")
def retrieve_chat_completion(request: Request, completion_id: str, owner: Owner) -> dict[str, Any]:
    return _stored(context(request), owner, completion_id, "chat")


def _stored(ctx: ApiContext, owner: str, response_id: str, api: Api) -> dict[str, Any]:
    found = ctx.store.get_response(owner, response_id)
    if found is None or found["api"] != api:
        raise NotFoundError(f"No response with id '{response_id}' was captured.")
    return dict(found["response"])


async def _forward(ctx: ApiContext, owner: str, api: Api, body: dict[str, Any], agent: str | None = None) -> Response:
    """``agent``: the prompt agent the request was for, recorded with the response it made."""
    if api == "responses" and body.get("agent") is not None:
        return await _to_agent(ctx, owner, body)
    name = body.get("model")
    if not isinstance(name, str) or not name:
        raise ConfigError("model: name the model to call (a models: entry of assay serve --models)")
    model = ctx.models().get(name)
    model.check_credentials()
    path = "/chat/completions" if api == "chat" else "/responses"
    keep = body.get("store") is not False
    try:
        if body.get("stream"):
            events = await model.forward_stream(path, body)
            relayed = _relay(ctx, owner, api, body, events, keep, agent)
            return StreamingResponse(relayed, media_type="text/event-stream")
        reply = await model.forward(path, body)
    except ModelError as exc:
        return _upstream_error(exc)
    await _keep(ctx, owner, api, body, reply, keep, agent)
    return JSONResponse(reply)


async def _relay(
    ctx: ApiContext,
    owner: str,
    api: Api,
    body: dict[str, Any],
    events: AsyncIterator[dict[str, Any]],
    keep: bool,
    agent: str | None,
) -> AsyncIterator[bytes]:
    """Pass each event on as it comes, and store the whole answer it made before the client hears
    that the stream is over: a retrieve by id right after the stream must find it."""
    chunks: list[dict[str, Any]] = []
    async for event in events:
        if api == "chat":
            chunks.append(event)
            yield f"data: {json.dumps(event)}\n\n".encode()
        else:
            if event.get("type") == "response.completed":
                await _keep(ctx, owner, api, body, event.get("response"), keep, agent)
            yield f"event: {event.get('type')}\ndata: {json.dumps(event)}\n\n".encode()
    if api == "chat":
        await _keep(ctx, owner, api, body, completion_from_chunks(chunks) if chunks else None, keep)
        yield b"data: [DONE]\n\n"


async def _keep(
    ctx: ApiContext,
    owner: str,
    api: Api,
    body: dict[str, Any],
    answer: dict[str, Any] | None,
    keep: bool,
    agent: str | None = None,
) -> None:
    """Store an answer by its id, unless the caller said ``store: false``; a stored response is a
    *response completed* event for the evaluation rules that want it (``assay.api.rules``)."""
    if keep and answer and answer.get("id"):
        await asyncio.to_thread(ctx.store.put_response, owner, api, body, answer)
        if api == "responses":
            await asyncio.to_thread(record_response, ctx.store, owner, agent, str(answer["id"]))


async def _to_agent(ctx: ApiContext, owner: str, body: dict[str, Any]) -> Response:
    """``extra_body={"agent": {"name": N, "type": "agent_reference"}}``: the request goes to the
    project's prompt agent N (its model, given its instructions, sampling and tools), else to the
    agent the operator registered as N (``agents:`` in ``--models``), over its Responses protocol."""
    import openai

    reference = body["agent"]
    if not isinstance(reference, dict) or reference.get("type") != "agent_reference" or not reference.get("name"):
        raise ConfigError('agent: expected {"type": "agent_reference", "name": <an agent of the server>}')
    name = str(reference["name"])
    version = None if reference.get("version") is None else str(reference["version"])
    prompt = await asyncio.to_thread(PromptAgent.found, agents_in(ctx.store, owner), name, version)
    if prompt is not None:
        asked = {key: value for key, value in body.items() if key != "agent"}
        return await _forward(ctx, owner, "responses", {**prompt.responses_fields(), **asked}, agent=name)
    if body.get("stream"):
        raise ConfigError("stream: an agent reference is answered whole; leave stream out")
    agent = find_agent(ctx.models().agents, name, version)
    if agent.protocol != "responses":
        raise ConfigError(f"agent {agent.name} speaks {agent.protocol}, not the Responses protocol")
    forwarded = {**{k: v for k, v in body.items() if k != "agent"}, "model": body.get("model") or agent.name}
    client = openai.AsyncOpenAI(
        base_url=agent.endpoint, api_key="agent", timeout=agent.timeout, default_headers=agent.headers, max_retries=2
    )
    try:
        reply = await post_json(client, "/responses", forwarded)
    except ItemError as exc:
        return error(502, f"agent {agent.name}@{agent.version}: {exc}", "upstream_error")
    except openai.APIStatusError as exc:
        return error(
            502, f"agent {agent.name}@{agent.version} answered {exc.status_code}: {exc.message}", "upstream_error"
        )
    except openai.APIConnectionError as exc:
        return error(502, f"agent {agent.name}@{agent.version} is unreachable: {exc}", "upstream_error")
    finally:
        await client.close()
    await _keep(ctx, owner, "responses", body, reply, body.get("store") is not False, agent=agent.name)
    return JSONResponse(reply)


def completion_from_chunks(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``chat.completion`` a stream of ``chat.completion.chunk`` events adds up to."""
    first = chunks[0]
    choices: dict[int, dict[str, Any]] = {}
    usage = None
    for chunk in chunks:
        usage = chunk.get("usage") or usage
        for part in chunk.get("choices") or []:
            choice = choices.setdefault(part.get("index", 0), {"content": "", "tool_calls": {}, "finish": None})
            delta = part.get("delta") or {}
            choice["content"] += delta.get("content") or ""
            choice["finish"] = part.get("finish_reason") or choice["finish"]
            for call in delta.get("tool_calls") or []:
                slot = choice["tool_calls"].setdefault(
                    call.get("index", 0), {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
                )
                slot["id"] = call.get("id") or slot["id"]
                function = call.get("function") or {}
                slot["function"]["name"] += function.get("name") or ""
                slot["function"]["arguments"] += function.get("arguments") or ""
    assembled = []
    for index, choice in sorted(choices.items()):
        message: dict[str, Any] = {"role": "assistant", "content": choice["content"] or None}
        if choice["tool_calls"]:
            message["tool_calls"] = [call for _, call in sorted(choice["tool_calls"].items())]
        assembled.append({"index": index, "message": message, "finish_reason": choice["finish"]})
    return {
        "id": first.get("id"),
        "object": "chat.completion",
        "created": first.get("created"),
        "model": first.get("model"),
        "choices": assembled,
        "usage": usage,
    }


def _upstream_error(exc: ModelError) -> JSONResponse:
    """The provider's refusal, passed on with its status (502 when it never answered)."""
    status = exc.status if exc.status is not None and 400 <= exc.status < 600 else 502
    kind = "invalid_request_error" if status < 500 else "upstream_error"
    return error(status, str(exc), kind)
