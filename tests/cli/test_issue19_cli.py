"""Issue 19.2, the CLI's defects: `econ fleet size` takes the common option groups and a serving precision, and a
mistyped flag is told the near-best flag only."""

from __future__ import annotations

import json

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
