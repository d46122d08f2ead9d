"""The ``econ`` command line: argparse -> the same public functions as the dashboard.

Subcommands live in ``econ/commands/<name>.py``, each exposing ``register(subparsers)``; they gather
inputs, call ``econ``, and print or write. Nothing here computes economics.

Errors speak the CLI's language: a mistyped flag or choice gets "did you mean ...?" (difflib over the
subcommand's own flags; Python 3.11's argparse has no ``suggest_on_error``), and messages from the
core are translated once, here (:data:`FIELD_FLAGS`, :data:`PHRASES`), from field names
(``num_gpus=``, ``basis=rental``, ``force=True``) to the flags a user types (``--gpus=``, ``--rental``,
``--force``).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import pkgutil
import re
import sys
from pathlib import Path

from econ import __version__
from econ.errors import EconError

_OTHER_FLAGS: dict[str, str] = {
    "context_tokens": "--context", "max_ttft_s": "--max-ttft-s", "max_gpus": "--max-gpus",
    "max_prefill_gpus": "--max-prefill-gpus",
    "arrival_rate_per_s": "--arrival-rate", "scale_up_domain_sizes": "--scale-up-domain", "top": "--top", "levels": "--at",
    "usd_per_m_input_tokens": "--input-price", "usd_per_m_output_tokens": "--output-price",
    "usd_per_m_cached_input_tokens": "--cached-input-price", "output_tokens_per_s_per_user": "--speed",
    "weight_format": "--weight-format", "generation": "--generation", "disclosure": "--disclosure",
    "gpu_hours_per_day": "--gpu-hours-per-day", "input_tokens_per_day": "--input-tokens-per-day",
    "cached_input_tokens_per_day": "--cached-input-tokens-per-day", "output_tokens_per_day": "--output-tokens-per-day",
}


def _field_flags() -> dict[str, str]:
    from econ.vocabulary import FIELDS

    return {**{n: f.flag_name for n, f in FIELDS.items() if f.flag_name}, **_OTHER_FLAGS}


FIELD_FLAGS: dict[str, str] = _field_flags()
"""Core field name -> the flag that sets it: the vocabulary's flags (econ.vocabulary.FIELDS) and the flags of\ninputs outside it. A message names a flag only when the user typed it (see :func:`main`)."""

PHRASES: tuple[tuple[str, str], ...] = (
    (r";?\s*first bad row \d+(?: of \d+)?", ""),           # row indices of a one-row CLI call mean nothing
    (r"\bforce=True\b", "--force"),
    (r"\bbasis=['\"]?rental['\"]?", "--rental"),
    (r"\bbasis=['\"]?owned['\"]?", "--owned"),
    (r"\bstream_input_embedding=True\b", "--stream-embeddings"),
)
"""(regex, replacement) applied to every core error message before the field names."""


def cli_message(message: str, flags: set[str] | None = None) -> str:
    """A core error message in the CLI's vocabulary: ``num_gpus=3`` -> ``--gpus=3``; ``basis=rental`` -> ``--rental``.

    Parameters
    ----------
    message : str
        ``str(exc)`` of an :class:`econ.errors.EconError`.
    flags : set of str, optional
        Option strings of the running subcommand; a field is renamed only to a flag it has (None: any).
    """
    for pattern, repl in PHRASES:
        if flags is None or not repl or repl in flags:
            message = re.sub(pattern, repl, message)

    def rename(m: re.Match) -> str:
        flag = FIELD_FLAGS[m.group(1)]
        return f"{flag}=" if flags is None or flag in flags else m.group(0)

    names = "|".join(sorted(map(re.escape, FIELD_FLAGS), key=len, reverse=True))
    return re.sub(rf"(?<![\w\-.`'/])({names})=", rename, message)


class EconArgumentParser(argparse.ArgumentParser):
    """argparse with "did you mean" for mistyped flags, subcommands and choices (difflib)."""

    def parse_known_args(self, args=None, namespace=None):
        if args is None:
            args = sys.argv[1:]
        self._argv = list(args)
        return super().parse_known_args(args, namespace)

    def _subparser_for(self, argv: list[str]) -> argparse.ArgumentParser:
        """The (nested) subcommand parser the words of ``argv`` select: ``quotes check`` -> its parser."""
        parser = self
        for word in argv:
            subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            if not subs:
                break
            if word in subs[0].choices:
                parser = subs[0].choices[word]
        return parser

    def option_strings(self) -> set[str]:
        """Every long and short flag of this parser."""
        return {o for a in self._actions for o in a.option_strings}

    def error(self, message: str):
        hint = ""
        m = re.match(r"unrecognized arguments: (.*)", message)
        if m:
            parser = self._subparser_for(getattr(self, "_argv", []))
            known = sorted(o for o in parser.option_strings() if o.startswith("--"))
            tips = []
            for word in m.group(1).split():
                if not word.startswith("-"):
                    continue
                typed = word.split("=", 1)[0]
                close = difflib.get_close_matches(typed, known, n=3, cutoff=0.6)
                if close:  # only the near-best: a far second guess misleads more than it helps
                    best = difflib.SequenceMatcher(None, typed, close[0]).ratio()
                    close = [c for c in close if difflib.SequenceMatcher(None, typed, c).ratio() >= best - 0.1]
                    tips.append(f"{word.split('=', 1)[0]}: did you mean {' or '.join(close)}?")
            if tips:
                hint = "\n" + "\n".join(tips)
            if parser is not self:
                parser.print_usage(sys.stderr)
                parser.exit(2, f"{parser.prog}: error: {message}{hint}\n")
        m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if m:
            choices = re.findall(r"'([^']*)'", m.group(2)) or [c.strip() for c in m.group(2).split(",")]
            close = difflib.get_close_matches(m.group(1), choices, n=3, cutoff=0.5)
            if close:
                hint = f"\ndid you mean {' or '.join(repr(c) for c in close)}?"
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}{hint}\n")


def _command_modules() -> list[str]:
    import econ.commands as pkg
    return sorted(i.name for i in pkgutil.iter_modules(pkg.__path__) if not i.name.startswith("_"))


def _declared_commands(module: str) -> list[tuple[str, str]] | None:
    """(name, help) of the top-level subcommands a command module registers, read from its source without
    importing it (``sub.add_parser("name", help="...")`` calls on ``register``'s first argument, literal
    strings); None when they cannot be read statically (the module is then imported)."""
    import ast

    import econ.commands as pkg
    path = Path(pkg.__path__[0]) / f"{module}.py"
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):  # pragma: no cover - a broken module fails loudly when imported
        return None
    reg = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "register"), None)
    if reg is None or not reg.args.args:
        return None
    sub = reg.args.args[0].arg
    out = []
    for node in ast.walk(reg):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_parser"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == sub):
            if not (node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                return None
            help_kw = next((k.value for k in node.keywords if k.arg == "help"), None)
            if help_kw is not None and not (isinstance(help_kw, ast.Constant) and isinstance(help_kw.value, str)):
                return None
            out.append((node.args[0].value, help_kw.value if help_kw is not None else ""))
    return out or None


def _stub_names(module: str) -> list[str]:
    """Names of the subcommands ``module`` registers (``<first arg of register>.add_parser("name"``), by a pattern."""
    import econ.commands as pkg
    try:
        text = (Path(pkg.__path__[0]) / f"{module}.py").read_text(encoding="utf-8")
    except OSError:  # pragma: no cover
        return []
    m = re.search(r"^def register\((\w+)", text, re.M)
    return re.findall(rf"\b{m.group(1)}\.add_parser\(\s*[\"']([\w-]+)[\"']", text) if m else []


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with the subcommand modules of ``econ.commands`` registered.

    With ``argv`` (what :func:`main` parses), only the module of the subcommand asked for is imported;
    the others appear by name and one-line help read from their source, so ``econ --help`` and each
    command start without importing Polars, NumPy or SciPy for commands that are not run (issue 8: CLI
    start-up). Without ``argv``: every module is imported and registered (the full parser, for tests and
    the README generator).
    """
    parser = EconArgumentParser(
        prog="econ", description="LLM inference economics: what does it cost to serve model M on hardware H?")
    parser.add_argument("--version", action="version", version=f"econ {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = _command_modules()
    first = next((w for w in (argv or []) if not w.startswith("-")), None)
    if first in modules:  # the running subcommand's module is imported; the others are name-only stubs read by a
        names = _declared_commands(first)  # pattern, not parsed (issue 20: parsing every module took ~15 ms)
        if names is not None and first in {n for n, _ in names}:
            importlib.import_module(f"econ.commands.{first}").register(sub)
            for m in modules:
                for name in _stub_names(m) if m != first else ():
                    if name not in sub.choices:
                        sub.add_parser(name)
            return parser
    declared = {m: (_declared_commands(m) if argv is not None else None) for m in modules}
    for m in modules:
        names = declared[m]
        if names is None or first in {n for n, _ in names}:
            importlib.import_module(f"econ.commands.{m}").register(sub)
        else:
            for name, help_text in names:  # a stub: enough for the command list, "did you mean" and --help
                if name not in sub.choices:
                    sub.add_parser(name, help=help_text)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``econ`` console script. Returns the exit code (0 ok, 2 bad input)."""
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words)
    args = parser.parse_args(words)
    empty = [k for k, v in vars(args).items() if isinstance(v, list) and not v]
    if empty:  # argparse (Python < 3.12) turns the value '--' of a one-value flag into [] (issue 12 fuzz)
        parser.error(f"--{empty[0].replace('_', '-')} needs a value ('--' is not one)")
    for dest in ("output", "scenario", "file", "litellm", "measurements", "data_dir"):  # a path flag given '' (issue 21)
        value = getattr(args, dest, None)
        if isinstance(value, str) and not value.strip():
            parser._subparser_for(words).error(f"--{dest.replace('_', '-')} needs a file or folder name "
                                               f"({value!r} is not one)")
    try:
        return int(args.func(args) or 0)
    except EconError as exc:
        typed = {w.split("=", 1)[0] for w in words if w.startswith("--")}
        flags = parser._subparser_for(words).option_strings() & typed  # a flag the user did not type is not blamed
        name = " ".join(w for w in words[:2] if not w.startswith("-") and (w == args.command or w in (
            getattr(args, "quotes_command", None), getattr(args, "kind", None))))
        from econ.commands._common import terminal_text  # control characters escaped, a huge message cut

        print(f"econ {name or args.command}: error: {terminal_text(cli_message(str(exc), flags))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `econ ... | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
