"""Build-out money: capex (all-in or itemized), energy and its bill, revenue, payback, training cost.

Pure kernels over scalars and arrays, plus the itemized build-out (:class:`BuildoutPrices`,
:func:`buildout_capex`, its inverse :func:`gpus_for_capex`). Physical quantities (power, racks, failures,
training FLOPs) come from ``econ.physics.fleet``; the economics defaults (PUE, $/kWh, facility $/MW,
utilization, opex share) from ``econ.assumptions.Economics`` or a named row of ``data/facilities.csv`` /
``data/power_prices.csv`` - never from a constant here. Sizing a cluster from these parts is
``econ.analyses.cluster``.

Sources
-------
.. [001] ML Systems textbook appendix "Fleet Foundations" (``shared/seeds/001_ce165384d569a782.txt``).
.. [004] Redpoint AI interview with Dylan Patel (SemiAnalysis) (``shared/seeds/004_c1f56851affaa10d.txt``):
   H100 ~ $45k all-in incl. networking and infrastructure; 100,000-GPU cluster ~ $5B.
.. [cheah] E. Cheah, H100 cluster capex spreadsheet (Aug 2024) and
   https://substack.tech-talk-cto.com/p/h100-freakonomics-the-economical: server, switch, link prices and the
   fat-tree tier bands (``data/buildout_capex.csv``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from econ.errors import InvalidInputError
from econ.physics.fleet import it_power_w
from econ.units import HOURS_PER_YEAR, SECONDS_PER_DAY, SECONDS_PER_HOUR, TOKENS_PER_M, W_PER_KW, W_PER_MW
from econ.validate import require_in_range, require_integer

__all__ = [
    "BUILDOUT_COLUMNS", "BUILDOUT_ITEMS", "IT_CAPEX_BASES", "BuildoutPrices", "CapexBreakdown",
    "annual_energy_cost_usd", "annual_energy_kwh", "buildout_capex", "buildout_prices", "cluster_capex_usd",
    "facility_capex_usd", "gpu_hours_cost_usd", "gpus_for_capex", "network_tiers", "network_usd_per_gpu",
    "payback_years", "revenue_per_year_usd", "training_cost_usd",
]

_DAYS_PER_YEAR = HOURS_PER_YEAR * SECONDS_PER_HOUR / SECONDS_PER_DAY  # 365 [d]


# --------------------------------------------------------------------------------------------
# Capital cost
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class CapexBreakdown:
    """Cluster capital cost by part; each field is a scalar or array of the broadcast shape. [USD]

    Attributes
    ----------
    accelerators_usd : GPUs, servers and the network share, from the all-in per-GPU price. [USD]
    facility_usd : building, power and cooling, from the build cost per MW of IT load. [USD]
    total_usd : accelerators_usd + facility_usd. [USD]
    """

    accelerators_usd: object
    facility_usd: object
    total_usd: object


def facility_capex_usd(it_power_w, build_usd_per_mw_it):
    """Facility construction capex for an IT load: MW of critical IT x build cost per MW.

    Parameters
    ----------
    it_power_w : scalar or array, broadcastable
        Critical IT load the building must supply. [W]
    build_usd_per_mw_it : scalar or array, broadcastable, >= 0
        Construction cost per MW of IT load (``econ.assumptions.Economics.build_usd_per_mw_it``, or a named
        row of ``data/facilities.csv``). [USD/MW]

    Returns
    -------
    scalar or array of the broadcast shape. [USD]

    Notes
    -----
    capex_facility = P_IT / 10^6 x build_per_MW_IT (Cushman & Wakefield Data Center Development Cost Guide
    2025: US 19-market average $11.7M per MW of IT load, the ``Economics`` default).
    """
    return it_power_w / W_PER_MW * build_usd_per_mw_it


def cluster_capex_usd(num_gpus, all_in_capex_usd_per_gpu, power_w_per_gpu, build_usd_per_mw_it):
    """Capital cost of a cluster: all-in accelerator price plus the facility built around it.

    Parameters
    ----------
    num_gpus : scalar or array, broadcastable. [GPU]
    all_in_capex_usd_per_gpu : scalar or array, broadcastable
        GPU + its share of server and network (seed 004: H100 ~ $45,000 "including networking and
        infrastructure"). [USD/GPU]
    power_w_per_gpu : scalar or array, broadcastable
        IT power per GPU that the facility must supply. [W]
    build_usd_per_mw_it : scalar or array, broadcastable, >= 0
        Facility construction cost per MW of critical IT load (``shared/reference/facility.csv``:
        US 19-market average $11.7M/MW, Cushman & Wakefield 2025). Pass 0 when the all-in per-GPU
        price already includes the facility, or the capacity is leased. [USD/MW]

    Returns
    -------
    CapexBreakdown
        ``accelerators_usd``, ``facility_usd``, ``total_usd``, each of the broadcast shape. [USD]

    Notes
    -----
    capex = G x all_in + (G x P_GPU / 10^6) x build_per_MW_IT. Seed 004: 100,000 H100 x $45k =
    $4.5B against "around $5 billion" for the cluster. Whether seed 004's $45k already covers the
    building is not stated; avoid counting the facility twice.
    """
    accelerators = num_gpus * all_in_capex_usd_per_gpu
    facility = facility_capex_usd(it_power_w(num_gpus, power_w_per_gpu), build_usd_per_mw_it)
    return CapexBreakdown(accelerators_usd=accelerators, facility_usd=facility,
                          total_usd=accelerators + facility)


# --------------------------------------------------------------------------------------------
# Energy, revenue, payback
# --------------------------------------------------------------------------------------------

def annual_energy_kwh(facility_power_w, load_factor_frac=1.0):
    """Energy drawn in one year at a given average load.

    Parameters
    ----------
    facility_power_w : scalar or array, broadcastable
        Facility power at full load. [W]
    load_factor_frac : scalar or array, broadcastable, in [0, 1]
        Average draw as a fraction of full load over the year (1.0 = full power all 8,760 h,
        an upper bound). [1]

    Returns
    -------
    scalar or array of the broadcast shape. [kWh]

    Notes
    -----
    E = P x load_factor x 8,760 h; conversion W h -> kWh via :data:`econ.units.W_PER_KW`.
    """
    return facility_power_w * load_factor_frac * HOURS_PER_YEAR / W_PER_KW


def annual_energy_cost_usd(annual_energy_kwh, usd_per_kwh):
    """Electricity bill for a year of energy.

    Parameters
    ----------
    annual_energy_kwh : scalar or array, broadcastable. [kWh]
    usd_per_kwh : scalar or array, broadcastable, >= 0
        All-in electricity price (see ``shared/reference/power_prices.csv``). [USD/kWh]

    Returns
    -------
    scalar or array of the broadcast shape. [USD]

    Notes
    -----
    cost = E x price; the PUE is already in E through :func:`facility_power_w` (DESIGN.md,
    "Economics": power x PUE x price).
    """
    return annual_energy_kwh * usd_per_kwh


def revenue_per_year_usd(tokens_per_day, usd_per_m_tokens):
    """Yearly revenue from selling tokens at a price per million.

    Parameters
    ----------
    tokens_per_day : scalar or array, broadcastable. [token/d]
    usd_per_m_tokens : scalar or array, broadcastable, >= 0
        Price per million tokens (output, or blended at a stated input:output mix). [USD/Mtoken]

    Returns
    -------
    scalar or array of the broadcast shape. [USD/yr]

    Notes
    -----
    revenue = tokens/day x 365 d x price / 10^6.
    """
    return tokens_per_day * _DAYS_PER_YEAR * usd_per_m_tokens / TOKENS_PER_M


def payback_years(capex_usd, annual_revenue_usd, annual_opex_usd):
    """Simple (undiscounted) payback period of the capital outlay.

    Parameters
    ----------
    capex_usd : scalar or array-like, broadcastable, >= 0. [USD]
    annual_revenue_usd : scalar or array-like, broadcastable, >= 0. [USD/yr]
    annual_opex_usd : scalar or array-like, broadcastable, >= 0
        Yearly operating cost (energy, staff, maintenance, leases). [USD/yr]

    Returns
    -------
    float or ndarray of the broadcast shape. [yr]
        ``inf`` where the yearly margin (revenue - opex) is <= 0: the capex is never recovered.
        0 where capex is 0. Never NaN. (ndarray-only: this entry point validates its inputs and
        does not accept ``pl.Expr``.)

    Raises
    ------
    InvalidInputError
        If any input is negative or not finite, naming the field, value and range.

    Notes
    -----
    payback = capex / (revenue - opex), undiscounted; use ``econ.economics.tco.capital_recovery_factor``
    when the cost of capital matters.
    """
    capex = require_in_range("capex_usd", capex_usd, 0.0, np.inf, "USD")
    revenue = require_in_range("annual_revenue_usd", annual_revenue_usd, 0.0, np.inf, "USD/yr")
    opex = require_in_range("annual_opex_usd", annual_opex_usd, 0.0, np.inf, "USD/yr")
    capex, margin = np.broadcast_arrays(capex, revenue - opex)
    years = np.full(margin.shape, np.inf)
    np.divide(capex, margin, out=years, where=margin > 0)
    years[capex == 0] = 0.0
    return years[()] if years.ndim == 0 else years



# --------------------------------------------------------------------------------------------
# Training cost
# --------------------------------------------------------------------------------------------

def training_cost_usd(training_time_s, num_gpus, usd_per_gpu_hour):
    """GPU-hour cost of a training run.

    Parameters
    ----------
    training_time_s : scalar or array, broadcastable. [s]
    num_gpus : scalar or array, broadcastable. [GPU]
    usd_per_gpu_hour : scalar or array, broadcastable, >= 0
        Rented or owned (``econ.economics.tco``) cost of one GPU-hour. [USD/(GPU h)]

    Returns
    -------
    scalar or array of the broadcast shape. [USD]

    Notes
    -----
    cost = T / 3600 x G x price: every GPU is paid for the whole wall clock, including the time
    lost to MFU, scaling and goodput (those losses are already in T).
    """
    return training_time_s / SECONDS_PER_HOUR * num_gpus * usd_per_gpu_hour


def gpu_hours_cost_usd(gpu_hours, usd_per_gpu_hour):
    """Cost of a number of GPU-hours at a price.

    Parameters
    ----------
    gpu_hours : scalar or array, broadcastable [GPU h]
    usd_per_gpu_hour : scalar or array, broadcastable [USD/(GPU h)]

    Returns
    -------
    scalar or array of the broadcast shape. [USD]

    Notes
    -----
    DeepSeek-V3 technical report (arXiv:2412.19437, Table 1): 2.788M H800 GPU-hours at an assumed $2 per
    GPU-hour rental = $5.576M (pre-training 2.664M + context extension 0.119M + post-training 0.005M).
    """
    return gpu_hours * usd_per_gpu_hour



# --------------------------------------------------------------------------------------------
# Build-out capex, itemized
# --------------------------------------------------------------------------------------------

IT_CAPEX_BASES: tuple[str, ...] = ("all-in", "itemized")
"""How a build-out prices its IT equipment (servers, network and storage included):

- ``"all-in"``: one price per GPU, the accelerator's ``all_in_capex_usd`` (``data/accelerators.csv``; the same
  capex behind the owned $/GPU-hour of ``econ cost``, ``econ.economics.tco``). The default of a cluster plan.
- ``"itemized"``: the accelerator board (``purchase_price_usd``) + host share + a non-blocking fat-tree network +
  storage, each unit price from ``data/buildout_capex.csv`` (:data:`BUILDOUT_ITEMS`).

The facility is priced apart in both, per MW of IT load (:func:`facility_capex_usd`)."""

BUILDOUT_ITEMS: dict[str, str] = {
    "server_usd_per_gpu": "server-host-usd-per-gpu",
    "switch_usd": "network-switch-usd",
    "switch_radix": "network-switch-radix",
    "link_usd": "network-link-usd",
    "rails": "network-rails",
    "storage_usd_per_gpu": "storage-usd-per-gpu",
}
"""Itemized IT price fields -> row ids of ``data/buildout_capex.csv`` (every row sourced there). The facility's
price per MW is not an item: it is ``Economics.build_usd_per_mw_it`` (or a named ``data/facilities.csv`` row)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildoutPrices:
    """IT unit prices of a build-out; defaults from the catalog (see :func:`buildout_prices`).

    Attributes
    ----------
    accelerator_usd_per_gpu : GPU board/module price (``purchase_price_usd``). [USD/GPU]
    server_usd_per_gpu : host share per GPU: CPUs, memory, chassis, PSUs, NICs. [USD/GPU]
    switch_usd : one scale-out switch. [USD]
    switch_radix : ports per switch. [ports]
    link_usd : one scale-out link (transceivers + cable) per GPU per tier. [USD]
    rails : GPUs per node = rails of the rail-optimized fabric. [GPU]
    storage_usd_per_gpu : storage hardware per GPU. [USD/GPU]
    all_in_it_usd_per_gpu : one all-in IT price per GPU replacing accelerator + server + network + storage
        (``all_in_capex_usd``; seed 004: H100 ~ $45,000), or None for the itemized build-out. [USD/GPU]
    """

    accelerator_usd_per_gpu: float
    server_usd_per_gpu: float
    switch_usd: float
    switch_radix: float
    link_usd: float
    rails: float
    storage_usd_per_gpu: float
    all_in_it_usd_per_gpu: float | None = None

    @property
    def basis(self) -> str:
        """``"all-in"`` when one all-in price per GPU is set, else ``"itemized"`` (:data:`IT_CAPEX_BASES`)."""
        return "all-in" if self.all_in_it_usd_per_gpu is not None else "itemized"


def buildout_prices(catalog, hardware: str, *, basis: str = "all-in", **overrides) -> BuildoutPrices:
    """IT unit prices for a build-out of ``hardware``: the catalog's sourced values, overridable one by one.

    Parameters
    ----------
    catalog : Catalog
        Any object with ``accelerator(id) -> dict`` and a ``buildout_capex`` frame (``id``, ``value``), as
        ``econ.tables.catalog.load_catalog`` returns.
    hardware : str
        Accelerator id.
    basis : {"all-in", "itemized"}
        :data:`IT_CAPEX_BASES`. ``"itemized"`` falls back to the all-in price when the accelerator has no
        ``purchase_price_usd`` (rack-scale systems such as GB200 NVL72 are sold as racks).
    **overrides
        Any :class:`BuildoutPrices` field (e.g. ``switch_usd=50_000``, ``all_in_it_usd_per_gpu=45_000``);
        None values are ignored. An ``all_in_it_usd_per_gpu`` makes the basis all-in.

    Returns
    -------
    BuildoutPrices

    Raises
    ------
    UnknownIdError, InvalidInputError
        Unknown hardware; unknown basis or override name; a price negative or not finite (named); an item
        price given with the all-in basis (it would be ignored); no price at all for the accelerator; a
        catalog without build-out prices.
    """
    if basis not in IT_CAPEX_BASES:
        raise InvalidInputError(f"it_capex_basis={basis!r} is not one of {list(IT_CAPEX_BASES)}")
    hw = catalog.accelerator(hardware)
    table = getattr(catalog, "buildout_capex", None)
    if table is None:
        raise InvalidInputError("the catalog has no build-out prices (data/buildout_capex.csv); load it with "
                                "econ.tables.catalog.load_catalog")
    value = dict(zip(table["id"].to_list(), table["value"].to_list()))
    fields = set(BuildoutPrices.__dataclass_fields__)
    given = {k: v for k, v in overrides.items() if v is not None}
    unknown = set(given) - fields
    if unknown:
        raise InvalidInputError(f"unknown build-out price(s) {sorted(unknown)}; valid: {sorted(fields)}")
    items = sorted(set(given) - {"all_in_it_usd_per_gpu"})
    if basis == "all-in" and items:
        raise InvalidInputError(f"{items[0]}={given[items[0]]:g} prices an itemized build-out, but it_capex_basis "
                                "is 'all-in' (one price per GPU): use the itemized basis")
    purchase = hw.get("purchase_price_usd")
    all_in = hw.get("all_in_capex_usd")
    base = dict(
        accelerator_usd_per_gpu=float(purchase) if purchase is not None else 0.0,
        **{k: float(value[row]) for k, row in BUILDOUT_ITEMS.items()},
        all_in_it_usd_per_gpu=all_in if basis == "all-in" or purchase is None else None,
    )
    base.update(given)
    for k, v in base.items():
        if v is not None:
            require_in_range(k, v, 0.0, 1e12, lo_inclusive=k not in ("switch_radix", "rails"))
    if base["all_in_it_usd_per_gpu"] is None and basis == "all-in":
        raise InvalidInputError(f"hardware={hardware} has no all_in_capex_usd in accelerators.csv (it is not sold)")
    if base["all_in_it_usd_per_gpu"] is None and base["accelerator_usd_per_gpu"] == 0:
        raise InvalidInputError(f"hardware={hardware} has neither purchase_price_usd nor all_in_capex_usd; give "
                                "accelerator_usd_per_gpu or all_in_it_usd_per_gpu")
    return BuildoutPrices(**base)


def network_tiers(num_gpus, switch_radix=64.0, rails=8.0):
    """Switch tiers of a non-blocking rail-optimized fat tree holding G GPUs.

    Parameters
    ----------
    num_gpus : scalar or array, >= 1 [GPU]
    switch_radix : float >= 2 [ports]
    rails : float >= 1
        GPUs per node, one NIC and one rail each. [GPU]

    Returns
    -------
    ndarray of float (whole numbers >= 1) of the input's shape. [tiers]

    Notes
    -----
    t tiers hold rails x 2 x (radix / 2)^t GPUs: 512, 16,384 and 524,288 for radix 64 and 8 rails, the tier
    bands of E. Cheah's H100 cluster capex (<= 64, <= 2,048, <= 65,536 nodes;
    https://substack.tech-talk-cto.com/p/h100-freakonomics-the-economical).
    """
    g = np.asarray(num_gpus, dtype=float)
    t = np.ceil(np.log(np.maximum(g / (2.0 * rails), 1.0)) / np.log(switch_radix / 2.0) - 1e-12)
    return np.maximum(t, 1.0)


def network_usd_per_gpu(num_gpus, switch_usd, switch_radix, link_usd, rails):
    """Scale-out network capex per GPU (switches and links), excluding the NICs (in the server price).

    Parameters
    ----------
    num_gpus : scalar or array [GPU]
    switch_usd : scalar [USD]; switch_radix : scalar [ports]; link_usd : scalar [USD]; rails : scalar [GPU]

    Returns
    -------
    tuple of three arrays of the input's shape: (switch USD per GPU, link USD per GPU, tiers).

    Notes
    -----
    Non-blocking fat tree of t tiers: (2t - 1) / radix switches per GPU and t links per GPU. With Cheah's
    prices ($36k switch, radix 64, $1,280 per link): 1 tier $1,842, 2 tiers $4,248, 3 tiers $6,652 per GPU,
    against the spreadsheet's $1,882, $4,248, $6,612.
    """
    t = network_tiers(num_gpus, switch_radix, rails)
    return (2.0 * t - 1.0) / switch_radix * switch_usd, t * link_usd, t


BUILDOUT_COLUMNS: tuple[str, ...] = (
    "num_gpus", "it_capex_basis", "network_tiers", "capex_accelerators_usd", "capex_servers_usd",
    "capex_network_switches_usd", "capex_network_links_usd", "capex_storage_usd", "capex_it_all_in_usd",
    "capex_it_usd", "it_power_mw", "facility_usd_per_mw_it", "capex_facility_usd", "capex_total_usd",
    "it_capex_per_gpu_usd", "all_in_capex_per_gpu_usd",
)


def buildout_capex(num_gpus, prices: BuildoutPrices, *, it_power_w_per_gpu, build_usd_per_mw_it) -> pl.DataFrame:
    """Capex of a build-out by item: accelerators, servers, network by tier, storage (or one all-in price), facility.

    Parameters
    ----------
    num_gpus : int or 1-D array-like of int >= 1 [GPU]
    prices : BuildoutPrices
    it_power_w_per_gpu : float > 0
        IT power per GPU the facility is built for (all-in basis for a real building). [W]
    build_usd_per_mw_it : float in [0, 1e9]
        Facility construction per MW of IT load (``Economics.build_usd_per_mw_it``). [USD/MW]

    Returns
    -------
    pl.DataFrame (:data:`BUILDOUT_COLUMNS`), one row per GPU count. Item columns are totals [USD];
    ``capex_it_all_in_usd`` is non-zero only when ``prices.all_in_it_usd_per_gpu`` replaces the IT items;
    ``it_capex_per_gpu_usd`` = IT / G and ``all_in_capex_per_gpu_usd`` = total / G.

    Raises
    ------
    InvalidInputError
        GPU counts, power or build cost out of range (named).

    Notes
    -----
    IT = G x (accelerator + server + storage) + network (see :func:`network_usd_per_gpu`), or G x all-in;
    facility = IT MW x build $/MW (:func:`facility_capex_usd`). Seed 004: 100,000 H100 at ~$45,000 all-in =
    $4.5B; the itemized default for H100 at 100,000 GPUs is $45,681 per GPU before the building.
    """
    g = require_integer("num_gpus", np.atleast_1d(np.asarray(num_gpus, dtype=float)), 1, 1e9, "GPUs")
    w = float(require_in_range("it_power_w_per_gpu", it_power_w_per_gpu, 0.0, 1e5, "W", lo_inclusive=False))
    build = float(require_in_range("build_usd_per_mw_it", build_usd_per_mw_it, 0.0, 1e9, "USD/MW"))
    pr = prices
    sw, links, tiers = network_usd_per_gpu(g, pr.switch_usd, pr.switch_radix, pr.link_usd, pr.rails)
    zero = np.zeros(g.shape)
    if pr.all_in_it_usd_per_gpu is not None:
        acc = srv = sw_tot = link_tot = sto = zero
        all_in = g * pr.all_in_it_usd_per_gpu
    else:
        acc, srv, sto = g * pr.accelerator_usd_per_gpu, g * pr.server_usd_per_gpu, g * pr.storage_usd_per_gpu
        sw_tot, link_tot, all_in = g * sw, g * links, zero
    it = acc + srv + sw_tot + link_tot + sto + all_in
    it_w = it_power_w(g, w)
    fac = facility_capex_usd(it_w, build)
    total = it + fac
    return pl.DataFrame({
        "num_gpus": g.astype(np.int64), "it_capex_basis": [pr.basis] * g.size, "network_tiers": tiers.astype(np.int64),
        "capex_accelerators_usd": acc, "capex_servers_usd": srv, "capex_network_switches_usd": sw_tot,
        "capex_network_links_usd": link_tot, "capex_storage_usd": sto, "capex_it_all_in_usd": all_in,
        "capex_it_usd": it, "it_power_mw": it_w / W_PER_MW, "facility_usd_per_mw_it": np.full(g.shape, build),
        "capex_facility_usd": fac, "capex_total_usd": total, "it_capex_per_gpu_usd": it / g,
        "all_in_capex_per_gpu_usd": total / g,
    }).select(BUILDOUT_COLUMNS)


def gpus_for_capex(budget_usd, prices: BuildoutPrices, *, it_power_w_per_gpu, build_usd_per_mw_it) -> int:
    """Most GPUs whose build-out (IT + facility) fits a capex budget.

    Parameters
    ----------
    budget_usd : float > 0 [USD]
    prices : BuildoutPrices
    it_power_w_per_gpu : float > 0 [W]
    build_usd_per_mw_it : float in [0, 1e9] [USD/MW]

    Returns
    -------
    int [GPU]; 0 when not even one GPU fits.

    Raises
    ------
    InvalidInputError
        A budget, power or build cost out of range (named).

    Notes
    -----
    The itemized per-GPU cost is a step function of G (the fabric gains a tier at 512, 16,384, 524,288 GPUs), so
    the answer is the largest G over the tiers of min(floor(budget / cost per GPU at that tier), the tier's
    capacity) that still lies in its tier: a few closed-form candidates, no search over G. At one all-in price
    the cost per GPU is the same at every size.
    """
    budget = float(require_in_range("capex_budget_usd", budget_usd, 0.0, 1e15, "USD", lo_inclusive=False))

    def per_gpu(g: int) -> float:
        return float(buildout_capex(g, prices, it_power_w_per_gpu=it_power_w_per_gpu,
                                    build_usd_per_mw_it=build_usd_per_mw_it)["all_in_capex_per_gpu_usd"][0])

    if prices.all_in_it_usd_per_gpu is not None:  # no fabric items: one price per GPU at every size
        return int(budget // per_gpu(1) * (1 + 1e-15))
    best, lo = 0, 1
    for t in range(1, 8):
        cap = int(prices.rails * 2 * (prices.switch_radix / 2) ** t)
        g = min(int(budget // per_gpu(lo)), cap)
        if g >= lo:
            best = g
        if g < cap:
            break
        lo = cap + 1
    return best
