"""Output of the event-driven stepper: sample frames, contact states and energy budgets.

:class:`Recorder` builds the frames on the output grid (vectorised for
closed-form pieces: one pass for all rows, equal rows sharing one object),
the active contacts' states and the energy budget of every row.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from solver.contact import ContactForces
from solver.contact_pairs import ContactPair
from solver.frames import ContactState, EnergyBudget, Frame, StepOutput
from solver.geometry import disk_segment_contact, disk_segment_contacts
from solver.motion_state import MotionState, Setup

_T = TypeVar("_T")

FEW_SAMPLES = 4
"""Grid points up to which the samples due are found in floats rather than on arrays."""
SAMPLE_CHUNK = 64
"""Samples built one by one between two looks at the step's wall clock (``emit_samples``'s
``deadline``): a long phase's thousands of samples are cut and resumed like its pieces."""
VECTOR_CHUNK = 1024
"""Vectorised samples built between two looks at the step's wall clock (``emit_samples``'s
``rows_alone``): 2-5 ms of CPU, one step of a free flight. A window's worker takes no
step while the window is busy, but a step under way shares the interpreter lock with it:
blocks of 4096 (8-10 ms of CPU, 11-17 ms of wall time) fell in the paper-004 wheel's
gaps of 60-97 ms between two frames drawn (``bench/gui.py``)."""


def shared_rows(rows: np.ndarray, make: Callable[..., _T]) -> list[_T]:
    """``make(*row)`` for every row of ``rows`` (2-D), one object for a run of equal rows.

    Rows equal bit for bit (``-0.0`` differs from ``0.0``) share the object
    made for the first of them: a contact at rest gives the same state in
    every frame. The objects must be immutable.
    """
    values = rows.tolist()
    bits = np.ascontiguousarray(rows).view(np.int64)
    repeats = (bits[1:] == bits[:-1]).all(axis=1)
    if not repeats.any():
        return list(itertools.starmap(make, values))
    made = [make(*values[0])]
    for row, repeat in zip(values[1:], repeats.tolist(), strict=True):
        made.append(made[-1] if repeat else make(*row))
    return made


class Recorder:
    """Frames, contact states and energies on the output grid (a part of the event-driven stepper).

    Owns the output grid's position (``next_sample``); reads the motion
    (:class:`solver.motion_state.MotionState`) and the active contacts'
    forces (``contacts``, ``smooth``).
    """

    one_row_samples: bool = True
    """Whether a lone sample of a phase without springs or forcing is made in floats
    (:meth:`_sample_frame`); the tests compare it with the vectorised route."""

    def __init__(self, setup: Setup, motion: MotionState, contacts: Any, smooth: Any) -> None:
        self.s, self.m, self.contacts, self.smooth = setup, motion, contacts, smooth
        self.next_sample = 0  # index of the next sample on the grid k · dt_out

    @property
    def next_sample_at(self) -> float:
        """Time (s) of the next output sample due."""
        return self.next_sample * self.s.dt_out

    def energy(self, q: np.ndarray, v: np.ndarray, work: np.ndarray) -> EnergyBudget:
        kinetic, potential, spring = self.s.system.energy(q, v)
        w_friction, w_damping, w_input = work.tolist()  # float64 sums: the same bits
        return EnergyBudget(
            kinetic=kinetic,
            potential=potential,
            spring=spring,
            dissipated=self.m.impact_loss + (w_friction + w_damping),
            input=w_input,
        )

    def energy_at(self, budget: EnergyBudget, v: np.ndarray, work: np.ndarray) -> EnergyBudget:
        """:meth:`energy` at the positions ``budget`` was made at, the velocities ``v``.

        The gravitational and spring energies depend on the positions alone:
        taken from ``budget`` (an impact's ``pre`` frame for its ``post``), the
        kinetic energy and the dissipation booked so far formed anew; the
        same numbers as :meth:`energy`.
        """
        w_friction, w_damping, w_input = work.tolist()
        return EnergyBudget(
            kinetic=self.s.system.kinetic_energy(v),
            potential=budget.potential,
            spring=budget.spring,
            dissipated=self.m.impact_loss + (w_friction + w_damping),
            input=w_input,
        )

    def _contact_states(self, t: float, q: np.ndarray, v: np.ndarray) -> tuple[ContactState, ...]:
        rigid = self._rigid_contact_states(t, q, v)
        compliance = self.s.system.compliance
        if compliance is None:
            return rigid
        return rigid + tuple(compliance.states(q, v, t))  # pressing compliant contacts: λ = F

    def _rigid_contact_states(
        self, t: float, q: np.ndarray, v: np.ndarray
    ) -> tuple[ContactState, ...]:
        if not self.m.active:
            return ()
        one = self.smooth.one_contact_state(t, q, v)  # one contact of a smooth phase: no LCP
        if one is not None:
            return (one,)
        evals, forces = self.contacts.active_forces(t, q, v)
        return tuple(
            ContactState(
                body=e.body,
                other=e.other,
                lam=float(forces.lam[k]),
                tau=float(forces.tau[k]),
                u_n=e.u_n,
                u_t=e.u_t,
                mode=forces.modes[k],
                point=(float(e.point[0]), float(e.point[1])),
                normal=(float(e.n[0]), float(e.n[1])),
                friction=e.friction,
            )
            for k, e in enumerate(evals)
        )

    def frame(self, t: float, kind: str, y: np.ndarray) -> Frame:
        N = self.s.N
        return self._state_frame(t, kind, y[:N], y[N : 2 * N], y[2 * N :])

    def _state_frame(
        self, t: float, kind: str, q: np.ndarray, v: np.ndarray, work: np.ndarray
    ) -> Frame:
        """The frame at ``t`` (s) of positions ``q``, velocities ``v`` and ``work`` (J).

        :meth:`_frame` of the state ``(q, v, work)`` without joining it into one
        row first; the frame owns copies of ``q`` and ``v``.
        """
        return Frame(
            t=t,
            kind=kind,
            q=np.array(q),
            v=np.array(v),
            contacts=self._contact_states(t, q, v),
            energy=self.energy(q, v, work),
        )

    def _current_frame(self, t: float, kind: str) -> Frame:
        """:meth:`_frame` at ``t`` (s) of the stepper's state (``_q``, ``_v``, ``_work``)."""
        return self._state_frame(t, kind, self.m.q, self.m.v, self.m.work)

    def _bead_energies(self, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gravitational and spring energy (J) of a bead-only scene, one per row of ``Q``.

        The same terms as :meth:`solver.system.System.energy`: a bead's
        gravitational energy is ``−m g_x x`` (its rail's reaction does no
        work), a spring's ``½ k (length − rest length)²``.
        """
        system = self.s.system
        potential = -(Q @ (system.M_diag * system.gravity[0]))
        spring = system.spring_set.rail_energies(Q[:, system._ix], system._rail_y)
        return potential, spring

    def _sample_frames(self, ts: np.ndarray, Y: np.ndarray) -> list[Frame]:
        """Sample frames at times ``ts`` (s) with states ``Y`` (rows), energies vectorised.

        For phases without springs or forcing (the applied force ``f`` is then
        constant gravity and the gravitational energy is ``−f·q``, J) and for
        closed-form phases of bead scenes (:meth:`_bead_energies`).
        """
        N = self.s.N
        if len(ts) == 1 and self.s.flight and self.one_row_samples:
            return [self._sample_frame(float(ts[0]), Y[0])]
        # fresh copies: every frame owns its rows, no frame shares memory with the stepper
        Q, V, W = Y[:, :N].copy(), Y[:, N : 2 * N].copy(), Y[:, 2 * N :]
        kinetic = 0.5 * ((V * V) @ self.s.system.M_diag)
        if self.s.flight:
            potential, spring = -(Q @ self.s.gravity), np.zeros(len(ts))
        else:
            potential, spring = self._bead_energies(Q)
        dissipated = self.m.impact_loss + W[:, 0] + W[:, 1]
        energies = shared_rows(
            np.column_stack((kinetic, potential, spring, dissipated, W[:, 2])), EnergyBudget
        )
        times = ts.tolist()
        contacts = self._sample_contacts(times, Q, V)
        # map over the columns: a row view of Q and V per frame, no tuple unpacking per row
        return list(map(Frame, times, itertools.repeat("sample"), Q, V, contacts, energies))

    def _sample_frame(self, t: float, y: np.ndarray) -> Frame:
        """:meth:`_sample_frames` of one row ``y`` at ``t`` (s), no springs or forcing.

        The same numbers from the same operations, on one row: a product
        ``(v∘v)·M`` of one row is the dot product of the vectors (no blocking
        over rows), the active contacts' states those of
        :func:`solver.geometry.disk_segment_contact`.
        """
        N = self.s.N
        q, v, work = y[:N].copy(), y[N : 2 * N].copy(), y[2 * N :].tolist()
        energy = EnergyBudget(
            kinetic=float(0.5 * ((v * v) @ self.s.system.M_diag)),
            potential=float(-(q @ self.s.gravity)),
            spring=0.0,
            dissipated=self.m.impact_loss + work[0] + work[1],
            input=work[2],
        )
        return Frame(t, "sample", q, v, self._sample_contact_row(t, q, v), energy)

    def _sample_contact_row(
        self, t: float, q: np.ndarray, v: np.ndarray
    ) -> tuple[ContactState, ...]:
        """:meth:`_sample_contacts` of one state ``(q, v)`` at ``t`` (s), in floats.

        At the state the active contacts were last evaluated at (a contact at
        rest: its phase ends where it began) their evaluations give the
        numbers: a disk on a segment's ``u_n``, ``u_t``, point and normal are
        :func:`solver.geometry.disk_segment_contact`'s operations.
        """
        if not self.m.active:
            return ()
        forces = self.m.phase_forces
        if forces is None:
            return self._contact_states(t, q, v)
        kept = self.contacts.kept
        if kept is None or kept[0] != (tuple(self.m.active), q.tobytes(), v.tobytes()):
            kept = None
        states = []
        for k, (pair, _) in enumerate(self.m.active.values()):
            if kept is not None and kept[1][k].inside:
                e = kept[1][k]
                (px, py), (nx, ny) = e.point.tolist(), e.n.tolist()
                inside, u_n, u_t = True, e.u_n, e.u_t
            else:
                c, cdot, omega = self.s.system.disk_motion(q, v, pair.i)
                inside, u_n, u_t, px, py, nx, ny = disk_segment_contact(
                    pair.feature, c, cdot, self.s.kin.radii[pair.i], omega
                )
            if not inside:  # beyond the segment's end: evaluated
                return self._contact_states(t, q, v)
            states.append(
                ContactState(
                    body=pair.body,
                    other=pair.other,
                    lam=float(forces.lam[k]),
                    tau=float(forces.tau[k]),
                    u_n=u_n,
                    u_t=u_t,
                    mode=forces.modes[k],
                    point=(px, py),
                    normal=(nx, ny),
                    friction=pair.friction,
                )
            )
        return tuple(states)

    def _sample_contacts(
        self, ts: list[float], Q: np.ndarray, V: np.ndarray
    ) -> list[tuple[ContactState, ...]]:
        """The active contacts' states at times ``ts`` (s), positions ``Q`` and velocities ``V``.

        While the contact forces are constant (``_phase_forces``: disks on
        straight segments) the kinematics are computed for all rows at once
        (:func:`solver.geometry.disk_segment_contacts`), and a row equal to
        the one before it, bit for bit, shares its ContactState objects.
        """
        if not self.m.active:
            return [()] * len(ts)
        forces = self.m.phase_forces
        if forces is not None:
            columns = []
            for k, (pair, _) in enumerate(self.m.active.values()):
                column = self._segment_contact_states(pair, forces, k, Q, V)
                if column is None:  # a row beyond the segment's end: evaluated one by one
                    break
                columns.append(column)
            else:
                return list(zip(*columns, strict=True))
        return [self._contact_states(t, q, v) for t, q, v in zip(ts, Q, V, strict=True)]

    def _segment_contact_states(
        self, pair: ContactPair, forces: ContactForces, k: int, Q: np.ndarray, V: np.ndarray
    ) -> list[ContactState] | None:
        """States of active contact ``k`` (a disk on a segment) per row of ``Q``, ``V``.

        ``None`` when a row lies beyond the segment's ends.
        """
        C, Cdot, omega = self.s.system.disk_motions(Q, V, pair.i)
        kin = disk_segment_contacts(pair.feature, C, Cdot, self.s.kin.radii[pair.i], omega)
        if not kin.inside.all():
            return None
        lam, tau, mode = float(forces.lam[k]), float(forces.tau[k]), forces.modes[k]

        def state(
            u_n: float, u_t: float, px: float, py: float, nx: float, ny: float
        ) -> ContactState:
            return ContactState(
                body=pair.body,
                other=pair.other,
                lam=lam,
                tau=tau,
                u_n=u_n,
                u_t=u_t,
                mode=mode,
                point=(px, py),
                normal=(nx, ny),
                friction=pair.friction,
            )

        return shared_rows(np.column_stack((kin.u_n, kin.u_t, kin.point, kin.n)), state)

    def emit_samples(
        self,
        out: StepOutput,
        state: Callable[[float], np.ndarray] | None,
        limit: float,
        inclusive: bool,
        states: Callable[[np.ndarray], np.ndarray] | None = None,
        deadline: float = math.inf,
        rows_alone: bool = False,
    ) -> bool:
        """Sample frames on the output grid up to ``limit`` (s); True when all are made.

        ``state`` maps a time to the row of its state, ``None`` standing for
        the stepper's current state (:meth:`_current_frame`). ``states`` maps
        an array of times to the rows of their states; given (a
        constant-force or closed-form linear phase), the frames are built in
        one vectorised pass. Frames built one by one stop, every
        ``SAMPLE_CHUNK``, once ``time.monotonic()`` is past ``deadline``:
        False then, and the same call made again goes on from the next
        sample (each frame is the same whatever the cut). ``rows_alone``: each
        row of ``states`` is computed alone (a :class:`~solver.flight.Parabola`:
        its rows are the same bits whatever the times asked with them), so the
        vectorised frames are built ``VECTOR_CHUNK`` at a time, with the same
        look at ``deadline`` between two blocks: a free flight to ``t_end`` at
        1 ms holds 1e5 samples, whose frames took one step 0.6 s (a window's
        worker then kept the interpreter lock from the window).
        """
        last = min(limit, self.s.t_end * (1 + 1e-12))
        if self.next_sample * self.s.dt_out > last:
            return True
        top = math.floor(last / self.s.dt_out) + 2
        end = self.s.t_end * (1 + 1e-12)
        if top - self.next_sample <= FEW_SAMPLES:
            # the same grid times and tests in floats (k · dt_out as numpy forms it)
            due = []
            for k in range(self.next_sample, top):
                t = k * self.s.dt_out
                if not (t <= end and (t < limit or (t == limit and inclusive))):
                    break
                due.append(t)
            count = len(due)
            if not count:
                return True
            if state is None:  # the current state at every time due
                out.frames += [self._current_frame(t, "sample") for t in due]
                self.next_sample += count
                return True
            if states is None:  # one state at a time: the grid times as they are
                out.frames += [self.frame(t, "sample", state(t)) for t in due]
                self.next_sample += count
                return True
            ts = np.array(due)
        else:
            ks = np.arange(self.next_sample, top)
            ts = ks * self.s.dt_out
            keep = (ts <= end) & ((ts < limit) | ((ts == limit) & inclusive))
            # the grid is increasing: the samples due are a leading run of ``keep``
            count = int(keep.argmin()) if not keep.all() else len(ks)
            if not count:
                return True
            ts = ts[:count]
        if states is not None and rows_alone:
            for start in range(0, count, VECTOR_CHUNK):
                block = ts[start : start + VECTOR_CHUNK]
                out.frames += self._sample_frames(block, states(block))
                self.next_sample += len(block)
                if start + VECTOR_CHUNK < count and time.monotonic() > deadline:
                    return False
            return True
        if states is not None:
            out.frames += self._sample_frames(ts, states(ts))
            self.next_sample += count
            return True
        for start in range(0, count, SAMPLE_CHUNK):
            chunk = ts[start : start + SAMPLE_CHUNK]
            if state is None:
                out.frames += [self._current_frame(float(t), "sample") for t in chunk]
            else:
                out.frames += [self.frame(float(t), "sample", state(float(t))) for t in chunk]
            self.next_sample += len(chunk)
            if start + SAMPLE_CHUNK < count and time.monotonic() > deadline:
                return False
        return True

    def finish(self, out: StepOutput) -> None:
        if not out.frames or out.frames[-1].t < self.s.t_end:
            out.frames.append(self._current_frame(self.s.t_end, "sample"))
        self.m.status = "finished"
        self.m.message = f"reached t_end = {self.s.t_end:g} s"
