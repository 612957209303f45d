"""CPU of one energy-plot redraw at the solver's front, against the run's length.

At each history length (frames already in the run) the script appends 10 frames, sets
the seven energy curves (``PlotPanel._draw_energy``, what a frame drawn at the front
does) and paints the panel (offscreen grab), and prints the GUI thread's CPU per redraw
(median of ``--repeats``) for the live curves (``impactgui.peak_curve.PeakCurve``) and
for pyqtgraph's own ``PlotDataItem`` (the curves before), with their ratio.

    QT_QPA_PLATFORM=offscreen python bench/plot_front.py [--frames 10000 100000 300000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QApplication

from impactgui import plots
from impactgui.peak_curve import PeakCurve
from solver.frames import EnergyBudget, Frame, StepOutput
from solver.record import Trajectory

STEP_S = 1e-3
"""Time between frames, s."""


def _frames(start: int, stop: int) -> StepOutput:
    state = np.zeros(2)
    frames = []
    for i in range(start, stop):
        kinetic = 0.5 + 0.4 * np.sin(i * 1e-3) * np.cos(i * 0.37)
        energy = EnergyBudget(kinetic, 1.0 - kinetic, 0.0, 0.0, 0.0)
        frames.append(Frame(i * STEP_S, "sample", state, state, (), energy))
    return StepOutput(frames, [])


def redraw_cpu(history: int, repeats: int, curve_class: type) -> tuple[float, float]:
    """Median CPU s of appending 10 frames and setting the energy curves (their display
    data made), and of that with the panel's paint."""
    plots.PeakCurve = curve_class  # the class the panel makes its energy curves of
    panel = plots.PlotPanel()
    panel.resize(900, 900)
    trajectory = Trajectory()
    panel.set_run(trajectory, None)
    batch = _frames(0, history)
    trajectory.append(batch)
    panel.add_output(batch)
    panel.redraw()
    # the time axis as while streaming: the front inside it, fixed between its steps
    panel._set_time_range(0.0, plots.nice_ceil(1.5 * history * STEP_S))
    panel.graphics.grab()
    costs, data_costs = [], []
    for k in range(repeats):
        more = _frames(history + 10 * k, history + 10 * (k + 1))
        trajectory.append(more)
        panel.add_output(more)
        start = time.thread_time()
        panel._draw_energy(None)
        for curve in panel.energy_curves.values():
            curve.getData()  # the display data a paint asks for
        data_costs.append(time.thread_time() - start)
        panel.graphics.grab()
        costs.append(time.thread_time() - start)
    panel.deleteLater()
    QApplication.processEvents()
    return statistics.median(data_costs), statistics.median(costs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, nargs="+", default=[10_000, 100_000, 300_000])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    del app
    print("CPU ms per redraw: curves set (display data made) | the same and the panel's paint")
    print(
        f"{'frames':>8} {'pyqtgraph':>10} {'envelope':>9} {'ratio':>6} |"
        f" {'pyqtgraph':>10} {'envelope':>9} {'ratio':>6}"
    )
    for history in args.frames:
        before = redraw_cpu(history, args.repeats, pg.PlotDataItem)
        after = redraw_cpu(history, args.repeats, PeakCurve)
        cells = [
            f"{b * 1e3:>10.2f} {a * 1e3:>9.2f} {b / a:>6.1f}"
            for b, a in zip(before, after, strict=True)
        ]
        print(f"{history:>8} {cells[0]} | {cells[1]}")


if __name__ == "__main__":
    main()
