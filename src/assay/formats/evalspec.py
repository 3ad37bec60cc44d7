"""Evals as code, azd's way: ``evals/azure.eval.yaml`` (the ``azure.ai.evaluations`` extension).

    datasets:
      - name: support-golden
        file: ./datasets/support-golden.jsonl   # or source:; relative to this file
        version: "3"                            # optional: a pin
    evaluators:
      - name: support-quality
        source: ./evaluators/support-quality.json   # a rubric (.json), prompt (.md) or code (.py)
    evals:
      - name: support-quality
        dataset: support-golden                 # or source: {type: local, file: ./rows.jsonl}
        evaluation_level: turn
        evaluators:
          - evaluator: builtin.task_adherence
            initialization_parameters: {model: judge}
            data_mapping: {query: "{{item.question}}"}
          - evaluator: support-quality
        target: {type: agent, name: support-agent}   # optional: generate the responses first
        max_samples: 50
        options: {eval_model: judge}
    models: {...}                               # assay's: the models and agents the evals call
    agents: {...}

``create`` reconciles datasets, then evaluators, then evals with the store, in that order, by
fingerprint: what is unchanged writes nothing; a changed dataset or evaluator becomes its next
version; a changed eval is updated in place (its id and its runs' history kept). Each eval then
runs as an ordinary eval.yaml would (``eval_config``), its runs attached to that eval.

Departures from azd, decided: builtin evaluators are bound by assay's own field matching (azd
writes explicit default mappings and refuses an unmapped ``ground_truth``); ``models:`` and
``agents:`` may sit in this file, as in eval.yaml.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from assay.config.yamlfile import load_lined, strip_lines
from assay.errors import ConfigError
from assay.results.criterion import Criterion
from assay.results.stored import Eval
from assay.store import DEFAULT_PROJECT, Store

TOP_KEYS = {"datasets", "evaluators", "evals", "models", "agents"}
EVAL_KEYS = {
    "name",
    "id",
    "description",
    "dataset",
    "source",
    "evaluation_level",
    "evaluators",
    "target",
    "max_samples",
    "options",
}
REFERENCE_KEYS = {"evaluator", "name", "version", "initialization_parameters", "data_mapping", "threshold"}


@dataclass
class Spec:
    """``azure.eval.yaml``, read and checked."""

    path: Path
    raw: dict[str, Any]
    datasets: dict[str, dict[str, Any]]
    evaluators: dict[str, dict[str, Any]]
    evals: dict[str, dict[str, Any]]

    def where(self, node: Any) -> str:
        line = node.get("__line__", 1) if isinstance(node, dict) else 1
        return f"{self.path.name}:{line}"

    def local(self, node: dict[str, Any], key: str) -> Path:
        return self.path.parent / str(node[key]).replace("\\", "/")


def load_spec(path: Path) -> Spec:
    if not path.is_file():
        raise ConfigError(f"{path}: no such file", hint="assay eval init writes evals/azure.eval.yaml")
    raw = load_lined(path)
    if not isinstance(raw, dict):
        raise ConfigError(f"{path.name}:1: expected a mapping with datasets, evaluators and evals")
    unknown = sorted(set(raw) - TOP_KEYS - {"__line__"})
    if unknown:
        raise ConfigError(f"{path.name}: unknown key {unknown[0]!r}", hint=f"known keys: {', '.join(sorted(TOP_KEYS))}")
    spec = Spec(path, raw, {}, {}, {})
    for section, into in (("datasets", spec.datasets), ("evaluators", spec.evaluators), ("evals", spec.evals)):
        entries = raw.get(section) or []
        if not isinstance(entries, list):
            raise ConfigError(f"{path.name}: {section} must be a list of entries with a name")
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
                raise ConfigError(f"{spec.where(entry)}: {section}[{index}] needs a name")
            if entry["name"] in into:
                raise ConfigError(f"{spec.where(entry)}: {section}: {entry['name']!r} is declared twice")
            into[entry["name"]] = entry
    for entry in spec.datasets.values():
        if not (entry.get("file") or entry.get("source")) and not entry.get("version"):
            raise ConfigError(f"{spec.where(entry)}: dataset {entry['name']}: give its file (or a registered version)")
    for entry in spec.evaluators.values():
        if entry["name"].startswith("builtin."):
            raise ConfigError(
                f"{spec.where(entry)}: {entry['name']} is built in: name it in an eval, do not declare it"
            )
        if not entry.get("source") and not entry.get("version"):
            raise ConfigError(f"{spec.where(entry)}: evaluator {entry['name']}: give its source file")
    for entry in spec.evals.values():
        _check_eval(spec, entry)
    return spec


def _check_eval(spec: Spec, entry: dict[str, Any]) -> None:
    where, name = spec.where(entry), entry["name"]
    unknown = sorted(set(entry) - EVAL_KEYS - {"__line__"})
    if unknown:
        raise ConfigError(
            f"{where}: eval {name}: unknown key {unknown[0]!r}", hint=f"known: {', '.join(sorted(EVAL_KEYS))}"
        )
    if bool(entry.get("dataset")) == bool(entry.get("source")):
        raise ConfigError(f"{where}: eval {name}: give a dataset (a name in datasets:) or a source, one of them")
    if entry.get("dataset") and entry["dataset"] not in spec.datasets:
        known = ", ".join(spec.datasets) or "none declared"
        raise ConfigError(f"{where}: eval {name}: dataset {entry['dataset']!r} is not in datasets: ({known})")
    source = entry.get("source")
    if source is not None and (not isinstance(source, dict) or source.get("type") != "local" or not source.get("file")):
        raise ConfigError(f"{where}: eval {name}: source must be {{type: local, file: ./rows.jsonl}}")
    references = entry.get("evaluators")
    if not isinstance(references, list) or not references:
        raise ConfigError(f"{where}: eval {name}: evaluators must list at least one {{evaluator: builtin.NAME}}")
    for index, reference in enumerate(references):
        ref = {"evaluator": reference} if isinstance(reference, str) else reference
        if not isinstance(ref, dict) or not isinstance(ref.get("evaluator"), str):
            raise ConfigError(f"{spec.where(reference)}: eval {name}: evaluators[{index}] needs evaluator: NAME")
        bad = sorted(set(ref) - REFERENCE_KEYS - {"__line__"})
        if bad:
            raise ConfigError(f"{spec.where(ref)}: eval {name}: evaluators[{index}]: unknown key {bad[0]!r}")
        evaluator = ref["evaluator"]
        if not evaluator.startswith("builtin.") and evaluator not in spec.evaluators:
            raise ConfigError(
                f"{spec.where(ref)}: eval {name}: evaluator {evaluator!r} is neither builtin.* nor in evaluators:"
            )
    level = entry.get("evaluation_level", "turn")
    if level not in ("turn", "conversation"):
        raise ConfigError(f"{where}: eval {name}: evaluation_level must be turn or conversation")


def find_eval(spec: Spec, name: str | None) -> dict[str, Any]:
    if name is None:
        if len(spec.evals) == 1:
            return next(iter(spec.evals.values()))
        raise ConfigError("name the eval: --eval NAME", hint=f"{spec.path.name} declares {', '.join(spec.evals)}")
    if name not in spec.evals:
        raise ConfigError(f"{spec.path.name}: no eval {name!r}", hint=f"declared: {', '.join(spec.evals) or 'none'}")
    return spec.evals[name]


# -- reconcile --------------------------------------------------------------------------------


class Backend(Protocol):
    """Where ``create`` reconciles to: the local store (``StoreBackend``) or a server's project
    (``assay.formats.evalspec_remote``)."""

    def dataset_digests(self, name: str) -> dict[str, str | None]:
        """version → the sha256 of its rows, oldest first."""

    def register_dataset(self, name: str, version: str, filename: str, content: bytes) -> None: ...

    def add_evaluator(self, name: str, kind: str, content: str) -> tuple[str, bool]:
        """(its version, whether this made it): unchanged content keeps its version."""

    def stored_eval(self, name: str) -> tuple[str, dict[str, Any]] | None:
        """``(id, metadata)`` of the eval ``create`` made for the declared eval ``name``."""

    def create_eval(self, name: str, criteria: list[Criterion], metadata: dict[str, str], sample: bool) -> str: ...

    def update_eval(self, eval_id: str, criteria: list[Criterion], metadata: dict[str, str]) -> None: ...


class StoreBackend:
    def __init__(self, store: Store, project: str = DEFAULT_PROJECT) -> None:
        self.store, self.project = store, project

    def dataset_digests(self, name: str) -> dict[str, str | None]:
        rows = sorted(
            (r for r in self.store.list_datasets(self.project) if r["name"] == name),
            key=lambda r: (r["created_at"], _number(r["version"])),
        )
        return {str(r["version"]): self._digest(r) for r in rows}

    def _digest(self, row: dict[str, Any]) -> str | None:
        if not row.get("file_id"):
            return None
        file = self.store.get_file(self.project, row["file_id"], content=True)
        return hashlib.sha256(bytes(file["content"])).hexdigest()

    def register_dataset(self, name: str, version: str, filename: str, content: bytes) -> None:
        file = self.store.create_file(project=self.project, filename=filename, purpose="evals", content=content)
        self.store.register_dataset(
            name=name, version=version, uri=file["id"], project=self.project, file_id=file["id"]
        )

    def add_evaluator(self, name: str, kind: str, content: str) -> tuple[str, bool]:
        row, changed = self.store.add_evaluator(name=name, kind=kind, content=content, project=self.project)
        return str(row["version"]), changed

    def stored_eval(self, name: str) -> tuple[str, dict[str, Any]] | None:
        found = stored_eval(self.store, name, self.project)
        return (found.id, found.metadata or {}) if found is not None else None

    def create_eval(self, name: str, criteria: list[Criterion], metadata: dict[str, str], sample: bool) -> str:
        config = {"type": "custom", "include_sample_schema": sample}
        row = self.store.create_eval(
            name=name, data_source_config=config, testing_criteria=criteria, metadata=metadata, project=self.project
        )
        return row.id

    def update_eval(self, eval_id: str, criteria: list[Criterion], metadata: dict[str, str]) -> None:
        self.store.update_eval(self.project, eval_id, testing_criteria=criteria, metadata=metadata)


@dataclass
class Reconciled:
    """What ``create`` did: per artifact, ``created``, ``updated`` or ``unchanged``."""

    datasets: dict[str, tuple[str, str]] = field(default_factory=dict)
    """name → (version, what happened)."""
    evaluators: dict[str, tuple[str, str]] = field(default_factory=dict)
    evals: dict[str, tuple[str, str]] = field(default_factory=dict)
    """name → (eval id, what happened)."""

    @property
    def wrote(self) -> bool:
        return any(
            state != "unchanged" for part in (self.datasets, self.evaluators, self.evals) for _, state in part.values()
        )


def reconcile(spec: Spec, backend: Backend, names: list[str] | None = None) -> Reconciled:
    """Datasets → evaluators → evals, for the named evals (all when None) and what they use."""
    chosen = [find_eval(spec, n) for n in names] if names else list(spec.evals.values())
    done = Reconciled()
    for entry in chosen:
        if entry.get("dataset") and entry["dataset"] not in done.datasets:
            done.datasets[entry["dataset"]] = _dataset(spec, spec.datasets[entry["dataset"]], backend)
        for reference in _references(entry):
            name = reference["evaluator"]
            if name in spec.evaluators and name not in done.evaluators:
                done.evaluators[name] = _evaluator(spec, spec.evaluators[name], backend)
    for entry in chosen:
        done.evals[entry["name"]] = _eval(spec, entry, done, backend)
    return done


def _references(entry: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"evaluator": r} if isinstance(r, str) else r for r in entry["evaluators"]]


def _dataset(spec: Spec, entry: dict[str, Any], backend: Backend) -> tuple[str, str]:
    name, pinned = entry["name"], None if entry.get("version") is None else str(entry["version"])
    versions = backend.dataset_digests(name)
    key = "file" if entry.get("file") else "source" if entry.get("source") else None
    if key is None:  # a registered version, named only
        if pinned not in versions:
            raise ConfigError(f"{spec.where(entry)}: dataset {name}@{pinned} is not registered")
        return str(pinned), "unchanged"
    path = spec.local(entry, key)
    if not path.is_file():
        raise ConfigError(f"{spec.where(entry)}: dataset {name}: {path} not found ({key} is relative to this file)")
    content = path.read_bytes()
    digest = hashlib.sha256(content).hexdigest()
    if pinned is not None and pinned in versions:
        if versions[pinned] != digest:
            raise ConfigError(
                f"{spec.where(entry)}: dataset {name} version {pinned} is registered with other rows",
                hint="remove the version: pin to register the edit as the next version",
            )
        return pinned, "unchanged"
    if pinned is None and versions:
        latest = list(versions)[-1]
        if versions[latest] == digest:
            return latest, "unchanged"
    version = pinned or str(max((_number(v) for v in versions), default=0) + 1)
    backend.register_dataset(name, version, path.name, content)
    return version, "created"


def _number(version: str) -> int:
    return int(version) if version.isdigit() else 0


def _evaluator(spec: Spec, entry: dict[str, Any], backend: Backend) -> tuple[str, str]:
    from assay.evaluators.custom import kind_for, spec_from_file

    if not entry.get("source"):
        return str(entry["version"]), "unchanged"
    path = spec.local(entry, "source")
    if not path.is_file():
        raise ConfigError(f"{spec.where(entry)}: evaluator {entry['name']}: {path} not found")
    try:
        spec_from_file(path, entry["name"])  # checked before anything is stored
    except ConfigError as exc:
        raise ConfigError(f"{spec.where(entry)}: evaluator {entry['name']}: {exc.message}", hint=exc.hint) from None
    version, changed = backend.add_evaluator(entry["name"], kind_for(path), path.read_text(encoding="utf-8"))
    return version, "created" if changed else "unchanged"


def criteria_of(entry: dict[str, Any], evaluators: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    """An eval's evaluator references as eval.yaml criteria, declared ones pinned to their version."""
    criteria = []
    for reference in _references(entry):
        ref = strip_lines(reference)
        name = ref["evaluator"]
        criterion: dict[str, Any] = {
            "name": ref.get("name") or name.removeprefix("builtin."),
            "evaluator_name": name,
            **{k: ref[k] for k in ("initialization_parameters", "data_mapping", "threshold") if k in ref},
        }
        version = ref.get("version") or (evaluators[name][0] if name in evaluators else None)
        if version is not None:
            criterion["version"] = str(version)
        criteria.append(criterion)
    return criteria


def _eval(spec: Spec, entry: dict[str, Any], done: Reconciled, backend: Backend) -> tuple[str, str]:
    criteria = criteria_of(entry, done.evaluators)
    dataset = done.datasets.get(entry.get("dataset") or "")
    definition = {
        "criteria": criteria,
        "evaluation_level": entry.get("evaluation_level", "turn"),
        "target": strip_lines(entry.get("target")),
        "dataset": [entry.get("dataset"), dataset[0] if dataset else None],
        "source": strip_lines(entry.get("source")),
    }
    fingerprint = hashlib.sha256(json.dumps(definition, sort_keys=True).encode()).hexdigest()
    metadata = {"azd_eval": entry["name"], "fingerprint": fingerprint, "config": str(spec.path.name)}
    existing = backend.stored_eval(entry["name"])
    if existing is not None and existing[1].get("fingerprint") == fingerprint:
        return existing[0], "unchanged"
    wire = [_wire(c) for c in criteria]
    if existing is not None:  # the same eval, its criteria moved on: its runs' history stays with it
        backend.update_eval(existing[0], wire, metadata)
        return existing[0], "updated"
    return backend.create_eval(entry["name"], wire, metadata, bool(entry.get("target"))), "created"


def _wire(criterion: dict[str, Any]) -> Criterion:
    """An eval.yaml criterion (``criteria_of``) as the API stores it."""
    wire: Criterion = {
        "type": "azure_ai_evaluator",
        "name": criterion["name"],
        "evaluator_name": criterion["evaluator_name"],
    }
    if "version" in criterion:
        wire["evaluator_version"] = criterion["version"]
    if "initialization_parameters" in criterion:
        wire["initialization_parameters"] = criterion["initialization_parameters"]
    if "data_mapping" in criterion:
        wire["data_mapping"] = criterion["data_mapping"]
    return wire


def stored_eval(store: Store, name: str, project: str = DEFAULT_PROJECT) -> Eval | None:
    """The eval ``create`` made for the declared eval ``name`` (the newest, should there be several)."""
    found = [e for e in store.evals_named(project, name) if (e.metadata or {}).get("azd_eval") == name]
    return max(found, key=lambda e: e.created_at) if found else None


# -- run ---------------------------------------------------------------------------------------


def eval_yaml(spec: Spec, entry: dict[str, Any], done: Reconciled) -> dict[str, Any]:
    """The declared eval as eval.yaml's mapping (line numbers kept, so errors name this file)."""
    raw: dict[str, Any] = {"__line__": entry.get("__line__", 1), "name": entry["name"]}
    raw["evaluators"] = [
        {**criterion, "__line__": reference.get("__line__", 1) if isinstance(reference, dict) else 1}
        for criterion, reference in zip(criteria_of(entry, done.evaluators), entry["evaluators"], strict=True)
    ]
    if entry.get("dataset"):
        raw["dataset"] = {"name": entry["dataset"], "version": done.datasets[entry["dataset"]][0]}
    else:
        raw["dataset"] = {"local_uri": str(spec.local(entry["source"], "file"))}
    raw["evaluation_level"] = entry.get("evaluation_level", "turn")
    target = strip_lines(entry.get("target"))
    if isinstance(target, dict):
        kind = target.get("type", "agent")
        raw["target"] = {"type": "model", "model": target.get("name")} if kind == "model" else target
    for key in ("models", "agents"):
        if spec.raw.get(key) is not None:
            raw[key] = spec.raw[key]
    if entry.get("options") is not None:
        raw["options"] = entry["options"]
    return raw
