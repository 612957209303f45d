"""Scene coordinates to a painter's device pixels, many points at once."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QTransform


def to_device(t: QTransform, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(px, py)``: the points ``(x, y)`` mapped by the affine ``t`` (any array shape)."""
    px = t.m11() * x + t.m21() * y + t.dx()
    py = t.m12() * x + t.m22() * y + t.dy()
    return px, py
