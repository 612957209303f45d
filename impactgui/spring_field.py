"""Every spring of a scene drawn by two curves: the chosen one, and all the others.

One ``PlotCurveItem`` per spring cost a 2000-bead spring chain 2 s per
animation frame (2000 ``setData`` calls and zig-zags made one by one) and
0.45 s per paint (2000 items); building the scene's items took 1 s. Here
the zig-zags of all springs with the same number of coils are made by one
array expression, joined by NaN rows into one curve (``connect="finite"``),
and drawn by one item; the selected spring keeps its own curve and colour.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg

COILS_MIN, COILS_MAX = 3, 8
"""Coils of a spring's zig-zag: about as long as it is wide, within these bounds."""
LEAD = 0.15
"""Share of a spring's length drawn straight at each end."""


def zigzag_offsets(coils: int) -> tuple[np.ndarray, np.ndarray]:
    """The zig-zag's points along (share of the length) and across (share of the width)."""
    turns = np.linspace(LEAD, 1 - LEAD, 2 * coils + 1)[1:-1]
    along = np.concatenate(([0.0, LEAD], turns, [1 - LEAD, 1.0]))
    across = np.zeros_like(along)
    across[2:-2] = np.where(np.arange(len(along) - 4) % 2 == 0, 0.5, -0.5)
    return along, across


class SpringShape:
    """One spring's drawn points (m), as the field last shaped them (``getData`` as a curve's)."""

    def __init__(self) -> None:
        self.points = np.zeros((0, 2))

    def getData(self) -> tuple[np.ndarray, np.ndarray]:
        return self.points[:, 0], self.points[:, 1]


class SpringField:
    """The springs of one scene: ends by body id or anchor point, drawn by two curves.

    Parameters
    ----------
    ends : sequence of (a, b, anchor)
        Body id ``a``, body id ``b`` or None, the anchor point (m) or None, per spring.
    chosen : int or None
        Index of the selected spring (drawn in its own pen).
    pen, chosen_pen : QPen
        Pens of the springs and of the selected one.
    """

    def __init__(
        self,
        ends: Sequence[tuple[str, str | None, tuple[float, float] | None]],
        chosen: int | None,
        pen: Any,
        chosen_pen: Any,
    ) -> None:
        self.ends = list(ends)
        self.chosen = chosen
        self.shapes = [SpringShape() for _ in self.ends]
        self.curve = pg.PlotCurveItem(pen=pen, connect="finite")
        self._radii_known: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.chosen_curve = pg.PlotCurveItem(pen=chosen_pen)

    def items(self) -> list[pg.PlotCurveItem]:
        """The two curves (add them to a view)."""
        return [self.curve, self.chosen_curve]

    def _radii(self, radius: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per spring: the radius of end a, of end b (0 for an anchor), whether b is a body."""
        if self._radii_known is None:
            r_a = np.array([radius(a) for a, _, _ in self.ends], dtype=float)
            r_b = np.array([radius(b) if b is not None else 0.0 for _, b, _ in self.ends])
            paired = np.array([b is not None for _, b, _ in self.ends], dtype=bool)
            self._radii_known = (r_a, r_b.astype(float), paired)
        return self._radii_known

    def update(self, centres: Mapping[str, Any], radius: Any) -> None:
        """Re-shape every spring between its ends' centres (m); ``radius(id)`` of a body (m).

        The zig-zag runs from rim to rim (or rim to anchor), so it does not
        cover the disks, with 3 to 8 coils about as long as they are wide;
        when the rims touch it shrinks to a straight line between the centres.
        A spring with an end missing from ``centres`` is not drawn. The radii
        are read once (a body's size does not change while it is drawn).
        """
        n = len(self.ends)
        nowhere = (math.nan, math.nan)
        start = np.array([centres.get(a, nowhere) for a, _, _ in self.ends], dtype=float)
        end = np.array(
            [
                (centres.get(b, nowhere) if b is not None else (anchor or nowhere))
                for _, b, anchor in self.ends
            ],
            dtype=float,
        ).reshape(n, 2)
        start = start.reshape(n, 2)
        r_a, r_b, paired = self._radii(radius)
        shown = np.isfinite(start[:, 0]) & np.isfinite(end[:, 0])
        axis = end - start
        length = np.hypot(axis[:, 0], axis[:, 1])
        width = 0.6 * np.where(paired, np.minimum(r_a, r_b), r_a)
        coiled = shown & (length > r_a + r_b)
        groups: list[np.ndarray] = []
        straight = np.flatnonzero(shown & ~coiled)
        for k in straight.tolist():
            self.shapes[k].points = np.array([start[k], end[k]])
        if len(straight):
            groups.append((straight, np.stack((start[straight], end[straight]), axis=1)))
        for k in np.flatnonzero(~shown).tolist():
            self.shapes[k].points = np.zeros((0, 2))
        if coiled.any():
            index = np.flatnonzero(coiled)
            along = axis[index] / length[index, None]
            across_axis = np.column_stack((-along[:, 1], along[:, 0]))
            width_k = np.maximum(width[index], 1e-3)
            inner = length[index] - r_a[index] - r_b[index]
            coils = np.clip(np.round(inner / width_k), COILS_MIN, COILS_MAX).astype(int)
            p0 = start[index] + r_a[index, None] * along
            for c in np.unique(coils).tolist():
                group = coils == c
                s, offset = zigzag_offsets(c)
                points = (
                    p0[group, None, :]
                    + (s[None, :, None] * inner[group, None, None]) * along[group, None, :]
                    + (offset[None, :, None] * width_k[group, None, None])
                    * across_axis[group, None, :]
                )
                for k, shape in zip(index[group].tolist(), points, strict=True):
                    self.shapes[k].points = shape
                groups.append((index[group], points))
        self._draw(groups)

    def _draw(self, groups: list[tuple[np.ndarray, np.ndarray]]) -> None:
        """One NaN-separated curve of every spring but the chosen one; the chosen one apart."""
        pieces = []
        for springs, points in groups:
            keep = springs != self.chosen if self.chosen is not None else slice(None)
            kept = points[keep]
            gaps = np.full((len(kept), 1, 2), np.nan)
            pieces.append(np.concatenate((kept, gaps), axis=1).reshape(-1, 2))
        joined = np.concatenate(pieces) if pieces else np.zeros((0, 2))
        self.curve.setData(joined[:, 0], joined[:, 1], connect="finite")
        chosen = self.shapes[self.chosen].points if self.chosen is not None else np.zeros((0, 2))
        self.chosen_curve.setData(chosen[:, 0], chosen[:, 1])
