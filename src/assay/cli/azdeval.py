"""azd's ``ai eval`` commands on assay, over ``evals/azure.eval.yaml`` (``assay.evalspec``):

    assay eval init [--dataset FILE] [--evaluator builtin.X ...] [--target NAME] [--judge-model M]
    assay eval create [NAME]                      # reconcile: unchanged artifacts write nothing
    assay eval run start --eval NAME [--fail-on pass-rate=0.8|any-failure] [--max-samples N]
    assay eval run output list|export [--eval NAME] [--run-id RUN]
    assay eval results compare [--eval NAME] [--baseline RUN] [--treatment RUN]

Each takes azd's ``--no-prompt`` (assay never prompts here) and ``--path`` for a configuration
outside ``./evals``. They work on the local store (``ASSAY_HOME``), as ``assay run`` does.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from assay.cli.common import dumps, open_store, out
from assay.errors import ConfigError

DEFAULT_PATH = Path("evals") / "azure.eval.yaml"
PATH_OPTION = click.option(
    "--path",
    "config_path",
    type=click.Path(path_type=Path),
    default=str(DEFAULT_PATH),
    show_default=True,
    help="The evaluation configuration (a file, or a folder holding azure.eval.yaml).",
)
NO_PROMPT = click.option("--no-prompt", is_flag=True, help="Never prompt (assay does not prompt here; azd's flag).")
OUTPUT = click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table", show_default=True)

SAMPLE_ROWS = [
    {
        "query": "What is the capital of France?",
        "response": "Paris is the capital of France.",
        "ground_truth": "The capital of France is Paris.",
    },
    {
        "query": "Who wrote Hamlet?",
        "response": "Hamlet was written by William Shakespeare.",
        "ground_truth": "William Shakespeare wrote Hamlet.",
    },
    {"query": "What is 2 + 2?", "response": "It is 5.", "ground_truth": "2 + 2 is 4."},
]


def _config(path: Path) -> Path:
    return path / "azure.eval.yaml" if path.is_dir() else path


@click.command("init")
@click.option(
    "--dataset", "dataset_file", type=click.Path(path_type=Path, dir_okay=False), help="A JSONL file to evaluate."
)
@click.option("--evaluator", "evaluators", multiple=True, metavar="NAME", help="builtin.* (repeatable).")
@click.option("--target", help="An agent (a name in agents:) whose responses are generated first.")
@click.option("--judge-model", help="The model judges call (options.eval_model).")
@click.option("--name", "eval_name", help="The eval's name (default: <dataset>-dataset-turn-eval).")
@click.option("--out-dir", type=click.Path(path_type=Path, file_okay=False), default="evals", show_default=True)
@click.option("--force", is_flag=True, help="Overwrite an existing azure.eval.yaml.")
@NO_PROMPT
def init_command(
    dataset_file: Path | None,
    evaluators: tuple[str, ...],
    target: str | None,
    judge_model: str | None,
    eval_name: str | None,
    out_dir: Path,
    force: bool,
    no_prompt: bool,
) -> None:
    """Scaffold evals/azure.eval.yaml (and a sample dataset when none is given). Calls nothing."""
    import yaml

    config = out_dir / "azure.eval.yaml"
    if config.exists() and not force:
        raise ConfigError(f"{config} exists", hint="--force replaces it; assay eval create reads it as it is")
    out_dir.mkdir(parents=True, exist_ok=True)
    if dataset_file is None:
        (out_dir / "datasets").mkdir(exist_ok=True)
        dataset_file = out_dir / "datasets" / "sample.jsonl"
        if not dataset_file.exists():
            dataset_file.write_text("".join(json.dumps(row) + "\n" for row in SAMPLE_ROWS), encoding="utf-8")
    elif not dataset_file.is_file():
        raise ConfigError(f"--dataset {dataset_file}: no such file")
    dataset = dataset_file.stem
    relative = Path(_relative(dataset_file.resolve(), out_dir.resolve()))
    entry: dict[str, Any] = {
        "name": eval_name or f"{target or dataset}-dataset-turn-eval",
        "dataset": dataset,
        "evaluation_level": "turn",
        "evaluators": [{"evaluator": e if e.startswith("builtin.") else f"builtin.{e}"} for e in evaluators]
        or [{"evaluator": "builtin.f1_score"}],
    }
    if target:
        entry["target"] = {"type": "agent", "name": target}
    if judge_model:
        entry["options"] = {"eval_model": judge_model}
    spec = {"datasets": [{"name": dataset, "file": f"./{relative.as_posix()}"}], "evaluators": [], "evals": [entry]}
    config.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    out.print(f"wrote {config}")
    out.print(f"next: assay eval create --path {config}; then assay eval run start --eval {entry['name']}")


def _relative(path: Path, base: Path) -> str:
    import os

    return os.path.relpath(path, base)


@click.command("create")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@PATH_OPTION
@NO_PROMPT
@OUTPUT
def create_command(names: tuple[str, ...], config_path: Path, no_prompt: bool, output: str) -> None:
    """Reconcile datasets, evaluators and evals with the store: unchanged ones write nothing."""
    from assay.evalspec import load_spec, reconcile

    spec = load_spec(_config(config_path))
    store = open_store()
    done = reconcile(spec, store, list(names) or None)
    if output == "json":
        out.print_json(dumps({"datasets": done.datasets, "evaluators": done.evaluators, "evals": done.evals}))
        return
    for kind, part in (("dataset", done.datasets), ("evaluator", done.evaluators)):
        for name, (version, state) in part.items():
            out.print(f"{kind} {name}: version {version} {_said(state)}")
    for name, (eval_id, state) in done.evals.items():
        out.print(f"eval {name}: {eval_id} {_said(state)}")
    if not done.wrote:
        out.print("[dim]nothing changed: nothing written[/]")


def _said(state: str) -> str:
    return {"unchanged": "(unchanged)", "created": "(created)", "updated": "(updated: same eval, new criteria)"}[state]


@click.group("run")
def run_group() -> None:
    """Start a declared eval's run and read its output."""


@run_group.command("start")
@click.option("--eval", "eval_name", metavar="NAME", help="The eval in the configuration (needed when it has several).")
@click.option("--fail-on", "fail_on", metavar="any-failure|pass-rate=R", help="Exit 1 when the gate is missed.")
@click.option("--max-samples", type=click.IntRange(0), help="Evaluate the first N rows (0: no cap).")
@click.option("--no-wait", is_flag=True, help="azd's flag; a local run always waits for its end.")
@PATH_OPTION
@NO_PROMPT
def start_command(
    eval_name: str | None,
    fail_on: str | None,
    max_samples: int | None,
    no_wait: bool,
    config_path: Path,
    no_prompt: bool,
) -> None:
    """Run a declared eval (creating what it needs first) and gate on its pass rate."""
    import dataclasses

    from assay.cli.run import gate_on, parse_fail_on, run_eval
    from assay.config import eval_config_from
    from assay.evalspec import eval_yaml, find_eval, load_spec, reconcile

    gate = parse_fail_on(fail_on)
    spec = load_spec(_config(config_path))
    entry = find_eval(spec, eval_name)
    done = reconcile(spec, open_store(), [entry["name"]])
    config = eval_config_from(spec.path, eval_yaml(spec, entry, done))
    config.definition = dataclasses.replace(config.definition, eval_id=done.evals[entry["name"]][0])
    cap = max_samples if max_samples is not None else entry.get("max_samples")
    outcome = run_eval(config, None, False, None, None, False, None, None, cap or None, None)
    if outcome is not None:
        gate_on(outcome, gate)


def _eval_runs(eval_name: str | None, config_path: Path) -> tuple[str, list[dict[str, Any]]]:
    """The declared eval's stored id and its runs, newest first."""
    from assay.evalspec import find_eval, load_spec, stored_eval

    spec = load_spec(_config(config_path))
    entry = find_eval(spec, eval_name)
    store = open_store()
    stored = stored_eval(store, entry["name"])
    if stored is None:
        raise ConfigError(f"eval {entry['name']} has not been created", hint="assay eval run start creates and runs it")
    runs = store.list_runs_of(stored["id"])
    return stored["id"], sorted(runs, key=lambda r: r["created_at"], reverse=True)


def _pick(runs: list[dict[str, Any]], run_id: str | None, eval_id: str) -> str:
    if run_id is not None:
        return open_store().run_id_for(run_id)
    if not runs:
        raise ConfigError(f"eval {eval_id} has no runs yet", hint="assay eval run start --eval NAME")
    return str(runs[0]["id"])


@run_group.group("output")
def output_group() -> None:
    """A run's output items (per-sample results)."""


@output_group.command("list")
@click.option("--eval", "eval_name", metavar="NAME")
@click.option("--run-id", help="Default: the eval's newest run.")
@click.option("--failed-only", is_flag=True)
@PATH_OPTION
@OUTPUT
@NO_PROMPT
def output_list(
    eval_name: str | None, run_id: str | None, failed_only: bool, config_path: Path, output: str, no_prompt: bool
) -> None:
    """ITEM, EVALUATOR, RESULT, SCORE, INPUT and REASON for each result of a run."""
    eval_id, runs = _eval_runs(eval_name, config_path)
    rows = _rows(_pick(runs, run_id, eval_id), failed_only)
    if output == "json":
        out.print_json(dumps(rows))
        return
    table = Table(title_justify="left")
    for column in ("item", "evaluator", "result", "score", "input", "reason"):
        table.add_column(column.upper(), overflow="ellipsis", no_wrap=column != "reason", max_width=40)
    for row in rows:
        score = "" if row["score"] is None else f"{row['score']:.3g}"
        table.add_row(str(row["item"]), row["evaluator"], row["result"], score, row["input"], row["reason"] or "-")
    out.print(table)


def _rows(run_id: str, failed_only: bool) -> list[dict[str, Any]]:
    rows = []
    for item in open_store().iter_output_items(run_id):
        shown = item["datasource_item"].get("query") or item["datasource_item"].get("messages") or ""
        for result in item["results"]:
            passed = result.get("passed")
            verdict = result.get("status") if result.get("status") != "completed" else "pass" if passed else "fail"
            if failed_only and verdict == "pass":
                continue
            rows.append(
                {
                    "run_id": run_id,
                    "item": item["datasource_item_id"] + 1,
                    "evaluator": result["name"],
                    "result": verdict,
                    "score": result.get("score"),
                    "input": shown if isinstance(shown, str) else json.dumps(shown)[:200],
                    "reason": result.get("reason"),
                }
            )
    return rows


@output_group.command("export")
@click.option("--eval", "eval_name", metavar="NAME")
@click.option("--run-id", help="Default: the eval's newest run.")
@click.option("--format", "fmt", type=click.Choice(["json", "csv"]), default="json", show_default=True)
@click.option("-O", "--out-file", type=click.Path(path_type=Path, dir_okay=False), help="Default: standard output.")
@PATH_OPTION
@NO_PROMPT
def output_export(
    eval_name: str | None, run_id: str | None, fmt: str, out_file: Path | None, config_path: Path, no_prompt: bool
) -> None:
    """Every result of a run, as JSON or CSV."""
    eval_id, runs = _eval_runs(eval_name, config_path)
    rows = _rows(_pick(runs, run_id, eval_id), failed_only=False)
    stream = out_file.open("w", encoding="utf-8", newline="") if out_file else sys.stdout
    try:
        if fmt == "json":
            stream.write(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
        else:
            writer = csv.DictWriter(stream, fieldnames=list(rows[0]) if rows else ["run_id"])
            writer.writeheader()
            writer.writerows(rows)
    finally:
        if out_file:
            stream.close()
    if out_file:
        out.print(f"wrote {len(rows)} results to {out_file}", highlight=False)


@click.group("results")
def results_group() -> None:
    """Compare a declared eval's runs."""


@results_group.command("compare")
@click.option("--eval", "eval_name", metavar="NAME")
@click.option("--baseline", help="Default: the eval's second newest completed run.")
@click.option("--treatment", help="Default: its newest completed run.")
@click.option("--fail-on", "fail_on", type=click.Choice(["regression"]), help="Exit 1 when a criterion degraded.")
@PATH_OPTION
@OUTPUT
@NO_PROMPT
def compare_command(
    eval_name: str | None,
    baseline: str | None,
    treatment: str | None,
    fail_on: str | None,
    config_path: Path,
    output: str,
    no_prompt: bool,
) -> None:
    """METRIC, BASELINE, TREATMENT, DELTA, P-VALUE and EFFECT per criterion (``assay runs compare``'s tests)."""
    from assay.compare import compare_runs

    eval_id, runs = _eval_runs(eval_name, config_path)
    completed = [str(r["id"]) for r in runs if r["status"] == "completed"]
    store = open_store()
    treatment = store.run_id_for(treatment) if treatment else (completed[0] if completed else None)
    baseline = store.run_id_for(baseline) if baseline else next((r for r in completed if r != treatment), None)
    if treatment is None or baseline is None:
        raise ConfigError(f"eval {eval_id} needs two completed runs to compare", hint="--baseline RUN --treatment RUN")
    found = compare_runs(store, baseline, treatment)
    if output == "json":
        out.print_json(dumps(found.as_dict()))
    else:
        table = Table(title=f"{treatment} against {baseline}", title_justify="left")
        for column in ("METRIC", "BASELINE", "TREATMENT", "DELTA", "P-VALUE", "EFFECT"):
            table.add_column(column, justify="left" if column in ("METRIC", "EFFECT") else "right", no_wrap=True)
        for c in found.criteria:
            a, b = c.passed_a / c.n, c.passed_b / c.n
            table.add_row(
                f"{c.name} (pass rate)", f"{a:.2f}", f"{b:.2f}", f"{b - a:+.2f}", f"{c.p_holm:.3f}", c.verdict
            )
        for s in found.scores:
            delta = s.mean_b - s.mean_a
            table.add_row(s.name, f"{s.mean_a:.2f}", f"{s.mean_b:.2f}", f"{delta:+.2f}", f"{s.p_holm:.3f}", s.verdict)
        out.print(table)
        out.print("[dim]P-VALUE: Holm-adjusted across the rows of its kind (McNemar mid-p; paired t or Wilcoxon)[/]")
    if fail_on == "regression" and found.regressed:
        out.print(
            f"[red]regression[/]: {', '.join(f'{c.name} ({c.delta * 100:+.1f} points)' for c in found.regressed)}"
        )
        sys.exit(1)
