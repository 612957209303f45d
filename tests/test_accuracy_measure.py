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
ARC = {"id": "bowl", "type": "arc", "center": [1.5, 1.0], "radius": 0.4, "start": 3.5, "end": 6.0}


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
