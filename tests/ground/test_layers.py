"""The package's layers (../shared/DESIGN.md "Package layout"): each folder imports only from the floors below it.

Every ``import`` and ``from ... import`` in econ/ is read with ``ast`` (function-level imports too: a lazy import
of a higher layer is still a dependency on it), mapped to its layer, and checked against one rule per layer. A
second test finds import cycles among the modules, through late (function-level) imports too: a late import
hides a cycle at run time but not from a reader (``econ.analyses.cluster`` <-> ``econ.analyses.compare`` was one).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "econ"

GROUND = {"econ", "econ.units", "econ.errors", "econ.validate", "econ.safe_write", "econ.assumptions", "econ.presets",
          "econ.vocabulary", "econ.formatting"}
"""The ground floor. ``econ.formatting`` (numbers as an analyst reads them: $6.76B, 98.9 EFLOP/s) sits here rather
than in io/ (DESIGN.md's sketch) because analyses write prose reasons and error messages with it."""
ORDER = ("ground", "physics", "economics", "tables", "engine", "analyses", "io", "cli")
ALLOWED = {
    "ground": {"ground"},
    "physics": {"ground", "physics"},
    "economics": {"ground", "physics", "economics"},
    "tables": {"ground", "physics", "tables"},
    "engine": {"ground", "physics", "economics", "tables", "engine"},
    "analyses": {"ground", "physics", "economics", "tables", "engine", "analyses"},
    "io": {"ground", "physics", "economics", "tables", "engine", "analyses", "io"},
    "cli": set(ORDER),
}
"""Which layers each layer may import from (the floors below it and itself)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer(module: str) -> str:
    if module in GROUND:
        return "ground"
    if module == "econ.cli" or module.startswith("econ.commands"):
        return "cli"
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in ORDER:
        return parts[1]
    raise AssertionError(f"{module} is in no layer: add it to a folder of DESIGN.md's package layout")


def imports(path: Path, *, top_level_only: bool = False) -> set[str]:
    """The econ modules ``path`` imports (``from econ.x import y`` counts ``econ.x.y`` when that is a module)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    nodes = tree.body if top_level_only else ast.walk(tree)
    out = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "econ"}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "econ":
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                out.add(sub if sub in MODULES else node.module)
    return out


FILES = sorted(PACKAGE.rglob("*.py"))
MODULES = {module_name(p) for p in FILES}


def test_every_module_is_in_a_layer():
    assert {layer(m) for m in MODULES} <= set(ORDER)
    assert {"physics", "economics", "tables", "engine", "analyses", "io", "cli"} <= {layer(m) for m in MODULES}


@pytest.mark.parametrize("path", FILES, ids=lambda p: module_name(p))
def test_no_module_imports_from_a_higher_layer(path):
    me = layer(module_name(path))
    bad = sorted(m for m in imports(path) if layer(m) not in ALLOWED[me])
    assert not bad, f"{module_name(path)} ({me}) imports {bad}: only {sorted(ALLOWED[me])} are allowed"


def test_no_import_cycle():
    graph = {module_name(p): {m for m in imports(p) if m in MODULES} for p in FILES}
    for pkg in list(graph):  # a package's __init__ runs before its submodules: an edge from each submodule
        for m in graph:
            if m.startswith(pkg + ".") and pkg != "econ":
                graph[m].add(pkg)
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if n == m or (m.startswith(n + ".")):  # a submodule's own package is loaded first, not a cycle
                continue
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(n):] + [n]))
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_the_rule_can_fail(tmp_path):
    """The checker itself: a physics module importing the engine is refused."""
    bad = tmp_path / "econ" / "physics" / "x.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("from econ.engine import evaluate\n")
    assert "econ.engine" in imports(bad)
    assert layer("econ.engine") not in ALLOWED[layer("econ.physics.x")]
