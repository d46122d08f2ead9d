"""The one engine: a frame of deployments -> decode, prefill, capacity, serving and cost, vectorized.

Like pvlib's ModelChain, this module is the single orchestrator of the pure kernels: every front end
(``econ cost``, ``quotes``, ``cluster``, hardware comparison, ``optimize``, ``frontier``, exports and
every dashboard page) reaches the physics through :func:`evaluate` (a Polars frame in, a frame out) or,
for searches that build their candidates as arrays, through :func:`run` on the typed bundles of
:mod:`econ.physics.inputs`. No other module chains the kernels.

Pipeline for each block of rows (``block_rows`` at a time, so memory stays flat for 1e7 rows):

1. ids -> integer codes (model, hardware, precision, KV precision, basis) and the catalog's facts
   gathered by code (:func:`catalog_arrays`, computed once per catalog);
2. the layout resolved where it is not given (GPU count from the weights, tensor parallelism as wide as
   the scale-up domain allows) and checked against the model and the system
   (:func:`econ.physics.deployment.layout_problems`);
3. physics (:func:`run_physics`): KV bytes, capacity wall, decode step (:func:`econ.physics.performance.decode_step`),
   prefill throughput and TTFT (:func:`econ.physics.performance.prefill_step`), aggregated or disaggregated
   serving (prefill stalls, KV transfer, xPyD pool sizing);
4. cost (:func:`run_costs`): $/GPU-hour (owned TCO chain or rental, per *utilized* hour) and $/M input,
   output, blended and all-in output tokens;
5. status: feasible or the reason, and the binding wall.

Polars is used only at the edges: to read the input columns and to build the result frame.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields

import numpy as np
import polars as pl

from econ.physics import precision as prec
from econ.physics.architecture import kv_bytes_per_sequence
from econ.assumptions import (DEFAULT, DEFAULT_DEPLOYMENT, PROFILE_PARAMETERS, Assumptions, DeploymentAssumptions,
                              Economics)
from econ.tables.catalog import GENERATIONS, Catalog, check_ids
from econ.physics.communication import indicator, kv_transfer_time_s
from econ.physics.deployment import layout_labels, layout_problem_message, layout_problems, resolve_parallelism, size_pools
from econ.errors import InvalidInputError, UnsupportedPrecisionError
from econ.physics.inputs import SPEC_METHODS, Efficiency, Formats, HardwareFacts, Layout, ModelFacts, Speculation
from econ.physics.memory import kv_replication, max_batch_size, weight_bytes_resident
from econ.physics.performance import (WALLS, Collectives, DecodeStep, PrefillStep, attention_peak_flop_per_s, collectives,
                              crossover_batch, decode_step, prefill_step)
from econ.economics.pricing import usd_per_m_blended_tokens, usd_per_m_tokens
from econ.physics.serving import waiting_time_quantile_s
from econ.economics.tco import gpu_hour_cost_components, usd_per_gpu_hour_rented
from econ.validate import require_in_range, require_integer

MAX_BATCH = 1 << 20
MAX_CONTEXT = 1 << 24
MAX_PARALLEL = 1 << 16
"""Validation ranges of batch [sequences], context [tokens] and tp/dp/ep/pp/instances (not physical claims)."""

MODES: tuple[str, ...] = ("aggregated", "disaggregated")
BASES: tuple[str, ...] = ("owned", "hyperscaler", "neocloud", "rental-3yr", "on-demand", "rental", "custom")
"""Cost bases of $/GPU-hour (``Economics.basis``), index = basis code (:data:`BASIS_SOURCES`)."""
BASIS_ALIASES: dict[str, str] = {"owned-custom": "owned"}
BASIS_SOURCES: dict[str, str] = {
    "owned": "owned-custom: the capex + facility + power x PUE + opex chain of econ.economics.tco with this scenario's "
             "economics (accelerators.csv all_in_capex_usd, all_in_power_w)",
    "hyperscaler": "SemiAnalysis InferenceX cost of owning as a hyperscaler, $/GPU-hour at 100% use "
                   "(accelerators.csv tco_hyperscaler_usd_per_hour)",
    "neocloud": "SemiAnalysis InferenceX cost of owning as a neocloud giant (tco_neocloud_usd_per_hour)",
    "rental-3yr": "SemiAnalysis 3-year rental price (rental_3yr_usd_per_hour)",
    "on-demand": "on-demand rental at a GPU cloud where listed, else at a hyperscaler "
                 "(rental_on_demand_neocloud_usd_per_hour, rental_on_demand_hyperscaler_usd_per_hour)",
    "rental": "the catalog's representative rental rate (rental_usd_per_hour; its tier in rental_tier)",
    "custom": "a $/GPU-hour typed by the user (Economics.usd_per_gpu_hour)",
}
"""Where each basis's $/GPU-hour comes from. Every basis but owned is a rate per hour of the fleet's
existence; divided by utilization it is per *utilized* GPU-hour, like the owned chain."""

REASONS: tuple[str, ...] = (
    "", "batch exceeds KV-cache capacity", "weights do not fit in HBM",
    "no capex in catalog (not sold; use a rental or TCO tier)", "no rate for this cost tier in catalog",
    "precision not supported by hardware",
    "no valid layout (domain, heads, layers or experts)", "prefill instance does not fit in HBM",
    "KV transfer exceeds the prefill pool's link bandwidth", "context exceeds the model's maximum",
    "weight format wider than the matmul precision", "speculative decoding not available as set",
)
"""``infeasible_reason`` values; the index is the reason code."""

ECONOMIC_COLUMNS = ("usd_per_kwh", "pue", "build_usd_per_mw_it", "cost_of_capital_frac",
                    "accelerator_life_years", "facility_life_years", "opex_frac_of_capex_per_year",
                    "utilization_frac", "input_output_mix", "cache_hit_frac", "cached_input_cost_frac")

RESULT_COLUMNS: tuple[str, ...] = (
    "model", "hardware", "num_gpus", "tp", "pp", "precision", "kv_precision", "batch_size",
    "context_tokens", "input_len", "output_len", "max_batch_size", "feasible", "binding_wall",
    "infeasible_reason", "weight_bytes", "kv_bytes_per_sequence", "hbm_used_frac", "t_mem_s", "t_flop_s",
    "t_comm_s", "tpot_s", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "ttft_s",
    "input_tokens_per_s_per_gpu", "arithmetic_intensity_flop_per_byte", "basis", "usd_per_gpu_hour",
    "usd_per_gpu_hour_capex", "usd_per_gpu_hour_facility", "usd_per_gpu_hour_opex", "usd_per_gpu_hour_power",
    "usd_per_m_input_tokens", "usd_per_m_output_tokens", "usd_per_m_blended_tokens", "input_output_mix",
    "cache_hit_frac",
    "ep", "dp", "expert_tp", "scale_up_domain_size", "disaggregated", "layout", "num_microbatches",
    "bubble_frac", "weight_bytes_per_gpu", "kv_bytes_per_gpu", "t_comm_tp_s", "t_comm_ep_s", "t_comm_pp_s",
    "expert_imbalance_factor", "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp", "prefill_num_gpus",
    "prefill_instances", "decode_instances", "total_gpus", "kv_transfer_bytes", "kv_transfer_s",
    "kv_link_frac", "prefill_stall_s", "served_tpot_s", "served_ttft_s", "served_tokens_per_s_per_user",
    "served_output_tokens_per_s_per_gpu", "served_requests_per_s", "pool_utilization_frac",
    "usd_per_m_output_tokens_all_in",
    "weight_format", "expert_weight_format", "spec_method", "spec_draft_tokens", "spec_acceptance",
    "accepted_tokens_per_step", "step_s", "redundant_experts", "ttft_percentile_s", "tpot_percentile_s",
    "prefill_utilization_frac", "latency_percentile",
    "efficiency_profile", "tokens_per_s_per_user_low", "tokens_per_s_per_user_high", "output_tokens_per_s_per_gpu_low",
    "output_tokens_per_s_per_gpu_high", "usd_per_m_input_tokens_low", "usd_per_m_input_tokens_high",
    "usd_per_m_output_tokens_low", "usd_per_m_output_tokens_high", "usd_per_m_blended_tokens_low",
    "usd_per_m_blended_tokens_high",
)
"""Columns of :func:`evaluate` (plus ``sweet_spot_batch`` when asked). Decode-phase figures are per
accelerator of the decode instance; prefill-phase figures per accelerator of the prefill instance;
``served_*`` figures cover the whole serving unit (both pools), see :mod:`econ.physics.deployment`.
``efficiency_profile`` names the calibration profile whose efficiencies the row used ("assumed" = the
scalar assumptions); the ``*_low`` / ``*_high`` columns are the row's band: the figure times the 10th and
90th percentile of measured / predicted on held-out cases of that profile (costs inverted), null where the
row has no calibrated profile."""

_BAND_OF_RATE = ("tokens_per_s_per_user", "output_tokens_per_s_per_gpu")
_BAND_OF_COST = ("usd_per_m_input_tokens", "usd_per_m_output_tokens", "usd_per_m_blended_tokens")
_BAND_COLUMNS = frozenset(f"{c}_{e}" for c in _BAND_OF_RATE + _BAND_OF_COST for e in ("low", "high"))

_INT_COLUMNS = {"spec_draft_tokens", "redundant_experts",
                "num_gpus", "tp", "pp", "batch_size", "context_tokens", "input_len", "output_len", "max_batch_size",
                "ep", "dp", "expert_tp", "scale_up_domain_size", "prefill_tp", "prefill_dp", "prefill_ep",
                "prefill_pp", "prefill_num_gpus", "prefill_instances", "decode_instances", "total_gpus"}
_TEXT_COLUMNS = {"weight_format", "expert_weight_format", "spec_method", "efficiency_profile",
                 "model", "hardware", "precision", "kv_precision", "binding_wall", "infeasible_reason", "basis",
                 "layout"}
_UNGATED = {"spec_acceptance", "latency_percentile",
            "weight_bytes", "kv_bytes_per_sequence", "input_output_mix", "cache_hit_frac", "expert_imbalance_factor",
            "kv_transfer_bytes", "feasible", "disaggregated"} | _INT_COLUMNS | _TEXT_COLUMNS
_LAYOUT_GATED = {"max_batch_size", "hbm_used_frac", "weight_bytes_per_gpu", "kv_bytes_per_gpu"}
"""Capacity columns that stay visible on infeasible rows, except rows whose layout is invalid."""


# ----------------------------------------------------------------------------------------------------
# Typed bundles of the engine (per-row arrays)
# ----------------------------------------------------------------------------------------------------

@dataclass(slots=True)
class Workload:
    """The requests of each row.

    Attributes
    ----------
    batch_size : [sequences per (decode) instance, all attention-DP groups]
    input_len, output_len : [tokens] prompt and answer lengths
    decode_context_tokens : [tokens] mean context a decode step attends (input + output / 2 by default)
    capacity_context_tokens : [tokens] context each sequence's KV cache is sized for (input + output)
    prefill_tokens : [tokens] prompt tokens a request prefills after prefix-cache hits
    arrival_rate_per_s : [requests/s], NaN = none (the unit runs at capacity)
    """

    batch_size: np.ndarray
    input_len: np.ndarray
    output_len: np.ndarray
    decode_context_tokens: np.ndarray
    capacity_context_tokens: np.ndarray
    prefill_tokens: np.ndarray
    arrival_rate_per_s: np.ndarray


@dataclass(slots=True)
class Serving:
    """How each row serves its traffic.

    Attributes
    ----------
    disaggregated : 0/1 (float) prefill on its own pool of instances (xPyD)
    prefill : Layout of one prefill instance (equal to the decode layout when aggregated)
    prefill_instances, decode_instances : [-] x and y of an xPyD unit, NaN = size them (:func:`size_pools`)
    """

    disaggregated: np.ndarray
    prefill: Layout
    prefill_instances: np.ndarray
    decode_instances: np.ndarray


@dataclass(slots=True)
class EngineInputs:
    """Everything the physics needs for a block of rows (:func:`run_physics`)."""

    model: ModelFacts
    hardware: HardwareFacts
    layout: Layout
    formats: Formats
    eff: Efficiency
    workload: Workload
    serving: Serving
    comm: Collectives | None = None
    """:func:`econ.physics.performance.collectives` of ``layout`` when already known (None: computed by run_physics)."""
    spec: Speculation | None = None
    """Speculative decoding (None = off)."""


@dataclass(slots=True)
class CostInputs:
    """Economics of each row (:class:`econ.assumptions.Economics` fields, per row), and the cost basis.

    Attributes
    ----------
    basis_code : int array, index into :data:`BASES` (0 = the owned chain)
    usd_per_gpu_hour : float array, the custom rate (basis "custom"), NaN otherwise [USD/h]
    other fields : see :class:`econ.assumptions.Economics` (units there)
    """

    basis_code: np.ndarray
    usd_per_gpu_hour: np.ndarray
    usd_per_kwh: np.ndarray
    pue: np.ndarray
    build_usd_per_mw_it: np.ndarray
    cost_of_capital_frac: np.ndarray
    accelerator_life_years: np.ndarray
    facility_life_years: np.ndarray
    opex_frac_of_capex_per_year: np.ndarray
    utilization_frac: np.ndarray
    input_output_mix: np.ndarray
    cache_hit_frac: np.ndarray
    cached_input_cost_frac: np.ndarray

    @classmethod
    def from_economics(cls, economics: Economics, n: int) -> "CostInputs":
        """One economics for ``n`` rows."""
        return cls(basis_code=np.full(n, BASES.index(economics.basis)),
                   usd_per_gpu_hour=np.full(n, np.nan if economics.usd_per_gpu_hour is None
                                            else float(economics.usd_per_gpu_hour)),
                   **{k: np.full(n, float(getattr(economics, k))) for k in ECONOMIC_COLUMNS})

    @property
    def owned(self) -> np.ndarray:
        """True where $/GPU-hour comes from the owned capex chain."""
        return self.basis_code == 0


@dataclass(slots=True)
class Physics:
    """What :func:`run_physics` returns for a block of rows.

    Attributes
    ----------
    decode : DecodeStep of the decode instance at ``batch_size``
    prefill : PrefillStep of the prefill instance, prompts batched up to the prefill chunk (throughput)
    ttft_s : [s] the request's own prompt prefilled alone (one per attention group; no queueing)
    prefill_layout : Layout the prompts are prefilled on (decode layout when aggregated)
    weight_bytes : [B] one replica's weights; weight_bytes_per_gpu : [B] on each accelerator
    kv_bytes_per_sequence : [B] at the capacity context; kv_replication : [-]
    max_batch_size, prefill_max_batch_size : [sequences] capacity walls of the two instances
    kv_bytes_per_gpu : [B] KV cache on each accelerator at min(batch, max); hbm_used_frac : [-]
    prefill_stall_s : [s] prompts interleaved per decode step (aggregated)
    served_tpot_s, served_ttft_s, served_tokens_per_s_per_user : as served (stalls, KV transfer included)
    kv_transfer_bytes, kv_transfer_s, kv_link_frac : one prompt's KV cache between the pools
    prefill_instances, decode_instances, total_gpus : the serving unit
    served_requests_per_s, pool_utilization_frac, served_output_tokens_per_s_per_gpu : the unit's output
    ttft_percentile_s : [s] TTFT at ``Assumptions.latency_percentile`` under Poisson arrivals at the served
        rate: the lone prompt's prefill + KV transfer + the prefill queue's wait (:mod:`econ.physics.serving`)
    tpot_percentile_s : [s] served TPOT x ``eff.tpot_tail_factor``
    prefill_utilization_frac : [-] busy share of the prefill servers (their queue's rho)
    """

    decode: DecodeStep
    prefill: PrefillStep
    ttft_s: np.ndarray
    prefill_layout: Layout
    weight_bytes: np.ndarray
    weight_bytes_per_gpu: np.ndarray
    kv_bytes_per_sequence: np.ndarray
    kv_replication: np.ndarray
    max_batch_size: np.ndarray
    prefill_max_batch_size: np.ndarray
    kv_bytes_per_gpu: np.ndarray
    hbm_used_frac: np.ndarray
    prefill_stall_s: np.ndarray
    served_tpot_s: np.ndarray
    served_ttft_s: np.ndarray
    served_tokens_per_s_per_user: np.ndarray
    kv_transfer_bytes: np.ndarray
    kv_transfer_s: np.ndarray
    kv_link_frac: np.ndarray
    prefill_instances: np.ndarray
    decode_instances: np.ndarray
    total_gpus: np.ndarray
    served_requests_per_s: np.ndarray
    pool_utilization_frac: np.ndarray
    served_output_tokens_per_s_per_gpu: np.ndarray
    ttft_percentile_s: np.ndarray
    tpot_percentile_s: np.ndarray
    prefill_utilization_frac: np.ndarray


@dataclass(slots=True)
class Costs:
    """What :func:`run_costs` returns: $/GPU-hour and its owned split [USD per utilized accelerator-hour],
    and $ per million tokens [USD/M tokens]."""

    usd_per_gpu_hour: np.ndarray
    usd_per_gpu_hour_capex: np.ndarray
    usd_per_gpu_hour_facility: np.ndarray
    usd_per_gpu_hour_opex: np.ndarray
    usd_per_gpu_hour_power: np.ndarray
    usd_per_m_input_tokens: np.ndarray
    usd_per_m_output_tokens: np.ndarray
    usd_per_m_blended_tokens: np.ndarray
    usd_per_m_output_tokens_all_in: np.ndarray


# ----------------------------------------------------------------------------------------------------
# Physics and cost of a block (arrays in, typed bundles out)
# ----------------------------------------------------------------------------------------------------

def _kv_bytes(context_tokens, model: ModelFacts, formats: Formats):
    return kv_bytes_per_sequence(context_tokens, model.kv_elements_per_token_per_layer, formats.kv_bytes_per_element,
                                 model.num_global_layers, model.num_sliding_layers, model.sliding_window_tokens)


def _decode(inp: EngineInputs, batch_size, kv_dec, repl, stream: bool, comm=None) -> DecodeStep:
    return decode_step(batch_size=batch_size, context_tokens=inp.workload.decode_context_tokens,
                       kv_bytes_per_sequence=kv_dec, kv_replication=repl, model=inp.model, hardware=inp.hardware,
                       layout=inp.layout, formats=inp.formats, eff=inp.eff, stream_input_embedding=stream, comm=comm,
                       spec=inp.spec)


def _head_bytes(inp: EngineInputs):
    """Weights the speculative draft adds to a replica: (non-routed, routed-expert) bytes. [B]

    An MTP module of an MoE model holds a full set of experts (sharded like the model's, ``routed``) and
    attention/shared weights (replicated per attention-DP group, ``non-routed``); an EAGLE head and a draft
    model are non-routed."""
    sp = inp.spec
    if sp is None:
        return 0.0, 0.0
    m, fm = inp.model, inp.formats
    code = sp.method_code
    routed = m.num_experts * m.routed_expert_params * np.minimum(m.num_moe_layers, 1.0)
    mtp_nr = (m.mtp_module_params - routed) * fm.weight_bytes_per_param
    nr = np.where(code == 1, mtp_nr, np.where(code == 2, m.draft_head_params * fm.weight_bytes_per_param,
                                              np.where(code == 3, sp.draft_params * fm.weight_bytes_per_param, 0.0)))
    return nr, np.where(code == 1, routed * fm.expert_bytes, 0.0)


def run_physics(inp: EngineInputs, assumptions: Assumptions = DEFAULT,
                deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT, *, sweet_spot: bool = False,
                decode_only: bool = False) -> Physics:
    """Decode, prefill, capacity and serving of every row of a block (already validated arrays).

    Parameters
    ----------
    inp : EngineInputs, arrays broadcastable to one length
    assumptions : Assumptions, the scalar serving facts used here (usable_hbm_frac, prefill_chunk_tokens,
        stream_input_embedding); the efficiencies come from ``inp.eff``
    deployment : DeploymentAssumptions (KV transfer, pool sizing)
    sweet_spot : bool, also solve the decode memory/compute crossover batch (60 extra decode passes);
        returned as the attribute ``sweet_spot_batch`` of the decode step's owner dict (see :func:`sweet_spot`)
    decode_only : bool, skip the prefill steps, the prefill queue and the KV transfer (the caller asks for
        decode and decode-cost figures only, every row aggregated with no arrival rate): the prefill-side
        fields come back NaN, ``served_*`` equal the decode step's (no interleaved prompts counted)

    Returns
    -------
    Physics

    Notes
    -----
    Capacity: weights / N + B kv repl / N <= usable HBM (DESIGN.md "Capacity"), with non-routed weights
    replicated over the dp attention groups. Aggregated serving pays, per decode step, for the prompts
    of the B / output_len requests that finish per step; disaggregated serving moves each prompt's KV
    cache between the pools (alpha-beta on scale-up when both pools fit in one domain, else scale-out)
    and sizes x prefill and y decode instances (:func:`econ.physics.deployment.size_pools`).
    """
    a, da = assumptions, deployment
    m, hw, lay, fm, wl, sv = inp.model, inp.hardware, inp.layout, inp.formats, inp.workload, inp.serving
    tp, dp, pp = lay.tp, lay.dp, lay.pp
    n = lay.num_gpus
    batch = wl.batch_size
    head_nr, head_routed = _head_bytes(inp)
    w_res = _resident(m, fm) + head_nr + head_routed
    slots = (m.num_experts + lay.redundant_experts) / np.maximum(m.num_experts, 1.0)
    routed_res = (m.routed_params_total * fm.expert_bytes + head_routed) * slots  # + redundant hot experts
    nr_res = w_res - m.routed_params_total * fm.expert_bytes - head_routed
    repl = kv_replication(tp, m.kv_shard_heads)
    kv_cap = _kv_bytes(wl.capacity_context_tokens, m, fm)
    kv_dec = _kv_bytes(wl.decode_context_tokens, m, fm)
    kv_prompt = _kv_bytes(wl.input_len, m, fm)
    replica_w = nr_res * dp + routed_res
    comm = collectives(hw, lay, inp.eff) if inp.comm is None else inp.comm  # alpha-beta coefficients
    d = _decode(inp, batch, kv_dec, repl, a.stream_input_embedding, comm)
    max_b = max_batch_size(n, hw.hbm_capacity_bytes, a.usable_hbm_frac, replica_w, kv_cap, repl)

    if decode_only:
        return _decode_only_physics(inp, d, lay, w_res, nr_res, routed_res, replica_w, repl, kv_cap, max_b, batch)

    # prefill: on the instance itself (aggregated) or on the prefill pool's instance (disaggregated)
    dis = sv.disaggregated
    if sv.prefill is lay or not np.any(dis):
        pl_, p_comm = lay, comm
    else:
        pl_ = Layout(*(dis * getattr(sv.prefill, k) + (1.0 - dis) * getattr(lay, k) for k in ("tp", "dp", "ep", "pp")),
                     scale_up_domain_size=lay.scale_up_domain_size)
        p_comm = collectives(hw, pl_, inp.eff)
    p_repl = kv_replication(pl_.tp, m.kv_shard_heads)
    pn = pl_.num_gpus
    p_max_b = max_batch_size(pn, hw.hbm_capacity_bytes, a.usable_hbm_frac, nr_res * pl_.dp + routed_res, kv_prompt,
                             p_repl)
    req = np.maximum(a.prefill_chunk_tokens / wl.input_len, 1.0)
    req = dis * np.maximum(np.minimum(req, np.floor(p_max_b / pl_.dp)), 1.0) + (1.0 - dis) * req

    def pre(requests) -> PrefillStep:
        return prefill_step(prompt_tokens=wl.input_len, requests_per_step=requests,
                            kv_bytes_per_sequence=kv_prompt * p_repl, model=m, hardware=hw, layout=pl_, formats=fm,
                            eff=inp.eff, stream_input_embedding=a.stream_input_embedding, comm=p_comm)

    p = pre(req)  # throughput: prompts batched up to prefill_chunk_tokens per attention group
    ttft = pre(np.ones_like(req)).time_s  # the request's own prompt alone (queueing not modeled)

    # serving the request mix
    s_out, s_pre = wl.output_len, wl.prefill_tokens
    in_tput_instance = p.input_tokens_per_s_per_gpu * pn  # prompt tokens/s of one (prefill) instance
    stall = (1.0 - dis) * batch / s_out * s_pre / in_tput_instance
    served_tpot = d.tpot_s + stall
    rate_d = batch / (served_tpot * s_out)  # requests/s one decode instance finishes
    rate_p = in_tput_instance / s_pre
    shape = np.shape(rate_d)
    x_pool, y_pool, served_pool, util_pool = (np.ones(shape) for _ in range(4))
    sel = np.flatnonzero(np.broadcast_to(dis, shape) > 0)
    if sel.size:  # xPyD sizing only where a row is disaggregated (2 x max_pool_instances vector passes)
        def at(v):
            return np.broadcast_to(v, shape)[sel]
        pools = size_pools(rate_p[sel], rate_d[sel], at(pn), at(n), arrival_rate_per_s=at(wl.arrival_rate_per_s),
                           prefill_instances=at(sv.prefill_instances), decode_instances=at(sv.decode_instances),
                           max_instances=da.max_pool_instances, tolerance_frac=da.pool_sizing_tolerance_frac)
        x_pool[sel], y_pool[sel] = pools["prefill_instances"], pools["decode_instances"]
        served_pool[sel], util_pool[sel] = pools["served_requests_per_s"], pools["utilization_frac"]
    arrival = wl.arrival_rate_per_s
    has_rate = ~np.isnan(arrival)
    lam = np.where(has_rate, arrival, 1.0)
    replicas = np.where(has_rate, np.ceil(lam / rate_d - 1e-9), 1.0)
    agg_served = np.where(has_rate, np.minimum(lam, replicas * rate_d), rate_d)
    x_inst = dis * x_pool
    y_inst = dis * y_pool + (1.0 - dis) * replicas
    served = dis * served_pool + (1.0 - dis) * agg_served
    total = x_inst * pn + y_inst * n
    util = dis * util_pool + (1.0 - dis) * agg_served / (replicas * rate_d)

    shards = np.minimum(pl_.pp * np.minimum(pl_.tp, m.kv_shard_heads), pp * np.minimum(tp, m.kv_shard_heads))
    up = indicator(lay.scale_up_domain_size - total + 1.0)  # both pools inside one scale-up domain
    link = up * hw.scale_up_bandwidth_bytes_per_s + (1.0 - up) * hw.scale_out_bandwidth_bytes_per_s
    kv_t = dis * (kv_transfer_time_s(kv_prompt, shards, link, eta=da.kv_transfer_eta,
                                     latency_s=da.kv_transfer_latency_s) + inp.eff.kernel_launch_latency_s)
    kv_frac = dis * served * kv_prompt / np.maximum(x_inst * pn * link * da.kv_transfer_eta, 1e-30)
    held = np.minimum(batch, max_b)
    # Poisson arrivals queue for a prefill server: each aggregated replica serves its own share; the x
    # instances of a disaggregated prefill pool share the unit's stream (econ.physics.serving, M/M/c)
    servers = np.maximum(dis * x_inst + (1.0 - dis), 1.0)
    lam_q = np.where(dis > 0, served, served / np.maximum(y_inst, 1.0))
    wait = waiting_time_quantile_s(lam_q, rate_p, servers, a.latency_percentile / 100.0)
    return Physics(
        ttft_percentile_s=ttft + kv_t + wait, tpot_percentile_s=served_tpot * inp.eff.tpot_tail_factor,
        prefill_utilization_frac=np.minimum(lam_q / (servers * rate_p), 1.0),
        decode=d, prefill=p, ttft_s=ttft, prefill_layout=pl_, weight_bytes=w_res,
        weight_bytes_per_gpu=(nr_res / tp + routed_res / lay.stage_gpus) / pp, kv_bytes_per_sequence=kv_cap,
        kv_replication=repl, max_batch_size=max_b, prefill_max_batch_size=p_max_b,
        kv_bytes_per_gpu=held / dp * kv_cap * repl / (tp * pp),
        hbm_used_frac=(replica_w + held * kv_cap * repl) / (n * hw.hbm_capacity_bytes),
        prefill_stall_s=stall, served_tpot_s=served_tpot, served_ttft_s=ttft + kv_t,
        served_tokens_per_s_per_user=1.0 / served_tpot, kv_transfer_bytes=dis * kv_prompt, kv_transfer_s=kv_t,
        kv_link_frac=kv_frac, prefill_instances=x_inst, decode_instances=y_inst, total_gpus=total,
        served_requests_per_s=served, pool_utilization_frac=util,
        served_output_tokens_per_s_per_gpu=served * s_out / total)


def _decode_only_physics(inp, d, lay, w_res, nr_res, routed_res, replica_w, repl, kv_cap, max_b, batch) -> Physics:
    """:class:`Physics` without the prefill side (see ``decode_only`` of :func:`run_physics`)."""
    n, tp, dp, pp = lay.num_gpus, lay.tp, lay.dp, lay.pp
    shape = np.shape(d.tpot_s)
    nan, one, zero = np.full(shape, np.nan), np.ones(shape), np.zeros(shape)
    held = np.minimum(batch, max_b)
    rate = batch / (d.tpot_s * inp.workload.output_len)
    p = PrefillStep(time_s=nan, prefill_flop=nan, t_mem_s=nan, t_flop_s=nan, t_comm_s=nan,
                    input_tokens_per_s_per_gpu=nan)
    return Physics(
        decode=d, prefill=p, ttft_s=nan, prefill_layout=lay, weight_bytes=w_res,
        weight_bytes_per_gpu=(nr_res / tp + routed_res / lay.stage_gpus) / pp, kv_bytes_per_sequence=kv_cap,
        kv_replication=repl, max_batch_size=max_b, prefill_max_batch_size=max_b,
        kv_bytes_per_gpu=held / dp * kv_cap * repl / (tp * pp),
        hbm_used_frac=(replica_w + held * kv_cap * repl) / (n * inp.hardware.hbm_capacity_bytes),
        prefill_stall_s=nan, served_tpot_s=d.tpot_s, served_ttft_s=nan, served_tokens_per_s_per_user=1.0 / d.tpot_s,
        kv_transfer_bytes=zero, kv_transfer_s=zero, kv_link_frac=zero, prefill_instances=zero, decode_instances=one,
        total_gpus=n * one, served_requests_per_s=rate, pool_utilization_frac=one,
        served_output_tokens_per_s_per_gpu=nan, ttft_percentile_s=nan, tpot_percentile_s=nan,
        prefill_utilization_frac=nan)


def sweet_spot(inp: EngineInputs, assumptions: Assumptions = DEFAULT):
    """Decode batch at which the step turns compute-bound (t_flop = t_mem), by vectorized bisection.

    Returns
    -------
    ndarray [sequences]: real-valued; ``inf`` where decode stays memory-bound up to 1e7 (KV reads grow as
    fast as FLOPs): capacity decides there (:func:`econ.physics.performance.crossover_batch`).
    """
    m, fm = inp.model, inp.formats
    repl = kv_replication(inp.layout.tp, m.kv_shard_heads)
    kv_dec = _kv_bytes(inp.workload.decode_context_tokens, m, fm)

    comm = collectives(inp.hardware, inp.layout, inp.eff) if inp.comm is None else inp.comm

    def dec(b):
        return _decode(inp, b, kv_dec, repl, assumptions.stream_input_embedding, comm)

    return crossover_batch(lambda b: dec(b).t_mem_s, lambda b: dec(b).t_flop_s)


def run_costs(phys: Physics, inp: EngineInputs, hardware: HardwareFacts, cost: CostInputs) -> Costs:
    """$/GPU-hour and $/M tokens of :func:`run_physics` rows.

    Parameters
    ----------
    phys : Physics; inp : EngineInputs; hardware : HardwareFacts (capex, power, rental per row)
    cost : CostInputs

    Returns
    -------
    Costs [USD per utilized GPU-hour, USD/M tokens]

    Notes
    -----
    $/GPU-hour owned: (capex CRF + build $/MW x MW CRF + opex) / (8760 utilization) + power x PUE x $/kWh
    (:func:`econ.economics.tco.gpu_hour_cost_components`); rented: rate / utilization. Aggregated: each phase is
    charged for the accelerator-time it takes on the shared instance (then divided by the unit's
    utilization if an arrival rate leaves capacity idle). Disaggregated: the prefill pool's accelerators
    over the prompt tokens it serves, the decode pool's over the output tokens. All-in output: every
    accelerator of the unit over the unit's output rate.
    """
    parts = gpu_hour_cost_components(hardware.all_in_capex_usd, hardware.all_in_power_w, cost.build_usd_per_mw_it,
                                     cost.pue, cost.usd_per_kwh, cost.cost_of_capital_frac,
                                     cost.accelerator_life_years, cost.facility_life_years,
                                     cost.opex_frac_of_capex_per_year, cost.utilization_frac)
    rent = usd_per_gpu_hour_rented(tier_rate(hardware, cost.basis_code, cost.usd_per_gpu_hour), cost.utilization_frac)
    owned = cost.owned
    zero = np.zeros(np.shape(owned))
    split = {k: np.where(owned, v, zero) for k, v in parts.items()}
    gh = np.where(owned, parts["capex"] + parts["facility"] + parts["opex"] + parts["power"], rent)
    dis, wl = inp.serving.disaggregated, inp.workload
    d, p = phys.decode, phys.prefill
    agg_in = usd_per_m_tokens(gh, p.input_tokens_per_s_per_gpu) / phys.pool_utilization_frac
    agg_out = usd_per_m_tokens(gh, d.output_tokens_per_s_per_gpu) / phys.pool_utilization_frac
    served = phys.served_requests_per_s
    pn = phys.prefill_layout.num_gpus
    dis_in = usd_per_m_tokens(gh, served * wl.prefill_tokens / np.maximum(phys.prefill_instances * pn, 1.0))
    dis_out = usd_per_m_tokens(gh, served * wl.output_len / (phys.decode_instances * inp.layout.num_gpus))
    usd_in = dis * dis_in + (1.0 - dis) * agg_in
    usd_out = dis * dis_out + (1.0 - dis) * agg_out
    blend = usd_per_m_blended_tokens(usd_in, usd_out, cost.input_output_mix, cost.cache_hit_frac,
                                     cost.cached_input_cost_frac)
    return Costs(usd_per_gpu_hour=gh, usd_per_gpu_hour_capex=split["capex"],
                 usd_per_gpu_hour_facility=split["facility"], usd_per_gpu_hour_opex=split["opex"],
                 usd_per_gpu_hour_power=split["power"], usd_per_m_input_tokens=usd_in,
                 usd_per_m_output_tokens=usd_out, usd_per_m_blended_tokens=blend,
                 usd_per_m_output_tokens_all_in=usd_per_m_tokens(gh, phys.served_output_tokens_per_s_per_gpu))


def tier_rate(hardware: HardwareFacts, basis_code, custom_usd_per_gpu_hour=np.nan):
    """$/GPU-hour of each row's cost tier per hour of existence (NaN: owned chain, or no rate in the catalog).

    Parameters
    ----------
    hardware : HardwareFacts; basis_code : int array (index into :data:`BASES`)
    custom_usd_per_gpu_hour : float array or scalar, the rate of basis "custom" [USD/h]

    Returns
    -------
    float array [USD/h] (:data:`BASIS_SOURCES` says where each comes from).
    """
    on_demand = np.where(np.isnan(hardware.rental_on_demand_neocloud_usd_per_hour),
                         hardware.rental_on_demand_hyperscaler_usd_per_hour,
                         hardware.rental_on_demand_neocloud_usd_per_hour)
    shape = np.shape(basis_code)
    options = [np.full(shape, np.nan), hardware.tco_hyperscaler_usd_per_hour, hardware.tco_neocloud_usd_per_hour,
               hardware.rental_3yr_usd_per_hour, on_demand, hardware.rental_usd_per_hour, custom_usd_per_gpu_hour]
    return np.choose(basis_code, [np.broadcast_to(o, shape) for o in options])


def run_status(phys: Physics, inp: EngineInputs, *, unsupported, price_missing, owned, layout_bad=False,
               context_over=False, too_wide=False, spec_bad=False):
    """(feasible, reason code into :data:`REASONS`, binding-wall code into :data:`econ.physics.performance.WALLS`).

    The first matching reason of: context beyond the model's maximum, a given weight format wider than
    the matmul precision, speculative decoding not available as set, invalid layout, precision not in
    hardware, missing price, KV capacity (weights alone or the batch), prefill instance, KV link.
    """
    max_b = phys.max_batch_size
    batch, dis = inp.workload.batch_size, inp.serving.disaggregated
    layout_bad, context_over = np.asarray(layout_bad, dtype=bool), np.asarray(context_over, dtype=bool)
    too_wide, spec_bad = np.asarray(too_wide, dtype=bool), np.asarray(spec_bad, dtype=bool)
    unsupported, price_missing = np.asarray(unsupported, dtype=bool), np.asarray(price_missing, dtype=bool)
    over = batch > max_b
    fits = max_b >= inp.layout.dp
    p_fits = (dis == 0) | (phys.prefill_max_batch_size >= phys.prefill_layout.dp)
    link_over = phys.kv_link_frac > 1.0
    feasible = ~over & ~unsupported & ~price_missing & p_fits & ~link_over & ~layout_bad & ~context_over \
        & ~too_wide & ~spec_bad
    code = np.where(over, np.where(fits, 1, 2), 0)
    code = np.where(~over & ~p_fits, 7, code)
    code = np.where(~over & p_fits & link_over, 8, code)
    code = np.where(price_missing, np.where(owned, 3, 4), code)
    code = np.where(unsupported, 5, code)
    code = np.where(layout_bad, 6, code)
    code = np.where(spec_bad, 11, code)
    code = np.where(too_wide, 10, code)
    code = np.where(context_over, 9, code)
    wall = np.where(over | ~p_fits, 0, np.where(link_over, 3, phys.decode.binding_wall_code))
    return feasible, code.astype(np.int8), wall.astype(np.int8)


def run(inp: EngineInputs, cost: CostInputs, assumptions: Assumptions = DEFAULT,
        deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT):
    """Physics and cost of validated array inputs: (Physics, Costs). The entry point of array searches
    (:mod:`econ.analyses.optimize`); callers validate first (:func:`evaluate` does it for frames)."""
    phys = run_physics(inp, assumptions, deployment)
    return phys, run_costs(phys, inp, inp.hardware, cost)


# ----------------------------------------------------------------------------------------------------
# Catalog arrays (gathered by integer codes)
# ----------------------------------------------------------------------------------------------------

_MODEL_COLUMN = {f.name: f.name for f in fields(ModelFacts)} | {
    "num_sliding_layers": "num_sliding_layers_eff", "sliding_window_tokens": "sliding_window_tokens_eff"}


@dataclass(frozen=True)
class CatalogArrays:
    """The catalog's facts as numpy columns indexed by integer codes (row order of the catalog tables).

    Attributes
    ----------
    model_ids, hardware_ids : tuple of str (code = position)
    model : dict field -> ndarray (:class:`ModelFacts` fields; nulls as 0)
    hardware : dict field -> ndarray (:class:`HardwareFacts` fields; nulls as NaN)
    pinned_weight_format, pinned_expert_format : int arrays per model, index into :data:`FORMATS` of the
        non-routed / routed-expert weight format its release pins (-1 = follow the matmul precision;
        :data:`econ.physics.precision.CHECKPOINT_FORMATS`)
    mtp_acceptance : float array per model, the sourced MTP acceptance (NaN = speculative decoding off by default)
    generation_code : int array per accelerator, index into :data:`econ.tables.catalog.GENERATIONS` (-1 = none)
    profile : dict parameter -> float array [generation, precision] of the calibration profiles
        (data/calibration.csv; NaN = no profile: the scalar assumption applies); keys
        :data:`~econ.assumptions.PROFILE_PARAMETERS` plus ``log_ratio_p10`` / ``log_ratio_p90`` (the band)
    profile_ids : tuple of str per [generation, precision] (flattened row-major; "" = none)
    """

    model_ids: tuple[str, ...]
    hardware_ids: tuple[str, ...]
    model: dict
    hardware: dict
    pinned_weight_format: np.ndarray
    pinned_expert_format: np.ndarray
    mtp_acceptance: np.ndarray
    generation_code: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    profile: dict = field(default_factory=dict)
    profile_ids: tuple = ()
    filled_profiles: dict = field(default_factory=dict)
    """Cache of :func:`efficiency`: per calibrated assumptions, each parameter as [accelerator, precision]."""

    def models(self, codes) -> ModelFacts:
        """The facts of models ``codes`` (int array: one gather of the stacked table; scalar: scalars)."""
        return ModelFacts(**_take_rows(self.model, codes))

    def accelerators(self, codes) -> HardwareFacts:
        """The facts of accelerators ``codes`` (as :meth:`models`)."""
        return HardwareFacts(**_take_rows(self.hardware, codes))


def _take_rows(table: dict, codes) -> dict:
    """``{field: column[codes]}`` by one fancy index of the stacked columns (a field per row of a matrix)."""
    if np.ndim(codes) == 0:
        return {k: v[codes] for k, v in table.items() if k != "__stacked__"}
    stacked = table.get("__stacked__")
    if stacked is None:
        names = [k for k in table if k != "__stacked__"]
        stacked = (names, np.stack([table[k] for k in names]))
        table["__stacked__"] = stacked
    names, matrix = stacked
    return dict(zip(names, matrix[:, codes]))


FORMATS: tuple[str, ...] = tuple(prec.WEIGHT_FORMATS)
"""Weight formats (index = format code): :data:`econ.physics.precision.WEIGHT_FORMATS`."""
_FORMAT_BYTES = np.array([prec.WEIGHT_FORMATS[f] for f in FORMATS])
_FORMAT_BITS = np.array([prec.FORMAT_BITS[f] for f in FORMATS])
_FORMAT_PREC = np.array([prec.PRECISIONS.index(prec.FORMAT_PRECISION[f]) for f in FORMATS])
_PREC_BITS = np.array([prec.PRECISION_BITS[p] for p in prec.PRECISIONS])
_DEFAULT_FORMAT = np.array([FORMATS.index(prec.DEFAULT_WEIGHT_FORMAT[p]) for p in prec.PRECISIONS])


def _format_code(name: str | None) -> int:
    return -1 if name is None else FORMATS.index(name)


def resolve_formats(hardware: HardwareFacts, precision_code, kv_code, pinned_weight, pinned_expert, weight_code=-1,
                    expert_code=-1, embedding_bytes_per_param=2.0):
    """Weight formats, bytes and matmul peaks of each row.

    Parameters
    ----------
    hardware : HardwareFacts; precision_code, kv_code : int arrays (matmul precision, KV precision)
    pinned_weight, pinned_expert : int arrays, formats a release pins (-1 = none; CatalogArrays)
    weight_code, expert_code : int arrays, formats a user gives (-1 = default)
    embedding_bytes_per_param : [B]

    Returns
    -------
    (Formats, unsupported, too_wide, weight_code, expert_code): ``unsupported`` where a component's matmul
    precision has no peak on the accelerator; ``too_wide`` where a *given* format is wider than the matmul
    precision (fp8 matmuls need fp8 or narrower weights).

    Notes
    -----
    Defaults: the release's pinned format (gpt-oss: bf16 non-routed, MXFP4 experts), else the matmul
    precision's own format (:data:`econ.physics.precision.DEFAULT_WEIGHT_FORMAT`); experts follow the non-routed
    format unless pinned or given. A component whose (pinned) format is wider than the matmul precision runs
    its matmuls at its own width (gpt-oss attention in bf16 under an fp4 precision); a narrower format is
    dequantized into the matmul precision (W4A16, MXFP4 experts on Hopper), so it costs its bytes, not its
    FLOPs.
    """
    pc = np.asarray(precision_code)
    default = _DEFAULT_FORMAT[pc]
    w = np.where(weight_code >= 0, weight_code, np.where(pinned_weight >= 0, pinned_weight, default))
    e = np.where(expert_code >= 0, expert_code, np.where(pinned_expert >= 0, pinned_expert, w))
    too_wide = ((weight_code >= 0) & (_FORMAT_BITS[np.maximum(weight_code, 0)] > _PREC_BITS[pc])) \
        | ((expert_code >= 0) & (_FORMAT_BITS[np.maximum(expert_code, 0)] > _PREC_BITS[pc]))
    peaks = [hardware.bf16_peak_flop_per_s, hardware.fp8_peak_flop_per_s, hardware.fp4_peak_flop_per_s]

    def matmul(code):  # the precision a component multiplies in: the stated one, or its own wider width
        return np.where(_FORMAT_BITS[code] > _PREC_BITS[pc], _FORMAT_PREC[code], pc)

    peak_w = np.choose(matmul(w), peaks)
    peak_e = np.choose(matmul(e), peaks)
    unsupported = np.isnan(peak_w) | np.isnan(peak_e)
    peak_w, peak_e = np.where(np.isnan(peak_w), 1.0, peak_w), np.where(np.isnan(peak_e), 1.0, peak_e)
    kv_b = np.array([prec.KV_BYTES_PER_ELEMENT[k] for k in prec.KV_BYTES_PER_ELEMENT])[kv_code]
    formats = Formats(weight_bytes_per_param=_FORMAT_BYTES[w], kv_bytes_per_element=kv_b,
                      embedding_bytes_per_param=embedding_bytes_per_param, peak_flop_per_s=peak_w,
                      attention_peak_flop_per_s=attention_peak_flop_per_s(peak_w, kv_b, hardware.bf16_peak_flop_per_s,
                                                                          hardware.fp8_peak_flop_per_s),
                      expert_weight_bytes_per_param=_FORMAT_BYTES[e], expert_peak_flop_per_s=peak_e)
    return formats, unsupported, too_wide, w, e


def catalog_arrays(catalog: Catalog) -> CatalogArrays:
    """:class:`CatalogArrays` of ``catalog``, computed once per catalog object (cached on the object)."""
    got = getattr(catalog, "_engine_arrays", None)
    if got is None:
        mods, accs = catalog.models, catalog.accelerators
        got = CatalogArrays(
            model_ids=tuple(mods["id"].to_list()), hardware_ids=tuple(accs["id"].to_list()),
            model={f: mods[c].cast(pl.Float64).fill_null(0.0).to_numpy() for f, c in _MODEL_COLUMN.items()},
            hardware={f.name: accs[f.name].cast(pl.Float64).to_numpy() for f in fields(HardwareFacts)},
            pinned_weight_format=np.array([_format_code(prec.CHECKPOINT_FORMATS.get(d, (None, None))[0])
                                           for d in mods["native_weight_dtype"].to_list()]),
            pinned_expert_format=np.array([_format_code(prec.CHECKPOINT_FORMATS.get(d, (None, None))[1])
                                           for d in mods["native_weight_dtype"].to_list()]),
            mtp_acceptance=mods["mtp_acceptance"].cast(pl.Float64).to_numpy(),
            **_profile_arrays(catalog))
        object.__setattr__(catalog, "_engine_arrays", got)  # a cache, not a field: the catalog stays frozen
    return got


_BAND = ("log_ratio_p10", "log_ratio_p90")


def _profile_arrays(catalog: Catalog) -> dict:
    """The calibration profiles as [generation, precision] arrays, and each accelerator's generation code."""
    accs = catalog.accelerators
    gens = accs["generation"].to_list() if "generation" in accs.columns else [None] * accs.height
    gen_code = np.array([GENERATIONS.index(g) if g in GENERATIONS else -1 for g in gens], dtype=np.int64)
    shape = (len(GENERATIONS), len(prec.PRECISIONS))
    profile = {k: np.full(shape, np.nan) for k in PROFILE_PARAMETERS + _BAND}
    ids = [""] * (shape[0] * shape[1])
    table = catalog.calibration
    if table is not None and table.height:
        for row in table.iter_rows(named=True):
            g, p = GENERATIONS.index(row["generation"]), prec.PRECISIONS.index(row["precision"])
            ids[g * shape[1] + p] = row["profile"]
            for k in profile:
                if row.get(k) is not None:
                    profile[k][g, p] = float(row[k])
    return dict(generation_code=gen_code, profile=profile, profile_ids=tuple(ids))


def efficiency(arr: CatalogArrays, assumptions: Assumptions, deployment: DeploymentAssumptions, hardware_code,
               precision_code) -> Efficiency:
    """The efficiencies of each row: the calibration profile of its accelerator generation and matmul precision
    for the fields in ``assumptions.calibrated_fields``, the scalar assumption for the rest (and where no profile exists).

    Parameters
    ----------
    arr : CatalogArrays
    assumptions, deployment : the scalar values (``assumptions.calibrated_fields`` = the fields the profiles set)
    hardware_code, precision_code : int arrays (or scalars), indices into ``arr.hardware_ids`` and
        :data:`econ.physics.precision.PRECISIONS`

    Returns
    -------
    Efficiency with array fields for the calibrated parameters (broadcast over the rows), scalars otherwise.
    Source of the profiles: data/calibration.csv (``econ calibrate``; data/README.md).
    """
    eff = Efficiency.from_assumptions(assumptions, deployment)
    cal = assumptions.calibrated_fields
    if not cal or not arr.profile or not arr.generation_code.size:
        return eff
    key = (cal, tuple(getattr(assumptions, k) for k in sorted(cal)))
    filled = arr.filled_profiles.get(key)
    if filled is None:  # per accelerator x precision, NaN (no profile) replaced by the scalar: once per assumptions
        g = arr.generation_code
        ok = (g >= 0)[:, None]
        filled = {}
        for name in sorted(cal):
            table = arr.profile[name][np.where(g >= 0, g, 0)]
            table = np.where(ok & ~np.isnan(table), table, getattr(assumptions, name))
            if not np.all(table == getattr(assumptions, name)):
                filled[name] = table
        arr.filled_profiles[key] = filled
    for name, table in filled.items():
        setattr(eff, name, table[hardware_code, precision_code])
    return eff


def profile_band(arr: CatalogArrays, assumptions: Assumptions, hardware_code, precision_code):
    """ln(measured / predicted) at the 10th and 90th percentile of each row's profile (held-out cases).

    Returns (p10, p90) float arrays; NaN where the row has no profile or nothing is calibrated (the band is
    the calibrated model's error, not that of a user's own efficiencies). Multiply a throughput by
    ``exp(p10)`` and ``exp(p90)`` for its band; divide a cost by them (the band of a cost is inverted).
    """
    shape = np.shape(hardware_code)
    if not assumptions.calibrated_fields or not arr.profile or not arr.generation_code.size:
        return np.full(shape, np.nan), np.full(shape, np.nan)
    g = arr.generation_code[hardware_code]
    ok = g >= 0
    gi, pi = np.where(ok, g, 0), np.asarray(precision_code)
    return tuple(np.where(ok, arr.profile[k][gi, pi], np.nan) for k in _BAND)


def profile_names(arr: CatalogArrays, assumptions: Assumptions, hardware_code, precision_code) -> list[str]:
    """The calibration profile id of each row ("" = none or nothing calibrated). List of str."""
    if not assumptions.calibrated_fields or not arr.profile_ids:
        return [""] * len(np.atleast_1d(hardware_code))
    g = arr.generation_code[np.atleast_1d(hardware_code)]
    p = np.broadcast_to(np.asarray(precision_code), g.shape)
    return [arr.profile_ids[gg * len(prec.PRECISIONS) + pp] if gg >= 0 else "" for gg, pp in zip(g.tolist(), p.tolist())]


# ----------------------------------------------------------------------------------------------------
# The frame API
# ----------------------------------------------------------------------------------------------------

def _codes(series: pl.Series, categories, name: str, kind: str | None = None) -> np.ndarray:
    """Integer codes of a string column against ``categories``; unknown values raise naming the field."""
    s = series.cast(pl.String)
    if s.len() <= 256:  # a few rows: a Python dict beats the Polars round trips
        index = {c: i for i, c in enumerate(categories)}
        values = s.to_list()
        bad = [v for v in values if v not in index]
        if bad and kind is not None:
            check_ids(kind, bad, categories)
        if bad:
            raise InvalidInputError(f"{name}={bad[0]!r} is not one of {list(categories)}")
        return np.array([index[v] for v in values], dtype=np.int32)
    uniq = s.unique().to_list()
    if kind is not None:
        check_ids(kind, uniq, categories)
    else:
        bad = [u for u in uniq if u not in categories]
        if bad:
            raise InvalidInputError(f"{name}={bad[0]!r} is not one of {list(categories)}")
    return s.cast(pl.Enum(list(categories))).to_physical().to_numpy().astype(np.int32)


def _col(frame: pl.DataFrame, name: str, default=np.nan) -> np.ndarray:
    """A numeric (or boolean) column as float array; missing column or null cells -> ``default``.

    A missing column is a read-only broadcast view of ``default`` (no allocation per row)."""
    if name not in frame.columns:
        return np.broadcast_to(np.float64(default), (frame.height,))
    s = frame[name]
    if s.dtype == pl.Boolean:
        s = s.cast(pl.Float64)
    if not (s.dtype.is_numeric() or s.dtype == pl.Null):
        raise InvalidInputError(f"column {name} must be numeric, got {s.dtype}")
    arr = s.to_numpy().astype(np.float64, copy=False) if s.dtype != pl.Null else np.full(frame.height, np.nan)
    if s.null_count():
        arr = np.where(np.isnan(arr), default, arr)
    return arr


def _row_note(i: int, n: int) -> str:
    return f"; first bad row {i}" if n > 1 else ""


def _optional_codes(points: pl.DataFrame, col: str, names, kind=None) -> np.ndarray:
    """Codes of an optional string column (-1 where absent or null); unknown values raise naming the field."""
    if col not in points.columns:
        return np.broadcast_to(np.int32(-1), (points.height,))
    s = points[col].cast(pl.String)
    given = s.is_not_null().to_numpy()
    if not given.any():
        return np.full(points.height, -1, dtype=np.int32)
    codes = _codes(s.fill_null(names[0]), names, col, kind)
    return np.where(given, codes, -1).astype(np.int32)


def _kv_precision_codes(points: pl.DataFrame, prec_codes: np.ndarray) -> np.ndarray:
    kv_names = tuple(prec.KV_BYTES_PER_ELEMENT)
    default = np.array([kv_names.index(prec.DEFAULT_KV_PRECISION[p]) for p in prec.PRECISIONS], dtype=np.int32)
    out = default[prec_codes]
    if "kv_precision" in points.columns:
        given = points["kv_precision"].cast(pl.String)
        mask = given.is_not_null().to_numpy()
        if mask.any():
            out = np.where(mask, _codes(given.fill_null(kv_names[0]), kv_names, "kv_precision"), out)
    return out


def evaluate(points: pl.DataFrame, catalog: Catalog, assumptions: Assumptions = DEFAULT,
             economics: Economics = Economics(), deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT, *,
             strict: bool = True, sweet_spot: bool = False, columns: tuple[str, ...] | list[str] | None = None,
             block_rows: int = 1 << 14, threads: int = 2) -> pl.DataFrame:
    """Evaluate decode, prefill, capacity, serving and cost for every row of ``points``: the one engine.

    Parameters
    ----------
    points : pl.DataFrame, one deployment per row.
        Required: ``model``, ``hardware`` (catalog ids), ``precision`` (bf16|fp8|fp4, the matmul and
        weight format), ``batch_size`` [sequences per (decode) instance, all attention-DP groups].
        Optional (null or absent = the default): ``input_len``, ``output_len`` [tokens] (1024 each);
        ``context_tokens`` [tokens] (null: decode attends input + output/2 and the KV cache is sized for
        input + output; set: both use it); ``kv_precision`` (bf16|fp8; default by precision);
        ``num_gpus`` (per instance; null = tp x dp x pp when all are given, else the fewest powers of two
        whose usable HBM holds the weights, at least tp x dp); ``tp`` (null = as wide as the scale-up
        domain, the heads and num_gpus / dp allow), ``dp``, ``ep`` (1), ``pp`` (null = num_gpus / (tp dp));
        ``scale_up_domain_size`` (override the catalog's: the same chip on an 8- or a 72-GPU domain);
        ``disaggregated`` (bool), ``prefill_tp`` / ``prefill_dp`` / ``prefill_ep`` / ``prefill_pp`` (the
        prefill pool's instance; default = the decode instance), ``prefill_instances`` /
        ``decode_instances`` (x, y; default sized), ``arrival_rate_per_s`` [requests/s] (default: the unit
        runs at capacity); ``basis`` (a cost tier of :data:`BASES`), ``usd_per_gpu_hour`` (the rate of basis
        "custom") and any :class:`~econ.assumptions.Economics` field as a per-row override.
    catalog : Catalog
    assumptions : Assumptions (``assumptions.IDEAL`` for the pure roofline)
    economics : Economics, scalar defaults of every economic column not in ``points``
    deployment : DeploymentAssumptions
    strict : bool
        True: an unsupported precision, a missing price, an invalid layout or a context beyond the
        model's maximum raises. False: such rows come back infeasible with the reason (catalog-wide sweeps).
    sweet_spot : bool
        Also return ``sweet_spot_batch``, the decode memory/compute crossover [sequences] (null where
        decode never turns compute-bound: capacity decides).
    columns : sequence of str, optional
        Return only these result columns (saves memory on very large sweeps; everything is computed).
    block_rows : int
        Rows evaluated at a time (small enough for the arrays of a block to stay in cache); memory stays
        flat in the number of rows.
    threads : int
        Blocks evaluated concurrently (numpy releases the GIL inside its loops); 1 = serial.

    Returns
    -------
    pl.DataFrame with :data:`RESULT_COLUMNS` (or ``columns``). Infeasible rows have ``feasible = False``, a
    reason, and null times, rates and prices: never a silently priced row, never NaN or inf.

    Raises
    ------
    UnknownIdError, InvalidInputError, UnsupportedPrecisionError
        Naming the field, the value and the valid range (and the first bad row of a multi-row frame).
    """
    n = points.height
    if n == 0:
        raise InvalidInputError("points has no rows")
    for c in ("model", "hardware", "precision", "batch_size"):
        if c not in points.columns:
            raise InvalidInputError(f"points is missing required column {c!r}")
    want = tuple(columns) if columns is not None else RESULT_COLUMNS
    unknown = [c for c in want if c not in RESULT_COLUMNS and c != "sweet_spot_batch"]
    if unknown:
        raise InvalidInputError(f"columns={unknown[0]!r} is not a result column (see econ.engine.RESULT_COLUMNS)")
    if sweet_spot and "sweet_spot_batch" not in want:
        want = want + ("sweet_spot_batch",)
    require_integer("block_rows", block_rows, 1, 1 << 24, "rows")
    require_integer("threads", threads, 1, 64)
    arr = catalog_arrays(catalog)
    model_code = _codes(points["model"], arr.model_ids, "model", "model")
    hw_code = _codes(points["hardware"], arr.hardware_ids, "hardware", "hardware")
    prec_code = _codes(points["precision"], prec.PRECISIONS, "precision")
    kv_code = _kv_precision_codes(points, prec_code)
    basis_code = (_codes(points["basis"].cast(pl.String).fill_null(economics.basis).replace(BASIS_ALIASES), BASES,
                         "basis")
                  if "basis" in points.columns else np.full(n, BASES.index(economics.basis), dtype=np.int32))
    raw = _read_inputs(points, economics)
    raw["precision_code"], raw["kv_code"] = prec_code, kv_code
    for col, names, kind in (("weight_format", FORMATS, None), ("expert_weight_format", FORMATS, None),
                             ("spec_method", SPEC_METHODS, None), ("spec_draft_model", arr.model_ids, "model")):
        raw[f"{col}_code"] = _optional_codes(points, col, names, kind)
    static = _static_table(catalog, arr, assumptions, deployment)
    key = ((model_code * len(arr.hardware_ids) + hw_code) * len(prec.PRECISIONS) + prec_code) \
        * len(prec.KV_BYTES_PER_ELEMENT) + kv_code
    ctx = _Context(points, catalog, arr, static, assumptions, deployment, strict, n,
                   decode_only=not (set(want) & _PREFILL_COLUMNS))
    coded = ("binding_wall", "infeasible_reason", "weight_format", "expert_weight_format", "spec_method",
             "efficiency_profile")
    out = {c: (np.empty(n, dtype=np.int8) if c in coded else
               np.empty(n, dtype=bool) if c in ("feasible", "disaggregated") else np.empty(n, dtype=float))
           for c in want if c not in ("model", "hardware", "precision", "kv_precision", "basis", "layout")}
    need_layout = "layout" in want
    if need_layout:
        for c in _LAYOUT_KEYS:
            out.setdefault(c, np.empty(n, dtype=bool if c == "disaggregated" else float))
    starts = range(0, n, block_rows)

    def work(start):
        sl = slice(start, min(start + block_rows, n))
        _evaluate_block(ctx, sl, model_code[sl], hw_code[sl], basis_code[sl], key[sl],
                        {k: v[sl] for k, v in raw.items()}, out)

    if threads > 1 and len(starts) > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(work, starts))  # re-raises the exception of the earliest failing block
    else:
        for start in starts:
            work(start)
    return _result_frame(points, out, want, prec_code, kv_code, basis_code, need_layout, arr)


@dataclass(frozen=True)
class _Context:
    points: pl.DataFrame
    catalog: Catalog
    arrays: CatalogArrays
    static: "_Static"
    assumptions: Assumptions
    deployment: DeploymentAssumptions
    strict: bool
    n: int
    decode_only: bool = False


_PREFILL_COLUMNS = frozenset({
    "ttft_s", "input_tokens_per_s_per_gpu", "usd_per_m_input_tokens", "usd_per_m_blended_tokens",
    "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp", "prefill_num_gpus", "prefill_instances",
    "decode_instances", "total_gpus", "kv_transfer_bytes", "kv_transfer_s", "kv_link_frac", "prefill_stall_s",
    "served_tpot_s", "served_ttft_s", "served_tokens_per_s_per_user", "served_output_tokens_per_s_per_gpu",
    "served_requests_per_s", "pool_utilization_frac", "usd_per_m_output_tokens_all_in", "ttft_percentile_s",
    "tpot_percentile_s", "prefill_utilization_frac", "usd_per_m_input_tokens_low", "usd_per_m_input_tokens_high",
    "usd_per_m_blended_tokens_low", "usd_per_m_blended_tokens_high", "layout", "disaggregated"})
"""Result columns that need the prefill side of the physics; a request without any of them skips it."""


_INPUT_DEFAULTS = {
    "batch_size": np.nan, "input_len": 1024.0, "output_len": 1024.0, "context_tokens": np.nan, "num_gpus": np.nan,
    "tp": np.nan, "dp": np.nan, "ep": np.nan, "pp": np.nan, "scale_up_domain_size": np.nan, "disaggregated": 0.0,
    "prefill_tp": np.nan, "prefill_dp": np.nan, "prefill_ep": np.nan, "prefill_pp": np.nan,
    "prefill_instances": np.nan, "decode_instances": np.nan, "arrival_rate_per_s": np.nan,
    "spec_draft_tokens": np.nan, "spec_acceptance": np.nan, "redundant_experts": 0.0,
}


def _read_inputs(points: pl.DataFrame, economics: Economics) -> dict:
    """Every numeric input column as a float array (defaults filled), range-checked on the whole frame."""
    raw = {k: _col(points, k, v) for k, v in _INPUT_DEFAULTS.items()}
    n = points.height
    require_integer("batch_size", raw["batch_size"], 1, MAX_BATCH, "sequences")
    require_integer("input_len", raw["input_len"], 1, MAX_CONTEXT, "tokens")
    require_integer("output_len", raw["output_len"], 1, MAX_CONTEXT, "tokens")
    for name, hi, unit in (("context_tokens", MAX_CONTEXT, "tokens"), ("num_gpus", 1 << 20, "accelerators"),
                           ("scale_up_domain_size", 1 << 20, "accelerators"), ("tp", MAX_PARALLEL, ""),
                           ("dp", MAX_PARALLEL, ""), ("ep", MAX_PARALLEL, ""), ("pp", MAX_PARALLEL, ""),
                           ("prefill_tp", MAX_PARALLEL, ""), ("prefill_dp", MAX_PARALLEL, ""),
                           ("prefill_ep", MAX_PARALLEL, ""), ("prefill_pp", MAX_PARALLEL, ""),
                           ("prefill_instances", MAX_PARALLEL, "instances"),
                           ("decode_instances", MAX_PARALLEL, "instances")):
        v = raw[name]
        given = ~np.isnan(v)
        if given.any():
            require_integer(name, np.where(given, v, 1.0), 1, hi, unit)
    k = raw["spec_draft_tokens"]
    if (~np.isnan(k)).any():
        require_integer("spec_draft_tokens", np.where(np.isnan(k), 0.0, k), 0, 16, "tokens")
    acc = raw["spec_acceptance"]
    if (~np.isnan(acc)).any():
        require_in_range("spec_acceptance", np.where(np.isnan(acc), 0.0, acc), 0.0, 1.0, hi_inclusive=False)
    require_integer("redundant_experts", raw["redundant_experts"], 0, 1 << 16, "experts per MoE layer")
    dis = raw["disaggregated"]
    bad = (dis != 0) & (dis != 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(f"disaggregated={dis[i]:g} must be true or false{_row_note(i, n)}")
    arrival = raw["arrival_rate_per_s"]
    require_in_range("arrival_rate_per_s", np.where(np.isnan(arrival), 1.0, arrival), 0.0, 1e9, "requests/s",
                     lo_inclusive=False)
    for name in ECONOMIC_COLUMNS:
        raw[name] = _col(points, name, float(getattr(economics, name)))
    raw["usd_per_gpu_hour"] = _col(points, "usd_per_gpu_hour", np.nan if economics.usd_per_gpu_hour is None
                                   else float(economics.usd_per_gpu_hour))
    given = ~np.isnan(raw["usd_per_gpu_hour"])
    if given.any():
        require_in_range("usd_per_gpu_hour", raw["usd_per_gpu_hour"][given], 0.0, 1e4, "USD/h", lo_inclusive=False)
    require_in_range("pue", raw["pue"], 1.0, 5.0)
    for name in ("usd_per_kwh", "build_usd_per_mw_it", "opex_frac_of_capex_per_year", "input_output_mix"):
        require_in_range(name, raw[name], 0.0, np.inf)
    require_in_range("utilization_frac", raw["utilization_frac"], 0.01, 1.0)
    for name in ("cost_of_capital_frac", "cache_hit_frac", "cached_input_cost_frac"):
        require_in_range(name, raw[name], 0.0, 1.0)
    for name in ("accelerator_life_years", "facility_life_years"):
        require_in_range(name, raw[name], 0.1, 100.0, "years")
    return raw


def _pow2_ceil(x):
    return 2.0 ** np.ceil(np.log2(np.maximum(x, 1.0)))


@dataclass(frozen=True)
class _Static:
    """What depends only on (model, accelerator, precision, KV precision) with default formats and layout:
    computed once per catalog and assumptions for every combination, gathered per row by the combined code."""

    formats: Formats
    unsupported: np.ndarray
    weight_code: np.ndarray
    expert_code: np.ndarray
    auto_num_gpus: np.ndarray
    auto_tp: np.ndarray
    auto_problem: np.ndarray
    auto_collectives: Collectives


_STACKS: dict = {}
"""id(bundle) -> (bundle, leaf paths, stacked matrix) for :func:`_gather` (static tables only: a few entries)."""


def _gather(bundle, index):
    """A dataclass of arrays (nested bundles included) restricted to ``index``; scalars stay scalars.

    The array leaves are stacked once per bundle into one matrix, so a gather is one fancy index."""
    got = _STACKS.get(id(bundle))
    if got is None or got[0] is not bundle:
        leaves = []

        def walk(b, path):
            for f in fields(b):
                v = getattr(b, f.name)
                if hasattr(v, "__dataclass_fields__"):
                    walk(v, path + (f.name,))
                elif isinstance(v, np.ndarray) and v.ndim:
                    leaves.append((path + (f.name,), v))

        walk(bundle, ())
        lengths = {v.shape for _, v in leaves}
        matrix = np.stack([v.astype(float) for _, v in leaves]) if len(lengths) == 1 else None
        got = (bundle, [p for p, _ in leaves], matrix, [v.dtype for _, v in leaves])
        if len(_STACKS) > 64:
            _STACKS.clear()
        _STACKS[id(bundle)] = got
    _, paths, matrix, dtypes = got
    if matrix is None:
        return _gather_slow(bundle, index)
    rows = matrix[:, index]
    values = {p: (r if dt == np.float64 else r.astype(dt)) for p, r, dt in zip(paths, rows, dtypes)}

    def build(b, path):
        out = {}
        for f in fields(b):
            v = getattr(b, f.name)
            key = path + (f.name,)
            out[f.name] = build(v, key) if hasattr(v, "__dataclass_fields__") else values.get(key, v)
        return type(b)(**out)

    return build(bundle, ())


def _gather_slow(bundle, index):
    out = {}
    for f in fields(bundle):
        v = getattr(bundle, f.name)
        out[f.name] = (_gather_slow(v, index) if hasattr(v, "__dataclass_fields__") else
                       v[index] if isinstance(v, np.ndarray) and v.ndim else v)
    return type(bundle)(**out)


def _resident(model: ModelFacts, formats: Formats):
    """One replica's weight bytes with the row's formats (no speculative head). [B]"""
    return weight_bytes_resident(model.total_params, model.embedding_params, model.lm_head_params,
                                 formats.weight_bytes_per_param, formats.embedding_bytes_per_param,
                                 model.routed_params_total, formats.expert_bytes)


def _static_table(catalog: Catalog, arr: CatalogArrays, a: Assumptions, da: DeploymentAssumptions) -> _Static:
    """:class:`_Static` for every (model, accelerator, precision, KV precision), cached on the catalog."""
    cache = getattr(catalog, "_engine_static", None)
    if cache is None:
        cache = {}
        object.__setattr__(catalog, "_engine_static", cache)
    eff = Efficiency.from_assumptions(a, da)
    k = (a.usable_hbm_frac, a.embedding_bytes_per_param, da.kv_head_replication, eff.scale_up_latency_s,
         eff.scale_out_latency_s, eff.alltoall_scale_up_latency_s, eff.alltoall_scale_out_latency_s)
    if k in cache:
        return cache[k]
    shape = (len(arr.model_ids), len(arr.hardware_ids), len(prec.PRECISIONS), len(prec.KV_BYTES_PER_ELEMENT))
    mc, hc, pc, kc = (g.ravel() for g in np.indices(shape))
    model, hw = arr.models(mc), arr.accelerators(hc)
    formats, unsupported, _, wcode, ecode = resolve_formats(hw, pc, kc, arr.pinned_weight_format[mc],
                                                            arr.pinned_expert_format[mc],
                                                            embedding_bytes_per_param=a.embedding_bytes_per_param)
    ngpu = _pow2_ceil(np.ceil(_resident(model, formats) / (hw.hbm_capacity_bytes * a.usable_hbm_frac)))
    tp, pp = resolve_parallelism(ngpu, hw.scale_up_domain_size, model.num_attention_heads)
    one = np.ones_like(tp)
    problem = layout_problems(tp, one, one, pp, ngpu, hw.scale_up_domain_size, model.num_attention_heads,
                              model.kv_shard_heads, model.num_layers, model.num_experts,
                              kv_head_replication=da.kv_head_replication)
    out = _Static(formats=formats, unsupported=unsupported, weight_code=wcode, expert_code=ecode,
                  auto_num_gpus=ngpu, auto_tp=tp, auto_problem=problem,
                  auto_collectives=collectives(hw, Layout(tp=tp, dp=one, ep=one, pp=pp,
                                                          scale_up_domain_size=hw.scale_up_domain_size), eff))
    cache[k] = out
    return out


_LAYOUT_KEYS = ("tp", "dp", "ep", "pp", "disaggregated", "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp",
                "prefill_instances", "decode_instances")
_GIVEN_LAYOUT = ("num_gpus", "tp", "dp", "ep", "pp", "scale_up_domain_size")


def _evaluate_block(ctx: _Context, sl: slice, mc, hc, bc, key, raw: dict, out: dict) -> None:
    """Validate, resolve and evaluate rows ``sl``; write the result columns into ``out`` (NaN = null)."""
    a, da, st = ctx.assumptions, ctx.deployment, ctx.static
    model = ctx.arrays.models(mc)
    hw = ctx.arrays.accelerators(hc)
    nb = len(mc)
    owned = bc == 0
    price_missing = np.where(owned, np.isnan(hw.all_in_capex_usd), np.isnan(tier_rate(hw, bc, raw["usd_per_gpu_hour"])))
    wc_in, ec_in = raw["weight_format_code"], raw["expert_weight_format_code"]
    if (wc_in < 0).all() and (ec_in < 0).all():  # default formats: from the static table
        formats, unsupported = _gather(st.formats, key), st.unsupported[key]
        too_wide, wcode, ecode = np.zeros(nb, dtype=bool), st.weight_code[key], st.expert_code[key]
    else:
        formats, unsupported, too_wide, wcode, ecode = resolve_formats(
            hw, raw["precision_code"], raw["kv_code"], ctx.arrays.pinned_weight_format[mc],
            ctx.arrays.pinned_expert_format[mc], wc_in, ec_in, a.embedding_bytes_per_param)
    spec, spec_problem = _resolve_spec(ctx, mc, model, formats, raw)
    # workload
    batch, input_len, output_len = raw["batch_size"], raw["input_len"], raw["output_len"]
    ctx_in = raw["context_tokens"]
    if np.isnan(ctx_in).all():
        decode_ctx, capacity_ctx = input_len + output_len / 2.0, input_len + output_len
    else:
        has_ctx = ~np.isnan(ctx_in)
        decode_ctx = np.where(has_ctx, ctx_in, input_len + output_len / 2.0)
        capacity_ctx = np.where(has_ctx, ctx_in, input_len + output_len)
    context_over = capacity_ctx > model.max_context_tokens
    # layout: resolve what is not given (from the static table when nothing is)
    dis = raw["disaggregated"]
    any_dis = bool(dis.any())
    facts = dict(num_attention_heads=model.num_attention_heads, kv_shard_heads=model.kv_shard_heads,
                 num_layers=model.num_layers, num_experts=model.num_experts)
    red = raw["redundant_experts"]
    if all(np.isnan(raw[k]).all() for k in _GIVEN_LAYOUT) and not np.any(red):
        domain = hw.scale_up_domain_size
        dp = ep = np.ones(nb)
        ngpu, tp = st.auto_num_gpus[key], st.auto_tp[key]
        pp = ngpu / tp
        problem = st.auto_problem[key]
        comm = _gather(st.auto_collectives, key)
    else:
        domain = np.where(np.isnan(raw["scale_up_domain_size"]), hw.scale_up_domain_size, raw["scale_up_domain_size"])
        dp = np.where(np.isnan(raw["dp"]), 1.0, raw["dp"])
        ep = np.where(np.isnan(raw["ep"]), 1.0, raw["ep"])
        tp_in, pp_in, ngpu = raw["tp"], raw["pp"], raw["num_gpus"]
        if np.isnan(ngpu).any():
            given = np.where(np.isnan(tp_in), 1.0, tp_in) * dp
            auto = np.where(~np.isnan(pp_in) & ~np.isnan(tp_in), given * pp_in,
                            np.maximum(st.auto_num_gpus[key], given))
            ngpu = np.where(np.isnan(ngpu), auto, ngpu)
        if np.isnan(tp_in).any():
            tp_auto, _ = resolve_parallelism(ngpu / dp, domain, model.num_attention_heads)
            tp = np.where(np.isnan(tp_in), tp_auto, tp_in)
        else:
            tp = tp_in
        pp = np.where(np.isnan(pp_in), ngpu / (tp * dp), pp_in)
        problem = layout_problems(tp, dp, ep, pp, ngpu, domain, kv_head_replication=da.kv_head_replication,
                                  batch_size=batch, redundant_experts=red, **facts)
        comm = None
    if any_dis:
        ptp, pdp, pep, ppp = (np.where(np.isnan(raw[f"prefill_{k}"]), v, raw[f"prefill_{k}"])
                              for k, v in (("tp", tp), ("dp", dp), ("ep", ep), ("pp", pp)))
        p_problem = np.where(dis > 0, layout_problems(ptp, pdp, pep, ppp, ptp * pdp * ppp, domain,
                                                      kv_head_replication=da.kv_head_replication,
                                                      redundant_experts=red, **facts), -1)
    else:
        ptp, pdp, pep, ppp, p_problem = tp, dp, ep, pp, np.full(nb, -1, dtype=np.int8)
    if ctx.strict:
        _raise_first(ctx, sl, dict(context_over=context_over, unsupported=unsupported, price_missing=price_missing,
                                   owned=owned, basis_code=bc, problem=problem, p_problem=p_problem,
                                   capacity_ctx=capacity_ctx, tp=tp, dp=dp, ep=ep, pp=pp, ptp=ptp, pdp=pdp, pep=pep,
                                   ppp=ppp, ngpu=ngpu, domain=domain, batch=batch, too_wide=too_wide,
                                   wcode=wcode, ecode=ecode, red=red, spec_problem=spec_problem), model)
    layout_bad = (problem >= 0) | (p_problem >= 0)
    if layout_bad.any():  # non-strict: rows with no valid layout come back infeasible; compute on a stand-in
        comm = None
        sane = ~layout_bad
        lay = Layout(*(np.where(sane, v, 1.0) for v in (tp, dp, ep, pp)), scale_up_domain_size=domain,
                     redundant_experts=np.where(sane, red, 0.0))
        p_lay = Layout(*(np.where(sane, v, 1.0) for v in (ptp, pdp, pep, ppp)), scale_up_domain_size=domain,
                       redundant_experts=np.where(sane, red, 0.0))
        run_batch = np.where(sane, batch, np.maximum(batch, 1.0))
    else:
        lay = Layout(tp=tp, dp=dp, ep=ep, pp=pp, scale_up_domain_size=domain, redundant_experts=red)
        p_lay = lay if not any_dis else Layout(tp=ptp, dp=pdp, ep=pep, pp=ppp, scale_up_domain_size=domain,
                                               redundant_experts=red)
        run_batch = batch
    econ_rows = {k: raw[k] for k in ECONOMIC_COLUMNS}
    workload = Workload(batch_size=run_batch, input_len=input_len, output_len=output_len,
                        decode_context_tokens=decode_ctx, capacity_context_tokens=capacity_ctx,
                        prefill_tokens=np.maximum(input_len * (1.0 - econ_rows["cache_hit_frac"]), 1.0),
                        arrival_rate_per_s=raw["arrival_rate_per_s"])
    serving = Serving(disaggregated=dis, prefill=p_lay, prefill_instances=raw["prefill_instances"],
                      decode_instances=raw["decode_instances"])
    pc = raw["precision_code"]
    inp = EngineInputs(model=model, hardware=hw, layout=lay, formats=formats, eff=efficiency(ctx.arrays, a, da, hc, pc),
                       workload=workload, serving=serving, comm=comm, spec=spec)
    phys = run_physics(inp, a, da, decode_only=ctx.decode_only and not any_dis
                       and bool(np.isnan(raw["arrival_rate_per_s"]).all()))
    costs = run_costs(phys, inp, hw, CostInputs(basis_code=bc, usd_per_gpu_hour=raw["usd_per_gpu_hour"], **econ_rows))
    feasible, code, wall = run_status(phys, inp, unsupported=unsupported, price_missing=price_missing, owned=owned,
                                      layout_bad=layout_bad, context_over=context_over, too_wide=too_wide,
                                      spec_bad=spec_problem >= 0)
    d, p = phys.decode, phys.prefill
    values = {
        "num_gpus": ngpu, "tp": tp, "pp": np.round(pp), "batch_size": batch, "context_tokens": capacity_ctx,
        "input_len": input_len, "output_len": output_len, "max_batch_size": phys.max_batch_size, "feasible": feasible,
        "binding_wall": wall, "infeasible_reason": code, "weight_bytes": phys.weight_bytes,
        "kv_bytes_per_sequence": phys.kv_bytes_per_sequence, "hbm_used_frac": phys.hbm_used_frac,
        "t_mem_s": d.t_mem_s, "t_flop_s": d.t_flop_s, "t_comm_s": d.t_comm_s, "tpot_s": d.tpot_s,
        "tokens_per_s_per_user": d.tokens_per_s_per_user, "output_tokens_per_s_per_gpu": d.output_tokens_per_s_per_gpu,
        "ttft_s": phys.ttft_s, "input_tokens_per_s_per_gpu": p.input_tokens_per_s_per_gpu,
        "arithmetic_intensity_flop_per_byte": d.arithmetic_intensity_flop_per_byte,
        "usd_per_gpu_hour": costs.usd_per_gpu_hour, "usd_per_gpu_hour_capex": costs.usd_per_gpu_hour_capex,
        "usd_per_gpu_hour_facility": costs.usd_per_gpu_hour_facility,
        "usd_per_gpu_hour_opex": costs.usd_per_gpu_hour_opex, "usd_per_gpu_hour_power": costs.usd_per_gpu_hour_power,
        "usd_per_m_input_tokens": costs.usd_per_m_input_tokens,
        "usd_per_m_output_tokens": costs.usd_per_m_output_tokens,
        "usd_per_m_blended_tokens": costs.usd_per_m_blended_tokens,
        "input_output_mix": econ_rows["input_output_mix"], "cache_hit_frac": econ_rows["cache_hit_frac"],
        "ep": ep, "dp": dp, "expert_tp": tp * dp / ep, "scale_up_domain_size": domain, "disaggregated": dis > 0,
        "num_microbatches": d.num_microbatches, "bubble_frac": d.bubble_frac,
        "weight_bytes_per_gpu": phys.weight_bytes_per_gpu, "kv_bytes_per_gpu": phys.kv_bytes_per_gpu,
        "t_comm_tp_s": d.t_comm_tp_s, "t_comm_ep_s": d.t_comm_ep_s, "t_comm_pp_s": d.t_comm_pp_s,
        "expert_imbalance_factor": np.where(ep > 1, da.expert_imbalance_factor, 1.0),
        "prefill_tp": phys.prefill_layout.tp, "prefill_dp": phys.prefill_layout.dp,
        "prefill_ep": phys.prefill_layout.ep, "prefill_pp": phys.prefill_layout.pp,
        "prefill_num_gpus": phys.prefill_layout.num_gpus, "prefill_instances": phys.prefill_instances,
        "decode_instances": phys.decode_instances, "total_gpus": phys.total_gpus,
        "kv_transfer_bytes": phys.kv_transfer_bytes, "kv_transfer_s": phys.kv_transfer_s,
        "kv_link_frac": phys.kv_link_frac, "prefill_stall_s": phys.prefill_stall_s,
        "served_tpot_s": phys.served_tpot_s, "served_ttft_s": phys.served_ttft_s,
        "served_tokens_per_s_per_user": phys.served_tokens_per_s_per_user,
        "served_output_tokens_per_s_per_gpu": phys.served_output_tokens_per_s_per_gpu,
        "served_requests_per_s": phys.served_requests_per_s, "pool_utilization_frac": phys.pool_utilization_frac,
        "usd_per_m_output_tokens_all_in": costs.usd_per_m_output_tokens_all_in,
        "weight_format": wcode, "expert_weight_format": ecode, "spec_method": spec.method_code,
        "spec_draft_tokens": spec.draft_tokens, "spec_acceptance": spec.acceptance,
        "accepted_tokens_per_step": d.accepted_tokens_per_step, "step_s": d.step_s, "redundant_experts": red,
        "ttft_percentile_s": phys.ttft_percentile_s, "tpot_percentile_s": phys.tpot_percentile_s,
        "prefill_utilization_frac": phys.prefill_utilization_frac, "latency_percentile": a.latency_percentile,
    }
    if any(c in out for c in _BAND_COLUMNS):
        lo, hi = profile_band(ctx.arrays, a, hc, pc)
        for c in _BAND_OF_RATE:
            values[f"{c}_low"], values[f"{c}_high"] = values[c] * np.exp(lo), values[c] * np.exp(hi)
        for c in _BAND_OF_COST:
            values[f"{c}_low"], values[f"{c}_high"] = values[c] / np.exp(hi), values[c] / np.exp(lo)
    if "efficiency_profile" in out:
        g = ctx.arrays.generation_code[hc] if ctx.arrays.generation_code.size else np.full(nb, -1)
        known = np.array([bool(x) for x in ctx.arrays.profile_ids] + [False])
        code = np.where(g >= 0, g * len(prec.PRECISIONS) + pc, -1)
        values["efficiency_profile"] = np.where(known[code] & bool(a.calibrated_fields), code, -1)
    infeasible = ~feasible
    for c, target in out.items():
        t = target[sl]
        t[...] = sweet_spot(inp, a) if c == "sweet_spot_batch" else values[c]
        if t.dtype != np.float64 or c in _INT_COLUMNS and c != "max_batch_size":
            continue
        if c == "sweet_spot_batch":  # inf = decode never turns compute-bound: capacity decides (null)
            np.copyto(t, np.nan, where=~np.isfinite(t))
            continue
        mask = infeasible if c not in _UNGATED and c not in _LAYOUT_GATED else layout_bad
        if c in _BAND_COLUMNS:  # NaN = the row has no calibration profile: null, by design
            np.copyto(t, np.nan, where=mask)
            continue
        if not np.isfinite(np.sum(t, where=~mask)):  # no NaN or inf reaches a table: a bug, not a null
            i = int(np.flatnonzero(~np.isfinite(t) & ~mask)[0])
            r = sl.start + i
            raise InvalidInputError(f"result column {c} is not finite in row {r} ({ctx.points['model'][r]} on "
                                    f"{ctx.points['hardware'][r]})")
        if c not in _UNGATED or c in _LAYOUT_GATED:
            np.copyto(t, np.nan, where=mask)


SPEC_PROBLEMS: tuple[str, ...] = (
    "spec_method=mtp but {model} ships no multi-token-prediction module (use eagle or draft)",
    "spec_method={method} needs spec_acceptance (no sourced default for it; valid: [0, 1))",
    "spec_method=draft needs spec_draft_model (a catalog model id)",
)
"""Why a speculative-decoding setting cannot run (index = problem code)."""


def _resolve_spec(ctx: _Context, mc, model: ModelFacts, formats: Formats, raw: dict):
    """Each row's speculative decoding: given columns, else the model's sourced MTP default, else off.

    Returns
    -------
    (Speculation, problem codes into :data:`SPEC_PROBLEMS`, -1 = none).

    Notes
    -----
    Defaults: a model with a sourced ``mtp_acceptance`` (models.csv; DeepSeek-V3/R1 0.85 from the
    DeepSeek-V3 report) decodes with its MTP module, one drafted token per step; others decode plainly.
    A given ``spec_draft_tokens`` without a method uses the model's MTP module when it ships one, else an
    EAGLE head. One drafted token per step unless ``spec_draft_tokens`` says otherwise.
    """
    method, k_in, a_in = raw["spec_method_code"], raw["spec_draft_tokens"], raw["spec_acceptance"]
    default_a = ctx.arrays.mtp_acceptance[mc]
    has_mtp = model.mtp_modules > 0
    by_default = np.where(~np.isnan(default_a) & has_mtp, 1, 0)
    by_k = np.where(np.isnan(k_in), by_default, np.where(k_in > 0, np.where(has_mtp, 1, 2), 0))
    m = np.where(method >= 0, method, by_k)
    k = np.where(m == 0, 0.0, np.where(np.isnan(k_in), 1.0, k_in))
    m = np.where(k == 0, 0, m)
    acc = np.where(np.isnan(a_in), np.where(m == 1, default_a, np.nan), a_in)
    problem = np.full(np.shape(m), -1, dtype=np.int8)
    problem = np.where((m > 0) & np.isnan(acc), 1, problem)
    problem = np.where((m == 3) & (raw["spec_draft_model_code"] < 0), 2, problem)
    problem = np.where((m == 1) & ~has_mtp, 0, problem)
    acc = np.where(np.isnan(acc), 0.0, acc)
    dcode = raw["spec_draft_model_code"]
    if np.any(m == 3):
        draft = ctx.arrays.models(np.maximum(dcode, 0))
        on = (m == 3) & (dcode >= 0)
        kv_token = _kv_bytes(1.0, draft, formats)
        extra = dict(draft_params=np.where(on, draft.total_params, 0.0),
                     draft_active_params=np.where(on, draft.active_matmul_params, 0.0),
                     draft_layers=np.where(on, draft.num_layers, 0.0),
                     draft_kv_bytes_per_token=np.where(on, kv_token, 0.0))
    else:
        extra = {}
    spec = Speculation(method_code=m.astype(float), draft_tokens=k, acceptance=acc, **extra)
    return spec, problem


def default_speculation(catalog: Catalog, model: str) -> Speculation | None:
    """The speculative decoding ``model`` runs by default (as :func:`evaluate` resolves it), None = plain.

    A model with a sourced ``mtp_acceptance`` and an MTP module (models.csv) drafts one token per step
    with it (DeepSeek-V3/R1: acceptance 0.85, DeepSeek-V3 report); every other model decodes plainly.
    """
    arr = catalog_arrays(catalog)
    i = arr.model_ids.index(model)
    a = arr.mtp_acceptance[i]
    if np.isnan(a) or arr.model["mtp_modules"][i] <= 0:
        return None
    return Speculation(method_code=1.0, draft_tokens=1.0, acceptance=float(a))


def _raise_first(ctx: _Context, sl, f: dict, model: ModelFacts) -> None:
    """Strict mode: raise for the first row of the block that cannot be evaluated, naming field, value, range."""
    n, off = ctx.n, sl.start
    pts = ctx.points

    def first(mask):
        return int(np.flatnonzero(mask)[0]) if np.any(mask) else None

    def at(v, i):
        return v[i] if np.ndim(v) else v

    i = first(f["context_over"])
    if i is not None:
        r = off + i
        mx = model.max_context_tokens[i]
        raise InvalidInputError(
            f"input_len + output_len = {at(f['capacity_ctx'], i):,.0f} tokens exceeds the maximum context of "
            f"{pts['model'][r]} ({mx:,.0f} tokens; valid: 2-{mx:,.0f}){_row_note(r, n)}")
    i = first(f["too_wide"])
    if i is not None:
        r = off + i
        p = pts["precision"][r]
        fmt = FORMATS[int(at(f["wcode"], i))]
        ef = FORMATS[int(at(f["ecode"], i))]
        wide = fmt if prec.FORMAT_BITS[fmt] > prec.PRECISION_BITS[p] else ef
        name = "weight_format" if wide == fmt else "expert_weight_format"
        raise InvalidInputError(
            f"{name}={wide!r} is wider than precision={p!r}: {p} matmuls need {p} or narrower weights (valid: "
            f"{[x for x in FORMATS if prec.FORMAT_BITS[x] <= prec.PRECISION_BITS[p]]}){_row_note(r, n)}")
    i = first(f["spec_problem"] >= 0)
    if i is not None:
        r = off + i
        msg = SPEC_PROBLEMS[int(f["spec_problem"][i])]
        method = pts["spec_method"][r] if "spec_method" in pts.columns else "mtp"
        raise InvalidInputError(msg.format(model=pts["model"][r], method=method) + _row_note(r, n))
    for prob, prefix in ((f["problem"], ""), (f["p_problem"], "prefill_")):
        i = first(prob >= 0)
        if i is not None:
            r = off + i
            tp, dp, ep, pp = ((f["tp"], f["dp"], f["ep"], f["pp"]) if not prefix else
                              (f["ptp"], f["pdp"], f["pep"], f["ppp"]))
            t, d, e, p = (at(v, i) for v in (tp, dp, ep, pp))
            msg = layout_problem_message(
                prob[i], tp=t, dp=d, ep=e, pp=p, num_gpus=at(f["ngpu"], i) if not prefix else t * d * p,
                domain=at(f["domain"], i), num_attention_heads=model.num_attention_heads[i],
                kv_shard_heads=model.kv_shard_heads[i], num_layers=model.num_layers[i],
                num_experts=model.num_experts[i], model_id=pts["model"][r], batch_size=at(f["batch"], i),
                prefix=prefix, redundant_experts=float(at(f["red"], i)))
            raise InvalidInputError(msg + _row_note(r, n))
    i = first(f["unsupported"])
    if i is not None:
        r = off + i
        p = pts["precision"][r]
        raise UnsupportedPrecisionError(
            f"precision={p!r} is not supported in hardware by {pts['hardware'][r]} (no dense {p} peak in "
            f"accelerators.csv){_row_note(r, n)}")
    i = first(f["price_missing"])
    if i is not None:
        r = off + i
        if f["owned"][i]:
            raise InvalidInputError(f"hardware={pts['hardware'][r]} has no capex in accelerators.csv (it is not sold; "
                                    f"use a rental or TCO tier){_row_note(r, n)}")
        tier = BASES[int(f["basis_code"][i])]
        have = [b for b in BASES[1:-1] if not np.isnan(tier_rate(ctx.arrays.accelerators(
            ctx.arrays.hardware_ids.index(pts["hardware"][r])), BASES.index(b)))]
        raise InvalidInputError(f"hardware={pts['hardware'][r]} has no {tier} rate in accelerators.csv (tiers with a "
                                f"rate: {', '.join(have) or 'none'}){_row_note(r, n)}")


def _result_columns(points, out: dict, want, prec_code, kv_code, basis_code, profile_labels):
    """Each wanted result column as ``(name, kind, payload)``, for both frame builders.

    kind: "text" (a String Series), "labels" ((int codes, names)), "int_or_null" (float array, NaN -> null,
    Int64), "int" (Int64), "value" ((array, whether NaN becomes null)).
    """
    label_names = {"precision": prec.PRECISIONS, "kv_precision": tuple(prec.KV_BYTES_PER_ELEMENT), "basis": BASES,
                   "binding_wall": WALLS, "infeasible_reason": REASONS, "weight_format": FORMATS,
                   "expert_weight_format": FORMATS, "spec_method": SPEC_METHODS, "efficiency_profile": profile_labels}
    given_codes = {"precision": prec_code, "kv_precision": kv_code, "basis": basis_code}
    for c in want:
        if c in ("model", "hardware"):
            yield c, "text", points[c].cast(pl.String)
        elif c == "layout":
            yield c, "text", _layout_column(out)
        elif c in label_names:
            codes = np.asarray(given_codes[c] if c in given_codes else out[c], dtype=np.int64)
            if c == "efficiency_profile":  # code -1 = "assumed", the last label
                codes = np.where(codes < 0, len(profile_labels) - 1, codes)
            yield c, "labels", (codes, label_names[c])
        elif c == "max_batch_size":
            yield c, "int_or_null", out[c]
        elif c in _INT_COLUMNS:
            yield c, "int", out[c]
        else:
            v = out[c]
            yield c, "value", (v, v.dtype == np.float64 and (c not in _UNGATED or c in _LAYOUT_GATED))


def _result_frame(points, out: dict, want, prec_code, kv_code, basis_code, need_layout, arrays) -> pl.DataFrame:
    """Assemble the result frame from the block outputs: labels from codes, whole numbers as Int64, NaN -> null.

    Every NaN in ``out`` was put there for an infeasible row (or a layout-less one); non-finite physics
    was refused block by block (:func:`_evaluate_block`), so NaN -> null loses nothing.
    """
    columns = _result_columns(points, out, want, prec_code, kv_code, basis_code,
                              tuple(arrays.profile_ids) + ("assumed",))
    if points.height <= _SMALL_FRAME_ROWS:
        return _small_result_frame(points.height, columns)
    cols = []
    for c, kind, payload in columns:
        if kind == "text":
            cols.append(payload)
        elif kind == "labels":
            cols.append(_labels(c, *payload))
        elif kind == "int_or_null":
            cols.append(pl.Series(c, payload, nan_to_null=True).cast(pl.Int64))
        elif kind == "int":
            cols.append(pl.Series(c, payload.astype(np.int64)))
        else:
            cols.append(pl.Series(c, payload[0], nan_to_null=payload[1]))
    return pl.DataFrame(cols)


_SMALL_FRAME_ROWS = 16
"""Up to this many rows the result frame is built from Python rows with a fixed schema (~0.2 ms for ~90
columns) instead of one Polars Series per column (~1.5 ms); equal frames (tests/engine/test_engine_small_frame.py)."""


def _small_result_frame(n_rows: int, columns) -> pl.DataFrame:
    """:func:`_result_frame` for a few rows: the same columns (:func:`_result_columns`), dtypes and nulls,
    built row-wise."""
    lists: list[list] = []
    schema: dict[str, pl.DataType] = {}
    for c, kind, payload in columns:
        if kind == "text":
            lists.append(payload.to_list())
            schema[c] = pl.String
        elif kind == "labels":
            codes, names = payload
            lists.append([names[i] for i in codes.tolist()])
            schema[c] = pl.String
        elif kind == "int_or_null":
            lists.append([None if x != x else int(x) for x in payload.tolist()])
            schema[c] = pl.Int64
        elif kind == "int":
            lists.append(payload.astype(np.int64).tolist())
            schema[c] = pl.Int64
        else:
            v, nulls = payload
            if v.dtype == np.bool_:
                schema[c] = pl.Boolean
                lists.append(v.tolist())
            elif v.dtype.kind in "iu":
                schema[c] = pl.Int64
                lists.append(v.astype(np.int64).tolist())
            else:
                schema[c] = pl.Float64
                vals = v.astype(np.float64).tolist()
                lists.append([None if x != x else x for x in vals] if nulls else vals)
    names = list(schema)
    return pl.DataFrame([dict(zip(names, r)) for r in zip(*lists)], schema=schema, orient="row") \
        if n_rows else pl.DataFrame(schema=schema)


def _labels(name: str, codes: np.ndarray, names) -> pl.Series:
    """String column from integer codes into ``names``."""
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size <= 256:  # a few rows: a Python lookup beats a Polars gather
        return pl.Series(name, [names[i] for i in codes.tolist()], dtype=pl.String)
    return pl.Series(name, list(names), dtype=pl.String).gather(codes)


def _layout_column(out: dict) -> pl.Series:
    """Layout labels, built once per distinct layout and broadcast back (not once per row)."""
    return layout_labels(*(out[k] for k in ("tp", "dp", "ep", "pp")), out["disaggregated"],
                         *(out[k] for k in ("prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp", "prefill_instances",
                                            "decode_instances")))


__all__ = ["evaluate", "efficiency", "profile_band", "profile_names", "default_speculation", "resolve_formats", "tier_rate", "run", "run_physics", "run_costs", "run_status", "sweet_spot", "catalog_arrays",
           "CatalogArrays", "EngineInputs", "Workload", "Serving", "CostInputs", "Physics", "Costs",
           "RESULT_COLUMNS", "REASONS", "MODES", "BASES", "ECONOMIC_COLUMNS", "MAX_BATCH", "MAX_CONTEXT",
           "MAX_PARALLEL"]
