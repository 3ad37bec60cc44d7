"""``assay eval update``: an edited dataset or rubric becomes a new version in the store, and
eval.yaml names it, as azd's ``eval update`` does.

- The dataset (``dataset: {name, local_uri}``): its first JSONL file is stored under the next
  version by azd's rule (``""`` → ``1.0``, ``1.0`` → ``2.0``, ``v3`` → ``v4``, otherwise ``.1``
  appended), unless it is what that version already holds.
- Each evaluator with a ``local_uri``: its file is registered as the next version of that
  evaluator (unchanged content keeps its version), and the version is written back.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from assay.config.yamlfile import safe_load
from assay.errors import ConfigError, NotFoundError
from assay.evaluators.custom import kind_for, spec_from_file
from assay.store import DEFAULT_PROJECT, Store


def next_version(version: str | None) -> str:
    """azd's ``NextVersion``."""
    text = (version or "").strip()
    if not text:
        return "1.0"
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isnan(number):
        return f"{math.floor(number) + 1}.0"
    digits = re.search(r"(\d+)$", text)
    if digits:
        return text[: digits.start()] + str(int(digits.group(1)) + 1)
    return text + ".1"


@dataclass
class Updated:
    dataset: tuple[str, str] | None = None
    """(name, new version) when the dataset was stored anew."""
    evaluators: list[tuple[str, str, bool]] = field(default_factory=list)
    """(name, version, changed) per evaluator with a local file."""
    unchanged_dataset: bool = False


def update(config_path: Path, store: Store, *, datasets: bool = True, evaluators: bool = True) -> Updated:
    raw = safe_load(config_path.read_text(encoding="utf-8-sig"), str(config_path)) or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{config_path}: expected a mapping with name, dataset and evaluators")
    done = Updated()
    if datasets:
        _update_dataset(config_path, raw, store, done)
    if evaluators:
        _update_evaluators(config_path, raw, store, done)
    if done.dataset or any(changed for _, _, changed in done.evaluators):
        config_path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return done


def _update_dataset(config_path: Path, raw: dict[str, Any], store: Store, done: Updated) -> None:
    dataset = raw.get("dataset")
    if not isinstance(dataset, dict) or not dataset.get("name") or not dataset.get("local_uri"):
        raise ConfigError(
            f"{config_path}: dataset needs a name and a local_uri to be stored as a new version",
            hint="dataset: {name: support, version: '1.0', local_uri: datasets/support}",
        )
    local = config_path.parent / str(dataset["local_uri"]).replace("\\", "/")
    files = sorted(local.glob("*.jsonl")) if local.is_dir() else [local]
    if not files or not files[0].is_file():
        raise ConfigError(f"dataset not found: {local} (local_uri is relative to {config_path.parent})")
    content = files[0].read_bytes()
    name, current = str(dataset["name"]), str(dataset.get("version") or "")
    if current and _stored_digest(store, name, current) == hashlib.sha256(content).hexdigest():
        done.unchanged_dataset = True
        return
    version = next_version(current)
    file = store.create_file(project=DEFAULT_PROJECT, filename=f"{name}.jsonl", purpose="evals", content=content)
    store.register_dataset(name=name, version=version, uri=file["id"], file_id=file["id"])
    dataset["version"] = version
    done.dataset = (name, version)


def _stored_digest(store: Store, name: str, version: str) -> str | None:
    try:
        row = store.get_dataset(name, version)
    except NotFoundError:
        return None
    if not row["file_id"]:
        return None
    return hashlib.sha256(bytes(store.get_file(DEFAULT_PROJECT, row["file_id"], content=True)["content"])).hexdigest()


def _update_evaluators(config_path: Path, raw: dict[str, Any], store: Store, done: Updated) -> None:
    for entry in raw.get("evaluators") or []:
        if not isinstance(entry, dict) or not entry.get("local_uri"):
            continue
        path = config_path.parent / str(entry["local_uri"]).replace("\\", "/")
        name = str(entry.get("name"))
        spec_from_file(path, name)  # checked before anything is stored
        record, changed = store.add_evaluator(name=name, kind=kind_for(path), content=path.read_text(encoding="utf-8"))
        entry["version"] = str(record["version"])
        done.evaluators.append((name, str(record["version"]), changed))
