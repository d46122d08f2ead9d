"""A user's own accelerator, entered as a handful of datasheet numbers and used like any catalog row.

:class:`CustomAccelerator` holds what an analyst knows of a chip that is not in ``data/accelerators.csv``
(or a what-if variant of one): dense FLOP/s per precision, HBM capacity and bandwidth, the scale-up
domain and its bandwidth, the scale-out bandwidth, a price (all-in capex per accelerator, or a
$/GPU-hour rental rate, or both) and the all-in power. :func:`with_custom_accelerator` turns it into an
``accelerators.csv`` row and validates it with the same schema and rules as the shipped table
(:func:`econ.tables.catalog.validate_table`: ranges, plausibility rules, "all-in power >= TDP"), then returns
the catalog with the row appended under the id :data:`CUSTOM_ID`: every engine call, page and command
takes it as it takes an H100.

The row's ``source`` says it is user-entered; the dashboard and ``econ.io.scenario`` save the numbers in the
scenario (TOML file and URL), so a shared link reproduces the accelerator.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, fields, replace

import polars as pl

from econ.tables.catalog import ACCELERATOR_SCHEMA, Catalog, validate_table
from econ import vocabulary as V
from econ.errors import DataError, InvalidInputError

CUSTOM_ID = "custom-accelerator"
"""Catalog id of the user's accelerator (kebab-case, like every id)."""

SOURCE = "user-entered on the econ dashboard or in a scenario file (custom accelerator); not a sourced datasheet"
"""The ``source`` cell of the custom row (every row carries one)."""


@dataclass(frozen=True, slots=True)
class CustomAccelerator:
    """Datasheet numbers of one accelerator.

    Attributes
    ----------
    name : str
        Display name ("My accelerator").
    bf16_tflop_per_s : float > 0
        Dense BF16 peak (not the sparse figure). [TFLOP/s]
    fp8_tflop_per_s, fp4_tflop_per_s : float > 0 or None
        Dense FP8 / FP4 peaks; None = no hardware support (that precision is refused, as for an A100).
    hbm_gib : float > 0
        HBM capacity. [GiB]
    hbm_tb_per_s : float > 0
        HBM bandwidth. [TB/s]
    scale_up_domain_size : int >= 1
        Accelerators in one scale-up (NVLink/ICI-class) domain. [accelerators]
    scale_up_gb_per_s : float > 0
        Scale-up bandwidth per accelerator, one direction. [GB/s]
    scale_up_topology : {"switch", "mesh"}
        How the domain shares it: a switch gives any pair the whole bandwidth, a direct full mesh splits each
        accelerator's links over its peers (:func:`econ.physics.communication.mesh_bandwidth_share`).
    scale_out_gb_per_s : float > 0
        Scale-out (NIC) bandwidth per accelerator. [GB/s]
    capex_usd : float > 0 or None
        All-in IT capex per accelerator (server, network share included): prices the owned tier. [USD]
    usd_per_gpu_hour : float > 0 or None
        Rental rate per GPU-hour: prices the rental tier. [USD/h] At least one of the two prices.
    power_w : float > 0
        All-in IT power per accelerator (host and network share included; PUE is applied on top). [W]
    generation : str or None
        The accelerator generation whose calibration profile (``data/calibration.csv``) its efficiencies
        take ("hopper", "blackwell", ... of :data:`econ.vocabulary.GENERATIONS`): the closest chip and software
        stack. None = no profile: the scalar efficiencies of ``econ.assumptions`` (uncalibrated).
    """

    name: str = V.default("custom_name")
    bf16_tflop_per_s: float = V.default("custom_bf16_tflop_per_s")
    fp8_tflop_per_s: float | None = V.default("custom_fp8_tflop_per_s")
    fp4_tflop_per_s: float | None = V.default("custom_fp4_tflop_per_s")
    hbm_gib: float = V.default("custom_hbm_gib")
    hbm_tb_per_s: float = V.default("custom_hbm_tb_per_s")
    scale_up_domain_size: int = V.default("custom_scale_up_domain_size")
    scale_up_gb_per_s: float = V.default("custom_scale_up_gb_per_s")
    scale_up_topology: str = V.default("custom_scale_up_topology")
    scale_out_gb_per_s: float = V.default("custom_scale_out_gb_per_s")
    capex_usd: float | None = V.default("custom_capex_usd")
    usd_per_gpu_hour: float | None = V.default("custom_usd_per_gpu_hour")
    power_w: float = V.default("custom_power_w")
    generation: str | None = V.default("custom_generation")

    def row(self, *, as_of: str | None = None) -> dict[str, str | None]:
        """The ``accelerators.csv`` row (text cells, as read from a file) of this accelerator."""
        def num(v):
            if v is None:
                return None
            v = float(v)
            return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)

        today = as_of or _dt.date.today().isoformat()
        year = min(max(int(today[:4]), 2015), 2035)
        cells = {c: None for c in ACCELERATOR_SCHEMA}
        cells.update({
            "id": CUSTOM_ID, "display_name": str(self.name).strip() or "Custom accelerator", "vendor": "Custom",
            "year": str(year), "bf16_dense_tflop_per_s": num(self.bf16_tflop_per_s),
            "fp8_dense_tflop_per_s": num(self.fp8_tflop_per_s), "fp4_dense_tflop_per_s": num(self.fp4_tflop_per_s),
            "hbm_capacity_gib": num(self.hbm_gib), "hbm_bandwidth_tb_per_s": num(self.hbm_tb_per_s),
            "tdp_w": num(self.power_w), "all_in_power_w": num(self.power_w),
            "scale_up_domain_size": num(int(self.scale_up_domain_size)),
            "scale_up_bandwidth_gb_per_s": num(self.scale_up_gb_per_s), "scale_up_tech": "custom scale-up",
            "scale_up_topology": self.scale_up_topology,
            "scale_out_bandwidth_gb_per_s": num(self.scale_out_gb_per_s), "scale_out_nic": "custom scale-out",
            "all_in_capex_usd": num(self.capex_usd),
            "capex_basis": "market-listing" if self.capex_usd is not None else None,
            "rental_usd_per_hour": num(self.usd_per_gpu_hour),
            "rental_tier": "contract" if self.usd_per_gpu_hour is not None else None,
            "rental_basis": "user-entered rate" if self.usd_per_gpu_hour is not None else None,
            "generation": self.generation, "source": SOURCE, "as_of": today,
            "notes": "Custom accelerator: tdp_w is set to the all-in power entered (the split is not known).",
        })
        return cells


FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(CustomAccelerator))
FIELD_UNITS: dict[str, str] = {f: V.FIELDS[f"custom_{f}"].unit for f in FIELD_NAMES}
"""Unit of each :class:`CustomAccelerator` field (econ.vocabulary: field ``custom_<name>``)."""


def check(spec: CustomAccelerator) -> None:
    """Raise InvalidInputError for a field outside its one range (:data:`econ.vocabulary.FIELDS`, the range the
    catalog schema also applies to the column it becomes), an unknown generation, or no price at all."""
    for f in FIELD_NAMES:
        V.FIELDS[f"custom_{f}"].check(getattr(spec, f), shown_as=f"custom accelerator {f}")
    if spec.capex_usd is None and spec.usd_per_gpu_hour is None:
        raise InvalidInputError("custom accelerator: give capex_usd (owned) or usd_per_gpu_hour (rented), or both")


def with_custom_accelerator(catalog: Catalog, spec: CustomAccelerator, *, as_of: str | None = None) -> Catalog:
    """``catalog`` with ``spec`` appended as the accelerator :data:`CUSTOM_ID` (replacing an earlier one).

    Parameters
    ----------
    catalog : Catalog
    spec : CustomAccelerator
    as_of : str, optional
        Date of the row (ISO; default today).

    Returns
    -------
    Catalog, a new object (the engine caches its arrays per catalog object).

    Raises
    ------
    InvalidInputError
        A field that is not a positive finite number, or no price.
    DataError
        The row fails the catalog's validation (a value outside the schema's range or a plausibility rule
        of :mod:`econ.tables.rules`), naming the column, the value and the range.
    """
    from econ.tables import catalog as cat_mod

    check(spec)
    raw = pl.DataFrame([spec.row(as_of=as_of)], schema={c: pl.String for c in ACCELERATOR_SCHEMA})
    try:
        typed = validate_table(raw, ACCELERATOR_SCHEMA, "id", "custom accelerator")
        si = cat_mod._accelerators_si(typed)  # the SI columns load_catalog adds (bytes, bytes/s, FLOP/s)
    except DataError as exc:
        raise DataError(str(exc).replace(f"row {CUSTOM_ID}, ", "")) from None
    rest = catalog.accelerators.filter(pl.col("id") != CUSTOM_ID)
    merged = pl.concat([rest, si], how="diagonal_relaxed").select(rest.columns)
    return replace(catalog, accelerators=merged)


__all__ = ["CustomAccelerator", "CUSTOM_ID", "FIELD_UNITS", "FIELD_NAMES", "check", "with_custom_accelerator",
           "SOURCE"]
