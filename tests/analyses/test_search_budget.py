"""Bounded searches (issue 12, finding 1): the size is known before the physics runs, a search above the
budget is refused with the knobs to lower, repeated values count once, and blocks keep memory flat."""

from __future__ import annotations

import pytest

from econ.tables.catalog import load_catalog
from econ.errors import InvalidInputError
from econ.analyses.optimize import BLOCK_ROWS, SearchSpace, search, search_size


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


SMALL = dict(model="llama-3.1-70b", hardware="h100-sxm", space=SearchSpace(max_gpus=8, modes=("aggregated",)))


def test_search_size_is_exact(catalog):
    size = search_size(catalog, **SMALL)
    res = search(catalog, **SMALL)
    # every evaluated deployment is either a point (feasible) or infeasible at its batch: the points are a subset
    assert 0 < res.points.height <= size["rows"]
    assert size["message"] == "" and size["budget"] == SearchSpace().max_points
    done = []
    search(catalog, **SMALL, progress=lambda d, t: done.append((d, t)))
    assert done[-1] == (size["rows"], size["rows"])  # the progress bar ends at the size announced
    assert all(b[0] > a[0] for a, b in zip(done, done[1:]))


def test_a_search_above_the_budget_is_refused_before_it_runs(catalog):
    space = SearchSpace(max_gpus=256, max_points=10_000)
    size = search_size(catalog, model="deepseek-v3", hardware=["h200-sxm", "b200"], space=space)
    assert size["rows"] > 10_000
    with pytest.raises(InvalidInputError, match=r"above the budget of 10,000 \(max_points\); lower max_gpus "
                                                r"\(now 256\), pin tp/dp/ep/pp, fewer accelerators"):
        search(catalog, model="deepseek-v3", hardware=["h200-sxm", "b200"], space=space,
               progress=lambda d, t: pytest.fail("physics ran on a refused search"))


def test_repeated_values_count_once(catalog):
    once = search_size(catalog, model="llama-3.1-70b", hardware="h100-sxm",
                       space=SearchSpace(max_gpus=8, scale_up_domain_sizes=(8,)))
    many = search_size(catalog, model="llama-3.1-70b", hardware=["h100-sxm"] * 16,
                       space=SearchSpace(max_gpus=8, scale_up_domain_sizes=(8,) * 16, precisions=("fp8", "fp8", "bf16"),
                                         modes=("aggregated", "aggregated", "disaggregated")))
    assert many["rows"] == once["rows"] and many["domains"] == 1
    assert SearchSpace(scale_up_domain_sizes=(8, 72, 8)).scale_up_domain_sizes == (8, 72)


def test_blocks_do_not_change_the_answer(catalog, monkeypatch):
    import econ.analyses.optimize as opt
    whole = search(catalog, **SMALL).points
    monkeypatch.setattr(opt, "BLOCK_ROWS", 7)
    assert opt.BLOCK_ROWS != BLOCK_ROWS
    blocked = search(catalog, **SMALL).points
    key = ["layout", "precision", "batch_size", "disaggregated"]
    assert blocked.sort(key).equals(whole.sort(key))


def test_max_points_range():
    with pytest.raises(InvalidInputError, match="max_points=0 is outside"):
        SearchSpace(max_points=0)
