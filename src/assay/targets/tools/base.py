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
        """Run one call; an unknown tool, arguments that are not JSON or a tool that raises are the
        call's error, which the model is shown."""
        tool = self.tools.get(name)
        if tool is None:
            error = f"there is no tool {name!r} (the tools are {', '.join(sorted(self.tools)) or 'none'})"
            return ToolCall(call_id, name, arguments, f"error: {error}", error)
        try:
            parsed = json.loads(arguments or "{}")
            if not isinstance(parsed, dict):
                raise ValueError("the arguments must be a JSON object")
            output = await tool(parsed)
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


def open_tools(sources: list[dict[str, Any]]) -> ToolSet:
    """The tool set of checked sources (nothing is started until the run first needs a tool)."""
    opened: list[ToolSource] = []
    for source in sources:
        if "python" in source:
            opened.append(ModuleTools(Path(source["python"])))
        else:
            opened.append(McpTools(source["mcp"]))
    return ToolSet(opened)
