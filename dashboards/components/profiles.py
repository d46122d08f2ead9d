"""Calibration profiles in words: which efficiencies an answer used, and its band, as an analyst reads them.

Display only. The profile of an answer is the engine's (``efficiency_profile`` result column, or
:func:`econ.engine.profile_names` for a set-up without one); the band is the engine's ``*_low`` / ``*_high``
columns, or for a set-up whose frame lacks them the engine's own rule (:func:`econ.engine.profile_band`: a
throughput times exp(p10) .. exp(p90) of the profile's held-out ln(measured / predicted), a cost divided by
them). Profile values, case counts and fallbacks come from ``data/calibration.csv``.
"""

from __future__ import annotations

import math
import re

GENERATION_TITLES: dict[str, str] = {
    "ampere": "Ampere", "hopper": "Hopper", "blackwell": "Blackwell", "ada": "Ada Lovelace", "cdna3": "CDNA 3",
    "cdna4": "CDNA 4", "tpu": "TPU", "gaudi": "Gaudi", "trainium": "Trainium", "other": "Other",
}
"""Accelerator generations (econ.vocabulary.GENERATIONS) as vendors name them."""

PRECISION_SHORT: dict[str, str] = {"bf16": "BF16", "fp8": "FP8", "fp4": "FP4"}

ASSUMED = "Assumed efficiencies"
"""What an answer without a calibrated profile says (the scalar efficiencies of the Assumptions page)."""


def profile_title(profile: str | None) -> str:
    """``hopper-fp8`` -> "Hopper FP8"; ``global`` -> "shared values"; empty -> :data:`ASSUMED`."""
    if not profile or profile == "assumed":
        return ASSUMED
    if profile == "global":
        return "shared values"
    gen, _, p = profile.rpartition("-")
    if not gen:
        return profile
    return f"{GENERATION_TITLES.get(gen, gen.capitalize())} {PRECISION_SHORT.get(p, p.upper())}"


def _rows(catalog) -> dict:
    table = getattr(catalog, "calibration", None)
    return {} if table is None else {r["profile"]: r for r in table.iter_rows(named=True)}


def fallback_text(row: dict) -> str:
    """Where a profile's values come from, in words: "Fitted on its own cases" or "Too few cases (1 group of
    its own): uses Hopper FP8"."""
    src = row.get("fallback_from")
    if not src:
        return "Fitted on its own cases"
    groups = int(row.get("n_groups") or 0)
    own = "no measurement of its own" if groups == 0 else f"{groups} group{'s' if groups != 1 else ''} of its own"
    if src == "global":
        return f"Too few cases ({own}): uses the shared values of every fitted profile"
    return f"Too few cases ({own}): uses {profile_title(src)}"


def answer_text(catalog, profile: str | None, assumptions=None) -> str:
    """The efficiencies an answer used: "Calibrated: Hopper FP8 (n=359)", "Calibrated: Blackwell FP8, too few
    cases: uses Blackwell FP4 (n=95)", or "Assumed efficiencies"; "+ 2 set by you" when the scenario pins some.

    Parameters
    ----------
    catalog : Catalog (its ``calibration`` table)
    profile : str, the ``efficiency_profile`` of the answer ("assumed" / "" / None = none)
    assumptions : econ.assumptions.Assumptions, optional: counts the efficiencies the user set
    """
    if not profile or profile == "assumed":
        return ASSUMED
    rows = _rows(catalog)
    row = rows.get(profile, {})
    src = row.get("fallback_from")
    if src and src != "global":
        n = int(rows.get(src, {}).get("n_cases") or 0)
        text = f"Calibrated: {profile_title(profile)}, too few cases: uses {profile_title(src)} (n={n:,})"
    elif src == "global":
        text = (f"Not calibrated for {profile_title(profile)} (no measurements of this generation): the shared "
                f"values fitted on every measured profile")
    else:
        text = f"Calibrated: {profile_title(profile)} (n={int(row.get('n_cases') or 0):,})"
    pinned = len(assumptions.assumed) if assumptions is not None else 0
    if pinned:
        text += f", {pinned} efficienc{'ies' if pinned != 1 else 'y'} set by you"
    return text


_PROFILE_ID = re.compile(r"\b([a-z0-9]+-(?:bf16|fp8|fp4))\b")


def band_basis(catalog, profile: str | None) -> str:
    """Where a profile's band comes from, in words (from the ``band from ...`` part of its calibration notes):
    "its own held-out cases", "the held-out cases of Blackwell FP4 (too few of its own), widened to cover its
    own 1 held-out case (...)", "every held-out case (too few of its own)"; "" without a profile."""
    if not profile or profile == "assumed":
        return ""
    notes = str(_rows(catalog).get(profile, {}).get("notes") or "")
    part = next((p.strip() for p in notes.split(";") if p.strip().startswith("band from ")), "")
    if not part:
        return "held-out errors (Calibration page)"
    part = re.sub(r" \((\d+) more left out: [^)]*\)", r"; \1 more left out, unreachable speed", part)
    return _PROFILE_ID.sub(lambda m: profile_title(m.group(1)), part[len("band from "):])


def band_label(catalog, profile: str | None) -> str:
    """The band's definition for an answer: "10th to 90th percentile of held-out measured / predicted: " + basis."""
    basis = band_basis(catalog, profile)
    return "10th to 90th percentile of held-out measured / predicted" + (f", from {basis}" if basis else "")


def band_factors(catalog, hardware: str, precision: str, assumptions) -> tuple[str, float, float]:
    """(profile id or "", exp(p10), exp(p90)) of a set-up, from the engine (NaN factors when none).

    The engine's rule (:func:`econ.engine.profile_band`): a throughput's band is the figure times the two
    factors, a cost's the figure divided by them (high factor -> low cost).
    """
    import numpy as np

    from econ import engine
    from econ.physics.precision import PRECISIONS

    arr = engine.catalog_arrays(catalog)
    if hardware not in arr.hardware_ids or precision not in PRECISIONS:
        return "", math.nan, math.nan
    hc = np.array([arr.hardware_ids.index(hardware)])
    pc = np.array([PRECISIONS.index(precision)])
    name = engine.profile_names(arr, assumptions, hc, pc)[0]
    lo, hi = engine.profile_band(arr, assumptions, hc, pc)
    return name, float(np.exp(lo[0])), float(np.exp(hi[0]))


def band_text(low, high, formatter, unit: str) -> str | None:
    """"$0.101 to $0.152 per M output tokens" (None when either end is missing)."""
    if low is None or high is None or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (low, high)):
        return None
    return f"{formatter(low)} to {formatter(high)} {unit}".rstrip()


def profile_of(catalog, hardware: str, precision: str) -> str:
    """The calibration profile id of an accelerator at a matmul precision ("" = none): the engine's lookup
    (:func:`econ.engine.profile_names`) with every efficiency calibrated."""
    from econ.assumptions import DEFAULT

    name, _, _ = band_factors(catalog, hardware, precision, DEFAULT)
    return name


def efficiency_status(catalog, hardware: str, precision: str, assumptions) -> dict[str, str]:
    """Per efficiency field of ``assumptions``: where the value an answer on ``hardware`` at ``precision`` uses
    comes from, in words with the value ("Calibrated, Hopper FP8: 75.4%", "Set by you (the Hopper FP8 profile
    has 75.4%)", "Assumed (not calibrated)").

    Parameters
    ----------
    catalog : Catalog; hardware : accelerator id; precision : "bf16" | "fp8" | "fp4"
    assumptions : econ.assumptions.Assumptions (``calibrated_fields``: the fields the profile sets)

    Returns
    -------
    dict field -> text, for every field of PROFILE_PARAMETERS plus any other field asked by the caller
    (fields not in the profiles read "Assumed (not calibrated)").
    """
    from dashboards.components import sources
    from econ.assumptions import PROFILE_PARAMETERS

    from econ.analyses.calibration import HELD

    prof = profile_of(catalog, hardware, precision)
    row = _rows(catalog).get(prof, {}) if prof else {}
    src = row.get("fallback_from")
    where = profile_title(prof) + (f", values of {profile_title(src)}" if src and src != "global" else "")
    cal = assumptions.calibrated_fields
    out = {}
    for f in PROFILE_PARAMETERS:
        v = row.get(f)
        shown = sources.display_value(f, v) if v is not None else None
        if shown == "1 rows":
            shown = "1 row"
        if not row:
            out[f] = "Assumed (no calibration profile for this accelerator and precision)"
        elif f in cal and f == "tpot_tail_factor":
            runs = "of every profile" if src == "global" else where
            out[f] = f"Measured (p99 / mean TPOT of the MLPerf Server runs, {runs}): {shown}"
        elif f in cal and f in HELD:
            out[f] = f"Held, not fitted ({where}): {shown}"
        elif f in cal and src == "global":
            out[f] = f"Shared value (no measurements of {profile_title(prof)}): {shown}"
        elif f in cal:
            out[f] = f"Calibrated ({where}): {shown}"
        else:
            out[f] = f"Set by you (the {profile_title(prof)} profile has {shown})"
    return out
