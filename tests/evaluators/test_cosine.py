"""text_similarity with ``evaluation_metric: cosine``: the embeddings of input and reference, from
the models: entry with ``api: embeddings`` (the scripted server embeds each text as its letter
counts, so the expected cosine is computed here independently)."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from assay.dataset import Dataset
from assay.errors import ConfigError
from assay.evaluators import load_catalog
from assay.llm import ModelConfig, ModelRegistry
from assay.run import EvalDefinition, prepare
from tests.evaluators.test_judges import run_eval

CRITERION = {
    "type": "text_similarity",
    "name": "close",
    "input": "{{item.output}}",
    "reference": "{{item.answer}}",
    "evaluation_metric": "cosine",
    "pass_threshold": 0.8,
}
ROWS = [
    {"output": "listen", "answer": "silent"},  # the same letters: cosine 1
    {"output": "abc", "answer": "xyz"},  # no letter shared: cosine 0
    {"output": "the cat sat", "answer": "the cat sat down"},
]


def letters_cosine(a: str, b: str) -> float:
    x, y = Counter(c for c in a.lower() if c.isalpha()), Counter(c for c in b.lower() if c.isalpha())
    dot = sum(x[c] * y[c] for c in x)
    return dot / (math.sqrt(sum(v * v for v in x.values())) * math.sqrt(sum(v * v for v in y.values())))


def test_cosine_compares_the_embeddings_of_input_and_reference(llm, store):
    llm.reset()
    config = ModelConfig(
        name="embed", model="text-embedding-3-small", api="embeddings", base_url=llm.base_url, api_key="t"
    )
    _, results = run_eval(store, ModelRegistry([config], cache=store), [CRITERION], ROWS)
    scores = [r[0].score for r in results]
    assert scores == pytest.approx([letters_cosine(r["output"], r["answer"]) for r in ROWS])
    assert [r[0].passed for r in results] == [True, False, True]
    assert results[0][0].properties["embeddings_model"] == "text-embedding-3-small"
    assert llm.stats()["requests"] == len(ROWS)  # one embeddings call per item, both texts in it
    assert len(llm.stats()["last"]["input"]) == 2


def test_cosine_without_an_embeddings_model_is_refused_before_the_run():
    definition = EvalDefinition("cosine", [CRITERION])
    with pytest.raises(ConfigError, match="no embeddings model is configured"):
        prepare(definition, Dataset.from_content(ROWS), load_catalog(), models=ModelRegistry())
