"""One long prompt (100K+ tokens): TTFT and $ per prompt by context parallelism, on a prefill part, and chunked.

Reads catalog facts (the model's matmul parameters, attention FLOPs and KV bytes per token; the accelerator's
peaks, HBM and scale-out bandwidth), the engine's efficiencies (``Assumptions.eta_prefill``, ``scale_out_latency_s``)
and the engine's $/GPU-hour (``econ.analyses.sweep.cost_table`` at a short request: the rate does not depend on the
workload); the physics is :mod:`econ.physics.long_context` and :func:`econ.physics.kv_tiers.prefill_flop`.

Rows: the prompt prefilled on ``tp x cp`` accelerators for each context-parallel size (ring attention across
nodes over scale-out), optionally the same on a prefill part (``prefill_hardware``, e.g. a GDDR part beside HBM
decode GPUs) with the KV shipped to the decode accelerators; and, with ``chunk_tokens``, the prompt prefilled in
chunks beside a decode batch on one replica (its TTFT and how much it slows the batch's decode).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from econ import units
from econ.assumptions import DEFAULT, Assumptions, Economics
from econ.analyses.optimize import SearchSpace, search
from econ.analyses.search import cheapest
from econ.engine import evaluate
from econ.errors import DoesNotFitError, InvalidInputError
from econ.tables.kv_tiers import load_kv_tiers, system_tiers
from econ.vocabulary import FIELDS
from econ.physics.kv_tiers import prefill_flop
from econ.physics.long_context import chunked_prefill, disaggregated_prefill_ttft_s, ring_attention_prefill_s
from econ.physics.precision import KV_BYTES_PER_ELEMENT, DEFAULT_KV_PRECISION, PRECISIONS, WEIGHT_BYTES_PER_PARAM
from econ.tables.catalog import Catalog, check_ids
from econ.validate import require_in_range

DEFAULT_CP_SIZES: tuple[int, ...] = (1, 2, 4, 8, 16)
"""Context-parallel sizes shown by default (16 x TP8 = the 128 H100 of Yang et al. 2024's 1M-token prefill)."""

MIN_PROMPT_TOKENS = 1


@dataclass(frozen=True)
class LongPrompt:
    """The answer of :func:`long_prompt`: ``plans`` (one row per strategy x context-parallel size) and ``chunked``
    (chunked prefill beside a decode batch; empty without ``chunk_tokens``)."""

    plans: pl.DataFrame
    chunked: pl.DataFrame


def _rate(hw: dict, precision: str) -> float:
    peak = hw.get(f"{precision}_peak_flop_per_s")
    if peak is None or not peak == peak:
        raise InvalidInputError(f"precision={precision!r}: {hw['id']} has no dense {precision.upper()} peak "
                                "(accelerators.csv)")
    return float(peak)


def _gpu_hour(catalog, model, hw, precision, assumptions, economics) -> float:
    from econ.analyses.sweep import cost_table

    row = cost_table(catalog, model=model, hardware=hw, precision=precision, batch_sizes=[1], input_len=1024,
                     output_len=16, assumptions=assumptions, economics=economics).row(0, named=True)
    return float(row["usd_per_gpu_hour"]) if row["usd_per_gpu_hour"] is not None else math.nan


def long_prompt(catalog: Catalog, *, model: str, hardware: str, prompt_tokens: int, precision: str = "fp8",
                tp: int | None = None, cp_sizes=DEFAULT_CP_SIZES, prefill_hardware: str | None = None,
                chunk_tokens=None, decode_batch: int = 64, output_len: int = 1024,
                assumptions: Assumptions = DEFAULT, economics: Economics = Economics()) -> LongPrompt:
    """TTFT and $ per prompt of one ``prompt_tokens`` prompt by strategy.

    Parameters
    ----------
    catalog : Catalog
    model, hardware : str (catalog ids; ``hardware`` serves decode, and prefill unless ``prefill_hardware``)
    prompt_tokens : int in [1, 16,777,216] [tokens]
    precision : {"bf16", "fp8", "fp4"}: matmul precision of the linear layers (attention runs in BF16, FlashAttention)
    tp : int, optional: tensor-parallel size of one rank (default: min(8, scale-up domain))
    cp_sizes : sequence of int >= 1: context-parallel sizes (ranks across nodes, ring over scale-out)
    prefill_hardware : str, optional: a prefill part (its rows use its peaks, HBM and $/GPU-hour; the KV then
        crosses the decode accelerators' scale-out links, layer by layer)
    chunk_tokens : sequence of int, optional: chunk sizes for chunked prefill beside a decode batch
    decode_batch : int: that batch [sequences]; output_len : its requests' output length [tokens]
    assumptions, economics : the engine's

    Returns
    -------
    LongPrompt. ``plans`` columns: strategy, hardware, tp, cp, gpus, ttft_s, prefill_s, kv_transfer_s,
    exposed_comm_s, parallel_efficiency_frac, kv_fits, usd_per_gpu_hour, usd_per_prompt.

    Raises
    ------
    UnknownIdError, InvalidInputError
        Unknown ids, a length outside [1, 16,777,216], a cp size < 1, a precision the part lacks.
    """
    check_ids("model", [model], catalog.models["id"].to_list())
    ids = catalog.accelerators["id"].to_list()
    check_ids("hardware", [hardware] + ([prefill_hardware] if prefill_hardware else []), ids)
    require_in_range("prompt_tokens", prompt_tokens, MIN_PROMPT_TOKENS, 1 << 24, "tokens")
    if precision not in PRECISIONS:
        raise InvalidInputError(f"precision={precision!r} is not one of {list(PRECISIONS)}")
    cps = [int(c) for c in cp_sizes]
    require_in_range("cp", np.array(cps, dtype=float), 1, 1024, "ranks")
    m = catalog.model(model)
    s = float(prompt_tokens)
    lin = 2.0 * m["active_matmul_params"] * s
    att = prefill_flop(s, 0.0, 0.0, m["attention_flop_per_context_token_prefill"], m["num_global_layers"],
                       m["num_sliding_layers_eff"], m["sliding_window_tokens_eff"] or np.inf)
    kv_prec = DEFAULT_KV_PRECISION[precision]
    kv_tok = m["num_layers"] * m["kv_elements_per_token_per_layer"] * KV_BYTES_PER_ELEMENT[kv_prec]
    weights = m["total_params"] * WEIGHT_BYTES_PER_PARAM[precision]
    eta = assumptions.eta_prefill
    rows = []
    decode_hw = catalog.accelerator(hardware)
    parts = [("context parallel", hardware)] + ([("prefill part", prefill_hardware)] if prefill_hardware else [])
    for strategy, hw_id in parts:
        hw = catalog.accelerator(hw_id)
        t = int(tp or min(8, hw["scale_up_domain_size"]))
        gh = _gpu_hour(catalog, model, hw_id, precision, assumptions, economics)
        one = None
        for cp in cps:
            block = s / cp * kv_tok / t
            time_s, exposed = ring_attention_prefill_s(
                lin, att, cp, t * _rate(hw, precision) * eta, t * _rate(hw, "bf16") * eta, block,
                hw["scale_out_bandwidth_bytes_per_s"], assumptions.scale_out_latency_s)
            xfer = 0.0
            ttft = float(time_s)
            if strategy == "prefill part":
                ttft, _, xfer = disaggregated_prefill_ttft_s(lin + att, (lin + att) / float(time_s), s * kv_tok,
                                                             t * decode_hw["scale_out_bandwidth_bytes_per_s"],
                                                             overlap=True)
                ttft, xfer = float(ttft), float(xfer)
            one = float(time_s) if cp == cps[0] and cps[0] == 1 else one
            fits = bool(weights / t + block <= hw["hbm_capacity_bytes"] * assumptions.usable_hbm_frac)
            rows.append({"strategy": strategy, "hardware": hw_id, "tp": t, "cp": cp, "gpus": t * cp, "ttft_s": ttft,
                         "prefill_s": float(time_s), "kv_transfer_s": xfer, "exposed_comm_s": float(exposed),
                         "parallel_efficiency_frac": (one / (cp * float(time_s))) if one else None, "kv_fits": fits,
                         "usd_per_gpu_hour": gh,
                         "usd_per_prompt": t * cp * float(time_s) * gh / units.SECONDS_PER_HOUR})
    chunked = pl.DataFrame()
    if chunk_tokens:
        from econ.analyses.sweep import cost_table

        short = int(min(s, 8192))
        d = cost_table(catalog, model=model, hardware=hardware, precision=precision, batch_sizes=[decode_batch],
                       input_len=short, output_len=output_len, assumptions=assumptions,
                       economics=economics).row(0, named=True)
        n = d["num_gpus"]
        out = []
        for c in chunk_tokens:
            c = float(require_in_range("chunk_tokens", c, 1, 1 << 24, "tokens"))
            cc = min(c, s)
            chunk_att = prefill_flop(cc, s / 2.0, 0.0, m["attention_flop_per_context_token_prefill"],
                                     m["num_global_layers"])  # the mean chunk attends to half the prompt
            chunk_s = (2.0 * m["active_matmul_params"] * cc / (n * _rate(decode_hw, precision) * eta)
                       + chunk_att / (n * _rate(decode_hw, "bf16") * eta))
            ttft, it, infl = chunked_prefill(s, c, d["t_mem_s"], d["t_flop_s"], chunk_s)
            out.append({"hardware": hardware, "layout": d["layout"], "decode_batch": decode_batch,
                        "chunk_tokens": int(c), "ttft_s": float(ttft), "iteration_s": float(it),
                        "tpot_inflation": float(infl)})
        chunked = pl.DataFrame(out)
    return LongPrompt(plans=pl.DataFrame(rows), chunked=chunked)


@dataclass(frozen=True)
class LongPromptEngine:
    """The answer of :func:`long_prompt_engine`: one long prompt through the engine (the Long prompts page).

    Attributes
    ----------
    by_cp : pl.DataFrame, one row per context-parallel degree: cp, gpus, ttft_s, prefix_load_s,
        prefill_gpu_s (accelerator-seconds of the prompt's prefill), usd_per_m_input_tokens (per uncached input
        token), usd_per_prompt, input_tokens_per_s_per_gpu, parallel_efficiency_frac
    capacity : pl.DataFrame, two rows ("HBM only", "with offload"): kv_offload, max_batch_size, tpot_s,
        tokens_per_s_per_user, kv_offload_frac, kv_offload_s, kv_tier_usd_per_gpu_hour, usd_per_m_output_tokens (each
        at that row's capacity wall)
    layout : str, the engine's layout of one rank (the cheapest all-in deployment holding one sequence of the prompt
        in HBM: :func:`econ.analyses.optimize.search` at batch 1 per attention group, cp 1)
    num_gpus : int, accelerators of one rank
    context_note : str, "" or why the prompt runs beyond the model's released context
    tiers : pl.DataFrame, the accelerator's host, NVMe and remote tiers (data/kv_tiers.csv: medium, capacity,
        bandwidth, $/GB-hour, source)
    """

    by_cp: pl.DataFrame
    capacity: pl.DataFrame
    layout: str
    num_gpus: int
    context_note: str
    tiers: pl.DataFrame


def long_prompt_engine(catalog: Catalog, *, model: str, hardware: str, prompt_tokens: int, output_len: int = 1024,
                       precision: str = "fp8", cache_hit_frac: float = 0.0, prefix_cache_tier: str = "hbm",
                       kv_offload: str = "host", cp_sizes=DEFAULT_CP_SIZES, assumptions: Assumptions = DEFAULT,
                       economics: Economics = Economics()) -> LongPromptEngine:
    """One long prompt through the one engine: TTFT and prefill cost by context-parallel degree, and the decode
    capacity with and without KV offload (issue 22 parts 2-3; the Long prompts page's one call).

    Parameters
    ----------
    catalog : Catalog; model, hardware : catalog ids
    prompt_tokens : int in [1, 16,777,216] [tokens]; output_len : [tokens]
    precision : bf16|fp8|fp4
    cache_hit_frac : float in [0, 1], share of the prompt served from a prefix cache held in ``prefix_cache_tier``
    prefix_cache_tier : hbm|host|nvme|remote
    kv_offload : none|host|nvme, how far the decode KV may spill (the "with offload" capacity row)
    cp_sizes : context-parallel degrees (each a rank = the layout's instance; ring over scale-out)
    assumptions, economics : the engine's

    Returns
    -------
    LongPromptEngine

    Raises
    ------
    UnknownIdError, InvalidInputError, DoesNotFitError
        Unknown ids, values outside their fields' ranges (naming field, value and range), weights that fit nowhere.

    Notes
    -----
    A prompt longer than the model's released context is run as a RoPE-extended variant (``context_limit_tokens``),
    as Yang et al. (arXiv:2411.01783) ran Llama3 405B at 1M tokens; ``context_note`` says so. The layout is the
    optimizer's cheapest that holds one sequence's KV beside the weights in HBM (up to 256 accelerators).
    """
    check_ids("model", [model], catalog.models["id"].to_list())
    check_ids("hardware", [hardware], catalog.accelerators["id"].to_list())
    require_in_range("prompt_tokens", prompt_tokens, MIN_PROMPT_TOKENS, 1 << 24, "tokens")
    FIELDS["cache_hit_frac"].check(cache_hit_frac)
    FIELDS["prefix_cache_tier"].check(prefix_cache_tier)
    FIELDS["kv_offload"].check(kv_offload)
    cps = [int(FIELDS["cp"].check(int(c))) for c in cp_sizes]
    m = catalog.model(model)
    ctx = int(prompt_tokens) + int(output_len)
    note = ""
    lc = {"prefix_cache_tier": prefix_cache_tier}
    if ctx > m["max_context_tokens"]:
        lc["context_limit_tokens"] = ctx
        note = (f"{ctx:,} tokens is beyond {m['display_name']}'s released context of {m['max_context_tokens']:,}: run "
                "as a RoPE-extended variant, as Yang et al. (arXiv:2411.01783) ran Llama3 405B at 1M tokens")
    econ_hit = replace(economics, cache_hit_frac=float(cache_hit_frac))
    space = SearchSpace(precisions=(precision,), modes=("aggregated",), cp=1, max_batch_per_group=1,
                        context_limit_tokens=lc.get("context_limit_tokens"), prefix_cache_tier=prefix_cache_tier)
    res = search(catalog, model=model, hardware=[hardware], input_len=int(prompt_tokens), output_len=int(output_len),
                 space=space, assumptions=assumptions, economics=econ_hit)
    if res.points.height == 0:
        why = res.rejected["reason"].mode().to_list()[:1] if res.rejected.height else ["no valid layout"]
        raise DoesNotFitError(f"no layout of up to {space.max_gpus} x {hardware} holds {model} {precision} with one "
                              f"{ctx:,}-token sequence in HBM ({why[0]})")
    row = cheapest(res.points, by=()).row(0, named=True)
    lay = {k: row[k] for k in ("num_gpus", "tp", "dp", "ep", "pp")}
    base = {"model": model, "hardware": hardware, "precision": precision, "input_len": int(prompt_tokens),
            "output_len": int(output_len), **lay, **lc}
    pts = pl.DataFrame([{**base, "batch_size": 1, "cp": c} for c in cps])
    cols = ["ttft_s", "prefix_load_s", "input_tokens_per_s_per_gpu", "usd_per_m_input_tokens", "usd_per_gpu_hour",
            "feasible", "infeasible_reason"]
    r = evaluate(pts, catalog, assumptions, econ_hit, strict=False, columns=cols)
    new_tokens = max(prompt_tokens * (1.0 - cache_hit_frac), 1.0)
    n = int(row["num_gpus"])
    by_cp = pl.DataFrame({"cp": cps, "gpus": [n * c for c in cps]}).with_columns(r).with_columns(
        prefill_gpu_s=new_tokens / pl.col("input_tokens_per_s_per_gpu"))
    usd_per_gpu_s = pl.col("usd_per_gpu_hour") / units.SECONDS_PER_HOUR
    by_cp = by_cp.with_columns(usd_per_prompt=pl.col("prefill_gpu_s") * usd_per_gpu_s,
                               parallel_efficiency_frac=pl.col("ttft_s").first() / (pl.col("cp") * pl.col("ttft_s"))
                               if cps[0] == 1 else pl.lit(None, dtype=pl.Float64))
    cap_cols = ["max_batch_size", "max_batch_size_hbm", "tpot_s", "tokens_per_s_per_user", "kv_offload_frac",
                "kv_offload_s", "kv_tier_usd_per_gpu_hour", "usd_per_m_output_tokens", "feasible"]
    probe = evaluate(pl.DataFrame([{**base, "batch_size": 1, "kv_offload": kv_offload}]), catalog, assumptions,
                     econ_hit, strict=False, columns=cap_cols).row(0, named=True)
    walls = [("HBM only", "none", int(probe["max_batch_size_hbm"] or 0)),
             ("with offload", kv_offload, int(probe["max_batch_size"] or 0))]
    cap = evaluate(pl.DataFrame([{**base, "batch_size": max(b, 1), "kv_offload": o} for _, o, b in walls]), catalog,
                   assumptions, econ_hit, strict=False, columns=cap_cols)
    capacity = pl.DataFrame({"kv": [w[0] for w in walls], "kv_offload": [w[1] for w in walls]}).with_columns(cap)
    tiers = pl.DataFrame(system_tiers(load_kv_tiers(catalog.data_dir), hardware)).select(
        "tier", "medium", (pl.col("capacity_bytes") / units.BYTES_PER_GB).alias("capacity_gb_per_accelerator"),
        (pl.col("read_bytes_per_s") / units.BYTES_PER_GB).alias("read_gb_per_s_per_accelerator"), "usd_per_gb_hour",
        "source", "as_of")
    return LongPromptEngine(by_cp=by_cp, capacity=capacity, layout=str(row["layout"]), num_gpus=n, context_note=note,
                            tiers=tiers)


__all__ = ["DEFAULT_CP_SIZES", "LongPrompt", "long_prompt", "LongPromptEngine", "long_prompt_engine"]
