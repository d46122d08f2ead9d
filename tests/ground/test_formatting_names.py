"""Short accelerator names for KPI tiles (the Hardware comparison page's "Cheapest accelerator"): never longer than
the tile allows, whatever the catalog's display names."""

import pytest

from econ.formatting import short_accelerator_name
from econ.tables.catalog import load_catalog


@pytest.mark.parametrize("full, short", [
    ("AMD Instinct MI355X", "MI355X"),
    ("NVIDIA GB200 NVL72 (per B200 GPU, 1200 W)", "GB200 NVL72"),
    ("Google Cloud TPU v6e (Trillium)", "TPU v6e"),
    ("NVIDIA HGX H20 96GB (China export variant)", "H20 96GB"),
    ("Acme Very Long Accelerator Name X", "Acme Very Long…"),
])
def test_short_name_drops_vendor_and_detail(full, short):
    assert short_accelerator_name(full) == short


def test_every_catalog_name_fits_a_tile():
    names = load_catalog().accelerators["display_name"].to_list()
    short = [short_accelerator_name(n) for n in names]
    assert all(0 < len(s) <= 16 for s in short), short
    assert len(set(short)) == len(short)  # still tells them apart
