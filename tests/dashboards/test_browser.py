"""The dashboard in a real browser: every page opens in headless Chromium with its charts and tables, no errors.

Needs Debian's Chromium (``apt-get install chromium``: /usr/bin/chromium) and the ``playwright`` Python
package (no browser download: Playwright drives the system Chromium). Marked ``browser``; skipped
when either is missing. Full-page screenshots at a desktop (1440 px) and a phone (390 px) width go to
``artifacts/dashboard-<page>-<width>.png`` for a person to look at; the tests also read the page as a
person would: no "Page not found" pop-up on a fresh server's first deep link, no "None" in a table,
no KPI value cut off with an ellipsis, no chart wider than the screen.

``python tests/dashboards/test_browser.py [URL]`` takes the screenshots of a running dashboard without pytest.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
ARTIFACTS = ROOT / "artifacts"
ENTRY = ROOT / "streamlit_app.py"
WIDTHS = (1440, 390)
"""Desktop and phone widths of the screenshots (GUIDE.md)."""


def _pages():
    from dashboards.app import discover
    return discover()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _needs_browser() -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium not installed (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api")


@contextlib.contextmanager
def dashboard(entry: Path = ENTRY):
    """A fresh Streamlit server of ``entry`` on a free port; yields its URL and stops it afterwards."""
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(entry), "--server.headless=true",
         f"--server.port={port}", "--server.address=127.0.0.1", "--browser.gatherUsageStats=false",
         "--server.fileWatcherType=none"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().decode().strip() == "ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
                pytest.fail(f"streamlit did not start on port {port}:\n{out[-3000:]}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def server():
    _needs_browser()
    with dashboard() as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def wait_for_app(page, timeout_ms: int = 60_000) -> None:
    """Until the script has run (stApp's script state is notRunning) and every chart has drawn."""
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=timeout_ms)
    page.wait_for_timeout(300)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=timeout_ms)
    # a busy machine can leave placeholders (skeletons) after the script state reads notRunning: a screenshot or a
    # check of the page then sees grey boxes, not the page
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=timeout_ms)
    for chart in page.locator('[data-testid="stVegaLiteChart"]').all():
        chart.locator("canvas, svg").first.wait_for(state="visible", timeout=timeout_ms)
    tables = page.locator('[data-testid="stDataFrame"] >> visible=true')
    if tables.count():
        tables.first.locator("canvas").first.wait_for(state="visible", timeout=timeout_ms)


def full_page_screenshot(page, path: Path, width: int = 1500) -> None:
    """Grow the viewport to the scrolled content, so the whole page is in the picture."""
    js = ("() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], "
          "[data-testid=\"stMainBlockContainer\"], [data-testid=\"stAppViewContainer\"], section, body, html')]"
          ".map(e => e.scrollHeight))")
    last = 0
    for _ in range(4):  # growing the viewport can lay out more content (lazy charts, tables)
        height = min(int(page.evaluate(js)) + 80, 16000)
        if height <= last:
            break
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(700)
        last = height
    page.screenshot(path=str(path), full_page=True)


PAGE_NOT_FOUND = "does not seem to exist"
"""Text of Streamlit's "Page not found" pop-up."""

CUT_METRICS_JS = """() => [...document.querySelectorAll('[data-testid="stMetricValue"]')]
  .filter(e => e.scrollWidth > e.clientWidth + 1 || [...e.querySelectorAll('*')]
           .some(c => c.scrollWidth > c.clientWidth + 1 && getComputedStyle(c).textOverflow === 'ellipsis'))
  .map(e => e.innerText)"""
"""KPI values wider than their tile (shown with an ellipsis)."""


def cut_metrics(page) -> list[str]:
    """KPI values the browser cuts off at the current width."""
    return page.evaluate(CUT_METRICS_JS)


def _url(server: str, spec) -> str:
    """The default (first) page is served at the root; the others at their url_path."""
    return f"{server}/" if spec == _pages()[0] else f"{server}/{spec.url_path}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("spec", _pages(), ids=lambda s: s.path.stem)
def test_page_renders_without_errors(server, browser, spec, width):
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": width, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(_url(server, spec), wait_until="domcontentloaded")
    wait_for_app(page)
    assert PAGE_NOT_FOUND not in page.content(), "navigation did not find the page"
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator(
        '[data-testid="stException"]').first.inner_text()
    charts = page.locator('[data-testid="stVegaLiteChart"]')
    for i in range(charts.count()):
        assert charts.nth(i).locator("canvas, svg").count() > 0
    assert not cut_metrics(page), f"KPI values cut off at {width} px: {cut_metrics(page)}"
    full_page_screenshot(page, ARTIFACTS / f"dashboard-{spec.path.stem}-{width}.png", width)
    if width >= 1000:
        assert page.locator('[data-testid="stSidebar"]').is_visible()
    assert not errors, errors
    page.close()


@pytest.mark.parametrize("path", ["cost-explorer", "hardware-comparison", "head-to-head", "cluster", "quote-checker"])
def test_deep_link_on_a_fresh_server_opens_the_page_without_a_pop_up(browser, path):
    """The first visit of a fresh server is a deep link: the page opens, no "Page not found" (issue 11).

    Streamlit treats a ``pages/`` folder beside the main script as an old-style multipage app and, on a
    server's very first run, resolved ``/hardware-comparison`` against that folder before
    ``st.navigation`` took over: the right page drew, under a "Page not found" pop-up. A server shared
    with other tests has run once already and cannot show it, so each case starts its own.
    """
    _needs_browser()
    spec = next(s for s in _pages() if s.url_path == path)
    with dashboard() as url:
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(f"{url}/{path}", wait_until="domcontentloaded")
        wait_for_app(page)
        page.wait_for_timeout(500)
        assert PAGE_NOT_FOUND not in page.content(), "a deep link on a fresh server popped up 'Page not found'"
        assert page.get_by_role("dialog").count() == 0
        assert page.url.rstrip("/").endswith(path)
        nav = page.locator('[data-testid="stSidebarNav"] a[aria-current="page"], '
                           '[data-testid="stSidebarNavLink"][aria-current="page"]')
        if nav.count():
            assert spec.title in nav.first.inner_text()
        page.close()


def test_a_page_widget_does_not_change_other_pages(server, browser):
    """Moving the floor on Hardware comparison leaves the optimizer's SLO and the Cluster page alone."""
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    page.goto(f"{server}/hardware-comparison", wait_until="domcontentloaded")
    wait_for_app(page)
    slider = page.get_by_role("slider").first
    slider.focus()
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    wait_for_app(page)
    from econ.presets import DEFAULT_MIN_TOKENS_PER_S_PER_USER
    moved = int(DEFAULT_MIN_TOKENS_PER_S_PER_USER) + 10  # ten steps of 1 tokens/s from the one default floor
    assert f"min_tokens_per_s_per_user={moved}" in page.url
    page.locator('[data-testid="stSidebarNav"] a', has_text="Cluster").first.click()
    wait_for_app(page)
    assert "min_tokens_per_s_per_user" not in page.url
    assert "Serving at" in page.locator('[data-testid="stMain"]').inner_text()
    assert f"{moved} output tokens/s" not in page.locator('[data-testid="stMain"]').inner_text()
    page.close()


def test_workload_preset_switch_sets_the_lengths_and_follows_to_other_pages(server, browser):
    """Picking "Reasoning" in the sidebar sets 1,024 in / 8,192 out, writes it to the link, and every page uses it."""
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    page.goto(f"{server}/", wait_until="domcontentloaded")
    wait_for_app(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_role("combobox", name="Workload").click()
    page.get_by_role("option", name="Reasoning (1k in / 8k out)").click()
    wait_for_app(page)
    assert "workload=reasoning" in page.url and "output_len=8192" in page.url
    assert sidebar.get_by_role("spinbutton", name="Output (tokens)").input_value() == "8192"
    page.locator('[data-testid="stSidebarNav"] a', has_text="Head to head").first.click()
    wait_for_app(page)
    main = page.locator('[data-testid="stMain"]').inner_text()
    assert "1,024 input / 8,192 output tokens" in main
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()


def test_head_to_head_deep_link_with_setups(server, browser):
    """A link to the head-to-head page with both set-ups opens them: metrics per level, both frontiers drawn."""
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    page.goto(f"{server}/head-to-head?h2h_a_model=llama-3.1-8b&h2h_b_model=llama-3.1-8b&h2h_b_hardware=h200-sxm"
              f"&interactivity_levels=20,100", wait_until="domcontentloaded")
    wait_for_app(page)
    assert PAGE_NOT_FOUND not in page.content()
    # both set-ups are searched before the metrics appear: wait for the last one (a loaded machine is slow)
    page.locator('[data-testid="stMain"]', has_text="At 100 tok/s per user").wait_for(timeout=60_000)
    wait_for_app(page)
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert "At 20 tok/s per user: B costs" in text and "At 100 tok/s per user" in text
    assert "None" not in text.split()
    assert page.locator('[data-testid="stVegaLiteChart"]').count() >= 2
    assert not cut_metrics(page)
    page.close()


def test_link_reproduces_the_scenario(server, browser):
    """A URL with a scenario opens with those inputs; an unknown id gives a warning, not a traceback."""
    page = browser.new_page(viewport={"width": 1500, "height": 1000})
    page.goto(f"{server}/?model=llama-3.1-8b&precision=bf16&pue=1.2&hardware=not-a-gpu",
              wait_until="domcontentloaded")
    wait_for_app(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "does not seem to exist" not in page.content()
    text = page.locator('[data-testid="stMain"]').inner_text()
    # issue 21.1: an accelerator that cannot be used stops the view (no silent substitution) and says why
    assert "This view is not computed" in text and "unknown hardware id 'not-a-gpu'" in text
    assert "pue=1.2" in page.url
    page.get_by_role("button", name="Continue with the values shown in the sidebar").click()
    page.locator('[data-testid="stMain"]', has_text="Llama").first.wait_for(timeout=60_000)
    wait_for_app(page)
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert "Llama 3.1 8B" in text or "llama-3.1-8b" in text.lower()
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()


def screenshots(url: str, out: Path = ARTIFACTS) -> list[Path]:
    """Full-page screenshots of every page at :data:`WIDTHS` from a running dashboard (for a person)."""
    from playwright.sync_api import sync_playwright

    out.mkdir(exist_ok=True)
    made = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for width in WIDTHS:
            for spec in _pages():
                page = b.new_page(viewport={"width": width, "height": 1000})
                page.goto(_url(url, spec), wait_until="domcontentloaded")
                wait_for_app(page)
                path = out / f"dashboard-{spec.path.stem}-{width}.png"
                full_page_screenshot(page, path, width)
                made.append(path)
                page.close()
        b.close()
    return made


if __name__ == "__main__":
    if len(sys.argv) > 1:
        for p in screenshots(sys.argv[1]):
            print(p)
    else:
        with dashboard() as u:
            for p in screenshots(u):
                print(p)
