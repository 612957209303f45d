"""Zeno bouncing: recognise a geometric sequence of impacts and find where it ends.

A contact pressed by a constant normal acceleration ``a_n < 0`` and bouncing
with restitution ``e < 1`` leaves each impact with ``u_n⁺ = e u_n⁻``; the
flights last ``Δ_k = 2 u_k/|a_n|`` and shrink by the ratio ``ρ = e``, so
infinitely many impacts happen before the accumulation time

    t∞ = t_k + 2 u_n⁺ / ((1 − e) |a_n|)

(the bouncing ball of MECHANICS §7: ``t∞ = √(2h/g)(1 + e)/(1 − e)``). The
watcher below only *recognises* such a sequence from the impact times of
one contact; the stepper decides when to jump.

With several contacts (a ball settling into a concave corner, two touching
balls bouncing together on the floor) the impacts move between contacts and
need not form one geometric sequence. :class:`ImpactCluster` recognises a
*shrinking run*: the last ``CLUSTER_IMPACTS`` impacts with intervals that
got shorter (the last interval below the first of the run). The stepper then
applies its plastic-capture rule (``ZenoSummer._capture``, :mod:`solver.zeno_series`).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Hashable
from dataclasses import dataclass, field

RATIO_TOL = 1e-3
"""Relative agreement of successive interval ratios that counts as geometric."""
MIN_IMPACTS = 4
"""Impacts of one contact in a row needed before a sequence counts as geometric."""
CLUSTER_IMPACTS = 8
"""Impacts (of any contacts) in a shrinking run before a multi-contact capture is considered."""


def accumulation_time(t_k: float, u_n_plus: float, restitution: float, a_n: float) -> float:
    """End of a Zeno sequence of bounces (s).

    Parameters
    ----------
    t_k : float
        Time of the last impact computed (s).
    u_n_plus : float
        Normal separation speed after it (m/s), ≥ 0.
    restitution : float
        e ∈ [0, 1).
    a_n : float
        Normal acceleration of the free motion (m/s²), < 0 (pressing).

    Returns
    -------
    float
        ``t_k + 2 u_n⁺ / ((1 − e)|a_n|)``: the sum of the geometric series of
        the remaining flight times.
    """
    return t_k + 2.0 * u_n_plus / ((1.0 - restitution) * abs(a_n))


@dataclass
class ZenoWatch:
    """Impact times of the contact that bounced last, to spot a geometric sequence.

    Call :meth:`record` after every impact with the keys of the contacts that
    took an impulse; :attr:`geometric` is true when the last
    ``MIN_IMPACTS`` impacts all belonged to one contact alone and their
    successive interval ratios agree to ``RATIO_TOL`` and are below 1.
    """

    key: Hashable | None = None
    times: list[float] = field(default_factory=list)
    geometric: bool = field(default=False, init=False, compare=False)
    """True when the recorded impacts form a geometric sequence with ratio < 1: found
    from the times by :meth:`record` (and at construction), read at every impact."""

    def __post_init__(self) -> None:
        self.geometric = len(self.times) >= MIN_IMPACTS and self._geometric()

    def record(self, t: float, keys: frozenset[Hashable]) -> None:
        """Note an impact at ``t`` (s) involving the contacts ``keys``."""
        if len(keys) != 1:
            self.reset()
            return
        (key,) = keys
        if key != self.key:
            self.key, self.times = key, []
        times = self.times
        times.append(t)
        del times[:-MIN_IMPACTS]
        self.geometric = len(times) >= MIN_IMPACTS and self._geometric()

    def reset(self) -> None:
        """Forget the sequence (after a jump, or when the contact pattern changes)."""
        self.key, self.times, self.geometric = None, [], False

    def _geometric(self) -> bool:
        """:attr:`geometric` found from the times (at least ``MIN_IMPACTS`` of them)."""
        # b − a and b / a of each neighbouring pair (a map: no frame per list)
        times = self.times
        gaps = list(map(operator.sub, times[1:], times))
        if min(gaps) <= 0.0:
            return False
        ratios = list(map(operator.truediv, gaps[1:], gaps))
        if max(ratios) >= 1.0:
            return False
        last = ratios[-1]
        tol = RATIO_TOL * last
        for r in ratios:
            if not abs(r - last) <= tol:
                return False
        return True


@dataclass
class ImpactCluster:
    """Times of the latest impacts of any contacts, to spot a shrinking run of bounces.

    Call :meth:`record` after every impact; :attr:`last` holds the keys of
    the contacts that took an impulse in the latest one.
    """

    times: list[float] = field(default_factory=list)
    last: frozenset[Hashable] = frozenset()

    def record(self, t: float, keys: frozenset[Hashable]) -> None:
        """Note an impact at ``t`` (s) involving the contacts ``keys``."""
        self.times.append(t)
        del self.times[:-CLUSTER_IMPACTS]
        self.last = keys

    def reset(self) -> None:
        """Forget the run (after a capture or a Zeno jump)."""
        self.times, self.last = [], frozenset()

    @property
    def last_interval(self) -> float:
        """Time (s) between the last two impacts recorded; ``inf`` with fewer."""
        if len(self.times) < 2:
            return float("inf")
        return self.times[-1] - self.times[-2]

    @property
    def shrinking(self) -> bool:
        """True when the last ``CLUSTER_IMPACTS`` impacts came ever closer in time.

        Measured end to end: the latest interval is shorter than the first of
        the run, and no interval is longer than that first one.
        """
        if len(self.times) < CLUSTER_IMPACTS:
            return False
        gaps = [b - a for a, b in itertools.pairwise(self.times)]
        return gaps[-1] < gaps[0] and max(gaps) <= gaps[0]
