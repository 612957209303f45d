"""Trails that keep the whole run: bounded memory, evenly decimated, ending at the body."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from impactgui.scene_items import TrailField


@settings(max_examples=40, deadline=None)
@given(frames=st.integers(1, 3000), length=st.integers(2, 64))
def test_the_trail_spans_the_run_with_bounded_even_points(qapp, frames, length):
    trails = TrailField()
    trails.start(2, length, keep_all=True)
    for k in range(frames):
        trails.append(np.array([[float(k), 0.0], [1.0, 1.0]]))  # body 1 rests
    xs = trails.trail(0)[:, 0]
    assert xs[0] == 0.0 and xs[-1] == frames - 1  # from the start to where the body is
    assert len(xs) <= 2 * length + 1  # bounded memory (the newest may be unstored)
    assert len(xs) >= min(frames, length)
    steps = np.diff(xs)
    if len(steps) > 1:  # evenly decimated; the newest position may come sooner
        assert np.all(steps[:-1] == steps[0]) and 0 < steps[-1] <= steps[0]
        assert int(steps[0]) & (int(steps[0]) - 1) == 0  # a power of two
    drawn_x, _ = trails.getData()
    assert len(drawn_x) == len(xs) + 1  # the resting body is one point


def test_without_keep_all_the_last_length_positions_stay(qapp):
    trails = TrailField()
    trails.start(1, 10)
    for k in range(25):
        trails.append(np.array([[float(k), 0.0]]))
    assert trails.trail(0)[:, 0].tolist() == [float(k) for k in range(15, 25)]
