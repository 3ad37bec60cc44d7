"""azd's ``ai eval`` commands on assay, over ``evals/azure.eval.yaml`` (``assay.formats.evalspec``):

    assay eval init [--dataset FILE] [--evaluator builtin.X ...] [--target NAME] [--judge-model M]
    assay eval create [NAME]                      # reconcile: unchanged artifacts write nothing
    assay eval run start --eval NAME [--fail-on pass-rate=0.8|any-failure] [--max-samples N]
    assay eval run output list|export [--eval NAME] [--run-id RUN]
    assay eval results compare [--eval NAME] [--baseline RUN] [--treatment RUN]

Each takes azd's ``--no-prompt`` (assay never prompts here) and ``--path`` for a configuration
outside ``./evals``. They work on the local store (``ASSAY_HOME``), as ``assay run`` does, or with
``--project-endpoint`` on a server's project (``assay.formats.evalspec_remote``).
"""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from assay.cli.common import dumps, invoked_as, open_store, out, print_table
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
ENDPOINT = click.option(
    "--project-endpoint",
    metavar="URL",
    help="A server's project (assay serve: http(s)://HOST/api/projects/NAME) instead of the local store.",
)
API_KEY = click.option("--api-key", metavar="KEY", help="With --project-endpoint: a key from `assay keys create`.")
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
    relative = Path(os.path.relpath(dataset_file.resolve(), out_dir.resolve()))
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
    me = invoked_as()
    out.print(f"next: {me} eval create --path {config}; then {me} eval run start --eval {entry['name']}")


@click.command("create")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@PATH_OPTION
@ENDPOINT
@API_KEY
@NO_PROMPT
@OUTPUT
def create_command(
    names: tuple[str, ...],
    config_path: Path,
    project_endpoint: str | None,
    api_key: str | None,
    no_prompt: bool,
    output: str,
) -> None:
    """Reconcile datasets, evaluators and evals with the store: unchanged ones write nothing."""
    from assay.formats.evalspec import load_spec, reconcile

    spec = load_spec(_config(config_path))
    done = reconcile(spec, _backend(project_endpoint, api_key), list(names) or None)
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


def _backend(endpoint: str | None, api_key: str | None) -> Any:
    """Where to reconcile and run: the server's project, or the local store."""
    if endpoint:
        from assay.formats.evalspec_remote import RemoteProject

        return RemoteProject(endpoint, api_key)
    from assay.formats.evalspec import StoreBackend

    return StoreBackend(open_store())


def _said(state: str) -> str:
    return {"unchanged": "(unchanged)", "created": "(created)", "updated": "(updated: same eval, new criteria)"}[state]


@click.group("run")
def run_group() -> None:
    """Start a declared eval's run and read its output."""


@run_group.command("start")
@click.option("--eval", "eval_name", metavar="NAME", help="The eval in the configuration (needed when it has several).")
@click.option("--fail-on", "fail_on", metavar="any-failure|pass-rate=R", help="Exit 1 when the gate is missed.")
@click.option("--max-samples", type=click.IntRange(0), help="Evaluate the first N rows (0: no cap).")
@click.option("--no-wait", is_flag=True, help="azd's flag; assay always waits for the run's end.")
@PATH_OPTION
@ENDPOINT
@API_KEY
@NO_PROMPT
def start_command(
    eval_name: str | None,
    fail_on: str | None,
    max_samples: int | None,
    no_wait: bool,
    config_path: Path,
    project_endpoint: str | None,
    api_key: str | None,
    no_prompt: bool,
) -> None:
    """Run a declared eval (creating what it needs first) and gate on its pass rate."""
    import dataclasses

    from assay.cli.run import gate_on, parse_fail_on, refuse_nothing_evaluated, run_eval
    from assay.config.evalyaml import eval_config_from
    from assay.formats.evalspec import eval_yaml, find_eval, load_spec, reconcile

    gate = parse_fail_on(fail_on)
    spec = load_spec(_config(config_path))
    entry = find_eval(spec, eval_name)
    backend = _backend(project_endpoint, api_key)
    done = reconcile(spec, backend, [entry["name"]])
    cap = max_samples if max_samples is not None else entry.get("max_samples")
    if project_endpoint:
        _start_remote(backend, spec, entry, done, cap or None, gate)
        return
    config = eval_config_from(spec.path, eval_yaml(spec, entry, done))
    config.definition = dataclasses.replace(config.definition, eval_id=done.evals[entry["name"]][0])
    outcome = run_eval(config, None, False, None, None, False, None, None, cap or None, None)
    if outcome is not None:
        refuse_nothing_evaluated(outcome)
        gate_on(outcome, gate)


def _start_remote(
    remote: Any, spec: Any, entry: dict[str, Any], done: Any, cap: int | None, gate: float | None
) -> None:
    """The declared eval run by the server: its dataset file (or local rows inline), waited for."""
    if entry.get("target"):
        raise ConfigError(
            f"eval {entry['name']}: a target is generated locally for now",
            hint="run it without --project-endpoint, or evaluate stored rows",
        )
    if entry.get("dataset"):
        version = done.datasets[entry["dataset"]][0]
        source: dict[str, Any] = {"type": "file_id", "id": remote.dataset_file(entry["dataset"], version)}
    else:
        path = spec.local(entry["source"], "file")
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        source = {"type": "file_content", "content": [{"item": row} for row in (rows[:cap] if cap else rows)]}
    eval_id = done.evals[entry["name"]][0]
    run = remote.start_run(eval_id, entry["name"], {"type": "jsonl", "source": source})
    counts = run.get("result_counts") or {}
    decided = (counts.get("passed") or 0) + (counts.get("failed") or 0)
    rate = (counts.get("passed") or 0) / decided if decided else 0.0
    out.print(
        f"run {run['id']} {run['status']}: passed={counts.get('passed', 0)} failed={counts.get('failed', 0)} "
        f"errored={counts.get('errored', 0)} (pass rate {rate:.1%})",
        highlight=False,
    )
    if run["status"] != "completed":
        out.print(f"[red]the run {run['status']}[/]: {(run.get('error') or {}).get('message', '')}")
        sys.exit(1)
    if gate is not None and ((gate >= 1.0 and (counts.get("failed") or counts.get("errored"))) or rate < gate):
        out.print(f"[red]gate missed[/]: pass rate {rate:.1%} is below {gate:.1%}")
        sys.exit(1)


class EvalRuns:
    """A declared eval's runs, in the local store or on a server: what ``run output`` and
    ``results compare`` read."""

    def __init__(self, eval_name: str | None, config_path: Path, endpoint: str | None, api_key: str | None) -> None:
        from assay.formats.evalspec import StoreBackend, find_eval, load_spec

        spec = load_spec(_config(config_path))
        self.name = find_eval(spec, eval_name)["name"]
        self.remote = _backend(endpoint, api_key) if endpoint else None
        found = (self.remote or StoreBackend(open_store())).stored_eval(self.name)
        if found is None:
            hint = f"{invoked_as()} eval run start creates and runs it"
            raise ConfigError(f"eval {self.name} has not been created", hint=hint)
        self.eval_id = found[0]

    def runs(self) -> list[dict[str, Any]]:
        """Newest first, each as the API shows it (``id`` and ``status`` are read)."""
        if self.remote:
            listed: list[dict[str, Any]] = self.remote.runs(self.eval_id)
            return listed
        return [{"id": run.id, "status": run.status} for run in open_store().list_runs_of(self.eval_id)]

    def pick(self, run_id: str | None) -> str:
        if run_id is not None:
            return run_id if self.remote else open_store().run_id_for(run_id)
        runs = self.runs()
        if not runs:
            raise ConfigError(f"eval {self.name} has no runs yet", hint=f"{invoked_as()} eval run start --eval NAME")
        return str(runs[0]["id"])

    def rows(self, run_id: str, failed_only: bool) -> list[dict[str, Any]]:
        if self.remote:
            items = self.remote.output_items(self.eval_id, run_id)
        else:  # as the server would list them: one loop reads both
            items = [output.model_dump() for output in open_store().iter_output_items(run_id)]
        rows = []
        for item in items:
            data = item["datasource_item"]
            shown = data.get("query") or data.get("messages") or ""
            for result in item["results"]:
                passed = result.get("passed")
                status = result.get("status", "completed")
                verdict = status if status not in ("completed", None) else "pass" if passed else "fail"
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
                        "reason": result.get("reason") or (result.get("sample") or {}).get("reason"),
                    }
                )
        return rows

    def compare(self, baseline: str, treatment: str) -> dict[str, Any]:
        from assay.stats.compare import compare_runs

        if self.remote:
            return dict(self.remote.compare(self.eval_id, baseline, treatment))
        return compare_runs(open_store(), baseline, treatment).as_dict()


@run_group.group("output")
def output_group() -> None:
    """A run's output items (per-sample results)."""


@output_group.command("list")
@click.option("--eval", "eval_name", metavar="NAME")
@click.option("--run-id", help="Default: the eval's newest run.")
@click.option("--failed-only", is_flag=True)
@PATH_OPTION
@ENDPOINT
@API_KEY
@OUTPUT
@NO_PROMPT
def output_list(
    eval_name: str | None,
    run_id: str | None,
    failed_only: bool,
    config_path: Path,
    project_endpoint: str | None,
    api_key: str | None,
    output: str,
    no_prompt: bool,
) -> None:
    """ITEM, EVALUATOR, RESULT, SCORE, INPUT and REASON for each result of a run."""
    runs = EvalRuns(eval_name, config_path, project_endpoint, api_key)
    rows = runs.rows(runs.pick(run_id), failed_only)
    if output == "json":
        out.print_json(dumps(rows))
        return
    table = Table(title_justify="left")
    for column in ("item", "evaluator", "result", "score", "input", "reason"):
        table.add_column(column.upper(), overflow="ellipsis", no_wrap=column != "reason", max_width=40)
    for row in rows:
        score = "" if row["score"] is None else f"{row['score']:.3g}"
        table.add_row(str(row["item"]), row["evaluator"], row["result"], score, row["input"], row["reason"] or "-")
    print_table(table)


@output_group.command("export")
@click.option("--eval", "eval_name", metavar="NAME")
@click.option("--run-id", help="Default: the eval's newest run.")
@click.option("--format", "fmt", type=click.Choice(["json", "csv"]), default="json", show_default=True)
@click.option("-O", "--out-file", type=click.Path(path_type=Path, dir_okay=False), help="Default: standard output.")
@PATH_OPTION
@ENDPOINT
@API_KEY
@NO_PROMPT
def output_export(
    eval_name: str | None,
    run_id: str | None,
    fmt: str,
    out_file: Path | None,
    config_path: Path,
    project_endpoint: str | None,
    api_key: str | None,
    no_prompt: bool,
) -> None:
    """Every result of a run, as JSON or CSV."""
    runs = EvalRuns(eval_name, config_path, project_endpoint, api_key)
    rows = runs.rows(runs.pick(run_id), failed_only=False)
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
@ENDPOINT
@API_KEY
@OUTPUT
@NO_PROMPT
def compare_command(
    eval_name: str | None,
    baseline: str | None,
    treatment: str | None,
    fail_on: str | None,
    config_path: Path,
    project_endpoint: str | None,
    api_key: str | None,
    output: str,
    no_prompt: bool,
) -> None:
    """METRIC, BASELINE, TREATMENT, DELTA, P-VALUE and EFFECT per criterion (``assay runs compare``'s tests)."""
    runs = EvalRuns(eval_name, config_path, project_endpoint, api_key)
    completed = [str(r["id"]) for r in runs.runs() if r["status"] == "completed"]
    treatment = runs.pick(treatment) if treatment else (completed[0] if completed else None)
    baseline = runs.pick(baseline) if baseline else next((r for r in completed if r != treatment), None)
    if treatment is None or baseline is None:
        raise ConfigError(
            f"eval {runs.name} needs two completed runs to compare", hint="--baseline RUN --treatment RUN"
        )
    found = runs.compare(baseline, treatment)
    if output == "json":
        out.print_json(dumps(found))
    else:
        table = Table(title=f"{treatment} against {baseline}", title_justify="left")
        for column in ("METRIC", "BASELINE", "TREATMENT", "DELTA", "P-VALUE", "EFFECT"):
            table.add_column(column, justify="left" if column in ("METRIC", "EFFECT") else "right", no_wrap=True)
        for c in found["criteria"]:
            a, b = c["pass_rate_a"] or 0.0, c["pass_rate_b"] or 0.0
            name = f"{c['testing_criteria']} (pass rate)"
            table.add_row(name, f"{a:.2f}", f"{b:.2f}", f"{b - a:+.2f}", f"{c['p_holm']:.3f}", c["verdict"])
        for c in found.get("scores") or []:
            a, b = c["mean_a"], c["mean_b"]
            table.add_row(
                c["testing_criteria"], f"{a:.2f}", f"{b:.2f}", f"{b - a:+.2f}", f"{c['p_holm']:.3f}", c["verdict"]
            )
        print_table(table)
        out.print("[dim]P-VALUE: Holm-adjusted across the rows of its kind (McNemar mid-p; paired t or Wilcoxon)[/]")
    regressed = [c for c in found["criteria"] if c["verdict"] == "degraded"]
    undecidable = [c["testing_criteria"] for c in found["criteria"] if c["verdict"] == "too many undetermined"]
    if fail_on == "regression" and undecidable:
        out.print(f"[red]too many undetermined verdicts[/]: {', '.join(undecidable)}")
    if fail_on == "regression" and regressed:
        named = ", ".join(f"{c['testing_criteria']} ({c['delta'] * 100:+.1f} points)" for c in regressed)
        out.print(f"[red]regression[/]: {named}")
    if fail_on == "regression" and (regressed or undecidable):
        sys.exit(1)
