"""The read-only workspace tools of an agentic grader: a path that leads out of the folder, by ``..``
or through a symbolic link, is refused; listing, reading and searching stay inside."""

from __future__ import annotations

import asyncio

from assay.targets.tools.base import ToolSet
from assay.targets.tools.workspace import WorkspaceTools


def _calls(root, *calls):
    async def run():
        tools = ToolSet([WorkspaceTools(root)])
        await tools.ready()
        return [await tools.call(str(i), name, arguments) for i, (name, arguments) in enumerate(calls)]

    return asyncio.run(run())


def test_paths_out_of_the_workspace_are_refused_and_inside_ones_read(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("def f():\n    return 42\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("hidden")
    (tmp_path / "secret.txt").write_text("secret")
    (root / "link").symlink_to(tmp_path / "secret.txt")
    listed, read, found, up, linked, missing = _calls(
        root,
        ("list_files", "{}"),
        ("read_file", '{"path": "src/a.py"}'),
        ("search_files", '{"pattern": "return \\\\d+"}'),
        ("read_file", '{"path": "../secret.txt"}'),
        ("read_file", '{"path": "link"}'),
        ("read_file", '{"path": "src/b.py"}'),
    )
    assert listed.error is None and listed.output.splitlines() == ["link", "src/a.py"]  # .git is not listed
    assert read.output == "def f():\n    return 42\n"
    assert found.output == "src/a.py:2:     return 42"
    assert "outside the workspace" in (up.error or "") and "secret" not in up.output.replace("secret.txt", "")
    assert "outside the workspace" in (linked.error or "")
    assert "no file 'src/b.py'" in (missing.error or "")
