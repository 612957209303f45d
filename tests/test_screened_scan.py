"""The screened sub-point scan of free flights: the same run as searching every sub-interval.

Gaps of a flight that are not quadratics in time (a corner met by a falling
wheel) are searched on sub-points; with the states of all sub-points made in
one pass, only the sub-intervals where ``_may_hold_event`` sees a test of the
search hold are searched. On wheels among drawn ground (corners, steps, arcs)
the run must be the one that searches every sub-interval, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from solver.event_location import EventLocator
from solver.simulation import simulate
from tests.test_drawn_geometry import make_scene, wheel_scenes


def every_interval(self, gaps, values):
    """The screen switched off: every sub-interval is searched."""
    return np.ones(len(values) - 1, dtype=bool)


def run_rows(model):
    trajectory = simulate(model)
    frames = [(f.t, f.kind, f.q.tobytes(), f.v.tobytes()) for f in trajectory.frames]
    events = [(e.t, e.type, e.body, e.other, e.normal_impulse) for e in trajectory.events]
    return trajectory.status, frames, events


@settings(max_examples=150)
@given(wheel_scenes())
def test_screened_scan_gives_the_run_of_the_full_scan(case):
    boundaries, bodies, restitution, friction = case
    model = make_scene(bodies, boundaries, restitution=restitution, friction=friction)
    screened = run_rows(model)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EventLocator, "_may_hold_event", every_interval)
        full = run_rows(model)
    assert screened == full


def test_a_wheel_falling_onto_a_corner_is_found_by_the_screened_scan():
    # a wheel of radius r dropped from rest with its centre 0.3 m right of a step's corner
    # (x = 0, y = 0.1) and 0.3 m above it, r = 0.1: the corner is a vertex gap of an
    # accelerating disk (searched on sub-points); its centre at x = 0.05 meets the corner
    # when the vertical distance is sqrt(r² − 0.05²), after falling 0.3 − that
    r, x0, drop = 0.1, 0.05, 0.3
    boundaries = [{"id": "step", "type": "polyline", "points": [[-1, 0.1], [0, 0.1], [0, -1]]}]
    body = {
        "id": "wheel",
        "type": "wheel",
        "mass": 1.0,
        "inertia": 0.005,
        "radius": r,
        "position": [x0, 0.1 + drop],
        "velocity": [0.0, 0.0],
        "angular_velocity": 0.0,
    }
    trajectory = simulate(make_scene([body], boundaries, restitution=0.5))
    impact = next(e for e in trajectory.events if e.type == "impact")
    fall = drop - np.sqrt(r * r - x0 * x0)
    np.testing.assert_allclose(impact.t, np.sqrt(2.0 * fall / 9.81), rtol=1e-12)


@pytest.mark.parametrize("depth", [1e-4, 1e-5])
def test_a_wheel_skimming_a_peak_dips_into_it_between_two_sub_points(depth):
    # a wheel at 20 m/s whose free-flight path would pass the peak (0, 0) of two steep faces
    # with its rim ``depth`` below it: the gap to the peak is positive at every sub-point and
    # dips below zero between two of them (its u_n turns from closing to opening). Its impact
    # is at the first root of |c(t)| = r on the parabola c(t) = c0 + v t − ½ g t² ŷ, found
    # here by bisection on a fine grid
    r, v, x0, g = 0.1, 20.0, -0.9, 9.81
    y0 = r + 0.5 * g * (-x0 / v) ** 2 - depth
    boundaries = [{"id": "peak", "type": "polyline", "points": [[-0.05, -1], [0, 0], [0.05, -1]]}]
    body = {
        "id": "wheel",
        "type": "wheel",
        "mass": 1.0,
        "inertia": 0.005,
        "radius": r,
        "position": [x0, y0],
        "velocity": [v, 0.0],
        "angular_velocity": 0.0,
    }
    model = make_scene([body], boundaries, restitution=0.5)
    screened = run_rows(model)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EventLocator, "_may_hold_event", every_interval)
        assert run_rows(model) == screened
    impact = next(e for e in screened[2] if e[1] == "impact")

    def gap(t):
        return np.hypot(x0 + v * t, y0 - 0.5 * g * t * t) - r

    ts = np.linspace(0.0, -x0 / v, 100_001)
    k = int(np.argmax(gap(ts) < 0.0))
    lo, hi = ts[k - 1], ts[k]
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if gap(mid) < 0.0 else (mid, hi)
    np.testing.assert_allclose(impact[0], lo, rtol=0.0, atol=1e-12)
