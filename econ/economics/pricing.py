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
