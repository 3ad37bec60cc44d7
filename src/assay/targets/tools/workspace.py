"""A folder as read-only tools: list its files, read one, search them. What an agentic grader (promptfoo's
``agent-rubric``) inspects before it answers: the files a coding agent was asked to change, say.

Every path is taken relative to the folder and must stay inside it once resolved (``..`` and
symbolic links that lead out are refused); patterns run in RE2 (linear time). Nothing is written.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.errors import ItemError
from assay.llm import Model
from assay.regexes import compiled
from assay.targets.loop import run_loop
from assay.targets.tools.base import ToolSet

MAX_LISTED = 500
MAX_READ_BYTES = 100_000
MAX_SEARCHED_BYTES = 1_000_000
MAX_MATCHES = 200
SKIPPED = {".git", "node_modules", "__pycache__", ".venv"}


class Workspace:
    """The folder ``root`` and what may be read in it."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def inside(self, path: str) -> Path:
        found = (self.root / (path or ".")).resolve()
        if found != self.root and self.root not in found.parents:
            raise ItemError(f"{path!r} is outside the workspace")
        return found

    def shown(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."

    def files(self, start: Path) -> list[Path]:
        if start.is_file():
            return [start]
        found = []
        for folder, folders, names in os.walk(start):
            folders[:] = sorted(name for name in folders if name not in SKIPPED)
            found += [Path(folder) / name for name in sorted(names)]
        return found


class _ListFiles:
    name = "list_files"
    description = "List the files under a folder of the workspace (default: all of it), one relative path a line."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "additionalProperties": False}

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    async def __call__(self, arguments: dict[str, Any]) -> str:
        workspace = self.workspace
        start = workspace.inside(str(arguments.get("path") or "."))
        files = await asyncio.to_thread(workspace.files, start)
        shown = [workspace.shown(path) for path in files[:MAX_LISTED]]
        if len(files) > MAX_LISTED:
            shown.append(f"... and {len(files) - MAX_LISTED} more")
        return "\n".join(shown) or "(no files)"


class _ReadFile:
    name = "read_file"
    description = "Read a text file of the workspace (its first 100 KB)."
    parameters = {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    }

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    async def __call__(self, arguments: dict[str, Any]) -> str:
        path = self.workspace.inside(str(arguments.get("path") or ""))
        if not path.is_file():
            raise ItemError(f"no file {self.workspace.shown(path)!r} in the workspace")
        data = await asyncio.to_thread(_head, path, MAX_READ_BYTES + 1)
        text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
        return text + ("\n... (cut at 100 KB)" if len(data) > MAX_READ_BYTES else "")


class _SearchFiles:
    name = "search_files"
    description = "Search the workspace's text files for a regular expression; each match as path:line: text."
    parameters = {
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    async def __call__(self, arguments: dict[str, Any]) -> str:
        found = compiled(str(arguments.get("pattern") or ""))
        start = self.workspace.inside(str(arguments.get("path") or "."))
        return await asyncio.to_thread(self._search, found, start)

    def _search(self, found: Any, start: Path) -> str:
        matches: list[str] = []
        for path in self.workspace.files(start):
            text = _head(path, MAX_SEARCHED_BYTES).decode("utf-8", errors="replace")
            if "\0" in text:
                continue  # a binary file
            for number, line in enumerate(text.splitlines(), 1):
                if found(line):
                    matches.append(f"{self.workspace.shown(path)}:{number}: {line[:300]}")
                    if len(matches) == MAX_MATCHES:
                        return "\n".join([*matches, f"... (stopped at {MAX_MATCHES} matches)"])
        return "\n".join(matches) or "(no matches)"


def _head(path: Path, size: int) -> bytes:
    with path.open("rb") as handle:
        return handle.read(size)


class WorkspaceTools:
    """A tool source (``assay.targets.tools.base.ToolSource``): the folder's three read-only tools."""

    def __init__(self, root: Path) -> None:
        self.workspace = Workspace(root)

    async def open(self) -> Sequence[Any]:
        return [_ListFiles(self.workspace), _ReadFile(self.workspace), _SearchFiles(self.workspace)]

    async def aclose(self) -> None:
        return None


async def run_in_workspace(model: Model, messages: list[dict[str, Any]], root: Path, max_rounds: int) -> dict[str, Any]:
    """``model`` run as an agent over ``root`` with the read-only tools, at temperature 0 (an agentic
    grader): its last answer, its calls and their usage, and the tool calls it made."""
    tools = ToolSet([WorkspaceTools(root)])
    try:
        trajectory = await run_loop(model, tools, messages, {"temperature": 0}, max_rounds)
    finally:
        await tools.aclose()
    assert trajectory.last is not None
    return {
        "text": trajectory.last.text,
        "calls": trajectory.calls,
        "usage": trajectory.usage,
        "tool_calls": trajectory.tool_calls,
    }
