"""The routes of a run's setup and first steps: the same bits as the routes they replace.

- A frame of the stepper's current state is built from its positions,
  velocities and work as they are (:meth:`solver.output_frames.Recorder._current_frame`)
  rather than from the row joining them (``_frame`` of ``_y()``).
- The box of a lone disk that bounds the broad-phase margin
  (:func:`solver.candidates.disk_box`) is made in floats rather than from its
  columns' minima and maxima.
- The watched pairs of a phase with active contacts
  (:meth:`solver.gap_set.GapSet.subset`) take the float rows their parent
  set has made rather than making them again.
- A point given as a tuple of two finite floats
  (:func:`solver.geometry._point`) is taken as it is.

Each route is compared here with the one it replaces on random inputs, by
its bytes (signs of zero included).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from solver.candidates import disk_box
from solver.errors import InputError
from solver.gap_set import GapSet
from solver.geometry import _point
from solver.simulation import make_stepper
from tests.scene_data import wheels_and_beads_over
from tests.test_drawn_geometry import ground
from tests.test_settle_routes import ball_scene, bits, frame_bits

balls = st.builds(
    ball_scene,
    drop=st.floats(0.0, 1.0),
    restitution=st.sampled_from([0.0, 0.5, 0.9]),
    slope_deg=st.sampled_from([0.0, -0.0, 10.0]) | st.floats(-30.0, 30.0),
    friction=st.sampled_from([0.0, 0.3, 1.0]),
    t_end=st.just(1.5),
    dt_out=st.sampled_from([0.05, 0.3, 1.5]),
    corner=st.booleans(),
)


@settings(max_examples=25, deadline=None)
@given(balls)
def test_a_frame_of_the_current_state_is_the_frame_of_its_row(scene):
    """_current_frame gives _frame of _y(), at the start and after every step, and owns its rows."""
    stepper = make_stepper(scene)
    while True:
        made = stepper.recorder._current_frame(stepper.t, "sample")
        joined = stepper.recorder.frame(stepper.t, "sample", stepper.motion.y())
        assert frame_bits(made) == frame_bits(joined)
        assert not np.shares_memory(made.q, stepper.motion.q)
        assert not np.shares_memory(made.v, stepper.motion.v)
        if stepper.status != "running":
            break
        stepper.step()
    assert stepper.status == "finished", stepper.message


coordinates = st.sampled_from([0.0, -0.0, 5e-324]) | st.floats(-1e300, 1e300)


@given(coordinates, coordinates, st.sampled_from([0.0, 0.1]) | st.floats(0.0, 1e300))
def test_a_lone_disk_s_box_is_the_columns_box(x, y, radius):
    """disk_box of one centre (floats) gives the columns' min/max ∓ radius (arrays), to the bit."""
    centres = np.array([[x, y]])
    lo, hi = (centres.min(axis=0) - radius).tolist(), (centres.max(axis=0) + radius).tolist()
    assert bits(disk_box(centres, radius)) == bits(lo + hi)


@given(st.lists(st.tuples(coordinates, coordinates), min_size=2, max_size=6), st.floats(0.0, 1.0))
def test_a_box_of_disks_holds_every_disk(centres, radius):
    """Every centre lies in disk_box's box at least ``radius`` from its sides."""
    lx, ly, hx, hy = disk_box(np.array(centres), radius)
    for x, y in centres:
        assert lx <= x - radius and x + radius <= hx and ly <= y - radius and y + radius <= hy


FEW_ROWS = ("arc_rows", "cover_arcs")
"""The rows a GapSet's subset is compared on with a new set of its pairs."""


def rows_bits(rows):
    """Float rows as values, a float by its bytes (signs of zero and NaNs included)."""
    if isinstance(rows, float):
        return bits(rows)
    if isinstance(rows, (list, tuple)):
        return [rows_bits(row) for row in rows]
    return rows


@settings(deadline=None)
@given(
    boundaries=ground(),
    n_wheels=st.integers(0, 2),
    n_beads=st.integers(0, 2),
    data=st.data(),
)
def test_a_subset_s_rows_are_the_rows_of_its_pairs(boundaries, n_wheels, n_beads, data):
    """GapSet.subset's arc rows and corner-covering arcs are a new set's, to the bit."""
    assume(n_wheels or n_beads)
    _, gaps = wheels_and_beads_over(boundaries, [0.04 + 0.05 * k for k in range(n_wheels)], n_beads)
    rows = sorted(data.draw(st.sets(st.integers(0, len(gaps) - 1), min_size=1)))
    part = gaps.subset(rows)
    fresh = GapSet(gaps.kin, gaps.pairs.select(np.array(rows)))
    assert part.pairs == fresh.pairs and len(part) == len(fresh) == len(rows)
    for name in FEW_ROWS:
        assert rows_bits(getattr(part, name)) == rows_bits(getattr(fresh, name)), name


any_float = st.floats() | st.sampled_from([0.0, -0.0, 5e-324, math.inf, -math.inf, math.nan])


@given(any_float, any_float)
def test_a_tuple_of_floats_is_the_point_of_its_array(x, y):
    """_point of a tuple of two floats (its own route) gives what a list or array gives."""
    for value in ((x, y), [x, y], np.array([x, y])):
        if math.isfinite(x) and math.isfinite(y):
            point = _point(value, "a")
            assert type(point) is tuple and [type(p) for p in point] == [float, float]
            assert bits(point) == bits([x, y])
        else:
            with pytest.raises(InputError, match="`a` must be two finite numbers"):
                _point(value, "a")


def test_other_points_take_the_array_route():
    """numpy floats and ints are read as plain floats; other shapes are refused."""
    assert _point((np.float64(1.5), 2), "p") == (1.5, 2.0)
    assert type(_point((np.float64(1.5), 2), "p")[0]) is float
    for bad in ((1.0,), (1.0, 2.0, 3.0), ((1.0, 2.0), (3.0, 4.0))):
        with pytest.raises(InputError, match="`p` must be two finite numbers"):
            _point(bad, "p")


@settings(deadline=None)
@given(
    boundaries=ground(),
    n_wheels=st.integers(0, 2),
    n_beads=st.integers(0, 2),
    duplicate=st.booleans(),
    data=st.data(),
)
def test_every_pair_in_any_order_is_complete_and_a_duplicate_is_not(
    boundaries, n_wheels, n_beads, duplicate, data
):
    """CandidateSearch.pairs_complete: every pair of the scene in any order is complete.

    With one pair written twice in place of another it is not (the count
    alone would say it is).
    """
    assume(n_wheels or n_beads)
    stepper, gaps = wheels_and_beads_over(boundaries, [0.05] * n_wheels, n_beads)
    rows = list(data.draw(st.permutations(range(len(gaps)))))
    if duplicate and len(rows) > 1:
        rows[data.draw(st.integers(1, len(rows) - 1))] = rows[0]
    pairs = gaps.pairs.select(np.array(rows, dtype=int))
    stepper.pairs._pair_set = GapSet(gaps.kin, pairs)
    n = stepper.system.n_disks
    assert len(rows) == n * len(stepper.setup.kin.feature_list) + n * (n - 1) // 2
    assert stepper.pairs.pairs_complete() == (not duplicate or len(rows) == 1)
