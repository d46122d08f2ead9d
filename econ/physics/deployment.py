"""Deployment layouts: TP, EP, PP, DP and attention-DP, aggregated or disaggregated (xPyD).

What a layout is, which layouts a model and a system can take, how they are named and drawn, and
how the two pools of a disaggregated unit are sized. The physics of a layout is in
:mod:`econ.physics.performance` (step kernels) and :mod:`econ.engine` (the one orchestrator).

A *deployment instance* is ``num_gpus = tp x dp x pp`` accelerators serving one copy of the model
(:mod:`econ.physics.performance`, module docstring). Serving the request mix: a request needs ``input_len``
prefill tokens (less prefix-cache hits) and ``output_len`` decode steps.

- Aggregated: the same accelerators interleave prefill chunks with decode steps, so each decode step
  also pays for the prompts of the B / output_len requests that finish per step.
- Disaggregated (xPyD): ``x`` prefill instances (their own tp/dp/ep/pp) feed ``y`` decode instances;
  the KV cache of each prompt crosses between the pools. ``x`` and ``y`` are sized from the request
  rates of the two pools (:func:`size_pools`) or from an arrival rate.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.errors import InvalidInputError
from econ.physics.performance import pipeline_hops


def size_pools(prefill_requests_per_s, decode_requests_per_s, prefill_gpus, decode_gpus, *,
               arrival_rate_per_s=np.nan, prefill_instances=np.nan, decode_instances=np.nan, max_instances=16,
               tolerance_frac=0.03):
    """Instances per pool of an xPyD unit, and the request rate it serves.

    Parameters
    ----------
    prefill_requests_per_s, decode_requests_per_s : array, > 0: capacity of one instance [requests/s]
    prefill_gpus, decode_gpus : array, accelerators per instance [-]
    arrival_rate_per_s : array, NaN = none: pools are sized for the rate instead [requests/s]
    prefill_instances, decode_instances : array, NaN = search [-]
    max_instances : int, largest x and y searched [-]
    tolerance_frac : float, accelerators per served request the search gives up for a smaller unit [-]

    Returns
    -------
    dict of arrays: ``prefill_instances`` (x), ``decode_instances`` (y), ``served_requests_per_s``,
    ``utilization_frac`` (accelerator-time the served requests need over the unit's accelerators).

    Notes
    -----
    With an arrival rate: x = ceil(rate / prefill rate), y = ceil(rate / decode rate) (Little's law
    sizing, seed 001). Without one, candidates are y = k with x = ceil(k r_d / r_p) and x = k with
    y = ceil(k r_p / r_d), k = 1..max, both <= max (else x = y = max); the cost of a pair is accelerators per served request,
    (x N_p + y N_d) / min(x r_p, y r_d), and the smallest unit within ``tolerance_frac`` of the best
    cost wins. Explicit x / y win over both.
    """
    rp, rd = prefill_requests_per_s, decode_requests_per_s
    shape = np.broadcast(rp, rd, prefill_gpus, decode_gpus).shape
    rp_, rd_, pg, dg = (np.broadcast_to(v, shape)[None] for v in (rp, rd, prefill_gpus, decode_gpus))
    m = float(int(max_instances))
    k = np.arange(1.0, m + 1.0).reshape((-1,) + (1,) * len(shape))  # candidates on a leading axis, one pass
    kk = np.broadcast_to(k, (len(k),) + shape)
    # candidate order: for k = 1..max, (x from k decode instances, y = k), then (x = k, y from k prefill ones);
    # last, both pools at the cap (when every ratio needs more)
    xs = np.stack([np.maximum(np.ceil(k * rd_ / rp_ - 1e-9), 1.0), kk], axis=1).reshape((-1,) + shape)
    ys = np.stack([kk, np.maximum(np.ceil(k * rp_ / rd_ - 1e-9), 1.0)], axis=1).reshape((-1,) + shape)
    cap = np.full((1,) + shape, m)
    x_all, y_all = np.concatenate([xs, cap]), np.concatenate([ys, cap])
    allowed = (x_all <= m) & (y_all <= m)
    gpus_all = x_all * pg + y_all * dg
    cost = np.where(allowed, gpus_all / np.minimum(x_all * rp_, y_all * rd_), np.inf)
    cost[-1] = gpus_all[-1] / np.minimum(x_all[-1] * rp_[0], y_all[-1] * rd_[0])
    best = cost.min(axis=0)
    # the smallest unit within the tolerance of the best cost; ties: the first candidate in the order above
    within = np.where(cost <= best * (1.0 + tolerance_frac), gpus_all, np.inf)
    pick = np.argmin(within, axis=0)[None]
    none = ~np.isfinite(within.min(axis=0))  # no candidate (NaN rates): 1P1D, as a stand-in
    best_x = np.where(none, 1.0, np.take_along_axis(x_all, pick, axis=0)[0])
    best_y = np.where(none, 1.0, np.take_along_axis(y_all, pick, axis=0)[0])
    has_rate = ~np.isnan(arrival_rate_per_s)
    lam = np.where(has_rate, arrival_rate_per_s, 1.0)
    x = np.where(has_rate, np.ceil(lam / rp - 1e-9), best_x)
    y = np.where(has_rate, np.ceil(lam / rd - 1e-9), best_y)
    x = np.maximum(np.where(np.isnan(prefill_instances), x, prefill_instances), 1.0)
    y = np.maximum(np.where(np.isnan(decode_instances), y, decode_instances), 1.0)
    capacity = np.minimum(x * rp, y * rd)
    served = np.where(has_rate, np.minimum(lam, capacity), capacity)
    used = served / rp * prefill_gpus + served / rd * decode_gpus
    return {"prefill_instances": x, "decode_instances": y, "served_requests_per_s": served,
            "utilization_frac": used / (x * prefill_gpus + y * decode_gpus)}


def layout_label(tp: int, dp: int, ep: int, pp: int) -> str:
    """Human label of one instance layout: ``TP8``, ``TP4 PP2``, ``ADP32 EP32``, ``DP2 TP4`` (dense replicas).

    ADPn = n attention data-parallel groups (shown only when dp > 1; DPn for a model without experts,
    whose groups never talk); EPn shown when ep > 1; TPn shown when tp > 1 or nothing else is.
    """
    parts = []
    if dp > 1:
        parts.append(f"{'ADP' if ep > 1 else 'DP'}{dp}")
    if tp > 1 or (dp == 1 and ep == 1):
        parts.append(f"TP{tp}")
    if ep > 1:
        parts.append(f"EP{ep}")
    if pp > 1:
        parts.append(f"PP{pp}")
    return " ".join(parts)


def layout_labels(tp, dp, ep, pp, disagg=None, p_tp=None, p_dp=None, p_ep=None, p_pp=None, x=None,
                  y=None) -> pl.Series:
    """Labels of many deployments: :func:`layout_label`, or ``2P(TP8) 1D(ADP16 EP16)`` when disaggregated.

    With ``disagg`` and without x / y the label is the family, ``P(TP8) D(ADP16 EP16)``.

    Vectorized over arrays: each distinct instance layout is labelled once (a Python f-string) and
    broadcast back through a packed integer code; the xPyD labels are assembled by Polars string
    concatenation, so a million rows with a dozen layouts cost a dozen labels.
    """
    cols = [tp, dp, ep, pp] + ([disagg, p_tp, p_dp, p_ep, p_pp] if disagg is not None else []) \
        + ([x, y] if x is not None else [])
    shape = np.broadcast(*(np.asarray(c) for c in cols)).shape
    n = int(np.prod(shape)) if shape else 1

    def flat(v):
        return np.broadcast_to(np.asarray(v, dtype=float), shape).ravel()

    decode = _instance_labels(*(flat(v) for v in (tp, dp, ep, pp)))
    if disagg is None:
        return decode.alias("layout")
    dis = flat(disagg) > 0
    if not dis.any():
        return decode.alias("layout")
    pre = _instance_labels(*(flat(v) for v in (p_tp, p_dp, p_ep, p_pp)))
    frame = pl.DataFrame({"dis": dis, "d": decode, "p": pre})
    if x is not None:
        frame = frame.with_columns(x=pl.Series(flat(x).astype(np.int64)).cast(pl.String),
                                   y=pl.Series(flat(y).astype(np.int64)).cast(pl.String))
    else:
        frame = frame.with_columns(x=pl.lit(""), y=pl.lit(""))
    return frame.select(pl.when(pl.col("dis")).then(pl.concat_str(
        pl.col("x"), pl.lit("P("), pl.col("p"), pl.lit(") "), pl.col("y"), pl.lit("D("), pl.col("d"), pl.lit(")")))
        .otherwise(pl.col("d")).alias("layout"))["layout"] if n else decode.alias("layout")


def _instance_labels(tp, dp, ep, pp) -> pl.Series:
    """:func:`layout_label` of every row, computed once per distinct (tp, dp, ep, pp)."""
    n = tp.size
    if n <= 64:
        return pl.Series("layout", [layout_label(*r) for r in np.stack([tp, dp, ep, pp], 1).astype(np.int64).tolist()],
                         dtype=pl.String)
    b = 131072  # 17 bits each: tp, dp, ep, pp <= 65536
    code = pl.Series(((tp.astype(np.int64) * b + dp.astype(np.int64)) * b + ep.astype(np.int64)) * b
                     + pp.astype(np.int64))
    distinct = code.unique()
    d = distinct.to_numpy()
    labels = [layout_label(int(v // b ** 3), int(v // b ** 2 % b), int(v // b % b), int(v % b)) for v in d.tolist()]
    return code.replace_strict(distinct, pl.Series(labels, dtype=pl.String), return_dtype=pl.String).alias("layout")


def instance_layout(*, tp: int, dp: int, ep: int, pp: int, num_layers: int, num_experts: int,
                    scale_up_domain_size: int, max_gpus: int = 1024) -> pl.DataFrame:
    """Which accelerator of one instance holds what: one row per accelerator (the layout drawing's data).

    Parameters
    ----------
    tp, dp, ep, pp : int, the instance's parallelism (ep divides tp x dp)
    num_layers, num_experts : int, model facts (num_experts 0 = dense)
    scale_up_domain_size : int [accelerators]
    max_gpus : int, instances larger than this raise (a drawing of thousands of cells says nothing)

    Returns
    -------
    pl.DataFrame with ``gpu`` (rank 0..N-1), ``domain`` (scale-up domain index, contiguous placement),
    ``stage`` (pipeline stage), ``first_layer`` / ``last_layer``, ``attention_group`` (dp index),
    ``tp_rank``, ``ep_rank``, ``expert_tp_rank``, ``first_expert`` / ``last_expert`` (-1 for dense).

    Notes
    -----
    Rank order: stage-major, then attention group, then tensor rank (rank = (stage x dp + group) x tp +
    tp_rank); EP ranks are consecutive blocks of expert_tp = tp x dp / ep accelerators of a stage; each
    EP rank holds E / ep consecutive experts of every MoE layer of its stage; stages hold
    ceil(L / pp) consecutive layers (the last one the remainder).
    """
    n = tp * dp * pp
    if n > max_gpus:
        raise InvalidInputError(f"num_gpus={n} is outside [1, {max_gpus}] (accelerators drawn per instance)")
    rank = np.arange(n)
    w = tp * dp
    stage = rank // w
    within = rank % w
    etp = w // ep
    per_stage = -(-num_layers // pp)
    first_layer = np.minimum(stage * per_stage, num_layers - 1)
    last_layer = np.minimum((stage + 1) * per_stage, num_layers) - 1
    ep_rank = within // etp
    per_rank = num_experts // ep if num_experts else 0
    dense = num_experts == 0
    return pl.DataFrame({
        "gpu": rank, "domain": rank // scale_up_domain_size, "stage": stage, "first_layer": first_layer,
        "last_layer": last_layer, "attention_group": within // tp, "tp_rank": within % tp, "ep_rank": ep_rank,
        "expert_tp_rank": within % etp,
        "first_expert": np.full(n, -1) if dense else ep_rank * per_rank,
        "last_expert": np.full(n, -1) if dense else (ep_rank + 1) * per_rank - 1,
    })


def traffic_summary(*, tp: int, dp: int, ep: int, pp: int, scale_up_domain_size: int, total_gpus: int,
                    disaggregated: bool, t_comm_tp_s=None, t_comm_ep_s=None, t_comm_pp_s=None,
                    kv_transfer_s=None) -> pl.DataFrame:
    """Which links each collective of a deployment crosses, and its time per decode step.

    Returns
    -------
    pl.DataFrame, one row per collective: ``collective``, ``group_size`` [accelerators], ``link``
    ("scale-up", "scale-out" or "both"), ``scale_out_share_frac`` (share of its bytes on the NICs),
    ``time_per_step_s`` (None where not given).

    Notes
    -----
    Same placement rules as the kernels: a group on consecutive ranks stays on the scale-up tier when
    it fits in one domain (:func:`econ.physics.communication.tier_link`); the all-to-all of a W-rank stage sends
    (W - min(W, D)) / W of its bytes over scale-out (:func:`econ.physics.communication.alltoall_time_s`);
    pipeline hops between domains are scale-out (:func:`pipeline_hops`); the KV transfer leaves the
    domain unless both pools fit in one.
    """
    w, d = tp * dp, scale_up_domain_size
    hops_out, hops_in = pipeline_hops(pp, w, d)
    out_share = (w - min(w, d)) / w
    rows = [
        ("tensor-parallel all-reduce", tp, "scale-up" if tp <= d else "both", 0.0 if tp <= d else 1 - d / tp,
         t_comm_tp_s),
        ("expert all-to-all (dispatch + combine)", w if ep > 1 else 1,
         "scale-up" if out_share == 0 else "both", out_share if ep > 1 else 0.0, t_comm_ep_s),
        ("pipeline hops", pp, "scale-out" if hops_in == 0 and hops_out > 0 else "scale-up" if hops_out == 0 else "both",
         hops_out / max(pp - 1, 1), t_comm_pp_s),
        ("KV transfer prefill -> decode", total_gpus if disaggregated else 0,
         "scale-up" if total_gpus <= d else "scale-out", 0.0 if total_gpus <= d else 1.0,
         kv_transfer_s if disaggregated else None),
    ]
    keep = [r for r in rows if r[1] > 1 or (r[0].startswith("KV") and disaggregated)]
    return pl.DataFrame(keep, schema={"collective": pl.String, "group_size": pl.Int64, "link": pl.String,
                                      "scale_out_share_frac": pl.Float64, "time_per_step_s": pl.Float64},
                        orient="row")


def resolve_parallelism(num_gpus, scale_up_domain_size, num_attention_heads):
    """Default tensor x pipeline split of ``num_gpus``: TP as wide as the scale-up domain allows.

    Parameters
    ----------
    num_gpus, scale_up_domain_size, num_attention_heads : arrays of whole numbers >= 1

    Returns
    -------
    (tp, pp) arrays: tp = the largest power of two <= min(N, domain, heads) that divides N; pp = N / tp.
    """
    cap = np.minimum(np.minimum(num_gpus, scale_up_domain_size), num_attention_heads)
    tp = np.ones_like(np.asarray(num_gpus, dtype=float))
    for k in range(1, 11):  # powers of two up to 1024: 10 vector ops, not a loop over rows
        c = 2.0 ** k
        tp = np.where((c <= cap) & (np.mod(num_gpus, c) == 0), c, tp)
    return tp, num_gpus / tp


LAYOUT_RULES: tuple[str, ...] = (
    "num_gpus = tp x dp x pp", "tp <= attention heads", "tp divides the attention heads",
    "tp divides the KV heads or is a multiple of them", "tp <= scale-up domain", "tp <= KV heads (no replication)",
    "pp <= layers", "ep = 1 on a dense model", "ep divides the expert slots (routed + redundant)", "ep divides tp x dp",
    "batch_size >= dp",
)
"""The rules of :func:`layout_problems`, in the order they are checked (index = rule code)."""


def layout_problems(tp, dp, ep, pp, num_gpus, domain, num_attention_heads, kv_shard_heads, num_layers,
                    num_experts, *, kv_head_replication=True, batch_size=None, redundant_experts=0.0) -> np.ndarray:
    """Which rule of :data:`LAYOUT_RULES` each row breaks first (-1 = the layout is valid).

    Parameters
    ----------
    tp, dp, ep, pp, num_gpus : arrays of whole numbers [-]
    domain : array, scale-up domain size [accelerators]
    num_attention_heads, kv_shard_heads, num_layers, num_experts : arrays, model facts [-]
    kv_head_replication : bool, True: tp above the KV heads replicates them (vLLM, TensorRT-LLM)
    batch_size : array or None, sequences per instance (every attention-DP group needs one)
    redundant_experts : array or scalar, extra expert slots per MoE layer; ep divides E + redundant

    Returns
    -------
    ndarray of int8: the first broken rule per row, -1 where none is.

    Notes
    -----
    tp divides the heads and divides or is a multiple of the KV heads (vLLM's rule); tensor
    parallelism stays inside the scale-up domain (NVLink/ICI; seed 002); ep divides the routed
    experts and the tp x dp accelerators of a stage they are split over.
    """
    kvs = np.maximum(kv_shard_heads, 1.0)
    ok = [
        tp * dp * pp == num_gpus, tp <= num_attention_heads, np.mod(num_attention_heads, tp) == 0,
        (np.mod(kvs, tp) == 0) | (np.mod(tp, kvs) == 0), tp <= domain,
        (tp <= kvs) | kv_head_replication, pp <= num_layers, (num_experts > 0) | (ep == 1),
        (num_experts == 0) | (np.mod(num_experts + redundant_experts, ep) == 0), np.mod(tp * dp, ep) == 0,
        np.ones_like(tp, dtype=bool) if batch_size is None else batch_size >= dp,
    ]
    code = np.full(np.shape(tp), -1, dtype=np.int8)
    for k in range(len(ok) - 1, -1, -1):  # 11 vector ops; the first broken rule wins
        code = np.where(ok[k], code, np.int8(k))
    return code


def layout_problem_message(code: int, *, tp, dp, ep, pp, num_gpus, domain, num_attention_heads, kv_shard_heads,
                           num_layers, num_experts, model_id: str, batch_size=None, prefix: str = "",
                           redundant_experts=0.0) -> str:
    """The message of one broken rule (scalars of one row), naming the field, its value and the valid range."""
    f = prefix
    g = "{:g}".format
    msgs = {
        0: f"{f}num_gpus={g(num_gpus)} must equal tp x dp x pp = {g(tp)} x {g(dp)} x {g(pp)}",
        1: f"{f}tp={g(tp)} exceeds the {g(num_attention_heads)} attention heads of {model_id} "
           f"(valid: 1-{g(num_attention_heads)})",
        2: f"{f}tp={g(tp)} does not divide the {g(num_attention_heads)} attention heads of {model_id}",
        3: f"{f}tp={g(tp)} neither divides nor is a multiple of the {g(max(kv_shard_heads, 1))} KV heads of {model_id}",
        4: f"{f}tp={g(tp)} exceeds the scale-up domain of {g(domain)} accelerators (valid: 1-{g(domain)}; tensor "
           "parallelism stays inside NVLink/ICI; use pp or ep across domains)",
        5: f"{f}tp={g(tp)} exceeds the {g(kv_shard_heads)} KV heads of {model_id} and KV-head replication is off",
        6: f"{f}pp={g(pp)} exceeds the {g(num_layers)} layers of {model_id} (valid: 1-{g(num_layers)})",
        7: f"{f}ep={g(ep)} but {model_id} is dense (no routed experts; valid: ep=1)",
        8: f"{f}ep={g(ep)} does not divide the {g(num_experts)} routed experts of {model_id}"
           + (f" + {g(redundant_experts)} redundant" if redundant_experts else "")
           + f" (valid: a divisor of {g(num_experts + redundant_experts)} that divides tp x dp = {g(tp * dp)}; "
           "redundant_experts adds slots, e.g. DeepSeek's 256 + 32 on EP144)",
        9: f"{f}ep={g(ep)} does not divide tp x dp = {g(tp * dp)} (the experts of a stage are split over its "
           "tp x dp accelerators)",
        10: f"batch_size={g(batch_size) if batch_size is not None else '?'} is smaller than dp={g(dp)} (each "
            "attention data-parallel group needs at least one sequence)",
    }
    return msgs[int(code)]
