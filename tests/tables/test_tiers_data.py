"""Issue 10 data groundwork: cost tiers per accelerator, one capex basis, quote columns, provider disclosures.

Known answers are the published figures themselves: SemiAnalysis's owning cost at large hyperscaler volume
(``costh`` of the July 2026 AI Cloud TCO Model as the InferenceX app imports it, SemiAnalysisAI/InferenceX-app PR
#661: H100 1.17, H200 1.22, B200 1.73, GB200 1.86 $/GPU-hour; it was 1.30 / 1.41 / 1.95 / 2.21 in the earlier
model) and DeepSeek's "Day 6 - One More Thing" serving statistics (2025-03-01).
"""

import re

import polars as pl
import pytest

from econ.tables.catalog import (CAPEX_BASES, COMMON_CAPEX_BASES, COMMON_CAPEX_BASIS, DEFAULT_DATA_DIR, MARKET_DERIVED,
                                 RENTAL_TIERS, TABLES, load_catalog, read_raw_csv)
from econ.errors import DataError

AS_OF = re.compile(r"^~?\d{4}(-\d{2}(-\d{2})?)?$")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def acc(catalog):
    return catalog.accelerators


# ------------------------------------------------------------------------------------------ accelerators

@pytest.mark.parametrize("hw, usd", [("h100-sxm", 1.17), ("h200-sxm", 1.22), ("b200", 1.73), ("gb200-nvl72", 1.86)])
def test_hyperscaler_tier_is_the_inferencex_figure(catalog, hw, usd):
    assert catalog.accelerator(hw)["tco_hyperscaler_usd_per_hour"] == pytest.approx(usd, abs=1e-9)


def test_other_sourced_tiers_spot_checks(catalog):
    h = catalog.accelerator("h100-sxm")
    assert (h["tco_neocloud_usd_per_hour"], h["rental_3yr_usd_per_hour"], h["sa_all_in_power_w"]) == (1.55, 2.00, 1730)
    # the median of five 2026 hyperscaler list prices (AWS 6.88 after its June-2025 cut ... Azure 12.29)
    assert (h["rental_on_demand_hyperscaler_usd_per_hour"], h["rental_contract_usd_per_hour"]) == (10.0, 4.86)
    assert catalog.accelerator("h800-sxm")["rental_contract_usd_per_hour"] == 2.00  # DeepSeek's stated lease
    assert catalog.accelerator("mi355x")["tco_hyperscaler_usd_per_hour"] == 1.50
    assert catalog.accelerator("tpu7x-ironwood")["tco_hyperscaler_usd_per_hour"] == 1.03  # Google-internal basis
    # never guessed: SemiAnalysis publishes no tier for these
    for hw in ("a100-80gb-sxm", "h800-sxm", "tpu-v6e", "trainium2"):
        assert catalog.accelerator(hw)["tco_hyperscaler_usd_per_hour"] is None, hw


def test_tiers_ordered_as_the_source_orders_them(acc):
    sa = acc.filter(pl.col("tco_hyperscaler_usd_per_hour").is_not_null())
    assert sa.height == 10  # the nine GPUs of the InferenceX registry and TPUv7
    both = sa.filter(pl.col("tco_neocloud_usd_per_hour").is_not_null())
    assert both.height == 9 and (both["tco_hyperscaler_usd_per_hour"] < both["tco_neocloud_usd_per_hour"]).all()
    assert (sa["tco_hyperscaler_usd_per_hour"] < sa["rental_3yr_usd_per_hour"]).all()  # renting costs more than owning
    assert (sa["sa_all_in_power_w"] > sa["all_in_power_w"]).all()  # utility (incl. facility) > critical IT


TIER_GROUPS = {
    ("source_tco", "as_of_tco"): ("tco_hyperscaler_usd_per_hour", "tco_neocloud_usd_per_hour",
                                  "rental_3yr_usd_per_hour", "sa_all_in_power_w"),
    ("source_rental_tiers", "as_of_rental_tiers"): ("rental_on_demand_hyperscaler_usd_per_hour",
                                                    "rental_on_demand_neocloud_usd_per_hour",
                                                    "rental_contract_usd_per_hour"),
}


@pytest.mark.parametrize("group", list(TIER_GROUPS), ids=lambda g: g[0])
def test_every_filled_tier_has_a_source_and_date(acc, group):
    src, as_of = group
    filled = acc.filter(pl.any_horizontal(pl.col(c).is_not_null() for c in TIER_GROUPS[group]))
    assert filled.height >= 9
    assert (filled[src].str.len_chars() > 10).all(), filled.filter(pl.col(src).is_null())["id"].to_list()
    assert all(AS_OF.match(a or "") for a in filled[as_of].to_list()), filled[as_of].to_list()
    empty = acc.filter(~pl.any_horizontal(pl.col(c).is_not_null() for c in TIER_GROUPS[group]))
    assert empty[src].null_count() == empty.height  # no orphan sources


def test_contract_rate_states_its_basis(acc):
    c = acc.filter(pl.col("rental_contract_usd_per_hour").is_not_null())
    assert c.height >= 5 and c["rental_contract_basis"].null_count() == 0


def test_legacy_rental_column_names_its_tier(acc):
    has = acc.filter(pl.col("rental_usd_per_hour").is_not_null())
    assert has["rental_tier"].null_count() == 0 and set(has["rental_tier"]) <= RENTAL_TIERS
    same = {"on-demand-neocloud": "rental_on_demand_neocloud_usd_per_hour",
            "on-demand-hyperscaler": "rental_on_demand_hyperscaler_usd_per_hour", "rental-3yr": "rental_3yr_usd_per_hour"}
    for tier, col in same.items():
        rows = has.filter(pl.col("rental_tier") == tier)
        assert (rows["rental_usd_per_hour"] == rows[col]).all(), tier


def test_one_capex_basis_with_flagged_exceptions(acc):
    has = acc.filter(pl.col("all_in_capex_usd").is_not_null())
    assert has["capex_basis"].null_count() == 0 and set(has["capex_basis"]) <= CAPEX_BASES
    assert acc.filter(pl.col("all_in_capex_usd").is_null())["capex_basis"].null_count() == \
        acc.filter(pl.col("all_in_capex_usd").is_null()).height
    flagged = set(has.filter(~pl.col("capex_basis").is_in(list(COMMON_CAPEX_BASES)))["id"])
    assert flagged == {"b300", "l40s", "gaudi3", "h20"}
    assert {"h100-sxm", "h200-sxm", "b200", "mi300x"} <= set(has.filter(pl.col("capex_basis") == COMMON_CAPEX_BASIS)["id"])
    derived = has.filter(pl.col("capex_basis") == MARKET_DERIVED)
    assert set(derived["id"]) == {"gb200-nvl72", "gb300-nvl72", "mi355x", "h100-sxm-4gpu"}
    assert derived["notes"].str.contains("derived").all()  # the arithmetic is stated


@pytest.mark.parametrize("hw, purchase, all_in", [
    # Morgan Stanley OEM-channel rack price / 72 x the system ratio; the rack share is no purchase price (it holds
    # the server, which the itemized build-out would add again)
    ("gb200-nvl72", None, 3_750_000 / 72 * 50_000 / 38_750),
    ("gb300-nvl72", None, 4_000_000 / 72 * 50_000 / 38_750),
    ("mi355x", 23_000, 61_173 * 0.70),  # HSBC: MI350 series at a 30% discount to B200, on the b200 row
    ("h100-sxm-4gpu", None, 50_000),  # the same GPU on the 4-GPU HGX board: h100-sxm's sourced all-in per GPU
])
def test_derived_capex_is_the_stated_arithmetic(catalog, hw, purchase, all_in):
    row = catalog.accelerator(hw)
    assert row["purchase_price_usd"] == (None if purchase is None else pytest.approx(purchase, abs=0.5))
    assert row["all_in_capex_usd"] == pytest.approx(all_in, abs=0.5)


def test_gb200_capex_is_on_the_b200_basis(catalog):
    """Issue 18: GB200 was the cheapest owned GPU-hour only because its capex was a hyperscale estimate. On one
    basis it sits above B200, as SemiAnalysis's owning costs put it (1.86 vs 1.73 $/GPU-hour, July 2026)."""
    gb, b = catalog.accelerator("gb200-nvl72"), catalog.accelerator("b200")
    assert gb["all_in_capex_usd"] > b["all_in_capex_usd"]
    assert gb["tco_hyperscaler_usd_per_hour"] > b["tco_hyperscaler_usd_per_hour"]
    ratio = gb["all_in_capex_usd"] / b["all_in_capex_usd"]
    assert ratio == pytest.approx(gb["tco_hyperscaler_usd_per_hour"] / b["tco_hyperscaler_usd_per_hour"], abs=0.05)


@pytest.mark.parametrize("hw, column, value, pattern", [
    ("b200", "capex_basis", "guess", r"row b200, column capex_basis: 'guess' not in"),
    ("h100-sxm", "tco_hyperscaler_usd_per_hour", "-1.3",
     r"row h100-sxm, column tco_hyperscaler_usd_per_hour: -1.3 is outside"),
    ("mi300x", "scale_up_topology", "ring", r"row mi300x, column scale_up_topology: 'ring' not in"),  # stop 33
])
def test_a_bad_accelerator_cell_names_row_and_column(tmp_path, hw, column, value, pattern):
    import shutil
    for f, _, _ in TABLES.values():
        shutil.copy(DEFAULT_DATA_DIR / f, tmp_path / f)
    df = pl.read_csv(tmp_path / "accelerators.csv", infer_schema=False)
    df.with_columns(pl.when(pl.col("id") == hw).then(pl.lit(value)).otherwise(pl.col(column)).alias(column)
                    ).write_csv(tmp_path / "accelerators.csv")
    with pytest.raises(DataError, match=pattern):
        load_catalog(tmp_path)


# ------------------------------------------------------------------------------------------ provider disclosures

@pytest.fixture(scope="module")
def day6():
    from econ.tables.catalog import PROVIDER_DISCLOSURE_SCHEMA, read_table
    d = read_table(DEFAULT_DATA_DIR / "provider_disclosures.csv", PROVIDER_DISCLOSURE_SCHEMA, "id")
    d = d.filter(pl.col("disclosure") == "deepseek-v3r1-day6")
    return dict(zip(d["item"], d["value"]))


def test_provider_disclosures_load_and_are_sourced(catalog):
    from econ.tables.catalog import PROVIDER_DISCLOSURE_SCHEMA, read_table
    d = read_table(DEFAULT_DATA_DIR / "provider_disclosures.csv", PROVIDER_DISCLOSURE_SCHEMA, "id")
    assert d.height >= 20
    assert (d["value"].is_not_null() | d["value_text"].is_not_null()).all()
    assert d["source"].str.contains("open-infra-index").all() and (d["as_of"] == "2025-03-01").all()
    assert set(d["model"].drop_nulls()) <= set(catalog.models["id"])
    assert set(d["hardware"].drop_nulls()) <= set(catalog.accelerators["id"])


def test_deepseek_day6_figures_are_the_published_ones(day6):
    assert (day6["gpu_lease_usd_per_gpu_hour"], day6["nodes_average"], day6["nodes_peak"]) == (2, 226.75, 278)
    assert (day6["input_tokens_per_day"], day6["cached_input_tokens_per_day"], day6["output_tokens_per_day"]) == \
        (608e9, 342e9, 168e9)
    assert (day6["price_usd_per_m_cached_input_tokens"], day6["price_usd_per_m_input_tokens"],
            day6["price_usd_per_m_output_tokens"]) == (0.14, 0.55, 2.19)
    assert (day6["cost_usd_per_day"], day6["theoretical_revenue_usd_per_day"]) == (87072, 562027)


def test_deepseek_day6_figures_are_consistent(day6):
    """The disclosure's own arithmetic: cost = nodes x 8 x 24 h x $2; revenue from R1 prices; 545% = profit / cost."""
    cost = day6["nodes_average"] * day6["gpus_per_node"] * 24 * day6["gpu_lease_usd_per_gpu_hour"]
    assert cost == pytest.approx(day6["cost_usd_per_day"], rel=1e-12)
    miss = day6["input_tokens_per_day"] - day6["cached_input_tokens_per_day"]
    revenue = (day6["cached_input_tokens_per_day"] * day6["price_usd_per_m_cached_input_tokens"]
               + miss * day6["price_usd_per_m_input_tokens"]
               + day6["output_tokens_per_day"] * day6["price_usd_per_m_output_tokens"]) / 1e6
    assert revenue == pytest.approx(day6["theoretical_revenue_usd_per_day"], rel=1e-3)  # 342B is rounded
    margin = (day6["theoretical_revenue_usd_per_day"] - cost) / cost
    assert margin == pytest.approx(day6["cost_profit_margin_frac"], rel=1e-2)
    assert day6["cached_input_tokens_per_day"] / day6["input_tokens_per_day"] == pytest.approx(day6["cache_hit_frac"], abs=5e-4)
    per_m = cost / ((day6["input_tokens_per_day"] + day6["output_tokens_per_day"]) / 1e6)
    assert per_m == pytest.approx(0.112, abs=5e-4)  # issue 10's known answer for the P&L calculator


# ------------------------------------------------------------------------------------------ model aliases

@pytest.fixture(scope="module")
def aliases():
    return read_raw_csv(DEFAULT_DATA_DIR / "model_aliases.csv")


def test_aliases_map_to_catalog_models_and_are_sourced(catalog, aliases):
    assert aliases.columns[:4] == ["alias", "model", "provider", "kind"] and {"source", "as_of"} <= set(aliases.columns)
    assert aliases.height >= 300
    assert set(aliases["model"]) <= set(catalog.models["id"])
    assert aliases["alias"].str.to_lowercase().is_unique().all()  # the importer matches case-insensitively
    assert aliases["source"].null_count() == 0 and all(AS_OF.match(a) for a in aliases["as_of"])
    assert set(aliases["kind"]) == {"litellm-key", "provider-model-name"}


def test_every_shipped_quote_name_has_its_alias(aliases):
    quotes = read_raw_csv(DEFAULT_DATA_DIR / "quotes.csv")
    table = dict(zip(aliases["alias"].str.to_lowercase(), aliases["model"]))
    for name, model in quotes.select("provider_model_name", "model").iter_rows():
        assert table[name.lower()] == model, name


@pytest.mark.parametrize("alias, model", [
    ("together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo", "llama-3.3-70b"),
    ("fireworks_ai/accounts/fireworks/models/qwen3-235b-a22b-instruct-2507", "qwen3-235b-a22b"),
    ("deepinfra/deepseek-ai/DeepSeek-R1-0528", "deepseek-r1"),
    ("cerebras/gpt-oss-120b", "gpt-oss-120b"),
])
def test_common_litellm_variants(aliases, alias, model):
    assert dict(zip(aliases["alias"], aliases["model"]))[alias] == model


def test_different_models_are_not_aliased(aliases):
    names = set(aliases["alias"].str.to_lowercase())
    for other in ("fireworks_ai/accounts/fireworks/models/deepseek-v3p2", "together_ai/moonshotai/kimi-k2.6",
                  "mistral/mistral-large-latest", "deepinfra/nousresearch/hermes-3-llama-3.1-70b"):
        assert other not in names, other


# ------------------------------------------------------------------------------------------ quotes columns

NON_GPU_HARDWARE = {"groq-lpu", "cerebras-wse-3", "sambanova-sn40l"}


@pytest.fixture(scope="module")
def quotes(catalog):
    from econ.tables.quote_files import read_quotes
    return read_quotes(DEFAULT_DATA_DIR / "quotes.csv", catalog)


def test_turbo_llama_quotes_are_fp8(quotes):
    turbo = quotes.filter(pl.col("provider").is_in(["deepinfra", "together"])
                          & pl.col("provider_model_name").str.contains("(?i)turbo")
                          & pl.col("model").str.starts_with("llama"))
    assert turbo.height >= 5
    assert (turbo["weight_format"] == "fp8").all()
    # by the rule, or stated by the provider's own page (data/provider_speeds.csv: Together's and DeepInfra's tables)
    from econ.tables.quote_files import load_provider_speeds
    stated = dict(load_provider_speeds().select("quote_id", "weight_format").drop_nulls().iter_rows())
    for qid, basis in turbo.select("quote_id", "weight_format_basis").iter_rows():
        assert basis == ("provider-stated" if qid in stated else "slug-turbo"), qid
        assert stated.get(qid, "fp8") == "fp8", qid


def test_weight_format_rule(catalog, quotes):
    from econ.tables.quote_files import FP8_RELEASES, load_provider_speeds
    native = dict(zip(catalog.models["id"], catalog.models["native_weight_dtype"]))
    stated = dict(load_provider_speeds().select("quote_id", "weight_format").drop_nulls().iter_rows())

    def own_fp8(fmt, model):  # fp8 of a model released in 128 x 128 block-scaled FP8 is that release's format
        return "fp8_block" if fmt == "fp8" and native[model] == "fp8_block" else fmt

    for r in quotes.iter_rows(named=True):
        name = r["provider_model_name"].lower()
        if r["weight_format_basis"] == "provider-stated":  # a sourced row of provider_speeds.csv, or the quote's notes
            assert own_fp8(stated.get(r["quote_id"]), r["model"]) == r["weight_format"] \
                or ("provider" in r["notes"] and "http" in r["notes"])
            continue
        want = ("fp8" if "turbo" in name or "fp8" in name else "mxfp4" if r["model"].startswith("gpt-oss")
                else "fp8" if r["model"] in FP8_RELEASES else native[r["model"]])
        assert r["weight_format"] == own_fp8(want, r["model"]), r["quote_id"]
        if r["quantization"]:  # the provider's stated precision and the assumed format never disagree
            assert own_fp8(r["quantization"], r["model"]) == r["weight_format"], r["quote_id"]
    # DeepSeek served "in FP8" is its block-scaled release
    assert set(quotes.filter(pl.col("model").is_in(["deepseek-v3", "deepseek-r1"]))["weight_format"]) <= \
        {"fp8_block", "nvfp4", "int4", "bf16"}


def test_every_filled_speed_is_sourced_and_dated(quotes):
    fast = quotes.filter(pl.col("output_tokens_per_s_per_user").is_not_null() | pl.col("ttft_s").is_not_null())
    assert fast.height >= 14
    assert (fast["speed_source"].str.len_chars() > 20).all()
    assert all(AS_OF.match(a or "") for a in fast["speed_as_of"].to_list())
    assert quotes.filter(pl.col("output_tokens_per_s_per_user").is_null())["speed_source"].null_count() == \
        quotes.filter(pl.col("output_tokens_per_s_per_user").is_null()).height
    ds = quotes.filter(pl.col("provider") == "deepseek")
    assert (ds["output_tokens_per_s_per_user"] == 20).all() and (ds["hardware"] == "h800-sxm").all()


def test_provider_hardware_is_known_and_sourced(catalog, quotes):
    hw = quotes.filter(pl.col("hardware").is_not_null())
    assert set(hw["hardware"]) <= set(catalog.accelerators["id"]) | NON_GPU_HARDWARE
    assert hw["hardware_source"].null_count() == 0
    by_provider = dict(hw.select("provider", "hardware").unique().iter_rows())
    assert (by_provider["groq"], by_provider["cerebras"], by_provider["sambanova"]) == \
        ("groq-lpu", "cerebras-wse-3", "sambanova-sn40l")
    fast = quotes.filter(pl.col("output_tokens_per_s_per_user") >= 800)  # no GPU quote claims this speed
    assert set(fast["hardware"]) <= NON_GPU_HARDWARE


def test_bad_weight_format_names_row_and_column(catalog):
    from econ.tables.quote_files import validate_quotes
    raw = pl.DataFrame({"quote_id": ["q1"], "provider": ["x"], "model": ["llama-3.1-8b"],
                        "usd_per_m_input_tokens": ["0.1"], "usd_per_m_output_tokens": ["0.2"], "weight_format": ["fp6"]})
    with pytest.raises(DataError, match=r"row\(s\) q1, column weight_format: 'fp6' is not one of"):
        validate_quotes(raw, catalog)


def test_provider_systems_describe_every_non_gpu_hardware_id():
    ps = read_raw_csv(DEFAULT_DATA_DIR / "provider_systems.csv")
    assert set(ps["id"]) == NON_GPU_HARDWARE and ps["id"].is_unique().all()
    assert ps["source"].null_count() == 0 and all(AS_OF.match(a) for a in ps["as_of"])
    assert (ps["gpu_comparable"] == "false").all()
    assert ps["system_price_usd"].null_count() == ps.height and ps["cost_basis"].null_count() == 0  # nothing guessed
    g = ps.filter(pl.col("id") == "groq-lpu").row(0, named=True)
    assert (float(g["sram_capacity_gb"]), float(g["sram_bandwidth_tb_per_s"])) == (0.23, 80.0)
    c = ps.filter(pl.col("id") == "cerebras-wse-3").row(0, named=True)
    assert (float(c["sram_capacity_gb"]), float(c["sram_bandwidth_tb_per_s"])) == (44.0, 21000.0)
