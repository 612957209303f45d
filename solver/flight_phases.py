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
(:meth:`solver.event_handling.HandlingMixin._newton_single`, called through
:meth:`~solver.event_handling.HandlingMixin._impact`: the same frames,
events and Zeno bookkeeping), without the contact problem and projection
that find nothing to do there. Any other event goes to
:meth:`~solver.event_handling.HandlingMixin._handle`. Event times and states
agree with the general path's to rounding: the horizon cuts it leaves out
restart the parabola from a rounded state (tests compare both paths).
"""

from __future__ import annotations

import math

import numpy as np

from solver.event_location import CLEAR_MARGIN, FoundEvent
from solver.event_tolerances import (
    GAP_TOL,
    IMPACT_SPEED_TOL,
    PENETRATION_TOL,
    REST_SPEED_TOL,
)
from solver.flight import Parabola
from solver.frames import StepOutput
from solver.gap_closing import clear_rows, closing_times, lowest_value
from solver.gap_set import FEW_PAIRS, GapSet

FAST_FLIGHT_PHASES = True
"""Whether qualifying phases take this path (the tests compare it with the general one)."""

DECISION_MARGIN = 1e-6
"""Relative margin (1) kept from a speed threshold of the general handling; closer, it decides."""
REGION_MARGIN = 1e-9
"""Share (1) of a segment's length kept from its ends by an active contact proved inside it."""


class FlightPhaseMixin:
    """Free flights of disks under gravity (part of :class:`solver.events.EventDrivenStepper`)."""

    fast_flight_phases: bool = FAST_FLIGHT_PHASES

    def _flight_phase(self, out: StepOutput, gaps: GapSet) -> bool:
        """Run this phase on the fast path if it qualifies; False (nothing done) otherwise."""
        if (
            not self.fast_flight_phases
            or not self._flight
            or self._stalled
            or not self._pairs_complete()
        ):
            return False
        t0, q, v = self.t, self._q, self._v
        if self._active:
            constant = self._constant_motion()
            if constant is None:
                return False
            a, power = constant
        else:
            a, power = self._free_accelerations(t0, q, v), np.zeros(2)
        span = self.t_end - t0
        if len(gaps):
            tau, unresolved = closing_times(gaps, q, v, a, span)
            n = int(tau.argmin())
            hit = math.isfinite(tau[n])
            end = t0 + float(tau[n]) if hit else self.t_end
            rows = np.nonzero(unresolved)[0].tolist()
            if rows and not all(clear_rows(gaps, rows, q, v, a, end - t0, CLEAR_MARGIN)):
                return False  # a gap that is no quadratic may close: the sampled search
            if not self._flight_clear(gaps, rows, q, v, a, end - t0):
                return False  # the proof fails: the general check for missed closings
        elif self._active:
            n, hit, end = -1, False, self.t_end
        else:
            return False
        if self._active and not self._contacts_hold(a, end - t0):
            return False
        flight = Parabola(t0, q, v, a, self._work, power)
        if self._next_sample * self.dt_out <= min(end, self.t_end * (1 + 1e-12)):
            self._emit_samples(out, flight.state, end, inclusive=not hit, states=flight.states)
        self._set_y(flight.state(end))
        self._advance_clock(end)
        if not hit:
            self._project()
            self._finish(out)
            return True
        pair = gaps.pairs[n]
        if self._active or self._stalled or not self._flight_impact(out, gaps, n, a):
            self._handle(out, FoundEvent(end, "gap", pair.key))
        return True

    def _flight_clear(
        self,
        gaps: GapSet,
        proved: list[int],
        q: np.ndarray,
        v: np.ndarray,
        a: np.ndarray,
        duration: float,
    ) -> bool:
        """:func:`solver.gap_closing.flight_clear`, the rows in ``proved`` taken as proved.

        Those rows were proved with the clearance ``CLEAR_MARGIN``; the proof
        without it (a smaller reach to keep) holds for them too, so the answer
        is flight_clear's without proving them twice.
        """
        if gaps.ordered or len(gaps) > FEW_PAIRS:
            return False
        done = set(proved)
        rest = [n for n in range(len(gaps)) if n not in done]
        return all(clear_rows(gaps, rest, q, v, a, duration))

    def _contacts_hold(self, a: np.ndarray, duration: float) -> bool:
        """Whether no active contact's event function can change sign in the phase.

        The phase's contact forces are constant (every active contact a disk on
        a segment, :meth:`solver.flight.FlightMixin._constant_motion`), so the
        functions of :meth:`solver.event_location.LocationMixin._active_values`
        are: λ constant (no ``liftoff`` while positive), the friction test
        constant for a sticking or frictionless contact (a sliding one's slip
        speed changes: not proved here), and ``inside`` while the centre's
        projection on the segment, a quadratic in time along the parabola
        ``q + v τ + ½ a τ²`` (``a`` in SI units, ``duration`` in s), stays within
        ``(REGION_MARGIN, 1 − REGION_MARGIN)`` of the segment's length.
        """
        forces = self._phase_forces
        scale = 1e-9 * (1.0 + float(np.max(np.abs(forces.lam))))
        c = self.system.centres(self._q).tolist()
        cd = self.system.centre_velocities(self._v).tolist()
        ca = self.system.centre_velocities(a).tolist()
        for k, (pair, mode) in enumerate(self._active.values()):
            lam = float(forces.lam[k])
            if not lam + scale > 0.0:
                return False
            mu = pair.friction
            if mu > 0.0 and not (
                mode == "stick"
                and mu * lam - abs(float(forces.friction_force[k])) + mu * scale > 0.0
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

    def _flight_impact(self, out: StepOutput, gaps: GapSet, row: int, a: np.ndarray) -> bool:
        """The impact at the closing of ``gaps`` row ``row`` if it is the simple one; else False.

        What :meth:`solver.event_handling.HandlingMixin._settle` does at this
        instant when its only closed contact is that pair, frictionless,
        approaching and not grazing (``a`` the flight's accelerations), and
        separating after the impact: one :meth:`~solver.event_handling.HandlingMixin._impact`,
        no active contact, then the Zeno check. Speeds within
        ``DECISION_MARGIN`` of a threshold are left to the general handling.
        Nothing is changed when False is returned.
        """
        closed = [-PENETRATION_TOL <= g <= GAP_TOL for g in gaps.gaps(self._q, band=True).tolist()]
        if not closed[row] or sum(closed) != 1:
            return False
        pair = gaps.pairs[row]
        if pair.friction != 0.0:
            return False
        e = self._kin.evaluate(pair, self._q, self._v)
        if not e.inside or not e.G_local.any():
            return False
        u = e.u_n
        if not u < -IMPACT_SPEED_TOL * (1.0 + DECISION_MARGIN):
            return False
        a_n = float(e.G @ a) + e.gamma_n
        if a_n > 0.0 and u * u <= 2.0 * a_n * GAP_TOL * (1.0 + DECISION_MARGIN):
            return False  # about grazing: the general handling decides
        u_plus = -e.restitution * u  # Newton's law
        at_rest = max(IMPACT_SPEED_TOL, REST_SPEED_TOL)
        if not u_plus > at_rest * (1.0 + DECISION_MARGIN) + 1e-9 * abs(u):
            return False  # it may stay closed: the contact problem decides
        self._impact(out, [e])
        self._active = {}
        self._phase_forces = None
        self._check_zeno(out, [])
        return True
