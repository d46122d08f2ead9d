"""The validated catalog is cached per data-folder version (issue 20.6): a second load reads the cache and equals
a fresh load; a changed file is a new version; an unwritable cache is ignored."""

from __future__ import annotations

import shutil

from polars.testing import assert_frame_equal

from econ.tables.catalog import DEFAULT_DATA_DIR, load_catalog

TABLES = ("accelerators", "models", "power_prices", "facilities", "buildout_capex", "calibration")


def test_cached_catalog_equals_a_fresh_load(tmp_path, monkeypatch):
    monkeypatch.setenv("ECON_CACHE_DIR", str(tmp_path / "cache"))
    first = load_catalog()
    files = list((tmp_path / "cache").glob("catalog-*.pickle"))
    assert len(files) == 1
    cached = load_catalog()
    fresh = load_catalog(cache=False)
    for t in TABLES:
        assert_frame_equal(getattr(cached, t), getattr(fresh, t))
        assert_frame_equal(getattr(first, t), getattr(fresh, t))
    assert cached.data_dir == fresh.data_dir


def test_a_changed_data_file_is_a_new_version(tmp_path, monkeypatch):
    monkeypatch.setenv("ECON_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(DEFAULT_DATA_DIR / "accelerators.csv", data / "accelerators.csv")
    before = load_catalog(data)
    text = (data / "accelerators.csv").read_text()
    (data / "accelerators.csv").write_text(text.replace("h100-sxm,", "h100-sxm-x,", 1))
    after = load_catalog(data)
    assert "h100-sxm" in before.accelerators["id"].to_list()
    assert "h100-sxm-x" in after.accelerators["id"].to_list()
    assert len(list((tmp_path / "cache").glob("catalog-*.pickle"))) == 2


def test_an_unwritable_or_disabled_cache_is_ignored(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("ECON_CACHE_DIR", str(blocker / "cache"))
    assert load_catalog().models.height > 10
    monkeypatch.setenv("ECON_CACHE_DIR", "off")
    assert load_catalog().models.height > 10
