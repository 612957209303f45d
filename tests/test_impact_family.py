"""The family of energy-conserving admissible impacts (paper 000 §4, example 4, eqs. 40–42)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.errors import SolverError
from solver.impact import resolve_impact
from solver.impact_family import admissible_family, example_4

# paper 000, example 4: three equal balls, the first at speed 1, G as printed
G4 = np.array([[-1.0, 0.0], [1.0, -1.0], [0.0, 1.0]])
V4 = np.array([1.0, 0.0, 0.0])


def test_example_4_parameters_solve_the_papers_relations_41():
    # paper 000 (42): μ₁ = 1/(1 − s), μ₂ = t/(1 − s) with t = (1 + √(1 − 4s))/2 the root of
    # t² − t + s = 0 in [1/2, 1 + s], for 0 ≤ s ≤ 1/4
    s = np.linspace(0.0, 0.25, 51)
    mu1, mu2 = 1 / (1 - s), (1 + np.sqrt(1 - 4 * s)) / 2 / (1 - s)
    assert np.all(mu1 >= 0) and np.all(mu2 >= 0)
    assert np.all(-1 + 2 * mu1 - mu2 >= -1e-15)
    assert np.all(-mu1 + 2 * mu2 >= -1e-15)
    assert np.allclose(-mu1 + mu1**2 - mu1 * mu2 + mu2**2, 0.0, atol=1e-15)
    t = mu2 * (1 - s)
    assert np.allclose(t * t - t + s, 0.0, atol=1e-15)
    # the same members in the paper's parameter z = μ₁ ∈ [1, 4/3]
    impulse, v_plus = example_4(mu1)
    assert np.allclose(impulse[:, 1], mu2, atol=1e-15)
    assert np.allclose(v_plus, V4 + impulse @ G4.T, atol=1e-15)


def test_example_4_ends_are_the_sequential_and_the_staged_answers():
    impulse, v_plus = example_4([1.0, 4.0 / 3.0])
    assert np.allclose(v_plus[0], [0, 0, 1], atol=1e-15)
    assert np.allclose(impulse[0], [1, 1], atol=1e-15)
    assert np.allclose(v_plus[1], [-1 / 3, 2 / 3, 2 / 3], atol=1e-15)
    # the paper prints λ = [4/3, 1/3]; its own formula ½(z + √(4z − 3z²)) at z = 4/3 gives 2/3
    assert np.allclose(impulse[1], [4 / 3, 2 / 3], atol=1e-15)


def test_sampled_family_of_example_4_is_the_papers_closed_form():
    family = admissible_family(np.eye(3), G4, V4)
    assert len(family) > 50
    z = family.impulse[:, 0]
    assert z.min() == pytest.approx(1.0, abs=1e-12)
    assert z.max() == pytest.approx(4.0 / 3.0, abs=1e-12)
    impulse, v_plus = example_4(np.clip(z, 1.0, 4.0 / 3.0))
    assert np.allclose(family.impulse, impulse, atol=1e-9)
    assert np.allclose(family.v_plus, v_plus, atol=1e-9)


@pytest.mark.parametrize("law", ["staged", "sequential"])
def test_staged_and_sequential_answers_are_members(law):
    family = admissible_family(np.eye(3), G4, V4)
    answer = resolve_impact(np.eye(3), G4, V4, 1.0, law=law)
    distance = np.min(np.linalg.norm(family.v_plus - answer.v_plus, axis=1))
    assert distance < 1e-12


@settings(max_examples=60, deadline=None)
@given(
    masses=st.lists(st.floats(0.2, 5.0), min_size=3, max_size=3),
    speeds=st.lists(st.floats(-2.0, 2.0), min_size=3, max_size=3),
    eta=st.sampled_from([1.0, 0.5, 0.0]),
)
def test_every_member_keeps_momentum_energy_share_and_admissibility(masses, speeds, eta):
    M = np.diag(masses)
    v = np.array(speeds)
    family = admissible_family(M, G4, v, energy_ratio=eta, samples=101)
    T = 0.5 * v @ M @ v
    for lam, v_plus in zip(family.impulse, family.v_plus, strict=True):
        assert np.all(lam >= 0.0)
        assert np.allclose(M @ (v_plus - v), G4 @ lam, atol=1e-12 * (1 + np.abs(lam).max()))
        assert 0.5 * v_plus @ M @ v_plus == pytest.approx(eta * T, abs=1e-12 * (1 + T))
        assert np.all(G4.T @ v_plus >= -1e-9 * (1 + np.abs(v).max()))


def test_one_contact_has_newtons_answer_only():
    family = admissible_family([2.0], [[1.0]], [-3.0], energy_ratio=0.25)
    # e² = η: e = 1/2, Λ = m(1 + e)u = 2 · 1.5 · 3
    assert family.impulse.shape == (1, 1)
    assert family.impulse[0, 0] == pytest.approx(9.0, rel=1e-14)
    assert family.v_plus[0, 0] == pytest.approx(1.5, rel=1e-14)


def test_three_contacts_sample_the_simplex():
    G = np.array([[-1, 0, 0], [1, -1, 0], [0, 1, -1], [0, 0, 1]], dtype=float)
    v = np.array([1.0, 0.0, 0.0, 1.0 / 3.0])  # paper 000 ex. 2/3
    family = admissible_family(np.eye(4), G, v, samples=3600)  # a simplex grid of step 1/60
    staged = resolve_impact(np.eye(4), G, v, 1.0, law="staged")
    assert len(family) > 0
    T = 0.5 * v @ v
    assert np.allclose(0.5 * np.sum(family.v_plus**2, axis=1), T, atol=1e-13)
    assert np.all(family.v_plus @ G >= -1e-12)
    # the staged impulse [4/3, 8/9, 4/9] points along (1/2, 1/3, 1/6), a node of the grid
    assert np.min(np.linalg.norm(family.v_plus - staged.v_plus, axis=1)) < 1e-12


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"energy_ratio": 1.5}, "energy_ratio"),
        ({"samples": 1}, "samples"),
        ({"G": np.ones((2, 2))}, "G"),
    ],
)
def test_bad_input_names_the_field(kwargs, word):
    args = {"M": np.eye(3), "G": G4, "v_minus": V4, **kwargs}
    with pytest.raises(SolverError, match=word):
        admissible_family(**args)


def test_example_4_refuses_z_outside_the_admissible_range():
    with pytest.raises(SolverError, match="z"):
        example_4(1.5)
