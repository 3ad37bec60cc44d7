"""The evaluator catalog: a plain dict of name → version → spec, filled by plugins.

Built-ins register through the ``assay`` entry-point group exactly as third-party plugins do:
an entry point names a function ``register(catalog)`` that calls ``catalog.add(spec)``.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, Protocol

from assay.errors import ConfigError, UnknownEvaluatorError
from assay.evaluators.base import EvaluatorSpec
from assay.store.base import DEFAULT_PROJECT

ENTRY_POINT_GROUP = "assay"


class Catalog:
    def __init__(self) -> None:
        self._entries: dict[str, dict[str, EvaluatorSpec]] = {}

    def add(self, spec: EvaluatorSpec, *, replace: bool = False) -> None:
        """``replace``: the spec stands in for a registered one of the same name and version."""
        versions = self._entries.setdefault(spec.name, {})
        if spec.version in versions and not replace:
            raise ConfigError(f"evaluator {spec.name}@{spec.version} is registered twice")
        versions[spec.version] = spec

    def names(self) -> list[str]:
        return sorted(self._entries)

    def specs(self) -> list[EvaluatorSpec]:
        """The latest version of every evaluator, by name."""
        return [self.get(name) for name in self.names()]

    def versions(self, name: str) -> list[EvaluatorSpec]:
        versions = self._entries.get(self.canonical(name), {})
        return [versions[v] for v in sorted(versions, key=_version_key)]

    def canonical(self, name: str) -> str:
        """``f1_score`` and ``builtin.f1_score`` name the same built-in."""
        if name in self._entries:
            return name
        if f"builtin.{name}" in self._entries:
            return f"builtin.{name}"
        return name

    def get(self, name: str, version: str | None = None) -> EvaluatorSpec:
        """Look up ``name``, ``name@version`` or ``name`` with an explicit version (latest if none)."""
        if version is None and "@" in name:
            name, version = name.rsplit("@", 1)
        versions = self._entries.get(self.canonical(name))
        if not versions:
            close = difflib.get_close_matches(name, self.names(), n=3)
            hint = f"did you mean {', '.join(close)}?" if close else "`assay evaluators list` shows them all"
            raise UnknownEvaluatorError(f"unknown evaluator {name!r}", hint=hint)
        if version is None:
            return versions[max(versions, key=_version_key)]
        if str(version) not in versions:
            have = ", ".join(sorted(versions, key=_version_key))
            raise UnknownEvaluatorError(f"evaluator {name!r} has no version {version!r} (versions: {have})")
        return versions[str(version)]

    def __contains__(self, name: str) -> bool:
        return self.canonical(name) in self._entries


def _version_key(version: str) -> tuple[int, ...] | tuple[float, str]:
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        return (float("inf"), version)


class EvaluatorRecords(Protocol):
    """Where custom evaluators are kept (the store)."""

    def list_evaluators(self, project: str = ...) -> list[dict[str, Any]]: ...


@functools.cache
def _plugins() -> tuple[Callable[[Catalog], None], ...]:
    """Each installed plugin's registrar, found once per process: scanning the installed packages'
    entry points took 3–5 ms, paid by every run and every catalog request."""
    return tuple(entry_point.load() for entry_point in entry_points(group=ENTRY_POINT_GROUP))


def load_catalog(store: EvaluatorRecords | None = None, project: str = DEFAULT_PROJECT) -> Catalog:
    """A fresh catalog: every installed plugin (built-ins included), then the custom evaluators that
    ``project`` registered in the store (another project's are not there, as with any object)."""
    catalog = Catalog()
    for register in _plugins():
        register(catalog)
    if store is not None:
        from assay.evaluators.custom import custom_spec

        for record in store.list_evaluators(project):
            where = f"{record['name']}@{record['version']}"
            spec = custom_spec(record["kind"], record["name"], str(record["version"]), record["content"], where)
            catalog.add(spec.model_copy(update={"details": record.get("details") or {}}))
    return catalog
