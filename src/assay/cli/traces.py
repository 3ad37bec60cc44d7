"""``assay traces``: import OTLP files, list and show traces as they will be evaluated, sample them."""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from assay.cli.common import dumps, open_store, out
from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.run.trace_sources import Level

NS = 1_000_000_000


@click.group("traces")
def traces_group() -> None:
    """Stored OpenTelemetry traces: import, list, show, sample."""


@traces_group.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--project", default="default", show_default=True)
def import_traces(files: tuple[Path, ...], project: str) -> None:
    """Load OTLP/JSON files: one export request per .json file, or one per line of a .jsonl file."""
    from assay.traces.otlp import OtlpError, decode

    store = open_store()
    read = new = bad = 0
    for path in files:
        before = read + bad
        for line, text in _documents(path):
            try:
                decoded = decode(text.encode(), "application/json")
            except OtlpError as exc:
                out.print(f"[red]{path}:{line}[/]: {exc}", soft_wrap=True)
                bad += 1
                continue
            for problem in decoded.problems:
                out.print(f"[yellow]{path}:{line}[/]: span rejected: {problem}", soft_wrap=True)
            bad += decoded.rejected
            read += len(decoded.spans)
            new += store.add_spans(project, decoded.spans)
        if read + bad == before:
            hint = 'an OTLP/JSON export looks like {"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}'
            raise ConfigError(f"{path}: no spans in this file", hint=hint)
    out.print(f"{read} spans read, {new} new, {read - new} already stored, {bad} rejected")
    if bad:
        sys.exit(1)


def _documents(path: Path) -> list[tuple[int, str]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".jsonl":
        return [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    return [(1, text)]


@traces_group.command("list")
@click.option("--agent", help="Only this agent (NAME).")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--project", default="default", show_default=True)
@click.option("--wide", is_flag=True, help="Whole trace ids, however wide.")
@click.option("--json", "as_json", is_flag=True, help="Print the traces as JSON.")
def list_traces(agent: str | None, limit: int, project: str, wide: bool, as_json: bool) -> None:
    """The newest traces with an agent span (ids shortened: any unique start works in traces show)."""
    store = open_store()
    rows = store.list_traces(project, agent_name=agent, limit=limit)
    if as_json:
        out.print_json(dumps(rows))
        return
    table = Table(title_justify="left", box=None, pad_edge=False)
    for column in ("trace id", "agent", "conversation", "started (UTC)", "spans"):
        table.add_column(column, no_wrap=column not in ("agent", "conversation"), min_width=len(column))
    for row in rows:
        agent_id = f"{row['agent_name']}:{row['agent_version']}" if row["agent_version"] else row["agent_name"]
        started = datetime.fromtimestamp(row["start_ns"] / NS, UTC).strftime("%Y-%m-%d %H:%M:%S")
        spans = str(row.get("spans", 0))
        trace_id = row["trace_id"] if wide else row["trace_id"][:SHORT_TRACE]
        table.add_row(trace_id, agent_id or "–", row["conversation_id"] or "–", started, spans)
    out.print(table)
    if not rows:
        out.print(
            f"no traces in {store.url} (project {project}): send spans to POST /v1/traces (assay serve) "
            "or use assay traces import FILE"
        )


SHORT_TRACE = 12
"""Hex digits of a trace id ``traces list`` shows (a collision at 12 needs about 16 million traces)."""


@traces_group.command("show")
@click.argument("trace_id")
@click.option("--project", default="default", show_default=True)
def show_trace(trace_id: str, project: str) -> None:
    """The trace's turns as evaluators will see them: query, response, tool calls, problems."""
    from assay.traces.conversion import turns_of

    store = open_store()
    trace_id = store.trace_id_for(project, trace_id)
    spans = store.trace_spans(project, [trace_id])[trace_id]
    turns = turns_of(spans)
    if not turns:
        out.print(f"trace {trace_id}: {len(spans)} spans, but no invoke_agent span, so nothing to evaluate")
    for turn in turns:
        item = turn.item()
        out.rule(f"turn {turn.span.span_id} · agent {item['agent_id']} · conversation {item['conversation_id'] or '–'}")
        for role, messages in (("query", item["query"]), ("response", item["response"])):
            out.print(f"[bold]{role}[/]")
            for message in messages:
                out.print(f"  [cyan]{message['role']}[/]: {_render(message['content'])}", soft_wrap=True)
        names = ", ".join(t["name"] for t in item["tool_definitions"]) or "none"
        out.print(f"[bold]tools defined[/]: {names}")
        for problem in turn.problems:
            out.print(f"[yellow]problem[/]: {problem}", soft_wrap=True)


def _render(parts: list[dict[str, Any]]) -> str:
    shown = []
    for part in parts:
        if part.get("type") == "text":
            shown.append(part.get("text", ""))
        elif part.get("type") == "tool_call":
            shown.append(f"[TOOL_CALL] {part.get('name')}({json.dumps(part.get('arguments'), ensure_ascii=False)})")
        elif part.get("type") == "tool_result":
            shown.append(f"[TOOL_RESULT] {json.dumps(part.get('tool_result'), ensure_ascii=False)}")
    return " ".join(shown)


@traces_group.command("sample")
@click.option("--agent", "agent_id", required=True, metavar="NAME[:VERSION]", help="The agent whose traces to sample.")
@click.option("--max", "count", default=200, show_default=True, type=click.IntRange(1, 1_000_000))
@click.option("--strategy", type=click.Choice(["smart", "random"]), default="smart", show_default=True)
@click.option(
    "--hours",
    default=168.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="How far back to look.",
)
@click.option("--level", type=click.Choice(["turn", "conversation"]), default="turn", show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option(
    "--edge-buffer/--no-edge-buffer",
    default=True,
    show_default=True,
    help="Leave out conversations active within 5 minutes of the window's edges (they may be "
    "unfinished), as the API's agent_filter does.",
)
@click.option("--save", "save_as", metavar="NAME", help="Save the sample as a named, versioned dataset.")
@click.option("--version", "version", default="1", show_default=True, help="The saved dataset's version.")
@click.option("--project", default="default", show_default=True)
def sample_traces(
    agent_id: str,
    count: int,
    strategy: str,
    hours: float,
    level: Level,
    seed: int,
    edge_buffer: bool,
    save_as: str | None,
    version: str,
    project: str,
) -> None:
    """Pick up to --max of an agent's recent traces; print what each stage removed."""
    from assay.run.trace_sources import TraceSelection, resolve

    name, _, agent_version = agent_id.partition(":")
    now = time.time()
    selection = TraceSelection(
        agent_name=name,
        agent_version=agent_version or None,
        start_ns=int((now - hours * 3600) * NS),
        end_ns=int(now * NS),
        max_traces=count,
        strategy="smart" if strategy == "smart" else "random",
        seed=seed,
        edge_buffer=edge_buffer,
    )
    store = open_store()
    resolved = resolve(store, project, selection, level)
    assert resolved.report is not None
    for line in resolved.report.lines():
        out.print(line)
    for note in resolved.notes:
        out.print(f"[yellow]{note}[/] (--no-edge-buffer keeps them)")
    if save_as is None:
        return
    dataset = resolved.dataset(store, project, level)
    from assay.config.settings import settings

    home = settings().home / "datasets"
    home.mkdir(parents=True, exist_ok=True)
    path = home / f"{save_as}-{version}.jsonl"
    with path.open("w", encoding="utf-8") as file:
        for item in dataset.items():
            file.write(json.dumps(item, ensure_ascii=False) + "\n")
    record = store.register_dataset(name=save_as, version=version, uri=str(path.resolve()), project=project)
    out.print(f"saved {record['name']}@{record['version']} → {record['uri']}")
