"""Where a sequence's KV cache lives: HBM, host memory, local NVMe, a remote pool (issue 22.2).

Pure, vectorized kernels (numpy arrays broadcast; the last axis of a per-tier array is the tier, in
:data:`TIERS` order). The tier figures (capacity, read bandwidth to the accelerator, $/GB-hour) come from
``data/kv_tiers.csv`` through :mod:`econ.tables.kv_tiers`; nothing here holds a number of its own.

The model, one formula per question:

- *Placement*: a KV working set fills the tiers in order, HBM first (what is left beside the weights), then host
  memory (Grace LPDDR5X over NVLink-C2C on GB200/GB300, DDR5 over PCIe on HGX), then NVMe, then a remote pool
  (Mooncake, LMCache, NVIDIA Dynamo KVBM all spill in this order: NVIDIA Dynamo KVBM docs, tiers G1 GPU HBM, G2 host,
  G3 local SSD, G4 remote; Mooncake FAST'25, section 4).
- *Sequences held*: sessions whose KV is kept between calls = the tiers' summed capacity / KV bytes per sequence;
  spilling to host memory raises it by the host capacity (sessions decoding still need their KV in HBM or streamed).
- *TTFT on a cache hit*: the prefix is either loaded from its tier (bytes / tier read bandwidth) or recomputed
  (its prefill FLOPs / the achieved FLOP rate), whichever is faster, then the new suffix is prefilled attending to
  the whole prefix. An HBM-resident prefix needs no transfer (its load is the HBM read the suffix's attention does).
- *True cost of a cached input token*: storage for the reuse interval (bytes x $/GB-hour x hours) plus the
  accelerator time its load takes (bytes / read bandwidth x $/accelerator-second): never zero. HBM's $/GB-hour is
  the accelerator's $/GPU-hour over its usable HBM (the batch the KV displaces).
"""

from __future__ import annotations

import numpy as np

from econ import units
from econ.errors import InvalidInputError
from econ.physics.performance import causal_attended_tokens
from econ.validate import require_in_range

TIERS: tuple[str, ...] = ("hbm", "host", "nvme", "remote")
"""KV-cache tiers, nearest first: the spill order (NVIDIA Dynamo KVBM G1..G4; LMCache; Mooncake Store)."""


def require_positive_bandwidth(name: str, bytes_per_s) -> np.ndarray:
    """Raise InvalidInputError unless every bandwidth is > 0 and finite.

    Raises
    ------
    InvalidInputError
        Naming the field, the first bad value and the valid range (0, inf).
    """
    return require_in_range(name, bytes_per_s, 0.0, np.inf, "B/s", lo_inclusive=False)


def _capacities(name: str, value) -> np.ndarray:
    """``value`` as floats, refusing NaN and negatives (``inf`` = an unbounded tier is allowed)."""
    arr = np.asarray(value, dtype=float)
    bad = np.isnan(arr) | (arr < 0)
    if bad.any():
        raise InvalidInputError(f"{name}={arr[bad].ravel()[0]} is outside [0, inf] (B)")
    return arr


def place_kv(kv_bytes, capacity_bytes):
    """Bytes of a KV working set held in each tier, filling the tiers in order.

    Parameters
    ----------
    kv_bytes : scalar or array, shape (...) [B]
        The working set: KV of every sequence whose cache is kept.
    capacity_bytes : array, shape (..., T) [B]
        Capacity per tier, nearest first (:data:`TIERS` order; ``np.inf`` = unbounded).

    Returns
    -------
    (placed, overflow): placed shape (..., T) [B], overflow shape (...) [B] (bytes no tier holds).

    Raises
    ------
    InvalidInputError
        A negative working set or capacity.
    """
    kv = require_in_range("kv_bytes", kv_bytes, 0.0, np.inf, "B")
    cap = _capacities("tier capacity_bytes", capacity_bytes)
    zero = np.zeros(cap.shape[:-1] + (1,))
    before = np.concatenate([zero, np.cumsum(cap[..., :-1], axis=-1)], axis=-1)  # capacity of the nearer tiers
    placed = np.clip(kv[..., None] - before, 0.0, cap)
    overflow = np.maximum(kv - cap.sum(axis=-1), 0.0)
    return placed, overflow


def spill_tier(kv_bytes, capacity_bytes):
    """Index into :data:`TIERS` of the farthest tier a working set reaches (0 = fits in HBM); T = overflows all.

    Parameters
    ----------
    kv_bytes : scalar or array (...) [B]
    capacity_bytes : array (..., T) [B]

    Returns
    -------
    int array (...).
    """
    placed, overflow = place_kv(kv_bytes, capacity_bytes)
    used = placed > 0
    last = np.where(used.any(axis=-1), used.shape[-1] - 1 - np.argmax(used[..., ::-1], axis=-1), 0)
    return np.where(overflow > 0, used.shape[-1], last)


def sequences_held(capacity_bytes, kv_bytes_per_sequence):
    """Sequences whose whole KV fits in the tiers, each tier counted cumulatively.

    Parameters
    ----------
    capacity_bytes : array (..., T) [B], free capacity per tier (HBM: what is left beside the weights)
    kv_bytes_per_sequence : scalar or array (...) [B]

    Returns
    -------
    array (..., T) [sequences]: element t = floor(sum of tiers 0..t / KV per sequence), so the last element is the
    largest number of sessions kept with every tier in use, and element 0 the HBM-only maximum batch.

    Raises
    ------
    InvalidInputError
        KV bytes per sequence <= 0.
    """
    kv = require_in_range("kv_bytes_per_sequence", kv_bytes_per_sequence, 0.0, np.inf, "B",
                          lo_inclusive=False)
    cap = _capacities("tier capacity_bytes", capacity_bytes)
    return np.floor(np.cumsum(cap, axis=-1) / kv[..., None])


def transfer_time_s(kv_bytes, read_bytes_per_s):
    """Time to move ``kv_bytes`` from a tier to the accelerator. [s]

    Parameters
    ----------
    kv_bytes : scalar or array [B]
    read_bytes_per_s : scalar or array, > 0 [B/s], the tier's read bandwidth per accelerator (one direction)

    Returns
    -------
    scalar or array [s] = bytes / bandwidth (no overlap with compute: the conservative reading; layer-wise
    pipelining as in LMCache and Mooncake hides part of it).

    Raises
    ------
    InvalidInputError
        A bandwidth <= 0 (``tier read_bytes_per_s``), naming the value and the range.
    """
    bw = require_positive_bandwidth("tier read_bytes_per_s", read_bytes_per_s)
    return np.asarray(kv_bytes, dtype=float) / bw


def prefill_flop(new_tokens, prefix_tokens, active_params, attention_flop_per_context_token, num_global_layers,
                 num_sliding_layers=0.0, sliding_window_tokens=np.inf, index_topk=0.0):
    """Prefill FLOPs of ``new_tokens`` appended to a ``prefix_tokens`` context already in the KV cache.

    Parameters
    ----------
    new_tokens, prefix_tokens : scalar or array [tokens]
    active_params : scalar or array [params] (MoE: the active ones)
    attention_flop_per_context_token : scalar or array [FLOP per (query, key) pair per layer] (4 h d_h for GQA)
    num_global_layers, num_sliding_layers : scalar or array [layers]
    sliding_window_tokens : scalar or array [tokens]
    index_topk : scalar or array [tokens], a sparse-attention indexer's top-k (0 = dense attention)

    Returns
    -------
    scalar or array [FLOP] = 2 P_active S_new + a x pairs, pairs = the new tokens' attended (query, key) pairs over
    every layer: L_global (S_new P + S_new^2 / 2) + sliding layers' windowed count
    (:func:`econ.physics.performance.causal_attended_tokens`, the one count the engine's prefill step uses too).

    Notes
    -----
    DESIGN.md "Prefill": 2 P_active S + causal attention; each new token attends to the prefix and to the new tokens
    before it. With ``prefix_tokens = 0`` this is a whole prompt's prefill.
    """
    s = np.asarray(new_tokens, dtype=float)
    p = np.asarray(prefix_tokens, dtype=float)
    pairs = causal_attended_tokens(s, num_global_layers, num_sliding_layers, sliding_window_tokens, index_topk, p)
    return 2.0 * active_params * s + attention_flop_per_context_token * pairs


def cache_hit_ttft_s(prefix_kv_bytes, read_bytes_per_s, prefix_recompute_s, suffix_prefill_s, resident=False):
    """TTFT of a call whose prompt prefix is cached: load it or recompute it, whichever is faster, then the suffix.

    Parameters
    ----------
    prefix_kv_bytes : scalar or array [B], KV bytes of the cached prefix (one sequence, whole model)
    read_bytes_per_s : scalar or array, > 0 [B/s], the tier's read bandwidth to the accelerators serving the call
    prefix_recompute_s : scalar or array [s], prefilling the prefix from scratch
    suffix_prefill_s : scalar or array [s], prefilling the new tokens over the prefix (:func:`prefill_flop`)
    resident : bool or bool array
        True where the prefix already sits in HBM (no transfer).

    Returns
    -------
    (ttft_s, loaded): ttft_s [s]; loaded (bool array): True where loading beats recomputing.

    Raises
    ------
    InvalidInputError
        A bandwidth <= 0.
    """
    load = np.where(resident, 0.0, transfer_time_s(prefix_kv_bytes, read_bytes_per_s))
    loaded = load <= prefix_recompute_s
    return np.minimum(load, prefix_recompute_s) + suffix_prefill_s, loaded


def hbm_usd_per_gb_hour(usd_per_gpu_hour, hbm_capacity_bytes, usable_hbm_frac):
    """$/GB-hour of HBM as KV storage: the accelerator's cost over its usable HBM (the batch a stored KV displaces).

    Parameters
    ----------
    usd_per_gpu_hour : scalar or array [USD per accelerator-hour]
    hbm_capacity_bytes : scalar or array, > 0 [B]
    usable_hbm_frac : scalar or array in (0, 1] [-]

    Returns
    -------
    scalar or array [USD per GB-hour] (GB = 1e9 B).
    """
    gb = np.asarray(hbm_capacity_bytes, dtype=float) * usable_hbm_frac / units.BYTES_PER_GB
    return np.asarray(usd_per_gpu_hour, dtype=float) / gb


def cached_token_cost_usd(kv_bytes_per_token, usd_per_gb_hour, reuse_interval_s, read_bytes_per_s,
                          usd_per_gpu_hour):
    """True cost of serving one input token from a prefix cache: storage until its reuse plus its load.

    Parameters
    ----------
    kv_bytes_per_token : scalar or array, > 0 [B per token] (whole model)
    usd_per_gb_hour : scalar or array, >= 0 [USD per GB-hour], the tier's storage price
    reuse_interval_s : scalar or array, >= 0 [s], how long the KV waits for its next use
    read_bytes_per_s : scalar or array, > 0 [B/s], the tier's read bandwidth per accelerator
    usd_per_gpu_hour : scalar or array [USD per accelerator-hour] of the accelerators that wait for the load

    Returns
    -------
    (total, storage, load): each scalar or array [USD per token]; storage = bytes / 1e9 x $/GB-h x interval / 3600;
    load = bytes / bandwidth x $/GPU-h / 3600 (N accelerators each reading 1/N of the bytes in parallel all wait
    bytes / (N bandwidth): N cancels).

    Raises
    ------
    InvalidInputError
        KV bytes per token <= 0, a negative storage price or interval, or a bandwidth <= 0.

    Notes
    -----
    Both terms are positive for any real tier, so a cached token never costs zero (issue 22). Storage counts the
    bytes for the whole interval (no sharing between tasks with a common prefix: an upper bound for a system prompt
    shared by many users, exact for a private agent context).
    """
    big = np.inf
    kv = require_in_range("kv_bytes_per_token", kv_bytes_per_token, 0.0, big, "B", lo_inclusive=False)
    price = require_in_range("tier usd_per_gb_hour", usd_per_gb_hour, 0.0, big, "USD/GB-h")
    interval = require_in_range("reuse_interval_s", reuse_interval_s, 0.0, big, "s")
    bw = require_positive_bandwidth("tier read_bytes_per_s", read_bytes_per_s)
    storage = kv / units.BYTES_PER_GB * price * interval / units.SECONDS_PER_HOUR
    load = kv / bw * np.asarray(usd_per_gpu_hour, dtype=float) / units.SECONDS_PER_HOUR
    return storage + load, storage, load


__all__ = ["TIERS", "require_positive_bandwidth", "place_kv", "spill_tier", "sequences_held", "transfer_time_s",
           "prefill_flop", "cache_hit_ttft_s", "hbm_usd_per_gb_hour", "cached_token_cost_usd"]
