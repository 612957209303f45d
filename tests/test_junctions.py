"""Contacts where features meet, beads that must not pass through each other, bounded steps.

Every check measures gaps with geometry written here (not the engine's own
contact states): a wheel of radius ``r`` centred at ``c`` overlaps a segment
when its distance to the segment is below ``r``, an arc (seen from inside
its circle) when ``|c − centre| > R − r`` within the arc's sector.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import brentq

from solver.scene import parse_scene
from solver.simulation import make_stepper, simulate
from tests.scene_data import G_ACC, gravity_scene

R_WHEEL = 0.1
PENETRATION_TOL = 1e-9


def scene(bodies, boundaries=(), springs=(), restitution=0.5, friction=0.0, t_end=1.5, dt_out=0.01):
    return gravity_scene(bodies, boundaries, springs, (), restitution, friction, t_end, dt_out)


def wheel(x, y, vx=0.0, rolling=False):
    return {
        "id": "wheel",
        "type": "wheel",
        "mass": 1.0,
        "inertia": 0.5 * R_WHEEL**2,
        "radius": R_WHEEL,
        "position": [x, y],
        "velocity": [vx, 0.0],
        "angular_velocity": -vx / R_WHEEL if rolling else 0.0,
    }


def segment_distance(c, a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    e = b - a
    s = np.clip((c - a) @ e / (e @ e), 0.0, 1.0)
    return np.hypot(*(c - a - s[:, None] * e).T)


def concave_arc_overlap(c, centre, radius, start_deg, end_deg):
    """How far (m) disks centred at ``c`` reach through an arc seen from inside its circle."""
    w = c - np.asarray(centre, float)
    theta = np.degrees(np.arctan2(w[:, 1], w[:, 0]))
    inside = (theta - start_deg) % 360.0 <= (end_deg - start_deg) % 360.0
    return np.where(inside, np.hypot(*w.T) - (radius - R_WHEEL), -np.inf)


def centres(trajectory):
    return np.array([f.q[:2] for f in trajectory.frames])


def floor_and_pipe(floor_end=0.0):
    """A floor to ``floor_end`` and a quarter pipe rising tangentially from (0, 0)."""
    return [
        {"id": "floor", "type": "segment", "a": [-2.0, 0.0], "b": [floor_end, 0.0]},
        {
            "id": "pipe",
            "type": "arc",
            "center": [0.0, 1.0],
            "radius": 1.0,
            "start_deg": -90.0,
            "end_deg": 0.0,
        },
    ]


def assert_on_floor_or_pipe(trajectory, floor_end=0.0):
    c = centres(trajectory)
    floor = R_WHEEL - segment_distance(c, (-2.0, 0.0), (floor_end, 0.0))
    pipe = concave_arc_overlap(c, (0.0, 1.0), 1.0, -90.0, 0.0)
    assert np.max(floor) <= PENETRATION_TOL
    assert np.max(pipe) <= PENETRATION_TOL


def mechanical_energy(trajectory):
    return np.array([f.energy.kinetic + f.energy.potential for f in trajectory.frames])


# ------------------------------------------------------------------ tangent junctions

# (speed m/s, start x m, rolling?) cases that fell through the pipe, stalled or
# recorded impacts at the junction before the contact set was complete
TANGENT_CASES = [
    (1.0, -1.0, True),
    (3.0, -0.5, True),
    (3.0, -1.0, True),
    (2.3, -0.33, False),
    (1.0, -1.0, False),
    (0.5, -0.33, False),
    (1.7, -0.5, True),
]


@pytest.mark.parametrize(("speed", "x0", "rolling"), TANGENT_CASES)
def test_wheel_rides_through_a_tangent_floor_to_arc_junction(speed, x0, rolling):
    trajectory = simulate(
        scene(
            [wheel(x0, R_WHEEL, speed, rolling)], floor_and_pipe(), friction=0.5 if rolling else 0.0
        )
    )
    assert trajectory.status == "finished", trajectory.message
    assert_on_floor_or_pipe(trajectory)
    # tangent junctions hand the contact over without an impact, both ways
    assert [e for e in trajectory.events if e.type == "impact"] == []
    # energy is lost only to friction work, none to impacts
    balance = np.array([f.energy.balance for f in trajectory.frames])
    assert np.ptp(balance) <= 1e-9 * max(1.0, abs(balance[0]))
    if not rolling:
        energy = mechanical_energy(trajectory)
        assert np.ptp(energy) <= 1e-9 * max(1.0, abs(energy[0]))


def test_arc_whose_end_lies_on_a_longer_floor_takes_the_wheel_over():
    trajectory = simulate(scene([wheel(-0.5, R_WHEEL, 1.0)], floor_and_pipe(floor_end=2.0)))
    assert trajectory.status == "finished", trajectory.message
    assert_on_floor_or_pipe(trajectory, floor_end=2.0)
    assert [e for e in trajectory.events if e.type == "impact"] == []
    c = centres(trajectory)
    assert c[:, 1].max() > R_WHEEL + 0.04  # it went up the pipe (v²/2g = 0.051 m)


@pytest.mark.parametrize("speed", [0.0, 0.8, -0.8])
def test_wheel_starting_at_the_junction_point(speed):
    trajectory = simulate(scene([wheel(0.0, R_WHEEL, speed)], floor_and_pipe(), t_end=1.0))
    assert trajectory.status == "finished", trajectory.message
    assert_on_floor_or_pipe(trajectory)
    assert [e for e in trajectory.events if e.type == "impact"] == []


def test_two_wheels_leaving_a_bowls_arcs_at_once_keep_both_contacts():
    """A bowl: a floor with an arc continuing it tangentially at each end (R = 0.8125 m).

    Both wheels slide (e = 0, mu = 0) on the arcs; at t = 0.2325 s one of them
    rides from its arc onto the floor while the other is still on its arc,
    whose gap has drifted to -1.26e-10 m in its phase (beyond GAP_TOL,
    within PENETRATION_TOL). That contact must stay in the contact problem:
    left out, its gap "closed" again at the same instant, 200 times, and the
    run failed (the drawn-geometry property test's example).
    """
    radius, arc_r = 0.140625, 0.8125
    half = 0.5546875
    centre_x, centre_y = 0.16077968354985112, 0.710628512050759  # arcs end on the floor's ends
    boundaries = [
        {"id": "floor", "type": "segment", "a": [-half, 0.0], "b": [half, 0.0]},
        {
            "id": "right",
            "type": "arc",
            "center": [centre_x, centre_y],
            "radius": arc_r,
            "start_deg": -61.0,
            "end_deg": 0.0,
        },
        {
            "id": "left",
            "type": "arc",
            "center": [-centre_x, centre_y],
            "radius": arc_r,
            "start_deg": 180.0,
            "end_deg": 241.0,
        },
    ]
    inertia = 0.0098876953125
    bodies = [
        {
            "id": name,
            "type": "wheel",
            "mass": 1.0,
            "inertia": inertia,
            "radius": radius,
            "position": position,
            "velocity": velocity,
        }
        for name, position, velocity in (
            ("wheel0", [-0.6, 0.430625], [0.0, -0.5]),
            ("wheel1", [0.4046875, 0.240625], [0.953125, 0.0]),
        )
    ]
    trajectory = simulate(scene(bodies, boundaries, restitution=0.0, t_end=0.6))
    assert trajectory.status == "finished", trajectory.message
    q = np.array([f.q for f in trajectory.frames])
    for k in range(2):
        c = q[:, 3 * k : 3 * k + 2]
        assert np.max(radius - segment_distance(c, [-half, 0.0], [half, 0.0])) <= PENETRATION_TOL
        for arc in boundaries[1:]:
            w = c - np.array(arc["center"])
            theta = np.degrees(np.arctan2(w[:, 1], w[:, 0]))
            inside = (theta - arc["start_deg"]) % 360.0 <= arc["end_deg"] - arc["start_deg"]
            reach = np.hypot(*w.T) - (arc_r - radius)
            assert np.max(reach[inside], initial=-np.inf) <= PENETRATION_TOL


# ------------------------------------------------------------------ kinks

KINK_START = -0.5
KINK_SPEED = 1.0


def test_concave_kink_between_two_segments_is_exactly_one_impact():
    slope = math.radians(30.0)
    ramp_end = [math.cos(slope), math.sin(slope)]
    trajectory = simulate(
        scene(
            [wheel(KINK_START, R_WHEEL, KINK_SPEED)],
            [{"id": "ground", "type": "polyline", "points": [[-2.0, 0.0], [0.0, 0.0], ramp_end]}],
            restitution=0.0,
            t_end=0.7,  # it rolls back to the junction at 0.78 s
        )
    )
    assert trajectory.status == "finished", trajectory.message
    hits = [e for e in trajectory.events if e.type == "impact"]
    assert len(hits) == 1
    # the wheel's centre at height r is r from the ramp line y = x tan(30°)
    x_hit = R_WHEEL * (math.cos(slope) - 1.0) / math.sin(slope)
    assert hits[0].t == pytest.approx((x_hit - KINK_START) / KINK_SPEED, abs=1e-9)
    c = centres(trajectory)
    depth = R_WHEEL - np.minimum(
        segment_distance(c, (-2.0, 0.0), (0.0, 0.0)), segment_distance(c, (0.0, 0.0), ramp_end)
    )
    assert np.max(depth) <= PENETRATION_TOL


def test_concave_kink_from_segment_to_arc_is_exactly_one_impact():
    # arc of radius 1 about (−0.5, √3/2) from −60° to 30°: it starts at (0, 0) rising at 30°
    centre = (-0.5, math.sqrt(3.0) / 2.0)
    trajectory = simulate(
        scene(
            [wheel(KINK_START, R_WHEEL, KINK_SPEED)],
            [
                {"id": "floor", "type": "segment", "a": [-2.0, 0.0], "b": [0.0, 0.0]},
                {
                    "id": "bank",
                    "type": "arc",
                    "center": list(centre),
                    "radius": 1.0,
                    "start_deg": -60.0,
                    "end_deg": 30.0,
                },
            ],
            restitution=0.0,
            t_end=0.7,  # it rolls back to the junction at 0.78 s
        )
    )
    assert trajectory.status == "finished", trajectory.message
    hits = [e for e in trajectory.events if e.type == "impact"]
    assert len(hits) == 1
    x_hit = centre[0] + math.sqrt((1.0 - R_WHEEL) ** 2 - (R_WHEEL - centre[1]) ** 2)
    assert hits[0].t == pytest.approx((x_hit - KINK_START) / KINK_SPEED, abs=1e-9)
    c = centres(trajectory)
    assert np.max(R_WHEEL - segment_distance(c, (-2.0, 0.0), (0.0, 0.0))) <= PENETRATION_TOL
    assert np.max(concave_arc_overlap(c, centre, 1.0, -60.0, 30.0)) <= PENETRATION_TOL


# ------------------------------------------------------------------ beads on one rail


def bead(name, x, vx, radius=0.1):
    return {
        "id": name,
        "type": "bead",
        "rail_y": 0.0,
        "mass": 1.0,
        "radius": radius,
        "x": x,
        "vx": vx,
    }


def spring_motion(x0, v0, anchor, k):
    """x(t) of a unit mass on a zero-rest-length spring k (N/m) to ``anchor`` (m)."""
    omega = math.sqrt(k)
    return lambda t: anchor + (x0 - anchor) * math.cos(omega * t) + v0 / omega * math.sin(omega * t)


def test_two_beads_pulled_through_each_other_by_their_springs_collide():
    gap, v, a1, a2, k1, k2 = 0.0414, 1.2867, 0.1984, -1.8898, 76.58, 56.12
    model = scene(
        [bead("b1", 0.0, -v), bead("b2", 0.2 + gap, v)],
        springs=[
            {"a": "b1", "anchor": [a1, 0.0], "stiffness": k1, "rest_length": 0.0},
            {"a": "b2", "anchor": [a2, 0.0], "stiffness": k2, "rest_length": 0.0},
        ],
        restitution=0.8,
        t_end=1.0,
    )
    trajectory = simulate(model)
    assert trajectory.status == "finished", trajectory.message
    x = np.array([f.q for f in trajectory.frames])
    assert np.min(x[:, 1] - x[:, 0] - 0.2) >= -PENETRATION_TOL
    x1, x2 = spring_motion(0.0, -v, a1, k1), spring_motion(0.2 + gap, v, a2, k2)
    ts = np.linspace(0.0, 0.2, 2001)
    gaps = np.array([x2(t) - x1(t) - 0.2 for t in ts])
    first = int(np.argmax(gaps < 0.0))
    t_hit = brentq(lambda t: x2(t) - x1(t) - 0.2, ts[first - 1], ts[first], xtol=1e-15)
    hits = [e for e in trajectory.events if e.type == "impact"]
    assert hits and hits[0].t == pytest.approx(t_hit, abs=1e-9)


def test_bead_pulled_from_afar_stops_at_the_chain_in_between():
    beads = [bead("far", -3.0, 0.0)] + [bead(f"c{k}", 0.2 * k, 0.0) for k in range(3)]
    model = scene(
        beads,
        springs=[{"a": "far", "anchor": [5.0, 0.0], "stiffness": 40.0, "rest_length": 0.0}],
        restitution=0.9,
        t_end=2.0,
    )
    trajectory = simulate(model)
    assert trajectory.status == "finished", trajectory.message
    x = np.array([f.q for f in trajectory.frames])
    assert np.min(np.diff(x, axis=1) - 0.2) >= -PENETRATION_TOL


@pytest.mark.parametrize("gap", [0.0, 0.02, 0.05])
def test_beads_separating_on_springs_that_cross_meet_and_never_overlap(gap):
    model = scene(
        [bead("b1", 0.0, -1.0), bead("b2", 0.2 + gap, 1.0)],
        springs=[
            {"a": "b1", "anchor": [1.0, 0.0], "stiffness": 30.0, "rest_length": 0.0},
            {"a": "b2", "anchor": [-1.0, 0.0], "stiffness": 30.0, "rest_length": 0.0},
        ],
        restitution=0.5,
        t_end=2.0,
    )
    trajectory = simulate(model)
    assert trajectory.status == "finished", trajectory.message
    x = np.array([f.q for f in trajectory.frames])
    assert np.min(x[:, 1] - x[:, 0] - 0.2) >= -PENETRATION_TOL
    assert any(e.type == "impact" for e in trajectory.events)


def test_every_step_of_a_very_fast_bead_ends_after_bounded_work():
    import solver.events as events_module

    model = scene([bead(f"b{k}", 0.3 * k, 1e6 if k == 2 else 0.0) for k in range(5)], t_end=1.0)
    stepper = make_stepper(model)
    phases = 0
    original = stepper._fast_phase  # called once per phase, whichever kind then runs it

    def counted(out, debug):
        nonlocal phases
        phases += 1
        return original(out, debug)

    stepper._fast_phase = counted
    times = []
    for _ in range(5):
        phases = 0
        stepper.step()
        assert phases <= events_module.MAX_PHASES_PER_STEP
        times.append(stepper.t)
    assert stepper.status == "running"
    assert np.all(np.diff(times) > 0.0)


@pytest.mark.parametrize("omega", [0.0, 1.0, 2.0])
def test_touching_beads_with_a_spring_held_by_their_contact_stay_apart(omega):
    # the spring b0–b1 is held at 0.1 m by their contact: the closed-form flow of such a
    # phase degenerates (it gave 4.5e15 m); the phase must be integrated otherwise
    model = parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "gravity": [0.0, -G_ACC],
            "contact": {"restitution": 0.0, "friction": 0.0, "impact_law": "staged"},
            "boundaries": [
                {"id": "left", "type": "segment", "a": [-1.0, -0.2], "b": [-1.0, 0.2]},
                {"id": "right", "type": "segment", "a": [1.0, -0.2], "b": [1.0, 0.2]},
            ],
            "bodies": [bead(f"b{k}", 0.1 * k, 0.0, radius=0.05) for k in range(4)],
            "springs": [{"a": "b0", "b": "b1", "stiffness": 1.0, "rest_length": 0.25}],
            "forces": [
                {
                    "body": "b1",
                    "type": "harmonic",
                    "amplitude": [1.0, 0.0],
                    "omega": omega,
                    "phase": 4.0,
                }
            ],
            "solver": {"t_end": 0.25, "dt_out": 0.025},
        }
    )
    trajectory = simulate(model)
    assert trajectory.status == "finished", trajectory.message
    x = np.array([f.q for f in trajectory.frames])
    assert np.min(np.diff(x, axis=1)) >= 0.1 - PENETRATION_TOL
    assert np.min(x[:, 0]) >= -0.95
    balance = np.array([f.energy.balance for f in trajectory.frames])
    assert np.ptp(balance) <= 1e-9


def test_bead_pulled_towards_a_far_stop_hits_it():
    # a closed-form piece lasts 2/rate (0.14 s here, 0.4 m at 3 m/s) while the candidate
    # pairs cover a quarter of the margin: the bead went through the stop
    model = scene(
        [
            bead("b0", -0.25, -1.0, 0.05),
            bead("b1", -0.15, 0.0, 0.05),
            {**bead("b2", -0.05, 3.0, 0.05), "mass": 0.5},
        ],
        [
            {"id": "left", "type": "segment", "a": [-1.0, -0.2], "b": [-1.0, 0.2]},
            {"id": "right", "type": "segment", "a": [1.0, -0.2], "b": [1.0, 0.2]},
        ],
        springs=[{"a": "b2", "anchor": [2.0, 0.0], "stiffness": 101.0, "rest_length": 1.5}],
        restitution=0.0,
        t_end=0.25,
    )
    trajectory = simulate(model)
    assert trajectory.status == "finished", trajectory.message
    x = np.array([f.q for f in trajectory.frames])
    assert np.max(x[:, 2]) <= 0.95 + PENETRATION_TOL
    assert next((e.body, e.other) for e in trajectory.events if e.type == "impact") == (
        "b2",
        "right",
    )


def test_wheel_falling_past_a_step_corner_hits_the_corner():
    # between two sub-points the corner's gap closed and the wheel's centre entered the
    # strip of the step's face, which hides the corner: the impact was missed (5 mm)
    step = [[-1.5, 0.0], [-0.640625, 0.0], [-0.640625, 0.125], [1.5, 0.125]]
    model = scene(
        [
            {
                "id": "wheel",
                "type": "wheel",
                "mass": 1.0,
                "inertia": 0.0059814453125,
                "radius": 0.109375,
                "position": [-0.7875, 0.424375],
                "velocity": [0.25, 0.0],
            }
        ],
        [{"id": "ground", "type": "polyline", "points": step}],
        restitution=0.0,
        t_end=0.25,
    )
    trajectory = simulate(model)
    assert trajectory.status == "finished", trajectory.message
    c = centres(trajectory)
    depth = 0.109375 - np.min(
        [segment_distance(c, a, b) for a, b in itertools.pairwise(step)], axis=0
    )
    assert np.max(depth) <= PENETRATION_TOL
    hits = [e for e in trajectory.events if e.type == "impact"]
    assert hits and hits[0].other == "ground#v2"


def test_wheel_rolling_at_the_height_of_a_step_hits_its_face():
    # the step is as high as the wheel's radius: its centre runs along the end of the
    # face's strip, where the corner was hidden and the face not yet watched (5 mm)
    r = 0.109375
    step = [[-1.5, 0.0], [-0.640625, 0.0], [-0.640625, r], [1.5, r]]
    model = scene(
        [
            {
                "id": "wheel",
                "type": "wheel",
                "mass": 1.0,
                "inertia": 0.0059814453125,
                "radius": r,
                "position": [-0.803125, 0.310625],
                "velocity": [0.25, 0.0],
            }
        ],
        [{"id": "ground", "type": "polyline", "points": step}],
        restitution=0.0,
        friction=1.0,
        t_end=0.25,
    )
    trajectory = simulate(model)
    assert trajectory.status == "finished", trajectory.message
    c = centres(trajectory)
    depth = r - np.min([segment_distance(c, a, b) for a, b in itertools.pairwise(step)], axis=0)
    assert np.max(depth) <= PENETRATION_TOL
