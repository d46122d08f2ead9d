"""Issue 19 part 2 on the Quote checker page: the sidebar's formats / speculative decoding reach its floors (checked
against econ called directly) and the page says what was used; every verdict of the chart is named in words (the
legend lost 'rich' and 'thin' at 390 px); tables, KPIs and text show display names, not raw ids."""

from __future__ import annotations

import re

import polars as pl
import pytest

pytest.importorskip("streamlit")

from tests.dashboards.test_dashboard import page, run, scenario  # noqa: E402
from dashboards.components.safe_text import unescape  # noqa: E402
from econ.tables.catalog import load_catalog  # noqa: E402


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def default_page():
    return run(page("quote_checker"))


def _frame(at, first_column: str):
    """The page's dataframe whose first column is ``first_column`` (pandas)."""
    for df in at.dataframe:
        if list(df.value.columns)[:1] == [first_column]:
            return df.value
    raise AssertionError(f"no table starting with {first_column}")


def _captions(at) -> str:
    return " ".join(unescape(c.value) for c in at.caption)


def test_every_verdict_of_the_chart_is_named_with_its_colour(default_page):
    from dashboards.pages.quote_checker import VERDICT_COLOUR_NAMES, VERDICT_LABELS

    verdicts = _frame(default_page, "quote_id")["verdict"].value_counts().to_dict()
    text = _captions(default_page)
    assert "Diamond colours:" in text
    for v, n in verdicts.items():  # rich and thin included: each marker explained at any width
        assert f"{VERDICT_COLOUR_NAMES[v]} = {VERDICT_LABELS[v]} ({n:,})" in text, v


def test_tables_and_text_show_display_names_not_ids(default_page, catalog):
    ids = {i for i, n in catalog.accelerators.select("id", "display_name").rows() if n != i}
    models = {i for i, n in catalog.models.select("id", "display_name").rows() if n != i}  # gpt-oss: name = id
    table = _frame(default_page, "quote_id")
    floor_hw = {h for h in table["floor_hardware"].dropna()}
    assert floor_hw and not floor_hw & ids, sorted(floor_hw & ids)
    assert not set(table["model"]) & models
    token = re.compile(r"(?<![\w.-])(" + "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
                       + r")(?![\w-])")
    for text in table["reason"].dropna():
        assert not token.search(text), token.search(text).group(0)
    detail = _frame(default_page, "hardware")
    assert not set(detail["hardware"]) & ids
    # the page's own text (the verdict line of the quote picked, the P&L's reason); the shared sources list is not
    reasons = [unescape(m.value) for m in default_page.markdown if "floor" in unescape(m.value)
               and not unescape(m.value).lstrip().startswith("- ")]
    assert reasons
    for text in reasons:
        assert not token.search(text), token.search(text).group(0)


def test_sidebar_kv_format_reaches_the_floors_and_is_said(catalog):
    from econ.analyses.quotes import check_quotes
    from econ.tables.quote_files import load_quotes

    at = run(page("quote_checker"))
    at.selectbox(key="sc.kv_precision").set_value("nvfp4")
    run(at)
    sc = scenario(at)
    assert sc.kv_precision == "nvfp4" and at.query_params["kv_precision"] == "nvfp4"
    table = _frame(at, "quote_id")
    direct = check_quotes(load_quotes(catalog), catalog, sc.assumptions(), sc.economics(catalog),
                          min_tokens_per_s_per_user=25.0, output_len=sc.output_len, decoding=sc.decoding()).summary
    want = dict(direct.select("quote_id", "floor_usd_per_m_blended_tokens").iter_rows())
    got = dict(zip(table["quote_id"], table["floor_usd_per_m_blended_tokens"]))
    assert got.keys() == want.keys()
    for q, v in want.items():
        assert (v is None and got[q] != got[q]) or got[q] == pytest.approx(v, rel=1e-9), q
    text = _captions(at)
    assert "KV cache nvfp4 (set)" in text
    assert any("kv_precision nvfp4" in unescape(e.label) for e in at.expander)


def test_a_percentile_slo_holds_the_quotes_speed_at_that_percentile(catalog):
    """Issue 19.1: the sidebar's SLO percentile reaches the quote check (econ quotes check --slo-percentile): the
    page's floors are check_quotes' at that percentile, said in a caption."""
    from econ.analyses.quotes import check_quotes
    from econ.tables.quote_files import load_quotes

    at = run(page("quote_checker", slo_percentile="99"))
    assert "Speeds held at p99 TPOT (sidebar)" in _captions(at)
    sc = scenario(at)
    assert sc.slo_percentile == 99.0
    direct = check_quotes(load_quotes(catalog), catalog, sc.assumptions(), sc.economics(catalog),
                          min_tokens_per_s_per_user=25.0, output_len=sc.output_len, decoding=sc.decoding(),
                          slo_percentile=99.0).summary
    want = dict(direct.select("quote_id", "floor_usd_per_m_blended_tokens").iter_rows())
    got = dict(zip(_frame(at, "quote_id")["quote_id"], _frame(at, "quote_id")["floor_usd_per_m_blended_tokens"]))
    for q, v in want.items():
        assert (v is None and got[q] != got[q]) or got[q] == pytest.approx(v, rel=1e-9), q


def test_the_provider_pnl_floor_runs_on_request_and_names_accelerators(catalog):
    """Issue 19.5: the P&L's modeled floor is a search of its own, run when "Compute the P&L" is pressed (as "Check
    one price" is); before that the provider's own figures are shown. Pressed, the floor's KPIs and its reason (with
    display names, no ids) appear, and they stay on later reruns."""
    at = page("quote_checker")
    at.session_state["qc.section"] = "Provider P&L"  # the P&L's tab (the page runs only its open tab)
    run(at)
    labels = [m.label for m in at.metric]
    assert "Provider's gross margin" in labels and "Floor's gross margin" not in labels
    assert "Compute the P&L" in _captions(at)
    next(b for b in at.button if b.label == "Compute the P&L").click()
    run(at)
    labels = [m.label for m in at.metric]
    assert "Floor's gross margin" in labels and "Floor's cost per M tokens" in labels
    ids = {i for i, n in catalog.accelerators.select("id", "display_name").rows() if n != i}
    token = re.compile(r"(?<![\w.-])(" + "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
                       + r")(?![\w-])")
    why = [unescape(m.value) for e in at.expander if e.label.startswith("Why (the floor") for m in e.markdown]
    assert why and "floor" in why[0] and not token.search(why[0])
    at.number_input(key="sc.pue").set_value(1.31)
    run(at)
    assert "Floor's gross margin" in [m.label for m in at.metric]  # asked once: kept on later reruns


def test_band_chart_spec_built_fast_equals_altairs():
    """Issue 19.5: quote_band_spec (the chart's structure kept per quotes order / verdicts / width, the data filled in)
    is the very dict Altair's to_dict gives for quote_band_chart: on the catalog's quotes, on a filtered view (another
    order and other verdicts) and after a PUE change (the kept structure, new floors); and from the tick rows alone
    (the accelerators meeting the floor in scope, named on their own as the page does)."""
    from dataclasses import replace

    import polars as pl

    from dashboards.pages.quote_checker import quote_band_chart, quote_band_spec, with_names
    from econ.analyses.quotes import check_quotes
    from econ.assumptions import Economics
    from econ.tables.quote_files import load_quotes

    cat = load_catalog()
    q = load_quotes(cat)
    for e in (Economics(), replace(Economics(), pue=1.377), replace(Economics(), basis="neocloud")):
        r = check_quotes(q, cat, economics=e)
        s = with_names(r.summary.with_columns(pl.lit("catalog").alias("quote_set")), cat)
        hw = with_names(r.per_hardware, cat)
        for view in (s, s.filter(pl.col("verdict").is_in(["rich", "thin"])), s.head(7)):
            view_hw = hw.filter(pl.col("quote_id").is_in(view["quote_id"].implode()))
            want = quote_band_chart(view, view_hw).to_dict(validate=False)
            assert quote_band_spec(view, view_hw) == want
            # the page names and passes only the rows the chart draws (ticks): the same spec
            ticks = r.per_hardware.filter(pl.col("quote_id").is_in(view["quote_id"].implode())
                                          & pl.col("meets_floor") & pl.col("in_scope"))
            assert quote_band_spec(view, with_names(ticks, cat)) == want
            assert quote_band_spec(view, view_hw, width=400) == quote_band_chart(view, view_hw, width=400).to_dict(
                validate=False)


def test_band_chart_structure_is_kept_across_reruns(monkeypatch):
    """The structure is kept in the process's store (dashboards.components.memory), not in the page module (run again
    on every rerun): a second spec of the same quotes builds no Altair chart."""
    import functools

    import polars as pl

    import dashboards.pages.quote_checker as qc
    from dashboards.components import memory
    from econ.analyses.quotes import check_quotes
    from econ.tables.quote_files import load_quotes

    cat = load_catalog()
    r = check_quotes(load_quotes(cat), cat)
    s = qc.with_names(r.summary.with_columns(pl.lit("catalog").alias("quote_set")), cat)
    hw = qc.with_names(r.per_hardware, cat)
    built = []
    real = qc._band_template

    @functools.wraps(real)
    def counted(*a):
        built.append(a[:3])
        return real(*a)

    monkeypatch.setattr(qc, "_band_template", counted)
    memory.clear()
    first = qc.quote_band_spec(s, hw)
    again = qc.quote_band_spec(s, hw)
    assert first == again and len(built) == 1


def test_table_from_the_charts_names_equals_the_table_named_on_its_own(catalog):
    """Issue 19.5: the page names the ids of the quotes shown once (with_names, for the chart) and scales that frame
    for the table: the same frame, exactly, as naming and scaling the table's columns on their own (_display)."""
    from polars.testing import assert_frame_equal

    from dashboards.pages.quote_checker import TABLE_COLUMNS, _display, _scaled, with_names
    from econ.analyses.quotes import check_quotes
    from econ.tables.quote_files import load_quotes

    view = check_quotes(load_quotes(catalog), catalog).summary.with_columns(quote_set=pl.lit("catalog"))
    want = _display(view.select(TABLE_COLUMNS), catalog)
    assert_frame_equal(_scaled(with_names(view, catalog).select(TABLE_COLUMNS)), want, check_exact=True)
    assert not want.equals(view.select(TABLE_COLUMNS))  # names and scales changed something


def test_tabs_run_only_when_open_and_keep_what_the_user_set():
    """Issue 19.5: the page's three parts are lazy tabs (a rerun of the quote table does not draw the forms' widgets);
    a filter of the quote table, a submitted price and a P&L input come back when their tab opens again."""
    at = run(page("quote_checker"))
    keys = {w.key for w in at.number_input} | {w.key for w in at.selectbox}
    assert "qc.pick" in keys and not any(k.startswith(("qc.s.", "qc.p.")) for k in keys)  # the first tab only
    at.multiselect(key="qc.verdicts").set_value(["thin"])
    run(at)
    at.session_state["qc.section"] = "Check one price"
    run(at)
    assert "qc.pick" not in {w.key for w in at.selectbox}  # the quote table's tab is not run
    at.number_input(key="qc.s.in").set_value(0.91)
    next(b for b in at.button if b.label == "Check this price").click()
    run(at)
    at.session_state["qc.section"] = "Provider P&L"
    run(at)
    at.number_input(key="qc.p.gpus").set_value(123.0)
    next(b for b in at.button if b.label == "Compute the P&L").click()
    run(at)
    at.session_state["qc.section"] = "Every quote"
    run(at)
    assert at.multiselect(key="qc.verdicts").value == ["thin"]
    at.session_state["qc.section"] = "Check one price"
    run(at)
    assert at.number_input(key="qc.s.in").value == pytest.approx(0.91)
    assert "Verdict" in [m.label for m in at.metric]  # the last checked price is still shown
    at.session_state["qc.section"] = "Provider P&L"
    run(at)
    assert at.number_input(key="qc.p.gpus").value == pytest.approx(123.0)
