"""azure-ai-evaluation's exception and its classifiers, so ``except EvaluationException`` and the
checks users make on ``category`` / ``blame`` / ``target`` keep working."""

from __future__ import annotations

from enum import Enum


class ErrorCategory(Enum):
    INVALID_VALUE = "INVALID VALUE"
    UNKNOWN_FIELD = "UNKNOWN FIELD"
    MISSING_FIELD = "MISSING FIELD"
    FILE_OR_FOLDER_NOT_FOUND = "FILE OR FOLDER NOT FOUND"
    RESOURCE_NOT_FOUND = "RESOURCE NOT FOUND"
    FAILED_EXECUTION = "FAILED_EXECUTION"
    SERVICE_UNAVAILABLE = "SERVICE UNAVAILABLE"
    MISSING_PACKAGE = "MISSING PACKAGE"
    FAILED_REMOTE_TRACKING = "FAILED REMOTE TRACKING"
    PROJECT_ACCESS_ERROR = "PROJECT ACCESS ERROR"
    UNKNOWN = "UNKNOWN"
    UPLOAD_ERROR = "UPLOAD ERROR"
    NOT_APPLICABLE = "NOT APPLICABLE"


class ErrorBlame(Enum):
    USER_ERROR = "UserError"
    SYSTEM_ERROR = "SystemError"
    UNKNOWN = "Unknown"


class ErrorTarget(Enum):
    EVAL_RUN = "EvalRun"
    CODE_CLIENT = "CodeClient"
    RAI_CLIENT = "RAIClient"
    COHERENCE_EVALUATOR = "CoherenceEvaluator"
    CONTENT_SAFETY_CHAT_EVALUATOR = "ContentSafetyEvaluator"
    ECI_EVALUATOR = "ECIEvaluator"
    F1_EVALUATOR = "F1Evaluator"
    GROUNDEDNESS_EVALUATOR = "GroundednessEvaluator"
    PROTECTED_MATERIAL_EVALUATOR = "ProtectedMaterialEvaluator"
    RELEVANCE_EVALUATOR = "RelevanceEvaluator"
    SIMILARITY_EVALUATOR = "SimilarityEvaluator"
    FLUENCY_EVALUATOR = "FluencyEvaluator"
    RETRIEVAL_EVALUATOR = "RetrievalEvaluator"
    TASK_ADHERENCE_EVALUATOR = "TaskAdherenceEvaluator"
    INDIRECT_ATTACK_EVALUATOR = "IndirectAttackEvaluator"
    INDIRECT_ATTACK_SIMULATOR = "IndirectAttackSimulator"
    ADVERSARIAL_SIMULATOR = "AdversarialSimulator"
    DIRECT_ATTACK_SIMULATOR = "DirectAttackSimulator"
    EVALUATE = "Evaluate"
    CALLBACK_CONVERSATION_BOT = "CallbackConversationBot"
    MODELS = "Models"
    UNKNOWN = "Unknown"
    CONVERSATION = "Conversation"
    TOOL_CALL_ACCURACY_EVALUATOR = "ToolCallAccuracyEvaluator"
    RED_TEAM = "RedTeam"
    AOAI_GRADER = "AoaiGrader"
    CONVERSATION_HISTORY_PARSING = "_get_conversation_history"
    TOOL_DEFINITIONS_PARSING = "_extract_needed_tool_definitions"
    ROUGE_EVALUATOR = "RougeEvaluator"
    INTENT_RESOLUTION_EVALUATOR = "IntentResolutionEvaluator"
    RESPONSE_COMPLETENESS_EVALUATOR = "ResponseCompletenessEvaluator"
    COMPLETENESS_EVALUATOR = "CompletenessEvaluator"
    TASK_NAVIGATION_EFFICIENCY_EVALUATOR = "_TaskNavigationEfficiencyEvaluator"
    TOOL_CALL_SUCCESS_EVALUATOR = "_ToolCallSuccessEvaluator"
    TASK_COMPLETION_EVALUATOR = "_TaskCompletionEvaluator"
    TOOL_SELECTION_EVALUATOR = "_ToolSelectionEvaluator"
    TOOL_INPUT_ACCURACY_EVALUATOR = "_ToolInputAccuracyEvaluator"
    TOOL_OUTPUT_UTILIZATION_EVALUATOR = "ToolOutputUtilizationEvaluator"
    QA_EVALUATOR = "QAEvaluator"
    DOCUMENT_RETRIEVAL_EVALUATOR = "DocumentRetrievalEvaluator"
    QUALITY_GRADER_EVALUATOR = "QualityGraderEvaluator"
    CUSTOMER_SATISFACTION_EVALUATOR = "CustomerSatisfactionEvaluator"
    DEFLECTION_RATE_EVALUATOR = "DeflectionRateEvaluator"
    REGEX_MATCH_EVALUATOR = "RegexMatchEvaluator"


class EvaluationException(Exception):
    """Raised for bad input or a failed evaluation; the message reads ``(UserError) <what is wrong>``
    as the peer's does, the classifiers are attributes."""

    def __init__(
        self,
        message: str,
        *,
        internal_message: str | None = None,
        target: ErrorTarget = ErrorTarget.UNKNOWN,
        category: ErrorCategory = ErrorCategory.UNKNOWN,
        blame: ErrorBlame = ErrorBlame.UNKNOWN,
        tsg_link: str | None = None,
    ) -> None:
        self.message = message
        self.internal_message = internal_message or message
        self.target, self.category, self.blame, self.tsg_link = target, category, blame, tsg_link
        super().__init__(message)

    def __str__(self) -> str:
        return f"({self.blame.value}) {self.message}"


def user_error(
    message: str, target: ErrorTarget = ErrorTarget.UNKNOWN, category: ErrorCategory = ErrorCategory.INVALID_VALUE
) -> EvaluationException:
    return EvaluationException(message, target=target, category=category, blame=ErrorBlame.USER_ERROR)
