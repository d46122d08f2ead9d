"""KV-cache tiers (issue 22.2): placement, sequences held, cache-hit TTFT, the true cost of a cached token.

Known answers of the issue: 90% of a 64K prompt from an HBM prefix cache cuts TTFT and prefill GPU-seconds by at
least 80%, and the cached token still costs storage + load (never zero); a KV working set larger than HBM on GB200
spills to Grace memory before NVMe (more sequences held), on HGX H100 to PCIe host memory at a lower bandwidth.
"""

from __future__ import annotations

import numpy as np
import pytest

from econ.errors import InvalidInputError
from econ.physics.kv_tiers import (TIERS, cache_hit_ttft_s, cached_token_cost_usd, hbm_usd_per_gb_hour, place_kv,
                                   prefill_flop, sequences_held, spill_tier, transfer_time_s)
from econ.tables.catalog import load_catalog
from econ.tables.kv_tiers import load_kv_tiers, system_tiers


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def tiers():
    return load_kv_tiers()


def _model(catalog, name="llama-3.3-70b"):
    m = catalog.model(name)
    return dict(active_params=m["active_matmul_params"],
                attention_flop_per_context_token=m["attention_flop_per_context_token_prefill"],
                num_global_layers=m["num_global_layers"]), m


def test_ninety_percent_of_a_64k_prompt_from_hbm_cuts_ttft_and_prefill_gpu_seconds_by_80_percent(catalog):
    facts, m = _model(catalog)
    h = catalog.accelerator("h100-sxm")
    rate = 8 * h["fp8_peak_flop_per_s"] * 0.5  # TP8, an MFU of 0.5 (the ratio does not depend on it)
    prompt, cached = 65536, 0.9 * 65536
    full_flop = prefill_flop(prompt, 0, **facts)
    suffix_flop = prefill_flop(prompt - cached, cached, **facts)
    prefix_flop = prefill_flop(cached, 0, **facts)
    kv_per_token = 2 * m["num_layers"] * m["num_kv_heads"] * 128 * 1.0  # fp8 KV
    ttft_hit, loaded = cache_hit_ttft_s(cached * kv_per_token, h["hbm_bandwidth_bytes_per_s"], prefix_flop / rate,
                                        suffix_flop / rate, resident=True)
    ttft_none = full_flop / rate
    assert bool(loaded) and ttft_hit <= 0.2 * ttft_none
    assert suffix_flop <= 0.2 * full_flop  # prefill GPU-seconds at one FLOP rate
    assert suffix_flop > 0.1 * full_flop   # the new tokens still attend to the whole cached prefix
    # the cached token is not free: HBM storage for the reuse interval + reading it
    gh = 3.0
    total, storage, load = cached_token_cost_usd(kv_per_token, hbm_usd_per_gb_hour(gh, h["hbm_capacity_bytes"], 0.9),
                                                 60.0, h["hbm_bandwidth_bytes_per_s"], gh)
    assert storage > 0 and load > 0 and total == pytest.approx(storage + load)


def test_a_prefix_far_away_is_recomputed_when_that_is_faster():
    ttft, loaded = cache_hit_ttft_s(1e12, 1e9, prefix_recompute_s=2.0, suffix_prefill_s=0.5)
    assert not loaded and ttft == pytest.approx(2.5)
    ttft, loaded = cache_hit_ttft_s(1e9, 1e11, prefix_recompute_s=2.0, suffix_prefill_s=0.5)
    assert loaded and ttft == pytest.approx(0.51)


def _caps(catalog, tiers, hw, hbm_free):
    sys_ = system_tiers(tiers, hw)
    return (np.array([hbm_free] + [t["capacity_bytes"] for t in sys_]),
            np.array([catalog.accelerator(hw)["hbm_bandwidth_bytes_per_s"]] + [t["read_bytes_per_s"] for t in sys_]),
            sys_)


def test_gb200_spills_to_grace_before_nvme_and_holds_more_sequences(catalog, tiers):
    hbm_free = 60e9
    cap, bw, sys_ = _caps(catalog, tiers, "gb200-nvl72", hbm_free)
    assert "Grace" in sys_[0]["medium"] and "C2C" in sys_[0]["medium"]
    working = 200e9  # more than the HBM left beside the weights, less than HBM + Grace
    placed, overflow = place_kv(working, cap)
    assert overflow == 0 and placed[0] == hbm_free and placed[1] == pytest.approx(working - hbm_free)
    assert placed[2] == 0 and placed[3] == 0  # NVMe untouched while Grace has room
    assert TIERS[int(spill_tier(working, cap))] == "host"
    assert TIERS[int(spill_tier(500e9, cap))] == "nvme"  # beyond HBM + Grace (60 + 240 GB)
    held = sequences_held(cap, 2e9)
    assert held[0] == 30 and held[1] == 150 and held[1] > held[0]


def test_hgx_h100_spills_to_pcie_host_memory_at_its_lower_bandwidth(catalog, tiers):
    cap_h, bw_h, sys_h = _caps(catalog, tiers, "h100-sxm", 20e9)
    cap_g, bw_g, _ = _caps(catalog, tiers, "gb200-nvl72", 20e9)
    assert "PCIe" in sys_h[0]["medium"]
    assert TIERS[int(spill_tier(100e9, cap_h))] == "host"
    assert bw_h[1] < bw_g[1] < bw_h[0]  # PCIe Gen5 63 GB/s < Grace C2C share 225 GB/s < HBM
    assert transfer_time_s(10e9, bw_h[1]) > 3 * transfer_time_s(10e9, bw_g[1])


def test_bad_tier_inputs_name_the_field_value_and_range():
    with pytest.raises(InvalidInputError, match=r"tier read_bytes_per_s=0 is outside \(0, inf\] \(B/s\)"):
        transfer_time_s(1e9, 0.0)
    with pytest.raises(InvalidInputError, match=r"tier read_bytes_per_s=-5 is outside"):
        cached_token_cost_usd(1e5, 1e-4, 60.0, -5.0, 3.0)
    with pytest.raises(InvalidInputError, match=r"tier capacity_bytes=-1\.0 is outside \[0, inf\]"):
        place_kv(1e9, np.array([-1.0, 1e9]))
    with pytest.raises(InvalidInputError, match="reuse_interval_s=-1"):
        cached_token_cost_usd(1e5, 1e-4, -1.0, 1e9, 3.0)


def test_every_tier_row_is_sourced_with_a_positive_bandwidth(tiers):
    assert (tiers["read_gb_per_s_per_accelerator"] > 0).all()
    assert tiers["source"].str.len_chars().min() > 20 and tiers["as_of"].is_not_null().all()
    assert {"gb200-nvl72", "gb300-nvl72", "h100-sxm", "default"} <= set(tiers["hardware"])


def test_a_zero_bandwidth_row_in_the_file_is_a_data_error(tmp_path):
    from econ.errors import DataError
    from econ.tables.catalog import DEFAULT_DATA_DIR

    text = (DEFAULT_DATA_DIR / "kv_tiers.csv").read_text().replace(",256,63,", ",256,0,", 1)
    (tmp_path / "kv_tiers.csv").write_text(text)
    with pytest.raises(DataError, match="read_gb_per_s_per_accelerator"):
        load_kv_tiers(tmp_path)
