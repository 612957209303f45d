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
(:func:`solver.linear_bead_model.linear_bead_model`); while every active contact
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

The stepper is composed of parts, each owning its own state and reached
through its methods; they share only the run's fixed :class:`~solver.
motion_state.Setup` and the one :class:`~solver.motion_state.MotionState`
(time, coordinates, velocities, work, active contacts):

* ``contacts`` (:class:`solver.active_contacts.ActiveContacts`): the active
  contacts' evaluations and forces at a state;
* ``pairs`` (:class:`solver.candidates.CandidateSearch`): the broad phase;
* ``smooth`` (:class:`solver.flight.SmoothMotion`): how the motion of a
  phase is made (parabola, closed-form linear flow, DOP853);
* ``locator`` with ``roots`` and ``affine`` (:mod:`solver.event_location`,
  :mod:`solver.gap_roots`, :mod:`solver.affine_gaps`): where the next event is;
* ``handler`` (:class:`solver.event_handling.EventHandler`): what happens at
  an event; ``zeno`` (:class:`solver.zeno_series.ZenoSummer`): bounces summed
  to their accumulation point;
* ``recorder`` (:class:`solver.output_frames.Recorder`): frames on the
  output grid;
* ``general.compliant`` (:class:`solver.compliant_events.CompliantEvents`, only
  with compliant boundaries): the ``touch`` and ``release`` of compliant
  contacts, whose force is part of the applied force;
* the phase kinds, tried in this order: ``flight_phase``
  (:class:`solver.flight_phases.FlightPhase`: a bounce train's next flight,
  or a free flight under gravity), ``stop_phase``
  (:class:`solver.stop_phases.StopPhase`: beads between stops) and the
  ``general`` phase (:class:`solver.general_phase.GeneralPhase`), which
  serves any scene.

The tolerances are in :mod:`solver.event_tolerances`. This module holds the
loop of phases; ``--debug`` (the logger ``solver.events`` at DEBUG) names
each phase kind and event as it runs.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Generator
from typing import Any

import numpy as np

from solver.active_contacts import ActiveContacts
from solver.affine_gaps import AffineScan
from solver.candidates import CandidateSearch
from solver.compliant_events import CompliantEvents
from solver.errors import SolverError
from solver.event_handling import EventHandler
from solver.event_location import EventLocator
from solver.event_tolerances import (
    GAP_TOL,
    MAX_PHASES_PER_STEP,
    STEP_WALL_SLICE_S,
    SUBPOINTS_ODE,
    ZENO_HEIGHT,
)
from solver.flight import SmoothMotion
from solver.flight_phases import FlightPhase
from solver.frames import Event, StepOutput
from solver.gap_roots import GapRoots
from solver.general_phase import GeneralPhase
from solver.motion_state import MotionState, Setup
from solver.output_frames import Recorder
from solver.stop_phases import StopPhase
from solver.zeno_series import ZenoSummer

__all__ = ["GAP_TOL", "MAX_PHASES_PER_STEP", "ZENO_HEIGHT", "EventDrivenStepper"]

log = logging.getLogger(__name__)


class EventDrivenStepper:
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
    reached : float
        How far (s) the motion is computed: ``t``, or further inside a phase
        cut at a step's wall-time slice.
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
        q0 = np.array(system.q0, dtype=float)
        v0 = np.array(system.v0, dtype=float)
        # with compliant contacts the run's own copy: its pressing set is the run's alone
        run_system = system.for_one_run()
        s = self.setup = Setup(run_system, t_end, dt_out, rtol, atol, closed_form, q0, v0)
        m = self.motion = MotionState(q=q0, v=v0)
        self.t_end, self.dt_out = s.t_end, s.dt_out
        self.contacts = ActiveContacts(s, m)
        self.pairs = CandidateSearch(s, m)
        self.smooth = SmoothMotion(s, m, self.contacts)
        self.recorder = Recorder(s, m, self.contacts, self.smooth)
        self.zeno = ZenoSummer(s, m, self.pairs, self.recorder)
        self.handler = EventHandler(s, m, self.contacts, self.pairs, self.recorder, self.zeno)
        self.zeno.handler = weakref.proxy(self.handler)  # back-edges weak: see below
        self.roots = GapRoots(s, m)
        self.affine = AffineScan(s, m, self.roots)
        self.locator = EventLocator(s, m, self.contacts, self.smooth, self.roots)
        self.locator.affine = self.affine
        self.roots.affine = weakref.proxy(self.affine)
        self.affine.locator = weakref.proxy(self.locator)
        # The parts that call each other back hold the stepper's own parts weakly, so a
        # stepper is freed by its reference count when dropped, never left as a cycle for
        # the garbage collector: a cycle per run made a bouncing ball's run (about 1 ms)
        # 20 % slower through the collections it brought (docs/ARCHITECTURE.md).
        self.flight_phase = FlightPhase(
            s, m, self.pairs, self.smooth, self.recorder, self.handler, self.zeno
        )
        self.stop_phase = StopPhase(
            s, m, self.pairs, self.smooth, self.affine, self.recorder, self.handler, self.zeno
        )
        self.general = GeneralPhase(
            s, m, self.pairs, self.smooth, self.locator, self.roots, self.recorder, self.handler
        )
        if run_system.compliance is not None:  # compliant contacts: forces, touch/release events
            self.general.compliant = CompliantEvents(
                run_system.compliance, s.N, SUBPOINTS_ODE, s.t_end
            )
            self.general.compliant.begin(m.t, m.q, m.v)  # the first frame's rows: how they press
        self._started = False
        self._cut: Generator[None, StepOutput, None] | None = None  # a phase cut by a slice

    @property
    def t(self) -> float:
        """Current time (s)."""
        return self.motion.t

    @property
    def status(self) -> str:
        """``"running"``, ``"finished"`` or ``"failed"``."""
        return self.motion.status

    @property
    def message(self) -> str:
        """Why the run finished or failed."""
        return self.motion.message

    @property
    def reached(self) -> float:
        """How far (s) the motion is computed: ``t``, or a cut phase's last piece."""
        return max(self.motion.t, self.general.reached, self.flight_phase.reached)

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
        m = self.motion
        if m.status != "running":
            return out
        debug = log.isEnabledFor(logging.DEBUG)
        try:
            if not self._started:
                self._started = True
                self.handler.settle(out, {})
                self.recorder.emit_samples(out, None, m.t, inclusive=True)
            self.general.deadline = time.monotonic() + STEP_WALL_SLICE_S
            if self._cut is not None:  # a phase cut at the last step's slice goes on
                self._go_on(self._cut, out)
            elif self.flight_phase.pending is not None:  # a flight's samples, a block a step
                self.flight_phase.resume(out)
            for _ in range(MAX_PHASES_PER_STEP):
                if (
                    self._cut is not None
                    or self.flight_phase.pending is not None
                    or m.status != "running"
                    or out.frames
                    or out.events
                ):
                    break
                gaps = self._fast_phase(out, debug)
                if gaps is not None:  # no faster kind took it: the general phase
                    self._go_on(self.general.run(out, gaps), None)
                    if debug:
                        log.debug("general phase to t = %.12g s", m.t)
                if time.monotonic() > self.general.deadline:
                    break
        except (SolverError, np.linalg.LinAlgError, ValueError) as exc:
            self._cut = self.flight_phase.pending = None
            m.status = "failed"
            m.message = f"t = {m.t:.12g} s: {exc}"
            out.events.append(Event(t=m.t, type="error", message=m.message))
        if debug:
            for event in out.events:
                log.debug("t = %.12g s: %s %s %s", event.t, event.type, event.body, event.other)
        return out

    def _go_on(self, phase: Generator[None, StepOutput, None], out: StepOutput | None) -> None:
        """Run ``phase`` (:meth:`GeneralPhase.run`) until it ends or its step's slice is spent.

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

    def _fast_phase(self, out: StepOutput, debug: bool) -> Any:
        """Run the phase if a faster kind takes it: None when done, else the watched pairs.

        A bounce train's next flight, beads between stops, a free flight
        under gravity; otherwise nothing is done and the candidates that are
        not active are returned for the general phase.
        """
        if self.general.compliant is not None:  # the faster kinds know only rigid contacts
            return self.pairs.candidates()
        if self.flight_phase.train_phase(out):
            if debug:
                log.debug("bounce-train flight to t = %.12g s", self.motion.t)
            return None
        gaps = self.pairs.candidates()
        if self.stop_phase.stop_phase(out, gaps):
            if debug:
                log.debug("stop phase to t = %.12g s", self.motion.t)
            return None
        if self.flight_phase.flight_phase(out, gaps):
            if debug:
                log.debug("free flight to t = %.12g s", self.motion.t)
            return None
        return gaps
