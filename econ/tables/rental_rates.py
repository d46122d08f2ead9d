"""Market GPU rental rates, one sourced row per provider offer, and the rule that picks the catalog's tier rates.

``data/rental_rates.csv`` (columns in ``data/README.md``) lists what hyperscalers, GPU clouds and marketplaces
charge per accelerator-hour, on demand, spot or committed, each row with its source and ``as_of`` date. The
market spreads (an H100 on demand costs $2-4 at GPU clouds and $7-12 at hyperscalers in 2026), so a tier rate
of ``data/accelerators.csv`` is not one provider's price but the median of several, chosen by
:func:`tier_rates_from_rows`:

1. the rows of one accelerator, one provider kind and on-demand commitment (:data:`RULE_COLUMNS` maps each
   on-demand column of accelerators.csv to its kind);
2. each provider's latest row (an approximate ``~`` date counts as the first day of its period, so a dated row
   of the same period wins): one vote per provider;
3. of those, the providers whose latest row is at most :data:`RULE_WINDOW_DAYS` older than the group's newest
   row (a 2025 list price does not vote against a 2026 one);
4. the median of their prices (the mean of the middle two for an even count; a provider listing several
   regions on its latest date votes once, with the median of those rows).

A group without rows leaves its column empty: a tier never borrows another kind's or another chip's rate.
Marketplace, spot and committed rows show the spread on the page but feed no tier.
``tests/tables/test_rental_rates.py`` holds accelerators.csv to this rule; ``scripts/update_rental_tiers.py``
writes the rule's rates into it after rows are added.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl

from econ.errors import DataError
from econ.tables.catalog import DEFAULT_DATA_DIR, Col, read_table

PROVIDER_KINDS: tuple[str, ...] = ("hyperscaler", "gpu-cloud", "marketplace")
"""Who sells the GPU-hour: a hyperscaler (AWS, Google Cloud, Azure, Oracle), a GPU cloud (CoreWeave, Lambda,
Nebius, RunPod... and market indices of their prices), or a marketplace of third-party hosts (Vast.ai)."""

COMMITMENTS: tuple[str, ...] = ("on-demand", "spot", "1-yr", "3-yr", "contract")
"""How long the buyer commits: on demand, interruptible (spot), a 1- or 3-year term, or another contract
(a capacity block, a negotiated cluster price, a 1-month term)."""

RULE_COLUMNS: dict[str, tuple[str, str]] = {
    "rental_on_demand_hyperscaler_usd_per_hour": ("hyperscaler", "on-demand"),
    "rental_on_demand_neocloud_usd_per_hour": ("gpu-cloud", "on-demand"),
}
"""accelerators.csv column -> (provider kind, commitment) of the rows whose median it holds."""

RULE_WINDOW_DAYS = 365
"""Oldest a provider's latest row may be, relative to the newest row of its group, to vote in the median. [days]
Assumption: one year, the span over which the 2025-26 market moved by about 2x (Silicon Data H100 index $2.00
in 2025-12 to $2.81 in 2026-10; AWS cut H100 on demand ~45% in 2025-06)."""

RENTAL_RATE_SCHEMA: dict[str, Col] = {
    "id": Col(pl.String), "accelerator": Col(pl.String), "provider": Col(pl.String),
    "provider_kind": Col(pl.String), "offering": Col(pl.String, required=False), "commitment": Col(pl.String),
    "usd_per_gpu_hour": Col(pl.Float64, lo=0.01, hi=1000.0, unit="USD per accelerator-hour"),
    "region": Col(pl.String, required=False), "source": Col(pl.String), "as_of": Col(pl.String),
    "notes": Col(pl.String, required=False),
}
"""``data/rental_rates.csv``: one provider's price of one accelerator-hour at one commitment (data/README.md)."""

FILE = "rental_rates.csv"


def rental_rates_path(data_dir: str | Path | None = None) -> Path:
    """The ``rental_rates.csv`` :func:`load_rental_rates` reads: ``data_dir``'s, else the shipped one. [path]"""
    base = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    return base / FILE if (base / FILE).is_file() else DEFAULT_DATA_DIR / FILE


def load_rental_rates(data_dir: str | Path | None = None, accelerator_ids=None) -> pl.DataFrame:
    """Read and validate ``rental_rates.csv`` from ``data_dir`` (falling back to the shipped file).

    Parameters
    ----------
    data_dir : str or Path, optional
        A user's data folder; the shipped ``data/`` when None or when the folder has no such file.
    accelerator_ids : iterable of str, optional
        The catalog's accelerator ids; every row's ``accelerator`` must be one of them (not checked when None).

    Returns
    -------
    pl.DataFrame with :data:`RENTAL_RATE_SCHEMA` columns and ``as_of_date`` (the first day of the ``as_of``
    period, a ``pl.Date``).

    Raises
    ------
    DataError
        Every bad cell named (schema, ``as_of`` date, control characters), a ``provider_kind`` outside
        :data:`PROVIDER_KINDS`, a ``commitment`` outside :data:`COMMITMENTS`, or an unknown accelerator id.
    """
    path = rental_rates_path(data_dir)
    table = read_table(path, RENTAL_RATE_SCHEMA, "id")
    problems = []
    for col, allowed in (("provider_kind", PROVIDER_KINDS), ("commitment", COMMITMENTS)):
        for rid, v in table.select("id", col).iter_rows():
            if v not in allowed:
                problems.append(f"row {rid}, column {col}: {v!r} not in {list(allowed)}")
    if accelerator_ids is not None:
        known = set(accelerator_ids)
        for rid, v in table.select("id", "accelerator").iter_rows():
            if v not in known:
                problems.append(f"row {rid}, column accelerator: {v!r} is not an accelerator id of accelerators.csv")
    if problems:
        raise DataError(f"{path.name}: {len(problems)} problem(s):\n  " + "\n  ".join(problems[:40]))
    return table.with_columns(as_of_date=pl.Series([period_start(a) for a in table["as_of"].to_list()],
                                                   dtype=pl.Date))


def period_start(as_of: str) -> date:
    """The first day of an ``as_of`` period: "2026-03-16" -> 2026-03-16, "2026-07" -> 2026-07-01, "~2026" ->
    2026-01-01 (an approximate date counts at the start of its period, so a dated row of that period is later)."""
    text = as_of.strip().lstrip("~")
    parts = [int(p) for p in text.split("-")] + [1, 1]
    return date(parts[0], parts[1], parts[2])


def tier_rates_from_rows(rates: pl.DataFrame) -> pl.DataFrame:
    """The rate of each on-demand tier column of each accelerator, by the rule of this module's docstring.

    Parameters
    ----------
    rates : pl.DataFrame
        :func:`load_rental_rates` output.

    Returns
    -------
    pl.DataFrame, one row per (accelerator, column) that has rows: ``accelerator``, ``column`` (an
    accelerators.csv column of :data:`RULE_COLUMNS`), ``usd_per_gpu_hour`` (the median, to 4 decimals)
    [USD per accelerator-hour], ``providers`` (how many voted), ``as_of`` (the newest row's date, text),
    ``basis`` (the providers and prices that voted, in words), ``low_usd_per_gpu_hour`` /
    ``high_usd_per_gpu_hour`` (the cheapest and dearest vote). Sorted by accelerator and column.
    """
    out = []
    for column, (kind, commitment) in RULE_COLUMNS.items():
        rows = rates.filter((pl.col("provider_kind") == kind) & (pl.col("commitment") == commitment))
        if rows.height == 0:
            continue
        votes = provider_votes(rows, ("accelerator",))
        newest = votes.group_by("accelerator").agg(pl.col("as_of_date").max().alias("_newest"))
        voting = (votes.join(newest, on="accelerator")
                  .filter((pl.col("_newest") - pl.col("as_of_date")).dt.total_days() <= RULE_WINDOW_DAYS)
                  .sort("accelerator", "usd_per_gpu_hour", "provider"))
        for (acc,), g in voting.group_by("accelerator", maintain_order=True):
            prices = g["usd_per_gpu_hour"].to_list()
            words = "; ".join(f"{p} {u:g} ({a})" for p, u, a in g.select("provider", "usd_per_gpu_hour", "as_of")
                              .iter_rows())
            newest_row = g.sort("as_of_date").row(-1, named=True)
            out.append({"accelerator": acc, "column": column, "usd_per_gpu_hour": round(median(prices), 4),
                        "providers": len(prices), "as_of": newest_row["as_of"],
                        "basis": f"median of {len(prices)} {kind} on-demand offer(s): {words}",
                        "low_usd_per_gpu_hour": min(prices), "high_usd_per_gpu_hour": max(prices)})
    schema = {"accelerator": pl.String, "column": pl.String, "usd_per_gpu_hour": pl.Float64, "providers": pl.Int64,
              "as_of": pl.String, "basis": pl.String, "low_usd_per_gpu_hour": pl.Float64,
              "high_usd_per_gpu_hour": pl.Float64}
    return pl.DataFrame(out, schema=schema).sort("accelerator", "column")


def median(values) -> float:
    """Median of a non-empty list of numbers: the middle value, or the mean of the two middle values."""
    v = sorted(float(x) for x in values)
    if not v:
        raise DataError("median of no values")
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2.0


def provider_votes(rows: pl.DataFrame, by: tuple[str, ...]) -> pl.DataFrame:
    """One vote per provider within each group ``by``: the median price of the provider's rows on its latest date.

    Returns
    -------
    pl.DataFrame with ``by`` columns, ``provider``, ``usd_per_gpu_hour`` [USD per accelerator-hour], ``as_of``
    (text) and ``as_of_date``.
    """
    keys = [*by, "provider"]
    last = rows.group_by(keys).agg(pl.col("as_of_date").max().alias("_last"))
    return (rows.join(last, on=keys).filter(pl.col("as_of_date") == pl.col("_last"))
            .group_by(keys).agg(pl.col("usd_per_gpu_hour").median(), pl.col("as_of").first(),
                                pl.col("as_of_date").first())
            .sort(keys))


def spread(rates: pl.DataFrame) -> pl.DataFrame:
    """How wide each accelerator's market is: per (accelerator, provider kind, commitment) the cheapest,
    median and dearest provider vote (:func:`provider_votes`), the number of providers and the newest date.

    Returns
    -------
    pl.DataFrame: ``accelerator``, ``provider_kind``, ``commitment``, ``providers``, ``low_usd_per_gpu_hour``,
    ``median_usd_per_gpu_hour``, ``high_usd_per_gpu_hour`` [USD per accelerator-hour], ``as_of``.
    """
    votes = provider_votes(rates, ("accelerator", "provider_kind", "commitment"))
    return (votes.group_by("accelerator", "provider_kind", "commitment")
            .agg(pl.len().alias("providers"), pl.col("usd_per_gpu_hour").min().alias("low_usd_per_gpu_hour"),
                 pl.col("usd_per_gpu_hour").median().alias("median_usd_per_gpu_hour"),
                 pl.col("usd_per_gpu_hour").max().alias("high_usd_per_gpu_hour"),
                 pl.col("as_of").sort_by("as_of_date").last().alias("as_of"))
            .sort("accelerator", "provider_kind", "commitment"))
