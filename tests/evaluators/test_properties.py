"""Random Unicode through every model-free evaluator and grader: no crash, scores in range."""

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.evaluators import load_catalog
from assay.evaluators.graders.string_check import OPERATIONS
from assay.evaluators.graders.text_similarity import METRICS
from assay.evaluators.nlp import scores
from assay.evaluators.nlp.scores import ROUGE_TYPES
from assay.evaluators.nlp.tokenize import nltk_tokenize, use_shipped_nltk_data

CATALOG = load_catalog()
use_shipped_nltk_data()  # NLTK's NIST tokenizer reads its data at import time
TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=60)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TEXT_EVALUATORS = [
    ("builtin.f1_score", {}),
    ("builtin.bleu_score", {}),
    ("builtin.gleu_score", {}),
    ("builtin.meteor_score", {}),
    *[("builtin.rouge_score", {"rouge_type": kind}) for kind in ROUGE_TYPES],
    *[("string_check", {"operation": op}) for op in OPERATIONS],
    *[("text_similarity", {"evaluation_metric": metric, "pass_threshold": 0.5}) for metric in METRICS],
]


def run(name, params, inputs):
    return asyncio.run(CATALOG.get(name).factory(**params)(inputs))


@SETTINGS
@given(response=TEXT, reference=TEXT)
def test_text_evaluators_stay_in_range(response, reference):
    for name, params in TEXT_EVALUATORS:
        if name in ("string_check", "text_similarity"):
            inputs = {"input": response, "reference": reference}
        else:
            inputs = {"response": response, "ground_truth": reference}
        result = run(name, params, inputs)
        assert result.value is not None and 0.0 <= result.value <= 1.0 + 1e-9, (name, params, result)


@SETTINGS
@given(response=TEXT, reference=TEXT)
def test_bleu_and_gleu_equal_nltk(response, reference):
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from nltk.translate.gleu_score import sentence_gleu

    hyp, ref = list(nltk_tokenize(response)), list(nltk_tokenize(reference))
    assert scores.bleu(ref, hyp) == float(sentence_bleu([ref], hyp, smoothing_function=SmoothingFunction().method4))
    assert scores.gleu(ref, hyp) == sentence_gleu([ref], hyp)


NAMES = st.lists(st.sampled_from(["search", "lookup", "cancel", "refund", "ünïcode"]), max_size=6)


@SETTINGS
@given(
    called=NAMES,
    expected=NAMES.filter(bool),
    mode=st.sampled_from(["exact_match", "in_order_match", "any_order_match"]),
)
def test_task_navigation_efficiency_is_binary_with_bounded_properties(called, expected, mode):
    response = [
        {"role": "assistant", "content": [{"type": "tool_call", "tool_call_id": str(i), "name": n, "arguments": {}}]}
        for i, n in enumerate(called)
    ]
    result = run(
        "builtin.task_navigation_efficiency", {"matching_mode": mode}, {"response": response, "ground_truth": expected}
    )
    assert result.value in (0.0, 1.0)
    assert all(0.0 <= result.properties[k] <= 1.0 for k in ("precision_score", "recall_score", "f1_score"))


DOC_IDS = st.sampled_from([f"d{i}" for i in range(8)])


@SETTINGS
@given(
    truth=st.dictionaries(DOC_IDS, st.integers(0, 4), min_size=1),
    retrieved=st.dictionaries(DOC_IDS, st.floats(-100, 100, allow_nan=False)),
)
def test_document_retrieval_metrics_stay_in_range(truth, retrieved):
    inputs = {
        "retrieval_ground_truth": [{"document_id": d, "query_relevance_label": v} for d, v in truth.items()],
        "retrieved_documents": [{"document_id": d, "relevance_score": v} for d, v in retrieved.items()],
    }
    result = run("builtin.document_retrieval", {}, inputs)
    assert 0.0 <= result.value <= 1.0 + 1e-9
    assert 0.0 <= result.properties["xdcg@3"] <= 100.0
    assert 0.0 <= result.properties["holes_ratio"] <= 1.0


ASCII_HEAVY = st.text(
    alphabet=st.characters(codec="ascii") | st.sampled_from(list("«»“”‘’—é東京 .,!?'\"")), max_size=80
)


@SETTINGS
@given(text=st.one_of(TEXT, ASCII_HEAVY))
def test_tokens_equal_nltk_word_tokenize_and_nist(text):
    import nltk
    from nltk.tokenize.nist import NISTTokenizer

    expected = nltk.word_tokenize(text) if text.isascii() else NISTTokenizer().international_tokenize(text)
    assert list(nltk_tokenize(text)) == expected


@SETTINGS
@given(response=st.one_of(TEXT, ASCII_HEAVY), reference=st.one_of(TEXT, ASCII_HEAVY))
def test_rouge_equals_rouge_score(response, reference):
    from rouge_score.rouge_scorer import RougeScorer

    for kind in ROUGE_TYPES:
        expected = RougeScorer([kind], use_stemmer=False).score(reference, response)[kind]
        assert scores.rouge(kind, response, reference) == (expected.precision, expected.recall, expected.fmeasure)
