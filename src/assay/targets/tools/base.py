"""The tool protocol, a run's set of tools, and the sources they come from."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from assay.errors import ConfigError
from assay.targets.tools.functions import ModuleTools
from assay.targets.tools.mcp import McpTools

SOURCE_SHAPES = "a tool source is {python: FILE}, {mcp: {command: [PROGRAM, ARG, ...]}} or {mcp: {url: URL}}"
DEFAULT_TOOL_TIMEOUT_S = 60.0
"""How long one tool call may take before the model is told it timed out: a slow search or API
call fits, a tool that hangs does not hold the run."""
LONGEST_TOOL_TIMEOUT_S = 24 * 3600.0


@dataclass(frozen=True)
class ToolTimeouts:
    """How long each tool call may take: ``default`` seconds, or the tool's own (``per_tool``)."""

    default: float = DEFAULT_TOOL_TIMEOUT_S
    per_tool: dict[str, float] = field(default_factory=dict)

    def of(self, name: str) -> float:
        return self.per_tool.get(name, self.default)


def check_timeouts(raw: Any, where: str) -> ToolTimeouts:
    """``tool_timeout_s``: seconds for every tool (``30``), or a default and some tools' own
    (``{default: 30, search_web: 120}``)."""
    if raw is None:
        return ToolTimeouts()
    shape = f"{where}: seconds (such as 60), or {{default: 60, TOOL: 300}} for some tools' own"
    given = raw if isinstance(raw, dict) else {"default": raw}
    seconds: dict[str, float] = {}
    for name, value in given.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= LONGEST_TOOL_TIMEOUT_S:
            raise ConfigError(
                f"{where}{'' if name == 'default' and not isinstance(raw, dict) else '.' + str(name)}: "
                f"seconds from 0 to {LONGEST_TOOL_TIMEOUT_S:.0f}, got {value!r}",
                hint=shape,
            )
        seconds[str(name)] = float(value)
    default = seconds.pop("default", DEFAULT_TOOL_TIMEOUT_S)
    return ToolTimeouts(default, seconds)


class Tool(Protocol):
    """One function the model may call."""

    name: str
    description: str
    parameters: dict[str, Any]
    """The JSON schema of its arguments."""

    async def __call__(self, arguments: dict[str, Any]) -> str: ...


@dataclass
class ToolCall:
    """One call the model made and what it got back."""

    call_id: str
    name: str
    arguments: str
    output: str
    error: str | None = None


class ToolSource(Protocol):
    """Where tools come from; opened once per run, closed when the run ends."""

    async def open(self) -> Sequence[Tool]: ...

    async def aclose(self) -> None: ...


@dataclass
class ToolSet:
    """The tools of a target's sources, opened on first use within the run's event loop."""

    sources: list[ToolSource]
    timeouts: ToolTimeouts = field(default_factory=ToolTimeouts)
    tools: dict[str, Tool] = field(default_factory=dict)
    _opened: asyncio.Lock | None = None
    _ready: bool = False
    _failure: ConfigError | None = None
    """Why the tools could not be opened: every later item fails the same way at once."""

    async def ready(self) -> None:
        if self._ready:
            return
        self._opened = self._opened or asyncio.Lock()
        async with self._opened:
            if self._failure is not None:
                raise self._failure
            if self._ready:
                return
            try:
                for source in self.sources:
                    for tool in await source.open():
                        if tool.name in self.tools:
                            raise ConfigError(f"two tools are called {tool.name!r}", hint="rename one of them")
                        self.tools[tool.name] = tool
            except Exception as exc:  # noqa: BLE001 - a module that will not load fails its items, not the run's tasks
                failure = exc if isinstance(exc, ConfigError) else ConfigError(f"{type(exc).__name__}: {exc}")
                self._failure = failure
                raise failure from None
            self._ready = True

    def definitions(self) -> list[dict[str, Any]]:
        """The tools as chat completions takes them."""
        return [
            {
                "type": "function",
                "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
            }
            for tool in self.tools.values()
        ]

    async def call(self, call_id: str, name: str, arguments: str) -> ToolCall:
        """Run one call; an unknown tool, arguments that are not JSON, a tool that raises or one
        that takes longer than its timeout are the call's error, which the model is shown."""
        tool = self.tools.get(name)
        if tool is None:
            error = f"there is no tool {name!r} (the tools are {', '.join(sorted(self.tools)) or 'none'})"
            return ToolCall(call_id, name, arguments, f"error: {error}", error)
        try:
            parsed = json.loads(arguments or "{}")
            if not isinstance(parsed, dict):
                raise ValueError("the arguments must be a JSON object")
            limit = self.timeouts.of(name)
            output = await asyncio.wait_for(tool(parsed), limit)
        except TimeoutError:
            error = f"the tool {name!r} did not answer within {limit:g} s (tool_timeout_s), so it was abandoned"
            return ToolCall(call_id, name, arguments, f"error: {error}", error)
        except Exception as exc:  # noqa: BLE001 - a tool's failure is the model's to see, and the call's record
            error = f"{type(exc).__name__}: {exc}"
            return ToolCall(call_id, name, arguments, f"error: {error}", error)
        return ToolCall(call_id, name, arguments, output)

    async def aclose(self) -> None:
        for source in self.sources:
            await source.aclose()
        self.tools.clear()
        self._ready = False


def check_sources(raw: Any, where: str, base: Path | None = None) -> list[dict[str, Any]]:
    """A target's ``tools:`` checked entry by entry, files resolved against ``base``: data a run
    stores whole (``open_tools`` makes them tools)."""
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: expected a list of tool sources", hint=SOURCE_SHAPES)
    checked: list[dict[str, Any]] = []
    for index, entry in enumerate(raw):
        at = f"{where}[{index}]"
        if not isinstance(entry, dict) or len(entry) != 1:
            raise ConfigError(f"{at}: {entry!r} is not a tool source", hint=SOURCE_SHAPES)
        ((kind, value),) = entry.items()
        if kind == "python" and isinstance(value, str) and value:
            path = Path(value) if base is None or Path(value).is_absolute() else base / value
            if not path.is_file():
                raise ConfigError(f"{at}.python: no file {path}")
            checked.append({"python": str(path.resolve())})
        elif kind == "mcp" and isinstance(value, dict) and _mcp_shape(value):
            server = dict(value)
            if server.get("command") and base is not None:
                server.setdefault("cwd", str(base.resolve()))  # its files beside eval.yaml, as the user sees them
            checked.append({"mcp": server})
        else:
            raise ConfigError(f"{at}: {entry!r} is not a tool source", hint=SOURCE_SHAPES)
    return checked


def _mcp_shape(value: dict[str, Any]) -> bool:
    command, url = value.get("command"), value.get("url")
    if (command is None) == (url is None):
        return False
    if command is not None:
        return isinstance(command, list) and bool(command) and all(isinstance(part, str) for part in command)
    return isinstance(url, str) and url.startswith(("http://", "https://"))


def open_tools(sources: list[dict[str, Any]], timeouts: ToolTimeouts | None = None) -> ToolSet:
    """The tool set of checked sources (nothing is started until the run first needs a tool)."""
    opened: list[ToolSource] = []
    for source in sources:
        if "python" in source:
            opened.append(ModuleTools(Path(source["python"])))
        else:
            opened.append(McpTools(source["mcp"]))
    return ToolSet(opened, timeouts or ToolTimeouts())
