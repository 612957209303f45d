"""The general smooth phase of the event-driven stepper (a phase kind).

A phase with a fixed set of active contacts and fixed friction modes, made
of pieces (:class:`solver.flight.Piece`): a closed-form parabola when the
forces are constant, the exact flow of a linear bead scene, or DOP853 steps;
each piece is scanned for the first event (:class:`solver.event_location.
EventLocator`), checked for missed closings, sampled on the output grid, and
the phase ends at the event, at a horizon (the reach of the candidate
pairs) or at ``t_end``. Any scene can take this kind; the other kinds
(:mod:`solver.flight_phases`, :mod:`solver.stop_phases`) are faster routes
for the structures they name and give way to it for anything else.
"""

from __future__ import annotations

import math
import time
from collections.abc import Generator
from typing import Any

import numpy as np

from solver.compliant_events import CompliantEvent
from solver.errors import SolverError
from solver.event_location import FoundEvent
from solver.event_tolerances import SUBPOINTS_FLIGHT, SUBPOINTS_ODE, TIME_TOL
from solver.flight import Parabola, Piece
from solver.frames import StepOutput
from solver.motion_state import MotionState, Setup


class GeneralPhase:
    """One smooth phase up to its first event, a horizon or ``t_end`` (a phase kind).

    Owns nothing but the wall-time clock of the step it runs in
    (``deadline``) and how far a cut phase's pieces got (``reached``).
    """

    def __init__(
        self,
        setup: Setup,
        motion: MotionState,
        pairs: Any,
        smooth: Any,
        locator: Any,
        roots: Any,
        recorder: Any,
        handler: Any,
    ) -> None:
        self.s, self.m, self.pairs, self.smooth = setup, motion, pairs, smooth
        self.locator, self.roots, self.recorder, self.handler = locator, roots, recorder, handler
        self.deadline = math.inf  # when the current step's wall-time slice ends (monotonic s)
        self.reached = 0.0  # s: how far a cut phase's pieces got
        self.compliant: Any = None  # solver.compliant_events.CompliantEvents of a compliant scene

    def run(self, out: StepOutput, gaps: Any) -> Generator[None, StepOutput, None]:
        """Integrate the phase, watching ``gaps`` (the candidates that are not active).

        A generator: between two pieces of a long phase it yields when the
        step's wall-time slice is spent (``deadline``), noting in
        ``reached`` how far the motion is computed; the stepper resumes it
        with the next step's output, every local as it was.
        """
        s, m = self.s, self.m
        t0 = m.t
        if self.compliant is not None:
            self.compliant.begin(m.t, m.q, m.v)
        budget = 0.25 * self.pairs.margin - self.pairs.moved()
        constant = self.smooth.constant_motion()
        linear = None if constant is not None else self.smooth.linear_motion()
        if linear is not None:
            pieces = self.smooth.linear_pieces(*linear)
            reach = math.inf if self.pairs.pairs_complete() else budget
        elif constant is not None:
            a, power = constant
            tb = min(s.t_end, t0 + self.smooth.horizon(a, budget))
            flight = Parabola(t0, m.q.copy(), m.v.copy(), a, m.work.copy(), power)
            pieces = iter([Piece(t0, tb, flight.state, flight.states)])
            reach = 0.0
        else:
            pieces = self.smooth.ode_pieces(t0, m.y(), budget)
            reach = budget
        if self.compliant is not None:  # frames one by one, a released disk's loss
            pieces = self.compliant.phase_pieces(pieces, m.q)
        c0 = s.system.centres(m.q)
        for piece in pieces:
            if linear is not None and piece.motion is not None:
                found = self.locator.linear_scan(piece, gaps, linear[1])
            elif constant is None:
                found = self.locator.scan(piece, gaps, SUBPOINTS_ODE)
            else:
                found = self.locator.flight_scan(piece, gaps, a)
                if m.active:
                    # slip → stick and leaving a segment; λ and friction are constant
                    end = found.t if found is not None else piece.tb
                    other = self.locator.scan(
                        Piece(t0, end, piece.state, piece.states), s.no_gaps, SUBPOINTS_FLIGHT
                    )
                    found = other or found
            cut = False
            if 0.0 < reach < math.inf:
                # no disk may travel beyond the reach of the candidate pairs: a piece
                # that goes further (a closed-form piece is as long as its flow's rate
                # allows) ends where the reach is spent, and the phase with it
                t_cut = self._reach_spent(piece, found, c0, reach)
                if t_cut is not None:
                    piece = Piece(piece.ta, t_cut, piece.state, piece.states, piece.motion)
                    found, cut = None, True
            missed = self.roots.missed(piece, gaps, found, a if constant is not None else None)
            found = missed or found
            if self.compliant is not None:  # a touch or release ends the phase at the kink
                # a closed-form piece's sub-points follow the beads' travel, as for its gaps
                n_sub = self.locator._linear_subpoints(piece) if piece.motion is not None else None
                soft = self.compliant.first(piece, piece.ta, found.t if found else piece.tb, n_sub)
                found = soft or found
            limit = found.t if found else piece.tb
            while not self.recorder.emit_samples(
                out,
                piece.state,
                limit,
                inclusive=found is None and piece.tb >= s.t_end,
                states=piece.states,
                deadline=self.deadline,
            ):  # thousands of samples built one by one: cut at the slice like the pieces
                self.reached = max(self.reached, out.frames[-1].t)
                out = yield
            if found is not None:
                m.set_y(piece.state(found.t))
                m.advance_clock(found.t)
                if found.kind == "spring":
                    self.smooth.across_spring = True
                    self.handler.project()
                elif isinstance(found, CompliantEvent):  # touch, release, stick, slip
                    self.compliant.emit(out, found)
                    self.handler.project()
                else:
                    self.handler.handle(out, found)
                return
            y_end = piece.state(piece.tb)
            if piece.tb < s.t_end and reach > 0.0 and not cut:
                moved = s.system.centres(y_end[: s.N]) - c0
                if np.hypot(moved[:, 0], moved[:, 1]).max(initial=0.0) < reach:
                    if time.monotonic() > self.deadline:
                        self.reached = max(self.reached, piece.tb)
                        out = yield  # the slice is spent: the next step goes on from here
                    continue  # the next piece
            m.set_y(y_end)
            m.advance_clock(piece.tb)
            self.handler.project()
            if piece.tb >= s.t_end:
                self.recorder.finish(out)
            return
        raise SolverError("smooth phase ended without reaching an event or the horizon")

    def _reach_spent(
        self, piece: Piece, found: FoundEvent | None, c0: np.ndarray, reach: float
    ) -> float | None:
        """When (s) a disk centre of ``piece`` first gets ``reach`` (m) from ``c0``, before its end.

        None when no centre gets that far by the piece's end (``found`` or
        ``tb``); otherwise the time, bisected to ``TIME_TOL``, at which the
        phase must end so that the candidate pairs still cover every contact.
        """
        N = self.s.N
        system = self.s.system

        def travelled(t: float) -> float:
            moved = system.centres(piece.state(t)[:N]) - c0
            return float(np.hypot(moved[:, 0], moved[:, 1]).max(initial=0.0))

        ta, tb = piece.ta, found.t if found is not None else piece.tb
        if travelled(tb) <= reach:
            return None
        while tb - ta > TIME_TOL:
            mid = 0.5 * (ta + tb)
            if not ta < mid < tb:  # adjacent floats: TIME_TOL is below their spacing
                break
            if travelled(mid) > reach:
                tb = mid
            else:
                ta = mid
        return ta
