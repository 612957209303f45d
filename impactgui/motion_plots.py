"""Motion plots of chosen bodies: x, y, φ, ẋ, ẏ, v and ω against time.

Pyqtgraph plots share one time axis, one curve per body; the check boxes
above them choose which are shown (x, y, v and ω at first):

* x (m): the centre's x (an axle cart's point C);
* y (m): the centre's y (a bead's rail height, constant);
* φ (rad): a wheel's angle of rotation, a cart's heading (beads have none);
* ẋ, ẏ (m/s): the centre's velocity components (a bead has ẋ only);
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
from PySide6.QtWidgets import QCheckBox, QGraphicsLineItem, QHBoxLayout, QVBoxLayout, QWidget

from impactgui.grid import show_grid
from impactgui.legible_axis import legible_axes
from impactgui.plots import (
    CURSOR_COLOUR,
    GrowingSeries,
    flat_range,
    legend_beside,
    round_off_centre,
)

if TYPE_CHECKING:
    from solver.frames import Frame
    from solver.record import Trajectory
    from solver.system import System

REDRAW_INTERVAL_MS = 250
"""New frames reach the curves at most this often while a run streams, ms."""
DEFAULT_BODIES = 3
"""With no body selected, the first this many bodies are plotted."""
QUANTITIES = ("x", "y", "phi", "vx", "vy", "v", "omega")
"""The quantities that can be plotted, top to bottom."""
SHOWN_AT_FIRST = ("x", "y", "v", "omega")
"""The quantities shown until the check boxes say otherwise."""
LABELS = {"x": "x", "y": "y", "phi": "φ", "vx": "ẋ", "vy": "ẏ", "v": "v", "omega": "ω"}
"""Each quantity's check box."""
TITLES = {
    "x": ("position x(t)", "x (m)"),
    "y": ("position y(t)", "y (m)"),
    "phi": ("angle φ(t)", "φ (rad)"),
    "vx": ("velocity ẋ(t)", "ẋ (m/s)"),
    "vy": ("velocity ẏ(t)", "ẏ (m/s)"),
    "v": ("velocity v(t)", "v (m/s)"),
    "omega": ("angular velocity ω(t)", "ω (rad/s)"),
}
"""Title and axis label of each plot."""


@dataclass(frozen=True)
class BodyColumns:
    """Where one body's motion is in a frame's ``q`` and ``v`` (indices), per ``System.dof_labels``.

    ``y`` is None for a bead (its rail height ``rail_y`` is its y);
    ``vy`` is None for a bead (its ``v`` is the signed ``vx``); ``omega``
    and ``phi`` are None for a bead.
    """

    body_id: str
    x: int
    y: int | None
    rail_y: float
    vx: int
    vy: int | None
    omega: int | None
    phi: int | None = None

    def values(self, q: np.ndarray, v: np.ndarray) -> tuple[float, ...]:
        """The body's ``QUANTITIES`` in the state ``q, v`` (NaN where a bead has none)."""
        y = self.rail_y if self.y is None else float(q[self.y])
        speed = float(v[self.vx]) if self.vy is None else math.hypot(v[self.vx], v[self.vy])
        omega = math.nan if self.omega is None else float(v[self.omega])
        phi = math.nan if self.phi is None else float(q[self.phi])
        vy = math.nan if self.vy is None else float(v[self.vy])
        return float(q[self.x]), y, phi, float(v[self.vx]), vy, speed, omega

    def has(self, quantity: str) -> bool:
        """Whether the body has ``quantity`` (a bead has no φ, ẏ, ω)."""
        missing = {"phi": self.phi, "vy": self.vy, "omega": self.omega}
        return quantity not in missing or missing[quantity] is not None

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
        phi = q_start + 2 if len(coords) > 2 else None
        columns[body_id] = BodyColumns(
            body_id, q_start, y, float(rails.get(body_id) or 0.0), v_start, vy, omega, phi
        )
        q_start += len(coords)
        v_start += len(rates)
    return columns


class MotionPlots(QWidget):
    """x, y, φ, ẋ, ẏ, v, ω against time of the chosen bodies of one run.

    Attributes
    ----------
    plots : tuple of pg.PlotItem
        One plot per quantity of ``QUANTITIES``, top to bottom (time axes
        linked); those not checked are hidden.
    boxes : dict of str to QCheckBox
        The check box of each quantity.
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
        row_of_boxes = QHBoxLayout()
        self.boxes: dict[str, QCheckBox] = {}
        for quantity in QUANTITIES:
            box = QCheckBox(LABELS[quantity])
            box.setChecked(quantity in SHOWN_AT_FIRST)
            box.setToolTip(TITLES[quantity][0])
            box.toggled.connect(self._on_box_toggled)
            row_of_boxes.addWidget(box)
            self.boxes[quantity] = box
        row_of_boxes.addStretch(1)
        layout.addLayout(row_of_boxes)
        layout.addWidget(self.graphics)
        self.plots = tuple(
            self.graphics.addPlot(row=row, col=0, axisItems=legible_axes())
            for row in range(len(QUANTITIES))
        )
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
            plot.vb.sigRangeChangedManually.connect(self._on_range_changed_manually)
        self.curves: dict[tuple[str, str], pg.PlotDataItem] = {}
        self._flat: dict[pg.ViewBox, tuple[float, float]] = {}
        """Value ranges set for curves flat to round-off (pyqtgraph's auto-range is off there)."""
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
        self._show_plots()

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
        self._remove_curves()
        self._series.clear()
        self._read = self._drawn = 0
        for view in self._flat:
            view.enableAutoRange(axis=pg.ViewBox.YAxis)
        self._flat.clear()

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
                if self._columns[body_id].has(quantity):
                    self._series[body_id, quantity] = GrowingSeries()
        self._show_plots()
        self.redraw()

    def shown_quantities(self) -> list[str]:
        """The quantities whose plots are shown: checked, and some chosen body has them."""
        present = {key[1] for key in self._series} if self._series else set(SHOWN_AT_FIRST)
        return [q for q in QUANTITIES if self.boxes[q].isChecked() and q in present]

    def set_quantities(self, quantities: list[str] | tuple[str, ...]) -> None:
        """Check exactly ``quantities`` (names of ``QUANTITIES``)."""
        for quantity, box in self.boxes.items():
            box.blockSignals(True)
            box.setChecked(quantity in quantities)
            box.blockSignals(False)
        self._on_box_toggled()

    def _show_plots(self) -> None:
        shown = self.shown_quantities()
        for quantity, plot in self.plot_of.items():
            plot.setVisible(quantity in shown)
        if shown:
            self._show_time_axis_on(self.plot_of[shown[-1]])

    def _remove_curves(self) -> None:
        """Take every curve and legend entry off the plots (the series read stay)."""
        for plot in self.plots:
            for item in list(plot.listDataItems()):
                plot.removeItem(item)
            if plot.legend is not None:
                plot.legend.clear()
        self.curves.clear()

    @Slot()
    def _on_box_toggled(self, _checked: bool = False) -> None:
        self._show_plots()
        self._remove_curves()
        self._drawn = -1
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
        shown = self.shown_quantities()
        for index, body_id in enumerate(chosen):
            pen = pg.mkPen(pg.intColor(index, hues=max(len(chosen), 3), minValue=140), width=2)
            names = dict.fromkeys(QUANTITIES, body_id)
            names["v"] = f"{body_id} {self._columns[body_id].velocity_name}"
            for quantity in shown:
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
        self._fit_flat_axes()

    def _fit_flat_axes(self) -> None:
        """A value axis whose curves are flat to round-off shows their value with a margin.

        pyqtgraph's auto-range would spread a wheel's height 0.5 m ± 1e-16 or
        a resting bead's ẋ of -1e-15 m/s over the whole axis, with ticks
        1e-16 apart; such an axis shows 0.5 ± 0.1 or 0 ± 1 instead
        (``round_off_centre``, as the live plots do). Once the data move, the
        auto-range takes over again; a range zoomed by hand is left alone.
        """
        for quantity, plot in self.plot_of.items():
            view = plot.vb
            low, high = math.inf, -math.inf
            for (_, shown_quantity), curve in self.curves.items():
                if shown_quantity == quantity:
                    _, y = curve.getOriginalDataset()
                    finite = y[np.isfinite(y)] if y is not None else np.zeros(0)
                    if finite.size:
                        low, high = min(low, finite.min()), max(high, finite.max())
            centre = round_off_centre(float(low), float(high)) if low <= high else None
            auto = view.autoRangeEnabled()[1]
            if centre is not None and (auto or view in self._flat):
                y_range = flat_range(centre)
                if self._flat.get(view) != y_range:
                    plot.setYRange(*y_range, padding=0)  # Y's auto-range goes off
                    self._flat[view] = y_range
            elif centre is None and view in self._flat:
                del self._flat[view]
                view.enableAutoRange(axis=pg.ViewBox.YAxis)

    @Slot(object)
    def _on_range_changed_manually(self, mask: list[bool]) -> None:
        """Zoomed or panned by hand: a flat axis is the user's from now on."""
        if mask[1]:
            self._flat.pop(self.sender(), None)

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
        values = np.array([columns.values(frame.q, frame.v) for frame in frames]).reshape(
            -1, len(QUANTITIES)
        )
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
