"""assay in pytest: an eval as a test, each item a reported sub-result.

    def test_support_answers(assay_eval):
        result = assay_eval("eval.yaml", fail_on="pass-rate=0.9")
        assert result.pass_rate("f1_score") >= 0.8

``assay_eval`` runs the eval in-process on the store of ``ASSAY_HOME`` (or ``ASSAY_DATABASE_URL``),
reports every item as a subtest (``item 3``: passed, or failed with each criterion's reason), and
fails the test when the gate is missed (``any-failure`` or ``pass-rate=R``, as ``assay run
--fail-on``). Without a gate, or with ``any-failure``, a failed item fails its subtest (and so the
test); under ``pass-rate=R`` a failed item is an expected failure (``SUBXFAIL``, with its reasons)
and the rate alone decides. In CI (``CI`` set, as every CI service sets it) the model-call cache is in replay mode
by default: a call the cache does not hold fails its item instead of reaching a provider, so the
suite is deterministic and free. ``--assay-cache MODE`` (or ``cache=``) chooses otherwise.

Registered through the ``pytest11`` entry point; this module imports nothing heavy until a test
asks for ``assay_eval``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from assay.results import OutputItem, RunSummary
    from assay.results.stored import Run, StoredItem

CACHE_MODES = ("use", "replay", "off", "refresh")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("assay")
    group.addoption(
        "--assay-cache",
        choices=CACHE_MODES,
        default=None,
        help="Model-call cache for assay_eval (default: replay when CI is set, else use).",
    )


@dataclass
class EvalResult:
    """What ``assay_eval`` ran: the run, its summary and every output item."""

    run: Run
    summary: RunSummary
    items: list[StoredItem] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.run.id

    def pass_rate(self, criterion: str | None = None) -> float | None:
        """The share of decided items that passed (all criteria), or of one criterion's verdicts."""
        if criterion is None:
            return self.summary.pass_rate()
        for row in self.summary.per_testing_criteria_results:
            if row.testing_criteria == criterion:
                return row.pass_rate
        raise KeyError(f"no criterion {criterion!r}; the run has {self.criteria}")

    @property
    def criteria(self) -> list[str]:
        return [row.testing_criteria for row in self.summary.per_testing_criteria_results]


def default_cache_mode(option: str | None) -> str:
    return option or ("replay" if os.environ.get("CI") else "use")


@pytest.fixture
def assay_eval(request: pytest.FixtureRequest) -> Callable[..., EvalResult]:
    """Run an eval.yaml (relative to the test file, or to the working directory) as part of the test."""
    cache = default_cache_mode(request.config.getoption("--assay-cache"))
    try:
        subtests: Any = request.getfixturevalue("subtests")  # pytest ≥ 9 (or the pytest-subtests plugin)
    except pytest.FixtureLookupError:
        subtests = None
    here = Path(str(request.path)).parent

    def run(
        eval_yaml: str | Path, *, fail_on: str | None = None, cache_mode: str | None = None, limit: int | None = None
    ) -> EvalResult:
        path = Path(eval_yaml)
        if not path.is_absolute() and not path.exists() and (here / path).exists():
            path = here / path
        from assay.errors import UserError

        try:
            result = _run(path, cache_mode or cache, limit)
        except UserError as exc:  # a bad eval.yaml or dataset: its message and hint, not a traceback
            pytest.fail(str(exc), pytrace=False)
        tolerated = fail_on is not None and fail_on.startswith("pass-rate=")
        failed = []
        for output in result.items:
            problems = "; ".join(_problems(output))
            problems = problems and f"item {output.datasource_item_id}: {problems}"
            if subtests is None:  # an older pytest: the items' problems are said by the test itself
                failed += [problems] if problems else []
                continue
            with subtests.test(msg=f"item {output.datasource_item_id}", item=output.datasource_item_id):
                if problems and tolerated:  # shown, but the pass-rate gate below decides the test
                    pytest.xfail(problems)
                if problems:
                    pytest.fail(problems, pytrace=False)
        if failed and not tolerated:
            pytest.fail("\n".join(failed), pytrace=False)
        missed = _gate(result, fail_on)
        if missed:
            pytest.fail(f"{path}: {missed} (run {result.run_id})", pytrace=False)
        return result

    return run


def _run(path: Path, cache_mode: str, limit: int | None) -> EvalResult:
    from assay.config.evalyaml import load_eval_config
    from assay.run import finish_run
    from assay.run.from_config import config_request, prepare_config
    from assay.run.request import start_request
    from assay.store import Store

    config = load_eval_config(path)
    store = Store()
    try:
        request = config_request(config, store, cache=cache_mode, limit=limit)  # type: ignore[arg-type]
        prepared = prepare_config(config, request, store)
        outcome = finish_run(prepared, start_request(prepared, store, request), store)
        items = list(store.iter_output_items(outcome.run.id))
        return EvalResult(outcome.run, outcome.summary, items)
    finally:
        store.close()


def _problems(output: OutputItem) -> Iterator[str]:
    for result in output.results:
        if result.status == "error":
            yield f"{result.name} errored: {result.reason}"
        elif result.status == "undetermined":  # not shown to pass: a problem, as an error is
            yield f"{result.name} undetermined: {result.reason}"
        elif result.passed is False:
            score = result.score
            shown = "" if score is None else f" (score {score:.3g} against {result.threshold})"
            yield f"{result.name} failed{shown}" + (f": {result.reason}" if result.reason else "")


def _gate(result: EvalResult, fail_on: str | None) -> str | None:
    """What the gate says about the run: None when it holds (or there is none)."""
    import click

    from assay.cli.run import parse_fail_on  # the gate of `assay run --fail-on`, read the same way

    try:
        required = parse_fail_on(fail_on)
    except click.BadParameter:
        hint = "use any-failure or pass-rate=<0..1>, e.g. pass-rate=0.9"
        raise pytest.UsageError(f"fail_on={fail_on!r}: {hint}") from None
    if required is None:
        return None
    counts = result.summary.result_counts
    if fail_on == "any-failure":
        bad = counts.failed + counts.errored
        return f"{bad} of {counts.total} items failed or errored (fail_on=any-failure)" if bad else None
    rate = result.pass_rate() or 0.0
    return f"pass rate {rate:.1%} is below {required:.1%}" if rate < required else None
