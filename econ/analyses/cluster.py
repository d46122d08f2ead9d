"""Cluster and fleet sizing: one accelerator, G GPUs (or what a power or capex budget buys), in one frame.

The physics is ``econ.physics.fleet`` (compute at scale, power, racks, failures, checkpoints, training time) and
``econ.physics.communication`` (the collectives); the money is ``econ.economics.buildout`` (capex, energy,
revenue, payback); this module assembles them:

- :func:`size_cluster`: the validated, vectorized kernel frame (compute, power, racks, energy, capex, failures);
- :func:`cluster_plan`: THE cluster capability (``econ cluster``, ``econ fleet size``, the dashboard's Cluster
  page and its budget tab): G GPUs given, or bought by a power or capex budget (:func:`gpus_for_budget`), with
  training and serving economics of a model; every economics input from one ``econ.assumptions.Economics``;
- :func:`serving_rate`: the one call into the engine for tokens/day;
- :func:`training_run`, :func:`fleet_numbers`, :func:`power_table`, :func:`scale_table`: the fleet calculators.

Sources: seed 000 (MFU at scale), seed 001 (fleet foundations), seed 004 (all-in capex); see the kernels.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.compare import hardware_comparison
from econ.tables.catalog import CatalogCache
from econ import vocabulary as V
from econ.assumptions import AUTO_DECODING, DEFAULT, Decoding, Economics
from econ.economics.buildout import (BuildoutPrices, annual_energy_cost_usd, annual_energy_kwh, buildout_capex,
                                     buildout_prices, cluster_capex_usd, gpus_for_capex, payback_years,
                                     irr_frac, revenue_per_year_usd, training_cost_usd, usd_per_m_output_tokens_sold)
from econ.economics.tco import gpu_hour_cost_components, usd_per_gpu_hour_rented
from econ.errors import InvalidInputError
from econ.physics.communication import (communication_computation_ratio, ring_allreduce_time_s,
                                        tree_allreduce_time_s)
from econ.physics.fleet import (AI_RACK_KW_PER_RACK, AIR_COOLING_LIMIT_KW_PER_RACK, CHECKPOINT_BYTES_PER_PARAM,
                                MTBF_H_PER_GPU, OVERHEAD_BUDGET, POWER_BASES, RESTART_S,
                                SCALING_EFFICIENCY_POINTS, air_cooling_ok, amdahl_speedup, checkpoint_bytes,
                                checkpoint_failure_overhead_frac, checkpoint_write_time_s, cluster_mtbf_h,
                                efficiency_chain, facility_power_w, goodput_frac, it_power_w, littles_law_concurrency,
                                mfu_at_scale, peak_flop_per_s, power_w_per_gpu, prob_at_least_one_failure,
                                rack_cooling, rack_count, rack_power_kw, realized_flop_per_s,
                                replicas_for_concurrency, serving_tokens_per_day, training_flop, training_time_s,
                                young_checkpoint_interval_s)
from econ.physics.precision import PEAK_COLUMN, PRECISIONS
from econ.presets import DEFAULT_INPUT_LEN, DEFAULT_MIN_TOKENS_PER_S_PER_USER, DEFAULT_OUTPUT_LEN
from econ.units import BYTES_PER_GB, SECONDS_PER_DAY, SECONDS_PER_HOUR, W_PER_KW, W_PER_MW
from econ.validate import require_finite, require_in_range, require_integer

__all__ = [
    "DEFAULT_GPUS_PER_RACK", "FLEET_NUMBERS_DEFAULTS", "PLAN_COLUMNS", "RACK_SCALE_DOMAINS", "TRAINING_COLUMNS",
    "cluster_plan", "default_gpus_per_rack", "facility_label", "fleet_numbers", "gpus_for_budget", "plan_status",
    "power_table", "scale_table", "serving_rate", "size_cluster", "training_run",
]

_KWH_PER_MWH = W_PER_MW / W_PER_KW  # 1,000


# --------------------------------------------------------------------------------------------
# Racks
# --------------------------------------------------------------------------------------------

DEFAULT_GPUS_PER_RACK = 32
"""Four 8-GPU HGX/DGX servers per rack (NVIDIA DGX SuperPOD reference layout for DGX H100/B200). [GPU/rack]"""

RACK_SCALE_DOMAINS = (36, 72, 144)
"""Scale-up domains that are one rack (GB200/GB300 NVL36/NVL72, Rubin NVL144): the rack holds the domain."""


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


# --------------------------------------------------------------------------------------------
# The kernel frame
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
    pue : scalar or 1-D array-like, in the PUE range of :data:`econ.vocabulary.FIELDS` ([1, 3]). [1]
    usd_per_kwh : scalar or 1-D array-like, >= 0. [USD/kWh]
    build_usd_per_mw_it : scalar or 1-D array-like, >= 0
        Facility build cost per MW of IT load; 0 if the all-in price covers it. [USD/MW]
    mfu_frac : scalar, 1-D array-like in [0, 1], or None
        None uses the illustrative :func:`econ.physics.fleet.mfu_at_scale` curve of seed 000, which already falls with
        scale for the communication tax; keep ``scaling_efficiency_frac=1`` with it to avoid
        charging that tax twice. Pass a measured MFU with seed 001's scaling efficiency instead. [1]
    scaling_efficiency_frac, goodput_frac, load_factor_frac : scalar or 1-D array-like in [0, 1]
        See :func:`econ.physics.fleet.realized_flop_per_s`, :func:`econ.physics.fleet.goodput_frac`,
        :func:`econ.economics.buildout.annual_energy_kwh`. [1]
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
    Composes the kernels of ``econ.physics.fleet`` and ``econ.economics.buildout``; formulas and sources are in each
    kernel's docstring (seeds 000, 001, 004). Energy uses facility power (IT x PUE) at ``load_factor_frac`` for
    8,760 h.
    """
    inputs = {
        "num_gpus": require_integer("num_gpus", num_gpus, 1, np.inf, "GPUs"),
        "flop_per_s_per_gpu": require_in_range("flop_per_s_per_gpu", flop_per_s_per_gpu, 0.0, np.inf, "FLOP/s"),
        "power_w_per_gpu": require_in_range("power_w_per_gpu", power_w_per_gpu, 0.0, np.inf, "W"),
        "all_in_capex_usd_per_gpu": require_in_range(
            "all_in_capex_usd_per_gpu", all_in_capex_usd_per_gpu, 0.0, np.inf, "USD/GPU"),
        "gpus_per_rack": require_integer("gpus_per_rack", gpus_per_rack, 1, np.inf, "GPUs/rack"),
        "pue": require_in_range("pue", pue, *V.bounds("pue"), "ratio"),
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


# --------------------------------------------------------------------------------------------
# Fleet calculators: power on each basis, efficiency at scale, seed 001's numbers, training runs
# --------------------------------------------------------------------------------------------

def power_table(num_gpus, *, pue, gpus_per_rack, tdp_w=None, all_in_w=None, typed_w=None) -> pl.DataFrame:
    """IT and facility power of G GPUs on each power basis, with rack power against the cooling limits.

    Parameters
    ----------
    num_gpus : int >= 1 [GPU]
    pue : float in the PUE range of :data:`econ.vocabulary.FIELDS` ([1, 3]) [1]
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
        Any input zero, negative, not finite, or PUE outside [1, 5] (named, with its range).

    Notes
    -----
    P_IT = G x P_GPU, P_facility = P_IT x PUE (seed 001: 10,000 x 700 W = 7 MW IT, 9.8 MW at PUE 1.40).
    """
    g = float(require_integer("num_gpus", num_gpus, 1, 1e9, "GPUs"))
    pue = float(require_in_range("pue", pue, *V.bounds("pue"), "ratio"))
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


def scale_table(num_gpus, *, flop_per_s_per_gpu, power_w_per_gpu, pue=None, efficiency_model="seed000",
                mfu_frac=None, scaling_efficiency=None, goodput=None) -> pl.DataFrame:
    """Peak and realized compute and power across cluster sizes (seed 000's ``cluster.py`` table).

    Parameters
    ----------
    num_gpus : int or 1-D array-like of int >= 1 [GPU]
    flop_per_s_per_gpu : float > 0 [FLOP/s]
    power_w_per_gpu : float > 0 [W]
    pue : float in the PUE range of :data:`econ.vocabulary.FIELDS` ([1, 3]), optional
        Default ``Economics().pue``. 1 reproduces seed 000, whose 1.4 kW is "all-in (chip + share of node & cooling)".
        [1]
    efficiency_model, mfu_frac, scaling_efficiency, goodput
        See :func:`econ.physics.fleet.efficiency_chain`.

    Returns
    -------
    pl.DataFrame: the :func:`econ.physics.fleet.efficiency_chain` columns plus ``peak_flop_per_s``,
    ``realized_flop_per_s``, ``it_power_mw``, ``facility_power_mw``.

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
    pue = float(require_in_range("pue", Economics().pue if pue is None else pue, *V.bounds("pue"), "ratio"))
    chain = efficiency_chain(num_gpus, efficiency_model, mfu_frac=mfu_frac, scaling_efficiency=scaling_efficiency,
                             goodput=goodput)
    g = chain["num_gpus"].to_numpy().astype(float)
    peak = peak_flop_per_s(g, peak_gpu)
    it_w = it_power_w(g, w)
    return chain.with_columns(
        peak_flop_per_s=pl.Series(peak), realized_flop_per_s=pl.Series(peak * chain["realized_frac_of_peak"].to_numpy()),
        it_power_mw=pl.Series(it_w / W_PER_MW), facility_power_mw=pl.Series(facility_power_w(it_w, pue) / W_PER_MW))


FLEET_NUMBERS_DEFAULTS = dict(serial_frac=0.10, gradient_bytes=14e9, compute_s=5.0, params=175e9,
                              checkpoint_write_bytes_per_s=100e9, window_h=24.0, mtbf_h_per_gpu=MTBF_H_PER_GPU,
                              restart_s=RESTART_S, arrival_rate_per_s=100.0, request_latency_s=20.0,
                              sequences_per_replica=64.0)
"""Defaults of :func:`fleet_numbers`, each from seed 001 except where named: 10% serial fraction (Amdahl
example), 14 GB = 7B BF16 gradients and ~5 s compute per step (Table 11), 175B params (Table 7), 100 GB/s
checkpoint storage (Table 7), 24 h window and 50,000 h MTBF (Table 6), :data:`econ.physics.fleet.RESTART_S`; the
Little's-law load (100 requests/s, 20 s per request, 64 sequences per replica) is an ILLUSTRATIVE example, not a
source."""


def fleet_numbers(num_gpus, *, scale_up_bytes_per_s=450e9, scale_out_bytes_per_s=50e9,
                  scale_up_latency_s=DEFAULT.scale_up_latency_s, scale_out_latency_s=DEFAULT.scale_out_latency_s,
                  **overrides) -> pl.DataFrame:
    """Seed 001's fleet numbers for one cluster size, each with its formula.

    Parameters
    ----------
    num_gpus : int >= 2 [GPU]
    scale_up_bytes_per_s, scale_out_bytes_per_s : float > 0
        Per-GPU scale-up (NVLink) and scale-out (InfiniBand) bandwidth, one direction; defaults H100
        NVLink 4 (450 GB/s) and IB NDR (50 GB/s) (seed 001 Table 3, ``shared/reference/accelerators.csv``). [B/s]
    scale_up_latency_s, scale_out_latency_s : float > 0
        Per-hop latency alpha of each tier; defaults ``econ.assumptions.Assumptions``' (NVLink ~1 us, IB NDR
        ~5 us, seed 001 Table 4). [s]
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
        ("Tree all-reduce, scale-out", tree_out, "s", "2 M / BW + 2 ceil(log2 N) alpha"),
        ("Tree all-reduce, scale-up", tree_up, "s", "2 M / BW + 2 ceil(log2 N) alpha"),
        ("Communication / computation (ring, scale-out)", communication_computation_ratio(ring_out, p["compute_s"]),
         "x",
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
        Total training compute, e.g. :func:`econ.physics.fleet.training_flop` = 6 x active params x tokens. [FLOP]
    flop_per_s_per_gpu : float > 0
        Dense peak at the training precision. [FLOP/s]
    usd_per_gpu_hour : float >= 0 [USD/(GPU h)]
    efficiency_model, mfu_frac, scaling_efficiency : see :func:`econ.physics.fleet.efficiency_chain`.
    goodput : {"budget", "derived", "none"} or float in (0, 1]
        ``"budget"``: the model's own goodput (seed 001: 77%, whose 3% checkpointing and 10% failure recovery
        are a budget; seed 000: none). ``"derived"``: 1 - bubbles 5% - maintenance 5% - the checkpoint and
        failure waste at Young's interval for THIS cluster
        (:func:`econ.physics.fleet.checkpoint_failure_overhead_frac`).
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


# --------------------------------------------------------------------------------------------
# Serving through the one engine
# --------------------------------------------------------------------------------------------

def serving_rate(catalog, model: str, hardware: str, *, min_tokens_per_s_per_user: float = DEFAULT_MIN_TOKENS_PER_S_PER_USER, precisions=None,
                 input_len: int = DEFAULT_INPUT_LEN, output_len: int = DEFAULT_OUTPUT_LEN, assumptions=None, economics=None,
                 decoding: Decoding = AUTO_DECODING, slo_percentile: float | None = None) -> dict:
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
    decoding : Decoding
        Formats and speculative decoding of the search (``SearchSpace.decoding``; automatic: the engine's defaults).
    slo_percentile : float, optional [%]
        The speed floor judged at this TPOT percentile (:func:`econ.analyses.compare.hardware_comparison`); None =
        the served mean.

    Returns
    -------
    dict with ``meets_slo`` (bool), ``precision`` (str or None), ``gpus_per_replica`` (every accelerator of the
    serving unit, both pools when disaggregated), ``tp``, ``dp``, ``ep``, ``pp`` (of the decode instance),
    ``layout`` (e.g. "ADP8 EP8", "2P(TP8) 1D(ADP16 EP16)"), ``batch_size``, ``tokens_per_s_per_user``,
    ``output_tokens_per_s_per_gpu`` (over the whole unit) and its calibration band
    ``output_tokens_per_s_per_gpu_low`` / ``_high`` (None without one), ``usd_per_m_output_tokens`` (all-in: every
    accelerator of the unit over its output; None when no deployment meets the floor), and ``status`` (why not).

    Raises
    ------
    UnknownIdError, InvalidInputError

    Notes
    -----
    :func:`econ.analyses.compare.hardware_comparison` (the one deployment search: every layout, batch and serving
    mode), its cheapest deployment meeting the floor: the same answer the hardware comparison and head to head give.
    """
    from econ.analyses.optimize import SearchSpace

    assumptions, economics = assumptions or DEFAULT, economics or Economics()
    key = (model, hardware, min_tokens_per_s_per_user, None if precisions is None else tuple(precisions), input_len,
           output_len, assumptions, economics, decoding, slo_percentile)
    try:
        kept = _SERVING_CACHE.get(catalog, key)
    except TypeError:  # an unhashable argument (a caller's own list type): computed, not kept
        kept, key = None, None
    if kept is not None:
        return dict(kept)
    best = hardware_comparison(catalog, model=model, hardware=[hardware], precisions=precisions,
                               min_tokens_per_s_per_user=min_tokens_per_s_per_user, input_len=input_len,
                               output_len=output_len, assumptions=assumptions, economics=economics,
                               space=SearchSpace(decoding=decoding),
                               slo_percentile=slo_percentile).best.row(0, named=True)
    ok = bool(best["meets_slo"])
    out = {"meets_slo": ok, "precision": best["precision"] if ok else None,
           "gpus_per_replica": int(best["total_gpus"]) if ok else None,
           **{k: (int(best[k]) if ok else None) for k in ("tp", "dp", "ep", "pp")},
           "layout": best["layout"] if ok else None,
           "usd_per_m_output_tokens": float(best["usd_per_m_output_tokens_all_in"]) if ok else None,
           "batch_size": int(best["batch_size"]) if ok else None,
           "tokens_per_s_per_user": float(best["tokens_per_s_per_user"]) if ok else None,
           "output_tokens_per_s_per_gpu": float(best["output_tokens_per_s_per_gpu"]) if ok else None,
           **_throughput_band(best, ok),
           "status": best["status"] or ""}
    if key is not None:
        _SERVING_CACHE.put(catalog, key, dict(out))
    return out


SERVING_CACHE_ENTRIES = 32
"""Answers of :func:`serving_rate` kept (a dict of scalars each), newest first: the Cluster page asks the same question
for its size ladder and for its budget tab in one rerun (two :func:`econ.analyses.compare.hardware_comparison`
searches before). Keyed by every argument, the economics included, so a new power price or PUE is a new answer."""

_SERVING_CACHE = CatalogCache(SERVING_CACHE_ENTRIES)
"""(id(catalog), the arguments of :func:`serving_rate`) -> its answer (:class:`econ.tables.catalog.CatalogCache`)."""


def _throughput_band(best: dict, ok: bool) -> dict:
    """``output_tokens_per_s_per_gpu_low`` / ``_high``: the serving unit's output rate at the ends of its
    calibration band. The all-in $/M output tokens is the unit's $/hour over its output rate, so the rate's band is
    the point rate times cost / cost_high (slow end) and cost / cost_low (fast end) (:func:`econ.engine.band`);
    None without a band."""
    cost, lo, hi = (best.get(f"usd_per_m_output_tokens_all_in{e}") for e in ("", "_low", "_high"))
    if not ok or not cost or not lo or not hi:
        return {"output_tokens_per_s_per_gpu_low": None, "output_tokens_per_s_per_gpu_high": None}
    rate = float(best["output_tokens_per_s_per_gpu"])
    return {"output_tokens_per_s_per_gpu_low": rate * float(cost) / float(hi),
            "output_tokens_per_s_per_gpu_high": rate * float(cost) / float(lo)}


# --------------------------------------------------------------------------------------------
# The cluster plan: G GPUs or a budget, one accelerator, a model
# --------------------------------------------------------------------------------------------

PLAN_COLUMNS: tuple[str, ...] = (
    "budget", "hardware", "num_gpus", "gpus_per_rack", "facility", "pue", "build_usd_per_mw_it", "usd_per_kwh",
    "utilization_frac", "it_capex_basis", "power_basis", "per_gpu_power_w", "efficiency_model", "peak_flop_per_s",
    "mfu_frac", "scaling_efficiency_frac", "goodput_frac", "realized_flop_per_s", "realized_frac_of_peak",
    "efficiency_chain", "it_power_mw", "facility_power_mw", "annual_energy_mwh", "annual_energy_cost_usd",
    "rack_count", "rack_power_kw", "air_cooling_ok", "rack_cooling", "capex_accelerators_usd", "capex_facility_usd",
    "capex_total_usd", "cluster_mtbf_h", "failure_window_h", "prob_failure_in_window_frac", "model",
    "checkpoint_bytes", "checkpoint_write_s", "training_tokens", "training_flop", "training_days",
    "usd_per_gpu_hour_training", "training_price_basis", "training_cost_usd", "serving_precision",
    "serving_gpus_per_replica",
    "serving_replicas", "serving_batch_size", "serving_tokens_per_s_per_user", "serving_output_tokens_per_s_per_gpu",
    "serving_tokens_per_day", "price_usd_per_m_output_tokens", "price_usd_per_m_input_tokens", "cached_price_frac",
    "demand_share_frac", "revenue_per_year_usd", "revenue_capacity_sold_per_year_usd", "opex_per_year_usd",
    "payback_years", "payback_years_low", "payback_years_high", "payback_capacity_sold_years", "irr_frac",
    "irr_frac_low", "irr_frac_high", "irr_capacity_sold_frac",
)
"""Columns of :func:`cluster_plan`, in order. ``budget`` is null when the size is given; ``facility``, ``pue``,
``build_usd_per_mw_it``, ``usd_per_kwh``, ``utilization_frac`` and ``it_capex_basis`` show the site and prices the
numbers come from."""


def facility_label(catalog, economics: Economics, facility: str | None = None) -> str:
    """Name of the facility a plan's PUE and build cost come from, for the output.

    Parameters
    ----------
    catalog : Catalog
    economics : Economics
        The economics of the plan.
    facility : str, optional
        Id of the ``data/facilities.csv`` row ``economics`` took its PUE and build cost from (CLI ``--facility``).

    Returns
    -------
    str: the id when named (``"<id>, typed PUE/build"`` when ``economics`` no longer has the row's PUE and build
    cost); ``"default"`` when PUE and build cost are ``econ.assumptions.Economics()``'s (the one set of defaults);
    ``"typed"`` otherwise.

    Raises
    ------
    UnknownIdError
        An unknown facility id.
    """
    site = (economics.pue, economics.build_usd_per_mw_it)
    if facility is not None:
        row = catalog.facility(facility)
        return facility if site == (row["pue"], row["build_usd_per_mw_it"]) else f"{facility}, typed PUE/build"
    d = Economics()
    return "default" if site == (d.pue, d.build_usd_per_mw_it) else "typed"


def gpus_for_budget(catalog, *, hardware: str, power_w=None, power_of: str = "facility", capex_usd=None,
                    power_basis="all-in", economics: Economics | None = None,
                    it_prices: BuildoutPrices | None = None) -> tuple[int, str]:
    """The largest cluster a power or capex budget buys, and the budget in words.

    Parameters
    ----------
    catalog : Catalog
    hardware : str
    power_w : float in (0, 1e12], optional
        Power budget. [W] (1 GW = 1e9)  Give exactly one of ``power_w`` and ``capex_usd``.
    power_of : {"facility", "it"}
        Whether ``power_w`` is the facility's grid draw (IT = power / PUE) or the IT (critical) load.
    capex_usd : float in (0, 1e15], optional
        Capex budget for IT + facility. [USD]
    power_basis : {"tdp", "all-in"} or float
        Per-GPU power (``econ.physics.fleet.power_w_per_gpu``); all-in is what a building must supply.
    economics : Economics, optional
        PUE and facility build cost per MW (default ``Economics()``).
    it_prices : BuildoutPrices, optional
        IT prices; default the accelerator's all-in capex (``econ.economics.buildout.buildout_prices``).

    Returns
    -------
    (int, str): GPUs [GPU] (0 when the budget does not buy one) and e.g. ``"100 MW facility"``.

    Raises
    ------
    InvalidInputError, UnknownIdError
        Neither or both budgets; a budget or ``power_of`` out of range (named, with its range).

    Notes
    -----
    Power: G = floor(P_IT / P_GPU), P_IT = P / PUE for a facility budget (seed 001: P_facility = P_IT x PUE).
    Capex: ``econ.economics.buildout.gpus_for_capex`` (IT + facility per MW of IT load).
    """
    e = economics or Economics()
    if (power_w is None) == (capex_usd is None):
        raise InvalidInputError("give exactly one budget: power (power_w) or capex (capex_usd)")
    if power_of not in ("facility", "it"):
        raise InvalidInputError(f"power_of={power_of!r} is not one of ['facility', 'it']")
    w = power_w_per_gpu(catalog.accelerator(hardware), power_basis)
    pue = float(require_in_range("pue", e.pue, *V.bounds("pue"), "ratio"))
    if power_w is not None:
        budget_w = float(require_in_range("power_budget_w", power_w, 0.0, 1e12, "W", lo_inclusive=False))
        it_budget = budget_w / pue if power_of == "facility" else budget_w
        return int(np.floor(it_budget / w * (1 + 1e-12))), f"{budget_w / W_PER_MW:,.6g} MW {power_of}"
    prices = it_prices or buildout_prices(catalog, hardware, basis="all-in")
    g = gpus_for_capex(capex_usd, prices, it_power_w_per_gpu=w, build_usd_per_mw_it=e.build_usd_per_mw_it)
    return g, f"${float(capex_usd):,.0f} capex"


def cluster_plan(catalog, *, hardware: str, num_gpus=None, power_w=None, power_of: str = "facility", capex_usd=None,
                 model: str | None = None, gpus_per_rack: int | None = None, training_precision: str = "bf16",
                 mfu_frac: float | None = None, overhead_fracs=None, failure_window_h: float = 24.0,
                 mtbf_h_per_gpu: float = MTBF_H_PER_GPU, checkpoint_write_gb_per_s: float = 100.0,
                 training_tokens: float = 15e12,
                 min_tokens_per_s_per_user: float = DEFAULT_MIN_TOKENS_PER_S_PER_USER, precisions=None,
                 price_usd_per_m_output_tokens: float = 0.90, price_usd_per_m_input_tokens: float | None = None,
                 cached_price_frac: float | None = None, demand_share_frac: float = 1.0,
                 input_len: int = DEFAULT_INPUT_LEN, output_len: int = DEFAULT_OUTPUT_LEN, decoding: Decoding = AUTO_DECODING,
                 slo_percentile: float | None = None, assumptions=None, economics: Economics | None = None, facility: str | None = None,
                 power_basis="all-in", efficiency_model: str = "seed001", scaling_efficiency: float | None = None,
                 it_prices: BuildoutPrices | None = None) -> pl.DataFrame:
    """Size a cluster of one accelerator and what it does for ``model``: train it, serve it, pay back.

    The one cluster and fleet capability: ``econ cluster``, ``econ fleet size``, the dashboard's Cluster page and its
    budget tab all call it, so the same inputs give the same GPUs, capex, MW, tokens/day and payback everywhere.

    Parameters
    ----------
    catalog : Catalog
    hardware : str
        Accelerator id; needs ``all_in_capex_usd`` (the cluster is bought) unless ``it_prices`` are given.
    num_gpus : int or 1-D array-like of int >= 1, optional
        Cluster sizes, one output row each. [accelerators]  Give exactly one of ``num_gpus``, ``power_w`` and
        ``capex_usd``.
    power_w, power_of, capex_usd : optional
        A power budget [W] of the facility or the IT load, or a capex budget [USD]: the cluster is the largest
        it buys (:func:`gpus_for_budget`), one row.
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
    decoding : Decoding
        Formats and speculative decoding of the serving search (:func:`serving_rate`).
    slo_percentile : float, optional [%]
        The serving speed floor judged at this TPOT percentile (:func:`serving_rate`); None = the served mean.
    price_usd_per_m_output_tokens : float >= 0 [USD/M tokens]
    price_usd_per_m_input_tokens : float >= 0, optional [USD/M tokens]
        Price of the requests' uncached input tokens (default: the vocabulary's, the same list price as the output's).
    cached_price_frac : float in [0, 1], optional
        A prefix-cache hit's price as a share of the input price (``economics.cache_hit_frac`` of the input tokens
        are hits); default the vocabulary's (the median of the shipped quotes that list one).
    demand_share_frac : float in (0, 1]
        Share of the tokens the site can serve at its utilization that are sold (1: the capacity-sold case). [-]
    input_len, output_len : int [tokens]
    assumptions : Assumptions, optional
    economics : Economics, optional
        Every economics input (PUE, $/kWh, build $/MW, cost of capital, lives, opex share, utilization); default
        ``Economics()``, the one set of defaults of every command and page. A build-out on another site is a named
        ``data/facilities.csv`` row (``econ.analyses.sweep.make_economics(catalog, facility=...)``).
    facility : str, optional
        The facilities.csv id ``economics`` came from, shown in the ``facility`` column (:func:`facility_label`).
    power_basis : {"tdp", "all-in"} or float
        Per-GPU power for IT MW, facility MW, rack kW, energy and the facility capex
        (``econ.physics.fleet.power_w_per_gpu``). Default all-in: what a building must supply.
    efficiency_model : {"seed000", "seed001"}
        See ``econ.physics.fleet.efficiency_chain``. Default seed 001's chain.
    scaling_efficiency : float in (0, 1], optional
        Override seed 001's scaling efficiency (seed 000: folded into its curve).
    it_prices : BuildoutPrices, optional
        IT prices (``econ.economics.buildout.buildout_prices``): default the accelerator's ``all_in_capex_usd``
        per GPU (the capex of ``econ cost``'s owned $/GPU-hour); an itemized build-out prices board, host share,
        fat-tree network and storage instead.

    Returns
    -------
    pl.DataFrame (:data:`PLAN_COLUMNS`), one row per cluster size. ``revenue_per_year_usd``, ``payback_years`` and
    ``irr_frac`` are the demand case (``demand_share_frac`` of the capacity sold), the ``*_capacity_sold*`` columns
    the case where every token the site can serve is sold; a payback is null when the yearly margin (revenue -
    energy - opex) is not positive (never paid back), an IRR when the margin over the accelerators' life does not
    recover the capex.

    Raises
    ------
    UnknownIdError, InvalidInputError
        Unknown ids; an accelerator without ``all_in_capex_usd`` (and no ``it_prices``) or without a dense peak at
        ``training_precision``; not exactly one of ``num_gpus`` / ``power_w`` / ``capex_usd``; a budget that does
        not buy one GPU; any input out of range (named, with its range).

    Notes
    -----
    - Capex, power, racks, energy, MTBF and failure odds: :func:`size_cluster` with the IT capex per GPU of the
      build-out (``econ.economics.buildout.buildout_capex``) and the chosen power basis (seeds 000, 001, 004).
      Energy is billed at a load factor equal to ``economics.utilization_frac`` (idle draw neglected, as in
      ``econ.economics.tco``).
    - Realized FLOP/s: peak x the chosen efficiency chain.
    - Checkpoint: 14 B per parameter (seed 001 Table 7) over the model's total parameters.
    - Training: 6 x active matmul parameters x tokens (seed 001; Kaplan et al. 2020) at the realized FLOP/s;
      its cost prices every GPU for the whole wall clock at the owned $/GPU-hour with utilization 1 (a
      dedicated cluster: idle time is already in goodput), or the rental rate.
    - Serving: whole replicas of :func:`serving_rate`'s deployment at ``economics.utilization_frac``: the output
      tokens the site can serve. Revenue = those tokens x the demand share x the price per output token of a request
      (``econ.economics.buildout.usd_per_m_output_tokens_sold``: the output price plus input_len / output_len input
      tokens at the input price, cache hits at the cached price). Yearly opex = energy + ``opex_frac_of_capex_per_year``
      x IT capex, the same whatever the demand (energy is billed at the utilization; idle draw neglected);
      payback = capex / (revenue - opex), undiscounted (``econ.economics.buildout.payback_years``); IRR of the capex
      against revenue - opex over ``economics.accelerator_life_years``, no residual value
      (``econ.economics.buildout.irr_frac``).
    """
    assumptions = assumptions or DEFAULT
    e = economics or Economics()
    hw = catalog.accelerator(hardware)
    site = facility_label(catalog, e, facility)
    if training_precision not in PEAK_COLUMN:
        raise InvalidInputError(f"training_precision={training_precision!r} is not one of {list(PRECISIONS)}")
    peak = hw[PEAK_COLUMN[training_precision]]
    if peak is None:
        raise InvalidInputError(f"hardware={hardware} has no dense {training_precision} peak in accelerators.csv "
                                f"(training_precision={training_precision!r}; try bf16)")
    if it_prices is None and hw["all_in_capex_usd"] is None:
        raise InvalidInputError(f"hardware={hardware} has no all_in_capex_usd in accelerators.csv (it is not sold); "
                                "a cluster plan needs a purchase price: add one on the Assumptions page or "
                                "with --data-dir")
    prices = it_prices or buildout_prices(catalog, hardware, basis="all-in")
    budgets = sum(v is not None for v in (num_gpus, power_w, capex_usd))
    if budgets != 1:
        raise InvalidInputError("give exactly one of num_gpus, a power budget (power_w) or a capex budget (capex_usd)")
    budget = None
    if num_gpus is None:
        g, budget = gpus_for_budget(catalog, hardware=hardware, power_w=power_w, power_of=power_of,
                                    capex_usd=capex_usd, power_basis=power_basis, economics=e, it_prices=prices)
        if g < 1:
            raise InvalidInputError(f"the budget ({budget}) does not buy one {hardware} "
                                    f"({power_w_per_gpu(hw, power_basis):,.0f} W per GPU, PUE {e.pue:g})")
        num_gpus = g
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
    p_in = float(V.check("price_usd_per_m_input_tokens", V.default("price_usd_per_m_input_tokens")
                         if price_usd_per_m_input_tokens is None else price_usd_per_m_input_tokens))
    c_frac = float(V.check("cached_price_frac", V.default("cached_price_frac") if cached_price_frac is None
                           else cached_price_frac))
    share = float(V.check("demand_share_frac", demand_share_frac))
    chain = efficiency_chain(gpus, efficiency_model, mfu_frac=mfu_frac, scaling_efficiency=scaling_efficiency,
                             goodput=goodput)
    it_per_gpu = buildout_capex(gpus, prices, it_power_w_per_gpu=watts, build_usd_per_mw_it=e.build_usd_per_mw_it)[
        "it_capex_per_gpu_usd"].to_numpy()
    sized = size_cluster(gpus, flop_per_s_per_gpu=peak, power_w_per_gpu=watts, all_in_capex_usd_per_gpu=it_per_gpu,
                         gpus_per_rack=rack, pue=e.pue, usd_per_kwh=e.usd_per_kwh,
                         build_usd_per_mw_it=e.build_usd_per_mw_it, mfu_frac=chain["mfu_frac"].to_numpy(),
                         scaling_efficiency_frac=chain["scaling_efficiency_frac"].to_numpy(),
                         goodput_frac=chain["goodput_frac"].to_numpy(), load_factor_frac=e.utilization_frac,
                         mtbf_h_per_gpu=mtbf_h_per_gpu, failure_window_h=failure_window_h)
    n = sized.height
    g = sized["num_gpus"].to_numpy().astype(float)
    cols: dict[str, object] = {
        "budget": [budget] * n, "hardware": [hardware] * n, "facility": [site] * n, "pue": np.full(n, e.pue),
        "build_usd_per_mw_it": np.full(n, e.build_usd_per_mw_it), "usd_per_kwh": np.full(n, e.usd_per_kwh),
        "utilization_frac": np.full(n, e.utilization_frac), "it_capex_basis": [prices.basis] * n,
        "power_basis": [basis_name] * n, "efficiency_model": [efficiency_model] * n,
        "efficiency_chain": chain["chain"].to_list(),
        "rack_cooling": np.atleast_1d(rack_cooling(sized["rack_power_kw"].to_numpy())).tolist(),
        "per_gpu_power_w": np.full(n, watts)}
    rack_col = np.broadcast_to(np.asarray(rack, dtype=float), (n,)).astype(np.int64)

    # training: a dedicated cluster -> utilization 1 for the GPU-hour price
    parts = gpu_hour_cost_components(it_per_gpu, watts, e.build_usd_per_mw_it, e.pue, e.usd_per_kwh,
                                     e.cost_of_capital_frac, e.accelerator_life_years, e.facility_life_years,
                                     e.opex_frac_of_capex_per_year, 1.0)
    owned_hour = np.broadcast_to(sum(parts.values()), (n,))
    tier = V.tier(e.basis)
    if tier is V.Tier.CUSTOM:
        rate = e.usd_per_gpu_hour
    else:  # the tier's own rate (hyperscaler and neocloud TCO, rentals), never another tier's
        rate = next((hw.get(c) for c in V.TIER_SPECS[tier].rate_columns if hw.get(c) is not None), None)
    if tier is V.Tier.OWNED or rate is None:
        usd_hour = owned_hour
        training_basis = (V.Tier.OWNED.value if tier is V.Tier.OWNED else
                          f"owned (no {V.TIER_SPECS[tier].cli_name} rate for {hardware} in accelerators.csv)")
    else:
        usd_hour = np.full(n, float(usd_per_gpu_hour_rented(rate, 1.0)))
        training_basis = tier.value
    opex_year = sized["annual_energy_cost_usd"].to_numpy() + e.opex_frac_of_capex_per_year * sized[
        "capex_accelerators_usd"].to_numpy()
    cols.update(usd_per_gpu_hour_training=usd_hour, training_price_basis=[training_basis] * n,
                opex_per_year_usd=opex_year,
                price_usd_per_m_output_tokens=np.full(n, float(price_usd_per_m_output_tokens)),
                price_usd_per_m_input_tokens=np.full(n, p_in), cached_price_frac=np.full(n, c_frac),
                demand_share_frac=np.full(n, share))
    null = np.full(n, np.nan)
    if model is None:
        cols.update({c: null for c in ("checkpoint_bytes", "checkpoint_write_s", "training_tokens", "training_flop",
                                       "training_days", "training_cost_usd", "serving_gpus_per_replica",
                                       "serving_replicas", "serving_batch_size", "serving_tokens_per_s_per_user",
                                       "serving_output_tokens_per_s_per_gpu", "serving_tokens_per_day",
                                       "revenue_per_year_usd", "revenue_capacity_sold_per_year_usd", "payback_years",
                                       "payback_years_low", "payback_years_high", "payback_capacity_sold_years",
                                       "irr_frac", "irr_frac_low", "irr_frac_high", "irr_capacity_sold_frac")})
        cols.update(model=[None] * n, serving_precision=[None] * n)
    else:
        m = catalog.model(model)
        ckpt = checkpoint_bytes(m["total_params"])
        flop = training_flop(m["active_matmul_params"], training_tokens)
        t_s = training_time_s(flop, sized["realized_flop_per_s"].to_numpy())
        rate = serving_rate(catalog, model, hardware, min_tokens_per_s_per_user=min_tokens_per_s_per_user,
                            precisions=precisions, input_len=input_len, output_len=output_len,
                            assumptions=assumptions, economics=e, decoding=decoding, slo_percentile=slo_percentile)
        ok = rate["meets_slo"]
        per_rep = float(rate["gpus_per_replica"]) if ok else np.nan
        replicas = np.floor(g / per_rep) if ok else np.zeros(n)
        tps_gpu = rate["output_tokens_per_s_per_gpu"] if ok else 0.0
        tokens_day = serving_tokens_per_day(replicas * (per_rep if ok else 0.0), tps_gpu, e.utilization_frac)
        per_m = usd_per_m_output_tokens_sold(float(price_usd_per_m_output_tokens), p_in, input_len / output_len,
                                             e.cache_hit_frac, c_frac)
        capacity = revenue_per_year_usd(tokens_day, per_m)
        revenue = capacity * share
        capex_total = sized["capex_total_usd"].to_numpy()
        payback = payback_years(capex_total, revenue, opex_year)
        payback_cap = payback_years(capex_total, capacity, opex_year)
        life = e.accelerator_life_years
        # the calibration band: revenue is linear in the output rate (tokens per day), so the band's fast end
        # (more tokens sold) gives the short payback and the high IRR
        fast, slow = rate.get("output_tokens_per_s_per_gpu_high"), rate.get("output_tokens_per_s_per_gpu_low")
        if ok and fast and slow and tps_gpu:
            rev_fast, rev_slow = revenue * (fast / tps_gpu), revenue * (slow / tps_gpu)
            pb_lo, pb_hi = payback_years(capex_total, rev_fast, opex_year), payback_years(capex_total, rev_slow,
                                                                                         opex_year)
            irr_lo, irr_hi = irr_frac(capex_total, rev_slow - opex_year, life), irr_frac(capex_total,
                                                                                         rev_fast - opex_year, life)
        else:
            pb_lo = pb_hi = irr_lo = irr_hi = np.full(n, np.nan)
        pb_lo, pb_hi = (np.broadcast_to(np.asarray(x, dtype=float), (n,)) for x in (pb_lo, pb_hi))
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
            revenue_capacity_sold_per_year_usd=capacity,
            payback_years=np.where(np.isfinite(payback), payback, np.nan),
            payback_years_low=np.where(np.isfinite(pb_lo), pb_lo, np.nan),  # never paid back: no value
            payback_years_high=np.where(np.isfinite(pb_hi), pb_hi, np.nan),
            payback_capacity_sold_years=np.where(np.isfinite(payback_cap), payback_cap, np.nan),
            irr_frac=irr_frac(capex_total, revenue - opex_year, life),
            irr_frac_low=np.broadcast_to(np.asarray(irr_lo, dtype=float), (n,)),
            irr_frac_high=np.broadcast_to(np.asarray(irr_hi, dtype=float), (n,)),
            irr_capacity_sold_frac=irr_frac(capex_total, capacity - opex_year, life))
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
    if str(plan_row.get("training_price_basis") or "").startswith("owned ("):
        notes.append("training priced on the owned chain: " + plan_row["training_price_basis"][len("owned ("):-1])
    last_gpus = SCALING_EFFICIENCY_POINTS[-1][0]
    if plan_row.get("efficiency_model") == "seed001" and (plan_row.get("num_gpus") or 0) > last_gpus:
        notes.append(f"scaling efficiency held at {SCALING_EFFICIENCY_POINTS[-1][1]:.0%} beyond "
                     f"{SCALING_EFFICIENCY_POINTS[-1][0]:,} GPUs (seed 001 Table 5 ends there)")
    return "; ".join(notes)
