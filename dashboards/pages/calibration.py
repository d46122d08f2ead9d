"""Calibration: how well the engine predicts public measurements it never saw, and the profiles behind it.

Reads the tables ``econ calibrate --write`` ships (data/README.md): the held-out error per family beside the
pure roofline and the v1 global efficiencies (``calibration_errors.csv``), every held-out prediction
(``calibration_predictions.csv``) and the fitted profiles with their standard errors and fallbacks
(``calibration.csv``). Draws: the headline errors, the error table, predicted against measured with the
y = x line and +-15% / +-40% guides, the profiles, and the method. Computes nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import math  # noqa: E402

import altair as alt  # noqa: E402
import polars as pl  # noqa: E402
import streamlit as st  # noqa: E402

from dashboards.charts import OKABE_ITO, chart_title  # noqa: E402
from dashboards.components import memory  # noqa: E402
from dashboards.components import chart, fmt, profiles, safe_text, scenario_sidebar, sources, state, table  # noqa: E402
from econ.analyses.calibration import ENGINE_TITLES, engine_error_table, load_measurements  # noqa: E402
from econ.tables.catalog import load_calibration_errors, load_calibration_predictions  # noqa: E402
from econ.errors import DataError  # noqa: E402

TITLE = "Calibration"
ICON = ":material/target:"
ORDER = 85

FAMILY_TITLES: dict[tuple[str, str], str] = {
    ("all", "all"): "All cases",
    ("family", "offline"): "Offline (MLPerf Offline, trtllm-bench)",
    ("family", "server"): "MLPerf Server (p99 limits)",
    ("family", "interactive"): "MLPerf Interactive (p99 limits)",
    ("family", "single-stream"): "Single stream (batch 1 to 8)",
    ("family", "fixed-concurrency"): "Fixed concurrency (NIM, InferenceX)",
    ("moe", "dense"): "Dense models",
    ("moe", "moe"): "MoE models",
    ("class", "dense"): "Dense models (issue 17 families)",
    ("class", "moe"): "MoE models",
    ("class", "wide-ep"): "Wide EP (attention DP + expert parallel)",
    ("class", "low-latency"): "Low latency (batch or concurrency <= 8, Interactive)",
    ("class", "long-context"): "Long context (8K+ prompt or answer)",
}
BY_TITLES = {"all": "All", "family": "Scenario", "moe": "Model type", "profile": "Profile", "class": "Family",
             "class-generation": "Family x generation"}
SCENARIO_TITLES = {"offline": "Offline", "server": "MLPerf Server", "interactive": "MLPerf Interactive",
                   "single-stream": "Single stream", "fixed-concurrency": "Fixed concurrency"}
METRIC_TITLES: dict[str, tuple[str, str]] = {  # metric -> (name, unit)
    "output_tokens_per_s_per_gpu": ("Output throughput", "tokens/s per GPU"),
    "tokens_per_s_per_user": ("Output speed per user", "tokens/s per user"),
    "ttft_s": ("Time to first token", "s"),
    "tpot_s": ("Time per output token", "s"),
    "e2e_latency_s": ("End-to-end latency", "s"),
}
"""Measured quantities of the scatter; InferenceX total tokens/s are compared on their output share."""

GUIDES = ((1.0, "y = x (exact)"), (0.15, "\u00b115%"), (0.40, "\u00b140%"))
"""The guide lines: predicted = measured, and predicted = measured x (1 +- 0.15), x (1 +- 0.40)."""

SETS = (("cv", "Held out"), ("previous", "Previous fit"), ("roofline", "Roofline"), ("v1", "v1 global"))

PARAMETERS: tuple[tuple[str, str, float, str], ...] = (
    # (calibration.csv column, header, display scale, unit)
    ("eta_bw", "HBM bandwidth efficiency", 100.0, "%"),
    ("eta_flop", "Decode FLOP efficiency", 100.0, "%"),
    ("eta_prefill", "Prefill FLOP efficiency (MFU)", 100.0, "%"),
    ("overhead_s", "Per-step overhead", 1e3, "ms"),
    ("sequence_overhead_s", "Per-sequence step overhead", 1e6, "\u00b5s"),
    ("kernel_latency_s", "Kernel latency floor", 1e6, "\u00b5s"),
    ("eta_routed_flop_frac", "MoE routed-expert FLOP efficiency", 100.0, "%"),
    ("moe_gemm_half_width", "Grouped-GEMM half-efficiency expert width", 1.0, "columns"),
    ("overlap_frac", "Two-batch overlap (share of the shorter hidden)", 100.0, "%"),
    ("tpot_tail_factor", "p99 / mean TPOT", 1.0, "\u00d7"),
    ("cpu_overlap_frac", "Host time hidden by an overlap scheduler (share of the GPU time)", 100.0, "%"),
)
"""The fitted (and measured) parameters of a profile as shown: tile rows are held (method)."""


@memory.cached(show_spinner=False, max_entries=4, ttl=3600)
def load(data_dir: str | None) -> tuple[pl.DataFrame, pl.DataFrame, str | None]:
    """The two shipped error tables (empty frames when missing) and a load error, if any."""
    try:
        return load_calibration_errors(data_dir), load_calibration_predictions(data_dir), None
    except DataError as exc:
        from econ.tables.catalog import CALIBRATION_ERRORS_SCHEMA, CALIBRATION_PREDICTIONS_SCHEMA, empty_frame
        return empty_frame(CALIBRATION_ERRORS_SCHEMA), empty_frame(CALIBRATION_PREDICTIONS_SCHEMA), str(exc)


def family_title(by: str, family: str, fallback: str | None = None) -> str:
    """"All cases", "MLPerf Server (p99 limits)", "Hopper FP8"; "Blackwell FP8 (via Blackwell FP4)" for a profile
    whose cases are predicted with its fallback."""
    if by == "profile":
        name = profiles.profile_title(family)
        return f"{name} (via {profiles.profile_title(fallback)})" if fallback else name
    if by == "class-generation":  # "moe-hopper" -> "MoE models on Hopper"
        cls = max((c for b, c in FAMILY_TITLES if b == "class" and family.startswith(c + "-")), key=len, default="")
        if cls:
            gen = family[len(cls) + 1:]  # as vendors name it: "CDNA 4", "Ada Lovelace" (profiles.GENERATION_TITLES)
            return f"{FAMILY_TITLES[('class', cls)].split(' (')[0]} on {profiles.GENERATION_TITLES.get(gen, gen.capitalize())}"
    return FAMILY_TITLES.get((by, family), family.replace("-", " ").capitalize())


def _pct(x) -> str:
    """An error as the README reads it: 18.7%, 135%, 3,923% (three significant digits)."""
    return fmt.MISSING if x is None else f"{fmt.sig(100.0 * x, 3)}%"


def error_view(errors: pl.DataFrame) -> pl.DataFrame:
    """The error table for reading: grouping, family in words, errors in % (display only)."""
    order = {b: i for i, b in enumerate(BY_TITLES)}
    rows = []
    for r in errors.iter_rows(named=True):
        row = {"_order": order.get(r["by"], 9), "grouping": BY_TITLES.get(r["by"], r["by"]),
               "family": family_title(r["by"], r["family"], r["fallback_from"]),
               "n_cases": r["n_cases"], "n_groups": r["n_groups"]}
        for k, _ in SETS:
            row[k] = f"{_pct(r[f'{k}_median_abs_error_frac'])} / {_pct(r[f'{k}_p90_abs_error_frac'])}"
        rows.append(row)
    if not rows:
        return pl.DataFrame()
    return pl.DataFrame(rows).sort("_order", "n_cases", descending=[False, True], maintain_order=True).drop("_order")


def show_errors(errors: pl.DataFrame) -> None:
    view = error_view(errors)
    pct = {k: st.column_config.TextColumn(name, width=150,
                                          help=f"Median / P90 of |predicted / measured - 1| in %; "
                                               f"`{k}_median_abs_error_frac` / `{k}_p90_abs_error_frac` in downloads")
           for k, name in SETS}
    st.dataframe(view.drop("grouping"), hide_index=True, key="cal.errors", placeholder=table.PLACEHOLDER,
                 height=35 * (view.height + 1) + 3, column_config={
        "family": st.column_config.TextColumn("Family", width=245),  # not pinned: a phone scrolls past it
        "n_cases": st.column_config.NumberColumn("Cases", format="%d", width=70),
        "n_groups": st.column_config.NumberColumn("Groups", format="%d", width=70,
                                                  help="Model x hardware groups, each left out in turn"), **pct})
    st.caption("Each cell: median / P90 of |predicted / measured - 1| over the family's cases. Calibrated, held out: "
               "each case predicted by the fit that left its whole model x hardware group out. Previous fit: the "
               "held-out errors shipped before this fit, on the same family's cases it had. Roofline: datasheet "
               "peaks, no efficiency or overhead "
               "(econ --ideal). v1 global: one set of scalar efficiencies for every chip, nothing calibrated. "
               "Families (issue 17) overlap: a case may be MoE, wide EP and long context at once.")
    table.downloads(errors, key="cal.errors.dl", name="calibration-errors")


@memory.cached(show_spinner=False, max_entries=4, ttl=3600)
def engine_errors(data_dir: str | None) -> tuple[pl.DataFrame, str | None]:
    """:func:`econ.analyses.calibration.engine_error_table` of the predictions :func:`load` read (cached, not read
    again) and a load error, if any."""
    own = Path(data_dir) / "measurements.csv" if data_dir else None
    try:
        meas = load_measurements(own if own is not None and own.is_file() else None)
        return engine_error_table(load(data_dir)[1], meas), None
    except DataError as exc:
        return pl.DataFrame(), str(exc)


def show_engine_errors(data_dir: str | None) -> None:
    """Held-out error per serving engine (dense and MoE apart), with the direction of the miss."""
    t, problem = engine_errors(data_dir)
    if problem:
        st.error("The measurements do not load: " + safe_text.md(problem), icon=":material/error:")
        return
    if t.height == 0:
        st.info("No held-out prediction with a measurement row.", icon=":material/info:")
        return
    view = t.select(
        pl.col("engine_class").replace_strict(ENGINE_TITLES, default=pl.col("engine_class")).alias("engine"),
        pl.col("moe").replace_strict({"moe": "MoE", "dense": "Dense"}).alias("model_type"), "n_cases", "n_groups",
        pl.struct("median_abs_error_frac", "p90_abs_error_frac").map_elements(
            lambda r: f"{_pct(r['median_abs_error_frac'])} / {_pct(r['p90_abs_error_frac'])}",
            return_dtype=pl.String).alias("error"),
        "median_speed_ratio")
    st.dataframe(view, hide_index=True, key="cal.engines", placeholder=table.PLACEHOLDER,
                 height=35 * (view.height + 1) + 3, column_config={
        "engine": st.column_config.TextColumn("Serving engine", width=245),
        "model_type": st.column_config.TextColumn("Models", width=70),
        "n_cases": st.column_config.NumberColumn("Cases", format="%d", width=70),
        "n_groups": st.column_config.NumberColumn("Groups", format="%d", width=70),
        "error": st.column_config.TextColumn("Held out", width=150,
                                             help="Median / P90 of |predicted / measured - 1| in %"),
        "median_speed_ratio": st.column_config.NumberColumn(
            "Predicted / measured speed (median)", format="%.2f",
            help="Above 1: econ predicts the engine faster than it was measured (a time's ratio is inverted)")})
    st.caption("Each measurement's engine as the calibration reads it (TensorRT-LLM's C++ runtime or its PyTorch "
               "executor, SGLang, vLLM with or without async scheduling, or not stated); the same held-out "
               "predictions as the table above. Engines differ in more than host time: for the same model and GPU "
               "their kernels and collectives differ too, which one profile per generation and precision averages.")
    table.downloads(t, key="cal.engines.dl", name="calibration-errors-by-engine")


def _pm(value, se, scale: float, unit: str) -> str:
    """"75.4% \u00b1 9.0" / "1.21 ms \u00b1 0.40" / "1,956 columns \u00b1 1,627": value with its standard error."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return fmt.MISSING
    v = value * scale
    digits = fmt.sig(v, 3)
    text = f"{digits}%" if unit == "%" else f"{digits} {unit}" if unit != "\u00d7" else f"{digits}\u00d7"
    if se is None or not math.isfinite(se) or se == 0:
        return text
    return f"{text} \u00b1 {se * scale:.1f}" if unit == "%" else f"{text} \u00b1 {fmt.sig(se * scale, 2)}"


def profile_view(calibration: pl.DataFrame) -> pl.DataFrame:
    """One row per profile for reading: name, where its values come from, cases, each parameter \u00b1 SE, band."""
    rows = []
    for r in calibration.iter_rows(named=True):
        src = r["fallback_from"]
        row = {"profile": profiles.profile_title(r["profile"]), "basis": profiles.fallback_text(r),
               "n_cases": r["n_cases"], "n_groups": r["n_groups"]}
        for col, _, scale, unit in PARAMETERS:
            row[col] = _pm(r[col], r.get(f"{col}_se"), scale, unit)
        lo, hi = math.exp(r["log_ratio_p10"]), math.exp(r["log_ratio_p90"])
        row["band"] = f"\u00d7{lo:.2f} to \u00d7{hi:.2f}"
        med = r["cv_median_abs_error_frac"]
        row["cv_median"] = None if med is None else 100.0 * med
        row["fit_date"] = r["fit_date"]
        row["_order"] = (0 if not src else 1 if r["n_cases"] else 2, -r["n_cases"], r["profile"])
        rows.append(row)
    rows.sort(key=lambda x: x.pop("_order"))
    return pl.DataFrame(rows)


def show_profiles(calibration: pl.DataFrame | None) -> None:
    if calibration is None or calibration.height == 0:
        st.info("No calibration.csv in the data folder: every answer uses the assumed efficiencies.",
                icon=":material/info:")
        return
    view = profile_view(calibration)
    cfg = {c: st.column_config.TextColumn(f"{h} ({u})" if u not in ("\u00d7",) else f"{h} (ratio)")
           for c, h, _, u in PARAMETERS}
    st.dataframe(view, hide_index=True, key="cal.profiles", height=420, placeholder=table.PLACEHOLDER, column_config={
        "profile": st.column_config.TextColumn("Profile (generation, precision)", pinned=True),
        "basis": st.column_config.TextColumn("Values from", width="large"),
        "n_cases": st.column_config.NumberColumn("Cases", format="%d"),
        "n_groups": st.column_config.NumberColumn("Groups", format="%d"), **cfg,
        "band": st.column_config.TextColumn("Band, measured / predicted (10th to 90th pct)"),
        "cv_median": st.column_config.NumberColumn("Held-out median error (%)", format="%.1f%%"),
        "fit_date": st.column_config.TextColumn("Fit date")})
    st.caption("Value \u00b1 standard error (Gauss-Newton from the fit's Jacobian; the TPOT tail factor by a "
               "bootstrap over groups). A profile with fewer than 2 model x hardware groups is not fitted: it "
               "copies the nearest fitted one (same generation at the nearest precision, then Blackwell to "
               "Hopper, CDNA 4 to CDNA 3, Ada to Ampere to Hopper, else the shared values). The band multiplies "
               "every throughput of an answer (costs are divided by it). Held at their defaults, not fitted: "
               "communication overlap 0%, grouped-GEMM tile rows 1. Host time hidden: the share shown is fitted "
               "on SGLang's and vLLM's measurements and is the default answer's; TensorRT-LLM's PyTorch executor "
               "is fitted at 100% (it launches each step without waiting for the host), engines without an "
               "overlap scheduler at 0%.")
    table.downloads(calibration, key="cal.profiles.dl", name="calibration-profiles")


def scatter_frame(preds: pl.DataFrame, metric: str, cat) -> pl.DataFrame:
    """The held-out cases of one measured quantity, with names for the tooltip (display only)."""
    metrics = [metric] + (["total_tokens_per_s_per_gpu"] if metric == "output_tokens_per_s_per_gpu" else [])
    models = dict(cat.models.select("id", "display_name").rows())
    hws = dict(cat.accelerators.select("id", "display_name").rows())
    p = preds.filter(pl.col("in_error_table"), pl.col("metric").is_in(metrics))
    return p.select(
        pl.col("model").replace_strict(models, default=pl.col("model")).alias("model_name"),
        pl.col("hardware").replace_strict(hws, default=pl.col("hardware")).alias("hardware_name"),
        pl.col("family").replace_strict(SCENARIO_TITLES, default=pl.col("family")).alias("scenario_name"),
        pl.col("profile").map_elements(profiles.profile_title, return_dtype=pl.String).alias("profile_name"),
        "measured", "predicted", "predicted_over_measured", "source_kind")


def scatter_chart(frame: pl.DataFrame, *, metric: str, colour: str, height: int = 380) -> alt.LayerChart:
    """Predicted (held out) against measured, log-log, with y = x and the +-15% / +-40% guides."""
    name, unit = METRIC_TITLES[metric]
    lo = float(min(frame["measured"].min(), frame["predicted"].min())) / 1.6
    hi = float(max(frame["measured"].max(), frame["predicted"].max())) * 1.6
    guide_rows = []
    for k, label in GUIDES:
        for sign, factor in ((1, 1.0 + k), (-1, 1.0 - k)) if k < 1 else ((1, 1.0),):
            guide_rows += [{"x": lo, "y": lo * factor, "guide": label, "line": f"{label}{sign}"},
                           {"x": hi, "y": hi * factor, "guide": label, "line": f"{label}{sign}"}]
    guides = pl.DataFrame(guide_rows)
    scale = alt.Scale(type="log", domain=[lo, hi], nice=False)
    x_title, y_title = f"Measured ({unit})", f"Predicted, held out ({unit})"
    lines = alt.Chart(guides).mark_line(color="#666666", strokeWidth=1).encode(
        x=alt.X("x:Q", scale=scale, title=x_title), y=alt.Y("y:Q", scale=scale, title=y_title),
        detail="line:N",
        strokeDash=alt.StrokeDash("guide:N", title="Guide", sort=[g[1] for g in GUIDES],
                                  scale=alt.Scale(domain=[g[1] for g in GUIDES], range=[[1, 0], [6, 3], [2, 3]]),
                                  legend=None),
        tooltip=[alt.Tooltip("guide:N", title="Guide")])
    field, ctitle = ("profile_name", "Profile") if colour == "profile" else ("scenario_name", "Scenario")
    domain = (frame.group_by(field).len().sort(["len", field], descending=[True, False])[field].to_list()
              [:len(OKABE_ITO)])  # most cases first, ties by name: the same colours on every run
    fmt_num = ",.3~r" if unit == "s" else ",.0f"
    points = alt.Chart(frame.filter(pl.col(field).is_in(domain))).mark_point(filled=True, size=45, opacity=0.75).encode(
        x=alt.X("measured:Q", scale=scale, title=x_title, axis=alt.Axis(format=",~r", labelOverlap=True)),
        y=alt.Y("predicted:Q", scale=scale, title=y_title, axis=alt.Axis(format=",~r", labelOverlap=True)),
        color=alt.Color(f"{field}:N", title=ctitle, sort=domain,
                        scale=alt.Scale(domain=domain, range=list(OKABE_ITO[:len(domain)])),
                        legend=alt.Legend(orient="bottom", columns=2, labelLimit=150)),
        tooltip=[alt.Tooltip("model_name:N", title="Model"), alt.Tooltip("hardware_name:N", title="Accelerator"),
                 alt.Tooltip("scenario_name:N", title="Scenario"), alt.Tooltip("profile_name:N", title="Profile"),
                 alt.Tooltip("measured:Q", title=f"Measured ({unit})", format=fmt_num),
                 alt.Tooltip("predicted:Q", title=f"Predicted, held out ({unit})", format=fmt_num),
                 alt.Tooltip("predicted_over_measured:Q", title="Predicted / measured", format=".2f"),
                 alt.Tooltip("source_kind:N", title="Source")])
    return alt.layer(lines, points).properties(
        width="container", height=height, autosize=alt.AutoSizeParams(type="fit-x", contains="padding"),
        title=chart_title("Predicted vs measured, held out",
                          f"{name}, {frame.height} cases. Solid: exact; dashed: \u00b115%; dotted: \u00b140%")
    ).resolve_scale(color="independent")


def show_scatter(preds: pl.DataFrame, cat) -> None:
    counted = preds.filter(pl.col("in_error_table"))
    have = set(counted["metric"].to_list())
    options = [m for m in METRIC_TITLES if m in have or (m == "output_tokens_per_s_per_gpu"
                                                          and "total_tokens_per_s_per_gpu" in have)]
    if not options:
        st.info("No held-out prediction to plot.", icon=":material/info:")
        return
    c1, c2 = st.columns([3, 2])
    metric = c1.selectbox("Measured quantity", options, key="cal.metric",
                          format_func=lambda m: f"{METRIC_TITLES[m][0]} ({METRIC_TITLES[m][1]})")
    colour = c2.radio("Colour by", ["profile", "scenario"], key="cal.colour", horizontal=True,
                      format_func=lambda c: "Profile" if c == "profile" else "Scenario")
    frame = scatter_frame(preds, metric, cat)
    left, right = st.columns([3, 2])
    chart.show(scatter_chart, frame, metric=metric, colour=colour, key="cal.scatter", container=left,
               cache_key=(id(preds), preds.height, metric, colour))
    inside = frame.filter((pl.col("predicted_over_measured") - 1).abs() <= 0.15).height
    within40 = frame.filter((pl.col("predicted_over_measured") - 1).abs() <= 0.40).height
    right.caption(f"{inside} of {frame.height} cases ({inside / max(frame.height, 1):.0%}) within \u00b115%, "
               f"{within40} ({within40 / max(frame.height, 1):.0%}) within \u00b140%. Each point is predicted by "
               "the fit that never saw its model x hardware group. InferenceX total tokens/s are compared on "
               "their output share.")


def show_predictions(preds: pl.DataFrame, cat) -> None:
    models = dict(cat.models.select("id", "display_name").rows())
    hws = dict(cat.accelerators.select("id", "display_name").rows())
    view = preds.filter(pl.col("in_error_table")).sort("abs_error_frac", descending=True).select(
        pl.col("model").replace_strict(models, default=pl.col("model")).alias("model_name"),
        pl.col("hardware").replace_strict(hws, default=pl.col("hardware")).alias("hardware_name"),
        pl.col("family").replace_strict(SCENARIO_TITLES, default=pl.col("family")).alias("scenario_name"),
        pl.col("metric").replace_strict({k: f"{v[0]} ({v[1]})" for k, v in METRIC_TITLES.items()}
                                        | {"total_tokens_per_s_per_gpu": "Output throughput (tokens/s per GPU)"},
                                        default=pl.col("metric")).alias("metric_name"),
        "measured", "predicted", "predicted_over_measured", "source")
    st.dataframe(view, hide_index=True, key="cal.cases", height=360, placeholder=table.PLACEHOLDER, column_config={
        "model_name": st.column_config.TextColumn("Model", pinned=True),
        "hardware_name": st.column_config.TextColumn("Accelerator"),
        "scenario_name": st.column_config.TextColumn("Scenario"),
        "metric_name": st.column_config.TextColumn("Measured quantity (unit)"),
        "measured": st.column_config.NumberColumn("Measured", format="%.4g"),
        "predicted": st.column_config.NumberColumn("Predicted, held out", format="%.4g"),
        "predicted_over_measured": st.column_config.NumberColumn("Predicted / measured", format="%.2f"),
        "source": st.column_config.TextColumn("Source", width="large")})
    table.downloads(preds, key="cal.cases.dl", name="calibration-predictions")


METHOD = """
**Method.** Every efficiency the engine uses (HBM and tensor-core efficiency in decode and prefill, fixed time
per step, per layer and per MoE layer, the grouped-GEMM terms, the p99 / mean TPOT tail) comes from a profile of
the accelerator's generation and matmul precision. `econ calibrate` fits the profiles to the public
measurements of `data/measurements.csv` (MLPerf Inference v4.0, v4.1 and v5.0, TensorRT-LLM tables and blogs,
NVIDIA NIM, SemiAnalysis InferenceX, vLLM). **MLPerf rounds after v5.0 are not used**: they are kept for an
independent check. Each measurement is predicted with its own definition (offline throughput at the batch the
system runs, MLPerf Server and Interactive at the highest load that meets their p99 TTFT and TPOT limits, fixed
concurrency at that concurrency). The fit is a maximum a posteriori least squares on ln(measured / predicted)
with priors from NVIDIA's per-kernel tables and shrinkage toward shared values.

**Grouped cross-validation.** The cases are split into model x hardware groups (all MLPerf submissions of one
system, one vendor table for one chip). Each group in turn is left out, the profiles are refitted on the rest,
and the left-out group is predicted. Every error and every band on this page and in the answers comes from those
held-out predictions, never from the in-sample fit. Reproduce with `econ calibrate`; `econ calibrate --check`
fails when the committed tables drift from a refit.
"""


def render() -> None:
    """Draw the page."""
    scenario_sidebar.current()
    cat = state.catalog_in_use().catalog
    st.title("Calibration and accuracy")
    st.caption("How far the engine's answers are from public measurements it was not fitted on, and the "
               "efficiency profiles every answer uses.")
    errors, preds, problem = load(state.data_dir())
    own = Path(state.data_dir()) if state.data_dir() else None
    if own is not None and (own / "calibration.csv").is_file() and not (own / "calibration_errors.csv").is_file():
        st.warning("Your data folder has its own calibration.csv but no calibration_errors.csv: the held-out errors "
                   "below are those of the shipped fit, not of your profiles (write yours with `econ calibrate "
                   "--write --data-dir DIR`).", icon=":material/warning:")
    if problem:
        st.error("The calibration error tables do not load: " + safe_text.md(problem), icon=":material/error:")
    every = errors.filter(pl.col("by") == "all")
    if every.height:
        r = every.row(0, named=True)
        c = st.columns(4)
        c[0].metric("Held-out median error", fmt.pct(r["cv_median_abs_error_frac"], 1),
                    help="Median |predicted / measured - 1| over every case, each predicted without its group")
        c[1].metric("Held-out P90 error", fmt.pct(r["cv_p90_abs_error_frac"], 1),
                    help="90th percentile of the same errors")
        c[2].metric("Roofline median error", fmt.pct(r["roofline_median_abs_error_frac"], 0),
                    help="The pure roofline (datasheet peaks, no efficiency) on the same cases")
        c[3].metric("Cases (groups)", f"{r['n_cases']:,} ({r['n_groups']:,})",
                    help="Measurements and the model x hardware groups the cross-validation leaves out in turn")
    st.subheader("Held-out error per family")
    if errors.height:
        show_errors(errors)
    else:
        st.info("No calibration_errors.csv: run `econ calibrate --write` to write it.", icon=":material/info:")
    if preds.height:
        with st.expander("Held-out error per serving engine"):
            show_engine_errors(state.data_dir())
    st.subheader("Predicted vs measured, held out")
    if preds.height:
        show_scatter(preds, cat)
    else:
        st.info("No calibration_predictions.csv: run `econ calibrate --write` to write it.", icon=":material/info:")
    st.subheader("Efficiency profiles")
    show_profiles(cat.calibration)
    st.markdown(METHOD)
    if preds.height:
        with st.expander("Every held-out case, largest miss first"):
            show_predictions(preds, cat)
    if errors.height:
        with st.expander("Sources"):
            st.markdown(f"- Error table (fitted {safe_text.md(str(errors['fit_date'][0]))}): "
                        f"{sources.links(errors['source'][0])}\n"
                        "- Measurements: data/measurements.csv (each case's source in the table above)")


if __name__ == "__main__":
    render()
