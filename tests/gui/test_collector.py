"""Cyclic garbage is collected in the GUI thread while a simulation worker runs.

Regression: a pyqtgraph item freed by a collection that the worker thread
triggered deadlocked the whole application (``~QObject`` in the worker
waiting for the GIL, the GUI thread waiting for Qt's connection lock).
"""

from __future__ import annotations

import gc
import sys
import threading
from typing import ClassVar

from impactgui.collector import FREEZE_ABOVE, GuiThreadCollector, gui_thread_collector
from impactgui.worker import GUI_SWITCH_INTERVAL_S, SimulationRunner
from solver.scene import load_scene
from solver.simulation import make_stepper
from tests.gui.conftest import scene_path


class _Cycle:
    """A self-referencing object that records the thread that finally frees it."""

    freed_in: ClassVar[list[str]] = []

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        _Cycle.freed_in.append(threading.current_thread().name)


class _AllocatingStepper:
    """A stepper that only allocates: the worker crosses gc thresholds all the time."""

    status = "running"
    message = ""
    system = None

    def __init__(self, steps: int) -> None:
        self.t = 0.0
        self._left = steps

    def step(self):
        from solver.frames import StepOutput

        junk = [[i, [i]] for i in range(2000)]  # tracked containers: count0 grows by thousands
        del junk
        self._left -= 1
        self.t += 1.0
        if self._left == 0:
            self.status = "finished"
        return StepOutput()


def test_garbage_made_during_a_run_is_freed_in_the_gui_thread(qtbot) -> None:
    _Cycle.freed_in.clear()
    runner = SimulationRunner(_AllocatingStepper(steps=400))
    runner.start()
    made = 0
    try:
        while runner.is_running:
            for _ in range(50):
                _Cycle()
            made += 50
            qtbot.wait(5)
    finally:
        runner.stop()
    gc.collect()
    assert len(_Cycle.freed_in) == made > 0
    assert set(_Cycle.freed_in) == {threading.main_thread().name}
    assert gc.isenabled()


def test_holds_nest_and_the_last_release_restores_the_collector(qtbot) -> None:
    collector = GuiThreadCollector()
    assert gc.isenabled()
    collector.hold()
    collector.hold()
    assert not gc.isenabled() and collector.holders == 2
    collector.release()
    assert not gc.isenabled()
    collector.release()
    assert gc.isenabled() and collector.holders == 0
    collector.release()  # one release too many changes nothing
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off(qtbot) -> None:
    collector = GuiThreadCollector()
    gc.disable()
    try:
        collector.hold()
        collector.release()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_timer_collects_young_garbage_while_held(qtbot) -> None:
    collector = GuiThreadCollector()
    collector.hold()
    try:
        _Cycle.freed_in.clear()
        for _ in range(gc.get_threshold()[0] + 10):
            _Cycle()
        qtbot.waitUntil(lambda: len(_Cycle.freed_in) > 0, timeout=2000)
        assert gc.get_count()[0] < gc.get_threshold()[0]
    finally:
        collector.release()


def test_a_real_run_holds_the_collector_until_its_thread_ends(qtbot) -> None:
    stepper = make_stepper(load_scene(scene_path("bouncing_ball")))
    runner = SimulationRunner(stepper)
    before = gui_thread_collector().holders
    runner.start()
    assert gui_thread_collector().holders == before + 1
    qtbot.waitUntil(lambda: not runner.is_running, timeout=30000)
    qtbot.waitUntil(lambda: gui_thread_collector().holders == before, timeout=5000)
    runner.stop()
    assert gui_thread_collector().holders == before
    assert gc.isenabled()


def test_a_hold_freezes_without_collecting_and_the_last_release_unfreezes(qtbot) -> None:
    # issue 10: the full collection at Run stopped a 2000-bead window for 0.2-1.7 s
    collector = GuiThreadCollector()
    _Cycle.freed_in.clear()
    garbage = _Cycle()
    del garbage  # a cycle: only the collector can free it
    collector.hold()
    try:
        assert _Cycle.freed_in == [], "Run collected nothing"
        assert gc.get_freeze_count() > 0, "everything alive at Run left the collector's sight"
        threshold0, threshold1, _ = gc.get_threshold()
        survivors = []
        # threshold1 + 1 young collections make one of generation 1 due at a later check
        frozen = gc.get_freeze_count()
        for _ in range(threshold1 + 4):
            survivors.append([[k] for k in range(threshold0 + 1)])
            collector.collect_due()
        assert gc.get_freeze_count() > frozen  # the run's survivors are frozen too
        collector.collect_due()
        assert _Cycle.freed_in == []
    finally:
        collector.release()
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert _Cycle.freed_in == [threading.main_thread().name]


def test_threads_switch_often_while_a_worker_runs_and_as_before_after(qtbot) -> None:
    before = sys.getswitchinterval()
    assert GUI_SWITCH_INTERVAL_S < before  # the GUI thread waits less for the interpreter lock
    runner = SimulationRunner(_AllocatingStepper(steps=200))
    runner.start()
    assert sys.getswitchinterval() == GUI_SWITCH_INTERVAL_S
    qtbot.waitUntil(lambda: not runner.is_running, timeout=30000)
    runner.stop()
    assert sys.getswitchinterval() == before


def test_a_burst_of_young_objects_is_frozen_not_walked(qtbot) -> None:
    # bench/gui.py: one rolling step of the paper-004 wheel leaves up to 100 000 frames alive
    # at once; walking 40 000-130 000 young objects took the GUI thread 5-14 ms in one gap
    collector = GuiThreadCollector()
    collector.hold()
    try:
        _Cycle.freed_in.clear()
        garbage = _Cycle()
        del garbage  # a cycle among the burst: a walk would free it now
        frozen = gc.get_freeze_count()
        burst = [[k] for k in range(FREEZE_ABOVE + 1000)]
        assert gc.get_count()[0] > FREEZE_ABOVE
        collector.collect_due()
        assert gc.get_count()[0] == 0
        assert gc.get_freeze_count() >= frozen + len(burst)
        assert _Cycle.freed_in == [], "the burst was walked"
        # a young generation under the limit is still walked: its cycles are freed here
        for _ in range(gc.get_threshold()[0] + 10):
            _Cycle()
        assert gc.get_count()[0] < FREEZE_ABOVE
        collector.collect_due()
        assert _Cycle.freed_in and set(_Cycle.freed_in) == {threading.main_thread().name}
    finally:
        collector.release()
    gc.collect()
