"""Issue 19.1: formats, speculative decoding and percentile SLOs reach every command and the one search.

Every knob is one vocabulary field (econ.vocabulary.FIELDS) turned into a flag by econ.commands._common; the answers
are checked against the core called directly (the CLI computes nothing) and against the bytes they change.
"""

from __future__ import annotations

import json

import pytest

from econ.analyses.optimize import SLO, SearchSpace, optimize
from econ.assumptions import Decoding
from econ.cli import build_parser, main
from econ.errors import InvalidInputError
from econ.tables.catalog import load_catalog

DECODING_FLAGS = {"--weight-format", "--expert-format", "--kv-format", "--speculation", "--draft-tokens",
                  "--acceptance", "--draft-model"}
COMMANDS = [("cost",), ("optimize",), ("frontier",), ("compare",), ("cluster",), ("fleet", "size"), ("export", "cost")]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _json(capsys, words) -> dict:
    assert main(list(words) + ["--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("words", COMMANDS, ids=" ".join)
def test_every_pricing_command_takes_the_decoding_flags(words):
    sub = build_parser()._subparser_for(list(words))
    flags = {o for a in sub._actions for o in a.option_strings}
    assert DECODING_FLAGS <= flags, sorted(DECODING_FLAGS - flags)
    assert "--slo-percentile" in flags  # every pricing command: cluster and fleet size too (issue 19.1)


def test_mtp_off_for_deepseek_v3_changes_tpot_and_cost(capsys):
    base = ["cost", "--model", "deepseek-v3", "--hardware", "b200", "--precision", "fp8", "--rental", "--batch", "64",
            "--gpus", "8"]
    on = _json(capsys, base)
    off = _json(capsys, base + ["--speculation", "none"])
    assert on["spec_method"] == "mtp" and on["spec_acceptance"] == pytest.approx(0.85)  # the vendor's default
    assert off["spec_method"] == "none" and off["spec_draft_tokens"] == 0
    assert off["tpot_s"] != on["tpot_s"]
    # one MTP token at acceptance 0.85 emits 1.85 tokens a step: without it a step emits one
    assert on["tokens_per_s_per_user"] / off["tokens_per_s_per_user"] > 1.3
    assert off["usd_per_m_output_tokens"] > on["usd_per_m_output_tokens"]


def test_bf16_weights_with_an_fp8_kv_cache_raise_max_batch_as_the_kv_bytes_say(capsys, catalog):
    base = ["cost", "--model", "llama-3.3-70b", "--hardware", "h100-sxm", "--precision", "bf16", "--gpus", "4",
            "--tp", "4", "--batch", "1"]
    bf16 = _json(capsys, base + ["--all-columns"])
    fp8 = _json(capsys, base + ["--kv-format", "fp8", "--all-columns"])
    assert (bf16["weight_format"], bf16["kv_precision"]) == ("bf16", "bf16")
    assert (fp8["weight_format"], fp8["kv_precision"]) == ("bf16", "fp8")
    assert fp8["kv_bytes_per_sequence"] == pytest.approx(bf16["kv_bytes_per_sequence"] / 2)
    assert fp8["weight_bytes"] == bf16["weight_bytes"]
    # the KV room is the same bytes, each sequence needs half: twice the batch (within the rounding of a sequence)
    room = bf16["max_batch_size"] * bf16["kv_bytes_per_sequence"]
    assert fp8["max_batch_size"] == pytest.approx(2 * bf16["max_batch_size"], abs=2)
    assert fp8["max_batch_size"] * fp8["kv_bytes_per_sequence"] == pytest.approx(room, rel=0.02)


def test_the_search_honours_the_decoding_and_says_why_a_precision_is_left_out(catalog):
    kw = dict(model="deepseek-v3", hardware="b200", slo=SLO(min_tokens_per_s_per_user=25))
    on = optimize(catalog, **kw)
    off = optimize(catalog, **kw, space=SearchSpace(decoding=Decoding(spec_method="none")))
    assert off.best["usd_per_m_output_tokens_all_in"] > on.best["usd_per_m_output_tokens_all_in"]
    bf16 = optimize(catalog, model="llama-3.3-70b", hardware="h100-sxm", slo=SLO(min_tokens_per_s_per_user=25),
                    space=SearchSpace(decoding=Decoding(weight_format="bf16")))
    assert bf16.best["precision"] == "bf16"
    why = bf16.rejected.filter(bf16.rejected["precision"] == "fp8")["reason"].to_list()
    assert why == ["weight format wider than the matmul precision"]


def test_an_impossible_speculation_names_what_can_run(catalog, capsys):
    with pytest.raises(InvalidInputError, match="multi-token-prediction"):
        optimize(catalog, model="llama-3.3-70b", hardware="h100-sxm",
                 space=SearchSpace(decoding=Decoding(spec_method="mtp")))
    assert main(["cost", "--model", "llama-3.3-70b", "--hardware", "h100-sxm", "--speculation", "mtp"]) != 0
    assert "multi-token-prediction" in capsys.readouterr().err
    assert main(["cost", "--model", "llama-3.3-70b", "--hardware", "h100-sxm", "--acceptance", "1.5"]) != 0
    assert "--acceptance=1.5 is outside [0, 0.999]" in capsys.readouterr().err


def test_percentile_slos_judge_the_percentile_ttft(catalog):
    kw = dict(model="llama-3.3-70b", hardware="h100-sxm", space=SearchSpace(modes=("aggregated",), precisions=("fp8",)))
    mean = optimize(catalog, slo=SLO(min_tokens_per_s_per_user=25, max_ttft_s=0.5), **kw)
    p99 = optimize(catalog, slo=SLO(min_tokens_per_s_per_user=25, max_ttft_s=0.5, percentile=99.0), **kw)
    assert mean.best is not None and p99.best is not None
    # the p99 TTFT (queueing included) is never below the mean one, so the percentile SLO is at least as strict
    assert p99.best["usd_per_m_output_tokens_all_in"] >= mean.best["usd_per_m_output_tokens_all_in"] - 1e-12
    with pytest.raises(InvalidInputError, match="slo_percentile"):
        SLO(percentile=100.0)


def test_the_answer_says_what_it_used_and_where_the_defaults_come_from(capsys):
    assert main(["cost", "--model", "deepseek-v3", "--hardware", "b200", "--precision", "fp8", "--rental",
                 "--batch", "64", "--gpus", "8", "--kv-format", "bf16"]) == 0
    err = " ".join(capsys.readouterr().err.split())  # the line wraps at the terminal's width
    assert "KV cache bf16 (set)" in err
    assert "speculative decoding mtp" in err and "ships MTP modules" in err
    assert main(["optimize", "--model", "gpt-oss-120b", "--hardware", "h100-sxm"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "experts mxfp4 (the released checkpoint)" in out


def test_the_hardware_comparison_prices_its_cost_chain_with_the_same_decoding(catalog):
    from econ.analyses.compare import COST_PARTS, hardware_comparison

    rows = {}
    for name, dec in (("default", Decoding()), ("off", Decoding(spec_method="none"))):
        b = hardware_comparison(catalog, model="deepseek-v3", hardware=["b200"],
                                space=SearchSpace(decoding=dec)).best.row(0, named=True)
        # the bars (capex, facility, opex, power, rental) add up to the ranked cost of the deployment searched
        assert sum(b[f"usd_per_m_tokens_{p}"] for p in COST_PARTS) == pytest.approx(b["usd_per_m_output_tokens_all_in"])
        rows[name] = b
    assert rows["off"]["usd_per_m_output_tokens_all_in"] > rows["default"]["usd_per_m_output_tokens_all_in"]


def test_cluster_and_fleet_size_judge_the_speed_floor_at_a_percentile(capsys, catalog):
    """Issue 19.1: `econ cluster` / `econ fleet size` take --slo-percentile (p50/p90/p99) like `econ cost`: the serving
    search (econ.analyses.cluster.serving_rate -> hardware_comparison's SLO percentile) holds the speed floor at that
    TPOT percentile, so p99 never serves more tokens a day than the mean; p50 (tail 1, no TTFT limit) equals it; the
    answer's range error names the flag."""
    import polars as pl

    from econ.analyses.compare import hardware_comparison

    cat = catalog
    kw = dict(model="llama-3.3-70b", hardware=["h100-sxm", "b200"], precisions=["fp8"])
    mean = hardware_comparison(cat, **kw).best
    p50 = hardware_comparison(cat, slo_percentile=50.0, **kw).best
    p99 = hardware_comparison(cat, slo_percentile=99.0, **kw).best
    cost = "usd_per_m_output_tokens_all_in"
    assert p50[cost].to_list() == pytest.approx(mean[cost].to_list(), rel=1e-12)
    both = mean.select("hardware", cost).join(p99.select("hardware", pl.col(cost).alias("p99")), on="hardware")
    assert both.height == 2 and (both["p99"] >= both[cost] * (1 - 1e-12)).all()
    assert (both["p99"] > both[cost] * 1.001).any()  # the tail binds somewhere
    out = {}
    for pct in (None, "99"):
        args = ["cluster", "--hardware", "h100-sxm", "--gpus", "1024", "--model", "llama-3.3-70b"]
        rows = _json(capsys, args + (["--slo-percentile", pct] if pct else []))
        rows = rows if isinstance(rows, list) else rows.get("rows", rows)
        out[pct] = (rows[0] if isinstance(rows, list) else rows)["serving_tokens_per_day"]
    assert out["99"] <= out[None]
    assert main(["fleet", "size", "--hardware", "h100-sxm", "--power-mw", "10", "--slo-percentile", "100"]) == 2
    assert "--slo-percentile=100 is outside [1, 99.9]" in capsys.readouterr().err
