"""Test-suite settings shared by every module.

Hypothesis: no per-example deadline. A property that takes 150 ms on an idle machine can take 400 ms
on a loaded 2-core CI runner, and Hypothesis' default 200 ms deadline then fails a correct test
(issue 11). Each property still bounds its own work with ``max_examples``; speed is measured in
benchmarks/, never asserted in tests (GUIDE.md). The ``ci`` profile (CI=true) also prints the
statistics that show which property is slow.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("econ", deadline=None, max_examples=100,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("econ"), print_blob=True)
settings.load_profile("ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "econ")


@pytest.fixture(autouse=True, scope="session")
def _own_disk_cache(tmp_path_factory):
    """The suite keeps what econ caches on disk (the validated catalog, quote searches: ``ECON_CACHE_DIR``) in a folder
    of its own, unless the caller set one: the hundreds of test searches never crowd a user's ``~/.cache/econ``, and a
    user's cache never serves the tests. Subprocesses (CLI tests) inherit it."""
    if os.environ.get("ECON_CACHE_DIR"):
        yield
        return
    os.environ["ECON_CACHE_DIR"] = str(tmp_path_factory.mktemp("econ-cache"))
    try:
        yield
    finally:
        os.environ.pop("ECON_CACHE_DIR", None)


@pytest.fixture
def input_type_triad():
    """A checker of a broadcasting kernel: ``check(kernel, args)`` asserts that scalars, ndarrays, ``pl.Series`` and
    ``pl.Expr`` inputs give the same value (rel 1e-12), with the type and shape of their input (STYLE.md)."""
    import numpy as np
    import polars as pl

    def check(kernel, args) -> None:
        scalar = kernel(*args)
        as_array = kernel(*(np.array([a, a]) for a in args))
        as_series = kernel(*(pl.Series([a, a]) for a in args))
        expr = kernel(*(pl.lit(a) for a in args))
        assert isinstance(expr, pl.Expr)
        as_expr = pl.select(expr.alias("out"))["out"]
        assert np.ndim(scalar) == 0
        assert isinstance(as_array, np.ndarray) and as_array.shape == (2,)
        assert isinstance(as_series, pl.Series) and as_series.len() == 2
        for value in (*as_array.tolist(), *as_series.to_list(), as_expr.item()):
            assert value == pytest.approx(scalar, rel=1e-12, abs=0.0)

    return check


@pytest.fixture(scope="session")
def catalog():
    """The shipped catalog, loaded once for the session (a module may keep a fixture of its own, which overrides it)."""
    from econ.tables.catalog import load_catalog
    return load_catalog()
