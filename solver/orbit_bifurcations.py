"""Bifurcations between two orbits of a branch, located by bisection (docs/ORBITS.md).

Test functions of the monodromy ``Φ`` (their sign changes between two orbits of a
branch bracket a bifurcation):

* ``fold``: ``det(Φ − I)`` (a real multiplier through +1);
* ``period_doubling``: ``det(Φ + I)`` (a real multiplier through −1);
* ``torus`` (Neimark–Sacker): the largest modulus of a non-real multiplier minus 1,
  when both orbits have non-real multipliers.

:func:`locate` halves the bracket, finding the orbit at each midpoint by Newton from
the nearer end's orbit, until it is narrower than ``tol`` in the parameter.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from solver.orbits import PeriodicOrbit

KINDS = ("fold", "period_doubling", "torus")

LOCATE_TOL = 1e-9
"""Bracket width (in the parameter's units) at which :func:`locate` stops."""

MAX_BISECTIONS = 80


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


def locate(
    kind: str,
    p_a: float,
    orbit_a: PeriodicOrbit,
    p_b: float,
    orbit_b: PeriodicOrbit,
    solve: Callable[[float, np.ndarray], PeriodicOrbit],
    tol: float = LOCATE_TOL,
) -> tuple[float, PeriodicOrbit]:
    """Bisect ``[p_a, p_b]`` on the sign of ``kind``'s test function.

    ``solve(p, z)`` is the orbit at parameter ``p`` by Newton from ``z``. Returns the
    end of the final bracket whose test value is smaller in modulus, and its orbit.
    """
    fa = indicator(kind, orbit_a)
    for _ in range(MAX_BISECTIONS):
        if abs(p_b - p_a) <= tol:
            break
        p_m = 0.5 * (p_a + p_b)
        orbit_m = solve(p_m, orbit_a.state)
        f_m = indicator(kind, orbit_m)
        if f_m is None:
            break
        if (f_m < 0.0) == (fa < 0.0):
            p_a, orbit_a, fa = p_m, orbit_m, f_m
        else:
            p_b, orbit_b = p_m, orbit_m
    fb = indicator(kind, orbit_b)
    if fb is not None and abs(fb) < abs(fa):
        return p_b, orbit_b
    return p_a, orbit_a
