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

PRECISIONS: tuple[str, ...] = ("bf16", "fp8", "fp4")
WEIGHT_BYTES_PER_PARAM: dict[str, float] = {"bf16": 2.0, "fp8": 1.0, "fp4": 0.5625}
DEFAULT_KV_PRECISION: dict[str, str] = {"bf16": "bf16", "fp8": "fp8", "fp4": "fp8"}
"""KV-cache precision that goes with a weight precision by default: fp8 KV with fp8/fp4 weights
(vLLM/TensorRT-LLM fp8 KV cache); an fp4 KV cache is not a mainstream serving option."""
KV_BYTES_PER_ELEMENT: dict[str, float] = {"bf16": 2.0, "fp8": 1.0}
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
}
"""Bytes per stored weight, scales included. [B]

- bf16 2; fp8 1 (DeepSeek-V3's fp32 scale per 128 x 128 block adds 4/16384 B, neglected); int8 1
  (per-channel scales neglected).
- int4 (W4A16 AWQ/GPTQ, group 128): 4 bits + an fp16 scale and an fp16 zero per 128 weights
  = 4.25 bits = 0.53125 B (Lin et al., AWQ, arXiv:2306.00978; the AutoAWQ/GPTQ default group size).
- mxfp4 (OCP MX v1.0): 4-bit E2M1 + one 8-bit E8M0 scale per 32 = 4.25 bits = 0.53125 B (OCP
  Microscaling Formats spec v1.0, 2023; the format of gpt-oss's expert weights, OpenAI gpt-oss model card).
- nvfp4: 4-bit E2M1 + one FP8 E4M3 scale per 16 = 4.5 bits = 0.5625 B (NVIDIA, "Introducing NVFP4",
  2025-06); the per-tensor fp32 scale is negligible.
"""

FORMAT_BITS: dict[str, int] = {"bf16": 16, "fp8": 8, "int8": 8, "int4": 4, "mxfp4": 4, "nvfp4": 4}
"""Width of each weight format, to compare with a matmul precision (:data:`PRECISION_BITS`). [bit]"""
PRECISION_BITS: dict[str, int] = {"bf16": 16, "fp8": 8, "fp4": 4}
"""Width of the operands of each matmul precision (the tensor-core format). [bit]"""
FORMAT_PRECISION: dict[str, str] = {"bf16": "bf16", "fp8": "fp8", "int8": "fp8", "int4": "fp4", "mxfp4": "fp4",
                                    "nvfp4": "fp4"}
"""The matmul precision a weight format's own width feeds (int8 runs at the fp8 rate on Hopper/Blackwell)."""
DEFAULT_WEIGHT_FORMAT: dict[str, str] = {"bf16": "bf16", "fp8": "fp8", "fp4": "nvfp4"}
"""Weights stored in the matmul precision's own format unless stated otherwise (fp4 = NVFP4, the format
of the Blackwell fp4 peak)."""

CHECKPOINT_FORMATS: dict[str, tuple[str | None, str | None]] = {
    "bf16": (None, None), "fp8": (None, None), "mxfp4": ("bf16", "mxfp4"),
}
"""models.csv ``native_weight_dtype`` -> (non-routed, routed-expert) formats a release pins whatever the
matmul precision (None = follow the precision). gpt-oss ships MXFP4 experts and bf16 attention, embeddings
and everything else, and is served that way (OpenAI gpt-oss model card, 2025-08: "MXFP4 quantization of the
MoE weights"; a 120b fits one 80 GB GPU). bf16 and fp8 checkpoints are converted freely, so a stated
precision sets their weights."""


def check_format(name: str, values, allowed=tuple(WEIGHT_FORMATS)) -> None:
    """Raise InvalidInputError if any of ``values`` is not a weight format."""
    for v in np.unique(np.asarray(values, dtype=object)):
        if v not in allowed:
            raise InvalidInputError(f"{name}={v!r} is not one of {list(allowed)}")
