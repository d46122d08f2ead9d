"""Cluster and fleet sizing: compute, power, racks, capex, failures, checkpoints, payback.

Pure kernels over scalars, ndarrays, ``pl.Series`` and (where noted) ``pl.Expr``; they broadcast and
never branch on values. :func:`size_cluster` is the validated public entry point that assembles the
kernels into one Polars frame, one row per cluster size.

Sources
-------
.. [000] Divergent Compute, "The data-center cluster", First Principles ch. 19, 2026
   (``shared/seeds/000_dbfcb3d82b87f435.txt``): MFU(G) = 0.62 - 0.02 log2 G (illustrative),
   P = G x P_GPU x PUE.
.. [001] ML Systems textbook appendix "Fleet Foundations" (``shared/seeds/001_ce165384d569a782.txt``):
   R_eff = N R_peak MFU eta_scaling eta_goodput (Systems Perspective 1.4); MTBF_sys = MTBF/N (eq. 1);
   14 B/param checkpoints (Table 7); overhead budget (Table 8); air-cooling limit (Table 12);
   Amdahl's law; communication-computation ratio (eq. 5); 6 N D training FLOPs.
.. [004] Redpoint AI interview with Dylan Patel (SemiAnalysis) (``shared/seeds/004_c1f56851affaa10d.txt``):
   H100 ~ $45k all-in incl. networking and infrastructure; 100,000-GPU cluster ~ $5B.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from econ import formatting
from econ.errors import InvalidInputError
from econ.presets import DEFAULT_MIN_TOKENS_PER_S_PER_USER
from econ.units import HOURS_PER_YEAR, SECONDS_PER_DAY, SECONDS_PER_HOUR, TOKENS_PER_M, W_PER_KW, W_PER_MW
from econ.validate import require_finite, require_in_range, require_integer

__all__ = [
    "AIR_COOLING_LIMIT_KW_PER_RACK",
    "CHECKPOINT_BYTES_PER_PARAM",
    "MFU_FLOOR_FRAC",
    "MTBF_H_PER_GPU",
    "TRAINING_FLOP_PER_PARAM_PER_TOKEN",
    "CapexBreakdown",
    "air_cooling_ok",
    "amdahl_speedup",
    "annual_energy_cost_usd",
    "annual_energy_kwh",
    "checkpoint_bytes",
    "checkpoint_write_time_s",
    "cluster_capex_usd",
    "cluster_mtbf_h",
    "comm_compute_ratio",
    "facility_power_w",
    "goodput_frac",
    "it_power_w",
    "mfu_at_scale",
    "payback_years",
    "peak_flop_per_s",
    "prob_at_least_one_failure",
    "rack_count",
    "rack_power_kw",
    "realized_flop_per_s",
    "revenue_per_year_usd",
    "serving_tokens_per_day",
    "size_cluster",
    "training_cost_usd",
    "training_flop",
    "training_time_s",
]

AIR_COOLING_LIMIT_KW_PER_RACK = 30.0
"""Practical ceiling of forced-air cooling; above it liquid cooling is mandatory. [kW/rack]
Seed 001, Tables 9 and 12 ("Air cooling limit ~30 kW per rack")."""

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

_DAYS_PER_YEAR = HOURS_PER_YEAR * SECONDS_PER_HOUR / SECONDS_PER_DAY  # 365 [d]
_KWH_PER_MWH = W_PER_MW / W_PER_KW  # 1,000


# --------------------------------------------------------------------------------------------
# Compute
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


def comm_compute_ratio(comm_time_s, compute_time_s, num_gpus):
    """Communication-computation ratio rho of one synchronization interval.

    Parameters
    ----------
    comm_time_s : scalar or array, broadcastable
        Communication time per step on N GPUs, T_comm(N) (e.g. the gradient all-reduce). [s]
    compute_time_s : scalar or array, broadcastable
        Compute time of the same step on ONE GPU, T_compute; each GPU does T_compute / N. [s]
    num_gpus : scalar or array, broadcastable, >= 1. [GPU]

    Returns
    -------
    scalar or array of the broadcast shape. [1]

    Notes
    -----
    rho = T_comm(N) / (T_compute / N); seed 001 eq. 5 and Table 11 (data-parallel 7B on 256 GPUs:
    560.4 ms / ~5 s = 0.11; 350M on 256: 29.6 ms / ~10 ms = 3). rho < 1: communication can be
    overlapped; rho > 1: communication-bound.
    """
    return comm_time_s * num_gpus / compute_time_s


# --------------------------------------------------------------------------------------------
# Power and racks
# --------------------------------------------------------------------------------------------

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


def annual_energy_kwh(facility_power_w, load_factor_frac=1.0):
    """Energy drawn in one year at a given average load.

    Parameters
    ----------
    facility_power_w : scalar or array, broadcastable
        Facility power at full load. [W]
    load_factor_frac : scalar or array, broadcastable, in [0, 1]
        Average draw as a fraction of full load over the year (1.0 = full power all 8,760 h,
        an upper bound). [1]

    Returns
    -------
    scalar or array of the broadcast shape. [kWh]

    Notes
    -----
    E = P x load_factor x 8,760 h; conversion W h -> kWh via :data:`econ.units.W_PER_KW`.
    """
    return facility_power_w * load_factor_frac * HOURS_PER_YEAR / W_PER_KW


def annual_energy_cost_usd(annual_energy_kwh, usd_per_kwh):
    """Electricity bill for a year of energy.

    Parameters
    ----------
    annual_energy_kwh : scalar or array, broadcastable. [kWh]
    usd_per_kwh : scalar or array, broadcastable, >= 0
        All-in electricity price (see ``shared/reference/power_prices.csv``). [USD/kWh]

    Returns
    -------
    scalar or array of the broadcast shape. [USD]

    Notes
    -----
    cost = E x price; the PUE is already in E through :func:`facility_power_w` (DESIGN.md,
    "Economics": power x PUE x price).
    """
    return annual_energy_kwh * usd_per_kwh


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


# --------------------------------------------------------------------------------------------
# Capital cost
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class CapexBreakdown:
    """Cluster capital cost by part; each field is a scalar or array of the broadcast shape. [USD]

    Attributes
    ----------
    accelerators_usd : GPUs, servers and the network share, from the all-in per-GPU price. [USD]
    facility_usd : building, power and cooling, from the build cost per MW of IT load. [USD]
    total_usd : accelerators_usd + facility_usd. [USD]
    """

    accelerators_usd: object
    facility_usd: object
    total_usd: object


def cluster_capex_usd(num_gpus, all_in_capex_usd_per_gpu, power_w_per_gpu, build_usd_per_mw_it):
    """Capital cost of a cluster: all-in accelerator price plus the facility built around it.

    Parameters
    ----------
    num_gpus : scalar or array, broadcastable. [GPU]
    all_in_capex_usd_per_gpu : scalar or array, broadcastable
        GPU + its share of server and network (seed 004: H100 ~ $45,000 "including networking and
        infrastructure"). [USD/GPU]
    power_w_per_gpu : scalar or array, broadcastable
        IT power per GPU that the facility must supply. [W]
    build_usd_per_mw_it : scalar or array, broadcastable, >= 0
        Facility construction cost per MW of critical IT load (``shared/reference/facility.csv``:
        US 19-market average $11.7M/MW, Cushman & Wakefield 2025). Pass 0 when the all-in per-GPU
        price already includes the facility, or the capacity is leased. [USD/MW]

    Returns
    -------
    CapexBreakdown
        ``accelerators_usd``, ``facility_usd``, ``total_usd``, each of the broadcast shape. [USD]

    Notes
    -----
    capex = G x all_in + (G x P_GPU / 10^6) x build_per_MW_IT. Seed 004: 100,000 H100 x $45k =
    $4.5B against "around $5 billion" for the cluster. Whether seed 004's $45k already covers the
    building is not stated; avoid counting the facility twice.
    """
    accelerators = num_gpus * all_in_capex_usd_per_gpu
    facility = it_power_w(num_gpus, power_w_per_gpu) / W_PER_MW * build_usd_per_mw_it
    return CapexBreakdown(accelerators_usd=accelerators, facility_usd=facility,
                          total_usd=accelerators + facility)


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
        does not clip, so :func:`size_cluster` validates its goodput input to [0, 1].

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
# Training
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


def training_cost_usd(training_time_s, num_gpus, usd_per_gpu_hour):
    """GPU-hour cost of a training run.

    Parameters
    ----------
    training_time_s : scalar or array, broadcastable. [s]
    num_gpus : scalar or array, broadcastable. [GPU]
    usd_per_gpu_hour : scalar or array, broadcastable, >= 0
        Rented or owned (``econ.economics.tco``) cost of one GPU-hour. [USD/(GPU h)]

    Returns
    -------
    scalar or array of the broadcast shape. [USD]

    Notes
    -----
    cost = T / 3600 x G x price: every GPU is paid for the whole wall clock, including the time
    lost to MFU, scaling and goodput (those losses are already in T).
    """
    return training_time_s / SECONDS_PER_HOUR * num_gpus * usd_per_gpu_hour


# --------------------------------------------------------------------------------------------
# Serving economics
# --------------------------------------------------------------------------------------------

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


def revenue_per_year_usd(tokens_per_day, usd_per_m_tokens):
    """Yearly revenue from selling tokens at a price per million.

    Parameters
    ----------
    tokens_per_day : scalar or array, broadcastable. [token/d]
    usd_per_m_tokens : scalar or array, broadcastable, >= 0
        Price per million tokens (output, or blended at a stated input:output mix). [USD/Mtoken]

    Returns
    -------
    scalar or array of the broadcast shape. [USD/yr]

    Notes
    -----
    revenue = tokens/day x 365 d x price / 10^6.
    """
    return tokens_per_day * _DAYS_PER_YEAR * usd_per_m_tokens / TOKENS_PER_M


def payback_years(capex_usd, annual_revenue_usd, annual_opex_usd):
    """Simple (undiscounted) payback period of the capital outlay.

    Parameters
    ----------
    capex_usd : scalar or array-like, broadcastable, >= 0. [USD]
    annual_revenue_usd : scalar or array-like, broadcastable, >= 0. [USD/yr]
    annual_opex_usd : scalar or array-like, broadcastable, >= 0
        Yearly operating cost (energy, staff, maintenance, leases). [USD/yr]

    Returns
    -------
    float or ndarray of the broadcast shape. [yr]
        ``inf`` where the yearly margin (revenue - opex) is <= 0: the capex is never recovered.
        0 where capex is 0. Never NaN. (ndarray-only: this entry point validates its inputs and
        does not accept ``pl.Expr``.)

    Raises
    ------
    InvalidInputError
        If any input is negative or not finite, naming the field, value and range.

    Notes
    -----
    payback = capex / (revenue - opex), undiscounted; use ``econ.economics.tco.capital_recovery_factor``
    when the cost of capital matters.
    """
    capex = require_in_range("capex_usd", capex_usd, 0.0, np.inf, "USD")
    revenue = require_in_range("annual_revenue_usd", annual_revenue_usd, 0.0, np.inf, "USD/yr")
    opex = require_in_range("annual_opex_usd", annual_opex_usd, 0.0, np.inf, "USD/yr")
    capex, margin = np.broadcast_arrays(capex, revenue - opex)
    years = np.full(margin.shape, np.inf)
    np.divide(capex, margin, out=years, where=margin > 0)
    years[capex == 0] = 0.0
    return years[()] if years.ndim == 0 else years


# --------------------------------------------------------------------------------------------
# Orchestrator
# --------------------------------------------------------------------------------------------

def size_cluster(num_gpus, *, flop_per_s_per_gpu, power_w_per_gpu, all_in_capex_usd_per_gpu,
                 gpus_per_rack, pue, usd_per_kwh, build_usd_per_mw_it,
                 mfu_frac=None, scaling_efficiency_frac=1.0, goodput_frac=1.0,
                 load_factor_frac=1.0, mtbf_h_per_gpu=MTBF_H_PER_GPU, failure_window_h=24.0,
                 air_cooling_limit_kw_per_rack=AIR_COOLING_LIMIT_KW_PER_RACK) -> pl.DataFrame:
    """Size a cluster: compute, power, racks, energy bill, capex and failure cadence in one table.

    Parameters
    ----------
    num_gpus : int or 1-D array-like of int, >= 1
        Cluster sizes; one output row per value. [GPU]
    flop_per_s_per_gpu : scalar or 1-D array-like, >= 0
        Datasheet peak per GPU at the training precision. [FLOP/s]
    power_w_per_gpu : scalar or 1-D array-like, >= 0
        TDP or all-in power per GPU. [W]
    all_in_capex_usd_per_gpu : scalar or 1-D array-like, >= 0
        GPU + server + network share (seed 004: H100 ~ $45,000). [USD/GPU]
    gpus_per_rack : int or 1-D array-like of int, >= 1. [GPU/rack]
    pue : scalar or 1-D array-like, in [1, 3]. [1]
    usd_per_kwh : scalar or 1-D array-like, >= 0. [USD/kWh]
    build_usd_per_mw_it : scalar or 1-D array-like, >= 0
        Facility build cost per MW of IT load; 0 if the all-in price covers it. [USD/MW]
    mfu_frac : scalar, 1-D array-like in [0, 1], or None
        None uses the illustrative :func:`mfu_at_scale` curve of seed 000, which already falls with
        scale for the communication tax; keep ``scaling_efficiency_frac=1`` with it to avoid
        charging that tax twice. Pass a measured MFU with seed 001's scaling efficiency instead. [1]
    scaling_efficiency_frac, goodput_frac, load_factor_frac : scalar or 1-D array-like in [0, 1]
        See :func:`realized_flop_per_s`, :func:`goodput_frac`, :func:`annual_energy_kwh`. [1]
    mtbf_h_per_gpu : scalar or 1-D array-like, >= 1. [h]
    failure_window_h : scalar or 1-D array-like, >= 0. [h]
    air_cooling_limit_kw_per_rack : scalar or 1-D array-like, > 0. [kW/rack]

    Returns
    -------
    pl.DataFrame
        One row per element of the inputs broadcast together (so per ``num_gpus`` value when only
        it is an array), with columns ``num_gpus`` [GPU], ``peak_flop_per_s``, ``mfu_frac``,
        ``scaling_efficiency_frac``, ``goodput_frac``, ``realized_flop_per_s``,
        ``realized_frac_of_peak``, ``it_power_mw``, ``facility_power_mw``, ``annual_energy_mwh``,
        ``annual_energy_cost_usd``, ``rack_count``, ``rack_power_kw``, ``air_cooling_ok``,
        ``capex_accelerators_usd``, ``capex_facility_usd``, ``capex_total_usd``,
        ``cluster_mtbf_h``, ``failure_window_h``, ``prob_failure_in_window_frac``.

    Raises
    ------
    InvalidInputError
        If an input is out of range or not finite (message names field, value, range, unit and the
        first bad row), if ``num_gpus`` or ``gpus_per_rack`` is not a whole number, or if the inputs
        do not broadcast to one dimension.

    Notes
    -----
    Composes the kernels of this module; formulas and sources are in each kernel's docstring
    (seeds 000, 001, 004). Energy uses facility power (IT x PUE) at ``load_factor_frac`` for 8,760 h.
    """
    inputs = {
        "num_gpus": require_integer("num_gpus", num_gpus, 1, np.inf, "GPUs"),
        "flop_per_s_per_gpu": require_in_range("flop_per_s_per_gpu", flop_per_s_per_gpu, 0.0, np.inf, "FLOP/s"),
        "power_w_per_gpu": require_in_range("power_w_per_gpu", power_w_per_gpu, 0.0, np.inf, "W"),
        "all_in_capex_usd_per_gpu": require_in_range(
            "all_in_capex_usd_per_gpu", all_in_capex_usd_per_gpu, 0.0, np.inf, "USD/GPU"),
        "gpus_per_rack": require_integer("gpus_per_rack", gpus_per_rack, 1, np.inf, "GPUs/rack"),
        "pue": require_in_range("pue", pue, 1.0, 3.0, "ratio"),
        "usd_per_kwh": require_in_range("usd_per_kwh", usd_per_kwh, 0.0, np.inf, "USD/kWh"),
        "build_usd_per_mw_it": require_in_range("build_usd_per_mw_it", build_usd_per_mw_it, 0.0, np.inf, "USD/MW"),
        "scaling_efficiency_frac": require_in_range("scaling_efficiency_frac", scaling_efficiency_frac, 0.0, 1.0),
        "goodput_frac": require_in_range("goodput_frac", goodput_frac, 0.0, 1.0),
        "load_factor_frac": require_in_range("load_factor_frac", load_factor_frac, 0.0, 1.0),
        "mtbf_h_per_gpu": require_in_range("mtbf_h_per_gpu", mtbf_h_per_gpu, 1.0, np.inf, "h"),
        "failure_window_h": require_in_range("failure_window_h", failure_window_h, 0.0, np.inf, "h"),
        "air_cooling_limit_kw_per_rack": require_in_range(
            "air_cooling_limit_kw_per_rack", air_cooling_limit_kw_per_rack, 0.0, np.inf, "kW/rack",
            lo_inclusive=False),
    }
    if mfu_frac is not None:
        inputs["mfu_frac"] = require_in_range("mfu_frac", mfu_frac, 0.0, 1.0)
    try:
        arrays = dict(zip(inputs, np.broadcast_arrays(*(np.atleast_1d(v) for v in inputs.values()))))
    except ValueError as exc:
        shapes = ", ".join(f"{k}{np.shape(v)}" for k, v in inputs.items() if np.ndim(v))
        raise InvalidInputError(f"inputs do not broadcast together: {shapes}") from exc
    if arrays["num_gpus"].ndim != 1:
        raise InvalidInputError(
            f"inputs broadcast to shape {arrays['num_gpus'].shape}; size_cluster needs 1-D inputs (rows)")
    return _size_cluster_frame(**arrays)


def _size_cluster_frame(*, num_gpus, flop_per_s_per_gpu, power_w_per_gpu, all_in_capex_usd_per_gpu,
                        gpus_per_rack, pue, usd_per_kwh, build_usd_per_mw_it, scaling_efficiency_frac,
                        goodput_frac, load_factor_frac, mtbf_h_per_gpu, failure_window_h,
                        air_cooling_limit_kw_per_rack, mfu_frac=None) -> pl.DataFrame:
    """Evaluate the kernels on validated, broadcast 1-D arrays (see :func:`size_cluster`)."""
    if mfu_frac is None:
        mfu_frac = mfu_at_scale(num_gpus)
    peak = peak_flop_per_s(num_gpus, flop_per_s_per_gpu)
    realized = realized_flop_per_s(num_gpus, flop_per_s_per_gpu, mfu_frac, scaling_efficiency_frac,
                                   goodput_frac)
    it_w = it_power_w(num_gpus, power_w_per_gpu)
    facility_w = facility_power_w(it_w, pue)
    energy_kwh = annual_energy_kwh(facility_w, load_factor_frac)
    rack_kw = rack_power_kw(gpus_per_rack, power_w_per_gpu)
    capex = cluster_capex_usd(num_gpus, all_in_capex_usd_per_gpu, power_w_per_gpu, build_usd_per_mw_it)
    columns = {
        "peak_flop_per_s": peak,
        "mfu_frac": mfu_frac,
        "scaling_efficiency_frac": scaling_efficiency_frac,
        "goodput_frac": goodput_frac,
        "realized_flop_per_s": realized,
        "realized_frac_of_peak": mfu_frac * scaling_efficiency_frac * goodput_frac,
        "it_power_mw": it_w / W_PER_MW,
        "facility_power_mw": facility_w / W_PER_MW,
        "annual_energy_mwh": energy_kwh / _KWH_PER_MWH,
        "annual_energy_cost_usd": annual_energy_cost_usd(energy_kwh, usd_per_kwh),
        "rack_count": rack_count(num_gpus, gpus_per_rack),
        "rack_power_kw": rack_kw,
        "capex_accelerators_usd": capex.accelerators_usd,
        "capex_facility_usd": capex.facility_usd,
        "capex_total_usd": capex.total_usd,
        "cluster_mtbf_h": cluster_mtbf_h(num_gpus, mtbf_h_per_gpu),
        "failure_window_h": failure_window_h,
        "prob_failure_in_window_frac": prob_at_least_one_failure(num_gpus, failure_window_h, mtbf_h_per_gpu),
    }
    for name, value in columns.items():
        require_finite(name, value)
    return pl.DataFrame({
        "num_gpus": num_gpus.astype(np.int64),
        **{name: np.asarray(value, dtype=float) for name, value in columns.items()},
        "air_cooling_ok": air_cooling_ok(rack_kw, air_cooling_limit_kw_per_rack),
    }).with_columns(pl.col("rack_count").cast(pl.Int64)).select(
        "num_gpus", "peak_flop_per_s", "mfu_frac", "scaling_efficiency_frac", "goodput_frac",
        "realized_flop_per_s", "realized_frac_of_peak", "it_power_mw", "facility_power_mw",
        "annual_energy_mwh", "annual_energy_cost_usd", "rack_count", "rack_power_kw", "air_cooling_ok",
        "capex_accelerators_usd", "capex_facility_usd", "capex_total_usd", "cluster_mtbf_h",
        "failure_window_h", "prob_failure_in_window_frac",
    )


# ============================================================================================
# Fleet and build-out planner (issue 13): power basis, efficiency models, fleet calculators,
# itemized build-out capex, inverse sizing, training runs, and SI display of large numbers.
# ============================================================================================

AI_RACK_KW_PER_RACK = 70.0
"""Current-generation AI rack power; liquid cooling required. [kW/rack]  Seed 001, Tables 9 and 12."""

HIGH_DENSITY_RACK_KW_PER_RACK = 100.0
"""High-density AI rack, direct-to-chip liquid cooling. [kW/rack]  Seed 001, Tables 9 and 12."""

NVL72_RACK_KW_PER_RACK = 120.0
"""GB200/GB300 NVL72 rack power (NVIDIA Hot Chips 2025 summary, ``shared/reference/facility.csv``). [kW/rack]"""

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

NVLINK_LATENCY_S = 1e-6
"""NVLink 4 GPU-to-GPU one-way latency, the low end of '~1-2 us'
(https://fridayswithfaraday.com/posts/gpu-hw-nvlink-nvswitch-interconnect, H100 DGX table). [s]"""

INFINIBAND_NDR_LATENCY_S = 5e-6
"""InfiniBand NDR one-way latency '~5 us' (seed 001 Table 4). [s]"""

RESTART_S = 600.0
"""Time to detect a failure, replace the node and reload the last checkpoint. ASSUMPTION (10 min), named and
adjustable: seed 001 gives no figure; it only budgets 10% of wall clock for failure recovery (Table 8). [s]"""

BUILDOUT_ITEMS: dict[str, str] = {
    "server_usd_per_gpu": "server-host-usd-per-gpu",
    "switch_usd": "network-switch-usd",
    "switch_radix": "network-switch-radix",
    "link_usd": "network-link-usd",
    "rails": "network-rails",
    "storage_usd_per_gpu": "storage-usd-per-gpu",
    "facility_air_usd_per_mw": "facility-air-usd-per-mw",
    "facility_liquid_usd_per_mw": "facility-liquid-usd-per-mw",
}
"""Build-out price fields -> row ids of ``data/buildout_capex.csv`` (every row sourced there)."""


# --------------------------------------------------------------------------------------------
# Power basis and racks
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


def power_table(num_gpus, *, pue, gpus_per_rack, tdp_w=None, all_in_w=None, typed_w=None) -> pl.DataFrame:
    """IT and facility power of G GPUs on each power basis, with rack power against the cooling limits.

    Parameters
    ----------
    num_gpus : int >= 1 [GPU]
    pue : float in [1, 3] [1]
    gpus_per_rack : int >= 1 [GPU/rack]
    tdp_w, all_in_w, typed_w : float > 0, optional
        Per-GPU power on each basis; a basis left as None is not shown (at least one is needed). [W]

    Returns
    -------
    pl.DataFrame, one row per basis given: ``power_basis``, ``per_gpu_power_w``, ``it_power_mw``,
    ``facility_power_mw``, ``rack_power_kw``, ``air_cooling_limit_kw``, ``ai_rack_kw``, ``rack_cooling``.

    Raises
    ------
    InvalidInputError
        Any input zero, negative, not finite, or PUE outside [1, 3] (named, with its range).

    Notes
    -----
    P_IT = G x P_GPU, P_facility = P_IT x PUE (seed 001: 10,000 x 700 W = 7 MW IT, 9.8 MW at PUE 1.40).
    """
    g = float(require_integer("num_gpus", num_gpus, 1, 1e9, "GPUs"))
    pue = float(require_in_range("pue", pue, 1.0, 3.0, "ratio"))
    rack = float(require_integer("gpus_per_rack", gpus_per_rack, 1, 1e6, "GPUs/rack"))
    bases = [(n, w) for n, w in (("tdp", tdp_w), ("all-in", all_in_w), ("typed", typed_w)) if w is not None]
    if not bases:
        raise InvalidInputError("power_table needs at least one of tdp_w, all_in_w, typed_w")
    watts = np.array([float(require_in_range(f"power_w_per_gpu ({n})", w, 0.0, 1e5, "W", lo_inclusive=False))
                      for n, w in bases])
    it_w = it_power_w(g, watts)
    rack_kw = rack_power_kw(rack, watts)
    return pl.DataFrame({
        "power_basis": [n for n, _ in bases], "per_gpu_power_w": watts, "it_power_mw": it_w / W_PER_MW,
        "facility_power_mw": facility_power_w(it_w, pue) / W_PER_MW, "rack_power_kw": rack_kw,
        "air_cooling_limit_kw": np.full(len(bases), AIR_COOLING_LIMIT_KW_PER_RACK),
        "ai_rack_kw": np.full(len(bases), AI_RACK_KW_PER_RACK),
        "rack_cooling": np.atleast_1d(rack_cooling(rack_kw)).tolist(),
    })


# --------------------------------------------------------------------------------------------
# Efficiency at scale: two named models
# --------------------------------------------------------------------------------------------

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


def scale_table(num_gpus, *, flop_per_s_per_gpu, power_w_per_gpu, pue=1.0, efficiency_model="seed000",
                mfu_frac=None, scaling_efficiency=None, goodput=None) -> pl.DataFrame:
    """Peak and realized compute and power across cluster sizes (seed 000's ``cluster.py`` table).

    Parameters
    ----------
    num_gpus : int or 1-D array-like of int >= 1 [GPU]
    flop_per_s_per_gpu : float > 0 [FLOP/s]
    power_w_per_gpu : float > 0 [W]
    pue : float in [1, 3]
        1 reproduces seed 000, whose 1.4 kW is "all-in (chip + share of node & cooling)". [1]
    efficiency_model, mfu_frac, scaling_efficiency, goodput
        See :func:`efficiency_chain`.

    Returns
    -------
    pl.DataFrame: the :func:`efficiency_chain` columns plus ``peak_flop_per_s``, ``realized_flop_per_s``,
    ``it_power_mw``, ``facility_power_mw``.

    Raises
    ------
    InvalidInputError
        Any input out of range (named, with its range).

    Notes
    -----
    Seed 000: 32,768 x 1 PFLOP/s = 32.77 EFLOP/s peak, MFU 32.0%, 10.49 EFLOP/s realized, 45.9 MW.
    """
    peak_gpu = float(require_in_range("flop_per_s_per_gpu", flop_per_s_per_gpu, 0.0, 1e18, "FLOP/s",
                                      lo_inclusive=False))
    w = float(require_in_range("power_w_per_gpu", power_w_per_gpu, 0.0, 1e5, "W", lo_inclusive=False))
    pue = float(require_in_range("pue", pue, 1.0, 3.0, "ratio"))
    chain = efficiency_chain(num_gpus, efficiency_model, mfu_frac=mfu_frac, scaling_efficiency=scaling_efficiency,
                             goodput=goodput)
    g = chain["num_gpus"].to_numpy().astype(float)
    peak = peak_flop_per_s(g, peak_gpu)
    it_w = it_power_w(g, w)
    return chain.with_columns(
        peak_flop_per_s=pl.Series(peak), realized_flop_per_s=pl.Series(peak * chain["realized_frac_of_peak"].to_numpy()),
        it_power_mw=pl.Series(it_w / W_PER_MW), facility_power_mw=pl.Series(facility_power_w(it_w, pue) / W_PER_MW))


# --------------------------------------------------------------------------------------------
# Fleet calculators: collectives, checkpoint cadence, Little's law
# --------------------------------------------------------------------------------------------

def ring_allreduce_time_s(message_bytes, num_gpus, bandwidth_bytes_per_s, latency_s):
    """Ring all-reduce time: bandwidth term plus latency term.

    Parameters
    ----------
    message_bytes : scalar or array, broadcastable
        Bytes reduced per participant, M (e.g. BF16 gradients = 2 B x parameters). [B]
    num_gpus : scalar or array, broadcastable, >= 2 [GPU]
    bandwidth_bytes_per_s : scalar or array, broadcastable
        Per-participant link bandwidth, one direction (NVLink 4: 450 GB/s; IB NDR: 50 GB/s). [B/s]
    latency_s : scalar or array, broadcastable
        One-way latency per step, alpha. [s]

    Returns
    -------
    scalar or array of the broadcast shape. [s]

    Notes
    -----
    T = 2 (N-1)/N x M / BW + 2 (N-1) alpha; Patarasuk and Yuan (2009) as quoted in seed 001 ("AllReduce
    overhead scaling"). Seed 001 Table 11: 7B BF16 gradients (14 GB) over 256 GPUs on IB NDR (50 GB/s,
    5 us) = 557.8 ms + 2.55 ms = 560.4 ms.
    """
    return (2.0 * (num_gpus - 1) / num_gpus * message_bytes / bandwidth_bytes_per_s
            + 2.0 * (num_gpus - 1) * latency_s)


def tree_allreduce_time_s(message_bytes, num_gpus, bandwidth_bytes_per_s, latency_s):
    """Tree all-reduce time (pipelined reduce then broadcast): full bandwidth, logarithmic latency.

    Parameters
    ----------
    message_bytes, num_gpus, bandwidth_bytes_per_s, latency_s
        As :func:`ring_allreduce_time_s`.

    Returns
    -------
    scalar or array of the broadcast shape. [s]

    Notes
    -----
    T = 2 M / BW + 2 log2(N) alpha: a pipelined reduction up and broadcast down a (double binary) tree moves
    ~2M per GPU like the ring (busbw 2S(N-1)/N for both, https://yaaang.notion.site/Distributed-and-parallel-
    computation-2e5178e0f85a40d5b2e9382937d4f9e3) but crosses only log2 N hops each way; seed 001 motivates
    tree all-reduce across nodes for this latency term. Ignores pipeline fill (chunks >> hops).
    """
    return 2.0 * message_bytes / bandwidth_bytes_per_s + 2.0 * np.log2(num_gpus) * latency_s


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


FLEET_NUMBERS_DEFAULTS = dict(serial_frac=0.10, gradient_bytes=14e9, compute_s=5.0, params=175e9,
                              checkpoint_write_bytes_per_s=100e9, window_h=24.0, mtbf_h_per_gpu=MTBF_H_PER_GPU,
                              restart_s=RESTART_S, arrival_rate_per_s=100.0, request_latency_s=20.0,
                              sequences_per_replica=64.0)
"""Defaults of :func:`fleet_numbers`, each from seed 001 except where named: 10% serial fraction (Amdahl
example), 14 GB = 7B BF16 gradients and ~5 s compute per step (Table 11), 175B params (Table 7), 100 GB/s
checkpoint storage (Table 7), 24 h window and 50,000 h MTBF (Table 6), :data:`RESTART_S`; the Little's-law
load (100 requests/s, 20 s per request, 64 sequences per replica) is an ILLUSTRATIVE example, not a source."""


def fleet_numbers(num_gpus, *, scale_up_bytes_per_s=450e9, scale_out_bytes_per_s=50e9,
                  scale_up_latency_s=NVLINK_LATENCY_S, scale_out_latency_s=INFINIBAND_NDR_LATENCY_S,
                  **overrides) -> pl.DataFrame:
    """Seed 001's fleet numbers for one cluster size, each with its formula.

    Parameters
    ----------
    num_gpus : int >= 2 [GPU]
    scale_up_bytes_per_s, scale_out_bytes_per_s : float > 0
        Per-GPU scale-up (NVLink) and scale-out (InfiniBand) bandwidth, one direction; defaults H100
        NVLink 4 (450 GB/s) and IB NDR (50 GB/s) (seed 001 Table 3, ``shared/reference/accelerators.csv``). [B/s]
    scale_up_latency_s, scale_out_latency_s : float > 0 [s]
    **overrides
        Any key of :data:`FLEET_NUMBERS_DEFAULTS`.

    Returns
    -------
    pl.DataFrame with columns ``quantity``, ``value``, ``unit``, ``formula`` (one row per number): Amdahl
    speedup and its limit, scale-up / scale-out bandwidth ratio, ring and tree all-reduce on each fabric,
    communication-computation ratio, cluster MTBF, P(failure in window), checkpoint size and write time,
    Young's interval and the waste at it, goodput (seed 001 budget and with the derived failure and
    checkpoint terms), Little's-law concurrency and replicas.

    Raises
    ------
    InvalidInputError
        Unknown override, or any input zero, negative or not finite (named, with its range).
    """
    unknown = set(overrides) - set(FLEET_NUMBERS_DEFAULTS)
    if unknown:
        raise InvalidInputError(f"unknown fleet input(s) {sorted(unknown)}; valid: {list(FLEET_NUMBERS_DEFAULTS)}")
    p = {**FLEET_NUMBERS_DEFAULTS, **overrides}
    n = float(require_integer("num_gpus", num_gpus, 2, 1e9, "GPUs"))
    require_in_range("serial_frac", p["serial_frac"], 0.0, 1.0, lo_inclusive=False)
    for k in ("gradient_bytes", "compute_s", "params", "checkpoint_write_bytes_per_s", "window_h", "mtbf_h_per_gpu",
              "arrival_rate_per_s", "request_latency_s", "sequences_per_replica"):
        require_in_range(k, p[k], 0.0, np.inf, lo_inclusive=False)
    require_in_range("restart_s", p["restart_s"], 0.0, np.inf, "s")
    for k, v in (("scale_up_bytes_per_s", scale_up_bytes_per_s), ("scale_out_bytes_per_s", scale_out_bytes_per_s),
                 ("scale_up_latency_s", scale_up_latency_s), ("scale_out_latency_s", scale_out_latency_s)):
        require_in_range(k, v, 0.0, np.inf, lo_inclusive=False)
    m = p["gradient_bytes"]
    ring_out = ring_allreduce_time_s(m, n, scale_out_bytes_per_s, scale_out_latency_s)
    ring_up = ring_allreduce_time_s(m, n, scale_up_bytes_per_s, scale_up_latency_s)
    tree_out = tree_allreduce_time_s(m, n, scale_out_bytes_per_s, scale_out_latency_s)
    tree_up = tree_allreduce_time_s(m, n, scale_up_bytes_per_s, scale_up_latency_s)
    mtbf_h = cluster_mtbf_h(n, p["mtbf_h_per_gpu"])
    ckpt = checkpoint_bytes(p["params"])
    write_s = checkpoint_write_time_s(ckpt, p["checkpoint_write_bytes_per_s"])
    tau = young_checkpoint_interval_s(write_s, mtbf_h * SECONDS_PER_HOUR)
    waste = checkpoint_failure_overhead_frac(tau, write_s, mtbf_h * SECONDS_PER_HOUR, p["restart_s"])
    budget = OVERHEAD_BUDGET
    derived_goodput = 1.0 - budget["pipeline_bubbles"] - budget["maintenance"] - waste
    q = littles_law_concurrency(p["arrival_rate_per_s"], p["request_latency_s"])
    rows = [
        ("Amdahl speedup", amdahl_speedup(n, p["serial_frac"]), "x",
         f"1 / (s + (1 - s) / N), s = {p['serial_frac']:g}"),
        ("Amdahl limit", 1.0 / p["serial_frac"], "x", "1 / s"),
        ("Scale-up / scale-out bandwidth", scale_up_bytes_per_s / scale_out_bytes_per_s, "x",
         f"{scale_up_bytes_per_s / 1e9:g} / {scale_out_bytes_per_s / 1e9:g} GB/s per direction"),
        ("Ring all-reduce, scale-out", ring_out, "s", "2 (N-1)/N M / BW + 2 (N-1) alpha"),
        ("Ring all-reduce, scale-up", ring_up, "s", "2 (N-1)/N M / BW + 2 (N-1) alpha"),
        ("Tree all-reduce, scale-out", tree_out, "s", "2 M / BW + 2 log2(N) alpha"),
        ("Tree all-reduce, scale-up", tree_up, "s", "2 M / BW + 2 log2(N) alpha"),
        ("Communication / computation (ring, scale-out)", comm_compute_ratio(ring_out, p["compute_s"] * n, n), "x",
         f"T_comm(N) / (T_compute / N), {p['compute_s']:g} s compute per GPU per step"),
        ("Cluster MTBF", mtbf_h * SECONDS_PER_HOUR, "s", f"{p['mtbf_h_per_gpu']:,.0f} h / N"),
        (f"P(at least one failure in {p['window_h']:g} h)", prob_at_least_one_failure(n, p["window_h"],
                                                                                      p["mtbf_h_per_gpu"]),
         "frac", "1 - exp(-N t / MTBF)"),
        ("Checkpoint size", ckpt, "B", f"{CHECKPOINT_BYTES_PER_PARAM:g} B/param x {p['params']:.4g} params"),
        ("Checkpoint write", write_s, "s", f"size / {p['checkpoint_write_bytes_per_s'] / 1e9:g} GB/s"),
        ("Checkpoint interval (Young)", tau, "s", "sqrt(2 x write x MTBF)"),
        ("Checkpoint + failure waste at that interval", waste, "frac",
         f"write / interval + (interval / 2 + restart {p['restart_s']:g} s) / MTBF"),
        ("Goodput, seed 001 budget", goodput_frac(*budget.values()), "frac", "1 - (5% + 3% + 10% + 5%)"),
        ("Goodput, derived", derived_goodput, "frac", "1 - bubbles 5% - maintenance 5% - waste"),
        ("Requests in flight (Little)", q, "requests",
         f"{p['arrival_rate_per_s']:g} req/s x {p['request_latency_s']:g} s"),
        ("Serving replicas", replicas_for_concurrency(q, p["sequences_per_replica"]), "replicas",
         f"ceil(in flight / {p['sequences_per_replica']:g} sequences per replica)"),
    ]
    values = np.array([float(r[1]) for r in rows])
    require_finite("fleet_numbers", values)
    return pl.DataFrame({"quantity": [r[0] for r in rows], "value": values, "unit": [r[2] for r in rows],
                         "formula": [r[3] for r in rows]})


# --------------------------------------------------------------------------------------------
# Build-out capex, itemized
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class BuildoutPrices:
    """Unit prices of a build-out; defaults from ``data/buildout_capex.csv`` (see :func:`buildout_prices`).

    Attributes
    ----------
    accelerator_usd_per_gpu : GPU board/module price (``purchase_price_usd``). [USD/GPU]
    server_usd_per_gpu : host share per GPU: CPUs, memory, chassis, PSUs, NICs. [USD/GPU]
    switch_usd : one scale-out switch. [USD]
    switch_radix : ports per switch. [ports]
    link_usd : one scale-out link (transceivers + cable) per GPU per tier. [USD]
    rails : GPUs per node = rails of the rail-optimized fabric. [GPU]
    storage_usd_per_gpu : storage hardware per GPU. [USD/GPU]
    facility_usd_per_mw : facility construction per MW of IT load for the chosen cooling class. [USD/MW]
    cooling : ``"air"`` or ``"liquid"`` (which facility row the price came from).
    all_in_it_usd_per_gpu : optional single all-in IT price per GPU replacing accelerator + server + network
        + storage (seed 004: H100 ~ $45,000). [USD/GPU]
    """

    accelerator_usd_per_gpu: float
    server_usd_per_gpu: float
    switch_usd: float
    switch_radix: float
    link_usd: float
    rails: float
    storage_usd_per_gpu: float
    facility_usd_per_mw: float
    cooling: str
    all_in_it_usd_per_gpu: float | None = None


def _buildout_table(catalog) -> pl.DataFrame:
    table = getattr(catalog, "buildout_capex", None)
    if table is None:
        from econ.tables.catalog import load_buildout_capex
        table = load_buildout_capex()
    return table


def buildout_prices(catalog, hardware: str, *, cooling: str | None = None, **overrides) -> BuildoutPrices:
    """Unit prices for a build-out of ``hardware``: the catalog's sourced values, overridable one by one.

    Parameters
    ----------
    catalog : Catalog
    hardware : str
        Accelerator id; its ``purchase_price_usd`` is the accelerator line (falls back to ``all_in_capex_usd``
        as a single all-in IT price when the accelerator has no purchase price).
    cooling : {"air", "liquid"}, optional
        Facility class; default from the rack power of the scale-up domain at all-in power: ``"liquid"`` above
        the ~30 kW air-cooling limit (seed 001), else ``"air"``.
    **overrides
        Any :class:`BuildoutPrices` field (e.g. ``switch_usd=50_000``, ``all_in_it_usd_per_gpu=45_000``);
        None values are ignored.

    Returns
    -------
    BuildoutPrices

    Raises
    ------
    UnknownIdError, InvalidInputError
        Unknown hardware; unknown cooling or override name; a price negative or not finite (named).
    """
    hw = catalog.accelerator(hardware)
    table = _buildout_table(catalog)
    value = dict(zip(table["id"].to_list(), table["value"].to_list()))
    fields = set(BuildoutPrices.__dataclass_fields__)
    unknown = {k for k, v in overrides.items() if v is not None} - fields
    if unknown:
        raise InvalidInputError(f"unknown build-out price(s) {sorted(unknown)}; valid: {sorted(fields)}")
    if cooling is None:
        from econ.analyses.compare import default_gpus_per_rack  # late import: compare imports this module
        rack_kw = float(rack_power_kw(default_gpus_per_rack(hw["scale_up_domain_size"]), hw["all_in_power_w"]))
        cooling = "liquid" if rack_kw > AIR_COOLING_LIMIT_KW_PER_RACK else "air"
    if cooling not in ("air", "liquid"):
        raise InvalidInputError(f"cooling={cooling!r} is not one of ['air', 'liquid']")
    purchase = hw.get("purchase_price_usd")
    base = dict(
        accelerator_usd_per_gpu=float(purchase) if purchase is not None else 0.0,
        server_usd_per_gpu=float(value[BUILDOUT_ITEMS["server_usd_per_gpu"]]),
        switch_usd=float(value[BUILDOUT_ITEMS["switch_usd"]]),
        switch_radix=float(value[BUILDOUT_ITEMS["switch_radix"]]),
        link_usd=float(value[BUILDOUT_ITEMS["link_usd"]]),
        rails=float(value[BUILDOUT_ITEMS["rails"]]),
        storage_usd_per_gpu=float(value[BUILDOUT_ITEMS["storage_usd_per_gpu"]]),
        facility_usd_per_mw=float(value[BUILDOUT_ITEMS[f"facility_{cooling}_usd_per_mw"]]),
        cooling=cooling,
        all_in_it_usd_per_gpu=None if purchase is not None else hw.get("all_in_capex_usd"),
    )
    base.update({k: v for k, v in overrides.items() if v is not None})
    for k, v in base.items():
        if k == "cooling" or v is None:
            continue
        lo_open = k in ("switch_radix", "rails")
        require_in_range(k, v, 0.0, 1e12, lo_inclusive=not lo_open)
    if base["accelerator_usd_per_gpu"] == 0 and base["all_in_it_usd_per_gpu"] is None:
        raise InvalidInputError(f"hardware={hardware} has neither purchase_price_usd nor all_in_capex_usd; give "
                                "accelerator_usd_per_gpu or all_in_it_usd_per_gpu")
    return BuildoutPrices(**base)


def network_tiers(num_gpus, switch_radix=64.0, rails=8.0):
    """Switch tiers of a non-blocking rail-optimized fat tree holding G GPUs.

    Parameters
    ----------
    num_gpus : scalar or array, >= 1 [GPU]
    switch_radix : float >= 2 [ports]
    rails : float >= 1
        GPUs per node, one NIC and one rail each. [GPU]

    Returns
    -------
    ndarray of float (whole numbers >= 1) of the input's shape. [tiers]

    Notes
    -----
    t tiers hold rails x 2 x (radix / 2)^t GPUs: 512, 16,384 and 524,288 for radix 64 and 8 rails, the tier
    bands of E. Cheah's H100 cluster capex (<= 64, <= 2,048, <= 65,536 nodes;
    https://substack.tech-talk-cto.com/p/h100-freakonomics-the-economical).
    """
    g = np.asarray(num_gpus, dtype=float)
    t = np.ceil(np.log(np.maximum(g / (2.0 * rails), 1.0)) / np.log(switch_radix / 2.0) - 1e-12)
    return np.maximum(t, 1.0)


def network_usd_per_gpu(num_gpus, switch_usd, switch_radix, link_usd, rails):
    """Scale-out network capex per GPU (switches and links), excluding the NICs (in the server price).

    Parameters
    ----------
    num_gpus : scalar or array [GPU]
    switch_usd : scalar [USD]; switch_radix : scalar [ports]; link_usd : scalar [USD]; rails : scalar [GPU]

    Returns
    -------
    tuple of three arrays of the input's shape: (switch USD per GPU, link USD per GPU, tiers).

    Notes
    -----
    Non-blocking fat tree of t tiers: (2t - 1) / radix switches per GPU and t links per GPU. With Cheah's
    prices ($36k switch, radix 64, $1,280 per link): 1 tier $1,842, 2 tiers $4,248, 3 tiers $6,652 per GPU,
    against the spreadsheet's $1,882, $4,248, $6,612.
    """
    t = network_tiers(num_gpus, switch_radix, rails)
    return (2.0 * t - 1.0) / switch_radix * switch_usd, t * link_usd, t


BUILDOUT_COLUMNS: tuple[str, ...] = (
    "num_gpus", "network_tiers", "capex_accelerators_usd", "capex_servers_usd", "capex_network_switches_usd",
    "capex_network_links_usd", "capex_storage_usd", "capex_it_all_in_usd", "capex_it_usd", "it_power_mw",
    "cooling", "facility_usd_per_mw_it", "capex_facility_usd", "capex_total_usd", "it_capex_per_gpu_usd",
    "all_in_capex_per_gpu_usd",
)


def buildout_capex(num_gpus, prices: BuildoutPrices, *, it_power_w_per_gpu) -> pl.DataFrame:
    """Itemized capex of a build-out: accelerators, servers, network by tier, storage, facility.

    Parameters
    ----------
    num_gpus : int or 1-D array-like of int >= 1 [GPU]
    prices : BuildoutPrices
    it_power_w_per_gpu : float > 0
        IT power per GPU the facility is built for (all-in basis for a real building). [W]

    Returns
    -------
    pl.DataFrame (:data:`BUILDOUT_COLUMNS`), one row per GPU count. Item columns are totals [USD];
    ``capex_it_all_in_usd`` is non-zero only when ``prices.all_in_it_usd_per_gpu`` replaces the IT items;
    ``it_capex_per_gpu_usd`` = IT / G and ``all_in_capex_per_gpu_usd`` = total / G.

    Raises
    ------
    InvalidInputError
        GPU counts or power out of range (named).

    Notes
    -----
    IT = G x (accelerator + server + storage) + network (see :func:`network_usd_per_gpu`); facility =
    IT MW x $/MW of the cooling class (air: Cushman & Wakefield 2025 $11.7M/MW; liquid: Bernstein 2025,
    $14.83M/MW). Seed 004: 100,000 H100 at ~$45,000 all-in = $4.5B; the itemized default for H100 at
    100,000 GPUs is $45,681 per GPU before the building.
    """
    g = require_integer("num_gpus", np.atleast_1d(np.asarray(num_gpus, dtype=float)), 1, 1e9, "GPUs")
    w = float(require_in_range("it_power_w_per_gpu", it_power_w_per_gpu, 0.0, 1e5, "W", lo_inclusive=False))
    pr = prices
    sw, links, tiers = network_usd_per_gpu(g, pr.switch_usd, pr.switch_radix, pr.link_usd, pr.rails)
    zero = np.zeros(g.shape)
    if pr.all_in_it_usd_per_gpu is not None:
        acc = srv = sw_tot = link_tot = sto = zero
        all_in = g * pr.all_in_it_usd_per_gpu
    else:
        acc, srv, sto = g * pr.accelerator_usd_per_gpu, g * pr.server_usd_per_gpu, g * pr.storage_usd_per_gpu
        sw_tot, link_tot, all_in = g * sw, g * links, zero
    it = acc + srv + sw_tot + link_tot + sto + all_in
    it_mw = it_power_w(g, w) / W_PER_MW
    fac = it_mw * pr.facility_usd_per_mw
    total = it + fac
    return pl.DataFrame({
        "num_gpus": g.astype(np.int64), "network_tiers": tiers.astype(np.int64), "capex_accelerators_usd": acc,
        "capex_servers_usd": srv, "capex_network_switches_usd": sw_tot, "capex_network_links_usd": link_tot,
        "capex_storage_usd": sto, "capex_it_all_in_usd": all_in, "capex_it_usd": it, "it_power_mw": it_mw,
        "cooling": [pr.cooling] * g.size, "facility_usd_per_mw_it": np.full(g.shape, float(pr.facility_usd_per_mw)),
        "capex_facility_usd": fac, "capex_total_usd": total, "it_capex_per_gpu_usd": it / g,
        "all_in_capex_per_gpu_usd": total / g,
    }).select(BUILDOUT_COLUMNS)


def gpus_for_capex(budget_usd, prices: BuildoutPrices, *, it_power_w_per_gpu) -> int:
    """Most GPUs whose itemized build-out (IT + facility) fits a capex budget.

    Parameters
    ----------
    budget_usd : float > 0 [USD]
    prices : BuildoutPrices
    it_power_w_per_gpu : float > 0 [W]

    Returns
    -------
    int [GPU]; 0 when not even one GPU fits.

    Notes
    -----
    The per-GPU cost is a step function of G (the fabric gains a tier at 512, 16,384, 524,288 GPUs), so the
    answer is the largest G over the tiers of min(floor(budget / cost per GPU at that tier), the tier's
    capacity) that still lies in its tier: a few closed-form candidates, no search over G.
    """
    budget = float(require_in_range("capex_budget_usd", budget_usd, 0.0, 1e15, "USD", lo_inclusive=False))

    def per_gpu(g: int) -> float:
        return float(buildout_capex(g, prices, it_power_w_per_gpu=it_power_w_per_gpu)["all_in_capex_per_gpu_usd"][0])

    if prices.all_in_it_usd_per_gpu is not None:  # no fabric items: one price per GPU at every size
        return int(budget // per_gpu(1) * (1 + 1e-15))
    best, lo = 0, 1
    for t in range(1, 8):
        cap = int(prices.rails * 2 * (prices.switch_radix / 2) ** t)
        g = min(int(budget // per_gpu(lo)), cap)
        if g >= lo:
            best = g
        if g < cap:
            break
        lo = cap + 1
    return best


# --------------------------------------------------------------------------------------------
# Serving capacity through the one engine, and inverse sizing from a power or capex budget
# --------------------------------------------------------------------------------------------

def serving_rate(catalog, model: str, hardware: str, *, min_tokens_per_s_per_user: float = DEFAULT_MIN_TOKENS_PER_S_PER_USER, precisions=None,
                 input_len: int = 1024, output_len: int = 1024, assumptions=None, economics=None) -> dict:
    """Best serving deployment of ``model`` on ``hardware`` meeting a tokens/s-per-user floor: THE call into the engine.

    Every fleet and cluster number in tokens/day goes through this one function, so the engine behind it can
    be repointed in one place.

    Parameters
    ----------
    catalog : Catalog
    model, hardware : str
        Ids.
    min_tokens_per_s_per_user : float in [0, 1e4]
        Decode-speed floor per sequence. [tokens/s]
    precisions : sequence of str, optional
        Serving precisions allowed (None = all).
    input_len, output_len : int [tokens]
    assumptions, economics : optional
        Defaults ``econ.assumptions.DEFAULT`` and ``Economics()``.

    Returns
    -------
    dict with ``meets_slo`` (bool), ``precision`` (str or None), ``gpus_per_replica``, ``tp``, ``dp``, ``ep``,
    ``pp``, ``layout`` (e.g. "ADP8 EP8"), ``batch_size``, ``tokens_per_s_per_user``,
    ``output_tokens_per_s_per_gpu``, ``usd_per_m_output_tokens`` (None when no deployment meets the floor),
    and ``status`` (why not).

    Raises
    ------
    UnknownIdError, InvalidInputError

    Notes
    -----
    :func:`econ.analyses.compare.hardware_comparison` (one vectorized :func:`econ.engine.evaluate` over precision x
    layout x batch, the layouts ``econ cost`` chooses among), its cheapest row meeting the floor.
    """
    from econ.assumptions import DEFAULT, Economics
    from econ.analyses.compare import hardware_comparison  # late import: compare imports this module
    best = hardware_comparison(catalog, model=model, hardware=[hardware], precisions=precisions,
                               min_tokens_per_s_per_user=min_tokens_per_s_per_user, input_len=input_len,
                               output_len=output_len, assumptions=assumptions or DEFAULT,
                               economics=economics or Economics()).best.row(0, named=True)
    ok = bool(best["meets_slo"])
    return {"meets_slo": ok, "precision": best["precision"] if ok else None,
            "gpus_per_replica": int(best["num_gpus"]) if ok else None,
            **{k: (int(best[k]) if ok else None) for k in ("tp", "dp", "ep", "pp")},
            "layout": best["layout"] if ok else None,
            "usd_per_m_output_tokens": float(best["usd_per_m_output_tokens"]) if ok else None,
            "batch_size": int(best["batch_size"]) if ok else None,
            "tokens_per_s_per_user": float(best["tokens_per_s_per_user"]) if ok else None,
            "output_tokens_per_s_per_gpu": float(best["output_tokens_per_s_per_gpu"]) if ok else None,
            "status": best["status"] or ""}


SIZE_COLUMNS: tuple[str, ...] = (
    "budget", "hardware", "num_gpus", "per_gpu_power_w", "it_power_mw", "facility_power_mw", "gpus_per_rack",
    "rack_count", "rack_power_kw", "rack_cooling", "capex_it_usd", "capex_facility_usd", "capex_total_usd",
    "peak_flop_per_s", "realized_flop_per_s", "realized_frac_of_peak", "model", "serving_precision",
    "serving_gpus_per_replica", "serving_replicas", "serving_tokens_per_day", "usd_per_m_output_tokens_price",
    "revenue_per_year_usd", "energy_cost_per_year_usd", "opex_per_year_usd", "payback_years",
)


def size_from_budget(catalog, *, hardware: str, power_w=None, power_of: str = "facility", capex_usd=None,
                     pue: float = 1.2, power_basis="all-in", gpus_per_rack=None, training_precision: str = "bf16",
                     efficiency_model: str = "seed001", mfu_frac=None, model: str | None = None,
                     price_usd_per_m_output_tokens: float = 0.90, min_tokens_per_s_per_user: float = DEFAULT_MIN_TOKENS_PER_S_PER_USER,
                     usd_per_kwh: float = 0.066, utilization_frac: float = 0.7,
                     opex_frac_of_capex_per_year: float = 0.05, prices: BuildoutPrices | None = None,
                     input_len: int = 1024, output_len: int = 1024) -> pl.DataFrame:
    """Inverse sizing: what a power budget or a capex budget buys (GPUs, MW, racks, capex, FLOP/s, tokens/day, payback).

    Parameters
    ----------
    catalog : Catalog
    hardware : str
    power_w : float > 0, optional
        Power budget. [W] (1 GW = 1e9)
    power_of : {"facility", "it"}
        Whether ``power_w`` is the facility's grid draw (IT = power / PUE) or the IT (critical) load.
    capex_usd : float > 0, optional
        Capex budget for IT + facility. [USD]  Give exactly one of ``power_w`` and ``capex_usd``.
    pue : float in [1, 3] [1]
    power_basis : {"tdp", "all-in"} or float
        Per-GPU power (:func:`power_w_per_gpu`); all-in is what a building must supply.
    gpus_per_rack : int, optional
        Default ``econ.analyses.compare.default_gpus_per_rack``.
    training_precision : {"bf16", "fp8", "fp4"}
    efficiency_model, mfu_frac : see :func:`efficiency_chain`.
    model : str, optional
        Serve this model: tokens/day through :func:`serving_rate`, revenue at the price, payback.
    price_usd_per_m_output_tokens : float >= 0 [USD/M tokens]
    min_tokens_per_s_per_user : float [tokens/s]
    usd_per_kwh : float >= 0 [USD/kWh]
    utilization_frac : float in (0, 1]
        Share of hours serving paid traffic (and the energy load factor). [1]
    opex_frac_of_capex_per_year : float >= 0
        Yearly non-energy opex as a share of IT capex (``econ.assumptions.Economics`` default). [1/yr]
    prices : BuildoutPrices, optional
        Default :func:`buildout_prices` for the hardware.
    input_len, output_len : int [tokens]

    Returns
    -------
    pl.DataFrame, one row (:data:`SIZE_COLUMNS`); serving columns are null without a model, ``payback_years``
    null when never paid back.

    Raises
    ------
    InvalidInputError, UnknownIdError
        Neither or both budgets; a budget, PUE, price or fraction out of range (named, with its range); a
        budget too small for one GPU.
    """
    from econ.analyses.compare import default_gpus_per_rack
    from econ.physics.precision import PEAK_COLUMN
    if (power_w is None) == (capex_usd is None):
        raise InvalidInputError("give exactly one budget: power (power_w) or capex (capex_usd)")
    if power_of not in ("facility", "it"):
        raise InvalidInputError(f"power_of={power_of!r} is not one of ['facility', 'it']")
    pue = float(require_in_range("pue", pue, 1.0, 3.0, "ratio"))
    require_in_range("price_usd_per_m_output_tokens", price_usd_per_m_output_tokens, 0.0, 1e4, "USD/M tokens")
    require_in_range("usd_per_kwh", usd_per_kwh, 0.0, 10.0, "USD/kWh")
    require_in_range("utilization_frac", utilization_frac, 0.0, 1.0, lo_inclusive=False)
    require_in_range("opex_frac_of_capex_per_year", opex_frac_of_capex_per_year, 0.0, 1.0)
    hw = catalog.accelerator(hardware)
    w = power_w_per_gpu(hw, power_basis)
    prices = prices or buildout_prices(catalog, hardware)
    if power_w is not None:
        budget_w = float(require_in_range("power_budget_w", power_w, 0.0, 1e12, "W", lo_inclusive=False))
        it_budget = budget_w / pue if power_of == "facility" else budget_w
        g = int(np.floor(it_budget / w * (1 + 1e-12)))
        budget = f"{formatting.watts(budget_w)} {power_of}"
    else:
        g = gpus_for_capex(capex_usd, prices, it_power_w_per_gpu=w)
        budget = f"{formatting.usd(float(capex_usd))} capex"
    if g < 1:
        raise InvalidInputError(f"the budget ({budget}) does not buy one {hardware} "
                                f"({formatting.watts(w)} per GPU, PUE {pue:g})")
    rack = int(default_gpus_per_rack(hw["scale_up_domain_size"])) if gpus_per_rack is None else int(
        require_integer("gpus_per_rack", gpus_per_rack, 1, 1e6, "GPUs/rack"))
    peak_col = PEAK_COLUMN.get(training_precision)
    if peak_col is None or hw[peak_col] is None:
        raise InvalidInputError(f"hardware={hardware} has no dense {training_precision} peak (training_precision)")
    chain = efficiency_chain(g, efficiency_model, mfu_frac=mfu_frac).row(0, named=True)
    cap = buildout_capex(g, prices, it_power_w_per_gpu=w).row(0, named=True)
    it_w = it_power_w(g, w)
    fac_w = facility_power_w(it_w, pue)
    energy_usd = float(annual_energy_cost_usd(annual_energy_kwh(fac_w, utilization_frac), usd_per_kwh))
    opex = energy_usd + opex_frac_of_capex_per_year * cap["capex_it_usd"]
    row = {
        "budget": budget, "hardware": hardware, "num_gpus": g, "per_gpu_power_w": w, "it_power_mw": it_w / W_PER_MW,
        "facility_power_mw": fac_w / W_PER_MW, "gpus_per_rack": rack, "rack_count": int(rack_count(g, rack)),
        "rack_power_kw": float(rack_power_kw(rack, w)), "rack_cooling": str(rack_cooling(rack_power_kw(rack, w))),
        "capex_it_usd": cap["capex_it_usd"], "capex_facility_usd": cap["capex_facility_usd"],
        "capex_total_usd": cap["capex_total_usd"], "peak_flop_per_s": g * float(hw[peak_col]),
        "realized_flop_per_s": g * float(hw[peak_col]) * chain["realized_frac_of_peak"],
        "realized_frac_of_peak": chain["realized_frac_of_peak"], "model": model, "serving_precision": None,
        "serving_gpus_per_replica": None, "serving_replicas": None, "serving_tokens_per_day": None,
        "usd_per_m_output_tokens_price": float(price_usd_per_m_output_tokens), "revenue_per_year_usd": None,
        "energy_cost_per_year_usd": energy_usd, "opex_per_year_usd": opex, "payback_years": None,
    }
    if model is not None:
        rate = serving_rate(catalog, model, hardware, min_tokens_per_s_per_user=min_tokens_per_s_per_user,
                            input_len=input_len, output_len=output_len)
        if rate["meets_slo"]:
            reps = g // rate["gpus_per_replica"]
            tokens = float(serving_tokens_per_day(reps * rate["gpus_per_replica"], rate["output_tokens_per_s_per_gpu"],
                                                  utilization_frac))
            revenue = float(revenue_per_year_usd(tokens, price_usd_per_m_output_tokens))
            years = float(payback_years(cap["capex_total_usd"], revenue, opex))
            row.update(serving_precision=rate["precision"], serving_gpus_per_replica=rate["gpus_per_replica"],
                       serving_replicas=reps, serving_tokens_per_day=tokens, revenue_per_year_usd=revenue,
                       payback_years=years if np.isfinite(years) else None)
        else:
            row.update(serving_tokens_per_day=0.0, revenue_per_year_usd=0.0)
    schema = {"budget": pl.String, "hardware": pl.String, "num_gpus": pl.Int64, "gpus_per_rack": pl.Int64,
              "rack_count": pl.Int64, "rack_cooling": pl.String, "model": pl.String, "serving_precision": pl.String,
              "serving_gpus_per_replica": pl.Int64, "serving_replicas": pl.Int64}
    return pl.DataFrame([row], schema={c: schema.get(c, pl.Float64) for c in SIZE_COLUMNS})


# --------------------------------------------------------------------------------------------
# Training runs
# --------------------------------------------------------------------------------------------

TRAINING_COLUMNS: tuple[str, ...] = (
    "num_gpus", "training_flop", "peak_flop_per_s", "efficiency_model", "mfu_frac", "scaling_efficiency_frac",
    "goodput_frac", "goodput_basis", "realized_frac_of_peak", "realized_flop_per_s", "cluster_mtbf_h",
    "checkpoint_bytes", "checkpoint_write_s", "checkpoint_interval_s", "checkpoint_failure_overhead_frac",
    "training_days", "expected_failures", "gpu_hours", "usd_per_gpu_hour", "training_cost_usd",
)


def training_run(num_gpus, *, training_flop, flop_per_s_per_gpu, usd_per_gpu_hour, efficiency_model="seed001",
                 mfu_frac=None, scaling_efficiency=None, goodput="budget", params_for_checkpoint=None,
                 checkpoint_write_bytes_per_s=100e9, mtbf_h_per_gpu=MTBF_H_PER_GPU,
                 restart_s=RESTART_S) -> pl.DataFrame:
    """A training run on a cluster: 6ND FLOPs at the realized efficiency, with failures and checkpoints.

    Parameters
    ----------
    num_gpus : int or 1-D array-like of int >= 1 [GPU]
    training_flop : float > 0
        Total training compute, e.g. :func:`training_flop` = 6 x active params x tokens. [FLOP]
    flop_per_s_per_gpu : float > 0
        Dense peak at the training precision. [FLOP/s]
    usd_per_gpu_hour : float >= 0 [USD/(GPU h)]
    efficiency_model, mfu_frac, scaling_efficiency : see :func:`efficiency_chain`.
    goodput : {"budget", "derived", "none"} or float in (0, 1]
        ``"budget"``: the model's own goodput (seed 001: 77%, whose 3% checkpointing and 10% failure recovery
        are a budget; seed 000: none). ``"derived"``: 1 - bubbles 5% - maintenance 5% - the checkpoint and
        failure waste at Young's interval for THIS cluster (:func:`checkpoint_failure_overhead_frac`).
        ``"none"``: 1. A number: that goodput.
    params_for_checkpoint : float, optional
        Parameters checkpointed (total, not active, for MoE) at 14 B each; without it the checkpoint columns are
        null and ``goodput="derived"`` raises. [param]
    checkpoint_write_bytes_per_s : float > 0 [B/s]
    mtbf_h_per_gpu : float > 0 [h]
    restart_s : float >= 0 [s]

    Returns
    -------
    pl.DataFrame (:data:`TRAINING_COLUMNS`), one row per GPU count.

    Raises
    ------
    InvalidInputError
        Any input out of range; ``goodput="derived"`` without ``params_for_checkpoint``; a derived goodput <= 0
        (the cluster fails faster than it can checkpoint).

    Notes
    -----
    days = FLOP / (G x peak x MFU x scaling x goodput) / 86,400; GPU-hours = G x days x 24; cost = GPU-hours x
    price (every GPU paid for the whole wall clock). Expected failures = wall clock / cluster MTBF (seed 001
    eq. 1). DeepSeek-V3 (technical report, arXiv:2412.19437): 2.788M H800 GPU-hours x $2 = $5.576M.
    """
    flop = float(require_in_range("training_flop", training_flop, 0.0, 1e35, "FLOP", lo_inclusive=False))
    peak_gpu = float(require_in_range("flop_per_s_per_gpu", flop_per_s_per_gpu, 0.0, 1e18, "FLOP/s",
                                      lo_inclusive=False))
    price = float(require_in_range("usd_per_gpu_hour", usd_per_gpu_hour, 0.0, 1e4, "USD/GPU-hour"))
    bw = float(require_in_range("checkpoint_write_bytes_per_s", checkpoint_write_bytes_per_s, 0.0, 1e15, "B/s",
                                lo_inclusive=False))
    mtbf = float(require_in_range("mtbf_h_per_gpu", mtbf_h_per_gpu, 0.0, 1e9, "h", lo_inclusive=False))
    restart = float(require_in_range("restart_s", restart_s, 0.0, 1e7, "s"))
    fixed = None
    if not isinstance(goodput, str):
        fixed = float(require_in_range("goodput", goodput, 0.0, 1.0, lo_inclusive=False))
    elif goodput not in ("budget", "derived", "none"):
        raise InvalidInputError(f"goodput={goodput!r} is not one of ['budget', 'derived', 'none'] or a fraction")
    chain = efficiency_chain(num_gpus, efficiency_model, mfu_frac=mfu_frac, scaling_efficiency=scaling_efficiency,
                             goodput=fixed if fixed is not None else (1.0 if goodput in ("none", "derived") else None))
    g = chain["num_gpus"].to_numpy().astype(float)
    mtbf_s = cluster_mtbf_h(g, mtbf) * SECONDS_PER_HOUR
    nan = np.full(g.shape, np.nan)
    if params_for_checkpoint is not None:
        params = float(require_in_range("params_for_checkpoint", params_for_checkpoint, 0.0, 1e16, "params",
                                        lo_inclusive=False))
        ckpt = np.full(g.shape, checkpoint_bytes(params))
        write = ckpt / bw
        tau = young_checkpoint_interval_s(write, mtbf_s)
        waste = checkpoint_failure_overhead_frac(tau, write, mtbf_s, restart)
    elif goodput == "derived":
        raise InvalidInputError("goodput='derived' needs params_for_checkpoint (the checkpoint size sets the waste)")
    else:
        ckpt = write = tau = waste = nan
    good = chain["goodput_frac"].to_numpy()
    if goodput == "derived":
        good = 1.0 - OVERHEAD_BUDGET["pipeline_bubbles"] - OVERHEAD_BUDGET["maintenance"] - waste
        if (good <= 0).any():
            i = int(np.flatnonzero(good <= 0)[0])
            raise InvalidInputError(f"derived goodput={good[i]:.3g} at {int(g[i]):,} GPUs is not positive: the "
                                    "cluster fails faster than it can checkpoint (raise checkpoint bandwidth or MTBF)")
    frac = chain["mfu_frac"].to_numpy() * chain["scaling_efficiency_frac"].to_numpy() * good
    realized = g * peak_gpu * frac
    seconds = training_time_s(flop, realized)
    gpu_hours = seconds / SECONDS_PER_HOUR * g
    basis = ("derived (Young interval)" if goodput == "derived" else "typed" if fixed is not None else
             "none" if goodput == "none" else "model budget")
    frame = pl.DataFrame({
        "num_gpus": g.astype(np.int64), "training_flop": np.full(g.shape, flop),
        "peak_flop_per_s": g * peak_gpu, "efficiency_model": chain["efficiency_model"],
        "mfu_frac": chain["mfu_frac"], "scaling_efficiency_frac": chain["scaling_efficiency_frac"],
        "goodput_frac": good, "goodput_basis": [basis] * g.size, "realized_frac_of_peak": frac,
        "realized_flop_per_s": realized, "cluster_mtbf_h": mtbf_s / SECONDS_PER_HOUR, "checkpoint_bytes": ckpt,
        "checkpoint_write_s": write, "checkpoint_interval_s": tau, "checkpoint_failure_overhead_frac": waste,
        "training_days": seconds / SECONDS_PER_DAY, "expected_failures": seconds / mtbf_s, "gpu_hours": gpu_hours,
        "usd_per_gpu_hour": np.full(g.shape, price), "training_cost_usd": gpu_hours * price,
    })
    return frame.with_columns(pl.col(pl.Float64).fill_nan(None)).select(TRAINING_COLUMNS)


def gpu_hours_cost_usd(gpu_hours, usd_per_gpu_hour):
    """Cost of a number of GPU-hours at a price.

    Parameters
    ----------
    gpu_hours : scalar or array, broadcastable [GPU h]
    usd_per_gpu_hour : scalar or array, broadcastable [USD/(GPU h)]

    Returns
    -------
    scalar or array of the broadcast shape. [USD]

    Notes
    -----
    DeepSeek-V3 technical report (arXiv:2412.19437, Table 1): 2.788M H800 GPU-hours at an assumed $2 per
    GPU-hour rental = $5.576M (pre-training 2.664M + context extension 0.119M + post-training 0.005M).
    """
    return gpu_hours * usd_per_gpu_hour


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
# Cluster plan (moved from econ.analyses.compare, which re-exports it): one accelerator, G GPUs, a model
# --------------------------------------------------------------------------------------------

DEFAULT_GPUS_PER_RACK = 32
"""Four 8-GPU HGX/DGX servers per rack (NVIDIA DGX SuperPOD reference layout for DGX H100/B200). [GPU/rack]"""

RACK_SCALE_DOMAINS = (36, 72, 144)
"""Scale-up domains that are one rack (GB200/GB300 NVL36/NVL72, Rubin NVL144): the rack holds the domain."""

PLAN_COLUMNS: tuple[str, ...] = (
    "hardware", "num_gpus", "gpus_per_rack", "power_basis", "per_gpu_power_w", "efficiency_model",
    "peak_flop_per_s", "mfu_frac", "scaling_efficiency_frac", "goodput_frac", "realized_flop_per_s",
    "realized_frac_of_peak", "efficiency_chain", "it_power_mw", "facility_power_mw", "annual_energy_mwh",
    "annual_energy_cost_usd", "rack_count", "rack_power_kw", "air_cooling_ok", "rack_cooling",
    "capex_accelerators_usd", "capex_facility_usd", "capex_total_usd", "cluster_mtbf_h", "failure_window_h",
    "prob_failure_in_window_frac", "model", "checkpoint_bytes", "checkpoint_write_s", "training_tokens",
    "training_flop", "training_days", "usd_per_gpu_hour_training", "training_cost_usd", "serving_precision",
    "serving_gpus_per_replica", "serving_replicas", "serving_batch_size", "serving_tokens_per_s_per_user",
    "serving_output_tokens_per_s_per_gpu", "serving_tokens_per_day", "price_usd_per_m_output_tokens",
    "revenue_per_year_usd", "opex_per_year_usd", "payback_years",
)


def default_gpus_per_rack(scale_up_domain_size):
    """GPUs per rack when not given: the scale-up domain for rack-scale systems, else 32.

    Parameters
    ----------
    scale_up_domain_size : scalar or array [accelerators]

    Returns
    -------
    ndarray of float [GPU/rack]: the domain when it is one of :data:`RACK_SCALE_DOMAINS`, else
    :data:`DEFAULT_GPUS_PER_RACK`.
    """
    d = np.asarray(scale_up_domain_size, dtype=float)
    return np.where(np.isin(d, RACK_SCALE_DOMAINS), d, float(DEFAULT_GPUS_PER_RACK))


def cluster_plan(catalog, *, hardware: str, num_gpus, model: str | None = None, gpus_per_rack: int | None = None,
                 training_precision: str = "bf16", mfu_frac: float | None = None, overhead_fracs=None,
                 failure_window_h: float = 24.0, mtbf_h_per_gpu: float = MTBF_H_PER_GPU,
                 checkpoint_write_gb_per_s: float = 100.0, training_tokens: float = 15e12,
                 min_tokens_per_s_per_user: float = DEFAULT_MIN_TOKENS_PER_S_PER_USER, precisions=None,
                 price_usd_per_m_output_tokens: float = 0.90, input_len: int = 1024, output_len: int = 1024,
                 assumptions=None, economics=None, power_basis="all-in", efficiency_model: str = "seed001",
                 scaling_efficiency: float | None = None) -> pl.DataFrame:
    """Size a cluster of ``num_gpus`` accelerators and what it does for ``model``: train it, serve it, pay back.

    Parameters
    ----------
    catalog : Catalog
    hardware : str
        Accelerator id; needs ``all_in_capex_usd`` (the cluster is bought).
    num_gpus : int or 1-D array-like of int >= 1
        Cluster sizes, one output row each. [accelerators]
    model : str, optional
        Model id for checkpoint, training and serving columns (null without it).
    gpus_per_rack : int, optional
        Default :func:`default_gpus_per_rack`. [GPU/rack]
    training_precision : {"bf16", "fp8", "fp4"}
        Peak used for training FLOP/s (dense).
    mfu_frac : float, optional
        Measured MFU; None = the efficiency model's (seed 000's curve, or seed 001's 50%).
    overhead_fracs : sequence of float in [0, 1], optional
        Wall-clock shares lost to pipeline bubbles, checkpointing, failure recovery, maintenance; goodput =
        1 - sum. None = the model's default: seed 001 Table 8 (5/3/10/5% -> 77%) for ``"seed001"``, none for
        ``"seed000"`` (whose MFU is already realized / peak).
    failure_window_h, mtbf_h_per_gpu : float [h]
    checkpoint_write_gb_per_s : float > 0
        Aggregate sustained write bandwidth to checkpoint storage (seed 001 Table 7: 100 GB/s). [GB/s]
    training_tokens : float > 0 [tokens]
    min_tokens_per_s_per_user : float [tokens/s]
        Serving floor; the serving deployment comes from :func:`serving_rate`.
    precisions : sequence of str, optional
        Serving precisions allowed (None = all).
    price_usd_per_m_output_tokens : float >= 0 [USD/M tokens]
    input_len, output_len : int [tokens]
    assumptions, economics : Assumptions, Economics, optional
        ``economics`` gives PUE, $/kWh, build $/MW, cost of capital, lives, opex share, utilization.
    power_basis : {"tdp", "all-in"} or float
        Per-GPU power for IT MW, facility MW, rack kW, energy and the facility capex (:func:`power_w_per_gpu`).
        Default all-in: what a building must supply.
    efficiency_model : {"seed000", "seed001"}
        See :func:`efficiency_chain`. Default seed 001's chain.
    scaling_efficiency : float in (0, 1], optional
        Override seed 001's scaling efficiency (seed 000: folded into its curve).

    Returns
    -------
    pl.DataFrame (:data:`PLAN_COLUMNS`), one row per cluster size. ``payback_years`` is null when the yearly
    margin (revenue - energy - opex) is not positive (never paid back).

    Raises
    ------
    UnknownIdError, InvalidInputError
        Unknown ids; an accelerator without ``all_in_capex_usd`` or without a dense peak at
        ``training_precision``; any input out of range (named, with its range).

    Notes
    -----
    - Capex, power, racks, energy, MTBF and failure odds: :func:`size_cluster` with the accelerator's all-in
      capex and the chosen power basis (seeds 000, 001, 004). Energy is billed at a load factor equal to
      ``economics.utilization_frac`` (idle draw neglected, as in ``econ.economics.tco``).
    - Realized FLOP/s: peak x the chosen :func:`efficiency_chain`.
    - Checkpoint: 14 B per parameter (seed 001 Table 7) over the model's total parameters.
    - Training: 6 x active matmul parameters x tokens (seed 001; Kaplan et al. 2020) at the realized FLOP/s;
      its cost prices every GPU for the whole wall clock at the owned $/GPU-hour with utilization 1 (a
      dedicated cluster: idle time is already in goodput), or the rental rate.
    - Serving: whole replicas of :func:`serving_rate`'s deployment at ``economics.utilization_frac``; revenue
      counts output tokens only. Yearly opex = energy + ``opex_frac_of_capex_per_year`` x accelerator capex;
      payback = capex / (revenue - opex), undiscounted (:func:`payback_years`).
    """
    from econ.assumptions import DEFAULT, Economics
    from econ.physics.precision import PEAK_COLUMN, PRECISIONS
    from econ.economics.tco import gpu_hour_cost_components, usd_per_gpu_hour_rented
    from econ.units import BYTES_PER_GB

    assumptions = assumptions or DEFAULT
    e = economics or Economics()
    hw = catalog.accelerator(hardware)
    if training_precision not in PEAK_COLUMN:
        raise InvalidInputError(f"training_precision={training_precision!r} is not one of {list(PRECISIONS)}")
    peak = hw[PEAK_COLUMN[training_precision]]
    if peak is None:
        raise InvalidInputError(f"hardware={hardware} has no dense {training_precision} peak in accelerators.csv "
                                f"(training_precision={training_precision!r}; try bf16)")
    capex = hw["all_in_capex_usd"]
    if capex is None:
        raise InvalidInputError(f"hardware={hardware} has no all_in_capex_usd in accelerators.csv (it is not sold); "
                                "a cluster plan needs a purchase price: add one on the Assumptions page or "
                                "with --data-dir")
    gpus = require_integer("num_gpus", np.atleast_1d(np.asarray(num_gpus, dtype=float)), 1, 1e8, "accelerators")
    rack = default_gpus_per_rack(hw["scale_up_domain_size"]) if gpus_per_rack is None else gpus_per_rack
    watts = power_w_per_gpu(hw, power_basis)
    basis_name = power_basis if isinstance(power_basis, str) and power_basis in POWER_BASES else "typed"
    goodput = None
    if overhead_fracs is not None:
        for i, o in enumerate(overhead_fracs):
            require_in_range(f"overhead_fracs[{i}]", o, 0.0, 1.0)
        goodput = float(goodput_frac(*overhead_fracs))
        require_in_range("goodput_frac (1 - sum of overheads)", goodput, 0.0, 1.0, lo_inclusive=False)
    require_in_range("checkpoint_write_gb_per_s", checkpoint_write_gb_per_s, 0.0, np.inf, "GB/s", lo_inclusive=False)
    require_in_range("training_tokens", training_tokens, 0.0, np.inf, "tokens", lo_inclusive=False)
    require_in_range("price_usd_per_m_output_tokens", price_usd_per_m_output_tokens, 0.0, np.inf, "USD/M tokens")
    chain = efficiency_chain(gpus, efficiency_model, mfu_frac=mfu_frac, scaling_efficiency=scaling_efficiency,
                             goodput=goodput)
    sized = size_cluster(gpus, flop_per_s_per_gpu=peak, power_w_per_gpu=watts, all_in_capex_usd_per_gpu=capex,
                         gpus_per_rack=rack, pue=e.pue, usd_per_kwh=e.usd_per_kwh,
                         build_usd_per_mw_it=e.build_usd_per_mw_it, mfu_frac=chain["mfu_frac"].to_numpy(),
                         scaling_efficiency_frac=chain["scaling_efficiency_frac"].to_numpy(),
                         goodput_frac=chain["goodput_frac"].to_numpy(), load_factor_frac=e.utilization_frac,
                         mtbf_h_per_gpu=mtbf_h_per_gpu, failure_window_h=failure_window_h)
    n = sized.height
    g = sized["num_gpus"].to_numpy().astype(float)
    cols: dict[str, object] = {"hardware": [hardware] * n, "power_basis": [basis_name] * n,
                               "efficiency_model": [efficiency_model] * n, "efficiency_chain": chain["chain"].to_list(),
                               "rack_cooling": np.atleast_1d(rack_cooling(sized["rack_power_kw"].to_numpy())).tolist(),
                               "per_gpu_power_w": np.full(n, watts)}
    rack_col = np.broadcast_to(np.asarray(rack, dtype=float), (n,)).astype(np.int64)

    # training: a dedicated cluster -> utilization 1 for the GPU-hour price
    parts = gpu_hour_cost_components(capex, watts, e.build_usd_per_mw_it, e.pue, e.usd_per_kwh,
                                     e.cost_of_capital_frac, e.accelerator_life_years, e.facility_life_years,
                                     e.opex_frac_of_capex_per_year, 1.0)
    owned_hour = float(sum(parts.values()))
    rent = hw["rental_usd_per_hour"]
    usd_hour = owned_hour if e.basis == "owned" or rent is None else float(usd_per_gpu_hour_rented(rent, 1.0))
    opex_year = sized["annual_energy_cost_usd"].to_numpy() + e.opex_frac_of_capex_per_year * sized[
        "capex_accelerators_usd"].to_numpy()
    cols.update(usd_per_gpu_hour_training=np.full(n, usd_hour), opex_per_year_usd=opex_year,
                price_usd_per_m_output_tokens=np.full(n, float(price_usd_per_m_output_tokens)))
    null = np.full(n, np.nan)
    if model is None:
        cols.update({c: null for c in ("checkpoint_bytes", "checkpoint_write_s", "training_tokens", "training_flop",
                                       "training_days", "training_cost_usd", "serving_gpus_per_replica",
                                       "serving_replicas", "serving_batch_size", "serving_tokens_per_s_per_user",
                                       "serving_output_tokens_per_s_per_gpu", "serving_tokens_per_day",
                                       "revenue_per_year_usd", "payback_years")})
        cols.update(model=[None] * n, serving_precision=[None] * n)
    else:
        m = catalog.model(model)
        ckpt = checkpoint_bytes(m["total_params"])
        flop = training_flop(m["active_matmul_params"], training_tokens)
        t_s = training_time_s(flop, sized["realized_flop_per_s"].to_numpy())
        rate = serving_rate(catalog, model, hardware, min_tokens_per_s_per_user=min_tokens_per_s_per_user,
                            precisions=precisions, input_len=input_len, output_len=output_len,
                            assumptions=assumptions, economics=e)
        ok = rate["meets_slo"]
        per_rep = float(rate["gpus_per_replica"]) if ok else np.nan
        replicas = np.floor(g / per_rep) if ok else np.zeros(n)
        tps_gpu = rate["output_tokens_per_s_per_gpu"] if ok else 0.0
        tokens_day = serving_tokens_per_day(replicas * (per_rep if ok else 0.0), tps_gpu, e.utilization_frac)
        revenue = revenue_per_year_usd(tokens_day, price_usd_per_m_output_tokens)
        payback = payback_years(sized["capex_total_usd"].to_numpy(), revenue, opex_year)
        cols.update(
            model=[model] * n, checkpoint_bytes=np.full(n, ckpt),
            checkpoint_write_s=np.full(n, checkpoint_write_time_s(ckpt, checkpoint_write_gb_per_s * BYTES_PER_GB)),
            training_tokens=np.full(n, float(training_tokens)), training_flop=np.full(n, flop),
            training_days=t_s / SECONDS_PER_DAY, training_cost_usd=training_cost_usd(t_s, g, usd_hour),
            serving_precision=[rate["precision"]] * n, serving_gpus_per_replica=np.full(n, per_rep),
            serving_replicas=replicas, serving_batch_size=np.full(n, float(rate["batch_size"]) if ok else np.nan),
            serving_tokens_per_s_per_user=np.full(n, rate["tokens_per_s_per_user"] if ok else np.nan),
            serving_output_tokens_per_s_per_gpu=np.full(n, tps_gpu if ok else np.nan),
            serving_tokens_per_day=tokens_day, revenue_per_year_usd=revenue,
            payback_years=np.where(np.isfinite(payback), payback, np.nan))
    extra = pl.DataFrame({k: (pl.Series(k, v, dtype=pl.String) if isinstance(v, list)
                              else pl.Series(k, np.asarray(v, dtype=float)).fill_nan(None))
                          for k, v in cols.items()})
    out = pl.concat([sized, extra, pl.DataFrame({"gpus_per_rack": rack_col})], how="horizontal")
    return out.with_columns(pl.col("serving_gpus_per_replica", "serving_replicas", "serving_batch_size")
                            .cast(pl.Int64)).select(PLAN_COLUMNS)


def plan_status(plan_row: dict) -> str:
    """Plain-language flags for one :func:`cluster_plan` row (never paid back, liquid cooling, no SLO, table range)."""
    notes = []
    if plan_row.get("model") and plan_row.get("serving_gpus_per_replica") is None:
        notes.append("no deployment meets the tokens/s-per-user floor: serving revenue is 0")
    if plan_row.get("model") and plan_row.get("payback_years") is None:
        notes.append("never paid back: yearly revenue does not exceed energy + opex")
    if not plan_row.get("air_cooling_ok", True):
        notes.append(f"racks draw {plan_row['rack_power_kw']:.0f} kW, above the "
                     f"~{AIR_COOLING_LIMIT_KW_PER_RACK:.0f} kW air-cooling limit: liquid cooling required")
    if plan_row.get("efficiency_model") == "seed001" and (plan_row.get("num_gpus") or 0) > SCALING_EFFICIENCY_POINTS[-1][0]:
        notes.append(f"scaling efficiency held at {SCALING_EFFICIENCY_POINTS[-1][1]:.0%} beyond "
                     f"{SCALING_EFFICIENCY_POINTS[-1][0]:,} GPUs (seed 001 Table 5 ends there)")
    return "; ".join(notes)
