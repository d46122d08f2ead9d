"""The engine's hot path makes no reference cycles (issue 20.1): a block's arrays are freed when the block
ends, not when the cycle collector runs, so repeated large calls keep a flat peak. Measured in a fresh interpreter
(tests/engine/memory_probe.py): other tests' threads would allocate and make cycles during the measurement."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = Path(__file__).parent / "memory_probe.py"


@pytest.fixture(scope="module")
def probe():
    env = {**os.environ, "ECON_CACHE_DIR": "off"}
    done = subprocess.run([sys.executable, str(PROBE)], capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["grid", "layouts", "spec", "economics", "decode_cost", "small"])
def test_evaluate_leaves_no_reference_cycles(name, probe):
    assert probe["unreachable"][name] == 0


def test_repeated_calls_keep_a_flat_peak(probe):
    """The traced peak of the third call is no higher than that of the first (no garbage carried over)."""
    peaks = probe["peaks"]
    assert peaks[0] > 1e6
    assert peaks[2] <= peaks[0] * 1.05
