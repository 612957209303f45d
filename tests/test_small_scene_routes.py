"""Small scenes take float routes; each gives what the array route gives, to the bit.

A scene of one ball and a segment is set up and searched in Python floats —
the broad phase tests every box of a few features, a few candidate pairs
are read as float rows — where numpy calls on 2-3 element arrays would
cost more than the arithmetic. Each route here is compared with the
general one it stands for.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from solver.broadphase import StaticIndex, _disk_columns
from solver.gap_set import FEW_PAIRS, GapSet, row_dots
from solver.geometry import Arc
from solver.simulation import make_stepper
from tests.scene_data import gravity_scene, uniform_wheel
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
def test_float_rows_of_a_few_pairs_are_the_array_rows(boundaries, wheels, beads):
    """GapSet's float rows (made from the pairs' indices) hold the numbers of its arrays.

    Drawn ground (segments, corners hidden by segments and arcs), wheels and
    beads on one rail (ordered disk pairs): each row's numbers are the
    arrays' entries, signs of zeros included.
    """
    assume(wheels or beads)
    bodies = [uniform_wheel(f"w{k}", r, 5.0 * k, 5.0) for k, r in enumerate(wheels)]
    bodies += [
        {"id": f"b{k}", "type": "bead", "rail_y": 0.3, "mass": 1.0, "radius": 0.05,
         "x": 3.0 * k - 9.0}
        for k in range(beads)
    ]  # fmt: skip
    stepper = make_stepper(gravity_scene(bodies, boundaries))
    kin, system = stepper._kin, stepper.system
    pairs = kin.candidates(system.q0, 100.0, np.arange(system.n_disks))
    floats = GapSet(kin, pairs)
    arrays = GapSet(kin, pairs)
    assume(len(floats) <= FEW_PAIRS)
    disk_rows = floats.few_disk_rows
    segment_rows = floats.few_segment_rows
    vertex_rows = floats.few_vertex_rows
    cover_rows = floats.few_cover_rows
    assert "disk_rows" not in floats.__dict__  # no array was made for the float rows

    assert [n for n, *_ in disk_rows] == arrays.disk_rows.tolist()
    assert [(i, j) for _, i, j, _, _ in disk_rows] == list(
        zip(arrays.I.tolist(), arrays.J.tolist(), strict=True)
    )
    assert bits([r[3] for r in disk_rows]) == bits(arrays.rsum)
    assert bits([r[4] for r in disk_rows]) == bits(arrays.order)
    assert floats.ordered == arrays.ordered

    assert [r[:2] for r in segment_rows] == list(
        zip(arrays.segment_rows.tolist(), arrays.seg_disks.tolist(), strict=True)
    )
    assert bits([r[2:4] for r in segment_rows]) == bits(arrays.seg_a)
    assert bits([r[4:6] for r in segment_rows]) == bits(arrays.seg_e)
    assert bits([r[6] for r in segment_rows]) == bits(row_dots(arrays.seg_e, arrays.seg_e))
    assert bits([r[7:9] for r in segment_rows]) == bits(arrays.seg_normal)
    assert bits([r[9] for r in segment_rows]) == bits(arrays.seg_radii)

    assert [r[:2] for r in vertex_rows] == list(
        zip(arrays.vertex_rows.tolist(), arrays.vertex_disks.tolist(), strict=True)
    )
    assert bits([r[2:4] for r in vertex_rows]) == bits(arrays.vertex_p)
    assert bits([r[4] for r in vertex_rows]) == bits(arrays.vertex_radii)

    assert [r[:2] for r in cover_rows] == list(
        zip(arrays.cover_rows.tolist(), arrays.cover_disks.tolist(), strict=True)
    )
    assert bits([r[2:4] for r in cover_rows]) == bits(arrays.cover_a)
    assert bits([r[4:6] for r in cover_rows]) == bits(arrays.cover_e)
    assert bits([r[6] for r in cover_rows]) == bits(arrays.cover_len2)
    assert bits([r[7] for r in cover_rows]) == bits(arrays.cover_len)

    assert floats.arc_rows == np.nonzero(arrays._kind == 2)[0].tolist()
    covering = arrays._covering
    assert [(m, f) for m, f in floats.cover_arcs] == [
        (m, f) for m, f in covering if isinstance(f, Arc)
    ]


def test_the_normal_of_a_segment_row_is_a_unit_left_normal():
    """A segment row's normal (−e_y, e_x)/|e| in floats: one for the ball's ground (1 m long)."""
    stepper = make_stepper(
        gravity_scene(
            [uniform_wheel("ball", 0.1, 0.0, 1.1)],
            [{"id": "ground", "type": "segment", "a": [-1.0, 0.0], "b": [1.0, 0.0]}],
        )
    )
    kin = stepper._kin
    gaps = GapSet(kin, kin.candidates(stepper.system.q0, 10.0, np.arange(1)))
    ((n, k, ax, ay, ex, ey, length2, nx, ny, r),) = gaps.few_segment_rows
    assert (n, k, ax, ay, ex, ey, length2, r) == (0, 0, -1.0, 0.0, 2.0, 0.0, 4.0, 0.1)
    assert (nx, ny) == (-0.0, 1.0) and math.copysign(1.0, nx) == -1.0
