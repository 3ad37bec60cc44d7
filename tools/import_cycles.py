"""Find import cycles among assay's modules, counting every import: at module level, inside functions
(which run later but still tie the two modules together for a reader) and under ``TYPE_CHECKING``.

    python tools/import_cycles.py [--packages] [--without-type-checking]

Exits 1 and prints each cycle when there is one. ``--packages`` draws the graph between the
top-level packages instead (``assay.redteam`` → ``assay.targets``), where a cycle is a knot a reader
must untangle even when no two modules import each other.

An import names the module it loads: ``from assay.stats import core`` is an edge to
``assay.stats.core``, ``from assay.stats.core import wilson`` an edge to ``assay.stats.core``. The
packages a module's parents are (``assay/__init__.py``) are not edges: Python runs them first for
every import, so counting them would make every package a cycle with its children.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
ROOT = "assay"


def module_names(src: Path = SRC) -> dict[str, Path]:
    """Every module of the package, by dotted name (a package by its own name)."""
    names = {}
    for path in sorted((src / ROOT).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, type_checking: bool = False) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement in a tree, anywhere, with whether it sits under ``if TYPE_CHECKING``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, type_checking
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), True)
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), type_checking)
        else:
            yield from _imports(node, type_checking)


def imports_of(name: str, path: Path, modules: dict[str, Path], with_type_checking: bool = True) -> set[str]:
    """The assay modules ``name`` imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node, type_checking in _imports(ast.parse(path.read_text(), filename=str(path))):
        if type_checking and not with_type_checking:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        for target in targets:
            while target and target not in modules:  # `import a.b.c` of a name inside a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph(packages: bool = False, with_type_checking: bool = True, src: Path = SRC) -> dict[str, set[str]]:
    """Module → the modules it imports (or package → packages)."""
    modules = module_names(src)
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = imports_of(name, path, modules, with_type_checking)
        if packages:
            name = ".".join(name.split(".")[:2])
            targets = {".".join(t.split(".")[:2]) for t in targets} - {name}
        edges.setdefault(name, set()).update(targets)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", action="store_true", help="the graph between top-level packages")
    parser.add_argument("--without-type-checking", action="store_true", help="leave out TYPE_CHECKING imports")
    args = parser.parse_args(argv)
    edges = graph(packages=args.packages, with_type_checking=not args.without_type_checking)
    found = cycles(edges)
    for component in found:
        print("import cycle: " + " ↔ ".join(component))
    what = "packages" if args.packages else "modules"
    print(f"{len(edges)} {what}, {sum(map(len, edges.values()))} imports, {len(found)} cycles")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
