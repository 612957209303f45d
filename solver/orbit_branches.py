"""Branches of periodic orbits followed over one scene field (docs/ORBITS.md).

:func:`follow_branches` is what ``python -m solver orbits`` and the Sweep
window's "Continue orbits" run: the orbit the scene reaches after a transient
at START, continued by pseudo-arclength (:mod:`solver.orbit_continuation`)
towards STOP; folds, period doublings and tori between two orbits are located
by bisection and written as extra rows; a grazing ends the branch with a
``grazing`` row (:func:`solver.orbit_bifurcations.locate_grazing`); on request
the doubled branch is started at the first period doubling and followed too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from solver.errors import InputError, SolverError
from solver.orbit_bifurcations import (
    LOCATE_TOL,
    Grazing,
    crossings,
    indicator,
    locate_grazing,
    slowest_impact,
)
from solver.orbit_continuation import Branch, BranchPoint, bisect_on_arclength
from solver.orbits import PeriodicOrbit, event_count, find_orbit
from solver.scene import SceneError
from solver.scene_paths import with_values
from solver.system import System


def follow_branches(
    scene: Any,
    path: str,
    p_start: float,
    p_stop: float,
    step: float,
    max_points: int,
    *,
    period: int = 1,
    transient: float = 0.0,
    follow_doubling: bool = False,
    doublings: int = 0,
) -> list[Followed]:
    """Branch 0 from the orbit reached at ``p_start`` (and the doubled branches).

    ``step`` is the arclength step in (state, parameter) (0: only the first orbit);
    each branch has at most ``max_points`` orbits besides its located rows. A
    failure ends a branch: its ``failure`` says why (naming the parameter value).
    ``doublings`` (at least 1 with ``follow_doubling``) is how many doubled branches
    to start, each at the first period doubling of the branch before it: branch 1 of
    period ``2K``, branch 2 of period ``4K``, … (a period-doubling cascade).
    """
    branch = Branch(scene, path, period)
    M = System(scene).M
    try:
        first_scene = with_values(scene, {path: p_start})
        label = branch.label(p_start)
        orbit = find_orbit(first_scene, period=period, transient=transient, label=label)
        start = branch.first(orbit, p_start, math.copysign(1.0, p_stop - p_start))
    except (InputError, SceneError, SolverError) as error:
        return [Followed([], failure=str(error))]
    followed = [_follow(branch, start, step, p_stop, max_points if step else 1, M)]
    levels = max(doublings, 1 if follow_doubling else 0)
    for level in range(1, levels + 1):
        doubling = followed[-1].doubling
        if doubling is None:
            break
        doubled = Branch(scene, path, 2**level * period)
        try:
            junction, first = doubled.doubled_start(doubling, step or abs(p_stop - p_start))
        except (InputError, SceneError, SolverError) as error:
            followed.append(Followed([], failure=f"the doubled branch {level}: {error}"))
            break
        more = _follow(doubled, first, step, p_stop, max_points, M)
        more.rows.insert(0, (junction.p, junction.orbit, ""))
        followed.append(more)
    return followed


@dataclass
class Followed:
    """One branch as followed: its rows ``(p, orbit, mark)`` and how it ended."""

    rows: list[tuple[float, PeriodicOrbit, str]]
    failure: str = ""
    note: str = ""
    doubling: BranchPoint | None = None
    """The first located period doubling (where a doubled branch can start)."""


def _follow(branch: Branch, start: BranchPoint, h: float, p_stop: float, n_max: int, M) -> Followed:
    """Continue from ``start``: rows with located bifurcations, ended at a grazing or a failure."""
    out = Followed([(start.p, start.orbit, "")])
    previous = start
    try:
        for point in branch.points(start, h, p_stop, n_max):
            if event_count(point.orbit.impacts) != event_count(previous.orbit.impacts) and (
                point.p != previous.p
            ):
                grazing = locate_grazing(
                    branch,
                    previous.p,
                    previous.orbit,
                    M,
                    direction=math.copysign(1.0, point.p - previous.p),
                    step=abs(point.p - previous.p),
                    p_bad=point.p,
                )
                if grazing is not None:
                    out.rows.append((grazing.p, grazing.orbit, "grazing"))
                    out.note = _grazing_note(branch, grazing)
                    return out
            for kind in crossings(previous.orbit, point.orbit):
                found = _located(branch, previous, point, kind)
                out.rows.append((found.p, found.orbit, kind))
                if kind == "period_doubling" and out.doubling is None:
                    out.doubling = found
            out.rows.append((point.p, point.orbit, ""))
            previous = point
    except (InputError, SceneError, SolverError) as error:
        out.failure = str(error)
        grazing = None
        last_step = abs(out.rows[-1][0] - out.rows[-2][0]) if len(out.rows) > 1 else h
        try:
            grazing = locate_grazing(
                branch,
                previous.p,
                previous.orbit,
                M,
                direction=math.copysign(1.0, previous.tangent[-1]),
                step=max(last_step / 4.0, 10.0 * LOCATE_TOL),
            )
        except (InputError, SceneError, SolverError):
            grazing = None
        if grazing is not None:
            out.rows.append((grazing.p, grazing.orbit, "grazing"))
            out.note, out.failure = _grazing_note(branch, grazing), ""
        elif out.rows[-1][1].impacts:
            speed = slowest_impact(out.rows[-1][1], M)
            out.failure += f"; the last orbit's slowest impact is at {speed:.3g} m/s"
    return out


def _located(branch: Branch, a: BranchPoint, b: BranchPoint, kind: str) -> BranchPoint:
    """The bifurcation ``kind`` between branch points ``a`` and ``b``, bisected on arclength."""
    a_sign = indicator(kind, a.orbit) < 0.0

    def same(candidate: Any) -> bool:
        value = indicator(kind, candidate.orbit)
        return value is not None and (value < 0.0) == a_sign

    h_ab = float(a.tangent @ (np.r_[b.orbit.state, b.p] - np.r_[a.orbit.state, a.p]))
    return bisect_on_arclength(branch, a, h_ab, same, LOCATE_TOL)


def _grazing_note(branch: Branch, grazing: Grazing) -> str:
    if grazing.how == "impact":
        what = f"an impact's speed tends to 0 (slowest {grazing.speed:.3g} m/s)"
    else:
        what = "a free flight touches a stop (an impact appears)"
    return f"grazing at {branch.label(grazing.p)}: {what}; the branch ends there"
