"""Moreau–Jean time-stepping: one velocity-level LCP per step (MECHANICS §4).

The robust alternative to the event-driven stepper for scenes with many
contacts: no event location, impacts and persistent contact are the same
velocity-level problem, first order in the step ``h`` (better where the
steps are cut at impacts, below). One step of size
``h`` from ``(t_k, q_k, v_k)`` with ``θ ∈ [1/2, 1]``:

    q_θ     = q_k + (1 − θ) h v_k                      (mid-step for θ = 1/2)
    v_k+1   = v_k + h M⁻¹ f(t_k + (1 − θ) h, q_θ, v_k) + M⁻¹ (Σ G_i Λ_i + Σ H_i Λ_t,i)
    q_k+1   = q_k + h ((1 − θ) v_k + θ v_k+1)

θ = 1/2 is Moreau's midpoint scheme (leapfrog between impacts); θ = 1 is
symplectic Euler between impacts. The contacts closed at mid-step,
``g_i(q_θ) + (θ − 1/2) h u_n,i ≤ 0``, carry Moreau's velocity-level Newton
law and Coulomb friction with the 2-edge cone (Anitescu & Potra 1997; in
the plane it stays an LCP), solved exactly — by one linear solve when the
previous step's positive unknowns still give a solution, else by
:func:`complementarity.lemke`:

    Λ_n ≥ 0  ⊥  u_n⁺ + e u_n⁻ ≥ 0
    Λ_+ ≥ 0  ⊥  β + u_t⁺ ≥ 0,     Λ_− ≥ 0  ⊥  β − u_t⁺ ≥ 0
    β   ≥ 0  ⊥  μ Λ_n − Λ_+ − Λ_− ≥ 0

with ``u⁻ = G·v_k``, ``u⁺ = G·v_k+1`` and the tangential impulse
``Λ_t = Λ_+ − Λ_−`` (N·s along the contact tangent ``t``). Beyond
``EXACT_CONTACTS`` closed contacts, frictionless ones whose sparse Delassus
matrix ``G M⁻¹ Gᵀ`` is banded (a chain) are still solved exactly, by block
principal pivoting on banded Cholesky factors; the others (a heap, friction)
by projected Gauss–Seidel on the sparse Delassus operator
(:mod:`solver.gauss_seidel`), warm-started from the previous step's
impulses, as game engines do. The contact kinematics of all candidate pairs
are computed on arrays (:mod:`solver.contact_arrays`); the candidate pairs
are searched again only when some disk has moved far enough to close a pair
that was not a candidate.

**Steps cut at impacts.** Moreau–Jean meets an impact at mid-step whatever
its instant in the step, so positions after it are off by up to
``(1 + e) |u_n| h`` (the first bounce of paper 004's wheel sank 3 mm into
the floor at h = 1 ms, and the sequence of impacts that followed took
another course). A pair open at a step's start (gap above ``GAP_TOL``)
whose gap, predicted to second order from the kinematics at ``q_θ``, is
closed at the step's end (approaching faster than ``CUT_SPEED`` of the
fastest closing speed; a pair with a wheel: beads on rails keep plain
steps) cuts the step at its closing instant, found by
Newton's method on the gap along the step's free motion
``q + τ v + θ τ² a``: a Moreau–Jean step up to it, a step of length zero
there (Moreau's impact law alone: the LCP above with ``v_free = v``, every
contact it presses is an impact) and the rest of the step, cut again at
most ``CUTS_PER_STEP`` times (an accumulation of impacts is left to plain
steps). Each piece is a plain Moreau–Jean step; the cut is the
time-of-impact sub-step of game engines (Mirtich's conservative
advancement; Box2D's ``SolveTOI``) applied to the velocity-level LCP.
Between impacts θ = 1/2 is exact under constant forces, so at h = 1 ms the
wheel's error at t = 1 s falls from 0.23 m to 1.6e-4 m (docs/SCALE.md).

A persistent contact reports the force ``λ = Λ_n / h``; a contact whose approach speed is
far above what finite forces reach in one step (``IMPACT_SPEED_STEPS``), and
above round-off (``ROUND_OFF`` times the fastest closing speed: beads of a
chain moving together touch at speeds of 1e-18 m/s), is an impact and gets
an ``impact`` event with ``pre`` / ``post`` frames at ``t_k + (1 − θ) h``
(at the closing instant for a cut step).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from solver import event_tolerances, timestep_kernels
from solver.contact import SLIP_SPEED_TOL
from solver.errors import InputError, SolverError
from solver.frames import ContactState, EnergyBudget, Event, Frame, StepOutput
from solver.timestep_accuracy import (
    ALL_PAIRS,
    DRIFT_BOUND,
    PENETRATION_BOUND,
    STEP_FRACTION,
    AccuracyMonitor,
    largest_step,
)
from solver.timestep_contacts import (
    CUT_SPEED,
    GAP_TOL,
    QUERY_MARGIN,
    SCALAR_PAIRS,
    Closed,
    ContactDetector,
    Hits,
)
from solver.timestep_instant import ROOT_ITERATIONS, ROOT_TOL, ClosingInstant
from solver.timestep_lcp import (
    BAND_MAX,
    CONTACT_SOLVERS,
    EXACT_CONTACTS,
    PGS_MAX_SWEEPS,
    PGS_TOL,
    ROUND_OFF,
    StepContactSolver,
)

if TYPE_CHECKING:
    from solver.system import System

DEFAULT_STEP = 1e-4
"""Default step ``h`` (s), the scene's ``solver.dt`` default."""


IMPACT_SPEED_STEPS = 10.0
"""An approach speed above this many steps' worth of normal acceleration is an impact."""


CUTS_PER_STEP = 8
"""Most closing instants a step is cut at; the rest of the step is plain Moreau–Jean (an
accumulation of impacts, as a ball coming to rest, is absorbed by it)."""


SLICE_CHECK_STEPS = 64
"""Steps between two looks at the clock: ``step()`` returns once ``STEP_WALL_SLICE_S`` is spent."""


KERNEL_CHUNK = 4096
"""Most steps of one call of the compiled loop, the bounded unit of work past the slice."""


__all__ = [  # the stepper's module names, its parts' constants among them
    "ALL_PAIRS",
    "BAND_MAX",
    "CONTACT_SOLVERS",
    "CUTS_PER_STEP",
    "CUT_SPEED",
    "DEFAULT_STEP",
    "DRIFT_BOUND",
    "EXACT_CONTACTS",
    "GAP_TOL",
    "IMPACT_SPEED_STEPS",
    "KERNEL_CHUNK",
    "PENETRATION_BOUND",
    "PGS_MAX_SWEEPS",
    "PGS_TOL",
    "QUERY_MARGIN",
    "ROOT_ITERATIONS",
    "ROOT_TOL",
    "ROUND_OFF",
    "SCALAR_PAIRS",
    "SLICE_CHECK_STEPS",
    "STEP_FRACTION",
    "USE_KERNEL",
    "TimeSteppingStepper",
    "largest_step",
]  # fmt: skip

USE_KERNEL = timestep_kernels.COMPILED
"""With numba installed, quiet steps of small scenes run in the compiled loop of
:mod:`solver.timestep_kernels` and banded frictionless contacts are solved by
:mod:`solver.chain_lcp`; otherwise every step takes the numpy path, the reference."""


@dataclass(eq=False)
class _Interval:
    """Where the steps of an output interval are: kept across the calls of a cut ``step()``.

    From ``t_start`` to ``t_next`` in ``n_steps`` steps of ``h``; step ``k``
    has ``rest`` (s) left to make and was cut ``cuts`` times at closing
    instants; ``persistent`` are the last step's persistent contacts and
    ``out`` what the interval has produced so far (given at its sample).
    """

    t_start: float
    t_next: float
    n_steps: int
    h: float
    starting: bool
    k: int = 0
    rest: float = 0.0
    cuts: int = 0
    persistent: _Persistent | None = None
    out: StepOutput = field(default_factory=StepOutput)


@dataclass(frozen=True, eq=False)
class _Persistent:
    """What the output needs of a step's persistent contacts (built into states lazily).

    One entry per contact: the disk ``i``, the other disk ``j`` (−1) or the
    feature (−1 for a disk pair), contact point and normal, friction
    coefficient, forces (N) and end-of-step speeds (m/s).
    """

    i: np.ndarray
    j: np.ndarray
    feature: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    friction: np.ndarray
    force_n: np.ndarray
    force_t: np.ndarray
    u_n: np.ndarray
    u_t: np.ndarray


class TimeSteppingStepper:
    """Moreau–Jean time-stepping with a velocity-level LCP per step.

    Same shape as the event-driven stepper (``status``, ``t``, ``reached``,
    ``message``, ``system``, ``step()``): each ``step()`` advances to the
    next output sample and returns the sample frame, plus ``pre`` / ``post``
    frames and ``impact`` events of the impacts on the way, or returns empty
    once ``STEP_WALL_SLICE_S`` is spent and goes on at the next call. Output
    samples are at ``k · dt_out`` and at ``t_end``; each output interval is
    cut into equal steps no longer than ``h``, so samples fall exactly on
    step ends.

    Parameters
    ----------
    system : System
        The compiled scene.
    t_end : float
        End of the run, s (> 0).
    dt_out : float
        Spacing of output samples, s (> 0).
    h : float, optional
        Largest time step, s (> 0): accuracy against CPU time. Errors in
        positions after impacts shrink in proportion to ``h``; the cost grows
        as ``1/h``. Default ``DEFAULT_STEP``.
    theta : float, optional
        θ of the scheme, in [1/2, 1]; 1/2 (default) is second order between
        impacts, 1 is the classical first-order Moreau–Jean choice.
    contact_solver : {"auto", "lemke", "pgs"}, optional
        How the contact problem of a step is solved: ``"lemke"`` exactly,
        ``"pgs"`` by projected Gauss–Seidel (``PGS_TOL``, ``PGS_MAX_SWEEPS``),
        ``"auto"`` (default) exactly up to ``EXACT_CONTACTS`` closed
        contacts, beyond that exactly when frictionless with a banded
        Delassus matrix (``BAND_MAX``), else by Gauss–Seidel.

    Raises
    ------
    InputError
        When an argument is not a finite number in its range.
    """

    def __init__(
        self,
        system: System,
        t_end: float,
        dt_out: float,
        h: float = DEFAULT_STEP,
        theta: float = 0.5,
        contact_solver: str = "auto",
    ) -> None:
        for name, value in (("t_end", t_end), ("dt_out", dt_out), ("h", h)):
            if not math.isfinite(value) or value <= 0:
                raise InputError(f"`{name}` must be a finite number > 0, got {value!r}")
        if not 0.5 <= theta <= 1.0:
            raise InputError(f"`theta` must be in [0.5, 1], got {theta!r}")
        if contact_solver not in CONTACT_SOLVERS:
            raise InputError(
                f"`contact_solver` must be one of {', '.join(CONTACT_SOLVERS)}, "
                f"got {contact_solver!r}"
            )
        largest, why = largest_step(system)
        if h > largest:
            raise InputError(
                f"`solver.dt` = {h:g} s is too large for this scene: more than "
                f"{STEP_FRACTION:g} of {why}; the largest acceptable value is {largest:.6g} s"
            )
        self.system = system
        self.t_end = float(t_end)
        self.dt_out = float(dt_out)
        self.h = float(h)
        self.theta = float(theta)
        self.contact_solver = contact_solver
        self.t = 0.0
        self.q = np.array(system.q0, dtype=float)
        self.v = np.array(system.v0, dtype=float)
        self.status = "running"
        self.message = ""
        self._n_intervals = max(1, math.ceil(self.t_end / self.dt_out - 1e-9))
        self._interval = 0
        self._dissipated = 0.0
        self._input = 0.0
        self._m_inv = 1.0 / np.asarray(system.M_diag, dtype=float)
        self._closing_speed_now = self._closing_speed(self.v)
        self._feature_ids = [fid for fid, _, _, _ in system.features]
        self._disk_ids = [system.disk_body_id(k) for k in range(system.n_disks)]
        # the parts, each with its own state (docs/ARCHITECTURE.md, "The time-stepper")
        self._contacts = ContactDetector(system, self.theta)
        self._solver = StepContactSolver(self._m_inv, contact_solver, USE_KERNEL, self._names)
        self._instant = ClosingInstant(system, self.theta, self._m_inv)
        self._started = False
        self._cut: _Interval | None = None  # an interval cut at the slice, resumed by step()
        self.clock: Callable[[], float] = time.perf_counter
        """The clock of the wall-time slice, s (tests pass their own)."""
        self._compliant_friction = None  # the last step's friction on compliant features
        self.accuracy = AccuracyMonitor(system, self._contacts.candidate_disk_pairs)
        """The run's largest penetration and energy-balance drift so far (``accuracy`` rows)."""
        self._kernel_scene: timestep_kernels.KernelScene | None = None
        if USE_KERNEL and contact_solver != "pgs":
            self._kernel_scene = timestep_kernels.kernel_scene(system)
        if self._kernel_scene is not None:
            self._kernel_function = timestep_kernels.compiled_quiet_steps()
            capacity = EXACT_CONTACTS
            self._kernel_basis = (
                np.zeros(capacity, dtype=np.int64),
                np.zeros(4 * capacity, dtype=bool),
                np.array([-1, -1], dtype=np.int64),
            )
            self._q_prev, self._v_prev = np.zeros(system.N), np.zeros(system.N)
            self._kernel_status = np.zeros(4, dtype=np.int64)
            self._kernel_report = (np.zeros((0, 0)), np.zeros(0, dtype=np.int64))

    # ------------------------------------------------------------------ stepping

    def step(self) -> StepOutput:
        """Advance to the next output sample, or for ``STEP_WALL_SLICE_S`` of CPU time.

        The work of one call is bounded: the clock (``clock``) is read every
        ``SLICE_CHECK_STEPS`` steps (or compiled loop's calls of at most
        ``KERNEL_CHUNK`` steps), and once the slice is spent the call returns
        an empty output, keeping its place in the interval; the next call
        resumes there, so the run is the same bit for bit wherever it is cut.
        ``t`` (and ``reached``) is the time of the state, which moves on
        inside a cut interval.

        Returns
        -------
        StepOutput
            Frames in time order (the first sample also returns the sample at
            t = 0) and the events on the way, given when the sample is made.
            A failure (no solution of a contact LCP, a non-finite state) sets
            ``status = "failed"`` and ends the output with an ``error`` event
            instead of raising. After the run has finished or failed the
            output is empty.
        """
        if self.status != "running":
            return StepOutput()
        deadline = self.clock() + event_tolerances.STEP_WALL_SLICE_S
        span = self._cut
        if span is None:
            span = self._next_interval()
        out, t_start, h, n_steps = span.out, span.t_start, span.h, span.n_steps
        k, rest, cuts, persistent = span.k, span.rest, span.cuts, span.persistent
        check_at = k + SLICE_CHECK_STEPS
        try:
            # step k has `rest` (s) left to make, cut `cuts` times
            while k < n_steps:
                if k >= check_at:
                    if self.clock() > deadline:  # the slice is spent: go on at the next call
                        span.k, span.rest, span.cuts, span.persistent = k, rest, cuts, persistent
                        self._cut = span
                        return StepOutput()
                    check_at = k + SLICE_CHECK_STEPS
                t = t_start + (k + 1) * h - rest
                detect = cuts < CUTS_PER_STEP  # else this step is made plain, alone
                count = min(n_steps - k, KERNEL_CHUNK) if detect else 1
                made, last, hits = self._steps(t, rest, h, count, out, detect, GAP_TOL)
                if made:
                    persistent, k, rest, cuts = last, k + made, h, 0
                    t = t_start + k * h
                if hits is None:
                    continue
                instant = self._instant.instant(hits, self.t, self.q, self.v, rest)
                if instant is None:  # the pairs do not close after all: a plain step
                    persistent = self._steps(t, rest, h, 1, out, False, GAP_TOL)[1]
                    k, rest, cuts = k + 1, h, 0
                    continue
                if instant > 0.0:
                    self._steps(t, instant, h, 1, out, False, GAP_TOL)
                paths = self._instant.paths(hits, self.q, self.v, np.zeros(self.system.N))
                gaps = self._instant.gaps(hits, paths, np.zeros(len(hits.i)))[0]
                catch = GAP_TOL + max(0.0, float(np.min(gaps)))
                persistent = self._steps(t + instant, 0.0, h, 1, out, False, catch)[1]
                rest, cuts = rest - instant, cuts + 1
                if rest <= 0.0:
                    k, rest, cuts = k + 1, h, 0
        except (SolverError, np.linalg.LinAlgError) as error:
            self._cut = None
            self.status = "failed"
            self.message = f"t = {self.t!r} s: {error}"
            if span.starting:
                out.events[:0] = [row for _, row in self.accuracy.measure(out.frames[:1])]
            out.events.append(self.accuracy.report(self.t))
            out.events.append(Event(t=self.t, type="error", message=self.message))  # last
            return out
        self._cut = None
        self.t = span.t_next
        contacts = self._contact_states(persistent) if persistent is not None else ()
        out.frames.append(self._frame("sample", self.t, self.q, self.v, contacts))
        # measured after the steps, which leave the candidate pairs the measure reads; the
        # first sample's rows go first, as written before the steps
        # the impacts' pre and post frames too, as trajectory.csv
        rows = self.accuracy.measure(out.frames)
        if span.starting:
            out.events[:0] = [row for k, row in rows if k == 0]
        out.events += [row for k, row in rows if not (span.starting and k == 0)]
        if self._interval == self._n_intervals:
            self.status = "finished"
            out.events.append(self.accuracy.report(self.t))
            self.message = f"reached t_end = {self.t_end!r} s"
        return out

    def _next_interval(self) -> _Interval:
        """The steps to the next output sample (the first also gives the sample at t = 0)."""
        starting = not self._started
        out = StepOutput()
        if starting:
            self._started = True
            out.frames.append(self._frame("sample", self.t, self.q, self.v, ()))
        self._interval += 1
        if self._interval == self._n_intervals:
            t_next = self.t_end
        else:
            t_next = self._interval * self.dt_out
        t_start = self.t
        n_steps = max(1, math.ceil((t_next - t_start) / self.h - 1e-9))
        h = (t_next - t_start) / n_steps
        return _Interval(t_start, t_next, n_steps, h, starting, rest=h, out=out)

    @property
    def reached(self) -> float:
        """How far (s) the motion is computed: ``t``, inside a cut interval too."""
        return self.t

    def _quiet_steps(
        self,
        t: float,
        first_h: float,
        h: float,
        count: int,
        out: StepOutput,
        detect: bool,
        gap_tol: float,
    ) -> tuple[int, _Persistent | None, Hits | None]:
        """Up to ``count`` steps from ``t`` in the compiled loop (see :meth:`_steps`).

        Runs :func:`timestep_kernels.quiet_steps`; a step with impacts ends
        the call, and its events and frames are written here. With
        ``detect``, the loop stops before a step in which a pair closes (see
        :meth:`ContactDetector.closed_contacts`). Returns how many steps were made (0: the
        next step is not the loop's), the persistent contacts of the last
        one and the closing pairs of the step the loop stopped before.
        """
        scene = self._kernel_scene
        assert scene is not None
        kind, first, second, centres, margin = self._contacts.kernel_pairs(
            scene, self.q, self.v, h, self._closing_speed_now
        )
        q, v = self.q.copy(), self.v.copy()
        status = self._kernel_status
        size = max(len(kind), 1)
        if len(self._kernel_report[1]) != size:
            self._kernel_report = (
                np.zeros((size, timestep_kernels.REPORT_COLUMNS)),
                np.zeros(size, dtype=np.int64),
                np.zeros(size, dtype=np.int64),
                np.zeros(size, dtype=bool),
            )
        report, pairs, hit_pairs, impact = self._kernel_report
        dissipated = self._kernel_function(
            q, v, first_h, h, count, self.theta, self._dissipated, scene.accel, scene.m_inv,
            scene.ix, scene.iy, scene.iphi, scene.radius, scene.rail_y, kind, first, second,
            scene.feature_a, scene.feature_b, scene.feature_arc, scene.feature_restitution,
            scene.feature_friction, scene.disk_restitution, scene.disk_friction,
            scene.key_stride, centres, margin, EXACT_CONTACTS, self.contact_solver == "lemke",
            BAND_MAX, gap_tol, detect, CUT_SPEED, IMPACT_SPEED_STEPS,
            *self._kernel_basis, report, pairs, impact, hit_pairs, self._q_prev, self._v_prev,
            status,
        )  # fmt: skip
        outcome, made, n, n_hits = (int(x) for x in status)
        hits = None
        if outcome == timestep_kernels.CUT:
            hit = hit_pairs[:n_hits]
            disk_hit = kind[hit] == timestep_kernels.DISK
            hits = Hits(
                first[hit], np.where(disk_hit, second[hit], -1), np.where(disk_hit, -1, second[hit])
            )
        if not made:
            return 0, None, hits
        self._dissipated = float(dissipated)
        last_start = t if made == 1 else t + first_h + (made - 2) * h
        last = first_h if made == 1 else h
        self.q, self.v, self.t = q, v, last_start + last
        self._solver.forget_basis()
        self._contacts.forget_clearance()
        self._closing_speed_now = self._closing_speed(v)
        if n == 0:
            return made, None, hits
        pair = pairs[:n]
        disk_pair = kind[pair] == timestep_kernels.DISK
        i = first[pair]
        j = np.where(disk_pair, second[pair], -1)
        feature = np.where(disk_pair, -1, second[pair])
        if n > EXACT_CONTACTS:
            keys = i * self._contacts.key_stride + np.where(
                disk_pair, len(self._feature_ids) + j, feature
            )
            order = np.argsort(keys)
            self._solver.keep_impulses(keys[order], report[:n, :2][order])
        hit = impact[:n].copy()
        if outcome == timestep_kernels.IMPACT:
            t_theta = last_start + (1.0 - self.theta) * last
            self._report_impacts(
                i, j, feature, report[:n, 0].copy(), report[:n, 1].copy(), report[:n, 6].copy(),
                hit, self._q_prev.copy(), self._v_prev.copy(), v, scene.accel, last, t_theta,
                out,
            )  # fmt: skip
        rows = np.flatnonzero((report[:n, 0] > 0.0) & ~hit)
        return made, _Persistent(
            i[rows], j[rows], feature[rows], report[rows, 7:9].copy(),
            report[rows, 9:11].copy(), report[rows, 11].copy(), report[rows, 0] / last,
            report[rows, 1] / last, report[rows, 3].copy(), report[rows, 5].copy(),
        ), hits  # fmt: skip

    def _steps(
        self,
        t: float,
        first_h: float,
        h: float,
        count: int,
        out: StepOutput,
        detect: bool,
        gap_tol: float,
    ) -> tuple[int, _Persistent | None, Hits | None]:
        """Up to ``count`` Moreau–Jean steps from ``t``, the first of length ``first_h`` (≥ 0;
        0: the impact law alone), the others ``h``.

        In the compiled loop when it takes them, else one step on the numpy
        path. With ``detect``, a step in which a pair open at its start
        closes is not made: the steps stop before it and its closing pairs
        are returned. Returns the number of steps made, the persistent
        contacts of the last one and the closing pairs.
        """
        if self._kernel_scene is not None:
            made, persistent, hits = self._quiet_steps(t, first_h, h, count, out, detect, gap_tol)
            if made or hits is not None:
                return made, persistent, hits
            self._kernel_basis[2][0] = -1
        persistent, hits = self._advance(t, first_h, out, detect, gap_tol)
        return (0, None, hits) if hits is not None else (1, persistent, None)

    def _advance(
        self, t: float, h: float, out: StepOutput, detect: bool = False, gap_tol: float = GAP_TOL
    ) -> tuple[_Persistent | None, Hits | None]:
        """One Moreau–Jean step of length ``h`` (≥ 0; 0: the impact law alone) from ``t``.

        Returns the persistent contacts; with ``detect``, when a pair open at
        the start closes within the step, the step is not made and those
        pairs are returned instead (see :meth:`ContactDetector.closed_contacts`).
        """
        system, theta = self.system, self.theta
        q, v = self.q, self.v
        t_theta = t + (1.0 - theta) * h
        q_theta = q + (1.0 - theta) * h * v
        accel = self._m_inv * system.applied_force(t_theta, q_theta, v)
        v_free = v + h * accel
        friction = None
        if system.compliance is not None and h > 0.0:  # wheels rubbing on compliant features
            friction = system.compliance.friction_impulses(q_theta, v, v_free, self._m_inv, h)
            if friction is not None:
                v_free = v_free + friction.dv
        if not np.all(np.isfinite(v_free)):
            raise SolverError("the applied forces are no longer finite")
        closing_speed = self._closing_speed_now
        closed, hits = self._contacts.closed_contacts(
            q_theta, v, h, closing_speed, accel, detect, gap_tol
        )
        if hits is not None:
            return None, hits
        if closed is not None:
            impulse_n, impulse_t, v_next = self._solver.solve(closed, v, v_free, t_theta)
        else:
            impulse_n = impulse_t = np.zeros(0)
            v_next = v_free
        q_next = q + h * ((1.0 - theta) * v + theta * v_next)
        if not np.all(np.isfinite(q_next)):
            raise SolverError("the state is no longer finite (step too large for the forces?)")

        if h > 0.0:
            v_mean = (q_next - q) / h
            self._input += h * system.input_power(t_theta, q_theta, v_mean)
            self._dissipated += h * system.damping_power(q_theta, v_mean)
        if friction is not None:
            self._dissipated -= friction.work(v, v_next)
        self._compliant_friction = friction
        persistent = None
        if closed is not None:
            persistent = self._account(
                closed, impulse_n, impulse_t, v, v_next, accel, h, t_theta, out
            )
        self._closing_speed_now = self._closing_speed(v_next)
        closing_speed = max(closing_speed, self._closing_speed_now)
        self._contacts.stepped(closed is not None, h * closing_speed)
        self.q, self.v, self.t = q_next, v_next, t + h
        return persistent, None

    def _account(
        self,
        closed: Closed,
        impulse_n: np.ndarray,
        impulse_t: np.ndarray,
        v: np.ndarray,
        v_next: np.ndarray,
        accel: np.ndarray,
        h: float,
        t_theta: float,
        out: StepOutput,
    ) -> _Persistent:
        """Work of the impulses, impact events and frames; the persistent contacts."""
        pressing = impulse_n > 0.0
        G, H = closed.G, closed.H
        u_n0, u_n1 = G.dot(v), G.dot(v_next)
        u_t0, u_t1 = H.dot(v), H.dot(v_next)
        work = 0.5 * (impulse_n * (u_n0 + u_n1) + impulse_t * (u_t0 + u_t1))
        smooth_speed = IMPACT_SPEED_STEPS * h * (np.abs(G.dot(accel)) + np.abs(closed.rows.gamma_n))
        round_off = ROUND_OFF * self._closing_speed_now
        impact = pressing & ((h == 0.0) | (-u_n0 > smooth_speed + round_off))
        if not np.any(impact):
            self._dissipated -= float(work[pressing].sum())
        else:
            self._report_impacts(
                closed.rows.i, closed.rows.j, closed.rows.feature, impulse_n, impulse_t, work,
                impact, self.q, v, v_next, accel, h, t_theta, out,
            )  # fmt: skip
        rows = np.flatnonzero(pressing & ~impact)
        return _Persistent(
            closed.rows.i[rows], closed.rows.j[rows], closed.rows.feature[rows],
            closed.rows.point[rows], closed.rows.n[rows], closed.friction[rows],
            impulse_n[rows] / h, impulse_t[rows] / h, u_n1[rows], u_t1[rows],
        )  # fmt: skip

    def _report_impacts(
        self,
        i: np.ndarray,
        j: np.ndarray,
        feature: np.ndarray,
        impulse_n: np.ndarray,
        impulse_t: np.ndarray,
        work: np.ndarray,
        impact: np.ndarray,
        q: np.ndarray,
        v: np.ndarray,
        v_next: np.ndarray,
        accel: np.ndarray,
        h: float,
        t_theta: float,
        out: StepOutput,
    ) -> None:
        """A step with impacts: the work of its impulses, ``impact`` events, pre/post frames.

        ``q`` and ``v`` are the state at the step's start; the contacts are
        given by their disks and features (``i``, ``j``, ``feature``).
        """
        theta = self.theta
        pressing = impulse_n > 0.0
        v_pre = v + (1.0 - theta) * h * accel
        v_post = v_next - theta * h * accel
        impacts = []
        hits = np.flatnonzero(impact)
        for k, lam_n, lam_t, energy_change in zip(
            hits.tolist(),
            impulse_n[hits].tolist(),
            impulse_t[hits].tolist(),
            work[hits].tolist(),
            strict=True,
        ):
            body, other = self._names(int(i[k]), int(j[k]), int(feature[k]))
            impacts.append(
                Event(
                    t=t_theta,
                    type="impact",
                    body=body,
                    other=other,
                    normal_impulse=lam_n,
                    tangent_impulse=lam_t,
                    stages=1,
                    energy_change=energy_change,
                    v_minus=v_pre,
                    v_plus=v_post,
                )
            )
        # in the order of the contacts, as a running sum would add them
        for w in work[pressing].tolist():
            self._dissipated -= w
        q_theta = q + (1.0 - theta) * h * v
        dissipated_before = self._dissipated + float(work[hits].sum())
        out.frames.append(self._frame("pre", t_theta, q_theta, v_pre, (), dissipated_before))
        out.frames.append(self._frame("post", t_theta, q_theta, v_post, ()))
        out.events.extend(impacts)

    def _closing_speed(self, v: np.ndarray) -> float:
        """Bound on the rate at which any gap can shrink, m/s: twice the fastest centre."""
        if not self.system.n_disks:
            return 0.0
        cd = self.system.centre_velocities(v)
        return 2.0 * math.sqrt(float(np.max(np.einsum("kd,kd->k", cd, cd))))

    # ------------------------------------------------------------------ output

    def _names(self, i: int, j: int, feature: int) -> tuple[str, str]:
        """Scene ids ``(body, other)`` of disk ``i``'s contact with disk ``j`` or ``feature``."""
        body = self._disk_ids[i]
        if j >= 0:
            return body, self._disk_ids[j]
        return body, self._feature_ids[feature]

    def _contact_states(self, persistent: _Persistent) -> tuple[ContactState, ...]:
        """The persistent contacts of a step as ContactState objects (made for output only)."""
        return tuple(
            _contact_state(*self._names(i, j, feature), *values)
            for i, j, feature, *values in zip(
                persistent.i.tolist(),
                persistent.j.tolist(),
                persistent.feature.tolist(),
                persistent.point.tolist(),
                persistent.normal.tolist(),
                persistent.friction.tolist(),
                persistent.force_n.tolist(),
                persistent.force_t.tolist(),
                persistent.u_n.tolist(),
                persistent.u_t.tolist(),
                strict=True,
            )
        )

    def _frame(
        self,
        kind: str,
        t: float,
        q: np.ndarray,
        v: np.ndarray,
        contacts: tuple[ContactState, ...],
        dissipated: float | None = None,
    ) -> Frame:
        """A frame with the energy budget; ``dissipated`` (J) defaults to the running total."""
        kinetic, potential, spring = self.system.energy(q, v)
        if self.system.compliance is not None:  # compliant contacts are forces: λ = F
            friction = self._compliant_friction
            tangential = friction.forces() if friction is not None else None
            contacts = contacts + tuple(self.system.compliance.states(q, v, tangential=tangential))
        energy = EnergyBudget(
            kinetic=kinetic,
            potential=potential,
            spring=spring,
            dissipated=float(self._dissipated if dissipated is None else dissipated),
            input=self._input,
        )
        return Frame(
            t=t,
            kind=kind,
            q=q.copy(),
            v=v.copy(),
            contacts=contacts,
            energy=energy,
        )


def _contact_state(
    body: str,
    other: str,
    point: list[float],
    normal: list[float],
    friction: float,
    lam: float,
    friction_force: float,
    u_n: float,
    u_t: float,
) -> ContactState:
    """A persistent contact's state: normal force ``lam`` and tangential force (N), end speeds."""
    if abs(u_t) <= SLIP_SPEED_TOL:
        mode = "stick"
    else:
        mode = "slip+" if u_t > 0 else "slip-"
    tau = 0.0
    if friction > 0.0 and friction_force != 0.0:
        tau = -friction_force / (friction * lam)
    return ContactState(
        body=body,
        other=other,
        lam=lam,
        tau=tau,
        u_n=u_n,
        u_t=u_t,
        mode=mode,
        point=(point[0], point[1]),
        normal=(normal[0], normal[1]),
        friction=friction,
    )
