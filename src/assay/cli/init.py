"""``assay init [DIR] [--template qa|rag|agent-tools|conversation]``."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.common import invoked_as, out

TEMPLATE_NAMES = ("qa", "rag", "agent-tools", "conversation")  # assay.scaffold.TEMPLATES, named without importing it


@click.command("init")
@click.argument("folder", metavar="[DIR]", type=click.Path(path_type=Path, file_okay=False), default=".")
@click.option(
    "--template",
    type=click.Choice(TEMPLATE_NAMES),
    default="qa",
    show_default=True,
    help="qa: answers against references; rag: retrieval and answers; agent-tools: tool calls; "
    "conversation: multi-turn chats.",
)
@click.option("--force", is_flag=True, help="Overwrite eval.yaml and data.jsonl if they exist.")
def init_command(folder: Path, template: str, force: bool) -> None:
    """Write a runnable eval.yaml and a small dataset into DIR (default: here)."""
    from assay.scaffold import TEMPLATES, write

    written = write(folder, template, force=force)
    out.print(f"wrote {', '.join(str(p) for p in written)} ({TEMPLATES[template].summary})", soft_wrap=True)
    config = written[0] if folder != Path(".") else Path("eval.yaml")
    out.print(
        f"next: {invoked_as()} run {config}   (offline; uncomment models: and the judges to add LLM judges)",
        markup=False,
        soft_wrap=True,
    )
