"""Chat messages in one internal form, and ``normalize()`` from every format we accept.

Accepted shapes (each may appear anywhere a message list is expected):

- Foundry / azure-ai-evaluation: ``{role, content}`` where content is a string or a list of typed
  parts ``text | input_text | output_text | tool_call | tool_result``; ``role: tool`` messages carry
  ``tool_call_id``.
- OpenAI chat completions: assistant ``content: null`` with ``tool_calls: [{id, type: function,
  function: {name, arguments: "<json>"}}]`` and ``{role: tool, tool_call_id, content}``.
- OpenAI Responses items: ``{type: message, role, content: [...]}``, ``{type: function_call,
  call_id, name, arguments}`` and ``{type: function_call_output, call_id, output}``; a hosted tool's
  items (``file_search_call``, ``web_search_call``, ``code_interpreter_call``, ``mcp_call``,
  ``custom_tool_call``, Foundry's ``openapi_call`` and grounding tools' ``*_call``) are its call and,
  where the item holds it, its result; ``*_call_output`` items are results. A model's ``reasoning``
  and other items no conversation shows are left out.
- A plain string, which becomes one message of the caller's default role.

This module is the only place that knows these shapes; evaluators see ``Message`` objects.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["developer", "system", "user", "assistant", "tool"]
ROLES: frozenset[str] = frozenset({"developer", "system", "user", "assistant", "tool"})
TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})


class MessageFormatError(ValueError):
    """A value that is not a message list in any format we know; says where and why."""


@dataclass(slots=True)
class TextPart:
    text: str


@dataclass(slots=True)
class ToolCall:
    """A call the assistant made; ``arguments`` is parsed JSON when the source gave a string."""

    id: str | None
    name: str
    arguments: Any = field(default_factory=dict)


@dataclass(slots=True)
class ToolResult:
    tool_call_id: str | None
    result: Any


@dataclass(slots=True)
class OtherPart:
    """A content part we carry through untouched (images, audio, files)."""

    raw: dict[str, Any]


Part = TextPart | ToolCall | ToolResult | OtherPart


@dataclass(slots=True)
class Message:
    role: Role
    content: list[Part]
    tool_call_id: str | None = None

    @property
    def text(self) -> str:
        return "".join(part.text for part in self.content if isinstance(part, TextPart))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [part for part in self.content if isinstance(part, ToolCall)]

    @property
    def tool_results(self) -> list[ToolResult]:
        return [part for part in self.content if isinstance(part, ToolResult)]


@dataclass(slots=True)
class ToolDefinition:
    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)


def normalize(value: Any, *, default_role: Role = "user", where: str = "messages") -> list[Message]:
    """Turn any accepted message format into a list of ``Message``."""
    if value is None:
        return []
    if isinstance(value, str):
        return [Message(role=default_role, content=[TextPart(value)])]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise MessageFormatError(f"{where}: expected a string or a list of messages, got {_kind(value)}")
    messages: list[Message] = []
    for index, raw in enumerate(value):
        messages.extend(_message(raw, f"{where}[{index}]", default_role))
    return messages


def _message(raw: Any, where: str, default_role: Role) -> list[Message]:
    if isinstance(raw, str):
        return [Message(role=default_role, content=[TextPart(raw)])]
    if not isinstance(raw, dict):
        raise MessageFormatError(f"{where}: expected an object with 'role' and 'content', got {_kind(raw)}")
    kind = raw.get("type")
    if kind == "function_call":
        call = ToolCall(_opt_str(raw.get("call_id") or raw.get("id")), _name(raw, where), _args(raw.get("arguments")))
        return [Message(role="assistant", content=[call])]
    if kind == "function_call_output":
        call_id = _opt_str(raw.get("call_id"))
        result = ToolResult(call_id, maybe_json(raw.get("output")))
        return [Message(role="tool", content=[result], tool_call_id=call_id)]
    role = raw.get("role")
    if role is None and isinstance(kind, str) and kind != "message":
        return _hosted_item(raw, kind)
    if role not in ROLES:
        allowed = ", ".join(sorted(ROLES))
        raise MessageFormatError(f"{where}.role: {role!r} is not a message role; use one of {allowed}")
    tool_call_id = _opt_str(raw.get("tool_call_id"))
    content = _content(raw.get("content"), f"{where}.content", role, tool_call_id)
    for index, call in enumerate(raw.get("tool_calls") or []):
        content.append(_chat_tool_call(call, f"{where}.tool_calls[{index}]"))
    return [Message(role=role, content=content, tool_call_id=tool_call_id)]


def is_tool_call_item(raw: Any) -> bool:
    """Whether a Responses output item is a call of a tool: a function's, a hosted tool's (a file
    search, a web search), an MCP server's."""
    return isinstance(raw, dict) and isinstance(raw.get("type"), str) and raw["type"].endswith("_call")


NOT_CONVERSATION = frozenset({"reasoning", "item_reference", "mcp_list_tools", "mcp_approval_response"})
"""Responses items that are no part of what was said: a model's reasoning, a reference to an earlier
item, the tools an MCP server listed, a user's approval of an MCP call."""
_OUTCOMES = ("output", "outputs", "results", "error")
"""Where a hosted tool's item holds what the call gave: an MCP call's output (or error), a code
interpreter's outputs, a file search's results."""
_NOT_ARGUMENTS = frozenset(
    {"type", "id", "call_id", "status", "name", "server_label", "container_id", "result", "pending_safety_checks"}
)
"""A hosted tool's item fields that are not what it was called with: ids, status, an image's bytes."""


def _hosted_item(raw: dict[str, Any], kind: str) -> list[Message]:
    """A Responses item other than a message or a function call: a hosted tool's call (with its
    result where the item holds one), a tool's output, or an item no conversation shows. A call is
    named as its item names it (an MCP or custom tool), else by its kind (``file_search_call``:
    ``file_search``); an item of a kind not known here is carried through untouched."""
    if kind in NOT_CONVERSATION:
        return []
    call_id = _opt_str(raw.get("call_id") or raw.get("tool_call_id") or raw.get("id"))
    if kind.endswith("_call_output"):
        output = raw.get("output", raw.get(kind))
        return [Message(role="tool", content=[ToolResult(call_id, maybe_json(output))], tool_call_id=call_id)]
    if not kind.endswith("_call"):  # an MCP approval request (a protocol step, no call) or an unknown kind
        return [Message(role="assistant", content=[OtherPart(raw)])]
    named = raw.get("name")
    name = named if isinstance(named, str) and named else kind.removesuffix("_call")
    if "arguments" in raw:
        arguments = _args(raw.get("arguments"))
    else:  # a hosted tool says what it was asked in fields of its own (queries, action, code, input)
        arguments = {k: v for k, v in raw.items() if k not in _NOT_ARGUMENTS and k not in _OUTCOMES}
    messages = [Message(role="assistant", content=[ToolCall(call_id, name, arguments)])]
    outcome = next((raw[key] for key in _OUTCOMES if raw.get(key) is not None), None)
    if outcome is not None:
        result = ToolResult(call_id, maybe_json(outcome))
        messages.append(Message(role="tool", content=[result], tool_call_id=call_id))
    return messages


def _content(raw: Any, where: str, role: str, tool_call_id: str | None) -> list[Part]:
    if raw is None:
        return []
    if isinstance(raw, str):
        if role == "tool":
            return [ToolResult(tool_call_id, maybe_json(raw))]
        return [TextPart(raw)]
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list):
        raise MessageFormatError(f"{where}: expected a string or a list of content parts, got {_kind(raw)}")
    return [_part(part, f"{where}[{index}]", tool_call_id) for index, part in enumerate(raw)]


def _part(raw: Any, where: str, tool_call_id: str | None) -> Part:
    if isinstance(raw, str):
        return TextPart(raw)
    if not isinstance(raw, dict):
        raise MessageFormatError(f"{where}: expected a content part object, got {_kind(raw)}")
    kind = raw.get("type")
    if kind == "refusal" and isinstance(raw.get("refusal"), str):  # what a model that refused said
        return TextPart(raw["refusal"])
    if kind in TEXT_PART_TYPES:
        text = raw.get("text")
        if not isinstance(text, str):
            raise MessageFormatError(f"{where}.text: a '{kind}' part needs a string 'text'")
        return TextPart(text)
    if kind == "tool_call":
        call_id = _opt_str(raw.get("tool_call_id") or raw.get("id"))
        return ToolCall(call_id, _name(raw, where), _args(raw.get("arguments")))
    if kind == "function_call":
        call_id = _opt_str(raw.get("call_id") or raw.get("id"))
        return ToolCall(call_id, _name(raw, where), _args(raw.get("arguments")))
    if kind == "tool_result":
        return ToolResult(_opt_str(raw.get("tool_call_id")) or tool_call_id, raw.get("tool_result"))
    if kind == "function_call_output":
        return ToolResult(_opt_str(raw.get("call_id")) or tool_call_id, maybe_json(raw.get("output")))
    if kind == "openapi_call":  # a Foundry agent's OpenAPI tool, as its conversations write it
        call_id = _opt_str(raw.get("tool_call_id") or raw.get("call_id") or raw.get("id"))
        return ToolCall(call_id, _name(raw, where), _args(raw.get("arguments")))
    if kind == "openapi_call_output":
        call_id = _opt_str(raw.get("tool_call_id") or raw.get("call_id")) or tool_call_id
        return ToolResult(call_id, maybe_json(raw.get("openapi_call_output", raw.get("output"))))
    if kind is None:
        raise MessageFormatError(f"{where}.type: a content part needs a 'type' such as 'text'")
    return OtherPart(raw)


def _chat_tool_call(raw: Any, where: str) -> ToolCall:
    if not isinstance(raw, dict):
        raise MessageFormatError(f"{where}: expected a tool call object, got {_kind(raw)}")
    function: dict[str, Any] = raw["function"] if isinstance(raw.get("function"), dict) else raw
    return ToolCall(_opt_str(raw.get("id")), _name(function, where), _args(function.get("arguments")))


def _name(raw: dict[str, Any], where: str, what: str = "a tool call") -> str:
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise MessageFormatError(f"{where}.name: {what} needs the tool's 'name'")
    return name


def _args(raw: Any) -> Any:
    if raw is None:
        return {}
    return maybe_json(raw)


def maybe_json(raw: Any) -> Any:
    """A JSON object or array given as text, parsed; anything else as it is."""
    if isinstance(raw, str):
        stripped = raw.strip()
        if stripped[:1] in ("{", "["):
            try:
                return json.loads(stripped)
            except ValueError:
                return raw
    return raw


def _opt_str(raw: Any) -> str | None:
    return None if raw is None else str(raw)


def _kind(value: Any) -> str:
    return type(value).__name__ if value is not None else "null"


NAMED_TOOL_TYPES = frozenset({"function", "openapi", "custom", "object"})
"""Tool types whose definitions must name the tool (``object``: a parameters schema given as a tool)."""


def normalize_tool_definitions(value: Any, where: str = "tool_definitions") -> list[ToolDefinition]:
    """Accept ``[{name, description, parameters}]`` and OpenAI's ``{type: function, function}``. An
    OpenAPI tool (``type: openapi``) that lists its operations as ``functions`` is those functions,
    which is what its calls name (Azure AI Agents' ``<tool>_<operationId>``); one without them stays
    one tool."""
    if value is None:
        return []
    if isinstance(value, str):
        value = maybe_json(value)
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise MessageFormatError(f"{where}: expected a list of tool definitions, got {_kind(value)}")
    tools = []
    for index, raw in enumerate(value):
        if not isinstance(raw, dict):
            raise MessageFormatError(f"{where}[{index}]: expected an object, got {_kind(raw)}")
        functions = raw.get("functions") if raw.get("type") == "openapi" else None
        if isinstance(functions, list) and functions:
            tools.extend(normalize_tool_definitions(functions, f"{where}[{index}].functions"))
            continue
        spec = raw["function"] if isinstance(raw.get("function"), dict) else raw
        kind = raw.get("type")
        if not spec.get("name") and isinstance(kind, str) and kind not in NAMED_TOOL_TYPES:
            # A hosted tool as a request or an agent lists it ({"type": "file_search", ...}); an MCP
            # server's tools are named only by what it lists, so it defines none here.
            if kind != "mcp":
                tools.append(hosted_tool(kind))
            continue
        name = _name(spec, f"{where}[{index}]", "a tool definition")
        tools.append(ToolDefinition(name, str(spec.get("description") or ""), spec.get("parameters") or {}))
    return tools


def _hosted(name: str, description: str, **parameters: str) -> ToolDefinition:
    properties = {key: {"type": "string", "description": text} for key, text in parameters.items()}
    return ToolDefinition(name, description, {"type": "object", "properties": properties})


HOSTED_TOOLS: dict[str, ToolDefinition] = {
    tool.name: tool
    for tool in (
        _hosted(
            "file_search",
            "Searches the files given to the agent; one call may return several passages.",
            queries="what to look for",
        ),
        _hosted(
            "code_interpreter",
            "Writes and runs Python code on the agent's files: reads data, computes, draws charts.",
            input="the code to run",
            code="the code to run (as Responses items name it)",
        ),
        _hosted("web_search", "Searches the public web for current information.", action="the search it ran"),
        _hosted("bing_grounding", "Grounds the answer in Bing web search results.", requesturl="the search request"),
        _hosted(
            "bing_custom_search",
            "Searches a configured set of websites with Bing.",
            requesturl="the search request, with its site restrictions",
        ),
        _hosted("azure_ai_search", "Searches an Azure AI Search index.", input="the search terms"),
        _hosted(
            "sharepoint_grounding",
            "Retrieves passages from SharePoint document libraries.",
            input="what to look for, in natural language",
        ),
        _hosted(
            "fabric_dataagent",
            "Asks a Microsoft Fabric data agent for data across its sources.",
            input="the question for the data agent",
        ),
        _hosted("image_generation", "Generates or edits an image.", prompt="what to draw"),
    )
}
"""Definitions of the tools a platform hosts, which an agent calls without its user defining them
(Foundry's and OpenAI's built-in tools): a tool judge that sees a call to one reads this
definition where the item gives none of its own, as azure-ai-evaluation bundles them."""


def hosted_tool(kind: str) -> ToolDefinition:
    """The definition of the hosted tool of type ``kind`` in a request's tools, named as its calls
    name it (``web_search_preview``: ``web_search``); one not bundled here is its name alone."""
    name = "web_search" if kind.startswith("web_search") else "computer" if kind.startswith("computer_use") else kind
    return HOSTED_TOOLS.get(name) or ToolDefinition(name)


def listed_tools(value: Any) -> list[ToolDefinition]:
    """The tools an answer lists itself: an MCP server's, in a Responses ``mcp_list_tools`` item
    (its calls name them; no definition of them is given anywhere else)."""
    found: list[ToolDefinition] = []
    for raw in value if isinstance(value, list) else []:
        if isinstance(raw, dict) and raw.get("type") == "mcp_list_tools" and isinstance(raw.get("tools"), list):
            for tool in raw["tools"]:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str) and tool["name"]:
                    schema = tool.get("input_schema")
                    parameters: dict[str, Any] = schema if isinstance(schema, dict) else {}
                    found.append(ToolDefinition(tool["name"], str(tool.get("description") or ""), parameters))
    return found


def with_hosted_tools(definitions: list[ToolDefinition], calls: Iterable[ToolCall]) -> list[ToolDefinition]:
    """``definitions`` and, after them, the hosted tools' definitions for the ones ``calls`` call
    that ``definitions`` do not define."""
    return defined_once(definitions, (HOSTED_TOOLS[call.name] for call in calls if call.name in HOSTED_TOOLS))


def defined_once(*groups: Iterable[ToolDefinition]) -> list[ToolDefinition]:
    """The definitions of ``groups`` in their order, the first of each name kept."""
    kept: dict[str, ToolDefinition] = {}
    for group in groups:
        for tool in group:
            kept.setdefault(tool.name, tool)
    return list(kept.values())


def split_turn(messages: list[Message]) -> tuple[list[Message], list[Message]]:
    """Split at the latest user message: query is up to and including it, response the rest."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            return messages[: index + 1], messages[index + 1 :]
    return [], list(messages)


def response_text(value: Any) -> str:
    """The text a response says: a string as-is, or the assistant text of a message list."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float, bool)):
        return json.dumps(value)
    messages = normalize(value, default_role="assistant", where="response")
    spoken = [m.text for m in messages if m.role == "assistant" and m.text]
    return "\n".join(spoken) if spoken else "\n".join(m.text for m in messages if m.text)


def conversation_context(messages: Iterable[Message]) -> str | None:
    """What a conversation holds for its answers to be grounded in: the system and developer
    instructions and every tool result (retrieved documents arrive as tool output). ``None`` when
    it holds none of these."""
    pieces: list[str] = []
    for message in messages:
        if message.role in ("system", "developer") and message.text:
            pieces.append(message.text)
        for result in message.tool_results:
            value = result.result
            pieces.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    return "\n\n".join(pieces) or None


def tool_calls(messages: Iterable[Message]) -> list[ToolCall]:
    return [call for message in messages for call in message.tool_calls]


def to_dicts(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """The canonical wire form (Foundry's typed parts), for storage and judge prompts."""
    out = []
    for message in messages:
        parts: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                parts.append({"type": "text", "text": part.text})
            elif isinstance(part, ToolCall):
                parts.append(
                    {"type": "tool_call", "tool_call_id": part.id, "name": part.name, "arguments": part.arguments}
                )
            elif isinstance(part, ToolResult):
                parts.append({"type": "tool_result", "tool_call_id": part.tool_call_id, "tool_result": part.result})
            else:
                parts.append(part.raw)
        entry: dict[str, Any] = {"role": message.role, "content": parts}
        if message.tool_call_id is not None:
            entry["tool_call_id"] = message.tool_call_id
        out.append(entry)
    return out


def to_chat(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Chat-completions messages, the agent's tool calls and their results kept; a call without a
    result (or a result without its call) is left out, as the API refuses either."""
    messages = list(messages)
    called = {c.id for m in messages for c in m.tool_calls if c.id}
    answered = {r.tool_call_id for m in messages for r in m.tool_results if r.tool_call_id}
    out: list[dict[str, Any]] = []
    for message in messages:
        results = [r for r in message.tool_results if r.tool_call_id in called]
        if message.role == "tool" or message.tool_results:
            for result in results:
                out.append({"role": "tool", "tool_call_id": result.tool_call_id, "content": _as_text(result.result)})
            continue
        entry: dict[str, Any] = {"role": message.role, "content": message.text}
        calls = [c for c in message.tool_calls if c.id in answered]
        if message.role == "assistant" and calls:
            entry["content"] = message.text or None
            entry["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _as_text(c.arguments)}}
                for c in calls
            ]
        elif not entry["content"]:
            continue  # only calls nobody answered: nothing to send
        out.append(entry)
    return out


def to_response_input(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """The Responses API's ``input``: messages, ``function_call`` and ``function_call_output`` items."""
    out: list[dict[str, Any]] = []
    for entry in to_chat(messages):
        if entry["role"] == "tool":
            out.append({"type": "function_call_output", "call_id": entry["tool_call_id"], "output": entry["content"]})
            continue
        if entry.get("content"):
            out.append({"role": entry["role"], "content": entry["content"]})
        for call in entry.get("tool_calls") or []:
            function = call["function"]
            out.append(
                {
                    "type": "function_call",
                    "call_id": call["id"],
                    "name": function["name"],
                    "arguments": function["arguments"],
                }
            )
    return out


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def turn_fields(query: list[Message], response: list[Message], tools: list[ToolDefinition]) -> dict[str, Any]:
    """The item fields of one turn, as a data source with its own row shape supplies them
    (stored responses, traces): ``query``, ``response``, ``messages``, ``tool_calls``, ``tool_definitions``."""
    definitions = [dataclasses.asdict(t) for t in tools]
    calls = [
        {"type": "tool_call", "tool_call_id": c.id, "name": c.name, "arguments": c.arguments}
        for c in tool_calls(response)
    ]
    return {
        "query": to_dicts(query),
        "response": to_dicts(response),
        "messages": to_dicts([*query, *response]),
        "tool_calls": calls,
        "tool_definitions": definitions,
    }
