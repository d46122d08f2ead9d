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
