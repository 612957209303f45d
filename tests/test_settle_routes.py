"""The short routes of an event's settling: the same bits as the general route.

:meth:`solver.event_handling.EventHandler.settle` skips the impact rounds
and the contact problem when nothing is closed, solves one closed
frictionless contact that does not approach by one division
(:func:`solver.contact.frictionless_multiplier`), and takes a contact whose
velocities alone changed from its evaluation
(:meth:`~solver.event_handling.EventHandler.at_velocities`). Each is
compared here with the general route: the contact problem's λ, the
evaluation of the pair, whole runs with the routes on and off (frames and
events by their bytes, signs of zero included). The physics of a ball
coming to rest is pinned by closed forms.
"""

from __future__ import annotations

import math
from dataclasses import astuple
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.contact import frictionless_multiplier, solve_contact_problem
from solver.event_handling import EventHandler
from solver.simulation import make_stepper
from tests.scene_data import G_ACC, gravity_scene, small_ball

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


def bits(x) -> bytes:
    """The bytes of ``x`` (a float or an array): ``-0.0`` differs from ``0.0``."""
    return np.asarray(x, dtype=float).tobytes()


@given(
    st.floats(0.0, 2.0 * math.pi),
    st.sampled_from([0.0, 1.0]),
    finite,
    st.lists(st.floats(1e-3, 1e3), min_size=3, max_size=3),
    st.lists(finite, min_size=3, max_size=3),
)
def test_one_frictionless_multiplier_is_the_contact_problems(angle, curved, gamma_n, masses, f):
    """λ of one frictionless contact of any slope, pressed or not, against the LCP's answer."""
    nx, ny = -math.sin(angle), math.cos(angle)
    contact = SimpleNamespace(
        G=np.array([nx, ny, 0.0]),
        H=np.array([ny, -nx, 0.1]),
        gamma_n=curved * gamma_n,
        gamma_t=0.0,
        friction=0.0,
        u_t=0.0,
        body="ball",
        other="ground",
    )
    M_inv = 1.0 / np.array(masses)
    f = np.array(f)
    general = solve_contact_problem([contact], M_inv, f)
    assert bits(frictionless_multiplier(contact, M_inv, f)) == bits(general.lam[0])
    assert general.modes == ("stick",)


def ball_scene(drop, restitution, slope_deg, friction, t_end, dt_out, corner=False):
    """A 1 kg ball (radius 0.1 m) dropped ``drop`` (m) onto a segment tilted ``slope_deg``;
    with ``corner`` a wall stands at the segment's left end."""
    tilt = math.radians(slope_deg)
    dx, dy = math.cos(tilt), math.sin(tilt)
    boundaries = [{"id": "ground", "type": "segment", "a": [-dx, -dy], "b": [dx, dy]}]
    x = 0.0
    if corner:
        boundaries.append({"id": "wall", "type": "segment", "a": [-dx, 2.0], "b": [-dx, -dy]})
        x = -dx + 0.1 + 1e-3
    y = x * math.tan(tilt) + drop + 0.1 / math.cos(tilt)
    ball = small_ball(x, y, [-0.3 if corner else 0.0, 0.0])
    return gravity_scene(
        [ball], boundaries, restitution=restitution, friction=friction, t_end=t_end, dt_out=dt_out
    )


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


def run_of(scene, lean):
    """Every frame and event of the run as bytes and values, the short routes on or off."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EventHandler, "lean_settle", lean)
        stepper = make_stepper(scene)
        frames, events = [], []
        while stepper.status == "running":
            out = stepper.step()
            frames += out.frames
            events += out.events
    assert stepper.status == "finished", stepper.message
    return [frame_bits(f) for f in frames], [
        (
            e.t,
            e.type,
            e.body,
            e.other,
            e.message,
            bits([e.normal_impulse, e.tangent_impulse, e.energy_change]),
        )
        for e in events
    ]


@settings(max_examples=20, deadline=None)
@given(
    st.floats(0.05, 1.0),
    st.floats(0.1, 0.8),
    st.sampled_from([0.0, 0.0, 10.0, -20.0]),
    st.sampled_from([0.0, 0.0, 0.8]),
    st.booleans(),
    st.floats(0.05, 1.5),
)
def test_the_short_routes_give_the_general_runs(drop, restitution, slope, friction, corner, dt):
    """Balls to rest on level ground, sliding or rolling down slopes, bouncing in a corner."""
    scene = ball_scene(drop, restitution, slope, friction, 1.6, dt, corner=corner)
    assert run_of(scene, True) == run_of(scene, False)


@given(
    st.floats(-0.9, 0.9),
    st.floats(0.0, 0.2),
    st.floats(-40.0, 40.0),
    st.lists(finite, min_size=6, max_size=6),
)
def test_a_contact_at_new_velocities_is_its_evaluation(x, height, slope, velocities):
    """A disk over a tilted segment: the kept evaluation with new velocities, field by field."""
    stepper = make_stepper(ball_scene(0.5, 0.5, slope, 0.3, 1.0, 0.1))
    tilt = math.radians(slope)
    dx, dy, off = math.cos(tilt), math.sin(tilt), 0.1 + height  # x along the segment
    stepper.motion.q = np.array([x * dx - off * dy, x * dy + off * dx, 0.3])
    (pair,) = [p for p in stepper.pairs.all_candidates().pairs if p.other == "ground"]
    old = stepper.setup.kin.evaluate(pair, stepper.motion.q, np.array(velocities[:3]))
    stepper.motion.v = np.array(velocities[3:])
    moved = stepper.handler.at_velocities(old)
    assert moved is not None
    fresh = stepper.setup.kin.evaluate(pair, stepper.motion.q, stepper.motion.v)
    for field in ("g", "n", "t", "point", "dofs", "G_local", "H_local", "u_n", "u_t"):
        assert bits(getattr(moved, field)) == bits(getattr(fresh, field)), field
    for field in ("gamma_n", "gamma_t", "restitution", "friction", "inside", "key"):
        assert getattr(moved, field) == getattr(fresh, field), field
    assert bits(moved.gamma_n) == bits(fresh.gamma_n)


def test_the_resting_ball_presses_with_its_weight_from_the_zeno_point():
    """From 1 m at e = 1/2: Zeno at t∞ = 3 sqrt(2/g), then one active contact with λ = m g
    and no motion; nothing closed at t = 0 (one sample, no event)."""
    stepper = make_stepper(ball_scene(1.0, 0.5, 0.0, 0.0, t_end=1.5, dt_out=1.5))
    first = stepper.step()
    assert [f.kind for f in first.frames] == ["sample"] and not first.events
    assert first.frames[0].energy.potential == pytest.approx(G_ACC * 1.1, rel=1e-15)
    events, frames = [], []
    while stepper.status == "running":
        out = stepper.step()
        events += out.events
        frames += out.frames
    (zeno,) = [e for e in events if e.type == "zeno"]
    assert zeno.t == pytest.approx(3.0 * math.sqrt(2.0 / G_ACC), rel=0.0, abs=1e-14)
    (contact,) = frames[-1].contacts
    assert contact.lam == pytest.approx(G_ACC, rel=1e-12)
    assert contact.mode == "stick"
    assert frames[-1].v.tolist() == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)


@given(
    st.lists(finite, min_size=3, max_size=3),
    st.lists(finite, min_size=3, max_size=3),
    st.floats(0.0, 10.0),
)
def test_one_disks_bounce_reach_is_the_arrays(velocities, accelerations, T):
    """Twice ``|ċ| T + ½ |c̈| T²`` of a lone wheel in floats, against the per-disk arrays."""
    stepper = make_stepper(ball_scene(0.5, 0.5, 0.0, 0.0, 1.0, 0.1))
    stepper.motion.v, a = np.array(velocities), np.array(accelerations)
    cd = stepper.system.centre_velocities(stepper.motion.v)
    ca = stepper.system.centre_velocities(a)
    arrays = 2.0 * float(
        np.max(np.hypot(cd[:, 0], cd[:, 1]) * T + 0.5 * np.hypot(ca[:, 0], ca[:, 1]) * T * T)
    )
    assert bits(stepper.zeno._bounce_reach(a, T)) == bits(arrays)


def test_a_ball_wedged_in_a_rough_corner_comes_to_rest():
    """A ball slides down a 10° slope (μ = 0.8, e = 0.5) into a wall and comes to
    rest in the corner, sticking on both: four contact forces for three equations,
    statically indeterminate. The fixed-mode forces of that phase were the
    minimum-norm member, whose wall λ is negative: a lift-off the settle undid at
    once, 200 events at t = 1.5537 s. Its forces are checked in
    tests/test_wedged_contacts.py.
    """
    scene = ball_scene(1.0, 0.5, 10.0, 0.8, 2.0, 1.0, corner=True)
    stepper = make_stepper(scene)
    while stepper.status == "running":
        stepper.step()
    assert stepper.status == "finished", stepper.message
