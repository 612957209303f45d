"""The event-driven stepper (MECHANICS §4; paper 004 §6, paper 002).

Motion is split into smooth phases with a fixed set of active contacts and
fixed friction modes. A phase is integrated with DOP853 (dense output) using
the accelerations of :func:`solver.contact.solve_with_modes`; where the
applied force is constant (gravity only) and every active contact is a disk
on a straight segment (constant ``G``, ``H``, no curvature terms), the contact
forces are constant and the phase is an exact parabola instead, its gaps to
segments and to disks with the same acceleration closing at the roots of
quadratics computed in closed form, its output frames — the active contacts'
states included (:func:`solver.geometry.disk_segment_contacts`), one object
shared by equal rows — and its event functions built in one vectorised pass.
Bead scenes with springs or forcing are linear
(:func:`solver.linear_flow.linear_bead_model`); while every active contact
has a constant ``G`` (its normal along the rail: two beads on one rail, a
bead against a vertical wall) a phase is the exact motion of a
:class:`solver.linear_flow.LinearFlow` with ``A`` the active ``G`` rows,
compiled once per active set and spring orientation. Its damping loss
``∫ vᵀCv dt`` and input work ``∫ F(t)·v dt`` are Gauss–Legendre integrals of
the exact state (``WORK_NODES`` nodes over at most ``2 / max_rate``, exact to
rounding), its events are searched on sub-points ``1 / max_rate`` apart and
its frames are built in one vectorised pass. Friction does nothing there: a
bead's ``H`` is ``t_x``, which is 0 for a normal along the rail. A phase
ends at the first event, found by a root search on the dense output (or
those closed forms):

* ``gap`` — an inactive contact's gap reaching 0 (impact or grazing);
* ``liftoff`` — an active contact's λ reaching 0;
* ``stick`` — a sliding contact's slip speed reaching 0;
* ``slip`` — a sticking contact's friction reaching μλ;
* ``region`` — an active contact leaving its feature (a wheel rolling off a
  segment onto the corner vertex that ends it).
* ``spring`` — (closed-form phases only) a rest-length spring's ends
  meeting, which changes the sign in its linear force; the next phase is
  integrated by DOP853 across the change.

Event functions are sampled at sub-points of every step and, for gaps, the
minima between sub-points (where ``u_n`` turns from negative to positive)
are checked too, so a gap that dips below zero inside one step is not
missed. At an event all closed contacts (``|g| ≤ GAP_TOL``, junction
features included) take part in one impact with the scene's law
(:func:`solver.impact.resolve_impact`), then the
contact LCP (:func:`solver.contact.solve_contact_problem`) decides which
closed contacts carry force and how they slide, and positions and
velocities are projected back onto the active constraints (M-metric
Gauss–Newton) so nothing drifts. An impact of one frictionless contact is
Newton's law in closed form (every law reduces to it), exact for an elastic
bounce. Bounces that form a geometric sequence (one contact) or a
shrinking run (several) are summed with the law between closed-form flights
to their accumulation point once they would rise less than ``ZENO_HEIGHT``
(:mod:`solver.zeno_series`).

The stepper is put together from one module per idea: the contact pairs and
their gaps (:mod:`solver.contact_pairs`), the flight pieces
(:mod:`solver.flight`), where the next event is (:mod:`solver.event_location`,
:mod:`solver.gap_roots`), what happens at an event
(:mod:`solver.event_handling`, :mod:`solver.zeno_series`) and what is written
out (:mod:`solver.output_frames`); the tolerances are in
:mod:`solver.event_tolerances`. This module holds the phase loop.
"""

from __future__ import annotations

import math
import time
from collections.abc import Generator, Hashable
from typing import Any

import numpy as np

from solver.affine_gaps import AffineScanMixin
from solver.contact import ContactForces, solve_with_modes
from solver.contact_pairs import ContactPair, DiskKinematics
from solver.errors import InputError, SolverError
from solver.event_handling import HandlingMixin
from solver.event_location import FoundEvent, LocationMixin
from solver.event_tolerances import (
    GAP_TOL,
    MAX_PHASES_PER_STEP,
    MAX_STALLED_EVENTS,
    STEP_WALL_SLICE_S,
    SUBPOINTS_FLIGHT,
    SUBPOINTS_ODE,
    TIME_TOL,
    ZENO_HEIGHT,
)
from solver.flight import FlightMixin, Parabola, Piece
from solver.flight_phases import FlightPhaseMixin
from solver.frames import Event, StepOutput
from solver.gap_roots import GapRootMixin
from solver.gap_set import GapSet
from solver.linear_flow import LinearFlow
from solver.output_frames import OutputMixin
from solver.stop_phases import StopPhaseMixin
from solver.system import Contact
from solver.zeno import ImpactCluster, ZenoWatch
from solver.zeno_series import ZenoMixin

__all__ = ["GAP_TOL", "MAX_PHASES_PER_STEP", "ZENO_HEIGHT", "EventDrivenStepper"]


def _positive(value: float, name: str) -> float:
    value = float(value)
    if not (math.isfinite(value) and value > 0.0):
        raise InputError(f"`{name}` must be a positive finite number, got {value!r}")
    return value


class EventDrivenStepper(
    FlightMixin,
    StopPhaseMixin,
    FlightPhaseMixin,
    AffineScanMixin,
    LocationMixin,
    GapRootMixin,
    HandlingMixin,
    ZenoMixin,
    OutputMixin,
):
    """Event-driven simulation of a side-view scene (MECHANICS §4).

    Parameters
    ----------
    system : solver.system.System
        The compiled scene.
    t_end : float
        End of the run (s).
    dt_out : float
        Spacing of the output samples (s).
    rtol, atol : float
        DOP853 tolerances of the smooth phases (relative; absolute in SI
        units): tighter is more accurate and slower.
    closed_form : bool
        Integrate the phases of linear bead scenes in closed form (default).
        False sends them to DOP853 (for comparisons in tests and benchmarks).

    Attributes
    ----------
    status : str
        ``"running"``, ``"finished"`` or ``"failed"``.
    t : float
        Current time (s).
    message : str
        Why the run finished or failed.
    system : System
        As given.
    """

    def __init__(
        self,
        system: Any,
        t_end: float,
        dt_out: float,
        rtol: float = 1e-10,
        atol: float = 1e-12,
        closed_form: bool = True,
    ) -> None:
        self.system = system
        self.t_end = _positive(t_end, "t_end")
        self.dt_out = _positive(dt_out, "dt_out")
        self.rtol = _positive(rtol, "rtol")
        self.atol = _positive(atol, "atol")
        self.status = "running"
        self.message = ""
        self.t = 0.0
        self._N = system.N
        self._M_inv = 1.0 / np.asarray(system.M_diag, dtype=float)  # M is diagonal (MECHANICS §1)
        self._q = np.array(system.q0, dtype=float)
        self._v = np.array(system.v0, dtype=float)
        self._work = np.zeros(3)  # friction, damping dissipation and input work (J)
        self._impact_loss = 0.0  # J dissipated by impacts (Zeno included)
        self._kin = DiskKinematics(system)
        self._active: dict[Hashable, tuple[ContactPair, str]] = {}
        self._law = system.scene.contact.impact_law
        self._flight = not system.has_springs and not system.has_forcing
        # constant gravity force (N, N·m) of such scenes; their potential energy is −f·q
        self._gravity = system.applied_force(0.0, self._q, self._v) if self._flight else None
        radii = self._kin.radii
        self._margin = self._choose_margin()
        self._r_min = float(radii.min()) if len(radii) else 1.0
        self._no_gaps = GapSet(self._kin, [])  # immutable: one empty set serves every use
        self._pair_set = self._no_gaps
        self._pairs_found_at: np.ndarray | None = None
        self._watched: tuple[Any, ...] = (None, None, None)
        self._unresolved: tuple[GapSet, bytes, GapSet] | None = None  # of _flight_scan
        self._next_sample = 0
        self._started = False
        self._stalled = 0
        self._zeno = ZenoWatch()
        self._cluster = ImpactCluster()
        # constant for a whole phase, set only while every active contact is a disk on a segment
        self._phase_forces: ContactForces | None = None
        self._closed_form = bool(closed_form) and not self._flight
        self._flows: dict[Hashable, LinearFlow] = {}  # per active set and spring orientation
        self._across_spring = False  # the next phase crosses a spring's sign change
        self._cut: Generator[None, StepOutput, None] | None = None  # a phase cut by a slice
        self._deadline = math.inf  # when the current step's wall-time slice ends (monotonic s)
        self.reached = 0.0  # s: how far the motion is computed (t, or a cut phase's last piece)

    def step(self) -> StepOutput:
        """Advance by at least one output sample or one event, or by ``MAX_PHASES_PER_STEP`` phases.

        The work of one call is bounded: a run that needs very many short
        phases between two output samples (a bead at 1e6 m/s) returns
        between them with an empty output and a later ``t``, and so does a
        call that has run for ``STEP_WALL_SLICE_S`` of wall time: at the end
        of a phase, or between two pieces of a long phase, which the next
        call resumes where it stopped (``reached`` says how far its pieces
        got; ``t`` moves at the phase's end). The results do not depend on
        where a step returns.

        Returns
        -------
        StepOutput
            Frames and events in time order. A physics failure sets
            ``status = "failed"`` and ends with an ``error`` event; it never
            raises.
        """
        out = StepOutput()
        if self.status != "running":
            return out
        try:
            if not self._started:
                self._started = True
                self._settle(out, {})
                self._emit_samples(out, None, self.t, inclusive=True)
            self._deadline = time.monotonic() + STEP_WALL_SLICE_S
            if self._cut is not None:  # a phase cut at the last step's slice goes on
                self._phase_go_on(self._cut, out)
            for _ in range(MAX_PHASES_PER_STEP):
                if self._cut is not None or self.status != "running" or out.frames or out.events:
                    break
                self._phase_go_on(self._phase(out), None)
                if time.monotonic() > self._deadline:
                    break
        except (SolverError, np.linalg.LinAlgError, ValueError) as exc:
            self._cut = None
            self.status = "failed"
            self.message = f"t = {self.t:.12g} s: {exc}"
            out.events.append(Event(t=self.t, type="error", message=self.message))
        return out

    def _phase_go_on(
        self, phase: Generator[None, StepOutput, None], out: StepOutput | None
    ) -> None:
        """Run ``phase`` (from :meth:`_phase`) until it ends or its step's slice is spent.

        A phase that is cut (it yields) is kept in ``_cut`` and resumed by the
        next ``step()`` with that step's output, every local as it was: the
        motion is the same bits as an uncut phase's.
        """
        self._cut = None
        try:
            if out is None:
                next(phase)
            else:
                phase.send(out)
        except StopIteration:
            return
        self._cut = phase

    def _y(self) -> np.ndarray:
        return np.concatenate((self._q, self._v, self._work))

    def _set_y(self, y: np.ndarray) -> None:
        N = self._N
        self._q = np.array(y[:N])
        self._v = np.array(y[N : 2 * N])
        self._work = np.array(y[2 * N :])

    def _active_evals(self, q: np.ndarray, v: np.ndarray) -> list[Contact]:
        return [self._kin.evaluate(pair, q, v) for pair, _ in self._active.values()]

    def _active_forces(
        self, t: float, q: np.ndarray, v: np.ndarray
    ) -> tuple[list[Contact], ContactForces]:
        evals = self._active_evals(q, v)
        if self._phase_forces is not None:
            return evals, self._phase_forces
        modes = [mode for _, mode in self._active.values()]
        f = self.system.applied_force(t, q, v)
        return evals, solve_with_modes(evals, modes, self._M_inv, f)

    def _phase(self, out: StepOutput) -> Generator[None, StepOutput, None]:
        """Integrate one smooth phase up to its first event, a horizon or ``t_end``.

        A generator: between two pieces of a long phase it yields when the
        step's wall-time slice is spent (``_deadline``), noting in
        ``reached`` how far the motion is computed; the next ``step()``
        resumes it with its own output (:meth:`_phase_go_on`).
        """
        t0 = self.t
        if self._train_phase(out):
            return
        gaps = self._candidates()
        if self._stop_phase(out, gaps) or self._flight_phase(out, gaps):
            return
        budget = 0.25 * self._margin - self._moved()
        constant = self._constant_motion()
        linear = None if constant is not None else self._linear_motion()
        if linear is not None:
            pieces = self._linear_pieces(*linear)
            reach = math.inf if self._pairs_complete() else budget
        elif constant is not None:
            a, power = constant
            tb = min(self.t_end, t0 + self._horizon(a, budget))
            flight = Parabola(t0, self._q.copy(), self._v.copy(), a, self._work.copy(), power)
            pieces = iter([Piece(t0, tb, flight.state, flight.states)])
            reach = 0.0
        else:
            pieces = self._ode_pieces(t0, self._y(), budget)
            reach = budget
        c0 = self.system.centres(self._q)
        for piece in pieces:
            if linear is not None:
                found = self._linear_scan(piece, gaps, linear[1])
            elif constant is None:
                found = self._scan(piece, gaps, SUBPOINTS_ODE)
            else:
                found = self._flight_scan(piece, gaps, a)
                if self._active:
                    # slip → stick and leaving a segment; λ and friction are constant
                    end = found.t if found is not None else piece.tb
                    other = self._scan(
                        Piece(t0, end, piece.state, piece.states), self._no_gaps, SUBPOINTS_FLIGHT
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
            found = self._missed(piece, gaps, found, a if constant is not None else None) or found
            limit = found.t if found else piece.tb
            self._emit_samples(
                out,
                piece.state,
                limit,
                inclusive=found is None and piece.tb >= self.t_end,
                states=piece.states,
            )
            if found is not None:
                self._set_y(piece.state(found.t))
                self._advance_clock(found.t)
                if found.kind == "spring":
                    self._across_spring = True
                    self._project()
                else:
                    self._handle(out, found)
                return
            y_end = piece.state(piece.tb)
            if piece.tb < self.t_end and reach > 0.0 and not cut:
                moved = self.system.centres(y_end[: self._N]) - c0
                if np.hypot(moved[:, 0], moved[:, 1]).max(initial=0.0) < reach:
                    if time.monotonic() > self._deadline:
                        self.reached = max(self.reached, piece.tb)
                        out = yield  # the slice is spent: the next step goes on from here
                    continue  # the next piece
            self._set_y(y_end)
            self._advance_clock(piece.tb)
            self._project()
            if piece.tb >= self.t_end:
                self._finish(out)
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
        N = self._N

        def travelled(t: float) -> float:
            moved = self.system.centres(piece.state(t)[:N]) - c0
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

    def _advance_clock(self, t: float) -> None:
        if t > self.t:
            self._stalled = 0
        else:
            self._stalled += 1
            if self._stalled > MAX_STALLED_EVENTS:
                raise SolverError(
                    f"{MAX_STALLED_EVENTS} events in a row without time advancing "
                    f"(contacts {list(k for k in self._active)})"
                )
        self.t = t
