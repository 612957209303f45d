"""GUI responsiveness while the solver runs: frames drawn per second, timer stalls, memory.

    .venv/bin/python bench/gui.py [--seconds S] [--frames N] [--without-plots] [--trace]

For each load — the window idle (baseline), the paper-004 wheel against a
curb, a 200-bead touching chain, and the playback of the bundled
newton_cradle_5_staged's finished run (the drawing alone, solver idle) — the
script runs the scene in the real main window (worker thread, playback at real
time) for ``S`` wall-clock seconds and prints the frames drawn per second
(target 60; ÷idle: the share of the idle window's display ticks that drew a
new frame), the longest gap between two display-timer ticks (target < 50 ms;
÷idle: against the idle window's longest gap; CPU: the most CPU time the GUI
thread spent in one gap, which a loaded machine does not lengthen; core: how
long the GUI thread waited for a core in the longest gap, Linux's run-queue
delay: what the machine's load adds; the rest of the gap beyond CPU and core is
the thread blocked, mostly on the interpreter lock), how many
gaps were over 50 ms, the frames computed per second (drawing cannot outrun
the solver), the memory per frame computed and the GUI thread's CPU time per
frame drawn (what other programs on the machine change least). Memory after
``N`` frames (1e5 by default): the wheel is run that far at full speed and the
resident size printed; for the chain, whose solver is far slower, it is
projected from the memory per frame. Then the 2000-bead spring chain
(chain_forced's pattern; its first step decomposes the whole chain's linear
flow, minutes of work in a child process): the longest stall of the event loop
(a 5 ms timer's longest gap; goal <= 100 ms) from Run until ``S`` seconds
after the run is prepared, and how long Pause, Reset and Close take while that
first step computes (goal < 500 ms). ``--without-plots`` hides the plots dock,
to tell the canvas's cost from the plots'. ``--trace`` times every per-frame
hook of the GUI thread (``HOOKS``: the slots that take a batch, the display
tick, the canvas frame, each view's paint) and prints, per load, the calls,
total and longest time (wall clock and CPU) of each; ``--gaps MS`` also lists, for
each gap between two display ticks longer than MS ms (or holding more GUI-thread
CPU), the hooks that ran in it and the GUI thread's collections. Offscreen by default
(``QT_QPA_PLATFORM``); on a virtual X display: ``xvfb-run -a -s "-screen 0
1600x1000x24" env QT_QPA_PLATFORM=xcb .venv/bin/python bench/gui.py``. ``--front RATE``
measures only the 200-bead chain at the solver's front: its run computed first, then
replayed as a solver at RATE × real time would hand it over, each display tick moving
the playback by exactly 1/60 s, and prints the GUI thread's CPU per tick (three runs;
``front_cost``): the cost of the window itself, not of the solver's speed, share of the
interpreter lock or the frames per second the machine allows. Numbers are printed,
never asserted.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib
import os
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QEventLoop, QObject, QSettings, QTimer, Slot
from PySide6.QtWidgets import QApplication

from impactgui.app import load_kernels_in_background
from impactgui.mainwindow import MainWindow
from impactgui.playback import AS_FAST_AS_POSSIBLE
from impactgui.presets import SCENES_DIR
from solver.scene import load_scene, scene_to_dict

TARGET_FPS = 60.0
TARGET_GAP_MS = 50.0
TARGET_STALL_MS = 100.0
TARGET_ANSWER_MS = 500.0

HOOKS = (
    "impactgui.worker:SimulationRunner._on_batch",
    "solver.record:Trajectory.append",
    "impactgui.mainwindow:MainWindow._on_frames_added",
    "impactgui.mainwindow:MainWindow._on_time_changed",
    "impactgui.mainwindow:MainWindow._on_frame_shown",
    "impactgui.mainwindow:MainWindow._show_progress",
    "impactgui.playback:PlaybackClock._on_tick",
    "impactgui.canvas:SceneCanvas.show_frame",
    "impactgui.plots:PlotPanel.add_output",
    "impactgui.plots:PlotPanel._on_redraw_timer",
    "impactgui.plots:PlotPanel.set_cursor",
    "impactgui.motion_plots:MotionPlots.set_cursor",
    "impactgui.reference_overlay:ReferenceOverlay.add_output",
    "impactgui.eventlog:EventLog.append",
    "impactgui.stage_table:StageTable.append",
    "impactgui.playback_honesty:PlaybackHonesty.set_time",
    "impactgui.run_progress:RunProgress.show_state",
    "pyqtgraph:GraphicsView.paintEvent",
)
"""Per-frame hooks of the GUI thread timed by ``--trace`` (``module:Class.method``)."""
_PAINTED_BY = ("SceneCanvas", "PlotPanel", "MotionPlots", "ReferenceOverlay", "SweepWindow")


class HookTimes:
    """Calls, total and longest time of each traced hook since the last ``reset``.

    With ``keep_calls``, every call is also kept as ``(start, end, CPU s, depth, name)``
    (``perf_counter`` seconds; depth: how many traced hooks it runs inside) for
    ``print_gaps``, with the GUI thread's collections ``(time, "start"/"stop",
    generation, young objects)``.
    """

    def __init__(self, keep_calls: bool = False) -> None:
        self.keep_calls = keep_calls
        self.depth = 0
        self.reset()
        if keep_calls:
            gui_thread = threading.get_ident()

            def on_collection(phase: str, info: dict[str, int]) -> None:
                if threading.get_ident() == gui_thread:
                    when = time.perf_counter()
                    self.collections.append((when, phase, info["generation"], gc.get_count()[0]))

            gc.callbacks.append(on_collection)

    def reset(self) -> None:
        """Forget every time."""
        self.log: list[tuple[float, float, float, int, str]] = []
        self.collections: list[tuple[float, str, int, int]] = []
        self.calls: dict[str, int] = defaultdict(int)
        self.total: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self.longest: dict[str, float] = defaultdict(float)
        self.longest_cpu: dict[str, float] = defaultdict(float)

    def add(self, name: str, start: float, seconds: float, cpu_seconds: float) -> None:
        """One call of ``name`` from ``start`` took ``seconds`` (wall clock), ``cpu_seconds``
        of this thread."""
        if self.keep_calls:
            self.log.append((start, start + seconds, cpu_seconds, self.depth, name))
        self.calls[name] += 1
        self.total[name] += seconds
        self.cpu[name] += cpu_seconds
        self.longest[name] = max(self.longest[name], seconds)
        self.longest_cpu[name] = max(self.longest_cpu[name], cpu_seconds)

    def print(self, title: str, elapsed: float) -> None:
        """The table, slowest in total first."""
        print(
            f"  hooks of {title} ({elapsed:.1f} s): calls, total ms (share of the time), "
            "CPU ms of the GUI thread, longest ms, longest CPU ms (nested hooks count in each)"
        )
        for name in sorted(self.total, key=self.total.__getitem__, reverse=True):
            print(
                f"    {name:<44} {self.calls[name]:6d} {self.total[name] * 1e3:9.1f} "
                f"({self.total[name] / elapsed:5.1%}) {self.cpu[name] * 1e3:9.1f} "
                f"{self.longest[name] * 1e3:8.1f} {self.longest_cpu[name] * 1e3:8.1f}"
            )

    def print_gaps(self, gaps: list[tuple[float, float, float]], over_ms: float) -> None:
        """What the GUI thread ran in each gap ``(start, end, CPU s)`` longer than ``over_ms``
        (wall clock) or with more CPU than that: the traced calls of 1 ms or more, nested
        ones indented, and its collections."""
        for start, end, cpu in gaps:
            if max(end - start, cpu) * 1e3 < over_ms:
                continue
            print(f"    gap of {(end - start) * 1e3:.1f} ms, {cpu * 1e3:.1f} ms of GUI-thread CPU:")
            for begin, finish, call_cpu, depth, name in sorted(self.log):
                if start <= begin and finish <= end and finish - begin >= 1e-3:
                    print(
                        f"      {'  ' * depth}+{(begin - start) * 1e3:6.1f} ms  {name:<36} "
                        f"{(finish - begin) * 1e3:6.1f} ms, CPU {call_cpu * 1e3:5.1f}"
                    )
            for when, phase, generation, young in self.collections:
                if start <= when <= end:
                    print(
                        f"      +{(when - start) * 1e3:6.1f} ms  collection of generation "
                        f"{generation} {phase}s ({young} young objects)"
                    )


def _painter_of(view: Any) -> str:
    """Which part of the window a GraphicsView belongs to (its nearest named ancestor)."""
    widget = view
    while widget is not None:
        if type(widget).__name__ in _PAINTED_BY:
            return type(widget).__name__
        widget = widget.parent()
    return "other"


def trace_hooks(times: HookTimes) -> None:
    """Wrap every hook of ``HOOKS`` so that each call is timed (before the window is made)."""
    for hook in HOOKS:
        module_name, qualified = hook.split(":")
        class_name, method_name = qualified.split(".")
        owner = getattr(importlib.import_module(module_name), class_name)
        method = getattr(owner, method_name)
        label = f"{class_name}.{method_name}"

        def timed(
            *args: Any, _method: Callable = method, _label: str = label, **kwargs: Any
        ) -> Any:
            start, cpu = time.perf_counter(), time.thread_time()
            times.depth += 1
            try:
                return _method(*args, **kwargs)
            finally:
                times.depth -= 1
                name = _label
                if _label == "GraphicsView.paintEvent":
                    name = f"paint {_painter_of(args[0])}"
                times.add(name, start, time.perf_counter() - start, time.thread_time() - cpu)

        setattr(owner, method_name, functools.wraps(method)(timed))


def bead_chain(n: int = 200, t_end: float = 1000.0) -> dict[str, Any]:
    """``n`` beads on one rail between two walls, the first one thrown at the rest."""
    radius, gap = 0.01, 0.005
    pitch = 2 * radius + gap
    beads = [
        {
            "id": f"b{k}",
            "type": "bead",
            "rail_y": 0.0,
            "mass": 1.0,
            "radius": radius,
            "x": k * pitch,
            "vx": 1.0 if k == 0 else 0.0,
        }
        for k in range(n)
    ]
    right = n * pitch
    return {
        "format": "impactgui-scene",
        "version": 1,
        "title": f"{n}-bead chain",
        "gravity": [0.0, 0.0],
        "contact": {"restitution": 1.0, "friction": 0.0, "impact_law": "staged"},
        "boundaries": [
            {"id": "left", "type": "segment", "a": [-pitch, -0.1], "b": [-pitch, 0.1]},
            {"id": "right", "type": "segment", "a": [right, -0.1], "b": [right, 0.1]},
        ],
        "bodies": beads,
        "solver": {"method": "event-driven", "t_end": t_end, "dt_out": 0.001},
    }


def core_wait() -> float:
    """Time this thread has waited for a core so far, s (Linux's run-queue delay; NaN elsewhere).

    A gap of the GUI thread is its CPU time, this wait (other programs, or the solver
    thread, on the cores) and the rest: blocked, mostly on the interpreter lock.
    """
    try:
        return int(Path("/proc/thread-self/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return float("nan")


class TickRecorder(QObject):
    """Counts display-timer ticks and remembers the longest gap between two.

    Also the most CPU time the GUI thread spent between two ticks: the work a
    gap holds, which other programs loading the machine do not lengthen (the
    wall-clock gap adds the waits for a core and for the interpreter lock).
    """

    def __init__(self) -> None:
        super().__init__()
        self.reset()

    def reset(self) -> None:
        """Start counting afresh."""
        self.last = time.perf_counter()
        self.last_cpu = time.thread_time()
        self.last_wait = core_wait()
        self.longest = 0.0
        self.longest_cpu = 0.0
        self.longest_split = (0.0, 0.0)
        """The longest gap's GUI-thread CPU and wait for a core, s."""
        self.ticks = 0
        self.late = 0
        self.gaps: list[tuple[float, float, float]] = []
        """Every gap since ``reset``: ``(start, end, CPU s of the GUI thread)``."""

    @Slot()
    def on_tick(self) -> None:
        """One display tick."""
        now, cpu, waited = time.perf_counter(), time.thread_time(), core_wait()
        self.gaps.append((self.last, now, cpu - self.last_cpu))
        gap = now - self.last
        if gap > self.longest:
            self.longest_split = (cpu - self.last_cpu, waited - self.last_wait)
        self.longest = max(self.longest, gap)
        self.longest_cpu = max(self.longest_cpu, cpu - self.last_cpu)
        self.late += gap > TARGET_GAP_MS / 1000
        self.last, self.last_cpu, self.last_wait = now, cpu, waited
        self.ticks += 1


def wait(app: QApplication, seconds: float) -> None:
    """Run a real event loop (it blocks when idle, as ``app.exec`` does) for ``seconds``."""
    loop = QEventLoop()
    QTimer.singleShot(round(seconds * 1000), loop.quit)
    loop.exec()


def resident_mb() -> float:
    """Resident set size of this process, MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Load:
    """What one load measured."""

    name: str
    drawn_per_s: float
    ticks_per_s: float
    longest_gap_ms: float
    longest_gap_cpu_ms: float
    """Most CPU time of the GUI thread between two display ticks, ms."""
    longest_gap_split_ms: tuple[float, float]
    """The longest gap's GUI-thread CPU and wait for a core, ms."""
    late_gaps: int
    computed_per_s: float
    bytes_per_frame: float
    gui_cpu_ms_per_frame: float
    """CPU time of the GUI thread per frame drawn, ms: unlike the rates, little changed by
    other programs loading the machine."""


def measure(
    app: QApplication,
    window: MainWindow,
    recorder: TickRecorder,
    name: str,
    data: dict | None,
    seconds: float,
    hooks: HookTimes | None = None,
    gaps_over_ms: float = TARGET_GAP_MS,
) -> Load:
    """Run ``data`` (None: the idle window, clock ticking) for ``seconds`` and measure it.

    With ``hooks``, the hooks' times of the measured seconds are printed, and if they
    keep their calls, what ran in each gap over ``gaps_over_ms`` (``HookTimes.print_gaps``).
    """
    window.reset_run()
    gc.collect()
    rss_before = resident_mb()
    if data is not None:
        window.doc.set_data(data)
        window.start_run()
    else:
        window.clock.play()
    wait(app, 0.3)
    drawn0, start, cpu0 = window.frames_drawn, time.perf_counter(), time.thread_time()
    computed0 = len(window.runner.trajectory) if window.runner is not None else 0
    recorder.reset()
    if hooks is not None:
        hooks.reset()
    wait(app, seconds)
    elapsed, cpu = time.perf_counter() - start, time.thread_time() - cpu0
    if hooks is not None:
        hooks.print(name, elapsed)
        if hooks.keep_calls:
            hooks.print_gaps(recorder.gaps, gaps_over_ms)
    window.pause_run()
    computed = len(window.runner.trajectory) if window.runner is not None else 0
    grown = (resident_mb() - rss_before) * 1e6
    load = Load(
        name,
        drawn_per_s=(window.frames_drawn - drawn0) / elapsed,
        ticks_per_s=recorder.ticks / elapsed,
        longest_gap_ms=recorder.longest * 1000,
        longest_gap_cpu_ms=recorder.longest_cpu * 1000,
        longest_gap_split_ms=(1e3 * recorder.longest_split[0], 1e3 * recorder.longest_split[1]),
        late_gaps=recorder.late,
        computed_per_s=(computed - computed0) / elapsed,
        bytes_per_frame=grown / computed if computed else 0.0,
        gui_cpu_ms_per_frame=1e3 * cpu / max(window.frames_drawn - drawn0, 1),
    )
    window.reset_run()
    return load


def measure_playback(
    app: QApplication,
    window: MainWindow,
    recorder: TickRecorder,
    name: str,
    data: dict,
    seconds: float,
) -> Load:
    """Play back ``data``'s finished run at real time for ``seconds``: the drawing alone.

    The run is computed first at full speed; the clock then starts again at
    t = 0 with the solver idle, so the frames drawn per second are what the
    window's drawing can do (on a real display: the screen's 60 Hz).
    """
    window.reset_run()
    window.doc.set_data(data)
    window.playback_bar.set_speed(AS_FAST_AS_POSSIBLE)
    window.start_run()
    while window.runner is not None and window.runner.status == "running":
        wait(app, 0.1)
    window.pause_run()
    window.playback_bar.set_speed(1.0)
    window.clock.seek(0.0)
    window.clock.play()
    gc.collect()
    wait(app, 0.3)
    drawn0, start, cpu0 = window.frames_drawn, time.perf_counter(), time.thread_time()
    recorder.reset()
    wait(app, seconds)
    elapsed, cpu = time.perf_counter() - start, time.thread_time() - cpu0
    window.clock.pause()
    drawn = window.frames_drawn - drawn0
    load = Load(
        name,
        drawn_per_s=drawn / elapsed,
        ticks_per_s=recorder.ticks / elapsed,
        longest_gap_ms=recorder.longest * 1000,
        longest_gap_cpu_ms=recorder.longest_cpu * 1000,
        longest_gap_split_ms=(1e3 * recorder.longest_split[0], 1e3 * recorder.longest_split[1]),
        late_gaps=recorder.late,
        computed_per_s=0.0,
        bytes_per_frame=0.0,
        gui_cpu_ms_per_frame=1e3 * cpu / max(drawn, 1),
    )
    window.reset_run()
    window.playback_bar.set_speed(1.0)
    return load


def memory_after(
    app: QApplication, window: MainWindow, data: dict, frames: int
) -> tuple[int, float, float]:
    """Run ``data`` at full speed until ``frames`` are recorded: (frames, resident MB, seconds)."""
    window.reset_run()
    window.doc.set_data(data)
    window.playback_bar.set_speed(AS_FAST_AS_POSSIBLE)
    start = time.perf_counter()
    window.start_run()
    while window.runner is not None and len(window.runner.trajectory) < frames:
        if window.runner.status != "running":
            break
        wait(app, 0.2)
    window.pause_run()
    recorded = len(window.runner.trajectory) if window.runner is not None else 0
    rss, seconds = resident_mb(), time.perf_counter() - start
    window.reset_run()
    window.playback_bar.set_speed(1.0)
    return recorded, rss, seconds


class StallRecorder(QObject):
    """The longest gap between two ticks of a 5 ms timer: how long the event loop stalled."""

    def __init__(self) -> None:
        super().__init__()
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self.on_tick)
        self.reset()

    def reset(self) -> None:
        """Start afresh."""
        self.last = time.perf_counter()
        self.last_cpu = time.thread_time()
        self.last_wait = core_wait()
        self.longest = 0.0
        self.longest_cpu = 0.0
        self.longest_split = (0.0, 0.0)
        """The longest stall's GUI-thread CPU and wait for a core, s."""

    @Slot()
    def on_tick(self) -> None:
        """One tick; also the most CPU time of the GUI thread between two (the work a stall
        holds: what a loaded machine adds to the wall-clock gap is waiting for a core)."""
        now, cpu, waited = time.perf_counter(), time.thread_time(), core_wait()
        if now - self.last > self.longest:
            self.longest_split = (cpu - self.last_cpu, waited - self.last_wait)
        self.longest = max(self.longest, now - self.last)
        self.longest_cpu = max(self.longest_cpu, cpu - self.last_cpu)
        self.last, self.last_cpu, self.last_wait = now, cpu, waited


def spring_chain_answers(app: QApplication, beads: int, seconds: float) -> dict[str, float]:
    """Stall, Pause, Reset and Close of a fresh window running a ``beads``-bead spring chain, ms.

    chain_forced's pattern: 1 kg beads of radius 0.05 m, 0.2 m apart, 100 N/m
    springs of rest length 0.2 m, the first tied to an anchor, 10 N at 8 rad/s
    on the last; e = 0.8; 10 s.
    """
    from tests.scene_data import spring_chain

    settings = QSettings(str(Path("/tmp") / "impactgui-bench.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings)
    window.resize(1400, 900)
    window.show()
    wait(app, 0.3)
    stalls = StallRecorder()
    stalls.timer.start()
    window.doc.set_data(scene_to_dict(spring_chain(beads, t_end=10.0)))
    window.doc.undo_stack.setClean()
    wait(app, 2.0)  # drawing 2000 beads and springs for editing is not the solver's stall
    answers: dict[str, float] = {}
    stalls.reset()
    start = time.perf_counter()
    window.start_run()
    while window.runner.is_preparing:
        wait(app, 0.02)
    answers["prepared_s"] = time.perf_counter() - start
    wait(app, seconds)
    answers["stall"] = stalls.longest * 1e3
    answers["stall_cpu"] = stalls.longest_cpu * 1e3
    answers["stall_split"] = tuple(1e3 * part for part in stalls.longest_split)
    answers["frames"] = len(window.runner.trajectory)
    for name, call in (("pause", window.pause_run), ("reset", window.reset_run)):
        start = time.perf_counter()
        call()
        answers[name] = (time.perf_counter() - start) * 1e3
    window.start_run()
    while window.runner.is_preparing:
        wait(app, 0.02)
    wait(app, 1.0)
    start = time.perf_counter()
    window.close()
    answers["close"] = (time.perf_counter() - start) * 1e3
    stalls.timer.stop()
    return answers


class _ReplayStepper:
    """A finished run's output handed over as a solver computing ``rate`` s of simulated time
    per second of the replay's clock (``clock``: a list holding its time) would; no work."""

    def __init__(self, system: Any, outputs: list, rate: float, clock: list[float]) -> None:
        self.system, self.status, self.message, self.t = system, "running", "", 0.0
        self._frames = [frame for output in outputs for frame in output.frames]
        self._events = [event for output in outputs for event in output.events]
        self._times = [frame.t for frame in self._frames]
        self._rate, self._clock = rate, clock
        self._start: float | None = None
        self._next = self._next_event = 0

    def step(self) -> Any:
        """The frames computed by the replay's clock's time (none after 10 ms without any)."""
        from bisect import bisect_right

        from solver.frames import StepOutput

        if self._start is None:
            self._start = self._clock[0]
        for _ in range(10):
            due = max(bisect_right(self._times, (self._clock[0] - self._start) * self._rate), 1)
            if due > self._next:
                break
            time.sleep(0.001)
        else:
            return StepOutput()
        due = min(due, len(self._frames))
        output = StepOutput(self._frames[self._next : due], [])
        self.t = self._frames[due - 1].t
        while self._next_event < len(self._events) and self._events[self._next_event].t <= self.t:
            output.events.append(self._events[self._next_event])
            self._next_event += 1
        self._next = due
        if due >= len(self._frames):
            self.status = "finished"
        return output


def front_cost(app: QApplication, rate: float, ticks: int) -> float:
    """GUI-thread CPU per display tick, ms, of a fresh window playing the 200-bead chain at real
    time while its solver computes ``rate`` × real time (below 1: the screen waits at the
    solver's front, where each frame draws the data newly shown).

    The solver's output is computed first and replayed; each display tick moves the
    playback by exactly 1/60 s (the clock's own time is the replay's), so what a tick
    costs does not depend on the frames per second the machine allows, nor on the
    solver's speed or its share of the interpreter lock. The timers that run on the wall
    clock (the plots' redraw round, the collector) still do: a loaded machine adds a little.
    """
    import impactgui.mainwindow as mainwindow_module
    import impactgui.playback as playback_module
    from solver.scene import parse_scene
    from solver.simulation import make_stepper

    scene = parse_scene(bead_chain())
    stepper = make_stepper(scene)
    outputs = []
    end = ticks / 60 * rate + 1.0
    while stepper.status == "running" and (not outputs or outputs[-1].frames[-1].t < end):
        output = stepper.step()
        if output.frames:
            outputs.append(output)
    clock = [0.0]
    real_time, real_make, real_tick = (
        playback_module.time,
        mainwindow_module.make_stepper,
        playback_module.PlaybackClock._on_tick,
    )

    class _ReplayTime:
        monotonic = staticmethod(lambda: clock[0])
        perf_counter = staticmethod(time.perf_counter)

    def tick(self: Any) -> None:
        clock[0] += 1 / TARGET_FPS
        real_tick(self)

    playback_module.time = _ReplayTime
    playback_module.PlaybackClock._on_tick = tick
    mainwindow_module.make_stepper = lambda scene, *a, **k: _ReplayStepper(
        stepper.system, outputs, rate, clock
    )
    try:
        settings = QSettings(str(Path("/tmp") / "impactgui-bench.ini"), QSettings.Format.IniFormat)
        window = MainWindow(settings=settings)
        window.resize(1400, 900)
        window.show()
        count = [0]
        window.clock.ticked.connect(lambda: count.__setitem__(0, count[0] + 1))
        wait(app, 0.5)
        window.doc.set_data(bead_chain())
        window.start_run()
        while count[0] < 30:
            wait(app, 0.005)
        count[0], cpu = 0, time.thread_time()
        while count[0] < ticks:
            wait(app, 0.005)
        cost = 1e3 * (time.thread_time() - cpu) / count[0]
        window.shutdown()
    finally:
        playback_module.time = real_time
        playback_module.PlaybackClock._on_tick = real_tick
        mainwindow_module.make_stepper = real_make
    return cost


def main() -> None:
    """Measure every load and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="wall-clock seconds per load")
    parser.add_argument("--frames", type=int, default=100_000, help="frames for the memory test")
    parser.add_argument("--without-plots", action="store_true", help="hide the plots dock")
    parser.add_argument("--trace", action="store_true", help="time each per-frame hook")
    parser.add_argument(
        "--gaps",
        type=float,
        metavar="MS",
        help="with the hooks traced, print what the GUI thread ran in each gap (or its CPU) "
        "over MS ms: the hooks of 1 ms or more, and its collections",
    )
    parser.add_argument(
        "--spring-beads", type=int, default=2000, help="beads of the spring chain (0: skip it)"
    )
    parser.add_argument(
        "--front",
        type=float,
        metavar="RATE",
        help="only the 200-bead chain at the solver's front, its run replayed: the GUI "
        "thread's CPU per display tick with the solver at RATE x real time (0.72: the chain "
        "on a quiet machine), whatever the machine's load (front_cost)",
    )
    parser.add_argument(
        "--front-frames",
        type=int,
        default=300,
        metavar="N",
        help="with --front: display ticks measured (1500 at 0.25: the run's first 6 s, "
        "where the time axis spans 10 s and a frame moves a quarter of a pixel column)",
    )
    args = parser.parse_args()
    if args.front is not None:
        app = QApplication.instance() or QApplication(["bench"])
        costs = [front_cost(app, args.front, args.front_frames) for _ in range(3)]
        print(
            f"200-bead chain replayed, solver at {args.front:g} x real time, "
            f"{args.front_frames} frames: GUI CPU per display tick "
            f"{' '.join(f'{c:.1f}' for c in costs)} ms (goal <= 12; load "
            f"{os.getloadavg()[0]:.1f})"
        )
        return

    traced = args.trace or args.gaps is not None
    hooks = HookTimes(keep_calls=args.gaps is not None) if traced else None
    if hooks is not None:
        trace_hooks(hooks)
    app = QApplication.instance() or QApplication(["bench"])
    # as the application does at its start (impactgui.app): the solver's compiled kernels
    # are loaded before any run, not inside the first run's first step
    load_kernels_in_background().join()
    settings = QSettings(str(Path("/tmp") / "impactgui-bench.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings)
    window.resize(1400, 900)
    window.show()
    if args.without_plots:
        window.plots_dock.hide()
    recorder = TickRecorder()
    window.clock.ticked.connect(recorder.on_tick)
    wait(app, 0.5)

    paper_004 = scene_to_dict(load_scene(SCENES_DIR / "wheel_curb_e03.json"))
    paper_004["solver"] = {**paper_004.get("solver", {}), "t_end": 100.0}
    loads = [
        ("idle window", None),
        ("paper 004 wheel", paper_004),
        ("200-bead chain", bead_chain()),
    ]
    plots = "hidden" if args.without_plots else "shown"
    print(f"platform {app.platformName()}, {args.seconds:g} s per load, plots {plots}")
    print(
        f"{'load':<16} {'drawn/s':>8} {'÷60':>5} {'÷idle':>6} {'max gap ms':>10} {'÷idle':>6} "
        f"{'CPU':>5} {'core':>5} {'gaps>50':>7} {'computed/s':>10} {'B/frame':>8} "
        f"{'GUI CPU ms/frame':>16}"
    )
    results = [
        measure(app, window, recorder, name, data, args.seconds, hooks, args.gaps or TARGET_GAP_MS)
        for name, data in loads
    ]
    cradle = scene_to_dict(load_scene(SCENES_DIR / "newton_cradle_5_staged.json"))
    cradle["solver"] = {**cradle.get("solver", {}), "t_end": args.seconds + 2.0}
    results.append(measure_playback(app, window, recorder, "cradle playback", cradle, args.seconds))
    idle = results[0]
    for load in results:
        print(
            f"{load.name:<16} {load.drawn_per_s:8.1f} {load.drawn_per_s / TARGET_FPS:5.2f} "
            f"{load.drawn_per_s / idle.ticks_per_s:6.2f} {load.longest_gap_ms:10.1f} "
            f"{load.longest_gap_ms / idle.longest_gap_ms:6.2f} {load.longest_gap_cpu_ms:5.1f} "
            f"{load.longest_gap_split_ms[1]:5.1f} {load.late_gaps:7d} "
            f"{load.computed_per_s:10.0f} "
            f"{load.bytes_per_frame:8.0f} {load.gui_cpu_ms_per_frame:16.1f}"
        )
    print(
        f"targets: {TARGET_FPS:g} frames drawn per second, gaps < {TARGET_GAP_MS:g} ms; "
        f"idle window: {idle.ticks_per_s:.1f} ticks/s, longest gap {idle.longest_gap_ms:.1f} ms; "
        f"cradle playback: the bundled 5-ball cradle's finished run played back at real time; "
        f"core: how long the GUI thread waited for a core in the longest gap (ms; the rest of "
        f"it beyond CPU is mostly the interpreter lock); load {os.getloadavg()[0]:.1f}"
    )

    gc.collect()
    idle_mb = resident_mb()
    wheel = {**paper_004, "solver": {**paper_004["solver"], "t_end": args.frames / 1000 + 1}}
    frames, rss, seconds = memory_after(app, window, wheel, args.frames)
    print(
        f"memory, idle window: RSS {idle_mb:.0f} MB; paper 004 wheel after {frames} frames "
        f"(run in {seconds:.1f} s): {rss:.0f} MB (×{rss / idle_mb:.2f} idle, "
        f"{1e6 * (rss - idle_mb) / max(frames, 1):.0f} B/frame)"
    )
    chain = results[2]
    projected = idle_mb + chain.bytes_per_frame * args.frames / 1e6
    print(
        f"memory, 200-bead chain after {args.frames} frames (projected from "
        f"{chain.bytes_per_frame:.0f} B/frame): {projected:.0f} MB "
        f"(×{projected / idle_mb:.2f} idle)"
    )
    window.shutdown()

    if args.spring_beads:
        answers = spring_chain_answers(app, args.spring_beads, args.seconds)
        print(
            f"{args.spring_beads}-bead spring chain: prepared in {answers['prepared_s']:.1f} s, "
            f"{answers['frames']:.0f} frames computed in the {args.seconds:g} s after; longest "
            f"stall of the event loop {answers['stall']:.0f} ms (goal <= {TARGET_STALL_MS:g}; "
            f"most GUI-thread CPU in one gap {answers['stall_cpu']:.0f} ms; the longest: "
            f"{answers['stall_split'][0]:.0f} ms CPU, {answers['stall_split'][1]:.0f} ms waiting "
            f"for a core, the rest blocked (the interpreter lock) or the timer's 5 ms; load "
            f"{os.getloadavg()[0]:.1f}); "
            f"inside its first step: Pause {answers['pause']:.1f} ms, Reset "
            f"{answers['reset']:.0f} ms, Close {answers['close']:.0f} ms "
            f"(goal < {TARGET_ANSWER_MS:g})"
        )


if __name__ == "__main__":
    main()
