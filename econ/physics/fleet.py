"""Fleet physics: compute at scale, power, racks and cooling, failures, checkpoints, goodput, training time.

Pure kernels over scalars, ndarrays, ``pl.Series`` and (where noted) ``pl.Expr``; they broadcast and never
branch on values. No money here (``econ.economics.buildout``), no catalog reading and no sizing
(``econ.analyses.cluster``). The collectives (ring/tree all-reduce, communication-computation ratio) live in
``econ.physics.communication``.

Sources
-------
.. [000] Divergent Compute, "The data-center cluster", First Principles ch. 19, 2026
   (``shared/seeds/000_dbfcb3d82b87f435.txt``): MFU(G) = 0.62 - 0.02 log2 G (illustrative),
   P = G x P_GPU x PUE.
.. [001] ML Systems textbook appendix "Fleet Foundations" (``shared/seeds/001_ce165384d569a782.txt``):
   R_eff = N R_peak MFU eta_scaling eta_goodput (Systems Perspective 1.4); MTBF_sys = MTBF/N (eq. 1);
   14 B/param checkpoints (Table 7); overhead budget (Table 8); scaling efficiency (Table 5); air-cooling
   limit (Tables 9, 12); PUE (Table 13); Amdahl's law; 6 N D training FLOPs.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.errors import InvalidInputError
from econ.units import SECONDS_PER_DAY, SECONDS_PER_HOUR, W_PER_KW
from econ.validate import require_in_range, require_integer

__all__ = [
    "AIR_COOLING_LIMIT_KW_PER_RACK", "AI_RACK_KW_PER_RACK", "CHECKPOINT_BYTES_PER_PARAM", "EFFICIENCY_MODELS",
    "HIGH_DENSITY_RACK_KW_PER_RACK", "MFU_FLOOR_FRAC", "MTBF_H_PER_GPU", "NVL72_RACK_KW_PER_RACK", "OVERHEAD_BUDGET",
    "POWER_BASES", "RESTART_S", "SCALING_EFFICIENCY_POINTS", "SEED001_MFU_FRAC",
    "TRAINING_FLOP_PER_PARAM_PER_TOKEN",
    "air_cooling_ok", "amdahl_speedup", "checkpoint_bytes", "checkpoint_failure_overhead_frac",
    "checkpoint_write_time_s", "cluster_mtbf_h", "efficiency_chain", "facility_power_w", "goodput_frac",
    "implied_mfu_frac", "it_power_w", "littles_law_concurrency", "mfu_at_scale", "peak_flop_per_s", "power_w_per_gpu",
    "prob_at_least_one_failure", "rack_cooling", "rack_count", "rack_power_kw", "realized_flop_per_s",
    "replicas_for_concurrency", "scaling_efficiency_frac", "serving_tokens_per_day", "training_flop",
    "training_time_s", "young_checkpoint_interval_s",
]



# --------------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------------

AIR_COOLING_LIMIT_KW_PER_RACK = 30.0
"""Practical ceiling of forced-air cooling; above it liquid cooling is mandatory. [kW/rack]
Seed 001, Tables 9 and 12 ("Air cooling limit ~30 kW per rack")."""

AI_RACK_KW_PER_RACK = 70.0
"""Current-generation AI rack power; liquid cooling required. [kW/rack]  Seed 001, Tables 9 and 12."""

HIGH_DENSITY_RACK_KW_PER_RACK = 100.0
"""High-density AI rack, direct-to-chip liquid cooling. [kW/rack]  Seed 001, Tables 9 and 12."""

NVL72_RACK_KW_PER_RACK = 120.0
"""GB200/GB300 NVL72 rack power (NVIDIA Hot Chips 2025 summary, ``shared/reference/facility.csv``). [kW/rack]"""

MTBF_H_PER_GPU = 50_000.0
"""Per-GPU mean time to failure used for the fleet failure tables (~5.7 years). [h]  Seed 001, Table 6."""

CHECKPOINT_BYTES_PER_PARAM = 14.0
"""Mixed-precision Adam checkpoint state: 2 B BF16 weights + 12 B FP32 master, momentum, variance. [B]
Seed 001, Table 7. Gradients are transient and not checkpointed."""

TRAINING_FLOP_PER_PARAM_PER_TOKEN = 6.0
"""Dense-Transformer training cost, forward + backward: C ~ 6 N D. [FLOP/(param token)]  Seed 001."""

MFU_FLOOR_FRAC = 0.05
"""Floor applied to the illustrative log-linear MFU curve so it stays positive. [1]
Without it 0.62 - 0.02 log2 G reaches 0 at G = 2^31; 5% is below any reported large-scale MFU
(seed 001: 30-50%), so the floor only binds far outside the curve's intended range (G <= ~10^6)."""

POWER_BASES: tuple[str, ...] = ("tdp", "all-in")
"""Per-GPU power bases: the board TDP (``tdp_w``; seed 001's 700 W H100) or the critical-IT all-in power
(``all_in_power_w``: GPU + share of host, NICs, switches; excludes facility overhead, data/README.md).
A number (W) may be typed instead."""

EFFICIENCY_MODELS: tuple[str, ...] = ("seed000", "seed001")
"""The two named efficiency-at-scale models: seed 000's MFU(G) = 0.62 - 0.02 log2 G alone, and seed 001's
chain MFU x scaling efficiency(G) x goodput."""

SEED001_MFU_FRAC = 0.50
"""Per-GPU MFU of seed 001's compound-loss example (Systems Perspective 1.4; 30-50% is 'well-optimized'). [1]"""

SCALING_EFFICIENCY_POINTS: tuple[tuple[int, float], ...] = ((1, 1.0), (32, 0.90), (256, 0.70), (1024, 0.50),
                                                           (8192, 0.35))
"""Seed 001 Table 5 (32 -> ~90%, 256 -> ~70%, 1,024 -> ~50%, 8,192 -> ~35%) plus the definition at one GPU
(no communication, 100%). :func:`scaling_efficiency_frac` interpolates linearly in log2 G and holds the last
value beyond 8,192 GPUs (the table gives nothing further). [GPU, 1]"""

OVERHEAD_BUDGET: dict[str, float] = {"pipeline_bubbles": 0.05, "checkpointing": 0.03, "failure_recovery": 0.10,
                                     "maintenance": 0.05}
"""Seed 001 Table 8 wall-clock overhead budget; goodput = 1 - sum = 77%. [1]"""

RESTART_S = 600.0
"""Time to detect a failure, replace the node and reload the last checkpoint. ASSUMPTION (10 min), named and
adjustable: seed 001 gives no figure; it only budgets 10% of wall clock for failure recovery (Table 8). [s]"""



# --------------------------------------------------------------------------------------------
# Compute at scale
# --------------------------------------------------------------------------------------------

def mfu_at_scale(num_gpus, mfu_at_1_frac=0.62, decline_per_doubling_frac=0.02,
                 mfu_floor_frac=MFU_FLOOR_FRAC):
    """Illustrative model-FLOPs utilization that falls by a fixed amount per doubling of the cluster.

    Parameters
    ----------
    num_gpus : scalar or array (or ``pl.Series`` / ``pl.Expr``), >= 1
        Accelerators in the cluster. [GPU]
    mfu_at_1_frac : scalar or array, broadcastable
        MFU of a single GPU. [1]
    decline_per_doubling_frac : scalar or array, broadcastable
        MFU lost each time the GPU count doubles. [1]
    mfu_floor_frac : scalar or array, broadcastable
        Lower clip so the line never reaches zero or goes negative. [1]

    Returns
    -------
    scalar or array of the broadcast shape. [1]

    Notes
    -----
    MFU(G) = max(mfu_at_1 - decline * log2 G, floor); seed 000 (chapter 19, "cluster.py"):
    0.62 at 1 GPU, 0.32 at 32,768 GPUs. The seed calls the curve illustrative; real MFU depends on
    model, parallelism and network (seed 001 quotes 30-50% for well-optimized large runs).
    See :data:`MFU_FLOOR_FRAC` for the floor.
    """
    return np.maximum(mfu_at_1_frac - decline_per_doubling_frac * np.log2(num_gpus), mfu_floor_frac)


def peak_flop_per_s(num_gpus, flop_per_s_per_gpu):
    """Aggregate datasheet peak of the cluster.

    Parameters
    ----------
    num_gpus : scalar or array, broadcastable. [GPU]
    flop_per_s_per_gpu : scalar or array, broadcastable
        Datasheet peak per accelerator at the training precision. [FLOP/s]

    Returns
    -------
    scalar or array of the broadcast shape. [FLOP/s]

    Notes
    -----
    R_peak,cluster = N R_peak; seed 001 (1,024 x 989 TFLOP/s = 1,012,736 TFLOP/s), seed 000.
    """
    return num_gpus * flop_per_s_per_gpu


def realized_flop_per_s(num_gpus, flop_per_s_per_gpu, mfu_frac, scaling_efficiency_frac=1.0,
                        goodput_frac=1.0):
    """Useful training FLOP/s after the three multiplicative losses.

    Parameters
    ----------
    num_gpus : scalar or array, broadcastable. [GPU]
    flop_per_s_per_gpu : scalar or array, broadcastable. [FLOP/s]
    mfu_frac : scalar or array, broadcastable
        Model-FLOPs utilization of the per-GPU work. [1]
    scaling_efficiency_frac : scalar or array, broadcastable
        Fraction of compute that survives communication as GPUs are added (seed 001 Table 5:
        ~90% at 32, ~70% at 256, ~50% at 1,024, ~35% at 8,192 GPUs). [1]
    goodput_frac : scalar or array, broadcastable
        Wall-clock fraction spent on useful training (see :func:`goodput_frac`). [1]

    Returns
    -------
    scalar or array of the broadcast shape. [FLOP/s]

    Notes
    -----
    R_eff = N R_peak x MFU x eta_scaling x eta_goodput; seed 001, Systems Perspective 1.4:
    1,024 x 989 TFLOP/s x 0.50 x 0.50 x 0.77 = 194,951.7 TFLOP/s = 19.25% of peak.
    """
    return num_gpus * flop_per_s_per_gpu * mfu_frac * scaling_efficiency_frac * goodput_frac


def amdahl_speedup(num_gpus, serial_frac):
    """Strong-scaling speedup of a fixed workload with a serial fraction (Amdahl's law).

    Parameters
    ----------
    num_gpus : scalar or array, broadcastable, >= 1. [GPU]
    serial_frac : scalar or array, broadcastable, in [0, 1]
        Fraction of single-GPU time that cannot be parallelized (synchronization, collectives,
        pipeline bubbles, checkpoint writes). [1]

    Returns
    -------
    scalar or array of the broadcast shape, in [1, 1 / serial_frac]. [1]

    Notes
    -----
    S(N) = 1 / (s + (1 - s) / N), S -> 1/s as N -> inf. Amdahl (1967), as used in seed 001
    ("Amdahl's Law at fleet scale"): s = 10% gives 7.8x at 32, 9.7x at 256, 9.9x at 1,024 and
    10x at 8,192 GPUs.
    """
    return 1.0 / (serial_frac + (1.0 - serial_frac) / num_gpus)


def scaling_efficiency_frac(num_gpus, points=SCALING_EFFICIENCY_POINTS):
    """Seed 001's scaling efficiency at G GPUs, interpolated in log2 G.

    Parameters
    ----------
    num_gpus : scalar or array, >= 1 [GPU]
    points : sequence of (GPUs, efficiency), ascending in GPUs
        Default :data:`SCALING_EFFICIENCY_POINTS` (seed 001 Table 5).

    Returns
    -------
    float or ndarray of the input's shape, in (0, 1] [1]

    Notes
    -----
    Exact at the table's sizes (32 -> 0.90, 256 -> 0.70, 1,024 -> 0.50, 8,192 -> 0.35); linear in log2 G
    between them; 0.35 beyond 8,192 GPUs (held, not extrapolated: the seed gives no larger size). The seed's
    own check "4,096 GPUs give 2.5x the throughput of 1,024" (31.2% at 4,096 relative to one GPU's 50%)
    sits within this curve's 0.40 at 4,096.
    """
    xs = np.log2([p[0] for p in points])
    ys = [p[1] for p in points]
    out = np.interp(np.log2(np.asarray(num_gpus, dtype=float)), xs, ys)
    return out[()] if np.ndim(out) == 0 else out


def efficiency_chain(num_gpus, model: str = "seed001", *, mfu_frac=None, scaling_efficiency=None,
                     goodput=None) -> pl.DataFrame:
    """Fraction of peak FLOP/s that becomes useful training work, as a named chain of factors.

    Parameters
    ----------
    num_gpus : int or 1-D array-like of int >= 1 [GPU]
    model : {"seed000", "seed001"}
        ``"seed000"``: MFU(G) = 0.62 - 0.02 log2 G (:func:`mfu_at_scale`), which already falls with scale for
        the communication tax, so scaling efficiency is 1; seed 000 applies no goodput (default 1).
        ``"seed001"``: MFU (default 50%) x scaling efficiency(G) (:func:`scaling_efficiency_frac`) x goodput
        (default 77% = 1 - seed 001 Table 8 budget).
    mfu_frac, scaling_efficiency, goodput : float in (0, 1], optional
        Override one factor (a measured MFU, a known scaling efficiency, a computed goodput).

    Returns
    -------
    pl.DataFrame, one row per GPU count: ``num_gpus``, ``efficiency_model``, ``mfu_frac``,
    ``scaling_efficiency_frac``, ``goodput_frac``, ``realized_frac_of_peak`` (their product) and ``chain``
    (the product written out, e.g. ``"MFU 50.0% x scaling 50.0% x goodput 77.0% = 19.25% of peak"``).

    Raises
    ------
    InvalidInputError
        Unknown model; GPU counts not whole or < 1; a factor outside (0, 1].

    Notes
    -----
    Seed 000 at 32,768 GPUs: 32.0% (10.49 of 32.77 EFLOP/s). Seed 001 at 1,024 GPUs: 0.50 x 0.50 x 0.77 =
    19.25% ("roughly 19.2 percent").
    """
    if model not in EFFICIENCY_MODELS:
        raise InvalidInputError(f"efficiency_model={model!r} is not one of {list(EFFICIENCY_MODELS)}")
    g = require_integer("num_gpus", np.atleast_1d(np.asarray(num_gpus, dtype=float)), 1, 1e9, "GPUs")
    for name, v in (("mfu_frac", mfu_frac), ("scaling_efficiency", scaling_efficiency), ("goodput", goodput)):
        if v is not None:
            require_in_range(name, v, 0.0, 1.0, lo_inclusive=False)
    if model == "seed000":
        mfu = mfu_at_scale(g) if mfu_frac is None else np.full(g.shape, float(mfu_frac))
        scale = np.ones(g.shape) if scaling_efficiency is None else np.full(g.shape, float(scaling_efficiency))
        good = np.ones(g.shape) if goodput is None else np.full(g.shape, float(goodput))
    else:
        mfu = np.full(g.shape, SEED001_MFU_FRAC if mfu_frac is None else float(mfu_frac))
        scale = scaling_efficiency_frac(g) if scaling_efficiency is None else np.full(g.shape, float(scaling_efficiency))
        good = np.full(g.shape, goodput_frac(*OVERHEAD_BUDGET.values()) if goodput is None else float(goodput))
    total = mfu * scale * good
    chain = [f"MFU {m:.1%} x scaling {s:.1%} x goodput {q:.1%} = {t:.2%} of peak"
             for m, s, q, t in zip(mfu, scale, good, total)]
    return pl.DataFrame({"num_gpus": g.astype(np.int64), "efficiency_model": [model] * g.size, "mfu_frac": mfu,
                         "scaling_efficiency_frac": np.asarray(scale, dtype=float), "goodput_frac": good,
                         "realized_frac_of_peak": total, "chain": chain})


def implied_mfu_frac(training_flop, gpu_hours, flop_per_s_per_gpu):
    """MFU implied by a published run: useful FLOPs over the peak FLOPs its GPU-hours could have done.

    Parameters
    ----------
    training_flop : scalar or array [FLOP]
    gpu_hours : scalar or array [GPU h]
    flop_per_s_per_gpu : scalar or array [FLOP/s]

    Returns
    -------
    scalar or array of the broadcast shape. [1]

    Notes
    -----
    MFU = C / (GPU-hours x 3,600 x peak). It folds scaling efficiency and goodput in (wall clock is paid).
    """
    return training_flop / (gpu_hours * SECONDS_PER_HOUR * flop_per_s_per_gpu)



# --------------------------------------------------------------------------------------------
# Power, racks and cooling
# --------------------------------------------------------------------------------------------

def power_w_per_gpu(hw: dict, basis) -> float:
    """Per-GPU power on a named basis, or a typed value.

    Parameters
    ----------
    hw : dict
        One accelerator row (``Catalog.accelerator``), with ``tdp_w`` and ``all_in_power_w``. [W]
    basis : {"tdp", "all-in"} or float or str of a number
        ``"tdp"``: board power (seed 001: H100 700 W). ``"all-in"``: critical-IT power incl. the GPU's share of
        host, NICs and switches, without facility overhead (data/README.md; H100 1,500 W = SemiAnalysis's
        150 MW for 100k H100). A number: that many watts.

    Returns
    -------
    float [W]

    Raises
    ------
    InvalidInputError
        Unknown basis name, or a typed value that is not finite or outside (0, 100,000] W.
    """
    if isinstance(basis, str):
        key = basis.strip().lower().replace("_", "-")
        if key == "tdp":
            return float(hw["tdp_w"])
        if key in ("all-in", "allin"):
            return float(hw["all_in_power_w"])
        try:
            basis = float(key)
        except ValueError:
            raise InvalidInputError(f"power_basis={basis!r} is not one of {list(POWER_BASES)} or a number of "
                                    "watts per GPU") from None
    return float(require_in_range("power_w_per_gpu", basis, 0.0, 1e5, "W", lo_inclusive=False))


def it_power_w(num_gpus, power_w_per_gpu):
    """IT (critical) load of the accelerators.

    Parameters
    ----------
    num_gpus : scalar or array, broadcastable. [GPU]
    power_w_per_gpu : scalar or array, broadcastable
        Power per GPU: the TDP (seed 001: H100 700 W) or an all-in figure that includes the GPU's
        share of host, network and cooling (seed 000: ~1,400 W). [W]

    Returns
    -------
    scalar or array of the broadcast shape. [W]

    Notes
    -----
    P_IT = G x P_GPU; seed 001 Table 9 (10,000 x 700 W = 7 MW IT).
    """
    return num_gpus * power_w_per_gpu


def facility_power_w(it_power_w, pue):
    """Total facility load: IT load times power usage effectiveness.

    Parameters
    ----------
    it_power_w : scalar or array, broadcastable. [W]
    pue : scalar or array, broadcastable, >= 1
        Total facility energy / IT energy (seed 001 Table 13: 1.06 liquid-cooled AI, 1.12 best
        air-cooled, 1.40 industry average, 1.58 legacy). [1]

    Returns
    -------
    scalar or array of the broadcast shape. [W]

    Notes
    -----
    P_facility = P_IT x PUE; seed 001 (7 MW x 1.40 = 9.8 MW), seed 000 (P = G P_GPU PUE),
    The Green Grid (2007).
    """
    return it_power_w * pue


def rack_count(num_gpus, gpus_per_rack):
    """Racks needed to hold the GPUs (the last rack may be partly filled).

    Parameters
    ----------
    num_gpus : scalar or array, broadcastable, >= 1. [GPU]
    gpus_per_rack : scalar or array, broadcastable, >= 1. [GPU/rack]

    Returns
    -------
    scalar or array of the broadcast shape, whole numbers (float dtype). [rack]

    Notes
    -----
    racks = ceil(G / GPUs per rack). Seed 000: 8 GPUs per server, several servers per rack.
    """
    return np.ceil(num_gpus / gpus_per_rack)


def rack_power_kw(gpus_per_rack, power_w_per_gpu):
    """Power of one fully populated rack.

    Parameters
    ----------
    gpus_per_rack : scalar or array, broadcastable. [GPU/rack]
    power_w_per_gpu : scalar or array, broadcastable
        Pass an all-in per-GPU figure to include CPUs, NICs and switches in the rack. [W]

    Returns
    -------
    scalar or array of the broadcast shape. [kW]

    Notes
    -----
    P_rack = GPUs per rack x P_GPU; compare with :data:`AIR_COOLING_LIMIT_KW_PER_RACK`
    (seed 001 Table 12: 12 kW traditional, 70 kW current AI rack, 100 kW high-density).
    """
    return gpus_per_rack * power_w_per_gpu / W_PER_KW


def air_cooling_ok(rack_power_kw, limit_kw_per_rack=AIR_COOLING_LIMIT_KW_PER_RACK):
    """Whether a rack can be air-cooled (otherwise liquid cooling is required).

    Parameters
    ----------
    rack_power_kw : scalar or array, broadcastable. [kW]
    limit_kw_per_rack : scalar or array, broadcastable
        Air-cooling ceiling, default :data:`AIR_COOLING_LIMIT_KW_PER_RACK`. [kW/rack]

    Returns
    -------
    bool or bool array of the broadcast shape.

    Notes
    -----
    ok = P_rack <= 30 kW; seed 001 Tables 9 and 12 ("physics ceiling for forced-air convection").
    """
    return rack_power_kw <= limit_kw_per_rack


def rack_cooling(rack_power_kw):
    """Cooling class a rack of this power needs.

    Parameters
    ----------
    rack_power_kw : scalar or array [kW]

    Returns
    -------
    str or ndarray of str: ``"air"`` (<= 30 kW), ``"liquid"`` (<= 70 kW, the current AI rack),
    ``"liquid, high-density"`` (above 70 kW: direct-to-chip; NVL72 racks draw ~120 kW).

    Notes
    -----
    Limits: seed 001 Tables 9 and 12 (air ~30 kW, AI rack ~70 kW, high density 100 kW) and the 120 kW
    GB200/GB300 NVL72 rack (:data:`NVL72_RACK_KW_PER_RACK`).
    """
    kw = np.asarray(rack_power_kw, dtype=float)
    out = np.select([kw <= AIR_COOLING_LIMIT_KW_PER_RACK, kw <= AI_RACK_KW_PER_RACK], ["air", "liquid"],
                    "liquid, high-density")
    return out[()] if out.ndim == 0 else out



# --------------------------------------------------------------------------------------------
# Reliability, checkpoints, goodput
# --------------------------------------------------------------------------------------------

def cluster_mtbf_h(num_gpus, mtbf_h_per_gpu=MTBF_H_PER_GPU):
    """Mean time between GPU failures anywhere in the cluster.

    Parameters
    ----------
    num_gpus : scalar or array, broadcastable, >= 1. [GPU]
    mtbf_h_per_gpu : scalar or array, broadcastable, > 0
        Per-GPU MTBF (seed 001: 50,000 h). [h]

    Returns
    -------
    scalar or array of the broadcast shape. [h]

    Notes
    -----
    MTBF_system = MTBF_component / N for independent components with constant failure rates;
    seed 001 eq. 1 and Table 6 (256 -> 195.3 h, 2,048 -> 24.4 h, 8,192 -> 366.2 min,
    100,000 -> 30 min). GPU-only: hosts, NICs, switches and silent errors fail too.
    """
    return mtbf_h_per_gpu / num_gpus


def prob_at_least_one_failure(num_gpus, window_h, mtbf_h_per_gpu=MTBF_H_PER_GPU):
    """Probability that at least one GPU fails within a time window.

    Parameters
    ----------
    num_gpus : scalar or array, broadcastable, >= 1. [GPU]
    window_h : scalar or array, broadcastable, >= 0
        Length of the window, e.g. a 24-hour training day. [h]
    mtbf_h_per_gpu : scalar or array, broadcastable, > 0. [h]

    Returns
    -------
    scalar or array of the broadcast shape, in [0, 1]. [1]

    Notes
    -----
    P = 1 - exp(-N t / MTBF) (Poisson failures, exponential lifetimes), computed as
    -expm1(-N t / MTBF) to stay accurate for small N t. Seed 001 Table 6, 24 h window:
    256 -> 11.6%, 2,048 -> 62.6%, 8,192 -> 98.04%, 100,000 -> ~100%.
    """
    return -np.expm1(-num_gpus * window_h / mtbf_h_per_gpu)


def checkpoint_bytes(params, bytes_per_param=CHECKPOINT_BYTES_PER_PARAM):
    """Size of a full training checkpoint.

    Parameters
    ----------
    params : scalar or array, broadcastable
        Model parameters. [param]
    bytes_per_param : scalar or array, broadcastable
        Checkpointed state per parameter, default 14 (mixed-precision Adam). [B/param]

    Returns
    -------
    scalar or array of the broadcast shape. [B]

    Notes
    -----
    bytes = params x 14 B; seed 001 Table 7 (7B -> 98 GB, 70B -> 980 GB, 175B -> 2,450 GB,
    1T -> 14 TB). Excludes framework metadata and data-loader state.
    """
    return params * bytes_per_param


def checkpoint_write_time_s(checkpoint_bytes, write_bytes_per_s):
    """Time to write one checkpoint at a sustained aggregate storage bandwidth.

    Parameters
    ----------
    checkpoint_bytes : scalar or array, broadcastable. [B]
    write_bytes_per_s : scalar or array, broadcastable, > 0
        Aggregate sustained write bandwidth to checkpoint storage. [B/s]

    Returns
    -------
    scalar or array of the broadcast shape. [s]

    Notes
    -----
    t = bytes / bandwidth; seed 001 Table 7 at 100 GB/s (7B -> 0.98 s, 175B -> 24.5 s,
    1T -> 2.3 min).
    """
    return checkpoint_bytes / write_bytes_per_s


def young_checkpoint_interval_s(checkpoint_write_s, mtbf_s):
    """Optimal time between checkpoints, first order (Young 1974).

    Parameters
    ----------
    checkpoint_write_s : scalar or array, broadcastable, > 0
        Time to write one checkpoint, delta. [s]
    mtbf_s : scalar or array, broadcastable, > 0
        Mean time between failures of the whole job (cluster MTBF). [s]

    Returns
    -------
    scalar or array of the broadcast shape. [s]

    Notes
    -----
    tau = sqrt(2 delta M); J. W. Young, "A first order approximation to the optimum checkpoint interval",
    CACM 17(9), 1974. Daly (2006, FGCS 22(3)) refines it for delta not << M; see
    :func:`checkpoint_failure_overhead_frac` for the waste it minimizes.
    """
    return np.sqrt(2.0 * checkpoint_write_s * mtbf_s)


def checkpoint_failure_overhead_frac(interval_s, checkpoint_write_s, mtbf_s, restart_s=RESTART_S):
    """Wall-clock fraction lost to writing checkpoints and redoing lost work after failures.

    Parameters
    ----------
    interval_s : scalar or array, broadcastable, > 0
        Compute time between checkpoints, tau. [s]
    checkpoint_write_s : scalar or array, broadcastable, >= 0
        Blocking write time of one checkpoint, delta. [s]
    mtbf_s : scalar or array, broadcastable, > 0
        Cluster MTBF, M. [s]
    restart_s : scalar or array, broadcastable, >= 0
        Detection, replacement and reload time per failure, R (default :data:`RESTART_S`). [s]

    Returns
    -------
    scalar or array of the broadcast shape. [1] (may exceed 1 when the job cannot progress)

    Notes
    -----
    First-order waste (Young 1974; Daly 2006): delta / tau (checkpoint writes) + (tau / 2 + R) / M (on average
    half an interval is recomputed after each failure, plus the restart). At tau = sqrt(2 delta M) the first
    two terms equal sqrt(2 delta / M).
    """
    return checkpoint_write_s / interval_s + (interval_s / 2.0 + restart_s) / mtbf_s


def goodput_frac(*overhead_fracs, compound=False):
    """Fraction of wall-clock time left for useful training after operational overheads.

    Parameters
    ----------
    *overhead_fracs : scalars or arrays, broadcastable, each in [0, 1]
        Wall-clock fractions lost to each overhead category, e.g. pipeline bubbles, checkpointing,
        failure recovery, maintenance windows. [1]
    compound : bool, default False
        False: overheads are disjoint shares of the same wall clock, goodput = 1 - sum(o_i)
        (seed 001's accounting). True: each overhead removes a fraction of what the previous ones
        left, goodput = prod(1 - o_i).

    Returns
    -------
    scalar or array of the broadcast shape. [1]
        With ``compound=False`` the result is negative when the overheads sum past 1; this kernel
        does not clip, so ``econ.analyses.cluster.size_cluster`` validates its goodput input to [0, 1].

    Notes
    -----
    Seed 001 Table 8 budget: bubbles 5% + checkpointing 3% + failure recovery 10% + maintenance 5%
    = 23%, so goodput = 77% (the figure in Systems Perspective 1.4). The compound form gives 78.8%
    for the same budget. No overheads -> 1.
    """
    if compound:
        result = 1.0
        for overhead in overhead_fracs:  # loop over categories (a handful), not over values
            result = result * (1.0 - overhead)
        return result
    return 1.0 - sum(overhead_fracs)



# --------------------------------------------------------------------------------------------
# Training and serving volume
# --------------------------------------------------------------------------------------------

def training_flop(params, tokens):
    """Training compute of a dense Transformer.

    Parameters
    ----------
    params : scalar or array, broadcastable
        Parameters (active parameters for a mixture-of-experts model). [param]
    tokens : scalar or array, broadcastable
        Training tokens. [token]

    Returns
    -------
    scalar or array of the broadcast shape. [FLOP]

    Notes
    -----
    C = 6 N D (2 forward + 4 backward FLOP per parameter per token); seed 001 "Weak scaling",
    Kaplan et al. (2020), arXiv:2001.08361.
    """
    return TRAINING_FLOP_PER_PARAM_PER_TOKEN * params * tokens


def training_time_s(training_flop, realized_flop_per_s):
    """Wall-clock time of a training run at a realized throughput.

    Parameters
    ----------
    training_flop : scalar or array, broadcastable. [FLOP]
    realized_flop_per_s : scalar or array, broadcastable, > 0
        Useful throughput from :func:`realized_flop_per_s` (includes MFU, scaling, goodput). [FLOP/s]

    Returns
    -------
    scalar or array of the broadcast shape. [s]

    Notes
    -----
    T = C / R_eff (seed 001, Systems Perspective 1.4 for R_eff).
    """
    return training_flop / realized_flop_per_s


def serving_tokens_per_day(num_gpus, output_tokens_per_s_per_gpu, utilization_frac):
    """Output tokens a serving fleet produces per day.

    Parameters
    ----------
    num_gpus : scalar or array, broadcastable. [GPU]
    output_tokens_per_s_per_gpu : scalar or array, broadcastable
        Sustained output throughput per GPU while busy (``econ.physics.performance``). [token/(s GPU)]
    utilization_frac : scalar or array, broadcastable, in [0, 1]
        Average fraction of the day the fleet runs at that throughput. [1]

    Returns
    -------
    scalar or array of the broadcast shape. [token/d]

    Notes
    -----
    tokens/day = G x tokens/s/GPU x utilization x 86,400 s.
    """
    return num_gpus * output_tokens_per_s_per_gpu * utilization_frac * SECONDS_PER_DAY


def littles_law_concurrency(arrival_rate_per_s, latency_s):
    """Requests in flight from their arrival rate and time in system (Little's law).

    Parameters
    ----------
    arrival_rate_per_s : scalar or array, broadcastable [requests/s]
    latency_s : scalar or array, broadcastable
        Mean time a request spends in the system (TTFT + output tokens x TPOT). [s]

    Returns
    -------
    scalar or array of the broadcast shape. [requests]

    Notes
    -----
    Q = lambda T; Little (1961), seed 001 "Foundations recap".
    """
    return arrival_rate_per_s * latency_s


def replicas_for_concurrency(concurrency, sequences_per_replica):
    """Serving replicas needed to hold a concurrency: ceil(Q / batch per replica).

    Parameters
    ----------
    concurrency : scalar or array, broadcastable [requests]
    sequences_per_replica : scalar or array, broadcastable, >= 1
        Concurrent sequences one replica serves at its latency target (its batch size). [requests]

    Returns
    -------
    scalar or array of the broadcast shape, whole numbers (float dtype). [replicas]
    """
    return np.ceil(concurrency / sequences_per_replica)
