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


def test_messages_given_bare_are_a_conversation_with_what_was_given_beside_them():
    """azure-ai-evaluation 1.18 takes ``messages=[...]`` where ``conversation=`` is meant: the context
    and tool definitions go into the conversation, a ground truth onto each assistant turn without
    one, and the caller's list and turns stay as they were."""
    from assay.azure._evaluators._common import hoist_messages_to_conversation

    turns = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "x y"}]
    turns += [{"role": "user", "content": "b"}, {"role": "assistant", "content": "x y z w", "ground_truth": "own"}]
    given = {"messages": turns, "context": "ctx", "ground_truth": "gt", "tool_definitions": [{"name": "t"}]}
    assert hoist_messages_to_conversation(given) is given
    conversation = given.pop("conversation")
    assert given == {}
    assert conversation["context"] == "ctx" and conversation["tool_definitions"] == [{"name": "t"}]
    assert [turn.get("ground_truth") for turn in conversation["messages"]] == [None, "gt", None, "own"]
    assert "ground_truth" not in turns[1]  # the caller's turn was copied, not changed
    untouched = {"conversation": {"messages": turns}, "messages": turns, "context": "c"}
    assert hoist_messages_to_conversation(dict(untouched)) == untouched

    per_conversation = Wordy()(messages=turns)
    assert per_conversation["evaluation_per_turn"]["wordy_result"] == ["fail", "pass"]


def test_task_navigation_efficiency_where_the_peer_keeps_it():
    from assay.azure._evaluators._task_navigation_efficiency import (
        _TaskNavigationEfficiencyEvaluator,
        _TaskNavigationEfficiencyMatchingMode,
    )
    from assay.azure._exceptions import ErrorBlame

    def called(*names):
        return [
            {
                "role": "assistant",
                "content": [{"type": "tool_call", "tool_call_id": f"c{i}", "name": n, "arguments": {}}],
            }
            for i, n in enumerate(names)
        ]

    in_order = _TaskNavigationEfficiencyEvaluator(matching_mode=_TaskNavigationEfficiencyMatchingMode.IN_ORDER_MATCH)
    result = in_order(response=called("search", "extra", "report"), ground_truth=["search", "report"])
    assert result["task_navigation_efficiency_passed"] is True
    assert result["task_navigation_efficiency_result"] == "pass"
    assert result["task_navigation_efficiency_threshold"] == 1.0
    assert result["task_navigation_efficiency_properties"]["precision_score"] == pytest.approx(2 / 3)
    exact = _TaskNavigationEfficiencyEvaluator(matching_mode="exact_match")
    failed = exact(actions=json.dumps(called("search", "extra")), expected_actions=json.dumps(["search"]))
    assert failed["task_navigation_efficiency_passed"] is False
    assert failed["task_navigation_efficiency_properties"]["recall_score"] == 1.0
    with pytest.raises(EvaluationException) as raised:
        exact(response=called("search"), ground_truth="not a list")
    assert raised.value.blame == ErrorBlame.USER_ERROR
    assert raised.value.target == ErrorTarget.TASK_NAVIGATION_EFFICIENCY_EVALUATOR
    with pytest.raises(EvaluationException, match="matching_mode must be one of"):
        _TaskNavigationEfficiencyEvaluator(matching_mode="sideways")


def test_document_retrieval_refuses_labels_out_of_range_in_the_peers_words():
    from assay.azure._evaluators._document_retrieval import (
        DocumentRetrievalEvaluator,
        RetrievalGroundTruthDocument,
        RetrievedDocument,
    )
    from assay.azure._exceptions import ErrorBlame

    truth = [RetrievalGroundTruthDocument(document_id="a", query_relevance_label=5)]
    retrieved = [RetrievedDocument(document_id="a", relevance_score=1.0)]
    with pytest.raises(EvaluationException, match="greater than the configured maximum") as raised:
        DocumentRetrievalEvaluator()(retrieval_ground_truth=truth, retrieved_documents=retrieved)
    assert raised.value.blame == ErrorBlame.USER_ERROR
    assert raised.value.target == ErrorTarget.DOCUMENT_RETRIEVAL_EVALUATOR
    with pytest.raises(EvaluationException, match="strictly greater than the ground truth label minimum"):
        DocumentRetrievalEvaluator(ground_truth_label_min=2, ground_truth_label_max=1)


def test_document_retrieval_tells_a_missing_field_from_a_wrong_value_as_the_peer_does():
    from assay.azure._evaluators._document_retrieval import DocumentRetrievalEvaluator
    from assay.azure._exceptions import ErrorCategory

    evaluator = DocumentRetrievalEvaluator(ground_truth_label_min=0, ground_truth_label_max=2)
    label = {"document_id": "a", "query_relevance_label": 1}
    score = {"document_id": "a", "relevance_score": 1.0}
    missing = {
        "no ground truth": ([], []),
        "a label not given": ([{"document_id": "a"}], [score]),
        "a score not given": ([label], [{"document_id": "a"}]),
    }
    wrong = {
        "a label not whole": ([{**label, "query_relevance_label": 1.5}], [score]),
        "a score not a number": ([label], [{**score, "relevance_score": "high"}]),
    }
    for expected, cases in ((ErrorCategory.MISSING_FIELD, missing), (ErrorCategory.INVALID_VALUE, wrong)):
        for case, (truth, retrieved) in cases.items():
            with pytest.raises(EvaluationException) as raised:
                evaluator(retrieval_ground_truth=truth, retrieved_documents=retrieved)
            assert raised.value.category == expected, case
            assert raised.value.target == ErrorTarget.DOCUMENT_RETRIEVAL_EVALUATOR, case


def test_a_flow_put_in_place_of_the_judge_answers_for_it_as_in_the_peers_own_tests():
    """The peer's unit tests replace an evaluator's prompty flow (``evaluator._flow = MagicMock(...)``):
    the flow is asked with the evaluator's inputs and its ``llm_output`` is the judge's answer."""
    from unittest.mock import MagicMock

    from assay.azure import ResponseCompletenessEvaluator, ToolCallAccuracyEvaluator

    config = AzureOpenAIModelConfiguration(azure_endpoint="https://nowhere.invalid", azure_deployment="d")
    asked = []

    async def flow(timeout, **inputs):
        asked.append(inputs)
        return {"llm_output": {"score": 4, "reason": "nearly all of it", "properties": {}}}

    evaluator = ResponseCompletenessEvaluator(model_config=config)
    evaluator._flow = MagicMock(side_effect=flow)
    result = evaluator(response="Paris is the capital.", ground_truth="Paris is the capital of France.")
    assert (result["response_completeness"], result["response_completeness_passed"]) == (4.0, True)
    assert result["response_completeness_reason"] == "nearly all of it"
    assert result["response_completeness_threshold"] == ResponseCompletenessEvaluator._DEFAULT_COMPLETENESS_THRESHOLD
    assert asked == [{"response": "Paris is the capital.", "ground_truth": "Paris is the capital of France."}]

    async def rambling(timeout, **inputs):
        return {"llm_output": "no JSON here"}

    evaluator._flow = MagicMock(side_effect=rambling)
    with pytest.raises(EvaluationException, match="Evaluator returned invalid output"):
        evaluator(response="a", ground_truth="b")

    tools = ToolCallAccuracyEvaluator(model_config=config)
    tools._flow = MagicMock(side_effect=flow)
    call = {"type": "tool_call", "tool_call_id": "c1", "name": "lookup", "arguments": {}}
    skipped = tools(query="q", tool_calls=[call], tool_definitions=[{"name": "other", "description": "x"}])
    assert skipped["tool_call_accuracy_status"] == "skipped" and skipped["tool_call_accuracy_properties"] is None
    assert skipped["tool_call_accuracy_reason"] == f"Not applicable: {tools._TOOL_DEFINITIONS_MISSING_MESSAGE}"
    assert tools._flow.call_count == 0  # nothing to judge: the judge is not asked


def test_a_reasoning_judge_is_asked_as_one_and_a_composite_passes_it_on():
    from assay.azure import GroundednessEvaluator, QAEvaluator
    from assay.azure._exceptions import ErrorBlame

    config = AzureOpenAIModelConfiguration(azure_endpoint="https://nowhere.invalid", azure_deployment="d")
    judge = GroundednessEvaluator(config, is_reasoning_model=True)
    assert judge._is_reasoning_model is True and judge.judge().reasoning is True
    assert GroundednessEvaluator(config).judge().reasoning is None  # told by the model's name, as before
    composite = QAEvaluator(config, is_reasoning_model=True)
    judged = [part for part in composite._evaluators if hasattr(part, "_is_reasoning_model")]
    assert len(judged) == 5 and all(part._is_reasoning_model for part in judged)
    with pytest.raises(EvaluationException) as raised:
        QAEvaluator(config, groundedness_threshold="high")
    assert raised.value.blame == ErrorBlame.USER_ERROR and raised.value.target == ErrorTarget.QA_EVALUATOR


def test_the_judges_own_properties_are_reported_beside_the_token_counts():
    from unittest.mock import MagicMock

    from assay.azure._evaluators._tool_input_accuracy import _ToolInputAccuracyEvaluator

    async def flow(timeout, **inputs):
        details = {"total_parameters_passed": 3, "correct_parameters_passed": 2}
        return {"llm_output": {"score": 0, "reason": "one argument is wrong", "properties": details}}

    config = AzureOpenAIModelConfiguration(azure_endpoint="https://nowhere.invalid", azure_deployment="d")
    evaluator = _ToolInputAccuracyEvaluator(model_config=config)
    evaluator._flow = MagicMock(side_effect=flow)
    call = {"type": "tool_call", "tool_call_id": "c1", "name": "lookup", "arguments": {"id": 1}}
    definitions = [{"name": "lookup", "description": "x", "parameters": {"type": "object"}}]
    result = evaluator(query="q", response=[{"role": "assistant", "content": [call]}], tool_definitions=definitions)
    properties = result["tool_input_accuracy_properties"]
    assert result["tool_input_accuracy_passed"] is False
    assert properties["parameter_extraction_accuracy"] == 66.67
    assert properties["correct_parameters_passed"] == 2 and "prompt_tokens" in properties


def test_the_tool_judges_refuse_a_call_without_definitions_or_calls_in_the_peers_words():
    from assay.azure import ToolCallAccuracyEvaluator
    from assay.azure._evaluators._tool_input_accuracy import _ToolInputAccuracyEvaluator
    from assay.azure._exceptions import ErrorCategory

    config = AzureOpenAIModelConfiguration(azure_endpoint="https://nowhere.invalid", azure_deployment="d")
    call = {"type": "tool_call", "tool_call_id": "c1", "name": "lookup", "arguments": {}}
    definition = {"name": "lookup", "description": "x", "parameters": {"type": "object"}}
    accuracy = ToolCallAccuracyEvaluator(model_config=config)
    with pytest.raises(EvaluationException, match="Tool definitions input is required") as raised:
        accuracy(query="q", tool_calls=[call], tool_definitions=[])
    assert raised.value.category == ErrorCategory.MISSING_FIELD
    with pytest.raises(EvaluationException, match="No tool calls found in response or provided tool_calls"):
        accuracy(query="q", tool_calls=[], tool_definitions=[definition])
    with pytest.raises(EvaluationException, match="must be provided as a list"):
        _ToolInputAccuracyEvaluator(model_config=config)(query="q", response=[call], tool_definitions=definition)


def test_agent_groundedness_rests_on_what_the_agents_tools_returned_as_the_peers_does():
    """Given a query and an agent's answer but no context, groundedness judges the answer against
    its file search's results; a bare answer is its own context; one with nothing to rest on is refused."""
    from unittest.mock import MagicMock

    from assay.azure import GroundednessEvaluator

    asked = []

    async def flow(timeout, **inputs):
        asked.append(inputs)
        return {"llm_output": {"score": 5, "reason": "every claim is in the passages", "properties": {}}}

    config = AzureOpenAIModelConfiguration(azure_endpoint="https://nowhere.invalid", azure_deployment="d")
    evaluator = GroundednessEvaluator(model_config=config)
    evaluator._flow = MagicMock(side_effect=flow)
    searched = {
        "type": "file_search_call",
        "id": "fs",
        "queries": ["refunds"],
        "results": [{"text": "Within 30 days."}],
    }
    said = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "30 days."}]}
    result = evaluator(query="What is the refund policy?", response=[searched, said])
    assert (result["groundedness"], result["groundedness_result"]) == (5.0, "pass")
    assert "Within 30 days." in asked[0]["context"]
    evaluator(query="What is the refund policy?", response="Refunds take 30 days.")
    assert asked[1]["context"] == "Refunds take 30 days."
    with pytest.raises(EvaluationException, match="Context is a required input"):
        evaluator(query="What is the refund policy?", response=[{"role": "assistant", "content": "30 days."}])
    assert len(asked) == 2
