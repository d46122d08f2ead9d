"""Verdicts a user can act on (issue 18.1-18.3): bands, floors on plausible hardware, speeds decided by physics.

Known answers (issue 18): with the default settings no single accelerator holds more than half of the shipped quotes'
floors; a quote whose floor band straddles its price is "undetermined"; a quote 10x above its floor's high end is
"rich"; a quote below the power cost alone says so; a GPU provider's gpt-oss-120b quote at 600 tokens/s per user on
B200 is GPU-comparable (speculative decoding). Bad input: a price <= 0 and a speed above physics on the named GPU are
errors naming the field, the value and the valid range.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

from econ.analyses.bands import WIDE_BAND_RATIO, distinguish, profile_table
from econ.analyses.quotes import (EAGLE_ACCEPTANCE, EAGLE_ACCEPTANCE_LENGTH, EAGLE_DRAFT_TOKENS, alternatives_table,
                                  chain_acceptance, check_quotes, rentable_at_scale, single_quote,
                                  verdict_alternatives)
from econ.errors import InvalidInputError
from econ.tables.catalog import load_catalog
from econ.tables.quote_files import load_quotes


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def shipped(catalog):
    return check_quotes(load_quotes(catalog), catalog)


def _one(catalog, **kw):
    base = dict(model="llama-3.3-70b", usd_per_m_input_tokens=1.0, usd_per_m_output_tokens=1.0)
    return check_quotes(single_quote(catalog, **{**base, **kw}), catalog).summary.row(0, named=True)


# ------------------------------------------------------------------------------------------ floors

def test_no_accelerator_holds_more_than_half_of_the_shipped_floors(shipped):
    """Issue 18: 96 of 116 floors sat on MI355X, whose CDNA 4 profile is a fallback predicting 3-10x its own
    measurements. Floors now come from calibrated profiles on hardware rentable at scale, by expected cost."""
    s = shipped.summary
    counts = s.drop_nulls("floor_hardware").group_by("floor_hardware").len()
    assert counts["len"].max() <= s.height / 2, counts.sort("len", descending=True).to_dicts()
    assert "mi355x" not in set(counts["floor_hardware"])  # not rentable at scale (one or two sellers)
    gpu = s.filter(pl.col("floor_hardware").is_not_null())
    # an uncalibrated floor only where no accelerator in scope meets the speed on a calibrated profile
    uncal = gpu.filter(~pl.col("floor_calibrated") & pl.col("floor_speedup_needed").is_null())["quote_id"]
    per = shipped.per_hardware.filter(pl.col("quote_id").is_in(uncal.implode()) & pl.col("in_scope")
                                      & pl.col("meets_floor") & pl.col("speedup_needed").is_null())
    assert not per["calibrated"].fill_null(False).any(), per.filter("calibrated").select("quote_id", "hardware").to_dicts()
    assert (gpu["floor_assumes"].str.contains(r"tokens/s per user \((published|assumed)\), [a-z0-9-]+ tier$")).all()


def test_floor_scope_is_what_a_provider_can_rent_then(catalog, shipped):
    rent = rentable_at_scale(catalog, pl.DataFrame({"quote_id": ["a", "b"], "as_of": ["2026-11", "2025-09"]}))
    now = set(rent.filter(pl.col("quote_id") == "a")["hardware"])
    assert {"h100-sxm", "h200-sxm", "b200", "mi300x"} <= now
    assert not now & {"mi355x", "gb300-nvl72", "tpu-v6e", "trainium2"}  # one or two sellers, not at scale
    assert (rent["sellers"] >= 3).all()
    # a quote without hardware: its floor is on one of them, unless none reaches its speed (said in the reason)
    s = shipped.summary.filter(pl.col("hardware").is_null() & pl.col("floor_hardware").is_not_null())
    assert s["floor_scope"].str.contains("rentable at scale then").all()


def test_eagle_acceptance_reproduces_the_sourced_acceptance_length():
    a = EAGLE_ACCEPTANCE
    assert sum(a ** k for k in range(EAGLE_DRAFT_TOKENS + 1)) == pytest.approx(EAGLE_ACCEPTANCE_LENGTH, rel=1e-9)
    assert 0.66 < a < 0.67 and chain_acceptance(1.0, 3) == 0.0
    with pytest.raises(InvalidInputError, match=r"acceptance_length=5 is outside \[1, 4\)"):
        chain_acceptance(5.0, 3)


# ------------------------------------------------------------------------------------------ known answers

def test_gpt_oss_120b_at_600_on_b200_is_gpu_comparable(catalog):
    """Speculative decoding and the calibration band's fast end: GPU providers publish 500-650 tokens/s on
    gpt-oss-120b; the physics ceiling econ builds on B200 is above 600."""
    r = _one(catalog, model="gpt-oss-120b", usd_per_m_input_tokens=0.15, usd_per_m_output_tokens=0.6,
             output_tokens_per_s_per_user=600.0, hardware="b200")
    assert r["verdict"] != "not-gpu-comparable" and r["floor_hardware"] == "b200"
    assert r["floor_spec_method"] == "eagle" and r["floor_usd_per_m_blended_tokens"] is not None
    assert "not-gpu-comparable" not in r["reason"] and "speculative decoding" in r["floor_assumes"]


def test_straddling_band_is_undetermined_and_ten_times_the_high_end_is_rich(catalog):
    probe = _one(catalog)
    lo, hi = probe["floor_usd_per_m_blended_tokens_low"], probe["floor_usd_per_m_blended_tokens_high"]
    assert lo < probe["floor_usd_per_m_blended_tokens"] < hi
    mid = (lo * hi) ** 0.5
    inside = _one(catalog, usd_per_m_input_tokens=mid, usd_per_m_output_tokens=mid)
    assert inside["verdict"] == "undetermined" and inside["band_straddles_price"]
    assert inside["reason"].startswith(f"undetermined: the blended price ${mid:.3g}/M lies inside the floor's "
                                       f"calibration band")
    rich = _one(catalog, usd_per_m_input_tokens=10 * hi, usd_per_m_output_tokens=10 * hi)
    assert rich["verdict"] == "rich" and rich["margin_blended_frac_low"] == pytest.approx(0.9, rel=1e-9)
    below = _one(catalog, usd_per_m_input_tokens=0.5 * lo, usd_per_m_output_tokens=0.5 * lo)
    assert below["verdict"] == "below-floor"


def test_a_quote_below_the_power_cost_alone_says_so(catalog):
    r = _one(catalog, usd_per_m_input_tokens=1e-4, usd_per_m_output_tokens=1e-4)
    assert r["verdict"] == "below-floor"
    assert r["margin_text"].startswith("price below the power cost alone")
    assert "The price is below the power cost alone" in r["reason"]
    assert r["floor_power_usd_per_m_blended_tokens"] > 1e-4
    assert "%" not in r["margin_text"] and "-" not in r["margin_text"].split("(")[0]  # bounded, in words
    far = _one(catalog, usd_per_m_input_tokens=0.01, usd_per_m_output_tokens=0.01)
    assert far["margin_text"].endswith("x below the floor") or far["margin_text"].startswith("price below the power")


def test_verdict_under_alternatives(catalog):
    q = single_quote(catalog, model="llama-3.3-70b", usd_per_m_input_tokens=0.9, usd_per_m_output_tokens=0.9)
    alt = verdict_alternatives(q, catalog)
    assert set(alt["speed_tokens_per_s_per_user"]) == {20.0, 25.0, 50.0, 100.0}
    assert {"hopper", "blackwell"} <= set(alt["generation"])
    own = alt.filter(pl.col("is_quote_speed"))
    assert (own["speed_tokens_per_s_per_user"] == 25.0).all()
    table = alternatives_table(alt)
    assert table.columns[0] == "generation" and "25 tokens/s*" in table.columns
    # a faster speed never makes a floor cheaper on the same generation
    hop = alt.filter(pl.col("generation") == "hopper").sort("speed_tokens_per_s_per_user")
    floors = hop["floor_usd_per_m_blended_tokens"].drop_nulls().to_list()
    assert floors == sorted(floors)


# ------------------------------------------------------------------------------------------ bands in rankings

def test_profiles_are_marked_and_overlapping_bands_are_not_distinguishable(catalog):
    """The rule, whatever the fit: calibrated = fitted on its own generation's and precision's measurements
    (calibration.csv fallback_from empty) with a band within WIDE_BAND_RATIO; a copy of another profile, of another
    precision of its own generation too, is a fallback; the note says which and how wide."""
    prof = profile_table(catalog)
    cal = catalog.calibration.select("profile", "fallback_from", "log_ratio_p10", "log_ratio_p90")
    j = prof.drop_nulls("profile").join(cal, on="profile", how="left", suffix="_csv")
    assert j.height > 20
    for r in j.iter_rows(named=True):
        ratio = math.exp(r["log_ratio_p90"] - r["log_ratio_p10"])
        assert r["band_ratio"] == pytest.approx(ratio, rel=1e-12)
        copied, wide = r["fallback_from_csv"] is not None, ratio > WIDE_BAND_RATIO
        want = {(True, True): "fallback, wide band", (True, False): "fallback", (False, True): "wide band",
                (False, False): "calibrated"}[(copied, wide)]
        assert r["profile_status"] == want and r["calibrated"] == (want == "calibrated"), r
        assert (r["profile_note"] == "") == (want == "calibrated")
        if copied:
            assert r["profile_note"].startswith("fallback profile (") and r["fallback_from_csv"] in r["profile_note"] \
                or r["fallback_from_csv"] == "global"
        if wide:
            assert f"band {round(ratio, 1)}x" in r["profile_note"]
    # CDNA 3 was measured at fp8 only: its bf16 profile is fp8's copy, a fallback (it must not outrank measured ones)
    by = {(r["hardware"], r["precision"]): r for r in prof.iter_rows(named=True)}
    assert by[("mi300x", "bf16")]["profile_status"].startswith("fallback")
    assert by[("a100-80gb-sxm", "bf16")]["profile_note"].startswith("fallback profile (")  # ampere: never measured
    ranked = pl.DataFrame({"hardware": ["a", "b", "c"], "lo": [1.0, 1.5, 3.0], "hi": [2.0, 2.5, 4.0]})
    out = distinguish(ranked, low="lo", high="hi")
    assert out["distinguishable"].to_list() == [None, False, True]
    assert out["rank_note"].to_list() == ["cheapest; not distinguishable from b (bands overlap)",
                                          "not distinguishable from a (bands overlap)",
                                          "dearer than a beyond the bands"]


# ------------------------------------------------------------------------------------------ bad input

@pytest.mark.parametrize("kw, pattern", [
    (dict(usd_per_m_input_tokens=0.0), r"usd_per_m_input_tokens=0 is outside \(0, 10000\] \(USD/M tokens\)"),
    (dict(usd_per_m_output_tokens=-1.0), r"usd_per_m_output_tokens=-1 is outside \(0, 10000\] \(USD/M tokens\)"),
])
def test_a_price_of_zero_or_below_is_refused(catalog, kw, pattern):
    with pytest.raises(InvalidInputError, match=pattern):
        single_quote(catalog, **{**dict(model="llama-3.3-70b", usd_per_m_input_tokens=1.0,
                                         usd_per_m_output_tokens=1.0), **kw})


def test_a_speed_above_physics_on_the_named_gpu_is_refused(catalog):
    q = single_quote(catalog, model="llama-3.3-70b", usd_per_m_input_tokens=1.0, usd_per_m_output_tokens=1.0,
                     output_tokens_per_s_per_user=5000.0, hardware="h100-sxm")
    with pytest.raises(InvalidInputError, match=r"output_tokens_per_s_per_user=5000 is outside \(0, \d+\] tokens/s per "
                                                r"user: the fastest deployment of llama-3.3-70b on its h100-sxm"):
        check_quotes(q, catalog)
    # without a GPU named, the same speed is a verdict (a wafer or an LPU may serve it), not an error
    r = _one(catalog, output_tokens_per_s_per_user=5000.0)
    assert r["verdict"] == "not-gpu-comparable" and r["ceiling_tokens_per_s_per_user"] < 5000


def test_quote_checker_form_shows_the_verdict_band_words_and_alternatives():
    """The page's one-price form: the verdict, the margin in words, what the floor assumed and the alternatives."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    page = Path(__file__).resolve().parents[2] / "dashboards" / "pages" / "quote_checker.py"
    at = AppTest.from_file(str(page), default_timeout=240)
    at.session_state["qc.section"] = "Check one price"  # the form's tab (the page runs only its open tab)
    at.run()
    assert not at.exception
    at.number_input(key="qc.s.in").set_value(0.0001)
    at.number_input(key="qc.s.out").set_value(0.0001)
    at.button[[b.label for b in at.button].index("Check this price")].click().run()
    assert not at.exception
    values = {m.label: m.value for m in at.metric}
    assert values["Verdict"] == "Below floor" and values["Gross margin"].startswith("price below the power cost alone")
    frames = [d.value for d in at.dataframe]
    alt = next(f for f in frames if "generation" in f.columns and any(str(c).endswith("*") for c in f.columns))
    assert {"hopper", "blackwell"} <= set(alt["generation"]) and alt.shape[1] == 5  # 20, 25*, 50, 100 tokens/s


def test_profile_table_kept_per_catalog_equals_a_fresh_one(catalog):
    """Issue 19.5: profile_table is kept per catalog object; the kept frame equals a fresh computation, and another
    catalog object (another calibration) gets its own, never the first one's."""
    from dataclasses import replace

    from polars.testing import assert_frame_equal

    from econ.analyses import bands

    first = profile_table(catalog)
    assert profile_table(catalog) is first
    assert_frame_equal(first, bands._profile_table(catalog), check_exact=True)
    cal = catalog.calibration
    wide = cal.with_columns(pl.col("log_ratio_p90") + 5.0)  # every band beyond WIDE_BAND_RATIO
    other = replace(catalog, calibration=wide)
    got = profile_table(other)
    assert_frame_equal(got, bands._profile_table(other), check_exact=True)
    assert not got["calibrated"].any() and first["calibrated"].any()
    assert len(bands._PROFILE_TABLES) <= bands.PROFILE_TABLE_ENTRIES
