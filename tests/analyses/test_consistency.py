"""One engine, one answer: the same deployment gives identical numbers on every front end (issue 8).

Anchored on ``econ cost`` (the CLI): the configuration the quote checker, the cluster page and the
optimizer each report is re-evaluated through the CLI with explicit layout flags, and every shared
figure must agree to floating-point rounding. Before the engine merge the quote checker and the cluster
page priced tensor x pipeline layouts only (econ.analyses.sweep.evaluate) while the optimizer used another
orchestrator; DeepSeek-V3 came out with different capacities and costs on different pages.
"""

from __future__ import annotations

import json

import polars as pl
import pytest

from econ.tables.catalog import load_catalog
from econ.cli import main
from econ.analyses.cluster import cluster_plan, serving_rate
from econ.analyses.optimize import SearchSpace, search
from econ.analyses.quotes import check_quotes
from econ.tables.quote_files import validate_quotes

MODEL, HW, PRECISION = "deepseek-v3", "h200-sxm", "fp8"
REL = 1e-9


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def cli_row(capsys, *, tp, dp, ep, pp, num_gpus, batch, input_len=1024, output_len=1024, extra=()):
    code = main(["cost", "--model", MODEL, "--hardware", HW, "--precision", PRECISION, "--gpus", str(num_gpus),
                 "--tp", str(tp), "--dp", str(dp), "--ep", str(ep), "--pp", str(pp), "--batch", str(batch),
                 "--input-len", str(input_len), "--output-len", str(output_len), "--all-columns", "--format", "json",
                 *extra])
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads(out)
    return data[0] if isinstance(data, list) else data


def test_optimizer_point_equals_cli(catalog, capsys):
    res = search(catalog, model=MODEL, hardware=HW, input_len=1024, output_len=1024,
                 space=SearchSpace(num_gpus=8, tp=1, dp=8, ep=8, pp=1, precisions=(PRECISION,), modes=("aggregated",)))
    p = res.points.filter(pl.col("batch_size") == 512).row(0, named=True)
    c = cli_row(capsys, tp=1, dp=8, ep=8, pp=1, num_gpus=8, batch=512)
    assert c["layout"] == p["layout"] == "ADP8 EP8"
    for opt, cli in (("decode_tokens_per_s_per_user", "tokens_per_s_per_user"), ("tpot_s", "served_tpot_s"),
                     ("tokens_per_s_per_user", "served_tokens_per_s_per_user"), ("ttft_s", "served_ttft_s"),
                     ("output_tokens_per_s_per_gpu", "served_output_tokens_per_s_per_gpu"),
                     ("usd_per_m_output_tokens", "usd_per_m_output_tokens"),
                     ("usd_per_m_input_tokens", "usd_per_m_input_tokens"),
                     ("usd_per_m_output_tokens_all_in", "usd_per_m_output_tokens_all_in"),
                     ("max_batch_size", "max_batch_size"), ("usd_per_gpu_hour", "usd_per_gpu_hour")):
        assert p[opt] == pytest.approx(c[cli], rel=REL), (opt, cli)


def test_quote_checker_floor_equals_cli(catalog, capsys):
    quotes = validate_quotes(pl.DataFrame({"provider": ["x"], "model": [MODEL], "usd_per_m_input_tokens": ["0.27"],
                                           "usd_per_m_output_tokens": ["1.10"]}), catalog)
    chk = check_quotes(quotes, catalog, hardware=[HW])
    f = chk.summary.row(0, named=True)
    assert f["floor_hardware"] == HW and f["floor_layout"]
    c = cli_row(capsys, tp=f["floor_tp"], dp=f["floor_dp"], ep=f["floor_ep"], pp=f["floor_pp"],
                num_gpus=f["floor_num_gpus"], batch=f["floor_batch_size"], input_len=3072, output_len=1024,
                extra=["--precision", f["floor_precision"]])
    assert c["layout"] == f["floor_layout"]
    for q, cli in (("floor_usd_per_m_blended_tokens", "usd_per_m_blended_tokens"),
                   ("floor_usd_per_m_output_tokens", "usd_per_m_output_tokens"),
                   ("floor_usd_per_m_input_tokens", "usd_per_m_input_tokens"),
                   ("floor_tokens_per_s_per_user", "tokens_per_s_per_user")):
        assert f[q] == pytest.approx(c[cli], rel=REL), q


def test_cluster_serving_equals_the_hardware_comparison(catalog):
    """A cluster's serving rate is the hardware comparison's answer at the same floor (the one search), and the
    plan's serving columns are that answer (issue 16)."""
    from econ.analyses.compare import hardware_comparison
    r = serving_rate(catalog, MODEL, HW, min_tokens_per_s_per_user=20.0, precisions=[PRECISION])
    assert r["meets_slo"] and r["layout"]
    best = hardware_comparison(catalog, model=MODEL, hardware=[HW], precisions=[PRECISION],
                               min_tokens_per_s_per_user=20.0).best.row(0, named=True)
    assert r["layout"] == best["layout"] and r["gpus_per_replica"] == best["total_gpus"]
    assert r["usd_per_m_output_tokens"] == pytest.approx(best["usd_per_m_output_tokens_all_in"], rel=REL)
    for k in ("tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "batch_size"):
        assert r[k] == pytest.approx(best[k], rel=REL), k
    plan = cluster_plan(catalog, hardware=HW, num_gpus=[1024], model=MODEL, precisions=[PRECISION],
                        min_tokens_per_s_per_user=20.0).row(0, named=True)
    assert plan["serving_output_tokens_per_s_per_gpu"] == pytest.approx(r["output_tokens_per_s_per_gpu"], rel=REL)
    assert plan["serving_batch_size"] == r["batch_size"] and plan["serving_gpus_per_replica"] == r["gpus_per_replica"]


# ---------------------------------------------------------------------------------------------
# One cluster capability (issue 16): a 100 MW GB200 NVL72 site through `econ fleet size`, `econ cluster`,
# the Python API and the dashboard's Cluster page give the same GPUs, capex, MW, tokens/day and payback
# ---------------------------------------------------------------------------------------------

SITE_HW, SITE_MODEL, SITE_MW = "gb200-nvl72", "llama-3.3-70b", 100.0
SITE_FIELDS = ("num_gpus", "capex_total_usd", "facility_power_mw", "it_power_mw", "serving_tokens_per_day",
               "payback_years")


def _cli_json(capsys, *argv) -> dict:
    code = main([*argv, "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_a_100_mw_gb200_site_is_one_answer_everywhere(catalog, capsys):
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root))
    from streamlit.testing.v1 import AppTest

    from dashboards.components import fmt

    # Python API: the one function, the one set of defaults (econ.assumptions.Economics)
    api = cluster_plan(catalog, hardware=SITE_HW, power_w=SITE_MW * 1e6, model=SITE_MODEL).row(0, named=True)
    assert api["num_gpus"] > 0 and api["serving_tokens_per_day"] > 0 and api["payback_years"] > 0
    assert api["facility_power_mw"] <= SITE_MW and api["facility"] == "default"
    # the CLI: `econ fleet size`, `econ cluster` with the same budget, and `econ cluster` with the GPUs it buys
    site = ("--hardware", SITE_HW, "--model", SITE_MODEL)
    fleet = _cli_json(capsys, "fleet", "size", *site, "--power-mw", f"{SITE_MW:g}")
    by_budget = _cli_json(capsys, "cluster", *site, "--power-mw", f"{SITE_MW:g}")
    by_size = _cli_json(capsys, "cluster", *site, "--gpus", str(api["num_gpus"]))
    for answer in (fleet, by_budget, by_size):
        for f in SITE_FIELDS:
            assert answer[f] == pytest.approx(api[f], rel=1e-12), f
        assert answer["pue"] == api["pue"] and answer["build_usd_per_mw_it"] == api["build_usd_per_mw_it"]
    # the dashboard's Cluster page: the budget tab (100 MW) and the cluster at the top (the GPUs it buys)
    at = AppTest.from_file(str(root / "dashboards" / "pages" / "cluster.py"), default_timeout=120)
    at.query_params.update(hardware=SITE_HW, model=SITE_MODEL)
    at.run()
    at.number_input(key="fl.budget.mw").set_value(SITE_MW)
    at.number_input(key="sc.cluster_gpus").set_value(api["num_gpus"])
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    shown = {m.label: m.value for m in at.metric}
    assert shown["Budget buys"] == f"{fmt.count(api['num_gpus'])} GPUs"
    assert shown["Budget: capex"] == fmt.usd(api["capex_total_usd"])
    assert shown["Budget: facility power"] == fmt.megawatts(api["facility_power_mw"])
    assert shown["Budget: IT power"] == fmt.megawatts(api["it_power_mw"])
    assert shown["Budget: output tokens per day"] == fmt.compact(api["serving_tokens_per_day"])
    assert shown["Budget: payback"] == fmt.years(api["payback_years"])
    assert shown["Capex total"] == fmt.usd_millions(api["capex_total_usd"])
    assert shown["Facility power"] == fmt.megawatts(api["facility_power_mw"])
    assert shown["Output tokens per day"] == fmt.compact(api["serving_tokens_per_day"])
    assert shown["Payback"] == f"{api['payback_years']:,.2f} years"


# ------------------------------------------------------------------------------------------------
# One question, one answer: DeepSeek-V3 fp8 on H200 at 100 tokens/s per user (issue 16)
# ------------------------------------------------------------------------------------------------

DSV3 = dict(model="deepseek-v3", hardware="h200-sxm", precision="fp8", floor=100.0)


def _page(name: str, **params):
    import sys
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root))
    at = AppTest.from_file(str(root / "dashboards" / "pages" / f"{name}.py"), default_timeout=300)
    at.query_params.update(**params)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_deepseek_v3_on_h200_at_100_tokens_per_user_is_one_answer_everywhere(catalog, capsys):
    """Hardware comparison (API and page), head to head (API and page), `econ compare` and `econ cost` read the same
    deployment and the same all-in $/M output tokens; decode-only cost is labelled as such wherever it is shown.
    (Before issue 16: $6.95/M on the Hardware comparison page against $2.06 'all-in' on Head to head.)"""
    from dashboards.components import fmt
    from econ.analyses.compare import Setup, hardware_comparison, head_to_head

    m, hw, p, floor = DSV3["model"], DSV3["hardware"], DSV3["precision"], DSV3["floor"]
    best = hardware_comparison(catalog, model=m, hardware=[hw], precisions=[p],
                               min_tokens_per_s_per_user=floor).best.row(0, named=True)
    all_in, layout = best["usd_per_m_output_tokens_all_in"], best["layout"]
    assert best["meets_slo"] and best["tokens_per_s_per_user"] >= floor and all_in > 0
    assert all_in >= best["usd_per_m_output_tokens"]  # all-in (prefill GPUs included) is never below decode only
    # head to head (Python), econ compare (CLI)
    h = head_to_head(catalog, Setup(m, hw, p, "owned"), Setup(m, hw, p, "owned"), levels=(floor,))
    a = h.at_levels.filter(pl.col("setup") == "A").row(0, named=True)
    assert a["layout"] == layout and a["usd_per_m_output_tokens_all_in"] == pytest.approx(all_in, rel=1e-12)
    cmp_ = _cli_json(capsys, "compare", f"{m}:{hw}:{p}", f"{m}:{hw}:{p}", "--at", f"{floor:g}")
    row = [r for r in cmp_["setups"] if r["setup"] == "A"][0]
    assert row["layout"] == layout and row["usd_per_m_output_tokens_all_in"] == pytest.approx(all_in, rel=1e-12)
    # econ cost: the automatic layout and batch under the same floor are the same deployment
    cost = _cli_json(capsys, "cost", "--model", m, "--hardware", hw, "--precision", p,
                     "--min-tokens-per-s-per-user", f"{floor:g}")
    assert cost["layout"] == layout and cost["batch_size"] == best["batch_size"]
    assert cost["usd_per_m_output_tokens_all_in"] == pytest.approx(all_in, rel=1e-12)
    assert cost["usd_per_m_output_tokens"] == pytest.approx(best["usd_per_m_output_tokens"], rel=1e-12)
    # the pages: the same figure under the all-in label
    hc = _page("hardware_comparison", model=m, compare_hardware=hw, compare_precisions=p,
               min_tokens_per_s_per_user=f"{floor:g}")
    shown = {x.label: x.value for x in hc.metric}
    assert shown["Its $ per M output tokens, all-in"] == fmt.usd_per_m(all_in)
    h2h = _page("head_to_head", h2h_a_model=m, h2h_a_hardware=hw, h2h_a_precision=p, h2h_b_model=m,
                h2h_b_hardware=hw, h2h_b_precision=p, interactivity_levels=f"{floor:g}")
    tables = [d.value for d in h2h.dataframe]
    shown_cols = ("usd_per_m_output_tokens_all_in", "usd_per_m_output_tokens_all_in_a")
    values = [float(t[c].iloc[0]) for t in tables for c in t.columns if c in shown_cols]
    assert len(values) == 2 and all(v == pytest.approx(all_in, rel=1e-12) for v in values), values
    from econ.vocabulary import column_title
    assert "all-in" in column_title("usd_per_m_output_tokens_all_in") and "all-in" in column_title(shown_cols[1])
    assert "decode only" in column_title("usd_per_m_output_tokens")
