"""Queueing of requests under continuous batching: percentile TTFT from Poisson arrivals.

Requests arrive as a Poisson stream (MLPerf Inference Server scenario; real services) and wait for a
prefill slot. A prefill server (one aggregated instance, or each of the x instances of a disaggregated
prefill pool) serves prompts at rate mu; with c servers and arrival rate lambda the queue is M/M/c, whose
waiting time has the Erlang-C tail

    P(W > t) = C(c, a) exp(-(c mu - lambda) t),   a = lambda / mu,   rho = a / c < 1

(A. K. Erlang, 1917; e.g. Kleinrock, Queueing Systems Vol. 1, 1975, sec. 3.5; Harchol-Balter,
Performance Modeling and Design of Computer Systems, 2013, ch. 14). The p-quantile of the wait is
ln(C / (1 - p)) / (c mu - lambda) when C > 1 - p, else 0.

Prefill service is not exponential: with chunked prefill the prompts ahead are processed chunk by chunk, first come
first served, at the instance's prefill rate, so a prompt's service time is its length over that rate, and econ's
requests all have ``input_len`` tokens. The wait of such an M/G/c queue is taken as the M/M/c wait scaled by
(1 + c_s^2) / 2, c_s the coefficient of variation of the service time (here of the prompt length,
``input_len_cv``): the Allen-Cunneen approximation (A. O. Allen, Probability, Statistics and Queueing Theory, 2nd
ed. 1990, sec. 6.5; W. Whitt, 'Approximations for the GI/G/m queue', Production and Operations Management 2(2),
1993), exact in the mean for c = 1 (Pollaczek-Khinchine) and, for the tail, Kingman's heavy-traffic exponential
approximation with that mean (Kingman 1962). Deterministic prompts (c_s = 0) wait half as long as exponential ones
(c_s = 1, the M/M/c of issue 12). All functions are pure and broadcast over numpy arrays.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

MAX_UTILIZATION_FRAC = 1.0 - 1e-6
"""A queue at or above this utilization is treated as at this utilization (the wait is then very long
but finite, so no inf reaches a table; an SLO on it fails). [-]"""


ERLANG_RECURSION_MAX_SERVERS = 256
"""Up to this many servers (whole numbers) :func:`erlang_c` runs the Erlang B recursion (one vector pass per
server) instead of SciPy's incomplete gamma function, on inputs of up to 4,096 values or up to 16 servers (larger
inputs with more servers are faster through SciPy); both give C within 1e-11 relative."""


def erlang_c(servers, offered_load):
    """Probability that an arriving request waits in an M/M/c queue (Erlang C).

    Parameters
    ----------
    servers : scalar or array, whole numbers >= 1, c [-]
    offered_load : scalar or array, >= 0, a = lambda / mu [erlangs]; a < c for a stable queue

    Returns
    -------
    scalar or array in [0, 1].

    Notes
    -----
    C(c, a) = T / (S + T) with T = a^c / c! x c / (c - a) and S = sum_{k<c} a^k / k! = e^a Q(c, a), Q the
    regularized upper incomplete gamma function (scipy.special.gammaincc); computed in log space so large
    c and a do not overflow. c = 1 gives C = a (M/M/1: a request waits with probability rho).
    """
    c = np.asarray(servers, dtype=float)
    a = np.minimum(np.asarray(offered_load, dtype=float), c * MAX_UTILIZATION_FRAC)
    a = np.maximum(a, 1e-300)
    c_max = float(np.max(c)) if c.size else 0.0
    few = c_max <= 16 or c.size <= 4096  # the recursion's c_max vector passes cost less than the gamma function's
    if few and c_max <= ERLANG_RECURSION_MAX_SERVERS and np.all(c == np.floor(c)):
        # Erlang B by its stable recursion, B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1)), then
        # C = c B / (c - a (1 - B)) (Cooper, Introduction to Queueing Theory, 2nd ed., 1981, sec. 3.4): the same
        # function without SciPy (issue 20: scipy.special costs ~0.13-0.5 s at import; one-row CLI answers ask
        # for a p99 TTFT on one or a few servers)
        b = np.ones(np.broadcast(c, a).shape)
        for k in range(1, int(c_max) + 1):
            b = np.where(k <= c, a * b / (k + a * b), b)
        return c * b / (c - a * (1.0 - b))
    from scipy.special import gammaincc, gammaln  # lazy: scipy costs ~0.2 s at import, only large pools need it

    log_t = c * np.log(a) - gammaln(c + 1.0) + np.log(c / (c - a))
    log_s = a + np.log(np.maximum(gammaincc(c, a), 1e-300))
    with np.errstate(over="ignore"):  # exp overflow = a negligible wait probability: 1 / (1 + inf) = 0 exactly
        return 1.0 / (1.0 + np.exp(log_s - log_t))


def waiting_time_quantile_s(arrival_rate_per_s, service_rate_per_s, servers, quantile):
    """The ``quantile`` of the time a request waits before its prefill starts, M/M/c. [s]

    Parameters
    ----------
    arrival_rate_per_s : scalar or array, lambda [requests/s]
    service_rate_per_s : scalar or array, > 0, mu of one server [requests/s]
    servers : scalar or array, whole numbers >= 1, c [-]
    quantile : scalar or array in (0, 1), p (0.99 for a p99 TTFT) [-]

    Returns
    -------
    scalar or array [s] >= 0: ln(C / (1 - p)) / (c mu - lambda), 0 where few enough requests wait.
    """
    c = np.asarray(servers, dtype=float)
    lam = np.minimum(arrival_rate_per_s, c * service_rate_per_s * MAX_UTILIZATION_FRAC)
    cw = erlang_c(c, lam / service_rate_per_s)
    spare = c * service_rate_per_s - lam
    return np.maximum(np.log(np.maximum(cw, 1e-300) / (1.0 - quantile)), 0.0) / spare


def service_variability_factor(service_cv):
    """Allen-Cunneen factor (1 + c_s^2) / 2 by which an M/G/c queue's wait scales the M/M/c one. [-]

    Parameters
    ----------
    service_cv : scalar or array >= 0, coefficient of variation of the service time [-]

    Returns
    -------
    scalar or array [-]: 0.5 for deterministic service (M/D/c), 1 for exponential (M/M/c).
    """
    return (1.0 + service_cv * service_cv) / 2.0


def prefill_wait_quantile_s(arrival_rate_per_s, service_rate_per_s, servers, quantile, prompt_len_cv=0.0):
    """The ``quantile`` of the wait before a prompt's prefill starts, chunked FIFO prefill: M/G/c. [s]

    Parameters
    ----------
    arrival_rate_per_s, service_rate_per_s, servers, quantile : as :func:`waiting_time_quantile_s`
    prompt_len_cv : scalar or array >= 0, coefficient of variation of the prompt length (the service time's) [-]

    Returns
    -------
    scalar or array [s] = :func:`waiting_time_quantile_s` x :func:`service_variability_factor` (module docstring).
    """
    return waiting_time_quantile_s(arrival_rate_per_s, service_rate_per_s, servers, quantile) \
        * service_variability_factor(prompt_len_cv)


MEASURED_TAIL_PERCENTILE = 99.0
"""The percentile at which ``tpot_tail_factor`` is measured: MLPerf Inference Server and Interactive runs report p99
TPOT (econ.analyses.calibration: the median over a profile's runs of p99 TPOT over mean TPOT). [%]"""

_Z_MEASURED = NormalDist().inv_cdf(MEASURED_TAIL_PERCENTILE / 100.0)


def tpot_tail_at_percentile(tail_factor_p99, percentile):
    """TPOT at ``percentile`` over the mean TPOT, from the measured p99 over mean ratio. [-]

    Per-request TPOT under continuous batching is taken as log-normal about the engine's served TPOT (its median):
    the p-quantile over the median is exp(z_p sigma), with sigma = ln(f99) / z_99 fixed by the measured p99 ratio
    f99. So p50 gives 1, p99 gives f99 and p90 gives f99 ** (z_90 / z_99) = f99 ** 0.551; a ratio f99 = 1 (no
    measured tail) gives 1 at every percentile. Log-normal because a latency is positive and right-skewed; the
    assumption that the served (mean) TPOT is the median is named here. Before this, every percentile got the
    p99 ratio.

    Parameters
    ----------
    tail_factor_p99 : scalar or array >= 1, p99 TPOT over mean TPOT (``Assumptions.tpot_tail_factor``) [-]
    percentile : scalar in (0, 100), the percentile reported and checked (``Assumptions.latency_percentile``) [%]

    Returns
    -------
    scalar or array [-] > 0, broadcast of the inputs.
    """
    z = NormalDist().inv_cdf(float(percentile) / 100.0)
    return np.exp(np.log(tail_factor_p99) * (z / _Z_MEASURED))


def mean_decode_context_tokens(input_len, output_len, output_len_cv=0.0):
    """Mean context a decoded token attends, over the output tokens of requests whose answers vary in length.

    Parameters
    ----------
    input_len : scalar or array, prompt tokens [tokens]
    output_len : scalar or array, mean answer tokens E[o] [tokens]
    output_len_cv : scalar or array, coefficient of variation of the answer length sd(o) / E[o] (0 = every answer
        has ``output_len`` tokens) [-]

    Returns
    -------
    scalar or array [tokens] = ISL + E[o] (1 + cv^2) / 2.

    Notes
    -----
    The j-th token of an answer attends ISL + j tokens, so a request of o tokens adds o ISL + o^2 / 2 token-contexts;
    over all output tokens the mean is ISL + E[o^2] / (2 E[o]) = ISL + E[o] (1 + cv^2) / 2 (a length-biased mean:
    long reasoning answers carry most of the tokens). A fixed length gives the ISL + OSL / 2 of DESIGN.md; an
    exponential spread (cv = 1) doubles the answer's share to ISL + OSL. The same mean sizes the KV cache a batch
    holds in steady state (a sequence is found in flight with probability proportional to its length).
    Orchestration-free: operators only.
    """
    return input_len + output_len * (1.0 + output_len_cv * output_len_cv) / 2.0




def closed_loop_wait_s(users, service_s, think_s):
    """Mean wait before a prompt's prefill starts when ``users`` clients each send their next request as soon as
    the last one finishes (a fixed-concurrency benchmark): the finite-source (machine-repairman) queue. [s]

    Parameters
    ----------
    users : scalar or array >= 1, clients in the loop (the benchmark's concurrency, at most the KV-cache slots) [-]
    service_s : scalar or array > 0, prefill time per request at the servers' throughput (prompt / prefill rate) [s]
    think_s : scalar or array >= 0, time a client spends away from the prefill queue per cycle (its decode) [s]

    Returns
    -------
    scalar or array [s]: the mean wait in queue, excluding the request's own service; 0 for one user.

    Raises
    ------
    Nothing of its own: the inputs are the engine's validated results (callers: the calibration's TTFT of
    fixed-concurrency cases, :func:`econ.analyses.calibration.predict`); a NaN ``users`` raises ValueError from
    ``int``.

    Notes
    -----
    Exact mean value analysis of a closed network of one FCFS queue and one delay centre (Reiser and Lavenberg,
    'Mean-value analysis of closed multichain queuing networks', J. ACM 27(2), 1980; Lazowska, Zahorjan, Graham and
    Sevcik, Quantitative System Performance, 1984, ch. 6), run over n = 1 .. users:
    R(n) = S (1 + Q(n-1)), X(n) = n / (R(n) + Z), Q(n) = X(n) R(n).
    It is exact for exponential service. For fixed-length prompts it is exact at saturation (every user then waits
    for the prompts of the other users in the queue, since a request arrives as one finishes) and overstates the wait
    at light load by up to 2x (an M/D/1 wait is half the M/M/1 one), where the wait is small beside the prompt's own
    prefill. Unlike an open (Poisson) queue (:func:`prefill_wait_quantile_s`), at most ``users - 1`` requests can
    wait, so the wait is bounded by (users - 1) S however high the load: a benchmark at fixed concurrency never
    queues without limit; at saturation it tends to users x S - Z. Whole users are iterated (a fractional count is
    rounded up).
    """
    if np.ndim(users) == 0 and np.ndim(service_s) == 0 and np.ndim(think_s) == 0:  # one case: plain floats
        s, z, q, resp = float(service_s), float(think_s), 0.0, float(service_s)
        for n in range(1, int(math.ceil(float(users))) + 1):
            resp = s * (1.0 + q)
            q = n * resp / (resp + z)
        return max(resp - s, 0.0)
    n_users = np.ceil(np.asarray(users, dtype=float))
    s = np.asarray(service_s, dtype=float)
    z = np.asarray(think_s, dtype=float)
    n_users, s, z = np.broadcast_arrays(n_users, s, z)
    q = np.zeros(n_users.shape)
    resp = s.copy()
    for n in range(1, int(np.max(n_users, initial=1.0)) + 1):
        live = n <= n_users
        rn = s * (1.0 + q)
        resp = np.where(live, rn, resp)
        q = np.where(live, n * rn / (rn + z), q)
    out = np.maximum(resp - s, 0.0)
    return out if out.ndim else float(out)


__all__ = ["erlang_c", "waiting_time_quantile_s", "MAX_UTILIZATION_FRAC", "mean_decode_context_tokens",
           "service_variability_factor", "prefill_wait_quantile_s",
           "closed_loop_wait_s"]
