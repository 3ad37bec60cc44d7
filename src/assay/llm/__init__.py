"""The model layer: one facade over any OpenAI-compatible endpoint (OpenAI, Azure OpenAI, vLLM, ...)."""

from assay.llm.cache import CallCache
from assay.llm.config import ModelConfig, Price, parse_models
from assay.llm.model import CacheMode, Completion, ContentFiltered, Model, ModelError, Usage
from assay.llm.registry import ModelRegistry

__all__ = [
    "ContentFiltered",
    "CacheMode",
    "CallCache",
    "Completion",
    "Model",
    "ModelConfig",
    "ModelError",
    "ModelRegistry",
    "Price",
    "Usage",
    "parse_models",
]
