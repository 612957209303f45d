"""The simulation worker takes no step while the GUI thread handles events (issue 10).

Each call the GUI thread makes into Qt during a paint lets go of the
interpreter lock; with the worker stepping meanwhile, getting it back waited
for the worker's turn, and a paint took two to four times its CPU time.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer

from impactgui.worker import (
    AHEAD_GUI_FIRST_S,
    GUI_FIRST_S,
    SimulationRunner,
    _gui_activity,
    _gui_busy_since,
)
from solver.frames import StepOutput


class _CountingStepper:
    """An instant stepper that remembers when each step was taken."""

    status = "running"
    message = ""
    system = None

    def __init__(self) -> None:
        self.t = 0.0
        self.times: list[float] = []

    def step(self) -> StepOutput:
        self.times.append(time.monotonic())
        self.t += 1e-3
        return StepOutput()


def _steps_in_a_busy_spell(qtbot, ahead: bool, spell: float, wait: float) -> int:
    """Steps of an instant stepper taken while a slot of the GUI thread sleeps ``spell`` s (it
    lets go of the interpreter lock, as a call into Qt does), counted over at most ``wait``
    s from the spell's start (a loaded machine may sleep longer than asked)."""
    stepper = _CountingStepper()
    runner = SimulationRunner(stepper)
    busy: list[float] = []

    def handle_an_event() -> None:  # a slot of the GUI thread, as a paint would be
        busy.append(time.monotonic())
        busy.append(_gui_busy_since[0])  # when the worker began to wait for this thread
        time.sleep(spell)
        busy.append(time.monotonic())

    runner.set_ahead(ahead)
    runner.start()
    try:
        qtbot.waitUntil(lambda: len(stepper.times) > 10, timeout=10000)
        QTimer.singleShot(0, handle_an_event)
        qtbot.waitUntil(lambda: len(busy) == 3, timeout=10000)
        start, since, end = busy
        end = min(end, since + wait)
        during = [t for t in stepper.times if start < t < end]
        taken = len(stepper.times)
        qtbot.waitUntil(lambda: len(stepper.times) > taken + 50, timeout=10000)  # goes on after
    finally:
        runner.stop()
    assert _gui_activity().holds.count == 0 and _gui_activity().idle.is_set()
    return len(during)


def test_the_worker_waits_while_the_gui_thread_handles_an_event(qtbot) -> None:
    # the step under way when the event came at most: left alone, it takes hundreds
    assert _steps_in_a_busy_spell(qtbot, False, GUI_FIRST_S / 2, GUI_FIRST_S) <= 1


def test_far_ahead_the_worker_waits_out_a_longer_busy_spell_of_the_gui_thread(qtbot) -> None:
    """With the solver far ahead of the screen (``set_ahead``), the worker waits up to
    ``AHEAD_GUI_FIRST_S`` for the GUI thread, not ``GUI_FIRST_S``: a step of the plots'
    time axis keeps the GUI thread busy for 25-40 ms."""
    assert AHEAD_GUI_FIRST_S >= 4 * GUI_FIRST_S
    # longer than GUI_FIRST_S: the old worker stepped after 10 ms (1022 steps)
    assert _steps_in_a_busy_spell(qtbot, True, AHEAD_GUI_FIRST_S / 2, AHEAD_GUI_FIRST_S) <= 1
