"""The acceleration-level contact problem (MECHANICS §2) on hand-built contacts."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from solver.contact import solve_contact_problem, solve_with_modes
from solver.errors import SolverError

G_ACC = 9.81


def wheel_contact(normal, radius, *, u_t=0.0, friction=0.0, body="wheel", other="ground"):
    """A wheel (x, y, φ) touching a flat feature with unit ``normal``; no curvature terms."""
    n = np.asarray(normal, dtype=float)
    t = np.array([n[1], -n[0]])
    return SimpleNamespace(
        body=body,
        other=other,
        G=np.array([n[0], n[1], 0.0]),
        H=np.array([t[0], t[1], radius]),
        u_t=u_t,
        gamma_n=0.0,
        gamma_t=0.0,
        friction=friction,
    )


def wheel_inverse_mass(m, J):
    return np.linalg.inv(np.diag([m, m, J]))


def test_block_resting_on_the_floor_carries_its_weight():
    m, r = 3.0, 0.2
    M_inv = wheel_inverse_mass(m, 0.5 * m * r * r)
    f = np.array([0.0, -m * G_ACC, 0.0])
    result = solve_contact_problem([wheel_contact((0, 1), r, friction=0.5)], M_inv, f)
    assert result.lam[0] == pytest.approx(m * G_ACC, rel=1e-14)
    np.testing.assert_allclose(result.qdd, 0.0, atol=1e-14)
    assert result.modes == ("stick",)


def incline(theta, m, r, mu):
    """A uniform disk (J = m r²/2) at rest on an incline rising to the right at ``theta``."""
    M_inv = wheel_inverse_mass(m, 0.5 * m * r * r)
    contact = wheel_contact((-math.sin(theta), math.cos(theta)), r, friction=mu)
    f = np.array([0.0, -m * G_ACC, 0.0])
    return contact, M_inv, f


@pytest.mark.parametrize("theta", [0.1, 0.5, 1.0])
def test_wheel_on_incline_rolls_without_slip_when_friction_suffices(theta):
    m, r = 2.0, 0.15
    mu = math.tan(theta) / 3.0 * 1.01
    contact, M_inv, f = incline(theta, m, r, mu)
    result = solve_contact_problem([contact], M_inv, f)
    a_down = 2.0 / 3.0 * G_ACC * math.sin(theta)  # closed form for J = m r²/2
    np.testing.assert_allclose(
        result.qdd,
        [-a_down * math.cos(theta), -a_down * math.sin(theta), a_down / r],
        rtol=1e-12,
        atol=1e-12,
    )
    assert result.modes == ("stick",)
    assert result.lam[0] == pytest.approx(m * G_ACC * math.cos(theta), rel=1e-12)
    friction_up_slope = m * G_ACC * math.sin(theta) / 3.0
    assert result.tau[0] == pytest.approx(-friction_up_slope / (mu * result.lam[0]), rel=1e-10)


@pytest.mark.parametrize("theta", [0.3, 0.8])
def test_wheel_on_incline_slips_with_closed_form_accelerations_when_friction_is_short(theta):
    m, r = 2.0, 0.15
    mu = math.tan(theta) / 3.0 * 0.5
    contact, M_inv, f = incline(theta, m, r, mu)
    result = solve_contact_problem([contact], M_inv, f)
    a_along = -G_ACC * math.sin(theta) + mu * G_ACC * math.cos(theta)  # centre, along +t
    omega_dot = 2.0 * mu * G_ACC * math.cos(theta) / r  # J ω̇ = μ λ r
    np.testing.assert_allclose(
        result.qdd,
        [a_along * math.cos(theta), a_along * math.sin(theta), omega_dot],
        rtol=1e-10,
        atol=1e-12,
    )
    assert result.modes == ("slip-",)
    assert result.tau[0] == -1.0
    assert result.lam[0] == pytest.approx(m * G_ACC * math.cos(theta), rel=1e-12)


def test_sliding_wheel_gets_kinetic_friction_against_its_slip():
    m, r, mu = 1.0, 0.1, 0.3
    M_inv = wheel_inverse_mass(m, 0.5 * m * r * r)
    f = np.array([0.0, -m * G_ACC, 0.0])
    result = solve_contact_problem([wheel_contact((0, 1), r, u_t=2.0, friction=mu)], M_inv, f)
    np.testing.assert_allclose(
        result.qdd, [-mu * G_ACC, 0.0, -mu * m * G_ACC * r / (0.5 * m * r * r)], rtol=1e-12
    )
    assert result.modes == ("slip+",)
    assert result.friction_force[0] == pytest.approx(-mu * m * G_ACC, rel=1e-12)


def test_concave_corner_shares_the_load_between_floor_and_wall():
    m, r = 2.0, 0.1
    M_inv = wheel_inverse_mass(m, 0.01)
    gravity = np.array([-3.0, -4.0])  # pushes into the wall at x = 0 and onto the floor
    f = np.array([m * gravity[0], m * gravity[1], 0.0])
    floor = wheel_contact((0, 1), r, other="floor")
    wall = wheel_contact((1, 0), r, other="wall")
    result = solve_contact_problem([floor, wall], M_inv, f)
    np.testing.assert_allclose(result.lam, [4.0 * m, 3.0 * m], rtol=1e-12)
    np.testing.assert_allclose(result.qdd, 0.0, atol=1e-12)


def test_concave_corner_with_friction_holds_the_wheel_in_equilibrium():
    m, r, mu = 2.0, 0.1, 0.5
    M_inv = wheel_inverse_mass(m, 0.01)
    f = np.array([-3.0 * m, -4.0 * m, 0.0])
    contacts = [
        wheel_contact((0, 1), r, friction=mu, other="floor"),
        wheel_contact((1, 0), r, friction=mu, other="wall"),
    ]
    result = solve_contact_problem(contacts, M_inv, f)
    np.testing.assert_allclose(result.qdd, 0.0, atol=1e-12)
    total = f + sum(
        c.G * lam + c.H * ff
        for c, lam, ff in zip(contacts, result.lam, result.friction_force, strict=True)
    )
    np.testing.assert_allclose(total, 0.0, atol=1e-12)
    assert np.all(result.lam >= 0.0)
    assert np.all(np.abs(result.friction_force) <= mu * result.lam + 1e-12)


def test_painleve_inconsistency_raises_and_names_the_contact():
    # Sliding contact whose friction pulls it harder into the constraint than λ pushes out:
    # Gᵀ M⁻¹ (G − μ H) < 0 and a pressing free acceleration: the LCP has no solution.
    contact = SimpleNamespace(
        body="rod",
        other="floor",
        G=np.array([1.0, 0.0]),
        H=np.array([1.0, 1.0]),
        u_t=1.0,
        gamma_n=0.0,
        gamma_t=0.0,
        friction=2.0,
    )
    with pytest.raises(SolverError, match="'rod' with 'floor'"):
        solve_contact_problem([contact], np.eye(2), np.array([-1.0, 0.0]))


def random_problem(seed, n_dof, n_contacts):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n_dof, n_dof))
    M = A @ A.T + n_dof * np.eye(n_dof)
    contacts = [
        SimpleNamespace(
            body=f"b{k}",
            other="wall",
            G=rng.normal(size=n_dof),
            H=np.zeros(n_dof),
            u_t=0.0,
            gamma_n=float(rng.normal()),
            gamma_t=0.0,
            friction=0.0,
        )
        for k in range(n_contacts)
    ]
    f = rng.normal(size=n_dof) * 3.0
    return M, contacts, f


@pytest.mark.parametrize("seed", range(6))
def test_frictionless_contact_accelerations_minimise_gauss_constraint(seed):
    M, contacts, f = random_problem(seed, n_dof=5, n_contacts=3)
    M_inv = np.linalg.inv(M)
    result = solve_contact_problem(contacts, M_inv, f)
    a_free = np.linalg.solve(M, f)
    G = np.column_stack([c.G for c in contacts])
    gamma = np.array([c.gamma_n for c in contacts])
    reference = minimize(
        lambda a: 0.5 * (a - a_free) @ M @ (a - a_free),
        a_free,
        jac=lambda a: M @ (a - a_free),
        constraints=[{"type": "ineq", "fun": lambda a: G.T @ a + gamma, "jac": lambda a: G.T}],
        method="SLSQP",
        options={"ftol": 1e-13, "maxiter": 500},
    )

    def objective(a):
        return 0.5 * (a - a_free) @ M @ (a - a_free)

    assert np.all(G.T @ result.qdd + gamma >= -1e-10)
    assert np.all(G.T @ reference.x + gamma >= -1e-8)
    assert objective(result.qdd) <= objective(reference.x) + 1e-9
    np.testing.assert_allclose(result.qdd, reference.x, atol=1e-5)


@settings(max_examples=200)
@given(seed=st.integers(0, 2**32 - 1), n_contacts=st.integers(1, 4))
def test_frictionless_contact_forces_are_complementary(seed, n_contacts):
    M, contacts, f = random_problem(seed, n_dof=4, n_contacts=n_contacts)
    result = solve_contact_problem(contacts, np.linalg.inv(M), f)
    scale = 1.0 + np.abs(result.lam).max()
    assert np.all(result.lam >= 0.0)
    assert np.all(result.a_n >= -1e-9 * scale)
    assert np.all(np.abs(result.lam * result.a_n) <= 1e-9 * scale * scale)


def test_fixed_modes_reproduce_the_lcp_solution_when_the_modes_match():
    theta, m, r = 0.4, 1.5, 0.2
    contact, M_inv, f = incline(theta, m, r, mu=1.0)
    free = solve_contact_problem([contact], M_inv, f)
    fixed = solve_with_modes([contact], free.modes, M_inv, f)
    np.testing.assert_allclose(fixed.qdd, free.qdd, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fixed.lam, free.lam, rtol=1e-12)
