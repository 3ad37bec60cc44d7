"""Code written for azure-ai-evaluation that reaches past its public names, as its own samples do:
the private paths ``_model_configurations``, ``_exceptions`` and ``_evaluators._common``'s
``EvaluatorBase`` (subclassed with ``_do_eval``), and evaluators whose ``__call__`` takes only
``**kwargs`` (the peer's batch engine gives those every column)."""

from __future__ import annotations

import json

import pytest

from assay.azure import EvaluationException, evaluate
from assay.azure._evaluators._common import EvaluatorBase
from assay.azure._exceptions import ErrorTarget
from assay.azure._model_configurations import AzureOpenAIModelConfiguration


class Wordy(EvaluatorBase):
    """A subclass as the peer's docs write one: a threshold, and ``_do_eval`` giving ``<name>_score``."""

    def __init__(self, threshold: float = 3) -> None:
        super().__init__(threshold=threshold)

    async def _do_eval(self, eval_input):
        return {"wordy_score": len(str(eval_input.get("response", "")).split())}


class EveryColumn:
    def __call__(self, **kwargs):
        return {"columns": len(kwargs), "query_seen": kwargs.get("query")}


def test_the_peers_private_paths_import_and_a_subclass_of_its_base_evaluates():
    config = AzureOpenAIModelConfiguration(azure_endpoint="https://x.openai.azure.com", azure_deployment="d")
    assert config["azure_deployment"] == "d"
    assert Wordy()(query="q", response="one two three four") == {
        "wordy_score": 4,
        "wordy_result": "pass",
        "wordy_threshold": 3,
    }
    turns = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "x y"}]
    turns += [{"role": "user", "content": "b"}, {"role": "assistant", "content": "x y z w"}]
    per_conversation = Wordy()(conversation={"messages": turns})
    assert per_conversation["wordy_score"] == 3.0
    assert per_conversation["evaluation_per_turn"]["wordy_result"] == ["fail", "pass"]
    with pytest.raises(
        EvaluationException, match="Either 'conversation' or individual inputs must be provided"
    ) as raised:
        Wordy()()
    assert raised.value.target == ErrorTarget.CONVERSATION


def test_evaluate_runs_a_base_subclass_and_gives_a_kwargs_evaluator_every_column(tmp_path):
    data = tmp_path / "data.jsonl"
    rows = [{"query": "hi", "response": "a b c d", "extra": 1}, {"query": "yo", "response": "a", "extra": 2}]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = evaluate(data=str(data), evaluators={"wordy": Wordy(), "every": EveryColumn()})
    first, second = result["rows"]
    assert (first["outputs.wordy.wordy_score"], first["outputs.wordy.wordy_result"]) == (4, "pass")
    assert second["outputs.wordy.wordy_result"] == "fail"
    assert (first["outputs.every.columns"], first["outputs.every.query_seen"]) == (3, "hi")
    assert result["metrics"]["wordy.wordy_score"] == 2.5


def test_a_validated_evaluator_refuses_inputs_in_the_peers_words():
    from assay.azure import FluencyEvaluator, RetrievalEvaluator

    config = AzureOpenAIModelConfiguration(azure_endpoint="https://x.openai.azure.com", azure_deployment="d")
    cases = [
        (FluencyEvaluator, {"response": {"bar": "2"}}, "Response must be a string or a list of messages."),
        (FluencyEvaluator, {"response": None}, "Response is a required input and cannot be None."),
        (FluencyEvaluator, {"response": ""}, "Response string cannot be empty."),
        (FluencyEvaluator, {"response": []}, "Response list cannot be empty."),
        # no validator in the peer for this one: its base class's words
        (RetrievalEvaluator, {"response": "Tokyo"}, "RetrievalEvaluator: Either 'conversation' or individual inputs"),
    ]
    for evaluator, given, words in cases:
        with pytest.raises(EvaluationException, match=words.replace("(", r"\(")):
            evaluator(model_config=config)(**given)
