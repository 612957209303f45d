"""Event-driven stepper against closed-form motions (MECHANICS §4, §7; papers 002, 003)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

import solver.event_handling as event_handling
import solver.events as events_module
import solver.impact_rules as impact_rules
from solver.errors import SolverError
from solver.events import EventDrivenStepper
from solver.scene import load_scene, parse_scene
from solver.simulation import make_stepper, simulate
from solver.system import System
from tests.jam_cascade import jammed_pair_cascade

G_ACC = 9.81


def scene(
    bodies,
    boundaries=(),
    springs=(),
    restitution=0.5,
    friction=0.0,
    law="staged",
    t_end=1.0,
    dt_out=0.01,
    gravity=(0.0, -G_ACC),
):
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "gravity": list(gravity),
            "contact": {"restitution": restitution, "friction": friction, "impact_law": law},
            "boundaries": list(boundaries),
            "bodies": list(bodies),
            "springs": list(springs),
            "solver": {"t_end": t_end, "dt_out": dt_out},
        }
    )


def impacts(trajectory):
    return [e for e in trajectory.events if e.type == "impact"]


def balance_spread(trajectory):
    balance = np.array([f.energy.balance for f in trajectory.frames])
    return float(np.ptp(balance)) / max(1.0, float(np.max(np.abs(balance))))


# ------------------------------------------------------------------ bouncing ball


def bouncing_ball(e=0.5, t_end=3.0, friction=0.0):
    r = 0.1
    return scene(
        [
            {
                "id": "ball",
                "type": "wheel",
                "mass": 2.0,
                "inertia": 0.01,
                "radius": r,
                "position": [0.0, 1.0 + r],
            }
        ],
        [{"id": "ground", "type": "segment", "a": [-5, 0], "b": [5, 0]}],
        restitution=e,
        friction=friction,
        t_end=t_end,
    )


def test_bouncing_ball_comes_to_rest_at_the_zeno_accumulation_time():
    e = 0.5
    trajectory = simulate(bouncing_ball(e))
    assert trajectory.status == "finished"
    hits = impacts(trajectory)
    assert hits[0].t == pytest.approx(math.sqrt(2.0 / G_ACC), abs=1e-12)
    assert len(hits) < 100
    zeno = [ev for ev in trajectory.events if ev.type == "zeno"]
    assert len(zeno) == 1
    t_rest = math.sqrt(2.0 / G_ACC) * (1.0 + e) / (1.0 - e)
    assert zeno[0].t == pytest.approx(t_rest, abs=1e-9)


def test_bouncing_ball_then_rests_with_contact_force_equal_to_its_weight():
    trajectory = simulate(bouncing_ball())
    resting = [f for f in trajectory.frames if f.t > 1.5]
    assert resting
    for frame in resting:
        assert frame.q[1] == pytest.approx(0.1, abs=1e-12)
        np.testing.assert_allclose(frame.v, 0.0, atol=1e-12)
        (contact,) = frame.contacts
        assert contact.lam == pytest.approx(2.0 * G_ACC, rel=1e-12)


def test_sample_contact_states_are_the_contact_kinematics_of_their_frame():
    model = bouncing_ball()
    system = System(model)
    trajectory = simulate(model)
    samples = [f for f in trajectory.frames if f.kind == "sample" and f.contacts]
    assert len(samples) > 100
    for frame in samples:
        (state,) = frame.contacts
        (contact,) = system.contacts(frame.q, frame.v)
        assert (state.u_n, state.u_t) == (contact.u_n, contact.u_t)
        assert state.point == tuple(contact.point) and state.normal == tuple(contact.n)


def test_bouncing_ball_balances_its_energy():
    trajectory = simulate(bouncing_ball())
    assert balance_spread(trajectory) < 1e-8
    zeno_loss = trajectory.frames[-1].energy.dissipated
    assert zeno_loss == pytest.approx(2.0 * G_ACC * 1.0, rel=1e-9)  # all of m g h is lost


def test_bouncing_ball_impact_frames_show_newtons_law():
    e = 0.5
    trajectory = simulate(bouncing_ball(e))
    pre = [f for f in trajectory.frames if f.kind == "pre"]
    post = [f for f in trajectory.frames if f.kind == "post"]
    assert len(pre) == len(post) == len(impacts(trajectory))
    for a, b in zip(pre, post, strict=True):
        assert a.t == b.t
        assert b.v[1] == pytest.approx(-e * a.v[1], rel=1e-12)


# ------------------------------------------------------------------ paper 002


def paper_002_scene(e, t_end=1.0, friction=0.0):
    """Masses m1, m2 on springs k to rest 0; gap x2 − x1 ≥ 0 via two beads of radius ρ."""
    rho = 0.05
    k = 8000.0
    return scene(
        [
            {
                "id": "m1",
                "type": "bead",
                "rail_y": 0.0,
                "mass": 200.0,
                "radius": rho,
                "x": -0.3 - rho,
                "vx": -1.0,
            },
            {
                "id": "m2",
                "type": "bead",
                "rail_y": 0.0,
                "mass": 100.0,
                "radius": rho,
                "x": 0.3 + rho,
                "vx": 1.0,
            },
        ],
        springs=[
            {"a": "m1", "anchor": [-rho, 0.0], "stiffness": k, "rest_length": 0.0},
            {"a": "m2", "anchor": [rho, 0.0], "stiffness": k, "rest_length": 0.0},
        ],
        restitution=e,
        friction=friction,
        t_end=t_end,
        dt_out=0.001,
    )


def free_oscillation(x0, v0, omega, t):
    return x0 * math.cos(omega * t) + v0 / omega * math.sin(omega * t)


def free_velocity(x0, v0, omega, t):
    return -x0 * omega * math.sin(omega * t) + v0 * math.cos(omega * t)


def first_meeting():
    """First time the free oscillators X1, X2 of paper 002 meet (closed form + brentq)."""
    w1, w2 = math.sqrt(8000.0 / 200.0), math.sqrt(8000.0 / 100.0)

    def gap(t):
        return free_oscillation(0.3, 1.0, w2, t) - free_oscillation(-0.3, -1.0, w1, t)

    ts = np.linspace(1e-6, 2.0, 20001)
    values = np.array([gap(t) for t in ts])
    k = int(np.nonzero(values < 0)[0][0])
    t_hit = brentq(gap, ts[k - 1], ts[k], xtol=1e-15)
    v1 = free_velocity(-0.3, -1.0, w1, t_hit)
    v2 = free_velocity(0.3, 1.0, w2, t_hit)
    return t_hit, v1, v2


@pytest.mark.parametrize("e", [0.0, 1.0])
def test_paper_002_first_impact_time_and_velocity_jump(e):
    trajectory = simulate(paper_002_scene(e))
    t_hit, v1, v2 = first_meeting()
    hit = impacts(trajectory)[0]
    assert hit.t == pytest.approx(t_hit, abs=1e-13)
    np.testing.assert_allclose(hit.v_minus, [v1, v2], rtol=1e-12)
    m1, m2 = 200.0, 100.0
    impulse = (1.0 + e) * m1 * m2 / (m1 + m2) * (v1 - v2)  # Newton's law on x2 − x1
    np.testing.assert_allclose(hit.v_plus, [v1 - impulse / m1, v2 + impulse / m2], rtol=1e-12)
    assert hit.normal_impulse == pytest.approx(impulse, rel=1e-12)


def next_meeting(t0, x1, v1, x2, v2):
    """Next time after ``t0`` the free oscillators of paper 002 meet, with their velocities."""
    w1, w2 = math.sqrt(8000.0 / 200.0), math.sqrt(8000.0 / 100.0)

    def gap(t):
        return free_oscillation(x2, v2, w2, t - t0) - free_oscillation(x1, v1, w1, t - t0)

    ts = t0 + np.linspace(1e-7, 2.0, 40001)
    values = np.array([gap(t) for t in ts])
    k = int(np.nonzero(values < 0)[0][0])
    t_hit = brentq(gap, ts[k - 1], ts[k], xtol=1e-15)
    return (
        t_hit,
        free_oscillation(x1, v1, w1, t_hit - t0),
        free_velocity(x1, v1, w1, t_hit - t0),
        free_velocity(x2, v2, w2, t_hit - t0),
    )


def test_paper_002_plastic_impacts_separate_or_move_together_as_the_contact_force_says():
    m1, m2, k = 200.0, 100.0, 8000.0
    trajectory = simulate(paper_002_scene(0.0))
    # Independent reference: free oscillations between plastic impacts. Moving together
    # (X1 = X2 = X) needs λ = k X (m1 − m2)/(m1 + m2) ≥ 0 on mass 2, i.e. X ≥ 0; the
    # pair separates when X returns to 0.
    t, x1, v1, x2, v2 = 0.0, -0.3, -1.0, 0.3, 1.0
    expected = []
    while True:
        t, x_hit, u1, u2 = next_meeting(t, x1, v1, x2, v2)
        v_common = (m1 * u1 + m2 * u2) / (m1 + m2)
        expected.append(("impact", t))
        if x_hit >= 0.0:
            omega = math.sqrt(2.0 * k / (m1 + m2))
            t_free = t + (math.pi - math.atan2(x_hit * omega, v_common)) / omega
            expected.append(("liftoff", t_free))
            break
        x1, v1, x2, v2 = x_hit, v_common, x_hit, v_common
    found = [(ev.type, ev.t) for ev in trajectory.events if ev.type in ("impact", "liftoff")]
    assert [kind for kind, _ in found[: len(expected)]] == [kind for kind, _ in expected]
    np.testing.assert_allclose(
        [t for _, t in found[: len(expected)]], [t for _, t in expected], atol=1e-12
    )
    assert balance_spread(trajectory) < 1e-12


def test_paper_002_elastic_run_conserves_energy():
    trajectory = simulate(paper_002_scene(1.0, t_end=3.0))
    assert len(impacts(trajectory)) >= 2
    energies = np.array([f.energy.total for f in trajectory.frames])
    assert np.ptp(energies) <= 1e-12 * energies.max()


# ------------------------------------------------------------------ paper 003


def two_stops(V=1.0, gap=0.1, t_end=1.0, dt_out=0.1):
    r = 0.02
    return scene(
        [{"id": "m", "type": "bead", "rail_y": 0.0, "mass": 1.5, "radius": r, "x": r, "vx": V}],
        [
            {"id": "left", "type": "segment", "a": [0, -1], "b": [0, 1]},
            {"id": "right", "type": "segment", "a": [gap + 2 * r, -1], "b": [gap + 2 * r, 1]},
        ],
        restitution=1.0,
        t_end=t_end,
        dt_out=dt_out,
    )


def test_mass_between_two_stops_is_a_sawtooth_conserving_energy_over_ten_thousand_impacts():
    V, gap, m = 1.0, 0.1, 1.5
    n = 10_000
    # one output frame per 100 s: only the impacts cost
    trajectory = simulate(two_stops(V, gap, t_end=n * gap / V - 0.5 * gap / V, dt_out=100.0))
    hits = impacts(trajectory)
    assert len(hits) == n - 1
    times = np.array([h.t for h in hits])
    np.testing.assert_allclose(np.diff(times), gap / V, rtol=0, atol=1e-9)
    np.testing.assert_allclose(times, gap / V * np.arange(1, n), rtol=1e-11)
    # every bounce reverses the speed, impulse 2 m V, no energy change
    np.testing.assert_allclose([abs(h.v_plus[0]) for h in hits], V, rtol=1e-13)
    np.testing.assert_allclose([h.normal_impulse for h in hits], 2.0 * m * V, rtol=1e-13)
    assert max(abs(h.energy_change) for h in hits) <= 1e-13 * 0.5 * m * V * V
    for frame in trajectory.frames:
        assert frame.energy.total == pytest.approx(0.5 * m * V * V, rel=1e-13)
        assert frame.energy.dissipated == pytest.approx(0.0, abs=1e-13)


def spring_stop(x1, V, restitution=1.0, t_end=2.0):
    """Bead on a spring (rest at x = 0), stop at x = x1 on its right, leaving it at speed −V."""
    r, m, k = 0.02, 0.5, 200.0
    return scene(
        [{"id": "m", "type": "bead", "rail_y": 0.0, "mass": m, "radius": r, "x": x1, "vx": -V}],
        [{"id": "stop", "type": "segment", "a": [x1 + r, -1], "b": [x1 + r, 1]}],
        springs=[{"a": "m", "anchor": [0.0, 0.0], "stiffness": k, "rest_length": 0.0}],
        restitution=restitution,
        t_end=t_end,
        dt_out=0.01,
    ), math.sqrt(k / m)


def test_mass_spring_stop_at_rest_point_has_period_pi_over_lambda():
    V = 0.7
    model, lam = spring_stop(0.0, V, t_end=3.3)
    trajectory = simulate(model)
    hits = impacts(trajectory)
    assert len(hits) >= 20
    times = np.array([h.t for h in hits])
    np.testing.assert_allclose(times, math.pi / lam * np.arange(1, len(hits) + 1), atol=1e-12)
    for frame in trajectory.frames:
        t = frame.t
        assert frame.q[0] == pytest.approx(-(V / lam) * abs(math.sin(lam * t)), abs=1e-12)
    assert balance_spread(trajectory) < 1e-12


@pytest.mark.parametrize("x1", [0.05, -0.05])
def test_mass_spring_stop_period_follows_the_general_formula_for_either_side(x1):
    V = 0.7
    model, lam = spring_stop(x1, V)
    trajectory = simulate(model)
    # x(t) = x1 cos λt − (V/λ) sin λt = A cos(λt + θ); back at x1 when λT = 2π − 2θ
    theta = math.atan2(V / lam, x1)
    period = (2.0 * math.pi - 2.0 * theta) / lam
    times = np.array([h.t for h in impacts(trajectory)])
    assert len(times) >= 5
    np.testing.assert_allclose(times, period * np.arange(1, len(times) + 1), atol=1e-12)


def test_mass_spring_stop_loses_the_newton_share_of_energy_per_impact():
    R, V, m = 0.8, 0.7, 0.5
    model, _ = spring_stop(0.03, V, restitution=R, t_end=0.6)
    hits = impacts(simulate(model))
    assert hits
    for hit in hits:
        v = hit.v_minus[0]
        assert hit.energy_change == pytest.approx(-(1.0 - R * R) / 2.0 * m * v * v, rel=1e-12)
        assert hit.v_plus[0] == pytest.approx(-R * v, rel=1e-12)


# ------------------------------------------------------------------ closed-form linear phases

SCENES = Path(__file__).parents[1] / "resources" / "scenes"


def run_stepper(model, **options):
    """Frames and events of an event-driven run of ``model`` with stepper ``options``."""
    stepper = EventDrivenStepper(System(model), model.solver.t_end, model.solver.dt_out, **options)
    frames, events = [], []
    while stepper.status == "running":
        out = stepper.step()
        frames += out.frames
        events += out.events
    assert stepper.status == "finished", stepper.message
    return frames, events


@pytest.mark.parametrize(
    "name",
    [
        "two_masses_elastic.json",
        "two_masses_plastic.json",
        "mass_spring_stop_at_rest.json",
        "mass_spring_stop_offset.json",
    ],
)
def test_linear_bead_scenes_balance_their_energy_to_rounding(name):
    trajectory = simulate(load_scene(SCENES / name))
    assert trajectory.status == "finished", trajectory.message
    assert impacts(trajectory)
    assert balance_spread(trajectory) < 1e-12


def test_forced_chain_in_closed_form_agrees_with_dop853():
    model = load_scene(SCENES / "chain_forced.json")
    exact, exact_events = run_stepper(model)
    ode, ode_events = run_stepper(model, closed_form=False, rtol=1e-12, atol=1e-14)
    hits = [ev.t for ev in exact_events if ev.type == "impact"]
    assert len(hits) >= 10
    assert [ev.type for ev in exact_events] == [ev.type for ev in ode_events]
    np.testing.assert_allclose(hits, [ev.t for ev in ode_events if ev.type == "impact"], atol=1e-8)
    assert [f.kind for f in exact] == [f.kind for f in ode]
    np.testing.assert_allclose([f.t for f in exact], [f.t for f in ode], rtol=0, atol=1e-8)
    np.testing.assert_allclose([f.q for f in exact], [f.q for f in ode], rtol=0, atol=1e-8)
    np.testing.assert_allclose([f.v for f in exact], [f.v for f in ode], rtol=0, atol=1e-8)
    for field in ("spring", "dissipated", "input"):
        np.testing.assert_allclose(
            [getattr(f.energy, field) for f in exact],
            [getattr(f.energy, field) for f in ode],
            rtol=0,
            atol=1e-8,
        )
    balance = np.array([f.energy.balance for f in exact])
    assert np.ptp(balance) <= 1e-12 * max(1.0, float(np.max(np.abs(balance))))


def test_friction_between_beads_on_one_rail_does_nothing():
    # a bead's H is t_x = n_y = 0 for a normal along the rail: no friction force, no loss
    smooth = simulate(paper_002_scene(0.0))
    rough = simulate(paper_002_scene(0.0, friction=0.8))
    assert any(ev.type == "liftoff" for ev in rough.events)
    assert [ev.type for ev in rough.events] == [ev.type for ev in smooth.events]
    np.testing.assert_allclose(
        [ev.t for ev in rough.events], [ev.t for ev in smooth.events], rtol=0, atol=1e-14
    )
    np.testing.assert_allclose(
        [f.q for f in rough.frames], [f.q for f in smooth.frames], rtol=0, atol=1e-14
    )
    np.testing.assert_allclose(
        [f.energy.dissipated for f in rough.frames],
        [f.energy.dissipated for f in smooth.frames],
        rtol=1e-13,
    )


def test_bead_passing_its_springs_anchor_crosses_the_sign_change():
    # spring of rest length L0 to an anchor the bead runs through: the force
    # −k(x − L0 sign x) jumps there; closed form up to it, DOP853 across it
    model = scene(
        [
            {
                "id": "m",
                "type": "bead",
                "rail_y": 0.0,
                "mass": 1.0,
                "radius": 0.02,
                "x": 0.05,
                "vx": -3,
            }
        ],
        springs=[
            {"a": "m", "anchor": [0.0, 0.0], "stiffness": 100.0, "rest_length": 0.1, "damping": 0.5}
        ],
        t_end=2.0,
        dt_out=0.01,
    )
    exact, _ = run_stepper(model)
    ode, _ = run_stepper(model, closed_form=False, rtol=1e-12, atol=1e-14)
    x = np.array([f.q[0] for f in exact])
    assert np.sum(np.diff(np.sign(x)) != 0) >= 2
    np.testing.assert_allclose(x, [f.q[0] for f in ode], rtol=0, atol=1e-8)
    balance = np.array([f.energy.balance for f in exact])
    assert np.ptp(balance) <= 1e-8 * float(np.max(np.abs(balance)))


# ------------------------------------------------------------------ sliding and rolling


def test_wheel_launched_sliding_on_the_floor_starts_rolling_when_its_slip_stops():
    m, J, r, mu, v0 = 2.0, 0.01, 0.1, 0.3, 2.0
    model = scene(
        [
            {
                "id": "wheel",
                "type": "wheel",
                "mass": m,
                "inertia": J,
                "radius": r,
                "position": [0.0, r],
                "velocity": [v0, 0.0],
            }
        ],
        [{"id": "ground", "type": "segment", "a": [-5, 0], "b": [5, 0]}],
        restitution=0.0,
        friction=mu,
        t_end=0.5,
        dt_out=0.01,
    )
    trajectory = simulate(model)
    assert trajectory.status == "finished", trajectory.message
    # sliding: m ẍ = −μ m g, J ω̇ = −μ m g r; slip u_t = ẋ + r ω reaches 0 at t*
    t_stick = v0 / (mu * G_ACC * (1.0 + m * r * r / J))
    (stick,) = [ev for ev in trajectory.events if ev.type == "stick"]
    assert stick.t == pytest.approx(t_stick, abs=1e-12)
    v_roll = v0 - mu * G_ACC * t_stick
    for frame in trajectory.frames:
        t = min(frame.t, t_stick)
        x = v0 * t - 0.5 * mu * G_ACC * t * t + v_roll * (frame.t - t)
        assert frame.q[0] == pytest.approx(x, abs=1e-12)
        assert frame.v[0] == pytest.approx(v0 - mu * G_ACC * t, abs=1e-12)
        assert frame.q[1] == pytest.approx(r, abs=1e-14)
    # the kinetic energy lost while sliding is exactly the friction work μ m g ∫|u_t| dt
    u0 = v0
    slip_work = mu * m * G_ACC * 0.5 * u0 * t_stick
    final = trajectory.frames[-1]
    assert final.energy.dissipated == pytest.approx(slip_work, rel=1e-12)
    assert final.energy.kinetic == pytest.approx(0.5 * (m + J / r**2) * v_roll**2, rel=1e-12)


# ------------------------------------------------------------------ Zeno with several contacts


def two_balls_on_the_floor(e, h=0.4, t_end=1.5):
    r, m = 0.1, 1.0
    return scene(
        [
            {
                "id": "a",
                "type": "wheel",
                "mass": m,
                "inertia": 0.005,
                "radius": r,
                "position": [0.0, h + r],
            },
            {
                "id": "b",
                "type": "wheel",
                "mass": m,
                "inertia": 0.005,
                "radius": r,
                "position": [2 * r, h + r],
            },
        ],
        [{"id": "ground", "type": "segment", "a": [-2, 0], "b": [2, 0]}],
        restitution=e,
        t_end=t_end,
    )


def test_two_touching_balls_bouncing_together_are_captured_into_resting_contact():
    e, h, r, m = 0.5, 0.4, 0.1, 1.0
    trajectory = simulate(two_balls_on_the_floor(e, h))
    assert trajectory.status == "finished", trajectory.message
    # both floor contacts close together, so the bounce sequence is not one contact's
    assert any(ev.type == "impact" and ev.other == "ground" for ev in trajectory.events)
    (zeno,) = [ev for ev in trajectory.events if ev.type == "zeno"]
    assert "several contacts" in zeno.message
    assert len(impacts(trajectory)) < 100
    # captured before the accumulation time t∞ = √(2h/g)(1+e)/(1−e), and no earlier than
    # the flights left once a hop rises less than ZENO_HEIGHT: 2u/((1−e)g), u = √(2 g Z)
    t_inf = math.sqrt(2.0 * h / G_ACC) * (1.0 + e) / (1.0 - e)
    tail = 2.0 * math.sqrt(2.0 * G_ACC * events_module.ZENO_HEIGHT) / ((1.0 - e) * G_ACC)
    assert t_inf - tail <= zeno.t <= t_inf
    for frame in (f for f in trajectory.frames if f.t > t_inf):
        np.testing.assert_allclose(frame.q[[1, 4]], r, atol=1e-12)
        np.testing.assert_allclose(frame.v, 0.0, atol=1e-12)
        floor = [c.lam for c in frame.contacts if c.other == "ground"]
        np.testing.assert_allclose(floor, m * G_ACC, rtol=1e-12)
    balance = np.array([f.energy.balance for f in trajectory.frames])
    assert np.ptp(balance) <= 1e-8 * np.max(np.abs(balance))


def test_ball_settling_into_a_concave_corner_comes_to_rest_in_it():
    r, e = 0.1, 0.5
    model = scene(
        [
            {
                "id": "ball",
                "type": "wheel",
                "mass": 1.0,
                "inertia": 0.005,
                "radius": r,
                "position": [0.05, 0.6],
            }
        ],
        [
            {"id": "left", "type": "segment", "a": [-1, 1], "b": [0, 0]},
            {"id": "right", "type": "segment", "a": [0, 0], "b": [1, 1]},
        ],
        restitution=e,
        t_end=2.0,
    )
    trajectory = simulate(model)
    assert trajectory.status == "finished", trajectory.message
    assert any(ev.type == "zeno" for ev in trajectory.events)
    assert len(impacts(trajectory)) < 200
    # at rest touching both 45° walls: the centre sits r√2 above the corner
    final = trajectory.frames[-1]
    np.testing.assert_allclose(final.q[:2], [0.0, r * math.sqrt(2.0)], atol=1e-12)
    np.testing.assert_allclose(final.v, 0.0, atol=1e-12)
    # each wall carries m g / √2 (the two normals are at ±45°)
    np.testing.assert_allclose([c.lam for c in final.contacts], G_ACC / math.sqrt(2.0), rtol=1e-12)


# ------------------------------------------------------------------ the stepper


def test_stepper_emits_samples_on_the_output_grid_and_finishes_at_t_end():
    stepper = make_stepper(bouncing_ball(t_end=0.5), dt_out=0.05)
    assert isinstance(stepper, EventDrivenStepper)
    frames = []
    while stepper.status == "running":
        frames += stepper.step().frames
    samples = [f.t for f in frames if f.kind == "sample"]
    np.testing.assert_allclose(samples, 0.05 * np.arange(11), atol=1e-15)
    assert stepper.status == "finished"
    assert stepper.t == pytest.approx(0.5)


def test_solver_failure_ends_the_run_with_an_error_event_and_keeps_the_frames(monkeypatch):
    def refuse(*args, **kwargs):
        raise SolverError("no impulse for this test")

    monkeypatch.setattr(event_handling, "resolve_impact", refuse)
    monkeypatch.setattr(impact_rules, "resolve_impact", refuse)
    # the impact goes through the general law: the one-contact closed form leaves it there
    monkeypatch.setattr(impact_rules, "resolve_single_impact", lambda *args, **kwargs: None)
    stepper = EventDrivenStepper(System(bouncing_ball(friction=0.3)), t_end=1.0, dt_out=0.01)
    frames, events = [], []
    while stepper.status == "running":
        out = stepper.step()
        frames += out.frames
        events += out.events
    assert stepper.status == "failed"
    assert "no impulse for this test" in stepper.message
    assert events[-1].type == "error"
    assert events[-1].t == pytest.approx(math.sqrt(2.0 / G_ACC), abs=1e-12)
    assert frames[-1].t < events[-1].t
    assert len(frames) == 46  # samples 0.00 … 0.45 before the first impact


def test_a_pair_jammed_between_walls_settles_at_once_under_the_sequential_law():
    scene = parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "gravity": [0.0, -9.81],
            "contact": {"restitution": 0.9, "friction": 0.0, "impact_law": "sequential"},
            "boundaries": [
                {"id": "left", "type": "segment", "a": [0.0, -1.0], "b": [0.0, 1.0]},
                {"id": "right", "type": "segment", "a": [0.125, -1.0], "b": [0.125, 1.0]},
            ],
            "bodies": [
                {
                    "id": "b0",
                    "type": "bead",
                    "rail_y": 0.0,
                    "mass": 1.0,
                    "radius": 0.03125,
                    "x": 0.03125,
                    "vx": 0.0,
                },
                {
                    "id": "b1",
                    "type": "bead",
                    "rail_y": 0.0,
                    "mass": 1.0,
                    "radius": 0.03125,
                    "x": 0.09375,
                    "vx": 1.0,
                },
            ],
            "solver": {"method": "event-driven", "t_end": 0.5, "dt_out": 0.01},
        }
    )
    trajectory = simulate(scene)
    # found by the random-scene property in CI: it failed with "200 events in a row"
    assert trajectory.status == "finished", trajectory.message
    impulses, v_end = jammed_pair_cascade((1.0, 1.0), (0.0, 1.0), 0.9)
    by_pair = {(e.body, e.other): e.normal_impulse for e in trajectory.events}
    assert by_pair == pytest.approx(
        {("b0", "left"): impulses[0], ("b0", "b1"): impulses[1], ("b1", "right"): impulses[2]},
        rel=1e-9,
    )
    # both cascades stop once no contact approaches faster than ~1e-12 m/s
    np.testing.assert_allclose(trajectory.frames[-1].v, v_end, atol=1e-11)
    np.testing.assert_allclose(v_end, [0.0, 0.0], atol=1e-11)  # jammed: all motion absorbed
    assert trajectory.frames[-1].energy.dissipated == pytest.approx(0.5, rel=1e-12)
