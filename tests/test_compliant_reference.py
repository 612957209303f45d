"""Closed forms of a mass against a compliant stop (solver.compliance, solver.reference).

Each is checked against an independent numerical integration written here
(scipy's solve_ivp at tight tolerances) or a formula of paper 003.
"""

from __future__ import annotations

import io
import itertools
import json
import math

import numpy as np
import pytest
from scipy.integrate import quad, solve_ivp

from solver import cli
from solver.compliant_stop import (
    HERTZ_FACTOR,
    hertz_overlap,
    hertz_stop,
    linear_overlap,
    linear_release_time,
    linear_stop,
)
from solver.reference import compare_trajectory, recognise
from solver.scene import parse_scene
from solver.simulation import simulate
from tests.test_compliant_contact import stop_scene

M, V = 2.0, 1.5


def integrated_stop(m, k, c, p, v):
    """Touch to release by solve_ivp: ``m δ̈ = −(k δ^p + c δ̇)`` until that force is 0."""

    def press(y):  # the spring continued past δ = 0 (odd), so the event's root is simple
        return k * math.copysign(abs(y[0]) ** p, y[0]) + c * y[1]

    def rhs(t, y):
        return [y[1], -press(y) / m]

    def released(t, y):
        return press(y) if t > 0 else 1.0

    released.terminal, released.direction = True, -1
    guess = 10 * math.pi * math.sqrt(m / k)
    sol = solve_ivp(
        rhs,
        (0, 50 * guess),
        [0.0, v],
        method="DOP853",
        rtol=1e-13,
        atol=1e-16,
        events=released,
        dense_output=True,
    )
    return sol.t_events[0][0], sol.y_events[0][0], sol


@pytest.mark.parametrize("zeta", [0.0, 0.1, 0.5, 0.9, 1.0, 2.0])
def test_linear_release_time_and_exit_speed_match_an_integration(zeta):
    k = 2e4
    c = 2 * zeta * math.sqrt(k * M)
    t_r, y_r, _ = integrated_stop(M, k, c, 1.0, V)
    impact = linear_stop(M, k, c, V)
    assert impact.duration == pytest.approx(t_r, rel=1e-9)
    assert impact.exit_speed == pytest.approx(-y_r[1], rel=1e-8, abs=1e-12)
    assert impact.overlap_at_release == pytest.approx(y_r[0], rel=1e-7, abs=1e-13)
    assert impact.restitution == pytest.approx(-y_r[1] / V, rel=1e-8, abs=1e-12)
    assert linear_release_time(M, k, c) == impact.duration
    # the force k δ + c δ̇ integrated over the contact is the momentum change (1 + e) m V
    total, _ = quad(
        lambda t: float(np.dot((k, c), linear_overlap(M, k, c, V, t))),
        0,
        impact.duration,
        epsabs=1e-13,
        limit=200,
    )
    assert total == pytest.approx((1 + impact.restitution) * M * V, rel=1e-9)
    assert impact.impulse == pytest.approx(total, rel=1e-9)


def test_the_undamped_linear_stop_is_paper_003():
    k = 2e4
    lam = math.sqrt(k / M)
    impact = linear_stop(M, k, 0.0, V)
    assert impact.duration == pytest.approx(math.pi / lam, rel=1e-15)  # (10)
    assert impact.exit_speed == pytest.approx(V, rel=1e-12)  # (10): ẋ(T + τ) = −V
    assert impact.peak_force == pytest.approx(V * math.sqrt(k * M), rel=1e-15)
    t = np.linspace(0, math.pi / lam, 7)
    delta, _ = linear_overlap(M, k, 0.0, V, t)
    np.testing.assert_allclose(delta, V / lam * np.sin(lam * t), atol=1e-15)  # (12)


def test_the_damped_peak_force_is_the_largest_of_the_force_curve():
    k, c = 2e4, 40.0
    t = np.linspace(0, linear_release_time(M, k, c), 200_001)
    d, r = linear_overlap(M, k, c, V, t)
    assert linear_stop(M, k, c, V).peak_force == pytest.approx((k * d + c * r).max(), rel=1e-9)


def test_hertz_contact_time_and_overlap_match_an_integration():
    k = 1e7
    assert HERTZ_FACTOR == pytest.approx(2.943, abs=5e-4)
    t_r, y_r, sol = integrated_stop(M, k, 0.0, 1.5, V)
    impact = hertz_stop(M, k, V)
    assert impact.duration == pytest.approx(t_r, rel=1e-9)
    assert -y_r[1] == pytest.approx(V, rel=1e-9)
    ts = np.linspace(0, t_r, 11)
    delta, rate = hertz_overlap(M, k, V, ts)
    want = sol.sol(ts)
    np.testing.assert_allclose(delta, want[0], atol=1e-10 * impact.duration * V)
    np.testing.assert_allclose(rate, want[1], atol=1e-8 * V)
    delta_m = (5 * M * V * V / (4 * k)) ** 0.4
    assert impact.peak_force == pytest.approx(k * delta_m**1.5, rel=1e-15)


def test_stiffer_stops_tend_to_the_rigid_impulse_in_ever_shorter_times():
    zeta = 0.3
    ks = 10.0 ** np.arange(3, 10)
    impacts = [linear_stop(M, k, 2 * zeta * math.sqrt(k * M), V) for k in ks]
    e = impacts[0].restitution  # the same for every k at one ζ
    for impact in impacts:
        assert impact.impulse == pytest.approx((1 + e) * M * V, rel=1e-12)
        assert impact.restitution == pytest.approx(e, rel=1e-12)
    durations = np.array([impact.duration for impact in impacts])
    assert all(b < a for a, b in itertools.pairwise(durations))
    # τ·λ is a function of ζ alone: the contact time goes to 0 as 1/√k
    np.testing.assert_allclose(durations * np.sqrt(ks / M), durations[0] * math.sqrt(ks[0] / M))


@pytest.mark.parametrize(
    "compliance",
    [{"stiffness": 2e4}, {"stiffness": 2e4, "damping": 40.0}, {"stiffness": 1e7, "exponent": 1.5}],
)
def test_a_run_follows_the_compliant_stop_reference(compliance):
    scene = stop_scene(compliance)
    reference = recognise(scene)
    assert reference is not None and reference.name == "compliant_stop"
    comparison = compare_trajectory(reference, simulate(scene))
    assert comparison.impact_time_difference < 1e-9
    assert max(comparison.max_difference.values()) < 1e-7


def test_rigid_references_do_not_claim_a_compliant_scene():
    data = {
        "format": "impactgui-scene",
        "version": 2,
        "gravity": [0.0, 0.0],
        "boundaries": [
            {
                "id": "w",
                "type": "segment",
                "a": [1.0, -1.0],
                "b": [1.0, 1.0],
                "compliance": {"stiffness": 1e3},
            }
        ],
        "bodies": [
            {
                "id": "b",
                "type": "bead",
                "mass": 1.0,
                "radius": 0.1,
                "x": 0.0,
                "rail_y": 0.0,
                "vx": 1.0,
            }
        ],
        "springs": [{"a": "b", "anchor": [-1.0, 0.0], "stiffness": 10.0, "rest_length": 1.0}],
    }
    assert recognise(parse_scene(data)) is None  # a rigid mass–spring–stop without compliance


def test_run_reference_writes_the_compliant_reference(tmp_path):
    path = tmp_path / "scene.json"
    data = {
        "format": "impactgui-scene",
        "version": 2,
        "gravity": [0.0, 0.0],
        "boundaries": [
            {
                "id": "stop",
                "type": "segment",
                "a": [1.0, -1.0],
                "b": [1.0, 1.0],
                "compliance": {"stiffness": 2e4},
            }
        ],
        "bodies": [
            {
                "id": "b",
                "type": "bead",
                "mass": 2.0,
                "radius": 0.1,
                "x": 0.0,
                "rail_y": 0.0,
                "vx": 1.5,
            }
        ],
        "solver": {"t_end": 1.0, "dt_out": 0.01},
    }
    path.write_text(json.dumps(data))
    stream = io.StringIO()
    status = cli.main(
        ["run", str(path), "--out", str(tmp_path / "out"), "--reference"], stderr=stream
    )
    assert status == 0, stream.getvalue()
    assert (tmp_path / "out" / "reference.csv").exists()
