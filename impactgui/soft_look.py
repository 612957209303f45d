"""How compliant (soft) contact looks on the canvas: a hatched band, and the overlap δ.

A boundary with ``compliance`` is drawn with a hatched band of soft
material behind its surface, on the side away from the bodies: the line
stays where the surface is, and a body pressing in crosses it into the
band (``soft_band``). During a run, every compliant contact of the frame
shown draws its overlap (``OverlapDrawing``): the part of the disk behind
the surface, filled, and δ itself as a line along the normal from the
surface to the disk's deepest point, labelled ``δ = 15.0 mm`` once it is a
few pixels long (zoomed in: δ is typically a hundredth of the radius).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsPathItem

SOFT_COLOUR = QColor("#8d6e63")
"""The hatching of a soft boundary's band."""
OVERLAP_COLOUR = QColor("#c62828")
"""The overlap δ of a compliant contact: its line, label and the disk's part behind the surface."""
BAND_SHARE = 0.05
"""A soft band's width as a share of its boundary's length..."""
BAND_RADIUS_SHARE = 0.5
"""...at most this share of the smallest body's radius (a soft floor under a small ball)."""
LABEL_MIN_PX = 4.0
"""δ is labelled once its line is this long on screen, px."""


def _left_normals(points: np.ndarray) -> np.ndarray:
    """Unit left normals of the polyline's segments, shape (n - 1, 2)."""
    d = np.diff(points, axis=0)
    length = np.hypot(d[:, 0], d[:, 1])
    length[length == 0.0] = 1.0
    return np.column_stack((-d[:, 1], d[:, 0])) / length[:, None]


def material_side(points: np.ndarray, centres: np.ndarray) -> float:
    """+1 when the soft material lies left of the polyline ``points``, -1 when right.

    The material is behind the surface: on the side away from the body
    nearest to the boundary (``centres``, shape (n, 2); none: the right side).
    """
    centres = np.asarray(centres, dtype=float).reshape(-1, 2)
    if not len(centres):
        return -1.0
    a, d = points[:-1], np.diff(points, axis=0)  # segments (m, 2)
    lengths = np.maximum((d * d).sum(axis=1), 1e-300)
    rel = centres[:, None, :] - a[None, :, :]  # (n, m, 2)
    s = np.clip((rel * d[None]).sum(axis=2) / lengths[None], 0.0, 1.0)
    offset = rel - s[..., None] * d[None]  # from the nearest point of each segment
    distance = np.hypot(offset[..., 0], offset[..., 1])
    body, segment = np.unravel_index(int(np.argmin(distance)), distance.shape)
    left = float(_left_normals(points)[segment] @ offset[body, segment])
    return -1.0 if left > 0.0 else 1.0


def band_width(points: np.ndarray, radii: Iterable[float]) -> float:
    """Width of a soft band, m: ``BAND_SHARE`` of the length, at most half the smallest radius."""
    length = float(np.hypot(*np.diff(points, axis=0).T).sum())
    width = BAND_SHARE * length
    smallest = min((r for r in radii if r > 0.0), default=math.inf)
    return min(width, BAND_RADIUS_SHARE * smallest) if length > 0.0 else 0.0


def soft_band(points: np.ndarray, side: float, width: float) -> np.ndarray:
    """The band's outline: the surface ``points``, then back along them offset by ``width``.

    Each vertex is offset along the mean of its segments' normals, on
    ``side`` (``material_side``). Shape (2n, 2), m.
    """
    normals = _left_normals(points)
    vertex = np.vstack((normals[:1], normals[:-1] + normals[1:], normals[-1:]))
    norm = np.hypot(vertex[:, 0], vertex[:, 1])
    norm[norm == 0.0] = 1.0
    inner = points + side * width * vertex / norm[:, None]
    return np.vstack((points, inner[::-1]))


def band_item(outline: np.ndarray) -> QGraphicsPathItem:
    """The hatched band as an item of scene coordinates (the hatching is in screen pixels)."""
    path = QPainterPath()
    path.addPolygon(QPolygonF([QPointF(float(x), float(y)) for x, y in outline]))
    path.closeSubpath()
    item = QGraphicsPathItem(path)
    item.setBrush(QBrush(SOFT_COLOUR, Qt.BrushStyle.BDiagPattern))
    pen = QPen(SOFT_COLOUR, 1.0)
    pen.setCosmetic(True)
    item.setPen(pen)
    return item


def overlap(
    contact: Any, centre: Sequence[float], radius: float
) -> tuple[float, np.ndarray, np.ndarray]:
    """δ of a compliant contact (m), the surface point and the unit normal (obstacle → body)."""
    point = np.asarray(contact.point, dtype=float)
    normal = np.asarray(contact.normal, dtype=float)
    depth = radius - float(normal @ (np.asarray(centre, dtype=float) - point))
    return depth, point, normal


class OverlapDrawing:
    """The overlap δ of each compliant contact of the frame shown, in a canvas's view.

    One path item (the disks' parts behind the surface, filled, and the δ
    lines) and one label per contact shown (kept and reused).
    """

    def __init__(self, view: Any, z: float = 15.0) -> None:
        self._view = view
        self.path = QGraphicsPathItem()
        fill = QColor(OVERLAP_COLOUR)
        fill.setAlpha(90)
        self.path.setBrush(QBrush(fill))
        pen = QPen(OVERLAP_COLOUR, 2.0)
        pen.setCosmetic(True)
        self.path.setPen(pen)
        self.path.setZValue(z)
        view.addItem(self.path, ignoreBounds=True)
        self._labels: list[pg.TextItem] = []
        self._z = z
        self.depths: list[tuple[str, str, float]] = []
        """(body, other, δ in m) of each overlap drawn now."""
        self._drawn = 0

    def clear(self) -> None:
        """Draw nothing."""
        self.path.setPath(QPainterPath())
        for label in self._labels:
            label.hide()
        self.depths = []
        self._drawn = 0

    def show(
        self,
        contacts: Iterable[Any],
        centres: Mapping[str, tuple[float, float]],
        radius: Callable[[str], float],
        pixel: float,
    ) -> None:
        """Draw the overlaps of the ``compliant`` ones of ``contacts``; ``pixel``: m per px."""
        path = QPainterPath()
        drawn: list[tuple[str, str, float, np.ndarray, np.ndarray]] = []
        for contact in contacts:
            if contact.mode != "compliant" or contact.body not in centres:
                continue
            r = radius(contact.body)
            centre = centres[contact.body]
            depth, point, normal = overlap(contact, centre, r)
            if not depth > 0.0:
                continue
            deepest = point - depth * normal
            # the disk's part behind the surface line through ``point``: a circular segment
            half = math.acos(max(-1.0, min(1.0, 1.0 - depth / r)))
            heading = math.atan2(-normal[1], -normal[0])
            angles = np.linspace(heading - half, heading + half, 33)
            arc = np.column_stack((centre[0] + r * np.cos(angles), centre[1] + r * np.sin(angles)))
            path.addPolygon(QPolygonF([QPointF(float(x), float(y)) for x, y in arc]))
            path.closeSubpath()
            path.moveTo(float(point[0]), float(point[1]))
            path.lineTo(float(deepest[0]), float(deepest[1]))
            drawn.append((contact.body, contact.other, depth, point, deepest))
        self.path.setPath(path)
        self.depths = [(body, other, depth) for body, other, depth, _, _ in drawn]
        while len(self._labels) < len(drawn):
            label = pg.TextItem(color=OVERLAP_COLOUR, anchor=(1.05, -0.3))  # below, left of it
            label.setZValue(self._z)
            self._view.addItem(label, ignoreBounds=True)
            self._labels.append(label)
        for label, (_, _, depth, point, deepest) in zip(self._labels, drawn, strict=False):
            label.setText(f"δ = {depth * 1e3:.3g} mm")
            middle = 0.5 * (point + deepest)
            label.setPos(float(middle[0]), float(middle[1]))
        self._drawn = len(drawn)
        self.relabel(pixel)

    def relabel(self, pixel: float) -> None:
        """Show the labels of the overlaps at least ``LABEL_MIN_PX`` long at ``pixel`` m per px."""
        for k, label in enumerate(self._labels):
            label.setVisible(k < self._drawn and self.depths[k][2] >= LABEL_MIN_PX * pixel)
