"""The eval's ``item_schema``: checked for every item, and asked which fields it can provide."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError

from assay.errors import ConfigError
from assay.regexes import UnsupportedPattern, compiled


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Any:
    if validator.is_type(instance, "string") and not compiled(pattern)(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: dict[str, Any]) -> Any:
    if validator.is_type(instance, "object"):
        for pattern, subschema in patterns.items():
            for key, value in instance.items():
                if compiled(pattern)(key):
                    yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, allowed: Any, instance: Any, schema: dict[str, Any]) -> Any:
    if not validator.is_type(instance, "object"):
        return
    named, patterns = schema.get("properties", {}), list(schema.get("patternProperties", {}))
    extras = [k for k in instance if k not in named and not any(compiled(p)(k) for p in patterns)]
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        yield ValidationError(
            f"Additional properties are not allowed ({', '.join(map(repr, sorted(extras)))} unexpected)"
        )


def linear_time(cls: Any) -> Any:
    """``cls`` with its regex keywords (``pattern``, ``patternProperties``) matched by RE2
    (``assay.regexes``): schemas arrive over the API, and items are matched against them."""
    keywords = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    }
    return jsonschema.validators.extend(  # type: ignore[no-untyped-call]
        cls, {k: v for k, v in keywords.items() if k in cls.VALIDATORS}
    )


def check_patterns(schema: Any, where: str) -> None:
    """Refuse, before any item, a schema pattern RE2 cannot run (naming where it is)."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "pattern" and isinstance(value, str):
                _readable(value, f"{where}.pattern")
            elif key == "patternProperties" and isinstance(value, dict):
                for pattern in value:
                    _readable(str(pattern), f"{where}.patternProperties")
            check_patterns(value, f"{where}.{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            check_patterns(value, f"{where}[{index}]")


def _readable(pattern: str, where: str) -> None:
    try:
        compiled(pattern)
    except UnsupportedPattern as exc:
        raise ConfigError(f"{where}: {exc.message}", hint=exc.hint) from None
    except re.error as exc:
        raise ConfigError(f"{where}: {pattern[:200]!r} is not a regular expression ({exc})") from None


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
            except RecursionError:
                raise ConfigError(f"{where}: the schema is nested too deeply") from None
            check_patterns(schema, where)
            self._validator = linear_time(cls)(schema)

    @property
    def checks_items(self) -> bool:
        """Whether the schema can find anything wrong with an item."""
        return self._validator is not None

    def problems(self, item: dict[str, Any]) -> list[tuple[str | None, str]]:
        """Every way the item breaks the schema, as ``(field, message)``. A top-level field the
        schema does not require may be ``null``: Foundry reads it as absent (its samples write
        ``"query": null`` for an optional input), so it is checked as absent."""
        if self._validator is None:
            return []
        if None in item.values():
            required = self.schema.get("required") if isinstance(self.schema, dict) else None
            needed = set(required) if isinstance(required, list) else set()
            item = {key: value for key, value in item.items() if value is not None or key in needed}
        return [_describe(error) for error in self._validator.iter_errors(item)]

    def known_fields(self) -> set[str] | None:
        """Top-level fields the schema declares, or ``None`` when it does not restrict them."""
        if self.schema is None:
            return None
        properties = self.schema.get("properties")
        if not isinstance(properties, dict):
            return None
        return set(properties)

    def list_fields(self) -> frozenset[str]:
        """Top-level fields the schema lets hold a list: typed ``array``, or not typed at all."""
        properties = self.schema.get("properties") if self.schema is not None else None
        if not isinstance(properties, dict):
            return frozenset()
        return frozenset(name for name, field in properties.items() if _may_be_array(field))


def _may_be_array(field: Any) -> bool:
    if not isinstance(field, dict):
        return field is True  # JSON Schema's ``true`` allows anything
    kind = field.get("type")
    return kind is None or kind == "array" or (isinstance(kind, list) and "array" in kind)


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
