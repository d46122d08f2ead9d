"""Optimizer speed, the seeds' parallelism claims, and predicted vs measured multi-GPU throughput.

Run: ``.venv/bin/python benchmarks/bench_optimize.py [--reference PATH] [--skip-timing]``

1. Timing (best of 3 wall-clock runs; targets: one model on one accelerator < 1 s; the frontier of
   one model over every accelerator of the catalog < 5 s, on the 2-core reference machine).
2. Seed 001 communication/computation ratios (Table 11) from the alpha-beta all-reduce.
3. Seed 002 claims on the optimizer's output: DeepSeek-V3 on the GB200 chip drawn with an 8-GPU vs a
   72-GPU scale-up domain (cheapest $/M output tokens at a given tokens/s per user; the fastest stream).
4. Predicted vs measured for the multi-GPU rows of ``../shared/reference/validation_public.csv``
   (TensorRT-LLM perf tables: Qwen3-235B attention-DP + EP, Llama-3.1-405B TP4/TP8, Llama-3.x-70B TP2-8;
   the TensorRT-LLM DeepSeek-R1 B200 blog; vLLM's GB200 wide-EP post). Saturated "max throughput"
   rows run at the KV-capacity batch capped at 4096 sequences per instance (trtllm-bench's
   ``min(kv_cache_max_requests, 4096)``, as econ.analyses.calibration) and compare the *served* output rate
   (prefill included), which is what a saturated benchmark measures.
"""

from __future__ import annotations

import argparse
import math
import re
import time
from pathlib import Path

import numpy as np
import polars as pl

from econ.assumptions import DEFAULT, IDEAL
from econ.tables.catalog import load_catalog
from econ.physics.communication import allreduce_time_s, communication_computation_ratio, ring_allreduce_time_s
from econ.physics.deployment import DEFAULT_DEPLOYMENT, NEUTRAL_DEPLOYMENT, evaluate
from econ.analyses.optimize import SLO, SearchSpace, frontier, search

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "validation_public.csv"
ENGINE_MAX_BATCH = 4096
PRECISION = {"fp4": "fp4", "nvfp4": "fp4", "mxfp4": "fp4", "fp8": "fp8", "bf16": "bf16"}


def best_of(fn, n=3):
    best, out = math.inf, None
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def timing(catalog) -> None:
    print("== 1. timing (best of 3) ==")
    for model, hw in (("llama-3.1-70b", "h100-sxm"), ("deepseek-v3", "h100-sxm"), ("deepseek-v3", "gb200-nvl72"),
                      ("kimi-k2", "gb200-nvl72"), ("qwen3-235b-a22b", "b200")):
        t, res = best_of(lambda: search(catalog, model=model, hardware=hw, slo=SLO(min_tokens_per_s_per_user=20)))
        print(f"search {model:16s} on {hw:12s}: {t:6.3f} s  {res.points.height:7,} deployments evaluated, "
              f"{res.rejected.height:5,} families rejected  [{'ok' if t < 1 else 'SLOW'} vs 1 s]")
    for model in ("llama-3.1-8b", "llama-3.1-70b", "deepseek-v3", "kimi-k2"):
        t, (front, rej) = best_of(lambda: frontier(catalog, model=model))
        print(f"frontier {model:16s} on all {catalog.accelerators.height} accelerators: {t:6.3f} s  "
              f"{front.height:5,} frontier points  [{'ok' if t < 5 else 'SLOW'} vs 5 s]")


def seed_001() -> None:
    print("\n== 2. seed 001, Table 11: communication / computation ratio ==")
    rows = [("DP 7B, 256 GPUs, IB NDR", ring_allreduce_time_s(7e9 * 2, 256, 50e9, 5e-6), 5.0, 560.4, 0.11),
            ("DP 350M, 256 GPUs, IB NDR", ring_allreduce_time_s(0.35e9 * 2, 256, 50e9, 5e-6), 0.010, 29.6, 3.0),
            ("TP 8, NVLink (16.8 MB activations)", allreduce_time_s(2048 * 4096 * 2.0, 8, 900e9,
                                                                    DEFAULT.scale_up_latency_s), 1e-3, 0.04, 0.036)]
    print(f"{'scenario':38s} {'T_comm ms':>10s} {'seed ms':>8s} {'rho':>7s} {'seed rho':>8s}")
    for name, t, comp, seed_ms, seed_rho in rows:
        print(f"{name:38s} {t * 1e3:10.3f} {seed_ms:8.3f} {communication_computation_ratio(t, comp):7.3f} {seed_rho:8.3f}")


def seed_002(catalog) -> None:
    print("\n== 3. seed 002: the same chip (GB200) on an 8-GPU vs a 72-GPU scale-up domain ==")
    res = search(catalog, model="deepseek-v3", hardware="gb200-nvl72", input_len=1024, output_len=1024,
                 space=SearchSpace(scale_up_domain_sizes=(8, 72), precisions=("fp8",)))
    p = res.points
    print("DeepSeek-V3 fp8, 1024/1024: cheapest all-in $/M output tokens at >= X tokens/s per user")
    print(f"{'X':>5s} {'domain 8':>10s} {'layout':>36s} {'domain 72':>10s} {'layout':>36s} {'8/72':>6s}")
    for x in (10, 20, 30, 50, 80, 120, 200):
        cells = []
        for d in (8, 72):
            q = p.filter((pl.col("scale_up_domain_size") == d) & (pl.col("tokens_per_s_per_user") >= x))
            if q.height:
                r = q.sort("usd_per_m_output_tokens_all_in").row(0, named=True)
                cells.append((r["usd_per_m_output_tokens_all_in"], r["layout"]))
            else:
                cells.append((math.nan, "-"))
        print(f"{x:5d} {cells[0][0]:10.4f} {cells[0][1]:>36s} {cells[1][0]:10.4f} {cells[1][1]:>36s} "
              f"{cells[0][0] / cells[1][0]:6.2f}")
    print("fastest single stream (tokens/s per user) by domain size:")
    for model in ("deepseek-v3", "llama-3.1-405b", "llama-3.1-70b"):
        r = search(catalog, model=model, hardware="gb200-nvl72", space=SearchSpace(scale_up_domain_sizes=(8, 72),
                                                                                   precisions=("fp8",))).points
        top = r.sort("tokens_per_s_per_user", descending=True).group_by("scale_up_domain_size", maintain_order=True).first()
        print("  " + model + ": " + ", ".join(f"domain {d}: {s:,.0f} ({lay})" for d, s, lay in
                                               top.select("scale_up_domain_size", "tokens_per_s_per_user", "layout").rows()))


def _parse(row: dict):
    """A reference row -> deployment kwargs for econ.physics.deployment.evaluate (None: not representable)."""
    cid, par = row["case_id"], row["parallelism"] or ""
    model = {"deepseek-r1 (671B)": "deepseek-r1", "deepseek-r1/v3": "deepseek-r1"}.get(row["model"], row["model"])
    hw = {"h100": "h100-sxm", "h200": "h200-sxm", "gb200": "gb200-nvl72"}.get(row["hardware"], row["hardware"])
    p = (row["precision"] or "").lower()
    precision = "fp4" if "fp4" in p else "fp8" if "fp8" in p else "bf16"
    try:
        n = int(row["num_gpus"])
        i, o = int(row["input_len"]), int(row["output_len"])
    except (TypeError, ValueError):
        return None
    kw = dict(model=model, hardware=hw, precision=precision, input_len=i, output_len=o, num_gpus=n)
    if cid.startswith("trt-perf-qwen3"):
        kw.update(tp=1, dp=n, ep=n)
    elif cid.startswith(("trt-perf-llama", "trt17-llama")):
        m = re.search(r"TP(\d+)", par)
        kw.update(tp=int(m.group(1)), dp=1, ep=1) if m else None
    elif cid == "trt-dsr1-b200-maxtput":
        kw.update(tp=1, dp=8, ep=8, kv_precision="fp8")
    elif cid == "trt-dsr1-b200-minlat-baseline":
        kw.update(tp=8, dp=1, ep=8, batch_size=1, kv_precision="bf16")
    elif cid == "trt-dsr1-b200-minlat-nomtp-opt":
        kw.update(tp=8, dp=1, ep=1, batch_size=1, kv_precision="bf16")
    elif cid == "trt-dsr1-b200-max-conc":  # the NVFP4 checkpoint of the kv-free row, bf16 latent (~200 MB/request)
        kw.update(tp=1, dp=8, ep=8, precision="fp4", kv_precision="bf16", batch_size=8)
    elif cid == "vllm-gb200-decode":
        kw.update(tp=1, dp=8, ep=8, precision="fp4", kv_precision="fp8")
    elif cid == "vllm-gb200-prefill":  # assumption: "2 GB200" = two 4-GPU trays (DeepSeek fp4 needs > 2 GPUs)
        kw.update(tp=1, dp=8, ep=8, precision="fp4", kv_precision="fp8", batch_size=8, num_gpus=8)
    else:
        return None
    if "tp" not in kw:
        return None
    return kw


def measured_vs_predicted(catalog, path: Path) -> None:
    print(f"\n== 4. predicted vs measured, multi-GPU rows of {path} ==")
    if not path.is_file():
        print("reference file not found; skipped")
        return
    ref = pl.read_csv(path, infer_schema=False)
    rows = []
    for r in ref.iter_rows(named=True):  # a few dozen published rows: presentation code, not the model
        kw = _parse(r)
        if kw is None or kw["model"] not in catalog.models["id"].to_list():
            continue
        metric, value = r["metric"], float(r["value"])
        n = int(r["num_gpus"])
        if metric == "output_tok_per_s_system":
            metric, value = "served_output_tokens_per_s_per_gpu", value / n
        elif metric == "output_tok_per_s_per_gpu":
            metric = "output_tokens_per_s_per_gpu" if r["case_id"] == "vllm-gb200-decode" else \
                "served_output_tokens_per_s_per_gpu"
        elif metric == "input_tok_per_s_per_gpu":
            metric = "input_tokens_per_s_per_gpu"
        elif metric == "tok_per_s_per_user":
            metric = "tokens_per_s_per_user"
        elif metric == "max_concurrency_per_gpu":
            metric, value = "max_batch_size", value * n
        else:
            continue
        rows.append((r["case_id"], kw, metric, value))
    out = []
    for label, a, da in (("default", DEFAULT, DEFAULT_DEPLOYMENT), ("ideal", IDEAL, NEUTRAL_DEPLOYMENT)):
        pts = pl.DataFrame([{**dict(batch_size=None, kv_precision=None), **kw} for _, kw, _, _ in rows],
                           schema_overrides={"batch_size": pl.Int64, "kv_precision": pl.String})
        probe = evaluate(pts.with_columns(batch_size=pl.col("dp")), catalog, a, deployment=da, strict=False)
        cap = np.minimum(probe["max_batch_size"].to_numpy(), ENGINE_MAX_BATCH)
        dp = pts["dp"].to_numpy()
        auto = np.maximum((cap // dp) * dp, dp)
        b = np.where(pts["batch_size"].is_null().to_numpy(), auto, pts["batch_size"].fill_null(1).to_numpy())
        res = evaluate(pts.with_columns(batch_size=pl.Series(b)), catalog, a, deployment=da, strict=False)
        out.append(res)
    print(f"{'case':48s} {'layout':>10s} {'batch':>6s} {'metric':>36s} {'measured':>10s} {'default':>10s} "
          f"{'ideal':>10s} {'ratio':>6s}")
    ratios = {}
    for k, (cid, kw, metric, value) in enumerate(rows):
        pred = out[0][metric][k]
        ideal = out[1][metric][k]
        ratio = pred / value if pred is not None else math.nan
        fam = re.sub(r"-(\d+)-(\d+)$", "", cid)
        fam = re.sub(r"-(h100|h200|b200|gb200)(-fp\d)?$", "", fam)
        ratios.setdefault(fam, []).append(ratio)
        print(f"{cid:48s} {out[0]['layout'][k]:>10s} {out[0]['batch_size'][k]:6d} {metric:>36s} {value:10,.1f} "
              f"{(pred or math.nan):10,.1f} {(ideal or math.nan):10,.1f} {ratio:6.2f}")
    print("\nper family: n, median predicted/measured, RMS log error")
    for fam, rs in ratios.items():
        rs = np.array([x for x in rs if np.isfinite(x)])
        if len(rs):
            print(f"  {fam:44s} n={len(rs):3d}  median {np.median(rs):5.2f}  rms log {np.sqrt(np.mean(np.log(rs) ** 2)):5.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, default=REFERENCE)
    ap.add_argument("--skip-timing", action="store_true")
    args = ap.parse_args()
    catalog = load_catalog()
    if not args.skip_timing:
        timing(catalog)
    seed_001()
    seed_002(catalog)
    measured_vs_predicted(catalog, args.reference)


if __name__ == "__main__":
    main()
