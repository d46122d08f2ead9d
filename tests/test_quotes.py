"""Quote checker: provider quotes vs the modeled cost floor (econ/quotes.py, `econ quotes check`).

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
from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ import export
from econ.assumptions import Economics
from econ.catalog import DEFAULT_DATA_DIR, load_catalog
from econ.cli import main
from econ.errors import DataError, InvalidInputError
from econ.quotes import (
    MAX_QUOTE_ROWS, QUOTE_SCHEMA, SUMMARY_COLUMNS, VERDICTS, _batch_grid, breakeven_utilization_frac,
    check_quotes, floor_points, gross_margin_frac, load_quotes, read_quotes, validate_quotes, verdict_expr,
)
from econ.engine import evaluate
from econ.sweep import cost_table

HW = ["h100-sxm", "h200-sxm", "b200"]
"""A small accelerator set for the tests that re-run the search many times (fp4 on b200 only)."""
RANK = {v: i for i, v in enumerate(VERDICTS)}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def shipped(catalog):
    return check_quotes(load_quotes(catalog), catalog)


def _raw(rows: list[dict]) -> pl.DataFrame:
    """Quote rows as the all-text frame a CSV reader gives (floats as repr: exact round trip)."""
    cols = list(QUOTE_SCHEMA)
    return pl.DataFrame([{c: (None if r.get(c) is None else (repr(r[c]) if isinstance(r[c], float) else str(r[c])))
                          for c in cols} for r in rows], schema={c: pl.String for c in cols})


def _q(quote_id="q1", model="llama-3.1-70b", p_in=1.0, p_out=1.0, **kw) -> dict:
    return dict(quote_id=quote_id, provider="acme", model=model, usd_per_m_input_tokens=p_in,
                usd_per_m_output_tokens=p_out, **kw)


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


@pytest.mark.parametrize("margin, verdict", [
    (-0.5, "below-floor"), (-1e-9, "below-floor"), (0.0, "thin"), (0.1999, "thin"), (0.2, "plausible"),
    (0.8, "plausible"), (0.8001, "rich"), (0.999, "rich"), (None, "not-gpu-comparable"),
])
def test_verdict_thresholds(margin, verdict):
    out = pl.DataFrame({"m": [margin]}, schema={"m": pl.Float64}).select(verdict_expr(pl.col("m")))
    assert out.item() == verdict


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


def test_breakeven_utilization_kernel():
    # F / (G* - V): fixed 1.0 $/h at full use, power 0.2 $/h, break-even 2.2 $/h -> 0.5
    assert breakeven_utilization_frac(1.0, 0.2, 2.2) == pytest.approx(0.5, rel=1e-15)
    assert np.isinf(breakeven_utilization_frac(1.0, 0.3, 0.3))  # price does not cover power
    out = breakeven_utilization_frac(np.array([1.0, 2.0]), np.array([0.0, 0.0]), np.array([4.0, 1.0]))
    np.testing.assert_allclose(out, [0.25, 2.0])  # 2.0: no utilization <= 1 breaks even


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


def test_shipped_quotes_file_has_sources():
    raw = pl.read_csv(DEFAULT_DATA_DIR / "quotes.csv", infer_schema=False)
    assert raw.height == 116 and raw.columns == list(QUOTE_SCHEMA)
    assert raw["source"].is_not_null().all() and raw["as_of"].is_not_null().all()


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

def _one_error(catalog, raw, match):
    with pytest.raises(DataError, match=match):
        validate_quotes(raw, catalog, "quotes.csv")


def test_missing_column(catalog):
    _one_error(catalog, _raw([_q()]).drop("usd_per_m_output_tokens"),
               r"quotes\.csv: missing column\(s\) \['usd_per_m_output_tokens'\].*required")


def test_unknown_column(catalog):
    _one_error(catalog, _raw([_q()]).with_columns(pl.lit("x").alias("usd_per_m_outptu_tokens")),
               r"unknown column\(s\) \['usd_per_m_outptu_tokens'\] \(misspelled\?\)")


def test_optional_columns_may_be_absent(catalog):
    raw = _raw([_q(), _q("q2")]).select("provider", "model", "usd_per_m_input_tokens", "usd_per_m_output_tokens")
    q = validate_quotes(raw, catalog)
    assert q["quote_id"].to_list() == ["quote-1", "quote-2"]


def test_non_numeric_and_negative_prices_listed_together(catalog):
    raw = _raw([_q("q1"), _q("q2"), _q("q3")]).with_columns(
        pl.Series("usd_per_m_input_tokens", ["abc", "-0.5", "0.1"]), pl.Series("usd_per_m_output_tokens", ["1", "1", "0"]))
    with pytest.raises(DataError) as exc:
        validate_quotes(raw, catalog, "quotes.csv")
    msg = str(exc.value)
    assert "3 problem(s)" in msg
    assert "row q1, column usd_per_m_input_tokens: 'abc' is not a number" in msg
    assert re.search(r"row q2, column usd_per_m_input_tokens: -0\.5 is outside \(0, 10000\]", msg)
    assert re.search(r"row q3, column usd_per_m_output_tokens: 0 is outside \(0, 10000\]", msg)


def test_unknown_model_lists_closest_ids_and_rows(catalog):
    raw = _raw([_q("q1", model="llama-3-70b"), _q("q2", model="llama-3-70b"), _q("q3", model="deepsek-v3")])
    with pytest.raises(DataError) as exc:
        validate_quotes(raw, catalog, "quotes.csv")
    msg = str(exc.value)
    assert re.search(r"row\(s\) q1, q2, column model: unknown model id 'llama-3-70b'; closest: .*llama-3\.1-70b", msg)
    assert re.search(r"row\(s\) q3, column model: unknown model id 'deepsek-v3'; closest: deepseek-v3", msg)


def test_unknown_model_and_bad_price_in_one_error(catalog):
    raw = _raw([_q("q1", model="nope-model"), _q("q2", p_in=-1.0)])
    with pytest.raises(DataError, match=r"(?s)q2, column usd_per_m_input_tokens.*q1, column model: unknown model id"):
        validate_quotes(raw, catalog, "quotes.csv")


def test_too_many_rows(catalog):
    raw = pl.concat([_raw([_q()])] * (MAX_QUOTE_ROWS + 1))
    _one_error(catalog, raw, r"quotes\.csv: 10,001 rows; at most 10,000 quotes per file")


def test_duplicate_quote_id_and_bad_quantization(catalog):
    raw = _raw([_q("q1"), _q("q1", quantization="q3_k_m")])
    with pytest.raises(DataError) as exc:
        validate_quotes(raw, catalog, "quotes.csv")
    assert "row q1, column quote_id: duplicate id" in str(exc.value)
    assert "column quantization: 'q3_k_m' is not one of" in str(exc.value)


def test_unreadable_and_missing_files(catalog, tmp_path):
    with pytest.raises(DataError, match="file not found"):
        read_quotes(tmp_path / "nope.csv", catalog)
    with pytest.raises(DataError, match=r"upload\.csv: missing column"):
        read_quotes(b"a,b\n1,2\n", catalog, name="upload.csv")


def test_xlsx_upload_round_trip(catalog):
    typed = pl.read_csv(DEFAULT_DATA_DIR / "quotes.csv").head(12)
    buf = io.BytesIO()
    typed.write_excel(buf)
    from_xlsx = read_quotes(buf.getvalue(), catalog, name="quotes.xlsx")
    from_csv = load_quotes(catalog).head(12)
    assert from_xlsx.equals(from_csv)


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
    assert not any(str(v).startswith(("=", "+", "-", "@")) for v in back.row(0) if v is not None)
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


def test_file_size_limit(catalog, tmp_path):
    from econ.quotes import MAX_QUOTE_FILE_BYTES
    with pytest.raises(DataError, match=r"big\.csv: 20\.0 MB; at most 20 MB"):
        read_quotes(b"x" * (MAX_QUOTE_FILE_BYTES + 1), catalog, name="big.csv")


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
