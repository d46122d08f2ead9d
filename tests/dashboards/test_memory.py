"""Result caches bounded in entries and in bytes across every page (issue 21, part 7: ~7 MB of server memory per
distinct scenario, no plateau). ``benchmarks/load_sessions.py`` measures the plateau over 500 sessions; here the
bounds themselves: per function in entries, per process in bytes (least recently used first, whatever page made
the entry), expiry, copies on a hit, and every page cache routed through them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dashboards.components import memory

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def small(monkeypatch):
    memory.clear()
    monkeypatch.setattr(memory, "MAX_CACHE_BYTES", 1_000_000)
    monkeypatch.setattr(memory, "MAX_ENTRY_BYTES", 400_000)
    yield
    memory.clear()


def test_entries_per_function_are_bounded(small):
    calls = []

    @memory.cached(max_entries=3, ttl=60)
    def f(x):
        calls.append(x)
        return [x]
    for x in range(10):
        f(x)
    assert memory.cache_entries() == 3
    f(9)
    assert calls.count(9) == 1  # the newest are kept
    f(0)
    assert calls.count(0) == 2  # the oldest went


def test_bytes_across_every_function_are_bounded(small):
    @memory.cached(max_entries=100, ttl=60)
    def a(x):
        return b"a" * 150_000

    @memory.cached(max_entries=100, ttl=60)
    def b(x):
        return b"b" * 150_000
    for x in range(20):
        a(x)
        b(x)
        assert memory.cache_bytes() <= 1_000_000
    assert 0 < memory.cache_entries() <= 6


def test_a_result_larger_than_an_entry_is_returned_not_kept(small):
    @memory.cached(max_entries=10, ttl=60)
    def big(x):
        return b"x" * 500_000
    assert len(big(1)) == 500_000 and memory.cache_entries() == 0


def test_underscore_arguments_are_not_part_of_the_key_and_hits_are_copies(small):
    calls = []

    @memory.cached(max_entries=10, ttl=60)
    def f(token, _catalog=None):
        calls.append(token)
        return {"rows": [1, 2]}
    first = f("t", _catalog=object())
    first["rows"].append(3)  # a caller mutating its result does not change the cache
    assert f("t", _catalog=object()) == {"rows": [1, 2]} and calls == ["t"]


def test_entries_expire(small, monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(memory.time, "monotonic", lambda: now[0])
    calls = []

    @memory.cached(max_entries=10, ttl=5)
    def f(x):
        calls.append(x)
        return x
    f(1)
    now[0] += 6
    f(1)
    assert calls == [1, 1]


def test_every_page_cache_goes_through_the_byte_bound():
    """No page keeps results in st.cache_data (entries only); module-level memos are bounded (chart specs in bytes)."""
    for path in sorted((ROOT / "dashboards").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("st.cache_data", "streamlit.cache_data"):
                pytest.fail(f"{path.name}:{node.lineno} st.cache_data is bounded in entries only: use memory.cached")
    from dashboards.components import chart
    assert chart.MAX_SPEC_BYTES <= 64 * 2**20 and chart.MAX_SPECS <= 256


def test_memo_keys_on_the_given_key_and_the_files_it_reads(small, tmp_path):
    """Issue 19.5: ``memory.memo`` caches a call a page does not own (a table reader) in the same bounded store, keyed
    on what the caller says the result depends on plus the stamps of the files it reads."""
    calls = []
    f = tmp_path / "quotes.csv"
    f.write_text("a\n1\n")

    def read(path):
        calls.append(path)
        return path.read_text()
    assert memory.memo(read, f, key="k", files=[f]) == "a\n1\n"
    assert memory.memo(read, f, key="k", files=[f]) == "a\n1\n"
    assert len(calls) == 1  # a rerun reads nothing
    f.write_text("a\n1\n2\n")  # an edited file (new size) is read again
    assert memory.memo(read, f, key="k", files=[f]) == "a\n1\n2\n" and len(calls) == 2
    memory.memo(read, f, key="other", files=[f])
    assert len(calls) == 3  # another key, another entry
    memory.memo(read, f, key=None)
    memory.memo(read, f, key=None)
    assert len(calls) == 5  # no key: never cached
    assert memory.cache_entries() == 3  # the old file's entry ages out (LRU, ttl)


def test_digest_and_nan_cells_key_by_content(small):
    """A NaN is not equal to itself: ``functools.lru_cache`` on rows holding one never hit (the Cluster page's text
    tables were formatted again on every rerun); pickled keys do."""
    import polars as pl
    calls = []

    @memory.cached(max_entries=4, ttl=60)
    def cells(rows):
        calls.append(rows)
        return len(rows)
    cells(((1.0, float("nan")),))
    cells(((1.0, float("nan")),))
    assert len(calls) == 1
    a = pl.DataFrame({"x": [1.0, None, float("nan")]})
    assert memory.digest(a) == memory.digest(a.clone()) != memory.digest(a.with_columns(pl.col("x") * 2))


def test_sources_kept_catalog_rows_equal_fresh_ones_and_follow_the_economics():
    """Issue 19.5: sources.show keeps the catalog rows used and their markdown list (economics-free) in the bounded
    store; what it draws and returns equals a fresh computation, and a PUE change still changes the assumptions it
    returns (the economics are never kept with the rows)."""
    from polars.testing import assert_frame_equal
    from streamlit.testing.v1 import AppTest

    from dashboards.components import sources
    from econ.tables.catalog import load_catalog

    def script():
        from dataclasses import replace

        import streamlit as st

        from dashboards.components import sources, state

        cat, sc = state.catalog(), state.scenario()
        st.session_state["out"] = [
            sources.show(cat, sc.assumptions(), replace(sc.economics(cat), pue=p), key=f"s{i}", model=sc.model,
                         hardware=["h100-sxm", "b200"], region=sc.region) for i, p in enumerate((1.2, 1.2, 1.45))]
        st.session_state["sc"] = sc

    memory.clear()
    at = AppTest.from_function(script, default_timeout=60)
    at.run()
    assert not at.exception
    out, sc = at.session_state["out"], at.session_state["sc"]
    cat = load_catalog()
    from dataclasses import replace

    for frame, pue in zip(out, (1.2, 1.2, 1.45)):
        want = sources.export_frame(cat, sc.assumptions(), replace(sc.economics(cat), pue=pue), model=sc.model,
                                    hardware=["h100-sxm", "b200"], region=sc.region)
        assert_frame_equal(frame, want, check_exact=True)
    assert not out[2].equals(out[0])
    listed = sources.rows_used(cat, model=sc.model, hardware=["h100-sxm", "b200"], region=sc.region)[1]
    assert "H100" in listed and sum(m.value == listed for m in at.markdown) == 3
    assert memory.cache_entries() >= 1
