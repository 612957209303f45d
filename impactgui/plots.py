"""Live plots of a run: contact forces λ, friction multipliers τ, energy, velocity jumps.

Five pyqtgraph plots share one time axis (linked), each with a legend, axis
units and a vertical cursor at the playback time:

* λ per contact, N (one curve per body–obstacle pair, broken where the
  contact is not active);
* τ per contact (friction force = −μ λ τ along the tangent), unitless;
* energy budget, J: kinetic, potential, spring, dissipated so far, input so
  far, total, and the balance ``total + dissipated − input`` (flat for a
  correct run, SPEC §6);
* velocity jumps Δv per body at impact and impulse times, as stems: a bead's
  signed Δvx and a wheel's |Δ| of its centre velocity (m/s); an axle cart's
  jump in each of its five rates ``vxC, vyC`` (m/s), ``omega, omegaA,
  omegaB`` (rad/s), signed;
* impulses per event, N·s, as stems (normal and tangential at impacts, the
  size ``|S|`` of an impulse applied to a cart).

A top-view (axle cart) run has no contacts: its λ and τ plots are hidden,
leaving the room to the others; the energy plot's ``input`` curve is the
work done by the impulses.

Curves downsample automatically and clip to the visible range, and are
redrawn at most every ``REDRAW_INTERVAL_MS``, so 1e5 points stay responsive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import QGraphicsItem, QVBoxLayout, QWidget

from solver.cart_motion import RATE_NAMES as CART_RATE_NAMES
from solver.frames import Event, StepOutput
from solver.record import Trajectory

if TYPE_CHECKING:
    from solver.system import System

REDRAW_INTERVAL_MS = 250
"""Curves (and the cursors) are re-drawn at most this often while frames stream in, ms.

A repaint of the five plots costs tens of ms of software rendering, which
the canvas needs for its 60 frames per second."""

LEGEND_LIMIT = 8
"""At most this many per-contact / per-body curves get a legend entry."""

ENERGY_TERMS: tuple[tuple[str, str], ...] = (
    ("kinetic", "#1f77b4"),
    ("potential", "#2ca02c"),
    ("spring", "#9467bd"),
    ("dissipated", "#d62728"),
    ("input", "#ff7f0e"),
    ("total", "#000000"),
    ("balance", "#7f7f7f"),
)
"""Energy curves and their colours; ``balance`` is total + dissipated − input."""

JUMP_TYPES = ("impact", "impulse")
"""Events with a velocity jump and an impulse."""

TITLES = {
    "side": {
        "jump": "velocity jumps at impacts",
        "jump_unit": "Δv (m/s)",
        "impulse": "impulses at impacts",
    },
    "top": {
        "jump": "velocity jumps at impulses, per rate",
        "jump_unit": "Δv (m/s, rad/s)",
        "impulse": "applied impulses |S|",
    },
}
"""Titles of the jump and impulse plots and the jump plot's unit, side or top view."""


class GrowingSeries:
    """``(x, y)`` points appended one at a time into amortised-doubling arrays."""

    def __init__(self) -> None:
        self._x = np.empty(64)
        self._y = np.empty(64)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def append(self, x: float, y: float) -> None:
        """Add one point (``y = nan`` breaks a line there)."""
        if self._n == len(self._x):
            self._x = np.concatenate((self._x, np.empty(len(self._x))))
            self._y = np.concatenate((self._y, np.empty(len(self._y))))
        self._x[self._n] = x
        self._y[self._n] = y
        self._n += 1

    def data(self) -> tuple[np.ndarray, np.ndarray]:
        """The points so far (views)."""
        return self._x[: self._n], self._y[: self._n]


class _ContactSeries:
    """λ and τ of one contact over the sample frames where it is active."""

    def __init__(self) -> None:
        self.lam = GrowingSeries()
        self.tau = GrowingSeries()
        self.last_sample = -2

    def add(self, sample: int, t: float, lam: float, tau: float) -> None:
        if self.last_sample != sample - 1 and len(self.lam):
            self.lam.append(t, np.nan)
            self.tau.append(t, np.nan)
        self.lam.append(t, lam)
        self.tau.append(t, tau)
        self.last_sample = sample


def _jump_values(delta: np.ndarray, names: tuple[str, ...]) -> list[tuple[str, float]]:
    """What the jump plot shows of one body's velocity jump ``delta``: ``(suffix, value)``.

    A bead: its signed Δvx; a wheel: |Δ| of its centre velocity; an axle
    cart: each of its five rates, signed (suffix ``" ΔvxC"`` and so on).
    """
    if names == ("vx",):
        return [("", float(delta[0]))]
    if names == CART_RATE_NAMES:
        return [(f" Δ{name}", float(value)) for name, value in zip(names, delta, strict=True)]
    return [("", float(np.hypot(delta[0], delta[1])))]


def _stems(series: GrowingSeries) -> tuple[np.ndarray, np.ndarray]:
    """Vertical segments from 0 to each value (for ``connect="pairs"``)."""
    x, y = series.data()
    return np.repeat(x, 2), np.column_stack((np.zeros_like(y), y)).ravel()


_CACHED = QGraphicsItem.CacheMode.DeviceCoordinateCache


def _style(plot: pg.PlotItem, title: str, unit_label: str) -> None:
    """Title, unit, grid, downsampling; axes and title cached as pixmaps.

    Text is the costly part of a software-rendered repaint; a cached axis
    is re-rendered only when its range changes.
    """
    plot.setTitle(title, size="9pt", color="k")
    plot.setLabel("left", unit_label, color="k")
    plot.showGrid(x=True, y=True, alpha=0.2)
    plot.setDownsampling(auto=True, mode="peak")
    plot.setClipToView(True)
    plot.titleLabel.setCacheMode(_CACHED)
    for side in ("left", "bottom"):
        axis = plot.getAxis(side)
        axis.setPen("k")
        axis.setTextPen("k")
        axis.enableAutoSIPrefix(False)
        axis.setCacheMode(_CACHED)


class PlotPanel(QWidget):
    """The live plots of one run, fed with ``StepOutput`` batches.

    Parameters
    ----------
    parent : QWidget, optional
        Qt parent.

    Attributes
    ----------
    lambda_plot, tau_plot, energy_plot, jump_plot, impulse_plot : pg.PlotItem
        The five plots, top to bottom; x axes linked to ``energy_plot``, the
        one plot with data at every frame, which sets the time range.
    energy_curves : dict of str to pg.PlotDataItem
        One curve per name in ``ENERGY_TERMS``.
    contact_curves : dict of (str, str) to (pg.PlotDataItem, pg.PlotDataItem)
        ``(body, other)`` → its λ curve and τ curve.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics)
        self.lambda_plot = self.graphics.addPlot(row=0, col=0)
        self.tau_plot = self.graphics.addPlot(row=1, col=0)
        self.energy_plot = self.graphics.addPlot(row=2, col=0)
        self.jump_plot = self.graphics.addPlot(row=3, col=0)
        self.impulse_plot = self.graphics.addPlot(row=4, col=0)
        titles = TITLES["side"]
        _style(self.lambda_plot, "contact force λ per contact", "λ (N)")
        _style(self.tau_plot, "friction multiplier τ per contact", "τ")
        _style(self.energy_plot, "energy budget", "E (J)")
        _style(self.jump_plot, titles["jump"], titles["jump_unit"])
        _style(self.impulse_plot, titles["impulse"], "impulse (N·s)")
        self.impulse_plot.setLabel("bottom", "t (s)", color="k")
        self.plots = (
            self.lambda_plot,
            self.tau_plot,
            self.energy_plot,
            self.jump_plot,
            self.impulse_plot,
        )
        self._legends = [
            plot.addLegend(
                offset=(-5, 5), labelTextSize="8pt", labelTextColor="k", brush="#ffffffc0"
            )
            for plot in self.plots
        ]
        for legend in self._legends:
            legend.setCacheMode(_CACHED)
        self._legends[2].setColumnCount(2)
        for plot in self.plots:
            if plot is not self.energy_plot:
                plot.enableAutoRange(axis="x", enable=False)
                plot.setXLink(self.energy_plot)
            if plot is not self.impulse_plot:
                plot.getAxis("bottom").setStyle(showValues=False)
        self._cursors = []
        for plot in self.plots:
            cursor = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#e377c2", width=1))
            plot.addItem(cursor, ignoreBounds=True)
            self._cursors.append(cursor)
        self.energy_curves: dict[str, pg.PlotDataItem] = {}
        self.contact_curves: dict[tuple[str, str], tuple[pg.PlotDataItem, pg.PlotDataItem]] = {}
        self._jump_items: dict[str, tuple[pg.PlotDataItem, pg.ScatterPlotItem]] = {}
        self._impulse_items: dict[str, tuple[pg.PlotDataItem, pg.ScatterPlotItem]] = {}
        self._trajectory: Trajectory | None = None
        self._rate_slices: list[tuple[str, slice, tuple[str, ...]]] = []
        self._contacts: dict[tuple[str, str], _ContactSeries] = {}
        self._jumps: dict[str, GrowingSeries] = {}
        self._impulses: dict[str, GrowingSeries] = {}
        self._samples = 0
        self._dirty = False
        self._cursor_time: float | None = None
        self._redraw_timer = QTimer(self)
        self._redraw_timer.setInterval(REDRAW_INTERVAL_MS)
        self._redraw_timer.timeout.connect(self._on_redraw_timer)
        self._make_energy_curves()

    def _make_energy_curves(self) -> None:
        for name, colour in ENERGY_TERMS:
            style = pg.mkPen(colour, width=2 if name in ("total", "balance") else 1)
            if name == "balance":
                style.setStyle(pg.QtCore.Qt.PenStyle.DashLine)
            self.energy_curves[name] = self.energy_plot.plot(name=name, pen=style)

    def clear(self) -> None:
        """Forget the run: empty every plot (all five shown again)."""
        self._redraw_timer.stop()
        for plot in (self.lambda_plot, self.tau_plot):
            plot.setVisible(True)
        for plot in (self.lambda_plot, self.tau_plot, self.jump_plot, self.impulse_plot):
            for item in list(plot.listDataItems()):
                plot.removeItem(item)
        for legend in (self._legends[0], self._legends[1], self._legends[3], self._legends[4]):
            legend.clear()
        for curve in self.energy_curves.values():
            curve.setData([], [])
        self.contact_curves.clear()
        self._jump_items.clear()
        self._impulse_items.clear()
        self._contacts.clear()
        self._jumps.clear()
        self._impulses = {}
        self._samples = 0
        self._trajectory = None
        self._dirty = False

    def set_run(self, trajectory: Trajectory, system: System | None) -> None:
        """Start plotting a new run (``trajectory`` grows; feed its batches to ``add_output``)."""
        self.clear()
        self._trajectory = trajectory
        self._rate_slices = []
        if system is not None:
            start = 0
            for body_id, _coords, rates in system.dof_labels:
                self._rate_slices.append((body_id, slice(start, start + len(rates)), tuple(rates)))
                start += len(rates)
        view = "top" if system is not None and system.scene.view == "top" else "side"
        titles = TITLES[view]
        self.jump_plot.setTitle(titles["jump"], size="9pt", color="k")
        self.jump_plot.setLabel("left", titles["jump_unit"], color="k")
        self.impulse_plot.setTitle(titles["impulse"], size="9pt", color="k")
        self._legends[3].setColumnCount(3 if view == "top" else 1)
        for plot in (self.lambda_plot, self.tau_plot):
            plot.setVisible(view == "side")
        self._redraw_timer.start()

    @Slot(object)
    def add_output(self, batch: StepOutput) -> None:
        """Take in one batch of frames and events (already appended to the trajectory)."""
        for frame in batch.frames:
            if frame.kind != "sample":
                continue
            for contact in frame.contacts:
                key = (contact.body, contact.other)
                series = self._contacts.get(key)
                if series is None:
                    series = self._contacts[key] = _ContactSeries()
                series.add(self._samples, frame.t, contact.lam, contact.tau)
            self._samples += 1
        for event in batch.events:
            self._add_event(event)
        self._dirty = True

    def _add_event(self, event: Event) -> None:
        if event.type not in JUMP_TYPES:
            return
        if event.type == "impulse":
            self._series(self._impulses, "applied |S|").append(event.t, event.normal_impulse)
        else:
            self._series(self._impulses, "normal").append(event.t, event.normal_impulse)
            if event.tangent_impulse != 0.0:
                self._series(self._impulses, "tangent").append(event.t, event.tangent_impulse)
        if event.v_minus is None or event.v_plus is None:
            return
        jump = np.asarray(event.v_plus) - np.asarray(event.v_minus)
        for body_id, rates, names in self._rate_slices:
            for name, value in _jump_values(jump[rates], names):
                if abs(value) > 1e-12:
                    self._series(self._jumps, f"{body_id}{name}").append(event.t, value)

    @staticmethod
    def _series(table: dict[str, GrowingSeries], name: str) -> GrowingSeries:
        """The series ``name`` of ``table``, created empty the first time."""
        series = table.get(name)
        if series is None:
            series = table[name] = GrowingSeries()
        return series

    @Slot()
    def _on_redraw_timer(self) -> None:
        if self._dirty:
            self.redraw()
        self._move_cursors()

    def redraw(self) -> None:
        """Push the data gathered so far into the curves."""
        self._dirty = False
        if self._trajectory is not None and len(self._trajectory):
            t = self._trajectory.times()
            e = self._trajectory.energies()
            kinetic, potential, spring, total, dissipated, work_in = e.T
            for name, values in (
                ("kinetic", kinetic),
                ("potential", potential),
                ("spring", spring),
                ("dissipated", dissipated),
                ("input", work_in),
                ("total", total),
                ("balance", total + dissipated - work_in),
            ):
                self.energy_curves[name].setData(t, values)
        for index, (key, series) in enumerate(self._contacts.items()):
            curves = self.contact_curves.get(key)
            if curves is None:
                curves = self._make_contact_curves(key, index)
            curves[0].setData(*series.lam.data(), connect="finite")
            curves[1].setData(*series.tau.data(), connect="finite")
        for index, (body_id, series) in enumerate(self._jumps.items()):
            self._set_stems(self.jump_plot, self._jump_items, body_id, index, series)
        for index, (kind, series) in enumerate(self._impulses.items()):
            self._set_stems(self.impulse_plot, self._impulse_items, kind, index, series)

    def _make_contact_curves(
        self, key: tuple[str, str], index: int
    ) -> tuple[pg.PlotDataItem, pg.PlotDataItem]:
        name = f"{key[0]}–{key[1]}" if index < LEGEND_LIMIT else None
        pen = pg.mkPen(pg.intColor(index, hues=9, minValue=120), width=1.5)
        curves = (self.lambda_plot.plot(name=name, pen=pen), self.tau_plot.plot(name=name, pen=pen))
        self.contact_curves[key] = curves
        return curves

    @staticmethod
    def _set_stems(
        plot: pg.PlotItem,
        items: dict[str, tuple[pg.PlotDataItem, pg.ScatterPlotItem]],
        name: str,
        index: int,
        series: GrowingSeries,
    ) -> None:
        pair = items.get(name)
        if pair is None:
            colour = pg.intColor(index, hues=9, minValue=120)
            stem = pg.PlotDataItem(pen=pg.mkPen(colour, width=1.5), connect="pairs")
            legend_name = name if index < LEGEND_LIMIT else None
            tips = pg.ScatterPlotItem(size=6, brush=pg.mkBrush(colour), pen=None, name=legend_name)
            plot.addItem(stem)
            plot.addItem(tips)
            pair = items[name] = (stem, tips)
        x, y = series.data()
        pair[0].setData(*_stems(series), connect="pairs")
        pair[1].setData(x, y)

    def set_cursor(self, t: float) -> None:
        """Move the playback-time cursor to ``t`` (s) on every plot.

        While a run streams in, the cursors move with the next redraw (at most
        every ``REDRAW_INTERVAL_MS``): repainting five plots at display rate
        would starve the canvas.
        """
        self._cursor_time = t
        if not self._redraw_timer.isActive():
            self._move_cursors()

    def cursor_time(self) -> float:
        """Where the cursors are drawn, s."""
        return self._cursors[0].value()

    def _move_cursors(self) -> None:
        if self._cursor_time is None:
            return
        for cursor in self._cursors:
            cursor.setValue(self._cursor_time)
        self._cursor_time = None

    def jump_data(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The velocity-jump stems so far, ``name → (times, Δv)``; names as in the legend."""
        return {name: series.data() for name, series in self._jumps.items()}

    def impulse_data(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The impulse stems so far, ``"normal"`` / ``"tangent"`` / ``"applied |S|"`` → (t, N·s)."""
        return {name: series.data() for name, series in self._impulses.items()}

    def point_count(self) -> int:
        """Points gathered so far over every curve (for tests and the status bar)."""
        energy = len(self._trajectory) * len(ENERGY_TERMS) if self._trajectory is not None else 0
        contacts = sum(len(series.lam) for series in self._contacts.values())
        return energy + contacts + sum(len(series) for series in self._jumps.values())

    def export_png(self, path: str) -> bool:
        """Save the plots as a PNG image; True on success."""
        self.redraw()
        return self.graphics.grab().save(path, "PNG")
