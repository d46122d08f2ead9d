"""The package has no import cycle (issue 16): not at import time, and not through a late (function-level) import.

The graph is read from the source with ``ast`` (every ``import econ...`` / ``from econ... import``), so a cycle is
found even when a late import hides it at run time (``econ.analyses.cluster`` <-> ``econ.analyses.compare`` was one).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((ROOT / "econ").rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def _graph(module_level_only: bool) -> dict[str, set[str]]:
    mods = _modules()
    graph = {m: set() for m in mods}
    for m, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in (tree.body if module_level_only else ast.walk(tree)):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            graph[m] |= {t for t in targets if t in mods and t != m and not m.startswith(t + ".")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(u: str) -> None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                found.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(graph):
        if u not in state:
            visit(u)
    return found


@pytest.mark.parametrize("module_level_only", [True, False], ids=["module-level", "with-late-imports"])
def test_econ_has_no_import_cycle(module_level_only):
    assert _cycles(_graph(module_level_only)) == []


def test_cluster_sits_above_compare():
    graph = _graph(module_level_only=False)
    assert "econ.analyses.compare" in graph["econ.analyses.cluster"]       # serving rates from the comparison
    assert "econ.analyses.cluster" not in graph["econ.analyses.compare"]   # no re-export back


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]
