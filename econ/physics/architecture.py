"""Model architecture -> parameter counts, KV-cache bytes and FLOPs per token.

Parameter counts are derived from the released config (``data/models.csv``), not taken from the
vendor's headline number, so that every byte the model reads can be attributed to a part (attention,
dense FFN, routed and shared experts, embeddings). ``tests/test_architecture.py`` checks the counts
against the vendors' totals.

Conventions (SwiGLU FFNs, as in every model of the catalog):
- FFN of width f on model width d: 3 * d * f parameters (gate, up, down).
- GQA/MHA attention: d*h*d_h (Q) + 2*d*h_kv*d_h (K, V) + h*d_h*d (O).
- MLA (DeepSeek-V2/V3, Kimi-K2; arXiv:2405.04434 sec. 2.1): Q: d*q_lora + q_lora*h*(d_nope+d_rope)
  (or d*h*(d_nope+d_rope) without a query LoRA); KV: d*(kv_lora + d_rope) + kv_lora*h*(d_nope + d_v);
  O: h*d_v*d.
- Embeddings: an input table of V*d; an LM head of V*d unless tied.
- Norms (2*d per layer + d) and routers (d*E per MoE layer) are counted; biases are not (< 0.1%).
"""

from __future__ import annotations

import numpy as np
import polars as pl


def _c(name: str) -> pl.Expr:
    return pl.col(name).fill_null(0).cast(pl.Float64)


INDEXER_BYTES_PER_ELEMENT = 1.0 + 4.0 / 128.0
"""Bytes per element of DeepSeek-V3.2's lightning-indexer key cache: FP8 e4m3 with one 4-byte scale per 128 values
(deepseek-ai/DeepSeek-V3.2-Exp inference/kernel.py, fp8_index; AIConfigurator indexer_cache_entry_bytes = 132 for
128 dims). [B]"""

KERNELS_PER_PART: dict[str, float] = {
    "gqa_attention": 4.0, "mla_attention": 9.0, "dense_ffn": 3.0, "moe_ffn": 5.0, "shared_expert": 2.0,
    "per_pass": 4.0, "mtp_projection": 2.0, "eagle_fusion": 1.0,
}
"""Kernels one decode forward pass launches per part of a decoder layer (collectives excluded: their latency is in
:mod:`econ.physics.communication`). [kernels]

- ``gqa_attention`` 4: RMSNorm, QKV GEMM, attention (RoPE and the KV-cache write fused), O projection.
- ``mla_attention`` 9: TensorRT-LLM's DeepSeek-R1 min-latency layer lists Fuse_A GEMM, two RMSNorms, UQ_QR GEMM,
  UK BGEMM, concat KV + RoPE, MLA generation attention, UV GEMM and WO GEMM before the fused all-reduce
  (NVIDIA/TensorRT-LLM docs/source/blogs/tech_blog/blog1_Pushing_Latency_Boundaries_Optimizing_DeepSeek-R1_
  Performance_on_NVIDIA_B200_GPUs.md, 2025: 13 modules per MoE layer, several fused).
- ``dense_ffn`` 3: RMSNorm, gate/up GEMM (SiLU fused), down GEMM. With ``gqa_attention`` a Llama layer is 7
  kernels: Hazy Research counts ~100 kernels in a Llama-3.2-1B forward (16 layers, ~6 per layer) in vLLM and SGLang
  ("Look Ma, No Bubbles!", hazyresearch.stanford.edu/blog/2025-05-27-no-bubbles).
- ``moe_ffn`` 5: RMSNorm, router GEMM, top-k with token permutation, grouped GEMM 1 (activation fused), grouped
  GEMM 2 with un-permute and reduction (TensorRT-LLM blog 1: router GEMM + topK, routed experts; vLLM fused_moe:
  moe_align_block_size, two grouped GEMMs, moe_sum).
- ``shared_expert`` 2: its gate/up and down GEMMs (TensorRT-LLM blog 1 runs it on its own stream).
- ``per_pass`` 4: embedding gather, final RMSNorm, LM-head GEMM, sampling.
- ``mtp_projection`` 2 (an MTP module's two input RMSNorms fused + its 2d x d projection, DeepSeek-V3 report
  arXiv:2412.19437 sec. 2.2), ``eagle_fusion`` 1 (an EAGLE head's fusion layer, arXiv:2401.15077).
A stated modelling choice: engines fuse differently; the per-kernel latency they are multiplied by is calibrated
(``Assumptions.kernel_latency_s``)."""


def derive_architecture(models: pl.DataFrame) -> pl.DataFrame:
    """Add derived parameter, KV and FLOP columns to a validated model table.

    Parameters
    ----------
    models : pl.DataFrame
        Rows of ``data/models.csv`` (see ``data/README.md``).

    Returns
    -------
    pl.DataFrame with these columns added (counts are parameters, not bytes):
    ``num_moe_layers``, ``num_dense_layers``, ``attention_params_per_layer``,
    ``routed_expert_params`` (one expert of one layer), ``routed_params_total``,
    ``embedding_params`` (input table), ``lm_head_params`` (0 if tied), ``total_params``,
    ``dense_params_read`` (everything a decode step streams except routed experts and the input
    table, which is only gathered), ``active_matmul_params`` (weights multiplied per token: 2 FLOP
    each), ``kv_elements_per_token_per_layer``, ``kv_shard_heads`` (how many ways TP can split the
    cache without replicating it: h_kv for GQA, 1 for MLA's shared latent),
    ``num_global_layers``, ``sliding_window_tokens`` (0 = none),
    ``attention_flop_per_context_token_decode`` / ``_prefill`` (per layer, per query token, per
    attended context token), ``log_expert_miss`` (ln(1 - k/E), 0 for dense; :func:`log_expert_miss`),
    ``mtp_module_params`` / ``mtp_module_active_params`` (one multi-token-prediction module: a decoder
    layer of the model's own kind, MoE for an MoE model, plus its 2d x d projection and norms; the
    embedding and output head are shared with the model: DeepSeek-V3 report arXiv:2412.19437 sec. 2.2),
    ``draft_head_params`` (an EAGLE-style draft head: one dense decoder layer with the model's dense FFN
    width and a 2d x d fusion layer; Li et al., EAGLE, arXiv:2401.15077), ``forward_kernels`` (kernels one
    forward pass launches, :data:`KERNELS_PER_PART`), ``mtp_module_kernels`` and ``draft_head_kernels`` (one pass
    of an MTP module and of an EAGLE head); sparse attention (DeepSeek-V3.2 DSA, ``index_topk`` > 0):
    ``index_topk`` (keys each query attends, 0 = dense), ``indexer_flop_per_context_token`` (2 x index heads x index
    head dim per query-key pair per layer, at FP8) and ``indexer_bytes_per_token_per_layer`` (its key cache);
    ``attention_width`` (attention heads x head size; the hidden size for MLA, whose configs state no head size:
    NVIDIA AIConfigurator's ``h``, sdk/utils.py @095f58a5) and ``dispatch_workspace_width`` (the hidden size for MLA
    MoE models, whose TensorRT-LLM MoE holds a block-scale dispatch workspace; 0 otherwise), read by
    :func:`econ.physics.memory.trtllm_reserved_bytes`.

    Notes
    -----
    Attention FLOPs: GQA/MHA 4*h*d_h per (query, key) pair (QK^T and AV, 2 FLOP per MAC). MLA decode
    with absorbed projections attends over the latent: 2*h*(2*r_kv + d_rope) (DESIGN.md; DeepSeek-V2
    paper, appendix on absorbed inference); MLA prefill runs un-absorbed: 2*h*(d_nope + d_rope + d_v).
    """
    d = _c("hidden_size")
    h = _c("num_attention_heads")
    hkv = _c("num_kv_heads")
    dh = _c("head_dim")
    is_mla = pl.col("attention_type") == "mla"
    qk = _c("qk_nope_head_dim") + _c("qk_rope_head_dim")
    q_mla = pl.when(_c("q_lora_rank") > 0).then(d * _c("q_lora_rank") + _c("q_lora_rank") * h * qk).otherwise(d * h * qk)
    kv_mla = d * (_c("kv_lora_rank") + _c("qk_rope_head_dim")) + _c("kv_lora_rank") * h * (_c("qk_nope_head_dim") + _c("v_head_dim"))
    o_mla = h * _c("v_head_dim") * d
    attn_gqa = d * h * dh + 2 * d * hkv * dh + h * dh * d
    attn = pl.when(is_mla).then(q_mla + kv_mla + o_mla).otherwise(attn_gqa)

    L = _c("num_layers")
    E = _c("num_experts")
    moe_layers = pl.when(E > 0).then(((L - _c("first_k_dense_layers")) / _c("moe_layer_interval")).floor()).otherwise(0.0)
    dense_layers = L - moe_layers
    expert = 3 * d * _c("moe_intermediate_size")
    shared = _c("num_shared_experts") * 3 * d * _c("shared_expert_intermediate_size")
    router = d * E
    dense_ffn = 3 * d * _c("dense_intermediate_size")
    embed = _c("vocab_size") * d
    head = pl.when(pl.col("tie_word_embeddings")).then(0.0).otherwise(embed)
    norms = 2 * d * L + d
    routed_total = moe_layers * E * expert
    non_routed = L * attn + moe_layers * (shared + router) + dense_layers * dense_ffn + norms
    total = non_routed + routed_total + embed + head
    # The LM head is multiplied every token; with tied embeddings that matrix is the input table.
    head_matmul = embed
    active_matmul = L * attn + moe_layers * (shared + router + _c("experts_per_token") * expert) + dense_layers * dense_ffn + head_matmul

    kv_elems = pl.when(is_mla).then(_c("kv_lora_rank") + _c("qk_rope_head_dim")).otherwise(2 * hkv * dh)
    kv_shard = pl.when(is_mla).then(1.0).otherwise(hkv)
    n_sliding = pl.when(_c("sliding_window_tokens") > 0).then(_c("num_sliding_layers")).otherwise(0.0)
    attn_dec = pl.when(is_mla).then(2 * h * (2 * _c("kv_lora_rank") + _c("qk_rope_head_dim"))).otherwise(4 * h * dh)
    attn_pre = pl.when(is_mla).then(2 * h * (qk + _c("v_head_dim"))).otherwise(4 * h * dh)
    miss = (1.0 - _c("experts_per_token") / pl.max_horizontal(E, pl.lit(1e-30))).clip(lower_bound=1e-300).log()
    moe_ffn = shared + router + E * expert  # one MoE layer's FFN, every routed expert
    moe_ffn_active = shared + router + _c("experts_per_token") * expert
    is_moe = E > 0
    mtp_params = attn + pl.when(is_moe).then(moe_ffn).otherwise(dense_ffn) + 2 * d * d + 3 * d
    mtp_active = attn + pl.when(is_moe).then(moe_ffn_active).otherwise(dense_ffn) + 2 * d * d
    head_params = attn + dense_ffn + 2 * d * d + 2 * d
    idx_heads, idx_dim = _c("index_n_heads"), _c("index_head_dim")
    dsa = _c("index_topk") > 0
    k = KERNELS_PER_PART
    k_attn = pl.when(is_mla).then(k["mla_attention"]).otherwise(k["gqa_attention"])
    k_moe = k["moe_ffn"] + pl.when(_c("num_shared_experts") > 0).then(k["shared_expert"]).otherwise(0.0)
    k_dense = pl.when(_c("dense_intermediate_size") > 0).then(k["dense_ffn"]).otherwise(0.0)
    forward_kernels = L * k_attn + moe_layers * k_moe + dense_layers * k_dense + k["per_pass"]
    mtp_kernels = k_attn + pl.when(is_moe).then(k_moe).otherwise(k["dense_ffn"]) + k["mtp_projection"]
    head_kernels = k_attn + k["dense_ffn"] + k["eagle_fusion"]
    return models.with_columns(  # index_topk stays as the CSV has it (empty = dense; the engine reads empty as 0)
        pl.when(dsa).then(2.0 * idx_heads * idx_dim).otherwise(0.0).alias("indexer_flop_per_context_token"),
        pl.when(dsa).then(idx_dim * INDEXER_BYTES_PER_ELEMENT).otherwise(0.0).alias("indexer_bytes_per_token_per_layer"),
        forward_kernels.alias("forward_kernels"),
        mtp_kernels.alias("mtp_module_kernels"),
        head_kernels.alias("draft_head_kernels"),
        pl.when(is_mla).then(d).otherwise(h * dh).alias("attention_width"),
        pl.when(is_mla & is_moe).then(d).otherwise(0.0).alias("dispatch_workspace_width"),
        miss.alias("log_expert_miss"),
        mtp_params.alias("mtp_module_params"),
        mtp_active.alias("mtp_module_active_params"),
        head_params.alias("draft_head_params"),
        moe_layers.alias("num_moe_layers"),
        dense_layers.alias("num_dense_layers"),
        attn.alias("attention_params_per_layer"),
        expert.alias("routed_expert_params"),
        routed_total.alias("routed_params_total"),
        embed.alias("embedding_params"),
        head.alias("lm_head_params"),
        total.alias("total_params"),
        (non_routed + head_matmul).alias("dense_params_read"),
        active_matmul.alias("active_matmul_params"),
        kv_elems.alias("kv_elements_per_token_per_layer"),
        kv_shard.alias("kv_shard_heads"),
        (L - n_sliding).alias("num_global_layers"),
        n_sliding.alias("num_sliding_layers_eff"),
        _c("sliding_window_tokens").alias("sliding_window_tokens_eff"),
        attn_dec.alias("attention_flop_per_context_token_decode"),
        attn_pre.alias("attention_flop_per_context_token_prefill"),
    )


def expected_experts_touched(batch_tokens, num_experts, experts_per_token, log_miss=None):
    """Expected number of distinct routed experts a batch activates in one MoE layer.

    Parameters
    ----------
    batch_tokens : scalar or array, broadcastable
        Tokens routed together in one step (decode: the batch size). [tokens]
    num_experts, experts_per_token : scalar or array
        E routed experts per layer and top-k. For dense models (E = 0) the result is 0.
    log_miss : scalar or array, optional
        ln(1 - k/E), precomputed per model (``log_expert_miss`` of :func:`derive_architecture`); the
        result is the same, one logarithm cheaper.

    Returns
    -------
    scalar or array [experts], in [0, E].

    Notes
    -----
    E_touched(B) = E * (1 - (1 - k/E)^B), assuming uniform, independent routing (DESIGN.md). Real
    routers are skewed, so fewer distinct experts are touched at small B; this is an upper bound on the
    weight bytes read, i.e. conservative for cost.
    """
    if log_miss is None:
        log_miss = log_expert_miss(num_experts, experts_per_token)
    return -num_experts * np.expm1(batch_tokens * log_miss)


def log_expert_miss(num_experts, experts_per_token):
    """ln of the chance that one token does not route to a given expert, ln(1 - k/E) (0 for dense models).

    Returns
    -------
    scalar or array [-], <= 0; floored at ln(1e-300) when k = E (every expert always touched).
    """
    e = np.maximum(num_experts, 1e-30)
    return np.log(np.maximum(1.0 - experts_per_token / e, 1e-300))


def attended_tokens(context_tokens, num_global_layers, num_sliding_layers, sliding_window_tokens, index_topk=0.0):
    """Context tokens one query attends (softmax over their scores), summed over layers.

    Parameters
    ----------
    context_tokens : scalar or array [tokens]
    num_global_layers, num_sliding_layers : scalar or array [layers]
    sliding_window_tokens : scalar or array [tokens] (ignored where num_sliding_layers = 0)
    index_topk : scalar or array [tokens], keys a sparse-attention indexer keeps per query (0 = dense)

    Returns
    -------
    scalar or array [token-layers]: L_global * min(c, topk) + L_sliding * min(c, window).

    Notes
    -----
    DeepSeek-V3.2's DSA attends the top 2,048 keys its lightning indexer selects (deepseek-ai/DeepSeek-V3.2-Exp
    config index_topk = 2048; tech report: O(L^2) -> O(L k)); below 2,048 tokens it attends everything.
    Orchestration helper (np.where), not a pl.Expr kernel.
    """
    main = np.where(index_topk > 0, np.minimum(context_tokens, index_topk), context_tokens)
    return num_global_layers * main + num_sliding_layers * np.minimum(context_tokens, sliding_window_tokens)


def held_tokens(context_tokens, num_global_layers, num_sliding_layers, sliding_window_tokens):
    """Context tokens held in the KV cache, summed over layers (every token of global layers, the window of
    sliding ones). [token-layers]"""
    return num_global_layers * context_tokens + num_sliding_layers * np.minimum(context_tokens, sliding_window_tokens)


def kv_bytes_per_sequence(context_tokens, kv_elements_per_token_per_layer, kv_bytes_per_element,
                          num_global_layers, num_sliding_layers, sliding_window_tokens,
                          indexer_bytes_per_token_per_layer=0.0):
    """KV-cache bytes one sequence of ``context_tokens`` holds (whole model, before any sharding).

    Parameters
    ----------
    context_tokens : scalar or array [tokens]
    kv_elements_per_token_per_layer : scalar or array
        2*h_kv*d_h for MHA/GQA; r_kv + d_rope for MLA (576 for DeepSeek-V3). [elements]
    kv_bytes_per_element : scalar or array [B]
    num_global_layers, num_sliding_layers, sliding_window_tokens : see :func:`held_tokens`.
    indexer_bytes_per_token_per_layer : scalar or array, a sparse-attention indexer's key cache (DeepSeek-V3.2:
        132 B), held for every token of the global layers [B]

    Returns
    -------
    scalar or array [B].

    Notes
    -----
    MHA/GQA: 2 * L * h_kv * d_h * b_kv per token; MLA: L * (r_kv + d_rope) * b_kv (DESIGN.md);
    sliding-window layers hold min(context, window) tokens. Llama-3.1-8B bf16: 131,072 B/token.
    """
    tok = held_tokens(context_tokens, num_global_layers, num_sliding_layers, sliding_window_tokens)
    return tok * kv_elements_per_token_per_layer * kv_bytes_per_element \
        + num_global_layers * context_tokens * indexer_bytes_per_token_per_layer


def kv_bytes_read_per_query(context_tokens, kv_elements_per_token_per_layer, kv_bytes_per_element,
                            num_global_layers, num_sliding_layers, sliding_window_tokens, index_topk=0.0,
                            indexer_bytes_per_token_per_layer=0.0):
    """KV-cache bytes one decoded token reads: the keys it attends and, with sparse attention, the indexer's
    keys of the whole context. [B]

    Notes
    -----
    Dense attention reads what the cache holds (:func:`kv_bytes_per_sequence`). DeepSeek-V3.2 reads 2,048 latents
    plus 132 B of indexer key per context token per layer: at 128K context 2.4 MB + 17.3 MB = 19.7 MB per layer
    instead of 151 MB dense with a BF16 latent (7.7x fewer; derived from the released config).
    """
    tok = attended_tokens(context_tokens, num_global_layers, num_sliding_layers, sliding_window_tokens, index_topk)
    return tok * kv_elements_per_token_per_layer * kv_bytes_per_element \
        + num_global_layers * context_tokens * indexer_bytes_per_token_per_layer


def attention_flop_per_token(context_tokens, attention_flop_per_context_token, num_global_layers,
                             num_sliding_layers, sliding_window_tokens, index_topk=0.0):
    """Attention FLOPs of one query token over ``context_tokens`` of context (all layers).

    Parameters
    ----------
    context_tokens : scalar or array [tokens]
    attention_flop_per_context_token : scalar or array
        Per layer, per (query, key) pair: 4*h*d_h (GQA) or the MLA forms. [FLOP]
    num_global_layers, num_sliding_layers, sliding_window_tokens : see :func:`attended_tokens`.

    Returns
    -------
    scalar or array [FLOP]. DESIGN.md: 4 * L * h * d_h * context for MHA/GQA.
    """
    tok = attended_tokens(context_tokens, num_global_layers, num_sliding_layers, sliding_window_tokens, index_topk)
    return tok * attention_flop_per_context_token
