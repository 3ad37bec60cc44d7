import asyncio

import pytest

from assay.evaluators import load_catalog
from tests.evaluators.golden import EXTRA_F1, GOLDEN, ROUGE1_PR, ROUGE_N

CATALOG = load_catalog()
COLUMNS = [
    ("builtin.f1_score", {}),
    ("builtin.bleu_score", {}),
    ("builtin.gleu_score", {}),
    ("builtin.meteor_score", {}),
    ("builtin.rouge_score", {"rouge_type": "rouge1"}),
    ("builtin.rouge_score", {"rouge_type": "rouge2"}),
    ("builtin.rouge_score", {"rouge_type": "rougeL"}),
]


def score(name, params, response, ground_truth):
    evaluate = CATALOG.get(name).factory(**params)
    return asyncio.run(evaluate({"response": response, "ground_truth": ground_truth}))


@pytest.mark.parametrize("row", GOLDEN, ids=[f"{r[0][:24]}|{r[1][:12]}" for r in GOLDEN])
def test_golden_table_to_four_decimals(row):
    response, ground_truth, *expected = row
    for (name, params), want in zip(COLUMNS, expected, strict=True):
        if want is None:
            continue
        got = score(name, params, response, ground_truth).value
        assert round(got, 4) == pytest.approx(want, abs=1e-9), f"{name} {params}: {got}"


@pytest.mark.parametrize("response, ground_truth, want", EXTRA_F1)
def test_extra_f1_rows(response, ground_truth, want):
    assert round(score("builtin.f1_score", {}, response, ground_truth).value, 4) == want


@pytest.mark.parametrize("n, want", ROUGE_N)
def test_rouge_3_to_5(n, want):
    result = score(
        "builtin.rouge_score",
        {"rouge_type": f"rouge{n}"},
        "The quick brown fox jumps over the lazy dog.",
        "The quick brown fox jumps over the lazy cat.",
    )
    assert round(result.value, 4) == want


@pytest.mark.parametrize("response, ground_truth, precision, recall", ROUGE1_PR)
def test_rouge_precision_recall_in_properties(response, ground_truth, precision, recall):
    result = score("builtin.rouge_score", {"rouge_type": "rouge1"}, response, ground_truth)
    assert round(result.properties["rouge_precision"], 4) == precision
    assert round(result.properties["rouge_recall"], 4) == recall
    assert result.passed is (precision >= 0.5)
