"""Contact geometry: boundary features and the kinematics of a disk touching them.

A boundary drawn by the user is split into *features* — the interiors of
segments and arcs and the sharp corners between them (vertices). Each feature
answers ``nearest(c)``: the distance from a point ``c`` to the feature, the unit
normal from the feature to ``c``, the closest point and the Hessian of the
distance, or ``None`` when ``c`` lies outside the feature's Voronoi region
(its projection falls beyond a segment's or arc's end: the end vertex takes
over there). Boundaries are thin walls, solid from both sides, so distances
are unsigned.

The contact of a disk (centre ``c``, radius ``r``, angular velocity ``ω``)
with a feature, or with another disk, is described by the gap ``g``, the
normal and tangential speeds ``u_n``, ``u_t`` and the curvature terms
``gamma_n``, ``gamma_t`` of MECHANICS §1 (paper 004 (18)): along any motion

    d²g/dt² = n·c̈ + gamma_n,        d(u_t)/dt = t·c̈ + r ω̇ + gamma_t.

They follow from differentiating ``g = d(c) − r`` twice: ``ġ = ∇d·ċ = n·ċ`` and
``g̈ = n·c̈ + ċᵀ∇²d ċ``, so ``gamma_n = ċᵀ hess ċ`` and, with ``ṅ = hess ċ``,
``gamma_t = ṫ·ċ``. A wheel rolling over a convex corner therefore has
``gamma_n = (t·ċ)²/r > 0``; paper 004 (26c) prints the opposite sign.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from solver.errors import InputError

TWO_PI = 2.0 * math.pi
_ANGLE_TOL = 1e-12

Point = tuple[float, float]


def _point(value: Any, name: str) -> Point:
    """Return ``value`` as a finite ``(x, y)`` tuple of floats, or raise InputError.

    A tuple of two finite floats (a point already checked) is that tuple.
    """
    if type(value) is tuple and len(value) == 2:
        x, y = value
        if type(x) is float and type(y) is float and math.isfinite(x) and math.isfinite(y):
            return value
    arr = np.asarray(value, dtype=float)
    if arr.shape == (2,):
        x, y = float(arr[0]), float(arr[1])
        if math.isfinite(x) and math.isfinite(y):
            return (x, y)
    raise InputError(f"`{name}` must be two finite numbers (x, y) in m, got {value!r}")


def _frozen_array(values: Any) -> np.ndarray:
    arr = np.array(values, dtype=float)
    arr.setflags(write=False)
    return arr


def _curvature_hessian(nx: float, ny: float, scale: float) -> np.ndarray:
    """Return ``scale * (I - n nᵀ)`` as a read-only 2×2 array."""
    return _frozen_array(
        [[scale * (1.0 - nx * nx), -scale * nx * ny], [-scale * nx * ny, scale * (1.0 - ny * ny)]]
    )


_ZERO_HESSIAN = _frozen_array(np.zeros((2, 2)))
"""Hessian of the distance to a straight line (1/m): shared, read-only."""


@dataclass(frozen=True, eq=False)
class Nearest:
    """Closest-point information of a point ``c`` with respect to one feature.

    Attributes
    ----------
    d : float
        Distance from ``c`` to the feature (m), ``>= 0``.
    n : numpy.ndarray
        Unit normal from the feature to ``c`` (shape (2,)); equals ``∇d``.
    point : numpy.ndarray
        Closest point on the feature (m, shape (2,)).
    hess : numpy.ndarray
        Hessian ``∇²d`` at ``c`` (1/m, shape (2, 2)): zero for a segment,
        ``(I − n nᵀ)/d`` for a vertex, ``±(I − n nᵀ)/|c − center|`` for an arc
        (``+`` outside the circle, ``−`` inside).
    """

    d: float
    n: np.ndarray
    point: np.ndarray
    hess: np.ndarray


@dataclass(frozen=True)
class Segment:
    """Interior of a straight wall from ``a`` to ``b`` (m); its ends are Vertex features.

    ``nearest`` answers only where the projection parameter ``s`` of ``c`` on
    the segment satisfies ``0 < s < 1``. On the wall itself (``d = 0``) the
    normal is the left normal ``(−e_y, e_x)/|e|``, ``e = b − a`` — the limit
    from the left side.
    """

    a: Point
    b: Point

    def __post_init__(self) -> None:
        a = _point(self.a, "a")
        b = _point(self.b, "b")
        if (b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2 == 0.0:
            raise InputError(f"segment end points `a` {a} and `b` {b} coincide: zero length")
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)

    def foot(self, cx: float, cy: float) -> tuple[float, float, float, float, float, float]:
        """The foot of the point ``(cx, cy)`` (m) on the segment's line, in floats.

        Returns ``(s, px, py, d, nx, ny)``: the foot's share ``s`` of the way
        from ``a`` to ``b`` (1), the foot (m), the point's distance from it
        (m) and the unit normal from the foot to the point; on the line
        (``d = 0``) the normal is the left one, the limit from that side, as
        :func:`disk_segment_contacts` takes it on arrays.
        Every float route that needs a disk's normal on a segment takes it
        here, so that they all have the same bits.
        """
        (ax, ay), (bx, by) = self.a, self.b
        ex, ey = bx - ax, by - ay
        length2 = ex * ex + ey * ey
        s = ((cx - ax) * ex + (cy - ay) * ey) / length2
        px, py = ax + s * ex, ay + s * ey
        wx, wy = cx - px, cy - py
        d = math.hypot(wx, wy)
        if d == 0.0:  # the limit from the left side (NaN stays NaN, as on arrays)
            length = math.sqrt(length2)
            return s, px, py, d, -ey / length, ex / length
        return s, px, py, d, wx / d, wy / d

    def nearest(self, c: Any) -> Nearest | None:
        """Closest point to ``c`` (m) on the open segment, or ``None`` beyond its ends."""
        s, px, py, d, nx, ny = self.foot(float(c[0]), float(c[1]))
        if not 0.0 < s < 1.0:
            return None
        return Nearest(d, _frozen_array((nx, ny)), _frozen_array((px, py)), _ZERO_HESSIAN)


def corner_foot(p: Point, cx: float, cy: float) -> tuple[float, float, float] | None:
    """``(d, nx, ny)``: the distance (m) of the point ``(cx, cy)`` from the corner ``p``.

    And the unit normal from ``p`` to the point, in floats; None at ``p``
    itself. Every route that needs a corner's (or a disk's centre's) normal
    takes it here (:func:`_corner_nearest`), so that they all have the same bits.
    """
    px, py = p
    wx, wy = cx - px, cy - py
    d = math.hypot(wx, wy)
    if d == 0.0:
        return None
    return d, wx / d, wy / d


def _corner_nearest(p: Point, cx: float, cy: float) -> Nearest | None:
    """Closest-point data of the point ``(cx, cy)`` (m) to the corner ``p`` (m)."""
    foot = corner_foot(p, cx, cy)
    if foot is None:
        return None
    d, nx, ny = foot
    return Nearest(
        d, _frozen_array((nx, ny)), _frozen_array(p), _curvature_hessian(nx, ny, 1.0 / d)
    )


@dataclass(frozen=True)
class Vertex:
    """A sharp corner (or a wall's free end) at ``p`` (m).

    ``nearest`` answers everywhere except at ``p`` itself, where the distance
    has no gradient (a disk centred on a corner has no contact normal).
    """

    p: Point

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", _point(self.p, "p"))

    def nearest(self, c: Any) -> Nearest | None:
        """Distance from ``c`` (m) to the corner; ``None`` when ``c`` is the corner."""
        return _corner_nearest(self.p, float(c[0]), float(c[1]))


@dataclass(frozen=True)
class Arc:
    """Interior of a circular arc: ``center`` (m), ``radius`` (m), angles in rad.

    The arc runs counter-clockwise from ``start`` to ``end``. Angles are
    normalised on construction: ``start`` to ``[0, 2π)`` and ``end`` to
    ``start + span`` with ``0 < span <= 2π``; ``end − start`` a nonzero
    multiple of 2π is the full circle (``span = 2π``, no end points), equal
    angles are refused. ``nearest`` answers for directions strictly inside the
    span (a full circle: every direction) and not at the centre, which is
    equidistant from the whole arc. On the arc itself (``d = 0``) the normal
    and Hessian are the limits from outside the circle (outward normal).
    """

    center: Point
    radius: float
    start: float
    end: float

    def __post_init__(self) -> None:
        center = _point(self.center, "center")
        radius = float(self.radius)
        if not (math.isfinite(radius) and radius > 0.0):
            raise InputError(
                f"arc `radius` must be a positive finite length in m, got {self.radius!r}"
            )
        start, end = float(self.start), float(self.end)
        if not (math.isfinite(start) and math.isfinite(end)):
            raise InputError(
                f"arc `start`/`end` must be finite angles in rad, got {start!r}, {end!r}"
            )
        raw = end - start
        span = raw % TWO_PI
        if span < _ANGLE_TOL or TWO_PI - span < _ANGLE_TOL:
            if abs(raw) < _ANGLE_TOL:
                raise InputError(f"arc `start` and `end` are equal ({start!r} rad): zero span")
            span = TWO_PI
        start = start % TWO_PI
        object.__setattr__(self, "center", center)
        object.__setattr__(self, "radius", radius)
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", start + span)

    @property
    def span(self) -> float:
        """Angle swept counter-clockwise from ``start`` to ``end`` (rad), in (0, 2π]."""
        return self.end - self.start

    @property
    def is_full_circle(self) -> bool:
        """True when the arc closes on itself (no end points)."""
        return self.span == TWO_PI

    def contains_angle(self, theta: float) -> bool:
        """True when the direction ``theta`` (rad) lies strictly inside the arc's span."""
        if self.is_full_circle:
            return True
        return 0.0 < (theta - self.start) % TWO_PI < self.span

    def point_at(self, theta: float) -> np.ndarray:
        """The point of the circle in direction ``theta`` (rad) from the centre (m)."""
        cx, cy = self.center
        return np.array([cx + self.radius * math.cos(theta), cy + self.radius * math.sin(theta)])

    def nearest(self, c: Any) -> Nearest | None:
        """Closest point to ``c`` (m) on the open arc, or ``None`` outside its angular span."""
        ox, oy = self.center
        vx, vy = float(c[0]) - ox, float(c[1]) - oy
        rho = math.hypot(vx, vy)
        if rho == 0.0 or not self.contains_angle(math.atan2(vy, vx)):
            return None
        ux, uy = vx / rho, vy / rho
        side = 1.0 if rho >= self.radius else -1.0
        point = (ox + self.radius * ux, oy + self.radius * uy)
        return Nearest(
            abs(rho - self.radius),
            _frozen_array((side * ux, side * uy)),
            _frozen_array(point),
            _curvature_hessian(ux, uy, side / rho),
        )


Feature = Segment | Vertex | Arc


def bounding_box(feature: Feature) -> tuple[float, float, float, float]:
    """Axis-aligned bounding box ``(xmin, ymin, xmax, ymax)`` of a feature (m)."""
    if isinstance(feature, Vertex):
        x, y = feature.p
        return (x, y, x, y)
    if isinstance(feature, Segment):
        (ax, ay), (bx, by) = feature.a, feature.b
        return (min(ax, bx), min(ay, by), max(ax, bx), max(ay, by))
    if isinstance(feature, Arc):
        cx, cy = feature.center
        r = feature.radius
        if feature.is_full_circle:
            return (cx - r, cy - r, cx + r, cy + r)
        ends = [feature.point_at(feature.start), feature.point_at(feature.end)]
        xs = [p[0] for p in ends]
        ys = [p[1] for p in ends]
        for k, (dx, dy) in enumerate(((r, 0.0), (0.0, r), (-r, 0.0), (0.0, -r))):
            if feature.contains_angle(k * math.pi / 2):
                xs.append(cx + dx)
                ys.append(cy + dy)
        return (min(xs), min(ys), max(xs), max(ys))
    raise InputError(f"`feature` must be a Segment, Vertex or Arc, got {type(feature).__name__}")


def boundary_features(boundary: Any) -> list[tuple[str, Feature]]:
    """Split a scene boundary into its features, each with its contact-id suffix.

    Parameters
    ----------
    boundary : object
        A scene boundary with ``type`` in ``{"segment", "polyline", "arc"}`` and
        the fields of the scene file: ``a``, ``b`` (segment); ``points``
        (polyline); ``center``, ``radius``, ``start_deg``, ``end_deg`` (arc).
        Lengths in m, angles in degrees; read by attribute, so any object with
        these attributes works.

    Returns
    -------
    list of (str, Feature)
        Segment: ``("", Segment)``, ``("#v0", Vertex(a))``, ``("#v1", Vertex(b))``.
        Polyline: ``("#s<k>", Segment)`` for the k-th segment and
        ``("#v<k>", Vertex)`` for every point, ends included.
        Arc: ``("", Arc)`` and, unless it is a full circle, ``("#v0", ...)``
        and ``("#v1", ...)`` for its start and end points. As in the scene
        file, the arc covers the polar angles between ``start_deg`` and
        ``end_deg`` in either order: counter-clockwise from the smaller to the
        larger, whose points are ``#v0`` and ``#v1``.
    """
    kind = getattr(boundary, "type", None)
    if kind == "segment":
        segment = Segment(boundary.a, boundary.b)
        return [("", segment), ("#v0", Vertex(segment.a)), ("#v1", Vertex(segment.b))]
    if kind == "polyline":
        points = [_point(p, f"points[{k}]") for k, p in enumerate(boundary.points)]
        if len(points) < 2:
            raise InputError(f"polyline `points` needs at least 2 points, got {len(points)}")
        features: list[tuple[str, Feature]] = []
        for k, (a, b) in enumerate(itertools.pairwise(points)):
            if a == b:
                raise InputError(f"polyline `points[{k}]` and `points[{k + 1}]` coincide at {a}")
            features.append((f"#s{k}", Segment(a, b)))
        features.extend((f"#v{k}", Vertex(p)) for k, p in enumerate(points))
        return features
    if kind == "arc":
        # Counter-clockwise from start_deg to end_deg, as the scene format says.
        start, end = math.radians(boundary.start_deg), math.radians(boundary.end_deg)
        arc = Arc(boundary.center, boundary.radius, start, end)
        if arc.is_full_circle:
            return [("", arc)]
        return [
            ("", arc),
            ("#v0", Vertex(arc.point_at(arc.start))),
            ("#v1", Vertex(arc.point_at(arc.end))),
        ]
    raise InputError(f"boundary `type` must be 'segment', 'polyline' or 'arc', got {kind!r}")


@dataclass(frozen=True, eq=False)
class DiskContact:
    """Kinematics of one disk contact at one instant (MECHANICS §1).

    Attributes
    ----------
    g : float
        Gap (m): distance minus radii; negative means overlap.
    n : numpy.ndarray
        Unit normal from the obstacle to the disk (shape (2,)).
    t : numpy.ndarray
        Unit tangent ``(n_y, −n_x)``.
    point : numpy.ndarray
        Contact point on the obstacle's surface (m): the feature's closest
        point, or for a disk–disk contact the point of disk j facing disk i.
    u_n : float
        Normal speed ``dg/dt`` (m/s); negative means approaching.
    u_t : float
        Slip speed of the disk's contact point against the obstacle along
        ``t``, rolling term included (m/s).
    gamma_n : float
        Normal curvature term (m/s²): ``d²g/dt² = n·c̈ + gamma_n``.
    gamma_t : float
        Tangential curvature term (m/s²): ``du_t/dt = t·c̈ + r ω̇ + gamma_t``.
    """

    g: float
    n: np.ndarray
    t: np.ndarray
    point: np.ndarray
    u_n: float
    u_t: float
    gamma_n: float
    gamma_t: float


def _velocity(value: Any, name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape != (2,):
        raise InputError(f"`{name}` must be a 2-vector (m or m/s), got shape {arr.shape}")
    return arr


def _contact(
    gap: float,
    n: np.ndarray,
    hess: np.ndarray,
    point: np.ndarray,
    rel_velocity: np.ndarray,
    rolling: float,
) -> DiskContact:
    """Assemble a DiskContact from the distance derivatives and the relative velocity.

    A straight feature's Hessian (``_ZERO_HESSIAN``, the object itself) gives
    ``ṅ = (0, 0)`` and curvature terms ``+0.0`` for every finite velocity
    (signs of zero included, as the products below form them): they are
    written as such.
    """
    nx, ny = n.tolist()
    t = _frozen_array((ny, -nx))
    if hess is _ZERO_HESSIAN and all(map(math.isfinite, rel_velocity.tolist())):
        gamma_n = gamma_t = 0.0
    else:
        n_dot = hess.dot(rel_velocity)
        n_dot_x, n_dot_y = n_dot.tolist()
        t_dot = np.array((n_dot_y, -n_dot_x))
        gamma_n, gamma_t = float(rel_velocity.dot(n_dot)), float(t_dot.dot(rel_velocity))
    return DiskContact(
        g=float(gap),
        n=n,
        t=t,
        point=point,
        u_n=float(n.dot(rel_velocity)),
        u_t=float(t.dot(rel_velocity) + rolling),
        gamma_n=gamma_n,
        gamma_t=gamma_t,
    )


def disk_contact_from_nearest(near: Nearest, cdot: Any, r: float, omega: float) -> DiskContact:
    """Contact kinematics of a disk whose centre's closest-point data is ``near``.

    Parameters
    ----------
    near : Nearest
        ``feature.nearest(c)`` for the disk's centre ``c``.
    cdot : array_like, shape (2,)
        Velocity of the centre (m/s).
    r : float
        Disk radius (m).
    omega : float
        Angular velocity (rad/s), counter-clockwise positive.

    Returns
    -------
    DiskContact
        ``g = d − r``, ``u_n = n·ċ``, ``u_t = t·ċ + r ω``, ``gamma_n = ċᵀ hess ċ``,
        ``gamma_t = ṫ·ċ`` with ``ṅ = hess ċ``, ``ṫ = (ṅ_y, −ṅ_x)``.
    """
    return _contact(near.d - r, near.n, near.hess, near.point, _velocity(cdot, "cdot"), r * omega)


def disk_feature_contact(
    feature: Feature, c: Any, cdot: Any, r: float, omega: float
) -> DiskContact | None:
    """Contact kinematics of a disk against a boundary feature.

    Parameters
    ----------
    feature : Segment, Vertex or Arc
        The obstacle.
    c, cdot : array_like, shape (2,)
        Centre (m) and its velocity (m/s).
    r : float
        Disk radius (m).
    omega : float
        Angular velocity (rad/s), counter-clockwise positive.

    Returns
    -------
    DiskContact or None
        ``None`` when ``c`` is outside the feature's Voronoi region (see
        ``nearest`` of each feature); otherwise as in
        :func:`disk_contact_from_nearest`.
    """
    near = feature.nearest(_velocity(c, "c"))
    if near is None:
        return None
    return disk_contact_from_nearest(near, cdot, r, omega)


@dataclass(frozen=True, eq=False)
class SegmentContacts:
    """Kinematics of one disk on one segment at many instants (one row each).

    Attributes
    ----------
    inside : numpy.ndarray of bool
        The centre projects into the segment's interior (``Segment.nearest``
        answers); the other attributes are meaningful only there.
    n : numpy.ndarray, shape (K, 2)
        Unit normal from the segment to the centre.
    point : numpy.ndarray, shape (K, 2)
        Closest point of the segment (m).
    u_n, u_t : numpy.ndarray, shape (K,)
        Normal and slip speeds (m/s), as in :class:`DiskContact`.
    """

    inside: np.ndarray
    n: np.ndarray
    point: np.ndarray
    u_n: np.ndarray
    u_t: np.ndarray


def disk_segment_contacts(
    segment: Segment, c: np.ndarray, cdot: np.ndarray, r: float, omega: np.ndarray
) -> SegmentContacts:
    """:func:`disk_feature_contact` on a segment, vectorised over rows of states.

    Every row is computed with the same floating-point operations as the
    scalar function, so the results are identical to it.

    Parameters
    ----------
    segment : Segment
        The obstacle.
    c, cdot : numpy.ndarray, shape (K, 2)
        Centres (m) and their velocities (m/s).
    r : float
        Disk radius (m).
    omega : numpy.ndarray, shape (K,)
        Angular velocities (rad/s), counter-clockwise positive.
    """
    (ax, ay), (bx, by) = segment.a, segment.b
    ex, ey = bx - ax, by - ay
    length2 = ex * ex + ey * ey
    cx, cy = c[:, 0], c[:, 1]
    s = ((cx - ax) * ex + (cy - ay) * ey) / length2
    point = np.column_stack((ax + s * ex, ay + s * ey))
    w = c - point
    d = np.fromiter(map(math.hypot, w[:, 0].tolist(), w[:, 1].tolist()), float, len(w))
    on_wall = d == 0.0  # the limit from the left side, as Segment.nearest
    with np.errstate(invalid="ignore", divide="ignore"):
        n = w / d[:, None]
    if np.any(on_wall):
        length = math.sqrt(length2)
        n[on_wall] = (-ey / length, ex / length)
    t = np.column_stack((n[:, 1], -n[:, 0]))
    return SegmentContacts(
        inside=(s > 0.0) & (s < 1.0),
        n=n,
        point=point,
        u_n=np.vecdot(n, cdot),
        u_t=np.vecdot(t, cdot) + r * omega,
    )


def disk_segment_contact(
    segment: Segment, c: np.ndarray, cdot: np.ndarray, r: float, omega: float
) -> tuple[bool, float, float, float, float, float, float]:
    """:func:`disk_segment_contacts` at one instant, in floats: the same operations, the same bits.

    Parameters
    ----------
    segment : Segment
        The obstacle.
    c, cdot : numpy.ndarray, shape (2,)
        Centre (m) and its velocity (m/s).
    r : float
        Disk radius (m).
    omega : float
        Angular velocity (rad/s), counter-clockwise positive.

    Returns
    -------
    tuple
        ``(inside, u_n, u_t, point_x, point_y, n_x, n_y)``: as the row of
        :class:`SegmentContacts` (m/s, m, 1). The two dot products are
        numpy's, as ``numpy.vecdot`` forms them (fused where it fuses).
    """
    s, px, py, _, nx, ny = segment.foot(*c.tolist())
    u_n = float(np.array((nx, ny)).dot(cdot))
    u_t = float(np.array((ny, -nx)).dot(cdot)) + r * omega
    return 0.0 < s < 1.0, u_n, u_t, px, py, nx, ny


def disk_disk_contact(
    ci: Any,
    cdoti: Any,
    ri: float,
    omegai: float,
    cj: Any,
    cdotj: Any,
    rj: float,
    omegaj: float,
) -> DiskContact | None:
    """Contact kinematics of disk i against disk j (j plays the obstacle).

    Parameters
    ----------
    ci, cj : array_like, shape (2,)
        Centres (m).
    cdoti, cdotj : array_like, shape (2,)
        Centre velocities (m/s).
    ri, rj : float
        Radii (m).
    omegai, omegaj : float
        Angular velocities (rad/s), counter-clockwise positive.

    Returns
    -------
    DiskContact or None
        ``n`` from j to i, ``g = |ci − cj| − ri − rj``, ``u_n = n·(ċi − ċj)``,
        ``u_t = t·(ċi − ċj) + ri ωi + rj ωj`` (slip of i's contact point
        against j's), ``gamma_n``, ``gamma_t`` as for a feature with
        ``hess = (I − n nᵀ)/|ci − cj|``; ``point = cj + rj n``. ``None`` when
        the centres coincide (no normal).
    """
    ci = _velocity(ci, "ci")
    near = _corner_nearest(_point(cj, "cj"), float(ci[0]), float(ci[1]))
    if near is None:
        return None
    rel_velocity = _velocity(cdoti, "cdoti") - _velocity(cdotj, "cdotj")
    point = _frozen_array(near.point + rj * near.n)
    return _contact(
        near.d - ri - rj, near.n, near.hess, point, rel_velocity, ri * omegai + rj * omegaj
    )


__all__ = [
    "Arc",
    "DiskContact",
    "Feature",
    "Nearest",
    "Point",
    "Segment",
    "SegmentContacts",
    "Vertex",
    "boundary_features",
    "bounding_box",
    "corner_foot",
    "disk_contact_from_nearest",
    "disk_disk_contact",
    "disk_feature_contact",
    "disk_segment_contact",
    "disk_segment_contacts",
]
