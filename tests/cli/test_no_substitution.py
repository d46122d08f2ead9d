"""No silent substitution (issue 21, part 1): an input that cannot be used is an error, or a fallback said everywhere.

- A custom accelerator in a scenario with a field outside its range (0, -1, NaN, inf, 1e30, text), a value the
  catalog's rules refuse (all-in power 1 W, capex $1) or a typo in the hardware id was priced with the default chip's
  value or the H100 (87 of 108 cases through cost, optimize, cluster, compare and export): now exit 2 naming the field,
  the value and the range, on every command that reads a scenario.
- One range per field: each custom field's range is the plausible range the catalog's rules state for its column.
- Where a command falls back on purpose (an accelerator of a list skipped, the sweet spot shown instead of an
  unreachable speed, a cluster plan's limits) the answer carries a ``warnings`` field in JSON, CSV and the table.
- The dashboard computes nothing with a substituted accelerator (a stale link's custom chip or hardware id): the page
  says why until the user continues with the values shown; a stale link's other fallbacks stay on the page and in the
  downloads (a ``warnings`` column).
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import polars as pl
import pytest

from econ.cli import main
from econ.tables.rules import PLAUSIBLE
from econ.vocabulary import custom_column_ranges

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

CASES = [  # (TOML lines, pattern of the message)
    ("custom_hbm_gib = 0", r"custom_hbm_gib=0 is outside \[1, 10000\] \(GiB\)"),
    ("custom_hbm_gib = -1", r"custom_hbm_gib=-1 is outside \[1, 10000\] \(GiB\)"),
    ("custom_hbm_gib = nan", r"custom_hbm_gib=nan is outside"),
    ("custom_hbm_gib = inf", r"custom_hbm_gib=inf is outside"),
    ("custom_hbm_gib = 1e30", r"custom_hbm_gib=1e\+30 is outside"),
    ('custom_hbm_gib = "lots"', r"custom_hbm_gib='lots' is not a number"),
    ("custom_power_w = 1", r"custom_power_w=1 is outside \[10, 100000\] \(W\)"),
    ("custom_capex_usd = 1", r"custom_capex_usd=1 is outside \[100, 10000000\] \(USD\)"),
    ("custom_hbm_tb_per_s = 1e-300", r"custom_hbm_tb_per_s=1e-300 is outside \[0.01, 100\] \(TB/s\)"),
]
COMMANDS = [["cost"], ["optimize", "--max-gpus", "2"], ["frontier", "--max-gpus", "2"], ["cluster"],
            ["compare"], ["export", "cost", "--output", "out.csv"], ["fleet", "size", "--power-mw", "10", "--hardware", "custom-accelerator"],
            ["quotes", "check", "--model", "llama-3.1-8b", "--input-price", "1", "--output-price", "2"]]


def _scenario(tmp_path, body: str, hardware: str = "custom-accelerator") -> Path:
    p = tmp_path / "s.toml"
    p.write_text(f'[scenario]\nmodel = "llama-3.1-8b"\ncustom_accelerator = true\nhardware = "{hardware}"\n'
                 f'h2h_a_hardware = "{hardware}"\n{body}\n')
    return p


@pytest.mark.parametrize("words", COMMANDS, ids=lambda w: " ".join(w[:2]))
@pytest.mark.parametrize("body, pattern", CASES, ids=[c[0] for c in CASES])
def test_a_custom_accelerator_that_cannot_be_used_is_refused_everywhere(tmp_path, monkeypatch, capsys, words, body,
                                                                        pattern):
    import re
    monkeypatch.chdir(tmp_path)
    code = main([*words, "--scenario", str(_scenario(tmp_path, body)), "--format", "json"]
                if words[0] != "export" else [*words, "--scenario", str(_scenario(tmp_path, body))])
    cap = capsys.readouterr()
    assert code == 2, (words, cap.out[:300])
    assert re.search(pattern, cap.err), cap.err
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("words", COMMANDS, ids=lambda w: " ".join(w[:2]))
def test_a_typo_in_the_hardware_id_is_refused_never_the_h100(tmp_path, monkeypatch, capsys, words):
    monkeypatch.chdir(tmp_path)
    sc = _scenario(tmp_path, "", hardware="h100-sx")
    code = main([*words, "--scenario", str(sc)] + ([] if words[0] == "export" else ["--format", "json"]))
    err = capsys.readouterr().err
    assert code == 2 and "unknown hardware id 'h100-sx'; closest: h100-sxm" in err, err


def test_each_custom_field_has_the_range_its_catalog_column_is_held_to():
    """One range per field: the vocabulary's range of a custom field is the plausible range of its column."""
    for column, f in custom_column_ranges().items():
        keys = [k for k in PLAUSIBLE["accelerators"] if (column.endswith(k) if k.startswith("_") else column == k)]
        if not keys:  # scale_up_domain_size: the schema's range is the field's
            continue
        rng = PLAUSIBLE["accelerators"][keys[0]]
        assert (f.lo, f.hi, f.lo_open) == (rng.lo, rng.hi, False), (f.name, column)


def test_a_value_the_catalog_rules_refuse_is_refused_by_the_field(capsys):
    from econ.tables.catalog import load_catalog
    from econ.tables.custom import CustomAccelerator, with_custom_accelerator
    from econ.errors import InvalidInputError
    with pytest.raises(InvalidInputError, match=r"power_w=1 is outside \[10, 100000\] \(W\)"):
        with_custom_accelerator(load_catalog(), CustomAccelerator(power_w=1.0))


# ----------------------------------------------------------------------------------------- warnings in every format

def _run(capsys, *argv):
    code = main(list(argv))
    cap = capsys.readouterr()
    assert code == 0, cap.err
    return cap.out


def test_a_skipped_accelerator_is_a_warning_in_every_format(capsys):
    argv = ["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm,b200", "--precision", "fp4"]
    row = json.loads(_run(capsys, *argv, "--format", "json"))
    assert "h100-sxm skipped" in row["warnings"]
    frame = pl.read_csv(io.StringIO(_run(capsys, *argv, "--format", "csv")))
    assert "h100-sxm skipped" in frame["warnings"][0]
    assert "h100-sxm skipped" in _run(capsys, *argv)


def test_the_sweet_spot_shown_instead_of_an_unreachable_speed_is_a_warning(capsys):
    argv = ["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--min-tokens-per-s-per-user", "5000"]
    assert "showing the sweet spot" in json.loads(_run(capsys, *argv, "--format", "json"))["warnings"]
    assert "showing the sweet spot" in _run(capsys, *argv, "--format", "csv")


def test_a_cluster_plans_limits_are_warnings_in_json_and_csv(capsys):
    argv = ["cluster", "--hardware", "gb200-nvl72", "--power-mw", "1000"]
    assert "liquid cooling required" in json.loads(_run(capsys, *argv, "--format", "json"))["warnings"]
    assert "liquid cooling required" in _run(capsys, *argv, "--format", "csv")
    assert "liquid cooling required" in _run(capsys, *argv)


# ----------------------------------------------------------------------------------------- the dashboard

def _page(name="cost_explorer.py", **query):
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "dashboards" / "pages" / name), default_timeout=180)
    at.query_params.update(query)
    return at


@pytest.mark.parametrize("query, words", [
    (dict(custom_accelerator="true", hardware="custom-accelerator", custom_power_w="1"),
     "custom_power_w=1 is outside [10, 100000] (W)"),
    (dict(custom_accelerator="true", hardware="custom-accelerator", custom_hbm_gib="0"),
     "custom_hbm_gib=0 is outside [1, 10000] (GiB)"),
    (dict(hardware="h100-sx"), "unknown hardware id 'h100-sx'"),
])
def test_the_page_computes_nothing_with_a_substituted_accelerator(query, words):
    from dashboards.components.safe_text import unescape
    at = _page(**query)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    errors = " ".join(unescape(e.value) for e in at.error)
    assert "This view is not computed" in errors and words in errors, errors
    assert not at.metric and not at.dataframe  # nothing priced
    at.button(key="scenario.release").click().run()  # the user continues with the values the sidebar shows
    assert not at.exception and at.metric
    assert "This view is not computed" not in " ".join(e.value for e in at.error)


def test_a_stale_links_fallback_stays_on_the_page_and_in_the_downloads():
    from dashboards.components.safe_text import unescape
    at = _page(pue="9")
    at.run()
    assert not at.exception and at.metric  # a fallback that keeps the accelerator: computed, and said
    said = " ".join(unescape(w.value) for w in at.warning)
    assert "pue=9 is outside [1, 3]" in said
    at.run()  # a rerun (any widget) keeps saying it while the view is the linked one
    assert "pue=9 is outside [1, 3]" in " ".join(unescape(w.value) for w in at.warning)

    from streamlit.testing.v1 import AppTest

    def script():
        import polars as pl
        import streamlit as st
        from dashboards.components import table
        st.session_state["_econ_warnings"] = ["pue=9 is outside [1, 3]; using the default '1.4'"]
        frame, meta = table.with_view_warnings(pl.DataFrame({"x": [1]}), {"scenario": "pue=9"})
        st.text(table.csv_bytes(frame).decode())
        st.text(repr(meta))
    app = AppTest.from_function(script, default_timeout=60)
    app.run()
    texts = [t.value for t in app.text]
    assert "warnings" in texts[0] and "pue=9 is outside" in texts[0]
    assert "'warnings': \"pue=9 is outside" in texts[1]
