"""Alpha-beta models of the collectives a deployment runs, per link tier.

t = latency terms (alpha, per hop) + bytes / link bandwidth (beta = 1/bandwidth). Bandwidths are per
accelerator, one direction (data/README.md). Scale-up = NVLink / Infinity Fabric / ICI inside one
domain; scale-out = InfiniBand / Ethernet NICs between domains (~8-9x slower; seeds 001, 002).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(slots=True)
class AlphaBeta:
    """A collective's time as a function of its message size: t(M) = min(a1 + b1 M, a2 + b2 M).

    Every alpha-beta collective here is affine in the bytes it moves, or the faster of two affine
    algorithms (ring vs tree all-reduce), so a deployment's collectives are computed once as
    coefficients and evaluated for each message (decode step, prefill chunk, lone prompt) at the cost
    of a multiply-add. Attributes are scalars or arrays: a [s], b [s/B].
    """

    a1: np.ndarray | float
    b1: np.ndarray | float
    a2: np.ndarray | float
    b2: np.ndarray | float

    def time_s(self, message_bytes):
        """t(M) [s] for message_bytes M [B] (scalar or array, broadcast with the coefficients)."""
        return np.minimum(self.a1 + self.b1 * message_bytes, self.a2 + self.b2 * message_bytes)


def _ring(num_participants, link_bandwidth_bytes_per_s, latency_s):
    steps = 2.0 * (num_participants - 1.0)
    return steps * latency_s, steps / num_participants / link_bandwidth_bytes_per_s


def _tree(num_participants, link_bandwidth_bytes_per_s, latency_s):
    n = np.asarray(num_participants, dtype=float)
    several = n > 1.0
    return (np.where(several, 2.0 * np.ceil(np.log2(np.maximum(n, 1.0))) * latency_s, 0.0),
            np.where(several, 2.0 / link_bandwidth_bytes_per_s, 0.0))


def allreduce_alpha_beta(num_participants, link_bandwidth_bytes_per_s, latency_s) -> AlphaBeta:
    """:class:`AlphaBeta` of :func:`allreduce_time_s` (ring and tree branches) on one link tier."""
    ra, rb = _ring(num_participants, link_bandwidth_bytes_per_s, latency_s)
    ta, tb = _tree(num_participants, link_bandwidth_bytes_per_s, latency_s)
    return AlphaBeta(ra, rb, ta, tb)


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
    a, b = _ring(num_participants, link_bandwidth_bytes_per_s, latency_s)
    return a + b * message_bytes


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
    a, b = _tree(num_participants, link_bandwidth_bytes_per_s, latency_s)
    return a + b * message_bytes


def allreduce_time_s(message_bytes, num_participants, link_bandwidth_bytes_per_s, latency_s):
    """All-reduce time: the faster of ring (large messages) and tree (small messages).

    Parameters and returns as :func:`ring_allreduce_time_s`. [s]
    """
    return allreduce_alpha_beta(num_participants, link_bandwidth_bytes_per_s, latency_s).time_s(message_bytes)


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


def mesh_bandwidth_share(group_inside, domain_size, scale_up_mesh):
    """Share of an accelerator's scale-up bandwidth a group of ``group_inside`` ranks of one domain can use.

    Parameters
    ----------
    group_inside : scalar or array, >= 1, ranks of the group inside one scale-up domain [accelerators]
    domain_size : scalar or array, >= 1 [accelerators per scale-up domain]
    scale_up_mesh : scalar or array, 1 for a direct full mesh (no switch), 0 for a switched domain [-]

    Returns
    -------
    scalar or array in (0, 1]: 1 on a switch; (g - 1) / (D - 1) on a full mesh of D accelerators.

    Notes
    -----
    A switch (NVSwitch) gives any pair the accelerator's whole link bandwidth. A direct full mesh splits each
    accelerator's links evenly over its D - 1 peers, so a group of g ranks reaches its g - 1 peers over
    (g - 1) / (D - 1) of them: AMD Instinct MI300X/MI325X/MI355X platforms (7 Infinity Fabric links, one per peer),
    Gaudi 3 HLS (3 ports per peer), NVIDIA's 4-GPU HGX H100 and H200 NVL 4-way bridge (18 NVLink 4 links, 6 per
    peer): a TP2 pair there moves its all-reduce over 1/3 of the NVLink bandwidth of the same GPUs on an
    NVSwitch board (data/accelerators.csv ``scale_up_topology``). Multi-ring collectives (NCCL/RCCL channels)
    use every link of the group, hence g - 1 links rather than a single ring's one: the best case. A point-to-point
    hop is one peer's link (``group_inside`` = 2). A group of one moves no bytes; its share is returned as one
    link's, never 0, so that no time divides by zero.

    Approximation: the all-reduce's low-latency branch (:func:`_tree`, 2 M / B) keeps the group's share too, an
    optimistic bound on a mesh, where a one-shot kernel reading every peer over its own link moves (D - 1) M / B. With
    that branch at one peer's link (a tree edge joins two ranks) the held-out median rose from 13.2% to 13.7% and CDNA
    4 FP4's from 19.3% to 25.1% (stop 33 refit), so the bound stays until a mesh all-reduce is measured on its own.
    """
    d = np.maximum(domain_size - 1.0, 1.0)
    share = np.minimum(np.maximum(group_inside - 1.0, 1.0) / d, 1.0)
    return np.where(np.asarray(scale_up_mesh) > 0.0, share, 1.0)


def domain_mesh(scale_up_mesh, layout_domain_size, hardware_domain_size):
    """1 where a layout's scale-up domain is the accelerator's own direct mesh, else 0. [-]

    Parameters
    ----------
    scale_up_mesh : scalar or array, the catalog's ``scale_up_mesh`` (1 = mesh) [-]
    layout_domain_size, hardware_domain_size : scalar or array, the domain the layout is placed in and the catalog's
        [accelerators]

    Notes
    -----
    A mesh's peer links are fixed by the board: each accelerator has D - 1 of them for the catalog's D. A layout that
    places the chip in another domain size (``scale_up_domain_size`` of a row: "the same chip on an 8- or a 72-GPU
    domain") describes another fabric, which this model takes as switched at the same per-accelerator bandwidth.
    """
    same = np.asarray(layout_domain_size, dtype=float) == np.asarray(hardware_domain_size, dtype=float)
    return np.where(same, scale_up_mesh, 0.0)


def hierarchical_allreduce_time_s(message_bytes, num_participants, domain_size, scale_up_bandwidth_bytes_per_s,
                                  scale_up_latency_s, scale_out_bandwidth_bytes_per_s, scale_out_latency_s,
                                  scale_up_mesh=0.0):
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
    scale_up_mesh : scalar or array, 1 = the domain is a direct full mesh (:func:`mesh_bandwidth_share`) [-]

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
    return hierarchical_allreduce_alpha_beta(num_participants, domain_size, scale_up_bandwidth_bytes_per_s,
                                             scale_up_latency_s, scale_out_bandwidth_bytes_per_s,
                                             scale_out_latency_s, scale_up_mesh).time_s(message_bytes)


def hierarchical_allreduce_alpha_beta(num_participants, domain_size, scale_up_bandwidth_bytes_per_s,
                                      scale_up_latency_s, scale_out_bandwidth_bytes_per_s,
                                      scale_out_latency_s, scale_up_mesh=0.0) -> AlphaBeta:
    """:class:`AlphaBeta` of :func:`hierarchical_allreduce_time_s`.

    Inside one domain it is :func:`allreduce_alpha_beta` on scale-up, on a full mesh at the group's share of the
    links (:func:`mesh_bandwidth_share`, whose notes state the approximation for the tree branch). Across domains,
    the intra-domain ring (affine in M) plus the inter-domain all-reduce of M / D (ring or tree, affine in M) is
    again the faster of two affine branches.
    """
    n = np.asarray(num_participants, dtype=float)
    inside = np.minimum(n, domain_size)
    scale_up_bandwidth_bytes_per_s = scale_up_bandwidth_bytes_per_s * mesh_bandwidth_share(inside, domain_size,
                                                                                           scale_up_mesh)
    flat = allreduce_alpha_beta(inside, scale_up_bandwidth_bytes_per_s, scale_up_latency_s)
    if not np.any(n > domain_size):  # no group leaves its domain: the inter-domain terms are all zero
        return flat
    ia, ib = _ring(inside, scale_up_bandwidth_bytes_per_s, scale_up_latency_s)
    domains = np.maximum(n / inside, 1.0)
    inter = allreduce_alpha_beta(domains, scale_out_bandwidth_bytes_per_s, scale_out_latency_s)
    s = np.minimum(np.maximum(n - domain_size, 0.0), 1.0)  # 1 iff n > D
    return AlphaBeta((1.0 - s) * flat.a1 + s * (ia + inter.a1), (1.0 - s) * flat.b1 + s * (ib + inter.b1 / inside),
                     (1.0 - s) * flat.a2 + s * (ia + inter.a2), (1.0 - s) * flat.b2 + s * (ib + inter.b2 / inside))


def alltoall_time_s(bytes_per_participant, num_participants, domain_size, scale_up_bandwidth_bytes_per_s,
                    scale_up_latency_s, scale_out_bandwidth_bytes_per_s, scale_out_latency_s, scale_up_mesh=0.0):
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
    scale_up_mesh : scalar or array, 1 = the domain is a direct full mesh (:func:`mesh_bandwidth_share`) [-]

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
    return alltoall_alpha_beta(num_participants, domain_size, scale_up_bandwidth_bytes_per_s, scale_up_latency_s,
                               scale_out_bandwidth_bytes_per_s, scale_out_latency_s,
                               scale_up_mesh).time_s(bytes_per_participant)


def alltoall_alpha_beta(num_participants, domain_size, scale_up_bandwidth_bytes_per_s, scale_up_latency_s,
                        scale_out_bandwidth_bytes_per_s, scale_out_latency_s, scale_up_mesh=0.0) -> AlphaBeta:
    """:class:`AlphaBeta` of :func:`alltoall_time_s` (one branch: both tiers run concurrently, the slower
    share decides, so t = alpha + S max(c_up, c_out) for S >= 0 bytes; on a full mesh the domain's peers are
    reached over the group's share of the links, :func:`mesh_bandwidth_share`)."""
    n = num_participants
    inside = np.minimum(n, domain_size)
    c_up = (inside - 1.0) / n / (scale_up_bandwidth_bytes_per_s * mesh_bandwidth_share(inside, domain_size,
                                                                                         scale_up_mesh))
    c_out = (n - inside) / n / scale_out_bandwidth_bytes_per_s
    alpha = tier_link(n, domain_size, scale_up_latency_s, scale_out_latency_s)
    several = np.minimum(np.maximum(n - 1.0, 0.0), 1.0)  # 0 for a single participant
    a, b = several * alpha, several * np.maximum(c_up, c_out)
    return AlphaBeta(a, b, a, b)


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
                          kernel_launch_latency_s=0.0, scale_up_mesh=0.0):
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
    scale_up_mesh : scalar or array, 1 = the domain is a direct full mesh (:func:`mesh_bandwidth_share`) [-]

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
    c = moe_comm_alpha_beta(tp=tp, dp=dp, ep=ep, domain_size=domain_size,
                            scale_up_bandwidth_bytes_per_s=scale_up_bandwidth_bytes_per_s,
                            scale_out_bandwidth_bytes_per_s=scale_out_bandwidth_bytes_per_s,
                            scale_up_latency_s=scale_up_latency_s, scale_out_latency_s=scale_out_latency_s,
                            alltoall_scale_up_latency_s=alltoall_scale_up_latency_s,
                            alltoall_scale_out_latency_s=alltoall_scale_out_latency_s, scale_up_mesh=scale_up_mesh)
    t_tp, t_ep = c.times_s(tokens_stage, tokens_group, hidden_size=hidden_size, experts_per_token=experts_per_token,
                           activation_bytes=activation_bytes, dispatch_activation_bytes=dispatch_activation_bytes,
                           combine_activation_bytes=combine_activation_bytes,
                           kernel_launch_latency_s=kernel_launch_latency_s)
    return {"t_ep_s": t_ep, "t_tp_s": t_tp}


@dataclass(slots=True)
class MoECollectives:
    """The collectives of one MoE layer of a tp x dp (x ep) stage as :class:`AlphaBeta` coefficients.

    Attributes
    ----------
    tp : all-reduce over the tp ranks of an attention group (scale-up)
    stage : all-reduce over all W = tp x dp ranks of the stage (ep = 1: tensor-parallel experts)
    expert_tp : all-reduce over the W / ep ranks each expert is split over
    alltoall : dispatch/combine all-to-all over W ranks (two tiers)
    tp, dp, ep : the layout [-]
    """

    tp_allreduce: AlphaBeta
    stage_allreduce: AlphaBeta
    expert_tp_allreduce: AlphaBeta
    alltoall: AlphaBeta
    tp: np.ndarray | float
    dp: np.ndarray | float
    ep: np.ndarray | float

    def times_s(self, tokens_stage, tokens_group, *, hidden_size, experts_per_token, activation_bytes=2.0,
                dispatch_activation_bytes=1.0, combine_activation_bytes=2.0, kernel_launch_latency_s=0.0):
        """(t_tp_s, t_ep_s) of one MoE layer, as :func:`moe_layer_comm_time_s`. [s]"""
        w = self.tp * self.dp
        etp = w / self.ep
        ep_on = indicator(self.ep - 1.0)
        per_rank = tokens_stage / w * experts_per_token * hidden_size
        a2a = self.alltoall
        t_a2a = 2.0 * a2a.a1 + a2a.b1 * per_rank * (dispatch_activation_bytes + combine_activation_bytes) \
            + 2.0 * kernel_launch_latency_s
        t_etp = self.expert_tp_allreduce.time_s(tokens_stage * experts_per_token / self.ep * hidden_size
                                                * activation_bytes) + indicator(etp - 1.0) * kernel_launch_latency_s
        t_tp_ep = self.tp_allreduce.time_s(tokens_group * hidden_size * activation_bytes)
        t_w = self.stage_allreduce.time_s(tokens_stage * hidden_size * activation_bytes)
        return ep_on * t_tp_ep + (1.0 - ep_on) * t_w, ep_on * (t_a2a + t_etp)


def moe_comm_alpha_beta(*, tp, dp, ep, domain_size, scale_up_bandwidth_bytes_per_s, scale_out_bandwidth_bytes_per_s,
                        scale_up_latency_s, scale_out_latency_s, alltoall_scale_up_latency_s=0.0,
                        alltoall_scale_out_latency_s=0.0, scale_up_mesh=0.0) -> MoECollectives:
    """:class:`MoECollectives` of a stage (the coefficients behind :func:`moe_layer_comm_time_s`; ``scale_up_mesh``
    as :func:`mesh_bandwidth_share`)."""
    links = dict(domain_size=domain_size, scale_up_bandwidth_bytes_per_s=scale_up_bandwidth_bytes_per_s,
                 scale_out_bandwidth_bytes_per_s=scale_out_bandwidth_bytes_per_s, scale_up_mesh=scale_up_mesh)
    ar = dict(links, scale_up_latency_s=scale_up_latency_s, scale_out_latency_s=scale_out_latency_s)
    w = tp * dp
    return MoECollectives(
        tp_allreduce=hierarchical_allreduce_alpha_beta(tp, **ar), stage_allreduce=hierarchical_allreduce_alpha_beta(w, **ar),
        expert_tp_allreduce=hierarchical_allreduce_alpha_beta(w / ep, **ar),
        alltoall=alltoall_alpha_beta(w, scale_up_latency_s=alltoall_scale_up_latency_s,
                                     scale_out_latency_s=alltoall_scale_out_latency_s, **links),
        tp=tp, dp=dp, ep=ep)


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
