"""The engine's numbers do not move when its structure does (issue 20): every case recorded by
tests/engine/fixtures/engine_speed/record.py is reproduced within 1e-9 relative, column by column, nulls and
labels exactly.

The fixtures are regenerated only by a commit that changes the physics, the economics or the data (its message
says so): ``.venv/bin/python tests/engine/fixtures/engine_speed/record.py``. A speed change must pass unchanged.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from econ.engine import evaluate
from econ.tables.catalog import DEFAULT_DATA_DIR, load_catalog

HERE = Path(__file__).parent / "fixtures" / "engine_speed"
sys.path.insert(0, str(HERE))
from record import cases, fingerprint  # noqa: E402

REL = 1e-9


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def recorded_cases(catalog):
    recorded = json.loads((HERE / "fingerprint.json").read_text())
    now = fingerprint(DEFAULT_DATA_DIR)
    changed = sorted(f for f in set(recorded) | set(now) if recorded.get(f) != now.get(f))
    if changed:
        pytest.fail(f"data files changed since the engine_speed fixtures were recorded ({', '.join(changed)}): a "
                    "data or physics commit regenerates them with tests/engine/fixtures/engine_speed/record.py")
    return cases(catalog)


def assert_frames_equal(old: pl.DataFrame, new: pl.DataFrame, rel: float = REL) -> None:
    """Same columns in the same order, same dtypes and nulls; text exact; numbers within ``rel`` relative."""
    assert new.columns == old.columns
    assert new.height == old.height
    for c in old.columns:
        a, b = old[c], new[c]
        assert a.dtype == b.dtype, (c, a.dtype, b.dtype)
        assert (a.is_null() == b.is_null()).all(), c
        if a.dtype.is_float():
            x, y = a.to_numpy(), b.to_numpy()
            ok = ~np.isnan(x)
            err = np.abs(y[ok] - x[ok]) / np.maximum(np.abs(x[ok]), 1e-300)
            assert err.size == 0 or err.max() <= rel, (c, float(err.max()), int(np.argmax(err)))
        else:
            assert a.to_list() == b.to_list(), c


@pytest.mark.parametrize("name", ["grid", "layouts", "spec", "economics", "ideal", "decode_cost", "small"])
def test_engine_reproduces_recorded_case(name, catalog, recorded_cases):
    points, kw = recorded_cases[name]
    old = pl.read_parquet(HERE / f"{name}.parquet")
    assert old.height == points.height and old["feasible"].sum() > 0
    assert_frames_equal(old, evaluate(points, catalog, **kw))


def test_fixture_cases_are_diverse(catalog, recorded_cases):
    """The cases reach the engine's branches: MoE and dense, disaggregated, speculative, every tier."""
    grid = pl.read_parquet(HERE / "grid.parquet")
    moe = set(catalog.models.filter(pl.col("num_experts") > 0)["id"])
    feasible = grid.filter("feasible")
    assert feasible["model"].is_in(list(moe)).sum() > 100 and (~feasible["model"].is_in(list(moe))).sum() > 100
    layouts = pl.read_parquet(HERE / "layouts.parquet").filter("feasible")
    assert layouts["disaggregated"].sum() > 100 and (layouts["ep"] > 1).sum() > 100
    spec = pl.read_parquet(HERE / "spec.parquet").filter("feasible")
    assert set(spec["spec_method"]) >= {"none", "mtp", "eagle", "draft"}
    econ = pl.read_parquet(HERE / "economics.parquet").filter("feasible")
    assert econ["basis"].n_unique() >= 5


def test_blocks_and_threads_do_not_change_numbers(catalog, recorded_cases):
    """Many blocks evaluated on two threads give the recorded one-block numbers."""
    points, kw = recorded_cases["grid"]
    old = pl.read_parquet(HERE / "grid.parquet")
    assert_frames_equal(old, evaluate(points, catalog, block_rows=700, threads=2, **kw))


@pytest.mark.parametrize("dtype", ["enum", "categorical"])
def test_enum_and_categorical_ids_give_the_recorded_numbers(dtype, catalog, recorded_cases):
    """Issue 20.2: ids as an Enum (the catalog's own or another) or a Categorical are read without per-row strings."""
    from econ.engine import catalog_arrays
    from econ.physics.precision import PRECISIONS

    points, kw = recorded_cases["grid"]
    arr = catalog_arrays(catalog)
    if dtype == "enum":
        typed = points.with_columns(pl.col("model").cast(pl.Enum(list(arr.model_ids))),
                                    pl.col("hardware").cast(pl.Enum(sorted(arr.hardware_ids) + ["not-in-catalog"])),
                                    pl.col("precision").cast(pl.Enum(list(PRECISIONS))))
    else:
        typed = points.with_columns(pl.col("model", "hardware", "precision").cast(pl.Categorical))
    out = evaluate(typed, catalog, **kw)
    assert_frames_equal(pl.read_parquet(HERE / "grid.parquet"), out)


def test_unknown_categorical_id_is_named(catalog):
    from econ.errors import UnknownIdError

    pts = pl.DataFrame({"model": ["llama-3.3-70b", "no-such-model"] * 200, "hardware": ["h100-sxm"] * 400,
                        "precision": ["fp8"] * 400, "batch_size": [8] * 400})
    with pytest.raises(UnknownIdError, match="no-such-model"):
        evaluate(pts.with_columns(pl.col("model").cast(pl.Categorical)), catalog)


@pytest.mark.parametrize("name", ["small", "layouts"])
def test_dict_and_records_outputs_equal_the_frame(name, catalog, recorded_cases):
    """Issue 20.4: ``output="dict"`` / ``"records"`` give the frame's values without building it."""
    points, kw = recorded_cases[name]
    points = points.head(16)
    frame = evaluate(points, catalog, **kw)
    assert evaluate(points, catalog, output="dict", **kw) == frame.to_dict(as_series=False)
    assert evaluate(points, catalog, output="records", **kw) == frame.to_dicts()
    with pytest.raises(Exception, match="output="):
        evaluate(points, catalog, output="arrow")


@pytest.mark.parametrize("columns", [("model", "ttft_s", "usd_per_m_blended_tokens", "served_tpot_s", "feasible"),
                                     ("tpot_s", "ttft_percentile_s"), ("usd_per_m_output_tokens", "layout")])
def test_column_subsets_give_the_recorded_numbers(columns, catalog, recorded_cases):
    """Work skipped for columns not asked for (the prefill side, the percentile queue) changes no other column."""
    for name in ("grid", "layouts"):
        points, kw = recorded_cases[name]
        old = pl.read_parquet(HERE / f"{name}.parquet").select(columns)
        assert_frames_equal(old, evaluate(points, catalog, columns=columns, **kw))
