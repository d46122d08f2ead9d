"""Time of the quote checker (issue 10 follow-up; target: < 1 s for each line on a 2-core machine).

Lines, each the median (and 90th percentile) of ``--repeat`` runs in this process, after imports:

- ``cli all quotes``: ``econ quotes check`` with default arguments (the shipped ``data/quotes.csv``, owned-custom
  tier), the whole command in-process: catalog load, quotes load, check, the printed table and reasons;
- its phases: ``load_catalog``, ``load_quotes``, ``check_quotes all (cold)`` (:func:`econ.analyses.quotes.check_quotes` on a
  catalog object it has not seen, as in a fresh ``econ`` process) and ``print table + reasons`` (the command's
  output of that result);
- ``check_quotes all (cached)``: the same check again on the same catalog object: the layouts, grid and screen come
  from the search cache, as on a dashboard rerun that changes only the economics;
- ``cli all --tco hyperscaler``: the same command in another cost tier;
- ``cli one quote``: ``econ quotes check --model llama-3.3-70b --input-price 0.59 --output-price 0.79 --hardware
  h100-sxm --tco hyperscaler`` (the README example);
- ``pnl day 6``: :func:`econ.analyses.provider_economics.modeled_floor_pnl` on DeepSeek's day-6 figures;
- ``page uncached`` / ``page cached``: the Quote checker page rerun after a sidebar change, with Streamlit's
  AppTest (the approach of ``benchmarks/bench_dashboard.py``: a PUE never seen before misses every cache).

Usage::

    .venv/bin/python benchmarks/bench_quotes.py [--repeat 7] [--no-page] [--reference]

``--reference`` times the exhaustive reference search (every grid point through the full engine) instead of the
screened one; both give the same answers (tests/analyses/test_quotes_fast.py). The machine is shared: read medians.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def _time(fn, repeat: int) -> list[float]:
    fn()  # warm-up (first-call costs: lazy imports, caches of the catalog arrays)
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def _cli(argv):
    from econ.cli import main

    def run():
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(list(argv)) == 0
    return run


def bench(repeat: int, page: bool) -> list[tuple[str, float, float]]:
    from econ.tables.catalog import load_catalog
    from econ.analyses.provider_economics import DEEPSEEK_DAY6, load_disclosure, modeled_floor_pnl
    from econ.analyses.quotes import check_quotes
    from econ.tables.quote_files import load_quotes

    from econ.commands.quotes import _print

    rows = []
    cat = load_catalog()
    quotes = load_quotes(cat)
    day6 = load_disclosure(DEEPSEEK_DAY6)
    fresh = [load_catalog() for _ in range(repeat + 1)]  # one catalog object per cold run (no cache on it yet)
    result = check_quotes(quotes, cat)

    def cold():
        check_quotes(quotes, fresh.pop())

    cases = [
        ("cli all quotes", _cli(["quotes", "check"])),
        ("  load_catalog", load_catalog),
        ("  load_quotes", lambda: load_quotes(cat)),
        ("  check_quotes all (cold)", cold),
        ("  print table + reasons", lambda: _print(result, "table", io.StringIO())),
        ("check_quotes all (cached)", lambda: check_quotes(quotes, cat)),
        ("cli all --tco hyperscaler", _cli(["quotes", "check", "--tco", "hyperscaler"])),
        ("cli one quote", _cli(["quotes", "check", "--model", "llama-3.3-70b", "--input-price", "0.59",
                                "--output-price", "0.79", "--hardware", "h100-sxm", "--tco", "hyperscaler"])),
        ("pnl day 6", lambda: modeled_floor_pnl(cat, model=day6.model, hardware=day6.hardware,
                                                min_tokens_per_s_per_user=day6.output_tokens_per_s_per_user,
                                                weight_format=day6.weight_format, **day6.traffic)),
    ]
    for name, fn in cases:
        xs = _time(fn, repeat)
        rows.append((name, 1e3 * statistics.median(xs), 1e3 * _pct(xs, 0.9)))
        print(f"{name:<28} {rows[-1][1]:>10.0f} {rows[-1][2]:>8.0f}", file=sys.stderr, flush=True)
    if page:
        from benchmarks.bench_dashboard import bench_apptest, rows_of

        for _page, kind, med, p90, *_cpu_and_load in rows_of(bench_apptest(repeat, ("quote_checker",))):
            rows.append((f"page {kind}", med, p90))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--no-page", action="store_true", help="skip the dashboard page (AppTest)")
    ap.add_argument("--reference", action="store_true", help="time the exhaustive reference search")
    args = ap.parse_args()
    if args.reference:
        import econ.analyses.quotes
        if not hasattr(econ.analyses.quotes, "EXHAUSTIVE_SEARCH"):
            ap.error("this tree has no screened search (econ.analyses.quotes.EXHAUSTIVE_SEARCH): it always runs the reference")
        econ.analyses.quotes.EXHAUSTIVE_SEARCH = True
    rows = bench(args.repeat, not args.no_page)
    print(f"{'case':<28} {'median ms':>10} {'p90 ms':>8}")
    for name, med, p90 in rows:
        print(f"{name:<28} {med:>10.0f} {p90:>8.0f}")


if __name__ == "__main__":
    main()
