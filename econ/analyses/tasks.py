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
- $/call and $/task (:func:`econ.economics.pricing.usd_per_task`).

Nothing here computes physics or prices itself.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ import units
from econ.economics.pricing import usd_per_task
from econ.physics.fleet import littles_law_concurrency
from econ.physics.kv_tiers import TIERS, cached_token_cost_usd, hbm_usd_per_gb_hour, place_kv, transfer_time_s
from econ.presets import check_task
from econ.tables.catalog import Catalog
from econ.tables.kv_tiers import load_kv_tiers, system_tiers

TASK_COLUMNS: tuple[str, ...] = (
    "calls_per_task", "prefix_reuse_frac", "reuse_interval_s", "sessions_waiting", "kv_tier", "kv_tier_medium",
    "kv_waiting_bytes_per_gpu", "hbm_free_bytes_per_gpu", "usd_per_m_cached_input_tokens_true",
    "usd_per_m_cached_storage", "usd_per_m_cached_load", "usd_per_m_input_tokens", "kv_load_s", "ttft_cache_hit_s",
    "usd_per_call", "usd_per_task")
"""Columns :func:`with_task_costs` adds."""


def _col(frame: pl.DataFrame, *names) -> np.ndarray:
    for n in names:
        if n in frame.columns:
            return frame[n].cast(pl.Float64).fill_null(np.nan).to_numpy()
    raise KeyError(names[0])


def with_task_costs(frame: pl.DataFrame, catalog: Catalog, *, calls_per_task: float, prefix_reuse_frac: float,
                    reuse_interval_s: float, usable_hbm_frac: float, kv_tiers: pl.DataFrame | None = None
                    ) -> pl.DataFrame:
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
    usable_hbm_frac : float in (0, 1], the engine's (``Assumptions.usable_hbm_frac``)
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
    hbm_free = np.maximum(hbm * usable_hbm_frac - _col(frame, "weight_bytes_per_gpu") - _col(frame, "kv_bytes_per_gpu"),
                          0.0)
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
        usd_per_call=nul(per_call), usd_per_task=nul(per_task),
    )


__all__ = ["TASK_COLUMNS", "with_task_costs"]
