"""The dashboard under Streamlit's AppTest: every page runs clean, widgets are driven by key, every metric
equals the econ result for the same inputs (the UI computes nothing), charts are read from their Vega-Lite
spec, and bad input (URL, scenario file, uploaded CSV) gives a message, never a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboards.app import discover  # noqa: E402
from dashboards.components import fmt  # noqa: E402
from dashboards.components.safe_text import unescape  # noqa: E402
from dashboards.components.state import CATALOG_KEY, LOCAL_KEY, PAGE_KEY, SCENARIO_KEY  # noqa: E402
from econ.tables.catalog import load_catalog  # noqa: E402
from econ.analyses.cluster import cluster_plan  # noqa: E402
from econ.analyses.compare import OBJECTIVES, auto_batch_row, hardware_comparison  # noqa: E402
from econ.engine import RESULT_COLUMNS  # noqa: E402
from econ.presets import DEFAULT_MIN_TOKENS_PER_S_PER_USER  # noqa: E402
from econ.io.scenario import Scenario  # noqa: E402
from econ.analyses.sweep import cost_table  # noqa: E402

PAGES_DIR = ROOT / "dashboards" / "pages"
PAGE_FILES = sorted(p for p in PAGES_DIR.glob("*.py") if not p.name.startswith("_"))
TIMEOUT = 60


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def page(name: str, **query) -> AppTest:
    at = AppTest.from_file(str(PAGES_DIR / f"{name}.py"), default_timeout=TIMEOUT)
    at.query_params.update(query)
    return at


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def scenario(at: AppTest) -> Scenario:
    """The scenario of the page in view: the base scenario plus that page's own widget values."""
    from dataclasses import replace
    base = at.session_state[SCENARIO_KEY]
    page_ = at.session_state[PAGE_KEY] if PAGE_KEY in at.session_state else Path(at._script_path).stem
    local = (at.session_state[LOCAL_KEY] if LOCAL_KEY in at.session_state else {}).get(page_, {})
    return replace(base, **local)


def specs(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


def datasets(at: AppTest, index: int = 0) -> dict[str, pl.DataFrame]:
    """The named datasets Streamlit sends beside a chart's spec (Arrow IPC), as Polars frames."""
    import pyarrow as pa
    out = {}
    for ds in at.get("vega_lite_chart")[index].proto.datasets:
        out[ds.name] = pl.from_arrow(pa.ipc.open_stream(ds.data.data).read_all())
    return out


def _walk(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield path + (k,), v
            yield from _walk(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, path + (i,))


def chart_titles(spec: dict) -> list[str]:
    """Every axis/legend/tooltip/chart title in a spec (not the data)."""
    return [v for p, v in _walk({k: v for k, v in spec.items() if k != "datasets"})
            if p[-1] == "title" and isinstance(v, str)]


# ---------------------------------------------------------------------------------------------
# every page, whoever wrote it
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", PAGE_FILES, ids=lambda p: p.stem)
def test_every_page_runs_clean_and_has_human_chart_titles(path):
    at = run(AppTest.from_file(str(path), default_timeout=TIMEOUT))
    run(at)  # a rerun with nothing changed
    for spec in specs(at):
        titles = chart_titles(spec)
        assert titles, "a chart without titles"
        snake = [t for t in titles if "_" in t and " " not in t]
        assert not snake, f"raw snake_case titles in a chart: {snake}"
        tooltips = [v for p, v in _walk(spec) if p[-1] == "tooltip"]
        assert tooltips, "a chart without tooltips"


@pytest.mark.parametrize("path", PAGE_FILES, ids=lambda p: p.stem)
def test_every_page_runs_inside_the_app(path):
    at = run(AppTest.from_file(str(ROOT / "dashboards" / "app.py"), default_timeout=TIMEOUT))
    run(at.switch_page(f"pages/{path.name}"))
    assert [s.key for s in at.sidebar.selectbox][:2] == ["sc.model", "sc.hardware"]  # the one shared sidebar


def test_navigation_discovers_every_page_file():
    specs_ = discover(PAGES_DIR)
    assert [s.path for s in sorted(specs_, key=lambda s: s.path)] == PAGE_FILES
    assert all(s.title and " " in s.title or s.title.isalpha() for s in specs_)
    assert specs_[0].path.stem == "cost_explorer"  # ORDER 10: the default page
    assert [s.order for s in specs_] == sorted(s.order for s in specs_)


# ---------------------------------------------------------------------------------------------
# cost explorer
# ---------------------------------------------------------------------------------------------

def kpi_row(sc: Scenario, catalog) -> dict:
    """The row the Cost explorer's KPIs show: the scenario's batch, else econ cost's auto rule (sweet spot, or the
    largest batch meeting the speed floor: econ.analyses.compare.auto_batch_row)."""
    kw = dict(**sc.cost_kwargs(), assumptions=sc.assumptions(), economics=sc.economics(catalog))
    if sc.batch_size is not None:
        return cost_table(catalog, batch_sizes=[sc.batch_size], **kw).row(0, named=True)
    return auto_batch_row(catalog, min_tokens_per_s_per_user=sc.min_tokens_per_s_per_user, **kw)[0].row(0, named=True)


def expected_cost_metrics(sc: Scenario, catalog) -> dict[str, str]:
    row = kpi_row(sc, catalog)
    return {
        "$ per M input tokens": fmt.usd_per_m(row["usd_per_m_input_tokens"]),
        "$ per M output tokens": fmt.usd_per_m(row["usd_per_m_output_tokens"]),
        f"$ per M blended tokens ({sc.input_output_mix:g}:1)": fmt.usd_per_m(row["usd_per_m_blended_tokens"]),
        "$ per utilized GPU-hour": fmt.usd(row["usd_per_gpu_hour"]),
        "Output tokens/s per GPU": fmt.rate(row["output_tokens_per_s_per_gpu"]),
        "Output tokens/s per user": fmt.rate(row["tokens_per_s_per_user"]),
        "Max batch (KV-cache wall)": fmt.count(row["max_batch_size"]),
    }


def test_cost_explorer_default_scenario_shows_the_econ_numbers(catalog):
    at = run(page("cost_explorer"))
    assert scenario(at) == Scenario()
    shown = metrics(at)
    want = expected_cost_metrics(Scenario(), catalog)
    assert {k: shown[k] for k in want} == want
    assert shown["$ per M output tokens"].startswith("$0.")  # the format an analyst expects: $0.000


def _set(at, kind, key, value):
    widget = getattr(at, kind)(key=key)
    if kind == "checkbox":
        widget.check() if value else widget.uncheck()
    else:
        widget.set_value(value)


COST_STEPS = [  # (widget kind, key, value, scenario field, expected field value)
    ("selectbox", "sc.model", "llama-3.1-8b", "model", "llama-3.1-8b"),
    ("selectbox", "sc.hardware", "h200-sxm", "hardware", "h200-sxm"),
    ("radio", "sc.precision", "bf16", "precision", "bf16"),
    ("number_input", "sc.input_len", 4096, "input_len", 4096),
    ("number_input", "sc.output_len", 512, "output_len", 512),
    ("selectbox", "sc.region", "us-tx-industrial", "region", "us-tx-industrial"),
    ("number_input", "sc.pue", 1.2, "pue", 1.2),
    ("number_input", "sc.cost_of_capital_frac", 8.0, "cost_of_capital_frac", 0.08),
    ("number_input", "sc.accelerator_life_years", 4.0, "accelerator_life_years", 4.0),
    ("number_input", "sc.utilization_frac", 50.0, "utilization_frac", 0.5),
    ("number_input", "sc.build_usd_per_mw_it", 9.5, "build_usd_per_mw_it", 9.5e6),
    ("number_input", "sc.input_output_mix", 1.0, "input_output_mix", 1.0),
    ("selectbox", "sc.num_gpus", "4", "num_gpus", 4),
    ("checkbox", "sc.batch_size.auto", False, "batch_size", 64),
    ("number_input", "sc.batch_size", 32, "batch_size", 32),
    ("selectbox", "sc.basis", "rental", "basis", "rental"),
    ("selectbox", "sc.basis", "neocloud", "basis", "neocloud"),
    ("selectbox", "sc.basis", "custom", "basis", "custom"),
    ("number_input", "sc.usd_per_gpu_hour", 1.75, "usd_per_gpu_hour", 1.75),
    ("selectbox", "sc.workload", "reasoning", "output_len", 8192),
]


def test_cost_explorer_widgets_drive_the_scenario_and_the_metrics_follow_econ(catalog):
    at = run(page("cost_explorer"))
    for kind, key, value, field, expected in COST_STEPS:
        _set(at, kind, key, value)
        run(at)
        sc = scenario(at)
        assert getattr(sc, field) == pytest.approx(expected) if isinstance(expected, float) else \
            getattr(sc, field) == expected, (key, getattr(sc, field))
        shown = metrics(at)
        want = expected_cost_metrics(sc, catalog)
        assert {k: shown[k] for k in want} == want, key
    # the URL holds the whole scenario, so a copied link reproduces it
    again = run(page("cost_explorer", **at.query_params))
    assert scenario(again) == scenario(at)
    assert metrics(again) == metrics(at)


def test_cost_explorer_chart_encodings(catalog):
    at = run(page("cost_explorer"))
    sc = scenario(at)
    row = kpi_row(sc, catalog)
    left, right = specs(at)[:2]  # two panels in st.columns: side by side on a desktop, stacked on a phone
    line = left["layer"][0]["encoding"]
    assert line["x"]["field"] == "batch_size" and line["x"]["scale"]["type"] == "log"
    assert line["x"]["title"] == "Batch size (sequences)"
    assert line["y"]["field"] == "usd_per_m_output_tokens" and line["y"]["title"] == "Cost, decode only ($ per M output tokens)"
    assert right["layer"][0]["encoding"]["y"]["field"] == "output_tokens_per_s_per_gpu"
    data = datasets(at)
    rules = data[left["layer"][1]["data"]["name"]]
    walls = {label.split(" at ")[0]: b for label, b in rules.select("label", "batch_size").rows()}
    assert walls["KV-cache wall"] == row["max_batch_size"]
    if row["sweet_spot_batch"] is not None:
        assert walls["Memory/compute crossover"] == pytest.approx(row["sweet_spot_batch"])
    curve = data[left["layer"][0]["data"]["name"]]
    assert curve["batch_size"].max() == row["max_batch_size"]
    # the KPI's batch meets the speed floor: never cheaper than the curve's cheapest (largest feasible) batch
    assert curve["usd_per_m_output_tokens"].min() <= row["usd_per_m_output_tokens"] * (1 + 1e-9)
    on_grid = curve.filter(pl.col("batch_size") == row["batch_size"])
    if on_grid.height:
        assert on_grid["usd_per_m_output_tokens"][0] == pytest.approx(row["usd_per_m_output_tokens"], rel=1e-9)


def test_infeasible_batch_is_a_warning_not_a_traceback():
    at = run(page("cost_explorer", batch_size="100000"))
    assert any("not feasible" in w.value and "batch exceeds KV-cache capacity" in w.value for w in at.warning)


def test_impossible_deployment_is_an_error_message():
    at = run(page("cost_explorer", model="llama-3.1-405b", precision="bf16", num_gpus="1"))
    assert any(e.value.startswith("Cannot compute this") and "GB" in e.value for e in at.error)
    assert not any("Error" in e.value for e in at.error)  # econ's own errors read as messages, not class names
    at = run(page("cost_explorer", hardware="a100-80gb-sxm", precision="fp4"))
    assert any("fp4" in e.value for e in at.error)


# ---------------------------------------------------------------------------------------------
# URL and scenario files
# ---------------------------------------------------------------------------------------------

def test_bad_url_values_warn_and_use_defaults():
    at = run(page("cost_explorer", model="llama-3.3-7b", pue="9", num_gpus="many", nonsense="1"))
    warnings = " | ".join(unescape(w.value) for w in at.warning)  # user text is escaped (safe_text)
    assert "unknown model id 'llama-3.3-7b'; closest: llama-3.3-70b" in warnings
    assert "pue=9 is outside [1, 3]" in warnings
    assert "num_gpus='many' is not a number" in warnings
    assert "unknown scenario field 'nonsense' ignored" in warnings
    assert scenario(at) == Scenario()


def test_scenario_file_loads_from_the_sidebar_and_bad_files_warn():
    at = run(page("cost_explorer"))
    text = Scenario(model="llama-3.1-8b", hardware="b200", precision="fp4", pue=1.1).to_toml().encode()
    at.file_uploader(key="sidebar.load").set_value(("mine.toml", text, "application/toml"))
    run(at)
    assert (scenario(at).model, scenario(at).hardware, scenario(at).precision, scenario(at).pue) == (
        "llama-3.1-8b", "b200", "fp4", 1.1)
    assert at.selectbox(key="sc.model").value == "llama-3.1-8b"  # widgets re-seeded from the file
    assert at.number_input(key="sc.pue").value == pytest.approx(1.1)
    assert at.query_params["model"] == "llama-3.1-8b"
    at.file_uploader(key="sidebar.load").set_value(("broken.toml", b'model = "gpt-9"\npue = [', "application/toml"))
    run(at)
    assert any("not valid TOML" in w.value for w in at.warning)
    assert scenario(at) == Scenario()


def test_sidebar_offers_the_scenario_as_a_file():
    at = run(page("cost_explorer"))
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Save scenario (.toml)" in labels


# ---------------------------------------------------------------------------------------------
# hardware comparison
# ---------------------------------------------------------------------------------------------

def expected_comparison(sc: Scenario, catalog) -> dict[str, str]:
    best = hardware_comparison(catalog, model=sc.model, hardware=sc.compare_hardware or None,
                               precisions=sc.compare_precisions or None,
                               min_tokens_per_s_per_user=sc.min_tokens_per_s_per_user, objective=sc.compare_objective,
                               input_len=sc.input_len, output_len=sc.output_len, assumptions=sc.assumptions(),
                               economics=sc.economics(catalog)).best
    ranked = best.filter(pl.col("rank").is_not_null())
    col = OBJECTIVES[sc.compare_objective]
    top = ranked.row(0, named=True)
    what = "output tokens, all-in" if sc.compare_objective == "output" else "blended tokens"
    return {"Cheapest accelerator": fmt.short_accelerator_name(top["display_name"]),  # full name in the help
            f"Its $ per M {what}": fmt.usd_per_m(top[col]),
            "Its output tokens/s per user": fmt.rate(top["tokens_per_s_per_user"]),
            "Accelerators meeting the floor": f"{ranked.height} of {best.height}",
            "_order": ranked["hardware"].to_list()}


HC_STEPS = [
    ("slider", "sc.min_tokens_per_s_per_user", 50.0, "min_tokens_per_s_per_user", 50.0),
    ("multiselect", "sc.compare_hardware", ["h100-sxm", "b200", "mi300x", "h200-sxm"], "compare_hardware",
     ("h100-sxm", "b200", "mi300x", "h200-sxm")),
    ("multiselect", "sc.compare_precisions", ["fp8"], "compare_precisions", ("fp8",)),
    ("radio", "sc.compare_objective", "blended", "compare_objective", "blended"),
]


def test_hardware_comparison_metrics_and_chart_follow_econ(catalog):
    at = run(page("hardware_comparison"))
    for step in [None] + HC_STEPS:
        if step:
            kind, key, value, field, expected = step
            _set(at, kind, key, value)
            run(at)
            assert getattr(scenario(at), field) == expected
        want = expected_comparison(scenario(at), catalog)
        order = want.pop("_order")
        assert {k: unescape(metrics(at)[k]) for k in want} == want  # a name is escaped text (safe_text, 21.2)
        bars = next(s for s in specs(at) if s.get("encoding", {}).get("color", {}).get("field") == "cost_part")
        assert bars["encoding"]["y"]["sort"] == order  # ranked, cheapest first
        assert bars["encoding"]["x"]["title"].startswith("Cost")
        frontier = next(s for s in specs(at) if "layer" in s and any(
            layer.get("encoding", {}).get("y", {}).get("field") == "output_tokens_per_s_per_gpu" for layer in s["layer"]))
        enc = next(layer for layer in frontier["layer"] if layer["mark"]["type"] == "line")["encoding"]
        assert (enc["x"]["field"], enc["y"]["field"]) == ("tokens_per_s_per_user", "output_tokens_per_s_per_gpu")
        bands = [layer for layer in frontier["layer"] if layer["mark"]["type"] == "area"]
        assert bool(bands) == ("output_tokens_per_s_per_gpu_low" in RESULT_COLUMNS)  # a band when the engine has one
        assert len(enc["color"]["scale"]["range"]) <= 8  # one Okabe-Ito colour per line


def test_unreachable_floor_is_a_warning():
    at = run(page("hardware_comparison", min_tokens_per_s_per_user="5000"))
    assert any("No accelerator reaches the floor" in w.value for w in at.warning)


# ---------------------------------------------------------------------------------------------
# cluster
# ---------------------------------------------------------------------------------------------

def expected_cluster(sc: Scenario, catalog) -> dict[str, str]:
    row = cluster_plan(
        catalog, hardware=sc.hardware, num_gpus=sc.cluster_gpus, model=sc.model, gpus_per_rack=sc.gpus_per_rack,
        training_precision=sc.training_precision, mfu_frac=sc.mfu_frac,
        overhead_fracs=(sc.bubble_frac, sc.checkpoint_overhead_frac, sc.failure_recovery_frac, sc.maintenance_frac),
        failure_window_h=sc.failure_window_h, mtbf_h_per_gpu=sc.mtbf_h_per_gpu,
        checkpoint_write_gb_per_s=sc.checkpoint_write_gb_per_s, training_tokens=sc.training_tokens,
        min_tokens_per_s_per_user=sc.min_tokens_per_s_per_user,
        price_usd_per_m_output_tokens=sc.price_usd_per_m_output_tokens, input_len=sc.input_len,
        output_len=sc.output_len, assumptions=sc.assumptions(), economics=sc.economics(catalog)).row(0, named=True)
    return {"Capex total": fmt.usd_millions(row["capex_total_usd"]),
            "Capex: IT equipment": fmt.usd_millions(row["capex_accelerators_usd"]),
            "Capex: facility": fmt.usd_millions(row["capex_facility_usd"]),
            "IT power": fmt.megawatts(row["it_power_mw"]), "Facility power": fmt.megawatts(row["facility_power_mw"]),
            "Racks": fmt.count(row["rack_count"]), "Peak compute": fmt.flops(row["peak_flop_per_s"]),
            "Realized compute": fmt.flops(row["realized_flop_per_s"]),
            f"P(failure in {row['failure_window_h']:g} h)": fmt.pct(row["prob_failure_in_window_frac"]),
            "Training cost": fmt.usd_millions(row["training_cost_usd"]),
            "Revenue per year": fmt.usd_millions(row["revenue_per_year_usd"]),
            "Payback": "never" if row["payback_years"] is None else f"{row['payback_years']:,.2f} years"}


CLUSTER_STEPS = [
    ("number_input", "sc.cluster_gpus", 8192, "cluster_gpus", 8192),
    ("selectbox", "sc.training_precision", "fp8", "training_precision", "fp8"),
    ("number_input", "sc.price_usd_per_m_output_tokens", 0.05, "price_usd_per_m_output_tokens", 0.05),
    ("number_input", "sc.training_tokens", 30.0, "training_tokens", 30e12),
    ("checkbox", "sc.mfu_frac.auto", False, "mfu_frac", 0.40),
    ("number_input", "sc.failure_recovery_frac", 20.0, "failure_recovery_frac", 0.20),
]


def test_cluster_metrics_follow_econ(catalog):
    at = run(page("cluster"))
    for step in [None] + CLUSTER_STEPS:
        if step:
            kind, key, value, field, expected = step
            _set(at, kind, key, value)
            run(at)
            assert getattr(scenario(at), field) == pytest.approx(expected) if isinstance(expected, float) else \
                getattr(scenario(at), field) == expected
        want = expected_cluster(scenario(at), catalog)
        assert {k: metrics(at)[k] for k in want} == want, step
    mfu = next(s for s in specs(at) if "MFU versus scale" in json.dumps(s.get("title")))  # a panel (issue 19, 390 px)
    scale = mfu["layer"][0]["encoding"]
    assert scale["x"]["scale"]["type"] == "log" and scale["x"]["title"] == "Cluster size (GPUs)"


def test_cluster_of_an_unsold_accelerator_is_an_error_message():
    at = run(page("cluster", hardware="tpu-v6e"))
    assert any("no all_in_capex_usd" in unescape(e.value) for e in at.error)


# ---------------------------------------------------------------------------------------------
# assumptions: uploads and edits are validated, nothing applied until valid
# ---------------------------------------------------------------------------------------------

def _accelerator_csv(catalog, **changes) -> bytes:
    row = catalog.accelerators.filter(pl.col("id") == "h100-sxm").select(
        [c for c in catalog.accelerators.columns if not c.endswith(("_flop_per_s", "_bytes", "_bytes_per_s"))])
    row = row.with_columns(id=pl.lit("my-gpu"), display_name=pl.lit("My GPU"))
    for k, v in changes.items():
        row = row.with_columns(pl.lit(v).cast(pl.String).alias(k)) if k in row.columns else row.with_columns(
            pl.lit(v).alias(k))
    return row.write_csv().encode()


def _upload(at, data: bytes, name: str = "mine.csv"):
    at.file_uploader(key=[f.key for f in at.file_uploader if f.key.startswith("as.upload")][0]).set_value(
        (name, data, "text/csv"))
    return run(at)


@pytest.mark.parametrize("changes, drop, message", [
    (dict(tdp=700), "tdp_w", r"missing column(s) ['tdp_w']"),
    (dict(hbm_capacity_gib=-5), None,
     "row my-gpu, column hbm_capacity_gib: -5 is outside the plausible range [1, 10000] GiB"),
    (dict(bf16_dense_tflop_per_s="fast"), None, "row my-gpu, column bf16_dense_tflop_per_s: 'fast' is not a number"),
    (dict(id="h100-sxm"), None, "row h100-sxm, column id: duplicate id"),
    (dict(as_of="last year"), None, "row my-gpu, column as_of: 'last year' is not YYYY[-MM[-DD]]"),
])
def test_bad_uploads_name_row_and_column_and_change_nothing(catalog, changes, drop, message):
    at = run(page("assumptions"))
    data = _accelerator_csv(catalog, **changes)
    if drop:
        data = pl.read_csv(data, infer_schema=False).drop(drop).write_csv().encode()
    _upload(at, data)
    errors = " ".join(unescape(e.value) for e in at.error)
    assert message in errors, errors
    assert "previous data stays in force" in errors
    assert CATALOG_KEY not in at.session_state or at.session_state[CATALOG_KEY] is None


def test_good_upload_adds_an_accelerator_everywhere(catalog):
    at = run(page("assumptions"))
    _upload(at, _accelerator_csv(catalog, hbm_capacity_gib=200))
    assert any("1 row(s) added" in unescape(s.value) for s in at.success)
    added = at.session_state[CATALOG_KEY].catalog
    assert "my-gpu" in added.accelerators["id"].to_list()
    assert added.accelerator("my-gpu")["hbm_capacity_bytes"] == 200 * 2**30  # GiB
    assert "my-gpu" in at.selectbox(key="sc.hardware").options or "My GPU" in at.selectbox(key="sc.hardware").options
    at.button(key="as.reset_all").click()
    run(at)
    assert CATALOG_KEY not in at.session_state or at.session_state[CATALOG_KEY] is None


def test_efficiency_edits_are_range_checked():
    """Efficiencies are edited in % (60 for 0.6), overheads in ms; messages name the assumption, not the field."""
    from dashboards.pages.assumptions import check_efficiency, efficiency_frame
    frame = efficiency_frame(Scenario())
    shown = dict(frame.select("field", "value").rows())
    assert shown["eta_bw"] == pytest.approx(Scenario().eta_bw * 100)
    assert shown["overhead_s"] == pytest.approx(Scenario().overhead_s * 1e3)
    frame = frame.with_columns(
        value=pl.when(pl.col("field") == "eta_bw").then(150.0).when(pl.col("field") == "eta_flop").then(50.0)
        .otherwise(pl.col("value")))
    changes, errors = check_efficiency(frame)
    assert changes["eta_flop"] == pytest.approx(0.5) and "eta_bw" not in changes
    assert errors == ["HBM bandwidth efficiency: 150 is outside 0.1 to 100 %"]


def test_assumptions_page_shows_no_raw_identifier_or_raw_number():
    at = run(page("assumptions"))
    tables = [t.value for t in at.dataframe if {"assumption", "label"} & set(t.value.columns)]  # not the catalog
    assert len(tables) >= 2  # the efficiency factors and the economics
    text = " ".join(str(v) for t in tables for c in t.columns if c not in ("source", "link", "field", "notes")  # free text; field: hidden
                    for v in t[c].to_numpy().ravel())
    for raw in ("eta_bw", "build_usd_per_mw_it", "11700000.0", "None"):
        assert raw not in text, raw
    assert "$11.7M per MW of IT load" in text and "HBM bandwidth efficiency" in text
    from dashboards.components.sources import human_frame
    sc = Scenario()
    human = human_frame(sc.assumptions(), sc.economics())
    assert "eta_bw" not in human["assumption"].to_list()
    assert "$11.7M per MW of IT load" in human["value"].to_list()
    assert not any(v in ("None", "nan", "") for v in human["value"].to_list())


# ---------------------------------------------------------------------------------------------
# state: a widget belongs to its page unless it is in the shared sidebar
# ---------------------------------------------------------------------------------------------

def test_a_page_widget_changes_only_its_page():
    """The floor slider on Hardware comparison leaves the optimizer's SLO and Cluster's serving floor alone."""
    at = run(AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=TIMEOUT))
    run(at.switch_page("dashboards/pages/hardware_comparison.py"))
    at.slider(key="sc.min_tokens_per_s_per_user").set_value(260.0)
    run(at)
    assert at.session_state[SCENARIO_KEY].min_tokens_per_s_per_user == DEFAULT_MIN_TOKENS_PER_S_PER_USER  # untouched
    assert scenario(at).min_tokens_per_s_per_user == 260.0
    assert at.query_params.get("min_tokens_per_s_per_user") in (["260"], "260")
    run(at.switch_page("dashboards/pages/cluster.py"))
    assert "min_tokens_per_s_per_user" not in at.query_params
    shown = metrics(at)
    assert any(k.startswith("Revenue") and v not in ("$0", "$0.0M") for k, v in shown.items())
    run(at.switch_page("dashboards/pages/hardware_comparison.py"))
    assert at.slider(key="sc.min_tokens_per_s_per_user").value == 260.0  # the page keeps its own value


def test_a_sidebar_widget_changes_every_page():
    at = run(AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=TIMEOUT))
    run(at.switch_page("dashboards/pages/hardware_comparison.py"))
    at.number_input(key="sc.pue").set_value(1.2)
    run(at)
    run(at.switch_page("dashboards/pages/cluster.py"))
    assert scenario(at).pue == 1.2 and at.number_input(key="sc.pue").value == pytest.approx(1.2)


def test_shared_fields_are_the_sidebar_and_the_assumptions():
    from dashboards.components import state
    assert "min_tokens_per_s_per_user" not in state.SHARED_FIELDS and "batch_size" not in state.SHARED_FIELDS
    assert {"model", "hardware", "pue", "eta_bw", "usd_per_kwh"} <= state.SHARED_FIELDS


# ---------------------------------------------------------------------------------------------
# charts: sized and chosen for the data
# ---------------------------------------------------------------------------------------------

def test_frontier_series_are_chosen_by_cost_not_alphabet():
    from dashboards import charts
    rows = []
    for i, hw in enumerate(["a100", "b200", "c300", "d400", "e500", "f600", "g700", "h800", "h200", "mi300x"]):
        cost = 10.0 - i  # later names are cheaper
        rows += [{"hardware": hw, "tokens_per_s_per_user": s, "usd_per_m_output_tokens": cost * s / 20,
                  "output_tokens_per_s_per_gpu": 1000 / s} for s in (10.0, 20.0, 40.0)]
    frame = pl.DataFrame(rows)
    top = charts.top_series(frame, "hardware", min_tokens_per_s_per_user=20.0)
    assert top[:2] == ["mi300x", "h200"] and "a100" not in top and len(top) == charts.MAX_SERIES


def test_cost_ranking_legend_has_no_entry_without_bars(catalog):
    from dashboards import charts
    sc = Scenario()
    best = hardware_comparison(catalog, model=sc.model, min_tokens_per_s_per_user=20.0, input_len=sc.input_len,
                               output_len=sc.output_len, assumptions=sc.assumptions(),
                               economics=sc.economics(catalog)).best
    spec = charts.cost_ranking_chart(best).to_dict()
    domain = spec["encoding"]["color"]["scale"]["domain"]
    assert "Rental" not in domain  # owned basis: no rental bars, so no rental legend entry


def test_cost_ranking_spec_built_fast_equals_altairs(catalog):
    """Issue 19.5: Hardware comparison's ranking (structure kept per accelerator order, names, cost parts and titles;
    bars filled in: dashboards.components.chart.filled) is the very dict Altair's to_dict gives for
    cost_ranking_chart: after a PUE change (other bars, the kept structure), on a rental tier (other parts) and with
    another title and width."""
    from dataclasses import replace

    from dashboards import charts
    sc = Scenario()
    seen = []
    for e in (sc.economics(catalog), replace(sc.economics(catalog), pue=1.377),
              replace(sc.economics(catalog), basis="neocloud")):
        best = hardware_comparison(catalog, model=sc.model, min_tokens_per_s_per_user=20.0, input_len=sc.input_len,
                                   output_len=sc.output_len, assumptions=sc.assumptions(), economics=e).best
        for kw in ({}, {"objective_title": "Cost ($ per M blended tokens)", "width": 400}):
            got = charts.cost_ranking_spec(best, **kw)
            assert got == charts.cost_ranking_chart(best, **kw).to_dict(validate=False)
            seen.append(got)
    assert seen[0] != seen[2] and seen[2] != seen[4]  # a PUE change and a tier change are drawn


def test_cost_explorer_marks_the_kpi_point_off_the_grid(catalog):
    at = run(page("cost_explorer"))
    spec = specs(at)[0]
    row = kpi_row(scenario(at), catalog)
    data = datasets(at)
    marked = [d for d in data.values() if d.height == 1 and "batch_size" in d.columns]
    assert marked and marked[0]["batch_size"][0] == row["batch_size"]
    assert any(layer.get("mark", {}).get("shape") == "diamond" for layer in spec["layer"])


# ---------------------------------------------------------------------------------------------
# downloads (AppTest cannot see download bytes: call the same functions the buttons call)
# ---------------------------------------------------------------------------------------------

def test_table_downloads_round_trip_with_assumptions_and_sources(catalog):
    from dashboards.components import sources, table
    sc = Scenario()
    frame = cost_table(catalog, batch_sizes=[1, 64], **sc.cost_kwargs(), assumptions=sc.assumptions(),
                       economics=sc.economics(catalog))
    back = pl.read_csv(table.csv_bytes(frame), schema=frame.schema)
    assert back.columns == frame.columns and back["usd_per_m_output_tokens"].to_list() == \
        frame["usd_per_m_output_tokens"].to_list()
    assumptions = sources.export_frame(catalog, sc.assumptions(), sc.economics(catalog), model=sc.model,
                                       hardware=sc.hardware)
    data = table.xlsx_bytes(frame, assumptions, {"scenario": {"pue": "1.2"}}, catalog)
    results = pl.read_excel(data, sheet_name="Results")
    assert results.columns == frame.columns
    assert results["usd_per_m_output_tokens"].to_list() == pytest.approx(frame["usd_per_m_output_tokens"].to_list())
    sheet = pl.read_excel(data, sheet_name="Assumptions")
    assert {"eta_bw", "usd_per_kwh", "h100-sxm", "llama-3.3-70b"} <= set(sheet["name"].to_list())
    assert sheet.filter(pl.col("name") == "h100-sxm")["source"][0] == catalog.accelerator("h100-sxm")["source"]


def test_cost_explorer_workbook_has_the_curve_and_its_sources(catalog):
    from dashboards.components import sources
    from dashboards.pages.cost_explorer import workbook
    from econ.analyses.sweep import batch_curve
    sc = Scenario()
    curve = batch_curve(catalog, **sc.cost_kwargs(), assumptions=sc.assumptions(), economics=sc.economics(catalog))
    frame = sources.export_frame(catalog, sc.assumptions(), sc.economics(catalog), model=sc.model, hardware=sc.hardware)
    data = workbook(curve, sc, catalog, frame)
    results = pl.read_excel(data, sheet_name="Results")
    assert results.height == curve.height
    assert results["usd_per_m_output_tokens"].to_list() == pytest.approx(
        curve["usd_per_m_output_tokens"].to_list(), rel=1e-9, nan_ok=True)


# ---------------------------------------------------------------------------------------------
# issue 11: cost versus interactivity, head to head, presets, custom accelerator, measured points
# ---------------------------------------------------------------------------------------------

def _chart_with_title(at, text: str) -> tuple[int, dict]:
    for i, s in enumerate(specs(at)):
        title = s.get("title", {})
        title = title.get("text") if isinstance(title, dict) else title
        if isinstance(title, list):
            title = " ".join(title)
        if title and text in title:
            return i, s
    raise AssertionError(f"no chart titled {text!r}: {[s.get('title') for s in specs(at)]}")


def test_hardware_comparison_headline_reads_the_frontier_at_the_levels(catalog):
    from econ.analyses.compare import cost_frontier, interactivity_table
    at = run(page("hardware_comparison", compare_hardware="h100-sxm,b200,h200-sxm", compare_precisions="fp8"))
    sc = scenario(at)
    i, spec = _chart_with_title(at, "Cost versus interactivity")
    data = datasets(at, i)
    cmp = hardware_comparison(catalog, model=sc.model, hardware=sc.compare_hardware, precisions=sc.compare_precisions,
                              min_tokens_per_s_per_user=sc.min_tokens_per_s_per_user, input_len=sc.input_len,
                              output_len=sc.output_len, assumptions=sc.assumptions(), economics=sc.economics(catalog))
    cost = OBJECTIVES["output"]  # the page draws all-in $/M output tokens, as head to head does
    want = interactivity_table(cost_frontier(cmp.points, cost=cost), catalog, sc.economics(catalog),
                               sc.interactivity_levels, cost=cost)
    rings = next(d for d in data.values() if "at_tokens_per_s_per_user" in d.columns)
    got = rings.sort("hardware", "at_tokens_per_s_per_user")[cost].to_list()
    assert got == pytest.approx(want.filter(pl.col("reached")).sort("hardware", "at_tokens_per_s_per_user")[
        cost].to_list())
    rules = [layer for layer in spec["layer"] if layer.get("mark", {}).get("type") == "rule"]
    assert rules and datasets(at, i)["levels"]["tokens_per_s_per_user"].to_list() == list(sc.interactivity_levels)
    measured = [d for d in data.values() if "source_label" in d.columns]
    assert measured and "SemiAnalysis InferenceX" in measured[0]["source_label"].to_list()  # B200 Llama 70B 1k/1k
    # a new set of levels reads the table again
    at.text_input(key="sc.interactivity_levels").set_value("30, 60")
    run(at)
    assert scenario(at).interactivity_levels == (30.0, 60.0)
    assert "interactivity_levels" not in at.session_state[SCENARIO_KEY].to_query_params()  # page-local


def test_bad_levels_warn_and_keep_the_last_good_ones():
    at = run(page("hardware_comparison"))
    at.text_input(key="sc.interactivity_levels").set_value("20, fast")
    run(at)
    assert scenario(at).interactivity_levels == (20.0, 50.0, 100.0)
    assert any("Levels:" in w.value for w in at.warning)


def test_head_to_head_page_follows_econ(catalog):
    from econ.analyses.compare import Setup, head_to_head
    at = run(page("head_to_head", h2h_a_model="llama-3.1-8b", h2h_b_model="llama-3.1-8b", h2h_b_hardware="h200-sxm"))
    sc = scenario(at)
    h = head_to_head(catalog, Setup("llama-3.1-8b", "h100-sxm", "fp8", "owned"),
                     Setup("llama-3.1-8b", "h200-sxm", "fp8", "owned"), levels=sc.interactivity_levels,
                     input_len=sc.input_len, output_len=sc.output_len, assumptions=sc.assumptions(),
                     economics=sc.economics(catalog))
    shown = metrics(at)
    for r in h.ratio.iter_rows(named=True):
        label = f"At {r['at_tokens_per_s_per_user']:g} tok/s per user: B costs"
        assert shown[label] == f"{r['cost_ratio_b_to_a']:,.2f}x A"
    _, frontier = _chart_with_title(at, "Cost versus interactivity, A and B")
    line = next(layer for layer in frontier["layer"] if layer.get("mark", {}).get("type") == "line")
    assert line["encoding"]["color"]["field"] == "setup_label"
    assert [d.startswith(("A: ", "B: ")) for d in line["encoding"]["color"]["scale"]["domain"]] == [True, True]
    i, bars = _chart_with_title(at, "Time per output token")
    parts = next(iter(datasets(at, i).values()))
    assert parts["time_s"].min() > 0  # no empty segment, so no legend entry without a bar
    # set-up B's tier is page-local and moves the ratio
    at.selectbox(key="sc.h2h_b_basis").set_value("rental")
    run(at)
    assert scenario(at).h2h_b_basis == "rental" and at.session_state[SCENARIO_KEY].h2h_b_basis is None
    assert metrics(at) != shown


def test_head_to_head_setup_that_cannot_serve_is_a_message():
    at = run(page("head_to_head", h2h_b_precision="fp4", h2h_b_hardware="h100-sxm"))
    assert any("set-up B" in unescape(e.value) and "cannot serve" in unescape(e.value) for e in at.error)


def test_workload_preset_switch_sets_both_lengths_everywhere():
    at = run(AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=TIMEOUT))
    at.selectbox(key="sc.workload").set_value("summarization")
    run(at)
    assert (scenario(at).input_len, scenario(at).output_len, scenario(at).workload) == (8192, 1024, "summarization")
    assert at.number_input(key="sc.input_len").value == 8192
    run(at.switch_page("dashboards/pages/hardware_comparison.py"))
    assert (scenario(at).input_len, scenario(at).workload) == (8192, "summarization")  # a sidebar field: shared
    at.number_input(key="sc.output_len").set_value(2000)
    run(at)
    assert scenario(at).workload == "custom" and at.selectbox(key="sc.workload").value == "custom"


def test_custom_accelerator_from_the_sidebar_is_used_like_a_catalog_row(catalog):
    from econ.tables.custom import CUSTOM_ID
    at = run(page("cost_explorer"))
    at.checkbox(key="sc.custom_accelerator").check()
    run(at)
    assert CUSTOM_ID in at.selectbox(key="sc.hardware").options or any(
        "Custom accelerator" in o for o in at.selectbox(key="sc.hardware").options)
    at.text_input(key="sc.custom_name").set_value("My X1")
    at.number_input(key="sc.custom_hbm_tb_per_s").set_value(8.0)
    run(at)
    at.selectbox(key="sc.hardware").set_value(CUSTOM_ID)
    run(at)
    sc = scenario(at)
    assert sc.hardware == CUSTOM_ID and sc.custom_name == "My X1" and sc.custom_hbm_tb_per_s == 8.0
    want = expected_cost_metrics(sc, sc.catalog(catalog))
    assert {k: metrics(at)[k] for k in want} == want
    assert "custom_hbm_tb_per_s" in at.query_params  # saved in the link (and the TOML)
    again = run(page("cost_explorer", **at.query_params))
    assert metrics(again) == metrics(at)


def test_invalid_custom_accelerator_is_an_error_not_a_traceback():
    at = run(page("cost_explorer", custom_accelerator="true"))
    at.checkbox(key="sc.custom_capex_usd.auto").check()  # no capex and no rental rate: no price at all
    run(at)
    assert any("Custom accelerator not used" in e.value for e in at.error)


def test_frontier_charts_shade_a_band_only_when_the_frame_has_one():
    from dashboards import charts
    f = pl.DataFrame({"hardware": ["a"] * 3 + ["b"] * 3, "tokens_per_s_per_user": [10.0, 30.0, 90.0] * 2,
                      "usd_per_m_output_tokens": [0.1, 0.2, 0.8, 0.15, 0.3, 0.9],
                      "output_tokens_per_s_per_gpu": [3000.0, 1500.0, 300.0, 2500.0, 1200.0, 250.0]})
    plain = charts.cost_frontier_chart(f, levels=(20,))
    assert not [layer for layer in plain["layer"] if layer["mark"]["type"] == "area"] and "band" not in plain["datasets"]
    banded = f.with_columns(usd_per_m_output_tokens_low=pl.col("usd_per_m_output_tokens") * 0.8,
                            usd_per_m_output_tokens_high=pl.col("usd_per_m_output_tokens") * 1.25)
    spec = charts.cost_frontier_chart(banded, levels=(20,))
    area = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "area")
    assert (area["encoding"]["y"]["field"], area["encoding"]["y2"]["field"]) == (
        "usd_per_m_output_tokens_low", "usd_per_m_output_tokens_high")
    assert spec["datasets"]["band"].height == 6
    tput = charts.frontier_chart(f.with_columns(display_name=pl.col("hardware")))
    assert not [layer for layer in tput["layer"] if layer["mark"]["type"] == "area"]


def test_hardware_comparison_workbook_is_the_live_cost_chain(catalog):
    """Issue 19.4: the page's XLSX (``table.cost_workbook``, the Cost explorer's writer) holds formulas, not values."""
    import io
    import zipfile

    from dashboards.components import sources, table
    sc = Scenario()
    best = hardware_comparison(catalog, model=sc.model, hardware=["h100-sxm", "b200"], input_len=sc.input_len,
                               output_len=sc.output_len, assumptions=sc.assumptions(),
                               economics=sc.economics(catalog)).best
    frame = sources.export_frame(catalog, sc.assumptions(), sc.economics(catalog), model=sc.model,
                                 hardware=best["hardware"].to_list())
    data = table.cost_workbook(best, sc, catalog, frame)
    results = pl.read_excel(data, sheet_name="Results")
    assert results["usd_per_m_output_tokens_all_in"].to_list() == pytest.approx(
        best["usd_per_m_output_tokens_all_in"].to_list(), rel=1e-12)
    sheet = zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml").decode()
    assert sheet.count("<f>") >= 2 * 15  # every cost column of both rows is a formula
    assumptions = pl.read_excel(data, sheet_name="Assumptions")
    assert {"usd_per_kwh", "b200.all_in_capex_usd", "h100-sxm"} <= set(assumptions["name"].to_list())
