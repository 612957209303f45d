"""The short routes of projection and settling at a resting contact: the bits of the general ones.

:meth:`solver.event_handling.HandlingMixin._project` leaves the velocities
as they are when one constraint row has nothing to remove (``Gᵀv = ±0``:
``v − (w·0 + 0.0)`` is ``v`` to the bit, ``−0.0`` entries included, and
the loss booked is ``T − T``). It is compared here with the general route
(``lean_settle`` off) on random states of a disk on a segment.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from solver.simulation import make_stepper
from tests.scene_data import gravity_scene

scaled = st.builds(
    lambda x, p: x * 10.0**p, st.floats(-10.0, 10.0), st.integers(-320, 300)
) | st.sampled_from([0.0, -0.0, 1e-300, -1e-300, 5e-324, 1e300, math.inf, math.nan])
angles = st.sampled_from([0.0, 90.0, 180.0, -90.0, 45.0, 30.0]) | st.floats(-180.0, 180.0)


def bits(x) -> bytes:
    """The bytes of ``x`` (a float or an array): ``-0.0`` differs from ``0.0``."""
    return np.asarray(x, dtype=float).tobytes()


def resting_stepper(slope_deg: float, friction: float):
    """A 1 kg ball (radius 0.1 m) on a segment tilted ``slope_deg``, its contact active (stick)."""
    tilt = math.radians(slope_deg)
    dx, dy = math.cos(tilt), math.sin(tilt)
    ball = {
        "id": "ball",
        "type": "wheel",
        "mass": 1.0,
        "inertia": 0.005,
        "radius": 0.1,
        "position": [-0.1 * dy, 0.1 * dx],
    }
    ground = {"id": "ground", "type": "segment", "a": [-dx, -dy], "b": [dx, dy]}
    stepper = make_stepper(gravity_scene([ball], [ground], friction=friction))
    (pair,) = [p for p in stepper._all_candidates().pairs if p.other == "ground"]
    stepper._active = {pair.key: (pair, "stick")}
    return stepper, (-dy, dx), (dx, dy)


def projected(slope_deg, friction, v, loss, lean):
    stepper, _, _ = resting_stepper(slope_deg, friction)
    stepper.lean_settle = lean
    stepper._v = np.array(v)
    stepper._impact_loss = loss
    before = stepper._v
    stepper._project()
    assert stepper._v is not before  # a new array, as the subtraction makes
    return bits(stepper._q), bits(stepper._v), bits(stepper._impact_loss)


@example(0.0, 0.0, [1.5, 0.0, -2.0], -0.0)
@example(0.0, 0.0, [-0.0, -0.0, -0.0], -0.0)
@example(0.0, 0.0, [1e300, 0.0, 0.0], 0.0)
@example(90.0, 0.0, [-0.0, 3.0, math.nan], 1.0)
@given(
    angles,
    st.sampled_from([0.0, 0.5]),
    st.lists(scaled, min_size=3, max_size=3),
    st.sampled_from([0.0, -0.0, 0.25]),
)
def test_a_projection_with_nothing_to_remove_is_the_general_one(slope, friction, v, loss):
    """Random velocities (±0, tiny, huge, inf, NaN) of a disk on a segment, frictionless or
    sticking with friction (two rows then: the general route)."""
    assert projected(slope, friction, v, loss, True) == projected(slope, friction, v, loss, False)


@given(angles, st.floats(-1e3, 1e3), st.floats(-1e3, 1e3), st.sampled_from([0.0, -0.0]))
def test_a_tangential_velocity_is_kept_and_the_loss_is_zero(slope, speed, spin, along_n):
    """Along the tangent (``Gᵀv`` rounding to zero or not) the projection removes only
    ``Gᵀv``: with ``Gᵀv = 0`` the velocities are kept and no energy is booked."""
    stepper, n, t = resting_stepper(slope, 0.0)
    v = np.array([speed * t[0] + along_n * n[0], speed * t[1] + along_n * n[1], spin])
    stepper._v = v.copy()
    stepper._impact_loss = 0.0
    (contact,) = stepper._active_contacts(stepper._q, stepper._v)
    G = contact.G  # the segment's normal as evaluated (a straight segment: the same everywhere)
    assert G.tolist() == pytest.approx([n[0], n[1], 0.0], abs=1e-12)
    stepper._project()
    if float(G.dot(v)) == 0.0:
        assert bits(stepper._v) == bits(v)
        assert stepper._impact_loss == 0.0
    assert float(G.dot(stepper._v)) == pytest.approx(0.0, abs=1e-12 * (1.0 + abs(speed)))
