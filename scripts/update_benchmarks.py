"""Regenerate the engine rows of the README's Benchmarks table from benchmarks/results/bench_engine.json.

Usage::

    .venv/bin/python benchmarks/bench_engine.py        # measure (writes the JSON)
    .venv/bin/python scripts/update_benchmarks.py      # rewrite the rows between the README's markers
    .venv/bin/python scripts/update_benchmarks.py --check   # exit 1 if the README differs from the JSON

The table between ``<!-- bench_engine:start -->`` and ``<!-- bench_engine:end -->`` is rewritten: its rows whose
command is benchmarks/bench_engine.py are generated, the other rows (other benchmarks, edited by hand) are kept in
their order after them. Each row gives the figure, its ratio to the plain numpy roofline
measured in the same run (benchmarks/bench_engine.py :func:`numpy_roofline`) where one applies, and issue 20's
target with met / not met.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RESULTS = ROOT / "benchmarks" / "results" / "bench_engine.json"
START, END = "<!-- bench_engine:start -->", "<!-- bench_engine:end -->"
CMD = "`.venv/bin/python benchmarks/bench_engine.py`"


def _verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


def rows(r: dict) -> list[str]:
    """The generated table rows (markdown) of one benchmark run."""
    n = r["points"]
    rate = {k: n / r[k] / 1e6 for k in ("roofline_arrays_s", "roofline_frames_s", "decode_cost_s",
                                        "decode_cost_enum_ids_s", "all_columns_s")}
    ratio = r["decode_cost_s"] / r["roofline_frames_s"]
    big = r["big"]
    calls = big["calls"]
    peak = max(c["peak_rss_bytes"] for c in calls) / 2**30
    # linearity from the calls run without tracemalloc (it slows the traced call ~2x)
    per_point = [c["seconds"] / big["points"] for c in calls if not c.get("traced_peak_bytes")] or \
        [c["seconds"] / big["points"] for c in calls]
    lin = min(per_point) / (r["decode_cost_s"] / n)
    out = [
        f"| plain numpy roofline of the same grid (bytes, FLOPs -> step -> $/M; arrays in and out / Polars frames "
        f"with string ids) | same | {r['roofline_arrays_s'] * 1e3:.0f} ms: {rate['roofline_arrays_s']:.1f}M points/s"
        f" / {r['roofline_frames_s'] * 1e3:.0f} ms: {rate['roofline_frames_s']:.1f}M points/s | the yardstick |",
        f"| one engine, {n / 1e3:,.0f}k-point grid (every model x accelerator x bf16/fp8 x batches x contexts), "
        f"decode + cost columns | same | {r['decode_cost_s']:.2f} s: {rate['decode_cost_s']:.2f}M points/s, "
        f"{ratio:.1f}x the roofline with frames (Enum ids: {r['decode_cost_enum_ids_s']:.2f} s) | >= 15M points/s, "
        f"<= 2x the roofline: {_verdict(rate['decode_cost_s'] >= 15 and ratio <= 2)} |",
        f"| same grid, all {len(_result_columns())} result columns | same | {r['all_columns_s']:.2f} s: "
        f"{rate['all_columns_s']:.2f}M points/s ({r['all_columns_s'] / r['roofline_frames_s']:.0f}x the roofline) | "
        f">= 4M points/s: {_verdict(rate['all_columns_s'] >= 4)} |",
        f"| {big['points'] / 1e6:.1f}M points, decode + cost, three calls in a child process | same | "
        + ", ".join(f"{c['seconds']:.1f} s" + (" (under tracemalloc)" if c.get("traced_peak_bytes") else "")
                    for c in calls)
        + f" ({lin:.2f}x the per-point time at 1e6: linear); peak RSS {peak:.2f} GiB"
        + (f", traced peak of the third call {calls[-1]['traced_peak_bytes'] / 2**30:.2f} GiB"
           if calls[-1].get("traced_peak_bytes") else "")
        + f" | < 2 GiB on repeated calls: {_verdict(peak < 2)} |",
        f"| one row, decode + cost (frame / `output=\"records\"`) | same | median "
        f"{r['one_row_decode_cost_frame_median_s'] * 1e3:.2f} / {r['one_row_decode_cost_records_median_s'] * 1e3:.2f}"
        f" ms (best {r['one_row_decode_cost_frame_best_s'] * 1e3:.2f} / {r['one_row_decode_cost_records_best_s'] * 1e3:.2f})"
        f" | <= 0.2 ms: {_verdict(r['one_row_decode_cost_records_median_s'] <= 2e-4)} |",
        f"| one row, all columns (frame / records) | same | median {r['one_row_all_frame_median_s'] * 1e3:.2f} / "
        f"{r['one_row_all_records_median_s'] * 1e3:.2f} ms (best {r['one_row_all_frame_best_s'] * 1e3:.2f} / "
        f"{r['one_row_all_records_best_s'] * 1e3:.2f}) | <= 0.5 ms: "
        f"{_verdict(r['one_row_all_records_median_s'] <= 5e-4)} |",
        f"| Pareto frontier, DeepSeek-V3 over all {r['accelerators']} accelerators, in-process | same | "
        f"{r['frontier_s']:.2f} s | <= 0.4 s: {_verdict(r['frontier_s'] <= 0.4)} |",
        f"| `econ cost --model llama-3.3-70b --hardware h100-sxm` as a process (floor: `python -c \"import numpy, "
        f"polars\"` {r['process_import_floor_s']:.2f} s) | same | {r['process_cost_s']:.2f} s | <= 0.35 s: "
        f"{_verdict(r['process_cost_s'] <= 0.35)} |",
        f"| `econ quotes check` (all shipped quotes) as a process | same | {r['process_quotes_check_s']:.2f} s | "
        f"<= 0.8 s: {_verdict(r['process_quotes_check_s'] <= 0.8)} |",
        f"| `econ --help` (fresh interpreter) | same | {r['process_help_s']:.2f} s | < 0.3 s: "
        f"{_verdict(r['process_help_s'] < 0.3)} |",
    ]
    return [row.replace("| same |", f"| {CMD} |", 1) for row in out]


def _result_columns() -> tuple:
    sys.path.insert(0, str(ROOT))
    from econ.engine import RESULT_COLUMNS
    return RESULT_COLUMNS


def render(readme: str, r: dict) -> str:
    """``readme`` with the table between the markers regenerated (hand-edited rows kept) and the run's context."""
    head, rest = readme.split(START, 1)
    inside, tail = rest.split(END, 1)
    kept = [line for line in inside.splitlines()
            if line.startswith("|") and "bench_engine.py" not in line and not line.startswith(("| what |", "|---"))]
    note = (f"Engine rows generated by `scripts/update_benchmarks.py` from `benchmarks/results/bench_engine.json` "
            f"(run of {r['date']}: {r['machine']} (1-minute load average), best of {r['repeat']}, numba "
            f"{r['numba'] or 'absent'}). Seconds scale with the machine's load; the ratios to the roofline much less.")
    table = ["| what | command | result | target |", "|---|---|---|---|", *rows(r), *kept]
    return head + START + "\n" + note + "\n\n" + "\n".join(table) + "\n\n" + END + tail


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    r = json.loads(RESULTS.read_text())
    old = README.read_text(encoding="utf-8")
    new = render(old, r)
    if args.check:
        if new != old:
            print("README.md Benchmarks rows differ from benchmarks/results/bench_engine.json", file=sys.stderr)
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
