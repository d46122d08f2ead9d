"""The CLI's shared option groups (issue 11): every subcommand takes the same economics, scenario, SLO and workload
flags, in the field's terms; the one default speed floor; econ cost on a list of accelerators; econ compare.

Each answer is checked against the core called directly with the same inputs (the CLI computes nothing).
"""

from __future__ import annotations

import json

import pytest

from econ.assumptions import Economics
from econ.tables.catalog import load_catalog
from econ.cli import build_parser, main
from econ.presets import DEFAULT_MIN_TOKENS_PER_S_PER_USER

ECONOMICS = {"--tco", "--usd-per-gpu-hour", "--pue", "--cost-of-capital", "--life-years", "--region", "--usd-per-kwh",
             "--facility", "--utilization", "--rental", "--owned"}
SLO = {"--min-tokens-per-s-per-user", "--tpot-ms"}
WORKLOAD = {"--workload", "--input-len", "--isl", "--output-len", "--osl"}
EVERY = ECONOMICS | SLO | WORKLOAD | {"--scenario"}

SUBCOMMANDS = {  # subcommand -> the shared flags it must have
    ("cost",): EVERY | {"--ttft-ms"}, ("optimize",): EVERY | {"--ttft-ms"}, ("frontier",): EVERY | {"--ttft-ms"},
    ("cluster",): EVERY, ("export", "cost"): EVERY | {"--ttft-ms"},
    ("compare",): ECONOMICS | WORKLOAD | {"--scenario", "--ttft-ms", "--at"},
    ("fleet", "size"): EVERY,  # `econ cluster` with a budget: one set of inputs
}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _parser_of(words):
    parser = build_parser()
    return parser._subparser_for(list(words))


@pytest.mark.parametrize("words", list(SUBCOMMANDS), ids=" ".join)
def test_every_subcommand_has_the_shared_flags(words):
    have = _parser_of(words).option_strings()
    assert SUBCOMMANDS[words] <= have, sorted(SUBCOMMANDS[words] - have)


def test_tco_choices_are_the_issue_tiers():
    action = next(a for a in _parser_of(["cost"])._actions if "--tco" in a.option_strings)
    assert set(action.choices) == {"hyperscaler", "neocloud", "owned-custom", "rental-3yr", "on-demand", "rental"}


def run_json(capsys, *argv):
    code = main([*argv, "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_cost_takes_a_list_of_accelerators(capsys):
    rows = run_json(capsys, "cost", "--model", "llama-3.3-70b", "--hardware", "h100-sxm,b200", "--precision", "fp8")
    assert [r["hardware"] for r in rows] == ["h100-sxm", "b200"]
    assert all(r["meets_slo"] and r["tokens_per_s_per_user"] >= DEFAULT_MIN_TOKENS_PER_S_PER_USER for r in rows)


def test_cost_list_skips_an_accelerator_that_cannot_serve_with_a_note(capsys):
    code = main(["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm,b200", "--precision", "fp4",
                 "--format", "json"])
    out = capsys.readouterr()
    assert code == 0 and json.loads(out.out)["hardware"] == "b200"
    assert "h100-sxm" in out.err and "--precision='fp4'" in out.err or "fp4" in out.err


@pytest.mark.parametrize("flags, basis", [(["--tco", "neocloud"], "neocloud"), (["--tco", "owned-custom"], "owned"),
                                          (["--rental"], "rental"), (["--usd-per-gpu-hour", "2.1"], "custom")])
def test_cost_tiers(capsys, flags, basis, catalog):
    r = run_json(capsys, "cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--batch", "64", *flags)
    assert r["basis"] == basis
    if basis == "custom":
        assert r["usd_per_gpu_hour"] == pytest.approx(2.1 / Economics().utilization_frac)  # per utilized hour
    if basis == "neocloud":
        rate = catalog.accelerator("h100-sxm")["tco_neocloud_usd_per_hour"]
        assert r["usd_per_gpu_hour"] == pytest.approx(rate / Economics().utilization_frac)


def test_workload_and_isl_osl(capsys):
    r = run_json(capsys, "cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--batch", "8",
                 "--workload", "reasoning", "--all-columns")
    assert (r["input_len"], r["output_len"], r["context_tokens"]) == (1024, 8192, 9216)
    r = run_json(capsys, "cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--batch", "8",
                 "--workload", "summarization", "--osl", "256", "--all-columns")
    assert (r["input_len"], r["output_len"]) == (8192, 256)  # an explicit length beats the preset's


def test_optimize_without_an_slo_applies_the_one_floor(capsys):
    doc = run_json(capsys, "optimize", "--model", "deepseek-v3", "--hardware", "h200-sxm", "--top", "3")
    assert doc["slo"]["min_tokens_per_s_per_user"] == DEFAULT_MIN_TOKENS_PER_S_PER_USER
    assert doc["best"]["tokens_per_s_per_user"] >= DEFAULT_MIN_TOKENS_PER_S_PER_USER  # not 3 tok/s at batch 24,764
    assert doc["workload"] == "chat"


def test_slo_flags_in_the_fields_terms(capsys):
    doc = run_json(capsys, "optimize", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--tpot-ms", "10",
                   "--ttft-ms", "200", "--isl", "2048", "--osl", "256")
    assert doc["slo"] == {"min_tokens_per_s_per_user": 100.0, "max_ttft_s": 0.2}
    assert (doc["input_len"], doc["output_len"]) == (2048, 256)
    assert doc["best"]["tpot_s"] <= 0.010 + 1e-12 and doc["best"]["ttft_s"] <= 0.2
    # the floor and --tpot-ms together: the stricter wins
    doc = run_json(capsys, "optimize", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--tpot-ms", "100",
                   "--min-tokens-per-s-per-user", "30")
    assert doc["slo"]["min_tokens_per_s_per_user"] == 30.0


@pytest.mark.parametrize("argv, message", [
    (["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--tpot-ms", "0"], "--tpot-ms=0 is outside"),
    (["optimize", "--model", "llama-3.1-8b", "--ttft-ms", "-5"], "--ttft-ms=-5 is outside"),
    (["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--usd-per-gpu-hour", "0"],
     "--usd-per-gpu-hour=0 is outside"),
    (["compare", "llama-3.1-8b:h100-sxm"], "set-up B is missing"),
    (["compare", "llama-3.1-8b", "llama-3.1-8b:h100-sxm"], "--a='llama-3.1-8b' is not MODEL:HARDWARE"),
    (["compare", "a:b", "c:d", "--at", "0"], "--at=0 is outside"),
])
def test_bad_flags_are_one_line_errors(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_tco_typo_suggests_the_tier(capsys):
    with pytest.raises(SystemExit):
        main(["cost", "--model", "x", "--hardware", "y", "--tco", "owned"])
    assert "did you mean 'owned-custom'" in capsys.readouterr().err


def test_compare_a_setup_against_itself_and_a_real_pair(capsys):
    doc = run_json(capsys, "compare", "llama-3.1-8b:h100-sxm:fp8", "llama-3.1-8b:h100-sxm:fp8", "--at", "20,50")
    assert [r["cost_ratio_b_to_a"] for r in doc["ratio"]] == pytest.approx([1.0, 1.0])
    doc = run_json(capsys, "compare", "--a", "llama-3.3-70b:h200-sxm:fp8", "--b", "llama-3.3-70b:b200:fp4",
                   "--tco", "neocloud", "--workload", "reasoning")
    assert doc["a"].endswith(":neocloud") and doc["b"].endswith(":neocloud") and doc["workload"] == "reasoning"
    assert [r["at_tokens_per_s_per_user"] for r in doc["ratio"]] == [20.0, 50.0, 100.0]
    reached = [r for r in doc["ratio"] if r["cost_ratio_b_to_a"] is not None]
    assert reached and all(r["cost_ratio_b_to_a"] < 1 for r in reached)
    parts = {r["setup"] for r in doc["breakdown"]}
    assert parts == {"A", "B"}


def test_compare_table_reads_as_an_analyst_expects(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["compare", "llama-3.1-8b:h100-sxm", "llama-3.1-8b:b200", "--at", "50"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("A: llama-3.1-8b on h100-sxm, fp8, owned-custom $/GPU-hour")
    assert "cost_ratio_b_to_a" in out and "Where a decode step's time goes" in out and "None" not in out


def test_scenario_file_gives_workload_floor_and_tier(tmp_path, capsys):
    from econ.io.scenario import Scenario
    path = tmp_path / "s.toml"
    path.write_text(Scenario(model="llama-3.1-8b", hardware="h100-sxm", workload="summarization", input_len=8192,
                             output_len=1024, basis="hyperscaler", min_tokens_per_s_per_user=60.0).to_toml())
    r = run_json(capsys, "cost", "--scenario", str(path), "--all-columns")
    assert (r["input_len"], r["output_len"], r["basis"]) == (8192, 1024, "hyperscaler")
    assert r["served_tokens_per_s_per_user"] >= 60.0  # the file's floor picks the auto batch
    doc = run_json(capsys, "optimize", "--scenario", str(path), "--hardware", "h100-sxm", "--top", "1")
    assert doc["model"] == "llama-3.1-8b" and doc["slo"]["min_tokens_per_s_per_user"] == 60.0
    r = run_json(capsys, "cost", "--scenario", str(path), "--workload", "chat", "--tco", "rental", "--all-columns")
    assert (r["input_len"], r["output_len"], r["basis"]) == (1024, 1024, "rental")  # flags beat the file


def test_scenario_with_a_custom_accelerator(tmp_path, capsys):
    from econ.io.scenario import Scenario
    path = tmp_path / "c.toml"
    path.write_text(Scenario(model="llama-3.1-8b", hardware="custom-accelerator", custom_accelerator=True,
                             custom_name="X1", custom_hbm_tb_per_s=6.0).to_toml())
    r = run_json(capsys, "cost", "--scenario", str(path), "--batch", "8")
    assert r["hardware"] == "custom-accelerator" and r["feasible"]


def test_progress_bar_stays_off_a_pipe(capsys):
    """The bar is drawn on a terminal only: stdout (JSON) and a piped stderr stay clean."""
    run_json(capsys, "frontier", "--model", "llama-3.1-8b", "--hardware", "h100-sxm,b200")
    assert capsys.readouterr().err == ""


def test_progress_bar_draws_on_a_terminal_for_slow_work():
    import io
    import time

    from econ.commands._common import progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    err = Tty()
    with progress("Searching", total=3, delay_s=0.05, stream=err) as advance:
        for _ in range(3):
            time.sleep(0.05)
            advance()
    assert "Searching" in err.getvalue()
    quick = Tty()
    with progress("Fast", total=1, delay_s=5.0, stream=quick) as advance:
        advance()
    assert quick.getvalue() == ""
