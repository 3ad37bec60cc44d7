"""The multi grader through the openai SDK: the formula's value per item; a formula with anything
but arithmetic on grader names is a 400 at eval creation."""

from __future__ import annotations

import openai
import pytest
from rapidfuzz import fuzz

from tests.api.conftest import wait_for
from tests.evaluators.test_multi_grader import MULTI, ROWS

CONFIG = {
    "type": "custom",
    "item_schema": {"type": "object", "properties": {"output": {"type": "string"}, "expected": {"type": "string"}}},
}


def test_a_multi_grader_gives_its_formulas_value_per_item(served):
    client = served.client()
    created = client.evals.create(name="multi", data_source_config=CONFIG, testing_criteria=[MULTI])
    run = client.evals.runs.create(
        created.id,
        data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": r} for r in ROWS]}},
    )
    run = wait_for(client, created.id, run.id)
    assert run.status == "completed"
    items = list(client.evals.runs.output_items.list(run.id, eval_id=created.id))
    for item in items:
        row = item.datasource_item
        expected = (
            0.7 * float(row["output"] == row["expected"]) + 0.3 * fuzz.ratio(row["output"], row["expected"]) / 100
        )
        (result,) = item.results
        assert result.name == "combined" and result.score == pytest.approx(expected)
        assert result.passed is (expected >= 0.5)
    assert (run.result_counts.passed, run.result_counts.failed) == (1, 2)


@pytest.mark.parametrize("formula", ["exact and similar", "__import__('os').getcwd()", "exact.__class__", "[exact]"])
def test_a_formula_that_is_not_arithmetic_is_refused(served, formula):
    client = served.client()
    with pytest.raises(openai.BadRequestError, match="calculate_output"):
        client.evals.create(data_source_config=CONFIG, testing_criteria=[{**MULTI, "calculate_output": formula}])
    assert list(client.evals.list()) == []
