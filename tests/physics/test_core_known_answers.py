"""Known answers of the core model, from the seeds (../shared/seeds/) and DESIGN.md.

Tolerances: the seeds print 3-4 significant figures; a relative tolerance of 2e-3 covers their
rounding. Where our count differs from the seed's by a documented convention (the untied input
embedding is gathered, not streamed), both conventions are asserted.
"""

from dataclasses import replace

import numpy as np
import polars as pl
import pytest

from econ.assumptions import IDEAL
from econ.tables.catalog import load_catalog
from econ.physics.memory import min_gpus_for_weights, weight_bytes_resident
from econ.physics.performance import ridge_point_flop_per_byte, sweet_spot_batch_rule_of_thumb
from econ.engine import evaluate
from econ.analyses.sweep import cost_table
from econ.economics.tco import capital_recovery_factor


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _one(catalog, assumptions=IDEAL, **kw):
    base = dict(model="llama-3.1-8b", hardware="h100-sxm", precision="bf16", batch_size=1, num_gpus=1,
                input_len=1, output_len=1, context_tokens=1)
    base.update(kw)
    return evaluate(pl.DataFrame([base]), catalog, assumptions).row(0, named=True)


@pytest.mark.parametrize("peak, bw, ridge", [
    pytest.param(989e12, 3.35e12, 295.2, id="h100-bf16[seed001-eq4]"),
])
def test_ridge_point(peak, bw, ridge):
    assert ridge_point_flop_per_byte(peak, bw) == pytest.approx(ridge, abs=0.05)


def test_h100_ridge_from_catalog(catalog):
    h = catalog.accelerator("h100-sxm")
    assert ridge_point_flop_per_byte(h["bf16_peak_flop_per_s"], h["hbm_bandwidth_bytes_per_s"]) == pytest.approx(295.2, abs=0.05)


def test_llama_8b_weight_bytes(catalog):
    m = catalog.model("llama-3.1-8b")
    assert m["total_params"] == pytest.approx(8.03e9, rel=2e-3)
    w = weight_bytes_resident(m["total_params"], m["embedding_params"], m["lm_head_params"], 2.0)
    assert w == pytest.approx(16.06e9, rel=2e-3)  # seed 001: "16.1 GB for a 8B-parameter model in BF16"


@pytest.mark.parametrize("stream, tokens_per_s, weights_read_gb", [
    pytest.param(True, 208.6, 16.06, id="stream-every-weight[seed001: 208.6 tok/s]"),
    pytest.param(False, 223.2, 15.01, id="gather-embedding-rows[physical default: ~223 tok/s]"),
])
def test_llama_8b_h100_batch1_ideal(catalog, stream, tokens_per_s, weights_read_gb):
    r = _one(catalog, replace(IDEAL, stream_input_embedding=stream))
    assert r["binding_wall"] == "memory"
    # intermediate: t_mem is the bytes read over 3.35 TB/s
    assert r["t_mem_s"] == pytest.approx(weights_read_gb * 1e9 / 3.35e12, rel=2e-3)
    assert r["tokens_per_s_per_user"] == pytest.approx(tokens_per_s, rel=2e-3)
    assert r["output_tokens_per_s_per_gpu"] == pytest.approx(tokens_per_s, rel=2e-3)
    # ~1 FLOP per byte (seed 001): 2 FLOP per weight, 2 bytes per weight
    assert r["arithmetic_intensity_flop_per_byte"] == pytest.approx(1.0, abs=0.07)


def test_sweet_spot_dense_is_ridge(catalog):
    """Dense bf16: decode turns compute-bound at B ~ ridge (295), the seeds' rule of thumb."""
    r = _one(catalog, IDEAL)
    h = catalog.accelerator("h100-sxm")
    rule = sweet_spot_batch_rule_of_thumb(h["bf16_peak_flop_per_s"], h["hbm_bandwidth_bytes_per_s"], 1.0, 1.0)
    assert rule == pytest.approx(295.2, abs=0.1)
    frame = evaluate(pl.DataFrame([dict(model="llama-3.1-8b", hardware="h100-sxm", precision="bf16", batch_size=1,
                                        num_gpus=1, input_len=1, output_len=1, context_tokens=1)]),
                     catalog, IDEAL, sweet_spot=True)
    assert frame["sweet_spot_batch"][0] == pytest.approx(295.2, rel=0.02)
    assert r["binding_wall"] == "memory"


def test_sweet_spot_deepseek_inverse_sparsity(catalog):
    """DeepSeek-V3 on H100: B* ~ 295 x 671/37 ~ 5,350 (seed 002, 'B = 300 x inverse sparsity')."""
    h = catalog.accelerator("h100-sxm")
    rule = sweet_spot_batch_rule_of_thumb(h["bf16_peak_flop_per_s"], h["hbm_bandwidth_bytes_per_s"], 671, 37)
    assert rule == pytest.approx(295.2 * 671 / 37, rel=1e-3)
    # Full model (touched experts, MLA, attention at context 1) on one 8-GPU domain: within 10% of the rule.
    # (The crossover is a property of the arithmetic; 8 x H100 cannot hold the weights, which
    # evaluate reports separately as the capacity wall. With pp stages it moves to pp x B*.)
    # The rule is about plain decoding (no MTP draft) at the FP8 peak: per-tensor FP8 weights (DeepSeek's own
    # 128 x 128 block-scaled release runs its expert GEMMs at 0.57x that peak on Hopper, which moves B* down).
    frame = evaluate(pl.DataFrame([dict(model="deepseek-v3", hardware="h100-sxm", precision="fp8", batch_size=1,
                                        num_gpus=8, input_len=1, output_len=1, context_tokens=1, spec_method="none",
                                        weight_format="fp8")]),
                     catalog, IDEAL, sweet_spot=True)
    assert frame["sweet_spot_batch"][0] == pytest.approx(rule, rel=0.10)


def test_700b_fp8_needs_nine_h100(catalog):
    h = catalog.accelerator("h100-sxm")
    assert min_gpus_for_weights(700e9 * 1.0, h["hbm_capacity_bytes"]) == 9  # seed 002
    assert 8 * h["hbm_capacity_gib"] == 640  # HGX H100
    nvl = catalog.accelerator("gb200-nvl72")
    assert nvl["scale_up_domain_size"] == 72
    assert 72 * 192e9 == pytest.approx(13.8e12, rel=2e-3)  # seed 002: "72 x 192 GB ~ 13.8 TB"


def test_power_known_answer():
    from econ.physics.fleet import facility_power_w, it_power_w
    it = it_power_w(10_000, 700.0)
    assert it == pytest.approx(7e6)
    assert facility_power_w(it, 1.40) == pytest.approx(9.8e6)


def test_capital_recovery_factor():
    assert capital_recovery_factor(0.10, 5) == pytest.approx(0.2637975, rel=1e-6)
    assert capital_recovery_factor(0.0, 4) == pytest.approx(0.25, rel=1e-9)
    assert capital_recovery_factor(np.array([0.05, 0.10]), 5) == pytest.approx([0.2309748, 0.2637975], rel=1e-6)


def test_owned_gpu_hour_by_hand(catalog):
    """$/GPU-hour recomputed by hand from the DESIGN.md formula for H100."""
    from econ.assumptions import Economics
    e = Economics(usd_per_kwh=0.10, pue=1.3, build_usd_per_mw_it=10e6, cost_of_capital_frac=0.10,
                  accelerator_life_years=5, facility_life_years=15, opex_frac_of_capex_per_year=0.05,
                  utilization_frac=0.8)
    h = catalog.accelerator("h100-sxm")
    row = evaluate(pl.DataFrame([dict(model="llama-3.1-8b", hardware="h100-sxm", precision="bf16", batch_size=8,
                                      num_gpus=1)]), catalog, economics=e).row(0, named=True)
    crf5, crf15 = capital_recovery_factor(0.10, 5), capital_recovery_factor(0.10, 15)
    hours = 8760 * 0.8
    by_hand = (h["all_in_capex_usd"] * crf5 + 10e6 * h["all_in_power_w"] / 1e6 * crf15
               + 0.05 * h["all_in_capex_usd"]) / hours + h["all_in_power_w"] / 1000 * 1.3 * 0.10
    assert row["usd_per_gpu_hour"] == pytest.approx(by_hand, rel=1e-12)
    assert row["usd_per_m_output_tokens"] == pytest.approx(
        by_hand / (3600 * row["output_tokens_per_s_per_gpu"]) * 1e6, rel=1e-12)
    blended = (3 * row["usd_per_m_input_tokens"] + row["usd_per_m_output_tokens"]) / 4
    assert row["usd_per_m_blended_tokens"] == pytest.approx(blended, rel=1e-12)


def test_rental_gpu_hour(catalog):
    from econ.assumptions import Economics
    h = catalog.accelerator("h100-sxm")
    row = evaluate(pl.DataFrame([dict(model="llama-3.1-8b", hardware="h100-sxm", precision="bf16", batch_size=8)]),
                   catalog, economics=Economics(basis="rental", utilization_frac=0.5)).row(0, named=True)
    assert row["usd_per_gpu_hour"] == pytest.approx(h["rental_usd_per_hour"] / 0.5, rel=1e-12)
    assert row["usd_per_gpu_hour_capex"] == 0.0


def test_kv_bytes_per_token(catalog):
    """GQA: 2 L h_kv d_h b; MLA: L (r_kv + d_rope) b (DESIGN.md)."""
    from econ.physics.architecture import kv_bytes_per_sequence
    m = catalog.model("llama-3.1-8b")
    kv = kv_bytes_per_sequence(1, m["kv_elements_per_token_per_layer"], 2.0, m["num_global_layers"],
                               m["num_sliding_layers_eff"], m["sliding_window_tokens_eff"])
    assert kv == 2 * 32 * 8 * 128 * 2  # 131,072 B/token
    d = catalog.model("deepseek-v3")
    kv = kv_bytes_per_sequence(1, d["kv_elements_per_token_per_layer"], 1.0, d["num_global_layers"],
                               d["num_sliding_layers_eff"], d["sliding_window_tokens_eff"])
    assert kv == 61 * 576  # fp8 latent
    g = catalog.model("gpt-oss-120b")  # 18 sliding layers of 128 tokens, 18 global
    kv_long = kv_bytes_per_sequence(10_000, g["kv_elements_per_token_per_layer"], 2.0, g["num_global_layers"],
                                    g["num_sliding_layers_eff"], g["sliding_window_tokens_eff"])
    assert kv_long == (18 * 10_000 + 18 * 128) * 2 * 8 * 64 * 2


@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.3-70b",
                                      "deepseek-v3", "qwen3-235b-a22b", "qwen3-30b-a3b", "mixtral-8x7b",
                                      "gpt-oss-120b", "kimi-k2", "llama-4-maverick"])
def test_param_counts_match_vendor(catalog, model_id):
    """Counting from config.json lands within 3% of the vendor total (and 12% of active)."""
    m = catalog.model(model_id)
    assert m["total_params"] == pytest.approx(m["total_params_b"] * 1e9, rel=0.03)
    active_incl_embed = m["active_matmul_params"] + m["embedding_params"] * (m["lm_head_params"] > 0)
    assert active_incl_embed == pytest.approx(m["active_params_b"] * 1e9, rel=0.12)


def test_cost_table_auto_batch_and_walls(catalog):
    t = cost_table(catalog, model="llama-3.1-70b", hardware="h100-sxm", precision="fp8", num_gpus=4)
    r = t.row(0, named=True)
    assert 1 <= r["batch_size"] <= r["max_batch_size"]
    assert r["feasible"] and r["binding_wall"] in ("memory", "compute", "network")
    over = cost_table(catalog, model="llama-3.1-70b", hardware="h100-sxm", precision="fp8", num_gpus=4,
                      batch_sizes=[r["max_batch_size"] + 1])
    assert not over["feasible"][0]
    assert over["binding_wall"][0] == "capacity"
    assert over["usd_per_m_output_tokens"][0] is None  # never silently priced
