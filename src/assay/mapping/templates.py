"""``{{item.a.b[0].c}}`` / ``{{sample.output_text}}`` templates and the peer's ``${data.x}``.

Rules (DESIGN.md "Templates"):
- only the ``item`` and ``sample`` namespaces; whitespace inside the braces is allowed;
- a value that is exactly one placeholder keeps the type of what it points at;
- placeholders embedded in text render strings as-is, numbers and booleans as JSON text,
  objects and arrays as JSON;
- a path the item lacks is an ``ItemError`` that names the path and the fields that exist.

Templates are compiled once per criterion; rendering an item only walks prepared paths.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from assay.errors import ConfigError, ItemError, MissingInput

PLACEHOLDER = re.compile(r"\{\{\s*(.*?)\s*\}\}")
PEER_REFERENCE = re.compile(r"^\$\{\s*(data|target|run\.outputs)\.(.+?)\s*\}$")
STEP = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")
NAMESPACES = ("item", "sample")


@dataclass(frozen=True, slots=True)
class TemplatePath:
    namespace: str
    steps: tuple[str | int, ...]
    text: str

    def lookup(self, item: dict[str, Any], sample: dict[str, Any] | None) -> Any:
        value: Any = item if self.namespace == "item" else sample
        if value is None:
            raise ItemError(f"{{{{{self.text}}}}}: this run has no sample (no target generated one)")
        for depth, step in enumerate(self.steps):
            try:
                value = value[step]
            except (KeyError, IndexError, TypeError):
                raise MissingInput(self._missing(value, depth)) from None
        return value

    def _missing(self, parent: Any, depth: int) -> str:
        where = ".".join([self.namespace, *(str(s) for s in self.steps[:depth])])
        step = self.steps[depth]
        if isinstance(parent, dict):
            has = ", ".join(sorted(map(str, parent))) or "no fields"
            return f"{{{{{self.text}}}}}: {where} has no field {step!r}; it has {has}"
        if isinstance(parent, list):
            return f"{{{{{self.text}}}}}: {where} has {len(parent)} elements, no index {step}"
        return f"{{{{{self.text}}}}}: {where} is a {type(parent).__name__}, not an object or array"


def parse_path(text: str, where: str) -> TemplatePath:
    text = text.strip()
    namespace, _, rest = text.partition(".")
    head = re.match(r"^(item|sample)(\[|$)", text)
    if namespace not in NAMESPACES and not head:
        raise ConfigError(
            f"{where}: '{{{{{text}}}}}' must start with item. or sample.",
            hint="write {{item.<field>}} for dataset fields or {{sample.output_text}} for generated output",
        )
    if head and not rest:
        namespace, rest = head.group(1), text[len(head.group(1)) :]
    steps: list[str | int] = []
    position = 0
    rest = rest.lstrip(".")
    while position < len(rest):
        match = STEP.match(rest, position)
        if match is None:
            raise ConfigError(f"{where}: cannot read the path '{text}' at {rest[position:]!r}")
        steps.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
        position = match.end()
        if position < len(rest) and rest[position] == ".":
            position += 1
    return TemplatePath(namespace, tuple(steps), text)


def peer_reference(text: str, where: str) -> TemplatePath | None:
    """``${data.x}`` → item.x; ``${target.y}`` and ``${run.outputs.y}`` → sample.y."""
    match = PEER_REFERENCE.match(text.strip())
    if match is None:
        return None
    namespace = "item" if match.group(1) == "data" else "sample"
    return parse_path(f"{namespace}.{match.group(2)}", where)


class Template:
    """A compiled template over any JSON value; ``render`` fills it from an item and sample."""

    __slots__ = ("_kind", "_value", "paths")

    def __init__(self, value: Any, where: str) -> None:
        self.paths: list[TemplatePath] = []
        self._kind, self._value = self._compile(value, where)

    def _compile(self, value: Any, where: str) -> tuple[str, Any]:
        if isinstance(value, str):
            whole = peer_reference(value, where)
            if whole is None:
                match = PLACEHOLDER.fullmatch(value.strip())
                if match and "{{" not in match.group(1):
                    whole = parse_path(match.group(1), where)
            if whole is not None:
                self.paths.append(whole)
                return "whole", whole
            if "{{" not in value:
                return "literal", value
            pieces: list[str | TemplatePath] = []
            last = 0
            for match in PLACEHOLDER.finditer(value):
                pieces.append(value[last : match.start()])
                path = parse_path(match.group(1), where)
                self.paths.append(path)
                pieces.append(path)
                last = match.end()
            pieces.append(value[last:])
            return "text", pieces
        if isinstance(value, dict):
            return "dict", {k: Template(v, f"{where}.{k}") for k, v in value.items()}
        if isinstance(value, list):
            return "list", [Template(v, f"{where}[{i}]") for i, v in enumerate(value)]
        return "literal", value

    @property
    def item_field(self) -> str | None:
        """The field when the template is exactly ``{{item.<field>}}`` (most data mappings are)."""
        if self._kind != "whole":
            return None
        path: TemplatePath = self._value
        steps = path.steps
        return steps[0] if path.namespace == "item" and len(steps) == 1 and isinstance(steps[0], str) else None

    def all_paths(self) -> list[TemplatePath]:
        if self._kind == "dict":
            return [p for t in self._value.values() for p in t.all_paths()]
        if self._kind == "list":
            return [p for t in self._value for p in t.all_paths()]
        return list(self.paths)

    def render(self, item: dict[str, Any], sample: dict[str, Any] | None) -> Any:
        kind, value = self._kind, self._value
        if kind == "whole":
            return value.lookup(item, sample)
        if kind == "literal":
            return value
        if kind == "text":
            return "".join(p if isinstance(p, str) else as_text(p.lookup(item, sample)) for p in value)
        if kind == "dict":
            return {k: t.render(item, sample) for k, t in value.items()}
        return [t.render(item, sample) for t in value]


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)
