"""Docs that cannot drift: every built-in evaluator and every CLI command is documented, the CLI
reference is generated from the commands, the docs site builds with no warning, its Python blocks
run, and the README stays a front door."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from assay.cli.main import cli
from assay.evaluators import load_catalog

ROOT = Path(__file__).resolve().parents[1]


def test_every_builtin_evaluator_is_in_the_catalog_doc():
    doc = (ROOT / "docs/evaluators.md").read_text(encoding="utf-8")
    missing = [spec.name for spec in load_catalog().specs() if f"`{spec.name}`" not in doc]
    assert missing == []


def test_builtins_register_through_the_entry_point():
    from importlib.metadata import entry_points

    (entry,) = [e for e in entry_points(group="assay") if e.name == "builtins"]
    assert entry.value == "assay.evaluators.builtin:register"


def test_every_cli_command_is_in_the_manual():
    import click

    from tests.test_readme_snippets import PAGES

    readme = "\n".join(PAGES.values())
    context = click.Context(cli)
    commands = []
    for name in cli.list_commands(context):
        command = cli.get_command(context, name)
        subcommands = getattr(command, "commands", None)
        commands += [f"assay {name} {sub}" for sub in subcommands] if subcommands else [f"assay {name}"]
    assert [c for c in commands if c not in readme] == []


def test_the_lazy_help_says_what_each_command_says():
    import click

    from assay.cli.main import COMMANDS

    context = click.Context(cli)
    for name, (_, _, shown) in COMMANDS.items():
        command = cli.get_command(context, name)
        assert command is not None and command.name == name
        assert command.get_short_help_str(limit=100) == shown, name


def test_the_readme_quickstart_yaml_is_the_file():
    import yaml

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("`examples/quickstart/eval.yaml` scores")
    block = readme[readme.index("```yaml\n", start) + 8 : readme.index("```", readme.index("```yaml\n", start) + 8)]
    assert yaml.safe_load(block) == yaml.safe_load((ROOT / "examples/quickstart/eval.yaml").read_text())


def test_the_cli_reference_is_generated_from_the_commands():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from cli_doc import render
    finally:
        sys.path.remove(str(ROOT / "tools"))
    assert (ROOT / "docs/cli.md").read_text(encoding="utf-8") == render(), "run: python tools/cli_doc.py"


def test_the_docs_site_builds_strictly(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and "WARNING" not in done.stderr, done.stderr
    site = tmp_path / "site"
    assert (site / "guides" / "redteam.html").exists()
    # Opened from disk (file://), every link between pages names a file: a folder would open as a listing.
    links = 0
    for page in site.rglob("*.html"):
        for href in re.findall(r'href="([^"#?]+)[^"]*"', page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:|//", href) or href.startswith("/"):
                continue
            target = (page.parent / href).resolve()
            assert target.is_file(), f"{page.relative_to(site)} links to {href}, which is not a file"
            links += 1
    assert links > 100


def test_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 350
    linked = set(re.findall(r"\]\((docs/[^)#]+)\)", readme))
    pages = {str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")}
    assert linked == pages, "every docs page linked from the README, and every link a page"


def test_the_docs_python_blocks_run(tmp_path, monkeypatch):
    """The import swap of the migration page, and the custom evaluator of the catalog page, over a data file."""
    from tests.test_readme_snippets import blocks

    migrating = (ROOT / "docs/migrating-from-azure-ai-evaluation.md").read_text(encoding="utf-8")
    (swap,) = re.findall(r"```python\n(.*?)```", migrating[: migrating.index("\n## ")], re.S)
    exec(compile(swap, "docs/migrating-from-azure-ai-evaluation.md", "exec"), {})  # noqa: S102 - the docs' own code
    (custom,) = blocks("Your own evaluators", "python")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / ".assay"))
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    namespace: dict = {}
    exec(compile(custom, "docs/evaluators.md", "exec"), namespace)  # noqa: S102 - the docs' own code
    data = "examples/quickstart/support_qa.jsonl"  # the block's own data: one answer of 16 is word for word
    result = namespace["assay"].evaluate(data=data, evaluators={"exact": namespace["exact"]})
    assert [row["outputs.exact.exact_result"] for row in result["rows"]].count("pass") == 1
