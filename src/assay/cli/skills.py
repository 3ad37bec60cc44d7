"""``assay skills``: the Agent Skill that teaches a coding agent to use assay, copied where agents read skills."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from assay.cli.common import out

SKILLS = Path(__file__).resolve().parent.parent / "skills"
"""The skills shipped with assay: one folder each, its SKILL.md and scripts."""

PROJECT_FOLDERS = (".claude/skills", ".github/skills", ".agents/skills")
"""Where coding agents look for a project's skills: Claude Code, GitHub Copilot (VS Code), and the
cross-agent folder (Codex, Cursor, Gemini CLI and others read ``.agents/skills``)."""


@click.group("skills")
def skills_group() -> None:
    """The Agent Skill that teaches coding agents to write, run, read and gate evals."""


@skills_group.command("install")
@click.option(
    "--to",
    "folders",
    multiple=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="A skills folder to install into (repeatable); default: .claude/skills, .github/skills, .agents/skills.",
)
@click.option("--user", is_flag=True, help="Into your home folder's ~/.claude/skills and ~/.agents/skills instead.")
def install(folders: tuple[Path, ...], user: bool) -> None:
    """Copy the assay-evals skill (SKILL.md and its scripts) into the folders coding agents read."""
    if not folders and user:
        folders = (Path.home() / ".claude/skills", Path.home() / ".agents/skills")
    elif not folders:
        folders = tuple(Path.cwd() / folder for folder in PROJECT_FOLDERS)
    for skill in sorted(path for path in SKILLS.iterdir() if (path / "SKILL.md").is_file()):
        for folder in folders:
            target = folder / skill.name
            shutil.copytree(skill, target, dirs_exist_ok=True)
            out.print(f"installed {skill.name} → {target}", highlight=False)
