"""A disk wedged between two features: statically indeterminate contact forces.

A disk at rest against two straight features has three equations of
equilibrium (two forces, one moment) for four unknowns when both contacts
stick (two normal forces, two friction forces): the forces form a one-
parameter family, and any member in the friction cones holds it. The
stepper's fixed-mode forces take an admissible member
(:func:`solver.contact.solve_with_modes`); a member with a negative λ was
read as a lift-off that the contact problem at the event undid at once, and
the instant repeated until the run failed.

Every expected force here is worked out by hand from the geometry: the
moment about the centre makes the two friction forces equal and opposite,
and the two force equations then give both normal forces for a given
friction force ``f``.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from solver.contact import SLIP_SPEED_TOL, solve_with_modes
from solver.event_handling import CREEP_SPEED_TOL, creeping_modes
from solver.event_tolerances import PENETRATION_TOL
from solver.simulation import make_stepper
from tests.scene_data import G_ACC, gravity_scene
from tests.test_settle_routes import ball_scene

R = 0.1
"""Radius (m) of the 1 kg balls here."""
W = G_ACC
"""Weight (N) of a 1 kg ball."""


def run(scene):
    """Every frame of the run; it must finish."""
    stepper = make_stepper(scene)
    frames = []
    while stepper.status == "running":
        frames += stepper.step().frames
    assert stepper.status == "finished", stepper.message
    return frames


def contact_force(c) -> np.ndarray:
    """The force (N) of a contact state on the body: ``λ n`` plus friction ``−μλτ t``."""
    n = np.array(c.normal)
    t = np.array([n[1], -n[0]])  # the tangent t = (n_y, -n_x)
    return c.lam * n - c.friction * c.lam * c.tau * t


def friction_force(c) -> float:
    """The friction force (N) of a contact state along its tangent."""
    return -c.friction * c.lam * c.tau


def feature_gap(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Distance (m) from the centre ``c`` to the segment ``[a, b]``, less the radius."""
    ab = b - a
    s = min(1.0, max(0.0, float(np.dot(c - a, ab) / np.dot(ab, ab))))
    return float(np.hypot(*(c - a - s * ab))) - R


def normal_forces_for(n1, n2, f) -> tuple[float, float]:
    """``(λ₁, λ₂)`` holding the weight with friction ``f`` at contact 1 and ``−f`` at 2.

    ``λ₁ n₁ + f t₁ + λ₂ n₂ − f t₂ = (0, W)`` solved by Cramer's rule.
    """
    t1, t2 = np.array([n1[1], -n1[0]]), np.array([n2[1], -n2[0]])
    rhs = np.array([0.0, W]) - f * (t1 - t2)
    det = n1[0] * n2[1] - n1[1] * n2[0]
    return (
        (rhs[0] * n2[1] - rhs[1] * n2[0]) / det,
        (n1[0] * rhs[1] - n1[1] * rhs[0]) / det,
    )


def admissible_frictions(n1, n2, mu) -> tuple[float, float]:
    """The interval of ``f`` whose forces are admissible: λ ≥ 0 and ``|f| ≤ μλ`` at both.

    Each ``λ_i(f) = a_i + b_i f`` is affine; each condition ``c + d f ≥ 0`` bounds ``f``.
    """
    a1, a2 = normal_forces_for(n1, n2, 0.0)
    l1, l2 = normal_forces_for(n1, n2, 1.0)
    lo, hi = -math.inf, math.inf
    for a, b in ((a1, l1 - a1), (a2, l2 - a2)):
        for c, d in ((a, b), (mu * a, mu * b - 1.0), (mu * a, mu * b + 1.0)):
            if d > 0.0:
                lo = max(lo, -c / d)
            elif d < 0.0:
                hi = min(hi, -c / d)
            else:
                assert c >= 0.0
    return lo, hi


def test_the_wedged_ball_comes_to_rest_in_the_rough_corner():
    """10° slope, vertical wall, μ = 0.8, e = 0.5: at rest in the corner, the forces balanced.

    With ``f`` the ground's friction (up the slope) and ``−f`` the wall's
    (the moment), the force equations give ``λ_ground = W/cos α − f k``
    and ``λ_wall = W tan α − f k``, ``k = (1 + sin α)/cos α``. The wall's
    cone ``|f| ≤ μ λ_wall`` is the binding one (``λ_ground > λ_wall``), so
    with ``μk < 1`` the admissible wall forces are
    ``W tan α/(1 + μk) ≤ λ_wall ≤ W tan α/(1 − μk)``; every one is
    positive: without the wall the ball would roll down.
    """
    alpha, mu = math.radians(10.0), 0.8
    frames = run(ball_scene(1.0, 0.5, 10.0, mu, 2.0, 0.01, corner=True))
    energies = np.array([f.energy.total for f in frames])
    assert np.all(np.diff(energies) <= 1e-12 * (1.0 + np.abs(energies[:-1])))
    for f in frames:
        for c in f.contacts:
            assert c.lam >= 0.0 and abs(c.tau) <= 1.0
    last = frames[-1]
    assert last.t == 2.0 and np.abs(last.v).max() < 1e-9
    forces = {c.other: c for c in last.contacts}
    assert set(forces) == {"ground", "wall"} and {c.mode for c in forces.values()} == {"stick"}
    total = sum(contact_force(c) for c in forces.values())
    assert total == pytest.approx([0.0, W], abs=1e-9)  # holds the weight -m g
    f_ground, f_wall = friction_force(forces["ground"]), friction_force(forces["wall"])
    assert f_ground + f_wall == pytest.approx(0.0, abs=1e-9)  # no moment about the centre
    k = (1.0 + math.sin(alpha)) / math.cos(alpha)
    assert mu * k < 1.0
    low, high = W * math.tan(alpha) / (1.0 + mu * k), W * math.tan(alpha) / (1.0 - mu * k)
    assert low - 1e-9 <= forces["wall"].lam <= high + 1e-9
    assert forces["wall"].lam == pytest.approx(W * math.tan(alpha) - f_ground * k, abs=1e-9)
    assert forces["ground"].lam == pytest.approx(W / math.cos(alpha) - f_ground * k, abs=1e-9)
    # in the corner: a radius from the slope's line and from the wall
    dx, dy = math.cos(alpha), math.sin(alpha)
    x, y = last.q[:2]
    assert x - (-dx) == pytest.approx(R, abs=1e-9)
    assert -dy * x + dx * y == pytest.approx(R, abs=1e-9)


def ball_at(centre):
    """A 1 kg wheel of radius ``R`` at rest with its centre at ``centre`` (m)."""
    return {
        "id": "ball",
        "type": "wheel",
        "mass": 1.0,
        "inertia": 0.5 * R * R,
        "radius": R,
        "position": centre.tolist(),
    }


def v_groove(left_deg, right_deg, mu, t_end=0.5):
    """A ball at rest touching both walls of a V, the walls ``left_deg`` and ``right_deg``
    above the horizontal; the ball's centre a radius from both lines."""
    a1, a2 = math.radians(left_deg), math.radians(right_deg)
    n1 = np.array([math.sin(a1), math.cos(a1)])
    n2 = np.array([-math.sin(a2), math.cos(a2)])
    centre = np.linalg.solve(np.array([n1, n2]), [R, R])
    boundaries = [
        {"id": "left", "type": "segment", "a": [-math.cos(a1), math.sin(a1)], "b": [0.0, 0.0]},
        {"id": "right", "type": "segment", "a": [0.0, 0.0], "b": [math.cos(a2), math.sin(a2)]},
    ]
    ball = ball_at(centre)
    scene = gravity_scene(
        [ball], boundaries, restitution=0.0, friction=mu, t_end=t_end, dt_out=t_end / 2
    )
    return scene, n1, n2


@given(st.floats(5.0, 80.0), st.floats(5.0, 80.0))
@settings(max_examples=30, deadline=None)
def test_a_frictionless_v_groove_holds_the_ball_with_lamis_forces(left, right):
    """Determinate: ``λ₁ = W sin θ₂/sin(θ₁ + θ₂)``, ``λ₂ = W sin θ₁/sin(θ₁ + θ₂)``."""
    scene, _, _ = v_groove(left, right, 0.0)
    frames = run(scene)
    a1, a2 = math.radians(left), math.radians(right)
    for f in frames:
        forces = {c.other: c.lam for c in f.contacts}
        assert forces["left"] == pytest.approx(W * math.sin(a2) / math.sin(a1 + a2), rel=1e-9)
        assert forces["right"] == pytest.approx(W * math.sin(a1) / math.sin(a1 + a2), rel=1e-9)
        assert np.abs(f.v).max() < 1e-9


@given(st.floats(5.0, 80.0), st.floats(5.0, 80.0), st.floats(0.01, 1.5))
@settings(max_examples=30, deadline=None)
def test_a_rough_v_groove_holds_the_ball_with_admissible_forces(left, right, mu):
    """Indeterminate: the frictions ``f`` and ``−f`` (no moment), both normal forces those
    that balance the weight with ``f``, and ``f`` in the interval where λ ≥ 0 and
    ``|f| ≤ μλ`` at both walls (which holds ``f = 0``, Lami's forces)."""
    scene, n1, n2 = v_groove(left, right, mu)
    low, high = admissible_frictions(n1, n2, mu)
    assert low <= 0.0 <= high
    for f in run(scene):
        forces = {c.other: c for c in f.contacts}
        f1, f2 = friction_force(forces["left"]), friction_force(forces["right"])
        assert f1 + f2 == pytest.approx(0.0, abs=1e-9)
        l1, l2 = normal_forces_for(n1, n2, f1)
        assert forces["left"].lam == pytest.approx(l1, abs=1e-9)
        assert forces["right"].lam == pytest.approx(l2, abs=1e-9)
        assert low - 1e-9 <= f1 <= high + 1e-9
        assert np.abs(f.v).max() < 1e-9


def sticking_corner(alpha_deg, mu, lift):
    """The two contacts of a ball in the corner of a slope ``alpha_deg`` and a vertical wall
    (``G``, ``H`` rows on ``(x, y, φ)``), and gravity plus an upward pull ``lift`` (N)."""
    a = math.radians(alpha_deg)
    ground = SimpleNamespace(
        G=np.array([-math.sin(a), math.cos(a), 0.0]),
        H=np.array([math.cos(a), math.sin(a), R]),
        gamma_n=0.0, gamma_t=0.0, friction=mu, u_t=0.0, body="ball", other="ground",
    )  # fmt: skip
    wall = SimpleNamespace(
        G=np.array([1.0, 0.0, 0.0]),
        H=np.array([0.0, -1.0, R]),
        gamma_n=0.0, gamma_t=0.0, friction=mu, u_t=0.0, body="ball", other="wall",
    )  # fmt: skip
    M_inv = np.array([1.0, 1.0, 1.0 / (0.5 * R * R)])
    return [ground, wall], M_inv, np.array([0.0, lift - W, 0.0])


@given(st.floats(2.0, 40.0), st.one_of(st.just(0.0), st.floats(1e-3, 2.0)))
@settings(max_examples=200)
def test_fixed_mode_forces_of_a_wedged_ball_are_admissible(alpha, mu):
    """Both contacts sticking: no motion, and the forces balance the weight inside both cones
    (for any slope and μ: ``f = 0`` with ``λ_wall = W tan α`` always is one)."""
    contacts, M_inv, f = sticking_corner(alpha, mu, 0.0)
    forces = solve_with_modes(contacts, ["stick", "stick"], M_inv, f)
    assert np.abs(forces.qdd).max() < 1e-12
    lam, beta = forces.lam, forces.friction_force
    tol = 1e-9 * (1.0 + lam.max())
    assert np.all(lam >= -tol) and np.all(np.abs(beta) <= mu * lam + mu * tol)
    if mu > 0.0:  # the wall's force in its admissible range, by hand (test above)
        a = math.radians(alpha)
        k = (1.0 + math.sin(a)) / math.cos(a)
        assert lam[1] >= W * math.tan(a) / (1.0 + mu * k) - 1e-9
        if mu * k < 1.0:
            assert lam[1] <= W * math.tan(a) / (1.0 - mu * k) + 1e-9


def test_fixed_mode_forces_that_cannot_hold_show_a_negative_margin():
    """Pulled up by twice its weight the wedged ball has no admissible forces (every member
    pulls on a contact): the least margin returned is negative — the phase's event."""
    contacts, M_inv, f = sticking_corner(10.0, 0.8, 2.0 * W)
    forces = solve_with_modes(contacts, ["stick", "stick"], M_inv, f)
    margins = np.concatenate([forces.lam, 0.8 * forces.lam - np.abs(forces.friction_force)])
    assert margins.min() < -1e-3


def corner_scene(slope_deg, wedge_deg, mu, e, along, lift):
    """A ball ``along`` (m) up a slope of ``slope_deg`` from its lower end, ``lift`` (m)
    above it, at rest; a wall ``wedge_deg`` from the slope stands on that end."""
    a, b = math.radians(slope_deg), math.radians(slope_deg + wedge_deg)
    n = np.array([-math.sin(a), math.cos(a)])
    centre = along * np.array([math.cos(a), math.sin(a)]) + (R + lift) * n
    up_slope, up_wall = (
        2.0 * np.array([math.cos(a), math.sin(a)]),
        2.0 * np.array([math.cos(b), math.sin(b)]),
    )
    boundaries = [
        {"id": "ground", "type": "segment", "a": [0.0, 0.0], "b": up_slope.tolist()},
        {"id": "wall", "type": "segment", "a": up_wall.tolist(), "b": [0.0, 0.0]},
    ]
    ball = ball_at(centre)
    scene = gravity_scene([ball], boundaries, restitution=e, friction=mu, t_end=3.0, dt_out=0.5)
    return scene, [(np.zeros(2), up_slope), (up_wall, np.zeros(2))]


@given(
    st.floats(2.0, 30.0),
    st.floats(60.0, 120.0),
    st.one_of(st.just(0.0), st.floats(0.0, 1.2)),
    st.floats(0.0, 0.5),
    st.floats(0.2, 1.0),
    st.floats(0.0, 0.3),
)
@settings(max_examples=40, deadline=None)
def test_a_ball_dropped_into_a_corner_comes_to_rest_wedged(slope, wedge, mu, e, along, lift):
    """Any slope, wall and friction, jamming ones too (``μ ≥ tan(wedge/2)``): the run
    finishes, the energy never grows, nothing goes through a feature, every λ ≥ 0, and
    by 4 s the ball rests on both with forces that hold its weight, no moment."""
    a, b = math.radians(slope), math.radians(slope + wedge)
    start = along * np.array([math.cos(a), math.sin(a)]) + (R + lift) * np.array(
        [-math.sin(a), math.cos(a)]
    )
    assume(feature_gap(start, 2.0 * np.array([math.cos(b), math.sin(b)]), np.zeros(2)) > 0.01)
    scene, segments = corner_scene(slope, wedge, mu, e, along, lift)
    frames = run(
        scene.model_copy(update={"solver": scene.solver.model_copy(update={"t_end": 4.0})})
    )
    energies = np.array([f.energy.total for f in frames])
    assert np.all(np.diff(energies) <= 1e-12 * (1.0 + np.abs(energies[:-1])))
    for f in frames:
        for a, b in segments:
            assert feature_gap(f.q[:2], a, b) >= -PENETRATION_TOL
        for c in f.contacts:
            assert c.lam >= 0.0 and abs(c.tau) <= 1.0
    last = frames[-1]
    assert np.abs(last.v).max() < 1e-9
    forces = {c.other: c for c in last.contacts}
    assert set(forces) == {"ground", "wall"}
    assert sum(contact_force(c) for c in forces.values()) == pytest.approx([0.0, W], abs=1e-9)
    assert sum(friction_force(c) for c in forces.values()) == pytest.approx(0.0, abs=1e-9)


def test_a_ball_jammed_in_a_narrow_rough_corner_comes_to_rest():
    """A wedge of 69.6° with μ = 0.735 ≥ tan(34.8°) can jam the ball: its last bounces
    leave slips of 1e-8 to 1e-7 m/s, in whose directions the contact problem has no
    solution (it failed at t = 0.6526 s). Creeping contacts take their friction from
    the cone instead: the ball rests wedged, its weight held, no moment."""
    slope, wedge, mu = 8.03, 69.6, 0.735
    assert mu >= math.tan(math.radians(wedge) / 2.0)
    scene, segments = corner_scene(slope, wedge, mu, 0.0395, 0.325, 0.154)
    frames = run(scene)
    energies = np.array([f.energy.total for f in frames])
    assert np.all(np.diff(energies) <= 1e-12 * (1.0 + np.abs(energies[:-1])))
    for f in frames:
        for a, b in segments:
            assert feature_gap(f.q[:2], a, b) >= -PENETRATION_TOL
    last = frames[-1]
    assert last.t == 3.0 and np.abs(last.v).max() < 1e-9
    forces = {c.other: c for c in last.contacts}
    assert set(forces) == {"ground", "wall"} and {c.mode for c in forces.values()} == {"stick"}
    assert sum(contact_force(c) for c in forces.values()) == pytest.approx([0.0, W], abs=1e-9)
    assert sum(friction_force(c) for c in forces.values()) == pytest.approx(0.0, abs=1e-9)


def test_only_creeping_contacts_are_taken_as_at_rest():
    """Slips above ``SLIP_SPEED_TOL`` up to ``CREEP_SPEED_TOL`` with friction and no imposed
    mode are made ``"stick"``; faster, frictionless or imposed ones keep their mode."""
    slow, fast = 0.5 * CREEP_SPEED_TOL, 2.0 * CREEP_SPEED_TOL
    contacts = [
        SimpleNamespace(u_t=slow, friction=0.5),
        SimpleNamespace(u_t=-slow, friction=0.5),
        SimpleNamespace(u_t=fast, friction=0.5),
        SimpleNamespace(u_t=slow, friction=0.0),
        SimpleNamespace(u_t=slow, friction=0.5),
        SimpleNamespace(u_t=0.5 * SLIP_SPEED_TOL, friction=0.5),
    ]
    modes = [None, None, None, None, "slip+", None]
    assert creeping_modes(contacts, modes) == ["stick", "stick", None, None, "slip+", None]
    assert creeping_modes(contacts, None) == ["stick", "stick", None, None, "stick", None]
    assert creeping_modes(contacts[2:4], None) is None


@pytest.mark.parametrize(
    "corner",
    [
        # the wall's gap was found closed by 4.7e-7 m at t = 1.3873 s, without an event: the
        # bounces on the ground summed to their accumulation point took the wall's closing
        # time as never (zeno_series._closing_time: inf for a_n >= 0, however fast the
        # ball approached the wall)
        (23.3, 62.1, 0.431, 0.899, 0.315, 0.0733),
        # the staged law's friction LCP failed at t = 1.1420 s: Lemke's working-precision
        # check on an impact at speeds of 1e-12 m/s (solved again scaled up, impact.py)
        (29.6929, 103.748, 0.55989, 0.78280, 0.20502, 0.05999),
    ],
)
def test_a_bouncy_ball_dropped_into_a_rough_corner_finishes(corner):
    """Once strict expected failures (issue 24): bouncy rough corners, e near 0.8–0.9.

    The run finishes, the energy never grows, nothing goes through a feature
    and the ball comes to rest on both faces holding its weight.
    """
    scene, segments = corner_scene(*corner)
    frames = run(
        scene.model_copy(update={"solver": scene.solver.model_copy(update={"t_end": 4.0})})
    )
    _settled_in_the_corner(frames, segments)


def _settled_in_the_corner(frames, segments, at_rest: bool = True) -> None:
    """The run's invariants; with ``at_rest``, the ball resting in the corner at the end."""
    energies = np.array([f.energy.total for f in frames])
    assert np.all(np.diff(energies) <= 1e-12 * (1.0 + np.abs(energies[:-1])))
    for f in frames:
        for a, b in segments:
            assert feature_gap(f.q[:2], a, b) >= -PENETRATION_TOL
        for c in f.contacts:
            assert c.lam >= 0.0 and abs(c.tau) <= 1.0
    if not at_rest:
        return
    last = frames[-1]
    assert np.abs(last.v).max() < 1e-9
    forces = {c.other: c for c in last.contacts}
    assert set(forces) <= {"ground", "wall"} and forces
    assert sum(contact_force(c) for c in forces.values()) == pytest.approx([0.0, W], abs=1e-9)


@given(
    st.floats(2.0, 30.0),
    st.floats(60.0, 120.0),
    st.floats(0.0, 1.0),
    st.floats(0.5, 0.95),
    st.floats(0.2, 1.0),
    st.floats(0.0, 0.3),
)
@settings(max_examples=15, deadline=None)
def test_a_bouncy_ball_dropped_into_any_rough_corner_finishes(slope, wedge, mu, e, along, lift):
    """Issue 24's property: any corner, μ in [0, 1], e up to 0.95, any drop height: the run
    finishes (no missed closing, no failing friction LCP), the energy never grows, nothing
    goes through a face (a ball on a shallow frictionless slope may still slide at 4 s)."""
    a, b = math.radians(slope), math.radians(slope + wedge)
    start = along * np.array([math.cos(a), math.sin(a)]) + (R + lift) * np.array(
        [-math.sin(a), math.cos(a)]
    )
    assume(feature_gap(start, 2.0 * np.array([math.cos(b), math.sin(b)]), np.zeros(2)) > 0.01)
    scene, segments = corner_scene(slope, wedge, mu, e, along, lift)
    frames = run(
        scene.model_copy(update={"solver": scene.solver.model_copy(update={"t_end": 4.0})})
    )
    _settled_in_the_corner(frames, segments, at_rest=False)
