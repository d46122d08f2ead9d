"""Issue 20.4: the small-input path (econ.engine.small) gives the vectorized path's numbers.

At most 16 rows whose requested columns are the fused kernel's (econ.engine.fused.COLUMNS) and the ids go through a
per-row cache of the kernel's table row and the kernel's row function run as plain Python. Every comparison here is
against the same call with ``ECON_SMALL=0`` (the vectorized path): floats within 1e-9 relative, nulls, flags, ids,
dtypes and column order exactly, for frame, dict and records outputs; each checks that the small path did run (a hit,
after the miss that filled the cache).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from econ.assumptions import DEFAULT, Economics
from econ.engine import evaluate, fused, small
from econ.errors import InvalidInputError
from econ.physics import precision as prec
from econ.tables.catalog import load_catalog
from econ.vocabulary import TIERS

HERE = Path(__file__).parent / "fixtures" / "engine_speed"
sys.path.insert(0, str(HERE))
from record import cases  # noqa: E402

DECODE_COST = ("feasible", "binding_wall", "max_batch_size", "tpot_s", "tokens_per_s_per_user",
               "output_tokens_per_s_per_gpu", "usd_per_gpu_hour", "usd_per_m_output_tokens")
WITH_IDS = ("model", "hardware", "precision", "kv_precision", "basis") + DECODE_COST
REL = 1e-9
ONE = pl.DataFrame({"model": ["llama-3.3-70b"], "hardware": ["h100-sxm"], "precision": ["fp8"], "batch_size": [64],
                    "num_gpus": [2]})
_NOT_COVERED = ("disaggregated", "arrival_rate_per_s", "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp",
                "prefill_instances", "decode_instances", "spec_method", "spec_draft_tokens", "spec_acceptance",
                "spec_draft_model", "kv_offload", "prefix_cache_tier", "cp", "context_limit_tokens")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture
def hits(monkeypatch):
    """Rows answered from the cache (a counting wrapper of small._hits); the cache emptied first."""
    small._CACHE.clear()
    seen = [0]
    real = small._hits

    def counting(rules, rows, pos, entries):
        got = real(rules, rows, pos, entries)
        seen[0] += 0 if got is None else len(got)
        return got

    monkeypatch.setattr(small, "_hits", counting)
    monkeypatch.delenv("ECON_SMALL", raising=False)
    monkeypatch.delenv("ECON_FUSED", raising=False)
    return seen


def _same_values(x, y, where) -> None:
    if isinstance(y, float) and isinstance(x, float):
        assert abs(x - y) <= REL * max(abs(y), 1e-300), (where, x, y)
    else:
        assert type(x) is type(y) and x == y, (where, x, y)


def _assert_same(fast, slow) -> None:
    """Frames, dicts or records: the same columns in the same order, dtypes, nulls; floats within REL."""
    if isinstance(slow, pl.DataFrame):
        assert isinstance(fast, pl.DataFrame)
        assert fast.columns == slow.columns and fast.height == slow.height
        assert fast.schema == slow.schema
        _assert_same(fast.to_dict(as_series=False), slow.to_dict(as_series=False))
    elif isinstance(slow, dict):
        assert list(fast) == list(slow)
        for c in slow:
            assert len(fast[c]) == len(slow[c]), c
            for x, y in zip(fast[c], slow[c]):
                _same_values(x, y, c)
    else:
        assert len(fast) == len(slow)
        for a, b in zip(fast, slow):
            assert list(a) == list(b)
            for c in b:
                _same_values(a[c], b[c], c)


def _off(monkeypatch, *args, **kw):
    monkeypatch.setenv("ECON_SMALL", "0")
    try:
        return evaluate(*args, **kw)
    finally:
        monkeypatch.delenv("ECON_SMALL")


@pytest.mark.parametrize("output", ["frame", "dict", "records"])
@pytest.mark.parametrize("columns", [DECODE_COST, WITH_IDS, ("usd_per_m_output_tokens", "model", "tpot_s")])
def test_one_row_equals_the_vectorized_path(catalog, hits, monkeypatch, output, columns):
    slow = _off(monkeypatch, ONE, catalog, columns=columns, output=output)
    miss = evaluate(ONE, catalog, columns=columns, output=output)
    assert hits[0] == 0 and len(small._CACHE) == 1
    hit = evaluate(ONE, catalog, columns=columns, output=output)
    assert hits[0] == 1
    _assert_same(miss, slow)
    _assert_same(hit, slow)
    assert hit == miss if output != "frame" else hit.equals(miss)  # the hit gives the miss's numbers exactly


def test_a_nan_input_is_a_key_that_hits(catalog, hits, monkeypatch):
    """A NaN input (a Float64 layout column's "auto") is found again: NaN is not equal to itself, so the key stands it
    in by one sentinel; without it every call was a miss and kept one more dead entry."""
    row = ONE.with_columns(tp=pl.lit(float("nan"), dtype=pl.Float64))
    slow = _off(monkeypatch, row, catalog, columns=DECODE_COST, output="records")
    first = evaluate(row, catalog, columns=DECODE_COST, output="records")
    again = evaluate(row, catalog, columns=DECODE_COST, output="records")
    assert hits[0] == 1 and len(small._CACHE) == 1 and first == again
    _assert_same(again, slow)


def test_batch_and_context_vary_on_a_hit(catalog, hits, monkeypatch):
    """One kept entry serves every batch and context of the row (capacity-infeasible batches included)."""
    def frame(batch, ctx, inl, outl):
        return ONE.with_columns(batch_size=pl.lit(batch), context_tokens=pl.lit(ctx, dtype=pl.Int64),
                                input_len=pl.lit(inl, dtype=pl.Int64), output_len=pl.lit(outl, dtype=pl.Int64))

    evaluate(frame(8, None, None, None), catalog, columns=WITH_IDS)  # the miss that keeps the row's entry
    assert hits[0] == 0
    for i, (batch, ctx, inl, outl) in enumerate(((1, None, None, None), (244, None, None, None),
                                                 (245, None, 2000, 300), (4096, 8192, None, None),
                                                 (3, 100_000, None, None), (64, None, 30_000, 9))):
        pts = frame(batch, ctx, inl, outl)
        got = evaluate(pts, catalog, columns=WITH_IDS, output="records")
        assert hits[0] == i + 1
        _assert_same(got, _off(monkeypatch, pts, catalog, columns=WITH_IDS, output="records"))
    evaluate(ONE, catalog, columns=WITH_IDS)
    pts = ONE.with_columns(batch_size=pl.lit(4000, dtype=pl.Int64))  # the bench row's key: a hit, capacity-infeasible
    got = evaluate(pts, catalog, columns=WITH_IDS, output="records")
    assert got[0]["feasible"] is False and got[0]["tpot_s"] is None and hits[0] == 7
    _assert_same(got, _off(monkeypatch, pts, catalog, columns=WITH_IDS, output="records"))


def _covered(points: pl.DataFrame) -> pl.DataFrame:
    return points.drop([c for c in _NOT_COVERED if c in points.columns])


@pytest.mark.parametrize("name", ["grid", "layouts", "spec", "economics", "ideal", "decode_cost", "small"])
def test_the_regression_cases_in_small_frames(catalog, hits, monkeypatch, name):
    """The engine_speed fixture cases (without the columns the path does not cover), 16 rows at a time, each chunk
    evaluated twice (miss, then hit): equal to the vectorized path."""
    points, kw = cases(catalog)[name]
    kw = {k: v for k, v in kw.items() if k not in ("columns", "sweet_spot")}
    points = _covered(points)
    for start in range(0, min(points.height, 96), 16):
        chunk = points.slice(start, 16)
        slow = _off(monkeypatch, chunk, catalog, columns=WITH_IDS, **kw)
        _assert_same(evaluate(chunk, catalog, columns=WITH_IDS, **kw), slow)
        _assert_same(evaluate(chunk, catalog, columns=WITH_IDS, **kw), slow)
    for i in range(min(points.height, 24)):  # one row at a time (a frame with an infeasible row is not kept whole)
        one = points.slice(i, 1)
        slow = _off(monkeypatch, one, catalog, columns=WITH_IDS, output="records", **kw)
        for _ in range(2):
            _assert_same(evaluate(one, catalog, columns=WITH_IDS, output="records", **kw), slow)
    assert hits[0] > 0


def test_rows_not_covered_run_the_vectorized_path(catalog, hits, monkeypatch):
    """Speculative decoding set by a column, disaggregated serving, all columns: the vectorized path, same result."""
    for pts, cols in ((ONE.with_columns(spec_draft_tokens=pl.lit(2)), WITH_IDS),
                      (ONE.with_columns(disaggregated=pl.lit(True)), WITH_IDS),
                      (ONE, None), (ONE, WITH_IDS + ("t_mem_s",))):
        for _ in range(2):
            _assert_same(evaluate(pts, catalog, columns=cols), _off(monkeypatch, pts, catalog, columns=cols))
    assert hits[0] == 0


def test_no_stale_entry_across_assumptions_economics_catalogs(catalog, hits, monkeypatch):
    evaluate(ONE, catalog, columns=WITH_IDS)
    other_a = dataclasses.replace(DEFAULT, usable_hbm_frac=0.8)
    for kw in (dict(assumptions=other_a), dict(economics=Economics(basis="rental")),
               dict(economics=Economics(usd_per_kwh=0.2)), dict(strict=False)):
        for _ in range(2):
            _assert_same(evaluate(ONE, catalog, columns=WITH_IDS, output="records", **kw),
                         _off(monkeypatch, ONE, catalog, columns=WITH_IDS, output="records", **kw))
    fresh = load_catalog(cache=False)
    assert fresh is not catalog
    rebuilt = dataclasses.replace(fresh, accelerators=fresh.accelerators.with_columns(
        pl.when(pl.col("id") == "h100-sxm").then(pl.col("hbm_bandwidth_bytes_per_s") * 2)
        .otherwise(pl.col("hbm_bandwidth_bytes_per_s")).alias("hbm_bandwidth_bytes_per_s")))
    base = evaluate(ONE, catalog, columns=WITH_IDS, output="records")
    faster = evaluate(ONE, rebuilt, columns=WITH_IDS, output="records")
    assert faster[0]["tpot_s"] < base[0]["tpot_s"]  # not the first catalog's entry
    _assert_same(faster, _off(monkeypatch, ONE, rebuilt, columns=WITH_IDS, output="records"))
    _assert_same(evaluate(ONE, rebuilt, columns=WITH_IDS, output="records"), faster)


@pytest.mark.parametrize("change", [dict(batch_size=0), dict(batch_size=1.5), dict(batch_size=None),
                                    dict(batch_size=1 << 21), dict(context_tokens=0), dict(context_tokens=2.5),
                                    dict(input_len=0), dict(output_len=-3), dict(context_tokens=10_000_000),
                                    dict(input_len=200_000), dict(dp=2, batch_size=1), dict(batch_size=float("nan"))])
def test_bad_input_on_a_hit_raises_as_the_vectorized_path(catalog, hits, monkeypatch, change):
    """The same InvalidInputError (field, value, range) with the key in the cache as without the small path."""
    schema = {"batch_size": pl.Float64, "context_tokens": pl.Float64, "input_len": pl.Float64,
              "output_len": pl.Float64, "dp": pl.Float64}
    good = {"batch_size": 8.0, "context_tokens": None, "input_len": 1000.0, "output_len": 100.0, "dp": None}
    base = ONE.drop("batch_size")

    def frame(values):
        return base.with_columns(**{k: pl.lit(v, dtype=schema[k]) for k, v in values.items()})

    if "dp" in change:
        good["dp"] = change["dp"]
    evaluate(frame(good), catalog, columns=WITH_IDS)
    assert len(small._CACHE) == 1  # the key is kept: the bad row differs only in batch / context
    bad = frame({**good, **change})
    with pytest.raises(InvalidInputError) as fast:
        evaluate(bad, catalog, columns=WITH_IDS)
    with pytest.raises(InvalidInputError) as slow:
        _off(monkeypatch, bad, catalog, columns=WITH_IDS)
    assert str(fast.value) == str(slow.value)
    assert hits[0] == 0


def test_bad_input_non_strict_context_over(catalog, hits, monkeypatch):
    pts = ONE.with_columns(context_tokens=pl.lit(None, dtype=pl.Int64))
    evaluate(pts, catalog, columns=WITH_IDS, strict=False)
    over = ONE.with_columns(context_tokens=pl.lit(10_000_000))
    _assert_same(evaluate(over, catalog, columns=WITH_IDS, strict=False),
                 _off(monkeypatch, over, catalog, columns=WITH_IDS, strict=False))


def test_without_numba(catalog, hits, monkeypatch):
    """The plain-Python kernel needs no numba: with its import failing the path runs and gives the same numbers."""
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` raises ImportError
    monkeypatch.setattr(fused, "_PURE_KERNEL", {})
    monkeypatch.setattr(fused, "_NUMBA", {})
    assert "numba" not in vars(fused.pure_kernel())
    slow = _off(monkeypatch, ONE, catalog, columns=WITH_IDS, output="records")
    _assert_same(evaluate(ONE, catalog, columns=WITH_IDS, output="records"), slow)
    _assert_same(evaluate(ONE, catalog, columns=WITH_IDS, output="records"), slow)
    assert hits[0] == 1


@pytest.mark.parametrize("env", [("ECON_SMALL", "0"), ("ECON_SMALL", "off"), ("ECON_FUSED", "0")])
def test_the_switch(catalog, hits, monkeypatch, env):
    monkeypatch.setenv(*env)
    for _ in range(2):
        evaluate(ONE, catalog, columns=WITH_IDS)
    assert hits[0] == 0 and len(small._CACHE) == 0


def test_many_rows_and_a_physics_memo_take_the_vectorized_path(catalog, hits):
    seventeen = pl.concat([ONE] * 17)
    for _ in range(2):
        evaluate(seventeen, catalog, columns=WITH_IDS)
        evaluate(ONE, catalog, columns=WITH_IDS, physics={})
        evaluate(pl.concat([ONE] * 2), catalog, columns=WITH_IDS, block_rows=1)
    assert hits[0] == 0 and len(small._CACHE) == 0


def test_the_cache_is_bounded(catalog, hits, monkeypatch):
    monkeypatch.setattr(small._CACHE, "entries", 5)
    for g in range(1, 12):
        evaluate(ONE.with_columns(num_gpus=pl.lit(2 * g)), catalog, columns=WITH_IDS, strict=False)
    assert len(small._CACHE) <= 5


@st.composite
def _rows(draw, catalog):
    models, hws = catalog.models["id"].to_list(), catalog.accelerators["id"].to_list()
    n = draw(st.integers(1, 16))
    given = draw(st.booleans())
    cols: dict = {"model": [], "hardware": [], "precision": [], "batch_size": [], "context_tokens": [],
                  "basis": [], "usd_per_kwh": []}
    if given:
        cols.update(num_gpus=[], tp=[], dp=[], ep=[], pp=[])
    for _ in range(n):
        cols["model"].append(draw(st.sampled_from(models)))
        cols["hardware"].append(draw(st.sampled_from(hws)))
        cols["precision"].append(draw(st.sampled_from(prec.PRECISIONS)))
        cols["batch_size"].append(draw(st.sampled_from([1, 2, 7, 32, 64, 256, 1024, 4096, 65536])))
        cols["context_tokens"].append(draw(st.sampled_from([None, 512, 4096, 32768, 131072])))
        cols["basis"].append(draw(st.sampled_from([None] + [t for t in TIERS if t != "custom"])))
        cols["usd_per_kwh"].append(draw(st.sampled_from([None, 0.05, 0.3])))
        if given:
            tp, dp, pp = (draw(st.sampled_from(v)) for v in ([1, 2, 4, 8], [1, 2], [1, 2]))
            cols["tp"].append(tp)
            cols["dp"].append(dp)
            cols["pp"].append(pp)
            cols["ep"].append(draw(st.sampled_from([1, tp * dp])))
            cols["num_gpus"].append(tp * dp * pp)
    return pl.DataFrame(cols, schema_overrides={"context_tokens": pl.Int64, "basis": pl.String,
                                                "usd_per_kwh": pl.Float64})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_samples_of_the_catalog(catalog, hits, monkeypatch, data):
    """Random frames of 1-16 rows over every model, accelerator, precision, tier, batch (feasible or not), context,
    given or engine-chosen layouts and a per-row power price: miss then hit equal the vectorized path."""
    pts = data.draw(_rows(catalog))
    output = data.draw(st.sampled_from(["frame", "dict", "records"]))
    slow = _off(monkeypatch, pts, catalog, columns=WITH_IDS, strict=False, output=output)
    _assert_same(evaluate(pts, catalog, columns=WITH_IDS, strict=False, output=output), slow)
    _assert_same(evaluate(pts, catalog, columns=WITH_IDS, strict=False, output=output), slow)
    hot = pts.with_columns(batch_size=pl.col("batch_size") * 3)  # same keys, other batches: hits
    _assert_same(evaluate(hot, catalog, columns=WITH_IDS, strict=False, output=output),
                 _off(monkeypatch, hot, catalog, columns=WITH_IDS, strict=False, output=output))
    for i in range(min(pts.height, 3)):  # rows alone (a frame with a row infeasible for another reason is not kept)
        for frame in (pts.slice(i, 1), hot.slice(i, 1)):
            slow = _off(monkeypatch, frame, catalog, columns=WITH_IDS, strict=False, output=output)
            for _ in range(2):
                _assert_same(evaluate(frame, catalog, columns=WITH_IDS, strict=False, output=output), slow)


def test_records_of_the_bench_row_are_exact_on_a_hit(catalog, hits):
    """A hit gives the miss's numbers exactly (both the plain-Python kernel row; the vectorized path's within 1e-9
    relative: an MoE row may differ in the last bit, as the numba and numpy paths do)."""
    first = evaluate(ONE, catalog, columns=DECODE_COST, output="records")
    again = evaluate(ONE, catalog, columns=DECODE_COST, output="records")
    assert first == again and hits[0] == 1
    assert np.isfinite(first[0]["tpot_s"])


def test_enum_ids_custom_rate_and_per_row_economics(catalog, hits, monkeypatch):
    """Enum id columns, the custom tier with its per-row rate, a per-row utilization: equal on the miss and the hit."""
    models, hws = catalog.models["id"].to_list(), catalog.accelerators["id"].to_list()
    pts = pl.DataFrame({"model": ["llama-3.3-70b", "llama-3.3-70b"], "hardware": ["h100-sxm", "h100-sxm"],
                        "precision": ["fp8", "bf16"], "batch_size": [16, 32], "basis": ["custom", "owned"],
                        "usd_per_gpu_hour": [2.5, None], "utilization_frac": [0.6, 0.9]}).with_columns(
        pl.col("model").cast(pl.Enum(models)), pl.col("hardware").cast(pl.Enum(hws)))
    slow = _off(monkeypatch, pts, catalog, columns=WITH_IDS)
    for _ in range(2):
        _assert_same(evaluate(pts, catalog, columns=WITH_IDS), slow)
    assert hits[0] == 2


def test_threads_share_the_cache_safely(catalog, hits, monkeypatch):
    """Callers in threads (dashboard sessions) get their own rows' numbers."""
    from concurrent.futures import ThreadPoolExecutor

    frames = [ONE.with_columns(batch_size=pl.lit(b, dtype=pl.Int64), num_gpus=pl.lit(g, dtype=pl.Int64))
              for b in (1, 16, 64, 300) for g in (2, 4, 8)]
    want = [_off(monkeypatch, f, catalog, columns=WITH_IDS, output="records") for f in frames]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(3):
            got = list(pool.map(lambda f: evaluate(f, catalog, columns=WITH_IDS, output="records"), frames))
            for a, b in zip(got, want):
                _assert_same(a, b)
    assert hits[0] > 0
