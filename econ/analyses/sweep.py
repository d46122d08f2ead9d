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

from econ.assumptions import (AUTO_DECODING, DEFAULT, DEFAULT_DEPLOYMENT, Assumptions, Decoding,
                              DeploymentAssumptions, Economics)
from econ.tables.catalog import Catalog
from econ.physics import precision as prec
from econ.physics.deployment import layout_problems
from econ.engine import catalog_arrays, evaluate
from econ.errors import DoesNotFitError, InvalidInputError
from econ.presets import DEFAULT_INPUT_LEN, DEFAULT_OUTPUT_LEN
from econ.physics.memory import kv_rule_reserved_bytes, weight_budget_bytes, weight_bytes_resident
from econ.physics.precision import WEIGHT_BYTES_PER_PARAM, WEIGHT_FORMATS
from econ.validate import require_in_range
from econ.vocabulary import MODES
from econ.analyses.search import octave_grid

__all__ = ["grid", "with_ideal", "make_economics", "cost_table", "batch_curve", "choose_layout", "layout_candidates",
           "deployment_search", "deployment_of", "POOL_KEYS", "slo_columns",
           "decoding_used", "decoding_note", "DECODING_COLUMNS"]

_LAYOUT_KEYS = ("num_gpus", "tp", "dp", "ep", "pp")
POOL_KEYS = ("disaggregated", "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp", "prefill_instances",
             "decode_instances")
"""The keys of a disaggregated deployment beyond its decode instance (null when aggregated)."""
LAYOUT_COST_TOLERANCE_FRAC = 0.02
"""Layouts whose $/M output tokens are within 2% of the cheapest tie; the fastest per user wins (a
presentation choice: the model's held-out error is larger than 2%, see `econ calibrate` and README)."""
_SCHEMA = {"num_gpus": pl.Int64, "tp": pl.Int64, "dp": pl.Int64, "ep": pl.Int64, "pp": pl.Int64,
           "context_tokens": pl.Int64, "disaggregated": pl.Boolean, "prefill_tp": pl.Int64, "prefill_dp": pl.Int64,
           "prefill_ep": pl.Int64, "prefill_pp": pl.Int64, "prefill_instances": pl.Int64, "decode_instances": pl.Int64}


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


MOE_SCALE_OUT_DOMAINS = 8
"""MoE models also get attention-DP + EP candidates spanning up to this many scale-up domains (pp = 1,
ep = tp x dp): DeepSeek serves V3/R1 with EP32 prefill (4 nodes) and EP144 decode (18 nodes) over
InfiniBand (deepseek-ai/open-infra-index, day 6); the all-to-all cost across domains is the engine's."""

MAX_CANDIDATE_GPUS = 1 << 12
"""Largest instance :func:`layout_candidates` proposes when no GPU count is given (more than any model of
the catalog needs to hold its weights at bf16 on the smallest accelerator). [accelerators]"""


def _templates(max_gpus: int, num_gpus=None, tp=None, dp=None, ep=None, pp=None) -> pl.DataFrame:
    """Every (num_gpus, tp, dp, ep, pp) of powers of two (plus the pinned values and the divisors of a
    pinned count) with num_gpus = tp x dp x pp <= max_gpus and ep in {1, tp x dp} unless pinned."""
    counts = [num_gpus] if num_gpus is not None else _pow2_upto(max_gpus)
    rows = []
    for n in counts:
        divisors = _pow2_upto(n) if n & (n - 1) == 0 else [k for k in range(1, n + 1) if n % k == 0]
        for t in ([tp] if tp is not None else divisors):
            for d in ([dp] if dp is not None else divisors):
                if n % (t * d) or (pp is not None and n // (t * d) != pp):
                    continue
                for e in ([ep] if ep is not None else sorted({1, t * d})):
                    rows.append((n, t, d, e, n // (t * d)))
    return pl.DataFrame(rows, schema={k: pl.Int64 for k in _LAYOUT_KEYS}, orient="row")


def layout_candidates_frame(catalog: Catalog, keys: pl.DataFrame, *, num_gpus: int | None = None,
                            tp: int | None = None, dp: int | None = None, ep: int | None = None,
                            pp: int | None = None, assumptions: Assumptions = DEFAULT,
                            deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT,
                            weight_format: str | None = None) -> pl.DataFrame:
    """Valid layouts for many (model, hardware, precision) keys at once: :func:`layout_candidates`, vectorized.

    Parameters
    ----------
    keys : pl.DataFrame with ``model``, ``hardware``, ``precision`` (and optionally ``scale_up_domain_size``)
    num_gpus, tp, dp, ep, pp : int, optional, pinned for every key
    weight_format : str, optional
        A weight format set apart from the precision (:data:`econ.physics.precision.WEIGHT_FORMATS`): the fewest
        GPUs that hold the weights are counted in its bytes (W4A16 weights fit on fewer GPUs than bf16 ones).

    Returns
    -------
    pl.DataFrame: the key columns + num_gpus, tp, dp, ep, pp, one row per valid candidate.
    """
    if "scale_up_domain_size" not in keys.columns:
        keys = keys.with_columns(pl.lit(None, pl.Int64).alias("scale_up_domain_size"))
    m = catalog.models.select(pl.col("id").alias("model"), "total_params", "embedding_params", "lm_head_params",
                              "num_attention_heads", "kv_shard_heads", "num_layers",
                              pl.col("num_experts").fill_null(0).alias("num_experts"))
    h = catalog.accelerators.select(pl.col("id").alias("hardware"), "hbm_capacity_bytes",
                                    pl.col("scale_up_domain_size").alias("_catalog_domain"))
    k = (keys.unique(maintain_order=True).join(m, on="model", how="left").join(h, on="hardware", how="left")
         .with_columns(pl.coalesce("scale_up_domain_size", "_catalog_domain").alias("_domain"),
                       (pl.col("precision").replace_strict(WEIGHT_BYTES_PER_PARAM, return_dtype=pl.Float64)
                        if weight_format is None else pl.lit(WEIGHT_FORMATS[weight_format])).alias("_wb")))
    w = weight_bytes_resident(pl.col("total_params"), pl.col("embedding_params"), pl.col("lm_head_params"),
                              pl.col("_wb"), assumptions.embedding_bytes_per_param)
    # the fewest accelerators whose weight budget holds the weights (the engine's rule; free: TP1's reservation)
    reserved = kv_rule_reserved_bytes(assumptions.kv_memory_rule, assumptions.prefill_chunk_tokens,
                                      catalog_arrays(catalog).model_facts(k["model"].to_list()), np.ones(k.height))
    budget = weight_budget_bytes(k["hbm_capacity_bytes"].cast(pl.Float64).fill_null(0.0).to_numpy(),
                                 assumptions.usable_hbm_frac, assumptions.kv_memory_rule == "free", reserved)
    k = k.with_columns(pl.Series("_budget", np.maximum(np.broadcast_to(budget, (k.height,)), 1.0)))
    need = (w / pl.col("_budget")).ceil().clip(lower_bound=1.0)
    k = k.with_columns((2.0 ** need.log(2).ceil()).cast(pl.Int64).alias("_n0"))
    k = k.with_columns(pl.max_horizontal("_n0", "_domain").clip(upper_bound=MAX_CANDIDATE_GPUS).alias("_top"))
    moe_key = pl.col("num_experts") > 0
    k = k.with_columns(pl.when(moe_key).then((pl.col("_top") * MOE_SCALE_OUT_DOMAINS).clip(upper_bound=MAX_CANDIDATE_GPUS))
                       .otherwise(pl.col("_top")).alias("_top_ep"))
    top = int(k["_top_ep"].max()) if k.height else 1
    t = _templates(max(top, num_gpus or 1), num_gpus, tp, dp, ep, pp)
    f = k.join(t, how="cross")
    if num_gpus is None and not (tp is not None and pp is not None):
        wide_ep = ((pl.col("num_gpus") > pl.col("_top")) & (pl.col("num_gpus") <= pl.col("_top_ep"))
                   & (pl.col("pp") == 1) & (pl.col("ep") == pl.col("num_gpus")) & (pl.col("dp") > 1))
        f = f.filter((pl.col("num_gpus") >= pl.col("_n0"))
                     & ((pl.col("num_gpus") <= pl.col("_top")) | wide_ep))
    moe = pl.col("num_experts") > 0
    f = f.filter(moe | (((pl.col("dp") == 1) | pl.lit(dp is not None)) & ((pl.col("ep") == 1) | pl.lit(ep is not None))))
    if dp is None and ep is None:  # dp x tensor-parallel experts is dominated by expert parallelism
        f = f.filter(~(moe & (pl.col("dp") > 1) & (pl.col("ep") == 1)))
    if f.height == 0:
        return f.select(*keys.columns, *_LAYOUT_KEYS)
    a = {c: f[c].to_numpy().astype(float) for c in (*_LAYOUT_KEYS, "_domain", "num_attention_heads",
                                                    "kv_shard_heads", "num_layers", "num_experts")}
    bad = layout_problems(a["tp"], a["dp"], a["ep"], a["pp"], a["num_gpus"], a["_domain"], a["num_attention_heads"],
                          a["kv_shard_heads"], a["num_layers"], a["num_experts"],
                          kv_head_replication=deployment.kv_head_replication)
    f = f.filter(pl.Series(bad < 0))
    if pp is None and tp is None and dp is None and f.height:
        # pipeline only across domains (what serving engines do): a stage spans at least the widest power of
        # two <= min(num_gpus, domain), when some valid layout can; wide EP across domains needs no pipeline
        width = pl.col("tp") * pl.col("dp")
        widest = pl.min_horizontal("num_gpus", "_domain")
        widest = (2 ** widest.log(2).floor()).cast(pl.Int64)
        f = f.with_columns(_full=width >= widest)
        keep = f.group_by(*keys.columns).agg(pl.col("_full").any().alias("_any_full"))
        f = f.join(keep, on=list(keys.columns), how="left", nulls_equal=True).filter(
            pl.col("_full") | ~pl.col("_any_full"))
    return f.select(*keys.columns, *_LAYOUT_KEYS)


def layout_candidates(catalog: Catalog, *, model: str, hardware: str, precision: str, num_gpus: int | None = None,
                      tp: int | None = None, dp: int | None = None, ep: int | None = None, pp: int | None = None,
                      assumptions: Assumptions = DEFAULT, deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT,
                      scale_up_domain_size: int | None = None, weight_format: str | None = None) -> pl.DataFrame:
    """Every valid layout (num_gpus, tp, dp, ep, pp) ``econ cost`` chooses among; given values are pinned.

    Parameters
    ----------
    num_gpus, tp, dp, ep, pp : int, optional; None = free
    scale_up_domain_size : int, optional, override of the catalog's domain
    weight_format : str, optional, see :func:`layout_candidates_frame`

    Returns
    -------
    pl.DataFrame with columns num_gpus, tp, dp, ep, pp (possibly empty: the pins admit no valid layout).

    Notes
    -----
    GPU counts: the given one, else powers of two from the fewest accelerators whose usable HBM holds the
    weights (N0) up to max(N0, scale-up domain): more GPUs than the weights need buy KV capacity, hence
    batch (Llama-3.1-70B fp8 on one H100 has room for a handful of sequences). MoE models also get
    attention-DP + EP instances of up to :data:`MOE_SCALE_OUT_DOMAINS` times that (pp = 1, ep = all GPUs):
    each GPU then holds fewer experts and more KV cache, at the price of all-to-alls over scale-out. Families: tensor x
    pipeline parallelism (tp, pp powers of two) for every model; for MoE models also attention-DP + EP
    (dp > 1 with ep = tp x dp: DeepSeek-V3 report, sec. 3.4) and tensor-parallel attention with
    expert-parallel FFNs (ep > 1, dp = 1). Dense models take dp = ep = 1 (dp replicas are separate
    instances). Unless tp, dp or pp is pinned, a pipeline stage spans at least a whole scale-up domain
    (stage width >= the widest power of two <= min(num_gpus, domain)): a pipeline inside a domain halves
    the speed per user for the same weight bandwidth (seed 002: pipeline stages add capacity, not
    bandwidth); attention-DP + EP stages wider than a domain (DeepSeek's EP across nodes) are kept.
    Validity: :func:`econ.physics.deployment.layout_problems`.
    """
    keys = pl.DataFrame({"model": [model], "hardware": [hardware], "precision": [precision],
                         "scale_up_domain_size": [scale_up_domain_size]},
                        schema_overrides={"scale_up_domain_size": pl.Int64})
    catalog.model(model), catalog.accelerator(hardware)  # unknown ids: UnknownIdError with the closest ids
    return layout_candidates_frame(catalog, keys, num_gpus=num_gpus, tp=tp, dp=dp, ep=ep, pp=pp,
                                   assumptions=assumptions, deployment=deployment,
                                   weight_format=weight_format).select(_LAYOUT_KEYS)


AUTO_BATCH_STEPS_PER_OCTAVE = 4
"""Batch sizes per doubling tried below the sweet spot when the auto batch must meet a speed floor."""


def _auto_batches(catalog: Catalog, pts: pl.DataFrame, assumptions, economics, deployment,
                  min_tokens_per_s_per_user: float | None, max_ttft_s: float | None, at_percentile: bool = False):
    """The auto batch of each candidate row of ``pts`` (its batch column is ignored), two or three engine calls.

    The sweet spot, min(KV-capacity max batch, decode memory/compute crossover), rounded down to a multiple
    of dp (at least dp). With a speed floor or a TTFT limit: the largest batch up to that sweet spot (from a
    grid of :data:`AUTO_BATCH_STEPS_PER_OCTAVE` per doubling, plus the sweet spot itself) whose served
    tokens/s per user and served TTFT meet them; a candidate no batch of which meets them keeps its sweet
    spot and ``meets`` False. ``at_percentile``: the SLOs are judged on the TPOT and TTFT at
    ``assumptions.latency_percentile`` (``tpot_percentile_s``, ``ttft_percentile_s``) instead of the served means.

    Returns
    -------
    (batch int array [sequences], meets bool array, feasible bool array), one per row of ``pts``.
    """
    if min_tokens_per_s_per_user is not None:
        require_in_range("min_tokens_per_s_per_user", min_tokens_per_s_per_user, 0.0, 1e6, "tokens/s")
    if max_ttft_s is not None:
        require_in_range("max_ttft_s", max_ttft_s, 0.0, 1e6, "s", lo_inclusive=False)
    probe = evaluate(pts.with_columns(batch_size=pl.col("dp")), catalog, assumptions, economics, deployment,
                     strict=False, sweet_spot=True, columns=("max_batch_size", "sweet_spot_batch", "feasible", "dp"))
    cap = probe["max_batch_size"].fill_null(0).to_numpy().astype(float)
    sweet = probe["sweet_spot_batch"].fill_null(np.inf).to_numpy()
    dps = probe["dp"].to_numpy().astype(float)
    top = np.maximum(dps, np.floor(np.minimum(cap, sweet) / dps) * dps)
    feasible = probe["feasible"].to_numpy() & (cap >= dps)
    n = len(top)
    if min_tokens_per_s_per_user is None and max_ttft_s is None:
        return top.astype(np.int64), np.ones(n, dtype=bool), feasible
    floor = 0.0 if min_tokens_per_s_per_user is None else float(min_tokens_per_s_per_user)
    ttft_max = math.inf if max_ttft_s is None else float(max_ttft_s)
    octaves = np.log2(np.maximum(top / dps, 1.0))
    steps = int(np.ceil(octaves.max() * AUTO_BATCH_STEPS_PER_OCTAVE)) + 1
    mult = octave_grid(AUTO_BATCH_STEPS_PER_OCTAVE, 2.0 ** ((steps - 1) / AUTO_BATCH_STEPS_PER_OCTAVE))  # the one grid
    grid = np.minimum(dps[:, None] * mult[None, :], top[:, None])
    grid = np.concatenate([grid, top[:, None]], axis=1)
    row, col = np.nonzero(np.ones_like(grid, dtype=bool))
    rows = pts[row].with_columns(batch_size=pl.Series(grid[row, col].astype(np.int64)))
    speed_col, ttft_col = slo_columns(at_percentile)
    res = evaluate(rows, catalog, assumptions, economics, deployment, strict=False,
                   columns=("feasible", "served_tokens_per_s_per_user", "tpot_percentile_s", "served_ttft_s",
                            "ttft_percentile_s"))
    speed = (1.0 / res["tpot_percentile_s"] if at_percentile else res[speed_col])
    ok = (res["feasible"].to_numpy()
          & (speed.fill_null(0.0).fill_nan(0.0).to_numpy() >= floor)
          & (res[ttft_col].fill_null(math.inf).to_numpy() <= ttft_max))
    best = np.where(ok.reshape(grid.shape), grid, -1.0).max(axis=1)
    meets = best > 0
    return np.where(meets, best, top).astype(np.int64), meets, feasible


DECODING_COLUMNS = ("model", "precision", "weight_format", "expert_weight_format", "kv_precision", "spec_method",
                    "spec_draft_tokens", "spec_acceptance")
"""Result columns that say which formats and speculative decoding a deployment runs."""


def decoding_used(catalog: Catalog, *, model: str, hardware: str, precision: str,
                  decoding: Decoding = AUTO_DECODING) -> pl.DataFrame:
    """The formats and speculative decoding the engine resolves for ``model`` on ``hardware`` at ``precision`` under
    ``decoding`` (automatic fields: its defaults): one row of :data:`DECODING_COLUMNS`, for an answer to show what it
    used (they do not depend on the layout or the batch).

    Raises
    ------
    UnknownIdError, InvalidInputError : a setting the model cannot run (the engine's message).
    """
    pts = pl.DataFrame([{"model": model, "hardware": hardware, "precision": precision, "batch_size": 1,
                         **decoding.columns()}])
    return evaluate(pts, catalog, strict=False, columns=DECODING_COLUMNS)


def decoding_note(frame, decoding: Decoding, catalog: Catalog) -> str:
    """One line saying which formats and speculative decoding a result used and where each default came from (the
    released checkpoint, the precision, the model's vendor).

    Parameters
    ----------
    frame : pl.DataFrame (its first row) or dict, a result with :data:`DECODING_COLUMNS`
    decoding : Decoding, what was set (a field set is "set", an automatic one names its source)
    catalog : Catalog

    Returns
    -------
    str, "" when the result lacks the columns.
    """
    need = ("model", "weight_format", "expert_weight_format", "kv_precision", "spec_method")
    r = frame if isinstance(frame, dict) else (frame.row(0, named=True) if frame is not None and frame.height
                                               else {})
    if any(r.get(c) is None for c in need):
        return ""
    model = catalog.model(r["model"])
    pinned = any(prec.CHECKPOINT_FORMATS.get(model.get("native_weight_dtype"), (None, None)))  # a release that pins

    def why(name: str, default_text: str) -> str:
        return "set" if getattr(decoding, name) is not None else default_text

    native = prec.NATIVE_FP8_FORMAT.get(model.get("native_weight_dtype"))
    release_fp8 = native is not None and r["weight_format"] == native  # fp8 of a block-scaled FP8 release
    own = ("the released checkpoint" if pinned else
           "the release's 128 x 128 block-scaled FP8" if release_fp8 else "the precision's own format")
    parts = [f"weights {r['weight_format']} (" + why("weight_format", own) + ")"]
    if (model.get("num_experts") or 0) > 0:
        parts.append(f"experts {r['expert_weight_format']} ("
                     + why("expert_weight_format", "the released checkpoint" if pinned else "follow the weights") + ")")
    parts.append(f"KV cache {r['kv_precision']} (" + why("kv_precision", f"follows the {r['precision']} matmuls") + ")")
    m = r["spec_method"]
    if m == "none":
        spec = "speculative decoding off (" + why("spec_method", "the vendor runs none by default") + ")"
    else:
        src = "set" if decoding.spec_method is not None else (
            f"the vendor's default: {model['id']} ships MTP modules, acceptance from models.csv" if m == "mtp"
            else "the model's published head")
        spec = (f"speculative decoding {m}, {r.get('spec_draft_tokens')} drafted, acceptance "
                f"{r.get('spec_acceptance') or 0:.2f} ({src})")
    return "decoding: " + "; ".join(parts + [spec])


def slo_columns(at_percentile: bool) -> tuple[str, str]:
    """(speed, TTFT) result columns an SLO is judged on: the served means, or with ``at_percentile`` the TPOT and
    TTFT at ``Assumptions.latency_percentile`` (the speed is then 1 / ``tpot_percentile_s``)."""
    return ("tpot_percentile_s", "ttft_percentile_s") if at_percentile else ("served_tokens_per_s_per_user",
                                                                             "served_ttft_s")


def choose_layout(catalog: Catalog, *, model: str, hardware: str, precision: str = "bf16",
                  num_gpus: int | None = None, tp: int | None = None, dp: int | None = None, ep: int | None = None,
                  pp: int | None = None, mode: str = "aggregated", input_len: int = DEFAULT_INPUT_LEN, output_len: int = DEFAULT_OUTPUT_LEN,
                  context_tokens: int | None = None, scale_up_domain_size: int | None = None,
                  assumptions: Assumptions = DEFAULT, economics: Economics = Economics(),
                  deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT,
                  min_tokens_per_s_per_user: float | None = None, max_ttft_s: float | None = None,
                  max_dp: int | None = None, decoding: Decoding = AUTO_DECODING,
                  at_percentile: bool = False) -> dict | None:
    """The layout ``econ cost`` uses: the cheapest $/M output tokens of :func:`layout_candidates`.

    Each candidate is priced at its own auto batch (:func:`_auto_batches`): the sweet spot, min(KV-capacity
    max batch, decode memory/compute crossover), or with a speed floor / TTFT limit the largest batch up to
    it that meets them, by a few vectorized engine calls (no loop over candidates). Candidates that meet the
    SLO rank before those that cannot. Layouts within :data:`LAYOUT_COST_TOLERANCE_FRAC` of the cheapest
    count as a tie, won by the fastest per user (TP4 rather than TP2 x PP2 at the same cost: pipeline
    stages add capacity, not bandwidth, so they halve the speed per user for the same cost per token).

    Parameters
    ----------
    as :func:`cost_table`; ``min_tokens_per_s_per_user`` [tokens/s] and ``max_ttft_s`` [s] (served
    figures), None = no SLO (each candidate at its sweet spot); ``max_dp``: only layouts with at most this
    many attention-DP groups (the smallest batch the caller will run: each group needs a sequence);
    ``decoding``: formats and speculative decoding (:class:`econ.assumptions.Decoding`); ``at_percentile``: judge
    the SLOs at ``assumptions.latency_percentile`` (:func:`_auto_batches`).

    Returns
    -------
    dict of num_gpus, tp, dp, ep, pp, batch_size (its auto batch) and meets_slo, or None if no candidate
    holds the weights.

    Raises
    ------
    InvalidInputError
        Pinned values that admit no valid layout (the engine's message for the pinned layout).
    """
    cands = layout_candidates(catalog, model=model, hardware=hardware, precision=precision, num_gpus=num_gpus,
                              tp=tp, dp=dp, ep=ep, pp=pp, assumptions=assumptions, deployment=deployment,
                              scale_up_domain_size=scale_up_domain_size, weight_format=decoding.weight_format)
    if max_dp is not None:
        cands = cands.filter(pl.col("dp") <= max_dp)
    if cands.height == 0:
        return None
    base = dict(model=model, hardware=hardware, precision=precision, input_len=input_len, output_len=output_len,
                context_tokens=context_tokens, disaggregated=mode == "disaggregated",
                scale_up_domain_size=scale_up_domain_size, **decoding.columns())
    pts = cands.with_columns(**{k: pl.lit(v) for k, v in base.items()}, batch_size=pl.col("dp"))
    pts = pts.with_columns(pl.col("context_tokens").cast(pl.Int64), pl.col("scale_up_domain_size").cast(pl.Int64))
    batch, meets, _ = _auto_batches(catalog, pts, assumptions, economics, deployment, min_tokens_per_s_per_user,
                                    max_ttft_s, at_percentile)
    res = evaluate(pts.with_columns(batch_size=pl.Series(batch)), catalog, assumptions, economics, deployment,
                   strict=False, columns=("feasible", "usd_per_m_output_tokens", "served_tokens_per_s_per_user"))
    ok = res.with_row_index("i").with_columns(meets=pl.Series(meets)).filter(pl.col("feasible"))
    if ok.height == 0:
        return None
    if ok["meets"].any():
        ok = ok.filter(pl.col("meets"))
    cheapest = ok["usd_per_m_output_tokens"].min()
    near = ok.filter(pl.col("usd_per_m_output_tokens") <= cheapest * (1.0 + LAYOUT_COST_TOLERANCE_FRAC))
    i = int(near.sort(["served_tokens_per_s_per_user", "i"], descending=[True, False])["i"][0])
    return {**{k: int(cands[k][i]) for k in _LAYOUT_KEYS}, "batch_size": int(batch[i]), "meets_slo": bool(meets[i])}


def cost_table(catalog: Catalog, *, model: str, hardware: str, precision: str = "bf16",
               num_gpus: int | None = None, tp: int | None = None, dp: int | None = None, ep: int | None = None,
               pp: int | None = None, mode: str | None = None, batch_sizes: list[int] | None = None,
               input_len: int = DEFAULT_INPUT_LEN, output_len: int = DEFAULT_OUTPUT_LEN, context_tokens: int | None = None,
               scale_up_domain_size: int | None = None, assumptions: Assumptions = DEFAULT,
               economics: Economics = Economics(), deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT,
               min_tokens_per_s_per_user: float | None = None, max_ttft_s: float | None = None,
               pools: dict | None = None, decoding: Decoding = AUTO_DECODING,
               slo_percentile: float | None = None, long_context: dict | None = None) -> pl.DataFrame:
    """Cost rows for one model on one accelerator: the ``econ cost`` and Cost-explorer entry point.

    Parameters
    ----------
    model, hardware : catalog ids; precision : bf16|fp8|fp4
    num_gpus, tp, dp, ep, pp : int, optional
        The layout; what is not given is chosen (see Notes).
    mode : "aggregated", "disaggregated" (prefill on its own pool, xPyD sized) or None (either, when the layout is
        searched; aggregated otherwise)
    batch_sizes : list of int, optional
        None = "auto": with ``min_tokens_per_s_per_user`` / ``max_ttft_s``, the deployment and batch the one search
        finds; without them the sweet spot, min(KV-capacity max batch, memory/compute crossover), at least dp.
    min_tokens_per_s_per_user : float, optional [tokens/s]; max_ttft_s : float, optional [s]
        The SLO of the auto batch (None = none). A deployment no batch of which meets it stays at its sweet
        spot (its served tokens/s per user say by how much it misses).
    input_len, output_len, context_tokens : [tokens], see :func:`econ.engine.evaluate`
    scale_up_domain_size : int, optional, override of the accelerator's domain
    assumptions, economics, deployment : the model's assumptions
    pools : dict, optional
        A disaggregated deployment's pools (:data:`POOL_KEYS`, e.g. from :func:`deployment_of` of a row): with the
        layout pinned, the unit is evaluated as it is.
    decoding : Decoding
        Weight, expert and KV-cache formats and speculative decoding (:class:`econ.assumptions.Decoding`; automatic
        fields: the engine's per-model defaults). Passed to the engine as point columns, to the search as
        ``SearchSpace.decoding``.
    slo_percentile : float, optional [%]
        Judge the SLO at this percentile of TPOT and TTFT (``assumptions.latency_percentile`` is set to it; the
        rows' ``ttft_percentile_s`` / ``tpot_percentile_s``); None = the served means.
    long_context : dict, optional
        Issue-22 engine inputs, any of :data:`LONG_CONTEXT_KEYS` (``kv_offload``, ``prefix_cache_tier``, ``cp``,
        ``context_limit_tokens``; None values ignored): point columns of every evaluation (the rows then carry
        :data:`econ.engine.TIER_COLUMNS`) and the search's :class:`econ.analyses.optimize.SearchSpace` fields.

    Returns
    -------
    pl.DataFrame, one row per batch size: :data:`econ.engine.RESULT_COLUMNS` + ``sweet_spot_batch``.

    Raises
    ------
    DoesNotFitError
        If the weights alone do not fit on the deployment (names the bytes needed and held).
    UnknownIdError, InvalidInputError, UnsupportedPrecisionError

    Notes
    -----
    What is not pinned is chosen by the question asked, so each answer equals the one other commands give:

    - batch "auto" with a speed floor or TTFT limit (``econ cost``'s default floor): the cheapest all-in deployment
      meeting them in the one search of every layout, batch and serving mode
      (:func:`econ.analyses.optimize.search`, named by :func:`econ.analyses.search.cheapest`), the answer the
      hardware comparison, head to head and ``econ compare`` give at that floor;
    - given batch sizes: at each batch, the cheapest all-in layout of :func:`layout_candidates` that holds it (a
      layout is never chosen at one batch and priced at another);
    - batch "auto" without an SLO: :func:`choose_layout` at each candidate's sweet spot.
    """
    if mode is not None and mode not in MODES:
        raise InvalidInputError(f"mode={mode!r} is not one of {list(MODES)}")
    at_pct = slo_percentile is not None
    if at_pct:
        assumptions = replace(assumptions, latency_percentile=float(slo_percentile))
    extra = _long_context(long_context)
    base = dict(model=model, hardware=hardware, precision=precision, input_len=input_len, output_len=output_len,
                context_tokens=context_tokens, disaggregated=mode == "disaggregated",
                scale_up_domain_size=scale_up_domain_size, **decoding.columns(), **extra)
    given = dict(num_gpus=num_gpus, tp=tp, dp=dp, ep=ep, pp=pp)
    if pools:
        base["disaggregated"] = bool(pools.get("disaggregated"))
        given = given | {k: v for k, v in pools.items() if k != "disaggregated"}
    # one strict evaluation of what was given validates ids, precision, price, context and pinned values
    first = evaluate(_points(base, given, [max(1, dp or 1)]), catalog, assumptions, economics, deployment)
    layout = given
    free = any(v is None for v in (tp, pp)) or (dp is None and ep is None and (catalog.model(model)["num_experts"] or 0) > 0)
    slo = min_tokens_per_s_per_user is not None or max_ttft_s is not None
    if free and batch_sizes is None and slo and context_tokens is None:
        found = _searched(catalog, model=model, hardware=hardware, precision=precision, given=given, mode=mode,
                          input_len=input_len, output_len=output_len, scale_up_domain_size=scale_up_domain_size,
                          assumptions=assumptions, economics=economics, deployment=deployment,
                          min_tokens_per_s_per_user=min_tokens_per_s_per_user, max_ttft_s=max_ttft_s,
                          decoding=decoding, slo_percentile=slo_percentile, long_context=extra)
        if found is not None:
            layout, batch, cp = found
            searched = {**base, "disaggregated": layout["disaggregated"]} | ({"cp": cp} if cp > 1 else {})
            return evaluate(_points(searched, layout, [batch]), catalog, assumptions, economics, deployment,
                            sweet_spot=True)
    if free and batch_sizes is not None:
        return _cheapest_at_each_batch(catalog, base, given, batch_sizes, assumptions, economics, deployment)
    if free:
        keys = ("model", "hardware", "precision", "input_len", "output_len", "context_tokens", "scale_up_domain_size")
        chosen = choose_layout(catalog, **{k: base[k] for k in keys}, **given, decoding=decoding,
                               at_percentile=at_pct,
                               mode=mode or "aggregated",
                               assumptions=assumptions, economics=economics, deployment=deployment,
                               min_tokens_per_s_per_user=min_tokens_per_s_per_user, max_ttft_s=max_ttft_s,
                               max_dp=min(batch_sizes) if batch_sizes and dp is None else None)
        layout = {k: chosen[k] for k in _LAYOUT_KEYS} if chosen else {k: int(first[k][0]) for k in _LAYOUT_KEYS}
    probe = evaluate(_points(base, layout, [layout.get("dp") or 1]), catalog, assumptions, economics, deployment,
                     sweet_spot=True)
    r = probe.row(0, named=True)
    if r["max_batch_size"] < r["dp"]:
        hw = catalog.accelerator(hardware)
        usable = r["num_gpus"] * hw["hbm_capacity_bytes"] * assumptions.usable_hbm_frac
        if assumptions.kv_memory_rule == "total":
            held = (f"{usable / 1e9:,.0f} GB usable ({r['num_gpus']} x {hw['hbm_capacity_gib']:g} GiB x "
                    f"{assumptions.usable_hbm_frac:g})")
        else:
            reserved = float(kv_rule_reserved_bytes("free", assumptions.prefill_chunk_tokens,
                                                    catalog_arrays(catalog).model_facts([model]), r["tp"], r["dp"],
                                                    r["ep"])[0])
            held = (f"{r['num_gpus'] * hw['hbm_capacity_bytes'] / 1e9:,.0f} GB; after the weights and "
                    f"{reserved / 1e9:,.1f} GB per GPU of activations and runtime the KV cache gets "
                    f"{assumptions.usable_hbm_frac:g} of what is left (kv_memory_rule free)")
        raise DoesNotFitError(
            f"{model} {precision} needs {r['weight_bytes'] / 1e9:,.0f} GB of weights plus "
            f"{r['kv_bytes_per_sequence'] / 1e9:,.2f} GB of KV cache per sequence at {r['context_tokens']:,} tokens; "
            f"{r['num_gpus']} x {hardware} hold {held}; use more GPUs (--gpus) or a smaller precision")
    if batch_sizes is None:
        if min_tokens_per_s_per_user is None and max_ttft_s is None:
            sweet = r["sweet_spot_batch"]
            top = r["max_batch_size"] if sweet is None else min(r["max_batch_size"], sweet)
            batch_sizes = [int(max(r["dp"], top // r["dp"] * r["dp"]))]
        else:
            batch_sizes = [int(_auto_batches(catalog, _points(base, deployment_of(r), [r["dp"]]),
                                             assumptions, economics, deployment, min_tokens_per_s_per_user,
                                             max_ttft_s, at_pct)[0][0])]
    return evaluate(_points(base, deployment_of(r), batch_sizes), catalog, assumptions, economics,
                    deployment, sweet_spot=True)


def deployment_search(catalog: Catalog, *, model: str, hardware: str, precision: str, given: dict | None = None,
                      mode: str | None = None, input_len: int = DEFAULT_INPUT_LEN, output_len: int = DEFAULT_OUTPUT_LEN,
                      scale_up_domain_size: int | None = None, assumptions: Assumptions = DEFAULT,
                      economics: Economics = Economics(), deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT,
                      min_tokens_per_s_per_user: float | None = None, max_ttft_s: float | None = None,
                      decoding: Decoding = AUTO_DECODING, slo_percentile: float | None = None,
                      long_context: dict | None = None):
    """The one search ``econ cost`` names its automatic deployment from: :func:`econ.analyses.optimize.search` of one
    model, accelerator and precision, with the pinned values of ``given``.

    Its serving modes are ``mode`` when given, aggregated when the GPU count is pinned (a pinned count names one
    instance), else both. Returns the :class:`econ.analyses.optimize.SearchResult` (every feasible point, SLO or
    not), so another caller (a sensitivity scenario with another speed floor) re-picks from the same points.
    """
    from econ.analyses.optimize import SLO, SearchSpace, search

    given = given or {}
    num_gpus = given.get("num_gpus")
    modes = (mode,) if mode else (("aggregated",) if num_gpus is not None else MODES)
    space = SearchSpace(precisions=(precision,), modes=modes, max_gpus=max(SearchSpace().max_gpus, num_gpus or 1),
                        scale_up_domain_sizes=None if scale_up_domain_size is None else (scale_up_domain_size,),
                        decoding=decoding, **{k: given.get(k) for k in ("num_gpus", "tp", "dp", "ep", "pp")},
                        **_long_context(long_context))
    slo = SLO(min_tokens_per_s_per_user=0.0 if min_tokens_per_s_per_user is None else min_tokens_per_s_per_user,
              max_ttft_s=math.inf if max_ttft_s is None else max_ttft_s, percentile=slo_percentile)
    return search(catalog, model=model, hardware=[hardware], input_len=input_len, output_len=output_len, slo=slo,
                  space=space, assumptions=assumptions, economics=economics, deployment=deployment)


def _searched(catalog: Catalog, *, model: str, hardware: str, precision: str, given: dict, mode: str | None,
              input_len: int, output_len: int, scale_up_domain_size: int | None, assumptions, economics, deployment,
              min_tokens_per_s_per_user: float | None, max_ttft_s: float | None, decoding: Decoding = AUTO_DECODING,
              slo_percentile: float | None = None, long_context: dict | None = None):
    """(deployment keys, batch, cp) of the cheapest all-in deployment meeting the SLO in the one search
    (:func:`deployment_search`), or None; named by :func:`econ.analyses.search.cheapest`, the rule of the optimizer
    and the hardware comparison."""
    from econ.analyses.search import cheapest

    res = deployment_search(catalog, model=model, hardware=hardware, precision=precision, given=given, mode=mode,
                            input_len=input_len, output_len=output_len, scale_up_domain_size=scale_up_domain_size,
                            assumptions=assumptions, economics=economics, deployment=deployment,
                            min_tokens_per_s_per_user=min_tokens_per_s_per_user, max_ttft_s=max_ttft_s,
                            decoding=decoding, slo_percentile=slo_percentile, long_context=long_context)
    ok = res.points.filter(pl.col("meets_slo"))
    if ok.height == 0:
        return None
    row = cheapest(ok, by=()).row(0, named=True)
    return (deployment_of(row) | {"disaggregated": bool(row["disaggregated"])}, int(row["batch_size"]),
            int(row.get("cp") or 1))


def _cheapest_at_each_batch(catalog: Catalog, base: dict, given: dict, batch_sizes, assumptions, economics,
                            deployment) -> pl.DataFrame:
    """One row per batch: the cheapest all-in layout of :func:`layout_candidates` at that batch (ties: the faster
    per user). Infeasible everywhere: the first candidate's row, whose reason says why. Two engine calls."""
    from econ.analyses.search import cheapest

    cands = layout_candidates(catalog, model=base["model"], hardware=base["hardware"], precision=base["precision"],
                              **given, assumptions=assumptions, deployment=deployment,
                              scale_up_domain_size=base["scale_up_domain_size"],
                              weight_format=base.get("weight_format"))
    if cands.height == 0:  # pins no valid layout admits: the engine's own message
        return evaluate(_points(base, given, batch_sizes), catalog, assumptions, economics, deployment,
                        sweet_spot=True)
    batches = pl.DataFrame({"batch_size": [int(b) for b in batch_sizes], "_order": range(len(batch_sizes))})
    rows = (cands.join(batches, how="cross").filter(pl.col("batch_size") >= pl.col("dp"))
            .with_columns(**{k: pl.lit(v) for k, v in base.items()}))
    rows = rows.with_columns(pl.col("context_tokens").cast(pl.Int64), pl.col("scale_up_domain_size").cast(pl.Int64))
    probe = evaluate(rows.drop("_order"), catalog, assumptions, economics, deployment, strict=False,
                     columns=("feasible", "usd_per_m_output_tokens_all_in", "served_tokens_per_s_per_user"))
    scored = rows.with_columns(probe["feasible"], probe["usd_per_m_output_tokens_all_in"],
                               probe["served_tokens_per_s_per_user"])
    pick = cheapest(scored.filter(pl.col("feasible")), by=("_order",), speed="served_tokens_per_s_per_user")
    chosen = (batches.join(pick.select("_order", *_LAYOUT_KEYS), on="_order", how="left")
              .with_columns(*(pl.col(k).fill_null(int(cands[k][0])) for k in _LAYOUT_KEYS)).sort("_order"))
    points = chosen.drop("_order").with_columns(**{k: pl.lit(v) for k, v in base.items()})
    points = points.with_columns(pl.col("context_tokens").cast(pl.Int64), pl.col("scale_up_domain_size").cast(pl.Int64))
    return evaluate(points, catalog, assumptions, economics, deployment, sweet_spot=True)


def deployment_of(row: dict) -> dict:
    """The keys that name a result row's deployment: its layout (:data:`_LAYOUT_KEYS`) and, when disaggregated, its
    pools (:data:`POOL_KEYS`), so the same unit can be evaluated again (a batch curve, a re-check)."""
    out = {k: int(row[k]) for k in _LAYOUT_KEYS}
    if row.get("disaggregated"):
        out |= {"disaggregated": True} | {k: int(row[k]) for k in POOL_KEYS if k != "disaggregated"}
    return out


LONG_CONTEXT_KEYS: tuple[str, ...] = ("kv_offload", "prefix_cache_tier", "cp", "context_limit_tokens")
"""Issue-22 engine inputs :func:`cost_table` passes on (vocabulary fields of the same names)."""


def _long_context(long_context: dict | None) -> dict:
    """The given (not None) issue-22 inputs; an unknown key raises naming it."""
    out = {k: v for k, v in (long_context or {}).items() if v is not None}
    bad = [k for k in out if k not in LONG_CONTEXT_KEYS]
    if bad:
        raise InvalidInputError(f"long_context key {bad[0]!r} is not one of {list(LONG_CONTEXT_KEYS)}")
    return out


def _points(base: dict, layout: dict, batches) -> pl.DataFrame:
    pools = {k: layout[k] for k in POOL_KEYS if k in layout}
    rows = [{**base, **{k: layout.get(k) for k in _LAYOUT_KEYS}, **pools, "batch_size": int(b)} for b in batches]
    schema = {k: v for k, v in _SCHEMA.items()} | {"scale_up_domain_size": pl.Int64}
    return pl.DataFrame(rows, schema_overrides=schema)


def batch_curve(catalog: Catalog, *, points_per_octave: int = 4, **kwargs) -> pl.DataFrame:
    """Cost rows over batch sizes dp .. KV-capacity max (log-spaced, max included): the explorer's chart.

    Parameters are those of :func:`cost_table` (without ``batch_sizes``). Returns its frame.
    """
    require_in_range("points_per_octave", points_per_octave, 1, 64)
    first = cost_table(catalog, **kwargs)
    r = first.row(0, named=True)
    layout = deployment_of(r)
    max_b, dp = int(r["max_batch_size"]), int(r["dp"])
    n = max(2, int(np.log2(max(max_b / dp, 2)) * points_per_octave) + 1)
    batches = (np.unique(np.round(np.geomspace(1, max_b / dp, n)).astype(int)) * dp if max_b > dp
               else np.array([dp]))
    pools = {k: layout.pop(k) for k in POOL_KEYS if k in layout}
    kwargs = {**kwargs, **layout, "pools": pools or None}
    return cost_table(catalog, batch_sizes=[int(b) for b in batches if b <= max_b], **kwargs)
