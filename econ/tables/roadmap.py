"""Announced accelerators (``data/roadmap_accelerators.csv``): vendors' published specifications, shown apart.

The shipped catalog (``data/accelerators.csv``) holds parts with a price and a sourced power figure: every search,
quote floor and default ranking runs on it. Roadmap parts (NVIDIA Vera Rubin and Rubin Ultra, the Rubin CPX prefill
part, AMD MI455X, AWS Trainium3, Google TPU 8t/8i, ...) have datasheet numbers but no price, no all-in power and no
measurement, so they live in their own file, are never in :attr:`econ.tables.catalog.Catalog.accelerators`, and no
calibration profile claims them (their ``generation`` is empty: the engine's scalar efficiencies of
``econ.assumptions`` apply, uncalibrated).

Each row carries ``status`` (``shipping`` or ``announced``: what the vendor says of availability; a ``shipping``
row here is one the vendor ships but that has no price or measurement yet), ``announced_on``,
``expected_availability``, ``source`` and ``as_of``; ``remark`` is the one-line caveat shown beside any answer.

:func:`with_projections` appends the parts whose physics columns are all published to a catalog as *projections*:
physics from the roadmap row, cost columns (all-in capex, all-in power, rental and cost tiers) copied from the
row's ``cost_proxy_id``, the vendor's newest priced part ("iso-price": what the new part's physics alone does to
$/M tokens at its predecessor's $/GPU-hour). No vendor has published a price for any of them (research notes,
``data/README.md``), so the $/M tokens of a projection is an assumption, labelled as one wherever it is shown.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import polars as pl

from econ.errors import DataError, UnknownIdError
from econ.tables.catalog import (ACCELERATOR_SCHEMA, DEFAULT_DATA_DIR, TXT, TXT_OPT, Catalog, Col, _accelerators_si,
                                 read_table)

ROADMAP_FILE = "roadmap_accelerators.csv"
"""The file name under a data folder."""

STATUSES: tuple[str, ...] = ("shipping", "announced")
"""Allowed ``status`` values (``announced``: not shipping as of ``as_of``)."""

PHYSICS_COLUMNS: tuple[str, ...] = (
    "bf16_dense_tflop_per_s", "hbm_capacity_gib", "hbm_bandwidth_tb_per_s", "scale_up_domain_size",
    "scale_up_bandwidth_gb_per_s", "scale_out_bandwidth_gb_per_s")
"""Columns a roadmap row needs before the engine can evaluate it (the ones ``accelerators.csv`` requires)."""

COST_COLUMNS: tuple[str, ...] = (
    "tdp_w", "all_in_power_w", "purchase_price_usd", "all_in_capex_usd", "capex_basis", "rental_usd_per_hour",
    "rental_tier", "rental_basis", "tco_hyperscaler_usd_per_hour", "tco_neocloud_usd_per_hour",
    "rental_3yr_usd_per_hour", "sa_all_in_power_w", "rental_on_demand_hyperscaler_usd_per_hour",
    "rental_on_demand_neocloud_usd_per_hour", "rental_contract_usd_per_hour")
"""Columns a projection copies from its ``cost_proxy_id`` row (the iso-price assumption)."""


def _optional(col: Col) -> Col:
    return replace(col, required=False)


ROADMAP_SCHEMA: dict[str, Col] = {
    **{c: (col if c in ("id", "display_name", "vendor", "year", "source", "as_of") else
           (col if col.dtype is pl.String and not col.required else _optional(col)))
       for c, col in ACCELERATOR_SCHEMA.items()},
    "status": TXT, "announced_on": TXT, "expected_availability": TXT_OPT,
    "cost_proxy_id": TXT_OPT, "remark": TXT,
}
"""``roadmap_accelerators.csv``: the columns of ``accelerators.csv`` with the same ranges, every spec optional
(vendors publish some numbers, not all), plus ``status``, ``announced_on``, ``expected_availability``,
``cost_proxy_id`` (the priced catalog part a projection takes its cost columns from) and ``remark``."""


def load_roadmap(data_dir: str | Path | None = None) -> pl.DataFrame:
    """Read and validate ``roadmap_accelerators.csv`` (a user's ``data_dir`` first, else the shipped file).

    Returns
    -------
    pl.DataFrame, one row per announced part, columns of :data:`ROADMAP_SCHEMA`.

    Raises
    ------
    DataError
        A malformed file, a ``status`` outside :data:`STATUSES`, or a row with a ``generation`` (no calibration
        profile may claim a roadmap part).
    """
    base = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    path = base / ROADMAP_FILE if (base / ROADMAP_FILE).is_file() else DEFAULT_DATA_DIR / ROADMAP_FILE
    df = read_table(path, ROADMAP_SCHEMA, "id")
    bad = df.filter(~pl.col("status").is_in(list(STATUSES)))
    if bad.height:
        raise DataError(f"{ROADMAP_FILE}: row {bad['id'][0]}, column status: {bad['status'][0]!r} is not one of "
                        f"{list(STATUSES)}")
    claimed = df.filter(pl.col("generation").is_not_null())
    if claimed.height:
        raise DataError(f"{ROADMAP_FILE}: row {claimed['id'][0]}, column generation: must be empty (no calibration "
                        "profile claims an unmeasured part)")
    return df


def missing_physics(roadmap: pl.DataFrame) -> pl.DataFrame:
    """Per roadmap row, why the engine cannot evaluate it ("" = it can).

    Returns
    -------
    pl.DataFrame with ``id`` and ``not_computable`` (the unpublished columns, or the missing cost proxy).
    """
    reasons = []
    for r in roadmap.iter_rows(named=True):
        gaps = [c for c in PHYSICS_COLUMNS if r[c] is None]
        why = ("not published: " + ", ".join(gaps)) if gaps else ""
        if not gaps and not r["cost_proxy_id"]:
            why = "no priced predecessor to project a cost from"
        reasons.append(why)
    return pl.DataFrame({"id": roadmap["id"], "not_computable": reasons}, schema={"id": pl.String,
                                                                               "not_computable": pl.String})


def with_projections(catalog: Catalog, roadmap: pl.DataFrame, ids=None) -> tuple[Catalog, pl.DataFrame]:
    """``catalog`` with the computable roadmap parts appended as iso-price projections.

    Parameters
    ----------
    catalog : Catalog
    roadmap : pl.DataFrame from :func:`load_roadmap`
    ids : sequence of str, optional
        Roadmap ids to add (default: every computable one).

    Returns
    -------
    (Catalog, pl.DataFrame)
        The catalog (a new object) and a frame ``id, cost_proxy_id, not_computable`` for the requested rows.

    Raises
    ------
    UnknownIdError
        An id that is not a roadmap row.
    DataError
        A ``cost_proxy_id`` that is not in the catalog, or an id already in the catalog.
    """
    known = roadmap["id"].to_list()
    ids = list(dict.fromkeys(ids)) if ids else known
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UnknownIdError(f"roadmap accelerator {unknown[0]!r} is not one of {known}")
    reasons = missing_physics(roadmap).join(roadmap.select("id", "cost_proxy_id"), on="id")
    reasons = reasons.filter(pl.col("id").is_in(ids))
    ok = reasons.filter(pl.col("not_computable") == "")["id"].to_list()
    acc = catalog.accelerators
    clash = [i for i in ok if i in acc["id"].to_list()]
    if clash:
        raise DataError(f"{ROADMAP_FILE}: row {clash[0]} is also in accelerators.csv (a part is priced or announced, "
                        "not both)")
    rows = []
    for r in roadmap.filter(pl.col("id").is_in(ok)).iter_rows(named=True):
        proxy = acc.filter(pl.col("id") == r["cost_proxy_id"])
        if proxy.height == 0:
            raise DataError(f"{ROADMAP_FILE}: row {r['id']}, column cost_proxy_id: {r['cost_proxy_id']!r} is not an "
                            "accelerator of the catalog")
        p = proxy.row(0, named=True)
        row = {c: r[c] for c in ACCELERATOR_SCHEMA}
        row.update({c: p[c] for c in COST_COLUMNS})
        row["notes"] = (f"PROJECTION ({r['status']}): {r['remark']}. Cost columns copied from {p['id']} (iso-price); "
                        f"{r['notes'] or ''}")
        rows.append(row)
    if not rows:
        return catalog, reasons
    typed = pl.DataFrame(rows, schema={c: acc.schema[c] for c in ACCELERATOR_SCHEMA})
    merged = pl.concat([acc, _accelerators_si(typed)], how="diagonal_relaxed").select(acc.columns)
    return replace(catalog, accelerators=merged), reasons


__all__ = ["ROADMAP_FILE", "ROADMAP_SCHEMA", "STATUSES", "PHYSICS_COLUMNS", "COST_COLUMNS", "load_roadmap",
           "missing_physics", "with_projections"]
