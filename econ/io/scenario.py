"""A whole analysis as one value: :class:`Scenario` <-> dict <-> URL query string <-> TOML file.

The dashboard keeps its state in a ``Scenario`` (so a copied link reproduces the view) and the CLI
reads one from ``--scenario FILE``. Reading is forgiving on purpose: an unknown field, an unknown
catalog id, an unparsable or out-of-range value gives a *warning* and that field's default, never an
exception, because a stale link or a hand-edited file must still open. Writing is exact: a scenario
written and read back is equal to itself (``tests/io/test_scenario.py``).

Field ranges are the ones the core accepts (:class:`econ.assumptions.Assumptions`,
:class:`econ.assumptions.Economics`, :func:`econ.analyses.cluster.size_cluster`), narrowed where the core's
range is wider than any real facility (PUE <= 3, the limit of ``size_cluster``).
"""

from __future__ import annotations

import difflib
import json
import tomllib
from dataclasses import dataclass, fields, replace

from econ import vocabulary as V
from econ.assumptions import DECODING_FIELDS, Assumptions, Decoding, Economics
from econ.tables.custom import CUSTOM_ID, CustomAccelerator
from econ.presets import WORKLOADS

MAX_SCENARIO_BYTES = 1_000_000
"""Largest scenario file read (a complete scenario is about 3 kB). [B]"""
MAX_SCENARIO_DEPTH = 16
"""Deepest nesting of arrays and tables accepted in a scenario file (a scenario needs 2)."""
MAX_WARNINGS = 20
"""Warnings listed for one scenario; the rest are counted."""
_SHOWN_CHARS = 60  # a value quoted in a warning is cut to this many characters

class ScenarioWarning(str):
    """A warning of :func:`from_mapping`: its text, and ``field``, the scenario field it is about ("" when none: an
    unknown key, an unreadable file). The text is what is shown; ``field`` lets the dashboard tell a fallback it may
    show (a stale PUE) from one that must stop the page (the accelerator: a custom chip or its id)."""

    field: str

    def __new__(cls, text: str, field: str = ""):
        obj = super().__new__(cls, text)
        obj.field = field
        return obj


IDENTITY_FIELDS: frozenset[str] = frozenset({"hardware", "h2h_a_hardware", "h2h_b_hardware", "custom_accelerator"})
"""Fields whose fallback would price another accelerator than the one asked for (a typo in the hardware id, a custom
accelerator that cannot be used): never substituted silently (:func:`substitutes_the_accelerator`)."""


def substitutes_the_accelerator(warnings, scenario: "Scenario | None" = None) -> list[str]:
    """The warnings of :func:`from_mapping` that mean another accelerator than the one asked for would be priced: a
    custom accelerator that could not be used, a field of one in use that could not be used as written (the default
    chip's value would stand in), or an accelerator id that is not in the catalog (the H100 would stand in).
    The CLI refuses every warning; the dashboard computes nothing while one of these stands (issue 21).

    Parameters
    ----------
    warnings : list of str (:class:`ScenarioWarning`)
    scenario : Scenario, optional
        The scenario read; a custom field's warning counts only while its custom accelerator is in use (None: always).
    """
    def stops(w) -> bool:
        field = getattr(w, "field", "")
        if field in IDENTITY_FIELDS:
            return True
        return field.startswith("custom_") and (scenario is None or scenario.custom_accelerator)
    return [w for w in warnings if stops(w)]


FieldSpec = V.Field
"""How one scenario field is parsed, bounded and described: the vocabulary's :class:`econ.vocabulary.Field`."""

SPECS: dict[str, V.Field] = {name: f for name, f in V.FIELDS.items() if f.scenario}
"""The scenario's fields: every vocabulary field that belongs to the dashboard's state (one range, one default,
one label each; :data:`econ.vocabulary.FIELDS`)."""


def _d(name: str):
    return V.FIELDS[name].default


CUSTOM_FIELDS: dict[str, str] = {
    "custom_name": "name", "custom_bf16_tflop_per_s": "bf16_tflop_per_s", "custom_fp8_tflop_per_s": "fp8_tflop_per_s",
    "custom_fp4_tflop_per_s": "fp4_tflop_per_s", "custom_hbm_gib": "hbm_gib", "custom_hbm_tb_per_s": "hbm_tb_per_s",
    "custom_scale_up_domain_size": "scale_up_domain_size", "custom_scale_up_gb_per_s": "scale_up_gb_per_s",
    "custom_scale_up_topology": "scale_up_topology",
    "custom_scale_out_gb_per_s": "scale_out_gb_per_s", "custom_capex_usd": "capex_usd",
    "custom_usd_per_gpu_hour": "usd_per_gpu_hour", "custom_power_w": "power_w", "custom_generation": "generation",
}
"""Scenario field -> :class:`econ.tables.custom.CustomAccelerator` field."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """Every input of the dashboard and the CLI, with defaults (the dashboard's opening view).

    Attributes
    ----------
    model, hardware : str
        Catalog ids (``models.csv``, ``accelerators.csv``).
    precision : {"bf16", "fp8", "fp4"}
    num_gpus, batch_size : int or None
        None = automatic (fewest GPUs that hold the weights; the sweet-spot batch).
    input_len, output_len : int [tokens]
    workload : {"chat", "reasoning", "summarization", "custom"}
        The request-shape preset (:mod:`econ.presets`) the lengths come from; "custom" when they match none.
    weight_format ... spec_draft_model : str, int, float or None
        :class:`econ.assumptions.Decoding` fields (None = automatic: the release's formats, the vendor's
        speculative decoding); :meth:`decoding`.
    region : str or None
        ``power_prices.csv`` region id; None = use ``usd_per_kwh``.
    usd_per_kwh ... cache_hit_frac
        :class:`econ.assumptions.Economics` fields (same names, units and defaults).
    eta_bw ... scale_out_latency_s, eta_routed_flop_frac, eta_routed_bw_frac, moe_layer_overhead_s, kernel_latency_s,
    kernel_launch_s, kernel_launch_eager_s, prefill_layer_dispatch_s, cuda_graph_max_batch
        :class:`econ.assumptions.Assumptions` fields (same names, units and defaults).
    min_tokens_per_s_per_user : float [tokens/s]
        Interactivity floor (SLO) of the hardware comparison, the optimizer and the cluster's serving
        estimate (default :data:`econ.presets.DEFAULT_MIN_TOKENS_PER_S_PER_USER`).
    slo_percentile : float or None [%]
        Judge the SLOs at this percentile of TPOT and TTFT (None = the served means).
    interactivity_levels : tuple of float [tokens/s per user]
        Levels of the cost-vs-interactivity tables (default 20, 50, 100).
    compare_hardware, compare_precisions : tuple of str
        Subsets compared; empty = all.
    compare_objective : {"output", "blended"}
        Rank by $/M output tokens or by the blended $/M at ``input_output_mix``.
    cluster_gpus ... price_usd_per_m_output_tokens
        Inputs of :func:`econ.analyses.compare.cluster_plan` (cluster page, ``econ cluster``).
    h2h_a_model ... h2h_b_basis
        The two set-ups of the head-to-head page (:func:`econ.analyses.compare.head_to_head`); a tier None follows
        ``basis`` (the sidebar's tier).
    custom_accelerator, custom_name ... custom_power_w
        A user's own accelerator (:class:`econ.tables.custom.CustomAccelerator`), catalog id
        :data:`econ.tables.custom.CUSTOM_ID` while ``custom_accelerator`` is true.

    Notes
    -----
    Defaults: Llama-3.3-70B on H100 SXM in fp8, 1,024 input and 1,024 output tokens; the economic
    and efficiency defaults are those of ``econ.assumptions`` (sources there). Cluster defaults:
    seed 001 Table 8 overhead budget (5% bubbles, 3% checkpointing, 10% failure recovery, 5%
    maintenance), a 24 h failure window, 50,000 h MTBF per GPU (Table 6) and 100 GB/s checkpoint
    bandwidth (Table 7); 15 T training tokens (Llama 3, arXiv:2407.21783); a selling price of
    $0.90 per M output tokens (assumption, about the 2025-26 list price of Llama-3.3-70B at
    Together, ``data/quotes.csv``).
    """

    model: str = _d("model")
    hardware: str = _d("hardware")
    precision: str = _d("precision")
    num_gpus: int | None = _d("num_gpus")
    batch_size: int | None = _d("batch_size")
    input_len: int = _d("input_len")
    output_len: int = _d("output_len")
    workload: str = _d("workload")
    weight_format: str | None = _d("weight_format")
    expert_weight_format: str | None = _d("expert_weight_format")
    kv_precision: str | None = _d("kv_precision")
    spec_method: str | None = _d("spec_method")
    spec_draft_tokens: int | None = _d("spec_draft_tokens")
    spec_acceptance: float | None = _d("spec_acceptance")
    spec_draft_model: str | None = _d("spec_draft_model")
    region: str | None = _d("region")
    usd_per_kwh: float = _d("usd_per_kwh")
    pue: float = _d("pue")
    build_usd_per_mw_it: float = _d("build_usd_per_mw_it")
    basis: str = _d("basis")
    usd_per_gpu_hour: float | None = _d("usd_per_gpu_hour")
    cost_of_capital_frac: float = _d("cost_of_capital_frac")
    accelerator_life_years: float = _d("accelerator_life_years")
    facility_life_years: float = _d("facility_life_years")
    opex_frac_of_capex_per_year: float = _d("opex_frac_of_capex_per_year")
    utilization_frac: float = _d("utilization_frac")
    input_output_mix: float = _d("input_output_mix")
    cache_hit_frac: float = _d("cache_hit_frac")
    cached_input_cost_frac: float = _d("cached_input_cost_frac")
    eta_bw: float = _d("eta_bw")
    eta_flop: float = _d("eta_flop")
    eta_prefill: float = _d("eta_prefill")
    overlap_frac: float = _d("overlap_frac")
    single_batch_overlap_frac: float = _d("single_batch_overlap_frac")
    comm_sm_frac: float = _d("comm_sm_frac")
    overhead_s: float = _d("overhead_s")
    usable_hbm_frac: float = _d("usable_hbm_frac")
    kv_memory_rule: str = _d("kv_memory_rule")
    prefill_chunk_tokens: int = _d("prefill_chunk_tokens")
    stream_input_embedding: bool = _d("stream_input_embedding")
    embedding_bytes_per_param: float = _d("embedding_bytes_per_param")
    activation_bytes: float = _d("activation_bytes")
    scale_up_latency_s: float = _d("scale_up_latency_s")
    scale_out_latency_s: float = _d("scale_out_latency_s")
    eta_routed_flop_frac: float = _d("eta_routed_flop_frac")
    eta_routed_bw_frac: float = _d("eta_routed_bw_frac")
    moe_layer_overhead_s: float = _d("moe_layer_overhead_s")
    layer_overhead_s: float = _d("layer_overhead_s")
    sequence_overhead_s: float = _d("sequence_overhead_s")
    cpu_overlap_frac: float = _d("cpu_overlap_frac")
    kernel_latency_s: float = _d("kernel_latency_s")
    kernel_launch_s: float = _d("kernel_launch_s")
    kernel_launch_eager_s: float = _d("kernel_launch_eager_s")
    prefill_layer_dispatch_s: float = _d("prefill_layer_dispatch_s")
    cuda_graph_max_batch: int = _d("cuda_graph_max_batch")
    moe_tile_rows: float = _d("moe_tile_rows")
    moe_gemm_half_width: float = _d("moe_gemm_half_width")
    max_batch_per_group: int = _d("max_batch_per_group")
    latency_percentile: float = _d("latency_percentile")
    tpot_tail_factor: float = _d("tpot_tail_factor")
    min_tokens_per_s_per_user: float = _d("min_tokens_per_s_per_user")
    slo_percentile: float | None = _d("slo_percentile")
    interactivity_levels: tuple[float, ...] = _d("interactivity_levels")
    compare_hardware: tuple[str, ...] = _d("compare_hardware")
    compare_precisions: tuple[str, ...] = _d("compare_precisions")
    compare_objective: str = _d("compare_objective")
    cluster_gpus: int = _d("cluster_gpus")
    gpus_per_rack: int | None = _d("gpus_per_rack")
    training_precision: str = _d("training_precision")
    mfu_frac: float | None = _d("mfu_frac")
    bubble_frac: float = _d("bubble_frac")
    checkpoint_overhead_frac: float = _d("checkpoint_overhead_frac")
    failure_recovery_frac: float = _d("failure_recovery_frac")
    maintenance_frac: float = _d("maintenance_frac")
    failure_window_h: float = _d("failure_window_h")
    mtbf_h_per_gpu: float = _d("mtbf_h_per_gpu")
    checkpoint_write_gb_per_s: float = _d("checkpoint_write_gb_per_s")
    training_tokens: float = _d("training_tokens")
    price_usd_per_m_output_tokens: float = _d("price_usd_per_m_output_tokens")
    h2h_a_model: str = _d("h2h_a_model")
    h2h_a_hardware: str = _d("h2h_a_hardware")
    h2h_a_precision: str = _d("h2h_a_precision")
    h2h_a_basis: str | None = _d("h2h_a_basis")
    h2h_b_model: str = _d("h2h_b_model")
    h2h_b_hardware: str = _d("h2h_b_hardware")
    h2h_b_precision: str = _d("h2h_b_precision")
    h2h_b_basis: str | None = _d("h2h_b_basis")
    custom_accelerator: bool = _d("custom_accelerator")
    custom_name: str = _d("custom_name")
    custom_bf16_tflop_per_s: float = _d("custom_bf16_tflop_per_s")
    custom_fp8_tflop_per_s: float | None = _d("custom_fp8_tflop_per_s")
    custom_fp4_tflop_per_s: float | None = _d("custom_fp4_tflop_per_s")
    custom_hbm_gib: float = _d("custom_hbm_gib")
    custom_hbm_tb_per_s: float = _d("custom_hbm_tb_per_s")
    custom_scale_up_domain_size: int = _d("custom_scale_up_domain_size")
    custom_scale_up_gb_per_s: float = _d("custom_scale_up_gb_per_s")
    custom_scale_up_topology: str = _d("custom_scale_up_topology")
    custom_scale_out_gb_per_s: float = _d("custom_scale_out_gb_per_s")
    custom_capex_usd: float | None = _d("custom_capex_usd")
    custom_usd_per_gpu_hour: float | None = _d("custom_usd_per_gpu_hour")
    custom_power_w: float = _d("custom_power_w")
    custom_generation: str | None = _d("custom_generation")

    # -- conversions to the core's inputs -------------------------------------------------------
    def assumptions(self) -> Assumptions:
        """The efficiency factors as :class:`econ.assumptions.Assumptions`.

        An efficiency left at its default comes from the calibration profile of each row's accelerator
        generation and precision (data/calibration.csv); one the scenario changes replaces the profile's
        (:attr:`econ.assumptions.Assumptions.calibrated`).
        """
        names = {f.name for f in fields(Assumptions)} - {"calibrated"}
        return Assumptions(**{n: getattr(self, n) for n in names})

    def decoding(self) -> Decoding:
        """Formats and speculative decoding as :class:`econ.assumptions.Decoding` (None fields: automatic)."""
        return Decoding(**{n: getattr(self, n) for n in DECODING_FIELDS})

    def economics(self, catalog=None) -> Economics:
        """The finance inputs as :class:`econ.assumptions.Economics`.

        ``region`` (when set) gives ``usd_per_kwh`` from ``catalog.power_prices``; without a catalog,
        or with region None, ``usd_per_kwh`` is used.
        """
        names = {f.name for f in fields(Economics)}
        values = {n: getattr(self, n) for n in names if hasattr(self, n)}
        if self.region is not None and catalog is not None:
            values["usd_per_kwh"] = float(catalog.power_price(self.region)["usd_per_kwh"])
        return Economics(**values)

    def effective_usd_per_kwh(self, catalog=None) -> float:
        """Electricity price in force: the region's when a region is set, else ``usd_per_kwh``. [USD/kWh]"""
        return self.economics(catalog).usd_per_kwh

    def custom_spec(self) -> CustomAccelerator | None:
        """The custom accelerator (:class:`econ.tables.custom.CustomAccelerator`), or None when not in use."""
        if not self.custom_accelerator:
            return None
        return CustomAccelerator(**{k: getattr(self, f) for f, k in CUSTOM_FIELDS.items()})

    def catalog(self, catalog):
        """``catalog`` with the custom accelerator appended (id :data:`econ.tables.custom.CUSTOM_ID`) when one is in use.

        Raises
        ------
        econ.errors.DataError, InvalidInputError
            The custom accelerator fails the catalog's validation (see :func:`econ.tables.custom.with_custom_accelerator`).
        """
        spec = self.custom_spec()
        if spec is None or catalog is None:
            return catalog
        from econ.tables.custom import with_custom_accelerator
        return with_custom_accelerator(catalog, spec)

    def with_workload(self, name: str) -> "Scenario":
        """The scenario with a workload preset's lengths ("custom" keeps the lengths); a task preset (issue 22) also
        sets the prefix-cache hit rate to its prefix-reuse share (its cached prefix is not prefilled again)."""
        if name in WORKLOADS:
            w = WORKLOADS[name]
            hit = {"cache_hit_frac": w.prefix_reuse_frac} if w.is_task else {}
            return replace(self, workload=name, input_len=w.input_len, output_len=w.output_len, **hit)
        return replace(self, workload="custom")

    def cost_kwargs(self) -> dict:
        """Keyword arguments of :func:`econ.analyses.sweep.cost_table` / ``batch_curve`` (without catalog)."""
        return dict(model=self.model, hardware=self.hardware, precision=self.precision, num_gpus=self.num_gpus,
                    input_len=self.input_len, output_len=self.output_len, decoding=self.decoding(),
                    slo_percentile=self.slo_percentile)

    # -- serialisation ---------------------------------------------------------------------------
    def to_dict(self, *, only_changed: bool = False) -> dict:
        """Plain dict (tuples as lists); ``only_changed`` keeps the fields that differ from the defaults."""
        default = Scenario()
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if only_changed and v == getattr(default, f.name):
                continue
            out[f.name] = list(v) if isinstance(v, tuple) else v
        return out

    def to_query_params(self) -> dict[str, str]:
        """URL query parameters: only fields that differ from the defaults, as text."""
        return {k: _to_text(SPECS[k], v) for k, v in self.to_dict(only_changed=True).items()}

    def to_toml(self) -> str:
        """A complete, commented TOML document (every field; automatic values as their token)."""
        lines = ["# econ scenario: load with `econ cost --scenario FILE` or the dashboard sidebar.",
                 "# Automatic values are written as a token (num_gpus = \"auto\", region = \"custom\").",
                 "[scenario]"]
        for f in fields(self):
            spec = SPECS[f.name]
            v = getattr(self, f.name)
            unit = f"  # {spec.unit}" if spec.unit else ""
            lines.append(f"{f.name} = {_toml_value(spec, v)}{unit}")
        return "\n".join(lines) + "\n"


SCENARIO_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Scenario))
"""Field names in declaration order (``tests/io/test_scenario.py`` checks they match :data:`SPECS`)."""


# ---------------------------------------------------------------------------------------------
# parsing (forgiving: warnings + defaults)
# ---------------------------------------------------------------------------------------------

def from_mapping(data, catalog=None, *, base: Scenario | None = None) -> tuple[Scenario, list[str]]:
    """Build a scenario from a mapping of field -> value (text or typed), with warnings.

    Parameters
    ----------
    data : mapping
        Field names to values. Values may be text (URL, form) or typed (TOML, JSON). A list value of
        a URL parameter uses its last element.
    catalog : econ.tables.catalog.Catalog, optional
        When given, ids (``model``, ``hardware``, ``region``, ``compare_hardware``) are checked
        against it; an unknown id falls back to the default (or the catalog's first id when the
        default itself is missing).
    base : Scenario, optional
        Values for fields not in ``data`` (default: ``Scenario()``).

    Returns
    -------
    (Scenario, list of str)
        Warnings name the field, the value, and the valid range or the closest ids. Never raises for
        bad values.
    """
    base = base or Scenario()
    default = Scenario()
    values: dict = {}
    warnings: list[str] = []
    items = list(dict(data).items())
    # the custom accelerator's fields first: while it is in use, its id is a valid accelerator id below
    items.sort(key=lambda kv: not (isinstance(kv[0], str) and kv[0].startswith("custom_")))
    ext = catalog
    extended = False
    for key, raw in items:
        if key not in SPECS:
            key_text = str(key) if isinstance(key, str) else _show(key)
            hint = _field_hint(key_text) if len(key_text) <= 200 else ""
            warnings.append(ScenarioWarning(f"unknown scenario field {_show(key_text)} ignored{hint}"))
            continue
        if not extended and not key.startswith("custom_"):
            ext, custom_warning = _with_custom(replace(base, **values), catalog)
            extended = True
            if custom_warning:
                warnings.append(ScenarioWarning(custom_warning, "custom_accelerator"))
                values["custom_accelerator"] = False
        if isinstance(raw, list) and SPECS[key].kind not in ("ids", "floats"):
            raw = raw[-1] if raw else None
        ok, value, problem = _parse(key, SPECS[key], raw, ext)
        if ok:
            values[key] = value
        else:
            fallback = _fallback(key, getattr(default, key), ext)
            shown = _to_text(SPECS[key], fallback) or "all"
            warnings.append(ScenarioWarning(f"{problem}; using the default {shown!r}", key))
            values[key] = fallback
    if not extended:
        ext, custom_warning = _with_custom(replace(base, **values), catalog)
        if custom_warning:
            warnings.append(ScenarioWarning(custom_warning, "custom_accelerator"))
            values["custom_accelerator"] = False
    values.update(_workload_values(base, values))
    scenario = replace(base, **values)
    # the base's own ids may be stale against this catalog (e.g. an edited table, a custom accelerator turned off)
    fixes = {}
    for key in ("model", "hardware", "region", "h2h_a_model", "h2h_a_hardware", "h2h_b_model", "h2h_b_hardware"):
        v = getattr(scenario, key)
        if key not in values and ext is not None and v is not None and not _known(key, v, ext):
            fixes[key] = _fallback(key, getattr(default, key), ext)
            warnings.append(ScenarioWarning(f"{key}={_show(v)} is not in the catalog; using {fixes[key]!r}", key))
    if ext is not None and not scenario.custom_accelerator:  # the custom id without the accelerator: drop it
        for key in ("hardware", "h2h_a_hardware", "h2h_b_hardware"):
            if (fixes.get(key) or getattr(scenario, key)) == CUSTOM_ID:
                fixes[key] = _fallback(key, getattr(default, key), ext)
                warnings.append(ScenarioWarning(f"{key}={CUSTOM_ID!r} needs custom_accelerator = true; using "
                                                f"{fixes[key]!r}", key))
        if CUSTOM_ID in scenario.compare_hardware:
            fixes["compare_hardware"] = tuple(h for h in scenario.compare_hardware if h != CUSTOM_ID)
    if len(warnings) > MAX_WARNINGS:
        stops = substitutes_the_accelerator(warnings[MAX_WARNINGS:])  # never cut the ones that stop a page
        warnings = warnings[:MAX_WARNINGS] + stops[:1] + [ScenarioWarning(
            f"(+{len(warnings) - MAX_WARNINGS - len(stops[:1])} more warnings not shown)",
            stops[0].field if stops else "")]
    return replace(scenario, **fixes), warnings


def _with_custom(sc: Scenario, catalog):
    """(catalog with the scenario's custom accelerator, or the catalog; a warning when the accelerator is invalid)."""
    if catalog is None or not sc.custom_accelerator:
        return catalog, ""
    from econ.errors import EconError
    try:
        return sc.catalog(catalog), ""
    except EconError as exc:
        text = " ".join(str(exc).split())
        return catalog, f"custom accelerator not used ({_cut(text)})"


def _workload_values(base: Scenario, values: dict) -> dict:
    """Keep ``workload`` and the lengths consistent: a preset named without lengths sets them; lengths that
    match no preset (or differ from the named one) make the workload "custom"."""
    name = values.get("workload", base.workload)
    given = "input_len" in values or "output_len" in values
    if "workload" in values and name in WORKLOADS and not given:
        w = WORKLOADS[name]
        return {"input_len": w.input_len, "output_len": w.output_len}
    in_len, out_len = values.get("input_len", base.input_len), values.get("output_len", base.output_len)
    if name in WORKLOADS and (WORKLOADS[name].input_len, WORKLOADS[name].output_len) == (in_len, out_len):
        return {}
    from econ.presets import workload_of
    return {"workload": workload_of(in_len, out_len)}


def from_query_params(params, catalog=None) -> tuple[Scenario, list[str]]:
    """Scenario from URL query parameters (``st.query_params`` or a dict); see :func:`from_mapping`."""
    return from_mapping({k: params[k] for k in params}, catalog)


def from_toml(text: str | bytes, catalog=None) -> tuple[Scenario, list[str]]:
    """Scenario from a TOML document (fields at the top level or under ``[scenario]``).

    A document that is not valid TOML gives the default scenario and one warning naming the line.
    """
    if len(text) > MAX_SCENARIO_BYTES:
        return Scenario(), [f"scenario file is {len(text):,} bytes; at most {MAX_SCENARIO_BYTES:,} are read "
                            f"(a scenario is about 3 kB); using the default scenario"]
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return Scenario(), ["scenario file is not UTF-8 text; using the default scenario"]
    depth = toml_nesting_depth(text)
    if depth > MAX_SCENARIO_DEPTH:
        return Scenario(), [f"scenario file nests arrays/tables {depth} deep; at most {MAX_SCENARIO_DEPTH} "
                            f"(a scenario needs 2); using the default scenario"]
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return Scenario(), [f"scenario file is not valid TOML ({_cut(str(exc))}); using the default scenario"]
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits (sys.get_int_max_str_digits)
        return Scenario(), [f"scenario file holds a value TOML cannot read ({_cut(str(exc))}); using the default "
                            f"scenario"]
    except RecursionError:  # pragma: no cover - toml_nesting_depth refuses such files first
        return Scenario(), ["scenario file nests too deep; using the default scenario"]
    table = doc.get("scenario", doc)
    if not isinstance(table, dict):
        return Scenario(), ["scenario file: [scenario] must be a table; using the default scenario"]
    extra = [k for k in doc if k != "scenario"] if "scenario" in doc else []
    scenario, warnings = from_mapping(table, catalog)
    return scenario, [ScenarioWarning(f"unknown top-level key {_show(k)} ignored") for k in extra[:MAX_WARNINGS]] \
        + warnings


def toml_nesting_depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` in a TOML document, outside strings and comments (a linear scan).

    :mod:`tomllib` parses nested arrays and inline tables recursively, so a document nested some
    thousands deep raises ``RecursionError``; this scan lets :func:`from_toml` refuse it first. Table
    headers (``[a]``, ``[[a]]``) count as their brackets, and a dotted key (``a.b.c = 1``) counts one
    level per dot.
    """
    depth = best = dots = 0
    i, n = 0, len(text)
    line_start = True  # in the key part of a line (before its "=")
    while i < n:
        c = text[i]
        if c in "\"'":
            triple = text.startswith(c * 3, i)
            end_tok = c * 3 if triple else c
            j = i + len(end_tok)
            while j < n:
                if c == '"' and text[j] == "\\":
                    j += 2
                    continue
                if text.startswith(end_tok, j):
                    break
                if not triple and text[j] == "\n":
                    break
                j += 1
            i = j + len(end_tok)
            continue
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "[{":
            depth += 1
            best = max(best, depth)
        elif c in "]}":
            depth = max(0, depth - 1)
        elif c == "\n":
            line_start, dots = True, 0
        elif c == "=" and depth == 0:
            line_start = False
        elif c == "." and depth == 0 and line_start:
            dots += 1
            best = max(best, dots + 1)
        i += 1
    return best


def load_toml_file(path, catalog=None) -> tuple[Scenario, list[str]]:
    """Read a scenario file; raises :class:`econ.errors.InvalidInputError` only if it cannot be read.

    Raises
    ------
    InvalidInputError
        The file is missing, unreadable, a folder or another file that is not a regular one (a FIFO, a device), or
        larger than :data:`MAX_SCENARIO_BYTES` (read bounded: :func:`econ.tables.uploads.read_file_bytes`).
    """
    from econ.errors import DataError, InvalidInputError
    from econ.tables.uploads import read_file_bytes

    try:
        data = read_file_bytes(path, MAX_SCENARIO_BYTES, what="a scenario file")
    except DataError as exc:
        if getattr(exc, "too_large", False):
            raise InvalidInputError(f"--scenario={_cut(str(path))!r}: larger than {MAX_SCENARIO_BYTES:,} bytes "
                                    f"(a scenario is about 3 kB)") from None
        reason = getattr(exc, "reason", str(exc))
        if reason.startswith(("file not found", "cannot read", "is ")):
            reason = f"cannot read the file ({reason})"
        raise InvalidInputError(f"--scenario={_cut(str(path))!r}: {reason}") from None
    return from_toml(data, catalog)


def save_toml_file(scenario: Scenario, path, *, force: bool = False, force_hint: str = "force=True"):
    """Write ``scenario.to_toml()`` to ``path`` with the one safe writer (:mod:`econ.safe_write`).

    Returns
    -------
    Path written.

    Raises
    ------
    InvalidInputError
        The file exists and not ``force``, or it cannot be written (reason named; nothing half-written).
    """
    from econ.safe_write import write_text

    return write_text(scenario.to_toml(), path, force=force, force_hint=force_hint, what="scenario file")


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text):,} characters)"


def _show(value) -> str:
    """A value quoted in a warning: its repr, cut to a few dozen characters, never a deep recursion."""
    if isinstance(value, (dict, list, tuple)):
        return f"<{type(value).__name__} of {len(value)} item(s)>"
    text = repr(value) if isinstance(value, str) else repr(str(value)) if not isinstance(value, (int, float)) \
        else V.show(value)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + f"...' ({len(text):,} characters)"


def _field_hint(key: str) -> str:
    """' (did you mean 'pue'?)' for a misspelled field: a field contained in the key, else a close match."""
    inside = sorted((f for f in SCENARIO_FIELDS if f in key or key in f), key=len, reverse=True)
    close = inside or difflib.get_close_matches(key, SCENARIO_FIELDS, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _known(key: str, value, catalog) -> bool:
    table, col = _ID_TABLE[SPECS[key].catalog]
    return value in set(getattr(catalog, table)[col].to_list())


_ID_TABLE = {"models": ("models", "id"), "accelerators": ("accelerators", "id"),
             "power_prices": ("power_prices", "region_id"), "facilities": ("facilities", "id")}


def _fallback(key: str, default_value, catalog):
    spec = SPECS[key]
    if spec.catalog and spec.kind == "str" and catalog is not None and default_value is not None:
        table, col = _ID_TABLE[spec.catalog]
        ids = getattr(catalog, table)[col].to_list()
        if default_value not in ids:
            return ids[0] if spec.none_token is None else None
    return default_value


def _parse(key: str, spec: V.Field, raw, catalog) -> tuple[bool, object, str]:
    """(ok, value, problem): one field by the vocabulary's one parser (:meth:`econ.vocabulary.Field.parse`)."""
    ids = None
    if spec.catalog and catalog is not None:
        table, col = _ID_TABLE[spec.catalog]
        ids = tuple(getattr(catalog, table)[col].to_list())
    return spec.parse(raw, ids)


def _expect(spec: V.Field) -> str:
    return spec.range_text()


def _to_text(spec: FieldSpec, v) -> str:
    if v is None:
        return spec.none_token or ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(_to_text(spec, i) if isinstance(i, float) else str(i) for i in v)
    if isinstance(v, float):
        return repr(v) if v != int(v) or abs(v) >= 1e15 else V.num_text(v)
    return str(v)


def _toml_value(spec: FieldSpec, v) -> str:
    if v is None:
        return json.dumps(spec.none_token or "")
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(repr(float(i)) if isinstance(i, float) else json.dumps(i) for i in v) + "]"
    if isinstance(v, str):
        return json.dumps(v)  # JSON string escapes are valid TOML basic-string escapes
    if isinstance(v, float):
        return repr(v)
    return str(int(v))


__all__ = ["Scenario", "ScenarioWarning", "IDENTITY_FIELDS", "substitutes_the_accelerator", "SPECS", "SCENARIO_FIELDS", "FieldSpec", "from_mapping", "from_query_params",
           "from_toml", "load_toml_file", "save_toml_file", "toml_nesting_depth", "MAX_SCENARIO_BYTES"]
