"""Property tests of the model's invariants (hypothesis; the `ci` profile loads itself when CI=true)."""

from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.assumptions import DEFAULT, IDEAL, Assumptions
from econ.tables.catalog import load_catalog
from econ.physics.memory import max_batch_size
from econ.engine import evaluate
from econ.analyses.sweep import grid

CATALOG = load_catalog()
MODELS = CATALOG.models["id"].to_list()
HARDWARE = CATALOG.accelerators["id"].to_list()


@given(hbm=st.floats(1e9, 1e12), extra=st.floats(0, 1e12), w=st.floats(0, 2e12), kv=st.floats(1e3, 1e10),
       n=st.integers(1, 72), frac=st.floats(0.05, 1.0))
def test_more_hbm_never_lowers_max_batch(hbm, extra, w, kv, n, frac):
    assert max_batch_size(n, hbm + extra, frac, w, kv) >= max_batch_size(n, hbm, frac, w, kv)


@given(model=st.sampled_from(MODELS), hw=st.sampled_from(HARDWARE), ctx=st.integers(1, 32_768))
@settings(max_examples=40)
def test_cost_per_token_never_rises_with_batch_until_a_wall(model, hw, ctx):
    """$/M output tokens is non-increasing in batch among feasible rows (walls bind, costs do not rise). The
    CUDA-graph cap is a wall of its own: above ``cuda_graph_max_batch`` sequences per attention group every kernel
    launches eagerly (5 us against 1.3 us), and where an overlap scheduler has hidden the host time that step up
    can outweigh the larger batch (Llama-3.1-8B on B200: +0.6% per token from 512 to 1,024), so costs are compared
    on each side of the cap."""
    batches = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    pts = grid(model=model, hardware=hw, precision="bf16", num_gpus=None, context_tokens=ctx, batch_size=batches)
    pts = pts.with_columns(pl.col("num_gpus").cast(pl.Int64))
    out = evaluate(pts, CATALOG, DEFAULT, strict=False)
    feasible = out.filter(pl.col("feasible"))
    cost = feasible["usd_per_m_output_tokens"].to_numpy()
    graphed = (feasible["batch_size"] / feasible["dp"] <= DEFAULT.cuda_graph_max_batch).to_numpy()
    same_side = graphed[1:] == graphed[:-1]
    assert np.all((np.diff(cost) <= cost[:-1] * 1e-9 + 1e-15) | ~same_side)
    # per-user speed never rises with batch
    tps = feasible["tokens_per_s_per_user"].to_numpy()
    assert np.all(np.diff(tps) <= 1e-9 * tps[:-1])


@given(model=st.sampled_from(MODELS), hw=st.sampled_from(HARDWARE),
       prec=st.sampled_from(["bf16", "fp8", "fp4"]), batch=st.integers(1, 1 << 20),
       ctx=st.one_of(st.none(), st.integers(1, 1 << 24)), inp=st.integers(1, 1 << 20), out=st.integers(1, 1 << 20),
       basis=st.sampled_from(["owned", "rental"]))
@settings(max_examples=150)
def test_no_nan_or_inf_for_any_valid_input(model, hw, prec, batch, ctx, inp, out, basis):
    pts = pl.DataFrame([dict(model=model, hardware=hw, precision=prec, batch_size=batch, context_tokens=ctx,
                             input_len=inp, output_len=out, basis=basis)],
                       schema_overrides={"context_tokens": pl.Int64})
    res = evaluate(pts, CATALOG, DEFAULT, strict=False)
    for c, dt in res.schema.items():
        if dt.is_float():
            vals = res[c].drop_nulls()
            assert vals.is_finite().all(), c
    r = res.row(0, named=True)
    if r["feasible"]:
        assert r["usd_per_m_output_tokens"] > 0 and r["tokens_per_s_per_user"] > 0
        assert r["binding_wall"] in ("memory", "compute", "network")
    else:
        assert r["infeasible_reason"]
        assert r["usd_per_m_output_tokens"] is None


@given(model=st.sampled_from(MODELS), hw=st.sampled_from(HARDWARE), batch=st.integers(1, 512),
       eta_bw=st.floats(0.05, 1.0), eta_flop=st.floats(0.05, 1.0), overhead=st.floats(0, 0.01))
@settings(max_examples=60)
def test_ideal_is_an_upper_bound(model, hw, batch, eta_bw, eta_flop, overhead):
    """The pure roofline gives at least the tokens/s of any efficiency < 1 (aiconfigurator's SOL check)."""
    a = replace(DEFAULT, eta_bw=eta_bw, eta_flop=eta_flop, eta_prefill=eta_flop, overhead_s=overhead)
    pts = pl.DataFrame([dict(model=model, hardware=hw, precision="bf16", batch_size=batch)])
    real = evaluate(pts, CATALOG, a, strict=False).row(0, named=True)
    ideal = evaluate(pts, CATALOG, replace(a, **{k: v for k, v in vars_ideal().items()}), strict=False).row(0, named=True)
    if real["feasible"]:
        assert ideal["tokens_per_s_per_user"] >= real["tokens_per_s_per_user"] * (1 - 1e-12)
        assert ideal["input_tokens_per_s_per_gpu"] >= real["input_tokens_per_s_per_gpu"] * (1 - 1e-12)


def vars_ideal():
    return {k: getattr(IDEAL, k) for k in ("eta_bw", "eta_flop", "eta_prefill", "overlap_frac", "overhead_s")}


@given(model=st.sampled_from(MODELS), hw=st.sampled_from(HARDWARE), kwh=st.floats(0, 1), kwh2=st.floats(0, 1))
@settings(max_examples=30)
def test_cost_rises_with_power_price(model, hw, kwh, kwh2):
    lo, hi = sorted([kwh, kwh2])
    pts = pl.DataFrame([dict(model=model, hardware=hw, precision="bf16", batch_size=4, usd_per_kwh=lo),
                        dict(model=model, hardware=hw, precision="bf16", batch_size=4, usd_per_kwh=hi)])
    res = evaluate(pts, CATALOG, strict=False)
    if res["feasible"].all():
        a, b = res["usd_per_gpu_hour"].to_list()
        assert b >= a


def test_input_type_triad():
    """Kernels give identical results on float, ndarray and pl.Expr (STYLE.md)."""
    from econ.physics.architecture import expected_experts_touched
    from econ.economics.tco import capital_recovery_factor
    from econ.economics.pricing import usd_per_m_tokens
    for fn, args in ((expected_experts_touched, (64.0, 256.0, 8.0)),
                     (capital_recovery_factor, (0.08, 5.0)),
                     (usd_per_m_tokens, (2.5, 1234.0))):
        scalar = fn(*args)
        arr = fn(*(np.array([a, a]) for a in args))
        df = pl.DataFrame({f"a{i}": [a, a] for i, a in enumerate(args)})
        expr = df.select(fn(*(pl.col(f"a{i}") for i in range(len(args)))).alias("r"))["r"].to_numpy()
        assert np.allclose(arr, scalar, rtol=1e-15) and np.allclose(expr, scalar, rtol=1e-15)


def test_expected_experts_touched_limits():
    from econ.physics.architecture import expected_experts_touched
    assert expected_experts_touched(1, 256, 8) == pytest.approx(8)
    assert expected_experts_touched(10_000, 256, 8) == pytest.approx(256)
    assert expected_experts_touched(5, 0, 0) == 0


def test_assumptions_validate():
    from econ.errors import InvalidInputError
    with pytest.raises(InvalidInputError, match=r"eta_bw=1.5 is outside \[0.001, 1\]"):
        Assumptions(eta_bw=1.5)
