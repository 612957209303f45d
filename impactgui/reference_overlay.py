"""The closed-form reference of a scene, drawn over its run.

When a run starts, :func:`solver.reference.recognise` looks at the scene;
if it matches a closed form (the bouncing ball, a mass between two stops, a
mass–spring–stop, the two masses of paper 002, a wheel onto a step, a disk
on an incline) this panel shows, one plot per quantity the closed form
predicts (``ball.y`` in m, ``ball.vy`` in m/s, …), the simulated curve
(solid) and the reference (dashed, labelled with its formula) over the
interval where it holds, and below them the impact times as ticks: the
predicted ones above, the simulated ones below. The reference is drawn in
full when the run starts — it is a prediction — and the run grows into it.
When the run ends the panel gives the largest difference of each quantity
and of the impact times (:func:`solver.reference.compare_trajectory`),
with the source of the formula and the conditions under which it holds.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import QDockWidget, QLabel, QVBoxLayout, QWidget

from impactgui.grid import show_grid
from impactgui.plots import legend_beside
from solver.reference import Comparison, Reference, compare_trajectory, recognise

if TYPE_CHECKING:
    from solver.frames import StepOutput
    from solver.record import Trajectory
    from solver.system import System

REDRAW_INTERVAL_MS = 300
"""New frames reach the simulated curves at most this often while a run streams, ms."""
REFERENCE_SAMPLES = 4000
"""Points of the dashed reference curve (plus both sides of every predicted impact)."""
TICK_LIMIT = 2000
"""At most this many impact ticks per row."""
LEFT_AXIS_WIDTH = 100
"""Width of every plot's value axis, px: room for the impact row's "closed form", and the
plots' time axes line up."""
SIMULATED_PEN = pg.mkPen(30, 90, 200, width=2)
REFERENCE_PEN = pg.mkPen(200, 30, 30, width=2, style=Qt.PenStyle.DashLine)
TICK_PEN = pg.mkPen(200, 30, 30, width=2)
DOCK_TITLE = "Reference"


def reference_curve(reference: Reference) -> tuple[np.ndarray, np.ndarray]:
    """Times (s) and values of the reference's columns for drawing, jumps included.

    At each predicted impact the curve has the value just before and just
    after it at the same time, so a velocity jump is a vertical step.
    """
    grid = np.linspace(0.0, reference.t_valid, REFERENCE_SAMPLES)
    impacts = np.asarray(reference.impact_times, dtype=float)
    times = np.concatenate([grid, impacts, impacts])
    before = np.concatenate([np.zeros(len(grid) + len(impacts), bool), np.ones(len(impacts), bool)])
    order = np.lexsort((~before, times))
    times, before = times[order], before[order]
    values = np.empty((len(times), len(reference.columns)))
    values[~before] = reference.evaluate(times[~before])
    values[before] = reference.evaluate(times[before], before=True)
    return times, values


def state_column(system: System, name: str) -> int:
    """Index of the trajectory column ``ID.x`` / ``ID.vx`` … in a state row ``[q, v]``."""
    n_q = sum(len(coords) for _, coords, _ in system.dof_labels)
    q_start = v_start = 0
    for body, coords, rates in system.dof_labels:
        for k, coord in enumerate(coords):
            if f"{body}.{coord}" == name:
                return q_start + k
        for k, rate in enumerate(rates):
            if f"{body}.{rate}" == name:
                return n_q + v_start + k
        q_start += len(coords)
        v_start += len(rates)
    raise KeyError(f"{name}: no such column in this system")


def _tick_rows() -> tuple[pg.ScatterPlotItem, pg.ScatterPlotItem]:
    """Empty rows of impact ticks: the closed form's, the run's."""
    return (
        pg.ScatterPlotItem(symbol="|", size=14, pen=TICK_PEN),
        pg.ScatterPlotItem(symbol="|", size=14, pen=SIMULATED_PEN),
    )


class ReferenceOverlay(QWidget):
    """Plots of a run beside its closed-form reference, and how far apart they are.

    Attributes
    ----------
    reference : Reference or None
        The closed form the current run's scene matches.
    comparison : Comparison or None
        The largest differences, once the run has ended.
    plots : list of pyqtgraph.PlotItem
        One per reference column, then the impact-time ticks.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.reference: Reference | None = None
        self.comparison: Comparison | None = None
        self.plots: list[pg.PlotItem] = []
        self.simulated: list[pg.PlotDataItem] = []
        self.dashed: list[pg.PlotDataItem] = []
        self.reference_ticks, self.simulated_ticks = _tick_rows()
        self._trajectory: Trajectory | None = None
        self._system: System | None = None
        self._columns: list[int] = []
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.view = pg.GraphicsLayoutWidget()
        self.view.setBackground("w")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.view, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REDRAW_INTERVAL_MS)
        self._timer.timeout.connect(self.redraw)
        self.clear()

    def clear(self) -> None:
        """No run: empty plots and a line saying what the panel is for."""
        self._timer.stop()
        self.view.clear()
        self.plots, self.simulated, self.dashed = [], [], []
        self.reference = self.comparison = None
        self._trajectory = self._system = None
        self.label.setText(
            "Closed-form references: run a scene that matches one (a bouncing ball, a mass "
            "between stops, a mass–spring–stop, paper 002's two masses, a wheel onto a step, "
            "a disk on an incline) to see it drawn over the simulation."
        )
        self._set_dock_title(DOCK_TITLE)

    def set_run(self, trajectory: Trajectory, system: System | None) -> Reference | None:
        """Start showing a run; returns the reference its scene matches (None if none)."""
        self.clear()
        if system is None:
            return None
        reference = recognise(system.scene)
        if reference is None:
            self.label.setText("No closed-form reference matches this scene.")
            return None
        self.reference, self._trajectory, self._system = reference, trajectory, system
        self._columns = [state_column(system, column) for column in reference.columns]
        times, values = reference_curve(reference)
        for j, (column, unit) in enumerate(zip(reference.columns, reference.units, strict=True)):
            plot = self.view.addPlot(row=j, col=0)
            show_grid(plot, "w", alpha=0.2)
            plot.setLabel("left", f"{column} ({unit})")
            legend_beside(plot)  # never over the curves
            self.simulated.append(plot.plot(name="simulated", pen=SIMULATED_PEN))
            self.dashed.append(
                plot.plot(times, values[:, j], name=reference.title, pen=REFERENCE_PEN)
            )
            self.plots.append(plot)
        ticks = self.view.addPlot(row=len(reference.columns), col=0)
        ticks.setLabel("left", "impacts")
        ticks.setLabel("bottom", "t (s)")
        ticks.setYRange(-0.5, 1.5, padding=0)
        ticks.getAxis("left").setTicks([[(1.0, "closed form"), (0.0, "simulated")]])
        ticks.setMaximumHeight(110)
        # new items: clearing the view deleted the last run's along with its plots
        self.reference_ticks, self.simulated_ticks = _tick_rows()
        ticks.addItem(self.reference_ticks)
        ticks.addItem(self.simulated_ticks)
        predicted = np.asarray(reference.impact_times[:TICK_LIMIT], dtype=float)
        self.reference_ticks.setData(x=predicted, y=np.ones(len(predicted)))
        self.simulated_ticks.setData(x=[], y=[])
        self.plots.append(ticks)
        for plot in self.plots[1:]:
            plot.setXLink(self.plots[0])
        for plot in self.plots:  # one width: the plots line up under one time axis
            plot.getAxis("left").setWidth(LEFT_AXIS_WIDTH)
        self.plots[0].setXRange(0.0, reference.t_valid)
        self.label.setText(self._describe("running…"))
        self._set_dock_title(f"{DOCK_TITLE}: {reference.name.replace('_', ' ')}")
        return reference

    def add_output(self, _batch: StepOutput) -> None:
        """New frames arrived: redraw within ``REDRAW_INTERVAL_MS``."""
        if self.reference is not None and not self._timer.isActive():
            self._timer.start()

    @Slot()
    def redraw(self) -> None:
        """Draw the run's frames so far beside the reference."""
        if self.reference is None or self._trajectory is None:
            return
        t = self._trajectory.times()
        states = self._trajectory.states()[: len(t)]
        for curve, column in zip(self.simulated, self._columns, strict=True):
            curve.setData(t, states[:, column])
        impacts = [e.t for e in self._trajectory.events if e.type == "impact"][:TICK_LIMIT]
        self.simulated_ticks.setData(x=impacts, y=np.zeros(len(impacts)))

    def finish(self) -> Comparison | None:
        """The run ended: draw it all and show the largest differences."""
        if self.reference is None or self._trajectory is None:
            return None
        self._timer.stop()
        self.redraw()
        self.comparison = compare_trajectory(self.reference, self._trajectory)
        self.label.setText(self._describe(self._differences(self.comparison)))
        return self.comparison

    def _differences(self, comparison: Comparison) -> str:
        assert self.reference is not None
        units = dict(zip(self.reference.columns, self.reference.units, strict=True))
        parts = [
            f"{column} {value:.3g} {units[column]}"
            for column, value in comparison.max_difference.items()
            if math.isfinite(value)
        ]
        if math.isfinite(comparison.impact_time_difference):
            parts.append(f"impact times {comparison.impact_time_difference:.3g} s")
        return "largest difference from the closed form: " + (", ".join(parts) or "none")

    def _describe(self, status: str) -> str:
        reference = self.reference
        assert reference is not None
        conditions = "; ".join(reference.conditions)
        return (
            f"<b>{reference.title}</b> — dashed: closed form ({reference.source}), valid to "
            f"t = {reference.t_valid:.4g} s; solid: the simulation. <b>{status}</b>"
            f"<br><small>Holds when: {conditions}</small>"
        )

    def _set_dock_title(self, title: str) -> None:
        dock = self.parentWidget()
        if isinstance(dock, QDockWidget):
            dock.setWindowTitle(title)
