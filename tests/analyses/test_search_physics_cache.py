"""Issue 19.5: a search keeps its physics and prices it again when only the economics change.

:func:`econ.analyses.optimize.search` keeps each search's physics (:data:`econ.analyses.optimize._PHYSICS_CACHE`,
keyed by :func:`econ.analyses.optimize._physics_key`), so a dashboard rerun that changes a power price, PUE or
utilization runs the engine's cost chain only (:func:`econ.engine.costs_of`). These tests hold the repriced answer
equal to a search run from scratch, and check that what the physics reads from the economics (the tier, the cache
hit share) is never served stale.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from polars.testing import assert_frame_equal

import econ.analyses.optimize as opt
from econ.analyses.optimize import SLO, search
from econ.assumptions import Economics
from econ.engine import CostBasis, CostInputs, costs_of, run_costs
from econ.tables.catalog import load_catalog

MODEL, HARDWARE = "llama-3.3-70b", ["h100-sxm", "gb200-nvl72"]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _fresh(catalog, **kw):
    opt._PHYSICS_CACHE.clear()
    return search(catalog, model=MODEL, hardware=HARDWARE, **kw)


def _equal(a, b):
    assert_frame_equal(a.points, b.points, check_exact=True)
    assert_frame_equal(a.rejected, b.rejected, check_exact=True)


@pytest.mark.parametrize("change", [
    dict(pue=1.9), dict(usd_per_kwh=0.21), dict(utilization_frac=0.55), dict(input_output_mix=9.0),
    dict(accelerator_life_years=3.0, cost_of_capital_frac=0.2), dict(build_usd_per_mw_it=2.0e7),
])
def test_an_economics_change_reprices_the_kept_physics_exactly(catalog, change):
    first = Economics()
    _fresh(catalog, economics=first)  # fills the cache
    calls = []
    real = opt.run_physics
    opt.run_physics = lambda *a, **k: calls.append(1) or real(*a, **k)
    try:
        again = search(catalog, model=MODEL, hardware=HARDWARE, economics=replace(first, **change))
    finally:
        opt.run_physics = real
    assert calls == []  # the physics was kept, only the costs ran
    _equal(again, _fresh(catalog, economics=replace(first, **change)))
    # and the answer did move where the change is a cost (a PUE, a power price, a life)
    base = _fresh(catalog, economics=first)
    if "input_output_mix" not in change:
        assert not np.allclose(again.points["usd_per_m_output_tokens_all_in"].to_numpy(),
                               base.points["usd_per_m_output_tokens_all_in"].to_numpy())


@pytest.mark.parametrize("change", [dict(cache_hit_frac=0.6), dict(basis="neocloud"),
                                    dict(basis="custom", usd_per_gpu_hour=2.0)])
def test_what_the_physics_reads_from_the_economics_is_never_served_stale(catalog, change):
    _fresh(catalog, economics=Economics())
    after = search(catalog, model=MODEL, hardware=HARDWARE, economics=replace(Economics(), **change))
    _equal(after, _fresh(catalog, economics=replace(Economics(), **change)))


def test_other_slos_and_lengths_are_other_searches(catalog):
    _fresh(catalog)
    for kw in (dict(slo=SLO(min_tokens_per_s_per_user=60.0, max_ttft_s=1.0)), dict(input_len=8192),
               dict(slo=SLO(min_tokens_per_s_per_user=20.0, percentile=99.0))):
        _equal(search(catalog, model=MODEL, hardware=HARDWARE, **kw), _fresh(catalog, **kw))


def test_a_frontier_only_search_is_not_kept(catalog):
    opt._PHYSICS_CACHE.clear()
    search(catalog, model=MODEL, hardware=HARDWARE, frontier_only=True)
    assert len(opt._PHYSICS_CACHE) == 0


def test_the_cache_is_bounded(catalog):
    opt._PHYSICS_CACHE.clear()
    for n in range(opt.PHYSICS_CACHE_ENTRIES + 3):
        search(catalog, model="llama-3.1-8b", hardware=["h100-sxm"], input_len=512 + n)
    assert len(opt._PHYSICS_CACHE) == opt.PHYSICS_CACHE_ENTRIES


def test_costs_of_a_kept_cost_basis_equal_run_costs_of_those_rows(catalog):
    """:meth:`CostBasis.take` of some rows, priced, equals the whole block's :func:`run_costs` at those rows."""
    res = search(catalog, model=MODEL, hardware=["h100-sxm"])  # warm; then rebuild one block's physics by hand
    assert res.points.height
    m, hws = opt._prepare(catalog, MODEL, ["h100-sxm"], 2048, 1024)
    e = Economics(pue=1.5)
    plans, _ = opt._plans(catalog, m, hws, 2048, 1024, SLO(), opt.SearchSpace(), opt.DEFAULT, e, opt.DEFAULT_DEPLOYMENT)
    plan = plans[0]
    f = plan["fi"][:500]
    inp = plan["inputs"](f, plan["per_group"][:500] * plan["fam"]["dp"][f], plan["fam_layout"].take(f),
                         plan["fam_layout"].take(f), "aggregated", plan["cpv"][:500])
    phys = opt.run_physics(inp, opt.DEFAULT, opt.DEFAULT_DEPLOYMENT)
    whole = run_costs(phys, inp, inp.hardware, CostInputs.from_economics(e, len(f)))
    rows = np.arange(0, len(f), 7)
    part = costs_of(CostBasis.of(phys, inp, inp.hardware).take(rows), CostInputs.from_economics(e, len(rows)))
    for name in ("usd_per_gpu_hour", "usd_per_m_input_tokens", "usd_per_m_output_tokens",
                 "usd_per_m_output_tokens_all_in", "usd_per_m_blended_tokens"):
        np.testing.assert_array_equal(np.broadcast_to(getattr(whole, name), (len(f),))[rows], getattr(part, name))


def test_the_kept_physics_is_bounded_in_bytes(catalog):
    opt._PHYSICS_CACHE.clear()
    search(catalog, model=MODEL, hardware=HARDWARE)
    assert 0 < opt._PHYSICS_CACHE.bytes() <= opt.PHYSICS_CACHE_BYTES

    from econ.tables.catalog import CatalogCache

    cache = CatalogCache(10, max_bytes=100, size_of=len)
    cache.put(catalog, ("a",), "x" * 20)
    cache.put(catalog, ("big",), "x" * 26)  # above a quarter of the budget: returned by the caller, not kept
    assert cache.get(catalog, ("big",)) is None and cache.get(catalog, ("a",)) == "x" * 20
    for i in range(6):
        cache.put(catalog, (i,), "x" * 25)
    assert cache.bytes() <= 100 and cache.get(catalog, ("a",)) is None  # the oldest went first


def test_a_gone_objects_entries_are_dropped_and_an_id_reused_is_a_miss():
    """CatalogCache keys by id(obj) with one weak reference per object: when the object is collected its entries go
    at the next put (flagged by the reference's callback, not scanned on every put), and another object that reuses
    the id never reads them."""
    import gc

    from econ.tables.catalog import CatalogCache

    class Obj:
        pass

    cache = CatalogCache(100)
    a, b = Obj(), Obj()
    for i in range(3):
        cache.put(a, (i,), i)
    cache.put(b, ("b",), "kept")
    assert len(cache) == 4 and cache.get(a, (1,)) == 1
    del a
    gc.collect()
    cache.put(b, ("c",), "new")  # the put after a's collection drops its entries
    assert len(cache) == 2 and cache.get(b, ("b",)) == "kept"
    c = Obj()  # may reuse a's id: its keys are misses
    assert all(cache.get(c, (i,)) is None for i in range(3))


def test_nbytes_of_counts_each_array_and_frame_once():
    """The one size of a kept engine result (optimize's physics cache, the quote checker's memos)."""
    import polars as pl

    from econ.tables.catalog import nbytes_of

    a = np.zeros(1000)  # 8,000 bytes
    frame = pl.DataFrame({"x": np.arange(500, dtype=np.int64)})
    block = opt._PricedBlock(frame=frame, basis=None, p10=a, p90=a)  # p90 is p10: counted once
    assert nbytes_of(block) == 8000 + frame.estimated_size()
    assert nbytes_of(([block], {"k": a}, 3.5, "text")) == 8000 + frame.estimated_size()
    assert nbytes_of(None) == 0
    # a broadcast view (the engine's absent input columns) holds only the array it views, counted once
    assert nbytes_of(np.broadcast_to(np.float64(2.0), (10_000,))) <= 8
    column = np.zeros((1000, 1))
    assert nbytes_of((np.broadcast_to(column, (1000, 50)), column)) == 8000
    assert nbytes_of((np.zeros(3), np.array(1.0))) == 24 + 8
    labels = pl.Series(["TP8"] * 1000)  # a Polars Series (the memo's layout labels) counts its own size
    assert nbytes_of(labels) == labels.estimated_size() > 0
