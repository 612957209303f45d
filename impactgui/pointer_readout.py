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
    "spring": "spring",
}
"""Tools whose preview has a size worth reading, and what it is called."""


def polyline_length(points: Sequence[Point]) -> float:
    """Length of the polyline through ``points``, m."""
    return sum(math.dist(a, b) for a, b in itertools.pairwise(points))


def readout_text(position: Point, tool: str, preview: Sequence[Point]) -> str:
    """The read-out for the pointer at ``position`` (m) with ``tool`` drawing ``preview``."""
    x, y = position
    text = f"x = {x:.3f} m  y = {y:.3f} m"
    name = PREVIEW_SIZES.get(tool)
    if name is not None and len(preview) >= 2:
        text += f"  ·  {name} {polyline_length(preview):.3f} m"
    return text


class PointerReadout(QLabel):
    """Status-bar label with the pointer's position and the size of what is drawn."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance("x = -00.000 m  y = -00.000 m"))

    def show_pointer(self, position: Point, tool: str, preview: Sequence[Point]) -> None:
        """Show ``position`` (m) and the size of ``tool``'s ``preview``."""
        self.setText(readout_text(position, tool, preview))
