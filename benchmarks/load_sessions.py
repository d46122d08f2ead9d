"""Server memory under many distinct sessions: the resident size reaches a plateau (issue 21, part 7).

The reliability run of issue 21 measured ~7 MB more server memory per distinct scenario with no plateau (1.94 GB after
150 sessions). Every result cache of the dashboard is bounded in entries and in bytes
(``dashboards.components.memory``), so memory must stop growing once the caches are full.

Each session is a fresh Streamlit AppTest (its own session state, the process's shared caches, as in one server
process) of one page, opened on a link with a scenario no earlier session used (a distinct PUE, utilization and
power price: every cached result misses). After each session the resident set size (``/proc/self/status`` VmRSS) is
recorded. Not a timed test: a measurement, printed as the RSS every ``--every`` sessions and the growth over the
last half of the run against the first half.

Measured (2026-11-26, wt-reliab, 500 sessions over the Cost explorer, Cluster, Hardware comparison and Head to head
pages, on a 2-core machine shared with other jobs): RSS 244.5 MB after the first session, 625 MB after 50, 655 MB
after 100, 692 MB after 250, 689 MB after 500 (peak 814 MB); growth over the second half -3.1 MB (-0.012 MB per
session); 0 failed sessions. Issue 21's run (before the byte bounds): 1.94 GB after 150 sessions, no plateau.

Usage::

    .venv/bin/python benchmarks/load_sessions.py [--sessions 500] [--pages cost_explorer,cluster] [--report FILE]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAGES_DIR = ROOT / "dashboards" / "pages"
DEFAULT_PAGES = ("cost_explorer", "cluster", "hardware_comparison", "head_to_head")


def rss_mb() -> float:
    """Resident set size of this process. [MB]"""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")  # pragma: no cover - not Linux


def scenario(i: int) -> dict[str, str]:
    """The i-th distinct scenario of the run (no two sessions share one; each stays inside every field's range)."""
    return {"pue": f"{1.05 + (i % 190) * 0.01:.2f}", "utilization_frac": f"{0.30 + (i // 190) * 0.05 + (i % 7) * 0.01:.2f}",
            "usd_per_kwh": f"{0.050 + (i % 97) * 0.001:.3f}"}


def run(sessions: int, pages: tuple[str, ...], every: int = 25, progress=print) -> list[dict]:
    """Open ``sessions`` distinct sessions round-robin over ``pages``; one record (session, page, rss_mb, seconds) each."""
    from streamlit.testing.v1 import AppTest

    records = []
    for i in range(sessions):
        page = pages[i % len(pages)]
        at = AppTest.from_file(str(PAGES_DIR / f"{page}.py"), default_timeout=300)
        at.query_params.update(scenario(i))
        t0 = time.perf_counter()
        at.run()
        ok = not at.exception
        del at
        gc.collect()
        records.append({"session": i + 1, "page": page, "ok": ok, "rss_mb": round(rss_mb(), 1),
                        "seconds": round(time.perf_counter() - t0, 2)})
        if progress and ((i + 1) % every == 0 or i == 0):
            progress(f"{i + 1:5d} sessions  RSS {records[-1]['rss_mb']:8.1f} MB  ({page}, {records[-1]['seconds']} s)")
    return records


def plateau(records: list[dict]) -> dict:
    """Growth of the RSS over the second half of the run and over the first (MB), and MB per session in each."""
    n = len(records)
    half = n // 2
    first = records[half - 1]["rss_mb"] - records[0]["rss_mb"]
    second = records[-1]["rss_mb"] - records[half - 1]["rss_mb"]
    return {"sessions": n, "rss_first_mb": records[0]["rss_mb"], "rss_half_mb": records[half - 1]["rss_mb"],
            "rss_last_mb": records[-1]["rss_mb"], "rss_peak_mb": max(r["rss_mb"] for r in records),
            "growth_first_half_mb": round(first, 1), "growth_second_half_mb": round(second, 1),
            "mb_per_session_second_half": round(second / max(1, n - half), 3),
            "failed_sessions": sum(not r["ok"] for r in records)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=500)
    p.add_argument("--pages", default=",".join(DEFAULT_PAGES))
    p.add_argument("--every", type=int, default=25, help="print the RSS every N sessions")
    p.add_argument("--report", help="write every record and the summary as JSON to this file")
    args = p.parse_args(argv)
    records = run(args.sessions, tuple(x.strip() for x in args.pages.split(",") if x.strip()), args.every)
    summary = plateau(records)
    print(json.dumps(summary, indent=2))
    if args.report:
        Path(args.report).write_text(json.dumps({"summary": summary, "records": records}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
