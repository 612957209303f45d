"""Where a watched gap closes: roots, dips, reopening and missed closings (MECHANICS §4).

:class:`GapRoots` turns the gap values at the ends of a sub-interval
into the time a gap closes, located to ``TIME_TOL``: a sign change; a dip
below zero between sub-points; a disk entering a feature's region with the
gap already about zero (an arc beginning on a floor); a contact closed after
an impact that opens a hair and closes again. After every flight piece
:meth:`GapRoots.missed` checks every watched gap: one below
``−PENETRATION_TOL`` is a missed closing located afresh, or a
``SolverError`` naming contact, time and depth.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import brentq

from solver.contact_pairs import ContactPair
from solver.errors import SolverError
from solver.event_location import FoundEvent
from solver.event_tolerances import (
    GAP_EVENT_TOL,
    GAP_TOL,
    MISSED_SAMPLES,
    PENETRATION_TOL,
    REOPEN_SAMPLES,
    REST_SPEED_TOL,
    TIME_TOL,
)
from solver.flight import Piece
from solver.gap_closing import crossed, flight_clear, passed_through
from solver.gap_set import GapSet
from solver.motion_state import MotionState, Setup


class GapRoots:
    """Where a gap closes within a piece (a part of the event-driven stepper).

    Roots, dips, region entry, reopening, and the check for missed closings
    after every piece.
    """

    def __init__(self, setup: Setup, motion: MotionState) -> None:
        self.s, self.m = setup, motion
        self.affine: Any = None  # wired by the stepper

    def missed(
        self,
        piece: Piece,
        gaps: GapSet,
        found: FoundEvent | None,
        accel: np.ndarray | None = None,
    ) -> FoundEvent | None:
        """A gap closing that the search missed in ``piece``, located; None if there is none.

        Every watched gap is checked where the piece ends (at ``found`` or its
        end). One below ``−PENETRATION_TOL`` there, one whose disk is on the
        other side of its segment or arc than at the start
        (:func:`solver.gap_closing.crossed`), or one whose disk went into a vertex or
        another disk on the way (:func:`~solver.gap_closing.passed_through`), was either
        closed already at the start — a ``SolverError`` naming the contact,
        time and depth — or closed in between: the first closing of it or of
        another pair of its disks (a disk through a corner meets a face
        first) on ``MISSED_SAMPLES`` samples is bisected to ``TIME_TOL``. A
        crossing that no sample sees is a ``SolverError``.

        ``accel`` are the constant accelerations (N,) of a free-flight
        piece (a parabola from ``piece.ta``): where
        :func:`~solver.gap_closing.flight_clear` proves that no gap can have
        closed on the way, the gaps are not evaluated.
        """
        if not len(gaps):
            return None
        N = self.s.N
        ta, tb = piece.ta, found.t if found is not None else piece.tb
        ya = piece.state(ta)
        qa = ya[:N]
        if accel is not None and flight_clear(gaps, qa, ya[N : 2 * N], accel, tb - ta):
            return None
        yb = piece.state(tb)
        qb = yb[:N]
        if piece.motion is not None and self.affine.nothing_missed(gaps, qa, qb):
            return None  # a closed-form piece, its affine gaps known from its scan
        g_b = gaps.gaps(qb)
        flips = crossed(gaps, qa, qb)
        g_a = gaps.gaps(qa) if flips.any() else None
        if g_a is not None:
            flips &= np.isfinite(g_a + g_b)
        deep = np.nonzero(
            (g_b < -PENETRATION_TOL)
            | flips
            | passed_through(gaps, qa, ya[N : 2 * N], qb, yb[N : 2 * N], tb - ta)
        )[0]
        if not len(deep):
            return None
        if g_a is None:
            g_a = gaps.gaps(qa)
        start = g_a[deep]
        if np.any(start < -PENETRATION_TOL):
            k = int(deep[int(np.argmin(start))])
            pair = gaps.pairs[k]
            raise SolverError(
                f"contact {pair.body}–{pair.other} overlaps by {-float(np.min(start)):.3g} m "
                f"at t = {ta:.12g} s (more than {PENETRATION_TOL:g} m) without an event"
            )
        pairs = gaps.of_disks(deep)
        flagged = {gaps.pairs[k].key for k in deep}
        # the other pairs of those disks count unless they were closed at the start already
        live = (pairs.gaps(qa, bare=True) >= -GAP_EVENT_TOL) | np.array(
            [p.key in flagged for p in pairs.pairs]
        )

        def overlaps(t: float) -> bool:
            return bool(np.any(pairs.gaps(piece.state(t)[:N], bare=True)[live] < -GAP_EVENT_TOL))

        ts = np.linspace(ta, tb, MISSED_SAMPLES + 1)
        before = ta
        for t in ts[1:]:
            if overlaps(t):
                break
            before = t
        else:
            pair = gaps.pairs[int(deep[0])]
            raise SolverError(
                f"{pair.body} passed through {pair.other} between t = {ta:.12g} s and "
                f"t = {tb:.12g} s without an event (an overlap of at least "
                f"{self.s.kin.radii[pair.i]:.3g} m, its radius)"
            )
        after = t
        while after - before > TIME_TOL:
            mid = 0.5 * (before + after)
            if not before < mid < after:  # adjacent floats: TIME_TOL is below their spacing
                break
            if overlaps(mid):
                after = mid
            else:
                before = mid
        g_after = np.where(live, pairs.gaps(piece.state(after)[:N], bare=True), np.inf)
        return FoundEvent(after, "gap", pairs.pairs[int(np.argmin(g_after))].key)

    def gap_event(
        self,
        piece: Piece,
        gaps: GapSet,
        ta: float,
        tb: float,
        before: tuple[np.ndarray, ...],
        after: tuple[np.ndarray, ...],
    ) -> FoundEvent | None:
        """Earliest gap closing in ``[ta, tb]`` (s), from the event values at both ends.

        A gap closes at a sign change, or at a minimum below zero between the
        sub-points (``u_n`` turning from negative to positive).
        """
        (ga, una, _), (gb, unb, _) = before, after
        closed, dips, reopen = _gap_tests(ga, gb, una, unb)
        best: FoundEvent | None = None
        for n in closed:
            t_hit = self._gap_root(piece, gaps, n, ta, tb, ga[n])
            if best is None or t_hit < best.t:
                best = FoundEvent(t_hit, "gap", gaps.pairs[n].key)
        for n in dips:
            if not self._gap_speed(piece, gaps, n, ta) < 0.0 < self._gap_speed(piece, gaps, n, tb):
                # the pair's own evaluation puts the speed's sign change outside (a speed
                # about zero at an end, the set's vectorised value rounding the other
                # way): the gap's least value is at an end, where it is positive
                continue
            t_min = brentq(lambda t, n=n: self._gap_speed(piece, gaps, n, t), ta, tb, xtol=TIME_TOL)
            if self.gap(piece, gaps, n, t_min) < -GAP_EVENT_TOL:
                t_hit = self._gap_root(piece, gaps, n, ta, t_min, ga[n])
                if best is None or t_hit < best.t:
                    best = FoundEvent(t_hit, "gap", gaps.pairs[n].key)
        # closed at the start and not pressing (just after an impact): it may open a
        # hair and close again between the sub-points, seen on REOPEN_SAMPLES samples
        if len(reopen):
            rows = GapSet(self.s.kin, [gaps.pairs[n] for n in reopen])
            N = self.s.N
            for t in np.linspace(ta, tb, REOPEN_SAMPLES + 1)[1:-1]:
                if best is not None and t >= best.t:
                    break
                dipped = np.nonzero(rows.gaps(piece.state(t)[:N]) < -GAP_EVENT_TOL)[0]
                if len(dipped):
                    for k in dipped:
                        n = int(reopen[k])
                        t_hit = self._gap_root(piece, gaps, n, ta, t, ga[n])
                        if best is None or t_hit < best.t:
                            best = FoundEvent(t_hit, "gap", gaps.pairs[n].key)
                    break
        return best

    def gap(self, piece: Piece, gaps: GapSet, n: int, t: float) -> float:
        y = piece.state(t)
        pair = gaps.pairs[n]
        return self.s.kin.gap_and_speed(pair, y[: self.s.N], y[self.s.N : 2 * self.s.N])[0]

    def _gap_speed(self, piece: Piece, gaps: GapSet, n: int, t: float) -> float:
        y = piece.state(t)
        pair = gaps.pairs[n]
        return self.s.kin.gap_and_speed(pair, y[: self.s.N], y[self.s.N : 2 * self.s.N])[1]

    def _gap_root(
        self, piece: Piece, gaps: GapSet, n: int, ta: float, tb: float, g_a: float
    ) -> float:
        """First time in ``[ta, tb]`` where gap ``n`` closes, given ``g(tb) < 0``.

        A contact that starts closed but separating (just after an impact)
        closes again after its gap's maximum, found where ``u_n = 0``. A
        contact whose disk enters the feature's region during the step
        (``g_a`` infinite: the arc beginning on a floor, a vertex no longer
        hidden) closes where it enters if its gap there is already about zero.
        """
        if math.isinf(g_a):
            ta = self._region_entry(piece, gaps.pairs[n], ta, tb)
            g_entry = self.gap(piece, gaps, n, ta)
            if g_entry <= GAP_TOL:
                return ta
            return brentq(lambda t: self.gap(piece, gaps, n, t), ta, tb, xtol=TIME_TOL)
        if not g_a > GAP_TOL:
            # closed at the start (a gap of a few 1e-17 m after a bounce is rounding: a root
            # search from it finds a "root" at once). An approach at rounding level (a
            # plastic impact's common velocity) is not a closing: the samples below see
            # whether the gap opens first
            speed_a = self._gap_speed(piece, gaps, n, ta)
            if not speed_a > -REST_SPEED_TOL:
                return ta
            if speed_a > 0.0 and self._gap_speed(piece, gaps, n, tb) < 0.0:  # one maximum
                t_max = brentq(lambda t: self._gap_speed(piece, gaps, n, t), ta, tb, xtol=TIME_TOL)
                if not self.gap(piece, gaps, n, t_max) > 0.0:
                    return ta
                return brentq(lambda t: self.gap(piece, gaps, n, t), t_max, tb, xtol=TIME_TOL)
            # it opens, then closes: the first sub-sample below zero after one above it
            ts = np.linspace(ta, tb, REOPEN_SAMPLES + 1)
            g = np.array([self.gap(piece, gaps, n, t) for t in ts])
            below = np.nonzero(g < -GAP_EVENT_TOL)[0]
            last = int(below[0]) if len(below) else REOPEN_SAMPLES
            lo, hi = ts[max(last - 1, 0)], ts[last]
            if not g[last] < 0.0:
                return hi
            if not g[max(last - 1, 0)] > 0.0:
                # a hop shorter than the samples: its top is where u_n = 0
                speed = lambda t: self._gap_speed(piece, gaps, n, t)  # noqa: E731
                if not (speed(lo) > 0.0 and speed(hi) < 0.0):
                    return lo
                lo = brentq(speed, lo, hi, xtol=TIME_TOL)
                if not self.gap(piece, gaps, n, lo) > 0.0:
                    return lo
            ta, tb = lo, hi
        return brentq(lambda t: self.gap(piece, gaps, n, t), ta, tb, xtol=TIME_TOL)

    def _region_entry(self, piece: Piece, pair: ContactPair, ta: float, tb: float) -> float:
        """First time (s, to ``TIME_TOL``) in ``[ta, tb]`` with ``pair``'s disk inside its region.

        The pair is outside at ``ta`` and inside at ``tb``.
        """
        N = self.s.N
        for _ in range(200):
            if tb - ta <= TIME_TOL:
                return tb
            mid = 0.5 * (ta + tb)
            y = piece.state(mid)
            if self.s.kin.evaluate(pair, y[:N], y[N : 2 * N]).inside:
                tb = mid
            else:
                ta = mid
        raise SolverError("bisection for a disk entering a contact's region did not converge")


def _gap_tests(
    ga: np.ndarray, gb: np.ndarray, una: np.ndarray, unb: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of :meth:`GapRoots.gap_event`'s three searches, in increasing order.

    From the gaps ``ga``, ``gb`` (m) and normal speeds ``una``, ``unb`` (m/s)
    at both ends of a sub-interval: a gap below ``−GAP_EVENT_TOL`` at the
    end (closed), positive at both ends with ``u_n`` turning from negative
    to positive (a dip), about zero at the start and not below
    ``−GAP_EVENT_TOL`` at the end (it may reopen and close); NaN fails each.
    """
    closed = np.nonzero(gb < -GAP_EVENT_TOL)[0]
    # the rarer tests' first terms decide most sub-intervals on their own
    turning = (una < 0) & (unb > 0)
    dips = np.nonzero(turning & (ga > 0) & (gb > 0))[0] if turning.any() else closed[:0]
    near = np.abs(ga) <= GAP_TOL
    reopen = np.nonzero(near & (gb >= -GAP_EVENT_TOL))[0] if near.any() else closed[:0]
    return closed, dips, reopen
