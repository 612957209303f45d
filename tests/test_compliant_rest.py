"""A body resting on a soft floor: the static overlap, and work that does not grow with t_end.

A wheel dropped on a damped linear floor (k, c) settles where its weight
and the floor's spring balance, sunk ``δ = m g / k``; a bead pushed by
gravity along its rail against a damped vertical stop likewise. Once the
oscillation has decayed to round-off the run's remaining time is one piece
(:mod:`solver.compliant_rest`): these tests pin the static overlap against
``m g / k`` written here, count the event search's work (calls of
:meth:`solver.compliance.CompliantSet.event_values`), which must not grow
with ``t_end`` once at rest (it grew in proportion before: 15,800 calls a
second for the ball below), and compare the rest with the integrated
motion (the same run with the rest route switched off).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver import compliant_events
from solver.scene import parse_scene
from solver.simulation import simulate

G = 9.81
M, R, K, C = 0.1, 0.05, 1.0e4, 20.0


def ball(t_end: float, damping: float = C, slope: float = 0.0, friction: float = 0.0):
    """A wheel dropped from 5 mm above a soft floor of stiffness K and damping ``damping``."""
    law = {"stiffness": K, "damping": damping, "exponent": 1.0}
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "gravity": [0.0, -G],
            "contact": {"restitution": 0.5, "friction": friction, "impact_law": "staged"},
            "boundaries": [
                {"id": "floor", "type": "segment", "a": [-1.0, -slope], "b": [1.0, slope]}
                | {"compliance": law}
            ],
            "bodies": [
                {"id": "ball", "type": "wheel", "mass": M, "inertia": 1.25e-4, "radius": R}
                | {"position": [0.0, R + 0.005], "velocity": [0.0, 0.0]}
            ],
            "solver": {"method": "event-driven", "t_end": t_end, "dt_out": 0.01},
        }
    )


def bead(t_end: float):
    """A bead on a rail, pushed by gravity along it against a damped vertical stop at x = 1."""
    law = {"stiffness": K, "damping": C, "exponent": 1.0}
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "gravity": [G, 0.0],
            "contact": {"restitution": 1.0, "friction": 0.0, "impact_law": "staged"},
            "boundaries": [
                {"id": "stop", "type": "segment", "a": [1.0, -0.2], "b": [1.0, 0.2]}
                | {"compliance": law}
            ],
            "bodies": [
                {"id": "b", "type": "bead", "rail_y": 0.0, "mass": M, "radius": R}
                | {"x": 1.0 - R - 0.005, "vx": 0.0}
            ],
            "solver": {"method": "event-driven", "t_end": t_end, "dt_out": 0.01},
        }
    )


def counted_run(scene, monkeypatch, after: float = 1.0) -> tuple[object, int]:
    """The run of ``scene`` and how often its event search evaluated the compliant rows.

    Counted from ``after`` (s): a flight's first piece spans the run to
    ``t_end``, so its search depends on ``t_end`` a little, before anything
    touches.
    """
    calls = [0]
    values = compliant_events.CompliantEvents._values

    def counting(self, t, y):
        calls[0] += t >= after
        return values(self, t, y)

    monkeypatch.setattr(compliant_events.CompliantEvents, "_values", counting)
    run = simulate(scene)
    monkeypatch.setattr(compliant_events.CompliantEvents, "_values", values)
    assert run.status == "finished", run.message
    return run, calls[0]


def test_a_ball_on_a_soft_floor_comes_to_rest_sunk_mg_over_k():
    run = simulate(ball(2.0))
    last = run.frames[-1]
    # the floor is y = 0: the overlap is R − y, the static one m g / k
    assert abs((R - last.q[1]) - M * G / K) <= 4 * np.spacing(R)
    assert list(last.v) == [0.0, 0.0, 0.0]
    (contact,) = last.contacts
    assert contact.lam == pytest.approx(M * G, rel=1e-12)
    # the balance holds across the rest piece as before it
    balance = [
        f.energy.kinetic + f.energy.potential + f.energy.spring + f.energy.dissipated
        for f in run.frames
    ]
    assert max(balance) - min(balance) <= 1e-12 * M * G * (R + 0.005)


def test_a_bead_pushed_against_a_damped_stop_comes_to_rest_sunk_mg_over_k():
    run = simulate(bead(2.0))
    last = run.frames[-1]
    assert abs((last.q[0] + R - 1.0) - M * G / K) <= 4 * np.spacing(1.0)
    assert list(last.v) == [0.0]


@pytest.mark.parametrize("scene", [ball, bead])
def test_the_event_search_at_rest_does_not_grow_with_t_end(scene, monkeypatch):
    # fails before compliant_rest: the ODE's steps at rest (STEP_SHARE of the period each)
    # were searched one by one to t_end. Both rest before 1 s (0.36 s, 0.32 s); from then
    # on one piece to t_end, searched at its sub-points (SUBPOINTS_ODE + 1 = 5) and their
    # force rates
    _, short = counted_run(scene(2.0), monkeypatch)
    longer, long = counted_run(scene(20.0), monkeypatch)
    assert short <= 20 and long <= 20
    assert len(longer.frames) == 2001


def test_the_rest_is_the_integrated_motion_to_round_off(monkeypatch):
    rested = simulate(ball(1.0))
    monkeypatch.setattr(compliant_events, "can_rest", lambda compliance: False)
    integrated = simulate(ball(1.0))
    assert [f.t for f in rested.frames] == [f.t for f in integrated.frames]
    assert [e.t for e in rested.events] == [e.t for e in integrated.events]
    q = np.array([f.q for f in rested.frames]) - np.array([f.q for f in integrated.frames])
    v = np.array([f.v for f in rested.frames]) - np.array([f.v for f in integrated.frames])
    at_rest = [f.v[1] == 0.0 for f in rested.frames].index(True, 2)
    assert 0.1 < rested.frames[at_rest].t < 1.0  # it did rest, after its landing at 0.03 s
    assert not q[:at_rest].any() and not v[:at_rest].any()  # the same bits before
    assert np.abs(q).max() <= 16 * np.spacing(R)
    assert np.abs(v).max() <= 16 * np.spacing(R) * math.sqrt(K / M)


@pytest.mark.parametrize(
    "scene",
    [
        lambda t_end: ball(t_end, damping=0.0),  # undamped: it never settles
        lambda t_end: ball(t_end, slope=0.01),  # a slanted floor without friction: it slides
    ],
)
def test_a_body_that_does_not_rest_is_integrated_to_the_end(scene, monkeypatch):
    short_run, short = counted_run(scene(0.6), monkeypatch, after=0.3)
    _, long = counted_run(scene(0.9), monkeypatch, after=0.3)
    assert long > 1.5 * short > 0
    assert short_run.frames[-1].v.any()
