"""The scene: what the user drew, as validated, immutable models, and its JSON file.

A scene file is a JSON object with ``"format": "impactgui-scene"`` and
``"version": 2`` (see docs/CONTRACT.md, "Scene file"; version 1 files are read as they
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
boundary ``compliance``                ``null``: ``contact.compliance``
``contact.compliance``                 ``null``: every contact rigid
compliance ``damping``                 ``0`` N·s/m
compliance ``exponent``                ``1`` (linear spring; ``1.5`` Hertz)
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

import itertools
import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import numpy as np
from pydantic import (
    AfterValidator,
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
"""Impact laws of MECHANICS §3, selectable per scene with ``contact.impact_law``."""
IMPACT_LAWS: tuple[str, ...] = get_args(ImpactLaw)

TOUCH_TOLERANCE = 1e-12
"""Relative tolerance (of the scene's length scale) under which disks touch rather than overlap."""

SIDE_GRAVITY = (0.0, -9.81)
"""Default gravity of a side-view scene, m/s²."""


# ----------------------------------------------------------------------- limits
# What a scene may ask for (docs/LIMITS.md). Past these a file is refused with the
# reason, so every run ends in one of the documented outcomes: no number overflows
# to inf, no recursion runs out of stack, no allocation is sized by a typo.

MAX_FILE_BYTES = 16 * 2**20
"""Largest scene file read, bytes (16 MiB; a 1000-bead chain takes about 200 kB)."""
MAX_NESTING = 16
"""Deepest nesting of JSON arrays and objects (a scene needs 5)."""
MAX_ITEMS = 10_000
"""Most entries in each list section (``boundaries``, ``bodies``, …) and polyline points."""
MAX_TEXT = 10_000
"""Longest ``title`` or ``description``, characters; ids have at most ``MAX_ID`` characters."""
MAX_ID = 200
MAX_SAMPLES = 1_000_000
"""Most output samples of a run, ``t_end / dt_out`` (about 1 kB of memory each)."""
MAX_TIME_STEPS = 10_000_000
"""Most time-stepping steps of a run, ``t_end / dt``."""
MAX_PROBLEMS = 100
"""Most cross-field problems listed for one scene (the checks stop there)."""

MAGNITUDES: dict[str, tuple[float, float, str]] = {
    "coordinate": (0.0, 1e6, "m"),
    "length": (1e-6, 1e6, "m"),
    "mass": (1e-6, 1e6, "kg"),
    "inertia": (1e-18, 1e18, "kg·m²"),
    "speed": (0.0, 1e6, "m/s"),
    "angle": (0.0, 1e6, "rad"),
    "degrees": (0.0, 1e6, "°"),
    "rate": (0.0, 1e6, "rad/s"),
    "acceleration": (0.0, 1e4, "m/s²"),
    "stiffness": (0.0, 1e12, "N/m"),
    "damping": (0.0, 1e12, "N·s/m"),
    "force": (0.0, 1e12, "N"),
    "impulse": (0.0, 1e9, "N·s"),
    "friction": (0.0, 100.0, ""),
    "time": (0.0, 1e6, "s"),
    "duration": (1e-9, 1e6, "s"),
    "tolerance": (1e-15, 1.0, ""),
}
"""Range of magnitudes of each kind of number: ``(smallest nonzero, largest, unit)``.

A signed quantity (a coordinate, a velocity) may be zero or anything up to the
largest magnitude in either direction; a positive one (a mass, a radius, a time
step) lies between the two bounds. These keep energies, gaps and sample counts
finite and the arithmetic well inside double precision.
"""


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


def _within(kind: str) -> AfterValidator:
    """Refuse a number whose magnitude lies outside ``MAGNITUDES[kind]``."""
    smallest, largest, unit = MAGNITUDES[kind]

    def check(value: float) -> float:
        size = abs(value)
        if size > largest or (0.0 < size < smallest):
            low = f"{smallest:g} to " if smallest else "up to "
            raise PydanticCustomError(
                "magnitude",
                "must have a magnitude of {low}{largest}{unit} (the range of {kind}s this "
                "program computes with finite, accurate numbers), got {got}",
                {
                    "low": low,
                    "largest": f"{largest:g}",
                    "unit": f" {unit}" if unit else "",
                    "kind": kind,
                    "got": _show(value),
                },
            )
        return value

    return AfterValidator(check)


Number = Annotated[float, Strict()]
"""A finite JSON number (integers accepted, booleans and strings refused)."""
Positive = Annotated[float, Strict(), Field(gt=0)]
NonNegative = Annotated[float, Strict(), Field(ge=0)]
Fraction = Annotated[float, Strict(), Field(ge=0, le=1)]
Coordinate = Annotated[Number, _within("coordinate")]
Length = Annotated[Positive, _within("length")]
Vec2 = Annotated[tuple[Number, Number], BeforeValidator(_as_pair)]
"""A 2-vector ``[x, y]`` (JSON array of two numbers)."""
Point2 = Annotated[tuple[Coordinate, Coordinate], BeforeValidator(_as_pair)]
"""A point ``[x, y]`` of the plane, m, each coordinate within ``MAGNITUDES["coordinate"]``."""


def _vector(kind: str) -> Any:
    """A 2-vector type whose components lie within ``MAGNITUDES[kind]``."""
    component = Annotated[Number, _within(kind)]
    return Annotated[tuple[component, component], BeforeValidator(_as_pair)]


Mass = Annotated[Positive, _within("mass")]
Angle = Annotated[Number, _within("angle")]
Friction = Annotated[NonNegative, _within("friction")]
Duration = Annotated[Positive, _within("duration")]
Tolerance = Annotated[Positive, _within("tolerance")]


def _encodable(value: str) -> str:
    """Refuse text that UTF-8 cannot encode (a lone surrogate such as ``"\\ud800"``)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise PydanticCustomError(
            "text",
            "holds a character that cannot be saved as UTF-8 (a lone surrogate) at position {at}",
            {"at": error.start},
        ) from None
    return value


Text = Annotated[str, Strict(), Field(max_length=MAX_TEXT), AfterValidator(_encodable)]
"""Free text (title, description): at most ``MAX_TEXT`` characters; lone surrogates refused."""
Identifier = Annotated[
    str, Strict(), BeforeValidator(_as_id), Field(max_length=MAX_ID), AfterValidator(_encodable)
]
"""An id of a body or boundary: non-empty, no ``#``."""


class _Model(BaseModel):
    """Common configuration: unknown keys refused, numbers finite, instances frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# ----------------------------------------------------------------- contact, solver


COMPLIANCE_EXPONENTS = (1.0, 1.5)
"""Exponents ``p`` of a compliant contact's spring ``k·δ^p``: linear (paper 003) and Hertz."""


def _compliance_exponent(value: float) -> float:
    if value not in COMPLIANCE_EXPONENTS:
        raise PydanticCustomError("exponent", "must be 1 or 1.5, got {got}", {"got": _show(value)})
    return value


class Compliance(_Model):
    """A compliant (soft) contact: normal force ``F = k·δ^p + c·δ̇`` while ``F > 0``.

    ``stiffness`` k > 0 (N/m^p), ``damping`` c ≥ 0 (N·s/m), ``exponent`` p,
    1 (a linear spring, paper 003's elastic stop) or 1.5 (Hertz). δ is the
    overlap of the disk and the wall (or of two disks) and δ̇ its rate. The
    contact never pulls: it ends when F returns to 0 (docs/PHYSICS.md).
    """

    stiffness: Annotated[Positive, _within("stiffness")]
    damping: Annotated[NonNegative, _within("damping")] = 0.0
    exponent: Annotated[Number, AfterValidator(_compliance_exponent)] = 1.0


class ContactDefaults(_Model):
    """Contact parameters used wherever a boundary does not override them.

    ``restitution`` e ∈ [0, 1] (0 plastic, 1 elastic: the share of the normal
    approach speed given back by an impact), ``friction`` μ ≥ 0 (Coulomb
    coefficient), ``impact_law`` one of ``IMPACT_LAWS`` (MECHANICS §3). Disk–disk
    contacts always use these values. ``compliance`` (``None``: rigid) makes
    every body–body contact, and every boundary without its own, compliant.
    """

    restitution: Fraction = 0.5
    friction: Friction = 0.0
    impact_law: ImpactLaw = "staged"
    compliance: Compliance | None = None


class SolverSettings(_Model):
    """How a run is computed.

    ``method``: ``"event-driven"`` (exact impact times, MECHANICS §4) or
    ``"time-stepping"`` (Moreau–Jean, robust with many contacts, first order
    in ``dt``). ``t_end`` (s): end of the run. ``dt_out`` (s): spacing of the
    output samples (smaller means smoother plots and larger files). ``dt``
    (s): step of the time-stepping method (accuracy against CPU time).
    ``rtol`` / ``atol``: ODE tolerances of the event-driven method, ``None``
    for the stepper's own defaults.
    """

    method: Literal["event-driven", "time-stepping"] = "event-driven"
    t_end: Duration = 1.0
    dt_out: Duration = 0.001
    dt: Duration = 1e-4
    rtol: Tolerance | None = None
    atol: Tolerance | None = None

    @model_validator(mode="after")
    def _bounded_run(self) -> SolverSettings:
        problems = run_size_problems(self.t_end, self.dt_out, self.dt, self.method)
        if problems:
            raise ValidationError.from_exception_data(
                "SolverSettings",
                [
                    {"type": PydanticCustomError("run_size", message), "loc": (key,), "input": None}
                    for key, message in problems
                ],
            )
        return self


def run_size_problems(t_end: float, dt_out: float, dt: float, method: str) -> list[tuple[str, str]]:
    """Why a run of these settings would be too large to compute, as ``(key, message)`` pairs.

    A run is refused before anything is allocated when it would write more
    than ``MAX_SAMPLES`` output samples (``t_end / dt_out``) or, with
    ``method == "time-stepping"``, take more than ``MAX_TIME_STEPS`` steps
    (``t_end / dt``). Empty when the run is within bounds.
    """
    problems = []
    samples = t_end / dt_out
    if samples > MAX_SAMPLES:
        problems.append(
            (
                "dt_out",
                f"gives {samples:.3g} output samples over t_end = {t_end:g} s, more than "
                f"{MAX_SAMPLES:.0e}: use a larger dt_out or a shorter t_end",
            )
        )
    steps = t_end / dt
    if method == "time-stepping" and steps > MAX_TIME_STEPS:
        problems.append(
            (
                "dt",
                f"gives {steps:.3g} time steps over t_end = {t_end:g} s, more than "
                f"{MAX_TIME_STEPS:.0e}: use a larger dt or a shorter t_end",
            )
        )
    return problems


# ------------------------------------------------------------------- boundaries


# Every boundary ends with the optional overrides ``restitution`` e ∈ [0, 1],
# ``friction`` μ ≥ 0 and ``compliance`` for contacts with it; ``None`` means "use the
# scene's contact".


class SegmentBoundary(_Model):
    """A straight wall from ``a`` to ``b`` (m)."""

    id: Identifier
    type: Literal["segment"] = "segment"
    a: Point2
    b: Point2
    restitution: Fraction | None = None
    friction: Friction | None = None
    compliance: Compliance | None = None


class PolylineBoundary(_Model):
    """Straight walls joining ``points`` (m, at least two) in order; vertices are sharp corners."""

    id: Identifier
    type: Literal["polyline"] = "polyline"
    points: tuple[Point2, ...] = Field(min_length=2, max_length=MAX_ITEMS)
    restitution: Fraction | None = None
    friction: Friction | None = None
    compliance: Compliance | None = None


class ArcBoundary(_Model):
    """A circular wall of ``radius`` (m) around ``center`` (m).

    It runs counter-clockwise from the polar angle ``start_deg`` to ``end_deg``
    (degrees, 0 < |end_deg − start_deg| <= 360; ±360 is a full circle).
    """

    id: Identifier
    type: Literal["arc"] = "arc"
    center: Point2
    radius: Length
    start_deg: Annotated[Number, _within("degrees")]
    end_deg: Annotated[Number, _within("degrees")]
    restitution: Fraction | None = None
    friction: Friction | None = None
    compliance: Compliance | None = None


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
    mass: Mass
    inertia: Annotated[Positive, _within("inertia")]
    radius: Length
    position: Point2
    angle: Angle = 0.0
    velocity: _vector("speed") = (0.0, 0.0)
    angular_velocity: Annotated[Number, _within("rate")] = 0.0


class Bead(_Model):
    """A disk sliding without friction along the horizontal rail ``y = rail_y`` (m): coordinate x.

    ``mass`` (kg), ``radius`` (m), ``x`` the centre's abscissa (m), ``vx`` its velocity (m/s).
    """

    id: Identifier
    type: Literal["bead"] = "bead"
    rail_y: Coordinate
    mass: Mass
    radius: Length
    x: Coordinate
    vx: Annotated[Number, _within("speed")] = 0.0


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
    axle_mass: Mass
    half_length: Length
    wheel_mass: Mass
    wheel_radius: Length
    position: Point2
    angle: Angle = 0.0
    wheel_angles: _vector("angle") = (0.0, 0.0)
    wheel_rates: _vector("rate") = (0.0, 0.0)


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
    anchor: Point2 | None = None
    stiffness: Annotated[Positive, _within("stiffness")]
    rest_length: Annotated[NonNegative, _within("coordinate")]
    damping: Annotated[NonNegative, _within("damping")] = 0.0

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
    amplitude: _vector("force")
    omega: Annotated[NonNegative, _within("rate")]
    phase: Angle = 0.0


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

    time: Annotated[NonNegative, _within("time")]
    body: Identifier
    point: Point2
    vector: _vector("impulse")
    frame: Literal["world", "body"] = "world"


class SetAction(_Model):
    """From ``time`` (s) on, the scene's ``restitution``, ``friction`` and/or ``gravity`` change.

    What the GUI's live sliders record (an extension of version 2): the run
    goes on from its state at ``time`` with the new values (``restitution``
    and ``friction`` are the scene defaults of ``contact``; a boundary's own
    values still override them). At least one of the three is given.
    """

    time: Annotated[NonNegative, _within("time")]
    type: Literal["set"] = "set"
    restitution: Fraction | None = None
    friction: Friction | None = None
    compliance: Compliance | None = None
    gravity: _vector("acceleration") | None = None


class StateAction(_Model):
    """At ``time`` (s), ``body`` is put at ``position`` (m) with ``velocity`` (m/s).

    What the GUI records when a body is dragged while a run is paused (an
    extension of version 2). A wheel keeps its angle and angular velocity; a
    bead takes the x components (it stays on its rail).
    """

    time: Annotated[NonNegative, _within("time")]
    type: Literal["state"] = "state"
    body: Identifier
    position: Point2
    velocity: _vector("speed") = (0.0, 0.0)


Action = Annotated[SetAction | StateAction, Field(discriminator="type")]
"""A timed user action, told apart by its ``type`` key (``solver.actions`` applies them)."""


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
    title: Text = "Untitled"
    description: Text = ""
    view: Literal["side", "top"] = "side"
    gravity: _vector("acceleration") = SIDE_GRAVITY
    contact: ContactDefaults = ContactDefaults()
    boundaries: tuple[Boundary, ...] = Field((), max_length=MAX_ITEMS)
    bodies: tuple[Body, ...] = Field((), max_length=MAX_ITEMS)
    springs: tuple[Spring, ...] = Field((), max_length=MAX_ITEMS)
    forces: tuple[HarmonicForce, ...] = Field((), max_length=MAX_ITEMS)
    impulses: tuple[ScheduledImpulse, ...] = Field((), max_length=MAX_ITEMS)
    solver: SolverSettings = SolverSettings()
    actions: tuple[Action, ...] = Field((), max_length=MAX_ITEMS)

    @model_validator(mode="before")
    @classmethod
    def _top_view_has_no_gravity(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("view") == "top" and "gravity" not in data:
            return {**data, "gravity": (0.0, 0.0)}
        return data

    @model_validator(mode="after")
    def _physically_valid(self) -> Scene:
        problems = list(itertools.islice(_scene_problems(self), MAX_PROBLEMS + 1))
        if len(problems) > MAX_PROBLEMS:
            problems[-1] = ((), f"more problems not listed (the first {MAX_PROBLEMS} are)")
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

    def compliance_for(
        self, boundary: SegmentBoundary | PolylineBoundary | ArcBoundary | str | None = None
    ) -> Compliance | None:
        """The compliance of contacts with ``boundary`` (a model or an id), ``None`` if rigid.

        A boundary's own ``compliance`` overrides ``contact.compliance``;
        ``None`` (or the id of a body) gives ``contact.compliance``, which
        body–body contacts use.
        """
        if isinstance(boundary, str):
            base_id = boundary.split("#", 1)[0]
            boundary = next((b for b in self.boundaries if b.id == base_id), None)
        if boundary is not None and boundary.compliance is not None:
            return boundary.compliance
        return self.contact.compliance

    @property
    def has_compliance(self) -> bool:
        """Some contact of the scene is compliant."""
        return self.contact.compliance is not None or any(
            b.compliance is not None for b in self.boundaries
        )


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
    if isinstance(value, int) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
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
        "string_unicode": lambda: (
            "holds a character that cannot be saved as UTF-8 (a lone surrogate)"
        ),
        "string_too_long": lambda: (
            f"must have at most {ctx.get('max_length')} characters, got {len(error['input'])}"
        ),
        "too_long": lambda: (
            f"must have at most {ctx.get('max_length')} items, got {ctx.get('actual_length')}"
        ),
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


def nesting_depth(data: Any, limit: int = MAX_NESTING) -> int:
    """Depth of nested lists and dicts in ``data`` (a scalar is 0), counted up to ``limit + 1``.

    Iterative, so any depth is measured without recursion; it stops descending
    past ``limit``.
    """
    deepest = 0
    pending = [(data, 1)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        if depth <= limit:
            pending.extend((child, depth + 1) for child in children)
    return deepest


def text_nesting_depth(text: str) -> int:
    """Deepest nesting of ``[`` and ``{`` in JSON text (strings skipped), without parsing it."""
    brackets = re.sub(r"[^\[\]{}]+", "", re.sub(r'"(?:[^"\\]|\\.)*"', "", text))
    if not brackets:
        return 0
    codes = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


def _nesting_problem() -> str:
    return (
        f"(scene): arrays and objects nested more than {MAX_NESTING} levels deep "
        "(a scene needs 5): not a scene file"
    )


def parse_scene(data: dict[str, Any]) -> Scene:
    """Validate a scene object (the parsed JSON) and return the ``Scene``.

    Raises
    ------
    SceneError
        Listing every problem as ``"<json path>: <message>"``; data nested
        deeper than ``MAX_NESTING`` is refused as a whole.
    """
    if not isinstance(data, dict):
        raise SceneError([f"(scene): must be a JSON object, got {_show(data)}"])
    depth = nesting_depth(data)
    if depth > MAX_NESTING:
        raise SceneError([_nesting_problem()])
    data = migrate(data)
    try:
        return Scene.model_validate(data)
    except ValidationError as error:
        raise SceneError(_problems_from(error, data)) from None


def read_scene_text(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> str:
    """The text of the scene file at ``path``: a regular file of at most ``limit`` bytes.

    The file is opened without blocking and checked before it is read, so a
    FIFO, a device or a directory is refused at once instead of waiting for a
    writer or reading without end.

    Raises
    ------
    SceneError
        If the file is missing, not a regular file, larger than ``limit``,
        unreadable or not UTF-8.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise SceneError([f"{path}: cannot read the file ({error.strerror or error})"]) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SceneError([f"{path}: not a regular file (a folder, device or pipe)"])
        if info.st_size > limit:
            raise SceneError(
                [
                    f"{path}: the file has {info.st_size:,} bytes, more than the limit of "
                    f"{limit:,} for a scene file"
                ]
            )
        with os.fdopen(os.dup(fd), "rb") as stream:
            raw = stream.read(limit + 1)
    except OSError as error:
        raise SceneError([f"{path}: cannot read the file ({error.strerror or error})"]) from None
    finally:
        os.close(fd)
    if len(raw) > limit:
        raise SceneError([f"{path}: the file grew past the limit of {limit:,} bytes while read"])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SceneError([f"{path}: not UTF-8 text (byte {error.start})"]) from None


def scene_data_from_text(text: str, source: str = "(scene)") -> Any:
    """Parse scene JSON text, refusing nesting deeper than ``MAX_NESTING`` before parsing.

    Raises
    ------
    SceneError
        For invalid JSON (line and column given, ``source`` naming the file),
        too deep nesting or a number too long to read.
    """
    depth = text_nesting_depth(text)
    if depth > MAX_NESTING:
        raise SceneError([f"{source}: {_nesting_problem().removeprefix('(scene): ')}"])
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SceneError(
            [f"{source}: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"]
        ) from None
    except (ValueError, RecursionError) as error:
        raise SceneError([f"{source}: cannot read the JSON ({error})"]) from None


def load_scene(path: str | os.PathLike[str]) -> Scene:
    """Read and validate the scene file at ``path``.

    Raises
    ------
    SceneError
        If the file cannot be read (see :func:`read_scene_text`: only regular
        files of at most ``MAX_FILE_BYTES``), is not valid JSON (line and
        column given), or is not a valid scene.
    """
    path = Path(path)
    return parse_scene(scene_data_from_text(read_scene_text(path), str(path)))


def scene_to_dict(scene: Scene) -> dict[str, Any]:
    """The JSON object of ``scene``: every key, defaults included, ``null`` values left out."""
    data = scene.model_dump(mode="json", exclude_none=True)
    if not data["actions"]:
        del data["actions"]  # an extension: a scene without actions is written as before
    return data


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
