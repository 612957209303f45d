"""Where a compliant contact's events are: the event-driven stepper's part for them.

A compliant contact (:mod:`solver.compliance`) is a force, not a constraint; its
events end a smooth phase at the kinks of that force: ``touch`` (δ reaches 0
while closing), ``release`` (``k·δ^p + c·δ̇`` falls to 0), and for a wheel on a
compliant feature with friction ``stick`` and ``slip``. :class:`CompliantEvents`
finds the earliest of them on a smooth piece (sign changes between sub-points,
dips of a gap and short presses located by the turning of the gap's rate), and
writes their rows with each contact's impulse, peak force and contact time.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from solver.compliance import COMPLIANT_EVENTS, CompliantSet
from solver.compliant_rest import can_rest, rest_row
from solver.event_tolerances import TIME_TOL
from solver.frames import Event

RATE_SHARE = 1e-6
"""Step of the difference giving a pressing force's rate, as a share of the sub-points' spacing."""

_GAUSS = np.polynomial.legendre.leggauss(8)
"""Gauss–Legendre nodes and weights on [−1, 1] for a contact's impulse over a piece."""


@dataclass(frozen=True)
class CompliantEvent:
    """A ``touch`` or ``release`` at ``t`` (s) of disk ``body`` and feature ``other``.

    ``pair``: the same pair as ``(disk index, other index)`` (:meth:`CompliantSet.engage`).
    """

    t: float
    kind: str
    key: tuple[str, str]
    pair: tuple[int, int] = (-1, -1)


class CompliantEvents:
    """The event-driven stepper's part for compliant contacts: where their events are.

    Reached through three methods: :meth:`begin` (a phase starts: which
    contacts press in it, set on the run's own ``compliance``, see
    :meth:`solver.system.System.for_one_run`), :meth:`first` (the earliest ``touch`` or
    ``release`` of a smooth piece) and :meth:`emit` (the event row). The
    forces themselves are in the applied force (:meth:`CompliantSet.force`).
    """

    def __init__(
        self, compliance: CompliantSet, N: int, n_sub: int, t_end: float = math.inf
    ) -> None:
        self.compliance, self.N, self.n_sub = compliance, N, n_sub
        self.t_end = t_end  # s: the run's end, where a phase at rest ends (phase_pieces)
        # each pressing contact's touch time, impulse ∫F dt so far and largest force
        self._measures: dict[tuple[str, str], list[float]] = {}
        # the touch or release that ended the last phase: (t, kind, pair), read by begin
        self._settled: tuple[float, str, tuple[int, int]] | None = None

    def _values(self, t: float, y: np.ndarray) -> np.ndarray:
        """:meth:`CompliantSet.event_values` of the row ``y = (q, v, work)`` at ``t`` (s)."""
        N = self.N
        q, v = y[:N], y[N : 2 * N]
        other = None
        if 0.0 in self.compliance.modes.values():  # a stuck wheel: its holding force
            other = self.compliance.system.applied_force(t, q, v, compliant=False)
        return self.compliance.event_values(q, v, other)

    def _value_at(self, piece: Any, t: float) -> np.ndarray:
        """:meth:`_values` at ``t`` (s) on ``piece``: of a closed-form piece, its exact
        ``(q, v)`` alone (the work terms' quadrature costs more than the motion; the
        motion at one time may differ from the piece's row in its last bit, which the
        events' sides do not depend on: :meth:`begin`)."""
        if piece.motion is None:
            return self._values(t, piece.state(t))
        q, v = piece.motion.state(np.array([t]))
        return self._values(t, np.concatenate((q[0], v[0])))

    def begin(self, t: float, q: np.ndarray, v: np.ndarray) -> None:
        """A phase starts at ``(t, q, v)``: which compliant contacts press in it, how they rub."""
        system = self.compliance.system
        settled = self._settled
        self._settled = None
        self.compliance.engage(
            q,
            v,
            system.applied_force(t, q, v, compliant=False),
            settled[1:] if settled is not None and settled[0] == t else None,
        )

    def first(
        self, piece: Any, ta: float, tb: float, n_sub: int | None = None
    ) -> CompliantEvent | None:
        """The earliest ``touch`` or ``release`` in ``(ta, tb]`` of ``piece`` (or None).

        ``n_sub`` sub-points (default: the part's own, for an ODE step)
        split the piece; a value positive at a sub-point and not positive at
        the next is bisected to ``TIME_TOL``, and the event is put on the
        side where it has happened (gap ≤ 0 after a touch, force 0 after a
        release), so the next phase does not find it again. A gap positive
        at both sub-points whose rate turns from negative to positive between
        them (a dip: a disk that grazes the stop between two sub-points) has
        its minimum located; if the gap is below 0 there, the touch is the
        first root before it, as for a rigid gap (``solver/gap_roots.py``).
        The second sub-point may also lie inside such a dip after its deepest
        point, where the disk already leaves faster than ``k δ / c`` (its touch
        value ``−(k δ + c δ̇)`` positive again, its rate NaN): NaN counts as a
        turned rate, so that dip is searched too.
        Likewise a pressing pair whose force is 0 at a sub-point (touched at
        δ = 0 with c = 0) and not positive at the next, its overlap turning
        between them: where the overlap is deepest the force is positive, and
        the release is the first root after it (a short press, as a grazing
        disk makes, falls between two sub-points).
        """
        found = self._first(piece, ta, tb, self.n_sub if n_sub is None else n_sub)
        self._measure(piece, ta, tb if found is None else found.t)
        return found

    def phase_pieces(self, pieces: Iterator[Any], q0: np.ndarray) -> Iterator[Any]:
        """``pieces`` of a phase from ``q0`` (closed form or ODE), as compliant contacts need them.

        Without ``states``: the frames are made one by one, each with the
        compliant contacts' rows and the stops' energy (the vectorised
        frames know only rigid contacts and springs). And with the loss of
        released overlaps: a disk released with δ > 0 leaves its stop with
        no force, the stop's energy ``U`` going out as loss (``−dU/dt``).
        Within a phase nothing presses it again (that would be a ``touch``),
        so its loss from the phase's start is ``U(q0) − U(q)`` exactly:
        added to the damping work of each row (neither the closed form's
        quadrature nor the ODE's :meth:`CompliantSet.dissipation_power`
        counts it).

        And at rest: when the pressing disks of a scene whose every contact
        is compliant rest on their floors to round-off at a piece's end
        (:mod:`solver.compliant_rest`), the rest of the run is one piece at
        their static state (with ``t_end``; no ``motion``: it is scanned as
        an ODE piece is).
        """
        compliance, engaged, N = self.compliance, self.compliance.engaged or frozenset(), self.N
        stored = compliance.released_energy(q0, engaged)
        resting = stored == 0.0 and self.t_end < math.inf and can_rest(compliance)
        for piece in pieces:
            if stored == 0.0:
                yield replace(piece, states=None)
                if resting and piece.tb < self.t_end:
                    rest = rest_row(compliance, piece.tb, piece.state(piece.tb))
                    if rest is not None:  # at rest to round-off: one piece to the run's end
                        yield replace(
                            piece,
                            ta=piece.tb,
                            tb=self.t_end,
                            state=lambda t, rest=rest: rest.copy(),
                            states=None,
                            motion=None,
                        )
                        return
                continue

            def state(t: float, piece: Any = piece) -> np.ndarray:
                row = piece.state(t)
                row[2 * N + 1] += stored - compliance.released_energy(row[:N], engaged)
                return row

            yield replace(piece, state=state, states=None)

    def _measure(self, piece: Any, ta: float, tb: float) -> None:
        """Add ``∫F dt`` over ``[ta, tb]`` (Gauss–Legendre) and the largest F to each contact.

        The largest F is that of the nodes; on a closed-form piece (a third
        of the contact's period, the nodes far apart) a node larger than its
        neighbours is polished to the crest between them (:meth:`_crest`).
        """
        if not tb > ta or not self.compliance.engaged:
            return
        nodes, weights = _GAUSS
        half = 0.5 * (tb - ta)
        N = self.N
        samples = []
        for x, w in zip(nodes, weights, strict=True):
            t = ta + half * (1.0 + x)
            y = piece.state(t)
            forces = self.compliance.pressing_forces(y[:N], y[N : 2 * N])
            samples.append((t, forces))
            for key, force in forces.items():
                record = self._measures.setdefault(key, [ta, 0.0, 0.0])
                record[1] += half * w * force
                record[2] = max(record[2], force)
        if piece.motion is None:
            return
        for j in range(1, len(samples) - 1):
            (t0, before), (_, forces), (t1, after) = samples[j - 1 : j + 2]
            for key, force in forces.items():
                if before.get(key, -math.inf) <= force >= after.get(key, -math.inf):
                    record = self._measures[key]
                    record[2] = max(record[2], self._crest(piece, key, t0, t1))

    def _crest(self, piece: Any, key: tuple[str, str], lo: float, hi: float) -> float:
        """The largest force (N) of contact ``key`` on ``piece`` in ``[lo, hi]`` (golden search)."""
        N = self.N

        def force(t: float) -> float:
            y = piece.state(t)
            return self.compliance.pressing_forces(y[:N], y[N : 2 * N])[key]

        g = 0.5 * (math.sqrt(5.0) - 1.0)
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        fa, fb = force(a), force(b)
        for _ in range(60):
            if fa < fb:
                lo, a, fa = a, b, fb
                b = lo + g * (hi - lo)
                fb = force(b)
            else:
                hi, b, fb = b, a, fa
                a = hi - g * (hi - lo)
                fa = force(a)
        return max(fa, fb)

    def _first(self, piece: Any, ta: float, tb: float, n_sub: int) -> CompliantEvent | None:
        if not tb > ta:
            return None
        ts = np.linspace(ta, tb, n_sub + 1)
        step = RATE_SHARE * (tb - ta) / n_sub
        before = self._value_at(piece, ts[0])
        slope = self._force_rates(piece, ts[0], before, step)
        for j in range(1, len(ts)):
            after = self._value_at(piece, ts[j])
            crossed = (before[:, :4] > 0.0) & (after[:, :4] <= 0.0)
            hits = [
                (int(r), int(c), ts[j - 1], ts[j])
                for r, c in zip(*np.nonzero(crossed), strict=True)
            ]
            rates = self._force_rates(piece, ts[j], after, -step)
            if slope is not None:  # a pressing force that dips between the sub-points
                dips = (before[:, 1] > 0.0) & (after[:, 1] > 0.0) & (slope < 0.0) & (rates > 0.0)
                for row in np.nonzero(dips)[0].tolist():
                    t_low = self._force_low(piece, row, ts[j - 1], ts[j], step)
                    if t_low is not None:
                        hits.append((row, 1, ts[j - 1], t_low))
            slope = rates
            turning = (before[:, 4] < 0.0) & ~(after[:, 4] <= 0.0)  # NaN: past a dip's entry
            if turning.any():
                free = np.isfinite(after[:, 0]) & (after[:, 0] > 0.0) & ~crossed[:, 0]
                for row in np.nonzero(turning & free)[0].tolist():  # a dip of the gap
                    t_min = self._bottom(piece, row, ts[j - 1], ts[j])
                    if self._value_at(piece, t_min)[row, 0] <= 0.0:
                        hits.append((row, 0, ts[j - 1], t_min))
                rising = np.isfinite(before[:, 1]) & (before[:, 1] <= 0.0) & (after[:, 1] <= 0.0)
                for row in np.nonzero(turning & rising)[0].tolist():  # a press from F = 0
                    t_deep = self._bottom(piece, row, ts[j - 1], ts[j])
                    if self._value_at(piece, t_deep)[row, 1] > 0.0:
                        hits.append((row, 1, t_deep, ts[j]))
            if hits:
                best: CompliantEvent | None = None
                names = None
                for row, col, lo, hi in hits:
                    t_hit = self._bisect(piece, row, col, lo, hi)
                    if best is None or t_hit < best.t:
                        if names is None:
                            y = piece.state(ts[j - 1])
                            names = self.compliance.pair_names(y[: self.N], y[self.N : 2 * self.N])
                        best = CompliantEvent(t_hit, COMPLIANT_EVENTS[col], *names[row])
                return best
            before = after
        return None

    def _force_rates(
        self, piece: Any, t: float, values: np.ndarray, step: float
    ) -> np.ndarray | None:
        """The rate (N/s) of each pressing pair's force at ``t`` (NaN elsewhere), or None.

        A one-sided difference over ``step`` (s; negative: backwards) of the
        release values ``values[:, 1]`` at ``t``: only its sign is used, and
        only away from the force's turning points (where it is least, the
        force is evaluated itself). None when no pair presses.
        """
        force = values[:, 1]
        pressing = np.isfinite(force)
        if not pressing.any():
            return None
        other = self._value_at(piece, t + step)[:, 1]
        rates = np.full(len(force), math.nan)
        rates[pressing] = (other[pressing] - force[pressing]) / step
        return rates

    def _force_low(self, piece: Any, row: int, lo: float, hi: float, step: float) -> float | None:
        """A time in ``(lo, hi)`` (s) where the force of ``row`` is ≤ 0, or None.

        The force is positive at both ends, falling at ``lo`` and rising at
        ``hi``: its least value is where its rate turns, bisected on the
        rate's sign (differences over ``step``, s, shrunk with the bracket) to
        ``TIME_TOL``; the first value ≤ 0 found on the way ends the search.
        """
        while hi - lo > TIME_TOL:
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:
                break
            here = self._value_at(piece, mid)[row, 1]
            if not here > 0.0:
                return mid
            h = min(step, RATE_SHARE * (hi - lo))
            later = self._value_at(piece, mid + h)[row, 1]
            if later < here:
                lo = mid
            else:
                hi = mid
        here = self._value_at(piece, hi)[row, 1]
        return hi if not here > 0.0 else None

    def _bottom(self, piece: Any, row: int, lo: float, hi: float) -> float:
        """Where the gap of ``row`` is least in ``(lo, hi)`` (s): its rate's root, to ``TIME_TOL``.

        The rate is negative at ``lo`` and positive at ``hi``. For a pair
        that does not press, while the gap is below 0 the row holds the force
        instead and its rate is NaN, read as positive (the gap has passed its
        first root, which is all the caller needs).
        """
        while hi - lo > TIME_TOL:
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:
                break
            if self._value_at(piece, mid)[row, 4] < 0.0:
                lo = mid
            else:
                hi = mid
        return hi

    def _bisect(self, piece: Any, row: int, col: int, lo: float, hi: float) -> float:
        """The first time (s) in ``(lo, hi]`` where value ``(row, col)`` is ≤ 0, to ``TIME_TOL``."""
        while hi - lo > TIME_TOL:
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:
                break
            if self._value_at(piece, mid)[row, col] > 0.0:
                lo = mid
            else:
                hi = mid
        return hi

    def emit(self, out: Any, found: CompliantEvent) -> None:
        """The event row of ``found`` (no impact: the velocities do not jump).

        A ``touch`` starts the contact's measures; its ``release`` reports
        them: ``normal_impulse`` = ∫F dt (N·s), ``peak_force`` (N) and the
        contact time in ``message``.
        """
        body, other = found.key
        if found.kind in ("touch", "release"):  # the next phase's start keeps its side
            self._settled = (found.t, found.kind, found.pair)
        if found.kind in ("stick", "slip"):  # a wheel on a compliant feature changes mode
            out.events.append(Event(t=found.t, type=found.kind, body=body, other=other))
            return
        if found.kind == "touch":
            self._measures[found.key] = [found.t, 0.0, 0.0]
            out.events.append(Event(t=found.t, type="touch", body=body, other=other))
            return
        t_touch, impulse, peak = self._measures.pop(found.key, [math.nan, 0.0, 0.0])
        out.events.append(
            Event(
                t=found.t,
                type="release",
                body=body,
                other=other,
                normal_impulse=float(impulse),
                peak_force=float(peak),
                message=f"contact time {found.t - t_touch:.12g} s, peak force {peak:.12g} N",
            )
        )
