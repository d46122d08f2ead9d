"""Issue 9, "shown": the Calibration page, and the profile and band of single answers (Cost explorer, Head to
head, Assumptions), under Streamlit's AppTest. Every number shown is read from the shipped tables
(data/calibration*.csv) or the engine's result columns; the tests compare against those, never a copy.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboards.components import fmt, profiles  # noqa: E402
from econ.assumptions import DEFAULT, Assumptions  # noqa: E402
from econ.tables.catalog import load_calibration_errors, load_calibration_predictions, load_catalog  # noqa: E402
from econ.analyses.compare import auto_batch_row  # noqa: E402
from econ.io.scenario import Scenario  # noqa: E402

PAGES = ROOT / "dashboards" / "pages"
TIMEOUT = 120
RAW_IDS = ("hopper-fp8", "blackwell-fp4", "cdna3-fp8", "single-stream", "fixed-concurrency", "None", "nan")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def run(name: str, **query) -> AppTest:
    at = AppTest.from_file(str(PAGES / f"{name}.py"), default_timeout=TIMEOUT)
    at.query_params.update(query)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def frames(at: AppTest) -> list:
    return [d.value for d in at.dataframe]


def text_of(df) -> str:
    """The text cells of a shown table (an empty number cell shows the placeholder "\u2013", not its NaN)."""
    return " ".join(str(v) for c in df.columns if not str(df[c].dtype).startswith(("float", "int", "Float", "Int"))
                    for v in df[c].to_numpy().ravel())


# ------------------------------------------------------------------------------------------ Calibration page

def test_calibration_page_shows_the_shipped_errors_beside_the_roofline():
    errors = load_calibration_errors()
    every = errors.filter(pl.col("by") == "all").row(0, named=True)
    at = run("calibration")
    shown = {m.label: m.value for m in at.metric}
    assert shown["Held-out median error"] == fmt.pct(every["cv_median_abs_error_frac"], 1) == "12.5%"
    assert shown["Held-out P90 error"] == fmt.pct(every["cv_p90_abs_error_frac"], 1)
    assert shown["Roofline median error"] == fmt.pct(every["roofline_median_abs_error_frac"], 0)
    assert shown["Cases (groups)"] == f"{every['n_cases']:,} ({every['n_groups']:,})"
    table = next(d for d in frames(at) if "family" in d.columns and "cv" in d.columns)
    assert len(table) == errors.height
    rows = dict(zip(table["family"], table["cv"]))
    assert rows["All cases"] == "12.5% / 41.2%"  # the README's held-out median / P90
    assert rows["MLPerf Server (p99 limits)"].startswith("14.7%")
    assert "Hopper FP8" in rows and "Blackwell BF16 (via Blackwell FP8)" in rows and "CDNA 4 FP4" in rows
    # generations as vendors name them in the class-by-generation rows ("Cdna4" read as a raw id)
    assert "MoE models on CDNA 4" in rows and "Dense models on CDNA 3" in rows and not any("Cdna" in f for f in rows)
    roof = dict(zip(table["family"], table["roofline"]))
    assert roof["All cases"].startswith("96.6%")
    for df in frames(at):
        shown_text = text_of(df.drop(columns=[c for c in ("source",) if c in df.columns]))
        for raw in RAW_IDS:
            assert raw not in shown_text.split() and f"{raw} " not in shown_text, (raw, list(df.columns))


def test_calibration_page_profiles_read_in_words_with_their_standard_errors(catalog):
    at = run("calibration")
    prof = next(d for d in frames(at) if "basis" in d.columns)
    assert len(prof) == catalog.calibration.height
    by = {r["profile"]: r for r in prof.to_dict("records")}
    cal = {r["profile"]: r for r in catalog.calibration.iter_rows(named=True)}
    h = cal["hopper-fp8"]
    assert by["Hopper FP8"]["basis"] == "Fitted on its own cases"
    assert by["Hopper FP8"]["eta_bw"] == f"{100 * h['eta_bw']:.1f}% \u00b1 {100 * h['eta_bw_se']:.1f}"
    assert by["Hopper FP8"]["n_cases"] == h["n_cases"]
    assert by["Blackwell BF16"]["basis"] == "Too few cases (1 group of its own): uses Blackwell FP8"
    assert by["CDNA 4 FP8"]["basis"] == by["Blackwell FP8"]["basis"] == "Fitted on its own cases"
    assert by["TPU BF16"]["basis"].endswith("uses the shared values of every fitted profile")
    lo, hi = math.exp(h["log_ratio_p10"]), math.exp(h["log_ratio_p90"])
    assert by["Hopper FP8"]["band"] == f"\u00d7{lo:.2f} to \u00d7{hi:.2f}"
    assert list(prof["profile"])[0] == "Hopper FP8"  # fitted profiles first, most cases first


def test_calibration_scatter_has_every_held_out_case_and_the_guides():
    preds = load_calibration_predictions().filter(pl.col("in_error_table"))
    at = run("calibration")
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    import pyarrow as pa
    data = {}
    for ds in at.get("vega_lite_chart")[0].proto.datasets:
        data[ds.name] = pl.from_arrow(pa.ipc.open_stream(ds.data.data).read_all())
    inline = [v for v in spec.get("datasets", {}).values()]
    tables = list(data.values()) + [pl.DataFrame(v) for v in inline]
    points = next(t for t in tables if "predicted" in t.columns)
    guides = next(t for t in tables if "guide" in t.columns)
    throughput = preds.filter(pl.col("metric").is_in(["output_tokens_per_s_per_gpu", "total_tokens_per_s_per_gpu"]))
    assert points.height == throughput.height
    assert set(guides["guide"].to_list()) == {"y = x (exact)", "\u00b115%", "\u00b140%"}
    g15 = guides.filter(pl.col("guide") == "\u00b115%")
    assert sorted(set((g15["y"] / g15["x"]).round(6).to_list())) == [0.85, 1.15]
    assert "Predicted vs measured" in json.dumps(spec["title"])
    assert any(d.get("type") == "log" for d in [spec["layer"][1]["encoding"]["x"]["scale"]])
    # the other measured quantities and the colouring by scenario are one click away
    at.radio(key="cal.colour").set_value("scenario")
    at.selectbox(key="cal.metric").set_value("ttft_s")
    at.run()
    assert not at.exception
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert spec["layer"][1]["encoding"]["color"]["title"] == "Scenario"
    assert "Time to first token" in json.dumps(spec["title"])


def test_calibration_page_shows_the_error_per_serving_engine():
    """The expander's rows are the core's engine_error_table of the shipped predictions, engines named in words."""
    from econ.analyses.calibration import ENGINE_TITLES, engine_error_table, load_measurements
    expected = engine_error_table(load_calibration_predictions(), load_measurements())
    at = run("calibration")
    shown = next(d for d in frames(at) if "engine" in d.columns)
    assert len(shown) == expected.height
    assert list(shown["engine"]) == [ENGINE_TITLES[e] for e in expected["engine_class"]]
    first = expected.row(0, named=True)
    assert shown["error"].iloc[0] == f"{fmt.sig(100 * first['median_abs_error_frac'], 3)}% / " \
                                     f"{fmt.sig(100 * first['p90_abs_error_frac'], 3)}%"
    assert shown["median_speed_ratio"].iloc[0] == pytest.approx(first["median_speed_ratio"])
    assert set(shown["model_type"]) <= {"Dense", "MoE"}


def test_calibration_page_without_the_error_tables_says_so(monkeypatch, tmp_path):
    """The tables are optional: without them the page explains how to write them, no traceback."""
    import econ.tables.catalog as catalog_module
    from econ.tables.catalog import CALIBRATION_ERRORS_SCHEMA, CALIBRATION_PREDICTIONS_SCHEMA, empty_frame

    monkeypatch.setenv("ECON_DATA_DIR", str(tmp_path))  # a fresh cache key; tables fall back to the shipped ones
    monkeypatch.setattr(catalog_module, "load_calibration_errors", lambda d=None: empty_frame(CALIBRATION_ERRORS_SCHEMA))
    monkeypatch.setattr(catalog_module, "load_calibration_predictions",
                        lambda d=None: empty_frame(CALIBRATION_PREDICTIONS_SCHEMA))
    at = run("calibration")
    info = " ".join(i.value for i in at.info)
    assert "No calibration_errors.csv" in info and "No calibration_predictions.csv" in info
    assert not at.metric and any("basis" in d.columns for d in frames(at))  # the profiles still show


# ------------------------------------------------------------------------------------------ single answers

def test_answer_text_names_the_profile_or_says_assumed(catalog):
    n = int(catalog.calibration.filter(pl.col("profile") == "hopper-fp8")["n_cases"][0])
    nb = int(catalog.calibration.filter(pl.col("profile") == "blackwell-fp8")["n_cases"][0])
    assert profiles.answer_text(catalog, "hopper-fp8") == f"Calibrated: Hopper FP8 (n={n:,})"
    assert profiles.answer_text(catalog, "blackwell-bf16") == \
        f"Calibrated: Blackwell BF16, too few cases: uses Blackwell FP8 (n={nb:,})"
    assert profiles.answer_text(catalog, "assumed") == profiles.answer_text(catalog, None) == "Assumed efficiencies"
    one = Assumptions(eta_bw=0.7)
    assert profiles.answer_text(catalog, "hopper-fp8", one).endswith(", 1 efficiency set by you")
    name, lo, hi = profiles.band_factors(catalog, "h100-sxm", "fp8", DEFAULT)
    row = catalog.calibration.filter(pl.col("profile") == "hopper-fp8").row(0, named=True)
    assert name == "hopper-fp8" and lo == pytest.approx(math.exp(row["log_ratio_p10"]))
    assert hi == pytest.approx(math.exp(row["log_ratio_p90"]))
    none = Assumptions(calibrated=frozenset())
    assert profiles.band_factors(catalog, "h100-sxm", "fp8", none)[0] == ""
    assert math.isnan(profiles.band_factors(catalog, "h100-sxm", "fp8", none)[1])


def test_cost_explorer_kpis_say_which_profile_and_show_its_band(catalog):
    at = run("cost_explorer")
    note = next(m.value for m in at.markdown if "Efficiencies:" in m.value)
    sc = Scenario()
    kw = dict(**sc.cost_kwargs(), assumptions=sc.assumptions(), economics=sc.economics(catalog))
    row = auto_batch_row(catalog, min_tokens_per_s_per_user=sc.min_tokens_per_s_per_user, **kw)[0].row(0, named=True)
    assert row["efficiency_profile"] == "hopper-fp8"
    assert profiles.answer_text(catalog, "hopper-fp8") in note and "Calibrated: Hopper FP8 (n=" in note
    assert (f"{fmt.usd_per_m(row['usd_per_m_output_tokens_low'])} to "
            f"{fmt.usd_per_m(row['usd_per_m_output_tokens_high'])} per M output tokens") in note
    assert (f"{fmt.rate(row['tokens_per_s_per_user_low'])} to {fmt.rate(row['tokens_per_s_per_user_high'])} "
            "output tokens/s per user") in note
    assert "not covered" not in note
    at = run("cost_explorer", eta_bw="0.7")  # one efficiency set by the user: the band is not theirs
    note = next(m.value for m in at.markdown if "Efficiencies:" in m.value)
    assert "1 efficiency set by you" in note and "the 1 efficiency you set is not covered by it" in note
    assert row["usd_per_m_output_tokens_low"] < row["usd_per_m_output_tokens"] < row["usd_per_m_output_tokens_high"]
    for raw in ("hopper-fp8", "None", "nan"):
        assert raw not in note
    # an efficiency the user sets is named as such; the band stays the profile's
    at = run("cost_explorer", eta_bw="0.7")
    note = next(m.value for m in at.markdown if "Efficiencies:" in m.value)
    assert "1 efficiency set by you" in note and "**Band**" in note


def test_head_to_head_names_each_setups_profile_and_band(catalog):
    at = run("head_to_head", h2h_a_model="llama-3.1-8b", h2h_b_model="llama-3.1-8b", h2h_b_hardware="b200",
             h2h_b_precision="fp4")
    note = next(m.value for m in at.markdown if "Efficiencies and band" in m.value)
    assert "**A:** Calibrated: Hopper FP8 (n=" in note and "**B:** Calibrated: Blackwell FP4 (n=" in note
    assert note.count("per M output tokens all-in") == 2 and "None" not in note
    picks = next(d for d in frames(at) if "usd_per_m_output_tokens_all_in_low" in d.columns)
    ok = picks.dropna(subset=["usd_per_m_output_tokens_all_in"])
    assert (ok["usd_per_m_output_tokens_all_in_low"] < ok["usd_per_m_output_tokens_all_in"]).all()
    assert (ok["usd_per_m_output_tokens_all_in"] < ok["usd_per_m_output_tokens_all_in_high"]).all()


def test_assumptions_page_says_which_efficiencies_are_calibrated(catalog):
    row = catalog.calibration.filter(pl.col("profile") == "hopper-fp8").row(0, named=True)
    at = run("assumptions")
    eff = next(d for d in frames(at) if "in_use" in d.columns)
    use = dict(zip(eff["label"], eff["in_use"]))
    assert use["HBM bandwidth efficiency"] == f"Calibrated (Hopper FP8): {fmt.pct(row['eta_bw'], 1)}"
    assert use["Usable HBM share"] == "Assumed (not calibrated)"
    assert use["TPOT tail over mean"].startswith("Measured (p99 / mean TPOT of the MLPerf Server runs, Hopper FP8)")
    assert any(v.startswith("Held, not fitted (Hopper FP8)") for v in use.values())  # overlap_frac, moe_tile_rows
    at = run("assumptions", eta_bw="0.7", hardware="l40s", precision="fp8")
    use = dict(zip(*(next(d for d in frames(at) if "in_use" in d.columns)[c] for c in ("label", "in_use"))))
    h8 = catalog.calibration.filter(pl.col("profile") == "hopper-fp8").row(0, named=True)
    assert use["HBM bandwidth efficiency"] == \
        f"Set by you (the Ada Lovelace FP8 profile has {fmt.pct(h8['eta_bw'], 1)})"
    assert use["Decode FLOP efficiency"].startswith("Calibrated (Ada Lovelace FP8, values of Hopper FP8)")
    assert not any(r in " ".join(use.values()) for r in ("hopper-fp8", "blackwell", "None"))


def test_an_unmeasured_generation_is_not_called_calibrated(catalog):
    """TPU, Gaudi, Trainium have no measurement: their answers use the shared values and say so, and the band's
    basis (every held-out case) is named rather than called the profile's own error."""
    from econ.assumptions import DEFAULT

    text = profiles.answer_text(catalog, "tpu-bf16")
    assert text.startswith("Not calibrated for TPU BF16") and "Calibrated:" not in text
    assert profiles.band_label(catalog, "tpu-bf16").endswith("from every held-out case (too few of its own)")
    assert profiles.band_label(catalog, "hopper-fp8").endswith("from its own held-out cases")
    assert "Hopper FP8" in profiles.band_label(catalog, "ada-fp8")  # ids in the notes read as titles
    status = profiles.efficiency_status(catalog, "tpu-v6e", "bf16", DEFAULT)
    assert status["eta_bw"].startswith("Shared value (no measurements of TPU BF16)")
    assert not any(v.startswith("Calibrated") for v in status.values())


def test_own_profiles_without_own_errors_are_flagged(tmp_path, monkeypatch):
    """A data folder with its own calibration.csv but no error tables: the page says the errors are the shipped fit's."""
    (tmp_path / "calibration.csv").write_bytes((ROOT / "data" / "calibration.csv").read_bytes())
    monkeypatch.setenv("ECON_DATA_DIR", str(tmp_path))
    at = run("calibration")
    assert not at.exception
    assert any("no calibration_errors.csv" in w.value for w in at.warning)
