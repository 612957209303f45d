"""Flight pieces of the event-driven stepper: how the smooth motion between events is made.

A :class:`Piece` is a stretch ``[ta, tb]`` of motion with its state function:
a closed-form parabola (:class:`Parabola`: constant forces, every active
contact a disk on a straight segment), the exact flow of a linear bead scene
(:class:`solver.linear_flow.LinearFlow`), or a DOP853 step. :class:`SmoothMotion`
chooses which for a phase, bounds a phase by the broad-phase margin and
keeps the candidate pairs up to date.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.integrate import DOP853

from solver.compliance_flow import compliant_bead_model
from solver.contact import solve_with_modes
from solver.errors import SolverError
from solver.event_tolerances import FLOW_START_TOL, SUBPOINTS_LINEAR, WORK_NODES
from solver.fixed_mode import ModeForces, OneContactReaction
from solver.frames import ContactState
from solver.geometry import Segment
from solver.linear_bead_model import KeptFlows, LinearBeadModel, linear_bead_model
from solver.linear_flow import LinearFlow, LinearPhase
from solver.motion_state import MotionState, Setup

_GAUSS_LEGENDRE = {n: np.polynomial.legendre.leggauss(n) for n in range(6, WORK_NODES + 1)}
KNOWN_STATES = 4
"""Rows of a closed-form piece kept per piece, by time (the times asked for more than once)."""


@dataclass
class Piece:
    """A stretch ``[ta, tb]`` of smooth motion with its state function."""

    ta: float
    tb: float
    state: Callable[[float], np.ndarray]
    states: Callable[[np.ndarray], np.ndarray] | None = None
    """Vectorised ``state`` (rows for an array of times), where the motion has one."""
    motion: LinearPhase | None = None
    """The exact ``(q, v)`` of a closed-form linear piece (without the work terms)."""


@dataclass(frozen=True, eq=False)
class Parabola:
    """Motion under constant accelerations from ``t0`` (s), as rows ``(q, v, work)``.

    ``q0``, ``v0`` and ``a`` are the positions, velocities and accelerations
    (N,) at ``t0``, ``work`` the friction, damping and input work (J) so
    far; the friction work grows with the power ``power[0] + power[1] τ``
    (W, W/s), ``τ`` the time since ``t0``.
    """

    t0: float
    q0: np.ndarray
    v0: np.ndarray
    a: np.ndarray
    work: np.ndarray
    power: np.ndarray

    def state(self, t: float) -> np.ndarray:
        """The row ``(q, v, work)`` at time ``t`` (s)."""
        dt = t - self.t0
        friction = dt * (self.power[0] + 0.5 * dt * self.power[1])
        return np.concatenate(
            (
                self.q0 + dt * (self.v0 + 0.5 * dt * self.a),
                self.v0 + dt * self.a,
                self.work + np.array((friction, 0.0, 0.0)),
            )
        )

    def states(self, ts: np.ndarray) -> np.ndarray:
        """:meth:`state` at every time of ``ts`` (s), one row each."""
        N = len(self.q0)
        if len(ts) == 1:  # one row: the same operations with a scalar time step
            dt = float(ts[0]) - self.t0
            row = np.empty(2 * N + 3)
            row[:N] = self.q0 + dt * (self.v0 + 0.5 * dt * self.a)
            row[N : 2 * N] = self.v0 + dt * self.a
            row[2 * N :] = self.work
            row[2 * N] += dt * (self.power[0] + 0.5 * dt * self.power[1])
            return row[None, :]
        dt = (ts - self.t0)[:, None]
        rows = np.empty((len(ts), 2 * N + 3))
        rows[:, :N] = self.q0 + dt * (self.v0 + 0.5 * dt * self.a)
        rows[:, N : 2 * N] = self.v0 + dt * self.a
        rows[:, 2 * N :] = self.work
        # the damping and input work stay as they are: no springs, no forcing
        rows[:, 2 * N] += dt[:, 0] * (self.power[0] + 0.5 * dt[:, 0] * self.power[1])
        return rows


def held_spring(A: np.ndarray, separation_rows: np.ndarray) -> bool:
    """Whether a rest-length spring's separation is fixed by the constraints ``A q = b``.

    Its row (m/m) then lies in the row space of ``A``: both its ends are
    held, as two touching beads joined by a spring. The closed form of
    :mod:`solver.linear_flow` degenerates there — it can start from the
    right state and still drift through the contact (0.06 m in 0.05 s).
    """
    if not len(A) or not separation_rows.shape[0]:
        return False
    rank = np.linalg.matrix_rank(A)
    return any(  # one dense row at a time (the rows are sparse: O(N) memory)
        np.linalg.matrix_rank(np.vstack((A, separation_rows[[k]].toarray()))) == rank
        for k in range(separation_rows.shape[0])
    )


class SmoothMotion:
    """How the smooth motion of a phase is made (a part of the event-driven stepper).

    Owns the compiled linear flows (per active set and spring orientation),
    the kept bead model and one-contact reaction.
    """

    def __init__(self, setup: Setup, motion: MotionState, contacts: Any) -> None:
        self.s, self.m, self.contacts = setup, motion, contacts
        self._flows = KeptFlows()  # per active set and spring orientation, the last used
        self.across_spring = False  # the next phase crosses a spring's sign change

    def horizon(self, a: np.ndarray, half: float) -> float:
        """Time (s) in which no disk centre can move more than ``half`` (m)."""
        cd = self.s.system.centre_velocities(self.m.v)
        acc = self.s.system.centre_velocities(a)
        speed = float(np.hypot(cd[:, 0], cd[:, 1]).max(initial=0.0))
        accel = 2.0 * float(np.hypot(acc[:, 0], acc[:, 1]).max(initial=0.0))
        if accel > 0.0 or speed > 0.0:
            # the root of ½ accel τ² + speed τ = half, in the form without cancellation
            return 2.0 * half / (math.sqrt(speed * speed + 2.0 * accel * half) + speed)
        return math.inf

    def constant_motion(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Constant accelerations (N,) and friction power terms (W, W/s) of this phase, if any.

        Without springs or forcing the applied force is constant; when every
        active contact is a disk on a straight segment, ``G``, ``H`` are
        constant and the curvature terms vanish, so the contact forces of the
        phase (fixed modes) are constant too and the motion is a parabola.
        The contact forces are then kept for the whole phase
        (``_phase_forces``). Returns ``None`` when the motion is not of this
        kind. The friction power is ``P0 + P1 τ`` (``τ`` from the start).
        """
        if not self.s.flight or not all(
            pair.j < 0 and isinstance(pair.feature, Segment) for pair, _ in self.m.active.values()
        ):
            return None
        if not self.m.active:
            return self.s.weight_accelerations, np.zeros(2)
        evals = self.contacts.active_contacts(
            self.m.q, self.m.v
        )  # as _active_forces, evaluated once
        forces = self.m.phase_forces
        if forces is None:
            modes = [mode for _, mode in self.m.active.values()]
            # the applied force of a scene without springs or forcing: its weight (kept)
            f = self.s.gravity
            forces = self.m.phase_forces = solve_with_modes(evals, modes, self.s.M_inv, f)
        H = evals[0].H[:, None] if len(evals) == 1 else np.column_stack([e.H for e in evals])
        ff = forces.friction_force
        return forces.qdd, np.array([-(ff @ (H.T @ self.m.v)), -(ff @ (H.T @ forces.qdd))])

    def bead_model(self) -> LinearBeadModel | None:
        """The bead model (:func:`~solver.linear_bead_model.linear_bead_model`) at ``q``, kept.

        Without springs of nonzero rest length the model does not depend on
        the coordinates: it is made once per run.
        """
        kept = getattr(self, "_kept_model", None)
        if kept is not None:
            return kept[0]
        model = linear_bead_model(self.s.system, self.m.q)
        if not any(spring.rest_length for spring in self.s.system._springs):
            self._kept_model = (model,)
        return model

    def linear_motion(self) -> tuple[LinearPhase, LinearBeadModel] | None:
        """The closed-form motion of this phase of a linear bead scene, if it is one.

        The scene must be linear near ``q`` (:func:`solver.linear_bead_model.linear_bead_model`,
        every rest-length spring's ends apart) and every active contact's
        normal must lie along the rail (``n_y = 0``: two beads on one rail, a
        bead against a vertical wall), so that its ``G`` is constant and its
        ``H = t_x = n_y`` vanishes: friction does nothing. The flow, with
        ``A`` the active contacts' ``G`` rows and ``b = A q``, is compiled once
        per active set and spring orientation. Returns ``None`` otherwise,
        once after a ``spring`` event, so that DOP853 crosses it, and when the
        flow does not start from ``(q, v)`` to ``FLOW_START_TOL`` (a spring
        whose ends an active contact holds at a fixed distance makes the
        closed form of :mod:`solver.linear_flow` degenerate).
        """
        if not self.s.closed_form or self.across_spring:
            self.across_spring = False
            return None
        compliance = self.s.system.compliance
        if compliance is None:
            model, pressing = self.bead_model(), None
        else:  # the pressing compliant stops are springs and dampers of the phase
            pressing = compliance.engaged or frozenset()
            model = compliant_bead_model(self.s.system, self.m.q, pressing)
        if model is None or np.any(model.separations(self.m.q) <= 0.0):
            return None
        evals = self.contacts.active_evals(self.m.q, self.m.v)
        if any(e.n[1] != 0.0 for e in evals):
            return None
        key: tuple = (tuple(self.m.active), model.key)
        if pressing is not None:  # the pressing stops are part of the model
            key += (pressing,)
        flow = self._flows.get(key)
        if flow is None:
            A = np.array([e.G for e in evals]).reshape(-1, self.s.N)
            if held_spring(A, model.separation_rows):
                return None  # a degenerate flow (a spring both of whose ends are held): DOP853
            flow = model.flow(A, A @ self.m.q)
            self._flows[key] = flow
        motion = flow.start(self.m.t, self.m.q, self.m.v)
        q0, v0 = motion.initial_state()
        scale = 1.0 + float(np.max(np.abs(self.m.q), initial=0.0))
        if not (
            # np.allclose's test, without its generality (a few µs per phase)
            np.all(np.abs(q0 - self.m.q) <= FLOW_START_TOL * scale)
            and np.all(np.abs(v0 - self.m.v) <= FLOW_START_TOL + FLOW_START_TOL * np.abs(self.m.v))
        ):
            return None  # a degenerate flow (a spring both of whose ends are held): DOP853
        return motion, model

    def linear_pieces(self, motion: LinearPhase, model: LinearBeadModel) -> Iterator[Piece]:
        """Pieces of ``SUBPOINTS_LINEAR / max_rate`` (s) of a closed-form phase, up to ``t_end``.

        A piece's state holds the exact ``(q, v)`` and the work terms: the
        friction work is unchanged (beads on rails do not rub), the damping
        loss ``∫ vᵀCv dt`` and the input work ``∫ F(t)·v dt`` (J) are
        Gauss–Legendre integrals from the piece's start, summed over the
        stretches between the requested times. The integrands oscillate at
        most at ``2 max_rate``: ``WORK_NODES`` nodes over a whole piece, and
        proportionally fewer (at least 6) over shorter stretches, keep the
        quadrature exact to rounding.
        """
        rate = motion.flow.max_rate
        length = SUBPOINTS_LINEAR / rate if rate > 0.0 else math.inf
        N = self.s.N
        ta, work = motion.t0, self.m.work.copy()

        damped = model.damped

        def states(ts: np.ndarray, ta: float, work: np.ndarray) -> np.ndarray:
            # the work at sorted times: a sum of integrals between consecutive times,
            # each with as many nodes as its length needs (WORK_NODES for a whole piece);
            # the states at the nodes and at ts in one evaluation of the motion
            ts = np.asarray(ts, dtype=float)
            if len(ts) == 1:
                return state_at(float(ts[0]), ta, work)[None, :]
            order = np.argsort(ts)
            ends = ts[order]
            half = 0.5 * np.diff(ends, prepend=ta)
            widest = 2.0 * float(np.max(np.abs(half)))
            n = min(max(math.ceil(WORK_NODES * widest * rate / SUBPOINTS_LINEAR), 6), WORK_NODES)
            nodes, weights = _GAUSS_LEGENDRE[n]
            tn = (ends[:, None] - half[:, None] * (1.0 - nodes)).ravel()
            q, v = motion.state(np.concatenate((tn, ts)))
            vn = v[: len(tn)]
            power = np.zeros((len(tn), 3))
            if damped:
                power[:, 1] = np.sum((vn @ model.damping) * vn, axis=1)
            for h in model.harmonics:
                power[:, 2] += np.sin(h.omega * tn + h.phase) * (vn @ h.amplitude)
            gained = np.einsum("knj,n->kj", power.reshape(len(ts), n, 3), weights)
            rows = np.empty((len(ts), 3))
            rows[order] = work + np.cumsum(half[:, None] * gained, axis=0)
            return np.hstack((q[len(tn) :], v[len(tn) :], rows))

        def state_at(t: float, ta: float, work: np.ndarray) -> np.ndarray:
            # states() at one time: the same sums with fewer array operations
            half = 0.5 * (t - ta)
            n = min(
                max(math.ceil(WORK_NODES * abs(2.0 * half) * rate / SUBPOINTS_LINEAR), 6),
                WORK_NODES,
            )
            nodes, weights = _GAUSS_LEGENDRE[n]
            times = np.empty(n + 1)
            times[:n] = t - half * (1.0 - nodes)
            times[n] = t
            q, v = motion.state(times)
            vn = v[:n]
            power = np.zeros((n, 3))
            if damped:
                power[:, 1] = np.sum((vn @ model.damping) * vn, axis=1)
            for h in model.harmonics:
                power[:, 2] += np.sin(h.omega * times[:n] + h.phase) * (vn @ h.amplitude)
            return np.concatenate((q[n], v[n], work + half * (weights @ power)))

        known: dict[float, np.ndarray] = {}
        while True:
            tb = min(self.s.t_end, ta + length)

            def piece_states(ts: np.ndarray, ta: float = ta, work: np.ndarray = work) -> np.ndarray:
                return states(ts, ta, work)

            def piece_state(
                t: float, ta: float = ta, work: np.ndarray = work, known: dict = known
            ) -> np.ndarray:
                # the event search, the check after it and the phase's end ask for the
                # same few times: the rows of the first KNOWN_STATES are kept
                row = known.get(t)
                if row is None and t == ta:  # nothing integrated yet: the work as it was
                    q, v = motion.state(np.array([t]))
                    row = np.concatenate((q[0], v[0], work))
                elif row is None:
                    row = state_at(t, ta, work)
                    if len(known) < KNOWN_STATES:
                        known[t] = row
                return row.copy()

            yield Piece(ta, tb, piece_state, piece_states, motion)
            end = piece_state(tb)
            # the next piece starts from this row: its integrals from tb add nothing
            ta, work, known = tb, end[2 * N :], {tb: end}

    def fixed_mode(self) -> OneContactReaction | None:
        """The reaction of the one active contact as a function of the state, if there is one.

        Made once per active set (:mod:`solver.fixed_mode`); None with
        several active contacts or none.
        """
        active = tuple(self.m.active.values())
        kept = getattr(self, "_kept_reaction", None)
        if kept is None or kept[0] != active:
            reaction = None
            if len(active) == 1:
                pair, mode = active[0]
                reaction = OneContactReaction(self.s.system, pair, mode, self.s.M_inv)
            kept = self._kept_reaction = (active, reaction)
        return kept[1]

    def free_accelerations(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``M⁻¹ f`` (N,) at ``(t, q, v)``: constant without springs and forcing
        (:meth:`solver.motion_state.Setup.free_accelerations`)."""
        s = self.s
        return s.weight_accelerations if s.flight else s.free_accelerations(t, q, v)

    def one_contact_forces(self, t: float, q: np.ndarray, v: np.ndarray) -> ModeForces | None:
        """The one active contact's force at ``(t, q, v)`` without an LCP, where it has one.

        While the phase's forces are constant (``_phase_forces``: a disk on a
        segment under gravity alone) they are those, with the slip speed at
        ``(q, v)``, as :meth:`_active_forces` gives them.
        """
        reaction = self.fixed_mode()
        if reaction is None:
            return None
        forces = self.m.phase_forces
        if forces is None:
            return reaction.forces(q, v, self.free_accelerations(t, q, v))
        u_t = reaction.slip_speed(q, v)
        if u_t is None:
            return None
        return ModeForces(forces.qdd, forces.lam[0], forces.friction_force[0], u_t)

    def one_contact_state(self, t: float, q: np.ndarray, v: np.ndarray) -> ContactState | None:
        """The one active contact's state for a frame of a smooth phase, without an LCP.

        None with several active contacts, none, or while the phase's forces
        are constant (the output then reads those).
        """
        reaction = self.fixed_mode()
        if reaction is None or self.m.phase_forces is not None:
            return None
        return reaction.contact_state(q, v, self.free_accelerations(t, q, v))

    def _rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        N = self.s.N
        q, v = y[:N], y[N : 2 * N]
        system = self.s.system
        power_friction = 0.0
        one = self.one_contact_forces(t, q, v) if self.m.active else None
        if one is not None:
            qdd = one.qdd
            power_friction = -(one.friction_force * one.u_t)
        elif self.m.active:
            evals, forces = self.contacts.active_forces(t, q, v)
            qdd = forces.qdd
            power_friction = -float(
                sum(ff * e.u_t for ff, e in zip(forces.friction_force, evals, strict=True))
            )
        else:
            qdd = system.applied_force(t, q, v) * self.s.M_inv
        return np.concatenate(
            (v, qdd, (power_friction, system.damping_power(q, v), system.input_power(t, q, v)))
        )

    def ode_pieces(self, t0: float, y0: np.ndarray, budget: float) -> Iterator[Piece]:
        a0 = self._rhs(t0, y0)[self.s.N : 2 * self.s.N]
        max_step = min(self.horizon(a0, budget), self.s.t_end - t0)
        if max_step <= 0.0:
            max_step = self.s.t_end - t0
        compliance = self.s.system.compliance
        options = {"rtol": self.s.rtol, "atol": self.s.atol, "max_step": max_step}
        if compliance is not None:  # tight tolerances; a pressing contact: short steps
            q, v = y0[: self.s.N], y0[self.s.N : 2 * self.s.N]
            options = compliance.ode_options(q, v, **options)
        solver = DOP853(self._rhs, t0, y0, self.s.t_end, **options)
        while solver.status == "running":
            ta = solver.t
            message = solver.step()
            if solver.status == "failed":
                raise SolverError(f"the ODE integrator failed at t = {solver.t:.12g} s: {message}")
            yield Piece(ta, solver.t, solver.dense_output())

    def free_flow(self) -> LinearFlow | None:
        """The scene's linear flow without contacts (no rest-length springs), or None.

        The flow :meth:`solver.flight.SmoothMotion.linear_motion` compiles for
        an empty active set, made by it the first time.
        """
        model = self.bead_model()
        if model is None or model.separation_rows.shape[0]:
            return None
        key = ((), model.key)
        flow = self._flows.get(key)
        if flow is None and self.linear_motion() is not None:
            flow = self._flows.get(key)
        return flow
