"""azure-ai-evaluation's model configuration types (plain dicts, as the peer's TypedDicts are) and
how one becomes the model an assay judge calls."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from assay.azure.exceptions import ErrorCategory, ErrorTarget, user_error
from assay.llm import ModelConfig


class AzureOpenAIModelConfiguration(TypedDict):
    type: NotRequired[Literal["azure_openai"]]
    azure_deployment: str
    azure_endpoint: str
    api_key: NotRequired[str]
    api_version: NotRequired[str]


class OpenAIModelConfiguration(TypedDict):
    type: NotRequired[Literal["openai"]]
    api_key: str
    model: str
    base_url: NotRequired[str]
    organization: NotRequired[str]


class AzureAIProject(TypedDict):
    """Accepted where the peer takes it; assay judges safety locally and reports nowhere."""

    subscription_id: str
    resource_group_name: str
    project_name: str


class Message(TypedDict):
    role: str
    content: str | list[dict[str, Any]]
    context: NotRequired[str | dict[str, Any]]


class Conversation(TypedDict):
    """``conversation=`` of a class that evaluates turn by turn."""

    messages: list[Message] | list[dict[str, Any]]
    context: NotRequired[str | dict[str, Any]]


class EvaluatorConfig(TypedDict, total=False):
    """One alias's entry in ``evaluate(evaluator_config=...)``."""

    column_mapping: dict[str, str]


class EvaluationResult(TypedDict):
    """What ``evaluate()`` returns."""

    metrics: dict[str, float]
    studio_url: str | None
    rows: list[dict[str, Any]]


JUDGE = "judge"
"""The name the adapted evaluator's criterion calls its model by."""


def model_from(config: Any, target: ErrorTarget = ErrorTarget.UNKNOWN) -> ModelConfig:
    """The judge model a peer ``model_config`` describes: Azure when it names an endpoint."""
    if not isinstance(config, dict) or not config:
        raise user_error("Model config validation failed.", target, ErrorCategory.MISSING_FIELD)
    kind = config.get("type") or ("azure_openai" if config.get("azure_endpoint") else "openai")
    if kind == "azure_openai":
        deployment, endpoint = config.get("azure_deployment"), config.get("azure_endpoint")
        if not deployment or not endpoint:
            raise user_error(
                "Model config validation failed: azure_deployment and azure_endpoint are required.",
                target,
                ErrorCategory.MISSING_FIELD,
            )
        version = config.get("api_version") or "2024-10-21"
        return ModelConfig(
            name=JUDGE,
            model=str(deployment),
            provider="azure",
            azure_endpoint=str(endpoint),
            api_key=config.get("api_key"),
            api_version=version,
        )
    if kind != "openai":
        raise user_error(
            f"{kind!r} is not a supported connection type. Valid values are [azure_openai, openai]", target
        )
    if not config.get("model"):
        raise user_error("Model config validation failed: model is required.", target, ErrorCategory.MISSING_FIELD)
    return ModelConfig(
        name=JUDGE, model=str(config["model"]), base_url=config.get("base_url"), api_key=config.get("api_key")
    )
