"""Instants that repeated until the 200-events guard (issue 8, drawn-geometry property tests).

Two mechanisms, both found by ``tests/test_drawn_geometry.py`` in its CI
profile (9 of 2000 examples ended with "200 events in a row without time
advancing"):

* **A contact that presses from λ = 0.** Two touching beads pushed together
  by a force ``A sin ωt`` that starts at zero: at ``t = 0`` the contact LCP
  gives λ = 0 and a normal acceleration 0, so the contact was left out; its
  gap then closed at once, at the same instant, over and over. The next
  order decides (λ grows like ``sin ωt``); the contact now enters the active
  set. Checked against the closed form of the pair moving as one body up
  to the lift-off at ``t = π/ω`` and of the two flights after it.
* **A rounding-level gap after a bounce.** A wheel bouncing down the inside
  of a bowl's arc leaves each impact with a gap of a few 1e-17 m and a
  small separating speed; a root search started on that gap found a
  rounding-level "root" at the start and closed the contact again at the
  same instant. A gap within ``GAP_TOL`` at the start of a search is now
  treated as closed: it closes again only after the gap has opened and
  come back. Every bounce is checked against the root of the gap to the
  arc along the free parabola from the previous bounce, computed here.
* **A hair inside, separating.** (Exploratory profile.) A wheel rocking
  back off a step's edge meets the floor while it still touches the edge;
  the edge contact is left 8.5e-12 m inside and separating. The gap to a
  corner met by an unaccelerated disk is a quadratic in time, and its
  closing was taken at ``τ = 0`` (the decreasing root lies before the
  start). Checked against rolling at constant speed after the impact.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import brentq

from solver.simulation import simulate
from tests.gap_arrays import first_closing
from tests.scene_data import G_ACC, gravity_scene

TIME_TOL = 1e-9
"""Agreement (s) of event times with the closed forms."""
POSITION_TOL = 1e-9
"""Agreement (m) of positions with the closed forms."""


def scene(bodies, boundaries, forces=(), restitution=0.5, friction=0.0, t_end=1.0, springs=()):
    return gravity_scene(bodies, boundaries, springs, forces, restitution, friction, t_end)


# ------------------------------------------------------------------ beads pushed from λ = 0

M0, M1 = 2.0, 0.75
"""Bead masses (kg): the force acts on b0, which pushes b1."""
AMPLITUDE, OMEGA = 1.0, 10.0
"""The force ``AMPLITUDE sin(OMEGA t)`` on b0 (N, rad/s), towards b1."""


def beads_pushed(phase: float):
    bodies = [
        {"id": "b0", "type": "bead", "rail_y": 0.0, "mass": M0, "radius": 0.05, "x": 0.0},
        {"id": "b1", "type": "bead", "rail_y": 0.0, "mass": M1, "radius": 0.05, "x": 0.1},
    ]
    stops = [
        {"id": "left", "type": "segment", "a": [-1.0, -0.2], "b": [-1.0, 0.2]},
        {"id": "right", "type": "segment", "a": [1.0, -0.2], "b": [1.0, 0.2]},
    ]
    force = {
        "body": "b0",
        "type": "harmonic",
        "amplitude": [AMPLITUDE, 0.0],
        "omega": OMEGA,
        "phase": phase,
    }
    return scene(bodies, stops, [force])


def pushed_positions(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Closed form: together until ``t₁ = π/ω`` (λ = m₁/M · A sin ωt ≥ 0), then apart.

    Together, ``x = A/(M ω²)(ωt − sin ωt)`` with ``M = m₀ + m₁``; at ``t₁``
    both move at ``V = 2A/(M ω)``. After it b1 coasts at ``V`` and b0's
    speed ``V − A/(m₀ω)(1 + cos ωt)`` never exceeds ``V``: they never meet.
    """
    M = M0 + M1
    t1 = math.pi / OMEGA
    V = 2.0 * AMPLITUDE / (M * OMEGA)
    together = AMPLITUDE / (M * OMEGA**2) * (OMEGA * t - np.sin(OMEGA * t))
    x1_at = math.pi * AMPLITUDE / (M * OMEGA**2)
    s = np.maximum(t - t1, 0.0)
    x0_after = (
        x1_at + (V - AMPLITUDE / (M0 * OMEGA)) * s - AMPLITUDE / (M0 * OMEGA**2) * np.sin(OMEGA * t)
    )
    x0 = np.where(t <= t1, together, x0_after)
    x1 = 0.1 + np.where(t <= t1, together, x1_at + V * s)
    return x0, x1


@pytest.mark.parametrize("phase", [0.0, 1e-15])
def test_beads_pushed_by_a_force_rising_from_zero_move_as_one_then_part(phase):
    trajectory = simulate(beads_pushed(phase))
    assert trajectory.status == "finished", trajectory.message
    t = np.array([f.t for f in trajectory.frames])
    q = np.array([f.q for f in trajectory.frames])
    x0, x1 = pushed_positions(t)
    assert np.max(np.abs(q[:, 0] - x0)) <= POSITION_TOL
    assert np.max(np.abs(q[:, 1] - x1)) <= POSITION_TOL
    liftoffs = [e for e in trajectory.events if e.type == "liftoff"]
    assert len(liftoffs) == 1
    assert abs(liftoffs[0].t - math.pi / OMEGA) <= TIME_TOL
    assert not [e for e in trajectory.events if e.type == "impact"]
    pressing = [f for f in trajectory.frames if 0.0 < f.t < math.pi / OMEGA - 1e-6]
    assert pressing and all(len(f.contacts) == 1 for f in pressing)


# ------------------------------------------------------------------ a wheel bouncing in a bowl


def bowl(half: float, radius: float):
    """A floor from −half to half between two quarter arcs tangent to it (the editor's bowl)."""
    return [
        {"id": "floor", "type": "segment", "a": [-half, 0.0], "b": [half, 0.0]},
        {
            "id": "right",
            "type": "arc",
            "center": [half, radius],
            "radius": radius,
            "start_deg": -90.0,
            "end_deg": 0.0,
        },
        {
            "id": "left",
            "type": "arc",
            "center": [-half, radius],
            "radius": radius,
            "start_deg": 180.0,
            "end_deg": 270.0,
        },
    ]


WHEELS_IN_BOWLS = {
    "frictionless": (
        (0.1, 0.6819267036209292),
        {
            "mass": 2.7592616040264177,
            "inertia": 0.0009651348833329112,
            "radius": 0.0963299601999624,
            "position": [-0.5273033627858187, 0.8243452445338257],
            "velocity": [-0.8402820172181946, 0.0963299601999624],
            "angular_velocity": 24.999592011962704,
        },
        0.14731808323632947,
        0.0,
    ),
    "with friction": (
        (0.22341192785642466, 0.6055107756000451),
        {
            "mass": 4.999999999999999,
            "inertia": 0.000542329166180158,
            "radius": 0.04,
            "position": [-0.5768020824333049, 0.4999999999999999],
            "velocity": [-1.1918732421527842, -1.1742871924392528],
            "angular_velocity": 1.2701200884975599,
        },
        0.22341192785642466,
        0.09663260263196574,
    ),
}
"""Examples of the property test's CI profile (bowl half-width and radius, m; wheel; e; μ)."""


def next_closing(c0, v0, centre, big_radius, radius, window):
    """First time (s) the wheel's gap to the inside of the arc closes again, along the parabola.

    ``g(τ) = R − |c(τ) − C| − r`` with ``c(τ) = c₀ + v₀τ − ½ g τ² e_y``: the
    first sign change after the gap has opened, on ``window`` (s), bisected.
    """
    acc = np.array([0.0, -G_ACC])

    def gap(tau):
        c = c0 + v0 * tau + 0.5 * acc * tau * tau
        return big_radius - math.hypot(*(c - centre)) - radius

    taus = np.linspace(0.0, window, 4001)
    g = np.array([gap(tau) for tau in taus])
    opened = np.nonzero(g > 1e-12)[0]
    assert len(opened), "the gap never opens after the bounce"
    below = np.nonzero(g[opened[0] :] < 0.0)[0]
    assert len(below), "the gap does not close again in the window"
    k = opened[0] + below[0]
    return brentq(gap, taus[k - 1], taus[k], xtol=1e-16)


@pytest.mark.parametrize("name", list(WHEELS_IN_BOWLS))
def test_a_wheel_bouncing_down_a_bowl_meets_the_arc_where_its_parabola_does(name):
    (half, big_radius), wheel, restitution, friction = WHEELS_IN_BOWLS[name]
    body = {"id": "wheel0", "type": "wheel", **wheel}
    ground = bowl(half, big_radius)
    trajectory = simulate(
        scene([body], ground, restitution=restitution, friction=friction, t_end=0.25)
    )
    assert trajectory.status == "finished", trajectory.message
    impacts = [e for e in trajectory.events if e.type == "impact"]
    assert len(impacts) >= 5 and all(e.other == "left" for e in impacts)
    posts = {f.t: f for f in trajectory.frames if f.kind == "post"}
    centre = np.array([-half, big_radius])
    checked = 0
    for before, after in itertools.pairwise(impacts):
        post = posts[before.t]
        hop = after.t - before.t
        assert hop > 1e-9, (before.t, after.t)  # never the same instant again
        tau = next_closing(post.q[:2], post.v[:2], centre, big_radius, wheel["radius"], 2 * hop)
        assert abs(before.t + tau - after.t) <= TIME_TOL, (before.t, tau, after.t)
        checked += 1
    assert checked >= 4
    assert [e.type for e in trajectory.events].count("zeno") == 1


# ------------------------------------------------------------------ separating from a hair inside

STEP_EDGE = -0.5196894503612637
"""x (m) of the step's riser; the step is 0.02 m high."""


def test_first_closing_of_a_gap_opening_from_a_hair_inside_is_never():
    """``p = c0 + c1 τ + c2 τ²`` below the floor at the start and rising (convex or straight).

    Its decreasing root lies before the start. It was taken as a closing at
    ``τ = 0`` (a separating contact closed at once, again and again).
    """
    floor = -2.0 * 0.078 * 1e-12
    c0 = np.array([-1.3e-12, -1.3e-12, -1.3e-12, -1.3e-12, 0.01])
    c1 = np.array([0.02, 0.02, -0.02, 0.02, -1.0])
    c2 = np.array([0.01, 0.0, 0.01, -5.0, 0.0])
    tau = first_closing(c0, c1, c2, 1.0, floor)
    assert np.isinf(tau[0]) and np.isinf(tau[1])
    assert tau[2] == 0.0  # going deeper: at once
    # rising, then falling back: the later root of −5τ² + 0.02τ − 1.3e-12
    assert tau[3] == pytest.approx(
        (0.02 + math.sqrt(0.02**2 - 4 * 5.0 * 1.3e-12)) / 10.0, rel=1e-12
    )
    assert tau[4] == pytest.approx(0.01, rel=1e-15)


def test_a_wheel_rocking_back_off_a_step_edge_rolls_on_along_the_floor():
    """A wheel (μ = 0.42, e = 0) lands, rolls into a step's edge, rocks on it and falls back.

    It meets the floor while still touching the edge; the plastic impact
    leaves the edge contact a hair (8.5e-12 m) inside and separating at
    0.14 m/s. The closed-form search took that for a closing at once and
    the instant repeated until the 200-events guard (exploratory run of the
    drawn-geometry property test). After the impact the wheel rolls on the
    flat floor at constant speed: ``x = x⁺ + ẋ⁺ (t − t⁺)``, ``y = r``.
    """
    radius = 0.07811291678089842
    body = {
        "id": "wheel0",
        "type": "wheel",
        "mass": 0.2,
        "inertia": 0.0006101627768019562,
        "radius": radius,
        "position": [-0.6, 0.15811291678089845],
        "velocity": [0.48493990681979726, -1.846330774359283],
        "angular_velocity": 0.7725241871676927,
    }
    ground = {
        "id": "ground",
        "type": "polyline",
        "points": [[-1.5, 0.0], [STEP_EDGE, 0.0], [STEP_EDGE, 0.02], [1.5, 0.02]],
    }
    trajectory = simulate(
        scene([body], [ground], restitution=0.0, friction=0.4249496029258336, t_end=0.25)
    )
    assert trajectory.status == "finished", trajectory.message
    impacts = [e for e in trajectory.events if e.type == "impact"]
    assert [e.other for e in impacts] == ["ground#s0", "ground#v2", "ground#s0"]
    landing = impacts[-1].t
    post = next(f for f in trajectory.frames if f.kind == "post" and f.t == landing)
    assert post.v[0] < 0.0  # back, away from the step
    after = [f for f in trajectory.frames if f.t > landing]
    assert after and after[-1].t == pytest.approx(0.25)
    t = np.array([f.t for f in after])
    q = np.array([f.q for f in after])
    assert np.max(np.abs(q[:, 0] - (post.q[0] + post.v[0] * (t - landing)))) <= POSITION_TOL
    assert np.max(np.abs(q[:, 1] - radius)) <= POSITION_TOL


# ------------------------------------------------------------------ a spring held by a contact

SPRING_K, SPRING_L0 = 1.0, 0.1335414297584746
"""Spring between the touching beads b0 and b1 (N/m, m): it pushes them apart."""
ANCHOR_K, ANCHOR_X = 157.41585425611257, 2.435560449078845
"""Spring (rest length 1.5 m) from b2 to an anchor on the rail (N/m, m)."""
HELD_FORCE = -17.76503467852713 * math.sin(0.5703623273986909)
"""Constant force on b1 (N): ``amplitude sin(phase)`` with ω = 0, towards b0."""
HELD_MASSES = (1.9, 0.2, 0.3767464676130712)


def held_pair_scene():
    bodies = [
        {"id": f"b{k}", "type": "bead", "rail_y": 0.0, "mass": m, "radius": 0.05, "x": 0.1 * k}
        for k, m in enumerate(HELD_MASSES)
    ]
    springs = [
        {"a": "b0", "b": "b1", "stiffness": SPRING_K, "rest_length": SPRING_L0, "damping": 1.5},
        {"a": "b2", "anchor": [ANCHOR_X, 0.0], "stiffness": ANCHOR_K, "rest_length": 1.5},
    ]
    force = {"body": "b1", "type": "harmonic", "amplitude": [-17.76503467852713, 0.0]}
    force.update(omega=0.0, phase=0.5703623273986909)
    stops = [
        {"id": "left", "type": "segment", "a": [-1.0, -0.2], "b": [-1.0, 0.2]},
        {"id": "right", "type": "segment", "a": [1.0, -0.2], "b": [1.0, 0.2]},
    ]
    return scene(bodies, stops, [force], restitution=0.0, t_end=0.25, springs=springs)


def test_touching_beads_joined_by_a_spring_and_pressed_together_move_as_one():
    """b1 is pushed into b0 by a constant 9.6 N; the spring between them is held by the contact.

    The closed-form flow of that phase degenerates (the spring's ends are
    held) and drifted b1 through b0 (0.0625 m by 0.05 s: the spring's
    sign-change search then failed, or the check after the piece found the
    overlap). The pair moves as one body, ``x = −F t²/(2(m₀ + m₁))`` (the
    spring and its damper are internal); b2 leaves at once on its anchor
    spring, ``x₂ = c + (0.2 − c) cos ωt`` with ``c = x_anchor − 1.5``, and
    stops plastically at the right stop (x = 0.95 m) and swings back from
    there about ``c`` (0.936 m).
    """
    trajectory = simulate(held_pair_scene())
    assert trajectory.status == "finished", trajectory.message
    t = np.array([f.t for f in trajectory.frames])
    q = np.array([f.q for f in trajectory.frames])
    pair = 0.5 * HELD_FORCE / (HELD_MASSES[0] + HELD_MASSES[1]) * t * t
    assert np.max(np.abs(q[:, 0] - pair)) <= POSITION_TOL
    assert np.max(np.abs(q[:, 1] - 0.1 - pair)) <= POSITION_TOL
    centre = ANCHOR_X - 1.5
    omega = math.sqrt(ANCHOR_K / HELD_MASSES[2])
    t_stop = math.acos((0.95 - centre) / (0.2 - centre)) / omega
    impacts = [e for e in trajectory.events if e.type == "impact"]
    assert [(e.body, e.other) for e in impacts] == [("b2", "right")]
    assert abs(impacts[0].t - t_stop) <= TIME_TOL
    flying = t < t_stop
    assert np.max(np.abs(q[flying, 2] - (centre + (0.2 - centre) * np.cos(omega * t[flying])))) <= (
        POSITION_TOL
    )
    back = centre + (0.95 - centre) * np.cos(omega * (t[~flying] - t_stop))
    assert np.max(np.abs(q[~flying, 2] - back)) <= POSITION_TOL


# ------------------------------------------------------------------ hops within the tolerance


def test_a_wheel_left_a_hair_off_a_bowl_s_arc_slides_on_it():
    """A wheel falls into a bowl and meets its arc with e = 1.2e-7 (exploratory profile).

    It leaves the impact at 2.1e-7 m/s; on the arc, whose curvature pulls it
    back at about 20 m/s², that is a hop of 1e-15 m, ending 2e-8 s later
    inside ``GAP_TOL``. The next phase closed the contact at once, the
    instant repeated until the 200-events guard. Taken up as resting
    contact, the wheel slides on the arc: its centre stays at ``R − r`` from
    the arc's centre and ``½ m v² + ½ I ω² + m g y`` keeps its value after the
    impact (frictionless).
    """
    half, big_radius, radius, mass, inertia = (
        0.4619812440833778,
        0.5,
        0.11783205577469572,
        4.5,
        1e-3,
    )
    body = {
        "id": "wheel0",
        "type": "wheel",
        "mass": mass,
        "inertia": inertia,
        "radius": radius,
        "position": [-0.60006103515625, 0.31783205577469587],
        "velocity": [0.2, 0.0],
    }
    trajectory = simulate(
        scene([body], bowl(half, big_radius), restitution=1.192092896e-07, t_end=0.25)
    )
    assert trajectory.status == "finished", trajectory.message
    impacts = [e for e in trajectory.events if e.type == "impact"]
    assert [e.other for e in impacts] == ["left"]
    post = next(f for f in trajectory.frames if f.kind == "post")
    after = [f for f in trajectory.frames if f.t > post.t and f.q[0] < -half]
    assert len(after) >= 3
    q = np.array([f.q for f in after])
    v = np.array([f.v for f in after])
    centre = np.array([-half, big_radius])
    assert np.max(np.abs(np.hypot(*(q[:, :2] - centre).T) - (big_radius - radius))) <= POSITION_TOL

    def energy(q, v):
        return (
            0.5 * mass * (v[..., 0] ** 2 + v[..., 1] ** 2)
            + 0.5 * inertia * v[..., 2] ** 2
            + (mass * G_ACC * q[..., 1])
        )

    assert np.max(np.abs(energy(q, v) - energy(post.q, post.v))) <= 1e-9 * energy(post.q, post.v)


NOTCH = [
    [-1.5, 5.960464477539063e-08],
    [-0.364904044884942, -0.028498640046546175],
    [-0.02090381580399736, -0.24718493000292163],
    [0.0, 0.218583143263806],
    [1.5, 1e-06],
]
"""A polyline with a V notch (exploratory profile; its third point's x was −6.5e-117 m)."""


def notch_run(friction: float):
    bodies = [
        {
            "id": "wheel0",
            "type": "wheel",
            "mass": 1.8483194771719107,
            "inertia": 0.00866237817638164,
            "radius": 0.14799842237397287,
            "position": [-0.41183021116931134, 0.19799842237397286],
            "velocity": [0.9623506674314832, -0.8286988119318801],
        },
        {
            "id": "wheel1",
            "type": "wheel",
            "mass": 3.9756433950196133,
            "inertia": 0.0008,
            "radius": 0.04,
            "position": [0.771036360674242, 0.24000000000000013],
            "velocity": [0.0, -0.3036487127593497],
        },
    ]
    ground = {"id": "ground", "type": "polyline", "points": NOTCH}
    return simulate(scene(bodies, [ground], restitution=0.0, friction=friction, t_end=0.25))


def test_a_friction_coefficient_below_rounding_is_frictionless():
    """μ = 3e-299 on a wheel wedged in a notch: the same run as μ = 0.

    Both contacts of the notch press and need (almost) no friction; with
    ``μλ`` far below the rounding of the friction force the stick test
    flipped both contacts between stick and slip at one instant until the
    200-events guard. A coefficient below ``FRICTION_FLOOR`` is 0.
    """
    tiny, zero = notch_run(3.181965699856207e-299), notch_run(0.0)
    assert tiny.status == "finished", tiny.message
    assert zero.status == "finished", zero.message
    assert [(f.t, f.kind) for f in tiny.frames] == [(f.t, f.kind) for f in zero.frames]
    assert np.array_equal([f.q for f in tiny.frames], [f.q for f in zero.frames])
    assert [(e.t, e.type, e.other) for e in tiny.events] == [
        (e.t, e.type, e.other) for e in zero.events
    ]
