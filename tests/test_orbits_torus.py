"""A Neimark–Sacker (torus) bifurcation located on the two-bead impact oscillator.

tests/test_orbits_2dof.py's two beads (force 0.5 sin ωt on a, b hits the stop, e = 0.8):
its one-impact period-1 orbit has two complex pairs of multipliers, and as ω falls
through ≈ 0.911 one pair leaves the unit circle. The test finds that ω itself from the
closed form of tests/test_orbits_2dof.py (the periodicity conditions solved by a root
finder, ``Φ = E(T)·S`` from the matrix exponential and the saltation matrix), by
``brentq`` on ``|μ| − 1`` of the complex pair, and compares it with the program's
``torus`` row.
"""

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from test_orbits_2dof import flow, monodromy, period_one, two_beads

from solver.orbit_branches import follow_branches
from solver.scene import parse_scene, scene_to_dict

PATH = "forces[0].omega"


@pytest.fixture(scope="module")
def branch():
    d = scene_to_dict(two_beads())
    d["forces"][0]["omega"] = 0.93
    (followed,) = follow_branches(parse_scene(d), PATH, 0.93, 0.89, 0.01, 30, transient=150.0)
    assert not followed.failure, followed.failure
    return followed


def complex_pair_modulus(phi):
    mu = np.linalg.eigvals(phi)
    pair = [m for m in mu if m.imag > 1e-6]
    return max(abs(m) for m in pair)


def test_torus_located_against_the_closed_form_crossing(branch):
    marks = [mark for _, _, mark in branch.rows]
    assert marks.count("torus") == 1 and "period_doubling" not in marks and "fold" not in marks
    k = marks.index("torus")
    w_ns, orbit, _ = branch.rows[k]
    # stable before (ω above), unstable after: one complex pair leaves the unit circle
    assert all(o.stable for _, o, _ in branch.rows[:k])
    assert not any(o.stable for _, o, _ in branch.rows[k + 1 :])
    assert all(len(o.impacts) == 1 for _, o, _ in branch.rows)
    mu = orbit.multipliers
    assert abs(mu[0].imag) > 0.5 and mu[1] == pytest.approx(np.conj(mu[0]), abs=1e-12)
    assert abs(abs(mu[0]) - 1.0) < 1e-6 and abs(mu[2]) < 0.6  # the other pair well inside
    # the closed form: the one-impact orbit solved at ω, its complex pair's modulus − 1
    (impact,) = orbit.impacts
    t_star = orbit.t_section + impact.t
    at_impact = flow(0.0, orbit.state - [0.0, 3.0, 0.0, 0.0], t_star, w_ns)
    guess = [t_star, at_impact[0], at_impact[2], float(impact.v_minus[1])]

    def excess(w):
        return complex_pair_modulus(monodromy(w, period_one(w, guess))) - 1.0

    lo, hi = w_ns - 1e-5, w_ns + 1e-5
    assert excess(lo) > 0.0 > excess(hi)
    w_root = brentq(excess, lo, hi, xtol=1e-14, rtol=1e-15)
    assert abs(w_root - w_ns) < 1e-8
    # the crossing's angle: the pair crosses at e^{±iθ}, θ away from 0 and π (no strong
    # resonance), as the row's multipliers say
    closed = np.linalg.eigvals(monodromy(w_root, period_one(w_root, guess)))
    top = closed[np.argmax(np.abs(closed))]
    assert abs(abs(top) - 1.0) < 1e-12
    assert abs(np.angle(top)) == pytest.approx(abs(np.angle(mu[0])), abs=1e-6)
    assert 0.2 < abs(np.angle(mu[0])) < math.pi - 0.2
