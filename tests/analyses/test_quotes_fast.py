"""The screened floor search of econ/analyses/quotes.py against the exhaustive reference (issue 10 follow-up: speed).

``check_quotes`` screens the whole grid with one decode-only engine pass and sends only the rows that can be an
answer through the whole engine (:func:`econ.analyses.quotes._screened_search`); ``EXHAUSTIVE_SEARCH = True`` evaluates
every grid point with the whole engine, as the checker did before. Both must give the same frames: text, integer
and boolean columns exactly, floats to 1e-9 relative (the engine evaluates the same rows in other blocks).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import econ.analyses.quotes as quotes
from econ.assumptions import Economics
from econ.tables.catalog import load_catalog
from econ.engine import evaluate
from econ.analyses.quotes import _batch_grid, check_quotes, single_quote
from econ.tables.quote_files import QUOTE_SCHEMA, load_quotes, validate_quotes


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _both(monkeypatch, fn):
    monkeypatch.setattr(quotes, "EXHAUSTIVE_SEARCH", True)
    ref = fn()
    monkeypatch.setattr(quotes, "EXHAUSTIVE_SEARCH", False)
    return ref, fn()


def _assert_same(ref: pl.DataFrame, got: pl.DataFrame, what: str) -> None:
    assert ref.schema == got.schema, what
    assert ref.height == got.height, what
    for c in ref.columns:
        a, b = ref[c], got[c]
        if a.dtype.is_float():
            assert (a.is_null() == b.is_null()).all(), f"{what}.{c}: nulls differ"
            np.testing.assert_allclose(b.drop_nulls().to_numpy(), a.drop_nulls().to_numpy(), rtol=1e-9, atol=0,
                                       err_msg=f"{what}.{c}")
        else:
            diff = a.ne_missing(b)
            assert not diff.any(), f"{what}.{c}: {a.filter(diff)[:3].to_list()} vs {b.filter(diff)[:3].to_list()}"


def _assert_checks_equal(ref, got) -> None:
    _assert_same(ref.summary, got.summary, "summary")
    _assert_same(ref.per_hardware, got.per_hardware, "per_hardware")
    assert ref.settings == got.settings


@pytest.mark.parametrize("kw", [
    {},  # econ quotes check: owned-custom tier, every generation
    {"economics": Economics(basis="hyperscaler"), "generation": ["hopper", "blackwell"]},
    {"economics": Economics(basis="on-demand", input_output_mix=10.0, cache_hit_frac=0.5, utilization_frac=0.5),
     "min_tokens_per_s_per_user": 50.0, "output_len": 256},
], ids=["default", "hyperscaler-hopper-blackwell", "on-demand-mix-speed50"])
def test_screened_search_equals_the_exhaustive_one_on_the_shipped_quotes(catalog, monkeypatch, kw):
    q = load_quotes(catalog)
    ref, got = _both(monkeypatch, lambda: check_quotes(q, catalog, **kw))
    _assert_checks_equal(ref, got)
    assert ref.summary["floor_usd_per_m_blended_tokens"].is_not_null().sum() > 50  # not a vacuous comparison


def test_screened_search_equals_the_exhaustive_one_on_typed_quotes(catalog, monkeypatch):
    """DeepSeek's day-6 setting (custom $2/GPU-hour, H800, MTP, wide EP, cache hits), pinned MXFP4 gpt-oss at a
    high speed, a speed no accelerator reaches, non-GPU hardware and a price below every floor."""
    typed = [
        dict(model="deepseek-v3", usd_per_m_input_tokens=0.55, usd_per_m_output_tokens=2.19,
             usd_per_m_cached_input_tokens=0.14, output_tokens_per_s_per_user=20.0, hardware="h800-sxm",
             weight_format="fp8", quote_id="day6"),
        dict(model="gpt-oss-120b", usd_per_m_input_tokens=0.1, usd_per_m_output_tokens=0.5,
             output_tokens_per_s_per_user=200.0, quote_id="oss"),
        dict(model="llama-3.1-405b", usd_per_m_input_tokens=3.0, usd_per_m_output_tokens=3.0,
             output_tokens_per_s_per_user=5000.0, quote_id="unreachable"),
        dict(model="llama-3.3-70b", usd_per_m_input_tokens=0.59, usd_per_m_output_tokens=0.79, hardware="groq-lpu",
             quote_id="groq"),
        dict(model="qwen3-235b-a22b", usd_per_m_input_tokens=0.01, usd_per_m_output_tokens=0.02, quote_id="below"),
    ]
    q = pl.concat([single_quote(catalog, **t) for t in typed], how="vertical")
    e = Economics(basis="custom", usd_per_gpu_hour=2.0, utilization_frac=1.0, input_output_mix=608 / 168,
                  cache_hit_frac=342 / 608)
    ref, got = _both(monkeypatch, lambda: check_quotes(q, catalog, economics=e))
    _assert_checks_equal(ref, got)
    verdicts = dict(got.summary.select("quote_id", "verdict").iter_rows())
    # physics decides comparability (issue 18.3): a GPU reaches the assumed 25 tokens/s of the Groq quote, none 5,000
    assert verdicts["groq"] != "not-gpu-comparable" and verdicts["unreachable"] == "not-gpu-comparable"
    assert verdicts["below"] == "below-floor"


def test_no_accelerator_with_a_rate_gives_the_same_empty_floors(catalog, monkeypatch):
    """A tier no accelerator of the search has a rate in: nothing feasible, every quote not-gpu-comparable."""
    no_rate = quotes.tier_rates(catalog, Economics(basis="rental")).filter(~pl.col("has_rate"))["hardware"].to_list()
    assert no_rate, "the catalog lists a rental rate for every accelerator: pick another tier for this test"
    q = load_quotes(catalog).head(5)
    ref, got = _both(monkeypatch, lambda: check_quotes(q, catalog, economics=Economics(basis="rental"),
                                                       hardware=no_rate[:2]))
    _assert_checks_equal(ref, got)
    assert set(got.summary["verdict"]) == {"not-gpu-comparable"}


def test_breakeven_batch_is_on_the_floor_deployments_own_weight_format(catalog):
    """The break-even batch reads the floor deployment's curve in its own weight format. A bf16 quote of a model
    that another quote serves in fp8 has fp8-weight rows on the same accelerator, precision and layout; they are
    cheaper per batch and must not set the bf16 quote's break-even batch (they did before: batch 16 instead of 23
    for aws-bedrock-llama-3.1-70b on GB200 NVL72 TP4)."""
    rows = [dict(quote_id="plain", provider="acme", model="llama-3.1-70b", provider_model_name="Llama-3.1-70B",
                 usd_per_m_input_tokens="0.72", usd_per_m_output_tokens="0.72"),
            dict(quote_id="turbo", provider="acme", model="llama-3.1-70b", provider_model_name="Llama-3.1-70B-Turbo",
                 usd_per_m_input_tokens="0.4", usd_per_m_output_tokens="0.4")]
    raw = pl.DataFrame(rows).with_columns(pl.lit(None, pl.String).alias(c) for c in QUOTE_SCHEMA
                                          if c not in rows[0])
    q = validate_quotes(raw.select(list(QUOTE_SCHEMA)), catalog)
    s = check_quotes(q, catalog, hardware=["gb200-nvl72"]).summary
    r = s.filter(pl.col("quote_id") == "plain").row(0, named=True)
    assert (r["weight_format"], r["floor_weight_format"], r["floor_precision"]) == ("bf16", "bf16", "bf16")
    b = r["breakeven_batch_size"]
    assert b is not None and b <= r["floor_batch_size"]
    dp = r["floor_dp"]
    prev = max(g * dp for g in _batch_grid()["batch_size"].to_list() if g * dp < b)
    pts = pl.DataFrame({"batch_size": [prev, b]}).with_columns(
        model=pl.lit("llama-3.1-70b"), hardware=pl.lit("gb200-nvl72"), precision=pl.lit("bf16"),
        weight_format=pl.lit("bf16"), num_gpus=pl.lit(r["floor_num_gpus"]), tp=pl.lit(r["floor_tp"]),
        dp=pl.lit(dp), ep=pl.lit(r["floor_ep"]), pp=pl.lit(r["floor_pp"]), input_len=pl.lit(3072),
        output_len=pl.lit(1024))
    res = evaluate(pts, catalog, strict=False)
    cost, speed = res["usd_per_m_blended_tokens"].to_list(), res["tokens_per_s_per_user"].to_list()
    price = r["price_usd_per_m_blended_tokens"]
    assert cost[1] <= price < cost[0]
    assert r["breakeven_tokens_per_s_per_user"] == pytest.approx(speed[1], rel=1e-12)


def test_a_cached_screen_serves_other_economics_of_the_same_tier(catalog, monkeypatch):
    """The screen (physics only) is cached per catalog: a second check that changes only power, PUE, finance,
    utilization and token mix reuses it (no second screening pass) and still equals the exhaustive search."""
    q = load_quotes(catalog).filter(pl.col("model").is_in(["deepseek-v3", "llama-3.3-70b", "gpt-oss-120b"]))
    first = Economics(pue=1.2, usd_per_kwh=0.05)
    second = Economics(pue=1.6, usd_per_kwh=0.2, utilization_frac=0.45, cost_of_capital_frac=0.15,
                       cache_hit_frac=0.3)
    real, screens = quotes.evaluate, []

    def counting(points, *a, **kw):
        if kw.get("columns") == quotes.SCREEN_COLUMNS:
            screens.append(points.height)
        return real(points, *a, **kw)

    monkeypatch.setattr(quotes, "evaluate", counting)
    check_quotes(q, catalog, economics=first)
    n = len(screens)
    ref, got = _both(monkeypatch, lambda: check_quotes(q, catalog, economics=second))
    assert len(screens) == n  # the second economics screened nothing again
    _assert_checks_equal(ref, got)


def test_the_screen_does_not_depend_on_the_economics(catalog):
    """What the cache relies on: the screening columns of the engine are the same under any economics."""
    pts = quotes.floor_points(["deepseek-v3", "llama-3.3-70b"], catalog, hardware=["h100-sxm", "b200", "mi300x"])
    a = evaluate(pts, catalog, economics=Economics(), strict=False, columns=quotes.SCREEN_COLUMNS)
    b = evaluate(pts, catalog, economics=Economics(pue=1.9, usd_per_kwh=0.3, utilization_frac=0.3,
                                                   input_output_mix=9.0, cache_hit_frac=0.8,
                                                   cached_input_cost_frac=0.5), strict=False,
                 columns=quotes.SCREEN_COLUMNS)
    assert a.height > 1000 and a["feasible"].any()
    assert a.equals(b)


def test_the_search_cache_is_one_bound_for_the_process():
    """Many catalog objects (custom accelerators on the dashboard) share one bound on cached searches."""
    from dataclasses import replace as _replace

    base = load_catalog()
    catalogs = [_replace(base) for _ in range(quotes.SEARCH_CACHE_ENTRIES + 4)]
    for i, c in enumerate(catalogs):
        assert quotes._memo(c, ("probe", i), lambda i=i: i) == i
        assert quotes._memo(c, ("probe", i), lambda: -1) == i  # a hit on its own catalog
    assert len(quotes._SEARCH_CACHE) <= quotes.SEARCH_CACHE_ENTRIES
    assert quotes._memo(catalogs[0], ("probe", 0), lambda: "rebuilt") == "rebuilt"  # the oldest was evicted
    assert quotes._memo(catalogs[1], ("probe", 0), lambda: "other") == "other"  # keys are per catalog


def test_a_percentile_check_never_reuses_the_median_screen(catalog):
    """The default check holds speeds at the served (median) TPOT, a percentile check at that percentile; both run with
    the same Assumptions when the percentile is the default 99, so the kept screen must be keyed by the percentile
    too (it was not: a p99 check after a median one reused the median screen and picked floors too fast)."""
    q = load_quotes(catalog).head(40)

    def floors(percentile):
        s = check_quotes(q, catalog, slo_percentile=percentile).summary
        return dict(s.select("quote_id", "floor_usd_per_m_blended_tokens").iter_rows())

    quotes._SEARCH_CACHE.clear()
    alone = floors(99.0)
    quotes._SEARCH_CACHE.clear()
    median = floors(None)
    after = floors(99.0)  # the median's search and screen are kept
    assert after == alone
    assert after != median  # and the percentile does move some floor


def test_a_search_kept_on_disk_gives_the_same_check(catalog, tmp_path, monkeypatch):
    """Issue 19.5: the floor search and its screen are kept on disk per data-folder and code version, so a restarted
    dashboard or a second ``econ quotes check`` reads them; what is read equals what would be built, and a catalog
    changed in memory is never kept."""
    from dataclasses import replace

    from econ.tables.catalog import disk_key

    monkeypatch.setenv("ECON_CACHE_DIR", str(tmp_path))
    assert disk_key(catalog) is not None
    q = load_quotes(catalog).filter(pl.col("model").is_in(["llama-3.3-70b", "deepseek-v3", "gpt-oss-120b"]))
    quotes._SEARCH_CACHE.clear()
    built = check_quotes(q, catalog, slo_percentile=95.0)
    assert sorted(p.name.split("-")[1] for p in tmp_path.glob("quote-*.pickle")) == ["screen", "search"]
    quotes._SEARCH_CACHE.clear()
    monkeypatch.setattr(quotes, "_floor_configs", lambda *a, **k: pytest.fail("searched again"))
    monkeypatch.setattr(quotes, "_screen", lambda *a, **k: pytest.fail("screened again"))
    _assert_checks_equal(built, check_quotes(q, catalog, slo_percentile=95.0))
    assert disk_key(replace(catalog, models=catalog.models)) is None
    for f in tmp_path.glob("quote-*.pickle"):  # a damaged file is a miss, never an error
        f.write_bytes(b"econ-zlib1:not zlib")
    quotes._SEARCH_CACHE.clear()
    monkeypatch.undo()
    monkeypatch.setenv("ECON_CACHE_DIR", str(tmp_path))
    _assert_checks_equal(built, check_quotes(q, catalog, slo_percentile=95.0))


def test_repriced_physics_equals_a_fresh_check(catalog):
    """Issue 19.5: a rerun that changes only the economics prices the screened rows again on their kept physics (the
    engine's ``physics`` memo, :data:`econ.analyses.quotes._PHYSICS_MEMOS`); every frame equals a check computed with
    no memo, exactly, and a change of PUE, power price, utilization, mix, tier, custom rate or cache-hit rate is never
    served stale (each gives other floors than the one before it)."""
    from dataclasses import replace

    from polars.testing import assert_frame_equal

    q = load_quotes(catalog)
    base = Economics()
    runs = [base, replace(base, pue=1.377), replace(base, usd_per_kwh=0.21), replace(base, utilization_frac=0.45),
            replace(base, input_output_mix=6.0), replace(base, basis="neocloud"),
            replace(base, basis="custom", usd_per_gpu_hour=2.7), replace(base, cache_hit_frac=0.35),
            replace(base, pue=1.2)]
    check_quotes(q, catalog, economics=base)
    before = None
    for e in runs:
        kinds = {k[1][0] for k in quotes._PHYSICS_MEMOS._items}
        assert {"screen", "curves"} <= kinds, kinds  # the memo paths (screened rows, floors' curves) are the ones run
        kept = check_quotes(q, catalog, economics=e)
        quotes._PHYSICS_MEMOS._items.clear()
        fresh = check_quotes(q, catalog, economics=e)
        assert_frame_equal(kept.summary, fresh.summary, check_exact=True)
        assert_frame_equal(kept.per_hardware, fresh.per_hardware, check_exact=True)
        assert kept.settings == fresh.settings
        if before is not None:
            assert not kept.summary["floor_usd_per_m_blended_tokens"].equals(before)
        before = kept.summary["floor_usd_per_m_blended_tokens"]
    assert quotes._PHYSICS_MEMOS.bytes() <= quotes.PHYSICS_MEMO_BYTES


def test_kept_physics_memo_size_is_measured_when_it_changes(catalog, monkeypatch):
    """A rerun whose kept physics memos the engine only read does not measure them again (_evaluate_kept): the bytes
    the cache accounts still equal a fresh measurement of every value kept, and a memo the engine refills (another
    tier: another fingerprint) is measured again."""
    from dataclasses import replace

    from econ.tables.catalog import nbytes_of

    q = load_quotes(catalog)
    quotes._PHYSICS_MEMOS._items.clear()
    quotes._PHYSICS_MEMOS._sizes.clear()
    check_quotes(q, catalog)
    puts = []
    real = quotes._PHYSICS_MEMOS.put
    monkeypatch.setattr(quotes._PHYSICS_MEMOS, "put", lambda *a, **k: (puts.append(a[1]), real(*a, **k)))
    for e in (replace(Economics(), pue=1.41), replace(Economics(), basis="neocloud")):
        puts.clear()
        check_quotes(q, catalog, economics=e)
        fresh = sum(nbytes_of(v[1]) for v in quotes._PHYSICS_MEMOS._items.values())
        assert quotes._PHYSICS_MEMOS.bytes() == fresh
        if e.basis == "owned":
            assert puts == []  # PUE only: the memos were read, not refilled
    assert puts  # the tier changed: refilled and measured


def test_kept_search_order_equals_a_sort(catalog, monkeypatch):
    """Issue 19.5: _feasible_rows keeps the permutation that sorts the floor search's rows (:data:`quotes.SEARCH_ORDER`)
    and gathers a rerun's rows by it: on the screened rows and the floors' curves of checks at other economics, the
    kept order equals the sort exactly (ties included), a whole check equals one with no kept order, and rows whose
    order columns differ from the kept ones are sorted again, never gathered by a stale permutation."""
    from dataclasses import replace

    from polars.testing import assert_frame_equal

    seen = []
    real = quotes._feasible_rows

    def spy(res, cat, band, order_key=None):
        out = real(res, cat, band, order_key)
        seen.append((order_key, out, real(res, cat, band)))  # without a key: the plain sort
        return out

    q = load_quotes(catalog)
    base = Economics()
    monkeypatch.setattr(quotes, "_feasible_rows", spy)
    for e in (base, replace(base, pue=1.377), replace(base, utilization_frac=0.45), replace(base, basis="neocloud")):
        kept = check_quotes(q, catalog, economics=e)
        monkeypatch.setattr(quotes, "_feasible_rows", real)
        quotes._FEASIBLE_ORDERS._items.clear()
        fresh = check_quotes(q, catalog, economics=e)
        monkeypatch.setattr(quotes, "_feasible_rows", spy)
        assert_frame_equal(kept.summary, fresh.summary, check_exact=True)
        assert_frame_equal(kept.per_hardware, fresh.per_hardware, check_exact=True)
    keyed = [(k, out, want) for k, out, want in seen if k is not None]
    kinds = {k[1] if isinstance(k[1], str) else k[1][0] for k, _, _ in keyed}
    assert kinds >= {"search", "curves"}, kinds  # the screened rows and the floors' curves both kept
    assert len(keyed) > len({k for k, _, _ in keyed})  # and read again on a rerun
    for _, out, want in keyed:
        assert_frame_equal(out, want, check_exact=True)
    # a kept order under a key whose rows now differ: sorted again (the kept permutation is not applied)
    res = pl.DataFrame({"feasible": [True] * 4, "model": ["m", "m", "a", "a"], "hardware": ["h"] * 4,
                        "precision": ["bf16"] * 4, "num_gpus": [1, 1, 1, 1], "batch_size": [2, 1, 2, 1]})
    small = {c: res[c] for c in res.columns}
    monkeypatch.setattr(quotes, "_RES_COLUMNS", ("model", "hardware", "precision", "num_gpus", "batch_size"))
    monkeypatch.setattr(quotes, "_OPTIONAL_RES_COLUMNS", ())
    frame = pl.DataFrame(small).with_columns(pl.lit(None, pl.String).alias("_wf_in"),
                                             pl.lit(None, pl.String).alias("_spec_in"))
    first = real(frame, catalog, False, ("order", "test"))
    assert first["batch_size"].to_list() == [1, 2, 1, 2] and first["model"].to_list() == ["a", "a", "m", "m"]
    other = frame.with_columns(pl.Series("batch_size", [1, 2, 3, 4]))
    assert_frame_equal(real(other, catalog, False, ("order", "test")), real(other, catalog, False), check_exact=True)


def test_kept_reason_expression_equals_a_fresh_one(catalog):
    """The reasons' expression is built once per EAGLE draft length (functools.lru_cache on quotes._reason): a check
    with the kept expression equals one with a freshly built expression, exactly."""
    from polars.testing import assert_frame_equal

    q = load_quotes(catalog)
    quotes._reason(quotes.EAGLE_DRAFT_TOKENS)
    assert quotes._reason(quotes.EAGLE_DRAFT_TOKENS) is quotes._reason(quotes.EAGLE_DRAFT_TOKENS)
    kept = check_quotes(q, catalog)
    quotes._reason.cache_clear()
    fresh = check_quotes(q, catalog)
    assert_frame_equal(kept.summary, fresh.summary, check_exact=True)
    assert kept.summary["reason"].str.len_chars().min() > 40


def test_first_rows_equals_sort_then_group_first(catalog, monkeypatch):
    """_first_rows (the floors' per-accelerator pick, sorting only the group and order columns) equals
    ``sort(order, maintain_order=True).group_by(by).agg(pl.all().first())`` exactly: on the floor search's own frame
    (ties, nulls and all) and on a small frame built with ties and nulls."""
    from polars.testing import assert_frame_equal

    got = {}
    real = quotes._floors

    def spy(keys, res, *a, **k):
        got["j"] = keys.join(res, on="model", how="inner")
        return real(keys, res, *a, **k)

    monkeypatch.setattr(quotes, "_floors", spy)
    quotes._FLOOR_PICKS.clear()  # a kept pick of an earlier check would not search again
    check_quotes(load_quotes(catalog), catalog)
    rng = np.random.default_rng(3)
    small = pl.DataFrame({"key": rng.integers(0, 3, 400), "hardware": rng.choice(["a", "b", "c"], 400),
                          "c": pl.Series(rng.choice([1.0, 2.0, np.nan], 400)).fill_nan(None),
                          "f": rng.choice([True, False], 400), "v": np.arange(400)})
    cases = [(got["j"], [~pl.col("_calibrated"), (pl.col("usd_per_m_blended_tokens_low")
                                                  * pl.col("usd_per_m_blended_tokens_high")).sqrt()
                         .fill_null(pl.col("usd_per_m_blended_tokens")), pl.col("usd_per_m_blended_tokens")], False),
             (got["j"], [pl.col("tokens_per_s_per_user_high"), pl.col("usd_per_m_blended_tokens")], [True, False]),
             (small, [~pl.col("f"), pl.col("c")], False), (small, [pl.col("c"), pl.col("f")], [True, False])]
    for frame, order, desc in cases:
        want = (frame.sort(order, descending=desc, maintain_order=True).group_by("key", "hardware")
                .agg(pl.all().first()).sort("key", "hardware"))
        have = quotes._first_rows(frame, ("key", "hardware"), order, descending=desc)
        assert_frame_equal(have.sort("key", "hardware"), want, check_exact=True)


def test_kept_rentable_at_scale_equals_a_fresh_one(catalog, tmp_path):
    """Issue 19.5: rentable_at_scale is kept per catalog, quotes and rental_rates.csv stamp (it reads no economics):
    a kept answer equals a fresh computation, other quote dates are another answer, and an edited rental_rates.csv is
    read again (never the stale answer)."""
    import shutil

    from polars.testing import assert_frame_equal

    q = load_quotes(catalog).select("quote_id", "as_of")
    quotes._RENTABLE_CACHE.clear()
    first = quotes.rentable_at_scale(catalog, q)
    assert quotes.rentable_at_scale(catalog, q) is first  # kept
    assert_frame_equal(first, quotes._rentable_at_scale(catalog, q), check_exact=True)
    assert first.height > 20
    old = q.with_columns(pl.lit("2019-01").alias("as_of"))  # before most offers: fewer sellers within a year
    assert_frame_equal(quotes.rentable_at_scale(catalog, old), quotes._rentable_at_scale(catalog, old),
                       check_exact=True)
    assert not quotes.rentable_at_scale(catalog, old).equals(first)
    # a data folder whose rental_rates.csv is edited on disk after a first answer
    data = tmp_path / "data"
    shutil.copytree(catalog.data_dir, data)
    mine = load_catalog(data)
    before = quotes.rentable_at_scale(mine, q)
    assert_frame_equal(before, first, check_exact=True)
    lines = (data / "rental_rates.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (data / "rental_rates.csv").write_text("".join(lines[:4]), encoding="utf-8")  # three offers left
    after = quotes.rentable_at_scale(mine, q)
    assert after.height < before.height
    assert_frame_equal(after, quotes._rentable_at_scale(mine, q), check_exact=True)
    assert len(quotes._RENTABLE_CACHE) <= quotes.RENTABLE_CACHE_ENTRIES


def test_require_finite_flags_nan_and_inf_not_nulls():
    """_require_finite (one select over the float columns): nulls pass, NaN or inf in a public float column raises
    naming it, private (_-prefixed) and non-float columns are not checked."""
    from econ.errors import InvalidInputError

    ok = pl.DataFrame({"a": [1.0, None], "b": [None, None], "_x": [float("nan"), 1.0], "s": ["x", None]},
                      schema={"a": pl.Float64, "b": pl.Float64, "_x": pl.Float64, "s": pl.String})
    quotes._require_finite(ok, "t")
    quotes._require_finite(ok.clear(), "t")
    for bad in (float("nan"), float("inf"), float("-inf")):
        with pytest.raises(InvalidInputError, match="column b is not finite"):
            quotes._require_finite(ok.with_columns(pl.Series("b", [None, bad], dtype=pl.Float64)), "t")


def test_kept_accelerator_generations_equal_a_fresh_computation(catalog):
    """Issue 19.5: accelerator_generations is kept per catalog object; it equals a fresh computation, and another
    catalog (a custom accelerator) gets its own answer, not the first catalog's."""
    from polars.testing import assert_frame_equal

    from econ.tables.custom import CustomAccelerator, with_custom_accelerator

    kept = quotes.accelerator_generations(catalog)
    assert quotes.accelerator_generations(catalog) is kept
    assert_frame_equal(kept, quotes._accelerator_generations(catalog), check_exact=True)
    mine = with_custom_accelerator(catalog, CustomAccelerator(generation="blackwell"))
    got = quotes.accelerator_generations(mine)
    assert got.height == kept.height + 1
    assert_frame_equal(got, quotes._accelerator_generations(mine), check_exact=True)


def _spy_repriced(monkeypatch) -> list:
    """Record what each :func:`econ.analyses.quotes._repriced_floors` call returned (kept picks or None)."""
    seen = []
    real = quotes._repriced_floors

    def spy(rec, res):
        out = real(rec, res)
        seen.append(out is not None)
        return out

    monkeypatch.setattr(quotes, "_repriced_floors", spy)
    return seen


@pytest.mark.parametrize("kw", [
    {},
    {"slo_percentile": 99.0},
    {"hardware": ["h100-sxm", "h200-sxm", "b200", "mi300x"], "decoding": quotes.Decoding(weight_format="fp8")},
], ids=["median", "p99", "restricted-fp8"])
def test_kept_floor_picks_equal_a_fresh_check(catalog, monkeypatch, kw):
    """Issue 19.5: a rerun whose prices move in proportion per accelerator (PUE, power price, utilization, a custom
    rate; a rented tier's rate over utilization) keeps the floor search's picks and prices them again (:func:`econ.analyses.quotes._repriced_floors`);
    every frame equals a check whose picks are searched again, exactly; each change gives other floors than the one
    before it; a change that does not scale costs per accelerator (cache-hit rate) searches again."""
    from dataclasses import replace

    from polars.testing import assert_frame_equal

    seen = _spy_repriced(monkeypatch)
    q = load_quotes(catalog)
    base = Economics()
    runs = [replace(base, pue=1.377), replace(base, usd_per_kwh=0.21), replace(base, utilization_frac=0.45),
            replace(base, cache_hit_frac=0.35), replace(base, basis="neocloud"), replace(base, basis="neocloud", utilization_frac=0.6),
            replace(base, basis="hyperscaler"), replace(base, basis="hyperscaler", utilization_frac=0.55),
            replace(base, basis="rental"), replace(base, basis="rental", utilization_frac=0.5),
            replace(base, basis="custom", usd_per_gpu_hour=2.7), replace(base, basis="custom", usd_per_gpu_hour=1.3)]
    before = check_quotes(q, catalog, economics=base, **kw).summary["floor_usd_per_m_blended_tokens"]
    used = []
    for e in runs:
        n = len(seen)
        kept = check_quotes(q, catalog, economics=e, **kw)
        used.append(seen[n:] == [True])
        quotes._FLOOR_PICKS.clear()
        fresh = check_quotes(q, catalog, economics=e, **kw)
        assert_frame_equal(kept.summary, fresh.summary, check_exact=True)
        assert_frame_equal(kept.per_hardware, fresh.per_hardware, check_exact=True)
        assert kept.settings == fresh.settings
        assert not kept.summary["floor_usd_per_m_blended_tokens"].equals(before), e
        before = kept.summary["floor_usd_per_m_blended_tokens"]
    # kept: each price change within a tier; searched again: the cache-hit rate (not a per-accelerator scale) and
    # the first run of each tier (another set of rated accelerators, another search key)
    assert used == [True, True, True, False, False, True, False, True, False, True, False, True], used
    assert quotes._FLOOR_PICKS.bytes() <= quotes.FLOOR_PICKS_BYTES


def test_repriced_floors_refuse_what_they_cannot_show_equal(catalog, monkeypatch):
    """The kept picks are used only where they are provably the search's: costs scaled per accelerator give
    :func:`econ.analyses.quotes._floors`' frames exactly; a row priced out of proportion with its accelerator, a near
    row that overtakes its pick (an exact tie broken the other way) or a changed rate-independent column returns None
    (the search runs again)."""
    from polars.testing import assert_frame_equal

    calls = []
    real = quotes._kept_floors
    monkeypatch.setattr(quotes, "_kept_floors", lambda *a: calls.append(a) or real(*a))
    check_quotes(load_quotes(catalog), catalog)
    _, _, keys, res, screen, configs = calls[-1]
    rec = {}
    quotes._floors(keys, res, screen, configs, rec)
    if not rec["near"]["per_hw"][0].size:  # no exact tie across batch sizes in today's data: a pick's row twice is one
        res = pl.concat([res, res.slice(int(rec["raw"]["per_hw"]["_ri"][0]), 1)])
        rec = {}
        quotes._floors(keys, res, screen, configs, rec)
    assert rec and rec["near"]["per_hw"][0].size  # near rows to rank again (exact ties)

    def frames_equal(a, b):
        assert a.keys() == b.keys()
        for name in a:  # a group-by's rows come in no order (the check joins them): compared sorted
            assert_frame_equal(a[name].sort(a[name].columns, nulls_last=True),
                               b[name].sort(b[name].columns, nulls_last=True), check_exact=True)

    hws = res["hardware"].unique().sort().to_list()
    factor = res["hardware"].replace_strict({h: 0.7 + 0.37 * i for i, h in enumerate(hws)}, return_dtype=pl.Float64)
    usd = [c for c in res.columns if c.startswith("usd_")]
    scaled = res.with_columns(pl.col(c) * factor for c in usd)
    got = quotes._repriced_floors(rec, scaled)
    assert got is not None
    frames_equal(got, quotes._floors(keys, scaled, screen, configs))
    frames_equal(quotes._repriced_floors(rec, res), quotes._floors(keys, res, screen, configs))

    row = int(rec["raw"]["per_hw"]["_ri"][0])
    bump = pl.int_range(pl.len()) == row
    off = res.with_columns(pl.when(bump).then(pl.col("usd_per_m_blended_tokens") * 1.001)
                           .otherwise(pl.col("usd_per_m_blended_tokens")).alias("usd_per_m_blended_tokens"))
    assert quotes._repriced_floors(rec, off) is None
    slower = res.with_columns(pl.when(bump).then(pl.col("tokens_per_s_per_user") * 0.999)
                              .otherwise(pl.col("tokens_per_s_per_user")).alias("tokens_per_s_per_user"))
    assert quotes._repriced_floors(rec, slower) is None
    ri, ji, wri, wji = rec["near"]["per_hw"]
    e, k = rec["e"], rec["k"]
    tied = np.flatnonzero((e[ri] == e[wri]) & (k[ri] == k[wri]))
    assert tied.size  # exact ties, broken by the search's row order
    c = int(ri[tied[0]])
    under = pl.int_range(pl.len()) == c  # the tied row a hair cheaper (within PRICE_RATIO_TOL): it is the pick now
    tie = res.with_columns(pl.when(under).then(pl.col(u) * (1 - 1e-14)).otherwise(pl.col(u)).alias(u) for u in usd)
    assert quotes._repriced_floors(rec, tie) is None
    assert not quotes._floors(keys, tie, screen, configs)["per_hw"].equals(quotes._floors(keys, res, screen, configs)["per_hw"])
