"""``assay generate queries``: synthetic test queries from a prompt, an agent's instructions and
tools, or a document, deduplicated, saved as the next version of a dataset (and as JSONL)."""

from __future__ import annotations

import asyncio
import json
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import click

from assay.cli.common import CACHE_OPTION, DEFAULT_PROJECT, open_store, out
from assay.cli.run import progress_bar
from assay.cli.serve import models_from_file
from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.llm import CacheMode, Model
    from assay.synth import Brief, Generated

MAX_DOCUMENT_CHARS = 20_000_000
"""A document longer than this is read to here, and the output says so."""


@click.group("generate")
def generate_group() -> None:
    """Synthetic test data."""


@generate_group.command("queries")
@click.option("--prompt", help="What the queries are about.")
@click.option("--agent", metavar="NAME[:VERSION]", help="Write them from this agent's instructions and tools.")
@click.option(
    "--from-file",
    "document",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Write queries this document answers.",
)
@click.option("--count", type=click.IntRange(1, 1000), default=20, show_default=True)
@click.option("--model", required=True, metavar="MODEL", help="The model that writes them.")
@click.option(
    "--models", "models_file", type=click.Path(path_type=Path, exists=True), help="YAML with models:/agents:."
)
@click.option("--save", "save_as", metavar="NAME", help="Save them as the next version of this dataset.")
@click.option("--out", "out_file", type=click.Path(path_type=Path, dir_okay=False), help="Write them as JSONL.")
@click.option("--seed", type=int, default=0, show_default=True, help="The same seed writes the same queries.")
@click.option("--estimate", is_flag=True, help="Print the most calls it could make; call nothing.")
@CACHE_OPTION
def generate_queries_command(
    prompt: str | None,
    agent: str | None,
    document: Path | None,
    count: int,
    model: str,
    models_file: Path | None,
    save_as: str | None,
    out_file: Path | None,
    seed: int,
    estimate: bool,
    cache_mode: CacheMode,
) -> None:
    """Write COUNT distinct test queries with MODEL; save them with --save or --out."""
    from assay.synth import Brief
    from assay.targets.agents import find_agent

    if not (prompt or agent or document):
        raise ConfigError("say what to write queries about: --prompt, --agent or --from-file")
    store = open_store()
    models = models_from_file(models_file, store, cache_mode)
    brief = Brief(prompt=prompt)
    if agent is not None:
        name, _, version = agent.partition(":")
        found = find_agent(models.agents, name, version or None)
        brief = Brief(prompt=prompt, agent_instructions=found.instructions or None, tools=found.tool_descriptions)
    if document is not None:
        text = document.read_text(encoding="utf-8", errors="replace")
        if len(text) > MAX_DOCUMENT_CHARS:
            out.print(f"[yellow]{document}: only its first {MAX_DOCUMENT_CHARS:,} characters are read[/]")
            text = text[:MAX_DOCUMENT_CHARS]
        brief = Brief(
            prompt=brief.prompt, agent_instructions=brief.agent_instructions, tools=brief.tools, document=text
        )
    if estimate:
        out.print(f"estimate: 1 to 6 calls to {model} for {count} queries (more only if it repeats itself)")
        return
    writer = models.get(model)
    writer.check_credentials()
    generated = _write(writer, brief, count, seed ^ zlib.crc32(repr(brief).encode()))
    out.print(
        f"{len(generated.rows)} distinct queries in {generated.rounds} rounds "
        f"({generated.dropped_duplicates} repeats dropped)"
    )
    if generated.shortfall:
        out.print(f"[yellow]{generated.shortfall}[/]")
    if generated.coverage:
        out.print(f"[dim]{generated.coverage} (each row's generator.sections says which)[/]")
    content = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in generated.rows)
    if save_as:
        saved = store.save_dataset(DEFAULT_PROJECT, save_as, content.encode())
        out.print(f"saved as dataset {save_as} version {saved['version']}  (dataset: {{name: {save_as}}} in eval.yaml)")
    if out_file is not None:
        out_file.write_text(content, encoding="utf-8")
        out.print(f"wrote {out_file}")
    if not save_as and out_file is None:
        for row in generated.rows:
            out.print(f"- {row['query']}", markup=False)


def _write(writer: Model, brief: Brief, count: int, seed: int) -> Generated:
    from assay.synth import generate_queries

    with progress_bar() as progress:
        task = progress.add_task("writing", total=count)

        async def go() -> Generated:
            try:
                return await generate_queries(
                    writer, brief, count, seed=seed, on_round=lambda kept: progress.update(task, completed=kept)
                )
            finally:
                await writer.aclose()

        return asyncio.run(go())
