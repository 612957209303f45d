"""Coulomb friction of wheels on compliant boundaries: slip, stick and the switch between.

A wheel pressed on a soft floor by its weight (F = mg at the equilibrium
overlap mg/k) rubs with −μF s while it slips and with the holding force
while it rolls, as long as that is at most μF. Expected numbers: closed forms
of a uniform disk (I = m r²/2) written here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver.scene import parse_scene
from solver.simulation import simulate

G, M, R, K = 9.81, 1.0, 0.1, 1e5
I_DISK = 0.5 * M * R * R


def floor_scene(
    mu: float,
    theta: float = 0.0,
    v: float = 0.0,
    t_end: float = 0.5,
    forces: list | None = None,
    solver: dict | None = None,
):
    """A wheel at rest-overlap on a soft floor inclined by θ (down to the right)."""
    e = (math.cos(theta), -math.sin(theta))  # downhill
    n = (math.sin(theta), math.cos(theta))  # the floor's normal
    depth = M * G * math.cos(theta) / K  # the overlap that carries the weight's normal part
    centre = [(R - depth) * n[0], (R - depth) * n[1]]
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "gravity": [0.0, -G],
            "boundaries": [
                {
                    "id": "floor",
                    "type": "segment",
                    "a": [-3 * e[0], -3 * e[1]],
                    "b": [3 * e[0], 3 * e[1]],
                    "friction": mu,
                    "compliance": {"stiffness": K, "damping": 50.0},
                }
            ],
            "bodies": [
                {
                    "id": "w",
                    "type": "wheel",
                    "mass": M,
                    "inertia": I_DISK,
                    "radius": R,
                    "position": centre,
                    "velocity": [v * e[0], v * e[1]],
                }
            ],
            "forces": forces or [],
            "solver": {"t_end": t_end, "dt_out": 0.01, **(solver or {})},
        }
    )


def kinds(run) -> list[str]:
    return [e.type for e in run.events]


def test_a_sliding_wheel_slips_with_mu_f_until_it_rolls():
    """ẍ = −μg, rω̇ = −2μg: it rolls from t_s = V/(3μg) on at 2V/3, having lost mV²/6."""
    mu, v = 0.3, 2.0
    run = simulate(floor_scene(mu, v=v))
    assert run.status == "finished", run.message
    t_s = v / (3 * mu * G)
    assert kinds(run) == ["stick"]
    assert run.events[0].t == pytest.approx(t_s, abs=1e-9)
    for f in run.frames:
        (contact,) = f.contacts
        assert contact.lam == pytest.approx(M * G, rel=1e-6)  # the weight, on the soft floor
        if f.t < t_s:
            # the tangential impulse is μ times the normal one: m(V − ẋ) = μ·mg·t
            assert f.v[0] == pytest.approx(v - mu * G * f.t, abs=1e-9)
            assert R * f.v[2] == pytest.approx(-2 * mu * G * f.t, abs=1e-9)
            assert contact.tau == pytest.approx(-mu * contact.lam, rel=1e-12)
        elif f.t > t_s:
            assert f.v[0] == pytest.approx(2 * v / 3, abs=1e-9)
            assert R * f.v[2] == pytest.approx(-2 * v / 3, abs=1e-9)
            assert abs(contact.tau) < 1e-6
    lost = run.frames[-1].energy.dissipated
    assert lost == pytest.approx(M * v * v / 6, rel=1e-7)


@pytest.mark.parametrize("mu", [0.5, 0.1])
def test_a_wheel_on_a_soft_incline_rolls_or_slips(mu):
    """At rest on 30°: rolls at (2/3)g sinθ if μ ≥ tanθ/3, else slides at g(sinθ − μ cosθ)."""
    theta = math.radians(30.0)
    run = simulate(floor_scene(mu, theta=theta))
    assert run.status == "finished", run.message
    e = np.array([math.cos(theta), -math.sin(theta)])
    last = run.frames[-1]
    speed = float(e @ last.v[:2])
    (contact,) = last.contacts
    if mu >= math.tan(theta) / 3:
        assert kinds(run) == []  # stuck from the start: it rolls
        assert speed == pytest.approx(2 / 3 * G * math.sin(theta) * last.t, rel=1e-7)
        assert R * last.v[2] == pytest.approx(-speed, abs=1e-9)
        assert contact.tau == pytest.approx(-M * G * math.sin(theta) / 3, rel=1e-6)
    else:
        assert kinds(run) == []  # slipping from the start, never stopping
        assert speed == pytest.approx(
            G * (math.sin(theta) - mu * math.cos(theta)) * last.t, rel=1e-7
        )
        assert contact.tau == pytest.approx(-mu * contact.lam, rel=1e-12)


def test_a_rolling_wheel_pushed_harder_than_3_mu_mg_starts_to_slip():
    """Forced by A sin ωt at its centre, rolling holds T = −A sin(ωt)/3: slip when it is μmg."""
    mu, omega = 0.3, 5.0
    amplitude = 6 * mu * M * G  # slip where sin ωt = 1/2
    run = simulate(
        floor_scene(mu, forces=[{"body": "w", "amplitude": [amplitude, 0.0], "omega": omega}])
    )
    assert run.status == "finished", run.message
    assert kinds(run)[0] == "slip"
    assert run.events[0].t == pytest.approx(math.pi / (6 * omega), abs=1e-9)
    for f in run.frames:
        if 0 < f.t < math.pi / (6 * omega):  # rolling: ẍ = (2/3)(A/m) sin ωt
            expected = 2 / 3 * amplitude / M * (1 - math.cos(omega * f.t)) / omega
            assert f.v[0] == pytest.approx(expected, abs=1e-8)
            (contact,) = f.contacts
            assert contact.tau == pytest.approx(-amplitude * math.sin(omega * f.t) / 3, abs=1e-6)


def test_the_time_stepper_rubs_a_sliding_wheel_with_mu_times_its_normal_impulse():
    """Moreau–Jean on a soft floor: slipping, the tangential impulse is μ times the normal one.

    Momentum says so whatever the normal force does step by step:
    m(V − ẋ) = μ·(m ẏ + m g t), and I ω = r·(tangential impulse), so
    rω = −2(V − ẋ) for I = m r²/2. Pressed at its rest overlap mg/k the
    normal force stays mg, so the closed forms of the event-driven test hold:
    ẋ = V − μgt, it sticks (u_t = ẋ + rω = 0 at each step's end) from
    V/(3μg) on and rolls at 2V/3, having lost mV²/6.
    """
    mu, v, h = 0.3, 2.0, 1e-4
    run = simulate(
        floor_scene(mu, v=v, solver={"method": "time-stepping", "dt": h}),
        method="time-stepping",
    )
    assert run.status == "finished", run.message
    t_s = v / (3 * mu * G)
    slipping = [f for f in run.frames if 0.0 < f.t < t_s]
    rolling = [f for f in run.frames if f.t > t_s]
    assert len(slipping) > 10 and len(rolling) > 10
    for f in slipping:
        normal_impulse = M * f.v[1] + M * G * f.t  # ∫F dt: the y momentum against gravity
        # to the round-off of some thousand steps (6e-14 and 1.5e-13 measured)
        assert M * (v - f.v[0]) == pytest.approx(mu * normal_impulse, abs=1e-12)
        assert R * f.v[2] == pytest.approx(-2 * (v - f.v[0]), abs=1e-12)
        (contact,) = f.contacts
        assert contact.tau == pytest.approx(-mu * contact.lam, rel=1e-12)
        assert f.v[0] == pytest.approx(v - mu * G * f.t, abs=1e-9)
    for f in rolling:
        assert f.v[0] + R * f.v[2] == pytest.approx(0.0, abs=1e-12)  # stuck: u_t = 0
        assert f.v[0] == pytest.approx(2 * v / 3, abs=1e-9)
    lost = run.frames[-1].energy.dissipated
    assert lost == pytest.approx(M * v * v / 6, rel=1e-9)
