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
from PySide6.QtCore import Qt

COILS_MIN, COILS_MAX = 3, 8
"""Coils of a spring's zig-zag: about as long as it is wide, within these bounds."""
LEAD = 0.15
"""Share of a spring's length drawn straight at each end."""
COIL_PX_MIN = 1.0
"""Below this width of the widest zig-zag on screen (px) the springs are drawn straight."""


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


class SpringCurve(pg.PlotCurveItem):
    """The zig-zags of many springs as one NaN-separated curve, drawn straight when too fine.

    Zoomed out until the widest zig-zag is under ``COIL_PX_MIN`` pixels wide
    (a 2000-bead chain seen whole: 0.03 m coils at 0.3 m per pixel), the
    coils cannot be seen, and painting their 40 000 segments took 25-70 ms a
    frame: the springs are then drawn as one straight segment each between
    their ends. The curve's data (``getData``) are the zig-zags either way.
    """

    def __init__(self, pen: Any) -> None:
        super().__init__(pen=pen, connect="finite")
        self.coil_width = 0.0
        """Width of the widest zig-zag, m."""
        self._straight = np.zeros((0, 2))
        self._straight_path: Any = None

    def set_springs(self, zigzags: np.ndarray, straight: np.ndarray, coil_width: float) -> None:
        """The zig-zags (NaN-separated rows, m), each spring's ends (rows in pairs), widest coil."""
        self._straight = straight
        self._straight_path = None
        self.coil_width = float(coil_width)
        self.setData(zigzags[:, 0], zigzags[:, 1], connect="finite")

    def drawn_straight(self) -> bool:
        """True when the view is zoomed out so far that the springs are drawn straight."""
        pixel = min(self.pixelWidth(), self.pixelHeight())
        return pixel > 0.0 and self.coil_width < COIL_PX_MIN * pixel

    def paint(self, p: Any, opt: Any, widget: Any) -> None:
        """The zig-zags, or one segment per spring when they would be under a pixel wide."""
        if not self.drawn_straight():
            super().paint(p, opt, widget)
            return
        if self._straight_path is None:
            xy = self._straight
            self._straight_path = pg.arrayToQPath(xy[:, 0], xy[:, 1], connect="pairs")
        pen = pg.mkPen(self.opts["pen"])
        pen.setCapStyle(Qt.PenCapStyle.FlatCap)  # round caps: 40 ms for 2000 segments, flat 1
        p.setPen(pen)
        p.drawPath(self._straight_path)


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
        self.curve = SpringCurve(pen)
        self._radii_known: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._rows_known: tuple[Mapping[str, int], Any] | None = None
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

    def _end_rows(self, index: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per spring: the row of end a and of end b in ``xy`` (``index[id]``), and b's anchor.

        A missing body (or an anchor for b) has the row -1; the anchor is NaN
        unless b is an anchor. Kept while ``index`` is the same object.
        """
        known = self._rows_known
        if known is not None and known[0] is index:
            return known[1]
        n = len(self.ends)
        row_a = np.fromiter((index.get(a, -1) for a, _, _ in self.ends), dtype=int, count=n)
        row_b = np.fromiter(
            (index.get(b, -1) if b is not None else -1 for _, b, _ in self.ends),
            dtype=int,
            count=n,
        )
        anchors = np.array(
            [
                anchor if b is None and anchor is not None else (math.nan, math.nan)
                for _, b, anchor in self.ends
            ],
            dtype=float,
        ).reshape(n, 2)
        rows = (row_a, row_b, anchors)
        self._rows_known = (index, rows)
        return rows

    def update_at(self, index: Mapping[str, int], xy: np.ndarray, radius: Any) -> None:
        """Re-shape every spring between its ends' centres; ``radius(id)`` of a body (m).

        The centres are the rows of ``xy`` (m, shape (n, 2)), ``index[id]`` a
        body's row. The zig-zag runs from rim to rim (or rim to anchor), so it
        does not cover the disks, with 3 to 8 coils about as long as they are
        wide; when the rims touch it shrinks to a straight line between the
        centres. A spring with an end missing from ``index`` is not drawn. The
        radii are read once (a body's size does not change while it is drawn),
        and the ends' rows once per ``index`` object: an animation passes the
        same index with each frame's centres, so a frame of 2000 springs costs
        a few array operations.
        """
        n = len(self.ends)
        row_a, row_b, anchors = self._end_rows(index)
        padded = np.vstack((np.asarray(xy, dtype=float).reshape(-1, 2), [(math.nan, math.nan)]))
        start = padded[row_a]  # row -1: the NaN row, not drawn
        end = np.where((row_b >= 0)[:, None], padded[row_b], anchors).reshape(n, 2)
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
        width_shown = width[coiled].max() if coiled.any() else 0.0
        self._draw(groups, np.stack((start, end), axis=1)[shown], width_shown)

    def _draw(
        self, groups: list[tuple[np.ndarray, np.ndarray]], ends: np.ndarray, coil_width: float
    ) -> None:
        """One NaN-separated curve of every spring but the chosen one; the chosen one apart.

        ``ends`` (n, 2, 2): each shown spring's two ends, drawn when the view is
        zoomed out too far to see the coils (``SpringCurve``).
        """
        pieces = []
        for springs, points in groups:
            keep = springs != self.chosen if self.chosen is not None else slice(None)
            kept = points[keep]
            gaps = np.full((len(kept), 1, 2), np.nan)
            pieces.append(np.concatenate((kept, gaps), axis=1).reshape(-1, 2))
        joined = np.concatenate(pieces) if pieces else np.zeros((0, 2))
        self.curve.set_springs(joined, ends.reshape(-1, 2), coil_width)
        chosen = self.shapes[self.chosen].points if self.chosen is not None else np.zeros((0, 2))
        self.chosen_curve.setData(chosen[:, 0], chosen[:, 1])
