"""Watched gaps of a bead scene that are affine in the coordinates, screened all at once.

A bead on a rail meets a stop across the rail (a segment perpendicular to
it) and another bead on the same rail at gaps ``g = a·q − b``: ``±(x − x_stop)
− r`` and ``±(x_i − x_j) − r_i − r_j``. Other pairs of a bead scene (the
ends of those stops, a floor below the rail) are often out of reach for
good: the rail never comes within a radius of them. When every watched gap
is of one of these kinds, :meth:`AffineScan.screened_scan` evaluates
the gaps and their rates on all sub-points of a closed-form piece in one
evaluation of the flow and picks out the sub-intervals where something can
happen: a gap near or below zero at an end (a closing; a contact just
left after an impact, unless it opens at once and stays open on the samples
the scan looks at for its closing again), or a gap's minimum between the
sub-points (found by Newton's method on its rate) near or below zero. The
margins (``SCREEN_GAP``, ``SCREEN_SPEED``) are far above the rounding of
``a·q − b`` and the scan's own tolerances, so a sub-interval passed over is
one where the scan finds nothing. The others are decided in time order on
the gaps' closed forms (:meth:`solver.linear_flow.LinearPhase.projections`:
the exact motion in float arithmetic, a few microseconds per value), with
the decisions and root searches of
:meth:`solver.event_location.EventLocator.scan`: the event found is the
one the full scan finds, its time to rounding (brentq stops within
``TIME_TOL`` of the root on either function). A sub-interval where a gap is
near one of the scan's tolerances at an end (a contact just left after an
impact) is scanned as the full scan scans it, with the exact event values.
A quiet piece costs a few array operations instead of one evaluation of
every gap per sub-point, an impact a few dozen values of one closed form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse
from scipy.optimize import brentq

from solver.cached import cached_property
from solver.event_location import FoundEvent
from solver.event_tolerances import (
    GAP_EVENT_TOL,
    GAP_TOL,
    PENETRATION_TOL,
    REOPEN_SAMPLES,
    TIME_TOL,
)
from solver.flight import Piece
from solver.geometry import Arc, Segment, Vertex
from solver.modal_flow import ModalPhase, SplitPhase, quiet_rows
from solver.motion_state import MotionState, Setup

if TYPE_CHECKING:
    from solver.gap_set import GapSet
    from solver.linear_flow import LinearPhase, Projections
    from solver.system import System

SCREEN_GAP = 1e-9
"""Gap (m, plus 1e-12 of the coordinates' scale) below which a sub-interval is scanned exactly.

Far above the tolerances the scan decides with (``GAP_TOL`` = 1e-10 m,
``GAP_EVENT_TOL`` = 1e-12 m) and far above the rounding of ``a·q − b``."""
SCREEN_SPEED = 1e-9
"""Normal speed (m/s) within which a gap's rate counts as turning at a sub-point."""
NEWTON_STEPS = 2
"""Newton steps locating a gap's minimum between two sub-points (from the secant of its rate).

What they leave of the rate ``u`` is accounted for: the minimum is taken as
``g − u² / 2u̇`` and a rate not within 1e-6 of its ends' has the sub-interval
scanned exactly."""


@dataclass(frozen=True)
class AffineGaps:
    """The watched gaps of a bead scene as ``side · (x_k − x_l) − offset``.

    Attributes
    ----------
    first, second : numpy.ndarray of int, shape (K,)
        Coordinate indices of the two ends of each affine gap (``second`` is
        ``-1`` for a stop: its line ``x = line`` does not move).
    line : numpy.ndarray, shape (K,)
        The stop's ``x`` (m); 0 for a pair of beads.
    reach : numpy.ndarray, shape (K,)
        Radius of the bead, or the sum of both radii (m).
    order : numpy.ndarray, shape (K,)
        For a pair of beads on one rail the sign of ``x_i − x_j`` they keep; 0 for a stop.
    pair_rows : numpy.ndarray of int, shape (K,)
        Index of each affine gap's pair in the watched :class:`GapSet`.
    known_rows : dict
        The ``(A, b, sided)`` of :meth:`sided_rows`, by the sides they were made for.
    """

    first: np.ndarray
    second: np.ndarray
    line: np.ndarray
    reach: np.ndarray
    order: np.ndarray
    pair_rows: np.ndarray
    known_rows: dict[tuple[int, bytes], tuple[np.ndarray, np.ndarray, bool]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @cached_property
    def _stops(self) -> np.ndarray:
        """Which gaps are a bead's against a stop (the others a pair of beads')."""
        return self.second < 0

    def rows(self, q: np.ndarray) -> tuple[scipy.sparse.csr_array, np.ndarray]:
        """``(A, b)`` with the gaps ``A q − b`` (m) on the side of each stop that ``q`` is on.

        ``A`` is sparse (K, n): a gap reads one or two coordinates, so a chain
        of N beads keeps O(N) numbers, not K × N (:func:`dense` where a dense
        array is needed). A bead whose centre is on a stop's line has an
        empty row (no side). The arrays are kept per combination of sides (do
        not modify them).
        """
        return self.sided_rows(q)[:2]

    def sided_rows(self, q: np.ndarray) -> tuple[scipy.sparse.csr_array, np.ndarray, bool]:
        """:meth:`rows` and whether every row has a side (no bead centre on a stop's line)."""
        side = np.where(self._stops, np.sign(q[self.first] - self.line), self.order)
        key = (len(q), side.tobytes())
        found = self.known_rows.get(key)
        if found is None:
            rows = np.arange(len(side))
            beads = self.second >= 0
            entries = np.concatenate((side, -side[beads]))
            at = (
                np.concatenate((rows, rows[beads])),
                np.concatenate((self.first, self.second[beads])),
            )
            A = scipy.sparse.csr_array((entries, at), shape=(len(side), len(q)))
            A.eliminate_zeros()
            A.sort_indices()
            found = (A, side * self.line + self.reach, bool(np.all(side)))
            self.known_rows[key] = found
        return found


def affine_gaps(system: System, gaps: GapSet) -> AffineGaps | None:
    """The affine gaps of ``gaps`` (pairs out of reach for good left out), or None.

    None when a watched pair is neither affine nor out of reach: a wheel, a
    slanted or horizontal segment the rail comes near, a corner or an arc
    within a radius of the rail, beads on different rails that can touch.
    """
    disks = system._disks
    if any(d.iy is not None for d in disks):
        return None
    first, second, line, reach, order, pair_rows = [], [], [], [], [], []
    for n, pair in enumerate(gaps.pairs):
        bead = disks[pair.i]
        r, y = bead.radius, bead.rail_y
        if pair.j >= 0:
            other = disks[pair.j]
            apart = abs(other.rail_y - y) - r - other.radius
            if apart > SCREEN_GAP:
                continue
            if other.rail_y != y or pair.order == 0.0:
                return None
            first.append(bead.ix)
            second.append(other.ix)
            line.append(0.0)
            reach.append(r + other.radius)
            order.append(pair.order)
            pair_rows.append(n)
            continue
        feature = pair.feature
        if isinstance(feature, Segment):
            (ax, ay), (bx, by) = feature.a, feature.b
            if min(ay, by) - y - r > SCREEN_GAP or y - max(ay, by) - r > SCREEN_GAP:
                continue  # the whole segment above or below the rail's reach
            if ax != bx:
                return None
            if not min(ay, by) < y < max(ay, by):
                continue  # the rail passes beyond its ends: only its end points can be met
            first.append(bead.ix)
            second.append(-1)
            line.append(float(ax))
            reach.append(r)
            order.append(0.0)
            pair_rows.append(n)
        elif isinstance(feature, Vertex):
            if abs(feature.p[1] - y) - r <= SCREEN_GAP:
                return None
        elif isinstance(feature, Arc):
            if abs(feature.center[1] - y) - feature.radius - r <= SCREEN_GAP:
                return None
        else:
            return None
    return AffineGaps(
        np.array(first, dtype=int),
        np.array(second, dtype=int),
        np.array(line),
        np.array(reach),
        np.array(order),
        np.array(pair_rows, dtype=int),
    )


def dense(A: Any) -> np.ndarray:
    """The rows ``A`` (sparse or not) as a dense array."""
    return A.toarray() if scipy.sparse.issparse(A) else np.asarray(A, dtype=float)


def projections(motion: Any, A: Any) -> Any:
    """``motion.projections(A)``: sparse rows where the motion reads them so, dense otherwise."""
    return motion.projections(A if isinstance(motion, (ModalPhase, SplitPhase)) else dense(A))


class AffineScan:
    """The scan of a closed-form piece whose watched gaps are affine (a part of the stepper).

    Owns the affine gap rows per watched set (``_affine_cache``).
    """

    def __init__(self, setup: Setup, motion: MotionState, roots: Any) -> None:
        self.s, self.m, self.roots = setup, motion, roots
        self.locator: Any = None  # wired by the stepper

    def affine(self, gaps: GapSet) -> AffineGaps | None:
        """:func:`affine_gaps` of ``gaps``, kept while the watched set stays the same."""
        cached = getattr(self, "_affine_cache", None)
        if cached is None or cached[0] is not gaps:
            if cached is not None and cached[1] is not None:
                # its rows (K × N each) go now, not when a cycle collection finds them
                cached[1].known_rows.clear()
            cached = (gaps, affine_gaps(self.s.system, gaps))
            self._affine_cache = cached
        return cached[1]

    def nothing_missed(self, gaps: GapSet, qa: np.ndarray, qb: np.ndarray) -> bool:
        """Whether the check for missed closings can only find nothing between ``qa`` and ``qb``.

        True when every watched gap is affine or out of reach for good and
        the affine gaps (on the sides of ``qa``) are above ``−PENETRATION_TOL``
        at both ends, by a margin far above their rounding: a bead that went
        through a stop or another bead on its rail has an affine gap below
        minus its radius at the end, the pairs out of reach are never within
        a radius of a bead (no crossing, no passing through a corner or a
        disk), and a bead pair's chord between two states on the same side
        keeps the pair's smaller end distance. Then
        :meth:`solver.gap_roots.GapRoots.missed` flags nothing, and its
        gap evaluations are skipped; False leaves the decision to it.
        """
        affine = self.affine(gaps)
        if affine is None:
            return False
        if not len(affine.first):
            return True
        A, b, sided = affine.sided_rows(qa)
        if not sided:
            return False
        ends = np.stack((qa, qb))
        scale = 1.0 + float(np.abs(ends).max()) + float(np.abs(b).max())
        return bool((ends @ A.T - b).min() > -PENETRATION_TOL + 1e-12 * scale)

    def screened_scan(self, piece: Piece, gaps: GapSet, n_sub: int) -> FoundEvent | None:
        """:meth:`_scan` of a closed-form piece on ``n_sub`` sub-intervals, screened.

        The full scan's event (or None), its time to rounding; the full scan runs when
        a contact is active or a watched gap is not affine.
        """
        motion = piece.motion
        exact = Piece(piece.ta, piece.tb, motion)
        affine = None if self.m.active else self.affine(gaps)
        if affine is None:
            return self.locator.scan(exact, gaps, n_sub)
        if not len(affine.first):
            return None
        A, b, sided = affine.sided_rows(self.m.q)
        if not sided:
            return self.locator.scan(exact, gaps, n_sub)
        ts = np.linspace(piece.ta, piece.tb, n_sub + 1)
        Q, V = motion.state(ts)
        g = Q @ A.T - b
        u = V @ A.T
        scale = 1.0 + float(np.max(np.abs(Q), initial=0.0)) + float(np.max(np.abs(b)))
        low = SCREEN_GAP + 1e-12 * scale
        close = np.minimum(g[:-1], g[1:]) < low
        near = close.any(axis=1)
        curves: Projections | None = None  # made when first needed
        if near.any():
            curves = projections(motion, A)
            near[self._opening(motion, A, b, ts, g, u, close, low, curves, scale)] = False
        turning = (u[:-1] < SCREEN_SPEED) & (u[1:] > -SCREEN_SPEED)
        turning[near] = False
        quiet = quiet_rows(motion, A, ts, g, low)  # a modal phase's far beads, at rest
        if quiet is not None:
            turning &= ~quiet
        if turning.any():
            curves = curves or projections(motion, A)
            near[_low_minima_closed_form(curves, b, ts, u, turning, low)] = True
        before: tuple[int, tuple[np.ndarray, ...]] | None = None
        for j in np.nonzero(near)[0]:
            ta, tb = ts[j], ts[j + 1]
            curves = curves or projections(motion, A)
            decided, best = self._closed_form_event(
                curves, affine, b, ta, tb, g[j], g[j + 1], u[j], u[j + 1], scale,
                None if quiet is None else quiet[j],
            )  # fmt: skip
            if decided:
                if best is not None:
                    return FoundEvent(best[0], "gap", gaps.pairs[affine.pair_rows[best[1]]].key)
                continue
            scan = gaps
            if quiet is not None and quiet[j].any():  # the gaps a bound leaves open stay out
                rest = np.setdiff1d(np.arange(len(gaps)), affine.pair_rows[quiet[j]])
                scan = gaps.subset(rest.tolist())
                before = None
            if before is None or before[0] != j:
                values_a = self.locator.event_values(ta, exact.state(ta), scan)
            else:
                values_a = before[1]
            values_b = self.locator.event_values(tb, exact.state(tb), scan)
            before = (j + 1, values_b) if scan is gaps else None
            best = self.roots.gap_event(exact, scan, ta, tb, values_a, values_b)
            left = self.locator.closed_on_leaving(exact, scan, ta, tb, values_a[0], values_b[0])
            if left is not None and (best is None or left.t < best.t):
                best = left
            if best is not None:
                return best
        return None

    @staticmethod
    def _closed_form_event(
        curves: Projections,
        affine: AffineGaps,
        b: np.ndarray,
        ta: float,
        tb: float,
        ga: np.ndarray,
        gb: np.ndarray,
        ua: np.ndarray,
        ub: np.ndarray,
        scale: float,
        quiet: np.ndarray | None = None,
    ) -> tuple[bool, tuple[float, int] | None]:
        """The first gap closing in ``[ta, tb]`` (s) from the gaps' closed forms, if they decide.

        ``ga``, ``gb`` (m) and ``ua``, ``ub`` (m/s) are the affine gaps and
        their rates at both ends. Each gap is decided as
        :meth:`solver.gap_roots.GapRoots.gap_event` decides it — a sign
        change is a root, a dip (rate from negative to positive, both ends
        open) whose minimum is below ``−GAP_EVENT_TOL`` a root before the
        minimum — with brentq to ``TIME_TOL`` on ``curves`` (the exact
        motion in float arithmetic) instead of the gap functions of the
        scene's geometry, which it equals to rounding. Every decision
        needs a margin of ``1e-13`` of the coordinates' scale over those
        tolerances; a gap near one (a contact just left after an impact, a
        gap ending about at zero, a bead past a stop's line) gives
        ``(False, None)`` and the sub-interval to the general scan. Returns
        ``(True, (t, k))`` for a closing of affine row ``k``, ``(True, None)``
        for none. The pairs out of reach for good never close, nor do those
        ``quiet`` marks (:func:`solver.modal_flow.quiet_rows`).
        """
        margin = 1e-13 * scale
        speed = 1e-13 * (1.0 + float(np.max(np.abs(ua))) + float(np.max(np.abs(ub))))
        best: tuple[float, int] | None = None
        for k in range(len(ga)):
            g0, g1, u0, u1 = float(ga[k]), float(gb[k]), float(ua[k]), float(ub[k])
            if not (g0 > GAP_TOL + margin and g1 > margin - affine.reach[k]):
                return False, None  # closed or about to be at the start; past a stop's line
            if quiet is not None and quiet[k]:
                continue
            offset = float(b[k])

            def gap(t: float, k: int = k, offset: float = offset) -> float:
                return curves.value(k, t) - offset

            if g1 < -GAP_EVENT_TOL - margin:
                t_hit = brentq(gap, ta, tb, xtol=TIME_TOL)
            elif g1 <= margin:
                return False, None
            elif u0 < -speed and u1 > speed:
                t_min = brentq(lambda t, k=k: curves.rate(k, t), ta, tb, xtol=TIME_TOL)
                lowest = gap(t_min)
                if abs(lowest + GAP_EVENT_TOL) <= margin:
                    return False, None
                if lowest > -GAP_EVENT_TOL:
                    continue
                t_hit = brentq(gap, ta, t_min, xtol=TIME_TOL)
            elif u0 <= speed and u1 >= -speed:
                return False, None  # a rate about zero at an end: the general scan decides
            else:
                continue
            if best is None or t_hit < best[0]:
                best = (t_hit, k)
        return True, best

    @staticmethod
    def _opening(
        motion: LinearPhase,
        A: np.ndarray,
        b: np.ndarray,
        ts: np.ndarray,
        g: np.ndarray,
        u: np.ndarray,
        close: np.ndarray,
        low: float,
        curves: Projections,
        scale: float,
    ) -> np.ndarray:
        """Sub-intervals whose gaps near zero all open from the start and stay open.

        ``close[j, k]``: gap ``k`` is below ``low`` (m) at an end of
        sub-interval ``j`` — a contact just left after an impact. It is quiet
        when it opens at once (rate above ``SCREEN_SPEED``), is open at the
        end, and is open on the ``REOPEN_SAMPLES`` samples on which the scan
        looks for it closing again; a gap minimum in between is left to
        :func:`_low_minima_closed_form`. With the gaps' closed forms ``curves`` the
        samples are not needed where a bound shows them open: the gap is at
        least ``g + u s − C s² / 2`` at ``s`` (s) after the start, ``C`` a
        bound of its second derivative over the sub-interval, and that
        concave bound above ``low`` (by ``1e-13`` of the coordinates'
        ``scale``) at the first and the last sample holds on all of them.
        """
        js = np.nonzero(close.any(axis=1))[0]
        rows = close[js]
        opens = np.all(~rows | ((g[js + 1] > low) & (u[js] > SCREEN_SPEED)), axis=1)
        js, rows = js[opens], rows[opens]
        if not len(js):
            return js
        proven = np.array(
            [
                all(
                    _stays_open(curves, k, ts[j], ts[j + 1], g[j, k], u[j, k], low, scale)
                    for k in np.nonzero(row)[0]
                )
                for j, row in zip(js, rows, strict=True)
            ]
        )
        if proven.all():
            return js
        quiet_by_bound, js, rows = js[proven], js[~proven], rows[~proven]
        samples = np.concatenate(
            [np.linspace(ts[j], ts[j + 1], REOPEN_SAMPLES + 1)[1:-1] for j in js]
        )
        Q, _ = motion.state(samples)
        sampled = (Q @ A.T - b).reshape(len(js), REOPEN_SAMPLES - 1, -1)
        quiet = np.all(~rows[:, None, :] | (sampled > low), axis=(1, 2))
        return np.union1d(quiet_by_bound, js[quiet])


def _stays_open(
    curves: Projections,
    k: int,
    ta: float,
    tb: float,
    g: float,
    u: float,
    low: float,
    scale: float,
) -> bool:
    """Whether gap ``k`` is above ``low`` (m) on the reopening samples of ``[ta, tb]`` (s).

    ``g`` (m) and ``u`` (m/s) are the gap and its rate at ``ta``; the gap
    is at least ``g + u s − C s² / 2`` at ``s`` after ``ta`` (``C`` bounds
    its second derivative, m/s²), a concave bound: above ``low`` plus a
    rounding margin at the first and the last sample, it is above on all.
    """
    bound = curves.curvature_bound(k, ta, tb)
    if bound is None:
        return False
    width = tb - ta
    floor = low + 1e-13 * scale
    for s in (width / REOPEN_SAMPLES, width * (REOPEN_SAMPLES - 1) / REOPEN_SAMPLES):
        if not g + u * s - 0.5 * bound * s * s > floor:
            return False
    return True


def _low_minima_closed_form(
    curves: Projections,
    b: np.ndarray,
    ts: np.ndarray,
    u: np.ndarray,
    turning: np.ndarray,
    low: float,
) -> np.ndarray:
    """Sub-intervals where a gap's minimum between the sub-points may be below ``low`` (m).

    ``turning[j, k]``: gap ``k``'s rate goes from negative to positive over
    sub-interval ``j``. Its zero is located by ``NEWTON_STEPS`` of Newton's
    method on the gap's closed form ``curves``, from the secant of the
    rates at the ends; the gap there, less ``u² / 2u̇`` (what the remaining
    error in time can hide), is the minimum. A step that does not settle
    inside the sub-interval with ``u̇ > 0`` counts as low.
    """
    doubtful = []
    for j, k in zip(*np.nonzero(turning), strict=True):
        ua, ub = float(u[j, k]), float(u[j + 1, k])
        ta, tb = float(ts[j]), float(ts[j + 1])
        width = ub - ua
        t = min(max(ta + (tb - ta) * (-ua / width if width > 0.0 else 0.5), ta), tb)
        for step in range(NEWTON_STEPS + 1):
            value, rate, curvature = curves.kinematics(int(k), t)
            if step < NEWTON_STEPS and curvature > 0.0:
                t = min(max(t - rate / curvature, ta), tb)
        gap = value - float(b[k])
        lowest = gap - rate * rate / (2.0 * curvature) if curvature > 0.0 else -math.inf
        settled = abs(rate) <= 1e-6 * (abs(ua) + abs(ub))
        if not settled or not math.isfinite(lowest) or lowest < low:
            doubtful.append(int(j))
    return np.unique(np.array(doubtful, dtype=int))
