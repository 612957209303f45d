"""The window never waits on the solver (issue 25, item 4).

A 2000-bead spring chain froze the window for 250-300 s at "0 of 10 s
computed": its first step decomposes the chain's 4001 x 4001 linear flow
(``scipy.linalg.schur``, which keeps the interpreter lock); Reset then raised
"simulation thread did not stop" after waiting 10 s for that step and the
process aborted, and closing hung. Now such a scene computes in a child
process (``impactgui.solver_process``) that Reset and Close end at once,
and Reset never joins a worker that is inside a step.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

import numpy as np
import pyqtgraph as pg
import pytest

import impactgui.mainwindow as mainwindow_module
from solver.frames import StepOutput
from solver.scene import scene_to_dict
from tests.gui.conftest import run_solver_cli, scene_path
from tests.scene_data import spring_chain


class Children:
    """Every ``ProcessStepper`` the window makes, kept for the test."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.made: list[Any] = []
        real = mainwindow_module.ProcessStepper

        def make(scene: Any) -> Any:
            child = real(scene)
            self.made.append(child)
            return child

        monkeypatch.setattr(mainwindow_module, "ProcessStepper", make)

    def alive(self, child: Any) -> bool:
        return child._process is not None and child._process.is_alive()


def _start_the_2000_bead_chain(qtbot, window) -> Any:
    window.doc.set_data(scene_to_dict(spring_chain(2000, t_end=10.0)))
    assert window.start_run()
    qtbot.waitUntil(lambda: not window.runner.is_preparing, timeout=60000)
    assert window.runner.system.N == 2000
    return window.runner


def test_pause_reset_and_close_do_not_wait_for_the_first_step_of_2000_springs(
    qtbot, window, monkeypatch
) -> None:
    children = Children(monkeypatch)
    runner = _start_the_2000_bead_chain(qtbot, window)
    (child,) = children.made
    # the child is computing 10 s of a 2000-bead chain (minutes of CPU, even in modal form):
    # the window answers whatever it has computed so far
    assert children.alive(child) and runner.is_running
    assert not runner.trajectory.times().tolist() or runner.trajectory.times()[-1] < 10.0
    window.pause_run()
    assert window.run_state == "paused" and runner.is_paused
    window.reset_run()  # waited 10 s for the step, then raised "did not stop"
    assert window.runner is None and window.run_state == "idle"
    assert runner.status == "stopped"
    qtbot.waitUntil(lambda: not children.alive(child), timeout=10000)
    qtbot.waitUntil(lambda: runner.is_joined, timeout=10000)
    assert window._abandoned == []

    runner = _start_the_2000_bead_chain(qtbot, window)
    child = children.made[-1]
    assert children.alive(child)
    window.doc.undo_stack.setClean()
    window.close()
    assert not window.isVisible()
    assert runner.status == "stopped" and runner.is_joined
    assert not children.alive(child)


def test_a_crashed_solver_process_is_a_failed_run_with_its_message(
    qtbot, window, monkeypatch
) -> None:
    children = Children(monkeypatch)
    runner = _start_the_2000_bead_chain(qtbot, window)
    (child,) = children.made
    os.kill(child.pid, signal.SIGSEGV)  # as a crash in compiled code would end it
    qtbot.waitUntil(lambda: window.run_state == "failed", timeout=20000)
    assert runner.message == "the solver process ended unexpectedly (killed by signal SIGSEGV)"
    assert runner.message in window.statusBar().currentMessage()
    errors = [e for e in window.event_log.table_model.events if e.type == "error"]
    assert [e.message for e in errors] == [runner.message]
    window.reset_run()
    assert window.run_state == "idle" and window.canvas.editing_enabled


def test_small_scenes_and_chains_without_springs_step_in_the_worker_thread(
    qtbot, window, monkeypatch
) -> None:
    children = Children(monkeypatch)
    assert window.open_file(scene_path("chain_forced"))
    assert window.start_run()
    qtbot.waitUntil(lambda: len(window.runner.trajectory) > 0, timeout=20000)
    window.reset_run()
    from bench.gui import bead_chain

    window.doc.set_data(bead_chain(300, t_end=0.01))
    assert window.start_run()
    qtbot.waitUntil(lambda: window.run_state == "finished", timeout=60000)
    assert children.made == []


class _HeldStepper:
    """A stepper whose second step waits (without the lock) until the test lets it go."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.system = real.system
        self.inside = threading.Event()
        self.release = threading.Event()
        self.steps = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def step(self) -> StepOutput:
        self.steps += 1
        if self.steps == 2:
            self.inside.set()
            assert self.release.wait(30), "the test never let the step go"
        return self._real.step()


def test_reset_never_joins_a_worker_thread_inside_a_step(qtbot, window, monkeypatch) -> None:
    held: list[_HeldStepper] = []
    make = mainwindow_module.make_stepper
    monkeypatch.setattr(
        mainwindow_module,
        "make_stepper",
        lambda scene: held.append(_HeldStepper(make(scene))) or held[-1],
    )
    assert window.open_file(scene_path("bouncing_ball"))
    assert window.start_run()
    qtbot.waitUntil(lambda: bool(held) and held[0].inside.is_set(), timeout=20000)
    runner = window.runner
    try:
        window.reset_run()  # joined the thread: 10 s, then "simulation thread did not stop"
        assert window.run_state == "idle" and runner.status == "stopped"
        assert not runner.is_joined, "the worker is still inside its step"
    finally:
        held[0].release.set()
    qtbot.waitUntil(lambda: runner.is_joined, timeout=20000)
    assert held[0].steps == 2, "no step after the one it was in"


def test_two_thousand_springs_are_drawn_by_two_curves(qtbot, window) -> None:
    window.doc.set_data(scene_to_dict(spring_chain(2000, t_end=10.0)))
    layer = window.canvas.layer
    curves = [i for i in window.canvas.view.addedItems if isinstance(i, pg.PlotCurveItem)]
    assert len(layer.springs) == 2000
    assert len(curves) < 10, "one curve per spring took 2 s per frame and 0.45 s per paint"
    # the anchor's spring: from the rim of bead 0 (radius 0.05 m) to the anchor (-0.2, 0),
    # 0.15 m of zig-zag 0.03 m wide (0.6 r): round(0.15 / 0.03) = 5 coils, 13 points; the
    # first turn on the spring's left (looking from bead 0 towards -x: y < 0)
    xs, ys = layer.springs[0].getData()
    along = np.concatenate(([0.0, 0.15], np.linspace(0.15, 0.85, 11)[1:-1], [0.85, 1.0]))
    assert xs == pytest.approx(-0.05 - 0.15 * along)
    turns = [0.015 * (-1) ** (k + 1) for k in range(9)]
    assert ys == pytest.approx([0, 0, *turns, 0, 0], abs=1e-12)
    # between beads 0.2 m apart: rim to rim, 0.1 m
    xs, _ = layer.springs[7].getData()
    assert (xs.min(), xs.max()) == pytest.approx((6 * 0.2 + 0.05, 7 * 0.2 - 0.05))


def test_a_run_in_a_child_process_exports_what_the_command_line_writes(
    qtbot, window, monkeypatch, tmp_path
) -> None:
    import json

    children = Children(monkeypatch)
    data = scene_to_dict(spring_chain(40, t_end=0.3, dt_out=0.01))
    scene_file = tmp_path / "chain40.json"
    scene_file.write_text(json.dumps(data))
    assert window.open_file(scene_file)
    assert window.start_run()
    qtbot.waitUntil(lambda: window.run_state in ("finished", "failed"), timeout=120000)
    assert window.run_state == "finished" and len(children.made) == 1
    assert window.export_csv(tmp_path / "app") is not None
    run_solver_cli(scene_file, tmp_path / "cli")
    names = sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert "trajectory.csv" in names
    for name in names:
        assert (tmp_path / "app" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()


def test_where_no_child_process_can_start_the_run_steps_in_the_worker_thread(
    qtbot, window, monkeypatch
) -> None:
    import impactgui.solver_process as solver_process

    def refuse() -> Any:
        raise PermissionError("no sockets here")

    monkeypatch.setattr(solver_process, "_context", refuse)
    window.doc.set_data(scene_to_dict(spring_chain(40, t_end=0.1, dt_out=0.01)))
    assert window.start_run()
    qtbot.waitUntil(lambda: window.run_state == "finished", timeout=120000)
    assert window.runner.trajectory.times()[-1] == pytest.approx(0.1)
