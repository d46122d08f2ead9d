"""Issue 19: the quote check's formats and speculative decoding (:class:`econ.assumptions.Decoding`) reach its floor
search and the quote's sensitivity keeps them (its point equals the check's margin)."""

from __future__ import annotations

import polars as pl
import pytest

from econ.analyses.quotes import check_quotes
from econ.analyses.sensitivity import quote_sensitivity
from econ.assumptions import Decoding
from econ.tables.catalog import load_catalog
from econ.tables.quote_files import load_quotes


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def quotes(catalog):
    return load_quotes(catalog)


@pytest.mark.parametrize("quote_id, decoding", [
    ("deepinfra-llama-3.1-8b-turbo", Decoding(kv_precision="nvfp4")),
    ("deepseek-deepseek-v3", Decoding(spec_method="none")),
    ("deepseek-deepseek-v3", Decoding(spec_acceptance=0.5)),
], ids=["kv-nvfp4", "mtp-off", "mtp-acceptance"])
def test_sensitivity_point_is_the_checks_margin_under_the_decoding(catalog, quotes, quote_id, decoding):
    one = quotes.filter(pl.col("quote_id") == quote_id)
    auto = check_quotes(one, catalog).summary.row(0, named=True)
    given = check_quotes(one, catalog, decoding=decoding).summary.row(0, named=True)
    assert given["margin_blended_frac"] != pytest.approx(auto["margin_blended_frac"], rel=1e-6)  # the setting bites
    s = quote_sensitivity(catalog, quotes, quote_id, decoding=decoding, samples=0)
    assert s.point == pytest.approx(given["margin_blended_frac"], rel=1e-6)


def test_mtp_off_floor_is_plain_decoding(catalog, quotes):
    one = quotes.filter(pl.col("quote_id") == "deepseek-deepseek-v3")
    r = check_quotes(one, catalog, decoding=Decoding(spec_method="none")).summary.row(0, named=True)
    assert r["floor_spec_method"] in ("none", None) and "MTP" not in r["reason"]
    a = check_quotes(one, catalog).summary.row(0, named=True)
    assert a["floor_spec_method"] == "mtp"
    assert r["floor_usd_per_m_blended_tokens"] > a["floor_usd_per_m_blended_tokens"]  # MTP made it cheaper
