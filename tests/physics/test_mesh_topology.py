"""Scale-up topology (issue 17, stop 33): on a direct full mesh (no switch) each accelerator's links are split over
its peers, so a group of g of the D accelerators reaches its peers over (g - 1) / (D - 1) of the scale-up bandwidth
(econ.physics.communication.mesh_bandwidth_share; data/accelerators.csv ``scale_up_topology``).

Known answer: MLPerf Inference Llama-2-70B (TP2) on 4-GPU H100 SXM servers (the HGX H100 4-GPU board, no NVSwitch)
runs 9-23% below NVIDIA's 8-GPU DGX H100 per GPU in the same round; the engine gives the same gap from the mesh alone.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl
import pytest

from econ.analyses import calibration as cal
from econ.assumptions import Assumptions, Economics
from econ.engine import evaluate
from econ.errors import InvalidInputError
from econ.physics.communication import (alltoall_alpha_beta, domain_mesh, hierarchical_allreduce_alpha_beta,
                                        mesh_bandwidth_share)
from econ.tables.custom import CustomAccelerator, with_custom_accelerator

PINNED = Assumptions(calibrated=frozenset())
PRICE = Economics(basis="custom", usd_per_gpu_hour=2.0)  # physics columns only


def test_share_of_the_links_a_group_reaches():
    assert mesh_bandwidth_share(2, 8, 0.0) == 1.0  # a switch: any pair at the whole bandwidth
    assert mesh_bandwidth_share(2, 4, 1.0) == pytest.approx(1 / 3)  # HGX H100 4-GPU: 6 of 18 NVLinks per peer
    assert mesh_bandwidth_share(2, 8, 1.0) == pytest.approx(1 / 7)  # MI300X: one Infinity Fabric link of 7
    assert mesh_bandwidth_share(4, 8, 1.0) == pytest.approx(3 / 7)
    assert mesh_bandwidth_share(8, 8, 1.0) == 1.0
    assert mesh_bandwidth_share(1, 1, 1.0) == 1.0  # a domain of one: no peer, no division by zero
    shares = mesh_bandwidth_share(np.array([1.0, 2.0, 3.0, 4.0]), 4.0, 1.0)
    assert np.all(np.isfinite(shares)) and np.all((shares > 0) & (shares <= 1))


def test_a_tp2_allreduce_on_a_4_gpu_mesh_moves_its_bytes_3x_slower():
    switch = hierarchical_allreduce_alpha_beta(2, 8, 450e9, 1e-6, 50e9, 5e-6)
    mesh = hierarchical_allreduce_alpha_beta(2, 4, 450e9, 1e-6, 50e9, 5e-6, scale_up_mesh=1.0)
    assert mesh.b1 == pytest.approx(3 * switch.b1) and mesh.a1 == switch.a1  # bytes slower, latency unchanged
    full = hierarchical_allreduce_alpha_beta(4, 4, 450e9, 1e-6, 50e9, 5e-6, scale_up_mesh=1.0)
    on_switch = hierarchical_allreduce_alpha_beta(4, 8, 450e9, 1e-6, 50e9, 5e-6)
    assert full.b1 == pytest.approx(on_switch.b1)  # the ring over the whole board: every link in use
    assert full.b2 == pytest.approx(on_switch.b2)  # the low-latency branch too (the stated optimistic bound)


def test_a_group_past_the_mesh_reduce_scatters_over_every_link():
    """n > D: the intra-domain ring spans the whole mesh (share 1); the rest crosses the NICs as on a switch."""
    mesh = hierarchical_allreduce_alpha_beta(16, 8, 448e9, 1e-6, 50e9, 5e-6, scale_up_mesh=1.0)
    switch = hierarchical_allreduce_alpha_beta(16, 8, 448e9, 1e-6, 50e9, 5e-6)
    assert mesh.b1 == pytest.approx(switch.b1) and mesh.a1 == pytest.approx(switch.a1)


def test_an_all_to_all_on_a_mesh_reaches_each_peer_over_its_own_link():
    """EP4 on an 8-GPU mesh (MI300X): each rank sends 3/4 of its bytes over 3 of its 7 links, 3/7 of 448 GB/s."""
    mesh = alltoall_alpha_beta(4, 8, 448e9, 1e-6, 50e9, 5e-6, scale_up_mesh=1.0)
    assert mesh.b1 == pytest.approx((3 / 4) / (448e9 * 3 / 7))
    assert alltoall_alpha_beta(8, 8, 448e9, 1e-6, 50e9, 5e-6, scale_up_mesh=1.0).b1 == pytest.approx(
        alltoall_alpha_beta(8, 8, 448e9, 1e-6, 50e9, 5e-6).b1)  # every peer: every link, as on a switch


def test_shares_of_mixed_rows_in_one_call():
    share = mesh_bandwidth_share(np.array([2.0, 2.0, 4.0, 8.0]), np.array([8.0, 8.0, 4.0, 8.0]),
                                 np.array([1.0, 0.0, 1.0, 1.0]))
    assert share == pytest.approx([1 / 7, 1.0, 1.0, 1.0])


def test_a_layout_on_another_domain_size_is_a_switched_fabric():
    """The mesh's links are the board's (D - 1 of the catalog's D); a row placing the chip in another domain describes
    another fabric (econ.physics.communication.domain_mesh)."""
    assert domain_mesh(1.0, np.array([8.0, 72.0, 4.0]), 8.0) == pytest.approx([1.0, 0.0, 0.0])
    assert domain_mesh(0.0, 8.0, 8.0) == 0.0


def _step(catalog, hardware, tp, batch=64, pp=1, **extra):
    row = dict(model="llama-3.3-70b", hardware=hardware, precision="fp8", input_len=1024, output_len=1024,
               batch_size=batch, num_gpus=tp * pp, tp=tp, pp=pp, **extra)
    return evaluate(pl.DataFrame([row]), catalog, PINNED, PRICE,
                    columns=("t_comm_tp_s", "t_comm_pp_s", "output_tokens_per_s_per_gpu")).row(0, named=True)


def test_the_4_gpu_board_slows_tp2_most(catalog):
    assert catalog.accelerator("h100-sxm-4gpu")["scale_up_mesh"] == 1.0
    assert catalog.accelerator("h100-sxm")["scale_up_mesh"] == 0.0
    two_mesh, two_switch = _step(catalog, "h100-sxm-4gpu", 2), _step(catalog, "h100-sxm", 2)
    assert 2.0 < two_mesh["t_comm_tp_s"] / two_switch["t_comm_tp_s"] <= 3.0  # bytes 3x, latency the same
    assert two_mesh["output_tokens_per_s_per_gpu"] < two_switch["output_tokens_per_s_per_gpu"]
    four_mesh, four_switch = _step(catalog, "h100-sxm-4gpu", 4), _step(catalog, "h100-sxm", 4)
    assert four_mesh["t_comm_tp_s"] == pytest.approx(four_switch["t_comm_tp_s"], rel=1e-9)  # all 18 links in use
    pipe_mesh, pipe_switch = _step(catalog, "h100-sxm-4gpu", 2, pp=2), _step(catalog, "h100-sxm", 2, pp=2)
    assert pipe_mesh["t_comm_pp_s"] > pipe_switch["t_comm_pp_s"]  # a stage hand-off rides one peer's links


def test_another_domain_size_on_the_4_gpu_chip_is_switched(catalog):
    on_board = _step(catalog, "h100-sxm-4gpu", 2)
    elsewhere = _step(catalog, "h100-sxm-4gpu", 2, scale_up_domain_size=8)
    assert elsewhere["t_comm_tp_s"] < on_board["t_comm_tp_s"]
    assert elsewhere["t_comm_tp_s"] == pytest.approx(_step(catalog, "h100-sxm", 2)["t_comm_tp_s"], rel=1e-9)


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_a_mesh_is_never_faster_than_a_switch_of_the_same_links(catalog, tp):
    acc = catalog.accelerators.with_columns(
        pl.when(pl.col("id") == "mi300x").then(0.0).otherwise(pl.col("scale_up_mesh")).alias("scale_up_mesh"))
    as_switch = replace(catalog, accelerators=acc)  # the same Infinity Fabric links behind a switch
    mesh, switch = _step(catalog, "mi300x", tp), _step(as_switch, "mi300x", tp)
    assert mesh["output_tokens_per_s_per_gpu"] <= switch["output_tokens_per_s_per_gpu"] * (1 + 1e-12)
    if tp in (1, 8):  # no peer, or every peer over every link: the same step either way
        assert mesh["output_tokens_per_s_per_gpu"] == pytest.approx(switch["output_tokens_per_s_per_gpu"], rel=1e-9)


def test_mlperf_4_gpu_h100_servers_trail_the_dgx_as_the_mesh_says(catalog):
    """Llama-2-70B at TP2, MLPerf v4.0/v4.1 Offline: per-GPU throughput of the 4-GPU servers (Dell XE8640, XE9640,
    Fujitsu GX2560M7) over NVIDIA's DGX H100 of the same round, measured against predicted (calibrated profiles)."""
    meas = cal.load_measurements()
    dgx = [f"mlperf-{r}-closed-nvidia-dgx-h100-h100-sxm-80gbx8-trt-llama2-70b-99.9-offline" for r in ("v4.0", "v4.1")]
    rows = meas.filter(pl.col("case_id").str.contains("llama2-70b-99.9-offline")
                       & pl.col("source_kind").is_in(["mlperf-v4.0", "mlperf-v4.1"])
                       & (pl.col("case_id").str.contains("80gbx4-trt") & (pl.col("hardware") == "h100-sxm-4gpu")
                          | pl.col("case_id").is_in(dgx)))
    assert rows.height == 8  # 3 + 3 four-GPU servers and one DGX per round
    pred = cal.predict(cal.cases_to_points(rows, catalog), catalog)
    t = rows.select("case_id", "source_kind", "hardware", pl.col("value").cast(pl.Float64).alias("measured")) \
        .with_columns(pred["predicted"])
    measured, predicted = [], []
    for rnd in ("mlperf-v4.0", "mlperf-v4.1"):
        r = t.filter(pl.col("source_kind") == rnd)
        dgx = r.filter(pl.col("hardware") == "h100-sxm").row(0, named=True)
        for four in r.filter(pl.col("hardware") == "h100-sxm-4gpu").iter_rows(named=True):
            measured.append(four["measured"] / dgx["measured"])
            predicted.append(four["predicted"] / dgx["predicted"])
    assert 0.75 < np.median(measured) < 0.93  # the published gap: 9-23% per GPU
    assert np.median(predicted) == pytest.approx(np.median(measured), abs=0.06)
    assert max(predicted) < 0.95  # the mechanism, not noise: every 4-GPU server predicted below the DGX


def test_custom_accelerator_takes_a_topology(catalog):
    cat = with_custom_accelerator(catalog, CustomAccelerator(scale_up_topology="mesh", capex_usd=30_000.0))
    assert cat.accelerator("custom-accelerator")["scale_up_mesh"] == 1.0
    with pytest.raises(InvalidInputError, match=r"scale_up_topology.*'ring'.*(switch|mesh)"):
        with_custom_accelerator(catalog, CustomAccelerator(scale_up_topology="ring", capex_usd=30_000.0))


def test_a_kv_cache_crosses_one_peer_link_between_pools_on_a_mesh(catalog):
    """Disaggregated pools inside one MI300X node (1 prefill TP2 + 1 decode TP4): each KV shard moves from a prefill
    rank to a decode rank over the one link between the two, 1/7 of the 448 GB/s an NVSwitch would give."""
    acc = catalog.accelerators.with_columns(
        pl.when(pl.col("id") == "mi300x").then(0.0).otherwise(pl.col("scale_up_mesh")).alias("scale_up_mesh"))
    as_switch = replace(catalog, accelerators=acc)
    row = dict(model="llama-3.3-70b", hardware="mi300x", precision="fp8", input_len=8192, output_len=1024,
               batch_size=16, num_gpus=4, tp=4, disaggregated=True, prefill_tp=2, prefill_instances=1,
               decode_instances=1)
    t = [evaluate(pl.DataFrame([row]), c, PINNED, PRICE, columns=("kv_transfer_s",)).item(0, 0)
         for c in (catalog, as_switch)]
    assert t[0] > 3 * t[1] > 0  # bytes 7x slower; the fixed latency the same
