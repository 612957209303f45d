"""GapSet's gaps and normal speeds, one compiled loop for every size: the array route's bits.

The event scan evaluates the watched gaps and their normal speeds at every
sub-point; one compiled loop (:func:`solver.gap_kernel.gap_values`) serves a
ball's three pairs and a chain's thousands. Each case here compares it with
the array route it replaced (kept in ``tests/gap_arrays.py``), signs of
zeros, infinities and NaNs included.
"""

from __future__ import annotations

import math
from pathlib import Path
from unittest.mock import patch

import numpy as np
from hypothesis import assume, event, given
from hypothesis import strategies as st

from solver.contact_pairs import continued_nearest
from solver.errors import SolverError
from solver.event_tolerances import REGION_TOL
from solver.gap_set import GapSet, values_many
from solver.geometry import Arc
from solver.record import Trajectory
from solver.scene import load_scene
from solver.simulation import make_stepper
from tests.gap_arrays import reference_values
from tests.scene_data import gravity_scene, uniform_wheel, wheels_and_beads_over
from tests.test_drawn_geometry import ground

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"

speed = st.one_of(
    st.sampled_from([0.0, -0.0, 1e-300, -5e-324, 1.0, -3.0]),
    st.floats(-20.0, 20.0, allow_nan=False),
)


def array_values(gaps: GapSet, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(g, u_n)`` of every pair through the array route, whatever the number of pairs."""
    system = gaps.kin.system
    return reference_values(gaps, system.centres(q), system.centre_velocities(v))


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.tobytes() == b.tobytes()


@st.composite
def placed(draw, kin, points: list[tuple[float, float]]):
    """A centre for a disk: anywhere near the ground, on a vertex, on a segment or beyond it."""
    where = draw(st.sampled_from(["free", "vertex", "segment", "zero"]))
    if where == "free" or not points:
        return draw(st.floats(-1.6, 1.6)), draw(st.floats(-0.4, 0.9))
    if where == "zero":
        return draw(st.sampled_from([0.0, -0.0])), draw(st.sampled_from([0.0, -0.0]))
    if where == "vertex":
        return draw(st.sampled_from(points))
    (ax, ay), (bx, by) = draw(st.sampled_from(points)), draw(st.sampled_from(points))
    s = draw(st.sampled_from([0.0, 0.5, 1.0, -1e-9, 1.0 + 1e-9]) | st.floats(-0.2, 1.2))
    return ax + s * (bx - ax), ay + s * (by - ay)


@given(
    boundaries=ground(),
    n_wheels=st.integers(0, 3),
    n_beads=st.integers(0, 4),
    data=st.data(),
)
def test_the_compiled_values_are_the_array_values(boundaries, n_wheels, n_beads, data):
    """Wheels and beads (on one rail: ordered pairs, passed or not) over drawn ground.

    Sets of a few pairs and of more than 16; centres anywhere, on a corner (a
    zero distance: the speed ±inf or NaN, as numpy divides), on a face or just
    beyond its ends, at signed zeros; the corners hidden by their faces and
    arcs; velocities with signed zeros. ``values``, and ``gaps`` with and
    without the region band and bare corners.
    """
    assume(n_wheels or n_beads)
    radii = [0.04 + 0.05 * k for k in range(n_wheels)]
    stepper, gaps = wheels_and_beads_over(boundaries, radii, n_beads)
    kin, system = stepper.setup.kin, stepper.system
    event("few" if len(gaps) <= 16 else "many")
    points = [tuple(p) for p in kin.feature_point.tolist() if not math.isnan(p[0])]
    q, v = np.array(system.q0, dtype=float), np.zeros(system.N)
    for k in range(n_wheels):
        q[3 * k : 3 * k + 2] = data.draw(placed(kin, points))
        v[3 * k : 3 * k + 3] = [data.draw(speed) for _ in range(3)]
    for k in range(n_beads):
        q[3 * n_wheels + k] = data.draw(placed(kin, points))[0]
        v[3 * n_wheels + k] = data.draw(speed)
    g, u_n = gaps.values(q, v)
    g_ref, u_ref = array_values(gaps, q, v)
    assert same_bits(g, g_ref), (g, g_ref)
    assert same_bits(u_n, u_ref), (u_n, u_ref)
    c = system.centres(q)
    for band, bare in ((False, False), (True, False), (False, True), (True, True)):
        g_ref, _ = reference_values(gaps, c, None, REGION_TOL if band else 0.0, bare)
        assert same_bits(gaps.gaps(q, band=band, bare=bare), g_ref), (band, bare)


@given(
    boundaries=ground(),
    n_wheels=st.integers(0, 2),
    n_beads=st.integers(0, 2),
    n_rows=st.integers(1, 4),
    data=st.data(),
)
def test_values_of_many_states_are_the_values_of_each(boundaries, n_wheels, n_beads, n_rows, data):
    """gap_set.values_many: row k is GapSet.values at state k, bit for bit.

    A few pairs and more than 16; the
    centres and velocities drawn as above; a set with arcs answers None.
    """
    assume(n_wheels or n_beads)
    radii = [0.04 + 0.05 * k for k in range(n_wheels)]
    stepper, gaps = wheels_and_beads_over(boundaries, radii, n_beads)
    kin, system = stepper.setup.kin, stepper.system
    points = [tuple(p) for p in kin.feature_point.tolist() if not math.isnan(p[0])]
    Q, V = np.tile(np.array(system.q0, dtype=float), (n_rows, 1)), np.zeros((n_rows, system.N))
    for row in range(n_rows):
        for k in range(n_wheels):
            Q[row, 3 * k : 3 * k + 2] = data.draw(placed(kin, points))
            V[row, 3 * k : 3 * k + 3] = [data.draw(speed) for _ in range(3)]
        for k in range(n_beads):
            Q[row, 3 * n_wheels + k] = data.draw(placed(kin, points))[0]
            V[row, 3 * n_wheels + k] = data.draw(speed)
    many = values_many(gaps, Q, V)
    with_arcs = any(isinstance(pair.feature, Arc) for pair in gaps.pairs) or any(
        isinstance(f, Arc) for pair in gaps.pairs if pair.j < 0 for f in pair.neighbours
    )
    event("arcs" if with_arcs else "few" if len(gaps) <= 16 else "many")
    if with_arcs:
        assert many is None
        return
    for row in range(n_rows):
        with np.errstate(invalid="ignore", divide="ignore"):
            g, u_n = gaps.values(Q[row], V[row])
        assert same_bits(many[0][row], g), (many[0][row], g)
        assert same_bits(many[1][row], u_n), (many[1][row], u_n)


def test_a_wheel_on_a_corner_has_numpy_s_speeds():
    """A wheel centred on a step's corner: its distance 0, the corner's speed 0/0 = NaN."""
    step = [{"id": "step", "type": "polyline", "points": [[-1.0, 0.0], [0.0, 0.0], [0.0, 0.1]]}]
    stepper = make_stepper(gravity_scene([uniform_wheel("w", 0.05, 0.5, 0.5)], step))
    kin, system = stepper.setup.kin, stepper.system
    gaps = GapSet(kin, kin.candidates(system.q0, 100.0, np.arange(1)))
    q = np.array([0.0, 0.0, 0.0])
    for v in ([0.0, 0.0, 0.0], [1.0, -2.0, 0.0]):
        g, u_n = gaps.values(q, np.array(v))
        g_ref, u_ref = array_values(gaps, q, np.array(v))
        assert same_bits(g, g_ref) and same_bits(u_n, u_ref)
        corner = int(np.nonzero(np.abs(g + 0.05) < 1e-15)[0][0])  # the corner's gap: −r
        assert math.isnan(u_n[corner])


@given(boundaries=ground(), data=st.data())
def test_a_pair_s_gap_and_speed_are_its_nearest_s(boundaries, data):
    """DiskKinematics.gap_and_speed of a wheel and each feature: the numbers of ``nearest``.

    Segments and corners answer in floats (no Nearest made), arcs and the
    ends beyond a segment through ``nearest`` or its continuation; each
    ``(g, u_n)`` is ``(d − r, n·ċ)`` of the feature's own ``nearest``.
    """
    stepper = make_stepper(gravity_scene([uniform_wheel("w", 0.07, 0.0, 5.0)], boundaries))
    kin = stepper.setup.kin
    points = [tuple(p) for p in kin.feature_point.tolist() if not math.isnan(p[0])]
    q = np.array([*data.draw(placed(kin, points)), 0.0])
    v = np.array([data.draw(speed) for _ in range(3)])
    c, cd = q[:2], v[:2]
    for pair in kin.candidates(q, 100.0, np.arange(1)):
        near = pair.feature.nearest(c)
        if near is None:
            try:
                near = continued_nearest(pair.feature, c)
            except SolverError:
                continue  # a centre on a corner or an arc's centre: no normal
        g, u_n = kin.gap_and_speed(pair, q, v)
        assert same_bits(np.array([g, u_n]), np.array([near.d - 0.07, near.n.dot(cd)]))


def drive(scene_file: str) -> Trajectory:
    stepper = make_stepper(load_scene(SCENES / scene_file), t_end=1.0, dt_out=0.05)
    trajectory = Trajectory(stepper.system)
    while stepper.status == "running":
        trajectory.append(stepper.step())
    return trajectory


def reference_of_one_state(gaps, C, CD, band=False, bare=False):
    """GapSet._values through the array route (``C``, ``CD`` of one state)."""
    return reference_values(
        gaps, C[0], None if CD is None else CD[0], REGION_TOL if band else 0.0, bare
    )


def test_the_wheel_runs_are_the_runs_of_the_array_route():
    """Paper 004's wheel (e = 0 and 0.3), 1 s, gaps and values through arrays: the same frames."""
    for scene_file in ("wheel_curb_e0.json", "wheel_curb_e03.json"):
        compiled = drive(scene_file)
        with patch.object(GapSet, "_values", reference_of_one_state):
            arrays = drive(scene_file)
        assert len(compiled.frames) == len(arrays.frames) > 20
        for a, b in zip(compiled.frames, arrays.frames, strict=True):
            assert a.t == b.t and same_bits(a.q, b.q) and same_bits(a.v, b.v)
