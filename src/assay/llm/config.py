"""Model endpoints: from the environment and from a ``models:`` section of the config.

    models:
      judge:                      # the name criteria use: initialization_parameters.model
        model: gpt-4.1-mini       # what the endpoint calls it (a deployment name on Azure)
        base_url: http://localhost:8000/v1      # any OpenAI-compatible server; omit for OpenAI
        api_key_env: MY_KEY       # read the key from this variable (default OPENAI_API_KEY)
        rpm: 600                  # requests-per-minute budget, shared by every call in the process
        tpm: 200000
        price: {input: 0.4, output: 1.6}        # USD per million tokens, for cost estimates
      azure-judge:
        provider: azure
        azure_endpoint: https://x.openai.azure.com
        api_version: 2024-10-21
        model: my-deployment      # no key: an Entra ID token (auth: entra), refreshed as it expires
      foundry-judge:
        project: https://x.services.ai.azure.com/api/projects/p   # a Foundry project's deployment
        deployment: gpt-4.1

With no ``models:`` section, a model named in a criterion is served by the environment's
endpoint: ``AZURE_OPENAI_ENDPOINT`` (+ ``AZURE_OPENAI_API_KEY``, ``OPENAI_API_VERSION``) or
``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import datetime
import os
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.errors import ConfigError, invalid_settings

REASONING_MODEL = re.compile(r"^(o\d|gpt-5)", re.IGNORECASE)
# Models known to take images, and audio, when their entry does not say (``modalities``).
SEES_IMAGES = re.compile(r"^(gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-5|o[134]|claude|gemini)|vision", re.IGNORECASE)
HEARS_AUDIO = re.compile(r"audio|^gpt-realtime", re.IGNORECASE)


class Price(BaseModel):
    input: float = 0.0
    """USD per million prompt tokens."""
    output: float = 0.0
    """USD per million completion tokens."""

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """What these tokens cost, in USD."""
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1e6


LIST_PRICES: dict[str, tuple[float, float]] = {
    "gpt-5": (1.25, 10.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.4),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1-nano": (0.1, 0.4),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4-turbo": (10.0, 30.0),
    "gpt-4": (30.0, 60.0),
    "o1": (15.0, 60.0),
    "o3": (2.0, 8.0),
    "o3-mini": (1.1, 4.4),
    "o4-mini": (1.1, 4.4),
}
"""OpenAI's list prices (USD per million input, output tokens) as promptfoo 0.123.1 carries them: a
target's sample of a model whose entry gives no ``price`` is costed at these, so promptfoo's
``cost`` assertion judges as it does there. A dated snapshot (``gpt-4.1-2025-04-14``) costs what
its model does."""
DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$")


def list_price(model: str) -> Price | None:
    found = LIST_PRICES.get(DATED.sub("", model))
    return None if found is None else Price(input=found[0], output=found[1])


CredentialKind = Literal[
    "default", "azure_cli", "managed_identity", "workload_identity", "environment", "azure_developer_cli"
]
COGNITIVE_SERVICES_SCOPE = "https://cognitiveservices.azure.com/.default"
FOUNDRY_SCOPE = "https://ai.azure.com/.default"


def project_inference_url(project: str) -> str:
    """Where a Foundry project's deployments answer OpenAI requests (``AIProjectClient.get_openai_client``)."""
    return project.rstrip("/") + "/openai/v1"


class ModelConfig(BaseModel):
    """One endpoint and model, with the limits every call to it shares."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """The name criteria refer to."""
    model: str
    """The model (or Azure deployment) the endpoint serves."""
    provider: Literal["openai", "azure"] = "openai"
    api: Literal["chat", "responses", "embeddings", "moderation"] = "chat"
    """Chat completions (any compatible server), the Responses API, an embeddings model (for
    ``text_similarity`` with ``evaluation_metric: cosine``, promptfoo's ``similar``), or a moderation
    model (``/moderations``: promptfoo's ``moderation``)."""
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None
    bearer_token_env: str | None = None
    """Azure: send a bearer token read once from this variable (it is not refreshed: prefer ``auth: entra``)."""
    auth: Literal["key", "entra"] | None = None
    """How calls authenticate: an api-key, or an Entra ID token obtained through azure-identity and
    refreshed before it expires (``assay.llm.entra``). Unset: a key when one is given, else Entra ID
    for an Azure endpoint or a Foundry project."""
    credential: CredentialKind = "default"
    """Which Entra ID credential: ``default`` is azure-identity's ``DefaultAzureCredential`` chain
    (environment, workload identity, managed identity, Azure CLI, PowerShell, developer CLI)."""
    managed_identity_client_id: str | None = None
    """A user-assigned managed identity's client id (``default`` and ``managed_identity``)."""
    tenant_id: str | None = None
    """The tenant to ask tokens of, when the signed-in identity has several."""
    scope: str | None = None
    """The token's scope; default ``https://cognitiveservices.azure.com/.default``, and
    ``https://ai.azure.com/.default`` for a Foundry project."""
    project: str | None = None
    """A Foundry project endpoint (``https://<resource>.services.ai.azure.com/api/projects/<name>``):
    calls go to its ``/openai/v1`` route, as ``AIProjectClient.get_openai_client()`` sends them."""
    deployment: str | None = None
    """The project's model deployment to call (the request's ``model``)."""
    azure_endpoint: str | None = None
    api_version: str | None = None
    json_mode: bool = True
    """Ask for ``response_format: json_object``; turn off for servers that reject it (answers are parsed anyway)."""
    reasoning: bool | None = None
    """Reasoning models get max_completion_tokens and no temperature; guessed from the name if unset."""
    modalities: list[Literal["text", "image", "audio"]] | None = None
    """What the model takes as input; guessed from the name if unset (gpt-4o, gpt-4.1, gpt-5 and the
    o-series see images; audio models hear audio; any other name is taken to read text only)."""
    rpm: int | None = Field(default=None, ge=1)
    tpm: int | None = Field(default=None, ge=1)
    max_concurrency: int = Field(default=64, ge=1)
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=8, ge=0)
    transport: Literal["fast", "sdk"] = "fast"
    """How JSON calls are sent: ``fast`` posts with the URL and headers the openai client builds
    (``assay.llm.http``); ``sdk`` sends each through the client, at several times the client CPU."""
    price: Price | None = None

    @field_validator("api_version", mode="before")
    @classmethod
    def _version_as_written(cls, value: Any) -> Any:
        """YAML reads ``api_version: 2024-10-21`` as a date: it means the string."""
        return value.isoformat() if isinstance(value, datetime.date) else value

    @model_validator(mode="after")
    def _project_route(self) -> ModelConfig:
        if self.project is not None:
            if not self.project.startswith(("https://", "http://")):
                raise ValueError(
                    "expected the project endpoint, https://<resource>.services.ai.azure.com/api/projects/<p>"
                )
            if self.provider != "openai" or self.azure_endpoint:
                raise ValueError("give either project: or provider: azure with azure_endpoint, not both")
            if self.base_url is None:
                self.base_url = project_inference_url(self.project)
        if self.deployment is not None:
            self.model = self.deployment
        return self

    @property
    def uses_entra(self) -> bool:
        """Whether calls carry an Entra ID token (``auth: entra``, or an Azure endpoint or Foundry
        project with no key and no bearer variable)."""
        if self.auth is not None:
            return self.auth == "entra"
        if self.bearer_token_env or (self.provider != "azure" and self.project is None):
            return False
        return self.key() is None

    @property
    def token_scope(self) -> str:
        return self.scope or (FOUNDRY_SCOPE if self.project is not None else COGNITIVE_SERVICES_SCOPE)

    def takes(self, modality: Literal["text", "image", "audio"]) -> bool:
        if self.modalities is not None:
            return modality in self.modalities
        if modality == "image":
            return bool(SEES_IMAGES.search(self.model))
        if modality == "audio":
            return bool(HEARS_AUDIO.search(self.model))
        return True

    @property
    def is_reasoning(self) -> bool:
        return self.reasoning if self.reasoning is not None else bool(REASONING_MODEL.match(self.model))

    @property
    def url(self) -> str:
        """Where calls go: the base URL, else ``OPENAI_BASE_URL`` (which the client reads), else
        OpenAI's; Azure's endpoint for Azure."""
        if self.provider == "azure":
            return self.azure_endpoint or ""
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"

    @property
    def endpoint(self) -> str:
        """Identifies the server in cache keys (never the key itself)."""
        if self.provider == "azure":
            return f"azure:{self.azure_endpoint}"
        return self.base_url or "https://api.openai.com/v1"

    def key(self) -> str | None:
        if self.api_key:
            return self.api_key
        variable = self.api_key_env or ("AZURE_OPENAI_API_KEY" if self.provider == "azure" else "OPENAI_API_KEY")
        return os.environ.get(variable)


def from_environment(name: str) -> ModelConfig:
    """A model served by the endpoint the environment describes."""
    if os.environ.get("AZURE_OPENAI_ENDPOINT"):
        return ModelConfig(
            name=name,
            model=name,
            provider="azure",
            azure_endpoint=os.environ["AZURE_OPENAI_ENDPOINT"],
            api_version=os.environ.get("OPENAI_API_VERSION", "2024-10-21"),
        )
    return ModelConfig(name=name, model=name, base_url=os.environ.get("OPENAI_BASE_URL"))


def parse_models(section: Any, where: str = "models") -> list[ModelConfig]:
    if section is None:
        return []
    if not isinstance(section, dict):
        raise ConfigError(f"{where}: expected a mapping of model name to settings")
    configs = []
    for name, raw in section.items():
        if name == "__line__":  # left by the config loader's line tracking
            continue
        if raw is not None and not isinstance(raw, dict):
            raise ConfigError(f"{where}.{name}: expected settings such as {{model: gpt-4.1-mini, base_url: ...}}")
        settings = {key: value for key, value in (raw or {}).items() if key != "__line__"}
        settings.setdefault("model", settings.get("deployment") or name)
        try:
            configs.append(ModelConfig(name=str(name), **settings))
        except ValidationError as exc:
            raise invalid_settings(f"{where}.{name}", exc) from None
    return configs
