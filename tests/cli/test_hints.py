"""Every command assay prints runs as printed: hints name the program as the user ran it
(``.venv/bin/assay`` when their PATH would not find it), and pasted into a shell they work."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _shell(command: str, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command], cwd=folder, env=env, capture_output=True, text=True, timeout=300
    )


def test_hints_name_the_program_as_run_and_run_as_printed(tmp_path):
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    shutil.copytree(ROOT / "examples" / "quickstart", tmp_path / "quickstart")
    env = {**os.environ, "ASSAY_HOME": str(tmp_path / ".assay"), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    env.pop("ASSAY_DATABASE_URL", None)

    ran = _shell(".venv/bin/assay run quickstart/eval.yaml", tmp_path, env)
    assert ran.returncode == 0, ran.stderr
    listed = _shell(".venv/bin/assay runs list", tmp_path, env)
    no_datasets = _shell(".venv/bin/assay dataset list", tmp_path, env)
    printed = ran.stdout + listed.stdout + no_datasets.stdout
    commands = re.findall(r"(?:^|[:·] |  )(\S*assay (?:runs show|results|report|dataset add)[^·\n]*)", printed, re.M)
    assert len(commands) >= 5, printed
    assert all(c.startswith(".venv/bin/assay ") for c in commands), commands  # never a bare `assay`
    run_id = re.search(r"run id: (\S+)", ran.stdout).group(1)
    for command in commands:
        if "dataset add" in command:
            continue  # its NAME FILE are the user's to fill in
        pasted = command.strip().replace(" RUN", f" {run_id}")
        done = _shell(pasted, tmp_path, env)
        assert done.returncode == 0, (pasted, done.stderr)
