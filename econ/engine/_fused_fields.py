"""The columns of the fused kernel's per-combination table (:func:`econ.engine.fused.combination_table`), read by
the kernel (``econ.engine._fused_kernel``) by their index: a module of its own so that both import it without importing
each other (the kernel module imports numba, the table's module must not)."""

from __future__ import annotations

FIELDS = (
    # layout
    "tp", "dp", "pp", "ep", "expert_tp", "num_gpus",
    # model
    "num_moe_layers", "num_experts", "experts_per_token", "routed_expert_params", "log_expert_miss", "hidden_size",
    "num_global_layers", "num_sliding_layers", "sliding_window_tokens", "index_topk",
    "attention_flop_per_context_token_decode", "indexer_flop_per_context_token", "num_attention_heads",
    "forward_kernels", "kv_elements_per_token_per_layer", "indexer_bytes_per_token_per_layer",
    # formats
    "expert_bytes", "kv_bytes_per_element", "attention_peak_flop_per_s",
    # efficiencies
    "activation_bytes", "dispatch_activation_bytes", "combine_activation_bytes", "kernel_launch_latency_s",
    "cuda_graph_max_batch", "kernel_launch_s", "kernel_launch_eager_s", "kernel_latency_s", "overhead_s",
    "sequence_overhead_s", "cpu_overlap_frac", "eta_flop", "moe_tile_rows", "expert_imbalance_factor",
    # DecodeConstants
    "bw_eta", "routed_bw", "peak_eta", "attn_peak_eta", "routed_flop_rate", "imb", "nr_fixed_bytes",
    "nr_token_bytes", "nr_active", "r_active", "indexer_scale", "exp_rate", "tp_layers", "tbo", "overlap", "stage",
    "t_moe_s", "t_layers_s",
    # Collectives (AlphaBeta a1, b1, a2, b2) and MoECollectives' layout
    "tpar_a1", "tpar_b1", "tpar_a2", "tpar_b2", "pipe_a1", "pipe_b1", "pipe_a2", "pipe_b2",
    "mtp_a1", "mtp_b1", "mtp_a2", "mtp_b2", "mst_a1", "mst_b1", "mst_a2", "mst_b2",
    "metp_a1", "metp_b1", "metp_a2", "metp_b2", "a2a_a1", "a2a_b1", "moe_tp", "moe_dp", "moe_ep",
    # capacity and cost
    "kv_replication", "free_hbm_bytes", "usd_per_gpu_hour",
    # speculative decoding with the model's MTP module (Speculation; the draft pass's model and efficiency terms)
    "spec_method", "spec_k", "spec_acceptance", "num_layers", "mtp_module_kernels", "moe_layer_overhead_s",
    "layer_overhead_s", "single_batch_overlap_frac",
)
"""Columns of the per-combination table (:func:`econ.engine.fused.combination_table`), one row per combination; the
kernel reads them by their index (``econ.engine._fused_kernel``)."""
