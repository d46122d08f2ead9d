"""The per-combination path of the numpy engine equals the per-row path on every column (issue 20.2).

With combinations (:attr:`econ.engine.EngineInputs.combos`), :func:`econ.engine.core.run_physics` computes the
collectives, the decode constants and the prefill steps once per distinct combination (prefill: per distinct
combination, prompt, prompts per step and KV bytes) and gathers them to the rows, and the efficiencies are gathered
per combination. The same blocks run with ``combos=None`` (every term per row) must give the same frame within
1e-9 relative, nulls included, on a mixed grid: dense, MoE, MLA, sliding-window and sparse-attention models, auto
and given layouts, disaggregated rows, speculative-decoding columns, KV offload and prefix tiers, arrival rates.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from econ import engine
from econ.engine import core as engine_core
from econ.engine import frame as engine_frame
from econ.tables.catalog import load_catalog

CATALOG = load_catalog()
MODELS = ["llama-3.1-8b", "llama-3.3-70b", "deepseek-v3", "gpt-oss-120b", "llama-4-scout", "deepseek-v3.2",
          "qwen3-30b-a3b"]
"""Dense (Llama), MoE + MLA + default MTP (DeepSeek-V3), MoE + sliding window (gpt-oss, Llama 4 Scout), sparse
attention (DeepSeek-V3.2), small MoE (Qwen3-30B-A3B)."""
HARDWARE = ["h100-sxm", "b200", "mi300x", "gb200-nvl72"]


def _grid(seed: int, n: int = 240) -> pl.DataFrame:
    """``n`` rows over a few (model, accelerator, precision) combinations, batches and lengths varying per row."""
    rng = np.random.default_rng(seed)
    combos = 10
    pick = rng.integers(0, combos, n)
    return pl.DataFrame({
        "model": rng.choice(MODELS, combos)[pick], "hardware": rng.choice(HARDWARE, combos)[pick],
        "precision": rng.choice(["bf16", "fp8", "fp4"], combos)[pick],
        "batch_size": rng.choice([1, 8, 64, 256, 2048], n),
        "context_tokens": rng.choice([512, 4096, 32768], n),
    })


def _every_other(n: int, on, off=None) -> pl.Series:
    return pl.Series(np.where(np.arange(n) % 3 == 0, on, off).tolist())


CASES = {
    "auto layout, one prompt length": lambda f: f,
    "auto layout, prompt and answer lengths per row": lambda f: f.with_columns(
        input_len=pl.Series(np.resize([128, 1024, 8192], f.height)),
        output_len=pl.Series(np.resize([64, 1024], f.height)), context_tokens=pl.lit(None, dtype=pl.Int64)),
    "given layout (MoE ep, two-batch overlap), arrival rates": lambda f: f.with_columns(
        num_gpus=pl.lit(16), tp=pl.lit(2), dp=pl.lit(8), ep=pl.lit(16), two_batch_overlap=pl.lit(True),
        arrival_rate_per_s=_every_other(f.height, 3.0)),
    "disaggregated rows": lambda f: f.with_columns(
        num_gpus=pl.lit(8), disaggregated=_every_other(f.height, True, False),
        prefill_tp=pl.lit(4), prefill_dp=pl.lit(2)),
    "speculative decoding columns": lambda f: f.with_columns(
        spec_method=_every_other(f.height, "eagle"), spec_draft_tokens=_every_other(f.height, 2.0),
        spec_acceptance=_every_other(f.height, 0.7)),
    "KV offload and prefix tiers": lambda f: f.with_columns(
        kv_offload=_every_other(f.height, "host"), prefix_cache_tier=_every_other(f.height, "host"),
        cache_hit_frac=pl.lit(0.5)),
}


def _per_row(monkeypatch):
    """Route the engine's run_physics through ``combos=None`` (every term per row); returns the prefill-path spy."""
    run_physics = engine_frame.run_physics
    monkeypatch.setattr(engine_frame, "run_physics",
                        lambda inp, *args, **kw: run_physics(replace(inp, combos=None), *args, **kw))


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("seed", [1, 2])
def test_per_combination_equals_per_row(case, seed, monkeypatch):
    points = CASES[case](_grid(seed))
    steps = engine_core._prefill_steps
    gathered = []

    def spy(*args, **kw):
        got = steps(*args, **kw)
        gathered.append(got is not None)
        return got

    monkeypatch.setattr(engine_core, "_prefill_steps", spy)
    fast = engine.evaluate(points, CATALOG, strict=False, threads=1, block_rows=96)
    assert gathered, "run_physics ran the prefill side"
    if case == "auto layout, one prompt length":  # a grid of combinations: the prefill steps computed once each
        assert all(gathered)
    if case == "auto layout, prompt and answer lengths per row":  # combinations refined by prompt (not the last
        assert any(gathered)  # block, where they are more than half its rows)
    if case in ("disaggregated rows", "KV offload and prefix tiers"):  # refined by prefill layout, prefix
        assert any(gathered)
    _per_row(monkeypatch)
    slow = engine.evaluate(points, CATALOG, strict=False, threads=1, block_rows=96)
    assert fast["feasible"].sum() > 0  # some rows priced: not a comparison of nulls
    assert fast.columns == slow.columns
    assert_frame_equal(fast, slow, check_exact=False, rel_tol=1e-9, abs_tol=0.0)


def test_prefill_steps_refine_combinations_by_prompt():
    """Rows of one combination with two prompt lengths get two prefill steps, each equal to the rows' own."""
    points = pl.DataFrame({"model": ["llama-3.3-70b"] * 40, "hardware": ["h100-sxm"] * 40, "precision": ["fp8"] * 40,
                           "num_gpus": [4] * 40, "batch_size": np.resize([1, 4, 16, 32], 40),
                           "input_len": np.resize([512, 512, 4096, 4096, 4096], 40)})
    got = engine.evaluate(points, CATALOG, strict=False, threads=1)
    one = pl.concat([engine.evaluate(points.slice(i, 1), CATALOG, strict=False) for i in (0, 2)])
    assert got["feasible"].all()
    assert got["ttft_s"].n_unique() == 2
    np.testing.assert_allclose(got["ttft_s"][[0, 2]].to_numpy(), one["ttft_s"].to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(got["input_tokens_per_s_per_gpu"][[0, 2]].to_numpy(),
                               one["input_tokens_per_s_per_gpu"].to_numpy(), rtol=1e-12)


def test_default_speculation_resolved_once_per_model_block():
    """A block of one model with no speculation columns resolves the model's default (DeepSeek-V3: MTP, one drafted
    token, acceptance 0.85) once and repeats it: the frame equals blocks of <= 16 rows, resolved row by row."""
    points = pl.DataFrame({"model": ["deepseek-v3"] * 64 + ["llama-3.3-70b"] * 64,
                           "hardware": np.resize(["h200-sxm", "b200"], 128), "precision": ["fp8"] * 128,
                           "batch_size": np.resize([1, 8, 64, 512], 128),
                           "input_len": np.resize([256, 2048, 8192], 128)})
    whole = engine.evaluate(points, CATALOG, strict=False, threads=1, block_rows=64)
    rows = engine.evaluate(points, CATALOG, strict=False, threads=1, block_rows=engine_frame._SMALL_FRAME_ROWS)
    assert whole["spec_method"].to_list() == ["mtp"] * 64 + ["none"] * 64
    deepseek = whole.head(64).filter(pl.col("feasible"))
    assert deepseek.height > 0
    np.testing.assert_allclose(deepseek["accepted_tokens_per_step"].to_numpy(), 1.85, rtol=1e-12)
    assert_frame_equal(whole, rows, check_exact=False, rel_tol=1e-9, abs_tol=0.0)
