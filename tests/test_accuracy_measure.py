"""The time-stepper's penetration measure against a direct computation written here.

The measure (``accuracy`` rows) reads every output frame; it keeps near pairs
between frames, measures all frames of a step at once and computes again only
the pairs whose disks moved. Whatever it keeps, its answer must be the deepest
overlap of each frame as every pair, taken one by one with
:mod:`solver.geometry`, gives it: here random disks in a box with corners,
moved in batches of frames (some disks still, some far, some back where they
were), few (every pair looked at) and many (pairs searched and kept).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from solver.frames import EnergyBudget, Frame
from solver.scene import SceneError
from solver.system import System
from solver.timestep_accuracy import AccuracyMonitor
from tests.scene_data import gravity_scene, uniform_wheel

BOX = {
    "id": "box",
    "type": "polyline",
    "points": [[0.0, 2.0], [0.0, 0.0], [1.0, -0.2], [3.0, 0.0], [3.0, 2.0]],
}
ARC = {
    "id": "bowl",
    "type": "arc",
    "center": [1.5, 1.0],
    "radius": 0.4,
    "start_deg": 200,
    "end_deg": 340,
}


def _direct(system: System, q: np.ndarray) -> tuple[float, set[tuple[str, str]]]:
    """The deepest overlap (m, 0 for none) and the pairs within 1e-12 m of it, pair by pair."""
    c, radii = system.centres(q), system.radii
    gaps = []
    for a, b in itertools.combinations(range(system.n_disks), 2):
        d = math.hypot(c[a][0] - c[b][0], c[a][1] - c[b][1])
        if d > 0.0:
            gaps.append((d - radii[a] - radii[b], (system.disk_body_id(a), system.disk_body_id(b))))
    for k in range(system.n_disks):
        for feature_id, feature, _, _ in system.features:
            near = feature.nearest(c[k])
            if near is not None:
                gaps.append((near.d - radii[k], (system.disk_body_id(k), feature_id)))
    deepest = max((-gap for gap, _ in gaps), default=0.0)
    if deepest <= 0.0:
        return 0.0, set()
    return deepest, {pair for gap, pair in gaps if -gap >= deepest - 1e-12}


def _frame(t: float, q: np.ndarray) -> Frame:
    energy = EnergyBudget(kinetic=0.0, potential=0.0, spring=0.0, dissipated=0.0, input=0.0)
    return Frame(t=t, kind="sample", q=q.copy(), v=np.zeros_like(q), contacts=(), energy=energy)


disk = st.tuples(  # disk k on a grid of 0.6 m cells, nudged: apart at the start
    st.floats(0.05, 0.2),  # radius, m
    st.floats(-0.05, 0.05),  # nudges, m
    st.floats(-0.05, 0.05),
)
FEW, MANY = st.lists(disk, min_size=1, max_size=5), st.lists(disk, min_size=12, max_size=16)
"""Few disks: every pair looked at (``ALL_PAIRS``); many: pairs searched and kept."""
moves = st.lists(  # per frame: which disks move (by index modulo D) and by how much
    st.tuples(
        st.lists(st.integers(0, 15), max_size=6),
        st.floats(-0.5, 0.5) | st.floats(-0.05, 0.05),
        st.booleans(),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=80, deadline=None)
@given(disks=FEW | MANY, moves=moves, batch=st.integers(1, 4), arc=st.booleans())
def test_the_running_deepest_overlap_is_that_of_every_pair_one_by_one(disks, moves, batch, arc):
    bodies = [
        uniform_wheel(f"w{k}", r, 0.3 + 0.6 * (k % 5) + dx, 0.4 + 0.6 * (k // 5) + dy)
        for k, (r, dx, dy) in enumerate(disks)
    ]
    try:
        system = System(gravity_scene(bodies, [BOX, ARC] if arc else [BOX]))
    except SceneError:  # a disk on the bowl's arc at the start
        assume(False)
    accuracy = AccuracyMonitor(system)
    q = np.array(system.q0, dtype=float)
    frames = [_frame(0.0, q)]
    for t, (movers, shift, back) in enumerate(moves, start=1):
        if back:  # where the first frame was: same numbers, kept gaps must still be right
            q = np.array(system.q0, dtype=float)
        for k in movers:
            k %= system.n_disks
            q[3 * k] += shift
            q[3 * k + 1] -= 0.5 * shift
        frames.append(_frame(float(t), q))
    deepest, pairs = 0.0, set()
    for start in range(0, len(frames), batch):
        accuracy.measure(frames[start : start + batch])
        for frame in frames[start : start + batch]:
            depth, at = _direct(system, frame.q)
            if depth > deepest + 1e-12:
                deepest, pairs = depth, at
            elif abs(depth - deepest) <= 1e-12:
                pairs |= at
        assert accuracy.penetration == deepest or abs(accuracy.penetration - deepest) <= 1e-12
        if deepest > 0.0:
            assert accuracy.pair in pairs
        else:
            assert accuracy.pair == ("", "")


@settings(max_examples=60, deadline=None)
@given(
    disks=st.lists(disk, min_size=2, max_size=6),
    shifts=st.lists(st.tuples(st.floats(-0.7, 0.7), st.floats(-0.7, 0.7)), min_size=6, max_size=6),
    frames=st.integers(1, 3),
)
def test_the_compiled_gaps_are_those_of_contact_arrays_bit_for_bit(disks, shifts, frames):
    """The kernel's deepest gap of each frame is the smallest valid gap that
    :mod:`solver.contact_arrays` gives the stepper (``FeatureArrays.contacts``,
    ``disk_disk_gaps`` with ``disk_disk``'s validity), the same float, and its pair
    is the first of the smallest; pairs of disks that did not move keep their gaps."""
    from solver.contact_arrays import disk_disk_gaps
    from solver.kernel_accuracy import compiled_deepest
    from solver.kernel_tables import DISK, feature_tables

    bodies = [
        uniform_wheel(f"w{k}", r, 0.3 + 0.6 * (k % 5) + dx, 0.4 + 0.6 * (k // 5) + dy)
        for k, (r, dx, dy) in enumerate(disks)
    ]
    try:
        system = System(gravity_scene(bodies, [BOX, ARC]))
    except SceneError:
        assume(False)
    D, n = system.n_disks, len(system.features)
    radii = np.asarray(system.radii, dtype=float)
    c0 = system.centres(np.array(system.q0, dtype=float))
    C = np.array([c0 + np.array(shifts[:D]) * (f % 2) for f in range(frames)])
    kinds, a, b, arc = feature_tables(system.features)
    feature_pairs = np.array([(i, f) for i in range(D) for f in range(n)])
    disk_pairs = np.array(list(itertools.combinations(range(D), 2)))
    for pairs, is_disk in ((feature_pairs, False), (disk_pairs, True)):
        i, j = pairs[:, 0], pairs[:, 1]
        expected = []
        for c in C:
            if is_disk:
                d, g = disk_disk_gaps(c[i, 0] - c[j, 0], c[i, 1] - c[j, 1], radii[i], radii[j])
                gaps = np.where((d <= radii[i] + radii[j]) & (d > 0.0), g, math.inf)
            else:
                zero = np.zeros_like(c)
                contacts = system.feature_arrays.contacts(i, j, c, zero, np.zeros(D), radii)
                gaps = np.where(contacts.valid, contacts.g, math.inf)
            expected.append((gaps.min(), int(np.argmin(gaps))))
        codes = np.full(len(pairs), DISK) if is_disk else kinds[j]
        table = (codes.astype(np.int64), i.astype(np.int64).copy(), j.astype(np.int64).copy())
        last_c, last_g = np.zeros((D, 2)), np.zeros(len(pairs))
        for fresh, centres in ((True, C), (False, C[::-1].copy())):  # then all kept, or moved
            best, which = np.zeros(len(centres)), np.empty(len(centres), dtype=np.int64)
            compiled_deepest()(
                centres, *table, radii, a, b, arc, last_c, last_g, fresh, best, which
            )  # fmt: skip
            want = expected if fresh else expected[::-1]
            for f, (gap, at) in enumerate(want):
                # best starts at 0: only overlaps count, each its frame's first smallest
                assert (which[f], best[f]) == ((at, gap) if gap < 0.0 else (-1, 0.0))
            assert np.array_equal(last_c, centres[-1])
