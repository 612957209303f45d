"""Phases of beads between stops, carried past the general scan (a fast path of the phase loop).

A phase of a linear bead scene qualifies by its structure, never by its
name: no active contact, closed-form motion (:mod:`solver.linear_flow`)
without rest-length springs, candidate pairs that are every pair of the
scene (no reach to watch), every watched gap affine in the coordinates
(:func:`solver.affine_gaps.affine_gaps`: beads against stops across their
rail, beads on one rail; pairs the rails never come near left out) and
every bead on one side of its stops. Its first gap closing is then found
by one call of :func:`solver.stop_closing.first_closing` over the whole
phase (compiled with the ``fast`` extra) instead of a scan of each piece
and the check for missed closings after it; the pieces are still made,
for the output samples and the work integrals, exactly as the general
phase makes them.

The impact that follows is resolved here when it is the simple one: one
closed contact, a bead against a stop, frictionless, approaching faster
than ``IMPACT_SPEED_TOL`` and not grazing, and separating after it faster
than the resting speed — no contact problem, no projection. It is Newton's
law in closed form with the arithmetic of
:meth:`solver.impact_rules.ImpactRules.newton_single`, the same
frames, events and Zeno bookkeeping as :meth:`~solver.event_handling.EventHandler.impact`.
Any other impact goes to :meth:`~solver.event_handling.EventHandler.handle`,
and a phase whose closing the loop leaves undecided (a value within
rounding of a tolerance) to the general scan. Event times agree with the
general scan's to rounding (tests compare both paths).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import numpy as np

from solver.affine_gaps import AffineGaps
from solver.event_location import FoundEvent
from solver.event_tolerances import (
    GAP_TOL,
    IMPACT_SPEED_TOL,
    REST_SPEED_TOL,
)
from solver.frames import StepOutput
from solver.gap_set import GapSet
from solver.impact import ImpactStage
from solver.linear_bead_model import LinearBeadModel
from solver.motion_state import MotionState, Setup
from solver.stop_closing import (
    CLOSING,
    GAUSS_LEGENDRE,
    SUBINTERVALS_PER_RATE,
    UNDECIDED,
    compiled_phase_end,
    samples_due,
)

FAST_STOP_PHASES = True
"""Whether qualifying phases take this path (the tests compare it with the general one)."""


class StopPhase:
    """Phases of beads between stops on the fast path (a phase kind of the event-driven stepper)."""

    fast_stop_phases: bool = FAST_STOP_PHASES

    def __init__(
        self,
        setup: Setup,
        motion: MotionState,
        pairs: Any,
        smooth: Any,
        affine: Any,
        recorder: Any,
        handler: Any,
        zeno: Any,
    ) -> None:
        self.s, self.m, self.pairs, self.smooth, self.affine = setup, motion, pairs, smooth, affine
        self.recorder, self.handler, self.zeno = recorder, handler, zeno
        self._result = np.zeros(6)  # the loop's closing, read at once after each call

    def stop_phase(self, out: StepOutput, gaps: GapSet) -> bool:
        """Run this phase on the fast path if it qualifies; False (nothing done) otherwise."""
        if (
            not self.fast_stop_phases
            or self.m.active
            or self.m.stalled
            or not self.s.closed_form
            or self.smooth.across_spring
            or not len(gaps)
        ):
            return False
        affine = self._stop_gaps(gaps)
        if affine is None:
            return False
        rows = self._dense_rows(affine)
        if rows is None:
            return False
        A, b, b_max = rows
        flow = self.smooth.free_flow()
        if flow is None:
            return False
        loop = self._loop_arguments(flow)
        if loop is None:
            return False
        rate, h, maps, forcing, C = loop
        margin = 1e-13 * (1.0 + float(np.abs(self.m.q).max()) + b_max)  # of the scale (m)
        result = self._result
        row = np.empty(2 * self.s.N + 3)
        # the row is always filled (no sample is "due" to the loop): the state the phase ends
        # in is the same whatever the output grid, which only reads the motion on the way
        status = compiled_phase_end()(
            self.m.t, self.s.t_end, h, rate, self.m.q, self.m.v, *maps, A, b,
            margin, forcing, C, self.m.work, GAUSS_LEGENDRE[0], GAUSS_LEGENDRE[1], math.inf,
            result, row,
        )  # fmt: skip
        if status == UNDECIDED:
            return False
        t_hit = float(result[0]) if status == CLOSING else self.s.t_end
        if samples_due(self.recorder.next_sample_at, t_hit, self.s.t_end):
            # output samples on the way, read from the phase's pieces as the general phase
            # reads them; the sample at t_end is the state the phase ends in (_finish)
            motion = flow.start(self.m.t, self.m.q, self.m.v)
            for piece in self.smooth.linear_pieces(motion, self.smooth.bead_model()):
                end = min(piece.tb, t_hit)
                self.recorder.emit_samples(
                    out, piece.state, end, inclusive=False, states=piece.states
                )
                if end >= t_hit:
                    break
        N = self.s.N
        self.m.q, self.m.v, self.m.work = row[:N], row[N : 2 * N], row[2 * N :]
        self.m.advance_clock(t_hit)
        if status != CLOSING:
            self.handler.project()
            self.recorder.finish(out)
            return True
        k = int(result[1])
        pair = gaps.pairs[int(affine.pair_rows[k])]
        if not self._stop_impact(out, pair, affine, A, k, result.tolist(), margin):
            self.handler.handle(out, FoundEvent(t_hit, "gap", pair.key))
        return True

    def _stop_gaps(self, gaps: GapSet) -> AffineGaps | None:
        """The affine gaps of ``gaps`` if the phase's structure qualifies, kept per watched set.

        Every pair of the scene a candidate (no reach to watch), every watched
        gap affine or out of reach for good, at least one affine.
        """
        kept = self.__dict__.get("_stop_gaps_kept")
        if kept is None or kept[0] is not gaps:
            affine = self.affine.affine(gaps) if self.pairs.pairs_complete() else None
            kept = (gaps, affine if affine is not None and len(affine.first) else None)
            self._stop_gaps_kept = kept
        return kept[1]

    def _dense_rows(self, affine: AffineGaps) -> tuple[np.ndarray, np.ndarray, float] | None:
        """The gaps' rows ``(A, b)`` on the sides of the stops ``q`` is on, ``A`` dense, and
        ``max |b|`` (m); None when a bead's centre is on a stop's line. Kept per rows (the
        sides change only when a bead crosses a stop's line)."""
        A, b, sided = affine.sided_rows(self.m.q)
        kept = self.__dict__.get("_dense_kept")
        if kept is None or kept[0] is not A:
            # the compiled phase reads dense rows (a few beads)
            kept = (A, (A.toarray(), b, float(np.abs(b).max())) if sided else None)
            self._dense_kept = kept
        return kept[1]

    def _loop_arguments(self, flow: Any) -> tuple[Any, ...] | None:
        """What the compiled loop reads of ``flow``: ``(rate, sub-interval, coordinate maps,
        forcing table, damping matrix)``, kept per flow; None without a closed form of the
        loop's kind."""
        kept = self.__dict__.get("_loop_kept")
        if kept is None or kept[0] is not flow:
            rate = flow.max_rate
            maps = flow.coordinate_maps() if rate > 0.0 else None
            loop = None
            if maps is not None:
                forcing, C = self._forcing_table(self.smooth.bead_model())
                loop = (rate, 1.0 / (SUBINTERVALS_PER_RATE * rate), maps, forcing, C)
            kept = (flow, loop)
            self._loop_kept = kept
        return kept[1]

    def _forcing_table(self, model: LinearBeadModel) -> tuple[np.ndarray, np.ndarray]:
        """The model's harmonic forces as rows ``(amplitudes, ω, φ)`` and its damping matrix."""
        kept = self.__dict__.get("_forcing_kept")
        if kept is None or kept[0] is not model:
            forcing = np.array(
                [[*h.amplitude, h.omega, h.phase] for h in model.harmonics], dtype=float
            ).reshape(-1, self.s.N + 2)
            kept = (model, forcing, np.ascontiguousarray(model.C, dtype=float))
            self._forcing_kept = kept
        return kept[1], kept[2]

    def _stop_contact(self, pair: Any, side: float) -> tuple[Any, ...]:
        """A bead–stop pair's contact on one side of the stop, what its impacts need, kept.

        Its normal is along the rail, one per side: the contact's evaluation
        at the first impact on that side holds for all. ``(dofs, G_local,
        restitution, d, 1/m, m)`` with ``d`` the bead's coordinate and ``m``
        its mass (kg).
        """
        known: dict[Hashable, tuple] = self.__dict__.setdefault("_stop_contacts", {})
        entry = known.get((pair.key, side))
        if entry is None:
            e = self.s.kin.evaluate(pair, self.m.q, self.m.v)
            dofs = np.array(e.dofs)
            d = int(dofs[0])
            entry = (
                dofs,
                np.array(e.G_local, dtype=float),
                float(e.restitution),
                d,
                float(self.s.M_inv[d]),
                float(self.s.system.M_diag[d]),
            )
            known[(pair.key, side)] = entry
        return entry

    def _stop_impact(
        self,
        out: StepOutput,
        pair: Any,
        affine: AffineGaps,
        A: np.ndarray,
        row: int,
        closing: list[float],
        margin: float,
    ) -> bool:
        """The impact at a closing of affine gap ``row`` if it is the simple one; False otherwise.

        One bead against a stop, frictionless, no other gap within
        ``GAP_TOL``; ``closing`` is what the loop found of it
        (:func:`solver.stop_closing.phase_end`): its second derivative (m/s²)
        at the closing, the normal acceleration of the motion that led to it,
        the gap and the lowest other gap (m) there. ``margin`` (m) is the
        rounding margin of the coordinates' and stops' scale. Nothing is
        changed when False is returned.
        """
        if pair.j >= 0 or pair.friction != 0.0 or affine.second[row] >= 0:
            return False
        curvature, gap, lowest = closing[3:6]
        if not abs(gap) <= GAP_TOL - margin or lowest <= GAP_TOL + margin:
            return False
        side = float(A[row, affine.first[row]])
        dofs, G, restitution, d, m_inv, mass = self._stop_contact(pair, side)
        if len(dofs) != 1 or d != affine.first[row] or float(G[0]) != side:
            return False
        v = self.m.v
        v_d = float(v[d])
        u = side * v_d
        if not u < -IMPACT_SPEED_TOL * (1.0 + 1e-6):
            return False
        if curvature > 0.0 and u * u <= 2.0 * curvature * GAP_TOL * (1.0 + 1e-6):
            return False  # about grazing: the general handling decides
        # Newton's law, the arithmetic of ImpactRules.newton_single on one coordinate
        w = side * m_inv
        k = side * w
        jump = (-(1.0 + restitution) * u) * (w / k)
        if not side * (v_d + jump) > max(IMPACT_SPEED_TOL, REST_SPEED_TOL) * (1.0 + 1e-6):
            return False  # it stays closed: the contact problem decides
        v_plus = v.copy()
        v_plus[d] = v_d + jump
        energy_change = -0.5 * (1.0 - restitution * restitution) * u * u / k
        impulse = side * (mass * jump) / (side * side)
        halfway = v.copy()
        halfway[d] = v_d + jump / (1.0 + restitution)
        stage = ImpactStage(
            y=v.copy(),
            w=halfway,
            lam=np.array([impulse / (1.0 + restitution)]),
            tangent_impulse=np.zeros(1),
        )
        self.handler.newton_output(out, pair, dofs, G, stage, v_plus, impulse, energy_change)
        self.m.active = {}
        self.m.phase_forces = None
        self.zeno.check_zeno(out, [])
        return True
