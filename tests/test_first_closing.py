"""first_closing: one compiled loop, the array form's times to the last bit, alone or among rows.

:func:`solver.gap_closing.first_closing` is one compiled loop over its rows
(:func:`solver.gap_kernel.closing_one` each); a single row (the bouncing
ball's one segment) and the same row among others must give the same
closing time, bit for bit, so that the bundled scenes' CSV files do not
depend on how many pairs are watched; and both the times of the numpy form
it replaced (kept in ``tests/gap_arrays.py``).
The same holds one level up: :func:`solver.gap_closing.closing_times` of a
few pairs in float arithmetic against its array form.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from solver.gap_closing import closing_times_arrays, closing_times_few, first_closing
from solver.gap_set import GapSet
from solver.simulation import make_stepper
from tests.gap_arrays import first_closing_arrays
from tests.scene_data import gravity_scene, uniform_wheel
from tests.test_drawn_geometry import flying_wheels, ground, wheel_velocities

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


# ------------------------------------------------------------------ closing_times, few pairs


@given(
    boundaries=ground(),
    wheels=flying_wheels,
    velocities=wheel_velocities,
    accelerations=st.lists(
        st.tuples(st.sampled_from([0.0, 0.0, 1.5]), st.sampled_from([0.0, -9.81, -9.81, 3.0])),
        min_size=2,
        max_size=2,
    ),
    duration=st.floats(1e-6, 1.0),
)
def test_few_pairs_close_in_floats_as_on_arrays(
    boundaries, wheels, velocities, accelerations, duration
):
    """:func:`closing_times_few` gives the array form's times and flags, bit for bit.

    Wheels over drawn ground (segments, corners; arcs and accelerated disk
    pairs go to the arrays whole), still or accelerated, every pair watched.
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
    few = closing_times_few(gaps, q, v, a, duration)
    event("floats" if few is not None else "arrays")
    if few is None:
        return
    tau, unresolved = closing_times_arrays(gaps, q, v, a, duration)
    assert np.array_equal(few[0].view(np.int64), tau.view(np.int64)), (few[0], tau)
    assert np.array_equal(few[1], unresolved)


bead_x = st.floats(-1.4, 1.4)
