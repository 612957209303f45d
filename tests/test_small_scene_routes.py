"""Small scenes take float routes; each gives what the array route gives, to the bit.

A scene of one ball and a segment is set up and searched in Python floats —
the broad phase tests every box of a few features, a few candidate pairs
are read as float rows — where numpy calls on 2-3 element arrays would
cost more than the arithmetic. Each route here is compared with the
general one it stands for.
"""

from __future__ import annotations

import itertools
import math
from unittest.mock import patch

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from solver.broadphase import StaticIndex, _disk_columns
from solver.contact_pairs import SEGMENT
from solver.frames import EnergyBudget, Frame, StepOutput
from solver.gap_set import GapSet
from solver.record import FEW_FRAMES, Trajectory
from solver.scene import parse_scene
from solver.simulation import make_stepper
from solver.system import System
from tests.scene_data import gravity_scene, uniform_wheel, wheels_and_beads_over
from tests.test_broadphase import brute_force_feature_pairs, disks, feature_lists, margin
from tests.test_drawn_geometry import ground


def bits(values) -> bytes:
    return np.asarray(values, dtype=float).tobytes()


@given(disks(), margin, feature_lists, st.sampled_from([None, 0.05, 0.7, 20.0]))
def test_every_box_and_the_grid_find_the_same_pairs(disk_set, m, feats, cell):
    """Both routes of StaticIndex.query: the brute-force pairs, sorted, at any feature count."""
    centres, radii = disk_set
    index = StaticIndex(feats, cell=cell)
    columns = _disk_columns(centres, radii, m)
    every = index._query_every_box(*columns)
    grid = index._query_grid(*columns)
    expected = brute_force_feature_pairs(centres, radii, m, feats)
    assert [tuple(p) for p in every.pairs.tolist()] == expected
    assert [tuple(p) for p in grid.pairs.tolist()] == expected
    assert every.pairs.dtype == grid.pairs.dtype == np.intp
    assert every.pairs.shape == grid.pairs.shape == (len(expected), 2)
    assert grid.checks <= every.checks == len(centres) * len(feats)


def test_a_few_features_skip_the_grid():
    """One ball over a segment and its two ends: no cells are made."""
    stepper = make_stepper(
        gravity_scene(
            [uniform_wheel("ball", 0.1, 0.0, 1.1)],
            [{"id": "ground", "type": "segment", "a": [-1.0, 0.0], "b": [1.0, 0.0]}],
        )
    )
    stepper.step()
    index = stepper.system._static_index
    assert "_grid" not in index.__dict__
    # the ground, then its end (1, 0) (#v1): the box of (-1, 0) is 1.85 m away
    assert index.query([[0.95, 0.05]], [0.1], 0.0).pairs.tolist() == [[0, 0], [0, 2]]


@given(
    boundaries=ground(),
    wheels=st.lists(st.floats(0.04, 0.15), min_size=0, max_size=2),
    beads=st.integers(0, 2),
)
def test_hulls_from_the_pairs_indices_are_the_pairs_features(boundaries, wheels, beads):
    """The hull table's row of each pair's feature holds the ContactPair's feature.

    Segments by their end points, corners by their point, arcs by their centre
    and radius ``R`` (NaN for the other kinds).
    """
    assume(wheels or beads)
    stepper, gaps = wheels_and_beads_over(boundaries, wheels, beads)
    table = stepper.setup.kin.hull_table
    for n, pair in enumerate(gaps.pairs):
        if pair.j >= 0:
            continue
        ax, ay, bx, by, R = table[gaps.pairs.feature[n]].tolist()
        feature = pair.feature
        if hasattr(feature, "b"):
            assert ((ax, ay), (bx, by)) == (feature.a, feature.b) and math.isnan(R)
        elif hasattr(feature, "p"):
            assert ((ax, ay), (bx, by)) == (feature.p, feature.p) and math.isnan(R)
        else:
            assert ((ax, ay), (bx, by)) == (tuple(feature.center), tuple(feature.center))
            assert R == feature.radius


def test_a_segment_row_holds_its_start_direction_and_length():
    """A segment's row of the gap tables: ``(a, b − a, |b − a|², |b − a|)`` of the ball's ground."""
    stepper = make_stepper(
        gravity_scene(
            [uniform_wheel("ball", 0.1, 0.0, 1.1)],
            [{"id": "ground", "type": "segment", "a": [-1.0, 0.0], "b": [1.0, 0.0]}],
        )
    )
    kin = stepper.setup.kin
    gaps = GapSet(kin, kin.candidates(stepper.system.q0, 10.0, np.arange(1)))
    f = int(gaps.pairs.feature[0])
    kinds, numbers, _, _ = kin.gap_tables
    assert kinds[f] == SEGMENT and gaps.second[0] == -1
    assert numbers[f].tolist() == [-1.0, 0.0, 2.0, 0.0, 4.0, 2.0]


signed = st.sampled_from([0.0, -0.0, 1.0, -1.0]) | st.floats(-1e3, 1e3)


@given(
    wheel=st.booleans(),
    gravity=st.tuples(signed, signed),
    mass=st.sampled_from([1.0, 0.3, 7.0]) | st.floats(1e-3, 1e3),
    q=st.tuples(signed, signed, signed),
)
def test_a_lone_disk_has_the_potential_energy_of_the_arrays(wheel, gravity, mass, q):
    """System.energy of one disk (floats) is the array sum's, signs of zero included."""
    body = (
        {"id": "d", "type": "wheel", "mass": mass, "inertia": 0.01, "radius": 0.1,
         "position": [0.0, 0.0]}
        if wheel
        else {"id": "d", "type": "bead", "rail_y": 0.0, "mass": mass, "radius": 0.1, "x": 0.0}
    )  # fmt: skip
    system = System(
        parse_scene(
            {"format": "impactgui-scene", "version": 1, "gravity": list(gravity),
             "bodies": [body]}
        )
    )  # fmt: skip
    assert system._one_disk_weight is not None
    state = np.array(q[: system.N], dtype=float)
    _, potential, _ = system.energy(state, np.zeros(system.N))
    assert bits(potential) == bits(system._potential_energy(state))


def test_the_ball_s_potential_energy_is_m_g_h():
    """1 kg at 1.1 m under g = 9.81 m/s²: 10.791 J, as the closed form rounds it."""
    stepper = make_stepper(
        gravity_scene(
            [uniform_wheel("ball", 0.1, 0.0, 1.1)],
            [{"id": "ground", "type": "segment", "a": [-1.0, 0.0], "b": [1.0, 0.0]}],
        )
    )
    system = stepper.system
    assert system.energy(system.q0, system.v0) == (0.0, 9.81 * 1.1, 0.0)


frame_numbers = st.sampled_from([0.0, -0.0, 1.0, 1e-300]) | st.floats(-1e6, 1e6)


@st.composite
def frame_lists(draw):
    """More frames than FEW_FRAMES, over a state of 1-4 coordinates."""
    n = draw(st.integers(1, 4))
    count = draw(st.integers(FEW_FRAMES + 1, 3 * FEW_FRAMES))
    frames = []
    for k in range(count):
        q = draw(st.lists(frame_numbers, min_size=n, max_size=n))
        v = draw(st.lists(frame_numbers, min_size=n, max_size=n))
        terms = draw(st.lists(frame_numbers, min_size=5, max_size=5))
        frames.append(Frame(0.1 * k, "sample", np.array(q), np.array(v), (), EnergyBudget(*terms)))
    return frames


@given(frame_lists(), st.lists(st.integers(1, FEW_FRAMES), min_size=1), st.sampled_from([2, 3]))
def test_frames_written_one_by_one_are_the_frames_written_as_arrays(frames, sizes, block_rows):
    """Trajectory's rows of a few frames (one by one) hold what a batch of frames writes.

    The same frames, appended in outputs of 1-8 frames or in one output, give
    the same times, states and energies, to the bit, across state blocks.
    """
    with patch("solver.record.STATE_BLOCK_ROWS", block_rows):
        by_rows, at_once = Trajectory(), Trajectory()
        at_once.append(StepOutput(frames=list(frames)))
        start = 0
        for size in itertools.cycle(sizes):
            if start >= len(frames):
                break
            by_rows.append(StepOutput(frames=frames[start : start + size]))
            start += size
    assert len(by_rows) == len(at_once) == len(frames)
    assert by_rows.times().tobytes() == at_once.times().tobytes()
    assert by_rows.states().tobytes() == at_once.states().tobytes()
    assert by_rows.energies().tobytes() == at_once.energies().tobytes()
    assert by_rows.frames == at_once.frames
    totals = [f.energy.kinetic + f.energy.potential + f.energy.spring for f in frames]
    assert bits(by_rows.energies()[:, 3]) == bits(totals)
