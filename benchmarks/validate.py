"""Predicted vs measured for every case of data/validation_cases.csv, and the efficiency fit.

Run: ``.venv/bin/python benchmarks/validate.py`` (add ``--data-dir DIR`` for another catalog).

Prints, per case: the layout (TP / attention-DP / EP), the metric, the published value (converted, see
the file's ``unit_note``), the prediction with the current defaults (``econ.assumptions.DEFAULT``),
with the MoE kernel terms switched off (``eta_routed_flop_frac = eta_routed_bw_frac = 1``,
``moe_layer_overhead_s = 0``; identical to the default for dense models) and with the pure roofline
(``IDEAL``), and ratio = predicted(default) / measured. Then the RMS log error of the defaults over the
dense and the MoE in-fit cases, and the least-squares fits: the four dense parameters on the dense
cases, the MoE parameters on the MoE cases with the dense ones held at their defaults, all six jointly,
``eta_routed_bw_frac`` freed, and diagnostic sub-fits by accelerator generation (Hopper FP8/BF16 vs
Blackwell NVFP4) that show where one set of efficiencies cannot serve every generation.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import replace

import numpy as np
import polars as pl

from econ.assumptions import DEFAULT, IDEAL
from econ.catalog import load_catalog
from econ.assumptions import NEUTRAL_DEPLOYMENT
from econ.validation import (DEFAULT_CASES_PATH, DENSE_PARAMETERS, FIT_PARAMETERS, MOE_PARAMETERS, fit_efficiencies,
                             load_cases, predict)

_MS = ("overhead_s", "moe_layer_overhead_s")


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.4g}"


def _rms(values) -> float:
    v = np.asarray([x for x in values if x is not None], dtype=float)
    return float(np.sqrt(np.mean(v ** 2))) if v.size else float("nan")


def _value(k: str, v: float) -> str:
    return f"{v * 1e3:.3g} ms" if k in _MS else f"{v:.3g}"


def _fit_line(label: str, fit) -> str:
    vals = ", ".join(f"{k}={_value(k, v)} +- {_value(k, fit.std_errors[k])}" for k, v in fit.values.items())
    bound = f"; at bound: {', '.join(fit.at_bound)}" if fit.at_bound else ""
    return (f"{label}: {vals}; RMS log error {fit.rms_log_error:.3f} (x{math.exp(fit.rms_log_error):.2f}) "
            f"over {fit.n_cases} cases{bound}")


def _layout(c: dict) -> str:
    parts = [f"TP{c['tp']}" if c["tp"] > 1 or c["dp"] == 1 else "", f"ADP{c['dp']}" if c["dp"] > 1 else "",
             f"EP{c['ep']}" if c["ep"] > 1 else "", f"PP{c['pp']}" if c["pp"] > 1 else ""]
    return " ".join(p for p in parts if p)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="catalog folder (default: the shipped data/)")
    parser.add_argument("--cases", default=str(DEFAULT_CASES_PATH), help="validation-case CSV")
    args = parser.parse_args(argv)

    catalog = load_catalog(args.data_dir)
    cases = load_cases(args.cases, catalog)
    no_moe = replace(DEFAULT, eta_routed_flop_frac=1.0, eta_routed_bw_frac=1.0, moe_layer_overhead_s=0.0)
    default = predict(cases, catalog, DEFAULT)
    plain = predict(cases, catalog, no_moe)
    ideal = predict(cases, catalog, IDEAL, NEUTRAL_DEPLOYMENT)
    moe_ids = catalog.models.filter(pl.col("num_experts") > 0)["id"].implode()
    is_moe = cases.select(pl.col("model").is_in(moe_ids))["model"].to_numpy()

    print(f"Predicted vs measured ({cases.height} cases of {args.cases})")
    print("defaults: " + ", ".join(f"{k}={_value(k, getattr(DEFAULT, k))}" for k in FIT_PARAMETERS)
          + f", eta_routed_bw_frac={DEFAULT.eta_routed_bw_frac:g}, overlap_frac={DEFAULT.overlap_frac:g}; "
          "'no MoE terms' = eta_routed_* = 1, moe_layer_overhead_s = 0; ideal = pure roofline")
    print("ratio = predicted(default) / measured; for times (tpot_s, ttft_s) > 1 means the model is slower, "
          "for rates < 1 means it is slower. '*' = excluded from the fit (see notes in the case file).\n")
    head = (f"{'case':<62} {'layout':<11} {'metric':<28} {'batch':>5} {'measured':>10} {'default':>10} "
            f"{'no MoE':>10} {'ideal':>10} {'ratio':>6}")
    print(head)
    print("-" * len(head))
    for c, d, p, i in zip(cases.iter_rows(named=True), default.iter_rows(named=True), plain.iter_rows(named=True),
                          ideal.iter_rows(named=True)):
        mark = " " if c["in_fit"] else "*"
        ratio = "-" if d["ratio"] is None else f"{d['ratio']:.2f}"
        print(f"{mark}{c['case_id']:<61} {_layout(c):<11} {c['metric']:<28} {d['batch_size']:>5} "
              f"{_fmt(c['measured_value']):>10} {_fmt(d['predicted']):>10} {_fmt(p['predicted']):>10} "
              f"{_fmt(i['predicted']):>10} {ratio:>6}")

    mask = cases["in_fit"].to_numpy()
    err = default["log_error"].to_numpy().astype(float)
    plain_err = plain["log_error"].to_numpy().astype(float)
    for label, sel in (("dense", mask & ~is_moe), ("MoE", mask & is_moe)):
        if sel.any():
            print(f"\n{label} in-fit cases ({int(sel.sum())}): RMS log error {_rms(err[sel]):.3f}, worst |log error| "
                  f"{np.nanmax(np.abs(err[sel])):.3f}, median speed ratio "
                  f"{np.nanmedian(default['speed_ratio'].to_numpy().astype(float)[sel]):.2f}; without the MoE terms "
                  f"RMS {_rms(plain_err[sel]):.3f}", end="")
    print("\nExcluded cases (structural misses, not fitted):")
    for c, d in zip(cases.iter_rows(named=True), default.iter_rows(named=True)):
        if not c["in_fit"]:
            why = re.split(r";|\. ", c["notes"].split(":", 1)[-1].strip())[0]
            why = why if len(why) <= 120 else why[:117] + "..."
            state = "infeasible in the model" if d["predicted"] is None else f"ratio {d['ratio']:.2f}"
            print(f"  {c['case_id']}: {state} -- {why}")

    in_fit = cases.filter(pl.col("in_fit"))
    moe_fit = in_fit.filter(pl.col("model").is_in(moe_ids))
    dense_fit = in_fit.filter(~pl.col("model").is_in(moe_ids))
    print("\nLeast-squares fits on ln(predicted / measured) (scipy.optimize.least_squares, trf):")
    dense = fit_efficiencies(dense_fit, catalog, DEFAULT, parameters=DENSE_PARAMETERS)
    print("  " + _fit_line("dense parameters, dense cases", dense))
    moe = fit_efficiencies(moe_fit, catalog, DEFAULT, parameters=MOE_PARAMETERS)
    print("  " + _fit_line("MoE parameters, MoE cases, dense parameters at their defaults", moe))
    joint = fit_efficiencies(in_fit, catalog, DEFAULT)
    print("  " + _fit_line("all six parameters, all in-fit cases", joint))
    print(f"    start (current defaults) RMS {joint.start_rms_log_error:.3f}; scipy: {joint.message}")
    print("    sensitivity |d log-prediction / d parameter| (per 1.0 of eta, per 1 ms of overhead_s, per 0.1 ms of "
          "moe_layer_overhead_s): " + ", ".join(f"{k} {v:.2f}" for k, v in joint.sensitivity.items()))
    worst = joint.residuals.sort(pl.col("log_error").abs(), descending=True).row(0, named=True)
    print(f"    worst residual at the joint fit: {worst['case_id']} (ratio {worst['ratio']:.2f})")
    bw = fit_efficiencies(moe_fit, catalog, DEFAULT, parameters=MOE_PARAMETERS + ("eta_routed_bw_frac",))
    print("  " + _fit_line("MoE parameters + eta_routed_bw_frac, MoE cases", bw))

    print("\nDiagnostic sub-fits (is one set of efficiencies enough?):")
    for label, frame, params in (
            ("dense Hopper FP8/BF16 rows", dense_fit.filter(pl.col("precision") != "fp4"), DENSE_PARAMETERS),
            ("dense Blackwell NVFP4 rows (throughput only: eta_prefill, overhead held)",
             dense_fit.filter(pl.col("precision") == "fp4"), ("eta_bw", "eta_flop")),
            ("MoE Hopper FP8 rows (eta_routed_flop_frac only)", moe_fit.filter(pl.col("precision") != "fp4"),
             ("eta_routed_flop_frac",)),
            ("MoE Blackwell NVFP4 throughput rows (eta_routed_flop_frac only)",
             moe_fit.filter((pl.col("precision") == "fp4") & (pl.col("metric") == "output_tokens_per_s_per_gpu")),
             ("eta_routed_flop_frac",))):
        print("  " + _fit_line(label, fit_efficiencies(frame, catalog, DEFAULT, parameters=params)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
