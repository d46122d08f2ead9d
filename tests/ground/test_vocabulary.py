"""One vocabulary of inputs (issue 16): every field's one range is applied alike by every reader.

For every numeric field of econ.vocabulary.FIELDS: the value at each end of its range is accepted and a value just
outside is refused, identically, by the scenario loader (TOML), the URL parser, the core dataclass that holds the
field, the dashboard widget's bounds and every CLI command that has the field's flag (a refused value exits 2 with
the flag, the value and the range; no reader substitutes a default silently).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path

import pytest

from econ import vocabulary as V
from econ.assumptions import Assumptions, DeploymentAssumptions, Economics
from econ.errors import InvalidInputError
from econ.io.scenario import SPECS, from_query_params, from_toml
from econ.tables.custom import CustomAccelerator

ROOT = Path(__file__).resolve().parents[2]
NUMERIC = [f for f in V.FIELDS.values() if f.kind in ("int", "float") and f.lo is not None]
HOLDERS = {cls: {f.name for f in dataclasses.fields(cls)} for cls in (Assumptions, Economics, DeploymentAssumptions)}


def _values(f: V.Field) -> tuple[list, list]:
    """(accepted, refused) values at the ends of the field's range."""
    up = 1 if f.kind == "int" else max(abs(f.hi) * 1e-3, 1e-6)
    down = 1 if f.kind == "int" else max(abs(f.lo) * 1e-2, 1e-6)
    ok, bad = [f.hi], [f.hi + up]
    if f.lo_open:
        bad.append(f.lo)
        ok.append(f.lo + down)
    else:
        ok.append(f.lo)
        bad.append(f.lo - down)
    if f.kind == "int":
        ok, bad = [int(v) for v in ok], [int(math.floor(v)) if v < f.lo else int(math.ceil(v)) for v in bad]
    return ok, bad


def _text(v) -> str:
    return V.num_text(v) if isinstance(v, float) else str(v)


def test_every_field_is_defined_once_with_a_range_a_label_and_a_source():
    assert len(V.FIELDS) >= 100
    for f in V.FIELDS.values():
        assert f.label, f.name
        assert f.source or f.group in ("workload",), f.name
        if f.kind in ("int", "float"):
            assert f.lo is not None and f.hi is not None and f.lo < f.hi, f.name
            if f.default is not None:
                assert f.check(f.default) == f.default, f.name  # the default is inside its own range


@pytest.mark.parametrize("field", [f for f in NUMERIC if f.scenario], ids=lambda f: f.name)
def test_scenario_url_and_core_accept_and_refuse_alike(field):
    ok, bad = _values(field)
    holder = next((cls for cls, names in HOLDERS.items() if field.name in names), None)
    for v in ok:
        sc, warnings = from_toml(f"{field.name} = {_text(v)}\n")
        assert warnings == [] and getattr(sc, field.name) == pytest.approx(v), (field.name, v, warnings)
        sc, warnings = from_query_params({field.name: _text(v)})
        assert warnings == [] and getattr(sc, field.name) == pytest.approx(v), (field.name, v, warnings)
        if holder is not None:
            holder(**{field.name: v})
    for v in bad:
        for parse in (lambda: from_toml(f"{field.name} = {_text(v)}\n"),
                      lambda: from_query_params({field.name: _text(v)})):
            sc, warnings = parse()
            assert len(warnings) == 1 and field.range_text() in warnings[0], (field.name, v, warnings)
            assert "using the default" in warnings[0]  # the dashboard says so on the page (scenario_sidebar)
        if holder is not None:
            with pytest.raises(InvalidInputError, match=rf"{field.name}=.* is outside"):
                holder(**{field.name: v})


@pytest.mark.parametrize("field", [f for f in NUMERIC if f.group == "custom"], ids=lambda f: f.name)
def test_a_custom_accelerator_field_has_the_catalog_columns_range(field):
    from econ.tables.catalog import ACCELERATOR_SCHEMA
    from econ.tables.rules import PLAUSIBLE

    col = ACCELERATOR_SCHEMA[field.column]
    if col.lo is not None:  # the schema holds the range
        assert (col.lo, col.hi, not col.lo_inclusive) == (field.lo, field.hi, field.lo_open)
    else:  # or leaves it to the plausibility rule (one message per cell): a shipped row and a typed chip obey the same
        rules = PLAUSIBLE["accelerators"]
        rng = rules.get(field.column) or next(r for k, r in rules.items()
                                              if k.startswith("_") and field.column.endswith(k))
        assert (rng.lo, rng.hi) == (field.lo, field.hi)
    name = field.name.removeprefix("custom_")
    ok, bad = _values(field)
    for v in ok:
        CustomAccelerator(**{name: v})
    for v in bad:
        from econ.tables.custom import check
        with pytest.raises(InvalidInputError, match=rf"{name}=.* is outside"):
            check(CustomAccelerator(**{name: v}))


@pytest.mark.parametrize("field", [f for f in NUMERIC if f.scenario], ids=lambda f: f.name)
def test_the_dashboard_widget_takes_the_fields_range(field):
    sys.path.insert(0, str(ROOT))
    from dashboards.components.fields import _bounds

    lo, hi = _bounds(SPECS[field.name], field.kind == "int", 1.0)
    assert hi == field.hi and (lo > field.lo if field.lo_open else lo == field.lo)


# ------------------------------------------------------------------------------------------------
# Every CLI command with the flag: the same range, the same message
# ------------------------------------------------------------------------------------------------

COMMANDS = {
    ("cost",): ["--model", "llama-3.1-8b", "--hardware", "h100-sxm"],
    ("optimize",): ["--model", "llama-3.1-8b", "--hardware", "h100-sxm"],
    ("frontier",): ["--model", "llama-3.1-8b", "--hardware", "h100-sxm"],
    ("compare",): ["llama-3.1-8b:h100-sxm:fp8", "llama-3.1-8b:b200:fp8"],
    ("cluster",): ["--hardware", "h100-sxm", "--gpus", "8"],
    ("quotes", "check"): ["--model", "llama-3.1-8b", "--input-price", "0.1", "--output-price", "0.2"],
    ("fleet", "power"): ["--hardware", "h100-sxm", "--gpus", "8"],
    ("fleet", "scale"): ["--hardware", "h100-sxm", "--gpus", "8"],
    ("fleet", "size"): ["--hardware", "h100-sxm", "--power-mw", "1"],
    ("fleet", "capex"): ["--hardware", "h100-sxm", "--gpus", "8"],
}


CLUSTER_SIZE = {("cluster",), ("fleet", "power"), ("fleet", "scale"), ("fleet", "size"), ("fleet", "capex")}
"""Commands whose --gpus is the cluster's size (field cluster_gpus, a list), not the GPUs of one replica."""


def _flag_cases():
    from econ.cli import build_parser

    cases = []
    for words in COMMANDS:
        flags = build_parser(list(words))._subparser_for(list(words)).option_strings()
        for f in NUMERIC:
            if f.flag_name and f.flag_name in flags and not (f.flag_name == "--gpus" and words in CLUSTER_SIZE):
                cases.append(pytest.param(words, f, id=f"{' '.join(words)} {f.flag_name}"))
        if "--gpus" in flags and words in CLUSTER_SIZE and words != ("fleet", "size"):
            cases.append(pytest.param(words, V.FIELDS["cluster_gpus"], id=f"{' '.join(words)} --gpus"))
    return cases


@pytest.mark.parametrize("words, field", _flag_cases())
def test_every_command_refuses_the_same_values_with_the_same_message(capsys, words, field):
    from econ.cli import main

    _, bad = _values(field)
    flag = field.flag_name or "--gpus"  # cluster_gpus is typed as --gpus by the fleet commands
    base = list(COMMANDS[words])
    if flag == "--gpus" and "--gpus" in base:  # the flag under test replaces the command's own --gpus 8
        i = base.index("--gpus")
        del base[i:i + 2]
    for v in bad:
        code = main([*words, *base, f"{flag}={_text(v)}", "--format", "json"])  # = : a negative value is not a flag
        err = capsys.readouterr().err
        assert code == 2, (flag, v, err)
        typed = float(_text(v)) if field.kind == "float" else v
        assert f"{flag}={V.show(typed)} is outside {field.range_text(tokens=False)}" in err, err


def test_every_economics_flag_is_on_every_pricing_command():
    """The economics flags come from one group (econ.commands._common.add_economics_options)."""
    cases = {(w, f.name) for p in _flag_cases() for w, f in [p.values]}
    for words in (("cost",), ("optimize",), ("frontier",), ("compare",), ("quotes", "check")):
        for name in ("usd_per_kwh", "pue", "utilization_frac", "cost_of_capital_frac", "accelerator_life_years"):
            assert (words, name) in cases, (words, name)


def test_the_top_of_a_range_is_accepted_by_a_command():
    """The accepted end of the range runs (the refusals above are not of everything)."""
    from econ.cli import main

    for flag, value in (("--pue", "3"), ("--utilization", "1"), ("--cost-of-capital", "0"), ("--life-years", "50")):
        assert main(["cost", *COMMANDS[("cost",)], "--gpus", "1", "--batch", "1", flag, value,
                     "--format", "json"]) == 0, flag
