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

from econ import __version__
from econ.errors import EconError

FIELD_FLAGS: dict[str, str] = {
    "model": "--model", "hardware": "--hardware", "precision": "--precision", "num_gpus": "--gpus",
    "tp": "--tp", "pp": "--pp", "ep": "--ep", "dp": "--dp", "batch_size": "--batch", "context_tokens": "--context",
    "input_len": "--input-len", "output_len": "--output-len", "region": "--region", "facility": "--facility",
    "usd_per_kwh": "--usd-per-kwh", "pue": "--pue", "utilization_frac": "--utilization",
    "cost_of_capital_frac": "--cost-of-capital", "accelerator_life_years": "--life-years",
    "input_output_mix": "--input-output-mix", "cache_hit_frac": "--cache-hit-rate",
    "build_usd_per_mw_it": "--build-usd-per-mw", "min_tokens_per_s_per_user": "--min-tokens-per-s-per-user",
    "max_ttft_s": "--max-ttft-s", "max_gpus": "--max-gpus", "max_prefill_gpus": "--max-prefill-gpus",
    "mode": "--mode", "expert_imbalance_factor": "--expert-imbalance", "arrival_rate_per_s": "--arrival-rate",
    "scale_up_domain_sizes": "--scale-up-domain", "training_precision": "--training-precision",
    "mfu_frac": "--mfu", "failure_window_h": "--failure-window-h", "mtbf_h_per_gpu": "--mtbf-h",
    "checkpoint_write_gb_per_s": "--checkpoint-gb-per-s", "training_tokens": "--training-tokens",
    "gpus_per_rack": "--gpus-per-rack", "price_usd_per_m_output_tokens": "--price", "top": "--top",
    "usd_per_gpu_hour": "--usd-per-gpu-hour", "workload": "--workload", "levels": "--at",
    "usd_per_m_input_tokens": "--input-price", "usd_per_m_output_tokens": "--output-price",
    "usd_per_m_cached_input_tokens": "--cached-input-price", "output_tokens_per_s_per_user": "--speed",
    "weight_format": "--weight-format", "generation": "--generation", "disclosure": "--disclosure",
    "gpu_hours_per_day": "--gpu-hours-per-day", "input_tokens_per_day": "--input-tokens-per-day",
    "cached_input_tokens_per_day": "--cached-input-tokens-per-day", "output_tokens_per_day": "--output-tokens-per-day",
}
"""Core field name -> the flag that sets it. Used only when the running subcommand has that flag."""

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
                close = difflib.get_close_matches(word.split("=", 1)[0], known, n=3, cutoff=0.6)
                if close:
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


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with every subcommand module of ``econ.commands`` registered."""
    parser = EconArgumentParser(
        prog="econ", description="LLM inference economics: what does it cost to serve model M on hardware H?")
    parser.add_argument("--version", action="version", version=f"econ {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    import econ.commands as pkg
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"econ.commands.{info.name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``econ`` console script. Returns the exit code (0 ok, 2 bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    empty = [k for k, v in vars(args).items() if isinstance(v, list) and not v]
    if empty:  # argparse (Python < 3.12) turns the value '--' of a one-value flag into [] (issue 12 fuzz)
        parser.error(f"--{empty[0].replace('_', '-')} needs a value ('--' is not one)")
    try:
        return int(args.func(args) or 0)
    except EconError as exc:
        words = list(sys.argv[1:] if argv is None else argv)
        flags = parser._subparser_for(words).option_strings()
        name = " ".join(w for w in words[:2] if not w.startswith("-") and (w == args.command or w in (
            getattr(args, "quotes_command", None), getattr(args, "kind", None))))
        print(f"econ {name or args.command}: error: {cli_message(str(exc), flags)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `econ ... | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
