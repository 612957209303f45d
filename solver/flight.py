"""Flight pieces of the event-driven stepper: how the smooth motion between events is made.

A :class:`Piece` is a stretch ``[ta, tb]`` of motion with its state function:
a closed-form parabola (:class:`Parabola`: constant forces, every active
contact a disk on a straight segment), the exact flow of a linear bead scene
(:class:`solver.linear_flow.LinearFlow`), or a DOP853 step. :class:`FlightMixin`
chooses which for a phase, bounds a phase by the broad-phase margin and
keeps the candidate pairs up to date.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from scipy.integrate import DOP853

from solver.contact import solve_with_modes
from solver.errors import SolverError
from solver.event_tolerances import FLOW_START_TOL, SUBPOINTS_LINEAR, WORK_NODES
from solver.fixed_mode import ModeForces, OneContactReaction
from solver.frames import ContactState
from solver.gap_set import FEW_PAIRS, GapSet
from solver.geometry import Segment, bounding_box
from solver.linear_flow import LinearBeadModel, LinearPhase, linear_bead_model

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
    if not len(A) or not len(separation_rows):
        return False
    rank = np.linalg.matrix_rank(A)
    return any(np.linalg.matrix_rank(np.vstack((A, row))) == rank for row in separation_rows)


def disk_box(centres: np.ndarray, radius: float) -> tuple[float, float, float, float]:
    """Box ``(xmin, ymin, xmax, ymax)`` (m) of the disk ``centres`` (K, 2) grown by ``radius`` (m).

    One disk in floats: its centre's coordinates are the columns' minima
    and maxima, and a float's sum is the array's.
    """
    if len(centres) == 1:
        ((x, y),) = centres.tolist()
        return x - radius, y - radius, x + radius, y + radius
    (lx, ly), (hx, hy) = (
        (centres.min(axis=0) - radius).tolist(),
        (centres.max(axis=0) + radius).tolist(),
    )
    return lx, ly, hx, hy


class FlightMixin:
    """How the smooth motion of a phase is made (of :class:`solver.events.EventDrivenStepper`)."""

    def _choose_margin(self) -> float:
        """Candidate margin (m): as wide as the scene while that keeps the pair list short.

        A wider margin means fewer broad-phase searches and longer phases; a
        crowded scene (many disks close together) falls back to twice the
        largest radius.
        """
        radii = self._kin.radii
        if not len(radii):
            return 1.0
        r_max = float(radii[0]) if len(radii) == 1 else float(radii.max())
        lx, ly, hx, hy = disk_box(self.system.centres(self._q), r_max)
        # in floats, as np.minimum and np.maximum choose (a scene has few features)
        for _, feature, _, _ in self._kin.feature_list:
            x0, y0, x1, y1 = map(float, bounding_box(feature))
            lx, ly = lx if lx < x0 else x0, ly if ly < y0 else y0
            hx, hy = hx if hx > x1 else x1, hy if hy > y1 else y1
        widest = float(np.hypot(hx - lx, hy - ly))
        margin = 2.0 * r_max
        n, limit = len(radii), 4 * len(radii) + 16
        if n * len(self._kin.feature_list) + n * (n - 1) // 2 <= limit:
            # no margin finds more pairs than the scene has: the search below reaches widest
            margin = max(margin, widest)
        if margin < widest:
            everything = np.arange(n)
            # grow from the narrowest margin: counting pairs costs as many pairs as are found
            while margin < widest:
                wider = min(2.0 * margin, widest)
                if self._kin.count_candidates(self._q, wider, everything) > limit:
                    break
                margin = wider
        # a disk whose centre is in the box is within the margin of every feature
        self._covered = ((lx, ly), (hx, hy)) if margin >= widest else None
        return margin

    def _displacements(self) -> np.ndarray:
        """How far (m) each disk centre is from where its pairs were last searched."""
        d = self.system.centres(self._q) - self._pairs_found_at
        return np.hypot(d[:, 0], d[:, 1])

    def _moved(self) -> float:
        """Largest displacement (m) of a disk centre since its pairs were searched."""
        return float(self._displacements().max(initial=0.0))

    def _all_candidates(self) -> GapSet:
        """Every pair that can touch while no disk moves ``margin/4`` (m) from its search point.

        A pair missing from the list had a gap above ``margin`` when one of
        its disks was last searched; since then that disk moved less than
        ``margin/4`` and the other less than ``margin/2``, so the gap is
        still positive. Disks that have moved ``margin/8`` are searched again
        (only those), so a phase always has at least that much room.
        """
        if self._pairs_found_at is None:
            self._pairs_found_at = self.system.centres(self._q)
            disks = np.arange(self.system.n_disks)
            if len(disks):  # the first search: no pairs held to keep or compare
                found = self._kin.candidates(self._q, self._margin, disks)
                self._pair_set = GapSet(self._kin, found)
            return self._pair_set
        elif self.system.n_disks == 1:  # one disk: its displacement on floats
            ((x, y),), ((x0, y0),) = (
                self.system.centres(self._q).tolist(),
                self._pairs_found_at.tolist(),
            )
            if not float(np.hypot(x - x0, y - y0)) > 0.125 * self._margin:
                return self._pair_set
            disks = np.zeros(1, dtype=int)
            if self._search_finds_the_same():
                self._pairs_found_at = np.array([[x, y]])
                return self._pair_set
        else:
            disks = np.nonzero(self._displacements() > 0.125 * self._margin)[0]
            if len(disks) and self._search_finds_the_same():
                self._pairs_found_at[disks] = self.system.centres(self._q)[disks]
                return self._pair_set
        if len(disks):
            old = self._pair_set
            moved = np.zeros(self.system.n_disks + 1, dtype=bool)
            moved[disks] = True
            keep = ~(moved[old.first] | moved[old.second])
            # index arrays: a ContactPair is made only for a pair that is read
            pairs = old.pairs.select(keep) + self._kin.candidates(self._q, self._margin, disks)
            if pairs != old.pairs:  # the same rows: the same pairs
                self._pair_set = GapSet(self._kin, pairs)
            self._pairs_found_at[disks] = self.system.centres(self._q)[disks]
        return self._pair_set

    def _search_finds_the_same(self) -> bool:
        """Whether searching the pairs again would give the pairs held, in their order.

        One disk (its pairs are all the pairs, found in one sorted search),
        every pair a candidate, a margin at least the diagonal of the box of
        the scene's features and first disk positions, and the disk's centre
        still in that box: the search reports every feature again.
        """
        covered = getattr(self, "_covered", None)
        if covered is None or self.system.n_disks != 1 or not self._pairs_complete():
            return False
        ((x, y),) = self.system.centres(self._q).tolist()
        (lo_x, lo_y), (hi_x, hi_y) = covered
        return lo_x <= x <= hi_x and lo_y <= y <= hi_y

    def _pairs_complete(self) -> bool:
        """Whether the candidate pairs are every pair of the scene: no travel can add one.

        Each disk with each feature and each other disk, every pair once (the
        pairs are unique objects). A phase then needs no reach: its disks may
        go anywhere without leaving the candidates' cover.
        """
        pairs = self._pair_set.pairs
        known = getattr(self, "_complete_pairs", None)
        if known is not None and known[0] is pairs:
            return known[1]  # the same candidate set as the last phase's
        n = self.system.n_disks
        features = len(self._kin.feature_list)
        every = n * features + n * (n - 1) // 2
        if len(pairs) != every:
            complete = False
        elif every <= FEW_PAIRS:  # a few pairs: what their codes encode, compared in Python
            rows = zip(
                pairs.first.tolist(), pairs.second.tolist(), pairs.feature.tolist(), strict=True
            )
            complete = len({(i, f if f >= 0 else features + j) for i, j, f in rows}) == every
        else:
            complete = len(set(pairs.codes().tolist())) == every
        self._complete_pairs = (pairs, complete)
        return complete

    def _candidates(self) -> GapSet:
        """The candidate pairs that are not active: their gaps are watched."""
        every = self._all_candidates()
        if not self._active:
            return every
        active = tuple(self._active)
        if self._watched[:2] != (every, active):
            held = every.pairs
            if len(held) <= FEW_PAIRS:  # a few pairs: compared in Python, no arrays of codes
                # (disk, other disk or -1, feature or -1): a pair's identity, as its code is
                active_pairs = {
                    (pair.i, pair.j, max(pair.feature_index, -1))
                    for pair, _ in self._active.values()
                }
                rows = zip(
                    held.first.tolist(), held.second.tolist(), held.feature.tolist(), strict=True
                )
                # the rows kept, as increasing indices
                kept = [
                    n for n, (i, j, f) in enumerate(rows) if (i, j, max(f, -1)) not in active_pairs
                ]
                # the watched set takes the float rows the candidates have made
                watched = every.subset(kept) if kept else self._no_gaps
            else:
                active_codes = [self._kin.pair_code(pair) for pair, _ in self._active.values()]
                keep = np.nonzero(~np.isin(held.codes(), active_codes))[0]
                watched = GapSet(self._kin, held.select(keep)) if len(keep) else self._no_gaps
            self._watched = (every, active, watched)
        return self._watched[2]

    def _horizon(self, a: np.ndarray, half: float) -> float:
        """Time (s) in which no disk centre can move more than ``half`` (m)."""
        cd = self.system.centre_velocities(self._v)
        acc = self.system.centre_velocities(a)
        speed = float(np.hypot(cd[:, 0], cd[:, 1]).max(initial=0.0))
        accel = 2.0 * float(np.hypot(acc[:, 0], acc[:, 1]).max(initial=0.0))
        if accel > 0.0 or speed > 0.0:
            # the root of ½ accel τ² + speed τ = half, in the form without cancellation
            return 2.0 * half / (math.sqrt(speed * speed + 2.0 * accel * half) + speed)
        return math.inf

    def _constant_motion(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Constant accelerations (N,) and friction power terms (W, W/s) of this phase, if any.

        Without springs or forcing the applied force is constant; when every
        active contact is a disk on a straight segment, ``G``, ``H`` are
        constant and the curvature terms vanish, so the contact forces of the
        phase (fixed modes) are constant too and the motion is a parabola.
        The contact forces are then kept for the whole phase
        (``_phase_forces``). Returns ``None`` when the motion is not of this
        kind. The friction power is ``P0 + P1 τ`` (``τ`` from the start).
        """
        if not self._flight or not all(
            pair.j < 0 and isinstance(pair.feature, Segment) for pair, _ in self._active.values()
        ):
            return None
        if not self._active:
            return self._gravity * self._M_inv, np.zeros(2)
        evals = self._active_contacts(self._q, self._v)  # as _active_forces, evaluated once
        forces = self._phase_forces
        if forces is None:
            modes = [mode for _, mode in self._active.values()]
            # the applied force of a scene without springs or forcing: its weight (kept)
            f = self._gravity
            forces = self._phase_forces = solve_with_modes(evals, modes, self._M_inv, f)
        H = evals[0].H[:, None] if len(evals) == 1 else np.column_stack([e.H for e in evals])
        ff = forces.friction_force
        return forces.qdd, np.array([-(ff @ (H.T @ self._v)), -(ff @ (H.T @ forces.qdd))])

    def _bead_model(self) -> LinearBeadModel | None:
        """:func:`solver.linear_flow.linear_bead_model` at ``q``, kept where ``q`` cannot change it.

        Without springs of nonzero rest length the model does not depend on
        the coordinates: it is made once per run.
        """
        kept = getattr(self, "_kept_model", None)
        if kept is not None:
            return kept[0]
        model = linear_bead_model(self.system, self._q)
        if not any(spring.rest_length for spring in self.system._springs):
            self._kept_model = (model,)
        return model

    def _linear_motion(self) -> tuple[LinearPhase, LinearBeadModel] | None:
        """The closed-form motion of this phase of a linear bead scene, if it is one.

        The scene must be linear near ``q`` (:func:`solver.linear_flow.linear_bead_model`,
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
        if not self._closed_form or self._across_spring:
            self._across_spring = False
            return None
        model = self._bead_model()
        if model is None or np.any(model.separations(self._q) <= 0.0):
            return None
        evals = self._active_evals(self._q, self._v)
        if any(e.n[1] != 0.0 for e in evals):
            return None
        key = (tuple(self._active), model.separation_rows.tobytes())
        flow = self._flows.get(key)
        if flow is None:
            A = np.array([e.G for e in evals]).reshape(-1, self._N)
            if held_spring(A, model.separation_rows):
                return None  # a degenerate flow (a spring both of whose ends are held): DOP853
            flow = model.flow(A, A @ self._q)
            self._flows[key] = flow
        motion = flow.start(self.t, self._q, self._v)
        q0, v0 = motion.initial_state()
        scale = 1.0 + float(np.max(np.abs(self._q), initial=0.0))
        if not (
            # np.allclose's test, without its generality (a few µs per phase)
            np.all(np.abs(q0 - self._q) <= FLOW_START_TOL * scale)
            and np.all(np.abs(v0 - self._v) <= FLOW_START_TOL + FLOW_START_TOL * np.abs(self._v))
        ):
            return None  # a degenerate flow (a spring both of whose ends are held): DOP853
        return motion, model

    def _linear_pieces(self, motion: LinearPhase, model: LinearBeadModel) -> Iterator[Piece]:
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
        N = self._N
        ta, work = motion.t0, self._work.copy()

        damped = bool(model.C.any())

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
                power[:, 1] = np.sum((vn @ model.C) * vn, axis=1)
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
                power[:, 1] = np.sum((vn @ model.C) * vn, axis=1)
            for h in model.harmonics:
                power[:, 2] += np.sin(h.omega * times[:n] + h.phase) * (vn @ h.amplitude)
            return np.concatenate((q[n], v[n], work + half * (weights @ power)))

        known: dict[float, np.ndarray] = {}
        while True:
            tb = min(self.t_end, ta + length)

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

    def _fixed_mode(self) -> OneContactReaction | None:
        """The reaction of the one active contact as a function of the state, if there is one.

        Made once per active set (:mod:`solver.fixed_mode`); None with
        several active contacts or none.
        """
        active = tuple(self._active.values())
        kept = getattr(self, "_kept_reaction", None)
        if kept is None or kept[0] != active:
            reaction = None
            if len(active) == 1:
                pair, mode = active[0]
                reaction = OneContactReaction(self.system, pair, mode, self._M_inv)
            kept = self._kept_reaction = (active, reaction)
        return kept[1]

    def _free_accelerations(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``M⁻¹ f`` (N,) at ``(t, q, v)``: constant without springs and forcing (kept)."""
        if not self._flight:
            return self.system.applied_force(t, q, v) * self._M_inv
        kept = getattr(self, "_gravity_accelerations", None)
        if kept is None:
            kept = self._gravity_accelerations = self._gravity * self._M_inv
        return kept

    def _one_contact_forces(self, t: float, q: np.ndarray, v: np.ndarray) -> ModeForces | None:
        """The one active contact's force at ``(t, q, v)`` without an LCP, where it has one.

        While the phase's forces are constant (``_phase_forces``: a disk on a
        segment under gravity alone) they are those, with the slip speed at
        ``(q, v)``, as :meth:`_active_forces` gives them.
        """
        reaction = self._fixed_mode()
        if reaction is None:
            return None
        forces = self._phase_forces
        if forces is None:
            return reaction.forces(q, v, self._free_accelerations(t, q, v))
        u_t = reaction.slip_speed(q, v)
        if u_t is None:
            return None
        return ModeForces(forces.qdd, forces.lam[0], forces.friction_force[0], u_t)

    def _one_contact_state(self, t: float, q: np.ndarray, v: np.ndarray) -> ContactState | None:
        """The one active contact's state for a frame of a smooth phase, without an LCP.

        None with several active contacts, none, or while the phase's forces
        are constant (the output then reads those).
        """
        reaction = self._fixed_mode()
        if reaction is None or self._phase_forces is not None:
            return None
        return reaction.contact_state(q, v, self._free_accelerations(t, q, v))

    def _rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        N = self._N
        q, v = y[:N], y[N : 2 * N]
        system = self.system
        power_friction = 0.0
        one = self._one_contact_forces(t, q, v) if self._active else None
        if one is not None:
            qdd = one.qdd
            power_friction = -(one.friction_force * one.u_t)
        elif self._active:
            evals, forces = self._active_forces(t, q, v)
            qdd = forces.qdd
            power_friction = -float(
                sum(ff * e.u_t for ff, e in zip(forces.friction_force, evals, strict=True))
            )
        else:
            qdd = system.applied_force(t, q, v) * self._M_inv
        return np.concatenate(
            (v, qdd, (power_friction, system.damping_power(q, v), system.input_power(t, q, v)))
        )

    def _ode_pieces(self, t0: float, y0: np.ndarray, budget: float) -> Iterator[Piece]:
        a0 = self._rhs(t0, y0)[self._N : 2 * self._N]
        max_step = min(self._horizon(a0, budget), self.t_end - t0)
        if max_step <= 0.0:
            max_step = self.t_end - t0
        solver = DOP853(
            self._rhs, t0, y0, self.t_end, rtol=self.rtol, atol=self.atol, max_step=max_step
        )
        while solver.status == "running":
            ta = solver.t
            message = solver.step()
            if solver.status == "failed":
                raise SolverError(f"the ODE integrator failed at t = {solver.t:.12g} s: {message}")
            yield Piece(ta, solver.t, solver.dense_output())
