"""Energy with restitutions that differ per contact (issue 24).

Paper 000 (30)-(35) proves that a stage of the staged law changes the kinetic
energy by ΔT_I + ΔT_II = −½(Gλ)ᵀM⁻¹(Gλ) + ½(G ελ)ᵀM⁻¹(G ελ), which is
−(1 − ε²)/2 (Gλ)ᵀM⁻¹(Gλ) <= 0 for one scalar ε. With one ε per contact the
release term is ½(GEλ)ᵀM⁻¹(GEλ) (E = diag ε_i), which exceeds the plastic
loss when the constraints pull against each other (W_ij < 0) and the more
elastic one took the larger impulse: the laws flag such an impact
(``ImpactResult.gains_energy``; an ``energy_gain`` event row, red in the
event log) rather than change the law.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.impact import ENERGY_GAIN_TOLERANCE, resolve_impact


def _carnot_change(M, G, stages, e):
    """Σ_k ½[(GEλ)ᵀM⁻¹(GEλ) − (Gλ)ᵀM⁻¹(Gλ)] from the stages (paper 000 (32), E per contact)."""
    Minv = np.linalg.inv(M)
    total = 0.0
    for stage in stages:
        plastic = G @ stage.lam
        release = G @ (e * stage.lam)
        total += 0.5 * (release @ Minv @ release - plastic @ Minv @ plastic)
    return total


def test_a_point_in_a_narrow_wedge_with_one_elastic_wall_gains_energy_and_says_so():
    """Two walls whose normals meet at 143°; ε = (1, 0); the point heads into the corner.

    By hand: v⁻ = (−1, −2), g1 = (1, 0), g2 = (−0.8, 0.6); the plastic phase
    stops the point (w = 0, λ = (11/3, 10/3)), the release gives (11/3, 0):
    T = 121/18 = 6.72 J after the first stage against T⁻ = 2.5 J.
    """
    M = np.eye(2)
    G = np.array([[1.0, -0.8], [0.0, 0.6]])
    v = np.array([-1.0, -2.0])
    e = np.array([1.0, 0.0])
    r = resolve_impact(M, G, v, e, "poisson")
    np.testing.assert_allclose(r.stages[0].lam, [11 / 3, 10 / 3], rtol=1e-12)
    np.testing.assert_allclose(r.v_plus, [11 / 3, 0.0], atol=1e-12)
    assert abs(r.energy_change - (121 / 18 - 2.5)) < 1e-12
    assert r.gains_energy
    staged = resolve_impact(M, G, v, e, "staged")
    assert staged.admissible
    assert abs(staged.energy_change - _carnot_change(M, G, staged.stages, e)) < 1e-12
    assert staged.gains_energy == (staged.energy_change > ENERGY_GAIN_TOLERANCE * 2.5)
    # one ε for both walls: paper 000 (35), never a gain, never flagged
    for law in ("staged", "poisson", "newton", "sequential"):
        for one in (0.0, 0.5, 1.0):
            r = resolve_impact(M, G, v, one, law)
            assert not r.gains_energy and r.energy_change <= 1e-12


@st.composite
def frictionless(draw, per_contact: bool):
    N = draw(st.integers(1, 5))
    n = draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    A = rng.normal(size=(N, N))
    M = A @ A.T + N * np.eye(N)
    G = rng.normal(size=(N, n))
    v = rng.normal(size=N) * 10.0 ** draw(st.floats(-2, 2))
    e = rng.uniform(0.0, 1.0, n) if per_contact else draw(st.floats(0.0, 1.0))
    return M, G, v, e


@settings(max_examples=150, deadline=None)
@given(problem=frictionless(per_contact=False), law=st.sampled_from(["staged", "poisson"]))
def test_one_restitution_never_gains_energy_paper_000_35(problem, law):
    M, G, v, e = problem
    if np.linalg.matrix_rank(G) < G.shape[1] and law == "staged":
        return  # Theorem 2 of paper 000 assumes rank G = n
    r = resolve_impact(M, G, v, e, law)
    kinetic = 0.5 * v @ M @ v
    assert r.energy_change <= 1e-10 * kinetic
    assert not r.gains_energy


@settings(max_examples=200, deadline=None)
@given(problem=frictionless(per_contact=True), law=st.sampled_from(["staged", "poisson"]))
def test_per_contact_restitution_gains_are_the_release_terms_and_are_flagged(problem, law):
    M, G, v, e = problem
    if np.linalg.matrix_rank(G) < G.shape[1]:
        return  # dependent constraints: the impulse split is not the stages' own
    r = resolve_impact(M, G, v, e, law)
    kinetic = 0.5 * v @ M @ v
    # the energy change is paper 000's per-stage Carnot sum with E = diag(e)
    carnot = _carnot_change(M, G, r.stages, e)
    assert abs(r.energy_change - carnot) <= 1e-9 * kinetic
    # flagged exactly when it gains beyond round-off
    assert r.gains_energy == (r.energy_change > ENERGY_GAIN_TOLERANCE * kinetic)
