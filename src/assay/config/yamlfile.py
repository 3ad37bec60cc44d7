"""YAML read safely and within bounds: PyYAML's safe loader, with aliases and size capped.

Anchors and aliases are fine in a config (``<<: *defaults``), but a few lines of nested aliases
can stand for billions of nodes ("billion laughs"): every walk over the loaded value then takes
minutes and all memory. More than ``MAX_ALIASES`` aliases, or a value that expands to more than
``MAX_NODES`` nodes, is refused with the line where the limit was passed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from assay.errors import ConfigError

MAX_ALIASES = 100
MAX_NODES = 200_000


class BoundedLoader(yaml.SafeLoader):
    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.aliases = 0
        self.weights: dict[int, int] = {}
        """Each composed node's size once every alias in it is expanded, by ``id``."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise _limit(f"more than {MAX_ALIASES} aliases (*name)", event)
        node: Any = super().compose_node(parent, index)
        if id(node) not in self.weights:
            weight: int = 1 + sum(self.weights.get(id(child), 1) for child in _children(node))
            self.weights[id(node)] = weight
            if self.weights[id(node)] > MAX_NODES:
                raise _limit(f"the aliases here expand to more than {MAX_NODES} values", event)
        return node


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _limit(problem: str, event: Any) -> yaml.MarkedYAMLError:
    return yaml.MarkedYAMLError(None, None, problem, event.start_mark)


def safe_load(text: str, where: str) -> Any:
    """``text`` as YAML; a syntax error or a passed limit is a ConfigError naming ``where`` and the line."""
    try:
        return yaml.load(text, Loader=BoundedLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = f":{mark.line + 1}" if mark else ""
        raise ConfigError(f"{where}{line}: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not valid YAML ({exc})") from None


class LinedList(list[Any]):
    """A YAML sequence that remembers the line of each entry."""

    lines: list[int]


class LineLoader(BoundedLoader):
    """Keeps where each mapping starts (key ``__line__``) and where each list entry starts."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping = super().construct_mapping(node, deep=deep)
        mapping["__line__"] = node.start_mark.line + 1
        return mapping


def _lined_sequence(loader: LineLoader, node: yaml.SequenceNode) -> LinedList:
    sequence = LinedList(loader.construct_sequence(node, deep=True))
    sequence.lines = [child.start_mark.line + 1 for child in node.value]
    return sequence


LineLoader.add_constructor("tag:yaml.org,2002:seq", _lined_sequence)


def strip_lines(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_lines(v) for k, v in value.items() if k != "__line__"}
    if isinstance(value, list):
        return [strip_lines(v) for v in value]
    return value


def load_lined(path: Path) -> Any:
    """A YAML file read with ``LineLoader``; a file that is not UTF-8 or not YAML is a ConfigError
    naming the file and the line."""
    try:
        return yaml.load(path.read_text(encoding="utf-8-sig"), Loader=LineLoader)  # noqa: S506 - SafeLoader subclass
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})", hint="save as UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise ConfigError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
