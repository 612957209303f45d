"""The physical checks of a scene (:class:`solver.scene.Scene`'s validator): ids, the view,
references between parts, boundaries, bodies overlapping at t = 0 and the distances that
decide it (``disk_centre``, ``distance_to_boundary``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

from solver.broadphase import disk_pairs
from solver.scene_fields import (
    MAGNITUDES,
    TOUCH_TOLERANCE,
    _show,
)
from solver.scene_parts import (
    ArcBoundary,
    AxleCart,
    Bead,
    PolylineBoundary,
    ScheduledImpulse,
    SegmentBoundary,
    SetAction,
    Wheel,
)

if TYPE_CHECKING:
    from solver.scene import Scene


# ------------------------------------------------------------ physical validation

Loc = tuple[str | int, ...]
"""A location in the scene object, as pydantic reports it: keys and list indices."""


Point = tuple[float, float]
"""A point of the plane (m)."""


def _scene_problems(scene: Scene) -> Iterator[tuple[Loc, str]]:
    """Every cross-field problem of an otherwise well-typed scene, as (location, message)."""
    yield from _view_problems(scene)
    yield from _id_problems(scene)
    yield from _reference_problems(scene)
    degenerate = list(_boundary_problems(scene))
    yield from degenerate
    if not degenerate:
        yield from _overlap_problems(scene)


def _view_problems(scene: Scene) -> Iterator[tuple[Loc, str]]:
    if scene.view == "side":
        for i, body in enumerate(scene.bodies):
            if isinstance(body, AxleCart):
                yield ("bodies", i, "type"), 'an axle cart needs "view": "top"'
        return
    if scene.gravity != (0.0, 0.0):
        yield ("gravity",), f"must be [0, 0] in a top view, got {list(scene.gravity)}"
    for i, body in enumerate(scene.bodies):
        if not isinstance(body, AxleCart):
            yield ("bodies", i, "type"), f"a top view holds axle carts only, got {body.type!r}"
    for key in ("boundaries", "springs", "forces"):
        if getattr(scene, key):
            yield (key,), "not supported in a top view (axle carts only)"


def _id_problems(scene: Scene) -> Iterator[tuple[Loc, str]]:
    seen: dict[str, str] = {}
    for key in ("boundaries", "bodies"):
        for i, item in enumerate(getattr(scene, key)):
            here = f"{key}[{i}]"
            if item.id in seen:
                yield (key, i, "id"), f"duplicate id {item.id!r} (also {seen[item.id]})"
            else:
                seen[item.id] = here


def _reference_problems(scene: Scene) -> Iterator[tuple[Loc, str]]:
    bodies = {body.id: body for body in scene.bodies}

    def missing(body_id: str) -> str:
        return f"no body with id {body_id!r}"

    for i, spring in enumerate(scene.springs):
        for end in ("a", "b"):
            body_id = getattr(spring, end)
            if body_id is not None and body_id not in bodies:
                yield ("springs", i, end), missing(body_id)
        if spring.b == spring.a:
            yield ("springs", i, "b"), f"a spring cannot join body {spring.a!r} to itself"
    for i, force in enumerate(scene.forces):
        if force.body not in bodies:
            yield ("forces", i, "body"), missing(force.body)
    for i, impulse in enumerate(scene.impulses):
        if impulse.body not in bodies:
            yield ("impulses", i, "body"), missing(impulse.body)
        elif not isinstance(bodies[impulse.body], AxleCart):
            kind = bodies[impulse.body].type
            yield ("impulses", i, "body"), f"impulses act on axle carts only, got a {kind}"
        elif impulse.frame == "body":
            yield from _body_frame_point_problems(i, impulse, bodies[impulse.body])
    for i, action in enumerate(scene.actions):
        if scene.view != "side":
            yield ("actions", i), "timed actions apply to side-view scenes only"
        elif isinstance(action, SetAction):
            if action.restitution is None and action.friction is None and action.gravity is None:
                yield ("actions", i), "give at least one of restitution, friction, gravity"
        elif action.body not in bodies:
            yield ("actions", i, "body"), missing(action.body)


BODY_POINT_RTOL = 1e-9
"""Relative tolerance (of the half-length) of a body-frame impulse point's place on the axle."""


def _body_frame_point_problems(
    index: int, impulse: ScheduledImpulse, cart: AxleCart
) -> Iterator[tuple[Loc, str]]:
    along, across = impulse.point
    slack = BODY_POINT_RTOL * cart.half_length
    if abs(across) > slack or abs(along) > cart.half_length + slack:
        yield (
            ("impulses", index, "point"),
            f"a body-frame point must lie on the axle, [s, 0] with |s| <= {cart.half_length:g} m, "
            f"got {_show(list(impulse.point))}",
        )


def _wall_piece_problem(a: Point, b: Point) -> str | None:
    """Why the straight wall piece from ``a`` to ``b`` cannot be one, or None.

    A piece shorter than the smallest length of ``MAGNITUDES`` (1e-6 m) is
    refused: the contact geometry divides by its squared length, which for
    ends 1e-300 m apart is 0.
    """
    if a == b:
        return f"zero-length segment: b equals a = {list(b)}"
    length = math.hypot(b[0] - a[0], b[1] - a[1])
    smallest = MAGNITUDES["length"][0]
    if length < smallest:
        return f"a wall {length:.3g} m long: walls are at least {smallest:g} m long"
    return None


def _boundary_problems(scene: Scene) -> Iterator[tuple[Loc, str]]:
    for i, boundary in enumerate(scene.boundaries):
        if isinstance(boundary, SegmentBoundary):
            problem = _wall_piece_problem(boundary.a, boundary.b)
            if problem is not None:
                yield ("boundaries", i, "b"), problem
        elif isinstance(boundary, PolylineBoundary):
            for k in range(1, len(boundary.points)):
                a, b = boundary.points[k - 1], boundary.points[k]
                if a == b:
                    yield (("boundaries", i, "points", k), f"repeats the previous point {list(b)}")
                elif (problem := _wall_piece_problem(a, b)) is not None:
                    yield ("boundaries", i, "points", k), problem
        elif isinstance(boundary, ArcBoundary):
            sweep = abs(boundary.end_deg - boundary.start_deg)
            if not 0 < sweep <= 360:
                yield (
                    ("boundaries", i, "end_deg"),
                    f"must differ from start_deg by > 0 and <= 360 degrees, got {sweep:g}",
                )


def _overlap_problems(scene: Scene) -> Iterator[tuple[Loc, str]]:
    disks = [(i, body) for i, body in enumerate(scene.bodies) if isinstance(body, (Wheel, Bead))]
    for i, body in disks:
        centre, radius = disk_centre(body), body.radius
        for boundary in scene.boundaries:
            distance = distance_to_boundary(centre, boundary)
            penetration = radius - distance
            # a compliant boundary may carry a body pressed into it (less than its radius)
            soft = scene.compliance_for(boundary) is not None and distance > 0.0
            if not soft and penetration > TOUCH_TOLERANCE * _length_scale(centre, radius):
                yield (
                    ("bodies", i),
                    f"overlaps boundary {boundary.id!r} at t = 0 (penetration {penetration:.3g} m)",
                )
    if len(disks) < 2:
        return
    centres = [disk_centre(body) for _, body in disks]
    radii = [body.radius for _, body in disks]
    # Disks at one centre would put every pair of them into one grid cell (n² pairs).
    first_at: dict[Point, int] = {}
    coincident = False
    for n, centre in enumerate(centres):
        if centre in first_at:
            coincident = True
            yield (
                ("bodies", disks[n][0]),
                f"has the same centre as body {disks[first_at[centre]][1].id!r} at t = 0",
            )
        else:
            first_at[centre] = n
    if coincident:
        return
    # Only pairs the grid broadphase finds within touching distance can overlap.
    for n, m in disk_pairs(centres, radii, 0.0).pairs:
        (_, body), (j, other) = disks[n], disks[m]
        ci, cj = centres[n], centres[m]
        penetration = body.radius + other.radius - math.dist(ci, cj)
        scale = max(_length_scale(ci, body.radius), _length_scale(cj, other.radius))
        if penetration > TOUCH_TOLERANCE * scale:
            yield (
                ("bodies", j),
                f"overlaps body {body.id!r} at t = 0 (penetration {penetration:.3g} m)",
            )


def _length_scale(centre: tuple[float, float], radius: float) -> float:
    return max(1.0, abs(centre[0]), abs(centre[1]), radius)


# -------------------------------------------------------------- distances at t = 0


def disk_centre(body: Wheel | Bead) -> Point:
    """Centre of a wheel or bead at t = 0 (m)."""
    if isinstance(body, Bead):
        return (body.x, body.rail_y)
    return body.position


def _distance_to_segment(p: Point, a: Point, b: Point) -> float:
    ab = (b[0] - a[0], b[1] - a[1])
    ap = (p[0] - a[0], p[1] - a[1])
    length2 = ab[0] ** 2 + ab[1] ** 2
    if length2 == 0.0:  # a point (or ends so close that the square underflows)
        return math.dist(p, a)
    s = (ap[0] * ab[0] + ap[1] * ab[1]) / length2
    s = min(1.0, max(0.0, s))
    return math.dist(p, (a[0] + s * ab[0], a[1] + s * ab[1]))


def _distance_to_arc(p: Point, arc: ArcBoundary) -> float:
    span = (arc.end_deg - arc.start_deg) % 360 or 360
    dx, dy = p[0] - arc.center[0], p[1] - arc.center[1]
    from_centre = math.hypot(dx, dy)
    if span == 360 or from_centre == 0:
        return abs(from_centre - arc.radius)
    if (math.degrees(math.atan2(dy, dx)) - arc.start_deg) % 360 <= span:
        return abs(from_centre - arc.radius)
    ends = [
        (
            arc.center[0] + arc.radius * math.cos(math.radians(d)),
            arc.center[1] + arc.radius * math.sin(math.radians(d)),
        )
        for d in (arc.start_deg, arc.start_deg + span)
    ]
    return min(math.dist(p, end) for end in ends)


def distance_to_boundary(
    point: Point, boundary: SegmentBoundary | PolylineBoundary | ArcBoundary
) -> float:
    """Euclidean distance (m) from ``point`` to the nearest point of ``boundary``."""
    if isinstance(boundary, SegmentBoundary):
        return _distance_to_segment(point, boundary.a, boundary.b)
    if isinstance(boundary, PolylineBoundary):
        pts = boundary.points
        return min(_distance_to_segment(point, pts[k], pts[k + 1]) for k in range(len(pts) - 1))
    return _distance_to_arc(point, boundary)
