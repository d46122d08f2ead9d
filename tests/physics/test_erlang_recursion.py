"""Erlang C without SciPy (issue 20.6): the Erlang B recursion used up to ERLANG_RECURSION_MAX_SERVERS servers gives
the incomplete-gamma formula's value (scipy.special), which still serves larger pools."""

import numpy as np

from econ.physics import serving


def _gamma_form(c, a):
    from scipy.special import gammaincc, gammaln

    a = np.maximum(np.minimum(a, c * serving.MAX_UTILIZATION_FRAC), 1e-300)
    log_t = c * np.log(a) - gammaln(c + 1.0) + np.log(c / (c - a))
    log_s = a + np.log(np.maximum(gammaincc(c, a), 1e-300))
    return 1.0 / (1.0 + np.exp(log_s - log_t))


def test_recursion_equals_the_incomplete_gamma_form():
    rng = np.random.default_rng(3)
    c = rng.integers(1, serving.ERLANG_RECURSION_MAX_SERVERS + 1, 4_000).astype(float)
    a = rng.uniform(0.0, 1.0, c.size) * c
    got, want = serving.erlang_c(c, a), _gamma_form(c, a)
    big = want > 1e-8
    assert big.sum() > 500
    assert np.max(np.abs(got[big] - want[big]) / want[big]) < 1e-11
    assert np.max(np.abs(got - want)) < 1e-12


def test_known_values_and_the_large_pool_path():
    assert serving.erlang_c(1, 0.7) == np.float64(0.7) or abs(serving.erlang_c(1, 0.7) - 0.7) < 1e-15  # M/M/1
    # C(2, 1) = 1/3 (a^2/2! x 2/(2-1) = 1; S = 1 + 1 = 2: 1 / (2 + 1))
    assert abs(float(serving.erlang_c(2.0, 1.0)) - 1.0 / 3.0) < 1e-14
    c = np.array([300.0, 1000.0])  # above the recursion's range: the SciPy form
    a = 0.9 * c
    assert np.allclose(serving.erlang_c(c, a), _gamma_form(c, a), rtol=1e-14)
