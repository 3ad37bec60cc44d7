"""``assay import``: what users bring from other tools, as assay's own files."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.common import out


@click.group("import")
def import_group() -> None:
    """Bring configs from other tools: promptfoo."""


@import_group.command("promptfoo")
@click.argument("config", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write eval.yaml and tests.jsonl (default: beside CONFIG, in <stem>-assay/).",
)
def import_promptfoo(config: Path, folder: Path | None) -> None:
    """Write CONFIG (a promptfooconfig.yaml) as eval.yaml files and a dataset, ready for assay run."""
    from assay.promptfoo import load_suite, write_files

    suite = load_suite(config)
    target = folder or config.parent / f"{config.stem}-assay"
    written = write_files(suite, target)
    rows = len(suite.tests) * len(suite.prompts)
    out.print(f"{len(suite.tests)} tests × {len(suite.prompts)} prompts = {rows} rows in {target / 'tests.jsonl'}")
    for path in written:
        out.print(f"wrote {path}   run it with  assay run {path}")
