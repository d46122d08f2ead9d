"""Regenerate the README's CLI examples from real runs, so they never drift from what `econ` prints.

Usage::

    .venv/bin/python scripts/update_readme.py            # rewrite README.md in place
    .venv/bin/python scripts/update_readme.py --check    # exit 1 and show a diff if it is out of date

``tests/cli/test_readme.py`` runs the same commands and fails when the README differs; after a change of
the model or of the CLI's output, run this script and commit README.md.

Conventions of a ```console block (documented here and in the test):

- A command is a line ``$ econ ARGS``; its output is every following line up to the next ``$`` line
  or the end of the block. Commands run in process (``econ.cli.main``), stdout then stderr, with the
  terminal :data:`WIDTH` columns wide (``COLUMNS``), from the repository root.
- Text after ``  #`` on a command line is a comment for the reader, never passed to the CLI.
- A comment containing ``(selected fields)`` marks an abridged output: for JSON, the README shows
  some keys of the object and each must equal the real value; for ``name  value`` lines, each line
  shown must appear in the real output, in order. Regeneration keeps the same selection.
- Otherwise the output must match exactly, up to whitespace (runs of spaces count as one; trailing
  spaces and blank lines at the end are ignored).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
WIDTH = 100
"""Terminal width the README's examples are printed at (``COLUMNS``)."""

SELECTED = "(selected fields)"
_FENCE = re.compile(r"^```console[^\n]*\n(.*?)^```", re.S | re.M)


@dataclass
class Example:
    """One ``$ econ ...`` line of the README and the output shown under it."""

    command: str          # the line after "$ ", comment included
    output: list[str]     # the lines shown
    start: int            # character offsets of the output lines in the README (for rewriting)
    end: int

    @property
    def argv(self) -> list[str]:
        """Arguments after ``econ``, without the comment."""
        words = shlex.split(self.command, comments=True)
        if not words or words[0] != "econ":
            raise ValueError(f"README example is not an econ command: {self.command!r}")
        return words[1:]

    @property
    def comment(self) -> str:
        m = re.search(r"\s#\s*(.*)$", self.command)
        return m.group(1) if m else ""

    @property
    def selected(self) -> bool:
        return SELECTED in self.comment


def examples(text: str) -> list[Example]:
    """Every ``$ econ`` command of the README's ```console blocks, with the output shown under it."""
    out = []
    for block in _FENCE.finditer(text):
        body_start = block.start(1)
        lines = block.group(1).splitlines(keepends=True)
        offset = body_start
        current = None
        for line in lines:
            if line.startswith("$ "):
                if current is not None:
                    current.end = offset
                    out.append(current)
                current = Example(line[2:].rstrip("\n"), [], offset + len(line), offset + len(line))
            elif current is not None:
                current.output.append(line.rstrip("\n"))
            offset += len(line)
        if current is not None:
            current.end = offset
            out.append(current)
    return out


def run(argv: list[str]) -> str:
    """The text ``econ ARGV`` prints (stdout, then stderr) at :data:`WIDTH` columns, from the repo root."""
    from econ.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = {k: os.environ.get(k) for k in ("COLUMNS", "NO_COLOR")}
    cwd = os.getcwd()
    os.environ.update(COLUMNS=str(WIDTH), NO_COLOR="1")
    try:
        os.chdir(ROOT)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(list(argv))
            except SystemExit:  # argparse errors print their usage and exit 2
                pass
    finally:
        os.chdir(cwd)
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return out.getvalue() + err.getvalue()


def normalize(lines) -> list[str]:
    """Lines with runs of whitespace as one space, trailing spaces and trailing blank lines dropped."""
    norm = [re.sub(r"\s+", " ", ln).strip() for ln in lines]
    while norm and not norm[-1]:
        norm.pop()
    return norm


REL_TOL = 1e-9
"""Floats of a JSON example equal to this relative tolerance (the last digit moves with summation order)."""


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return (isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool)
                and abs(a - b) <= REL_TOL * max(abs(a), abs(b)))
    return a == b


def _json_selection(shown: list[str], actual: str) -> tuple[dict, dict]:
    """The README's selected keys and the real values of the same keys (README's value kept when equal)."""
    want = json.loads("\n".join(shown))
    got = json.loads(actual)
    real = {k: got.get(k, "<missing>") for k in want}
    return want, {k: want[k] if _same(want[k], real[k]) else real[k] for k in want}


def _record_lines(shown: list[str], actual: str) -> tuple[list[str], list[str]]:
    """The README's abridged ``name value`` lines and the real lines of the same names, in order."""
    real = {ln.split(None, 1)[0]: ln for ln in actual.splitlines() if ln.strip()}
    picked = [real.get(ln.split(None, 1)[0], f"{ln.split(None, 1)[0]}  <missing>") for ln in shown if ln.strip()]
    return [ln for ln in shown if ln.strip()], picked


def compare(example: Example, actual: str) -> str | None:
    """None when the README shows what the command prints; else a short explanation with a diff."""
    if example.selected:
        if example.output and example.output[0].lstrip().startswith("{"):
            want, got = _json_selection(example.output, actual)
            if want == got:
                return None
            return f"selected JSON fields differ:\n  README: {want}\n  real:   {got}"
        shown, picked = _record_lines(example.output, actual)
        if normalize(shown) == normalize(picked):
            return None
        diff = "\n".join(difflib.unified_diff(normalize(shown), normalize(picked), "README", "real", lineterm=""))
        return f"selected lines differ:\n{diff}"
    want, got = normalize(example.output), normalize(actual.splitlines())
    if want == got:
        return None
    diff = "\n".join(difflib.unified_diff(want, got, "README", "real", lineterm="", n=1))
    return f"output differs:\n{diff}"


def regenerated(example: Example, actual: str) -> list[str]:
    """The output lines to write under ``example``: the real output (the same selection when abridged)."""
    if example.selected:
        if example.output and example.output[0].lstrip().startswith("{"):
            want, got = _json_selection(example.output, actual)
            return json.dumps(got, indent=2).splitlines()
        return _record_lines(example.output, actual)[1]
    lines = [ln.rstrip() for ln in actual.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def update(text: str) -> str:
    """The README text with every example's output replaced by a real run."""
    pieces, last = [], 0
    for ex in examples(text):
        new = regenerated(ex, run(ex.argv))
        blank = len(ex.output) - len(normalize(ex.output)) if ex.output else 0
        new += [""] * (blank - (len(new) - len(normalize(new))))  # keep the blank lines between examples
        pieces.append(text[last:ex.start])
        pieces.append("".join(ln + "\n" for ln in new))
        last = ex.end
    pieces.append(text[last:])
    return "".join(pieces)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 with a diff if README.md is stale")
    ap.add_argument("--readme", type=Path, default=README)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    text = args.readme.read_text(encoding="utf-8")
    new = update(text)
    if args.check:
        if new == text:
            print(f"{args.readme}: examples up to date")
            return 0
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True), "README.md",
                                                   "README.md (real runs)"))
        return 1
    if new != text:
        args.readme.write_text(new, encoding="utf-8")
        print(f"{args.readme}: {len(examples(text))} examples regenerated")
    else:
        print(f"{args.readme}: examples already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
