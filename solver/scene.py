"""The scene: what the user drew, as validated, immutable models, and its JSON file.

A scene file is a JSON object with ``"format": "impactgui-scene"`` and
``"version": 2`` (see DESIGN.md, "Scene file"; version 1 files are read as they
were). Every model attribute below is
spelled exactly as its JSON key, so ``Scene.model_validate(json_object)`` and
``scene_to_dict(scene)`` are inverse to each other. Unknown keys are errors,
every number must be finite, and all models are frozen (edit with
``model.model_copy(update={...})`` and validate again with
``parse_scene(scene_to_dict(...))``).

Defaults (the one place they are documented; SI units)
------------------------------------------------------
=====================================  =========================================
key                                    default when the key is missing
=====================================  =========================================
``title``                              ``"Untitled"``
``description``                        ``""`` (one sentence for the Presets menu)
``view``                               ``"side"`` (``"top"``: axle carts only)
``gravity``                            ``[0, -9.81]`` m/s² in a side view,
                                       ``[0, 0]`` in a top view
``contact.restitution``                ``0.5``
``contact.friction``                   ``0.0``
``contact.impact_law``                 ``"staged"``
``boundaries``, ``bodies``,            ``[]``
``springs``, ``forces``, ``impulses``
boundary ``restitution`` / ``friction`` ``null``: use the ``contact`` value
wheel ``angle``                        ``0`` rad
wheel ``velocity``                     ``[0, 0]`` m/s
wheel ``angular_velocity``             ``0`` rad/s
bead ``vx``                            ``0`` m/s
axle cart ``angle``                    ``0`` rad
axle cart ``wheel_angles``             ``[0, 0]`` rad
axle cart ``wheel_rates``              ``[0, 0]`` rad/s
spring ``damping``                     ``0`` N·s/m
force ``type``                         ``"harmonic"``
force ``phase``                        ``0`` rad
``solver.method``                      ``"event-driven"``
``solver.t_end``                       ``1.0`` s
``solver.dt_out``                      ``0.001`` s
``solver.dt``                          ``1e-4`` s (time-stepping step only)
``solver.rtol``, ``solver.atol``       ``null``: the stepper's own tolerances
=====================================  =========================================

``format`` and ``version`` are required in a file. ``save_scene`` writes every
key, defaults included, except those whose value is ``null`` (all of which
default to ``null``), so load → save → load gives an equal scene.

Geometry conventions: a segment joins ``a`` to ``b``; a polyline joins its
``points`` in order; an arc of ``radius`` around ``center`` runs
counter-clockwise from the polar angle ``start_deg`` to ``end_deg`` (degrees
from +x, as ``solver.geometry.Arc``: start 180, end 0 is the lower half;
``end_deg − start_deg = ±360`` is a full circle). Boundaries are thin walls, solid from both sides.
A bead is a disk of ``radius`` centred at ``(x, rail_y)`` that moves along x.
An axle cart (paper 001, top view) is an axle of mass ``axle_mass`` and length
``2 half_length`` centred at ``position`` = (x_C, y_C) at ``angle`` φ from +x,
with a wheel of ``wheel_mass`` and ``wheel_radius`` at each end (A at
C − l(cos φ, sin φ), B at C + l(cos φ, sin φ)); its two degrees of freedom
are the wheel rates θ̇_A, θ̇_B. A spring's force acts along the line joining
its two ends (body centres or anchor). A harmonic force is
``F(t) = amplitude · sin(omega t + phase)`` (N) at the body's centre. A
scheduled impulse ``vector`` (N·s) acts at ``point`` (m) at time ``time`` (s),
both in the axes its ``frame`` names (see ``ScheduledImpulse``).

Versions: 1 is the first format; 2 adds an impulse's ``frame`` (``"world"``,
the default, is what version 1 meant). A version-1 file is read unchanged.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from solver.atomic_file import atomic_write
from solver.broadphase import disk_pairs
from solver.errors import InputError

FORMAT = "impactgui-scene"
"""Value of the ``format`` key of every scene file."""

VERSION = 2
"""The scene-file version this program writes (and the newest it reads)."""

ImpactLaw = Literal["staged", "poisson", "sequential", "newton"]
"""Impact laws of SPEC §3, selectable per scene with ``contact.impact_law``."""
IMPACT_LAWS: tuple[str, ...] = get_args(ImpactLaw)

TOUCH_TOLERANCE = 1e-12
"""Relative tolerance (of the scene's length scale) under which disks touch rather than overlap."""

SIDE_GRAVITY = (0.0, -9.81)
"""Default gravity of a side-view scene, m/s²."""


# ---------------------------------------------------------------- field types


def _as_pair(value: Any) -> Any:
    """Refuse anything but a two-element array before the numbers are checked."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return tuple(value)
    raise PydanticCustomError("pair", "must be a pair [x, y], got {got}", {"got": _show(value)})


def _as_id(value: Any) -> Any:
    """Refuse empty ids and ids with ``#`` (reserved for feature suffixes like ``curb#v2``)."""
    if isinstance(value, str) and (not value.strip() or "#" in value):
        raise PydanticCustomError(
            "identifier", "must be a non-empty name without '#', got {got}", {"got": _show(value)}
        )
    return value


Number = Annotated[float, Strict()]
"""A finite JSON number (integers accepted, booleans and strings refused)."""
Positive = Annotated[float, Strict(), Field(gt=0)]
NonNegative = Annotated[float, Strict(), Field(ge=0)]
Fraction = Annotated[float, Strict(), Field(ge=0, le=1)]
Vec2 = Annotated[tuple[Number, Number], BeforeValidator(_as_pair)]
"""A 2-vector ``[x, y]`` (JSON array of two numbers)."""
Identifier = Annotated[str, Strict(), BeforeValidator(_as_id)]
"""An id of a body or boundary: non-empty, no ``#``."""


class _Model(BaseModel):
    """Common configuration: unknown keys refused, numbers finite, instances frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# ----------------------------------------------------------------- contact, solver


class ContactDefaults(_Model):
    """Contact parameters used wherever a boundary does not override them.

    ``restitution`` e ∈ [0, 1] (0 plastic, 1 elastic: the share of the normal
    approach speed given back by an impact), ``friction`` μ ≥ 0 (Coulomb
    coefficient), ``impact_law`` one of ``IMPACT_LAWS`` (SPEC §3). Disk–disk
    contacts always use these values.
    """

    restitution: Fraction = 0.5
    friction: NonNegative = 0.0
    impact_law: ImpactLaw = "staged"


class SolverSettings(_Model):
    """How a run is computed.

    ``method``: ``"event-driven"`` (exact impact times, SPEC §4) or
    ``"time-stepping"`` (Moreau–Jean, robust with many contacts, first order
    in ``dt``). ``t_end`` (s): end of the run. ``dt_out`` (s): spacing of the
    output samples (smaller means smoother plots and larger files). ``dt``
    (s): step of the time-stepping method (accuracy against CPU time).
    ``rtol`` / ``atol``: ODE tolerances of the event-driven method, ``None``
    for the stepper's own defaults.
    """

    method: Literal["event-driven", "time-stepping"] = "event-driven"
    t_end: Positive = 1.0
    dt_out: Positive = 0.001
    dt: Positive = 1e-4
    rtol: Positive | None = None
    atol: Positive | None = None


# ------------------------------------------------------------------- boundaries


# Every boundary ends with the optional overrides ``restitution`` e ∈ [0, 1] and
# ``friction`` μ ≥ 0 for contacts with it; ``None`` means "use the scene's contact".


class SegmentBoundary(_Model):
    """A straight wall from ``a`` to ``b`` (m)."""

    id: Identifier
    type: Literal["segment"] = "segment"
    a: Vec2
    b: Vec2
    restitution: Fraction | None = None
    friction: NonNegative | None = None


class PolylineBoundary(_Model):
    """Straight walls joining ``points`` (m, at least two) in order; vertices are sharp corners."""

    id: Identifier
    type: Literal["polyline"] = "polyline"
    points: tuple[Vec2, ...] = Field(min_length=2)
    restitution: Fraction | None = None
    friction: NonNegative | None = None


class ArcBoundary(_Model):
    """A circular wall of ``radius`` (m) around ``center`` (m).

    It runs counter-clockwise from the polar angle ``start_deg`` to ``end_deg``
    (degrees, 0 < |end_deg − start_deg| <= 360; ±360 is a full circle).
    """

    id: Identifier
    type: Literal["arc"] = "arc"
    center: Vec2
    radius: Positive
    start_deg: Number
    end_deg: Number
    restitution: Fraction | None = None
    friction: NonNegative | None = None


Boundary = Annotated[SegmentBoundary | PolylineBoundary | ArcBoundary, Field(discriminator="type")]
"""Any boundary, told apart by its ``type`` key."""


# ----------------------------------------------------------------------- bodies


class Wheel(_Model):
    """A rigid disk moving in the plane: coordinates (x, y, φ).

    ``mass`` (kg), ``inertia`` J about the centre (kg·m²), ``radius`` (m),
    ``position`` of the centre (m), ``angle`` φ (rad, counter-clockwise),
    ``velocity`` of the centre (m/s), ``angular_velocity`` φ̇ (rad/s).
    """

    id: Identifier
    type: Literal["wheel"] = "wheel"
    mass: Positive
    inertia: Positive
    radius: Positive
    position: Vec2
    angle: Number = 0.0
    velocity: Vec2 = (0.0, 0.0)
    angular_velocity: Number = 0.0


class Bead(_Model):
    """A disk sliding without friction along the horizontal rail ``y = rail_y`` (m): coordinate x.

    ``mass`` (kg), ``radius`` (m), ``x`` the centre's abscissa (m), ``vx`` its velocity (m/s).
    """

    id: Identifier
    type: Literal["bead"] = "bead"
    rail_y: Number
    mass: Positive
    radius: Positive
    x: Number
    vx: Number = 0.0


class AxleCart(_Model):
    """Two wheels on an axle rolling without slip (paper 001; top view only).

    ``axle_mass`` (kg) and ``half_length`` l (m) of the axle, ``wheel_mass``
    (kg) and ``wheel_radius`` r (m) of each wheel, ``position`` of the axle
    centre C (m), ``angle`` φ of the axle from +x (rad), ``wheel_angles``
    [θ_A, θ_B] (rad) and ``wheel_rates`` [θ̇_A, θ̇_B] (rad/s): the rates fix
    the whole velocity through the no-slip constraints.
    """

    id: Identifier
    type: Literal["axle_cart"] = "axle_cart"
    axle_mass: Positive
    half_length: Positive
    wheel_mass: Positive
    wheel_radius: Positive
    position: Vec2
    angle: Number = 0.0
    wheel_angles: Vec2 = (0.0, 0.0)
    wheel_rates: Vec2 = (0.0, 0.0)


Body = Annotated[Wheel | Bead | AxleCart, Field(discriminator="type")]
"""Any body, told apart by its ``type`` key."""


# --------------------------------------------------------- springs, forces, impulses


class Spring(_Model):
    """A linear spring–damper from body ``a`` to body ``b`` or to the fixed point ``anchor`` (m).

    Exactly one of ``b`` and ``anchor`` is given. ``stiffness`` k (N/m),
    ``rest_length`` (m), ``damping`` c (N·s/m): the force along the spring is
    ``k (length − rest_length) + c · d(length)/dt``.
    """

    a: Identifier
    b: Identifier | None = None
    anchor: Vec2 | None = None
    stiffness: Positive
    rest_length: NonNegative
    damping: NonNegative = 0.0

    @model_validator(mode="after")
    def _one_other_end(self) -> Spring:
        if (self.b is None) == (self.anchor is None):
            raise PydanticCustomError(
                "spring_end", "give exactly one of 'b' (a body id) or 'anchor' (a point [x, y])"
            )
        return self


class HarmonicForce(_Model):
    """Prescribed forcing ``F(t) = amplitude · sin(omega t + phase)`` (N) on ``body``'s centre.

    ``amplitude`` [F_x, F_y] (N), ``omega`` (rad/s), ``phase`` (rad). A bead feels F_x only.
    """

    body: Identifier
    type: Literal["harmonic"] = "harmonic"
    amplitude: Vec2
    omega: NonNegative
    phase: Number = 0.0


class ScheduledImpulse(_Model):
    """An impulse ``vector`` (N·s) on an axle cart at ``point`` (m) at ``time`` (s).

    ``frame`` (version 2) names the axes of ``point`` and ``vector``:

    * ``"world"`` (default; version 1's only meaning): the scene's axes. The
      point is projected onto the axle where the cart is at ``time`` and must
      fall on it, so it suits an impulse whose place in the plane is known.
    * ``"body"``: the cart's own axes at ``time``, origin at the axle's centre
      C, x along the axle towards wheel B, y the rolling direction. The
      point is ``[s, 0]`` with ``|s| <= half_length``. The impulse strikes the
      same spot of the cart from the same side wherever the cart has rolled:
      what the GUI records for a strike.
    """

    time: NonNegative
    body: Identifier
    point: Vec2
    vector: Vec2
    frame: Literal["world", "body"] = "world"


# ------------------------------------------------------------------------ scene


class Scene(_Model):
    """A whole scene: boundaries, bodies, their couplings, and how to run it.

    Beyond the per-field checks, a scene is refused when ids repeat, a spring,
    force or impulse names a missing body, a boundary is degenerate, a body
    overlaps a boundary or another body at t = 0 (touching is allowed), or
    the view and body types disagree. See the module docstring for defaults.
    """

    format: Literal["impactgui-scene"] = FORMAT
    version: Literal[2] = VERSION
    title: str = "Untitled"
    description: str = ""
    view: Literal["side", "top"] = "side"
    gravity: Vec2 = SIDE_GRAVITY
    contact: ContactDefaults = ContactDefaults()
    boundaries: tuple[Boundary, ...] = ()
    bodies: tuple[Body, ...] = ()
    springs: tuple[Spring, ...] = ()
    forces: tuple[HarmonicForce, ...] = ()
    impulses: tuple[ScheduledImpulse, ...] = ()
    solver: SolverSettings = SolverSettings()

    @model_validator(mode="before")
    @classmethod
    def _top_view_has_no_gravity(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("view") == "top" and "gravity" not in data:
            return {**data, "gravity": (0.0, 0.0)}
        return data

    @model_validator(mode="after")
    def _physically_valid(self) -> Scene:
        problems = list(_scene_problems(self))
        if problems:
            raise ValidationError.from_exception_data(
                "Scene",
                [
                    {"type": PydanticCustomError("scene", message), "loc": loc, "input": None}
                    for loc, message in problems
                ],
            )
        return self

    def body(self, body_id: str) -> Wheel | Bead | AxleCart:
        """The body called ``body_id``; ``KeyError`` if there is none."""
        for body in self.bodies:
            if body.id == body_id:
                return body
        raise KeyError(f"no body with id {body_id!r}")

    def boundary(self, boundary_id: str) -> SegmentBoundary | PolylineBoundary | ArcBoundary:
        """The boundary called ``boundary_id`` (a ``#v2`` suffix is ignored), else ``KeyError``."""
        base_id = boundary_id.split("#", 1)[0]
        for boundary in self.boundaries:
            if boundary.id == base_id:
                return boundary
        raise KeyError(f"no boundary with id {boundary_id!r}")

    def contact_params(
        self, boundary: SegmentBoundary | PolylineBoundary | ArcBoundary | str | None = None
    ) -> tuple[float, float]:
        """``(restitution, friction)`` for contacts with ``boundary`` (a model or an id).

        A boundary's own values override ``contact``; ``None`` (or the id of a
        body) gives the scene defaults, which disk–disk contacts use.
        """
        if isinstance(boundary, str):
            base_id = boundary.split("#", 1)[0]
            boundary = next((b for b in self.boundaries if b.id == base_id), None)
        restitution, friction = self.contact.restitution, self.contact.friction
        if boundary is not None:
            if boundary.restitution is not None:
                restitution = boundary.restitution
            if boundary.friction is not None:
                friction = boundary.friction
        return restitution, friction


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


def _boundary_problems(scene: Scene) -> Iterator[tuple[Loc, str]]:
    for i, boundary in enumerate(scene.boundaries):
        if isinstance(boundary, SegmentBoundary) and boundary.a == boundary.b:
            yield ("boundaries", i, "b"), f"zero-length segment: b equals a = {list(boundary.a)}"
        elif isinstance(boundary, PolylineBoundary):
            for k in range(1, len(boundary.points)):
                if boundary.points[k] == boundary.points[k - 1]:
                    yield (
                        ("boundaries", i, "points", k),
                        f"repeats the previous point {list(boundary.points[k])}",
                    )
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
            if penetration > TOUCH_TOLERANCE * _length_scale(centre, radius):
                yield (
                    ("bodies", i),
                    f"overlaps boundary {boundary.id!r} at t = 0 (penetration {penetration:.3g} m)",
                )
    if len(disks) < 2:
        return
    centres = [disk_centre(body) for _, body in disks]
    radii = [body.radius for _, body in disks]
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
    s = (ap[0] * ab[0] + ap[1] * ab[1]) / (ab[0] ** 2 + ab[1] ** 2)
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


# ------------------------------------------------------------------- errors, I/O


class SceneError(InputError):
    """A scene is invalid; ``problems`` lists each as ``"<json path>: <message>"``.

    ``str(error)`` is the problems joined by newlines, one line per problem,
    as the command line prints them.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def _show(value: Any) -> str:
    """A value as the user wrote it: JSON-like, strings quoted."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (dict, list, tuple)):
        text = json.dumps(value, default=str)
        return text if len(text) <= 60 else text[:57] + "..."
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _json_path(loc: Loc, data: Any) -> str:
    """``('bodies', 0, 'wheel', 'mass')`` → ``bodies[0].mass`` (dropping pydantic's union tags)."""
    path = ""
    node = data
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
            in_range = isinstance(node, (list, tuple)) and -len(node) <= part < len(node)
            node = node[part] if in_range else None
            continue
        if isinstance(node, dict) and part not in node and node.get("type") == part:
            continue
        path += f".{part}" if path else part
        node = node.get(part) if isinstance(node, dict) else None
    return path or "(scene)"


def _plain_message(error: dict[str, Any]) -> str:
    """Rewrite one pydantic error in the words of this program."""
    kind, ctx, got = error["type"], error.get("ctx", {}), _show(error.get("input"))

    def options(name: str) -> str:
        return ", ".join(re.findall(r"'([^']*)'", ctx.get(name, "")))

    def bound(name: str) -> str:
        return f"{ctx.get(name, 0):g}"

    messages: dict[str, Callable[[], str]] = {
        "greater_than": lambda: f"must be > {bound('gt')}, got {got}",
        "greater_than_equal": lambda: f"must be >= {bound('ge')}, got {got}",
        "less_than": lambda: f"must be < {bound('lt')}, got {got}",
        "less_than_equal": lambda: f"must be <= {bound('le')}, got {got}",
        "finite_number": lambda: f"must be a finite number, got {got}",
        "float_type": lambda: f"must be a number, got {got}",
        "string_type": lambda: f"must be a string, got {got}",
        "extra_forbidden": lambda: "unknown key",
        "missing": lambda: "required key is missing",
        "literal_error": lambda: f"must be one of {options('expected')}, got {got}",
        "union_tag_invalid": lambda: (
            f"must be one of {options('expected_tags')}, got {_show(ctx.get('tag'))}"
        ),
        "union_tag_not_found": lambda: "required key is missing",
        "model_type": lambda: f"must be an object, got {got}",
        "model_attributes_type": lambda: f"must be an object, got {got}",
        "tuple_type": lambda: f"must be a list, got {got}",
        "too_short": lambda: (
            f"must have at least {ctx.get('min_length')} items, got {ctx.get('actual_length')}"
        ),
    }
    if kind in messages:
        return messages[kind]()
    return error["msg"]


def _problems_from(error: ValidationError, data: Any) -> list[str]:
    problems = []
    for e in error.errors(include_url=False):
        loc = tuple(e["loc"])
        if e["type"] in ("union_tag_invalid", "union_tag_not_found"):
            loc += ("type",)
        problems.append(f"{_json_path(loc, data)}: {_plain_message(e)}")
    return problems


def _from_version_1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 → 2: the same object; an impulse ``frame`` did not exist in version 1."""
    impulses = data.get("impulses")
    if isinstance(impulses, list):
        for index, impulse in enumerate(impulses):
            if isinstance(impulse, dict) and "frame" in impulse:
                raise SceneError(
                    [f"impulses[{index}].frame: needs version 2 (this file says version 1)"]
                )
    return data


_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _from_version_1}
"""Upgrade steps: ``_MIGRATIONS[n]`` turns a version-n object into a version-(n+1) one."""


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Bring a scene object of any known version up to ``VERSION``.

    Raises
    ------
    SceneError
        If ``format`` is not ``"impactgui-scene"`` or ``version`` is missing,
        not a positive integer, or newer than this program.
    """
    if data.get("format") != FORMAT:
        got = _show(data["format"]) if "format" in data else "nothing"
        raise SceneError([f"format: must be {FORMAT!r} (not an impactgui scene?), got {got}"])
    version = data.get("version")
    if "version" not in data:
        raise SceneError([f"version: required key is missing (this program writes {VERSION})"])
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise SceneError([f"version: must be a positive integer, got {_show(version)}"])
    if version > VERSION:
        raise SceneError(
            [f"version: {version} is newer than this program reads ({VERSION}); update impactgui"]
        )
    while data["version"] < VERSION:
        data = {**_MIGRATIONS[data["version"]](data), "version": data["version"] + 1}
    return data


def parse_scene(data: dict[str, Any]) -> Scene:
    """Validate a scene object (the parsed JSON) and return the ``Scene``.

    Raises
    ------
    SceneError
        Listing every problem as ``"<json path>: <message>"``.
    """
    if not isinstance(data, dict):
        raise SceneError([f"(scene): must be a JSON object, got {_show(data)}"])
    data = migrate(data)
    try:
        return Scene.model_validate(data)
    except ValidationError as error:
        raise SceneError(_problems_from(error, data)) from None


def load_scene(path: str | os.PathLike[str]) -> Scene:
    """Read and validate the scene file at ``path``.

    Raises
    ------
    SceneError
        If the file cannot be read, is not valid JSON (line and column given),
        or is not a valid scene.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SceneError([f"{path}: cannot read the file ({error})"]) from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise SceneError(
            [f"{path}: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"]
        ) from None
    return parse_scene(data)


def scene_to_dict(scene: Scene) -> dict[str, Any]:
    """The JSON object of ``scene``: every key, defaults included, ``null`` values left out."""
    return scene.model_dump(mode="json", exclude_none=True)


def _format_json(value: Any, indent: int = 0, width: int = 120) -> str:
    """JSON text with small objects and arrays on one line and larger ones spread out."""
    flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)
    if (indent and len(flat) + indent <= width) or not isinstance(value, (dict, list)) or not value:
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, dict):
        items = [
            f"{inner}{json.dumps(k)}: {_format_json(v, indent + 2, width)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [f"{inner}{_format_json(v, indent + 2, width)}" for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def save_scene(scene: Scene, path: str | os.PathLike[str]) -> None:
    """Write ``scene`` to ``path`` as JSON, atomically.

    The text goes to a temporary file in the same directory, which then
    replaces ``path``: a failure at any point leaves the old file untouched
    and no temporary file behind.
    """
    path = Path(path)
    text = _format_json(scene_to_dict(scene)) + "\n"
    with atomic_write(path) as stream:
        stream.write(text)
