"""Alpha-beta models of the collectives a deployment runs, per link tier.

t = latency terms (alpha, per hop) + bytes / link bandwidth (beta = 1/bandwidth). Bandwidths are per
accelerator, one direction (data/README.md). Scale-up = NVLink / Infinity Fabric / ICI inside one
domain; scale-out = InfiniBand / Ethernet NICs between domains (~8-9x slower; seeds 001, 002).
"""

from __future__ import annotations

import numpy as np


def ring_allreduce_time_s(message_bytes, num_participants, link_bandwidth_bytes_per_s, latency_s):
    """Ring all-reduce time.

    Parameters
    ----------
    message_bytes : scalar or array [B]
        Size M of the buffer being reduced (per participant).
    num_participants : scalar or array, >= 1
    link_bandwidth_bytes_per_s : scalar or array [B/s]
    latency_s : scalar or array [s]
        Per-step latency alpha.

    Returns
    -------
    scalar or array [s]; 0 for one participant.

    Notes
    -----
    Each participant sends and receives 2(N-1)M/N bytes in 2(N-1) steps (Patarasuk & Yuan 2009;
    seed 001): t = 2(N-1) alpha + 2(N-1)/N * M / BW.
    """
    steps = 2.0 * (num_participants - 1.0)
    return steps * latency_s + steps / num_participants * message_bytes / link_bandwidth_bytes_per_s


def tree_allreduce_time_s(message_bytes, num_participants, link_bandwidth_bytes_per_s, latency_s):
    """Double-binary-tree all-reduce time (NCCL's choice for small messages at scale).

    Returns
    -------
    scalar or array [s]; 0 for one participant.

    Notes
    -----
    t = 2 ceil(log2 N) alpha + 2 M / BW (reduce up and broadcast down a tree; the two trees of
    NCCL's double binary tree each carry half the data at full bandwidth). Sanders et al. 2009;
    NCCL 2.4 release notes.
    """
    n = np.asarray(num_participants, dtype=float)
    one = n <= 1.0
    t = 2.0 * np.ceil(np.log2(np.maximum(n, 1.0))) * latency_s + 2.0 * message_bytes / link_bandwidth_bytes_per_s
    return np.where(one, 0.0, t)


def allreduce_time_s(message_bytes, num_participants, link_bandwidth_bytes_per_s, latency_s):
    """All-reduce time: the faster of ring (large messages) and tree (small messages).

    Parameters and returns as :func:`ring_allreduce_time_s`. [s]
    """
    ring = ring_allreduce_time_s(message_bytes, num_participants, link_bandwidth_bytes_per_s, latency_s)
    tree = tree_allreduce_time_s(message_bytes, num_participants, link_bandwidth_bytes_per_s, latency_s)
    return np.minimum(ring, tree)


def p2p_time_s(message_bytes, link_bandwidth_bytes_per_s, latency_s):
    """Point-to-point send (pipeline stage boundary): alpha + M / BW. [s]"""
    return latency_s + message_bytes / link_bandwidth_bytes_per_s


def tier_link(group_size, domain_size, scale_up_value, scale_out_value):
    """The scale-up value for a group that fits in one scale-up domain, else the scale-out value.

    Parameters
    ----------
    group_size, domain_size : scalar or array [accelerators]
        A group of consecutive accelerators stays on the scale-up tier iff it fits in one domain.
    scale_up_value, scale_out_value : scalar or array
        Any per-tier quantity (bandwidth [B/s], latency [s]).

    Returns
    -------
    scalar or array, of the tier the group's traffic crosses.

    Notes
    -----
    Placement is contiguous (ranks 0..g-1 of a group share a domain when g <= domain), which is how
    TensorRT-LLM, vLLM and SGLang map tp/ep ranks onto nodes (seed 002, "Two networks").
    """
    up = np.minimum(np.maximum(domain_size - group_size + 1.0, 0.0), 1.0)  # 1 iff group <= domain
    return up * scale_up_value + (1.0 - up) * scale_out_value


def hierarchical_allreduce_time_s(message_bytes, num_participants, domain_size, scale_up_bandwidth_bytes_per_s,
                                  scale_up_latency_s, scale_out_bandwidth_bytes_per_s, scale_out_latency_s):
    """All-reduce of a group that may span several scale-up domains: intra-domain, then across domains.

    Parameters
    ----------
    message_bytes : scalar or array [B]
        Size M of the buffer each participant reduces.
    num_participants : scalar or array, >= 1 [-]
    domain_size : scalar or array, >= 1 [accelerators per scale-up domain]
    scale_up_bandwidth_bytes_per_s, scale_out_bandwidth_bytes_per_s : scalar or array [B/s]
        Per accelerator, one direction.
    scale_up_latency_s, scale_out_latency_s : scalar or array [s]
        Per-step latency alpha of each tier.

    Returns
    -------
    scalar or array [s]. Equals :func:`allreduce_time_s` on the scale-up tier when the group fits in one
    domain (n <= D), so it can replace it everywhere.

    Notes
    -----
    n > D: reduce-scatter inside each domain (ring: (D-1) alpha + (D-1)/D M / BW_up), all-reduce of the
    M/D shard across the n/D domains on every NIC in parallel (the faster of ring and tree,
    :func:`allreduce_time_s`), then all-gather inside the domain (same as the reduce-scatter). The
    "ring within nodes, tree across nodes" scheme of seed 001 ("AllReduce overhead scaling"); NCCL's
    hierarchical/NVLS-tree algorithms follow the same split.
    """
    n = np.asarray(num_participants, dtype=float)
    inside = np.minimum(n, domain_size)
    flat = allreduce_time_s(message_bytes, inside, scale_up_bandwidth_bytes_per_s, scale_up_latency_s)
    # two intra-domain ring phases (reduce-scatter + all-gather) = one intra ring all-reduce
    intra = ring_allreduce_time_s(message_bytes, inside, scale_up_bandwidth_bytes_per_s, scale_up_latency_s)
    domains = np.maximum(n / inside, 1.0)
    inter = allreduce_time_s(message_bytes / inside, domains, scale_out_bandwidth_bytes_per_s, scale_out_latency_s)
    spans = np.minimum(np.maximum(n - domain_size, 0.0), 1.0)  # 1 iff n > D
    return (1.0 - spans) * flat + spans * (intra + inter)


def alltoall_time_s(bytes_per_participant, num_participants, domain_size, scale_up_bandwidth_bytes_per_s,
                    scale_up_latency_s, scale_out_bandwidth_bytes_per_s, scale_out_latency_s):
    """All-to-all (MoE dispatch or combine) among ``num_participants`` accelerators over two tiers.

    Parameters
    ----------
    bytes_per_participant : scalar or array [B]
        Bytes one participant scatters, spread uniformly over all n participants (itself included;
        the 1/n share addressed to itself never leaves the accelerator).
    num_participants : scalar or array, >= 1 [-]
    domain_size : scalar or array, >= 1 [accelerators per scale-up domain]
    scale_up_bandwidth_bytes_per_s, scale_out_bandwidth_bytes_per_s : scalar or array [B/s]
    scale_up_latency_s, scale_out_latency_s : scalar or array [s]
        Fixed latency of one all-to-all call on each tier (sends are issued in parallel, so it is paid
        once per call, not per peer).

    Returns
    -------
    scalar or array [s]; 0 for one participant.

    Notes
    -----
    With contiguous placement a participant has min(n, D) - 1 peers on its scale-up domain and
    n - min(n, D) beyond it. The two links run concurrently, so
    t = alpha_tier + max(S (min(n,D)-1)/n / BW_up, S (n - min(n,D))/n / BW_out), with alpha of the
    outermost tier crossed. This is why expert parallelism prefers one domain (seed 002, "Why MoE fits
    perfectly inside one rack"): past the domain, (n-D)/n of the traffic moves at scale-out speed,
    8-9x slower. DeepEP measures the same bottleneck: ~40-58 GB/s per H800 (its 400 Gb/s NIC) for
    internode EP16-64 vs ~153 GB/s over NVLink for EP8 (deepseek-ai/DeepEP README, "Performance").
    """
    n = num_participants
    inside = np.minimum(n, domain_size)
    t_up = bytes_per_participant * (inside - 1.0) / n / scale_up_bandwidth_bytes_per_s
    t_out = bytes_per_participant * (n - inside) / n / scale_out_bandwidth_bytes_per_s
    alpha = tier_link(n, domain_size, scale_up_latency_s, scale_out_latency_s)
    several = np.minimum(np.maximum(n - 1.0, 0.0), 1.0)  # 0 for a single participant
    return several * (alpha + np.maximum(t_up, t_out))


def communication_computation_ratio(t_comm_s, t_compute_per_gpu_s):
    """rho = T_comm(N) / (T_compute / N): above 1 the accelerators wait on the network.

    Parameters
    ----------
    t_comm_s : scalar or array [s]
    t_compute_per_gpu_s : scalar or array, > 0 [s]
        Compute time per accelerator between two synchronisations (T_compute / N).

    Returns
    -------
    scalar or array [-]. Seed 001, eq. 5 and Table 11 (7B data-parallel on 256 GPUs over IB NDR:
    560.4 ms / ~5 s = 0.11).
    """
    return t_comm_s / t_compute_per_gpu_s


def indicator(x):
    """1 where x >= 1, 0 where x <= 0 (for whole-number differences): a branch-free step for kernels.

    Returns
    -------
    scalar or array in [0, 1] = min(max(x, 0), 1).
    """
    return np.minimum(np.maximum(x, 0.0), 1.0)


def moe_layer_comm_time_s(tokens_stage, tokens_group, *, tp, dp, ep, hidden_size, experts_per_token,
                          domain_size, scale_up_bandwidth_bytes_per_s, scale_out_bandwidth_bytes_per_s,
                          scale_up_latency_s, scale_out_latency_s, activation_bytes=2.0,
                          dispatch_activation_bytes=1.0, combine_activation_bytes=2.0,
                          alltoall_scale_up_latency_s=0.0, alltoall_scale_out_latency_s=0.0,
                          kernel_launch_latency_s=0.0):
    """Communication of one MoE layer on one stage, for ep = 1 (tensor-parallel experts) or ep > 1.

    Parameters
    ----------
    tokens_stage : scalar or array, tokens of the whole stage (all dp groups) [tokens]
    tokens_group : scalar or array, tokens of one attention group (tokens_stage / dp) [tokens]
    tp, dp, ep : scalar or array, >= 1 [-]
    hidden_size, experts_per_token : scalar or array [-]
    domain_size : scalar or array [accelerators]
    scale_up_*, scale_out_* : per-accelerator bandwidth [B/s] and per-hop latency [s] of each tier
    activation_bytes, dispatch_activation_bytes, combine_activation_bytes : [B] per element
    alltoall_scale_up_latency_s, alltoall_scale_out_latency_s, kernel_launch_latency_s : [s]

    Returns
    -------
    dict of arrays [s]: ``t_ep_s`` (dispatch + combine + expert-TP all-reduce), ``t_tp_s`` (all-reduces
    of the tensor-parallel path; for ep = 1 the one over all W = tp x dp ranks).

    Notes
    -----
    ep = 1: every rank holds 1/W of every expert; the layer all-gathers the stage's tokens and
    reduce-scatters the output, an all-reduce of tokens_stage x d x b_a over W (hierarchical when W
    exceeds the domain). With dp = 1 this is the tensor-parallel FFN all-reduce of sweep.
    ep > 1: reduce-scatter + all-gather over tp (= one all-reduce) around an all-to-all over W in which
    each rank ships tokens_stage / W tokens to k experts (dispatch fp8, combine bf16; DESIGN.md
    "EP all-to-all"), plus an all-reduce of the expert group's k x tokens / ep outputs over its
    expert_tp = W / ep ranks.
    """
    w = tp * dp
    etp = w / ep
    ep_on = indicator(ep - 1.0)
    ar = dict(domain_size=domain_size, scale_up_bandwidth_bytes_per_s=scale_up_bandwidth_bytes_per_s,
              scale_up_latency_s=scale_up_latency_s, scale_out_bandwidth_bytes_per_s=scale_out_bandwidth_bytes_per_s,
              scale_out_latency_s=scale_out_latency_s)
    a2a = dict(domain_size=domain_size, scale_up_bandwidth_bytes_per_s=scale_up_bandwidth_bytes_per_s,
               scale_up_latency_s=alltoall_scale_up_latency_s,
               scale_out_bandwidth_bytes_per_s=scale_out_bandwidth_bytes_per_s,
               scale_out_latency_s=alltoall_scale_out_latency_s)
    per_rank = tokens_stage / w * experts_per_token * hidden_size
    t_a2a = (alltoall_time_s(per_rank * dispatch_activation_bytes, w, **a2a)
             + alltoall_time_s(per_rank * combine_activation_bytes, w, **a2a) + 2.0 * kernel_launch_latency_s)
    t_etp = hierarchical_allreduce_time_s(tokens_stage * experts_per_token / ep * hidden_size * activation_bytes,
                                          etp, **ar) + indicator(etp - 1.0) * kernel_launch_latency_s
    t_tp_ep = hierarchical_allreduce_time_s(tokens_group * hidden_size * activation_bytes, tp, **ar)
    t_w = hierarchical_allreduce_time_s(tokens_stage * hidden_size * activation_bytes, w, **ar)
    return {"t_ep_s": ep_on * (t_a2a + t_etp), "t_tp_s": ep_on * t_tp_ep + (1.0 - ep_on) * t_w}


def kv_transfer_time_s(kv_bytes, parallel_links, link_bandwidth_bytes_per_s, *, eta=1.0, latency_s=0.0):
    """Time to move one prompt's KV cache from a prefill instance to a decode instance.

    Parameters
    ----------
    kv_bytes : scalar or array, the prompt's KV cache (one copy) [B]
    parallel_links : scalar or array, >= 1: distinct KV shards sent concurrently (pp x min(tp, h_kv)
        on the slower side) [-]
    link_bandwidth_bytes_per_s : scalar or array, per accelerator [B/s]
    eta : scalar or array in (0, 1] [-]
    latency_s : scalar or array [s]

    Returns
    -------
    scalar or array [s] = latency + kv_bytes / (links x BW x eta).
    """
    return latency_s + kv_bytes / (parallel_links * link_bandwidth_bytes_per_s * eta)
