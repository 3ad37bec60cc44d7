"""Model-free agent, retrieval and grader evaluators; expected numbers measured on the peer 1.18."""

import asyncio

import pytest

from assay.errors import ConfigError
from assay.evaluators import Score, evaluator, load_catalog
from assay.evaluators.decorator import coerce_score, spec_from_function

CATALOG = load_catalog()


def run(name, params, inputs):
    return asyncio.run(CATALOG.get(name).factory(**params)(inputs))


DOCS = [
    (
        [("a", 4), ("b", 2), ("c", 0), ("d", 3)],
        [("b", 9.1), ("x", 8), ("a", 7.5), ("d", 1)],
        {
            "ndcg@3": 0.5019958332409522,
            "xdcg@3": 43.87755102040816,
            "fidelity": 1.0,
            "top1_relevance": 2,
            "top3_max_relevance": 4,
            "holes": 1,
            "holes_ratio": 0.25,
        },
    ),
    (
        [("a", 1)],
        [("z", 1)],
        {
            "ndcg@3": 0,
            "xdcg@3": 0,
            "fidelity": 0,
            "top1_relevance": 0,
            "top3_max_relevance": 0,
            "holes": 1,
            "holes_ratio": 1.0,
        },
    ),
    (
        [("a", 3), ("b", 3)],
        [("a", 0.2), ("b", 0.9)],
        {
            "ndcg@3": 1.0,
            "xdcg@3": 61.224489795918366,
            "fidelity": 1.0,
            "top1_relevance": 3,
            "top3_max_relevance": 3,
            "holes": 0,
            "holes_ratio": 0.0,
        },
    ),
]


@pytest.mark.parametrize("truth, retrieved, expected", DOCS)
def test_document_retrieval_matches_peer(truth, retrieved, expected):
    result = run(
        "builtin.document_retrieval",
        {},
        {
            "retrieval_ground_truth": [{"document_id": d, "query_relevance_label": label} for d, label in truth],
            "retrieved_documents": [{"document_id": d, "relevance_score": s} for d, s in retrieved],
        },
    )
    for key, value in expected.items():
        assert result.properties[key] == pytest.approx(value), key
    assert result.value == pytest.approx(expected["ndcg@3"])
    assert result.passed is (expected["ndcg@3"] >= 0.5)


RESPONSE = [
    {
        "role": "assistant",
        "content": [
            {"type": "tool_call", "tool_call_id": "1", "name": "search", "arguments": {"q": "x"}},
            {"type": "tool_call", "tool_call_id": "2", "name": "lookup", "arguments": {"id": 1}},
        ],
    },
    {
        "role": "assistant",
        "content": [{"type": "tool_call", "tool_call_id": "3", "name": "search", "arguments": {"q": "y"}}],
    },
]
WITH_PARAMS = [["search", "lookup"], {"search": {"q": "x"}, "lookup": {"id": 1}}]


@pytest.mark.parametrize(
    "mode, ground_truth, matched, precision",
    [
        ("exact_match", ["search", "lookup"], 0.0, 2 / 3),
        ("exact_match", ["search", "lookup", "search"], 1.0, 1.0),
        ("exact_match", WITH_PARAMS, 0.0, 2 / 3),
        ("in_order_match", ["lookup", "search"], 1.0, 2 / 3),
        ("in_order_match", WITH_PARAMS, 1.0, 2 / 3),
        ("any_order_match", ["lookup", "search"], 1.0, 2 / 3),
        ("any_order", ["search", "search", "search"], 0.0, 2 / 3),
    ],
)
def test_task_navigation_efficiency_matches_peer(mode, ground_truth, matched, precision):
    result = run(
        "builtin.task_navigation_efficiency",
        {"matching_mode": mode},
        {"response": RESPONSE, "ground_truth": ground_truth},
    )
    assert result.value == matched and result.passed is bool(matched)
    assert result.properties["precision_score"] == pytest.approx(precision)


def test_task_navigation_accepts_openai_chat_calls_and_rejects_bad_modes():
    chat = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "search", "arguments": "{}"}}],
        }
    ]
    assert run("builtin.task_navigation_efficiency", {}, {"response": chat, "ground_truth": '["search"]'}).value == 1.0
    with pytest.raises(ConfigError, match="matching_mode"):
        CATALOG.get("builtin.task_navigation_efficiency").factory(matching_mode="fuzzy")


@pytest.mark.parametrize(
    "operation, output, reference, expected",
    [
        ("eq", "Paris", "Paris", 1.0),
        ("eq", "paris", "Paris", 0.0),
        ("ne", "a", "b", 1.0),
        ("neq", "a", "a", 0.0),
        ("like", "The capital is Paris.", "Paris", 1.0),
        ("like", "paris", "Paris", 0.0),
        ("ilike", "PARIS!", "paris", 1.0),
    ],
)
def test_string_check(operation, output, reference, expected):
    result = run("string_check", {"operation": operation}, {"input": output, "reference": reference})
    assert result.value == expected and result.passed is (expected == 1.0)


def test_text_similarity_metrics_and_threshold():
    fuzzy = run(
        "text_similarity",
        {"evaluation_metric": "fuzzy_match", "pass_threshold": 0.8},
        {"input": "kitten", "reference": "sitting"},
    )
    assert fuzzy.value == pytest.approx(0.6153846, abs=1e-6) and fuzzy.passed is False
    bleu = run(
        "text_similarity",
        {"evaluation_metric": "bleu", "pass_threshold": 0.2},
        {"input": "The cat sat on the mat.", "reference": "The cat is sitting on the mat."},
    )
    assert round(bleu.value, 4) == 0.4238 and bleu.passed is True
    rouge = run(
        "text_similarity",
        {"evaluation_metric": "rouge_l", "pass_threshold": 0.5},
        {"input": "He runs quickly to the store", "reference": "He ran fast to the shop"},
    )
    assert rouge.value == pytest.approx(0.5) and rouge.passed is True
    with pytest.raises(ConfigError, match="pass_threshold"):
        CATALOG.get("text_similarity").factory(evaluation_metric="bleu", pass_threshold="high")
    # Without one (as inside a multi grader, where OpenAI's grader type has none): a score, no verdict.
    # A top-level criterion still needs one (tests/evaluators/test_multi_grader.py).
    unmarked = run("text_similarity", {"evaluation_metric": "rouge_l"}, {"input": "a b", "reference": "a b"})
    assert unmarked.value == 1.0 and unmarked.passed is None


def test_evaluator_decorator_binds_inputs_by_name():
    @evaluator(threshold=1.0)
    def exact(response: str, ground_truth: str, case_sensitive: bool = True) -> bool:
        return response == ground_truth if case_sensitive else response.lower() == ground_truth.lower()

    spec = spec_from_function(exact)
    assert spec.required_inputs == ["response", "ground_truth"] and spec.optional_inputs == ["case_sensitive"]
    assert exact("a", "a") is True  # still a plain function
    result = asyncio.run(spec.factory()({"response": "A", "ground_truth": "a", "case_sensitive": False, "other": 1}))
    assert result == Score(1.0, passed=True)


def test_evaluator_decorator_refuses_var_keyword():
    def loose(**kwargs):
        return 1.0

    with pytest.raises(ConfigError, match=r"\*\*kwargs"):
        spec_from_function(loose)


def test_named_inputs_beside_var_keyword_are_the_inputs():
    def length(response, **kwargs):
        return len(response)

    class Answer:
        def __call__(self, *, response, ground_truth=None, **kwargs):
            return {"score": float(response == ground_truth)}

    assert spec_from_function(length).required_inputs == ["response"]
    spec = spec_from_function(Answer())
    assert (spec.required_inputs, spec.optional_inputs) == (["response"], ["ground_truth"])


def test_coerce_score_shapes():
    assert coerce_score(0.25) == Score(0.25)
    assert coerce_score({"score": 3, "reason": "ok", "extra": 1}) == Score(3.0, reason="ok", properties={"extra": 1})
    assert coerce_score({"exact": 1.0}).value == 1.0
