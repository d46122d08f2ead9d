"""Named, documented, adjustable assumptions of the model, with the source of each default.

Two groups: :class:`Assumptions` (efficiency of the hardware relative to its datasheet roofline and
serving-system facts) and :class:`Economics` (finance, power and the token mix). ``IDEAL`` sets every
efficiency to the pure roofline: it must reproduce the seeds' textbook numbers (Llama-3.1-8B bf16 on
one H100 at batch 1: 208.6 tokens/s when every weight is streamed).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

import polars as pl

from econ import vocabulary as V
from econ.errors import InvalidInputError


PROFILE_PARAMETERS: tuple[str, ...] = (
    "eta_bw", "eta_flop", "eta_prefill", "overhead_s", "sequence_overhead_s", "kernel_latency_s", "eta_routed_flop_frac",
    "moe_tile_rows", "moe_gemm_half_width", "overlap_frac", "tpot_tail_factor", "cpu_overlap_frac",
)
"""The efficiency fields of :class:`Assumptions` a calibration profile (data/calibration.csv) sets per
(accelerator generation, matmul precision)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Assumptions:
    """Efficiency factors and serving-system assumptions (all user-adjustable).

    Attributes
    ----------
    eta_bw : float in (0, 1]
        Achieved fraction of datasheet HBM bandwidth in decode (weights + KV streamed). [-]
    eta_flop : float in (0, 1]
        Achieved fraction of dense peak FLOP/s in decode matmuls and attention. [-]
    eta_prefill : float in (0, 1]
        Achieved fraction of dense peak in prefill (prefill MFU). [-]
    overlap_frac : float in [0, 1]
        Share of the shorter of a step's computation and communication hidden behind the longer when the
        instance runs two-batch overlap (wide expert parallelism; econ.physics.performance.two_batch_overlap_on):
        1 gives max(computation, communication), 0 their sum. [-]
    comm_sm_frac : float in [0, 0.9]
        Share of the SMs the all-to-all kernels hold while the other micro-batch of a two-batch-overlap prefill
        computes (DeepEP's normal kernels run on SMs; its low-latency decode kernels use none): that prefill's
        computation runs at 1 - comm_sm_frac of the accelerator. [-]
    single_batch_overlap_frac : float in [0, 1]
        The same share for instances that run a step as one batch (0: collectives on the critical path). [-]
    overhead_s : float >= 0
        Fixed time per decode step not on the roofline (kernel launches, scheduling, sampling). [s]
    usable_hbm_frac : float in (0, 1]
        Fraction of datasheet HBM available to weights + KV cache (the rest: CUDA context, NCCL
        buffers, activations, allocator fragmentation), or under ``kv_memory_rule`` "free" the fraction of the
        memory left free that the KV cache takes. [-]
    kv_memory_rule : str, "total" or "free"
        How the engine sizes its KV-cache pool (:func:`econ.physics.memory.kv_pool_bytes`): "total" (vLLM, SGLang)
        or "free" (TensorRT-LLM: after the weights, the activations of ``prefill_chunk_tokens`` tokens and the
        runtime, :func:`econ.physics.memory.trtllm_reserved_bytes`). [-]
    prefill_chunk_tokens : int >= 1
        Tokens a prefill step processes together (chunked prefill / max batched tokens); short prompts
        are batched until they reach it. [tokens]
    stream_input_embedding : bool
        True streams the whole input-embedding table each decode step (the seeds' textbook count,
        16.06 GB for Llama-3.1-8B); False (physically faithful) gathers only B rows.
    embedding_bytes_per_param : float
        Embeddings and LM head stay 16-bit when the rest is quantized (DeepSeek-V3 ships them in bf16). [B]
    activation_bytes : float
        Bytes per activation element in collectives (bf16). [B]
    scale_up_latency_s, scale_out_latency_s : float >= 0
        Per-hop latency (alpha) of a collective on the scale-up (NVLink) and scale-out (InfiniBand/
        Ethernet) tier. [s]
    eta_routed_flop_frac : float in (0, 1]
        Efficiency of routed-expert (MoE) matmuls relative to dense ones: routed-expert FLOPs run at
        eta_flop x eta_routed_flop_frac (decode) or eta_prefill x eta_routed_flop_frac (prefill) of
        the tensor peak. Grouped GEMMs see B x k / E tokens per expert (tens to hundreds), in narrow
        expert shapes, behind gather/scatter of the permuted tokens. No effect on dense models. [-]
    eta_routed_bw_frac : float in (0, 1]
        HBM efficiency of streaming routed-expert weights relative to dense weights (multiplies eta_bw
        for those bytes). No effect on dense models. [-]
    moe_layer_overhead_s : float >= 0
        Extra fixed time per MoE layer per forward pass beyond its kernels (0 by default: the router, top-k,
        permutation and grouped GEMMs are kernels of :data:`econ.physics.architecture.KERNELS_PER_PART`). [s]
    layer_overhead_s : float >= 0
        Extra fixed time per decoder layer per forward pass beyond its kernels (0 by default). [s]
    sequence_overhead_s : float >= 0
        CPU time per sequence of an attention group's decode step not hidden behind the GPU (scheduling, sampling,
        output processing), on top of ``overhead_s`` per step. [s]
    cpu_overlap_frac : float in [0, 1]
        Share of a decode step's GPU time under which the host prepares the next step (an overlap scheduler):
        the step's host time adds max(0, host - cpu_overlap_frac x GPU time)
        (econ.physics.performance.exposed_cpu_time_s); calibrated per profile by default (the engines with an
        overlap scheduler), 0.67 where no profile applies; 0 = an engine without one (the whole host time). [-]
    kernel_latency_s : float >= 0
        Time each kernel of a forward pass takes beyond the roofline of its bytes and FLOPs (DRAM latency,
        prologue and epilogue, the tail wave): a kernel is alpha + beta x bytes, and this is alpha. Multiplied by
        the kernels of a pass (``forward_kernels`` of :func:`econ.physics.architecture.derive_architecture`). Stated
        at model width d = 4096; a model d wide pays ``kernel_latency_s x (0.7 + 0.3 d / 4096)``
        (:func:`econ.physics.performance.kernel_width_factor`). [s]
    kernel_launch_s : float >= 0
        Idle time per kernel boundary inside a captured CUDA graph. [s]
    kernel_launch_eager_s : float >= 0
        Idle time per kernel launch without CUDA graphs (prefill steps; decode batches above
        ``cuda_graph_max_batch``). [s]
    prefill_layer_dispatch_s : float >= 0
        Host (CPU) time to dispatch one decoder layer of a prefill pass, which runs outside CUDA graphs: TTFT
        is at least ``num_layers`` x this (a floor of the latency, not of the prefill throughput). Per serving
        engine (vocabulary source). [s]
    cuda_graph_max_batch : int >= 0
        Largest decode batch per attention group that runs as a captured CUDA graph. [sequences]
    moe_tile_rows : float >= 1
        Rows of one tensor-core tile of the grouped expert GEMM: each touched expert's tokens are padded
        up to whole tiles (econ.physics.performance.grouped_gemm_padded_rows); 1 = no padding. [rows]
    moe_gemm_half_width : float >= 0
        Expert FFN width on one rank (intermediate size / expert TP) at which the grouped expert GEMM reaches
        half of its wide-expert compute efficiency: the routed FLOPs run at width / (width + half) of it
        (econ.physics.performance.grouped_gemm_width_efficiency); narrow experts (Qwen3's 768-1536, DeepSeek's 2048)
        fill fewer output tiles per expert than Mixtral's 14336. 0 = no width effect. [columns]
    max_batch_per_group : int >= 1
        Engine limit on sequences per attention group (a scheduler's max batch); the optimizer and the
        automatic batch of ``econ cost`` respect it. [sequences]
    latency_percentile : float in (0, 100)
        Percentile of the TTFT / TPOT the serving columns report and SLOs are checked at. [%]
    tpot_tail_factor : float >= 1
        Ratio of the percentile TPOT to the mean TPOT of a request under continuous batching (steps that
        carry prefill chunks, scheduling jitter). [-]
    calibrated : frozenset of str (subset of :data:`PROFILE_PARAMETERS`) or None
        The efficiency fields taken, row by row, from the calibration profile of the row's accelerator
        generation and matmul precision (data/calibration.csv, written by ``econ calibrate``) instead of the
        scalar value here. None (default) = every profile field still at its default value, so
        ``Assumptions(eta_bw=0.7)`` and ``replace(a, eta_bw=0.7)`` use 0.7 and calibrate the rest;
        :meth:`with_overrides` also pins a value equal to the default; ``IDEAL`` has none. A (generation,
        precision) with no profile falls back to the scalar value. :attr:`calibrated_fields` is the
        resolved set.

    Notes
    -----
    Routed experts run as kernels of their own, so the step adds their roofline to the rest of the
    layer's (econ.physics.performance, module docstring); the three MoE fields act on that part only.
    """

    eta_bw: float = V.default("eta_bw")
    eta_flop: float = V.default("eta_flop")
    eta_prefill: float = V.default("eta_prefill")
    overlap_frac: float = V.default("overlap_frac")
    comm_sm_frac: float = V.default("comm_sm_frac")
    single_batch_overlap_frac: float = V.default("single_batch_overlap_frac")
    overhead_s: float = V.default("overhead_s")
    usable_hbm_frac: float = V.default("usable_hbm_frac")
    kv_memory_rule: str = V.default("kv_memory_rule")
    prefill_chunk_tokens: int = V.default("prefill_chunk_tokens")
    stream_input_embedding: bool = V.default("stream_input_embedding")
    embedding_bytes_per_param: float = V.default("embedding_bytes_per_param")
    activation_bytes: float = V.default("activation_bytes")
    scale_up_latency_s: float = V.default("scale_up_latency_s")
    scale_out_latency_s: float = V.default("scale_out_latency_s")
    eta_routed_flop_frac: float = V.default("eta_routed_flop_frac")
    eta_routed_bw_frac: float = V.default("eta_routed_bw_frac")
    moe_layer_overhead_s: float = V.default("moe_layer_overhead_s")
    layer_overhead_s: float = V.default("layer_overhead_s")
    sequence_overhead_s: float = V.default("sequence_overhead_s")
    cpu_overlap_frac: float = V.default("cpu_overlap_frac")
    kernel_latency_s: float = V.default("kernel_latency_s")
    kernel_launch_s: float = V.default("kernel_launch_s")
    kernel_launch_eager_s: float = V.default("kernel_launch_eager_s")
    prefill_layer_dispatch_s: float = V.default("prefill_layer_dispatch_s")
    cuda_graph_max_batch: int = V.default("cuda_graph_max_batch")
    moe_tile_rows: float = V.default("moe_tile_rows")
    moe_gemm_half_width: float = V.default("moe_gemm_half_width")
    max_batch_per_group: int = V.default("max_batch_per_group")
    latency_percentile: float = V.default("latency_percentile")
    tpot_tail_factor: float = V.default("tpot_tail_factor")
    calibrated: frozenset | None = None

    def __post_init__(self):
        if self.calibrated is not None and not isinstance(self.calibrated, frozenset):
            object.__setattr__(self, "calibrated", frozenset(self.calibrated))
        extra = sorted((self.calibrated or frozenset()) - set(PROFILE_PARAMETERS))
        if extra:
            raise InvalidInputError(f"calibrated={extra[0]!r} is not a calibrated efficiency (valid: "
                                    f"{', '.join(PROFILE_PARAMETERS)})")
        V.check_fields(self, _ASSUMPTION_FIELDS)

    def with_overrides(self, **values) -> "Assumptions":
        """A copy with ``values`` set and those fields no longer taken from the calibration profile.

        Unlike :func:`dataclasses.replace`, a value equal to the field's default is pinned too (with
        ``replace`` a field at its default stays calibrated while ``calibrated`` is None), and an explicit
        ``calibrated`` set loses the fields set here.

        Raises
        ------
        InvalidInputError
            An unknown field or a value outside its range.
        """
        names = {f.name for f in fields(self)} - {"calibrated"}
        bad = sorted(set(values) - names)
        if bad:
            raise InvalidInputError(f"{bad[0]} is not an assumption (valid: {', '.join(sorted(names))})")
        return replace(self, calibrated=self.calibrated_fields - set(values), **values)

    @property
    def calibrated_fields(self) -> frozenset:
        """The profile parameters taken from the calibration profiles (``calibrated`` resolved)."""
        if self.calibrated is not None:
            return self.calibrated
        return frozenset(p for p in PROFILE_PARAMETERS if getattr(self, p) == _DEFAULT_VALUES[p])

    @property
    def assumed(self) -> tuple[str, ...]:
        """The profile parameters taken from this object's scalar values (not calibrated), in order."""
        cal = self.calibrated_fields
        return tuple(p for p in PROFILE_PARAMETERS if p not in cal)


_ASSUMPTION_FIELDS = tuple(f.name for f in fields(Assumptions) if f.name != "calibrated")
_DEFAULT_VALUES = {f.name: f.default for f in fields(Assumptions)}

ASSUMPTION_SOURCES: dict[str, str] = {"calibrated": V._SOURCES["calibrated"], **V.sources(_ASSUMPTION_FIELDS)}
"""Source of each Assumptions default (econ.vocabulary)."""

IDEAL_OVERRIDES = dict(eta_bw=1.0, eta_flop=1.0, eta_prefill=1.0, overlap_frac=1.0, single_batch_overlap_frac=1.0,
                       comm_sm_frac=0.0,
                       overhead_s=0.0, sequence_overhead_s=0.0,
                       eta_routed_flop_frac=1.0, eta_routed_bw_frac=1.0, moe_layer_overhead_s=0.0,
                       layer_overhead_s=0.0, kernel_latency_s=0.0, kernel_launch_s=0.0, kernel_launch_eager_s=0.0,
                       prefill_layer_dispatch_s=0.0, moe_tile_rows=1.0, moe_gemm_half_width=0.0, tpot_tail_factor=1.0,
                       cpu_overlap_frac=1.0,
                       calibrated=frozenset())

DEFAULT = Assumptions()
IDEAL = replace(DEFAULT, **IDEAL_OVERRIDES)
"""The pure roofline: every efficiency 1 (routed experts included), communication fully overlapped where it can be,
no step, kernel or MoE-layer overhead."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Economics:
    """Finance, power and token-mix assumptions of the cost model (all user-adjustable).

    Attributes
    ----------
    basis : str, one of econ.vocabulary.TIERS
        The cost tier of $/GPU-hour: "owned" (owned-custom: capex annuity + facility + opex + power),
        "hyperscaler" / "neocloud" (SemiAnalysis cost of owning), "rental-3yr", "on-demand", "rental" (the
        catalog's representative rental rate) or "custom" (``usd_per_gpu_hour``). Sources:
        econ.vocabulary.TIER_SPECS.
    usd_per_gpu_hour : float > 0, optional
        The $/GPU-hour of basis "custom" (per hour of the fleet's existence, like a rental rate). [USD/h]
    usd_per_kwh : float >= 0
        Electricity price. [USD/kWh]
    pue : float >= 1
        Power usage effectiveness (facility energy / IT energy). [-]
    build_usd_per_mw_it : float >= 0
        Facility construction capex per MW of critical IT load. [USD/MW]
    cost_of_capital_frac : float in [0, 1]
        Annual discount rate of the capital recovery factor. [1/year]
    accelerator_life_years, facility_life_years : float > 0
        Economic lives of the IT equipment and the building. [year]
    opex_frac_of_capex_per_year : float >= 0
        Yearly operations (maintenance, spares, staff, network and software support) as a share of
        the accelerator's all-in capex. [1/year]
    utilization_frac : float in (0, 1]
        Share of hours the fleet serves paid traffic; fixed costs (and rent) spread over these. [-]
    input_output_mix : float >= 0
        Input tokens per output token in the blended price (3 = 3:1). [-]
    cache_hit_frac : float in [0, 1]
        Share of input tokens served from a prefix cache (no prefill compute). [-]
    cached_input_cost_frac : float in [0, 1]
        Cost of a cached input token relative to an uncached one. [-]
    """

    basis: str = V.default("basis")
    usd_per_gpu_hour: float | None = V.default("usd_per_gpu_hour")
    usd_per_kwh: float = V.default("usd_per_kwh")
    pue: float = V.default("pue")
    build_usd_per_mw_it: float = V.default("build_usd_per_mw_it")
    cost_of_capital_frac: float = V.default("cost_of_capital_frac")
    accelerator_life_years: float = V.default("accelerator_life_years")
    facility_life_years: float = V.default("facility_life_years")
    opex_frac_of_capex_per_year: float = V.default("opex_frac_of_capex_per_year")
    utilization_frac: float = V.default("utilization_frac")
    input_output_mix: float = V.default("input_output_mix")
    cache_hit_frac: float = V.default("cache_hit_frac")
    cached_input_cost_frac: float = V.default("cached_input_cost_frac")

    def __post_init__(self):
        object.__setattr__(self, "basis", V.tier(self.basis).value)  # "owned-custom" -> "owned"
        V.check_fields(self, _ECONOMICS_FIELDS)
        if self.basis == V.Tier.CUSTOM and self.usd_per_gpu_hour is None:
            raise InvalidInputError("basis='custom' needs usd_per_gpu_hour (a $/GPU-hour, "
                                    f"{V.FIELDS['usd_per_gpu_hour'].range_text()})")


_ECONOMICS_FIELDS = tuple(f.name for f in fields(Economics))
ECONOMICS_SOURCES: dict[str, str] = V.sources(_ECONOMICS_FIELDS)
"""Source of each Economics default (econ.vocabulary)."""


def assumptions_frame(assumptions: Assumptions, economics: Economics) -> pl.DataFrame:
    """Every assumption as rows of (group, name, value, source): for pages and export sheets."""
    rows = []
    for group, obj, src in (("performance", assumptions, ASSUMPTION_SOURCES),
                            ("economics", economics, ECONOMICS_SOURCES)):
        for f in fields(obj):
            value = getattr(obj, f.name)
            if f.name == "calibrated":
                value = ", ".join(p for p in PROFILE_PARAMETERS if p in obj.calibrated_fields) or "none"
            rows.append({"group": group, "name": f.name, "value": str(value), "source": src.get(f.name, "")})
    return pl.DataFrame(rows)


def to_dict(obj) -> dict:
    """Plain dict of a dataclass of assumptions (for JSON / TOML scenarios)."""
    return asdict(obj)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeploymentAssumptions:
    """Named, adjustable assumptions of multi-accelerator serving (sources: :data:`DEPLOYMENT_ASSUMPTION_SOURCES`).

    The efficiency factors, per-hop latencies and step overhead shared with single-instance serving
    stay in :class:`econ.assumptions.Assumptions`; these are the terms only parallel layouts add.

    Attributes
    ----------
    expert_imbalance_factor : float >= 1
        Token load of the busiest expert-parallel rank over the mean (max/mean). Scales that rank's
        routed-expert FLOPs and the experts it touches; 1 = perfectly balanced. Applies only when
        ep > 1 (with ep = 1 every rank holds a slice of every expert). [-]
    dispatch_activation_bytes, combine_activation_bytes : float
        Bytes per element sent in the MoE dispatch (fp8) and combine (bf16) all-to-alls. [B]
    alltoall_scale_up_latency_s, alltoall_scale_out_latency_s : float >= 0
        Fixed time of one dispatch or combine call inside a scale-up domain / across domains (kernel
        start, synchronisation, per-call RDMA setup), on top of the bytes / bandwidth term. [s]
    kernel_launch_latency_s : float >= 0
        Launch time of each extra kernel a parallel layout adds (dispatch, combine, expert-TP
        all-reduce, KV transfer). The launches of the single-instance step are inside
        ``Assumptions.overhead_s``. [s]
    kv_transfer_eta : float in (0, 1]
        Achieved fraction of link bandwidth when moving a prompt's KV cache from the prefill to the
        decode pool. [-]
    kv_transfer_latency_s : float >= 0
        Fixed time per KV transfer (handshake, block-table exchange, completion notification). [s]
    kv_head_replication : bool
        True: tensor parallelism wider than the KV heads replicates heads (vLLM, TensorRT-LLM). False:
        such a tp is rejected.
    max_pool_instances : int >= 1
        Largest x or y searched when sizing an xPyD unit without an arrival rate. [-]
    pool_sizing_tolerance_frac : float >= 0
        Extra accelerators per served request accepted for a smaller xPyD unit. [-]
    """

    expert_imbalance_factor: float = V.default("expert_imbalance_factor")
    dispatch_activation_bytes: float = V.default("dispatch_activation_bytes")
    combine_activation_bytes: float = V.default("combine_activation_bytes")
    alltoall_scale_up_latency_s: float = V.default("alltoall_scale_up_latency_s")
    alltoall_scale_out_latency_s: float = V.default("alltoall_scale_out_latency_s")
    kernel_launch_latency_s: float = V.default("kernel_launch_latency_s")
    kv_transfer_eta: float = V.default("kv_transfer_eta")
    kv_transfer_latency_s: float = V.default("kv_transfer_latency_s")
    kv_head_replication: bool = V.default("kv_head_replication")
    max_pool_instances: int = V.default("max_pool_instances")
    pool_sizing_tolerance_frac: float = V.default("pool_sizing_tolerance_frac")

    def __post_init__(self):
        V.check_fields(self, _DEPLOYMENT_FIELDS)


_DEPLOYMENT_FIELDS = tuple(f.name for f in fields(DeploymentAssumptions))
DEPLOYMENT_ASSUMPTION_SOURCES: dict[str, str] = V.sources(_DEPLOYMENT_FIELDS)
"""Source of each DeploymentAssumptions default (econ.vocabulary)."""

DEFAULT_DEPLOYMENT = DeploymentAssumptions()
NEUTRAL_DEPLOYMENT = DeploymentAssumptions(expert_imbalance_factor=1.0, alltoall_scale_up_latency_s=0.0,
                                           alltoall_scale_out_latency_s=0.0, kernel_launch_latency_s=0.0,
                                           kv_transfer_eta=1.0, kv_transfer_latency_s=0.0)
"""Every term parallel layouts add set to its ideal: pair with ``assumptions.IDEAL`` for the pure roofline."""


def deployment_assumptions_frame(deployment: DeploymentAssumptions) -> pl.DataFrame:
    """The deployment assumptions as rows of (group, name, value, source), like ``assumptions_frame``."""
    return pl.DataFrame([{"group": "deployment", "name": f.name, "value": str(getattr(deployment, f.name)),
                          "source": DEPLOYMENT_ASSUMPTION_SOURCES.get(f.name, "")} for f in fields(deployment)])


@dataclass(frozen=True, slots=True, kw_only=True)
class Decoding:
    """What a deployment stores and how it decodes: weight, expert and KV-cache formats and speculative decoding.

    Every field None = automatic, the default the engine resolves per model and precision (sources:
    :data:`DECODING_SOURCES`): the release's checkpoint formats else the matmul precision's own, the KV cache in fp8
    with fp8/fp4 matmuls, and the model vendor's speculative decoding (MTP for DeepSeek-V3/R1). A value set here is
    passed to the engine as the point column of the same name (:func:`econ.engine.evaluate`), so every front end
    and the one search (:class:`econ.analyses.optimize.SearchSpace`) price the same setting.

    Attributes
    ----------
    weight_format, expert_weight_format : str or None
        :data:`econ.vocabulary.WEIGHT_FORMATS` (bf16, fp8, int8, int4 = W4A16, mxfp4, nvfp4); a format wider than the
        matmul precision cannot run (fp8 matmuls need fp8 or narrower weights).
    kv_precision : str or None
        :data:`econ.vocabulary.KV_PRECISIONS`: the KV cache's element format, apart from the weights'.
    spec_method : str or None
        :data:`econ.vocabulary.SPEC_METHODS` (none, mtp, eagle, draft).
    spec_draft_tokens : int in [0, 16] or None [tokens per step]
    spec_acceptance : float in [0, 0.999] or None [-]
    spec_draft_model : str or None, a catalog model id (method draft)
    """

    weight_format: str | None = None
    expert_weight_format: str | None = None
    kv_precision: str | None = None
    spec_method: str | None = None
    spec_draft_tokens: int | None = None
    spec_acceptance: float | None = None
    spec_draft_model: str | None = None

    def __post_init__(self):
        V.check_fields(self, DECODING_FIELDS)

    def columns(self) -> dict:
        """The point columns of :func:`econ.engine.evaluate` for the fields that are set (automatic ones left out)."""
        return {n: getattr(self, n) for n in DECODING_FIELDS if getattr(self, n) is not None}

    @property
    def is_default(self) -> bool:
        """True when every field is automatic."""
        return not self.columns()


DECODING_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Decoding))
DECODING_SOURCES: dict[str, str] = V.sources(DECODING_FIELDS)
"""Source of each automatic Decoding value (econ.vocabulary)."""

AUTO_DECODING = Decoding()
