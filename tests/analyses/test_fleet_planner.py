"""Fleet and build-out planner (issues 13, 16): the seeds' cluster chapters through econ.analyses.cluster and the
CLI (`econ fleet`, `econ cluster`), forward and inverse, plus bad input. The kernels' own known answers are in
tests/physics/test_fleet.py and tests/economics/test_buildout.py.

Known answers and their sources (tolerances: exact products at rel=1e-9; figures the seeds print rounded to
their last digit at half a unit of it):
- 10,000 H100 at 700 W TDP, PUE 1.40: 7.0 MW IT, 9.8 MW facility (seed 001 Table 9 and text).
- 32,768 GPUs at 1 PFLOP/s and 1.4 kW, seed 000 MFU: 32.77 EF peak, 32.0%, 10.49 EF, 45.9 MW (seed 000).
- 1,024 GPUs, seed 001 chain: 0.50 x 0.50 x 0.77 = 19.25% of peak ("roughly 19.2 percent", seed 001).
- MTBF 8,192 GPUs 366.2 min, 100,000 GPUs 30 min at 50,000 h per GPU; 175B -> 2,450 GB (seed 001 Tables 6, 7).
- NVLink 4 / InfiniBand NDR = 450 / 50 GB/s = 9x (seed 001; data/accelerators.csv h100-sxm).
- 7B data-parallel all-reduce over 256 GPUs on IB NDR: 560.4 ms (seed 001 Table 11).
- 100k H100 at $45k all-in = $4.5B before the building; seed 004's ~$5B lies between IT-only and IT + a full
  new build (seed 004).
- DeepSeek-V3: 2.788M H800 GPU-hours x $2 = $5.576M (DeepSeek-V3 technical report, arXiv:2412.19437, Table 1).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from econ.analyses import cluster as cl
from econ.assumptions import Economics
from econ.economics import buildout as bo
from econ.errors import InvalidInputError
from econ.physics.communication import ring_allreduce_time_s, tree_allreduce_time_s
from econ.tables.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def cli(capsys, *argv):
    from econ.cli import main
    code = main(list(argv))
    out = capsys.readouterr()
    data = json.loads(out.out) if code == 0 and "json" in argv else out.out
    return code, data, out.err


# ------------------------------------------------------------------------------------------------
# 1. Power basis
# ------------------------------------------------------------------------------------------------

def test_power_10k_h100_tdp_basis_seed001(catalog):
    hw = catalog.accelerator("h100-sxm")
    t = cl.power_table(10_000, pue=1.40, gpus_per_rack=32, tdp_w=hw["tdp_w"], all_in_w=hw["all_in_power_w"])
    tdp, allin = t.rows(named=True)
    assert (tdp["power_basis"], tdp["it_power_mw"], tdp["facility_power_mw"]) == ("tdp", pytest.approx(7.0),
                                                                                  pytest.approx(9.8))
    # all-in: 1.5 kW critical IT per H100 (SemiAnalysis: ~150 MW for 100k H100) -> 15 MW IT, 21 MW facility
    assert allin["it_power_mw"] == pytest.approx(15.0) and allin["facility_power_mw"] == pytest.approx(21.0)
    # racks of 32 H100: 22.4 kW on TDP (air-coolable), 48 kW all-in (above ~30 kW: liquid)
    assert (tdp["rack_power_kw"], tdp["rack_cooling"]) == (pytest.approx(22.4), "air")
    assert (allin["rack_power_kw"], allin["rack_cooling"]) == (pytest.approx(48.0), "liquid")
    assert tdp["air_cooling_limit_kw"] == 30.0 and tdp["ai_rack_kw"] == 70.0


def test_cli_power_10k_h100(capsys):
    code, data, _ = cli(capsys, "fleet", "power", "--hardware", "h100-sxm", "--gpus", "10000", "--pue", "1.4",
                        "--format", "json")
    assert code == 0
    tdp = next(r for r in data if r["power_basis"] == "tdp")
    assert tdp["it_power_mw"] == pytest.approx(7.0) and tdp["facility_power_mw"] == pytest.approx(9.8)


def test_cli_cluster_power_basis_flag(capsys):
    code, data, _ = cli(capsys, "cluster", "--hardware", "h100-sxm", "--gpus", "10000", "--power-basis", "tdp",
                        "--pue", "1.4", "--format", "json")
    assert code == 0 and data["power_basis"] == "tdp"
    assert data["it_power_mw"] == pytest.approx(7.0) and data["facility_power_mw"] == pytest.approx(9.8)
    code, data, _ = cli(capsys, "cluster", "--hardware", "h100-sxm", "--gpus", "10000", "--power-basis", "700",
                        "--pue", "1.4", "--format", "json")
    assert code == 0 and data["power_basis"] == "typed" and data["facility_power_mw"] == pytest.approx(9.8)


# ------------------------------------------------------------------------------------------------
# 2. Efficiency at scale
# ------------------------------------------------------------------------------------------------

def test_seed000_32768_gpus():
    row = cl.scale_table(32768, flop_per_s_per_gpu=1e15, power_w_per_gpu=1400.0, pue=1.0,
                         efficiency_model="seed000").row(0, named=True)
    assert row["peak_flop_per_s"] / 1e18 == pytest.approx(32.77, abs=0.005)
    assert row["mfu_frac"] == pytest.approx(0.32, abs=1e-12)
    assert row["realized_flop_per_s"] / 1e18 == pytest.approx(10.49, abs=0.005)
    assert row["facility_power_mw"] == pytest.approx(45.9, abs=0.05)
    assert row["goodput_frac"] == 1.0 and row["scaling_efficiency_frac"] == 1.0   # seed 000 applies no goodput
    assert row["chain"] == "MFU 32.0% x scaling 100.0% x goodput 100.0% = 32.00% of peak"


def test_cli_seed000_table(capsys):
    code, data, _ = cli(capsys, "fleet", "scale", "--gpus", "1,8,512,8192,32768", "--peak-tflops", "1000",
                        "--power-w", "1400", "--efficiency", "seed000", "--pue", "1", "--format", "json")
    assert code == 0
    assert [r["mfu_frac"] for r in data] == pytest.approx([0.62, 0.56, 0.44, 0.36, 0.32], abs=1e-12)
    last = data[-1]
    assert last["realized_flop_per_s"] / 1e18 == pytest.approx(10.49, abs=0.005)
    assert last["facility_power_mw"] == pytest.approx(45.9, abs=0.05)


def test_cli_seed001_1024_h100(capsys):
    code, data, _ = cli(capsys, "fleet", "scale", "--hardware", "h100-sxm", "--gpus", "1024", "--efficiency",
                        "seed001", "--format", "json")
    assert code == 0
    assert data["realized_frac_of_peak"] == pytest.approx(0.1925, rel=1e-12)
    assert data["realized_flop_per_s"] / 1e12 == pytest.approx(194_951.7, abs=0.05)   # seed 001 SP 1.4


def test_cluster_plan_models_differ_and_show_chain(catalog):
    s0 = cl.cluster_plan(catalog, hardware="h100-sxm", num_gpus=32768, efficiency_model="seed000").row(0, named=True)
    s1 = cl.cluster_plan(catalog, hardware="h100-sxm", num_gpus=1024).row(0, named=True)
    assert s0["goodput_frac"] == 1.0 and s0["realized_frac_of_peak"] == pytest.approx(0.32)
    assert s1["efficiency_model"] == "seed001" and s1["realized_frac_of_peak"] == pytest.approx(0.1925)
    assert "19.25% of peak" in s1["efficiency_chain"]


# ------------------------------------------------------------------------------------------------
# 3. Fleet calculators
# ------------------------------------------------------------------------------------------------

def _numbers(g, **kw) -> dict:
    f = cl.fleet_numbers(g, **kw)
    return dict(zip(f["quantity"], f["value"]))


def test_fleet_numbers_seed001():
    n = _numbers(8192)
    assert n["Cluster MTBF"] / 60 == pytest.approx(366.2, abs=0.05)
    assert n["P(at least one failure in 24 h)"] == pytest.approx(0.9804, abs=0.00005)
    assert n["Checkpoint size"] == pytest.approx(2450e9, rel=1e-12)
    assert n["Checkpoint write"] == pytest.approx(24.5, rel=1e-12)
    assert n["Scale-up / scale-out bandwidth"] == pytest.approx(9.0)
    assert n["Amdahl limit"] == pytest.approx(10.0) and n["Amdahl speedup"] == pytest.approx(10.0, abs=0.05)
    assert n["Goodput, seed 001 budget"] == pytest.approx(0.77)
    assert _numbers(100_000)["Cluster MTBF"] / 60 == pytest.approx(30.0, rel=1e-12)
    # Little: 100 req/s x 20 s = 2,000 in flight; / 64 per replica -> 32 replicas
    assert n["Requests in flight (Little)"] == 2000 and n["Serving replicas"] == 32


def test_allreduce_seed001_table11():
    n = _numbers(256)
    assert n["Ring all-reduce, scale-out"] * 1e3 == pytest.approx(560.4, abs=0.05)   # 7B BF16 grads, IB NDR
    assert n["Communication / computation (ring, scale-out)"] == pytest.approx(0.11, abs=0.005)
    # NVLink is 9x the bandwidth: the bandwidth term is 9x smaller (the one collective model, econ.physics.communication)
    assert ring_allreduce_time_s(14e9, 256, 450e9, 0.0) * 9 == pytest.approx(
        ring_allreduce_time_s(14e9, 256, 50e9, 0.0), rel=1e-12)
    # tree: same bandwidth term in the limit, ceil(log2 N) latency hops instead of N: a binary tree of 1,000 GPUs
    # is 10 levels deep like one of 1,024 (log2 1000 = 9.97 is not a number of hops)
    assert tree_allreduce_time_s(0.0, 1024, 50e9, 5e-6) == pytest.approx(2 * 10 * 5e-6)
    assert tree_allreduce_time_s(0.0, 1000, 50e9, 5e-6) == pytest.approx(2 * 10 * 5e-6)
    assert ring_allreduce_time_s(0.0, 1024, 50e9, 5e-6) == pytest.approx(2 * 1023 * 5e-6)
    assert n["Tree all-reduce, scale-out"] == pytest.approx(tree_allreduce_time_s(14e9, 256, 50e9, 5e-6), rel=1e-12)


def test_nvlink_vs_infiniband_from_catalog(catalog, capsys):
    hw = catalog.accelerator("h100-sxm")
    assert hw["scale_up_bandwidth_gb_per_s"] / hw["scale_out_bandwidth_gb_per_s"] == pytest.approx(9.0)
    code, data, _ = cli(capsys, "fleet", "calc", "--hardware", "h100-sxm", "--gpus", "8192", "--format", "json")
    assert code == 0
    rows = {r["quantity"]: r["value"] for r in data}
    assert rows["Scale-up / scale-out bandwidth"] == pytest.approx(9.0)
    assert rows["Cluster MTBF"] / 60 == pytest.approx(366.2, abs=0.05)
    assert rows["Checkpoint size"] == pytest.approx(2.45e12)


def test_cli_calc_table_is_si(capsys):
    code, text, _ = cli(capsys, "fleet", "calc", "--gpus", "8192")
    assert code == 0
    assert "366.2 min" in text and "2.45 TB" in text and "98.0%" in text and "9.00x" in text


# ------------------------------------------------------------------------------------------------
# 4. Build-out capex
# ------------------------------------------------------------------------------------------------

def test_cli_capex_seed004(capsys):
    code, data, _ = cli(capsys, "fleet", "capex", "--hardware", "h100-sxm", "--gpus", "100000", "--all-in-usd",
                        "45000", "--build-usd-per-mw", "0", "--format", "json")
    assert code == 0 and data["capex_total_usd"] == pytest.approx(4.5e9)
    code, text, _ = cli(capsys, "fleet", "capex", "--hardware", "h100-sxm", "--gpus", "100000", "--all-in-usd",
                        "45000", "--build-usd-per-mw", "0")
    assert "$4.5B" in text and "4500000000" not in text.replace(",", "")


# ------------------------------------------------------------------------------------------------
# 5. Inverse sizing
# ------------------------------------------------------------------------------------------------

def test_size_from_power_budget(catalog):
    e = Economics(pue=1.4)
    row = cl.cluster_plan(catalog, hardware="h100-sxm", power_w=9.8e6, economics=e, power_basis="tdp").row(
        0, named=True)
    assert row["num_gpus"] == 10_000 and row["it_power_mw"] == pytest.approx(7.0)
    it = cl.cluster_plan(catalog, hardware="h100-sxm", power_w=7e6, power_of="it", economics=e,
                         power_basis="tdp").row(0, named=True)
    assert it["num_gpus"] == 10_000 and it["facility_power_mw"] == pytest.approx(9.8)


def test_size_from_capex_budget_is_the_largest_that_fits(catalog):
    p = bo.buildout_prices(catalog, "h100-sxm", basis="itemized")
    row = cl.cluster_plan(catalog, hardware="h100-sxm", capex_usd=5e9, it_prices=p).row(0, named=True)
    g = row["num_gpus"]
    assert row["capex_total_usd"] <= 5e9 and row["it_capex_basis"] == "itemized"
    nxt = bo.buildout_capex(g + 1, p, it_power_w_per_gpu=1500.0,
                            build_usd_per_mw_it=Economics().build_usd_per_mw_it)["capex_total_usd"][0]
    assert nxt > 5e9
    # seed 004 basis: $45k all-in and no building -> 111,111 GPUs for $5B
    p45 = bo.buildout_prices(catalog, "h100-sxm", all_in_it_usd_per_gpu=45_000.0)
    row = cl.cluster_plan(catalog, hardware="h100-sxm", capex_usd=5e9, it_prices=p45,
                          economics=Economics(build_usd_per_mw_it=0.0)).row(0, named=True)
    assert row["num_gpus"] == 111_111


def test_size_serving_goes_through_serving_rate(catalog, monkeypatch):
    calls = []

    def fake(catalog, model, hardware, **kw):
        calls.append((model, hardware))
        return {"meets_slo": True, "precision": "fp8", "gpus_per_replica": 4, "batch_size": 64,
                "tokens_per_s_per_user": 30.0, "output_tokens_per_s_per_gpu": 1000.0, "status": ""}

    monkeypatch.setattr(cl, "serving_rate", fake)
    row = cl.cluster_plan(catalog, hardware="h100-sxm", power_w=1.2e6, model="llama-3.3-70b",
                          economics=Economics(pue=1.2, utilization_frac=0.5),
                          price_usd_per_m_output_tokens=1.0, price_usd_per_m_input_tokens=0.0).row(0, named=True)
    assert calls == [("llama-3.3-70b", "h100-sxm")]  # input tokens priced at 0: the output-only revenue below
    # 1 MW IT / 1.5 kW = 666 GPUs -> 166 replicas of 4 -> 664 GPUs x 1,000 tok/s x 0.5 x 86,400 s
    assert row["num_gpus"] == 666 and row["serving_replicas"] == 166
    assert row["serving_tokens_per_day"] == pytest.approx(664 * 1000 * 0.5 * 86400)
    assert row["revenue_per_year_usd"] == pytest.approx(664 * 1000 * 0.5 * 86400 * 365 / 1e6)
    margin = row["revenue_per_year_usd"] - row["opex_per_year_usd"]
    assert row["payback_years"] == pytest.approx(row["capex_total_usd"] / margin)


# ------------------------------------------------------------------------------------------------
# 6. Training runs
# ------------------------------------------------------------------------------------------------

def test_deepseek_v3_gpu_hours_cost(capsys):
    assert bo.gpu_hours_cost_usd(2.788e6, 2.0) == pytest.approx(5.576e6, rel=1e-12)
    code, data, _ = cli(capsys, "fleet", "train", "--gpu-hours", "2.788e6", "--usd-per-gpu-hour", "2",
                        "--format", "json")
    assert code == 0 and data["training_cost_usd"] == pytest.approx(5.576e6, rel=1e-12)


def test_deepseek_v3_implied_mfu(catalog, capsys):
    # pre-training 2.664M H800 GPU-hours for 14.8T tokens at ~37B active params: ~34% of the BF16 dense peak
    code, data, _ = cli(capsys, "fleet", "train", "--gpu-hours", "2.664e6", "--model", "deepseek-v3", "--tokens",
                        "14.8e12", "--hardware", "h800-sxm", "--format", "json")
    assert code == 0
    m = catalog.model("deepseek-v3")
    expected = 6 * m["active_matmul_params"] * 14.8e12 / (2.664e6 * 3600 * 989e12)
    assert data["implied_mfu_frac"] == pytest.approx(expected, rel=1e-12)
    assert 0.30 < data["implied_mfu_frac"] < 0.40


def test_training_run_arithmetic():
    f = cl.training_run(1024, training_flop=3.15e23, flop_per_s_per_gpu=989e12, usd_per_gpu_hour=2.0,
                        params_for_checkpoint=175e9).row(0, named=True)
    seconds = 3.15e23 / 194_951.68e12
    assert f["training_days"] == pytest.approx(seconds / 86400, rel=1e-9)             # 18.7 days (GPT-3 scale)
    assert f["gpu_hours"] == pytest.approx(seconds / 3600 * 1024, rel=1e-9)
    assert f["training_cost_usd"] == pytest.approx(f["gpu_hours"] * 2.0, rel=1e-12)
    assert f["expected_failures"] == pytest.approx(seconds / (50_000 / 1024 * 3600), rel=1e-9)
    assert f["checkpoint_bytes"] == pytest.approx(2450e9)


def test_training_run_derived_goodput_has_failures_and_checkpoints():
    kw = dict(training_flop=3.15e23, flop_per_s_per_gpu=989e12, usd_per_gpu_hour=2.0, params_for_checkpoint=175e9)
    budget = cl.training_run(8192, **kw).row(0, named=True)
    derived = cl.training_run(8192, goodput="derived", **kw).row(0, named=True)
    assert derived["goodput_frac"] == pytest.approx(0.90 - derived["checkpoint_failure_overhead_frac"])
    assert derived["training_days"] * derived["goodput_frac"] == pytest.approx(
        budget["training_days"] * budget["goodput_frac"], rel=1e-12)
    # more failures (lower MTBF) -> more waste -> longer
    worse = cl.training_run(8192, goodput="derived", mtbf_h_per_gpu=5000.0, **kw).row(0, named=True)
    assert worse["training_days"] > derived["training_days"]


def test_cli_train_run(capsys):
    code, data, _ = cli(capsys, "fleet", "train", "--hardware", "h100-sxm", "--gpus", "1024", "--params", "175e9",
                        "--tokens", "300e9", "--format", "json")
    assert code == 0 and data["training_days"] == pytest.approx(3.15e23 / 194_951.68e12 / 86400, rel=1e-9)


# ------------------------------------------------------------------------------------------------
# Bad input: named, with the range, never a traceback
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "message"), [
    (("fleet", "power", "--hardware", "h100-sxm", "--gpus", "0"), "--gpus=0 is outside [1, 100000000]"),
    (("fleet", "power", "--hardware", "h100-sxm", "--gpus", "-5"), "--gpus=-5 is outside"),
    (("fleet", "power", "--hardware", "h100-sxm", "--gpus", "100", "--pue", "0.9"), "--pue=0.9 is outside [1, 3]"),
    (("fleet", "power", "--hardware", "h100-sxm", "--gpus", "100", "--pue", "5.5"), "--pue=5.5 is outside [1, 3]"),
    (("fleet", "power", "--hardware", "h100-sxm", "--gpus", "100", "--pue", "nan"), "--pue=nan is outside"),
    (("fleet", "power", "--gpus", "100", "--power-w", "0"), "--power-w=0 is outside (0, 100000] W"),
    (("fleet", "power", "--gpus", "100", "--power-w", "inf"), "--power-w=inf is outside"),
    (("fleet", "scale", "--gpus", "8", "--peak-tflops", "-1", "--power-w", "700"), "--peak-tflops=-1 is outside"),
    (("fleet", "scale", "--gpus", "8", "--hardware", "h100-sxm", "--mfu", "1.5"), "--mfu=1.5 is outside [0.01, 1]"),
    (("fleet", "calc", "--gpus", "8192", "--mtbf-h", "0"), "--mtbf-h=0 is outside [1, 10000000] (h)"),
    (("fleet", "calc", "--gpus", "8192", "--mtbf-h", "-3"), "--mtbf-h=-3 is outside"),
    (("fleet", "size", "--hardware", "h100-sxm", "--power-mw", "0"), "--power-mw=0 is outside (0, 1e+06] MW"),
    (("fleet", "size", "--hardware", "h100-sxm", "--capex-usd=-1e9"), "--capex-usd=-1000000000 is outside"),
    (("fleet", "size", "--hardware", "h100-sxm", "--capex-usd", "inf"), "--capex-usd=inf is outside"),
    (("fleet", "size", "--hardware", "h100-sxm", "--capex-usd", "1000"), "does not buy one h100-sxm"),
    (("fleet", "size", "--hardware", "h100-sxm", "--power-mw", "10", "--pue", "6"), "--pue=6 is outside [1, 3]"),
    (("cluster", "--hardware", "h100-sxm", "--gpus", "8", "--pue", "6"), "--pue=6 is outside [1, 3]"),
    (("fleet", "scale", "--gpus", "8", "--hardware", "h100-sxm", "--pue", "6"), "--pue=6 is outside [1, 3]"),
    (("fleet", "size", "--hardware", "h100-sxm", "--power-mw", "10", "--server-usd", "5000"),
     "--server-usd prices an itemized build-out: add --it-capex itemized"),
    (("fleet", "capex", "--hardware", "h100-sxm", "--gpus", "8", "--facility", "nope"), "unknown facility id 'nope'"),
    (("fleet", "train", "--gpu-hours", "-1"), "--gpu-hours=-1 is outside"),
    (("fleet", "train", "--hardware", "h100-sxm", "--gpus", "8"), "give --model or --params"),
    (("fleet", "train", "--hardware", "h100-sxm", "--gpus", "8", "--params", "7e9", "--goodput", "2"),
     "--goodput=2 is outside (0, 1]"),
    (("fleet", "capex", "--hardware", "nope", "--gpus", "8"), "unknown hardware id 'nope'"),
    (("cluster", "--hardware", "h100-sxm", "--power-basis", "bogus"), "power_basis='bogus' is not one of"),
    (("cluster", "--hardware", "h100-sxm", "--power-basis", "-700"), "power_w_per_gpu=-700 is outside (0, 100000]"),
])
def test_cli_bad_input_is_named(capsys, argv, message):
    code, _, err = cli(capsys, *argv)
    assert code == 2 and message in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(("call", "match"), [
    (lambda c: cl.power_table(0, pue=1.4, gpus_per_rack=8, tdp_w=700), r"num_gpus=0 is outside \[1, 1000000000\]"),
    (lambda c: cl.power_table(10, pue=0.5, gpus_per_rack=8, tdp_w=700), r"pue=0.5 is outside \[1, 3\]"),
    (lambda c: cl.power_table(10, pue=1.2, gpus_per_rack=8, tdp_w=float("nan")), r"is not a finite number"),
    (lambda c: cl.gpus_for_budget(c, hardware="h100-sxm"), r"give exactly one budget"),
    (lambda c: cl.gpus_for_budget(c, hardware="h100-sxm", power_w=-1.0), r"power_budget_w=-1 is outside"),
    (lambda c: cl.training_run(8, training_flop=0.0, flop_per_s_per_gpu=1e15, usd_per_gpu_hour=2.0),
     r"training_flop=0 is outside \(0"),
    (lambda c: cl.training_run(8, training_flop=1e20, flop_per_s_per_gpu=1e15, usd_per_gpu_hour=2.0,
                               goodput="derived"), r"needs params_for_checkpoint"),
    (lambda c: cl.fleet_numbers(1), r"num_gpus=1 is outside \[2"),
    (lambda c: cl.fleet_numbers(8, mtbf_h_per_gpu=0.0), r"mtbf_h_per_gpu=0 is outside \(0, inf\]"),
    (lambda c: cl.cluster_plan(c, hardware="h100-sxm", num_gpus=8, efficiency_model="x"),
     r"efficiency_model='x' is not one of"),
])
def test_core_bad_input_is_named(catalog, call, match):
    with pytest.raises(InvalidInputError, match=match):
        call(catalog)


# ------------------------------------------------------------------------------------------------
# One PUE range: [1, 3] (econ.vocabulary), used at its top and refused above it by every fleet command
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ("fleet", "power", "--hardware", "h100-sxm", "--gpus", "1000"),
    ("fleet", "scale", "--hardware", "h100-sxm", "--gpus", "1000"),
    ("fleet", "size", "--hardware", "h100-sxm", "--power-mw", "10"),
    ("cluster", "--hardware", "h100-sxm", "--gpus", "1000"),
], ids=lambda a: " ".join(a[:2]))
def test_pue_3_is_used_and_4_refused_by_every_fleet_command(capsys, argv):
    code, data, err = cli(capsys, *argv, "--pue", "3", "--format", "json")
    assert code == 0, err
    rows = data if isinstance(data, list) else [data]
    for r in rows:
        assert r["facility_power_mw"] == pytest.approx(3 * r["it_power_mw"], rel=1e-9)
    code, _, err = cli(capsys, *argv, "--pue", "4", "--format", "json")
    assert code == 2 and "--pue=4 is outside [1, 3]" in err


# ------------------------------------------------------------------------------------------------
# README: the fleet section has runnable examples (tests/cli/test_readme.py checks every one against a real run)
# ------------------------------------------------------------------------------------------------

def test_readme_has_a_fleet_section_with_examples():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Fleet and build-out", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^\$ econ (fleet \w+)", section, flags=re.M)
    assert {"fleet power", "fleet scale", "fleet capex", "fleet size", "fleet train"} <= set(commands)
    for figure in ("7.00 MW", "9.80 MW", "32.8 EFLOP/s", "10.5 EFLOP/s", "45.9 MW", "19.2%", "$4.5B", "$5.58M"):
        assert figure in section, figure
