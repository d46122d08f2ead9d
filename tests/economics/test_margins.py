"""Margin formulas and verdicts (econ/economics/margins.py): the thresholds and the closed-form break-even utilization.

Known answers: the verdict boundaries of issue 4 (below 0, under 20%, 20% to 80%, over 80%; null -> not comparable);
u* = F / (G* - V), exact to 1e-15 on a hand-computed case, ``inf`` where the price does not cover power.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from econ.economics.margins import (breakeven_usd_per_gpu_hour, breakeven_utilization_frac, gross_margin_frac,
                                   verdict_expr)


@pytest.mark.parametrize("margin, verdict", [
    (-0.5, "below-floor"), (-1e-9, "below-floor"), (0.0, "thin"), (0.1999, "thin"), (0.2, "plausible"),
    (0.8, "plausible"), (0.8001, "rich"), (0.999, "rich"), (None, "not-gpu-comparable"),
])
def test_verdict_thresholds(margin, verdict):
    out = pl.DataFrame({"m": [margin]}, schema={"m": pl.Float64}).select(verdict_expr(pl.col("m")))
    assert out.item() == verdict


def test_breakeven_utilization_kernel():
    # F / (G* - V): fixed 1.0 $/h at full use, power 0.2 $/h, break-even 2.2 $/h -> 0.5
    assert breakeven_utilization_frac(1.0, 0.2, 2.2) == pytest.approx(0.5, rel=1e-15)
    assert np.isinf(breakeven_utilization_frac(1.0, 0.3, 0.3))  # price does not cover power
    out = breakeven_utilization_frac(np.array([1.0, 2.0]), np.array([0.0, 0.0]), np.array([4.0, 1.0]))
    np.testing.assert_allclose(out, [0.25, 2.0])  # 2.0: no utilization <= 1 breaks even


def test_gross_margin_and_breakeven_rate_on_scalars_arrays_and_expressions():
    # (price - cost) / price: $4 over a $1 cost is 75%; at cost 0%; a cost above the price is negative
    assert gross_margin_frac(4.0, 1.0) == 0.75
    np.testing.assert_array_equal(gross_margin_frac(np.array([4.0, 2.0, 1.0]), np.array([1.0, 2.0, 2.0])),
                                  [0.75, 0.0, -1.0])
    frame = pl.DataFrame({"p": [4.0, 2.0], "c": [1.0, 3.0]})
    assert frame.select(gross_margin_frac(pl.col("p"), pl.col("c"))).to_series().to_list() == [0.75, -0.5]
    # cost is linear in the GPU-hour at a fixed deployment: $2/h at a $1.5/M cost breaks even on a $3/M price at $4/h
    assert breakeven_usd_per_gpu_hour(2.0, 3.0, 1.5) == 4.0
