"""The one engine: a frame of deployments -> decode, prefill, capacity, serving and cost, vectorized.

Every front end (``econ cost``, quotes, cluster and fleet, hardware comparison, optimize, frontier, exports,
every dashboard page) reaches the physics through :func:`evaluate` (a Polars frame in, a frame out) or, for
searches that build their candidates as arrays, through :func:`run` on the typed bundles. Three modules:

- :mod:`econ.engine.core`: the chain on typed per-row bundles (:func:`run` = :func:`run_physics` ->
  :func:`run_costs` -> :func:`run_status`), read like pvlib's ``ModelChain.run_model``;
- :mod:`econ.engine.arrays`: the catalog as arrays gathered by integer codes, weight formats, the calibration
  profiles (efficiencies and bands);
- :mod:`econ.engine.frame`: :func:`evaluate` (read and validate a frame, resolve layouts, run blocks, build the
  result frame).

This package face lists the public names; everything else is internal to the engine.
"""

from econ.engine.arrays import (BAND_OF_COST, BAND_OF_RATE, FORMATS, CatalogArrays, band, catalog_arrays, efficiency,
                                profile_band, profile_names, resolve_formats)
from econ.engine.core import (ECONOMIC_COLUMNS, CostBasis, CostInputs, Costs, EngineInputs, KvTiers, Physics, Serving, Workload,
                              run,
                              costs_of, run_costs, run_physics, run_status, sweet_spot, tier_rate)
from econ.engine.frame import (RESULT_COLUMNS, TIER_COLUMNS, default_speculation, evaluate, kv_tier_arrays,
                               resolve_speculation)

__all__ = ["evaluate", "default_speculation", "resolve_speculation", "RESULT_COLUMNS", "TIER_COLUMNS", "kv_tier_arrays",
           "run", "run_physics", "run_costs", "costs_of", "run_status", "sweet_spot", "tier_rate",
           "EngineInputs", "KvTiers", "Workload", "Serving", "CostInputs", "CostBasis", "Physics", "Costs",
           "ECONOMIC_COLUMNS",
           "catalog_arrays", "CatalogArrays", "FORMATS", "resolve_formats", "efficiency", "profile_band",
           "profile_names", "band", "BAND_OF_RATE", "BAND_OF_COST"]
