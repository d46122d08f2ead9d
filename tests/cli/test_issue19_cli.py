"""Issue 19.2, the CLI's defects: `econ fleet size` takes the common option groups and a serving precision, and a
mistyped flag is told the near-best flag only."""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import re
from pathlib import Path

from econ.cli import main


def test_fleet_size_takes_tco_region_and_precision(capsys):
    assert main(["fleet", "size", "--hardware", "b200", "--power-mw", "10", "--model", "llama-3.3-70b", "--tco",
                 "hyperscaler", "--region", "us-tx-industrial", "--precision", "fp8", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    row = doc[0] if isinstance(doc, list) else doc
    assert row["serving_precision"] == "fp8"
    assert main(["fleet", "size", "--hardware", "b200", "--power-mw", "10", "--precision", "fp9"]) != 0
    assert "--precision='fp9' is not one of ['bf16', 'fp8', 'fp4']" in capsys.readouterr().err


def test_a_typo_gets_the_near_best_flag_only(capsys):
    code = None
    try:
        code = main(["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--utilisation", "0.5"])
    except SystemExit as exc:
        code = exc.code
    assert code != 0
    err = capsys.readouterr().err
    assert "--utilisation: did you mean --utilization?" in err  # not "... or --speculation?"


# ---- issue 19.2: no text names a flag that does not exist ------------------------------------------------------------

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
OTHER_PROGRAMS = ("vLLM", "SGLang", "TensorRT", "llama.cpp")
"""A text that names one of these programs may quote its flags (vLLM's ``--kv-cache-dtype``): they are not econ's."""


def _parsers():
    """(command words, parser) of the full parser and every (nested) subcommand."""
    from econ.cli import build_parser

    def walk(parser, words=()):
        yield words, parser
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        for name, sub in (subs[0].choices.items() if subs else ()):
            yield from walk(sub, (*words, name))

    return list(walk(build_parser()))


def _own(parser) -> set[str]:
    return {o for a in parser._actions for o in a.option_strings}


def _texts(path: Path):
    """(line, text) of every string literal of ``path`` a person reads: not a docstring (a developer's), not a
    ``flag=`` declaration (the vocabulary's name of a flag) and not an element of a list or tuple literal (another
    program's argv: ``git rev-parse --short``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body and \
                isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            skip.add(id(node.body[0].value))
        if isinstance(node, ast.keyword) and node.arg == "flag":
            skip.add(id(node.value))
        if isinstance(node, (ast.List, ast.Tuple)):
            skip.update(id(e) for e in node.elts)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if not any(p in node.value for p in OTHER_PROGRAMS):
                yield node.lineno, node.value


def test_every_help_text_names_only_flags_of_its_own_subcommand():
    """`econ cluster --help` said "the share of input tokens that hit is --cache-hit-rate": a flag econ cluster did
    not have (the hit share came only from --scenario); it now has it."""
    bad = [(" ".join(words), a.option_strings, f) for words, parser in _parsers() for a in parser._actions
           for f in FLAG.findall(a.help or "") if f not in _own(parser)]
    bad += [(" ".join(words), "description", f) for words, parser in _parsers()
            for f in FLAG.findall((parser.description or "") + (parser.epilog or "")) if f not in _own(parser)]
    assert not bad, bad
    assert main(["cluster", "--hardware", "h100-sxm", "--gpus", "8", "--cache-hit-rate", "2"]) == 2


def test_every_flag_named_in_a_text_under_econ_exists():
    """A command module's texts (errors, help, printed lines) name flags of its own subcommands; any other text under
    econ/ names flags of some subcommand; "econ cost --ideal" names a flag of the subcommand it names."""
    import econ.cli as cli

    parsers = _parsers()
    every = set().union(*(_own(p) for _, p in parsers))
    root = Path(cli.__file__).parent
    bad = []
    for path in sorted(root.rglob("*.py")):
        allowed = every
        if path.parent.name == "commands" and not path.stem.startswith("_"):
            sub = argparse.ArgumentParser().add_subparsers()
            importlib.import_module(f"econ.commands.{path.stem}").register(sub)
            allowed = set().union(*(_own(p) for words, p in parsers if words and words[0] in sub.choices))
        for line, text in _texts(path):
            for m in FLAG.finditer(text):
                named = re.search(r"\becon((?: [a-z][\w-]*)+) $", text[:m.start()])
                words = tuple(named.group(1).split()) if named else ()
                flags = next((_own(p) for w, p in sorted(parsers, key=lambda x: -len(x[0])) if w and w == words[:len(w)]),
                             allowed)
                if m.group() not in flags:
                    bad.append(f"{path.relative_to(root.parent)}:{line} {m.group()}")
    assert not bad, bad
