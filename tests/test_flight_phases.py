"""The fast path of free flights of disks under gravity (solver/flight_phases.py).

Wheels (one or two) dropped or thrown onto straight segments, and the same
wheels over the drawn ground of the drawn-geometry property test: the fast
path must give the general path's run — the same events in the same order,
times and velocities to rounding, the same frames' energies — over the first
impacts. The bouncing ball must bounce at the closed form's instants with the
closed form's speeds, the fast path taking each bounce without the general
handling.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.event_handling import EventHandler
from solver.flight_phases import FlightPhase
from solver.simulation import make_stepper
from tests.scene_data import G_ACC, gravity_scene
from tests.test_drawn_geometry import wheel_scenes

FIRST_IMPACTS = 6
"""Impacts compared between the two paths (later ones of a chaotic run may part)."""
GAP_ROUNDING = 1e-14
"""Rounding (m) of a gap of these scenes (coordinates of a few metres)."""


ROUNDOFF_IMPULSE = 1e-12
"""Impulse (N·s) of an "impact" on a contact already at rest, made by rounding alone.

A wheel rolling with ``u_n`` of a few 1e-16 m/s takes part in another
wheel's impact with such an impulse on one path and none on the other;
both runs leave such events and their frames out of the comparison.
"""


def run(scene, fast, t_end=None):
    """Events ``(t, type, body, other, v_plus, v_minus)``, frames ``(t, kind, q, v, dissipated)``.

    Impacts with an impulse below ``ROUNDOFF_IMPULSE`` are left out, and so
    are the ``pre`` and ``post`` frames of an instant with no other impact.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FlightPhase, "fast_flight_phases", fast)
        stepper = make_stepper(scene) if t_end is None else make_stepper(scene, t_end=t_end)
        events, frames = [], []
        while stepper.status == "running":
            out = stepper.step()
            impacts = [e for e in out.events if e.type == "impact"]
            noise = {e.t for e in impacts if abs(e.normal_impulse) < ROUNDOFF_IMPULSE} - {
                e.t for e in impacts if abs(e.normal_impulse) >= ROUNDOFF_IMPULSE
            }
            events += [
                (
                    e.t,
                    e.type,
                    e.body,
                    e.other,
                    None if e.v_plus is None else tuple(e.v_plus),
                    None if e.v_minus is None else tuple(e.v_minus),
                )
                for e in out.events
                if not (e.type == "impact" and abs(e.normal_impulse) < ROUNDOFF_IMPULSE)
            ]
            frames += [
                (f.t, f.kind, tuple(f.q), tuple(f.v), f.energy.dissipated)
                for f in out.frames
                if f.kind == "sample" or f.t not in noise
            ]
    return stepper.status, events, frames


def time_rounding(event):
    """How far (s) an impact's instant moves with a rounding of the gap it closes.

    A gap off by a rounding of the positions (``GAP_ROUNDING``, m) closes that
    much sooner or later at the approach speed ``u``: a hop of micrometres per
    second after an impact with e = 1e-6 rises less than 1e-12 m, and its
    landing moves by 1e-10 s with the last bits of the bounce's position.
    The approach speed is bounded below by the jump of the velocities.
    """
    _, kind, _, _, v_plus, v_minus = event
    if kind != "impact" or v_minus is None:
        return 0.0
    jump = max(abs(p - m) for p, m in zip(v_plus, v_minus, strict=True))
    return GAP_ROUNDING / jump if jump > 0.0 else 0.0


def assert_same_runs(scene):
    fast_status, fast_events, fast_frames = run(scene, True)
    status, events, frames = run(scene, False)
    assert fast_status == status
    impacts = [k for k, e in enumerate(events) if e[1] == "impact"][:FIRST_IMPACTS]
    upto = impacts[-1] + 1 if impacts else len(events)
    assert len(fast_events) >= upto
    rounding = 0.0
    for a, b in zip(fast_events[:upto], events[:upto], strict=True):
        assert a[1:4] == b[1:4]
        # a bounce series' accumulation point moves with its last impact
        rounding = time_rounding(b) if b[1] == "impact" else rounding
        assert a[0] == pytest.approx(b[0], rel=0.0, abs=1e-11 + rounding)
        if b[4] is not None:
            assert a[4] == pytest.approx(b[4], rel=1e-8, abs=1e-9)
    # the samples on the output grid up to the last impact compared (the pre and post
    # frames of an impact hold the event's velocities, compared above)
    last = events[upto - 1][0] if upto else math.inf
    fast_samples = [f for f in fast_frames if f[1] == "sample" and f[0] < last]
    samples = [f for f in frames if f[1] == "sample" and f[0] < last]
    assert len(fast_samples) == len(samples)
    for a, b in zip(fast_samples, samples, strict=True):
        assert a[0] == b[0]
        assert a[2] == pytest.approx(b[2], rel=0.0, abs=1e-9)
        assert a[3] == pytest.approx(b[3], rel=1e-8, abs=1e-9)
        assert a[4] == pytest.approx(b[4], rel=1e-8, abs=1e-9)


@st.composite
def wheels_over_segments(draw):
    """One or two wheels over one or two straight segments, some frictionless.

    The segments do not overlap across x: two collinear overlapping segments
    are two identical constraints, whose impact impulse any split between
    them satisfies (rounding picks one).
    """
    boundaries = []
    for k in range(draw(st.integers(1, 2))):
        tilt = math.radians(draw(st.floats(-30.0, 30.0)))
        x, y, half = -0.8 + 1.6 * k, draw(st.floats(-0.2, 0.2)), draw(st.floats(0.3, 0.79))
        dx, dy = half * math.cos(tilt), half * math.sin(tilt)
        boundaries.append(
            {"id": f"floor{k}", "type": "segment", "a": [x - dx, y - dy], "b": [x + dx, y + dy]}
        )
    bodies = []
    for k in range(draw(st.integers(1, 2))):
        radius = draw(st.floats(0.04, 0.15))
        bodies.append(
            {
                "id": f"wheel{k}",
                "type": "wheel",
                "mass": draw(st.floats(0.2, 5.0)),
                "inertia": draw(st.floats(0.2, 1.0)) * 0.5 * radius**2,
                "radius": radius,
                "position": [-0.8 + 1.6 * k + draw(st.floats(-0.3, 0.3)), 1.0 + 0.4 * k],
                "velocity": [draw(st.floats(-2.0, 2.0)), draw(st.floats(-2.0, 2.0))],
                "angular_velocity": draw(st.floats(-10.0, 10.0)),
            }
        )
    restitution = draw(st.floats(0.0, 1.0))
    friction = draw(st.sampled_from([0.0, 0.0, 0.4]))
    return gravity_scene(bodies, boundaries, restitution=restitution, friction=friction, t_end=1.5)


@settings(max_examples=60, deadline=None)
@given(wheels_over_segments())
def test_the_fast_path_gives_the_general_runs_first_impacts(scene):
    assert_same_runs(scene)


@settings(max_examples=30, deadline=None)
@given(wheel_scenes())
def test_wheels_over_drawn_ground_run_the_same_on_both_paths(case):
    boundaries, bodies, restitution, friction = case
    scene = gravity_scene(
        bodies, boundaries, restitution=restitution, friction=friction, t_end=0.25, dt_out=0.025
    )
    assert_same_runs(scene)


def ball(restitution=0.5, drop=1.0, radius=0.1, x=0.0):
    wheel = {
        "id": "ball",
        "type": "wheel",
        "mass": 1.0,
        "inertia": 0.005,
        "radius": radius,
        "position": [x, drop + radius],
    }
    floor = {"id": "ground", "type": "segment", "a": [-1.0, 0.0], "b": [1.0, 0.0]}
    return gravity_scene([wheel], [floor], restitution=restitution, t_end=2.0, dt_out=2.0)


def test_the_bouncing_ball_bounces_at_the_closed_forms_instants_on_the_fast_path():
    """Dropped from 1 m with e = 1/2: impacts at t_k = t0 (1 + 2 e + ... + 2 e^(k-1)) with speeds
    e^k v0 (t0 = sqrt(2/g), v0 = g t0), accumulating at t_inf = t0 (1 + e)/(1 - e) = 3 sqrt(2/g);
    each bounce is taken without the general handling."""
    e = 0.5
    handled = []
    original = EventHandler.handle

    def counting(self, out, found):
        handled.append(self.t)
        original(self, out, found)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EventHandler, "handle", counting)
        _, events, _ = run(ball(e), True)
    t0 = math.sqrt(2.0 / G_ACC)
    v0 = G_ACC * t0
    impacts = [ev for ev in events if ev[1] == "impact"]
    assert len(impacts) >= 8
    for k, (t, _, _, _, v_plus, _) in enumerate(impacts):
        t_k = t0 * (1.0 + 2.0 * e * (1.0 - e**k) / (1.0 - e))
        assert t == pytest.approx(t_k, rel=0.0, abs=1e-14)
        assert v_plus[1] == pytest.approx(e ** (k + 1) * v0, rel=1e-13)
        assert v_plus[0] == 0.0 and v_plus[2] == 0.0
    assert not handled  # every bounce on the fast path
    (zeno,) = [ev for ev in events if ev[1] == "zeno"]
    assert zeno[0] == pytest.approx(3.0 * math.sqrt(2.0 / G_ACC), rel=0.0, abs=1e-14)


def test_a_ball_that_never_lands_runs_to_the_end_in_one_phase():
    """Beside the floor, a dropped ball falls past it: no event, the end state is the parabola's."""
    scene = ball(x=1.5)
    status, events, frames = run(scene, True, t_end=0.5)
    assert status == "finished" and not events
    wheel_end = frames[-1]
    # dropped from rest: only y changes, y(t) = 1.1 - g t²/2
    assert wheel_end[0] == 0.5
    assert wheel_end[2][0] == 1.5
    assert wheel_end[2][1] == pytest.approx(1.1 - 0.5 * G_ACC * 0.25, rel=1e-15)
