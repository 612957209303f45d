"""Status bar: run progress (t of t_end, bar, solver speed) and the pointer read-out."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from impactgui.pointer_readout import readout_text
from impactgui.run_progress import BAR_STEPS, RunProgress, SolverSpeed, progress_text
from tests.gui.conftest import run_to_end, scene_path


def test_solver_speed_is_simulated_seconds_per_wall_second_over_a_window() -> None:
    speed = SolverSpeed(window_s=2.0)
    assert speed.speed is None
    speed.add(0.0, wall=10.0)
    speed.add(5.0, wall=11.0)
    assert speed.speed == pytest.approx(5.0)
    speed.add(15.0, wall=12.0)
    # the window: the samples of the last 2 s and the one before them (at 11 s)
    speed.add(16.0, wall=14.0)
    assert speed.speed == pytest.approx((16.0 - 5.0) / (14.0 - 11.0))
    speed.reset()
    assert speed.speed is None


def test_progress_text_says_how_far_of_how_far_and_how_fast() -> None:
    assert progress_text("running", 169.7, 1000.0, 12.5) == (
        "running: 169.7 of 1000 s computed · 12.5× real time"
    )
    assert progress_text("paused", 2.0, 10.0, 3.0) == "paused: 2 of 10 s computed"
    assert progress_text("finished", 1.0, 1.0, None) == "finished at t = 1 s"


def test_a_finished_run_fills_the_bar(qtbot, window) -> None:
    assert window.open_file(scene_path("bouncing_ball"))
    t_end = window.doc.scene().solver.t_end
    assert not window.progress.bar.isVisible()
    run_to_end(qtbot, window)
    assert window.progress.bar.isVisible()
    assert window.progress.bar.value() == BAR_STEPS
    assert window.run_label.text() == f"finished at t = {t_end:.6g} s"
    window.reset_run()
    assert window.run_label.text() == "editing"
    assert not window.progress.bar.isVisible()


def test_pointer_read_out_shows_the_snapped_position_and_the_wall_length(qtbot, window) -> None:
    canvas = window.canvas
    canvas.set_tool("wall")
    canvas.deliver_press((0.0, 0.0))
    canvas.deliver_drag((0.3, 0.4))
    canvas.pointer_moved.emit(0.3012, 0.3987)  # snapped to the 1 cm grid
    expected = "x = 0.300 m  y = 0.400 m  ·  wall 0.500 m"
    qtbot.waitUntil(lambda: window.pointer.text() == expected, timeout=2000)
    canvas.deliver_release((0.3, 0.4))
    canvas.set_tool("select")
    canvas.pointer_moved.emit(1.0, -0.25)
    qtbot.waitUntil(lambda: window.pointer.text() == "x = 1.000 m  y = -0.250 m", timeout=2000)
    assert len(window.doc.data["boundaries"]) == 1
    window.doc.undo_stack.setClean()  # no unsaved-changes prompt at the end


def test_curb_length_is_the_whole_polyline() -> None:
    points = [(0.0, 0.0), (0.4, 0.0), (0.4, 0.05), (2.0, 0.05)]
    assert readout_text((2.0, 0.05), "curb", points).endswith("curb 2.050 m")
    assert readout_text((0.1, 0.2), "arc", [(0.0, 0.0), (0.3, 0.4)]).endswith("radius 0.500 m")


def test_the_progress_bar_waits_for_the_next_paint_of_the_window(qtbot) -> None:
    # QProgressBar.setValue repainted at once, painting the window's pending updates
    # (a canvas frame, the plots) outside the display tick
    painted: list[int] = []

    class Spy(QLabel):
        def paintEvent(self, event) -> None:
            painted.append(1)
            super().paintEvent(event)

    window = QWidget()
    layout = QVBoxLayout(window)
    progress, spy = RunProgress(), Spy("pending")
    layout.addWidget(progress)
    layout.addWidget(spy)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    progress.start(10.0)
    qtbot.wait(20)
    painted.clear()
    spy.update()
    progress.show_state("running", 5.0)
    assert painted == [], "nothing painted inside show_state"
    assert progress.bar.value() == BAR_STEPS // 2
    qtbot.waitUntil(lambda: len(painted) > 0, timeout=2000)  # at the next paint


def test_showing_the_progress_bar_keeps_the_status_bar_height(qtbot, window) -> None:
    # at Run the bar appeared, the status bar grew 5 px and every view of the window was
    # re-laid out and repainted at once
    window.show()
    qtbot.waitExposed(window)
    heights = [window.statusBar().height(), window.canvas.height()]
    window.progress.preparing()
    qtbot.wait(50)
    assert [window.statusBar().height(), window.canvas.height()] == heights
    window.progress.idle()
