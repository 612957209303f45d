"""Where a disk meets a boundary feature: regions, continuations and junctions.

A segment or arc counts ``band`` beyond its ends (:func:`in_region`); an
active contact's right-hand side stays defined a hair beyond them through the
feature's smooth continuation (:func:`continued_nearest`); a vertex where
segments or arcs end knows them (:func:`junction_neighbours`), since they
hide it wherever they reach (:func:`solver.contact_pairs.vertex_hidden`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from solver.errors import SolverError
from solver.event_tolerances import JUNCTION_TOL
from solver.geometry import Arc, Nearest, Segment, Vertex


def continued_nearest(feature: Any, c: np.ndarray) -> Nearest:
    """Closest-point data of the feature's smooth continuation (line or full circle).

    Used only to keep the right-hand side of an active contact defined for
    stage points a hair beyond the feature's end, where the ``region`` event
    stops the phase.
    """
    if isinstance(feature, Segment):
        a, b = np.asarray(feature.a), np.asarray(feature.b)
        e = b - a
        p = a + e * float((c - a) @ e / (e @ e))
        w = c - p
        d = float(np.hypot(*w))
        n = w / d if d > 0 else np.array([-e[1], e[0]]) / float(np.hypot(*e))
        return Nearest(d, n, p, np.zeros((2, 2)))
    if isinstance(feature, Arc):
        full = Arc(feature.center, feature.radius, 0.0, 2.0 * math.pi)
        near = full.nearest(c)
        if near is not None:
            return near
    raise SolverError(f"no contact normal for a disk centred at {tuple(c)} on {feature!r}")


def _straight_nearest(feature: Any, c: np.ndarray) -> tuple[float, np.ndarray] | None:
    """Distance (m) and unit normal of ``c`` to a segment or a vertex: its ``nearest``'s numbers.

    The arithmetic of :meth:`solver.geometry.Segment.nearest` and
    :meth:`solver.geometry.Vertex.nearest` without their :class:`Nearest`
    (its closest point and Hessian are not needed for a gap and its speed).
    None where those give None (beyond a segment's ends, on a corner) and
    for an arc: the feature's own ``nearest`` answers then.
    """
    cx, cy = float(c[0]), float(c[1])
    if isinstance(feature, Segment):
        s, _, _, d, nx, ny = feature.foot(cx, cy)
        if not (0.0 < s < 1.0 and d > 0.0):
            return None
        return d, np.array((nx, ny))
    if isinstance(feature, Vertex):
        px, py = feature.p
        wx, wy = cx - px, cy - py
        d = math.hypot(wx, wy)
        if d == 0.0:
            return None
    else:
        return None
    return d, np.array((wx / d, wy / d))


def in_region(feature: Any, c: np.ndarray, band: float) -> bool:
    """True when ``c`` (m) projects onto ``feature`` (segment or arc) or ``band`` (m) beyond it."""
    # scalar arithmetic: it runs at every evaluation of an active contact's event functions
    cx, cy = float(c[0]), float(c[1])
    if isinstance(feature, Segment):
        (ax, ay), (bx, by) = feature.a, feature.b
        ex, ey = bx - ax, by - ay
        length = math.hypot(ex, ey)
        along = ((cx - ax) * ex + (cy - ay) * ey) / length
        return -band < along < length + band
    if isinstance(feature, Arc):
        if feature.is_full_circle:
            return True
        wx, wy = cx - feature.center[0], cy - feature.center[1]
        if wx == 0.0 and wy == 0.0:
            return False
        tol = band / feature.radius
        angle = (math.atan2(wy, wx) - feature.start + tol) % (2.0 * math.pi)
        return 0.0 < angle < feature.span + 2.0 * tol
    return False


def junction_neighbours(features: list[Any]) -> list[tuple[Any, ...]]:
    """Per feature: for a vertex, the segments and arcs with an end point on it; else ``()``."""
    ends = []
    for feature in features:
        if isinstance(feature, Segment):
            ends.append((feature, *feature.a))
            ends.append((feature, *feature.b))
        elif isinstance(feature, Arc) and not feature.is_full_circle:
            ends.append((feature, *feature.point_at(feature.start).tolist()))
            ends.append((feature, *feature.point_at(feature.end).tolist()))
    found = []
    hypot = np.hypot  # on floats: the distances the arrays of the ends gave
    for feature in features:
        if not isinstance(feature, Vertex):
            found.append(())
            continue
        px, py = feature.p  # floats (geometry._point)
        # hypot is at least the larger of |dx| and |dy| (libm's hypot is faithfully
        # rounded): only an end within JUNCTION_TOL along both axes is measured
        near = [
            f
            for f, x, y in ends
            if abs(x - px) <= JUNCTION_TOL
            and abs(y - py) <= JUNCTION_TOL
            and float(hypot(x - px, y - py)) <= JUNCTION_TOL
        ]
        found.append(tuple(dict.fromkeys(near)) if len(near) > 1 else tuple(near))
    return found
