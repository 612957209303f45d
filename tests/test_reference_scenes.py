"""Reference scenes of MECHANICS §7 end to end: paper 004's wheel, Newton's cradle, random beads."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.scene import parse_scene
from solver.simulation import simulate

G_ACC = 9.81
CURB = [[0.0, 0.6], [0.0, 0.05], [0.4, 0.05], [0.4, 0.0], [2.0, 0.0]]


def paper_004(e):
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "contact": {"restitution": e, "friction": 0.4, "impact_law": "staged"},
            "boundaries": [{"id": "curb", "type": "polyline", "points": CURB}],
            "bodies": [
                {
                    "id": "wheel",
                    "type": "wheel",
                    "mass": 10.0,
                    "inertia": 0.05,
                    "radius": 0.1,
                    "position": [0.8, 0.2],
                    "velocity": [-5.0, -3.0],
                }
            ],
            "solver": {"t_end": 1.0, "dt_out": 0.001},
        }
    )


def distance_to_polyline(p, points):
    """Independent distance from ``p`` to a polyline (segments with their end points)."""
    best = math.inf
    for a, b in itertools.pairwise(points):
        a, b = np.asarray(a), np.asarray(b)
        e = b - a
        s = float(np.clip((p - a) @ e / (e @ e), 0.0, 1.0))
        best = min(best, float(np.hypot(*(p - a - s * e))))
    return best


@pytest.fixture(scope="module", params=[0.0, 0.3])
def wheel_run(request):
    return request.param, simulate(paper_004(request.param))


def test_paper_004_wheel_translates_until_the_first_impact_then_rotates(wheel_run):
    _, trajectory = wheel_run
    assert trajectory.status == "finished", trajectory.message
    first = next(ev for ev in trajectory.events if ev.type == "impact")
    # free fall from y = 0.2 at vy = −3 onto the ground y = 0 (centre at y = r = 0.1)
    t_fall = (-3.0 + math.sqrt(9.0 + 2.0 * G_ACC * 0.1)) / G_ACC
    assert first.t == pytest.approx(t_fall, abs=1e-10)
    before = [f for f in trajectory.frames if f.t < first.t]
    assert before and all(f.v[2] == 0.0 and f.q[2] == 0.0 for f in before)
    assert any(abs(f.v[2]) > 1.0 for f in trajectory.frames if f.t > first.t)


def test_paper_004_wheel_never_penetrates_the_curb(wheel_run):
    _, trajectory = wheel_run
    gaps = [distance_to_polyline(f.q[:2], CURB) - 0.1 for f in trajectory.frames]
    assert min(gaps) >= -1e-9


def test_paper_004_wheel_balances_its_energy(wheel_run):
    _, trajectory = wheel_run
    balance = np.array([f.energy.balance for f in trajectory.frames])
    assert np.ptp(balance) <= 1e-8 * np.max(np.abs(balance))
    assert trajectory.frames[-1].energy.dissipated > 0.0


def test_paper_004_restitutions_give_clearly_different_paths():
    plastic = simulate(paper_004(0.0))
    bouncy = simulate(paper_004(0.3))
    a = {round(f.t, 9): f.q[:2] for f in plastic.frames if f.kind == "sample"}
    b = {round(f.t, 9): f.q[:2] for f in bouncy.frames if f.kind == "sample"}
    common = sorted(set(a) & set(b))
    assert max(float(np.hypot(*(a[t] - b[t]))) for t in common) > 0.05


def cradle(n, law, gap=0.01, V=1.0, e=1.0):
    r = 0.05
    bodies = [
        {"id": "b0", "type": "bead", "rail_y": 0.0, "mass": 1.0, "radius": r, "x": -gap, "vx": V}
    ]
    bodies += [
        {
            "id": f"b{k}",
            "type": "bead",
            "rail_y": 0.0,
            "mass": 1.0,
            "radius": r,
            "x": 2.0 * r * k,
            "vx": 0.0,
        }
        for k in range(1, n)
    ]
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "contact": {"restitution": e, "friction": 0.0, "impact_law": law},
            "bodies": bodies,
            "solver": {"t_end": 0.5, "dt_out": 0.05},
        }
    )


@pytest.mark.parametrize("n", [3, 5])
def test_sequential_newtons_cradle_sends_the_last_bead_off_with_the_whole_speed(n):
    trajectory = simulate(cradle(n, "sequential"))
    assert trajectory.status == "finished"
    hits = [ev for ev in trajectory.events if ev.type == "impact"]
    assert hits
    np.testing.assert_allclose([ev.t for ev in hits], 0.01, atol=1e-12)
    expected = np.zeros(n)
    expected[-1] = 1.0
    np.testing.assert_allclose(trajectory.frames[-1].v, expected, atol=1e-12)


def test_staged_newtons_cradle_of_three_reproduces_paper_000_example_4():
    trajectory = simulate(cradle(3, "staged"))
    post = next(f for f in trajectory.frames if f.kind == "post")
    np.testing.assert_allclose(post.v, [-1 / 3, 2 / 3, 2 / 3], atol=1e-12)
    hits = sorted((ev for ev in trajectory.events if ev.type == "impact"), key=lambda ev: ev.body)
    np.testing.assert_allclose([ev.normal_impulse for ev in hits], [4 / 3, 2 / 3], atol=1e-12)
    np.testing.assert_allclose(trajectory.frames[-1].v, [-1 / 3, 2 / 3, 2 / 3], atol=1e-12)


def test_staged_cradle_of_five_conserves_momentum_and_energy():
    trajectory = simulate(cradle(5, "staged"))
    final = trajectory.frames[-1].v
    assert final.sum() == pytest.approx(1.0, abs=1e-12)
    assert 0.5 * float(final @ final) == pytest.approx(0.5, abs=1e-12)


@st.composite
def bead_scenes(draw):
    n = draw(st.integers(2, 5))
    radii = [draw(st.floats(0.01, 0.05)) for _ in range(n)]
    gaps = [draw(st.floats(0.0, 0.1)) for _ in range(n + 1)]
    x, bodies = 0.0, []
    for k in range(n):
        x += gaps[k] + radii[k]
        bodies.append(
            {
                "id": f"b{k}",
                "type": "bead",
                "rail_y": 0.0,
                "mass": draw(st.floats(0.1, 5.0)),
                "radius": radii[k],
                "x": x,
                "vx": draw(st.floats(-2.0, 2.0)),
            }
        )
        x += radii[k]
    right = x + gaps[n]
    e = draw(st.sampled_from([0.0, 0.5, 0.9, 1.0]))
    law = draw(st.sampled_from(["staged", "sequential", "newton"]))
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "contact": {"restitution": e, "friction": 0.0, "impact_law": law},
            "boundaries": [
                {"id": "left", "type": "segment", "a": [0, -1], "b": [0, 1]},
                {"id": "right", "type": "segment", "a": [right, -1], "b": [right, 1]},
            ],
            "bodies": bodies,
            "solver": {"t_end": 0.5, "dt_out": 0.01},
        }
    ), right


@settings(max_examples=25)
@given(bead_scenes())
def test_random_bead_scenes_never_penetrate_and_balance_energy(case):
    model, right = case
    trajectory = simulate(model)
    assert trajectory.status == "finished", trajectory.message
    radii = np.array([b.radius for b in model.bodies])
    for frame in trajectory.frames:
        x = frame.q
        assert x[0] - radii[0] >= -1e-9
        assert right - x[-1] - radii[-1] >= -1e-9
        assert np.all(np.diff(x) - radii[:-1] - radii[1:] >= -1e-9)
    balance = np.array([f.energy.balance for f in trajectory.frames])
    assert np.ptp(balance) <= 1e-8 * max(1.0, float(np.max(np.abs(balance))))
