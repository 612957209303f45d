"""Live interaction (issue 25, item 5): grab a body while paused, change e, μ, g from now on.

Each is recorded in the scene as a timed action, as the cart strike is recorded
as an impulse: the window computes the run again from the start, and the command
line's run of the saved scene writes the same CSV files, byte for byte.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from tests.gui.conftest import run_solver_cli, run_to_end, scene_path

G = 9.81


def _open_ball(qtbot, window, tmp_path: Path) -> None:
    """The bundled bouncing ball (1 kg, radius 0.1 m, dropped from y = 1.1 m), as a copy."""
    path = tmp_path / "ball.json"
    shutil.copy(scene_path("bouncing_ball"), path)
    assert window.open_file(path)
    run_to_end(qtbot, window)


def _show(qtbot, window, t: float) -> float:
    window.clock.pause()
    window.clock.seek(t)
    return window.runner.trajectory.frame(window.clock.index).t


def _rerun(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.run_state in ("paused", "finished"), timeout=30000)
    qtbot.waitUntil(lambda: window.runner is not None and window.runner.status != "running",
                    timeout=60000)  # fmt: skip
    # the screen follows the recomputed run back to the action's time on display ticks, once
    # the run is ready: a run computed faster than a tick is done before the screen is there
    qtbot.waitUntil(lambda: window._resume_at is None and not window.clock.resuming,
                    timeout=30000)  # fmt: skip


def _same_files_as_the_command_line(window, tmp_path: Path) -> None:
    saved = tmp_path / "saved.json"
    assert window.save_as(saved)
    assert window.export_csv(tmp_path / "app") is not None
    run_solver_cli(saved, tmp_path / "cli")
    for name in ("trajectory.csv", "events.csv", "contacts.csv"):
        assert (tmp_path / "app" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()


def test_a_body_grabbed_while_paused_goes_on_from_where_it_was_dropped(
    qtbot, window, tmp_path
) -> None:
    _open_ball(qtbot, window, tmp_path)
    t = _show(qtbot, window, 0.8)
    canvas = window.canvas
    canvas.set_tool("grab")
    (x, y), _ = canvas.shown_motion("ball")
    assert canvas.deliver_press((x, y))
    canvas.deliver_drag((0.0, 0.8))
    canvas.deliver_release((0.0, 1.0))
    assert window.doc.data["actions"] == [
        {"time": t, "type": "state", "body": "ball", "position": [0.0, 1.0], "velocity": [0.0, 0.0]}
    ]
    _rerun(qtbot, window)
    assert window.clock.time == pytest.approx(t) and not window.clock.is_playing
    trajectory = window.runner.trajectory
    after = next(f for f in trajectory.frames if f.t == t and f.kind == "post")
    assert list(after.q[:2]) == [0.0, 1.0] and list(after.v[:2]) == [0.0, 0.0]
    rows = window.event_log.table_model.events
    assert [(e.t, e.type, e.body) for e in rows if e.type == "action"] == [(t, "action", "ball")]
    # dropped from rest at y = 1.0 m, it lands (y = 0.1 m) sqrt(2 * 0.9 / g) later
    landing = next(e for e in rows if e.type == "impact" and e.t > t)
    assert landing.t == pytest.approx(t + math.sqrt(2 * 0.9 / G), rel=1e-9)
    _same_files_as_the_command_line(window, tmp_path)
    window.doc.undo_stack.undo()
    assert window.doc.data.get("actions", []) == []
    window.doc.undo_stack.setClean()


def test_a_body_thrown_from_the_head_of_its_velocity_arrow(qtbot, window, tmp_path) -> None:
    _open_ball(qtbot, window, tmp_path)
    t = _show(qtbot, window, 0.3)
    canvas = window.canvas
    canvas.set_tool("grab")
    (x, y), (vx, vy) = canvas.shown_motion("ball")
    assert vy == pytest.approx(-G * t)  # falling: its arrow is 0.1 m per m/s
    assert canvas.deliver_press((x + 0.1 * vx, y + 0.1 * vy))
    canvas.deliver_release((x + 0.02, y + 0.3))
    ((action),) = window.doc.data["actions"]
    assert action["position"] == [x, y]
    assert action["velocity"] == pytest.approx([0.2, 3.0])
    _rerun(qtbot, window)
    rows = window.event_log.table_model.events
    landing = next(e for e in rows if e.type == "impact" and e.t > t)
    # thrown up at 3 m/s from height y: y + 3 τ - g τ² / 2 = 0.1
    rise = (3.0 + math.sqrt(9.0 + 2 * G * (y - 0.1))) / G
    assert landing.t == pytest.approx(t + rise, rel=1e-9)
    window.doc.undo_stack.setClean()


def test_the_sliders_change_e_mu_and_g_from_the_time_shown(qtbot, window, tmp_path) -> None:
    _open_ball(qtbot, window, tmp_path)
    controls = window.live.controls
    assert controls.isEnabled()
    e0 = json.loads(scene_path("bouncing_ball").read_text())["contact"]["restitution"]
    t = _show(qtbot, window, 0.5)
    assert controls.value("restitution") == e0
    controls.sliders["restitution"].setValue(20)  # e = 0.2, as a key press would
    assert window.doc.data["actions"] == [{"time": t, "type": "set", "restitution": 0.2}]
    _rerun(qtbot, window)
    impacts = [e for e in window.event_log.table_model.events if e.type == "impact"]
    before = [e for e in impacts if e.t < t]
    after = [e for e in impacts if e.t > t]
    assert before[0].v_plus[1] == pytest.approx(-e0 * before[0].v_minus[1], rel=1e-9)
    assert after[0].v_plus[1] == pytest.approx(-0.2 * after[0].v_minus[1], rel=1e-9)
    assert controls.value("restitution") == 0.2
    _show(qtbot, window, 0.1)
    assert controls.value("restitution") == e0, "before the action, the scene's value"
    t_g = _show(qtbot, window, 0.05)
    controls.sliders["gravity"].setValue(162)  # the Moon's 1.62 m/s², straight down
    assert window.doc.data["actions"][-1] == {"time": t_g, "type": "set", "gravity": [0.0, -1.62]}
    _rerun(qtbot, window)
    _show(qtbot, window, 0.15)
    frame = window.runner.trajectory.frame(window.clock.index)
    tau = frame.t - t_g
    y_g, v_g = 1.1 - G * t_g**2 / 2, -G * t_g
    assert frame.q[1] == pytest.approx(y_g + v_g * tau - 1.62 * tau**2 / 2, rel=1e-9)
    _same_files_as_the_command_line(window, tmp_path)


def test_renaming_or_deleting_a_body_carries_its_actions(doc) -> None:
    from impactgui.commands import DeleteItem, RenameBody

    data = json.loads(scene_path("bouncing_ball").read_text())
    put = {"time": 0.5, "type": "state", "body": "ball", "position": [0, 1], "velocity": [0, 0]}
    setting = {"time": 0.7, "type": "set", "friction": 0.2}
    data["actions"] = [put, setting]
    doc.set_data(data)
    doc.push(RenameBody(doc, ("bodies", 0), "boule"))
    assert [a.get("body") for a in doc.data["actions"]] == ["boule", None]
    assert doc.problems() == []
    doc.push(DeleteItem(doc, ("bodies", 0)))
    assert doc.data["actions"] == [setting] and doc.problems() == []


def test_the_sliders_read_the_scene_opened_and_edited_before_any_run(qtbot, window) -> None:
    """The sliders show the scene's own e, μ and |g| from the moment it is opened (before a
    run, disabled); they showed the empty window's 0.5, 0 and 9.81 beside paper 004's wheel."""
    scene = json.loads(scene_path("wheel_curb_e03").read_text())
    assert window.open_file(scene_path("wheel_curb_e03"))
    controls = window.live.controls
    assert not controls.isEnabled()
    assert controls.value("restitution") == pytest.approx(scene["contact"]["restitution"], abs=0.01)
    assert controls.value("friction") == pytest.approx(scene["contact"]["friction"], abs=0.01)
    assert controls.value("gravity") == pytest.approx(math.hypot(*scene["gravity"]), abs=0.01)
    window.doc.set_data({**window.doc.data, "contact": {**scene["contact"], "restitution": 0.8}})
    assert controls.value("restitution") == pytest.approx(0.8, abs=0.01)
