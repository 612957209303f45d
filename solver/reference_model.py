"""What a closed-form reference is (:class:`Reference` of :class:`Piece` s, :class:`Comparison`)
and the helpers its recognisers share (:mod:`solver.reference`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from solver.scene import (
    Bead,
    Scene,
    SegmentBoundary,
    Spring,
)

REFERENCE_FILE = "reference.csv"


NO_REFERENCE = (
    "no closed-form reference matches this scene (there are references for a bouncing "
    "ball, a mass between two stops, a mass on a spring with a stop, two masses on "
    "springs, a wheel rolling onto a step, a wheel on an incline and a bead against "
    "a compliant stop)"
)
"""Why a scene has no reference, in one line."""


MAX_PIECES = 20_000
"""Most pieces (flights between impacts) a reference computes; it ends where they do."""


_TOUCH = 1e-9
"""Relative tolerance for "touching" and "parallel" in the recognisers."""


StateFunction = Callable[[np.ndarray], dict[str, np.ndarray]]
"""A piece of motion: time since the piece began (s, array) → column values."""


@dataclass(frozen=True)
class Piece:
    """Motion from ``t_start`` (s) on, as a function of the time since then."""

    t_start: float
    state: StateFunction


@dataclass(frozen=True)
class Reference:
    """A closed form a scene matches.

    Attributes
    ----------
    name : str
        ``bouncing_ball``, ``mass_between_stops``, ``mass_spring_stop``,
        ``two_masses``, ``curb`` or ``incline``.
    title : str
        One line for a plot legend.
    source : str
        Where the formula comes from (paper and equation).
    conditions : tuple of str
        When the formula holds, in words (each checked for this scene).
    columns : tuple of str
        The trajectory columns it predicts (``ID.x``, ``ID.vx``, … as in
        ``trajectory.csv``).
    units : tuple of str
        Unit of each column.
    t_valid : float
        The curves hold on ``[0, t_valid]`` (s).
    impact_times : tuple of float
        Predicted impact times within ``[0, t_valid]`` (s).
    values : dict of str to float
        Named closed-form numbers (``period``, ``t_inf``, ``speed_ratio`` …).
    pieces : tuple of Piece
        The motion, one piece per interval between impacts.
    """

    name: str
    title: str
    source: str
    conditions: tuple[str, ...]
    columns: tuple[str, ...]
    units: tuple[str, ...]
    t_valid: float
    impact_times: tuple[float, ...]
    values: dict[str, float]
    pieces: tuple[Piece, ...] = field(repr=False)

    def evaluate(self, t: Sequence[float] | np.ndarray, before: bool = False) -> np.ndarray:
        """The predicted columns at times ``t`` (s): shape ``(len(t), len(columns))``.

        At an impact time the value after it is given, or the value before
        it with ``before=True`` (the ``pre`` rows of ``trajectory.csv``).
        Times outside ``[0, t_valid]`` give NaN.
        """
        t = np.atleast_1d(np.asarray(t, dtype=float))
        starts = np.array([piece.t_start for piece in self.pieces])
        index = np.searchsorted(starts, t, side="left" if before else "right") - 1
        index = np.clip(index, 0, len(self.pieces) - 1)
        out = np.full((len(t), len(self.columns)), np.nan)
        valid = (t >= 0.0) & (t <= self.t_valid)
        for k in np.unique(index[valid]):
            rows = valid & (index == k)
            piece = self.pieces[k]
            values = piece.state(t[rows] - piece.t_start)
            for j, column in enumerate(self.columns):
                out[rows, j] = values[column]
        return out


@dataclass(frozen=True)
class Comparison:
    """How far a run is from its reference.

    ``max_difference`` maps each column to the largest ``|simulated −
    reference|`` over the run's frames within ``[0, t_valid]`` (in the
    column's unit); ``impact_time_difference`` is the largest difference
    between a predicted impact time and the nearest simulated one (s; NaN
    when either has none).
    """

    max_difference: dict[str, float]
    impact_time_difference: float


def _gravity(scene: Scene) -> float | None:
    """``g`` for gravity straight down, else ``None``."""
    gx, gy = scene.gravity
    return -gy if gx == 0.0 and gy < 0.0 else None


def _only(scene: Scene, **counts: int) -> bool:
    """Whether the scene's sections have exactly these many items (others empty)."""
    sections = ("boundaries", "bodies", "springs", "forces", "impulses")
    return all(len(getattr(scene, key)) == counts.get(key, 0) for key in sections)


def _vertical_wall_across(boundary: Any, rail_y: float) -> float | None:
    """The x of a vertical segment that crosses the rail ``y = rail_y``, else ``None``."""
    if not isinstance(boundary, SegmentBoundary):
        return None
    (ax, ay), (bx, by) = boundary.a, boundary.b
    if ax != bx or not min(ay, by) <= rail_y <= max(ay, by):
        return None
    return ax


def _horizontal_spring(scene: Scene, spring: Spring, bead: Bead) -> tuple[float, float] | None:
    """``(rest position, stiffness)`` of an undamped spring from ``bead`` to its rail, else None."""
    if spring.a != bead.id or spring.anchor is None or spring.damping != 0.0:
        return None
    ax, ay = spring.anchor
    if ay != bead.rail_y or ax == bead.x:
        return None
    side = 1.0 if bead.x > ax else -1.0
    return ax + side * spring.rest_length, spring.stiffness


def _restitution(scene: Scene, boundary: Any = None) -> float:
    return scene.contact_params(boundary)[0]


def _flights(
    t_end: float,
    first: float,
    flight: Callable[[int], float],
    piece: Callable[[int], StateFunction],
    rest: StateFunction | None,
) -> tuple[list[Piece], list[float], float]:
    """Pieces of a motion with impacts at ``first``, ``first + flight(1)``, ….

    ``piece(k)`` is the motion after impact k (piece 0 before the first);
    ``flight(k)`` the time from impact k to k + 1, ``math.inf`` when no
    impact follows, ``0`` when the motion has come to rest (then ``rest`` is
    the last piece). Returns the pieces, the impact times and the time up
    to which the pieces hold (``t_end``, or the next impact when
    ``MAX_PIECES`` ran out first).
    """
    pieces = [Piece(0.0, piece(0))]
    impacts: list[float] = []
    t = first
    k = 1
    while t <= t_end and len(pieces) < MAX_PIECES:
        impacts.append(t)
        duration = flight(k)
        if duration == 0.0 and rest is not None:
            pieces.append(Piece(t, rest))
            return pieces, impacts, t_end
        pieces.append(Piece(t, piece(k)))
        t += duration
        k += 1
    return pieces, impacts, min(t, t_end)
