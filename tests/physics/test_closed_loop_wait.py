"""The finite-source (closed-loop) prefill queue of fixed-concurrency benchmarks
(:func:`econ.physics.serving.closed_loop_wait_s`): known answers of mean value analysis and its bounds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.physics.serving import closed_loop_wait_s


def test_one_user_never_waits():
    assert closed_loop_wait_s(1, 0.5, 10.0) == 0.0


@pytest.mark.parametrize("users", [2, 5, 64])
def test_without_think_time_every_user_waits_for_all_the_others(users):
    # Z = 0: the queue always holds every user, so each waits (users - 1) service times (exact for any service law)
    assert closed_loop_wait_s(users, 0.25, 0.0) == pytest.approx((users - 1) * 0.25, rel=1e-12)


def test_two_users_known_answer():
    # MVA by hand: R(1) = S, Q(1) = S / (S + Z); R(2) = S (1 + Q(1)); wait = R(2) - S = S^2 / (S + Z)
    s, z = 0.4, 3.6
    assert closed_loop_wait_s(2, s, z) == pytest.approx(s * s / (s + z), rel=1e-12)


def test_saturated_loop_tends_to_users_times_service_less_think():
    # far beyond the knee (users x S >> S + Z) the server is always busy: R = users S - Z (the machine-repairman
    # asymptote, Lazowska et al. 1984 sec. 5.3); the wait excludes the request's own service
    s, z, n = 0.05, 40.0, 2048
    assert closed_loop_wait_s(n, s, z) == pytest.approx(n * s - z - s, rel=1e-3)


def test_light_load_wait_is_small():
    # 4 users, a 50 ms prompt each 9 s: utilization ~2%, the wait a fraction of a millisecond
    assert 0.0 < closed_loop_wait_s(4, 0.05, 9.0) < 1e-3


def test_arrays_broadcast_and_round_users_up():
    got = closed_loop_wait_s(np.array([1.0, 2.0, 1.5]), 0.4, np.array([3.6, 3.6, 3.6]))
    assert got.shape == (3,)
    assert got[0] == 0.0 and got[1] == pytest.approx(got[2], rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(users=st.integers(1, 300), s=st.floats(1e-3, 2.0), z=st.floats(0.0, 100.0))
def test_wait_is_bounded_and_grows_with_users(users, s, z):
    w = closed_loop_wait_s(users, s, z)
    assert 0.0 <= w <= (users - 1) * s * (1 + 1e-12)
    assert closed_loop_wait_s(users + 1, s, z) >= w - 1e-12
    assert closed_loop_wait_s(users, s, z + 1.0) <= w + 1e-12


@pytest.mark.parametrize("users,s,z", [(2, 0.4, 3.6), (64, 0.5, 10.0), (2048, 0.05, 40.0), (7.5, 0.2, 1.0)])
def test_scalar_and_array_paths_agree(users, s, z):
    assert closed_loop_wait_s(users, s, z) == pytest.approx(float(closed_loop_wait_s(np.array([users]), s, z)[0]),
                                                             rel=1e-12)
