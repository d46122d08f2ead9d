"""Why econ's default owned GPU-hour sits above SemiAnalysis's owning cost: the same formula, step by step.

The default tier of every answer is *owned* (``econ.vocabulary.Tier.OWNED``): econ's own capex + facility +
opex + power chain (:func:`econ.economics.tco.gpu_hour_cost_components`) on the catalog's capex. For an H100 it
gives $2.19 per hour of the fleet's existence, against SemiAnalysis's $1.42 (2025-08-20) and $1.17 (July 2026,
owning at large hyperscaler volume). :func:`owned_vs_semianalysis` re-prices the same H100 with one input
changed at a time, so a reader sees which assumption makes the gap; :func:`explanation` says it in words (the
README and the Assumptions page show it).

The steps (sources in :data:`STEP_SOURCES`):

1. econ's default: the catalog's all-in capex (market-listing basis, $50,000 for an H100: a non-hyperscale
   buyer's 2024 price), 5-year life, 10% cost of capital, 5% opex, the default power price and PUE;
2. SemiAnalysis's capex instead: a typical hyperscaler's $250k per 8-GPU H100 server all-in, $31,250 per GPU;
3. and a longer life, cheaper capital, lighter opex: 6 years (CoreWeave's depreciation), 8%, 2% per year.
   Illustrative values: SemiAnalysis does not publish the life or cost of capital behind its figure.
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from econ.assumptions import Economics
from econ.economics.tco import usd_per_gpu_hour_owned
from econ.tables.catalog import Catalog

SA_H100_ALL_IN_CAPEX_USD = 250_000 / 8
"""SemiAnalysis, "H100 vs GB200 NVL72 training benchmarks" (2025-08-20): "the total upfront capital cost per server
comes up to $250k for a typical hyperscaler" (storage, networking and other items included; no building), per
8-GPU H100 server, / 8 (derived). [USD per GPU]"""

SA_H100_OWNING_USD_PER_HOUR_2025 = 1.42
"""SemiAnalysis (same article): H100 cost of ownership per GPU-hour for a hyperscaler, excluding rental margin.
[USD per hour of existence]"""

ILLUSTRATIVE = dict(accelerator_life_years=6.0, cost_of_capital_frac=0.08, opex_frac_of_capex_per_year=0.02)
"""Step 3: CoreWeave depreciates GPU servers over 6 years (10-K, as quoted in filings research); 8% and 2% are
illustrative choices inside the ranges of econ.vocabulary.SENSITIVITY_RANGES, not SemiAnalysis's inputs."""

STEP_SOURCES: dict[str, str] = {
    "econ default": "accelerators.csv all_in_capex_usd (market-listing, E. Cheah Aug-2024 H100 cluster build) and "
                    "the Economics defaults (econ.vocabulary.FIELDS)",
    "SemiAnalysis capex": "https://newsletter.semianalysis.com/p/h100-vs-gb200-nvl72-training-benchmarks "
                          "(2025-08-20): $250k all-in per 8-GPU H100 server for a typical hyperscaler",
    "longer life, cheaper capital": "6-year life: CoreWeave's GPU server depreciation (10-K); 8% capital and 2% "
                                    "opex: illustrative",
}


def owned_usd_per_hour_of_existence(all_in_capex_usd: float, all_in_power_w: float, economics: Economics) -> float:
    """econ's owned cost of one accelerator per hour of the fleet's existence (fixed parts every hour, power while
    serving): :func:`econ.economics.tco.usd_per_gpu_hour_owned` x utilization. [USD/h]"""
    e = economics
    per_utilized = usd_per_gpu_hour_owned(all_in_capex_usd, all_in_power_w, e.build_usd_per_mw_it, e.pue,
                                          e.usd_per_kwh, e.cost_of_capital_frac, e.accelerator_life_years,
                                          e.facility_life_years, e.opex_frac_of_capex_per_year, e.utilization_frac)
    return float(per_utilized) * e.utilization_frac


def owned_vs_semianalysis(catalog: Catalog, economics: Economics = Economics(),
                          hardware: str = "h100-sxm") -> pl.DataFrame:
    """econ's owned $/GPU-hour of ``hardware``, then with SemiAnalysis's capex, then with a longer life and cheaper
    capital; and SemiAnalysis's own figures beside them.

    Parameters
    ----------
    catalog : Catalog
    economics : Economics, the scenario's (power price, PUE, build cost, utilization...)
    hardware : str, an accelerator with a capex (the SemiAnalysis capex step is the H100's: other accelerators
        get the steps with their own capex scaled by SemiAnalysis's H100 hyperscale / market ratio)

    Returns
    -------
    pl.DataFrame: ``step``, ``estimate_by`` ("econ" or "SemiAnalysis"), ``all_in_capex_usd`` [USD, null for a reference],
    ``usd_per_gpu_hour`` [USD per hour of existence], ``source``.

    Raises
    ------
    UnknownIdError, InvalidInputError
        An unknown accelerator or one without a capex.
    """
    from econ.errors import InvalidInputError

    hw = catalog.accelerator(hardware)
    capex, power = hw["all_in_capex_usd"], hw["all_in_power_w"]
    if capex is None:
        raise InvalidInputError(f"hardware={hardware} has no all_in_capex_usd in accelerators.csv (not sold)")
    h100 = catalog.accelerator("h100-sxm")["all_in_capex_usd"]
    sa_capex = capex * SA_H100_ALL_IN_CAPEX_USD / h100
    longer = replace(economics, **ILLUSTRATIVE)
    rows = [
        ("econ default", "econ", capex, owned_usd_per_hour_of_existence(capex, power, economics)),
        ("SemiAnalysis capex", "econ", sa_capex, owned_usd_per_hour_of_existence(sa_capex, power, economics)),
        ("longer life, cheaper capital", "econ", sa_capex, owned_usd_per_hour_of_existence(sa_capex, power, longer)),
    ]
    out = [dict(step=s, estimate_by=k, all_in_capex_usd=c, usd_per_gpu_hour=u, source=STEP_SOURCES[s]) for s, k, c, u in rows]
    if hardware == "h100-sxm":
        out.append(dict(step="SemiAnalysis 2025-08", estimate_by="SemiAnalysis", all_in_capex_usd=None,
                        usd_per_gpu_hour=SA_H100_OWNING_USD_PER_HOUR_2025, source=STEP_SOURCES["SemiAnalysis capex"]))
    for col, label in (("tco_hyperscaler_usd_per_hour", "SemiAnalysis July 2026, hyperscaler"),
                       ("tco_neocloud_usd_per_hour", "SemiAnalysis July 2026, neocloud")):
        if hw[col] is not None:
            out.append(dict(step=label, estimate_by="SemiAnalysis", all_in_capex_usd=None, usd_per_gpu_hour=hw[col],
                            source=f"accelerators.csv {col} ({hw['source_tco'][:60]}...)"))
    return pl.DataFrame(out, schema={"step": pl.String, "estimate_by": pl.String, "all_in_capex_usd": pl.Float64,
                                     "usd_per_gpu_hour": pl.Float64, "source": pl.String})


def explanation(steps: pl.DataFrame) -> str:
    """The paragraph the README and the Assumptions page show, with the numbers of :func:`owned_vs_semianalysis`."""
    v = dict(zip(steps["step"], steps["usd_per_gpu_hour"]))
    c = dict(zip(steps["step"], steps["all_in_capex_usd"]))
    refs = "; ".join(f"${x:.2f} ({k.removeprefix('SemiAnalysis ')})" for k, x, kind in
                     steps.select("step", "usd_per_gpu_hour", "estimate_by").iter_rows() if kind == "SemiAnalysis")
    return (
        f"The default tier is owned: econ's capex + facility + opex + power chain on the catalog's all-in capex. "
        f"For this accelerator it costs ${v['econ default']:.2f} per hour of the fleet's existence, against "
        f"SemiAnalysis's owning cost: {refs}. The capex basis makes most of the gap: the catalog prices it at "
        f"${c['econ default']:,.0f} all-in, a non-hyperscale buyer's market price (for the H100, E. Cheah's 2024 "
        f"cluster build), where SemiAnalysis prices a hyperscaler's H100 at $250k per 8-GPU server "
        f"(${SA_H100_ALL_IN_CAPEX_USD:,.0f} per GPU, 2025-08); that capex alone"
        f"{'' if abs(c['SemiAnalysis capex'] - SA_H100_ALL_IN_CAPEX_USD) < 0.5 else ' (the same hyperscale/market ratio applied to this accelerator)'}"
        f" gives ${v['SemiAnalysis capex']:.2f}. A 6-year life (CoreWeave's depreciation), 8% capital and 2% opex per "
        f"year (illustrative: SemiAnalysis does not publish its life or cost of capital) bring the same formula to "
        f"${v['longer life, cheaper capital']:.2f}. econ keeps the market basis by default because a buyer below "
        f"hyperscale pays it; pick the hyperscaler or neocloud tier (--tco) for SemiAnalysis's figures, and see "
        f"`econ sensitivity` for how far capex, life and cost of capital move an answer.")
