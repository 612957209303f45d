"""The routes of a run's setup and first steps: the same bits as the routes they replace.

A frame of the stepper's current state is built from its positions,
velocities and work as they are (:meth:`solver.output_frames.OutputMixin._current_frame`)
rather than from the row joining them (:meth:`~solver.output_frames.OutputMixin._frame`
of ``_y()``), and the box of a lone disk that bounds the broad-phase margin
(:func:`solver.flight.disk_box`) in floats rather than from its columns'
minima and maxima. Each route is compared here
with the one it replaces on random inputs, by its bytes (signs of zero
included).
"""

from __future__ import annotations

from dataclasses import astuple

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.flight import disk_box
from solver.simulation import make_stepper
from tests.test_settle_routes import ball_scene, bits


def frame_bits(frame):
    """A frame as values and bytes: time, kind, state, energies and contact states."""
    return (
        frame.t,
        frame.kind,
        bits(frame.q),
        bits(frame.v),
        bits(astuple(frame.energy)),
        [
            (c.body, c.other, c.mode, bits(astuple(c)[2:6] + c.point + c.normal))
            for c in frame.contacts
        ],
    )


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
        made = stepper._current_frame(stepper.t, "sample")
        joined = stepper._frame(stepper.t, "sample", stepper._y())
        assert frame_bits(made) == frame_bits(joined)
        assert not np.shares_memory(made.q, stepper._q)
        assert not np.shares_memory(made.v, stepper._v)
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

