"""Rerun time of every dashboard page after a widget change (target: < 300 ms on a 2-core machine).

Two measurements:

1. Server side, with Streamlit's AppTest: the whole script run (sidebar, econ call, charts, tables)
   after changing a widget. ``uncached`` changes PUE to a value never seen before, so every econ call
   misses its cache (the worst case); ``cached`` flips back to a value seen before. AppTest adds its own
   bookkeeping, so these numbers are an upper bound of the script time in a real session.
2. ``--browser``: the round trip a user sees in headless Chromium (Playwright): from typing a new PUE
   into the sidebar to the app reporting it has finished running (``data-test-script-state``), with
   every chart redrawn.

Usage::

    .venv/bin/python benchmarks/bench_dashboard.py [--repeat 15] [--browser]

Prints one line per page: median and 90th percentile in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAGES_DIR = ROOT / "dashboards" / "pages"


def _pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def bench_apptest(repeat: int, only=()) -> list[tuple[str, str, float, float]]:
    from streamlit.testing.v1 import AppTest

    rows = []
    for path in sorted(PAGES_DIR.glob("*.py")):
        if path.name.startswith("_") or only and path.stem not in only:
            continue
        at = AppTest.from_file(str(path), default_timeout=120)
        at.run()
        if at.exception:  # a page broken by work in progress: say so, measure the others
            print(f"{path.stem}: not measured, the page raised: {at.exception[0].message.splitlines()[0][:160]}",
                  file=sys.stderr)
            continue
        first = at.number_input(key="sc.pue")
        uncached, cached = [], []
        for i in range(repeat):
            first.set_value(round(1.30 + 0.001 * (i + 1), 3))
            t0 = time.perf_counter()
            at.run()
            uncached.append(time.perf_counter() - t0)
            first = at.number_input(key="sc.pue")
            first.set_value(1.40)
            t0 = time.perf_counter()
            at.run()
            cached.append(time.perf_counter() - t0)
            first = at.number_input(key="sc.pue")
            assert not at.exception, at.exception[0].message
        for kind, xs in (("uncached", uncached), ("cached", cached)):
            rows.append((path.stem, kind, 1e3 * statistics.median(xs), 1e3 * _pct(xs, 0.9)))
    return rows


def bench_browser(repeat: int) -> list[tuple[str, str, float, float]]:
    import os
    import shutil
    import socket
    import subprocess
    import urllib.request

    from playwright.sync_api import sync_playwright

    from dashboards.app import discover

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "streamlit_app.py"),
                             "--server.headless=true", f"--server.port={port}", "--server.address=127.0.0.1",
                             "--browser.gatherUsageStats=false", "--server.fileWatcherType=none"],
                            cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    rows = []
    try:
        for _ in range(200):
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.2)
        done = '[data-testid="stApp"][data-test-script-state="notRunning"]'
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                        args=["--no-sandbox", "--headless", "--disable-gpu",
                                              "--disable-background-networking", "--disable-component-update",
                                              "--disable-sync", "--no-first-run"])
            specs = discover(PAGES_DIR)
            for spec in specs:
                page = browser.new_page(viewport={"width": 1500, "height": 1000})
                page.goto(f"{url}/" if spec is specs[0] else f"{url}/{spec.url_path}")
                page.wait_for_selector(done, timeout=60_000)
                pue = page.get_by_role("spinbutton", name="PUE (facility / IT energy)")
                times = []
                for i in range(repeat):
                    pue.fill(f"{1.30 + 0.001 * (i + 1):.3f}")
                    t0 = time.perf_counter()
                    pue.press("Enter")
                    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="running"]',
                                           timeout=10_000, state="attached")
                    page.wait_for_selector(done, timeout=60_000)
                    for chart in page.locator('[data-testid="stVegaLiteChart"]').all():
                        chart.locator("canvas, svg").first.wait_for(state="visible")
                    times.append(time.perf_counter() - t0)
                rows.append((spec.path.stem, "browser", 1e3 * statistics.median(times), 1e3 * _pct(times, 0.9)))
                page.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--browser", action="store_true", help="also time the round trip in headless Chromium")
    ap.add_argument("--pages", nargs="*", default=(), help="page file stems to measure (default: all)")
    args = ap.parse_args()
    rows = bench_apptest(args.repeat, args.pages)
    if args.browser:
        rows += bench_browser(max(5, args.repeat // 2))
    print(f"{'page':<22} {'rerun':<9} {'median ms':>10} {'p90 ms':>8}")
    for name, kind, med, p90 in rows:
        print(f"{name:<22} {kind:<9} {med:>10.0f} {p90:>8.0f}")


if __name__ == "__main__":
    main()
