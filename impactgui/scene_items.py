"""Graphics items that draw a scene on the canvas: boundaries, bodies, springs, arrows, flashes.

Coordinates are the scene's (m, y up); the canvas's pyqtgraph ViewBox maps
them to pixels. Items that move during an animation (bodies, springs,
arrows, trails, flashes) are created once per scene and updated in place
(``setPos``/``setRotation``/``setData``), never re-created per frame. Arrow
heads, handles and flashes are sized in pixels so they read the same at any
zoom. Whatever there can be many of per frame is batched into one item
drawn with a few painter calls: all beads (``BeadField``), all arrows
(``ArrowField``), all trails (``TrailField``), one rail line per rail height.
"""

from __future__ import annotations

import copy
import functools
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen, QPixmap, QTransform
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from impactgui import soft_look
from impactgui.device_pixels import to_device
from impactgui.spring_field import SpringField, SpringShape

BACKGROUND = QColor("#ffffff")
BOUNDARY_COLOUR = QColor("#37474f")
WHEEL_COLOUR = QColor("#1565c0")
BEAD_COLOUR = QColor("#ef6c00")
CART_COLOUR = QColor("#6a1b9a")
SPRING_COLOUR = QColor("#2e7d32")
SELECTION_COLOUR = QColor("#ffb300")
VELOCITY_COLOUR = QColor("#d32f2f")
IMPULSE_COLOUR = QColor("#ad1457")
NORMAL_FORCE_COLOUR = QColor("#00838f")
FRICTION_FORCE_COLOUR = QColor("#f9a825")
TRAIL_COLOUR = QColor(21, 101, 192, 160)
FLASH_COLOUR = QColor("#ff1744")
PREVIEW_COLOUR = QColor("#7e57c2")
RAIL_COLOUR = QColor(239, 108, 0, 120)

BOUNDARY_WIDTH = 4.0
"""Line width of boundaries, px."""
FLASH_DURATION = 0.3
"""How long an impact flash lasts, s (wall clock)."""
FLASHES_MAX = 8
"""At most this many flashes are alive at once (the newest); a chain of beads
colliding everywhere would otherwise draw hundreds of rings every frame."""
FLASH_SHADES = 16
"""Fading steps of a flash (pens made once, not per ring and frame)."""
ARC_SAMPLES_PER_TURN = 180


ARROW_HEAD_PX = 10.0
"""Length of an arrow head, px (times the line scale)."""
_line_scale = 1.0
"""Factor on every line width, marker and arrow head (``set_line_scale``)."""


def set_line_scale(scale: float) -> None:
    """Draw lines, arrow heads and flashes ``scale`` times as wide from now on (presentation mode).

    Items already drawn keep their pens: the canvas builds its layer afresh
    (``SceneCanvas.restyle``).
    """
    global _line_scale
    _line_scale = float(scale)
    ArrowField.head_px = ARROW_HEAD_PX * _line_scale
    _flash_pens.cache_clear()


def line_scale() -> float:
    """The factor on line widths set by ``set_line_scale`` (1 by default)."""
    return _line_scale


def _pen(colour: QColor, width: float = 1.5, style: Qt.PenStyle = Qt.PenStyle.SolidLine) -> QPen:
    """A cosmetic pen (width in px times the line scale, independent of zoom)."""
    pen = QPen(colour, width * _line_scale, style)
    pen.setCosmetic(True)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    return pen


# ------------------------------------------------------------------ geometry


def arc_sweep_deg(start_deg: float, end_deg: float) -> float:
    """Angle swept counter-clockwise from ``start_deg`` to ``end_deg``, degrees in [0, 360].

    The scene format's convention (as ``solver.geometry.Arc``): start 180,
    end 0 is the lower half circle; a nonzero multiple of 360 is the full
    circle; equal angles sweep 0.
    """
    raw = float(end_deg) - float(start_deg)
    sweep = raw % 360.0
    if min(sweep, 360.0 - sweep) < 1e-9:
        return 0.0 if abs(raw) < 1e-9 else 360.0
    return sweep


def arc_points(
    center: Sequence[float], radius: float, start_deg: float, end_deg: float
) -> np.ndarray:
    """Points along an arc (shape (n, 2), m), counter-clockwise from start to end angle."""
    start = float(start_deg)
    sweep = arc_sweep_deg(start, end_deg)
    n = max(8, int(ARC_SAMPLES_PER_TURN * sweep / 360.0) + 1)
    theta = np.radians(np.linspace(start, start + sweep, n))
    return np.column_stack((center[0] + radius * np.cos(theta), center[1] + radius * np.sin(theta)))


def boundary_points(boundary: Mapping[str, Any]) -> np.ndarray:
    """The polyline that draws ``boundary`` (a scene-file dict), shape (n, 2), m."""
    kind = boundary.get("type")
    if kind == "segment":
        return np.array([boundary["a"], boundary["b"]], dtype=float)
    if kind == "polyline":
        return np.array(boundary["points"], dtype=float).reshape(-1, 2)
    return arc_points(
        boundary["center"], boundary["radius"], boundary["start_deg"], boundary["end_deg"]
    )


def distance_to_polyline(p: Sequence[float], points: np.ndarray) -> float:
    """Distance (m) from ``p`` to the polyline through ``points``."""
    if len(points) == 1:
        return float(math.dist(p, points[0]))
    a, b = points[:-1], points[1:]
    ab = b - a
    length2 = np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-300)
    s = np.clip(np.einsum("ij,ij->i", np.asarray(p) - a, ab) / length2, 0.0, 1.0)
    nearest = a + s[:, None] * ab
    return float(np.min(np.hypot(*(nearest - np.asarray(p)).T)))


def _finite_point(value: Any) -> tuple[float, float] | None:
    """``value`` as a point ``(x, y)`` (m), or None when it is not a pair of finite numbers."""
    try:
        x, y = (float(c) for c in value)
    except (TypeError, ValueError):
        return None
    return (x, y) if math.isfinite(x) and math.isfinite(y) else None


# ------------------------------------------------------------- body items


class DiskItem(QGraphicsItem):
    """A disk of ``radius`` (m) drawn around its local origin; wheels get a spoke.

    Place it with ``setPos(x, y)``; ``setRotation(degrees(phi))`` turns the
    spoke counter-clockwise in the scene (the view flips y).
    """

    def __init__(self, radius: float, colour: QColor, spoke: bool) -> None:
        super().__init__()
        self.radius = float(radius)
        self._colour = colour
        self._spoke = spoke
        self.selected = False
        fill = QColor(colour)
        fill.setAlpha(45)
        self._fill = QBrush(fill)
        self._centre = QBrush(colour)
        self._outline = _pen(colour, 2.0)
        self._selected_outline = _pen(SELECTION_COLOUR, 3.5)
        r = self.radius * 1.05
        self._bounds = QRectF(-r, -r, 2 * r, 2 * r)

    def spoke_end(self) -> QPointF:
        """The spoke's rim end in the parent's (scene) coordinates, m."""
        return self.mapToParent(QPointF(self.radius, 0.0))

    def set_selected(self, selected: bool) -> None:
        """Draw the selection outline or not."""
        if selected != self.selected:
            self.selected = selected
            self.update()

    def boundingRect(self) -> QRectF:
        """Local bounds: the disk (made once: Qt asks several times per frame)."""
        return self._bounds

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        """Disk, centre dot and spoke."""
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(self._selected_outline if self.selected else self._outline)
        painter.setBrush(self._fill)
        r = self.radius
        centre = QPointF(0.0, 0.0)
        painter.drawEllipse(centre, r, r)
        painter.setBrush(self._centre)
        painter.drawEllipse(centre, 0.07 * r, 0.07 * r)
        if self._spoke:
            painter.setPen(self._outline)
            painter.drawLine(centre, QPointF(r, 0.0))


class CartItem(QGraphicsItem):
    """An axle cart seen from above: an axle of half-length ``l`` with a wheel at each end.

    Local frame: the axle along x from −l (wheel A) to +l (wheel B); each
    wheel is a thin rectangle 2r long across the axle (its rolling
    direction). A tick on each wheel moves with its angle θ so rolling shows.
    Place with ``setPos(xC, yC)`` and ``setRotation(degrees(phi))``.
    """

    def __init__(self, half_length: float, wheel_radius: float) -> None:
        super().__init__()
        self.half_length = float(half_length)
        self.wheel_radius = float(wheel_radius)
        self.wheel_angles = (0.0, 0.0)
        self.selected = False

    def set_wheel_angles(self, theta_a: float, theta_b: float) -> None:
        """Turn the wheel ticks to ``θ_A``, ``θ_B`` (rad)."""
        self.wheel_angles = (float(theta_a), float(theta_b))
        self.update()

    def set_selected(self, selected: bool) -> None:
        """Draw the selection outline or not."""
        if selected != self.selected:
            self.selected = selected
            self.update()

    def boundingRect(self) -> QRectF:
        """Local bounds: axle and wheels."""
        l, r = self.half_length, self.wheel_radius
        w = 0.3 * r
        return QRectF(-l - w, -r * 1.05, 2 * (l + w), 2.1 * r)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        """Axle, centre, the two wheels and their angle ticks."""
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        l, r = self.half_length, self.wheel_radius
        w = 0.25 * r
        colour = SELECTION_COLOUR if self.selected else CART_COLOUR
        painter.setPen(_pen(colour, 3.0))
        painter.drawLine(QPointF(-l, 0.0), QPointF(l, 0.0))
        painter.setBrush(QBrush(colour))
        painter.drawEllipse(QPointF(0.0, 0.0), 0.08 * r, 0.08 * r)
        fill = QColor(colour)
        fill.setAlpha(70)
        for x, theta in zip((-l, l), self.wheel_angles, strict=True):
            painter.setPen(_pen(colour, 2.0))
            painter.setBrush(QBrush(fill))
            painter.drawRect(QRectF(x - w / 2, -r, w, 2 * r))
            tick = r * math.cos(theta)
            painter.setPen(_pen(colour if math.sin(theta) >= 0 else fill, 4.0))
            painter.drawLine(QPointF(x - w, tick), QPointF(x + w, tick))


BEAD_SPRITE_MIN_PX = 3.0
"""A bead is drawn at least this wide, px, however far the view is zoomed out."""


class BeadField(pg.GraphicsObject):
    """Every bead of the scene, drawn by one item: one stamped picture per bead on screen.

    A bead looks as a ``DiskItem`` without spoke: a translucent disk with an
    outline and a centre dot (a selected bead: a wider outline in the
    selection colour). Each bead has a slot (``add``) and is moved with
    ``move`` — numbers in arrays, no Qt item per bead. ``paint`` maps the
    beads to pixels with numpy, leaves out those off-screen and stamps one
    picture, drawn once per size and look, at each of the others: the cost
    of a frame grows with the beads on screen, and one item means one call
    from Qt into Python (2000 bead items meant 2000 such calls, each waiting
    for the interpreter lock while the solver's thread held it).
    """

    def __init__(self) -> None:
        super().__init__()
        self._x = np.zeros(0)
        self._y = np.zeros(0)
        self._r = np.zeros(0)
        self._live = np.zeros(0, dtype=bool)
        self._selected = np.zeros(0, dtype=bool)
        self._free: list[int] = []
        self._bounds = QRectF()
        self._bounds_stale = False
        self._pixel = 0.0
        """The length of a pixel in scene units, m (set at each change of zoom)."""
        self._sprites: dict[tuple[float, bool, float, float], QPixmap] = {}

    # ----------------------------------------------------------- the beads

    def add(self, x: float, y: float, radius: float) -> int:
        """A new bead of ``radius`` at (x, y), m; returns its slot."""
        if not self._free:
            grown = max(16, 2 * len(self._x))
            self._free = list(range(grown - 1, len(self._x) - 1, -1))
            extra = grown - len(self._x)
            self._x = np.append(self._x, np.zeros(extra))
            self._y = np.append(self._y, np.zeros(extra))
            self._r = np.append(self._r, np.zeros(extra))
            self._live = np.append(self._live, np.zeros(extra, dtype=bool))
            self._selected = np.append(self._selected, np.zeros(extra, dtype=bool))
        slot = self._free.pop()
        self._x[slot], self._y[slot], self._r[slot] = x, y, radius
        self._live[slot] = True
        self._selected[slot] = False
        self._changed()
        return slot

    def remove(self, slot: int) -> None:
        """Forget the bead in ``slot``."""
        if self._live[slot]:
            self._live[slot] = False
            self._free.append(slot)
            self._changed()

    def move(self, slot: int, x: float, y: float) -> None:
        """Put the bead in ``slot`` at (x, y), m."""
        self._x[slot], self._y[slot] = x, y
        self._changed()

    def move_many(self, slots: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
        """Put the beads in ``slots`` at ``(x, y)`` (arrays, m), all at once."""
        self._x[slots], self._y[slots] = x, y
        self._changed()

    def position(self, slot: int) -> tuple[float, float]:
        """Where the bead in ``slot`` is drawn, m."""
        return float(self._x[slot]), float(self._y[slot])

    def positions(self, slots: np.ndarray) -> np.ndarray:
        """Where the beads in ``slots`` are drawn, shape (n, 2), m."""
        return np.column_stack((self._x[slots], self._y[slots]))

    def set_selected(self, slot: int, selected: bool) -> None:
        """Draw the bead in ``slot`` with the selection outline or not."""
        self._selected[slot] = selected
        self.update()

    def is_selected(self, slot: int) -> bool:
        """True when the bead in ``slot`` is drawn as selected."""
        return bool(self._selected[slot])

    @property
    def count(self) -> int:
        """Number of beads."""
        return int(self._live.sum())

    def _changed(self) -> None:
        if not self._bounds_stale:
            self.prepareGeometryChange()
            self._bounds_stale = True
        self.update()

    # ------------------------------------------------------------ drawing

    def viewTransformChanged(self) -> None:
        """The pixel margin changes size in scene units with the zoom."""
        self.prepareGeometryChange()
        self._pixel = self.pixelLength(pg.Point(1, 0)) or 0.0
        self._bounds_stale = True

    def boundingRect(self) -> QRectF:
        """The beads' disks plus a few pixels (made once per change: Qt asks often)."""
        if self._bounds_stale:
            self._bounds_stale = False
            live = self._live
            if live.any():
                r = self._r[live]
                m = (BEAD_SPRITE_MIN_PX + 4.0 * _line_scale) * self._pixel  # outline, sprite
                x0, x1 = float((self._x[live] - r).min()), float((self._x[live] + r).max())
                y0, y1 = float((self._y[live] - r).min()), float((self._y[live] + r).max())
                self._bounds = QRectF(x0 - m, y0 - m, x1 - x0 + 2 * m, y1 - y0 + 2 * m)
            else:
                self._bounds = QRectF()
        return self._bounds

    def _sprite(self, diameter_px: float, selected: bool, ratio: float) -> QPixmap:
        """The picture of one bead ``diameter_px`` wide (device-independent px)."""
        key = (round(diameter_px * 2) / 2, selected, _line_scale, ratio)
        sprite = self._sprites.get(key)
        if sprite is not None:
            return sprite
        if len(self._sprites) > 64:
            self._sprites.clear()
        d = max(key[0], BEAD_SPRITE_MIN_PX)
        outline = _pen(SELECTION_COLOUR, 3.5) if selected else _pen(BEAD_COLOUR, 2.0)
        side = math.ceil(d + 2 * outline.widthF() + 2)
        sprite = QPixmap(round(side * ratio), round(side * ratio))
        sprite.setDevicePixelRatio(ratio)
        sprite.fill(Qt.GlobalColor.transparent)
        painter = QPainter(sprite)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        fill = QColor(BEAD_COLOUR)
        fill.setAlpha(45)
        centre = QPointF(side / 2, side / 2)
        painter.setPen(outline)
        painter.setBrush(QBrush(fill))
        painter.drawEllipse(centre, d / 2, d / 2)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QBrush(BEAD_COLOUR))
        dot = max(0.07 * d / 2, 1.0)
        painter.drawEllipse(centre, dot, dot)
        painter.end()
        self._sprites[key] = sprite
        return sprite

    def stamps(
        self, transform: QTransform, width: float, height: float
    ) -> list[tuple[float, bool, np.ndarray, np.ndarray]]:
        """Where to stamp which picture: ``(diameter px, selected, x px, y px)`` per look.

        ``transform`` maps scene metres to the pixels of a device ``width`` by
        ``height`` px; beads whose picture would fall wholly off it are left out.
        """
        live = np.flatnonzero(self._live)
        t = transform
        scale = math.hypot(t.m11(), t.m12())
        x, y, r = self._x[live], self._y[live], self._r[live]
        px, py = to_device(t, x, y)
        reach = r * scale + 4.0 * _line_scale + BEAD_SPRITE_MIN_PX
        on_screen = (px + reach >= 0) & (px - reach <= width)
        on_screen &= (py + reach >= 0) & (py - reach <= height)
        diameters = 2 * r[on_screen] * scale
        chosen = self._selected[live][on_screen]
        xs, ys = px[on_screen], py[on_screen]
        looks = []
        for diameter in np.unique(diameters).tolist():
            for selected in (False, True):
                group = (diameters == diameter) & (chosen == selected)
                if group.any():
                    looks.append((diameter, selected, xs[group], ys[group]))
        return looks

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        """Stamp a bead's picture at every bead on the device, in pixel coordinates."""
        if not self._live.any():
            return
        screen = painter.viewport()
        looks = self.stamps(painter.transform(), screen.width(), screen.height())
        if not looks:
            return
        device = painter.device()
        ratio = device.devicePixelRatioF() if device is not None else 1.0
        painter.save()
        painter.resetTransform()
        draw = painter.drawPixmap
        for diameter, selected, xs, ys in looks:
            sprite = self._sprite(diameter, selected, ratio)
            half = sprite.width() / ratio / 2
            for a, b in zip(
                np.rint(xs - half).astype(int).tolist(),
                np.rint(ys - half).astype(int).tolist(),
                strict=True,
            ):
                draw(a, b, sprite)
        painter.restore()


class BeadDrawing:
    """One bead of a ``BeadField``, with the calls the canvas makes on a body's drawing.

    Not a Qt item: ``pos``/``setPos`` read and move the bead's slot.
    """

    def __init__(self, field: BeadField, x: float, y: float, radius: float) -> None:
        self.field = field
        self.radius = float(radius)
        self.slot = field.add(x, y, radius)

    @property
    def selected(self) -> bool:
        """True when drawn with the selection outline."""
        return self.field.is_selected(self.slot)

    def set_selected(self, selected: bool) -> None:
        """Draw the selection outline or not."""
        self.field.set_selected(self.slot, selected)

    def pos(self) -> QPointF:
        """The bead's centre as drawn, m."""
        return QPointF(*self.field.position(self.slot))

    def setPos(self, x: float, y: float) -> None:
        """Move the bead's centre to (x, y), m."""
        self.field.move(self.slot, x, y)

    def remove(self) -> None:
        """Take the bead out of its field."""
        self.field.remove(self.slot)


# ---------------------------------------------------------- pixel-sized overlays


class _PixelOverlay(pg.GraphicsObject):
    """Base of overlays drawn in device pixels around anchor points given in scene units."""

    margin_px = 12.0

    def __init__(self) -> None:
        super().__init__()
        self._bounds: QRectF | None = None
        self._pixel: tuple[float, float] | None = None
        """The size of a pixel in scene units (x, y), worked out once per zoom."""

    def _set_bounds(self, xs: Iterable[float], ys: Iterable[float]) -> None:
        xs, ys = np.fromiter(xs, dtype=float), np.fromiter(ys, dtype=float)
        self.prepareGeometryChange()
        if xs.size:
            x0, y0 = float(xs.min()), float(ys.min())
            self._bounds = QRectF(x0, y0, float(xs.max()) - x0, float(ys.max()) - y0)
        else:
            self._bounds = None
        self.update()

    def viewTransformChanged(self) -> None:
        """The pixel margin changes size in scene units with the zoom."""
        self.prepareGeometryChange()
        self._pixel = None

    def boundingRect(self) -> QRectF:
        """The anchors' bounds plus a margin of ``margin_px`` pixels.

        Qt asks several times per paint; the pixel's size is worked out once per zoom.
        """
        if self._bounds is None:
            return QRectF()
        if self._pixel is None:
            self._pixel = (
                self.pixelLength(pg.Point(1, 0)) or 0.0,
                self.pixelLength(pg.Point(0, 1)) or 0.0,
            )
        px, py = self._pixel
        m = self.margin_px
        return self._bounds.adjusted(-m * px, -m * py, m * px, m * py)


Arrow = tuple[float, float, float, float, QColor]
"""An arrow ``(x0, y0, x1, y1, colour)`` from (x0, y0) to (x1, y1), m."""


class ArrowField(_PixelOverlay):
    """Any number of arrows, each a shaft in scene units with a head of fixed pixel size.

    All arrows of one colour are drawn as two paths (shafts, heads) built
    with numpy, so a frame with hundreds of arrows costs a few painter calls.
    """

    head_px = ARROW_HEAD_PX

    def __init__(self, width: float = 2.5) -> None:
        super().__init__()
        self._arrows: list[Arrow] = []
        self._ends = np.zeros((0, 4))
        self._groups: list[tuple[QPen, QBrush, np.ndarray]] = []
        self._width = width

    @property
    def arrows(self) -> list[Arrow]:
        """The arrows drawn now."""
        return list(self._arrows)

    def set_arrows(self, arrows: Iterable[Arrow]) -> None:
        """Replace the arrows."""
        self._arrows = list(arrows)
        self._ends = np.array([a[:4] for a in self._arrows], dtype=float).reshape(-1, 4)
        by_colour: dict[int, list[int]] = {}
        for index, arrow in enumerate(self._arrows):
            by_colour.setdefault(arrow[4].rgba(), []).append(index)
        self._groups = [
            (
                _pen(QColor.fromRgba(rgba), self._width),
                QBrush(QColor.fromRgba(rgba)),
                np.array(rows),
            )
            for rgba, rows in by_colour.items()
        ]
        self._set_bounds(self._ends[:, 0::2].ravel(), self._ends[:, 1::2].ravel())

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        """Shafts and heads in device pixels, one shaft path and one head path per colour."""
        if not self._arrows:
            return
        t = painter.transform()
        x, y = self._ends[:, 0::2], self._ends[:, 1::2]
        px, py = to_device(t, x, y)
        dx, dy = px[:, 1] - px[:, 0], py[:, 1] - py[:, 0]
        length = np.hypot(dx, dy)
        shown = length >= 1.0
        safe = np.where(shown, length, 1.0)
        ux, uy = dx / safe, dy / safe
        head = np.minimum(self.head_px, 0.6 * length)
        base_x, base_y = px[:, 1] - head * ux, py[:, 1] - head * uy
        half = 0.45 * head
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        for pen, brush, rows in self._groups:
            rows = rows[shown[rows]]
            if not rows.size:
                continue
            shafts = pg.arrayToQPath(
                np.column_stack((px[rows, 0], base_x[rows])).ravel(),
                np.column_stack((py[rows, 0], base_y[rows])).ravel(),
                connect="pairs",
                finiteCheck=False,
            )
            bx, by, h = base_x[rows], base_y[rows], half[rows]
            wx, wy = h * uy[rows], h * ux[rows]
            heads = pg.arrayToQPath(
                np.column_stack((px[rows, 1], bx - wx, bx + wx)).ravel(),
                np.column_stack((py[rows, 1], by + wy, by - wy)).ravel(),
                connect=np.tile(np.array([1, 1, 0], dtype=np.int32), rows.size),
                finiteCheck=False,
            )
            heads.setFillRule(Qt.FillRule.WindingFill)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(shafts)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(brush)
            painter.drawPath(heads)
        painter.restore()


@functools.cache
def _flash_pens() -> tuple[QPen, ...]:
    """Pens of a flash ring from new (opaque) to old (nearly transparent)."""
    pens = []
    for shade in range(FLASH_SHADES):
        colour = QColor(FLASH_COLOUR)
        colour.setAlphaF(1.0 - (shade + 0.5) / FLASH_SHADES)
        pens.append(_pen(colour, 3.0))
    return tuple(pens)


class FlashField(_PixelOverlay):
    """Impact flashes: circles that expand and fade over ``FLASH_DURATION`` seconds."""

    margin_px = 48.0

    def __init__(self) -> None:
        super().__init__()
        self._flashes: list[tuple[float, float, float]] = []

    @property
    def active(self) -> bool:
        """True while some flash is still visible."""
        return bool(self._flashes)

    def add(self, x: float, y: float) -> None:
        """Start a flash at ``(x, y)`` (m)."""
        self._flashes.append((x, y, time.monotonic()))
        del self._flashes[:-FLASHES_MAX]
        self._refresh_bounds()

    def clear(self) -> None:
        """Remove every flash."""
        self._flashes.clear()
        self._refresh_bounds()

    def tick(self) -> None:
        """Drop finished flashes and repaint the others."""
        now = time.monotonic()
        alive = [f for f in self._flashes if now - f[2] < FLASH_DURATION]
        if len(alive) != len(self._flashes):
            self._flashes = alive
            self._refresh_bounds()
        self.update()

    def _refresh_bounds(self) -> None:
        self._set_bounds([f[0] for f in self._flashes], [f[1] for f in self._flashes])

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        """One ring per flash, radius growing 6 → 40 px while it fades."""
        if not self._flashes:
            return
        now = time.monotonic()
        transform = painter.transform()
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        pens = _flash_pens()
        for x, y, start in self._flashes:
            age = min(max((now - start) / FLASH_DURATION, 0.0), 1.0)
            painter.setPen(pens[min(int(age * FLASH_SHADES), FLASH_SHADES - 1)])
            radius = 6.0 + 34.0 * age
            painter.drawEllipse(transform.map(QPointF(x, y)), radius, radius)
        painter.restore()


class TrailField(pg.PlotCurveItem):
    """The centre positions of any number of bodies, drawn as one curve.

    ``start(n, length)`` makes room for ``n`` bodies, ``append`` adds one
    position per body (a frame). By default each trail keeps the last
    ``length`` positions. With ``keep_all=True`` it keeps the whole run
    instead, in bounded memory: once ``2 · length`` frames are stored, every
    second one is dropped and from then on only every second frame is stored
    (then every fourth, …), so the trail always spans the run from its start
    with between ``length`` and ``2 · length`` positions, evenly decimated,
    and still ends where the body is (the newest position is drawn whether
    stored or not).

    The curve is re-built once per frame from the buffer (one ``setData``
    with a ``connect`` array that breaks it between bodies); positions equal
    to the previous one are left out of the drawing, so bodies at rest cost
    nothing. Whether a body moved is worked out once, when its position is
    appended (comparing the whole window at each frame took 0.4 ms of a
    200-bead chain's frame).
    """

    def __init__(self) -> None:
        super().__init__(pen=_pen(TRAIL_COLOUR, 2.0))
        self._buffer = np.empty((0, 0, 2))
        self._moved = np.empty((0, 0), dtype=bool)
        """Per buffered frame and body: the position differs from the frame before's."""
        self._first = self._end = 0
        self._length = 0
        self._keep_all = False
        self._stride = 1
        """With ``keep_all``: one frame in this many is stored."""
        self._count = 0
        """With ``keep_all``: frames appended since the trails started."""
        self._latest: np.ndarray | None = None
        """With ``keep_all``: the newest positions when they were not stored."""

    def start(self, count: int, length: int, keep_all: bool = False) -> None:
        """Empty trails for ``count`` bodies: the last ``length`` positions, or the whole run."""
        self._length = max(int(length), 1)
        self._keep_all = keep_all
        self._buffer = np.empty((2 * self._length, count, 2))
        self._moved = np.empty((2 * self._length, count), dtype=bool)
        self.clear_trails()

    def clear_trails(self) -> None:
        """Drop every position (the bodies and the length stay)."""
        self._first = self._end = 0
        self._stride, self._count, self._latest = 1, 0, None
        self.setData([], [])

    def append(self, positions: np.ndarray) -> None:
        """Add one position per body, shape (n, 2), m, and redraw."""
        if self._keep_all:
            self._count += 1
            if (self._count - 1) % self._stride:
                self._latest = np.array(positions, dtype=float)
                self._redraw()
                return
            self._latest = None
            if self._end == len(self._buffer):
                self._decimate()
        elif self._end == len(self._buffer):
            keep = self._length - 1
            self._buffer[:keep] = self._buffer[self._end - keep : self._end]
            self._moved[:keep] = self._moved[self._end - keep : self._end]
            self._first, self._end = 0, keep
        self._buffer[self._end] = positions
        if self._end > 0:
            self._moved[self._end] = np.any(positions != self._buffer[self._end - 1], axis=1)
        self._end += 1
        if not self._keep_all:
            self._first = max(self._first, self._end - self._length)
        self._redraw()

    def _decimate(self) -> None:
        """Keep every second stored frame (the first included) and store half as often."""
        kept = self._buffer[0 : self._end : 2].copy()
        self._end = len(kept)
        self._buffer[: self._end] = kept
        if self._end > 1:
            self._moved[1 : self._end] = np.any(kept[1:] != kept[:-1], axis=2)
        self._stride *= 2

    def _frames(self) -> tuple[np.ndarray, np.ndarray]:
        """The positions drawn, (frames, bodies, 2), and whether each moved, (frames, bodies)."""
        recent = self._buffer[self._first : self._end]
        moved = self._moved[self._first : self._end]
        if self._latest is not None and self._end > 0:
            last = self._buffer[self._end - 1]
            recent = np.concatenate([recent, self._latest[None]])
            moved = np.concatenate([moved, np.any(self._latest != last, axis=1)[None]])
        return recent, moved

    def trail(self, index: int) -> np.ndarray:
        """The trail of body number ``index``, oldest first, shape (m, 2), m."""
        return self._frames()[0][:, index].copy()

    def _redraw(self) -> None:
        frames, moved = self._frames()
        recent = frames.transpose(1, 0, 2)
        count, length = recent.shape[:2]
        keep = moved.T.copy()
        if length:
            keep[:, 0] = True  # each trail's oldest position
        points = recent[keep]
        body = np.broadcast_to(np.arange(count)[:, None], (count, length))[keep]
        connect = np.zeros(len(body), dtype=np.int32)
        connect[:-1] = body[1:] == body[:-1]
        self.setData(points[:, 0], points[:, 1], connect=connect)


# ------------------------------------------------------------ scene drawing


def _is_soft(boundary: Any) -> bool:
    """True when ``boundary`` (scene-file dict) carries a ``compliance``."""
    return isinstance(boundary, Mapping) and bool(boundary.get("compliance"))


def _discs(data: Mapping[str, Any]) -> tuple[np.ndarray, list[float]]:
    """The bodies' centres (n, 2) and radii (a cart: its wheels') as the scene places them, m."""
    centres, radii = [], []
    for body in data.get("bodies", []):
        try:
            if body.get("type") == "bead":
                centre, radius = (body["x"], body["rail_y"]), body["radius"]
            else:
                centre = body["position"]
                radius = body.get("radius", body.get("wheel_radius"))
            centres.append((float(centre[0]), float(centre[1])))
            radii.append(float(radius))
        except (AttributeError, KeyError, TypeError, ValueError, IndexError):
            continue
    return np.array(centres, dtype=float).reshape(-1, 2), radii


def _soft_band_of(
    boundary: Any, discs: tuple[np.ndarray, list[float]]
) -> tuple[float, float] | None:
    """(side, width) of a soft boundary's band (``soft_look``), None for a rigid one."""
    if not _is_soft(boundary):
        return None
    try:
        points = boundary_points(boundary)
    except (KeyError, TypeError, ValueError):
        return None
    if len(points) < 2 or not np.all(np.isfinite(points)):
        return None
    centres, radii = discs
    return soft_look.material_side(points, centres), soft_look.band_width(points, radii)


class SceneLayer:
    """Draws one scene (a scene-file dict) into a ViewBox and keeps its items for animation.

    ``boundaries`` draw as thick lines with their ids; ``bodies`` maps each
    body id to its DiskItem / CartItem, or for a bead its ``BeadDrawing``
    (all beads are drawn by the one ``beads`` field); ``springs`` holds each spring's
    points, re-shaped with ``update_springs_at`` (all drawn by one ``SpringField``). Beads
    on the same rail share one rail line. The id labels can be hidden (``set_labels_visible``);
    hidden labels are not moved.

    ``build`` re-makes only the parts whose data (or selection) changed
    since the last build: selecting or editing one of 2000 beads touches
    that bead's items, not the others' (making and removing an item costs
    about a millisecond each).
    """

    def __init__(self, view: pg.ViewBox) -> None:
        self._view = view
        self.beads = BeadField()
        self.beads.setZValue(10)
        view.addItem(self.beads)
        self._parts: dict[tuple[Any, ...], tuple[Any, list[Any]]] = {}
        """Built parts: key → (the data and flags they were built from, their items)."""
        self.bodies: dict[str, DiskItem | CartItem | BeadDrawing] = {}
        self._labels: dict[str, pg.TextItem] = {}
        self.springs: list[SpringShape] = []
        """Each spring's drawn points (``getData``), drawn together by ``SpringField``."""
        self._spring_field: SpringField | None = None
        self._spring_ends: list[tuple[str, str | None, tuple[float, float] | None]] = []
        self._radii: dict[str, float] = {}
        self._labels_visible = True
        self._posed: set[str] = set()
        """Bodies moved with ``place`` since the last build (by an animation)."""

    def clear(self) -> None:
        """Remove every item of the scene from the view."""
        for key in list(self._parts):
            self._drop(key)
        self.springs = []
        self._spring_field = None
        self._spring_ends.clear()
        self._labels_visible = True

    def _drop(self, key: tuple[Any, ...]) -> None:
        """Remove the items of one part (and forget the body it drew)."""
        _, items = self._parts.pop(key)
        for item in items:
            if isinstance(item, BeadDrawing):
                item.remove()
            else:
                self._view.removeItem(item)
        body_id = key[2] if key[0] == "bodies" else None
        if body_id is not None and self.bodies.get(body_id) in items:
            del self.bodies[body_id]
            self._labels.pop(body_id, None)
            self._radii.pop(body_id, None)

    def _add(self, items: list[Any], item: QGraphicsItem, z: float) -> None:
        item.setZValue(z)
        self._view.addItem(item)
        items.append(item)

    def _update_part(
        self, key: tuple[Any, ...], source: Any, make: Callable[[list[Any]], None]
    ) -> bool:
        """Keep the part ``key`` if it was built from ``source`` (True), else (re)make it."""
        built = self._parts.get(key)
        if built is not None and built[0] == source:
            return True
        if built is not None:
            self._drop(key)
        items: list[Any] = []
        make(items)
        self._parts[key] = (copy.deepcopy(source), items)
        return False

    def build(
        self,
        data: Mapping[str, Any],
        selection: tuple[str, int] | None = None,
        labels: bool = True,
    ) -> None:
        """Draw ``data`` (after an edit), highlighting ``selection``; unchanged parts stay.

        ``labels=False`` draws the bodies without their id labels (a crowded
        scene: a label costs more to make than its body).
        """
        wanted: set[tuple[Any, ...]] = set()
        boundaries = data.get("boundaries", [])
        discs = _discs(data) if any(_is_soft(b) for b in boundaries) else None
        for index, boundary in enumerate(boundaries):
            key = ("boundaries", index)
            selected = selection == key
            wanted.add(key)
            band = _soft_band_of(boundary, discs) if discs is not None else None
            self._update_part(
                key,
                (boundary, selected, band),
                lambda items, b=boundary, s=selected, w=band: self._build_boundary(items, b, s, w),
            )
        rails: set[float] = set()
        posed, self._posed = self._posed, set()
        for index, body in enumerate(data.get("bodies", [])):
            key = ("bodies", index, str(body.get("id", "")))
            selected = selection == ("bodies", index)
            wanted.add(key)
            kept = self._update_part(
                key,
                (body, selected, labels),
                lambda items, b=body, s=selected: self._build_body(items, b, s, labels),
            )
            if kept and key[2] in posed and key[2] in self.bodies:
                self._reset_pose(key[2], body)
            if body.get("type") == "bead" and key[2] in self.bodies:
                rails.add(float(body["rail_y"]))
        for key in [key for key in self._parts if key not in wanted and key[0] != "scene"]:
            self._drop(key)
        self._labels_visible = labels
        rail_list = sorted(rails)
        self._update_part(
            ("scene", "rails"), rail_list, lambda items: self._build_rails(items, rail_list)
        )
        springs = data.get("springs", [])
        chosen = selection[1] if selection is not None and selection[0] == "springs" else None
        self._update_part(
            ("scene", "springs"),
            (springs, chosen),
            lambda items: self._build_springs(items, springs, chosen),
        )
        if self.springs:
            self.update_springs_at(*self.centre_rows())
        self._posed.clear()

    def _reset_pose(self, body_id: str, body: Mapping[str, Any]) -> None:
        """Put a body moved by an animation back where ``body`` (its scene data) has it."""
        item = self.bodies[body_id]
        if isinstance(item, CartItem):
            item.set_wheel_angles(*body.get("wheel_angles", (0.0, 0.0)))
        if body.get("type") == "bead":
            self.place(body_id, body["x"], body["rail_y"])
        else:
            self.place(body_id, *body["position"], body.get("angle", 0.0))

    def _build_rails(self, items: list[QGraphicsItem], rails: list[float]) -> None:
        for rail_y in rails:
            line = pg.InfiniteLine(
                pos=rail_y, angle=0, pen=_pen(RAIL_COLOUR, 1.0, Qt.PenStyle.DashLine)
            )
            self._add(items, line, 1)

    def _build_springs(
        self, items: list[QGraphicsItem], springs: list[Mapping[str, Any]], chosen: int | None
    ) -> None:
        self._spring_ends.clear()
        for spring in springs:
            ends = (spring.get("a", ""), spring.get("b"))
            a, b = (end if end is None or isinstance(end, str) else "" for end in ends)
            self._spring_ends.append((a or "", b, _finite_point(spring.get("anchor"))))
        field = SpringField(
            self._spring_ends, chosen, _pen(SPRING_COLOUR, 2.0), _pen(SELECTION_COLOUR, 2.0)
        )
        for curve in field.items():
            self._add(items, curve, 5)
        self._spring_field = field
        self.springs = field.shapes
        anchors = [end[2] for end in self._spring_ends if end[2] is not None]
        if anchors:
            pins = pg.ScatterPlotItem(
                pos=np.array(anchors, dtype=float).reshape(-1, 2),
                symbol="t1",
                size=11,
                pen=_pen(BOUNDARY_COLOUR, 1.0),
                brush=QBrush(BOUNDARY_COLOUR),
            )
            self._add(items, pins, 6)

    def _build_boundary(
        self,
        items: list[QGraphicsItem],
        boundary: Mapping[str, Any],
        selected: bool,
        band: tuple[float, float] | None = None,
    ) -> None:
        """The boundary's line and id; ``band``: (side, width) of a soft one's hatched band."""
        try:
            points = boundary_points(boundary)
        except (KeyError, TypeError, ValueError):
            return
        if band is not None and band[1] > 0.0:
            self._add(items, soft_look.band_item(soft_look.soft_band(points, *band)), 1.5)
        colour = SELECTION_COLOUR if selected else BOUNDARY_COLOUR
        curve = pg.PlotCurveItem(points[:, 0], points[:, 1], pen=_pen(colour, BOUNDARY_WIDTH))
        self._add(items, curve, 2)
        lengths = np.hypot(*np.diff(points, axis=0).T)
        longest = int(np.argmax(lengths)) if len(lengths) else 0
        middle = points[longest : longest + 2].mean(axis=0)
        along = points[min(longest + 1, len(points) - 1)] - points[longest]
        dx, dy = np.abs(along)
        anchor = (-0.2, 0.5) if dy > dx else (0.5, 1.2)
        if band is not None:
            # soft: on the bodies' side, clear of an overlap's shading (behind the surface),
            # and above the middle, clear of the δ label (below it)
            towards_bodies = -band[0] * np.array([-along[1], along[0]])
            if dy > dx:
                anchor = (-0.2, 1.2) if towards_bodies[0] > 0 else (1.2, 1.2)
            else:
                anchor = (0.5, 1.2) if towards_bodies[1] >= 0 else (0.5, -0.2)
        label = pg.TextItem(str(boundary.get("id", "")), color=BOUNDARY_COLOUR, anchor=anchor)
        label.setPos(float(middle[0]), float(middle[1]))
        self._add(items, label, 3)

    def _build_body(
        self,
        items: list[Any],
        body: Mapping[str, Any],
        selected: bool,
        labelled: bool = True,
    ) -> None:
        body_id = str(body.get("id", ""))
        kind = body.get("type")
        if kind == "bead":
            self._build_bead(items, body, selected, labelled)
            return
        try:
            if kind == "axle_cart":
                item: DiskItem | CartItem = CartItem(body["half_length"], body["wheel_radius"])
                item.setPos(*body["position"])
                item.setRotation(math.degrees(body.get("angle", 0.0)))
                item.set_wheel_angles(*body.get("wheel_angles", (0.0, 0.0)))
                extent = float(body["half_length"] + body["wheel_radius"])
            else:
                item = DiskItem(body["radius"], WHEEL_COLOUR, spoke=True)
                item.setPos(*body["position"])
                item.setRotation(math.degrees(body.get("angle", 0.0)))
                extent = float(body["radius"])
        except (KeyError, TypeError, ValueError):
            return
        centre = (item.pos().x(), item.pos().y())
        if not (0.0 < extent < math.inf and all(map(math.isfinite, centre))):
            return  # nothing sensible to draw: the panel lists the problem
        self._radii[body_id] = extent
        item.set_selected(selected)
        self._add(items, item, 10)
        self._remember(items, body_id, item, labelled)

    def _build_bead(
        self, items: list[Any], body: Mapping[str, Any], selected: bool, labelled: bool
    ) -> None:
        try:
            x, y, radius = float(body["x"]), float(body["rail_y"]), float(body["radius"])
        except (KeyError, TypeError, ValueError):
            return
        if not (0.0 < radius < math.inf and math.isfinite(x) and math.isfinite(y)):
            return  # nothing sensible to draw: the panel lists the problem
        body_id = str(body.get("id", ""))
        bead = BeadDrawing(self.beads, x, y, radius)
        bead.set_selected(selected)
        items.append(bead)
        self._radii[body_id] = radius
        self._remember(items, body_id, bead, labelled)

    def _remember(
        self,
        items: list[Any],
        body_id: str,
        item: DiskItem | CartItem | BeadDrawing,
        labelled: bool,
    ) -> None:
        """Keep ``item`` as the drawing of ``body_id``, with its id label when ``labelled``."""
        self.bodies[body_id] = item
        self._labels.pop(body_id, None)
        if labelled:
            label = pg.TextItem(body_id, color=QColor("#263238"), anchor=(0.5, 1.0))
            self._add(items, label, 11)
            self._labels[body_id] = label
            self.place(body_id, item.pos().x(), item.pos().y())

    def place(self, body_id: str, x: float, y: float, angle: float | None = None) -> None:
        """Move a body's drawing to ``(x, y)`` (m), turned to ``angle`` (rad).

        The id label sits just above the drawing: a radius above a disk's
        centre, above the bounding box of a cart as turned (y up: its bottom).
        """
        item = self.bodies[body_id]
        self._posed.add(body_id)
        item.setPos(x, y)
        if angle is not None:
            item.setRotation(math.degrees(angle))
        if not self._labels_visible or body_id not in self._labels:
            return
        top = y + self._radii[body_id]
        if isinstance(item, CartItem):
            top = item.mapRectToParent(item.boundingRect()).bottom()
        self._labels[body_id].setPos(x, top)

    def place_beads(
        self, body_ids: list[str], slots: np.ndarray, x: np.ndarray, y: np.ndarray
    ) -> None:
        """Move the beads ``body_ids`` (their ``BeadField`` slots) to ``(x, y)``, m, at once."""
        self.beads.move_many(slots, x, y)
        self._posed.update(body_ids)
        if not self._labels_visible:
            return
        for body_id, bead_x, bead_y in zip(body_ids, x.tolist(), y.tolist(), strict=True):
            label = self._labels.get(body_id)
            if label is not None:
                label.setPos(bead_x, bead_y + self._radii[body_id])

    def set_labels_visible(self, visible: bool) -> None:
        """Show or hide the bodies' id labels (shown again: placed at their bodies)."""
        self._labels_visible = bool(visible)
        for body_id, label in self._labels.items():
            label.setVisible(self._labels_visible)
            if self._labels_visible:
                item = self.bodies[body_id]
                self.place(body_id, item.pos().x(), item.pos().y())

    def centres(self) -> dict[str, tuple[float, float]]:
        """Current centre of every body item, m."""
        index, xy = self.centre_rows()
        return dict(zip(index, map(tuple, xy.tolist()), strict=True))

    def centre_rows(self) -> tuple[dict[str, int], np.ndarray]:
        """Every body's row in an array of current centres, and that array (n, 2), m.

        The beads' centres are read from the bead field at once (2000 beads: a
        few array operations, not 2000 ``pos`` calls).
        """
        index = {body_id: k for k, body_id in enumerate(self.bodies)}
        xy = np.zeros((len(index), 2))
        drawings = list(self.bodies.values())
        beads = [(k, item.slot) for k, item in enumerate(drawings) if isinstance(item, BeadDrawing)]
        if beads:
            rows, slots = np.array(beads, dtype=int).T
            xy[rows] = self.beads.positions(slots)
        if len(beads) < len(index):
            for k, item in enumerate(drawings):
                if not isinstance(item, BeadDrawing):
                    xy[k] = (item.pos().x(), item.pos().y())
        return index, xy

    def radius(self, body_id: str) -> float:
        """Drawn radius of a body (an axle cart: half its span), m."""
        return self._radii.get(body_id, 0.0)

    def update_springs_at(self, index: Mapping[str, int], xy: np.ndarray) -> None:
        """Re-shape every spring between its ends' centres, rows ``index[id]`` of ``xy`` (m).

        Pass the same ``index`` object with each frame: the springs' ends are
        looked up in it once (``SpringField.update_at``).
        """
        if self._spring_field is not None:
            self._spring_field.update_at(index, xy, self.radius)
