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
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from solver import chain_lcp, gauss_seidel, timestep_kernels
from solver.broadphase import StaticIndex
from solver.complementarity import banded_lcp, lemke
from solver.contact import SLIP_SPEED_TOL
from solver.contact_arrays import (
    ContactArrays,
    SparseRows,
    disk_disk,
    empty_contacts,
    from_disk_contacts,
)
from solver.errors import InputError, SolverError
from solver.frames import ContactState, EnergyBudget, Event, Frame, StepOutput
from solver.geometry import disk_disk_contact, disk_feature_contact

if TYPE_CHECKING:
    from solver.system import System

DEFAULT_STEP = 1e-4
"""Default step ``h`` (s), the scene's ``solver.dt`` default."""

GAP_TOL = 1e-10
"""Gap (m) at or below which a contact counts as closed: absorbs round-off at rest."""

ROUND_OFF = 1e-13
"""Relative size below which a free contact speed in the LCP is round-off and set to 0."""

QUERY_MARGIN = 0.5
"""Candidate pairs are looked for within this share of the smallest radius, so that the
search can be skipped until the disks have moved that far."""

IMPACT_SPEED_STEPS = 10.0
"""An approach speed above this many steps' worth of normal acceleration is an impact."""

SCALAR_PAIRS = 8
"""Up to this many candidate pairs the kinematics are computed pair by pair (cheaper)."""

EXACT_CONTACTS = 8
"""Most closed contacts whose LCP is solved exactly (Lemke); more go to Gauss–Seidel."""

BAND_MAX = 8
"""Widest band of a frictionless Delassus matrix solved exactly (block principal pivoting)."""

PGS_TOL = 1e-10
"""Gauss–Seidel stops when no impulse changed by more than this share of the largest."""

PGS_MAX_SWEEPS = 50
"""Most Gauss–Seidel sweeps per step."""

CUTS_PER_STEP = 8
"""Most closing instants a step is cut at; the rest of the step is plain Moreau–Jean (an
accumulation of impacts, as a ball coming to rest, is absorbed by it)."""

CUT_SPEED = 1e-6
"""A closing pair cuts its step only when it approaches faster than this share of the
fastest closing speed (beads of a chain that move together touch again at 1e-8 m/s: their
contacts are left to plain steps, as persistent ones)."""

ROOT_ITERATIONS = 30
"""Most Newton (or bisection) iterations locating a closing instant."""

ROOT_TOL = 1e-12
"""A closing instant is located when Newton's last change is below this share of the step."""

CONTACT_SOLVERS = ("auto", "lemke", "pgs")
STEP_FRACTION = 1.0 / 20.0
"""Largest step as a fraction of the scene's shortest period (docs/MECHANICS.md §6):
``h ω <= 2π/20 ≈ 0.31`` keeps the midpoint scheme's phase error under 0.5 % a period
(``(hω)²/24``) and far inside its stability bound ``hω < 2``."""
PENETRATION_BOUND = 0.01
"""Penetration (fraction of the smallest disk radius) past which an ``accuracy`` row is written."""
DRIFT_BOUND = 0.01
"""Energy-balance drift (fraction of the energy scale) past which an ``accuracy`` row is written."""

USE_KERNEL = timestep_kernels.COMPILED
"""With numba installed, quiet steps of small scenes run in the compiled loop of
:mod:`solver.timestep_kernels` and banded frictionless contacts are solved by
:mod:`solver.chain_lcp`; otherwise every step takes the numpy path, the reference."""


@dataclass(frozen=True, eq=False)
class _Closed:
    """The closed contacts of a step: kinematics, Jacobian rows, laws and identities."""

    rows: ContactArrays
    G: SparseRows
    H: SparseRows
    restitution: np.ndarray
    friction: np.ndarray
    keys: np.ndarray  # one integer per pair, stable from step to step

    def __len__(self) -> int:
        return len(self.keys)


@dataclass(frozen=True, eq=False)
class _Hits:
    """Pairs that close within a step: disk ``i``, other disk ``j`` (−1) or ``feature`` (−1)."""

    i: np.ndarray
    j: np.ndarray
    feature: np.ndarray


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

    Same shape as the event-driven stepper (``status``, ``t``, ``message``,
    ``system``, ``step()``): each ``step()`` advances to the next output
    sample and returns the sample frame, plus ``pre`` / ``post`` frames and
    ``impact`` events of the impacts on the way. Output samples are at
    ``k · dt_out`` and at ``t_end``; each output interval is cut into equal
    steps no longer than ``h``, so samples fall exactly on step ends.

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
        self._query_margin = QUERY_MARGIN * float(np.min(system.radii, initial=1.0))
        self._clearance = -math.inf  # every gap is at least this, m (-inf: unknown)
        self._closing_speed_now = self._closing_speed(self.v)
        features = system.features
        self._feature_ids = [fid for fid, _, _, _ in features]
        self._disk_ids = [system.disk_body_id(k) for k in range(system.n_disks)]
        self._feature_restitution = np.array([e for _, _, e, _ in features], dtype=float)
        self._feature_friction = np.array([mu for _, _, _, mu in features], dtype=float)
        self._static_index = StaticIndex([f for _, f, _, _ in features]) if features else None
        self._key_stride = len(features) + system.n_disks
        self._candidates: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._candidate_tables: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._candidate_centres = np.zeros((0, 2))
        self._candidate_margin = 0.0
        self._basis_keys = np.zeros(0, dtype=np.int64)  # contacts of the last LCP solved
        self._basis = np.zeros(0, dtype=bool)  # its unknowns that were positive
        self._warm_keys = np.zeros(0, dtype=np.int64)  # sorted keys of the last impulses
        self._warm = np.zeros((0, 2))  # their (Λ_n, Λ_t), N·s
        self._started = False
        self.accuracy = _Accuracy(system)
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
        """Advance to the next output sample.

        Returns
        -------
        StepOutput
            Frames in time order (the first call also returns the sample at
            t = 0) and the events on the way. A failure (no solution of a
            contact LCP, a non-finite state) sets ``status = "failed"`` and
            ends the output with an ``error`` event instead of raising.
            After the run has finished or failed the output is empty.
        """
        out = StepOutput()
        if self.status != "running":
            return out
        if not self._started:
            self._started = True
            out.frames.append(self._frame("sample", self.t, self.q, self.v, ()))
            self.accuracy.measure(out.frames[-1], out)
        self._interval += 1
        if self._interval == self._n_intervals:
            t_next = self.t_end
        else:
            t_next = self._interval * self.dt_out
        t_start = self.t
        n_steps = max(1, math.ceil((t_next - t_start) / self.h - 1e-9))
        h = (t_next - t_start) / n_steps
        persistent = None
        try:
            k, rest, cuts = 0, h, 0  # step k has `rest` (s) left to make, cut `cuts` times
            while k < n_steps:
                t = t_start + (k + 1) * h - rest
                detect = cuts < CUTS_PER_STEP  # else this step is made plain, alone
                made, last, hits = self._steps(
                    t, rest, h, n_steps - k if detect else 1, out, detect, GAP_TOL
                )
                if made:
                    persistent, k, rest, cuts = last, k + made, h, 0
                    t = t_start + k * h
                if hits is None:
                    continue
                instant = self._impact_instant(hits, rest)
                if instant is None:  # the pairs do not close after all: a plain step
                    persistent = self._steps(t, rest, h, 1, out, False, GAP_TOL)[1]
                    k, rest, cuts = k + 1, h, 0
                    continue
                if instant > 0.0:
                    self._steps(t, instant, h, 1, out, False, GAP_TOL)
                paths = self._hit_paths(hits, np.zeros(self.system.N))
                gaps = self._hit_gaps(hits, paths, np.zeros(len(hits.i)))[0]
                catch = GAP_TOL + max(0.0, float(np.min(gaps)))
                persistent = self._steps(t + instant, 0.0, h, 1, out, False, catch)[1]
                rest, cuts = rest - instant, cuts + 1
                if rest <= 0.0:
                    k, rest, cuts = k + 1, h, 0
        except (SolverError, np.linalg.LinAlgError) as error:
            self.status = "failed"
            self.message = f"t = {self.t!r} s: {error}"
            out.events.append(self.accuracy.report(self.t))
            out.events.append(Event(t=self.t, type="error", message=self.message))  # last
            return out
        self.t = t_next
        contacts = self._contact_states(persistent) if persistent is not None else ()
        out.frames.append(self._frame("sample", self.t, self.q, self.v, contacts))
        for frame in out.frames:  # the impacts' pre and post frames too, as trajectory.csv
            self.accuracy.measure(frame, out)
        if self._interval == self._n_intervals:
            self.status = "finished"
            out.events.append(self.accuracy.report(self.t))
            self.message = f"reached t_end = {self.t_end!r} s"
        return out

    def _quiet_steps(
        self,
        t: float,
        first_h: float,
        h: float,
        count: int,
        out: StepOutput,
        detect: bool,
        gap_tol: float,
    ) -> tuple[int, _Persistent | None, _Hits | None]:
        """Up to ``count`` steps from ``t`` in the compiled loop (see :meth:`_steps`).

        Runs :func:`timestep_kernels.quiet_steps`; a step with impacts ends
        the call, and its events and frames are written here. With
        ``detect``, the loop stops before a step in which a pair closes (see
        :meth:`_closed_contacts`). Returns how many steps were made (0: the
        next step is not the loop's), the persistent contacts of the last
        one and the closing pairs of the step the loop stopped before.
        """
        scene = self._kernel_scene
        assert scene is not None
        kind, first, second, centres, margin = self._kernel_pairs(h)
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
            hits = _Hits(
                first[hit], np.where(disk_hit, second[hit], -1), np.where(disk_hit, -1, second[hit])
            )
        if not made:
            return 0, None, hits
        self._dissipated = float(dissipated)
        last_start = t if made == 1 else t + first_h + (made - 2) * h
        last = first_h if made == 1 else h
        self.q, self.v, self.t = q, v, last_start + last
        self._basis_keys = np.zeros(0, dtype=np.int64)
        self._clearance = -math.inf
        self._closing_speed_now = self._closing_speed(v)
        if n == 0:
            return made, None, hits
        pair = pairs[:n]
        disk_pair = kind[pair] == timestep_kernels.DISK
        i = first[pair]
        j = np.where(disk_pair, second[pair], -1)
        feature = np.where(disk_pair, -1, second[pair])
        if n > EXACT_CONTACTS:
            keys = i * self._key_stride + np.where(disk_pair, len(self._feature_ids) + j, feature)
            order = np.argsort(keys)
            self._warm_keys = keys[order]
            self._warm = report[:n, :2][order]
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

    def _kernel_pairs(
        self, h: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
        """The pairs the compiled loop looks at: kinds, disks, others; search centres, margin.

        All pairs of a small scene (margin ``inf``), else the candidate pairs,
        searched again first when the disks may have left them (as
        :meth:`_closed_contacts` does).
        """
        scene = self._kernel_scene
        assert scene is not None
        if scene.all_pairs:
            return scene.pair_kind, scene.pair_i, scene.pair_j, np.zeros((0, 2)), math.inf
        c = self.system.centres(self.q + (1.0 - self.theta) * h * self.v)
        needed = GAP_TOL + h * self._closing_speed_now
        if self._candidates is None or 2.0 * self._largest_move(c) >= (
            self._candidate_margin - needed
        ):
            self._search_candidates(c, max(needed, self._query_margin))
        if self._candidate_tables is None:
            disk, feature, pairs = self._candidates
            self._candidate_tables = (
                np.concatenate((scene.feature_kind[feature],
                                np.full(len(pairs), timestep_kernels.DISK))).astype(np.int64),
                np.concatenate((disk, pairs[:, 0])).astype(np.int64),
                np.concatenate((feature, pairs[:, 1])).astype(np.int64),
            )  # fmt: skip
        return (*self._candidate_tables, self._candidate_centres, self._candidate_margin)

    def _steps(
        self,
        t: float,
        first_h: float,
        h: float,
        count: int,
        out: StepOutput,
        detect: bool,
        gap_tol: float,
    ) -> tuple[int, _Persistent | None, _Hits | None]:
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

    def _hit_paths(self, hits: _Hits, accel: np.ndarray) -> tuple[np.ndarray, ...]:
        """Centres (m), their velocities (m/s) and free accelerations (m/s²) of the disks of
        ``hits`` now, shape (K, 2) each: disk ``i``, then the other disk (its own where none)."""
        system = self.system
        other = np.where(hits.j >= 0, hits.j, hits.i)
        c, cd = system.centres(self.q), system.centre_velocities(self.v)
        ca = system.centre_velocities(accel)
        return c[hits.i], cd[hits.i], ca[hits.i], c[other], cd[other], ca[other]

    def _hit_gaps(
        self, hits: _Hits, paths: tuple[np.ndarray, ...], tau: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Gaps (m) and their rates (m/s) of the pairs ``hits`` after free motions of ``tau``.

        The free motion of a Moreau–Jean step of length ``τ`` without
        contacts: centres ``c + τ ċ + θ τ² c̈``, at rate ``ċ + 2 θ τ c̈``
        (``paths``: :meth:`_hit_paths`; ``tau``: one time per pair, s). A pair
        whose kinematics do not exist there (the centre left the feature's
        Voronoi region) gets ``inf``. Up to ``SCALAR_PAIRS`` pairs one by
        one, beyond on arrays (:mod:`solver.contact_arrays`).
        """
        radii, count = self.system.radii, len(hits.i)
        if count <= SCALAR_PAIRS:
            lists = tuple(path.tolist() for path in paths)
            gaps, rates = zip(
                *(self._hit_gap(hits, lists, k, float(tau[k])) for k in range(count)), strict=True
            )
            return np.array(gaps), np.array(rates)
        c_i, cd_i, ca_i, c_j, cd_j, ca_j = paths
        theta, tau = self.theta, tau[:, None]
        c_i = c_i + tau * cd_i + theta * tau * tau * ca_i
        cd_i = cd_i + 2.0 * theta * tau * ca_i
        c_j = c_j + tau * cd_j + theta * tau * tau * ca_j
        cd_j = cd_j + 2.0 * theta * tau * ca_j
        gaps, rates = np.full(count, math.inf), np.zeros(count)
        pair = hits.j >= 0
        if np.any(pair):
            n = int(np.sum(pair))
            rows = disk_disk(
                np.concatenate((c_i[pair], c_j[pair])), np.concatenate((cd_i[pair], cd_j[pair])),
                np.zeros(2 * n), np.concatenate((radii[hits.i[pair]], radii[hits.j[pair]])),
                np.arange(n), n + np.arange(n),
            )  # fmt: skip
            gaps[pair] = np.where(rows.valid, rows.g, math.inf)
            rates[pair] = np.where(rows.valid, rows.u_n, 0.0)
        if not np.all(pair):
            wall = ~pair
            rows = self.system.feature_arrays.contacts(
                np.arange(int(np.sum(wall))), hits.feature[wall], c_i[wall], cd_i[wall],
                np.zeros(int(np.sum(wall))), radii[hits.i[wall]],
            )  # fmt: skip
            gaps[wall] = np.where(rows.valid, rows.g, math.inf)
            rates[wall] = np.where(rows.valid, rows.u_n, 0.0)
        return gaps, rates

    def _hit_gap(
        self, hits: _Hits, lists: tuple[list, ...], k: int, tau: float
    ) -> tuple[float, float]:
        """:meth:`_hit_gaps` of pair ``k`` alone, in floats (``lists``: the paths as lists)."""
        c_i, cd_i, ca_i, c_j, cd_j, ca_j = (path[k] for path in lists)
        theta, radii = self.theta, self.system.radii
        x = (c_i[0] + tau * cd_i[0] + theta * tau * tau * ca_i[0],
             c_i[1] + tau * cd_i[1] + theta * tau * tau * ca_i[1])  # fmt: skip
        xd = (cd_i[0] + 2.0 * theta * tau * ca_i[0], cd_i[1] + 2.0 * theta * tau * ca_i[1])
        i, j = int(hits.i[k]), int(hits.j[k])
        if j >= 0:
            wx = x[0] - (c_j[0] + tau * cd_j[0] + theta * tau * tau * ca_j[0])
            wy = x[1] - (c_j[1] + tau * cd_j[1] + theta * tau * tau * ca_j[1])
            d = math.hypot(wx, wy)
            if d == 0.0:
                return math.inf, 0.0
            rate = (wx / d) * (xd[0] - cd_j[0] - 2.0 * theta * tau * ca_j[0]) + (wy / d) * (
                xd[1] - cd_j[1] - 2.0 * theta * tau * ca_j[1]
            )
            return d - float(radii[i]) - float(radii[j]), rate
        near = self.system.features[int(hits.feature[k])][1].nearest(x)
        if near is None:
            return math.inf, 0.0
        return near.d - float(radii[i]), float(near.n[0] * xd[0] + near.n[1] * xd[1])

    def _impact_instant(self, hits: _Hits, h: float) -> float | None:
        """Earliest instant (s after ``self.t``, in [0, h]) at which a pair of ``hits`` closes.

        Each pair's gap along the free motion of :meth:`_hit_gaps` is
        followed from 0 to ``h`` and its root found by Newton's method kept
        inside the bracket (all pairs at once); ``None`` when no pair's gap
        is closed at ``h``.
        """
        accel = self._m_inv * self.system.applied_force(self.t, self.q, self.v)
        paths = self._hit_paths(hits, accel)
        if len(hits.i) <= SCALAR_PAIRS:
            return self._few_instant(hits, tuple(path.tolist() for path in paths), h)
        start, _ = self._hit_gaps(hits, paths, np.zeros(len(hits.i)))
        end, _ = self._hit_gaps(hits, paths, np.full(len(hits.i), h))
        closing = end <= 0.0
        if not np.any(closing):
            return None
        if np.any(closing & (start <= 0.0)):
            return 0.0
        hits = _Hits(hits.i[closing], hits.j[closing], hits.feature[closing])
        paths = tuple(path[closing] for path in paths)
        start, end = start[closing], end[closing]
        low, high = np.zeros(len(start)), np.full(len(start), h)
        tau = h * start / (start - end)
        active = np.ones(len(start), dtype=bool)
        for _ in range(ROOT_ITERATIONS):
            gap, rate = self._hit_gaps(hits, paths, tau)
            above = gap > 0.0
            low = np.where(active & above, tau, low)
            high = np.where(active & ~above, tau, high)
            with np.errstate(divide="ignore", invalid="ignore"):
                newton = np.where((rate < 0.0) & np.isfinite(gap), tau - gap / rate, np.nan)
            done = active & (np.abs(newton - tau) <= ROOT_TOL * h)
            inside = (low < newton) & (newton < high)
            step = np.where(done | inside, newton, 0.5 * (low + high))
            tau = np.where(active, step, tau)
            active &= ~done
            if not np.any(active):
                break
        return float(np.min(tau))

    def _few_instant(self, hits: _Hits, lists: tuple[list, ...], h: float) -> float | None:
        """:meth:`_impact_instant` for a few pairs, one by one in floats (cheaper)."""
        instant = None
        for k in range(len(hits.i)):
            start, end = self._hit_gap(hits, lists, k, 0.0)[0], self._hit_gap(hits, lists, k, h)[0]
            if not end <= 0.0:
                continue
            if start <= 0.0:
                return 0.0
            low, high = 0.0, h
            tau = h * start / (start - end)
            for _ in range(ROOT_ITERATIONS):
                gap, rate = self._hit_gap(hits, lists, k, tau)
                if gap > 0.0:
                    low = tau
                else:
                    high = tau
                newton = tau - gap / rate if rate < 0.0 and math.isfinite(gap) else math.nan
                if abs(newton - tau) <= ROOT_TOL * h:
                    tau = newton
                    break
                tau = newton if low < newton < high else 0.5 * (low + high)
            instant = tau if instant is None else min(instant, tau)
        return instant

    def _advance(
        self, t: float, h: float, out: StepOutput, detect: bool = False, gap_tol: float = GAP_TOL
    ) -> tuple[_Persistent | None, _Hits | None]:
        """One Moreau–Jean step of length ``h`` (≥ 0; 0: the impact law alone) from ``t``.

        Returns the persistent contacts; with ``detect``, when a pair open at
        the start closes within the step, the step is not made and those
        pairs are returned instead (see :meth:`_closed_contacts`).
        """
        system, theta = self.system, self.theta
        q, v = self.q, self.v
        t_theta = t + (1.0 - theta) * h
        q_theta = q + (1.0 - theta) * h * v
        accel = self._m_inv * system.applied_force(t_theta, q_theta, v)
        v_free = v + h * accel
        if not np.all(np.isfinite(v_free)):
            raise SolverError("the applied forces are no longer finite")
        closing_speed = self._closing_speed_now
        closed, hits = self._closed_contacts(q_theta, v, h, closing_speed, accel, detect, gap_tol)
        if hits is not None:
            return None, hits
        if closed is not None:
            impulse_n, impulse_t, v_next = self._solve_contacts(closed, v, v_free, t_theta)
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
        persistent = None
        if closed is not None:
            persistent = self._account(
                closed, impulse_n, impulse_t, v, v_next, accel, h, t_theta, out
            )
        self._closing_speed_now = self._closing_speed(v_next)
        closing_speed = max(closing_speed, self._closing_speed_now)
        self._clearance = -math.inf if closed is not None else self._clearance - h * closing_speed
        self.q, self.v, self.t = q_next, v_next, t + h
        return persistent, None

    def _account(
        self,
        closed: _Closed,
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

    # ------------------------------------------------------------------ contacts

    def _closed_contacts(
        self,
        q_theta: np.ndarray,
        v: np.ndarray,
        h: float,
        closing_speed: float,
        accel: np.ndarray,
        detect: bool = False,
        gap_tol: float = GAP_TOL,
    ) -> tuple[_Closed | None, _Hits | None]:
        """Contacts predicted closed at mid-step: ``g(q_θ) + (θ − 1/2) h u_n ≤ gap_tol``.

        Skipped while ``self._clearance`` (a lower bound on every gap) shows
        that nothing can close within this step; ``None`` when nothing is
        closed. With ``detect``, the pairs that close within the step are
        returned instead of the closed contacts when there are any: those
        whose gap, predicted from its value ``g``, rate ``u_n`` and second
        derivative ``a_n = n·(a_i − a_j) + gamma_n`` at ``q_θ``, is above
        ``GAP_TOL`` at the step's start and at most ``GAP_TOL`` at its end,
        approaching faster than ``CUT_SPEED`` times the fastest closing speed,
        and involve a wheel (beads on their rails keep plain steps: a chain's
        strikes are the exact Moreau LCP's to spread, and cutting each of
        thousands of collisions would cost a round trip through Python).
        """
        if self._clearance - h * closing_speed > gap_tol or not self.system.n_disks:
            return None, None
        system = self.system
        lead = (self.theta - 0.5) * h
        needed = GAP_TOL + h * closing_speed
        c = system.centres(q_theta)
        moved = self._largest_move(c)
        if self._candidates is None or 2.0 * moved >= self._candidate_margin - needed:
            self._search_candidates(c, max(needed, self._query_margin))
            moved = 0.0
        rows = self._kinematics(c, system.centre_velocities(v), system.angular_velocities(v))
        if detect:
            centre_accel = system.centre_velocities(accel)
            wheel = np.asarray(system.disk_dofs.iy) >= 0
            pair = rows.j >= 0
            hit = rows.valid & (wheel[rows.i] | (pair & wheel[np.where(pair, rows.j, 0)]))
            hit &= _closing(rows, centre_accel, self.theta, h, closing_speed)
            if np.any(hit):
                return None, _Hits(rows.i[hit], rows.j[hit], rows.feature[hit])
        closed = rows.valid & (rows.g + lead * rows.u_n <= gap_tol)
        open_gaps = rows.g[rows.valid & ~closed]
        self._clearance = min(
            self._candidate_margin - 2.0 * moved, float(np.min(open_gaps, initial=math.inf))
        )
        if not np.any(closed):
            return None, None
        rows = rows.select(closed)
        G, H = system.disk_dofs.jacobians(rows)
        is_pair = rows.j >= 0
        feature = np.where(is_pair, 0, rows.feature)
        if len(self._feature_ids):
            restitution = np.where(
                is_pair, system.disk_restitution, self._feature_restitution[feature]
            )
            friction = np.where(is_pair, system.disk_friction, self._feature_friction[feature])
        else:
            restitution = np.full(len(rows), float(system.disk_restitution))
            friction = np.full(len(rows), float(system.disk_friction))
        keys = rows.i.astype(np.int64) * self._key_stride + np.where(
            is_pair, len(self._feature_ids) + rows.j, rows.feature
        )
        return _Closed(rows, G, H, restitution, friction, keys), None

    def _largest_move(self, c: np.ndarray) -> float:
        """Largest distance (m) of a disk centre from where the candidates were searched."""
        if self._candidates is None or len(c) != len(self._candidate_centres):
            return math.inf
        d = c - self._candidate_centres
        return math.sqrt(float(np.max(np.einsum("kd,kd->k", d, d))))

    def _search_candidates(self, c: np.ndarray, margin: float) -> None:
        """Disk–feature and disk–disk pairs that may come within ``margin`` (m) at ``c``."""
        radii = self.system.radii
        if self._static_index is not None:
            feature_pairs = self._static_index.query(c, radii, margin).pairs
        else:
            feature_pairs = np.zeros((0, 2), dtype=int)
        # compliant body–body contacts are forces (solver.compliance), not contacts
        pairs = _disk_pairs(c, radii, margin) if self.system.rigid_disk_pairs else _NO_PAIRS
        self._candidates = (feature_pairs[:, 0], feature_pairs[:, 1], pairs)
        self._candidate_tables = None
        self._candidate_centres = c.copy()
        self._candidate_margin = margin

    def _kinematics(self, c: np.ndarray, cd: np.ndarray, omega: np.ndarray) -> ContactArrays:
        """Kinematics of every candidate pair: disk–feature pairs first, then disk–disk."""
        assert self._candidates is not None
        disk, feature, pairs = self._candidates
        radii = self.system.radii
        if len(disk) + len(pairs) <= SCALAR_PAIRS:
            return self._few_kinematics(c, cd, omega)
        parts = []
        if len(disk):
            parts.append(self.system.feature_arrays.contacts(disk, feature, c, cd, omega, radii))
        if len(pairs):
            parts.append(disk_disk(c, cd, omega, radii, pairs[:, 0], pairs[:, 1]))
        if not parts:
            return empty_contacts()
        return parts[0] if len(parts) == 1 else ContactArrays.concatenate(parts)

    def _few_kinematics(self, c: np.ndarray, cd: np.ndarray, omega: np.ndarray) -> ContactArrays:
        """:meth:`_kinematics` for a few pairs, one :mod:`solver.geometry` call each."""
        assert self._candidates is not None
        disk, feature, pairs = self._candidates
        radii, features = self.system.radii, self.system.features
        contacts = [
            disk_feature_contact(features[f][1], c[k], cd[k], radii[k], omega[k])
            for k, f in zip(disk.tolist(), feature.tolist(), strict=True)
        ]
        contacts += [
            disk_disk_contact(c[a], cd[a], radii[a], omega[a], c[b], cd[b], radii[b], omega[b])
            for a, b in pairs.tolist()
        ]
        return from_disk_contacts(
            np.concatenate((disk, pairs[:, 0])),
            np.concatenate((np.full(len(disk), -1), pairs[:, 1])),
            np.concatenate((feature, np.full(len(pairs), -1))),
            contacts,
        )

    def _solve_contacts(
        self, closed: _Closed, v: np.ndarray, v_free: np.ndarray, t: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Impulses ``(Λ_n, Λ_t)`` (N·s) of the closed contacts and the end-of-step velocity."""
        exact = self.contact_solver == "lemke" or (
            self.contact_solver == "auto" and len(closed) <= EXACT_CONTACTS
        )
        if exact:
            return self._solve_contact_lcp(closed, v, v_free, t)
        if self.contact_solver == "auto" and not np.any(closed.friction > 0.0):
            solution = self._solve_banded(closed, v, v_free)
            if solution is not None:
                return solution
        return self._solve_by_gauss_seidel(closed, v, v_free)

    def _solve_banded(
        self, closed: _Closed, v: np.ndarray, v_free: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Frictionless contacts whose Delassus matrix is banded (a chain): solved exactly.

        ``W = G M⁻¹ Gᵀ`` is assembled sparse; when its bandwidth in contact
        order is at most ``BAND_MAX`` the LCP
        ``Λ_n ≥ 0 ⊥ W Λ_n + u_free + e u⁻ ≥ 0`` goes to
        :func:`complementarity.banded_lcp` (block principal pivoting, one
        banded Cholesky per pivot), starting from the contacts that pressed
        at the last step (new ones: those not separating). ``None`` when the
        band is wider, ``W`` is singular (dependent contacts) or the pivoting
        does not finish: then Gauss–Seidel decides.
        """
        if USE_KERNEL:
            return self._solve_banded_compiled(closed, v, v_free)
        G = closed.G.to_csr()
        W = (G @ sp.diags_array(self._m_inv) @ G.T).tocoo()
        upper = W.row <= W.col
        rows, cols, values = W.row[upper], W.col[upper], W.data[upper]
        bandwidth = int(np.max(cols - rows, initial=0))
        if bandwidth > BAND_MAX:
            return None
        band = np.zeros((bandwidth + 1, len(closed)))
        band[bandwidth + rows - cols, cols] = values
        q = _without_round_off(G @ v_free + closed.restitution * (G @ v))
        initial = self._warm_active(closed, q <= 0.0)
        try:
            result = banded_lcp(band, q, initial_free=initial)
        except SolverError:
            return None
        if result.status != "solved":
            return None
        impulse_n = result.z
        self._keep_warm(closed, impulse_n, np.zeros(len(closed)))
        return impulse_n, np.zeros(len(closed)), v_free + self._m_inv * (G.T @ impulse_n)

    def _solve_banded_compiled(
        self, closed: _Closed, v: np.ndarray, v_free: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """:meth:`_solve_banded` in one compiled call (:mod:`solver.chain_lcp`)."""
        G = closed.G
        q = _without_round_off(G.dot(v_free) + closed.restitution * G.dot(v))
        initial = self._warm_active(closed, q <= 0.0)
        impulse_n = np.zeros(len(closed))
        outcome = chain_lcp.compiled_banded_contact_lcp()(
            G.cols, G.values, self._m_inv, q, initial, BAND_MAX, impulse_n
        )
        if outcome != chain_lcp.SOLVED:
            return None
        self._keep_warm(closed, impulse_n, np.zeros(len(closed)))
        return impulse_n, np.zeros(len(closed)), v_free + self._m_inv * G.transpose_dot(impulse_n)

    def _warm_active(self, closed: _Closed, initial: np.ndarray) -> np.ndarray:
        """``initial`` where the last impulses are known: whether those contacts pressed."""
        if len(self._warm_keys):
            at = np.minimum(np.searchsorted(self._warm_keys, closed.keys), len(self._warm_keys) - 1)
            known = self._warm_keys[at] == closed.keys
            initial[known] = self._warm[at[known], 0] > 0.0
        return initial

    def _keep_warm(self, closed: _Closed, impulse_n: np.ndarray, impulse_t: np.ndarray) -> None:
        """Keep the impulses by contact key, the start of the next step's solve."""
        order = np.argsort(closed.keys)
        self._warm_keys = closed.keys[order]
        self._warm = np.column_stack((impulse_n, impulse_t))[order]

    def _solve_by_gauss_seidel(
        self, closed: _Closed, v: np.ndarray, v_free: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Projected Gauss–Seidel on the sparse Delassus operator, warm-started by pair."""
        G, H = closed.G, closed.H
        m_inv = self._m_inv
        w_nn = G.diagonal_gram(m_inv)
        w_tt = H.diagonal_gram(m_inv)
        solvable = w_nn > 0.0  # a bead pressed across its rail: the rail takes it all
        mu = np.where(w_tt > 0.0, closed.friction, 0.0)
        impulse_n = np.zeros(len(closed))
        impulse_t = np.zeros(len(closed))
        if len(self._warm_keys):
            at = np.minimum(np.searchsorted(self._warm_keys, closed.keys), len(self._warm_keys) - 1)
            known = self._warm_keys[at] == closed.keys
            impulse_n[known] = self._warm[at[known], 0]
            impulse_t[known] = np.clip(self._warm[at[known], 1], -mu[known] * impulse_n[known],
                                       mu[known] * impulse_n[known])  # fmt: skip
        impulse_n[~solvable] = 0.0
        impulse_t[~solvable] = 0.0
        v_next = v_free + m_inv * (G.transpose_dot(impulse_n) + H.transpose_dot(impulse_t))
        rows = np.flatnonzero(solvable)
        lam_n, lam_t = impulse_n[rows], impulse_t[rows]
        gauss_seidel.sweeps(
            G.cols[rows], G.values[rows], H.cols[rows], H.values[rows], m_inv,
            closed.restitution[rows] * G.dot(v)[rows], mu[rows], w_nn[rows],
            np.where(w_tt[rows] > 0.0, w_tt[rows], 1.0), lam_n, lam_t, v_next,
            PGS_TOL, PGS_MAX_SWEEPS,
        )  # fmt: skip
        impulse_n[rows], impulse_t[rows] = lam_n, lam_t
        self._keep_warm(closed, impulse_n, impulse_t)
        return impulse_n, impulse_t, v_next

    def _solve_contact_lcp(
        self, closed: _Closed, v: np.ndarray, v_free: np.ndarray, t: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The exact LCP of the closed contacts (2-edge friction cone) on their own coordinates.

        Returns
        -------
        impulse_n : (n,) normal impulses Λ_n, N·s
        impulse_t : (n,) tangential impulses Λ_t along each contact's ``t``, N·s
        v_next : (N,) velocity at the end of the step
        """
        n = len(closed)
        rubbing = np.flatnonzero(closed.friction > 0.0)
        m = len(rubbing)
        # the coordinates the contacts touch, and their rows restricted to them (dense)
        dofs = np.unique(np.concatenate((closed.G.cols.ravel(), closed.H.cols.ravel())))
        G = _local_columns(closed.G, dofs)
        H = _local_columns(closed.H, dofs)[:, rubbing]
        B = np.hstack((G, H, -H))
        m_inv = self._m_inv[dofs]
        A = B.T @ (m_inv[:, None] * B)
        size = n + 3 * m
        lcp_matrix = np.zeros((size, size))
        lcp_matrix[: n + 2 * m, : n + 2 * m] = A
        identity = np.eye(m)
        lcp_matrix[n : n + m, n + 2 * m :] = identity
        lcp_matrix[n + m : n + 2 * m, n + 2 * m :] = identity
        lcp_matrix[n + 2 * m :, n : n + m] = -identity
        lcp_matrix[n + 2 * m :, n + m : n + 2 * m] = -identity
        lcp_matrix[n + 2 * m + np.arange(m), rubbing] = closed.friction[rubbing]
        u_t_free = H.T @ v_free[dofs]
        lcp_q = np.concatenate(
            (
                G.T @ v_free[dofs] + closed.restitution * (G.T @ v[dofs]),
                u_t_free,
                -u_t_free,
                np.zeros(m),
            )
        )
        if np.all(lcp_q[:n] >= 0.0):  # the free motion already obeys the impact law
            self._basis_keys = np.zeros(0, dtype=np.int64)
            return np.zeros(n), np.zeros(n), v_free
        # Speeds at round-off level are zero: this keeps Lemke's first pivot unambiguous.
        lcp_q[np.abs(lcp_q) <= ROUND_OFF * max(1.0, float(np.max(np.abs(lcp_q))))] = 0.0
        z = self._solve_on_previous_basis(closed.keys, lcp_matrix, lcp_q)
        if z is None:
            result = lemke(lcp_matrix, lcp_q)
            if result.status != "solved":
                rows = closed.rows
                names = ", ".join(
                    "–".join(self._names(int(rows.i[k]), int(rows.j[k]), int(rows.feature[k])))
                    for k in range(len(closed))
                )
                raise SolverError(
                    f"the contact LCP has no solution ({result.status}) at t = {t!r} s "
                    f"for the contacts {names}"
                )
            z = result.z
        self._basis_keys, self._basis = closed.keys, z > 0.0
        impulses = z[: n + 2 * m]
        v_next = v_free.copy()
        v_next[dofs] += m_inv * (B @ impulses)
        impulse_t = np.zeros(n)
        impulse_t[rubbing] = impulses[n : n + m] - impulses[n + m : n + 2 * m]
        return impulses[:n], impulse_t, v_next

    def _solve_on_previous_basis(
        self, keys: np.ndarray, lcp_matrix: np.ndarray, lcp_q: np.ndarray
    ) -> np.ndarray | None:
        """The LCP solution when the last step's positive unknowns are again the positive ones.

        In persistent contact the same unknowns stay positive from step to
        step, so one linear solve on that set replaces Lemke's pivoting. The
        answer is accepted only when it satisfies the LCP to round-off;
        otherwise ``None`` is returned and Lemke decides.
        """
        if not np.array_equal(self._basis_keys, keys):
            return None
        basic = self._basis
        z = np.zeros(len(lcp_q))
        if basic.any():
            try:
                z[basic] = np.linalg.solve(lcp_matrix[np.ix_(basic, basic)], -lcp_q[basic])
            except np.linalg.LinAlgError:
                return None
        w = lcp_matrix @ z + lcp_q
        tol = ROUND_OFF * max(1.0, float(np.max(np.abs(lcp_q))))
        if np.all(z >= 0.0) and np.all(w[~basic] >= -tol):
            return z
        return None

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
            contacts = contacts + tuple(self.system.compliance.states(q, v))
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


def largest_step(system: System) -> tuple[float, str]:
    """The largest acceptable step for ``system`` (s) and the period that sets it, in words.

    ``STEP_FRACTION`` of the shortest period of the scene: of its springs,
    bounded below by ``2π/ω`` with ``ω² = max_i Σ_springs at i (2k or k) / m_i``
    (Gershgorin's bound on the largest eigenvalue of ``M⁻¹K``: a spring
    between two bodies counts twice, one to an anchor once), and of its
    harmonic forces, ``2π/ω``. Contacts are rigid and set no time scale.
    ``(inf, "")`` for a scene with neither.
    """
    scene = system.scene
    masses = {body.id: float(body.mass) for body in scene.bodies}
    load: dict[str, float] = {}
    for spring in scene.springs:
        share = 2.0 * spring.stiffness if spring.b is not None else spring.stiffness
        for end in (spring.a, spring.b):
            if end is not None:
                load[end] = load.get(end, 0.0) + share
    periods = [
        (2.0 * math.pi * math.sqrt(masses[body] / k), f"the period of the springs on {body}")
        for body, k in load.items()
        if body in masses and k > 0.0
    ]
    periods += [
        (2.0 * math.pi / force.omega, f"the period of the force on {force.body}")
        for force in scene.forces
        if force.omega > 0.0
    ]
    if not periods:
        return math.inf, ""
    period, name = min(periods)
    return STEP_FRACTION * period, f"{name}, {period:.6g} s"


class _Accuracy:
    """What a time-stepping run reports of its own error (``accuracy`` event rows).

    Measured at every output sample: the largest penetration of any disk
    into a boundary or another disk (the deepest overlap of the pairs that
    overlap there, m) and the drift of the energy balance
    ``E_total + E_dissipated − E_input`` from its value at t = 0 (J). A row
    is written the first time either passes its bound (``PENETRATION_BOUND``
    of the smallest disk radius; ``DRIFT_BOUND`` of the energy scale, the
    largest ``E_kin + E_spring`` seen plus what was put in and dissipated)
    and at the end of the run. In the row, ``normal_impulse`` holds the
    penetration (m) and ``energy_change`` the drift (J); ``body`` and
    ``other`` name the deepest pair; the message says both in words.
    """

    def __init__(self, system: System) -> None:
        self.system = system
        radii = np.asarray(system.radii, dtype=float)
        self.penetration_bound = PENETRATION_BOUND * float(np.min(radii, initial=math.inf))
        self.penetration = 0.0
        self.penetration_t = 0.0
        self.pair = ("", "")
        self.drift = 0.0
        self.drift_t = 0.0
        self.scale = 0.0
        self._balance0: float | None = None
        self._index = (
            StaticIndex([f for _, f, _, _ in system.features]) if system.features else None
        )
        self._crossed: set[str] = set()

    def measure(self, frame: Frame, out: StepOutput) -> None:
        """Take a sample frame's penetration and drift; a row in ``out`` at a first crossing."""
        energy = frame.energy
        balance = energy.balance
        if self._balance0 is None:
            self._balance0 = balance
        self.scale = max(
            self.scale, energy.kinetic + energy.spring + abs(energy.input) + abs(energy.dissipated)
        )
        drift = balance - self._balance0
        if abs(drift) > abs(self.drift):
            self.drift, self.drift_t = drift, frame.t
        depth, pair = self._deepest(frame.q)
        if depth > self.penetration:
            self.penetration, self.penetration_t, self.pair = depth, frame.t, pair
        crossed = []
        if self.penetration > self.penetration_bound and "penetration" not in self._crossed:
            crossed.append("penetration")
        if abs(self.drift) > DRIFT_BOUND * self.scale > 0.0 and "drift" not in self._crossed:
            crossed.append("drift")
        if crossed:
            self._crossed.update(crossed)
            out.events.append(self.report(frame.t, f"{' and '.join(crossed)} past its bound: "))

    def _deepest(self, q: np.ndarray) -> tuple[float, tuple[str, str]]:
        system = self.system
        if not system.n_disks:
            return 0.0, ("", "")
        c = system.centres(q)
        radii = np.asarray(system.radii, dtype=float)
        zeros, spin = np.zeros_like(c), np.zeros(len(c))
        parts = []
        if self._index is not None:
            pairs = self._index.query(c, radii, 0.0).pairs
            if len(pairs):
                parts.append(
                    system.feature_arrays.contacts(pairs[:, 0], pairs[:, 1], c, zeros, spin, radii)
                )
        # a compliant body–body overlap is the contact's, not a penetration
        disk_pairs = _disk_pairs(c, radii, 0.0) if system.rigid_disk_pairs else _NO_PAIRS
        if len(disk_pairs):
            parts.append(disk_disk(c, zeros, spin, radii, disk_pairs[:, 0], disk_pairs[:, 1]))
        if not parts:
            return 0.0, ("", "")
        rows = parts[0] if len(parts) == 1 else ContactArrays.concatenate(parts)
        gaps = np.where(rows.valid, rows.g, math.inf)
        k = int(np.argmin(gaps))
        if not math.isfinite(gaps[k]) or gaps[k] >= 0.0:
            return 0.0, ("", "")
        body = system.disk_body_id(int(rows.i[k]))
        if rows.j[k] >= 0:
            other = system.disk_body_id(int(rows.j[k]))
        else:
            other = system.features[int(rows.feature[k])][0]
        return float(-gaps[k]), (body, other)

    def summary(self) -> str:
        """The run's accuracy in words (the status line and the rows' message)."""
        return (
            f"largest penetration {self.penetration:.3g} m at t = {self.penetration_t:.6g} s "
            f"(bound {self.penetration_bound:.3g} m), energy-balance drift "
            f"{self.drift:.3g} J at t = {self.drift_t:.6g} s "
            f"(bound {DRIFT_BOUND * self.scale:.3g} J)"
        )

    def report(self, t: float, why: str = "at the end: ") -> Event:
        """An ``accuracy`` row at ``t`` with the largest values so far."""
        return Event(
            t=t,
            type="accuracy",
            body=self.pair[0],
            other=self.pair[1],
            normal_impulse=self.penetration,
            energy_change=self.drift,
            message=f"time-stepping accuracy {why}{self.summary()}",
        )


def _without_round_off(speeds: np.ndarray) -> np.ndarray:
    """``speeds`` (m/s) with those at round-off level (``ROUND_OFF``, relative) set to 0.

    Beads of a chain moving together touch at speeds of 1e-18 m/s of either
    sign; taken as they are, the pivoting would chase their signs.
    """
    scale = ROUND_OFF * max(1.0, float(np.max(np.abs(speeds), initial=0.0)))
    return np.where(np.abs(speeds) <= scale, 0.0, speeds)


def _closing(
    rows: ContactArrays, centre_accel: np.ndarray, theta: float, h: float, closing_speed: float
) -> np.ndarray:
    """Which pairs close within a step of length ``h``: open at its start, closed at its end.

    The gap is predicted to second order from its value, rate and second
    derivative ``a_n = n·(a_i − a_j) + gamma_n`` at ``q_θ`` (``centre_accel``:
    the centres' free accelerations, m/s²): above ``GAP_TOL`` a time
    ``(1 − θ) h`` before, at most ``GAP_TOL`` a time ``θ h`` after; and the
    pair approaches faster than ``CUT_SPEED`` times ``closing_speed`` (m/s).
    """
    accel = centre_accel[rows.i]
    pair = rows.j >= 0
    accel[pair] -= centre_accel[rows.j[pair]]
    a_n = rows.n[:, 0] * accel[:, 0] + rows.n[:, 1] * accel[:, 1] + rows.gamma_n
    before, after = (1.0 - theta) * h, theta * h
    start = rows.g - before * rows.u_n + 0.5 * before * before * a_n
    end = rows.g + after * rows.u_n + 0.5 * after * after * a_n
    return (start > GAP_TOL) & (end <= GAP_TOL) & (rows.u_n < -CUT_SPEED * closing_speed)


_NO_PAIRS = np.zeros((0, 2), dtype=int)
"""No disk pairs (:func:`_disk_pairs` of disks that meet by a compliant force)."""


def _disk_pairs(c: np.ndarray, radii: np.ndarray, margin: float) -> np.ndarray:
    """Disk pairs ``(i, j)``, ``i < j``, with gap at most ``margin`` (m), sorted.

    The same pairs as :func:`solver.broadphase.disk_pairs`, found by
    ``scipy.spatial.cKDTree`` (a few times faster on thousands of disks).
    """
    if len(c) < 2:
        return np.zeros((0, 2), dtype=int)
    reach = 2.0 * float(np.max(radii)) + margin
    pairs = cKDTree(c).query_pairs(reach * (1.0 + 1e-9), output_type="ndarray")
    i, j = pairs[:, 0], pairs[:, 1]
    d = c[i] - c[j]
    near = np.hypot(d[:, 0], d[:, 1]) <= radii[i] + radii[j] + margin
    pairs = pairs[near]
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def _local_columns(rows: SparseRows, dofs: np.ndarray) -> np.ndarray:
    """The rows as dense columns over the coordinates ``dofs`` (sorted): shape (len(dofs), K)."""
    out = np.zeros((len(dofs), len(rows.cols)))
    K, W = rows.cols.shape
    np.add.at(out, (np.searchsorted(dofs, rows.cols.ravel()), np.repeat(np.arange(K), W)),
              rows.values.ravel())  # fmt: skip
    return out


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
