"""Before / after: the engine of two source trees on the same grid, interleaved runs, each beside the numpy roofline.

Run: .venv/bin/python benchmarks/bench_ab.py OLD_TREE NEW_TREE [--points N] [--rounds R]

OLD_TREE / NEW_TREE are folders holding an ``econ`` package (e.g. ``git archive <commit> | tar -x -C /tmp/old``).
Each round runs one child process per tree, alternating, so a machine whose load changes during the run weighs on
both alike; the best of the rounds is kept. Prints, per tree: decode + cost and all-column seconds on the grid of
benchmarks/bench_engine.py, one-row milliseconds, the frontier seconds, and the ratio to the numpy roofline
measured in the same child.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r'''
import json, sys, time
import econ  # from the tree under test (PYTHONPATH): every econ.* submodule then comes from it
sys.path.insert(0, {bench!r})
import numpy as np, polars as pl
from econ.tables.catalog import load_catalog
from econ.engine import evaluate
from bench_engine import grid, DECODE_COST, roofline_tables, numpy_roofline_frame, best_of
c = load_catalog()
pts = grid(c, {n})
evaluate(pts.head(1000), c, strict=False)
t = roofline_tables(c)
r = dict(roofline_frames_s=best_of(lambda: numpy_roofline_frame(t, pts), 3),
         decode_cost_s=best_of(lambda: evaluate(pts, c, strict=False, columns=DECODE_COST), 2),
         all_columns_s=best_of(lambda: evaluate(pts, c, strict=False), 1), points=pts.height)
one = pl.DataFrame(dict(model=["llama-3.3-70b"], hardware=["h100-sxm"], precision=["fp8"], batch_size=[64], num_gpus=[2]))
evaluate(one, c)
r["one_row_all_s"] = best_of(lambda: evaluate(one, c), 200)
r["one_row_decode_cost_s"] = best_of(lambda: evaluate(one, c, columns=DECODE_COST), 200)
from econ.analyses.optimize import frontier
frontier(c, model="deepseek-v3")
r["frontier_s"] = best_of(lambda: frontier(c, model="deepseek-v3"), 1)
r["econ"] = econ.__file__
print(json.dumps(r))
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    best: dict = {}
    for _ in range(args.rounds):
        for tree in (args.old, args.new):
            code = CHILD.format(bench=str(HERE), n=args.points)
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                 env={"PYTHONPATH": str(Path(tree).resolve()), "PATH": "/usr/bin:/bin",
                                      "ECON_CACHE_DIR": "off"}, cwd=tree)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            b = best.setdefault(tree, r)
            for k, v in r.items():
                b[k] = min(b[k], v) if k != "econ" else v
    for tree, r in best.items():
        print(f"{r['econ']}: {r['points']:,} points; decode + cost {r['decode_cost_s']:.2f} s "
              f"({r['points'] / r['decode_cost_s'] / 1e6:.2f}M points/s, {r['decode_cost_s'] / r['roofline_frames_s']:.1f}x"
              f" the roofline with frames {r['roofline_frames_s'] * 1e3:.0f} ms); all columns {r['all_columns_s']:.2f} s "
              f"({r['all_columns_s'] / r['roofline_frames_s']:.0f}x); one row {r['one_row_decode_cost_s'] * 1e3:.2f} ms "
              f"decode + cost, {r['one_row_all_s'] * 1e3:.2f} ms all; frontier {r['frontier_s']:.2f} s")
    o, n = best[args.old], best[args.new]
    print("speed-up new vs old: " + ", ".join(f"{k} {o[k] / n[k]:.2f}x" for k in
                                               ("decode_cost_s", "all_columns_s", "one_row_decode_cost_s",
                                                "one_row_all_s", "frontier_s")))


if __name__ == "__main__":
    main()
