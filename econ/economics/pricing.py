"""$/GPU-hour and tokens/s per GPU -> $ per million input, output and blended tokens."""

from __future__ import annotations

from econ import units


def usd_per_m_tokens(usd_per_gpu_hour, tokens_per_s_per_gpu):
    """Cost of a million tokens from the hourly cost and throughput of one accelerator.

    Parameters
    ----------
    usd_per_gpu_hour : scalar or array [USD/h]
    tokens_per_s_per_gpu : scalar or array, > 0 [tokens/s]

    Returns
    -------
    scalar or array [USD per 1e6 tokens] = usd_per_gpu_hour / (3600 * tokens/s) * 1e6 (DESIGN.md).
    """
    return usd_per_gpu_hour / (units.SECONDS_PER_HOUR * tokens_per_s_per_gpu) * units.TOKENS_PER_M


def usd_per_m_blended_tokens(usd_per_m_input, usd_per_m_output, input_output_mix, cache_hit_frac=0.0,
                             cached_input_cost_frac=0.0):
    """Blended price per million tokens at an input:output mix and a prefix-cache hit rate.

    Parameters
    ----------
    usd_per_m_input, usd_per_m_output : scalar or array [USD/M tokens]
    input_output_mix : scalar or array, >= 0
        Input tokens per output token (3 = the 3:1 Artificial Analysis convention). [-]
    cache_hit_frac : scalar or array in [0, 1]
        Share of input tokens that hit a prefix cache. [-]
    cached_input_cost_frac : scalar or array in [0, 1]
        Cost of a cached input token relative to an uncached one. [-]

    Returns
    -------
    scalar or array [USD/M tokens] =
    (m * c_in * (1 - h + h * f_cached) + c_out) / (m + 1).
    """
    effective_input = usd_per_m_input * (1.0 - cache_hit_frac + cache_hit_frac * cached_input_cost_frac)
    return (input_output_mix * effective_input + usd_per_m_output) / (input_output_mix + 1.0)


def usd_per_task(usd_per_m_output_tokens_all_in, output_len, calls_per_task, cached_tokens_per_call=0.0,
                 usd_per_m_cached_tokens=0.0):
    """What one task (several LLM calls) costs to serve: compute per call plus keeping and loading its cached prefix.

    Parameters
    ----------
    usd_per_m_output_tokens_all_in : scalar or array
        All-in cost per M output tokens of the deployment at the call's shape (every accelerator a request uses,
        prefill of the uncached prompt included). [USD/M tokens]
    output_len : scalar or array [tokens per call]
    calls_per_task : scalar or array, >= 1 [calls]
    cached_tokens_per_call : scalar or array [tokens]
        Prompt tokens of a call served from a prefix cache (``prefix_reuse_frac * input_len``).
    usd_per_m_cached_tokens : scalar or array
        True cost of a cached token: storage for the reuse interval plus loading it
        (:func:`econ.physics.kv_tiers.cached_token_cost_usd` x 1e6). [USD/M tokens]

    Returns
    -------
    scalar or array [USD per task] =
    calls * (c_all_in * output_len + c_cached * cached_tokens) / 1e6.

    Notes
    -----
    All-in $/M output tokens times the output tokens of a call is the cost of the whole call (the all-in rate spreads
    every accelerator-second of the unit, prefill included, over its output tokens; ``econ.engine.core.run_costs``).
    """
    per_call = (usd_per_m_output_tokens_all_in * output_len + usd_per_m_cached_tokens * cached_tokens_per_call)
    return calls_per_task * per_call / units.TOKENS_PER_M
