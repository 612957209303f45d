"""The one-time path of a closed-form phase (``LinearPhase`` at a scalar time).

Event location evaluates a phase at one time after another; that path must
give the motion of the vectorised one. Checked against the closed form of a
harmonically forced free bead written here, against solve_ivp at rtol 1e-12
for a damped, forced spring–mass pair, and against the array path on random
systems.
"""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

from solver.linear_flow import LinearFlow


def forced_free_bead(t, t0, x0, v0, m, f0, F, omega, phi):
    """``m ẍ = f0 + F sin(ω t + φ)`` from ``(x0, v0)`` at ``t0``: position and velocity."""
    tau = t - t0
    drift = v0 + F * math.cos(omega * t0 + phi) / (m * omega)
    x = (
        x0
        + drift * tau
        + 0.5 * f0 / m * tau * tau
        - F / (m * omega**2) * (math.sin(omega * t + phi) - math.sin(omega * t0 + phi))
    )
    v = drift + f0 / m * tau - F / (m * omega) * math.cos(omega * t + phi)
    return x, v


def test_forced_free_bead_matches_its_closed_form_at_single_times():
    m, f0, F, omega, phi = 1.5, -0.7, 20.0, 10.0, 0.3
    t0, x0, v0 = 3.25, 0.04, -0.6
    phase = LinearFlow([m], [0.0], [0.0], [f0], [([F], omega, phi)]).start(t0, [x0], [v0])
    for t in (t0, t0 + 1e-9, t0 + 0.01, t0 + 0.37, t0 + 2.0, t0 - 0.2):
        q, v = phase.state(t)
        x, xd = forced_free_bead(t, t0, x0, v0, m, f0, F, omega, phi)
        assert q.shape == (1,) and v.shape == (1,)
        assert abs(q[0] - x) <= 1e-14 * (1.0 + abs(x))
        assert abs(v[0] - xd) <= 1e-13 * (1.0 + abs(xd))


def test_damped_forced_pair_matches_solve_ivp_at_single_times():
    M = np.array([1.0, 2.0])
    C = np.array([[0.3, -0.1], [-0.1, 0.1]])
    K = np.array([[50.0, -20.0], [-20.0, 20.0]])
    f0 = np.array([0.5, -1.0])
    forcing = (np.array([3.0, 0.0]), 7.0, 0.4)
    phase = LinearFlow(M, C, K, f0, [forcing]).start(0.5, [0.1, -0.05], [0.0, 0.3])

    def rhs(t, y):
        q, v = y[:2], y[2:]
        force = f0 + forcing[0] * math.sin(forcing[1] * t + forcing[2]) - C @ v - K @ q
        return np.concatenate((v, force / M))

    times = [0.5 + 0.1 * k for k in range(1, 21)]
    sol = solve_ivp(
        rhs,
        (0.5, times[-1]),
        [0.1, -0.05, 0.0, 0.3],
        method="DOP853",
        t_eval=times,
        rtol=1e-12,
        atol=1e-14,
    )
    for k, t in enumerate(times):
        q, v = phase.state(t)
        np.testing.assert_allclose(q, sol.y[:2, k], rtol=0, atol=1e-10)
        np.testing.assert_allclose(v, sol.y[2:, k], rtol=0, atol=1e-9)


@settings(max_examples=200)
@given(
    masses=st.lists(st.floats(0.1, 10.0), min_size=1, max_size=3),
    stiffness=st.floats(0.0, 100.0),
    damping=st.floats(0.0, 2.0),
    amplitude=st.floats(-30.0, 30.0),
    omega=st.floats(0.5, 40.0),
    phi=st.floats(-math.pi, math.pi),
    tau=st.floats(-1.0, 5.0),
)
def test_one_time_equals_the_array_path(masses, stiffness, damping, amplitude, omega, phi, tau):
    n = len(masses)
    # a chain of springs from bead 0 to an anchor and between neighbours
    K = np.zeros((n, n))
    C = np.zeros((n, n))
    K[0, 0] += stiffness
    C[0, 0] += damping
    for i in range(n - 1):
        for A, value in ((K, stiffness), (C, damping)):
            A[i, i] += value
            A[i + 1, i + 1] += value
            A[i, i + 1] -= value
            A[i + 1, i] -= value
    forcing = (np.eye(n)[0] * amplitude, omega, phi)
    flow = LinearFlow(masses, C, K, np.full(n, -0.5), [forcing])
    phase = flow.start(1.0, np.linspace(-0.1, 0.1, n), np.linspace(0.2, -0.3, n))
    t = 1.0 + tau
    q1, v1 = phase.state(t)
    Q, V = phase.state(np.array([t]))
    scale = 1.0 + float(np.max(np.abs(np.concatenate((Q[0], V[0])))))
    np.testing.assert_allclose(q1, Q[0], rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(v1, V[0], rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(
        phase.acceleration(t),
        phase.acceleration(np.array([t]))[0],
        rtol=0,
        atol=1e-11 * scale * (1.0 + stiffness),
    )
