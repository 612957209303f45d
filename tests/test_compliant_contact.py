"""Compliant contacts in the engines: paper 003's elastic stop, the damped stop, Hertz.

Every expected number is a closed form written here (paper 003 (10)–(12),
the damped oscillator, Hertz's contact time), not the program's output.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.special import beta

from solver.scene import parse_scene
from solver.simulation import simulate

M, V, K = 2.0, 1.5, 2e4  # kg, m/s, N/m
R, WALL = 0.1, 1.0  # bead radius, wall abscissa (m)
T_TOUCH = (WALL - R) / V  # 0.6 s


def stop_scene(
    compliance: dict,
    m: float = M,
    v: float = V,
    t_end: float = 1.0,
    dt_out: float = 1e-3,
    method: str = "event-driven",
    extra: dict | None = None,
) -> object:
    data = {
        "format": "impactgui-scene",
        "version": 2,
        "gravity": [0.0, 0.0],
        "boundaries": [
            {
                "id": "stop",
                "type": "segment",
                "a": [WALL, -1.0],
                "b": [WALL, 1.0],
                "compliance": compliance,
            }
        ],
        "bodies": [
            {"id": "b", "type": "bead", "mass": m, "radius": R, "x": 0.0, "rail_y": 0.0, "vx": v}
        ],
        "solver": {"t_end": t_end, "dt_out": dt_out, "method": method},
    }
    data.update(extra or {})
    return parse_scene(data)


def events_of(run, kind: str) -> list[float]:
    return [e.t for e in run.events if e.type == kind]


def balance(run) -> np.ndarray:
    """``E_total + E_dissipated − E_input`` of every frame (J)."""
    return np.array(
        [
            f.energy.kinetic
            + f.energy.potential
            + f.energy.spring
            + f.energy.dissipated
            - f.energy.input
            for f in run.frames
        ]
    )


def test_paper_003_elastic_stop_touch_release_exit_velocity_and_peak_force():
    run = simulate(stop_scene({"stiffness": K}))
    assert run.status == "finished", run.message
    lam = math.sqrt(K / M)
    assert events_of(run, "touch") == pytest.approx([T_TOUCH], abs=1e-9)
    assert events_of(run, "release") == pytest.approx([T_TOUCH + math.pi / lam], abs=1e-9)
    assert not events_of(run, "impact")  # a compliant contact is not an impact
    assert run.frames[-1].v[0] == pytest.approx(-V, abs=1e-9)
    forces = [c.lam for f in run.frames for c in f.contacts]
    peak = V * math.sqrt(K * M)  # paper 003: the half sine's height
    dt_out = 1e-3
    assert peak * math.cos(lam * dt_out / 2) <= max(forces) <= peak * (1 + 1e-9)
    assert min(forces) >= 0.0
    # x(t) during the contact: paper 003 (12), x = x_T + (V/λ) sin λ(t − T)
    for f in run.frames:
        if T_TOUCH < f.t < T_TOUCH + math.pi / lam:
            expected = (WALL - R) + V / lam * math.sin(lam * (f.t - T_TOUCH))
            assert f.q[0] == pytest.approx(expected, abs=1e-9)
    drift = balance(run)
    assert np.ptp(drift) <= 1e-8 * 0.5 * M * V * V


def damped_release(m: float, k: float, c: float, v: float) -> tuple[float, float]:
    """Release time and exit velocity of the damped linear stop, solved here.

    δ(t) = (v/ω_d) e^(−ζωt) sin ω_d t; the force k δ + c δ̇ first returns to 0
    after its start (found by brentq on the formula, bracketed in (0, π/ω_d)).
    """
    w = math.sqrt(k / m)
    zeta = c / (2 * math.sqrt(k * m))
    wd = w * math.sqrt(1 - zeta**2)

    def delta(t):
        return v / wd * math.exp(-zeta * w * t) * math.sin(wd * t)

    def rate(t):
        return v * math.exp(-zeta * w * t) * (math.cos(wd * t) - zeta * w / wd * math.sin(wd * t))

    t_r = brentq(lambda t: k * delta(t) + c * rate(t), 0.5 * math.pi / wd, math.pi / wd, xtol=1e-15)
    return t_r, rate(t_r)


def test_damped_stop_release_time_and_exit_velocity_of_the_closed_form():
    zeta = 0.1
    c = 2 * zeta * math.sqrt(K * M)
    run = simulate(stop_scene({"stiffness": K, "damping": c}))
    t_r, rate = damped_release(M, K, c, V)
    assert events_of(run, "release") == pytest.approx([T_TOUCH + t_r], abs=1e-9)
    assert run.frames[-1].v[0] == pytest.approx(rate, abs=1e-9)  # δ̇ < 0: leaving
    assert min(c.lam for f in run.frames for c in f.contacts) >= 0.0
    # the damper's loss and the energy the stop still held at the release are dissipated
    last = run.frames[-1].energy
    assert last.dissipated == pytest.approx(0.5 * M * (V * V - rate * rate), rel=1e-8)
    assert np.ptp(balance(run)) <= 1e-8 * 0.5 * M * V * V


def test_hertz_contact_time():
    k = 1e7  # N/m^1.5
    run = simulate(stop_scene({"stiffness": k, "exponent": 1.5}))
    delta_m = (5 * M * V * V / (4 * k)) ** 0.4
    tau = 2 * (delta_m / V) * 0.4 * beta(0.4, 0.5)
    assert tau == pytest.approx(2.943 * delta_m / V, rel=1e-3)
    (touch,), (release,) = events_of(run, "touch"), events_of(run, "release")
    assert release - touch == pytest.approx(tau, abs=1e-9)
    # δ^1.5 is not smooth at δ = 0 (its second derivative is unbounded): DOP853's
    # error estimate sees that less well than a linear spring's kink
    assert run.frames[-1].v[0] == pytest.approx(-V, abs=1e-8)


def test_a_stiff_stop_of_1e9_is_resolved():
    k = 1e9
    run = simulate(stop_scene({"stiffness": k}))
    (touch,), (release,) = events_of(run, "touch"), events_of(run, "release")
    assert release - touch == pytest.approx(math.pi * math.sqrt(M / k), abs=1e-9)
    assert run.frames[-1].v[0] == pytest.approx(-V, abs=1e-9)


def test_a_very_stiff_stop_against_one_gram_is_bounded_work():
    k, m = 1e12, 1e-3
    run = simulate(stop_scene({"stiffness": k}, m=m))
    assert run.status == "finished", run.message
    (touch,), (release,) = events_of(run, "touch"), events_of(run, "release")
    assert release - touch == pytest.approx(math.pi * math.sqrt(m / k), rel=1e-6)
    assert run.frames[-1].v[0] == pytest.approx(-V, rel=1e-8)


def test_stiffer_stops_tend_to_the_rigid_impulse():
    """The contact's impulse ∫F dt = m(V + v_exit) is (1 + e) m V for every k (linear)."""
    zeta = 0.2
    for k in (1e3, 1e6, 1e9):
        c = 2 * zeta * math.sqrt(k * M)
        run = simulate(stop_scene({"stiffness": k, "damping": c}))
        _, rate = damped_release(M, k, c, V)
        e = -rate / V
        assert M * (V - run.frames[-1].v[0]) == pytest.approx((1 + e) * M * V, rel=1e-8)
        (touch,), (release,) = events_of(run, "touch"), events_of(run, "release")
        assert release - touch < 4 * math.sqrt(M / k)


def test_the_time_stepper_takes_the_compliant_contact_as_a_force():
    run = simulate(stop_scene({"stiffness": K}, method="time-stepping"))
    assert run.status == "finished", run.message
    assert not events_of(run, "impact")
    assert run.frames[-1].v[0] == pytest.approx(-V, rel=2e-2)  # first order in dt
    assert max(c.lam for f in run.frames for c in f.contacts) == pytest.approx(
        V * math.sqrt(K * M), rel=5e-2
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    k=st.floats(1e2, 1e6),
    zeta=st.sampled_from([0.0, 0.05, 0.5, 1.0, 2.0]),
    p=st.sampled_from([1.0, 1.5]),
    v=st.floats(0.2, 3.0),
    spring_k=st.sampled_from([0.0, 50.0]),
    force=st.sampled_from([0.0, 5.0]),
)
def test_random_compliant_scenes_balance_energy_and_never_pull(k, zeta, p, v, spring_k, force):
    c = 2 * zeta * math.sqrt(k * M)
    extra: dict = {}
    if spring_k:
        extra["springs"] = [
            {
                "a": "b",
                "anchor": [-1.0, 0.0],
                "stiffness": spring_k,
                "rest_length": 1.0,
                "damping": 0.3,
            }
        ]
    if force:
        extra["forces"] = [{"body": "b", "amplitude": [force, 0.0], "omega": 7.0}]
    run = simulate(
        stop_scene(
            {"stiffness": k, "damping": c, "exponent": p}, v=v, t_end=1.5, dt_out=0.01, extra=extra
        )
    )
    assert run.status == "finished", run.message
    assert all(s.lam >= 0.0 for f in run.frames for s in f.contacts)
    scale = max(f.energy.kinetic + f.energy.spring + abs(f.energy.input) for f in run.frames)
    assert np.ptp(balance(run)) <= 1e-7 * scale
    if c == 0.0 and not spring_k and not force:  # all the energy comes back
        assert run.frames[-1].energy.kinetic == pytest.approx(0.5 * M * v * v, rel=1e-9)
        assert run.frames[-1].energy.dissipated == pytest.approx(0.0, abs=1e-9 * scale)


def test_a_system_run_event_driven_then_time_stepping_gives_the_fresh_time_stepping_run():
    from solver.simulation import make_stepper
    from solver.system import System

    scene = stop_scene({"stiffness": K, "damping": 40.0}, t_end=0.7)
    system = System(scene)
    simulate(system, method="event-driven")  # leaves its last phase's pressing set behind
    again = simulate(system, method="time-stepping")
    fresh = simulate(scene, method="time-stepping")
    assert make_stepper(system, method="time-stepping").system.compliance.engaged is None
    np.testing.assert_array_equal(again.frames[-1].v, fresh.frames[-1].v)


def test_a_slanted_stop_whose_end_regions_change_with_the_bead_runs_to_its_end():
    """Fuzz (issue 24, seed 2026, scene 1764): a compliant segment slanted across the rail,
    from (0, −0.2) to (1, 0.2). Before, the number of event rows (one per disk and feature
    whose Voronoi region holds the centre: the segment, its two ends) changed along the way,
    and the run failed with exit 3 at t = 0.44 s: "operands could not be broadcast
    together". Now one row per pair, always. The bead on the rail meets the slope with the
    normal's rail component n_x = −0.4/√1.16: undamped, it leaves at −V, the normal impulse
    2 M V / |n_x|."""
    slope = {
        "id": "stop",
        "type": "segment",
        "a": [0.0, -0.2],
        "b": [1.0, 0.2],
        "compliance": {"stiffness": K, "damping": 0.0, "exponent": 1.0},
    }
    run = simulate(stop_scene({}, extra={"boundaries": [slope]}))
    assert run.status == "finished"
    assert len(events_of(run, "touch")) == len(events_of(run, "release")) == 1
    (release,) = [e for e in run.events if e.type == "release"]
    assert release.normal_impulse == pytest.approx(2 * M * V * math.sqrt(1.16) / 0.4, rel=1e-9)
    assert run.frames[-1].v[0] == pytest.approx(-V, abs=1e-9)
    assert np.ptp(balance(run)) <= 1e-9 * 0.5 * M * V * V
