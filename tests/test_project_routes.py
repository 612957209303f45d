"""The short routes of projection and fixed-mode forces at a resting contact: the general bits.

:meth:`solver.event_handling.EventHandler.project` leaves the velocities
as they are when one constraint row has nothing to remove (``Gᵀv = ±0``:
``v − (w·0 + 0.0)`` is ``v`` to the bit, ``−0.0`` entries included, and
the loss booked is ``T − T``). It is compared here with the general route
(``lean_settle`` off) on random states of a disk on a segment.
:func:`solver.contact.solve_with_modes` of one frictionless contact
(:func:`solver.contact._one_frictionless`) is compared with the route it
replaces (:func:`solver.contact._one_with_mode`), field by field.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from solver.contact import _apply, _one_frictionless, _one_with_mode, _slip_sign, solve_with_modes
from solver.event_tolerances import GAP_TOL, PENETRATION_TOL
from solver.simulation import make_stepper
from tests.scene_data import gravity_scene, small_ball

scaled = st.builds(
    lambda x, p: x * 10.0**p, st.floats(-10.0, 10.0), st.integers(-320, 300)
) | st.sampled_from([0.0, -0.0, 1e-300, -1e-300, 5e-324, 1e300, math.inf, math.nan])
finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
entries = scaled | finite | st.sampled_from([0.0, -0.0, 1.0, -1.0])
angles = st.sampled_from([0.0, 90.0, 180.0, -90.0, 45.0, 30.0]) | st.floats(-180.0, 180.0)


def bits(x) -> bytes:
    """The bytes of ``x`` (a float or an array): ``-0.0`` differs from ``0.0``."""
    return np.asarray(x, dtype=float).tobytes()


def resting_stepper(slope_deg: float, friction: float):
    """A 1 kg ball (radius 0.1 m) on a segment tilted ``slope_deg``, its contact active (stick)."""
    tilt = math.radians(slope_deg)
    dx, dy = math.cos(tilt), math.sin(tilt)
    ball = small_ball(-0.1 * dy, 0.1 * dx)
    ground = {"id": "ground", "type": "segment", "a": [-dx, -dy], "b": [dx, dy]}
    stepper = make_stepper(gravity_scene([ball], [ground], friction=friction))
    (pair,) = [p for p in stepper.pairs.all_candidates().pairs if p.other == "ground"]
    stepper.motion.active = {pair.key: (pair, "stick")}
    return stepper, (-dy, dx), (dx, dy)


def projected(slope_deg, friction, v, loss, lean):
    stepper, _, _ = resting_stepper(slope_deg, friction)
    stepper.handler.lean_settle = lean
    stepper.motion.v = np.array(v)
    stepper.motion.impact_loss = loss
    before = stepper.motion.v
    stepper.handler.project()
    assert stepper.motion.v is not before  # a new array, as the subtraction makes
    return bits(stepper.motion.q), bits(stepper.motion.v), bits(stepper.motion.impact_loss)


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
    stepper.motion.v = v.copy()
    stepper.motion.impact_loss = 0.0
    (contact,) = stepper.contacts.active_contacts(stepper.motion.q, stepper.motion.v)
    G = contact.G  # the segment's normal as evaluated (a straight segment: the same everywhere)
    assert G.tolist() == pytest.approx([n[0], n[1], 0.0], abs=1e-12)
    stepper.handler.project()
    if float(G.dot(v)) == 0.0:
        assert bits(stepper.motion.v) == bits(v)
        assert stepper.motion.impact_loss == 0.0
    assert float(G.dot(stepper.motion.v)) == pytest.approx(0.0, abs=1e-12 * (1.0 + abs(speed)))


@st.composite
def frictionless_contacts(draw):
    """One frictionless contact's rows: a disk on a segment of any slope (normals with −0.0
    entries among them), or rows of any entries, with curvature terms."""
    if draw(st.booleans()):
        angle = math.radians(draw(angles))
        nx, ny = -math.sin(angle), math.cos(angle)
        G = [nx, ny, draw(st.sampled_from([0.0, -0.0]))]
        H = [ny, -nx, draw(st.floats(0.01, 1.0))]
    else:
        G = draw(st.lists(entries, min_size=3, max_size=3))
        H = draw(st.lists(entries, min_size=3, max_size=3))
    return SimpleNamespace(
        G=np.array(G),
        H=np.array(H),
        gamma_n=draw(entries),
        gamma_t=draw(entries),
        friction=draw(st.sampled_from([0.0, -0.0])),
        u_t=draw(finite),
        body="ball",
        other="ground",
    )


@example(
    SimpleNamespace(
        G=np.array([0.0, 1.0, 0.0]),
        H=np.array([1.0, -0.0, 0.1]),
        gamma_n=0.0,
        gamma_t=0.0,
        friction=0.0,
        u_t=0.0,
        body="ball",
        other="ground",
    ),
    [1.0, 1.0, 200.0],
    [0.0, -9.81, 0.0],
    "stick",
)
@given(
    frictionless_contacts(),
    st.lists(st.floats(1e-3, 1e3) | scaled.filter(lambda x: x >= 0.0), min_size=3, max_size=3),
    st.lists(entries, min_size=3, max_size=3),
    st.sampled_from(["stick", "slip+", "slip-"]),
)
def test_one_frictionless_contacts_forces_are_the_one_mode_routes(contact, M_inv, f, mode):
    """The bouncing ball at rest (first example) and random rows, masses and forces."""
    M_inv, f = np.array(M_inv), np.array(f)
    a_free = _apply(M_inv, f)
    replaced = _one_with_mode(contact, _slip_sign(contact, mode), M_inv, a_free)
    if replaced is None:  # the general least-squares route answers, as before
        assert _one_frictionless(contact, M_inv, a_free) is None
        return
    forces = solve_with_modes([contact], [mode], M_inv, f)
    for field in ("qdd", "lam", "tau", "a_n", "a_t", "friction_force"):
        assert bits(getattr(forces, field)) == bits(getattr(replaced, field)), field
    assert forces.modes == replaced.modes == ("stick",)


def corner_stepper(x, y):
    """A 1 kg ball (radius 0.1 m) centred at (``x``, ``y``) in a corner: the ground y = 0 for
    −1 ≤ x ≤ 1 and a wall x = −1 up to y = 2 (vertices at the ends)."""
    ball = {"id": "ball", "type": "wheel", "mass": 1.0, "inertia": 0.005, "radius": 0.1}
    ball["position"] = [0.0, 0.5]
    boundaries = [
        {"id": "ground", "type": "segment", "a": [-1.0, 0.0], "b": [1.0, 0.0]},
        {"id": "wall", "type": "segment", "a": [-1.0, 2.0], "b": [-1.0, 0.0]},
    ]
    stepper = make_stepper(gravity_scene([ball], boundaries))
    stepper.motion.q = np.array([x, y, 0.0])
    return stepper


near = st.sampled_from([0.1, 0.1 + 1e-11, 0.1 - 5e-10, 0.1 + 2e-10, 0.1 - 2e-9]) | st.floats(
    0.0999999, 0.1000001
)


def corner_gaps(x, y):
    """The ball's gaps (m) to the ground, the wall and the corner (-1, 0), by hand: a segment's
    where the centre's foot lies inside it, the corner's where neither segment's region holds
    the centre (``inf`` elsewhere)."""
    ground = abs(y) - 0.1 if -1.0 < x < 1.0 else math.inf
    wall = abs(x + 1.0) - 0.1 if 0.0 < y < 2.0 else math.inf
    corner = math.hypot(x + 1.0, y) - 0.1 if x < -1.0 and y < 0.0 else math.inf
    ground_ends, wall_ends = ((-1.0, 0.0), (1.0, 0.0)), ((-1.0, 2.0), (-1.0, 0.0))
    return {ground_ends: ground, wall_ends: wall, (-1.0, 0.0): corner}


def feature_of(pair):
    """A pair's feature as ``corner_gaps`` names it: a segment's ends, a corner's point."""
    f = pair.feature
    return (tuple(f.a), tuple(f.b)) if hasattr(f, "b") else tuple(f.p)


@given(
    st.one_of(near.map(lambda d: -1.0 + d), st.floats(-1.2, 1.2)),
    st.one_of(near, st.floats(-0.2, 0.3)),
)
def test_closed_pairs_are_those_in_the_contact_band_in_scene_order(x, y):
    """A ball in a corner, touching the ground, the wall, both, or neither (gaps at the band's
    edges among them): the pairs with ``−PENETRATION_TOL ≤ g ≤ GAP_TOL``, gaps by hand, in the
    order of the candidate pairs (one disk: by feature)."""
    edges = (x + 1.0, x - 1.0, y, y - 2.0)
    assume(all(abs(e) > 1e-6 for e in edges))  # a region's edge: REGION_TOL decides
    stepper = corner_stepper(x, y)
    gaps = corner_gaps(x, y)
    every = list(stepper.pairs.all_candidates().pairs)
    expected = [
        p.key for p in every if -PENETRATION_TOL <= gaps.get(feature_of(p), math.inf) <= GAP_TOL
    ]
    closed = stepper.handler.closed_pairs()
    assert [p.key for p in closed] == expected
