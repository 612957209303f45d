"""Issue 25, "The lecture hall, again": the fixes a lecturer and a researcher met.

Each test drives the real widgets (menus, keys, buttons, mouse clicks) and
fails on the code before the fix.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QToolBar, QToolButton

from impactgui.canvas import SceneCanvas
from impactgui.document import SceneDocument
from tests.gui.conftest import run_to_end, scene_path


def _tool_button(window, action) -> QToolButton:
    bar = window.findChild(QToolBar, "run")
    button = bar.widgetForAction(action)
    assert isinstance(button, QToolButton)
    return button


# ---------------------------------------------------------------- 1. pause


def test_pause_and_f6_freeze_the_playback_after_the_solver_finished(qtbot, window) -> None:
    # issue 25: once the solver had finished, Pause was greyed out while the animation
    # played on, and F6 did nothing
    assert window.open_preset(scene_path("bouncing_ball"))
    window.playback_bar.set_speed(0.1)  # 2.5 s of run: 25 s of playback
    run_to_end(qtbot, window)
    assert window.run_state == "finished"
    assert window.clock.is_playing and window.clock.time < window.clock.end_time()
    pause = _tool_button(window, window.pause_action)
    assert pause.isEnabled() and window.pause_action.isEnabled()
    qtbot.mouseClick(pause, Qt.MouseButton.LeftButton)
    assert not window.clock.is_playing
    held = window.clock.time
    shown = window.frames_drawn
    qtbot.wait(300)
    assert (window.clock.time, window.frames_drawn) == (held, shown), "the animation froze"
    assert window.run_action.isEnabled() and not window.pause_action.isEnabled()

    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_F5)  # Run continues from the frame shown
    assert window.clock.is_playing
    qtbot.waitUntil(lambda: window.clock.time > held, timeout=5000)
    qtbot.keyClick(window, Qt.Key.Key_F6)
    assert not window.clock.is_playing
    held = window.clock.time
    qtbot.wait(200)
    assert window.clock.time == held


def test_run_plays_a_finished_run_again_once_it_was_shown_to_the_end(qtbot, window) -> None:
    assert window.open_preset(scene_path("bouncing_ball"))
    window.playback_bar.set_speed(float("inf"))
    run_to_end(qtbot, window)
    qtbot.waitUntil(lambda: not window.clock.is_playing, timeout=5000)
    assert window.clock.time == window.clock.end_time() == 2.5
    assert window.run_action.isEnabled() and not window.pause_action.isEnabled()
    window.playback_bar.set_speed(0.1)
    window.run_action.trigger()
    assert window.clock.is_playing and window.clock.time < 0.1


# ------------------------------------------------------------- 4. spring tool


def _pixel(canvas: SceneCanvas, x: float, y: float) -> QPoint:
    point = canvas.plot.mapFromScene(canvas.view.mapViewToScene(QPointF(x, y)))
    return QPoint(point.x(), point.y())


def test_the_spring_tool_takes_a_click_on_a_beads_centre(
    qtbot, canvas: SceneCanvas, doc: SceneDocument
) -> None:
    # issue 25: the centre dot (the velocity handle of a bead at rest) took the click,
    # and the tool said "Click a body…"; two pixels off it worked
    canvas.set_tool("bead")
    canvas.deliver_click((0.0, 0.5))
    canvas.deliver_click((0.6, 0.5))
    canvas.set_tool("spring")
    said: list[str] = []
    canvas.status_message.connect(said.append)
    viewport = canvas.plot.viewport()
    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=_pixel(canvas, 0.0, 0.5))
    qtbot.wait(doc_click_gap())
    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=_pixel(canvas, 0.6, 0.5))
    assert said == []
    assert doc.data["springs"] == [
        {"a": "bead1", "b": "bead2", "stiffness": 1000.0, "rest_length": 0.6, "damping": 0.0}
    ]


def doc_click_gap() -> int:
    """Milliseconds between two clicks so that they are not one double click."""
    from PySide6.QtWidgets import QApplication

    return QApplication.styleHints().mouseDoubleClickInterval() + 50
