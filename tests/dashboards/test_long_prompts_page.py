"""Issue 22: the Long prompts page shows what econ.analyses.long_prompt.long_prompt_engine returns for its inputs
(the UI computes nothing), with display names and the sources of the KV tiers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboards.components import fmt, safe_text  # noqa: E402
from econ.analyses.long_prompt import long_prompt_engine  # noqa: E402
from econ.io.scenario import Scenario  # noqa: E402
from econ.tables.catalog import load_catalog  # noqa: E402

PAGE = ROOT / "dashboards" / "pages" / "long_prompts.py"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _run():
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_long_prompts_page_equals_the_econ_call(catalog):
    at = _run()
    at.select_slider(key="lp.prompt").set_value(262_144).run()
    at.slider(key="lp.hit").set_value(0.5).run()
    at.selectbox(key="lp.tier").set_value("host").run()
    at.selectbox(key="lp.offload").set_value("nvme").run()
    assert not at.exception, [e.message for e in at.exception]
    sc = Scenario()
    r = long_prompt_engine(catalog, model=sc.model, hardware=sc.hardware, prompt_tokens=262_144,
                           output_len=sc.output_len, precision=sc.precision, cache_hit_frac=0.5,
                           prefix_cache_tier="host", kv_offload="nvme", assumptions=sc.assumptions(),
                           economics=sc.economics(catalog))
    metrics = {m.label: m.value for m in at.metric}
    one = r.by_cp.row(0, named=True)
    assert metrics["TTFT, one instance"] == fmt.seconds(one["ttft_s"])
    assert metrics["$ per M input tokens"] == fmt.usd_per_m(one["usd_per_m_input_tokens"])
    assert metrics["Max batch, HBM only"] == fmt.count(r.capacity["max_batch_size"][0])
    assert metrics["Max batch, host memory, then nvme"] == fmt.count(r.capacity["max_batch_size"][1])
    assert r.capacity["max_batch_size"][1] > r.capacity["max_batch_size"][0]
    assert one["prefix_load_s"] > 0  # the half of the prompt cached in host memory is loaded over PCIe
    # display names, not ids; the tiers' sources are shown; the context note for a prompt beyond 128K
    caption = safe_text.unescape(at.caption[0].value)
    assert "Llama-3.3-70B" in caption and "llama-3.3-70b" not in caption and "H100" in caption
    assert any("released context" in safe_text.unescape(i.value) for i in at.info)
    assert any("Assumptions" in c.value and "Yang et al" in c.value for c in at.caption)
    assert "source" in at.dataframe[2].value.columns


def test_a_million_token_prompt_splits_over_context_parallel_ranks(catalog):
    """1M tokens of Llama-3.1-405B on H100 (beyond its 128K release: a RoPE-extended variant): the ring hides behind
    attention, so TTFT falls with the ranks at near-constant GPU-seconds (the published 77 s on 128 H100 is checked
    through the engine at Yang et al.'s own TP8 rank in tests/engine/test_kv_tiers_engine.py)."""
    r = long_prompt_engine(catalog, model="llama-3.1-405b", hardware="h100-sxm", prompt_tokens=1_000_000,
                           output_len=256, kv_offload="host")
    assert "released context" in r.context_note
    t = r.by_cp["ttft_s"].to_list()
    assert all(b < a for a, b in zip(t, t[1:]))
    assert min(r.by_cp["parallel_efficiency_frac"].to_list()) >= 0.9
    assert r.capacity["max_batch_size"][1] > r.capacity["max_batch_size"][0]


def test_chunked_prefill_and_a_prefill_part_equal_the_econ_call(catalog):
    """The chunk-size input and the prefill-accelerator choice show long_prompt's TTFT, decode slowdown and the
    prefill part's TTFT (KV shipment included), with display names."""
    from econ.analyses.long_prompt import long_prompt
    from econ.physics.precision import DEFAULT_KV_PRECISION

    at = _run()
    at.select_slider(key="lp.chunk").set_value(8_192).run()
    at.selectbox(key="lp.part").set_value("l40s").run()
    assert not at.exception, [e.message for e in at.exception]
    sc = Scenario()
    r = long_prompt(catalog, model=sc.model, hardware=sc.hardware, prompt_tokens=100_000, precision=sc.precision,
                    cp_sizes=(1,), prefill_hardware="l40s", chunk_tokens=[8_192], decode_batch=64,
                    output_len=sc.output_len, kv_precision=DEFAULT_KV_PRECISION[sc.precision],
                    assumptions=sc.assumptions(), economics=sc.economics(catalog))
    metrics = {m.label: m.value for m in at.metric}
    row = r.chunked.row(0, named=True)
    assert metrics["TTFT, 8,192-token chunks"] == fmt.seconds(row["ttft_s"])
    assert metrics["Decode slowdown while it streams in"] == f"{fmt.sig(row['tpot_inflation'])}x"
    part = r.plans.filter(r.plans["strategy"] == "prefill part").row(0, named=True)
    name = catalog.accelerator("l40s")["display_name"]
    assert metrics[f"TTFT on {name}"] == fmt.seconds(part["ttft_s"])
    assert part["ttft_s"] >= part["prefill_s"] and part["kv_transfer_s"] > 0
    chunks, parts = at.dataframe[3].value, at.dataframe[4].value
    assert list(chunks["chunk_tokens"]) == [512, 1_024, 2_048, 4_096, 8_192, 16_384, 32_768]  # one row per size
    assert list(chunks["tpot_inflation"]) == sorted(chunks["tpot_inflation"])  # bigger chunks slow decode more
    assert list(parts["strategy"]) == ["context parallel", "prefill part"]


def test_a_wide_ep_moe_model_renders_without_an_exception():
    """DeepSeek-V3 on GB200 NVL72 (attention-DP decode layouts) renders every section: the lone prompt runs on one
    attention group, and so does the decode batch beside the chunked prefill (it raised a TypeError before)."""
    at = AppTest.from_file(str(PAGE), default_timeout=180)
    at.query_params["model"] = "deepseek-v3"
    at.query_params["hardware"] = "gb200-nvl72"
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert any("DeepSeek" in safe_text.unescape(m.value) for m in at.caption) or \
        any("DeepSeek" in safe_text.unescape(m.value) for m in at.markdown)
