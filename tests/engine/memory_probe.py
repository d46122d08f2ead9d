"""Memory probe of the engine's hot path, run in a fresh interpreter by tests/engine/test_engine_memory.py.

A test process that has run dashboard tests keeps Streamlit's threads alive; they allocate (tracemalloc traces
every thread) and make cycles while a probe measures, so the measurements run here, alone. Prints one JSON object:
{"unreachable": {case: objects the collector found after one call}, "peaks": [traced peak of three calls, bytes]}.
The three peak calls run on one thread: with two, the peak depends on how many blocks the pool holds at once, which
the scheduler decides (a CI run saw the third call 6% above the first with nothing carried over); on one thread the
three peaks agree within 0.1%.
"""

from __future__ import annotations

import gc
import json
import sys
import tracemalloc
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE / "fixtures" / "engine_speed"))

from econ.engine import evaluate  # noqa: E402
from econ.tables.catalog import load_catalog  # noqa: E402
from record import DECODE_COST, cases  # noqa: E402


def main() -> None:
    catalog = load_catalog()
    all_cases = cases(catalog)
    unreachable = {}
    for name in ("grid", "layouts", "spec", "economics", "decode_cost", "small"):
        points, kw = all_cases[name]
        evaluate(points, catalog, **kw)  # warm the static tables
        gc.collect()
        gc.disable()
        try:
            evaluate(points, catalog, block_rows=512, **kw)
            unreachable[name] = gc.collect()
        finally:
            gc.enable()
    points = all_cases["grid"][0].sample(40_000, with_replacement=True, seed=1)
    evaluate(points.head(100), catalog, strict=False)
    peaks = []
    gc.disable()
    try:
        for _ in range(3):
            tracemalloc.start()
            out = evaluate(points, catalog, strict=False, columns=DECODE_COST, block_rows=4096, threads=1)
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
            del out
    finally:
        gc.enable()
    print(json.dumps({"unreachable": unreachable, "peaks": peaks}))


if __name__ == "__main__":
    main()
