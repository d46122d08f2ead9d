"""The frontier search builds frames and labels for frontier candidates only (issue 20.5), and answers exactly what
the full search's frontier answers: the same frontier rows, columns and order, the same rejected families."""

from __future__ import annotations

import pytest
from polars.testing import assert_frame_equal

from econ.analyses import optimize
from econ.tables.catalog import load_catalog


@pytest.mark.parametrize("kw", [dict(model="deepseek-v3", hardware=["h200-sxm", "gb200-nvl72"]),
                                dict(model="llama-3.3-70b", hardware=["h100-sxm", "mi300x", "l40s"]),
                                dict(model="gpt-oss-120b", hardware="h100-sxm", output_len=4096)])
def test_frontier_only_search_equals_the_full_search_frontier(kw):
    catalog = load_catalog()
    full = optimize.search(catalog, **kw)
    front, rejected = optimize.frontier(catalog, **kw)
    assert front.height > 5
    assert_frame_equal(optimize.frontier_from(full), front)
    assert_frame_equal(full.rejected, rejected)
    slim = optimize.search(catalog, frontier_only=True, **kw)
    assert slim.points.height < full.points.height  # fewer rows built
    assert set(front["layout"]) <= set(slim.points["layout"])
