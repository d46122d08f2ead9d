"""Long prompts (issue 22.3): context parallelism (ring attention), chunked prefill beside decode, a prefill part.

Pure, vectorized kernels (numpy broadcasting; times in seconds, FLOPs, bytes). FLOP counts come from
:func:`econ.physics.kv_tiers.prefill_flop`; rates are achieved rates (peak x efficiency) chosen by the caller.

- *Context parallelism* (ring attention, pass-KV): the prompt is split into ``cp`` shards (load-balanced for the
  causal mask, e.g. zig-zag); each rank does 1/cp of the linear FLOPs and 1/cp of the attention FLOPs, and in
  ``cp - 1`` ring steps receives the KV block of another shard while it computes attention on the block it holds,
  so the transfer hides behind attention when a block's attention takes longer than its transfer (Liu, Zaharia,
  Abbeel, "Ring Attention with Blockwise Transformers", arXiv:2310.01889, 2023; Yang et al., "Context Parallelism
  for Scalable Million-Token Inference", arXiv:2411.01783, 2024: pass-KV, 1M-token Llama3-405B prefill in 77 s on
  128 H100 = 16 nodes, 93% parallelization efficiency).
- *Chunked prefill* (Sarathi-Serve, Agrawal et al., OSDI 2024): a long prompt is prefilled ``chunk_tokens`` at a
  time, each chunk riding in a decode iteration; the iteration is bounded by memory (the decode batch's weight and
  KV reads) or by compute (decode FLOPs plus the chunk's), so decode users see the longer iteration while the
  prompt streams in and its TTFT is the number of chunks times the iteration.
- *A prefill part* in a disaggregated deployment (a GDDR compute part beside HBM decode GPUs, the role NVIDIA gave
  Rubin CPX): the prompt is prefilled on the prefill part, then its KV crosses the network to the decode GPUs.
"""

from __future__ import annotations

import numpy as np

from econ.validate import require_in_range


def ring_attention_prefill_s(linear_flop, attention_flop, cp, linear_flop_per_s, attention_flop_per_s,
                             kv_block_bytes, link_bytes_per_s, latency_s=0.0):
    """Prefill time of one prompt split over ``cp`` context-parallel ranks (ring attention, pass-KV).

    Parameters
    ----------
    linear_flop : scalar or array [FLOP], the prompt's matmul FLOPs (2 P_active S)
    attention_flop : scalar or array [FLOP], its causal attention FLOPs
    cp : scalar or array, >= 1 [ranks] (each rank may itself be a tensor-parallel group)
    linear_flop_per_s, attention_flop_per_s : scalar or array, > 0 [FLOP/s], achieved rates of ONE rank
    kv_block_bytes : scalar or array [B], KV bytes one rank receives per ring step (a shard's KV, per rank member:
        (S / cp) x KV bytes per token / tensor-parallel size)
    link_bytes_per_s : scalar or array, > 0 [B/s], the link a ring step crosses (scale-out per GPU across nodes)
    latency_s : scalar or array, >= 0 [s], per ring step

    Returns
    -------
    (time_s, exposed_comm_s): both [s]. time = linear / (cp r_lin) + max(attention / (cp r_att), (cp - 1)(block / bw
    + latency)); exposed = the part of the ring transfer attention does not hide.

    Raises
    ------
    InvalidInputError
        ``cp`` < 1, a rate or bandwidth <= 0.

    Notes
    -----
    The tensor-parallel all-reduces inside a rank are not counted (over NVLink they are small beside a long prompt's
    attention); nor is the non-causal imbalance a naive (not zig-zag) split would add.
    """
    cp = require_in_range("cp", cp, 1, 1e6, "ranks")
    require_in_range("linear_flop_per_s", linear_flop_per_s, 0.0, np.inf, "FLOP/s", lo_inclusive=False)
    require_in_range("attention_flop_per_s", attention_flop_per_s, 0.0, np.inf, "FLOP/s", lo_inclusive=False)
    require_in_range("link_bytes_per_s", link_bytes_per_s, 0.0, np.inf, "B/s", lo_inclusive=False)
    lin = np.asarray(linear_flop, dtype=float) / (cp * linear_flop_per_s)
    att = np.asarray(attention_flop, dtype=float) / (cp * attention_flop_per_s)
    comm = (cp - 1.0) * (np.asarray(kv_block_bytes, dtype=float) / link_bytes_per_s + latency_s)
    return lin + np.maximum(att, comm), np.maximum(comm - att, 0.0)


def chunked_prefill(prompt_tokens, chunk_tokens, decode_mem_s, decode_flop_s, chunk_flop_s):
    """A long prompt prefilled in chunks inside decode iterations (Sarathi-Serve): its TTFT and the decode slowdown.

    Parameters
    ----------
    prompt_tokens : scalar or array, >= 1 [tokens]
    chunk_tokens : scalar or array, >= 1 [tokens per iteration]
    decode_mem_s : scalar or array [s], the decode batch's memory time per iteration (weights + KV reads)
    decode_flop_s : scalar or array [s], its compute time per iteration
    chunk_flop_s : scalar or array [s], the compute time of one chunk's prefill (mean over the prompt's chunks)

    Returns
    -------
    (ttft_s, iteration_s, tpot_inflation): ttft = ceil(S / C) x iteration; iteration = max(decode_mem,
    decode_flop + chunk_flop) [s]; inflation = iteration / max(decode_mem, decode_flop) [-] (what every decode user's
    time per output token is multiplied by while the prompt streams in).

    Raises
    ------
    InvalidInputError
        ``prompt_tokens`` or ``chunk_tokens`` below 1.

    Notes
    -----
    The chunk's weight reads are shared with the decode batch (one pass over the weights per iteration), so a chunk
    adds compute, not memory traffic: chunks up to the point where decode + chunk FLOPs reach the memory time are
    nearly free (Sarathi-Serve's "stall-free" batching); bigger chunks cut TTFT and slow decode.
    """
    s = require_in_range("prompt_tokens", prompt_tokens, 1, np.inf, "tokens")
    c = require_in_range("chunk_tokens", chunk_tokens, 1, np.inf, "tokens")
    base = np.maximum(decode_mem_s, decode_flop_s)
    it = np.maximum(decode_mem_s, np.asarray(decode_flop_s, dtype=float) + chunk_flop_s)
    return np.ceil(s / c) * it, it, it / base


def disaggregated_prefill_ttft_s(prefill_s, kv_bytes, link_bytes_per_s, overlap=False):
    """TTFT when a prompt is prefilled on a prefill part and its KV shipped to the decode accelerators.

    Parameters
    ----------
    prefill_s : scalar or array, >= 0 [s], the prompt's prefill time on the prefill unit (the engine's ``ttft_s`` of
        the prompt alone there: :func:`econ.engine.evaluate`)
    kv_bytes : scalar or array [B], the prompt's KV (whole model)
    link_bytes_per_s : scalar or array, > 0 [B/s], prefill-to-decode bandwidth (all links of the unit)
    overlap : bool or bool array
        True: layer-by-layer transfer overlapped with the prefill (the KV of layer l leaves while l+1 computes),
        TTFT = max(prefill, transfer); False: transfer after the prefill (the sum).

    Returns
    -------
    (ttft_s, prefill_s, transfer_s) [s].
    """
    require_in_range("prefill_s", prefill_s, 0.0, np.inf, "s")
    require_in_range("link_bytes_per_s", link_bytes_per_s, 0.0, np.inf, "B/s", lo_inclusive=False)
    pre = np.asarray(prefill_s, dtype=float)
    xfer = np.asarray(kv_bytes, dtype=float) / link_bytes_per_s
    return np.where(overlap, np.maximum(pre, xfer), pre + xfer), pre, xfer


__all__ = ["ring_attention_prefill_s", "chunked_prefill", "disaggregated_prefill_ttft_s"]
