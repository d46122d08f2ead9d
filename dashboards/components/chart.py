"""Draw Altair charts fast: each Vega-Lite spec is built once per content key, without re-validation.

Building an Altair chart and converting it (``to_dict``, with JSON-schema validation and deep copies)
costs 50-150 ms per chart on the 2-core reference machine: more than the econ call of most reruns.
:func:`show` builds the spec once for a ``cache_key`` that determines the chart (the catalog token and
the scenario, the page's own inputs) and keeps it in a small process-wide LRU, so a rerun that does
not change the chart's inputs only sends it. The spec is made with ``validate=False``: the chart
functions of :mod:`dashboards.charts` are checked by the tests (AppTest reads their specs), not on
every rerun.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

import streamlit as st

from dashboards import charts

MAX_SPECS = 256
"""Specs kept (LRU), across sessions: a spec is a few tens of kB."""
MAX_SPEC_BYTES = 64 * 2**20
"""Bytes of specs kept (their JSON size), across sessions: a chart with its data inline can be megabytes. [B]"""

_specs: OrderedDict = OrderedDict()
_sizes: dict = {}
_lock = threading.Lock()


def spec(build, *args, cache_key=None, **kwargs) -> dict:
    """The Vega-Lite dict of ``build(*args, **kwargs)``; memoized on ``(build, cache_key)`` when a key is given."""
    if cache_key is None:
        return _as_dict(build(*args, **kwargs))
    key = (getattr(build, "__module__", ""), getattr(build, "__qualname__", repr(build)), cache_key)
    with _lock:
        if key in _specs:
            _specs.move_to_end(key)
            return _specs[key]
    made = _as_dict(build(*args, **kwargs))
    size = spec_bytes(made)
    if size > MAX_SPEC_BYTES // 4:  # drawn, not kept
        return made
    with _lock:
        _specs[key] = made
        _sizes[key] = size
        while len(_specs) > MAX_SPECS or (sum(_sizes.values()) > MAX_SPEC_BYTES and len(_specs) > 1):
            old, _ = _specs.popitem(last=False)
            _sizes.pop(old, None)
    return made


SIZE_SAMPLE_ROWS = 32
"""Rows of each inline dataset whose JSON is measured by :func:`spec_bytes` (the rest scaled from them)."""


def spec_bytes(spec: dict) -> int:
    """About the JSON size of a Vega-Lite dict, for the bound of the specs kept (:data:`MAX_SPEC_BYTES`). [B]

    The spec without its inline datasets is measured whole; each dataset (a list of records) from its first
    :data:`SIZE_SAMPLE_ROWS` records scaled to its length: a spec's data is nearly all of its size, and its records
    are alike, so the estimate is within tens of percent of ``len(json.dumps(spec))`` without encoding every record
    (~5 ms for the Quote checker's chart on each rerun with new data: issue 19.5; tests/dashboards/test_table.py)."""
    if not isinstance(spec, dict):
        return len(json.dumps(spec, default=str))
    datasets = spec.get("datasets") if isinstance(spec.get("datasets"), dict) else {}
    rest = len(json.dumps({k: v for k, v in spec.items() if k != "datasets"}, default=str))
    total = rest
    for values in datasets.values():
        if isinstance(values, list) and len(values) > SIZE_SAMPLE_ROWS:
            head = len(json.dumps(values[:SIZE_SAMPLE_ROWS], default=str))
            total += int(head * len(values) / SIZE_SAMPLE_ROWS)
        else:
            total += len(json.dumps(values, default=str))
    return total


def schema_key(*frames) -> tuple:
    """The column names and dtypes of Polars frames (the types Altair infers for encodings and tooltips): the part of
    a chart's structure its data sets, for :func:`filled`."""
    return tuple(tuple(f.schema.items()) for f in frames)


def filled(template, structure: tuple, frames, *, key: str, max_entries: int = 8) -> dict:
    """The Vega-Lite dict of a layered chart from its structure, kept, and its layers' data, filled in (issue 19.5).

    A chart whose structure (marks, encodings, scales, titles, legend order) depends on a few values only is built
    once per ``structure`` by ``template(*structure, schema_key(*frames))`` with empty frames of the same schemas
    (kept in the process's bounded store, :func:`dashboards.components.memory.memo`); a rerun with other numbers
    fills each layer's data as Altair's ``to_dict`` does (its data transformer on the Polars frame, the dataset
    named by :func:`altair.vegalite.v6.api._dataset_name`), without building and converting the Altair objects
    (50-150 ms a chart). The result equals ``to_dict(validate=False)`` of the chart built whole (tests/dashboards).

    Parameters
    ----------
    template : callable(*structure, schema) -> dict, the chart's ``to_dict(validate=False)`` built from empty frames
    structure : tuple of picklable values, everything but the data the chart depends on
    frames : sequence of pl.DataFrame, each layer's data, in layer order (one frame for a single-view chart)
    key : str, names the template in the store
    """
    import altair as alt
    from altair.vegalite.v6.api import _dataset_name

    from dashboards.components import memory

    structure = (*structure, schema_key(*frames))
    spec = memory.memo(template, *structure, key=(key, structure), max_entries=max_entries)  # a copy on a hit
    datasets = {}
    for layer, frame in zip(spec["layer"] if "layer" in spec else [spec], frames):  # a single view: its own data
        values = alt.data_transformers.get()(frame)["values"]
        name = _dataset_name(values)
        datasets[name] = values
        layer["data"] = {"name": name}
    spec["datasets"] = datasets
    return spec


def _as_dict(chart) -> dict:
    """A chart's Vega-Lite dict: an Altair chart converted without re-validation, or a spec built as a dict."""
    return chart if isinstance(chart, dict) else chart.to_dict(validate=False)


def show(build, *args, key: str, cache_key=None, container=None, **kwargs) -> None:
    """Draw ``build(*args, **kwargs)`` (an Altair chart) as a Vega-Lite chart, its spec cached on ``cache_key``."""
    (container or st).vega_lite_chart(spec=spec(build, *args, cache_key=cache_key, **kwargs), key=key)


def show_panels(build, *args, key: str, cache_key=None, **kwargs) -> None:
    """Draw the side-by-side panels of an ``hconcat`` chart in ``st.columns`` (stacked on a phone)."""
    def panels_spec():
        return [_as_dict(p) for p in charts.panels(build(*args, **kwargs))]

    ck = None if cache_key is None else ("panels", getattr(build, "__qualname__", repr(build)), cache_key)
    if ck is None:
        specs = panels_spec()
    else:
        specs = spec(_Built, panels_spec, cache_key=ck)
    for i, (col, s) in enumerate(zip(st.columns(len(specs)), specs)):
        col.vega_lite_chart(spec=s, key=f"{key}.{i}")


class _Built:
    """Adapter so :func:`spec` can memoize a list of specs: ``_Built(fn).to_dict()`` is ``fn()``."""

    __qualname__ = "_Built"

    def __init__(self, fn):
        self.fn = fn

    def to_dict(self, validate=False):
        return self.fn()
