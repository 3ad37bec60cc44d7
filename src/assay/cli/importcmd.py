"""``assay import``: what users bring from other tools, as assay's own files."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.common import invoked_as, out


@click.group("import")
def import_group() -> None:
    """Bring configs and results from other tools: promptfoo, OpenAI Evals."""


@import_group.command("evals-registry")
@click.argument("registry", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--eval", "names", multiple=True, help="Only this eval of the file (repeatable); default: every one.")
@click.option(
    "--data",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The registry's data folder (default: data/ beside the evals/ folder REGISTRY is in).",
)
@click.option("--model", default="gpt-4.1-mini", show_default=True, help="The model that answers each sample.")
@click.option(
    "--out",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("evals-registry"),
    show_default=True,
    help="Where to write one folder per eval (its eval.yaml and samples.jsonl).",
)
def import_evals_registry(registry: Path, names: tuple[str, ...], data: Path | None, model: str, folder: Path) -> None:
    """Write the evals of REGISTRY (an openai/evals registry YAML) as eval.yaml files with their samples."""
    from assay.formats.evals_registry import load_registry, write_eval

    loaded = load_registry(registry, data, list(names) or None)
    for found in loaded.evals:
        path = write_eval(found, folder / found.name, model)
        out.print(
            f"{found.name}: {len(found.samples)} samples → {path}   run it with  {invoked_as()} run {path}",
            highlight=False,
        )
    for reason in loaded.skipped:
        out.print(f"[yellow]skipped[/] {reason}", highlight=False)


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
    from assay.formats.promptfoo import load_suite, write_files

    suite = load_suite(config)
    target = folder or config.parent / f"{config.stem}-assay"
    written = write_files(suite, target)
    rows = len(suite.tests) * len(suite.prompts)
    out.print(f"{len(suite.tests)} tests × {len(suite.prompts)} prompts = {rows} rows in {target / 'tests.jsonl'}")
    for path in written:
        out.print(f"wrote {path}   run it with  {invoked_as()} run {path}")


@import_group.command("ai-agent-evals")
@click.argument("data_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out", "folder", type=click.Path(file_okay=False, path_type=Path), help="Default: <stem>-assay/ beside it."
)
@click.option("--agent", help="The agent the action would run (a name in agents:).")
@click.option("--model", help="Or a model (a name in models:) to answer the queries.")
@click.option("--judge-model", help="The judges' model (options.eval_model; label and score graders).")
def import_ai_agent_evals(
    data_file: Path, folder: Path | None, agent: str | None, model: str | None, judge_model: str | None
) -> None:
    """Write microsoft/ai-agent-evals' data file as an eval.yaml and its rows, ready for assay run."""
    from assay.formats.agent_evals_data import load_data_file, write_files

    data = load_data_file(data_file)
    folder = folder or data_file.parent / f"{data_file.stem}-assay"
    written = write_files(data, data_file, folder, agent=agent, model=model, judge_model=judge_model)
    out.print(f"wrote {written} ({len(data['data'])} rows, {len(data['evaluators'])} evaluators)")
    out.print(f"next: {invoked_as()} run {written}")


@import_group.command("inspect")
@click.argument("logs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
def import_inspect(logs: tuple[Path, ...]) -> None:
    """Load Inspect AI eval logs (.eval or .json, or a logs/ folder of them) as finished runs."""
    from assay.cli.common import open_store
    from assay.formats.inspect_log import import_log, iter_logs

    store = open_store()
    for path, log in iter_logs(list(logs)):
        done = import_log(store, log, str(path))
        what = "already here, left as it was" if done.already else f"{done.items} samples"
        out.print(f"{path.name}: {what} → {done.run_id}   {invoked_as()} runs show {done.run_id}", soft_wrap=True)


@import_group.command("every-eval-ever")
@click.argument("records", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
def import_every_eval_ever(records: tuple[Path, ...]) -> None:
    """Load Every Eval Ever records (schema 0.3.0; their _samples.jsonl from beside them) as finished runs."""
    from assay.cli.common import open_store
    from assay.formats.every_eval_ever import import_record, read_record

    store = open_store()
    for path in records:
        record, rows = read_record(path)
        done = import_record(store, record, rows, str(path))
        what = "already here, left as it was" if done.already else f"{done.items} samples"
        out.print(f"{path.name}: {what} → {done.run_id}   {invoked_as()} runs show {done.run_id}", soft_wrap=True)


@import_group.command("openai-evals")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
def import_openai_evals(files: tuple[Path, ...]) -> None:
    """Load evals, runs and output items exported from OpenAI's Evals API (JSON or JSONL, as the SDK returns them)."""
    from assay.cli.common import open_store
    from assay.formats.openai_evals import import_exports, read_exports

    found = read_exports(list(files))
    done = import_exports(open_store(), found)
    out.print(f"imported {done.evals} evals, {done.runs} runs, {done.items} output items")
    if done.skipped:
        out.print(f"[dim]already here, left as they were: {', '.join(done.skipped)}[/]")
    for run_id in found.runs:
        out.print(f"  {run_id}   {invoked_as()} runs show {run_id}")
