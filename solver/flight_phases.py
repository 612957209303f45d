"""Free flights of disks under constant forces, carried past the general scan (a fast path).

A phase qualifies by its structure, never by its name: a scene without
springs or forcing (the applied force is constant gravity), no active
contact, the clock advancing (no repeated instant), and candidate pairs
that are every pair of the scene, so that no reach needs watching. Every
disk centre then moves on one parabola up to the end of the run. The
general phase cuts that parabola at a horizon (the time in which no centre
can leave the broad-phase margin) and starts a new phase there, for nothing
when the candidates are every pair; this path takes the whole flight at
once:

* the closing times of the watched gaps are the roots of their quadratics
  (:func:`solver.gap_closing.closing_times`, the general scan's function
  over the longer interval), the others (a vertex or another disk under
  acceleration, an arc) must be proved clear up to the closing
  (:func:`solver.gap_closing.clear_rows`, as the general scan does);
* the check for missed closings must be the closed-form proof
  (:func:`solver.gap_closing.flight_clear`, the rows just proved not
  proved again);
* output samples on the way, and the state where the flight ends, are those
  of the general phase's :class:`solver.flight.Parabola`.

Where any of these would need the general phase's sampled search, nothing
is done and the general phase runs. The impact that follows is resolved here
when it is the simple one: one closed contact (every other gap outside the
contact band), inside its feature, frictionless, approaching faster than
``IMPACT_SPEED_TOL`` and not grazing, and separating after it faster than
the resting speed. It is the scene's law in closed form, Newton's
(:meth:`solver.impact_rules.ImpactRules.newton_single`, called through
:meth:`~solver.event_handling.EventHandler.impact`: the same frames,
events and Zeno bookkeeping), without the contact problem and projection
that find nothing to do there. Any other event goes to
:meth:`~solver.event_handling.EventHandler.handle`. Event times and states
agree with the general path's to rounding: the horizon cuts it leaves out
restart the parabola from a rounded state (tests compare both paths).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cached_property
from operator import add, mul
from typing import Any, NamedTuple

import numpy as np

from solver.contact_pairs import SEGMENT, ContactPair
from solver.event_location import CLEAR_MARGIN, FoundEvent
from solver.event_tolerances import (
    GAP_TOL,
    IMPACT_SPEED_TOL,
    PENETRATION_TOL,
    REST_SPEED_TOL,
    ZENO_HEIGHT,
)
from solver.flight import Parabola
from solver.frames import StepOutput
from solver.gap_closing import clear_rows, closing_times
from solver.gap_kernel import compiled_closing_rows, lowest_value
from solver.gap_set import FEW_PAIRS, GapSet
from solver.geometry import Segment
from solver.impact import ImpactStage
from solver.motion_state import MotionState, Setup

FAST_FLIGHT_PHASES = True
"""Whether qualifying phases take this path (the tests compare it with the general one)."""

DECISION_MARGIN = 1e-6
"""Relative margin (1) kept from a speed threshold of the general handling; closer, it decides."""
REGION_MARGIN = 1e-9
"""Share (1) of a segment's length kept from its ends by an active contact proved inside it."""
TRAIN_MARGIN = 1e-6
"""Relative margin (1) on the bounds of a bounce train (:meth:`FlightPhase._bounce_train`)."""


class BounceTrain(NamedTuple):
    """A lone disk's bounces on a segment, proved clear of every other pair.

    Made by :meth:`FlightPhase._bounce_train`.
    """

    gaps: GapSet
    """The candidate pairs the train was proved with."""
    row: int
    """The bouncing pair's row in ``gaps``."""
    segment: tuple[float, ...]
    """Its segment's numbers ``(ax, ay, ex, ey, |e|², |e|)`` (``DiskKinematics.gap_tables``)
    and the disk's radius (m)."""
    pair: ContactPair
    """The bouncing pair."""
    dofs: np.ndarray
    """The disk's coordinates (``System.pair_dofs``)."""
    rail_y: float | None
    """A bead's rail height (m); None for a wheel."""
    acceleration: tuple[float, float]
    """The disk centre's constant acceleration (m/s²)."""
    clear: list[int]
    """The other rows: proved to stay above ``GAP_TOL``."""
    cover: tuple[float, float, float]
    """A circle ``(x, y, radius)`` (m) holding the disk centre's whole motion in the train."""

    def motion(self, q: list[float], v: list[float]) -> tuple[tuple[float, float], ...]:
        """The disk's centre (m) and its velocity (m/s), as :meth:`System.centres` reads them."""
        x = self.dofs[0]
        if self.rail_y is None:
            return (q[x], q[x + 1]), (v[x], v[x + 1])
        return (q[x], self.rail_y), (v[x], 0.0)


class FlightPhase:
    """Free flights of disks under gravity and their bounce trains (a phase kind of the stepper)."""

    fast_flight_phases: bool = FAST_FLIGHT_PHASES
    _train: BounceTrain | None = None
    """The bounce train the next flight belongs to (:meth:`_bounce_train`), if any."""
    _bounced: np.ndarray | None = None
    """The velocities :meth:`_newton_impact` left last (to see that nothing changed them)."""
    _kept_candidates: BounceTrain | None = None
    """The train whose flights keep the candidate pairs as they are (:meth:`_keeps_candidates`)."""

    def __init__(
        self,
        setup: Setup,
        motion: MotionState,
        pairs: Any,
        smooth: Any,
        recorder: Any,
        handler: Any,
        zeno: Any,
    ) -> None:
        self.s, self.m, self.pairs, self.smooth = setup, motion, pairs, smooth
        self.recorder, self.handler, self.zeno = recorder, handler, zeno
        # a flight whose samples fill more than a block: the samples' next block and the
        # flight's end (resume), taken up by the next step; ``reached`` its last sample, s
        self.pending: tuple[Callable[[StepOutput], bool], Callable[[StepOutput], None]] | None
        self.pending = None
        self.reached = -math.inf

    def train_phase(self, out: StepOutput) -> bool:
        """The next flight of a proved bounce train and its bounce; False (nothing done) if none.

        The train (:meth:`_bounce_train`) holds while the velocities are those
        its last bounce left (:meth:`_newton_impact`), no contact is active and
        the candidate pairs are those it was proved with: then only the
        bouncing pair can close, and its closing time is
        :func:`solver.gap_kernel.segment_closing` of the disk's centre,
        velocity and (constant) acceleration, read from the coordinates as
        :meth:`solver.system.System.centres` reads them. The flight's end is
        :meth:`_flight_phase`'s (:meth:`_end_flight`).
        """
        train = self._train
        if (
            train is None
            or self.m.v is not self._bounced
            or self.m.active
            or self.m.stalled
            or not self.fast_flight_phases
        ):
            return False
        gaps = train.gaps
        if train is not self._kept_candidates:
            if (
                self.pairs.all_candidates() is not gaps
            ):  # with nothing active, the phase's candidates
                return False
            if self._keeps_candidates(train):
                self._kept_candidates = train
        first = self._train_closing(train)
        if first is None:
            return False  # a centre on the segment's line: the flight phase decides
        self._train = None
        hit = math.isfinite(first)
        a = self.smooth.free_accelerations(self.m.t, None, None)
        end = self.m.t + first if hit else self.s.t_end
        self._end_flight(out, gaps, train.row, a, None, end, hit, train.clear, train)
        return True

    def _train_closing(self, train: BounceTrain) -> float | None:
        """When (s) the train's next flight closes on its segment: the compiled
        :func:`solver.gap_kernel.segment_closing`; None for a centre on its line."""
        (x, y), (vx, vy) = train.motion(self.m.q.tolist(), self.m.v.tolist())
        wx, wy = train.acceleration
        h, on_line = compiled_closing_rows()[0](
            x, y, vx, vy, wx, wy, *train.segment, self.s.t_end - self.m.t, True
        )
        return None if on_line else h

    def _keeps_candidates(self, train: BounceTrain) -> bool:
        """Whether :meth:`~solver.candidates.CandidateSearch.all_candidates` keeps its pairs.

        For one disk it returns the pairs held, and changes nothing, while the
        centre is within ``margin/8`` of where they were searched; the centre
        stays in the train's cover (at every flight's start within the
        contact band of the first bounce's height, far inside the cover's
        ``PENETRATION_TOL``-wide rim and the ``GAP_TOL``-wide slack taken
        here). Then the train's flights need not ask.
        """
        (x0, y0), (x, y, radius) = self.pairs.pairs_found_at[0].tolist(), train.cover
        slack = 10.0 * GAP_TOL + 1e-9 * self.pairs.margin
        return math.hypot(x - x0, y - y0) + radius + slack < 0.125 * self.pairs.margin

    def flight_phase(self, out: StepOutput, gaps: GapSet) -> bool:
        """Run this phase on the fast path if it qualifies; False (nothing done) otherwise."""
        self._train = None
        if (
            not self.fast_flight_phases
            or not self.s.flight
            or self.m.stalled
            or not self.pairs.pairs_complete()
        ):
            return False
        t0, q, v = self.m.t, self.m.q, self.m.v
        if self.m.active:
            constant = self.smooth.constant_motion()
            if constant is None:
                return False
            a, power = constant
        else:
            a, power = self.smooth.free_accelerations(t0, q, v), None
        span = self.s.t_end - t0
        if len(gaps):
            tau_array, state = closing_times(gaps, q, v, a, span)
            tau = tau_array.tolist()
            first = min(tau)
            n = tau.index(first)  # the first of equal times, as argmin
            hit = math.isfinite(first)
            end = t0 + first if hit else self.s.t_end
            rows = (state == 1).nonzero()[0].tolist()
            system = self.s.system
            c, cd, ca = system.centres(q), system.centre_velocities(v), system.centre_velocities(a)
            if rows and not all(clear_rows(gaps, rows, c, cd, ca, end - t0, CLEAR_MARGIN).tolist()):
                return False  # a gap that is no quadratic may close: the sampled search
            if not self._flight_clear(gaps, rows, c, cd, ca, end - t0):
                return False  # the proof fails: the general check for missed closings
            # gaps that stay above GAP_TOL up to the closing: those just proved, and those
            # closing_times found out of their reach
            clear = rows + (state == 2).nonzero()[0].tolist()
        elif self.m.active:
            n, hit, end, clear = -1, False, self.s.t_end, []
        else:
            return False
        if self.m.active and not self._contacts_hold(a, end - t0):
            return False
        self._end_flight(out, gaps, n, a, power, end, hit, clear, None)
        return True

    def _end_flight(
        self,
        out: StepOutput,
        gaps: GapSet,
        n: int,
        a: np.ndarray,
        power: np.ndarray | None,
        end: float,
        hit: bool,
        clear: list[int],
        train: BounceTrain | None,
    ) -> None:
        """Fly to ``end`` (s), the closing of ``gaps`` row ``n`` (``hit``) or the run's end.

        Output samples on the way; the state at ``end``; at a closing, the
        simple impact (:meth:`_flight_impact`, ``clear`` the rows proved to
        stay above ``GAP_TOL``) or the general handling. After a Newton impact
        on a segment that changed nothing else, the bounce train it starts or
        continues (``train``) is kept for the next flight.
        """
        t0 = self.m.t
        if self.recorder.next_sample_at <= min(end, self.s.t_end * (1 + 1e-12)):
            flight = Parabola(
                t0, self.m.q, self.m.v, a, self.m.work, np.zeros(2) if power is None else power
            )

            def samples(out: StepOutput) -> bool:  # a block of frames at most, then the step ends
                return self.recorder.emit_samples(
                    out, flight.state, end, not hit, flight.states, -math.inf, rows_alone=True
                )

            if not samples(out):
                self.reached = out.frames[-1].t
                self.pending = (
                    samples,
                    lambda out: self._land(out, gaps, n, a, power, end, hit, clear, train),
                )
                return
        self._land(out, gaps, n, a, power, end, hit, clear, train)

    def resume(self, out: StepOutput) -> None:
        """Go on with the flight whose samples were cut (:attr:`pending`): a block more, or
        the last ones and the flight's end."""
        samples, land = self.pending
        if samples(out):
            self.pending = None
            land(out)
        else:
            self.reached = out.frames[-1].t

    def _land(
        self,
        out: StepOutput,
        gaps: GapSet,
        n: int,
        a: np.ndarray,
        power: np.ndarray | None,
        end: float,
        hit: bool,
        clear: list[int],
        train: BounceTrain | None,
    ) -> None:
        """:meth:`_end_flight` after its samples: the state at ``end``, and there the impact."""
        q, v = self._fly(a, power, end)
        self.m.advance_clock(end)
        if not hit:
            self.handler.project()
            self.recorder.finish(out)
            return
        if (
            self.m.active
            or self.m.stalled
            or not self._flight_impact(out, gaps, n, a, clear, train, q, v)
        ):
            self.handler.handle(out, FoundEvent(end, "gap", gaps.pairs[n].key))
        elif self.m.v is self._bounced:  # Newton's impact on a segment, the Zeno check did nothing
            self._train = train if train is not None else self._bounce_train(gaps, n)

    def _bounce_train(self, gaps: GapSet, row: int) -> BounceTrain | None:
        """The train of bounces of the lone disk on the segment of ``gaps`` row ``row``, if clear.

        Just after a frictionless impact on a straight segment, with the
        normal acceleration ``a_n < 0`` pressing the disk back and restitution
        ``e < 1``, every later flight rises at most ``H = u²/(2|a_n|)`` above
        the impact's centre (``u`` the separation speed; each impact returns
        ``e`` times the speed it came with) and all of them together last at
        most ``T = 2u/((1 − e)|a_n|)``; along the segment the centre moves at
        most ``D = |v_t| T + ½ |a_t| T²`` (a frictionless impact leaves the
        tangential velocity as it is). When the circle around that box keeps
        every other pair's feature more than ``GAP_TOL`` (``CLEAR_MARGIN`` less
        ``PENETRATION_TOL``) away (:func:`solver.gap_closing.pair_clear` of a
        point at rest) and the box stays inside the segment's region, every
        flight of the train closes on this segment first and no other gap comes
        within ``GAP_TOL``: the flights that follow need only this pair's
        closing time (the numbers the full scan gives it). Returns the train
        or None (one disk only; the bounds take a relative margin of
        ``TRAIN_MARGIN``).
        """
        if self.s.system.n_disks != 1 or gaps.arc_rows or len(gaps) > FEW_PAIRS:
            return None
        pair = gaps.pairs[row]
        e = pair.restitution
        kin, k, f = self.s.kin, int(gaps.first[row]), int(gaps.pairs.feature[row])
        if gaps.second[row] >= 0 or kin.feature_kind[f] != SEGMENT or not 0.0 <= e < 1.0:
            return None
        ax, ay, ex, ey, length2, length = kin.gap_tables[1][f].tolist()
        segment = (ax, ay, ex, ey, length2, length, float(kin.radii[k]))
        scale = length if length > 0.0 else 1.0
        nx, ny = -ey / scale, ex / scale
        system = self.s.system
        (cx, cy), (vx, vy), (gx, gy) = (
            system.centres(self.m.q).tolist()[k],
            system.centre_velocities(self.m.v).tolist()[k],
            system.centre_velocities(self.smooth.free_accelerations(self.m.t, None, None)).tolist()[
                k
            ],
        )
        side = 1.0 if (cx - ax) * nx + (cy - ay) * ny > 0.0 else -1.0
        mx, my = side * nx, side * ny
        u, a_n = mx * vx + my * vy, mx * gx + my * gy
        if not (u > 0.0 and a_n < 0.0):
            return None
        grow = 1.0 + TRAIN_MARGIN
        T = grow * 2.0 * u / ((1.0 - e) * -a_n)
        H = grow * u * u / (2.0 * -a_n)
        tx, ty = ex / length, ey / length
        D = grow * (abs(tx * vx + ty * vy) * T + 0.5 * abs(tx * gx + ty * gy) * T * T)
        s = ((cx - ax) * ex + (cy - ay) * ey) / length2
        if not (s - D / length > REGION_MARGIN and s + D / length < 1.0 - REGION_MARGIN):
            return None
        # the circle around the box: centre half way up, through its corners
        ox, oy = cx + 0.5 * H * mx, cy + 0.5 * H * my
        radius = grow * math.hypot(D, 0.5 * H) + PENETRATION_TOL
        clear = [m for m in range(len(gaps)) if m != row]
        # the cover, a point at rest: every other pair proved clear of it by its radius
        at_rest, still = np.array([[ox, oy]]), np.zeros((1, 2))
        if not all(
            clear_rows(gaps, clear, at_rest, still, still, 0.0, radius + CLEAR_MARGIN).tolist()
        ):
            return None
        dofs = system.pair_dofs(k, None)
        rail_y = None if len(dofs) == 3 else cy
        cover = (ox, oy, radius)
        return BounceTrain(gaps, row, segment, pair, dofs, rail_y, (gx, gy), clear, cover)

    def _fly(
        self, a: np.ndarray, power: np.ndarray | None, t: float
    ) -> tuple[list[float], list[float]]:
        """Move the state along the flight to time ``t`` (s): :meth:`Parabola.state`'s numbers.

        The same operations in the same order as
        :meth:`solver.flight.Parabola.state` (``q + dt (v + ½ dt a)``,
        ``v + dt a``, the friction work ``dt (P0 + ½ dt P1)`` added to the
        work terms, ``power`` None for none), on floats: the same bits,
        without the arrays' fixed cost per operation for a few coordinates.
        Without friction power over a finite ``dt >= 0`` the work terms each
        take ``+ 0.0``: the same bits for entries whose sign bit is clear, and
        the work array is then kept as it is (it is never written in place).
        Returns the new coordinates and velocities as lists.
        """
        dt = t - self.m.t
        half = 0.5 * dt
        q, v, accel = self.m.q.tolist(), self.m.v.tolist(), a.tolist()
        p0, p1 = (0.0, 0.0) if power is None else power.tolist()
        friction = dt * (p0 + half * p1)
        w0, w1, w2 = self.m.work.tolist()
        q = [x + dt * (u + half * g) for x, u, g in zip(q, v, accel, strict=True)]
        v = [u + dt * g for u, g in zip(v, accel, strict=True)]
        self.m.q, self.m.v = np.array(q), np.array(v)
        sign = math.copysign
        if not (
            power is None
            and 0.0 <= dt < math.inf  # friction = dt (0 + ½ dt 0) = +0.0
            and sign(1.0, w0) + sign(1.0, w1) + sign(1.0, w2) == 3.0  # no −0.0, no w < 0
        ):
            self.m.work = np.array((w0 + friction, w1 + 0.0, w2 + 0.0))
        return q, v

    def _flight_clear(
        self,
        gaps: GapSet,
        proved: list[int],
        c: np.ndarray,
        cd: np.ndarray,
        ca: np.ndarray,
        duration: float,
    ) -> bool:
        """:func:`solver.gap_closing.flight_clear`, the rows in ``proved`` taken as proved.

        Those rows were proved with the clearance ``CLEAR_MARGIN``; the proof
        without it (a smaller reach to keep) holds for them too, so the answer
        is flight_clear's without proving them twice. ``c``, ``cd``, ``ca``:
        the disk centres (m), velocities (m/s) and accelerations (m/s²), (K, 2);
        ``duration`` in s.
        """
        if gaps.ordered or len(gaps) > FEW_PAIRS:
            return False
        done = set(proved)
        rest = [n for n in range(len(gaps)) if n not in done]
        return all(clear_rows(gaps, rest, c, cd, ca, duration).tolist())

    def _contacts_hold(self, a: np.ndarray, duration: float) -> bool:
        """Whether no active contact's event function can change sign in the phase.

        The phase's contact forces are constant (every active contact a disk on
        a segment, :meth:`solver.flight.SmoothMotion.constant_motion`), so the
        functions of :meth:`solver.event_location.EventLocator.active_values`
        are: λ constant (no ``liftoff`` while positive), the friction test
        constant for a sticking or frictionless contact (a sliding one's slip
        speed changes: not proved here), and ``inside`` while the centre's
        projection on the segment, a quadratic in time along the parabola
        ``q + v τ + ½ a τ²`` (``a`` in SI units, ``duration`` in s), stays within
        ``(REGION_MARGIN, 1 − REGION_MARGIN)`` of the segment's length.
        """
        forces = self.m.phase_forces
        lam = forces.lam.tolist()
        # the largest |λ| (N): numpy's max of one element is that element (NaN too)
        largest = abs(lam[0]) if len(lam) == 1 else float(np.max(np.abs(forces.lam)))
        scale = 1e-9 * (1.0 + largest)
        c = self.s.system.centres(self.m.q).tolist()
        cd = self.s.system.centre_velocities(self.m.v).tolist()
        ca = self.s.system.centre_velocities(a).tolist()
        for k, (pair, mode) in enumerate(self.m.active.values()):
            lam_k = lam[k]
            if not lam_k + scale > 0.0:
                return False
            mu = pair.friction
            if mu > 0.0 and not (
                mode == "stick"
                and mu * lam_k - abs(float(forces.friction_force[k])) + mu * scale > 0.0
            ):
                return False
            (ax, ay), (bx, by) = pair.feature.a, pair.feature.b
            ex, ey = bx - ax, by - ay
            length2 = ex * ex + ey * ey
            (x, y), (vx, vy), (wx, wy) = c[pair.i], cd[pair.i], ca[pair.i]
            s0 = ((x - ax) * ex + (y - ay) * ey) / length2
            s1 = (vx * ex + vy * ey) / length2
            s2 = 0.5 * (wx * ex + wy * ey) / length2
            if not (
                lowest_value(s0 - REGION_MARGIN, s1, s2, duration) > 0.0
                and lowest_value(1.0 - REGION_MARGIN - s0, -s1, -s2, duration) > 0.0
            ):
                return False
        return True

    def _flight_impact(
        self,
        out: StepOutput,
        gaps: GapSet,
        row: int,
        a: np.ndarray,
        clear: list[int],
        train: BounceTrain | None = None,
        q: list[float] | None = None,
        v: list[float] | None = None,
    ) -> bool:
        """The impact at the closing of ``gaps`` row ``row`` if it is the simple one; else False.

        What :meth:`solver.event_handling.EventHandler.settle` does at this
        instant when its only closed contact is that pair, frictionless,
        approaching and not grazing (``a`` the flight's accelerations), and
        separating after the impact: one impact by Newton's law, no active
        contact, then the Zeno check. A disk inside a segment's region takes
        :meth:`_newton_impact` (its normal from the segment's nearest point,
        as the pair's evaluation finds it); any other pair is evaluated and
        takes :meth:`~solver.event_handling.EventHandler.impact`. Speeds
        within ``DECISION_MARGIN`` of a threshold are left to the general
        handling. The rows of ``clear`` were proved to stay above ``GAP_TOL``
        (``CLEAR_MARGIN``) up to this instant: when they are all the others,
        only this pair's gap is looked at. The bounce of a ``train`` takes its
        pair and disk from it, at the coordinates ``q`` and velocities ``v``
        (lists). Nothing is changed when False is returned.
        """
        if train is not None:
            pair, dofs = train.pair, train.dofs
            c, cd = train.motion(q, v)
            G, u, a_n, gap = self._segment_normal_of(pair, len(dofs), c, cd, train.acceleration)
        else:
            pair = gaps.pairs[row]
            G = None
            if isinstance(pair.feature, Segment):
                G, dofs, u, a_n, gap = self._segment_normal(pair, a)
        if pair.friction != 0.0:
            return False
        contact = None
        if G is not None and len(clear) == len(gaps) - 1 and row not in clear:
            if not -PENETRATION_TOL <= gap <= GAP_TOL:
                return False
        else:
            band = gaps.gaps(self.m.q, band=True).tolist()
            closed = [-PENETRATION_TOL <= g <= GAP_TOL for g in band]
            if not closed[row] or sum(closed) != 1:
                return False
        if G is None:
            contact = self.s.kin.evaluate(pair, self.m.q, self.m.v)
            if not contact.inside or not any(contact.G_local.tolist()):
                return False
            u, a_n = contact.u_n, float(contact.G @ a) + contact.gamma_n
        if not u < -IMPACT_SPEED_TOL * (1.0 + DECISION_MARGIN):
            return False
        if a_n > 0.0 and u * u <= 2.0 * a_n * GAP_TOL * (1.0 + DECISION_MARGIN):
            return False  # about grazing: the general handling decides
        u_plus = -pair.restitution * u  # Newton's law
        at_rest = max(IMPACT_SPEED_TOL, REST_SPEED_TOL)
        if not u_plus > at_rest * (1.0 + DECISION_MARGIN) + 1e-9 * abs(u):
            return False  # it may stay closed: the contact problem decides
        if contact is None:
            self._newton_impact(out, pair, G, dofs, v)
        else:
            self.handler.impact(out, [contact])
        self.m.active = {}
        self.m.phase_forces = None
        if self.zeno.geometric:
            # _check_zeno ends the bounces only once they rise less than ZENO_HEIGHT
            # (u⁺²/(2|a_n|), a_n the same before and after the impact)
            if a_n < 0.0 and u_plus * u_plus / (2.0 * -a_n) < ZENO_HEIGHT * (1.0 + DECISION_MARGIN):
                self.zeno.check_zeno(out, [])
        elif self.zeno.shrinking:
            self.zeno.check_zeno(out, [])
        return True

    def _segment_normal(
        self, pair: ContactPair, a: np.ndarray
    ) -> tuple[np.ndarray | None, np.ndarray, float, float, float]:
        """:meth:`_segment_normal_of` the pair's disk at the state, and the disk's coordinates.

        ``a``: the accelerations of the coordinates (SI units).
        """
        system = self.s.system
        dofs = system.pair_dofs(pair.i, None)
        centre, velocity, _ = system.disk_motion(self.m.q, self.m.v, pair.i)
        # a bead's centre does not accelerate across its rail
        ca = (a[dofs[0]], a[dofs[1]] if len(dofs) == 3 else 0.0)
        G, u, a_n, gap = self._segment_normal_of(
            pair, len(dofs), centre.tolist(), velocity.tolist(), ca
        )
        return G, dofs, u, a_n, gap

    def _segment_normal_of(
        self,
        pair: ContactPair,
        dofs: int,
        c: tuple[float, float],
        cd: tuple[float, float],
        ca: tuple[float, float],
    ) -> tuple[np.ndarray | None, float, float, float]:
        """``G_local``, normal speed (m/s), acceleration (m/s²) and gap (m) of a disk on a segment.

        The normal as :meth:`solver.geometry.Segment.nearest` forms it (the
        same operations on floats) and ``G_local`` as
        :meth:`solver.system.System.generalize` fills it, for the disk inside
        the segment's region; the speed and acceleration along the normal
        decide only (the impact forms its own ``G·v``). ``G`` is None when the
        centre is beyond the segment's ends or on its line: the pair is then
        evaluated in full. The gap is the centre's distance less the radius
        (``math.hypot``: within a rounding of the gap set's). ``dofs``: how
        many coordinates the disk has (3 a wheel, 1 a bead); ``c``, ``cd``,
        ``ca``: its centre (m), velocity (m/s) and acceleration (m/s²).
        """
        s, _, _, d, nx, ny = pair.feature.foot(*c)
        if not (0.0 < s < 1.0 and d > 0.0):
            return None, 0.0, 0.0, 0.0
        (vx, vy), (gx, gy) = cd, ca
        G = np.array((1.0 * nx, 1.0 * ny, 0.0) if dofs == 3 else (1.0 * nx,))
        # a straight feature has no curvature term
        gap = d - self.s.kin.radii[pair.i]
        return G, nx * vx + ny * vy, float(nx * gx + ny * gy), float(gap)

    @cached_property
    def _mass_lists(self) -> tuple[list[float], list[float]]:
        """``M⁻¹`` and ``M`` (1/kg or per kg·m², kg or kg·m²) of every coordinate, as lists."""
        return self.s.M_inv.tolist(), self.s.system.M_diag.tolist()

    def _newton_impact(
        self,
        out: StepOutput,
        pair: ContactPair,
        G: np.ndarray,
        dofs: np.ndarray,
        before: list[float] | None = None,
    ) -> None:
        """:meth:`~solver.event_handling.EventHandler.impact` of one frictionless contact.

        ``G`` is the contact's normal Jacobian on its coordinates ``dofs``
        (the evaluation's ``G_local``). The arithmetic of
        :meth:`~solver.impact_rules.ImpactRules.newton_single` (through
        ``_newton_jump`` and ``_jump_direction``), operation for operation,
        without the contact object and the law's result object; the frames,
        the ``impact`` event with its stage record and the Zeno bookkeeping
        are written by :meth:`~solver.event_handling.EventHandler.newton_output`
        as ``_impact`` writes them: the same bits (a test compares both).
        ``before``: the velocities as a list, when the caller has them.
        """
        restitution = pair.restitution
        v_minus = self.m.v  # read only: the stage, frames and event keep copies or this array
        whole = len(dofs) == self.s.N  # the disk is the whole system: dofs = 0, 1, …
        if whole:
            M_inv, M = self._mass_lists
            local = v_minus
        else:
            M_inv, M = self.s.M_inv[dofs].tolist(), self.s.system.M_diag[dofs].tolist()
            local = v_minus[dofs]
        # elementwise products and quotients on floats are the arrays' to the bit (the
        # plain ones by map: no frame per list; the lists have the length of dofs); the
        # dot products stay numpy's (its summation may fuse multiply and add)
        # _jump_direction: M⁻¹G / (GᵀM⁻¹G) and GᵀM⁻¹G (1/kg, or per kg·m²)
        w = list(map(mul, G.tolist(), M_inv))
        dot = G.dot
        k = float(dot(np.array(w)))
        # _newton_jump: u_n⁺ = −e u_n⁻ along that direction
        u = float(dot(local))
        factor = -(1.0 + restitution) * u
        jump = [factor * (x / k) for x in w]
        energy_change = -0.5 * (1.0 - restitution * restitution) * u * u / k
        # _newton_single: the impulse from the momentum balance, one stage
        impulse = float(dot(np.array(list(map(mul, M, jump))))) / float(dot(G))
        grow = 1.0 + restitution
        if whole:
            if before is None:
                before = v_minus.tolist()
            v_plus = np.array(list(map(add, before, jump)))
            plastic = np.array([x + d / grow for x, d in zip(before, jump, strict=True)])
        else:
            dv = np.zeros(self.s.N)
            dv[dofs] = jump
            v_plus = v_minus + dv
            plastic = v_minus + dv / grow
        stage = ImpactStage(
            y=v_minus.copy(), w=plastic, lam=np.array([impulse / grow]), tangent_impulse=np.zeros(1)
        )
        self._bounced = v_plus
        self.handler.newton_output(out, pair, dofs, G, stage, v_plus, impulse, energy_change)
