"""The Agent Skill, followed as written: ``assay skills install`` in a fresh folder, then every
command block of the installed SKILL.md in order, in one shell, ending with a gated run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from tests.test_readme_snippets import ROOT, blocks


def test_the_skill_installs_where_agents_read_it_and_followed_as_written_ends_with_a_gated_run(tmp_path):
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / ".venv").symlink_to(ROOT / ".venv")  # the guide's .venv/bin/assay
    env = {**os.environ, "ASSAY_HOME": str(tmp_path / "home")}
    env.pop("ASSAY_DATABASE_URL", None)
    (install,) = blocks("The Agent Skill", "sh")
    installed = subprocess.run(["bash", "-c", install], cwd=folder, env=env, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    for place in (".claude/skills", ".github/skills", ".agents/skills"):
        assert (folder / place / "assay-evals" / "SKILL.md").is_file(), place
        assert os.access(folder / place / "assay-evals" / "scripts" / "gate.sh", os.R_OK)
    skill = folder / ".claude/skills/assay-evals"
    text = (skill / "SKILL.md").read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---")[1])
    assert front["name"] == "assay-evals" and len(front["description"]) <= 1024  # the Agent Skills limits
    steps = re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)
    assert len(steps) == 4
    env["SKILL_DIR"] = str(skill)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # `assay` as the agent finds it
    script = "set -e\n" + "\n".join(steps)
    done = subprocess.run(["bash", "-c", script], cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "no model calls" in done.stdout  # the check called nothing
    assert done.stdout.count("completed") >= 2  # the baseline and the gated run
    assert "verdict" in done.stdout and "regression" not in done.stdout.split("verdict")[-1]
