"""Bands in every decision: which efficiency profile an answer rests on, and whether two answers can be told apart.

Every figure the engine returns has a calibration band (``*_low`` / ``*_high``: the figure times the 10th and 90th
percentile of measured / predicted throughput on held-out measurements of its efficiency profile,
:func:`econ.engine.band`). A ranking (the cheapest accelerator of a hardware comparison, ``econ compare``'s winner
at a level, a frontier's winner) or a quote's floor that reads the point alone can crown an accelerator whose
profile was never fitted on its own measurements. This module gives the rules every decision uses:

- :func:`profile_table`: per accelerator and precision, the profile its figures come from and whether it is
  *calibrated*: fitted on measurements of its own generation and precision (a profile copied from another one,
  of another generation or of another precision of its generation, is a *fallback*: an unmeasured bf16 profile
  copied from a narrow fp8 one must not outrank the measured bf16 profiles of other generations) with a band no
  wider than :data:`WIDE_BAND_RATIO`; an answer from a fallback or wide-band profile is
  marked in the ranking itself (``profile_note``);
- :func:`distinguish`: two set-ups whose bands overlap are "not distinguishable" rather than a winner and a
  loser; the ranking keeps its order (by the point) and says, for each row, whether its band is apart from the
  first's.

The bands of different accelerators share the model's systematic error, so the test of overlap is conservative
(it calls fewer winners than independent errors would); it is the rule issue 18 asks for.
"""

from __future__ import annotations

import math

import polars as pl

from econ.physics.precision import PRECISIONS
from econ.tables.catalog import Catalog, CatalogCache

WIDE_BAND_RATIO = 2.5
"""A profile whose band, exp(log_ratio_p90 - log_ratio_p10) (high end over low end of measured / predicted), is
wider than this is *wide-band*: the model's throughput is known only to within a factor above 2.5. Assumption: the
best-fitted profiles of data/calibration.csv span 1.6x (cdna3-fp8, 2 groups) to 1.9x (blackwell-fp4, 11 groups;
hopper-fp8, 18 groups: 1.75x); 2.5 is a third above the widest of them, below the profiles whose own held-out
cases sit 3-10x off (cdna4-fp8 3.3x, ada-fp8 3.0x, blackwell-fp8 3.4x, cdna4-fp4 8.6x). [-]"""

PROFILE_COLUMNS: tuple[str, ...] = ("hardware", "precision", "profile", "generation", "band_ratio", "fallback_from",
                                    "calibrated", "profile_status", "profile_note")
"""Columns of :func:`profile_table`."""


PROFILE_TABLE_ENTRIES = 8
"""Catalog objects whose :func:`profile_table` is kept (a frame of a few hundred rows each): the dashboards read it
several times per rerun (every ranking's bands, the quote check's floors), and it depends on the catalog only."""


def profile_table(catalog: Catalog) -> pl.DataFrame:
    """The efficiency profile behind every accelerator and matmul precision, and how far to trust it.

    Parameters
    ----------
    catalog : Catalog (its accelerators' ``generation`` and ``catalog.calibration``, data/calibration.csv)

    Returns
    -------
    pl.DataFrame with :data:`PROFILE_COLUMNS`, one row per accelerator x precision:

    - ``profile``: ``<generation>-<precision>`` of data/calibration.csv (null: no profile, the scalar assumptions);
    - ``band_ratio``: exp(log_ratio_p90 - log_ratio_p10), the width of the band [-];
    - ``fallback_from``: the profile whose values it copies (its own generation had too few measurements);
    - ``calibrated``: fitted on measurements of its own generation and precision (``fallback_from`` null) and
      ``band_ratio`` <= :data:`WIDE_BAND_RATIO`;
    - ``profile_status``: ``calibrated``, ``fallback``, ``wide band``, ``fallback, wide band`` or ``none``;
    - ``profile_note``: the status in words for a table ("" when calibrated), e.g. "fallback profile (cdna3-fp8's
      values), band 3.3x".

    Notes
    -----
    Kept per catalog object (:data:`PROFILE_TABLE_ENTRIES`, :class:`econ.tables.catalog.CatalogCache`; a Catalog is
    frozen and a Polars frame immutable, so the kept frame is the one a new call would build).
    """
    kept = _PROFILE_TABLES.get(catalog, ("profile_table",))
    if kept is None:
        kept = _profile_table(catalog)
        _PROFILE_TABLES.put(catalog, ("profile_table",), kept)
    return kept


_PROFILE_TABLES = CatalogCache(PROFILE_TABLE_ENTRIES)
"""(id(catalog), "profile_table") -> :func:`profile_table` of that catalog."""


def _profile_table(catalog: Catalog) -> pl.DataFrame:
    """:func:`profile_table`, computed."""
    acc = catalog.accelerators
    gens = acc["generation"] if "generation" in acc.columns else pl.Series([None] * acc.height, dtype=pl.String)
    keys = (pl.DataFrame({"hardware": acc["id"], "generation": gens.cast(pl.String)})
            .join(pl.DataFrame({"precision": list(PRECISIONS)}), how="cross")
            .with_columns(pl.format("{}-{}", "generation", "precision").alias("profile")))
    cal = catalog.calibration
    if cal is None or cal.height == 0:
        cal = pl.DataFrame(schema={"profile": pl.String, "log_ratio_p10": pl.Float64, "log_ratio_p90": pl.Float64,
                                   "fallback_from": pl.String})
    cal = cal.select("profile", (pl.col("log_ratio_p90") - pl.col("log_ratio_p10")).exp().alias("band_ratio"),
                     pl.col("fallback_from").cast(pl.String))
    t = keys.join(cal, on="profile", how="left").with_columns(
        pl.when(pl.col("band_ratio").is_null()).then(None).otherwise(pl.col("profile")).alias("profile"))
    # a copy of another profile, of another generation or of another precision of the same generation (cdna3-bf16
    # is cdna3-fp8's values: no bf16 kernel of CDNA 3 was measured), is not fitted on its own measurements
    copied = pl.col("fallback_from").is_not_null()
    wide = pl.col("band_ratio") > WIDE_BAND_RATIO
    status = (pl.when(pl.col("profile").is_null()).then(pl.lit("none"))
              .when(copied & wide).then(pl.lit("fallback, wide band"))
              .when(copied).then(pl.lit("fallback"))
              .when(wide).then(pl.lit("wide band"))
              .otherwise(pl.lit("calibrated")))
    t = t.with_columns(status.alias("profile_status"))
    ratio = pl.format("band {}x", pl.col("band_ratio").round(1))
    source = pl.when(pl.col("fallback_from") == "global").then(pl.lit("the values shared by every generation")) \
        .otherwise(pl.format("{}'s values", pl.col("fallback_from")))
    note = (pl.when(pl.col("profile_status") == "none").then(pl.lit("no calibrated profile (assumed efficiencies)"))
            .when(pl.col("profile_status") == "fallback, wide band").then(pl.format(
                "fallback profile ({}), {}", source, ratio))
            .when(pl.col("profile_status") == "fallback").then(pl.format("fallback profile ({})", source))
            .when(pl.col("profile_status") == "wide band").then(pl.format("wide-band profile, {}", ratio))
            .otherwise(pl.lit("")))
    return t.with_columns((pl.col("profile_status") == "calibrated").alias("calibrated"),
                          note.alias("profile_note")).select(PROFILE_COLUMNS)


def with_profiles(frame: pl.DataFrame, catalog: Catalog, *, hardware: str = "hardware",
                  precision: str = "precision") -> pl.DataFrame:
    """``frame`` with ``profile``, ``calibrated``, ``profile_status`` and ``profile_note`` of each row's accelerator
    and precision (:func:`profile_table`); rows without them get null."""
    prof = profile_table(catalog).select(pl.col("hardware").alias(hardware), pl.col("precision").alias(precision),
                                         "profile", "calibrated", "profile_status", "profile_note")
    drop = [c for c in ("profile", "calibrated", "profile_status", "profile_note") if c in frame.columns]
    return frame.drop(drop).join(prof, on=[hardware, precision], how="left", maintain_order="left")


def overlap(low_a, high_a, low_b, high_b):
    """True where the intervals [low_a, high_a] and [low_b, high_b] share a point (scalars, arrays or expressions).
    A missing end (no band) never overlaps: without a band a difference is taken at face value."""
    return (low_a <= high_b) & (low_b <= high_a)


def distinguish(ranked: pl.DataFrame, *, low: str, high: str, name: str = "hardware") -> pl.DataFrame:
    """Whether each row of a ranking can be told apart from the first (the point's winner) by the bands.

    Parameters
    ----------
    ranked : pl.DataFrame, best first (by the point), with ``name``, ``low`` and ``high`` (null: no band)
    low, high : the band's columns of the figure ranked [its unit]
    name : the column that names a row in the words

    Returns
    -------
    ``ranked`` with ``distinguishable`` (bool: the row's band and the first's do not overlap; null for the first
    row) and ``rank_note``: for the first row "cheapest" or "cheapest; not distinguishable from <names>" (every row
    whose band overlaps its own), for the others "not distinguishable from <first>" or "dearer than <first> beyond
    the bands". Rows without a band are compared by the point ("no band").
    """
    if ranked.height == 0:
        return ranked.with_columns(pl.lit(None, pl.Boolean).alias("distinguishable"),
                                   pl.lit(None, pl.String).alias("rank_note"))
    first = ranked.row(0, named=True)
    lo0, hi0, n0 = first[low], first[high], first[name]
    has0 = lo0 is not None and hi0 is not None and math.isfinite(lo0) and math.isfinite(hi0)
    band = pl.col(low).is_not_null() & pl.col(high).is_not_null()
    over = (band & pl.lit(has0) & overlap(pl.col(low), pl.col(high), pl.lit(lo0), pl.lit(hi0))) if has0 \
        else pl.lit(False)
    out = ranked.with_row_index("_r").with_columns(
        pl.when(pl.col("_r") == 0).then(None).otherwise(~over).alias("distinguishable"))
    ties = out.filter((pl.col("_r") > 0) & ~pl.col("distinguishable").fill_null(True))[name].to_list()
    head = "cheapest" + (f"; not distinguishable from {', '.join(map(str, ties))} (bands overlap)" if ties else "")
    if not has0:
        head += " (no band)"
    note = (pl.when(pl.col("_r") == 0).then(pl.lit(head))
            .when(~band).then(pl.format("dearer than {} (no band)", pl.lit(str(n0))))
            .when(~pl.col("distinguishable")).then(pl.format("not distinguishable from {} (bands overlap)",
                                                              pl.lit(str(n0))))
            .otherwise(pl.format("dearer than {} beyond the bands", pl.lit(str(n0)))))
    return out.with_columns(note.alias("rank_note")).drop("_r")


__all__ = ["WIDE_BAND_RATIO", "PROFILE_COLUMNS", "profile_table", "with_profiles", "overlap", "distinguish"]
