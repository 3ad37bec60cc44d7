"""``assay judges agreement RUN --labels human.jsonl``: how well a run's judges agree with people.

Labels are JSON lines ``{"datasource_item_id": 3, "criterion": "relevance", "label": "pass",
"score": 4}`` (``label`` true/false or pass/fail; ``score`` optional; ``criterion`` may be left out
with ``--criterion``). Per criterion: Cohen's κ and Krippendorff's α of the verdicts, the true
positive and true negative rates against the human pass labels, and, where people gave scores,
Spearman's ρ and ICC(2,1) of the scores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from assay.cli.common import CACHE_OPTION, dumps, open_store, out, percent, print_table
from assay.errors import ConfigError
from assay.review.agreement import agreement, judged_results

if TYPE_CHECKING:
    from assay.llm import CacheMode, ModelRegistry
    from assay.store import Store


@click.group("judges")
def judges_group() -> None:
    """Check the judges: agreement with people, bias probes."""


@judges_group.command("agreement")
@click.argument("run_id")
@click.option(
    "--labels",
    "labels_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="A JSONL file of labels; without it, the labels in the store (review queues, OpenTelemetry feedback).",
)
@click.option("--criterion", help="The criterion the file's labels are for, when they do not say.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option("--save", is_flag=True, help="Keep the figures as these judges' calibration (for --require-calibrated).")
def agreement_command(run_id: str, labels_file: Path | None, criterion: str | None, as_json: bool, save: bool) -> None:
    """Agreement of RUN's judges with human labels (a JSONL file, or the store's)."""
    from_file = None if labels_file is None else read_labels(labels_file, criterion)  # its mistakes first
    store = open_store()
    run_id = store.run_id_for(run_id)
    labels = stored_labels(store, run_id) if from_file is None else from_file
    source = "the labels in the store" if labels_file is None else labels_file.name
    judged = judged_results(store.iter_output_items(run_id))
    figures = [agreement(name, pairs, judged) for name, pairs in sorted(labels.items())]
    if save:
        from assay.stats.calibration import save as save_calibration

        for record in save_calibration(store, run_id, figures, str(labels_file or "store")):
            saved = f"calibration saved: {record['criterion']} ({record['model']}) κ {record['kappa']:.2f}"
            click.echo(saved, err=True)  # stderr: --json keeps stdout to the figures
    if as_json:
        out.print_json(dumps(figures))
        return
    table = Table(title=f"judges of {run_id} against {source}", title_justify="left")
    for column in ("criterion", "n", "agree", "κ", "α", "TPR", "TNR", "ρ", "ICC"):
        table.add_column(column, justify="left" if column == "criterion" else "right", no_wrap=True)
    for f in figures:
        table.add_row(
            f["criterion"],
            str(f["n"]),
            _fmt(f["agreement"]),
            _with_interval(f["kappa"], f["kappa_ci"]),
            _with_interval(f["alpha"], f["alpha_ci"]),
            *(_fmt(f[k]) for k in ("tpr", "tnr", "spearman")),
            _with_interval(f["icc"], f["icc_ci"]),
        )
    print_table(table)
    out.print(
        "[dim]κ, α ≥ 0.8 reliable, 0.67–0.8 tentative (95% intervals: κ's asymptotic, α's and ICC's by "
        "bootstrap over items); TPR/TNR: the judge's pass and fail on what people passed and failed[/]"
    )


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _with_interval(value: float | None, interval: tuple[float, float] | None) -> str:
    return _fmt(value) if value is None or interval is None else f"{value:.2f} [{interval[0]:.2f}, {interval[1]:.2f}]"


def stored_labels(store: Store, run_id: str) -> dict[str, dict[int, dict[str, Any]]]:
    """criterion → item → {passed, score}: the people's verdicts on the run's items in the store."""
    from assay.review.labels import human_verdicts

    found = human_verdicts(store, store.get_run(run_id))
    if not found:
        raise ConfigError(
            f"no human labels on {run_id}'s items",
            hint="review it (assay review create RUN), send gen_ai.evaluation.result events, or pass --labels FILE",
        )
    return found


def read_labels(path: Path, default_criterion: str | None) -> dict[str, dict[int, dict[str, Any]]]:
    """criterion → item → {passed, score}, every line checked."""
    from assay.dataset.readers import parse_json

    found: dict[str, dict[int, dict[str, Any]]] = {}
    for line_no, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
        if not line.strip():
            continue
        row, problem = parse_json(line)
        where = f"{path.name}:{line_no}"
        if problem is not None or not isinstance(row, dict):
            raise ConfigError(f"{where}: {problem or 'expected a JSON object'}")
        item = row.get("datasource_item_id", row.get("item"))
        if isinstance(item, bool) or not isinstance(item, int):
            raise ConfigError(f"{where}: datasource_item_id: the output item's index (a whole number)")
        name = row.get("criterion") or default_criterion
        if not isinstance(name, str):
            raise ConfigError(f"{where}: criterion: name the criterion, or pass --criterion")
        label = row.get("label", row.get("passed"))
        passed = {"pass": True, "fail": False, True: True, False: False}.get(label)
        if passed is None:
            raise ConfigError(f"{where}: label: expected true/false or pass/fail, got {json.dumps(label)}")
        score = row.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise ConfigError(f"{where}: score: expected a number")
        found.setdefault(name, {})[item] = {"passed": passed, "score": score}
    if not found:
        raise ConfigError(f"{path}: no labels")
    return found


@judges_group.command("bias")
@click.argument("run_id")
@click.option(
    "--check",
    "checks",
    default="length",
    show_default=True,
    metavar="length,position",
    help="The probes: length (scores against response length), position (pairwise order swap).",
)
@click.option("--against", "other_run", metavar="RUN", help="position: the run whose responses meet RUN's.")
@click.option("--model", "model_name", help="position: the pairwise judge (a name in --models, or the environment's).")
@click.option("--models", "models_file", type=click.Path(path_type=Path, exists=True), help="YAML with models:.")
@click.option("--limit", type=click.IntRange(1), default=200, show_default=True, help="position: items compared.")
@CACHE_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def bias_command(
    run_id: str,
    checks: str,
    other_run: str | None,
    model_name: str | None,
    models_file: Path | None,
    limit: int,
    cache_mode: CacheMode,
    as_json: bool,
) -> None:
    """Probe RUN's judges for length bias and (against a second run) position bias."""
    from assay.cli.serve import models_from_file
    from assay.stats.bias import length_bias

    wanted = [c.strip() for c in checks.split(",") if c.strip()]
    unknown = sorted(set(wanted) - {"length", "position"})
    if unknown or not wanted:
        raise ConfigError(f"--check: unknown probe {', '.join(unknown) or '(none)'}", hint="--check length,position")
    if "position" in wanted and other_run is None:
        raise ConfigError("--check position compares two runs' responses", hint="add --against RUN_B")
    store = open_store()
    run_id = store.run_id_for(run_id)
    found: dict[str, Any] = {"run": run_id}
    if "length" in wanted:
        found["length"] = length_bias(store.iter_output_items(run_id))
    if "position" in wanted:
        assert other_run is not None
        found["position"] = _position(
            store,
            run_id,
            store.run_id_for(other_run),
            model_name,
            models_from_file(models_file, store, cache_mode),
            limit,
        )
    if as_json:
        out.print_json(dumps(found))
        return
    if "length" in found:
        _print_length(found["length"])
    if "position" in found:
        _print_position(found["position"])


def _position(
    store: Store, run_a: str, run_b: str, model_name: str | None, registry: ModelRegistry, limit: int
) -> dict[str, Any]:
    from assay.stats.bias import position_probe, query_of, response_of
    from assay.sync import run_sync

    theirs = {output.datasource_item_id: output for output in store.iter_output_items(run_b)}
    ours = [output for output in store.iter_output_items(run_a) if output.datasource_item_id in theirs][:limit]
    pairs = [
        (o.datasource_item_id, query_of(o), response_of(o), response_of(theirs[o.datasource_item_id])) for o in ours
    ]
    if not pairs:
        raise ConfigError(f"{run_a} and {run_b} have no item in common", hint="compare two runs of the same dataset")
    model = registry.get(model_name)
    model.check_credentials()

    async def probe() -> Any:
        try:
            return await position_probe(model, pairs)
        finally:
            await registry.aclose()

    return {"against": run_b, "model": model.name, **run_sync(probe()).as_dict()}


def _print_length(rows: list[dict[str, Any]]) -> None:
    table = Table(title="length bias: scores against response length (words)", title_justify="left")
    for column in ("criterion", "n", "ρ", "slope/100 words", "p"):
        table.add_column(column, justify="left" if column == "criterion" else "right", no_wrap=True)
    for row in rows:
        slope = row["slope_per_100_words"]
        table.add_row(
            row["criterion"],
            str(row["n"]),
            _fmt(row["spearman"]),
            "–" if slope is None else f"{slope:+.3f}",
            "–" if row["p_value"] is None else f"{row['p_value']:.3g}",
        )
    print_table(table)
    biased = [r["criterion"] for r in rows if r["p_value"] is not None and r["p_value"] < 0.05 and r["spearman"] > 0]
    if biased:
        out.print(f"[yellow]scores rise with length[/] (p < 0.05): {', '.join(biased)} — check for verbosity bias")
    else:
        out.print("[dim]no criterion's scores rise significantly with length (p < 0.05)[/]")


def _print_position(found: dict[str, Any]) -> None:
    rate, ci = found["first_slot_rate"], found["first_slot_ci"]
    out.print(f"position bias ({found['model']}, {found['n']} items of {found['against']} swapped):")
    out.print(f"  consistent under the swap: {percent(found['consistency'])}")
    shown = "–" if rate is None else f"{rate:.0%} [{ci[0]:.0%}–{ci[1]:.0%}]"
    out.print(f"  picks of the response shown first: {shown} (0.5 means no preference)")
    if found["unparsed"]:
        out.print(f"  [yellow]{found['unparsed']} items left out: a verdict could not be read[/]")
    out.print(
        f"  verdicts that followed the order: {found['primacy']} toward the first slot, {found['recency']} toward "
        f"the second (sign test p = {found['p_value']:.3g}, each item's two orders paired)"
    )
    if found["position_bias"]:
        out.print("  [yellow]the judge prefers a position[/]: its verdicts follow the order, not the responses")
    if found["flipped"]:
        out.print(
            f"  flipped with the order: items {', '.join(map(str, found['flipped'][:20]))}"
            f"{' …' if len(found['flipped']) > 20 else ''}"
        )
