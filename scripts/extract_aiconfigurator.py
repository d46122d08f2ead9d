#!/usr/bin/env python3
"""Reduce NVIDIA AIConfigurator's measured per-kernel tables to compact, sourced CSVs in data/kernels/.

OFFLINE calibration input only: econ never imports aiconfigurator, and this script is not run in CI.
It reads the parquet tables that the ``aiconfigurator-core`` wheel (Apache-2.0) ships under
``aiconfigurator_core/systems/data/<system>/<op>/<backend>/<version>/`` and writes:

    data/kernels/gemm_efficiency.csv       dense GEMM latency vs (m, n, k, quant) for model-layer shapes
    data/kernels/moe_efficiency.csv        fused MoE (grouped GEMM) latency vs tokens, EP, quant
    data/kernels/attention_efficiency.csv  decode/prefill attention (GQA and MLA) latency vs batch, context
    data/kernels/allreduce.csv             NCCL and framework custom all-reduce latency vs bytes, ranks
    data/kernels/gemm_shapes.csv           which model layers each GEMM (n, k) stands for
    data/kernels/sources.csv               one row per source parquet: path, sha256 (wheel RECORD), as_of

Usage (in a scratch venv that has the wheel plus pandas/pyarrow, e.g. /tmp/aic):

    python3 -m venv /tmp/aic && /tmp/aic/bin/pip install aiconfigurator   # pulls aiconfigurator-core
    /tmp/aic/bin/python scripts/extract_aiconfigurator.py /tmp/aic/lib/python3.11/site-packages

The argument is the site-packages directory (or the ``aiconfigurator_core`` package directory).
Derived columns use econ's datasheet peaks and HBM bandwidths from data/accelerators.csv, so the
efficiencies are directly "fraction of what econ assumes the chip can do". Units: latency in seconds
(the package stores milliseconds: CUDA-event elapsed_time of CUDA-graph replays), bytes, FLOP/s.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "data" / "kernels"

# aiconfigurator system name -> econ accelerator id (data/accelerators.csv)
SYSTEMS = {
    "a100_sxm": "a100-80gb-sxm",
    "h100_sxm": "h100-sxm",
    "h200_sxm": "h200-sxm",
    "b200_sxm": "b200",
    "gb200": "gb200-nvl72",
    "b300_sxm": "b300",
    "gb300": "gb300-nvl72",
}
# Backends kept for every system (TensorRT-LLM) vs for the four systems the issue names (vLLM, SGLang).
CORE_SYSTEMS = ("h100_sxm", "h200_sxm", "b200_sxm", "gb200")
BLACKWELL = ("b200_sxm", "gb200", "b300_sxm", "gb300")
MOE_OTHER_BACKEND_SYSTEMS = ("h200_sxm", "b200_sxm")  # vLLM/SGLang MoE only here (size budget)

# --- formats -------------------------------------------------------------------------------------
# bytes per weight element incl. block scales: fp8_block 128x128 fp32 scales; nvfp4 16-element fp8
# scales; MXFP4 32-element e8m0 scales; int4 weight-only group 128 with bf16 scales.
WEIGHT_BYTES = {
    "bfloat16": 2.0, "fp8": 1.0, "fp8_block": 1.0 + 4.0 / (128 * 128), "nvfp4": 0.5 + 1.0 / 16,
    "w4a16_mxfp4": 0.5 + 1.0 / 32, "w4a8_mxfp4_mxfp8": 0.5 + 1.0 / 32, "int4_wo": 0.5 + 2.0 / 128,
}
# bytes per activation element as the tensor cores read them (after on-the-fly quantization)
ACT_BYTES = {
    "bfloat16": 2.0, "fp8": 1.0, "fp8_block": 1.0 + 4.0 / 128, "nvfp4": 0.5 + 1.0 / 16,
    "w4a16_mxfp4": 2.0, "w4a8_mxfp4_mxfp8": 1.0 + 1.0 / 32, "int4_wo": 2.0,
}
# matmul precision whose dense peak applies
COMPUTE = {
    "bfloat16": "bf16", "fp8": "fp8", "fp8_block": "fp8", "nvfp4": "fp4", "w4a16_mxfp4": "bf16",
    "w4a8_mxfp4_mxfp8": "fp8", "int4_wo": "bf16",
}
OUT_BYTES = 2.0  # bf16 outputs
KV_BYTES = {"bfloat16": 2.0, "fp8": 1.0, "float16": 2.0}

# --- subsets -------------------------------------------------------------------------------------
# (n, k) grid points of the package's GEMM sweep that are model layers (data/models.csv dims); the
# grid has 22 values per axis (32 ... 65536), so a few layers are snapped to the nearest grid point.
GEMM_SHAPES = [
    (768, 4096, "llama-3.1-8b qkv_proj TP8"),
    (4096, 1024, "llama-3.1-8b o_proj TP4; qwen3-235b-a22b o_proj TP8"),
    (1536, 7168, "deepseek-v3 q_a_proj (any TP)"),
    (5120, 3072, "gpt-oss-120b qkv_proj TP1 (k 2880 snapped to 3072)"),
    (4096, 4096, "llama-3.1-8b o_proj TP1; qwen3-235b-a22b o_proj TP2"),
    (6144, 4096, "llama-3.1-8b qkv_proj TP1"),
    (7168, 4096, "llama-3.1-8b gate_up_proj TP4; deepseek-v3 o_proj TP4"),
    (7168, 8192, "llama-3.1-70b gate_up_proj TP8"),
    (10240, 8192, "llama-3.1-70b qkv_proj TP1"),
    (7168, 16384, "deepseek-v3 o_proj TP1"),
]
GEMM_M = [1, 8, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
GEMM_QUANTS = ("bfloat16", "fp8", "fp8_block", "nvfp4")

# MoE: (model id in data/models.csv, hidden, moe_intermediate, experts, top-k)
MOE_MODELS = [
    ("deepseek-v3", 7168, 2048, 256, 8),
    ("qwen3-235b-a22b", 4096, 1536, 128, 8),
    ("gpt-oss-120b", 2880, 2880, 128, 4),
    ("mixtral-8x7b", 4096, 14336, 8, 2),
]
MOE_EP = (1, 8)  # TRT-LLM; vLLM/SGLang EP8 only (size budget)
MOE_TOKENS = [1, 4, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
MOE_QUANTS = ("bfloat16", "fp8", "fp8_block", "nvfp4", "w4a16_mxfp4", "w4a8_mxfp4_mxfp8")

# GQA attention configs per GPU: (label, q heads, kv heads, head_dim, window)
GQA = [
    ("llama-3.1-8b TP1", 32, 8, 128, 0),
    ("llama-3.1-70b TP8", 8, 1, 128, 0),
    ("llama-3.1-70b TP1", 64, 8, 128, 0),
    ("gpt-oss-120b TP1 full", 64, 8, 64, 0),
    ("gpt-oss-120b TP1 sliding-128", 64, 8, 64, 128),
]
MLA = [("deepseek-v3 TP1", 128, 1), ("deepseek-v3 TP8", 16, 8)]  # (label, local heads, tp_size)
GEN_BATCH = [1, 16, 128, 512]
GEN_STEP = [1023, 8191, 32767]           # cached tokens per sequence (context = step + 1)
CTX_CASES = [(1, 1024), (1, 4096), (1, 16384), (16, 1024), (4, 4096), (2, 8192)]  # (batch, prompt)
# DeepSeek-V3 MLA dims (data/models.csv): kv_lora 512, rope 64, qk_nope 128, v 128
MLA_KV_DIM, MLA_ROPE, MLA_NOPE, MLA_V = 512, 64, 128, 128


def die(msg: str) -> None:
    print(f"extract_aiconfigurator: {msg}", file=sys.stderr)
    sys.exit(2)


# --- package discovery and provenance -----------------------------------------------------------
def find_core(path: Path) -> Path:
    for cand in (path, path / "aiconfigurator_core"):
        if (cand / "systems" / "data").is_dir():
            return cand
    die(f"no aiconfigurator_core/systems/data under {path}")


def package_version(core: Path) -> str:
    for info in sorted(core.parent.glob("aiconfigurator_core-*.dist-info")):
        for line in (info / "METADATA").read_text().splitlines():
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def record_hashes(core: Path) -> dict[str, str]:
    """sha256 (urlsafe-b64, as the wheel RECORD stores it) per package-relative path."""
    out = {}
    for info in core.parent.glob("aiconfigurator_core-*.dist-info"):
        rec = info / "RECORD"
        if rec.exists():
            for row in csv.reader(rec.read_text().splitlines()):
                if len(row) >= 2 and row[1].startswith("sha256="):
                    out[row[0]] = row[1][len("sha256="):]
    return out


def current_versions(core: Path) -> dict[tuple[str, str], str]:
    """(system, backend) -> the package's 'current' queryable version (systems/query_versions.yaml)."""
    import yaml  # a dependency of aiconfigurator; only needed here

    doc = yaml.safe_load((core / "systems" / "query_versions.yaml").read_text())
    out = {}
    for system in SYSTEMS:
        for backend, slots in doc["defaults"].items():
            out[(system, backend)] = slots["current"]
        for backend, slots in (doc.get("overrides", {}).get(system) or {}).items():
            out[(system, backend)] = slots["current"]
    return out


class Sources:
    """Collects one provenance row per parquet file read; gives each its short per-row `source`."""

    def __init__(self, core: Path, version: str):
        self.core, self.version, self.hashes, self.rows = core, version, record_hashes(core), {}

    def register(self, path: Path, table: str) -> tuple[str, str]:
        rel = path.relative_to(self.core.parent).as_posix()
        meta = path.parent / "collection_meta.yaml"
        dates = re.findall(r"20\d\d-[01]\d-[0-3]\d", meta.read_text()) if meta.exists() else []
        as_of = max(dates) if dates else "~2026-08"
        parts = path.relative_to(self.core / "systems" / "data").parts  # system/op/backend/version/file
        # per-row source: the package release; (table, system, backend, backend_version) pick the file's
        # row in sources.csv (path inside the package, sha256 from the wheel RECORD, as_of)
        short = f"aiconfigurator-core {self.version}"
        if rel not in self.rows:
            self.rows[rel] = dict(table=table, system=parts[0], op_dir=parts[1], backend=parts[2],
                                  backend_version=parts[3], package="aiconfigurator-core",
                                  package_version=self.version, package_path=rel,
                                  sha256_b64=self.hashes.get(rel, ""), as_of=as_of,
                                  license="Apache-2.0 (SPDX header of the package files; NVIDIA CORPORATION & AFFILIATES)",
                                  rows_extracted=0)
        return short, as_of

    def count(self, path: Path, n: int) -> None:
        self.rows[path.relative_to(self.core.parent).as_posix()]["rows_extracted"] += n


def load_peaks() -> dict[str, dict[str, float]]:
    peaks = {}
    with open(REPO / "data" / "accelerators.csv", newline="") as f:
        for r in csv.DictReader(f):
            def num(key):
                return float(r[key]) * 1e12 if r[key] else float("nan")
            peaks[r["id"]] = dict(bf16=num("bf16_dense_tflop_per_s"), fp8=num("fp8_dense_tflop_per_s"),
                                  fp4=num("fp4_dense_tflop_per_s"), hbm=num("hbm_bandwidth_tb_per_s"))
    for acc in SYSTEMS.values():
        if acc not in peaks:
            die(f"accelerator {acc!r} missing from data/accelerators.csv")
    return peaks


def sig(x, digits=3):
    """Round to significant digits (keeps the CSVs small); NaN stays NaN."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mag = np.where((x == 0) | ~np.isfinite(x), 0, np.floor(np.log10(np.abs(np.where(x == 0, 1, x)))))
    scale = 10.0 ** (digits - 1 - mag)
    return np.where(np.isfinite(x), np.round(x * scale) / scale, x)


# --- extractors ----------------------------------------------------------------------------------
def version_dir(core: Path, system: str, op: str, backend: str, version: str) -> Path | None:
    d = core / "systems" / "data" / system / op / backend / version
    return d if d.is_dir() else None


def gemm(core, cur, src, peaks) -> pd.DataFrame:
    frames = []
    for system, acc in SYSTEMS.items():
        for backend in ("trtllm", "vllm", "sglang"):
            if backend != "trtllm" and system not in CORE_SYSTEMS:
                continue
            d = version_dir(core, system, "gemm", backend, cur[(system, backend)])
            if d is None or not (d / "gemm_perf.parquet").exists():
                continue
            path = d / "gemm_perf.parquet"
            df = pd.read_parquet(path)
            keep = pd.Series(False, index=df.index)
            for n, k, _ in GEMM_SHAPES:
                keep |= (df.n == n) & (df.k == k)
            df = df[keep & df.m.isin(GEMM_M) & df.gemm_dtype.isin(GEMM_QUANTS)]
            # several kernels per shape in vLLM fp8_block: keep the fastest (what the engine's autotune picks)
            df = df.sort_values("latency").drop_duplicates(["gemm_dtype", "m", "n", "k"])
            short, as_of = src.register(path, "gemm_efficiency")
            src.count(path, len(df))
            m, n, k = (df[c].to_numpy(float) for c in ("m", "n", "k"))
            q = df.gemm_dtype.to_numpy()
            wb = np.array([WEIGHT_BYTES[x] for x in q]); ab = np.array([ACT_BYTES[x] for x in q])
            prec = np.array([COMPUTE[x] for x in q])
            peak = np.array([peaks[acc][p] for p in prec])
            t = df.latency.to_numpy(float) * 1e-3
            flop = 2 * m * n * k
            nbytes = n * k * wb + m * k * ab + m * n * OUT_BYTES
            frames.append(pd.DataFrame(dict(
                system=system, accelerator_id=acc, backend=backend, backend_version=d.name,
                kernel_source=df.kernel_source.to_numpy(), quant=q, compute_precision=prec,
                m=m.astype(int), n=n.astype(int), k=k.astype(int), latency_s=sig(t, 4),
                achieved_flop_per_s=sig(flop / t), achieved_frac_of_dense_peak=sig(flop / t / peak),
                arithmetic_intensity_flop_per_byte=sig(flop / nbytes),
                memory_bound_frac_of_hbm_bandwidth=sig(nbytes / t / peaks[acc]["hbm"]),
                source=short, as_of=as_of)))
    return pd.concat(frames, ignore_index=True)


def moe(core, cur, src, peaks) -> pd.DataFrame:
    frames = []
    for system, acc in SYSTEMS.items():
        for backend in ("trtllm", "vllm", "sglang"):
            if backend != "trtllm" and system not in MOE_OTHER_BACKEND_SYSTEMS:
                continue
            d = version_dir(core, system, "moe", backend, cur[(system, backend)])
            if d is None or not (d / "moe_perf.parquet").exists():
                continue
            path = d / "moe_perf.parquet"
            df = pd.read_parquet(path)
            keep = pd.Series(False, index=df.index)
            model = pd.Series("", index=df.index)
            for mid, h, inter, e, k in MOE_MODELS:
                sel = (df.hidden_size == h) & (df.inter_size == inter) & (df.num_experts == e) & (df.topk == k)
                keep |= sel
                model[sel] = mid
            # balanced routing everywhere; one skewed case (power_law_1.01, EP8) for TRT-LLM to size load imbalance
            dist_ok = (df.distribution == "balanced") | ((df.distribution == "power_law_1.01")
                                                         & (df.moe_ep_size == 8) & (backend == "trtllm"))
            ep_ok = df.moe_ep_size.isin(MOE_EP if backend == "trtllm" else (8,))
            df = df[keep & dist_ok & ep_ok & (df.moe_tp_size == 1)
                    & df.num_tokens.isin(MOE_TOKENS) & df.moe_dtype.isin(MOE_QUANTS)].copy()
            df["model_id"] = model[df.index]
            # TRT-LLM's min-latency NVFP4 path is collected with DeepSeek-V3 group-limited routing
            # (n_group 8, topk_group 4) whatever the model, so it touches fewer experts than balanced
            # routing implies (its rows reach up to 3.4x HBM bandwidth under that assumption): dropped
            df = df[df.kernel_source != "moe_torch_flow_min_latency"]
            # several kernel paths for one case (vLLM/SGLang modular vs monolithic, TRT-LLM min-latency):
            # keep the fastest, as the engine would
            df = df.sort_values("latency").drop_duplicates(
                ["moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts",
                 "moe_tp_size", "moe_ep_size", "distribution"])
            short, as_of = src.register(path, "moe_efficiency")
            src.count(path, len(df))
            T = df.num_tokens.to_numpy(float); h = df.hidden_size.to_numpy(float)
            inter = df.inter_size.to_numpy(float) / df.moe_tp_size.to_numpy(float)
            E = df.num_experts.to_numpy(float); topk = df.topk.to_numpy(float); ep = df.moe_ep_size.to_numpy(float)
            q = df.moe_dtype.to_numpy()
            wb = np.array([WEIGHT_BYTES[x] for x in q]); ab = np.array([ACT_BYTES[x] for x in q])
            prec = np.array([COMPUTE[x] for x in q]); peak = np.array([peaks[acc][p] for p in prec])
            t = df.latency.to_numpy(float) * 1e-3
            pairs_local = T * topk / ep                          # token-expert pairs this rank computes
            experts_local = E / ep
            active_local = np.minimum(experts_local, np.ceil(pairs_local))  # balanced routing spreads evenly
            flop = 2.0 * 3.0 * h * inter * pairs_local           # gated FFN: gate + up (h x 2I) and down (I x h)
            wbytes = active_local * 3.0 * h * inter * wb
            nbytes = wbytes + pairs_local * (h * ab + inter * 2 * 2 + inter * ab + h * OUT_BYTES) + T * h * 4
            frames.append(pd.DataFrame(dict(
                system=system, accelerator_id=acc, backend=backend, backend_version=d.name,
                kernel_source=df.kernel_source.to_numpy(), model_id=df.model_id.to_numpy(), quant=q,
                compute_precision=prec, hidden_size=h.astype(int), moe_intermediate_size=inter.astype(int),
                num_experts=E.astype(int), topk=topk.astype(int), moe_tp_size=df.moe_tp_size.to_numpy(),
                moe_ep_size=ep.astype(int), distribution=df.distribution.to_numpy(), num_tokens=T.astype(int),
                tokens_per_expert=sig(T * topk / E), active_local_experts=active_local.astype(int),
                latency_s=sig(t, 4), achieved_flop_per_s=sig(flop / t),
                achieved_frac_of_dense_peak=sig(flop / t / peak),
                arithmetic_intensity_flop_per_byte=sig(flop / nbytes),
                weight_bytes_read=sig(wbytes),
                memory_bound_frac_of_hbm_bandwidth=sig(nbytes / t / peaks[acc]["hbm"]),
                source=short, as_of=as_of)))
    return pd.concat(frames, ignore_index=True)


def attention(core, cur, src, peaks) -> pd.DataFrame:
    frames = []

    def emit(df, path, system, acc, backend, version, kind, mech, label, flop, nbytes, prec, ctx_tokens,
             heads, kvh, hd, window, attn_dtype, kv_dtype):
        short, as_of = src.register(path, "attention_efficiency")
        src.count(path, len(df))
        t = df.latency.to_numpy(float) * 1e-3
        # a chip without FP8 tensor cores (A100) runs FP8-KV attention in bf16
        prec = np.array([p if np.isfinite(peaks[acc][p]) else "bf16" for p in prec])
        peak = np.array([peaks[acc][p] for p in prec])
        frames.append(pd.DataFrame(dict(
            system=system, accelerator_id=acc, backend=backend, backend_version=version,
            kernel_source=df.kernel_source.to_numpy(), phase=kind, compute_precision=prec, attention_type=mech, config=label,
            num_heads=heads, num_kv_heads=kvh, head_dim=hd, window_size=window,
            attn_dtype=attn_dtype, kv_cache_dtype=kv_dtype, batch_size=df.batch_size.to_numpy(),
            context_tokens=ctx_tokens.astype(int), latency_s=sig(t, 4), flop=sig(flop),
            bytes_moved=sig(nbytes), achieved_frac_of_dense_peak=sig(flop / t / peak),
            memory_bound_frac_of_hbm_bandwidth=sig(nbytes / t / peaks[acc]["hbm"]),
            arithmetic_intensity_flop_per_byte=sig(flop / nbytes), source=short, as_of=as_of)))

    for system, acc in SYSTEMS.items():
        for backend in ("trtllm", "vllm", "sglang"):
            if backend != "trtllm" and system not in CORE_SYSTEMS:
                continue
            version = cur[(system, backend)]
            d = version_dir(core, system, "attention", backend, version)
            for phase in ("generation", "context"):
                path = d / f"{phase}_attention_perf.parquet" if d else None
                if path is None or not path.exists():
                    continue
                raw = pd.read_parquet(path)
                for label, nh, nkv, hd, win in GQA:
                    x = raw[(raw.num_heads == nh) & (raw.num_key_value_heads == nkv) & (raw.head_dim == hd)
                            & (raw.window_size == win)]
                    if phase == "generation":
                        x = x[x.batch_size.isin(GEN_BATCH) & x.step.isin(GEN_STEP)]
                    else:
                        x = x[pd.Series(list(zip(x.batch_size, x.isl)), index=x.index).isin(CTX_CASES)]
                    x = x.sort_values("latency").drop_duplicates(["batch_size", "isl", "step", "attn_dtype", "kv_cache_dtype"])
                    if x.empty:
                        continue
                    b = x.batch_size.to_numpy(float)
                    kvb = np.array([KV_BYTES[v] for v in x.kv_cache_dtype])
                    if phase == "generation":
                        ctx = x.step.to_numpy(float) + 1
                        att = np.minimum(ctx, win) if win else ctx
                        flop = 4.0 * b * nh * att * hd                         # QK^T and PV, one query token
                        nbytes = b * att * 2 * nkv * hd * kvb + b * nh * hd * 2 * 2
                        prec = np.array(["bf16"] * len(x))
                    else:
                        s = x.isl.to_numpy(float); ctx = s
                        att = np.where(win > 0, np.minimum(s, win), s)
                        # causal: each query attends to (i+1) keys, sum ~ s*att - att^2/2 (window) or s^2/2
                        pairs = s * att - att * att / 2.0
                        flop = 4.0 * b * nh * hd * pairs
                        nbytes = b * s * (nh * hd * 2 * 2 + 2 * nkv * hd * (2 + kvb))  # Q,O bf16; K,V in bf16 + cache write
                        prec = np.array(["fp8" if a == "fp8" else "bf16" for a in x.attn_dtype])
                    emit(x, path, system, acc, backend, version, "decode" if phase == "generation" else "prefill",
                         "gqa", label, flop, nbytes, prec, ctx, nh, nkv, hd, win,
                         x.attn_dtype.to_numpy(), x.kv_cache_dtype.to_numpy())
            # MLA kernels (TRT-LLM and SGLang ship kernel-level tables; vLLM only whole-module tables)
            dm = version_dir(core, system, "mla", backend, version)
            for phase in ("generation", "context"):
                path = dm / f"{phase}_mla_perf.parquet" if dm else None
                if path is None or not path.exists():
                    continue
                raw = pd.read_parquet(path)
                for label, nh, tp in MLA:
                    x = raw[(raw.num_heads == nh) & (raw.tp_size == tp)]
                    if phase == "generation":
                        x = x[x.batch_size.isin(GEN_BATCH) & x.step.isin(GEN_STEP)]
                    else:
                        x = x[pd.Series(list(zip(x.batch_size, x.isl)), index=x.index).isin(CTX_CASES)]
                    x = x.sort_values("latency").drop_duplicates(["batch_size", "isl", "step", "mla_dtype", "kv_cache_dtype"])
                    if x.empty:
                        continue
                    b = x.batch_size.to_numpy(float)
                    kvb = np.array([KV_BYTES[v] for v in x.kv_cache_dtype])
                    lat = MLA_KV_DIM + MLA_ROPE
                    if phase == "generation":
                        ctx = x.step.to_numpy(float) + 1
                        # absorbed MLA decode: scores over 576 latent dims, values over 512, one shared latent
                        flop = 2.0 * b * nh * ctx * (lat + MLA_KV_DIM)
                        nbytes = b * ctx * lat * kvb + b * nh * (lat + MLA_KV_DIM) * 2
                        hd_label = lat
                    else:
                        s = x.isl.to_numpy(float); ctx = s
                        # prefill MLA runs as MHA with qk dim 192 and v dim 128 over decompressed K/V, causal
                        flop = 2.0 * b * nh * (s * s / 2.0) * ((MLA_NOPE + MLA_ROPE) + MLA_V)
                        nbytes = b * s * nh * ((MLA_NOPE + MLA_ROPE) * 2 * 2 + MLA_V * 2 * 2) + b * s * lat * kvb
                        hd_label = MLA_NOPE + MLA_ROPE
                    # FP8 KV cache: the MLA kernels run their MMAs in FP8 (TRT-LLM's FP8 MLA generation
                    # kernels); with bf16 peaks those rows would exceed 100% of peak on Blackwell
                    if phase == "generation":
                        # Blackwell: TRT-LLM's FP8-KV MLA generation kernels use FP8 MMAs (with bf16 peaks
                        # those rows exceed 100% of peak). Hopper dequantizes the FP8 cache to bf16.
                        fp8_mma = system in BLACKWELL
                        prec = np.array(["fp8" if (v == "fp8" and fp8_mma) else "bf16" for v in x.kv_cache_dtype])
                    else:  # prefill MLA runs its FMHA in mla_dtype (bf16 in these tables)
                        prec = np.array(["fp8" if v == "fp8" else "bf16" for v in x.mla_dtype])
                    emit(x, path, system, acc, backend, version, "decode" if phase == "generation" else "prefill",
                         "mla", label, flop, nbytes, prec, ctx, nh, 1 if phase == "generation" else nh, hd_label, 0,
                         x.mla_dtype.to_numpy(), x.kv_cache_dtype.to_numpy())
    return pd.concat(frames, ignore_index=True)


def allreduce(core, cur, src, peaks) -> pd.DataFrame:
    frames = []
    for system, acc in SYSTEMS.items():
        # NCCL: newest NCCL version directory with all_reduce rows
        base = core / "systems" / "data" / system / "comm" / "nccl"
        best = None
        if base.is_dir():
            for d in sorted(base.iterdir(), key=lambda p: [int(v) for v in re.findall(r"\d+", p.name)]):
                f = d / "nccl_perf.parquet"
                if f.exists() and (pd.read_parquet(f).op_name == "all_reduce").any():
                    best = f
        tables = []
        if best is not None:
            df = pd.read_parquet(best)
            df = df[(df.op_name == "all_reduce") & (df.nccl_dtype == "half")].copy()
            df["implementation"] = "nccl"
            df["elem_bytes"] = 2.0
            tables.append(("nccl", best.parent.name, best, df))
        for backend in ("trtllm", "vllm", "sglang"):
            d = version_dir(core, system, "comm", backend, cur[(system, backend)])
            f = d / "custom_allreduce_perf.parquet" if d else None
            if f is None or not f.exists():
                continue
            df = pd.read_parquet(f)
            if "backend" in df.columns:  # SGLang: eager vs CUDA-graph variants; keep the graph one
                df = df[df.backend.str.contains("graph")]
            df = df.copy()
            df["implementation"] = df.get("implementation", pd.Series(backend, index=df.index)).fillna(backend)
            if "backend" in df.columns:
                df["implementation"] = df.backend
            df["elem_bytes"] = 2.0
            tables.append((backend, d.name, f, df))
        for backend, version, path, df in tables:
            short, as_of = src.register(path, "allreduce")
            src.count(path, len(df))
            n = df.num_gpus.to_numpy(float)
            msg = df.message_size.to_numpy(float) * df.elem_bytes.to_numpy(float)
            t = df.latency.to_numpy(float) * 1e-3
            frames.append(pd.DataFrame(dict(
                system=system, accelerator_id=acc, backend=backend, backend_version=version,
                implementation=df.implementation.to_numpy(), dtype="bf16" if backend != "nccl" else "fp16",
                num_ranks=n.astype(int), message_bytes=msg.astype(np.int64), latency_s=sig(t, 4),
                algbw_bytes_per_s=sig(msg / t), busbw_bytes_per_s=sig(msg / t * 2 * (n - 1) / n),
                source=short, as_of=as_of)))
    return pd.concat(frames, ignore_index=True)


def write(df: pd.DataFrame, name: str) -> None:
    path = OUT / name
    num = df.select_dtypes("number")
    if not np.isfinite(num.to_numpy(float)).all():
        bad = num.columns[~np.isfinite(num.to_numpy(float)).all(axis=0)].tolist()
        die(f"{name}: non-finite values in {bad}")
    df.to_csv(path, index=False, float_format="%.4g", lineterminator="\n")
    print(f"wrote {path.relative_to(REPO)}: {len(df)} rows, {path.stat().st_size / 1024:.0f} KiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("site_packages", type=Path, help="site-packages (or aiconfigurator_core) directory")
    args = ap.parse_args()
    core = find_core(args.site_packages.resolve())
    version = package_version(core)
    cur = current_versions(core)
    src = Sources(core, version)
    peaks = load_peaks()
    OUT.mkdir(parents=True, exist_ok=True)
    write(gemm(core, cur, src, peaks), "gemm_efficiency.csv")
    write(moe(core, cur, src, peaks), "moe_efficiency.csv")
    write(attention(core, cur, src, peaks), "attention_efficiency.csv")
    write(allreduce(core, cur, src, peaks), "allreduce.csv")
    shapes = pd.DataFrame([dict(n=n, k=k, layers=lab, weight_params=n * k,
                                source="layer dims from data/models.csv (each model's config.json); "
                                       f"grid points of aiconfigurator-core {version} gemm_perf sweep",
                                as_of="2026-11-22") for n, k, lab in GEMM_SHAPES])
    write(shapes, "gemm_shapes.csv")
    write(pd.DataFrame(list(src.rows.values())), "sources.csv")


if __name__ == "__main__":
    main()
