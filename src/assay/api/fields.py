"""Request fields the OpenAI spec bounds, checked as it describes them: ``metadata`` (at most 16
string pairs, keys up to 64 characters, values up to 512) and a file's ``purpose``."""

from __future__ import annotations

from typing import Any, cast

from assay.errors import ConfigError, UserError
from assay.llm import CacheMode

MAX_METADATA_PAIRS = 16
MAX_METADATA_KEY = 64
MAX_METADATA_VALUE = 512
FILE_PURPOSES = ("assistants", "batch", "fine-tune", "vision", "user_data", "evals")
METADATA_HINT = 'metadata is an object of up to 16 string pairs, e.g. {"team": "search", "stage": "ci"}'


def metadata(value: Any, where: str = "metadata") -> dict[str, str] | None:
    """``value`` if it is valid metadata (``None`` stays ``None``), else a 400 naming the pair."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise UserError(f"{where}: expected an object, got {type(value).__name__}", hint=METADATA_HINT)
    if len(value) > MAX_METADATA_PAIRS:
        raise UserError(f"{where}: {len(value)} pairs, at most {MAX_METADATA_PAIRS} are allowed", hint=METADATA_HINT)
    for key, item in value.items():
        if len(key) > MAX_METADATA_KEY:
            raise UserError(f"{where}: key '{key[:64]}...' is {len(key)} characters, at most {MAX_METADATA_KEY}")
        if not isinstance(item, str):
            raise UserError(f"{where}.{key}: expected a string, got {type(item).__name__}", hint=METADATA_HINT)
        if len(item) > MAX_METADATA_VALUE:
            raise UserError(f"{where}.{key}: the value is {len(item)} characters, at most {MAX_METADATA_VALUE}")
    return value


CACHE_KEY = "assay.cache"
CACHE_MODES = ("use", "replay", "off", "refresh")


def cache_mode(metadata: dict[str, str] | None) -> CacheMode | None:
    """A run's own model-call cache mode, from its metadata key ``assay.cache`` (else the server's)."""
    mode = (metadata or {}).get(CACHE_KEY)
    if mode is not None and mode not in CACHE_MODES:
        hint = f"use one of {', '.join(CACHE_MODES)}"
        raise UserError(f"metadata.{CACHE_KEY}: '{mode}' is not a cache mode", hint=hint)
    return cast(CacheMode | None, mode)


def purpose(value: str) -> str:
    if value not in FILE_PURPOSES:
        raise UserError(f"purpose: '{value}' is not a file purpose", hint=f"use one of {', '.join(FILE_PURPOSES)}")
    return value


def text(value: Any, where: str, hint: str | None = None) -> str:
    """``value`` if it is a string with more than white space in it, else a 400 naming ``where``."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: expected a non-empty string", hint=hint)
    return value


def name(value: Any, where: str = "name") -> str | None:
    if value is not None and not isinstance(value, str):
        raise UserError(f"{where}: expected a string, got {type(value).__name__}")
    return value
