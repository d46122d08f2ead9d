"""Deployment optimizer: every valid deployment of a model, the cheapest that meets the SLOs, the frontier.

For one model, one accelerator (or all of them), a request shape (input and output lengths) and SLOs
(minimum tokens/s per user, maximum TTFT), :func:`search` enumerates, in vectorized form, every
deployment of :mod:`econ.physics.deployment`: tensor, attention-data, expert and pipeline parallelism (powers
of two, plus any value the user pins), precision, batch size, aggregated or disaggregated serving,
on each accelerator's scale-up domain (or an override: the same chip on an 8- vs a 72-GPU domain).
Deployments that cannot run are dropped *with the reason* (:attr:`SearchResult.rejected`); the
rest are priced and checked against the SLOs.

- :func:`optimize` returns the cheapest deployment meeting the SLOs (lowest
  ``usd_per_m_output_tokens_all_in``: every accelerator the request needs, prefill included, per
  output token; equivalently the lowest cost per request), the top alternatives and the frontier.
- :func:`frontier` returns, per accelerator (and scale-up domain), the Pareto frontier of output
  tokens/s per accelerator (equivalently $/M output tokens) against tokens/s per user, with the
  deployment at every point.

Point columns (:data:`POINT_COLUMNS`) use the *served* figures of :func:`econ.physics.deployment.evaluate`:
``tokens_per_s_per_user`` = ``served_tokens_per_s_per_user`` (aggregated serving includes the
prefill chunks interleaved with decode steps), ``output_tokens_per_s_per_gpu`` =
``served_output_tokens_per_s_per_gpu`` (over every accelerator of the unit, both pools),
``ttft_s`` = ``served_ttft_s`` (KV transfer included), ``tpot_s`` = ``served_tpot_s``;
``decode_tokens_per_s_per_user`` keeps 1 / TPOT of the decode step alone.

Search space and its bounds are in :class:`SearchSpace`; batch sizes per attention group run over
powers of two (and the KV-capacity maximum). Pareto frontier: a point is kept when no other point of
its group is at least as fast per user and at least as cheap, one of them strictly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

import numpy as np
import polars as pl

from econ.physics import precision as prec
from econ.assumptions import (AUTO_DECODING, DEFAULT, DEFAULT_DEPLOYMENT, Assumptions, Decoding,
                              DeploymentAssumptions, Economics)
from econ.tables.catalog import Catalog, CatalogCache, check_ids, nbytes_of
from econ.physics.deployment import layout_labels
from econ.engine import (BAND_OF_COST, BAND_OF_RATE, FORMATS, CostBasis, CostInputs, EngineInputs, KvTiers, Serving,
                         Workload, band, catalog_arrays, costs_of, efficiency, kv_tier_arrays, profile_band,
                         resolve_formats, resolve_speculation, run, run_physics, run_status, tier_rate)
from econ.errors import InvalidInputError
from econ.presets import DEFAULT_INPUT_LEN, DEFAULT_OUTPUT_LEN
from econ.physics.inputs import HardwareFacts, Layout
from econ.physics.performance import WALLS
from econ.validate import require_finite_frame, require_in_range
from econ.vocabulary import (CP_SEARCH_MIN_TOKENS, KV_OFFLOAD_CHOICES, KV_TIER_CHOICES, MAX_CONTEXT, MODES,
                             REASONS, Reason, tier_code)
from econ.vocabulary import check as check_field
from econ.analyses.search import batch_grid, cheapest, pareto_frontier

POINT_COLUMNS: tuple[str, ...] = (
    "model", "hardware", "scale_up_domain_size", "layout", "family", "num_gpus", "tp", "ep", "pp", "dp", "batch_size",
    "precision", "disaggregated", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "usd_per_m_output_tokens",
    "binding_wall", "usd_per_m_output_tokens_all_in", "usd_per_m_input_tokens", "usd_per_m_blended_tokens",
    "ttft_s", "tpot_s", "decode_tokens_per_s_per_user", "total_gpus", "prefill_tp", "prefill_ep", "prefill_pp",
    "prefill_dp", "prefill_num_gpus", "prefill_instances", "decode_instances", "max_batch_size", "hbm_used_frac",
    "weight_bytes_per_gpu", "kv_bytes_per_gpu", "t_mem_s", "t_flop_s", "t_comm_tp_s", "t_comm_ep_s", "t_comm_pp_s",
    "kv_transfer_s", "prefill_stall_s", "bubble_frac", "usd_per_gpu_hour", "meets_slo", "slo_miss", "cp",
    *(f"{c}_{end}" for c in (*BAND_OF_RATE, *BAND_OF_COST) for end in ("low", "high")),
)
"""Columns of every point (candidates, top, frontier). The first twelve after ``layout`` are the
issue's required JSON fields; see the module docstring for the served-figure convention."""

REJECTED_COLUMNS: tuple[str, ...] = ("model", "hardware", "scale_up_domain_size", "mode", "precision", "layout",
                                     "reason", "detail")
"""``reason`` is a category (groupable); ``detail`` has the numbers (bytes needed vs held, best speed...)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SLO:
    """Service-level objectives a deployment must meet.

    Attributes
    ----------
    min_tokens_per_s_per_user : float >= 0
        Output speed of one stream, as served (1 / served TPOT). [tokens/s]
    max_ttft_s : float > 0
        Time to first token: the request's own prompt prefilled alone (+ KV transfer when
        disaggregated); queueing not modelled. [s]
    percentile : float, optional [%]
        Judge both at this percentile instead of the mean: speed = 1 / TPOT at the percentile
        (``tpot_percentile_s``), TTFT at the percentile under Poisson arrivals at the served rate
        (``ttft_percentile_s``; :mod:`econ.physics.serving`). None = the served means. Range: the
        vocabulary field ``slo_percentile``.
    """

    min_tokens_per_s_per_user: float = 0.0
    max_ttft_s: float = math.inf
    percentile: float | None = None

    def __post_init__(self):
        require_in_range("min_tokens_per_s_per_user", self.min_tokens_per_s_per_user, 0.0, 1e6, "tokens/s")
        if not (self.max_ttft_s > 0):
            raise InvalidInputError(f"max_ttft_s={self.max_ttft_s!r} is outside (0, inf] (s)")
        check_field("slo_percentile", self.percentile)


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchSpace:
    """What the optimizer may choose, and what the user pins.

    Attributes
    ----------
    max_gpus : int
        Largest (decode or aggregated) instance, tp x dp x pp. [accelerators]
    max_prefill_gpus : int
        Largest prefill instance of a disaggregated unit. [accelerators]
    precisions : tuple of str, optional
        Weight precisions to try (default: every one the accelerator supports in hardware).
    modes : tuple of {"aggregated", "disaggregated"}
    num_gpus, tp, dp, ep, pp : int, optional
        Pinned values (None = search). A pinned value that does not fit the model or the system makes
        every family fail with that reason.
    scale_up_domain_sizes : tuple of int, optional
        Evaluate each accelerator with these scale-up domain sizes instead of the catalog's (the same
        chip on an 8- and a 72-accelerator domain).
    max_batch_per_group : int
        Largest batch per attention group tried. [sequences]
    batch_steps_per_octave : int
        Batch sizes per doubling (1: powers of two; 2: also the sqrt(2) steps). [-]
    decoding : Decoding
        Weight, expert and KV-cache formats and speculative decoding (:class:`econ.assumptions.Decoding`; automatic
        fields: the engine's defaults, e.g. the KV cache in fp8 with fp8/fp4 matmuls and MTP for DeepSeek-V3/R1,
        :func:`econ.engine.resolve_speculation`). Precisions narrower than a set weight format are rejected with
        the reason.
    arrival_rate_per_s : float, optional
        Size the pools (and replicas) for this request rate instead of running at capacity. [requests/s]
    cp : int, optional
        Context-parallel degree of the prefill, pinned (None = searched over :data:`CP_SIZES` for prompts of
        :data:`econ.vocabulary.CP_SEARCH_MIN_TOKENS` tokens or more, with cp x num_gpus <= ``max_gpus``; 1 below).
    kv_offload : str
        How far the decode KV may spill beyond HBM (:data:`econ.vocabulary.KV_OFFLOAD_CHOICES`; "none").
    prefix_cache_tier : str, optional
        Where the ``economics.cache_hit_frac`` share of each prompt is cached (:data:`econ.vocabulary.KV_TIER_CHOICES`;
        None = prefix-cache physics off, the engine's default).
    context_limit_tokens : int, optional
        A served context window beyond the model's release (RoPE-extended; None = the model's).
    max_points : int
        Budget of deployments (rows) one search may evaluate; a larger search is refused before any
        physics runs, naming the knobs that shrink it (:func:`search_size`). The default keeps a search
        under ~2 GB of memory: the points frame holds ~0.5 kB per row and the engine works in blocks of
        :data:`BLOCK_ROWS` (benchmarks/bench_optimize.py). [rows]

    Repeated values in ``precisions``, ``modes`` and ``scale_up_domain_sizes`` are dropped (first kept).
    """

    max_gpus: int = 256
    max_prefill_gpus: int = 32
    precisions: tuple[str, ...] | None = None
    modes: tuple[str, ...] = MODES
    num_gpus: int | None = None
    tp: int | None = None
    dp: int | None = None
    ep: int | None = None
    pp: int | None = None
    scale_up_domain_sizes: tuple[int, ...] | None = None
    max_batch_per_group: int = 1 << 14
    batch_steps_per_octave: int = 2
    decoding: Decoding = AUTO_DECODING
    arrival_rate_per_s: float | None = None
    max_points: int = 2_000_000
    cp: int | None = None
    kv_offload: str = "none"
    prefix_cache_tier: str | None = None
    context_limit_tokens: int | None = None

    def __post_init__(self):
        for name in ("precisions", "modes", "scale_up_domain_sizes"):
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(self, name, tuple(dict.fromkeys(v)))  # duplicates: the same answer, once
        require_in_range("max_points", self.max_points, 1, 50_000_000, "rows")
        require_in_range("max_gpus", self.max_gpus, 1, 1 << 16, "accelerators")
        require_in_range("max_prefill_gpus", self.max_prefill_gpus, 1, 1 << 16, "accelerators")
        for name in ("num_gpus", "tp", "dp", "ep", "pp"):
            v = getattr(self, name)
            if v is not None:
                if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not 1 <= v <= (1 << 16):
                    raise InvalidInputError(f"{name}={v!r} is outside [1, 65536] (a whole number)")
        if self.num_gpus is not None and self.num_gpus > self.max_gpus:
            raise InvalidInputError(f"num_gpus={self.num_gpus} is outside [1, {self.max_gpus}] (max_gpus)")
        for m in self.modes:
            if m not in MODES:
                raise InvalidInputError(f"mode={m!r} is not one of {list(MODES)}")
        if not self.modes:
            raise InvalidInputError("modes is empty (valid: aggregated, disaggregated)")
        if self.precisions is not None:
            prec.check_precision("precision", list(self.precisions))
        if not isinstance(self.decoding, Decoding):
            raise InvalidInputError(f"decoding={self.decoding!r} is not an econ.assumptions.Decoding")
        for d in self.scale_up_domain_sizes or ():
            require_in_range("scale_up_domain_size", d, 1, 1 << 20, "accelerators")
        require_in_range("max_batch_per_group", self.max_batch_per_group, 1, 1 << 20, "sequences")
        require_in_range("batch_steps_per_octave", self.batch_steps_per_octave, 1, 8)
        if self.arrival_rate_per_s is not None:
            require_in_range("arrival_rate_per_s", self.arrival_rate_per_s, 0.0, 1e9, "requests/s",
                             lo_inclusive=False)
        check_field("cp", self.cp)
        check_field("kv_offload", self.kv_offload)
        check_field("prefix_cache_tier", self.prefix_cache_tier)
        check_field("context_limit_tokens", self.context_limit_tokens)


@dataclass(frozen=True)
class SearchResult:
    """Everything :func:`search` evaluated.

    Attributes
    ----------
    points : pl.DataFrame
        Every feasible deployment (:data:`POINT_COLUMNS`), SLO or not (``meets_slo``, ``slo_miss``).
    rejected : pl.DataFrame
        One row per rejected family (:data:`REJECTED_COLUMNS`): the layout and why it cannot serve.
    slo : SLO
    """

    points: pl.DataFrame
    rejected: pl.DataFrame
    slo: SLO


@dataclass(frozen=True)
class OptimizeResult:
    """The answer of :func:`optimize`.

    Attributes
    ----------
    best : dict or None
        The cheapest deployment meeting the SLOs (a :data:`POINT_COLUMNS` row), None if none does.
    top : pl.DataFrame
        The cheapest SLO-meeting deployments, one per family (layout x precision x mode x hardware).
    frontier : pl.DataFrame
        :func:`pareto_frontier` of the points that meet the TTFT limit.
    rejected : pl.DataFrame
        Families that cannot serve, with the reason (incl. "meets no SLO" with the best achieved).
    reason : str
        Why ``best`` is None ("" otherwise).
    """

    best: dict | None
    top: pl.DataFrame
    frontier: pl.DataFrame
    rejected: pl.DataFrame
    reason: str
    slo: SLO = field(default_factory=SLO)


def _pow2_upto(n: int) -> list[int]:
    return [1 << k for k in range(int(math.log2(max(n, 1))) + 1)]


def _layout_grid(m: dict, domain: float, space: SearchSpace, deployment: DeploymentAssumptions, *, max_gpus: int,
                 pins: bool = True):
    """All (tp, dp, ep, pp) a model can take on one domain; the rest with reasons.

    Returns
    -------
    (valid, rejected): dict of float arrays; a frame (tp, dp, ep, pp, reason) of the combinations that fail
    on a value the user pinned or, when nothing is valid, of every failing combination (so an empty
    answer always says why). Combinations outside the generator's own range (more than ``max_gpus``,
    dp/ep on a dense model, dp with tensor-parallel experts) are dropped silently unless nothing is left.
    """
    base = _pow2_upto(max_gpus)
    if pins and space.num_gpus is not None:  # a pinned count that is not a power of two: its divisors too
        base = sorted(set(base) | {k for k in range(1, space.num_gpus + 1) if space.num_gpus % k == 0})
    vals = {k: ([getattr(space, k)] if pins and getattr(space, k) is not None else base)
            for k in ("tp", "dp", "ep", "pp")}
    t, d, e, p = (a.ravel().astype(float) for a in np.meshgrid(vals["tp"], vals["dp"], vals["ep"], vals["pp"],
                                                               indexing="ij"))
    n = t * d * p
    moe = m["num_experts"] > 0
    silent = n > max_gpus
    if pins and space.num_gpus is not None:
        silent |= n != space.num_gpus
    ep_free, dp_free = not (pins and space.ep is not None), not (pins and space.dp is not None)
    if not moe:
        silent |= ((e > 1) & ep_free) | ((d > 1) & dp_free)  # dense dp = identical replicas; no experts
    else:
        silent |= (d > 1) & (e == 1) & ep_free  # dp x tensor-parallel experts: dominated by EP
    f = pl.DataFrame({"tp": t, "dp": d, "ep": e, "pp": p})
    heads, kvh, layers, experts = (float(m["num_attention_heads"]), float(m["kv_shard_heads"]),
                                   float(m["num_layers"]), float(m["num_experts"]))
    tp_, ep_, pp_ = (pl.col(c).cast(pl.Int64).cast(pl.String) for c in ("tp", "ep", "pp"))
    checks = [  # (dimension, failing mask, message expression)
        ("tp", t > heads, pl.lit("tp=") + tp_ + pl.lit(f" exceeds the {heads:g} attention heads")),
        ("tp", np.mod(heads, t) != 0, pl.lit("tp=") + tp_ + pl.lit(f" does not divide the {heads:g} attention heads")),
        ("tp", (np.mod(kvh, t) != 0) & (np.mod(t, kvh) != 0),
         pl.lit("tp=") + tp_ + pl.lit(f" neither divides nor is a multiple of the {kvh:g} KV heads")),
        ("tp", t > domain, pl.lit("tp=") + tp_ + pl.lit(f" exceeds the scale-up domain of {domain:g} (tensor "
                                                       "parallelism stays inside NVLink/ICI)")),
        ("tp", np.full(t.shape, not deployment.kv_head_replication) & (t > kvh),
         pl.lit("tp=") + tp_ + pl.lit(f" exceeds the {kvh:g} KV heads and KV-head replication is off")),
        ("pp", p > layers, pl.lit("pp=") + pp_ + pl.lit(f" exceeds the {layers:g} layers")),
        ("ep", np.full(t.shape, not moe) & (e > 1), pl.lit("ep=") + ep_ + pl.lit(" on a dense model (no routed experts)")),
        ("ep", np.full(t.shape, moe) & (np.mod(experts, e) != 0),
         pl.lit("ep=") + ep_ + pl.lit(f" does not divide the {experts:g} routed experts")),
        ("ep", np.mod(t * d, e) != 0, pl.lit("ep=") + ep_ + pl.lit(" does not divide tp x dp = ")
         + (pl.col("tp") * pl.col("dp")).cast(pl.Int64).cast(pl.String)),
    ]
    pinned = {k for k in ("tp", "dp", "ep", "pp") if pins and getattr(space, k) is not None}
    checks.sort(key=lambda c: c[0] not in pinned)  # a pinned value's own failure is the reason reported
    masks = np.stack([c[1] for c in checks])
    bad = masks.any(axis=0)
    first = np.argmax(masks, axis=0)
    on_pin = bad & np.isin(first, [i for i, c in enumerate(checks) if c[0] in pinned])
    ok = ~bad & ~silent
    report = bad & ~silent & on_pin
    if not ok.any():
        report = bad & ~silent
    expr = pl.lit("")
    for i, c in reversed(list(enumerate(checks))):
        expr = pl.when(pl.col("_first") == i).then(c[2]).otherwise(expr)
    rej = f.with_columns(_first=pl.Series(first)).filter(pl.Series(report)).with_columns(reason=expr).drop("_first")
    if not ok.any() and rej.height == 0:  # every combination was outside the generator's range
        nn = pl.col("tp") * pl.col("dp") * pl.col("pp")
        why = pl.when(nn > max_gpus).then(pl.lit(f"tp x dp x pp exceeds max_gpus={max_gpus}"))
        if pins and space.num_gpus is not None:
            why = why.when(nn != space.num_gpus).then(pl.lit(f"tp x dp x pp is not num_gpus={space.num_gpus}"))
        why = why.otherwise(pl.lit("dense models take dp=1, ep=1; MoE models with dp > 1 take ep > 1"))
        shown = silent & (n <= max_gpus) if pins and space.num_gpus is not None and (n <= max_gpus).any() else silent
        rej = f.filter(pl.Series(shown)).with_columns(reason=why)
    return {"tp": t[ok], "dp": d[ok], "ep": e[ok], "pp": p[ok]}, rej


def _facts(catalog: Catalog, model: str, hardware: str):
    """(ModelFacts, HardwareFacts) of one model on one accelerator: scalars that broadcast over the rows."""
    arr = catalog_arrays(catalog)
    return arr.models(arr.model_ids.index(model)), arr.accelerators(arr.hardware_ids.index(hardware))


def _inputs(catalog, model_id, hw_id, *, batch, input_len, output_len, capacity_ctx, precision, kv_precision,
            layout: Layout, prefill: Layout, disaggregated: float, arrival, cache_hit_frac, a, da,
            decoding: Decoding = AUTO_DECODING, cp=1.0, tiers: KvTiers | None = None) -> EngineInputs:
    """The engine's typed inputs for ``len(batch)`` candidate rows of one model on one accelerator.

    ``precision`` / ``kv_precision``: int arrays of codes into precision.PRECISIONS / KV_BYTES_PER_ELEMENT;
    weight formats as the engine resolves them (:func:`econ.engine.resolve_formats`: ``decoding``'s, else
    release-pinned formats, e.g. gpt-oss's MXFP4 experts, else the precision's own); speculative decoding as
    :func:`econ.engine.resolve_speculation` resolves ``decoding``'s setting."""
    n = len(batch)
    model, hw = _facts(catalog, model_id, hw_id)
    arr = catalog_arrays(catalog)
    i = arr.model_ids.index(model_id)
    codes = {k: (-1 if getattr(decoding, k) is None else FORMATS.index(getattr(decoding, k)))
             for k in ("weight_format", "expert_weight_format")}
    formats = resolve_formats(hw, precision, kv_precision, arr.pinned_weight_format[i], arr.pinned_expert_format[i],
                              codes["weight_format"], codes["expert_weight_format"],
                              embedding_bytes_per_param=a.embedding_bytes_per_param,
                              native_fp8=arr.native_fp8_format[i])[0]
    full = np.full
    workload = Workload(batch_size=batch, input_len=full(n, float(input_len)), output_len=full(n, float(output_len)),
                        decode_context_tokens=full(n, input_len + output_len / 2.0),
                        capacity_context_tokens=full(n, float(capacity_ctx)),
                        prefill_tokens=full(n, max(input_len * (1.0 - cache_hit_frac), 1.0)),
                        arrival_rate_per_s=full(n, np.nan if arrival is None else float(arrival)))
    serving = Serving(disaggregated=full(n, disaggregated), prefill=prefill, prefill_instances=full(n, np.nan),
                      decode_instances=full(n, np.nan), cp=cp)
    return EngineInputs(model=model, hardware=hw, layout=layout, formats=formats,
                        eff=efficiency(arr, a, da, np.full(n, arr.hardware_ids.index(hw_id)), precision),
                        workload=workload, serving=serving, tiers=tiers,
                        spec=resolve_speculation(catalog, model_id, formats, method=decoding.spec_method,
                                                 draft_tokens=decoding.spec_draft_tokens,
                                                 acceptance=decoding.spec_acceptance,
                                                 draft_model=decoding.spec_draft_model))


CP_SIZES: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
"""Context-parallel degrees the search tries on long prompts (powers of two as in Yang et al. arXiv:2411.01783,
CP1-CP16 x TP8; 32 for the largest prompts), each only while cp x num_gpus <= ``SearchSpace.max_gpus``."""


def _tiers(catalog, hw_id: str, n: int, space: "SearchSpace") -> KvTiers | None:
    """The KV tiers of ``n`` rows on ``hw_id`` as the search space asks (None = HBM only, no prefix physics)."""
    if space.kv_offload == "none" and space.prefix_cache_tier is None:
        return None
    arr = catalog_arrays(catalog)
    cap, bw, usd = (t[arr.hardware_ids.index(hw_id)] for t in kv_tier_arrays(catalog, arr))
    code = -1 if space.prefix_cache_tier is None else KV_TIER_CHOICES.index(space.prefix_cache_tier)
    return KvTiers(offload_code=np.full(n, KV_OFFLOAD_CHOICES.index(space.kv_offload)),
                   prefix_tier_code=np.full(n, code), capacity_bytes=np.broadcast_to(cap, (n, 3)),
                   read_bytes_per_s=np.broadcast_to(bw, (n, 3)), usd_per_gb_hour=np.broadcast_to(usd, (n, 3)))


BLOCK_ROWS = 1 << 16
"""Deployments evaluated per engine call inside a search: memory of the physics stays flat in the search size."""


def _prepare(catalog: Catalog, model: str, hardware, input_len: int, output_len: int,
             context_limit_tokens: int | None = None):
    """Validate ids and lengths; (model row, accelerator ids without repeats)."""
    check_ids("model", [model], catalog.models["id"].to_list())
    hw_ids = catalog.accelerators["id"].to_list()
    if hardware is None or hardware == "all" or hardware == ["all"]:
        hws = hw_ids
    else:
        hws = list(dict.fromkeys([hardware] if isinstance(hardware, str) else list(hardware)))
        check_ids("hardware", hws, hw_ids)
    require_in_range("input_len", input_len, 1, MAX_CONTEXT, "tokens")
    require_in_range("output_len", output_len, 1, MAX_CONTEXT, "tokens")
    m = catalog.model(model)
    limit = m["max_context_tokens"] if context_limit_tokens is None else context_limit_tokens
    if input_len + output_len > limit:
        raise InvalidInputError(f"input_len + output_len = {input_len + output_len:,} is outside [2, "
                                f"{limit:,}] (tokens; the context of {model})")
    return m, hws


def _plans(catalog, m, hws, input_len, output_len, slo, space, a, economics, da):
    """Phase 1 of a search: per accelerator and domain size, the families that fit and their batch rows."""
    plans, rejected = [], []
    for hw in hws:  # one pass per accelerator (<= ~20); every family of it is one vectorized capacity pass
        h = catalog.accelerator(hw)
        for domain in (space.scale_up_domain_sizes or (h["scale_up_domain_size"],)):
            plan, rej = _plan_one(catalog, m, h, float(domain), input_len, output_len, slo, space, a, economics,
                                  deployment=da)
            rejected.extend(rej)
            if plan is not None:
                plans.append(plan)
    return plans, rejected


def search_size(catalog: Catalog, *, model: str, hardware: str | list[str] | None = None, input_len: int = DEFAULT_INPUT_LEN,
                output_len: int = DEFAULT_OUTPUT_LEN, slo: SLO = SLO(), space: SearchSpace = SearchSpace(),
                assumptions: Assumptions = DEFAULT, economics: Economics = Economics(),
                deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT) -> dict:
    """How many deployments :func:`search` would evaluate, without evaluating them.

    Runs only the first phase (the layout grid and one capacity pass per family, a few thousand rows),
    so a front end can show the size, refuse, or drive a progress bar before the search.

    Returns
    -------
    dict: ``rows`` (int, deployments to evaluate), ``budget`` (``space.max_points``), ``accelerators``,
    ``domains`` (accelerator x domain-size passes), ``families`` (layout x precision x mode families that
    fit), ``message`` ("" within the budget, else what to lower).

    Raises
    ------
    UnknownIdError, InvalidInputError : as :func:`search`.
    """
    m, hws = _prepare(catalog, model, hardware, input_len, output_len, space.context_limit_tokens)
    plans, _ = _plans(catalog, m, hws, input_len, output_len, slo, space, assumptions, economics, deployment)
    return _size(plans, hws, space)


def _size(plans, hws, space: SearchSpace) -> dict:
    rows = int(sum(p["rows"] for p in plans))
    fams = int(sum(p["families"] for p in plans))
    out = dict(rows=rows, budget=space.max_points, accelerators=len(hws), domains=len(plans), families=fams,
               message="")
    if rows > space.max_points:
        knobs = [f"max_gpus (now {space.max_gpus:,})"]
        if any(getattr(space, k) is None for k in ("tp", "dp", "ep", "pp")):
            knobs.append("pin tp/dp/ep/pp")
        if len(hws) > 1 or len(space.scale_up_domain_sizes or ()) > 1:
            knobs.append("fewer accelerators or scale-up domain sizes")
        if space.precisions is None or len(space.precisions) > 1:
            knobs.append("one precision")
        if len(space.modes) > 1:
            knobs.append("one serving mode")
        if space.batch_steps_per_octave > 1:
            knobs.append("batch_steps_per_octave=1")
        out["message"] = (f"this search would evaluate {rows:,} deployments ({len(hws)} accelerator(s), {len(plans)} "
                          f"accelerator x scale-up domain pass(es), {fams:,} layout x precision x mode families x "
                          f"their batch sizes), above the budget of {space.max_points:,} (max_points); lower "
                          + ", ".join(knobs))
    return out


def search(catalog: Catalog, *, model: str, hardware: str | list[str] | None = None, input_len: int = DEFAULT_INPUT_LEN,
           output_len: int = DEFAULT_OUTPUT_LEN, slo: SLO = SLO(), space: SearchSpace = SearchSpace(),
           assumptions: Assumptions = DEFAULT, economics: Economics = Economics(),
           deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT, progress=None,
           frontier_only: bool = False) -> SearchResult:
    """Evaluate every valid deployment of ``model`` on ``hardware`` (None or "all" = the whole catalog).

    Parameters
    ----------
    catalog : Catalog
    model : str
    hardware : str, list of str, or None (repeated ids are evaluated once)
    input_len, output_len : int [tokens]
    slo : SLO
    space : SearchSpace (``space.max_points`` bounds the work)
    assumptions, economics, deployment : the model's assumptions.
    progress : callable(done_rows, total_rows), optional
        Called after every block of :data:`BLOCK_ROWS` deployments (a front end's progress bar).
    frontier_only : bool
        Keep in ``points`` only the deployments that can be on :func:`frontier_from`'s frontier (each block's
        Pareto rows, found on arrays before any frame is built); ``rejected`` is unchanged. :func:`frontier` uses it.

    Returns
    -------
    SearchResult (points + rejected families).

    Raises
    ------
    UnknownIdError, InvalidInputError
        Unknown ids, lengths outside [1, 16,777,216] tokens, a length beyond the model's context, or a
        search larger than ``space.max_points`` deployments (the message names what to lower; nothing
        is evaluated). Two phases: the size is known exactly (:func:`search_size`) before the physics runs.
    """
    m, hws = _prepare(catalog, model, hardware, input_len, output_len, space.context_limit_tokens)
    if slo.percentile is not None:  # percentile SLOs: the engine's percentile latencies at that percentile
        assumptions = replace(assumptions, latency_percentile=slo.percentile)
    key = _physics_key(m["id"], hws, input_len, output_len, slo, space, assumptions, economics, deployment)
    kept = None if frontier_only else _PHYSICS_CACHE.get(catalog, key)
    if kept is None:
        plans, rejected = _plans(catalog, m, hws, input_len, output_len, slo, space, assumptions, economics,
                                 deployment)
        size = _size(plans, hws, space)
        if size["message"]:
            raise InvalidInputError(size["message"])
        done = [0]

        def advance(rows):
            done[0] += rows
            if progress is not None:
                progress(done[0], size["rows"])

        blocks = []
        for plan in plans:
            b, rej = _plan_physics(plan, advance, frontier_only)
            blocks.extend(b)
            rejected.extend(rej)
        rej = pl.concat(rejected, how="vertical") if rejected else pl.DataFrame(
            schema={c: (pl.Int64 if c == "scale_up_domain_size" else pl.String) for c in REJECTED_COLUMNS})
        blocks = [_concat_blocks(blocks)] if len(blocks) > 1 else blocks  # priced in one pass
        if not frontier_only:
            _PHYSICS_CACHE.put(catalog, key, (blocks, rej, size["rows"]))
    else:
        blocks, rej, rows = kept
        if progress is not None:
            progress(rows, rows)
    points = [_priced(b, economics) for b in blocks]
    pts = pl.concat(points, how="vertical") if points else _empty_points()
    return SearchResult(points=pts, rejected=rej, slo=slo)


PHYSICS_CACHE_ENTRIES = 16
"""Searches whose physics :func:`search` keeps (newest first, across every catalog object of the process)."""

PHYSICS_CACHE_BYTES = 192 * 2**20
"""Bytes of kept physics across those searches (~700 B per feasible deployment: the ~45 physics columns, the cost
basis and band); a search above a quarter of it (~80,000 deployments, e.g. a frontier over every layout of a 671B
MoE) is not kept and runs whole each time. The hardware comparison of Llama-3.3-70B on every accelerator keeps
~42,000 (25 MB). [B]"""


_PHYSICS_CACHE = CatalogCache(PHYSICS_CACHE_ENTRIES, max_bytes=PHYSICS_CACHE_BYTES, size_of=nbytes_of)
"""(id(catalog), :func:`_physics_key`) -> (blocks to price, rejected frame, deployments evaluated)."""


def _physics_key(model: str, hws: list, input_len: int, output_len: int, slo: SLO, space: "SearchSpace",
                 assumptions: Assumptions, economics: Economics, deployment: DeploymentAssumptions) -> tuple:
    """What a search's physics depends on: everything but the economics' prices, except the three economics fields
    the search reads before pricing: the cost tier and whether it has a custom rate (an accelerator without a rate
    in the tier is rejected, :func:`_plan_one`) and the cache-hit share (prompt tokens prefilled). A dashboard rerun
    that changes a power price, PUE, capex chain, utilization or token mix prices the kept physics again."""
    return (model, tuple(hws), int(input_len), int(output_len), slo, space, assumptions, deployment,
            economics.basis, economics.usd_per_gpu_hour is None, float(economics.cache_hit_frac))


def _empty_points() -> pl.DataFrame:
    return pl.DataFrame(schema={c: (pl.String if c in ("model", "hardware", "layout", "family", "precision", "binding_wall",
                                                       "slo_miss") else pl.Boolean if c in ("disaggregated", "meets_slo")
                                    else pl.Float64) for c in POINT_COLUMNS})


def _rejections(model, hw, dom, mode, precision, layout, reason, detail="") -> pl.DataFrame:
    """Rejected rows as a frame; every argument a scalar or a sequence/Series of one common length."""
    cols = dict(model=model, hardware=hw, scale_up_domain_size=dom, mode=mode, precision=precision, layout=layout,
                reason=reason, detail=detail)
    n = max((len(v) for v in cols.values() if isinstance(v, (list, np.ndarray, pl.Series))), default=1)
    out = {k: (pl.Series(k, v) if isinstance(v, (list, np.ndarray, pl.Series)) else pl.Series(k, [v] * n))
           for k, v in cols.items()}
    return pl.DataFrame(out).with_columns(pl.col("scale_up_domain_size").cast(pl.Int64),
                                          *(pl.col(c).cast(pl.String) for c in REJECTED_COLUMNS
                                            if c != "scale_up_domain_size")).select(REJECTED_COLUMNS)


def _plan_one(catalog, m, h, domain, input_len, output_len, slo, space, a, economics, *, deployment):
    """Phase 1 for one accelerator and domain size: (plan dict or None, rejected frames).

    The plan holds the families that fit (one capacity pass), their batch rows and the prefill choice;
    ``plan["rows"]`` is the exact number of deployments :func:`_plan_physics` evaluates."""
    da = deployment
    hw, model = h["id"], m["id"]
    owned = economics.basis == "owned"
    dom = int(domain)
    rejected: list[pl.DataFrame] = []

    def rej(mode, precision, layout, reason, detail=""):
        rejected.append(_rejections(model, hw, dom, mode, precision, layout, reason, detail))

    precisions = list(space.precisions) if space.precisions is not None else list(prec.PRECISIONS)
    ok_prec = [pr for pr in precisions if h[prec.PEAK_COLUMN[pr]] is not None]
    if space.precisions is not None:
        for pr in sorted(set(precisions) - set(ok_prec)):  # <= 3 precisions
            rej("any", pr, "any", "precision not supported by hardware", f"no dense {pr} peak for {hw}")
    given_formats = [f for f in (space.decoding.weight_format, space.decoding.expert_weight_format) if f is not None]
    for pr in list(ok_prec):  # a stated format wider than the matmul precision cannot run (the engine's rule)
        wide = [f for f in given_formats if prec.FORMAT_BITS[f] > prec.PRECISION_BITS[pr]]
        if wide:
            ok_prec.remove(pr)
            rej("any", pr, "any", REASONS[Reason.FORMAT_WIDER_THAN_PRECISION],
                f"{wide[0]} weights need {prec.FORMAT_PRECISION[wide[0]]} or wider matmuls")
    basis_code = tier_code(economics.basis)
    facts = catalog_arrays(catalog).accelerators(catalog_arrays(catalog).hardware_ids.index(hw))
    rate = tier_rate(facts, basis_code, np.nan if economics.usd_per_gpu_hour is None else economics.usd_per_gpu_hour)
    price_missing = (h["all_in_capex_usd"] is None) if owned else bool(np.isnan(rate))
    if price_missing:
        rej("any", "any", "any", REASONS[Reason.NO_CAPEX] if owned else REASONS[Reason.NO_TIER_RATE],
            f"{hw} has no " + ("all_in_capex_usd" if owned else f"{economics.basis} rate"))
        return None, rejected
    if not ok_prec:
        if space.precisions is None:
            rej("any", "any", "any", "precision not supported by hardware", f"none of {precisions} on {hw}")
        return None, rejected

    lay, lay_rej = _layout_grid(m, domain, space, da, max_gpus=space.max_gpus)
    if lay_rej.height:
        rej("any", "any", layout_labels(*(lay_rej[c].to_numpy() for c in ("tp", "dp", "ep", "pp"))), lay_rej["reason"])
    if len(lay["tp"]) == 0:
        return None, rejected

    # families = layout x precision
    nl, npr = len(lay["tp"]), len(ok_prec)
    fam = {k: np.tile(v, npr) for k, v in lay.items()}
    fam_code = np.repeat(np.arange(len(ok_prec)), nl)  # index into ok_prec
    fam_prec = np.array(ok_prec, dtype=object)[fam_code]
    kv_names = tuple(prec.KV_BYTES_PER_ELEMENT)
    prec_by_code = np.array([prec.PRECISIONS.index(p) for p in ok_prec])
    kv_by_code = np.array([kv_names.index(space.decoding.kv_precision or prec.DEFAULT_KV_PRECISION[p])
                           for p in ok_prec])
    nf = len(fam_prec)
    cap_ctx = float(input_len + output_len)
    fam_layout = Layout(tp=fam["tp"], dp=fam["dp"], ep=fam["ep"], pp=fam["pp"], scale_up_domain_size=np.full(nf, domain))
    cache_hit = float(economics.cache_hit_frac)

    def inputs(rows, batch, layout, prefill, mode, cp=1.0):
        return _inputs(catalog, model, hw, batch=batch, input_len=input_len, output_len=output_len,
                       capacity_ctx=cap_ctx, precision=prec_by_code[fam_code[rows]],
                       kv_precision=kv_by_code[fam_code[rows]], layout=layout, prefill=prefill,
                       decoding=space.decoding,
                       disaggregated=1.0 if mode == "disaggregated" else 0.0, arrival=space.arrival_rate_per_s,
                       cache_hit_frac=cache_hit, a=a, da=da, cp=cp, tiers=_tiers(catalog, hw, len(rows), space))

    # capacity of every family from the engine (one physics pass at batch = dp)
    allf = np.arange(nf)
    fam_phys = run(inputs(allf, fam["dp"].astype(float), fam_layout, fam_layout, "aggregated"),
                   CostInputs.from_economics(economics, nf), a, da)[0]
    max_b = fam_phys.max_batch_size
    fits = max_b >= fam["dp"]
    labels = layout_labels(fam["tp"], fam["dp"], fam["ep"], fam["pp"])
    if (~fits).any():
        ngpu = fam["tp"] * fam["dp"] * fam["pp"]
        usable_per_gpu = h["hbm_capacity_bytes"] * a.usable_hbm_frac
        nofit = pl.DataFrame({"w": fam_phys.weight_bytes_per_gpu / 1e9, "n": ngpu}).filter(pl.Series(~fits))
        usable_text = (f"{round(usable_per_gpu / 1e9, 1)} GB usable" if a.kv_memory_rule == "total" else
                       f"{round(h['hbm_capacity_bytes'] / 1e9, 1)} GB less activations and runtime (kv_memory_rule "
                       "free)")
        detail = nofit.select(pl.format("{} GB of weights per accelerator (+ one {}-token KV cache) vs {} "
                                        "on {} x {}", pl.col("w").round(1), pl.lit(int(cap_ctx)),
                                        pl.lit(usable_text), pl.col("n").cast(pl.Int64), pl.lit(hw)))
        rej("any", fam_prec[~fits].astype(str), labels.filter(pl.Series(~fits)), "weights do not fit in HBM",
            detail.to_series())
    keep = np.flatnonzero(fits)
    if len(keep) == 0:
        return None, rejected
    fam = {k: v[keep] for k, v in fam.items()}
    fam_prec, fam_code, max_b = fam_prec[keep], fam_code[keep], max_b[keep]
    fam_label = labels.to_numpy()[keep]
    fam_layout = fam_layout.take(keep)  # every per-family array filtered alike (issue 17: labels were misaligned)

    # rows = family x batch (per attention group)
    grid = batch_grid(np.floor(max_b / fam["dp"]), space.batch_steps_per_octave, space.max_batch_per_group)
    fi, gi = np.nonzero(~np.isnan(grid))
    per_group = grid[fi, gi]
    key = fi.astype(np.int64) * (1 << 32) + per_group.astype(np.int64)
    _, first = np.unique(key, return_index=True)  # the max may equal a grid value
    fi, per_group = fi[first], per_group[first]
    # context parallelism (issue 22.3): searched on long prompts only (econ.vocabulary.CP_SEARCH_MIN_TOKENS)
    sizes = ((space.cp,) if space.cp is not None else CP_SIZES if input_len >= CP_SEARCH_MIN_TOKENS else (1,))
    ngpu_f = (fam["tp"] * fam["dp"] * fam["pp"])[fi]
    cps = np.array(sizes, dtype=float)
    ok_cp = (cps[None, :] * ngpu_f[:, None] <= space.max_gpus) | (cps[None, :] == sizes[0])
    ri, ci = np.nonzero(ok_cp)
    fi, per_group, cpv = fi[ri], per_group[ri], cps[ci]

    p_choice = {}
    if "disaggregated" in space.modes:
        p_choice = _prefill_choice(catalog, m, h, domain, input_len, output_len, slo, space, a, economics, da,
                                    ok_prec)
        for pr in sorted(set(ok_prec) - set(p_choice)):  # <= 3 precisions
            rej("disaggregated", pr, "any", "prefill instance does not fit in HBM",
                f"no prefill instance of <= {space.max_prefill_gpus} accelerators holds {model} {pr} with a "
                f"{input_len:,}-token prompt (raise max_prefill_gpus)")
    sels = {mode: (np.isin(fam_prec[fi], list(p_choice)) if mode == "disaggregated" else np.ones(len(fi), bool))
            for mode in space.modes}
    plan = dict(model=model, hw=hw, dom=dom, owned=owned, fam=fam, fam_prec=fam_prec, fam_code=fam_code,
                prec_by_code=prec_by_code, arrays=catalog_arrays(catalog),
                fam_label=fam_label, fam_layout=fam_layout, fi=fi, per_group=per_group, cpv=cpv, p_choice=p_choice,
                ok_prec=ok_prec, sels=sels, inputs=inputs, slo=slo, a=a, da=da, economics=economics,
                rows=int(sum(int(v.sum()) for v in sels.values())),
                families=int(sum(len(np.unique(fi[v])) for v in sels.values())))
    return plan, rejected


@dataclass(slots=True)
class _PricedBlock:
    """A block of a search's deployments, kept to be priced (:func:`_priced`): the physics columns of the points
    (:func:`_physics_frame`), their :class:`econ.engine.CostBasis` and calibration band (p10, p90 arrays)."""

    frame: pl.DataFrame
    basis: CostBasis
    p10: np.ndarray
    p90: np.ndarray


def _plan_physics(plan: dict, advance, frontier_only: bool = False) -> tuple[list[_PricedBlock], list]:
    """Phase 2: the physics of a plan's deployments in blocks of :data:`BLOCK_ROWS`; (blocks to price, rejected frames).

    Every block keeps its feasible deployments (``frontier_only``: only its Pareto rows, :func:`_frontier_rows`,
    found with the plan's economics) as a :class:`_PricedBlock`; the family-level reasons (nothing feasible, nothing
    meeting the SLO) are read from the physics of every row. Nothing kept depends on the economics beyond what
    :func:`_physics_key` holds, so :func:`search` can price the blocks again under other economics."""
    model, hw, dom, owned, slo = plan["model"], plan["hw"], plan["dom"], plan["owned"], plan["slo"]
    fam, fam_prec, fam_code, fam_label = plan["fam"], plan["fam_prec"], plan["fam_code"], plan["fam_label"]
    fam_layout, fi, per_group, p_choice = plan["fam_layout"], plan["fi"], plan["per_group"], plan["p_choice"]
    cpv = plan["cpv"]
    ok_prec, inputs, a, da, economics = plan["ok_prec"], plan["inputs"], plan["a"], plan["da"], plan["economics"]
    arr, prec_by_code = plan["arrays"], plan["prec_by_code"]
    rejected: list[pl.DataFrame] = []

    def rej(mode, precision, layout, reason, detail=""):
        rejected.append(_rejections(model, hw, dom, mode, precision, layout, reason, detail))

    blocks, families = [], []
    for mode, sel in plan["sels"].items():  # <= 2 modes
        rows = np.flatnonzero(sel)
        for start in range(0, len(rows), BLOCK_ROWS):  # memory flat in the number of deployments
            r = rows[start:start + BLOCK_ROWS]
            f = fi[r]
            nrow = len(f)
            lay = fam_layout.take(f)
            if mode == "disaggregated":
                p_lay = Layout(*(np.array([p_choice.get(pr, {}).get(k, np.nan) for pr in ok_prec])[fam_code[f]]
                                 for k in ("tp", "dp", "ep", "pp")), scale_up_domain_size=lay.scale_up_domain_size)
            else:
                p_lay = lay
            inp = inputs(f, per_group[r] * fam["dp"][f], lay, p_lay, mode, cpv[r])
            phys = run_physics(inp, a, da)
            basis = CostBasis.of(phys, inp, inp.hardware)
            none = np.zeros(nrow, bool)
            feasible, code, wall = run_status(phys, inp, unsupported=none, price_missing=none,
                                              owned=np.full(nrow, owned))
            p10, p90 = (np.broadcast_to(np.asarray(v, dtype=float), (nrow,)) for v in
                        profile_band(arr, a, np.full(nrow, arr.hardware_ids.index(hw)), prec_by_code[fam_code[f]]))
            labels = fam_label[f] if mode == "aggregated" else None
            if labels is not None and np.any(cpv[r] > 1):  # a context-parallel prefill is a family of its own
                labels = np.array([lb if c <= 1 else f"{lb} cp{int(c)}" for lb, c in zip(labels, cpv[r])],
                                  dtype=object)
            if frontier_only:
                speed, ttft = phys.served_tokens_per_s_per_user, phys.served_ttft_s
                families.append(_family_frame(mode, fam_prec[f], lay, phys.prefill_layout, labels, feasible, code,
                                              speed, ttft, slo))
                cost = costs_of(basis, CostInputs.from_economics(economics, nrow))
                keep = _frontier_rows(feasible, speed, ttft, cost.usd_per_m_output_tokens_all_in, slo)
                if keep.size:
                    blocks.append(_PricedBlock(
                        _physics_frame(model, hw, dom, mode, fam_prec[f], inp, phys, feasible, code, wall, slo, labels,
                                       (p10, p90), rows=keep), basis.take(keep), p10[keep], p90[keep]))
            else:
                frame = _physics_frame(model, hw, dom, mode, fam_prec[f], inp, phys, feasible, code, wall, slo, labels,
                                       (p10, p90))
                families.append(frame.select(_FAMILY_COLUMNS))
                keep = np.flatnonzero(feasible)
                if keep.size:
                    blocks.append(_PricedBlock(frame.filter(pl.Series(feasible)), basis.take(keep), p10[keep],
                                               p90[keep]))
            advance(nrow)
    fam_rows = pl.concat(families, how="vertical") if families else None
    if fam_rows is None or fam_rows.height == 0:
        return [], rejected
    # family-level reasons: nothing feasible, or nothing meeting the SLO
    fams = (fam_rows.group_by("family", "precision", "disaggregated", maintain_order=True)
            .agg(pl.col("meets_slo").any().alias("any_ok"), pl.col("feasible").any().alias("any_feasible"),
                 pl.col("tokens_per_s_per_user").filter(pl.col("feasible")).max().alias("best_speed"),
                 pl.col("ttft_s").filter(pl.col("feasible")).min().alias("best_ttft"),
                 pl.col("infeasible_code").filter(pl.col("infeasible_code") > 0).min().alias("code"))
            .filter(~pl.col("any_ok")))
    if fams.height:
        mode = pl.when(pl.col("disaggregated")).then(pl.lit("disaggregated")).otherwise(pl.lit("aggregated"))
        cap = fams.filter(~pl.col("any_feasible"))
        if cap.height:
            rej(cap.select(mode).to_series(), cap["precision"], cap["family"],
                cap["code"].fill_null(0).replace_strict(dict(enumerate(REASONS)), return_dtype=pl.String))
        miss = fams.filter(pl.col("any_feasible"))
        if miss.height:
            cat, det = _slo_reason_expr(slo)
            why = miss.select(cat.alias("reason"), det.alias("detail"), mode.alias("mode"))
            rej(why["mode"], miss["precision"], miss["family"], why["reason"], why["detail"])
    return blocks, rejected


def _concat_blocks(blocks: list[_PricedBlock]) -> _PricedBlock:
    """The blocks as one (rows in order; each block's one-accelerator facts broadcast to its rows)."""
    sizes = [b.frame.height for b in blocks]

    def cat(values):
        return np.concatenate([np.broadcast_to(np.asarray(v, dtype=float), (n,)) for v, n in zip(values, sizes)])

    hw = HardwareFacts(**{f.name: cat([getattr(b.basis.hardware, f.name) for b in blocks])
                          for f in fields(HardwareFacts)})
    basis = CostBasis(hardware=hw, **{f.name: cat([getattr(b.basis, f.name) for b in blocks])
                                      for f in fields(CostBasis) if f.name != "hardware"})
    return _PricedBlock(pl.concat([b.frame for b in blocks], how="vertical"), basis,
                        cat([b.p10 for b in blocks]), cat([b.p90 for b in blocks]))


_FAMILY_COLUMNS = ("family", "precision", "disaggregated", "tokens_per_s_per_user", "ttft_s", "meets_slo", "feasible",
                   "infeasible_code")
"""The columns of :func:`_physics_frame` the family-level reasons read (:func:`_family_frame`'s)."""


def _priced(block: _PricedBlock, economics: Economics) -> pl.DataFrame:
    """The :data:`POINT_COLUMNS` frame of a block's deployments under ``economics``: the engine's one cost chain
    (:func:`econ.engine.costs_of`) on the block's cost basis, and the calibration band of each cost."""
    n = block.frame.height
    costs = costs_of(block.basis, CostInputs.from_economics(economics, n))
    cols = {"usd_per_m_output_tokens": costs.usd_per_m_output_tokens,
            "usd_per_m_output_tokens_all_in": costs.usd_per_m_output_tokens_all_in,
            "usd_per_m_input_tokens": costs.usd_per_m_input_tokens,
            "usd_per_m_blended_tokens": costs.usd_per_m_blended_tokens,
            "usd_per_gpu_hour": costs.usd_per_gpu_hour}
    cols = {k: np.broadcast_to(np.asarray(v, dtype=float), (n,)) for k, v in cols.items()}
    priced = pl.DataFrame({k: pl.Series(k, v, dtype=pl.Float64) for k, v in cols.items()})
    require_finite_frame(priced)
    banded = band(cols, block.p10, block.p90)  # the engine's one rule (econ.engine.band); NaN = no profile -> null
    return block.frame.with_columns(*priced.get_columns(), *(pl.Series(k, v, dtype=pl.Float64, nan_to_null=True)
                                                            for k, v in banded.items())).select(POINT_COLUMNS)


def _slo_reason_expr(slo: SLO):
    """(category, detail) expressions over columns best_speed / best_ttft: :func:`_slo_reason`, vectorized."""
    slow = pl.col("best_speed") < slo.min_tokens_per_s_per_user
    late = pl.col("best_ttft") > slo.max_ttft_s
    speed = pl.format("at most {} tokens/s per user < min {}", pl.col("best_speed").round(1),
                      pl.lit(f"{slo.min_tokens_per_s_per_user:g}"))
    ttft = pl.format("TTFT at least {} s > max {} s", pl.col("best_ttft").round(3), pl.lit(f"{slo.max_ttft_s:g}"))
    cat = (pl.when(slow & late).then(pl.lit("SLO: tokens/s per user and TTFT"))
           .when(slow).then(pl.lit("SLO: tokens/s per user below min"))
           .when(late).then(pl.lit("SLO: TTFT above max"))
           .otherwise(pl.lit("SLO: speed and TTFT never met at the same batch")))
    det = (pl.when(slow & late).then(speed + pl.lit("; ") + ttft).when(slow).then(speed).when(late).then(ttft)
           .otherwise(pl.lit("")))
    return cat, det


def _slo_reason(best_speed, best_ttft, slo: SLO) -> tuple[str, str]:
    """(category, detail) of a family none of whose batch sizes meets the SLOs."""
    slow = best_speed is not None and best_speed < slo.min_tokens_per_s_per_user
    late = best_ttft is not None and best_ttft > slo.max_ttft_s
    detail = []
    if slow:
        detail.append(f"at most {best_speed:,.1f} tokens/s per user < min {slo.min_tokens_per_s_per_user:g}")
    if late:
        detail.append(f"TTFT at least {best_ttft:,.3f} s > max {slo.max_ttft_s:g} s")
    if slow and late:
        return "SLO: tokens/s per user and TTFT", "; ".join(detail)
    if slow:
        return "SLO: tokens/s per user below min", detail[0]
    if late:
        return "SLO: TTFT above max", detail[0]
    return "SLO: speed and TTFT never met at the same batch", ""


def _prefill_choice(catalog, m, h, domain, input_len, output_len, slo, space, a, economics, da, ok_prec) -> dict:
    """Per precision, the prefill instance of a disaggregated unit: cheapest prefill per prompt token among
    the layouts whose TTFT meets the SLO (the fastest if none does; the SLO check then rejects it)."""
    lay, _ = _layout_grid(m, domain, replace(space, num_gpus=None, tp=None, dp=None, ep=None, pp=None), da,
                          max_gpus=space.max_prefill_gpus, pins=False)
    out = {}
    if len(lay["tp"]) == 0:
        return out
    n = len(lay["tp"])
    layout = Layout(*(lay[k].astype(float) for k in ("tp", "dp", "ep", "pp")), scale_up_domain_size=np.full(n, domain))
    for pr in ok_prec:  # <= 3 precisions
        kvp = space.decoding.kv_precision or prec.DEFAULT_KV_PRECISION[pr]
        # a prefill instance holds the prompts' KV only (capacity context = input_len), no prefix-cache hits
        inp = _inputs(catalog, m["id"], h["id"], batch=lay["dp"].astype(float), input_len=input_len,
                      output_len=output_len, capacity_ctx=input_len,
                      precision=np.full(n, prec.PRECISIONS.index(pr)),
                      kv_precision=np.full(n, tuple(prec.KV_BYTES_PER_ELEMENT).index(kvp)),
                      layout=layout, prefill=layout, disaggregated=0.0, arrival=None, cache_hit_frac=0.0, a=a, da=da,
                      decoding=space.decoding)
        phys = run(inp, CostInputs.from_economics(economics, n), a, da)[0]
        fits = phys.max_batch_size >= lay["dp"]
        if not fits.any():
            continue
        tput = np.where(fits, phys.prefill.input_tokens_per_s_per_gpu, -1.0)
        ttft = np.where(fits, phys.ttft_s, np.inf)
        meets = ttft <= slo.max_ttft_s * 0.9  # leave 10% of the TTFT budget for the KV transfer
        i = int(np.argmax(np.where(meets, tput, -1.0))) if meets.any() else int(np.argmin(ttft))
        out[pr] = {k: float(lay[k][i]) for k in ("tp", "dp", "ep", "pp")}
    return out


def _family_frame(mode, precs, lay, pl_, labels, feasible, code, speed, ttft, slo) -> pl.DataFrame:
    """The columns of :func:`_physics_frame` that :func:`_plan_physics`'s family-level reasons read (no layout labels
    with instances, no physics columns): what a frontier-only search keeps of every deployment."""
    n = len(precs)
    if labels is None:
        labels = layout_labels(*(_rows_of(v, n, None) for v in (lay.tp, lay.dp, lay.ep, lay.pp)), np.full(n, True),
                               *(_rows_of(v, n, None) for v in (pl_.tp, pl_.dp, pl_.ep, pl_.pp)), None, None)
    slow = speed < slo.min_tokens_per_s_per_user
    late = ttft > slo.max_ttft_s
    return pl.DataFrame({"family": pl.Series("family", labels, dtype=pl.String), "precision": list(precs),
                         "disaggregated": np.full(n, mode == "disaggregated"),
                         "tokens_per_s_per_user": np.asarray(speed, dtype=float), "ttft_s": np.asarray(ttft, dtype=float),
                         "meets_slo": feasible & ~slow & ~late, "feasible": feasible,
                         "infeasible_code": code.astype(np.int64)})


def _rows_of(x, n: int, rows):
    """``x`` broadcast to ``n`` rows (float), restricted to ``rows`` (None = all)."""
    v = np.broadcast_to(np.asarray(x, dtype=float), (n,))
    return v if rows is None else v[rows]


def _frontier_rows(feasible, speed, ttft, cost, slo) -> np.ndarray:
    """Indices (ascending) of the feasible rows within the TTFT limit that no other such row beats on both speed and
    all-in cost: the Pareto rule of :func:`econ.analyses.search.pareto_frontier` on arrays (issue 20.5). The
    frontier of a union of blocks is within the union of the blocks' frontiers, so a search keeps these only."""
    ok = np.flatnonzero(feasible & (ttft <= slo.max_ttft_s))
    if ok.size == 0:
        return ok
    xs, ys = np.asarray(speed, dtype=float)[ok], np.asarray(cost, dtype=float)[ok]
    order = np.lexsort((ys, -xs))
    yo = ys[order]
    best_faster = np.r_[np.inf, np.minimum.accumulate(yo)[:-1]]
    return np.sort(ok[order[yo < best_faster]])


def _physics_frame(model, hw, dom, mode, precs, inp: EngineInputs, phys, feasible, code, wall, slo,
                   labels, profile_bands, rows=None) -> pl.DataFrame:
    """The :data:`POINT_COLUMNS` of a block's deployments that do not depend on the economics (every column but the
    $/GPU-hour and $/M ones and their bands, which :func:`_priced` adds), with ``feasible`` and ``infeasible_code``
    (``rows``: only these, by index; None = all)."""
    d, lay, pl_ = phys.decode, inp.layout, phys.prefill_layout
    dis = mode == "disaggregated"
    speed = phys.served_tokens_per_s_per_user
    ttft = phys.served_ttft_s
    if slo.percentile is None:
        slow = speed < slo.min_tokens_per_s_per_user
        late = ttft > slo.max_ttft_s
    else:  # judged at the percentile (the search ran with latency_percentile = slo.percentile)
        slow = ~(1.0 / np.maximum(phys.tpot_percentile_s, 1e-30) >= slo.min_tokens_per_s_per_user)
        late = ~(phys.ttft_percentile_s <= slo.max_ttft_s)
    miss = np.where(slow & late, "tokens/s per user and TTFT", np.where(slow, "tokens/s per user",
                                                                          np.where(late, "TTFT", "")))
    n_all = len(precs)
    n = n_all if rows is None else len(rows)
    if rows is not None:
        precs = np.asarray(precs)[rows]
        labels = None if labels is None else np.asarray(labels, dtype=object)[rows]
    family = labels
    if labels is None:
        lays = [_rows_of(v, n_all, rows) for v in (lay.tp, lay.dp, lay.ep, lay.pp)]
        pls = [_rows_of(v, n_all, rows) for v in (pl_.tp, pl_.dp, pl_.ep, pl_.pp)]
        labels = layout_labels(*lays, np.full(n, True), *pls, _rows_of(phys.prefill_instances, n_all, rows),
                               _rows_of(phys.decode_instances, n_all, rows)).to_list()
        family = layout_labels(*lays, np.full(n, True), *pls, None, None)
        cp_rows = _rows_of(inp.serving.cp, n_all, rows)
        if np.any(cp_rows > 1):  # a context-parallel prefill is a family of its own
            def tag(v):
                return [x if c <= 1 else f"{x} cp{int(c)}" for x, c in zip(v, cp_rows)]
            labels, family = tag(labels), pl.Series(tag(family.to_list()), dtype=pl.String)

    def i64(x):
        return _rows_of(x, n_all, rows).astype(np.int64)

    def f64(x):
        v = np.asarray(x)
        return v if rows is None else (np.broadcast_to(v, (n_all,))[rows])

    cols = {
        "model": [model] * n, "hardware": [hw] * n, "scale_up_domain_size": np.full(n, dom, dtype=np.int64),
        "layout": labels, "family": family, "num_gpus": i64(lay.num_gpus), "tp": i64(lay.tp),
        "ep": i64(lay.ep), "pp": i64(lay.pp), "dp": i64(lay.dp),
        "batch_size": i64(inp.workload.batch_size), "precision": list(precs), "disaggregated": np.full(n, dis),
        "tokens_per_s_per_user": f64(speed), "output_tokens_per_s_per_gpu": f64(phys.served_output_tokens_per_s_per_gpu),
        "binding_wall": np.asarray(WALLS, dtype=object)[f64(wall)].tolist(),
        "ttft_s": f64(ttft), "tpot_s": f64(phys.served_tpot_s), "decode_tokens_per_s_per_user": f64(d.tokens_per_s_per_user),
        "total_gpus": i64(phys.total_gpus), "prefill_tp": i64(pl_.tp), "prefill_ep": i64(pl_.ep),
        "prefill_pp": i64(pl_.pp), "prefill_dp": i64(pl_.dp), "prefill_num_gpus": i64(pl_.num_gpus),
        "prefill_instances": i64(phys.prefill_instances), "decode_instances": i64(phys.decode_instances),
        "max_batch_size": i64(phys.max_batch_size), "hbm_used_frac": f64(phys.hbm_used_frac),
        "weight_bytes_per_gpu": f64(phys.weight_bytes_per_gpu), "kv_bytes_per_gpu": f64(phys.kv_bytes_per_gpu),
        "t_mem_s": f64(d.t_mem_s), "t_flop_s": f64(d.t_flop_s), "t_comm_tp_s": f64(d.t_comm_tp_s),
        "t_comm_ep_s": f64(d.t_comm_ep_s), "t_comm_pp_s": f64(d.t_comm_pp_s), "kv_transfer_s": f64(phys.kv_transfer_s),
        "prefill_stall_s": f64(phys.prefill_stall_s), "bubble_frac": f64(d.bubble_frac),
        "meets_slo": f64(feasible & ~slow & ~late), "slo_miss": f64(miss).tolist(),
        "feasible": f64(feasible), "infeasible_code": f64(code).astype(np.int64),
        "cp": i64(inp.serving.cp),
    }
    if rows is not None:
        profile_bands = tuple(f64(b) if np.ndim(b) else b for b in profile_bands)
    banded = band(cols, *profile_bands)  # the rate bands (econ.engine.band); the cost bands are _priced's
    frame = pl.DataFrame({k: pl.Series(k, v) for k, v in cols.items()})
    frame = frame.with_columns(pl.Series(k, v, dtype=pl.Float64, nan_to_null=True) for k, v in banded.items())
    frame = frame.with_columns(pl.col(c).cast(pl.Float64) for c in frame.columns
                               if frame[c].dtype.is_numeric() and c in _FLOAT_COLUMNS)
    require_finite_frame(frame.filter(pl.col("feasible")))
    return frame


_FLOAT_COLUMNS = {c for c in POINT_COLUMNS if c not in (
    "model", "hardware", "scale_up_domain_size", "layout", "family", "num_gpus", "tp", "ep", "pp", "dp", "batch_size",
    "precision", "disaggregated", "binding_wall", "total_gpus", "prefill_tp", "prefill_ep", "prefill_pp",
    "prefill_dp", "prefill_num_gpus", "prefill_instances", "decode_instances", "max_batch_size", "meets_slo",
    "slo_miss", "cp")}


def optimize(catalog: Catalog, *, top: int = 10, **kwargs) -> OptimizeResult:
    """The cheapest deployment meeting the SLOs, the top alternatives, the frontier and the rejections.

    Parameters
    ----------
    top : int, how many alternatives (best row per family) to return
    kwargs : those of :func:`search`.

    Returns
    -------
    OptimizeResult. ``best`` is None (with ``reason``) when nothing meets the SLOs; never raises for
    SLOs nothing can meet.
    """
    require_in_range("top", top, 1, 10_000)
    res = search(catalog, **kwargs)
    ok = res.points.filter(pl.col("meets_slo"))
    front = frontier_from(res)
    if ok.height == 0:
        reason = _why_empty(res)
        return OptimizeResult(best=None, top=ok, frontier=front, rejected=res.rejected, reason=reason, slo=res.slo)
    ranked = cheapest(ok, by=("hardware", "scale_up_domain_size", "family", "precision", "disaggregated")).head(top)
    return OptimizeResult(best=ranked.row(0, named=True), top=ranked, frontier=front, rejected=res.rejected,
                          reason="", slo=res.slo)


def frontier_from(res: SearchResult) -> pl.DataFrame:
    """:func:`pareto_frontier` of the points that meet the TTFT limit (speed is the frontier's x axis)."""
    ttft_ok = res.points.filter(pl.col("ttft_s") <= res.slo.max_ttft_s)
    return pareto_frontier(ttft_ok)


def frontier(catalog: Catalog, **kwargs) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Pareto frontier per accelerator (and domain size): (frontier points, rejected families).

    Parameters are those of :func:`search` (``hardware=None`` = every accelerator of the catalog).
    """
    res = search(catalog, frontier_only=True, **kwargs)  # frames and labels for frontier candidates only (issue 20.5)
    return frontier_from(res), res.rejected


def _why_empty(res: SearchResult) -> str:
    if res.points.height == 0:
        if res.rejected.height == 0:
            return "no deployment was evaluated"
        top = res.rejected.group_by("reason").len().sort("len", descending=True).head(3)
        return "no deployment can serve: " + "; ".join(f"{r['reason']} ({r['len']} families)"
                                                       for r in top.iter_rows(named=True))
    fast = res.points.filter(pl.col("ttft_s") <= res.slo.max_ttft_s)
    best_speed = (fast if fast.height else res.points)["tokens_per_s_per_user"].max()
    cat, detail = _slo_reason(best_speed, res.points["ttft_s"].min(), res.slo)
    return f"nothing meets the SLOs ({cat}): {detail}"


def rejected_summary(rejected: pl.DataFrame) -> pl.DataFrame:
    """Rejections grouped by accelerator, domain, mode and reason: how many families, one example and its detail."""
    cols = ("hardware", "scale_up_domain_size", "mode", "reason")
    if rejected.height == 0:
        return pl.DataFrame(schema={**{c: rejected.schema[c] for c in cols}, "families": pl.UInt32,
                                    "example": pl.String, "detail": pl.String})
    return (rejected.group_by(*cols, maintain_order=True)
            .agg(pl.len().alias("families"), (pl.col("precision") + pl.lit(" ") + pl.col("layout")).first()
                 .alias("example"), pl.col("detail").first()))


__all__ = ["SLO", "SearchSpace", "SearchResult", "OptimizeResult", "search", "search_size", "BLOCK_ROWS", "optimize", "frontier",
           "rejected_summary", "POINT_COLUMNS", "REJECTED_COLUMNS", "frontier_from"]
