"""econ.analyses.search: the faster order of the frontier and of the cheapest point equal the sorts they replace
(issue 19.5: Hardware comparison's rerun)."""

from __future__ import annotations

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

from econ.analyses.search import cheapest, pareto_frontier, stable_order
from econ.tables.catalog import load_catalog


def _cheapest_by_sort(points, by=("hardware",), cost="usd_per_m_output_tokens_all_in", speed="tokens_per_s_per_user"):
    """cheapest as it was: the whole frame sorted, then the first row of each group."""
    ranked = points.sort([cost, speed], descending=[False, True], maintain_order=True)
    return ranked.unique(subset=list(by), keep="first", maintain_order=True) if by else ranked.head(1)


def _random(n: int, seed: int) -> pl.DataFrame:
    """Points with ties on cost and speed, NaN, -0.0 and 0.0, nulls, a few groups."""
    rng = np.random.default_rng(seed)
    cost = rng.choice([0.0, -0.0, 1.0, 2.0, 2.0, np.nan, 3.5], n)
    speed = rng.choice([0.0, -0.0, 5.0, 5.0, 7.0, np.nan], n)
    return pl.DataFrame({"hardware": pl.Series(list(rng.choice(["a", "b", "c", None], n)), dtype=pl.String),
                         "dom": rng.integers(0, 3, n),
                         "usd_per_m_output_tokens_all_in": cost, "tokens_per_s_per_user": speed,
                         "c2": pl.Series(rng.choice([1.0, 2.0, np.nan], n)).fill_nan(None),
                         "row": np.arange(n)})


def test_stable_order_is_numpys_lexsort():
    """stable_order equals np.lexsort of the reversed keys: on random keys with ties, NaN, -0.0 and 0.0, unsigned and
    signed integers, and on empty keys."""
    rng = np.random.default_rng(5)
    for n in (0, 1, 7, 500, 5000):
        g = rng.integers(0, 4, n).astype(np.uint32)
        x = rng.choice([0.0, -0.0, 1.5, 2.0, np.nan, 3.0], n)
        y = rng.choice([-1.0, 0.0, -0.0, 1.0, np.nan], n)
        for keys in ((g, -x, y), (x,), (y, g), (rng.integers(-3, 3, n), x)):
            assert np.array_equal(stable_order(*keys), np.lexsort(keys[::-1])), (n, len(keys))
            assert stable_order(*keys).dtype == np.int64


def test_cheapest_equals_the_sorted_first_rows():
    """cheapest (the order of two columns, then the winners gathered) equals sorting the whole frame and keeping the
    first row per group: on Hardware comparison's points (Llama 3.3 70B, every accelerator, the output and blended
    objectives) and on random points with ties, NaN, signed zeros and null groups, by one column, two and none."""
    from econ.analyses.compare import hardware_comparison

    cat = load_catalog()
    pts = hardware_comparison(cat, model="llama-3.3-70b").points.filter(pl.col("meets_slo"))
    assert pts.height > 1000
    for cost in ("usd_per_m_output_tokens_all_in", "usd_per_m_blended_tokens"):
        assert_frame_equal(cheapest(pts, cost=cost), _cheapest_by_sort(pts, cost=cost), check_exact=True)
    for seed in range(6):
        f = _random(400, seed)
        for by in (("hardware",), ("hardware", "dom"), ("c2",), ()):
            assert_frame_equal(cheapest(f, by=by), _cheapest_by_sort(f, by=by), check_exact=True)
        assert_frame_equal(cheapest(f.head(0)), _cheapest_by_sort(f.head(0)), check_exact=True)


def test_pareto_frontier_equals_the_lexsort_version():
    """pareto_frontier with stable_order keeps the rows np.lexsort kept: on Hardware comparison's points (cost and
    throughput frontiers) and random points with ties."""
    from econ.analyses.compare import hardware_comparison

    cat = load_catalog()
    pts = hardware_comparison(cat, model="llama-3.3-70b").points
    real = np.lexsort
    calls = []

    def frontier_with_lexsort(frame, **kw):
        import econ.analyses.search as search

        orig = search.stable_order
        search.stable_order = lambda *k: real(k[::-1])
        try:
            calls.append(1)
            return pareto_frontier(frame, **kw)
        finally:
            search.stable_order = orig

    cases = [(pts.filter(pl.col("feasible")), dict(by=("hardware",), x="tokens_per_s_per_user",
                                                   y="output_tokens_per_s_per_gpu", minimize_y=False)),
             (pts.filter(pl.col("usd_per_m_output_tokens_all_in").is_not_null()),
              dict(by=("hardware",), x="tokens_per_s_per_user", y="usd_per_m_output_tokens_all_in"))]
    for seed in range(4):
        f = _random(300, seed).drop_nulls("hardware")
        cases.append((f, dict(by=("hardware", "dom"), x="tokens_per_s_per_user", y="usd_per_m_output_tokens_all_in")))
    for frame, kw in cases:
        got = pareto_frontier(frame, **kw)
        assert_frame_equal(got, frontier_with_lexsort(frame, **kw), check_exact=True)
    assert len(calls) == len(cases) and cases[0][0].height > 1000
