"""A very large batch reaches the window in pieces, and the run is the same.

One step of the paper-004 wheel rolling on after the curb holds all its
frames to t_end (100 s: 100 000 frames); appended and plotted in one piece it
took the GUI thread 160-190 ms (bench/gui.py). The worker now hands such a
batch over in pieces (``split_output``); what the window holds is the
solver's own run, frame for frame and event for event.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt, QTimer

from impactgui.worker import HANDOVER_FRAMES_MAX, SimulationRunner, split_output
from solver.frames import StepOutput
from solver.scene import load_scene, parse_scene, scene_to_dict
from solver.simulation import make_stepper
from tests.gui.conftest import scene_path


def _whole_run(scene) -> StepOutput:
    stepper = make_stepper(scene)
    whole = StepOutput()
    while stepper.status == "running":
        output = stepper.step()
        whole.frames.extend(output.frames)
        whole.events.extend(output.events)
    return whole


@pytest.mark.parametrize("size", [1, 7, 50])
def test_pieces_join_to_the_batch_and_cut_no_impact_apart(size: int) -> None:
    whole = _whole_run(load_scene(scene_path("bouncing_ball")))
    assert any(f.kind == "pre" for f in whole.frames) and len(whole.events) > 5
    pieces = split_output(whole, size)
    assert [f for p in pieces for f in p.frames] == whole.frames
    assert [e for p in pieces for e in p.events] == whole.events
    previous_end = -np.inf
    for piece in pieces:
        assert len(piece.frames) >= 1
        if piece is not pieces[-1]:
            # a cut between two times (an impact's pre and post frames stay together)
            assert len(piece.frames) >= size
            end = piece.frames[-1].t
            following = pieces[pieces.index(piece) + 1].frames[0].t
            assert following > end
        else:
            end = np.inf
        assert all(previous_end < e.t <= end for e in piece.events)
        previous_end = end


def test_a_small_batch_is_handed_over_whole() -> None:
    whole = _whole_run(load_scene(scene_path("bouncing_ball")))
    assert split_output(whole, len(whole.frames)) == [whole]


def test_a_long_rolling_step_reaches_the_window_in_pieces_unchanged(qtbot, window) -> None:
    data = scene_to_dict(load_scene(scene_path("wheel_curb_e03")))
    data["solver"] = {**data["solver"], "t_end": 20.0}
    window.doc.set_data(data)
    window.doc.undo_stack.setClean()
    window.playback_bar.set_speed(float("inf"))
    sizes: list[int] = []
    assert window.start_run()
    window.runner.frames_added.connect(lambda batch: sizes.append(len(batch.frames)))
    qtbot.waitUntil(lambda: window.run_state in ("finished", "failed"), timeout=60000)
    assert window.run_state == "finished"
    assert max(sizes) <= 2 * HANDOVER_FRAMES_MAX  # one step held about 19 000 frames
    direct = _whole_run(parse_scene(data))
    trajectory = window.runner.trajectory
    assert np.array_equal(trajectory.times(), [f.t for f in direct.frames])
    states = np.array([np.concatenate((f.q, f.v)) for f in direct.frames])
    assert np.array_equal(trajectory.states()[: len(states)], states)
    assert [(e.t, e.type) for e in trajectory.events] == [(e.t, e.type) for e in direct.events]


class _GatheringStepper:
    """The solver's stepper, its steps gathered until they hold ``frames`` frames or the run ends.

    A free flight's samples now come a block of ``VECTOR_CHUNK`` a step, and how many
    blocks one batch gathers depends on the machine's speed (under load, none reached
    ``HANDOVER_FRAMES_MAX``); one step used to hold about 19 000 frames. Gathered so,
    the batches are large on any machine, and the frames are the solver's own.
    """

    def __init__(self, stepper, frames: int) -> None:
        self._stepper = stepper
        self._frames = frames

    def __getattr__(self, name: str):
        return getattr(self._stepper, name)

    def step(self) -> StepOutput:
        gathered = StepOutput()
        while len(gathered.frames) < self._frames and self._stepper.status == "running":
            output = self._stepper.step()
            gathered.frames.extend(output.frames)
            gathered.events.extend(output.events)
        return gathered


def test_a_display_tick_comes_between_two_pieces(qtbot) -> None:
    # bench/gui.py: pieces posted as soon as the one before was taken were taken two to four
    # in one gap between two frames drawn (5 ms of the GUI thread each)
    data = scene_to_dict(load_scene(scene_path("wheel_curb_e03")))
    data["solver"] = {**data["solver"], "t_end": 20.0}
    runner = SimulationRunner(_GatheringStepper(make_stepper(parse_scene(data)), 19_000))
    ticks = [0]
    display = QTimer()
    display.setTimerType(Qt.TimerType.PreciseTimer)
    display.setInterval(10)  # a tick sooner than the display's 16 ms
    display.timeout.connect(lambda: ticks.__setitem__(0, ticks[0] + 1))
    arrivals: list[tuple[int, int]] = []
    runner.frames_added.connect(lambda batch: arrivals.append((ticks[0], len(batch.frames))))
    display.start()
    runner.start()
    try:
        qtbot.waitUntil(lambda: not runner.is_running, timeout=60000)
    finally:
        runner.stop()
        display.stop()
    pieces = [k for k, (_, size) in enumerate(arrivals) if size >= HANDOVER_FRAMES_MAX]
    assert len(pieces) >= 3  # steps of 19 000 frames
    for k in pieces[1:]:
        assert arrivals[k][0] > arrivals[k - 1][0], (
            f"two pieces taken with no tick between {arrivals}"
        )
    assert len(runner.trajectory) == len(_whole_run(parse_scene(data)).frames)


def test_whole_batches_start_no_handover_timer(qtbot) -> None:
    # each tick of a timer wakes the GUI thread, which then waits for the interpreter lock
    # the solver holds: only a piece with more to follow is answered a display frame later
    runner = SimulationRunner(make_stepper(load_scene(scene_path("bouncing_ball"))))
    starts: list[int] = []
    start = runner._handover_timer.start
    runner._handover_timer.start = lambda: (starts.append(1), start())
    batches: list[int] = []
    runner.frames_added.connect(lambda batch: batches.append(len(batch.frames)))
    runner.start()
    try:
        qtbot.waitUntil(lambda: not runner.is_running, timeout=30000)
    finally:
        runner.stop()
    assert batches and max(batches) < HANDOVER_FRAMES_MAX
    assert starts == []
