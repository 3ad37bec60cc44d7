"""The open-source openai/evals registry as assay evals: ``assay import evals-registry REGISTRY.yaml``.

A registry file names evals (``name: {id: name.split.version, metrics, description}``) and their
specs (``name.split.version: {class, args}``); the samples are JSON lines under the registry's
``data/`` folder (``{"input": <messages or text>, "ideal": <text or texts>}``). Each eval becomes a
folder with an eval.yaml and its samples: a model target answers each sample's input (temperature
0, as the eval classes ask), and python graders judge the answer exactly as the class does.

The classes imported, which are most of the registry: ``basic.match:Match`` (the answer starts
with an ideal; few-shot samples put before the last message, as the class does), ``basic.includes:
Includes`` (an ideal appears in the answer, optionally ignoring case), ``basic.fuzzy_match:
FuzzyMatch`` (accuracy: one of answer and ideal contains the other once both are normalised; and
its token F1) and ``modelgraded.classify:ModelBasedClassify`` for a spec (``modelgraded/NAME.yaml``
beside ``evals/``) with ``choice_scores``: a ``label_model`` grader shown the spec's prompt with the
eval type's answer prompt, whose passing labels are the choices of the highest score. A spec without
``choice_scores`` (``fact``: the class reports only each choice's count) or that grades several
answers at once (``battle``) is left, saying why. Any other class is refused by name.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from assay.errors import ConfigError

MATCH = "evals.elsuite.basic.match:Match"
INCLUDES = "evals.elsuite.basic.includes:Includes"
FUZZY_MATCH = "evals.elsuite.basic.fuzzy_match:FuzzyMatch"
CLASSIFY = "evals.elsuite.modelgraded.classify:ModelBasedClassify"
CLASSES = (MATCH, INCLUDES, FUZZY_MATCH, CLASSIFY)

ANSWER_PROMPTS = {
    "classify": "Answer the question by printing only a single choice from {choices} (without quotes or "
    "punctuation) corresponding to the correct answer with no other text.",
    "classify_cot": "First, answer by printing a single choice from {choices} (without quotes or punctuation) "
    "corresponding to the correct answer. Then, from the next line, explain your reasonings step by step.",
    "cot_classify": "First, write out in a step by step manner your reasoning to be sure that your conclusion is "
    "correct. Avoid simply stating the correct answer at the outset. Then print only a single choice from {choices} "
    "(without quotes or punctuation) on its own line corresponding to the correct answer. At the end, repeat just "
    "the answer by itself on a new line.\n\nReasoning:",
}
"""What ModelBasedClassify appends to a spec's prompt for its ``eval_type`` (evals' classify_utils)."""

LFS_POINTER = "version https://git-lfs.github.com/spec/v1"

IDEALS = """
def ideals(item):
    ideal = item["ideal"]
    return list(ideal) if isinstance(ideal, (list, tuple)) else [ideal]
"""

STARTS_WITH = (
    IDEALS
    + """

def grade(sample, item):
    answer = sample["output_text"]
    return 1.0 if any(answer.startswith(option) for option in ideals(item)) else 0.0
"""
)

INCLUDED = (
    IDEALS
    + """
IGNORE_CASE = {ignore_case}


def grade(sample, item):
    answer = sample["output_text"]
    if IGNORE_CASE:
        return 1.0 if any(option.lower() in answer.lower() for option in ideals(item)) else 0.0
    return 1.0 if any(option in answer for option in ideals(item)) else 0.0
"""
)

NORMALIZE = (
    """
import re
import string
from collections import Counter

"""
    + IDEALS
    + """

def normalize(text):
    text = "".join(char for char in text.lower() if char not in set(string.punctuation))
    return " ".join(re.sub(r"\\b(a|an|the)\\b", " ", text).split())
"""
)

FUZZY = (
    NORMALIZE
    + """

def fuzzy_match(first, second):
    first, second = normalize(first), normalize(second)
    if first == "" or second == "":
        return first == second
    return first in second or second in first


def grade(sample, item):
    return 1.0 if any(fuzzy_match(sample["output_text"], option) for option in ideals(item)) else 0.0
"""
)

TOKEN_F1 = (
    NORMALIZE
    + """

def f1(prediction, truth):
    predicted, expected = normalize(prediction).split(), normalize(truth).split()
    same = sum((Counter(predicted) & Counter(expected)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(expected)
    return 2 * precision * recall / (precision + recall)


def grade(sample, item):
    return max(f1(sample["output_text"], option) for option in ideals(item))
"""
)


@dataclass
class RegistryEval:
    """One eval of a registry file, ready to write."""

    name: str
    spec_id: str
    description: str
    class_name: str
    samples: list[dict[str, Any]]
    graders: list[dict[str, Any]] = field(default_factory=list)
    max_tokens: int | None = None


@dataclass
class Loaded:
    evals: list[RegistryEval]
    skipped: list[str]
    """Why each eval of the file that is not imported was left (when the file was taken whole)."""


def load_registry(path: Path, data: Path | None = None, names: list[str] | None = None) -> Loaded:
    """The evals of registry file ``path`` (only ``names``, when given), their samples read from
    ``data`` (default: the ``data`` folder beside the registry's ``evals`` folder). Taken whole, an
    eval of a class not imported is skipped with the reason; named, it is refused."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read the registry file ({exc})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a registry file maps eval names to their specs")
    data = data or path.resolve().parent.parent / "data"
    evals = {name: entry for name, entry in raw.items() if isinstance(entry, dict) and "id" in entry}
    unknown = sorted(set(names or []) - set(evals))
    if unknown:
        raise ConfigError(f"{path}: no eval {unknown[0]!r}", hint=f"the evals here: {', '.join(sorted(evals))}")
    found, skipped = [], []
    for name, entry in evals.items():
        if names and name not in names:
            continue
        spec = raw.get(entry["id"])
        if not isinstance(spec, dict) or not isinstance(spec.get("class"), str):
            raise ConfigError(f"{path}: {name}: its spec {entry['id']!r} is not in the file")
        if spec["class"] not in CLASSES and not names:
            skipped.append(f"{name}: the class {spec['class']} is not imported")
            continue
        try:
            found.append(_one(path, data, name, entry, spec))
        except Unsupported as exc:  # a model-graded spec that cannot be a verdict: said, and left
            if names:
                raise ConfigError(str(exc), hint=SUPPORTED) from None
            skipped.append(f"{name}: {exc}")
    if not found:
        raise ConfigError(f"{path}: no eval here can be imported ({'; '.join(skipped)})", hint=SUPPORTED)
    return Loaded(found, skipped)


SUPPORTED = (
    "basic.match:Match, basic.includes:Includes, basic.fuzzy_match:FuzzyMatch and modelgraded.classify:"
    "ModelBasedClassify (a spec with choice_scores, one model answering) are imported"
)


class Unsupported(Exception):
    """An eval of an imported class whose spec assay cannot turn into verdicts."""


def _one(path: Path, data: Path, name: str, entry: dict[str, Any], spec: dict[str, Any]) -> RegistryEval:
    where = f"{path}: {name}"
    args = spec.get("args") or {}
    class_name = spec["class"]
    if class_name not in CLASSES:
        raise ConfigError(f"{where}: the class {class_name} is not imported", hint=SUPPORTED)
    if not isinstance(args.get("samples_jsonl"), str):
        raise ConfigError(f"{where}: args.samples_jsonl names no samples file")
    samples = _samples(data, args["samples_jsonl"], where)
    if class_name == MATCH and int(args.get("num_few_shot") or 0) > 0:
        if not isinstance(args.get("few_shot_jsonl"), str):
            raise ConfigError(f"{where}: num_few_shot needs few_shot_jsonl")
        shots = _samples(data, args["few_shot_jsonl"], where, key="sample")[: int(args["num_few_shot"])]
        samples = [_with_shots(sample, shots, where) for sample in samples]
    found = RegistryEval(name, entry["id"], str(entry.get("description") or ""), class_name, samples)
    if class_name == CLASSIFY:
        found.graders = [_classify(path, args, where)]
        found.max_tokens = int(args.get("max_tokens") or 1024)
    elif class_name == MATCH:
        found.graders = [_grader("match", STARTS_WITH)]
        found.max_tokens = int(args.get("max_tokens") or 500)
    elif class_name == INCLUDES:
        found.graders = [_grader("includes", INCLUDED.format(ignore_case=bool(args.get("ignore_case"))))]
    else:
        found.graders = [_grader("fuzzy_match", FUZZY), _grader("f1_score", TOKEN_F1, threshold=None)]
        found.max_tokens = int(args.get("max_tokens") or 500)
    return found


def _classify(path: Path, args: dict[str, Any], where: str) -> dict[str, Any]:
    """ModelBasedClassify as a ``label_model`` grader: the spec's prompt (its ``{input}``, ``{ideal}``,
    ``{completion}`` and spec args filled in, the eval type's answer prompt appended), its choices as
    the labels, and the choices of the highest ``choice_scores`` as the passing labels. The grader
    answers a JSON label rather than a line the class parses."""
    spec_name = args.get("modelgraded_spec")
    if not isinstance(spec_name, str):
        raise ConfigError(f"{where}: args.modelgraded_spec names no spec")
    file = path.resolve().parent.parent / "modelgraded" / f"{spec_name}.yaml"
    try:
        specs = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{where}: cannot read the spec {file} ({exc})") from None
    spec = specs.get(spec_name) if isinstance(specs, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("prompt"), (str, list)):
        raise ConfigError(f"{file}: no spec {spec_name!r} with a prompt")
    outputs = spec.get("input_outputs") or {"input": "completion"}
    if outputs != {"input": "completion"}:
        raise Unsupported(f"the spec {spec_name} grades several answers at once ({outputs}); one is imported")
    choices = spec.get("choice_strings")
    labels = list(choices) if isinstance(choices, str) and not choices.startswith("from_") else choices
    if not isinstance(labels, list) or not labels or not all(isinstance(c, str) for c in labels):
        raise Unsupported(f"the spec {spec_name}'s choice_strings {choices!r} are not a list of choices")
    scores = spec.get("choice_scores")
    if scores == "from_strings":
        scores = {c: float(c) for c in labels}
    if not isinstance(scores, dict) or not scores:
        raise Unsupported(
            f"the spec {spec_name} gives no choice_scores, so no choice passes (its counts are its result)"
        )
    best = max(float(v) for v in scores.values())
    passing = [c for c in labels if float(scores.get(c, float("-inf"))) == best]
    eval_type = args.get("eval_type")  # the eval's own: a spec's eval_type is already in its prompt
    given = args.get("modelgraded_spec_args") or {}
    if any(not isinstance(v, (str, int, float)) for v in given.values()):
        raise Unsupported("modelgraded_spec_args with several values each make several graders; not imported")
    fills = {k: str(v) for k, v in given.items()}
    messages = [{"role": "user", "content": spec["prompt"]}] if isinstance(spec["prompt"], str) else spec["prompt"]
    rendered = [{**m, "content": _template(str(m.get("content", "")), fills)} for m in messages]
    if eval_type:
        if eval_type not in ANSWER_PROMPTS:
            raise Unsupported(f"eval_type {eval_type!r} is not one assay knows")
        choices_text = " or ".join(f'"{c}"' for c in labels)
        rendered[-1]["content"] += "\n\n" + ANSWER_PROMPTS[eval_type].format(choices=choices_text)
    name = spec_name if not fills.get("criteria") else f"{spec_name}_{fills['criteria'].split(':')[0].strip()}"
    return {"type": "label_model", "name": name, "input": rendered, "labels": labels, "passing_labels": passing}


def _template(prompt: str, fills: dict[str, str]) -> str:
    """A spec's ``str.format`` prompt as an assay template: ``{input}`` the sample's input as text,
    ``{ideal}`` its ideal, ``{completion}`` the answer, a spec arg its value, another field the item's."""
    names = {"input": "{{item.input_text}}", "ideal": "{{item.ideal_text}}", "completion": "{{sample.output_text}}"}

    def one(match: re.Match[str]) -> str:
        if match.group(0) in ("{{", "}}"):
            return match.group(0)[0]
        field = match.group(1)
        return fills[field] if field in fills else names.get(field, f"{{{{item.{field}}}}}")

    return re.sub(r"\{\{|\}\}|\{(\w+)\}", one, prompt)


def _grader(name: str, source: str, threshold: float | None = 1.0) -> dict[str, Any]:
    grader: dict[str, Any] = {"type": "python", "name": name, "source": source.lstrip()}
    if threshold is not None:
        grader["pass_threshold"] = threshold
    return grader


def _samples(data: Path, reference: str, where: str, key: str = "input") -> list[dict[str, Any]]:
    """The JSON lines of ``data/reference``, each an object with ``key`` (a few-shot file's is ``sample``)."""
    file = data / reference
    try:
        text = file.read_text(encoding="utf-8")
    except OSError:
        raise ConfigError(
            f"{where}: no samples file {file}", hint="give the registry's data folder with --data"
        ) from None
    if text.startswith(LFS_POINTER):
        raise ConfigError(
            f"{where}: {file} is a Git LFS pointer, not the samples", hint="run git lfs pull in openai/evals"
        )
    samples = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            sample = json.loads(line)
        except ValueError as exc:
            raise ConfigError(f"{file}:{number}: not JSON ({exc})") from None
        if not isinstance(sample, dict) or key not in sample:
            raise ConfigError(f"{file}:{number}: each line is an object with {key!r}")
        samples.append(sample)
    return samples


def _with_shots(sample: dict[str, Any], shots: list[dict[str, Any]], where: str) -> dict[str, Any]:
    """Match's few-shot prompt: the input's messages but the last, each shot's ``sample`` messages, the last."""
    messages = sample["input"]
    if not isinstance(messages, list) or not messages:
        raise ConfigError(f"{where}: few-shot samples need chat inputs (a list of messages)")
    shown = [message for shot in shots for message in shot.get("sample") or []]
    return {**sample, "input": [*messages[:-1], *shown, messages[-1]]}


def write_eval(found: RegistryEval, folder: Path, model: str) -> Path:
    """``found`` as ``folder/eval.yaml`` and ``folder/samples.jsonl``; ``model`` names the model that
    answers (the registry's completion function), configured from the environment unless edited."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [_row(sample) for sample in found.samples]
    (folder / "samples.jsonl").write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    params: dict[str, Any] = {"temperature": 0}
    if found.max_tokens:
        params["max_completion_tokens"] = found.max_tokens
    graders = [{**g, "model": model} if g["type"] == "label_model" else g for g in found.graders]
    config = {
        "name": found.name,
        "description": found.description or f"openai/evals {found.spec_id}",
        "dataset": {"local_uri": "samples.jsonl"},
        "target": {"type": "model", "model": model, "sampling_params": params},
        "evaluators": graders,
    }
    head = f"# openai/evals {found.spec_id} ({found.class_name}), imported by assay\n"
    text = yaml.dump(config, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    path = folder / "eval.yaml"
    path.write_text(head + text, encoding="utf-8")
    return path


class _Dumper(yaml.SafeDumper):
    """Code as a block (``source: |``), so the graders read as the Python they are."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def _row(sample: dict[str, Any]) -> dict[str, Any]:
    """A sample as an item: chat input as ``messages`` (what a model target sends), text as ``query``."""
    given = sample["input"]
    row = {key: value for key, value in sample.items() if key != "input"}
    if isinstance(given, list):
        row["messages"] = given
        # What a model-graded spec's {input} shows its grader: the messages' text, as evals joins it.
        row["input_text"] = "\n".join(str(m.get("content") or "") for m in given if isinstance(m, dict))
    else:
        row["query"] = row["input_text"] = str(given)
    ideal = sample.get("ideal")
    if ideal is not None:
        row["ideal_text"] = "\n".join(map(str, ideal)) if isinstance(ideal, list) else str(ideal)
    return row
