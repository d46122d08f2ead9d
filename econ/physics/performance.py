"""Roofline step times of decode and prefill on a deployment: walls, TPOT, TTFT, tokens/s.

A *deployment instance* is ``num_gpus = tp x dp x pp`` accelerators serving one copy of the model:

- ``pp`` pipeline stages, each of ``W = tp x dp`` accelerators holding ``L / pp`` layers;
- attention, dense FFNs, shared experts, norms, router and embeddings ("non-routed" weights) are
  split ``tp`` ways inside each of ``dp`` attention-data-parallel groups and replicated ``dp`` times;
  each group serves ``batch_size / dp`` of the sequences and holds their KV cache (split over its
  ``tp`` ranks, replicated when ``tp`` exceeds the KV heads: :func:`econ.physics.memory.kv_replication`);
- routed experts are split over all ``W`` accelerators of the stage: ``ep`` expert-parallel groups,
  each of ``expert_tp = W / ep`` ranks (TensorRT-LLM's ``moe_expert_parallel_size`` x
  ``moe_tensor_parallel_size``). ``dp > 1`` with ``ep = W`` and ``tp = 1`` is DeepSeek's attention-DP +
  EP (DeepSeek-V3 report, arXiv:2412.19437 sec. 3.4). For a dense model ``dp`` groups never talk: they
  are plain data-parallel replicas. ``dp = ep = 1`` is the plain tensor x pipeline deployment.

Per decode step (all ``pp`` micro-batches advance one token; ``n_mb = min(pp, B)`` micro-batches of
``m = B / n_mb`` sequences; a pipeline with fewer micro-batches than stages idles, the *bubble*
``1 - n_mb / pp``), per accelerator (DESIGN.md "Decode step", extended to dp, ep, pp and MoE kernels):

    t_mem  = [W_nr(m/dp) / tp + (m/dp) kv repl / tp] / (BW eta_bw)
    t_flop = (m/dp)(2 P_nr + attn peak / peak_attn) / tp / (peak eta_flop)
    r_mem  = W_routed,hot(m) / (BW eta_bw eta_routed_bw)
    r_flop = m 2 P_routed imb / W / (peak eta_flop eta_routed_flop w / (w + w_half))
    t_comm = L AR_tp(m/dp) + L_dense AR_tp(m/dp) + L_moe MoE(m) + pipeline hops
    TPOT   = max(t_mem, t_flop) + (r_mem + r_flop) + (1 - overlap) t_comm + overhead
             + kernels x (kernel_latency + launch gap)

The routed experts' grouped GEMM streams each touched expert's weights and multiplies on them without
overlapping the two (:func:`grouped_gemm_time_s`: a saturating efficiency in tokens per expert, half of
the compute roofline at :func:`grouped_gemm_half_saturation_tokens`), so small-batch decode is bound by
the experts' bytes while prefill and large batches (thousands of tokens per expert) run like dense GEMMs.

Pipeline stages add capacity, not bandwidth (seed 002): every accelerator still streams its stage's
weights once per micro-batch, so the step time at small batch is W / (tp x BW) whatever pp. The
routed-expert GEMMs are kernels of their own, so they get a roofline of their own, added to the rest
of the layer's (attention reading the KV cache does not overlap with the experts' GEMMs inside a
layer); attention scores (QK^T, PV) run at the KV-cache precision's peak (fp8 or bf16; there is no fp4
attention in production engines), never above the weights' peak. For a dense model (no routed
experts) with attention at the weights' precision every MoE term is exactly zero and the step is the
single roofline max(t_mem, t_flop). Collectives are alpha-beta models on the tier they cross
(:mod:`econ.physics.communication`). All functions are pure and broadcast over numpy arrays; the
orchestration (which arrays go in) is :mod:`econ.engine`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from econ.physics.architecture import attended_tokens, expected_experts_touched
from econ.physics.communication import (AlphaBeta, MoECollectives, domain_mesh, hierarchical_allreduce_alpha_beta,
                                indicator, mesh_bandwidth_share, moe_comm_alpha_beta)
from econ.physics.inputs import Efficiency, Formats, HardwareFacts, Layout, ModelFacts, Speculation

WALLS = ("capacity", "memory", "compute", "network")


def ridge_point_flop_per_byte(peak_flop_per_s, hbm_bandwidth_bytes_per_s):
    """Arithmetic intensity at which a kernel turns from memory- to compute-bound.

    Returns
    -------
    scalar or array [FLOP/B]. H100 bf16: 989e12 / 3.35e12 = 295.2 (seed 001, eq. 4).
    """
    return peak_flop_per_s / hbm_bandwidth_bytes_per_s


def non_routed_bytes_read(batch_per_microbatch, dense_params_read, embedding_params, lm_head_params, hidden_size,
                          weight_bytes_per_param, embedding_bytes_per_param=2.0, stream_input_embedding=False):
    """Non-routed weight bytes one decode step streams from HBM (one replica, one micro-batch).

    Parameters
    ----------
    batch_per_microbatch : scalar or array [sequences]
    dense_params_read : scalar or array
        Every non-routed weight multiplied per token, LM head included (architecture.py). [params]
    embedding_params, lm_head_params : scalar or array [params] (lm_head 0 = tied)
    hidden_size : scalar or array [-]
    weight_bytes_per_param, embedding_bytes_per_param : scalar or array [B]
    stream_input_embedding : bool
        Convention. False (default, physically faithful): an untied input table is gathered, B rows.
        True: the whole table is streamed, as the seeds count (Llama-3.1-8B bf16: 16.06 GB vs 15.01 GB).

    Returns
    -------
    scalar or array [B]: dense weights + LM head (+ the input-embedding rows gathered). Routed experts
    are :func:`routed_bytes_read_per_gpu`: only those the batch touches are read.
    """
    fixed, per_token = non_routed_bytes_terms(dense_params_read, embedding_params, lm_head_params, hidden_size,
                                              weight_bytes_per_param, embedding_bytes_per_param,
                                              stream_input_embedding)
    return fixed + per_token * batch_per_microbatch


def non_routed_bytes_terms(dense_params_read, embedding_params, lm_head_params, hidden_size, weight_bytes_per_param,
                           embedding_bytes_per_param=2.0, stream_input_embedding=False):
    """:func:`non_routed_bytes_read` as (bytes read whatever the batch, bytes per sequence of the micro-batch).

    Parameters and sources as :func:`non_routed_bytes_read` (the batch aside).

    Returns
    -------
    (fixed [B], per_sequence [B per sequence]): the dense weights and LM head (and the whole input table when
    ``stream_input_embedding``), and the input-embedding row an untied table gathers per sequence (0 when tied
    or streamed). Neither depends on the batch: :func:`decode_constants` computes them once per combination.
    """
    head = embedding_params  # the LM-head matmul reads V*d weights whether tied or not
    dense = (dense_params_read - head) * weight_bytes_per_param + head * embedding_bytes_per_param
    untied = np.minimum(lm_head_params, 1.0)
    if stream_input_embedding:
        return dense + untied * embedding_params * embedding_bytes_per_param, 0.0
    return dense, untied * hidden_size * embedding_bytes_per_param


def attention_peak_flop_per_s(weight_peak_flop_per_s, attention_operand_bytes, bf16_peak_flop_per_s,
                              fp8_peak_flop_per_s):
    """Peak the attention-score matmuls (QK^T, PV) run at: the KV-cache precision's, at most the weights'.

    Parameters
    ----------
    weight_peak_flop_per_s : array, dense peak at the weight precision [FLOP/s]
    attention_operand_bytes : array, width of the K and V operands the score matmuls multiply: 1 (fp8) or 2 (bf16)
        [B]; the KV-cache format's :data:`econ.physics.precision.KV_ATTENTION_PRECISION` (an int8 / int4 / mxfp4
        cache is dequantized to bf16, an nvfp4 cache to fp8), not its stored bytes
    bf16_peak_flop_per_s, fp8_peak_flop_per_s : array, accelerator peaks (fp8 NaN = no fp8 units) [FLOP/s]

    Returns
    -------
    array [FLOP/s]: fp8 peak for an fp8 cache (bf16 where the chip has no fp8 tensor cores), bf16 peak
    for a bf16 cache, capped at the weights' peak (bf16 weights with an fp8 cache attend at bf16).

    Notes
    -----
    Attention kernels read K and V in the cache's format and multiply in it or wider: TensorRT-LLM runs
    "FP8 KV cache and FP8 attention" with NVFP4 DeepSeek-R1 weights and BF16 attention in its
    latency recipe (TensorRT-LLM tech blogs 1 and 3, 2025); no production engine runs attention in fp4.
    Orchestration helper (uses np.where), not a pl.Expr kernel.
    """
    fp8 = np.where(np.isnan(fp8_peak_flop_per_s), bf16_peak_flop_per_s, fp8_peak_flop_per_s)
    kv_peak = np.where(attention_operand_bytes <= 1.0, fp8, bf16_peak_flop_per_s)
    out = np.minimum(kv_peak, weight_peak_flop_per_s)
    return np.where(np.isnan(out), weight_peak_flop_per_s, out)  # no bf16 figure: attention at the weights' peak


def attention_time_s(kv_bytes, attention_flop, exponentials, hbm_bandwidth_bytes_per_s, eta_bw,
                     attention_peak_flop_per_s, exp_per_s, eta_flop):
    """Time of the attention kernels: the slowest of reading the KV cache, the score and value matmuls, and the
    softmax exponentials on the special-function units.

    Parameters
    ----------
    kv_bytes : scalar or array, KV-cache bytes read from HBM (0 in prefill: tiles stay on chip) [B]
    attention_flop : scalar or array, QK^T and PV FLOPs [FLOP]
    exponentials : scalar or array, softmax exponentials, one per attention score [-]
    hbm_bandwidth_bytes_per_s, eta_bw : scalar or array [B/s], [-]
    attention_peak_flop_per_s : scalar or array, the attention matmuls' peak (KV-cache precision) [FLOP/s]
    exp_per_s : scalar or array, the accelerator's exponential throughput; inf = not modelled [1/s]
    eta_flop : scalar or array, achieved share of the binding unit's peak (eta_flop decode, eta_prefill prefill) [-]

    Returns
    -------
    scalar or array [s] = max(kv / (BW eta_bw), flop / (peak eta), exps / (exp rate eta)).

    Notes
    -----
    Attention is a kernel of its own, so its time adds to the GEMMs' (DESIGN.md's single max(t_mem, t_flop) is the
    special case where one of them is negligible). FlashAttention-3 overlaps the softmax with the MMAs
    (ping-pong and intra-warpgroup pipelining), so the slower unit binds: on H100 the exponentials take 50% of
    the matmul time at head dim 128 in BF16 (989 TFLOP/s vs 3.9 T exp/s; Shah et al., arXiv:2407.08608 sec. 3.2),
    on B200 as long as the matmuls (FlashAttention-4: tensor cores doubled, SFU count unchanged), and twice as
    long with FP8 matmuls, which is what Blackwell Ultra's doubled MUFU.EX2 rate buys back (NVIDIA, 2025-2026).
    """
    t_read = kv_bytes / (hbm_bandwidth_bytes_per_s * eta_bw)
    t_compute = np.maximum(attention_flop / attention_peak_flop_per_s, exponentials / exp_per_s) / eta_flop
    return np.maximum(t_read, t_compute)


def exp_rate_per_s(exp_per_s):
    """The accelerator's exponential rate for :func:`attention_time_s`: inf where not modelled (NaN). [1/s]"""
    return np.where(np.isnan(exp_per_s), np.inf, exp_per_s)


def causal_attended_tokens(prompt_tokens, num_global_layers, num_sliding_layers, sliding_window_tokens,
                           index_topk=0.0, prefix_tokens=0.0):
    """Sum over the new tokens' positions of the tokens each attends (causal), over all layers.

    Parameters
    ----------
    prompt_tokens : scalar or array [tokens], the tokens prefilled now (the new suffix of a cached prefix)
    num_global_layers, num_sliding_layers, sliding_window_tokens : model facts [layers], [tokens]
    index_topk : scalar or array, keys a sparse-attention indexer keeps per query (0 = dense) [tokens]
    prefix_tokens : scalar or array, >= 0 [tokens], a cached prefix already in the KV cache, attended but not
        prefilled (0 = a whole prompt)

    Returns
    -------
    scalar or array [token-pairs x layers]. Whole prompt (P = 0): L_global * S^2/2 + L_sliding * (min(S,w)^2/2 +
    max(S-w,0)*w); a top-k of k caps a global layer's pairs like a window: min(S,k)^2/2 + max(S-k,0)*k
    (DeepSeek-V3.2 DSA). After a prefix of P tokens, the new tokens at positions P..P+S attend: global S P + S^2/2;
    windowed (sliding layers, top-k) f(P + S) - f(P) with f the whole-prompt count above (DESIGN.md "Prefill";
    the one count of attended pairs: :func:`econ.physics.kv_tiers.prefill_flop` uses it).
    """
    s = prompt_tokens
    p = prefix_tokens

    def windowed(n, w_tokens):
        w = np.minimum(n, w_tokens)  # an infinite window (no sliding layers) counts nothing past the prompt
        return w * w / 2.0 + np.where(n > w_tokens, (n - w_tokens) * w_tokens, 0.0)

    if np.ndim(p) == 0 and p == 0:  # a whole prompt (the engine's default: no arithmetic on a zero prefix)
        glob = np.where(index_topk > 0, windowed(s, np.maximum(index_topk, 1.0)), s * s / 2.0)
        return num_global_layers * glob + num_sliding_layers * windowed(s, sliding_window_tokens)
    k = np.maximum(index_topk, 1.0)
    glob = np.where(index_topk > 0, windowed(p + s, k) - windowed(p, k), s * p + s * s / 2.0)
    return num_global_layers * glob + num_sliding_layers * (windowed(p + s, sliding_window_tokens)
                                                            - windowed(p, sliding_window_tokens))


def sweet_spot_batch_rule_of_thumb(peak_flop_per_s, hbm_bandwidth_bytes_per_s, total_params, active_params,
                                   weight_bytes_per_param=2.0):
    """The seeds' closed form for the batch where decode turns compute-bound (weights dominate bytes).

    Returns
    -------
    scalar or array [sequences]: B* = (peak / BW) * (P_total / P_active) * (b_w / 2) (DESIGN.md; seed 002,
    "B = 300 x inverse sparsity"). H100 bf16 dense: 295.2; DeepSeek-V3: 295.2 * 671/37 = 5,353.
    Uses bf16 peak with b_w/2; with the fp8 peak use b_w = 2 as well (fp8 doubles FLOP/s and halves bytes).
    """
    return ridge_point_flop_per_byte(peak_flop_per_s, hbm_bandwidth_bytes_per_s) * total_params / active_params * weight_bytes_per_param / 2.0


def crossover_batch(t_mem_of_batch, t_flop_of_batch, lo=1.0, hi=1e7, iterations=60):
    """Batch at which t_flop(B) = t_mem(B), by vectorized bisection in log B.

    Parameters
    ----------
    t_mem_of_batch, t_flop_of_batch : callables array -> array [s]
        Step times as functions of the batch (broadcasting over the configuration arrays).
    lo, hi : float [sequences]

    Returns
    -------
    ndarray [sequences]: the crossover (real-valued); ``inf`` where decode stays memory-bound up to
    ``hi`` (KV reads grow as fast as FLOPs, e.g. long contexts), ``lo`` where it is compute-bound at ``lo``.
    """
    f_lo = t_flop_of_batch(lo) - t_mem_of_batch(lo)
    f_hi = t_flop_of_batch(hi) - t_mem_of_batch(hi)
    shape = np.broadcast(f_lo, f_hi).shape
    a = np.full(shape, np.log(lo))
    b = np.full(shape, np.log(hi))
    for _ in range(iterations):
        mid = 0.5 * (a + b)
        f = t_flop_of_batch(np.exp(mid)) - t_mem_of_batch(np.exp(mid))
        right = f < 0  # still memory-bound: crossover is above mid
        a = np.where(right, mid, a)
        b = np.where(right, b, mid)
    out = np.exp(0.5 * (a + b))
    out = np.where(f_lo >= 0, lo, out)
    return np.where(f_hi < 0, np.inf, out)


def pipeline_hops(pp, stage_size, domain_size):
    """Pipeline stage boundaries inside and between scale-up domains.

    Parameters
    ----------
    pp : scalar or array, >= 1 [stages]
    stage_size : scalar or array, >= 1 [accelerators per stage, tp x dp]
    domain_size : scalar or array, >= 1 [accelerators per scale-up domain]

    Returns
    -------
    (hops_out, hops_in) : arrays [-], hops_out + hops_in = pp - 1.

    Notes
    -----
    Stages are placed contiguously: floor(D / W) whole stages share a domain (1 when W >= D), so a
    pipeline spans ceil(pp / stages_per_domain) domains and crosses ceil(...) - 1 domain boundaries.
    Point-to-point hops are what pipelines need across racks (seed 002, "Why pipeline fits cross-rack").
    """
    per_domain = np.maximum(np.floor(domain_size / stage_size), 1.0)
    hops_out = np.ceil(pp / per_domain) - 1.0
    return hops_out, pp - 1.0 - hops_out


def pipeline_bubble_frac(pp, num_microbatches):
    """Idle share of a decode pipeline that circulates ``num_microbatches`` micro-batches.

    Returns
    -------
    scalar or array [-] = 1 - min(n_mb, pp) / pp: with fewer micro-batches than stages, stages wait
    (seed 002, "The cost of pipeline: bubble"; "micro-batches (the train) amortize away the bubble").
    """
    return 1.0 - np.minimum(num_microbatches, pp) / pp


def pipeline_stage_imbalance(num_layers, pp):
    """Work of the busiest pipeline stage over the mean stage's: whole layers per stage. [-]

    Parameters
    ----------
    num_layers : scalar or array [layers]
    pp : scalar or array, >= 1 [stages]

    Returns
    -------
    scalar or array >= 1 = ceil(L / pp) / (L / pp); 1 for pp = 1 or pp dividing L.

    Notes
    -----
    Stages hold whole layers (vLLM get_pp_indices, TensorRT-LLM's layer split), so the stage with ceil(L / pp)
    layers sets the pace of every micro-batch slot: Llama-3.1-405B's 126 layers on 8 stages run at 16 / 15.75.
    """
    per = num_layers / pp
    return np.ceil(per - 1e-9) / per


def pipeline_microbatch_tokens(batch_size, num_microbatches, pp):
    """Sequences of the largest micro-batch, which paces the pipeline (the batch split as evenly as it goes). [-]

    Returns
    -------
    scalar or array [sequences]: ceil(B / n_mb) when pp > 1, else B (one micro-batch, possibly fractional).
    """
    even = batch_size / num_microbatches
    return np.where(pp > 1.0, np.ceil(even - 1e-9), even)


def routed_bytes_read_per_gpu(tokens, num_moe_layers, num_experts, experts_per_token, routed_expert_params,
                              weight_bytes_per_param, ep, expert_tp, imbalance=1.0, log_expert_miss=None):
    """Routed-expert weight bytes the busiest accelerator of a stage group streams for ``tokens``.

    Parameters
    ----------
    tokens : scalar or array, tokens routed together (all dp groups of the stage) [tokens]
    num_moe_layers, num_experts, experts_per_token, routed_expert_params : scalar or array
        Model facts (routed_expert_params: one expert of one layer). [layers], [-], [-], [params]
    weight_bytes_per_param : scalar or array [B]
    ep, expert_tp : scalar or array, >= 1 [-]
    imbalance : scalar or array, >= 1, busiest-rank load over the mean (used only when ep > 1) [-]
    log_expert_miss : scalar or array, optional, ln(1 - k/E) (the model fact ``log_expert_miss``; saves a
        logarithm per call, see :func:`econ.physics.architecture.expected_experts_touched`)

    Returns
    -------
    scalar or array [B], summed over all MoE layers (divide by pp for one stage). With ep = expert_tp = 1
    it is the replica's whole routed read, L_moe E_touched P_expert b_w (DESIGN.md "Decode step").

    Notes
    -----
    Each EP rank holds E/ep experts of every layer, each sliced expert_tp ways. Under uniform routing
    it touches E_touched(tokens)/ep of them (:func:`econ.physics.architecture.expected_experts_touched`);
    the busiest rank touches imbalance x that, never more than it holds.
    """
    imb = 1.0 + (imbalance - 1.0) * indicator(ep - 1.0)
    touched = expected_experts_touched(tokens, num_experts, experts_per_token, log_expert_miss)
    local = np.minimum(imb * touched / ep, num_experts / ep)
    return num_moe_layers * local * routed_expert_params * weight_bytes_per_param / expert_tp


@dataclass(slots=True)
class DecodeStep:
    """Result of :func:`decode_step` (arrays of the broadcast shape).

    Attributes
    ----------
    t_mem_s, t_flop_s : memory and compute time of the whole step, routed experts included [s]
    t_routed_s : the routed experts' grouped GEMM, bytes + FLOP time (:func:`grouped_gemm_time_s`) [s]; t_moe_overhead_s : L_moe x per-layer overhead [s]
    t_kernel_floor_s : the kernels' latency floors of the verify pass, kernels x ``kernel_latency_s`` x
        :func:`kernel_width_factor` (d) [s]
    t_launch_s : the idle gaps between its kernels, kernels x the launch gap (CUDA graph or eager) [s]
    two_batch_overlap : 1 where the step ran as two overlapped half-batches (:func:`two_batch_overlap_on`) [-]
    t_comm_s, t_comm_tp_s, t_comm_ep_s, t_comm_pp_s : communication, total and per kind [s]
    tpot_s : time per output token: step time / accepted tokens per step [s]
    num_microbatches, bubble_frac : pipeline micro-batches in flight and the idle share [-]
    step_flop : FLOPs of the step, whole instance [FLOP]
    arithmetic_intensity_flop_per_byte : step FLOPs over HBM bytes read [FLOP/B]
    tokens_per_s_per_user, output_tokens_per_s_per_gpu : [tokens/s]
    binding_wall_code : 1 memory, 2 compute, 3 network (index into :data:`WALLS`)
    step_s : one decode step (verify pass + drafts) [s]; draft_s : the drafts' share [s]
    accepted_tokens_per_step : output tokens per sequence per step (1 without speculation) [tokens]
    fixed_overhead_s : per-step overhead + launch gaps (+ any extra per-layer time) of the verify pass: the time no
        kernel works [s]
    """

    t_mem_s: np.ndarray
    t_flop_s: np.ndarray
    t_routed_s: np.ndarray
    t_moe_overhead_s: np.ndarray
    t_kernel_floor_s: np.ndarray
    t_launch_s: np.ndarray
    two_batch_overlap: np.ndarray
    t_comm_s: np.ndarray
    t_comm_tp_s: np.ndarray
    t_comm_ep_s: np.ndarray
    t_comm_pp_s: np.ndarray
    tpot_s: np.ndarray
    num_microbatches: np.ndarray
    bubble_frac: np.ndarray
    step_flop: np.ndarray
    arithmetic_intensity_flop_per_byte: np.ndarray
    tokens_per_s_per_user: np.ndarray
    output_tokens_per_s_per_gpu: np.ndarray
    binding_wall_code: np.ndarray
    step_s: np.ndarray
    draft_s: np.ndarray
    accepted_tokens_per_step: np.ndarray
    fixed_overhead_s: np.ndarray


@dataclass(slots=True)
class PrefillStep:
    """Result of :func:`prefill_step` (arrays of the broadcast shape).

    Attributes
    ----------
    time_s : time of the step; the TTFT of its prompts without queueing [s]
    prefill_flop : FLOPs of the step, whole instance [FLOP]
    t_mem_s, t_flop_s, t_comm_s : [s]
    input_tokens_per_s_per_gpu : prompt tokens per second per accelerator [tokens/s]
    t_attn_s : the attention kernels' share of ``time_s`` [s] (context parallelism splits it apart:
        :func:`econ.physics.long_context.ring_attention_prefill_s`)
    attention_flop : the step's attention FLOPs, whole instance (indexer included) [FLOP]
    """

    time_s: np.ndarray
    prefill_flop: np.ndarray
    t_mem_s: np.ndarray
    t_flop_s: np.ndarray
    t_comm_s: np.ndarray
    input_tokens_per_s_per_gpu: np.ndarray
    t_attn_s: np.ndarray | float = np.nan
    attention_flop: np.ndarray | float = np.nan


@dataclass(slots=True)
class Collectives:
    """The collectives of a deployment instance as alpha-beta coefficients (:class:`econ.physics.communication.AlphaBeta`),
    computed once per layout and evaluated for every message size (decode step, prefill chunk, lone prompt).

    Attributes
    ----------
    tp_allreduce : all-reduce over the tp ranks of an attention group (hierarchical if tp exceeds the domain)
    pipeline : the pp - 1 point-to-point hops of one micro-batch, between and inside scale-up domains
    moe : MoECollectives of one MoE layer (dispatch, combine, expert-TP and stage all-reduces)
    """

    tp_allreduce: AlphaBeta
    pipeline: AlphaBeta
    moe: MoECollectives


def peer_link_bytes_per_s(hardware: HardwareFacts, layout: Layout, mesh=None):
    """Scale-up bandwidth between two accelerators of one domain: a pipeline hand-off or a KV shard. [B/s]

    The whole per-accelerator bandwidth on a switch; one peer's link on the chip's own direct mesh
    (:func:`econ.physics.communication.domain_mesh`, :func:`econ.physics.communication.mesh_bandwidth_share` of a
    group of two). ``mesh``: that domain_mesh when the caller already has it. Shapes: broadcast of the bundles'
    arrays.
    """
    if mesh is None:
        mesh = domain_mesh(hardware.scale_up_mesh, layout.scale_up_domain_size, hardware.scale_up_domain_size)
    return hardware.scale_up_bandwidth_bytes_per_s * mesh_bandwidth_share(2.0, layout.scale_up_domain_size, mesh)


def collectives(hardware: HardwareFacts, layout: Layout, eff: Efficiency) -> Collectives:
    """:class:`Collectives` of ``layout`` on ``hardware`` with the latencies of ``eff``.

    Notes
    -----
    Alpha-beta models per tier (:mod:`econ.physics.communication`); pipeline hops: stages are contiguous, so
    only the hops between domains use scale-out (:func:`pipeline_hops`; seed 002). On a direct full-mesh domain
    (``hardware.scale_up_mesh``, at the catalog's own domain size: :func:`econ.physics.communication.domain_mesh`)
    each collective runs over its group's share of the links and a pipeline hop over one peer's
    (:func:`peer_link_bytes_per_s`).
    """
    mesh = domain_mesh(hardware.scale_up_mesh, layout.scale_up_domain_size, hardware.scale_up_domain_size)
    ar = dict(domain_size=layout.scale_up_domain_size,
              scale_up_bandwidth_bytes_per_s=hardware.scale_up_bandwidth_bytes_per_s,
              scale_out_bandwidth_bytes_per_s=hardware.scale_out_bandwidth_bytes_per_s,
              scale_up_latency_s=eff.scale_up_latency_s, scale_out_latency_s=eff.scale_out_latency_s,
              scale_up_mesh=mesh)
    hops_out, hops_in = pipeline_hops(layout.pp, layout.stage_gpus, layout.scale_up_domain_size)
    a = hops_out * eff.scale_out_latency_s + hops_in * eff.scale_up_latency_s
    b = hops_out / hardware.scale_out_bandwidth_bytes_per_s + hops_in / peer_link_bytes_per_s(hardware, layout, mesh)
    return Collectives(tp_allreduce=hierarchical_allreduce_alpha_beta(layout.tp, **ar), pipeline=AlphaBeta(a, b, a, b),
                       moe=moe_comm_alpha_beta(tp=layout.tp, dp=layout.dp, ep=layout.ep,
                                               alltoall_scale_up_latency_s=eff.alltoall_scale_up_latency_s,
                                               alltoall_scale_out_latency_s=eff.alltoall_scale_out_latency_s, **ar))


def two_batch_overlap_on(layout: Layout):
    """1 where an instance runs two-batch overlap, 0 where it runs each step as one batch.

    Parameters
    ----------
    layout : Layout; its ``two_batch_overlap`` (1, 0, or NaN = the default of its engine class)

    Returns
    -------
    array or scalar of 0.0 / 1.0 [-].

    Notes
    -----
    Default (NaN): on for wide expert parallelism, attention data parallelism with the experts spread over a stage
    wider than one scale-up domain (ep > 1, dp > 1, tp x dp > domain), where the all-to-all crosses the NICs: the
    layouts DeepSeek serves with two micro-batches (prefill EP32 on 4 nodes, decode EP144 on 18, open-infra-index
    day 6) and for which SGLang (--enable-two-batch-overlap, with DP attention and DeepEP) and vLLM (--enable-dbo,
    DP + EP only) ship it; off otherwise (tensor parallelism, and expert parallelism inside an NVLink domain:
    TensorRT-LLM documents no two-batch overlap, and SGLang and vLLM leave it off by default). Orchestration helper
    (np.where), not a pl.Expr kernel.
    """
    auto = indicator(layout.ep - 1.0) * indicator(layout.dp - 1.0) \
        * indicator(layout.tp * layout.dp - layout.scale_up_domain_size)
    given = layout.two_batch_overlap
    return np.where(np.isnan(given), auto, given)


def overlapped_time_s(compute_s, comm_s, overlap_frac):
    """Time of computation and communication of which the share ``overlap_frac`` of the shorter runs under the other.

    Parameters
    ----------
    compute_s, comm_s : scalar or array, >= 0 [s]
    overlap_frac : scalar or array in [0, 1] [-]

    Returns
    -------
    scalar or array [s] = compute + comm - overlap x min(compute, comm): their sum at 0, max(compute, comm) at 1.

    Notes
    -----
    Two-batch overlap runs micro-batch A's all-to-all while B computes and the reverse, so a step takes
    max(computation, communication) of the two halves when the overlap is perfect (DeepSeek-V3 report
    arXiv:2412.19437 sec. 3.4; AIConfigurator's overlap op: latency = max(sum group A, sum group B)); what is not
    hidden (pipeline fill, kernels contending for SMs) is the complement of ``overlap_frac``.
    """
    return compute_s + comm_s - overlap_frac * np.minimum(compute_s, comm_s)


def _moe_comm(comm: Collectives, tokens_stage, tokens_group, model: ModelFacts, eff: Efficiency):
    return comm.moe.times_s(tokens_stage, tokens_group, hidden_size=model.hidden_size,
                            experts_per_token=model.experts_per_token, activation_bytes=eff.activation_bytes,
                            dispatch_activation_bytes=eff.dispatch_activation_bytes,
                            combine_activation_bytes=eff.combine_activation_bytes,
                            kernel_launch_latency_s=eff.kernel_launch_latency_s)


def _routed_bytes(tokens, model: ModelFacts, formats: Formats, layout: Layout, eff: Efficiency):
    return routed_bytes_read_per_gpu(tokens, model.num_moe_layers, model.num_experts, model.experts_per_token,
                                     model.routed_expert_params, formats.expert_bytes, layout.ep,
                                     layout.expert_tp, eff.expert_imbalance_factor, model.log_expert_miss)


def accepted_tokens_per_step(acceptance, draft_tokens):
    """Expected tokens a speculative step emits per sequence: (1 - a^(k+1)) / (1 - a).

    Parameters
    ----------
    acceptance : scalar or array in [0, 1), a: chance each drafted token is accepted [-]
    draft_tokens : scalar or array of whole numbers >= 0, k: tokens drafted per step [tokens]

    Returns
    -------
    scalar or array [tokens/step], in [1, k + 1]: 1 for k = 0 (plain decoding).

    Notes
    -----
    Drafted tokens are accepted left to right until the first rejection, each with probability a
    (i.i.d.); the verify pass always yields one token of its own (the correction or the bonus token):
    E = sum_{i=0..k} a^i = (1 - a^(k+1)) / (1 - a) (Leviathan, Kalman & Matias, "Fast Inference from
    Transformers via Speculative Decoding", ICML 2023, arXiv:2211.17192, eq. 1). a = 0.8: k = 1 -> 1.8,
    k = 3 -> 2.952.
    """
    return (1.0 - acceptance ** (draft_tokens + 1.0)) / (1.0 - acceptance)


def grouped_gemm_padded_rows(tokens, touched_experts, tile_rows):
    """Rows a grouped GEMM computes: each touched expert's tokens rounded up to whole tiles.

    Parameters
    ----------
    tokens : scalar or array, token-expert assignments (tokens x k) [rows]
    touched_experts : scalar or array, > 0, experts that receive any [-]
    tile_rows : scalar or array, >= 1, rows of one tensor-core tile (M) [rows]

    Returns
    -------
    scalar or array [rows] >= tokens: touched x ceil(tokens / touched / tile) x tile.

    Notes
    -----
    A grouped (MoE) GEMM launches tiles of ``tile_rows`` rows per expert: an expert with 2 tokens still
    runs a 64-row WGMMA tile on Hopper (128 rows per UMMA on Blackwell), so the compute of small-batch
    decode is mostly padding, while prefill (thousands of tokens per expert) runs like a dense GEMM
    (CUTLASS grouped GEMM; DeepSeek DeepGEMM "m-grouped" kernels; TensorRT-LLM tech blog 3). With
    ``tile_rows`` <= 1 there is no padding (the expected rows, fractional, as computed).
    """
    per = tokens / np.maximum(touched_experts, 1e-30)
    return np.where(tile_rows > 1.0, touched_experts * np.ceil(per / tile_rows) * tile_rows, tokens)


def grouped_gemm_time_s(bytes_time_s, flop_time_s):
    """Time of the routed experts' grouped GEMM: weight streaming plus compute, not overlapped.

    Parameters
    ----------
    bytes_time_s : scalar or array, the touched experts' weight bytes / (BW eta_bw eta_routed_bw) [s]
    flop_time_s : scalar or array, their (tile-padded) FLOPs / (peak eta x eta_routed_flop_frac) [s]

    Returns
    -------
    scalar or array [s] = bytes_time_s + flop_time_s.

    Notes
    -----
    A fused MoE kernel loads each expert's weight tiles and multiplies the expert's tokens on them; with
    few tokens per expert the loads dominate, with thousands the tensor cores, and between the two the
    times add. As a fraction of the compute roofline the kernel then runs at n / (n + n_half), n = tokens
    per expert (:func:`grouped_gemm_half_saturation_tokens`): a saturating efficiency in arithmetic
    intensity instead of one flat factor. NVIDIA's measured fused-MoE latencies (AIConfigurator 0.12,
    data/kernels/moe_efficiency.csv, TensorRT-LLM EP8, balanced routing, 1-16,384 tokens) fit
    t = t0 + (t_mem^q + t_flop^q)^(1/q) with q = 1.0 +- 0.1 on H100/H200/B200/GB200 FP8 and FP8-block
    (benchmarks/fit_kernels.py), i.e. this sum; dense GEMMs keep the roofline max.
    """
    return bytes_time_s + flop_time_s


def grouped_gemm_width_efficiency(expert_width, half_width):
    """Share of its wide-expert compute efficiency a grouped GEMM keeps with experts ``expert_width`` wide.

    Parameters
    ----------
    expert_width : scalar or array, > 0, the expert's intermediate size on one rank (I / expert_tp) [columns]
    half_width : scalar or array, >= 0, ``Assumptions.moe_gemm_half_width`` [columns]; 0 = no effect

    Returns
    -------
    scalar or array in (0, 1]: width / (width + half_width).

    Notes
    -----
    A grouped GEMM computes output tiles of each expert; a narrow expert has few tiles per expert (N = 2 I for
    the gate/up projection, K = I for the down projection), so the kernel's waves fill the SMs less and
    its prologue/epilogue weigh more. NVIDIA's fused-MoE tables (AIConfigurator 0.12, TensorRT-LLM EP8,
    > 512 tokens per expert) put Qwen3-235B (I = 1536) at 0.53-0.81 of Mixtral-8x7B's (I = 14336) fraction of
    peak on H200/B200 (median 0.66, i.e. half_width ~900).
    """
    return expert_width / (expert_width + half_width)


def grouped_gemm_half_saturation_tokens(expert_peak_flop_per_s, eta_flop, hbm_bandwidth_bytes_per_s, eta_bw,
                                        expert_weight_bytes_per_param):
    """Tokens per expert at which the grouped GEMM reaches half of its compute roofline (no tile padding).

    Parameters
    ----------
    expert_peak_flop_per_s : scalar or array, the experts' matmul peak [FLOP/s]
    eta_flop : scalar or array, the grouped GEMM's compute efficiency (eta_flop or eta_prefill x
        eta_routed_flop_frac) [-]
    hbm_bandwidth_bytes_per_s, eta_bw : scalar or array [B/s], [-]
    expert_weight_bytes_per_param : scalar or array [B]

    Returns
    -------
    scalar or array [tokens per expert]: n_half = eta_flop peak b_w / (2 eta_bw BW), where the bytes and
    FLOP times of :func:`grouped_gemm_time_s` are equal (2 FLOPs per weight per token). H100 FP8 at
    eta_flop 0.9, eta_bw 0.85: 0.9 x 1979e12 x 1 / (2 x 0.85 x 3.35e12) = 313 tokens per expert, where
    the AIConfigurator EP8 FP8 curve sits at 0.32 of peak for 64-512 tokens per expert and 0.61 above 512.
    """
    return eta_flop * expert_peak_flop_per_s * expert_weight_bytes_per_param / (
        2.0 * eta_bw * hbm_bandwidth_bytes_per_s)


def launch_gap_s(batch_per_group, cuda_graph_max_batch, graph_gap_s, eager_gap_s):
    """Idle time before each kernel of a decode pass: the CUDA-graph gap up to the capture cap, else the eager one.

    Parameters
    ----------
    batch_per_group : scalar or array, sequences per attention group [sequences]
    cuda_graph_max_batch : scalar or array, largest batch captured as a CUDA graph (0 = none) [sequences]
    graph_gap_s, eager_gap_s : scalar or array, ``kernel_launch_s`` / ``kernel_launch_eager_s`` [s]

    Returns
    -------
    scalar or array [s].

    Notes
    -----
    Decode engines capture their forward pass as CUDA graphs for batches up to a cap and replay them (one launch
    for the whole graph; ~1.3 us between kernels inside it, Hazy Research 2025); larger batches and prefill
    launch every kernel from the CPU (4-6 us each). Orchestration helper (np.where), not a pl.Expr kernel.
    """
    return np.where(batch_per_group <= cuda_graph_max_batch, graph_gap_s, eager_gap_s)


KERNEL_REFERENCE_WIDTH = 4096.0
"""Model width d at which ``Assumptions.kernel_latency_s`` is stated (a Llama-3.1-8B layer). [-]"""

KERNEL_WIDTH_INDEPENDENT_SHARE = 0.70
"""Share of a decode kernel's latency floor at d = 4096 that does not grow with the model width: a kernel's floor is
``kernel_latency_s x (s + (1 - s) d / 4096)`` (:func:`kernel_width_factor`). Source: NVIDIA's per-kernel GEMM tables
for TensorRT-LLM (AIConfigurator 0.12, data/kernels/gemm_efficiency.csv, rows with m <= 4 tokens), fitted per
accelerator and weight format as latency - weight bytes / HBM bandwidth = a0 + a1 K / 4096: the share
a0 / (a0 + a1) is 0.33-0.56 for BF16, 0.53-0.57 for NVFP4, 0.69-0.77 for FP8-block and 0.84-0.88 for FP8 on H100,
H200, B200, GB200, B300 and GB300; 0.70 is the median of those 22 fits (tests/physics/test_kernel_floor.py
recomputes it). The decode attention kernel is flatter still: 8-11 us at one sequence and 1,024 tokens whatever
the model (data/kernels/attention_efficiency.csv). [-]"""


def kernel_width_factor(hidden_size):
    """How a kernel's latency floor scales with the model width d, relative to d = 4096.

    Parameters
    ----------
    hidden_size : scalar or array, model width d [-]

    Returns
    -------
    scalar or array [-]: ``s + (1 - s) d / 4096`` with s = :data:`KERNEL_WIDTH_INDEPENDENT_SHARE` (1 at d = 4096).
    """
    s = KERNEL_WIDTH_INDEPENDENT_SHARE
    return s + (1.0 - s) * hidden_size / KERNEL_REFERENCE_WIDTH


def kernel_time_s(kernels, hidden_size, kernel_latency_s, launch_gap):
    """Fixed time of a pass of ``kernels`` kernels of a model ``hidden_size`` wide: (latency floors, idle gaps).

    Parameters
    ----------
    kernels : scalar or array, kernels the pass launches (``forward_kernels``) [kernels]
    hidden_size : scalar or array, model width d (the reduction depth K of most of a layer's GEMMs) [-]
    kernel_latency_s : scalar or array, each kernel's time beyond its roofline at d = 4096 [s]
    launch_gap : scalar or array, idle time before each kernel (:func:`launch_gap_s`) [s]

    Returns
    -------
    (floor, launch) : scalar or array [s] each: kernels x kernel_latency_s x :func:`kernel_width_factor` (d),
    kernels x launch_gap.

    Notes
    -----
    A kernel's time is alpha + beta x bytes (or FLOPs): the roofline terms of a step carry the betas, this carries
    the alphas, so a small model at batch 1 pays for its kernel count and a large one for its bytes (issue 17:
    overheads that scale with their cause). A decode GEMM with a few rows is latency-bound: NVIDIA's per-kernel
    tables (AIConfigurator 0.12, data/kernels/gemm_efficiency.csv, m <= 4, fitted as a0 + a1 K / 4096 + bytes / BW)
    give a0 = 6.2-6.8 us and a1 = 5.0-5.7 us for NVFP4 GEMMs on B200/GB200/B300/GB300, a0 = 4.8-5.6 and a1 = 1.5-2.3
    for FP8-block: most of the floor is there whatever the reduction depth K, the rest grows with it. The floor is
    therefore affine in d (the K of the projections out of the residual stream), with the width-independent share
    :data:`KERNEL_WIDTH_INDEPENDENT_SHARE` of those fits. Until stop 37 it was proportional to d, which made
    gpt-oss-120b's batch-1 kernels (d = 2,880) 2.5 times shorter than DeepSeek-R1's (d = 7,168) per kernel, where
    NVIDIA's measured per-operator latencies at one token differ by 1.2-2.3 times (data/kernels/: attention 11 vs
    13 us, fused MoE 19 vs 44 us on B200).
    """
    return kernels * kernel_latency_s * kernel_width_factor(hidden_size), kernels * launch_gap


@dataclass(slots=True)
class DecodeConstants:
    """The terms of :func:`decode_step` that depend on neither the batch nor the context: functions of the model,
    accelerator, formats, efficiencies and layout alone (:func:`decode_constants`). The engine computes them once per
    distinct combination of a block and broadcasts them (issue 20.2); arrays of the rows' shape or scalars.

    Attributes
    ----------
    bw_eta : [B/s] HBM bandwidth x eta_bw; routed_bw : [B/s] bw_eta x eta_routed_bw_frac
    peak_eta : [FLOP/s] the weights' peak x eta_flop; attn_peak_eta : [FLOP/s] the attention peak x eta_flop
    routed_flop_rate : [FLOP/s] expert peak x eta_flop x eta_routed_flop_frac x :func:`grouped_gemm_width_efficiency`
    imb : [-] busiest-rank expert load over the mean (1 without expert parallelism)
    nr_fixed_bytes, nr_token_bytes : [B], [B per sequence] :func:`non_routed_bytes_terms`
    nr_active, r_active : [params] non-routed and routed weights multiplied per token
    indexer_scale : [FLOP per pair] :func:`indexer_flop_scale`
    exp_rate : [1/s] :func:`exp_rate_per_s`
    tp_layers : [-] tensor-parallel all-reduces per step outside the MoE layers, 2 L - L_moe
    tbo : [-] :func:`two_batch_overlap_on`; overlap : [-] the overlap share of that mode
    stage : [-] :func:`pipeline_stage_imbalance`
    t_moe_s, t_layers_s : [s] L_moe x moe_layer_overhead_s and L x layer_overhead_s
    """

    bw_eta: np.ndarray | float
    routed_bw: np.ndarray | float
    peak_eta: np.ndarray | float
    attn_peak_eta: np.ndarray | float
    routed_flop_rate: np.ndarray | float
    imb: np.ndarray | float
    nr_fixed_bytes: np.ndarray | float
    nr_token_bytes: np.ndarray | float
    nr_active: np.ndarray | float
    r_active: np.ndarray | float
    indexer_scale: np.ndarray | float
    exp_rate: np.ndarray | float
    tp_layers: np.ndarray | float
    tbo: np.ndarray | float
    overlap: np.ndarray | float
    stage: np.ndarray | float
    t_moe_s: np.ndarray | float
    t_layers_s: np.ndarray | float


def decode_constants(model: ModelFacts, hardware: HardwareFacts, layout: Layout, formats: Formats, eff: Efficiency,
                     stream_input_embedding=False) -> DecodeConstants:
    """:class:`DecodeConstants` of each row (the formulas of :func:`decode_step` that do not involve the batch).

    Parameters
    ----------
    model, hardware, layout, formats, eff : bundles of :mod:`econ.physics.inputs` (broadcastable arrays)
    stream_input_embedding : bool, see :func:`non_routed_bytes_read`

    Returns
    -------
    DecodeConstants (units there). Sources: the module docstring and the functions named in its attributes.
    """
    bw_eta = hardware.hbm_bandwidth_bytes_per_s * eff.eta_bw
    fixed, per_token = non_routed_bytes_terms(model.dense_params_read, model.embedding_params, model.lm_head_params,
                                              model.hidden_size, formats.weight_bytes_per_param,
                                              formats.embedding_bytes_per_param, stream_input_embedding)
    tbo = two_batch_overlap_on(layout)
    return DecodeConstants(
        bw_eta=bw_eta, routed_bw=bw_eta * eff.eta_routed_bw_frac, peak_eta=formats.peak_flop_per_s * eff.eta_flop,
        attn_peak_eta=formats.attention_peak_flop_per_s * eff.eta_flop,
        routed_flop_rate=(formats.expert_peak * eff.eta_flop * eff.eta_routed_flop_frac
                          * _routed_width_efficiency(model, layout, eff)),
        imb=1.0 + (eff.expert_imbalance_factor - 1.0) * indicator(layout.ep - 1.0),
        nr_fixed_bytes=fixed, nr_token_bytes=per_token, nr_active=model.non_routed_active_params,
        r_active=model.routed_active_params, indexer_scale=indexer_flop_scale(model, hardware, formats),
        exp_rate=exp_rate_per_s(hardware.exp_per_s), tp_layers=2.0 * model.num_layers - model.num_moe_layers,
        tbo=tbo, overlap=np.where(tbo > 0, eff.overlap_frac, eff.single_batch_overlap_frac),
        stage=pipeline_stage_imbalance(model.num_layers, layout.pp),
        t_moe_s=model.num_moe_layers * eff.moe_layer_overhead_s, t_layers_s=model.num_layers * eff.layer_overhead_s)


@dataclass(slots=True)
class PrefillConstants:
    """The terms of :func:`prefill_step` that depend on neither the prompt nor the prompts per step: functions of the
    model, accelerator, formats, efficiencies and (prefill) layout alone (:func:`prefill_constants`). The engine
    computes them once per distinct combination of a block and broadcasts them (issue 20.2), as
    :class:`DecodeConstants` for decode.

    Attributes
    ----------
    step : DecodeConstants of the prefill instance with the prefill MFU ``eta_prefill`` in place of ``eta_flop``
        (``peak_eta``, ``attn_peak_eta`` and ``routed_flop_rate`` at eta_prefill; the byte, indexer, exponential,
        collective-count, two-batch-overlap and per-layer terms as decode's)
    sm_share : [-] share of the SMs the kernels run on: 1 - ``comm_sm_frac`` under two-batch overlap, else 1
    kernels_s : [s] (1 + two-batch overlap) x the pass's kernel floors and eager launch gaps (:func:`kernel_time_s`)
    """

    step: DecodeConstants
    sm_share: np.ndarray | float
    kernels_s: np.ndarray | float


def prefill_constants(model: ModelFacts, hardware: HardwareFacts, layout: Layout, formats: Formats, eff: Efficiency,
                      stream_input_embedding=False) -> PrefillConstants:
    """:class:`PrefillConstants` of each row (the formulas of :func:`prefill_step` that involve no prompt).

    Parameters
    ----------
    model, hardware, layout, formats, eff : bundles of :mod:`econ.physics.inputs` (broadcastable arrays); ``layout``
        is the prefill instance's
    stream_input_embedding : bool, see :func:`non_routed_bytes_read`

    Returns
    -------
    PrefillConstants (units there). Sources: :func:`prefill_step`'s Notes and :func:`decode_constants` (the shared
    terms are computed there, one home per formula).
    """
    step = decode_constants(model, hardware, layout, formats, replace(eff, eta_flop=eff.eta_prefill),
                            stream_input_embedding)
    tbo = step.tbo
    floor, launch = kernel_time_s(model.forward_kernels, model.hidden_size, eff.kernel_latency_s,
                                  eff.kernel_launch_eager_s)
    # under two-batch overlap the all-to-all kernels of one micro-batch hold comm_sm_frac of the SMs while the other
    # computes (DeepEP's normal kernels: 24 of an H800's 132 SMs), so the kernels run on the rest
    return PrefillConstants(step=step, sm_share=np.where(tbo > 0, 1.0 - eff.comm_sm_frac, 1.0),
                            kernels_s=(1.0 + tbo) * (floor + launch))


def _step_parts(tokens_per_seq, batch_size, context_tokens, kv_bytes_per_sequence, kv_replication, model, hardware,
                layout, formats, eff, stream_input_embedding, comm, const: DecodeConstants):
    """One forward pass of ``batch_size`` sequences x ``tokens_per_seq`` tokens: roofline pieces (dict)."""
    tp, dp, pp = layout.tp, layout.dp, layout.pp
    w = tp * dp
    n_mb = np.minimum(pp, batch_size)
    m = pipeline_microbatch_tokens(batch_size, n_mb, pp) * tokens_per_seq  # tokens of the largest micro-batch
    group = m / dp
    imb = const.imb
    nr_bytes = const.nr_fixed_bytes + const.nr_token_bytes * group  # non_routed_bytes_read of the group
    moe = bool(np.any(model.num_moe_layers))  # False: dense rows only, every routed term is 0 (not computed)
    if moe:
        r_bytes = _routed_bytes(m, model, formats, layout, eff)
        moe_tp, moe_ep = _moe_comm(comm, m, group, model, eff)
    else:
        r_bytes = moe_tp = moe_ep = np.zeros(np.shape(m))
    kv_read = group * kv_bytes_per_sequence * kv_replication / tp  # each verified token reads the cache
    t_mem_w = nr_bytes / tp / const.bw_eta
    r_mem = r_bytes / const.routed_bw
    attended = attended_tokens(context_tokens, model.num_global_layers, model.num_sliding_layers,
                               model.sliding_window_tokens, model.index_topk)
    main = attended * model.attention_flop_per_context_token_decode
    attn = main + model.num_global_layers * context_tokens * model.indexer_flop_per_context_token  # FLOPs, as counted
    attn_t = main + const.indexer_scale * context_tokens  # at the attention peak (indexer_flop_at_attention_peak)
    t_flop_w = group * 2.0 * const.nr_active / tp / const.peak_eta
    # attention_time_s with the bandwidth already times eta_bw (x 1.0: the same value)
    t_attn = attention_time_s(kv_read, group * attn_t / tp, group * model.num_attention_heads * attended / tp,
                              const.bw_eta, 1.0, formats.attention_peak_flop_per_s, const.exp_rate, eff.eta_flop)
    t_mem_nr = t_mem_w + kv_read / const.bw_eta  # the memory and compute sides, as reported
    t_flop_nr = t_flop_w + group * attn_t / tp / const.attn_peak_eta
    roof_nr = np.maximum(t_mem_w, t_flop_w) + t_attn  # GEMMs, then attention: kernels of their own
    r_flop = _routed_flop(m, model, layout, eff) / const.routed_flop_rate if moe else r_bytes
    message = group * model.hidden_size * eff.activation_bytes
    t_tp = const.tp_layers * comm.tp_allreduce.time_s(message) + model.num_moe_layers * moe_tp
    t_ep = model.num_moe_layers * moe_ep
    t_pp = comm.pipeline.time_s(message)
    return dict(n_mb=n_mb, m=m, group=group, nr_bytes=nr_bytes, r_bytes=r_bytes, t_mem_nr=t_mem_nr, r_mem=r_mem,
                t_flop_nr=t_flop_nr, r_flop=r_flop, attn=attn, t_tp=t_tp, t_ep=t_ep, t_pp=t_pp, w=w, imb=imb,
                roof_nr=roof_nr, t_attn=t_attn)


def indexer_flop_at_attention_peak(query_context_pairs, model: ModelFacts, hardware: HardwareFacts, formats: Formats):
    """A sparse-attention indexer's FLOPs, scaled to run at the attention matmuls' peak (it runs in FP8). [FLOP]

    Parameters
    ----------
    query_context_pairs : scalar or array, query-key pairs per layer (decode: the context; prefill: causal pairs)
    model, hardware, formats : bundles (``indexer_flop_per_context_token``: 2 x 64 x 128 for DeepSeek-V3.2)

    Returns
    -------
    scalar or array [FLOP]: L_global x pairs x indexer FLOP x attention peak / FP8 peak; 0 for dense attention.

    Notes
    -----
    DeepSeek-V3.2's lightning indexer scores every context token with 64 FP8 heads of 128 dims (ReLU, no softmax)
    on every layer (deepseek-ai/DeepSeek-V3.2-Exp inference/model.py, kernel.py fp8_index): 16,384 FLOP per pair
    against 278,528 for absorbed MLA decode, i.e. ~3% of dense attention's time per key at FP8, but over every
    key where the main attention reads 2,048.
    """
    return indexer_flop_scale(model, hardware, formats) * query_context_pairs


def indexer_flop_scale(model: ModelFacts, hardware: HardwareFacts, formats: Formats):
    """:func:`indexer_flop_at_attention_peak` per query-key pair: L_global x indexer FLOP x attention peak / FP8 peak
    (FP8 peak = bf16's where the chip has none; 0 for dense attention). [FLOP per pair]"""
    fp8 = np.where(np.isnan(hardware.fp8_peak_flop_per_s), hardware.bf16_peak_flop_per_s, hardware.fp8_peak_flop_per_s)
    return model.num_global_layers * model.indexer_flop_per_context_token * formats.attention_peak_flop_per_s / fp8


def _routed_width_efficiency(model: ModelFacts, layout: Layout, eff: Efficiency):
    """:func:`grouped_gemm_width_efficiency` of each row's experts (gated FFN: 3 h x I matrices per expert)."""
    width = model.routed_expert_params / np.maximum(3.0 * model.hidden_size, 1.0) / layout.expert_tp
    return grouped_gemm_width_efficiency(np.maximum(width, 1.0), eff.moe_gemm_half_width)


def _routed_flop(tokens, model: ModelFacts, layout: Layout, eff: Efficiency):
    """Routed-expert FLOPs the busiest rank computes for ``tokens`` tokens, tile padding included. [FLOP]"""
    ep = layout.ep
    imb = 1.0 + (eff.expert_imbalance_factor - 1.0) * indicator(ep - 1.0)
    touched = expected_experts_touched(tokens, model.num_experts, model.experts_per_token, model.log_expert_miss)
    local = np.minimum(imb * touched / ep, model.num_experts / ep)
    rows = grouped_gemm_padded_rows(tokens * model.experts_per_token * imb / ep, local, eff.moe_tile_rows)
    return model.num_moe_layers * rows * 2.0 * model.routed_expert_params / layout.expert_tp


def exposed_cpu_time_s(cpu_s, gpu_s, cpu_overlap_frac):
    """The host (CPU) time of a decode step left on its critical path. [s]

    An overlap scheduler prepares step n + 1 (scheduling, input preparation, stop checks, detokenisation) while the
    GPU runs step n: TensorRT-LLM's PyTorch executor ("Overlap Scheduler", enabled by default,
    nvidia.github.io/TensorRT-LLM/features/overlap-scheduler.html), SGLang's zero-overhead scheduler
    (``disable_overlap_schedule`` False by default, sgl-project/sglang server_args.py), vLLM V1's async scheduling
    (vllm-project/vllm #19970, #23569). With share f of the GPU time available to hide it, the host adds
    max(0, cpu - f x gpu): f = 1 gives max(cpu, gpu) per step, f = 0 the sum (vLLM V0: 5-13 ms GPU bubbles per
    step, vllm-project/vllm #10634).

    Parameters
    ----------
    cpu_s : scalar or array, host time of the step (``overhead_s`` per micro-batch + ``sequence_overhead_s`` per
        sequence) [s]
    gpu_s : scalar or array, device time of the step (kernels, exposed communication, launch gaps) [s]
    cpu_overlap_frac : scalar or array in [0, 1] [-]
    """
    return np.maximum(cpu_s - cpu_overlap_frac * gpu_s, 0.0)


def decode_step(*, batch_size, context_tokens, kv_bytes_per_sequence, kv_replication, model: ModelFacts,
                hardware: HardwareFacts, layout: Layout, formats: Formats, eff: Efficiency,
                stream_input_embedding=False, comm: Collectives | None = None,
                spec: Speculation | None = None, const: DecodeConstants | None = None) -> DecodeStep:
    """One decode step of ``batch_size`` sequences on a tp x dp x pp instance with expert parallelism ep.

    Parameters
    ----------
    batch_size : scalar or array, >= dp [sequences per instance]
    context_tokens : scalar or array, mean context attended [tokens]
    kv_bytes_per_sequence : scalar or array, KV bytes of one sequence at ``context_tokens`` [B]
    kv_replication : scalar or array, copies of each KV entry in a tp group (memory.kv_replication) [-]
    model, hardware, layout, formats, eff : bundles of :mod:`econ.physics.inputs` (broadcastable arrays)
    stream_input_embedding : bool, see :func:`non_routed_bytes_read`
    comm : Collectives, optional; :func:`collectives` of the layout (computed here when not given)
    spec : Speculation, optional; speculative decoding (None or k = 0: plain decoding)
    const : DecodeConstants, optional; :func:`decode_constants` of the rows (computed here when not given; the
        engine computes them once per distinct combination and broadcasts them)

    Returns
    -------
    DecodeStep; ``tpot_s`` is the time per *output* token (step time / accepted tokens per step).

    Notes
    -----
    Module docstring; DESIGN.md "Decode step". A step is pp stage-slots of one micro-batch each; all
    slots are alike, so the per-slot roofline summed over the pp slots is the step's. Pipeline stages
    add capacity, not bandwidth: every accelerator still streams its stage's weights once per
    micro-batch, so the step time at small batch is W / (tp x BW) whatever pp (seed 002, sec. VII).
    The expert-imbalance factor (busiest EP rank over the mean) applies only when ep > 1. Routed-expert
    FLOPs are those of the grouped GEMM's padded tiles (:func:`grouped_gemm_padded_rows`).

    Speculative decoding (issue 9; Leviathan et al. 2023): the verify pass runs k + 1 tokens per
    sequence through the model, so FLOPs, KV reads, experts touched and messages scale with k + 1, while
    the weights are read once; the draft adds k passes of one MTP module (a decoder layer of the model's
    kind), of an EAGLE head (one dense layer) or of the draft model; the step emits
    :func:`accepted_tokens_per_step` tokens per sequence. Per forward pass: ``overhead_s`` (scheduling, sampling;
    with ``sequence_overhead_s`` per sequence the host time, of which :func:`exposed_cpu_time_s` stays exposed),
    and each of its ``forward_kernels`` kernels pays ``kernel_latency_s`` (its latency floor) and the launch gap
    (:func:`launch_gap_s`: CUDA graph up to ``cuda_graph_max_batch`` sequences per group, else eager)
    (:func:`kernel_time_s`); ``layer_overhead_s`` / ``moe_layer_overhead_s`` add any extra per-layer time.
    """
    dp, pp = layout.dp, layout.pp
    comm = collectives(hardware, layout, eff) if comm is None else comm
    c = decode_constants(model, hardware, layout, formats, eff, stream_input_embedding) if const is None else const
    k = 0.0 if spec is None else spec.draft_tokens
    kv = dict(batch_size=batch_size, context_tokens=context_tokens, kv_bytes_per_sequence=kv_bytes_per_sequence,
              kv_replication=kv_replication, model=model, hardware=hardware, layout=layout, formats=formats, eff=eff,
              stream_input_embedding=stream_input_embedding, comm=comm, const=c)
    v = _step_parts(1.0 + k, **kv)
    t_mem, t_flop = v["t_mem_nr"] + v["r_mem"], v["t_flop_nr"] + v["r_flop"]
    t_comm = v["t_tp"] + v["t_ep"] + v["t_pp"]
    t_routed = grouped_gemm_time_s(v["r_mem"], v["r_flop"])
    roof = v["roof_nr"] + t_routed
    t_moe = c.t_moe_s
    gap = launch_gap_s(batch_size / dp, eff.cuda_graph_max_batch, eff.kernel_launch_s, eff.kernel_launch_eager_s)
    t_floor, t_launch = kernel_time_s(model.forward_kernels, model.hidden_size, eff.kernel_latency_s, gap)
    # two-batch overlap: two half-batches, each streaming the weights and launching every kernel, whose
    # computation hides the other's communication (two_batch_overlap_on, overlapped_time_s)
    tbo = c.tbo
    passes = 1.0 + tbo
    compute, comm_run = roof, t_comm
    if np.any(tbo > 0):
        h = _step_parts(1.0 + k, **dict(kv, batch_size=batch_size / 2.0))
        roof_h = h["roof_nr"] + grouped_gemm_time_s(h["r_mem"], h["r_flop"])
        compute = np.where(tbo > 0, 2.0 * roof_h, roof)
        comm_run = np.where(tbo > 0, 2.0 * (h["t_tp"] + h["t_ep"] + h["t_pp"]), t_comm)
    # pipeline: every slot is paced by the stage with the most layers; each micro-batch is its own scheduled
    # iteration (vLLM runs one scheduler step per virtual engine), so it pays the per-step overhead
    stage = c.stage
    t_floor, t_launch = passes * stage * t_floor, passes * stage * t_launch
    compute, comm_run = stage * compute, stage * comm_run
    overlap = c.overlap
    busy = compute + t_floor
    exposed = overlapped_time_s(busy, comm_run, overlap) - busy
    cpu = v["n_mb"] * eff.overhead_s + eff.sequence_overhead_s * batch_size / dp  # per micro-batch, per sequence
    gpu = busy + exposed + t_launch + c.t_layers_s + t_moe
    cpu = exposed_cpu_time_s(cpu, gpu, eff.cpu_overlap_frac)
    fixed = cpu + t_launch + c.t_layers_s + t_moe
    t_verify = busy + exposed + fixed
    accepted, t_draft = 1.0, 0.0
    if spec is not None and np.any(np.asarray(k) > 0):
        one = v if not np.any(np.asarray(k) != 0) else _step_parts(1.0, **kv)
        t_draft = k * _draft_pass_s(one, batch_size, context_tokens, model, hardware, layout, formats, eff, spec, gap)
        accepted = accepted_tokens_per_step(spec.acceptance, k)
    step = t_verify + t_draft
    tpot = step / accepted
    nr_active, r_active = c.nr_active, c.r_active
    step_flop = batch_size * (1.0 + k) * (2.0 * (nr_active + r_active) + v["attn"])
    bytes_total = v["n_mb"] * (v["nr_bytes"] * dp + v["r_bytes"] * v["w"]) \
        + batch_size * (1.0 + k) * kv_bytes_per_sequence * kv_replication
    return DecodeStep(
        t_mem_s=t_mem, t_flop_s=t_flop, t_routed_s=t_routed, t_moe_overhead_s=t_moe + 0.0 * tpot,
        t_kernel_floor_s=t_floor + 0.0 * tpot, t_launch_s=t_launch + 0.0 * tpot, t_comm_s=comm_run + 0.0 * tpot,
        t_comm_tp_s=v["t_tp"], t_comm_ep_s=v["t_ep"], t_comm_pp_s=v["t_pp"], tpot_s=tpot,
        num_microbatches=v["n_mb"], bubble_frac=pipeline_bubble_frac(pp, v["n_mb"]), step_flop=step_flop,
        arithmetic_intensity_flop_per_byte=step_flop / bytes_total, tokens_per_s_per_user=1.0 / tpot,
        output_tokens_per_s_per_gpu=batch_size / (tpot * (v["w"] * pp)),
        binding_wall_code=np.where(exposed > compute, 3, np.where(t_flop > t_mem, 2, 1)),
        two_batch_overlap=tbo + 0.0 * tpot,
        step_s=step + 0.0 * tpot, draft_s=t_draft + 0.0 * tpot, accepted_tokens_per_step=accepted + 0.0 * tpot,
        fixed_overhead_s=fixed + 0.0 * tpot)


def _draft_pass_s(one, batch_size, context_tokens, model, hardware, layout, formats, eff, spec, gap):
    """Time of one draft pass (one drafted token per sequence) for each method. [s]

    MTP module: one decoder layer of the model's own kind (MoE for an MoE model) with its share of
    communication, i.e. 1/L of the plain step's layer work, and its own kernels (``mtp_module_kernels``).
    EAGLE head: one dense layer (the non-routed part of 1/L of the step) and its kernels. Draft model: a
    roofline of its own weights (streamed once per pass, split tp ways), FLOPs and KV reads, plus its kernels
    and the per-step overhead. ``gap`` is the launch gap of the pass (:func:`launch_gap_s`).
    """
    L = model.num_layers
    nr_layer = one["roof_nr"] / L
    r_layer = grouped_gemm_time_s(one["r_mem"], one["r_flop"]) / np.maximum(model.num_moe_layers, 1.0)
    comm_layer = (1.0 - eff.single_batch_overlap_frac) * (one["t_tp"] + one["t_ep"]) / L
    moe = np.minimum(model.num_moe_layers, 1.0)
    per_kernel = eff.kernel_latency_s * kernel_width_factor(model.hidden_size) + gap
    mtp = nr_layer + moe * (r_layer + eff.moe_layer_overhead_s) + comm_layer + eff.layer_overhead_s \
        + model.mtp_module_kernels * per_kernel
    head = nr_layer + comm_layer + eff.layer_overhead_s + model.draft_head_kernels * per_kernel
    tp = layout.tp
    bw, peak = hardware.hbm_bandwidth_bytes_per_s, formats.peak_flop_per_s
    group = batch_size / layout.dp
    draft = np.maximum(spec.draft_params * formats.weight_bytes_per_param / (tp * bw * eff.eta_bw),
                       group * 2.0 * spec.draft_active_params / (tp * peak * eff.eta_flop)) \
        + group * spec.draft_kv_bytes_per_token * context_tokens / (tp * bw * eff.eta_bw) \
        + spec.draft_kernels * (eff.kernel_latency_s * kernel_width_factor(spec.draft_hidden_size) + gap) \
        + eff.overhead_s
    code = spec.method_code
    return np.where(code == 1, mtp, np.where(code == 2, head, np.where(code == 3, draft, 0.0)))


def prefill_dispatch_s(num_layers, prefill_layer_dispatch_s):
    """Least time to a request's first token: the host's dispatch of its eager prefill pass.

    Parameters
    ----------
    num_layers : scalar or array, decoder layers of the model [layers]
    prefill_layer_dispatch_s : scalar or array, >= 0, host time per layer (``Assumptions.prefill_layer_dispatch_s``) [s]

    Returns
    -------
    scalar or array [s]: num_layers x prefill_layer_dispatch_s; the engine's TTFT is max(this, the prefill step).

    Notes
    -----
    Prefill runs outside CUDA graphs, so the host (Python, the framework's dispatcher, the launches) issues every
    operator of every layer before the request's first token can leave; it runs alongside the GPU, so a prompt
    prefilled alone takes max(host time, GPU time): the host time is the TTFT of short prompts at high TP, where
    the GPU's work is a few ms, which is why TTFT stops falling with TP (156-383 ms for 1K-token prompts on SGLang
    at any TP, the vocabulary source of ``prefill_layer_dispatch_s``). Approximation: it bounds the latency only,
    not the prefill throughput, as NVIDIA AIConfigurator charges it (0.8 ms per layer for vLLM,
    ``_prefill_dispatch_overhead_ms`` in the TTFT and not in the step latencies, aic-core/src/aiconfigurator_core/
    sdk/backends/vllm_backend.py and base_backend.py @095f58a5): under load a step carries many prompts and decode
    tokens whose GPU time exceeds it, and measured throughputs of small models at 8K prompts show no such floor
    (TensorRT-LLM Qwen3-30B-A3B, data/measurements.csv). A maximum rather than a sum: it fits the measured TTFT
    of 1K- and 8K-token prompts of the same systems (in-sample median / P90 0.136 / 0.439 against 0.135 / 0.459
    summed, stop 31).
    """
    return num_layers * prefill_layer_dispatch_s


def prefill_step(*, prompt_tokens, requests_per_step, kv_bytes_per_sequence, model: ModelFacts,
                 hardware: HardwareFacts, layout: Layout, formats: Formats, eff: Efficiency,
                 stream_input_embedding=False, comm: Collectives | None = None, prefix_tokens=0.0,
                 const: PrefillConstants | None = None, busy_groups=None) -> PrefillStep:
    """One prefill step: each of ``busy_groups`` of the dp groups prefills ``requests_per_step`` prompts through all
    stages.

    Parameters
    ----------
    prompt_tokens : scalar or array [tokens]
    requests_per_step : scalar or array, >= 1, prompts per attention group per step (may be fractional) [-]
    kv_bytes_per_sequence : scalar or array, KV written per prompt, replication included [B]
    model, hardware, layout, formats, eff : bundles of :mod:`econ.physics.inputs`; ``eff.eta_prefill`` is the
        prefill MFU (routed-expert FLOPs at eta_prefill x eta_routed_flop_frac, in their own roofline;
        each kernel of the pass pays ``kernel_latency_s`` and the eager launch gap: prefill runs outside CUDA graphs;
        under two-batch overlap the kernels run on the ``1 - comm_sm_frac`` of the SMs the all-to-all leaves them).
    stream_input_embedding : bool
    comm : Collectives, optional; :func:`collectives` of the layout (computed here when not given)
    prefix_tokens : scalar or array, >= 0 [tokens]: a cached prefix each prompt's ``prompt_tokens`` new tokens
        attend without prefilling it (prefix caching; 0 = whole prompts). Its attention pairs are
        :func:`causal_attended_tokens` with the prefix; ``kv_bytes_per_sequence`` should then be the whole context's
        KV (the new tokens' KV written plus the prefix's read by their attention).
    const : PrefillConstants, optional; :func:`prefill_constants` of the rows (computed here when not given; the
        engine computes them once per distinct combination and broadcasts them)
    busy_groups : scalar or array in [1, dp], optional; attention groups prefilling in the step (None = all dp, the
        throughput step). A prompt prefilled alone is one group's (1): its attention runs on that group while the
        expert-parallel MoE and its all-to-all carry its tokens only, not dp groups' worth. [-]

    Returns
    -------
    PrefillStep

    Notes
    -----
    DESIGN.md "Prefill": t = max(FLOPs / (tp peak eta_prefill), bytes / (tp BW eta_bw)) + comm, with
    FLOPs = R (2 P_active S + attention coefficient x causal pairs). A prompt crosses the pp stages one
    after another, so TTFT is the whole step; stages pipeline consecutive steps, so throughput per
    accelerator is tokens / (t x tp). TTFT is at least the host's dispatch of the pass (:func:`prefill_dispatch_s`).
    """
    tp, dp = layout.tp, layout.dp
    busy = dp if busy_groups is None else np.minimum(busy_groups, dp)
    c = prefill_constants(model, hardware, layout, formats, eff, stream_input_embedding) if const is None else const
    k = c.step
    tokens = requests_per_step * prompt_tokens
    pairs = causal_attended_tokens(prompt_tokens, model.num_global_layers, model.num_sliding_layers,
                                   model.sliding_window_tokens, model.index_topk, prefix_tokens)
    # the indexer scores every causal pair of every layer (the new tokens' over the prefix too)
    dense_pairs = causal_attended_tokens(prompt_tokens, 1.0, 0.0, 0.0, 0.0, prefix_tokens)
    attn = model.attention_flop_per_context_token_prefill * pairs \
        + model.num_global_layers * dense_pairs * model.indexer_flop_per_context_token
    # the indexer at the attention peak (indexer_flop_at_attention_peak)
    attn_t = model.attention_flop_per_context_token_prefill * pairs + k.indexer_scale * dense_pairs
    nr_active, r_active = k.nr_active, k.r_active
    nr_flop = requests_per_step * (2.0 * nr_active * prompt_tokens + attn)
    t_flop_w = requests_per_step * 2.0 * nr_active * prompt_tokens / tp / k.peak_eta
    # attention_time_s with the bandwidth already times eta_bw (x 1.0: the same value; no KV read from HBM)
    t_attn = attention_time_s(0.0, requests_per_step * attn_t / tp,
                              requests_per_step * model.num_attention_heads * pairs / tp, k.bw_eta, 1.0,
                              formats.attention_peak_flop_per_s, k.exp_rate, eff.eta_prefill)
    t_flop_nr = t_flop_w + requests_per_step * attn_t / tp / k.attn_peak_eta
    moe = bool(np.any(model.num_moe_layers))  # False: dense rows only, every routed term is 0 (not computed)
    if moe:  # routed-expert FLOPs at eta_prefill x eta_routed_flop_frac x the width efficiency (routed_flop_rate)
        r_flop = _routed_flop(tokens * busy, model, layout, eff) / k.routed_flop_rate
        r_mem = _routed_bytes(tokens * busy, model, formats, layout, eff) / k.routed_bw
    else:
        r_flop = r_mem = np.zeros(np.shape(tokens))
    # the non-routed weights read (non_routed_bytes_read of the step's tokens) and the prompts' KV written
    t_mem_nr = ((k.nr_fixed_bytes + k.nr_token_bytes * tokens) / tp
                + requests_per_step * kv_bytes_per_sequence / tp) / k.bw_eta
    comm = collectives(hardware, layout, eff) if comm is None else comm

    def comm_of(tok):
        message = tok * model.hidden_size * eff.activation_bytes
        t = k.tp_layers * comm.tp_allreduce.time_s(message)  # 2 L - L_moe all-reduces
        if moe:  # dense rows add L_moe x (...) = 0
            moe_tp, moe_ep = _moe_comm(comm, tok * busy, tok, model, eff)
            t = t + model.num_moe_layers * (moe_tp + moe_ep)
        return t + comm.pipeline.time_s(message)

    t_comm = comm_of(tokens)
    tbo = k.tbo  # two micro-batches (DeepSeek's prefill): kernels twice, collectives halved
    # the halved collectives only where a row runs two-batch overlap (none: the step's own)
    comm_run = np.where(tbo > 0, 2.0 * comm_of(tokens / 2.0), t_comm) if np.any(tbo > 0) else t_comm
    busy = (np.maximum(t_flop_w, t_mem_nr) + t_attn + grouped_gemm_time_s(r_mem, r_flop)) / c.sm_share + c.kernels_s
    t = overlapped_time_s(busy, comm_run, k.overlap) + k.t_moe_s + k.t_layers_s
    flop = busy * (nr_flop + tokens * 2.0 * r_active)
    return PrefillStep(time_s=t, prefill_flop=flop, t_mem_s=t_mem_nr + r_mem, t_flop_s=t_flop_nr + r_flop,
                       t_comm_s=comm_run + 0.0 * t, input_tokens_per_s_per_gpu=tokens / (t * tp),
                       t_attn_s=t_attn,
                       attention_flop=busy * requests_per_step * attn)
