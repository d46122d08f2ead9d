"""$ per task of an agentic or long-context workload, with the true cost of its cached input (issues 22.1, 22.2).

Reads the engine's result columns (one row per deployment: ``usd_per_m_output_tokens_all_in``, ``usd_per_gpu_hour``,
``kv_bytes_per_sequence``, ``kv_bytes_per_gpu``, ``weight_bytes_per_gpu``, batch, speed, TTFT) and adds, per row:

- where the prefixes waiting for their next call live: sessions waiting = calls started per second x the reuse
  interval (Little's law, :func:`econ.physics.fleet.littles_law_concurrency`), their KV placed HBM first (what the
  weights and the running batch leave), then host memory, NVMe, a remote pool
  (:func:`econ.physics.kv_tiers.place_kv`, tiers of ``data/kv_tiers.csv``);
- the true cost of a cached input token: storage for the reuse interval plus its load, averaged over the tiers
  holding it (:func:`econ.physics.kv_tiers.cached_token_cost_usd`), beside the cost of recomputing it (the
  deployment's $/M input tokens);
- the time to load a call's cached prefix from its tier (added to TTFT when it is not in HBM);
- how many waiting sessions HBM alone keeps, and HBM plus host memory (the spill raises it);
- $/call and $/task (:func:`econ.economics.pricing.usd_per_task`).

Nothing here computes physics or prices itself.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ import units
from econ.assumptions import DEFAULT, Assumptions
from econ.economics.pricing import usd_per_task
from econ.physics.fleet import littles_law_concurrency
from econ.engine import catalog_arrays
from econ.engine.core import kv_pool_per_gpu
from econ.physics.kv_tiers import (TIERS, cached_token_cost_usd, hbm_usd_per_gb_hour, place_kv, sequences_held,
                                   transfer_time_s)
from econ.presets import check_task
from econ.tables.catalog import Catalog
from econ.tables.kv_tiers import load_kv_tiers, system_tiers

TASK_COLUMNS: tuple[str, ...] = (
    "calls_per_task", "prefix_reuse_frac", "reuse_interval_s", "sessions_waiting", "kv_tier", "kv_tier_medium",
    "kv_waiting_bytes_per_gpu", "hbm_free_bytes_per_gpu", "usd_per_m_cached_input_tokens_true",
    "usd_per_m_cached_storage", "usd_per_m_cached_load", "usd_per_m_input_tokens", "kv_load_s", "ttft_cache_hit_s",
    "sessions_held_hbm", "sessions_held_host", "usd_per_call", "usd_per_task")
"""Columns :func:`with_task_costs` adds."""


def _col(frame: pl.DataFrame, *names) -> np.ndarray:
    for n in names:
        if n in frame.columns:
            return frame[n].cast(pl.Float64).fill_null(np.nan).to_numpy()
    raise KeyError(names[0])


def with_task_costs(frame: pl.DataFrame, catalog: Catalog, *, calls_per_task: float, prefix_reuse_frac: float,
                    reuse_interval_s: float, assumptions: Assumptions = DEFAULT,
                    kv_tiers: pl.DataFrame | None = None) -> pl.DataFrame:
    """``frame`` (engine result rows) with the task columns of :data:`TASK_COLUMNS`.

    Parameters
    ----------
    frame : pl.DataFrame
        Engine result rows (``econ.engine.evaluate``, ``econ cost``), evaluated with ``cache_hit_frac`` equal to the
        prefix-reuse share (so the all-in cost prefills only the uncached suffix).
    catalog : Catalog
    calls_per_task : float in [1, 1e5] [calls]
    prefix_reuse_frac : float in [0, 1] [-]
    reuse_interval_s : float >= 0 [s]
    assumptions : Assumptions, the engine's KV-pool sizing (``usable_hbm_frac``, ``kv_memory_rule``,
        ``prefill_chunk_tokens``): the HBM a row's KV pool leaves spare is that pool
        (:func:`econ.physics.memory.kv_pool_bytes_per_gpu`) less the batch's KV cache
    kv_tiers : pl.DataFrame, optional (``econ.tables.kv_tiers.load_kv_tiers`` of the catalog's folder)

    Returns
    -------
    pl.DataFrame, ``frame`` plus :data:`TASK_COLUMNS` (null where the row is not feasible).

    Raises
    ------
    InvalidInputError
        ``calls_per_task``, ``prefix_reuse_frac`` or ``reuse_interval_s`` outside their ranges (naming field, value,
        range); a tier bandwidth <= 0.
    """
    check_task(calls_per_task, prefix_reuse_frac, reuse_interval_s)
    tiers = load_kv_tiers(catalog.data_dir) if kv_tiers is None else kv_tiers
    acc = {r["id"]: r for r in catalog.accelerators.iter_rows(named=True)}
    n = frame.height
    in_len, out_len = _col(frame, "input_len"), _col(frame, "output_len")
    ctx = _col(frame, "context_tokens")
    kv_seq = _col(frame, "kv_bytes_per_sequence")
    kv_tok = kv_seq / np.maximum(ctx, 1.0)  # [B/token], whole model (global-attention layers: linear in context)
    gpus = _col(frame, "num_gpus")
    gh = _col(frame, "usd_per_gpu_hour")
    batch = _col(frame, "batch_size")
    speed = _col(frame, "served_tokens_per_s_per_user", "tokens_per_s_per_user")
    ttft = _col(frame, "served_ttft_s", "ttft_s")
    cached = prefix_reuse_frac * in_len  # [tokens per call]
    call_s = ttft + out_len / speed  # one call's latency [s]
    waiting = littles_law_concurrency(batch / call_s, reuse_interval_s) if reuse_interval_s > 0 else np.zeros(n)
    waiting_bytes = waiting * cached * kv_tok / gpus  # per accelerator [B]
    hbm = np.array([acc[h]["hbm_capacity_bytes"] if h in acc else np.nan for h in frame["hardware"]])
    usable_hbm_frac = assumptions.usable_hbm_frac
    pool = kv_pool_per_gpu(catalog_arrays(catalog).model_facts(frame["model"].to_list()), hbm,
                           _col(frame, "weight_bytes_per_gpu"), _col(frame, "tp"), _col(frame, "dp"), _col(frame, "ep"),
                           assumptions)
    hbm_free = np.maximum(pool - _col(frame, "kv_bytes_per_gpu"), 0.0)
    hbm_bw = np.array([acc[h]["hbm_bandwidth_bytes_per_s"] if h in acc else np.nan for h in frame["hardware"]])
    systems = [system_tiers(tiers, h) for h in frame["hardware"]]
    cap = np.stack([hbm_free] + [np.array([s[t]["capacity_bytes"] for s in systems]) for t in range(3)], axis=-1)
    bw = np.stack([hbm_bw] + [np.array([s[t]["read_bytes_per_s"] for s in systems]) for t in range(3)], axis=-1)
    price = np.stack([hbm_usd_per_gb_hour(gh, hbm, usable_hbm_frac)]
                     + [np.array([s[t]["usd_per_gb_hour"] for s in systems]) for t in range(3)], axis=-1)
    ok = (np.isfinite(waiting_bytes) & np.isfinite(kv_tok) & (kv_tok > 0) & np.isfinite(gh) & np.isfinite(hbm_free)
          & np.isfinite(hbm_bw))
    wb = np.where(ok, waiting_bytes, 0.0)
    placed, _ = place_kv(wb, np.where(ok[:, None], np.nan_to_num(cap, nan=0.0, posinf=np.inf), 0.0))
    share = np.where(wb[:, None] > 0, placed / np.maximum(wb[:, None], 1e-300), np.eye(len(TIERS))[0])
    # the cached prefix of a call lives where the waiting working set reaches: byte-weighted over the tiers
    kv_safe = np.where(ok, kv_tok, 1.0)
    total, storage, load = cached_token_cost_usd(kv_safe[:, None], np.nan_to_num(price, nan=0.0), reuse_interval_s,
                                                 np.nan_to_num(bw, nan=1.0), np.nan_to_num(gh, nan=0.0)[:, None])
    per_token = (share * total).sum(axis=-1)
    per_storage, per_load = (share * storage).sum(axis=-1), (share * load).sum(axis=-1)
    # a prefix outside HBM crosses the tier's link before the suffix prefill (each GPU reads its shard in parallel)
    load_s = (share[:, 1:] * transfer_time_s(cached[:, None] * kv_safe[:, None] / gpus[:, None],
                                             np.nan_to_num(bw[:, 1:], nan=1.0))).sum(axis=-1)
    # waiting sessions the tiers can keep: HBM alone (the HBM-only maximum) and with host memory (the spill)
    # (no cached prefix, prefix_reuse_frac 0: a waiting session holds no KV, so no count bounds them: null)
    holds = ok & (cached > 0)
    held = sequences_held(np.nan_to_num(cap, nan=0.0), np.where(holds, cached * kv_safe / gpus, 1.0))
    far = np.where(share > 1e-12, np.arange(len(TIERS)), 0).max(axis=-1)
    medium = [("HBM" if f == 0 else s[f - 1]["medium"]) for f, s in zip(far, systems)]
    all_in = _col(frame, "usd_per_m_output_tokens_all_in")
    per_m_cached = per_token * units.TOKENS_PER_M
    per_call = usd_per_task(all_in, out_len, 1.0, cached, per_m_cached)
    per_task = usd_per_task(all_in, out_len, calls_per_task, cached, per_m_cached)

    def nul(x):
        return pl.Series(np.where(ok, x, np.nan)).fill_nan(None)

    return frame.with_columns(
        calls_per_task=pl.lit(float(calls_per_task)), prefix_reuse_frac=pl.lit(float(prefix_reuse_frac)),
        reuse_interval_s=pl.lit(float(reuse_interval_s)), sessions_waiting=nul(waiting),
        kv_tier=pl.Series([TIERS[f] if o else None for f, o in zip(far, ok)], dtype=pl.String),
        kv_tier_medium=pl.Series([m if o else None for m, o in zip(medium, ok)], dtype=pl.String),
        kv_waiting_bytes_per_gpu=nul(waiting_bytes), hbm_free_bytes_per_gpu=nul(hbm_free),
        usd_per_m_cached_input_tokens_true=nul(per_m_cached), usd_per_m_cached_storage=nul(per_storage * 1e6),
        usd_per_m_cached_load=nul(per_load * 1e6), kv_load_s=nul(load_s), ttft_cache_hit_s=nul(ttft + load_s),
        sessions_held_hbm=nul(np.where(holds, held[:, 0], np.nan)),
        sessions_held_host=nul(np.where(holds, held[:, 1], np.nan)),
        usd_per_call=nul(per_call), usd_per_task=nul(per_task),
    )


CACHED_CHECK_COLUMNS: tuple[str, ...] = (
    "quote_id", "provider", "model", "usd_per_m_input_tokens_quoted", "usd_per_m_cached_input_tokens",
    "discount_frac", "hardware", "kv_tier", "usd_per_m_cached_input_tokens_true", "usd_per_m_cached_storage",
    "usd_per_m_cached_load", "usd_per_m_input_tokens", "price_over_cost", "verdict")
"""Columns of :func:`check_cached_prices`."""


def check_cached_prices(catalog: Catalog, quotes: pl.DataFrame, *, hardware: str, workload: str = "agentic-coding",
                        precision: str = "fp8", min_tokens_per_s_per_user: float | None = None, assumptions=None,
                        economics=None) -> pl.DataFrame:
    """Each quote's cached-input price against the true cost of a cached token of its model on ``hardware``.

    Parameters
    ----------
    catalog : Catalog
    quotes : pl.DataFrame, ``econ.tables.quote_files.load_quotes`` (rows without a cached price are skipped)
    hardware : str, the accelerator the cost is modeled on
    workload : str, a task preset of :mod:`econ.presets` (its lengths, prefix reuse and time between reuses)
    precision : str; min_tokens_per_s_per_user : float, optional (default: the one floor)
    assumptions, economics : the engine's (default: ``econ.assumptions`` defaults)

    Returns
    -------
    pl.DataFrame, :data:`CACHED_CHECK_COLUMNS`: ``price_over_cost`` = cached price / true cost (storage for the
    reuse interval + load, :func:`with_task_costs`); ``verdict`` "covers storage + load" when >= 1, else "below
    storage + load"; ``discount_frac`` = 1 - cached / input price. A model the deployment search cannot serve keeps
    its row with the reason in ``verdict``.

    Raises
    ------
    InvalidInputError
        ``workload`` is not a task preset.
    """
    from econ.analyses.compare import auto_batch_row
    from econ.assumptions import DEFAULT, Economics
    from econ.errors import EconError, InvalidInputError
    from econ.presets import DEFAULT_MIN_TOKENS_PER_S_PER_USER, TASK_WORKLOADS, WORKLOADS

    if workload not in TASK_WORKLOADS:
        raise InvalidInputError(f"workload={workload!r} is not one of the task presets {list(TASK_WORKLOADS)}")
    w = WORKLOADS[workload]
    a = assumptions or DEFAULT
    from dataclasses import replace
    e = replace(economics or Economics(), cache_hit_frac=w.prefix_reuse_frac)
    floor = DEFAULT_MIN_TOKENS_PER_S_PER_USER if min_tokens_per_s_per_user is None else min_tokens_per_s_per_user
    rows = quotes.filter(pl.col("usd_per_m_cached_input_tokens").is_not_null())
    cost: dict[str, dict | str] = {}
    for model in rows["model"].unique(maintain_order=True).to_list():
        try:
            ctx = catalog.model(model).get("max_context_tokens")
            in_len = int(min(w.input_len, ctx - w.output_len)) if ctx else w.input_len
            first, _ = auto_batch_row(catalog, min_tokens_per_s_per_user=floor, model=model, hardware=hardware,
                                      precision=precision, input_len=in_len, output_len=w.output_len,
                                      assumptions=a, economics=e)
            t = with_task_costs(first, catalog, calls_per_task=w.calls_per_task, prefix_reuse_frac=w.prefix_reuse_frac,
                                reuse_interval_s=w.reuse_interval_s, assumptions=a)
            cost[model] = t.row(0, named=True)
        except EconError as exc:
            cost[model] = str(exc)
    out = []
    for q in rows.iter_rows(named=True):
        c = cost[q["model"]]
        true = c.get("usd_per_m_cached_input_tokens_true") if isinstance(c, dict) else None
        ratio = q["usd_per_m_cached_input_tokens"] / true if true else None
        verdict = (c if isinstance(c, str) else "not feasible on this hardware") if ratio is None else (
            "covers storage + load" if ratio >= 1 else "below storage + load")
        out.append({"quote_id": q["quote_id"], "provider": q["provider"], "model": q["model"],
                    "usd_per_m_input_tokens_quoted": q["usd_per_m_input_tokens"],
                    "usd_per_m_cached_input_tokens": q["usd_per_m_cached_input_tokens"],
                    "discount_frac": 1 - q["usd_per_m_cached_input_tokens"] / q["usd_per_m_input_tokens"]
                    if q["usd_per_m_input_tokens"] else None,
                    "hardware": hardware, "kv_tier": c.get("kv_tier") if isinstance(c, dict) else None,
                    "usd_per_m_cached_input_tokens_true": true,
                    "usd_per_m_cached_storage": c.get("usd_per_m_cached_storage") if isinstance(c, dict) else None,
                    "usd_per_m_cached_load": c.get("usd_per_m_cached_load") if isinstance(c, dict) else None,
                    "usd_per_m_input_tokens": c.get("usd_per_m_input_tokens") if isinstance(c, dict) else None,
                    "price_over_cost": ratio, "verdict": verdict})
    f64 = pl.Float64
    schema = {"quote_id": pl.String, "provider": pl.String, "model": pl.String, "usd_per_m_input_tokens_quoted": f64,
              "usd_per_m_cached_input_tokens": f64, "discount_frac": f64, "hardware": pl.String,
              "kv_tier": pl.String, "usd_per_m_cached_input_tokens_true": f64, "usd_per_m_cached_storage": f64,
              "usd_per_m_cached_load": f64, "usd_per_m_input_tokens": f64, "price_over_cost": f64,
              "verdict": pl.String}
    return pl.DataFrame(out, schema=schema).select(CACHED_CHECK_COLUMNS)


__all__ = ["TASK_COLUMNS", "CACHED_CHECK_COLUMNS", "with_task_costs", "check_cached_prices"]
