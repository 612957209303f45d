"""Bifurcations between two orbits of a branch, located by bisection (docs/ORBITS.md).

Test functions of the monodromy ``Φ`` (their sign changes between two orbits of a
branch bracket a bifurcation):

* ``fold``: ``det(Φ − I)`` (a real multiplier through +1);
* ``period_doubling``: ``det(Φ + I)`` (a real multiplier through −1);
* ``torus`` (Neimark–Sacker): the largest modulus of a non-real multiplier minus 1,
  when both orbits have non-real multipliers.

:func:`solver.orbit_continuation.bisect_on_arclength` then halves the bracket along
the branch until its ends differ by ``LOCATE_TOL`` in the parameter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from solver.errors import SolverError
from solver.orbit_continuation import Branch
from solver.orbits import PeriodicOrbit

KINDS = ("fold", "period_doubling", "torus")

LOCATE_TOL = 1e-9
"""Bracket width (in the parameter's units) at which a bisection stops."""

GRAZING_SPEED = 1e-4
"""An impact slower than this (m/s, times ``1 + max |z|``) at a located end is grazing."""

FIT_SPAN = 100.0
"""Orbits up to this many times the slowest impact's speed enter the fit to zero speed."""

MAX_BRACKET_STEPS = 40
"""Doublings of the parameter step while looking for where the orbit stops existing."""


def indicator(kind: str, orbit: PeriodicOrbit) -> float | None:
    """The test function ``kind`` at ``orbit`` (None when it does not apply)."""
    n = len(orbit.state)
    if kind == "fold":
        return float(np.linalg.det(orbit.monodromy - np.eye(n)))
    if kind == "period_doubling":
        return float(np.linalg.det(orbit.monodromy + np.eye(n)))
    complex_mu = orbit.multipliers[np.abs(orbit.multipliers.imag) > 1e-12]
    return None if not len(complex_mu) else float(np.max(np.abs(complex_mu))) - 1.0


def crossings(a: PeriodicOrbit, b: PeriodicOrbit) -> list[str]:
    """The kinds whose test function changes sign from ``a`` to ``b``."""
    out = []
    for kind in KINDS:
        fa, fb = indicator(kind, a), indicator(kind, b)
        if fa is not None and fb is not None and fa * fb < 0.0:
            out.append(kind)
    return out


def slowest_impact(orbit: PeriodicOrbit, M: np.ndarray) -> float:
    """The smallest normal speed ``|u_n⁻|`` of the orbit's impacts and compliant touches
    (m/s; inf without any)."""
    return min((abs(i.normal_velocities(M)[0]) for i in orbit.contacts), default=math.inf)


@dataclass
class Grazing:
    """A located grazing: the last orbit with the branch's impacts, and how it grazes."""

    p: float
    orbit: PeriodicOrbit
    how: str
    """``"impact"`` (an impact's speed tends to 0) or ``"free flight"`` (an impact appears)."""
    speed: float
    """The orbit's slowest impact, m/s."""


def locate_grazing(
    branch: Branch,
    p: float,
    orbit: PeriodicOrbit,
    M: np.ndarray,
    *,
    direction: float,
    step: float,
    p_bad: float | None = None,
    tol: float = LOCATE_TOL,
) -> Grazing | None:
    """Where the orbit (with its impacts) at ``p`` stops existing, moving ``p`` along ``direction``.

    Without ``p_bad`` (a parameter where it is known not to exist) the parameter first
    moves by ``step``, doubling, until Newton finds no orbit with the same impacts; then
    the bracket is halved to ``tol``. The end is a grazing when the last orbit's slowest
    impact is below ``GRAZING_SPEED`` (an impact vanishing) or a Newton past it met an
    extra impact (a free flight touching a stop); otherwise None (e.g. a fold, which
    natural-parameter Newton cannot pass either).
    """
    events = orbit.impacts  # the branch's: every orbit found must have the same (count, sides)
    extra = False

    def exists(q: float, z: np.ndarray) -> PeriodicOrbit | None:
        nonlocal extra
        try:
            return branch.orbit_at(q, z, events)
        except SolverError as error:
            extra = extra or getattr(error, "extra_impact", False)
            return None

    if p_bad is None:
        delta = step
        for _ in range(MAX_BRACKET_STEPS):
            q = p + direction * delta
            found = exists(q, orbit.state)
            if found is None:
                p_bad = q
                break
            p, orbit = q, found
            delta *= 2.0
        else:
            return None
    good = [(p, orbit)]
    while abs(p_bad - p) > tol:
        mid = 0.5 * (p + p_bad)
        found = exists(mid, orbit.state)
        if found is None:
            p_bad = mid
        else:
            p, orbit = mid, found
            good.append((p, orbit))
    speed = slowest_impact(orbit, M)
    scale = 1.0 + float(np.max(np.abs(orbit.state)))
    if speed <= GRAZING_SPEED * scale:
        return _to_zero_speed(good, M)
    if extra:
        return Grazing(p, orbit, "free flight", speed)
    return None


def _to_zero_speed(good: list[tuple[float, PeriodicOrbit]], M: np.ndarray) -> Grazing:
    """The grazing of a vanishing impact: the slowest orbits extrapolated to zero speed.

    Newton on the map stalls before the speed ``v`` is 0 (``Φ`` grows like ``1/v``, so
    round-off in the state is amplified as much), but the periodicity conditions are
    smooth in ``v`` through 0: the parameter and the state are fitted by a quadratic in
    ``v`` over the orbits with ``v ≤ FIT_SPAN`` times the slowest one (a line through
    two when fewer), evaluated at ``v = 0``. The multipliers and impacts written are
    the slowest orbit's.
    """
    speeds = sorted(((slowest_impact(o, M), q, o) for q, o in good), key=lambda item: item[0])
    v1, p1, o1 = speeds[0]
    near = [item for item in speeds if item[0] <= FIT_SPAN * v1]
    if len({item[0] for item in near}) < 3:
        near = speeds[:2]
    if len(near) < 2 or near[1][0] == v1:
        return Grazing(p1, o1, "impact", v1)
    v = np.array([item[0] for item in near])
    y = np.array([np.r_[item[1], item[2].state] for item in near])
    fit = np.polyfit(v, y, 2 if len(near) >= 3 else 1)
    at_zero = fit[-1]
    return Grazing(float(at_zero[0]), replace(o1, state=at_zero[1:]), "impact", v1)
