"""The README's CLI examples are what `econ` prints: every ``$ econ ...`` of a ```console block is run.

Conventions (``scripts/update_readme.py``, which regenerates the blocks from real runs):

- a command line is ``$ econ ARGS``; its output runs to the next ``$`` line or the end of the block;
  commands run in process at 100 columns (``COLUMNS=100``), stdout then stderr;
- text after ``  #`` on a command line is a comment for the reader;
- ``# (selected fields)`` marks an abridged output: the JSON keys (or ``name  value`` lines) shown must
  equal the real ones; otherwise the whole output must match, up to whitespace.

When this fails after a change of the model or the CLI: ``.venv/bin/python scripts/update_readme.py``,
read the diff, commit README.md.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("update_readme", ROOT / "scripts" / "update_readme.py")
update_readme = importlib.util.module_from_spec(_spec)
sys.modules["update_readme"] = update_readme  # dataclasses look their module up while the class is made
_spec.loader.exec_module(update_readme)

EXAMPLES = update_readme.examples((ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_readme_has_cli_examples():
    assert len(EXAMPLES) >= 3
    assert all(ex.argv for ex in EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: " ".join(e.argv)[:60])
def test_readme_example_matches_a_real_run(example):
    actual = update_readme.run(example.argv)
    problem = update_readme.compare(example, actual)
    assert problem is None, (f"README example `econ {' '.join(example.argv)}` is stale: {problem}\n"
                             "Regenerate: .venv/bin/python scripts/update_readme.py")


def test_parser_conventions():
    text = ("intro\n```console\n$ econ list models   # (selected fields)\n{\n  \"a\": 1\n}\n\n"
            "$ econ cost --model x\nline one\n   line  two  \n```\n")
    a, b = update_readme.examples(text)
    assert a.argv == ["list", "models"] and a.selected and a.output == ["{", "  \"a\": 1", "}", ""]
    assert b.argv == ["cost", "--model", "x"] and not b.selected
    assert update_readme.compare(b, "line one\nline two\n\n") is None
    assert update_readme.compare(b, "line one\nline three\n") is not None
    assert update_readme.compare(a, '{"a": 1, "b": 2}') is None
    assert update_readme.compare(a, '{"a": 2}') is not None


def test_regeneration_rewrites_only_the_outputs():
    text = "x\n```console\n$ econ cost --model x   # note\nold\n```\ny\n"
    original_run = update_readme.run
    try:
        update_readme.run = lambda argv: "new output\n"
        assert update_readme.update(text) == "x\n```console\n$ econ cost --model x   # note\nnew output\n```\ny\n"
    finally:
        update_readme.run = original_run
