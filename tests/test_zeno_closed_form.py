"""One frictionless contact on a straight feature: its bounces summed exactly to t∞.

A disk dropped onto a frictionless slope of angle θ: normal and tangential
motion decouple. Along the normal it falls ``h`` with ``g cos θ``, hits at
``t₀ = √(2h/(g cos θ))`` with ``w = g cos θ t₀`` and leaves every impact with
``e`` times the speed it came with: the flights ``2eᵏw/(g cos θ)`` sum to
``t∞ = t₀ + 2ew/((1 − e) g cos θ)``. Along the slope it slides freely,
``s = ½ g sin θ t²``, through the bounces and after them. The series of
the test is carried bounce by bounce here, independently of the engine.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver.simulation import simulate
from solver.zeno_series import ZenoSummer
from tests.scene_data import G_ACC, gravity_scene

R, H = 0.1, 0.05  # disk radius, drop of its lowest point along the normal (m)


def slope_drop(theta_deg, restitution, t_end, dt_out):
    theta = math.radians(theta_deg)
    t = np.array([math.cos(theta), -math.sin(theta)])  # down the slope
    n = np.array([math.sin(theta), math.cos(theta)])  # out of it
    a, b = -5.0 * t, 5.0 * t
    centre = (R + H) * n
    scene = gravity_scene(
        [
            {
                "id": "disk",
                "type": "wheel",
                "mass": 2.0,
                "inertia": 0.01,
                "radius": R,
                "position": centre.tolist(),
            }
        ],
        [{"id": "slope", "type": "segment", "a": a.tolist(), "b": b.tolist()}],
        restitution=restitution,
        t_end=t_end,
        dt_out=dt_out,
    )
    return scene, t, n


def series_height(t, restitution, g_n):
    """Height (m) of the disk's lowest point above the slope at time ``t`` (s), bounce by bounce."""
    t_hit = math.sqrt(2.0 * H / g_n)
    if t < t_hit:
        return H - 0.5 * g_n * t * t
    speed = restitution * g_n * t_hit
    if t >= t_hit + 2.0 * speed / ((1.0 - restitution) * g_n):
        return 0.0  # past the accumulation point
    while speed > 0.0:
        flight = 2.0 * speed / g_n
        if t < t_hit + flight:
            tau = t - t_hit
            return speed * tau - 0.5 * g_n * tau * tau
        t_hit += flight
        speed *= restitution
    return 0.0


@pytest.mark.parametrize(("theta_deg", "restitution"), [(0.0, 0.5), (20.0, 0.5), (35.0, 0.8)])
def test_disk_on_a_frictionless_slope_rests_at_the_accumulation_time(theta_deg, restitution):
    g_n = G_ACC * math.cos(math.radians(theta_deg))
    g_t = G_ACC * math.sin(math.radians(theta_deg))
    t0 = math.sqrt(2.0 * H / g_n)
    t_inf = t0 + 2.0 * restitution * g_n * t0 / ((1.0 - restitution) * g_n)
    t_end = t_inf + 0.05
    scene, t, n = slope_drop(theta_deg, restitution, t_end, 1e-4)
    trajectory = simulate(scene)
    assert trajectory.status == "finished"
    (zeno,) = [e for e in trajectory.events if e.type == "zeno"]
    # the 10-25 bounces before the series carry the round-off of positions (~1e-16 m) into
    # their times at speeds down to ~4e-3 m/s (a hop of ZENO_HEIGHT): a few 1e-12 s in all
    assert zeno.t == pytest.approx(t_inf, rel=0.0, abs=1e-11)
    # every sample, during the bounces and after them: the series of the test
    for frame in trajectory.frames:
        if frame.kind != "sample":
            continue
        c = frame.q[:2]
        height = float(c @ n) - R
        assert height == pytest.approx(series_height(frame.t, restitution, g_n), abs=1e-11)
        assert float(c @ t) == pytest.approx(0.5 * g_t * frame.t**2, abs=1e-11)
    # everything the normal motion had is dissipated: m g_n H, and the sliding keeps the rest
    last = trajectory.frames[-1]
    assert last.energy.dissipated == pytest.approx(2.0 * g_n * H, rel=1e-12)


def test_the_closed_form_is_the_limit_of_the_bounce_by_bounce_sum():
    # the engine's own bounce-by-bounce sum (the closed form switched off) stops where the
    # approach speed falls below ZENO_SPEED_FLOOR = 1e-12 m/s: within 2·1e-12/((1 − e) g)
    # of t∞, and its samples within rounding of the closed form's
    scene, _, _ = slope_drop(20.0, 0.5, 0.35, 1e-4)  # t∞ = 0.3125 s
    exact = simulate(scene)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ZenoSummer, "_geometric_series", lambda self, out, contact, a: None)
        summed = simulate(scene)
    (t_exact,) = [e.t for e in exact.events if e.type == "zeno"]
    (t_summed,) = [e.t for e in summed.events if e.type == "zeno"]
    assert 0.0 <= t_exact - t_summed <= 2.0 * 1e-12 / (0.5 * G_ACC)
    assert len(exact.frames) == len(summed.frames)
    for a, b in zip(exact.frames, summed.frames, strict=True):
        assert a.t == b.t and a.kind == b.kind
        np.testing.assert_allclose(a.q, b.q, rtol=0.0, atol=1e-13)
        np.testing.assert_allclose(a.v, b.v, rtol=0.0, atol=1e-12)
