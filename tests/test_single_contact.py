"""The closed-form impact of one contact (solver.single_contact) against the general laws.

The general :func:`solver.impact.resolve_impact` (Lemke on the friction
cone, least-distance projections) is the reference: on random mass matrices
(diagonal or dense, condition up to 1e3), Jacobians, restitutions, friction
coefficients and pre-impact velocities, every law's result agrees to
``1e-14 κ`` relative, ``κ = cond(W) cond(M)`` with ``W`` the 2×2 Delassus
block of the normal and the tangent. A disk hitting a floor is checked
against the textbook closed forms of a sliding and a sticking impact.
"""

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from solver.errors import SolverError
from solver.impact import IMPACT_LAWS, resolve_impact
from solver.single_contact import resolve_single_impact


@st.composite
def single_contacts(draw):
    """``(M, g, h, v, e, μ)``: one contact of an N-coordinate system, approaching."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    N = draw(st.integers(2, 5))
    condition = 10.0 ** draw(st.floats(0.0, 3.0))
    if draw(st.booleans()):
        M = np.exp(rng.uniform(0.0, math.log(condition), N))
    else:
        Q, _ = np.linalg.qr(rng.normal(size=(N, N)))
        M = Q @ np.diag(np.exp(rng.uniform(0.0, math.log(condition), N))) @ Q.T
        M = 0.5 * (M + M.T)
    g, h, v = rng.normal(size=(3, N))
    if g @ v > 0.0:
        v = -v
    e = draw(st.sampled_from([0.0, 1.0]) | st.floats(0.0, 1.0))
    mu = draw(st.sampled_from([0.0]) | st.floats(0.0, 2.0))
    return M, g, h, v, e, mu


def _kappa(M, g, h):
    """``cond(W) cond(M)`` of the contact: the round-off either answer may carry."""
    dense = np.diag(M) if M.ndim == 1 else M
    MinvC = np.linalg.solve(dense, np.column_stack((g, h)))
    W = np.column_stack((g, h)).T @ MinvC
    return float(np.linalg.cond(W) * np.linalg.cond(dense))


@given(single_contacts(), st.sampled_from(IMPACT_LAWS))
def test_closed_form_equals_the_general_law(problem, law):
    M, g, h, v, e, mu = problem
    kappa = _kappa(M, g, h)
    assume(kappa < 1e6)
    fast = resolve_single_impact(M, g, v, e, law, h=h, friction=mu)
    try:
        ref = resolve_impact(M, g[:, None], v, e, law, H=h[:, None], friction=mu)
    except SolverError:
        # Lemke found no consistent impulse: an impulsive Painlevé configuration,
        # which the closed form must leave to the general law as well
        assert fast is None
        return
    if fast is None:
        # left to the general law only where friction couples normal and tangent so
        # strongly that the slide has no positive effective mass
        MinvC = np.linalg.solve(np.diag(M) if M.ndim == 1 else M, np.column_stack((g, h)))
        W = np.column_stack((g, h)).T @ MinvC
        assert mu > 0.0 and W[0, 0] - mu * abs(W[0, 1]) <= 0.0
        return
    speed = max(1.0, float(np.max(np.abs(v))))
    tol = 1e-14 * kappa
    np.testing.assert_allclose(fast.v_plus, ref.v_plus, rtol=0.0, atol=tol * speed)
    impulse = speed * float(np.max(np.abs(M)))  # the momentum scale, N·s
    assert abs(fast.impulse[0] - ref.impulse[0]) <= tol * impulse
    assert abs(fast.tangent_impulse[0] - ref.tangent_impulse[0]) <= tol * impulse
    kinetic = 0.5 * float(v @ (M * v if M.ndim == 1 else M @ v))
    assert abs(fast.energy_change - ref.energy_change) <= tol * kinetic
    assert fast.admissible == ref.admissible
    assert fast.note == ref.note and fast.law == ref.law
    # stage by stage; a stage more or less may only carry round-off (a residual
    # approach speed at the admissibility tolerance)
    for ours, theirs in zip(fast.stages, ref.stages, strict=False):
        np.testing.assert_allclose(ours.y, theirs.y, rtol=0.0, atol=tol * speed)
        np.testing.assert_allclose(ours.w, theirs.w, rtol=0.0, atol=tol * speed)
        assert abs(ours.lam[0] - theirs.lam[0]) <= tol * impulse
        assert abs(ours.tangent_impulse[0] - theirs.tangent_impulse[0]) <= tol * impulse
    common = min(len(fast.stages), len(ref.stages))
    for extra in [*fast.stages[common:], *ref.stages[common:]]:
        assert abs(extra.lam[0]) <= 1e3 * tol * impulse


@given(single_contacts(), st.sampled_from(IMPACT_LAWS))
def test_work_on_the_contacts_coordinates_only(problem, law):
    """A diagonal mass matrix and a contact on some coordinates: ``dofs`` gives the same jump."""
    M, g, h, v, e, mu = problem
    if M.ndim == 2:
        M = np.diag(M).copy()
    dofs = np.array([0, 2]) if len(v) > 2 else np.array([1])
    g_full, h_full = np.zeros_like(v), np.zeros_like(v)
    g_full[dofs], h_full[dofs] = g[dofs], h[dofs]
    assume(g_full @ v < 0.0 and np.any(h[dofs]))
    full = resolve_single_impact(M, g_full, v, e, law, h=h_full, friction=mu)
    local = resolve_single_impact(M, g[dofs], v, e, law, h=h[dofs], friction=mu, dofs=dofs)
    assert (full is None) == (local is None)
    if full is None:
        return
    speed = max(1.0, float(np.max(np.abs(v))))
    np.testing.assert_allclose(local.v_plus, full.v_plus, rtol=0.0, atol=1e-14 * speed)
    untouched = np.setdiff1d(np.arange(len(v)), dofs)
    assert np.array_equal(local.v_plus[untouched], v[untouched])
    assert len(local.stages) == len(full.stages)
    for ours, theirs in zip(local.stages, full.stages, strict=True):
        assert ours.y.shape == ours.w.shape == v.shape
        np.testing.assert_allclose(ours.w, theirs.w, rtol=0.0, atol=1e-14 * speed)


def _disk_on_floor(m=2.0, r=0.3, vx=1.5, vy=-2.0, omega=4.0):
    """A uniform disk (I = m r²/2) hitting the floor y = 0: M, g, h, v."""
    M = np.array([m, m, 0.5 * m * r * r])
    g = np.array([0.0, 1.0, 0.0])  # u_n = v_y
    h = np.array([1.0, 0.0, r])  # slip of the contact point: v_x + r ω (ω clockwise positive)
    return M, g, h, np.array([vx, vy, omega])


@pytest.mark.parametrize("law", IMPACT_LAWS)
def test_disk_sliding_through_the_impact(law):
    """Small μ: slides throughout; Λ = m(1 + e)|v_y|, p_t = −μΛ sign(slip) (textbook)."""
    M, g, h, v = _disk_on_floor()
    m, r, e, mu = M[0], 0.3, 0.5, 0.1
    result = resolve_single_impact(M, g, v, e, law, h=h, friction=mu)
    lam = m * (1.0 + e) * 2.0
    slip = v[0] + r * v[2]
    p = -mu * lam * math.copysign(1.0, slip)
    assert result.impulse[0] == pytest.approx(lam, rel=1e-15)
    assert result.tangent_impulse[0] == pytest.approx(p, rel=1e-15)
    expected = v + np.array([p / m, lam / m, r * p / M[2]])
    np.testing.assert_allclose(result.v_plus, expected, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("law", IMPACT_LAWS)
def test_disk_caught_rolling_by_the_impact(law):
    """Large μ: the contact point stops in the plastic phase and keeps still after it.

    The plastic phase leaves ``v_x + r ω = 0`` (a uniform disk: ``v_x⁺ = (2 v_x −
    r ω)/3`` from the angular momentum about the contact point); the
    restitution phase's normal impulse does not act on the slip, so it stays zero.
    """
    M, g, h, v = _disk_on_floor()
    r, e, mu = 0.3, 0.5, 5.0
    result = resolve_single_impact(M, g, v, e, law, h=h, friction=mu)
    vx = (2.0 * v[0] - r * v[2]) / 3.0
    np.testing.assert_allclose(result.v_plus, [vx, -e * v[1], -vx / r], rtol=1e-14, atol=1e-15)
