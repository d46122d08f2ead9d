"""Front doors over the one engine: grids of configurations, one model on one accelerator, batch curves.

Nothing here computes physics: :func:`cost_table` (``econ cost`` and the Cost explorer) and
:func:`batch_curve` build candidate rows and hand them to :func:`econ.engine.evaluate`; the layout
``econ cost`` picks when none is given is the cheapest of the valid candidates the engine prices
(:func:`choose_layout`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import polars as pl

from econ.assumptions import DEFAULT, DEFAULT_DEPLOYMENT, Assumptions, DeploymentAssumptions, Economics
from econ.catalog import Catalog
from econ.deployment import layout_problems
from econ.engine import MAX_BATCH, MAX_CONTEXT, MAX_PARALLEL, MODES, evaluate
from econ.errors import DoesNotFitError, InvalidInputError
from econ.memory import weight_bytes_resident
from econ.precision import WEIGHT_BYTES_PER_PARAM
from econ.validate import require_in_range

__all__ = ["grid", "with_ideal", "make_economics", "cost_table", "batch_curve", "choose_layout", "layout_candidates",
           "MAX_BATCH", "MAX_CONTEXT"]

_LAYOUT_KEYS = ("num_gpus", "tp", "dp", "ep", "pp")
LAYOUT_COST_TOLERANCE_FRAC = 0.02
"""Layouts whose $/M output tokens are within 2% of the cheapest tie; the fastest per user wins (a
presentation choice: the model's own error is larger than 2%, see benchmarks/validate.py)."""
_SCHEMA = {"num_gpus": pl.Int64, "tp": pl.Int64, "dp": pl.Int64, "ep": pl.Int64, "pp": pl.Int64,
           "context_tokens": pl.Int64, "disaggregated": pl.Boolean}


def grid(**axes) -> pl.DataFrame:
    """Cartesian product of named axes as a frame (``grid(model=[...], batch_size=[1, 8, 64])``).

    Scalars are broadcast; each list becomes an axis. Uses Polars cross joins (no Python loop over rows).
    """
    frame = pl.DataFrame({"_": [0]})
    for name, values in axes.items():
        vals = values if isinstance(values, (list, tuple, np.ndarray, pl.Series)) else [values]
        frame = frame.join(pl.DataFrame({name: list(vals) if not isinstance(vals, pl.Series) else vals}), how="cross")
    return frame.drop("_")


def with_ideal(assumptions: Assumptions) -> Assumptions:
    """The same assumptions with every efficiency at the pure roofline (see assumptions.IDEAL)."""
    from econ.assumptions import IDEAL_OVERRIDES
    return replace(assumptions, **IDEAL_OVERRIDES)


def make_economics(catalog: Catalog, *, region: str | None = None, facility: str | None = None,
                   base: Economics = Economics(), **overrides) -> Economics:
    """Economics from catalog ids plus explicit overrides (explicit values win).

    Parameters
    ----------
    region : str, optional
        ``power_prices.csv`` region_id: sets ``usd_per_kwh``.
    facility : str, optional
        ``facilities.csv`` id: sets ``pue`` and ``build_usd_per_mw_it``.
    overrides : Economics fields; ``None`` values are ignored.

    Raises
    ------
    UnknownIdError, InvalidInputError
    """
    fields_ = {}
    if region is not None:
        fields_["usd_per_kwh"] = catalog.power_price(region)["usd_per_kwh"]
    if facility is not None:
        f = catalog.facility(facility)
        fields_.update(pue=f["pue"], build_usd_per_mw_it=f["build_usd_per_mw_it"])
    fields_.update({k: v for k, v in overrides.items() if v is not None})
    return replace(base, **fields_)


def _pow2_upto(n: int) -> list[int]:
    return [1 << k for k in range(int(math.log2(max(n, 1))) + 1)]


def layout_candidates(catalog: Catalog, *, model: str, hardware: str, precision: str, num_gpus: int | None = None,
                      tp: int | None = None, dp: int | None = None, ep: int | None = None, pp: int | None = None,
                      assumptions: Assumptions = DEFAULT, deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT,
                      scale_up_domain_size: int | None = None) -> pl.DataFrame:
    """Every valid layout (num_gpus, tp, dp, ep, pp) ``econ cost`` chooses among; given values are pinned.

    Parameters
    ----------
    num_gpus, tp, dp, ep, pp : int, optional; None = free
    scale_up_domain_size : int, optional, override of the catalog's domain

    Returns
    -------
    pl.DataFrame with columns num_gpus, tp, dp, ep, pp (possibly empty: the pins admit no valid layout).

    Notes
    -----
    GPU counts: the given one, else powers of two from the fewest accelerators whose usable HBM holds the
    weights (N0) up to max(N0, scale-up domain): more GPUs than the weights need buy KV capacity, hence
    batch (Llama-3.1-70B fp8 on one H100 has room for a handful of sequences). Families: tensor x
    pipeline parallelism (tp, pp powers of two) for every model; for MoE models also attention-DP + EP
    (dp > 1 with ep = tp x dp: DeepSeek-V3 report, sec. 3.4) and tensor-parallel attention with
    expert-parallel FFNs (ep > 1, dp = 1). Dense models take dp = ep = 1 (dp replicas are separate
    instances). Unless tp, dp or pp is pinned, each stage fills the scale-up domain before the pipeline
    crosses domains (stage width = the widest power of two <= min(num_gpus, domain) that divides it): a
    pipeline inside a domain halves the speed per user for the same weight bandwidth (seed 002: pipeline
    stages add capacity, not bandwidth). Validity: :func:`econ.deployment.layout_problems`.
    """
    m, h = catalog.model(model), catalog.accelerator(hardware)
    domain = float(scale_up_domain_size or h["scale_up_domain_size"])
    if num_gpus is None and all(v is not None for v in (tp, pp)):
        num_gpus = tp * (dp or 1) * pp
    if num_gpus is not None:
        counts = [num_gpus]
    else:
        w = weight_bytes_resident(m["total_params"], m["embedding_params"], m["lm_head_params"],
                                  WEIGHT_BYTES_PER_PARAM[precision], assumptions.embedding_bytes_per_param)
        n0 = int(2 ** math.ceil(math.log2(max(math.ceil(w / (h["hbm_capacity_bytes"] * assumptions.usable_hbm_frac)),
                                                1))))
        counts = [c for c in (n0 << k for k in range(21)) if c <= max(n0, domain) and c <= MAX_PARALLEL]
    moe = (m["num_experts"] or 0) > 0
    rows = []
    for n in counts:  # a handful of GPU counts x powers of two: a few hundred candidates at most
        divisors = _pow2_upto(n) if n & (n - 1) == 0 else [k for k in range(1, n + 1) if n % k == 0]
        for t in ([tp] if tp is not None else divisors):
            for d in ([dp] if dp is not None else (divisors if moe else [1])):
                if n % (t * d):
                    continue
                p = n // (t * d)
                if pp is not None and p != pp:
                    continue
                for e in ([ep] if ep is not None else ([1, t * d] if moe else [1])):
                    if moe and dp is None and ep is None and d > 1 and e == 1:
                        continue  # dp x tensor-parallel experts: dominated by EP
                    rows.append((n, t, d, e, p))
    if not rows:
        return pl.DataFrame(schema={k: pl.Int64 for k in _LAYOUT_KEYS})
    f = pl.DataFrame(rows, schema={k: pl.Int64 for k in _LAYOUT_KEYS}, orient="row").unique(maintain_order=True)
    a = {k: f[k].to_numpy().astype(float) for k in _LAYOUT_KEYS}
    bad = layout_problems(a["tp"], a["dp"], a["ep"], a["pp"], a["num_gpus"], domain,
                          float(m["num_attention_heads"]), float(m["kv_shard_heads"]), float(m["num_layers"]),
                          float(m["num_experts"] or 0), kv_head_replication=deployment.kv_head_replication)
    f = f.filter(pl.Series(bad < 0))
    if pp is None and tp is None and dp is None:
        # fill the scale-up domain before pipelining across domains (what serving engines do): the stage
        # width tp x dp is the widest power of two <= min(num_gpus, domain) dividing num_gpus, when valid
        widest = pl.Series([max(k for k in _pow2_upto(min(n, int(domain))) if n % k == 0) for n in f["num_gpus"]])
        full = f.filter((pl.col("tp") * pl.col("dp")) == widest)
        f = full if full.height else f
    return f


def choose_layout(catalog: Catalog, *, model: str, hardware: str, precision: str = "bf16",
                  num_gpus: int | None = None, tp: int | None = None, dp: int | None = None, ep: int | None = None,
                  pp: int | None = None, mode: str = "aggregated", input_len: int = 1024, output_len: int = 1024,
                  context_tokens: int | None = None, scale_up_domain_size: int | None = None,
                  assumptions: Assumptions = DEFAULT, economics: Economics = Economics(),
                  deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT) -> dict | None:
    """The layout ``econ cost`` uses: the cheapest $/M output tokens of :func:`layout_candidates`.

    Each candidate is priced at its own sweet-spot batch, min(KV-capacity max batch, decode
    memory/compute crossover), by two vectorized engine calls (no loop over candidates). Layouts within
    :data:`LAYOUT_COST_TOLERANCE_FRAC` of the cheapest count as a tie, won by the fastest per user (TP4
    rather than TP2 x PP2 at the same cost: pipeline stages add capacity, not bandwidth, so they halve the
    speed per user for the same cost per token).

    Returns
    -------
    dict of num_gpus, tp, dp, ep, pp (ints), or None if no candidate holds the weights.

    Raises
    ------
    InvalidInputError
        Pinned values that admit no valid layout (the engine's message for the pinned layout).
    """
    cands = layout_candidates(catalog, model=model, hardware=hardware, precision=precision, num_gpus=num_gpus,
                              tp=tp, dp=dp, ep=ep, pp=pp, assumptions=assumptions, deployment=deployment,
                              scale_up_domain_size=scale_up_domain_size)
    if cands.height == 0:
        return None
    base = dict(model=model, hardware=hardware, precision=precision, input_len=input_len, output_len=output_len,
                context_tokens=context_tokens, disaggregated=mode == "disaggregated",
                scale_up_domain_size=scale_up_domain_size)
    pts = cands.with_columns(**{k: pl.lit(v) for k, v in base.items()}, batch_size=pl.col("dp"))
    pts = pts.with_columns(pl.col("context_tokens").cast(pl.Int64), pl.col("scale_up_domain_size").cast(pl.Int64))
    probe = evaluate(pts, catalog, assumptions, economics, deployment, strict=False, sweet_spot=True,
                     columns=("max_batch_size", "sweet_spot_batch", "feasible", "dp"))
    cap = probe["max_batch_size"].fill_null(0).to_numpy().astype(float)
    sweet = probe["sweet_spot_batch"].fill_null(np.inf).to_numpy()
    dps = probe["dp"].to_numpy().astype(float)
    batch = np.maximum(dps, np.floor(np.minimum(cap, sweet) / dps) * dps).astype(np.int64)
    res = evaluate(pts.with_columns(batch_size=pl.Series(batch)), catalog, assumptions, economics, deployment,
                   strict=False, columns=("feasible", "usd_per_m_output_tokens", "tokens_per_s_per_user"))
    ok = res.with_row_index("i").filter(pl.col("feasible"))
    if ok.height == 0:
        return None
    cheapest = ok["usd_per_m_output_tokens"].min()
    near = ok.filter(pl.col("usd_per_m_output_tokens") <= cheapest * (1.0 + LAYOUT_COST_TOLERANCE_FRAC))
    i = int(near.sort(["tokens_per_s_per_user", "i"], descending=[True, False])["i"][0])
    return {k: int(cands[k][i]) for k in _LAYOUT_KEYS}


def cost_table(catalog: Catalog, *, model: str, hardware: str, precision: str = "bf16",
               num_gpus: int | None = None, tp: int | None = None, dp: int | None = None, ep: int | None = None,
               pp: int | None = None, mode: str = "aggregated", batch_sizes: list[int] | None = None,
               input_len: int = 1024, output_len: int = 1024, context_tokens: int | None = None,
               scale_up_domain_size: int | None = None, assumptions: Assumptions = DEFAULT,
               economics: Economics = Economics(), deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT,
               ) -> pl.DataFrame:
    """Cost rows for one model on one accelerator: the ``econ cost`` and Cost-explorer entry point.

    Parameters
    ----------
    model, hardware : catalog ids; precision : bf16|fp8|fp4
    num_gpus, tp, dp, ep, pp : int, optional
        The layout; what is not given is chosen: the cheapest valid layout (:func:`choose_layout`:
        tensor x pipeline for every model, attention-DP + EP for MoE/MLA models where it wins).
    mode : "aggregated" or "disaggregated" (prefill on its own pool, same instance layout, xPyD sized)
    batch_sizes : list of int, optional
        None = "auto": the sweet spot, min(KV-capacity max batch, memory/compute crossover), at least dp.
    input_len, output_len, context_tokens : [tokens], see :func:`econ.engine.evaluate`
    scale_up_domain_size : int, optional, override of the accelerator's domain
    assumptions, economics, deployment : the model's assumptions

    Returns
    -------
    pl.DataFrame, one row per batch size: :data:`econ.engine.RESULT_COLUMNS` + ``sweet_spot_batch``.

    Raises
    ------
    DoesNotFitError
        If the weights alone do not fit on the deployment (names the bytes needed and held).
    UnknownIdError, InvalidInputError, UnsupportedPrecisionError
    """
    if mode not in MODES:
        raise InvalidInputError(f"mode={mode!r} is not one of {list(MODES)}")
    base = dict(model=model, hardware=hardware, precision=precision, input_len=input_len, output_len=output_len,
                context_tokens=context_tokens, disaggregated=mode == "disaggregated",
                scale_up_domain_size=scale_up_domain_size)
    given = dict(num_gpus=num_gpus, tp=tp, dp=dp, ep=ep, pp=pp)
    # one strict evaluation of what was given validates ids, precision, price, context and pinned values
    first = evaluate(_points(base, given, [max(1, dp or 1)]), catalog, assumptions, economics, deployment)
    layout = given
    if any(v is None for v in (tp, pp)) or (dp is None and ep is None and (catalog.model(model)["num_experts"] or 0) > 0):
        chosen = choose_layout(catalog, **{k: v for k, v in base.items() if k != "disaggregated"}, **given, mode=mode,
                               assumptions=assumptions, economics=economics, deployment=deployment)
        layout = chosen or {k: int(first[k][0]) for k in _LAYOUT_KEYS}
    probe = evaluate(_points(base, layout, [layout.get("dp") or 1]), catalog, assumptions, economics, deployment,
                     sweet_spot=True)
    r = probe.row(0, named=True)
    if r["max_batch_size"] < r["dp"]:
        hw = catalog.accelerator(hardware)
        usable = r["num_gpus"] * hw["hbm_capacity_bytes"] * assumptions.usable_hbm_frac
        raise DoesNotFitError(
            f"{model} {precision} needs {r['weight_bytes'] / 1e9:,.0f} GB of weights plus "
            f"{r['kv_bytes_per_sequence'] / 1e9:,.2f} GB of KV cache per sequence at {r['context_tokens']:,} tokens; "
            f"{r['num_gpus']} x {hardware} hold {usable / 1e9:,.0f} GB usable "
            f"({r['num_gpus']} x {hw['hbm_capacity_gib']:g} GiB x {assumptions.usable_hbm_frac:g}); "
            f"use more GPUs (--gpus) or a smaller precision")
    if batch_sizes is None:
        sweet = r["sweet_spot_batch"]
        top = r["max_batch_size"] if sweet is None else min(r["max_batch_size"], sweet)
        batch_sizes = [int(max(r["dp"], top // r["dp"] * r["dp"]))]
    return evaluate(_points(base, {k: r[k] for k in _LAYOUT_KEYS}, batch_sizes), catalog, assumptions, economics,
                    deployment, sweet_spot=True)


def _points(base: dict, layout: dict, batches) -> pl.DataFrame:
    rows = [{**base, **{k: layout.get(k) for k in _LAYOUT_KEYS}, "batch_size": int(b)} for b in batches]
    schema = {k: v for k, v in _SCHEMA.items()} | {"scale_up_domain_size": pl.Int64}
    return pl.DataFrame(rows, schema_overrides=schema)


def batch_curve(catalog: Catalog, *, points_per_octave: int = 4, **kwargs) -> pl.DataFrame:
    """Cost rows over batch sizes dp .. KV-capacity max (log-spaced, max included): the explorer's chart.

    Parameters are those of :func:`cost_table` (without ``batch_sizes``). Returns its frame.
    """
    require_in_range("points_per_octave", points_per_octave, 1, 64)
    first = cost_table(catalog, **kwargs)
    r = first.row(0, named=True)
    layout = {k: r[k] for k in _LAYOUT_KEYS}
    max_b, dp = int(r["max_batch_size"]), int(r["dp"])
    n = max(2, int(np.log2(max(max_b / dp, 2)) * points_per_octave) + 1)
    batches = (np.unique(np.round(np.geomspace(1, max_b / dp, n)).astype(int)) * dp if max_b > dp
               else np.array([dp]))
    kwargs = {**kwargs, **layout}
    return cost_table(catalog, batch_sizes=[int(b) for b in batches if b <= max_b], **kwargs)
