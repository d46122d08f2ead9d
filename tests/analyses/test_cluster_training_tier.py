"""A cluster plan's training GPU-hour is priced at the scenario's own cost tier (issue 21, part 3: found by
tests/cli/test_every_flag.py). Before, every tier but owned took the catalog's rental rate: ``econ cluster --tco
hyperscaler``, ``--tco neocloud`` and ``--usd-per-gpu-hour 5`` all printed the H100's $2.81 rental."""

from __future__ import annotations

import pytest

from econ.analyses.cluster import cluster_plan, plan_status
from econ.assumptions import Economics
from econ.tables.catalog import load_catalog


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def _row(cat, **economics):
    return cluster_plan(cat, hardware="h100-sxm", num_gpus=1024, economics=Economics(**economics)).row(0, named=True)


@pytest.mark.parametrize("basis, column", [("hyperscaler", "tco_hyperscaler_usd_per_hour"),
                                           ("neocloud", "tco_neocloud_usd_per_hour"),
                                           ("rental", "rental_usd_per_hour")])
def test_each_tier_prices_training_at_its_own_rate(cat, basis, column):
    r = _row(cat, basis=basis)
    assert r["usd_per_gpu_hour_training"] == pytest.approx(cat.accelerator("h100-sxm")[column])
    assert r["training_price_basis"] == basis


def test_a_typed_rate_is_the_training_price(cat):
    r = _row(cat, basis="custom", usd_per_gpu_hour=5.0)
    assert r["usd_per_gpu_hour_training"] == pytest.approx(5.0) and r["training_price_basis"] == "custom"


def test_a_tier_without_a_rate_falls_back_to_the_owned_chain_visibly(cat):
    import polars as pl
    acc = cat.accelerators.with_columns(pl.when(pl.col("id") == "h100-sxm").then(None)
                                        .otherwise(pl.col("tco_neocloud_usd_per_hour"))
                                        .alias("tco_neocloud_usd_per_hour"))
    from dataclasses import replace
    r = cluster_plan(replace(cat, accelerators=acc), hardware="h100-sxm", num_gpus=1024,
                     economics=Economics(basis="neocloud")).row(0, named=True)
    owned = _row(cat, basis="owned")
    assert r["usd_per_gpu_hour_training"] == pytest.approx(owned["usd_per_gpu_hour_training"])
    assert r["training_price_basis"].startswith("owned (no neocloud rate for h100-sxm")
    assert "training priced on the owned chain" in plan_status(r)
