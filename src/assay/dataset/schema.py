"""The eval's ``item_schema``: checked for every item, and asked which fields it can provide."""

from __future__ import annotations

from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError

from assay.errors import ConfigError


class ItemSchema:
    """A compiled JSON Schema for items; ``None`` schema accepts any object."""

    def __init__(self, schema: dict[str, Any] | None, *, where: str = "item_schema") -> None:
        self.schema = schema
        self._validator: jsonschema.protocols.Validator | None = None
        if schema is not None:
            if not isinstance(schema, dict):
                raise ConfigError(f"{where}: must be a JSON Schema object, got {type(schema).__name__}")
            cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            try:
                cls.check_schema(schema)
            except jsonschema.SchemaError as exc:
                path = "/".join(str(p) for p in exc.absolute_path) or "(root)"
                raise ConfigError(
                    f"{where}: not a valid JSON Schema at {path}: {exc.message}",
                    hint="see https://json-schema.org/understanding-json-schema",
                ) from None
            self._validator = cls(schema)

    @property
    def checks_items(self) -> bool:
        """Whether the schema can find anything wrong with an item."""
        return self._validator is not None

    def problems(self, item: dict[str, Any]) -> list[tuple[str | None, str]]:
        """Every way the item breaks the schema, as ``(field, message)``."""
        if self._validator is None:
            return []
        return [_describe(error) for error in self._validator.iter_errors(item)]

    def known_fields(self) -> set[str] | None:
        """Top-level fields the schema declares, or ``None`` when it does not restrict them."""
        if self.schema is None:
            return None
        properties = self.schema.get("properties")
        if not isinstance(properties, dict):
            return None
        return set(properties)


def _describe(error: ValidationError) -> tuple[str | None, str]:
    field = ".".join(str(part) for part in error.absolute_path) or None
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        name = f"{field}.{missing}" if field else missing
        return name, f"'{name}' is required by the item_schema"
    if error.validator == "additionalProperties" and field is None:
        return None, f"{error.message} (the item_schema sets additionalProperties: false)"
    where = f"'{field}'" if field else "the item"
    return field, f"{where}: {error.message}"
