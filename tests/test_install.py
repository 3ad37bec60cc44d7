"""assay installed as a user installs it: a wheel built from the checkout (not editable) in a fresh
virtual environment, used from an empty folder elsewhere: ``assay --version``, ``assay init`` and
``assay run`` offline, and ``assay serve`` answering ``/ui``; its data files (templates, the
red-team catalog) inside the wheel.

The fresh environment gets assay's dependencies from the test environment's site-packages (a path,
not its ``.pth`` files, so the checkout's editable install stays out of sight): the machine has no
network, and what is checked here is assay's own wheel: its code, templates, migrations and data.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import urllib.request
import venv
import zipfile
from pathlib import Path

from tests.support.fixtures import free_port, poll

ROOT = Path(__file__).resolve().parents[1]


def test_a_wheel_in_a_fresh_venv_works_from_an_empty_folder(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    dist = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", dist, source], check=True, timeout=300)
    (wheel,) = dist.glob("assay-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(archive.read(n).decode() for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
    # The pytest plugin's extra brings pytest, which assay itself does not need.
    assert "Provides-Extra: pytest" in metadata and 'Requires-Dist: pytest>=8; extra == "pytest"' in metadata

    bare = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the fresh venv sees only its own
    env_dir = tmp_path / "fresh"
    venv.create(env_dir, with_pip=False)
    fresh = env_dir / "bin" / "python"
    site = subprocess.run(
        [fresh, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        env=bare,
    ).stdout.strip()
    (Path(site) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = [*pip, "--python", fresh, "install", "--no-deps", "--no-index", wheel]
    subprocess.run(install, check=True, timeout=300, env=bare)  # else pip finds assay on PYTHONPATH, installed
    assay = env_dir / "bin" / "assay"

    folder = tmp_path / "elsewhere"
    folder.mkdir()
    env = {"PATH": f"{env_dir / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "COLUMNS": "100"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([assay, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=300)

    version = run("--version")
    assert version.returncode == 0 and version.stdout.startswith("assay, version ")
    located = subprocess.run(
        [fresh, "-c", "import assay; print(assay.__file__)"], capture_output=True, text=True, env=bare
    )
    assert located.stdout.startswith(site), "the wheel's assay, not the checkout's"
    # Data files travel in the wheel: the red-team catalog, the report's templates, the migrations.
    data = "from assay.redteam.objectives import catalog; from assay.report.run_view import TEMPLATES; "
    data += "TEMPLATES.get_template('review_item.html'); print(len(catalog()))"
    found = subprocess.run([fresh, "-c", data], capture_output=True, text=True, env=bare)
    assert found.returncode == 0 and int(found.stdout) > 0, found.stderr
    made = run("init", "demo")
    assert made.returncode == 0, made.stderr
    ran = run("run", "demo/eval.yaml")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "pass rate" in ran.stdout

    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as written:
        server = subprocess.Popen(
            [assay, "serve", "--port", str(port)], cwd=folder, env=env, stdout=written, stderr=subprocess.STDOUT
        )
    try:

        def page() -> str:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/ui", timeout=5) as answer:  # noqa: S310 - loopback
                    return answer.read().decode()
            except OSError:
                return ""

        shown = poll(page, lambda html: "<h1>Runs</h1>" in html or server.poll() is not None, seconds=60)
        assert "<h1>Runs</h1>" in shown, log.read_text()
        assert "demo" in shown or "evalrun_" in shown  # the run made above, from the store in this folder
    finally:
        server.terminate()
        server.wait(timeout=20)
