"""The tools of an MCP server, through the official ``mcp`` SDK: a server this process starts and
talks to over stdio (``command``), or one already running over streamable HTTP (``url``).

The SDK's transports are task-bound context managers, so one task owns the connection for the
whole run (entered and left in that task) and the loop's calls go through its session.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
from collections.abc import AsyncIterator
from typing import Any

from assay.errors import ConfigError
from assay.outbound import PinnedTransport

INSTALL_HINT = "pip install 'assay[mcp]'"
EXIT_MARK = "[assay: the server exited with code "
REPORTER = (
    "import signal, subprocess, sys\n"
    "try:\n"
    "    child = subprocess.Popen(sys.argv[1:])\n"
    "except OSError as exc:\n"
    "    print(f'cannot start {sys.argv[1]}: {exc.strerror}', file=sys.stderr)\n"
    f"    print({EXIT_MARK!r} + '127]', file=sys.stderr)\n"
    "    sys.exit(127)\n"
    "signal.signal(signal.SIGTERM, lambda *_: child.terminate())\n"
    "code = child.wait()\n"
    f"print({EXIT_MARK!r} + str(code) + ']', file=sys.stderr, flush=True)\n"
    "sys.exit(code if code >= 0 else 1)\n"
)
"""Runs a stdio server's command as its parent, its pipes passed straight through, and says how it
exited: the SDK's client keeps the process to itself, and a server that stops at start is best
explained by its exit code beside its last words."""


class McpTool:
    def __init__(self, server: McpTools, name: str, description: str, parameters: dict[str, Any]) -> None:
        self.server = server
        self.name = name
        self.description = description
        self.parameters = parameters

    async def __call__(self, arguments: dict[str, Any]) -> str:
        session = self.server.session
        if session is None:
            raise RuntimeError(f"the MCP server {self.server.where} is not connected")
        result = await session.call_tool(self.name, arguments)
        text = "\n".join(part.text for part in result.content if getattr(part, "type", None) == "text")
        if not text and result.structured_content is not None:
            import json

            text = json.dumps(result.structured_content, ensure_ascii=False)
        if result.is_error:
            raise RuntimeError(text or "the tool failed")
        return text


class McpTools:
    """One MCP server's tools, connected when the run first needs a tool, closed when it ends."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.where = " ".join(spec["command"]) if spec.get("command") else str(spec.get("url"))
        self.session: Any = None
        self._errors: Any = None
        """Where a server this process started writes its stderr: its last lines say why it stopped."""
        self._said = ""
        self._closing = asyncio.Event()
        self._owner: asyncio.Task[None] | None = None

    async def open(self) -> list[McpTool]:
        try:
            import mcp  # noqa: F401 - only to say what to install when it is missing
        except ModuleNotFoundError:
            raise ConfigError("MCP tools need the mcp SDK", hint=INSTALL_HINT) from None
        listed: asyncio.Future[list[McpTool]] = asyncio.get_running_loop().create_future()
        self._closing = asyncio.Event()
        self._owner = asyncio.create_task(self._hold(listed))
        return await listed

    async def _hold(self, listed: asyncio.Future[list[McpTool]]) -> None:
        from mcp import ClientSession

        try:
            async with self._transport() as streams, ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                tools = (await session.list_tools()).tools
                self.session = session
                listed.set_result(
                    [McpTool(self, t.name, t.description or "", dict(t.input_schema or {})) for t in tools]
                )
                await self._closing.wait()
        except Exception as exc:  # noqa: BLE001 - the run is told why, once, in its own words
            if not listed.done():
                said = self._said
                listed.set_exception(
                    ConfigError(
                        f"the MCP server {self.where} could not be used: {_why(exc)}" + (f"; {said}" if said else "")
                    )
                )
        finally:
            self.session = None
            if not listed.done():
                listed.set_exception(ConfigError(f"the MCP server {self.where} closed before it listed its tools"))

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[Any]:
        if self.spec.get("command"):
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            command = [sys.executable, "-c", REPORTER, *self.spec["command"]]
            parameters = StdioServerParameters(command=command[0], args=command[1:], cwd=self.spec.get("cwd"))
            with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errors:
                self._errors = errors
                try:
                    async with stdio_client(parameters, errlog=errors) as streams:
                        yield streams
                finally:
                    self._said = self._last_words()  # before the file goes: the error is told after
                    self._errors = None
        else:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

            # Through the one outbound policy: the operator named it, and in a server its addresses
            # are checked as any (a name leads to no inside address), the connection made to the one checked.
            transport = PinnedTransport(f"the MCP server {self.where}", named_by="operator")
            timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
            async with (
                httpx2.AsyncClient(transport=transport, timeout=timeout) as client,
                streamable_http_client(str(self.spec["url"]), http_client=client) as streams,
            ):
                yield streams

    def _last_words(self, lines: int = 5) -> str:
        """How the server ended: its exit code, when it has exited, and the last lines it wrote to
        stderr, on one line; empty when there is nothing to tell."""
        if self._errors is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._errors.flush()
            self._errors.seek(0)
            written = [line.strip() for line in self._errors.read()[-8000:].splitlines() if line.strip()]
            codes = [line.removeprefix(EXIT_MARK).rstrip("]") for line in written if line.startswith(EXIT_MARK)]
            said = " | ".join([line for line in written if not line.startswith(EXIT_MARK)][-lines:])
            exited = f"it exited with code {codes[-1]}" if codes else ""
            return "; ".join(part for part in (exited, f"it wrote to stderr: {said}" if said else "") if part)
        return ""

    async def aclose(self) -> None:
        self._closing.set()
        if self._owner is not None:
            with contextlib.suppress(Exception):
                await self._owner
            self._owner = None


def _why(exc: BaseException) -> str:
    """What went wrong, from inside the task groups the SDK wraps it in (a refusal of the outbound
    policy, a refused connection), not "unhandled errors in a TaskGroup"."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    hint = getattr(exc, "hint", None)
    return f"{message} ({hint})" if hint else message
