"""KV-cache tiers per accelerator system (``data/kv_tiers.csv``): host memory, local NVMe, remote pool.

One row per (system, tier): capacity and read bandwidth per accelerator and the storage price per GB-hour, each with
its source. ``hardware = default`` rows apply to every accelerator without its own row for that tier (host DRAM over
PCIe Gen5, one NVMe drive per GPU, an RDMA pool). HBM is not in the file: it is the accelerator's own row of the
catalog (capacity beside the weights, HBM bandwidth, $/GB-hour = $/GPU-hour over usable HBM:
:func:`econ.physics.kv_tiers.hbm_usd_per_gb_hour`).
"""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl

from econ import units
from econ.errors import DataError
from econ.physics.kv_tiers import TIERS
from econ.tables.catalog import DEFAULT_DATA_DIR, TXT, TXT_OPT, Col, _num, read_table

KV_TIERS_FILE = "kv_tiers.csv"

KV_TIER_SCHEMA: dict[str, Col] = {
    "id": TXT, "hardware": TXT, "tier": TXT, "medium": TXT,
    "capacity_gb_per_accelerator": _num(0, 1e7, lo_inclusive=False, required=False, unit="GB"),
    "read_gb_per_s_per_accelerator": _num(0, 1e5, lo_inclusive=False, unit="GB/s"),
    "usd_per_gb_hour": _num(0, 10, unit="USD/GB-h"),
    "source": TXT, "as_of": TXT, "notes": TXT_OPT,
}
"""``kv_tiers.csv``: capacity empty = unbounded (a remote pool); a read bandwidth must be > 0."""

DEFAULT_SYSTEM = "default"


def load_kv_tiers(data_dir: str | Path | None = None) -> pl.DataFrame:
    """Read and validate ``kv_tiers.csv`` (a user's ``data_dir`` first, else the shipped file).

    Raises
    ------
    DataError
        A malformed file, a tier that is not one of host/nvme/remote, a bandwidth <= 0, two rows for one
        (hardware, tier), or no ``default`` row for a tier.
    """
    base = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    path = base / KV_TIERS_FILE if (base / KV_TIERS_FILE).is_file() else DEFAULT_DATA_DIR / KV_TIERS_FILE
    df = read_table(path, KV_TIER_SCHEMA, "id")
    bad = df.filter(~pl.col("tier").is_in(list(TIERS[1:])))
    if bad.height:
        raise DataError(f"{KV_TIERS_FILE}: row {bad['id'][0]}, column tier: {bad['tier'][0]!r} is not one of "
                        f"{list(TIERS[1:])} (HBM comes from accelerators.csv)")
    dup = df.group_by("hardware", "tier").len().filter(pl.col("len") > 1)
    if dup.height:
        raise DataError(f"{KV_TIERS_FILE}: two rows for hardware {dup['hardware'][0]!r}, tier {dup['tier'][0]!r}")
    missing = [t for t in TIERS[1:] if df.filter((pl.col("hardware") == DEFAULT_SYSTEM) & (pl.col("tier") == t))
               .height == 0]
    if missing:
        raise DataError(f"{KV_TIERS_FILE}: no '{DEFAULT_SYSTEM}' row for tier(s) {missing}")
    return df


def system_tiers(table: pl.DataFrame, hardware: str) -> list[dict]:
    """The host, NVMe and remote tiers of one accelerator's system (its own rows, else the defaults), in order.

    Returns
    -------
    list of dict per tier: ``tier, medium, capacity_bytes`` (inf = unbounded), ``read_bytes_per_s``,
    ``usd_per_gb_hour``, ``source``, ``as_of``, ``id``.
    """
    out = []
    for tier in TIERS[1:]:
        rows = table.filter((pl.col("tier") == tier) & (pl.col("hardware") == hardware))
        if rows.height == 0:
            rows = table.filter((pl.col("tier") == tier) & (pl.col("hardware") == DEFAULT_SYSTEM))
        r = rows.row(0, named=True)
        cap = r["capacity_gb_per_accelerator"]
        out.append({"tier": tier, "medium": r["medium"], "id": r["id"],
                    "capacity_bytes": math.inf if cap is None else cap * units.BYTES_PER_GB,
                    "read_bytes_per_s": r["read_gb_per_s_per_accelerator"] * units.BYTES_PER_GB,
                    "usd_per_gb_hour": r["usd_per_gb_hour"], "source": r["source"], "as_of": r["as_of"]})
    return out


__all__ = ["KV_TIERS_FILE", "KV_TIER_SCHEMA", "DEFAULT_SYSTEM", "load_kv_tiers", "system_tiers"]
