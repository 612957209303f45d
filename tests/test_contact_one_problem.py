"""One pressed contact: the closed form of ``solve_contact_problem``.

With a diagonal ``M⁻¹`` and one contact, :func:`solver.contact.solve_contact_problem`
picks the solution of its LCP among the sliding, sticking and starting-slip
candidates in closed form. The references are the same function on the
dense ``M⁻¹`` (Lemke's method) and the conditions of the LCP checked in the
test: ``λ ≥ 0``, ``a_n ≥ 0``, ``λ a_n = 0``, the friction force inside the
cone, and a contact that slides or starts to slide has its friction at
``μλ`` against the slip.
"""

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from solver.contact import solve_contact_problem
from solver.errors import SolverError
from tests.contact_problems import one_contact

ONE_CONTACT = one_contact(
    modes=(None, "stick", "slip+", "slip-"),
    u_t=st.sampled_from([0.0, 1e-12]) | st.floats(-1.0, 1.0),
)
"""Modes the solver decides or imposed; tangential speeds at rest, at round-off or sliding."""


def lemke_answer(contact, mode, M_inv, f):
    """The general route (Lemke on the dense ``M⁻¹``), or the error it raises."""
    try:
        return solve_contact_problem([contact], np.diag(M_inv), f, modes=[mode])
    except SolverError as error:
        return error


@given(ONE_CONTACT)
def test_closed_form_solves_the_lcp_lemke_solves(problem):
    contact, mode, M_inv, f = problem
    general = lemke_answer(contact, mode, M_inv, f)
    assume(not isinstance(general, SolverError))
    closed = solve_contact_problem([contact], M_inv, f, modes=[mode])
    scale = 1.0 + float(np.max(np.abs(general.qdd)))
    # a nearly singular problem (G, H nearly dependent) carries ε·cond in both answers
    rows = np.array([contact.G, contact.H])
    condition = float(np.linalg.cond(rows @ (M_inv[:, None] * rows.T)))
    assume(condition < 1e8)
    tol = 1e-13 * max(condition, 1e3)
    force = 1.0 + float(np.max(np.abs(general.lam), initial=0.0))
    lam, a_n = float(closed.lam[0]), float(closed.a_n[0])
    # the LCP's conditions, from the returned accelerations
    assert lam >= 0.0
    assert a_n >= -tol * scale
    assert abs(lam * a_n) <= tol * scale * force
    assert abs(float(closed.friction_force[0])) <= contact.friction * lam * (1 + 1e-12) + 1e-300
    np.testing.assert_allclose(
        closed.qdd,
        M_inv * (f + contact.G * lam + contact.H * float(closed.friction_force[0])),
        rtol=0.0,
        atol=tol * scale,
    )
    np.testing.assert_allclose(closed.lam, general.lam, rtol=0.0, atol=tol * force)
    np.testing.assert_allclose(closed.qdd, general.qdd, rtol=0.0, atol=tol * scale)
    np.testing.assert_allclose(
        closed.friction_force, general.friction_force, rtol=0.0, atol=tol * force
    )
    if abs(general.a_t[0]) > 1e-6 * scale:  # away from the mode decision's threshold
        assert closed.modes == general.modes


def test_frictionless_disk_on_the_floor_carries_its_weight():
    # a unit disk resting on a horizontal floor: G = (0, 1, 0) on (x, y, φ), f = (0, −m g, 0)
    m, g, r = 2.0, 9.81, 0.1
    contact = SimpleNamespace(
        body="disk",
        other="floor",
        G=np.array([0.0, 1.0, 0.0]),
        H=np.array([1.0, 0.0, -r]),
        u_t=0.0,
        gamma_n=0.0,
        gamma_t=0.0,
        friction=0.0,
    )
    M_inv = 1.0 / np.array([m, m, 0.5 * m * r * r])
    forces = solve_contact_problem([contact], M_inv, np.array([0.0, -m * g, 0.0]))
    assert forces.lam[0] == m * g
    np.testing.assert_array_equal(forces.qdd, [0.0, 0.0, 0.0])
    assert forces.modes == ("stick",)


@pytest.mark.parametrize("mu", [0.1, 0.5])
def test_disk_on_an_incline_sticks_or_slides_as_the_textbook_says(mu):
    # uniform disk on an incline of 30°: it rolls (sticks) when μ ≥ tan θ / 3, otherwise slides
    # with a = g (sin θ − μ cos θ) along the slope and λ = m g cos θ (no other friction mode)
    m, g, r, theta = 1.0, 9.81, 0.2, np.radians(30.0)
    n = np.array([np.sin(theta), np.cos(theta)])  # outward normal of the slope
    t = np.array([np.cos(theta), -np.sin(theta)])  # down the slope
    contact = SimpleNamespace(
        body="disk",
        other="slope",
        G=np.array([n[0], n[1], 0.0]),
        H=np.array([t[0], t[1], r]),  # contact point velocity along t: ċ·t + r ω
        u_t=0.0,
        gamma_n=0.0,
        gamma_t=0.0,
        friction=mu,
    )
    M_inv = 1.0 / np.array([m, m, 0.5 * m * r * r])
    forces = solve_contact_problem([contact], M_inv, np.array([0.0, -m * g, 0.0]))
    along = float(forces.qdd[:2] @ t)
    np.testing.assert_allclose(forces.lam[0], m * g * np.cos(theta), rtol=1e-14)
    if mu >= np.tan(theta) / 3.0:
        assert forces.modes == ("stick",)
        np.testing.assert_allclose(along, 2.0 / 3.0 * g * np.sin(theta), rtol=1e-14)
    else:
        assert forces.modes == ("slip+",)
        np.testing.assert_allclose(along, g * (np.sin(theta) - mu * np.cos(theta)), rtol=1e-14)
