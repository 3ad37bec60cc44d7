"""Usage cases of azure-ai-evaluation 1.18, written from its published samples
(``samples/evaluation_samples_threshold.py``, ``evaluation_samples_evaluate.py``), its README and
its unit tests' calling patterns. Each case is code as a user of the peer writes it: it imports
from ``azure.ai.evaluation`` and leaves its outcome in ``result``. ``MODEL_CONFIG`` (an OpenAI
configuration) and ``AZURE_MODEL_CONFIG`` (an Azure one) point at the scripted judge; ``DATA``
is a folder with ``qa.jsonl`` (and the case may write files there).

``run_case.py`` runs them under either package (``--assay`` swaps the import, nothing else).
"""

from __future__ import annotations

from typing import Any

MODEL_FREE = "model-free"
JUDGED = "judged"
RAISES = "raises"

JUDGE_ANSWER = {"content": '{"reason": "scripted judge", "score": 4}'}
"""What the scripted judge answers every call with, on both sides..."""
JUDGE_RULES = [
    {"match": "It is 14 degrees in Seattle", "reply": {"content": '{"reason": "scripted judge", "score": 1}'}}
]
"""...but the pass/fail tool judges, which score 0 or 1 (their cases' response says this)."""


def shape(value: Any) -> Any:
    """Keys and value types, not values: what a judged case must agree on (the prompts differ)."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value[:1]]
    if value == "NaN":
        return "NaN"
    return "number" if isinstance(value, (int, float)) and not isinstance(value, bool) else type(value).__name__


def agrees(kind: str, peer: dict[str, Any], ours: dict[str, Any]) -> bool:
    """Both ran, and gave identical outputs (model-free, raises) or the same shape (judged)."""
    if not peer.get("ran") or not ours.get("ran"):
        return False
    if kind == JUDGED:
        return bool(shape(peer["result"]) == shape(ours["result"]))
    return bool(peer["result"] == ours["result"])


CASES: list[tuple[str, str, str]] = [
    # -- NLP evaluators called directly (threshold samples, README) --------------------------------
    (
        "f1_default",
        MODEL_FREE,
        """
from azure.ai.evaluation import F1ScoreEvaluator
result = F1ScoreEvaluator()(response="The capital of Japan is Tokyo.", ground_truth="Tokyo is Japan's capital.")
""",
    ),
    (
        "f1_threshold",
        MODEL_FREE,
        """
from azure.ai.evaluation import F1ScoreEvaluator
f1_evaluator = F1ScoreEvaluator(threshold=0.6)
result = f1_evaluator(response="Lyon is the capital of France.", ground_truth="Paris is the capital of France.")
""",
    ),
    (
        "bleu_threshold",
        MODEL_FREE,
        """
from azure.ai.evaluation import BleuScoreEvaluator
bleu_evaluator = BleuScoreEvaluator(threshold=0.3)
result = bleu_evaluator(response="Lyon is the capital of France.", ground_truth="Paris is the capital of France.")
""",
    ),
    (
        "bleu_lookup",
        MODEL_FREE,
        """
from azure.ai.evaluation import BleuScoreEvaluator
score = BleuScoreEvaluator(threshold=0.3)(response="Paris is the capital of France.", ground_truth="Paris is the capital of France.")
result = {"score": score["bleu_score"], "verdict": score["bleu_result"], "threshold": score["bleu_threshold"]}
""",
    ),
    (
        "gleu_threshold",
        MODEL_FREE,
        """
from azure.ai.evaluation import GleuScoreEvaluator
result = GleuScoreEvaluator(threshold=0.2)(response="Paris is the capital of France.", ground_truth="France's capital is Paris.")
""",
    ),
    (
        "meteor_alpha",
        MODEL_FREE,
        """
from azure.ai.evaluation import MeteorScoreEvaluator
meteor_evaluator = MeteorScoreEvaluator(alpha=0.8, threshold=0.3)
result = meteor_evaluator(response="Paris is the capital of France.", ground_truth="France's capital is Paris.")
""",
    ),
    (
        "meteor_all_parameters",
        MODEL_FREE,
        """
from azure.ai.evaluation import MeteorScoreEvaluator
result = MeteorScoreEvaluator(alpha=0.7, beta=2.0, gamma=0.3)(response="The cat sat on the mat.", ground_truth="A cat was sitting on the mat.")
""",
    ),
    (
        "rouge_4",
        MODEL_FREE,
        """
from azure.ai.evaluation import RougeScoreEvaluator, RougeType
rouge_evaluator = RougeScoreEvaluator(rouge_type=RougeType.ROUGE_4, precision_threshold=0.5, recall_threshold=0.5,
                                      f1_score_threshold=0.5)
result = rouge_evaluator(response="Paris is the capital of France.", ground_truth="France's capital is Paris.")
""",
    ),
    (
        "rouge_l",
        MODEL_FREE,
        """
from azure.ai.evaluation import RougeScoreEvaluator, RougeType
result = RougeScoreEvaluator(rouge_type=RougeType.ROUGE_L, precision_threshold=0.4, recall_threshold=0.4,
                             f1_score_threshold=0.4)(response="The cat sat on the mat.", ground_truth="The cat is on the mat.")
""",
    ),
    (
        "rouge_1_string",
        MODEL_FREE,
        """
from azure.ai.evaluation import RougeScoreEvaluator
result = RougeScoreEvaluator("rouge1")(response="Tokyo is the capital.", ground_truth="The capital is Tokyo.")
""",
    ),
    (
        "rouge_type_value",
        MODEL_FREE,
        """
from azure.ai.evaluation import RougeType
result = {"values": [t.value for t in RougeType], "names": [t.name for t in RougeType]}
""",
    ),
    (
        "document_retrieval",
        MODEL_FREE,
        """
from azure.ai.evaluation import DocumentRetrievalEvaluator
retrieval_ground_truth = [{"document_id": "1", "query_relevance_label": 4}, {"document_id": "2", "query_relevance_label": 2},
                          {"document_id": "3", "query_relevance_label": 3}, {"document_id": "4", "query_relevance_label": 1},
                          {"document_id": "5", "query_relevance_label": 0}]
retrieved_documents = [{"document_id": "2", "relevance_score": 45.1}, {"document_id": "6", "relevance_score": 35.8},
                       {"document_id": "3", "relevance_score": 29.2}, {"document_id": "5", "relevance_score": 25.4},
                       {"document_id": "7", "relevance_score": 18.8}]
result = DocumentRetrievalEvaluator()(retrieval_ground_truth=retrieval_ground_truth, retrieved_documents=retrieved_documents)
""",
    ),
    (
        "document_retrieval_thresholds",
        MODEL_FREE,
        """
from azure.ai.evaluation import DocumentRetrievalEvaluator
evaluator = DocumentRetrievalEvaluator(ground_truth_label_min=0, ground_truth_label_max=4, ndcg_threshold=0.7,
                                       xdcg_threshold=20.0, fidelity_threshold=0.9)
result = evaluator(retrieval_ground_truth=[{"document_id": "a", "query_relevance_label": 3}],
                   retrieved_documents=[{"document_id": "a", "relevance_score": 1.0}, {"document_id": "b", "relevance_score": 0.5}])
""",
    ),
    (
        "f1_unicode",
        MODEL_FREE,
        """
from azure.ai.evaluation import F1ScoreEvaluator, BleuScoreEvaluator
result = {**F1ScoreEvaluator()(response="Café au lait, s'il vous plaît", ground_truth="Un café au lait"),
          **BleuScoreEvaluator()(response="東京は日本の首都です", ground_truth="日本の首都は東京です")}
""",
    ),
    # -- bad input ---------------------------------------------------------------------------------
    (
        "f1_missing_input",
        RAISES,
        """
from azure.ai.evaluation import F1ScoreEvaluator
from azure.ai.evaluation._exceptions import EvaluationException
try:
    F1ScoreEvaluator()(response="Paris")
    result = "no error"
except EvaluationException as exc:
    result = {"caught": type(exc).__name__, "message": str(exc)}
""",
    ),
    (
        "rouge_int_threshold",
        RAISES,
        """
from azure.ai.evaluation import RougeScoreEvaluator, RougeType
from azure.ai.evaluation._exceptions import EvaluationException
try:
    RougeScoreEvaluator(rouge_type=RougeType.ROUGE_L, precision_threshold=1)
    result = "no error"
except EvaluationException as exc:
    result = {"caught": type(exc).__name__, "message": str(exc)}
""",
    ),
    (
        "rouge_needs_type",
        RAISES,
        """
from azure.ai.evaluation import RougeScoreEvaluator
try:
    RougeScoreEvaluator()
    result = "no error"
except TypeError as exc:
    result = {"caught": type(exc).__name__}
""",
    ),
    (
        "judge_without_config",
        RAISES,
        """
from azure.ai.evaluation import CoherenceEvaluator
from azure.ai.evaluation._exceptions import EvaluationException
try:
    CoherenceEvaluator({})
    result = "no error"
except EvaluationException as exc:
    result = {"caught": type(exc).__name__, "message": str(exc)}
""",
    ),
    # -- judges called directly ---------------------------------------------------------------
    (
        "coherence",
        JUDGED,
        """
from azure.ai.evaluation import CoherenceEvaluator
coherence_evaluator = CoherenceEvaluator(model_config=AZURE_MODEL_CONFIG, threshold=2)
result = coherence_evaluator(query="What is the capital of France?", response="Paris is the capital of France.")
""",
    ),
    (
        "fluency",
        JUDGED,
        """
from azure.ai.evaluation import FluencyEvaluator
result = FluencyEvaluator(model_config=MODEL_CONFIG, threshold=3)(response="Paris is the capital of France.")
""",
    ),
    (
        "groundedness",
        JUDGED,
        """
from azure.ai.evaluation import GroundednessEvaluator
groundedness_evaluator = GroundednessEvaluator(model_config=MODEL_CONFIG, threshold=2)
result = groundedness_evaluator(response="Paris is the capital of France.",
                                context="The city of Paris, in the north of France, serves as its capital.")
""",
    ),
    (
        "relevance",
        JUDGED,
        """
from azure.ai.evaluation import RelevanceEvaluator
relevance_eval = RelevanceEvaluator(model_config=MODEL_CONFIG, threshold=2)
result = relevance_eval(query="What is the capital of Japan?", response="The capital of Japan is Tokyo.")
""",
    ),
    (
        "similarity",
        JUDGED,
        """
from azure.ai.evaluation import SimilarityEvaluator
result = SimilarityEvaluator(model_config=MODEL_CONFIG, threshold=3)(
    query="What is the capital of Japan?", response="The capital of Japan is Tokyo.", ground_truth="Tokyo is Japan's capital.")
""",
    ),
    (
        "retrieval",
        JUDGED,
        """
from azure.ai.evaluation import RetrievalEvaluator
result = RetrievalEvaluator(model_config=MODEL_CONFIG)(query="What is the capital of Japan?",
                                                       context="Tokyo is the capital of Japan.")
""",
    ),
    (
        "response_completeness",
        JUDGED,
        """
from azure.ai.evaluation import ResponseCompletenessEvaluator
result = ResponseCompletenessEvaluator(model_config=MODEL_CONFIG)(response="Tokyo.", ground_truth="Tokyo is the capital of Japan.")
""",
    ),
    (
        "intent_resolution",
        JUDGED,
        """
from azure.ai.evaluation import IntentResolutionEvaluator
result = IntentResolutionEvaluator(model_config=MODEL_CONFIG)(query="What are the opening hours of the Eiffel tower?",
                                                              response="Opening hours of the Eiffel Tower are 9:00 AM to 11:00 PM.")
""",
    ),
    (
        "tool_call_accuracy",
        JUDGED,
        """
from azure.ai.evaluation import ToolCallAccuracyEvaluator
tool_call = {"type": "tool_call", "tool_call_id": "call_1", "name": "fetch_weather", "arguments": {"location": "Seattle"}}
tool_definition = {"name": "fetch_weather", "description": "Fetches the weather information for the specified location.",
                   "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}
result = ToolCallAccuracyEvaluator(model_config=MODEL_CONFIG)(query="How is the weather in Seattle?",
                                                              tool_calls=[tool_call], tool_definitions=[tool_definition])
""",
    ),
    (
        "tool_call_success",
        JUDGED,
        """
from azure.ai.evaluation import _ToolCallSuccessEvaluator
response = [
    {"role": "assistant", "content": [{"type": "tool_call", "tool_call_id": "call_1", "name": "fetch_weather",
                                       "arguments": {"location": "Seattle"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "tool_result", "tool_result": {"temp": 14}}]},
    {"role": "assistant", "content": "It is 14 degrees in Seattle."}]
tool_definition = {"name": "fetch_weather", "description": "Fetches the weather information for the specified location.",
                   "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}
result = _ToolCallSuccessEvaluator(model_config=MODEL_CONFIG)(response=response, tool_definitions=[tool_definition])
""",
    ),
    (
        "tool_output_utilization",
        JUDGED,
        """
from azure.ai.evaluation import _ToolOutputUtilizationEvaluator
response = [
    {"role": "assistant", "content": [{"type": "tool_call", "tool_call_id": "call_1", "name": "fetch_weather",
                                       "arguments": {"location": "Seattle"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "tool_result", "tool_result": {"temp": 14}}]},
    {"role": "assistant", "content": "It is 14 degrees in Seattle."}]
tool_definition = {"name": "fetch_weather", "description": "Fetches the weather information for the specified location.",
                   "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}
result = _ToolOutputUtilizationEvaluator(model_config=MODEL_CONFIG)(
    query="How is the weather in Seattle?", response=response, tool_definitions=[tool_definition])
""",
    ),
    (
        "retrieval_conversation",
        JUDGED,
        """
from azure.ai.evaluation import RetrievalEvaluator
conversation = {"messages": [
    {"content": "What is the capital of France?", "role": "user", "context": "Customer wants to know the capital of France"},
    {"content": "Paris", "role": "assistant", "context": "Paris is the capital of France"},
    {"content": "What is the capital of Hawaii?", "role": "user", "context": "Customer wants to know the capital of Hawaii"},
    {"content": "Honolulu", "role": "assistant", "context": "Honolulu is the capital of Hawaii"}], "context": "Global context"}
result = RetrievalEvaluator(model_config=MODEL_CONFIG, threshold=2)(conversation=conversation)
""",
    ),
    (
        "coherence_conversation",
        JUDGED,
        """
from azure.ai.evaluation import CoherenceEvaluator
conversation = {"messages": [{"role": "user", "content": "What is the capital of France?"},
                             {"role": "assistant", "content": "Paris."},
                             {"role": "user", "content": "And of Italy?"}, {"role": "assistant", "content": "Rome."}]}
result = CoherenceEvaluator(MODEL_CONFIG)(conversation=conversation)
""",
    ),
    (
        "qa_composite",
        JUDGED,
        """
from azure.ai.evaluation import QAEvaluator
qa_eval = QAEvaluator(model_config=MODEL_CONFIG, groundedness_threshold=2, relevance_threshold=2, coherence_threshold=2,
                      fluency_threshold=2, similarity_threshold=2, f1_score_threshold=0.5)
result = qa_eval(query="This's the color?", response="Black", ground_truth="gray", context="gray")
""",
    ),
    # -- evaluate() --------------------------------------------------------------------------
    (
        "evaluate_nlp",
        MODEL_FREE,
        """
from azure.ai.evaluation import evaluate, F1ScoreEvaluator, BleuScoreEvaluator
result = evaluate(data=DATA + "/qa.jsonl", evaluators={"f1": F1ScoreEvaluator(), "bleu": BleuScoreEvaluator(threshold=0.2)})
result = {"rows": result["rows"], "metrics": result["metrics"]}
""",
    ),
    (
        "evaluate_column_mapping",
        MODEL_FREE,
        """
from azure.ai.evaluation import evaluate, F1ScoreEvaluator
result = evaluate(data=DATA + "/qa.jsonl", evaluators={"f1": F1ScoreEvaluator()},
                  evaluator_config={"f1": {"column_mapping": {"response": "${data.answer}", "ground_truth": "${data.ground_truth}"}}})
result = {"rows": result["rows"], "metrics": result["metrics"]}
""",
    ),
    (
        "evaluate_default_mapping",
        MODEL_FREE,
        """
from azure.ai.evaluation import evaluate, RougeScoreEvaluator, RougeType
result = evaluate(data=DATA + "/qa.jsonl", evaluators={"rouge": RougeScoreEvaluator(rouge_type=RougeType.ROUGE_L)},
                  evaluator_config={"default": {"column_mapping": {"response": "${data.answer}"}}})
result = {"rows": result["rows"], "metrics": result["metrics"]}
""",
    ),
    (
        "evaluate_custom_functions",
        MODEL_FREE,
        """
from azure.ai.evaluation import evaluate, F1ScoreEvaluator
def response_length(response, **kwargs):
    return len(response)
def word_counts(response, ground_truth, **kwargs):
    return {"response_words": len(response.split()), "truth_words": len(ground_truth.split())}
class ExactMatch:
    def __init__(self, ignore_case=True):
        self.ignore_case = ignore_case
    def __call__(self, *, response, ground_truth, **kwargs):
        a, b = (response.lower(), ground_truth.lower()) if self.ignore_case else (response, ground_truth)
        return {"exact": float(a == b)}
result = evaluate(data=DATA + "/qa.jsonl", evaluators={"length": response_length, "words": word_counts,
                                                       "exact": ExactMatch(), "f1_score": F1ScoreEvaluator()})
result = {"rows": result["rows"], "metrics": result["metrics"]}
""",
    ),
    (
        "evaluate_missing_column",
        MODEL_FREE,
        """
import json
from azure.ai.evaluation import evaluate, F1ScoreEvaluator
rows = [{"response": "Paris", "ground_truth": "Paris"}, {"ground_truth": "Rome"}, {"response": "Lyon", "ground_truth": "Paris"}]
open(DATA + "/gaps.jsonl", "w").write("".join(json.dumps(r) + "\\n" for r in rows))
result = evaluate(data=DATA + "/gaps.jsonl", evaluators={"f1": F1ScoreEvaluator()})
result = {"rows": result["rows"], "metrics": result["metrics"]}
""",
    ),
    (
        "evaluate_output_path",
        MODEL_FREE,
        """
import json, os
from azure.ai.evaluation import evaluate, F1ScoreEvaluator
evaluate(data=DATA + "/qa.jsonl", evaluators={"f1": F1ScoreEvaluator()}, output_path=DATA + "/results.json")
written = json.load(open(DATA + "/results.json"))
result = {"keys": sorted(written), "rows": len(written["rows"]), "metrics": written["metrics"]}
""",
    ),
    (
        "evaluate_csv",
        MODEL_FREE,
        """
from azure.ai.evaluation import evaluate, F1ScoreEvaluator
open(DATA + "/qa.csv", "w").write("response,ground_truth\\nParis is the capital,Paris\\nRome,Paris\\n")
result = evaluate(data=DATA + "/qa.csv", evaluators={"f1": F1ScoreEvaluator()})
result = {"rows": result["rows"], "metrics": result["metrics"]}
""",
    ),
    (
        "evaluate_judge_threshold_sample",
        JUDGED,
        """
from azure.ai.evaluation import evaluate, RelevanceEvaluator, CoherenceEvaluator
result = evaluate(data=DATA + "/qa.jsonl", evaluators={
    "coherence": CoherenceEvaluator(model_config=MODEL_CONFIG, threshold=2),
    "relevance": RelevanceEvaluator(model_config=MODEL_CONFIG, threshold=4)},
    evaluator_config={"coherence": {"column_mapping": {"response": "${data.response}", "query": "${data.query}"}},
                      "relevance": {"column_mapping": {"response": "${data.response}", "query": "${data.query}"}}})
result = {"rows": result["rows"], "metrics": result["metrics"]}
""",
    ),
    (
        "evaluate_conversation_column",
        JUDGED,
        """
import json
from azure.ai.evaluation import evaluate, CoherenceEvaluator, F1ScoreEvaluator
chats = [{"conversation": {"messages": [{"role": "user", "content": "Hi, where is my order?"},
                                        {"role": "assistant", "content": "It shipped yesterday."},
                                        {"role": "user", "content": "When will it arrive?"},
                                        {"role": "assistant", "content": "On Friday."}]}},
         {"conversation": {"messages": [{"role": "user", "content": "Cancel it."},
                                        {"role": "assistant", "content": "Done."}]}}]
open(DATA + "/chats.jsonl", "w").write("".join(json.dumps(c) + "\\n" for c in chats))
result = evaluate(data=DATA + "/chats.jsonl", evaluators={"coherence": CoherenceEvaluator(MODEL_CONFIG)})
result = {"rows": result["rows"], "metrics": result["metrics"]}
""",
    ),
    (
        "evaluate_strict_errors",
        RAISES,
        """
import json
from azure.ai.evaluation import evaluate, F1ScoreEvaluator
from azure.ai.evaluation._exceptions import EvaluationException
open(DATA + "/gap.jsonl", "w").write(json.dumps({"response": "a", "ground_truth": "a"}) + "\\n" + json.dumps({"ground_truth": "b"}) + "\\n")
try:
    evaluate(data=DATA + "/gap.jsonl", evaluators={"f1": F1ScoreEvaluator()}, fail_on_evaluator_errors=True)
    result = "no error"
except EvaluationException as exc:
    result = {"caught": "an EvaluationException"}
""",
    ),
    (
        "evaluate_no_evaluators",
        RAISES,
        """
from azure.ai.evaluation import evaluate
from azure.ai.evaluation._exceptions import EvaluationException
try:
    evaluate(data=DATA + "/qa.jsonl", evaluators={})
    result = "no error"
except EvaluationException as exc:
    result = {"caught": type(exc).__name__}
""",
    ),
    (
        "evaluate_missing_file",
        RAISES,
        """
from azure.ai.evaluation import evaluate, F1ScoreEvaluator
from azure.ai.evaluation._exceptions import EvaluationException
try:
    evaluate(data=DATA + "/nowhere.jsonl", evaluators={"f1": F1ScoreEvaluator()})
    result = "no error"
except EvaluationException as exc:
    result = {"caught": type(exc).__name__}
""",
    ),
    # -- the configuration types ----------------------------------------------------------------
    (
        "model_configuration_types",
        MODEL_FREE,
        """
from azure.ai.evaluation import AzureOpenAIModelConfiguration, OpenAIModelConfiguration
azure = AzureOpenAIModelConfiguration(azure_endpoint="https://x.openai.azure.com", azure_deployment="gpt-4o", api_key="k")
openai = OpenAIModelConfiguration(api_key="k", model="gpt-4o")
result = {"azure": dict(azure), "openai": dict(openai), "azure_type": type(azure).__name__}
""",
    ),
]

QA_ROWS = [
    {
        "query": "What is the capital of France?",
        "response": "Paris is the capital of France.",
        "answer": "The capital is Paris.",
        "ground_truth": "Paris is the capital of France.",
        "context": "France's capital is Paris.",
    },
    {
        "query": "Which river flows through Rome?",
        "response": "The Tiber flows through Rome.",
        "answer": "It is the Tiber.",
        "ground_truth": "The Tiber river runs through Rome.",
        "context": "Rome lies on the Tiber.",
    },
    {
        "query": "How tall is Mount Everest?",
        "response": "About 8,849 metres.",
        "answer": "Roughly 8.8 km.",
        "ground_truth": "Mount Everest is 8,849 metres tall.",
        "context": "Everest: 8,849 m.",
    },
]
