"""Agent configurations as azd lays them out: ``.agent_configs/<id>/metadata.yaml``

    name: support-agent            # optional
    model: gpt-4.1-mini            # optional: the agent's model
    instruction_file: instructions.md
    skill_dir: skills              # optional: skills/<name>/SKILL.md, front matter {name, description}
    tools_file: tools.json         # optional: OpenAI function definitions

``baseline`` is the agent as it is; ``assay optimize`` writes each candidate the same way. A
prompt agent (a model with these instructions, skills and tool definitions) is what a run
targets when an eval.yaml names ``agent.config`` and no endpoint serves that agent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from assay.config.yamlfile import safe_load
from assay.errors import ConfigError
from assay.evaluators.custom.prompt import split_front_matter

BASELINE = Path(".agent_configs") / "baseline"


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str


@dataclass(frozen=True)
class AgentDefinition:
    instructions: str
    tools: tuple[dict[str, Any], ...] = ()
    """``{name, description, parameters?}`` each (the OpenAI function's fields)."""
    skills: tuple[Skill, ...] = ()
    model: str | None = None
    name: str | None = None

    def system_prompt(self) -> str:
        """The instructions, with each skill appended under its name."""
        if not self.skills:
            return self.instructions
        parts = [self.instructions.rstrip(), "", "# Skills"]
        for skill in self.skills:
            parts += ["", f"## {skill.name}", skill.description, "", skill.body.strip()]
        return "\n".join(parts) + "\n"

    def function_tools(self) -> list[dict[str, Any]]:
        """The tools as chat-completions ``tools``."""
        return [
            {
                "type": "function",
                "function": {k: v for k, v in tool.items() if k in ("name", "description", "parameters")},
            }
            for tool in self.tools
        ]


def load_agent_config(metadata: Path) -> AgentDefinition:
    """Read ``metadata.yaml`` and the files it names (paths relative to its folder; azd on Windows
    writes backslashes, which are accepted)."""
    if not metadata.is_file():
        hint = "azd writes it as .agent_configs/baseline/metadata.yaml (assay eval generate does too)"
        raise ConfigError(f"agent config not found: {metadata}", hint=hint)
    meta = safe_load(metadata.read_text(encoding="utf-8-sig"), str(metadata)) or {}
    if not isinstance(meta, dict):
        raise ConfigError(f"{metadata}: expected a mapping such as {{instruction_file: instructions.md}}")
    folder = metadata.parent
    instructions = _read(folder, meta.get("instruction_file", "instructions.md"), metadata, "instruction_file")
    tools: list[dict[str, Any]] = []
    if meta.get("tools_file"):
        tools = parse_tools(_read(folder, meta["tools_file"], metadata, "tools_file"), f"{metadata}: tools_file")
    skills = load_skills(_path(folder, meta["skill_dir"])) if meta.get("skill_dir") else []
    model = meta.get("model")
    return AgentDefinition(
        instructions=instructions,
        tools=tuple(tools),
        skills=tuple(skills),
        model=None if model is None else str(model),
        name=meta.get("name"),
    )


def parse_tools(text: str, where: str) -> list[dict[str, Any]]:
    """``tools.json``: OpenAI function definitions (``{type: function, function: {...}}``) or bare
    ``{name, description, parameters}`` objects."""
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{where}: not valid JSON ({exc})") from None
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: expected a JSON array of tool definitions")
    tools = []
    for index, entry in enumerate(raw):
        tool = entry.get("function") if isinstance(entry, dict) and isinstance(entry.get("function"), dict) else entry
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"]:
            raise ConfigError(f"{where}: tool [{index}] needs a name")
        parameters = {"parameters": tool["parameters"]} if isinstance(tool.get("parameters"), dict) else {}
        tools.append({"name": tool["name"], "description": str(tool.get("description") or ""), **parameters})
    return tools


def load_skills(folder: Path) -> list[Skill]:
    """``<folder>/<skill>/SKILL.md`` each, in name order."""
    if not folder.is_dir():
        return []
    skills = []
    for path in sorted(folder.glob("*/SKILL.md")):
        meta, body = split_front_matter(path.read_text(encoding="utf-8-sig"), str(path))
        skills.append(Skill(str(meta.get("name") or path.parent.name), str(meta.get("description") or ""), body))
    return skills


def write_agent_config(folder: Path, agent: AgentDefinition) -> Path:
    """Write ``metadata.yaml``, ``instructions.md`` and (when there are any) ``tools.json`` and
    ``skills/``, byte-compatible with azd's layout; returns the metadata file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "instructions.md").write_text(agent.instructions, encoding="utf-8")
    meta: dict[str, Any] = {}
    if agent.name:
        meta["name"] = agent.name
    if agent.model:
        meta["model"] = agent.model
    meta["instruction_file"] = "instructions.md"
    if agent.skills:
        meta["skill_dir"] = "skills"
        for skill in agent.skills:
            skill_folder = folder / "skills" / skill.name
            skill_folder.mkdir(parents=True, exist_ok=True)
            front = yaml.safe_dump({"name": skill.name, "description": skill.description}, sort_keys=False)
            (skill_folder / "SKILL.md").write_text(f"---\n{front}---\n{skill.body}", encoding="utf-8")
    if agent.tools:
        meta["tools_file"] = "tools.json"
        (folder / "tools.json").write_text(json.dumps(list(agent.tools), indent=2) + "\n", encoding="utf-8")
    path = folder / "metadata.yaml"
    path.write_text(yaml.safe_dump(meta, sort_keys=False), encoding="utf-8")
    return path


def _path(folder: Path, given: Any) -> Path:
    return folder / str(given).replace("\\", "/")


def _read(folder: Path, given: Any, metadata: Path, key: str) -> str:
    path = _path(folder, given)
    if not path.is_file():
        raise ConfigError(f"{metadata}: {key} {path} not found", hint=f"{key} is relative to {folder}")
    return path.read_text(encoding="utf-8-sig")
