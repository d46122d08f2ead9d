"""Fit per-kernel efficiencies to the measured tables in data/kernels/ (AIConfigurator, offline input).

Run: ``.venv/bin/python benchmarks/fit_kernels.py`` (``--boot N`` bootstrap resamples, default 200;
``--backend`` to restrict; ``--csv PATH`` also writes every fitted number as one long table).

Reads only data/kernels/*.csv (written by scripts/extract_aiconfigurator.py) and prints, per
(chip, precision) and engine:

1. Dense GEMM (gemm_efficiency.csv)
   - small-m weight streaming: least squares of latency on bytes over every shape at m <= 16,
     t = t0 + bytes / (eta_bw * HBM): ``eta_bw`` (asymptotic fraction of datasheet HBM bandwidth) and
     ``t0_us`` (per-kernel fixed latency: launch tail, activation quantization, split-K reduction);
   - ``mfu_large_m``: median achieved fraction of dense peak over shapes at m >= 4096;
   - the efficiency curve eff(AI) = E_max / (1 + (AI_half / AI)^p) over all (m, shape) rows,
     least squares in log eff; ``eta_bw_equiv = E_max * peak / (AI_half * HBM)`` is the bandwidth
     efficiency the curve implies far below the ridge (exact for p = 1, where the curve is
     t = t_flop/E_max + t_mem/eta_bw_equiv, i.e. no overlap of the two).
2. MoE (moe_efficiency.csv, balanced routing): ``t0_us`` + ``eta_bw`` from tokens <= 16 (decode), the
   median fraction of dense peak at >= 256 tokens per expert (prefill), eff(tokens per expert) with the
   same curve, and the latency ratio power-law (alpha 1.01) / balanced routing (TRT-LLM EP8).
3. Attention (attention_efficiency.csv): decode t = t0 + bytes / (eta * HBM) (GQA: KV bytes; MLA: the
   576-dim latent cache) plus the compute fraction of MLA decode; prefill MFU (causal FLOPs) at the
   largest cases.
4. All-reduce (allreduce.csv): t = a + M / B fitted in relative error per (chip, implementation,
   ranks); reported in econ's ring convention (econ.physics.communication.ring_allreduce_time_s):
   ``alpha_us_per_hop = a / (2 (N - 1))`` and ``link_GBps = 2 (N - 1) / N * B`` (= NCCL bus bandwidth),
   plus the smallest measured latency and the largest bus bandwidth.

Standard errors: bootstrap (resampling GEMM shapes, MoE models x token counts, attention cases, message
sizes) with a fixed seed, so the printout is reproducible. No econ code is imported or changed.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import polars as pl
from scipy.optimize import least_squares

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "data" / "kernels"
PREC_COL = {"bf16": "bf16_dense_tflop_per_s", "fp8": "fp8_dense_tflop_per_s", "fp4": "fp4_dense_tflop_per_s"}
ORDER = ["a100_sxm", "h100_sxm", "h200_sxm", "b200_sxm", "gb200", "b300_sxm", "gb300"]
RNG_SEED = 20261122


def chip_specs() -> dict[str, dict[str, float]]:
    acc = pl.read_csv(ROOT / "data" / "accelerators.csv", infer_schema_length=0)
    out = {}
    for r in acc.iter_rows(named=True):
        spec = {"hbm": float(r["hbm_bandwidth_tb_per_s"]) * 1e12}
        for p, col in PREC_COL.items():
            spec[p] = float(r[col]) * 1e12 if r[col] else math.nan
        out[r["id"]] = spec
    return out


# --- small fitting helpers -----------------------------------------------------------------------
def affine_fit(x: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    """t = a + b x by least squares in relative error (weights 1/t); returns (a, b), a, b >= 0."""
    w = 1.0 / t
    A = np.column_stack([w, x * w])
    res = least_squares(lambda c: A @ c - 1.0, x0=[t.min() * 0.5, max((t.max() - t.min()) / max(np.ptp(x), 1), 1e-18)],
                        bounds=([0.0, 0.0], [np.inf, np.inf]), x_scale="jac")
    return float(res.x[0]), float(res.x[1])


def roofline_fit(tm1: np.ndarray, tc1: np.ndarray, t: np.ndarray, q_fixed: float | None = None):
    """Fit t = t0 + (tm^q + tc^q)^(1/q), tm = tm1/eta_bw, tc = tc1/eta_c, in log space.

    tm1 = bytes / HBM and tc1 = FLOPs / peak are the ideal (100%) roofline times [s]. Returns
    (t0 [s], eta_bw, eta_c, q, rms log error). q -> infinity is econ's max(t_mem, t_flop); q = 1 is
    their sum (no overlap), the lower bound of the fit. eta_c > 1 or eta_bw > 1 flag data the model cannot explain.
    """
    lt = np.log(t)

    def model(c):
        t0, lb, lc, q = c[0], c[1], c[2], (q_fixed if q_fixed is not None else c[3])
        tm, tc = tm1 * np.exp(-lb), tc1 * np.exp(-lc)
        hi = np.maximum(tm, tc)
        return t0 + hi * (1.0 + (np.minimum(tm, tc) / hi) ** q) ** (1.0 / q)

    x0 = [np.min(t) * 0.5, np.log(0.7), np.log(0.6)] + ([] if q_fixed is not None else [2.0])
    lo = [0.0, np.log(0.02), np.log(0.01)] + ([] if q_fixed is not None else [1.0])
    hi = [np.min(t) * 1.0, np.log(1.5), np.log(1.5)] + ([] if q_fixed is not None else [12.0])
    res = least_squares(lambda c: np.log(model(c)) - lt, x0=x0, bounds=(lo, hi), x_scale=[np.min(t), 1, 1, 1][:len(x0)])
    c = res.x
    q = q_fixed if q_fixed is not None else c[3]
    return float(c[0]), float(np.exp(c[1])), float(np.exp(c[2])), float(q), float(np.sqrt(np.mean(res.fun ** 2)))


def boot(groups: np.ndarray, fn, n_boot: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Point estimate of fn(rows) on all rows, and bootstrap SE resampling whole groups.

    A resample without the rows a statistic needs (e.g. no large-m row) gives NaN and is skipped.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return _boot(groups, fn, n_boot, rng)


def _boot(groups, fn, n_boot, rng):
    uniq = np.unique(groups)
    est = np.asarray(fn(np.arange(len(groups))), dtype=float)
    draws = []
    idx_by = {g: np.flatnonzero(groups == g) for g in uniq}
    for _ in range(n_boot):
        pick = rng.choice(uniq, size=len(uniq), replace=True)
        idx = np.concatenate([idx_by[g] for g in pick])
        try:
            draws.append(np.asarray(fn(idx), dtype=float))
        except (ValueError, np.linalg.LinAlgError):
            continue
    se = np.nanstd(np.array(draws), axis=0, ddof=1) if len(draws) > 2 else np.full_like(est, np.nan)
    return est, se


def pm(v: float, se: float, fmt: str = ".2f") -> str:
    if not np.isfinite(v):
        return "-"
    return f"{v:{fmt}}±{se:{fmt}}" if np.isfinite(se) else f"{v:{fmt}}"


def table(rows: list[dict], cols: list[str], title: str) -> None:
    print(f"\n## {title}\n")
    if not rows:
        print("(no rows)")
        return
    w = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in cols}
    print("  ".join(c.ljust(w[c]) for c in cols))
    print("  ".join("-" * w[c] for c in cols))
    for r in rows:
        print("  ".join(str(r.get(c, "")).ljust(w[c]) for c in cols))


def sort_key(r):
    return (ORDER.index(r["chip"]) if r["chip"] in ORDER else 99, r.get("quant", ""), r.get("engine", ""))


# --- 1. GEMM -------------------------------------------------------------------------------------
def physical(df: pl.DataFrame, what: str) -> pl.DataFrame:
    """Drop rows above 100% of HBM bandwidth or of dense peak (cache-resident working sets or a
    collector artifact; see data/README.md), saying how many."""
    bad = (pl.col("memory_bound_frac_of_hbm_bandwidth") > 1.0) | (pl.col("achieved_frac_of_dense_peak") > 1.0)
    n_bad = df.filter(bad).height
    if n_bad:
        print(f"\n({what}: {n_bad} of {df.height} rows above 100% of HBM bandwidth or dense peak left out of the fits)")
    return df.filter(~bad)


ROOF_PARAMS = ["t0_s", "eta_bw", "eta_c", "q"]


def roof_columns(est, se) -> dict:
    return dict(t0_us=pm(est[0] * 1e6, se[0] * 1e6, ".1f"), eta_bw=pm(est[1], se[1]), eta_c=pm(est[2], se[2]),
                q=pm(est[3], se[3], ".1f"), rms_log=f"{est[4]:.2f}")


def fit_gemm(df: pl.DataFrame, specs, n_boot, rng, out) -> None:
    df = physical(df, "GEMM")
    rows = []
    for (system, acc, backend, quant, prec), g in df.group_by(
            ["system", "accelerator_id", "backend", "quant", "compute_precision"], maintain_order=True):
        spec = specs[acc]
        peak, bw = spec[prec], spec["hbm"]
        shape = (g["n"].cast(str) + "x" + g["k"].cast(str)).to_numpy()
        m, n, k = (g[c].to_numpy().astype(float) for c in ("m", "n", "k"))
        t = g["latency_s"].to_numpy()
        nbytes = g["memory_bound_frac_of_hbm_bandwidth"].to_numpy() * bw * t
        frac = g["achieved_frac_of_dense_peak"].to_numpy()
        tm1, tc1 = nbytes / bw, 2 * m * n * k / peak
        small = (m <= 16) & (n * k >= 25e6)        # weight streaming, shapes of >= 25M parameters
        large = m >= 4096

        est, se = boot(shape, lambda i: roofline_fit(tm1[i], tc1[i], t[i]), n_boot, rng)
        (bwm,), (bwm_se,) = boot(shape, lambda i: [np.median(nbytes[i][small[i]] / t[i][small[i]] / bw)], n_boot, rng) \
            if small.any() else ((np.nan,), (np.nan,))
        (mfu,), (mfu_se,) = boot(shape, lambda i: [np.median(frac[i][large[i]])], n_boot, rng) \
            if large.any() else ((np.nan,), (np.nan,))
        ai_half = est[2] * peak / (est[1] * bw)
        rows.append(dict(chip=system, engine=backend, quant=quant, prec=prec, **roof_columns(est, se),
                         AI_half=f"{ai_half:.0f}", bw_frac_m16=pm(bwm, bwm_se), mfu_m4096=pm(mfu, mfu_se),
                         n=len(g)))
        out += [dict(table="gemm", chip=system, engine=backend, quant=quant, parameter=p_, value=v, se=s_)
                for p_, v, s_ in zip(ROOF_PARAMS + ["bw_frac_m16", "mfu_m4096"], [*est[:4], bwm, mfu], [*se[:4], bwm_se, mfu_se])]
    rows.sort(key=sort_key)
    table(rows, ["chip", "engine", "quant", "prec", "eta_bw", "eta_c", "t0_us", "q", "AI_half", "rms_log",
                 "bw_frac_m16", "mfu_m4096", "n"],
          "Dense GEMM: t = t0 + (t_mem^q + t_flop^q)^(1/q), t_mem = bytes/(eta_bw*HBM), t_flop = FLOPs/(eta_c*peak); "
          "model-free: median HBM fraction at m<=16 (>=25M-param shapes), median fraction of peak at m>=4096")


# --- 2. MoE --------------------------------------------------------------------------------------
TPE_BINS = [(0, 1, "<=1"), (1, 8, "1-8"), (8, 64, "8-64"), (64, 512, "64-512"), (512, 1e9, ">512")]


def fit_moe(df: pl.DataFrame, specs, n_boot, rng, out) -> None:
    rows, curve = [], []
    bal = physical(df.filter(pl.col("distribution") == "balanced"), "MoE balanced")
    for (system, acc, backend, quant, prec, ep), g in bal.group_by(
            ["system", "accelerator_id", "backend", "quant", "compute_precision", "moe_ep_size"], maintain_order=True):
        spec = specs[acc]; peak, bw = spec[prec], spec["hbm"]
        case = np.arange(g.height)
        model = g["model_id"].to_numpy()
        t = g["latency_s"].to_numpy(); tpe = g["tokens_per_expert"].to_numpy()
        frac = g["achieved_frac_of_dense_peak"].to_numpy()
        nbytes = g["memory_bound_frac_of_hbm_bandwidth"].to_numpy() * bw * t
        flop = g["achieved_flop_per_s"].to_numpy() * t
        est, se = boot(case, lambda i: roofline_fit(nbytes[i] / bw, flop[i] / peak, t[i]), n_boot, rng)
        big = tpe >= 256
        (mfu,), (mfu_se,) = boot(case, lambda i: [np.median(frac[i][big[i]])], n_boot, rng) if big.sum() >= 2 \
            else ((np.nan,), (np.nan,))
        rows.append(dict(chip=system, engine=backend, quant=quant, prec=prec, ep=ep, **roof_columns(est, se),
                         mfu_tpe256=pm(mfu, mfu_se), n=g.height, models=",".join(sorted(set(model)))))
        out += [dict(table="moe", chip=system, engine=backend, quant=f"{quant} ep{ep}", parameter=p_, value=v, se=s_)
                for p_, v, s_ in zip(ROOF_PARAMS + ["mfu_tpe256"], [*est[:4], mfu], [*se[:4], mfu_se])]
        if backend == "trtllm" and ep == 8:
            row = dict(chip=system, quant=quant, prec=prec)
            for lo, hi, lab in TPE_BINS:
                sel = (tpe > lo) & (tpe <= hi)
                row[f"tpe {lab}"] = f"{np.median(frac[sel]):.3f}" if sel.any() else "-"
            curve.append(row)
    rows.sort(key=lambda r: (*sort_key(r), r["ep"]))
    table(rows, ["chip", "engine", "quant", "prec", "ep", "eta_bw", "eta_c", "t0_us", "q", "rms_log", "mfu_tpe256", "n",
                 "models"],
          "MoE fused grouped GEMM (balanced routing, one rank): t = t0 + (t_mem^q + t_flop^q)^(1/q) over token counts "
          "1-16384, t_mem = active local expert bytes/(eta_bw*HBM), t_flop = routed FLOPs/(eta_c*peak); "
          "mfu_tpe256 = median fraction of peak at >=256 tokens per expert")
    curve.sort(key=sort_key)
    table(curve, ["chip", "quant", "prec"] + [f"tpe {lab}" for *_, lab in TPE_BINS],
          "MoE efficiency vs tokens per expert (fraction of dense peak, median over models; TRT-LLM, EP8, balanced)")

    # routing imbalance: power_law_1.01 / balanced, TRT-LLM EP8
    key = ["system", "backend", "quant", "model_id", "moe_ep_size", "num_tokens"]
    plw = df.filter(pl.col("distribution") == "power_law_1.01").select(*key, pl.col("latency_s").alias("t_pl"))
    j = df.filter(pl.col("distribution") == "balanced").select(*key, pl.col("latency_s").alias("t_bal")).join(plw, on=key)
    j = j.with_columns((pl.col("t_pl") / pl.col("t_bal")).alias("r"),
                       pl.when(pl.col("num_tokens") <= 16).then(pl.lit("1-16"))
                       .when(pl.col("num_tokens") <= 512).then(pl.lit("32-512")).otherwise(pl.lit(">=1024")).alias("tok"))
    imb = []
    for (system,), g in j.group_by(["system"], maintain_order=True):
        row = dict(chip=system, n=g.height)
        for tok in ["1-16", "32-512", ">=1024"]:
            r = g.filter(pl.col("tok") == tok)["r"].to_numpy()
            if len(r):
                (med,), (se,) = boot(np.arange(len(r)), lambda i: [np.median(r[i])], n_boot, rng)
                row[f"tokens {tok}"] = pm(med, se)
                out.append(dict(table="moe_imbalance", chip=system, engine="trtllm", quant="all ep8",
                                parameter=f"powerlaw_over_balanced_tokens_{tok}", value=med, se=se))
        imb.append(row)
    imb.sort(key=lambda r: ORDER.index(r["chip"]))
    table(imb, ["chip", "tokens 1-16", "tokens 32-512", "tokens >=1024", "n"],
          "MoE routing imbalance: latency with power-law routing (alpha 1.01) / balanced, TRT-LLM EP8, median over "
          "models and quants")


# --- 3. attention --------------------------------------------------------------------------------
def fit_attention(df: pl.DataFrame, specs, n_boot, rng, out) -> None:
    df = physical(df, "attention")
    dec_rows, pre_rows = [], []
    dec = df.filter(pl.col("phase") == "decode")
    for (system, acc, backend, mech, kvd, prec), g in dec.group_by(
            ["system", "accelerator_id", "backend", "attention_type", "kv_cache_dtype", "compute_precision"],
            maintain_order=True):
        spec = specs[acc]
        t = g["latency_s"].to_numpy(); nb = g["bytes_moved"].to_numpy(); fl = g["flop"].to_numpy()
        case = np.arange(g.height)
        memf = g["memory_bound_frac_of_hbm_bandwidth"].to_numpy(); flf = g["achieved_frac_of_dense_peak"].to_numpy()
        heavy = nb >= np.quantile(nb, 0.75)
        roof1 = np.maximum(nb / spec["hbm"], fl / spec[prec])   # ideal roofline time of each case [s]
        roof_frac = roof1 / t

        def f(i):   # t = t0 + max(bytes/HBM, FLOPs/peak) / eta_roof
            a, b = affine_fit(roof1[i], t[i])
            return [a, 1.0 / b]

        est, se = boot(case, f, n_boot, rng)
        (mh, fh, rh), (mh_se, fh_se, rh_se) = boot(
            case, lambda i: [np.median(memf[i][heavy[i]]), np.median(flf[i][heavy[i]]), np.median(roof_frac[i][heavy[i]])],
            n_boot, rng)
        dec_rows.append(dict(chip=system, engine=backend, type=mech, kv=kvd, prec=prec,
                             t0_us=pm(est[0] * 1e6, se[0] * 1e6, ".1f"), eta_roof=pm(est[1], se[1]),
                             roof_frac_heavy=pm(rh, rh_se), bw_frac_heavy=pm(mh, mh_se), flop_frac_heavy=pm(fh, fh_se),
                             n=g.height))
        out += [dict(table="attn_decode", chip=system, engine=backend, quant=f"{mech} kv {kvd}", parameter=p_, value=v, se=s_)
                for p_, v, s_ in [("t0_s", est[0], se[0]), ("eta_roof", est[1], se[1]), ("roof_frac_heavy", rh, rh_se),
                                  ("bw_frac_heavy", mh, mh_se), ("flop_frac_heavy", fh, fh_se)]]
    pre = df.filter(pl.col("phase") == "prefill")
    for (system, backend, mech, ad, prec), g in pre.group_by(
            ["system", "backend", "attention_type", "attn_dtype", "compute_precision"], maintain_order=True):
        fl = g["flop"].to_numpy(); frac = g["achieved_frac_of_dense_peak"].to_numpy()
        case = np.arange(g.height)
        heavy = fl >= np.quantile(fl, 0.5)
        (mfu,), (se,) = boot(case, lambda i: [np.median(frac[i][heavy[i]])], n_boot, rng)
        pre_rows.append(dict(chip=system, engine=backend, type=mech, attn_dtype=ad, prec=prec, mfu_heavy=pm(mfu, se),
                             mfu_max=f"{frac.max():.2f}", n=g.height))
        out.append(dict(table="attn_prefill", chip=system, engine=backend, quant=f"{mech} {ad}", parameter="mfu_heavy",
                        value=mfu, se=se))
    dec_rows.sort(key=lambda r: (*sort_key(r), r["type"], r["kv"]))
    pre_rows.sort(key=lambda r: (*sort_key(r), r["type"], r["attn_dtype"]))
    table(dec_rows, ["chip", "engine", "type", "kv", "prec", "eta_roof", "t0_us", "roof_frac_heavy", "bw_frac_heavy",
                     "flop_frac_heavy", "n"],
          "Decode attention over batch 1-512 x context 1k-32k: t = t0 + max(bytes/HBM, FLOPs/peak)/eta_roof (GQA: KV bytes "
          "bind; MLA at 128 local heads sits near the ridge); *_heavy = medians over the heaviest quartile of cases")
    table(pre_rows, ["chip", "engine", "type", "attn_dtype", "prec", "mfu_heavy", "mfu_max", "n"],
          "Prefill attention: fraction of dense peak (causal FLOPs), median over the heavier half of the cases")


# --- 4. all-reduce -------------------------------------------------------------------------------
def fit_allreduce(df: pl.DataFrame, n_boot, rng, out) -> None:
    rows = []
    for (system, backend, impl, n), g in df.group_by(["system", "backend", "implementation", "num_ranks"], maintain_order=True):
        M = g["message_bytes"].to_numpy().astype(float); t = g["latency_s"].to_numpy()

        def f(idx):
            a, b = affine_fit(M[idx], t[idx])
            return [a * 1e6, a / (2 * (n - 1)) * 1e6, 2 * (n - 1) / n / b / 1e9]

        (a, hop, link), (a_se, hop_se, link_se) = boot(M, f, n_boot, rng)
        rows.append(dict(chip=system, engine=backend, impl=impl, ranks=n, fixed_us=pm(a, a_se, ".1f"),
                         alpha_us_per_hop=pm(hop, hop_se), link_GBps=pm(link, link_se, ".0f"),
                         min_latency_us=f"{t.min() * 1e6:.1f}",
                         max_busbw_GBps=f"{g['busbw_bytes_per_s'].max() / 1e9:.0f}", n=g.height))
        out += [dict(table="allreduce", chip=system, engine=backend, quant=f"{impl} N{n}", parameter=k, value=v, se=s)
                for k, v, s in [("fixed_s", a * 1e-6, a_se * 1e-6), ("alpha_s_per_hop", hop * 1e-6, hop_se * 1e-6),
                                ("link_bytes_per_s", link * 1e9, link_se * 1e9)]]
    rows.sort(key=lambda r: (ORDER.index(r["chip"]), r["engine"], r["ranks"]))
    table(rows, ["chip", "engine", "impl", "ranks", "fixed_us", "alpha_us_per_hop", "link_GBps", "min_latency_us",
                 "max_busbw_GBps", "n"],
          "All-reduce: t = a + M/B in relative error; alpha per hop = a/(2(N-1)), link = 2(N-1)/N*B (econ ring "
          "convention = NCCL bus bandwidth)")


# --- 5. summary per (chip, precision) -------------------------------------------------------------
def summary(out: list[dict]) -> None:
    """The numbers a calibration table needs, TRT-LLM as reference, [min-max] over the other engines."""
    res = pl.DataFrame(out)

    def get(tab, chip, engine, quant, par):
        r = res.filter((pl.col("table") == tab) & (pl.col("chip") == chip) & (pl.col("engine") == engine)
                       & (pl.col("quant") == quant) & (pl.col("parameter") == par))
        return (r["value"][0], r["se"][0]) if r.height else (math.nan, math.nan)

    def spread(tab, chip, quant, par, fmt=".2f"):
        v = [get(tab, chip, e, quant, par)[0] for e in ("vllm", "sglang")]
        v = [x for x in v if np.isfinite(x)]
        return f"[{min(v):{fmt}}-{max(v):{fmt}}]" if v else ""

    rows = []
    for chip in ORDER:
        for quant in ("bfloat16", "fp8", "fp8_block", "nvfp4"):
            bw, bw_se = get("gemm", chip, "trtllm", quant, "bw_frac_m16")
            if not np.isfinite(bw):
                continue
            eb, eb_se = get("gemm", chip, "trtllm", quant, "eta_bw")
            mfu, mfu_se = get("gemm", chip, "trtllm", quant, "mfu_m4096")
            t0, t0_se = get("gemm", chip, "trtllm", quant, "t0_s")
            mb, mb_se = get("moe", chip, "trtllm", f"{quant} ep8", "eta_bw")
            mm, mm_se = get("moe", chip, "trtllm", f"{quant} ep8", "mfu_tpe256")
            mt, mt_se = get("moe", chip, "trtllm", f"{quant} ep8", "t0_s")
            rows.append(dict(chip=chip, quant=quant,
                             gemm_eta_bw_fit=pm(eb, eb_se) + " " + spread("gemm", chip, quant, "eta_bw"),
                             gemm_bw_frac_m16=pm(bw, bw_se) + " " + spread("gemm", chip, quant, "bw_frac_m16"),
                             gemm_mfu_m4096=pm(mfu, mfu_se) + " " + spread("gemm", chip, quant, "mfu_m4096"),
                             gemm_t0_us=pm(t0 * 1e6, t0_se * 1e6, ".1f"),
                             moe_ep8_eta_bw=pm(mb, mb_se), moe_ep8_mfu_tpe256=pm(mm, mm_se),
                             moe_ep8_t0_us=pm(mt * 1e6, mt_se * 1e6, ".0f")))
    table(rows, ["chip", "quant", "gemm_eta_bw_fit", "gemm_bw_frac_m16", "gemm_mfu_m4096", "gemm_t0_us",
                 "moe_ep8_eta_bw", "moe_ep8_mfu_tpe256", "moe_ep8_t0_us"],
          "SUMMARY per (chip, precision): TRT-LLM value±SE [min-max of vLLM, SGLang]")

    rows = []
    for chip in ORDER:
        r = dict(chip=chip)
        for lab, q in [("gqa_bf16kv", "gqa kv bfloat16"), ("gqa_fp8kv", "gqa kv fp8"), ("mla_bf16kv", "mla kv bfloat16")]:
            v, se_ = get("attn_decode", chip, "trtllm", q, "eta_roof")
            r[f"dec_{lab}_eta"] = pm(v, se_)
            v, se_ = get("attn_decode", chip, "trtllm", q, "t0_s")
            r[f"dec_{lab}_t0_us"] = pm(v * 1e6, se_ * 1e6, ".0f")
        for lab, q in [("gqa_bf16", "gqa bfloat16"), ("gqa_fp8", "gqa fp8"), ("mla_bf16", "mla bfloat16")]:
            r[f"pre_{lab}_mfu"] = pm(*get("attn_prefill", chip, "trtllm", q, "mfu_heavy"))
        n = 8 if chip not in ("gb200",) else 4
        for eng, impl in [("trtllm", "trtllm"), ("nccl", "nccl")]:
            v, se_ = get("allreduce", chip, eng, f"{impl} N{n}", "fixed_s")
            r[f"ar{n}_{eng}_fixed_us"] = pm(v * 1e6, se_ * 1e6, ".1f")
            v, se_ = get("allreduce", chip, eng, f"{impl} N{n}", "link_bytes_per_s")
            r[f"ar_{eng}_link_GBps"] = pm(v / 1e9, se_ / 1e9, ".0f")
        r["ar_ranks"] = n
        rows.append(r)
    cols = ["chip"] + [c for c in rows[0] if c != "chip" and not c.startswith("ar")]
    table(rows, cols, "SUMMARY attention per chip, TRT-LLM: decode eta_roof and t0 (t = t0 + roofline/eta_roof), "
                      "prefill fraction of peak")
    for r in rows:
        n = r["ar_ranks"]
        r["ar_trtllm_fixed_us"], r["ar_nccl_fixed_us"] = r.pop(f"ar{n}_trtllm_fixed_us"), r.pop(f"ar{n}_nccl_fixed_us")
    table(rows, ["chip", "ar_ranks", "ar_trtllm_fixed_us", "ar_trtllm_link_GBps", "ar_nccl_fixed_us", "ar_nccl_link_GBps"],
          "SUMMARY all-reduce per chip at 8 ranks (GB200: 4, the largest measured): fixed latency a and link bandwidth "
          "(econ ring convention), TRT-LLM custom kernel vs NCCL")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boot", type=int, default=100, help="bootstrap resamples (default 100)")
    ap.add_argument("--backend", choices=["trtllm", "vllm", "sglang"], help="only this engine")
    ap.add_argument("--csv", type=Path, help="also write every fitted number (long format) to this path")
    args = ap.parse_args(argv)
    if args.boot < 3:
        ap.error(f"--boot={args.boot}: need at least 3 resamples")
    rng = np.random.default_rng(RNG_SEED)
    specs = chip_specs()

    def load(name):
        df = pl.read_csv(KERNELS / name)
        return df.filter(pl.col("backend") == args.backend) if args.backend else df

    out: list[dict] = []
    print("# Kernel efficiencies fitted to data/kernels/ (AIConfigurator measured tables; peaks and HBM from "
          "data/accelerators.csv); value±bootstrap SE")
    fit_gemm(load("gemm_efficiency.csv"), specs, args.boot, rng, out)
    fit_moe(load("moe_efficiency.csv"), specs, args.boot, rng, out)
    fit_attention(load("attention_efficiency.csv"), specs, args.boot, rng, out)
    ar = pl.read_csv(KERNELS / "allreduce.csv")
    if args.backend:
        ar = ar.filter(pl.col("backend").is_in([args.backend, "nccl"]))
    fit_allreduce(ar, args.boot, rng, out)
    if not args.backend:
        summary(out)
    if args.csv:
        pl.DataFrame(out).write_csv(args.csv)
        print(f"\nwrote {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
