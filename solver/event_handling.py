"""Event handling of the event-driven stepper: what happens at an event (MECHANICS §2, §3).

:class:`EventHandler` gathers every contact open by at most ``GAP_TOL``
or overlapping by at most ``PENETRATION_TOL`` (junction features included),
resolves impacts with the scene's law on all of them (grazing approaches
taken up silently), lets the contact LCP choose which
press and how they slide, reports lift-off and stick/slip changes, and
projects positions and velocities onto the active constraints.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from solver.contact import SLIP_SPEED_TOL, frictionless_multiplier, solve_contact_problem
from solver.contact_pairs import ContactPair, PairRows, RailContacts
from solver.errors import SolverError
from solver.event_location import FoundEvent
from solver.event_tolerances import (
    GAP_TOL,
    IMPACT_SPEED_TOL,
    MAX_IMPACT_ROUNDS,
    MAX_PROJECTION_ITERATIONS,
    PENETRATION_TOL,
    REST_SPEED_TOL,
)
from solver.frames import Event, Frame, StepOutput
from solver.geometry import Segment
from solver.impact import ImpactStage, resolve_impact
from solver.impact_rules import ImpactRules
from solver.motion_state import MotionState, Setup
from solver.stages import ImpactStages, SharedImpactStages
from solver.system import Contact


def grazing(contact: Contact, qdd: np.ndarray | None) -> bool:
    """True when ``contact`` closes so slowly and turns back so fast that it stays in ``GAP_TOL``.

    With the normal acceleration ``a_n = G·q̈ + γ_n`` (m/s²) of the motion so
    far, an approach at ``u_n < 0`` bottoms out ``u_n²/(2 a_n)`` (m) further
    on: a contact grazed within the closing tolerance, as a wheel leaving an
    arc for the floor it is tangent to, is taken up without an impact.
    """
    if qdd is None:
        return False
    a_n = float(contact.G @ qdd) + contact.gamma_n
    return a_n > 0.0 and contact.u_n * contact.u_n <= 2.0 * a_n * GAP_TOL


def grazing_many(contacts: Sequence[Contact], qdd: np.ndarray | None) -> np.ndarray:
    """:func:`grazing` of each of ``contacts``, as a boolean array."""
    if qdd is None:
        return np.zeros(len(contacts), dtype=bool)
    if isinstance(contacts, RailContacts):
        # G·q̈ on the two beads' x: entries ±1, so the sum is exact in any order
        a_n = np.sum(contacts.G_local * qdd[contacts.dofs], axis=1) + contacts.gamma_n
        u_n = contacts.u_n
        return (a_n > 0.0) & (u_n * u_n <= 2.0 * a_n * GAP_TOL)
    return np.array([grazing(e, qdd) for e in contacts], dtype=bool)


def speeds_of(contacts: Sequence[Contact]) -> np.ndarray:
    """The normal speeds ``u_n`` (m/s) of ``contacts``, one per contact."""
    if isinstance(contacts, RailContacts):
        return contacts.u_n
    return np.array([e.u_n for e in contacts], dtype=float)


def subset(contacts: Sequence[Contact], mask: np.ndarray) -> Sequence[Contact]:
    """The contacts where ``mask`` is True, in order (arrays stay arrays)."""
    if isinstance(contacts, RailContacts):
        return contacts if mask.all() else contacts.select(mask)
    return [e for e, keep in zip(contacts, mask.tolist(), strict=True) if keep]


def contact_keys(contacts: Sequence[Contact]) -> list[Hashable]:
    """The pair keys of ``contacts``, in order (no Contact made for arrays)."""
    if isinstance(contacts, RailContacts):
        return contacts.keys(np.arange(len(contacts)))
    return [e.key for e in contacts]


CREEP_SPEED_TOL = 10.0 * IMPACT_SPEED_TOL
"""Slip speed (m/s) up to which a contact left sliding by the impacts of an instant
*creeps*: when sliding makes the contact problem inconsistent it is taken as at rest."""


def creeping_modes(
    contacts: Sequence[Contact], modes: list[str | None] | None
) -> list[str | None] | None:
    """``modes`` with every creeping contact made ``"stick"``; None when none creeps.

    A contact *creeps* when it has friction, no imposed mode, and slips
    faster than ``SLIP_SPEED_TOL`` but no faster than ``CREEP_SPEED_TOL``
    (ten times the speed below which a normal approach is taken up without
    an impact): the residue of the impacts just resolved. A ball bouncing
    ever lower in a corner whose wall can jam it (``μ ≥ tan(wedge/2)``)
    leaves slips of 1e-8 to 2e-7 m/s, and sliding in those directions the
    contact problem has no solution at all (Painlevé-type: friction drives
    the ball into the wedge). :meth:`EventHandler.settle` then resolves it
    as a tangential impact without collision: a creeping contact takes its
    friction from its cone, and when it sticks its slip is projected away
    (a plastic tangential impulse, its energy booked as dissipated).
    """
    creeping = [
        c.friction > 0.0
        and (modes is None or modes[k] is None)
        and SLIP_SPEED_TOL < abs(c.u_t) <= CREEP_SPEED_TOL
        for k, c in enumerate(contacts)
    ]
    if not any(creeping):
        return None
    return [
        "stick" if creep else (None if modes is None else modes[k])
        for k, creep in enumerate(creeping)
    ]


LAPACK_SCALED = 1e-280
"""Below this size (or above its inverse) LAPACK's least squares rescale their input first."""


def one_row_solution(k: float, b: float) -> float:
    """``numpy.linalg.lstsq([[k]], [b], rcond=1e-12)[0][0]`` bit for bit, for ``k > 0``.

    The projections of one active constraint solve ``k x = b`` with
    ``k = GᵀM⁻¹G``: LAPACK's ``dgelsd`` on a 1×1 system leaves ``k`` as its
    singular value and scales ``b`` by ``1/k`` (``dlascl``; ``b = ±0`` gives
    ``±0``). Sizes where ``dgelsd`` would rescale (beyond ``LAPACK_SCALED``)
    go to LAPACK itself.
    """
    if not (
        LAPACK_SCALED < k < 1.0 / LAPACK_SCALED
        and (b == 0.0 or LAPACK_SCALED < abs(b) < 1.0 / LAPACK_SCALED)
    ):
        return float(np.linalg.lstsq(np.array([[k]]), np.array([b]), rcond=1e-12)[0][0])
    return b * (1.0 / k)


class EventHandler:
    """What happens at an event (a part of the event-driven stepper).

    The contact set, impacts with the scene's law, the contact LCP,
    lift-off and stick/slip reports, projection; the Zeno summer is told
    of every impact.
    """

    lean_settle: bool = True
    """Whether :meth:`_settle` takes its short routes (nothing closed; one closed
    frictionless contact that does not approach; contacts already evaluated at the
    state) and :meth:`_project` skips a one-row velocity projection with nothing to
    remove (``Gᵀv = 0``); the tests compare them with the general route."""

    def __init__(
        self,
        setup: Setup,
        motion: MotionState,
        contacts: Any,
        pairs: Any,
        recorder: Any,
        zeno: Any,
    ) -> None:
        self.s, self.m, self.contacts, self.pairs = setup, motion, contacts, pairs
        self.recorder, self.zeno = recorder, zeno
        self.rules = ImpactRules(setup, motion)

    def handle(self, out: StepOutput, found: FoundEvent) -> None:
        previous = dict(self.m.active)
        hints: dict[Hashable, str] = {}
        if found.kind == "friction" and previous[found.key][1] == "stick":
            # the friction needed has reached μλ: the contact starts to slide
            # against it (the LCP at this very instant would still allow sticking)
            forces = self.contacts.active_forces(self.m.t, self.m.q, self.m.v)[1]
            k = list(previous).index(found.key)
            hints[found.key] = "slip+" if forces.friction_force[k] < 0.0 else "slip-"
        pressing = frozenset()
        if found.kind == "gap" and self.m.stalled and found.key not in previous:
            pressing = self._pressing_from_zero(found.key)
        releasing = frozenset()
        if found.kind == "liftoff" and found.key in previous:
            # λ has reached zero, falling: the contact lifts off whatever sign the
            # contact problem gives its λ now. That λ is zero up to round-off of the
            # forces that cancel in it, which grows with them (springs of 4e7 N/m: a few
            # 1e-9 N, above the 1e-12 N that decides): kept, the lift-off was found again
            # at once (until MAX_STALLED_EVENTS) or a few ulps later, phase after phase
            releasing = frozenset({found.key})
        self.settle(out, previous, hints, pressing, releasing=releasing)

    def _pressing_from_zero(self, key: Hashable) -> frozenset[Hashable]:
        """``{key}`` if its contact rests closed, or hops within ``GAP_TOL``: it presses.

        Its gap closed again at the instant of the last event, where the
        contact was left out:

        * the LCP gave it λ and a normal acceleration both about zero (a force
          rising from zero that pushes two beads together, ``F = A sin ωt`` at
          ``t = 0``). The first-order problem cannot tell whether it presses;
          the gap closing at once says the next order does;
        * it separates so slowly (``u_n > 0``) that with the normal
          acceleration ``a_n < 0`` of the motion so far it falls back within
          ``GAP_TOL`` (``u_n² ≤ −2 a_n GAP_TOL``: a wheel leaving a bowl's arc at
          2e-7 m/s after an impact with e = 1.2e-7) — the mirror of :func:`grazing`.

        It enters the active set with λ growing from zero (a negative λ later
        is a ``liftoff`` event as usual); its remaining ``u_n`` is projected
        away. Without this the instant repeats until ``MAX_STALLED_EVENTS``.
        """
        pair = self.s.kin.pairs[key]
        e = self.s.kin.evaluate(pair, self.m.q, self.m.v)
        if not -PENETRATION_TOL <= e.g <= GAP_TOL:
            return frozenset()
        if abs(e.u_n) <= REST_SPEED_TOL:
            return frozenset({key})
        qdd = self._accelerations()
        a_n = float(e.G @ qdd) + e.gamma_n if qdd is not None else 0.0
        if e.u_n > 0.0 and e.u_n * e.u_n <= -2.0 * a_n * GAP_TOL:
            return frozenset({key})
        return frozenset()

    def closed_pairs(self) -> PairRows:
        """Every pair with ``-PENETRATION_TOL ≤ g ≤ GAP_TOL`` now, in scene order.

        An active contact's gap drifts while its phase is integrated (a wheel
        sliding down a bowl's arc: -1.26e-10 m by the next event); a drift
        within ``PENETRATION_TOL`` is still a contact, and the projection
        after the contact problem closes it. Left out, the pair's gap "closes"
        again at the same instant, the next event leaves it out again, and
        the run stops after ``MAX_STALLED_EVENTS``.
        """
        every = self.pairs.all_candidates()
        if not len(every):
            return every.pairs
        g = every.gaps(self.m.q, band=True)
        touching = ((g <= GAP_TOL) & (g >= -PENETRATION_TOL)).nonzero()[0]
        if len(touching) > 1:
            # scene order (by disk, then feature or second disk): deterministic columns
            touching = touching[np.lexsort((every.second[touching], every.first[touching]))]
        return every.pairs.select(touching)

    def closed(self, pairs: PairRows) -> Sequence[Contact]:
        """The closed ``pairs`` at the current velocities, those with a nonzero normal Jacobian.

        Beads on one rail (a chain) stay arrays (:class:`RailContacts`); a
        :class:`Contact` is made only for one that is read.
        """
        evals = self.s.kin.evaluate_many(pairs, self.m.q, self.m.v)
        if isinstance(evals, RailContacts):
            keep = np.any(evals.G_local != 0.0, axis=1)
            return evals if keep.all() else evals.select(keep)
        return [e for e in evals if e.inside and any(e.G_local.tolist())]

    def settle(
        self,
        out: StepOutput,
        previous: dict[Hashable, tuple[ContactPair, str]],
        hints: dict[Hashable, str] | None = None,
        pressing: frozenset[Hashable] = frozenset(),
        known: Sequence[Contact] | None = None,
        releasing: frozenset[Hashable] = frozenset(),
    ) -> None:
        """Resolve impacts at the current instant, then choose the active contacts.

        ``hints`` imposes a friction mode on some contacts (a contact whose
        sticking friction has just reached the cone slides); contacts in
        ``pressing`` are active if they are still closed and at rest, even
        with λ about zero (:meth:`_pressing_from_zero`), and contacts in
        ``releasing`` are not, whatever λ (a lift-off: :meth:`handle`). ``known`` are
        contacts already evaluated at the current state: when they are the
        closed pairs, in order, they are not evaluated again.
        """
        impacted = False
        if not self.lean_settle:
            known = None
        pairs = self.closed_pairs()  # impacts change velocities only: the same pairs after one
        if not len(pairs) and self.lean_settle:
            # nothing closed: no impact, no contact problem, nothing to project; the
            # contacts that were active have lifted off
            self.m.active = {}
            self.m.phase_forces = None
            self._report_changes(out, previous, impacted)
            return
        first_round = True
        for _ in range(MAX_IMPACT_ROUNDS):
            if known is not None and [e.key for e in known] == [p.key for p in pairs]:
                # as closed() keeps them
                closed = [e for e in known if e.inside and any(e.G_local.tolist())]
            else:
                closed = self.closed(pairs)
            known = None  # an impact changes the velocities
            if (
                self.lean_settle
                and not impacted
                and not pressing
                and len(closed) == 1
                and not isinstance(closed, RailContacts)
                and closed[0].friction == 0.0
                and closed[0].u_n >= -REST_SPEED_TOL
            ):
                self._settle_one(out, previous, closed[0], releasing)
                return
            u_n = speeds_of(closed)
            if not np.any(u_n < -REST_SPEED_TOL):
                break
            approaching = u_n < -IMPACT_SPEED_TOL
            # the motion that led to this instant, read in the first round only: after a
            # jump it says nothing
            qdd = self._accelerations() if first_round and approaching.any() else None
            if approaching.any() and not np.all(grazing_many(subset(closed, approaching), qdd)):
                # every law is given all closed contacts: the staged and poisson laws
                # act on the separating ones too (paper 000), the sequential law takes
                # one at a time until none approaches (a jam cascades through rounds)
                self.impact(out, closed)
                impacted = True
            else:
                self._absorb(subset(closed, u_n < REST_SPEED_TOL))
            first_round = False
        else:
            raise SolverError(
                f"impacts did not end after {MAX_IMPACT_ROUNDS} rounds at one instant"
            )
        evaluated = closed
        at_rest = max(IMPACT_SPEED_TOL, REST_SPEED_TOL)
        resting = np.abs(u_n) <= at_rest
        if pressing:
            resting |= np.array([key in pressing for key in contact_keys(closed)], dtype=bool)
        closed = subset(closed, resting)
        self.m.active = {}
        self.m.phase_forces = None
        if len(closed):
            f = self.s.system.applied_force(self.m.t, self.m.q, self.m.v)
            hints = hints or {}
            modes = [hints.get(key) for key in contact_keys(closed)] if hints else None
            try:
                forces = solve_contact_problem(closed, self.s.M_inv, f, modes=modes)
            except SolverError:
                creeping = creeping_modes(closed, modes)
                if creeping is None:
                    raise
                forces = solve_contact_problem(closed, self.s.M_inv, f, modes=creeping)
            tol = 1e-12 * (1.0 + float(np.max(forces.lam)))
            chosen = np.arange(len(closed)) if pressing else np.nonzero(forces.lam > tol)[0]
            known = []
            for k in chosen.tolist():
                e = closed[k]
                if (forces.lam[k] > tol and e.key not in releasing) or e.key in pressing:
                    self.m.active[e.key] = (self.s.kin.pairs[e.key], forces.modes[k])
                    known.append(e)
            if not isinstance(closed, RailContacts):
                # evaluated at this state, as the projection would evaluate them
                state = (tuple(self.m.active), self.m.q.tobytes(), self.m.v.tobytes())
                self.contacts.kept = (state, known)
        self.project()
        self._report_changes(out, previous, impacted)
        if impacted:
            # without active contacts nothing was projected: the evaluations still hold
            self.zeno.check_zeno(out, [] if self.m.active else evaluated)

    def _settle_one(
        self,
        out: StepOutput,
        previous: dict[Hashable, tuple[ContactPair, str]],
        contact: Contact,
        releasing: frozenset[Hashable],
    ) -> None:
        """:meth:`_settle` of one closed frictionless contact that does not approach.

        No impact; at rest it is active where the contact problem presses it
        (:func:`solver.contact.frictionless_multiplier`: one division, the
        general solution's bits, with ``λ`` alone deciding as there) unless it
        is ``releasing``, then positions and velocities are projected and
        changes reported.
        """
        self.m.active = {}
        self.m.phase_forces = None
        if abs(contact.u_n) <= max(IMPACT_SPEED_TOL, REST_SPEED_TOL):
            f = self.s.system.applied_force(self.m.t, self.m.q, self.m.v)
            lam = frictionless_multiplier(contact, self.s.M_inv, f)
            known = []
            if lam > 1e-12 * (1.0 + lam) and contact.key not in releasing:
                self.m.active[contact.key] = (self.s.kin.pairs[contact.key], "stick")
                known.append(contact)
            state = (tuple(self.m.active), self.m.q.tobytes(), self.m.v.tobytes())
            self.contacts.kept = (state, known)
        self.project()
        self._report_changes(out, previous, False)

    def at_velocities(self, contact: Contact) -> Contact | None:
        """``contact``, evaluated at the current positions, at the current velocities.

        A disk in a segment's region: its gap, normal, tangent, point and
        Jacobians depend on the positions only and its curvature terms are
        ``+0.0`` for any finite velocity (:func:`solver.geometry._contact`),
        so only ``u_n = n·ċ`` and ``u_t = t·ċ + rω`` change, formed as there.
        None for any other pair (it is evaluated afresh).
        """
        pair = self.s.kin.pairs[contact.key]
        if pair.j >= 0 or not isinstance(pair.feature, Segment):
            return None
        c, cdot, omega = self.s.system.disk_motion(self.m.q, self.m.v, pair.i)
        rel = np.asarray(cdot, dtype=float)
        if pair.feature.nearest(c) is None or not all(map(math.isfinite, rel.tolist())):
            return None
        c = contact
        return Contact(
            c.key, c.body, c.other, c.g, c.n, c.t, c.point, c.dofs, c.G_local, c.H_local,
            float(c.n.dot(rel)), float(c.t.dot(rel) + self.s.kin.radii[pair.i] * omega),
            c.gamma_n, c.gamma_t, c.restitution, c.friction, c.N, c.inside,
        )  # fmt: skip

    def _accelerations(self) -> np.ndarray | None:
        """``q̈`` (N,) of the motion that led to this instant (active contacts as they were)."""
        if self.m.active:
            return self.contacts.active_forces(self.m.t, self.m.q, self.m.v)[1].qdd
        return self.s.free_accelerations(self.m.t, self.m.q, self.m.v)

    def _report_changes(
        self, out: StepOutput, previous: dict[Hashable, tuple[ContactPair, str]], impacted: bool
    ) -> None:
        new_bodies = {pair.body for pair, _ in self.m.active.values()}
        for key, (pair, mode) in previous.items():
            if key not in self.m.active:
                if not impacted and pair.body not in new_bodies:
                    out.events.append(
                        Event(t=self.m.t, type="liftoff", body=pair.body, other=pair.other)
                    )
                continue
            new_mode = self.m.active[key][1]
            if new_mode != mode:
                kind = "stick" if new_mode == "stick" else "slip"
                out.events.append(
                    Event(
                        t=self.m.t,
                        type=kind,
                        body=pair.body,
                        other=pair.other,
                        message=f"{mode} -> {new_mode}",
                    )
                )

    def _absorb(self, closed: Sequence[Contact]) -> None:
        """Stop approach speeds below ``IMPACT_SPEED_TOL`` with a silent plastic impact.

        This ends the geometric ladder of ever smaller rebounds of jammed
        contacts (a bead squeezed between walls) and the creeping of a
        contact that closes with rounding-level speed; the kinetic energy
        removed (of order ``m · IMPACT_SPEED_TOL²``) is booked as dissipated.
        """
        if len(closed) == 1:
            result = self.rules.newton_single(closed[0], 0.0)
        else:
            G = self.rules.columns(closed, "G_local")
            result = resolve_impact(self.s.system.M_diag, G, self.m.v, 0.0, law="staged")
        self.m.v = np.array(result.v_plus, dtype=float)
        self.m.impact_loss -= float(result.energy_change)

    def newton_output(
        self,
        out: StepOutput,
        pair: ContactPair,
        dofs: np.ndarray,
        G: np.ndarray,
        stage: ImpactStage,
        v_plus: np.ndarray,
        impulse: float,
        energy_change: float,
    ) -> None:
        """Write a one-contact Newton impact formed in closed form, as :meth:`_impact` writes it.

        The frames ``pre`` and ``post`` (no active contact), the velocities
        ``v_plus`` taken and the energy change ``energy_change`` (J) booked,
        the ``impact`` event with its stage record (``dofs``, ``G`` the
        contact's ``G_local``, ``stage`` the law's one stage) and the Zeno
        bookkeeping; no event without an impulse (N·s), as for a contact that
        does not approach. For callers that resolve the impact themselves
        (a free flight's bounce, a bead between stops), bit for bit. The
        stage's ``y`` (the callers' copy of the velocities before) is the
        ``pre`` frame's velocities, and one copy of ``v_plus`` serves the
        ``post`` frame and the event: outputs share their copies, as the
        frames of one instant share their positions'.
        """
        q, work, t, v_minus = self.m.q, self.m.work, self.m.t, self.m.v
        before = self.recorder.energy(q, v_minus, work)
        # the frames of one instant share their positions' copy
        q = q.copy()
        out.frames.append(Frame(t, "pre", q, stage.y, (), before))
        self.m.v = v_plus
        self.m.impact_loss -= energy_change
        after = self.recorder.energy_at(before, v_plus, work)
        v_after = v_plus.copy()
        out.frames.append(Frame(t, "post", q, v_after, (), after))
        hit = frozenset((pair.key,)) if impulse > 0.0 else frozenset()
        if hit:
            out.events.append(
                Event(
                    t=t,
                    type="impact",
                    body=pair.body,
                    other=pair.other,
                    normal_impulse=impulse,
                    tangent_impulse=0.0,
                    stages=1,
                    energy_change=energy_change,
                    v_minus=v_minus,
                    v_plus=v_after,
                    impact_stages=ImpactStages(dofs, G, 0, [stage]),
                )
            )
        self.zeno.record(t, hit)

    def impact(self, out: StepOutput, closed: Sequence[Contact]) -> None:
        """One impact of the closed contacts; frames ``pre`` and ``post``, events per contact."""
        v_minus = self.m.v.copy()
        result = self.rules.law_result(closed, v_minus)
        out.frames.append(self.recorder.frame(self.m.t, "pre", self.m.y()))
        self.m.v = np.array(result.v_plus, dtype=float)
        self.m.impact_loss -= float(result.energy_change)
        out.frames.append(self.recorder.frame(self.m.t, "post", self.m.y()))
        # one copy shared by the events of all contacts (a copy each grew as contacts × N)
        v_plus = self.m.v.copy()
        impulse = np.asarray(result.impulse, dtype=float)
        tangent = getattr(result, "tangent_impulse", None)
        tangent = np.zeros(len(closed)) if tangent is None else np.asarray(tangent, dtype=float)
        loudest = int(impulse.argmax())
        stages = len(result.stages)
        energy_change = float(result.energy_change)
        if isinstance(closed, RailContacts):
            # a chain's contacts are arrays: their events share one record of the stages
            written = np.nonzero(~((impulse <= 0.0) & (closed.u_n >= -IMPACT_SPEED_TOL)))[0]
            rows = written.tolist()
            shared = SharedImpactStages(closed, result.stages)
            bodies, others = closed.body_ids(written)
            records: list[Any] = [shared] * len(rows)
            normal, tangential = impulse[written].tolist(), tangent[written].tolist()
        else:
            # a few contacts: one at a time in floats (arrays cost more than they save)
            rows, bodies, others, records, normal, tangential = [], [], [], [], [], []
            for k, (e, p_n, p_t) in enumerate(
                zip(closed, impulse.tolist(), tangent.tolist(), strict=True)
            ):
                if p_n <= 0.0 and e.u_n >= -IMPACT_SPEED_TOL:
                    continue
                rows.append(k)
                bodies.append(e.body)
                others.append(e.other)
                records.append(ImpactStages(e.dofs, e.G_local, k, result.stages))
                normal.append(p_n)
                tangential.append(p_t)
        for k, body, other, record, p_n, p_t in zip(
            rows, bodies, others, records, normal, tangential, strict=True
        ):
            out.events.append(
                Event(
                    t=self.m.t,
                    type="impact",
                    body=body,
                    other=other,
                    normal_impulse=p_n,
                    tangent_impulse=p_t,
                    stages=stages,
                    energy_change=energy_change if k == loudest else 0.0,
                    v_minus=v_minus,
                    v_plus=v_plus,
                    impact_stages=record,
                )
            )
        if not result.admissible:
            u_plus = np.asarray(self.rules.columns(closed, "G_local").T @ self.m.v).ravel()
            worst = int(np.argmin(u_plus))
            out.events.append(
                Event(
                    t=self.m.t,
                    type="inadmissible",
                    body=closed[worst].body,
                    other=closed[worst].other,
                    v_minus=v_minus,
                    v_plus=v_plus,
                    message=f"the {self.s.law} law left u_n = {u_plus[worst]:.6g} m/s < 0",
                )
            )
        if result.gains_energy:  # restitutions that differ per contact (docs/LIMITS.md)
            out.events.append(
                Event(
                    t=self.m.t,
                    type="energy_gain",
                    body=closed[loudest].body,
                    other=closed[loudest].other,
                    stages=stages,
                    energy_change=energy_change,
                    v_minus=v_minus,
                    v_plus=v_plus,
                    message=(
                        f"the {self.s.law} law gained {energy_change:.6g} J of kinetic energy "
                        "(restitutions that differ per contact: no loss is guaranteed)"
                    ),
                )
            )
        if isinstance(closed, RailContacts):
            hit = frozenset(closed.keys(np.nonzero(impulse > 0.0)[0]))
        else:
            hit = frozenset(
                e.key for e, p_n in zip(closed, impulse.tolist(), strict=True) if p_n > 0.0
            )
        self.zeno.record(self.m.t, hit)

    def project(self) -> None:
        """Put active contacts back on ``g = 0``, their velocities on ``u_n = 0``.

        Sticking contacts also get ``u_t = 0``. Both projections are
        M-orthogonal (the smallest change in kinetic-energy norm); the kinetic
        energy they remove is booked as dissipated. The active contacts are
        evaluated once per state (:meth:`_active_contacts`): positions whose
        gaps are already within ``1e-14`` stay as they are, and so do their
        evaluations. One constraint row is solved in closed form
        (:func:`one_row_solution`, the bits of the least-squares route); with
        ``Gᵀv = ±0`` its velocities are kept (the subtraction's bits) and
        ``T − T`` is booked.
        """
        if not self.m.active:
            return
        M_inv = self.s.M_inv[:, None]
        evals = self.contacts.active_contacts(self.m.q, self.m.v)
        for _ in range(MAX_PROJECTION_ITERATIONS):
            g = [e.g for e in evals]
            if (abs(g[0]) if len(g) == 1 else np.max(np.abs(g))) <= 1e-14:
                break
            if len(evals) == 1:
                w = self.s.M_inv * evals[0].G
                shift = w * one_row_solution(float(evals[0].G.dot(w)), g[0])
                self.m.q = self.m.q - (shift + 0.0)  # W @ x of one column: 0 + w x
            else:
                G = np.column_stack([e.G for e in evals])
                W = M_inv * G
                self.m.q = self.m.q - W @ np.linalg.lstsq(G.T @ W, g, rcond=1e-12)[0]
            evals = self.contacts.active_contacts(self.m.q, self.m.v)
        else:
            raise SolverError(
                f"projecting the active contacts onto g = 0 did not converge in "
                f"{MAX_PROJECTION_ITERATIONS} iterations"
            )
        columns = [e.G for e in evals]
        columns += [
            e.H
            for e, (_, mode) in zip(evals, self.m.active.values(), strict=True)
            if mode == "stick" and e.friction > 0.0
        ]
        kinetic_before = self.s.system.kinetic_energy(self.m.v)
        if len(columns) == 1:
            w = self.s.M_inv * columns[0]
            k, b = float(columns[0].dot(w)), float(columns[0].dot(self.m.v))
            if self.lean_settle and b == 0.0 and LAPACK_SCALED < k < 1.0 / LAPACK_SCALED:
                # x = b/k = ±0 with w finite (as k is): w x + 0.0 is +0.0 throughout and
                # v − 0.0 is v to the bit (−0.0 and NaN entries too); the loss is T − T
                self.m.v = self.m.v.copy()  # a new array, as the subtraction makes
                self.m.impact_loss += kinetic_before - kinetic_before
                return
            x = one_row_solution(k, b)
            self.m.v = self.m.v - (w * x + 0.0)  # W @ x of one column: 0 + w x
        else:
            C = np.column_stack(columns)
            W = M_inv * C
            self.m.v = self.m.v - W @ np.linalg.lstsq(C.T @ W, C.T @ self.m.v, rcond=1e-12)[0]
        self.m.impact_loss += kinetic_before - self.s.system.kinetic_energy(self.m.v)
