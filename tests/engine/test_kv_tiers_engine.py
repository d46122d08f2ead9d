"""Issue 22 parts 2 and 3 in the one engine: KV offload tiers, prefix-cache prefill, context parallelism.

Known answers (issue 22): a KV working set larger than HBM on GB200 spills to Grace memory before NVMe and the max
batch rises accordingly; on HGX H100 it spills to PCIe host memory at its lower bandwidth, so the decode step slows
more for the same spilled bytes; 90% of a 64K prompt served from an HBM-resident prefix cache cuts TTFT and prefill
GPU-seconds by at least 80%, and a cached token's cost is storage plus load, never zero. Measured comparison: Yang et
al., arXiv:2411.01783, a 1M-token Llama3-405B prefill in 77 s on 128 H100.
"""

from __future__ import annotations

import polars as pl
import pytest

from econ.engine import RESULT_COLUMNS, TIER_COLUMNS, evaluate, kv_tier_arrays, catalog_arrays
from econ.errors import InvalidInputError
from econ.physics.kv_tiers import cached_token_cost_usd, hbm_usd_per_gb_hour
from econ.tables.catalog import load_catalog
from econ.tables.kv_tiers import load_kv_tiers, system_tiers

PUBLISHED_1M_405B_128_H100_S = 77.0
COLS = ["max_batch_size", "max_batch_size_hbm", "kv_offload_frac", "kv_offload_s", "kv_tier_usd_per_gpu_hour",
        "tpot_s", "usd_per_m_output_tokens", "feasible", "kv_bytes_per_sequence", "num_gpus"]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _offload(catalog, hw, offload, batch, input_len=32768):
    n = len(batch)
    f = pl.DataFrame({"model": ["llama-3.3-70b"] * n, "hardware": [hw] * n, "precision": ["fp8"] * n,
                      "batch_size": batch, "input_len": [input_len] * n, "output_len": [1024] * n,
                      "num_gpus": [8] * n, "kv_offload": [offload] * n})
    return evaluate(f, catalog, strict=False, columns=COLS)


def test_defaults_return_the_result_columns_and_tier_inputs_add_the_tier_columns(catalog):
    f = pl.DataFrame({"model": ["llama-3.3-70b"], "hardware": ["h100-sxm"], "precision": ["fp8"], "batch_size": [8]})
    assert evaluate(f, catalog).columns[-1] == RESULT_COLUMNS[-1]
    with_tiers = evaluate(f.with_columns(kv_offload=pl.lit("none")), catalog)
    assert with_tiers.columns[-len(TIER_COLUMNS):] == list(TIER_COLUMNS)
    row = with_tiers.row(0, named=True)
    assert row["max_batch_size"] == row["max_batch_size_hbm"] and row["kv_offload_s"] == 0 and row["cp"] == 1


def test_gb200_spills_to_grace_memory_before_nvme_and_max_batch_rises(catalog):
    none, host, nvme = (_offload(catalog, "gb200-nvl72", o, [64, 400]) for o in ("none", "host", "nvme"))
    hbm_max = none["max_batch_size"][0]
    assert not none["feasible"][1]  # 400 sequences of 33K tokens do not fit 8 B200s' HBM beside the weights
    assert host["max_batch_size_hbm"][0] == hbm_max and host["max_batch_size"][0] > 2 * hbm_max
    # the rise is the Grace tier's capacity (data/kv_tiers.csv): 8 x 240 GB / KV per sequence
    grace = system_tiers(load_kv_tiers(), "gb200-nvl72")[0]
    assert grace["medium"].startswith("Grace LPDDR5X")
    rise = 8 * grace["capacity_bytes"] / host["kv_bytes_per_sequence"][0]
    assert host["max_batch_size"][0] - hbm_max == pytest.approx(rise, abs=1.0)
    assert nvme["max_batch_size"][0] > host["max_batch_size"][0]  # NVMe only after host memory
    # 400 sequences fit with the spill; the part beyond HBM sits in Grace memory (NVMe untouched: same figures)
    assert host["feasible"][1] and nvme["feasible"][1]
    assert host["kv_offload_s"][1] == pytest.approx(nvme["kv_offload_s"][1])
    assert 0 < host["kv_offload_frac"][1] < 1 and host["tpot_s"][1] > none["tpot_s"][0]
    # a batch that fits HBM pays nothing
    assert host["kv_offload_s"][0] == 0 and host["tpot_s"][0] == pytest.approx(none["tpot_s"][0], rel=1e-12)
    # the tier's storage is charged
    assert host["kv_tier_usd_per_gpu_hour"][1] > 0


def test_hgx_h100_spills_to_pcie_host_memory_and_slows_more_per_spilled_byte(catalog):
    h100 = _offload(catalog, "h100-sxm", "host", [98 + 100])
    gb200 = _offload(catalog, "gb200-nvl72", "host", [246 + 100])
    assert h100["feasible"][0] and gb200["feasible"][0]
    arr = catalog_arrays(catalog)
    _, bw, _ = kv_tier_arrays(catalog, arr)
    pcie, c2c = bw[arr.hardware_ids.index("h100-sxm"), 0], bw[arr.hardware_ids.index("gb200-nvl72"), 0]
    assert pcie == pytest.approx(63e9) and c2c == pytest.approx(225e9)

    def seconds_per_spilled_byte(r, batch):  # each step reads the spilled share of every sequence's KV
        spilled = r["kv_offload_frac"][0] * batch * r["kv_bytes_per_sequence"][0] / r["num_gpus"][0]
        return r["kv_offload_s"][0] / spilled

    h, g = seconds_per_spilled_byte(h100, 198), seconds_per_spilled_byte(gb200, 346)
    assert h / g == pytest.approx(c2c / pcie, rel=0.35)  # decode reads a bit less than the capacity context
    assert h > 3 * g


def test_ninety_percent_of_a_64k_prompt_from_hbm_cuts_ttft_and_prefill_gpu_seconds_by_80_percent(catalog):
    f = pl.DataFrame({"model": ["llama-3.3-70b"] * 2, "hardware": ["h100-sxm"] * 2, "precision": ["fp8"] * 2,
                      "batch_size": [1, 1], "input_len": [65536] * 2, "output_len": [256] * 2, "num_gpus": [8, 8],
                      "cache_hit_frac": [0.0, 0.9], "prefix_cache_tier": ["hbm", "hbm"]})
    r = evaluate(f, catalog, columns=["ttft_s", "input_tokens_per_s_per_gpu", "prefix_load_s",
                                      "kv_bytes_per_sequence", "usd_per_gpu_hour"])
    none, hit = r.row(0, named=True), r.row(1, named=True)
    assert hit["ttft_s"] <= 0.2 * none["ttft_s"]
    gpu_s_none = 65536 / none["input_tokens_per_s_per_gpu"]
    gpu_s_hit = 65536 * 0.1 / hit["input_tokens_per_s_per_gpu"]
    assert gpu_s_hit <= 0.2 * gpu_s_none
    # the new tokens attend to the whole cached prefix: each costs more than a token of an uncached prompt
    assert hit["input_tokens_per_s_per_gpu"] < none["input_tokens_per_s_per_gpu"]
    assert hit["prefix_load_s"] == 0  # resident in HBM
    # the cached token is not free: HBM storage for the reuse interval + reading it
    h = catalog.accelerator("h100-sxm")
    per_token = (hit["kv_bytes_per_sequence"] / (65536 + 256))
    total, storage, load = cached_token_cost_usd(
        per_token, hbm_usd_per_gb_hour(hit["usd_per_gpu_hour"], h["hbm_capacity_bytes"], 0.9), 60.0,
        h["hbm_bandwidth_bytes_per_s"], hit["usd_per_gpu_hour"])
    assert storage > 0 and load > 0 and total == pytest.approx(storage + load)


def test_a_prefix_beyond_hbm_is_loaded_at_its_tier_bandwidth(catalog):
    tiers = ["hbm", "host", "nvme"]
    f = pl.DataFrame({"model": ["llama-3.3-70b"] * 3, "hardware": ["h100-sxm"] * 3, "precision": ["fp8"] * 3,
                      "batch_size": [1] * 3, "input_len": [65536] * 3, "output_len": [256] * 3, "num_gpus": [8] * 3,
                      "cache_hit_frac": [0.9] * 3, "prefix_cache_tier": tiers})
    r = evaluate(f, catalog, columns=["ttft_s", "prefix_load_s"])
    load = r["prefix_load_s"].to_list()
    assert load[0] == 0 < load[1] < load[2]
    assert load[2] / load[1] == pytest.approx(63 / 13, rel=1e-6)  # PCIe host DRAM 63 GB/s vs NVMe 13 GB/s
    assert (r["ttft_s"] - r["prefix_load_s"]).to_list() == pytest.approx([r["ttft_s"][0]] * 3)


def test_without_a_prefix_tier_a_hit_is_billed_as_before(catalog):
    """Off by default: the prompt's TTFT is the whole prompt's (the engine's rule before issue 22)."""
    f = pl.DataFrame({"model": ["llama-3.3-70b"] * 2, "hardware": ["h100-sxm"] * 2, "precision": ["fp8"] * 2,
                      "batch_size": [1, 1], "input_len": [65536] * 2, "output_len": [256] * 2, "num_gpus": [8, 8],
                      "cache_hit_frac": [0.0, 0.9]})
    r = evaluate(f, catalog, columns=["ttft_s"])
    assert r["ttft_s"][0] == r["ttft_s"][1]


def test_context_parallel_prefill_through_the_engine_is_near_the_published_77_s(catalog):
    """Yang et al. (arXiv:2411.01783): 1M tokens of Llama3-405B in 77 s on 128 H100. The engine holds the prompt's KV
    on its decode instance, so a rank is TP8 x PP2 (16 H100: 405 GB of fp8 weights + 258 GB of KV), cp 8."""
    f = pl.DataFrame({"model": ["llama-3.1-405b"] * 2, "hardware": ["h100-sxm"] * 2, "precision": ["fp8"] * 2,
                      "batch_size": [1, 1], "input_len": [1_000_000] * 2, "output_len": [256] * 2,
                      "num_gpus": [16, 16], "tp": [8, 8], "cp": [1, 8], "context_limit_tokens": [1 << 20] * 2})
    r = evaluate(f, catalog, columns=["ttft_s", "num_gpus", "cp", "input_tokens_per_s_per_gpu"])
    one, cp8 = r.row(0, named=True), r.row(1, named=True)
    assert cp8["num_gpus"] * cp8["cp"] == 128
    assert cp8["ttft_s"] == pytest.approx(PUBLISHED_1M_405B_128_H100_S, rel=0.25)
    assert one["ttft_s"] / cp8["ttft_s"] == pytest.approx(8, rel=0.05)  # the ring hides behind attention
    assert cp8["input_tokens_per_s_per_gpu"] <= one["input_tokens_per_s_per_gpu"]


def test_bad_tier_inputs_name_the_field_the_value_and_the_range(catalog):
    base = {"model": ["llama-3.3-70b"], "hardware": ["h100-sxm"], "precision": ["fp8"], "batch_size": [1]}
    with pytest.raises(InvalidInputError, match=r"kv_offload='disk' is not one of \['none', 'host', 'nvme'\]"):
        evaluate(pl.DataFrame({**base, "kv_offload": ["disk"]}), catalog)
    with pytest.raises(InvalidInputError, match=r"cp=0 is outside \[1, 1024\]"):
        evaluate(pl.DataFrame({**base, "cp": [0]}), catalog)
    with pytest.raises(InvalidInputError, match=r"cache_hit_frac=1.5 is outside \[0, 1\]"):
        evaluate(pl.DataFrame({**base, "cache_hit_frac": [1.5], "prefix_cache_tier": ["hbm"]}), catalog)
    with pytest.raises(InvalidInputError, match="context of llama-3.3-70b|maximum context"):
        evaluate(pl.DataFrame({**base, "input_len": [200_000]}), catalog)
