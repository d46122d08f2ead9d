"""One vocabulary of inputs: every field a user can set, once, with its unit, range, default, label, help and source.

Like PyPSA's component attribute tables (``pypsa/data/component_attrs/*.csv``: attribute, type, unit, default,
description), one row per input field drives every place that reads one: the CLI flags
(:mod:`econ.commands._common`), the dashboard widgets (``dashboards/components``), scenario files and URLs
(:mod:`econ.io.scenario`), the export assumption sheets and the validation of the core's own dataclasses
(:class:`econ.assumptions.Assumptions`, :class:`~econ.assumptions.Economics`,
:class:`~econ.assumptions.DeploymentAssumptions`, :class:`econ.tables.custom.CustomAccelerator`). A default, a
valid range or a label therefore lives in exactly one place: :data:`FIELDS`.

The module also holds the enumerations those inputs take: cost tiers (:class:`Tier`, each with its named rate
columns: never a position in a list), failure reasons (:class:`Reason`), precisions, weight formats, KV-cache
formats, speculative-decoding methods, serving modes and accelerator generations; and the result columns
(:data:`COLUMNS`: name, label with unit, display formats), so tables, charts and exports title a column the
same way.

It sits on the ground floor of the package (imports only :mod:`econ.errors` and :mod:`econ.presets`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum, StrEnum

from econ.errors import InvalidInputError
from econ.presets import (CALLS_PER_TASK_RANGE, DEFAULT_INPUT_LEN, DEFAULT_MIN_TOKENS_PER_S_PER_USER, DEFAULT_OUTPUT_LEN,
                          DEFAULT_WORKLOAD, INTERACTIVITY_LEVELS, REUSE_INTERVAL_RANGE_S, WORKLOAD_CHOICES)

# ---------------------------------------------------------------------------------------------------------------------
# Enumerations of the inputs
# ---------------------------------------------------------------------------------------------------------------------

PRECISIONS: tuple[str, ...] = ("bf16", "fp8", "fp4")
"""Matmul precisions (tensor-core operand formats); index = precision code."""

KV_PRECISIONS: tuple[str, ...] = ("bf16", "fp8", "int8", "int4", "mxfp4", "nvfp4")
"""KV-cache element formats; index = KV precision code. The names of
:data:`econ.physics.precision.KV_BYTES_PER_ELEMENT` (bytes with block scales, sources), in its order (checked there
at import: one list)."""

WEIGHT_FORMATS: tuple[str, ...] = ("bf16", "fp8", "int8", "int4", "mxfp4", "nvfp4", "fp8_block")
"""Weight storage formats (bytes per weight in :data:`econ.physics.precision.WEIGHT_FORMATS`); index = format code.
``fp8`` is per-tensor (or per-channel) scaled FP8, ``fp8_block`` FP8 with one scale per 128 x 128 block (DeepSeek's
release)."""

SPEC_METHODS: tuple[str, ...] = ("none", "mtp", "eagle", "draft")
"""Speculative-decoding methods; index = method code: none; the model's own multi-token-prediction module(s)
(DeepSeek-V3, GLM-4.5); an EAGLE-style draft head (one dense decoder layer); a separate draft model."""

MODES: tuple[str, ...] = ("aggregated", "disaggregated")
"""Serving modes: prefill and decode on the same instances, or on pools of their own (xPyD)."""

GENERATIONS: tuple[str, ...] = ("ampere", "hopper", "blackwell", "ada", "cdna3", "cdna4", "tpu", "gaudi", "trainium",
                                "other")
"""Accelerator generations (accelerators.csv ``generation``): the key of the calibration profiles."""

MAX_BATCH = 1 << 20
"""Largest batch accepted anywhere (validation range, not a physical claim). [sequences]"""
MAX_CONTEXT = 1 << 24
PREFILL_LAYER_DISPATCH_BY_ENGINE_S: dict[str, float] = {"vllm": 8e-4, "sglang": 4.7e-3, "tensorrt-llm-pytorch": 1.8e-3,
                                                        "tensorrt-llm-cpp": 0.0}
"""Host dispatch time per decoder layer of an eager prefill pass per serving engine (the source of
``prefill_layer_dispatch_s`` in :data:`_SOURCES` gives each value's basis; vLLM's is the field's default and
:data:`econ.analyses.calibration.ENGINE_PREFILL_DISPATCH_S` predicts each measurement with its engine's). [s]"""
KV_OFFLOAD_CHOICES: tuple[str, ...] = ("none", "host", "nvme")
"""How far the decode batch's KV may spill beyond HBM (index = the engine's offload code; issue 22.2)."""
KV_TIER_CHOICES: tuple[str, ...] = ("hbm", "host", "nvme", "remote")
"""KV-cache tiers, nearest first (= econ.physics.kv_tiers.TIERS; index = the engine's tier code)."""
MAX_CP = 1024
"""Largest context-parallel degree [ranks]."""
CP_SEARCH_MIN_TOKENS = 100_000
"""Prompt length from which the optimizer searches context parallelism [tokens]. Below it a prompt prefills in a
few seconds on one instance (Llama-3.3-70B, 32K tokens: ~6 PFLOP, 1-2 s on 8 H100 at 40% of the FP8 or BF16
peak), which a TTFT target rarely refuses, while every cp size multiplies the search's rows; from 100K tokens
attention is about half of the prefill FLOPs (Llama-3.3-70B: 4 h d_h L S/2 = 131 GFLOP against 2 P = 141 GFLOP per
token) and grows with S, so TTFT runs to tens of seconds and more. Yang et al. (arXiv:2411.01783) evaluate CP from
128K to 1M tokens; issue 22 names 100K+ prompts."""
"""Longest prompt, answer or context accepted anywhere (validation range; a model's own maximum is
``models.csv max_context_tokens``). [tokens]"""
MAX_PARALLEL = 1 << 16
"""Largest tp / dp / ep / pp / GPU count / instance count accepted (validation range). [-]"""


class Tier(StrEnum):
    """Cost tiers of a GPU-hour (``Economics.basis``). The code of a tier is its position in :data:`TIERS`."""

    OWNED = "owned"
    HYPERSCALER = "hyperscaler"
    NEOCLOUD = "neocloud"
    RENTAL_3YR = "rental-3yr"
    ON_DEMAND = "on-demand"
    RENTAL = "rental"
    CUSTOM = "custom"


@dataclass(frozen=True, slots=True)
class TierSpec:
    """What one cost tier is.

    Attributes
    ----------
    label : str
        Its name for a reader ("Hyperscaler TCO").
    cli_name : str
        Its ``--tco`` value.
    rate_columns : tuple of str
        Accelerator columns (:class:`econ.physics.inputs.HardwareFacts` fields, USD per hour of existence) whose
        first non-missing value is the tier's rate; empty for the owned chain (computed) and custom (typed).
    source : str
        Where the rate comes from.
    """

    label: str
    cli_name: str
    rate_columns: tuple[str, ...]
    source: str


TIER_SPECS: dict[Tier, TierSpec] = {
    Tier.OWNED: TierSpec(
        "Owned (custom TCO)", "owned-custom", (),
        "owned-custom: the capex + facility + power x PUE + opex chain of econ.economics.tco with this scenario's "
        "economics (accelerators.csv all_in_capex_usd, all_in_power_w)"),
    Tier.HYPERSCALER: TierSpec(
        "Hyperscaler TCO", "hyperscaler", ("tco_hyperscaler_usd_per_hour",),
        "SemiAnalysis's cost of owning at large hyperscaler volume (AI Cloud TCO Model, July 2026), $/GPU-hour at "
        "100% use (accelerators.csv tco_hyperscaler_usd_per_hour)"),
    Tier.NEOCLOUD: TierSpec(
        "Neocloud TCO", "neocloud", ("tco_neocloud_usd_per_hour",),
        "SemiAnalysis's cost of owning as a neocloud giant, July 2026 (tco_neocloud_usd_per_hour)"),
    Tier.RENTAL_3YR: TierSpec(
        "3-year rental", "rental-3yr", ("rental_3yr_usd_per_hour",),
        "SemiAnalysis's 3-year commit rental price, July 2026 (rental_3yr_usd_per_hour)"),
    Tier.ON_DEMAND: TierSpec(
        "On-demand rental", "on-demand",
        ("rental_on_demand_neocloud_usd_per_hour", "rental_on_demand_hyperscaler_usd_per_hour"),
        "on-demand rental: the median of the GPU clouds' 2025-26 offers (data/rental_rates.csv) where any, else of "
        "the hyperscalers' list prices (rental_on_demand_neocloud_usd_per_hour, "
        "rental_on_demand_hyperscaler_usd_per_hour)"),
    Tier.RENTAL: TierSpec(
        "Catalog rental rate", "rental", ("rental_usd_per_hour",),
        "the catalog's representative rental rate (rental_usd_per_hour; its tier in rental_tier)"),
    Tier.CUSTOM: TierSpec(
        "Custom $ per GPU-hour", "custom", (),
        "a $/GPU-hour typed by the user (Economics.usd_per_gpu_hour)"),
}
"""Every cost tier by name. Every tier but owned is a rate per hour of the fleet's existence; divided by
utilization it is per *utilized* GPU-hour, like the owned chain."""

TIERS: tuple[str, ...] = tuple(t.value for t in Tier)
"""Tier ids in code order (a row's ``basis_code`` indexes this; nothing else depends on the order)."""

TIER_ALIASES: dict[str, str] = {spec.cli_name: tier.value for tier, spec in TIER_SPECS.items()
                                if spec.cli_name != tier.value}
"""Other accepted names of a tier (the CLI's ``owned-custom``)."""

TCO_CHOICES: tuple[str, ...] = tuple(TIER_SPECS[t].cli_name for t in Tier if t is not Tier.CUSTOM)
"""``--tco`` values (custom is ``--usd-per-gpu-hour``)."""


def tier(name: str) -> Tier:
    """The tier called ``name`` (an id or an alias such as ``owned-custom``).

    Raises
    ------
    InvalidInputError
        An unknown name (the message lists the valid ones).
    """
    key = TIER_ALIASES.get(str(name), str(name))
    try:
        return Tier(key)
    except ValueError:
        raise InvalidInputError(f"basis={name!r} is not a cost tier (valid: "
                                f"{', '.join(TIER_SPECS[t].cli_name for t in Tier)})") from None


def tier_code(name: str) -> int:
    """Position of the tier ``name`` in :data:`TIERS` (a row's ``basis_code``)."""
    return TIERS.index(tier(name).value)


class Reason(IntEnum):
    """Why a row is infeasible (``infeasible_code``); :data:`REASON_TEXT` says it in words."""

    NONE = 0
    KV_CAPACITY = 1
    WEIGHTS_DO_NOT_FIT = 2
    NO_CAPEX = 3
    NO_TIER_RATE = 4
    PRECISION_UNSUPPORTED = 5
    NO_VALID_LAYOUT = 6
    PREFILL_DOES_NOT_FIT = 7
    KV_LINK_OVERLOADED = 8
    CONTEXT_OVER_MAXIMUM = 9
    FORMAT_WIDER_THAN_PRECISION = 10
    SPECULATION_UNAVAILABLE = 11


REASON_TEXT: dict[Reason, str] = {
    Reason.NONE: "",
    Reason.KV_CAPACITY: "batch exceeds KV-cache capacity",
    Reason.WEIGHTS_DO_NOT_FIT: "weights do not fit in HBM",
    Reason.NO_CAPEX: "no capex in catalog (not sold; use a rental or TCO tier)",
    Reason.NO_TIER_RATE: "no rate for this cost tier in catalog",
    Reason.PRECISION_UNSUPPORTED: "precision not supported by hardware",
    Reason.NO_VALID_LAYOUT: "no valid layout (domain, heads, layers or experts)",
    Reason.PREFILL_DOES_NOT_FIT: "prefill instance does not fit in HBM",
    Reason.KV_LINK_OVERLOADED: "KV transfer exceeds the prefill pool's link bandwidth",
    Reason.CONTEXT_OVER_MAXIMUM: "context exceeds the model's maximum",
    Reason.FORMAT_WIDER_THAN_PRECISION: "weight format wider than the matmul precision",
    Reason.SPECULATION_UNAVAILABLE: "speculative decoding not available as set",
}

REASONS: tuple[str, ...] = tuple(REASON_TEXT[r] for r in Reason)
"""``infeasible_reason`` texts; index = :class:`Reason` code."""


# ---------------------------------------------------------------------------------------------------------------------
# Input fields
# ---------------------------------------------------------------------------------------------------------------------

KINDS = ("float", "int", "bool", "str", "text", "ids", "floats")
MAX_TEXT_CHARS = 60
"""Longest free-text field (a custom accelerator's name). [characters]"""
MAX_LEVELS = 8
"""Most values a list field (interactivity levels) holds."""
_SHOWN_CHARS = 60


@dataclass(frozen=True, slots=True)
class Field:
    """One user input.

    Attributes
    ----------
    name : str
        The one name: Python keyword, scenario/TOML/URL key, export row.
    kind : {"float", "int", "bool", "str", "text", "ids", "floats"}
        ``str`` takes one of ``choices`` or a catalog id; ``text`` is free text of at most
        :data:`MAX_TEXT_CHARS` printable characters; ``ids`` a tuple of ids (empty = all); ``floats`` 1 to
        :data:`MAX_LEVELS` numbers in [lo, hi].
    default : object
        The one default (None = automatic, written as ``none_token``).
    lo, hi : float or None
        Valid range of a number (inclusive unless ``lo_open``).
    unit : str
        Unit of the stored value ("USD/kWh", "s", "" for a pure number or fraction).
    label : str
        Short name for a form or a table ("PUE").
    help : str
        One sentence for a tooltip or ``--help``.
    source : str
        Where the default comes from (a document, a dataset row, or "assumption" with the reason).
    group : str
        "workload", "slo", "deployment", "formats", "speculation", "economics", "efficiency", "serving",
        "comparison", "fleet", "buildout", "head_to_head" or "custom".
    choices : tuple of str, optional
        Allowed values of a ``str``/``ids`` field that is not a catalog id.
    catalog : str, optional
        "models", "accelerators", "power_prices" or "facilities": the field is an id of that table.
    none_token : str, optional
        The field may be None (automatic); written as this token in URLs and TOML ("auto").
    flag : str or None
        The CLI flag ("--pue"); "" when the field has no flag of its own.
    lo_open : bool
        True when ``lo`` itself is outside the range (``(0, 1]``).
    scenario : bool
        True when the field is part of :class:`econ.io.scenario.Scenario` (the dashboard's state).
    column : str, optional
        The catalog column the field stands for (a custom accelerator's ``hbm_bandwidth_tb_per_s``): the
        catalog schema takes its range from here, so a typed chip and a shipped row obey one range.
    """

    name: str
    kind: str
    default: object = None
    lo: float | None = None
    hi: float | None = None
    unit: str = ""
    label: str = ""
    help: str = ""
    source: str = ""
    group: str = ""
    choices: tuple[str, ...] | None = None
    catalog: str | None = None
    none_token: str | None = None
    flag: str | None = None
    lo_open: bool = False
    scenario: bool = True
    column: str | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"field {self.name}: kind {self.kind!r} not in {KINDS}")

    # -- text for messages and forms ---------------------------------------------------------------------------
    def range_text(self, *, tokens: bool = True) -> str:
        """The valid values in words: "[1, 3]", "(0, 1] (USD/h) or 'none'", "one of ['bf16', 'fp8']";
        ``tokens=False`` leaves out the automatic value's token (a CLI flag is simply not given)."""
        if self.kind in ("int", "float", "floats"):
            unit = f" ({self.unit})" if self.unit else ""
            auto = f" or {self.none_token!r}" if self.none_token and tokens else ""
            return f"{'(' if self.lo_open else '['}{num_text(self.lo)}, {num_text(self.hi)}]{unit}{auto}"
        if self.choices:
            return f"one of {list(self.choices)}"
        if self.kind == "bool":
            return "true or false"
        if self.kind == "text":
            return f"a name of at most {MAX_TEXT_CHARS} printable characters"
        return "a catalog id" if self.catalog else "a value"

    def in_range(self, x: float) -> bool:
        """True when the number ``x`` is inside the field's range (False for NaN and infinities)."""
        if not isinstance(x, (int, float)) or isinstance(x, bool):
            return False
        if isinstance(x, float) and not math.isfinite(x):
            return False
        if self.lo is not None and (x <= self.lo if self.lo_open else x < self.lo):
            return False
        return self.hi is None or x <= self.hi

    def check(self, value, *, shown_as: str | None = None):
        """``value`` when valid for this field, else InvalidInputError naming the field (or ``shown_as``, e.g.
        the flag the user typed), the value and the range. None passes for a field that may be automatic.

        Raises
        ------
        InvalidInputError
        """
        name = shown_as or self.name
        rt = self.range_text(tokens=not name.startswith("--"))  # a flag is not given to mean automatic
        if value is None:
            if self.none_token is not None or not self.scenario:
                return None
            raise InvalidInputError(f"{name} is missing ({rt})")
        if self.kind in ("int", "float"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InvalidInputError(f"{name}={show(value)} is not a number ({rt})")
            if not self.in_range(value):
                raise InvalidInputError(f"{name}={show(value)} is outside {rt}")
            if self.kind == "int" and value != int(value):
                raise InvalidInputError(f"{name}={show(value)} is not a whole number ({rt})")
            return value
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise InvalidInputError(f"{name}={show(value)} must be true or false")
            return value
        if self.kind == "str" and self.choices is not None and value not in self.choices:
            raise InvalidInputError(f"{name}={show(value)} is not one of {list(self.choices)}")
        if self.kind == "text":
            ok, _, problem = self.parse(value if isinstance(value, str) else repr(value))
            if not ok or not isinstance(value, str):
                raise InvalidInputError(problem.replace(self.name, name, 1) if problem else
                                        f"{name}={show(value)} is not text")
        return value

    def parse(self, raw, ids: tuple[str, ...] | None = None) -> tuple[bool, object, str]:
        """(ok, value, problem) of one raw value (text from a URL or a form, or a typed value from TOML).

        ``ids`` are the valid catalog ids of a catalog field (None: not checked). The one parser of
        scenario files, URLs and forms: the same text is accepted or refused the same way everywhere.
        """
        key = self.name
        nones = ("",) if self.kind == "text" else ("", "none", "null") + ((self.none_token,) if self.none_token else ())
        if self.choices and self.kind == "str":  # a choice is never read as "automatic" ('none' = speculation off)
            nones = tuple(n for n in nones if n not in self.choices)
        if raw is None or (isinstance(raw, str) and raw.strip().lower() in nones):
            if self.none_token is not None:
                return True, None, ""
            if self.kind == "ids":
                return True, (), ""
            return False, None, f"{key}={show(raw)} is not valid ({self.range_text()})"
        if isinstance(raw, dict) or (isinstance(raw, (list, tuple)) and self.kind not in ("ids", "floats")):
            return False, None, f"{key}={show(raw)} is not a single value ({self.range_text()})"
        if self.kind == "bool":
            if isinstance(raw, bool):
                return True, raw, ""
            t = str(raw).strip().lower()
            if t in ("true", "1", "yes", "on"):
                return True, True, ""
            if t in ("false", "0", "no", "off"):
                return True, False, ""
            return False, None, f"{key}={show(raw)} is not true/false"
        if self.kind in ("int", "float"):
            return self._parse_number(raw)
        if self.kind == "str":
            v = str(raw).strip()
            if self.choices is not None and self.choices is TIERS:
                v = TIER_ALIASES.get(v, v)
            if self.choices is not None and v not in self.choices:
                return False, None, f"{key}={show(v)} is not one of {list(self.choices)}"
            if ids is not None and v not in ids:
                import difflib

                close = difflib.get_close_matches(v, list(ids), n=3, cutoff=0.3) if len(v) <= 200 else []
                hint = f"; closest: {', '.join(close)}" if close else ""
                return False, None, f"unknown {key} id {show(v)}{hint}"
            return True, v, ""
        if self.kind == "text":
            v = str(raw).strip()
            if len(v) > MAX_TEXT_CHARS or any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 for c in v) \
                    or any(0xd800 <= ord(c) <= 0xdfff for c in v):
                return False, None, f"{key}={show(v)} is not a name of at most {MAX_TEXT_CHARS} printable characters"
            return True, v, ""
        if self.kind == "floats":
            items = raw if isinstance(raw, (list, tuple)) else str(raw).split(",")
            items = [part for i in items for part in (i.split(",") if isinstance(i, str) else [i])]
            out = []
            one = Field(key, "float", lo=self.lo, hi=self.hi, unit=self.unit, lo_open=self.lo_open)
            for i in items:
                if isinstance(i, str) and not i.strip():
                    continue
                ok, x, _ = one.parse(i)
                if not ok:
                    return False, None, f"{key} has {show(i)}, not a number in {self.range_text()}"
                out.append(x)
            if not out or len(out) > MAX_LEVELS:
                return False, None, f"{key} needs 1 to {MAX_LEVELS} numbers in {self.range_text()}"
            return True, tuple(sorted(set(out))), ""
        # ids: comma-separated text or a list (a URL's repeated key gives a list of comma-separated texts)
        items = raw if isinstance(raw, (list, tuple)) else str(raw).split(",")
        if any(not isinstance(i, (str, int, float)) or isinstance(i, bool) for i in items):
            return False, None, f"{key} must be a list of ids (text), not {show(raw)}"
        items = [part for i in items for part in (i.split(",") if isinstance(i, str) else [i])]
        items = [str(i).strip() for i in items if str(i).strip()]
        allowed = self.choices if ids is None else ids
        if allowed is not None:
            bad = [i for i in items if i not in allowed]
            if bad:
                shown = ", ".join(show(b) for b in bad[:8]) + (f" (+{len(bad) - 8} more)" if len(bad) > 8 else "")
                return False, None, f"{key} has unknown id(s) [{shown}]"
        return True, tuple(dict.fromkeys(items)), ""

    def _parse_number(self, raw) -> tuple[bool, object, str]:
        key = self.name
        if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
            return False, None, f"{key}={show(raw)} is not a number ({self.range_text()})"
        if isinstance(raw, int) and abs(raw) > 10 ** 300:  # exact: no float conversion to overflow
            return False, None, f"{key}={show(raw)} is outside {self.range_text()}"
        try:
            x = float(raw) if isinstance(raw, (int, float)) else float(raw.strip().replace("_", ""))
        except (ValueError, OverflowError):
            return False, None, f"{key}={show(raw)} is not a number ({self.range_text()})"
        if not self.in_range(x):
            shown = show(x) if math.isfinite(x) or not isinstance(raw, str) else cut(raw.strip())
            return False, None, f"{key}={shown} is outside {self.range_text()}"
        if self.kind == "int":
            if x != round(x):
                return False, None, f"{key}={num_text(x)} is not a whole number ({self.range_text()})"
            return True, int(round(x)), ""
        return True, x, ""

    @property
    def flag_name(self) -> str | None:
        """The CLI flag of this field (None when it has none)."""
        if self.flag == "":
            return None
        return self.flag or "--" + self.name.replace("_", "-")

    def help_text(self) -> str:
        """``--help`` text: the help sentence, the range and the default with its source."""
        default = self.default
        shown = (self.none_token or "not set") if default is None else num_text(default) \
            if isinstance(default, (int, float)) and not isinstance(default, bool) else str(default)
        text = self.help or self.label
        return f"{text}; {self.range_text(tokens=False)} [{shown}]"


def num_text(x) -> str:
    """A number as plain text: 3 not 3.0, 1e+09 for large floats; infinities as written."""
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    return str(int(x)) if x == int(x) and abs(x) < 1e15 else f"{x:g}"


def cut(text: str, limit: int = _SHOWN_CHARS) -> str:
    """Text for a message, cut at ``limit`` characters with the length said ("999... (400 characters)")."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text):,} characters)"


def show(value, limit: int = _SHOWN_CHARS) -> str:
    """A value for a message: numbers as %g (a huge integer as its digit count), text quoted and cut, a list or
    table by its size (never a deep recursion).

    Never raises (``f"{10**400:g}"`` would raise OverflowError).
    """
    if isinstance(value, (dict, list, tuple)):
        return f"<{type(value).__name__} of {len(value)} item(s)>"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        if abs(value) < 10 ** 15:
            return str(value)
        try:
            return f"{float(value):g}"
        except OverflowError:
            return f"a {len(str(abs(value))) if abs(value) < 10 ** 4000 else 'more than 4000'}-digit integer"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:g}"
    text = repr(str(value))
    return text if len(text) <= limit else text[:limit] + f"...' ({len(str(value)):,} characters)"


_V1_FIT = ("v1 global value (one set for every generation), fitted in 2026 by the retired econ.validation to the "
           "43 in-fit cases of data/validation_cases.csv (NIM, TensorRT-LLM, vLLM on H100/H200/B200/GB200; RMS log "
           "error 0.16 dense, 0.22 MoE). Used only where a user pins this field: by default every row takes the "
           "value of its generation x precision profile in data/calibration.csv (econ calibrate; values, standard "
           "errors and held-out errors there): ")

_SOURCES: dict[str, str] = {
    "calibrated": (
        "Every profile parameter comes from the profile of the row's accelerator generation and matmul "
        "precision (data/calibration.csv: econ calibrate, MAP fit with grouped cross-validation on "
        "data/measurements.csv); a value the user sets replaces the profile's"),
    "layer_overhead_s": (
        "0: the per-kernel terms (kernel_latency_s, kernel_launch_s) carry the fixed time of a layer; an extra "
        "per-layer time a user may add (not calibrated)"),
    "sequence_overhead_s": (
        "Prior and scalar 20 us; calibrated per generation x precision (data/calibration.csv). vLLM V0's output "
        "processing took 0.2 ms per step at batch 1 and 3.4 ms at batch 32 on Llama-3-70B FP8 (vllm-project/vllm "
        "#6913, 2024: ~0.1 ms per sequence), sampling, detokenization and scheduling grow with the sequences of a "
        "step; async scheduling hides most of it in later engines (#19970, #23569)"),
    "cpu_overlap_frac": (
        "Scalar 0.67, the shared value of the stop-27 fit (a user's 0, an engine without an overlap scheduler, is "
        "then a value of its own, not the calibrated default); calibrated per generation x precision "
        "(data/calibration.csv) on the "
        "measurements of engines with an overlap scheduler, which prepare the next step while the GPU runs this one: "
        "TensorRT-LLM >= 1.0's PyTorch executor ('Overlap Scheduler ... Enabled by default', "
        "nvidia.github.io/TensorRT-LLM/features/overlap-scheduler.html), SGLang (disable_overlap_schedule False by "
        "default, sgl-project/sglang server_args.py), vLLM >= 0.14 (async scheduling on by default, "
        "vllm-project/vllm #27614); 0.32-0.36 of the GPU time in stop 31's fit (0.66-0.67 in stop 27's, before "
        "TTFT's host floor and the measured EP imbalance). Since stop 37 TensorRT-LLM's PyTorch executor, which "
        "launches step n + 1 on step n's device-side tokens, is fitted at 1 "
        "(econ.analyses.calibration.ENGINE_CPU_OVERLAP_HELD); SGLang's and vLLM's measurements alone inform the "
        "calibrated share, and they leave it at its prior, 0.80, on every profile (stop 37's fit). Measurements "
        "of engines without one (TensorRT-LLM's C++ runtime in MLPerf, vLLM V0) are fitted at 0 (econ.analyses.calibration.ENGINE_OVERLAP_SCHEDULER). The "
        "default answer is therefore a current engine's; set 0 for an engine without an overlap scheduler (vLLM V0 "
        "left 5-13 ms GPU bubbles per step, #10634)"),
    "kernel_latency_s": (
        "Prior and scalar 2.5 us; calibrated per generation x precision (data/calibration.csv). NVIDIA "
        "AIConfigurator 0.12 kernel tables (data/kernels/gemm_efficiency.csv, t = alpha + bytes / BW fitted at "
        "m <= 16 tokens): GEMM latency intercepts of 2.4-4.6 us at bf16 and 5.7-7.3 us at fp8-block on "
        "H100/H200/B200/GB200 in TensorRT-LLM, vLLM and SGLang, which include the ~1.3 us launch gap. Stated at "
        "d = 4096: a kernel of a model d wide takes kernel_latency_s x (0.7 + 0.3 d / 4096), 70% of the floor "
        "whatever the width (econ.physics.performance.KERNEL_WIDTH_INDEPENDENT_SHARE, the median of those tables' "
        "per-format fits); decode "
        "attention calls take 8-18 us and fused-MoE calls 18-48 us at one token (attention_efficiency.csv, "
        "moe_efficiency.csv), several kernels' worth each"),
    "kernel_launch_s": (
        "1.3 us per kernel boundary with CUDA graphs on H100, time in which the GPU does no useful work (Hazy "
        "Research, 'Look Ma, No Bubbles!', hazyresearch.stanford.edu/blog/2025-05-27-no-bubbles); no "
        "per-generation figure found, so every generation uses it"),
    "kernel_launch_eager_s": (
        "5 us per launch without CUDA graphs: 4-6 us per cudaLaunchKernel on the CPU side (susun-blog.com "
        "'pegainfer 3: CUDA graph', RTX 5070 Ti, CUDA 13; ~5 us quoted for A100 in secondary pages; low "
        "authority). Prefill steps and decode batches above cuda_graph_max_batch launch eagerly"),
    "prefill_layer_dispatch_s": (
        f"{PREFILL_LAYER_DISPATCH_BY_ENGINE_S['vllm'] * 1e3:.1f} ms per decoder layer, vLLM's: NVIDIA AIConfigurator's "
        "vLLM backend adds model layers x 0.8 ms of 'CPU-side Python dispatch across all layers' to each prefill, "
        "'recalibrated ... against the full silicon corpus' (ai-dynamo/aiconfigurator aic-core/src/"
        "aiconfigurator_core/sdk/backends/vllm_backend.py _prefill_dispatch_overhead_ms @095f58a5). Prefill runs "
        "outside CUDA graphs, so the host issues every operator of every layer before the first token can leave; a "
        "prompt alone takes max(host, GPU time), and TTFT stops falling with TP: in the same AIConfigurator silicon "
        "sample, 1K-token prompts at concurrency 4-8 take 156-383 ms on SGLang whatever the TP (4-64) and precision "
        "(Qwen3.5-397B-A17B, 60 layers: the median of 78 rows less a roofline prefill at half the peak gives "
        f"{PREFILL_LAYER_DISPATCH_BY_ENGINE_S['sglang'] * 1e3:.1f} ms per layer) and 117-145 ms on TensorRT-LLM's "
        "PyTorch executor at TP4-8 (Qwen3-32B, 64 layers, 6 rows: "
        f"{PREFILL_LAYER_DISPATCH_BY_ENGINE_S['tensorrt-llm-pytorch'] * 1e3:.1f} ms), models outside econ's "
        "measurement set; a compiled engine (TensorRT-LLM's C++ runtime) has none beyond its kernel launches. "
        "Per engine: econ.vocabulary.PREFILL_LAYER_DISPATCH_BY_ENGINE_S; the calibration predicts each measurement "
        "with its engine's (econ.analyses.calibration.ENGINE_PREFILL_DISPATCH_S)"),
    "cuda_graph_max_batch": (
        "512 sequences per attention group: SGLang captures decode CUDA graphs up to cuda_graph_max_bs = 512 on "
        "B200/MI300 and 256 (tp < 4) or 512 on H200-class GPUs (sgl-project/sglang "
        "python/sglang/srt/server_args.py); vLLM V0 captured up to 256 and later up to 8192 tokens "
        "(vllm-project/vllm #7894); larger decode batches run eager"),
    "moe_tile_rows": (
        "1 (no padding), also in the calibrated profiles (econ.analyses.calibration.MOE_TILE_ROWS): the MMA "
        "tiles are 64 rows on Hopper and 128 on Blackwell, but measured fused-MoE kernels at 1-8 tokens per "
        "expert run at their bytes-bound time (AIConfigurator 0.12); set 64 or 128 to study padding"),
    "moe_gemm_half_width": (
        "0 (no width effect) until calibrated per generation; NVIDIA AIConfigurator 0.12 fused-MoE tables "
        "(data/kernels/moe_efficiency.csv, TensorRT-LLM EP8, > 512 tokens per expert): Qwen3-235B's 1536-wide"
        " experts reach 0.53-0.81 of Mixtral's 14336-wide (H200/B200, BF16 / FP8 / FP8-block), i.e. a "
        "half-saturation width of ~500-1700, median ~900"),
    "max_batch_per_group": (
        "4096 sequences per attention group: trtllm-bench's engine cap min(kv_cache_max_requests, 4096) "
        "(NVIDIA/TensorRT-LLM tensorrt_llm/bench/build/tuning.py), per rank under attention DP"),
    "latency_percentile": (
        "99: MLPerf Inference Server and Interactive scenarios state p99 TTFT and TPOT limits "
        "(mlcommons/inference loadgen mlperf.conf, target_latency_percentile = 99)"),
    "tpot_tail_factor": (
        "1 where no profile applies; the profiles carry the measured median p99 / mean TPOT of their MLPerf "
        "Server and Interactive runs (data/measurements.csv): 1.09-1.27"),
    "eta_bw": _V1_FIT + (
        "0.60 +- 0.07. Kernel tables put weight streaming at 0.8-0.9 of HBM on Hopper (data/kernels/)"),
    "eta_flop": _V1_FIT + (
        "0.30 +- 0.04 (whole-step decode MFU)"),
    "eta_prefill": _V1_FIT + (
        "0.48 +- 0.04, rounded to 0.50"),
    "overlap_frac": (
        "Prior and scalar 0.85; calibrated per generation x precision (data/calibration.csv). DeepSeek runs "
        "decode with two micro-batches and a 5-stage pipeline for 'seamless overlap' of all-to-all and compute, "
        "and prefill with two micro-batches (deepseek-ai/open-infra-index day 6, 2025-03-01; "
        "deepseek-ai/profile-data: the DeepEP low-latency all-to-all uses no SMs, so it runs under the other "
        "micro-batch's kernels); Huawei MindIE hides more than 70% of prefill communication with two "
        "micro-batches (hiascend.com MindIE 2.3 docs). Applies to instances that run two-batch overlap "
        "(econ.physics.performance.two_batch_overlap_on)"),
    "comm_sm_frac": (
        "24 / 132 = 0.18: DeepEP's normal (prefill) all-to-all kernels run on SMs, Buffer.set_num_sms(24) of an "
        "H800's 132 (deepseek-ai/DeepEP README@567632dd); 'unlike in prefilling, the all-to-all communication "
        "during decoding does not occupy GPU SMs' (deepseek-ai/profile-data README@4496024), so decode keeps every "
        "SM; DeepEP V2 on SM100 reaches 643-675 GB/s with 24 SMs (README@dd758caf)"),
    "single_batch_overlap_frac": (
        "0: without two micro-batches a step's collectives wait for the kernels that produce their input "
        "(TensorRT-LLM and vLLM run TP all-reduces on the critical path; the intra-layer shared-expert overlap "
        "is worth +2-9%: TensorRT-LLM tech blog 1, SGLang #5829); the pure roofline (--ideal) sets 1"),
    "overhead_s": _V1_FIT + (
        "1.45 +- 1.6 ms, rounded to 1.5 ms (scheduling and sampling time of a decode step; kernel launches are "
        "kernel_launch_s x the kernels of a forward pass since issue 17)"),
    "usable_hbm_frac": (
        "vLLM default gpu_memory_utilization=0.9 (docs.vllm.ai, EngineArgs), of the total memory, activations "
        "included; TensorRT-LLM's KvCacheConfig.free_gpu_memory_fraction default 0.9 "
        "(nvidia.github.io/TensorRT-LLM/examples/kvcacheconfig.html; trtllm-bench --kv_cache_free_gpu_mem_fraction, "
        "'the default setting of 0.90', perf overview @03e27c7d) is the same share of the memory left free "
        "(kv_memory_rule=free)"),
    "kv_memory_rule": (
        "total: vLLM (gpu_memory_utilization) and SGLang (mem_fraction_static) take a share of the total memory; "
        "TensorRT-LLM takes a share of the memory left free after its weights, activations and runtime "
        "(free_gpu_memory_fraction), with NVIDIA AIConfigurator's memory model for TensorRT-LLM "
        "(sdk/backends/base_backend.py _get_memory_usage, trtllm_backend.py @095f58a5: 'TRT-LLM applies the "
        "fraction to FREE memory ... vLLM/SGLang apply it to TOTAL memory'; econ.physics.memory). The calibration "
        "sizes each measurement by its engine's rule"),
    "prefill_chunk_tokens": (
        "TensorRT-LLM default max_num_tokens=8192 (TensorRT-LLM docs, 'Useful build-time flags')"),
    "stream_input_embedding": (
        "False: a decode step gathers B rows of an untied input embedding; True reproduces the seeds' count "
        "(seed 001: 16.1 GB, 208.6 tok/s)"),
    "embedding_bytes_per_param": (
        "DeepSeek-V3 config: bf16 for embeddings/norms/gates in its fp8 checkpoint (deepseek-ai/DeepSeek-V3 "
        "inference/configs)"),
    "activation_bytes": (
        "bf16 activations in TP all-reduces (Megatron-LM, TensorRT-LLM)"),
    "scale_up_latency_s": (
        "NVLink/NVSwitch hop latency ~1 us (assumption; NCCL small-message all-reduce on 8 H100 takes ~10-20 "
        "us over 2(N-1) ring steps)"),
    "scale_out_latency_s": (
        "InfiniBand NDR one-way latency ~5 us (seed 001, Table 4)"),
    "eta_routed_flop_frac": _V1_FIT + (
        "0.28 +- 0.04, rounded to 0.30, when the routed roofline was max(bytes, FLOPs); the grouped GEMM is "
        "now bytes + FLOPs (econ.physics.performance.grouped_gemm_time_s) and the profiles sit near 0.9 "
        "(AIConfigurator fused MoE: 0.7-1.0 of the dense GEMM efficiency)"),
    "eta_routed_bw_frac": (
        "1.0: routed-expert weights stream like dense weights (not a profile parameter; the v1 fit could not "
        "tell it from 1: 1.0 +- 0.58); lower it for formats whose expert weights stream less efficiently"),
    "moe_layer_overhead_s": (
        "0: the per-kernel terms carry the fixed time of an MoE layer (its five kernels, "
        "econ.physics.architecture.KERNELS_PER_PART); the v1 global fit put 0.15 ms here, and issue-9 profiles "
        "48-56 us; an extra per-MoE-layer time a user may add (not calibrated)"),
    "basis": (
        "owned (TCO chain) by default; tiers hyperscaler, neocloud, rental-3yr, on-demand, rental, custom "
        "(sources: econ.engine.BASIS_SOURCES; data/README.md accelerators.csv)"),
    "usd_per_gpu_hour": (
        "none: only for basis custom, a rate typed by the user"),
    "usd_per_kwh": (
        "Virginia industrial average 2023, 8.92 c/kWh (EIA Electric Power Annual; data/power_prices.csv "
        "us-va-industrial)"),
    "pue": (
        "Industry-average sanity value 1.40 (seed 001, Table 13); Uptime 2024 survey 1.56"),
    "build_usd_per_mw_it": (
        "US 19-market average $11.7M per MW of IT load (Cushman & Wakefield Data Center Development Cost "
        "Guide 2025)"),
    "cost_of_capital_frac": (
        "10%/year: top of strong-corporate bank loans (5-10%), bottom of GPU-backed private credit (10-17%) "
        "(gpuloans.com, 2025-12)"),
    "accelerator_life_years": (
        "5 years: Amazon's 2025 server life for AI infrastructure (10-K); Microsoft/Alphabet/CoreWeave use 6,"
        " Meta 5.5"),
    "facility_life_years": (
        "15 years: assumption, middle of the 10-20 year range in DESIGN.md (no sourced figure found)"),
    "opex_frac_of_capex_per_year": (
        "5%/year: assumption for maintenance, spares, staff and support contracts (not sourced; adjust)"),
    "utilization_frac": (
        "70%: assumption for an inference fleet's paid-traffic share of hours (diurnal load; not sourced; "
        "adjust)"),
    "input_output_mix": (
        "3:1 input:output, Artificial Analysis blended-price convention"),
    "cache_hit_frac": (
        "0: no prefix caching unless stated"),
    "cached_input_cost_frac": (
        "0: a cache hit skips prefill compute; KV storage/transfer not modeled"),
    "expert_imbalance_factor": (
        "Assumption 1.2 for a deployment running an expert-parallel load balancer (redundant hot experts, "
        "DeepSeek EPLB / TensorRT-LLM wide-EP); unbalanced routing is commonly 1.2-1.8 max/mean and worse at "
        "wide EP (TensorRT-LLM tech blogs 'Scaling Expert Parallelism', parts 1-2). Without a balancer (vLLM, "
        "SGLang and TensorRT-LLM leave it off by default) routing's own skew is ~1.56: AIConfigurator's EP8 "
        "fused-MoE kernels under its power-law expert distribution over balanced ones, at >= 256 tokens per expert "
        "(data/kernels/moe_efficiency.csv); the calibration predicts its measurements at that value "
        "(econ.analyses.calibration.MEASURED_EXPERT_IMBALANCE), none stating a balancer"),
    "dispatch_activation_bytes": (
        "fp8 dispatch (DeepSeek-V3 report sec. 3.3; deepseek-ai/DeepEP: 'FP8 dispatching and BF16 combining')"),
    "combine_activation_bytes": (
        "bf16 combine (same sources)"),
    "alltoall_scale_up_latency_s": (
        "Assumption ~10 us per NVLink all-to-all call (kernel start + barrier); not measured here"),
    "alltoall_scale_out_latency_s": (
        "~40 us per RDMA call: DeepEP low-latency dispatch at EP128-256 takes 192-194 us for 128 tokens x "
        "top-8 x 7168 fp8 (7.3 MB) on a 50 GB/s NIC, 147 us of which is bytes/bandwidth (deepseek-ai/DeepEP "
        "README)"),
    "kernel_launch_latency_s": (
        "Assumption ~2 us per kernel node replayed in a CUDA graph (order of magnitude; not measured here)"),
    "kv_transfer_eta": (
        "Assumption: 80% of link bandwidth for bulk RDMA/NVLink KV-block copies (NIXL / Mooncake transfer "
        "engine class)"),
    "kv_transfer_latency_s": (
        "Assumption 0.5 ms per request (metadata handshake and completion notification between the pools); "
        "not measured here"),
    "kv_head_replication": (
        "vLLM and TensorRT-LLM replicate KV heads when tp > num_kv_heads"),
    "max_pool_instances": (
        "Search bound for xPyD ratios (DeepSeek's production ratio is 4 prefill : 18 decode nodes; 1P1D-4P1D "
        "common in NVIDIA Dynamo recipes)"),
    "pool_sizing_tolerance_frac": (
        "Assumption: 3% more accelerators per request is worth a unit that can actually be deployed and "
        "scaled in small steps"),
}
"""Sources of the defaults of the efficiency, serving and economics fields (verbatim from their earlier homes)."""

FIELDS: dict[str, Field] = {}
"""Every user input by name (insertion order = the order forms and scenario files list them)."""


def _add(name: str, kind: str, default=None, lo=None, hi=None, unit: str = "", label: str = "", help: str = "",
         source: str | None = None, **kw) -> None:
    if name in FIELDS:
        raise ValueError(f"field {name} defined twice")
    FIELDS[name] = Field(name, kind, default, lo, hi, unit, label, help,
                         _SOURCES.get(name, "") if source is None else source, **kw)


KV_MEMORY_RULES: tuple[str, ...] = ("total", "free")
"""Values of ``kv_memory_rule``: how an engine sizes its KV-cache pool (:func:`econ.physics.memory.kv_pool_bytes`)."""

_DEFAULT_MODEL = "llama-3.3-70b"

# -- what is served, and where (workload) ---------------------------------------------------------------------------
_G = dict(group="workload")
_add("model", "str", _DEFAULT_MODEL, label="Model", help="model id (econ list models)", catalog="models",
     source="dashboard opening view: Llama-3.3-70B, the most quoted open model of 2025-26 (data/quotes.csv)", **_G)
_add("hardware", "str", "h100-sxm", label="Accelerator", help="accelerator id (econ list hardware)",
     catalog="accelerators", source="dashboard opening view: H100 SXM, the reference accelerator of the seeds", **_G)
_add("precision", "str", "fp8", label="Weight precision", help="matmul precision of the weights",
     choices=PRECISIONS, source="FP8: the serving precision of most 2025-26 deployments on Hopper and newer", **_G)
_add("workload", "str", DEFAULT_WORKLOAD, label="Workload", help="request-shape preset (econ.presets)",
     choices=WORKLOAD_CHOICES, source="econ.presets (SemiAnalysis InferenceX sequence-length sweeps; task presets: "
     "GitHub Copilot coding-agent traces, Mooncake long-document trace, Kimi-Researcher)", **_G)
_add("input_len", "int", DEFAULT_INPUT_LEN, 1, MAX_CONTEXT, "tokens", "Input length",
     "prompt tokens per request, ISL", "the workload preset's (econ.presets)", flag="--input-len", **_G)
_add("output_len", "int", DEFAULT_OUTPUT_LEN, 1, MAX_CONTEXT, "tokens", "Output length",
     "generated tokens per request, OSL", "the workload preset's (econ.presets)", flag="--output-len", **_G)
_add("output_len_cv", "float", 0.0, 0.0, 10.0, "", "Output length spread (cv)",
     "coefficient of variation of answer lengths: decode attends ISL + OSL (1 + cv^2) / 2 on average",
     "0: every request generates output_len tokens, as trtllm-bench and fixed-length benchmarks run; an exponential "
     "spread of reasoning answers is cv = 1 (the mean decode context then spans the whole answer; "
     "econ.physics.serving.mean_decode_context_tokens)", scenario=False, flag="", **_G)
_add("input_len_cv", "float", 0.0, 0.0, 10.0, "", "Prompt length spread (cv)",
     "coefficient of variation of prompt lengths: the spread of prefill service times in the TTFT queue",
     "0: every request has an input_len-token prompt (econ's workload), so prefill service is near-deterministic "
     "(M/D/c); 1 reproduces the exponential service of an M/M/c queue (econ.physics.serving)", scenario=False,
     flag="", **_G)
# a task = several LLM calls sharing a cached prefix (issue 22; econ.presets task presets)
_add("calls_per_task", "float", 1.0, *CALLS_PER_TASK_RANGE, "calls", "LLM calls per task",
     "LLM calls (turns) one task makes; $/task = calls x $/call", "the workload preset's (econ.presets: GitHub "
     "Copilot coding-agent traces 7.83 calls per user turn; 1 for a single request)", scenario=False, **_G)
_add("prefix_reuse_frac", "float", 0.0, 0.0, 1.0, "", "Prefix-reuse share",
     "share of each call's prompt tokens that repeat a prefix computed by an earlier call (cached input)",
     "the workload preset's (econ.presets: 0.857 GitHub Copilot coding agents, 0.66 Mooncake long-document "
     "trace; 0 for a single request)", flag="--prefix-reuse", scenario=False, **_G)
_add("reuse_interval_s", "float", 0.0, *REUSE_INTERVAL_RANGE_S, "s", "Time between reuses",
     "time a cached prefix waits for its next use: what its KV storage is paid for",
     "the workload preset's (econ.presets: 60 s for agents, SyFI eviction simulation; 300 s for RAG, Anthropic's "
     "5-minute prompt-cache lifetime)", scenario=False, **_G)

# -- deployment ------------------------------------------------------------------------------------------------------
_G = dict(group="deployment")
_add("num_gpus", "int", None, 1, 4096, "accelerators", "GPUs per replica",
     "accelerators per model replica (automatic: the fewest that hold the weights)", "automatic",
     none_token="auto", flag="--gpus", **_G)
_add("batch_size", "int", None, 1, MAX_BATCH, "sequences", "Batch size",
     "concurrent sequences per replica (automatic: the largest batch meeting the speed floor)", "automatic",
     none_token="auto", flag="--batch", **_G)
for _k, _label in (("tp", "Tensor parallel"), ("dp", "Attention data parallel"), ("ep", "Expert parallel"),
                   ("pp", "Pipeline stages")):
    _add(_k, "int", None, 1, MAX_PARALLEL, "", _label, f"{_label.lower()} degree (automatic: searched)", "automatic",
         none_token="auto", scenario=False, **_G)
_add("mode", "str", "aggregated", label="Serving mode", help="prefill and decode together, or disaggregated (xPyD)",
     choices=MODES, source="aggregated: the common single-pool deployment", scenario=False, **_G)
# KV-cache tiers and context parallelism in the engine (issue 22.2-22.3); every default leaves a result unchanged
_add("kv_offload", "str", "none", label="KV offload tier",
     help="let the decode batch's KV cache spill beyond HBM: none (HBM only), host (host memory: Grace LPDDR5X over "
          "NVLink-C2C on GB200/GB300, DDR5 over PCIe on HGX), nvme (host memory, then local NVMe); the max batch rises "
          "by the tiers' capacity and each decode step reads the spilled KV at the tier's bandwidth",
     choices=KV_OFFLOAD_CHOICES,
     source="none: vLLM, SGLang and TensorRT-LLM keep the KV in HBM unless an offload connector (LMCache, NVIDIA "
            "Dynamo KVBM) is configured; tiers and their figures: data/kv_tiers.csv", flag="--kv-offload",
     scenario=False, **_G)
_add("prefix_cache_tier", "str", None, label="Prefix-cache tier",
     help="where the cache-hit share of each prompt is kept between calls: hbm (no transfer), host, nvme or remote "
          "(loaded at the tier's bandwidth, or recomputed when that is faster); the new tokens are prefilled attending "
          "to the cached prefix (off: the prompt's prefill time is the whole prompt's and the hit share is simply not "
          "charged)", choices=KV_TIER_CHOICES, none_token="off",
     source="off: the engine's rule before issue 22 (kept so that every earlier result is unchanged); hbm is what "
            "vLLM / SGLang automatic prefix caching do (RadixAttention, Zheng et al. 2024); host/nvme/remote: "
            "LMCache, NVIDIA Dynamo KVBM G2-G4, Mooncake Store", flag="--prefix-tier", scenario=False, **_G)
_add("context_limit_tokens", "int", None, 2, MAX_CONTEXT, "tokens", "Context window",
     "serve a longer context than the model's release (a RoPE-extended variant); auto: the model's maximum",
     "auto: models.csv max_context_tokens; Yang et al. (arXiv:2411.01783) run Llama3 405B at 1M tokens, beyond its "
     "128K release, to measure context-parallel prefill", none_token="auto", flag="--context-window", scenario=False,
     **_G)
_add("cp", "int", 1, 1, MAX_CP, "ranks", "Context parallelism",
     "context-parallel degree of a prompt's prefill: cp copies of the prefill instance split the prompt and pass KV "
     "blocks in a ring over scale-out (ring attention); the optimizer searches it for prompts of "
     f"{CP_SEARCH_MIN_TOKENS:,}+ tokens", "1: no context parallelism (Yang et al., arXiv:2411.01783, use CP16 x TP8 "
     "for a 1M-token Llama-3.1-405B prefill on 128 H100)", flag="--cp", scenario=False, **_G)

# -- weight, expert and KV-cache formats (what the deployment stores; econ.assumptions.Decoding) --------------------
_G = dict(group="formats", none_token="auto")
_add("weight_format", "str", None, label="Weight format",
     help="storage format of the non-routed weights (attention, dense FFN, shared experts); int4 = W4A16 "
          "AWQ/GPTQ; fp8 = per-tensor FP8, fp8_block = FP8 scaled per 128 x 128 block, whose expert GEMMs run at "
          "0.57x on Hopper and 0.80x on Blackwell (auto: the release's checkpoint, else the matmul precision's own "
          "format)",
     choices=WEIGHT_FORMATS,
     source="auto: the format the released checkpoint pins (models.csv native_weight_dtype, e.g. gpt-oss ships "
            "bf16 attention: OpenAI gpt-oss model card; DeepSeek-V3/R1/V3.2 and Kimi-K2 at fp8: their 128 x 128 "
            "block-scaled FP8 release, econ.physics.precision.NATIVE_FP8_FORMAT), else the matmul precision's own "
            "format (bf16, fp8, and NVFP4 for fp4: the format of NVIDIA's Blackwell fp4 peak; "
            "econ.physics.precision.DEFAULT_WEIGHT_FORMAT); the block-scaled expert GEMM speeds: NVIDIA's fused-MoE "
            "kernel tables (econ.physics.precision.BLOCK_FP8_MOE_FLOP_FRAC)",
     **_G)
_add("expert_weight_format", "str", None, label="Expert weight format",
     help="storage format of the routed-expert weights of an MoE model (auto: the release's checkpoint, else the "
          "weight format)", choices=WEIGHT_FORMATS,
     source="auto: the format the released checkpoint pins (gpt-oss: MXFP4 experts, OpenAI gpt-oss model card "
            "'MXFP4 quantization of the MoE weights'), else the weight format", flag="--expert-format", **_G)
_add("kv_precision", "str", None, label="KV-cache format",
     help="element format of the KV cache, set apart from the weights: bf16, fp8, int8, int4, mxfp4 or nvfp4 "
          "(bytes with block scales: econ.physics.precision.KV_BYTES_PER_ELEMENT; narrow formats are dequantized "
          "in attention, so they change the bytes, not the matmul precision) (auto: fp8 with fp8/fp4 matmuls, bf16 "
          "with bf16)", choices=KV_PRECISIONS,
     source="auto: fp8 KV cache with fp8 or fp4 weights, bf16 with bf16 (vLLM --kv-cache-dtype fp8 and "
            "TensorRT-LLM's FP8 KV cache; econ.physics.precision.DEFAULT_KV_PRECISION)", flag="--kv-format", **_G)

# -- speculative decoding (econ.assumptions.Decoding; the engine's econ.engine.frame._resolve_spec) -------------------
_G = dict(group="speculation", none_token="auto")
_add("spec_method", "str", None, label="Speculative decoding",
     help="none, mtp (the model's own multi-token-prediction module), eagle (an EAGLE-style draft head) or draft "
          "(a separate draft model) (auto: the model's vendor default)", choices=SPEC_METHODS,
     source="auto: MTP where the vendor ships MTP modules and runs them in production with a sourced acceptance "
            "(DeepSeek-V3/R1: 0.85, DeepSeek-V3 report arXiv:2412.19437 sec. 5.4.3; models.csv mtp_acceptance), "
            "else none (engines leave EAGLE opt-in)", flag="--speculation", **_G)
_add("spec_draft_tokens", "int", None, 0, 16, "tokens", "Draft tokens per step",
     "tokens drafted per decode step (0 = off; auto: 1, or the published head's draft length)",
     "auto: 1 drafted token per step (DeepSeek-V3 runs one MTP module), or the draft length of the model's "
     "published EAGLE-3 head (models.csv)", flag="--draft-tokens", **_G)
_add("spec_acceptance", "float", None, 0.0, 0.999, "", "Draft acceptance",
     "chance each drafted token is accepted (auto: the model's sourced MTP or EAGLE acceptance)",
     "auto: models.csv mtp_acceptance (DeepSeek-V3/R1 0.85) or the published EAGLE-3 head's acceptance; eagle and "
     "draft without a sourced value need one", flag="--acceptance", **_G)
_add("spec_draft_model", "str", None, label="Draft model",
     help="catalog model id of the draft model (spec_method draft)", catalog="models", none_token="none",
     source="none: no draft model (method draft needs one)", flag="--draft-model", group="speculation")

# -- service-level objectives -----------------------------------------------------------------------------------------
_G = dict(group="slo")
_add("min_tokens_per_s_per_user", "float", DEFAULT_MIN_TOKENS_PER_S_PER_USER, 0.0, 10_000.0, "tokens/s",
     "Minimum tokens/s per user", "SLO: minimum output tokens/s of one stream (interactivity; 0 = no floor)",
     "econ.presets.DEFAULT_MIN_TOKENS_PER_S_PER_USER: MLPerf Inference v5.0 interactive scenario, TPOT <= 40 ms",
     **_G)
_add("tpot_ms", "float", None, 1e-3, 1e6, "ms", "Max TPOT", "SLO: maximum time per output token (= a floor of "
     "1000/TPOT tokens/s per user)", "none (the speed floor applies)", none_token="none", scenario=False, **_G)
_add("ttft_ms", "float", None, 1e-3, 1e9, "ms", "Max TTFT", "SLO: maximum time to first token", "no limit",
     none_token="none", scenario=False, **_G)
_add("slo_percentile", "float", None, 1.0, 99.9, "%", "SLO percentile",
     "judge the TPOT and TTFT SLOs at this percentile (50, 90, 99) of the latency under Poisson arrivals at the "
     "served rate, not at the mean (mean: the served TPOT and TTFT)",
     "mean: the served TPOT and TTFT; MLPerf Inference judges LLM TTFT and TPOT at p99 (mlcommons/inference "
     "loadgen mlperf.conf, target_latency_percentile = 99)", none_token="mean", **_G)

# -- economics (econ.assumptions.Economics) ---------------------------------------------------------------------------
_G = dict(group="economics")
_add("region", "str", None, label="Power-price region", help="power-price region id (econ list regions)",
     catalog="power_prices", none_token="custom", source="none: the electricity price field applies", **_G)
_add("facility", "str", None, label="Facility class", help="facility class id: sets PUE and build cost "
     "(econ list facilities)", catalog="facilities", none_token="none", scenario=False,
     source="none: the PUE and build-cost fields apply", **_G)
_add("usd_per_kwh", "float", 0.0892, 0.0, 10.0, "USD/kWh", "Electricity price", "electricity price", **_G)
_add("pue", "float", 1.40, 1.0, 3.0, "ratio", "PUE", "power usage effectiveness (facility energy / IT energy)",
     **_G)
_add("build_usd_per_mw_it", "float", 11.7e6, 0.0, 1e9, "USD/MW", "Facility build cost",
     "facility construction capex per MW of critical IT load", flag="--build-usd-per-mw", **_G)
_add("basis", "str", Tier.OWNED.value, label="Cost tier ($ per GPU-hour)", help="cost tier of a GPU-hour",
     choices=TIERS, flag="--tco", **_G)
_add("usd_per_gpu_hour", "float", None, 1e-6, 1e4, "USD/h", "Custom $ per GPU-hour",
     "price every GPU-hour at this rate (tier 'custom'), per GPU-hour of existence", none_token="none", **_G)
_add("cost_of_capital_frac", "float", 0.10, 0.0, 1.0, "1/year", "Cost of capital",
     "annual discount rate of the capital recovery factor", flag="--cost-of-capital", **_G)
_add("accelerator_life_years", "float", 5.0, 0.1, 50.0, "years", "Accelerator life",
     "economic life of the IT equipment", flag="--life-years", **_G)
_add("facility_life_years", "float", 15.0, 0.1, 100.0, "years", "Facility life", "economic life of the building",
     **_G)
_add("opex_frac_of_capex_per_year", "float", 0.05, 0.0, 1.0, "1/year", "Opex share of capex",
     "yearly operations as a share of the accelerator's all-in capex", flag="--opex-frac", **_G)
_add("utilization_frac", "float", 0.70, 0.01, 1.0, "", "Utilization",
     "share of hours serving paid traffic; fixed costs and rent spread over these", flag="--utilization", **_G)
_add("input_output_mix", "float", 3.0, 0.0, 1e4, "input per output token", "Input:output mix",
     "input tokens per output token in the blended price (3 = 3:1)", flag="", **_G)  # the CLI types it as I:O
_add("cache_hit_frac", "float", 0.0, 0.0, 1.0, "", "Prefix-cache hit rate",
     "share of input tokens served from a prefix cache", flag="--cache-hit-rate", **_G)
_add("cached_input_cost_frac", "float", 0.0, 0.0, 1.0, "", "Cached input cost (share of uncached)",
     "cost of a cached input token relative to an uncached one", **_G)

# -- efficiency factors (econ.assumptions.Assumptions) ----------------------------------------------------------------
_G = dict(group="efficiency")
_add("eta_bw", "float", 0.60, 1e-3, 1.0, "", "HBM bandwidth efficiency",
     "achieved fraction of datasheet HBM bandwidth in decode", **_G)
_add("eta_flop", "float", 0.30, 1e-3, 1.0, "", "Decode FLOP efficiency",
     "achieved fraction of dense peak FLOP/s in decode matmuls and attention", **_G)
_add("eta_prefill", "float", 0.50, 1e-3, 1.0, "", "Prefill FLOP efficiency (MFU)",
     "achieved fraction of dense peak in prefill", **_G)
_add("overlap_frac", "float", 0.85, 0.0, 1.0, "", "Two-batch overlap",
     "share of the shorter of computation and communication hidden by two-batch overlap (wide EP)", **_G)
_add("comm_sm_frac", "float", 24 / 132, 0.0, 0.9, "", "SMs held by prefill all-to-all",
     "share of the SMs the all-to-all kernels hold while the other micro-batch computes (two-batch prefill)", **_G)
_add("single_batch_overlap_frac", "float", 0.0, 0.0, 1.0, "", "Overlap without two-batch overlap",
     "share of the shorter of computation and communication hidden when a step runs as one batch", **_G)
_add("overhead_s", "float", 0.0015, 0.0, 1.0, "s", "Per-step overhead",
     "fixed time per decode step off the roofline (launches, scheduling, sampling)", **_G)
_add("usable_hbm_frac", "float", 0.90, 0.05, 1.0, "", "Usable HBM share",
     "fraction of HBM available to weights and KV cache (kv_memory_rule=total), or of the memory left free for the "
     "KV cache (free)", **_G)
_add("kv_memory_rule", "str", "total", label="KV-cache memory rule",
     help="how the engine sizes its KV cache: total = usable HBM share of the whole memory less the weights (vLLM, "
     "SGLang); free = usable HBM share of the memory left after weights, activations and runtime (TensorRT-LLM)",
     choices=KV_MEMORY_RULES, **_G)
_add("prefill_chunk_tokens", "int", 8192, 1, 10_000_000, "tokens", "Prefill chunk",
     "tokens a prefill step processes together (chunked prefill)", **_G)
_add("stream_input_embedding", "bool", False, label="Stream input embedding",
     help="stream the whole input-embedding table each decode step (the seeds' textbook count)", **_G)
_add("embedding_bytes_per_param", "float", 2.0, 0.25, 4.0, "bytes", "Embedding bytes per parameter",
     "bytes per embedding / LM-head parameter", **_G)
_add("activation_bytes", "float", 2.0, 0.5, 4.0, "bytes", "Activation bytes",
     "bytes per activation element in collectives", **_G)
_add("scale_up_latency_s", "float", 1.0e-6, 0.0, 1e-2, "s", "Scale-up hop latency",
     "per-hop latency of a collective on the scale-up tier", **_G)
_add("scale_out_latency_s", "float", 5.0e-6, 0.0, 1e-1, "s", "Scale-out hop latency",
     "per-hop latency of a collective on the scale-out tier", **_G)
_add("eta_routed_flop_frac", "float", 0.30, 1e-2, 1.0, "", "MoE routed-expert FLOP efficiency",
     "efficiency of routed-expert matmuls relative to dense ones", **_G)
_add("eta_routed_bw_frac", "float", 1.0, 1e-2, 1.0, "", "MoE routed-expert bandwidth efficiency",
     "HBM efficiency of streaming routed-expert weights relative to dense weights", **_G)
_add("moe_layer_overhead_s", "float", 0.0, 0.0, 1e-2, "s", "Extra MoE per-layer time",
     "extra fixed time per MoE layer per forward pass, beyond its kernels (0 = none)", **_G)
_add("layer_overhead_s", "float", 0.0, 0.0, 1e-3, "s", "Extra per-layer time",
     "extra fixed time per decoder layer per forward pass, beyond its kernels (0 = none)", **_G)
_add("sequence_overhead_s", "float", 2e-5, 0.0, 1e-2, "s", "Per-sequence step overhead",
     "CPU time per sequence of a decode step (scheduling, sampling, output processing) not hidden", **_G)
_add("cpu_overlap_frac", "float", 0.67, 0.0, 1.0, "", "Host work hidden behind the GPU",
     "share of a decode step's GPU time under which the host prepares the next step (overlap scheduler)", **_G)
_add("kernel_latency_s", "float", 2.5e-6, 0.0, 1e-3, "s", "Kernel latency floor",
     "time each kernel takes beyond its bytes and FLOPs (DRAM latency, prologue, tail wave)", **_G)
_add("kernel_launch_s", "float", 1.3e-6, 0.0, 1e-3, "s", "Kernel launch gap (CUDA graph)",
     "idle time per kernel boundary inside a captured CUDA graph", **_G)
_add("kernel_launch_eager_s", "float", 5e-6, 0.0, 1e-3, "s", "Kernel launch gap (eager)",
     "idle time per kernel launch outside CUDA graphs (prefill, decode above the graph cap)", **_G)
_add("prefill_layer_dispatch_s", "float", PREFILL_LAYER_DISPATCH_BY_ENGINE_S["vllm"], 0.0, 2e-2, "s",
     "Prefill host dispatch per layer",
     "host (CPU) time to dispatch one decoder layer of an eager prefill pass; TTFT is at least layers x this",
     **_G)
_add("cuda_graph_max_batch", "int", 512, 0, MAX_BATCH, "sequences", "CUDA graph batch cap",
     "largest decode batch per attention group run as a captured CUDA graph (0 = none)", **_G)
_add("moe_tile_rows", "float", 1.0, 1.0, 512.0, "rows", "Grouped-GEMM tile rows",
     "rows of one grouped-GEMM tile (token padding per touched expert; 1 = none)", **_G)
_add("moe_gemm_half_width", "float", 0.0, 0.0, 1e6, "columns", "Grouped-GEMM half-efficiency expert width",
     "expert width at which the grouped GEMM reaches half its wide-expert efficiency (0 = no width effect)", **_G)
_add("max_batch_per_group", "int", 4096, 1, MAX_BATCH, "sequences", "Engine max batch per attention group",
     "engine limit on sequences per attention group", **_G)
_add("latency_percentile", "float", 99.0, 0.001, 99.999, "%", "Latency percentile",
     "percentile of TTFT / TPOT reported and checked against SLOs", **_G)
_add("tpot_tail_factor", "float", 1.0, 1.0, 10.0, "", "TPOT tail over mean",
     "p99 TPOT over mean TPOT under continuous batching (other percentiles: log-normal, "
     "econ.physics.serving.tpot_tail_at_percentile)", **_G)

# -- multi-accelerator serving (econ.assumptions.DeploymentAssumptions) -----------------------------------------------
_G = dict(group="serving", scenario=False, flag="")
_add("expert_imbalance_factor", "float", 1.2, 1.0, 64.0, "", "Expert load imbalance",
     "token load of the busiest expert-parallel rank over the mean", **{**_G, "flag": "--expert-imbalance"})
_add("dispatch_activation_bytes", "float", 1.0, 0.25, 4.0, "bytes", "Dispatch bytes per element",
     "bytes per element of the MoE dispatch all-to-all", **_G)
_add("combine_activation_bytes", "float", 2.0, 0.25, 4.0, "bytes", "Combine bytes per element",
     "bytes per element of the MoE combine all-to-all", **_G)
_add("alltoall_scale_up_latency_s", "float", 10e-6, 0.0, 1e-2, "s", "All-to-all latency, scale-up",
     "fixed time of one dispatch or combine call inside a scale-up domain", **_G)
_add("alltoall_scale_out_latency_s", "float", 40e-6, 0.0, 1e-1, "s", "All-to-all latency, scale-out",
     "fixed time of one dispatch or combine call across domains", **_G)
_add("kernel_launch_latency_s", "float", 2e-6, 0.0, 1e-3, "s", "Kernel launch latency",
     "launch time of each extra kernel a parallel layout adds", **_G)
_add("kv_transfer_eta", "float", 0.8, 1e-3, 1.0, "", "KV transfer efficiency",
     "achieved fraction of link bandwidth moving a prompt's KV cache between pools", **_G)
_add("kv_transfer_latency_s", "float", 0.5e-3, 0.0, 1.0, "s", "KV transfer latency",
     "fixed time per KV transfer between the prefill and decode pools", **_G)
_add("kv_head_replication", "bool", True, label="Replicate KV heads",
     help="tensor parallelism wider than the KV heads replicates heads (else such a tp is rejected)", **_G)
_add("max_pool_instances", "int", 16, 1, 256, "", "Largest pool searched",
     "largest x or y searched when sizing an xPyD unit without an arrival rate", **_G)
_add("pool_sizing_tolerance_frac", "float", 0.03, 0.0, 1.0, "", "Pool sizing tolerance",
     "extra accelerators per served request accepted for a smaller xPyD unit", **_G)

# -- comparisons (hardware comparison, optimizer, head to head) -------------------------------------------------------
_G = dict(group="comparison", flag="")
_add("interactivity_levels", "floats", INTERACTIVITY_LEVELS, 0.0, 10_000.0, "tokens/s per user",
     "Interactivity levels", "levels at which cost-vs-interactivity tables read the frontier",
     "econ.presets.INTERACTIVITY_LEVELS (issue 11: $ per M tokens at 20 / 50 / 100 tokens/s per user)", **_G)
_add("compare_hardware", "ids", (), label="Accelerators compared", help="subset compared (empty = all)",
     catalog="accelerators", source="all accelerators", **_G)
_add("compare_precisions", "ids", (), label="Precisions compared", help="subset compared (empty = all)",
     choices=PRECISIONS, source="all precisions", **_G)
_add("compare_objective", "str", "output", label="Rank by", help="rank by $/M output tokens or the blended $/M",
     choices=("output", "blended"), source="output: the quantity analysts quote", **_G)

# -- fleet and cluster ------------------------------------------------------------------------------------------------
_G = dict(group="fleet", flag="")
_SEED001 = "seed 001 (ML Systems textbook appendix 'Fleet Foundations')"
_add("cluster_gpus", "int", 1024, 1, 100_000_000, "accelerators", "Cluster size", "accelerators in the cluster",
     "assumption: a 1,024-GPU cluster, the scale of seed 001's worked examples", **{**_G, "flag": ""})
_add("gpus_per_rack", "int", None, 1, 1024, "accelerators per rack", "GPUs per rack",
     "accelerators per rack (automatic: from the scale-up domain)", "automatic", none_token="auto", **{**_G, "flag": "--gpus-per-rack"})
_add("training_precision", "str", "bf16", label="Training precision", help="matmul precision of a training run",
     choices=PRECISIONS, source="bf16: mixed-precision training (seed 001)", **{**_G, "flag": "--training-precision"})
_add("mfu_frac", "float", None, 0.01, 1.0, "", "MFU", "model FLOP utilization (automatic: the efficiency curve)",
     "automatic: the chosen efficiency model", none_token="curve", **{**_G, "flag": "--mfu"})
_add("bubble_frac", "float", 0.05, 0.0, 0.5, "", "Pipeline bubbles", "share of time lost to pipeline bubbles",
     f"{_SEED001}, Table 8 overhead budget", **_G)
_add("checkpoint_overhead_frac", "float", 0.03, 0.0, 0.5, "", "Checkpointing overhead",
     "share of time lost to checkpointing", f"{_SEED001}, Table 8 overhead budget", **_G)
_add("failure_recovery_frac", "float", 0.10, 0.0, 0.5, "", "Failure recovery",
     "share of time lost to failure recovery", f"{_SEED001}, Table 8 overhead budget", **_G)
_add("maintenance_frac", "float", 0.05, 0.0, 0.5, "", "Maintenance", "share of time lost to maintenance",
     f"{_SEED001}, Table 8 overhead budget", **_G)
_add("failure_window_h", "float", 24.0, 0.01, 8760.0, "h", "Failure window",
     "window of the at-least-one-failure probability", "assumption: one day", **{**_G, "flag": "--failure-window-h"})
_add("mtbf_h_per_gpu", "float", 50_000.0, 1.0, 1e7, "h", "MTBF per GPU", "mean time between failures of one GPU",
     f"{_SEED001}, Table 6", **{**_G, "flag": "--mtbf-h"})
_add("checkpoint_write_gb_per_s", "float", 100.0, 0.01, 1e6, "GB/s", "Checkpoint write bandwidth",
     "aggregate storage write bandwidth for checkpoints", f"{_SEED001}, Table 7", **{**_G, "flag": "--checkpoint-gb-per-s"})
_add("training_tokens", "float", 15e12, 1e6, 1e16, "tokens", "Training tokens", "tokens of a training run",
     "Llama 3 pre-training, 15T tokens (arXiv:2407.21783)", **{**_G, "flag": "--training-tokens"})
_add("price_usd_per_m_output_tokens", "float", 0.90, 0.0, 1000.0, "USD/M tokens", "Selling price",
     "selling price of output tokens for revenue and payback",
     "Fireworks' Llama-3.3-70B list price, $0.90 per M output (and input) tokens (data/quotes.csv "
     "fireworks-llama-3.3-70b, 2026-11)", **{**_G, "flag": "--price"})
_add("price_usd_per_m_input_tokens", "float", 0.90, 0.0, 1000.0, "USD/M tokens", "Selling price, input",
     "selling price of uncached input tokens for revenue and payback",
     "Fireworks' Llama-3.3-70B list price, $0.90 per M input (and output) tokens (data/quotes.csv "
     "fireworks-llama-3.3-70b, 2026-11)", **{**_G, "flag": "--price-input", "scenario": False})
_add("cached_price_frac", "float", 0.5, 0.0, 1.0, "", "Cached input price (share of the input price)",
     "price of a prefix-cache hit as a share of the uncached input price (revenue)",
     "0.5: the median of the 13 quotes of data/quotes.csv that list a cached-input price (DeepSeek 0.26, Moonshot "
     "0.25, Z.ai 0.18 to DeepInfra 0.8)", **{**_G, "flag": "--cached-price-frac", "scenario": False})
_add("demand_share_frac", "float", 1.0, 0.0, 1.0, "", "Demand share",
     "share of the tokens the fleet can serve at its utilization that are sold (revenue; 1 = capacity sold)",
     "1: every token the fleet serves at its utilization is sold, the capacity-sold case of econ fleet size; lower "
     "it for demand below capacity (issue 18.6)", lo_open=True, **{**_G, "flag": "--demand-share", "scenario": False})

# -- build-out unit prices (econ.economics.buildout.BuildoutPrices; econ cluster / fleet --it-capex, Cluster page) ------
_G = dict(group="buildout", scenario=False)
_BO = "data/buildout_capex.csv (sourced there, row by row)"
_add("all_in_it_usd_per_gpu", "float", None, 0.0, 1e7, "USD", "All-in IT $ per GPU",
     "one all-in IT price per GPU replacing the catalog's all_in_capex_usd (seed 004: H100 ~45,000)",
     "accelerators.csv all_in_capex_usd", lo_open=True, none_token="none", flag="--all-in-usd", **_G)
_add("accelerator_usd_per_gpu", "float", None, 0.0, 1e7, "USD", "Accelerator $",
     "itemized: accelerator price per GPU (a free accelerator is not a price)", "accelerators.csv purchase_price_usd",
     lo_open=True, none_token="none", flag="--accelerator-usd", **_G)
_add("server_usd_per_gpu", "float", None, 0.0, 1e7, "USD", "Server share $/GPU",
     "itemized: server/host share per GPU (CPUs, memory, chassis, NICs)", _BO, none_token="none",
     flag="--server-usd", **_G)
_add("switch_usd", "float", None, 0.0, 1e8, "USD", "Switch $", "itemized: one scale-out switch", _BO,
     none_token="none", flag="--switch-usd", **_G)
_add("switch_radix", "int", None, 4, 4096, "ports", "Switch ports", "itemized: ports per scale-out switch", _BO,
     none_token="none", flag="--switch-radix", **_G)
_add("link_usd", "float", None, 0.0, 1e6, "USD", "Link $ (optics + cable)",
     "itemized: one scale-out link (optics + cable) per GPU per tier", _BO, none_token="none", flag="--link-usd", **_G)
_add("storage_usd_per_gpu", "float", None, 0.0, 1e7, "USD", "Storage $/GPU", "itemized: storage hardware per GPU",
     _BO, none_token="none", flag="--storage-usd", **_G)

# -- head to head (two set-ups) ---------------------------------------------------------------------------------------
_G = dict(group="head_to_head", flag="")
for _s, _hw in (("a", "h100-sxm"), ("b", "b200")):
    _S = _s.upper()
    _add(f"h2h_{_s}_model", "str", _DEFAULT_MODEL, label=f"Set-up {_S}: model", catalog="models",
         source="the scenario's default model", **{**_G, "flag": "--price"})
    _add(f"h2h_{_s}_hardware", "str", _hw, label=f"Set-up {_S}: accelerator", catalog="accelerators",
         source="H100 vs B200: the generational comparison analysts ask first", **{**_G, "flag": "--price"})
    _add(f"h2h_{_s}_precision", "str", "fp8", label=f"Set-up {_S}: precision", choices=PRECISIONS,
         source="the scenario's default precision", **{**_G, "flag": "--price"})
    _add(f"h2h_{_s}_basis", "str", None, label=f"Set-up {_S}: cost tier", choices=TIERS, none_token="sidebar",
         source="sidebar: the scenario's cost tier (issue 19: a set-up follows the sidebar's tier unless given "
                "its own)", **{**_G, "flag": "--price"})

# -- a custom accelerator (econ.tables.custom.CustomAccelerator) ------------------------------------------------------
# Each range is the one of the accelerators.csv column the field becomes (econ.tables.catalog reads it from here, and
# econ.tables.rules states it as the column's plausible range): an order of magnitude or more outside every real
# device of 2015-2035, so it refuses typos (a unit slip of 1e3, 1e-300, a price in cents), never a real datasheet.
_G = dict(group="custom", flag="", source="illustrative default of the custom-accelerator form (an H200-class chip); "
          "not a datasheet")
_add("custom_accelerator", "bool", False, label="Custom accelerator in use", **_G)
_add("custom_name", "text", "Custom accelerator", label="Custom accelerator: name", **_G)
_add("custom_bf16_tflop_per_s", "float", 1000.0, 0.1, 1e5, "TFLOP/s", "Custom: dense BF16",
     help="dense BF16 peak (a T4 gives 65 bf16-class TFLOP/s, a GB300 15,000 fp4: the range refuses only typos)",
     column="bf16_dense_tflop_per_s", **_G)
_add("custom_fp8_tflop_per_s", "float", 2000.0, 0.1, 1e5, "TFLOP/s", "Custom: dense FP8", help="dense FP8 peak",
     none_token="none", column="fp8_dense_tflop_per_s", **_G)
_add("custom_fp4_tflop_per_s", "float", None, 0.1, 1e5, "TFLOP/s", "Custom: dense FP4", help="dense FP4 peak",
     none_token="none", column="fp4_dense_tflop_per_s", **_G)
_add("custom_hbm_gib", "float", 141.0, 1.0, 1e4, "GiB", "Custom: HBM capacity",
     help="HBM capacity (16 GiB on a V100 to 288 GiB on a B300)", column="hbm_capacity_gib", **_G)
_add("custom_hbm_tb_per_s", "float", 4.8, 0.01, 100.0, "TB/s", "Custom: HBM bandwidth",
     help="HBM bandwidth (0.3 TB/s on an L4 to 8 TB/s on a B200)", column="hbm_bandwidth_tb_per_s", **_G)
_add("custom_scale_up_domain_size", "int", 8, 1, 1_000_000, "accelerators", "Custom: scale-up domain",
     column="scale_up_domain_size", **_G)
_add("custom_scale_up_gb_per_s", "float", 450.0, 0.1, 1e5, "GB/s", "Custom: scale-up bandwidth",
     help="scale-up bandwidth per accelerator, one direction (NVLink 5: 900 GB/s)", column="scale_up_bandwidth_gb_per_s",
     **_G)
_add("custom_scale_up_topology", "str", "switch", label="Custom: scale-up topology",
     help="switch: any pair of the domain gets the whole scale-up bandwidth (NVSwitch); mesh: direct links split "
          "evenly over the peers, so a TP group of g of the D accelerators gets (g - 1) / (D - 1) of it (AMD Instinct, "
          "Gaudi 3, a 4-GPU HGX board)", choices=("switch", "mesh"), column="scale_up_topology",
     **{**_G, "source": "data/accelerators.csv scale_up_topology (econ.tables.catalog.SCALE_UP_TOPOLOGIES); switch, "
                        "the NVSwitch boards' sharing, as every custom chip was modelled before the column existed"})
_add("custom_scale_out_gb_per_s", "float", 50.0, 0.1, 1e5, "GB/s", "Custom: scale-out bandwidth",
     help="scale-out (NIC) bandwidth per accelerator (a 1 GbE NIC is 0.125 GB/s)",
     column="scale_out_bandwidth_gb_per_s", **_G)
_add("custom_capex_usd", "float", 50_000.0, 100.0, 1e7, "USD", "Custom: all-in capex",
     help="all-in IT capex per accelerator (thousands to tens of thousands of dollars)", none_token="none",
     column="all_in_capex_usd", **_G)
_add("custom_usd_per_gpu_hour", "float", None, 0.01, 1e3, "USD/h", "Custom: rental rate",
     help="rental rate per accelerator-hour (cents to tens of dollars)", none_token="none",
     column="rental_usd_per_hour", **_G)
_add("custom_power_w", "float", 1500.0, 10.0, 1e5, "W", "Custom: all-in power",
     help="all-in IT power per accelerator, host and network share included (a server share of 300 W to a few kW)",
     column="all_in_power_w", **_G)
_add("custom_generation", "str", None, label="Custom: calibrated like (generation)", choices=GENERATIONS,
     none_token="none", **_G)


def field_named(name: str) -> Field:
    """The field ``name``.

    Raises
    ------
    InvalidInputError
        An unknown name (the closest names listed).
    """
    f = FIELDS.get(name)
    if f is None:
        import difflib

        close = difflib.get_close_matches(str(name), list(FIELDS), n=3)
        raise InvalidInputError(f"{name!r} is not an input field" + (f" (closest: {', '.join(close)})" if close else ""))
    return f


def default(name: str):
    """The one default of the field ``name``."""
    return field_named(name).default


def bounds(name: str) -> tuple[float, float]:
    """(lo, hi) of the numeric field ``name``: its one valid range (for array checks such as
    :func:`econ.validate.require_in_range`)."""
    f = field_named(name)
    return f.lo, f.hi


def check(name: str, value, *, shown_as: str | None = None):
    """``value`` when valid for the field ``name`` (see :meth:`Field.check`), else InvalidInputError."""
    return field_named(name).check(value, shown_as=shown_as)


def check_fields(obj, names) -> None:
    """Check every field ``names`` of a dataclass instance ``obj`` against its range (InvalidInputError)."""
    for n in names:
        FIELDS[n].check(getattr(obj, n))


def group(name: str) -> tuple[Field, ...]:
    """The fields of one group, in table order."""
    return tuple(f for f in FIELDS.values() if f.group == name)


def sources(names) -> dict[str, str]:
    """``{field: source of its default}`` for ``names``."""
    return {n: FIELDS[n].source for n in names}


def custom_column_ranges() -> dict[str, Field]:
    """``{accelerators.csv column: the custom field with its range}``: the catalog schema's ranges of those columns."""
    return {f.column: f for f in FIELDS.values() if f.column}

# ---------------------------------------------------------------------------------------------------------------------
# Result columns: the one title (label with unit) and display format of every column a user reads
# ---------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Column:
    """How a result column is shown: title with unit, d3 format (charts), printf format (tables), scale.

    ``scale`` multiplies the stored value for display only (USD -> $M is 1e-6); downloads keep the
    stored unit, which the column name carries.
    """

    title: str
    d3: str = ""
    table: str | None = None
    scale: float = 1.0


def usd_m_col(title: str) -> Column:
    """A $/M tokens column: three decimals."""
    return Column(title, "$,.3f", "$%.3f")


def usd_h_col(title: str) -> Column:
    """A $/GPU-hour column: cents."""
    return Column(title, "$,.2f", "$%.2f")


def pct_col(title: str) -> Column:
    """A fraction shown as a whole percent."""
    return Column(title, ".0%", "%.0f%%", 100.0)


COLUMNS: dict[str, Column] = {
    "rank": Column("Rank", "d", "%d"),
    "model": Column("Model"), "hardware": Column("Accelerator"), "display_name": Column("Name"),
    "vendor": Column("Vendor"), "precision": Column("Precision"), "kv_precision": Column("KV-cache precision"),
    "num_gpus": Column("GPUs per replica", ",d", "%d"), "tp": Column("Tensor parallel", "d", "%d"),
    "pp": Column("Pipeline stages", "d", "%d"),
    "batch_size": Column("Batch size (sequences)", ",d", "%d"),
    "max_batch_size": Column("Max batch, KV-cache wall (sequences)", ",d", "%d"),
    "sweet_spot_batch": Column("Memory/compute crossover batch (sequences)", ",.0f", "%.0f"),
    "context_tokens": Column("Context (tokens)", ",d", "%d"),
    "input_len": Column("Input length (tokens)", ",d", "%d"), "output_len": Column("Output length (tokens)", ",d", "%d"),
    "feasible": Column("Feasible"), "meets_slo": Column("Meets tokens/s floor"), "status": Column("Why not"),
    "binding_wall": Column("Binding wall"), "infeasible_reason": Column("Why infeasible"),
    "weight_bytes": Column("Weights (GB)", ",.1f", "%.1f", 1e-9),
    "kv_bytes_per_sequence": Column("KV cache per sequence (MB)", ",.1f", "%.1f", 1e-6),
    "hbm_used_frac": Column("HBM used (%)", ".1%", "%.1f%%", 100.0),
    "t_mem_s": Column("Memory time per step (ms)", ",.2f", "%.2f", 1e3),
    "t_flop_s": Column("Compute time per step (ms)", ",.2f", "%.2f", 1e3),
    "t_comm_s": Column("Communication time per step (ms)", ",.2f", "%.2f", 1e3),
    "tpot_s": Column("Time per output token (ms)", ",.1f", "%.1f", 1e3),
    "ttft_s": Column("Time to first token (s)", ",.3f", "%.3f"),
    "tokens_per_s_per_user": Column("Output tokens/s per user", ",.1f", "%.1f"),
    "output_tokens_per_s_per_gpu": Column("Output tokens/s per GPU", ",.0f", "%.0f"),
    "input_tokens_per_s_per_gpu": Column("Input tokens/s per GPU", ",.0f", "%.0f"),
    "billed_input_tokens_per_s_per_gpu": Column("Input tokens/s per charged GPU-hour's GPU (the $/M basis)", ",.0f",
                                                "%.0f"),
    "billed_output_tokens_per_s_per_gpu": Column("Output tokens/s per charged GPU-hour's GPU (the $/M basis)", ",.0f",
                                                 "%.0f"),
    "arithmetic_intensity_flop_per_byte": Column("Arithmetic intensity (FLOP/byte)", ",.0f", "%.0f"),
    "basis": Column("Cost basis"),
    "usd_per_gpu_hour": Column("Cost per utilized GPU-hour ($)", "$,.2f", "$%.2f"),
    "usd_per_gpu_hour_capex": Column("Capex per utilized GPU-hour ($)", "$,.2f", "$%.2f"),
    "usd_per_gpu_hour_facility": Column("Facility per utilized GPU-hour ($)", "$,.2f", "$%.2f"),
    "usd_per_gpu_hour_opex": Column("Opex per utilized GPU-hour ($)", "$,.2f", "$%.2f"),
    "usd_per_gpu_hour_power": Column("Power per utilized GPU-hour ($)", "$,.2f", "$%.2f"),
    "usd_per_gpu_hour_rental": Column("Rental per utilized GPU-hour ($)", "$,.2f", "$%.2f"),
    "usd_per_gpu_hour_of_existence": Column("Cost per GPU-hour of existence ($)", "$,.2f", "$%.2f"),
    "usd_per_m_input_tokens": usd_m_col("Cost ($ per M input tokens)"),
    "usd_per_m_output_tokens": usd_m_col("Cost, decode only ($ per M output tokens)"),
    "usd_per_m_blended_tokens": usd_m_col("Cost ($ per M blended tokens)"),
    "objective": Column("Ranked by"),
    "usd_per_m_tokens": usd_m_col("Cost ($ per M tokens)"),
    "usd_per_m_tokens_capex": usd_m_col("Capex ($ per M tokens)"),
    "usd_per_m_tokens_facility": usd_m_col("Facility ($ per M tokens)"),
    "usd_per_m_tokens_opex": usd_m_col("Opex ($ per M tokens)"),
    "usd_per_m_tokens_power": usd_m_col("Power ($ per M tokens)"),
    "usd_per_m_tokens_rental": usd_m_col("Rental ($ per M tokens)"),
    "cost_part": Column("Cost component"),
    # cluster
    "gpus_per_rack": Column("GPUs per rack", ",d", "%d"),
    "cluster_gpus": Column("Cluster size (GPUs)", ",d", "%d"),
    "peak_flop_per_s": Column("Peak compute (EFLOP/s)", ",.2f", "%.2f", 1e-18),
    "mfu_frac": Column("MFU (%)", ".1%", "%.1f%%", 100.0),
    "scaling_efficiency_frac": Column("Scaling efficiency (%)", ".1%", "%.1f%%", 100.0),
    "goodput_frac": Column("Goodput (%)", ".1%", "%.1f%%", 100.0),
    "realized_flop_per_s": Column("Realized compute (EFLOP/s)", ",.3f", "%.3f", 1e-18),
    "realized_frac_of_peak": Column("Realized share of peak (%)", ".1%", "%.1f%%", 100.0),
    "it_power_mw": Column("IT power (MW)", ",.2f", "%.2f"),
    "facility_power_mw": Column("Facility power (MW)", ",.2f", "%.2f"),
    "annual_energy_mwh": Column("Annual energy (GWh)", ",.1f", "%.1f", 1e-3),
    "annual_energy_cost_usd": Column("Annual energy cost ($M)", "$,.2f", "$%.2f", 1e-6),
    "rack_count": Column("Racks", ",d", "%d"),
    "rack_power_kw": Column("Rack power (kW)", ",.1f", "%.1f"),
    "air_cooling_ok": Column("Air-coolable (<= 30 kW/rack)"),
    "capex_accelerators_usd": Column("Capex: accelerators, servers, network ($M)", "$,.1f", "$%.1f", 1e-6),
    "capex_facility_usd": Column("Capex: facility ($M)", "$,.1f", "$%.1f", 1e-6),
    "capex_total_usd": Column("Capex total ($M)", "$,.1f", "$%.1f", 1e-6),
    "cluster_mtbf_h": Column("Cluster MTBF (h)", ",.2f", "%.2f"),
    "failure_window_h": Column("Failure window (h)", ",.0f", "%.0f"),
    "prob_failure_in_window_frac": Column("P(at least one failure in window) (%)", ".1%", "%.1f%%", 100.0),
    "checkpoint_bytes": Column("Checkpoint size (TB)", ",.2f", "%.2f", 1e-12),
    "checkpoint_write_s": Column("Checkpoint write time (s)", ",.1f", "%.1f"),
    "training_tokens": Column("Training tokens (T)", ",.1f", "%.1f", 1e-12),
    "training_flop": Column("Training compute (FLOP)", ".2e", "%.2e"),
    "training_days": Column("Training time (days)", ",.1f", "%.1f"),
    "usd_per_gpu_hour_training": Column("Training cost per GPU-hour of existence ($, every hour of the run)", "$,.2f", "$%.2f"),
    "training_price_basis": Column("Training GPU-hour priced at"),
    "training_cost_usd": Column("Training cost ($M)", "$,.1f", "$%.1f", 1e-6),
    "serving_precision": Column("Serving precision"),
    "serving_gpus_per_replica": Column("Serving GPUs per replica", ",d", "%d"),
    "serving_replicas": Column("Serving replicas", ",d", "%d"),
    "serving_batch_size": Column("Serving batch (sequences)", ",d", "%d"),
    "serving_tokens_per_s_per_user": Column("Serving tokens/s per user", ",.1f", "%.1f"),
    "serving_output_tokens_per_s_per_gpu": Column("Serving output tokens/s per GPU", ",.0f", "%.0f"),
    "serving_tokens_per_day": Column("Output tokens per day (billions)", ",.1f", "%.1f", 1e-9),
    "price_usd_per_m_output_tokens": usd_m_col("Selling price ($ per M output tokens)"),
    "revenue_per_year_usd": Column("Revenue ($M per year)", "$,.1f", "$%.1f", 1e-6),
    "opex_per_year_usd": Column("Energy + opex ($M per year)", "$,.1f", "$%.1f", 1e-6),
    "payback_years": Column("Payback (years)", ",.2f", "%.2f"),
    "payback_years_low": Column("Payback, fast end of the calibration band (years)", ",.2f", "%.2f"),
    "payback_years_high": Column("Payback, slow end of the calibration band (years)", ",.2f", "%.2f"),
    "irr_frac_low": pct_col("IRR, slow end of the calibration band (% per year)"),
    "irr_frac_high": pct_col("IRR, fast end of the calibration band (% per year)"),
    "cached_price_frac": pct_col("Cached input price (% of the input price)"),
    "demand_share_frac": pct_col("Demand share (% of capacity sold)"),
    "revenue_capacity_sold_per_year_usd": Column("Revenue, capacity sold ($M per year)", "$,.1f", "$%.1f", 1e-6),
    "payback_capacity_sold_years": Column("Payback, capacity sold (years)", ",.2f", "%.2f"),
    "irr_frac": pct_col("IRR over the accelerator life (% per year)"),
    "irr_capacity_sold_frac": pct_col("IRR, capacity sold (% per year)"),
    # catalog columns whose derived title would read badly
    "usd_per_kwh": Column("Electricity ($/kWh)", "$,.4f", "$%.4f"), "fx_local_per_usd": Column("FX (local per $)"),
    "region_id": Column("Region id"), "all_in_power_w": Column("All-in power (W)", ",.0f", "%.0f"),
    "all_in_capex_usd": Column("All-in capex ($)", "$,.0f", "$%.0f"),
    "scale_up_domain_size": Column("Scale-up domain (accelerators)", ",d", "%d"),
    "link": Column("Source link"),
    # deployment optimizer (parallel layouts, disaggregated serving)
    "layout": Column("Deployment"), "family": Column("Layout family"), "ep": Column("Expert parallel", "d", "%d"),
    "dp": Column("Attention data parallel", "d", "%d"), "total_gpus": Column("GPUs in the unit (both pools)", ",d", "%d"),
    "disaggregated": Column("Disaggregated (xPyD)"),
    "two_batch_overlap": Column("Two-batch overlap"),
    "usd_per_m_output_tokens_all_in": Column("Cost, all-in ($ per M output tokens)", "$,.3f", "$%.4f"),
    "prefill_instances": Column("Prefill instances (x)", "d", "%d"), "decode_instances": Column("Decode instances (y)", "d", "%d"),
    "prefill_num_gpus": Column("GPUs per prefill instance", "d", "%d"),
    "t_comm_tp_s": Column("TP all-reduce per step (ms)", ",.2f", "%.2f", 1e3),
    "t_comm_ep_s": Column("EP all-to-all per step (ms)", ",.2f", "%.2f", 1e3),
    "t_comm_pp_s": Column("Pipeline hops per step (ms)", ",.3f", "%.3f", 1e3),
    "kv_transfer_s": Column("KV transfer (ms)", ",.2f", "%.2f", 1e3),
    "prefill_stall_s": Column("Prefill stall per step (ms)", ",.2f", "%.2f", 1e3),
    "decode_tokens_per_s_per_user": Column("Decode-only tokens/s per user", ",.1f", "%.1f"),
    "weight_bytes_per_gpu": Column("Weights per GPU (GB)", ",.1f", "%.1f", 1e-9),
    "kv_bytes_per_gpu": Column("KV cache per GPU (GB)", ",.1f", "%.1f", 1e-9),
    "slo_miss": Column("SLO missed"), "series": Column("Accelerator (domain)"), "detail": Column("Detail"),
    "families": Column("Families", ",d", "%d"), "example": Column("Example"), "mode": Column("Mode"),
    # quote checker (provider quotes vs the modeled floor)
    "quote_set": Column("Quotes from"), "quote_id": Column("Quote"), "provider": Column("Provider"),
    "quantization": Column("Stated quantization"), "verdict": Column("Verdict"),
    "price_usd_per_m_input_tokens": usd_m_col("Price, input ($ per M tokens)"),
    "price_usd_per_m_blended_tokens": usd_m_col("Price, blended ($ per M tokens)"),
    "floor_usd_per_m_input_tokens": usd_m_col("Floor cost, input ($ per M tokens)"),
    "floor_usd_per_m_output_tokens": usd_m_col("Floor cost, output ($ per M tokens)"),
    "floor_usd_per_m_blended_tokens": usd_m_col("Floor cost, blended ($ per M tokens)"),
    "margin_input_frac": pct_col("Gross margin, input (%)"),
    "margin_output_frac": pct_col("Gross margin, output (%)"),
    "margin_blended_frac": pct_col("Gross margin, blended (%)"), "floor_hardware": Column("Floor accelerator"),
    "floor_num_gpus": Column("Floor GPUs per replica", ",d", "%d"), "floor_tp": Column("Floor tensor parallel", "d", "%d"),
    "floor_pp": Column("Floor pipeline stages", "d", "%d"), "floor_precision": Column("Floor precision"),
    "floor_batch_size": Column("Floor batch (sequences)", ",d", "%d"),
    "floor_tokens_per_s_per_user": Column("Floor output tokens/s per user", ",.1f", "%.1f"),
    "floor_binding_wall": Column("Floor binding wall"), "floor_batch_limit": Column("What stops a larger batch"),
    "band_max_usd_per_m_blended_tokens": usd_m_col("Dearest accelerator's floor ($ per M blended tokens)"),
    "band_max_hardware": Column("Dearest accelerator"),
    "margin_text": Column("Margin, blended (in words)"), "floor_assumes": Column("The floor assumes"),
    "floor_profile_note": Column("Floor's efficiency profile"), "floor_calibrated": Column("Floor on a calibrated profile"),
    "floor_speedup_needed": Column("Speed-up over the model the floor needs", ",.2f", "%.2fx"),
    "speedup_needed": Column("Speed-up over the model needed", ",.2f", "%.2fx"),
    "floor_power_usd_per_m_blended_tokens": usd_m_col("Floor's power cost alone ($ per M blended tokens)"),
    "ceiling_tokens_per_s_per_user": Column("Fastest GPU serving, band's fast end (tokens/s per user)", ",.0f", "%.0f"),
    "ceiling_hardware": Column("On"), "calibrated": Column("Calibrated profile"),
    "profile_note": Column("Efficiency profile"), "rank_note": Column("Ranking, with the bands"),
    "distinguishable": Column("Apart from the first beyond the bands"),
    "usd_per_m_blended_tokens_low": usd_m_col("Cost, low end of the band ($ per M blended tokens)"),
    "usd_per_m_blended_tokens_high": usd_m_col("Cost, high end of the band ($ per M blended tokens)"),
    "num_hardware_meeting_floor": Column("Accelerators meeting the speed", "d", "%d"),
    "speed_floor_tokens_per_s_per_user": Column("Speed floor (output tokens/s per user)", ",.0f", "%.0f"),
    "speed_floor_source": Column("Speed floor from"), "reference_precision": Column("Precision compared"),
    "reference_precision_source": Column("Precision from"),
    "floor_bf16_usd_per_m_blended_tokens": usd_m_col("Floor with bf16 weights ($ per M blended tokens)"),
    "floor_any_precision_usd_per_m_blended_tokens": usd_m_col("Floor at any precision ($ per M blended tokens)"),
    "floor_any_precision": Column("Precision of that floor"),
    "floor_usd_per_gpu_hour": Column("Modeled all-in cost per GPU-hour ($)", "$,.2f", "$%.2f"),
    "breakeven_usd_per_gpu_hour": Column("Break-even cost per GPU-hour ($)", "$,.2f", "$%.2f"),
    "breakeven_utilization_frac": pct_col("Break-even utilization (%)"),
    "breakeven_batch_size": Column("Break-even batch (sequences)", ",d", "%d"), "reason": Column("Reason"),
    "meets_floor": Column("Meets the speed floor"),
    "fastest_tokens_per_s_per_user": Column("Fastest output tokens/s per user", ",.0f", "%.0f"),
    "note": Column("Why no floor"),
    # cost vs interactivity, head to head, measurements (issue 11)
    "at_tokens_per_s_per_user": Column("At least (output tokens/s per user)", ",.0f", "%.0f"),
    "usd_per_m_output_tokens_low": usd_m_col("Cost, decode only, low end of the band ($ per M output tokens)"),
    "usd_per_m_output_tokens_high": usd_m_col("Cost, decode only, high end of the band ($ per M output tokens)"),
    "usd_per_m_output_tokens_all_in_low": usd_m_col("Cost all-in, low end of the band ($ per M output tokens)"),
    "usd_per_m_output_tokens_all_in_high": usd_m_col("Cost all-in, high end of the band ($ per M output tokens)"),
    "output_tokens_per_s_per_gpu_low": Column("Output tokens/s per GPU, low end of the band", ",.0f", "%.0f"),
    "output_tokens_per_s_per_gpu_high": Column("Output tokens/s per GPU, high end of the band", ",.0f", "%.0f"),
    "reached": Column("Reached"),
    "output_tokens_per_usd": Column("Output tokens per $1", ",.0f", "%.0f"),
    "output_tokens_per_s_per_mw": Column("Output tokens/s per MW provisioned", ",.0f", "%.0f"),
    "provisioned_power_w_per_gpu": Column("Provisioned power per GPU, all-in x PUE (W)", ",.0f", "%.0f"),
    "setup": Column("Set-up"), "setup_label": Column("Set-up"),
    "cost_ratio_b_to_a": Column("Cost, B / A", ",.2f", "%.2fx"), "cheaper": Column("Cheaper, with the bands"),
    "usd_per_m_output_tokens_all_in_low_a": usd_m_col("A: cost all-in, low end of the band ($ per M output tokens)"),
    "usd_per_m_output_tokens_all_in_high_a": usd_m_col("A: cost all-in, high end of the band ($ per M output tokens)"),
    "usd_per_m_output_tokens_all_in_low_b": usd_m_col("B: cost all-in, low end of the band ($ per M output tokens)"),
    "usd_per_m_output_tokens_all_in_high_b": usd_m_col("B: cost all-in, high end of the band ($ per M output tokens)"),
    "throughput_ratio_b_to_a": Column("Output tokens/s per GPU, B / A", ",.2f", "%.2fx"),
    "usd_per_m_output_tokens_all_in_a": Column("A: all-in ($ per M output)", "$,.3f", "$%.3f"),
    "usd_per_m_output_tokens_all_in_b": Column("B: all-in ($ per M output)", "$,.3f", "$%.3f"),
    "output_tokens_per_s_per_gpu_a": Column("A: output tokens/s per GPU", ",.0f", "%.0f"),
    "output_tokens_per_s_per_gpu_b": Column("B: output tokens/s per GPU", ",.0f", "%.0f"),
    "tokens_per_s_per_user_a": Column("A: output tokens/s per user", ",.1f", "%.1f"),
    "tokens_per_s_per_user_b": Column("B: output tokens/s per user", ",.1f", "%.1f"),
    "component": Column("Part of the step"), "title": Column("Part of the step"),
    "time_s": Column("Time per output token (ms)", ",.2f", "%.2f", 1e3),
    "share_frac": Column("Share of the step (%)", ".0%", "%.0f%%", 100.0),
    "weights_s": Column("Weights, HBM reads (ms)", ",.2f", "%.2f", 1e3),
    "kv_cache_s": Column("KV cache, HBM reads (ms)", ",.2f", "%.2f", 1e3),
    "gemm_s": Column("GEMMs (ms)", ",.2f", "%.2f", 1e3), "attention_s": Column("Attention (ms)", ",.2f", "%.2f", 1e3),
    "communication_s": Column("Communication, exposed (ms)", ",.2f", "%.2f", 1e3),
    "overhead_s": Column("Fixed overhead (ms)", ",.2f", "%.2f", 1e3),
    "prefill_chunks_s": Column("Prefill chunks (ms)", ",.2f", "%.2f", 1e3),
    "other_s": Column("Other (ms)", ",.2f", "%.2f", 1e3),
    "served_tpot_s": Column("Time per output token, served (ms)", ",.2f", "%.2f", 1e3),
    "binding_side": Column("Roofline side that binds"), "hidden_s": Column("Other side, hidden under it (ms)", ",.2f",
                                                                     "%.2f", 1e3),
    "source_label": Column("Measured by"), "measurement_basis": Column("How the pair was measured"),
    "scenario": Column("Benchmark scenario"), "concurrency": Column("Concurrency (requests)", ",.0f", "%.0f"),
    "speculative_decoding": Column("Speculative decoding"), "length_match": Column("Request lengths"),
    "case_id": Column("Measurement"), "kind": Column("Points"), "level_label": Column("Interactivity level"),
    "series_label": Column("Series"),
    # owned GPU-hour against SemiAnalysis, market rental rates (issue 18)
    "step": Column("Step"), "estimate_by": Column("Estimate by"), "provider_kind": Column("Provider kind"), "commitment": Column("Commitment"),
    "providers": Column("Providers", ",d", "%d"), "accelerator": Column("Accelerator"),
    "low_usd_per_gpu_hour": usd_h_col("Cheapest ($ per GPU-hour of existence)"),
    "median_usd_per_gpu_hour": usd_h_col("Median ($ per GPU-hour of existence)"),
    "high_usd_per_gpu_hour": usd_h_col("Dearest ($ per GPU-hour of existence)"),
    # sensitivity (issue 18.5): a tornado's bars
    "label": Column("Assumption"), "low": Column("Low end of the range"), "high": Column("High end of the range"),
    "answer_at_low": Column("Answer at the low end"), "answer_at_high": Column("Answer at the high end"),
    "swing": Column("Swing of the answer"),
    # assumptions
    "group": Column("Group"), "name": Column("Assumption"), "value": Column("Value"), "source": Column("Source"),
    "as_of": Column("As of"), "notes": Column("Notes"), "table": Column("Table"), "id": Column("Id"),
    # generations (econ trend, issue 22)
    "year": Column("Year"), "availability": Column("Availability (vendor's word)"),
    "cost_vs_first": Column("Cost vs the first generation", ".3f", "%.3f"),
    "usd_per_m_uncalibrated": Column("Cost, uncalibrated efficiencies ($ per M output tokens)", "$,.3f", "$%.4f"),
    "efficiency": Column("Efficiencies"), "cost_from": Column("Cost taken from"), "remark": Column("Caveat"),
    # tasks and KV-cache tiers (econ.analyses.tasks, issue 22)
    "calls_per_task": Column("LLM calls per task", ",.2f", "%.2f"),
    "prefix_reuse_frac": Column("Prefix-reuse share", ".1%", "%.3f"),
    "reuse_interval_s": Column("Time between reuses (s)", ",.0f", "%.0f"),
    "sessions_waiting": Column("Sessions waiting for their next call", ",.0f", "%.0f"),
    "kv_tier": Column("Farthest KV tier used"), "kv_tier_medium": Column("KV tier (medium)"),
    "kv_waiting_bytes_per_gpu": Column("KV of waiting prefixes per GPU (GB)", ",.1f", "%.1f", 1e-9),
    "hbm_free_bytes_per_gpu": Column("HBM free for waiting prefixes per GPU (GB)", ",.1f", "%.1f", 1e-9),
    "usd_per_m_cached_input_tokens_true": Column("Cached input, true cost ($ per M tokens)", "$,.4f", "$%.5f"),
    "usd_per_m_cached_storage": Column("Cached input: storage ($ per M tokens)", "$,.4f", "$%.5f"),
    "usd_per_m_cached_load": Column("Cached input: load ($ per M tokens)", "$,.4f", "$%.5f"),
    "kv_load_s": Column("Cached prefix load time (s)", ",.3f", "%.3f"),
    "ttft_cache_hit_s": Column("Time to first token on a cache hit (s)", ",.3f", "%.3f"),
    "usd_per_call": Column("Cost per LLM call ($)", "$,.4f", "$%.5f"),
    "sessions_held_hbm": Column("Waiting sessions HBM keeps", ",.0f", "%.0f"),
    "sessions_held_host": Column("Waiting sessions HBM + host memory keep", ",.0f", "%.0f"),
    "usd_per_task": Column("Cost per task ($)", "$,.4f", "$%.4f"),
    # one long prompt (econ.analyses.long_prompt)
    "strategy": Column("Strategy"), "cp": Column("Context-parallel ranks", "d", "%d"),
    "gpus": Column("Accelerators", ",d", "%d"), "prefill_s": Column("Prefill time (s)", ",.2f", "%.2f"),
    "exposed_comm_s": Column("Exposed ring communication (s)", ",.3f", "%.3f"),
    "parallel_efficiency_frac": Column("Parallel efficiency", ".0%", "%.3f"),
    "kv_fits": Column("KV fits in HBM"), "usd_per_prompt": Column("Cost per prompt ($)", "$,.4f", "$%.4f"),
    "chunk_tokens": Column("Chunk (tokens)", ",d", "%d"), "iteration_s": Column("Iteration (s)", ",.3f", "%.3f"),
    "tpot_inflation": Column("Decode slowdown while chunking (x)", ",.2f", "%.2f"),
    "chunk_s": Column("Chunk prefill per step (s)", ",.3f", "%.3f"),
    "decode_batch": Column("Decode batch", ",d", "%d"),
    # KV tiers, prefix caching and context parallelism in the engine (econ.engine.TIER_COLUMNS, issue 22)
    "max_batch_size_hbm": Column("Max batch, KV in HBM only (sequences)", ",d", "%d"),
    "kv_offload_frac": Column("KV share beyond HBM", ".1%", "%.3f"),
    "kv_offload_s": Column("Offloaded KV read per decode step (s)", ",.3f", "%.4f"),
    "kv_tier_usd_per_gpu_hour": Column("Offloaded KV storage ($ per utilized GPU-hour)", "$,.4f", "$%.4f"),
    "prefix_load_s": Column("Cached prefix load (s)", ",.3f", "%.3f"),
    "prefill_gpu_s": Column("Prefill GPU-seconds per prompt", ",.2f", "%.2f"),
    "kv": Column("KV cache"), "kv_offload": Column("KV offload tier"), "tier": Column("Tier"),
    "medium": Column("Medium"), "capacity_gb_per_accelerator": Column("Capacity per GPU (GB)", ",.0f", "%.0f"),
    "read_gb_per_s_per_accelerator": Column("Read bandwidth per GPU (GB/s)", ",.1f", "%.1f"),
    "usd_per_gb_hour": Column("Storage ($ per GB-hour)", "$,.6f", "$%.6f"),
}


_UNIT_SUFFIXES = (  # longest first: the suffix vocabulary of data/README.md and STYLE.md
    ("_usd_per_mw_it", "$ per MW IT"), ("_usd_per_hour", "$ per hour"), ("_tflop_per_s", "TFLOP/s"),
    ("_gb_per_s", "GB/s"), ("_tb_per_s", "TB/s"), ("usd_per_kwh", "$/kWh"), ("_usd", "$"), ("_gb", "GB"),
    ("_w", "W"), ("_tokens", "tokens"), ("_params_b", "billion params"), ("_frac", "fraction"), ("_s", "s"),
    ("_h", "h"), ("_years", "years"),
)
_WORDS = {"bf16": "BF16", "fp8": "FP8", "fp4": "FP4", "hbm": "HBM", "tdp": "TDP", "id": "Id", "mla": "MLA",
          "kv": "KV", "moe": "MoE", "nic": "NIC", "fx": "FX", "pue": "PUE", "it": "IT", "q": "Q", "lora": "LoRA",
          "qk": "QK", "mw": "MW", "usd": "$", "num": "number of", "per": "per"}


def column_title(column: str) -> str:
    """Human title with unit for a column: from :data:`COLUMNS`, else derived from the unit suffix.

    ``bf16_dense_tflop_per_s`` -> "BF16 dense (TFLOP/s)"; never a raw snake_case name.
    """
    if column in COLUMNS:
        return COLUMNS[column].title
    unit = ""
    stem = column
    for suffix, u in _UNIT_SUFFIXES:
        if column.endswith(suffix) and column != suffix.lstrip("_"):
            stem, unit = column[: -len(suffix)] if not suffix.startswith("usd_per") else column[: -len(suffix)], u
            break
    words = [_WORDS.get(w, w) for w in stem.strip("_").split("_") if w]
    text = " ".join(words) if words else unit
    text = text[:1].upper() + text[1:]
    return f"{text} ({unit})" if unit and words else text


# ---------------------------------------------------------------------------------------------------------------------
# Sensitivity ranges: the sourced low and high of each assumption a tornado moves (issue 18.5)
# ---------------------------------------------------------------------------------------------------------------------

DISTRIBUTIONS: tuple[str, ...] = ("triangular", "uniform")
"""Monte Carlo distribution of an assumption between its low and high: ``triangular`` with its mode at the
scenario's value (clipped into the range), or ``uniform``."""


@dataclass(frozen=True, slots=True)
class SensitivityRange:
    """The low and high of one assumption over which a sensitivity analysis moves it, with their source.

    Attributes
    ----------
    low, high : float
        The range, in the field's unit; for a ``relative`` range, multipliers of the answer's own value.
    source : str
        Where each end comes from ("assumption: ..." where no source was found, said so).
    relative : bool
        True: ``low`` and ``high`` multiply the value the answer uses (capex: the accelerator's catalog capex;
        the selling price: the site's price), since the right absolute range depends on the accelerator.
    distribution : str
        Monte Carlo distribution (:data:`DISTRIBUTIONS`).
    label : str
        Name of the assumption in a table ("Capex"); empty: the field's label.
    """

    low: float
    high: float
    source: str
    relative: bool = False
    distribution: str = "triangular"
    label: str = ""


EFFICIENCY_BAND = "efficiency_band"
"""Name of the calibration band in a tornado: not a range stored here but the engine's ``*_low`` / ``*_high``
columns (the 10th-90th percentile of held-out measured / predicted of the row's efficiency profile,
data/calibration.csv); in the Monte Carlo, ln(measured / predicted) is normal with those two quantiles."""

EFFICIENCY_BAND_SOURCE = ("the row's efficiency profile (data/calibration.csv log_ratio_p10 / log_ratio_p90): 10th and "
                          "90th percentile of measured / predicted throughput on held-out measurements (econ "
                          "calibrate, grouped cross-validation); engine columns *_low / *_high")

CAPEX = "all_in_capex_usd"
"""Key of the capex range (the catalog column it scales; relative to the accelerator's own capex)."""

SENSITIVITY_RANGES: dict[str, SensitivityRange] = {
    "utilization_frac": SensitivityRange(
        0.50, 0.85,
        "high: GPU servers are engaged in useful work 75-85% of the time (Lawrence Berkeley National Laboratory "
        "estimate, via Uptime Intelligence Update 362, 2025-05; DeepSeek's day-6 fleet averaged 226.75 of 278 peak "
        "nodes = 0.82, 2025-03-01); low: assumption (no sourced figure; Uptime: inference runs lower than training's "
        "~80% because its load follows user demand)"),
    "usd_per_kwh": SensitivityRange(
        0.0635, 0.1864,
        "US industrial averages of data/power_prices.csv (EIA Electric Power Annual 2023): Washington 6.35 to "
        "California 18.64 c/kWh (the default is Virginia's 8.92)"),
    "pue": SensitivityRange(
        1.06, 1.58,
        "data/facilities.csv: a liquid-cooled AI hall 1.06 to a legacy enterprise room 1.58 (ML Systems textbook, "
        "'Fleet Foundations' Table 13; Uptime 2024 survey average 1.56)"),
    CAPEX: SensitivityRange(
        0.625, 1.21,
        "x the accelerator's catalog capex. Low: SemiAnalysis's hyperscale H100 all-in, $250k per 8-GPU server = "
        "$31,250 against the catalog's market-listing $50,000 (2025-08-20); high: the dearest H100 system listing "
        "the catalog notes, Viperatech DGX H100 $375k against the $310k server behind the $50,000 (2025-03)",
        relative=True, label="Capex"),
    "accelerator_life_years": SensitivityRange(
        4.0, 6.0,
        "4: Morgan Stanley's AI-factory model depreciates servers over 4 years (2025-08), Nebius until 2025; 6: "
        "CoreWeave, Microsoft and Alphabet depreciate GPU servers over 6 years (filings)"),
    "cost_of_capital_frac": SensitivityRange(
        0.05, 0.17,
        "strong-corporate bank loans from 5%, GPU-backed private credit up to 17% a year (gpuloans.com, 2025-12; "
        "the default's source)"),
    "min_tokens_per_s_per_user": SensitivityRange(
        20.0, 72.0,
        "data/quotes.csv published speeds of GPU-served quotes: DeepSeek's own service 20 tokens/s per user "
        "(day-6 disclosure, 2025-03-01) to Fireworks' Llama-3.1-405B 72 tokens/s (2024-09-10), the fastest of a "
        "model served without speculative decoding (Fireworks' gpt-oss-120b at 525 drafts tokens, a 5B-active MoE)"),
    "cache_hit_frac": SensitivityRange(
        0.0, 342.0 / 608.0,
        "0: no prefix caching (the default); 0.56: DeepSeek's served input tokens that hit its on-disk KV cache, "
        "342B of 608B a day (day-6 disclosure, 2025-03-01)"),
    "price_usd_per_m_output_tokens": SensitivityRange(
        0.32 / 0.90, 2.253 / 0.90,
        "x the site's selling price: the spread of Llama-3.3-70B output list prices in data/quotes.csv around the "
        "default $0.90 (DeepInfra $0.32 to Cloudflare $2.25 per M, 2026-11)", relative=True,
        label="Selling price"),
}
"""The sourced range of each assumption a sensitivity moves (:mod:`econ.analyses.sensitivity`), keyed by field name
(capex by the catalog column it scales: :data:`CAPEX`). The calibration band is not here: the engine gives it
(:data:`EFFICIENCY_BAND`). ``tests/analyses/test_sensitivity.py`` checks the data-table ends against the tables."""


def sensitivity_range(name: str, low: float, high: float, source: str = "", *, relative: bool = False,
                      distribution: str = "triangular", label: str = "") -> SensitivityRange:
    """A checked :class:`SensitivityRange` for the field ``name`` (a user's own range, or one of the table's).

    Raises
    ------
    InvalidInputError
        ``low`` > ``high``, a non-finite end, an end outside the field's own range (absolute ranges), a
        multiplier <= 0 (relative ranges), or an unknown distribution: naming the field, the value and the range.
    """
    for end, x in (("low", low), ("high", high)):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise InvalidInputError(f"sensitivity range of {name}: {end}={show(x)} is not a finite number")
    if low > high:
        within = "multipliers in (0, inf)" if relative else (
            f"both in {field_named(name).range_text()}" if name in FIELDS else "")
        raise InvalidInputError(f"sensitivity range of {name}: low={show(low)} is above high={show(high)} "
                                f"(valid: low <= high{', ' + within if within else ''})")
    if distribution not in DISTRIBUTIONS:
        raise InvalidInputError(f"sensitivity range of {name}: distribution={distribution!r} is not one of "
                                f"{list(DISTRIBUTIONS)}")
    if relative:
        if low <= 0:
            raise InvalidInputError(f"sensitivity range of {name}: low={show(low)} is outside (0, inf) (a multiplier)")
    else:
        f = field_named(name)
        for end, x in (("low", low), ("high", high)):
            if not f.in_range(x):
                raise InvalidInputError(f"sensitivity range of {name}: {end}={show(x)} is outside {f.range_text()}")
    return SensitivityRange(float(low), float(high), source, relative, distribution, label)


for _name, _r in SENSITIVITY_RANGES.items():  # the table obeys the same checks as a user's range
    sensitivity_range(_name, _r.low, _r.high, _r.source, relative=_r.relative, distribution=_r.distribution,
                      label=_r.label)
