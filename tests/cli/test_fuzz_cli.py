"""A seeded fuzz of every ``econ`` subcommand ends in no traceback (issue 12, finding 7 and "Tests in CI").

The generator and the worker are those of ``benchmarks/fuzz_cli.py`` (which runs 2,000 of them): command lines
drawn from the parser itself, with hostile values (huge integers, 1e400, nan, 300-character names, Markdown
and formula payloads, control characters, folders where files go, a 5,000-deep TOML, an XLSX bomb, corrupted
data folders). Here a few hundred run within a fixed budget of work; a run that exceeds the per-run limit is a
bounded-work finding of the search engine (issue 12 finding 1) and is printed, not counted as a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import fuzz_cli  # noqa: E402

RUNS = 300
SEED = 20260412
BUDGET_S = 240.0  # a bound on the work, not a timed assertion: runs stop being drawn after it
HEAVY = {"optimize": 0.3, "frontier": 0.3, "quotes check": 0.5, "calibrate": 0.05,  # searches, fits: fewer draws
         "sensitivity cost": 0.2, "sensitivity quote": 0.2, "sensitivity site": 0.2}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    scratch = tmp_path_factory.mktemp("fuzz")
    return fuzz_cli.fuzz(RUNS, SEED, timeout_s=30.0, budget_s=BUDGET_S, weights=HEAVY, scratch=scratch)


def test_no_command_line_ends_in_a_traceback(results):
    print(fuzz_cli.summary(results))
    tracebacks = [r for r in results if r["outcome"] == "traceback"]
    assert not tracebacks, "\n".join(f"econ {' '.join(r['argv'])}\n    {r['where']} {r['error']}"
                                     for r in tracebacks[:10])


def test_the_fuzz_reached_every_subcommand(results):
    assert len(results) >= 100
    reached = {fuzz_cli.command(r["argv"]) for r in results}
    every = {" ".join(p) for p, _ in fuzz_cli.walk()}
    assert every <= reached, sorted(every - reached)


def test_errors_are_one_line_messages(results):
    """Exit code 2 from econ itself (not argparse's usage) is one 'econ CMD: error: ...' line per problem."""
    for r in results:
        if r["outcome"] == "ok" and r.get("code") == 2 and "error:" in r["stderr"] and "usage:" not in r["stderr"]:
            assert r["stderr"].startswith("econ"), r
