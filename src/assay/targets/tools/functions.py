"""Python functions as tools: every public function of a module file that has a docstring and type
hints, its parameters' schema made by pydantic from the hints. Run in this process (the local CLI:
the user's own code); the API never takes a module path."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import inspect
import json
import sys
import threading
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, create_model

from assay.errors import ConfigError


class FunctionTool:
    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.name = function.__name__
        self.description = inspect.cleandoc(function.__doc__ or "")
        hints = typing.get_type_hints(function)  # a module with `from __future__ import annotations` too
        fields: dict[str, Any] = {}
        for name, parameter in inspect.signature(function).parameters.items():
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            default = ... if parameter.default is parameter.empty else parameter.default
            fields[name] = (hints.get(name, parameter.annotation), default)
        self.arguments = create_model(f"{self.name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
        schema = self.arguments.model_json_schema()
        schema.pop("title", None)
        for field in schema.get("properties", {}).values():
            field.pop("title", None)
        self.parameters = schema

    async def __call__(self, arguments: dict[str, Any]) -> str:
        given = self.arguments.model_validate(arguments)
        values = {name: getattr(given, name) for name in type(given).model_fields}
        if inspect.iscoroutinefunction(self.function):
            result = await self.function(**values)
        else:
            result = await _in_daemon_thread(self.function, values)
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


async def _in_daemon_thread(function: Callable[..., Any], values: dict[str, Any]) -> Any:
    """Call ``function`` in a thread of its own that the process does not wait for: a tool abandoned
    at its timeout (a thread cannot be stopped) then holds up neither the run's end nor the exit,
    as it would in asyncio's default executor."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(outcome: Any, failure: BaseException | None) -> None:
        if not done.done():
            done.set_exception(failure) if failure is not None else done.set_result(outcome)

    def work() -> None:
        outcome, failure = None, None
        try:
            outcome = function(**values)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting call, as to_thread would
            failure = exc
        with contextlib.suppress(RuntimeError):  # the run ended while it ran: nobody waits for it now
            loop.call_soon_threadsafe(settle, outcome, failure)

    threading.Thread(target=work, name=f"assay-tool-{function.__name__}", daemon=True).start()
    return await done


class ModuleTools:
    """The tools of one module file, imported when the run first needs them."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def open(self) -> list[FunctionTool]:
        module = _load(self.path)
        public = [
            value
            for name, value in vars(module).items()
            if inspect.isfunction(value) and value.__module__ == module.__name__ and not name.startswith("_")
        ]
        tools = [FunctionTool(value) for value in public if _unusable(value) is None]
        if not tools:
            skipped = "; ".join(f"{f.__name__}: {_unusable(f)}" for f in public) or "it defines no public function"
            raise ConfigError(
                f"{self.path}: no tools found ({skipped})",
                hint="a tool is a public function with a docstring (the model reads it) and type hints on "
                "its parameters",
            )
        return tools

    async def aclose(self) -> None:
        return None


def _unusable(function: Callable[..., Any]) -> str | None:
    """Why a public function is not a tool (None: it is one)."""
    if not function.__doc__:
        return "no docstring"
    parameters = inspect.signature(function).parameters.values()
    bare = [p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.annotation is p.empty]
    return f"no type hint on {', '.join(bare)}" if bare else None


def _load(path: Path) -> Any:
    name = f"assay_tools_{abs(hash(str(path)))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ConfigError(f"{path}: importing it failed: {type(exc).__name__}: {exc}") from None
    return module
