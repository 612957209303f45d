"""first_closing of one quadratic: its float form agrees with the array form to the last bit.

:func:`solver.gap_closing.first_closing` takes a float path for a single row
(the bouncing ball's one segment); the same row among others takes the
array path. Both must give the same closing time, bit for bit, so that
the bundled scenes' CSV files do not depend on how many pairs are watched.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.gap_closing import first_closing

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


def test_a_ball_falling_onto_its_floor_closes_at_the_root():
    """``p = h − ½ g τ²``: it closes at ``√(2h/g)`` (s), here 0.5 s exactly."""
    g, h = 9.8, 1.225
    (tau,) = first_closing(np.array([h]), np.array([0.0]), np.array([-0.5 * g]), 1.0, -1e-12)
    assert tau == pytest.approx(0.5, rel=1e-15)
