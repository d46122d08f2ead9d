"""A fused decode + cost kernel (issue 20.3): the per-row part of the decode-and-cost chain in one compiled pass.

The engine computes every term that depends only on the (model, accelerator, precision, KV format, layout)
combination once per block (:func:`econ.engine.core.combination_terms`: ``DecodeConstants`` and ``Collectives`` of
:mod:`econ.physics.performance`; :func:`econ.engine.core.replica_weights`; the $/GPU-hour of
:func:`econ.engine.core.usd_per_gpu_hour`). What is left depends on each row's batch and context: the numpy path
(:func:`econ.physics.performance.decode_step` / ``_step_parts``, :func:`econ.engine.core.run_physics`,
:func:`econ.engine.core.costs_of`, :func:`econ.engine.core.run_status`) evaluates it with a few hundred full-length
temporaries; :func:`decode_cost` evaluates the same formulas row by row in one numba loop (no temporaries). Each line
of the kernel names the numpy function it mirrors; the formulas, their sources and their units are there, not here
(one home for the physics: this module holds no constant or formula of its own).

Covered: the columns :data:`COLUMNS` (and the input's id columns beside them); decode-only blocks (aggregated
serving, no arrival rate, no prefill-side column); any model (dense, MoE, MLA, sliding-window, sparse attention),
layout (tp, dp, ep, pp, two-batch overlap, redundant experts; a block whose layouts are given per row makes each row a
combination of its own), weight format, cost tier, economics and capex (the $/GPU-hour per combination when a block
has one tier, one set of economics and the catalog's capex, else per row); plain decoding and the models' default MTP
drafting. Not covered (the numpy path runs, same results): speculative decoding set by ``spec_*`` columns (EAGLE
heads, draft models, given MTP lengths or acceptance), KV offload and prefix-cache tiers (issue 22.2), disaggregated
serving, arrival rates, the ``physics`` memo of :func:`econ.engine.evaluate`, ``sweet_spot``, and any other column.

The switch: ``ECON_FUSED=0`` in the environment turns the kernel off, ``ECON_FUSED=1`` on for calls of any size; by
default it runs on calls of :data:`MIN_ROWS` rows or more, and of :data:`LOADED_MIN_ROWS` once loaded in the process.
Without numba (an optional dependency, the ``fast`` extra of pyproject.toml) the numpy path runs. The kernel is
compiled on first use (~2-4 s) and kept in numba's on-disk cache (``cache=True``: ``__pycache__`` beside
``econ/engine/_fused_kernel.py``, or ``NUMBA_CACHE_DIR``), so a later process loads it (~0.5-0.9 s with numba's
import); where no cache directory can be written it compiles once per process.

Plain-Python mode (issue 20.4): :func:`pure_kernel` loads the same kernel source a second time without numba (its
``_jit`` the identity, its ``np`` scalar ``math``), and :func:`pure_row` evaluates one row on Python floats. The
small-input path (:mod:`econ.engine.small`, at most 16 rows) uses it: its cache of table rows is filled by one ordinary
evaluation inside :class:`capturing`, during which :func:`covers` is True and :func:`decode_cost` runs the
plain-Python row function and records its block.
"""

from __future__ import annotations

import importlib.util
import os
import threading

import numpy as np

from econ.engine._fused_fields import FIELDS
from econ.assumptions import Assumptions
from econ.engine.core import EngineInputs, combination_terms, kv_pool, replica_weights, take_bundle
from econ.physics.memory import kv_replication

OUTPUTS = ("feasible", "binding_wall", "max_batch_size", "tpot_s", "tokens_per_s_per_user",
           "output_tokens_per_s_per_gpu", "usd_per_gpu_hour", "usd_per_m_output_tokens")
"""The kernel's outputs in its order (its output arrays, and the tuple its row function returns)."""

COLUMNS = frozenset(OUTPUTS)
"""Result columns the kernel writes (the decode + cost columns of ``benchmarks/bench_engine.py``)."""

_NUMBA: dict = {}
"""The compiled kernel once built ({"kernel": dispatcher} or {"kernel": None} when numba is absent)."""


MIN_ROWS = 250_000
"""Rows of an :func:`econ.engine.evaluate` call from which the kernel runs by default when it is not loaded yet.
Loading numba and the cached kernel costs ~0.5-0.9 s once per process (compiling it, ~2-4 s, once per install), about
what the kernel saves on 0.6-1M rows (~0.8 us a row on this 2-core machine), so small calls in a short process keep
the numpy path."""

LOADED_MIN_ROWS = 1024
"""Rows of a call from which the kernel runs by default once it is loaded in this process (below it the per-block work
around the kernel, not the kernel, is most of a call's time)."""


def enabled(rows: int) -> bool:
    """Whether a call of ``rows`` rows tries the kernel: ``ECON_FUSED=0`` (or ``false``/``off``/``no``) never,
    ``ECON_FUSED=1`` always, unset (or ``auto``) from :data:`MIN_ROWS` rows, or :data:`LOADED_MIN_ROWS` once loaded."""
    flag = os.environ.get("ECON_FUSED", "auto").strip().lower()
    if flag in ("0", "false", "off", "no"):
        return False
    if flag in ("1", "true", "on", "yes") or rows >= MIN_ROWS:
        return True
    return rows >= LOADED_MIN_ROWS and _NUMBA.get("kernel") is not None


def kernel():
    """The compiled kernel, or None when numba does not import (the numpy path then runs)."""
    if "kernel" not in _NUMBA:
        _NUMBA["kernel"] = _build()
    return _NUMBA["kernel"]


def covers(columns, rows: int) -> bool:
    """True when every requested result column is one the kernel writes and the switch is on (:func:`enabled`), or
    a capture of :func:`capturing` is open in this thread (the small-input path's miss, :mod:`econ.engine.small`)."""
    return set(columns) <= COLUMNS and (enabled(rows) or capture_open())


_CAPTURE = threading.local()
"""``rows``: the list :func:`decode_cost` appends its blocks to while :func:`capturing` is open in this thread."""


class capturing:
    """Context manager (issue 20.4): while open in this thread, :func:`covers` is True for the kernel's columns and
    :func:`decode_cost` runs the plain-Python kernel (:func:`pure_kernel`, no numba needed) row by row, with each
    row's own MoE / two-batch-overlap / speculation switches, and appends what it was given to the list the context
    returns: one dict per block with ``batch``, ``decode_context_tokens``, ``capacity_context_tokens``, ``blocked``,
    ``index``, ``table`` and ``usd_per_gpu_hour`` (each row's $/GPU-hour); a block the kernel could not evaluate in
    plain Python (a division by zero, an overflow) is appended as None and left to the numpy path. Used by
    :mod:`econ.engine.small` to fill its cache from one ordinary evaluation (a one-block call, in the caller's
    thread)."""

    def __enter__(self) -> list:
        self.rows: list = []
        self._before = getattr(_CAPTURE, "rows", None)
        _CAPTURE.rows = self.rows
        return self.rows

    def __exit__(self, *exc) -> None:
        _CAPTURE.rows = self._before


def capture_open() -> bool:
    """Whether a :func:`capturing` context is open in this thread."""
    return getattr(_CAPTURE, "rows", None) is not None


_PURE_KERNEL: dict = {}
"""The plain-Python kernel module once loaded ({"module": module})."""


def pure_kernel():
    """``econ/engine/_fused_kernel.py`` loaded a second time as plain Python (module
    ``econ.engine._fused_kernel_pure``): ``_PURE = True`` is set in its namespace before its source runs, so its
    ``_jit`` is the identity, numba is not imported and its ``np`` is scalar ``math`` (see that module). One source,
    two modes: :func:`decode_cost_row` of the returned module is the numba kernel's row, on Python floats."""
    got = _PURE_KERNEL.get("module")
    if got is None:
        spec = importlib.util.find_spec("econ.engine._fused_kernel")
        spec = importlib.util.spec_from_file_location("econ.engine._fused_kernel_pure", spec.origin)
        got = importlib.util.module_from_spec(spec)
        got._PURE = True
        spec.loader.exec_module(got)
        _PURE_KERNEL["module"] = got
    return got


def pure_row(row_fn, b: float, decode_ctx: float, capacity_ctx: float, blocked: bool, t, gh: float) -> tuple:
    """The kernel's row (``row_fn`` = ``pure_kernel().decode_cost_row``) on Python floats, with the row's own
    switches (:func:`decode_cost` takes them per block: equal results, the extra terms of a switch that is on for a
    row that does not need it are zeros). ``t``: the row's table row as a list of floats.

    Raises ZeroDivisionError / OverflowError / ValueError where numpy would give inf or NaN."""
    return row_fn(b, decode_ctx, capacity_ctx, blocked, t, t[_MOE_FIELD] != 0.0, t[_TBO_FIELD] > 0.0,
                  t[_SPEC_K_FIELD] > 0.0, gh)


_MOE_FIELD, _TBO_FIELD, _SPEC_K_FIELD, _USD_FIELD = (FIELDS.index(c) for c in ("num_moe_layers", "tbo", "spec_k",
                                                                                "usd_per_gpu_hour"))


def combination_table(inp: EngineInputs, assumptions: Assumptions, usd_per_gpu_hour, spec=None,
                      eff_per_combination: bool = False) -> np.ndarray:
    """The per-combination table of a block, shape (combinations, len(FIELDS)), float64.

    Parameters
    ----------
    inp : EngineInputs with ``combos`` (a row of each combination, each row's combination index; ``(arange(n),
        arange(n))`` makes every row a combination of its own)
    assumptions : Assumptions, its ``stream_input_embedding`` and KV-pool sizing (``usable_hbm_frac``,
        ``kv_memory_rule``, ``prefill_chunk_tokens``: :func:`econ.engine.core.kv_pool`)
    usd_per_gpu_hour : scalar or array of the combinations, the cost chain's $/GPU-hour [USD/h]
    spec : Speculation of the combinations (one row each, as ``combos``' rows), or None (plain decoding); its
        ``method_code`` is 0 or 1 (MTP) on every row (the caller checks)
    eff_per_combination : bool, ``inp.eff`` holds the efficiencies of the combinations' rows (not of every row)

    Notes
    -----
    Every entry is a value the numpy path computes for those rows: bundle fields, :func:`combination_terms`,
    :func:`replica_weights`, :func:`econ.physics.memory.kv_replication`; ``free_hbm_bytes`` is the KV pool
    (:func:`econ.engine.core.kv_pool`) before :func:`econ.physics.memory.batch_in_pool` floors it at 0.
    """
    rows, _ = inp.combos
    n = len(rows)
    comm, const = combination_terms(inp, assumptions.stream_input_embedding, eff_per_combination)
    sub = EngineInputs(model=take_bundle(inp.model, rows), hardware=take_bundle(inp.hardware, rows),
                       layout=take_bundle(inp.layout, rows), formats=take_bundle(inp.formats, rows),
                       eff=inp.eff if eff_per_combination else take_bundle(inp.eff, rows),
                       workload=inp.workload, serving=inp.serving, spec=spec)
    m, hw, lay, fm, eff = sub.model, sub.hardware, sub.layout, sub.formats, sub.eff
    _, _, _, replica_w = replica_weights(sub)
    cols = dict(tp=lay.tp, dp=lay.dp, pp=lay.pp, ep=lay.ep, expert_tp=lay.expert_tp, num_gpus=lay.num_gpus,
                expert_bytes=fm.expert_bytes, kv_bytes_per_element=fm.kv_bytes_per_element,
                attention_peak_flop_per_s=fm.attention_peak_flop_per_s,
                kv_replication=kv_replication(lay.tp, m.kv_shard_heads),
                free_hbm_bytes=kv_pool(m, hw, lay, replica_w, assumptions),
                usd_per_gpu_hour=usd_per_gpu_hour,
                spec_method=0.0 if spec is None else spec.method_code,
                spec_k=0.0 if spec is None else spec.draft_tokens,
                spec_acceptance=0.0 if spec is None else spec.acceptance,
                num_layers=m.num_layers, mtp_module_kernels=m.mtp_module_kernels,
                moe_layer_overhead_s=eff.moe_layer_overhead_s, layer_overhead_s=eff.layer_overhead_s,
                single_batch_overlap_frac=eff.single_batch_overlap_frac)
    for name in FIELDS[6:22]:
        cols[name] = getattr(m, name)
    for name in FIELDS[25:39]:
        cols[name] = getattr(eff, name)
    for name in FIELDS[39:57]:
        cols[name] = getattr(const, name)
    for prefix, ab in (("tpar", comm.tp_allreduce), ("pipe", comm.pipeline), ("mtp", comm.moe.tp_allreduce),
                       ("mst", comm.moe.stage_allreduce), ("metp", comm.moe.expert_tp_allreduce)):
        for k in ("a1", "b1", "a2", "b2"):
            cols[f"{prefix}_{k}"] = getattr(ab, k)
    cols.update(a2a_a1=comm.moe.alltoall.a1, a2a_b1=comm.moe.alltoall.b1, moe_tp=comm.moe.tp, moe_dp=comm.moe.dp,
                moe_ep=comm.moe.ep)
    table = np.empty((n, len(FIELDS)))
    for j, name in enumerate(FIELDS):
        table[:, j] = cols[name]  # a scalar or an array of the combinations
    return table


def decode_cost(batch, decode_context_tokens, capacity_context_tokens, blocked, index, table, out: dict,
                usd_per_gpu_hour_rows=None) -> bool:
    """Run the kernel on a block's rows; write the :data:`COLUMNS` arrays of ``out`` (float64 / bool / int8).

    Parameters
    ----------
    batch : (rows,) float [sequences per instance]; decode_context_tokens, capacity_context_tokens : (rows,) [tokens]
    blocked : (rows,) bool, infeasible for a reason other than capacity (:func:`econ.engine.core.run_status`'s
        unsupported precision, missing price, invalid layout, context over the maximum, format too wide, speculation)
    index : (rows,) int, each row's combination; table : :func:`combination_table`
    out : dict of the output arrays (rows,) for every name of :data:`COLUMNS`
    usd_per_gpu_hour_rows : (rows,) float, optional, each row's $/GPU-hour (:func:`econ.engine.core.usd_per_gpu_hour`)
        where economics or capex vary by row; None: the table's per-combination column [USD/h]

    Returns
    -------
    bool: False when numba is absent (nothing written; the caller runs the numpy path).
    """
    captured = getattr(_CAPTURE, "rows", None)
    if captured is not None:
        return _decode_cost_pure(batch, decode_context_tokens, capacity_context_tokens, blocked, index, table, out,
                                 usd_per_gpu_hour_rows, captured)
    k = kernel()
    if k is None:
        return False
    table = np.ascontiguousarray(table, dtype=np.float64)
    moe = bool(np.any(table[:, _MOE_FIELD]))  # decode_step's block-level MoE switch
    any_tbo = bool(np.any(table[:, _TBO_FIELD] > 0))  # and its two-batch-overlap switch
    any_k = bool(np.any(table[:, _SPEC_K_FIELD] > 0))  # and its speculative-decoding switch
    n = len(index)
    def rows(v, dtype=np.float64):
        return np.ascontiguousarray(np.broadcast_to(np.asarray(v, dtype=dtype), (n,)))

    k(rows(batch), rows(decode_context_tokens), rows(capacity_context_tokens), rows(blocked, np.bool_),
      rows(index, np.intp), table, moe,
      any_tbo, any_k, np.zeros(1) if usd_per_gpu_hour_rows is None else
      np.ascontiguousarray(np.broadcast_to(np.asarray(usd_per_gpu_hour_rows, dtype=np.float64), (n,))),
      usd_per_gpu_hour_rows is not None, *(out[c] for c in OUTPUTS))
    return True


def _decode_cost_pure(batch, decode_context_tokens, capacity_context_tokens, blocked, index, table, out: dict,
                      usd_per_gpu_hour_rows, captured: list) -> bool:
    """:func:`decode_cost` by the plain-Python kernel (a :func:`capturing` context is open); False (nothing written)
    where a row cannot be evaluated in plain Python."""
    n = len(index)
    def rows(v, dtype=np.float64):
        return np.broadcast_to(np.asarray(v, dtype=dtype), (n,)).tolist()

    b, dctx, cctx, blk, idx = (rows(batch), rows(decode_context_tokens), rows(capacity_context_tokens),
                               rows(blocked, np.bool_), rows(index, np.intp))
    tab = np.asarray(table, dtype=np.float64).tolist()
    gh = ([tab[i][_USD_FIELD] for i in idx] if usd_per_gpu_hour_rows is None else rows(usd_per_gpu_hour_rows))
    row_fn = pure_kernel().decode_cost_row
    try:
        got = [pure_row(row_fn, b[i], dctx[i], cctx[i], blk[i], tab[idx[i]], gh[i]) for i in range(n)]
    except (ArithmeticError, ValueError):
        captured.append(None)
        return False
    for j, c in enumerate(OUTPUTS):
        out[c][:] = [g[j] for g in got]
    captured.append(dict(batch=b, decode_context_tokens=dctx, capacity_context_tokens=cctx, blocked=blk, index=idx,
                         table=tab, usd_per_gpu_hour=gh))
    return True


def _build():
    """The compiled kernel (from numba's cache when there is one), or None when numba does not import. One call on a
    row of zeros compiles or loads it here, so that "loaded" (:func:`enabled`) means ready."""
    try:
        from econ.engine import _fused_kernel
    except ImportError:
        return None
    k = _fused_kernel.decode_cost_kernel
    one, flag = np.ones(1), np.zeros(1, dtype=np.bool_)
    with np.errstate(all="ignore"):
        k(one, one, one, flag, np.zeros(1, dtype=np.intp), np.zeros((1, len(FIELDS))), False, False, False,
          np.zeros(1), False, np.zeros(1, dtype=np.bool_), np.zeros(1, dtype=np.int8), *(np.zeros(1) for _ in range(6)))
    return k
