"""One active contact with a fixed mode: the closed form of ``solve_with_modes``.

With a diagonal ``M⁻¹`` and one contact, :func:`solver.contact.solve_with_modes`
solves ``a_n = 0`` (and ``a_t = 0`` when sticking) in closed form. The
reference is the same function on the dense ``M⁻¹`` (its least-squares route)
and the equality system solved in the test with ``numpy.linalg.solve``.
"""

import numpy as np
from hypothesis import assume, given

from solver.contact import solve_with_modes
from tests.contact_problems import one_contact


@given(one_contact(modes=("stick", "slip+", "slip-")))
def test_closed_form_equals_the_least_squares_route(problem):
    contact, mode, M_inv, f = problem
    closed = solve_with_modes([contact], [mode], M_inv, f)
    general = solve_with_modes([contact], [mode], np.diag(M_inv), f)
    # both answers carry the round-off of the system they solve: ε·cond
    rows = np.array([contact.G, contact.H] if mode == "stick" else [contact.G])
    condition = float(np.linalg.cond(rows @ (M_inv[:, None] * rows.T)))
    assume(condition < 1e10)
    tol = 1e-14 * max(condition, 1e3)
    scale = 1.0 + float(np.max(np.abs(general.qdd)))
    np.testing.assert_allclose(closed.qdd, general.qdd, rtol=0.0, atol=tol * scale)
    force = 1.0 + float(np.max(np.abs(general.lam)))
    np.testing.assert_allclose(closed.lam, general.lam, rtol=0.0, atol=tol * force)
    np.testing.assert_allclose(
        closed.friction_force, general.friction_force, rtol=0.0, atol=tol * force
    )
    np.testing.assert_allclose(closed.a_n, general.a_n, rtol=0.0, atol=10.0 * tol * scale)
    np.testing.assert_allclose(closed.a_t, general.a_t, rtol=0.0, atol=10.0 * tol * scale)
    if abs(general.a_t[0]) > 1e-6 * scale:  # away from the mode decision's threshold
        assert closed.modes == general.modes
        np.testing.assert_allclose(closed.tau, general.tau, rtol=0.0, atol=1e-9)


@given(one_contact(modes=("stick", "slip+", "slip-")))
def test_the_contact_is_held(problem):
    """``a_n = 0`` (and ``a_t = 0`` sticking with friction); a slide carries ``−μλτ``."""
    contact, mode, M_inv, f = problem
    forces = solve_with_modes([contact], [mode], M_inv, f)
    G, H, mu = contact.G, contact.H, contact.friction
    a_free = M_inv * f
    if mode == "stick" and mu > 0.0:
        rows = np.array([G, H])
        A = rows @ (M_inv[:, None] * rows.T)
        assume(np.linalg.cond(A) < 1e8)
        lam, beta = np.linalg.solve(A, -(rows @ a_free + [contact.gamma_n, contact.gamma_t]))
        qdd = a_free + M_inv * (G * lam + H * beta)
    else:
        sign = (1.0 if mode == "slip+" else -1.0) if mu > 0.0 else 0.0
        W = G - mu * sign * H
        lam = -(G @ a_free + contact.gamma_n) / (G @ (M_inv * W))
        qdd = a_free + M_inv * W * lam
    scale = 1.0 + float(np.max(np.abs(qdd)))
    np.testing.assert_allclose(forces.qdd, qdd, rtol=0.0, atol=1e-10 * scale)
    assert abs(forces.lam[0] - lam) <= 1e-10 * (1.0 + abs(lam))
    assert abs(forces.a_n[0]) <= 1e-10 * scale
