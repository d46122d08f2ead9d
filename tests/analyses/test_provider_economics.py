"""Provider P&L calculator (econ/analyses/provider_economics.py, `econ quotes pnl`) and econ's modeled floor for the traffic.

Known answers: DeepSeek's own day-6 disclosure (deepseek-ai/open-infra-index, "Day 6 - One More Thing:
DeepSeek-V3/R1 Inference System Overview", 2025-03-01; data/provider_disclosures.csv): $87,072 per day for
608B input (342B cache hits) + 168B output tokens -> $0.112 per million tokens; $562,027 theoretical revenue
(0.1%: the post rounds its token counts to 1B, and 0.14 x 342 + 0.55 x 266 + 2.19 x 168 = $562,100); 545%
cost-profit margin (1%). The modeled floor for the same traffic (H800, $2/GPU-hour, >= 20 tokens/s per user,
DeepSeek-V3 architecture, FP8) must give a gross margin between 70% and 90% (issue 10; DeepSeek's own is 84.5%)
and a verdict of plausible or rich. Accounting identities are exact (1e-12).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.tables.catalog import load_catalog
from econ.cli import main
from econ.errors import EconError, InvalidInputError
from econ.analyses.provider_economics import (DEEPSEEK_DAY6, PNL_FIELDS, gpu_hours_per_day, load_disclosure,
                                     modeled_floor_pnl, provider_pnl)


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def day6():
    return load_disclosure(DEEPSEEK_DAY6)


@pytest.fixture(scope="module")
def modeled(catalog, day6):
    return modeled_floor_pnl(catalog, model=day6.model, hardware=day6.hardware,
                             min_tokens_per_s_per_user=day6.output_tokens_per_s_per_user,
                             weight_format=day6.weight_format, **day6.traffic)


def test_disclosure_reads_deepseeks_figures(day6):
    assert (day6.model, day6.hardware, day6.weight_format) == ("deepseek-v3", "h800-sxm", "fp8")
    assert day6.inputs["gpu_hours_per_day"] == pytest.approx(226.75 * 8 * 24, rel=1e-12)  # 43,536
    assert day6.inputs["usd_per_gpu_hour"] == 2.0
    assert (day6.inputs["input_tokens_per_day"], day6.inputs["cached_input_tokens_per_day"],
            day6.inputs["output_tokens_per_day"]) == (608e9, 342e9, 168e9)
    assert (day6.inputs["usd_per_m_cached_input_tokens"], day6.inputs["usd_per_m_input_tokens"],
            day6.inputs["usd_per_m_output_tokens"]) == (0.14, 0.55, 2.19)
    assert day6.output_tokens_per_s_per_user == 20.0  # the lower bound of "20-22 tokens per second"
    assert day6.reported == {"cost_usd_per_day": 87072.0, "revenue_usd_per_day": 562027.0,
                             "cost_profit_margin_frac": 5.45}


def test_deepseek_day6_pnl_known_answers(day6):
    p = provider_pnl(**day6.inputs)
    assert float(p["cost_usd_per_day"]) == pytest.approx(87072.0, rel=1e-12)  # 43,536 GPU-hours x $2
    assert float(p["usd_per_m_tokens"]) == pytest.approx(0.112, abs=5e-4)  # 87,072 / 776,000
    assert float(p["usd_per_m_tokens"]) == pytest.approx(87072 / 776000, rel=1e-12)
    assert float(p["revenue_usd_per_day"]) == pytest.approx(562027.0, rel=1e-3)
    assert float(p["cost_profit_margin_frac"]) == pytest.approx(5.45, rel=1e-2)
    assert float(p["gross_margin_frac"]) == pytest.approx(0.845, abs=1e-3)  # data/README.md: 84.5% (derived)
    assert float(p["cache_hit_frac"]) == pytest.approx(0.563, abs=1e-3)


def test_deepseek_day6_modeled_floor_margin_is_70_to_90_percent(modeled):
    assert 0.70 <= modeled["gross_margin_frac"] <= 0.90
    assert modeled["verdict"] in ("plausible", "rich")
    assert modeled["floor_usd_per_gpu_hour"] == pytest.approx(2.0, rel=1e-12)  # custom $2 at 100% utilization
    assert modeled["floor_tokens_per_s_per_user"] >= 20.0
    assert modeled["floor_precision"] == "fp8" and modeled["floor_spec_method"] == "mtp"
    # revenue is the provider's: the same traffic at the same prices
    assert modeled["revenue_usd_per_day"] == pytest.approx(562100.0, rel=1e-12)
    # the floor's daily cost is the blended floor x the tokens served, and GPUs = GPU-hours / 24
    assert modeled["cost_usd_per_day"] == pytest.approx(modeled["usd_per_m_tokens"] * 776000, rel=1e-12)
    assert modeled["gpus"] == pytest.approx(modeled["gpu_hours_per_day"] / 24, rel=1e-12)
    if modeled["cost_usd_per_day_low"] is not None:  # the engine's calibration band, when it gives one
        assert modeled["cost_usd_per_day_low"] <= modeled["cost_usd_per_day"] <= modeled["cost_usd_per_day_high"]
        assert modeled["gross_margin_frac_low"] <= modeled["gross_margin_frac"] <= modeled["gross_margin_frac_high"]


def test_modeled_floor_equals_the_quote_checker(modeled):
    check = modeled["check"].summary.row(0, named=True)
    assert modeled["gross_margin_frac"] == pytest.approx(check["margin_blended_frac"], rel=1e-9)
    assert check["floor_hardware"] == "h800-sxm" and check["cost_basis"] == "custom"


def test_accounting_identities():
    p = provider_pnl(gpu_hours_per_day=100.0, usd_per_gpu_hour=3.0, input_tokens_per_day=4e9,
                     cached_input_tokens_per_day=1e9, output_tokens_per_day=1e9, usd_per_m_input_tokens=0.5,
                     usd_per_m_cached_input_tokens=0.1, usd_per_m_output_tokens=2.0)
    rev = 3e9 * 0.5 / 1e6 + 1e9 * 0.1 / 1e6 + 1e9 * 2.0 / 1e6  # 1500 + 100 + 2000
    assert float(p["revenue_usd_per_day"]) == pytest.approx(rev, rel=1e-12)
    assert float(p["cost_usd_per_day"]) == 300.0 and float(p["usd_per_m_tokens"]) == pytest.approx(300 / 5e3, rel=1e-12)
    assert float(p["gross_margin_frac"]) == pytest.approx((rev - 300) / rev, rel=1e-12)
    assert float(p["cost_profit_margin_frac"]) == pytest.approx((rev - 300) / 300, rel=1e-12)
    assert (float(p["input_output_mix"]), float(p["cache_hit_frac"])) == (4.0, 0.25)
    # no cached price: cache hits billed at the input price
    q = provider_pnl(gpu_hours_per_day=100.0, usd_per_gpu_hour=3.0, input_tokens_per_day=4e9,
                     cached_input_tokens_per_day=1e9, output_tokens_per_day=1e9, usd_per_m_input_tokens=0.5,
                     usd_per_m_output_tokens=2.0)
    assert float(q["revenue_usd_per_day"]) == pytest.approx(4e9 * 0.5 / 1e6 + 2000, rel=1e-12)
    assert float(gpu_hours_per_day(226.75 * 8)) == 43536.0


def test_vectorized_over_fleets():
    p = provider_pnl(gpu_hours_per_day=np.array([10.0, 20.0, 40.0]), usd_per_gpu_hour=2.0, input_tokens_per_day=1e9,
                     output_tokens_per_day=1e8, usd_per_m_input_tokens=0.3, usd_per_m_output_tokens=1.0)
    assert set(p) == set(PNL_FIELDS) and all(v.shape == (3,) for v in p.values())
    np.testing.assert_allclose(p["cost_usd_per_day"], [20.0, 40.0, 80.0])
    assert np.all(np.diff(p["gross_margin_frac"]) < 0)


@settings(max_examples=60, deadline=None)
@given(gh=st.floats(1.0, 1e6), rate=st.floats(0.1, 50.0), t_in=st.floats(1e6, 1e12), hit=st.floats(0.0, 1.0),
       t_out=st.floats(1e6, 1e12), p_in=st.floats(0.01, 50.0), f_c=st.floats(0.0, 1.0), p_out=st.floats(0.01, 50.0),
       k=st.floats(1.0, 10.0))
def test_raising_prices_raises_margin_and_more_gpus_lower_it(gh, rate, t_in, hit, t_out, p_in, f_c, p_out, k):
    kw = dict(gpu_hours_per_day=gh, usd_per_gpu_hour=rate, input_tokens_per_day=t_in,
              cached_input_tokens_per_day=hit * t_in, output_tokens_per_day=t_out, usd_per_m_input_tokens=p_in,
              usd_per_m_cached_input_tokens=f_c * p_in, usd_per_m_output_tokens=p_out)
    base = provider_pnl(**kw)
    dearer = provider_pnl(**{**kw, "usd_per_m_input_tokens": k * p_in, "usd_per_m_cached_input_tokens": k * f_c * p_in,
                             "usd_per_m_output_tokens": k * p_out})
    bigger = provider_pnl(**{**kw, "gpu_hours_per_day": k * gh})
    assert float(dearer["gross_margin_frac"]) >= float(base["gross_margin_frac"]) - 1e-12
    assert float(bigger["gross_margin_frac"]) <= float(base["gross_margin_frac"]) + 1e-12
    for v in base.values():
        assert np.all(np.isfinite(v))
    assert float(base["gross_margin_frac"]) < 1.0


@pytest.mark.parametrize("kw, match", [
    (dict(input_tokens_per_day=-1.0), r"input_tokens_per_day=-1 is outside \[0, 1e\+16\]"),
    (dict(usd_per_m_input_tokens=float("nan")), r"usd_per_m_input_tokens=nan is not a finite number"),
    (dict(usd_per_gpu_hour=0.0), r"usd_per_gpu_hour=0 is outside \(0, 10000\]"),
    (dict(cached_input_tokens_per_day=7e11), r"cached_input_tokens_per_day=7e\+11 exceeds input_tokens_per_day=6\.08e\+11"),
    (dict(usd_per_m_cached_input_tokens=0.6), r"usd_per_m_cached_input_tokens=0\.6 is above usd_per_m_input_tokens=0\.55"),
    (dict(input_tokens_per_day=0.0, cached_input_tokens_per_day=0.0, output_tokens_per_day=0.0),
     r"must be > 0 \(no traffic to price\)"),
])
def test_bad_input_names_field_and_value(day6, kw, match):
    with pytest.raises(InvalidInputError, match=match):
        provider_pnl(**{**day6.inputs, **kw})


def test_unknown_disclosure_lists_the_known_ones():
    with pytest.raises(EconError, match=r"disclosure='nope' is not one of \['deepseek-v3r1-day6'\]"):
        load_disclosure("nope")


def test_cli_pnl_side_by_side(capsys):
    assert main(["quotes", "pnl", "--disclosure", "deepseek-v3r1-day6"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^cost per day\s+\$87,072\s+\$[\d,]+$", out, re.M)
    assert re.search(r"^cost per M tokens \(input \+ output\)\s+\$0\.112\s+\$0\.\d{3}$", out, re.M)
    assert re.search(r"^revenue per day\s+\$562,100\s+\$562,100$", out, re.M)
    assert re.search(r"^cost-profit ratio\s+545\.6%\s+[\d.]+%$", out, re.M)
    assert "as disclosed: cost $87,072/day, revenue $562,027/day (theoretical), cost-profit margin 545%" in out
    assert main(["quotes", "pnl", "--disclosure", "deepseek-v3r1-day6", "--format", "json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert 0.70 <= rec["modeled_floor"]["gross_margin_frac"] <= 0.90
    # every figure from flags, no disclosure: a fleet of 10 H100 at $2.5 serving 2B in / 0.5B out a day
    assert main(["quotes", "pnl", "--gpus", "10", "--usd-per-gpu-hour", "2.5", "--input-tokens-per-day", "2e9",
                 "--cache-hit-rate", "0.5", "--output-tokens-per-day", "5e8", "--input-price", "0.6",
                 "--cached-input-price", "0.15", "--output-price", "0.8", "--model", "llama-3.3-70b",
                 "--hardware", "h100-sxm", "--format", "csv"]) == 0
    csv = capsys.readouterr().out
    assert "cost per day,cost_usd_per_day,600.0," in csv  # 10 x 24 x $2.5


@pytest.mark.parametrize("argv, match", [
    (["--disclosure", "deepseek-v3r1-day6", "--input-price", "-1"], r"--input-price=-1 is outside \[0, 10000\]"),
    (["--disclosure", "deepseek-v3r1-day6", "--output-price", "nan"], r"--output-price=nan is not a finite number"),
    (["--disclosure", "deepseek-v3r1-day6", "--cached-input-price", "0.9"],
     r"--cached-input-price=0\.9 is above usd_per_m_input_tokens=0\.55"),  # --input-price was not typed: not blamed
    (["--disclosure", "deepseek-v3r1-day6", "--speed", "0"], r"--speed=0 is outside \(0, 100000\]"),
    (["--disclosure", "deepseek-v3r1-day6", "--hardware", "h100"], r"--hardware='h100' is not a catalog accelerator"),
    (["--disclosure", "nope"], r"--disclosure='nope' is not one of"),
    (["--gpus", "8"], r"missing --usd-per-gpu-hour, --input-tokens-per-day"),
    (["--disclosure", "deepseek-v3r1-day6", "--cache-hit-rate", "1.5"], r"--cache-hit-rate=1\.5 is outside \[0, 1\]"),
])
def test_cli_pnl_errors_speak_flags(capsys, argv, match):
    assert main(["quotes", "pnl", *argv]) == 2
    assert re.search(match, capsys.readouterr().err)
