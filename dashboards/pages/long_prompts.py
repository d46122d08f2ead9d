"""Long prompts: one 8K-1M-token prompt through the engine, by context-parallel degree, with prefix caching and KV
offload (issue 22 parts 2-3).

One econ call (:func:`econ.analyses.long_prompt.long_prompt_engine`): the scenario's model and accelerator (sidebar),
the prompt length, the share of it served from a prefix cache and the tier that cache lives in, and how far the decode
KV may spill beyond HBM. The page shows TTFT, prefill GPU-seconds and $/M input tokens for each context-parallel
degree, and the decode capacity with and without offload, with the tiers' figures and sources. A second call
(:func:`econ.analyses.long_prompt.long_prompt`) gives the prompt chunked beside a decode batch (TTFT and how much decode
slows, per chunk size) and prefilled on a chosen prefill accelerator (TTFT including the KV shipment to the decode
accelerators). The page computes nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import altair as alt  # noqa: E402
import polars as pl  # noqa: E402
import streamlit as st  # noqa: E402

from dashboards import charts  # noqa: E402
from dashboards.components import chart, fmt, memory, safe_text, scenario_sidebar, state, table  # noqa: E402
from econ.analyses.long_prompt import (DEFAULT_CP_SIZES, LongPrompt, LongPromptEngine, long_prompt,  # noqa: E402
                                       long_prompt_engine)
from econ.errors import EconError  # noqa: E402
from econ.io.scenario import Scenario  # noqa: E402
from econ.physics.precision import DEFAULT_KV_PRECISION, PRECISIONS  # noqa: E402
from econ.vocabulary import FIELDS, KV_TIER_CHOICES  # noqa: E402

TITLE = "Long prompts"
ICON = ":material/subject:"
ORDER = 27
PROMPT_LENGTHS = (8_192, 16_384, 32_768, 65_536, 100_000, 131_072, 262_144, 524_288, 1_000_000)
"""Prompt lengths offered [tokens] (up to the 1M tokens of Yang et al., arXiv:2411.01783)."""
CHUNK_SIZES = (512, 1_024, 2_048, 4_096, 8_192, 16_384, 32_768)
"""Chunk sizes of chunked prefill shown [tokens] (Sarathi-Serve, Agrawal et al. OSDI 2024, runs 512-2K chunks)."""
DECODE_BATCH = 64
"""Decode batch the chunks ride with [sequences] (``econ prefill``'s default)."""
NO_PART = ""
CHUNKED = ["chunk_tokens", "ttft_s", "tpot_inflation", "iteration_s", "chunk_s", "layout"]
PARTS = ["strategy", "hardware", "gpus", "ttft_s", "prefill_s", "kv_transfer_s", "usd_per_prompt"]
TIER_NAMES = {"hbm": "GPU memory (HBM)", "host": "Host memory", "nvme": "Local NVMe", "remote": "Remote KV pool"}
OFFLOAD_NAMES = {"host": "Host memory", "nvme": "Host memory, then NVMe"}
BY_CP = ["cp", "gpus", "ttft_s", "prefix_load_s", "prefill_gpu_s", "usd_per_m_input_tokens", "usd_per_prompt",
         "parallel_efficiency_frac", "usd_per_gpu_hour", "infeasible_reason"]
CAPACITY = ["kv", "max_batch_size", "tpot_s", "tokens_per_s_per_user", "kv_offload_frac", "kv_offload_s",
            "kv_tier_usd_per_gpu_hour", "usd_per_m_output_tokens"]
TIERS = ["tier", "medium", "capacity_gb_per_accelerator", "read_gb_per_s_per_accelerator", "usd_per_gb_hour",
         "as_of", "source"]
ASSUMPTIONS = (
    "Context parallelism: the prompt is split over cp copies of the instance, ring attention passes each shard's KV "
    "over scale-out behind attention (Liu et al. arXiv:2310.01889; Yang et al. arXiv:2411.01783, 77 s for 1M tokens "
    "of Llama3 405B on 128 H100). Prefix cache: the new tokens attend to the whole cached prefix; a prefix outside "
    "HBM is loaded at its tier's bandwidth, or recomputed when that is faster. KV offload: the decode batch's KV "
    "fills HBM, then host memory (Grace LPDDR5X over NVLink-C2C on GB200/GB300, DDR5 over PCIe on HGX), then NVMe "
    "(NVIDIA Dynamo KVBM, LMCache); every decode step reads the offloaded share at the tier's bandwidth, not "
    "overlapped with the step (conservative: layer-wise prefetch hides at most the HBM step), and pays the tier's "
    "$/GB-hour. A prompt beyond the model's released context runs as a RoPE-extended variant.")


@memory.cached(max_entries=16, ttl=3600)
def compute(token: str, sc: Scenario, prompt_tokens: int, hit: float, prefix_tier: str, offload: str,
            _catalog=None) -> LongPromptEngine:
    """:func:`econ.analyses.long_prompt.long_prompt_engine` for the scenario, cached per catalog + inputs."""
    cat = _catalog if _catalog is not None else state.catalog()
    precision = sc.precision if sc.precision in PRECISIONS else "fp8"
    return long_prompt_engine(cat, model=sc.model, hardware=sc.hardware, prompt_tokens=prompt_tokens,
                              output_len=sc.output_len, precision=precision, cache_hit_frac=hit,
                              prefix_cache_tier=prefix_tier, kv_offload=offload, cp_sizes=DEFAULT_CP_SIZES,
                              assumptions=sc.assumptions(), economics=sc.economics(cat))


@memory.cached(max_entries=16, ttl=3600)
def compute_split(token: str, sc: Scenario, prompt_tokens: int, chunk_tokens: int, prefill_hardware: str,
                  _catalog=None) -> LongPrompt:
    """:func:`econ.analyses.long_prompt.long_prompt` for the scenario: chunked beside a decode batch of
    :data:`DECODE_BATCH` at :data:`CHUNK_SIZES` and ``chunk_tokens``, and on ``prefill_hardware`` ("" = none)."""
    cat = _catalog if _catalog is not None else state.catalog()
    precision = sc.precision if sc.precision in PRECISIONS else "fp8"
    return long_prompt(cat, model=sc.model, hardware=sc.hardware, prompt_tokens=prompt_tokens, precision=precision,
                       cp_sizes=(1,), prefill_hardware=prefill_hardware or None,
                       chunk_tokens=sorted(set(CHUNK_SIZES) | {chunk_tokens}), decode_batch=DECODE_BATCH,
                       output_len=sc.output_len, kv_precision=DEFAULT_KV_PRECISION[precision],
                       assumptions=sc.assumptions(), economics=sc.economics(cat))


def split_section(cat, cat_in_use, sc: Scenario, prompt: int) -> None:
    """Chunked prefill beside decode and a prefill part: inputs, headline metrics and tables (one econ call)."""
    st.subheader("Chunked prefill and a prefill part")
    c1, c2 = st.columns(2)
    chunk = c1.select_slider("Chunk size (tokens)", CHUNK_SIZES, value=2_048, format_func=fmt.count,
                             key="lp.chunk", help=f"prompt tokens prefilled per decode step beside a batch of "
                                                  f"{DECODE_BATCH} decoding sequences (Sarathi-Serve)")
    ids = [i for i in cat.accelerators["id"].to_list() if i != sc.hardware]
    names = dict(zip(cat.accelerators["id"].to_list(), cat.accelerators["display_name"].to_list()))
    part = c2.selectbox("Prefill accelerator", [NO_PART] + ids, key="lp.part",
                        format_func=lambda i: "None (prefill on the decode GPUs)" if i == NO_PART else names[i],
                        help="a prefill part beside the decode GPUs; its KV ships to them over scale-out")
    try:
        r = compute_split(cat_in_use.token, sc, int(prompt), int(chunk), part, _catalog=cat)
    except EconError as exc:
        st.error(safe_text.error(exc), icon=":material/error:")
        return
    row = r.chunked.filter(pl.col("chunk_tokens") == int(chunk)).row(0, named=True)
    k = st.columns(3)
    k[0].metric(f"TTFT, {fmt.count(chunk)}-token chunks", fmt.seconds(row["ttft_s"]),
                help=f"beside a decode batch of {DECODE_BATCH} on {row['layout']}")
    k[1].metric("Decode slowdown while it streams in", f"{fmt.sig(row['tpot_inflation'])}x",
                help="every decoding user's time per token is multiplied by this while the prompt's chunks run")
    if part:
        p = r.plans.filter(pl.col("strategy") == "prefill part").row(0, named=True)
        k[2].metric(f"TTFT on {names[part]}", fmt.seconds(p["ttft_s"]),
                    help=f"prefill {fmt.seconds(p['prefill_s'])}, KV shipment {fmt.seconds(p['kv_transfer_s'])} "
                         "(layer by layer, overlapped)")
    table.show(r.chunked, key="lp.chunked", name=f"chunked-prefill-{sc.model}-{sc.hardware}", columns=CHUNKED,
               catalog=cat, caption=f"Chunked prefill beside a decode batch of {DECODE_BATCH}, per chunk size")
    if part:
        table.show(r.plans, key="lp.parts", name=f"prefill-part-{sc.model}-{part}", columns=PARTS, catalog=cat,
                   caption="Prefill on the decode GPUs or on the prefill part (TTFT includes the KV shipment)")


def ttft_chart(by_cp: pl.DataFrame, *, width: int = 640) -> alt.Chart:
    """Time to first token by context-parallel degree (log axis), the accelerators used in the tooltip."""
    frame = by_cp.filter(pl.col("ttft_s").is_not_null()).with_columns(pl.col("cp").cast(pl.String).alias("ranks"))
    lo, hi = float(frame["ttft_s"].min()), float(frame["ttft_s"].max())
    return alt.Chart(frame).mark_line(point=alt.OverlayMarkDef(size=70)).encode(
        x=alt.X("ranks:N", sort=[str(c) for c in frame["cp"].to_list()], title="Context-parallel ranks",
                axis=alt.Axis(labelAngle=0)),
        y=alt.Y("ttft_s:Q", scale=alt.Scale(type="log", nice=False, domain=[lo / 1.5, hi * 1.5]),
                title="Time to first token (s)", axis=alt.Axis(format=",.3~r", tickCount=4, titleLimit=0)),
        tooltip=charts.tooltip(["cp", "gpus", "ttft_s", "prefill_gpu_s", "usd_per_m_input_tokens",
                                "parallel_efficiency_frac"]),
    ).properties(width="container", height=260,
                 title=charts.chart_title("Time to first token by context-parallel ranks",
                                          "each rank is one copy of the instance; ring attention over scale-out"))


def render() -> None:
    """Draw the page."""
    sc = scenario_sidebar.current()
    cat_in_use = state.catalog_in_use()
    cat = cat_in_use.catalog
    model_name = safe_text.md(cat.model(sc.model)["display_name"])
    hw_name = safe_text.md(cat.accelerator(sc.hardware)["display_name"])
    st.title("Long prompts")
    st.caption(f"{model_name} on {hw_name} (change both in the sidebar): one long prompt's time to first token and "
               "prefill cost by context parallelism, with a prefix cache, and the decode batch with and without KV "
               "offload beyond HBM.")
    c1, c2 = st.columns(2)
    prompt = c1.select_slider("Prompt length (tokens)", PROMPT_LENGTHS, value=100_000, format_func=fmt.count,
                              key="lp.prompt")
    hit = c2.slider("Prefix-cache hit share", 0.0, 1.0, value=0.0, step=0.05, key="lp.hit",
                    help=FIELDS["cache_hit_frac"].help)
    c3, c4 = st.columns(2)
    tier = c3.selectbox("Prefix cache lives in", list(KV_TIER_CHOICES), format_func=TIER_NAMES.get, key="lp.tier",
                        help=FIELDS["prefix_cache_tier"].help)
    offload = c4.selectbox("Decode KV may spill to", list(OFFLOAD_NAMES), format_func=OFFLOAD_NAMES.get,
                           key="lp.offload", help=FIELDS["kv_offload"].help)
    try:
        r = compute(cat_in_use.token, sc, int(prompt), float(hit), tier, offload, _catalog=cat)
    except EconError as exc:
        st.error(safe_text.error(exc), icon=":material/error:")
        return
    if r.context_note:
        st.info(safe_text.md(r.context_note), icon=":material/info:")
    one = r.by_cp.row(0, named=True)
    ok = r.by_cp.filter(pl.col("ttft_s").is_not_null())
    fastest = ok.sort("ttft_s").row(0, named=True) if ok.height else None
    hbm, off = (r.capacity.row(i, named=True) for i in (0, 1))
    k = st.columns(3)
    k[0].metric("TTFT, one instance", fmt.seconds(one["ttft_s"]),
                help=f"{r.layout} ({r.num_gpus} GPUs), prefix load included")
    if fastest is not None:
        k[1].metric(f"TTFT, cp {fastest['cp']}", fmt.seconds(fastest["ttft_s"]),
                    help=f"{fastest['gpus']} GPUs: {fastest['cp']} copies of {r.layout}")
    k[2].metric("Prefill GPU-seconds", fmt.sig(one["prefill_gpu_s"]),
                help="accelerator-seconds of the prompt's prefill on one instance (uncached tokens only)")
    k = st.columns(3)
    k[0].metric("$ per M input tokens", fmt.usd_per_m(one["usd_per_m_input_tokens"]),
                help="per uncached input token, prefill on one instance")
    k[1].metric("Max batch, HBM only", fmt.count(hbm["max_batch_size"]))
    k[2].metric(f"Max batch, {OFFLOAD_NAMES[offload].lower()}", fmt.count(off["max_batch_size"]),
                help=f"decode at that batch: {fmt.seconds(off['tpot_s'])} per token, "
                     f"{fmt.pct(off['kv_offload_frac'])} of the KV beyond HBM")
    if ok.height:
        chart.show(ttft_chart, r.by_cp, key="lp.chart",
                   cache_key=(cat_in_use.token, sc, prompt, hit, tier, offload))
    st.subheader("By context-parallel ranks")
    table.show(r.by_cp, key="lp.cp", name=f"long-prompt-{sc.model}-{sc.hardware}", columns=BY_CP, catalog=cat)
    st.subheader("Decode capacity with and without KV offload")
    table.show(r.capacity, key="lp.capacity", name=f"long-prompt-capacity-{sc.model}-{sc.hardware}",
               columns=CAPACITY, catalog=cat)
    st.subheader(f"KV tiers beyond HBM on {hw_name}")
    table.show(r.tiers, key="lp.tiers", name=f"kv-tiers-{sc.hardware}", columns=TIERS, catalog=cat,
               caption="data/kv_tiers.csv: capacity, read bandwidth and storage price per accelerator, with sources")
    split_section(cat, cat_in_use, sc, int(prompt))
    st.caption("Assumptions: " + ASSUMPTIONS)


if __name__ == "__main__":
    render()
