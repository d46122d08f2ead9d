"""The small-input path of :func:`econ.engine.evaluate` (issue 20.4): a frame of a few rows in plain Python scalars.

A one-row call of the vectorized path spends ~1-2 ms in a few hundred numpy calls on 1-element arrays (reading and
range-checking ~40 input columns, resolving the layout, gathering the catalog's facts, the combination's constants and
collectives, the decode step, the status, the cost chain, the result lists). Almost all of it depends on the row
minus its batch and its context: this module keeps that part, per row, in a bounded cache, and evaluates the rest in
plain Python with the fused kernel's own row function (:func:`econ.engine.fused.pure_kernel`: the source of
``econ/engine/_fused_kernel.py`` run without numba). One engine, no second copy of the physics:

- **miss**: the ordinary vectorized path runs once (:func:`econ.engine.evaluate` itself, inside
  :class:`econ.engine.fused.capturing`, which routes the block through the fused kernel's table,
  :func:`econ.engine.fused.combination_table`, built from the engine's own terms, and evaluates its rows with the
  plain-Python kernel). Its result is returned, and each clean row's table row is kept (a row that is infeasible for a
  reason other than capacity, or whose context exceeds the model's, is not kept: every later call of it runs the
  vectorized path);
- **hit**: the row's batch and context columns are read and checked (``batch_size``, ``context_tokens``,
  ``input_len``, ``output_len``: the ranges of :func:`econ.engine.frame._read_inputs`, from
  :mod:`econ.vocabulary`; a value out of range, a context beyond the model's maximum or a batch below the layout's
  ``dp`` (:func:`econ.physics.deployment.layout_problems`) runs the vectorized path, which raises or reports it with
  its own message), the decode context as :func:`econ.physics.serving.mean_decode_context_tokens`, and the kernel's
  row (:func:`econ.engine.fused.pure_row`); the output is built as :func:`econ.engine.evaluate` builds it (same
  columns, order, dtypes and nulls: :data:`econ.engine.frame._UNGATED` decides which columns are null on an infeasible
  row). A non-finite value or a division by zero also runs the vectorized path.

The cache key of a row is everything the kept part can depend on: the frame's column names and dtypes, the row's
values except its batch and context columns, ``strict``, and the Assumptions, DeploymentAssumptions and Economics
values; entries are per catalog object (:class:`econ.tables.catalog.CatalogCache`: a weak reference, so another or a
re-created catalog is a miss), least recently used dropped beyond :data:`ENTRIES`.

Routing (from :func:`econ.engine.evaluate`): at most :data:`ROWS` rows in one block, no ``physics`` memo, every
requested column in :data:`COLUMNS` (the kernel's :data:`econ.engine.fused.COLUMNS` and the id columns; all columns
stay on the vectorized path), and a row the fused kernel covers (decode only, no ``spec_*`` columns, no KV offload or
prefix tiers, no disaggregation, no arrival rate: decided by the vectorized path on the miss, and remembered for a
one-row key). ``ECON_SMALL=0`` (or ``false``/``off``/``no``) in the environment turns the path off, and so does
``ECON_FUSED=0`` (the numpy reference path everywhere). Results equal the
vectorized path's within 1e-9 relative, nulls, flags, ids, dtypes and column order exactly
(tests/engine/test_small.py). Numba is not needed.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import polars as pl

from econ.engine import fused
from econ.engine.arrays import catalog_arrays
from econ.physics.performance import WALLS
from econ.physics.serving import mean_decode_context_tokens
from econ.tables.catalog import CatalogCache
from econ.vocabulary import MAX_BATCH, MAX_CONTEXT

ROWS = 16
"""Rows of a call from which the vectorized path runs (at most this many rows: the small path)."""

ENTRIES = 4096
"""Rows kept in the cache (least recently used dropped first)."""

_IDS = ("model", "hardware", "precision", "kv_precision", "basis")
_ALL = _IDS + tuple(sorted(fused.COLUMNS))
COLUMNS = frozenset(_ALL)
"""Result columns the small path returns: :data:`econ.engine.fused.COLUMNS` and the input's ids."""

_VARYING = ("batch_size", "context_tokens", "input_len", "output_len")
"""Input columns read on every call (not in the key)."""

_NAN = object()
"""Stands for a NaN input value in a cache key (NaN is not equal to itself: a key holding one would never be found)."""

_CACHE = CatalogCache(ENTRIES)
_NOT_COVERED = "not covered"
"""Value kept for a one-row key the fused kernel does not cover (the vectorized path runs without a capture)."""


class Rules(NamedTuple):
    """What the small path reads of :mod:`econ.engine.frame` (which imports this module; passed in, not imported):
    its input defaults (``_INPUT_DEFAULTS``) and its result-column sets (``_UNGATED``, ``_LAYOUT_GATED``,
    ``_INT_COLUMNS``, ``_TEXT_COLUMNS``)."""

    input_defaults: dict
    ungated: frozenset
    layout_gated: frozenset
    int_columns: frozenset
    text_columns: frozenset


class _Entry(NamedTuple):
    """What a row keeps: its id labels, its table row (:func:`econ.engine.fused.combination_table`, as floats), its
    $/GPU-hour, its layout's dp, its model's maximum context [tokens] and its ``output_len_cv``."""

    ids: tuple
    table: list
    usd_per_gpu_hour: float
    dp: float
    max_context_tokens: float
    output_len_cv: float


_OFF = ("0", "false", "off", "no")


def enabled() -> bool:
    """False when ``ECON_SMALL`` or ``ECON_FUSED`` (:func:`econ.engine.fused.enabled`: the numpy reference path
    everywhere) is 0/false/off/no in the environment."""
    env = os.environ
    return (env.get("ECON_SMALL", "1").strip().lower() not in _OFF
            and env.get("ECON_FUSED", "auto").strip().lower() not in _OFF)


def evaluate(full, rules: Rules, points: pl.DataFrame, catalog, assumptions, economics, deployment, strict: bool,
             want: tuple, block_rows: int, output: str):
    """:func:`econ.engine.evaluate`'s result by the small path, or None where it does not apply (the caller then
    runs the vectorized path). ``full``: :func:`econ.engine.evaluate` (run on a miss); ``rules``: :class:`Rules`.
    Raises what the vectorized path raises (it is the one that runs on a miss or on any doubt)."""
    n = points.height
    if n > ROWS or n > block_rows or fused.capture_open() or not enabled():
        return None
    if not COLUMNS.issuperset(want) or len(set(want)) != len(want):
        return None
    names = points.columns
    if "context_limit_tokens" in names:  # a served window other than the model's: the kept maximum would not hold
        return None
    rows = points.rows()
    pos = tuple(names.index(c) if c in names else -1 for c in _VARYING)
    vary = frozenset(pos)
    call = (tuple(names), tuple(points.dtypes), bool(strict), assumptions, deployment, economics)
    keys = [(call, tuple(_NAN if v != v else v for j, v in enumerate(r) if j not in vary)) for r in rows]
    try:
        entries = [_CACHE.get(catalog, k) for k in keys]
    except TypeError:  # an unhashable value (a list column, an unhashable assumption): not cached
        return None
    if any(e is _NOT_COVERED for e in entries):
        return None
    if all(e is not None for e in entries):
        recs = _hits(rules, rows, pos, entries)
        return None if recs is None else _output(rules, want, recs, output)
    return _miss(full, rules, points, catalog, assumptions, economics, deployment, strict, want, block_rows, output,
                 rows, pos, keys)


def _miss(full, rules, points, catalog, assumptions, economics, deployment, strict, want, block_rows, output, rows,
          pos, keys):
    """The vectorized path, once (its block through the plain-Python kernel), and its clean rows kept."""
    with fused.capturing() as captured:
        res = full(points, catalog, assumptions, economics, deployment, strict=strict, columns=_ALL,
                   block_rows=block_rows, threads=1, output="dict")
    n = len(rows)
    recs = [{c: res[c][i] for c in _ALL} for i in range(n)]
    if not captured and n == 1:
        _CACHE.put(catalog, keys[0], _NOT_COVERED)
    elif len(captured) == 1 and captured[0] is not None:
        _keep(rules, catalog, captured[0], recs, rows, pos, keys, points.columns)
    return _output(rules, want, recs, output)


def _keep(rules, catalog, block: dict, recs: list, rows, pos, keys, names) -> None:
    """Keep each clean row of a captured block (see :class:`econ.engine.fused.capturing`), after checking that this
    module reads its batch and context as the vectorized path did."""
    arr = catalog_arrays(catalog)
    dp_col = fused.FIELDS.index("dp")
    cv_at = names.index("output_len_cv") if "output_len_cv" in names else -1
    for i, r in enumerate(rows):
        if block["blocked"][i]:
            continue
        cv = r[cv_at] if cv_at >= 0 and r[cv_at] is not None else rules.input_defaults["output_len_cv"]
        t = block["table"][block["index"][i]]
        max_ctx = float(arr.models(arr.model_ids.index(recs[i]["model"])).max_context_tokens)
        entry = _Entry(tuple(recs[i][c] for c in _IDS), t, block["usd_per_gpu_hour"][i], t[dp_col], max_ctx,
                       float(cv))
        got = _row_inputs(rules, r, pos, entry)
        if got != (block["batch"][i], block["decode_context_tokens"][i], block["capacity_context_tokens"][i]):
            continue  # pragma: no cover - this module would read the row otherwise than the engine: never kept
        _CACHE.put(catalog, keys[i], entry)


def _whole(v, lo: float, hi: float):
    """``v`` as a float when it is a whole number in [lo, hi] (``econ.validate.require_integer``'s test), else None."""
    if v is None or isinstance(v, str):
        return None
    x = float(v)
    return x if lo <= x <= hi and x == round(x) else None


def _row_inputs(rules: Rules, r: tuple, pos: tuple, entry: _Entry):
    """(batch, decode context, capacity context) of a row as :func:`econ.engine.frame._block_physics` derives them
    from :func:`econ.engine.frame._read_inputs`' columns, or None where the vectorized path must run (a value out of
    its range, a context beyond the model's maximum, a batch below the layout's dp)."""
    pb, pc, pi, po = pos
    b = _whole(r[pb], 1, MAX_BATCH)  # _read_inputs: require_integer("batch_size", ..., 1, MAX_BATCH)
    if b is None or b < entry.dp:  # layout_problems: batch_size >= dp (a given layout)
        return None
    lens = []
    for p, name in ((pi, "input_len"), (po, "output_len")):
        v = None if p < 0 else r[p]
        if v is None:
            lens.append(rules.input_defaults[name])
        else:  # _read_inputs: require_integer(name, ..., 1, MAX_CONTEXT)
            x = _whole(v, 1, MAX_CONTEXT)
            if x is None:
                return None
            lens.append(x)
    inl, outl = lens
    c = None if pc < 0 else r[pc]
    if c is None or (isinstance(c, float) and c != c):  # null or NaN: not given
        dctx, cctx = mean_decode_context_tokens(inl, outl, entry.output_len_cv), inl + outl
    else:
        x = _whole(c, 1, MAX_CONTEXT)  # _read_inputs: require_integer("context_tokens", ..., 1, MAX_CONTEXT)
        if x is None:
            return None
        dctx = cctx = x
    if cctx > entry.max_context_tokens:  # context_over: the vectorized path raises or reports it
        return None
    return b, dctx, cctx


def _hits(rules: Rules, rows, pos, entries):
    """Each row's result dict from its kept entry and its batch and context, or None where the vectorized path must
    run."""
    gated = [c for c in fused.COLUMNS if c not in rules.ungated and c not in rules.layout_gated
             and c not in ("feasible", "binding_wall")]  # float columns null on an infeasible row
    row_fn = fused.pure_kernel().decode_cost_row
    recs = []
    for r, e in zip(rows, entries):
        got = _row_inputs(rules, r, pos, e)
        if got is None:
            return None
        try:
            values = fused.pure_row(row_fn, *got, False, e.table, e.usd_per_gpu_hour)  # in fused.OUTPUTS' order
        except (ArithmeticError, ValueError):
            return None
        if any(x - x != 0.0 for x in values[2:]):  # NaN or inf: the vectorized path refuses or nulls it
            return None
        rec = dict(zip(_IDS, e.ids))
        rec.update(zip(fused.OUTPUTS, values))
        f = rec["feasible"]
        rec.update(binding_wall=WALLS[rec["binding_wall"]], max_batch_size=int(rec["max_batch_size"]))
        if not f:
            for c in gated:
                rec[c] = None
        recs.append(rec)
    return recs


_SCHEMAS: dict = {}
"""want -> the Polars schema of :func:`econ.engine.evaluate`'s frame for those columns."""


def _schema(rules: Rules, want: tuple) -> dict:
    """The dtypes :func:`econ.engine.frame._result_lists` gives these columns (text, whole numbers, flags, floats)."""
    got = _SCHEMAS.get(want)
    if got is None:
        got = {c: pl.String if c in rules.text_columns else pl.Int64 if c in rules.int_columns else
               pl.Boolean if c == "feasible" else pl.Float64 for c in want}
        if len(_SCHEMAS) > 256:
            _SCHEMAS.clear()
        _SCHEMAS[want] = got
    return got


def _output(rules: Rules, want: tuple, recs: list, output: str):
    """The result as :func:`econ.engine.evaluate` returns it: a frame, ``{column: list}`` or one dict per row."""
    if output == "records":
        return [{c: rec[c] for c in want} for rec in recs]
    if output == "dict":
        return {c: [rec[c] for rec in recs] for c in want}
    return pl.DataFrame([tuple(rec[c] for c in want) for rec in recs], schema=_schema(rules, want), orient="row")
