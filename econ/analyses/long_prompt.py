"""One long prompt (100K+ tokens): TTFT and $ per prompt by context parallelism, on a prefill part, and chunked.

Every time comes from the one engine (:func:`econ.engine.evaluate`): the lone prompt's ``ttft_s`` with the engine's
``cp`` (ring attention), on a prefill part plus the KV shipment (:mod:`econ.physics.long_context`), and chunked prefill
beside a decode batch with the chunk's time the engine's prefill of that chunk attending to the prompt so far (a
prefix-cache hit held in HBM). $/GPU-hour is the engine's.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from econ import units
from econ.assumptions import DEFAULT, Assumptions, Economics
from econ.analyses.optimize import SearchSpace, search
from econ.analyses.search import cheapest
from econ.engine import catalog_arrays, evaluate
from econ.errors import DoesNotFitError, InvalidInputError
from econ.tables.kv_tiers import load_kv_tiers, system_tiers
from econ.vocabulary import FIELDS
from econ.physics.long_context import chunked_prefill, disaggregated_prefill_ttft_s
from econ.engine.core import kv_pool_per_gpu
from econ.physics.precision import PRECISIONS
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


def _context(model: dict, prompt_tokens: int, output_len: int) -> tuple[dict, str]:
    """The point columns that run a prompt beyond the model's released context (RoPE-extended) and the note saying so."""
    ctx = int(prompt_tokens) + int(output_len)
    if ctx <= model["max_context_tokens"]:
        return {}, ""
    return {"context_limit_tokens": ctx}, (
        f"{ctx:,} tokens is beyond {model['display_name']}'s released context of {model['max_context_tokens']:,}: run "
        "as a RoPE-extended variant, as Yang et al. (arXiv:2411.01783) ran Llama3 405B at 1M tokens")


def _rank_layout(catalog, *, model, hardware, prompt_tokens, output_len, precision, tp, cache_hit_frac=0.0,
                 prefix_cache_tier="hbm", assumptions=DEFAULT, economics=Economics()) -> dict:
    """The layout of one context-parallel rank: ``tp`` accelerators (dp = ep = pp = 1) when given, else the cheapest
    all-in deployment holding one sequence of the prompt in HBM (:func:`econ.analyses.optimize.search` at batch 1,
    one attention group: dp = 1, cp 1; a lone prompt fills one attention-DP group, so a rank of several would be an
    invalid batch-1 deployment, as DeepSeek-V3's EP64 x DP64 on GB200 was). Keys num_gpus, tp, dp, ep, pp, layout.

    Raises
    ------
    DoesNotFitError
        No layout of up to the search's ``max_gpus`` accelerators holds the weights and one sequence."""
    if tp is not None:
        t = int(tp)
        return {"num_gpus": t, "tp": t, "dp": 1, "ep": 1, "pp": 1, "layout": f"TP{t}"}
    lc, _ = _context(catalog.model(model), prompt_tokens, output_len)
    space = SearchSpace(precisions=(precision,), modes=("aggregated",), cp=1, dp=1, max_batch_per_group=1,
                        context_limit_tokens=lc.get("context_limit_tokens"), prefix_cache_tier=prefix_cache_tier)
    res = search(catalog, model=model, hardware=[hardware], input_len=int(prompt_tokens), output_len=int(output_len),
                 space=space, assumptions=assumptions, economics=replace(economics, cache_hit_frac=cache_hit_frac))
    if res.points.height == 0:
        why = res.rejected["reason"].mode().to_list()[:1] if res.rejected.height else ["no valid layout"]
        raise DoesNotFitError(f"no layout of up to {space.max_gpus} x {hardware} holds {model} {precision} with one "
                              f"{int(prompt_tokens) + int(output_len):,}-token sequence in HBM ({why[0]})")
    row = cheapest(res.points, by=()).row(0, named=True)
    return {k: row[k] for k in ("num_gpus", "tp", "dp", "ep", "pp", "layout")}


def _lone_prompt(catalog, *, model, hardware, prompt_tokens, output_len, precision, kv_precision, lay, cps,
                 assumptions, economics) -> pl.DataFrame:
    """The engine's lone prompt on ``lay`` for each context-parallel size (batch 1, KV and attention at
    ``kv_precision``): ttft_s, exposed_comm_s,
    kv_bytes_per_gpu (one sequence's KV on each accelerator of a rank, split over cp), kv_bytes_per_sequence,
    weight_bytes_per_gpu, usd_per_gpu_hour (each evaluated without the HBM capacity wall). The ring's exposed time is the TTFT beyond the cp-fold split of the cp-1
    prefill (``econ.physics.long_context.ring_attention_prefill_s``: lin / cp + max(att / cp, comm))."""
    m = catalog.model(model)
    lc, _ = _context(m, prompt_tokens, output_len)
    base = {"model": model, "hardware": hardware, "precision": precision, "kv_precision": kv_precision,
            "input_len": int(prompt_tokens), "output_len": int(output_len), "batch_size": 1, **{k: lay[k] for k in ("num_gpus", "tp", "dp", "ep", "pp")},
            **lc}
    allc = [1] + [c for c in cps if c != 1]
    # the prefill time does not depend on HBM capacity: evaluated without the capacity wall (a rank too small for the
    # prompt's KV still gets its arithmetic TTFT; ``kv_fits`` in :func:`long_prompt` says it does not fit)
    hbm = pl.col("hbm_capacity_bytes")
    uncapped = dataclasses.replace(catalog, accelerators=catalog.accelerators.with_columns(
        pl.when(pl.col("id") == hardware).then(hbm * 1e6).otherwise(hbm).alias("hbm_capacity_bytes")))
    r = evaluate(pl.DataFrame([{**base, "cp": c} for c in allc]), uncapped, assumptions, economics, strict=False,
                 columns=["ttft_s", "kv_bytes_per_gpu", "kv_bytes_per_sequence", "weight_bytes_per_gpu",
                          "usd_per_gpu_hour", "infeasible_reason"])
    reasons = r["infeasible_reason"]
    r = r.drop("infeasible_reason")
    r = pl.DataFrame({"cp": allc}).with_columns(r)
    if r["ttft_s"].null_count():  # the engine's reason, never a null in a table
        why = reasons.filter(r["ttft_s"].is_null())[0]
        raise DoesNotFitError(f"the lone prompt of {model} cannot run on {lay['layout']} x {hardware}: {why}")
    t1 = float(r["ttft_s"][0])
    r = r.with_columns(exposed_comm_s=(pl.col("ttft_s") - t1 / pl.col("cp")).clip(lower_bound=0.0),
                       kv_bytes_per_gpu=pl.col("kv_bytes_per_gpu") / pl.col("cp"))
    return pl.DataFrame({"cp": cps}).join(r, on="cp", how="left", maintain_order="left")


def long_prompt(catalog: Catalog, *, model: str, hardware: str, prompt_tokens: int, precision: str = "fp8",
                tp: int | None = None, cp_sizes=DEFAULT_CP_SIZES, prefill_hardware: str | None = None,
                chunk_tokens=None, decode_batch: int = 64, output_len: int = 1024, kv_precision: str = "bf16",
                assumptions: Assumptions = DEFAULT, economics: Economics = Economics()) -> LongPrompt:
    """TTFT and $ per prompt of one ``prompt_tokens`` prompt by strategy, every time from the engine.

    Parameters
    ----------
    catalog : Catalog
    model, hardware : str (catalog ids; ``hardware`` serves decode, and prefill unless ``prefill_hardware``)
    prompt_tokens : int in [1, 16,777,216] [tokens]
    precision : {"bf16", "fp8", "fp4"}
    tp : int in [1, 4096], optional: one rank = ``tp`` accelerators (tensor parallel); default: the layout
        :func:`long_prompt_engine` picks (the cheapest holding one sequence of the prompt in HBM)
    cp_sizes : sequence of int in [1, 1024]: context-parallel sizes (the engine's ``cp``: ranks across nodes, ring
        attention over scale-out)
    prefill_hardware : str, optional: a prefill part (e.g. a GDDR part beside HBM decode GPUs): its rows are the
        engine's prefill of the prompt on it, plus the KV shipped layer by layer over the decode rank's scale-out
        links (:func:`econ.physics.long_context.disaggregated_prefill_ttft_s`, overlapped)
    chunk_tokens : sequence of int in [1, 16,777,216], optional: chunk sizes for chunked prefill beside a decode batch
    decode_batch : int: that batch [sequences]; output_len : its requests' output length [tokens]
    kv_precision : {"bf16", "fp8", "fp4"}: the prompt's KV cache and so its attention's precision (default BF16, as
        Yang et al.'s FlashAttention-3 ring attention; the engine's default for ``precision`` is its DEFAULT_KV_PRECISION)
    assumptions, economics : the engine's

    Returns
    -------
    LongPrompt. ``plans`` columns: strategy, hardware, tp, cp, gpus, ttft_s, prefill_s, kv_transfer_s,
    exposed_comm_s, parallel_efficiency_frac, kv_fits, usd_per_gpu_hour, usd_per_prompt. ``chunked`` columns:
    hardware, layout, decode_batch, chunk_tokens, chunk_s, ttft_s, iteration_s, tpot_inflation.

    Raises
    ------
    UnknownIdError, InvalidInputError, DoesNotFitError
        Unknown ids, a length, cp, tp or chunk outside its range (naming field, value and range), a precision not in
        bf16|fp8|fp4, no layout holding the prompt (without ``tp``).

    Notes
    -----
    Context-parallel rows: the engine's lone-prompt TTFT with ``cp`` (``econ.engine.core._context_parallel_s``,
    Yang et al. arXiv:2411.01783 pass-KV ring attention); usd_per_prompt = gpus x TTFT x $/GPU-hour.
    Chunked rows (Sarathi-Serve, Agrawal et al. OSDI 2024): the decode batch's memory and compute times per step are
    the engine's (:func:`econ.analyses.sweep.cost_table` at an 8K-token context); the chunk's time is the engine's
    prefill of ``chunk`` new tokens attending to the mean prefix before it ((prompt - chunk) / 2 tokens, a prefix-cache
    hit held in HBM; its own weight pass and per-step overheads included, so small chunks do not ride quite free);
    :func:`econ.physics.long_context.chunked_prefill` combines them.
    """
    check_ids("model", [model], catalog.models["id"].to_list())
    ids = catalog.accelerators["id"].to_list()
    check_ids("hardware", [hardware], ids)
    if prefill_hardware is not None:
        check_ids("prefill_hardware", [prefill_hardware], ids)
    require_in_range("prompt_tokens", prompt_tokens, MIN_PROMPT_TOKENS, 1 << 24, "tokens")
    if precision not in PRECISIONS:
        raise InvalidInputError(f"precision={precision!r} is not one of {list(PRECISIONS)}")
    if kv_precision not in PRECISIONS:
        raise InvalidInputError(f"kv_precision={kv_precision!r} is not one of {list(PRECISIONS)}")
    if tp is not None:
        require_in_range("tp", tp, 1, 4096, "accelerators")
    cps = [int(c) for c in cp_sizes]
    require_in_range("cp", np.array(cps, dtype=float), 1, 1024, "ranks")
    chunks = [int(require_in_range("chunk_tokens", c, 1, 1 << 24, "tokens")) for c in (chunk_tokens or [])]
    s = int(prompt_tokens)
    kw = dict(precision=precision, assumptions=assumptions, economics=economics)
    dec = _rank_layout(catalog, model=model, hardware=hardware, prompt_tokens=s, output_len=output_len, tp=tp, **kw)
    decode_link = dec["num_gpus"] * catalog.accelerator(hardware)["scale_out_bandwidth_bytes_per_s"]
    rows = []
    parts = [("context parallel", hardware, dec)]
    if prefill_hardware:
        parts.append(("prefill part", prefill_hardware,
                      _rank_layout(catalog, model=model, hardware=prefill_hardware, prompt_tokens=s,
                                   output_len=output_len, **kw,
                                   tp=tp if tp and tp <= catalog.accelerator(prefill_hardware)["scale_up_domain_size"]
                                   else None)))  # a tp beyond the part's scale-up domain: the searched layout
    facts = catalog_arrays(catalog).model_facts([model])
    for strategy, hw_id, lay in parts:
        hbm = catalog.accelerator(hw_id)["hbm_capacity_bytes"]
        # a prefill part holds the prompt's KV only (output_len 1): that KV is what ships to the decode accelerators
        r = _lone_prompt(catalog, model=model, hardware=hw_id, prompt_tokens=s,
                         output_len=output_len if strategy == "context parallel" else 1, lay=lay, cps=cps,
                         kv_precision=kv_precision, **kw)
        one = float(r["ttft_s"][0]) if cps[0] == 1 else None
        n = int(lay["num_gpus"])
        for row in r.iter_rows(named=True):
            cp, pre = row["cp"], float(row["ttft_s"])
            ttft, xfer = pre, 0.0
            if strategy == "prefill part":
                t, _, x = disaggregated_prefill_ttft_s(pre, row["kv_bytes_per_sequence"], decode_link, overlap=True)
                ttft, xfer = float(t), float(x)
            gh = float(row["usd_per_gpu_hour"]) if row["usd_per_gpu_hour"] is not None else math.nan
            rows.append({"strategy": strategy, "hardware": hw_id, "tp": int(lay["tp"]), "cp": cp, "gpus": n * cp,
                         "ttft_s": ttft, "prefill_s": pre, "kv_transfer_s": xfer,
                         "exposed_comm_s": float(row["exposed_comm_s"]),
                         "parallel_efficiency_frac": (one / (cp * pre)) if one else None,
                         "kv_fits": bool(np.all(row["kv_bytes_per_gpu"] <= kv_pool_per_gpu(  # the engine's rule
                             facts, hbm, row["weight_bytes_per_gpu"], lay["tp"], lay["dp"], lay["ep"],
                             assumptions))),
                         "usd_per_gpu_hour": gh, "usd_per_prompt": n * cp * pre * gh / units.SECONDS_PER_HOUR})
    chunked = pl.DataFrame()
    if chunks:
        chunked = pl.DataFrame(chunked_prefill_rows(catalog, model=model, hardware=hardware, prompt_tokens=s,
                                                    chunk_tokens=list(chunks), decode_batch=decode_batch,
                                                    output_len=output_len, **kw))
    return LongPrompt(plans=pl.DataFrame(rows), chunked=chunked)


def chunked_prefill_row(catalog: Catalog, *, model: str, hardware: str, prompt_tokens: int, chunk_tokens: int,
                        decode_batch: int = 64, output_len: int = 1024, precision: str = "fp8",
                        assumptions: Assumptions = DEFAULT, economics: Economics = Economics()) -> dict:
    """One prompt prefilled in ``chunk_tokens`` chunks beside a decode batch (Sarathi-Serve) on one replica.

    Returns
    -------
    dict: hardware, layout, decode_batch, chunk_tokens, chunk_s (the chunk's added time per step) [s], ttft_s [s],
    iteration_s [s], tpot_inflation [-] (see :func:`long_prompt`'s Notes for the rule and its sources).

    Raises
    ------
    InvalidInputError
        ``chunk_tokens`` outside [1, 16,777,216] tokens, ``decode_batch`` outside [1, 1,048,576] sequences.
    DoesNotFitError
        The chunk cannot run beside the decode batch (the engine's reason).
    """
    return chunked_prefill_rows(catalog, model=model, hardware=hardware, prompt_tokens=prompt_tokens,
                                chunk_tokens=[chunk_tokens], decode_batch=decode_batch, output_len=output_len,
                                precision=precision, assumptions=assumptions, economics=economics)[0]


def chunked_prefill_rows(catalog: Catalog, *, model: str, hardware: str, prompt_tokens: int, chunk_tokens,
                         decode_batch: int = 64, output_len: int = 1024, precision: str = "fp8",
                         assumptions: Assumptions = DEFAULT, economics: Economics = Economics()) -> list[dict]:
    """:func:`chunked_prefill_row` of each of ``chunk_tokens`` (a sequence of int): the decode step they share is
    evaluated once, and every chunk's prefill in one engine call. Returns a list of those dicts, in order."""
    from econ.analyses.sweep import cost_table

    cs = [int(require_in_range("chunk_tokens", c, 1, 1 << 24, "tokens")) for c in chunk_tokens]
    require_in_range("decode_batch", decode_batch, 1, 1 << 20, "sequences")
    s = int(prompt_tokens)
    short = int(min(s, 8192))
    # the decode batch on one attention group (dp = 1): the one prompt's chunks then run beside it at batch 1, a
    # valid deployment (an attention-DP layout, DeepSeek's ADP8 EP8, would need a chunk in every group: dp prompts)
    d = cost_table(catalog, model=model, hardware=hardware, precision=precision, dp=1, batch_sizes=[decode_batch],
                   input_len=short, output_len=output_len, assumptions=assumptions,
                   economics=economics).row(0, named=True)
    base = {"model": model, "hardware": hardware, "precision": precision, "output_len": 1, "batch_size": 1,
            "cp": 1, "prefix_cache_tier": "hbm", **{k: d[k] for k in ("num_gpus", "tp", "dp", "ep", "pp")}}
    rows = []
    for c in cs:
        cc = min(c, s)
        prefix = int((s - cc) // 2)  # the mean chunk attends to (S - C) / 2 tokens before it
        lc, _ = _context(catalog.model(model), prefix + cc, 1)
        rows.append({**base, **lc, "input_len": prefix + cc, "cache_hit_frac": prefix / (prefix + cc)})
    pts = pl.DataFrame(rows, infer_schema_length=None)
    res = evaluate(pts, catalog, assumptions, economics, strict=False, columns=["ttft_s", "infeasible_reason"])
    chunk_s = res["ttft_s"].to_list()
    for c, t, why in zip(cs, chunk_s, res["infeasible_reason"].to_list()):
        if t is None:  # the engine's reason, never a null in a table
            raise DoesNotFitError(f"a {c:,}-token chunk of {model} cannot run on {d['layout']} x {hardware} beside "
                                  f"the decode batch: {why}")
    out = []
    for c, cs_ in zip(cs, chunk_s):
        ttft, it, infl = chunked_prefill(s, c, d["t_mem_s"], d["t_flop_s"], float(cs_))
        out.append({"hardware": hardware, "layout": d["layout"], "decode_batch": int(decode_batch), "chunk_tokens": c,
                    "chunk_s": float(cs_), "ttft_s": float(ttft), "iteration_s": float(it),
                    "tpot_inflation": float(infl)})
    return out


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
    lc, note = _context(catalog.model(model), prompt_tokens, output_len)
    lc["prefix_cache_tier"] = prefix_cache_tier
    econ_hit = replace(economics, cache_hit_frac=float(cache_hit_frac))
    lay = _rank_layout(catalog, model=model, hardware=hardware, prompt_tokens=prompt_tokens, output_len=output_len,
                       precision=precision, tp=None, cache_hit_frac=float(cache_hit_frac),
                       prefix_cache_tier=prefix_cache_tier, assumptions=assumptions, economics=economics)
    row = {"num_gpus": lay["num_gpus"], "layout": lay["layout"]}
    base = {"model": model, "hardware": hardware, "precision": precision, "input_len": int(prompt_tokens),
            "output_len": int(output_len), **{k: lay[k] for k in ("num_gpus", "tp", "dp", "ep", "pp")}, **lc}
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


__all__ = ["DEFAULT_CP_SIZES", "LongPrompt", "long_prompt", "chunked_prefill_row", "chunked_prefill_rows",
           "LongPromptEngine", "long_prompt_engine"]
