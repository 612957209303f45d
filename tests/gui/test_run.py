"""Running a scene in the window: frames stream in, playback, pause/step/reset, failures."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import impactgui.mainwindow as mainwindow_module
from impactgui.commands import SetProperty
from impactgui.playback import AS_FAST_AS_POSSIBLE
from solver.errors import SolverError
from solver.frames import Event, StepOutput
from tests.gui.conftest import run_to_end, scene_path


class FailingStepper:
    """A real stepper that fails after ``good_steps`` steps, the way the solver reports it.

    ``mode="status"``: ``status`` becomes ``"failed"`` with an ``error`` event
    (the stepper contract); ``mode="raise"``: ``step()`` raises ``SolverError``.
    """

    MESSAGE = "no consistent contact mode at wheel–curb#v3 (Painlevé)"

    def __init__(self, stepper: Any, good_steps: int, mode: str) -> None:
        self._stepper = stepper
        self._left = good_steps
        self._mode = mode
        self.status = "running"
        self.message = ""
        self.system = stepper.system

    @property
    def t(self) -> float:
        return self._stepper.t

    def step(self) -> StepOutput:
        if self._left == 0:
            if self._mode == "raise":
                raise SolverError(self.MESSAGE)
            self.status, self.message = "failed", self.MESSAGE
            return StepOutput(events=[Event(t=self.t, type="error", message=self.MESSAGE)])
        self._left -= 1
        return self._stepper.step()


def open_long_run(window) -> None:
    """Open the forced chain with t_end = 500 s (a run that outlasts any test), unmodified."""
    assert window.open_file(scene_path("chain_forced"))
    window.doc.push(SetProperty(window.doc, ("solver", "t_end"), 500.0))
    window.doc.undo_stack.setClean()


def test_run_streams_frames_to_canvas_plots_and_log(qtbot, window) -> None:
    assert window.open_file(scene_path("wheel_curb_e03"))
    # slow motion: the 1 s scene plays for 10 s, so ten frames are drawn even when a
    # loaded machine ticks the display only a few times a second (at real time the
    # playback could end after 6 ticks: a test that failed on load, not on the app)
    window.playback_bar.set_speed(0.1)
    assert window.start_run()
    qtbot.waitUntil(lambda: window.frames_drawn >= 10, timeout=10000)
    qtbot.waitUntil(lambda: window.plots.point_count() > 0, timeout=5000)
    assert window.canvas.isEnabled()
    qtbot.waitUntil(lambda: window.run_state == "finished", timeout=30000)
    trajectory = window.runner.trajectory
    assert trajectory.status == "finished"
    assert trajectory.times()[-1] == pytest.approx(1.0)
    assert window.event_log.row_count() == len(trajectory.events) > 0
    kinetic_t, kinetic = window.plots.energy_curves["kinetic"].getData()
    assert len(kinetic_t) == len(kinetic) == len(trajectory)
    assert "finished" in window.run_label.text()


def test_slow_motion_playback_lags_a_fast_solver(qtbot, window) -> None:
    assert window.open_file(scene_path("wheel_curb_e03"))
    window.playback_bar.set_speed(0.01)
    run_to_end(qtbot, window)
    # the solver is done; playback (1 s scene at ×0.01: 100 s) is still on its way
    assert window.clock.time < window.clock.end_time()
    window.playback_bar.set_speed(AS_FAST_AS_POSSIBLE)
    qtbot.waitUntil(lambda: window.clock.time == window.clock.end_time(), timeout=2000)
    assert window.clock.index == len(window.runner.trajectory) - 1


def test_pause_holds_the_solver_and_step_advances_one_frame(qtbot, window) -> None:
    # the solver must still be computing when the test pauses it
    open_long_run(window)
    window.playback_bar.set_speed(0.01)
    assert window.start_run()
    qtbot.waitUntil(lambda: window.clock.index >= 1, timeout=10000)
    window.pause_run()
    assert window.run_state == "paused"
    qtbot.wait(150)
    computed = len(window.runner.trajectory)
    qtbot.wait(200)
    assert len(window.runner.trajectory) == computed
    shown = window.clock.index
    window.step_run()
    qtbot.waitUntil(lambda: window.clock.index == shown + 1, timeout=5000)
    # stepping past the computed frames asks the solver for exactly one more step
    window.clock.seek(window.clock.end_time())
    last = window.clock.index
    window.step_run()
    qtbot.waitUntil(lambda: window.clock.index == last + 1, timeout=5000)
    assert window.runner.is_running
    assert window.start_run()
    assert window.run_state == "running"
    qtbot.waitUntil(lambda: len(window.runner.trajectory) > last + 5, timeout=5000)


def test_reset_stops_the_run_and_returns_to_editing(qtbot, window) -> None:
    open_long_run(window)  # still computing when Reset is pressed
    assert window.start_run()
    qtbot.waitUntil(lambda: window.frames_drawn >= 2, timeout=10000)
    runner = window.runner
    assert runner.status == "running"
    window.reset_run()
    assert runner.status == "stopped"
    assert window.runner is None
    assert window.run_state == "idle"
    assert window.plots.point_count() == 0
    assert window.event_log.row_count() == 0
    assert window.properties.isEnabled()


def test_scrubbing_the_time_slider_shows_the_frame_at_that_time(qtbot, window) -> None:
    shown = []
    window.clock.frame_shown.connect(lambda frame, _events: shown.append(frame))
    assert window.open_file(scene_path("bouncing_ball"))
    run_to_end(qtbot, window)
    window.pause_run()
    slider = window.playback_bar.time_slider
    slider.setValue(slider.maximum() // 2)
    t = window.clock.time
    end = window.clock.end_time()
    assert t == pytest.approx(end / 2, rel=1e-3)
    times = window.runner.trajectory.times()
    index = window.clock.index
    assert times[index] <= t
    assert index == len(times) - 1 or times[index + 1] > t
    assert shown[-1] is window.runner.trajectory.frames[index]
    assert f"{t:.4f} s" in window.playback_bar.time_label.text()


def test_clicking_an_event_moves_the_time_there(qtbot, window) -> None:
    assert window.open_file(scene_path("bouncing_ball"))
    run_to_end(qtbot, window)
    log = window.event_log
    impacts = [row for row, event in enumerate(log.table_model.events) if event.type == "impact"]
    assert impacts
    row = impacts[0]
    index = log.table_model.index(row, 0)
    log.clicked.emit(index)
    event = log.table_model.events[row]
    assert window.clock.time == pytest.approx(event.t)
    assert window.runner.trajectory.frames[window.clock.index].t == pytest.approx(event.t)
    # first impact of a ball dropped 1 m: t = sqrt(2/g)
    assert event.t == pytest.approx(np.sqrt(2 / 9.81), rel=1e-6)


@pytest.mark.parametrize("mode", ["status", "raise"])
def test_a_solver_failure_reaches_the_user_and_frames_stay(
    qtbot, window, monkeypatch, tmp_path, mode
) -> None:
    real_make_stepper = mainwindow_module.make_stepper
    monkeypatch.setattr(
        mainwindow_module,
        "make_stepper",
        lambda scene: FailingStepper(real_make_stepper(scene), good_steps=40, mode=mode),
    )
    assert window.open_file(scene_path("wheel_curb_e03"))
    run_to_end(qtbot, window)
    assert window.run_state == "failed"
    assert FailingStepper.MESSAGE in window.statusBar().currentMessage()
    errors = [event for event in window.event_log.table_model.events if event.type == "error"]
    assert len(errors) == 1 and errors[0].message == FailingStepper.MESSAGE
    frames = len(window.runner.trajectory)
    assert frames >= 40
    window.playback_bar.time_slider.setValue(0)
    assert window.clock.index == 0
    exported = window.export_csv(tmp_path / "out")
    assert exported is not None and (exported / "trajectory.csv").is_file()


def test_closing_during_a_run_stops_the_worker(qtbot, window) -> None:
    # still computing when the window closes, however slow the display ticks on a loaded machine
    open_long_run(window)
    assert window.start_run()
    qtbot.waitUntil(lambda: window.frames_drawn >= 2, timeout=10000)
    runner = window.runner
    assert runner.is_running
    window.close()
    assert runner.status == "stopped"
    assert runner.is_joined
    assert not window.isVisible()


def test_compare_runs_the_cradle_under_two_laws_side_by_side(qtbot, window) -> None:
    assert window.open_file(scene_path("newton_cradle_3_staged"))
    dialog = window.open_compare()
    assert dialog is not None and dialog.chosen_laws() == ["staged", "sequential"]
    assert dialog.run()
    qtbot.waitUntil(lambda: not dialog.is_running(), timeout=20000)
    finals = {}
    for panel in dialog.panels:
        assert panel.runner.status == "finished"
        states = panel.runner.trajectory.states()
        finals[panel.law] = {label: states[-1, column] for label, column in panel.columns}
        assert "ball3.vx" in panel.summary.text()
    # MECHANICS §7, paper 000 ex. 4: staged [-1/3, 2/3, 2/3], sequential [0, 0, 1]
    assert finals["staged"]["ball1.vx"] == pytest.approx(-1 / 3)
    assert finals["staged"]["ball3.vx"] == pytest.approx(2 / 3)
    assert finals["sequential"]["ball1.vx"] == pytest.approx(0.0, abs=1e-12)
    assert finals["sequential"]["ball3.vx"] == pytest.approx(1.0)
    assert dialog.message.text().startswith("Done: staged finished, sequential finished")
    dialog.close()


def test_a_solver_far_ahead_of_the_screen_computes_in_the_background(qtbot, window) -> None:
    assert window.open_file(scene_path("wheel_curb_e03"))
    # a run the solver cannot finish while the test watches (1000 s of motion, about 20 s of
    # CPU): with 100 s it could end before a playback tick saw it ahead, and `ahead` is only
    # set while the solver runs
    window.doc.push(SetProperty(window.doc, ("solver", "t_end"), 1000.0))
    window.doc.push(SetProperty(window.doc, ("solver", "dt_out"), 0.01))
    window.doc.undo_stack.setClean()
    window.playback_bar.set_speed(0.1)  # the solver runs ahead even on a loaded machine
    assert window.start_run()
    runner = window.runner
    assert not runner.ahead
    qtbot.waitUntil(lambda: runner.ahead, timeout=10000)
    assert window.clock.end_time() - window.clock.time > 0.1  # SOLVER_AHEAD_S × speed
    window.playback_bar.set_speed(AS_FAST_AS_POSSIBLE)  # the screen follows the solver
    qtbot.waitUntil(lambda: not runner.ahead, timeout=5000)
    window.reset_run()


def test_the_event_log_prints_a_lossless_impact_as_0_not_minus_0(qtbot) -> None:
    from impactgui.eventlog import EventTableModel

    model = EventTableModel()
    model.append([Event(0.1, "impact", "b1", "b2", normal_impulse=1.0, energy_change=-0.0)])
    model.append([Event(0.2, "impact", "b1", "b2", normal_impulse=1.0, energy_change=-0.25)])
    assert model.data(model.index(0, 7)) == "0"
    assert model.data(model.index(1, 7)) == "-0.25"
    assert model.data(model.index(0, 7)) == "0"  # the second read comes from the cache


def test_a_time_stepping_run_says_how_wrong_it_is_in_the_status_line(qtbot, window, tmp_path):
    """Issue 24: the largest penetration and the energy drift, in words, when the run ends."""
    data = json.loads(scene_path("mass_between_stops").read_text())
    data["solver"].update(method="time-stepping", t_end=1.0, dt=1e-3)
    path = tmp_path / "stops.json"
    path.write_text(json.dumps(data))
    assert window.open_file(path)
    run_to_end(qtbot, window)
    line = window.statusBar().currentMessage()
    assert line.startswith("run finished") and "largest penetration 0.0005 m" in line
    assert "energy-balance drift" in line
