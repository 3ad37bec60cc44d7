"""azure-ai-evaluation's public surface on assay: change the import, keep the code.

    from assay.azure import F1ScoreEvaluator, CoherenceEvaluator, evaluate   # was: from azure.ai.evaluation

Why a module of its own rather than names on ``assay``: the peer's names (``evaluate`` with its
arguments, ``RougeType``, ``Message``, ...) would shadow or blur assay's own API, and its output
keys (``f1_score_score``) are the peer's, kept for its users, not assay's vocabulary. Every class
is a thin adapter over assay's catalog: the same numbers as ``assay run``.
"""

from assay.azure.composite import ContentSafetyEvaluator, QAEvaluator
from assay.azure.exceptions import ErrorBlame, ErrorCategory, ErrorTarget, EvaluationException
from assay.azure.graders import (
    AzureOpenAIGrader,
    AzureOpenAILabelGrader,
    AzureOpenAIPythonGrader,
    AzureOpenAIScoreModelGrader,
    AzureOpenAIStringCheckGrader,
    AzureOpenAITextSimilarityGrader,
)
from assay.azure.judges import (
    CodeVulnerabilityEvaluator,
    CoherenceEvaluator,
    FluencyEvaluator,
    GroundednessEvaluator,
    GroundednessProEvaluator,
    HateUnfairnessEvaluator,
    IndirectAttackEvaluator,
    IntentResolutionEvaluator,
    ProtectedMaterialEvaluator,
    RelevanceEvaluator,
    ResponseCompletenessEvaluator,
    RetrievalEvaluator,
    SelfHarmEvaluator,
    SexualEvaluator,
    SimilarityEvaluator,
    TaskAdherenceEvaluator,
    ToolCallAccuracyEvaluator,
    UngroundedAttributesEvaluator,
    ViolenceEvaluator,
    _ToolCallSuccessEvaluator,
    _ToolOutputUtilizationEvaluator,
)
from assay.azure.models import (
    AzureAIProject,
    AzureOpenAIModelConfiguration,
    Conversation,
    EvaluationResult,
    EvaluatorConfig,
    Message,
    OpenAIModelConfiguration,
)
from assay.azure.nlp import (
    BleuScoreEvaluator,
    DocumentRetrievalEvaluator,
    F1ScoreEvaluator,
    GleuScoreEvaluator,
    MeteorScoreEvaluator,
    RougeScoreEvaluator,
    RougeType,
)
from assay.azure.run import evaluate

__all__ = [
    "AzureAIProject",
    "AzureOpenAIGrader",
    "AzureOpenAILabelGrader",
    "AzureOpenAIModelConfiguration",
    "AzureOpenAIPythonGrader",
    "AzureOpenAIScoreModelGrader",
    "AzureOpenAIStringCheckGrader",
    "AzureOpenAITextSimilarityGrader",
    "BleuScoreEvaluator",
    "CodeVulnerabilityEvaluator",
    "CoherenceEvaluator",
    "ContentSafetyEvaluator",
    "Conversation",
    "DocumentRetrievalEvaluator",
    "ErrorBlame",
    "ErrorCategory",
    "ErrorTarget",
    "EvaluationException",
    "EvaluationResult",
    "EvaluatorConfig",
    "F1ScoreEvaluator",
    "FluencyEvaluator",
    "GleuScoreEvaluator",
    "GroundednessEvaluator",
    "GroundednessProEvaluator",
    "HateUnfairnessEvaluator",
    "IndirectAttackEvaluator",
    "IntentResolutionEvaluator",
    "Message",
    "MeteorScoreEvaluator",
    "OpenAIModelConfiguration",
    "ProtectedMaterialEvaluator",
    "QAEvaluator",
    "RelevanceEvaluator",
    "ResponseCompletenessEvaluator",
    "RetrievalEvaluator",
    "RougeScoreEvaluator",
    "RougeType",
    "SelfHarmEvaluator",
    "SexualEvaluator",
    "SimilarityEvaluator",
    "TaskAdherenceEvaluator",
    "ToolCallAccuracyEvaluator",
    "UngroundedAttributesEvaluator",
    "ViolenceEvaluator",
    "_ToolCallSuccessEvaluator",
    "_ToolOutputUtilizationEvaluator",
    "evaluate",
]
