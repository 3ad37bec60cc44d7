"""A criterion's ``data_mapping``: evaluator input name → template, checked before a run."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from assay.errors import ConfigError, ItemError
from assay.mapping.templates import Template

_ABSENT = object()

# Inputs a run with a target fills from the generated sample when the item does not have them
# (an agent's calls and its tool descriptions reach the tool evaluators this way).
SAMPLE_DEFAULTS = {
    "response": "{{sample.output_text}}",
    "tool_calls": "{{sample.output_tools}}",
    "tool_definitions": "{{sample.tool_definitions}}",
}


class DataMapping:
    """Compiled templates for one criterion; ``resolve`` gives the evaluator's inputs for an item."""

    def __init__(
        self,
        mapping: dict[str, Any],
        *,
        where: str,
        lenient: bool = False,
        defaults: DataMapping | None = None,
        optional: Iterable[str] = (),
    ) -> None:
        if not isinstance(mapping, dict):
            raise ConfigError(f"{where}: data_mapping must be an object of input name to template")
        self.where = where
        self.source = dict(mapping)
        self.lenient = lenient
        """A default mapping leaves out inputs the item lacks; an explicit one fails the item."""
        self.templates = {name: Template(value, f"{where}.{name}") for name, value in mapping.items()}
        self.optional: set[str] = set(self.templates) if lenient else set(optional) & set(self.templates)
        """Inputs left out when the item lacks them or holds ``null`` there: every input of a
        default mapping, and the evaluator's optional inputs in an explicit one (Foundry's samples map
        ``{{item.tool_definitions}}`` over rows where only some have it)."""
        if defaults is not None:
            # A partial mapping keeps the same-name defaults for the inputs it leaves out, leniently
            # (as azure-ai-evaluation's column_mapping does): mapping one input drops no other.
            for name, template in defaults.templates.items():
                if name not in self.templates:
                    self.templates[name] = template
                    self.optional.add(name)
        fields = [(name, template.item_field, name in self.optional) for name, template in self.templates.items()]
        self._item_fields: list[tuple[str, str, bool]] | None = (
            [(name, field, optional) for name, field, optional in fields if field is not None]
            if all(field is not None for _, field, _ in fields)
            else None
        )
        """(input, item field, optional) of every input, when each maps one of the item's own fields:
        those are read with no template walked (``resolve`` runs once per item and criterion)."""

    def resolve(self, item: dict[str, Any], sample: dict[str, Any] | None) -> dict[str, Any]:
        if self._item_fields is not None:
            read: dict[str, Any] = {}
            for name, field, optional in self._item_fields:
                value = item.get(field, _ABSENT)
                if value is _ABSENT or (optional and value is None):
                    if not optional:  # the template's error names the field and those the item has
                        return self._rendered(item, sample)
                    continue
                read[name] = value
            return read
        return self._rendered(item, sample)

    def _rendered(self, item: dict[str, Any], sample: dict[str, Any] | None) -> dict[str, Any]:
        inputs = {}
        for name, template in self.templates.items():
            if name not in self.optional:
                inputs[name] = template.render(item, sample)
                continue
            try:
                value = template.render(item, sample)
            except ItemError:
                continue
            if value is not None:
                inputs[name] = value
        return inputs

    def check_fields(self, criterion: str, item_fields: set[str] | None, has_sample: bool) -> None:
        """Refuse templates that no item can satisfy, naming the criterion, template and fields."""
        for name, template in self.templates.items():
            for path in template.all_paths():
                if path.namespace == "sample":
                    if not has_sample:
                        raise ConfigError(
                            f"testing criterion {criterion!r}: {name} maps to '{{{{{path.text}}}}}' "
                            "but this run has no target to generate a sample",
                            hint="map it to an item field, or give the run a target",
                        )
                    continue
                if item_fields is None or not path.steps:
                    continue
                head = path.steps[0]
                if isinstance(head, str) and head not in item_fields:
                    have = ", ".join(sorted(item_fields)) or "none"
                    raise ConfigError(
                        f"testing criterion {criterion!r}: {name} maps to '{{{{{path.text}}}}}' "
                        f"but items have no field {head!r} (fields: {have})",
                        hint="fix the data_mapping or the dataset's column names",
                    )


def default_mapping(
    inputs: Iterable[str], item_fields: set[str] | None, has_sample: bool, *, where: str
) -> DataMapping:
    """Seed 000's "standard columns": each input takes the item field of the same name."""
    mapping: dict[str, str] = {}
    for name in inputs:
        if item_fields is None or name in item_fields:
            mapping[name] = f"{{{{item.{name}}}}}"
        elif has_sample and name in SAMPLE_DEFAULTS:
            mapping[name] = SAMPLE_DEFAULTS[name]
    return DataMapping(mapping, where=where, lenient=True)
