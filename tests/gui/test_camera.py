"""The canvas camera (issue 10 bug 5): bodies stay in view, Fit scene, Follow selected body."""

from __future__ import annotations

import math

from PySide6.QtGui import QKeySequence

from tests.gui.conftest import run_to_end, scene_path


def _in_view(window, body_id: str) -> bool:
    canvas = window.canvas
    item = canvas.layer.bodies[body_id]
    r = canvas.layer.radius(body_id)
    (x0, x1), (y0, y1) = canvas.view.viewRange()
    x, y = item.pos().x(), item.pos().y()
    return x0 <= x - r and x + r <= x1 and y0 <= y - r and y + r <= y1


def _ids(window) -> list[str]:
    return [body["id"] for body in window.doc.data["bodies"]]


def test_every_ball_of_the_cradle_stays_in_view_during_the_run(qtbot, window) -> None:
    # the 5-ball sequential cradle sent ball 5 off the canvas
    assert window.open_file(scene_path("newton_cradle_5_sequential"))
    window.playback_bar.set_speed(math.inf)
    run_to_end(qtbot, window)
    qtbot.waitUntil(lambda: window.clock.time == window.clock.end_time(), timeout=10000)
    assert all(_in_view(window, body_id) for body_id in _ids(window))


def test_a_camera_moved_by_hand_stays_until_fit_scene(qtbot, window) -> None:
    assert window.open_file(scene_path("four_balls"))
    assert window.fit_action.shortcut() == QKeySequence("F")
    view = window.canvas.view
    view.setRange(xRange=(100.0, 101.0), yRange=(100.0, 101.0), padding=0)
    view.sigRangeChangedManually.emit([True, True])  # what a drag on empty canvas emits
    window.playback_bar.set_speed(math.inf)
    run_to_end(qtbot, window)
    qtbot.waitUntil(lambda: window.clock.time == window.clock.end_time(), timeout=10000)
    assert view.viewRange()[0] == [100.0, 101.0], "the user's camera is left alone"
    window.fit_action.trigger()  # View ▸ Fit scene: the bodies as they are now
    assert all(_in_view(window, body_id) for body_id in _ids(window))
    assert not window.canvas.camera_moved_by_user


def test_follow_keeps_the_selected_body_at_the_centre(qtbot, window) -> None:
    assert window.open_file(scene_path("newton_cradle_5_sequential"))
    last = _ids(window)[-1]
    window.doc.select(("bodies", len(_ids(window)) - 1))
    window.follow_action.setChecked(True)
    assert window.canvas.following
    window.playback_bar.set_speed(math.inf)
    run_to_end(qtbot, window)
    qtbot.waitUntil(lambda: window.clock.time == window.clock.end_time(), timeout=10000)
    item = window.canvas.layer.bodies[last]
    (x0, x1), (y0, y1) = window.canvas.view.viewRange()
    assert abs(item.pos().x() - (x0 + x1) / 2) < 1e-6 * (x1 - x0)
    assert abs(item.pos().y() - (y0 + y1) / 2) < 1e-6 * (y1 - y0)
    window.follow_action.setChecked(False)
