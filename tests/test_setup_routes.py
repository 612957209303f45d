"""A small scene's setup takes float routes; each gives what the array route gives, to the bit.

System's disk layout and weights of a few disks come from lists, and the
candidate pairs of a lone disk are listed in floats: numpy calls on 1-3
element arrays cost more than the arithmetic. Each route is compared here
with the general one it stands for, and the weights with ``m g``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.contact_pairs import junction_neighbours
from solver.errors import InputError
from solver.event_tolerances import JUNCTION_TOL
from solver.geometry import Arc, Segment, Vertex
from solver.scene import parse_scene
from solver.simulation import make_stepper
from solver.system import System
from tests.scene_data import G_ACC, gravity_scene, uniform_wheel
from tests.test_broadphase import feature_lists, margin
from tests.test_drawn_geometry import ground

LAYOUT = ("_centre_index", "_beads", "_weight")
"""The attributes System's two disk-layout routes set."""

signed = st.sampled_from([0.0, -0.0, 1.0, -9.81]) | st.floats(-1e3, 1e3)
masses = st.sampled_from([1.0, 0.3, 7.0]) | st.floats(1e-3, 1e3)


@st.composite
def small_scenes(draw):
    """0-5 wheels and beads in any order, any masses and gravity (signed zeros)."""
    bodies = []
    for k, kind in enumerate(draw(st.lists(st.sampled_from(["wheel", "bead"]), max_size=5))):
        mass = draw(masses)
        if kind == "wheel":
            bodies.append(
                {"id": f"w{k}", "type": "wheel", "mass": mass, "inertia": draw(masses),
                 "radius": 0.1, "position": [3.0 * k, 1.0]}
            )  # fmt: skip
        else:
            bodies.append(
                {"id": f"b{k}", "type": "bead", "rail_y": draw(signed), "mass": mass,
                 "radius": 0.1, "x": 3.0 * k}
            )  # fmt: skip
    gravity = list(draw(st.tuples(signed, signed)))
    return parse_scene(
        {"format": "impactgui-scene", "version": 1, "gravity": gravity, "bodies": bodies}
    )


@given(small_scenes())
def test_the_layout_of_a_few_disks_is_the_arrays(scene):
    """_few_disk_layout (lists) sets the arrays _array_disk_layout sets: values, dtypes, shapes."""
    system = System(scene)
    assert system.n_disks <= 16
    floats = {name: getattr(system, name) for name in LAYOUT}
    system._array_disk_layout()
    for name in LAYOUT:
        made, expected = floats[name], getattr(system, name)
        assert made.dtype == expected.dtype, name
        assert made.shape == expected.shape, name
        assert made.tobytes() == expected.tobytes(), name
    if system.n_disks == 1:  # a lone disk's weights in floats: the arrays' entries
        weight_x, ix, weight_y, iy = system._one_disk_weight
        assert (bits(weight_x), ix) == (bits(system._weight_x[0]), system._ix[0])
        if len(system._wheel_iy):
            assert (bits(weight_y), iy) == (bits(system._wheel_weight_y[0]), system._wheel_iy[0])
        else:
            assert (weight_y, iy) == (0.0, -1)


def test_weights_are_m_g():
    """A 2 kg wheel and a 3 kg bead under (1, −9.81) m/s²: m g on x of both, on y of the wheel."""
    scene = parse_scene(
        {"format": "impactgui-scene", "version": 1, "gravity": [1.0, -G_ACC],
         "bodies": [
             {"id": "w", "type": "wheel", "mass": 2.0, "inertia": 0.1, "radius": 0.1,
              "position": [0.0, 1.0]},
             {"id": "b", "type": "bead", "rail_y": 0.5, "mass": 3.0, "radius": 0.1, "x": 1.0},
         ]}
    )  # fmt: skip
    system = System(scene)
    # coordinates: wheel (x, y, phi), bead x
    assert system.applied_force(0.0, system.q0, system.v0).tolist() == [2.0, -2.0 * G_ACC, 0.0, 3.0]
    assert system.centres(system.q0).tolist() == [[0.0, 1.0], [1.0, 0.5]]
    assert system._beads.tolist() == [1]


def bits(value) -> bytes:
    return np.asarray(value, dtype=float).tobytes()


def lone_disk_stepper(boundaries):
    return make_stepper(gravity_scene([uniform_wheel("ball", 0.1, 0.3, 0.7)], boundaries))


@given(boundaries=ground(), m=margin | st.sampled_from([0.0, 100.0]), x=signed, y=signed)
def test_a_lone_disk_s_candidates_are_the_searched_rows(boundaries, m, x, y):
    """The float-listed pairs of one disk are those of the array search, in order, as arrays."""
    kin = lone_disk_stepper(boundaries).setup.kin
    q = np.array([x, y, 0.0])
    for disks in (np.arange(1), np.zeros(0, dtype=int)):
        floats = kin.candidates(q, m, disks)
        arrays = kin._searched_candidates(kin.system.centres(q), m, disks)
        for name in ("first", "second", "feature", "order"):
            made, expected = getattr(floats, name), getattr(arrays, name)
            assert made.dtype == expected.dtype and made.shape == expected.shape, name
            assert made.tobytes() == expected.tobytes(), name


@given(feats=feature_lists, m=margin, x=signed, y=signed, r=st.floats(0.0, 2.0))
def test_query_floats_lists_the_query_s_pairs(feats, m, x, y, r):
    """StaticIndex.query_floats gives query's pairs (every box or the grid) as a list."""
    from solver.broadphase import StaticIndex

    index = StaticIndex(feats)
    expected = [tuple(p) for p in index.query([[x, y]], [r], m).pairs.tolist()]
    assert index.query_floats([x], [y], [r + m]) == expected


def test_the_ball_s_candidates_are_its_ground_and_near_end():
    """A ball at (0.95, 0.05) within 0.05 m: the ground (0) and its end (1, 0) (2), not (−1, 0)."""
    stepper = lone_disk_stepper(
        [{"id": "ground", "type": "segment", "a": [-1.0, 0.0], "b": [1.0, 0.0]}]
    )
    rows = stepper.setup.kin.candidates(np.array([0.95, 0.05, 0.0]), 0.05, np.arange(1))
    assert [pair.key for pair in rows] == [("ball", "ground"), ("ball", "ground#v1")]


@pytest.mark.parametrize("x, m", [(float("nan"), 0.1), (0.0, float("inf")), (0.0, -1.0)])
def test_a_lone_disk_s_bad_search_is_named(x, m):
    """A centre or margin that is not finite (or a negative margin): the search's message."""
    stepper = lone_disk_stepper(
        [{"id": "ground", "type": "segment", "a": [-1.0, 0.0], "b": [1.0, 0.0]}]
    )
    with pytest.raises(InputError, match=r"`centres`|`margin`"):
        stepper.setup.kin.candidates(np.array([x, 0.5, 0.0]), m, np.arange(1))


def junctions_by_distance(features):
    """DiskKinematics' junctions measured the long way: every end's np.hypot distance."""
    ends = []
    for f in features:
        if isinstance(f, Segment):
            ends += [(f, *f.a), (f, *f.b)]
        elif isinstance(f, Arc) and not f.is_full_circle:
            ends += [(f, *f.point_at(f.start).tolist()), (f, *f.point_at(f.end).tolist())]
    found = []
    for f in features:
        if not isinstance(f, Vertex):
            found.append(())
            continue
        px, py = f.p
        near = [g for g, x, y in ends if float(np.hypot(x - px, y - py)) <= JUNCTION_TOL]
        found.append(tuple(dict.fromkeys(near)))
    return found


offsets = st.sampled_from([0.0, -0.0, 5e-13, -7e-13, 1e-12, -1e-12, 1.0000001e-12, 3e-12, 0.1])


@given(
    ends=st.lists(st.tuples(signed, signed, signed, signed), min_size=1, max_size=3),
    shifts=st.lists(st.tuples(st.integers(0, 5), offsets, offsets), max_size=6),
    arc=st.booleans(),
)
def test_junctions_skip_only_far_ends(ends, shifts, arc):
    """junction_neighbours (far ends left unmeasured) finds what every distance finds.

    Vertices at segment and arc ends moved by about JUNCTION_TOL (1e-12 m)
    along each axis: in, on and just past the tolerance.
    """
    features = [
        Segment((ax, ay), (bx, by)) for ax, ay, bx, by in ends if abs(ax - bx) + abs(ay - by) > 1e-9
    ]
    if arc:
        features.append(Arc((0.0, 0.0), 1.0, 0.0, 1.0))
    points = [p for f in features for p in ((f.a, f.b) if isinstance(f, Segment) else ())]
    if arc:
        points += [tuple(features[-1].point_at(0.0).tolist())]
    for k, dx, dy in shifts:
        if points:
            x, y = points[k % len(points)]
            features.append(Vertex((x + dx, y + dy)))
    assert junction_neighbours(features) == junctions_by_distance(features)


def test_a_segment_s_ends_hold_its_vertices():
    """The ground's ends (−1, 0) and (1, 0): each vertex there has the ground as its neighbour."""
    ground_ = Segment((-1.0, 0.0), (1.0, 0.0))
    features = [ground_, Vertex((-1.0, 0.0)), Vertex((1.0, 1e-12)), Vertex((1.0, 2e-12))]
    assert junction_neighbours(features) == [(), (ground_,), (ground_,), ()]
