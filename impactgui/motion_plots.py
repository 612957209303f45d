"""Motion plots of chosen bodies: position x(t), y(t), velocity v(t) and angular velocity ω(t).

Four pyqtgraph plots share one time axis, one curve per body:

* x (m): the centre's x (an axle cart's point C);
* y (m): the centre's y (a bead's rail height, constant);
* v (m/s): a bead's signed velocity along its rail ``vx`` (the sign shows
  which way it goes), a wheel's or cart's speed ``|v|`` of its centre;
  the legend says which (``ball1 vx``, ``wheel |v|``);
* ω (rad/s): a wheel's spin, a cart's yaw rate (beads have none).

The bodies are the one selected in the scene, or with none selected the
first ``DEFAULT_BODIES`` of the run. Every frame of the run is plotted
(``pre`` and ``post`` frames of an impact too, so a velocity jump is a
vertical step at its instant). Data reach the curves at most every
``REDRAW_INTERVAL_MS``, and only the frames new since the last time are
read. While the plots are hidden (``set_shown``: their tab is behind the
live plots) they cost nothing: the frames are read when they are shown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer, Slot
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsLineItem, QVBoxLayout, QWidget

from impactgui.grid import show_grid
from impactgui.plots import CURSOR_COLOUR, GrowingSeries, legend_beside, show_plot

if TYPE_CHECKING:
    from solver.frames import Frame
    from solver.record import Trajectory
    from solver.system import System

REDRAW_INTERVAL_MS = 250
"""New frames reach the curves at most this often while a run streams, ms."""
DEFAULT_BODIES = 3
"""With no body selected, the first this many bodies are plotted."""
QUANTITIES = ("x", "y", "v", "omega")
"""The plotted quantities, top to bottom."""
TITLES = {
    "x": ("position x(t)", "x (m)"),
    "y": ("position y(t)", "y (m)"),
    "v": ("velocity v(t)", "v (m/s)"),
    "omega": ("angular velocity ω(t)", "ω (rad/s)"),
}
"""Title and axis label of each plot."""


@dataclass(frozen=True)
class BodyColumns:
    """Where one body's motion is in a frame's ``q`` and ``v`` (indices), per ``System.dof_labels``.

    ``y`` is None for a bead (its rail height ``rail_y`` is its y);
    ``vy`` is None for a bead (its ``v`` is the signed ``vx``); ``omega``
    is None for a bead.
    """

    body_id: str
    x: int
    y: int | None
    rail_y: float
    vx: int
    vy: int | None
    omega: int | None

    def values(self, q: np.ndarray, v: np.ndarray) -> tuple[float, float, float, float]:
        """``(x, y, v, ω)`` of the body in the state ``q, v`` (ω is NaN for a bead)."""
        y = self.rail_y if self.y is None else float(q[self.y])
        speed = float(v[self.vx]) if self.vy is None else math.hypot(v[self.vx], v[self.vy])
        omega = math.nan if self.omega is None else float(v[self.omega])
        return float(q[self.x]), y, speed, omega

    @property
    def velocity_name(self) -> str:
        """What its v curve is: ``vx`` (a bead, signed) or ``|v|`` (a centre's speed)."""
        return "vx" if self.vy is None else "|v|"


def body_columns(system: System) -> dict[str, BodyColumns]:
    """Each body's ``BodyColumns`` in the layout of ``system`` (ids in scene order)."""
    rails = {body.id: getattr(body, "rail_y", 0.0) for body in system.scene.bodies}
    columns: dict[str, BodyColumns] = {}
    q_start = v_start = 0
    for body_id, coords, rates in system.dof_labels:
        y = q_start + 1 if len(coords) > 1 else None
        vy = v_start + 1 if len(rates) > 1 else None
        omega = v_start + 2 if len(rates) > 2 else None
        columns[body_id] = BodyColumns(
            body_id, q_start, y, float(rails.get(body_id) or 0.0), v_start, vy, omega
        )
        q_start += len(coords)
        v_start += len(rates)
    return columns


class MotionPlots(QWidget):
    """x(t), y(t), v(t), ω(t) of the chosen bodies of one run.

    Attributes
    ----------
    plots : tuple of pg.PlotItem
        The x, y, v and ω plots, top to bottom (time axes linked).
    curves : dict of (str, str) to pg.PlotDataItem
        ``(body id, quantity)`` → its curve; quantity one of ``QUANTITIES``.
        Made the first time the plots are shown during a run (none while hidden).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics)
        self.plots = tuple(self.graphics.addPlot(row=row, col=0) for row in range(4))
        self.plot_of = dict(zip(QUANTITIES, self.plots, strict=True))
        cursor_pen = QPen(QColor(CURSOR_COLOUR), 0)
        self._cursors: dict[pg.ViewBox, QGraphicsLineItem] = {}
        for quantity, plot in self.plot_of.items():
            title, label = TITLES[quantity]
            plot.setTitle(title, size="9pt", color="k")
            plot.setLabel("left", label, color="k")
            show_grid(plot, "w", alpha=0.2)
            plot.setDownsampling(auto=True, mode="peak")
            plot.setClipToView(True)
            legend_beside(plot)
            for side in ("left", "bottom"):
                axis = plot.getAxis(side)
                axis.setPen("k")
                axis.setTextPen("k")
                axis.enableAutoSIPrefix(False)
            if plot is not self.plots[0]:
                plot.setXLink(self.plots[0])
            cursor = QGraphicsLineItem()
            cursor.setPen(cursor_pen)
            plot.addItem(cursor, ignoreBounds=True)
            self._cursors[plot.vb] = cursor
            plot.vb.sigYRangeChanged.connect(self._on_y_range_changed)
        self._show_time_axis_on(self.plot_of["omega"])
        self.curves: dict[tuple[str, str], pg.PlotDataItem] = {}
        self._series: dict[tuple[str, str], GrowingSeries] = {}
        self._columns: dict[str, BodyColumns] = {}
        self._chosen: list[str] = []
        self._trajectory: Trajectory | None = None
        self._read = 0
        self._drawn = 0
        """Frames read into the series, and handed to the curves."""
        self._cursor_time = 0.0
        self.shown = True
        """False while the plots are off screen (a dock tab behind another): no redraws."""
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_INTERVAL_MS)
        self._timer.timeout.connect(self.redraw)

    @property
    def bodies(self) -> list[str]:
        """Ids of the bodies plotted."""
        return list(self._chosen)

    def clear(self) -> None:
        """Forget the run: no curves."""
        self._timer.stop()
        self._trajectory = None
        self._columns = {}
        self._drop_curves()

    def _drop_curves(self) -> None:
        for plot in self.plots:
            for item in list(plot.listDataItems()):
                plot.removeItem(item)
            if plot.legend is not None:
                plot.legend.clear()
        self.curves.clear()
        self._series.clear()
        self._read = self._drawn = 0

    def set_run(self, trajectory: Trajectory, system: System, selected: str | None) -> None:
        """Plot the run of ``system`` whose frames grow in ``trajectory``.

        ``selected`` is the selected body's id (None: the first bodies).
        """
        self.clear()
        self._trajectory = trajectory
        self._columns = body_columns(system)
        self.choose(selected)
        self._timer.start()

    def choose(self, selected: str | None) -> None:
        """Plot the body ``selected`` (or, if None or not in the run, the first bodies)."""
        if selected in self._columns:
            chosen = [selected]
        else:
            chosen = list(self._columns)[:DEFAULT_BODIES]
        if chosen == self._chosen and self._series:
            return
        self._drop_curves()
        self._chosen = chosen
        for body_id in chosen:
            for quantity in QUANTITIES:
                if quantity == "omega" and self._columns[body_id].omega is None:
                    continue
                self._series[body_id, quantity] = GrowingSeries()
        spins = any(key[1] == "omega" for key in self._series)
        show_plot(self.plot_of["omega"], spins)
        self._show_time_axis_on(self.plot_of["omega" if spins else "v"])
        self.redraw()

    def _make_curves(self) -> None:
        """The curves of the chosen bodies, made once the plots are shown.

        Hidden behind another dock tab (as they start), the plots make none:
        nine curves with their legend rows cost a 2000-bead run's first
        frame ~40 ms of the GUI thread.
        """
        if self.curves or not self._series:
            return
        chosen = self._chosen
        for index, body_id in enumerate(chosen):
            pen = pg.mkPen(pg.intColor(index, hues=max(len(chosen), 3), minValue=140), width=2)
            names = {"x": body_id, "y": body_id, "omega": body_id}
            names["v"] = f"{body_id} {self._columns[body_id].velocity_name}"
            for quantity in QUANTITIES:
                if (body_id, quantity) in self._series:
                    self.curves[body_id, quantity] = self.plot_of[quantity].plot(
                        name=names[quantity], pen=pen, connect="finite"
                    )
        self._drawn = 0

    @Slot(bool)
    def set_shown(self, shown: bool) -> None:
        """The plots came on screen (True) or went off it; on screen they catch up at once."""
        self.shown = shown
        self.redraw()
        self.set_cursor(self._cursor_time)

    def _show_time_axis_on(self, lowest: pg.PlotItem) -> None:
        """Time values and label under the lowest plot shown only."""
        for plot in self.plots:
            plot.getAxis("bottom").setStyle(showValues=plot is lowest)
            plot.setLabel("bottom", "t (s)" if plot is lowest else None, color="k")

    @Slot()
    def redraw(self) -> None:
        """Hand the frames new since the last redraw to the curves (only while shown)."""
        if not self.shown:
            return
        self._make_curves()
        self._catch_up()
        if self._drawn == self._read:
            return
        for key, curve in self.curves.items():
            curve.setData(*self._series[key].data())
        self._drawn = self._read

    def _catch_up(self) -> None:
        """Read the frames new since the last time into the series."""
        if self._trajectory is None:
            return
        count = len(self._trajectory)
        if count == self._read:
            return
        frames = self._trajectory.frames[self._read : count]
        for body_id in self._chosen:
            self._extend(body_id, frames)
        self._read = count

    def _extend(self, body_id: str, frames: list[Frame]) -> None:
        columns = self._columns[body_id]
        t = np.fromiter((frame.t for frame in frames), float, len(frames))
        values = np.array([columns.values(frame.q, frame.v) for frame in frames]).reshape(-1, 4)
        for index, quantity in enumerate(QUANTITIES):
            series = self._series.get((body_id, quantity))
            if series is not None:
                series.extend(t, values[:, index])

    def series(self, body_id: str, quantity: str) -> tuple[np.ndarray, np.ndarray]:
        """``(t, values)`` of ``body_id``'s ``quantity`` (one of ``QUANTITIES``) so far."""
        self._catch_up()
        return self._series[body_id, quantity].data()

    def set_cursor(self, t: float) -> None:
        """Move the playback-time cursors to ``t`` (s) (when shown; else when next shown)."""
        self._cursor_time = t
        if self.shown:
            for cursor in self._cursors.values():
                cursor.setPos(t, 0.0)

    @Slot(object, object)
    def _on_y_range_changed(self, view: pg.ViewBox, y_range: tuple[float, float]) -> None:
        """Keep the cursor of ``view`` from the bottom to the top of its value range."""
        self._cursors[view].setLine(0.0, y_range[0], 0.0, y_range[1])
