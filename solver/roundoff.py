"""Round-off shown and written as what it is: zero.

Some results are exactly 0 in exact arithmetic but come out of floating point
as tiny noise of either sign: the energy change of a lossless impact
(``6.2e-17`` J), the velocity a plastic impact stops (``5.6e-16`` m/s), the
dissipated energy of a run without losses, or ``-0.0`` (a potential energy at
the reference height). Printed as data they mislead: a reader takes
``-6.2e-17`` for a (tiny, negative) loss.

``RoundoffScales.of(system)`` reads the scene's own magnitudes once — a
length, a mass, a speed, and from them an energy, a force, an impulse and an
angular rate — and ``clean`` writes every value whose size is at most
``ROUNDOFF_RTOL`` times its quantity's scale as ``0.0`` (never ``-0.0``).
Everything larger is left exactly as computed. Double precision resolves
2.2e-16 of a value; ``ROUNDOFF_RTOL = 1e-13`` (about 450 times that) covers
the round-off of a sum or difference of a few terms of the scene's size —
the cases above are 1e-16 to 6e-16 of their scale — while a value computed
at its own, smaller scale (the first millimetre of a motion) is written as
computed down to 1e-13 of the scene's scale.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

ROUNDOFF_RTOL = 1e-13
"""A value of size at most ``ROUNDOFF_RTOL`` times its quantity's scene scale is round-off: 0."""

UNIT_SCALE = 1.0
"""Scale of angles (rad) and of unitless numbers such as the friction multiplier τ."""

LENGTHS = frozenset({"x", "y", "xC", "yC"})
"""Coordinate names measured in metres (the others are angles)."""
SPEEDS = frozenset({"vx", "vy", "vxC", "vyC"})
"""Rate names measured in m/s (the others are angular rates, rad/s)."""


def _forced_speed(force: Any, t_end: float, mass: float) -> float:
    """Speed amplitude a harmonic force gives a free ``mass``: ``F / (m ω)``, or ``F t_end / m``."""
    size = math.hypot(*force.amplitude)
    return size / (mass * force.omega) if force.omega > 0 else size * t_end / mass


def clean(value: float, scale: float) -> float:
    """``value``, or ``0.0`` when ``|value| <= ROUNDOFF_RTOL * scale``; never ``-0.0``.

    Parameters
    ----------
    value : float
        A computed result.
    scale : float
        The scene's scale of its quantity (same unit), > 0. A scale past the
        float range cleans nothing but ``-0.0``.
    """
    if abs(value) <= (ROUNDOFF_RTOL * scale if math.isfinite(scale) else 0.0):
        return 0.0
    return value


def clean_array(values: ArrayLike, scales: ArrayLike) -> np.ndarray:
    """``clean`` elementwise: ``values`` with round-off (per ``scales``) written as ``0.0``."""
    array = np.array(values, dtype=float)
    tolerance = ROUNDOFF_RTOL * np.asarray(scales, dtype=float)
    tolerance = np.where(np.isfinite(tolerance), tolerance, 0.0)
    array[np.abs(array) <= tolerance] = 0.0
    return array


@dataclass(frozen=True)
class RoundoffScales:
    """The magnitudes of one scene, in SI units, that tell round-off from data.

    Attributes
    ----------
    length : float
        Largest distance of the scene's geometry from the origin, or size of
        a body, m (1 m for an empty scene).
    mass : float
        Total mass of the bodies, kg (1 kg without bodies).
    speed : float
        Largest speed the scene gives or can reach: initial velocities,
        rolling rates, free fall over ``length``, springs and forcing acting
        over ``length``, impulses, and ``length / t_end``, m/s.
    smallest_radius : float
        Smallest body radius (or half-length), m: angular rates are speeds
        over it.
    unit : float
        Scale of angles (rad) and unitless numbers (``UNIT_SCALE``).

    ``RoundoffScales.exact()`` (all scales 0) cleans nothing but ``-0.0``.
    """

    length: float
    mass: float
    speed: float
    smallest_radius: float
    unit: float = UNIT_SCALE

    @property
    def energy(self) -> float:
        """``mass · speed²``, J (``inf`` past the float range: ``**`` would raise)."""
        return self.mass * self.speed * self.speed

    @property
    def force(self) -> float:
        """``energy / length``, N."""
        return self.energy / self.length if self.length > 0 else 0.0

    @property
    def impulse(self) -> float:
        """``mass · speed``, N·s."""
        return self.mass * self.speed

    @property
    def angular_rate(self) -> float:
        """``speed / smallest_radius``, rad/s."""
        return self.speed / self.smallest_radius if self.smallest_radius > 0 else 0.0

    def coordinate(self, name: str) -> float:
        """Scale of the coordinate ``name`` of ``System.dof_labels`` (m or rad)."""
        return self.length if name in LENGTHS else self.unit

    def rate(self, name: str) -> float:
        """Scale of the rate ``name`` of ``System.dof_labels`` (m/s or rad/s)."""
        return self.speed if name in SPEEDS else self.angular_rate

    @classmethod
    def exact(cls) -> RoundoffScales:
        """Scales of 0: only ``-0.0`` is rewritten (as ``0.0``)."""
        return cls(0.0, 0.0, 0.0, 0.0, 0.0)

    @classmethod
    def of(cls, system: Any) -> RoundoffScales:
        """The scales of a compiled ``solver.system.System`` (read from its scene).

        A bare system without a scene (only ``dof_labels``) gets ``exact()``.
        """
        scene = getattr(system, "scene", None)
        if scene is None:
            return cls.exact()
        points: list[tuple[float, float]] = []
        sizes: list[float] = []
        masses: list[float] = []
        speeds: list[float] = []
        for body in scene.bodies:
            if body.type == "bead":
                points.append((body.x, body.rail_y))
                sizes.append(body.radius)
                masses.append(body.mass)
                speeds.append(abs(body.vx))
            elif body.type == "wheel":
                points.append(tuple(body.position))
                sizes.append(body.radius)
                masses.append(body.mass)
                speeds += [math.hypot(*body.velocity), abs(body.angular_velocity) * body.radius]
            else:
                points.append(tuple(body.position))
                sizes += [body.half_length, body.wheel_radius]
                masses.append(body.axle_mass + 2 * body.wheel_mass)
                speeds += [abs(rate) * body.wheel_radius for rate in body.wheel_rates]
        for boundary in scene.boundaries:
            if boundary.type == "segment":
                points += [tuple(boundary.a), tuple(boundary.b)]
            elif boundary.type == "polyline":
                points += [tuple(p) for p in boundary.points]
            else:
                points.append(tuple(boundary.center))
                sizes.append(boundary.radius)
        length = max(
            [math.hypot(*p) for p in points] + sizes + [s.rest_length for s in scene.springs],
            default=1.0,  # an empty scene
        )
        length = length if length > 0 else 1.0
        mass = sum(masses) or 1.0
        lightest = min(masses, default=1.0)
        gravity = math.hypot(*scene.gravity)
        speeds += [
            math.sqrt(2.0 * gravity * length),
            length / scene.solver.t_end,
            *(length * math.sqrt(s.stiffness / lightest) for s in scene.springs),
            *(_forced_speed(f, scene.solver.t_end, lightest) for f in scene.forces),
            *(math.hypot(*i.vector) / lightest for i in scene.impulses),
        ]
        return cls(length, mass, max(speeds), min(sizes, default=length))

    def trajectory_columns(self, dof_labels: Iterable[tuple[str, Any, Any]]) -> np.ndarray:
        """Scale of every number of a ``trajectory.csv`` row after ``t,kind``.

        Per body its coordinates, then its rates (``System.dof_labels``
        order), then the six energy columns.
        """
        scales: list[float] = []
        for _body_id, coord_names, rate_names in dof_labels:
            scales += [self.coordinate(name) for name in coord_names]
            scales += [self.rate(name) for name in rate_names]
        return np.array(scales + [self.energy] * 6)
