"""The peer's LLM-judged classes: quality, RAG, agent and tool evaluators, and the content harms
(judged locally by the judge model, not by Azure's safety service)."""

from __future__ import annotations

import dataclasses
from typing import Any

from assay.azure.evaluators import EvaluatorBase, _ignored
from assay.azure.exceptions import ErrorTarget, user_error
from assay.errors import ItemError
from assay.evaluators.judges.judge import NO_TOOL_CALLS, TOOL_DEFINITIONS_MISSING
from assay.messages import HOSTED_TOOLS, MessageFormatError, normalize_tool_definitions
from assay.results import Result
from assay.run.criteria import answer_context


class JudgeEvaluator(EvaluatorBase):
    """``Class(model_config, *, threshold=3, is_reasoning_model=False)``; ``credential`` (kept, not used:
    the judge authenticates as its model configuration says) and the peer's tuning knobs are accepted."""

    judged = True
    threshold_only_reported: bool = False
    """The peer reports the threshold but its verdict does not use it (a pass/fail judge)."""

    def __init__(
        self,
        model_config: Any = None,
        *,
        threshold: float = 3,
        credential: Any = None,
        is_reasoning_model: bool = False,
        **kwargs: Any,
    ) -> None:
        if model_config is None:  # required, as in the peer; named by the class the user called
            raise TypeError(
                f"{type(self).__name__}.__init__() missing 1 required positional argument: 'model_config' "
                "(e.g. {'azure_endpoint': ..., 'azure_deployment': ...} or {'model': ..., 'base_url': ...})"
            )
        super().__init__(
            threshold=None if self.threshold_only_reported else threshold,
            model_config=model_config,
            reported_threshold=threshold,
        )
        self.threshold = threshold
        self._credential = credential
        self._is_reasoning_model = is_reasoning_model
        if is_reasoning_model and self._model is not None:  # asked as a reasoning model (no temperature)
            self._model = self._model.model_copy(update={"reasoning": True})

    # The peer's helpers for the tool judges' definitions: private there, but its own tests and
    # subclasses of its evaluators call them.

    @staticmethod
    def _get_built_in_tool_definition(tool_name: str) -> dict[str, Any] | None:
        """A hosted tool's bundled definition (``assay.messages.HOSTED_TOOLS``), as the peer writes it."""
        tool = HOSTED_TOOLS.get(tool_name)
        return None if tool is None else {"type": tool.name, **dataclasses.asdict(tool)}

    def _get_needed_built_in_tool_definitions(self, tool_calls: list[Any]) -> list[dict[str, Any]]:
        needed: list[dict[str, Any]] = []
        for call in tool_calls:
            if isinstance(call, dict) and call.get("type") == "tool_call":
                definition = self._get_built_in_tool_definition(str(call.get("name") or ""))
                if definition is not None and definition not in needed:
                    needed.append(definition)
        return needed

    def _extract_needed_tool_definitions(
        self, tool_calls: list[Any], tool_definitions: list[Any], error_target: ErrorTarget
    ) -> list[Any]:
        """``tool_definitions`` and the hosted tools' definitions the calls need; raises the peer's
        error for a call in another format, one without a name, or one to a tool nobody defines (an
        OpenAPI tool defines the functions it lists)."""
        needed = [*tool_definitions, *self._get_needed_built_in_tool_definitions(tool_calls)]
        try:
            defined = {tool.name for tool in normalize_tool_definitions(needed)}
        except MessageFormatError as exc:
            raise user_error(str(exc), error_target) from None
        for call in tool_calls:
            if not isinstance(call, dict) or call.get("type") != "tool_call":
                raise user_error(
                    f"Unsupported tool call format. Only converter format is supported: {call}", error_target
                )
            if not call.get("name"):
                raise user_error(f"Tool call missing name: {call}", error_target)
            if call["name"] not in defined:
                raise user_error(f"Tool definition for {call['name']} not found", error_target)
        return needed


class CoherenceEvaluator(JudgeEvaluator):
    builtin, key, target, per_turn = "builtin.coherence", "coherence", ErrorTarget.COHERENCE_EVALUATOR, True


class FluencyEvaluator(JudgeEvaluator):
    builtin, key, target, per_turn = "builtin.fluency", "fluency", ErrorTarget.FLUENCY_EVALUATOR, True


class RelevanceEvaluator(JudgeEvaluator):
    builtin, key, target, per_turn = "builtin.relevance", "relevance", ErrorTarget.RELEVANCE_EVALUATOR, True


class GroundednessEvaluator(JudgeEvaluator):
    builtin, key, target, per_turn = "builtin.groundedness", "groundedness", ErrorTarget.GROUNDEDNESS_EVALUATOR, True

    async def _evaluate(self, inputs: dict[str, Any]) -> Result:
        """Given a query and a response but no context, the peer's agent groundedness: an agent's
        answer (its messages) rests on what its tools returned; a bare answer is its own context."""
        query, response = inputs.get("query"), inputs.get("response")
        if inputs.get("context") is None and query is not None and isinstance(response, str | list):
            try:
                context = response if isinstance(response, str) else answer_context(query, response)
            except ItemError as exc:
                raise user_error(f"{type(self).__name__}: {exc}", self.target) from None
            if context:
                inputs = {**inputs, "context": context}
        return await super()._evaluate(inputs)


class RetrievalEvaluator(JudgeEvaluator):
    builtin, key, target, per_turn = "builtin.retrieval", "retrieval", ErrorTarget.RETRIEVAL_EVALUATOR, True
    validates_inputs = False


class SimilarityEvaluator(JudgeEvaluator):
    builtin, key, target = "builtin.similarity", "similarity", ErrorTarget.SIMILARITY_EVALUATOR


class ResponseCompletenessEvaluator(JudgeEvaluator):
    builtin, key = "builtin.response_completeness", "response_completeness"
    target = ErrorTarget.RESPONSE_COMPLETENESS_EVALUATOR
    validates_inputs = False
    _MIN_COMPLETENESS_SCORE, _MAX_COMPLETENESS_SCORE, _DEFAULT_COMPLETENESS_THRESHOLD = 1, 5, 3


class IntentResolutionEvaluator(JudgeEvaluator):
    builtin, key, target = "builtin.intent_resolution", "intent_resolution", ErrorTarget.INTENT_RESOLUTION_EVALUATOR


class TaskAdherenceEvaluator(JudgeEvaluator):
    """Judged pass/fail (1/0); the peer reports threshold 3 beside it, so the output does too."""

    builtin, key, target = "builtin.task_adherence", "task_adherence", ErrorTarget.TASK_ADHERENCE_EVALUATOR
    threshold_only_reported = True


class ToolCallAccuracyEvaluator(JudgeEvaluator):
    builtin, key, target = "builtin.tool_call_accuracy", "tool_call_accuracy", ErrorTarget.TOOL_CALL_ACCURACY_EVALUATOR
    legacy_key = True
    requires_tool_definitions = requires_tool_calls = True
    _MIN_TOOL_CALL_ACCURACY_SCORE, _MAX_TOOL_CALL_ACCURACY_SCORE, _DEFAULT_TOOL_CALL_ACCURACY_SCORE = 1, 5, 3
    _NO_TOOL_CALLS_MESSAGE = NO_TOOL_CALLS
    _NO_TOOL_DEFINITIONS_MESSAGE = "Tool definitions input is required but not provided"
    _TOOL_DEFINITIONS_MISSING_MESSAGE = TOOL_DEFINITIONS_MISSING
    _INVALID_SCORE_MESSAGE = "Tool call accuracy score must be between 1 and 5."


class _ToolCallSuccessEvaluator(JudgeEvaluator):  # noqa: N801 - the peer's (private, exported) name
    """Judged pass/fail: did every tool call succeed."""

    builtin, key = "builtin.tool_call_success", "tool_call_success"
    threshold_only_reported = True


class _ToolOutputUtilizationEvaluator(JudgeEvaluator):  # noqa: N801 - the peer's (private, exported) name
    """Judged pass/fail: did the agent use what its tools returned."""

    builtin, key = "builtin.tool_output_utilization", "tool_output_utilization"
    threshold_only_reported = True


class HarmEvaluator(EvaluatorBase):
    """``Class(credential, azure_ai_project, *, threshold=3)``: 0–7 severity, ``X`` its label."""

    judged, harm, per_turn = True, True, True

    def __init__(
        self,
        credential: Any = None,
        azure_ai_project: Any = None,
        *,
        threshold: float = 3,
        model_config: Any = None,
        evaluate_query: bool = False,
        **kwargs: Any,
    ) -> None:
        _ignored(credential=credential, azure_ai_project=azure_ai_project)
        super().__init__(threshold=threshold, model_config=model_config)


class ViolenceEvaluator(HarmEvaluator):
    builtin, key = "builtin.violence", "violence"


class SexualEvaluator(HarmEvaluator):
    builtin, key = "builtin.sexual", "sexual"


class SelfHarmEvaluator(HarmEvaluator):
    builtin, key = "builtin.self_harm", "self_harm"


class HateUnfairnessEvaluator(HarmEvaluator):
    builtin, key = "builtin.hate_unfairness", "hate_unfairness"


class GroundednessProEvaluator(EvaluatorBase):
    """``GroundednessProEvaluator(credential, azure_ai_project, *, threshold=5)``: the peer asks Azure's
    safety service; here the groundedness judge (1–5) decides, and ``groundedness_pro_label`` is
    whether its score reaches the threshold, as the peer computes it from the service's score."""

    builtin, key, judged = "builtin.groundedness", "groundedness_pro", True

    def __init__(
        self,
        credential: Any = None,
        azure_ai_project: Any = None,
        *,
        threshold: float = 5,
        model_config: Any = None,
        **kwargs: Any,
    ) -> None:
        _ignored(credential=credential, azure_ai_project=azure_ai_project)
        super().__init__(threshold=threshold, model_config=model_config)

    def peer_dict(self, result: Result, inputs: dict[str, Any]) -> dict[str, Any]:
        score = result.score
        return {
            "groundedness_pro_reason": result.reason,
            "groundedness_pro_label": score is not None and self._reported is not None and score >= self._reported,
            "groundedness_pro_score": max(score, 0) if score is not None else score,
        }


class FlagEvaluator(EvaluatorBase):
    """A yes/no safety check (protected material, code vulnerability, ...): ``X`` is the verdict."""

    judged, per_turn = True, True

    def __init__(
        self, credential: Any = None, azure_ai_project: Any = None, *, model_config: Any = None, **kwargs: Any
    ) -> None:
        _ignored(credential=credential, azure_ai_project=azure_ai_project)
        super().__init__(model_config=model_config)


class ProtectedMaterialEvaluator(FlagEvaluator):
    builtin, key, target = "builtin.protected_material", "protected_material", ErrorTarget.PROTECTED_MATERIAL_EVALUATOR


class CodeVulnerabilityEvaluator(FlagEvaluator):
    builtin, key = "builtin.code_vulnerability", "code_vulnerability"


class UngroundedAttributesEvaluator(FlagEvaluator):
    builtin, key = "builtin.ungrounded_attributes", "ungrounded_attributes"


class IndirectAttackEvaluator(FlagEvaluator):
    builtin, key, target = "builtin.indirect_attack", "indirect_attack", ErrorTarget.INDIRECT_ATTACK_EVALUATOR


class _BinaryJudge(JudgeEvaluator):
    """A pass/fail judge whose pass mark is 1 (the peer's agent judges not exported by name)."""

    threshold_only_reported = True
    _NO_TOOL_CALLS_MESSAGE = NO_TOOL_CALLS
    _NO_TOOL_DEFINITIONS_MESSAGE = "Tool definitions must be provided."
    _TOOL_DEFINITIONS_MISSING_MESSAGE = TOOL_DEFINITIONS_MISSING

    def __init__(
        self, model_config: Any = None, *, threshold: float = 1, credential: Any = None, **kwargs: Any
    ) -> None:
        super().__init__(model_config, threshold=threshold, credential=credential, **kwargs)


class _ToolSelectionEvaluator(_BinaryJudge):  # noqa: N801 - the peer's (private) name
    """Judged pass/fail: were the right tools chosen for the query."""

    builtin, key, target = "builtin.tool_selection", "tool_selection", ErrorTarget.TOOL_SELECTION_EVALUATOR
    requires_tool_definitions = requires_tool_calls = True


class _ToolInputAccuracyEvaluator(_BinaryJudge):  # noqa: N801 - the peer's (private) name
    """Judged pass/fail: were the tools called with correct parameters. Its properties add the share of
    parameters passed correctly, as the peer's do (``parameter_extraction_accuracy``, a percentage)."""

    builtin, key, target = (
        "builtin.tool_input_accuracy",
        "tool_input_accuracy",
        ErrorTarget.TOOL_INPUT_ACCURACY_EVALUATOR,
    )
    requires_tool_definitions = True

    def judge_properties(self, judged: dict[str, Any]) -> dict[str, Any]:
        shown = dict(judged)
        if shown:
            shown["parameter_extraction_accuracy"] = self._calculate_parameter_extraction_accuracy(shown)
        return shown

    @staticmethod
    def _calculate_parameter_extraction_accuracy(details: dict[str, Any]) -> float:
        """Correct parameters over all passed, in percent (100 when none were passed)."""
        total, correct = details.get("total_parameters_passed", 0), details.get("correct_parameters_passed", 0)
        if not isinstance(total, (int, float)) or not isinstance(correct, (int, float)) or total <= 0:
            return 100.0
        return round(correct / total * 100, 2)


class _TaskCompletionEvaluator(_BinaryJudge):  # noqa: N801 - the peer's (private) name
    """Judged pass/fail: did the agent complete the task."""

    builtin, key, target = "builtin.task_completion", "task_completion", ErrorTarget.TASK_COMPLETION_EVALUATOR
