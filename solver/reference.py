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
from pathlib import Path
from typing import Any

import numpy as np

from solver.atomic_file import atomic_write
from solver.reference_model import (
    MAX_PIECES,
    NO_REFERENCE,
    REFERENCE_FILE,
    Comparison,
    Piece,
    Reference,
    StateFunction,
)
from solver.reference_stops import (
    _compliant_stop,
    _mass_between_stops,
    _mass_spring_stop,
    spring_stop_period,
)
from solver.reference_two_masses import _two_masses
from solver.reference_wheels import (
    _bouncing_ball,
    _curb,
    _incline,
)
from solver.scene import (
    Scene,
)

__all__ = [
    "IMPACT_LIKE",
    "MAX_PIECES",
    "NO_REFERENCE",
    "REFERENCE_FILE",
    "SNAP_TOLERANCE",
    "Comparison",
    "Piece",
    "Reference",
    "StateFunction",
    "beside_frames",
    "compare",
    "compare_trajectory",
    "recognise",
    "spring_stop_period",
    "write_reference_csv",
    "write_reference_file",
]


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


_COMPLIANT_RECOGNISERS: tuple[Callable[[Scene, float], Reference | None], ...] = (_compliant_stop,)


_RECOGNISERS: tuple[Callable[[Scene, float], Reference | None], ...] = (
    _bouncing_ball,
    _mass_between_stops,
    _mass_spring_stop,
    _two_masses,
    _curb,
    _incline,
)
