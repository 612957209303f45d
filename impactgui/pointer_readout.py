"""The status bar's pointer read-out: where the pointer is, and the size of what is drawn.

``x = 0.450 m  y = 0.100 m`` while the pointer is over the canvas — the
snapped position when snapping is on, the point a tool would use — and,
while a tool draws, the size of its preview: the length of a wall or a
curb (the whole polyline so far), the radius of an arc, the length of a
spring.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from PySide6.QtWidgets import QLabel, QWidget

Point = tuple[float, float]

PREVIEW_SIZES = {
    "wall": "wall",
    "curb": "curb",
    "arc": "radius",
    "arc3": "radius",
    "spring": "spring",
}
"""Tools whose preview has a size worth reading, and what it is called."""


def polyline_length(points: Sequence[Point]) -> float:
    """Length of the polyline through ``points``, m."""
    return sum(math.dist(a, b) for a, b in itertools.pairwise(points))


def circumradius(a: Point, b: Point, c: Point) -> float:
    """Radius of the circle through ``a``, ``b``, ``c`` (m); inf when they are in a line."""
    area2 = abs((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))
    if area2 == 0.0:
        return math.inf
    return math.dist(a, b) * math.dist(b, c) * math.dist(c, a) / (2.0 * area2)


def preview_size(tool: str, preview: Sequence[Point]) -> float | None:
    """The size the read-out gives of ``tool``'s ``preview`` (m), or None.

    A wall, curb or spring: its length. An arc: its radius, the line from
    its centre while that is sized, then the circle through the ends and
    the middle of the arc drawn (its length would read 0.785 m for a
    quarter circle of 0.5 m).
    """
    if tool not in PREVIEW_SIZES or len(preview) < 2:
        return None
    if PREVIEW_SIZES[tool] != "radius":
        return polyline_length(preview)
    if len(preview) == 2:
        return math.dist(*preview) if tool == "arc" else None
    radius = circumradius(preview[0], preview[len(preview) // 2], preview[-1])
    return radius if math.isfinite(radius) else None


def readout_text(position: Point, tool: str, preview: Sequence[Point]) -> str:
    """The read-out for the pointer at ``position`` (m) with ``tool`` drawing ``preview``."""
    x, y = position
    text = f"x = {x:.3f} m  y = {y:.3f} m"
    size = preview_size(tool, preview)
    if size is not None:
        text += f"  ·  {PREVIEW_SIZES[tool]} {size:.3f} m"
    return text


class PointerReadout(QLabel):
    """Status-bar label with the pointer's position and the size of what is drawn."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance("x = -00.000 m  y = -00.000 m"))

    def show_pointer(self, position: Point, tool: str, preview: Sequence[Point]) -> None:
        """Show ``position`` (m) and the size of ``tool``'s ``preview``."""
        self.setText(readout_text(position, tool, preview))
