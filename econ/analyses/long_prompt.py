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
from dataclasses import dataclass

import numpy as np
import polars as pl

from econ import units
from econ.assumptions import DEFAULT, Assumptions, Economics
from econ.errors import InvalidInputError
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


__all__ = ["DEFAULT_CP_SIZES", "LongPrompt", "long_prompt"]
