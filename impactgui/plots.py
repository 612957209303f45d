"""Live plots of a run: contact forces λ, friction multipliers τ, energy, velocity jumps.

Five pyqtgraph plots share one time axis (linked), each with a legend beside
it (``legend_beside``: never over the newest data), axis units and a vertical
cursor at the playback time. The time axis leaves ``TIME_MARGIN`` either side
(an impact at t = 0 is clear of the border); a value axis whose data are all
round-off (``ROUND_OFF``) shows 0 ± 1, and data flat to round-off show their value with a
margin (``round_off_centre``):

* λ per contact, N (one curve per body–obstacle pair, broken where the
  contact is not active);
* τ per contact (friction force = −μ λ τ along the tangent), unitless;
* energy budget, J: kinetic, potential, spring, dissipated so far, input so
  far, total, and the balance ``total + dissipated − input`` (flat for a
  correct run, MECHANICS §6);
* velocity jumps Δv per body at impact and impulse times, as stems: a bead's
  signed Δvx and a wheel's |Δ| of its centre velocity (m/s); an axle cart's
  jump in each of its five rates ``vxC, vyC`` (m/s), ``omega, omegaA,
  omegaB`` (rad/s), signed;
* impulses per event, N·s, as stems (normal and tangential at impacts, the
  size ``|S|`` of an impulse applied to a cart).

A top-view (axle cart) run has no contacts: its λ and τ plots are hidden,
leaving the room to the others; the energy plot's ``input`` curve is the
work done by the impulses.

Cost while a run streams in (the canvas needs the GUI thread for 60 frames
per second):

* data reach the curves at most every ``REDRAW_INTERVAL_MS``, and only the
  curves whose data grew are set again;
* curves downsample (peak) to the plot's width and clip to the visible range,
  so 1e5 points stay responsive; the energy curves are ``PeakCurve``s
  (``impactgui.peak_curve``), whose per-pixel-column envelope grows with the
  new frames only: a frame at the solver's front costs the same at 1e4 and
  3e5 frames (pyqtgraph re-downsampled the whole history at each ``setData``);
* pyqtgraph's auto-range is off: the panel keeps running bounds of the data
  (widened with each new slice only, never a re-scan) and sets the ranges
  itself, in steps (time: 1, 2, 5 × 10^k s up to the run's end, at most one
  step a second while streaming, ``TIME_AXIS_STEP_INTERVAL_S``; values: a
  fifth of the span of margin). Axes, grids, titles and legends are cached
  as pixmaps, so they are re-rendered only on those rare range steps; the
  grids are opaque (``impactgui.grid``), which Qt draws 20 times faster than
  pyqtgraph's translucent ones. Zooming or panning a plot by hand stops this
  for that axis until its "A" button;
* the stems of a series are one curve (``connect="pairs"``); series beyond
  the legend share the curves of their colour; the tips of all the series of
  a plot are one item that stamps a dot picture per tip;
* the time cursors are plain hairlines (no Python in their painting) that
  move only when the playback time reaches another pixel column.
"""

from __future__ import annotations

import functools
import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt.internals import PrimitiveArray
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Slot
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPen,
    QPixmap,
    QTransform,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsLayout,
    QGraphicsLineItem,
    QSizePolicy,
    QStyleOptionGraphicsItem,
    QVBoxLayout,
    QWidget,
)

from impactgui.device_pixels import to_device
from impactgui.grid import show_grid
from impactgui.legible_axis import legible_axes
from impactgui.names import contact_name
from impactgui.peak_curve import PeakCurve
from solver.cart_motion import RATE_NAMES as CART_RATE_NAMES
from solver.frames import Event, StepOutput
from solver.record import Trajectory

if TYPE_CHECKING:
    from solver.system import System

REDRAW_INTERVAL_MS = 250
"""New data reach the curves at most this often while frames stream in, ms.

The work is spread over the interval: the energy curves, the contact curves
and the stems are set on three successive timer ticks (a part that takes longer
than ``REDRAW_SLICE_S`` goes on over the next ones), so no single display frame pays
for a whole redraw and its repaint."""
CATCH_UP_FRAMES = 2
"""After a streaming step of the time axis (the energy plot alone), the λ/τ plots take it
this many frames later, and the stem plots as many frames after them (one group per paint)."""
REDRAW_SLICE_S = 0.006
"""One tick of a streaming redraw starts no further contact curve or stem group after
this long, s: after a step of the time axis every stem group is binned and set afresh
(a 200-bead chain has 17 of them, 36 ms of the GUI thread in one tick); the rest is
set on the next ticks."""
TIME_AXIS_STEP_INTERVAL_S = 1.0
"""While a run streams in, the time axis steps at most this often (wall clock), s, unless
the playback cursor has left it; see ``PlotPanel._fit_time_axis``."""
TIME_AXIS_MIN_SPAN_S = 1.0
"""The time axis spans at least this much (or the whole run, if shorter), s: a run's
first second does not re-scale (and re-render) every plot at each 1, 2, 5 step."""

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
CURVE_OF_ENERGY_COLUMN = ("kinetic", "potential", "spring", "total", "dissipated", "input")
"""The energy curve of each column of ``Trajectory.energies()``, in order."""

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

CURSOR_COLOUR = "#e377c2"
"""Colour of the playback-time cursors."""

STEM_HUES = 9
"""Colours of the stem series (the ``hues`` of ``pg.intColor``)."""
TIP_SIZE_PX = 6.0
"""Diameter of the dot at a stem's tip, px."""
TIP_Z = 1.0
"""The tips are drawn above every stem (below the curtains of playback honesty)."""

RANGE_MARGIN = 0.2
"""Margin around the data when a value range is widened, as a fraction of the data's span."""

AXIS_WIDTH = 80
"""Starting width of the value axes, px; it grows (for every plot at once) to fit wider ticks.

Room for tick texts of eight characters at 9 pt (``-0.00025``, ``-2.5e+09``: up to 57 px
with the unit label): the paper-004 wheel's axes were widened from 56 px within the
first second of its run, a layout and re-render of all five plots (a 20-45 ms paint)."""
AXIS_HEADROOM = 16
"""Room a widened value axis keeps for wider ticks to come, px (about two digits): each
widening lays out and re-renders all five plots at once (a 30-45 ms paint), and tick
texts widen by a digit or a sign at a time as a run's values grow (56 -> 72 -> 79 px
within seconds of the paper-004 wheel)."""

_CACHED = QGraphicsItem.CacheMode.DeviceCoordinateCache
"""Axes, titles, legends and curves are drawn from pixmaps while they do not change."""


class GrowingSeries:
    """``(x, y)`` points appended into amortised-doubling arrays."""

    def __init__(self) -> None:
        self._x = np.empty(64)
        self._y = np.empty(64)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def _reserve(self, needed: int) -> None:
        if needed > len(self._x):
            capacity = max(2 * len(self._x), needed)
            for name in ("_x", "_y"):
                grown = np.empty(capacity)
                grown[: self._n] = getattr(self, name)[: self._n]
                setattr(self, name, grown)

    def append(self, x: float, y: float) -> None:
        """Add one point (``y = nan`` breaks a line there)."""
        self._reserve(self._n + 1)
        self._x[self._n] = x
        self._y[self._n] = y
        self._n += 1

    def extend(self, x: np.ndarray, y: np.ndarray) -> None:
        """Add the points ``(x[i], y[i])``."""
        end = self._n + len(x)
        self._reserve(end)
        self._x[self._n : end] = x
        self._y[self._n : end] = y
        self._n = end

    def data(self) -> tuple[np.ndarray, np.ndarray]:
        """The points so far (views)."""
        return self._x[: self._n], self._y[: self._n]


class _Bounds:
    """Running ``[low, high]`` of the finite values a plot shows, widened slice by slice."""

    def __init__(self) -> None:
        self.low = math.inf
        self.high = -math.inf

    def include(self, values: np.ndarray) -> None:
        """Widen to the finite entries of ``values`` (only the new ones: O(len(values)))."""
        finite = values[np.isfinite(values)]
        if finite.size:
            self.low = min(self.low, float(finite.min()))
            self.high = max(self.high, float(finite.max()))


class _ContactSeries:
    """λ and τ of one contact over the sample frames where it is active, and its curves."""

    def __init__(self) -> None:
        self.lam = GrowingSeries()
        self.tau = GrowingSeries()
        self.last_sample = -2
        self.curves: tuple[pg.PlotDataItem, pg.PlotDataItem] | None = None
        self.shown = 0
        """Points already handed to the curves."""

    def add(self, sample: int, t: float, lam: float, tau: float) -> None:
        if self.last_sample != sample - 1 and len(self.lam):
            self.lam.append(t, np.nan)
            self.tau.append(t, np.nan)
        self.lam.append(t, lam)
        self.tau.append(t, tau)
        self.last_sample = sample


class _StemTips(pg.GraphicsObject):
    """The dots at the tips of one plot's stems, each group's in its colour, drawn by one item.

    A dot is one picture, drawn once per colour and size and stamped at each
    tip in device pixels. Setting a group's tips stores two arrays: a
    ``ScatterPlotItem`` per group spent ~0.6 ms per ``setData`` on per-point
    styles (a 200-bead chain's 17 groups: 6 ms of one redraw, half of it), and
    a change re-renders one cached picture of the plot's tips instead of one
    per group. The bounding rectangle is remembered until the data or the
    zoom change (Qt asks for it several times per paint).

    Listed with the plot's data items (``implements("plotData")``), so that a
    plot's ``clear`` and the presentation styling reach it; ``opts["size"]``
    and ``setSize`` as a scatter's.
    """

    def __init__(self, size: float) -> None:
        super().__init__()
        self.opts: dict[str, Any] = {"size": float(size), "pen": None}
        self._groups: dict[Any, tuple[QColor, np.ndarray, np.ndarray]] = {}
        self._rect: QRectF | None = None
        self._sprites: dict[tuple[int, float, float], QPixmap] = {}
        self._fragments = PrimitiveArray(QPainter.PixmapFragment, 10)
        """Where each tip's dot goes, for one ``drawPixmapFragments`` per group (a call per
        tip cost 2.3 ms for 900 tips, a 200-bead chain's two stem plots, at every paint)."""

    def implements(self, interface: str | None = None) -> bool | list[str]:
        """A plot-data item (pyqtgraph's protocol)."""
        return ["plotData"] if interface is None else interface == "plotData"

    def name(self) -> None:
        """No legend entry: the group's curve has it."""
        return None

    def set_tips(self, group: Any, colour: QColor, x: np.ndarray, y: np.ndarray) -> None:
        """The tips ``(x[i], y[i])`` of ``group``, drawn in ``colour`` (replacing its last)."""
        self._groups[group] = (colour, np.array(x, dtype=float), np.array(y, dtype=float))
        self._changed()

    def tips(self) -> list[tuple[QColor, np.ndarray, np.ndarray]]:
        """``(colour, x, y)`` per group."""
        return list(self._groups.values())

    def getData(self) -> tuple[np.ndarray, np.ndarray]:
        """Every tip's ``(x, y)``, group after group."""
        if not self._groups:
            return np.zeros(0), np.zeros(0)
        return (
            np.concatenate([x for _, x, _ in self._groups.values()]),
            np.concatenate([y for _, _, y in self._groups.values()]),
        )

    def setSize(self, size: float) -> None:
        """Dots ``size`` px wide."""
        self.opts["size"] = float(size)
        self._changed()

    def _changed(self) -> None:
        self.prepareGeometryChange()
        self._rect = None
        self.update()

    def viewTransformChanged(self) -> None:
        """The zoom changed: a pixel is another size in data units."""
        self.prepareGeometryChange()
        self._rect = None

    def dataBounds(
        self, ax: int, frac: float = 1.0, orthoRange: Any = None
    ) -> tuple[float | None, float | None]:
        """Smallest and largest tip coordinate along axis ``ax`` (auto-range)."""
        values = self.getData()[ax]
        if not len(values):
            return None, None
        return float(values.min()), float(values.max())

    def pixelPadding(self) -> float:
        """Half a dot, px (auto-range)."""
        return self.opts["size"] / 2

    def boundingRect(self) -> QRectF:
        """The tips' bounds with half a dot around (worked out once per data and zoom)."""
        if self._rect is None:
            x, y = self.getData()
            if not len(x):
                self._rect = QRectF()
            else:
                half = self.opts["size"] / 2 + 1
                dx = half * (self.pixelLength(pg.Point(1, 0)) or 0.0)
                dy = half * (self.pixelLength(pg.Point(0, 1)) or 0.0)
                x0, x1, y0, y1 = float(x.min()), float(x.max()), float(y.min()), float(y.max())
                self._rect = QRectF(x0 - dx, y0 - dy, x1 - x0 + 2 * dx, y1 - y0 + 2 * dy)
        return self._rect

    def _sprite(self, colour: QColor, ratio: float) -> QPixmap:
        """The picture of one dot in ``colour`` (device-independent px)."""
        size = self.opts["size"]
        key = (colour.rgba(), size, ratio)
        sprite = self._sprites.get(key)
        if sprite is None:
            if len(self._sprites) > 4 * STEM_HUES:  # sizes of an earlier style
                self._sprites.clear()
            side = math.ceil(size) + 2
            sprite = QPixmap(round(side * ratio), round(side * ratio))
            sprite.setDevicePixelRatio(ratio)
            sprite.fill(Qt.GlobalColor.transparent)
            painter = QPainter(sprite)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QBrush(colour))
            painter.drawEllipse(QPointF(side / 2, side / 2), size / 2, size / 2)
            painter.end()
            self._sprites[key] = sprite
        return sprite

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        """Stamp each group's dot at its tips, in device pixels."""
        if not self._groups:
            return
        t = painter.transform()
        device = painter.device()
        ratio = device.devicePixelRatioF() if device is not None else 1.0
        painter.save()
        painter.resetTransform()
        fragments = self._fragments
        for colour, x, y in self._groups.values():
            if not len(x):
                continue
            sprite = self._sprite(colour, ratio)
            half = sprite.width() / ratio / 2
            px, py = to_device(t, x, y)
            # one call per group: the centre of each whole-pixel placed dot, the whole sprite
            fragments.resize(len(px))
            rows = fragments.ndarray()
            rows[:, 0] = np.rint(px - half) + half
            rows[:, 1] = np.rint(py - half) + half
            rows[:, 2:6] = (0.0, 0.0, sprite.width(), sprite.height())
            rows[:, 6:10] = (1.0 / ratio, 1.0 / ratio, 0.0, 1.0)
            painter.drawPixmapFragments(*fragments.drawargs(), sprite)
        painter.restore()


class _StemCurve(pg.PlotCurveItem):
    """The stems of one group (``connect="pairs"``: one vertical segment per pair of points).

    Painted on screen as the rectangles the pen's stroke covers (a solid cosmetic pen
    wider than a pixel, square caps, no antialiasing: the segment widened by half the
    pen on every side), in one ``drawRects`` call: Qt stroked each segment of a 1.5 px
    pen as a polygon, 3.3 ms for 1800 stems (a 200-bead chain's jump plot, repainted
    at every frame at the solver's front), the rectangles 0.5 ms, the same pixels.
    Any other pen, or an export, is painted as pyqtgraph paints a curve.
    """

    def __init__(self, **opts: Any) -> None:
        super().__init__(**opts)
        self._rects = PrimitiveArray(QRectF, 4)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        """The stems as filled rectangles in device pixels, where that is what the pen draws."""
        pen = self.opts["pen"]
        t = painter.transform()
        if (
            self.xData is None
            or not len(self.xData)
            or self._exportOpts is not False
            or self.opts["antialias"]
            or self.opts["shadowPen"] is not None
            or not isinstance(pen, QPen)
            or pen.style() != Qt.PenStyle.SolidLine
            or pen.capStyle() != Qt.PenCapStyle.SquareCap
            or not pen.isCosmetic()
            or pen.widthF() <= 1.0
            or t.type().value > QTransform.TransformationType.TxScale.value
        ):
            super().paint(painter, option, widget)
            return
        x, y = self.xData, self.yData
        px, top = to_device(t, x[0::2], y[0::2])
        _px, bottom = to_device(t, x[1::2], y[1::2])
        half = pen.widthF() / 2
        self._rects.resize(len(px))
        rects = self._rects.ndarray()
        rects[:, 0] = px - half
        rects[:, 1] = np.minimum(top, bottom) - half
        rects[:, 2] = 2 * half
        rects[:, 3] = np.abs(bottom - top) + 2 * half
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(pen.brush())
        painter.drawRects(*self._rects.drawargs())
        painter.restore()


class _StemGroup:
    """Stems of one colour: a ``connect="pairs"`` curve; their tips go to the plot's dots.

    What is drawn is binned to the plot's pixel columns: per column in view,
    the stem to the largest value and the stem to the smallest (the two a
    screen can show there). The bins are kept and updated with new stems
    only, and made afresh when the time range or the plot's width changes, so
    a redraw costs the plot's width in items, whatever the number of stems.
    """

    def __init__(self, colour: QColor, name: str | None) -> None:
        self.colour = colour
        self.name = name
        self.points = GrowingSeries()
        self.curve: pg.PlotCurveItem | None = None
        self.shown = 0
        """Points already binned."""
        self.view: tuple[float, float, int] | None = None
        """``(t0, t1, columns)`` the bins are for."""
        self.high = self.low = self.high_t = self.low_t = np.zeros(0)
        """Per column: the largest value (≥ 0), the smallest (≤ 0), and their times."""

    def bin(self, view: tuple[float, float, int]) -> None:
        """Bring the per-column extremes up to date for ``view`` (new points only if unchanged)."""
        x, y = self.points.data()
        t0, t1, columns = view
        if view != self.view:
            self.view, self.shown = view, 0
            self.high, self.low = np.zeros(columns), np.zeros(columns)
            self.high_t, self.low_t = np.zeros(columns), np.zeros(columns)
        first = self.shown + int(np.searchsorted(x[self.shown :], t0, side="left"))
        last = self.shown + int(np.searchsorted(x[self.shown :], t1, side="right"))
        self.shown = len(x)
        if last <= first:
            return
        times, values = x[first:last], y[first:last]
        column = np.clip(((times - t0) * (columns / (t1 - t0))).astype(int), 0, columns - 1)
        order = np.lexsort((values, column))  # by column, then by value
        ordered = column[order]
        boundary = ordered[1:] != ordered[:-1]
        for extreme, ends, keep in (
            (self.high, np.append(boundary, True), np.greater),  # each column's largest
            (self.low, np.insert(boundary, 0, True), np.less),  # and smallest
        ):
            pick = order[ends]
            where = column[pick]
            better = keep(values[pick], extreme[where])
            extreme[where[better]] = values[pick][better]
            extreme_t = self.high_t if extreme is self.high else self.low_t
            extreme_t[where[better]] = times[pick][better]

    def first_in_view(self, view: tuple[float, float, int], t: float) -> bool:
        """True when stems up to ``t`` (s) wait to be binned and ``view`` shows none of this
        group yet (bins made for another view, or empty)."""
        x, _ = self.points.data()
        if self.shown == len(x) or x[self.shown] > t:
            return False
        return view != self.view or not (self.high.any() or self.low.any())

    def stems(self) -> tuple[np.ndarray, np.ndarray]:
        """Tips ``(t, value)`` of the stems drawn: each column's largest and smallest value."""
        up, down = self.high > 0, self.low < 0
        return (
            np.concatenate((self.high_t[up], self.low_t[down])),
            np.concatenate((self.high[up], self.low[down])),
        )


class _StemPlot:
    """The stem series of one plot (velocity jumps or impulses), drawn with few items.

    Each of the first ``LEGEND_LIMIT`` series has its own items and legend
    entry. The later ones have no legend entry and are told apart by colour
    only (``STEM_HUES`` of them), so the series of one colour share their
    items: a 2000-bead chain draws its jumps with at most 17 stem curves, and
    the tips of every group are one item (``_StemTips``). Each group draws
    at most two stems per pixel column of the plot (``_StemGroup``): what is
    off-screen or hidden behind another stem costs nothing to draw.
    """

    def __init__(self, plot: pg.PlotItem) -> None:
        self.plot = plot
        self.series: dict[str, GrowingSeries] = {}
        self._groups: dict[str | int, _StemGroup] = {}
        self._group_of: dict[str, _StemGroup] = {}
        self._tips: _StemTips | None = None

    def append(self, name: str, t: float, value: float) -> None:
        """Add the stem ``value`` at time ``t`` to the series ``name`` (created the first time)."""
        series = self.series.get(name)
        if series is None:
            index = len(self.series)
            series = self.series[name] = GrowingSeries()
            key = name if index < LEGEND_LIMIT else index % STEM_HUES
            group = self._groups.get(key)
            if group is None:
                colour = pg.intColor(index, hues=STEM_HUES, minValue=120)
                label = name if index < LEGEND_LIMIT else None
                group = self._groups[key] = _StemGroup(colour, label)
            self._group_of[name] = group
        series.append(t, value)
        self._group_of[name].points.append(t, value)

    def view(self) -> tuple[float, float, int]:
        """The time range shown and the plot's width in pixel columns."""
        (t0, t1), _ = self.plot.vb.viewRange()
        columns = max(1, int(self.plot.vb.width()))
        return float(t0), float(t1) if t1 > t0 else float(t0) + 1.0, columns

    def draw(self, bounds: _Bounds, deadline: float | None = None) -> bool:
        """Bin the new stems (all, after a change of view), set the items and widen ``bounds``.

        With a ``deadline`` (``time.perf_counter`` seconds) no further group
        is binned afresh for a new view once it has passed (the first always
        is; groups with new stems only are cheap and always drawn); returns
        True when every group is drawn.
        """
        view = self.view()
        drawn, complete = False, True
        for group in self._groups.values():
            count = len(group.points)
            if count == group.shown and view == group.view:
                continue
            late = deadline is not None and time.perf_counter() > deadline
            if drawn and late and view != group.view:  # new stems only: few, drawn anyway
                complete = False
                continue
            drawn = True
            bounds.include(np.append(group.points.data()[1][group.shown :], 0.0))
            group.bin(view)
            x, y = group.stems()
            if group.curve is None:
                group.curve = _StemCurve(
                    pen=pg.mkPen(group.colour, width=1.5), connect="pairs", name=group.name
                )
                group.curve.setCacheMode(_CACHED)
                self.plot.addItem(group.curve)
            if self._tips is None:
                self._tips = _StemTips(size=TIP_SIZE_PX)
                self._tips.setCacheMode(_CACHED)
                self._tips.setZValue(TIP_Z)
                self.plot.addItem(self._tips)
            group.curve.setData(np.repeat(x, 2), np.column_stack((np.zeros_like(y), y)).ravel())
            self._tips.set_tips(group, group.colour, x, y)
        return complete

    def groups(self) -> list[_StemGroup]:
        """The stem groups (one per colour drawn)."""
        return list(self._groups.values())

    def first_in_view(self, t: float) -> bool:
        """True when a group with stems up to ``t`` (s) to draw shows none yet (``_StemGroup``)."""
        view = self.view()
        return any(group.first_in_view(view, t) for group in self._groups.values())

    def clear(self) -> None:
        """Forget every series (the panel removes the items from the plot)."""
        self.series.clear()
        self._groups.clear()
        self._group_of.clear()
        self._tips = None


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


def nice_ceil(value: float) -> float:
    """The smallest of 1, 2, 5 × 10^k that is ≥ ``value`` (> 0)."""
    scale = 10.0 ** math.floor(math.log10(value))
    for mantissa in (1.0, 2.0, 5.0):
        if mantissa * scale >= value * (1 - 1e-12):
            return mantissa * scale
    return 10.0 * scale


def _grown_range(
    current: tuple[float, float] | None, bounds: _Bounds
) -> tuple[float, float] | None:
    """A value range that shows ``bounds``: ``current`` while it does, else a wider one.

    The new range has ``RANGE_MARGIN`` of the data's span on each side, so
    slowly growing data step the range (and re-render the cached axis) a few
    times, not at every update. None when there is no data yet.
    """
    low, high = bounds.low, bounds.high
    if low > high:
        return None
    centre = round_off_centre(low, high)
    if centre is not None:
        low = high = centre
    if current is not None and current[0] <= low and high <= current[1]:
        return current
    if low == high:
        return flat_range(low)
    margin = RANGE_MARGIN * (high - low)
    return low - margin, high + margin


def round_off_centre(low: float, high: float) -> float | None:
    """The value data in ``[low, high]`` stand at when they differ from it by round-off only.

    0 when both are within ``ROUND_OFF`` of 0 (τ of a pure roll, ``-1e-15``);
    the middle when the span is round-off of their size (a rolling wheel's
    height, 0.5 m to 1e-16); None when the data move. An axis then shows
    the value with a margin (``flat_range``), never ticks 1e-15 apart.
    """
    if max(abs(low), abs(high)) <= ROUND_OFF:
        return 0.0
    if high - low <= ROUND_OFF * max(1.0, abs(low), abs(high)):
        return 0.5 * (low + high)
    return None


def flat_range(centre: float) -> tuple[float, float]:
    """The value range shown for data flat at ``centre``: ±``RANGE_MARGIN``·|centre|, or ±1."""
    margin = RANGE_MARGIN * abs(centre) or 1.0
    return centre - margin, centre + margin


_LINE_OPTIONS = {"connect": "finite", "skipFiniteCheck": True}
"""Curve options: ``connect="finite"`` finds NaN gaps itself in the downsampled data, so
pyqtgraph's own finite check over the whole series is skipped safely."""

FAR_OFF_LIMIT = 1e6
"""pyqtgraph's dynamic range limit (its default), in view heights: set on the curves of a
plot whose value range was zoomed or panned by hand, off while the panel fits the range.

pyqtgraph clips data farther than this from the view, because Qt fails to draw a path
zoomed in to less than about 1e-7 of its height (pyqtgraph PR 1140). With the limit on,
pyqtgraph 0.14 makes every curve of a plot anew (clip to view and peak downsampling, O(frames))
at every change of the value range, not only of the time range: a value-range step of the
energy plot cost 1-2 ms per curve at 1e5 frames, the run's end 10 ms (bench/gui.py, the
paper-004 wheel). While the panel sets the ranges, every value lies within about one view
height, so nothing is far off; once the user zooms by hand it may be, and the limit is on."""


LEGEND_TEXT_SIZE = "8pt"
"""Size of the legends' text outside presentation mode."""
LEGEND_ROOM_NAME = "wheel – curb, vertex 2"
"""The legends beside the live plots are at least as wide as an entry of this name from the
start. A legend that widens moves the plots' right edge, which lays out and re-renders all
five plots at once: the first contact's entries did so at the start of every paper-004
wheel run (a 13-17 ms paint of the GUI thread, bench/gui.py). Longer names still widen it."""
LEGEND_ENTRY_EXTRA_PX = 51
"""Width of a legend entry beyond its text (its line sample, spacing and margins), px."""
LEGEND_WIDTH_SHARE = 0.45
"""A legend laid out in columns is at most this share of the plots panel's width (or as wide
as one ``LEGEND_ROOM_NAME`` entry): in a 1400 x 700 window the energy's seven entries in
three columns (318 px) stood beyond the 520 px panel's right edge, "spring" and "total" cut."""


@functools.cache
def legend_height(entries: int) -> float:
    """Height of a legend beside a live plot with ``entries`` entries in one column, px.

    Measured on a legend made for it, as the plots' legends are made (its fonts, spacing).
    """
    legend = pg.LegendItem(
        offset=None, labelTextSize=LEGEND_TEXT_SIZE, labelTextColor="k", verSpacing=-4
    )
    for index in range(entries):
        legend.addItem(pg.PlotDataItem(), LEGEND_ROOM_NAME if index == 0 else f"{index}")
    return legend.effectiveSizeHint(Qt.SizeHint.PreferredSize).height() if entries else 0.0


def legend_columns(entries: int, row_height: float, least: int = 1) -> int:
    """Columns a legend of ``entries`` entries needs to stand in a row ``row_height`` px tall.

    At least ``least``; one more column for each time the entries would not fit: in a short
    window the room for a long legend comes from the legend column's width, never from the
    plots' heights (a legend taller than its row makes the row taller and squeezes the others).
    """
    if entries <= least:
        return least
    fits = legend_height(1)
    step = legend_height(2) - fits
    rows = 1 + max(0, math.floor((row_height - fits) / step)) if step > 0 else entries
    return max(least, math.ceil(entries / max(rows, 1)))


TIME_MARGIN = 0.02
"""Room left and right of the data on the time axis, as a share of the span shown: an impact
at t = 0 stands clear of the plot's left border."""

HONEST_REFIT_MS = 100
"""With playback honesty on, value ranges and legends follow the playback time at most this
often, ms (each refit reads the data up to that time once)."""

ROUND_OFF = 1e-9
"""Data no farther than this from 0 are round-off: a value axis showing only such data shows
0 ± 1, never ``-1e-15`` (τ of a pure roll); data whose span is this share of their size are
flat (``round_off_centre``)."""


def refill_legend(
    legend: pg.LegendItem,
    entries: list[tuple[Any, str]],
    columns: int | None = None,
    size: str | None = None,
) -> None:
    """Lay ``legend`` out afresh with ``entries`` (``(item, name)``), in ``columns`` columns and
    text of ``size`` (as they are when None), and put it back in its place at once.

    pyqtgraph's ``LegendItem.clear`` and ``addItem`` set the legend's geometry at (0, 0)
    (``updateSize``); a legend in a layout (``legend_beside``) stood there, over the λ
    plot's top left corner, until the layout's next turn: a paint in between showed it
    there, and under load a check read it there (presentation's restyle). Its layout is
    invalidated and activated now.
    """
    legend.clear()
    if columns is not None:
        legend.setColumnCount(columns)
    if size is not None:
        legend.setLabelTextSize(size)
    for item, name in entries:
        legend.addItem(item, name)
    layout = getattr(legend.parentItem(), "layout", None)
    if isinstance(layout, QGraphicsLayout):
        layout.invalidate()
        layout.activate()


def legend_beside(plot: pg.PlotItem) -> pg.LegendItem:
    """The plot's legend, right of it in its ``GraphicsLayout`` (never over a curve).

    It is the plot's own legend (``plot.legend``): every curve added with a
    name gets its entry. The legends of a column of plots share one column
    of the layout, so the plots stay lined up under one time axis.
    """
    grid = plot.parentItem()
    row, column = grid.items[plot][0]
    legend = pg.LegendItem(
        offset=None, labelTextSize=LEGEND_TEXT_SIZE, labelTextColor="k", verSpacing=-4
    )
    # its entries' height, at the top of the row (stretched to the row, they spread apart)
    legend.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
    grid.addItem(legend, row=row, col=column + 1)
    grid.layout.setAlignment(legend, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
    plot.legend = legend
    return legend


def plot_with_legend_beside(
    title: str | None = None,
) -> tuple[pg.GraphicsLayoutWidget, pg.PlotItem]:
    """A white plot in a widget of its own, its legend beside it (``legend_beside``).

    For a single plot (a Compare panel, the overlay): a ``PlotWidget``'s
    legend can only float over its curves.
    """
    widget = pg.GraphicsLayoutWidget()
    widget.setBackground("w")
    plot = widget.addPlot(row=0, col=0, title=title)
    legend_beside(plot)
    return widget, plot


def time_span(plot: pg.PlotItem) -> tuple[float, float]:
    """The time range a ``PlotPanel`` plot was set to show, s: its view without the margins."""
    x0, x1 = plot.vb.viewRange()[0]
    margin = TIME_MARGIN * (x1 - x0) / (1.0 + 2.0 * TIME_MARGIN)
    return float(x0 + margin), float(x1 - margin)


def _starts_by(item: Any, until: float) -> bool:
    """True when the curve ``item`` has a finite point at a time ≤ ``until`` (s)."""
    if isinstance(item, pg.PlotDataItem):
        x, y = item.getOriginalDataset()
    else:
        x, y = item.getData()
    if x is None or y is None or not len(x):
        return False
    finite = np.isfinite(y)
    return bool(finite.any()) and float(x[int(np.argmax(finite))]) <= until


def show_plot(plot: pg.PlotItem, shown: bool) -> None:
    """Show or hide ``plot`` with its legend beside it."""
    plot.setVisible(shown)
    if plot.legend is not None:
        plot.legend.setVisible(shown)


def _cached(item: pg.PlotDataItem) -> pg.PlotDataItem:
    """``item`` with its curve cached as a pixmap: a cursor passing over it costs a blit."""
    item.curve.setCacheMode(_CACHED)
    return item


def _style(plot: pg.PlotItem, title: str, unit_label: str) -> None:
    """Title, unit, grid, downsampling, no auto-range; axes and title cached as pixmaps.

    Text is the costly part of a software-rendered repaint; a cached axis
    is re-rendered only when its range changes.
    """
    plot.setTitle(title, size="9pt", color="k")
    plot.setLabel("left", unit_label, color="k")
    show_grid(plot, "w", alpha=0.2)
    plot.setDownsampling(auto=True, mode="peak")
    plot.setClipToView(True)
    plot.vb.disableAutoRange()
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
        self.lambda_plot = self.graphics.addPlot(row=0, col=0, axisItems=legible_axes())
        self.tau_plot = self.graphics.addPlot(row=1, col=0, axisItems=legible_axes())
        self.energy_plot = self.graphics.addPlot(row=2, col=0, axisItems=legible_axes())
        self.jump_plot = self.graphics.addPlot(row=3, col=0, axisItems=legible_axes())
        self.impulse_plot = self.graphics.addPlot(row=4, col=0, axisItems=legible_axes())
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
        self._legends = [legend_beside(plot) for plot in self.plots]
        self._least_columns = [1] * len(self._legends)
        """Each legend's columns in a tall enough panel (an axle cart's jump legend: 3)."""
        self._reserved_entries = [0, 0, len(ENERGY_TERMS), 0, 0]
        """Entries each legend is given room for from a run's start (``_fit_legend_columns``)."""
        font = QFont()
        font.setPointSizeF(float(LEGEND_TEXT_SIZE.removesuffix("pt")))
        room = QFontMetricsF(font).horizontalAdvance(LEGEND_ROOM_NAME) + LEGEND_ENTRY_EXTRA_PX
        for legend in self._legends:
            legend.setCacheMode(_CACHED)
            legend.setMinimumWidth(math.ceil(room))
        cursor_pen = QPen(QColor(CURSOR_COLOUR), 0)  # a cosmetic 1-pixel hairline
        self._cursors: dict[pg.ViewBox, QGraphicsLineItem] = {}
        for plot in self.plots:
            if plot is not self.energy_plot:
                plot.setXLink(self.energy_plot)
            if plot is not self.impulse_plot:
                plot.getAxis("bottom").setStyle(showValues=False)
            cursor = QGraphicsLineItem()
            cursor.setPen(cursor_pen)
            plot.addItem(cursor, ignoreBounds=True)
            self._cursors[plot.vb] = cursor
            self._on_y_range_changed(plot.vb, plot.vb.viewRange()[1])
            plot.vb.sigYRangeChanged.connect(self._on_y_range_changed)
            plot.vb.sigRangeChangedManually.connect(self._on_range_changed_manually)
        self.energy_curves: dict[str, pg.PlotDataItem] = {}
        self.contact_curves: dict[tuple[str, str], tuple[pg.PlotDataItem, pg.PlotDataItem]] = {}
        self._trajectory: Trajectory | None = None
        self._t_end: float | None = None
        self._rate_slices: list[tuple[str, slice, tuple[str, ...]]] = []
        self._rate_owner = np.zeros(0, dtype=int)
        """Index in ``_rate_slices`` of the body each generalized rate belongs to."""
        self._contacts: dict[tuple[str, str], _ContactSeries] = {}
        self._jumps = _StemPlot(self.jump_plot)
        self._impulses = _StemPlot(self.impulse_plot)
        self._balance = GrowingSeries()
        self._energy_gathered = 0
        """Frames in the balance series and the energy plot's bounds."""
        self._energy_pending: list[str] = []
        """Energy curves still to be set with the first ``_energy_gathered`` frames."""
        self._bounds: dict[pg.PlotItem, _Bounds] = {}
        self._y_ranges: dict[pg.PlotItem, tuple[float, float] | None] = {}
        self._x_range: tuple[float, float] | None = None
        self._follow_x = True
        self._follow_y: dict[pg.PlotItem, bool] = {}
        self._samples = 0
        self._dirty = False
        self._batches = 0
        self._cycle_batches = 0
        self._parts = (
            (self._draw_energy, (self.energy_plot,)),
            (self._draw_contacts, (self.lambda_plot, self.tau_plot)),
            (self._draw_stems, (self.jump_plot, self.impulse_plot)),
        )
        """Each part of a redraw and the plots whose ranges it may change (a range step
        repaints its plot)."""
        self._next_part = 0
        self._redraw_timer = QTimer(self)
        self._redraw_timer.setInterval(REDRAW_INTERVAL_MS // len(self._parts))
        self._redraw_timer.timeout.connect(self._on_redraw_timer)
        self._axis_width = AXIS_WIDTH
        for plot in self.plots:
            plot.getAxis("left").setWidth(AXIS_WIDTH)
        for plot in (self.jump_plot, self.impulse_plot):
            plot.vb.sigXRangeChanged.connect(self._on_stem_view_changed)
            plot.vb.sigResized.connect(self._on_stem_view_changed)
        self._shown_time = 0.0
        """The playback time last given to ``set_cursor``, s."""
        self._frames_since_step = 0
        """Frames drawn since a staggered step of the time axis or a plot group's catch-up."""
        self._drawn_at = -math.inf
        """The time shown when ``_draw_due`` last drew, s."""
        self._until: float | None = None
        """Playback honesty: ranges and legends from the data up to this time only (s)."""
        self._until_bounds: dict[pg.PlotItem, _Bounds] = {}
        """The bounds of each plot's data up to ``_until`` (made by ``_refit_until``)."""
        self._until_timer = QTimer(self)
        self._until_timer.setSingleShot(True)
        self._until_timer.setInterval(HONEST_REFIT_MS)
        self._until_timer.timeout.connect(self._refit_until)
        self._make_energy_curves()
        self._forget_ranges()
        self._show_view("side")

    @Slot()
    def _on_stem_view_changed(self) -> None:
        """The stems are binned to the view's pixel columns: bin them afresh."""
        self._dirty = True

    def _show_view(self, view: str) -> None:
        """Titles, units, legends and plots of a side-view or a top-view run; ranges reset.

        The time axis shows 0 to 1 s and every value axis 0 to 1 until data
        arrive: nothing of an earlier run's ranges remains.
        """
        titles = TITLES[view]
        self.jump_plot.setTitle(titles["jump"], size="9pt", color="k")
        self.jump_plot.setLabel("left", titles["jump_unit"], color="k")
        self.impulse_plot.setTitle(titles["impulse"], size="9pt", color="k")
        self._least_columns[3] = 3 if view == "top" else 1
        self._set_legend_columns(3, self._least_columns[3])
        for plot in (self.lambda_plot, self.tau_plot):
            show_plot(plot, view == "side")
        self._set_time_range(0.0, 1.0)
        self._catch_up_time_axis(self.plots)
        for plot in self.plots:
            plot.setYRange(0.0, 1.0, padding=0)
        self._axis_width = AXIS_WIDTH
        for plot in self.plots:
            plot.getAxis("left").setWidth(AXIS_WIDTH)

    def _make_energy_curves(self) -> None:
        for name, colour in ENERGY_TERMS:
            style = pg.mkPen(colour, width=2 if name in ("total", "balance") else 1)
            if name == "balance":
                style.setStyle(pg.QtCore.Qt.PenStyle.DashLine)
            self.energy_curves[name] = self._add_curve(self.energy_plot, name=name, pen=style)

    def _add_curve(self, plot: pg.PlotItem, **style: Any) -> PeakCurve:
        """A new curve of ``plot`` (a legend entry if named), drawn as its data's envelope."""
        curve = _cached(PeakCurve(**style, **self._line_options(plot)))
        plot.addItem(curve)
        return curve

    def _forget_ranges(self) -> None:
        """Follow the data on every axis afresh (the next redraw sets every range)."""
        self._bounds = {plot: _Bounds() for plot in self.plots}
        self._y_ranges = dict.fromkeys(self.plots)
        self._follow_y = dict.fromkeys(self.plots, True)
        for plot in self.plots:
            self._follow_values(plot, True)
        self._x_range = None
        self._until_bounds = {}
        self._x_stepped: tuple[float, float | None] = (time.monotonic(), None)
        """Wall-clock time (monotonic, s) of the last time-axis step and the data's end then
        (None: the run's start, no data yet)."""
        self._follow_x = True

    def clear(self) -> None:
        """Forget the run: empty every plot, back to a side view's titles and default ranges."""
        self._redraw_timer.stop()
        for plot in (self.lambda_plot, self.tau_plot, self.jump_plot, self.impulse_plot):
            for item in list(plot.listDataItems()):
                plot.removeItem(item)
        for legend in (self._legends[0], self._legends[1], self._legends[3], self._legends[4]):
            legend.clear()
        for curve in self.energy_curves.values():
            curve.setData([], [])
        self.contact_curves.clear()
        self._contacts.clear()
        self._jumps.clear()
        self._impulses.clear()
        self._balance = GrowingSeries()
        self._energy_gathered = 0
        self._energy_pending = []
        self._samples = 0
        self._trajectory = None
        self._t_end = None
        self._dirty = False
        self._next_part = 0
        self._drawn_at = -math.inf
        self._forget_ranges()
        self._show_view("side")

    def set_run(self, trajectory: Trajectory, system: System | None) -> None:
        """Start plotting a new run (``trajectory`` grows; feed its batches to ``add_output``)."""
        self.clear()
        self._trajectory = trajectory
        self._rate_slices = []
        owners: list[int] = []
        if system is not None:
            self._t_end = system.scene.solver.t_end
            start = 0
            for body_id, _coords, rates in system.dof_labels:
                owners += [len(self._rate_slices)] * len(rates)
                self._rate_slices.append((body_id, slice(start, start + len(rates)), tuple(rates)))
                start += len(rates)
        self._rate_owner = np.array(owners, dtype=int)
        self._show_view("top" if system is not None and system.scene.view == "top" else "side")
        self._reserve_jump_legend(system)
        self._redraw_timer.start()

    def _reserve_jump_legend(self, system: System | None) -> None:
        """Give the jump plot's legend, from the run's start, the height of all its entries.

        Its entries come with the impacts, one series per body (an axle cart: five),
        up to ``LEGEND_LIMIT``. A legend taller than its plot's row made the row taller
        and the other four shorter, which re-rendered all five plots in one paint: four
        times in the first seconds of the 200-bead chain (bench/gui.py). The other
        legends have few entries (the energy's seven come at once) or, for the contact
        curves, no bound known before the contacts occur.
        """
        entries = 0
        if system is not None:
            entries = sum(
                len(CART_RATE_NAMES) if tuple(rates) == CART_RATE_NAMES else 1
                for _body, _coords, rates in system.dof_labels
            )
        self._reserved_entries[3] = min(entries, LEGEND_LIMIT)
        self._fit_legend_columns()

    def _row_height(self) -> float:
        """Each shown plot's even share of the panel's height, px (its row, legend beside)."""
        shown = sum(plot.isVisible() for plot in self.plots) or len(self.plots)
        return self.graphics.viewport().height() / shown

    def _fit_legend_columns(self) -> None:
        """Lay each legend out in as many columns as its entries need to fit its plot's row.

        The entries counted are those it has or, for the energy (seven at once) and the
        jump legend (one per body, ``_reserve_jump_legend``), those it will have, whose
        height it keeps from the start: the layout does not move as they come.
        """
        row = self._row_height()
        for index, legend in enumerate(self._legends):
            entries = max(len(legend.items), self._reserved_entries[index])
            columns = legend_columns(entries, row, self._least_columns[index])
            # no wider than the panel has room for: a legend then taller than its row makes
            # the row taller, where one wider than the panel was cut at its edge
            columns = max(self._least_columns[index], min(columns, self._widest_columns(legend)))
            self._set_legend_columns(index, columns)
            rows = math.ceil(self._reserved_entries[index] / columns)
            legend.setMinimumHeight(legend_height(rows) if rows else 0.0)

    def _widest_columns(self, legend: pg.LegendItem) -> int:
        """Columns of ``legend``'s entries that fit ``LEGEND_WIDTH_SHARE`` of the panel's width."""
        font = QFont()
        font.setPointSizeF(float(str(legend.opts["labelTextSize"]).removesuffix("pt")))
        metrics = QFontMetricsF(font)
        texts = [label.text for _sample, label in legend.items]
        entry = max(map(metrics.horizontalAdvance, texts), default=0.0) + LEGEND_ENTRY_EXTRA_PX
        room = max(legend.minimumWidth(), LEGEND_WIDTH_SHARE * self.graphics.viewport().width())
        return max(1, math.floor(room / entry))

    def _set_legend_columns(self, index: int, columns: int) -> None:
        """Give legend ``index`` ``columns`` columns, its entries laid out afresh in them."""
        legend = self._legends[index]
        if legend.columnCount == columns:
            return
        refill_legend(
            legend, [(sample.item, label.text) for sample, label in legend.items], columns
        )

    def resizeEvent(self, event: Any) -> None:
        """A new height may fit the legends in fewer or need more columns."""
        super().resizeEvent(event)
        self._fit_legend_columns()

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
        self._batches += 1

    def _add_event(self, event: Event) -> None:
        if event.type not in JUMP_TYPES:
            return
        if event.type == "impulse":
            self._impulses.append("applied |S|", event.t, event.normal_impulse)
        else:
            self._impulses.append("normal", event.t, event.normal_impulse)
            if event.tangent_impulse != 0.0:
                self._impulses.append("tangent", event.t, event.tangent_impulse)
        if event.v_minus is None or event.v_plus is None:
            return
        jump = np.asarray(event.v_plus) - np.asarray(event.v_minus)
        # only the bodies with a rate that jumped (a wheel's |Δ| > 1e-12 needs a
        # component above 1e-12/√2): a 200-bead chain's impact touches two or three
        if len(jump) != len(self._rate_owner):
            return
        moved = np.unique(self._rate_owner[np.abs(jump) > 0.5e-12])
        for owner in moved.tolist():
            body_id, rates, names = self._rate_slices[owner]
            for name, value in _jump_values(jump[rates], names):
                if abs(value) > 1e-12:
                    self._jumps.append(f"{body_id}{name}", event.t, value)

    @Slot()
    def _on_redraw_timer(self) -> None:
        """One part of a redraw per tick; clean after a whole cycle without new batches."""
        if not self._dirty:
            return
        if self._next_part == 0:
            self._cycle_batches = self._batches
        self._resume_auto_ranged_views()
        draw, plots = self._parts[self._next_part]
        self._catch_up_time_axis(plots)
        entries = self._legend_entries()
        done = draw(time.perf_counter() + REDRAW_SLICE_S)
        self._fit_ranges(plots, streaming=True)
        self._fit_axis_width()
        if self._until is not None:
            self._show_legend_entries()
        self._place_legends(entries)
        if not done:  # the same part goes on at the next tick
            return
        self._next_part = (self._next_part + 1) % len(self._parts)
        if self._next_part == 0 and self._batches == self._cycle_batches:
            self._dirty = False

    def _legend_entries(self) -> list[int]:
        """The number of entries of each legend."""
        return [len(legend.items) for legend in self._legends]

    def _place_legends(self, entries: list[int]) -> None:
        """Lay the legends out now if their entries changed since ``entries``.

        A legend given its first entries sat at the panel's top left corner, over
        the λ plot's axis, until the layout's own turn came: a paint in between
        showed it there (seen in a live wheel run under Xvfb).
        """
        if self._legend_entries() != entries:
            self._fit_legend_columns()
            self.graphics.ci.layout.activate()

    def finish(self) -> None:
        """The run has ended: the energy curves take every frame and the time axis fits them
        now; the contact curves and the stems follow with their parts of the redraw.

        They follow on the next ticks of the redraw timer, as while streaming, each
        with its plots' time axis: a full ``redraw`` at the end of the paper-004
        wheel's run (1e5 frames) took 15-17 ms of the GUI thread and re-rendered all
        five plots in the same paint (another 15 ms), in one gap between two frames
        drawn (bench/gui.py).
        """
        self._resume_auto_ranged_views()
        entries = self._legend_entries()
        if self._follow_x:
            self._fit_time_axis(streaming=False, staggered=True)
        self._draw_energy(None)
        self._fit_ranges((self.energy_plot,))
        self._fit_axis_width()
        if self._until is not None:
            self._show_legend_entries()
        self._place_legends(entries)
        self._dirty = True
        self._next_part = 1
        self._cycle_batches = self._batches
        if self._trajectory is not None:
            self._redraw_timer.start()

    @property
    def is_drawn(self) -> bool:
        """True when every curve holds all the data gathered (no part of a redraw is due)."""
        return not self._dirty

    def redraw(self) -> None:
        """Push all the data gathered so far into the curves and fit the ranges, now."""
        self._dirty = False
        self._next_part = 0
        self._resume_auto_ranged_views()
        entries = self._legend_entries()
        for draw, _plots in self._parts:
            draw(None)
        self._fit_ranges()
        self._catch_up_time_axis(self.plots)
        self._fit_axis_width()
        if self._until is not None:
            self._show_legend_entries()
        self._place_legends(entries)

    def _draw_contacts(self, deadline: float | None) -> bool:
        """The contact curves with new samples, until ``deadline`` (True: all drawn)."""
        drawn = False
        for index, (key, series) in enumerate(self._contacts.items()):
            if len(series.lam) == series.shown:
                continue
            if drawn and deadline is not None and time.perf_counter() > deadline:
                return False
            drawn = True
            self._draw_contact(key, index, series)
        return True

    def _draw_stems(self, deadline: float | None) -> bool:
        """The stem groups with new stems (all after a change of view), until ``deadline``."""
        plots = (self._jumps, self._impulses)
        return all([stems.draw(self._bounds[stems.plot], deadline) for stems in plots])

    def _draw_energy(self, deadline: float | None) -> bool:
        """The energy curves with the frames so far, until ``deadline`` (True: all drawn).

        A ``setData`` cost pyqtgraph O(frames) (bounds, downsampling: 3 ms per curve
        at 3e5 frames, 21 ms for the seven; ``PeakCurve`` now reads only the new
        frames, except after a change of the time range), so a streaming tick sets the
        curves one by one and the rest follow on the next ticks, all with the
        frames there were when the first was set; a full redraw (no deadline)
        sets them all with every frame.
        """
        if self._trajectory is None:
            return True
        count, start = len(self._trajectory), self._energy_gathered
        if count > start and (deadline is None or not self._energy_pending):
            t = self._trajectory.times()
            energies = self._trajectory.energies()
            total, dissipated, work_in = energies[start:count, 3:].T
            self._balance.extend(t[start:count], total + dissipated - work_in)
            bounds = self._bounds[self.energy_plot]
            bounds.include(energies[start:count])
            bounds.include(self._balance.data()[1][start:count])
            self._energy_gathered = count
            self._energy_pending = [name for name, _ in ENERGY_TERMS]
        count = self._energy_gathered
        t = self._trajectory.times()[:count]
        energies = self._trajectory.energies()[:count]
        columns = dict(zip(CURVE_OF_ENERGY_COLUMN, energies.T, strict=True))
        columns["balance"] = self._balance.data()[1][:count]
        drawn = False
        while self._energy_pending:
            if drawn and deadline is not None and time.perf_counter() > deadline:
                return False
            name = self._energy_pending.pop(0)
            self.energy_curves[name].setData(t, columns[name])
            drawn = True
        return True

    def _draw_contact(self, key: tuple[str, str], index: int, series: _ContactSeries) -> None:
        count = len(series.lam)
        if count == series.shown:
            return
        if series.curves is None:
            name = contact_name(*key) if index < LEGEND_LIMIT else None
            pen = pg.mkPen(pg.intColor(index, hues=9, minValue=120), width=1.5)
            series.curves = self.contact_curves[key] = (
                self._add_curve(self.lambda_plot, name=name, pen=pen),
                self._add_curve(self.tau_plot, name=name, pen=pen),
            )
        for curve, points, plot in (
            (series.curves[0], series.lam, self.lambda_plot),
            (series.curves[1], series.tau, self.tau_plot),
        ):
            x, y = points.data()
            self._bounds[plot].include(y[series.shown :])
            if plot is self.lambda_plot:
                self._bounds[plot].include(np.zeros(1))  # λ ≥ 0: its axis always shows 0
            curve.setData(x, y)
        series.shown = count

    # ---------------------------------------------------------------- ranges

    def _line_options(self, plot: pg.PlotItem) -> dict[str, Any]:
        """Options of a new curve of ``plot``: no far-off limit while the panel fits its range."""
        limit = None if self._follow_y.get(plot, True) else FAR_OFF_LIMIT
        return {**_LINE_OPTIONS, "dynamicRangeLimit": limit}

    def _follow_values(self, plot: pg.PlotItem, follow: bool) -> None:
        """Fit ``plot``'s value range to the data (True) or leave it to the user (False)."""
        self._follow_y[plot] = follow
        limit = None if follow else FAR_OFF_LIMIT
        for item in plot.listDataItems():
            if isinstance(item, pg.PlotDataItem) and item.opts["dynamicRangeLimit"] != limit:
                item.setDynamicRangeLimit(limit)

    def _resume_auto_ranged_views(self) -> None:
        """A plot's "A" button turned pyqtgraph's auto-range on: follow the data there again."""
        for plot in self.plots:
            auto_x, auto_y = plot.vb.autoRangeEnabled()
            if not (auto_x or auto_y):
                continue
            plot.vb.disableAutoRange()
            if auto_x:
                self._follow_x, self._x_range = True, None
            if auto_y:
                self._follow_values(plot, True)
                self._y_ranges[plot] = None

    @Slot(object)
    def _on_range_changed_manually(self, mask: list[bool]) -> None:
        """Zoomed or panned by hand: stop following the data on those axes of that plot."""
        view = self.sender()
        if mask[0]:
            self._follow_x = False
        if mask[1]:
            for plot in self.plots:
                if plot.vb is view:
                    self._follow_values(plot, False)

    def _fit_ranges(
        self, plots: tuple[pg.PlotItem, ...] | None = None, streaming: bool = False
    ) -> None:
        """Set the ranges that no longer show all the data (from running bounds: no scans).

        ``plots`` limits the value ranges fitted to those plots (default: all);
        the time range, shared by every plot, is fitted with the energy plot
        (``streaming``: as ``_fit_time_axis`` says).
        """
        plots = self.plots if plots is None else plots
        if self.energy_plot in plots and self._follow_x:
            self._fit_time_axis(streaming=streaming)
        for plot in plots:
            if not self._follow_y[plot]:
                continue
            bounds = self._bounds[plot] if self._until is None else self._until_bounds.get(plot)
            if bounds is None:
                continue
            y_range = _grown_range(self._y_ranges[plot], bounds)
            if y_range is not None and y_range != self._y_ranges[plot]:
                plot.setYRange(*y_range, padding=0)
                self._y_ranges[plot] = y_range

    def _fit_axis_width(self) -> None:
        """One width for every value axis, widened when a tick text no longer fits.

        A fixed width keeps the layout (and every cached axis and curve) still
        when tick texts change, and lines the plots up under one time axis.
        """
        needed = max(
            axis.textWidth
            + axis.style["tickTextOffset"][0]
            + max(0, axis.style["tickLength"])
            + 0.8 * axis.label.boundingRect().height()
            for axis in (plot.getAxis("left") for plot in self.plots)
        )
        if needed > self._axis_width:
            self._axis_width = math.ceil(needed) + 6 + AXIS_HEADROOM
            for plot in self.plots:
                plot.getAxis("left").setWidth(self._axis_width)

    def _fit_time_axis(self, streaming: bool, staggered: bool | None = None) -> None:
        """Set the time range to show every frame, from the first to a round end.

        A step of the time range re-renders every plot (10–20 ms, more while
        the solver holds the GIL half the time). While a run streams in
        (``streaming``), the range therefore steps at most every
        ``TIME_AXIS_STEP_INTERVAL_S`` of wall-clock time — sooner only if
        the playback cursor has left it — and each step reaches as far as
        the data are expected to grow until the next one, at the rate they
        grew since the last. Frames computed past the range meanwhile are
        clipped, for a second at most. Otherwise the range fits the data
        exactly. ``staggered`` (default: ``streaming``): the other plots
        follow with their parts of the redraw (``_catch_up_time_axis``).
        """
        staggered = streaming if staggered is None else staggered
        if self._trajectory is None or len(self._trajectory) < 2:
            return
        times = self._trajectory.times()
        start, last = float(times[0]), float(times[-1])
        current, now = self._x_range, time.monotonic()
        growth = 0.0
        if streaming:
            if current is not None and current[0] == start:
                if last <= current[1]:
                    return  # every frame is in view
                recent = now - self._x_stepped[0] < TIME_AXIS_STEP_INTERVAL_S
                if recent and self._shown_time <= current[1]:
                    return  # the newest frames wait (clipped) for the next step
            stepped_at, end_then = self._x_stepped  # the last step, or the run's start
            grown = last - (start if end_then is None else end_then)
            growth = max(0.0, grown) / max(now - stepped_at, 1e-3)
        x_range = (start, self._time_axis_end(start, last, growth * TIME_AXIS_STEP_INTERVAL_S))
        self._x_stepped = (now, last)
        if x_range != current and x_range[1] > x_range[0]:
            if staggered:  # the other plots follow: _catch_up_time_axis, _catch_up_a_group
                self._frames_since_step = 0
                for plot in self.plots:
                    if plot is not self.energy_plot:
                        plot.vb.blockLink(True)
            self._set_time_range(*x_range)
            self._x_range = x_range

    def _set_time_range(self, start: float, end: float) -> None:
        """Show ``start`` to ``end`` (s) on the time axis, with ``TIME_MARGIN`` either side."""
        margin = TIME_MARGIN * (end - start)
        self.energy_plot.setXRange(start - margin, end + margin, padding=0)

    def _catch_up_time_axis(self, plots: tuple[pg.PlotItem, ...]) -> None:
        """Give ``plots`` the energy plot's time range if a streaming step left them behind.

        At a step of the time range a plot re-renders all it shows (axes, grid,
        curves: ~8 ms); the five plots stepping in one paint made a 35–40 ms
        stop, the longest of a streaming run. So while a run streams in, the
        energy plot steps alone (its links blocked) and the λ/τ plots and the
        stem plots follow with their own part of the redraw, one and two timer
        ticks later; a full ``redraw`` lines them all up at once.
        """
        for plot in plots:
            if plot is not self.energy_plot and plot.vb.linksBlocked:
                plot.vb.blockLink(False)
                plot.vb.linkedXChanged()

    def _time_axis_end(self, start: float, last: float, ahead: float = 0.0) -> float:
        """End of the time axis: a round 1, 2, 5 × 10^k s past ``start`` and past ``last +
        ahead`` (at least ``TIME_AXIS_MIN_SPAN_S``), at most the run's end."""
        if last <= start:
            return last
        end = start + max(nice_ceil(last + ahead - start), TIME_AXIS_MIN_SPAN_S)
        if self._t_end is not None and last <= self._t_end:
            end = min(end, self._t_end)
        return end

    # ----------------------------------------------------------- honesty

    def set_until(self, t: float | None) -> None:
        """Playback honesty: value ranges and legends from the data up to ``t`` (s) only.

        ``None`` shows everything again. While ``t`` moves (the playback), the
        ranges and legends follow it every ``HONEST_REFIT_MS``: nothing in
        them hints at what the solver computed beyond the time shown.
        """
        if t == self._until:
            return
        toggled = (t is None) != (self._until is None)
        self._until = t
        if toggled:
            self._refit_until()
        elif not self._until_timer.isActive():
            self._until_timer.start()

    @Slot()
    def _refit_until(self) -> None:
        """Fit the value ranges (afresh: they may shrink) and the legends to ``_until``."""
        until = self._until
        self._until_bounds = {}
        if until is not None:
            self._until_bounds = {plot: self._bounds_until(plot, until) for plot in self.plots}
        for plot in self.plots:
            if not self._follow_y[plot]:
                continue
            self._y_ranges[plot] = None
            bounds = self._bounds[plot] if until is None else self._until_bounds[plot]
            if bounds.low > bounds.high:  # nothing to show yet: the empty plot's range
                plot.setYRange(0.0, 1.0, padding=0)
                self._y_ranges[plot] = (0.0, 1.0)
        self._fit_ranges()
        self._show_legend_entries()

    def _bounds_until(self, plot: pg.PlotItem, until: float) -> _Bounds:
        """The bounds of what ``plot`` shows at times ≤ ``until`` (s)."""
        bounds = _Bounds()

        def include(x: np.ndarray, y: np.ndarray, *extra: float) -> None:
            shown = y[: int(np.searchsorted(x, until, side="right"))]
            if len(shown):  # the axis shows 0 (λ, stems) once there is something to show
                bounds.include(np.append(shown, extra))

        if plot is self.energy_plot:
            if self._trajectory is not None and self._energy_gathered:
                count = self._energy_gathered
                t = self._trajectory.times()[:count]
                k = int(np.searchsorted(t, until, side="right"))
                bounds.include(self._trajectory.energies()[:k])
                bounds.include(self._balance.data()[1][:k])
        elif plot in (self.lambda_plot, self.tau_plot):
            for series in self._contacts.values():
                points = series.lam if plot is self.lambda_plot else series.tau
                include(*points.data(), *((0.0,) if plot is self.lambda_plot else ()))
        else:
            stems = self._jumps if plot is self.jump_plot else self._impulses
            for points in stems.series.values():
                include(*points.data(), 0.0)
        return bounds

    def _show_legend_entries(self) -> None:
        """Legend entries for the curves with data so far only (all without honesty)."""
        until = math.inf if self._until is None else self._until
        for plot in self.plots:
            legend = plot.legend
            wanted = [
                item for item in plot.listDataItems() if item.name() and _starts_by(item, until)
            ]
            if [sample.item for sample, _label in legend.items] != wanted:
                refill_legend(legend, [(item, item.name()) for item in wanted])

    # ---------------------------------------------------------------- cursor

    @Slot(object, object)
    def _on_y_range_changed(self, view: pg.ViewBox, y_range: tuple[float, float]) -> None:
        """Keep the cursor of ``view`` from the bottom to the top of its value range."""
        self._cursors[view].setLine(0.0, y_range[0], 0.0, y_range[1])

    def set_cursor(self, t: float) -> None:
        """Move the playback-time cursor to ``t`` (s) on every plot.

        Called at display rate: the cursors move only when ``t`` falls in
        another pixel column of the plots than where they are drawn.
        """
        self._shown_time = t
        self._draw_due(t)
        self._catch_up_a_group()
        view = self.energy_plot.vb
        (x0, x1), width = view.viewRange()[0], view.width()
        if x1 > x0 and width > 0:
            scale = width / (x1 - x0)
            if round((t - x0) * scale) == round((self.cursor_time() - x0) * scale):
                return
        for cursor in self._cursors.values():
            cursor.setPos(t, 0.0)

    def _catch_up_a_group(self) -> None:
        """Two frames after a staggered step of the time axis, the λ/τ plots take it; two
        frames later, the stem plots.

        Each group re-renders in a paint of its own, as with the parts of the
        redraw, but waits frames, not the round of the parts (250 ms or more):
        meanwhile the energy plot, which has no tick labels, showed its curves
        and its cursor on another time range than the labels below (the energy
        on 0-10 s, the cursor at 0.188 s drawn where 0.019 s is labelled).
        """
        self._frames_since_step += 1
        if self._frames_since_step < CATCH_UP_FRAMES:
            return
        for _draw, plots in self._parts[1:]:
            if any(plot.vb.linksBlocked for plot in plots):
                self._catch_up_time_axis(plots)
                self._frames_since_step = 0
                return

    def _parts_due(self, t: float) -> list[int]:
        """The parts of the redraw (indices in ``_parts``) holding back data at or before ``t``
        that a screen can show.

        The round of parts takes ``REDRAW_INTERVAL_MS`` or more, and at a run's start
        the solver is ahead of the screen: the wheel's first impacts were in the event
        log while their stems, the λ/τ curves and the energy's last 0.1 s waited for
        their turn (a live paper-004 wheel run under Xvfb, at 3114e2d too).

        Parts drawn at the time shown ``t0`` hold every sample gathered then, so what
        they hold back lies after ``t0``: while ``t`` is within one pixel column of
        the time axis from ``t0`` (``_column_s``) that is in the cursor's column or
        the one before, and the parts wait, except the first stems of a group that
        shows none yet (``_StemPlot.first_in_view``): the paper-004 wheel's first
        impact waited while the cursor crossed a column of a 0-100 s time axis
        (0.17 s, 10 frames) with its row in the event log. Whatever is due, every
        part with data waiting is drawn in the same frame (a frame that draws costs
        a repaint of its plots, 2-3 ms, whatever it draws). At the solver's front (a
        200-bead chain slower than real time, a quarter of a column a frame) drawing
        every frame cost 3.4 of 8.8 ms of the GUI thread a frame (bench/gui.py's
        front_cost at 0.25).
        """
        reached = []
        if self._trajectory is not None:
            gathered = self._energy_gathered
            times = self._trajectory.times()
            if len(times) > gathered and times[gathered] <= t:
                reached.append(0)
        for series in self._contacts.values():
            x, _ = series.lam.data()
            if len(x) > series.shown and x[series.shown] <= t:
                reached.append(1)
                break
        for stems in (self._jumps, self._impulses):
            if any(
                len(group.points) > group.shown and group.points.data()[0][group.shown] <= t
                for group in stems.groups()
            ):
                reached.append(2)
                break
        left = self._follow_x and self._x_range is not None and t > self._x_range[1]
        if self._trajectory is not None and (left or self._energy_pending):
            return sorted({0, *reached})  # the time shown has left the time axis
        if t - self._drawn_at >= self._column_s() or (
            2 in reached and any(stems.first_in_view(t) for stems in (self._jumps, self._impulses))
        ):
            return reached
        return []

    def _column_s(self) -> float:
        """The time one pixel column of the time axis spans, s (0 before the plots are laid out)."""
        view = self.energy_plot.vb
        (x0, x1), width = view.viewRange()[0], view.width()
        return (x1 - x0) / width if width > 0 and x1 > x0 else 0.0

    def _draw_due(self, t: float) -> None:
        """Draw now the parts with data at or before the time shown ``t`` (s) not yet drawn.

        The window never hides what it has: at every frame drawn each plot shows
        its data up to the time shown, or to within one pixel column of it
        (``_parts_due``). A part runs out of turn, its plots' time axis
        caught up: the energy curves all (sliced, the total curve was left behind),
        the contact curves and the stem groups re-binned for a new time range within
        ``REDRAW_SLICE_S`` (the rest at the next frames; new stems are always drawn:
        a 200-bead chain's 17 groups re-binned at once took 36 ms). While the
        solver is ahead of the screen (as usual) this happens at a run's start
        only; while the screen waits for the solver it happens once a pixel
        column of the time shown.
        """
        due = self._parts_due(t)
        if not due:
            return
        self._drawn_at = t
        self._resume_auto_ranged_views()
        entries = self._legend_entries()
        for index in due:
            draw, plots = self._parts[index]
            self._catch_up_time_axis(plots)
            draw(None if index == 0 else time.perf_counter() + REDRAW_SLICE_S)
            self._fit_ranges(plots, streaming=True)
        self._fit_axis_width()
        if self._until is not None:
            self._show_legend_entries()
        self._place_legends(entries)

    def cursor_time(self) -> float:
        """Where the cursors are drawn, s."""
        return next(iter(self._cursors.values())).x()

    # ---------------------------------------------------------------- queries

    def jump_data(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The velocity-jump stems so far, ``name → (times, Δv)``; names as in the legend."""
        return {name: series.data() for name, series in self._jumps.series.items()}

    def impulse_data(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The impulse stems so far, ``"normal"`` / ``"tangent"`` / ``"applied |S|"`` → (t, N·s)."""
        return {name: series.data() for name, series in self._impulses.series.items()}

    def point_count(self) -> int:
        """Points gathered so far over every curve (for tests and the status bar)."""
        energy = len(self._trajectory) * len(ENERGY_TERMS) if self._trajectory is not None else 0
        contacts = sum(len(series.lam) for series in self._contacts.values())
        return energy + contacts + sum(len(series) for series in self._jumps.series.values())

    def export_png(self, path: str) -> bool:
        """Save the plots as a PNG image; True on success."""
        self.redraw()
        return self.graphics.grab().save(path, "PNG")
