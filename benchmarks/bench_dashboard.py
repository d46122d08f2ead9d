"""First visit and rerun time of every dashboard page (targets: first visit < 3 s, rerun p90 < 300 ms, 2 cores).

Measured, never asserted (timed tests are flaky on a shared machine). Two measurements:

1. Server side, with Streamlit's AppTest, one fresh Python process per page (``--one PAGE``) so that nothing is
   imported or cached before the page runs:

   - ``cold``: the first run of the page in a fresh process (the imports of Streamlit's script dependencies,
     polars, pandas, Altair and econ, the catalog load, every computation with empty caches): what the very first
     visitor of a freshly started server waits for when that visit is a deep link to this page.
   - ``first``: the page's first run in a process that has already served the landing page (Cost explorer) to
     another session: the first visit of the page on a running server (shared imports and catalog loaded, this
     page's computations not cached yet). For Cost explorer itself it is its second session's first run.
     What econ keeps on disk (``ECON_CACHE_DIR``: the validated catalog, the Quote checker's floor search and
     screen) is used as a restarted server uses it; ``--empty-disk-cache`` measures with none (the first visit
     after an install or a data or code change).
   - ``cached``: reruns after flipping PUE back to a value seen before (every econ call hits its cache): what a
     rerun costs when nothing the page computes has changed (a widget that only redraws, a tab, a download).
   - ``uncached``: reruns after changing PUE to a value never seen before, so every econ call misses its cache
     (the worst case of a widget change).

   Each figure is given as wall-clock time and CPU time of the process (``time.process_time``: every thread of the
   process, which AppTest runs the script in), with the 1-minute load average when the page was measured: other
   jobs on a shared 2-core machine inflate the wall-clock time, not the CPU time. AppTest adds its own bookkeeping,
   so these numbers are an upper bound of the script time in a real session.
2. ``--browser``: the round trip a user sees in headless Chromium (Playwright): from typing a new PUE
   into the sidebar to the app reporting it has finished running (``data-test-script-state``), with
   every chart redrawn.

Usage::

    .venv/bin/python benchmarks/bench_dashboard.py [--repeat 15] [--pages cost_explorer ...] [--browser]
        [--empty-disk-cache]

Prints one line per page and kind: p50 and p90 wall-clock and CPU milliseconds, and the 1-minute load average (the
larger of the page's two processes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAGES_DIR = ROOT / "dashboards" / "pages"


def _pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


class _Clock:
    """Wall-clock and process CPU time of one block (``with _Clock() as c: ...``; ``c.wall``, ``c.cpu`` in s)."""

    def __enter__(self):
        self.w0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.w0, time.process_time() - self.c0


LANDING = "cost_explorer"
"""The page a server shows first (lowest ``ORDER``, dashboards/app.py)."""


def measure_page(stem: str, repeat: int, cold: bool = False) -> dict:
    """In this (fresh) process: the first run of page ``stem`` (``cold``: nothing run before; else after the landing
    page's run in another session) and ``repeat`` cached and uncached reruns (not with ``cold``)."""
    load = os.getloadavg()[0]
    with _Clock() as imp:
        from streamlit.testing.v1 import AppTest
    if not cold:
        landing = AppTest.from_file(str(PAGES_DIR / f"{LANDING}.py"), default_timeout=120)
        landing.run()
    at = AppTest.from_file(str(PAGES_DIR / f"{stem}.py"), default_timeout=120)
    with _Clock() as first:
        at.run()
    if at.exception:  # a page broken by work in progress: say so, measure the others
        return {"page": stem, "error": at.exception[0].message.splitlines()[0][:160]}
    if cold:
        return {"page": stem, "load_1min": load, "import_s": imp.wall, "cold": {"wall": [first.wall],
                                                                                "cpu": [first.cpu]}}
    runs = {"uncached": [], "cached": []}
    pue = at.number_input(key="sc.pue")
    for i in range(repeat):
        for kind, value in (("uncached", round(1.30 + 0.001 * (i + 1), 3)), ("cached", 1.40)):
            pue.set_value(value)
            with _Clock() as c:
                at.run()
            runs[kind].append((c.wall, c.cpu))
            assert not at.exception, at.exception[0].message
            pue = at.number_input(key="sc.pue")
    out = {"page": stem, "load_1min": load, "import_s": imp.wall,
           "first": {"wall": [first.wall], "cpu": [first.cpu]}}
    for kind, xs in runs.items():
        out[kind] = {"wall": [w for w, _ in xs], "cpu": [c for _, c in xs]}
    return out


def bench_apptest(repeat: int, only=(), empty_disk_cache: bool = False) -> list[dict]:
    """Every page (or ``only``) measured in its own fresh process (:func:`measure_page`).

    ``empty_disk_cache``: each process gets an empty ``ECON_CACHE_DIR`` of its own, so nothing econ keeps on disk (the
    validated catalog, the Quote checker's floor search and screen: :data:`econ.analyses.quotes.SEARCH_DISK_ENTRIES`)
    helps: the first visit after an install or a data or code change. Without it, the processes share the user's
    cache (the cold run of a page writes what the first-visit run then reads: a restarted server)."""
    import shutil
    import tempfile

    results = []
    for path in sorted(PAGES_DIR.glob("*.py")):
        if path.name.startswith("_") or only and path.stem not in only:
            continue
        parts = []
        for extra in (["--cold"], []):
            env = dict(os.environ, PYTHONPATH=str(ROOT))
            if empty_disk_cache:
                env["ECON_CACHE_DIR"] = tempfile.mkdtemp(prefix="econ-bench-cache-")
            try:
                run = subprocess.run([sys.executable, __file__, "--one", path.stem, "--repeat", str(repeat), *extra],
                                     capture_output=True, text=True, cwd=ROOT, env=env)
            finally:
                if empty_disk_cache:
                    shutil.rmtree(env["ECON_CACHE_DIR"], ignore_errors=True)
            line = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
            if run.returncode or not line.startswith("{"):
                print(f"{path.stem}: not measured: {run.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
                break
            r = json.loads(line)
            if "error" in r:
                print(f"{path.stem}: not measured, the page raised: {r['error']}", file=sys.stderr)
                break
            parts.append(r)
        else:
            results.append({**parts[1], "cold": parts[0]["cold"], "load_1min": max(p["load_1min"] for p in parts)})
    return results


def rows_of(results: list[dict]) -> list[tuple]:
    """(page, kind, p50 wall ms, p90 wall ms, p50 CPU ms, p90 CPU ms, load average) per page and kind."""
    rows = []
    for r in results:
        for kind in ("cold", "first", "cached", "uncached"):
            w, c = r[kind]["wall"], r[kind]["cpu"]
            rows.append((r["page"], kind, 1e3 * statistics.median(w), 1e3 * _pct(w, 0.9), 1e3 * statistics.median(c),
                         1e3 * _pct(c, 0.9), r["load_1min"]))
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
    ap.add_argument("--empty-disk-cache", action="store_true",
                    help="every process starts with an empty ECON_CACHE_DIR (the first visit after an install or a "
                         "data or code change); default: the user's cache, as a restarted server has it")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: measure one page in this process, print JSON
    ap.add_argument("--cold", action="store_true", help=argparse.SUPPRESS)  # internal, with --one
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure_page(args.one, args.repeat, cold=args.cold)))
        return
    rows = rows_of(bench_apptest(args.repeat, args.pages, args.empty_disk_cache))
    print(f"{'page':<22} {'run':<9} {'p50 ms':>8} {'p90 ms':>8} {'p50 CPU':>8} {'p90 CPU':>8} {'load':>5}")
    for name, kind, med, p90, cmed, cp90, load in rows:
        print(f"{name:<22} {kind:<9} {med:>8.0f} {p90:>8.0f} {cmed:>8.0f} {cp90:>8.0f} {load:>5.2f}")
    if args.browser:
        print(f"\n{'page':<22} {'run':<9} {'p50 ms':>8} {'p90 ms':>8}")
        for name, kind, med, p90 in bench_browser(max(5, args.repeat // 2)):
            print(f"{name:<22} {kind:<9} {med:>8.0f} {p90:>8.0f}")


if __name__ == "__main__":
    main()
