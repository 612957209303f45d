"""Projected Gauss–Seidel for contact impulses: the law it solves, the compiled kernel."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from solver import gauss_seidel
from solver.contact_arrays import SparseRows

N_DOFS = 6
WIDTH = 3


@st.composite
def contact_problems(draw, max_contacts: int = 4, friction: bool = True, decoupled: bool = False):
    """Random rows of G and H (distinct columns per row), masses, free motion and laws.

    ``decoupled``: each contact's H row uses the columns its G row does not,
    so ``G M⁻¹ Hᵀ = 0`` on the contact itself, as for every disk contact
    (``n·t / m = 0``, and the rolling entry has no normal counterpart).
    """
    K = draw(st.integers(1, max_contacts))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    g_cols = np.array([rng.permutation(N_DOFS)[:WIDTH] for _ in range(K)])
    if decoupled:
        h_cols = np.array([np.setdiff1d(np.arange(N_DOFS), row) for row in g_cols])
    else:
        h_cols = np.array([rng.permutation(N_DOFS)[:WIDTH] for _ in range(K)])
    g_vals = rng.uniform(-1.0, 1.0, (K, WIDTH))
    h_vals = rng.uniform(-1.0, 1.0, (K, WIDTH))
    g_vals[:, 0] += np.where(g_vals[:, 0] >= 0.0, 0.5, -0.5)  # rows bounded away from 0
    h_vals[:, 0] += np.where(h_vals[:, 0] >= 0.0, 0.5, -0.5)
    m_inv = rng.uniform(0.2, 5.0, N_DOFS)
    v = rng.uniform(-2.0, 2.0, N_DOFS)
    v_free = v + rng.uniform(-0.5, 0.5, N_DOFS)
    e = rng.uniform(0.0, 1.0, K)
    mu = rng.uniform(0.0, 1.0, K) if friction else np.zeros(K)
    return g_cols, g_vals, h_cols, h_vals, m_inv, v, v_free, e, mu


def solve(problem, kernel, tol=1e-14, max_sweeps=20_000):
    """Sweep to ``tol`` or ``max_sweeps``: the law is then checked, not the sweep count
    (tiny impulses can keep changing by round-off and never meet a relative ``tol``)."""
    g_cols, g_vals, h_cols, h_vals, m_inv, v, v_free, e, mu = problem
    G, H = SparseRows(g_cols, g_vals, N_DOFS), SparseRows(h_cols, h_vals, N_DOFS)
    lam_n, lam_t = np.zeros(len(e)), np.zeros(len(e))
    v_next = v_free.copy()
    sweeps = kernel(
        g_cols, g_vals, h_cols, h_vals, m_inv, e * G.dot(v), mu,
        G.diagonal_gram(m_inv), H.diagonal_gram(m_inv), lam_n, lam_t, v_next, tol, max_sweeps,
    )  # fmt: skip
    return G, H, lam_n, lam_t, v_next, sweeps


def assert_contact_law(problem, G, H, lam_n, lam_t, v_next, tol=1e-9):
    """Newton's law with Coulomb friction (see solver.gauss_seidel), to ``tol`` (m/s, N·s)
    times the largest impulse when that exceeds 1 N·s."""
    _, _, _, _, m_inv, v, v_free, e, mu = problem
    np.testing.assert_allclose(
        v_next, v_free + m_inv * (G.transpose_dot(lam_n) + H.transpose_dot(lam_t)), atol=1e-12
    )
    gap_rate = G.dot(v_next) + e * G.dot(v)
    slip = H.dot(v_next)
    tol *= max(1.0, float(np.max(lam_n)))  # large impulses: nearly dependent contacts
    assert np.all(lam_n >= 0.0) and np.all(gap_rate >= -tol)
    np.testing.assert_allclose(lam_n * gap_rate, 0.0, atol=tol)
    assert np.all(np.abs(lam_t) <= mu * lam_n + 1e-15)
    sticking = np.abs(lam_t) < mu * lam_n - tol
    np.testing.assert_allclose(slip[sticking], 0.0, atol=tol)
    assert np.all(lam_t[~sticking] * slip[~sticking] <= tol)


@given(contact_problems(friction=False))
def test_frictionless_impulses_obey_newtons_law(problem):
    G, H, lam_n, lam_t, v_next, _ = solve(problem, gauss_seidel.reference_sweeps)

    assert np.all(lam_t == 0.0)
    assert_contact_law(problem, G, H, lam_n, lam_t, v_next)


@given(contact_problems(max_contacts=1, decoupled=True))
def test_one_frictional_contact_obeys_newton_and_coulomb(problem):
    G, H, lam_n, lam_t, v_next, _ = solve(problem, gauss_seidel.reference_sweeps)

    assert_contact_law(problem, G, H, lam_n, lam_t, v_next)


@given(contact_problems(max_contacts=6), st.integers(1, 30))
def test_compiled_kernel_is_the_reference_loop(problem, max_sweeps):
    reference = solve(problem, gauss_seidel.reference_sweeps, 1e-12, max_sweeps)
    compiled = solve(problem, gauss_seidel.sweeps, 1e-12, max_sweeps)

    assert compiled[5] == reference[5]
    for ours, theirs in zip(compiled[2:5], reference[2:5], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
