"""Compliant stops of beads on rails in closed form (p = 1): exact motion, exact energy.

While a linear compliant stop presses a bead, the bead's flow is linear (the
stop a spring k and a damper c to the ground with rest position x_w ± r):
the engine's closed-form linear flow gives the motion to round-off. The
expected numbers are closed forms written here (paper 003 (12), the damped
oscillator), and the energy balance E_total + E_dissipated − E_input, which
no integrator with an error tolerance keeps to round-off.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver import flight
from solver.events import EventDrivenStepper
from solver.flight import DOP853
from solver.scene import parse_scene
from solver.simulation import Trajectory, drive, simulate
from solver.system import System

R = 0.1  # bead radius (m)


def rail_scene(
    beads: list[tuple[float, float, float]],
    stops: list[tuple[float, dict]],
    t_end: float = 1.0,
    dt_out: float = 1e-3,
    extra: dict | None = None,
) -> object:
    """Beads ``(mass, x, vx)`` on the rail y = 0 between vertical compliant stops ``(x_w, law)``."""
    data = {
        "format": "impactgui-scene",
        "version": 2,
        "gravity": [0.0, 0.0],
        "boundaries": [
            {"id": f"stop{j}", "type": "segment", "a": [x, -1.0], "b": [x, 1.0], "compliance": law}
            for j, (x, law) in enumerate(stops)
        ],
        "bodies": [
            {"id": f"b{j}", "type": "bead", "mass": m, "radius": R, "x": x, "rail_y": 0.0, "vx": v}
            for j, (m, x, v) in enumerate(beads)
        ],
        "solver": {"t_end": t_end, "dt_out": dt_out},
    }
    data.update(extra or {})
    return parse_scene(data)


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


def run_dop853(scene) -> Trajectory:
    """The same run with every phase integrated by DOP853 (no closed form)."""
    system = System(scene)
    stepper = EventDrivenStepper(system, scene.solver.t_end, scene.solver.dt_out, closed_form=False)
    trajectory = Trajectory(system)
    drive(stepper, trajectory)
    return trajectory


def times(run, kind: str) -> list[float]:
    return [e.t for e in run.events if e.type == kind]


M, V, K = 2.0, 1.5, 2e4
T_TOUCH = (1.0 - R) / V  # the bead from x = 0 touches the stop at x = 1


def test_elastic_stop_motion_is_paper_003s_half_sine_to_round_off():
    run = simulate(rail_scene([(M, 0.0, V)], [(1.0, {"stiffness": K})]))
    lam = math.sqrt(K / M)
    (touch,), (release,) = times(run, "touch"), times(run, "release")
    assert touch == pytest.approx(T_TOUCH, abs=1e-13)
    assert release - touch == pytest.approx(math.pi / lam, abs=1e-13)
    inside = [f for f in run.frames if touch < f.t < release]
    assert len(inside) > 20
    for f in inside:  # paper 003 (12): x = x_T + (V/λ) sin λ(t − T)
        tau = f.t - touch
        assert f.q[0] == pytest.approx(1.0 - R + V / lam * math.sin(lam * tau), abs=1e-13)
        assert f.v[0] == pytest.approx(V * math.cos(lam * tau), abs=1e-11)
        (contact,) = f.contacts
        assert contact.lam == pytest.approx(K * V / lam * math.sin(lam * tau), abs=1e-9)
    assert run.frames[-1].v[0] == pytest.approx(-V, abs=1e-13)
    assert np.ptp(balance(run)) <= 1e-13 * 0.5 * M * V * V


def test_damped_stop_dissipates_exactly_what_the_bead_lost():
    zeta = 0.3
    c = 2 * zeta * math.sqrt(K * M)
    run = simulate(rail_scene([(M, 0.0, V)], [(1.0, {"stiffness": K, "damping": c})]))
    (touch,), (release,) = times(run, "touch"), times(run, "release")
    # the closed form: δ = (V/ω_d) e^(−ζωt) sin ω_d t, k δ + c δ̇ = 0 at
    # ω_d t = π − atan2(2ζ√(1−ζ²), 1 − 2ζ²)
    w = math.sqrt(K / M)
    wd = w * math.sqrt(1 - zeta * zeta)
    t_r = (math.pi - math.atan2(2 * zeta * math.sqrt(1 - zeta**2), 1 - 2 * zeta**2)) / wd
    rate = V * math.exp(-zeta * w * t_r) * (math.cos(wd * t_r) - zeta * w / wd * math.sin(wd * t_r))
    assert release - touch == pytest.approx(t_r, abs=1e-13)
    assert run.frames[-1].v[0] == pytest.approx(rate, abs=1e-12)
    # released with δ > 0: the stop's energy then goes out as loss, so all of
    # ½ m (V² − v_exit²) ends dissipated, and the balance holds on every frame
    assert run.frames[-1].energy.dissipated == pytest.approx(
        0.5 * M * (V * V - rate * rate), rel=1e-12
    )
    assert np.ptp(balance(run)) <= 1e-13 * 0.5 * M * V * V
    assert min(s.lam for f in run.frames for s in f.contacts) >= 0.0


def test_the_closed_form_agrees_with_dop853():
    scene = rail_scene(
        [(M, 0.0, V), (1.0, 0.5, -0.5)],
        [(-0.8, {"stiffness": 5e3, "damping": 20.0}), (1.0, {"stiffness": K})],
        t_end=2.0,
        dt_out=0.01,
        extra={
            "springs": [{"a": "b0", "b": "b1", "stiffness": 40.0, "rest_length": 0.5}],
            "forces": [{"body": "b1", "amplitude": [3.0, 0.0], "omega": 5.0}],
        },
    )
    exact, ode = simulate(scene), run_dop853(scene)
    assert [e.type for e in exact.events] == [e.type for e in ode.events]
    np.testing.assert_allclose(times(exact, "release"), times(ode, "release"), atol=1e-8)
    np.testing.assert_allclose(exact.frames[-1].q, ode.frames[-1].q, atol=1e-7)
    # the closed form keeps the balance to round-off, DOP853 to its tolerance
    scale = max(f.energy.kinetic + f.energy.spring + abs(f.energy.input) for f in exact.frames)
    assert np.ptp(balance(exact)) <= 1e-12 * scale


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_beads=st.sampled_from([1, 2]),
    k=st.floats(1e4, 1e6),  # the deepest overlap v√(m/k) < R: no centre crosses a stop
    zeta=st.sampled_from([0.0, 0.05, 0.5, 1.0, 2.0]),
    v=st.floats(0.3, 3.0),
    spring_k=st.sampled_from([0.0, 30.0]),
    spring_c=st.sampled_from([0.0, 0.3]),
    force=st.sampled_from([0.0, 4.0]),
)
def test_random_compliant_bead_scenes_keep_the_energy_to_round_off(
    n_beads, k, zeta, v, spring_k, spring_c, force
):
    """Beads between two linear stops with springs, dampers and forcing (issue 22's property).

    E_total + E_dissipated − E_input is constant to round-off, the stops
    never pull, and without any damping or forcing all the energy comes back.
    """
    masses = (M, 0.7)[:n_beads]
    beads = [(masses[0], 0.0, v), (masses[-1], 0.25, -0.3 * v)][:n_beads]
    c = 2 * zeta * math.sqrt(k * M)
    law = {"stiffness": k, "damping": c}
    extra: dict = {"springs": [], "forces": []}
    if spring_k:
        other = {"b": "b1"} if n_beads == 2 else {"anchor": [-0.5, 0.0]}
        extra["springs"].append(
            {"a": "b0", **other, "stiffness": spring_k, "rest_length": 0.3, "damping": spring_c}
        )
    if force:
        extra["forces"].append({"body": "b0", "amplitude": [force, 0.0], "omega": 7.0})
    if n_beads == 2:  # the beads meet rigidly and elastically between the stops
        extra["contact"] = {"restitution": 1.0}
    run = simulate(rail_scene(beads, [(-0.5, law), (0.5, law)], 2.0, 0.01, extra))
    assert run.status == "finished", run.message
    assert times(run, "touch")
    assert all(s.lam >= 0.0 for f in run.frames for s in f.contacts)
    scale = max(f.energy.kinetic + f.energy.spring + abs(f.energy.input) for f in run.frames)
    assert np.ptp(balance(run)) <= 1e-12 * scale
    if c == 0.0 and not spring_c and not force:  # all the energy comes back
        assert run.frames[-1].energy.dissipated == pytest.approx(0.0, abs=1e-12 * scale)
        first, last = run.frames[0].energy, run.frames[-1].energy
        assert last.kinetic + last.spring == pytest.approx(first.kinetic + first.spring, rel=1e-12)


@pytest.mark.parametrize("zeta", [0.0, 0.2])
def test_two_beads_on_a_linear_contact_are_a_damped_oscillator_of_the_reduced_mass(
    zeta, monkeypatch
):
    """Bead–bead ``contact.compliance`` (p = 1) in closed form: the relative motion of μ.

    The centre of mass moves uniformly; the overlap δ = r₁ + r₂ − (x₂ − x₁)
    obeys μ δ̈ + c δ̇ + k δ = 0 from δ = 0, δ̇ = U (the closing speed), so
    δ = (U/ω_d) e^(−ζωτ) sin ω_d τ, ω² = k/μ, until k δ + c δ̇ = 0 at
    ω_d τ = π − atan2(2ζ√(1−ζ²), 1 − 2ζ²).
    """
    m1, m2, v1, v2, k, r = 2.0, 0.7, 1.5, -0.3, 3e4, 0.05
    mu, total = m1 * m2 / (m1 + m2), m1 + m2
    c = 2.0 * zeta * math.sqrt(k * mu)
    data = {
        "format": "impactgui-scene",
        "version": 2,
        "gravity": [0.0, 0.0],
        "contact": {"compliance": {"stiffness": k, "damping": c}},
        "bodies": [
            {
                "id": "b0",
                "type": "bead",
                "mass": m1,
                "radius": r,
                "x": 0.0,
                "rail_y": 0.0,
                "vx": v1,
            },
            {
                "id": "b1",
                "type": "bead",
                "mass": m2,
                "radius": r,
                "x": 0.4,
                "rail_y": 0.0,
                "vx": v2,
            },
        ],
        "solver": {"t_end": 0.3, "dt_out": 5e-4},
    }
    started = []  # every phase is the closed-form flow: DOP853 is never started

    def no_ode(*args, **kwargs):
        started.append(args[1])
        return DOP853(*args, **kwargs)

    monkeypatch.setattr(flight, "DOP853", no_ode)
    run = simulate(parse_scene(data))
    assert started == []
    w = math.sqrt(k / mu)
    wd = w * math.sqrt(1.0 - zeta * zeta)
    closing = v1 - v2
    t_touch = (0.4 - 2 * r) / closing
    t_rel = (math.pi - math.atan2(2 * zeta * math.sqrt(1 - zeta**2), 1 - 2 * zeta**2)) / wd
    x_cm0, v_cm = m2 * 0.4 / total, (m1 * v1 + m2 * v2) / total

    def overlap(tau: float) -> tuple[float, float]:
        decay = math.exp(-zeta * w * tau)
        s, co = math.sin(wd * tau), math.cos(wd * tau)
        return closing / wd * decay * s, closing * decay * (co - zeta * w / wd * s)

    (touch,), (release,) = times(run, "touch"), times(run, "release")
    assert touch == pytest.approx(t_touch, abs=1e-14)
    assert release - touch == pytest.approx(t_rel, abs=1e-13)
    inside = [f for f in run.frames if touch < f.t < release]
    assert len(inside) > 20
    for f in inside:
        delta, rate = overlap(f.t - touch)
        x_cm = x_cm0 + v_cm * f.t
        # round-off of the flow (1e-14 m, 8e-13 m/s, 4e-10 N measured)
        assert f.q[0] == pytest.approx(x_cm - m2 / total * (2 * r - delta), abs=5e-14)
        assert f.q[1] == pytest.approx(x_cm + m1 / total * (2 * r - delta), abs=5e-14)
        assert f.v[0] == pytest.approx(v_cm + m2 / total * rate, abs=5e-12)
        (contact,) = f.contacts
        assert contact.lam == pytest.approx(k * delta + c * rate, abs=2e-9)
    _, rate = overlap(t_rel)
    last = run.frames[-1]
    assert last.v[0] == pytest.approx(v_cm + m2 / total * rate, abs=5e-12)
    assert last.v[1] == pytest.approx(v_cm - m1 / total * rate, abs=5e-12)
    # the loss is the relative motion's: ½ μ (U² − u²), all of it once out of the overlap
    lost = 0.5 * mu * (closing**2 - rate**2)
    assert last.energy.dissipated == pytest.approx(lost, abs=2e-12)
    assert np.ptp(balance(run)) <= 1e-13 * 0.5 * (m1 * v1**2 + m2 * v2**2)
