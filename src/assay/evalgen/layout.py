"""Where ``assay eval generate`` writes, exactly as azd does (paths relative to the agent project):

eval.yaml                                         (or --out-file)
datasets/<name>/<name>_dg.jsonl                   the tasks; the folder is emptied first
evaluators/<rubric>/rubric_dimensions.json        the rubric's dimensions, a bare JSON array
.agent_configs/baseline/metadata.yaml             written only when absent
.agent_configs/baseline/instructions.md
tools.py                                          stubs of the agent's described tools, only when absent

tools.json only describes the agent's tools; to run the agent (and to optimize it) assay needs them
implemented. ``tools.py`` gets a stub of each, with its docstring and typed parameters, raising
``NotImplementedError`` until the user fills it in, and eval.yaml's ``agent.tools`` names it.
"""

from __future__ import annotations

import json
import keyword
from pathlib import Path
from typing import Any

import yaml

from assay.config.agents import BASELINE, AgentDefinition, write_agent_config

TASK_FIELDS = ("id", "name", "query", "ground_truth", "criteria", "category", "description", "covers")


def rubric_name(name: str) -> str:
    return f"{name}-rubric"


def write_project(
    project: Path,
    name: str,
    agent: AgentDefinition,
    tasks: list[dict[str, Any]] | None,
    dimensions: list[dict[str, Any]] | None,
    *,
    out_file: Path,
    eval_model: str,
    evaluators: list[str],
    max_samples: int,
    trace_days: int = 0,
    dataset: dict[str, Any] | None = None,
) -> list[Path]:
    """Write the files (``tasks`` or ``dimensions`` None: that part is left as it is, and
    ``dataset`` names the dataset eval.yaml uses instead); returns them in the order written."""
    written = []
    if tasks is not None:
        data = project / "datasets" / name
        data.mkdir(parents=True, exist_ok=True)
        for old in data.glob("*"):
            if old.is_file() and old.suffix in (".jsonl", ".csv"):
                old.unlink()
        rows = "".join(json.dumps({k: t[k] for k in TASK_FIELDS if k in t}, ensure_ascii=False) + "\n" for t in tasks)
        (data / f"{name}_dg.jsonl").write_text(rows, encoding="utf-8")
        written.append(data / f"{name}_dg.jsonl")
    rubric = project / "evaluators" / rubric_name(name)
    if dimensions is not None:
        rubric.mkdir(parents=True, exist_ok=True)
        (rubric / "rubric_dimensions.json").write_text(json.dumps(dimensions, indent=2) + "\n", encoding="utf-8")
        written.append(rubric / "rubric_dimensions.json")
    baseline = project / BASELINE
    if not (baseline / "metadata.yaml").is_file():
        written.append(write_agent_config(baseline, agent))
    stubs = out_file.parent / "tools.py"
    if agent.tools and not stubs.is_file():
        stubs.write_text(tool_stubs(agent.tools), encoding="utf-8")
        written.append(stubs)
    implemented = {"tools": [{"python": "tools.py"}]} if agent.tools else {}
    config = {
        "name": name,
        "agent": {
            "name": agent.name or name,
            "kind": "prompt",
            "config": str(BASELINE / "metadata.yaml"),
            **implemented,
        },
        "dataset": dataset or {"name": name, "version": "1.0", "local_uri": f"datasets/{name}"},
        "evaluators": [
            *dict.fromkeys(["builtin.task_adherence", *evaluators]),
            {
                "name": rubric_name(name),
                "version": "1",
                "local_uri": f"evaluators/{rubric_name(name)}/rubric_dimensions.json",
            },
        ],
        "options": {"eval_model": eval_model},
        "max_samples": max_samples,
    }
    if trace_days:
        config["trace_days"] = trace_days
    out_file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    written.append(out_file)
    return written


JSON_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "array": "list",
    "object": "dict",
}


def tool_stubs(tools: Any) -> str:
    """A module with a stub of each described tool: its docstring and typed parameters, raising
    ``NotImplementedError`` until filled in (a name that is no Python identifier is left out, said)."""
    parts = [
        '"""The agent\'s tools, as tools.json describes them: fill each in (assay runs them in the agent\'s loop)."""',
        "",
        "from __future__ import annotations",
    ]
    for tool in tools:
        name = str(tool.get("name"))
        if not name.isidentifier() or keyword.iskeyword(name):
            parts += ["", f"# {name!r} is no Python name: implement it in an MCP server (agent.tools: [{{mcp: ...}}])"]
            continue
        schema = tool.get("parameters") or {}
        properties = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        given = [p for p in properties if str(p).isidentifier() and not keyword.iskeyword(str(p))]
        ordered = [p for p in given if p in required] + [p for p in given if p not in required]
        params = []
        for parameter in ordered:
            kind = JSON_TYPES.get(str((properties[parameter] or {}).get("type")), "str")
            params.append(f"{parameter}: {kind}" if parameter in required else f"{parameter}: {kind} | None = None")
        description = " ".join(str(tool.get("description") or name).replace("\\", "/").replace('"', "'").split())
        parts += [
            "",
            "",
            f"def {name}({', '.join(params)}) -> str:",
            f'    """{description}"""',
            f'    raise NotImplementedError("{name} is a stub: implement it in tools.py")',
        ]
    return "\n".join(parts) + "\n"
