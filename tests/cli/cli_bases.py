"""The cheapest command line of each ``econ`` subcommand that answers, for tests that run every subcommand
(``test_every_flag.py``, ``test_reliability_messages.py``). ``{name}`` words are fixture files of the test."""

from __future__ import annotations

import argparse

from econ.cli import build_parser

BASES: dict[str, list[str]] = {
    "calibrate": ["--measurements", "{tiny_measurements}", "--data-dir", "caldata", "--format", "json"],
    "cluster": ["--hardware", "h100-sxm", "--gpus", "1024", "--model", "llama-3.1-8b", "--all-columns",
                "--format", "json"],
    "compare": ["llama-3.1-8b:h100-sxm:fp8", "llama-3.1-8b:b200:fp8", "--format", "json"],
    "cost": ["--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--all-columns", "--format", "json"],
    "export cost": ["--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--output", "out.csv"],
    "fleet power": ["--hardware", "h100-sxm", "--gpus", "1024", "--format", "json"],
    "fleet scale": ["--hardware", "h100-sxm", "--gpus", "1024", "--format", "json"],
    "fleet calc": ["--gpus", "1024", "--format", "json"],
    "fleet capex": ["--hardware", "h100-sxm", "--gpus", "1024", "--format", "json"],
    "fleet size": ["--hardware", "h100-sxm", "--power-mw", "10", "--model", "llama-3.1-8b", "--all-columns",
                   "--format", "json"],
    "fleet train": ["--hardware", "h100-sxm", "--gpus", "1024", "--model", "llama-3.1-8b", "--format", "json"],
    "list": ["hardware", "--format", "json"],
    "optimize": ["--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--precision", "fp8", "--max-gpus", "2",
                 "--format", "json"],
    "frontier": ["--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--precision", "fp8", "--max-gpus", "2",
                 "--format", "json"],
    "quotes check": ["--model", "llama-3.1-8b", "--input-price", "0.1", "--output-price", "0.2", "--hardware",
                     "h100-sxm", "--format", "json"],
    "quotes pnl": ["--disclosure", "deepseek-v3r1-day6", "--format", "json"],
    "quotes import": ["--litellm", "{litellm}"],
    "quotes cached": ["--hardware", "h100-sxm", "--format", "json"],
    "prefill": ["--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--input-len", "8192", "--format", "json"],
    "trend": ["llama-3.1-8b", "--hardware", "h100-sxm,b200", "--format", "json"],
    "sensitivity cost": ["--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--samples", "20", "--format", "json"],
    "sensitivity quote": ["--quote", "{quote_id}", "--samples", "20", "--format", "json"],
    "sensitivity site": ["--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--power-mw", "10", "--samples", "20",
                         "--format", "json"],
}
"""The cheapest command line of each subcommand that answers (``{name}`` is a fixture file)."""


def tiny_measurements(dest, *, wider: bool = False):
    """Write the smallest measurements table ``econ calibrate`` fits (a profile with 2 or more groups: the shipped
    Hopper BF16 rows, 8 cases in 3 groups; ``wider`` adds the CDNA3 rows, a second fitted profile) to ``dest``."""
    import polars as pl

    from econ.tables.catalog import DEFAULT_DATA_DIR

    m = pl.read_csv(DEFAULT_DATA_DIR / "measurements.csv", infer_schema=False)
    keep = (pl.col("hardware_generation") == "hopper") & (pl.col("precision") == "bf16")
    if wider:
        keep = keep | (pl.col("hardware_generation") == "cdna3")
    m.filter(keep).write_csv(dest)
    return dest


def leaves():
    """(subcommand name, its parser) of every leaf subcommand."""
    def walk(parser, prefix=()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, prefix + (name,))
                return
        yield " ".join(prefix), parser
    yield from walk(build_parser())
