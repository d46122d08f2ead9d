"""Speed of the one engine (issues 8 and 20), each figure beside a plain numpy roofline of the same grid, same run.

Run: .venv/bin/python benchmarks/bench_engine.py [--quick] [--repeat N]
Then: .venv/bin/python scripts/update_benchmarks.py   (rewrites the README's engine rows from the JSON)

Measures on this machine (best of ``--repeat`` wall-clock runs; numbers go in the README, never in tests) and
writes benchmarks/results/bench_engine.json:

1. points/s of :func:`econ.engine.evaluate` on a ~1e6-point grid (every model x every accelerator x bf16/fp8 x
   ~50 batches x ~25 contexts; the engine picks each row's layout): decode + cost columns, and all columns;
2. the same grid through a plain numpy roofline (:func:`numpy_roofline`: weight + KV bytes and FLOPs per step ->
   step time -> tokens/s -> $/M output tokens, per-combination facts gathered by integer codes, arrays in and out),
   and the same with Polars frames and string ids in and out: the ratios engine / roofline are the figures that
   do not depend on how busy the machine is;
3. 1e7 points (decode + cost) in a child process, three calls in a row: seconds per call, peak RSS and the
   traced (tracemalloc) peak of each call;
4. one row: decode + cost and all columns, as a frame and as records (``output="records"``); the same row repeated,
   so decode + cost is the small-input path's cache hit (:mod:`econ.engine.small`); its miss (the first call of a
   row) is measured too (``one_row_decode_cost_*_miss_*``);
5. ``econ.analyses.optimize.frontier`` for DeepSeek-V3 over every accelerator, in-process;
6. processes: ``econ cost`` one row, ``econ quotes check`` (all shipped quotes), ``econ --help``, and
   ``python -c "import numpy, polars"`` (the floor of any process that computes).

Targets (issue 20): >= 15M decode + cost points/s at 1e6 points (<= 2x the numpy roofline's time in the same
run); all columns >= 4M points/s; 1e7 points < 2 GiB peak on repeated calls, time linear; one row <= 0.2 ms
(decode + cost) and <= 0.5 ms (all columns); DeepSeek-V3 frontier over every accelerator <= 0.4 s; ``econ cost``
one row <= 0.35 s as a process; ``econ quotes check`` <= 0.8 s as a process.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from econ.engine import catalog_arrays, evaluate  # noqa: E402
from econ.tables.catalog import load_catalog  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "bench_engine.json"
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
    return (pl.DataFrame({"model": models}).join(pl.DataFrame({"hardware": hws}), how="cross")
            .join(pl.DataFrame({"precision": ["bf16", "fp8"]}), how="cross")
            .join(pl.DataFrame({"batch_size": batches}), how="cross")
            .join(pl.DataFrame({"context_tokens": contexts}), how="cross"))


def roofline_tables(catalog) -> dict:
    """Per model / accelerator facts of :func:`numpy_roofline` (computed once, like the engine's static tables)."""
    arr = catalog_arrays(catalog)
    m, h = arr.model, arr.hardware
    kv_per_token = m["kv_elements_per_token_per_layer"] * m["num_layers"]  # elements per context token
    peak = np.stack([h["bf16_peak_flop_per_s"], np.where(np.isnan(h["fp8_peak_flop_per_s"]), h["bf16_peak_flop_per_s"],
                                                         h["fp8_peak_flop_per_s"])], axis=1)  # [hw, precision]
    rate = np.where(np.isnan(h["rental_usd_per_hour"]), 2.0, h["rental_usd_per_hour"])
    return dict(model_ids=arr.model_ids, hardware_ids=arr.hardware_ids, params=m["total_params"],
                active=m["active_matmul_params"], kv_per_token=kv_per_token, bw=h["hbm_bandwidth_bytes_per_s"],
                hbm=h["hbm_capacity_bytes"], peak=peak, usd_per_hour=rate)


def numpy_roofline(t: dict, model_code, hw_code, prec_code, batch, context):
    """Plain numpy roofline of decode + cost: arrays in, arrays out (the baseline of issue 20).

    Bytes per step = weights (2 or 1 B/param) + B x context x KV elements x 2 B; FLOPs = 2 x active params x B;
    step = max(bytes / BW, FLOPs / peak) + 1.5 ms; GPUs = the fewest whose 90% HBM holds the weights (power of two);
    tokens/s/GPU = B / step / GPUs; $/M output tokens = $/GPU-hour / 3600 / tokens/s/GPU x 1e6; feasible where
    weights + KV fit.
    """
    wbytes = t["params"][model_code] * (2.0 - prec_code)
    kv = batch * context * t["kv_per_token"][model_code] * 2.0
    bw = t["bw"][hw_code]
    hbm = t["hbm"][hw_code] * 0.9
    gpus = 2.0 ** np.ceil(np.log2(np.maximum(np.ceil(wbytes / hbm), 1.0)))
    step = np.maximum((wbytes + kv) / (bw * gpus), 2.0 * t["active"][model_code] * batch
                      / (t["peak"][hw_code, prec_code] * gpus)) + 1.5e-3
    tps = batch / step / gpus
    usd = t["usd_per_hour"][hw_code] / 3600.0 / tps * 1e6
    return dict(feasible=wbytes + kv <= hbm * gpus, tpot_s=step, tokens_per_s_per_user=1.0 / step,
                output_tokens_per_s_per_gpu=tps, usd_per_m_output_tokens=usd)


def numpy_roofline_frame(t: dict, points: pl.DataFrame) -> pl.DataFrame:
    """:func:`numpy_roofline` with a Polars frame and string ids in and out."""
    mc = points["model"].cast(pl.Enum(list(t["model_ids"]))).to_physical().to_numpy()
    hc = points["hardware"].cast(pl.Enum(list(t["hardware_ids"]))).to_physical().to_numpy()
    pc = (points["precision"] == "fp8").to_numpy().astype(np.int64)
    out = numpy_roofline(t, mc, hc, pc, points["batch_size"].to_numpy().astype(float),
                         points["context_tokens"].to_numpy().astype(float))
    return pl.DataFrame({"model": points["model"], "hardware": points["hardware"], "precision": points["precision"],
                         **out})


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def child_1e7(n: int) -> dict:
    """Evaluate ~n points three times in this (child) process: seconds, traced peak per call, peak RSS."""
    catalog = load_catalog()
    pts = grid(catalog, n)
    while pts.height < n:  # exactly n points (the grid's rounding gives ~0.77 n)
        pts = pl.concat([pts, pts.head(n - pts.height)])
    evaluate(pts.head(1000), catalog, strict=False)
    calls = []
    for i in range(3):
        tracemalloc.start() if i == 2 else None
        t0 = time.perf_counter()
        out = evaluate(pts, catalog, strict=False, columns=DECODE_COST)
        dt = time.perf_counter() - t0
        traced = tracemalloc.get_traced_memory()[1] if i == 2 else None
        tracemalloc.stop() if i == 2 else None
        calls.append({"seconds": dt, "traced_peak_bytes": traced,
                      "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024})
        del out
    return {"points": pts.height, "calls": calls, "input_bytes": pts.estimated_size()}


def process_time(args: list[str], repeat: int, env=None) -> float:
    return best_of(lambda: subprocess.run(args, capture_output=True, check=True, cwd=ROOT, env=env), repeat)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1e5 / 1e6 points instead of 1e6 / 1e7")
    ap.add_argument("--repeat", type=int, default=5, help="best of N (default 5)")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--no-write", action="store_true", help="print only; do not write the JSON")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child_1e7(args.child)))
        return
    rep = args.repeat
    n1, n2 = (100_000, 1_000_000) if args.quick else (1_000_000, 10_000_000)
    catalog = load_catalog()
    pts = grid(catalog, n1)
    r: dict = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
               "points": pts.height, "repeat": rep, "date": time.strftime("%Y-%m-%d")}
    try:
        import numba  # noqa: F401
        r["numba"] = numba.__version__
    except ImportError:
        r["numba"] = None
    evaluate(pts.head(1000), catalog, strict=False)  # warm-up (static tables, imports)
    from econ.engine import fused
    t0 = time.perf_counter()
    r["fused_kernel"] = fused.kernel() is not None and fused.enabled(pts.height)  # numba's import and cached kernel:
    r["fused_load_s"] = time.perf_counter() - t0  # a process's one-off cost (compiled ~2-4 s once per install)
    print(f"fused kernel: {r['fused_kernel']}, loaded in {r['fused_load_s']:.2f} s")
    t = roofline_tables(catalog)
    arr = catalog_arrays(catalog)
    mc = pts["model"].cast(pl.Enum(list(arr.model_ids))).to_physical().to_numpy()
    hc = pts["hardware"].cast(pl.Enum(list(arr.hardware_ids))).to_physical().to_numpy()
    pc = (pts["precision"] == "fp8").to_numpy().astype(np.int64)
    b, c = pts["batch_size"].to_numpy().astype(float), pts["context_tokens"].to_numpy().astype(float)
    r["roofline_arrays_s"] = best_of(lambda: numpy_roofline(t, mc, hc, pc, b, c), rep)
    r["roofline_frames_s"] = best_of(lambda: numpy_roofline_frame(t, pts), rep)
    r["decode_cost_s"] = best_of(lambda: evaluate(pts, catalog, strict=False, columns=DECODE_COST), rep)
    typed = pts.with_columns(pl.col("model").cast(pl.Enum(list(arr.model_ids))),
                             pl.col("hardware").cast(pl.Enum(list(arr.hardware_ids))))
    r["decode_cost_enum_ids_s"] = best_of(lambda: evaluate(typed, catalog, strict=False, columns=DECODE_COST), rep)
    r["all_columns_s"] = best_of(lambda: evaluate(pts, catalog, strict=False), max(2, rep // 2))
    for k in ("roofline_arrays_s", "roofline_frames_s", "decode_cost_s", "decode_cost_enum_ids_s", "all_columns_s"):
        print(f"{k}: {r[k]:.3f} s -> {pts.height / r[k] / 1e6:.2f}M points/s "
              f"({r[k] / r['roofline_frames_s']:.1f}x the numpy roofline with frames)")
    child = subprocess.run([sys.executable, __file__, "--child", str(n2)], capture_output=True, text=True,
                           check=True, cwd=ROOT)
    r["big"] = json.loads(child.stdout)
    for i, call in enumerate(r["big"]["calls"]):
        print(f"{r['big']['points']:,} points, call {i + 1}: {call['seconds']:.2f} s, peak RSS "
              f"{call['peak_rss_bytes'] / 2**30:.2f} GiB" + (f", traced peak {call['traced_peak_bytes'] / 2**30:.2f} GiB"
                                                            if call["traced_peak_bytes"] else ""))
    one = pl.DataFrame({"model": ["llama-3.3-70b"], "hardware": ["h100-sxm"], "precision": ["fp8"],
                        "batch_size": [64], "num_gpus": [2]})
    for label, cols in (("one_row_decode_cost", DECODE_COST), ("one_row_all", None)):
        for out in ("frame", "records"):
            evaluate(one, catalog, columns=cols, output=out)
            times = []
            for _ in range(300):
                t0 = time.perf_counter()
                evaluate(one, catalog, columns=cols, output=out)
                times.append(time.perf_counter() - t0)
            r[f"{label}_{out}_median_s"], r[f"{label}_{out}_best_s"] = float(np.median(times)), min(times)
            print(f"{label} ({out}): median {np.median(times) * 1e3:.2f} ms, best {min(times) * 1e3:.2f} ms")
    from econ.engine import small
    for out in ("frame", "records"):  # the small path's first call of a row (its cache emptied before each call)
        times = []
        for _ in range(100):
            small._CACHE.clear()
            t0 = time.perf_counter()
            evaluate(one, catalog, columns=DECODE_COST, output=out)
            times.append(time.perf_counter() - t0)
        r[f"one_row_decode_cost_{out}_miss_median_s"] = float(np.median(times))
        r[f"one_row_decode_cost_{out}_miss_best_s"] = min(times)
        print(f"one_row_decode_cost ({out}), small path's miss: median {np.median(times) * 1e3:.2f} ms, "
              f"best {min(times) * 1e3:.2f} ms")
    from econ.analyses.optimize import frontier
    frontier(catalog, model="deepseek-v3")  # warm-up
    r["frontier_s"] = best_of(lambda: frontier(catalog, model="deepseek-v3"), max(2, rep // 2))
    r["accelerators"] = catalog.accelerators.height
    print(f"frontier, DeepSeek-V3 over all {catalog.accelerators.height} accelerators: {r['frontier_s']:.2f} s")
    econ = str(Path(sys.executable).parent / "econ")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    py = sys.executable
    load_catalog()  # the cache of this data-folder version exists (a first call per version pays ~0.1 s more)
    r["process_import_floor_s"] = process_time([py, "-c", "import numpy, polars"], rep, env)
    r["process_cost_s"] = process_time([py, "-m", "econ.cli", "cost", "--model", "llama-3.3-70b", "--hardware",
                                        "h100-sxm"], rep, env)
    r["process_quotes_check_s"] = process_time([py, "-m", "econ.cli", "quotes", "check"], max(2, rep // 2), env)
    r["process_help_s"] = process_time([py, "-m", "econ.cli", "--help"], rep, env)
    del econ
    for k in ("process_import_floor_s", "process_cost_s", "process_quotes_check_s", "process_help_s"):
        print(f"{k}: {r[k]:.3f} s")
    if not args.no_write:
        RESULTS.write_text(json.dumps(r, indent=1) + "\n")
        print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
