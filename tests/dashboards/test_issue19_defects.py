"""Issue 19.2: one test per dashboard defect the issue lists (each failed before its fix)."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("streamlit")

from tests.dashboards.test_dashboard import metrics, page, run, scenario  # noqa: E402
from dashboards.components.safe_text import unescape  # noqa: E402


def test_a_custom_rate_is_named_per_gpu_hour_of_existence_and_the_kpi_per_utilized_hour():
    # typing $2.00 showed "$ per GPU-hour $2.86" with only a tooltip saying it is per utilized hour
    at = run(page("cost_explorer", basis="custom", usd_per_gpu_hour="2"))
    shown = metrics(at)
    assert "$ per GPU-hour" not in shown
    assert shown["$ per utilized GPU-hour"] == "$2.86"  # 2.00 / 70% utilization
    captions = [unescape(c.value) for c in at.caption]
    assert any("$2.00 per GPU-hour of existence" in c and "$2.86 per utilized GPU-hour" in c for c in captions)
    assert at.number_input(key="sc.usd_per_gpu_hour").label == "Custom rate ($ per GPU-hour of existence)"


def test_the_default_power_price_is_named_as_the_region_average_it_is():
    at = run(page("cost_explorer"))
    options = at.selectbox(key="sc.region").options
    assert "Custom $/kWh" not in options
    assert options[0].startswith("Default $/kWh: Virginia industrial average")
    at.number_input(key="sc.usd_per_kwh").set_value(0.12)
    run(at)
    assert at.selectbox(key="sc.region").options[0] == "Your own $/kWh"


def test_head_to_head_follows_the_sidebar_cost_tier():
    owned = run(page("head_to_head"))
    custom = run(page("head_to_head", basis="custom", usd_per_gpu_hour="2"))
    assert scenario(custom).h2h_a_basis is None  # not set on the page: the sidebar's tier
    caption = " ".join(unescape(c.value) for c in custom.caption)
    assert "Custom $ per GPU-hour" in caption and "Owned" not in caption
    assert metrics(custom) != metrics(owned) or caption != " ".join(unescape(c.value) for c in owned.caption)


def test_charts_show_accelerator_names_not_ids():
    """Issue 19.3: bars and legends showed raw ids (gb200-nvl72); ids stay in the data, names are drawn."""
    from tests.dashboards.test_dashboard import specs

    at = run(page("hardware_comparison"))
    exprs = []
    for s in specs(at):
        for layer in [s, *s.get("layer", [])]:
            enc = layer.get("encoding", {})
            exprs += [enc.get("y", {}).get("axis", {}).get("labelExpr"),
                      (enc.get("color", {}).get("legend") or {}).get("labelExpr")]
    exprs = [e for e in exprs if e]
    assert any('"gb200-nvl72" ? "' in e for e in exprs), exprs[:2]
    assert any("NVIDIA" in e for e in exprs)


# ---- issue 19.3: display names wherever a person reads; ids only in downloads and links ----------------------------

OWN_PAGES = ["assumptions", "calibration", "cluster", "cost_explorer", "deployment_optimizer", "generations",
             "hardware_comparison", "head_to_head"]
"""Every page but the Quote checker (its own issue part)."""

CSV_EDITORS = "-as.ed."
"""Widget ids of the Assumptions page's catalog editors: they edit data/*.csv as written, ids included (the id is
the row's key a person types), like a download."""


def _raw_ids() -> re.Pattern:
    """Catalog ids a reader must not see: every accelerator id (catalog and roadmap) and every model id that differs
    from its name (``gpt-oss-120b`` is both), as whole words (``b200`` inside ``gb200-nvl72`` or a file name does not
    count)."""
    from econ.tables.catalog import load_catalog
    from econ.tables.roadmap import load_roadmap

    cat = load_catalog()
    ids = {i for i, _ in cat.accelerators.select("id", "display_name").iter_rows()}
    ids |= {i for i, n in cat.models.select("id", "display_name").iter_rows() if n != i}
    ids |= set(load_roadmap()["id"].to_list())  # announced parts (the Generations page's projections)
    return re.compile(r"(?<![\w./-])(" + "|".join(sorted(map(re.escape, ids), key=len, reverse=True))
                      + r")(?![\w-]|\.\w)")


@pytest.mark.parametrize("name", OWN_PAGES)
def test_no_table_cell_or_kpi_shows_a_raw_catalog_id(name):
    """Tables and KPIs showed gb200-nvl72, h100-sxm, "not distinguishable from mi355x, b300" (issue 19.3)."""
    import polars as pl

    ids = _raw_ids()
    at = run(page(name))
    seen = []
    for df in at.dataframe:
        if CSV_EDITORS in (df.proto.id or ""):
            continue
        frame = pl.from_pandas(df.value)
        for c in frame.columns:
            if frame.schema[c] == pl.String:
                seen += [(c, v) for v in frame[c].drop_nulls().unique().to_list() if ids.search(v)]
    seen += [("metric", f"{m.label}: {m.value}") for m in at.metric if ids.search(f"{m.label} {m.value}")]
    assert at.dataframe or at.metric  # the page drew something to read
    assert not seen, seen[:5]


def test_every_dollar_per_gpu_hour_names_utilized_or_existence():
    """A $/GPU-hour is either per utilized GPU-hour (the engine's: fixed costs over the serving hours) or per
    GPU-hour of existence (a rental rate, a training run's hour); every title and KPI says which."""
    from econ.vocabulary import COLUMNS, column_title

    shown = [column_title(c) for c in COLUMNS if c.startswith("usd_per_gpu_hour") or c.endswith("_usd_per_gpu_hour")
             and not c.startswith(("floor_", "breakeven_"))]  # the Quote checker's columns: its own issue part
    assert len(shown) >= 9
    labels = []
    for name in ("cost_explorer", "cluster", "assumptions", "hardware_comparison", "head_to_head"):
        at = run(page(name))
        labels += [m.label for m in at.metric] + [w.label for w in at.number_input]
    shown += [t for t in labels if "GPU-hour" in t and "$" in t]
    vague = [t for t in shown if "utilized GPU-hour" not in t and "GPU-hour of existence" not in t]
    assert not vague, vague


@pytest.mark.parametrize("name", ["hardware_comparison", "deployment_optimizer", "generations", "head_to_head"])
def test_chart_legends_and_axes_draw_names_for_ids(name):
    """The cost-versus-interactivity legend drew b200, gaudi3 (issue 19.3): a legend or axis over a field that
    holds ids maps them to names (a labelExpr), or the field holds names."""
    import polars as pl

    from tests.dashboards.test_dashboard import _walk, datasets, specs

    ids = _raw_ids()
    at = run(page(name))
    bare = []
    for k, spec in enumerate(specs(at)):
        values: dict[str, set] = {}
        for d in datasets(at, k).values():
            for c in d.columns:
                if d.schema[c] == pl.String:
                    values.setdefault(c, set()).update(d[c].drop_nulls().to_list())
        for path, enc in _walk(spec):
            if not (path and path[-1] == "encoding" and isinstance(enc, dict)):
                continue
            for channel, e in enc.items():
                if channel in ("tooltip", "detail", "order") or not isinstance(e, dict) or "field" not in e:
                    continue
                guide = e.get("axis") or e.get("legend") or {}
                shown_ids = {v for v in values.get(e["field"], ()) if ids.fullmatch(v)}
                if shown_ids and not (isinstance(guide, dict) and guide.get("labelExpr")):
                    bare.append((k, channel, e["field"], sorted(shown_ids)[:3]))
    assert specs(at)
    assert not bare, bare


# ---- issue 19.1: a value's calibrated band sits next to it --------------------------------------------------------

@pytest.mark.parametrize("name", ["hardware_comparison", "generations", "head_to_head", "deployment_optimizer"])
def test_band_columns_sit_next_to_their_value_in_view(name):
    """The all-in cost's low / high sat at columns 13-14 of Best deployment per accelerator (after the notes), the
    frontier table's at 13-14, head to head's after the ratio: off-screen at 1440 px. Now each table shows value,
    low, high side by side, and the first banded value within the first seven columns (visible at 1440 px)."""
    import re

    band = re.compile(r"(.+)_(low|high)(_[ab])?")
    at = run(page(name))
    checked = 0
    for df in at.dataframe:
        cols = list(df.value.columns)
        values = [c for c in cols if any((m := band.fullmatch(b)) and m.group(1) + (m.group(3) or "") == c
                                         for b in cols)]
        for v in values:
            i = cols.index(v)
            stem, side = (v[:-2], v[-2:]) if re.search(r"_[ab]$", v) and f"{v[:-2]}_low{v[-2:]}" in cols else (v, "")
            assert cols[i + 1:i + 3] == [f"{stem}_low{side}", f"{stem}_high{side}"], (v, cols)
            checked += 1
        if values:
            assert cols.index(values[0]) + 2 < 7, cols[:8]
    assert checked


# ---- issue 19.2: the Assumptions page says why a factor shows two values --------------------------------------------

def test_assumptions_page_says_why_the_default_and_the_value_in_use_differ():
    """"HBM bandwidth efficiency 60%" stood beside "in use 75.4%" with no reason given. The page now names both: the
    scalar is the v1 global fit (its source), the value in use the sidebar accelerator's calibration profile."""
    from econ.tables.catalog import load_catalog

    from dashboards.components import profiles, sources

    at = run(page("assumptions"))
    sc = scenario(at)
    cat = load_catalog()
    prof = profiles.profile_of(cat, sc.hardware, sc.precision)
    row = next(r for r in cat.calibration.iter_rows(named=True) if r["profile"] == prof)
    in_use = sources.display_value("eta_bw", row["eta_bw"])
    assert in_use != "60%"  # the defect's premise: the profile's value differs from the scalar
    text = next(unescape(c.value) for c in at.caption if "Why two numbers" in c.value)
    assert "HBM bandwidth efficiency 60% is the v1 global value" in text and "43 in-fit cases" in text
    assert f"{profiles.profile_title(prof)} calibration profile of data/calibration.csv" in text
    assert f"HBM bandwidth efficiency is {in_use}" in text
    assert f"fitted on {row['n_cases']} cases" in text
    assert "NVIDIA H100 SXM5 80GB at FP8" in text  # the sidebar's accelerator and precision, by name


# ---- issue 19: the Cluster page fits a phone; the Generations chart marks only real rows ----------------------------

def test_cluster_charts_are_panels_that_fill_their_column():
    """At 390 px the facility-power bar sat right of the screen: capex and power were one fixed-width hconcat
    (2 x 330 px). Each is now its own chart that fills its column (stacked on a phone); legends below."""
    from tests.dashboards.test_dashboard import specs

    at = run(page("cluster"))
    drawn = specs(at)
    assert not [s for s in drawn if "hconcat" in s]
    titles = {}
    for s in drawn:
        t = s.get("title")
        titles[t.get("text") if isinstance(t, dict) else t] = s
    for name in ("Capex split", "Facility power"):
        s = titles[name]
        assert s["width"] == "container" and s["autosize"]["type"] == "fit-x"
        assert s["encoding"]["color"]["legend"]["orient"] == "bottom"


def test_the_trend_chart_draws_no_point_on_the_bridge_row():
    """The dashed projection starts at the last priced part through a bridge row (a copy of that row in the
    projection colour); its point drew an orange dot on GB300. Points are a layer filtered to the real rows."""
    from tests.dashboards.test_dashboard import datasets, specs

    at = run(page("generations"))
    spec = specs(at)[0]
    marks = {(layer["mark"] if isinstance(layer["mark"], str) else layer["mark"]["type"]): layer
             for layer in spec["layer"]}
    assert set(marks) == {"line", "point"}
    assert "point" not in (marks["line"]["mark"] if isinstance(marks["line"]["mark"], dict) else {})
    assert marks["point"]["transform"] == [{"filter": "(datum.bridge === false)"}]
    data = next(iter(datasets(at).values()))
    assert data["bridge"].sum() == 1  # the one bridge row is there, for the line only


def test_the_trend_chart_legend_stacks_below_the_chart():
    """At 390 px the legend read "Projection (announc" cut off at the right edge (one row across the top): it stacks
    its two entries vertically below the chart, labels never truncated."""
    from tests.dashboards.test_dashboard import specs

    spec = specs(run(page("generations")))[0]
    legends = [layer["encoding"]["color"]["legend"] for layer in spec["layer"]
               if "legend" in layer.get("encoding", {}).get("color", {})]
    legends += [spec["encoding"]["color"]["legend"]] if "legend" in spec.get("encoding", {}).get("color", {}) else []
    assert legends and all(lg["orient"] == "bottom" and lg["direction"] == "vertical" and lg["labelLimit"] == 0
                           for lg in legends)
