"""$/M tokens by accelerator generation for one model at one speed, announced parts shown apart (issue 22.4).

One question, one search: each generation's answer is :func:`econ.analyses.compare.hardware_comparison` (the search
of :func:`econ.analyses.optimize.search`, the winner named by :func:`econ.analyses.search.cheapest`) on a catalog
to which the announced parts of ``data/roadmap_accelerators.csv`` are appended as iso-price projections
(:func:`econ.tables.roadmap.with_projections`). Nothing here computes physics or cost.

Every row says what it rests on: ``availability`` (the roadmap file's ``status``: shipping / announced, the vendor's word with ``as_of``), ``basis``
(``catalog``: a priced part with a calibration profile where one exists; ``projection``: datasheet physics, the
cost of ``cost_proxy_id``, uncalibrated efficiencies), so a projection is never read as a measurement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import polars as pl

from econ.assumptions import DEFAULT, Economics
from econ.errors import InvalidInputError
from econ.presets import DEFAULT_INPUT_LEN, DEFAULT_MIN_TOKENS_PER_S_PER_USER, DEFAULT_OUTPUT_LEN
from econ.tables.catalog import Catalog, CatalogCache
from econ.tables.roadmap import load_roadmap, with_projections

LINEUPS: dict[str, tuple[str, ...]] = {
    "nvidia": ("a100-80gb-sxm", "h100-sxm", "h200-sxm", "b200", "gb200-nvl72", "gb300-nvl72", "vr200-nvl72",
               "rubin-ultra-nvl576", "rubin-cpx"),
    "amd": ("mi300x", "mi325x", "mi355x", "mi455x"),
    "google": ("tpu-v5p", "tpu-v6e", "tpu7x-ironwood", "tpu8t", "tpu8i"),
    "aws": ("trainium2", "trainium3"),
}
"""Default generation lineups per vendor: one flagship per generation, catalog parts then roadmap parts, oldest
first (the order of the table and the chart's x axis)."""

DEFAULT_VENDOR = "nvidia"

TREND_COLUMNS: tuple[str, ...] = (
    "hardware", "display_name", "year", "availability", "basis", "usd_per_m_output_tokens_all_in",
    "usd_per_m_output_tokens_all_in_low", "usd_per_m_output_tokens_all_in_high", "cost_vs_first", "usd_per_m_uncalibrated",
    "output_tokens_per_s_per_gpu", "tokens_per_s_per_user", "precision", "layout", "efficiency", "cost_from",
    "remark", "as_of", "source")
"""Columns of :attr:`Trend.table`."""


@dataclass(frozen=True)
class Trend:
    """The answer of :func:`trend`.

    Attributes
    ----------
    table : pl.DataFrame
        One row per accelerator of the lineup, oldest first (:data:`TREND_COLUMNS`); a part that cannot be
        evaluated keeps its row with null cost and the reason in ``remark``.
    model : str
    min_tokens_per_s_per_user : float [tokens/s]
    input_len, output_len : int [tokens]
    """

    table: pl.DataFrame
    model: str
    min_tokens_per_s_per_user: float
    input_len: int
    output_len: int


COST = "usd_per_m_output_tokens_all_in"


def _winners(catalog: Catalog, hardware: list[str], *, assumptions, **kw) -> dict[str, dict]:
    """hardware id -> the row of :func:`econ.analyses.compare.hardware_comparison` (its cheapest deployment)."""
    from econ.analyses.compare import hardware_comparison

    if not hardware:
        return {}
    best = hardware_comparison(catalog, hardware=hardware, assumptions=assumptions, **kw).best
    return {r["hardware"]: r for r in best.iter_rows(named=True)}


_KEPT = CatalogCache(8)
"""Per catalog object: its projected catalogs (per roadmap content and parts). The
same projected catalog object each time lets :func:`econ.analyses.optimize.search` reuse its kept physics when only
the economics change (a dashboard rerun)."""


def _projected(catalog: Catalog, roadmap: pl.DataFrame, road_ids: list[str]):
    """:func:`econ.tables.roadmap.with_projections` of ``road_ids``, one object per catalog, roadmap and parts."""
    key = ("projected", tuple(road_ids), tuple(roadmap.hash_rows(seed=0).to_list()), tuple(roadmap.columns))
    return _KEPT.memo(catalog, key, lambda: with_projections(catalog, roadmap, road_ids))


def lineup(vendor: str | None = None, hardware=None) -> list[str]:
    """The accelerator ids of a trend: ``hardware`` when given, else the vendor's :data:`LINEUPS` entry.

    Raises
    ------
    InvalidInputError
        An unknown vendor.
    """
    if hardware:
        return list(dict.fromkeys(hardware))
    key = (vendor or DEFAULT_VENDOR).lower()
    if key not in LINEUPS:
        raise InvalidInputError(f"vendor={vendor!r} is not one of {list(LINEUPS)}")
    return list(LINEUPS[key])


def trend(catalog: Catalog, *, model: str, vendor: str | None = None, hardware=None,
          min_tokens_per_s_per_user: float = DEFAULT_MIN_TOKENS_PER_S_PER_USER,
          input_len: int = DEFAULT_INPUT_LEN, output_len: int = DEFAULT_OUTPUT_LEN, precisions=None,
          assumptions=DEFAULT, economics: Economics = Economics(), roadmap: pl.DataFrame | None = None,
          space=None, max_ttft_s: float = math.inf) -> Trend:
    """All-in $/M output tokens of ``model`` at a speed floor on each generation of a lineup.

    Parameters
    ----------
    catalog : Catalog
    model : str
    vendor : {"nvidia", "amd", "google", "aws"}, optional
        The lineup of :data:`LINEUPS` (default nvidia); ignored when ``hardware`` is given.
    hardware : sequence of str, optional
        Catalog and/or roadmap ids, in the order to show.
    min_tokens_per_s_per_user : float >= 0
        The speed every generation must give each user. [tokens/s]
    input_len, output_len : int [tokens]
    precisions : sequence of {"bf16", "fp8", "fp4"}, optional
    assumptions, economics : as :func:`econ.analyses.compare.hardware_comparison`.
    roadmap : pl.DataFrame, optional
        :func:`econ.tables.roadmap.load_roadmap` of the catalog's data folder (read when None).
    space : econ.analyses.optimize.SearchSpace, optional
    max_ttft_s : float > 0, optional
        The TTFT every generation's deployment must meet (default: no limit). [s]

    Returns
    -------
    Trend

    Raises
    ------
    UnknownIdError
        An id in neither the catalog nor the roadmap.
    InvalidInputError
        As :func:`econ.analyses.compare.hardware_comparison`, or an unknown vendor.
    """
    from econ.errors import UnknownIdError

    roadmap = load_roadmap(catalog.data_dir) if roadmap is None else roadmap  # read_table keeps it per content
    ids = lineup(vendor, hardware)
    in_catalog = set(catalog.accelerators["id"].to_list())
    in_roadmap = set(roadmap["id"].to_list())
    for i in ids:
        if i not in in_catalog and i not in in_roadmap:
            raise UnknownIdError(f"hardware={i!r} is neither a catalog accelerator nor a roadmap part "
                                 f"(econ list hardware; data/roadmap_accelerators.csv)")
    road_ids = [i for i in ids if i in in_roadmap and i not in in_catalog]
    projected, reasons = _projected(catalog, roadmap, road_ids) if road_ids else (catalog, None)
    runnable = [i for i in ids if i in set(projected.accelerators["id"].to_list())]
    proxies = {r["id"]: r["cost_proxy_id"] for r in roadmap.iter_rows(named=True) if r["id"] in runnable}
    kw = dict(model=model, precisions=precisions, min_tokens_per_s_per_user=min_tokens_per_s_per_user,
              input_len=input_len, output_len=output_len, economics=economics, space=space, max_ttft_s=max_ttft_s)
    wanted = list(dict.fromkeys([*runnable, *(p for p in proxies.values() if p)]))
    found = _winners(projected, wanted, assumptions=assumptions, **kw)
    plain = _winners(projected, wanted, assumptions=replace(assumptions, calibrated=frozenset()), **kw)
    rows = []
    road = {r["id"]: r for r in roadmap.iter_rows(named=True)}
    why = {r["id"]: r["not_computable"] for r in reasons.iter_rows(named=True)} if reasons is not None else {}
    acc = {r["id"]: r for r in catalog.accelerators.iter_rows(named=True)}
    for i in ids:
        b, u = found.get(i, {}), plain.get(i, {})
        cost, tps = b.get(COST), b.get("output_tokens_per_s_per_gpu")
        low, high = b.get(COST + "_low"), b.get(COST + "_high")
        if i in acc:
            a = acc[i]
            status, basis, remark = "shipping", "catalog", ""
            eff = (f"calibrated ({b['profile']})" if b.get("calibrated") else "uncalibrated defaults") if b else ""
            cost_from = f"{i} ({a['capex_basis'] or a['rental_tier'] or 'catalog'})"
            if b and cost is None:
                remark = str(b.get("status") or "no deployment meets the floor")
        else:
            a = road[i]
            status, basis, remark = a["status"], "projection", a["remark"]
            proxy = a["cost_proxy_id"]
            cost_from = f"{proxy} (iso-price: no vendor price published)" if proxy else "none"
            pc, pu = found.get(proxy, {}), plain.get(proxy, {})
            share = (pc.get(COST) and pu.get(COST)) and pu[COST] / pc[COST]
            if u.get(COST) is not None and share:
                cost = u[COST] / share  # the proxy's realized share of its uncalibrated roofline cost
                tps = u["output_tokens_per_s_per_gpu"] * share
                low = high = None
                eff = (f"{proxy}'s realized share of its uncalibrated throughput ({share:.2f}) applied to the "
                       "uncalibrated projection (no profile claims an announced part)")
            else:
                cost, tps, low, high = u.get(COST), u.get("output_tokens_per_s_per_gpu"), None, None
                eff = "uncalibrated defaults (no profile claims an announced part)"
            b = u
            if why.get(i):
                remark = f"not computable ({why[i]}); {remark}"
        rows.append({
            "hardware": i, "display_name": a["display_name"], "year": str(a["year"]), "availability": status,
            "basis": basis, COST: cost, COST + "_low": low, COST + "_high": high,
            "usd_per_m_uncalibrated": u.get(COST), "output_tokens_per_s_per_gpu": tps,
            "tokens_per_s_per_user": b.get("tokens_per_s_per_user"), "precision": b.get("precision"),
            "layout": b.get("layout"), "efficiency": eff, "cost_from": cost_from, "remark": remark,
            "as_of": a["as_of"], "source": a["source"]})
    f64 = pl.Float64
    schema = {"hardware": pl.String, "display_name": pl.String, "year": pl.String, "availability": pl.String,
              "basis": pl.String, "usd_per_m_output_tokens_all_in": f64, "usd_per_m_output_tokens_all_in_low": f64,
              "usd_per_m_output_tokens_all_in_high": f64, "usd_per_m_uncalibrated": f64,
              "output_tokens_per_s_per_gpu": f64,
              "tokens_per_s_per_user": f64, "precision": pl.String, "layout": pl.String, "efficiency": pl.String,
              "cost_from": pl.String, "remark": pl.String, "as_of": pl.String, "source": pl.String}
    table = pl.DataFrame(rows, schema=schema)
    first = next((r for r in table["usd_per_m_output_tokens_all_in"].to_list() if r is not None and math.isfinite(r)),
                 None)
    table = table.with_columns(cost_vs_first=(pl.col("usd_per_m_output_tokens_all_in") / first) if first else
                               pl.lit(None, dtype=f64)).select(TREND_COLUMNS)
    return Trend(table=table, model=model, min_tokens_per_s_per_user=float(min_tokens_per_s_per_user),
                 input_len=int(input_len), output_len=int(output_len))


__all__ = ["LINEUPS", "DEFAULT_VENDOR", "TREND_COLUMNS", "Trend", "lineup", "trend"]
