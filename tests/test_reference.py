"""Closed-form references: each against an independent evaluation and against the engine."""

from __future__ import annotations

import copy
import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

from solver.reference import (
    compare_trajectory,
    recognise,
    spring_stop_period,
    write_reference_file,
)
from solver.scene import load_scene, parse_scene
from solver.simulation import simulate

ROOT = Path(__file__).resolve().parents[1]
SCENES = ROOT / "resources" / "scenes"
G = 9.81


def bundled(name: str):
    return load_scene(SCENES / f"{name}.json")


def changed(name: str, **edits):
    """A bundled scene with top-level sections replaced."""
    data = json.loads((SCENES / f"{name}.json").read_text())
    data.update(copy.deepcopy(edits))
    return parse_scene(data)


def flights_with_events(rhs, y0, t_end, event, jump, max_events=200):
    """Integrate ``rhs`` numerically, applying ``jump`` at each zero of ``event``; returns times."""
    event.terminal = True
    event.direction = -1
    t, y, times = 0.0, np.asarray(y0, dtype=float), []
    while t < t_end and len(times) < max_events:
        solution = solve_ivp(rhs, (t, t_end), y, events=event, rtol=1e-12, atol=1e-14)
        if solution.status != 1:
            break
        t = float(solution.t_events[0][0])
        y = jump(solution.y_events[0][0])
        times.append(t)
        if abs(y[1]) < 1e-9:
            break
    return np.array(times)


# ---------------------------------------------------------------- bouncing ball


def test_bouncing_ball_impact_times_and_accumulation_time():
    reference = recognise(bundled("bouncing_ball"))
    assert reference is not None and reference.name == "bouncing_ball"
    e, h = 0.5, 1.0
    t0 = math.sqrt(2 * h / G)
    assert reference.values["t_first"] == pytest.approx(t0, rel=1e-15)
    assert reference.values["t_inf"] == pytest.approx(t0 * (1 + e) / (1 - e), rel=1e-14)
    assert reference.values["resting_force"] == pytest.approx(1.0 * G, rel=1e-15)

    # independent: integrate the fall numerically and reverse the speed at each impact
    def fall(_t, y):
        return [y[1], -G]

    def ground(_t, y):
        return y[0] - 0.1

    def bounce(y):
        return np.array([0.1, -e * y[1]])

    times = flights_with_events(fall, [1.1, 0.0], 1.3, ground, bounce, max_events=8)
    assert np.allclose(reference.impact_times[: len(times)], times, rtol=1e-10, atol=1e-12)


def test_bouncing_ball_engine_meets_the_closed_form():
    scene = bundled("bouncing_ball")
    reference = recognise(scene)
    run = simulate(scene)
    result = compare_trajectory(reference, run)
    assert result.impact_time_difference < 1e-12
    assert result.max_difference["ball.y"] < 1e-6  # bounces under ZENO_HEIGHT are skipped
    zeno = next(event for event in run.events if event.type == "zeno")
    assert zeno.t == pytest.approx(reference.values["t_inf"], rel=1e-12)
    resting = run.frames[-1].contacts[0].lam
    assert resting == pytest.approx(reference.values["resting_force"], rel=1e-12)


def test_a_thrown_ball_meets_the_first_impact_with_the_energy_speed():
    ball = dict(json.loads((SCENES / "bouncing_ball.json").read_text())["bodies"][0])
    ball["velocity"] = [0.0, 2.0]
    reference = recognise(changed("bouncing_ball", bodies=[ball]))
    u1 = math.sqrt(2.0**2 + 2 * G * 1.0)
    assert reference.values["u_first"] == pytest.approx(u1, rel=1e-15)
    assert reference.values["t_first"] == pytest.approx((2.0 + u1) / G, rel=1e-15)


# -------------------------------------------------------- mass between two stops


def test_mass_between_stops_is_a_sawtooth_with_period_two_gaps_over_speed():
    scene = bundled("mass_between_stops")
    reference = recognise(scene)
    assert reference.name == "mass_between_stops"
    gap, speed = 1.0, 1.0  # walls at ±0.55, radius 0.05
    assert reference.values["period"] == pytest.approx(2 * gap / speed, rel=1e-15)
    t = np.linspace(0.0, 10.0, 2001)
    # independent: the paper's triangle wave, x = distance travelled folded into [−0.5, 0.5]
    folded = (t * speed + 0.5) % (2 * gap)
    expected = np.where(folded <= gap, folded - 0.5, 1.5 - folded)
    assert np.allclose(reference.evaluate(t)[:, 0], expected, atol=1e-13)


def test_mass_between_stops_engine_meets_the_closed_form_over_a_hundred_impacts():
    scene = bundled("mass_between_stops")
    reference = recognise(scene, t_end=100.0)
    run = simulate(scene, t_end=100.0)
    result = compare_trajectory(reference, run)
    assert len(reference.impact_times) == 100
    assert result.impact_time_difference < 1e-12
    assert result.max_difference["mass.x"] < 1e-12
    assert result.max_difference["mass.vx"] < 1e-12


# ------------------------------------------------------------ mass, spring, stop


def test_stop_at_the_rest_point_gives_paper_003_equation_46():
    reference = recognise(bundled("mass_spring_stop_at_rest"))
    lam = 10.0
    assert reference.values["period"] == pytest.approx(math.pi / lam, rel=1e-15)
    scene = bundled("mass_spring_stop_at_rest")
    x0, V = scene.bodies[0].x, scene.bodies[0].vx
    t = np.linspace(0.0, 2.0, 4001)
    x = reference.evaluate(t)[:, 0]
    assert np.allclose(x - x0, -(abs(V) / lam) * np.abs(np.sin(lam * t)), atol=1e-13)


def _spring_stop_times(x0, v0, c, lam, x_stop, side, e, t_end):
    """Impact times by numerical integration of x'' = −λ²(x − c) with a stop."""

    def rhs(_t, y):
        return [y[1], -lam * lam * (y[0] - c)]

    def stop(_t, y):
        return side * (x_stop - y[0])

    def bounce(y):
        return np.array([x_stop, -e * y[1]])

    return flights_with_events(rhs, [x0, v0], t_end, stop, bounce, max_events=12)


@pytest.mark.parametrize(("d", "v"), [(0.05, 1.0), (-0.05, 1.0), (0.05, 0.2), (-0.03, 2.0)])
def test_general_spring_stop_period_against_numerical_integration(d, v):
    lam = 10.0
    x_stop = 0.3
    c = x_stop - d  # the stop is on the mass's +x side: d = x_stop − c
    times = _spring_stop_times(x_stop, -v, c, lam, x_stop, 1.0, 1.0, 3.0)
    period = spring_stop_period(v, lam, d)
    assert np.allclose(np.diff(times), period, rtol=1e-9)
    assert times[0] == pytest.approx(period, rel=1e-9)
    if d < 0:
        assert period < math.pi / lam
        assert period == pytest.approx(2 / lam * math.atan(v / (lam * -d)), rel=1e-14)
    else:
        # paper 003 (44) with V the arrival velocity and x1 the stop from the rest point
        assert period == pytest.approx(2 / lam * (math.pi - math.atan(v / (lam * d))), rel=1e-14)


def test_paper_003_equation_44_fails_on_the_near_side_of_the_rest_point():
    lam, v, d = 10.0, 1.0, -0.05
    paper = 2 / lam * (math.pi - math.atan(v / (lam * d)))
    assert abs(paper - spring_stop_period(v, lam, d)) > 0.1


def test_offset_stop_engine_meets_the_corrected_period():
    scene = bundled("mass_spring_stop_offset")
    reference = recognise(scene)
    assert reference.values["rest_to_stop"] == pytest.approx(0.05, abs=1e-15)
    result = compare_trajectory(reference, simulate(scene))
    assert result.impact_time_difference < 1e-12
    assert result.max_difference["mass.x"] < 1e-12
    assert result.max_difference["mass.vx"] < 1e-11


def test_spring_stop_with_restitution_loses_energy_per_impact_and_engine_agrees():
    contact = {"restitution": 0.6, "friction": 0.0, "impact_law": "staged"}
    scene = changed("mass_spring_stop_offset", contact=contact)
    reference = recognise(scene)
    m, u = 1.0, 1.0
    assert reference.values["energy_loss_per_impact"] == pytest.approx(
        0.5 * (1 - 0.36) * m * u * u, rel=1e-15
    )
    times = _spring_stop_times(0.05, -1.0, 0.0, 10.0, 0.05, 1.0, 0.6, 2.0)
    assert np.allclose(reference.impact_times[: len(times)], times, rtol=1e-9)
    result = compare_trajectory(reference, simulate(scene))
    assert result.impact_time_difference < 1e-12
    assert result.max_difference["mass.x"] < 1e-12


# ---------------------------------------------------------------- two masses


def _two_mass_ivp(x0, v0, t_end):
    """Free oscillators of paper 002 integrated numerically up to the first impact."""
    m = np.array([200.0, 100.0])
    k = np.array([8000.0, 8000.0])
    c = np.array([-0.05, 0.05])

    def rhs(_t, y):
        return np.concatenate([y[2:], -k / m * (y[:2] - c)])

    def gap(_t, y):
        return y[1] - y[0] - 0.1

    gap.terminal, gap.direction = True, -1
    return solve_ivp(rhs, (0, t_end), [*x0, *v0], events=gap, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["two_masses_plastic", "two_masses_elastic"])
def test_two_masses_up_to_the_first_impact(name):
    scene = bundled(name)
    reference = recognise(scene)
    assert reference.name == "two_masses"
    solution = _two_mass_ivp([-0.35, 0.35], [-1.0, 1.0], 2.0)
    t_hit = float(solution.t_events[0][0])
    assert reference.values["t_first_impact"] == pytest.approx(t_hit, rel=1e-10)
    y = solution.y_events[0][0]
    e = scene.contact.restitution
    mu = 200.0 * 100.0 / 300.0
    impulse = (1 + e) * mu * (y[2] - y[3])
    assert reference.values["impulse"] == pytest.approx(impulse, rel=1e-9)
    if e == 0.0:
        common = (200 * y[2] + 100 * y[3]) / 300
        assert reference.values["v1_after"] == pytest.approx(common, rel=1e-9)
        assert reference.values["v2_after"] == pytest.approx(common, rel=1e-9)
    result = compare_trajectory(reference, simulate(scene))
    assert result.impact_time_difference < 1e-12
    for column, difference in result.max_difference.items():
        assert difference < 1e-12, column


def pressed_pair():
    """Paper 002's pair with overlapping rest positions: a plastic impact presses them together."""
    data = json.loads((SCENES / "two_masses_plastic.json").read_text())
    data["springs"][0]["anchor"] = [-0.95, 0.0]  # rest of m1 at +0.05, of m2 at +0.05
    return parse_scene(data)


def test_two_masses_pressed_together_after_a_plastic_impact():
    """After the plastic impact the pair moves as one until the contact force reaches zero."""
    scene = pressed_pair()
    reference = recognise(scene)
    assert "t_liftoff" in reference.values
    t1, t_lift = reference.values["t_first_impact"], reference.values["t_liftoff"]
    # independent: joint oscillator of mass 300 on both springs, contact force from m2's balance
    W = math.sqrt(16000.0 / 300.0)
    x_eq = (8000 * 0.05 + 8000 * (0.05 - 0.1)) / 16000
    x1 = reference.evaluate([t1])[0, 0]
    v = reference.values["v1_after"]
    tau = np.linspace(0.0, t_lift - t1, 200)
    X = x_eq + (x1 - x_eq) * np.cos(W * tau) + v / W * np.sin(W * tau)
    force = 100.0 * (-W * W * (X - x_eq)) + 8000 * (X + 0.1 - 0.05)
    assert np.all(force[:-1] > 0.0) and abs(force[-1]) < 1e-6
    assert np.allclose(reference.evaluate(t1 + tau[1:])[:, 0], X[1:], atol=1e-13)
    run = simulate(scene, t_end=t_lift)
    result = compare_trajectory(reference, run)
    assert result.impact_time_difference < 1e-12
    for column, difference in result.max_difference.items():
        assert difference < 1e-12, column


def test_engine_lifts_the_pressed_pair_off_where_the_contact_force_reaches_zero():
    """λ dips below zero between two sub-points of a closed-form phase: still a lift-off."""
    scene = pressed_pair()
    reference = recognise(scene)
    run = simulate(scene)
    lift = next(event for event in run.events if event.type == "liftoff")
    assert lift.t == pytest.approx(reference.values["t_liftoff"], abs=1e-9)


# ------------------------------------------------------------------------- curb


def curb_scene(inertia: float, friction: float = 0.8, restitution: float = 0.0):
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "contact": {"restitution": restitution, "friction": friction},
            "boundaries": [
                {
                    "id": "curb",
                    "type": "polyline",
                    "points": [[0, 0.6], [0, 0.05], [0.4, 0.05], [0.4, 0], [2, 0]],
                }
            ],
            "bodies": [
                {
                    "id": "wheel",
                    "type": "wheel",
                    "mass": 10.0,
                    "inertia": inertia,
                    "radius": 0.1,
                    "position": [0.8, 0.1],
                    "velocity": [-1.0, 0.0],
                    "angular_velocity": 10.0,
                }
            ],
            "solver": {"t_end": 0.5},
        }
    )


def _corner_impact(m, J, r, h, v):
    """Independent: a plastic, sticking impact at the corner as a linear system in (P, v⁺, ω⁺)."""
    dx = math.sqrt(r * r - (r - h) ** 2)
    rho = np.array([-dx, h - r])  # from the centre to the corner (rolling to −x)
    # unknowns: Px, Py, vx, vy, w ; momentum, angular momentum about the centre, corner at rest
    A = np.array(
        [
            [1.0, 0.0, -m, 0.0, 0.0],
            [0.0, 1.0, 0.0, -m, 0.0],
            [-rho[1], rho[0], 0.0, 0.0, -J],  # J(w⁺ − w⁻) = rho × P
            [0.0, 0.0, 1.0, 0.0, -rho[1]],  # v⁺ + w⁺ × rho = 0 (x)
            [0.0, 0.0, 0.0, 1.0, rho[0]],  # (y)
        ]
    )
    w_minus = -v / r
    b = np.array([-m * v, 0.0, -J * w_minus, 0.0, 0.0])
    return np.linalg.solve(A, b), w_minus


@pytest.mark.parametrize("inertia", [0.05, 0.08, 0.02])
def test_curb_speed_ratio_against_impulse_momentum_and_the_engine(inertia):
    scene = curb_scene(inertia)
    reference = recognise(scene)
    assert reference.name == "curb"
    m, r, h = 10.0, 0.1, 0.05
    solution, w_minus = _corner_impact(m, inertia, r, h, -1.0)
    assert reference.values["speed_ratio"] == pytest.approx(solution[4] / w_minus, rel=1e-12)
    uniform = 1 - 2 * h / (3 * r)
    if inertia == pytest.approx(0.5 * m * r * r):
        assert reference.values["speed_ratio"] == pytest.approx(uniform, rel=1e-14)
    else:
        assert abs(reference.values["speed_ratio"] - uniform) > 0.01
    run = simulate(scene)
    result = compare_trajectory(reference, run)
    assert result.impact_time_difference < 1e-12
    for column, difference in result.max_difference.items():
        assert difference < 1e-10, column


def test_curb_is_not_claimed_when_the_corner_slips_or_rebounds():
    assert recognise(curb_scene(0.05, friction=0.1)) is None  # needs 0.19
    assert recognise(curb_scene(0.05, restitution=0.3)) is None


# ---------------------------------------------------------------------- incline


def incline_scene(friction: float, speed: float = 0.0, degrees: float = 20.0):
    alpha = math.radians(degrees)
    along = np.array([math.cos(alpha), -math.sin(alpha)])
    a = np.array([0.0, 1.0])
    normal = np.array([math.sin(alpha), math.cos(alpha)])
    centre = a + 0.5 * along + 0.1 * normal
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "contact": {"restitution": 0.0, "friction": friction},
            "boundaries": [
                {"id": "slope", "type": "segment", "a": list(a), "b": list(a + 3.0 * along)}
            ],
            "bodies": [
                {
                    "id": "disk",
                    "type": "wheel",
                    "mass": 2.0,
                    "inertia": 0.01,
                    "radius": 0.1,
                    "position": list(centre),
                    "velocity": list(speed * along),
                }
            ],
            "solver": {"t_end": 1.0, "dt_out": 0.01},
        }
    ), alpha


def _distance_down(reference, t, alpha):
    start = reference.evaluate([0.0])[0]
    now = reference.evaluate(t)
    return (now[:, 0] - start[0]) * math.cos(alpha) - (now[:, 1] - start[1]) * math.sin(alpha)


def test_rolling_disk_gains_the_speed_energy_gives():
    scene, alpha = incline_scene(0.3)
    reference = recognise(scene)
    assert reference.name == "incline" and "rolling" in reference.title
    m, J, r = 2.0, 0.01, 0.1
    t = np.linspace(0.0, 0.9, 50)
    s = _distance_down(reference, t, alpha)
    state = reference.evaluate(t)
    v = np.hypot(state[:, 3], state[:, 4])
    # energy: m g s sin(alpha) = ½ m v² + ½ J (v/r)²
    assert np.allclose(m * G * s * math.sin(alpha), 0.5 * (m + J / r**2) * v**2, atol=1e-12)
    assert np.allclose(-state[:, 5] * r, v, atol=1e-12)  # rolling downhill: clockwise
    result = compare_trajectory(reference, simulate(scene))
    for column, difference in result.max_difference.items():
        assert difference < 1e-10, column


def test_sliding_disk_accelerates_at_g_sin_minus_mu_cos():
    scene, alpha = incline_scene(0.05)
    reference = recognise(scene)
    assert "sliding" in reference.title and "rolling" not in reference.title
    t = np.linspace(0.0, 0.9, 50)
    s = _distance_down(reference, t, alpha)
    a = G * (math.sin(alpha) - 0.05 * math.cos(alpha))
    assert np.allclose(s, 0.5 * a * t * t, atol=1e-12)
    result = compare_trajectory(reference, simulate(scene))
    for column, difference in result.max_difference.items():
        assert difference < 1e-10, column


def test_skidding_disk_starts_rolling_when_the_slip_ends():
    scene, alpha = incline_scene(0.3, speed=2.0)
    reference = recognise(scene)
    assert reference.title.endswith("sliding then rolling")
    m, J, r, mu = 2.0, 0.01, 0.1, 0.3
    N = m * G * math.cos(alpha)
    # independent: slip u = v − r|ω| decays at g sin α − μN/m − μ N r²/J from u₀ = 2 m/s
    rate = G * math.sin(alpha) - mu * N / m - mu * N * r * r / J
    assert reference.values["t_roll"] == pytest.approx(2.0 / -rate, rel=1e-13)
    run = simulate(scene)
    stick = next(event for event in run.events if event.type == "stick")
    assert stick.t == pytest.approx(reference.values["t_roll"], abs=1e-9)
    result = compare_trajectory(reference, run)
    for column, difference in result.max_difference.items():
        assert difference < 1e-10, column


# ----------------------------------------------------------- reference.csv, none


def test_scenes_without_a_closed_form_have_no_reference():
    for name in ("four_balls", "newton_cradle_3_staged", "wheel_curb_e03", "axle_cart"):
        assert recognise(bundled(name)) is None


def test_reference_csv_sits_beside_the_trajectory(tmp_path):
    from solver.record import write_csv

    scene = bundled("mass_spring_stop_offset")
    run = simulate(scene)
    write_csv(run, tmp_path)
    path = write_reference_file(scene, tmp_path)
    with path.open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    with (tmp_path / "trajectory.csv").open(newline="") as stream:
        trajectory = list(csv.DictReader(stream))
    frames = [row for row in rows if row["kind"] != "impact"]
    assert [(r["t"], r["kind"]) for r in frames] == [(r["t"], r["kind"]) for r in trajectory]
    for ours, theirs in zip(frames, trajectory, strict=True):
        assert float(ours["mass.x"]) == pytest.approx(float(theirs["mass.x"]), abs=1e-12)
    impacts = [float(row["t"]) for row in rows if row["kind"] == "impact"]
    period = spring_stop_period(1.0, 10.0, 0.05)
    assert impacts == pytest.approx([period * k for k in range(1, len(impacts) + 1)], rel=1e-13)


def test_run_with_reference_writes_reference_csv_beside_the_others(tmp_path):
    from solver import cli

    stream = io.StringIO()
    scene = SCENES / "mass_spring_stop_offset.json"
    status = cli.main(["run", str(scene), "--out", str(tmp_path), "--reference"], stderr=stream)
    assert (status, stream.getvalue()) == (0, "")
    rows = list(csv.DictReader((tmp_path / "reference.csv").open(newline="")))
    assert list(rows[0]) == ["t", "kind", "mass.x", "mass.vx"]
    assert (tmp_path / "trajectory.csv").is_file()


def test_run_with_reference_refuses_a_scene_without_one(tmp_path):
    from solver import cli

    stream = io.StringIO()
    out = tmp_path / "out"
    scene = SCENES / "four_balls.json"
    status = cli.main(["run", str(scene), "--out", str(out), "--reference"], stderr=stream)
    lines = stream.getvalue().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith("--reference: no closed")
    assert not out.exists()


@given(
    lam=st.floats(min_value=0.5, max_value=50.0),
    u=st.floats(min_value=1e-3, max_value=10.0),
    d=st.floats(min_value=-1.0, max_value=1.0),
)
def test_spring_stop_period_is_the_first_return_to_the_stop(lam, u, d):
    """y(t) = d(1 − cos λt) + (u/λ) sin λt: distance from the stop after leaving it at u."""
    period = spring_stop_period(u, lam, d)
    scale = abs(d) + u / lam
    assert 0.0 < period < 2 * math.pi / lam
    y_end = d * (1 - math.cos(lam * period)) + u / lam * math.sin(lam * period)
    assert abs(y_end) <= 1e-9 * scale
    speed_end = d * lam * math.sin(lam * period) + u * math.cos(lam * period)
    assert speed_end == pytest.approx(-u, rel=1e-9, abs=1e-12 * scale * lam)
    t = np.linspace(0.0, period, 402)[1:-1]
    y = d * (1 - np.cos(lam * t)) + u / lam * np.sin(lam * t)
    assert np.all(y > -1e-12 * scale)


def test_mass_between_stops_with_lossy_walls_slows_by_each_walls_restitution():
    data = json.loads((SCENES / "mass_between_stops.json").read_text())
    data["boundaries"][0]["restitution"] = 0.5  # left
    data["boundaries"][1]["restitution"] = 0.8  # right
    scene = parse_scene(data)
    reference = recognise(scene)
    # independent: right at 0.5 s, speed 0.8; left 1/0.8 s later, speed 0.4; right 1/0.4 s later
    assert reference.impact_times[:3] == pytest.approx([0.5, 1.75, 4.25], rel=1e-15)
    assert reference.evaluate([2.0, 5.0])[:, 1] == pytest.approx([0.4, -0.32], rel=1e-15)
    result = compare_trajectory(reference, simulate(scene))
    assert result.impact_time_difference < 1e-12
    assert result.max_difference["mass.x"] < 1e-12


def test_a_reference_with_too_many_impacts_ends_where_its_pieces_do():
    reference = recognise(bundled("mass_between_stops"), t_end=1e6)
    assert reference.t_valid < 1e6
    assert reference.t_valid == pytest.approx(0.5 + len(reference.impact_times), rel=1e-12)
    assert np.isnan(reference.evaluate([reference.t_valid + 1.0])).all()
