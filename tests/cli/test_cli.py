"""`econ cost` and `econ list` end to end (in process)."""

import json

import pytest

from econ.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def test_cost_json_has_the_contract_fields(capsys):
    data = json.loads(run(capsys, "cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--format", "json"))
    for k in ("model", "hardware", "num_gpus", "precision", "batch_size", "context_tokens", "max_batch_size",
              "binding_wall", "tpot_s", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu",
              "input_tokens_per_s_per_gpu", "ttft_s", "usd_per_gpu_hour", "usd_per_m_input_tokens",
              "usd_per_m_output_tokens", "usd_per_m_blended_tokens"):
        assert k in data
    assert data["binding_wall"] in ("capacity", "memory", "compute", "network")


def test_seed_number_from_the_cli(capsys):
    data = json.loads(run(capsys, "cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--gpus", "1",
                          "--batch", "1", "--context", "1", "--input-len", "1", "--output-len", "1", "--ideal",
                          "--stream-embeddings", "--format", "json"))
    assert data["tokens_per_s_per_user"] == pytest.approx(208.6, rel=2e-3)
    assert data["binding_wall"] == "memory"


def test_batch_list_gives_one_row_each(capsys):
    rows = json.loads(run(capsys, "cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--batch",
                          "1,8,64,256,100000", "--format", "json"))
    assert [r["batch_size"] for r in rows] == [1, 8, 64, 256, 100000]
    assert rows[-1]["binding_wall"] == "capacity" and rows[-1]["feasible"] is False
    assert rows[-1]["usd_per_m_output_tokens"] is None
    costs = [r["usd_per_m_output_tokens"] for r in rows[:-1] if r["feasible"]]
    assert costs == sorted(costs, reverse=True)


def test_csv_and_table_formats(capsys):
    csv = run(capsys, "cost", "--model", "mixtral-8x7b", "--hardware", "h100-sxm", "--batch", "8,16", "--format", "csv")
    assert csv.splitlines()[0].startswith("model,hardware,layout,num_gpus,total_gpus,tp,dp,ep,pp")
    assert len(csv.strip().splitlines()) == 3
    table = run(capsys, "cost", "--model", "mixtral-8x7b", "--hardware", "h100-sxm", "--rental", "--region",
                "us-va-industrial")
    assert "usd_per_m_output_tokens" in table and "rental" in table


@pytest.mark.parametrize("what, expect", [("models", "deepseek-v3"), ("hardware", "gb200-nvl72"),
                                          ("regions", "usd_per_kwh"), ("facilities", "pue")])
def test_list(capsys, what, expect):
    assert expect in run(capsys, "list", what)
