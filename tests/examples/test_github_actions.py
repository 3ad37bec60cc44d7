"""The GitHub Actions example installs assay from where the user says it is (no index serves
`assay`): its install step run as written, with pip stood in by a recorder, and refused with a
message naming the variable when that is unset."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "examples/ci/github-actions.yml"


def install_step() -> str:
    steps = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["eval"]["steps"]
    (step,) = [s for s in steps if s.get("name") == "Install assay"]
    return str(step["run"])


def run_step(tmp_path: Path, source: str | None) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "calls"
    for name in ("pip", "assay"):  # stand-ins that record how they were called
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\necho "{name} $*" >> {log}\n')
        shim.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", **({"ASSAY_SOURCE": source} if source is not None else {})}
    return subprocess.run(["bash", "-eo", "pipefail", "-c", install_step()], env=env, capture_output=True, text=True)


def test_the_install_step_installs_from_the_source_named(tmp_path):
    source = "git+https://example.com/assay.git@v0.1.0"
    done = run_step(tmp_path, source)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "calls").read_text().splitlines() == [f"pip install {source}", "assay --version"]


def test_without_a_source_the_step_says_what_to_set(tmp_path):
    done = run_step(tmp_path, None)
    assert done.returncode == 1 and "set the repository variable ASSAY_SOURCE" in done.stdout
    assert not (tmp_path / "calls").exists()
    assert "pip install assay\n" not in WORKFLOW.read_text(encoding="utf-8")
