"""The auto batch and layout of ``econ cost`` under a speed floor: chosen together, not one after the other."""

from __future__ import annotations

import pytest

from econ.tables.catalog import load_catalog
from econ.errors import InvalidInputError
from econ.analyses.sweep import choose_layout, cost_table, layout_candidates


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


KW = dict(model="deepseek-v3", hardware="h200-sxm", precision="fp8")


def test_layout_is_the_cheapest_that_meets_the_floor(catalog):
    floor = 25.0
    row = cost_table(catalog, **KW, min_tokens_per_s_per_user=floor).row(0, named=True)
    assert row["served_tokens_per_s_per_user"] >= floor
    # every other candidate layout, at its own best batch meeting the floor, costs at least as much (2% tie)
    for cand in layout_candidates(catalog, **KW).iter_rows(named=True):
        lay = {k: cand[k] for k in ("num_gpus", "tp", "dp", "ep", "pp")}
        other = cost_table(catalog, **KW, **lay, min_tokens_per_s_per_user=floor).row(0, named=True)
        if other["feasible"] and other["served_tokens_per_s_per_user"] >= floor:
            assert row["usd_per_m_output_tokens"] <= other["usd_per_m_output_tokens"] * 1.02, other["layout"]


def test_the_auto_batch_is_the_largest_that_meets_the_floor(catalog):
    floor = 25.0
    row = cost_table(catalog, **KW, min_tokens_per_s_per_user=floor).row(0, named=True)
    lay = {k: row[k] for k in ("num_gpus", "tp", "dp", "ep", "pp")}
    bigger = cost_table(catalog, **KW, **lay, batch_sizes=[row["batch_size"] + row["dp"] * 16]).row(0, named=True)
    assert not (bigger["feasible"] and bigger["served_tokens_per_s_per_user"] >= floor
                and bigger["batch_size"] <= row["sweet_spot_batch"])


def test_without_a_floor_each_layout_sits_at_its_sweet_spot(catalog):
    chosen = choose_layout(catalog, **KW)
    assert chosen["meets_slo"] and chosen["batch_size"] >= chosen["dp"]


def test_an_unreachable_floor_keeps_the_sweet_spot_and_says_so(catalog):
    chosen = choose_layout(catalog, **KW, min_tokens_per_s_per_user=5000.0)
    assert chosen is not None and not chosen["meets_slo"]
    with pytest.raises(InvalidInputError, match="min_tokens_per_s_per_user=-1"):
        cost_table(catalog, **KW, min_tokens_per_s_per_user=-1.0)


def test_deepseek_v3_on_8_h200_takes_attention_dp_with_no_layout_flags(capsys):
    """Issue 8 known answer: `econ cost` with no layout flags picks attention-DP for DeepSeek-V3 FP8 on 8 x
    H200; the MLA latent is not replicated per rank, so the max batch is at least the old TP8 answer (724)."""
    import json

    from econ.cli import main
    assert main(["cost", "--model", "deepseek-v3", "--hardware", "h200-sxm", "--precision", "fp8", "--gpus", "8",
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    row = data[0] if isinstance(data, list) else data
    assert row["layout"].startswith("ADP8")
    assert row["dp"] == 8 and row["tp"] == 1
    assert row["max_batch_size"] >= 724


def test_a_given_batch_smaller_than_the_cheapest_layouts_dp_picks_a_layout_that_runs_it(catalog):
    """econ cost --batch 1,2 on an MoE model: the layout is chosen among those with dp <= 1 (not refused)."""
    frame = cost_table(catalog, model="mixtral-8x7b", hardware="h100-sxm", precision="bf16", batch_sizes=[1, 2])
    assert frame["dp"].to_list() == [1, 1] and frame["feasible"].all()


def test_the_layout_is_the_cheapest_at_the_batch_asked_for(catalog):
    """Issue 19 defect: `econ cost --batch 1` on Llama-3.1-8B / H100 picked TP2 ($9.75/M output) because the layout
    was chosen at the sweet-spot batch and then priced at batch 1, where TP1 is cheaper ($7.57/M)."""
    picked = cost_table(catalog, model="llama-3.1-8b", hardware="h100-sxm", precision="bf16", batch_sizes=[1])
    tp2 = cost_table(catalog, model="llama-3.1-8b", hardware="h100-sxm", precision="bf16", batch_sizes=[1], tp=2, pp=1)
    assert picked["layout"][0] == "TP1"
    assert picked["usd_per_m_output_tokens_all_in"][0] < tp2["usd_per_m_output_tokens_all_in"][0]
    # a list of batches: each row is the cheapest layout at its own batch
    many = cost_table(catalog, model="llama-3.1-8b", hardware="h100-sxm", precision="bf16", batch_sizes=[1, 256])
    for b, layout in zip(many["batch_size"], many["layout"]):
        alone = cost_table(catalog, model="llama-3.1-8b", hardware="h100-sxm", precision="bf16", batch_sizes=[b])
        assert alone["layout"][0] == layout
