"""Issue 22 on the dashboard: the Generations page (projections apart) and $/task on the Cost explorer; each number
equals the econ call with the same inputs (the UI computes nothing)."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboards.components import fmt  # noqa: E402
from econ.analyses.tasks import with_task_costs  # noqa: E402
from econ.analyses.trend import trend  # noqa: E402
from econ.io.scenario import Scenario  # noqa: E402
from econ.presets import WORKLOADS  # noqa: E402
from econ.tables.catalog import load_catalog  # noqa: E402

PAGES = ROOT / "dashboards" / "pages"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _run(name, **query):
    at = AppTest.from_file(str(PAGES / f"{name}.py"), default_timeout=120)
    at.query_params.update(query)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_generations_page_shows_projections_apart_with_a_dashed_line(catalog):
    at = _run("generations")
    at.selectbox(key="gen.vendor").set_value("amd").run()
    assert not at.exception
    t = trend(catalog, model=Scenario().model, vendor="amd").table
    metrics = {m.label: m.value for m in at.metric}
    proj = t.filter(pl.col("basis") == "projection").row(0, named=True)
    label = f"Projection: {fmt.short_accelerator_name(proj['display_name'])} ({proj['availability']})"  # a reader's name
    assert "mi455x" not in label and metrics[label] == fmt.usd_per_m(proj["usd_per_m_output_tokens_all_in"])
    import json
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert "[6, 4]" in json.dumps(spec).replace(",", ", ").replace("  ", " ")  # the projection's dash pattern
    assert any("Projections" in s.value for s in at.subheader)


def test_workload_preset_sets_the_prefix_cache_hit_rate():
    sc = Scenario().with_workload("agentic-coding")
    assert (sc.input_len, sc.output_len, sc.cache_hit_frac) == (67892, 528, 0.857)
    assert Scenario().with_workload("chat").cache_hit_frac == Scenario().cache_hit_frac


def test_cost_explorer_shows_dollars_per_task_for_a_task_preset(catalog):
    at = _run("cost_explorer", workload="agentic-coding", cache_hit_frac="0.857")
    metrics = {m.label: m.value for m in at.metric}
    assert "$ per task" in metrics and "Waiting prefixes live in" in metrics
    from econ.analyses.compare import auto_batch_row
    sc = Scenario().with_workload("agentic-coding")
    first, _ = auto_batch_row(catalog, min_tokens_per_s_per_user=sc.min_tokens_per_s_per_user, **sc.cost_kwargs(),
                              assumptions=sc.assumptions(), economics=sc.economics(catalog))
    w = WORKLOADS["agentic-coding"]
    t = with_task_costs(first, catalog, calls_per_task=w.calls_per_task, prefix_reuse_frac=w.prefix_reuse_frac,
                        reuse_interval_s=w.reuse_interval_s, assumptions=sc.assumptions())
    assert metrics["$ per task"] == fmt.usd(t["usd_per_task"][0])
    assert "$ per task" not in {m.label for m in _run("cost_explorer").metric}  # chat: no task
