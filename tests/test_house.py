"""The house in order: a short package root, and no module importing another that imports it back,
counting imports inside functions and under ``TYPE_CHECKING`` (``tools/import_cycles.py``, also run
by ``make lint``)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import import_cycles  # noqa: E402

MAX_ROOT_MODULES = 12


def test_the_package_root_holds_at_most_twelve_modules():
    root = sorted(p.name for p in (ROOT / "src" / "assay").glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, root


def test_no_module_is_part_of_an_import_cycle():
    assert import_cycles.cycles(import_cycles.graph()) == []


def test_the_check_finds_a_cycle_through_a_function_level_and_a_type_checking_import(tmp_path):
    package = tmp_path / "assay"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from assay.sub.a import A\n")
    (package / "sub" / "a.py").write_text("def f():\n    from assay.sub import b\n    return b\nclass A: ...\n")
    (package / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from assay.sub.c import C\n"
    )
    (package / "sub" / "c.py").write_text("from .a import A as C\n")
    (package / "d.py").write_text("import assay.sub.c\n")

    found = import_cycles.cycles(import_cycles.graph(src=tmp_path))

    assert found == [["assay.sub.a", "assay.sub.b", "assay.sub.c"]]
    without = import_cycles.graph(src=tmp_path, with_type_checking=False)
    assert import_cycles.cycles(without) == []
    packages = import_cycles.graph(src=tmp_path, packages=True)
    assert packages["assay.d"] == {"assay.sub"} and import_cycles.cycles(packages) == []
