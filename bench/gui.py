"""GUI responsiveness while the solver runs: frames drawn per second, timer stalls, memory.

    .venv/bin/python bench/gui.py [--seconds S] [--frames N]

For each load — the window idle (baseline), the paper-004 wheel against a
curb, a 200-bead chain — the script runs the scene in the real main window
(worker thread, playback at real time) for ``S`` wall-clock seconds and
prints the frames drawn per second (target 60), the longest gap between two
display-timer ticks (target < 50 ms) and the ratio of both to the idle
baseline measured in the same run. Then it records ``N`` frames (1e5 by
default) of a long run at full speed and prints the memory they take.
Offscreen by default (``QT_QPA_PLATFORM``); numbers are printed, never
asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QObject, QSettings, Slot
from PySide6.QtWidgets import QApplication

from impactgui.mainwindow import MainWindow
from impactgui.playback import AS_FAST_AS_POSSIBLE
from impactgui.presets import SCENES_DIR
from solver.scene import load_scene, scene_to_dict

TARGET_FPS = 60.0
TARGET_GAP_MS = 50.0


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


def long_run(t_end: float) -> dict[str, Any]:
    """The elastic mass between two stops, run for ``t_end`` s (1000 frames per second)."""
    data = scene_to_dict(load_scene(SCENES_DIR / "mass_between_stops.json"))
    data["solver"] = {**data.get("solver", {}), "t_end": t_end, "dt_out": 0.001}
    return data


class TickRecorder(QObject):
    """Remembers the longest gap between display-timer ticks."""

    def __init__(self) -> None:
        super().__init__()
        self.reset()

    def reset(self) -> None:
        self.last = time.perf_counter()
        self.longest = 0.0
        self.ticks = 0

    @Slot()
    def on_tick(self) -> None:
        now = time.perf_counter()
        self.longest = max(self.longest, now - self.last)
        self.last = now
        self.ticks += 1


def wait(app: QApplication, seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.001)


def resident_mb() -> float:
    """Resident set size of this process, MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(
    app: QApplication, window: MainWindow, recorder: TickRecorder, data: dict | None, seconds: float
) -> tuple[float, float, int]:
    """Frames drawn per second, longest tick gap (ms) and frames computed, over ``seconds``."""
    window.reset_run()
    if data is not None:
        window.doc.set_data(data)
        window.start_run()
    else:
        window.clock.play()
    wait(app, 0.3)
    drawn0, recorder_start = window.frames_drawn, time.perf_counter()
    recorder.reset()
    wait(app, seconds)
    elapsed = time.perf_counter() - recorder_start
    fps = (window.frames_drawn - drawn0) / elapsed
    computed = len(window.runner.trajectory) if window.runner is not None else 0
    window.pause_run()
    window.reset_run()
    return fps, recorder.longest * 1000, computed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="wall-clock seconds per load")
    parser.add_argument("--frames", type=int, default=100_000, help="frames for the memory test")
    args = parser.parse_args()

    app = QApplication.instance() or QApplication(["bench"])
    settings = QSettings(str(Path("/tmp") / "impactgui-bench.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings)
    window.resize(1400, 900)
    window.show()
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
    print(f"platform {app.platformName()}, {args.seconds:g} s per load")
    print(f"{'load':<18} {'drawn/s':>8} {'÷60':>6} {'max gap ms':>11} {'÷idle':>7} {'computed':>9}")
    baseline_gap = None
    for name, data in loads:
        fps, gap, computed = measure(app, window, recorder, data, args.seconds)
        baseline_gap = baseline_gap or gap
        print(
            f"{name:<18} {fps:8.1f} {fps / TARGET_FPS:6.2f} {gap:11.1f} "
            f"{gap / baseline_gap:7.2f} {computed:9d}"
        )
    print(f"targets: {TARGET_FPS:g} frames drawn per second, gaps < {TARGET_GAP_MS:g} ms")

    before = resident_mb()
    window.reset_run()
    window.doc.set_data(long_run(args.frames / 1000 + 1))
    window.playback_bar.set_speed(AS_FAST_AS_POSSIBLE)
    start = time.perf_counter()
    window.start_run()
    while window.runner is not None and len(window.runner.trajectory) < args.frames:
        if window.runner.status not in ("running",):
            break
        wait(app, 0.2)
    window.pause_run()
    frames = len(window.runner.trajectory)
    after = resident_mb()
    seconds = time.perf_counter() - start
    print(
        f"memory: {frames} frames in {seconds:.1f} s, RSS {before:.0f} MB -> {after:.0f} MB "
        f"(+{after - before:.0f} MB, {1e6 * (after - before) / max(frames, 1):.0f} bytes/frame)"
    )
    window.shutdown()


if __name__ == "__main__":
    main()
