"""A 2000-bead chain in the real window: the longest stop of the event loop, from Run to the end.

    .venv/bin/python bench/many_beads.py [--beads N] [--t-end T] [--profile FILE]

The chain of ``bench/gui.py`` with ``N`` beads (2000 by default) runs in the
main window at playback speed "as fast as possible" until the solver has
finished, then plays on for a second; then one bead is selected and its
mass edited, as a user would. A probe timer of 10 ms in the GUI thread
records the gaps between its ticks: the longest gap is the longest time the
window did not answer (target 100 ms, issue 10). Printed per phase (pressing
Run, which compiles the scene and draws the run's first frame; the first two
seconds; the rest of the run; its end; select; edit), never asserted.
``--profile`` writes a cProfile of the GUI thread. Offscreen by default
(``QT_QPA_PLATFORM``).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QObject, QSettings, QTimer, Slot
from PySide6.QtWidgets import QApplication

from bench.gui import bead_chain, wait
from impactgui.commands import SetProperty
from impactgui.mainwindow import MainWindow
from impactgui.playback import AS_FAST_AS_POSSIBLE

PROBE_INTERVAL_MS = 10
TARGET_GAP_MS = 100.0


class GapProbe(QObject):
    """A 10 ms timer in the GUI thread: the longest gap between its ticks, per phase."""

    def __init__(self) -> None:
        super().__init__()
        self.timer = QTimer(self)
        self.timer.setInterval(PROBE_INTERVAL_MS)
        self.timer.timeout.connect(self.on_tick)
        self.phase = "start"
        self.longest: dict[str, float] = {}
        self.last = time.perf_counter()

    def start(self, phase: str) -> None:
        """Count the gaps from now on under ``phase``."""
        self.phase = phase
        self.last = time.perf_counter()
        self.longest.setdefault(phase, 0.0)
        self.timer.start()

    @Slot()
    def on_tick(self) -> None:
        """One probe tick: the gap since the last one."""
        now = time.perf_counter()
        self.longest[self.phase] = max(self.longest[self.phase], now - self.last)
        self.last = now


def main() -> None:
    """Run the chain, select and edit a bead; print the longest gap of each phase."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beads", type=int, default=2000)
    parser.add_argument("--t-end", type=float, default=2.0, help="scene end time, s")
    parser.add_argument("--profile", help="write a cProfile of the GUI thread here")
    args = parser.parse_args()

    app = QApplication.instance() or QApplication(["bench"])
    settings = QSettings(str(Path("/tmp") / "impactgui-bench.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings)
    window.resize(1400, 900)
    window.show()
    wait(app, 0.5)
    profile = cProfile.Profile() if args.profile else None
    probe = GapProbe()
    window.doc.set_data(bead_chain(args.beads, args.t_end))
    window.playback_bar.set_speed(AS_FAST_AS_POSSIBLE)
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
    frames = len(window.runner.trajectory) if window.runner is not None else 0
    print(
        f"{args.beads} beads, t_end {args.t_end:g} s: run {window.run_state} after "
        f"{computed:.1f} s ({frames} frames), platform {app.platformName()}"
    )
    print(f"{'phase':<16} {'longest gap ms':>15} {'÷target':>8}")
    for phase, gap in probe.longest.items():
        print(f"{phase:<16} {gap * 1000:15.1f} {gap * 1000 / TARGET_GAP_MS:8.2f}")
    print(f"target: the event loop never stops for more than {TARGET_GAP_MS:g} ms")
    window.doc.undo_stack.setClean()
    window.shutdown()


if __name__ == "__main__":
    main()
