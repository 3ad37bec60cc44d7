"""azure-ai-evaluation's ``_model_configurations`` path, which its own samples import from:
``from azure.ai.evaluation._model_configurations import AzureOpenAIModelConfiguration`` keeps
working as ``from assay.azure._model_configurations import ...``."""

from assay.azure.models import (
    AzureAIProject,
    AzureOpenAIModelConfiguration,
    Conversation,
    EvaluationResult,
    EvaluatorConfig,
    Message,
    OpenAIModelConfiguration,
)

__all__ = [
    "AzureAIProject",
    "AzureOpenAIModelConfiguration",
    "Conversation",
    "EvaluationResult",
    "EvaluatorConfig",
    "Message",
    "OpenAIModelConfiguration",
]
