"""The period of a run's impact sequence after its transient (summary.csv's period columns).

A periodic motion with impacts repeats its impacts: after ``p`` impacts the
same contact is hit at the same approach speed, a fixed time ``T`` later.
:func:`impact_period` finds the smallest such ``p`` (at most
:data:`MAX_IMPACTS_PER_PERIOD`, seen repeating at least once over the whole
sequence) and gives

* ``period``: ``T`` in forcing periods ``2π/ω`` of the scene's harmonic
  forcing — an integer ``K`` from 1 to :data:`MAX_FORCING_PERIODS` — or 0
  when the scene has no forcing, when no repeating pattern is found, or when
  ``T`` is no whole number of forcing periods (to :data:`PERIOD_RTOL`);
* ``impacts_per_period``: ``p`` (0 when none is found);
* ``seconds``: ``T`` in s (``None`` when none is found) — for an unforced
  scene this is the motion's own period: paper 003's ``T(V)``.

Matching uses :data:`PERIOD_RTOL` relative to the period (times) and to the
largest approach speed (speeds): an orbit still converging after the
transient is found once it agrees to that tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_FORCING_PERIODS = 32
"""The longest period sought, in forcing periods."""
MAX_IMPACTS_PER_PERIOD = 64
"""The most impacts in one period sought."""
PERIOD_RTOL = 1e-6
"""Relative tolerance for "the same" time shift and approach speed."""


@dataclass(frozen=True)
class ImpactPeriod:
    """A run's period after its transient (see the module docstring)."""

    period: int
    impacts_per_period: int
    seconds: float | None


NO_PERIOD = ImpactPeriod(0, 0, None)


def forcing_period(scene: Mapping[str, Any]) -> float | None:
    """``2π/ω`` of the first harmonic force with ``ω > 0`` of a scene (a JSON object), or None."""
    for force in scene.get("forces", ()):
        omega = force.get("omega")
        if force.get("type", "harmonic") == "harmonic" and omega and omega > 0:
            return 2.0 * math.pi / float(omega)
    return None


def impact_period(
    times: Sequence[float],
    contacts: Sequence[tuple[str, str]],
    speeds: Sequence[float | None],
    forcing: float | None,
) -> ImpactPeriod:
    """The period of an impact sequence (times in s, contacts, approach speeds in m/s).

    ``forcing`` is the forcing period (s) or None for an unforced scene.
    """
    t = np.asarray(times, dtype=float)
    n = len(t)
    u = np.array([np.nan if s is None else float(s) for s in speeds])
    scale = float(np.nanmax(np.abs(u))) if n and np.any(np.isfinite(u)) else 0.0
    for p in range(1, min(MAX_IMPACTS_PER_PERIOD, n // 2) + 1):
        if any(contacts[i] != contacts[i + p] for i in range(n - p)):
            continue
        shifts = t[p:] - t[:-p]
        T = float(np.mean(shifts))
        if T <= 0.0 or float(np.max(np.abs(shifts - T))) > PERIOD_RTOL * T:
            continue
        du = np.abs(u[p:] - u[:-p])
        if np.any(du[np.isfinite(du)] > PERIOD_RTOL * max(scale, 1e-300)):
            continue
        if forcing is None:
            return ImpactPeriod(0, p, T)
        K = T / forcing
        k = round(K)
        if 1 <= k <= MAX_FORCING_PERIODS and abs(K - k) <= PERIOD_RTOL * k:
            return ImpactPeriod(k, p, T)
    return NO_PERIOD
