"""The MCP server: ``answers`` bound to the official SDK's ``MCPServer``.

Each tool answers with a short text for the model and the same as structured JSON. A user's
mistake (a bad eval.yaml, an unknown run) is the tool's error, with the file:line and the hint the
CLI would print. ``run_eval`` runs the eval.yaml through the same door as ``assay run`` (its run
request, ``finish_run``) in a worker thread, reports each stored item as an MCP progress
notification, and stops the run (canceled, resumable) when the client cancels the call.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent

from assay.config.evalyaml import load_eval_config
from assay.errors import AssayError, UserError
from assay.evaluators.catalog import load_catalog
from assay.mcp_server import answers
from assay.mcp_server.answers import Answer
from assay.run.engine import DEFAULT_CONCURRENCY, RunOptions
from assay.run.from_config import run_config
from assay.store import DEFAULT_PROJECT, Store

INSTRUCTIONS = """assay evaluates LLM models and agents. An eval is an eval.yaml file: a dataset, the
models it calls, an optional target (the model or agent under test) and evaluators. Use validate
before run_eval; read a run with get_run, its failures with explain_failures; gate a change with
compare_runs(baseline, candidate), where a criterion marked "degraded" is a regression."""

PROGRESS_SECONDS = 0.5
"""The least time between two progress notifications of one run."""


def _answered(found: Answer) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=found.text)], structured_content=found.data)


def _refused(error: AssayError) -> CallToolResult:
    hint = error.hint if isinstance(error, UserError) else None
    text = str(error) + (f"\nhint: {hint}" if hint else "")
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


async def _answer(work: Callable[[], Answer]) -> CallToolResult:
    """``work`` off the event loop (the store is synchronous); a user's mistake as the tool's error."""
    try:
        return _answered(await asyncio.to_thread(work))
    except AssayError as exc:
        return _refused(exc)


def build_server(store_factory: Callable[[], Store] = Store, root: Path | None = None) -> MCPServer:
    """The server over the store ``store_factory`` opens; eval.yaml paths are read relative to ``root``
    (the working directory by default)."""
    server = MCPServer("assay", instructions=INSTRUCTIONS)
    state: dict[str, Store] = {}

    def store() -> Store:
        if "store" not in state:
            state["store"] = store_factory()
        return state["store"]

    def path_of(path: str) -> Path:
        given = Path(path).expanduser()
        return given if given.is_absolute() else (root or Path.cwd()) / given

    @server.tool()
    async def run_eval(path: str, ctx: Context, limit: int | None = None, resume: str | None = None) -> CallToolResult:
        """Run an eval.yaml (or resume an interrupted run of it by its id): evaluate its dataset with its
        evaluators and store the results. Returns the run id, each criterion's pass rate and the counts.
        Progress is reported per stored item; cancelling the call stops the run (resumable)."""
        return await _run_eval(store(), path_of(path), ctx, limit, resume)

    @server.tool()
    async def list_runs(eval: str | None = None, limit: int = 20) -> CallToolResult:
        """The most recent runs (of one eval, by its name), newest first: id, status, items, pass rate."""
        return await _answer(lambda: answers.list_runs(store(), eval, limit))

    @server.tool()
    async def get_run(run_id: str) -> CallToolResult:
        """One run: its status, counts, each criterion's pass rate with its 95% interval, and cost."""
        return await _answer(lambda: answers.get_run(store(), run_id))

    @server.tool()
    async def compare_runs(baseline: str, candidate: str) -> CallToolResult:
        """Compare a candidate run with a baseline run item by item (paired tests, Holm-adjusted): each
        criterion's verdict (degraded, improved, changed, no change) and the items that flipped."""
        return await _answer(lambda: answers.compare(store(), baseline, candidate))

    @server.tool()
    async def explain_failures(run_id: str, criterion: str | None = None) -> CallToolResult:
        """Why a run's items failed: failed and errored results grouped by criterion and cause, with a
        few examples each and the judges' reasons."""
        return await _answer(lambda: answers.explain_failures(store(), run_id, criterion))

    @server.tool()
    async def list_evaluators() -> CallToolResult:
        """The evaluators an eval.yaml may name: built-in metrics and LLM judges, and registered ones."""
        return await _answer(lambda: answers.list_evaluators(load_catalog(store(), DEFAULT_PROJECT)))

    @server.tool()
    async def validate(path: str) -> CallToolResult:
        """Check an eval.yaml and its dataset as a run would before its first item, calling no model:
        'valid' with the item count, or each mistake with its file:line and how to fix it."""
        return await _answer(lambda: answers.validate(store(), path_of(path)))

    @server.resource("assay://runs/{run_id}", mime_type="application/json")
    def run_resource(run_id: str) -> dict[str, Any]:
        """A stored run: its status and summary."""
        return answers.get_run(store(), run_id).data

    return server


async def _run_eval(store: Store, path: Path, ctx: Context, limit: int | None, resume: str | None) -> CallToolResult:
    loop = asyncio.get_running_loop()
    canceled = threading.Event()
    counted = {"done": 0, "total": 0}
    last_sent = [0.0]

    async def notify(done: int) -> None:
        await ctx.report_progress(done, counted["total"] or None, f"{done} items stored")

    def started(run: Any, prepared: Any) -> None:
        counted["total"] = prepared.total * prepared.definition.trials

    def stored(count: int) -> None:
        counted["done"] += count
        now = time.monotonic()
        if now - last_sent[0] >= PROGRESS_SECONDS or counted["done"] == counted["total"]:
            last_sent[0] = now
            asyncio.run_coroutine_threadsafe(notify(counted["done"]), loop)

    def work() -> Answer:
        config = load_eval_config(path)
        options = RunOptions(
            concurrency=int(config.options.get("concurrency", DEFAULT_CONCURRENCY)),
            keep_going=lambda: not canceled.is_set(),
            check_seconds=0.2,
        )
        outcome = run_config(
            config, store, limit=limit, resume=resume, options=options, on_stored=stored, on_start=started
        )
        found = answers.run_answer(outcome.run)
        found.data["summary"] = outcome.summary.model_dump(mode="json")
        found.text = answers.summary_text(outcome.run, outcome.summary)
        return found

    running = loop.run_in_executor(None, work)
    try:
        found = await asyncio.shield(running)
    except asyncio.CancelledError:
        canceled.set()  # the run stops at its next check, what it stored kept: resume continues it
        await asyncio.gather(running, return_exceptions=True)
        raise
    except AssayError as exc:
        return _refused(exc)
    return _answered(found)
