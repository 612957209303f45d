"""Closed-form references: what the papers' formulas predict for a scene, and when they hold.

:func:`recognise` looks at a scene and returns the :class:`Reference` it
matches, or ``None``. A reference holds curves of trajectory columns
(``ball.y``, ``mass.vx``, …) as functions of time, each valid over an
interval, the predicted impact times, and named values (a period, the
accumulation time, a speed ratio) — with the conditions under which the
formulas hold, in words. :func:`compare` measures a run against it and
:func:`write_reference_csv` writes ``reference.csv`` beside a run's files.

The closed forms (SI units; ``g`` is the magnitude of gravity):

``bouncing_ball``
    A wheel dropped onto a horizontal segment, no sideways motion. Its centre
    falls from height ``h`` above its contact position with upward speed
    ``v₀``; the first impact comes at ``t₁ = (v₀ + u₁)/g`` with approach speed
    ``u₁ = √(v₀² + 2gh)``, each rebound leaves at ``e`` times the approach
    speed, so flight k lasts ``2eᵏu₁/g`` and the impacts accumulate at
    ``t∞ = t₁ + 2e u₁/(g(1 − e))`` (from rest: ``t∞ = t₀(1 + e)/(1 − e)``,
    ``t₀ = √(2h/g)``). After ``t∞`` the ball rests; the ground carries ``mg``.
``mass_between_stops``
    A bead between two walls across its rail, no spring, no force (paper 003
    (40)): a sawtooth with period ``T = 2·gap/V`` for ``e = 1`` (``gap``: the
    free travel of the centre); with ``e < 1`` each impact multiplies the speed
    by that wall's ``e``.
``mass_spring_stop``
    A bead on a spring (stiffness ``k``, rest position ``c``) with one wall
    across its rail (paper 003 (42)–(47)): between impacts
    ``x = c + A cos(λt + φ)``, ``λ² = k/m``. Leaving the stop at speed ``u``,
    the mass returns after ``T(u) = (2/λ)(π − atan2(u/λ, d))`` where ``d`` is
    the distance from the stop to the rest point, positive when the rest point
    lies on the mass's side of the stop. For ``d = 0`` this is ``π/λ`` and the
    motion is ``x = −(V/λ)|sin λt|`` (paper 003 (46)). Paper 003 (44) writes
    ``T = (2/λ)[π − arctan(V/(λx₁))]``: with ``V`` the velocity of arrival at
    the stop and ``x₁`` measured from the rest point this is the case
    ``d > 0`` (the stop beyond the rest point); for ``d < 0`` (the spring
    presses the mass against the stop) the other branch of the arctangent
    applies, ``T = (2/λ)·arctan(u/(λ|d|)) < π/λ``, which (44) does not give.
    Each impact multiplies the speed by ``e`` and dissipates
    ``(1 − e²)/2 · m u²``.
``two_masses``
    Two beads on one rail, each on its own spring to a fixed anchor, no walls
    (paper 002): free harmonic motion up to the first impact (the first zero
    of the gap, found on the closed-form motion), Newton's law across it
    (``P = (1 + e) m₁m₂/(m₁ + m₂) · (v₁ − v₂)``); after a plastic impact
    (``e = 0``) the two move as one mass ``m₁ + m₂`` on both springs while the
    contact force ``λ = m₂ẍ + k₂(x₂ − c₂) ≥ 0``, then freely again; the
    reference ends at the next impact.
``curb``
    A wheel rolling without slip on a horizontal floor towards a step of
    height ``0 < h < r`` (a corner of a polyline). Rolling at constant speed
    it meets the corner; a plastic impact about the corner that does not slip
    keeps the angular momentum about the corner:
    ``J ω⁻ + m v⁻ (r − h) = (J + m r²) ω⁺``, so
    ``ω⁺/ω⁻ = v⁺/v⁻ = 1 − m r h/(J + m r²)`` — derived here (the classic
    exercise of a disk rolling onto a step), not taken from a paper: paper 004
    gives the corner's impact equations but no such ratio. For a uniform disk,
    ``J = m r²/2``, it is ``1 − 2h/(3r)``; for any other inertia the general
    form applies. It needs the corner's restitution 0 and friction at
    least the ratio of the tangential to the normal impulse the impact asks
    for (given in the conditions).
``compliant_stop``
    A bead moving towards one vertical wall with ``compliance`` (paper 003
    §2, eqs. (10)–(12); Hertz), nothing else: it flies to the touch at
    ``T``, presses for the contact time (linear: ``π/λ`` undamped, the damped
    oscillator's release where ``kδ + cδ̇ = 0`` otherwise; Hertz, undamped:
    ``2(δ_m/V)(2/5)B(2/5, 1/2)``, the overlap from the inverse incomplete beta
    function) and leaves at the exit speed (``V`` undamped). The
    ``impact_times`` are the ``touch`` and the ``release``; the values are the
    contact time, peak force, exit speed, restitution and impulse
    ``(1 + e)mV`` (:mod:`solver.compliance`).
``incline``
    A wheel touching a straight segment, pressed onto it by gravity, moving
    along it. Sliding (slip speed ``u = v·t + rω ≠ 0``): the centre
    accelerates at ``g_t − μN/m·sgn u`` and ``J ω̇ = −μ N r sgn u``
    (``N = −m g·n``); rolling (``u = 0``) holds when the friction it needs,
    ``|g_t|/(1/m + r²/J)``, is at most ``μN``, with acceleration
    ``g_t/(1 + J/(m r²))``. Valid while the contact stays on the segment.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import brentq

from solver.atomic_file import atomic_write
from solver.compliance import hertz_overlap, hertz_stop, linear_overlap, linear_stop
from solver.scene import (
    Bead,
    PolylineBoundary,
    Scene,
    SegmentBoundary,
    Spring,
    Wheel,
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


# ------------------------------------------------------------------ the model


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


# ------------------------------------------------------------ public entry points


def recognise(scene: Scene, t_end: float | None = None) -> Reference | None:
    """The closed form ``scene`` matches, or ``None``.

    Parameters
    ----------
    scene : Scene
        The scene as drawn.
    t_end : float, optional
        How far to predict (s); default the scene's ``solver.t_end``.
    """
    t_end = scene.solver.t_end if t_end is None else t_end
    # the rigid closed forms do not hold for a soft stop, and the soft one only for it
    for recogniser in _COMPLIANT_RECOGNISERS if scene.has_compliance else _RECOGNISERS:
        reference = recogniser(scene, t_end)
        if reference is not None:
            return reference
    return None


IMPACT_LIKE = ("impact", "touch", "release")
"""Event types matched with a reference's ``impact_times`` (a soft stop's touch and release)."""

SNAP_TOLERANCE = 1e-6
"""Frames closer than this (s) to a predicted impact are taken at it (``pre``: just before)."""


def beside_frames(reference: Reference, times: np.ndarray, kinds: Sequence[str]) -> np.ndarray:
    """The reference beside a run's frames: shape ``(len(times), len(columns))``.

    A ``pre`` or ``post`` frame within ``SNAP_TOLERANCE`` of a predicted
    impact is compared with the value just before or after that impact (a
    simulated impact time a few rounding errors off does not compare a
    velocity before the jump with one after it); a ``sample`` frame that
    close gives NaN. Frames outside ``[0, t_valid]`` give NaN.
    """
    times = np.asarray(times, dtype=float)
    out = np.full((len(times), len(reference.columns)), np.nan)
    if not len(times):
        return out
    at = times.copy()
    impacts = np.asarray(reference.impact_times, dtype=float)
    near = np.zeros(len(times), dtype=bool)
    if len(impacts):
        k = np.clip(np.searchsorted(impacts, times), 1, len(impacts)) - 1
        k = np.where(
            (k + 1 < len(impacts))
            & (
                np.abs(impacts[np.minimum(k + 1, len(impacts) - 1)] - times)
                < np.abs(impacts[k] - times)
            ),
            k + 1,
            k,
        )
        near = np.abs(impacts[k] - times) <= SNAP_TOLERANCE
        at = np.where(near, impacts[k], times)
    pre = np.array([kind == "pre" for kind in kinds], dtype=bool)
    sample = np.array([kind == "sample" for kind in kinds], dtype=bool)
    out[~pre] = reference.evaluate(at[~pre])
    out[pre] = reference.evaluate(at[pre], before=True)
    out[near & sample] = np.nan
    return out


def compare(
    reference: Reference,
    times: np.ndarray,
    kinds: Sequence[str],
    columns: dict[str, np.ndarray],
    impact_times: Iterable[float],
) -> Comparison:
    """Compare a run (its frame times, kinds and columns) with ``reference``.

    Parameters
    ----------
    reference : Reference
    times : (n,) ndarray
        Frame times (s).
    kinds : sequence of str
        Frame kinds (``sample``, ``pre``, ``post``).
    columns : dict of str to (n,) ndarray
        At least the reference's columns, simulated.
    impact_times : iterable of float
        Times of the run's ``impact`` events (s); each is matched with the
        nearest predicted impact (a run that ends a Zeno sequence early has
        fewer impacts than the closed form).
    """
    times = np.asarray(times, dtype=float)
    predicted = beside_frames(reference, times, kinds)
    differences = {}
    for j, column in enumerate(reference.columns):
        diff = np.abs(np.asarray(columns[column], dtype=float) - predicted[:, j])
        diff = diff[np.isfinite(diff)]
        differences[column] = float(diff.max()) if len(diff) else math.nan
    simulated = np.array(sorted({t for t in impact_times if t <= reference.t_valid}))
    expected = np.asarray(reference.impact_times, dtype=float)
    if len(simulated) and len(expected):
        nearest = np.abs(expected[None, :] - simulated[:, None]).min(axis=1)
        time_difference = float(nearest.max())
    else:
        time_difference = math.nan
    return Comparison(differences, time_difference)


def compare_trajectory(reference: Reference, trajectory: Any) -> Comparison:
    """:func:`compare` for a recorded :class:`solver.record.Trajectory`."""
    times, kinds, columns = _trajectory_columns(trajectory, reference.columns)
    impacts = [event.t for event in trajectory.events if event.type in IMPACT_LIKE]
    return compare(reference, times, kinds, columns, impacts)


def _trajectory_columns(
    trajectory: Any, wanted: Sequence[str]
) -> tuple[np.ndarray, list[str], dict[str, np.ndarray]]:
    frames = trajectory.frames
    names: list[tuple[str, bool, int]] = []
    q_start = v_start = 0
    for body, coord_names, rate_names in trajectory.system.dof_labels:
        names += [(f"{body}.{n}", True, q_start + k) for k, n in enumerate(coord_names)]
        names += [(f"{body}.{n}", False, v_start + k) for k, n in enumerate(rate_names)]
        q_start += len(coord_names)
        v_start += len(rate_names)
    where = {name: (is_q, index) for name, is_q, index in names}
    columns = {}
    for column in wanted:
        is_q, index = where[column]
        columns[column] = np.array([(f.q if is_q else f.v)[index] for f in frames])
    return np.array([f.t for f in frames]), [f.kind for f in frames], columns


def write_reference_csv(
    reference: Reference, times: np.ndarray, kinds: Sequence[str], path: str | os.PathLike[str]
) -> None:
    """Write ``reference.csv``: the reference beside each row of ``trajectory.csv``.

    Columns ``t,kind`` then the reference's columns; one row per trajectory
    row (``kind`` ``sample``, ``pre``, ``post``: the value before the impact
    on a ``pre`` row, after it on a ``post`` row), then one row of kind
    ``impact`` at each predicted impact time (the value just before it).
    Outside ``[0, t_valid]`` the fields are empty. Written atomically.
    """
    times = np.asarray(times, dtype=float)
    rows: list[tuple[float, int, str, np.ndarray]] = []
    values = beside_frames(reference, times, kinds)
    for n, (t, kind) in enumerate(zip(times, kinds, strict=True)):
        rows.append((float(t), 0, kind, values[n]))
    impacts = np.array(reference.impact_times)
    if len(impacts):
        at_impacts = reference.evaluate(impacts, before=True)
        rows += [(float(t), 1, "impact", at_impacts[k]) for k, t in enumerate(impacts)]
    rows.sort(key=lambda row: (row[0], row[1]))
    with atomic_write(path, newline="") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(["t", "kind", *reference.columns])
        for t, _, kind, row in rows:
            writer.writerow(
                [repr(t), kind, *(repr(float(x)) if math.isfinite(x) else "" for x in row)]
            )


def write_reference_file(
    scene: Scene, out_dir: str | os.PathLike[str], t_end: float | None = None
) -> Path | None:
    """Write ``out_dir/reference.csv`` for the run whose ``trajectory.csv`` is there.

    Returns the path, or ``None`` when no closed form matches ``scene``.
    """
    reference = recognise(scene, t_end)
    if reference is None:
        return None
    directory = Path(out_dir)
    with (directory / "trajectory.csv").open(newline="") as stream:
        reader = csv.reader(stream)
        next(reader)
        rows = [(float(row[0]), row[1]) for row in reader]
    path = directory / REFERENCE_FILE
    write_reference_csv(reference, np.array([r[0] for r in rows]), [r[1] for r in rows], path)
    return path


# --------------------------------------------------------------------- helpers


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


# -------------------------------------------------------------- bouncing ball


def _bouncing_ball(scene: Scene, t_end: float) -> Reference | None:
    g = _gravity(scene)
    if g is None or not _only(scene, boundaries=1, bodies=1):
        return None
    ball, ground = scene.bodies[0], scene.boundaries[0]
    if not isinstance(ball, Wheel) or not isinstance(ground, SegmentBoundary):
        return None
    (ax, ay), (bx, by) = ground.a, ground.b
    x0, y0 = ball.position
    vx0, vy0 = ball.velocity
    e, mu = scene.contact_params(ground)
    if ay != by or not min(ax, bx) < x0 < max(ax, bx) or vx0 != 0.0:
        return None
    if ball.angular_velocity != 0.0 and mu > 0.0:
        return None
    r, m = ball.radius, ball.mass
    y_contact = ay + r
    h = y0 - y_contact
    if h < 0.0 or (h == 0.0 and vy0 <= 0.0):
        return None
    u1 = math.sqrt(vy0 * vy0 + 2.0 * g * h)
    t1 = (vy0 + u1) / g
    t_inf = t1 + 2.0 * e * u1 / (g * (1.0 - e)) if e < 1.0 else math.inf
    name = ball.id

    def flight_piece(k: int) -> StateFunction:
        y_start, w = (y0, vy0) if k == 0 else (y_contact, u1 * e**k)

        def state(tau: np.ndarray) -> dict[str, np.ndarray]:
            return {f"{name}.y": y_start + w * tau - 0.5 * g * tau * tau, f"{name}.vy": w - g * tau}

        return state

    def rest(tau: np.ndarray) -> dict[str, np.ndarray]:
        return {f"{name}.y": np.full_like(tau, y_contact), f"{name}.vy": np.zeros_like(tau)}

    tiny = 1e-12 * u1

    def flight(k: int) -> float:
        w = u1 * e**k
        return 0.0 if w <= tiny else 2.0 * w / g

    pieces, impacts, t_valid = _flights(t_end, t1, flight, flight_piece, rest)
    values = {"t_first": t1, "u_first": u1, "restitution": e, "resting_force": m * g}
    if e < 1.0:
        values["t_inf"] = t_inf
    return Reference(
        name="bouncing_ball",
        title=f"bouncing ball: t∞ = {t_inf:.6g} s" if e < 1.0 else "bouncing ball (e = 1)",
        source="impacts of a falling ball: t∞ = t₀(1+e)/(1−e) from rest; resting force mg",
        conditions=(
            "one wheel above one horizontal segment, gravity straight down",
            "no horizontal velocity; no spin, or no friction",
            "Newton's restitution at the ground; the ball never leaves the segment",
        ),
        columns=(f"{name}.y", f"{name}.vy"),
        units=("m", "m/s"),
        t_valid=t_valid,
        impact_times=tuple(impacts),
        values=values,
        pieces=tuple(pieces),
    )


# ------------------------------------------------------- mass between two stops


def _mass_between_stops(scene: Scene, t_end: float) -> Reference | None:
    if not _only(scene, boundaries=2, bodies=1) or scene.gravity[0] != 0.0:
        return None
    bead = scene.bodies[0]
    if not isinstance(bead, Bead) or bead.vx == 0.0:
        return None
    walls = [(_vertical_wall_across(b, bead.rail_y), b) for b in scene.boundaries]
    if any(x is None for x, _ in walls):
        return None
    walls.sort(key=lambda item: item[0])
    (x_left, left), (x_right, right) = walls
    if not x_left < bead.x < x_right:
        return None
    r = bead.radius
    lo, hi = x_left + r, x_right - r
    gap = hi - lo
    e_left, e_right = _restitution(scene, left), _restitution(scene, right)
    name = bead.id
    v0 = bead.vx
    first = ((hi - bead.x) / v0) if v0 > 0 else ((bead.x - lo) / -v0)

    velocities = [v0]  # velocities[k]: after impact k (impacts alternate walls)

    def piece(k: int) -> StateFunction:
        v = velocities[k]
        x_start = bead.x if k == 0 else (hi if v < 0 else lo)

        def state(tau: np.ndarray) -> dict[str, np.ndarray]:
            return {f"{name}.x": x_start + v * tau, f"{name}.vx": np.full_like(tau, v)}

        return state

    def flight(k: int) -> float:
        before = velocities[k - 1]
        v = -before * (e_right if before > 0 else e_left)
        velocities.append(v)
        return 0.0 if v == 0.0 else gap / abs(v)

    def rest(tau: np.ndarray) -> dict[str, np.ndarray]:
        x_stop = hi if velocities[-2] > 0 else lo
        return {f"{name}.x": np.full_like(tau, x_stop), f"{name}.vx": np.zeros_like(tau)}

    pieces, impacts, t_valid = _flights(t_end, first, flight, piece, rest)
    values = {"gap": gap, "speed": abs(v0)}
    if e_left == e_right == 1.0:
        values["period"] = 2.0 * gap / abs(v0)
    return Reference(
        name="mass_between_stops",
        title=f"mass between two stops: period 2·gap/V = {2 * gap / abs(v0):.6g} s",
        source="paper 003 (40): sawtooth of period T = 2(x₁ − x₂)/V₁",
        conditions=(
            "one bead between two vertical walls across its rail, no spring, no force",
            "Newton's restitution at each wall (e = 1: energy exactly conserved)",
        ),
        columns=(f"{name}.x", f"{name}.vx"),
        units=("m", "m/s"),
        t_valid=t_valid,
        impact_times=tuple(impacts),
        values=values,
        pieces=tuple(pieces),
    )


# ----------------------------------------------------------- mass, spring, stop


def spring_stop_period(speed: float, lam: float, d: float) -> float:
    """Time from leaving a stop at ``speed`` (m/s) to returning to it (s).

    ``lam`` is ``√(k/m)`` (rad/s) and ``d`` the distance (m) from the stop to
    the spring's rest position, positive when the rest position lies on the
    mass's side of the stop: ``T = (2/λ)(π − atan2(u/λ, d))``. ``π/λ`` for
    ``d = 0``; ``2π/λ`` for ``u = 0, d > 0``; 0 for ``u = 0, d < 0`` (the
    spring holds the mass against the stop).
    """
    if speed == 0.0 and d <= 0.0:
        return 0.0
    return 2.0 / lam * (math.pi - math.atan2(speed / lam, d))


def _mass_spring_stop(scene: Scene, t_end: float) -> Reference | None:
    if not _only(scene, boundaries=1, bodies=1, springs=1) or scene.gravity[0] != 0.0:
        return None
    bead = scene.bodies[0]
    if not isinstance(bead, Bead):
        return None
    wall_x = _vertical_wall_across(scene.boundaries[0], bead.rail_y)
    spring = _horizontal_spring(scene, scene.springs[0], bead)
    if wall_x is None or spring is None or wall_x == bead.x:
        return None
    c, k = spring
    m, r = bead.mass, bead.radius
    lam = math.sqrt(k / m)
    s = 1.0 if wall_x > bead.x else -1.0  # the stop is on the +x side of the mass
    x_stop = wall_x - s * r
    anchor_x = scene.springs[0].anchor[0]
    d = s * (x_stop - c)
    e = _restitution(scene, scene.boundaries[0])
    x0, v0 = bead.x, bead.vx
    amplitude = math.hypot(x0 - c, v0 / lam)
    name = bead.id

    # the spring must not pass its anchor (its force would no longer be linear)
    far_end = c - s * amplitude
    if (far_end - anchor_x) * (x0 - anchor_x) <= 0.0:
        return None

    def harmonic(x_start: float, v_start: float) -> StateFunction:
        def state(tau: np.ndarray) -> dict[str, np.ndarray]:
            cos, sin = np.cos(lam * tau), np.sin(lam * tau)
            return {
                f"{name}.x": c + (x_start - c) * cos + v_start / lam * sin,
                f"{name}.vx": -(x_start - c) * lam * sin + v_start * cos,
            }

        return state

    rho = (x_stop - c) / amplitude if amplitude > 0.0 else math.inf
    if abs(rho) > 1.0:  # the oscillation never reaches the stop
        first = math.inf
        u1 = 0.0
    else:
        phi0 = math.atan2(-v0 / lam, x0 - c)
        first = ((-s * math.acos(rho) - phi0) % (2.0 * math.pi)) / lam
        if abs(x0 - x_stop) <= _TOUCH * max(1.0, abs(x0)) and s * v0 <= 0.0:
            first = spring_stop_period(abs(v0), lam, d)  # leaving the stop: back after T(u)
        elif abs(x0 - x_stop) <= _TOUCH * max(1.0, abs(x0)) and s * v0 > 0.0:
            first = 0.0
        u1 = amplitude * lam * math.sqrt(max(0.0, 1.0 - rho * rho))
    tiny = 1e-12 * max(u1, 1e-300)

    def piece(j: int) -> StateFunction:
        if j == 0:
            return harmonic(x0, v0)
        return harmonic(x_stop, -s * e**j * u1)

    def flight(j: int) -> float:
        w = e**j * u1
        if w <= tiny:
            return 0.0 if d <= 0.0 else spring_stop_period(0.0, lam, d)
        return spring_stop_period(w, lam, d)

    def rest(tau: np.ndarray) -> dict[str, np.ndarray]:
        return {f"{name}.x": np.full_like(tau, x_stop), f"{name}.vx": np.zeros_like(tau)}

    pieces, impacts, t_valid = _flights(t_end, first, flight, piece, rest)
    values = {"lambda": lam, "rest_to_stop": d, "u_first": u1}
    if math.isfinite(first):
        values["t_first"] = first
        values["period"] = spring_stop_period(u1, lam, d)
        values["energy_loss_per_impact"] = 0.5 * (1.0 - e * e) * m * u1 * u1
    return Reference(
        name="mass_spring_stop",
        title=(
            f"mass–spring–stop: T = {values['period']:.6g} s"
            if "period" in values
            else "mass on a spring (never reaches the stop)"
        ),
        source="paper 003 (42)–(47); period T = (2/λ)(π − atan2(u/λ, d)), corrected (44)",
        conditions=(
            "one bead on one undamped spring to an anchor on its rail, one vertical wall",
            "the spring never passes its anchor (its force stays linear)",
            "Newton's restitution at the wall (e = 1: periodic)",
        ),
        columns=(f"{name}.x", f"{name}.vx"),
        units=("m", "m/s"),
        t_valid=t_valid,
        impact_times=tuple(impacts),
        values=values,
        pieces=tuple(pieces),
    )


# ---------------------------------------------------------------- two masses


def _two_masses(scene: Scene, t_end: float) -> Reference | None:
    if not _only(scene, bodies=2, springs=2) or scene.gravity[0] != 0.0:
        return None
    b1, b2 = sorted(scene.bodies, key=lambda b: getattr(b, "x", 0.0))
    if not (isinstance(b1, Bead) and isinstance(b2, Bead)) or b1.rail_y != b2.rail_y:
        return None
    springs = {}
    for spring in scene.springs:
        for bead in (b1, b2):
            found = _horizontal_spring(scene, spring, bead)
            if found is not None:
                springs[bead.id] = found
    if len(springs) != 2:
        return None
    (c1, k1), (c2, k2) = springs[b1.id], springs[b2.id]
    m1, m2 = b1.mass, b2.mass
    w1, w2 = math.sqrt(k1 / m1), math.sqrt(k2 / m2)
    D = b1.radius + b2.radius
    e = _restitution(scene)
    n1, n2 = b1.id, b2.id

    def free(
        t0: float, x1: float, v1: float, x2: float, v2: float
    ) -> Callable[[np.ndarray], tuple]:
        def motion(tau: np.ndarray) -> tuple:
            tau = np.asarray(tau, dtype=float)
            c_1, s_1 = np.cos(w1 * tau), np.sin(w1 * tau)
            c_2, s_2 = np.cos(w2 * tau), np.sin(w2 * tau)
            return (
                c1 + (x1 - c1) * c_1 + v1 / w1 * s_1,
                -(x1 - c1) * w1 * s_1 + v1 * c_1,
                c2 + (x2 - c2) * c_2 + v2 / w2 * s_2,
                -(x2 - c2) * w2 * s_2 + v2 * c_2,
            )

        return motion

    M, K = m1 + m2, k1 + k2
    W = math.sqrt(K / M)
    x_eq = (k1 * c1 + k2 * (c2 - D)) / K

    def joint(x1: float, v: float) -> Callable[[np.ndarray], tuple]:
        def motion(tau: np.ndarray) -> tuple:
            tau = np.asarray(tau, dtype=float)
            X = x_eq + (x1 - x_eq) * np.cos(W * tau) + v / W * np.sin(W * tau)
            V = -(x1 - x_eq) * W * np.sin(W * tau) + v * np.cos(W * tau)
            return X, V, X + D, V

        return motion

    def contact_force(x1: float, v: float) -> Callable[[float], float]:
        motion = joint(x1, v)

        def force(tau: float) -> float:
            X, _, _, _ = motion(np.array([tau]))
            acceleration = -W * W * (X[0] - x_eq)
            return float(m2 * acceleration + k2 * (X[0] + D - c2))

        return force

    def first_root(f: Callable[[float], float], start: float, stop: float, step: float) -> float:
        """First zero of ``f`` on ``(start, stop]`` where it turns from positive to ≤ 0."""
        a, fa = start, f(start)
        while a < stop:
            b = min(a + step, stop)
            fb = f(b)
            if fa > 0.0 >= fb:
                return brentq(f, a, b, xtol=1e-15, rtol=4 * np.finfo(float).eps)
            a, fa = b, fb
        return math.inf

    step = min(2 * math.pi / w1, 2 * math.pi / w2, 2 * math.pi / W) / 400.0
    phases: list[tuple[float, Callable[[np.ndarray], tuple]]] = []
    impacts: list[float] = []
    values: dict[str, float] = {"omega_1": w1, "omega_2": w2}
    t = 0.0
    motion = free(0.0, b1.x, b1.vx, b2.x, b2.vx)
    phases.append((0.0, motion))

    def gap_of(motion: Callable[[np.ndarray], tuple], t0: float) -> Callable[[float], float]:
        def gap(tt: float) -> float:
            x1, _, x2, _ = motion(np.array([tt - t0]))
            return float(x2[0] - x1[0] - D)

        return gap

    t_valid = t_end
    for number in (1, 2):
        t_hit = first_root(gap_of(motion, t), t + 1e-12 if impacts else t, t_end, step)
        if not math.isfinite(t_hit):
            break
        impacts.append(t_hit)
        x1, v1, x2, v2 = (float(a[0]) for a in motion(np.array([t_hit - t])))
        P = (1.0 + e) * m1 * m2 / M * (v1 - v2)
        v1, v2 = v1 - P / m1, v2 + P / m2
        t = t_hit
        if number == 2:  # the instant after the second impact ends the reference
            t_valid = t_hit
            phases.append((t, free(t, x1, v1, x2, v2)))
            break
        values.update({"t_first_impact": t_hit, "impulse": P, "v1_after": v1, "v2_after": v2})
        if e == 0.0 and contact_force(x1, v1)(0.0) > 0.0:
            motion = joint(x1, v1)
            phases.append((t, motion))
            force = contact_force(x1, v1)
            t_lift = first_root(lambda tt, f=force, t0=t: f(tt - t0), t, t_end, step)
            if not math.isfinite(t_lift):
                break
            values["t_liftoff"] = t_lift
            x1, v1, x2, v2 = (float(a[0]) for a in motion(np.array([t_lift - t])))
            t = t_lift
        motion = free(t, x1, v1, x2, v2)
        phases.append((t, motion))

    def as_state(motion: Callable[[np.ndarray], tuple]) -> StateFunction:
        def state(tau: np.ndarray) -> dict[str, np.ndarray]:
            x1, v1, x2, v2 = motion(tau)
            return {f"{n1}.x": x1, f"{n1}.vx": v1, f"{n2}.x": x2, f"{n2}.vx": v2}

        return state

    return Reference(
        name="two_masses",
        title="two masses on springs (paper 002)",
        source="paper 002: free oscillators, Newton's law at the impact, joint motion if plastic",
        conditions=(
            "two beads on one rail, each on an undamped spring to an anchor on the rail",
            "no walls, no forces; valid up to the second impact",
        ),
        columns=(f"{n1}.x", f"{n1}.vx", f"{n2}.x", f"{n2}.vx"),
        units=("m", "m/s", "m", "m/s"),
        t_valid=t_valid,
        impact_times=tuple(impacts),
        values=values,
        pieces=tuple(Piece(t0, as_state(motion)) for t0, motion in phases),
    )


# ---------------------------------------------------------------------- curb


def _step_ahead(
    boundary: PolylineBoundary, x: float, y_floor: float, direction: float
) -> tuple[float, float] | None:
    """The top corner of the step a wheel rolling along ``y_floor`` at ``x`` meets next.

    The floor is a horizontal piece of the polyline under ``x``; its end in
    the direction of motion must rise straight up to the next vertex, the
    corner. ``None`` when the polyline is not shaped so.
    """
    points = boundary.points
    for i in range(len(points) - 1):
        (ax, ay), (bx, by) = points[i], points[i + 1]
        if not (ay == by == y_floor and min(ax, bx) <= x <= max(ax, bx)):
            continue
        forward = (bx - ax) * direction > 0.0
        end, beyond = (i + 1, i + 2) if forward else (i, i - 1)
        if not 0 <= beyond < len(points):
            return None
        (ex, ey), (tx, ty) = points[end], points[beyond]
        if tx == ex and ty > ey:
            return tx, ty
        return None
    return None


def _curb(scene: Scene, t_end: float) -> Reference | None:
    g = _gravity(scene)
    if g is None or not _only(scene, boundaries=1, bodies=1):
        return None
    wheel, boundary = scene.bodies[0], scene.boundaries[0]
    if not isinstance(wheel, Wheel) or not isinstance(boundary, PolylineBoundary):
        return None
    (x0, y0), (vx, vy) = wheel.position, wheel.velocity
    r, m, J = wheel.radius, wheel.mass, wheel.inertia
    if vy != 0.0 or vx == 0.0 or abs(wheel.angular_velocity + vx / r) > _TOUCH * abs(vx / r):
        return None
    direction = 1.0 if vx > 0 else -1.0
    y_floor = y0 - r
    corner = _step_ahead(boundary, x0, y_floor, direction)
    if corner is None:
        return None
    cx, top_y = corner
    h = top_y - y_floor
    if not 0.0 < h < r:
        return None
    # centre when the disk touches the corner: |c − corner| = r at height y0
    dx = math.sqrt(r * r - (r - h) ** 2)
    x_hit = cx - direction * dx
    if (x_hit - x0) * direction < 0.0:
        return None
    t_hit = (x_hit - x0) / vx
    ratio = 1.0 - m * r * h / (J + m * r * r)
    omega_minus = wheel.angular_velocity
    omega_plus = ratio * omega_minus
    # centre velocity after: rotation about the corner, ω⁺ × (c − corner)
    rel = (x_hit - corner[0], y0 - corner[1])
    v_plus = (-omega_plus * rel[1], omega_plus * rel[0])
    impulse = (m * (v_plus[0] - vx), m * (v_plus[1] - 0.0))
    normal = (rel[0] / r, rel[1] / r)
    P_n = impulse[0] * normal[0] + impulse[1] * normal[1]
    P_t = abs(impulse[0] * normal[1] - impulse[1] * normal[0])
    needed = P_t / P_n if P_n > 0 else math.inf
    e_corner, mu_corner = scene.contact_params(boundary)
    if e_corner != 0.0 or mu_corner < needed or t_hit > t_end:
        return None
    name = wheel.id

    def rolling(tau: np.ndarray) -> dict[str, np.ndarray]:
        return {
            f"{name}.x": x0 + vx * tau,
            f"{name}.y": np.full_like(tau, y0),
            f"{name}.vx": np.full_like(tau, vx),
            f"{name}.vy": np.zeros_like(tau),
            f"{name}.omega": np.full_like(tau, omega_minus),
        }

    def after(tau: np.ndarray) -> dict[str, np.ndarray]:
        # only the instant after the impact is closed-form (then a pendulum about the corner)
        return {
            f"{name}.x": np.full_like(tau, x_hit),
            f"{name}.y": np.full_like(tau, y0),
            f"{name}.vx": np.full_like(tau, v_plus[0]),
            f"{name}.vy": np.full_like(tau, v_plus[1]),
            f"{name}.omega": np.full_like(tau, omega_plus),
        }

    return Reference(
        name="curb",
        title=f"wheel onto a step: ω⁺/ω⁻ = 1 − m r h/(J + m r²) = {ratio:.6g}",
        source="derived (not in the papers): plastic impact about the corner, "
        "angular momentum about it kept",
        conditions=(
            "a wheel rolling without slip on a horizontal floor towards a step 0 < h < r",
            "restitution 0 at the corner, friction at least "
            f"{needed:.4g} (the impulse's tangential/normal ratio); "
            "1 − 2h/(3r) when J = m r²/2",
            "valid up to the instant after the impact",
        ),
        columns=(f"{name}.x", f"{name}.y", f"{name}.vx", f"{name}.vy", f"{name}.omega"),
        units=("m", "m", "m/s", "m/s", "rad/s"),
        t_valid=t_hit,
        impact_times=(t_hit,),
        values={
            "speed_ratio": ratio,
            "uniform_disk_ratio": 1.0 - 2.0 * h / (3.0 * r),
            "step_height": h,
            "t_impact": t_hit,
            "omega_plus": omega_plus,
            "friction_needed": needed,
        },
        pieces=(Piece(0.0, rolling), Piece(t_hit, after)),
    )


# -------------------------------------------------------------------- incline


def _incline(scene: Scene, t_end: float) -> Reference | None:
    if not _only(scene, boundaries=1, bodies=1):
        return None
    wheel, segment = scene.bodies[0], scene.boundaries[0]
    if not isinstance(wheel, Wheel) or not isinstance(segment, SegmentBoundary):
        return None
    a = np.array(segment.a, dtype=float)
    b = np.array(segment.b, dtype=float)
    length = float(np.linalg.norm(b - a))
    along = (b - a) / length
    c0 = np.array(wheel.position, dtype=float)
    s0 = float((c0 - a) @ along)
    if not 0.0 < s0 < length:
        return None
    n = np.array([-along[1], along[0]])
    if (c0 - a) @ n < 0.0:
        n = -n
    r, m, J = wheel.radius, wheel.mass, wheel.inertia
    if abs(float((c0 - a) @ n) - r) > _TOUCH * max(1.0, r):
        return None
    v0 = np.array(wheel.velocity, dtype=float)
    if abs(float(v0 @ n)) > _TOUCH * max(1.0, float(np.linalg.norm(v0))):
        return None
    gravity = np.array(scene.gravity, dtype=float)
    N = -m * float(gravity @ n)
    if N <= 0.0:
        return None
    t_dir = np.array([n[1], -n[0]])  # the tangent of the slip speed u = v·t + r ω
    g_t = float(gravity @ t_dir)
    mu = scene.contact_params(segment)[1]
    v_t0 = float(v0 @ t_dir)
    omega0 = wheel.angular_velocity
    u0 = v_t0 + r * omega0
    friction_to_roll = abs(g_t) / (1.0 / m + r * r / J)
    rolls = friction_to_roll <= mu * N
    a_roll = g_t / (1.0 + J / (m * r * r))
    name = wheel.id
    p0 = c0
    phi0 = wheel.angle

    def motion(
        s_start: float, v_start: float, w_start: float, phi_start: float, a_t: float, alpha: float
    ) -> StateFunction:
        def state(tau: np.ndarray) -> dict[str, np.ndarray]:
            s = s_start + v_start * tau + 0.5 * a_t * tau * tau
            v = v_start + a_t * tau
            centre = p0[:, None] + t_dir[:, None] * (s - 0.0)[None, :]
            return {
                f"{name}.x": centre[0],
                f"{name}.y": centre[1],
                f"{name}.phi": phi_start + w_start * tau + 0.5 * alpha * tau * tau,
                f"{name}.vx": t_dir[0] * v,
                f"{name}.vy": t_dir[1] * v,
                f"{name}.omega": w_start + alpha * tau,
            }

        return state

    def sliding(sign: float) -> tuple[float, float]:
        force = -mu * N * sign
        return g_t + force / m, force * r / J

    pieces: list[Piece] = []
    modes: list[str] = []
    t_switch = math.inf
    if abs(u0) <= _TOUCH * max(1.0, abs(v_t0)):
        if rolls:
            pieces.append(Piece(0.0, motion(0.0, v_t0, omega0, phi0, a_roll, -a_roll / r)))
            modes.append("rolling")
        else:
            a_t, alpha = sliding(math.copysign(1.0, g_t))
            pieces.append(Piece(0.0, motion(0.0, v_t0, omega0, phi0, a_t, alpha)))
            modes.append("sliding")
    else:
        sign = math.copysign(1.0, u0)
        a_t, alpha = sliding(sign)
        u_dot = a_t + r * alpha
        pieces.append(Piece(0.0, motion(0.0, v_t0, omega0, phi0, a_t, alpha)))
        modes.append("sliding")
        if u_dot * sign < 0.0:
            t_switch = -u0 / u_dot
            if t_switch < t_end:
                s1 = v_t0 * t_switch + 0.5 * a_t * t_switch**2
                v1 = v_t0 + a_t * t_switch
                w1 = omega0 + alpha * t_switch
                phi1 = phi0 + omega0 * t_switch + 0.5 * alpha * t_switch**2
                if rolls:
                    next_piece = motion(s1, v1, w1, phi1, a_roll, -a_roll / r)
                    modes.append("rolling")
                else:
                    a2, alpha2 = sliding(math.copysign(1.0, g_t))
                    next_piece = motion(s1, v1, w1, phi1, a2, alpha2)
                    modes.append("sliding")
                pieces.append(Piece(t_switch, next_piece))
    # valid while the contact point stays on the segment
    t_valid = t_end
    for piece_index, piece in enumerate(pieces):
        t_stop = pieces[piece_index + 1].t_start if piece_index + 1 < len(pieces) else t_end
        taus = np.linspace(0.0, max(t_stop - piece.t_start, 0.0), 2001)
        state = piece.state(taus)
        centre = np.stack([state[f"{name}.x"], state[f"{name}.y"]])
        s = (centre - a[:, None]).T @ along
        outside = np.nonzero((s <= 0.0) | (s >= length))[0]
        if len(outside):
            t_valid = min(t_valid, piece.t_start + float(taus[max(outside[0] - 1, 0)]))
            break
    return Reference(
        name="incline",
        title=f"wheel on an incline: {' then '.join(modes)}",
        source="Coulomb friction on a disk: rolling needs μN ≥ |g_t|/(1/m + r²/J)",
        conditions=(
            "one wheel touching one straight segment, pressed onto it by gravity",
            "velocity along the segment; valid while the contact stays on it",
        ),
        columns=(
            f"{name}.x",
            f"{name}.y",
            f"{name}.phi",
            f"{name}.vx",
            f"{name}.vy",
            f"{name}.omega",
        ),
        units=("m", "m", "rad", "m/s", "m/s", "rad/s"),
        t_valid=t_valid,
        impact_times=(),
        values={
            "rolling_acceleration": a_roll,
            "friction_to_roll": friction_to_roll,
            "normal_force": N,
            "t_roll": t_switch if rolls else math.inf,
        },
        pieces=tuple(pieces),
    )


# ------------------------------------------------------------ compliant stop


def _compliant_stop(scene: Scene, t_end: float) -> Reference | None:
    if not _only(scene, boundaries=1, bodies=1) or scene.gravity[0] != 0.0:
        return None
    bead, wall = scene.bodies[0], scene.boundaries[0]
    x_wall = _vertical_wall_across(wall, bead.rail_y) if isinstance(bead, Bead) else None
    law = scene.compliance_for(wall)
    if x_wall is None or law is None or bead.vx == 0.0:
        return None
    side = 1.0 if x_wall > bead.x else -1.0  # the wall's side of the bead
    if side * bead.vx <= 0.0 or abs(x_wall - bead.x) <= bead.radius:
        return None
    m, V, k, c = bead.mass, abs(bead.vx), law.stiffness, law.damping
    if law.exponent == 1.0:
        impact = linear_stop(m, k, c, V)

        def overlap(tau: np.ndarray) -> Any:
            return linear_overlap(m, k, c, V, tau)

        source = "paper 003 (10)–(12): τ = π/λ, peak V√(km), exit speed V (c = 0)"
    elif c == 0.0:
        impact = hertz_stop(m, k, V)

        def overlap(tau: np.ndarray) -> Any:
            return hertz_overlap(m, k, V, tau)

        source = "Hertz: τ = 2(δ_m/V)(2/5)B(2/5, 1/2), δ_m = (5mV²/4k)^(2/5)"
    else:
        return None  # a damped Hertz stop has no closed form
    name = bead.id
    x_touch = x_wall - side * bead.radius
    t_touch = abs(x_touch - bead.x) / V
    t_release = t_touch + impact.duration
    x_release = x_touch + side * impact.overlap_at_release
    v_exit = -side * impact.exit_speed

    def flight(tau: np.ndarray) -> dict[str, np.ndarray]:
        return {f"{name}.x": bead.x + bead.vx * tau, f"{name}.vx": np.full_like(tau, bead.vx)}

    def contact(tau: np.ndarray) -> dict[str, np.ndarray]:
        delta, rate = overlap(tau)
        return {f"{name}.x": x_touch + side * delta, f"{name}.vx": side * rate}

    def leave(tau: np.ndarray) -> dict[str, np.ndarray]:
        return {f"{name}.x": x_release + v_exit * tau, f"{name}.vx": np.full_like(tau, v_exit)}

    pieces = (Piece(0.0, flight), Piece(t_touch, contact), Piece(t_release, leave))
    return Reference(
        name="compliant_stop",
        title=f"compliant stop: contact time {impact.duration:.6g} s, "
        f"peak force {impact.peak_force:.6g} N",
        source=source,
        conditions=(
            "one bead moving towards one vertical wall with compliance, no spring, no force",
            "linear stop (p = 1, any damping) or undamped Hertz stop (p = 1.5)",
        ),
        columns=(f"{name}.x", f"{name}.vx"),
        units=("m", "m/s"),
        t_valid=t_end,
        impact_times=tuple(t for t in (t_touch, t_release) if t <= t_end),
        values={
            "contact_time": impact.duration,
            "peak_force": impact.peak_force,
            "exit_speed": impact.exit_speed,
            "restitution": impact.restitution,
            "impulse": impact.impulse,
            "overlap_at_release": impact.overlap_at_release,
        },
        pieces=pieces,
    )


_COMPLIANT_RECOGNISERS: tuple[Callable[[Scene, float], Reference | None], ...] = (_compliant_stop,)

_RECOGNISERS: tuple[Callable[[Scene, float], Reference | None], ...] = (
    _bouncing_ball,
    _mass_between_stops,
    _mass_spring_stop,
    _two_masses,
    _curb,
    _incline,
)
