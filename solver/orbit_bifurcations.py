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

import numpy as np

from solver.orbits import PeriodicOrbit

KINDS = ("fold", "period_doubling", "torus")

LOCATE_TOL = 1e-9
"""Bracket width (in the parameter's units) at which :func:`locate` stops."""


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
