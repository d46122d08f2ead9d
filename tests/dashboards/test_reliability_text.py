"""Markdown injection (issue 12, finding 2): user-controlled text is escaped by one helper
(dashboards/components/safe_text.py) wherever a page echoes it, so a link or an image payload renders as text.

The payloads go in through every door the issue names: ``?model=``, ``?hardware=``, an unknown query key,
``compare_hardware`` and a loaded scenario TOML (and its file name). Under AppTest every Markdown body the page
sends (warnings, errors, infos, successes, markdown, captions) is rendered with markdown-it-py (CommonMark) and
must hold no ``<a>`` or ``<img>``; in Chromium (marked ``browser``) the page must show the payload as literal
text, with no link, no image and no request to the payload's address.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboards.components.safe_text import code, md, unescape  # noqa: E402
from econ.io.scenario import Scenario  # noqa: E402

LINK = "[Session expired - click here](http://127.0.0.1:9/x)"
IMAGE = "![x](http://127.0.0.1:9/t.png)"
PAGES_DIR = ROOT / "dashboards" / "pages"
PAGE_FILES = sorted(p for p in PAGES_DIR.glob("*.py") if not p.name.startswith("_"))
MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])
BODIES = ("warning", "error", "info", "success", "markdown", "caption")


def rendered(at: AppTest) -> list[tuple[str, str, str]]:
    """(kind, markdown source, HTML) of every Markdown body on the page."""
    out = []
    for kind in BODIES:
        for el in getattr(at, kind):
            out.append((kind, el.value, MARKDOWN.render(el.value)))
    return out


PAYLOAD_HOST = "127.0.0.1:9"


def assert_inert(at: AppTest, *payloads: str) -> str:
    """No image anywhere, no link to the payload's address, and no bare payload URL an autolinker would take (the
    catalog's own source links stay links); returns the page's visible text."""
    assert not at.exception, [e.message for e in at.exception]
    bodies = rendered(at)
    for kind, src, html in bodies:
        assert "<img" not in html, (kind, src, html)
        assert not [h for h in re.findall(r'href="([^"]*)"', html) if PAYLOAD_HOST in h], (kind, src, html)
        outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
        assert PAYLOAD_HOST not in outside_code, (kind, src)  # a bare URL outside code would be autolinked (GFM)
    text = " ".join(unescape(src) for _, src, _ in bodies)
    for p in payloads:
        assert p in text, f"{p!r} not shown as text"
    return text


# ----------------------------------------------------------------------------------------- the helper

@pytest.mark.parametrize("payload", [LINK, IMAGE, "<http://127.0.0.1:9/a>", "http://127.0.0.1:9/b", "www.example.com",
                                     "<img src=x onerror=alert(1)>", ":red[x] :material/home:", "$x^2$", "`code`",
                                     "a\n\n# Heading\n- item\n[ref]: http://127.0.0.1:9/r\n[ref]", "user@example.com",
                                     "| a | b |\n|---|---|\n| 1 | 2 |", "*em* __strong__ ~~del~~", "&lt;b&gt;",
                                     "\\[already escaped\\](x)"])
def test_md_renders_exactly_the_text(payload):
    html = MARKDOWN.render(md(payload))
    assert "<a " not in html and "<img" not in html and "<h1" not in html and "<li" not in html
    assert "<em" not in html and "<strong" not in html and "<table" not in html
    assert unescape(md(payload)) == payload
    outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    assert not re.search(r"(?i)https?://|www\.|@example", outside_code)  # what GFM would autolink is in code


def test_code_span_survives_backticks():
    for text in ["a`b", "``", "`x`", "plain"]:
        html = MARKDOWN.render(code(text))
        assert html.count("<code>") == 1 and "<a " not in html


def test_control_characters_are_replaced():
    assert md("a\x00b\x1bc") == "a\ufffdb\ufffdc"


# ----------------------------------------------------------------------------------------- pages (AppTest)

def _page(path: Path, **query) -> AppTest:
    at = AppTest.from_file(str(path), default_timeout=120)
    at.query_params.update(query)
    return at


@pytest.mark.parametrize("path", PAGE_FILES, ids=lambda p: p.stem)
def test_query_parameter_payloads_render_inert_on_every_page(path):
    at = _page(path, model=LINK, hardware=IMAGE, compare_hardware=IMAGE, **{LINK: "1"})
    at.run()
    text = assert_inert(at, LINK, IMAGE)
    assert "unknown model id" in text and "unknown scenario field" in text and "compare_hardware" in text


def test_scenario_file_payloads_render_inert():
    at = _page(PAGES_DIR / "cost_explorer.py")
    at.run()
    toml = (f'model = "{LINK}"\nhardware = "{IMAGE}"\ncompare_hardware = ["{IMAGE}"]\n'
            f'"{LINK}" = 1\nregion = "{IMAGE}"\n').encode()
    at.file_uploader(key="sidebar.load").set_value((f"{LINK}.toml", toml, "application/toml"))
    at.run()
    text = assert_inert(at, LINK, IMAGE)
    assert "unknown model id" in text and f"Loaded {LINK}.toml" in text
    assert at.session_state["_econ_scenario"] == Scenario()


def test_uploaded_table_payloads_render_inert():
    """A user's own table (Assumptions page): names, sources and the error text are escaped too."""
    import polars as pl

    from econ.tables.catalog import load_catalog
    cat = load_catalog()
    row = cat.accelerators.filter(pl.col("id") == "h100-sxm").select(
        [c for c in cat.accelerators.columns if not c.endswith(("_flop_per_s", "_bytes", "_bytes_per_s"))])
    bad = row.with_columns(pl.lit("my-gpu").alias("id"), pl.lit(IMAGE).alias("tdp_w")).write_csv().encode()
    at = _page(PAGES_DIR / "assumptions.py")
    at.run()
    key = [f.key for f in at.file_uploader if f.key.startswith("as.upload")][0]
    at.file_uploader(key=key).set_value((f"{LINK}.csv", bad, "text/csv"))
    at.run()
    assert_inert(at, IMAGE)  # "'![x](http://...)' is not a number" shown as text
    good = row.with_columns(pl.lit("my-gpu").alias("id"), pl.lit(LINK).alias("display_name"),
                            pl.lit("`x` <b>b</b> *em*; see https://example.com/h100").alias("source")).write_csv().encode()
    key = [f.key for f in at.file_uploader if f.key.startswith("as.upload")][0]
    at.file_uploader(key=key).set_value((f"{LINK}.csv", good, "text/csv"))
    at.run()
    assert_inert(at)  # the source's text is text; its own URL stays a link (a source cell links to its source)
    assert any('href="https://example.com/h100"' in html for _, _, html in rendered(at))
    assert not any("<b>" in html or "<em>" in html for _, _, html in rendered(at))


# ----------------------------------------------------------------------------------------- Chromium

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _dashboard():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "dashboards" / "app.py"), "--server.headless=true",
         f"--server.port={port}", "--server.address=127.0.0.1", "--browser.gatherUsageStats=false",
         "--server.fileWatcherType=none"],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().decode().strip() == "ok":
                        break
            except OSError:
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.browser
def test_payloads_render_as_text_in_chromium(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    query = urllib.parse.urlencode({"model": LINK, "hardware": IMAGE, "compare_hardware": IMAGE, LINK: "1"})
    toml = tmp_path / "payload.toml"
    toml.write_text(f'model = "{LINK}"\nhardware = "{IMAGE}"\n"{LINK}" = 1\n')
    with _dashboard() as url, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--headless", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        hits: list[str] = []
        page.on("request", lambda r: hits.append(r.url) if "127.0.0.1:9/" in r.url else None)
        page.goto(f"{url}/?{query}", wait_until="domcontentloaded")
        page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=90_000)
        page.wait_for_selector('[data-testid="stAlert"]', timeout=30_000)
        alerts = " ".join(page.locator('[data-testid="stAlert"]').all_inner_texts())
        assert LINK in alerts and IMAGE in alerts, alerts  # shown literally, no stray backslashes
        assert page.locator('a[href*="127.0.0.1:9"]').count() == 0
        assert page.locator('img[src*="127.0.0.1:9"]').count() == 0
        # the scenario file, through the sidebar uploader
        page.get_by_text("Save, load or share").click()
        page.locator('[data-testid="stSidebar"] input[type="file"]').set_input_files(str(toml))
        page.wait_for_function("() => document.body.innerText.includes('payload.toml:')", timeout=60_000)
        page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=90_000)
        alerts = " ".join(page.locator('[data-testid="stAlert"]').all_inner_texts())
        assert LINK in alerts and IMAGE in alerts, alerts
        assert page.locator('a[href*="127.0.0.1:9"]').count() == 0
        assert page.locator('img[src*="127.0.0.1:9"]').count() == 0
        assert not hits, hits  # the browser never fetched the payload's address
        browser.close()


# ----------------------------------------------------------------------------------------- server memory (finding 9)

def test_every_result_cache_is_bounded_in_entries_and_time():
    """Finding 9: server memory grew with distinct cached scenarios; every st.cache_data (and every
    dashboards.components.memory.cached, bounded in bytes too: issue 21) has max_entries and a ttl."""
    import ast
    found = 0
    for path in sorted((ROOT / "dashboards").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("st.cache_data", "streamlit.cache_data",
                                                                          "memory.cached"):
                kw = {k.arg: k.value for k in node.keywords}
                found += 1
                assert "max_entries" in kw and "ttl" in kw, f"{path.name}:{node.lineno} unbounded st.cache_data"
                assert ast.literal_eval(kw["max_entries"]) <= 64, f"{path.name}:{node.lineno}"
    assert found >= 5


# ----------------------------------------------------------------------------------------- every text call (issue 21)

MARKDOWN_FIELDS = ("body", "label", "help", "caption")
"""Proto fields Streamlit renders as Markdown (alert, markdown, caption, title and metric bodies; every label and
tooltip). Plain text (st.text, st.code, table cells, chart marks) is never Markdown."""
PLAIN_KINDS = {"text", "code", "dataframe", "table", "vega_lite_chart", "json", "exception"}
CUSTOM_LINK = "[Session expired - sign in](http://127.0.0.1:9/n)"
DATA_LINK = "[Datasheet](http://127.0.0.1:9/d)"
DATA_IMAGE = "![m](http://127.0.0.1:9/m.png)"


def _elements(node):
    children = getattr(node, "children", None)
    for child in (children.values() if isinstance(children, dict) else []):
        yield child
        yield from _elements(child)


def markdown_texts(at: AppTest) -> list[tuple[str, str, str]]:
    """(kind.field, markdown source, HTML) of every string the page hands Streamlit to render as Markdown."""
    out = []
    for el in _elements(at._tree):
        kind = getattr(el, "type", "")
        proto = getattr(el, "proto", None)
        if proto is None or kind in PLAIN_KINDS:
            continue
        names = {f.name for f in proto.DESCRIPTOR.fields}
        for field in MARKDOWN_FIELDS:
            if field in names and isinstance(getattr(proto, field), str) and getattr(proto, field):
                src = getattr(proto, field)
                out.append((f"{kind}.{field}", src, MARKDOWN.render(src)))
        if kind == "radio" and "options" in names:  # radio options are Markdown too
            for o in proto.options:
                out.append(("radio.options", o, MARKDOWN.render(o)))
    return out


@pytest.fixture(scope="module")
def payload_data_dir(tmp_path_factory):
    """The shipped tables with link and image payloads in the names a page shows (a user's data folder)."""
    import polars as pl

    from econ.tables.catalog import DEFAULT_DATA_DIR, TABLES
    d = tmp_path_factory.mktemp("payload-data")
    for fname, _, _ in TABLES.values():
        shutil.copy(DEFAULT_DATA_DIR / fname, d / fname)
    acc = pl.read_csv(d / "accelerators.csv", infer_schema=False)
    acc.with_columns(pl.when(pl.col("id") == "h100-sxm").then(pl.lit(DATA_LINK))
                     .when(pl.col("id") == "b200").then(pl.lit(DATA_IMAGE)).otherwise(pl.col("display_name"))
                     .alias("display_name"),
                     pl.when(pl.col("id") == "h100-sxm").then(pl.lit(DATA_IMAGE)).otherwise(pl.col("scale_up_tech"))
                     .alias("scale_up_tech")).write_csv(d / "accelerators.csv")
    mod = pl.read_csv(d / "models.csv", infer_schema=False)
    mod.with_columns(pl.when(pl.col("id") == "llama-3.3-70b").then(pl.lit(DATA_LINK)).otherwise(pl.col("display_name"))
                     .alias("display_name")).write_csv(d / "models.csv")
    return d


@pytest.mark.parametrize("path", PAGE_FILES, ids=lambda p: p.stem)
def test_every_text_call_of_every_page_escapes_link_and_image_payloads(path, payload_data_dir, monkeypatch):
    """Issue 21, part 2: the custom accelerator's name from the link (the Cluster page put it in st.caption raw, two
    places) and the names of a user's data folder (an uploaded table's names reach the pages the same way) render as
    text in every Markdown string a page sends: alerts, markdown, captions, titles, metric labels, every widget label
    and tooltip, radio options."""
    monkeypatch.setenv("ECON_DATA_DIR", str(payload_data_dir))
    at = _page(path, custom_accelerator="true", custom_name=CUSTOM_LINK, hardware="custom-accelerator",
               h2h_a_hardware="custom-accelerator", h2h_b_hardware="h100-sxm",
               compare_hardware="custom-accelerator,h100-sxm,b200")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    texts = markdown_texts(at)
    assert texts
    for kind, src, html in texts:
        assert "<img" not in html, (path.stem, kind, src)
        assert not [h for h in re.findall(r'href="([^"]*)"', html) if PAYLOAD_HOST in h], (path.stem, kind, src)
        outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
        assert PAYLOAD_HOST not in outside_code, (path.stem, kind, src)
    shown = " ".join(unescape(src) for _, src, _ in texts)
    if path.stem in ("cluster", "cost_explorer", "head_to_head"):  # pages that name the accelerator in their text
        assert CUSTOM_LINK in shown, path.stem
