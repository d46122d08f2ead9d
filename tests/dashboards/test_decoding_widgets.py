"""Issue 19.1 on the dashboard: the sidebar's formats / speculative decoding widgets drive the scenario, the URL
and every number the Cost explorer shows (checked against econ called directly with the same scenario)."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from tests.dashboards.test_dashboard import expected_cost_metrics, metrics, page, run, scenario  # noqa: E402
from dashboards.components.safe_text import unescape  # noqa: E402
from econ.tables.catalog import load_catalog  # noqa: E402

DEEPSEEK = dict(model="deepseek-v3", hardware="b200", precision="fp8", basis="rental", num_gpus="8", batch_size="64")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_turning_mtp_off_for_deepseek_v3_changes_the_cost_explorer(catalog):
    at = run(page("cost_explorer", **DEEPSEEK))
    on = metrics(at)
    assert scenario(at).spec_method is None
    at.selectbox(key="sc.spec_method").set_value("none")
    run(at)
    sc = scenario(at)
    assert sc.spec_method == "none"
    off = metrics(at)
    assert off == {**off, **expected_cost_metrics(sc, catalog)}
    assert off["Output tokens/s per user"] != on["Output tokens/s per user"]
    assert off["$ per M output tokens"] != on["$ per M output tokens"]
    assert at.query_params["spec_method"] == "none"  # a copied link keeps it
    again = run(page("cost_explorer", **at.query_params))
    assert scenario(again).spec_method == "none" and metrics(again) == off


def test_an_fp8_kv_cache_under_bf16_weights_doubles_the_kv_wall(catalog):
    base = dict(model="llama-3.3-70b", hardware="h100-sxm", precision="bf16", num_gpus="4", batch_size="1")
    bf16 = metrics(run(page("cost_explorer", **base)))
    at = run(page("cost_explorer", **base))
    at.selectbox(key="sc.kv_precision").set_value("fp8")
    run(at)
    fp8 = metrics(at)
    assert fp8 == {**fp8, **expected_cost_metrics(scenario(at), catalog)}
    wall = {k: int(v.replace(",", "")) for k, v in (("bf16", bf16["Max batch (KV-cache wall)"]),
                                                    ("fp8", fp8["Max batch (KV-cache wall)"]))}
    assert wall["fp8"] == pytest.approx(2 * wall["bf16"], abs=2)


def test_the_cost_explorer_says_which_decoding_it_priced():
    at = run(page("cost_explorer", **DEEPSEEK))
    text = " ".join(unescape(c.value) for c in at.caption)
    assert "speculative decoding mtp" in text and "ships MTP modules" in text
    at.selectbox(key="sc.spec_method").set_value("none")
    run(at)
    text = " ".join(unescape(c.value) for c in at.caption)
    assert "speculative decoding off (set)" in text
