"""Closing times: one compiled loop, the array form's times to the last bit, alone or among rows.

``first_closing`` (``tests/gap_arrays.py``) is a compiled loop over rows of
:func:`solver.gap_kernel.closing_one`, as :func:`solver.gap_kernel.closing_rows`
calls it; a single row (the bouncing
ball's one segment) and the same row among others must give the same
closing time, bit for bit, so that the bundled scenes' CSV files do not
depend on how many pairs are watched; and both the times of the numpy form
it replaced (kept in ``tests/gap_arrays.py``).
The same holds one level up: :func:`solver.gap_closing.closing_times` (one
compiled loop over the pairs) against its array form.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from solver.gap_closing import closing_times
from solver.gap_kernel import compiled_closing_rows
from solver.gap_set import GapSet
from solver.simulation import make_stepper
from tests.gap_arrays import closing_times_arrays, first_closing, first_closing_arrays
from tests.scene_data import gravity_scene, uniform_wheel
from tests.test_drawn_geometry import ground, wheel_velocities

SPECIAL = [0.0, -0.0, 5e-324, -5e-324, 1e-300, -1e-17, 1e-17, 1.0, -1.0, -4.905, 1e300, -1e300]

coefficient = st.one_of(
    st.sampled_from(SPECIAL),
    st.floats(min_value=-1e3, max_value=1e3, allow_nan=False),
    st.floats(min_value=-1e-9, max_value=1e-9, allow_nan=False),
    st.floats(allow_nan=False, allow_infinity=False),
)


@given(
    c0=coefficient,
    c1=coefficient,
    c2=coefficient,
    duration=st.floats(min_value=0.0, max_value=10.0),
    floor=st.one_of(st.just(-1e-12), coefficient),
)
def test_one_row_closes_as_it_does_among_others(c0, c1, c2, duration, floor):
    with np.errstate(all="ignore"):  # huge coefficients overflow, as they would in a scene
        alone = first_closing(np.array([c0]), np.array([c1]), np.array([c2]), duration, floor)
        # a second row that never closes keeps the call on the array path
        among = first_closing(
            np.array([c0, 1.0]), np.array([c1, 1.0]), np.array([c2, 0.0]), duration, floor
        )
    assert np.isinf(among[1])
    assert alone.view(np.int64)[0] == among.view(np.int64)[0], (alone[0], among[0])


@given(
    rows=st.lists(
        st.tuples(coefficient, coefficient, coefficient, st.one_of(st.just(-1e-12), coefficient)),
        min_size=1,
        max_size=6,
    ),
    duration=st.floats(min_value=0.0, max_value=10.0),
    one_floor=st.booleans(),
)
def test_the_compiled_loop_closes_as_the_array_form(rows, duration, one_floor):
    """first_closing (one compiled loop) against the numpy form it replaced, row by row.

    The same times, infinities included, to the last bit; a zero time may
    differ in its sign only (numpy's vector ``fmin`` and its one-element
    loop disagree there, and every caller adds the time to the clock).
    """
    c0, c1, c2, floors = (np.array(column) for column in zip(*rows, strict=True))
    floor = floors[0] if one_floor else floors
    with np.errstate(all="ignore"):
        expected = first_closing_arrays(c0, c1, c2, duration, floor)
        tau = first_closing(c0, c1, c2, duration, floor)
    zero = (tau == 0.0) & (expected == 0.0)
    assert np.array_equal(tau[~zero].view(np.int64), expected[~zero].view(np.int64)), (
        tau,
        expected,
    )


def test_a_ball_falling_onto_its_floor_closes_at_the_root():
    """``p = h − ½ g τ²``: it closes at ``√(2h/g)`` (s), here 0.5 s exactly."""
    g, h = 9.8, 1.225
    (tau,) = first_closing(np.array([h]), np.array([0.0]), np.array([-0.5 * g]), 1.0, -1e-12)
    assert tau == pytest.approx(0.5, rel=1e-15)


# ------------------------------------------------------------------ closing_times, one loop

wheels_on_lines = st.lists(
    st.tuples(
        st.floats(0.04, 0.15), st.floats(-1.4, 1.4), st.one_of(st.just(0.0), st.floats(-0.3, 0.8))
    ),
    min_size=1,
    max_size=2,
)
"""One or two wheels over drawn ground, some centres on the line ``y = 0`` of a floor."""


@given(
    boundaries=ground(),
    wheels=wheels_on_lines,
    velocities=wheel_velocities,
    accelerations=st.lists(
        st.tuples(st.sampled_from([0.0, 0.0, 1.5]), st.sampled_from([0.0, -9.81, -9.81, 3.0])),
        min_size=2,
        max_size=2,
    ),
    duration=st.floats(1e-6, 1.0),
)
def test_the_compiled_closings_are_the_array_route(
    boundaries, wheels, velocities, accelerations, duration
):
    """:func:`closing_times` (one compiled loop) gives the array route's times and flags.

    Wheels over drawn ground (segments, corners, a bowl's arcs), still or
    accelerated, alike or not, every pair watched: the times to the last bit
    (a zero time may differ in its sign only, as :func:`first_closing`'s), the
    rows to search (state 1) those the arrays flag; a row proved out of reach
    (state 2) is one the arrays resolved without a closing time.
    """
    bodies = [uniform_wheel(f"w{k}", r, 5.0 * k, 5.0) for k, (r, _, _) in enumerate(wheels)]
    stepper = make_stepper(gravity_scene(bodies, boundaries))
    kin, system = stepper.setup.kin, stepper.system
    q, v, a = (np.zeros(3 * len(wheels)) for _ in range(3))
    for k, (_, x, y) in enumerate(wheels):
        q[3 * k : 3 * k + 2] = (x, y)
        v[3 * k : 3 * k + 2] = velocities[k]
        a[3 * k : 3 * k + 2] = accelerations[k]
    gaps = GapSet(kin, kin.candidates(q, 100.0, np.arange(system.n_disks)))
    tau, state = closing_times(gaps, q, v, a, duration)
    with np.errstate(all="ignore"):
        expected, unresolved = closing_times_arrays(gaps, q, v, a, duration)
    event(f"{np.count_nonzero(state == 1)} to search, {np.count_nonzero(state == 2)} out of reach")
    zero = (tau == 0.0) & (expected == 0.0)
    assert np.array_equal(tau[~zero].view(np.int64), expected[~zero].view(np.int64)), (
        tau,
        expected,
    )
    assert np.array_equal(state == 1, unresolved)
    assert np.all(np.isinf(tau[state == 2]))


def test_a_bounce_trains_closing_is_the_loops():
    """:func:`solver.gap_kernel.segment_closing` alone (a bounce train's) is its row in the loop.

    A ball 1.225 m above a floor from (-1, 0) to (1, 0) falls at 9.8 m/s²:
    its gap closes at ``√(2h/g)`` = 0.5 s.
    """
    one, rows = compiled_closing_rows()
    h, on_line = one(
        0.25, 1.325, 0.0, 0.0, 0.0, -9.8, -1.0, 0.0, 2.0, 0.0, 4.0, 2.0, 0.1, 1.0, True
    )
    assert not on_line and h == pytest.approx(0.5, rel=1e-15)
    index = np.zeros(1, dtype=np.intp)
    table = np.array([[-1.0, 0.0, 2.0, 0.0, 4.0, 2.0]])
    tau, state = np.empty(1), np.empty(1, dtype=np.int8)
    C, CD, CA = np.array([[0.25, 1.325]]), np.zeros((1, 2)), np.array([[0.0, -9.8]])
    rows(C, CD, CA, index, index - 1, index, np.zeros(1), np.array([0.1]), index, table, 1.0,
         tau, state)  # fmt: skip
    assert tau[0] == h and state[0] == 0
    _, on_line = one(0.25, 0.0, 0.0, 1.0, 0.0, -9.8, -1.0, 0.0, 2.0, 0.0, 4.0, 2.0, 0.1, 1.0, True)
    assert on_line


bead_x = st.floats(-1.4, 1.4)
