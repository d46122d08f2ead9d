"""The capacity wall: weights + KV cache must fit in the deployment's usable HBM."""

from __future__ import annotations

import numpy as np


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


def max_batch_size(num_gpus, hbm_capacity_bytes, usable_hbm_frac, weight_bytes, kv_bytes_per_sequence,
                   replication=1.0):
    """Largest batch whose KV cache fits beside the weights (the capacity wall).

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
    weights / N + B * kv * replication / N <= usable * HBM per accelerator (DESIGN.md, "Capacity").
    """
    free = num_gpus * hbm_capacity_bytes * usable_hbm_frac - weight_bytes
    return np.floor(np.maximum(free, 0.0) / (kv_bytes_per_sequence * replication))


def min_gpus_for_weights(weight_bytes, hbm_capacity_bytes, usable_hbm_frac=1.0):
    """Fewest accelerators whose (usable) HBM holds the weights.

    Returns
    -------
    ndarray [-]. A 700B-parameter model in fp8 on 80 GB H100s: ceil(700/80) = 9 (seed 002).
    """
    return np.ceil(weight_bytes / (hbm_capacity_bytes * usable_hbm_frac))
