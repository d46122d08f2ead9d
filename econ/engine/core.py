"""The engine's chain on typed bundles: decode, prefill, capacity, serving, queue and cost of a block of rows.

Like pvlib's ``ModelChain.run_model``, :func:`run` is a short list of named steps, each a call of a pure
kernel (:mod:`econ.physics`, :mod:`econ.economics`): :func:`run_physics` (KV bytes, capacity wall, decode
step, prefill throughput and TTFT, aggregated or disaggregated serving, the percentile queue), then
:func:`run_costs` ($/GPU-hour of the row's cost tier -> $/M input, output, blended and all-in output tokens),
then :func:`run_status` (feasible or the reason, and the binding wall). Inputs are the typed per-row arrays
of :mod:`econ.physics.inputs` bundled in :class:`EngineInputs` and :class:`CostInputs`; callers validate
first (:func:`econ.engine.frame.evaluate` does it for frames).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from econ import units
from econ.physics.architecture import kv_bytes_per_sequence, kv_bytes_read_per_query
from econ.assumptions import (DEFAULT, DEFAULT_DEPLOYMENT, Assumptions, DeploymentAssumptions,
                              Economics)
from econ.physics.communication import indicator, kv_transfer_time_s
from econ.physics.deployment import size_pools
from econ.physics.kv_tiers import place_kv, transfer_time_s
from econ.physics.long_context import ring_attention_prefill_s
from econ.physics.inputs import Efficiency, Formats, HardwareFacts, Layout, ModelFacts, Speculation
from econ.physics.memory import (batch_in_pool, kv_pool_bytes, kv_pool_bytes_per_gpu, kv_replication,
                                 kv_rule_reserved_bytes, weight_bytes_resident)
from econ.physics.performance import (Collectives, DecodeConstants, DecodeStep, PrefillConstants, PrefillStep,
                                      peer_link_bytes_per_s, prefill_dispatch_s,
                                      collectives, crossover_batch, decode_constants, decode_step, prefill_constants,
                                      prefill_step)
from econ.economics.pricing import usd_per_m_blended_tokens, usd_per_m_tokens
from econ.physics.serving import prefill_wait_quantile_s, tpot_tail_at_percentile
from econ.economics.tco import gpu_hour_cost_components, usd_per_gpu_hour_rented
from econ.vocabulary import TIER_SPECS, TIERS, Reason, Tier, tier_code

_OWNED = tier_code(Tier.OWNED)

ECONOMIC_COLUMNS = ("usd_per_kwh", "pue", "build_usd_per_mw_it", "cost_of_capital_frac",
                    "accelerator_life_years", "facility_life_years", "opex_frac_of_capex_per_year",
                    "utilization_frac", "input_output_mix", "cache_hit_frac", "cached_input_cost_frac")



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
    prompt_len_cv : [-] coefficient of variation of prompt lengths (0 = every prompt input_len tokens)
    """

    batch_size: np.ndarray
    input_len: np.ndarray
    output_len: np.ndarray
    decode_context_tokens: np.ndarray
    capacity_context_tokens: np.ndarray
    prefill_tokens: np.ndarray
    arrival_rate_per_s: np.ndarray
    prompt_len_cv: np.ndarray | float = 0.0


@dataclass(slots=True)
class Serving:
    """How each row serves its traffic.

    Attributes
    ----------
    disaggregated : 0/1 (float) prefill on its own pool of instances (xPyD)
    prefill : Layout of one prefill instance (equal to the decode layout when aggregated)
    prefill_instances, decode_instances : [-] x and y of an xPyD unit, NaN = size them (:func:`size_pools`)
    cp : [ranks] context-parallel degree of a prompt's prefill: ``cp`` copies of the prefill instance split the
        prompt and pass KV blocks in a ring over scale-out (:func:`econ.physics.long_context.ring_attention_prefill_s`;
        1 = off, the default)
    """

    disaggregated: np.ndarray
    prefill: Layout
    prefill_instances: np.ndarray
    decode_instances: np.ndarray
    cp: np.ndarray | float = 1.0


@dataclass(slots=True)
class KvTiers:
    """Where each row's KV cache may live beyond HBM (issue 22.2; ``data/kv_tiers.csv`` per accelerator system).

    Attributes
    ----------
    offload_code : int array, index into :data:`econ.vocabulary.KV_OFFLOAD_CHOICES`: 0 HBM only, 1 spill to host
        memory, 2 spill to host memory then local NVMe (the spill order of NVIDIA Dynamo KVBM, LMCache, Mooncake)
    prefix_tier_code : int array, index into :data:`econ.physics.kv_tiers.TIERS`: where a cached prompt prefix
        lives (0 = HBM: no transfer); -1 = no prefix-cache physics (the prompt is prefilled whole and the
        ``cache_hit_frac`` share of it is not charged: the engine's rule before issue 22, the default)
    capacity_bytes : array (rows, 3) [B per accelerator], host, NVMe, remote (inf = unbounded)
    read_bytes_per_s : array (rows, 3) [B/s per accelerator], each tier's read bandwidth to the accelerator
    usd_per_gb_hour : array (rows, 3) [USD per GB-hour], each tier's storage price
    """

    offload_code: np.ndarray
    prefix_tier_code: np.ndarray
    capacity_bytes: np.ndarray
    read_bytes_per_s: np.ndarray
    usd_per_gb_hour: np.ndarray


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
    tiers: KvTiers | None = None
    """KV-cache tiers beyond HBM (None = HBM only, no prefix transfer: the default)."""
    combos: tuple[np.ndarray, np.ndarray] | None = None
    """(a row of each distinct combination, each row's combination index): rows of one combination have equal
    ``model``, ``hardware``, ``layout``, ``formats`` and ``eff`` (the engine builds it from its codes, issue 20.2), so
    the decode and prefill constants and the collectives are computed on one row per combination and broadcast, and the
    prefill steps once per distinct (combination, prompt, prompts per step, KV bytes) (:func:`_prefill_steps`).
    None = per row."""


@dataclass(slots=True)
class CostInputs:
    """Economics of each row (:class:`econ.assumptions.Economics` fields, per row), and the cost basis.

    Attributes
    ----------
    basis_code : int array, index into :data:`econ.vocabulary.TIERS`
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
    tier_usd_per_gpu_hour: np.ndarray | None = None
    """:func:`tier_rate` of each row when the caller already looked it up (None: run_costs looks it up)."""

    @classmethod
    def from_economics(cls, economics: Economics, n: int) -> "CostInputs":
        """One economics for ``n`` rows."""
        return cls(basis_code=np.full(n, tier_code(economics.basis)),
                   usd_per_gpu_hour=np.full(n, np.nan if economics.usd_per_gpu_hour is None
                                            else float(economics.usd_per_gpu_hour)),
                   **{k: np.full(n, float(getattr(economics, k))) for k in ECONOMIC_COLUMNS})

    @property
    def owned(self) -> np.ndarray:
        """True where $/GPU-hour comes from the owned capex chain."""
        return self.basis_code == _OWNED


@dataclass(slots=True)
class Physics:
    """What :func:`run_physics` returns for a block of rows.

    Attributes
    ----------
    decode : DecodeStep of the decode instance at ``batch_size``
    prefill : PrefillStep of the prefill instance, prompts batched up to the prefill chunk (throughput)
    ttft_s : [s] the request's own prompt prefilled alone (one per attention group; no queueing), at least the host's
        dispatch of the prefill pass (:func:`econ.physics.performance.prefill_dispatch_s`)
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
        rate: the lone prompt's prefill + KV transfer + the chunked FIFO prefill queue's wait (M/G/c,
        :func:`econ.physics.serving.prefill_wait_quantile_s`)
    tpot_percentile_s : [s] served TPOT x ``eff.tpot_tail_factor`` scaled to ``Assumptions.latency_percentile``
        (econ.physics.serving.tpot_tail_at_percentile)
    prefill_utilization_frac : [-] busy share of the prefill servers (their queue's rho)
    max_batch_size_hbm : [sequences] the capacity wall with the KV in HBM only (= max_batch_size without offload)
    kv_offload_frac : [-] share of the decode batch's KV held beyond HBM (host, NVMe)
    kv_offload_s : [s] per decode step, reading that KV from its tiers (added to the step)
    kv_tier_usd_per_gpu_hour : [USD per accelerator-hour] storage of that KV at the tiers' $/GB-hour
    prefix_load_s : [s] loading a cached prefix from its tier before the suffix's prefill (0 in HBM)
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
    max_batch_size_hbm: np.ndarray | float = np.nan
    kv_offload_frac: np.ndarray | float = 0.0
    kv_offload_s: np.ndarray | float = 0.0
    kv_tier_usd_per_gpu_hour: np.ndarray | float = 0.0
    prefix_load_s: np.ndarray | float = 0.0


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
    billed_input_tokens_per_s_per_gpu: np.ndarray
    billed_output_tokens_per_s_per_gpu: np.ndarray


# ----------------------------------------------------------------------------------------------------
# Physics and cost of a block (arrays in, typed bundles out)
# ----------------------------------------------------------------------------------------------------

def _kv_bytes(context_tokens, model: ModelFacts, formats: Formats):
    """KV-cache bytes a sequence of ``context_tokens`` holds (indexer keys included). [B]"""
    return kv_bytes_per_sequence(context_tokens, model.kv_elements_per_token_per_layer, formats.kv_bytes_per_element,
                                 model.num_global_layers, model.num_sliding_layers, model.sliding_window_tokens,
                                 model.indexer_bytes_per_token_per_layer)


def _kv_read(context_tokens, model: ModelFacts, formats: Formats):
    """KV-cache bytes one decoded token of a sequence at ``context_tokens`` reads (sparse attention: its top-k). [B]"""
    return kv_bytes_read_per_query(context_tokens, model.kv_elements_per_token_per_layer, formats.kv_bytes_per_element,
                                   model.num_global_layers, model.num_sliding_layers, model.sliding_window_tokens,
                                   model.index_topk, model.indexer_bytes_per_token_per_layer)


def _decode(inp: EngineInputs, batch_size, kv_dec, repl, stream: bool, comm=None, const=None) -> DecodeStep:
    return decode_step(batch_size=batch_size, context_tokens=inp.workload.decode_context_tokens,
                       kv_bytes_per_sequence=kv_dec, kv_replication=repl, model=inp.model, hardware=inp.hardware,
                       layout=inp.layout, formats=inp.formats, eff=inp.eff, stream_input_embedding=stream, comm=comm,
                       spec=inp.spec, const=const)


def take_bundle(bundle, index):
    """A dataclass of arrays (nested bundles included) restricted to ``index``; scalars and 0-d arrays stay."""
    out = {}
    for f in fields(bundle):
        v = getattr(bundle, f.name)
        out[f.name] = (take_bundle(v, index) if hasattr(v, "__dataclass_fields__") else
                       v[index] if isinstance(v, np.ndarray) and v.ndim else v)
    return type(bundle)(**out)


def _leaves(bundle, path: tuple, out: list) -> None:
    """Append ``(path, array)`` for every non-scalar array leaf of a (nested) dataclass bundle."""
    for f in fields(bundle):
        v = getattr(bundle, f.name)
        if hasattr(v, "__dataclass_fields__"):
            _leaves(v, path + (f.name,), out)
        elif isinstance(v, np.ndarray) and v.ndim:
            out.append((path + (f.name,), v))


def _rebuild(bundle, path: tuple, values: dict):
    """A copy of ``bundle`` whose array leaves are ``values[path]`` (others kept)."""
    out = {}
    for f in fields(bundle):
        v = getattr(bundle, f.name)
        key = path + (f.name,)
        out[f.name] = _rebuild(v, key, values) if hasattr(v, "__dataclass_fields__") else values.get(key, v)
    return type(bundle)(**out)


def _broadcast(bundle, index):
    """``bundle`` (per combination) broadcast to the rows ``index``: a leaf equal for every combination becomes that
    scalar (the arithmetic on it is the same, without a row array), the others are gathered in one fancy index."""
    leaves: list = []
    _leaves(bundle, (), leaves)
    values, varying = {}, []
    for path, v in leaves:
        if v.shape[0] == 1 or bool((v == v[0]).all()):
            values[path] = v.dtype.type(v[0]) if v.ndim == 1 else v[0]
        else:
            varying.append((path, v))
    if varying:
        rows = np.stack([v.astype(float) for _, v in varying])[:, index]
        for (path, v), r in zip(varying, rows):
            values[path] = r if v.dtype == np.float64 else r.astype(v.dtype)
    return _rebuild(bundle, (), values)


def combination_terms(inp: EngineInputs, stream: bool, eff_per_combination: bool = False
                      ) -> tuple[Collectives, DecodeConstants]:
    """The collectives (``inp.comm``'s rows when given) and decode constants of one row of each distinct combination
    of ``inp.combos`` (arrays of the combinations' length, not broadcast): the per-combination terms that
    :func:`_per_combination` broadcasts to the rows and :mod:`econ.engine.fused` indexes per row (issue 20.2, 20.3).
    ``inp.combos`` must not be None; ``eff_per_combination``: ``inp.eff`` holds the combinations' rows already."""
    rows, _ = inp.combos
    hw, lay = take_bundle(inp.hardware, rows), take_bundle(inp.layout, rows)
    eff = inp.eff if eff_per_combination else take_bundle(inp.eff, rows)
    const = decode_constants(take_bundle(inp.model, rows), hw, lay, take_bundle(inp.formats, rows), eff, stream)
    return (collectives(hw, lay, eff) if inp.comm is None else take_bundle(inp.comm, rows)), const


def _per_combination(inp: EngineInputs, stream: bool) -> tuple[Collectives, DecodeConstants | None]:
    """The block's collectives (``inp.comm`` when given) and decode constants (None: decode_step computes them per
    row), each computed once per distinct combination of ``inp.combos`` and broadcast to the rows (issue 20.2)."""
    if inp.combos is None:
        comm = collectives(inp.hardware, inp.layout, inp.eff) if inp.comm is None else inp.comm
        return comm, None
    _, index = inp.combos
    comm_c, const = combination_terms(inp, stream)
    comm = _broadcast(comm_c, index) if inp.comm is None else inp.comm
    return comm, _broadcast(const, index)


def _prefill_constants(inp: EngineInputs, stream: bool) -> PrefillConstants | None:
    """:func:`econ.physics.performance.prefill_constants` of the decode instance, computed once per distinct combination
    of ``inp.combos`` and broadcast to the rows (issue 20.2); None without combinations (prefill_step computes them
    per row)."""
    if inp.combos is None:
        return None
    rows, index = inp.combos
    const = prefill_constants(take_bundle(inp.model, rows), take_bundle(inp.hardware, rows),
                              take_bundle(inp.layout, rows), take_bundle(inp.formats, rows),
                              take_bundle(inp.eff, rows), stream)
    return _broadcast(const, index)


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
    if not np.any(code):  # no row drafts (the common case): skip the per-row arithmetic
        return 0.0, 0.0
    routed = m.num_experts * m.routed_expert_params * np.minimum(m.num_moe_layers, 1.0)
    mtp_nr = (m.mtp_module_params - routed) * fm.weight_bytes_per_param
    nr = np.where(code == 1, mtp_nr, np.where(code == 2, m.draft_head_params * fm.weight_bytes_per_param,
                                              np.where(code == 3, sp.draft_params * fm.weight_bytes_per_param, 0.0)))
    return nr, np.where(code == 1, routed * fm.expert_bytes, 0.0)


def _kv_offload(tiers: KvTiers, n, free_hbm_bytes, kv_cap, kv_dec, repl, batch):
    """Spill of the decode batch's KV beyond HBM: (max batch, offload share, step time added, tier $/GPU-hour).

    Parameters
    ----------
    tiers : KvTiers; n : [accelerators] of the instance; free_hbm_bytes : [B] usable HBM beside the weights
    kv_cap : [B] one sequence's KV at its capacity context; kv_dec : [B] KV one decoded token reads; repl : [-]
    batch : [sequences]

    Returns
    -------
    (max_batch [sequences], offload_frac [-], offload_s [s per step], usd_per_gpu_hour [USD/h], kv_hbm_bytes [B]: the
    batch's KV left in HBM, whole instance)

    Notes
    -----
    Placement fills HBM, then host memory, then NVMe (:func:`econ.physics.kv_tiers.place_kv`; the order of NVIDIA
    Dynamo KVBM G1-G3, LMCache, Mooncake Store); the capacity wall rises by the allowed tiers' capacity. Every
    sequence of a continuous batch decodes every step, so each step reads the spilled share of the batch's KV from its
    tier: bytes per accelerator / the tier's read bandwidth (:func:`econ.physics.kv_tiers.transfer_time_s`), added to
    the step, not overlapped with it. That is the conservative reading of layer-wise prefetch (FlexGen, Sheng et al.
    ICML 2023, overlaps it; LMCache and Dynamo KVBM pipeline it layer by layer): at 63-225 GB/s against 3-8 TB/s of
    HBM the transfer is most of the step either way, so overlap changes the answer by at most the HBM step. Storage is
    charged at the tier's $/GB-hour (``data/kv_tiers.csv``) for the bytes held, per accelerator-hour.
    """
    code = np.asarray(tiers.offload_code)
    n = np.asarray(n, dtype=float)
    allowed = np.stack([code >= 1, code >= 2], axis=-1)
    cap_off = np.where(allowed, n[..., None] * tiers.capacity_bytes[..., :2], 0.0)
    free = np.maximum(np.asarray(free_hbm_bytes, dtype=float), 0.0)
    cap = np.concatenate([free[..., None], cap_off], axis=-1)
    per_seq = kv_cap * repl
    max_b = np.floor(cap.sum(axis=-1) / per_seq)
    held = np.minimum(batch, max_b)
    working = held * per_seq
    placed, _ = place_kv(working, cap)
    frac = placed[..., 1:] / np.maximum(working, 1.0)[..., None]
    read = batch * kv_dec * repl / n  # KV bytes one step reads per accelerator
    off_s = transfer_time_s(frac * read[..., None], tiers.read_bytes_per_s[..., :2]).sum(axis=-1)
    usd_h = (placed[..., 1:] / n[..., None] / units.BYTES_PER_GB * tiers.usd_per_gb_hour[..., :2]).sum(axis=-1)
    return max_b, frac.sum(axis=-1), off_s, usd_h, placed[..., 0]


def replica_weights(inp: EngineInputs):
    """Weight bytes of a decode instance's replica: (resident, non-routed, routed incl. redundant experts, the replica
    with non-routed weights copied to each of its dp attention groups). [B] each; the speculative head included.

    Notes
    -----
    Non-routed weights are replicated over the dp attention groups, routed experts are sharded (DESIGN.md
    "Capacity"); redundant hot experts add ``redundant_experts / num_experts`` of the routed weights."""
    m, fm, lay = inp.model, inp.formats, inp.layout
    head_nr, head_routed = _head_bytes(inp)
    w_res = _resident(m, fm) + head_nr + head_routed
    slots = (m.num_experts + lay.redundant_experts) / np.maximum(m.num_experts, 1.0)
    routed_res = (m.routed_params_total * fm.expert_bytes + head_routed) * slots  # + redundant hot experts
    nr_res = w_res - m.routed_params_total * fm.expert_bytes - head_routed
    return w_res, nr_res, routed_res, nr_res * lay.dp + routed_res


def _slowed(d: DecodeStep, extra_s) -> DecodeStep:
    """``d`` with ``extra_s`` of memory time added to every step (rates scaled by the step's growth)."""
    grow = (d.step_s + extra_s) / d.step_s
    return replace(d, t_mem_s=d.t_mem_s + extra_s, step_s=d.step_s + extra_s, tpot_s=d.tpot_s * grow,
                   tokens_per_s_per_user=d.tokens_per_s_per_user / grow,
                   output_tokens_per_s_per_gpu=d.output_tokens_per_s_per_gpu / grow,
                   binding_wall_code=np.where(extra_s > 0, 1, d.binding_wall_code))


def kv_pool_per_gpu(model: ModelFacts, hbm_capacity_bytes, weight_bytes_per_gpu, tp, dp, ep,
                    assumptions: Assumptions):
    """KV-cache pool of one accelerator under ``assumptions.kv_memory_rule``
    (:func:`econ.physics.memory.kv_pool_bytes_per_gpu` with :func:`econ.physics.memory.kv_rule_reserved_bytes`).

    Parameters
    ----------
    model : ModelFacts of the rows (``econ.engine.catalog_arrays(catalog).model_facts`` for model ids)
    hbm_capacity_bytes, weight_bytes_per_gpu : scalar or array [B]
    tp, dp, ep : scalar or array, the instance's attention TP, attention-DP ranks and EP ranks [-]
    assumptions : Assumptions (``usable_hbm_frac``, ``kv_memory_rule``, ``prefill_chunk_tokens``: TensorRT-LLM's
        max_num_tokens, the tokens its activations are sized for)

    Returns
    -------
    ndarray [B] (negative under "total" where the weights do not fit)
    """
    a = assumptions
    reserved = kv_rule_reserved_bytes(a.kv_memory_rule, a.prefill_chunk_tokens, model, tp, dp, ep)
    return kv_pool_bytes_per_gpu(hbm_capacity_bytes, weight_bytes_per_gpu, a.usable_hbm_frac,
                                 a.kv_memory_rule == "free", reserved)


def kv_pool(model: ModelFacts, hardware: HardwareFacts, layout: Layout, weight_bytes, assumptions: Assumptions):
    """KV-cache pool of an instance (:func:`econ.physics.memory.kv_pool_bytes`: its accelerators x
    :func:`kv_pool_per_gpu`, the instance's resident weights ``weight_bytes`` (:func:`replica_weights`) [B] spread
    evenly over them). [B]"""
    a = assumptions
    reserved = kv_rule_reserved_bytes(a.kv_memory_rule, a.prefill_chunk_tokens, model, layout.tp, layout.dp, layout.ep)
    return kv_pool_bytes(layout.num_gpus, hardware.hbm_capacity_bytes, a.usable_hbm_frac, weight_bytes,
                         a.kv_memory_rule == "free", reserved)


def run_physics(inp: EngineInputs, assumptions: Assumptions = DEFAULT,
                deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT, *, sweet_spot: bool = False,
                decode_only: bool = False, queue: bool = True) -> Physics:
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
    queue : bool, solve the percentile prefill queue (False: ``ttft_percentile_s`` and ``prefill_utilization_frac``
        come back NaN; the caller asks for neither)

    Returns
    -------
    Physics

    Notes
    -----
    Capacity: weights / N + B kv repl / N <= usable HBM (DESIGN.md "Capacity"), with non-routed weights
    replicated over the dp attention groups; under ``kv_memory_rule`` "free" (TensorRT-LLM) the pool is the usable
    share of what the weights, activations and runtime leave free (:func:`kv_pool`). Aggregated serving pays, per
    decode step, for the prompts of the B / output_len requests that finish per step; disaggregated serving moves
    each prompt's KV cache between the pools (alpha-beta on scale-up when both pools fit in one domain, else
    scale-out) and sizes x prefill and y decode instances (:func:`econ.physics.deployment.size_pools`).

    Issue 22, each off by default: with ``inp.tiers`` offloading, the decode KV fills HBM then host memory then NVMe
    and every step reads the offloaded share (:func:`_kv_offload`); with a prefix-cache tier, the prompt's new
    tokens are prefilled attending to the cached prefix (:func:`econ.physics.performance.prefill_step`'s
    ``prefix_tokens``) after loading it from its tier (:func:`_prefix_load_s`); with ``serving.cp`` > 1 the lone
    prompt's TTFT is split over cp ranks by ring attention (:func:`_context_parallel_s`) and the prefill throughput
    per accelerator scales by the parallel efficiency.
    """
    a, da = assumptions, deployment
    m, hw, lay, fm, wl, sv = inp.model, inp.hardware, inp.layout, inp.formats, inp.workload, inp.serving
    tp, dp, pp = lay.tp, lay.dp, lay.pp
    n = lay.num_gpus
    batch = wl.batch_size
    w_res, nr_res, routed_res, replica_w = replica_weights(inp)
    repl = kv_replication(tp, m.kv_shard_heads)
    kv_cap = _kv_bytes(wl.capacity_context_tokens, m, fm)
    kv_dec = _kv_read(wl.decode_context_tokens, m, fm)
    comm, const = _per_combination(inp, a.stream_input_embedding)  # alpha-beta coefficients, decode constants
    d = _decode(inp, batch, kv_dec, repl, a.stream_input_embedding, comm, const)
    pool = kv_pool(m, hw, lay, replica_w, a)
    max_b = batch_in_pool(pool, kv_cap, repl)
    max_b_hbm, off = max_b, None
    if inp.tiers is not None and np.any(inp.tiers.offload_code > 0):  # KV beyond HBM (issue 22.2); off by default
        max_b, off_frac, off_s, off_usd, kv_hbm = _kv_offload(inp.tiers, n, pool, kv_cap, kv_dec, repl, batch)
        d = _slowed(d, off_s)
        off = dict(kv_offload_frac=off_frac, kv_offload_s=off_s, kv_tier_usd_per_gpu_hour=off_usd,
                   kv_bytes_per_gpu=kv_hbm / n, hbm_used_frac=(replica_w + kv_hbm) / (n * hw.hbm_capacity_bytes))

    if decode_only:
        phys = _decode_only_physics(inp, d, lay, w_res, nr_res, routed_res, replica_w, repl, kv_cap, max_b, batch)
        return _with_offload(phys, max_b_hbm, off)

    kv_prompt = _kv_bytes(wl.input_len, m, fm)  # one prompt's KV cache (prefill side only)
    # prefill: on the instance itself (aggregated) or on the prefill pool's instance (disaggregated)
    dis = sv.disaggregated
    if sv.prefill is lay or not np.any(dis):
        pl_, p_comm = lay, comm
    else:
        pl_ = Layout(*(dis * getattr(sv.prefill, k) + (1.0 - dis) * getattr(lay, k) for k in ("tp", "dp", "ep", "pp")),
                     scale_up_domain_size=lay.scale_up_domain_size, two_batch_overlap=lay.two_batch_overlap)
        p_comm = None  # collectives(hw, pl_, inp.eff): per distinct prefill step, else per row (below)
    p_repl = kv_replication(pl_.tp, m.kv_shard_heads)
    pn = pl_.num_gpus
    p_max_b = batch_in_pool(kv_pool(m, hw, pl_, nr_res * pl_.dp + routed_res, a), kv_prompt, p_repl)
    # with a prefix-cache tier, a hit prefills only the new tokens, each attending to the cached prefix (issue 22.2);
    # without one (the default), the prompt is prefilled whole and the hit's share is simply not charged
    tiers = inp.tiers
    new_tok, prefix = wl.input_len, 0.0
    if tiers is not None and np.any(tiers.prefix_tier_code >= 0):
        new_tok = np.where(tiers.prefix_tier_code >= 0, np.minimum(wl.prefill_tokens, wl.input_len), wl.input_len)
        prefix = wl.input_len - new_tok
    req = np.maximum(a.prefill_chunk_tokens / new_tok, 1.0)
    req = dis * np.maximum(np.minimum(req, np.floor(p_max_b / pl_.dp)), 1.0) + (1.0 - dis) * req

    def pre(requests, tokens=new_tok, cached=prefix, busy=None) -> PrefillStep:
        return prefill_step(prompt_tokens=tokens, requests_per_step=requests,
                            kv_bytes_per_sequence=kv_prompt * p_repl, model=m, hardware=hw, layout=pl_, formats=fm,
                            eff=inp.eff, stream_input_embedding=a.stream_input_embedding, comm=p_comm,
                            prefix_tokens=cached, const=p_const, busy_groups=busy)

    kv_pre = kv_prompt * p_repl
    steps = _prefill_steps(inp, a, m, hw, pl_, fm, p_comm, new_tok, req, kv_pre, prefix)
    # the prefill constants once per combination where the prefill instance is the decode one (None: per row)
    p_const = _prefill_constants(inp, a.stream_input_embedding) if steps is None and pl_ is lay else None
    if steps is None and p_comm is None:
        p_comm = collectives(hw, pl_, inp.eff)
    if steps is None:  # rows' own prefill steps
        p = pre(req)  # throughput: prompts batched up to prefill_chunk_tokens per attention group
        lone = pre(np.ones_like(req), busy=1.0)  # the request's own prompt alone, one group's (queueing not modeled)
    else:  # each distinct prefill step once, gathered to its rows (issue 20.2)
        p, lone = steps
    ttft = lone.time_s
    cp = sv.cp
    if np.any(np.asarray(cp) > 1):  # context parallelism: cp ranks split the prompt, ring attention (issue 22.3)
        t_cp = _context_parallel_s(lone, cp, kv_prompt * p_repl / pn, hw, a)
        p = replace(p, input_tokens_per_s_per_gpu=p.input_tokens_per_s_per_gpu * ttft / (cp * t_cp))
        ttft = t_cp
    # the first token waits for the host's dispatch of the eager prefill pass, which runs alongside the GPU's work
    # (a floor of the latency, not of the throughput: prefill_dispatch_s)
    ttft = np.maximum(ttft, prefill_dispatch_s(m.num_layers, inp.eff.prefill_layer_dispatch_s))
    load_s = 0.0
    if tiers is not None and np.any((tiers.prefix_tier_code > 0) & (prefix > 0)):  # a prefix held beyond HBM
        load_s = _prefix_load_s(tiers, _kv_bytes(prefix, m, fm) * p_repl / pn, prefix,
                                lambda: pre(np.ones_like(req), wl.input_len, 0.0 * prefix, 1.0).time_s - lone.time_s)
        ttft = ttft + load_s

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
    # a shard goes from a prefill rank to a decode rank: on a direct mesh over the one link between the two
    link = up * peer_link_bytes_per_s(hw, lay) + (1.0 - up) * hw.scale_out_bandwidth_bytes_per_s
    kv_t = dis * (kv_transfer_time_s(kv_prompt, shards, link, eta=da.kv_transfer_eta,
                                     latency_s=da.kv_transfer_latency_s) + inp.eff.kernel_launch_latency_s)
    kv_frac = dis * served * kv_prompt / np.maximum(x_inst * pn * link * da.kv_transfer_eta, 1e-30)
    held = np.minimum(batch, max_b)
    # Poisson arrivals queue for a prefill server: each aggregated replica serves its own share; the x
    # instances of a disaggregated prefill pool share the unit's stream; chunked FIFO prefill of prompts of
    # input_len tokens (spread prompt_len_cv): M/G/c, Allen-Cunneen (econ.physics.serving)
    servers = np.maximum(dis * x_inst + (1.0 - dis), 1.0)
    lam_q = np.where(dis > 0, served, served / np.maximum(y_inst, 1.0))
    if queue:
        wait = prefill_wait_quantile_s(lam_q, rate_p, servers, a.latency_percentile / 100.0, wl.prompt_len_cv)
        ttft_q, util_q = ttft + kv_t + wait, np.minimum(lam_q / (servers * rate_p), 1.0)
    else:
        ttft_q = util_q = np.full(np.shape(served), np.nan)
    phys = Physics(
        ttft_percentile_s=ttft_q,
        tpot_percentile_s=served_tpot * tpot_tail_at_percentile(inp.eff.tpot_tail_factor, a.latency_percentile),
        prefill_utilization_frac=util_q,
        decode=d, prefill=p, ttft_s=ttft, prefill_layout=pl_, weight_bytes=w_res,
        weight_bytes_per_gpu=(nr_res / tp + routed_res / lay.stage_gpus) / pp, kv_bytes_per_sequence=kv_cap,
        kv_replication=repl, max_batch_size=max_b, prefill_max_batch_size=p_max_b,
        kv_bytes_per_gpu=held / dp * kv_cap * repl / (tp * pp),
        hbm_used_frac=(replica_w + held * kv_cap * repl) / (n * hw.hbm_capacity_bytes),
        prefill_stall_s=stall, served_tpot_s=served_tpot, served_ttft_s=ttft + kv_t,
        served_tokens_per_s_per_user=1.0 / served_tpot, kv_transfer_bytes=dis * kv_prompt, kv_transfer_s=kv_t,
        kv_link_frac=kv_frac, prefill_instances=x_inst, decode_instances=y_inst, total_gpus=total,
        served_requests_per_s=served, pool_utilization_frac=util,
        served_output_tokens_per_s_per_gpu=served * s_out / total, prefix_load_s=load_s + 0.0 * ttft)
    return _with_offload(phys, max_b_hbm, off)


def _prefill_steps(inp: EngineInputs, a: Assumptions, m: ModelFacts, hw: HardwareFacts, pl_: Layout, fm: Formats,
                   p_comm: Collectives | None, new_tok, req, kv_pre, prefix):
    """The throughput and lone-prompt :class:`PrefillStep` of :func:`run_physics`, each computed once per distinct
    prefill of the block and gathered to its rows, or None (the rows' own steps are computed instead).

    A prefill step is elementwise in its row inputs: the combination (``inp.combos``: equal model, hardware, decode
    layout, formats and efficiencies), the prefill instance's tp, dp, ep and pp (the decode layout's unless the row is
    disaggregated; its collectives, ``p_comm``, follow: None = computed here for the distinct steps), and the prompt
    tokens, prompts per step, KV bytes per prompt and cached prefix. The distinct prefills are the combinations
    refined by those arrays (a grid over batch and context has one per combination), so the result equals the per-row
    step bit for bit. None without combinations, or where the distinct prefills are more than half the rows (nothing
    to gain).
    """
    if inp.combos is None:
        return None
    rows, index = inp.combos
    shape = np.shape(index)
    code = index
    varying = [new_tok, req, kv_pre] + ([] if pl_ is inp.layout else [pl_.tp, pl_.dp, pl_.ep, pl_.pp]) \
        + ([prefix] if np.ndim(prefix) else [])
    for v in varying:
        v = np.broadcast_to(v, shape)
        if np.array_equal(v, v[rows][index]):  # a function of the combination (NaN: refined below)
            continue
        _, inv = np.unique(v, return_inverse=True)
        k = int(inv.max()) + 1
        if int(code.max()) >= (1 << 62) // k:  # renumber the codes (< rows) before they could overflow
            code = np.unique(code, return_inverse=True)[1].ravel()
        code = code * k + inv.ravel()
    if code is not index:
        _, rows, index = np.unique(code, return_index=True, return_inverse=True)
        index = index.ravel()
    if 2 * len(rows) > shape[0]:
        return None

    def at(v):
        return np.broadcast_to(v, shape)[rows]

    kw = dict(prompt_tokens=at(new_tok), kv_bytes_per_sequence=at(kv_pre), model=take_bundle(m, rows),
              hardware=take_bundle(hw, rows), layout=take_bundle(pl_, rows), formats=take_bundle(fm, rows),
              eff=take_bundle(inp.eff, rows), stream_input_embedding=a.stream_input_embedding,
              comm=None if p_comm is None else take_bundle(p_comm, rows),
              prefix_tokens=at(prefix) if np.ndim(prefix) else prefix)
    r = at(req)
    return (take_bundle(prefill_step(requests_per_step=r, **kw), index),
            take_bundle(prefill_step(requests_per_step=np.ones_like(r), busy_groups=1.0, **kw), index))


def _with_offload(phys: Physics, max_b_hbm, off: dict | None) -> Physics:
    """``phys`` with the HBM-only capacity wall and the offload figures (zero without offload); with offload the HBM
    columns (``kv_bytes_per_gpu``, ``hbm_used_frac``) count the KV left in HBM only."""
    phys.max_batch_size_hbm = max_b_hbm + 0.0 * phys.max_batch_size
    if off is None:
        zero = np.zeros(np.shape(phys.max_batch_size))
        phys.kv_offload_frac = phys.kv_offload_s = phys.kv_tier_usd_per_gpu_hour = zero
    else:
        for k, v in off.items():
            setattr(phys, k, v + 0.0 * phys.max_batch_size)
    return phys


def _context_parallel_s(lone: PrefillStep, cp, kv_bytes_per_gpu, hw: HardwareFacts, a: Assumptions):
    """TTFT of a lone prompt split over ``cp`` context-parallel copies of its prefill instance. [s]

    The instance's own prefill of the prompt (``lone``) gives the rank's achieved rates: its attention kernels'
    time ``t_attn_s`` for the attention FLOPs, the rest of the step (linear layers, collectives, overheads) for the
    linear FLOPs; :func:`econ.physics.long_context.ring_attention_prefill_s` splits both over the ranks and hides
    the ring's KV blocks (the prompt's KV per accelerator / cp per step, over the accelerator's scale-out link,
    ``a.scale_out_latency_s`` per step) behind attention (pass-KV, Yang et al. arXiv:2411.01783). The fixed
    per-layer overheads are divided with the linear part (a few ms beside a 100K+ prompt's seconds).
    """
    t_att = np.maximum(lone.t_attn_s, 1e-12)
    t_lin = np.maximum(lone.time_s - lone.t_attn_s, 1e-12)
    att = np.maximum(lone.attention_flop, 1.0)
    lin = np.maximum(lone.prefill_flop - lone.attention_flop, 1.0)
    t, _ = ring_attention_prefill_s(lin, att, cp, lin / t_lin, att / t_att, kv_bytes_per_gpu / cp,
                                    hw.scale_out_bandwidth_bytes_per_s, a.scale_out_latency_s)
    return t


def _prefix_load_s(tiers: KvTiers, prefix_kv_bytes_per_gpu, prefix_tokens, recompute_s):
    """Time to bring a cached prefix into HBM: loaded from its tier or recomputed, whichever is faster. [s]

    ``prefix_kv_bytes_per_gpu`` [B] each accelerator of the prefill instance reads over its own link from the
    tier ``tiers.prefix_tier_code`` (0 = HBM: nothing to load); ``recompute_s`` (a callable, evaluated only here)
    is the whole prompt's prefill minus the suffix's (:func:`econ.physics.kv_tiers.cache_hit_ttft_s`'s rule)."""
    code = np.asarray(tiers.prefix_tier_code)
    bw = np.take_along_axis(tiers.read_bytes_per_s, np.maximum(code - 1, 0)[..., None], axis=-1)[..., 0]
    load = np.where((code > 0) & (prefix_tokens > 0), transfer_time_s(prefix_kv_bytes_per_gpu, bw), 0.0)
    return np.minimum(load, np.maximum(recompute_s(), 0.0))


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
    kv_dec = _kv_read(inp.workload.decode_context_tokens, m, fm)

    comm, const = _per_combination(inp, assumptions.stream_input_embedding)

    def dec(b):
        return _decode(inp, b, kv_dec, repl, assumptions.stream_input_embedding, comm, const)

    return crossover_batch(lambda b: dec(b).t_mem_s, lambda b: dec(b).t_flop_s)


@dataclass(slots=True)
class CostBasis:
    """The physics a cost chain reads (:func:`costs_of`): what :func:`run_costs` takes from :class:`Physics` and
    :class:`EngineInputs`, so a caller can keep it and price the same rows again under other economics without the
    physics (a dashboard rerun that changes only the power price, PUE, utilization or tier).

    Attributes (float arrays of the rows, or scalars that broadcast)
    ----------
    hardware : HardwareFacts (capex, power and tier rates of each row's accelerator)
    disaggregated : 1 where prefill and decode run on separate pools, else 0
    prefill_tokens, output_len : [tokens per request] prompt tokens prefilled and tokens generated
    num_gpus : [accelerators] per decode instance; prefill_num_gpus : per prefill instance
    prefill_instances, decode_instances, total_gpus : the serving unit [instances, instances, accelerators]
    served_requests_per_s : [requests/s] of the unit; pool_utilization_frac : [-] its use of capacity
    input_tokens_per_s_per_gpu : [tokens/s] prefill throughput per accelerator (:class:`PrefillStep`)
    output_tokens_per_s_per_gpu : [tokens/s] decode throughput per accelerator (:class:`DecodeStep`)
    served_output_tokens_per_s_per_gpu : [tokens/s] the unit's output over every accelerator of it
    kv_tier_usd_per_gpu_hour : [USD per accelerator-hour] KV storage beyond HBM (issue 22.2)
    """

    hardware: HardwareFacts
    disaggregated: np.ndarray
    prefill_tokens: np.ndarray
    output_len: np.ndarray
    num_gpus: np.ndarray
    prefill_num_gpus: np.ndarray
    prefill_instances: np.ndarray
    decode_instances: np.ndarray
    total_gpus: np.ndarray
    served_requests_per_s: np.ndarray
    pool_utilization_frac: np.ndarray
    input_tokens_per_s_per_gpu: np.ndarray
    output_tokens_per_s_per_gpu: np.ndarray
    served_output_tokens_per_s_per_gpu: np.ndarray
    kv_tier_usd_per_gpu_hour: np.ndarray | float

    @classmethod
    def of(cls, phys: Physics, inp: EngineInputs, hardware: HardwareFacts) -> "CostBasis":
        """The cost basis of :func:`run_physics` rows (the arrays are shared, not copied)."""
        return cls(hardware=hardware, disaggregated=inp.serving.disaggregated, prefill_tokens=inp.workload.prefill_tokens,
                   output_len=inp.workload.output_len, num_gpus=inp.layout.num_gpus,
                   prefill_num_gpus=phys.prefill_layout.num_gpus, prefill_instances=phys.prefill_instances,
                   decode_instances=phys.decode_instances, total_gpus=phys.total_gpus,
                   served_requests_per_s=phys.served_requests_per_s, pool_utilization_frac=phys.pool_utilization_frac,
                   input_tokens_per_s_per_gpu=phys.prefill.input_tokens_per_s_per_gpu,
                   output_tokens_per_s_per_gpu=phys.decode.output_tokens_per_s_per_gpu,
                   served_output_tokens_per_s_per_gpu=phys.served_output_tokens_per_s_per_gpu,
                   kv_tier_usd_per_gpu_hour=phys.kv_tier_usd_per_gpu_hour)

    def take(self, index) -> "CostBasis":
        """The rows at ``index`` (int array); scalar fields and 1-element arrays (one accelerator) stay as they are."""
        def rows(v):
            return v[index] if isinstance(v, np.ndarray) and v.ndim and v.shape[0] > 1 else v

        hw = HardwareFacts(**{f.name: rows(getattr(self.hardware, f.name)) for f in fields(HardwareFacts)})
        return CostBasis(hardware=hw, **{f.name: rows(getattr(self, f.name)) for f in fields(CostBasis)
                                         if f.name != "hardware"})


def run_costs(phys: Physics, inp: EngineInputs, hardware: HardwareFacts, cost: CostInputs) -> Costs:
    """$/GPU-hour and $/M tokens of :func:`run_physics` rows: :func:`costs_of` their :class:`CostBasis`.

    Parameters
    ----------
    phys : Physics; inp : EngineInputs; hardware : HardwareFacts (capex, power, rental per row)
    cost : CostInputs

    Returns
    -------
    Costs [USD per utilized GPU-hour, USD/M tokens]
    """
    return costs_of(CostBasis.of(phys, inp, hardware), cost)


def costs_of(basis: CostBasis, cost: CostInputs) -> Costs:
    """$/GPU-hour and $/M tokens of rows whose physics is ``basis``: the one cost chain of the engine.

    Parameters
    ----------
    basis : CostBasis (:meth:`CostBasis.of` a :func:`run_physics` result, or rows of one: :meth:`CostBasis.take`)
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
    accelerator of the unit over the unit's output rate. ``billed_*_tokens_per_s_per_gpu`` are the token rates
    per charged accelerator-hour these $/M divide by (the export's live formulas use them).
    """
    b = basis
    gh, split = usd_per_gpu_hour(basis.hardware, cost)
    dis = b.disaggregated
    served = b.served_requests_per_s
    # the token rate per charged accelerator-hour: aggregated, the phase's rate times the unit's use of its
    # capacity; disaggregated, the tokens the unit serves over the pool that serves them
    billed_in = np.where(dis > 0, served * b.prefill_tokens / np.maximum(b.prefill_instances * b.prefill_num_gpus, 1.0),
                         b.input_tokens_per_s_per_gpu * b.pool_utilization_frac)
    billed_out = np.where(dis > 0, served * b.output_len / (b.decode_instances * b.num_gpus),
                          b.output_tokens_per_s_per_gpu * b.pool_utilization_frac)
    usd_in = usd_per_m_tokens(gh, billed_in)
    # KV held beyond HBM (issue 22.2): its tiers' storage, per decode accelerator-hour (0 without offload)
    store = b.kv_tier_usd_per_gpu_hour
    usd_out = usd_per_m_tokens(gh + store, billed_out)
    gh_all_in = gh + store * b.decode_instances * b.num_gpus / b.total_gpus
    blend = usd_per_m_blended_tokens(usd_in, usd_out, cost.input_output_mix, cost.cache_hit_frac,
                                     cost.cached_input_cost_frac)
    return Costs(usd_per_gpu_hour=gh, usd_per_gpu_hour_capex=split["capex"],
                 usd_per_gpu_hour_facility=split["facility"], usd_per_gpu_hour_opex=split["opex"],
                 usd_per_gpu_hour_power=split["power"], usd_per_m_input_tokens=usd_in,
                 usd_per_m_output_tokens=usd_out, usd_per_m_blended_tokens=blend,
                 usd_per_m_output_tokens_all_in=usd_per_m_tokens(gh_all_in, b.served_output_tokens_per_s_per_gpu),
                 billed_input_tokens_per_s_per_gpu=billed_in, billed_output_tokens_per_s_per_gpu=billed_out)


def usd_per_gpu_hour(hardware: HardwareFacts, cost: CostInputs):
    """$/GPU-hour of each row and its owned split: the first step of :func:`costs_of` (its Notes give the chain).

    Returns
    -------
    (usd_per_gpu_hour, split) : float array [USD per utilized accelerator-hour] and ``{"capex", "facility", "opex",
    "power"}`` of the owned rows (0 where rented) [USD per utilized accelerator-hour]
    """
    parts = gpu_hour_cost_components(hardware.all_in_capex_usd, hardware.all_in_power_w, cost.build_usd_per_mw_it,
                                     cost.pue, cost.usd_per_kwh, cost.cost_of_capital_frac,
                                     cost.accelerator_life_years, cost.facility_life_years,
                                     cost.opex_frac_of_capex_per_year, cost.utilization_frac)
    rate = (tier_rate(hardware, cost.basis_code, cost.usd_per_gpu_hour) if cost.tier_usd_per_gpu_hour is None
            else cost.tier_usd_per_gpu_hour)
    rent = usd_per_gpu_hour_rented(rate, cost.utilization_frac)
    owned = cost.owned
    zero = np.zeros(np.shape(owned))
    split = {k: np.where(owned, v, zero) for k, v in parts.items()}
    gh = np.where(owned, parts["capex"] + parts["facility"] + parts["opex"] + parts["power"], rent)
    return gh, split


def tier_rate(hardware: HardwareFacts, basis_code, custom_usd_per_gpu_hour=np.nan):
    """$/GPU-hour of each row's cost tier per hour of existence (NaN: owned chain, or no rate in the catalog).

    Parameters
    ----------
    hardware : HardwareFacts
    basis_code : int scalar or array, index into :data:`econ.vocabulary.TIERS`
    custom_usd_per_gpu_hour : float array or scalar, the rate of tier "custom" [USD/h]

    Returns
    -------
    float array of the shape of ``basis_code`` [USD/h]. Each tier's rate is the first non-missing value of its
    named rate columns (:data:`econ.vocabulary.TIER_SPECS`, which also says where each comes from); a block
    whose rows share one tier reads that tier's columns only.
    """
    codes = np.asarray(basis_code)
    shape = codes.shape
    out = np.full(shape, np.nan)
    if codes.size == 0:
        return out
    lo, hi = int(codes.min()), int(codes.max())
    for code in range(lo, hi + 1):  # <= 7 tiers; usually one
        tier = Tier(TIERS[code])
        if tier is Tier.CUSTOM:
            rate = custom_usd_per_gpu_hour
        else:
            rate = np.nan
            for column in TIER_SPECS[tier].rate_columns:
                rate = np.where(np.isnan(rate), getattr(hardware, column), rate)
        out = rate if lo == hi else np.where(codes == code, rate, out)
    return np.broadcast_to(np.asarray(out, dtype=float), shape) if lo == hi else out


def run_status(phys: Physics, inp: EngineInputs, *, unsupported, price_missing, owned, layout_bad=False,
               context_over=False, too_wide=False, spec_bad=False):
    """(feasible, :class:`econ.vocabulary.Reason` code, binding-wall code into :data:`econ.physics.performance.WALLS`).

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
    code = np.where(over, np.where(fits, Reason.KV_CAPACITY, Reason.WEIGHTS_DO_NOT_FIT), Reason.NONE)
    code = np.where(~over & ~p_fits, Reason.PREFILL_DOES_NOT_FIT, code)
    code = np.where(~over & p_fits & link_over, Reason.KV_LINK_OVERLOADED, code)
    code = np.where(price_missing, np.where(owned, Reason.NO_CAPEX, Reason.NO_TIER_RATE), code)
    code = np.where(unsupported, Reason.PRECISION_UNSUPPORTED, code)
    code = np.where(layout_bad, Reason.NO_VALID_LAYOUT, code)
    code = np.where(spec_bad, Reason.SPECULATION_UNAVAILABLE, code)
    code = np.where(too_wide, Reason.FORMAT_WIDER_THAN_PRECISION, code)
    code = np.where(context_over, Reason.CONTEXT_OVER_MAXIMUM, code)
    wall = np.where(over | ~p_fits, 0, np.where(link_over, 3, phys.decode.binding_wall_code))
    return feasible, code.astype(np.int8), wall.astype(np.int8)


def run(inp: EngineInputs, cost: CostInputs, assumptions: Assumptions = DEFAULT,
        deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT):
    """Physics and cost of validated array inputs: (Physics, Costs). The entry point of array searches
    (:mod:`econ.analyses.optimize`); callers validate first (:func:`evaluate` does it for frames)."""
    phys = run_physics(inp, assumptions, deployment)
    return phys, run_costs(phys, inp, inp.hardware, cost)


def _resident(model: ModelFacts, formats: Formats):
    """One replica's weight bytes with the row's formats (no speculative head). [B]"""
    return weight_bytes_resident(model.total_params, model.embedding_params, model.lm_head_params,
                                 formats.weight_bytes_per_param, formats.embedding_bytes_per_param,
                                 model.routed_params_total, formats.expert_bytes)
