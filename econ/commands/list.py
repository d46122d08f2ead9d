"""``econ list models|hardware|regions|facilities|roadmap|kv-tiers``: what the catalog holds.

``roadmap`` lists the announced parts of ``data/roadmap_accelerators.csv`` (never in the priced catalog: status,
as-of date and caveat shown), ``kv-tiers`` the KV-cache tiers of ``data/kv_tiers.csv`` (issue 22)."""

from __future__ import annotations

from econ.commands._common import add_data_dir, catalog_from, render

VIEWS = {
    "models": ("models", ["id", "display_name", "total_params_b", "active_params_b", "attention_type", "num_layers",
                          "num_experts", "experts_per_token", "max_context_tokens", "as_of"]),
    "hardware": ("accelerators", ["id", "display_name", "bf16_dense_tflop_per_s", "fp8_dense_tflop_per_s",
                                  "fp4_dense_tflop_per_s", "hbm_capacity_gib", "hbm_bandwidth_tb_per_s", "tdp_w",
                                  "scale_up_domain_size", "scale_up_topology", "all_in_capex_usd",
                                  "rental_usd_per_hour", "as_of"]),
    "regions": ("power_prices", ["region_id", "region", "segment", "usd_per_kwh", "period", "as_of"]),
    "facilities": ("facilities", ["id", "description", "pue", "build_usd_per_mw_it", "cooling", "as_of"]),
    "roadmap": ("roadmap", ["id", "display_name", "status", "announced_on", "expected_availability",
                            "bf16_dense_tflop_per_s", "fp8_dense_tflop_per_s", "fp4_dense_tflop_per_s",
                            "hbm_capacity_gib", "hbm_bandwidth_tb_per_s", "as_of", "remark"]),
    "kv-tiers": ("kv_tiers", ["id", "hardware", "tier", "medium", "capacity_gb_per_accelerator",
                              "read_gb_per_s_per_accelerator", "usd_per_gb_hour", "as_of"]),
}


def register(sub) -> None:
    p = sub.add_parser("list", help="list catalog ids: models, hardware, regions, facilities, roadmap, kv-tiers")
    p.add_argument("what", choices=tuple(VIEWS))
    p.add_argument("--format", default="table", choices=("table", "csv", "json"))
    add_data_dir(p)
    p.set_defaults(func=run)


def run(args) -> int:
    table, cols = VIEWS[args.what]
    catalog = catalog_from(args)
    if table == "roadmap":
        from econ.tables.roadmap import load_roadmap
        frame = load_roadmap(catalog.data_dir)
    elif table == "kv_tiers":
        from econ.tables.kv_tiers import load_kv_tiers
        frame = load_kv_tiers(catalog.data_dir)
    else:
        frame = getattr(catalog, table)
    render(frame.select(cols), args.format, vertical_if_single=False)
    return 0
