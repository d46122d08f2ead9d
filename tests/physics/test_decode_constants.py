"""The batch-independent terms of a decode step, computed apart (issue 20.2: once per combination, then broadcast).

:func:`econ.physics.performance.decode_constants` holds the formulas of :func:`decode_step` that involve neither the
batch nor the context; a step given them (even as the scalars of one combination, broadcast against many rows) must
equal the step that computes them itself, and :func:`non_routed_bytes_terms` must add up to
:func:`non_routed_bytes_read`. Likewise :func:`prefill_constants` for :func:`prefill_step` (no prompt involved).
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

from econ.assumptions import DEFAULT, DEFAULT_DEPLOYMENT
from econ.engine import catalog_arrays, resolve_formats
from econ.physics.architecture import kv_bytes_read_per_query
from econ.physics.inputs import Efficiency, Layout
from econ.physics.memory import kv_replication
from econ.physics.performance import (decode_constants, decode_step, non_routed_bytes_read, non_routed_bytes_terms,
                                      prefill_constants, prefill_step)
from econ.physics.precision import KV_BYTES_PER_ELEMENT, PRECISIONS
from econ.tables.catalog import load_catalog

ARR = catalog_arrays(load_catalog())


@pytest.mark.parametrize("stream", [False, True])
def test_non_routed_bytes_are_fixed_plus_per_sequence(stream):
    m = ARR.models(np.arange(len(ARR.model_ids)))
    batch = np.array([1.0, 7.0, 300.0])[:, None]
    fixed, per_seq = non_routed_bytes_terms(m.dense_params_read, m.embedding_params, m.lm_head_params, m.hidden_size,
                                            1.0, 2.0, stream)
    read = non_routed_bytes_read(batch, m.dense_params_read, m.embedding_params, m.lm_head_params, m.hidden_size, 1.0,
                                 2.0, stream)
    np.testing.assert_allclose(read, fixed + per_seq * batch, rtol=1e-15)
    assert np.all(fixed > 0)
    if stream:  # the whole input table is streamed once: nothing per sequence
        assert np.all(per_seq == 0.0)
    else:  # an untied table gathers d rows of 2 B per sequence; a tied one nothing
        untied = m.lm_head_params > 0
        np.testing.assert_array_equal(per_seq, np.where(untied, m.hidden_size * 2.0, 0.0))
        # a tied head (lm_head 0): V*d read once by the head at 2 B, the rest at 1 B, nothing gathered per sequence
        assert non_routed_bytes_terms(1e9, 1e8, 0.0, 4096.0, 1.0, 2.0, False) == (pytest.approx(1.1e9, rel=1e-15), 0.0)


def _rows(model: str, hardware: str, precision: str, n: int, tp: float, dp: float, ep: float, pp: float):
    """``n`` rows of one (model, accelerator, precision, layout) with batches and contexts of their own."""
    mc = np.full(n, ARR.model_ids.index(model))
    hc = np.full(n, ARR.hardware_ids.index(hardware))
    pc = np.full(n, PRECISIONS.index(precision))
    kc = np.full(n, list(KV_BYTES_PER_ELEMENT).index("fp8" if precision != "bf16" else "bf16"))
    model_f, hw = ARR.models(mc), ARR.accelerators(hc)
    formats = resolve_formats(hw, pc, kc, ARR.pinned_weight_format[mc], ARR.pinned_expert_format[mc])[0]
    layout = Layout(tp=np.full(n, tp), dp=np.full(n, dp), ep=np.full(n, ep), pp=np.full(n, pp),
                    scale_up_domain_size=hw.scale_up_domain_size)
    return model_f, hw, formats, layout


@pytest.mark.parametrize("model, hardware, precision, tp, dp, ep, pp", [
    ("llama-3.3-70b", "h100-sxm", "fp8", 4, 1, 1, 1),
    ("llama-3.1-405b", "h100-sxm", "bf16", 8, 1, 1, 2),
    ("deepseek-v3", "h200-sxm", "fp8", 1, 16, 16, 1),  # two-batch overlap on (wide EP across domains)
])
def test_step_given_constants_of_one_combination_equals_the_step_alone(model, hardware, precision, tp, dp, ep, pp):
    n = 12
    m, hw, fm, lay = _rows(model, hardware, precision, n, tp, dp, ep, pp)
    eff = Efficiency.from_assumptions(DEFAULT, DEFAULT_DEPLOYMENT)
    batch = np.geomspace(dp, 4096 * dp, n).round()
    context = np.geomspace(256, 65536, n).round()
    repl = kv_replication(lay.tp, m.kv_shard_heads)
    kv = kv_bytes_read_per_query(context, m.kv_elements_per_token_per_layer, fm.kv_bytes_per_element,
                                 m.num_global_layers, m.num_sliding_layers, m.sliding_window_tokens, m.index_topk,
                                 m.indexer_bytes_per_token_per_layer)
    args = dict(batch_size=batch, context_tokens=context, kv_bytes_per_sequence=kv, kv_replication=repl, model=m,
                hardware=hw, layout=lay, formats=fm, eff=eff)
    alone = decode_step(**args)
    one = decode_constants(*(_first(x) for x in (m, hw, lay, fm)), eff)  # scalars of the one combination
    assert all(np.ndim(getattr(one, f.name)) == 0 for f in fields(one))
    given = decode_step(**args, const=one)
    for f in fields(alone):
        np.testing.assert_allclose(np.broadcast_to(getattr(given, f.name), (n,)),
                                   np.broadcast_to(getattr(alone, f.name), (n,)), rtol=1e-12, err_msg=f.name)
    assert np.all(np.isfinite(alone.tpot_s)) and np.all(np.diff(alone.tpot_s) > 0)  # a real, growing step


@pytest.mark.parametrize("model, hardware, precision, tp, dp, ep, pp", [
    ("llama-3.3-70b", "h100-sxm", "fp8", 4, 1, 1, 1),
    ("gpt-oss-120b", "b200", "fp4", 2, 1, 1, 2),  # sliding window, MoE, pipeline
    ("deepseek-v3.2", "h200-sxm", "fp8", 1, 16, 16, 1),  # sparse attention (indexer), two-batch overlap on
])
@pytest.mark.parametrize("stream", [False, True])
def test_prefill_given_constants_of_one_combination_equals_the_step_alone(model, hardware, precision, tp, dp, ep, pp,
                                                                          stream):
    n = 10
    m, hw, fm, lay = _rows(model, hardware, precision, n, tp, dp, ep, pp)
    eff = Efficiency.from_assumptions(DEFAULT, DEFAULT_DEPLOYMENT)
    prompt = np.geomspace(64, 131072, n).round()
    requests = np.maximum(8192.0 / prompt, 1.0)
    args = dict(prompt_tokens=prompt, requests_per_step=requests, kv_bytes_per_sequence=prompt * 7e4, model=m,
                hardware=hw, layout=lay, formats=fm, eff=eff, stream_input_embedding=stream,
                prefix_tokens=np.where(np.arange(n) % 2 == 0, 0.0, 4096.0))
    alone = prefill_step(**args)
    one = prefill_constants(*(_first(x) for x in (m, hw, lay, fm)), eff, stream)  # scalars of the one combination
    assert all(np.ndim(getattr(one.step, f.name)) == 0 for f in fields(one.step))
    given = prefill_step(**args, const=one)
    for f in fields(alone):
        np.testing.assert_allclose(np.broadcast_to(getattr(given, f.name), (n,)),
                                   np.broadcast_to(getattr(alone, f.name), (n,)), rtol=1e-12, err_msg=f.name)
    assert np.all(np.isfinite(alone.time_s)) and np.all(alone.time_s > 0)  # a real step
    assert np.all(np.diff(alone.time_s[::2]) > 0)  # longer whole prompts take longer


def _first(bundle):
    """The bundle's first row as scalars."""
    return type(bundle)(**{f.name: (v[0] if isinstance(v := getattr(bundle, f.name), np.ndarray) and v.ndim else v)
                           for f in fields(bundle)})
