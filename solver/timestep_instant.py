"""The time-stepper's closing instants: where a step is cut at an impact (MECHANICS §4).

:class:`ClosingInstant` is the part of
:class:`solver.timestepping.TimeSteppingStepper` that follows the gaps of the
pairs found closing within a step along the step's free motion
``q + τ v + θ τ² a`` and finds the earliest instant one closes (Newton's
method kept inside its bracket), pair by pair in floats up to
``SCALAR_PAIRS`` pairs, on arrays beyond. It has no state of its own.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from solver.contact_arrays import disk_disk
from solver.timestep_contacts import SCALAR_PAIRS, Hits

if TYPE_CHECKING:
    from solver.system import System

ROOT_ITERATIONS = 30
"""Most Newton (or bisection) iterations locating a closing instant."""

ROOT_TOL = 1e-12
"""A closing instant is located when Newton's last change is below this share of the step."""


class ClosingInstant:
    """Closing instants of pairs along a step's free motion.

    Parameters
    ----------
    system : System
        The compiled scene.
    theta : float
        θ of the scheme.
    m_inv : numpy.ndarray
        The inverse of the diagonal mass matrix.
    """

    def __init__(self, system: System, theta: float, m_inv: np.ndarray) -> None:
        self.system = system
        self.theta = theta
        self._m_inv = m_inv

    def paths(
        self, hits: Hits, q: np.ndarray, v: np.ndarray, accel: np.ndarray
    ) -> tuple[np.ndarray, ...]:
        """Centres (m), their velocities (m/s) and free accelerations (m/s²) of the disks of
        ``hits`` now, shape (K, 2) each: disk ``i``, then the other disk (its own where none)."""
        system = self.system
        other = np.where(hits.j >= 0, hits.j, hits.i)
        c, cd = system.centres(q), system.centre_velocities(v)
        ca = system.centre_velocities(accel)
        return c[hits.i], cd[hits.i], ca[hits.i], c[other], cd[other], ca[other]

    def gaps(
        self, hits: Hits, paths: tuple[np.ndarray, ...], tau: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Gaps (m) and their rates (m/s) of the pairs ``hits`` after free motions of ``tau``.

        The free motion of a Moreau–Jean step of length ``τ`` without
        contacts: centres ``c + τ ċ + θ τ² c̈``, at rate ``ċ + 2 θ τ c̈``
        (``paths``: :meth:`paths`; ``tau``: one time per pair, s). A pair
        whose kinematics do not exist there (the centre left the feature's
        Voronoi region) gets ``inf``. Up to ``SCALAR_PAIRS`` pairs one by
        one, beyond on arrays (:mod:`solver.contact_arrays`).
        """
        radii, count = self.system.radii, len(hits.i)
        if count <= SCALAR_PAIRS:
            lists = tuple(path.tolist() for path in paths)
            gaps, rates = zip(
                *(self._hit_gap(hits, lists, k, float(tau[k])) for k in range(count)), strict=True
            )
            return np.array(gaps), np.array(rates)
        c_i, cd_i, ca_i, c_j, cd_j, ca_j = paths
        theta, tau = self.theta, tau[:, None]
        c_i = c_i + tau * cd_i + theta * tau * tau * ca_i
        cd_i = cd_i + 2.0 * theta * tau * ca_i
        c_j = c_j + tau * cd_j + theta * tau * tau * ca_j
        cd_j = cd_j + 2.0 * theta * tau * ca_j
        gaps, rates = np.full(count, math.inf), np.zeros(count)
        pair = hits.j >= 0
        if np.any(pair):
            n = int(np.sum(pair))
            rows = disk_disk(
                np.concatenate((c_i[pair], c_j[pair])), np.concatenate((cd_i[pair], cd_j[pair])),
                np.zeros(2 * n), np.concatenate((radii[hits.i[pair]], radii[hits.j[pair]])),
                np.arange(n), n + np.arange(n),
            )  # fmt: skip
            gaps[pair] = np.where(rows.valid, rows.g, math.inf)
            rates[pair] = np.where(rows.valid, rows.u_n, 0.0)
        if not np.all(pair):
            wall = ~pair
            rows = self.system.feature_arrays.contacts(
                np.arange(int(np.sum(wall))), hits.feature[wall], c_i[wall], cd_i[wall],
                np.zeros(int(np.sum(wall))), radii[hits.i[wall]],
            )  # fmt: skip
            gaps[wall] = np.where(rows.valid, rows.g, math.inf)
            rates[wall] = np.where(rows.valid, rows.u_n, 0.0)
        return gaps, rates

    def _hit_gap(
        self, hits: Hits, lists: tuple[list, ...], k: int, tau: float
    ) -> tuple[float, float]:
        """:meth:`gaps` of pair ``k`` alone, in floats (``lists``: the paths as lists)."""
        c_i, cd_i, ca_i, c_j, cd_j, ca_j = (path[k] for path in lists)
        theta, radii = self.theta, self.system.radii
        x = (c_i[0] + tau * cd_i[0] + theta * tau * tau * ca_i[0],
             c_i[1] + tau * cd_i[1] + theta * tau * tau * ca_i[1])  # fmt: skip
        xd = (cd_i[0] + 2.0 * theta * tau * ca_i[0], cd_i[1] + 2.0 * theta * tau * ca_i[1])
        i, j = int(hits.i[k]), int(hits.j[k])
        if j >= 0:
            wx = x[0] - (c_j[0] + tau * cd_j[0] + theta * tau * tau * ca_j[0])
            wy = x[1] - (c_j[1] + tau * cd_j[1] + theta * tau * tau * ca_j[1])
            d = math.hypot(wx, wy)
            if d == 0.0:
                return math.inf, 0.0
            rate = (wx / d) * (xd[0] - cd_j[0] - 2.0 * theta * tau * ca_j[0]) + (wy / d) * (
                xd[1] - cd_j[1] - 2.0 * theta * tau * ca_j[1]
            )
            return d - float(radii[i]) - float(radii[j]), rate
        near = self.system.features[int(hits.feature[k])][1].nearest(x)
        if near is None:
            return math.inf, 0.0
        return near.d - float(radii[i]), float(near.n[0] * xd[0] + near.n[1] * xd[1])

    def instant(self, hits: Hits, t: float, q: np.ndarray, v: np.ndarray, h: float) -> float | None:
        """Earliest instant (s after ``t``, in [0, h]) at which a pair of ``hits`` closes,
        from the state ``(q, v)``.

        Each pair's gap along the free motion of :meth:`gaps` is
        followed from 0 to ``h`` and its root found by Newton's method kept
        inside the bracket (all pairs at once); ``None`` when no pair's gap
        is closed at ``h``.
        """
        accel = self._m_inv * self.system.applied_force(t, q, v)
        paths = self.paths(hits, q, v, accel)
        if len(hits.i) <= SCALAR_PAIRS:
            return self._few_instant(hits, tuple(path.tolist() for path in paths), h)
        start, _ = self.gaps(hits, paths, np.zeros(len(hits.i)))
        end, _ = self.gaps(hits, paths, np.full(len(hits.i), h))
        closing = end <= 0.0
        if not np.any(closing):
            return None
        if np.any(closing & (start <= 0.0)):
            return 0.0
        hits = Hits(hits.i[closing], hits.j[closing], hits.feature[closing])
        paths = tuple(path[closing] for path in paths)
        start, end = start[closing], end[closing]
        low, high = np.zeros(len(start)), np.full(len(start), h)
        tau = h * start / (start - end)
        active = np.ones(len(start), dtype=bool)
        for _ in range(ROOT_ITERATIONS):
            gap, rate = self.gaps(hits, paths, tau)
            above = gap > 0.0
            low = np.where(active & above, tau, low)
            high = np.where(active & ~above, tau, high)
            with np.errstate(divide="ignore", invalid="ignore"):
                newton = np.where((rate < 0.0) & np.isfinite(gap), tau - gap / rate, np.nan)
            done = active & (np.abs(newton - tau) <= ROOT_TOL * h)
            inside = (low < newton) & (newton < high)
            step = np.where(done | inside, newton, 0.5 * (low + high))
            tau = np.where(active, step, tau)
            active &= ~done
            if not np.any(active):
                break
        return float(np.min(tau))

    def _few_instant(self, hits: Hits, lists: tuple[list, ...], h: float) -> float | None:
        """:meth:`instant` for a few pairs, one by one in floats (cheaper)."""
        instant = None
        for k in range(len(hits.i)):
            start, end = self._hit_gap(hits, lists, k, 0.0)[0], self._hit_gap(hits, lists, k, h)[0]
            if not end <= 0.0:
                continue
            if start <= 0.0:
                return 0.0
            low, high = 0.0, h
            tau = h * start / (start - end)
            for _ in range(ROOT_ITERATIONS):
                gap, rate = self._hit_gap(hits, lists, k, tau)
                if gap > 0.0:
                    low = tau
                else:
                    high = tau
                newton = tau - gap / rate if rate < 0.0 and math.isfinite(gap) else math.nan
                if abs(newton - tau) <= ROOT_TOL * h:
                    tau = newton
                    break
                tau = newton if low < newton < high else 0.5 * (low + high)
            instant = tau if instant is None else min(instant, tau)
        return instant
