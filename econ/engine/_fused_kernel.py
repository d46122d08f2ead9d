"""The numba kernel of :mod:`econ.engine.fused` (imported only when numba is installed; see that module).

Every statement names the numpy function it mirrors, and keeps that function's order of operations, so the two
paths agree to rounding (tests/engine/test_fused.py: within 1e-9 relative). No formula or constant lives here that
is not in the function named beside it.

The same source also runs as plain Python on Python floats (issue 20.4, the small-input path of
:mod:`econ.engine.small`): :func:`econ.engine.fused.pure_kernel` loads this file a second time under another module
name with ``_PURE = True`` set in its namespace before it runs; then ``_jit`` is the identity, numba is not imported,
and ``np`` is :class:`_ScalarMath` (``math``'s functions on floats, equal to numpy's on finite values; a NaN or
infinite argument of ``ceil`` / ``floor`` passes through as numpy's does). A division by zero or an overflow there
raises (ZeroDivisionError, OverflowError, ValueError) where numpy would return inf or NaN: the caller then runs the
numpy path.
"""

from __future__ import annotations

import math

_PURE = bool(globals().get("_PURE", False))  # set by econ.engine.fused.pure_kernel before this source runs


class _ScalarMath:
    """The numpy functions the kernel calls, on Python floats (plain-Python mode only)."""

    nan = math.nan
    expm1 = staticmethod(math.expm1)

    @staticmethod
    def ceil(x):
        """np.ceil of a float (NaN and inf pass through)."""
        return float(math.ceil(x)) if x - x == 0.0 else x

    @staticmethod
    def floor(x):
        """np.floor of a float (NaN and inf pass through)."""
        return float(math.floor(x)) if x - x == 0.0 else x


if _PURE:
    np = _ScalarMath
else:
    import numba
    import numpy as np

from econ import units
from econ.engine._fused_fields import FIELDS
from econ.physics.performance import KERNEL_REFERENCE_WIDTH, KERNEL_WIDTH_INDEPENDENT_SHARE

_I = FIELDS.index
(TP, DP, PP, EP, EXPERT_TP, NUM_GPUS, L_MOE, E, K, P_E, LOG_MISS, H, L_G, L_S, WINDOW, TOPK, ATT_FLOP, IDX_FLOP,
 HEADS, KERNELS, KV_EL, IDX_BYTES, EXPERT_BYTES, KV_BPE, ATT_PEAK, ACT_BYTES, DISPATCH_BYTES, COMBINE_BYTES,
 LAUNCH_LAT, GRAPH_MAX, GAP_GRAPH, GAP_EAGER, KERNEL_LAT, OVERHEAD, SEQ_OVERHEAD, CPU_OVERLAP, ETA_FLOP, TILE_ROWS,
 IMBALANCE, BW_ETA, ROUTED_BW, PEAK_ETA, ATTN_PEAK_ETA, ROUTED_FLOP_RATE, IMB, NR_FIXED, NR_TOKEN, NR_ACTIVE,
 R_ACTIVE, INDEXER_SCALE, EXP_RATE, TP_LAYERS, TBO, OVERLAP, STAGE, T_MOE, T_LAYERS,
 TPAR_A1, TPAR_B1, TPAR_A2, TPAR_B2, PIPE_A1, PIPE_B1, PIPE_A2, PIPE_B2, MTP_A1, MTP_B1, MTP_A2, MTP_B2,
 MST_A1, MST_B1, MST_A2, MST_B2, METP_A1, METP_B1, METP_A2, METP_B2, A2A_A1, A2A_B1, MOE_TP, MOE_DP, MOE_EP,
 REPL, FREE_HBM, USD_PER_GPU_HOUR, SPEC_METHOD, SPEC_K, SPEC_ACCEPTANCE, NUM_LAYERS, MTP_KERNELS, MOE_LAYER_OVERHEAD,
 LAYER_OVERHEAD, SINGLE_OVERLAP) = range(len(FIELDS))
assert (_I("bw_eta"), _I("moe_tp"), _I("usd_per_gpu_hour"), _I("single_batch_overlap_frac")) == (
    BW_ETA, MOE_TP, USD_PER_GPU_HOUR, SINGLE_OVERLAP) and len(FIELDS) == SINGLE_OVERLAP + 1

_SECONDS_PER_HOUR = float(units.SECONDS_PER_HOUR)
_TOKENS_PER_M = float(units.TOKENS_PER_M)
_KERNEL_WIDTH = float(KERNEL_REFERENCE_WIDTH)
_KERNEL_FIXED = float(KERNEL_WIDTH_INDEPENDENT_SHARE)  # kernel_width_factor: fixed + growing x d / 4096
_KERNEL_GROWING = 1.0 - _KERNEL_FIXED
_OPTIONS = dict(fastmath=False, nogil=True, error_model="numpy")


def _jit(fn):
    """``numba.njit`` with the on-disk cache, or without it where no cache directory can be written; the identity in
    plain-Python mode."""
    if _PURE:
        return fn
    try:
        return numba.njit(cache=True, **_OPTIONS)(fn)
    except RuntimeError:  # numba: "cannot cache function ...: no locator available" (read-only install)
        return numba.njit(cache=False, **_OPTIONS)(fn)


@_jit
def _minimum(a, b):
    """np.minimum of two floats (NaN propagates)."""
    if a != a or b != b:
        return np.nan
    return a if a <= b else b


@_jit
def _maximum(a, b):
    """np.maximum of two floats (NaN propagates)."""
    if a != a or b != b:
        return np.nan
    return a if a >= b else b


@_jit
def _indicator(x):
    """econ.physics.communication.indicator: min(max(x, 0), 1)."""
    return _minimum(_maximum(x, 0.0), 1.0)


@_jit
def _time_s(a1, b1, a2, b2, message):
    """econ.physics.communication.AlphaBeta.time_s."""
    return _minimum(a1 + b1 * message, a2 + b2 * message)


@_jit
def _parts(tokens_per_seq, b, ctx, kv_dec, attended, t, moe):
    """econ.physics.performance._step_parts for one row (``t``: its combination's table row).

    Returns (n_mb, nr_bytes, r_bytes, t_mem_nr, r_mem, t_flop_nr, r_flop, attn, t_tp, t_ep, t_pp, roof_nr)."""
    tp, dp, pp = t[TP], t[DP], t[PP]
    n_mb = _minimum(pp, b)  # np.minimum(pp, batch_size)
    even = b / n_mb  # pipeline_microbatch_tokens
    m = (np.ceil(even - 1e-9) if pp > 1.0 else even) * tokens_per_seq
    group = m / dp
    nr_bytes = t[NR_FIXED] + t[NR_TOKEN] * group  # non_routed_bytes_read of the group
    r_bytes = 0.0
    moe_tp = 0.0
    moe_ep = 0.0
    imb = 1.0
    local = 0.0
    if moe:
        # _routed_bytes -> routed_bytes_read_per_gpu (imb, touched and local are also _routed_flop's: computed once)
        imb = 1.0 + (t[IMBALANCE] - 1.0) * _indicator(t[EP] - 1.0)
        touched = -t[E] * np.expm1(m * t[LOG_MISS])  # expected_experts_touched
        local = _minimum(imb * touched / t[EP], t[E] / t[EP])
        r_bytes = t[L_MOE] * local * t[P_E] * t[EXPERT_BYTES] / t[EXPERT_TP]
        # _moe_comm -> MoECollectives.times_s(m, group)
        w = t[MOE_TP] * t[MOE_DP]
        etp = w / t[MOE_EP]
        ep_on = _indicator(t[MOE_EP] - 1.0)
        per_rank = m / w * t[K] * t[H]
        t_a2a = 2.0 * t[A2A_A1] + t[A2A_B1] * per_rank * (t[DISPATCH_BYTES] + t[COMBINE_BYTES]) \
            + 2.0 * t[LAUNCH_LAT]
        t_etp = _time_s(t[METP_A1], t[METP_B1], t[METP_A2], t[METP_B2],
                        m * t[K] / t[MOE_EP] * t[H] * t[ACT_BYTES]) + _indicator(etp - 1.0) * t[LAUNCH_LAT]
        t_tp_ep = _time_s(t[MTP_A1], t[MTP_B1], t[MTP_A2], t[MTP_B2], group * t[H] * t[ACT_BYTES])
        t_w = _time_s(t[MST_A1], t[MST_B1], t[MST_A2], t[MST_B2], m * t[H] * t[ACT_BYTES])
        moe_tp = ep_on * t_tp_ep + (1.0 - ep_on) * t_w
        moe_ep = ep_on * (t_a2a + t_etp)
    kv_read = group * kv_dec * t[REPL] / tp  # each verified token reads the cache
    t_mem_w = nr_bytes / tp / t[BW_ETA]
    r_mem = r_bytes / t[ROUTED_BW]
    main = attended * t[ATT_FLOP]
    attn = main + t[L_G] * ctx * t[IDX_FLOP]  # FLOPs, as counted
    attn_t = main + t[INDEXER_SCALE] * ctx  # at the attention peak (indexer_flop_at_attention_peak)
    t_flop_w = group * 2.0 * t[NR_ACTIVE] / tp / t[PEAK_ETA]
    # attention_time_s(kv_read, group attn_t / tp, group heads attended / tp, bw_eta, 1.0, ...)
    t_read = kv_read / (t[BW_ETA] * 1.0)
    t_compute = _maximum(group * attn_t / tp / t[ATT_PEAK], group * t[HEADS] * attended / tp / t[EXP_RATE]) \
        / t[ETA_FLOP]
    t_attn = _maximum(t_read, t_compute)
    t_mem_nr = t_mem_w + kv_read / t[BW_ETA]
    t_flop_nr = t_flop_w + group * attn_t / tp / t[ATTN_PEAK_ETA]
    roof_nr = _maximum(t_mem_w, t_flop_w) + t_attn
    if moe:
        # _routed_flop / routed_flop_rate (imb, touched, local as above)
        tokens = m * t[K] * imb / t[EP]
        per = tokens / _maximum(local, 1e-30)  # grouped_gemm_padded_rows
        rows = local * np.ceil(per / t[TILE_ROWS]) * t[TILE_ROWS] if t[TILE_ROWS] > 1.0 else tokens
        r_flop = t[L_MOE] * rows * 2.0 * t[P_E] / t[EXPERT_TP] / t[ROUTED_FLOP_RATE]
    else:
        r_flop = r_bytes
    message = group * t[H] * t[ACT_BYTES]
    t_tp = t[TP_LAYERS] * _time_s(t[TPAR_A1], t[TPAR_B1], t[TPAR_A2], t[TPAR_B2], message) + t[L_MOE] * moe_tp
    t_ep = t[L_MOE] * moe_ep
    t_pp = _time_s(t[PIPE_A1], t[PIPE_B1], t[PIPE_A2], t[PIPE_B2], message)
    return n_mb, nr_bytes, r_bytes, t_mem_nr, r_mem, t_flop_nr, r_flop, attn, t_tp, t_ep, t_pp, roof_nr


@_jit
def decode_cost_kernel(batch, decode_ctx, capacity_ctx, blocked, index, table, moe, any_tbo, any_k, usd_h_row, per_row,
                       feasible, wall, max_batch, tpot, tps_user, tps_gpu, usd_h, usd_out):
    """Decode step, capacity, status and cost of every row (see econ.engine.fused.decode_cost)."""
    for i in range(batch.shape[0]):
        t = table[index[i]]
        gh = usd_h_row[i] if per_row else t[USD_PER_GPU_HOUR]
        (f, w, mb, tp_, u, g, h, o) = decode_cost_row(batch[i], decode_ctx[i], capacity_ctx[i], blocked[i], t, moe,
                                                      any_tbo, any_k, gh)
        feasible[i] = f
        wall[i] = w
        max_batch[i] = mb
        tpot[i] = tp_
        tps_user[i] = u
        tps_gpu[i] = g
        usd_h[i] = h
        usd_out[i] = o


@_jit
def decode_cost_row(b, ctx, cap_ctx, blocked, t, moe, any_tbo, any_k, gh):
    """Decode step, capacity, status and cost of one row: ``t`` its combination's table row, ``gh`` its $/GPU-hour.

    Returns (feasible, binding-wall code, max_batch_size, tpot_s, tokens/s/user, output tokens/s/GPU, $/GPU-hour,
    $/M output tokens)."""
    # attended_tokens(decode context)
    main = (_minimum(ctx, t[TOPK]) if t[TOPK] > 0.0 else ctx)
    attended = t[L_G] * main + t[L_S] * _minimum(ctx, t[WINDOW])
    # kv_bytes_read_per_query(decode context), kv_bytes_per_sequence(capacity context) (core._kv_read, _kv_bytes)
    kv_dec = attended * t[KV_EL] * t[KV_BPE] + t[L_G] * ctx * t[IDX_BYTES]
    held = t[L_G] * cap_ctx + t[L_S] * _minimum(cap_ctx, t[WINDOW])  # held_tokens
    kv_cap = held * t[KV_EL] * t[KV_BPE] + t[L_G] * cap_ctx * t[IDX_BYTES]
    # decode_step
    (n_mb, nr_bytes, r_bytes, t_mem_nr, r_mem, t_flop_nr, r_flop, attn, t_tp, t_ep, t_pp,
     roof_nr) = _parts(1.0 + t[SPEC_K], b, ctx, kv_dec, attended, t, moe)
    t_mem = t_mem_nr + r_mem
    t_flop = t_flop_nr + r_flop
    t_comm = t_tp + t_ep + t_pp
    t_routed = r_mem + r_flop  # grouped_gemm_time_s
    roof = roof_nr + t_routed
    gap = t[GAP_GRAPH] if b / t[DP] <= t[GRAPH_MAX] else t[GAP_EAGER]  # launch_gap_s
    t_floor = t[KERNELS] * t[KERNEL_LAT] * (_KERNEL_FIXED + _KERNEL_GROWING * t[H] / _KERNEL_WIDTH)  # kernel_time_s
    t_launch = t[KERNELS] * gap
    tbo = t[TBO]
    passes = 1.0 + tbo
    compute = roof
    comm_run = t_comm
    if any_tbo and tbo > 0.0:  # two-batch overlap: the half batch's pass
        (_, _, _, _, h_r_mem, _, h_r_flop, _, h_t_tp, h_t_ep, h_t_pp,
         h_roof_nr) = _parts(1.0 + t[SPEC_K], b / 2.0, ctx, kv_dec, attended, t, moe)
        compute = 2.0 * (h_roof_nr + (h_r_mem + h_r_flop))
        comm_run = 2.0 * (h_t_tp + h_t_ep + h_t_pp)
    stage = t[STAGE]
    t_floor = passes * stage * t_floor
    t_launch = passes * stage * t_launch
    compute = stage * compute
    comm_run = stage * comm_run
    busy = compute + t_floor
    exposed = (busy + comm_run - t[OVERLAP] * _minimum(busy, comm_run)) - busy  # overlapped_time_s - busy
    cpu = n_mb * t[OVERHEAD] + t[SEQ_OVERHEAD] * b / t[DP]
    gpu = busy + exposed + t_launch + t[T_LAYERS] + t[T_MOE]
    cpu = _maximum(cpu - t[CPU_OVERLAP] * gpu, 0.0)  # exposed_cpu_time_s
    fixed = cpu + t_launch + t[T_LAYERS] + t[T_MOE]
    t_verify = busy + exposed + fixed
    t_draft = 0.0
    accepted = 1.0
    if any_k:  # speculative decoding: k MTP draft passes (_draft_pass_s), accepted_tokens_per_step
        k = t[SPEC_K]
        (_, _, _, _, o_r_mem, _, o_r_flop, _, o_t_tp, o_t_ep, _,
         o_roof_nr) = _parts(1.0, b, ctx, kv_dec, attended, t, moe)
        L = t[NUM_LAYERS]
        nr_layer = o_roof_nr / L
        r_layer = (o_r_mem + o_r_flop) / _maximum(t[L_MOE], 1.0)
        comm_layer = (1.0 - t[SINGLE_OVERLAP]) * (o_t_tp + o_t_ep) / L
        moe_on = _minimum(t[L_MOE], 1.0)
        per_kernel = t[KERNEL_LAT] * (_KERNEL_FIXED + _KERNEL_GROWING * t[H] / _KERNEL_WIDTH) + gap
        mtp = nr_layer + moe_on * (r_layer + t[MOE_LAYER_OVERHEAD]) + comm_layer + t[LAYER_OVERHEAD] \
            + t[MTP_KERNELS] * per_kernel
        t_draft = k * (mtp if t[SPEC_METHOD] == 1.0 else 0.0)
        a = t[SPEC_ACCEPTANCE]
        accepted = (1.0 - a ** (k + 1.0)) / (1.0 - a)
    step = t_verify + t_draft
    tp_ = step / accepted
    out_gpu = b / (tp_ * (t[TP] * t[DP] * t[PP]))
    code = 3 if exposed > compute else (2 if t_flop > t_mem else 1)
    # max_batch_size
    mb = np.floor(_maximum(t[FREE_HBM], 0.0) / (kv_cap * t[REPL]))
    # run_status (decode only: the prefill instance fits, no KV link)
    over = b > mb
    # costs_of: $/GPU-hour of the combination; usd_per_m_tokens(gh + 0, tokens/s/GPU x pool use 1)
    return ((not over) and (not blocked), 0 if over else code, mb, tp_, 1.0 / tp_, out_gpu, gh,
            (gh + 0.0) / (_SECONDS_PER_HOUR * (out_gpu * 1.0)) * _TOKENS_PER_M)
