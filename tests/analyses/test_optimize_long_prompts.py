"""Issue 22.3: the deployment search gets a context-parallel dimension for long prompts (100K+ tokens)."""

from __future__ import annotations

import pytest

from econ.analyses.optimize import CP_SIZES, SLO, SearchSpace, optimize, search
from econ.errors import InvalidInputError
from econ.tables.catalog import load_catalog
from econ.vocabulary import CP_SEARCH_MIN_TOKENS


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _space(**kw):
    return SearchSpace(precisions=("fp8",), modes=("aggregated",), **kw)


def test_a_million_token_prompt_on_h100_picks_cp_above_one_and_ttft_falls(catalog):
    kw = dict(model="llama-3.1-405b", hardware="h100-sxm", input_len=1_000_000, output_len=256)
    space = _space(context_limit_tokens=1 << 20)
    best = optimize(catalog, slo=SLO(max_ttft_s=120.0), space=space, **kw).best
    assert best is not None and best["cp"] > 1 and best["ttft_s"] <= 120.0
    alone = optimize(catalog, slo=SLO(max_ttft_s=1e9), space=_space(context_limit_tokens=1 << 20, cp=1), **kw)
    assert alone.best["cp"] == 1
    assert best["ttft_s"] < alone.best["ttft_s"] / 4
    # with cp = 1 nothing meets the 120 s TTFT: the reason says so
    none = optimize(catalog, slo=SLO(max_ttft_s=120.0), space=_space(context_limit_tokens=1 << 20, cp=1), **kw)
    assert none.best is None and "TTFT" in none.reason
    assert best["num_gpus"] * best["cp"] <= space.max_gpus


def test_short_prompts_do_not_search_cp(catalog):
    pts = search(catalog, model="llama-3.3-70b", hardware="h100-sxm", input_len=CP_SEARCH_MIN_TOKENS - 1,
                 output_len=256, space=_space()).points
    assert set(pts["cp"].to_list()) == {1}
    long_pts = search(catalog, model="llama-3.3-70b", hardware="h100-sxm", input_len=CP_SEARCH_MIN_TOKENS,
                      output_len=256, space=_space(context_limit_tokens=1 << 20)).points
    assert set(long_pts["cp"].to_list()) <= set(CP_SIZES) and max(long_pts["cp"].to_list()) > 1


def test_a_context_beyond_the_model_needs_a_window(catalog):
    with pytest.raises(InvalidInputError, match="context of llama-3.1-405b"):
        search(catalog, model="llama-3.1-405b", hardware="h100-sxm", input_len=1_000_000, output_len=256,
               space=_space())
    with pytest.raises(InvalidInputError, match=r"cp=0 is outside \[1, 1024\]"):
        _space(cp=0)
    with pytest.raises(InvalidInputError, match="kv_offload"):
        _space(kv_offload="disk")


def test_kv_offload_raises_the_searched_batch(catalog):
    kw = dict(model="llama-3.3-70b", hardware="gb200-nvl72", input_len=32768, output_len=1024)
    hbm = search(catalog, space=_space(), **kw).points
    host = search(catalog, space=_space(kv_offload="host"), **kw).points
    assert host["max_batch_size"].max() > hbm["max_batch_size"].max()
    assert host["batch_size"].max() > hbm["batch_size"].max()
