"""The closed-form proof that no gap closed in a free flight (issue 8, the check after a piece).

:func:`solver.gap_closing.flight_clear` lets the check for missed closings
skip its gap evaluations on a parabolic flight when every disk provably
keeps its radius (less ``PENETRATION_TOL``) from every feature. A proof must
never say "clear" where the true gap closes: here the true distances are
sampled densely along the flight with geometry written in the test
(distance to a closed segment, to a point, to an arc as a point set,
between centres), and every proof that says "clear" is checked against
them. The cases are drawn close to the boundary (the reach within a few
nanometres of the sampled least distance) so that both answers occur.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, event, given
from hypothesis import strategies as st

from solver import event_location
from solver.errors import SolverError
from solver.event_location import CLEAR_MARGIN
from solver.flight import Parabola, Piece
from solver.gap_closing import clear_rows, flight_clear
from solver.gap_kernel import pair_clear
from solver.gap_set import GapSet
from solver.simulation import make_stepper
from tests.gap_arrays import clear_rows_floats
from tests.scene_data import G_ACC, gravity_scene, uniform_wheel
from tests.test_drawn_geometry import (
    assert_wheels_clear,
    flying_wheels,
    ground,
    segment_distance,
    wheel_velocities,
)

PENETRATION_TOL = 1e-9
SAMPLES = 20001
"""Samples of a flight on which the true distances are measured."""

position = st.floats(-2.0, 2.0)
speed = st.floats(-10.0, 10.0)
accel = st.floats(-20.0, 20.0)
duration = st.floats(1e-6, 1.0)
offset = st.one_of(
    st.floats(-1e-3, 1e-3),
    st.floats(-5e-9, 5e-9),
    st.sampled_from([-2e-9, -1e-9, 0.0, 1e-9, 1.2e-9, 2e-9, 1e-8]),
)
"""Reach less the sampled least distance (m): the true answer flips at ``PENETRATION_TOL``."""


def parabola(path, T):
    """Points (SAMPLES, 2) of ``p0 + p1 τ + p2 τ²``, ``τ ∈ [0, T]``; ``path``: those six numbers."""
    x, y, vx, vy, ax, ay = path
    tau = np.linspace(0.0, T, SAMPLES)[:, None]
    return np.array([x, y]) + tau * (np.array([vx, vy]) + tau * np.array([ax, ay]))


@given(
    path=st.tuples(position, position, speed, speed, accel, accel),
    hull=st.tuples(position, position, position, position),
    point=st.booleans(),
    T=duration,
    shift=offset,
)
def test_a_proof_of_a_pair_never_hides_a_closing_of_its_sampled_distance(
    path, hull, point, T, shift
):
    """``pair_clear`` says clear only if every sample keeps ``reach − PENETRATION_TOL`` away."""
    ax, ay, bx, by = hull
    if point:
        bx, by = ax, ay
    points = parabola(path, T)
    if point or (ax, ay) == (bx, by):
        distance = np.hypot(*(points - np.array([ax, ay])).T)
    else:
        distance = segment_distance(points, (ax, ay), (bx, by))
    # a path through the segment (least distance 0) with a small disk: it must not be proved
    reach = max(float(distance.min()) + shift, 1e-3)
    clear = pair_clear(*path, ax, ay, bx, by, reach, math.nan, T)
    event("clear" if clear else "not proved")
    if clear:
        assert distance.min() >= reach - PENETRATION_TOL


@given(
    path=st.tuples(position, position, speed, speed, accel, accel),
    centre=st.tuples(position, position),
    T=duration,
    shift=offset,
    outside=st.floats(0.0, 1.0),
)
def test_a_proof_inside_a_circle_never_hides_a_point_leaving_it(path, centre, T, shift, outside):
    """With an arc's ``room`` the point may keep inside the circle: never beyond ``room``."""
    rho = np.hypot(*(parabola(path, T) - np.array(centre)).T)
    room = float(rho.max()) - shift
    reach = float(rho.max()) + outside  # an outer circle the path never keeps clear of
    assume(room > 1e-3)
    clear = pair_clear(*path, *centre, *centre, reach, room, T)
    event("clear" if clear else "not proved")
    if clear:
        assert rho.min() >= reach - PENETRATION_TOL or rho.max() <= room + PENETRATION_TOL


@given(
    boundaries=ground(),
    wheels=flying_wheels,
    velocities=wheel_velocities,
    extra=st.floats(-5.0, 5.0),
    T=st.sampled_from([0.0, 1e-4]) | st.floats(1e-4, 0.5),
    clearance=st.sampled_from([0.0, CLEAR_MARGIN, 0.05]),
)
def test_the_compiled_proofs_are_the_float_route(
    boundaries, wheels, velocities, extra, T, clearance
):
    """:func:`solver.gap_closing.clear_rows` (one compiled loop) says what the float route did.

    Wheels in flight over drawn ground (segments, corners, arcs, the other
    wheel under its own acceleration), every pair, with and without a
    clearance: the same answer per pair as the route it replaced, kept in
    ``tests/gap_arrays.py``.
    """
    bodies = [uniform_wheel(f"w{k}", r, 5.0 * k, 5.0) for k, (r, _, _) in enumerate(wheels)]
    stepper = make_stepper(gravity_scene(bodies, boundaries))
    kin, system = stepper.setup.kin, stepper.system
    q, v, a = (np.zeros(3 * len(wheels)) for _ in range(3))
    for k, (_, x, y) in enumerate(wheels):
        q[3 * k : 3 * k + 2] = (x, y)
        v[3 * k : 3 * k + 2] = velocities[k]
        a[3 * k + 1] = -G_ACC + (extra if k == 1 else 0.0)
    gaps = GapSet(kin, kin.candidates(q, 100.0, np.arange(system.n_disks)))
    c, cd, ca = system.centres(q), system.centre_velocities(v), system.centre_velocities(a)
    rows = list(range(len(gaps)))
    clear = clear_rows(gaps, rows, c, cd, ca, T, clearance)
    floats = clear_rows_floats(gaps, rows, c.tolist(), cd.tolist(), ca.tolist(), T, clearance)
    event(f"{int(clear.sum())} of {len(rows)} proved")
    assert clear.tolist() == floats


@given(
    boundaries=ground(),
    wheels=flying_wheels,
    velocities=wheel_velocities,
    extra=st.floats(-5.0, 5.0),
    T=st.floats(1e-4, 0.5),
)
def test_a_flight_proved_clear_keeps_every_wheel_off_the_drawn_ground_and_the_other_wheel(
    boundaries, wheels, velocities, extra, T
):
    """Wheels in flight over drawn ground (polylines, steps, bowls, bumps): proofs are sound.

    Every candidate pair of the scene is watched (segments, corners, arcs,
    the other wheel); the second wheel, if any, has its own acceleration.
    """
    bodies = [uniform_wheel(f"w{k}", r, x, y) for k, (r, x, y) in enumerate(wheels)]
    # built high above the ground (a scene may not start overlapping), then put in place
    far = [uniform_wheel(b["id"], b["radius"], 5.0 * k, 5.0) for k, b in enumerate(bodies)]
    stepper = make_stepper(gravity_scene(far, boundaries))
    kin, system = stepper.setup.kin, stepper.system
    q = np.zeros(3 * len(bodies))
    for k, body in enumerate(bodies):
        q[3 * k : 3 * k + 2] = body["position"]
    v = np.zeros_like(q)
    a = np.zeros_like(q)
    for k in range(len(bodies)):
        v[3 * k : 3 * k + 2] = velocities[k]
        a[3 * k + 1] = -G_ACC + (extra if k == 1 else 0.0)
    gaps = GapSet(kin, kin.candidates(q, 100.0, np.arange(system.n_disks)))
    clear = flight_clear(gaps, q, v, a, T)
    event("clear" if clear else "not proved")
    if not clear:
        return
    tau = np.linspace(0.0, T, SAMPLES)[:, None]
    centres = [
        q[3 * k : 3 * k + 2] + tau * (v[3 * k : 3 * k + 2] + 0.5 * tau * a[3 * k : 3 * k + 2])
        for k in range(len(bodies))
    ]
    assert_wheels_clear(bodies, boundaries, centres)


def ball_over_floor(height):
    """A ball (r = 0.1 m) with its lowest point ``height`` (m) above a 2 m floor; its gaps."""
    ball = uniform_wheel("ball", 0.1, 0.0, 0.1 + height)
    floor = {"id": "floor", "type": "segment", "a": [-1.0, 0.0], "b": [1.0, 0.0]}
    stepper = make_stepper(gravity_scene([ball], [floor]))
    kin, system = stepper.setup.kin, stepper.system
    gaps = GapSet(kin, kin.candidates(system.q0, 100.0, np.arange(system.n_disks)))
    return np.array(system.q0, dtype=float), gaps


@pytest.mark.parametrize("u", [0.1, 1.0, 4.43])
def test_a_bounce_to_its_landing_is_proved_and_a_hair_beyond_is_not(u):
    """A ball leaving the floor at ``u`` (m/s) lands at ``τ = 2u/g``: clear up to there.

    Its gap ``u τ − ½ g τ²`` is 0 at both ends. Past the landing by 1 µs it
    is ``−u·1e-6 m`` (well below ``−PENETRATION_TOL``): not proved.
    """
    q, gaps = ball_over_floor(0.0)
    v = np.array([0.0, u, 0.0])
    a = np.array([0.0, -G_ACC, 0.0])
    landing = 2.0 * u / G_ACC
    assert flight_clear(gaps, q, v, a, landing)
    assert not flight_clear(gaps, q, v, a, landing + 1e-6)


def test_a_fall_that_ends_a_nanometre_short_of_the_floor_is_proved_and_one_through_it_is_not():
    """Dropped from 1 m, the ball's lowest point is at ``1 − ½ g τ²`` (m)."""
    q, gaps = ball_over_floor(1.0)
    v = np.zeros(3)
    a = np.array([0.0, -G_ACC, 0.0])
    assert flight_clear(gaps, q, v, a, math.sqrt(2.0 * (1.0 - 1e-8) / G_ACC))
    assert not flight_clear(gaps, q, v, a, math.sqrt(2.0 * (1.0 + 1e-8) / G_ACC))


def corners_and_arc_points(boundaries):
    """Polyline corners and points on arcs (m) of drawn ground: where a gap is not a quadratic."""
    points = []
    for b in boundaries:
        if b["type"] == "polyline":
            points += b["points"][1:-1] or b["points"]
        elif b["type"] == "arc":
            (cx, cy), r = b["center"], b["radius"]
            for deg in (b["start_deg"], 0.5 * (b["start_deg"] + b["end_deg"]), b["end_deg"]):
                points.append(
                    [cx + r * math.cos(math.radians(deg)), cy + r * math.sin(math.radians(deg))]
                )
    return points


@given(
    boundaries=ground(),
    radius=st.floats(0.04, 0.15),
    pick=st.integers(0, 100),
    angle=st.floats(15.0, 165.0),
    distance=st.floats(1e-4, 0.3),
    speed=st.floats(0.0, 6.0),
    swerve=st.tuples(st.floats(-2.0, 2.0), st.floats(-2.0, 2.0)),
    T=st.floats(1e-3, 0.5),
)
def test_a_flight_scan_without_the_rows_proved_clear_finds_the_same_event(
    boundaries, radius, pick, angle, distance, speed, swerve, T
):
    """Leaving out of a free flight's scan the gaps proved to stay above ``GAP_TOL`` changes
    nothing: the first event (time to the bit, pair) is the one the full scan finds.

    A wheel thrown at a corner or an arc of drawn ground from above, so that
    the gaps that are not quadratics in time (those the scan samples) close.
    """
    points = corners_and_arc_points(boundaries)
    target = np.array(points[pick % len(points)], dtype=float)
    out = np.array([math.cos(math.radians(angle)), math.sin(math.radians(angle))])
    stepper = make_stepper(gravity_scene([uniform_wheel("w", radius, 5.0, 5.0)], boundaries))
    kin, system = stepper.setup.kin, stepper.system
    q, v = np.zeros(3), np.zeros(3)
    q[:2] = target + (radius + distance) * out
    v[:2] = -speed * out + np.array(swerve)
    a = np.array(stepper.setup.gravity) * stepper.setup.M_inv
    gaps = GapSet(kin, kin.candidates(q, 100.0, np.arange(system.n_disks)))
    flight = Parabola(0.0, q, v, a, np.zeros(3), np.zeros(2))
    piece = Piece(0.0, T, flight.state, flight.states)
    found = {}
    for label, prune in (("pruned", True), ("full", False)):
        stepper.locator._unresolved = None
        with pytest.MonkeyPatch.context() as patch:
            if not prune:
                patch.setattr(
                    event_location, "clear_rows", lambda gaps, rows, *_: [False] * len(rows)
                )
            try:
                e = stepper.locator.flight_scan(piece, gaps, a)
                found[label] = None if e is None else (e.t, e.kind, e.key)
            except SolverError as error:
                found[label] = str(error)
    full = found["full"]
    kinds = {pair.key: type(pair.feature).__name__ for pair in gaps.pairs}
    event("none" if full is None else "error" if isinstance(full, str) else kinds[full[2]])
    assert found["pruned"] == found["full"]
