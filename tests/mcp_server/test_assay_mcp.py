"""``assay mcp`` driven by the official MCP SDK's client, as a coding agent drives it: over stdio (the
agent starts the server) and over streamable HTTP. The client lists the tools, validates and runs an
eval.yaml (with progress), lists the run, explains its failures and compares two runs."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.support.fixtures import free_port, poll
from tests.test_readme_snippets import ROOT, blocks

TOOLS = {"run_eval", "list_runs", "get_run", "compare_runs", "explain_failures", "list_evaluators", "validate"}


def write_eval(folder: Path, answers: list[str]) -> None:
    """An F1 eval of five answers against 'the parcel is at the depot': ``answers`` decide which pass."""
    rows = [{"response": answer, "ground_truth": "the parcel is at the depot"} for answer in answers]
    (folder / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "eval.yaml").write_text(
        "name: parcels\ndataset: {local_uri: data.jsonl}\nevaluators: [builtin.f1_score]\n", encoding="utf-8"
    )


GOOD = ["the parcel is at the depot"] * 4 + ["no idea"]
WORSE = ["the parcel is at the depot"] * 2 + ["no idea"] * 3


async def agent_session(session: ClientSession, folder: Path) -> dict[str, Any]:
    """What a coding agent does with the tools; what it saw, for the test to check."""
    seen: dict[str, Any] = {}
    await session.initialize()
    listed = await session.list_tools()
    seen["tools"] = {tool.name: tool for tool in listed.tools}
    checked = await session.call_tool("validate", {"path": "eval.yaml"})
    seen["validate"] = checked
    broken = await session.call_tool("validate", {"path": "missing.yaml"})
    seen["validate_missing"] = broken
    progress: list[tuple[float, float | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    first = await session.call_tool("run_eval", {"path": "eval.yaml"}, progress_callback=on_progress)
    seen["first"], seen["progress"] = first, progress
    write_eval(folder, WORSE)
    seen["second"] = await session.call_tool("run_eval", {"path": "eval.yaml"})
    seen["runs"] = await session.call_tool("list_runs", {"eval": "parcels"})
    baseline = first.structured_content["id"]
    candidate = seen["second"].structured_content["id"]
    seen["explained"] = await session.call_tool("explain_failures", {"run_id": candidate})
    seen["compared"] = await session.call_tool("compare_runs", {"baseline": baseline, "candidate": candidate})
    seen["evaluators"] = await session.call_tool("list_evaluators", {})
    seen["resource"] = await session.read_resource(f"assay://runs/{baseline}")
    seen["unknown"] = await session.call_tool("get_run", {"run_id": "evalrun_nothing"})
    return seen


def check(seen: dict[str, Any]) -> None:
    assert TOOLS <= set(seen["tools"])
    assert seen["tools"]["run_eval"].input_schema["required"] == ["path"]
    assert not seen["validate"].is_error and "valid: 5 items" in text_of(seen["validate"])
    assert seen["validate_missing"].is_error and "missing.yaml" in text_of(seen["validate_missing"])
    first, second = seen["first"], seen["second"]
    assert not first.is_error, text_of(first)
    assert first.structured_content["status"] == "completed"
    assert "5 total, 4 passed, 1 failed" in text_of(first) and "f1" in text_of(first)
    assert seen["progress"] and seen["progress"][-1] == (5, 5)
    assert "5 total, 2 passed, 3 failed" in text_of(second)
    listed = seen["runs"].structured_content["runs"]
    # Newest first, to the second: these two may share one.
    assert {row["id"] for row in listed} == {second.structured_content["id"], first.structured_content["id"]}
    explained = seen["explained"]
    (group,) = explained.structured_content["groups"]
    assert group["cause"] == "failed" and group["count"] == 3 and len(group["examples"]) == 3
    assert "no idea" in text_of(explained)
    compared = seen["compared"].structured_content
    (row,) = compared["criteria"]
    assert (row["pass_rate_a"], row["pass_rate_b"], row["n"]) == (0.8, 0.4, 5)
    assert len(row["flipped"]) == 2 and row["verdict"] == "too few samples"  # the gate's word on five items
    assert "too few samples" in text_of(seen["compared"])
    assert "against" in text_of(seen["compared"]) and "4/5 → 2/5 passed" in text_of(seen["compared"])
    names = {row["name"] for row in seen["evaluators"].structured_content["evaluators"]}
    assert {"builtin.f1_score", "builtin.relevance"} <= names
    (content,) = seen["resource"].contents
    assert json.loads(content.text)["id"] == first.structured_content["id"]
    assert seen["unknown"].is_error and "evalrun_nothing" in text_of(seen["unknown"])


def text_of(result: Any) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "text", None))


def environment(home: Path) -> dict[str, str]:
    env = {**os.environ, "ASSAY_HOME": str(home)}
    env.pop("ASSAY_DATABASE_URL", None)
    return env


def test_a_coding_agent_uses_assay_over_stdio(tmp_path):
    """Started as the guide's MCP configuration says (its command, the venv's assay, and its args)."""
    write_eval(tmp_path, GOOD)
    (block,) = blocks("The MCP server", "json")
    entry = json.loads(block)["mcpServers"]["assay"]
    assert entry["command"] == ".venv/bin/assay"
    command = (
        str(ROOT / entry["command"]) if (ROOT / entry["command"]).exists() else str(Path(sys.prefix) / "bin/assay")
    )
    parameters = StdioServerParameters(
        command=command, args=entry["args"], cwd=str(tmp_path), env=environment(tmp_path / "home")
    )

    async def drive() -> dict[str, Any]:
        with tempfile.TemporaryFile("w+") as errors:
            async with stdio_client(parameters, errlog=errors) as (read, write), ClientSession(read, write) as session:
                return await asyncio.wait_for(agent_session(session, tmp_path), 240)

    check(asyncio.run(drive()))


@pytest.fixture
def http_server(tmp_path):
    port = free_port()
    with (tmp_path / "server.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "assay", "mcp", "--http", "--port", str(port)],
            cwd=tmp_path,
            env=environment(tmp_path / "home"),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            poll(lambda: _answers(port), bool, seconds=60)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)


def _answers(port: int) -> bool:
    try:
        httpx2.get(f"http://127.0.0.1:{port}/mcp", timeout=2)
        return True
    except httpx2.HTTPError:
        return False


def test_a_coding_agent_uses_assay_over_streamable_http(tmp_path, http_server):
    write_eval(tmp_path, GOOD)

    async def drive() -> dict[str, Any]:
        async with (
            streamable_http_client(http_server) as (read, write),
            ClientSession(read, write) as session,
        ):
            return await asyncio.wait_for(agent_session(session, tmp_path), 240)

    check(asyncio.run(drive()))


def test_cancelling_run_eval_stops_the_run_and_leaves_it_resumable(tmp_path, own_llm):
    """The judge answers two calls, then holds the rest: the client gives up waiting and cancels the
    call; the server stops the run (canceled, what it stored kept) instead of leaving it running."""
    own_llm.script(default={"content": '{"reason": "fine", "score": 4}'}, hold_after=2)
    rows = [{"query": f"question {i}", "response": f"answer {i}"} for i in range(20)]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "eval.yaml").write_text(
        "name: held\ndataset: {local_uri: data.jsonl}\n"
        f"models:\n  judge: {{model: gpt-4.1-mini, base_url: '{own_llm.base_url}', api_key: t}}\n"
        "options: {concurrency: 2}\n"
        "evaluators:\n  - {name: builtin.relevance, initialization_parameters: {model: judge}}\n",
        encoding="utf-8",
    )
    home = tmp_path / "home"
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "assay", "mcp"], cwd=str(tmp_path), env=environment(home)
    )

    async def drive() -> str:
        with tempfile.TemporaryFile("w+") as errors:
            async with stdio_client(parameters, errlog=errors) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                call = asyncio.ensure_future(session.call_tool("run_eval", {"path": "eval.yaml"}))
                made = await asyncio.to_thread(
                    poll, lambda: own_llm.stats()["requests"], lambda made: made > 2, seconds=60
                )
                assert made > 2, "the run never reached the judge"
                call.cancel()
                await asyncio.gather(call, return_exceptions=True)
                status = await asyncio.to_thread(
                    poll, lambda: run_status(home), lambda found: found == "canceled", seconds=60
                )
                return str(status)

    assert asyncio.run(drive()) == "canceled"


def run_status(home: Path) -> str | None:
    import sqlite3

    try:
        with sqlite3.connect(home / "assay.db") as conn:
            row = conn.execute("select status from runs").fetchone()
    except sqlite3.OperationalError:
        return None
    return None if row is None else str(row[0])
