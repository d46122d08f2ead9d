"""$ per task (issue 22.1) with the true cost of cached input (22.2): the task presets, econ cost --workload, bad input."""

from __future__ import annotations

import json

import polars as pl
import pytest

from econ.analyses.tasks import with_task_costs
from econ.assumptions import DEFAULT
from econ.cli import main
from econ.errors import InvalidInputError
from econ.presets import TASK_WORKLOADS, WORKLOADS, WorkloadPreset, check_task
from econ.tables.catalog import load_catalog


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _cost_json(capsys, *extra):
    code = main(["cost", "--model", "llama-3.3-70b", "--hardware", "h100-sxm", "--precision", "fp8", *extra,
                 "--all-columns", "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    return doc[0] if isinstance(doc, list) else doc


def test_task_presets_carry_their_structure_and_sources():
    agent = WORKLOADS["agentic-coding"]
    assert (agent.calls_per_task, agent.prefix_reuse_frac, agent.input_len, agent.output_len) == (7.83, 0.857, 67892,
                                                                                                  528)
    for name in TASK_WORKLOADS:
        w = WORKLOADS[name]
        assert w.is_task and w.source and w.reuse_interval_s > 0, name
    assert "Copilot" in agent.source and "Mooncake" in WORKLOADS["rag-long-document"].source
    assert "assum" in WORKLOADS["deep-research"].source  # the weakest preset says so
    assert not any(WORKLOADS[k].is_task for k in ("chat", "reasoning", "summarization"))


def test_cost_with_a_task_preset_gives_dollars_per_task(capsys):
    r = _cost_json(capsys, "--workload", "agentic-coding")
    assert r["cache_hit_frac"] == pytest.approx(0.857) and r["calls_per_task"] == pytest.approx(7.83)
    cached = 0.857 * 67892
    per_call = (r["usd_per_m_output_tokens_all_in"] * 528 + r["usd_per_m_cached_input_tokens_true"] * cached) / 1e6
    assert r["usd_per_call"] == pytest.approx(per_call, rel=1e-9)
    assert r["usd_per_task"] == pytest.approx(7.83 * per_call, rel=1e-9)
    # the cached token is never free, and far cheaper than recomputing it
    assert 0 < r["usd_per_m_cached_input_tokens_true"] < r["usd_per_m_input_tokens"]
    assert r["usd_per_m_cached_input_tokens_true"] == pytest.approx(r["usd_per_m_cached_storage"]
                                                                    + r["usd_per_m_cached_load"], rel=1e-9)


def test_flags_replace_the_presets_task_fields(capsys):
    base = _cost_json(capsys, "--workload", "agentic-coding")
    more = _cost_json(capsys, "--workload", "agentic-coding", "--calls-per-task", "15.66")
    assert more["usd_per_task"] == pytest.approx(2 * base["usd_per_task"], rel=1e-6)
    single = _cost_json(capsys)
    assert "usd_per_task" not in single  # a single-request workload keeps the plain table


@pytest.mark.parametrize("flag, value, message", [
    ("--prefix-reuse", "1.5", "--prefix-reuse=1.5 is outside [0, 1]"),
    ("--prefix-reuse", "-0.1", "--prefix-reuse=-0.1 is outside [0, 1]"),
    ("--calls-per-task", "0", "--calls-per-task=0 is outside [1, 100000] (calls)"),
])
def test_bad_task_flags_name_flag_value_and_range(capsys, flag, value, message):
    code = main(["cost", "--model", "llama-3.3-70b", "--hardware", "h100-sxm", "--workload", "agentic-coding",
                 f"{flag}={value}"])
    assert code == 2 and message in capsys.readouterr().err


def test_bad_task_values_in_the_core():
    with pytest.raises(InvalidInputError, match=r"prefix_reuse_frac=1\.2 is outside \[0, 1\]"):
        check_task(2.0, 1.2)
    with pytest.raises(InvalidInputError, match=r"calls_per_task=0 is outside \[1, 100000\]"):
        WorkloadPreset("x", 1, 1, "x", "x", calls_per_task=0)  # a task with no turns


def test_a_long_reuse_interval_moves_gb200_prefixes_to_grace_memory(catalog):
    from econ.analyses.sweep import cost_table
    from econ.assumptions import Economics

    frame = cost_table(catalog, model="llama-3.3-70b", hardware="gb200-nvl72", precision="fp8", batch_sizes=[64],
                       input_len=67892, output_len=528, economics=Economics(cache_hit_frac=0.857))
    kw = dict(calls_per_task=7.83, prefix_reuse_frac=0.857, assumptions=DEFAULT)
    short = with_task_costs(frame, catalog, reuse_interval_s=1.0, **kw).row(0, named=True)
    long = with_task_costs(frame, catalog, reuse_interval_s=600.0, **kw).row(0, named=True)
    assert short["kv_tier"] == "hbm"
    assert long["kv_tier"] in ("host", "nvme") and long["kv_waiting_bytes_per_gpu"] > short["kv_waiting_bytes_per_gpu"]
    far = with_task_costs(frame, catalog, reuse_interval_s=60.0, **kw).row(0, named=True)
    assert far["kv_tier"] == "host" and "Grace" in far["kv_tier_medium"]
    assert long["usd_per_m_cached_storage"] > far["usd_per_m_cached_storage"] > 0
    assert far["sessions_held_host"] > far["sessions_held_hbm"]  # spilling to Grace keeps more sessions


def test_cached_input_prices_are_checked_against_storage_plus_load(catalog, capsys):
    from econ.analyses.tasks import check_cached_prices
    from econ.tables.quote_files import load_quotes

    quotes = load_quotes(catalog)
    t = check_cached_prices(catalog, quotes, hardware="h200-sxm")
    assert t.height == quotes.filter(pl.col("usd_per_m_cached_input_tokens").is_not_null()).height > 0
    ok = t.filter(pl.col("usd_per_m_cached_input_tokens_true").is_not_null())
    assert ok.height and (ok["usd_per_m_cached_input_tokens_true"] > 0).all()
    for r in ok.iter_rows(named=True):
        assert r["price_over_cost"] == pytest.approx(r["usd_per_m_cached_input_tokens"]
                                                     / r["usd_per_m_cached_input_tokens_true"])
        assert r["verdict"] == ("covers storage + load" if r["price_over_cost"] >= 1 else "below storage + load")
    with pytest.raises(InvalidInputError, match="workload='chat' is not one of the task presets"):
        check_cached_prices(catalog, quotes, hardware="h200-sxm", workload="chat")
    assert main(["quotes", "cached", "--hardware", "h200-sxm", "--format", "json"]) == 0
    assert "covers storage + load" in capsys.readouterr().out
