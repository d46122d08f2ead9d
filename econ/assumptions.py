"""Named, documented, adjustable assumptions of the model, with the source of each default.

Two groups: :class:`Assumptions` (efficiency of the hardware relative to its datasheet roofline and
serving-system facts) and :class:`Economics` (finance, power and the token mix). ``IDEAL`` sets every
efficiency to the pure roofline: it must reproduce the seeds' textbook numbers (Llama-3.1-8B bf16 on
one H100 at batch 1: 208.6 tokens/s when every weight is streamed).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

import polars as pl

from econ.errors import InvalidInputError


PROFILE_PARAMETERS: tuple[str, ...] = (
    "eta_bw", "eta_flop", "eta_prefill", "overhead_s", "layer_overhead_s", "eta_routed_flop_frac",
    "moe_layer_overhead_s", "moe_tile_rows", "moe_gemm_half_width", "overlap_frac", "tpot_tail_factor",
)
"""The efficiency fields of :class:`Assumptions` a calibration profile (data/calibration.csv) sets per
(accelerator generation, matmul precision)."""


def _check(obj, ranges: dict[str, tuple[float, float]]) -> None:
    for name, (lo, hi) in ranges.items():
        v = getattr(obj, name)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v != v or not (lo <= v <= hi):
            raise InvalidInputError(f"{name}={v!r} is outside [{lo:g}, {hi:g}]")


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
        Share of communication time hidden behind compute/memory time. [-]
    overhead_s : float >= 0
        Fixed time per decode step not on the roofline (kernel launches, scheduling, sampling). [s]
    usable_hbm_frac : float in (0, 1]
        Fraction of datasheet HBM available to weights + KV cache (the rest: CUDA context, NCCL
        buffers, activations, allocator fragmentation). [-]
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
        Fixed time per MoE layer per forward pass (decode step or prefill step) outside the roofline:
        router GEMM and top-k, token permutation and un-permutation, expert offsets, launch and tail of
        the grouped GEMMs. The collectives of expert parallelism are modeled separately
        (econ.physics.deployment). No effect on dense models. [s]
    layer_overhead_s : float >= 0
        Fixed time per decoder layer per forward pass (kernel launch and tail floors of its GEMMs,
        attention and collectives), on top of ``overhead_s`` per step. [s]
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

    eta_bw: float = 0.60
    eta_flop: float = 0.30
    eta_prefill: float = 0.50
    overlap_frac: float = 0.0
    overhead_s: float = 0.0015
    usable_hbm_frac: float = 0.90
    prefill_chunk_tokens: int = 8192
    stream_input_embedding: bool = False
    embedding_bytes_per_param: float = 2.0
    activation_bytes: float = 2.0
    scale_up_latency_s: float = 1.0e-6
    scale_out_latency_s: float = 5.0e-6
    eta_routed_flop_frac: float = 0.30
    eta_routed_bw_frac: float = 1.0
    moe_layer_overhead_s: float = 1.5e-4
    layer_overhead_s: float = 0.0
    moe_tile_rows: float = 1.0
    moe_gemm_half_width: float = 0.0
    max_batch_per_group: int = 4096
    latency_percentile: float = 99.0
    tpot_tail_factor: float = 1.0
    calibrated: frozenset | None = None

    def __post_init__(self):
        if self.calibrated is not None and not isinstance(self.calibrated, frozenset):
            object.__setattr__(self, "calibrated", frozenset(self.calibrated))
        extra = sorted((self.calibrated or frozenset()) - set(PROFILE_PARAMETERS))
        if extra:
            raise InvalidInputError(f"calibrated={extra[0]!r} is not a calibrated efficiency (valid: "
                                    f"{', '.join(PROFILE_PARAMETERS)})")
        _check(self, {
            "eta_bw": (1e-3, 1.0), "eta_flop": (1e-3, 1.0), "eta_prefill": (1e-3, 1.0),
            "overlap_frac": (0.0, 1.0), "overhead_s": (0.0, 1.0), "usable_hbm_frac": (0.05, 1.0),
            "prefill_chunk_tokens": (1, 1e7), "embedding_bytes_per_param": (0.25, 4.0),
            "activation_bytes": (0.5, 4.0), "scale_up_latency_s": (0.0, 1e-2),
            "scale_out_latency_s": (0.0, 1e-1), "eta_routed_flop_frac": (1e-2, 1.0),
            "eta_routed_bw_frac": (1e-2, 1.0), "moe_layer_overhead_s": (0.0, 1e-2),
            "layer_overhead_s": (0.0, 1e-3), "moe_tile_rows": (1.0, 512.0), "moe_gemm_half_width": (0.0, 1e6),
            "max_batch_per_group": (1, 1 << 20),
            "tpot_tail_factor": (1.0, 10.0),
        })
        p = self.latency_percentile
        if not isinstance(p, (int, float)) or isinstance(p, bool) or not (0.0 < p < 100.0):
            raise InvalidInputError(f"latency_percentile={p!r} is outside (0, 100) (%)")

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


_DEFAULT_VALUES = {f.name: f.default for f in fields(Assumptions)}

ASSUMPTION_SOURCES: dict[str, str] = {
    "calibrated": "Every profile parameter comes from the profile of the row's accelerator generation and matmul "
                  "precision (data/calibration.csv: econ calibrate, MAP fit with grouped cross-validation on "
                  "data/measurements.csv); a value the user sets replaces the profile's",
    "layer_overhead_s": "0 (v1 had none); calibrated per generation x precision (data/calibration.csv). Measured kernel"
                        " floors are 3-14 us per GEMM, 10-20 us per attention call, ~4 us per custom all-reduce, i.e. "
                        "~30-40 us per layer in isolation (NVIDIA AIConfigurator 0.12 kernel tables, data/kernels/)",
    "moe_tile_rows": "1 (no padding), also in the calibrated profiles (econ.analyses.calibration.MOE_TILE_ROWS): the MMA tiles "
                     "are 64 rows on Hopper and 128 on Blackwell, but measured fused-MoE kernels at 1-8 tokens per "
                     "expert run at their bytes-bound time (AIConfigurator 0.12); set 64 or 128 to study padding",
    "moe_gemm_half_width": "0 (no width effect) until calibrated per generation; NVIDIA AIConfigurator 0.12 fused-MoE "
                           "tables (data/kernels/moe_efficiency.csv, TensorRT-LLM EP8, > 512 tokens per expert): "
                           "Qwen3-235B's 1536-wide experts reach 0.53-0.81 of Mixtral's 14336-wide (H200/B200, BF16 / "
                           "FP8 / FP8-block), i.e. a half-saturation width of ~500-1700, median ~900",
    "max_batch_per_group": "4096 sequences per attention group: trtllm-bench's engine cap min(kv_cache_max_requests, "
                           "4096) (NVIDIA/TensorRT-LLM tensorrt_llm/bench/build/tuning.py), per rank under attention DP",
    "latency_percentile": "99: MLPerf Inference Server and Interactive scenarios state p99 TTFT and TPOT limits "
                          "(mlcommons/inference loadgen mlperf.conf, target_latency_percentile = 99)",
    "tpot_tail_factor": "1 where no profile applies; the profiles carry the measured median p99 / mean TPOT of their "
                        "MLPerf Server and Interactive runs (data/measurements.csv): 1.09-1.27",
    "eta_bw": "v1 global value (one set for every generation), fitted in 2026 by the retired econ.validation to the 43 "
              "in-fit cases of data/validation_cases.csv (NIM, TensorRT-LLM, vLLM on H100/H200/B200/GB200; RMS log "
              "error 0.16 dense, 0.22 MoE). Used only where a user pins this field: by default every row takes the "
              "value of its generation x precision profile in data/calibration.csv (econ calibrate; values, standard "
              "errors and held-out errors there): 0.60 +- 0.07. Kernel tables put weight streaming at 0.8-0.9 of HBM on"
              " Hopper (data/kernels/)",
    "eta_flop": "v1 global value (one set for every generation), fitted in 2026 by the retired econ.validation to the "
                "43 in-fit cases of data/validation_cases.csv (NIM, TensorRT-LLM, vLLM on H100/H200/B200/GB200; RMS log"
                " error 0.16 dense, 0.22 MoE). Used only where a user pins this field: by default every row takes the "
                "value of its generation x precision profile in data/calibration.csv (econ calibrate; values, standard "
                "errors and held-out errors there): 0.30 +- 0.04 (whole-step decode MFU)",
    "eta_prefill": "v1 global value (one set for every generation), fitted in 2026 by the retired econ.validation to "
                   "the 43 in-fit cases of data/validation_cases.csv (NIM, TensorRT-LLM, vLLM on H100/H200/B200/GB200; "
                   "RMS log error 0.16 dense, 0.22 MoE). Used only where a user pins this field: by default every row "
                   "takes the value of its generation x precision profile in data/calibration.csv (econ calibrate; "
                   "values, standard errors and held-out errors there): 0.48 +- 0.04, rounded to 0.50",
    "overlap_frac": "Conservative default: TP all-reduces in decode sit on the critical path (no compute-communication "
                    "overlap)",
    "overhead_s": "v1 global value (one set for every generation), fitted in 2026 by the retired econ.validation to the"
                  " 43 in-fit cases of data/validation_cases.csv (NIM, TensorRT-LLM, vLLM on H100/H200/B200/GB200; RMS "
                  "log error 0.16 dense, 0.22 MoE). Used only where a user pins this field: by default every row takes "
                  "the value of its generation x precision profile in data/calibration.csv (econ calibrate; values, "
                  "standard errors and held-out errors there): 1.45 +- 1.6 ms, rounded to 1.5 ms (launch, scheduling "
                  "and sampling time of a decode step)",
    "usable_hbm_frac": "vLLM default gpu_memory_utilization=0.9 (docs.vllm.ai, EngineArgs); activations come out of "
                       "that share too",
    "prefill_chunk_tokens": "TensorRT-LLM default max_num_tokens=8192 (TensorRT-LLM docs, 'Useful build-time flags')",
    "stream_input_embedding": "False: a decode step gathers B rows of an untied input embedding; True reproduces the "
                              "seeds' count (seed 001: 16.1 GB, 208.6 tok/s)",
    "embedding_bytes_per_param": "DeepSeek-V3 config: bf16 for embeddings/norms/gates in its fp8 checkpoint (deepseek-"
                                 "ai/DeepSeek-V3 inference/configs)",
    "activation_bytes": "bf16 activations in TP all-reduces (Megatron-LM, TensorRT-LLM)",
    "scale_up_latency_s": "NVLink/NVSwitch hop latency ~1 us (assumption; NCCL small-message all-reduce on 8 H100 takes"
                          " ~10-20 us over 2(N-1) ring steps)",
    "scale_out_latency_s": "InfiniBand NDR one-way latency ~5 us (seed 001, Table 4)",
    "eta_routed_flop_frac": "v1 global value (one set for every generation), fitted in 2026 by the retired "
                            "econ.validation to the 43 in-fit cases of data/validation_cases.csv (NIM, TensorRT-LLM, "
                            "vLLM on H100/H200/B200/GB200; RMS log error 0.16 dense, 0.22 MoE). Used only where a user "
                            "pins this field: by default every row takes the value of its generation x precision "
                            "profile in data/calibration.csv (econ calibrate; values, standard errors and held-out "
                            "errors there): 0.28 +- 0.04, rounded to 0.30, when the routed roofline was max(bytes, "
                            "FLOPs); the grouped GEMM is now bytes + FLOPs (econ.physics.performance.grouped_gemm_time_s) and "
                            "the profiles sit near 0.9 (AIConfigurator fused MoE: 0.7-1.0 of the dense GEMM efficiency)",
    "eta_routed_bw_frac": "1.0: routed-expert weights stream like dense weights (not a profile parameter; the v1 fit "
                          "could not tell it from 1: 1.0 +- 0.58); lower it for formats whose expert weights stream "
                          "less efficiently",
    "moe_layer_overhead_s": "v1 global value (one set for every generation), fitted in 2026 by the retired "
                            "econ.validation to the 43 in-fit cases of data/validation_cases.csv (NIM, TensorRT-LLM, "
                            "vLLM on H100/H200/B200/GB200; RMS log error 0.16 dense, 0.22 MoE). Used only where a user "
                            "pins this field: by default every row takes the value of its generation x precision "
                            "profile in data/calibration.csv (econ calibrate; values, standard errors and held-out "
                            "errors there): 0.15 ms per MoE layer per forward pass; AIConfigurator's fused-MoE fixed "
                            "latency is 24-35 us per call (the prior of the calibration)",
}

IDEAL_OVERRIDES = dict(eta_bw=1.0, eta_flop=1.0, eta_prefill=1.0, overlap_frac=1.0, overhead_s=0.0,
                       eta_routed_flop_frac=1.0, eta_routed_bw_frac=1.0, moe_layer_overhead_s=0.0,
                       layer_overhead_s=0.0, moe_tile_rows=1.0, moe_gemm_half_width=0.0, tpot_tail_factor=1.0,
                       calibrated=frozenset())

DEFAULT = Assumptions()
IDEAL = replace(DEFAULT, **IDEAL_OVERRIDES)
"""The pure roofline: every efficiency 1 (routed experts included), communication fully overlapped, no step
or MoE-layer overhead."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Economics:
    """Finance, power and token-mix assumptions of the cost model (all user-adjustable).

    Attributes
    ----------
    basis : str, one of econ.engine.BASES
        The cost tier of $/GPU-hour: "owned" (owned-custom: capex annuity + facility + opex + power),
        "hyperscaler" / "neocloud" (SemiAnalysis cost of owning), "rental-3yr", "on-demand", "rental" (the
        catalog's representative rental rate) or "custom" (``usd_per_gpu_hour``). Sources:
        econ.engine.BASIS_SOURCES.
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

    basis: str = "owned"
    usd_per_gpu_hour: float | None = None
    usd_per_kwh: float = 0.0892
    pue: float = 1.40
    build_usd_per_mw_it: float = 11.7e6
    cost_of_capital_frac: float = 0.10
    accelerator_life_years: float = 5.0
    facility_life_years: float = 15.0
    opex_frac_of_capex_per_year: float = 0.05
    utilization_frac: float = 0.70
    input_output_mix: float = 3.0
    cache_hit_frac: float = 0.0
    cached_input_cost_frac: float = 0.0

    def __post_init__(self):
        bases = ("owned", "hyperscaler", "neocloud", "rental-3yr", "on-demand", "rental", "custom")  # econ.engine.BASES
        if self.basis == "owned-custom":
            object.__setattr__(self, "basis", "owned")
        if self.basis not in bases:
            raise InvalidInputError(f"basis={self.basis!r} is not one of {list(bases)}")
        if self.usd_per_gpu_hour is not None:
            _check(self, {"usd_per_gpu_hour": (1e-6, 1e4)})
        if self.basis == "custom" and self.usd_per_gpu_hour is None:
            raise InvalidInputError("basis='custom' needs usd_per_gpu_hour (a $/GPU-hour, (0, 10000] USD/h)")
        _check(self, {
            "usd_per_kwh": (0.0, 10.0), "pue": (1.0, 5.0), "build_usd_per_mw_it": (0.0, 1e9),
            "cost_of_capital_frac": (0.0, 1.0), "accelerator_life_years": (0.1, 50.0),
            "facility_life_years": (0.1, 100.0), "opex_frac_of_capex_per_year": (0.0, 1.0),
            "utilization_frac": (0.01, 1.0), "input_output_mix": (0.0, 1e4),
            "cache_hit_frac": (0.0, 1.0), "cached_input_cost_frac": (0.0, 1.0),
        })


ECONOMICS_SOURCES: dict[str, str] = {
    "basis": "owned (TCO chain) by default; tiers hyperscaler, neocloud, rental-3yr, on-demand, rental, custom "
             "(sources: econ.engine.BASIS_SOURCES; data/README.md accelerators.csv)",
    "usd_per_gpu_hour": "none: only for basis custom, a rate typed by the user",
    "usd_per_kwh": "Virginia industrial average 2023, 8.92 c/kWh (EIA Electric Power Annual; "
                   "data/power_prices.csv us-va-industrial)",
    "pue": "Industry-average sanity value 1.40 (seed 001, Table 13); Uptime 2024 survey 1.56",
    "build_usd_per_mw_it": "US 19-market average $11.7M per MW of IT load (Cushman & Wakefield Data "
                           "Center Development Cost Guide 2025)",
    "cost_of_capital_frac": "10%/year: top of strong-corporate bank loans (5-10%), bottom of "
                            "GPU-backed private credit (10-17%) (gpuloans.com, 2025-12)",
    "accelerator_life_years": "5 years: Amazon's 2025 server life for AI infrastructure (10-K); "
                              "Microsoft/Alphabet/CoreWeave use 6, Meta 5.5",
    "facility_life_years": "15 years: assumption, middle of the 10-20 year range in DESIGN.md "
                           "(no sourced figure found)",
    "opex_frac_of_capex_per_year": "5%/year: assumption for maintenance, spares, staff and support "
                                   "contracts (not sourced; adjust)",
    "utilization_frac": "70%: assumption for an inference fleet's paid-traffic share of hours "
                        "(diurnal load; not sourced; adjust)",
    "input_output_mix": "3:1 input:output, Artificial Analysis blended-price convention",
    "cache_hit_frac": "0: no prefix caching unless stated",
    "cached_input_cost_frac": "0: a cache hit skips prefill compute; KV storage/transfer not modeled",
}


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

    expert_imbalance_factor: float = 1.2
    dispatch_activation_bytes: float = 1.0
    combine_activation_bytes: float = 2.0
    alltoall_scale_up_latency_s: float = 10e-6
    alltoall_scale_out_latency_s: float = 40e-6
    kernel_launch_latency_s: float = 2e-6
    kv_transfer_eta: float = 0.8
    kv_transfer_latency_s: float = 0.5e-3
    kv_head_replication: bool = True
    max_pool_instances: int = 16
    pool_sizing_tolerance_frac: float = 0.03

    def __post_init__(self):
        _check(self, {
            "expert_imbalance_factor": (1.0, 64.0), "dispatch_activation_bytes": (0.25, 4.0),
            "combine_activation_bytes": (0.25, 4.0), "alltoall_scale_up_latency_s": (0.0, 1e-2),
            "alltoall_scale_out_latency_s": (0.0, 1e-1), "kernel_launch_latency_s": (0.0, 1e-3),
            "kv_transfer_eta": (1e-3, 1.0), "kv_transfer_latency_s": (0.0, 1.0),
            "max_pool_instances": (1, 256), "pool_sizing_tolerance_frac": (0.0, 1.0),
        })
        if not isinstance(self.kv_head_replication, bool):
            raise InvalidInputError(f"kv_head_replication={self.kv_head_replication!r} must be true or false")


DEPLOYMENT_ASSUMPTION_SOURCES: dict[str, str] = {
    "expert_imbalance_factor": "Assumption 1.2 for a deployment running an expert-parallel load balancer "
                               "(redundant hot experts, DeepSeek EPLB / TensorRT-LLM wide-EP); unbalanced "
                               "routing is commonly 1.2-1.8 max/mean and worse at wide EP (TensorRT-LLM tech "
                               "blogs 'Scaling Expert Parallelism', parts 1-2)",
    "dispatch_activation_bytes": "fp8 dispatch (DeepSeek-V3 report sec. 3.3; deepseek-ai/DeepEP: 'FP8 "
                                 "dispatching and BF16 combining')",
    "combine_activation_bytes": "bf16 combine (same sources)",
    "alltoall_scale_up_latency_s": "Assumption ~10 us per NVLink all-to-all call (kernel start + barrier); "
                                   "not measured here",
    "alltoall_scale_out_latency_s": "~40 us per RDMA call: DeepEP low-latency dispatch at EP128-256 takes "
                                    "192-194 us for 128 tokens x top-8 x 7168 fp8 (7.3 MB) on a 50 GB/s "
                                    "NIC, 147 us of which is bytes/bandwidth (deepseek-ai/DeepEP README)",
    "kernel_launch_latency_s": "Assumption ~2 us per kernel node replayed in a CUDA graph (order of "
                               "magnitude; not measured here)",
    "kv_transfer_eta": "Assumption: 80% of link bandwidth for bulk RDMA/NVLink KV-block copies "
                       "(NIXL / Mooncake transfer engine class)",
    "kv_transfer_latency_s": "Assumption 0.5 ms per request (metadata handshake and completion "
                             "notification between the pools); not measured here",
    "kv_head_replication": "vLLM and TensorRT-LLM replicate KV heads when tp > num_kv_heads",
    "max_pool_instances": "Search bound for xPyD ratios (DeepSeek's production ratio is 4 prefill : "
                          "18 decode nodes; 1P1D-4P1D common in NVIDIA Dynamo recipes)",
    "pool_sizing_tolerance_frac": "Assumption: 3% more accelerators per request is worth a unit that can "
                                  "actually be deployed and scaled in small steps",
}

DEFAULT_DEPLOYMENT = DeploymentAssumptions()
NEUTRAL_DEPLOYMENT = DeploymentAssumptions(expert_imbalance_factor=1.0, alltoall_scale_up_latency_s=0.0,
                                           alltoall_scale_out_latency_s=0.0, kernel_launch_latency_s=0.0,
                                           kv_transfer_eta=1.0, kv_transfer_latency_s=0.0)
"""Every term parallel layouts add set to its ideal: pair with ``assumptions.IDEAL`` for the pure roofline."""


def deployment_assumptions_frame(deployment: DeploymentAssumptions) -> pl.DataFrame:
    """The deployment assumptions as rows of (group, name, value, source), like ``assumptions_frame``."""
    return pl.DataFrame([{"group": "deployment", "name": f.name, "value": str(getattr(deployment, f.name)),
                          "source": DEPLOYMENT_ASSUMPTION_SOURCES.get(f.name, "")} for f in fields(deployment)])
