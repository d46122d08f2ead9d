"""``econ calibrate``: refit the efficiency profiles on the public measurements, with grouped cross-validation.

Runs :func:`econ.analyses.calibration.fit` and :func:`econ.analyses.calibration.cross_validate` (leave one model x hardware group
out) on ``data/measurements.csv`` and prints the held-out error per family beside the pure roofline and the v1
global efficiencies; ``--write`` writes ``data/calibration.csv`` and, beside it, the held-out error per family
(``calibration_errors.csv``) and every held-out prediction (``calibration_predictions.csv``) (atomic, never over
a file without ``--force``); ``--check`` refits (no cross-validation) and exits 1 naming every parameter of the
committed table that drifted beyond the tolerance (econ.analyses.calibration.DRIFT_RTOL), or when the two error tables
no longer match the measurements or calibration.csv (econ.analyses.calibration.check_errors).
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

from econ.analyses import calibration as cal
from econ.assumptions import IDEAL
from econ.commands._common import add_data_dir, catalog_from, progress, render
from econ.errors import DataError, InvalidInputError
from econ.safe_write import check_target

SHOW = ("errors", "profiles")
SHOWN_DRIFT = 12
"""Drifted parameters printed one per line by --check (then a count)."""


def register(sub) -> None:
    p = sub.add_parser(
        "calibrate", help="refit the efficiency profiles on public measurements (grouped cross-validation)",
        description="Fit the efficiency profiles per (accelerator generation, matmul precision) to "
                    "data/measurements.csv (MAP least squares, priors from the AIConfigurator kernel tables, "
                    "shrinkage to shared values) and report the error of held-out model x hardware groups per "
                    "family, beside the pure roofline and the v1 global efficiencies. Takes a few minutes "
                    "(one refit per group).")
    p.add_argument("--measurements", metavar="FILE",
                   help="measurements CSV [DATA_DIR/measurements.csv, else the shipped one]")
    p.add_argument("--write", action="store_true",
                   help="write the fitted table to DATA_DIR/calibration.csv (or --output) and the held-out errors "
                        "and predictions beside it (calibration_errors.csv, calibration_predictions.csv)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="with --write: the profile table to write instead (the error tables go beside it)")
    p.add_argument("--force", action="store_true", help="with --write: replace an existing file (atomically)")
    p.add_argument("--check", action="store_true",
                   help="refit without cross-validation and exit 1 if the committed calibration.csv drifted "
                        f"(relative tolerance {cal.DRIFT_RTOL:g})")
    p.add_argument("--show", choices=SHOW, default="errors",
                   help="with --format csv/json: the error table (default) or the fitted profiles")
    p.add_argument("--format", default="table", choices=("table", "csv", "json"))
    add_data_dir(p)
    p.set_defaults(func=run)


def _is_file(p: Path) -> bool:
    try:
        return p.is_file()
    except OSError:  # a name longer than the file system allows, a loop of links: not a usable file
        return False


def _paths(args) -> tuple[Path, Path]:
    base = Path(args.data_dir) if args.data_dir else cal.DEFAULT_DATA_DIR
    meas = Path(args.measurements) if args.measurements else (
        base / "measurements.csv" if _is_file(base / "measurements.csv") else cal.MEASUREMENTS_PATH)
    target = Path(args.output) if args.output is not None else base / "calibration.csv"  # '' never means the default
    return meas, target


def _beside(target: Path) -> tuple[Path, Path]:
    """The error and prediction tables written with the profile table ``target`` (same folder and stem)."""
    return target.with_name(f"{target.stem}_errors.csv"), target.with_name(f"{target.stem}_predictions.csv")


def _profiles_frame(full: cal.FitResult) -> pl.DataFrame:
    rows = []
    for prof in full.fitted:
        v, se = full.values[prof], full.se.get(prof, {})
        row = {"profile": prof, "n_cases": full.n_cases[prof], "n_groups": full.n_groups[prof]}
        for k in cal.FIT_PARAMETERS:
            row[k] = v[k]
            row[f"{k}_se"] = se.get(k)
        row["tpot_tail_factor"] = v["tpot_tail_factor"]
        rows.append(row)
    g = {"profile": "shared (global)", "n_cases": sum(full.n_cases[p] for p in full.fitted),
         "n_groups": sum(full.n_groups[p] for p in full.fitted), **full.global_values}
    return pl.DataFrame(rows + [g], infer_schema_length=None)


def _previous(args) -> dict | None:
    """The held-out errors shipped before this fit (DATA_DIR's calibration_predictions.csv), None when none."""
    from econ.errors import DataError
    from econ.tables.catalog import load_calibration_predictions

    try:
        prev = cal.previous_errors(load_calibration_predictions(args.data_dir))
    except DataError:  # an unreadable (or older-schema) table only loses the comparison column
        return None
    return prev or None


def _check_error_tables(args, cases, committed) -> list[str]:
    """Problems of the shipped error tables (econ.analyses.calibration.check_errors); none when they were never written."""
    from econ.tables.catalog import load_calibration_errors, load_calibration_predictions

    errors, preds = load_calibration_errors(args.data_dir), load_calibration_predictions(args.data_dir)
    if errors.height == 0 and preds.height == 0:
        print("econ calibrate: no calibration_errors.csv / calibration_predictions.csv: not checked", file=sys.stderr)
        return []
    return cal.check_errors(errors, preds, committed, cases)


def run(args) -> int:
    if args.check and args.write:
        raise InvalidInputError("--check and --write exclude each other (--check only compares a refit)")
    if (args.output or args.force) and not args.write:
        raise InvalidInputError("--output and --force need --write")
    meas_path, target = _paths(args)
    if args.write:
        check_target(target, args.force, force_hint="--force", what="calibration table")  # before the work
        for extra, what in zip(_beside(target), ("calibration error table", "calibration predictions table")):
            check_target(extra, args.force, force_hint="--force", what=what)
    catalog = catalog_from(args)
    measurements = cal.load_measurements(meas_path)
    try:
        cases = cal.cases_to_points(measurements, catalog)
    except DataError as exc:  # a row of the measurements file: named by its file (issue 21)
        raise DataError(f"{meas_path.name}, {exc}") from None
    with progress("Fitting the efficiency profiles") as advance:
        full = cal.fit(cases, catalog, measurements=measurements)
        advance()
    if args.check:
        committed = catalog.calibration
        if committed is None:
            raise InvalidInputError("no calibration.csv to check (write one with econ calibrate --write)")
        refit = cal.calibration_frame(cases, full, None, measurements, measurements_path=meas_path)
        problems = cal.drift(committed, refit)
        stale = _check_error_tables(args, cases, committed)
        if args.format != "table":  # --format json/csv: the check's findings as data (one row each), exit 1 if any
            rows = [{"kind": "drift", "profile": d["profile"], "parameter": d["parameter"],
                     "committed": float(d["committed"]), "refit": float(d["refit"]),
                     "tolerance": float(d["tolerance"]), "message": None} for d in problems]
            rows += [{"kind": "stale error table", "profile": None, "parameter": None, "committed": None,
                      "refit": None, "tolerance": None, "message": msg} for msg in stale]
            schema = {"kind": pl.String, "profile": pl.String, "parameter": pl.String, "committed": pl.Float64,
                      "refit": pl.Float64, "tolerance": pl.Float64, "message": pl.String}
            render(pl.DataFrame(rows, schema=schema), args.format, vertical_if_single=False)
            return 1 if rows else 0
        if not problems and not stale:
            print(f"calibration.csv matches a refit: {len(cal.PROFILE_PARAMETERS)} parameters x {refit.height} "
                  f"profiles within {cal.DRIFT_RTOL:.0%}")
            return 0
        for msg in stale[:SHOWN_DRIFT]:
            print(f"econ calibrate: stale error table: {msg}", file=sys.stderr)
        if not problems:
            print("econ calibrate: rewrite the tables with econ calibrate --write --force", file=sys.stderr)
            return 1
        fitted = set(full.fitted)  # profiles fitted on their own first: fallbacks only repeat their source
        problems.sort(key=lambda d: (d["profile"] not in fitted, d["profile"]))
        for d in problems[:SHOWN_DRIFT]:
            print(f"econ calibrate: drift: {d['profile']} {d['parameter']}: committed {d['committed']:.6g}, refit "
                  f"{d['refit']:.6g} (tolerance {d['tolerance']:.3g})", file=sys.stderr)
        if len(problems) > SHOWN_DRIFT:
            print(f"econ calibrate: drift: ... and {len(problems) - SHOWN_DRIFT} more parameter(s) in "
                  f"{len({d['profile'] for d in problems})} profiles; rewrite the table with econ calibrate --write "
                  f"--force if the change is intended", file=sys.stderr)
        return 1
    groups = cases.table["group_id"].n_unique()
    with progress("Cross-validating (one refit per held-out group)", total=groups) as advance:
        cv = cal.cross_validate(cases, catalog, measurements, full=full, progress=lambda done, total: advance())
    roof = cal.predict(cases, catalog, IDEAL)
    v1 = cal.predict(cases, catalog, cal.V1_DEFAULTS)
    errors = cal.error_table(cases, {"cv": cv.predictions, "roofline": roof, "v1": v1}, previous=_previous(args))
    if args.write:
        frame = cal.calibration_frame(cases, full, cv, measurements, measurements_path=meas_path,
                                      command="econ calibrate --write")
        path = cal.write_calibration(frame, target, force=args.force)
        print(f"wrote {path} ({frame.height} profiles)", file=sys.stderr)
        err_path, pred_path = _beside(target)
        efr = cal.errors_frame(cases, errors, full.sources, measurements, measurements_path=meas_path,
                               fit_date=frame["fit_date"][0])
        pfr = cal.predictions_frame(cases, {"cv": cv.predictions, "roofline": roof, "v1": v1}, measurements,
                                    fit_date=frame["fit_date"][0])
        for f, dest, what in ((efr, err_path, "calibration error table"), (pfr, pred_path, "calibration predictions table")):
            written = cal.write_table(f, dest, force=args.force, what=what)
            print(f"wrote {written} ({f.height} rows)", file=sys.stderr)
    if args.format != "table":
        render(errors if args.show == "errors" else _profiles_frame(full), args.format, vertical_if_single=False)
        return 0
    prev = [c for c in ("previous_median_abs_error_frac", "previous_p90_abs_error_frac") if c in errors.columns]
    shown = errors.select("by", "family", "n_cases", "n_groups", "cv_median_abs_error_frac",
                          "cv_p90_abs_error_frac", *prev, "roofline_median_abs_error_frac", "v1_median_abs_error_frac")
    print(f"held-out error |predicted / measured - 1| (leave one of {cv.folds} model x hardware groups out), "
          f"roofline (econ cost --ideal) and v1 global efficiencies on the same cases"
          + ("; previous = the held-out errors shipped before this fit, on the cases it had" if prev else ""))
    render(shown, "table", vertical_if_single=False)
    print()
    print("fitted profiles (values, Jacobian standard errors); others fall back: "
          + ", ".join(f"{p} <- {s}" for p, s in sorted(full.sources.items()) if s and p in set(
              cases.table["profile"].to_list())))
    shown = _profiles_frame(full).select("profile", "n_cases", "n_groups", *cal.FIT_PARAMETERS, "tpot_tail_factor")
    fracs = {k: f"{k}_frac" for k in ("eta_bw", "eta_flop", "eta_prefill")}  # shown as percentages
    render(shown.rename(fracs), "table", vertical_if_single=False)
    return 0
