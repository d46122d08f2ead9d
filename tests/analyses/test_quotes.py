"""Quote checker: provider quotes vs the modeled cost floor (econ/analyses/quotes.py, `econ quotes check`).

Known answers are exact identities of the definitions (margin = (price - cost) / price; break-evens
solved in closed form and verified by re-running the model at the break-even input), and cross-checks
of the vectorized floor search against the public single-deployment path (sweep.cost_table) and an
independent brute-force grid. Tolerances: 1e-12 relative where the same floats are recombined; 1e-9
where a break-even input is fed back through the model (one division and a re-evaluation).
"""

from __future__ import annotations

import io
import json
import re
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.io import export
from econ.assumptions import Economics
from econ.tables.catalog import DEFAULT_DATA_DIR, load_catalog
from econ.cli import main
from econ.errors import InvalidInputError
from econ.analyses.quotes import SUMMARY_COLUMNS, _batch_grid, check_quotes, floor_points
from econ.economics.margins import VERDICTS, gross_margin_frac
from econ.tables.quote_files import load_quotes, validate_quotes
from econ.engine import evaluate
from econ.analyses.sweep import cost_table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tables"))
from quote_rows import quote_row as _q, raw_quotes as _raw  # noqa: E402  (tests/tables/quote_rows.py)

HW = ["h100-sxm", "h200-sxm", "b200"]
"""A small accelerator set for the tests that re-run the search many times (fp4 on b200 only)."""
RANK = {v: i for i, v in enumerate(VERDICTS)}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def shipped(catalog):
    return check_quotes(load_quotes(catalog), catalog)


def _check(catalog, rows, **kw):
    return check_quotes(validate_quotes(_raw(rows), catalog), catalog, **kw)


# ------------------------------------------------------------------------------------------ known answers

def test_price_at_10x_floor_is_rich_and_at_half_is_below_floor(catalog):
    probe = _check(catalog, [_q()], hardware=HW).summary.row(0, named=True)
    f_in, f_out = probe["floor_usd_per_m_input_tokens"], probe["floor_usd_per_m_output_tokens"]
    rows = [_q(f"k{i}", p_in=k * f_in, p_out=k * f_out) for i, k in enumerate((10.0, 0.5))]
    s = _check(catalog, rows, hardware=HW).summary
    rich, below = s.row(0, named=True), s.row(1, named=True)
    assert (rich["verdict"], below["verdict"]) == ("rich", "below-floor")
    for r, k in ((rich, 10.0), (below, 0.5)):
        # the floor does not depend on the price; margins are exactly 1 - 1/k on every side
        assert r["floor_usd_per_m_blended_tokens"] == pytest.approx(probe["floor_usd_per_m_blended_tokens"], rel=1e-12)
        for side in ("input", "output", "blended"):
            assert r[f"margin_{side}_frac"] == pytest.approx(1 - 1 / k, rel=1e-12)
    assert rich["reason"].startswith("rich: the blended price") and "Floor on the cheapest of the accelerators" in rich["reason"]
    assert below["reason"].startswith("below-floor: the blended price") and "-100%" in below["reason"]


@pytest.mark.parametrize("cache_hit, cached_price, blended", [
    pytest.param(0.0, None, (3 * 0.2 + 0.6) / 4, id="3:1-no-cache[(3*0.2+0.6)/4=0.3]"),
    pytest.param(0.5, 0.05, (3 * (0.5 * 0.2 + 0.5 * 0.05) + 0.6) / 4, id="half-cached-at-0.05[0.24375]"),
    pytest.param(0.5, None, (3 * 0.2 + 0.6) / 4, id="half-cached-no-cache-price[full price: 0.3]"),
])
def test_blended_price_and_margins_exact(catalog, cache_hit, cached_price, blended):
    row = _q(p_in=0.2, p_out=0.6, usd_per_m_cached_input_tokens=cached_price)
    s = _check(catalog, [row], hardware=HW, economics=Economics(cache_hit_frac=cache_hit)).summary.row(0, named=True)
    assert s["price_usd_per_m_blended_tokens"] == pytest.approx(blended, rel=1e-12)
    assert s["margin_input_frac"] == pytest.approx((0.2 - s["floor_usd_per_m_input_tokens"]) / 0.2, rel=1e-12)
    assert s["margin_output_frac"] == pytest.approx((0.6 - s["floor_usd_per_m_output_tokens"]) / 0.6, rel=1e-12)
    assert s["margin_blended_frac"] == pytest.approx(gross_margin_frac(blended, s["floor_usd_per_m_blended_tokens"]),
                                                     rel=1e-12)


def test_floor_matches_cost_table_at_the_floor_deployment(catalog, shipped):
    """The vectorized search's floor row re-evaluated through the public single-deployment path."""
    s = shipped.summary.drop_nulls("floor_hardware")
    for r in s.unique("model", keep="first", maintain_order=True).head(6).iter_rows(named=True):
        ct = cost_table(catalog, model=r["model"], hardware=r["floor_hardware"], precision=r["floor_precision"],
                        num_gpus=r["floor_num_gpus"], tp=r["floor_tp"], dp=r["floor_dp"], ep=r["floor_ep"],
                        pp=r["floor_pp"],
                        batch_sizes=[r["floor_batch_size"]], input_len=3072, output_len=1024).row(0, named=True)
        assert ct["usd_per_m_blended_tokens"] == pytest.approx(r["floor_usd_per_m_blended_tokens"], rel=1e-12)
        assert ct["usd_per_m_output_tokens"] == pytest.approx(r["floor_usd_per_m_output_tokens"], rel=1e-12)
        assert ct["tokens_per_s_per_user"] >= r["speed_floor_tokens_per_s_per_user"]
        assert ct["binding_wall"] == r["floor_binding_wall"]


def test_floor_is_no_dearer_than_an_independent_grid(catalog):
    """Brute force: every feasible deployment of a coarse, independently built grid that meets the speed
    floor costs at least the floor (the search covers a superset of it)."""
    r = _check(catalog, [_q(model="llama-3.1-70b")], hardware=HW).summary.row(0, named=True)
    pts = pl.DataFrame({"model": ["llama-3.1-70b"]}).join(pl.DataFrame({"hardware": HW}), how="cross") \
        .join(pl.DataFrame({"precision": ["bf16"]}), how="cross") \
        .join(pl.DataFrame({"num_gpus": [2, 4, 8]}), how="cross") \
        .join(pl.DataFrame({"batch_size": [2 ** k for k in range(12)]}), how="cross") \
        .with_columns(pl.lit(3072).alias("input_len"), pl.lit(1024).alias("output_len"))
    res = evaluate(pts, catalog, strict=False).filter(pl.col("feasible") & (pl.col("tokens_per_s_per_user") >= 25.0))
    assert res.height > 10
    assert res["usd_per_m_blended_tokens"].min() >= r["floor_usd_per_m_blended_tokens"] * (1 - 1e-12)
    # and the search's own points frame reproduces the floor by a plain filter + min
    own = evaluate(floor_points(["llama-3.1-70b"], catalog, hardware=HW), catalog, strict=False)
    own = own.filter(pl.col("feasible") & (pl.col("tokens_per_s_per_user") >= 25.0) & (pl.col("precision") == "bf16"))
    assert own["usd_per_m_blended_tokens"].min() == pytest.approx(r["floor_usd_per_m_blended_tokens"], rel=1e-12)


def test_breakeven_utilization_reproduces_the_price(catalog):
    """Re-running the check at the closed-form break-even utilization puts the floor exactly at the price."""
    probe = _check(catalog, [_q()], hardware=HW).summary.row(0, named=True)
    price = 3.0 * probe["floor_usd_per_m_blended_tokens"]
    r = _check(catalog, [_q(p_in=price, p_out=price)], hardware=HW).summary.row(0, named=True)
    u_star = r["breakeven_utilization_frac"]
    assert 0.01 < u_star < 0.7
    again = _check(catalog, [_q(p_in=price, p_out=price)], hardware=[r["floor_hardware"]],
                   economics=Economics(utilization_frac=u_star)).summary.row(0, named=True)
    assert again["floor_usd_per_m_blended_tokens"] == pytest.approx(price, rel=1e-9)
    assert again["margin_blended_frac"] == pytest.approx(0.0, abs=1e-9)
    # $/GPU-hour break-even scales the modeled hourly cost by price / floor
    assert r["breakeven_usd_per_gpu_hour"] / r["floor_usd_per_gpu_hour"] == pytest.approx(3.0, rel=1e-12)


def test_breakeven_rental_rate_reproduces_the_price(catalog):
    probe = _check(catalog, [_q()], hardware=HW, economics=Economics(basis="rental")).summary.row(0, named=True)
    price = 2.0 * probe["floor_usd_per_m_blended_tokens"]
    r = _check(catalog, [_q(p_in=price, p_out=price)], hardware=HW,
               economics=Economics(basis="rental")).summary.row(0, named=True)
    hw = r["floor_hardware"]
    rate = catalog.accelerator(hw)["rental_usd_per_hour"]
    # per utilized GPU-hour: the rate / utilization, doubled; per hour of existence at 70%: twice the rate
    assert r["breakeven_usd_per_gpu_hour"] == pytest.approx(2.0 * rate / 0.7, rel=1e-12)
    assert r["breakeven_rate_usd_per_gpu_hour"] == pytest.approx(2.0 * rate, rel=1e-12)
    assert r["floor_usd_per_gpu_hour"] == pytest.approx(rate / 0.7, rel=1e-12)
    assert (r["cost_basis"], r["utilization_frac"]) == ("rental", 0.7)
    assert r["breakeven_utilization_frac"] == pytest.approx(0.7 / 2.0, rel=1e-12)  # rent / (2 x rent / 0.7)
    acc = catalog.accelerators.with_columns(
        pl.when(pl.col("id") == hw).then(pl.lit(r["breakeven_rate_usd_per_gpu_hour"])).otherwise(pl.col("rental_usd_per_hour"))
        .alias("rental_usd_per_hour"))
    cat2 = replace(catalog, accelerators=acc)
    again = _check(cat2, [_q(p_in=price, p_out=price)], hardware=[hw],
                   economics=Economics(basis="rental")).summary.row(0, named=True)
    assert again["margin_blended_frac"] == pytest.approx(0.0, abs=1e-9)


def test_breakeven_batch_is_the_smallest_grid_batch_under_the_price(catalog):
    probe = _check(catalog, [_q()], hardware=HW).summary.row(0, named=True)
    price = 1.5 * probe["floor_usd_per_m_blended_tokens"]
    r = _check(catalog, [_q(p_in=price, p_out=price)], hardware=HW).summary.row(0, named=True)
    b = r["breakeven_batch_size"]
    grid = _batch_grid()["batch_size"].to_list()
    prev = max(x for x in grid if x < b)
    kw = dict(model="llama-3.1-70b", hardware=r["floor_hardware"], precision=r["floor_precision"],
              num_gpus=r["floor_num_gpus"], tp=r["floor_tp"], pp=r["floor_pp"], input_len=3072, output_len=1024)
    costs = cost_table(catalog, batch_sizes=[prev, b], **kw)["usd_per_m_blended_tokens"].to_list()
    assert costs[1] <= price < costs[0]
    assert f"batch {b} (" in r["reason"]


def test_stated_fp8_is_compared_with_an_fp8_floor(catalog):
    rows = [_q("stated", model="llama-3.3-70b", quantization="FP8"), _q("unstated", model="llama-3.3-70b")]
    s = _check(catalog, rows, hardware=HW).summary
    fp8, bf16 = s.row(0, named=True), s.row(1, named=True)
    assert (fp8["reference_precision"], fp8["reference_precision_source"]) == ("fp8", "stated")
    assert (bf16["reference_precision"], bf16["reference_precision_source"]) == ("bf16", "native")
    assert fp8["floor_precision"] in ("fp8", "bf16") and bf16["floor_precision"] == "bf16"
    assert fp8["floor_usd_per_m_blended_tokens"] < bf16["floor_usd_per_m_blended_tokens"]
    # the fp8 quote's bf16 alternative is exactly the unstated quote's floor
    assert fp8["floor_bf16_usd_per_m_blended_tokens"] == pytest.approx(bf16["floor_usd_per_m_blended_tokens"], rel=1e-12)
    assert "floor assumes fp8 weights (as the provider states); with bf16 it is $" in fp8["reason"]
    assert "floor assumes bf16 weights (the released checkpoint's" in bf16["reason"]
    assert "with fp4 (not stated by the provider)" in bf16["reason"]  # b200 has fp4


def test_native_precision_of_gpt_oss_is_fp4(catalog, shipped):
    g = shipped.summary.filter(pl.col("model") == "gpt-oss-120b")
    assert set(g["reference_precision"]) == {"fp4"} and set(g["weight_format"]) == {"mxfp4"}
    assert set(g["reference_precision_source"]) == {"gpt-oss-release"}
    # the release's own formats: bf16 attention and rest, MXFP4 experts, whatever the matmul precision
    has = g.drop_nulls("floor_hardware")
    assert set(has["floor_weight_format"]) == {"bf16"} and set(has["floor_expert_weight_format"]) == {"mxfp4"}


def test_unreachable_speed_is_not_gpu_comparable_with_the_fastest_deployment(catalog):
    r = _check(catalog, [_q(model="llama-3.1-8b", output_tokens_per_s_per_user=5000.0)], hardware=HW).summary.row(0, named=True)
    assert r["verdict"] == "not-gpu-comparable"
    assert r["floor_usd_per_m_blended_tokens"] is None and r["margin_blended_frac"] is None
    assert r["num_hardware_meeting_floor"] == 0
    assert re.search(r"at 5000 tokens/s per user, the quote.s published speed.*fastest modeled there is [\d.]+ tokens/s",
                     r["reason"])


def test_per_hardware_band(catalog, shipped):
    s, h = shipped.summary, shipped.per_hardware
    n_hw = catalog.accelerators.height
    assert h.height == s.height * n_hw
    band = h.filter(pl.col("meets_floor") & pl.col("in_scope")).group_by("quote_id").agg(
        pl.col("usd_per_m_blended_tokens").min().alias("lo"), pl.col("usd_per_m_blended_tokens").max().alias("hi"),
        pl.len().alias("n"))
    j = s.join(band, on="quote_id", how="inner")
    np.testing.assert_allclose(j["lo"], j["floor_usd_per_m_blended_tokens"], rtol=1e-12)
    np.testing.assert_allclose(j["hi"], j["band_max_usd_per_m_blended_tokens"], rtol=1e-12)
    assert (j["n"] == j["num_hardware_meeting_floor"]).all()
    # an accelerator without a floor always says why
    assert (h.filter(~pl.col("meets_floor"))["note"].str.len_chars() > 10).all()


def test_shipped_quotes_all_have_a_verdict_and_reason(shipped):
    s = shipped.summary
    assert s.height == 116 and s.columns == list(SUMMARY_COLUMNS)
    assert set(s["verdict"]) <= set(VERDICTS)
    ok = s.select(pl.col("reason").str.starts_with(pl.col("verdict") + ":")).to_series()
    assert ok.all()
    for c, dt in s.schema.items():
        if dt.is_float():
            assert s[c].drop_nulls().is_finite().all(), c
    has = s.filter(pl.col("floor_hardware").is_not_null())
    assert has["floor_binding_wall"].is_in(["memory", "compute", "network"]).all()
    assert has["floor_batch_limit"].is_in(["speed", "capacity", "cost"]).all()
    assert (has["floor_tokens_per_s_per_user"] >= has["speed_floor_tokens_per_s_per_user"]).all()


# ------------------------------------------------------------------------------------------ properties

_price = st.floats(1e-3, 20.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=25, deadline=None)
@given(pairs=st.lists(st.tuples(_price, _price, st.floats(1.0, 100.0), st.sampled_from(["in", "out", "both"])),
                      min_size=1, max_size=8))
def test_raising_the_price_never_worsens_the_verdict(catalog, pairs):
    rows = []
    for i, (p_in, p_out, k, side) in enumerate(pairs):
        rows.append(_q(f"a{i}", model="llama-3.1-8b", p_in=p_in, p_out=p_out))
        rows.append(_q(f"b{i}", model="llama-3.1-8b", p_in=p_in * (k if side != "out" else 1.0),
                       p_out=p_out * (k if side != "in" else 1.0)))
    s = _check(catalog, rows, hardware=HW).summary
    for i in range(len(pairs)):
        a, b = s.row(2 * i, named=True), s.row(2 * i + 1, named=True)
        assert RANK[b["verdict"]] >= RANK[a["verdict"]]
        assert b["margin_blended_frac"] >= a["margin_blended_frac"] - 1e-12


@settings(max_examples=25, deadline=None)
@given(speeds=st.lists(st.tuples(st.floats(1.0, 700.0), st.floats(0.0, 500.0)), min_size=1, max_size=6))
def test_raising_the_speed_floor_never_lowers_the_cost_floor(catalog, speeds):
    rows = []
    for i, (s1, ds) in enumerate(speeds):
        rows.append(_q(f"a{i}", model="llama-3.1-8b", output_tokens_per_s_per_user=s1))
        rows.append(_q(f"b{i}", model="llama-3.1-8b", output_tokens_per_s_per_user=s1 + ds))
    s = _check(catalog, rows, hardware=HW).summary
    for i in range(len(speeds)):
        lo, hi = (s.row(2 * i + j, named=True)["floor_usd_per_m_blended_tokens"] for j in (0, 1))
        if lo is None:  # unreachable at the lower speed -> unreachable at the higher one
            assert hi is None
        elif hi is not None:
            assert hi >= lo * (1 - 1e-12)
    for c, dt in s.schema.items():
        if dt.is_float():
            assert s[c].drop_nulls().is_finite().all(), c


# ------------------------------------------------------------------------------------------ bad input
# (a bad quotes file: tests/tables/test_quote_files.py)

def test_settings_out_of_range(catalog):
    q = validate_quotes(_raw([_q()]), catalog)
    with pytest.raises(InvalidInputError, match=r"min_tokens_per_s_per_user=0 is outside \(0, 100000\]"):
        check_quotes(q, catalog, min_tokens_per_s_per_user=0)
    with pytest.raises(InvalidInputError, match=r"quotes frame is missing column"):
        check_quotes(q.drop("reference_precision"), catalog)


def test_formula_text_is_neutralized_in_csv_and_xlsx(catalog):
    evil = '=HYPERLINK("http://evil.example","x")'
    r = _check(catalog, [dict(_q(), provider=evil, notes="+cmd|' /C calc'!A0")], hardware=HW)
    back = pl.read_csv(export.to_csv_bytes(r.summary), infer_schema=False)
    assert back["provider"][0] == "'" + evil
    text = [str(v) for v in back.row(0) if v is not None and re.fullmatch(r"-?[0-9.]+(e[-+]?[0-9]+)?", str(v)) is None]
    assert not any(v.startswith(("=", "+", "-", "@")) for v in text)  # a negative number (margin band) is no formula
    from econ.commands.quotes import xlsx_bytes
    sheet = pl.read_excel(xlsx_bytes(r, catalog, Economics()), sheet_name="Quote check")
    assert sheet["provider"][0] == evil  # stored as a text cell (quote prefix), not a formula


# ------------------------------------------------------------------------------------------ CLI

def test_cli_prints_a_verdict_and_reason_for_every_shipped_quote(capsys):
    assert main(["quotes", "check"]) == 0
    out = capsys.readouterr().out
    reasons = out.split("\nreasons:\n", 1)[1]
    ids = pl.read_csv(DEFAULT_DATA_DIR / "quotes.csv", infer_schema=False)["quote_id"].to_list()
    for qid in ids:
        assert re.search(rf"^{re.escape(qid)}: (below-floor|thin|plausible|rich|not-gpu-comparable): \S", reasons,
                         re.M), qid
    assert len(re.findall(r"^\S+: (below-floor|thin|plausible|rich|not-gpu-comparable): ", reasons, re.M)) == len(ids)
    assert "verdicts: " in out and "deployments evaluated" in out


def test_cli_csv_json_xlsx(capsys, tmp_path):
    assert main(["quotes", "check", "--format", "csv", "--rental", "--input-output-mix", "1:1",
                 "--cache-hit-rate", "0.2", "--provider", "together,groq"]) == 0
    csv = pl.read_csv(io.StringIO(capsys.readouterr().out))
    assert set(csv["provider"]) == {"together", "groq"} and csv.columns == list(SUMMARY_COLUMNS)
    assert csv["reason"].str.len_chars().min() > 40
    assert main(["quotes", "check", "--format", "json", "--model", "kimi-k2",
                 "--min-tokens-per-s-per-user", "60"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["model"] for r in rows} == {"kimi-k2"}
    assert all(r["speed_floor_tokens_per_s_per_user"] == 60 for r in rows)
    out = tmp_path / "q.xlsx"
    assert main(["quotes", "check", "--format", "xlsx", "--output", str(out)]) == 0
    assert pl.read_excel(out, sheet_name="Quote check").height == 116


@pytest.mark.parametrize("argv, match", [
    pytest.param(["--format", "xlsx"], r"--format xlsx needs --output", id="xlsx-without-output"),
    pytest.param(["--min-tokens-per-s-per-user", "-1"], r"--min-tokens-per-s-per-user=-1 is outside", id="bad-speed"),
    pytest.param(["--cache-hit-rate", "1.5"], r"--cache-hit-rate=1.5 is outside \[0, 1\]", id="bad-cache"),
    pytest.param(["--model", "llama-3-8b"], r"unknown model id 'llama-3-8b'; closest: .*llama-3\.1-8b", id="bad-model"),
    pytest.param(["--provider", "nobody"], r"no quote matches", id="no-match"),
    pytest.param(["--input-output-mix", "3-1"], r"--input-output-mix='3-1' is not of the form", id="bad-mix"),
])
def test_cli_errors(capsys, argv, match):
    assert main(["quotes", "check", *argv]) == 2
    assert re.search(match, capsys.readouterr().err)


def test_cli_bad_file_names_rows_and_columns(capsys, tmp_path):
    f = tmp_path / "mine.csv"
    f.write_text("provider,model,usd_per_m_input_tokens,usd_per_m_output_tokens\n"
                 "acme,llama-3.1-8b,-1,0.5\nacme,llama-31-8b,0.1,x\n")
    assert main(["quotes", "check", "--file", str(f)]) == 2
    err = capsys.readouterr().err
    assert "mine.csv, row quote-1, column usd_per_m_input_tokens: -1 is outside" in err
    assert "mine.csv, row quote-2, column usd_per_m_output_tokens: 'x' is not a number" in err
    assert re.search(r"row\(s\) quote-2, column model: unknown model id 'llama-31-8b'; closest: llama-3\.1-8b", err)


def test_duplicate_ids_rejected_by_check(catalog):
    q = validate_quotes(_raw([_q("q1"), _q("q2")]), catalog).with_columns(pl.lit("same").alias("quote_id"))
    with pytest.raises(InvalidInputError, match=r"quote_id must be unique; duplicated: \['same'\]"):
        check_quotes(q, catalog)


# ------------------------------------------------------------------------------------------ dashboard page

PAGE = str(DEFAULT_DATA_DIR.parent / "dashboards" / "pages" / "quote_checker.py")


def test_page_upload_is_validated_whole(catalog):
    from dashboards.pages.quote_checker import UPLOAD_PREFIX, quotes_to_check
    good = _raw([_q("mine", model="llama-3.1-8b", p_in=0.01, p_out=0.02)]).write_csv().encode()
    q, err = quotes_to_check(catalog, include_catalog=True, upload=good, upload_name="mine.csv")
    assert err is None and q.height == 117
    assert q.filter(pl.col("quote_set") == "uploaded")["quote_id"].to_list() == [UPLOAD_PREFIX + "mine"]
    bad = _raw([_q("ok"), _q("neg", p_in=-1.0), _q("typo", model="llama3-8b")]).write_csv().encode()
    q, err = quotes_to_check(catalog, include_catalog=True, upload=bad, upload_name="mine.csv")
    assert q.height == 116 and set(q["quote_set"]) == {"catalog"}  # nothing of the bad file is used
    assert "row neg, column usd_per_m_input_tokens" in err and "unknown model id 'llama3-8b'" in err
    q, err = quotes_to_check(catalog, include_catalog=False, upload=None, upload_name=None)
    assert q is None and err is None


def _verdict_metrics(at) -> dict:
    from dashboards.pages.quote_checker import VERDICT_LABELS
    labels = {VERDICT_LABELS[v]: v for v in VERDICTS}
    return {labels[m.label]: int(m.value.replace(",", "")) for m in at.metric if m.label in labels}


def test_page_shows_econ_verdicts_chart_and_filters(catalog, shipped):
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.run()
    assert not at.exception
    counts = dict(shipped.summary["verdict"].value_counts().iter_rows())
    assert _verdict_metrics(at) == {v: counts.get(v, 0) for v in VERDICTS}
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["bar", "tick", "point"]
    enc = spec["layer"][2]["encoding"]
    assert enc["x"]["field"] == "price_usd_per_m_blended_tokens" and enc["x"]["scale"]["type"] == "log"
    assert enc["color"]["field"] == "verdict" and "_" not in enc["x"]["title"]
    assert spec["layer"][0]["encoding"]["x2"]["field"] == "band_max_usd_per_m_blended_tokens"
    assert at.dataframe[0].value.shape[0] == 116
    at.multiselect(key="qc.models").set_value(["kimi-k2"]).run()
    assert not at.exception
    kimi = shipped.summary.filter(pl.col("model") == "kimi-k2")
    assert sum(_verdict_metrics(at).values()) == kimi.height
    assert at.dataframe[0].value.shape[0] == kimi.height
    at.number_input(key="qc.speed").set_value(60.0).run()
    assert not at.exception
    r60 = check_quotes(load_quotes(catalog).filter(pl.col("model") == "kimi-k2"), catalog,
                       min_tokens_per_s_per_user=60.0).summary
    assert _verdict_metrics(at) == {v: r60.filter(pl.col("verdict") == v).height for v in VERDICTS}


def test_model_that_fits_nowhere_still_gets_a_reason(catalog):
    """An accelerator with 1 MB of HBM holds no model on <= MAX_GPUS: a verdict and a reason, no crash."""
    tiny = replace(catalog, accelerators=catalog.accelerators.with_columns(pl.lit(1e6).alias("hbm_capacity_bytes")))
    check = _check(tiny, [_q(model="llama-3.1-405b")], hardware=["h100-sxm"])
    r = check.summary.row(0, named=True)
    assert r["verdict"] == "not-gpu-comparable" and r["floor_usd_per_m_blended_tokens"] is None
    assert r["reason"].startswith("not-gpu-comparable: no catalog accelerator holds llama-3.1-405b with bf16 weights")
    assert check.per_hardware["note"][0].startswith("the weights do not fit")


# ------------------------------------------------------------------------------------------ issue 10: tiers, scope,
# speed, formats, bands, reverse engineering, single quotes

def test_hyperscaler_tier_h100_at_full_utilization_is_the_sourced_1_17(catalog):
    """SemiAnalysis's owning cost at large hyperscaler volume, H100: $1.17 per GPU-hour at 100% utilization (the July
    2026 TCO model, InferenceX app PR #661; accelerators.csv tco_hyperscaler_usd_per_hour; $1.30 in the earlier
    model); per utilized GPU-hour it scales with 1/utilization."""
    row = _q(model="llama-3.1-8b", hardware="h100-sxm")
    full = _check(catalog, [row], economics=Economics(basis="hyperscaler", utilization_frac=1.0)).summary.row(0, named=True)
    assert full["floor_hardware"] == "h100-sxm" and full["floor_scope"] == "its own hardware, h100-sxm"
    assert full["floor_usd_per_gpu_hour"] == pytest.approx(1.17, rel=1e-12)
    assert (full["cost_basis"], full["utilization_frac"]) == ("hyperscaler", 1.0)
    assert "Cost tier hyperscaler: $1.17 per utilized GPU-hour at 100% utilization" in full["reason"]
    half = _check(catalog, [row], economics=Economics(basis="hyperscaler", utilization_frac=0.5)).summary.row(0, named=True)
    assert half["floor_usd_per_gpu_hour"] == pytest.approx(2.34, rel=1e-12)


@pytest.mark.parametrize("basis, label", [("owned", "owned-custom"), ("owned-custom", "owned-custom"),
                                          ("hyperscaler", "hyperscaler"), ("neocloud", "neocloud"),
                                          ("rental-3yr", "rental-3yr"), ("on-demand", "on-demand"),
                                          ("rental", "rental")])
def test_every_tier_is_named_in_every_answer(catalog, basis, label):
    check = _check(catalog, [_q(model="llama-3.1-8b")], hardware=HW, economics=Economics(basis=basis))
    r = check.summary.row(0, named=True)
    assert r["cost_basis"] == label and check.settings["cost_basis"] == label
    assert r["floor_usd_per_gpu_hour"] > 0 and f"Cost tier {label}: $" in r["reason"]
    assert "per utilized GPU-hour" in r["reason"]


def test_custom_rate_is_the_floor_rate_per_utilized_hour(catalog):
    e = Economics(basis="custom", usd_per_gpu_hour=2.0, utilization_frac=0.8)
    check = _check(catalog, [_q(model="llama-3.1-8b")], hardware=HW, economics=e)
    r = check.summary.row(0, named=True)
    assert r["cost_basis"] == "custom" and r["floor_usd_per_gpu_hour"] == pytest.approx(2.0 / 0.8, rel=1e-12)
    assert check.settings["usd_per_gpu_hour"] == 2.0
    # every accelerator has the typed rate, so the cheapest clearing accelerator-hour is that rate too
    if r["cheapest_clearing_usd_per_gpu_hour"] is not None:
        assert r["cheapest_clearing_usd_per_gpu_hour"] == pytest.approx(2.5, rel=1e-12)


def test_quote_on_hardware_without_a_tier_rate_is_priced_on_its_generation(catalog):
    """SemiAnalysis publishes no hyperscaler rate for H800: the DeepSeek quote's floor comes from Hopper."""
    r = _check(catalog, [_q(model="deepseek-v3", hardware="h800-sxm", p_in=0.27, p_out=1.1,
                            output_tokens_per_s_per_user=20.0)],
               economics=Economics(basis="hyperscaler")).summary.row(0, named=True)
    assert r["floor_scope"] == "its generation, hopper (h800-sxm has no hyperscaler rate)"
    assert r["floor_generation"] == "hopper" and r["floor_hardware"] in ("h100-sxm", "h200-sxm")


def test_own_gpu_pins_the_floor(catalog, shipped):
    ds = shipped.summary.filter(pl.col("provider") == "deepseek")
    assert ds.height == 2
    assert set(ds["floor_hardware"]) == {"h800-sxm"} and set(ds["floor_scope"]) == {"its own hardware, h800-sxm"}
    assert (ds["speed_floor_source"] == "quote").all() and (ds["floor_tokens_per_s_per_user"] >= 20).all()
    h = shipped.per_hardware.filter(pl.col("quote_id").is_in(ds["quote_id"].implode()) & pl.col("in_scope"))
    assert set(h["hardware"]) == {"h800-sxm"}


def test_generation_picks_the_floor_of_quotes_without_hardware(catalog):
    hopper = _check(catalog, [_q()], generation=["hopper"]).summary.row(0, named=True)
    both = _check(catalog, [_q()], generation=["hopper", "blackwell"]).summary.row(0, named=True)
    hw_gen = dict(catalog.accelerators.select("id", "generation").rows())
    assert hopper["floor_generation"] == "hopper" and hw_gen[hopper["floor_hardware"]] == "hopper"
    assert hopper["floor_scope"] == "the cheapest hopper accelerator"
    assert both["floor_usd_per_m_blended_tokens"] <= hopper["floor_usd_per_m_blended_tokens"] * (1 + 1e-12)
    per = _check(catalog, [_q()], generation="ampere").per_hardware
    assert set(per.filter(pl.col("in_scope"))["hardware"]) == {"a100-80gb-sxm"}


def test_unknown_generation_names_the_valid_ones(catalog):
    with pytest.raises(InvalidInputError, match=r"generation='hoper' is not one of \[.*'hopper'"):
        _check(catalog, [_q()], generation=["hoper"])


@pytest.mark.parametrize("basis", ["owned", "hyperscaler", "rental", "custom"])
def test_groq_and_cerebras_at_800_plus_are_never_below_floor(catalog, basis):
    """Known answer (issue 10): no GPU floor prices an LPU or a wafer; such quotes are not-gpu-comparable."""
    e = Economics(basis=basis, usd_per_gpu_hour=2.0 if basis == "custom" else None)
    quotes = load_quotes(catalog).filter(pl.col("provider").is_in(["groq", "cerebras"])
                                         & (pl.col("output_tokens_per_s_per_user") >= 800))
    assert quotes.height >= 5
    s = check_quotes(quotes, catalog, economics=e).summary
    assert (s["verdict"] == "not-gpu-comparable").all()
    assert s["reason"].str.contains("hardware without a catalog cost basis").all()
    # even a near-free price on Groq hardware at a modest speed is not below any GPU floor
    cheap = _check(catalog, [_q(model="llama-3.3-70b", p_in=1e-4, p_out=1e-4, hardware="groq-lpu",
                                output_tokens_per_s_per_user=900.0)], economics=e).summary.row(0, named=True)
    assert cheap["verdict"] == "not-gpu-comparable" and "Groq LPU" in cheap["reason"]


def test_gpu_quote_at_a_speed_no_gpu_reaches_is_not_gpu_comparable(catalog):
    r = _check(catalog, [_q(model="llama-3.3-70b", output_tokens_per_s_per_user=2000.0)]).summary.row(0, named=True)
    assert r["verdict"] == "not-gpu-comparable" and r["floor_usd_per_m_blended_tokens"] is None
    assert "no accelerator in scope (the cheapest catalog accelerator) serves llama-3.3-70b at 2000" in r["reason"]


def test_turbo_llama_quotes_are_evaluated_at_fp8(catalog, shipped):
    """Known answer (issue 10): DeepInfra and Together 'Turbo' Llama endpoints are priced with fp8 weights."""
    s = shipped.summary.join(load_quotes(catalog).select("quote_id", "provider_model_name"), on="quote_id")
    turbo = s.filter(pl.col("provider").is_in(["deepinfra", "together"]) & pl.col("model").str.starts_with("llama")
                     & pl.col("provider_model_name").str.contains("(?i)turbo"))
    assert turbo.height >= 5
    assert (turbo["weight_format"] == "fp8").all() and (turbo["reference_precision"] == "fp8").all()
    assert (turbo["floor_weight_format"] == "fp8").all()
    assert turbo["reason"].str.contains("a 'Turbo' endpoint, FP8 by the weight-format rule").all()
    # the rule, applied to a row whose weight_format is empty
    typed = _check(catalog, [_q(model="llama-3.3-70b", provider_model_name="meta-llama/Llama-3.3-70B-Instruct-Turbo")],
                   hardware=HW).summary.row(0, named=True)
    assert (typed["weight_format"], typed["floor_weight_format"]) == ("fp8", "fp8")
    plain = _check(catalog, [_q(model="llama-3.3-70b", provider_model_name="Llama-3.3-70B-Instruct")],
                   hardware=HW).summary.row(0, named=True)
    assert plain["floor_weight_format"] == "bf16"
    assert typed["floor_usd_per_m_blended_tokens"] < plain["floor_usd_per_m_blended_tokens"]


def test_fp8_weights_on_hardware_without_fp8_run_dequantized_at_bf16(catalog):
    r = _check(catalog, [_q(model="llama-3.1-70b", weight_format="fp8")], hardware=["a100-80gb-sxm"]).summary
    r = r.row(0, named=True)
    assert (r["floor_precision"], r["floor_weight_format"]) == ("bf16", "fp8")  # W8A16: fp8 bytes, bf16 matmuls


def test_deepseek_floor_uses_mtp_and_wide_expert_parallel_layouts(catalog):
    pts = floor_points(["deepseek-v3"], catalog, hardware=["h800-sxm"])
    wide = pts.filter(pl.col("num_gpus") > 8).select("num_gpus", "tp", "dp", "ep", "pp").unique()
    for n in (32, 64, 128, 256):  # attention-DP + EP across nodes, as DeepSeek's EP32 prefill / EP144 decode
        assert wide.filter((pl.col("num_gpus") == n) & (pl.col("dp") == n) & (pl.col("ep") == n)
                           & (pl.col("tp") == 1) & (pl.col("pp") == 1)).height == 1, n
    r = _check(catalog, [_q(model="deepseek-v3", hardware="h800-sxm", output_tokens_per_s_per_user=20.0)])
    assert r.summary["floor_spec_method"][0] == "mtp"  # the model's default: DeepSeek-V3 ships an MTP module


def test_deepseek_own_price_on_its_own_fleet_is_plausible_or_rich(catalog, shipped):
    """DeepSeek day 6 (issue 10): H800 at $2/GPU-hour, 56.3% cache hits, mix 608:168, >= 20 tokens/s per user,
    R1 prices: the floor's gross margin is within 70-90% (DeepSeek's own: 84.5%)."""
    e = Economics(basis="custom", usd_per_gpu_hour=2.0, utilization_frac=1.0, input_output_mix=608 / 168,
                  cache_hit_frac=342 / 608)
    q = load_quotes(catalog).filter(pl.col("quote_id") == "deepseek-deepseek-r1")
    r = check_quotes(q, catalog, economics=e).summary.row(0, named=True)
    assert 0.70 <= r["margin_blended_frac"] <= 0.90 and r["verdict"] in ("plausible", "rich")
    assert r["floor_hardware"] == "h800-sxm"


def _with_band(monkeypatch, lo=0.8, hi=1.25):
    """The engine with a calibration band (low = lo x cost, high = hi x cost), as the lead's engine will return."""
    import econ.analyses.quotes as quotes

    real = quotes.evaluate

    def banded(points, *a, **kw):
        res = real(points, *a, **kw)
        if "usd_per_m_blended_tokens" not in res.columns:
            return res
        c = pl.col("usd_per_m_blended_tokens")
        return res.with_columns((c * lo).alias("usd_per_m_blended_tokens_low"),
                                (c * hi).alias("usd_per_m_blended_tokens_high"))

    monkeypatch.setattr(quotes, "evaluate", banded)


def test_band_is_null_without_the_engine_band(catalog, monkeypatch):
    import econ.analyses.quotes as quotes

    real = quotes.evaluate
    monkeypatch.setattr(quotes, "evaluate", lambda *a, **kw: real(*a, **kw).drop(
        "usd_per_m_blended_tokens_low", "usd_per_m_blended_tokens_high", strict=False))
    r = _check(catalog, [_q()], hardware=HW)
    row = r.summary.row(0, named=True)
    assert row["floor_usd_per_m_blended_tokens_low"] is None and row["band_straddles_price"] is None
    assert "Calibration band" not in row["reason"] and r.settings["calibration_band"].startswith("none")


def test_band_from_the_engine_says_when_it_straddles_the_price(catalog, monkeypatch):
    probe = _check(catalog, [_q()], hardware=HW).summary.row(0, named=True)
    f = probe["floor_usd_per_m_blended_tokens"]
    _with_band(monkeypatch)
    rows = [_q("inside", p_in=1.1 * f, p_out=1.1 * f), _q("above", p_in=2.0 * f, p_out=2.0 * f),
            _q("below", p_in=0.5 * f, p_out=0.5 * f)]
    s = _check(catalog, rows, hardware=HW).summary
    inside, above, below = (s.row(i, named=True) for i in range(3))
    for r in (inside, above, below):
        assert r["floor_usd_per_m_blended_tokens_low"] == pytest.approx(0.8 * f, rel=1e-12)
        assert r["floor_usd_per_m_blended_tokens_high"] == pytest.approx(1.25 * f, rel=1e-12)
        assert r["margin_blended_frac_low"] <= r["margin_blended_frac"] <= r["margin_blended_frac_high"]
    assert (inside["band_straddles_price"], above["band_straddles_price"], below["band_straddles_price"]) == \
        (True, False, False)
    assert "the band straddles the price" in inside["reason"]
    assert "the price is above the whole band" in above["reason"]
    assert "the price is below the whole band" in below["reason"]


def test_reverse_engineering_clearing_generations(catalog):
    probe = _check(catalog, [_q()]).summary.row(0, named=True)
    f = probe["floor_usd_per_m_blended_tokens"]
    check = _check(catalog, [_q("rich", p_in=3 * f, p_out=3 * f), _q("free", p_in=0.2 * f, p_out=0.2 * f)])
    rich, free = check.summary.row(0, named=True), check.summary.row(1, named=True)
    gens = rich["clearing_generations"].split(", ")
    assert rich["floor_generation"] == gens[0]  # the cheapest floor first
    per = check.per_hardware.filter((pl.col("quote_id") == "rich") & pl.col("meets_floor")
                                    & (pl.col("usd_per_m_blended_tokens") <= pl.col("price_usd_per_m_blended_tokens")))
    assert set(per["generation"]) == set(gens)
    assert rich["cheapest_clearing_usd_per_gpu_hour"] == pytest.approx(per["usd_per_gpu_hour"].min(), rel=1e-12)
    assert rich["cheapest_clearing_hardware"] in per["hardware"].to_list()
    assert free["clearing_generations"] is None and free["cheapest_clearing_hardware"] is None
    assert "It clears the floor at its speed on no accelerator searched" in free["reason"]
    assert rich["breakeven_batch_size"] is not None and rich["breakeven_utilization_frac"] is not None


# ------------------------------------------------------------------------------------------ issue 10: bad input
# (a bad quotes file: tests/tables/test_quote_files.py)

@pytest.mark.parametrize("kw, match", [
    (dict(usd_per_m_input_tokens=-1.0), r"usd_per_m_input_tokens=-1 is outside \(0, 10000\]"),
    (dict(usd_per_m_output_tokens=float("nan")), r"usd_per_m_output_tokens=nan is not a finite number"),
    (dict(usd_per_m_cached_input_tokens=0.9), r"usd_per_m_cached_input_tokens=0\.9 is above usd_per_m_input_tokens=0\.5"),
    (dict(output_tokens_per_s_per_user=0.0), r"output_tokens_per_s_per_user=0 is outside \(0, 100000\]"),
    (dict(hardware="h100"), r"hardware='h100' is not a catalog accelerator or a provider system; closest: h100-sxm"),
    (dict(weight_format="fp6"), r"weight_format='fp6' is not one of"),
    (dict(model="llama-3-70b"), r"unknown model id 'llama-3-70b'"),
])
def test_single_quote_errors_name_field_and_value(catalog, kw, match):
    from econ.errors import EconError
    from econ.analyses.quotes import single_quote
    args = dict(model="llama-3.3-70b", usd_per_m_input_tokens=0.5, usd_per_m_output_tokens=1.0) | kw
    with pytest.raises(EconError, match=match):
        single_quote(catalog, **args)


@pytest.mark.parametrize("argv, match", [
    pytest.param(["--input-price", "-1", "--output-price", "1"], r"--input-price=-1 is outside \(0, 10000\]", id="neg"),
    pytest.param(["--input-price", "nan", "--output-price", "1"], r"--input-price=nan is not a finite number", id="nan"),
    pytest.param(["--input-price", "0.5", "--output-price", "1", "--cached-input-price", "0.6"],
                 r"--cached-input-price=0\.6 is above --input-price=0\.5", id="cached-above"),
    pytest.param(["--input-price", "0.5", "--output-price", "1", "--speed", "0"], r"--speed=0 is outside \(0, 100000\]",
                 id="speed-0"),
    pytest.param(["--input-price", "0.5", "--output-price", "1", "--hardware", "lpu"],
                 r"--hardware='lpu' is not a catalog accelerator or a provider system", id="bad-hardware"),
    pytest.param(["--input-price", "0.5", "--output-price", "1", "--tco", "hyperscalar"],
                 r"argument --tco: invalid choice: 'hyperscalar'.*\ndid you mean 'hyperscaler'", id="bad-tier"),
    pytest.param(["--input-price", "0.5", "--output-price", "1", "--tco", "neocloud", "--usd-per-gpu-hour", "2"],
                 r"argument --usd-per-gpu-hour: not allowed with argument --tco", id="tier-and-rate"),
    pytest.param(["--input-price", "0.5", "--output-price", "1", "--usd-per-gpu-hour", "-2"],
                 r"--usd-per-gpu-hour=-2 is outside", id="bad-rate"),
    pytest.param(["--input-price", "0.5", "--output-price", "1", "--generation", "hoper"],
                 r"--generation='hoper' is not one of", id="bad-generation"),
    pytest.param(["--output-price", "1"], r"one typed quote needs --input-price", id="missing-price"),
    pytest.param(["--input-price", "0.5", "--output-price", "1", "--file", "x.csv"], r"--file checks a quotes file",
                 id="file-and-price"),
])
def test_cli_single_quote_errors_speak_flags(capsys, argv, match):
    try:
        code = main(["quotes", "check", "--model", "llama-3.3-70b", *argv])
    except SystemExit as exc:  # argparse's own usage errors (choices, exclusive flags)
        code = exc.code
    assert code == 2
    assert re.search(match, capsys.readouterr().err, re.S)


def test_cli_single_quote_shows_tier_rate_and_reason(capsys):
    assert main(["quotes", "check", "--model", "llama-3.3-70b", "--input-price", "0.59", "--output-price", "0.79",
                 "--hardware", "h100-sxm", "--tco", "hyperscaler", "--utilization", "1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^cost_basis\s+hyperscaler$", out, re.M) and re.search(r"^floor_usd_per_gpu_hour\s+\$1\.17$", out, re.M)
    assert "settings: cost tier hyperscaler" in out and "\nreasons:\nquote-llama-3.3-70b: " in out
    assert main(["quotes", "check", "--model", "llama-3.3-70b", "--input-price", "0.59", "--output-price", "0.79",
                 "--speed", "560", "--hardware", "groq-lpu", "--provider", "groq", "--format", "json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["verdict"] == "not-gpu-comparable" and rec["quote_id"] == "groq-llama-3.3-70b"


def test_cli_file_check_with_a_tier_and_generation(capsys):
    assert main(["quotes", "check", "--tco", "neocloud", "--generation", "hopper,blackwell", "--provider", "together",
                 "--format", "csv"]) == 0
    csv = pl.read_csv(io.StringIO(capsys.readouterr().out))
    assert set(csv["cost_basis"]) == {"neocloud"}
    assert set(csv["floor_generation"].drop_nulls()) <= {"hopper", "blackwell"}
