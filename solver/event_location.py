"""Event location of the event-driven stepper: where a flight piece ends.

:class:`EventLocator` scans a piece for the first event — a watched gap
closing (its time is found by :mod:`solver.gap_roots`), an active contact's
λ reaching 0 (lift-off), its slip or friction changing (stick/slip), the
disk leaving its feature (region), or a rest-length spring's ends meeting —
located to ``TIME_TOL``. Closed-form pieces find their gap closings in
closed form (:func:`solver.gap_closing.closing_times`), and a λ
that dips below zero between two sub-points at its minimum, found where its
exact rate turns positive.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq

from solver.contact import FORCE_EVENT_TOL
from solver.contact_pairs import ContactPair
from solver.errors import SolverError
from solver.event_tolerances import (
    GAP_EVENT_TOL,
    GAP_TOL,
    PENETRATION_TOL,
    SUBPOINTS_FLIGHT,
    SUBPOINTS_LINEAR,
    TIME_TOL,
)
from solver.flight import Piece
from solver.gap_closing import clear_rows, closing_times
from solver.gap_set import GapSet, values_many
from solver.geometry import disk_segment_contacts
from solver.linear_bead_model import LinearBeadModel
from solver.modal_flow import quiet_rows
from solver.motion_state import MotionState, Setup

CLEAR_MARGIN = GAP_TOL + PENETRATION_TOL
"""Clearance (m) a free flight's gap must provably keep above ``−PENETRATION_TOL``
to be left out of the flight's scan: it then stays above ``GAP_TOL``, where no test
of the scan starts a search."""


def bracketed_root(f: Callable[[float], float], ta: float, tb: float) -> float:
    """Root of ``f`` in ``[ta, tb]`` (s, to ``TIME_TOL``), or the end where ``f`` is already 0.

    ``f`` should change sign in the interval; rounding may leave an end at
    the sign it should not have (a rate of 1e-17 on either side of zero),
    and then that end is taken.
    """
    fa = f(ta)
    if not fa < 0.0:
        return ta
    if not f(tb) > 0.0:
        return tb
    return brentq(f, ta, tb, xtol=TIME_TOL)


@dataclass(frozen=True)
class FoundEvent:
    t: float
    kind: str
    key: Hashable | None


class EventLocator:
    """Where the next event of a piece of motion is (a part of the event-driven stepper).

    Gaps through :class:`solver.gap_roots.GapRoots`, affine gaps through
    :class:`solver.affine_gaps.AffineScan`; owns what a flight's scan left
    unresolved (``_unresolved``).
    """

    def __init__(
        self, setup: Setup, motion: MotionState, contacts: Any, smooth: Any, roots: Any
    ) -> None:
        self.s, self.m, self.contacts, self.smooth, self.roots = (
            setup, motion, contacts, smooth, roots
        )  # fmt: skip
        self.affine: Any = None  # wired by the stepper
        self._unresolved: tuple[GapSet, bytes, GapSet] | None = None  # of flight_scan

    def linear_scan(self, piece: Piece, gaps: GapSet, model: LinearBeadModel) -> FoundEvent | None:
        """Earliest event of a closed-form piece: :meth:`_scan`, then spring sign changes.

        Gaps, lift-off and the contacts' other tests are scanned on the exact
        ``(q, v)`` at ``SUBPOINTS_LINEAR`` sub-points (screened by
        :meth:`solver.affine_gaps.AffineScan.screened_scan`), and λ also at its minima
        between them (:meth:`_reaction_dip`). A rest-length spring
        whose ends meet before that event (its separation reaching 0, also
        at a minimum between sub-points) ends the piece with a ``spring``
        event.
        """
        motion = piece.motion
        n_sub = self._linear_subpoints(piece) if len(gaps) else SUBPOINTS_LINEAR
        found = self.affine.screened_scan(piece, gaps, n_sub)
        end = found.t if found is not None else piece.tb
        dip = self._reaction_dip(piece, gaps, end)
        if dip is not None:
            found = dip
        if not model.separation_rows.shape[0]:
            return found
        end = found.t if found is not None else piece.tb
        ts = np.linspace(piece.ta, end, SUBPOINTS_LINEAR + 1)
        Q, V = motion.state(ts)
        sep = model.separations(Q)
        rate = V @ model.separation_rows.T

        def separation(t: float, k: int) -> float:
            return float(model.separations(motion.state(t)[0])[k])

        def closing(t: float, k: int) -> float:
            return float(model.separation_rows[k] @ motion.state(t)[1])

        quiet = quiet_rows(motion, model.separation_rows, ts, sep, 0.0)
        for j in range(1, len(ts)):
            ta, tb = ts[j - 1], ts[j]
            best: float | None = None
            candidates = ~(sep[j] > 0.0) | ((rate[j - 1] < 0.0) & (rate[j] > 0.0))
            if quiet is not None:
                candidates &= ~quiet[j - 1]  # a modal phase's far springs, at rest
            for k in np.nonzero(candidates)[0].tolist():
                if not sep[j, k] > 0.0:
                    t_hit = brentq(separation, ta, tb, args=(k,), xtol=TIME_TOL)
                elif rate[j - 1, k] < 0.0 < rate[j, k]:
                    t_min = bracketed_root(lambda t, k=k: closing(t, k), ta, tb)
                    if separation(t_min, k) > 0.0:
                        continue
                    t_hit = brentq(separation, ta, t_min, args=(k,), xtol=TIME_TOL)
                else:
                    continue
                best = t_hit if best is None else min(best, t_hit)
            if best is not None:
                return FoundEvent(best, "spring", None)
        return found

    def _linear_subpoints(self, piece: Piece) -> int:
        """Sub-points of a closed-form piece for its gaps: a bead moves ``r_min / 2`` (m) at most.

        ``SUBPOINTS_LINEAR`` sub-points follow the flow's fastest rate, not
        the beads' travel: a bead driven fast enough goes into a stop and
        out, or through it (the gap to a segment is a distance, positive on
        both sides), between two of them. The largest bead speed on
        ``SUBPOINTS_FLIGHT + 1`` samples (m/s; the velocity turns by at most
        1/8 of its fastest rate between them), times 1.5, bounds the travel;
        at most 1024 sub-points.
        """
        _, V = piece.motion.state(np.linspace(piece.ta, piece.tb, SUBPOINTS_FLIGHT + 1))
        travel = 1.5 * float(np.max(np.abs(V), initial=0.0)) * (piece.tb - piece.ta)
        wanted = math.ceil(2.0 * travel / self.s.r_min) if math.isfinite(travel) else 1024
        return min(max(wanted, SUBPOINTS_LINEAR), 1024)  # np.clip costs ~10 us on scalars

    def _reaction_dip(self, piece: Piece, gaps: GapSet, end: float) -> FoundEvent | None:
        """Earliest lift-off at a dip of λ between the sub-points of a closed-form piece.

        λ of an active contact is a sum of oscillations and exponentials: it
        can turn negative and back between two sub-points of
        :meth:`_scan`, which then sees no sign change. Where its rate
        ``λ̇ = −(A M⁻¹ Aᵀ)⁺ A M⁻¹ ḟ`` (with ``ḟ = −K v − C q̈ + Σ a ω cos(ω t
        + φ)``, N/s) turns from negative to positive the minimum is located
        and, if the event function of :meth:`_active_values` is negative
        there, the piece ends where it first reaches 0 (a ``liftoff`` before
        ``end``, s).
        """
        motion = piece.motion
        flow = motion.flow
        if not self.m.active or not len(flow.A):
            return None
        ts = np.linspace(piece.ta, end, SUBPOINTS_LINEAR + 1)
        M_inv_AT = np.linalg.solve(flow.M, flow.A.T)
        to_rate = -np.linalg.pinv(flow.A @ M_inv_AT, hermitian=True) @ M_inv_AT.T

        def rates(t: np.ndarray) -> np.ndarray:
            _, v = motion.state(t)
            f_dot = -(v @ flow.K.T) - motion.acceleration(t) @ flow.C.T
            for h in flow.harmonics:
                f_dot = f_dot + np.multiply.outer(
                    h.omega * np.cos(h.omega * t + h.phase), h.amplitude
                )
            return f_dot @ to_rate.T

        rate = rates(ts)
        keys = [pair.key for pair, _ in self.m.active.values()]
        for j in range(1, len(ts)):
            ta, tb = ts[j - 1], ts[j]
            best: FoundEvent | None = None
            for k in np.nonzero((rate[j - 1] < 0.0) & (rate[j] > 0.0))[0]:
                t_min = bracketed_root(lambda t, k=k: float(rates(np.array([t]))[0, k]), ta, tb)
                col = 3 * int(k)
                if not self._active_value(piece, gaps, col, t_min) < 0.0:
                    continue
                if not self._active_value(piece, gaps, col, ta) > 0.0:
                    t_hit = ta
                else:
                    t_hit = brentq(
                        lambda t, c=col: self._active_value(piece, gaps, c, t),
                        ta,
                        t_min,
                        xtol=TIME_TOL,
                    )
                if best is None or t_hit < best.t:
                    best = FoundEvent(t_hit, "liftoff", keys[k])
            if best is not None:
                return best
        return None

    def event_values(
        self, t: float, y: np.ndarray, gaps: GapSet
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Gap values, their normal speeds, and the active contacts' event functions."""
        N = self.s.N
        q, v = y[:N], y[N : 2 * N]
        g, u_n = gaps.values(q, v) if len(gaps) else (np.zeros(0), np.zeros(0))
        return g, u_n, self.active_values(t, q, v)

    def active_values(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Per active contact: λ, the friction test (cone or slip speed), inside its feature.

        Each is positive while the phase's assumptions hold; a sign change is an event.
        """
        if not self.m.active:
            return np.zeros(0)
        one = self.smooth.one_contact_forces(t, q, v)
        if one is not None:  # the same tests on the one contact's closed form
            _, mode = next(iter(self.m.active.values()))
            reaction = self.smooth.fixed_mode()
            mu, scale = reaction.pair.friction, FORCE_EVENT_TOL * (1.0 + abs(one.lam))
            if mu <= 0.0:
                friction = 1.0
            elif mode == "stick":
                friction = mu * one.lam - abs(one.friction_force) + mu * scale
            else:
                friction = (1.0 if mode == "slip+" else -1.0) * one.u_t + 1e-12
            return np.array((one.lam + scale, friction, 1.0 if reaction.inside(q) else -1.0))
        evals, forces = self.contacts.active_forces(t, q, v)
        scale = FORCE_EVENT_TOL * (1.0 + float(np.max(np.abs(forces.lam))))
        values = []
        for k, (e, (_, mode)) in enumerate(zip(evals, self.m.active.values(), strict=True)):
            values.append(forces.lam[k] + scale)
            if e.friction > 0.0:
                if mode == "stick":
                    values.append(
                        e.friction * forces.lam[k]
                        - abs(forces.friction_force[k])
                        + e.friction * scale
                    )
                else:
                    values.append((1.0 if mode == "slip+" else -1.0) * e.u_t + 1e-12)
            else:
                values.append(1.0)
            values.append(1.0 if e.inside else -1.0)
        return np.asarray(values)

    def _segment_active_values(self, Q: np.ndarray, V: np.ndarray) -> np.ndarray | None:
        """:meth:`_active_values` at every row of ``Q``, ``V``, while the forces are constant.

        Valid while ``_phase_forces`` is set (every active contact a disk on
        a segment); ``None`` when a row lies beyond a segment's ends.
        """
        forces = self.m.phase_forces
        scale = FORCE_EVENT_TOL * (1.0 + float(np.max(np.abs(forces.lam))))
        values = np.ones((len(Q), 3 * len(self.m.active)))  # frictionless and inside: 1
        for k, (pair, mode) in enumerate(self.m.active.values()):
            C, Cdot, omega = self.s.system.disk_motions(Q, V, pair.i)
            kin = disk_segment_contacts(pair.feature, C, Cdot, self.s.kin.radii[pair.i], omega)
            if not kin.inside.all():
                return None
            values[:, 3 * k] = forces.lam[k] + scale
            if pair.friction > 0.0:
                if mode == "stick":
                    values[:, 3 * k + 1] = (
                        pair.friction * forces.lam[k]
                        - abs(forces.friction_force[k])
                        + pair.friction * scale
                    )
                else:
                    values[:, 3 * k + 1] = (1.0 if mode == "slip+" else -1.0) * kin.u_t + 1e-12
        return values

    def _sub_point_values(
        self, piece: Piece, ts: np.ndarray, gaps: GapSet
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """:meth:`_event_values` at the times ``ts`` (s), in order, as the scan asks for them.

        Without watched gaps, with constant contact forces and a vectorised
        state (a parabolic phase) they are computed for all times at once.
        """
        if piece.states is not None and self.m.phase_forces is not None and not len(gaps):
            N = self.s.N
            Y = piece.states(ts)
            rows = self._segment_active_values(Y[:, :N], Y[:, N : 2 * N])
            if rows is not None:
                none = np.zeros(0)
                for row in rows:
                    yield none, none, row
                return
        for t in ts:
            yield self.event_values(t, piece.state(t), gaps)

    def closed_on_leaving(
        self, piece: Piece, gaps: GapSet, ta: float, tb: float, g_a: np.ndarray, g_b: np.ndarray
    ) -> FoundEvent | None:
        """A vertex gap that closed before a feature ending at the vertex hid it.

        Its gap is finite at ``ta`` and ``inf`` (hidden) at ``tb`` (s): a wheel
        falling past a step's corner into the strip of the step's face. The
        bare distance to the corner below zero at ``tb`` means the gap closed
        in between, at its root.
        """
        rows = gaps.vertex_rows
        hidden = np.isinf(g_b[rows])
        if not hidden.any():  # the common case: no corner hidden at the end
            return None
        g = g_a[rows]
        left = rows[np.isfinite(g) & (g > 0.0) & hidden]
        best: FoundEvent | None = None
        for n in left:
            if self.roots.gap(piece, gaps, n, tb) < -GAP_EVENT_TOL:
                t_hit = brentq(
                    lambda t, n=n: self.roots.gap(piece, gaps, n, t), ta, tb, xtol=TIME_TOL
                )
                if best is None or t_hit < best.t:
                    best = FoundEvent(t_hit, "gap", gaps.pairs[n].key)
        return best

    def scan(self, piece: Piece, gaps: GapSet, n_sub: int) -> FoundEvent | None:
        """Earliest event in ``piece`` (or None), located to ``TIME_TOL``.

        A piece with a vectorised state and watched gaps (the gaps of a free
        flight that are not quadratics in time) has its sub-point values
        computed first, and only the sub-intervals where
        :meth:`_may_hold_event` sees a possible event are searched.
        """
        ts = np.linspace(piece.ta, piece.tb, n_sub + 1)
        if piece.states is not None and len(gaps):
            values = self._stacked_values(piece, ts, gaps)
            intervals = (np.nonzero(self._may_hold_event(gaps, values))[0] + 1).tolist()
            values = iter(values)
        else:
            values = self._sub_point_values(piece, ts, gaps)
            intervals = range(1, len(ts))
        active = list(self.m.active.values())
        after, at = next(values), 0
        for j in intervals:
            while at < j - 1:  # values of the sub-intervals passed over
                after, at = next(values), at + 1
            ta, tb = ts[j - 1], ts[j]
            before, after, at = after, next(values), j
            best = self.roots.gap_event(piece, gaps, ta, tb, before, after) if len(gaps) else None
            if len(gaps):
                left = self.closed_on_leaving(piece, gaps, ta, tb, before[0], after[0])
                if left is not None and (best is None or left.t < best.t):
                    best = left
            if active:
                other = self._active_event(piece, gaps, active, ta, tb, before[2], after[2])
                if other is not None and (best is None or other.t < best.t):
                    best = other
            if best is not None:
                return best
        return None

    def _stacked_values(
        self, piece: Piece, ts: np.ndarray, gaps: GapSet
    ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """:meth:`_event_values` at every time of ``ts`` (s), the states made in one pass.

        The rows of ``piece.states`` hold the positions and velocities that
        ``piece.state`` gives at the same times, bit for bit, and the gaps
        of all rows are computed at once (:func:`solver.gap_set.values_many`, the
        numbers of :meth:`GapSet.values`).
        """
        Y = piece.states(ts)
        N = self.s.N
        many = values_many(gaps, Y[:, :N], Y[:, N : 2 * N])
        if many is None:
            return [self.event_values(t, y, gaps) for t, y in zip(ts, Y, strict=True)]
        g, u_n = many
        if not self.m.active:
            none = np.zeros(0)
            return [(g_k, u_k, none) for g_k, u_k in zip(g, u_n, strict=True)]
        return [
            (g_k, u_k, self.active_values(t, y[:N], y[N : 2 * N]))
            for t, y, g_k, u_k in zip(ts, Y, g, u_n, strict=True)
        ]

    def _may_hold_event(
        self, gaps: GapSet, values: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    ) -> np.ndarray:
        """Per sub-interval between sub-point ``values``: whether :meth:`_scan` may find an event.

        True where any of the tests that start a search holds at its ends:
        a gap below ``−GAP_EVENT_TOL`` at the end, a dip (positive gaps, ``u_n``
        turning from negative to positive), a gap closed at the start
        (:meth:`solver.gap_roots.GapRoots.gap_event`), a vertex gap finite
        and positive at the start and hidden at the end (:meth:`_closed_on_leaving`),
        an active contact's event function negative at the end
        (:meth:`_active_event`). Elsewhere those return None without a search.
        """
        g = np.array([v[0] for v in values])
        u = np.array([v[1] for v in values])
        ga, gb, ua, ub = g[:-1], g[1:], u[:-1], u[1:]
        with np.errstate(invalid="ignore"):
            hit = (
                (gb < -GAP_EVENT_TOL)
                | ((ga > 0) & (gb > 0) & (ua < 0) & (ub > 0))
                | ((np.abs(ga) <= GAP_TOL) & (gb >= -GAP_EVENT_TOL))
            ).any(axis=1)
        rows = gaps.vertex_rows
        if len(rows):
            va, vb = ga[:, rows], gb[:, rows]
            hit |= (np.isfinite(va) & (va > 0.0) & np.isinf(vb)).any(axis=1)
        if self.m.active:
            f = np.array([v[2] for v in values])
            hit |= (f[1:] < 0).any(axis=1)
        return hit

    def _active_event(
        self,
        piece: Piece,
        gaps: GapSet,
        active: list[tuple[ContactPair, str]],
        ta: float,
        tb: float,
        fa: np.ndarray,
        fb: np.ndarray,
    ) -> FoundEvent | None:
        """Earliest change of an active contact in ``[ta, tb]`` (s): λ, friction, feature region.

        ``fa`` and ``fb`` are :meth:`_active_values` at both ends.
        """
        best: FoundEvent | None = None
        for col in np.nonzero(fb < 0)[0]:
            contact, what = divmod(int(col), 3)
            key = active[contact][0].key
            kind = ("liftoff", "friction", "region")[what]
            if fa[col] < 0:
                t_hit = ta
            elif kind == "region":
                t_hit = self._bisect_region(piece, gaps, col, ta, tb)
            else:
                t_hit = brentq(
                    lambda t, c=col: self._active_value(piece, gaps, c, t),
                    ta,
                    tb,
                    xtol=TIME_TOL,
                )
            if best is None or t_hit < best.t:
                best = FoundEvent(t_hit, kind, key)
        return best

    def flight_scan(self, piece: Piece, gaps: GapSet, a: np.ndarray) -> FoundEvent | None:
        """Earliest gap closing in a free flight with constant accelerations ``a``.

        Gaps that are quadratics in time (segments, disk pairs with equal
        accelerations, vertices met by an unaccelerated disk) close at the
        root of that quadratic, computed in closed form; the few others
        within reach are searched on sub-points no farther apart than half
        the smallest radius of travel.
        """
        if not len(gaps):
            return None
        y0 = piece.state(piece.ta)
        q0, v0 = y0[: self.s.N], y0[self.s.N : 2 * self.s.N]
        tau, state = closing_times(gaps, q0, v0, a, piece.tb - piece.ta)
        unresolved = state == 1
        best: FoundEvent | None = None
        n = int(tau.argmin())
        if math.isfinite(tau[n]):
            best = FoundEvent(piece.ta + float(tau[n]), "gap", gaps.pairs[n].key)
        end = best.t if best is not None else piece.tb
        if unresolved.any() and not self.m.active:
            # a gap that provably stays above GAP_TOL up to the end holds no event there
            rows = np.nonzero(unresolved)[0]
            system = self.s.system
            c, cd, ca = (
                system.centres(q0),
                system.centre_velocities(v0),
                system.centre_velocities(a),
            )
            clear = clear_rows(gaps, rows, c, cd, ca, end - piece.ta, CLEAR_MARGIN)
            unresolved[rows[np.array(clear, dtype=bool)]] = False
        if unresolved.any():
            rest = self._unresolved_set(gaps, unresolved)
            travel = float(np.max(np.abs(piece.state(end) - y0)[: self.s.N], initial=0.0))
            n_sub = int(np.clip(math.ceil(2.0 * travel / self.s.r_min), SUBPOINTS_FLIGHT, 1024))
            other = self.scan(Piece(piece.ta, end, piece.state, piece.states), rest, n_sub)
            if other is not None and (best is None or other.t < best.t):
                best = other
        return best

    def _unresolved_set(self, gaps: GapSet, unresolved: np.ndarray) -> GapSet:
        """The pairs of ``gaps`` flagged in ``unresolved``, kept while both stay the same.

        A wheel's flights between bounces leave the same corners unresolved
        (their gaps are not quadratics in time): one GapSet serves them all.
        """
        key = unresolved.tobytes()
        cached = self._unresolved
        if cached is None or cached[0] is not gaps or cached[1] != key:
            rows = np.nonzero(unresolved)[0]
            cached = (gaps, key, GapSet(self.s.kin, [gaps.pairs[k] for k in rows]))
            self._unresolved = cached
        return cached[2]

    def _active_value(self, piece: Piece, gaps: GapSet, col: int, t: float) -> float:
        y = piece.state(t)
        return float(self.active_values(t, y[: self.s.N], y[self.s.N : 2 * self.s.N])[col])

    def _bisect_region(self, piece: Piece, gaps: GapSet, col: int, ta: float, tb: float) -> float:
        for _ in range(200):
            if tb - ta <= TIME_TOL:
                return tb
            mid = 0.5 * (ta + tb)
            if self._active_value(piece, gaps, col, mid) < 0:
                tb = mid
            else:
                ta = mid
        raise SolverError("bisection for a contact leaving its feature did not converge")
