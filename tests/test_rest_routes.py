"""The float routes of one contact at rest: the same bits as the general (array) routes.

A ball coming to rest (MECHANICS §7) ends with one active contact: the
projections of one constraint row (:func:`solver.event_handling.one_row_solution`
for ``numpy.linalg.lstsq``), the contact problem of one contact
(:func:`solver.contact._one_result` for :func:`solver.contact._result`), the
state of a disk on a segment (:func:`solver.geometry.disk_segment_contact`
for a row of :func:`solver.geometry.disk_segment_contacts`) and a lone
output sample (:meth:`solver.output_frames.Recorder._sample_frame`) are
compared here with those routes, bit for bit, on random states; the physics
of the resting ball is pinned by closed forms.
"""

from __future__ import annotations

import math
from dataclasses import astuple
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from solver import output_frames
from solver.contact import _one_result, _result
from solver.event_handling import one_row_solution
from solver.flight import Parabola
from solver.geometry import (
    _ZERO_HESSIAN,
    Segment,
    _contact,
    disk_segment_contact,
    disk_segment_contacts,
)
from solver.output_frames import Recorder
from solver.simulation import make_stepper
from tests.scene_data import G_ACC, gravity_scene, small_ball

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
scaled = st.builds(
    lambda x, p: x * 10.0**p, st.floats(-10.0, 10.0), st.integers(-320, 300)
) | st.sampled_from([0.0, -0.0, 1e-300, -1e-300, 5e-324])

forces = st.floats(-1e3, 1e3).filter(lambda x: x == 0.0 or abs(x) > 1e-100)


def bits(x) -> bytes:
    """The bytes of ``x`` (a float or an array): ``-0.0`` differs from ``0.0``."""
    return np.asarray(x, dtype=float).tobytes()


@example(1.0, 0.0)
@example(3.0, -0.0)
@given(st.floats(1e-30, 1e30), scaled)
def test_one_row_solution_is_lstsq_bit_for_bit(k, b):
    expected = np.linalg.lstsq(np.array([[k]]), np.array([b]), rcond=1e-12)[0][0]
    assert bits(one_row_solution(k, b)) == bits(expected)


@given(
    st.floats(0.0, 2.0 * math.pi),
    st.floats(0.05, 20.0),
    st.floats(1e-4, 1.0),
    st.lists(scaled | finite, min_size=3, max_size=3),
)
def test_a_one_row_projection_is_the_least_squares_projection(angle, mass, inertia, v):
    """``v − W (GᵀW)⁺ Gᵀv`` of one column, as :meth:`_project` forms it for a disk on a slope."""
    G = np.array([-math.sin(angle), math.cos(angle), 0.0])
    M_inv = 1.0 / np.array([mass, mass, inertia])
    v = np.array(v)
    W = M_inv[:, None] * G[:, None]
    general = v - W @ np.linalg.lstsq(W.T @ G[:, None], G[:, None].T @ v, rcond=1e-12)[0]
    w = M_inv * G
    x = one_row_solution(float(G.dot(w)), float(G.dot(v)))
    assert bits(v - (w * x + 0.0)) == bits(general)


@st.composite
def one_contacts(draw):
    """A disk's contact on a segment of any slope: G, H, curvature terms, friction."""
    angle = draw(st.floats(0.0, 2.0 * math.pi))
    radius = draw(st.floats(0.01, 1.0))
    nx, ny = -math.sin(angle), math.cos(angle)
    return SimpleNamespace(
        G=np.array([nx, ny, 0.0]),
        H=np.array([ny, -nx, radius]),
        gamma_n=draw(st.sampled_from([0.0, 1.0])) * draw(finite),
        gamma_t=draw(st.sampled_from([0.0, 1.0])) * draw(finite),
        friction=draw(st.sampled_from([0.0, 0.3, 1.0])),
        u_t=0.0,
        body="ball",
        other="ground",
    )


@given(
    one_contacts(),
    st.lists(finite, min_size=6, max_size=6),
    forces,
    forces,
    st.sampled_from([0.0, 1.0, -1.0]),
)
def test_the_one_contact_packaging_is_the_general_one(contact, accelerations, lam, beta, sign):
    qdd, a_free = np.array(accelerations[:3]), np.array(accelerations[3:])
    sign = sign if contact.friction > 0.0 else 0.0
    one = np.ones(1)
    general = _result(
        [contact],
        qdd,
        a_free,
        np.array([lam]),
        np.array([beta]),
        np.array([sign]),
        contact.G[:, None],
        contact.H[:, None],
        one * contact.gamma_n,
        one * contact.gamma_t,
    )
    single = _one_result(contact, qdd, a_free, lam, beta, sign)
    for field in ("qdd", "lam", "tau", "a_n", "a_t", "friction_force"):
        assert bits(getattr(single, field)) == bits(getattr(general, field)), field
    assert single.modes == general.modes


@given(
    st.lists(st.floats(-2.0, 2.0), min_size=2, max_size=2),
    st.floats(0.0, 2.0 * math.pi),
    st.floats(0.1, 3.0),
    st.lists(finite, min_size=4, max_size=4),
    st.floats(0.01, 1.0),
    finite,
)
def test_a_disk_on_a_segment_at_one_instant_is_the_row_of_many(
    a, angle, length, motion, radius, omega
):
    b = (a[0] + length * math.cos(angle), a[1] + length * math.sin(angle))
    segment = Segment(a=(a[0], a[1]), b=b)
    c, cdot = np.array(motion[:2]), np.array(motion[2:])
    row = disk_segment_contacts(segment, c[None, :], cdot[None, :], radius, np.array([omega]))
    inside, u_n, u_t, px, py, nx, ny = disk_segment_contact(segment, c, cdot, radius, omega)
    assert inside == bool(row.inside[0])
    assert bits([u_n, u_t, px, py, nx, ny]) == bits(
        [row.u_n[0], row.u_t[0], row.point[0, 0], row.point[0, 1], row.n[0, 0], row.n[0, 1]]
    )


@given(
    st.lists(finite, min_size=9, max_size=9),
    st.lists(st.floats(-10.0, 10.0), min_size=2, max_size=2),
    st.lists(st.floats(0.0, 5.0), min_size=2, max_size=2),
)
def test_a_parabolas_lone_row_is_its_row_among_many(state, power, times):
    q, v, a = (np.array(state[k : k + 3]) for k in (0, 3, 6))
    flight = Parabola(0.25, q, v, a, np.array([0.5, -0.0, 1.0]), np.array(power))
    many = flight.states(np.array(times))
    assert bits(flight.states(np.array(times[:1]))) == bits(many[:1])


@given(
    st.floats(-1e3, 1e3),
    st.floats(0.0, 2.0 * math.pi),
    st.lists(scaled | finite, min_size=2, max_size=2),
    finite,
)
def test_a_straight_features_curvature_terms_are_the_products(gap, angle, velocity, rolling):
    """The shortcut for the shared zero Hessian against the general products (another zero
    Hessian object): every field to the bit."""
    n = np.array((math.cos(angle), math.sin(angle)))
    point, rel = np.array((0.25, -1.0)), np.array(velocity)
    short = _contact(gap, n, _ZERO_HESSIAN, point, rel, rolling)
    general = _contact(gap, n, np.zeros((2, 2)), point, rel, rolling)
    for field in ("g", "n", "t", "point", "u_n", "u_t", "gamma_n", "gamma_t"):
        assert bits(getattr(short, field)) == bits(getattr(general, field)), field


def ball_scene(drop, restitution, slope_deg, friction, t_end, dt_out):
    """A 1 kg ball (radius 0.1 m) dropped ``drop`` (m) onto a segment tilted ``slope_deg``."""
    tilt = math.radians(slope_deg)
    dx, dy = math.cos(tilt), math.sin(tilt)
    ground = {"id": "ground", "type": "segment", "a": [-dx, -dy], "b": [dx, dy]}
    ball = small_ball(0.0, drop + 0.1 / math.cos(tilt))
    return gravity_scene(
        [ball], [ground], restitution=restitution, friction=friction, t_end=t_end, dt_out=dt_out
    )


def frames_of(scene, one_row):
    """Every frame of the run as bytes and values, with the float routes of samples on or off
    (a lone sample's frame; the grid times of a few samples due)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Recorder, "one_row_samples", one_row)
        patch.setattr(output_frames, "FEW_SAMPLES", output_frames.FEW_SAMPLES if one_row else -1)
        stepper = make_stepper(scene)
        frames = []
        while stepper.status == "running":
            frames += stepper.step().frames
    assert stepper.status == "finished"
    return [
        (
            f.t,
            f.kind,
            bits(f.q),
            bits(f.v),
            bits(astuple(f.energy)),
            [
                (
                    c.body,
                    c.other,
                    c.mode,
                    bits(astuple(c)[2:6] + c.point + c.normal + (c.friction,)),
                )
                for c in f.contacts
            ],
        )
        for f in frames
    ]


@settings(max_examples=25, deadline=None)
@given(
    st.floats(0.05, 1.0),
    st.floats(0.1, 0.8),
    st.sampled_from([0.0, 0.0, 10.0, -20.0]),
    st.floats(0.05, 1.5),
)
def test_lone_samples_are_the_vectorised_samples(drop, restitution, slope_deg, dt_out):
    """Balls to rest on level ground, set down rolling on sticking slopes; samples alone
    (one per step) or several per phase."""
    friction = 0.0 if slope_deg == 0.0 else 0.8
    drop = drop if slope_deg == 0.0 else 0.0
    t_end = 1.6 if slope_deg == 0.0 else 0.4
    scene = ball_scene(drop, restitution, slope_deg, friction, t_end=t_end, dt_out=dt_out)
    assert frames_of(scene, True) == frames_of(scene, False)


def run_to_end(scene):
    """Frames and events of a whole run."""
    stepper = make_stepper(scene)
    frames, events = [], []
    while stepper.status == "running":
        out = stepper.step()
        frames += out.frames
        events += out.events
    assert stepper.status == "finished"
    return frames, events


def test_the_ball_comes_to_rest_as_the_closed_forms_say():
    """From 1 m at e = 1/2 on level ground: Zeno at t∞ = 3 sqrt(2/g), then at rest with
    λ = m g; the energy balance holds to rounding throughout."""
    frames, events = run_to_end(ball_scene(1.0, 0.5, 0.0, 0.0, t_end=2.0, dt_out=0.25))
    (zeno,) = [e for e in events if e.type == "zeno"]
    assert zeno.t == pytest.approx(3.0 * math.sqrt(2.0 / G_ACC), rel=0.0, abs=1e-14)
    start = frames[0].energy.balance
    for frame in frames:
        assert frame.energy.balance == pytest.approx(start, rel=0.0, abs=1e-12)
    resting = [f for f in frames if f.kind == "sample" and f.t > zeno.t]
    assert [f.t for f in resting] == pytest.approx([1.5, 1.75, 2.0])
    for frame in resting:
        (contact,) = frame.contacts
        assert contact.lam == pytest.approx(G_ACC, rel=1e-12)
        assert frame.v.tolist() == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)
        assert frame.energy.kinetic == pytest.approx(0.0, abs=1e-24)


@pytest.mark.parametrize("slope_deg", [5.0, 15.0, -20.0])
def test_a_ball_rolling_down_a_slope_presses_with_m_g_cos_slope(slope_deg):
    """Set down on a sticking slope it rolls (a = g sin α / (1 + I/(m r²))) pressing
    with λ = m g cos α; it loses no energy."""
    tilt = math.radians(slope_deg)
    frames, _ = run_to_end(ball_scene(0.0, 0.5, slope_deg, 0.9, t_end=0.5, dt_out=0.1))
    samples = [f for f in frames if f.kind == "sample"]
    assert len(samples) == 6
    rolling = G_ACC * math.sin(tilt) / (1.0 + 0.005 / (1.0 * 0.1**2))
    for frame in samples:
        (contact,) = frame.contacts
        assert contact.mode == "stick"
        assert contact.lam == pytest.approx(G_ACC * math.cos(tilt), rel=1e-12)
        speed = math.hypot(frame.v[0], frame.v[1])
        assert speed == pytest.approx(abs(rolling) * frame.t, rel=1e-12, abs=1e-15)
        assert frame.energy.balance == pytest.approx(frames[0].energy.balance, abs=1e-12)
