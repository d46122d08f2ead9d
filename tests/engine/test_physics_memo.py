"""The engine's physics memo (``evaluate(..., physics=memo)``, issue 19 part 5): a call that reuses the kept physics
of the same points equals a call without it, exactly, under every change of the economics (the cost side is priced
again; a change of tier, custom rate or cache-hit rate, which the physics reads, empties the memo), and another
points frame, catalog or set of columns is never served from it."""

from __future__ import annotations

from dataclasses import replace

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from econ.assumptions import DEFAULT, Economics
from econ.engine import evaluate
from econ.tables.catalog import load_catalog


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def points():
    rows = [(m, h, p, b, tp, dis) for m in ("llama-3.3-70b", "deepseek-v3") for h in ("h100-sxm", "b200", "mi300x")
            for p in ("bf16", "fp8") for b in (1, 8, 64, 256) for tp in (4, 8) for dis in (False, True)]
    return pl.DataFrame(rows, schema=["model", "hardware", "precision", "batch_size", "tp", "disaggregated"],
                        orient="row").with_columns(pl.lit(2048).alias("input_len"))


ECONOMICS = [Economics(), Economics(pue=1.377), Economics(usd_per_kwh=0.211), Economics(utilization_frac=0.41),
             Economics(input_output_mix=7.0), Economics(basis="neocloud"), Economics(basis="custom", usd_per_gpu_hour=3.3),
             Economics(cache_hit_frac=0.5), Economics(pue=1.21, cost_of_capital_frac=0.13)]


@pytest.mark.parametrize("columns", [None, ("model", "hardware", "feasible", "tokens_per_s_per_user",
                                            "usd_per_m_blended_tokens", "usd_per_m_blended_tokens_low")])
def test_memo_equals_a_fresh_evaluation_under_every_economics(catalog, points, columns):
    memo: dict = {}
    for e in ECONOMICS + ECONOMICS[::-1]:  # each economics after another one, both ways
        kept = evaluate(points, catalog, DEFAULT, e, strict=False, columns=columns, block_rows=64, physics=memo)
        fresh = evaluate(points, catalog, DEFAULT, e, strict=False, columns=columns, block_rows=64)
        assert_frame_equal(kept, fresh, check_exact=True)
    assert len([k for k in memo if isinstance(k, int)]) == -(-points.height // 64)  # one entry per block


def test_memo_is_reused_only_for_its_own_fingerprint(catalog, points):
    memo: dict = {}
    evaluate(points, catalog, DEFAULT, Economics(), strict=False, physics=memo)
    kept = {k: v for k, v in memo.items() if isinstance(k, int)}
    codes, labels = memo["_codes"], memo["_layout"]
    evaluate(points, catalog, DEFAULT, Economics(pue=1.5), strict=False, physics=memo)  # the cost side only: reused
    assert all(memo[k] is v for k, v in kept.items())
    assert memo["_codes"] is codes and memo["_layout"] is labels  # the id codes and layout labels kept too
    assert not codes[0].flags.writeable  # kept codes cannot be changed in place by a later call
    other = points.head(10)  # another frame: emptied, never read
    assert_frame_equal(evaluate(other, catalog, DEFAULT, Economics(), strict=False, physics=memo),
                       evaluate(other, catalog, DEFAULT, Economics(), strict=False), check_exact=True)
    assert memo["_points"] is other and all(memo[k] is not v for k, v in kept.items() if k in memo)
    slow = replace(DEFAULT, eta_bw=0.3)  # other assumptions (HBM at 30%, below every profile): recomputed
    got = evaluate(other, catalog, slow, Economics(), strict=False, physics=memo)
    assert_frame_equal(got, evaluate(other, catalog, slow, Economics(), strict=False), check_exact=True)
    assert not got.equals(evaluate(other, catalog, DEFAULT, Economics(), strict=False))
    cat2 = load_catalog()  # another catalog object: recomputed
    assert_frame_equal(evaluate(other, cat2, DEFAULT, Economics(), strict=False, physics=memo),
                       evaluate(other, cat2, DEFAULT, Economics(), strict=False), check_exact=True)
