"""Timed user actions (``actions`` of a scene, solver/actions.py): the run goes on from its state.

Closed forms of a ball of radius 0.1 m dropped from y = 1.1 m under g = 9.81 m/s²:
free fall, Newton's restitution at the floor, a projectile thrown from a point.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.scene import SceneError, load_scene, parse_scene, scene_to_dict
from solver.simulation import make_stepper

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"
G = 9.81


def _ball(actions: list[dict[str, Any]], restitution: float = 0.9, t_end: float = 1.6) -> dict:
    data = scene_to_dict(load_scene(SCENES / "bouncing_ball.json"))
    data["contact"]["restitution"] = restitution
    data["solver"]["t_end"] = t_end
    data["actions"] = actions
    return data


def _run(data: dict) -> tuple[Any, list, list]:
    stepper = make_stepper(parse_scene(data))
    frames, events = [], []
    while stepper.status == "running":
        output = stepper.step()
        frames += output.frames
        events += output.events
    return stepper, frames, events


def test_a_new_restitution_applies_from_its_time_on() -> None:
    # first impact at t1 = sqrt(2 * 1.0 / g) with e = 0.9; e = 0.2 from t = 0.5 s on
    stepper, frames, events = _run(
        _ball([{"time": 0.5, "type": "set", "restitution": 0.2}], t_end=1.4)
    )
    assert stepper.status == "finished" and stepper.message == "reached t_end = 1.4 s"
    impacts = [e for e in events if e.type == "impact"]
    t1 = math.sqrt(2.0 / G)
    v1 = G * t1
    assert impacts[0].t == pytest.approx(t1, rel=1e-9)
    assert impacts[0].v_plus[1] == pytest.approx(0.9 * v1, rel=1e-9)
    # the ball rises with 0.9 v1 and falls back to the floor after 2 * 0.9 v1 / g
    assert impacts[1].t == pytest.approx(t1 + 2 * 0.9 * v1 / G, rel=1e-9)
    assert impacts[1].v_plus[1] == pytest.approx(-0.2 * impacts[1].v_minus[1], rel=1e-9)
    (action,) = [e for e in events if e.type == "action"]
    assert (action.t, action.message) == (0.5, "set by the user: restitution e = 0.2")
    assert action.energy_change == 0.0
    at = [f for f in frames if f.t == 0.5]
    assert [f.kind for f in at] == ["sample", "post"]
    assert np.array_equal(at[0].q, at[1].q) and np.array_equal(at[0].v, at[1].v)
    times = [f.t for f in frames]
    assert times == sorted(times)


def test_a_body_put_somewhere_flies_from_there_and_its_work_is_booked_as_input() -> None:
    # at 0.8 s the ball is put at (0, 1) m with (0.5, 0) m/s: it lands (y = 0.1 m) after
    # sqrt(2 * 0.9 / g) at x = 0.5 m/s times that
    put = {"time": 0.8, "type": "state", "body": "ball", "position": [0, 1], "velocity": [0.5, 0]}
    _, frames, events = _run(_ball([put]))
    (action,) = [e for e in events if e.type == "action"]
    assert action.body == "ball" and action.t == 0.8
    assert action.message == "ball moved by the user to (0, 1) m at (0.5, 0) m/s"
    before = next(f for f in frames if f.t == 0.8 and f.kind == "sample")
    after = next(f for f in frames if f.t == 0.8 and f.kind == "post")
    assert list(after.q) == [0.0, 1.0, before.q[2]] and list(after.v) == [0.5, 0.0, before.v[2]]
    energy = 0.5 * 1.0 * 0.25 + 1.0 * G * 1.0 + 0.5 * 0.005 * before.v[2] ** 2
    assert after.energy.total == pytest.approx(energy, rel=1e-12)
    assert action.energy_change == pytest.approx(energy - before.energy.total, rel=1e-12)
    landing = next(e for e in events if e.type == "impact" and e.t > 0.8)
    fall = math.sqrt(2 * 0.9 / G)
    assert landing.t == pytest.approx(0.8 + fall, rel=1e-9)
    landed = next(f for f in frames if f.t == landing.t)
    assert landed.q[0] == pytest.approx(0.5 * fall, rel=1e-9)
    balance = [f.energy.balance for f in frames]
    assert max(balance) - min(balance) < 1e-9, "the user's work is input work"


def test_gravity_changed_in_flight_bends_the_parabola() -> None:
    _, frames, _ = _run(_ball([{"time": 0.2, "type": "set", "gravity": [0.0, -1.62]}]))
    y0, v0 = 1.1 - 0.5 * G * 0.2**2, -G * 0.2
    for frame in frames:
        if 0.2 < frame.t < 0.5:  # it lands after 0.37 s more
            tau = frame.t - 0.2
            assert frame.q[1] == pytest.approx(y0 + v0 * tau - 0.5 * 1.62 * tau**2, rel=1e-9)


def test_actions_at_the_same_time_apply_in_file_order_and_at_zero_before_the_run() -> None:
    actions = [
        {"time": 0.0, "type": "state", "body": "ball", "position": [0.0, 0.6]},
        {"time": 0.3, "type": "set", "restitution": 0.5},
        {"time": 0.3, "type": "set", "restitution": 0.0},
        {"time": 5.0, "type": "set", "restitution": 1.0},  # after t_end: never happens
    ]
    _, frames, events = _run(_ball(actions, t_end=1.0))
    assert frames[0].t == 0.0 and frames[0].q[1] == 0.6
    assert [(e.t, e.message) for e in events if e.type == "action"] == [
        (0.3, "set by the user: restitution e = 0.5"),
        (0.3, "set by the user: restitution e = 0"),
    ]
    impact = next(e for e in events if e.type == "impact")
    assert impact.t == pytest.approx(math.sqrt(2 * 0.5 / G), rel=1e-9)
    assert impact.v_plus[1] == pytest.approx(0.0, abs=1e-12), "e = 0: the later action wins"


@settings(max_examples=8, deadline=None)
@given(st.floats(0.05, 1.9))
def test_an_action_that_changes_nothing_leaves_the_forced_chain_as_it_was(when: float) -> None:
    # the forcing's phase carries on across the restart: sin(ω(t0 + τ) + φ) = sin(ωτ + φ')
    data = scene_to_dict(load_scene(SCENES / "chain_forced.json"))
    data["solver"].update(t_end=2.0, dt_out=0.05)
    _, plain, _ = _run(data)
    data["actions"] = [{"time": when, "type": "set", "restitution": 0.8}]
    _, acted, events = _run(data)
    assert [e.type for e in events].count("action") == 1
    plain_samples = {f.t: f for f in plain if f.kind == "sample"}
    for frame in acted:
        match = plain_samples.get(frame.t)
        if match is not None and frame.kind == "sample" and frame.t < when + 0.3:
            assert frame.q == pytest.approx(match.q, abs=1e-8)
            assert frame.v == pytest.approx(match.v, abs=1e-7)


@pytest.mark.parametrize(
    ("action", "problem"),
    [
        ({"time": 1, "type": "state", "body": "nobody", "position": [0, 1]},
         "actions[0].body: no body with id 'nobody'"),
        ({"time": 1, "type": "set"},
         "actions[0]: give at least one of restitution, friction, gravity"),
        ({"time": 1, "type": "set", "restitution": 1.5}, "actions[0].restitution: must be <= 1"),
        ({"time": -1, "type": "set", "friction": 0.1}, "actions[0].time: must be >= 0"),
    ],
)  # fmt: skip
def test_a_bad_action_is_refused_with_its_path(action: dict, problem: str) -> None:
    with pytest.raises(SceneError) as refused:
        parse_scene(_ball([action]))
    assert any(p.startswith(problem) for p in refused.value.problems), refused.value.problems


def test_a_scene_without_actions_is_written_as_before_and_with_them_round_trips() -> None:
    plain = load_scene(SCENES / "bouncing_ball.json")
    assert "actions" not in scene_to_dict(plain)
    data = _ball([{"time": 0.5, "type": "set", "friction": 0.3, "gravity": [0, -3]}])
    scene = parse_scene(data)
    assert parse_scene(scene_to_dict(scene)) == scene
    assert scene_to_dict(scene)["actions"] == [
        {"time": 0.5, "type": "set", "friction": 0.3, "gravity": [0.0, -3.0]}
    ]
