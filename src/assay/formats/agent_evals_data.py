"""The data file of microsoft/ai-agent-evals (the GitHub Action and Azure DevOps task) as assay's
files: ``assay import ai-agent-evals data.json --out DIR``.

    {"name": "test-dataset",
     "evaluators": ["builtin.relevance", "builtin.f1_score", "builtin.string_check", "my_custom"],
     "evaluator_parameters": {"builtin.rouge_score": {"rouge_type": "rouge1"}, "my_custom": {"threshold": 4}},
     "openai_graders": {"builtin.string_check": {"input": "{{sample.output_text}}", "operation": "like",
                                                  "reference": "{{item.ground_truth}}"}},
     "data_mapping": {"query": "user_question", "ground_truth": "expected_answer"},
     "data": [{"user_question": "...", "expected_answer": "..."}]}

The action runs an agent on each row's query, then evaluates; so does the eval.yaml written here
(``--agent NAME`` from ``agents:``, or ``--model NAME``). ``data_mapping`` names the dataset column
each evaluator input reads; ``openai_graders`` are OpenAI's graders (label and score models use
the judge model); ``evaluator_parameters`` become the evaluator's initialization parameters (its
``threshold`` the criterion's). A custom name is an evaluator registered in the store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from assay.errors import ConfigError

KEYS = {"name", "evaluators", "evaluator_parameters", "openai_graders", "data_mapping", "data"}
GRADERS = {"string_check", "text_similarity", "label_model", "score_model"}


def load_data_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except ValueError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected an object with name, evaluators and data")
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r}", hint=f"known keys: {', '.join(sorted(KEYS))}")
    if not isinstance(data.get("evaluators"), list) or not all(isinstance(e, str) for e in data["evaluators"]):
        raise ConfigError(f"{path}: evaluators: expected a list of names such as builtin.relevance")
    rows = data.get("data")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        raise ConfigError(f"{path}: data: expected a non-empty list of rows (objects)")
    for key in ("evaluator_parameters", "openai_graders", "data_mapping"):
        if not isinstance(data.get(key) or {}, dict):
            raise ConfigError(f"{path}: {key}: expected an object keyed by evaluator or input name")
    return data


def criteria(data: dict[str, Any], path: Path, judge_model: str | None) -> list[dict[str, Any]]:
    mapping = {field: "{{item." + str(column) + "}}" for field, column in (data.get("data_mapping") or {}).items()}
    if mapping:  # an explicit mapping replaces the automatic one: the answer is still the agent's
        mapping.setdefault("response", "{{sample.output_text}}")
    graders, parameters = data.get("openai_graders") or {}, data.get("evaluator_parameters") or {}
    found = []
    for name in data["evaluators"]:
        short = name.removeprefix("builtin.")
        if short in GRADERS:
            grader = graders.get(name)
            if not isinstance(grader, dict):
                raise ConfigError(f"{path}: {name} needs its definition under openai_graders")
            criterion = {"type": short, "name": short, **grader}
            if short in ("label_model", "score_model") and "model" not in criterion:
                if judge_model is None:
                    raise ConfigError(f"{path}: {name} calls a model: give --judge-model NAME")
                criterion["model"] = judge_model
            found.append(criterion)
            continue
        params = dict(parameters.get(name) or {})
        criterion = {"name": short, "evaluator_name": name}
        if "threshold" in params:
            criterion["threshold"] = params.pop("threshold")
        if params:
            criterion["initialization_parameters"] = params
        if mapping:
            criterion["data_mapping"] = dict(mapping)
        found.append(criterion)
    return found


def write_files(
    data: dict[str, Any], path: Path, folder: Path, *, agent: str | None, model: str | None, judge_model: str | None
) -> Path:
    """``eval.yaml`` and the rows as ``<name>.jsonl`` in ``folder``; the eval.yaml's path."""
    if (agent is None) == (model is None):
        raise ConfigError("the action evaluates an agent's answers: give --agent NAME or --model NAME")
    name = str(data.get("name") or path.stem)
    folder.mkdir(parents=True, exist_ok=True)
    rows = folder / f"{name}.jsonl"
    rows.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in data["data"]), encoding="utf-8")
    column = (data.get("data_mapping") or {}).get("query", "query")
    messages = [{"role": "user", "content": "{{item." + str(column) + "}}"}]
    target: dict[str, Any] = (
        {"type": "agent", "name": agent, "input_messages": messages}
        if agent
        else {"type": "model", "model": model, "input_messages": messages}
    )
    config: dict[str, Any] = {
        "name": name,
        "dataset": {"local_uri": rows.name},
        "target": target,
        "evaluators": criteria(data, path, judge_model),
    }
    if judge_model:
        config["options"] = {"eval_model": judge_model}
    written = folder / "eval.yaml"
    written.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return written
