"""Zeno bouncing in the event-driven stepper: the jump to the accumulation point (MECHANICS §4).

:class:`ZenoSummer` ends a geometric bounce sequence of one contact, or a
shrinking run of bounces shared among several contacts, by carrying the
bounces with the scene's impact law (friction included) between closed-form
flights up to the accumulation point, where persistent contact begins. Scenes
with springs or forcing (no closed-form free flight) are captured
plastically at the accumulation time instead. Recognising the sequences is
:mod:`solver.zeno`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from solver.contact_pairs import ContactPair
from solver.event_handling import one_row_solution
from solver.event_tolerances import (
    COLLAPSE_INTERVAL,
    GAP_TOL,
    MAX_ZENO_BOUNCES,
    ZENO_HEIGHT,
    ZENO_SPEED_FLOOR,
)
from solver.flight import Parabola
from solver.frames import Event, StepOutput
from solver.geometry import Segment, _frozen_array
from solver.motion_state import MotionState, Setup
from solver.system import Contact
from solver.zeno import ImpactCluster, ZenoWatch, accumulation_time


class ZenoSummer:
    """Bounce sequences summed to their accumulation point (a part of the event-driven stepper).

    Owns the watch of the impacts (:class:`solver.zeno.ZenoWatch`,
    :class:`solver.zeno.ImpactCluster`); sums with the event handler's impact
    law and writes through the recorder.
    """

    lean_zeno_end: bool = True
    """Whether the Zeno end takes its short routes: a disk in a segment's region evaluated in
    floats (:meth:`_segment_contact`) rather than by
    :meth:`solver.contact_pairs.DiskKinematics.evaluate`, and no projection of velocities
    that leave nothing to remove; the tests compare them with the general routes."""

    def __init__(
        self, setup: Setup, motion: MotionState, pairs: Any, recorder: Any, handler: Any = None
    ) -> None:
        self.s, self.m, self.pairs, self.recorder = setup, motion, pairs, recorder
        self.handler = handler  # wired by the stepper (the handler calls this part back)
        self.watch = ZenoWatch()
        self.cluster = ImpactCluster()

    def record(self, t: float, hit: Any) -> None:
        """Note the impact at ``t`` (s) of the contacts ``hit``."""
        self.watch.record(t, hit)
        self.cluster.record(t, hit)

    @property
    def geometric(self) -> bool:
        """Whether the last impacts of one contact form a geometric sequence."""
        return self.watch.geometric

    @property
    def shrinking(self) -> bool:
        """Whether the last impacts among several contacts form a shrinking run."""
        return bool(self.cluster.shrinking)

    def check_zeno(self, out: StepOutput, evaluated: list[Contact]) -> None:
        """End a geometric bounce sequence at its accumulation time (MECHANICS §4).

        ``evaluated`` are closed contacts already evaluated at the current
        state. Bounces shared among several contacts are ended by
        :meth:`_capture`.
        """
        if not self.watch.geometric:
            if self.cluster.shrinking:
                self._capture(out)
            return
        key = self.watch.key
        pair = self.s.kin.pairs[key]
        if key in self.m.active or pair.restitution >= 1.0:
            return
        e = next((c for c in evaluated if c.key == key), None)
        if e is None:
            e = self._segment_contact(pair, self.m.q, self.m.v)
            if e is None:
                e = self.s.kin.evaluate(pair, self.m.q, self.m.v)
        a_n = float(e.G @ self.s.free_accelerations(self.m.t, self.m.q, self.m.v)) + e.gamma_n
        if a_n >= 0.0 or e.u_n <= 0.0 or e.u_n * e.u_n / (2.0 * -a_n) > ZENO_HEIGHT:
            return
        if self._can_sum_bounces():
            bounces = self._sum_bounces(out, [e])
            if bounces is not None:
                self._end_bounces(out, [e], bounces)
                return
        t_inf = accumulation_time(self.m.t, e.u_n, pair.restitution, a_n)
        kinetic_before = self.s.system.kinetic_energy(self.m.v)
        w = e.G * self.s.M_inv
        self.m.v = self.m.v - w * (e.u_n / float(e.G @ w))
        self.m.impact_loss += kinetic_before - self.s.system.kinetic_energy(self.m.v)
        previous = dict(self.m.active)
        self.handler.settle(out, previous)
        self.watch.reset()
        self.cluster.reset()
        out.events.append(
            Event(
                t=t_inf,
                type="zeno",
                body=pair.body,
                other=pair.other,
                message=f"geometric bouncing accumulates at t = {t_inf:.15g} s; resting contact",
            )
        )

    def _segment_contact(
        self, pair: ContactPair, q: np.ndarray, v: np.ndarray, at: Contact | None = None
    ) -> Contact | None:
        """:meth:`~solver.contact_pairs.DiskKinematics.evaluate` of a disk in a segment's region.

        The operations of :meth:`solver.geometry.Segment.nearest`,
        :func:`solver.geometry._contact` (a straight feature: curvature terms
        ``+0.0``) and :meth:`solver.system.System.generalize` on floats, the
        two dot products numpy's as there: the same Contact, bit for bit,
        without the intermediate objects. Its full Jacobian ``G`` (N,) is
        filled in as its cached property would make it (zeros, the local
        entries on the pair's coordinates), ``H`` left to its cached property
        (the same numbers, made only where read). ``at`` is this pair's
        contact at the same positions ``q`` (m): its position terms and
        Jacobians are kept and only the speeds formed again, at ``v``. None
        (the pair is evaluated instead) for a pair of two disks, another
        feature or one with neighbours, a centre beyond the segment's ends or
        on its line, a velocity that is not finite, and with
        :attr:`lean_zeno_end` off.
        """
        if (
            not self.lean_zeno_end
            or pair.j >= 0
            or pair.neighbours
            or not isinstance(pair.feature, Segment)
        ):
            return None
        c, cdot, omega = self.s.system.disk_motion(q, v, pair.i)
        rel = np.asarray(cdot, dtype=float)
        if not all(map(math.isfinite, rel.tolist())):
            return None
        radius = self.s.kin.radii[pair.i]
        if at is None:
            s, px, py, d, nx, ny = pair.feature.foot(*c.tolist())
            if not (0.0 < s < 1.0 and d > 0.0):
                return None
            dofs = self.s.system.pair_dofs(pair.i, None)
            if len(dofs) == 1:  # a bead: its x alone
                g_local, h_local = [1.0 * nx], [1.0 * ny]
            else:
                g_local = [1.0 * nx, 1.0 * ny, 0.0]
                h_local = [1.0 * ny, 1.0 * -nx, float(self.s.system.radii[pair.i])]
            G = [0.0] * self.s.system.N
            for k, dof in enumerate(dofs.tolist()):
                G[dof] = g_local[k]
            kept = (
                float(d - radius), _frozen_array((nx, ny)), _frozen_array((ny, -nx)),
                _frozen_array((px, py)), dofs, np.array(g_local), np.array(h_local), np.array(G),
            )  # fmt: skip
        else:
            kept = (at.g, at.n, at.t, at.point, at.dofs, at.G_local, at.H_local, at.G)
        g, n, t, point, dofs, G_local, H_local, G_full = kept
        made = Contact(
            pair.key, pair.body, pair.other, g, n, t, point, dofs, G_local, H_local,
            float(n.dot(rel)), float(t.dot(rel) + radius * omega), 0.0, 0.0,
            pair.restitution, pair.friction, self.s.system.N, True,
        )  # fmt: skip
        made.__dict__["G"] = G_full  # the cached property, as it would be
        return made

    def _can_sum_bounces(self) -> bool:
        """True when the bounces ahead are free flights under constant gravity between impacts."""
        return self.s.flight and not self.m.active

    def _sum_bounces(self, out: StepOutput, contacts: list[Contact]) -> int | None:
        """Carry the bounces of ``contacts`` to their accumulation point (MECHANICS §4).

        Between impacts the motion is a free flight under gravity, a parabola;
        each gap ``g_k`` is followed in closed form (``g + u_n τ + ½ a_n τ²``,
        ``a_n`` the normal acceleration of the flight) so that hops far below
        the rounding of positions still close exactly, and every impact is the
        scene's law with its friction, so the friction impulse of each bounce
        is included. The series converges geometrically; it ends when no
        contact approaches faster than ``ZENO_SPEED_FLOOR``, when the run ends,
        or after ``MAX_ZENO_BOUNCES`` (a sequence that does not converge: what
        is left is then captured plastically, as by :meth:`_end_bounces`).
        Output samples on the way are written; the bounces are not events.

        Returns
        -------
        int or None
            The number of bounces summed, or None (nothing changed) when a
            flight would not close any of the contacts again.
        """
        a = self.s.weight_accelerations  # _can_sum_bounces: a free flight
        pairs = self._bounce_pairs(contacts, a)
        straight = [isinstance(pair.feature, Segment) for pair in pairs]
        # the contacts were evaluated at this state; the other pairs are evaluated here
        evals = list(contacts) + [
            self.s.kin.evaluate(pair, self.m.q, self.m.v) for pair in pairs[len(contacts) :]
        ]
        if len(pairs) == 1 and straight[0] and evals[0].friction == 0.0:
            bounces = self._geometric_series(out, evals[0], a)
            if bounces is not None:
                return bounces
        q, v = self.m.q.copy(), self.m.v.copy()
        gaps = [max(e.g, 0.0) for e in evals]
        # a straight feature's jump direction holds for every bounce on it
        directions = [
            self.handler.rules.jump_direction(e) if is_straight else None
            for e, is_straight in zip(evals, straight, strict=True)
        ]
        # the closing speeds and normal accelerations of the flight ahead
        u = [e.u_n for e in evals]
        a_n = [float(e.G @ a) + e.gamma_n for e in evals]
        t, loss = self.m.t, self.m.impact_loss
        bounce = 0
        while bounce < MAX_ZENO_BOUNCES:
            tau = [_closing_time(g, un, an) for g, un, an in zip(gaps, u, a_n, strict=True)]
            tau_k = min(tau)
            k = tau.index(tau_k)
            if not math.isfinite(tau_k):
                if bounce == 0:
                    return None
                break
            if -(u[k] + a_n[k] * tau_k) <= ZENO_SPEED_FLOOR:  # the next approach speed
                break
            t_hit = t + tau_k
            if t_hit >= self.s.t_end or self.recorder.next_sample_at <= t_hit:
                flight = Parabola(t, q, v, a, self.m.work.copy(), np.zeros(2))
                if t_hit >= self.s.t_end:
                    self.m.impact_loss = loss
                    self.recorder.emit_samples(out, flight.state, self.s.t_end, True, flight.states)
                    self.m.set_y(flight.state(self.s.t_end))
                    self.m.t = self.s.t_end
                    return bounce
                self.recorder.emit_samples(out, flight.state, t_hit, False, flight.states)
            dt = t_hit - t  # as Parabola.state forms the positions
            q, v = q + dt * (v + 0.5 * dt * a), v + tau_k * a
            gaps = [
                0.0 if n == k else max(g + tau_k * (un + 0.5 * tau_k * an), 0.0)
                for n, (g, un, an) in enumerate(zip(gaps, u, a_n, strict=True))
            ]
            t = t_hit
            # a straight feature keeps its normal, G and H (γ_n = 0) wherever the disk
            # is: its evaluation at the start serves every impact and flight, with the
            # normal speed n·ċ after each jump; other pairs are evaluated afresh
            hit = [n for n, g in enumerate(gaps) if g <= GAP_TOL]
            closed = [evals[n] if straight[n] else self.s.kin.evaluate(pairs[n], q, v) for n in hit]
            if len(closed) == 1 and closed[0].friction == 0.0:
                v, _, energy_change = self.handler.rules.newton_jump(
                    closed[0], closed[0].restitution, v, directions[hit[0]]
                )
            else:
                result = self.handler.rules.law_result(closed, v)
                v, energy_change = np.array(result.v_plus, dtype=float), result.energy_change
            loss -= float(energy_change)
            self.m.impact_loss = loss
            for n, pair in enumerate(pairs):
                if straight[n]:
                    centre_velocity = self.s.system.disk_motion(q, v, pair.i)[1]
                    u[n] = float(evals[n].n.dot(np.asarray(centre_velocity, dtype=float)))
                else:
                    evals[n] = self.s.kin.evaluate(pair, q, v)
                    u[n], a_n[n] = evals[n].u_n, float(evals[n].G @ a) + evals[n].gamma_n
            bounce += 1
        self.m.q, self.m.v, self.m.impact_loss = q, v, loss
        self.m.advance_clock(t)
        return bounce

    def _geometric_series(self, out: StepOutput, contact: Contact, a: np.ndarray) -> int | None:
        """All the bounces of one frictionless contact on a straight feature, summed exactly.

        Nothing else is within reach, so after the first flight (from the gap
        ``g`` at ``u_n`` to the approach speed ``w``) every bounce returns
        ``e`` times the speed it came with and the flights, ``2 e^k w/|a_n|``,
        form a geometric series: the accumulation point is
        ``t + τ₀ + 2ew/((1 − e)|a_n|)`` and all of ``½ w²/(GᵀM⁻¹G)`` is
        dissipated. The impacts only move the state along ``M⁻¹G/(GᵀM⁻¹G)``
        (the feature's normal and ``G`` are constant): the state at any time
        is the free flight plus the difference between the bounce's gap
        (and normal speed) and the free flight's along that direction. Output
        samples on the way are written with the energy dissipated by then.

        Returns
        -------
        int or None
            The number of bounces whose approach speed is above
            ``ZENO_SPEED_FLOOR`` (those the bounce-by-bounce sum would carry),
            or None when the series is left to it: the flight does not close
            the gap, the first approach is below the floor, or the run ends
            before the accumulation point.
        """
        e = contact.restitution
        u = contact.u_n
        a_n = float(contact.G @ a) + contact.gamma_n
        g = max(contact.g, 0.0)
        tau0 = _closing_time(g, u, a_n)
        if not math.isfinite(tau0):
            return None
        w = -(u + a_n * tau0)  # the first approach speed
        if not w > ZENO_SPEED_FLOOR:
            return None
        rest = 2.0 * e * w / ((1.0 - e) * -a_n)  # the flights after the first impact
        t0 = self.m.t
        t_inf = t0 + tau0 + rest
        if t_inf >= self.s.t_end:
            return None
        step, k = self.handler.rules.jump_direction(contact)
        along = [0.0] * self.s.N  # M⁻¹G/(GᵀM⁻¹G) on every coordinate
        for dof, x in zip(contact.dofs.tolist(), step.tolist(), strict=True):
            along[dof] = x
        # read only: the motion's arrays are replaced (never written) at the series' end;
        # the direction as an array only for samples on the way
        q, v, loss = self.m.q, self.m.v, self.m.impact_loss
        direction = np.array(along) if self.recorder.next_sample_at < t_inf else None

        def state(t: float) -> tuple[np.ndarray, np.ndarray, float]:
            """``(q, v)`` and the energy dissipated so far (J) at ``t`` (s) in the series."""
            tau = t - t0
            q_free, v_free = q + tau * (v + 0.5 * tau * a), v + tau * a
            if tau < tau0:
                return q_free, v_free, loss
            # the flight after impact k: it starts at I_k = S (1 − e^k) after the first
            # impact, S = 2ew/((1 − e)|a_n|), with the speed e^(k+1) w
            sigma, S = tau - tau0, rest
            x = sigma / S if S > 0.0 else 1.0
            if not x < 1.0:  # at the accumulation point to rounding: at rest
                speed, since, bounce = 0.0, 0.0, -1
            else:
                bounce = int(math.log1p(-x) / math.log(e)) if x > 0.0 else 0
                while bounce > 0 and S * (1.0 - e**bounce) > sigma:
                    bounce -= 1
                while S * (1.0 - e ** (bounce + 1)) <= sigma:
                    bounce += 1
                speed, since = e ** (bounce + 1) * w, sigma - S * (1.0 - e**bounce)
            height = since * (speed + 0.5 * a_n * since)
            free_gap, free_speed = g + tau * (u + 0.5 * a_n * tau), u + a_n * tau
            kept = 0.0 if bounce < 0 else e ** (2 * bounce + 2)  # of the first approach's energy
            dissipated = loss + 0.5 * w * w * (1.0 - kept) / k
            return (
                q_free + (height - free_gap) * direction,
                v_free + (speed + a_n * since - free_speed) * direction,
                dissipated,
            )

        while self.recorder.next_sample_at < t_inf:
            t_s, due = self.recorder.next_sample_at, self.recorder.next_sample
            q_s, v_s, self.m.impact_loss = state(t_s)
            row = np.concatenate((q_s, v_s, self.m.work))
            self.recorder.emit_samples(out, lambda _t, row=row: row, t_s, True)
            if self.recorder.next_sample == due:  # not written (past t_end): none is due before t∞
                break
        T = tau0 + rest
        free_gap, free_speed = g + T * (u + 0.5 * a_n * T), u + a_n * T
        self.m.q, self.m.v = _series_end(q, v, a, along, T, free_gap, free_speed)
        self.m.impact_loss = loss + 0.5 * w * w / k
        self.m.advance_clock(t_inf)
        bounces, speed = 0, w
        while speed > ZENO_SPEED_FLOOR:
            bounces, speed = bounces + 1, speed * e
        return bounces

    def _bounce_pairs(self, contacts: list[Contact], a: np.ndarray) -> list[ContactPair]:
        """The bouncing contacts and every other pair the disks can reach before they settle.

        The series lasts about ``T = 2 max u_n / ((1 − max e) min |a_n|)``;
        pairs whose gap is within twice the distance a disk centre travels in
        that time are followed too (a ball bouncing in a corner touches one
        wall at a time).
        """
        if len(contacts) == 1:  # the same numbers without the generators
            u, e_max = contacts[0].u_n, contacts[0].restitution
            a_n = abs(float(contacts[0].G @ a) + contacts[0].gamma_n)
        else:
            u = max(e.u_n for e in contacts)
            a_n = min(abs(float(e.G @ a) + e.gamma_n) for e in contacts)
            e_max = max(e.restitution for e in contacts)
        T = 2.0 * u / ((1.0 - min(e_max, 0.999)) * a_n)
        reach = self._bounce_reach(a, T)
        every = self.pairs.all_candidates()
        near = [n for n, g in enumerate(every.gaps(self.m.q, band=True).tolist()) if g <= reach]
        keys = {e.key for e in contacts}
        return [self.s.kin.pairs[e.key] for e in contacts] + [
            every.pairs[n] for n in near if every.pairs[n].key not in keys
        ]

    def _bounce_reach(self, a: np.ndarray, T: float) -> float:
        """Twice the farthest (m) a disk centre flies in ``T`` (s) at ``v`` and accelerations ``a``.

        ``|ċ| T + ½ |c̈| T²`` per disk; one disk's row is taken in floats with
        the same operations (numpy's hypot), the same bits as the arrays'.
        """
        if self.s.system.n_disks == 1:
            vx, vy = self.s.system.disk_motion(self.m.q, self.m.v, 0)[1].tolist()
            gx, gy = self.s.system.disk_motion(self.m.q, a, 0)[1].tolist()
            return 2.0 * (float(np.hypot(vx, vy)) * T + 0.5 * float(np.hypot(gx, gy)) * T * T)
        cd = self.s.system.centre_velocities(self.m.v)
        ca = self.s.system.centre_velocities(a)
        return 2.0 * float(
            np.max(np.hypot(cd[:, 0], cd[:, 1]) * T + 0.5 * np.hypot(ca[:, 0], ca[:, 1]) * T * T)
        )

    def _end_bounces(self, out: StepOutput, contacts: list[Contact], bounces: int) -> None:
        """Persistent contact from the accumulation point: the rest of ``u_n`` removed, LCP."""
        self.watch.reset()
        self.cluster.reset()
        first = contacts[0]
        where = ""
        if len(contacts) > 1:
            where = (
                " on several contacts (" + ", ".join(f"{e.body}–{e.other}" for e in contacts) + ")"
            )
        event = Event(
            t=self.m.t,
            type="zeno",
            body=first.body,
            other=first.other,
            message=f"bouncing{where} accumulates at t = {self.m.t:.15g} s after {bounces} more "
            "bounces summed in closed form; resting contact",
        )
        if self.m.t >= self.s.t_end:
            out.events.append(event)
            self.recorder.finish(out)
            return
        pairs = [self.s.kin.pairs[e.key] for e in contacts]
        one = self._segment_contact(pairs[0], self.m.q, self.m.v) if len(pairs) == 1 else None
        evals = (
            [self.s.kin.evaluate(pair, self.m.q, self.m.v) for pair in pairs]
            if one is None
            else [one]
        )
        kinetic_before = self.s.system.kinetic_energy(self.m.v)
        known = None
        if len(evals) == 1:
            G = evals[0].G
            separating = max(float(G.dot(self.m.v)), 0.0)
            if separating == 0.0 and one is not None:
                # nothing to remove (a ball at rest on a level floor): v − (w·0 + 0) is v
                # to the bit, the contact is the one just made and T − T is booked
                self.m.impact_loss += kinetic_before - kinetic_before
                self.handler.settle(out, dict(self.m.active), known=[one])
                out.events.append(event)
                return
            w = self.s.M_inv * G
            x = one_row_solution(float(G.dot(w)), separating)
            self.m.v = self.m.v - (w * x + 0.0)  # W @ x of one column: 0 + w x
            # the positions are those evaluated: the speeds formed again
            at_rest = (
                self._segment_contact(pairs[0], self.m.q, self.m.v, one)
                if one is not None
                else self.handler.at_velocities(evals[0])
            )
            known = None if at_rest is None else [at_rest]
        else:
            C = np.column_stack([e.G for e in evals])
            W = self.s.M_inv[:, None] * C
            u = np.maximum(C.T @ self.m.v, 0.0)
            self.m.v = self.m.v - W @ np.linalg.lstsq(C.T @ W, u, rcond=1e-12)[0]
        self.m.impact_loss += kinetic_before - self.s.system.kinetic_energy(self.m.v)
        self.handler.settle(out, dict(self.m.active), known=known)
        out.events.append(event)

    def _capture(self, out: StepOutput) -> None:
        """Plastic capture of bounces shared among several contacts (never an endless run).

        Rule: after a shrinking run of impacts (:class:`solver.zeno.ImpactCluster`),
        take the closed contacts that separate (``u_n > 0``) although the
        applied force presses them (free normal acceleration ``a_n < 0``). If
        every contact that took an impulse in the latest impact is one of them
        and none of them would rise more than ``ZENO_HEIGHT`` (``u_n²/(2|a_n|)``),
        their separation speeds are set to zero together (M-orthogonal
        projection; the kinetic energy removed is booked as dissipated), the
        contact problem decides which of them carry force, and a ``zeno``
        event at the current time says so. The bounces given up would have
        risen less than ``ZENO_HEIGHT``.
        """
        if self.cluster.last_interval <= COLLAPSE_INTERVAL:
            closed = self.handler.closed(self.handler.closed_pairs())
            self._collapse(out, [e for e in closed if e.u_n >= 0.0])
            return
        f = self.s.free_accelerations(self.m.t, self.m.q, self.m.v)
        if not self._may_capture(f):
            return
        closed = self.handler.closed(self.handler.closed_pairs())
        chosen = []
        for e in closed:
            a_n = float(e.G @ f) + e.gamma_n
            if e.u_n > 0.0 and a_n < 0.0:
                if e.u_n * e.u_n / (2.0 * -a_n) > ZENO_HEIGHT:
                    return
                chosen.append(e)
        if not chosen or not self.cluster.last <= {e.key for e in chosen}:
            return
        if self._can_sum_bounces():
            bounces = self._sum_bounces(out, chosen)
            if bounces is not None:
                self._end_bounces(out, chosen, bounces)
                return
        names = ", ".join(f"{e.body}–{e.other}" for e in chosen)
        self._capture_plastically(
            out,
            chosen,
            f"bouncing on several contacts ({names}) would rise less than "
            f"{ZENO_HEIGHT:g} m: captured plastically into resting contact",
        )

    def _may_capture(self, f: np.ndarray) -> bool:
        """False when a contact of the latest impact rules the capture out, as :meth:`_capture`
        would find after evaluating every closed contact: a disk's contact with a feature that
        does not separate, is not pressed (``f`` the free accelerations) or would rise more
        than ``ZENO_HEIGHT`` (not in the chosen set, or an end), or is not a closed contact's.
        One contact evaluated instead of the closed pairs found and evaluated (a bead that
        bounces between two stops). True when :meth:`_capture` has to look."""
        for key in self.cluster.last:
            pair = self.s.kin.pairs[key]
            if pair.j >= 0:
                continue  # two disks: left to the closed pairs
            e = self._segment_contact(pair, self.m.q, self.m.v)
            if e is None:
                e = self.s.kin.evaluate(pair, self.m.q, self.m.v)
            if not (e.inside and any(e.G_local.tolist())) or not e.u_n > 0.0:
                return False
            a_n = float(e.G @ f) + e.gamma_n
            if not a_n < 0.0 or e.u_n * e.u_n / (2.0 * -a_n) > ZENO_HEIGHT:
                return False
        return True

    def _collapse(self, out: StepOutput, chosen: list[Contact]) -> None:
        """Plastic capture of an inelastic collapse: bounces nothing presses, ever closer in time.

        A light bead between two heavier ones closing in on it, two wheels
        jammed together: the impacts of a shrinking run come within
        ``COLLAPSE_INTERVAL`` of each other and the relative speeds tend to
        zero. The separation speeds of the contacts that take part are set to
        zero together (M-orthogonal, momentum kept, the kinetic energy removed
        booked as dissipated) and the contact problem takes over.
        """
        if not chosen or not self.cluster.last <= {e.key for e in chosen}:
            return
        names = ", ".join(f"{e.body}–{e.other}" for e in chosen)
        self._capture_plastically(
            out,
            chosen,
            f"inelastic collapse on {names}: impacts less than "
            f"{COLLAPSE_INTERVAL:g} s apart, captured plastically",
        )

    def _capture_plastically(self, out: StepOutput, chosen: list[Contact], message: str) -> None:
        """Set the separation speeds of ``chosen`` to zero together, then settle; a ``zeno`` event.

        An M-orthogonal projection (momentum kept), the kinetic energy it
        removes booked as dissipated (J); the contact problem then decides
        which contacts carry force, and the bounce watch starts afresh.
        """
        C = np.column_stack([e.G for e in chosen])
        W = self.s.M_inv[:, None] * C
        kinetic_before = self.s.system.kinetic_energy(self.m.v)
        self.m.v = self.m.v - W @ np.linalg.lstsq(C.T @ W, C.T @ self.m.v, rcond=1e-12)[0]
        self.m.impact_loss += kinetic_before - self.s.system.kinetic_energy(self.m.v)
        self.handler.settle(out, dict(self.m.active))
        self.watch.reset()
        self.cluster.reset()
        out.events.append(
            Event(
                t=self.m.t,
                type="zeno",
                body=chosen[0].body,
                other=chosen[0].other,
                message=message,
            )
        )


def _series_end(
    q: np.ndarray,
    v: np.ndarray,
    a: np.ndarray,
    along: list[float],
    T: float,
    free_gap: float,
    free_speed: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities (N,) where a Zeno series ends, ``T`` (s) after it began.

    The free flight from ``(q, v)`` under the accelerations ``a``,
    ``q + T (v + ½ T a)`` and ``v + T a``, less its gap ``free_gap`` (m) and
    normal speed ``free_speed`` (m/s) along ``along`` (``M⁻¹G/(GᵀM⁻¹G)`` on
    every coordinate): the arrays' elementwise operations on floats, in
    their order, the same bits.
    """
    half = 0.5 * T
    rows = zip(q.tolist(), v.tolist(), a.tolist(), along, strict=True)
    ends = [
        (x + T * (y + half * z) - free_gap * d, y + T * z - free_speed * d) for x, y, z, d in rows
    ]
    return np.array([x for x, _ in ends]), np.array([y for _, y in ends])


def _closing_time(g: float, u: float, a_n: float) -> float:
    """When (s) the gap ``g + u τ + ½ a_n τ²`` (m) first closes, ``inf`` if it never does.

    With ``a_n >= 0`` (gravity holds the disk off, or along the feature: a wall
    beside a ball bouncing on the floor) the gap still closes when the disk
    approaches fast enough, ``u < 0`` and ``u² >= 2 a_n g``: at the smaller root
    ``2g/(−u + √(u² − 2 a_n g))`` (``−g/u`` for ``a_n = 0``). Taking that for
    never let a ball bouncing into a rough corner sink 4.7e-7 m into the wall.
    """
    if a_n < 0.0:
        return (u + math.sqrt(max(u * u - 2.0 * a_n * g, 0.0))) / -a_n
    discriminant = u * u - 2.0 * a_n * g
    if u >= 0.0 or discriminant < 0.0:
        return math.inf
    return 2.0 * g / (-u + math.sqrt(discriminant))
