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
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from assay.api.context import ApiContext, JsonBody, Owner, context
from assay.api.conversations import agent_span, conversation_id, normalized_items, output_items, upstream_items
from assay.api.errors import error
from assay.api.rules import record_response
from assay.errors import ConfigError, ItemError, NotFoundError
from assay.llm import ContentFiltered, ModelError
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


@dataclass
class Turn:
    """What a response answers for besides itself: the agent that gave it (for evaluation rules,
    and kept as its ``invoke_agent`` span) and the conversation it continues."""

    agent: str | None = None
    version: str | None = None
    instructions: str | None = None
    conversation: str | None = None
    new_items: list[dict[str, Any]] = field(default_factory=list)
    """The request's own input items, appended to the conversation with the response's output."""
    started: float = field(default_factory=time.time)


async def _forward(ctx: ApiContext, owner: str, api: Api, body: dict[str, Any], turn: Turn | None = None) -> Response:
    turn = turn or Turn()
    if api == "responses" and _agent_reference(body) is not None:
        return await _to_agent(ctx, owner, body)
    name = body.get("model")
    if not isinstance(name, str) or not name:
        raise ConfigError("model: name the model to call (a models: entry of assay serve --models)")
    model = ctx.models().get(name)
    model.check_credentials()
    if api == "responses":
        body = await asyncio.to_thread(_in_conversation, ctx, owner, body, turn)
    path = "/chat/completions" if api == "chat" else "/responses"
    keep = body.get("store") is not False
    try:
        if body.get("stream"):
            events = await model.forward_stream(path, body)
            relayed = _relay(ctx, owner, api, body, events, keep, turn)
            return StreamingResponse(relayed, media_type="text/event-stream")
        reply = await model.forward(path, body)
    except ModelError as exc:
        return _upstream_error(exc)
    await _keep(ctx, owner, api, body, reply, keep, turn)
    return JSONResponse(reply)


def _in_conversation(ctx: ApiContext, owner: str, body: dict[str, Any], turn: Turn) -> dict[str, Any]:
    """A Responses request as its model takes it: a ``conversation``'s items before the request's
    own input (noted in ``turn``, to be appended with the answer); without the conversation as is."""
    conversation = conversation_id(body)
    if conversation is None:
        return body
    history = ctx.store.conversation_items(owner, conversation)
    turn.conversation, turn.new_items = conversation, normalized_items(body.get("input"), "input")
    if not history and not turn.new_items:
        raise ConfigError("input: the conversation has no items yet; give the request an input")
    asked = {key: value for key, value in body.items() if key != "conversation"}
    return {**asked, "input": upstream_items(history + turn.new_items)}


async def _relay(
    ctx: ApiContext,
    owner: str,
    api: Api,
    body: dict[str, Any],
    events: AsyncIterator[dict[str, Any]],
    keep: bool,
    turn: Turn,
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
                await _keep(ctx, owner, api, body, event.get("response"), keep, turn)
            yield f"event: {event.get('type')}\ndata: {json.dumps(event)}\n\n".encode()
    if api == "chat":
        await _keep(ctx, owner, api, body, completion_from_chunks(chunks) if chunks else None, keep, turn)
        yield b"data: [DONE]\n\n"


async def _keep(
    ctx: ApiContext,
    owner: str,
    api: Api,
    body: dict[str, Any],
    answer: dict[str, Any] | None,
    keep: bool,
    turn: Turn,
) -> None:
    """Store an answer by its id, unless the caller said ``store: false``; a stored response is a
    *response completed* event for the evaluation rules that want it (``assay.api.rules``). A
    conversation gets the request's input and the answer's output whatever ``store`` says; an
    agent's answer is kept as its span."""
    if not answer:
        return
    if turn.conversation is not None:
        answer["conversation"] = {"id": turn.conversation}
        told = turn.new_items + output_items(answer)
        await asyncio.to_thread(ctx.store.add_conversation_items, owner, turn.conversation, told)
    if keep and answer.get("id"):
        kept = body if turn.conversation is None else {**body, "conversation": {"id": turn.conversation}}
        await asyncio.to_thread(ctx.store.put_response, owner, api, kept, answer)
        if api == "responses":
            await asyncio.to_thread(record_response, ctx.store, owner, turn.agent, str(answer["id"]))
    if turn.agent is not None and api == "responses":
        try:
            inputs = normalized_items(body.get("input"), "input")
        except ConfigError:  # an input of a shape the trace cannot show: the turn is answered all the same
            inputs = []
        span = agent_span(turn.agent, turn.version, turn.conversation, inputs, answer, turn.instructions, turn.started)
        await asyncio.to_thread(ctx.store.add_spans, owner, [span])


def _agent_reference(body: dict[str, Any]) -> Any:
    """Foundry 2.x sends ``agent_reference``; earlier SDKs sent ``agent``."""
    return body.get("agent_reference", body.get("agent"))


async def _to_agent(ctx: ApiContext, owner: str, body: dict[str, Any]) -> Response:
    """``extra_body={"agent_reference": {"name": N, "type": "agent_reference"}}`` (``agent`` before
    Foundry 2.x): the request goes to the project's prompt agent N (its model, given its
    instructions, sampling and tools), else to the agent the operator registered as N (``agents:``
    in ``--models``), over its Responses protocol."""
    import openai

    reference = _agent_reference(body)
    if not isinstance(reference, dict) or reference.get("type") != "agent_reference" or not reference.get("name"):
        raise ConfigError('agent_reference: expected {"type": "agent_reference", "name": <an agent of the server>}')
    name = str(reference["name"])
    version = None if reference.get("version") is None else str(reference["version"])
    asked = {key: value for key, value in body.items() if key not in ("agent", "agent_reference")}
    row = await asyncio.to_thread(agents_in(ctx.store, owner), name, version)
    if row is not None:
        prompt = PromptAgent.parse(row["body"]["definition"], f"agent {name}")
        turn = Turn(agent=name, version=str(row["version"]), instructions=prompt.instructions)
        return await _forward(ctx, owner, "responses", {**prompt.responses_fields(), **asked}, turn)
    if body.get("stream"):
        raise ConfigError("stream: an agent reference is answered whole; leave stream out")
    agent = find_agent(ctx.models().agents, name, version)
    if agent.protocol != "responses":
        raise ConfigError(f"agent {agent.name} speaks {agent.protocol}, not the Responses protocol")
    turn = Turn(agent=agent.name, version=agent.version)
    forwarded = await asyncio.to_thread(
        _in_conversation, ctx, owner, {**asked, "model": asked.get("model") or agent.name}, turn
    )
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
    await _keep(ctx, owner, "responses", forwarded, reply, body.get("store") is not False, turn)
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
    """The provider's refusal, passed on with its status (502 when it never answered); a prompt its
    content filter stopped keeps Azure's shape, so a client reads the categories where it looks."""
    if isinstance(exc, ContentFiltered):
        inner = {"code": "ResponsibleAIPolicyViolation", "content_filter_result": exc.categories}
        body = {"message": str(exc), "type": None, "param": "prompt", "code": "content_filter", "innererror": inner}
        return JSONResponse({"error": body}, status_code=400)
    status = exc.status if exc.status is not None and 400 <= exc.status < 600 else 502
    kind = "invalid_request_error" if status < 500 else "upstream_error"
    return error(status, str(exc), kind)
