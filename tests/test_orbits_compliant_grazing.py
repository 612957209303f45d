"""The compliant branch's grazing: where the touch speed vanishes, against the closed form.

The bead of tests/test_orbits_compliant.py (m = 1, k₀ = 1, c₀ = 0.1, force sin ωt, its
centre touching the stop (k = 400, c = 2) at x_s = 0.2). Its one-touch orbit exists
below the grazing ω_g, where the free forced motion's amplitude
``F / √((k₀ − mω²)² + (c₀ω)²)`` reaches x_s: there the touch speed tends to 0 (like
√(ω_g − ω)), and past it only the free motion is left.
"""

import itertools
import math

import numpy as np
import pytest
import scipy.linalg
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_orbits_compliant import C0, K0, XS, F, M, compliant_oscillator

from solver.compliant_events import CompliantEvents
from solver.orbit_branches import follow_branches
from solver.orbits import run_map
from solver.scene_paths import with_values

PATH = "forces[0].omega"


def grazing_omega():
    """ω above resonance where F / √((k₀ − mω²)² + (c₀ω)²) = x_s: a quadratic in ω²."""
    a, b, c = M**2, C0**2 - 2 * K0 * M, K0**2 - (F / XS) ** 2
    return math.sqrt((-b + math.sqrt(b * b - 4 * a * c)) / (2 * a))


def free_motion(w):
    """(a, b) of the free forced motion x = a sin ωt + b cos ωt."""
    d = K0 - M * w * w
    den = d * d + (C0 * w) ** 2
    return F * d / den, -F * C0 * w / den


def free_crest_overlap(z, w):
    """max over one period of x(t) − x_s for the free flow from z at t = 0 (expm, sampled)."""
    G = np.zeros((4, 4))
    G[0, 1] = 1.0
    G[1] = [-K0 / M, -C0 / M, F / M, 0.0]
    G[2, 3], G[3, 2] = w, -w
    step = scipy.linalg.expm(G * (2 * math.pi / w) / 20000)
    y, best = np.array([z[0], z[1], 0.0, 1.0]), -math.inf
    for _ in range(20000):
        y = step @ y
        best = max(best, y[0])
    return best - XS


def test_a_shallow_dip_into_the_stop_is_a_touch():
    """A free flight from this state dips 8.8e-6 m into the stop for ~8 ms; an engine
    sub-point fell inside the dip where the bead already leaves (k δ + c δ̇ < 0): the run
    had no touch (the branch's Newton then jumped between 0 and 2 events)."""
    w, z = 2.4482, np.array([-0.00980513, -0.48909149])
    assert 5e-6 < free_crest_overlap(z, w) < 1e-5
    run = run_map(with_values(compliant_oscillator(), {PATH: w}), z, 2 * math.pi / w)
    assert [i.kind for i in run.impacts] == ["touch", "release"]
    touch = run.impacts[0]
    assert 0.0 < float(touch.v_minus[0]) < 1e-2


def test_branch_ends_at_the_grazing_where_the_touch_speed_vanishes():
    w_g = grazing_omega()
    assert 2.448 < w_g < 2.449
    w0 = 2.445  # the unstable one-touch orbit, started from the free motion there
    a, b = free_motion(w0)
    assert math.hypot(a, b) > XS  # the free motion would overlap the stop
    scene = with_values(compliant_oscillator(), {"bodies[0].x": b, "bodies[0].vx": w0 * a})
    (followed,) = follow_branches(scene, PATH, w0, 2.46, 0.005, 30)
    assert followed.failure == ""
    *rows, (p_g, orbit_g, mark) = followed.rows
    assert mark == "grazing" and "grazing" in followed.note
    assert abs(p_g - w_g) < 1e-8
    speeds = []
    for p, orbit, row_mark in rows:
        assert row_mark == "" and p < w_g
        assert [i.kind for i in orbit.impacts] == ["touch", "release"]
        speeds.append(float(orbit.impacts[0].v_minus[0]))
    assert all(u > v > 0.0 for u, v in itertools.pairwise(speeds))
    assert len(rows) >= 2
    # the grazing orbit is the free motion of amplitude x_s at ω_g, to 1e-6
    a, b = free_motion(w_g)
    assert math.hypot(a, b) == pytest.approx(XS, abs=1e-12)
    assert np.allclose(orbit_g.state, [b, w_g * a], rtol=0, atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(dx=st.floats(-2e-5, 2e-5), dv=st.floats(-2e-5, 2e-5))
def test_a_free_flight_crossing_the_stop_touches_it(dx, dv):
    """Near the grazing: the run from a state has a touch exactly when the free flow from
    it (expm, independent of the engine) crests beyond x_s (margin 1e-7 m either way)."""
    w = 2.4482
    a, b = free_motion(w)
    z = np.array([b + dx, w * a + dv])
    overlap = free_crest_overlap(z, w)
    assume(abs(overlap) > 1e-7)
    run = run_map(with_values(compliant_oscillator(), {PATH: w}), z, 2 * math.pi / w)
    kinds = [i.kind for i in run.impacts]
    assert kinds == (["touch", "release"] if overlap > 0.0 else [])


def test_the_located_grazing_is_robust_to_round_off_of_the_state(monkeypatch):
    """Every map's start state off by ±1e-15 (relative; a test-only hook on the branch's map):
    the located grazing stays within 1e-8 of ω_g and of the unperturbed one (measured: the
    three within 1e-12 of each other, 4.5e-10 from ω_g). A guard, not a regression test: the
    code before passed it too; see docs/ORBITS.md for the 1.1e-5 shift once seen, which
    came from the engine's event search, not from the state's round-off."""
    from solver.orbit_continuation import Branch

    w0 = 2.445
    a, b = free_motion(w0)
    scene = with_values(compliant_oscillator(), {"bodies[0].x": b, "bodies[0].vx": w0 * a})
    evaluate = Branch.evaluate
    located = []
    for eps in (0.0, 1e-15, -1e-15):

        def perturbed(self, z, p, eps=eps):
            return evaluate(self, z * (1.0 + eps * np.array([1.0, -0.7])), p)

        monkeypatch.setattr(Branch, "evaluate", perturbed)
        (followed,) = follow_branches(scene, PATH, w0, 2.46, 0.005, 30)
        assert followed.failure == "" and followed.rows[-1][2] == "grazing"
        located.append(followed.rows[-1][0])
    w_g = grazing_omega()
    assert all(abs(p - w_g) < 1e-8 for p in located)
    assert max(located) - min(located) < 1e-8


@pytest.mark.parametrize("scale", [5e-16, -5e-16])
def test_a_release_read_off_by_round_off_does_not_press_on(monkeypatch, scale):
    """The event search reads the state scaled by 1 + ``scale``, as a search that reads the
    motion another (equally exact) way would: at the release the force is then +1e-17 N in
    the state the next phase starts from. The pair used to be engaged again there by the
    sign of that force, and an engaged pair whose force starts at 0 never crosses 0: it
    pulled the bead into the stop (it ended the period at x = 0.2008, inside it, instead of
    back at the section). The event now decides the pair's side."""
    w = 2.445
    z = np.array([-0.01097823, -0.49075743])  # near the one-touch orbit at 2.445
    span = 2 * math.pi / w
    scene = with_values(compliant_oscillator(), {PATH: w})
    exact = run_map(scene, z, span)
    assert [i.kind for i in exact.impacts] == ["touch", "release"]
    values = CompliantEvents._values

    def scaled(self, t, y):
        y = y.copy()
        y[: 2 * self.N] *= 1.0 + scale
        return values(self, t, y)

    monkeypatch.setattr(CompliantEvents, "_values", scaled)
    run = run_map(scene, z, span)
    assert [i.kind for i in run.impacts] == ["touch", "release"]
    for a, b in zip(run.impacts, exact.impacts, strict=True):
        assert abs(a.t - b.t) < 1e-12
    np.testing.assert_allclose(run.z_end, exact.z_end, rtol=0, atol=1e-9)
    # after the release the bead flies free: the forced linear flow's exponential, in the test
    release = exact.impacts[1]
    t_r, x_r, v_r = release.t, float(release.q[0]), float(release.v_plus[0])
    G = np.zeros((4, 4))
    G[0, 1] = 1.0
    G[1] = [-K0 / M, -C0 / M, F / M, 0.0]
    G[2, 3], G[3, 2] = w, -w
    y0 = np.array([x_r, v_r, math.sin(w * t_r), math.cos(w * t_r)])
    free = scipy.linalg.expm(G * (span - t_r)) @ y0
    np.testing.assert_allclose(run.z_end, free[:2], rtol=0, atol=1e-9)
