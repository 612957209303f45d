"""A 2000-bead chain in the real window: the longest stop of the event loop, from Run to the end.

    .venv/bin/python bench/many_beads.py [--beads N] [--t-end T] [--profile FILE] [--stalls]

The chain of ``bench/gui.py`` with ``N`` beads (2000 by default) runs in the
main window at playback speed "as fast as possible" until the solver has
finished, then plays on for a second; then one bead is selected and its
mass edited, as a user would. A probe timer of 5 ms in the GUI thread
records the gaps between its ticks: the longest gap is the longest time the
window did not answer (target 100 ms, issue 10). Printed per phase (opening
the scene and its first paint, kept apart: it is not part of the run;
pressing Run, while the worker compiles the scene; the first two seconds;
the rest of the run; its end; select; edit), the longest from Run to the end
of the run,
and how many gaps over the target there were, and the most CPU time the GUI
thread spent within one gap (which other programs loading the machine do not
lengthen); never asserted. ``--profile``
writes a cProfile of the GUI thread; ``--stalls`` samples the GUI thread's
stack (every 10 ms, from another thread) whenever the probe has not ticked
for 40 ms and prints where the stops were spent. Offscreen by default
(``QT_QPA_PLATFORM``).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import sys
import threading
import time
import traceback
from collections import Counter
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QObject, QSettings, QTimer, Slot
from PySide6.QtWidgets import QApplication

from bench.gui import bead_chain, wait
from impactgui.commands import SetProperty
from impactgui.mainwindow import MainWindow
from impactgui.playback import AS_FAST_AS_POSSIBLE

PROBE_INTERVAL_MS = 5
TARGET_GAP_MS = 100.0
STALL_MS = 40.0
"""``--stalls``: the GUI thread's stack is sampled once the probe is this late, ms."""
RUN_PHASES = ("Run pressed", "first 2 s of run", "rest of run")


class GapProbe(QObject):
    """A 5 ms timer in the GUI thread: the longest gap between its ticks, per phase."""

    def __init__(self) -> None:
        super().__init__()
        self.timer = QTimer(self)
        self.timer.setInterval(PROBE_INTERVAL_MS)
        self.timer.timeout.connect(self.on_tick)
        self.phase = "start"
        self.longest: dict[str, float] = {}
        self.longest_cpu: dict[str, float] = {}
        """Most CPU time of the GUI thread within one gap, per phase, s."""
        self.late: dict[str, int] = {}
        self.last = time.perf_counter()
        self.last_cpu = time.thread_time()

    def start(self, phase: str) -> None:
        """Count the gaps from now on under ``phase``."""
        self.phase = phase
        self.last, self.last_cpu = time.perf_counter(), time.thread_time()
        self.longest.setdefault(phase, 0.0)
        self.longest_cpu.setdefault(phase, 0.0)
        self.late.setdefault(phase, 0)
        self.timer.start()

    @Slot()
    def on_tick(self) -> None:
        """One probe tick: the gap since the last one."""
        now, cpu = time.perf_counter(), time.thread_time()
        self.longest[self.phase] = max(self.longest[self.phase], now - self.last)
        self.longest_cpu[self.phase] = max(self.longest_cpu[self.phase], cpu - self.last_cpu)
        self.late[self.phase] += now - self.last > TARGET_GAP_MS / 1000
        self.last, self.last_cpu = now, cpu


class StallSampler:
    """Samples the GUI thread's stack from another thread while ``probe`` is late."""

    def __init__(self, probe: GapProbe) -> None:
        self.probe = probe
        self.samples: Counter[str] = Counter()
        self._gui = threading.main_thread().ident
        self._running = True
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while self._running:
            time.sleep(0.01)
            if time.perf_counter() - self.probe.last < STALL_MS / 1000:
                continue
            frame = sys._current_frames().get(self._gui)
            if frame is not None:
                stack = traceback.extract_stack(frame)[-6:]
                self.samples[
                    " <- ".join(
                        f"{entry.name} ({Path(entry.filename).name}:{entry.lineno})"
                        for entry in reversed(stack)
                    )
                ] += 1

    def stop(self) -> None:
        """Stop sampling and print the 15 most frequent stacks (about 10 ms each)."""
        self._running = False
        self._thread.join()
        print("where the GUI thread was while the probe was late (10 ms samples):")
        for stack, count in self.samples.most_common(15):
            print(f"{count * 10:6d} ms  {stack}")


def main() -> None:
    """Run the chain, select and edit a bead; print the longest gap of each phase."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beads", type=int, default=2000)
    parser.add_argument("--t-end", type=float, default=2.0, help="scene end time, s")
    parser.add_argument("--profile", help="write a cProfile of the GUI thread here")
    parser.add_argument("--stalls", action="store_true", help="print where the stops were")
    args = parser.parse_args()

    app = QApplication.instance() or QApplication(["bench"])
    settings = QSettings(str(Path("/tmp") / "impactgui-bench.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings)
    window.resize(1400, 900)
    window.show()
    wait(app, 0.5)
    profile = cProfile.Profile() if args.profile else None
    probe = GapProbe()
    sampler = StallSampler(probe) if args.stalls else None
    probe.start("scene opened")
    window.doc.set_data(bead_chain(args.beads, args.t_end))
    window.playback_bar.set_speed(AS_FAST_AS_POSSIBLE)
    wait(app, 0.5)  # its first paint, before Run: opening a scene is not part of the run
    if profile:
        profile.enable()
    started = time.perf_counter()
    probe.start("Run pressed")
    window.start_run()
    wait(app, 0.05)
    probe.start("first 2 s of run")
    wait(app, 2.0)
    probe.start("rest of run")
    while window.run_state == "running":
        wait(app, 0.1)
    computed = time.perf_counter() - started
    state = window.run_state
    frames = len(window.runner.trajectory) if window.runner is not None else 0
    probe.start("end of run")
    wait(app, 1.0)
    probe.start("select a bead")
    window.doc.select(("bodies", args.beads // 2))
    wait(app, 0.5)
    window.reset_run()
    probe.start("edit its mass")
    window.doc.push(SetProperty(window.doc, ("bodies", args.beads // 2, "mass"), 2.0))
    wait(app, 0.5)
    if profile:
        profile.disable()
        profile.dump_stats(args.profile)
    print(
        f"{args.beads} beads, t_end {args.t_end:g} s: run {state} after "
        f"{computed:.1f} s ({frames} frames), platform {app.platformName()}"
    )
    print(
        f"{'phase':<16} {'longest gap ms':>15} {'÷target':>8} {'gaps>target':>11} "
        f"{'most GUI CPU in a gap ms':>24}"
    )
    for phase, gap in probe.longest.items():
        print(
            f"{phase:<16} {gap * 1000:15.1f} {gap * 1000 / TARGET_GAP_MS:8.2f} "
            f"{probe.late[phase]:11d} {probe.longest_cpu[phase] * 1000:24.1f}"
        )
    run_gap = max(probe.longest[phase] for phase in RUN_PHASES) * 1000
    run_late = sum(probe.late[phase] for phase in RUN_PHASES)
    print(
        f"Run to the end of the run: longest stop {run_gap:.1f} ms "
        f"(÷target {run_gap / TARGET_GAP_MS:.2f}), {run_late} stops over {TARGET_GAP_MS:g} ms"
    )
    print(f"target: the event loop never stops for more than {TARGET_GAP_MS:g} ms")
    if sampler is not None:
        sampler.stop()
    window.doc.undo_stack.setClean()
    window.shutdown()


if __name__ == "__main__":
    main()
