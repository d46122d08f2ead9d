"""The one search vocabulary every analysis shares: the batch grid and the Pareto frontier.

Every search of deployments (the optimizer and frontier, hardware comparison, head to head, quote floors,
``econ cost``'s automatic batch) draws its batch sizes from :func:`octave_grid` / :func:`batch_grid` and keeps
its Pareto-optimal points with :func:`pareto_frontier`, so two pages asked the same question search the same
batches and keep the same points.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl


def octave_grid(steps_per_octave: int, top: float) -> np.ndarray:
    """Batch sizes 2^(k / steps_per_octave), rounded to whole sequences, distinct, up to ``top``.

    Parameters
    ----------
    steps_per_octave : int >= 1
        Sizes per doubling (4: each step is at most 19% above the last). [-]
    top : float >= 1
        Largest size. [sequences]

    Returns
    -------
    1-D int64 array, ascending, starting at 1. [sequences]

    Notes
    -----
    Geometric grids of this kind are what throughput/latency sweeps use (SemiAnalysis InferenceX concurrency
    sweeps double; MLPerf offline runs at the capacity limit); a geometric step keeps the relative error of the
    batch, hence of the cost, bounded over six orders of magnitude.
    """
    steps = int(steps_per_octave)
    k = np.arange(0, int(math.floor(steps * math.log2(max(float(top), 1.0)))) + 1)
    return np.unique(np.round(2.0 ** (k / steps)).astype(np.int64))


def batch_grid(top, steps_per_octave: int, cap: float) -> np.ndarray:
    """Per-row batch grids: :func:`octave_grid` up to min(top, cap) for each row, plus that maximum itself.

    Parameters
    ----------
    top : 1-D array of float
        Largest batch of each row (its KV-capacity wall). [sequences]
    steps_per_octave : int >= 1
    cap : float
        Engine limit on the batch (``Assumptions.max_batch_per_group``). [sequences]

    Returns
    -------
    2-D float array (rows x grid sizes); NaN where a size is above the row's maximum (not a row to evaluate).
    """
    top = np.minimum(np.asarray(top, dtype=float), cap)
    grid = octave_grid(steps_per_octave, cap).astype(float)
    g = np.broadcast_to(grid, (len(top), len(grid)))
    return np.concatenate([np.where(g <= top[:, None], g, np.nan), top[:, None]], axis=1)


def pareto_frontier(points: pl.DataFrame, *, by: tuple[str, ...] = ("hardware", "scale_up_domain_size"),
                    x: str = "tokens_per_s_per_user", y: str = "usd_per_m_output_tokens_all_in",
                    minimize_y: bool = True) -> pl.DataFrame:
    """Pareto-optimal rows of ``points`` per group: no other row is both faster per user and better on ``y``.

    Parameters
    ----------
    points : pl.DataFrame with columns ``x``, ``y`` and ``by``
    by : group columns (one frontier per accelerator and domain size by default)
    x : maximized column (tokens/s per user)
    y : column minimized (cost, ``minimize_y=True``) or maximized (throughput per GPU, ``minimize_y=False``)

    Returns
    -------
    pl.DataFrame, the frontier rows sorted by group and ascending ``x``.

    Notes
    -----
    Sort each group by x descending (ties: best y first); a row is on the frontier iff its y beats
    the best y of every faster row (a running minimum per group: ``np.minimum.accumulate`` over the
    group's slice of one ``np.lexsort`` on numeric keys).
    """
    if points.height == 0:
        return points
    sign = 1.0 if minimize_y else -1.0
    group = points.select(pl.struct(list(by)).rank("dense").alias("g"))["g"].to_numpy()
    xs = points[x].to_numpy().astype(float)
    ys = points[y].to_numpy().astype(float) * sign
    order = stable_order(group, -xs, ys)  # by group, x descending, best y first (numeric keys only)
    g, yo = group[order], ys[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    keep = []
    for a, b in zip(starts, np.r_[starts[1:], len(g)]):  # one running minimum per group (a few dozen groups)
        seg = yo[a:b]
        best_faster = np.r_[np.inf, np.minimum.accumulate(seg)[:-1]]
        keep.append(order[a:b][seg < best_faster])
    return points[np.sort(np.concatenate(keep))].sort([*by, x])


def cheapest(points: pl.DataFrame, *, by: tuple[str, ...] = ("hardware",),
             cost: str = "usd_per_m_output_tokens_all_in", speed: str = "tokens_per_s_per_user") -> pl.DataFrame:
    """Per group, the cheapest point (ties: the faster per user, then the first): the one rule by which every search
    names its answer (the optimizer's best, the hardware comparison's winners, ``econ cost``'s searched layout).

    Parameters
    ----------
    points : pl.DataFrame with ``by``, ``cost`` and ``speed`` (filter it to the points that meet the SLO first)
    by : group columns; () = one answer overall
    cost : the column minimized [USD per M tokens]; speed : the tie-break, maximized [tokens/s per user]

    Returns
    -------
    pl.DataFrame, one row per group in cost order.
    """
    # the order of two columns, then the winners' rows gathered: the rows and order of
    # ``points.sort([cost, speed], descending=[False, True], maintain_order=True).unique(subset=by, keep="first",
    # maintain_order=True)`` (or its head(1)) without sorting every column of a wide frame (~10 ms on Hardware
    # comparison's ~27,000 points: issue 19.5; tests/analyses/test_search.py)
    order = points.select(pl.arg_sort_by([cost, speed], descending=[False, True], maintain_order=True)).to_series()
    if not by:
        return points[order[:1]]
    keys = points.select(by)[order]
    first = keys.select((pl.col(by[0]) if len(by) == 1 else pl.struct(list(by))).is_first_distinct()).to_series()
    return points[order.filter(first)]


def stable_order(*keys: np.ndarray) -> np.ndarray:
    """``np.lexsort(keys[::-1])``: the permutation that sorts by the first key, then the next, ties in row order.

    Parameters
    ----------
    *keys : 1-D numeric arrays of one length (no nulls; NaN sorts last, -0.0 equals 0.0, as in numpy)

    Returns
    -------
    1-D int64 array. Polars' stable multi-column argsort, the same permutation as numpy's (a stable sort on the same
    comparisons has one result) in about half the time on two cores (issue 19.5; tests/analyses/test_search.py).
    """
    if not keys or len(keys[0]) == 0:
        return np.lexsort(keys[::-1]) if keys else np.zeros(0, dtype=np.int64)
    frame = pl.DataFrame({f"k{i}": np.asarray(k) for i, k in enumerate(keys)})
    return frame.select(pl.arg_sort_by(frame.columns, maintain_order=True)).to_series().to_numpy().astype(np.int64)


__all__ = ["octave_grid", "batch_grid", "pareto_frontier", "cheapest", "stable_order"]

