"""Speed of the one engine (issue 8): throughput, memory, one-row latency, the frontier, CLI start-up.

Run: .venv/bin/python benchmarks/bench_engine.py [--quick]

Measures, on this machine (best of N wall-clock runs; numbers go in the README, never in tests):

1. points/s of :func:`econ.engine.evaluate` on a 1e6-point grid (every model x every accelerator x bf16/fp8 x
   50 batch sizes x 25 contexts; the engine picks each row's layout), all result columns and the decode +
   cost columns only;
2. 1e7 points in a child process: wall time and peak RSS (time should be ~10x the 1e6 figure: linear);
3. one-row evaluation latency (all columns);
4. ``econ.analyses.optimize.frontier`` for DeepSeek-V3 over every accelerator, in-process;
5. ``econ --help`` wall time (a fresh interpreter each run).

Targets (issue 8): >= 3M points/s at 1e6 points, 1e7 points under 4 GB peak RSS with time linear in the
points, one row under 1 ms, the DeepSeek-V3 frontier under 1.5 s, ``econ --help`` under 0.3 s.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

from econ.tables.catalog import load_catalog
from econ.engine import evaluate

ROOT = Path(__file__).resolve().parent.parent
DECODE_COST = ("feasible", "binding_wall", "max_batch_size", "tpot_s", "tokens_per_s_per_user",
               "output_tokens_per_s_per_gpu", "usd_per_gpu_hour", "usd_per_m_output_tokens")
"""The columns of a decode + cost grid (the comparison the issue makes with a bare numpy kernel)."""


def grid(catalog, n: int) -> pl.DataFrame:
    """A Cartesian grid of about ``n`` points: models x accelerators x {bf16, fp8} x batches x contexts."""
    models = catalog.models["id"].to_list()
    hws = catalog.accelerators["id"].to_list()
    base = len(models) * len(hws) * 2
    per = max(1, n // base)
    nb = max(1, int(round(np.sqrt(per * 2))))
    nc = max(1, per // nb)
    batches = np.unique(np.round(np.geomspace(1, 4096, nb)).astype(np.int64))
    contexts = np.unique(np.round(np.geomspace(256, 32768, nc)).astype(np.int64))
    f = (pl.DataFrame({"model": models}).join(pl.DataFrame({"hardware": hws}), how="cross")
         .join(pl.DataFrame({"precision": ["bf16", "fp8"]}), how="cross")
         .join(pl.DataFrame({"batch_size": batches}), how="cross")
         .join(pl.DataFrame({"context_tokens": contexts}), how="cross"))
    return f


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def child_1e7(n: int) -> dict:
    """Evaluate n points in this (child) process; report wall time and peak RSS."""
    catalog = load_catalog()
    pts = grid(catalog, n)
    t0 = time.perf_counter()
    out = evaluate(pts, catalog, strict=False, columns=DECODE_COST)
    dt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    return {"points": pts.height, "seconds": dt, "peak_rss_bytes": rss, "feasible": int(out["feasible"].sum())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1e5 / 1e6 points instead of 1e6 / 1e7")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child_1e7(args.child)))
        return
    n1, n2 = (100_000, 1_000_000) if args.quick else (1_000_000, 10_000_000)
    catalog = load_catalog()
    pts = grid(catalog, n1)
    evaluate(pts.head(1000), catalog, strict=False)  # warm-up (static tables, imports)
    for label, cols in (("all columns", None), ("decode + cost columns", DECODE_COST)):
        t = best_of(lambda: evaluate(pts, catalog, strict=False, columns=cols), 3)
        print(f"evaluate, {pts.height:,} grid points, {label}: {t:.3f} s -> {pts.height / t / 1e6:.2f}M points/s")
    child = subprocess.run([sys.executable, __file__, "--child", str(n2)], capture_output=True, text=True,
                           check=True, cwd=ROOT)
    r = json.loads(child.stdout)
    print(f"evaluate, {r['points']:,} grid points (decode + cost columns, child process): {r['seconds']:.2f} s -> "
          f"{r['points'] / r['seconds'] / 1e6:.2f}M points/s, peak RSS {r['peak_rss_bytes'] / 2**30:.2f} GiB")
    one = pl.DataFrame({"model": ["llama-3.3-70b"], "hardware": ["h100-sxm"], "precision": ["fp8"],
                        "batch_size": [64], "num_gpus": [2]})
    times = []
    for _ in range(500):
        t0 = time.perf_counter()
        evaluate(one, catalog)
        times.append(time.perf_counter() - t0)
    print(f"evaluate, one row (all columns): median {np.median(times) * 1e3:.2f} ms, best {min(times) * 1e3:.2f} ms")
    from econ.analyses.optimize import frontier
    frontier(catalog, model="deepseek-v3")  # warm-up
    t = best_of(lambda: frontier(catalog, model="deepseek-v3"), 3)
    print(f"econ.analyses.optimize.frontier, DeepSeek-V3 over all {catalog.accelerators.height} accelerators: {t:.2f} s")
    econ = Path(sys.executable).parent / "econ"
    t = best_of(lambda: subprocess.run([str(econ), "--help"], capture_output=True, check=True), 5)
    print(f"econ --help: {t:.3f} s (best of 5)")


if __name__ == "__main__":
    main()
