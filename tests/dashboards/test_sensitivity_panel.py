"""The sensitivity panel (issue 18.5) on the Cost explorer, Quote checker and Cluster pages, and the Assumptions
page's owned-vs-SemiAnalysis text (issue 18.4), under AppTest. The panel is off until its toggle is on; on, it
draws the tornado chart (dashboards.charts.tornado_chart) of the same answer econ.analyses.sensitivity gives."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboards import charts  # noqa: E402
from dashboards.components.safe_text import unescape  # noqa: E402
from econ.analyses.sensitivity import cost_sensitivity  # noqa: E402
from econ.tables.catalog import load_catalog  # noqa: E402

PAGES = ROOT / "dashboards" / "pages"


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _tornado_specs(at: AppTest) -> list[dict]:
    out = []
    for c in at.get("vega_lite_chart"):
        spec = json.loads(c.proto.spec)
        title = spec.get("title", {})
        text = title.get("text") if isinstance(title, dict) else title
        if text == "What moves this answer most" or text == ["What moves this answer most"]:
            out.append(spec)
    return out


def test_cost_explorer_panel_off_then_on():
    at = _run(AppTest.from_file(str(PAGES / "cost_explorer.py"), default_timeout=120))
    assert not _tornado_specs(at)  # off by default: the page pays nothing for it
    at.toggle(key="ce.sens.on").set_value(True)
    _run(at)
    assert len(_tornado_specs(at)) == 1
    assert any("Monte Carlo" in c.value for c in at.caption)


@pytest.mark.parametrize("page, key", [("quote_checker", "qc.sens.on"), ("cluster", "cl.sens.on")])
def test_quote_checker_and_cluster_panels_draw_a_tornado(page, key):
    at = _run(AppTest.from_file(str(PAGES / f"{page}.py"), default_timeout=300))
    at.toggle(key=key).set_value(True)
    _run(at)
    assert len(_tornado_specs(at)) == 1


def test_tornado_chart_encodes_both_ends_and_the_point():
    r = cost_sensitivity(load_catalog(), model="llama-3.3-70b", hardware="h100-sxm", samples=50)
    spec = charts.tornado_chart(r.tornado, point=r.point, answer_title="Cost ($ per M output tokens)",
                                band=(0.2, 0.4)).to_dict()
    layers = spec["layer"]
    assert len(layers) == 3  # Monte Carlo band, bars, the point's rule
    bars = layers[1]
    assert bars["encoding"]["x"]["field"] == "point" and bars["encoding"]["x2"]["field"] == "answer"
    assert bars["encoding"]["y"]["sort"] == r.tornado["label"].to_list()


def test_assumptions_page_explains_the_owned_tier():
    at = _run(AppTest.from_file(str(PAGES / "assumptions.py"), default_timeout=120))
    text = " ".join(unescape(m.value) for m in at.markdown)
    assert "SemiAnalysis" in text and "$2.19" in text and "$1.51" in text
