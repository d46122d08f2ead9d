"""Issue 20.3: the fused decode + cost kernel (econ.engine.fused) gives the numpy path's numbers.

Every column of the kernel (``econ.engine.fused.COLUMNS``, the decode + cost columns of benchmarks/bench_engine.py)
equals the numpy path's within 1e-9 relative, nulls and flags exactly, over the engine_speed regression cases and
random samples of the whole catalog (MoE, MLA, sliding-window and sparse-attention models; feasible and infeasible
rows; given layouts with expert parallelism, pipeline stages and two-batch overlap), and each comparison checks that
the kernel did run. Without numba (simulated) or with ``ECON_FUSED=0`` the numpy path runs and gives the same frame.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from econ.engine import evaluate, fused
from econ.physics import precision as prec
from econ.tables.catalog import load_catalog

HAVE_NUMBA = importlib.util.find_spec("numba") is not None
needs_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed (the optional 'fast' extra)")

HERE = Path(__file__).parent / "fixtures" / "engine_speed"
sys.path.insert(0, str(HERE))
from record import cases  # noqa: E402

COLUMNS = ("feasible", "binding_wall", "max_batch_size", "tpot_s", "tokens_per_s_per_user",
           "output_tokens_per_s_per_gpu", "usd_per_gpu_hour", "usd_per_m_output_tokens")
REL = 1e-9


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _rows_through_kernel(monkeypatch) -> list:
    """Count the rows the kernel writes (a wrapper of fused.decode_cost)."""
    seen: list = []
    real = fused.decode_cost

    def counting(batch, *args, **kw):
        ok = real(batch, *args, **kw)
        seen.append(len(np.atleast_1d(batch)) if ok else 0)
        return ok

    monkeypatch.setattr(fused, "decode_cost", counting)
    return seen


def _assert_same(fast: pl.DataFrame, slow: pl.DataFrame) -> None:
    assert fast.columns == slow.columns and fast.height == slow.height
    for c in fast.columns:
        a, b = fast[c], slow[c]
        assert a.dtype == b.dtype, c
        assert (a.is_null() == b.is_null()).all(), c
        if a.dtype.is_float():
            x, y = a.to_numpy(), b.to_numpy()
            ok = ~np.isnan(y)
            err = np.abs(x[ok] - y[ok]) / np.maximum(np.abs(y[ok]), 1e-300)
            assert err.size == 0 or err.max() <= REL, (c, float(err.max()))
        else:
            assert a.to_list() == b.to_list(), c


def _both(points, catalog, monkeypatch, **kw) -> tuple[pl.DataFrame, pl.DataFrame, int]:
    """(fused frame, numpy frame, rows the kernel wrote)."""
    seen = _rows_through_kernel(monkeypatch)
    monkeypatch.setenv("ECON_FUSED", "1")
    fast = evaluate(points, catalog, columns=COLUMNS, **kw)
    n_fused = sum(seen)
    monkeypatch.setenv("ECON_FUSED", "0")
    slow = evaluate(points, catalog, columns=COLUMNS, **kw)
    assert sum(seen) == n_fused  # the switch turns the kernel off
    return fast, slow, n_fused


_NOT_COVERED = ("disaggregated", "arrival_rate_per_s", "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp",
                "prefill_instances", "decode_instances", "spec_method", "spec_draft_tokens", "spec_acceptance",
                "spec_draft_model")


@needs_numba
@pytest.mark.parametrize("plain", [False, True])
@pytest.mark.parametrize("name", ["grid", "layouts", "spec", "economics", "ideal", "decode_cost", "small"])
def test_fused_equals_numpy_on_the_regression_cases(name, plain, catalog, monkeypatch):
    """Each engine_speed case as recorded (blocks with a drafting, disaggregated or arrival-rate row run numpy), and
    ``plain``: the same rows aggregated, without arrival rates, decoding plainly, which the kernel covers whole."""
    points, kw = cases(catalog)[name]
    kw = {k: v for k, v in kw.items() if k not in ("columns", "sweet_spot")}
    if plain:
        points = points.drop([c for c in _NOT_COVERED if c in points.columns]).with_columns(
            spec_draft_tokens=pl.lit(0))
    fast, slow, n_fused = _both(points, catalog, monkeypatch, **kw)
    _assert_same(fast, slow)
    assert slow["feasible"].sum() > 0 and (~slow["feasible"]).sum() > 0
    if plain or name in ("grid", "economics", "ideal", "decode_cost"):  # no spec_*, disaggregated or arrival column
        assert n_fused == points.height  # the kernel wrote every row (the models' default MTP included)


def _sample(catalog, rng, n: int, layout: bool, plain: bool = True) -> pl.DataFrame:
    models = catalog.models["id"].to_list()
    hws = catalog.accelerators["id"].to_list()
    pts = pl.DataFrame({
        "model": rng.choice(models, n), "hardware": rng.choice(hws, n),
        "precision": rng.choice(list(prec.PRECISIONS), n),
        "batch_size": np.round(np.exp(rng.uniform(0, np.log(8192), n))).astype(np.int64),
        "context_tokens": np.round(np.exp(rng.uniform(np.log(64), np.log(400_000), n))).astype(np.int64),
        "spec_draft_tokens": np.zeros(n, dtype=np.int64),  # plain decoding: MTP models (DeepSeek) reach the kernel
    })
    if not plain:  # the models' default speculative decoding (DeepSeek's MTP module)
        pts = pts.drop("spec_draft_tokens")
    if layout:  # one given layout for the whole frame (the engine's combinations need equal layout columns)
        tp, dp, pp = (int(rng.choice(v)) for v in ([1, 2, 4, 8], [1, 2, 4, 16], [1, 2, 3]))
        ep = int(rng.choice([1, tp * dp]))
        pts = pts.with_columns(tp=pl.lit(tp), dp=pl.lit(dp), ep=pl.lit(ep), pp=pl.lit(pp),
                               num_gpus=pl.lit(tp * dp * pp), batch_size=pl.col("batch_size") * dp)
    return pts


@needs_numba
@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31 - 1), layout=st.booleans(), small=st.booleans(), plain=st.booleans())
def test_fused_equals_numpy_on_random_catalog_samples(seed, layout, small, plain, catalog, monkeypatch):
    rng = np.random.default_rng(seed)
    pts = _sample(catalog, rng, 7 if small else 1500, layout, plain)
    fast, slow, n_fused = _both(pts, catalog, monkeypatch, strict=False)
    _assert_same(fast, slow)
    assert n_fused == pts.height  # every row of these samples is one the kernel covers


def test_random_samples_reach_every_kind_of_model(catalog):
    """The samples above draw from the whole catalog: MoE, MLA, sliding-window and sparse-attention models."""
    m = catalog.models
    kinds = {"moe": m.filter(pl.col("num_experts") > 0).height,
             "sliding": m.filter(pl.col("sliding_window_tokens").fill_null(0) > 0).height,
             "sparse": m.filter(pl.col("index_topk").fill_null(0) > 0).height}
    assert all(v > 0 for v in kinds.values()), kinds
    rng = np.random.default_rng(1)
    drawn = set(_sample(catalog, rng, 1500, False)["model"])
    assert drawn == set(m["id"])


@needs_numba
def test_deepseek_wide_expert_parallel_layout_runs_in_the_kernel(catalog, monkeypatch):
    """MLA + MoE with ep 16 over two domains (two-batch overlap on, the all-to-all over the NICs), plain decoding."""
    pts = pl.DataFrame({"model": ["deepseek-v3"] * 40, "hardware": ["h100-sxm"] * 40, "precision": ["fp8"] * 40,
                        "batch_size": np.geomspace(16, 8192, 40).round().astype(np.int64) // 16 * 16,
                        "context_tokens": [4096] * 40, "tp": [1] * 40, "dp": [16] * 40, "ep": [16] * 40,
                        "num_gpus": [16] * 40, "spec_draft_tokens": [0] * 40})
    fast, slow, n_fused = _both(pts, catalog, monkeypatch, strict=False)
    _assert_same(fast, slow)
    assert n_fused == 40 and slow["feasible"].sum() > 10
    full = evaluate(pts, catalog, strict=False, columns=("two_batch_overlap", "feasible"))
    assert full["two_batch_overlap"].all()


def test_without_numba_the_numpy_path_gives_the_same_frame(catalog, monkeypatch):
    """numba absent (really, or simulated where it is installed): the kernel is None and the numpy path runs."""
    points, _ = cases(catalog)["grid"]
    seen = _rows_through_kernel(monkeypatch)
    monkeypatch.setenv("ECON_FUSED", "1")
    if HAVE_NUMBA:
        monkeypatch.setattr(fused, "_NUMBA", {"kernel": None})  # as if `import numba` failed
    else:
        monkeypatch.setattr(fused, "_NUMBA", {})
        assert fused.kernel() is None
    absent = evaluate(points, catalog, strict=False, columns=COLUMNS)
    assert sum(seen) == 0
    monkeypatch.setenv("ECON_FUSED", "0")
    _assert_same(absent, evaluate(points, catalog, strict=False, columns=COLUMNS))


@needs_numba
def test_the_kernel_is_used_only_for_its_columns(catalog, monkeypatch):
    points = cases(catalog)["grid"][0].with_columns(spec_draft_tokens=pl.lit(0))
    seen = _rows_through_kernel(monkeypatch)
    monkeypatch.setenv("ECON_FUSED", "1")
    evaluate(points.head(200), catalog, strict=False, columns=COLUMNS + ("t_mem_s",))
    evaluate(points.head(200), catalog, strict=False, columns=COLUMNS, physics={})
    assert sum(seen) == 0
    evaluate(points.head(200), catalog, strict=False, columns=("tpot_s",))
    assert sum(seen) == 200
    evaluate(points.head(200), catalog, strict=False, columns=("model", "hardware", "precision", "tpot_s"))
    assert sum(seen) == 400  # the id columns come from the input


@needs_numba
def test_by_default_the_kernel_runs_from_min_rows(catalog, monkeypatch):
    """Unset ``ECON_FUSED``: calls below ``fused.MIN_ROWS`` rows keep the numpy path while the kernel is not loaded
    (no numba import for a small call), and from ``fused.LOADED_MIN_ROWS`` rows once it is."""
    points = cases(catalog)["grid"][0].with_columns(spec_draft_tokens=pl.lit(0)).head(300)
    seen = _rows_through_kernel(monkeypatch)
    monkeypatch.delenv("ECON_FUSED", raising=False)
    monkeypatch.setattr(fused, "_NUMBA", {})  # not loaded in this process
    evaluate(points, catalog, strict=False, columns=COLUMNS)
    assert sum(seen) == 0 and fused._NUMBA == {}
    monkeypatch.setattr(fused, "MIN_ROWS", 300)
    evaluate(points, catalog, strict=False, columns=COLUMNS)
    assert sum(seen) == 300 and fused._NUMBA["kernel"] is not None
    monkeypatch.setattr(fused, "MIN_ROWS", 10**9)
    monkeypatch.setattr(fused, "LOADED_MIN_ROWS", 200)
    evaluate(points.head(250), catalog, strict=False, columns=COLUMNS)
    evaluate(points.head(150), catalog, strict=False, columns=COLUMNS)
    assert sum(seen) == 550  # loaded: 250 rows through the kernel, 150 not


@needs_numba
def test_default_mtp_drafting_runs_in_the_kernel(catalog, monkeypatch):
    """DeepSeek-V3 decodes with its MTP module by default (one drafted token): the kernel's draft pass and accepted
    tokens give the numpy path's numbers, and plain decoding (k = 0) differs from them."""
    n = 64
    pts = pl.DataFrame({"model": ["deepseek-v3"] * n, "hardware": ["h200-sxm", "b200"] * (n // 2),
                        "precision": ["fp8"] * n, "batch_size": np.geomspace(1, 2048, n).round().astype(np.int64),
                        "context_tokens": [2048, 16384] * (n // 2)})
    fast, slow, n_fused = _both(pts, catalog, monkeypatch, strict=False)
    _assert_same(fast, slow)
    assert n_fused == n and slow["feasible"].sum() > 10
    plain, _, _ = _both(pts.with_columns(spec_draft_tokens=pl.lit(0)), catalog, monkeypatch, strict=False)
    ok = slow["feasible"].to_numpy()
    assert (np.abs(plain["tpot_s"].to_numpy()[ok] / slow["tpot_s"].to_numpy()[ok] - 1.0) > 0.05).all()


@needs_numba
def test_the_kernel_is_cached_on_disk_or_compiled_in_the_process_when_it_cannot_be():
    """``cache=True`` keeps the compile out of later processes; with no writable cache directory (numba finds no
    cache locator) the module still loads and the kernel compiles for the process, silently (no exception)."""
    assert type(fused.kernel()._cache).__name__ != "NullCache"
    code = ("import numba.core.caching as c; c.CacheImpl._locator_classes = []\n"
            "from econ.engine import fused\n"
            "k = fused.kernel()\n"
            "print(k is not None, type(k._cache).__name__)")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root)] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, env=env, check=True)
    assert out.stdout.split() == ["True", "NullCache"]


@needs_numba
@pytest.mark.parametrize("layout", [False, True])
def test_fused_equals_numpy_under_the_free_memory_rule(layout, catalog, monkeypatch):
    """TensorRT-LLM's KV pool (``kv_memory_rule`` "free": a share of what weights, activations and runtime leave)
    reaches the kernel's capacity column as it does the numpy path's, and moves it; with a given layout the frame runs
    attention DP, EP and pipeline stages (the MoE dispatch workspace scales with them)."""
    from econ.assumptions import DEFAULT
    pts = _sample(catalog, np.random.default_rng(36 + layout), 1500, layout=layout)
    free = DEFAULT.with_overrides(kv_memory_rule="free")
    fast, slow, n_fused = _both(pts, catalog, monkeypatch, strict=False, assumptions=free)
    _assert_same(fast, slow)
    assert n_fused == pts.height
    total = evaluate(pts, catalog, columns=COLUMNS, strict=False)
    moved = (fast["max_batch_size"] != total["max_batch_size"]).fill_null(False)
    assert moved.sum() > pts.height // 10
