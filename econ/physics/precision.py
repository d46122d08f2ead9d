"""Bytes per element of each precision. Floats, never ints: fp4 carries scale overhead.

Sources
-------
- bf16: 2 bytes.
- fp8 (E4M3/E5M2): 1 byte. Block scales (DeepSeek-V3: one fp32 per 128x128 block) add 4/16384 bytes
  per weight (0.02%), neglected.
- fp4: NVFP4 stores 4-bit E2M1 values with one FP8 (E4M3) scale per 16 elements: 4 + 8/16 = 4.5 bits
  = 0.5625 bytes (NVIDIA, "Introducing NVFP4", developer.nvidia.com blog, 2025-06). OCP MXFP4 (one
  E8M0 scale per 32) is 4.25 bits; NVFP4 is the format of the Blackwell fp4 peak and the conservative of
  the two.
"""

from __future__ import annotations

import numpy as np

from econ.errors import InvalidInputError
from econ import vocabulary as V
from econ.vocabulary import KV_PRECISIONS

PRECISIONS: tuple[str, ...] = ("bf16", "fp8", "fp4")
WEIGHT_BYTES_PER_PARAM: dict[str, float] = {"bf16": 2.0, "fp8": 1.0, "fp4": 0.5625}
DEFAULT_KV_PRECISION: dict[str, str] = {"bf16": "bf16", "fp8": "fp8", "fp4": "fp8"}
"""KV-cache precision that goes with a weight precision by default: fp8 KV with fp8/fp4 weights
(vLLM/TensorRT-LLM fp8 KV cache); an fp4 KV cache is an option to set (:data:`KV_BYTES_PER_ELEMENT`), not the
mainstream default."""
KV_BYTES_PER_ELEMENT: dict[str, float] = {
    "bf16": 2.0, "fp8": 1.0, "int8": 1.03125, "int4": 0.53125, "mxfp4": 0.53125, "nvfp4": 0.5625,
}
"""Bytes per stored KV-cache element, block scales included; the one table of KV-cache formats (its keys, in this
order, are :data:`econ.vocabulary.KV_PRECISIONS` and the engine's KV codes). [B]

- bf16 2. fp8 (E4M3) 1: one per-tensor (or per-head) fp32 scale per layer, negligible (vLLM ``--kv-cache-dtype fp8``,
  TensorRT-LLM FP8 KV cache).
- int8 1.03125: 8-bit integers, per-head per-token asymmetric, one fp16 scale and one fp16 zero point per
  head vector of 128 elements: 8 + 32/128 = 8.25 bits (LMDeploy KV int8 quantization, "per-head per-token
  asymmetric"; head_dim 128, as Llama-3 and Qwen).
- int4 0.53125: 4-bit integers in the same per-head per-token asymmetric scheme (one group = one head vector of
  128, fp16 scale and zero): 4 + 32/128 = 4.25 bits (LMDeploy KV int4). KIVI (arXiv:2402.02750) quantizes in groups of 32 (keys per channel, values per token) with
  fp16 scale and zero: 4 + 32/32 = 5 bits = 0.625 B; the coarser LMDeploy group is the one deployed in a server.
- mxfp4 0.53125: 4-bit E2M1 + one 8-bit E8M0 scale per 32-element block = 4.25 bits (OCP Microscaling Formats
  (MX) Specification v1.0, 2023).
- nvfp4 0.5625: 4-bit E2M1 + one FP8 E4M3 scale per 16-element block = 4.5 bits (NVIDIA, "Introducing NVFP4", 2025-06;
  TensorRT-LLM "NVFP4 KV Cache"); the per-tensor fp32 scale is negligible.
"""
KV_ATTENTION_PRECISION: dict[str, str] = {
    "bf16": "bf16", "fp8": "fp8", "int8": "bf16", "int4": "bf16", "mxfp4": "bf16", "nvfp4": "fp8",
}
"""Matmul precision the attention-score matmuls (QK^T, PV) run at for each KV-cache format, before the cap at the
weights' precision (:func:`econ.physics.performance.attention_peak_flop_per_s`).

Every narrow KV format is *dequantized* inside the attention kernel: the cache costs its bytes (capacity and HBM
reads) and the matmuls run at this precision. fp8: FP8 attention (vLLM FlashAttention-3 and TensorRT-LLM run QK^T
and PV in fp8 with an fp8 cache). int8 / int4 (LMDeploy, KIVI) and mxfp4 are dequantized to fp16/bf16. nvfp4:
TensorRT-LLM dequantizes the NVFP4 cache to FP8 and runs FP8 attention (TensorRT-LLM "NVFP4 KV Cache", Blackwell).
An accelerator without fp8 units attends at bf16 (the existing fallback), so no (accelerator, KV format) pair is
refused: a chip without native support dequantizes in software and only the bytes change."""
KV_NATIVE_GENERATIONS: dict[str, tuple[str, ...]] = {
    "bf16": ("ampere", "hopper", "blackwell", "ada", "cdna3", "cdna4", "tpu", "gaudi", "trainium"),
    "fp8": ("hopper", "blackwell", "ada", "cdna3", "cdna4", "gaudi", "trainium"),
    "int8": (), "int4": (), "mxfp4": (),
    "nvfp4": ("blackwell",),
}
"""Accelerator generations whose serving engines ship attention kernels that read each KV format natively, for the
help text and the report; the engine does not refuse the other pairs (see :data:`KV_ATTENTION_PRECISION`: it prices
them dequantized). fp8 KV: Hopper, Ada, Blackwell (FP8 tensor cores; vLLM / TensorRT-LLM FP8 KV cache), AMD CDNA3+
(MI300 FP8; vLLM ROCm fp8 KV), Gaudi 2/3 and Trainium2 (FP8 units). NVFP4 KV: Blackwell only (TensorRT-LLM's NVFP4
KV cache needs FP4 tensor cores). int8 / int4 / mxfp4 KV: software (de)quantization on any GPU (LMDeploy, KIVI), no
native attention kernel: empty."""
if tuple(KV_BYTES_PER_ELEMENT) != KV_PRECISIONS or tuple(KV_ATTENTION_PRECISION) != KV_PRECISIONS:
    raise ImportError("econ.physics.precision KV tables and econ.vocabulary.KV_PRECISIONS disagree")  # one list
PEAK_COLUMN: dict[str, str] = {p: f"{p}_peak_flop_per_s" for p in PRECISIONS}
"""Accelerator column holding the dense matmul peak used at each precision (weights and
activations in that format: fp8 x fp8, fp4 x fp4)."""


def check_precision(name: str, values, allowed=PRECISIONS) -> None:
    """Raise InvalidInputError if any of ``values`` is not an allowed precision name."""
    for v in np.unique(np.asarray(values, dtype=object)):
        if v not in allowed:
            raise InvalidInputError(f"{name}={v!r} is not one of {list(allowed)}")


WEIGHT_FORMATS: dict[str, float] = {
    "bf16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.53125, "mxfp4": 0.53125, "nvfp4": 0.5625,
    "fp8_block": 1.0 + 4.0 / 16384.0,
}
"""Bytes per stored weight, scales included. [B]

- bf16 2; fp8 1 (one per-tensor or per-channel scale, neglected: the FP8 checkpoints of TensorRT Model Optimizer,
  NVIDIA's MLPerf submissions); int8 1 (per-channel scales neglected).
- fp8_block: FP8 E4M3 with one fp32 scale per 128 x 128 block of weights = 1 + 4/16384 B (DeepSeek-V3 report,
  arXiv:2412.19437 sec. 3.3.2, "fine-grained quantization": 128 x 128 weight blocks; the ``quantization_config``
  ``weight_block_size: [128, 128]`` of the released DeepSeek-V3/R1/V3.2 and Kimi-K2 checkpoints). Its bytes are
  fp8's; its routed-expert GEMMs run slower on Hopper (:data:`BLOCK_FP8_MOE_FLOP_FRAC`).
- int4 (W4A16 AWQ/GPTQ, group 128): 4 bits + an fp16 scale and an fp16 zero per 128 weights
  = 4.25 bits = 0.53125 B (Lin et al., AWQ, arXiv:2306.00978; the AutoAWQ/GPTQ default group size).
- mxfp4 (OCP MX v1.0): 4-bit E2M1 + one 8-bit E8M0 scale per 32 = 4.25 bits = 0.53125 B (OCP
  Microscaling Formats spec v1.0, 2023; the format of gpt-oss's expert weights, OpenAI gpt-oss model card).
- nvfp4: 4-bit E2M1 + one FP8 E4M3 scale per 16 = 4.5 bits = 0.5625 B (NVIDIA, "Introducing NVFP4",
  2025-06); the per-tensor fp32 scale is negligible.
"""

if tuple(WEIGHT_FORMATS) != V.WEIGHT_FORMATS:
    raise ImportError("econ.physics.precision.WEIGHT_FORMATS and econ.vocabulary.WEIGHT_FORMATS disagree")  # one list

FORMAT_BITS: dict[str, int] = {"bf16": 16, "fp8": 8, "int8": 8, "int4": 4, "mxfp4": 4, "nvfp4": 4, "fp8_block": 8}
"""Width of each weight format, to compare with a matmul precision (:data:`PRECISION_BITS`). [bit]"""
PRECISION_BITS: dict[str, int] = {"bf16": 16, "fp8": 8, "fp4": 4}
"""Width of the operands of each matmul precision (the tensor-core format). [bit]"""
FORMAT_PRECISION: dict[str, str] = {"bf16": "bf16", "fp8": "fp8", "int8": "fp8", "int4": "fp4", "mxfp4": "fp4",
                                    "nvfp4": "fp4", "fp8_block": "fp8"}
"""The matmul precision a weight format's own width feeds (int8 runs at the fp8 rate on Hopper/Blackwell)."""
DEFAULT_WEIGHT_FORMAT: dict[str, str] = {"bf16": "bf16", "fp8": "fp8", "fp4": "nvfp4"}
"""Weights stored in the matmul precision's own format unless stated otherwise (fp4 = NVFP4, the format
of the Blackwell fp4 peak)."""

CHECKPOINT_FORMATS: dict[str, tuple[str | None, str | None]] = {
    "bf16": (None, None), "fp8": (None, None), "mxfp4": ("bf16", "mxfp4"), "int4": ("bf16", "int4"),
    "fp8_block": (None, None),
}
"""models.csv ``native_weight_dtype`` -> (non-routed, routed-expert) formats a release pins whatever the
matmul precision (None = follow the precision). gpt-oss ships MXFP4 experts and bf16 attention, embeddings
and everything else, and is served that way (OpenAI gpt-oss model card, 2025-08: "MXFP4 quantization of the
MoE weights"; a 120b fits one 80 GB GPU). Kimi-K2-Thinking and Kimi-K2.5 ship INT4 routed experts and bf16 for
the rest ("K2 Thinking is a native INT4 quantization model", quantization-aware training in post-training:
moonshotai/Kimi-K2-Thinking model card, 2025-11; Kimi-K2.5's routed experts are compressed-tensors pack-quantized INT4,
group size 32, in its released safetensors), served by INT4 W4A16 kernels. bf16 and fp8 checkpoints are converted
freely, so a stated precision sets their weights. ``fp8_block`` (DeepSeek-V3/R1/V3.2, Kimi-K2: FP8 released in
128 x 128 blocks) pins nothing either: at an fp8 precision its weights default to that block format
(:data:`NATIVE_FP8_FORMAT`), at any other precision they follow it (NVFP4 releases of DeepSeek-R1 are NVFP4)."""

NATIVE_FP8_FORMAT: dict[str, str] = {"fp8_block": "fp8_block"}
"""models.csv ``native_weight_dtype`` -> the weight format an fp8 precision means for that model by default (absent:
:data:`DEFAULT_WEIGHT_FORMAT`'s ``fp8``): serving DeepSeek's FP8 release at FP8 runs its 128 x 128 block-scaled
weights (``--weight-format fp8`` asks for per-tensor FP8 instead, e.g. a requantized checkpoint)."""

BLOCK_FP8_MOE_FLOP_FRAC: dict[str, float] = {"hopper": 0.568, "blackwell": 0.797}
"""Speed of a routed-expert grouped GEMM on 128 x 128 block-scaled FP8 weights relative to per-tensor FP8, where the
GEMM is compute-bound, by accelerator generation (a factor on the experts' FP8 peak; generations not listed: 1, no
measurement). [-]

Source: NVIDIA's fused-MoE kernel tables (AIConfigurator 0.12, TensorRT-LLM 1.3.0rc20 on H100/H200 and
B200/GB200/B300/GB300; ``data/kernels/moe_efficiency.csv``): the median over matched rows (same accelerator, model,
MoE TP/EP, routing and token count; Mixtral-8x7B and Qwen3-235B shapes) of the per-tensor FP8 latency over the
``fp8_block`` latency at 1,024 or more tokens per expert, where the compute term dominates: Hopper 0.568 (12 pairs,
interquartile 0.48-0.67), Blackwell 0.797 (24 pairs, 0.74-0.82); below 256 tokens per expert, where the weights'
bytes dominate, the two formats run alike (0.98 on Hopper), as this factor on the FLOP term alone gives.
Why: Hopper's tensor cores take one scale per operand, so a block-scaled GEMM rescales each 128-deep partial sum on
the CUDA cores (DeepSeek-V3 report sec. 3.3.2, "promoted to CUDA cores" every 128 elements); Blackwell's tensor cores
apply block scales natively (MXFP8). Dense GEMMs keep their speed (the same tables' dense FP8-block GEMMs at
M >= 1,024 run at a median 0.99-1.07x per-tensor FP8 on H200/H100 and faster on Blackwell,
``data/kernels/gemm_efficiency.csv``), so only the experts' peak changes (:func:`econ.engine.resolve_formats`)."""


def check_format(name: str, values, allowed=tuple(WEIGHT_FORMATS)) -> None:
    """Raise InvalidInputError if any of ``values`` is not a weight format."""
    for v in np.unique(np.asarray(values, dtype=object)):
        if v not in allowed:
            raise InvalidInputError(f"{name}={v!r} is not one of {list(allowed)}")
