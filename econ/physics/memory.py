"""The capacity wall: weights + KV cache must fit in the deployment's usable HBM.

Two rules size the KV-cache pool (``Assumptions.kv_memory_rule``, :func:`kv_pool_bytes`):

- ``total`` (vLLM ``gpu_memory_utilization``, SGLang ``mem_fraction_static``): ``usable_hbm_frac`` of the whole HBM
  holds the weights, activations and KV cache;
- ``free`` (TensorRT-LLM ``KvCacheConfig.free_gpu_memory_fraction``): ``usable_hbm_frac`` of the memory left free
  once the weights, the activations of ``max_num_tokens`` tokens and the runtime are allocated
  (:func:`trtllm_reserved_bytes`, NVIDIA AIConfigurator's memory model for TensorRT-LLM).

AIConfigurator draws the same line (sdk/memory.py @095f58a5: 'TRT-LLM applies the fraction to FREE memory ...
vLLM/SGLang apply it to TOTAL memory').
"""

from __future__ import annotations

import numpy as np

TRTLLM_KV_RESERVED_FRAC = 0.015
"""Share of TensorRT-LLM's KV pool taken by its block allocator: AIConfigurator KV_CACHE_MEMORY_RESERVED_FRACTION
(sdk/backends/trtllm_backend.py @095f58a5, 'reserved by TRT-LLM for internal block-allocator overhead'). [-]"""

TRTLLM_ACTIVATION_COEFFICIENT: dict[bool, dict[int, float]] = {False: {1: 11.0, 2: 6.5, 4: 5.0, 8: 5.0},
                                                              True: {1: 22.0, 2: 13.0, 4: 10.0, 8: 10.0}}
"""Activation memory of a TensorRT-LLM rank per max_num_tokens x h x 2 bytes (h = attention heads x head size, the
hidden size for MLA models: :func:`trtllm_reserved_bytes`), for
MoE (True) or dense models by attention TP (1, 2, 4, 8; :func:`trtllm_reserved_bytes` rounds TP down to one of
them): AIConfigurator TRTLLMBackend.ACTIVATION_COEFFICIENTS 'MOE' and 'LLAMA' (sdk/backends/trtllm_backend.py
@095f58a5), its KV-capacity estimate (sdk/backends/base_backend.py ``_get_memory_usage``: activations = 2 x
num_tokens x h x coefficient, at least 70 MiB). [-]"""

TRTLLM_NCCL_BYTES: dict[int, float] = {1: 0.0, 2: 358_612_992.0, 4: 411_041_792.0, 8: 411_041_792.0}
"""NCCL buffers of a TensorRT-LLM rank by attention TP (rounded down to 1, 2, 4 or 8): AIConfigurator
systems/{h100_sxm,h200_sxm,b200_sxm,gb200,b300_sxm,gb300}.yaml ``misc.nccl_mem`` @095f58a5 (the same on each). [B]"""

TRTLLM_OTHER_BYTES = 3_758_096_384.0
"""CUDA context, cuBLAS workspaces and the rest of a TensorRT-LLM rank's runtime memory: 3.5 GiB, AIConfigurator's
``misc.other_mem`` (systems/h100_sxm.yaml and the other systems @095f58a5: 'increase from 551MB to 3.5GB for safer
deployment, this will cover part of the inaccurate mem calc'): the value in the memory model whose KV capacity
AIConfigurator's tests hold to 2% of TensorRT-LLM's (KV_CACHE_MEMORY_TOLERANCE, 'acceptable formula error relative
to real TRT-LLM benchmark measurements'). [B]"""

TRTLLM_MOE_WORKSPACE_BYTES_PER_TOKEN_EXPERT = 4.0 / 128.0
"""Block-scale dispatch workspace of DeepSeek-style (MLA) MoE models in TensorRT-LLM, per token x width x attention-DP
rank x expert x routed expert / EP rank: 4 bytes per 128 (one float scale per 128-wide block); AIConfigurator
BaseBackend.MOE_WORKSPACE_FAMILIES (DEEPSEEK, DEEPSEEKV32, KIMIK25, ...) and ``_get_memory_usage`` @095f58a5, the
width its h for DeepSeek (TRTLLMBackend._moe_workspace_width) and the hidden size for Kimi: both the hidden size, as
AIConfigurator reads h = heads x hidden / heads from configs without a head_dim (sdk/utils.py). [B]"""


def weight_bytes_resident(total_params, embedding_params, lm_head_params, weight_bytes_per_param,
                          embedding_bytes_per_param=2.0, routed_params=0.0, expert_bytes_per_param=None):
    """Bytes of weights held in HBM by one model replica.

    Parameters
    ----------
    total_params : scalar or array [params]
    embedding_params, lm_head_params : scalar or array [params]
        Input table V*d and LM head V*d (0 if tied); they stay at ``embedding_bytes_per_param``.
    weight_bytes_per_param : scalar or array [B] (precision.WEIGHT_BYTES_PER_PARAM)
    embedding_bytes_per_param : scalar or array [B]
    routed_params : scalar or array, routed-expert parameters stored in ``expert_bytes_per_param`` [params]
    expert_bytes_per_param : scalar or array, optional (None = ``weight_bytes_per_param``) [B]

    Returns
    -------
    scalar or array [B]. Llama-3.1-8B bf16: 16.06e9 (DESIGN.md); a 700B model in fp8: ~700e9;
    gpt-oss-120b (MXFP4 experts, bf16 rest): ~65e9 (OpenAI: fits one 80 GB GPU).
    """
    emb = embedding_params + lm_head_params
    eb = weight_bytes_per_param if expert_bytes_per_param is None else expert_bytes_per_param
    return (total_params - emb - routed_params) * weight_bytes_per_param + routed_params * eb \
        + emb * embedding_bytes_per_param


def kv_replication(tp, kv_shard_heads):
    """How many copies of each KV entry a TP group holds.

    Parameters
    ----------
    tp : scalar or array, >= 1 [-]
    kv_shard_heads : scalar or array
        Ways the cache can be split across TP ranks: h_kv for GQA/MHA, 1 for MLA (every rank needs the
        whole latent). [-]

    Returns
    -------
    scalar or array [-] = tp / min(tp, kv_shard_heads). With TP above the KV-head count, heads are
    replicated (vLLM, TensorRT-LLM); MLA under pure TP replicates the latent on every rank, which is
    why DeepSeek serves attention data-parallel (DeepSeek-V3 report, sec. 3.4).
    """
    return tp / np.minimum(tp, kv_shard_heads)


def kv_pool_bytes_per_gpu(hbm_capacity_bytes, weight_bytes_per_gpu, usable_hbm_frac, free_rule=False,
                          reserved_bytes=0.0):
    """KV-cache pool of one accelerator under the engine's sizing rule (module docstring).

    Parameters
    ----------
    hbm_capacity_bytes : scalar or array [B]
    weight_bytes_per_gpu : scalar or array, the weights it holds [B]
    usable_hbm_frac : scalar or array in (0, 1]: of the total HBM (``total``) or of the free memory (``free``) [-]
    free_rule : scalar or array of bool, the ``free`` rule (TensorRT-LLM) where true [-]
    reserved_bytes : scalar or array, what the ``free`` rule allocates before the KV cache besides the weights
        (:func:`kv_rule_reserved_bytes`) [B]

    Returns
    -------
    ndarray [B]: ``total``: HBM x usable - weights (negative where the weights do not fit); ``free``:
    usable x (1 - :data:`TRTLLM_KV_RESERVED_FRAC`) x max(HBM - weights - reserved, 0).
    Llama-3.1-70B FP8 on one H100 (80 GiB, 72.7 GB of weights, 2,000-token sequences): 14 sequences under ``total``,
    21 under ``free`` (tests/analyses/test_kv_free_memory.py).
    """
    total = hbm_capacity_bytes * usable_hbm_frac - weight_bytes_per_gpu
    free = (usable_hbm_frac * (1.0 - TRTLLM_KV_RESERVED_FRAC)
            * np.maximum(hbm_capacity_bytes - weight_bytes_per_gpu - reserved_bytes, 0.0))
    return np.where(free_rule, free, total)


def kv_pool_bytes(num_gpus, hbm_capacity_bytes, usable_hbm_frac, weight_bytes, free_rule=False, reserved_bytes=0.0):
    """KV-cache pool of one instance: ``num_gpus`` x :func:`kv_pool_bytes_per_gpu` with ``weight_bytes`` (the
    instance's, spread evenly over ``num_gpus``) [B]."""
    n = np.asarray(num_gpus, dtype=float)
    return n * kv_pool_bytes_per_gpu(hbm_capacity_bytes, weight_bytes / n, usable_hbm_frac, free_rule, reserved_bytes)


def weight_budget_bytes(hbm_capacity_bytes, usable_hbm_frac, free_rule=False, reserved_bytes=0.0):
    """Most weight bytes one accelerator may hold and keep a KV pool: HBM x usable (``total``) or HBM - reserved
    (``free``) [B]; the fewest accelerators for a model's weights is ceil(weights / this)."""
    return np.where(free_rule, hbm_capacity_bytes - reserved_bytes, hbm_capacity_bytes * usable_hbm_frac)


def kv_rule_reserved_bytes(kv_memory_rule, max_num_tokens, model, tp, dp=1.0, ep=1.0):
    """Memory the rule ``kv_memory_rule`` sets aside on each accelerator before the KV cache besides the weights:
    :func:`trtllm_reserved_bytes` for ``free`` (activations for ``max_num_tokens`` tokens, the MoE dispatch
    workspace, NCCL and runtime), 0 for ``total`` (vLLM's share of the total covers them).

    Parameters
    ----------
    kv_memory_rule : str, "total" or "free" (:data:`econ.vocabulary.KV_MEMORY_RULES`)
    max_num_tokens : scalar, tokens per forward pass (``Assumptions.prefill_chunk_tokens``) [tokens]
    model : :class:`econ.physics.inputs.ModelFacts` (its ``attention_width``, ``num_experts``,
        ``experts_per_token`` and ``dispatch_workspace_width``; ``econ.engine.catalog_arrays(catalog).model_facts``
        gives them for model ids)
    tp, dp, ep : scalar or array, the instance's attention TP, attention-DP ranks and EP ranks [-]

    Returns
    -------
    scalar 0.0 or ndarray [B] per accelerator
    """
    if kv_memory_rule != "free":
        return 0.0
    return trtllm_reserved_bytes(model.attention_width, np.asarray(model.num_experts) > 0, tp, max_num_tokens,
                                 model.dispatch_workspace_width, dp, model.num_experts, model.experts_per_token, ep)


def batch_in_pool(pool_bytes, kv_bytes_per_sequence, replication=1.0):
    """Sequences a KV-cache pool holds: floor(max(pool, 0) / (kv x replication)). [sequences]"""
    return np.floor(np.maximum(pool_bytes, 0.0) / (kv_bytes_per_sequence * replication))


def max_batch_size(num_gpus, hbm_capacity_bytes, usable_hbm_frac, weight_bytes, kv_bytes_per_sequence,
                   replication=1.0):
    """Largest batch whose KV cache fits beside the weights (the capacity wall, ``total`` rule).

    Parameters
    ----------
    num_gpus : scalar or array, >= 1 [-]
    hbm_capacity_bytes : scalar or array, per accelerator [B]
    usable_hbm_frac : scalar or array in (0, 1] [-]
    weight_bytes : scalar or array, one replica, sharded over ``num_gpus`` [B]
    kv_bytes_per_sequence : scalar or array, at the longest context served [B]
    replication : scalar or array, >= 1, see :func:`kv_replication` [-]

    Returns
    -------
    ndarray of float (whole numbers) [sequences]; 0 where the weights alone do not fit.

    Notes
    -----
    weights / N + B * kv * replication / N <= usable * HBM per accelerator (DESIGN.md, "Capacity"). The engine
    sizes the pool with :func:`kv_pool_bytes` (either rule) and :func:`batch_in_pool`.
    """
    return batch_in_pool(kv_pool_bytes(num_gpus, hbm_capacity_bytes, usable_hbm_frac, weight_bytes),
                         kv_bytes_per_sequence, replication)


def min_gpus_for_weights(weight_bytes, hbm_capacity_bytes, usable_hbm_frac=1.0):
    """Fewest accelerators whose (usable) HBM holds the weights.

    Returns
    -------
    ndarray [-]. A 700B-parameter model in fp8 on 80 GB H100s: ceil(700/80) = 9 (seed 002).
    """
    return np.ceil(weight_bytes / (hbm_capacity_bytes * usable_hbm_frac))


def trtllm_reserved_bytes(attention_width, moe, tp, max_num_tokens, moe_workspace_width=0.0, adp=1.0,
                          num_experts=0.0, experts_per_token=0.0, ep=1.0) -> np.ndarray:
    """Memory a TensorRT-LLM rank holds besides weights and KV cache, as AIConfigurator counts it for TensorRT-LLM:
    activations for ``max_num_tokens`` tokens (:data:`TRTLLM_ACTIVATION_COEFFICIENT`), the block-scale MoE dispatch
    workspace of DeepSeek-style models (:data:`TRTLLM_MOE_WORKSPACE_BYTES_PER_TOKEN_EXPERT`), NCCL buffers
    (:data:`TRTLLM_NCCL_BYTES`) and the runtime (:data:`TRTLLM_OTHER_BYTES`).

    Parameters
    ----------
    attention_width : array, attention heads x head size, the hidden size for MLA models whose configs state no
        head size (AIConfigurator's ``h``, sdk/utils.py: head_dim or hidden / heads) [-]
    moe : array of bool, the model routes experts [-]
    tp : array, >= 1, attention TP of the rank, rounded down to 1, 2, 4 or 8 (AIConfigurator's tables stop at 8) [-]
    max_num_tokens : scalar, tokens per forward pass (TensorRT-LLM's max_num_tokens, 8192 by default:
        ``Assumptions.prefill_chunk_tokens``) [tokens]
    moe_workspace_width : array, width of the dispatch workspace; 0 for models without one [-]
    adp, num_experts, experts_per_token, ep : arrays, attention-DP ranks, routed experts, experts per token and EP
        ranks [-]

    Returns
    -------
    ndarray [B] per rank
    """
    tps = (1, 2, 4, 8)  # the tables' keys; TP rounded down to one of them
    t, moe = np.broadcast_arrays(np.asarray(tp, dtype=float), np.asarray(moe, dtype=bool))
    t = np.nan_to_num(t, nan=1.0, posinf=8.0)  # a missing TP reads TP1 (never an index error)
    k = np.clip(np.floor(np.log2(np.maximum(t, 1.0))), 0, len(tps) - 1).astype(int)
    coef = np.where(moe, np.array([TRTLLM_ACTIVATION_COEFFICIENT[True][t] for t in tps])[k],
                    np.array([TRTLLM_ACTIVATION_COEFFICIENT[False][t] for t in tps])[k])
    nccl = np.array([TRTLLM_NCCL_BYTES[t] for t in tps])[k]
    act = np.maximum(2.0 * max_num_tokens * np.asarray(attention_width, dtype=float) * coef, 70.0 * 2**20)
    workspace = (max_num_tokens * np.asarray(moe_workspace_width, dtype=float) * np.asarray(adp, dtype=float)
                 * np.asarray(num_experts, dtype=float) * np.asarray(experts_per_token, dtype=float)
                 / np.maximum(np.asarray(ep, dtype=float), 1.0) * TRTLLM_MOE_WORKSPACE_BYTES_PER_TOKEN_EXPERT)
    return act + workspace + nccl + TRTLLM_OTHER_BYTES
