"""The parts of a scene (:mod:`solver.scene`): contact and solver settings, boundaries,
bodies, springs, forces, impulses and timed actions, as validated, immutable models.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from solver.scene_fields import (
    MAX_ITEMS,
    MAX_SAMPLES,
    MAX_TIME_STEPS,
    Angle,
    Coordinate,
    Duration,
    Fraction,
    Friction,
    Identifier,
    ImpactLaw,
    Length,
    Mass,
    NonNegative,
    Number,
    Point2,
    Positive,
    Tolerance,
    _Model,
    _show,
    _vector,
    _within,
)

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
