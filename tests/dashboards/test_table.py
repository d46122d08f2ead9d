"""dashboards.components.table: the prefix-tree alternation that names catalog ids in text (issue 19.5)."""

from __future__ import annotations

import random
import re

import pytest

pytest.importorskip("streamlit")

from dashboards.components import table  # noqa: E402
from econ.tables.catalog import load_catalog  # noqa: E402


def _listed(ids) -> str:
    """The alternation the prefix tree replaces: every id, longest first."""
    return "|".join(sorted(map(re.escape, ids), key=len, reverse=True))


def test_id_alternation_matches_as_the_longest_first_list():
    """The prefix tree matches exactly what the longest-first list of ids matches, under the lookarounds of both
    patterns that use it (table.id_pattern, the Quote checker's name_ids): on the catalog's accelerator, system and
    model ids inside texts built to break it (an id inside a longer id, a path, a file name, an id followed by a dot,
    ids that are prefixes of others) and on random texts made of ids, their pieces and separators."""
    cat = load_catalog()
    ids = [*cat.accelerators["id"].to_list(), *cat.models["id"].to_list(), "h20", "h200", "h200-sxm", "b2", "b200-x"]
    ids = list(dict.fromkeys(ids))
    names = {i: f"<{i.upper()}>" for i in ids}
    wrappers = [(r"(?<![\w./-])(", r")(?![\w-]|\.\w)"), (r"(?<![\w.-])(", r")(?![\w-])")]
    rng = random.Random(19)
    pieces = ids + [i[: len(i) // 2] for i in ids] + [" ", ".", "-", "/", ",", "(", ")", ".csv", "x", "0", ": ", "\n"]
    texts = ["b200", "gb200-nvl72.", "xb200", "b200-x", "b200.csv", "-b200", ".b200", "(b200)", "b2000",
             "h20 h200-sxm h200-sxmx h200-nvl h20-x h20. h200.", "data/h100-sxm.csv", "h100-sxm-h100-pcie", "",
             "llama-3.1-8b on h100-sxm, then llama-3.1-8b."]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    for pre, post in wrappers:
        tree = re.compile(pre + table.id_alternation(ids) + post)
        listed = re.compile(pre + _listed(ids) + post)
        for t in texts:
            assert tree.sub(lambda m: names[m.group(1)], t) == listed.sub(lambda m: names[m.group(1)], t), t
    assert table.id_pattern(names).sub(lambda m: names[m.group(1)], "gb200-nvl72 and b200.csv, b200.") == \
        "<GB200-NVL72> and b200.csv, <B200>."
    assert re.search(table.id_alternation([]), "anything") is None  # no ids: matches nothing


def _with_names_before(frame, catalog):
    """table.with_names as it was before issue 19.5's rerun work (map_elements over the columns with an id), the
    reference the list-based one must equal."""
    import polars as pl

    text = [c for c in frame.columns if frame.schema[c] == pl.Utf8 and c not in table.KEEP_TEXT]
    if not text or frame.height == 0:
        return frame
    names = table.catalog_names(catalog)
    pattern = re.compile(rf"(?<![\w./-])({_listed(names)})(?![\w-]|\.\w)")

    def rename(value):
        return pattern.sub(lambda m: names[m.group(1)], value) if value else value

    exprs = []
    for c in text:
        if c in table.NAME_COLUMNS:
            exprs.append(pl.col(c).replace(names))
        elif any(v and pattern.search(v) for v in frame[c].unique().to_list()):
            exprs.append(pl.col(c).map_elements(rename, return_dtype=pl.String, skip_nulls=True))
    return frame.with_columns(exprs) if exprs else frame


def test_with_names_equals_the_map_elements_version():
    """Issue 19.5: table.with_names names ids in text cells through a list (each distinct text once) instead of
    map_elements: the very frame the earlier version gives, on Hardware comparison's tables (winners with rank and
    profile notes naming accelerators, the frontier) and on a frame with nulls, empty texts, repeated texts, ids
    inside paths and a column with no id."""
    import polars as pl
    from polars.testing import assert_frame_equal

    from econ.analyses.compare import hardware_comparison

    cat = load_catalog()
    r = hardware_comparison(cat, model="llama-3.3-70b")
    made = pl.DataFrame({"hardware": ["b200", None, "h100-sxm", "b200"],
                         "rank_note": ["not distinguishable from b200, gb200-nvl72", None, "", "see data/b200.csv"],
                         "other": ["x", "y", None, "x"], "source": ["b200", "b200", "b200", "b200"],
                         "n": [1, 2, 3, 4]})
    for frame in (r.best, r.frontier, made, made.head(0)):
        assert_frame_equal(table.with_names(frame, cat), _with_names_before(frame, cat), check_exact=True)
    assert "<" not in table.with_names(r.best, cat)["rank_note"].str.join("").item()
    assert table.with_names(made, cat)["rank_note"].to_list()[0] != made["rank_note"].to_list()[0]  # named


def test_spec_bytes_is_near_the_json_size():
    """chart.spec_bytes (the bound of the specs kept, without encoding every record) is within 30% of the JSON size
    of the Quote checker's band chart and of a small spec, exactly that size when the data are short or absent."""
    import json

    import polars as pl

    import dashboards.pages.quote_checker as qc
    from dashboards.components import chart
    from econ.analyses.quotes import check_quotes
    from econ.tables.quote_files import load_quotes

    cat = load_catalog()
    r = check_quotes(load_quotes(cat), cat)
    spec = qc.quote_band_spec(qc.with_names(r.summary.with_columns(pl.lit("catalog").alias("quote_set")), cat),
                              qc.with_names(r.per_hardware, cat))
    full = len(json.dumps(spec, default=str))
    assert full > 100_000 and abs(chart.spec_bytes(spec) - full) < 0.3 * full
    small = {"mark": "bar", "datasets": {"d": [{"a": 1}, {"a": 22}]}, "data": {"name": "d"}}
    assert chart.spec_bytes(small) == len(json.dumps({"mark": "bar", "data": {"name": "d"}})) + len(
        json.dumps(small["datasets"]["d"]))
    assert chart.spec_bytes({"mark": "bar"}) == len(json.dumps({"mark": "bar"}))


def test_quote_checker_names_each_text_as_its_own_row():
    """The Quote checker names each distinct reason and assumption once (with_names): the same column as naming
    every row's text on its own (name_ids), nulls kept."""
    import polars as pl

    import dashboards.pages.quote_checker as qc
    from econ.analyses.quotes import check_quotes
    from econ.tables.quote_files import load_quotes

    cat = load_catalog()
    s = check_quotes(load_quotes(cat), cat).summary
    s = pl.concat([s, s.head(3).with_columns(pl.lit(None, pl.String).alias("floor_assumes"))])
    short = qc._names(cat)[1]
    named = qc.with_names(s, cat)
    for c in qc.TEXT_COLUMNS:
        assert named[c].to_list() == [qc.name_ids(t, short) for t in s[c].to_list()]
    assert named["floor_assumes"].null_count() >= 3 and named["reason"].str.contains("gb200-nvl72").sum() == 0
