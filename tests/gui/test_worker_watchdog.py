"""A GUI run that stops advancing in simulated time fails as the command line's does (issue 11)."""

from __future__ import annotations

from impactgui.worker import SimulationRunner
from solver.frames import StepOutput
from solver.simulation import Watchdog

STALL_S = 0.2  # the watchdog's limit in these tests (the app's is STALL_WALL_TIME_S = 30 s)


class _Stepper:
    """Advances ``t`` by 0.01 s per step, except at the steps listed in ``still``; ends at 0.3 s."""

    def __init__(self, still=(), on_step=None):
        self.status, self.message, self.t = "running", "", 0.0
        self.steps = 0
        self._still = set(still)
        self.on_step = on_step

    def step(self) -> StepOutput:
        self.steps += 1
        if self.steps not in self._still:
            self.t = round(self.t + 0.01, 12)
        if self.on_step is not None:
            self.on_step(self.steps)
        if self.t >= 0.3:
            self.status = "finished"
        return StepOutput()


class _Stuck(_Stepper):
    def step(self) -> StepOutput:
        self.steps += 1
        return StepOutput()


def test_a_run_that_never_advances_fails_with_the_watchdogs_message_and_ends(qtbot):
    runner = SimulationRunner(_Stuck(), watchdog=Watchdog(STALL_S))
    with qtbot.waitSignal(runner.ended, timeout=20000) as ended:
        runner.start()
    status, message = ended.args
    assert status == "failed"
    assert "no progress in simulated time" in message
    runner.stop()
    assert runner.is_joined


def test_time_spent_paused_does_not_count_as_a_stall(qtbot):
    # step 5 asks for a pause; after it the first step (6) does not advance t: without the
    # watchdog's restart, the pause itself would be taken for STALL_S without progress
    runner = None

    def pause_at_five(step):
        if step == 5:
            runner._worker.pause()

    stepper = _Stepper(still={6}, on_step=pause_at_five)
    runner = SimulationRunner(stepper, watchdog=Watchdog(STALL_S))
    runner.start()
    qtbot.waitUntil(lambda: stepper.steps >= 5, timeout=20000)
    qtbot.wait(int(3 * STALL_S * 1000))
    assert stepper.steps == 5  # held by the pause
    with qtbot.waitSignal(runner.ended, timeout=20000) as ended:
        runner.resume()
    assert ended.args == ["finished", ""]
    assert stepper.steps == 31  # 30 advancing steps and one still one
    runner.stop()
    assert runner.is_joined
