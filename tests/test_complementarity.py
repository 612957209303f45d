"""Exact LCP and least-distance solvers, judged by the complementarity conditions themselves."""

import numpy as np
import pytest

from solver.complementarity import (
    band_of,
    banded_lcp,
    least_distance,
    lemke,
    projected_fixed_point,
)
from solver.errors import InputError


def _assert_solves(M, q, result, tol=1e-10):
    assert result.status == "solved"
    z = result.z
    w = M @ z + q
    scale = max(1.0, np.max(np.abs(q)))
    assert np.all(z >= -tol * scale)
    assert np.all(w >= -tol * scale)
    assert np.max(np.abs(z * w)) <= tol * scale * max(1.0, np.max(np.abs(z)))


@pytest.mark.parametrize("seed", range(40))
def test_lemke_solves_random_p_matrix_problems(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    A = rng.normal(size=(n, n))
    M = A @ A.T + 0.1 * np.eye(n) + (A - A.T)  # positive definite, not symmetric: a P-matrix
    q = rng.normal(size=n)
    _assert_solves(M, q, lemke(M, q))


@pytest.mark.parametrize("seed", range(40))
def test_lemke_solves_feasible_positive_semidefinite_problems(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    B = rng.normal(size=(n, n - 1))
    M = B @ B.T
    z_star = np.where(rng.random(n) < 0.5, rng.random(n), 0.0)
    w_star = np.where(z_star > 0, 0.0, rng.random(n))
    q = w_star - M @ z_star  # (z_star, w_star) is a solution, so the LCP is feasible
    _assert_solves(M, q, lemke(M, q))


@pytest.mark.parametrize("seed", range(20))
def test_lemke_does_not_cycle_on_degenerate_problems(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    M = np.eye(n) + np.ones((n, n))  # every ratio ties at the first pivots
    q = -np.ones(n) * float(rng.integers(1, 4))
    q[rng.random(n) < 0.3] = 0.0  # zero entries: degenerate bases
    _assert_solves(M, q, lemke(M, q))


def test_lemke_reports_ray_termination_on_an_infeasible_problem():
    # w = -z - 1 >= 0 has no solution with z >= 0.
    assert lemke(np.array([[-1.0]]), np.array([-1.0])).status == "ray_termination"


def test_lemke_reports_hitting_the_iteration_limit():
    M = np.eye(4) + np.ones((4, 4))
    assert lemke(M, -np.arange(1.0, 5.0), max_iter=1).status == "iteration_limit"


def test_least_distance_reproduces_the_plastic_phase_of_paper_000_example_1():
    G = np.array([[-1.0, 0, 0], [0, 1, 1], [1, -1, 1]])
    z, lam = least_distance(np.eye(3), G, np.array([1.0, 0, 0]))
    np.testing.assert_allclose(z, [1 / 3, 1 / 3, 1 / 3], atol=1e-14)
    np.testing.assert_allclose(lam, [2 / 3, 1 / 3, 0], atol=1e-14)


def test_least_distance_splits_a_duplicated_constraint_evenly():
    G = np.array([[-1.0, 0, 0], [1, -1, 0], [0, 1, -1], [0, 0, 1]])
    G_twice = np.hstack([G, G[:, :1]])
    z, lam = least_distance(np.eye(4), G_twice, np.array([1.0, 0, 0, 1 / 3]))
    np.testing.assert_allclose(z, [1 / 3] * 4, atol=1e-14)
    # Paper 000 example 2's first multiplier 2/3, shared by the two copies.
    np.testing.assert_allclose(lam, [1 / 3, 1 / 3, 0, 1 / 3], atol=1e-14)


def test_least_distance_gives_minimum_norm_multipliers_for_a_clamped_chain():
    # Two unit beads between two walls: gaps x1, x2 - x1, -x2. Moving right at 1:
    # multipliers (a, a + 1, a + 2), a >= 0; the minimum-norm one has a = 0.
    G = np.array([[1.0, -1, 0], [0, 1, -1]])
    z, lam = least_distance(np.eye(2), G, np.array([1.0, 1.0]))
    np.testing.assert_allclose(z, [0, 0], atol=1e-14)
    np.testing.assert_allclose(lam, [0, 1, 2], atol=1e-13)


@pytest.mark.parametrize("seed", range(30))
def test_lemke_and_least_distance_agree_on_frictionless_plastic_phases(seed):
    rng = np.random.default_rng(seed)
    N = int(rng.integers(2, 7))
    n = int(rng.integers(1, N + 1))
    A = rng.normal(size=(N, N))
    M = A @ A.T + np.eye(N)
    G = rng.normal(size=(N, n))
    y = rng.normal(size=N)
    z, lam = least_distance(M, G, y)
    W = G.T @ np.linalg.solve(M, G)
    result = lemke(W, G.T @ y)
    z_lemke = y + np.linalg.solve(M, G @ result.z)
    np.testing.assert_allclose(z, z_lemke, atol=1e-12 * max(1.0, np.max(np.abs(y))))
    np.testing.assert_allclose(lam, result.z, atol=1e-11 * max(1.0, np.max(lam)))


def test_least_distance_refuses_a_non_symmetric_or_indefinite_metric():
    G = np.eye(2)
    with pytest.raises(InputError, match="`M` must be symmetric"):
        least_distance(np.array([[1.0, 0.5], [0.0, 1.0]]), G, np.zeros(2))
    with pytest.raises(InputError, match="`M` must be positive definite"):
        least_distance(np.array([[1.0, 0.0], [0.0, -1.0]]), G, np.zeros(2))


@pytest.mark.parametrize("seed", range(30))
def test_banded_lcp_agrees_with_lemke_on_tridiagonal_problems(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    masses = rng.uniform(0.1, 10.0, n + 1)
    # Delassus matrix of a bead chain: 1/m_i + 1/m_{i+1} on the diagonal, -1/m_{i+1} beside it.
    W = (
        np.diag(1 / masses[:-1] + 1 / masses[1:])
        - np.diag(1 / masses[1:-1], 1)
        - np.diag(1 / masses[1:-1], -1)
    )
    q = rng.normal(size=n)
    result = banded_lcp(band_of(W, 1), q)
    _assert_solves(W, q, result)
    np.testing.assert_allclose(result.z, lemke(W, q).z, atol=1e-10)


@pytest.mark.parametrize("seed", range(30))
def test_projected_fixed_point_agrees_with_lemke_on_frictional_impacts(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3))
    N = 2 * n + 1
    M = np.diag(rng.uniform(0.5, 2.0, N))
    G, H = rng.normal(size=(N, n)), rng.normal(size=(N, n))
    mu = rng.uniform(0.0, 1.0, n)
    y = rng.normal(size=N)
    GH = np.hstack([G, H])
    W = GH.T @ np.linalg.solve(M, GH)
    eye, zero = np.eye(n), np.zeros((n, n))
    Wnn, Wnt, Wtt = W[:n, :n], W[:n, n:], W[n:, n:]
    A = np.block(
        [
            [Wnn, Wnt, -Wnt, zero],
            [Wnt.T, Wtt, -Wtt, eye],
            [-Wnt.T, -Wtt, Wtt, eye],
            [np.diag(mu), -eye, -eye, zero],
        ]
    )
    u_t = H.T @ y
    exact = lemke(A, np.concatenate([G.T @ y, u_t, -u_t, np.zeros(n)]))
    _assert_solves(A, np.concatenate([G.T @ y, u_t, -u_t, np.zeros(n)]), exact)
    check = projected_fixed_point(W, GH.T @ y, mu, rho=0.8)
    if not check.converged:
        pytest.skip("the projected fixed point does not converge on this problem")
    np.testing.assert_allclose(check.lam, exact.z[:n], atol=1e-9)
    friction = -mu * check.lam * check.tau
    np.testing.assert_allclose(friction, exact.z[n : 2 * n] - exact.z[2 * n : 3 * n], atol=1e-9)


@pytest.mark.parametrize("struck", [0, 7, 38])
def test_banded_lcp_takes_round_off_resting_contacts_in_one_pivot(struck):
    # A touching chain of unit beads: W = tridiag(-1, 2, -1), one gap closing at 1 m/s, the
    # others resting with speeds of round-off size. Everything moves together:
    # z = W⁻¹ e_p, (W⁻¹)_ij = min(i, j)(n + 1 − max(i, j))/(n + 1) with 1-based indices.
    n = 39
    W = 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    q = np.where(np.arange(n) % 2 == 0, 1e-17, -1e-17)
    q[struck] = -1.0
    result = banded_lcp(band_of(W, 1), q)
    i, p = np.arange(1, n + 1), struck + 1
    expected = np.minimum(i, p) * (n + 1 - np.maximum(i, p)) / (n + 1)
    assert result.iterations == 1
    np.testing.assert_allclose(result.z, expected, atol=1e-14)
