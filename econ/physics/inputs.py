"""Named, typed bundles of per-row arrays: what the step kernels take and the engine builds.

Every field is a scalar or a numpy array that broadcasts with the others (one element per evaluated
configuration). The engine (:mod:`econ.engine`) gathers them from the catalog by integer codes, block by
block; the optimizer builds them directly. Field names are the catalog's SI column names
(``data/README.md``, :mod:`econ.tables.catalog`), so a bundle can be filled with ``ModelFacts(**columns)``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


def _gather(cls, table: dict, index):
    """An instance of ``cls`` whose fields are ``table[field][index]`` (table: column -> ndarray)."""
    return cls(**{f.name: table[f.name][index] for f in fields(cls)})


@dataclass(slots=True)
class ModelFacts:
    """Architecture facts of the model served on each row (:func:`econ.physics.architecture.derive_architecture`).

    Attributes
    ----------
    total_params, embedding_params, lm_head_params, routed_params_total, dense_params_read,
    routed_expert_params, active_matmul_params : [params]
        Parameter counts: all weights; the input table V*d; the LM head (0 if tied); every routed
        expert; every non-routed weight a decode step multiplies (LM head included); one expert of one
        layer; weights multiplied per token (2 FLOP each).
    hidden_size : [-] model width d
    num_layers, num_moe_layers, num_global_layers, num_sliding_layers : [layers]
    num_experts, experts_per_token : [-] routed experts E and top-k (0 for dense models)
    attention_flop_per_context_token_decode, attention_flop_per_context_token_prefill : [FLOP]
        Per layer, per (query, key) pair.
    sliding_window_tokens : [tokens] (0 = none)
    kv_elements_per_token_per_layer : [elements] 2 h_kv d_h (GQA/MHA) or r_kv + d_rope (MLA)
    kv_shard_heads : [-] ways TP can split the cache (h_kv; 1 for MLA)
    num_attention_heads, num_kv_heads : [-]
    max_context_tokens : [tokens] the model's maximum context (``max_position_embeddings``)
    log_expert_miss : [-] ln(1 - k/E), 0 for dense (:func:`econ.physics.architecture.log_expert_miss`)
    mtp_module_params, mtp_module_active_params, draft_head_params : [params] a multi-token-prediction
        module (all / per token) and an EAGLE-style draft head (:func:`econ.physics.architecture.derive_architecture`)
    mtp_modules : [-] MTP modules the released checkpoint ships (models.csv; 0 = none)
    forward_kernels, mtp_module_kernels, draft_head_kernels : [kernels] launched by one forward pass of the model,
        of one MTP module and of an EAGLE head (:data:`econ.physics.architecture.KERNELS_PER_PART`)
    index_topk : [tokens] keys a sparse-attention indexer keeps per query (DeepSeek-V3.2: 2048; 0 = dense)
    indexer_flop_per_context_token : [FLOP] the indexer's FLOPs per query-key pair per layer (FP8; 0 = none)
    indexer_bytes_per_token_per_layer : [B] the indexer's key cache per token per layer (0 = none)
    attention_width, dispatch_workspace_width : [-] attention heads x head size (the hidden size for MLA) and the
        width of TensorRT-LLM's MoE dispatch workspace (the hidden size for MLA MoE models, else 0): the ``free``
        KV-memory rule's reserved memory (:func:`econ.physics.memory.trtllm_reserved_bytes`)
    """

    total_params: np.ndarray
    embedding_params: np.ndarray
    lm_head_params: np.ndarray
    routed_params_total: np.ndarray
    dense_params_read: np.ndarray
    routed_expert_params: np.ndarray
    active_matmul_params: np.ndarray
    hidden_size: np.ndarray
    num_layers: np.ndarray
    num_moe_layers: np.ndarray
    num_global_layers: np.ndarray
    num_sliding_layers: np.ndarray
    num_experts: np.ndarray
    experts_per_token: np.ndarray
    attention_flop_per_context_token_decode: np.ndarray
    attention_flop_per_context_token_prefill: np.ndarray
    sliding_window_tokens: np.ndarray
    kv_elements_per_token_per_layer: np.ndarray
    kv_shard_heads: np.ndarray
    num_attention_heads: np.ndarray
    num_kv_heads: np.ndarray
    max_context_tokens: np.ndarray
    log_expert_miss: np.ndarray
    mtp_module_params: np.ndarray
    mtp_module_active_params: np.ndarray
    draft_head_params: np.ndarray
    mtp_modules: np.ndarray
    forward_kernels: np.ndarray
    mtp_module_kernels: np.ndarray
    draft_head_kernels: np.ndarray
    index_topk: np.ndarray
    indexer_flop_per_context_token: np.ndarray
    indexer_bytes_per_token_per_layer: np.ndarray
    attention_width: np.ndarray
    dispatch_workspace_width: np.ndarray

    @property
    def routed_active_params(self):
        """Routed-expert weights multiplied per token: L_moe k P_expert (0 for dense). [params]"""
        return self.num_moe_layers * self.experts_per_token * self.routed_expert_params

    @property
    def non_routed_active_params(self):
        """Every other weight multiplied per token. [params]"""
        return self.active_matmul_params - self.routed_active_params

    def take(self, index) -> "ModelFacts":
        """The same facts for a subset (or reordering) of rows."""
        return _take(self, index)


@dataclass(slots=True)
class HardwareFacts:
    """Datasheet facts and cost inputs of the accelerator on each row (SI units, :mod:`econ.tables.catalog`).

    Attributes
    ----------
    hbm_capacity_bytes : [B]; hbm_bandwidth_bytes_per_s : [B/s]
    scale_up_bandwidth_bytes_per_s, scale_out_bandwidth_bytes_per_s : [B/s] per accelerator, one direction
    scale_up_domain_size : [accelerators] the catalog's (a layout may override it)
    scale_up_mesh : [-] 1 where the scale-up domain is a direct full mesh (``scale_up_topology`` = mesh: each
        accelerator's links split evenly over its peers, :func:`econ.physics.communication.mesh_bandwidth_share`),
        0 on a switch
    bf16_peak_flop_per_s, fp8_peak_flop_per_s, fp4_peak_flop_per_s : [FLOP/s] dense; NaN = not in hardware
    exp_per_s : [exponentials/s] softmax exponentials the special-function units evaluate; NaN = not modelled
    block_fp8_moe_flop_frac : [-] speed of a 128 x 128 block-scaled FP8 expert GEMM relative to per-tensor FP8 on the
        generation (:data:`econ.physics.precision.BLOCK_FP8_MOE_FLOP_FRAC`; 1 where not measured)
    all_in_capex_usd : [USD]; all_in_power_w : [W]; rental_usd_per_hour : [USD/h]; NaN = not in catalog
    tco_hyperscaler_usd_per_hour, tco_neocloud_usd_per_hour, rental_3yr_usd_per_hour,
    rental_on_demand_hyperscaler_usd_per_hour, rental_on_demand_neocloud_usd_per_hour : [USD/h] the cost tiers
        of accelerators.csv (data/README.md), NaN where the catalog has none
    """

    hbm_capacity_bytes: np.ndarray
    hbm_bandwidth_bytes_per_s: np.ndarray
    scale_up_bandwidth_bytes_per_s: np.ndarray
    scale_out_bandwidth_bytes_per_s: np.ndarray
    scale_up_domain_size: np.ndarray
    scale_up_mesh: np.ndarray
    bf16_peak_flop_per_s: np.ndarray
    fp8_peak_flop_per_s: np.ndarray
    fp4_peak_flop_per_s: np.ndarray
    exp_per_s: np.ndarray
    block_fp8_moe_flop_frac: np.ndarray
    all_in_capex_usd: np.ndarray
    all_in_power_w: np.ndarray
    rental_usd_per_hour: np.ndarray
    tco_hyperscaler_usd_per_hour: np.ndarray
    tco_neocloud_usd_per_hour: np.ndarray
    rental_3yr_usd_per_hour: np.ndarray
    rental_on_demand_hyperscaler_usd_per_hour: np.ndarray
    rental_on_demand_neocloud_usd_per_hour: np.ndarray

    def take(self, index) -> "HardwareFacts":
        return _take(self, index)


@dataclass(slots=True)
class Layout:
    """Parallelism of one deployment instance (:mod:`econ.physics.performance`, module docstring).

    Attributes
    ----------
    tp, dp, ep, pp : [-] whole numbers >= 1; ep divides tp x dp and the expert slots
    scale_up_domain_size : [accelerators] domain the instance is placed in (contiguously)
    redundant_experts : [-] extra copies of hot experts per MoE layer (expert slots = E + redundant;
        DeepSeek's decode serves 256 + 32 slots on EP144, 2 per GPU: DeepSeek-V3 report sec. 3.4)
    two_batch_overlap : [-] 1 = the instance splits each step into two micro-batches whose computation hides the
        other's communication, 0 = it does not, NaN = the default of its engine class
        (:func:`econ.physics.performance.two_batch_overlap_on`)
    """

    tp: np.ndarray
    dp: np.ndarray
    ep: np.ndarray
    pp: np.ndarray
    scale_up_domain_size: np.ndarray
    redundant_experts: np.ndarray | float = 0.0
    two_batch_overlap: np.ndarray | float = np.nan

    @property
    def num_gpus(self):
        """tp x dp x pp. [accelerators]"""
        return self.tp * self.dp * self.pp

    @property
    def stage_gpus(self):
        """Accelerators of one pipeline stage, W = tp x dp. [accelerators]"""
        return self.tp * self.dp

    @property
    def expert_tp(self):
        """Ranks each expert is split over, W / ep. [-]"""
        return self.tp * self.dp / self.ep

    def take(self, index) -> "Layout":
        return _take(self, index)


@dataclass(slots=True)
class Formats:
    """Number formats of each row and the peaks they run at.

    Attributes
    ----------
    weight_bytes_per_param : [B] non-routed weights stored in HBM, scales included (precision.WEIGHT_FORMATS)
    kv_bytes_per_element : [B] KV-cache format
    embedding_bytes_per_param : [B] embeddings and LM head (stay 16-bit)
    peak_flop_per_s : [FLOP/s] dense matmul peak of the non-routed matmuls (the row's matmul precision,
        or bf16 where a release pins wider weights, e.g. gpt-oss attention)
    attention_peak_flop_per_s : [FLOP/s] peak of the attention-score matmuls
        (:func:`econ.physics.performance.attention_peak_flop_per_s`)
    expert_weight_bytes_per_param : [B] routed-expert weights (e.g. MXFP4 0.53125 for gpt-oss); None = as
        the non-routed weights
    expert_peak_flop_per_s : [FLOP/s] matmul peak of the routed experts; None = ``peak_flop_per_s``
    """

    weight_bytes_per_param: np.ndarray
    kv_bytes_per_element: np.ndarray
    embedding_bytes_per_param: np.ndarray
    peak_flop_per_s: np.ndarray
    attention_peak_flop_per_s: np.ndarray
    expert_weight_bytes_per_param: np.ndarray | None = None
    expert_peak_flop_per_s: np.ndarray | None = None

    @property
    def expert_bytes(self):
        """Routed-expert bytes per weight. [B]"""
        return self.weight_bytes_per_param if self.expert_weight_bytes_per_param is None \
            else self.expert_weight_bytes_per_param

    @property
    def expert_peak(self):
        """Routed-expert matmul peak. [FLOP/s]"""
        return self.peak_flop_per_s if self.expert_peak_flop_per_s is None else self.expert_peak_flop_per_s

    def take(self, index) -> "Formats":
        return _take(self, index)


@dataclass(slots=True)
class Efficiency:
    """Achieved fractions of the roofline and the fixed latencies of a step, per row or scalar.

    Fields mirror :class:`econ.assumptions.Assumptions` (efficiency factors, per-hop latencies, step and
    MoE-layer overheads) and :class:`econ.assumptions.DeploymentAssumptions` (the terms parallel layouts
    add); :meth:`from_assumptions` builds it. Units as there ([-], [s], [B]).
    """

    eta_bw: np.ndarray | float
    eta_flop: np.ndarray | float
    eta_prefill: np.ndarray | float
    overlap_frac: np.ndarray | float
    overhead_s: np.ndarray | float
    activation_bytes: np.ndarray | float
    scale_up_latency_s: np.ndarray | float
    scale_out_latency_s: np.ndarray | float
    eta_routed_flop_frac: np.ndarray | float
    eta_routed_bw_frac: np.ndarray | float
    moe_layer_overhead_s: np.ndarray | float
    expert_imbalance_factor: np.ndarray | float
    dispatch_activation_bytes: np.ndarray | float
    combine_activation_bytes: np.ndarray | float
    alltoall_scale_up_latency_s: np.ndarray | float
    alltoall_scale_out_latency_s: np.ndarray | float
    kernel_launch_latency_s: np.ndarray | float
    single_batch_overlap_frac: np.ndarray | float = 0.0
    comm_sm_frac: np.ndarray | float = 0.0
    layer_overhead_s: np.ndarray | float = 0.0
    sequence_overhead_s: np.ndarray | float = 0.0
    cpu_overlap_frac: np.ndarray | float = 0.0
    kernel_latency_s: np.ndarray | float = 0.0
    kernel_launch_s: np.ndarray | float = 0.0
    kernel_launch_eager_s: np.ndarray | float = 0.0
    prefill_layer_dispatch_s: np.ndarray | float = 0.0
    cuda_graph_max_batch: np.ndarray | float = np.inf
    moe_tile_rows: np.ndarray | float = 1.0
    moe_gemm_half_width: np.ndarray | float = 0.0
    tpot_tail_factor: np.ndarray | float = 1.0

    @classmethod
    def from_assumptions(cls, assumptions, deployment) -> "Efficiency":
        """Scalar efficiencies from an :class:`~econ.assumptions.Assumptions` and a
        :class:`~econ.assumptions.DeploymentAssumptions`."""
        key, kw = None, None
        if all(getattr(getattr(x, "__dataclass_params__", None), "frozen", False) for x in (assumptions, deployment)):
            try:  # the scalars of one frozen (assumptions, deployment), read once (issue 20.4: ~40 getattr per call)
                key = (assumptions, deployment)
                kw = _EFFICIENCY_KW.get(key)
            except TypeError:  # pragma: no cover - an unhashable field: read every time
                key = None
        if kw is None:
            names = {f.name for f in fields(cls)}
            src = {f.name: getattr(assumptions, f.name) for f in fields(assumptions)
                   if f.name in names and f.name != "calibrated"}
            src.update({f.name: getattr(deployment, f.name) for f in fields(deployment) if f.name in names})
            kw = {k: float(v) for k, v in src.items()}
            if key is not None:
                if len(_EFFICIENCY_KW) > 64:
                    _EFFICIENCY_KW.clear()
                _EFFICIENCY_KW[key] = kw
        return cls(**kw)  # a fresh bundle: callers set calibrated fields on it

    def take(self, index) -> "Efficiency":
        return _take(self, index)


_EFFICIENCY_KW: dict = {}
"""(assumptions, deployment) -> the float fields of :meth:`Efficiency.from_assumptions` (a few entries)."""


SPEC_METHODS: tuple[str, ...] = ("none", "mtp", "eagle", "draft")
"""Speculative-decoding methods (index = method code): none; the model's own multi-token-prediction
module(s) (DeepSeek-V3, GLM-4.5); an EAGLE-style draft head (one dense decoder layer); a separate draft model."""


@dataclass(slots=True)
class Speculation:
    """Speculative decoding of each row (Leviathan et al., 2023, arXiv:2211.17192; DeepSeek-V3 MTP).

    Attributes
    ----------
    method_code : [-] index into :data:`SPEC_METHODS` (0 = off)
    draft_tokens : [tokens] k, tokens drafted per step (0 = off), 0..16
    acceptance : [-] a, chance each drafted token is accepted (i.i.d.), [0, 1)
    draft_params, draft_active_params : [params] the draft model (method "draft"; 0 otherwise)
    draft_kernels : [kernels] one forward pass of the draft model launches (its ``forward_kernels``)
    draft_hidden_size : [-] the draft model's width d (its kernels' latency floors scale with it)
    draft_kv_bytes_per_token : [B] the draft model's KV bytes per context token (all its layers)
    """

    method_code: np.ndarray | float = 0.0
    draft_tokens: np.ndarray | float = 0.0
    acceptance: np.ndarray | float = 0.0
    draft_params: np.ndarray | float = 0.0
    draft_active_params: np.ndarray | float = 0.0
    draft_kernels: np.ndarray | float = 0.0
    draft_hidden_size: np.ndarray | float = 0.0
    draft_kv_bytes_per_token: np.ndarray | float = 0.0

    def take(self, index) -> "Speculation":
        return _take(self, index)


def _take(obj, index):
    out = {}
    for f in fields(obj):
        v = getattr(obj, f.name)
        out[f.name] = v[index] if isinstance(v, np.ndarray) and v.ndim else v
    return type(obj)(**out)


__all__ = ["ModelFacts", "HardwareFacts", "Layout", "Formats", "Efficiency", "Speculation", "SPEC_METHODS"]
