"""Compliant (soft) contacts: a force, not a constraint (paper 003 §2; Hertz).

A disk against a boundary that carries ``compliance`` (k, c, p) feels the
normal force

    F = k·δ^p + c·δ̇   while F > 0, else 0,

with δ = −g the overlap (m) and δ̇ = −u_n its rate. It never pulls, there is
no velocity jump and no impact law. The force is a function of the state
alone, so it enters the applied force of the smooth motion like a spring
(:meth:`CompliantSet.force`), in every stepper: the event-driven phases
integrate it, the time-stepper takes it as a force.

Energy (docs/PHYSICS.md, "Compliant contact"): the stop stores
``U = k·δ^(p+1)/(p+1)`` (counted in ``E_spring``) while δ > 0. The
dissipated power is ``(F − k·δ^p)·δ̇``: ``c·δ̇²`` while the contact presses,
and after a damped release (F = 0 while δ > 0, the disk leaving) the spring's
energy ``k·δ^p·|δ̇|`` as the disk goes out: the energy the stop still stored
at the release is dissipated by the time δ = 0, so that
``E_total + E_dissipated − E_input`` stays constant.

Events (:meth:`CompliantSet.event_values`): ``touch`` when δ reaches 0 while
closing, ``release`` when ``k·δ^p + c·δ̇`` falls to 0 with δ > 0 (the force
ends; for c = 0 that is δ = 0). The event-driven stepper ends a smooth
phase at each, so that no integration step straddles the kink of the force.

The closed forms of one mass against a stop are in
:mod:`solver.compliant_stop`.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from solver.event_tolerances import FRICTION_FLOOR
from solver.frames import ContactState
from solver.geometry import (
    Segment,
    Vertex,
    corner_foot,
    disk_disk_contact,
    disk_feature_contact,
)

STEP_SHARE = 0.02
"""Largest ODE step while a compliant contact presses, as a share of its period."""

COMPLIANT_RTOL = 2.5e-14
"""The ODE's relative tolerance while a compliant contact presses (at most the run's own).

The energy balance of a pressing phase is as good as the integrated state:
at the stepper's default 1e-10 it held to 1e-9–1e-11 of the energy, at 1e-13
to about 1e-12 (docs/PHYSICS.md, "Compliant contact"). The phases are short;
the measured cost is in bench/compliant_tolerance.py."""

EPS = float(np.finfo(float).eps)

FIRST_STEP_SHARE = 1e-3
"""The first ODE step of a pressing phase: a share of the longest, :meth:`CompliantSet.max_step`."""

NOISE_SHARE = 0.1
"""The velocities' atol of a pressing phase, as a share of their round-off per step."""

COMPLIANT_ATOL = 1e-15
"""The ODE's absolute tolerance (m, m/s, J) while a compliant contact presses."""

COMPLIANT_EVENTS = ("touch", "release", "stick", "slip")
"""Event types of compliant contacts (``events.csv``): no impact, no velocity jump.

A wheel pressing a compliant feature with friction also ``stick``s (its slip
speed reaches 0) and ``slip``s (its holding force reaches μF)."""

STICK_SPEED = 1e-9
"""Slip speed (m/s) at or below which a pressing wheel starts a phase at rest (stuck if it can)."""


FRICTION_SWEEPS = 100
"""Most projected Gauss–Seidel sweeps of the time-stepper's compliant friction (one suffices
for one rubbing pair)."""

FRICTION_TOL = 1e-14
"""The sweeps stop when no impulse changes by more than this share of the largest bound."""


@dataclass(frozen=True)
class StepFriction:
    """The tangential impulses of compliant friction over one time step.

    ``J`` the pairs' tangent rows (n, N), ``impulse`` their impulses P (N·s),
    ``dv`` the velocity change ``M⁻¹ Jᵀ P``, ``keys`` the ``(body, other)``
    of each pair, ``h`` the step (s).
    """

    J: np.ndarray
    impulse: np.ndarray
    dv: np.ndarray
    keys: list[tuple[str, str]]
    h: float

    def work(self, v: np.ndarray, v_next: np.ndarray) -> float:
        """The impulses' work (J) over the step, ``½ P·(u_t + u_t⁺)``: ≤ 0."""
        return 0.5 * float(self.impulse @ (self.J @ (v + v_next)))

    def forces(self) -> dict[tuple[str, str], float]:
        """The mean tangential force (N) of each pair over the step, by ``(body, other)``."""
        return {key: float(p) / self.h for key, p in zip(self.keys, self.impulse, strict=True)}


class CompliantSet:
    """The compliant boundary features of a system and their forces, energies and events.

    Parameters
    ----------
    system : solver.system.System
        The compiled scene (its disks).
    features : list of (str, feature, Compliance)
        Contact id, geometric feature and compliance of every compliant
        boundary feature, in scene order.

    Attributes
    ----------
    engaged : frozenset of (int, int) or None
        ``None`` (a :class:`~solver.system.System`'s own set, the
        time-stepper's): the force is ``max(0, k·δ^p + c·δ̇)`` of every
        overlap, a function of the state. An event-driven run works on a copy
        of the system with a set of its own (:meth:`for_system`,
        :meth:`solver.system.System.for_one_run`), whose
        :class:`solver.compliant_events.CompliantEvents` sets, at each phase's
        start (:meth:`engage`),
        the ``(disk, feature)`` pairs that press; within the phase only they
        carry a force, the smooth ``k·δ^p + c·δ̇`` (no clamp, so that no ODE
        step straddles a kink), and the phase ends at a ``touch`` or
        ``release``.
    """

    def __init__(
        self,
        system: Any,
        features: list[tuple[str, Any, Any]],
        between: Any = None,
        friction: list[float] | None = None,
    ) -> None:
        # a weak proxy: the system holds this set (``System.compliance``), and a strong
        # edge back made every compiled compliant scene a reference cycle, left to the
        # garbage collector (tests/test_stepper_cycles.py)
        self.system = system if isinstance(system, weakref.ProxyType) else weakref.proxy(system)
        self.features = features
        self.between = between
        self.friction = list(friction) if friction is not None else [0.0] * len(features)
        """Coulomb μ of each compliant feature (wheels rub on it; two disks do not)."""
        self.modes: dict[tuple[int, int], float] = {}
        """Friction mode of each pressing wheel–feature pair with μ > 0 (an
        event-driven phase's, fixed by :meth:`engage`): the slip direction
        ``s = ±1`` (friction ``−μ F s``), or ``0.0`` stuck (friction the
        tangential force that keeps ``u̇_t = 0``, as long as it is at most μF)."""
        """The compliance of every body–body contact (``contact.compliance``), or None."""
        # one law per "other": the features, then (with ``between``) each disk as the
        # second disk j of a pair (i, j), i < j, at index len(features) + j
        laws = [law for _, _, law in features]
        if between is not None:
            laws += [between] * system.n_disks
        self._k = [float(law.stiffness) for law in laws]
        self._c = [float(law.damping) for law in laws]
        self._p = [float(law.exponent) for law in laws]
        self.engaged: frozenset[tuple[int, int]] | None = None
        self._last: tuple[Any, list[tuple[int, int, Any]]] | None = None

    def __len__(self) -> int:
        return len(self.features)

    def for_system(self, system: Any) -> CompliantSet:
        """The same compliant contacts for ``system`` (a run's copy), nothing engaged."""
        return CompliantSet(system, self.features, self.between, self.friction)

    def _pairs(self, q: np.ndarray, v: np.ndarray) -> list[tuple[int, int, Any]]:
        """``(disk, other, DiskContact)`` of every compliant pair that has a contact at ``q``
        (a disk's centre in the feature's Voronoi region; two disks apart)."""
        return [pair for pair in self._every_pair(q, v) if pair[2] is not None]

    def _every_pair(self, q: np.ndarray, v: np.ndarray) -> list[tuple[int, int, Any]]:
        """``(disk, other, contact)`` of every compliant pair, in a fixed order.

        ``other`` is a feature's index, or ``len(features) + j`` for the disk
        j of a body–body pair ``(disk, j)``, ``disk < j`` (normal from j to disk).
        ``contact`` a DiskContact, or None: the pair has no contact at ``q``
        (the centre outside the feature's Voronoi region). One entry per pair
        whatever ``q``, so the event rows of two instants compare the same
        pairs (fuzz, issue 24: a slanted stop whose end regions the bead
        crosses changed the row count and failed the run).
        A pair apart (gap > 0) that does not press (not in :attr:`engaged`)
        is an :class:`Apart`: its gap and normal rate, the same bits, which is
        all that is read of it. The list of the last ``(q, v)`` is kept: the
        applied force and the dissipated power of a state ask for the same.
        """
        key = (q.tobytes(), v.tobytes(), self.engaged)
        last = self._last  # read once: a System's own set may serve two threads
        if last is not None and last[0] == key:
            return last[1]
        out = _pair_contacts(self, q, v)
        self._last = (key, out)
        return out

    def _other_id(self, f: int) -> str:
        """Scene id of the other side of a pair: the feature's, or the second disk's."""
        if f < len(self.features):
            return self.features[f][0]
        return self.system.disk_body_id(f - len(self.features))

    def _mass(self, k: int, f: int) -> float:
        """Mass (kg) that the pair's spring moves: the disk's, or two disks' reduced mass."""
        system = self.system
        m = float(system.M_diag[system._disk_ix[k]])
        if f < len(self.features):
            return m
        other = float(system.M_diag[system._disk_ix[f - len(self.features)]])
        return m * other / (m + other)

    def _spring(self, f: int, g: float) -> float:
        """``k·δ^p`` (N) at gap ``g`` (δ = −g), continued smoothly (odd) past δ = 0."""
        delta = -g
        return math.copysign(self._k[f] * abs(delta) ** self._p[f], delta)

    def _press(self, f: int, dc: Any) -> float:
        """``k·δ^p + c·δ̇`` (N): the force while the contact presses, before any clamp."""
        return self._spring(f, dc.g) - self._c[f] * dc.u_n

    def _force(self, k: int, f: int, dc: Any) -> float:
        """The normal force (N) of pair ``(k, f)`` under :attr:`engaged`."""
        if self.engaged is None:
            return max(0.0, self._press(f, dc)) if dc.g < 0.0 else 0.0
        return self._press(f, dc) if (k, f) in self.engaged else 0.0

    def engage(
        self,
        q: np.ndarray,
        v: np.ndarray,
        other: np.ndarray | None = None,
        settled: tuple[str, tuple[int, int]] | None = None,
    ) -> None:
        """Fix the pressing pairs and their friction modes for the phase starting at ``(q, v)``.

        A pair presses when it overlaps or touches (``g ≤ 0``) and either its
        force ``k·δ^p + c·δ̇`` is positive or it is closing (``u_n < 0``: just
        touched, δ = 0). ``settled``: the ``touch`` or ``release`` that ended
        the last phase at this instant, ``(kind, (disk, other))``; its pair's
        side is the event's, not the sign of a gap or force recomputed at
        the event's time, which is 0 to round-off there (a released pair
        whose force reads +1e-17 would otherwise press on with a force that
        never crosses 0 again: it would pull). A pressing wheel on a feature with friction slips
        in the direction of its slip speed ``u_t`` while ``|u_t| >
        STICK_SPEED``; at rest it sticks if the tangential force that keeps
        it at rest (``other``: the rest of the applied force) is at most μF,
        and otherwise slips against that force (as resting contact does).
        """
        pairs = self._pairs(q, v)
        kind, key = settled if settled is not None else ("", None)
        self.engaged = frozenset(
            (k, f)
            for k, f, dc in pairs
            if (dc.g <= 0.0 or (kind == "touch" and (k, f) == key))
            and (self._press(f, dc) > 0.0 or dc.u_n < 0.0)
            and not (kind == "release" and (k, f) == key)
        )
        self.modes = {}
        for k, f, dc in pairs:
            if (k, f) in self.engaged and self._rubs(k, f):
                self.modes[k, f] = 0.0 if abs(dc.u_t) <= STICK_SPEED else math.copysign(1.0, dc.u_t)
        if other is not None and 0.0 in self.modes.values():
            for (k, f), tangential, normal in self._sticking(q, v, other):
                if abs(tangential) > self.friction[f] * normal:  # cannot hold: slips
                    self.modes[k, f] = -math.copysign(1.0, tangential)

    def _rubs(self, k: int, f: int) -> bool:
        """Whether pair ``(k, f)`` has Coulomb friction: a wheel on a feature with μ > 0."""
        return (
            f < len(self.features)
            and self.friction[f] > FRICTION_FLOOR
            and self.system._disk_iy[k] is not None
        )

    def _tangent_row(self, k: int, dc: Any) -> np.ndarray:
        """Generalized direction (N,) of a tangential contact force: ``t`` on the centre, r on φ.

        Its power with a velocity is ``u_t`` times the force (``u_t = t·ċ + rω``).
        """
        system = self.system
        row = np.zeros(system.N)
        row[system._disk_ix[k]] = dc.t[0]
        row[system._disk_iy[k]] = dc.t[1]
        row[int(system._iphi[k])] = system.radii[k]
        return row

    def _sticking(
        self, q: np.ndarray, v: np.ndarray, other: np.ndarray, pairs: list | None = None
    ) -> list[tuple[tuple[int, int], float, float]]:
        """``((k, f), T, F)`` of the stuck pairs: the tangential forces that keep them at rest.

        ``u̇_t = J M⁻¹ f + γ_t = 0`` for every stuck pair at once, ``f`` the
        applied force (``other``, the compliant normal forces and the slipping
        pairs' friction) plus ``Jᵀ T``: ``(J M⁻¹ Jᵀ) T = −(J M⁻¹ f + γ_t)``.
        """
        pairs = self._pairs(q, v) if pairs is None else pairs
        stuck = [(k, f, dc) for k, f, dc in pairs if self.modes.get((k, f)) == 0.0]
        if not stuck:
            return []
        f_total = other + self._forces(pairs)
        m_inv = 1.0 / self.system.M_diag
        J = np.array([self._tangent_row(k, dc) for k, _, dc in stuck])
        b = J @ (m_inv * f_total) + np.array([dc.gamma_t for _, _, dc in stuck])
        T = np.linalg.solve((J * m_inv) @ J.T, -b)
        return [
            ((k, f), float(T[a]), max(self._press(f, dc), 0.0))
            for a, (k, f, dc) in enumerate(stuck)
        ]

    def friction_impulses(
        self, q: np.ndarray, v: np.ndarray, v_free: np.ndarray, m_inv: np.ndarray, h: float
    ) -> StepFriction | None:
        """The time-stepper's Coulomb friction of wheels on compliant features over a step ``h``.

        The normal force ``F = max(0, k·δ^p + c·δ̇)`` of each overlap at
        ``(q, v)`` (the step's, as in :meth:`force`) gives each rubbing pair
        (:meth:`_rubs`) the bound ``μ F h`` on its tangential impulse P;
        the impulses are Coulomb's for the velocity at the step's end
        ``v_free + M⁻¹ Σ Jᵀ P`` (J the pair's tangent row, :meth:`_tangent_row`):
        ``u_t = 0`` with ``|P| ≤ μFh`` (stuck), or ``P = −μFh·sign(u_t)`` (slipping),
        solved by projected Gauss–Seidel over the pairs (exact in one sweep
        for one pair). While a wheel slips its tangential impulse is μ times
        its normal one ``F h``, as the event-driven friction. None when no
        pair rubs.
        """
        rows, bounds, keys = [], [], []
        for k, f, dc in self._pairs(q, v):
            if dc.g < 0.0 and self._rubs(k, f):
                force = max(0.0, self._press(f, dc))
                if force > 0.0:
                    rows.append(self._tangent_row(k, dc))
                    bounds.append(self.friction[f] * force * h)
                    keys.append((self.system.disk_body_id(k), self._other_id(f)))
        if not rows:
            return None
        J = np.array(rows)
        bound = np.array(bounds)
        W = (J * m_inv) @ J.T
        P = np.zeros(len(rows))
        u = J @ v_free
        for _ in range(FRICTION_SWEEPS):
            change = 0.0
            for a in range(len(rows)):
                new = min(max(P[a] - u[a] / W[a, a], -bound[a]), bound[a])
                if new != P[a]:
                    u += W[:, a] * (new - P[a])
                    change = max(change, abs(new - P[a]))
                    P[a] = new
            if change <= FRICTION_TOL * float(bound.max()):
                break
        return StepFriction(J=J, impulse=P, dv=m_inv * (J.T @ P), keys=keys, h=h)

    def linear_term(
        self, disk: int, f: int, q: np.ndarray
    ) -> tuple[np.ndarray, float, float, float, float] | None:
        """``(a, k, c, d0, offset)`` of pair ``(disk, f)`` where its force is linear, else None.

        Linear in the coordinates: the overlap is ``δ = d0 − a·q`` with a
        constant row ``a`` (N,), so the generalized force ``F a`` of ``F = kδ
        + cδ̇`` is ``k d0 a − k a aᵀ q − c a aᵀ q̇``, and the model holds while
        ``a·q − offset > 0`` (the centres stay on their sides). Two cases
        (:mod:`solver.compliance_flow`), both with p = 1:

        * a bead against a stop that is a vertical segment ``x = x_w``, its
          centre on the side ``n_x = ±1``: ``a = n_x e_x``, ``d0 = r + n_x
          x_w``, ``offset = n_x x_w``;
        * two beads i < j on the same rail (``contact.compliance``), ``s =
          sign(x_i − x_j)``: ``a = s (e_i − e_j)``, ``d0 = r_i + r_j``,
          ``offset = 0``.
        """
        system = self.system
        if self._p[f] != 1.0 or system._disk_iy[disk] is not None:
            return None
        ix = system._disk_ix[disk]
        row = np.zeros(system.N)
        if f >= len(self.features):  # two beads on one rail
            other = f - len(self.features)
            jx = system._disk_ix[other]
            rails = system._disk_rail_y
            if system._disk_iy[other] is not None or rails[disk] != rails[other] or q[ix] == q[jx]:
                return None
            side = math.copysign(1.0, q[ix] - q[jx])
            row[ix], row[jx] = side, -side
            d0 = system.radii[disk] + system.radii[other]
            return row, self._k[f], self._c[f], float(d0), 0.0
        _, feature, _ = self.features[f]
        if not isinstance(feature, Segment):
            return None
        x_wall = float(feature.a[0])
        if float(feature.b[0]) != x_wall or q[ix] == x_wall:
            return None
        side = math.copysign(1.0, q[ix] - x_wall)
        row[ix] = side
        d0 = system.radii[disk] + side * x_wall
        return row, self._k[f], self._c[f], float(d0), side * x_wall

    def released_energy(self, q: np.ndarray, engaged: frozenset[tuple[int, int]]) -> float:
        """Energy (J) the stops hold in overlaps that do not press (not in ``engaged``).

        After a damped release the disk leaves the stop with δ > 0 and no
        force: this energy is dissipated as it goes out (:meth:`dissipation_power`).
        """
        zero = np.zeros(self.system.N)
        total = 0.0
        for k, f, dc in self._pairs(q, zero):
            if dc.g < 0.0 and (k, f) not in engaged:
                p = self._p[f]
                total += self._k[f] * (-dc.g) ** (p + 1.0) / (p + 1.0)
        return total

    def force(self, q: np.ndarray, v: np.ndarray, other: np.ndarray | None = None) -> np.ndarray:
        """Generalized force (N, N·m) of the compliant contacts at ``(q, v)``.

        The normal forces, the slipping pairs' friction ``−μ F s`` and, given
        ``other`` (the rest of the applied force), the stuck pairs' friction.
        """
        pairs = self._pairs(q, v)
        out = self._forces(pairs)
        if other is not None and 0.0 in self.modes.values():
            contact = {(k, f): dc for k, f, dc in pairs}
            for (k, f), tangential, _ in self._sticking(q, v, other, pairs):
                out += tangential * self._tangent_row(k, contact[k, f])
        return out

    def _forces(self, pairs: list[tuple[int, int, Any]]) -> np.ndarray:
        """The normal forces and the slipping pairs' friction (N, N·m) of ``pairs``."""
        out = np.zeros(self.system.N)
        base = len(self.features)
        for k, f, dc in pairs:
            force = self._force(k, f, dc)
            if force != 0.0:
                self.system._add_disk_force(out, k, force * dc.n)
                if f >= base:  # the other disk: the opposite force
                    self.system._add_disk_force(out, f - base, -force * dc.n)
                slip = self.modes.get((k, f))
                if slip:  # −μ F s along the tangent, at the contact point
                    out -= self.friction[f] * force * slip * self._tangent_row(k, dc)
        return out

    def energy(self, q: np.ndarray, v: np.ndarray | None = None) -> float:
        """Elastic energy ``Σ k·δ^(p+1)/(p+1)`` (J) stored in the stops (δ > 0).

        The overlaps do not depend on the velocities ``v``: given, the pairs
        of ``(q, v)`` serve (a frame's contact rows ask for the same).
        """
        total = 0.0
        for _, f, dc in self._pairs(q, np.zeros(self.system.N) if v is None else v):
            if dc.g < 0.0:
                p = self._p[f]
                total += self._k[f] * (-dc.g) ** (p + 1.0) / (p + 1.0)
        return total

    def dissipation_power(self, q: np.ndarray, v: np.ndarray) -> float:
        """Power dissipated (W): ``(F − k·δ^p)·δ̇`` summed over the overlaps.

        ``c·δ̇²`` while a contact presses; ``k·δ^p·|δ̇|`` while a disk released
        with δ > 0 leaves the stop (the stored energy going out as loss).

        In an event-driven phase (:attr:`engaged` set) only the pressing
        pairs count, ``c·δ̇²`` through δ = 0 as their force is smooth there:
        a released pair's loss over the phase is ``U(q0) − U(q)`` exactly
        (:meth:`solver.compliant_events.CompliantEvents.phase_pieces`). Integrated, its power
        ``−dU/dt`` has a kink where δ returns to 0, which no event marks: an
        ODE step across it lost up to 1e-10 of the energy (a wheel leaving a
        damped floor).
        """
        total = 0.0
        engaged = self.engaged
        for k, f, dc in self._pairs(q, v):
            if engaged is not None and (k, f) not in engaged:
                continue
            if dc.g < 0.0 or engaged is not None:
                force = self._force(k, f, dc)
                total += (force - self._spring(f, dc.g)) * (-dc.u_n)
                slip = self.modes.get((k, f))
                if slip:  # friction −μ F s against the slip speed u_t
                    total += self.friction[f] * force * slip * dc.u_t
        return total

    def ode_options(
        self, q: np.ndarray, v: np.ndarray, rtol: float, atol: float, max_step: float
    ) -> dict[str, Any]:
        """DOP853's ``rtol``, ``atol``, ``max_step`` (and ``first_step``) from ``(q, v)``.

        In a compliant scene ``rtol`` is at most :data:`COMPLIANT_RTOL` and
        ``atol`` at most :data:`COMPLIANT_ATOL` (per component of ``(q, v,
        work)``), so that the energy balance holds to round-off level.
        While some pair presses, the step is at most :meth:`max_step`, the
        first one :data:`FIRST_STEP_SHARE` of that: at a Hertz touch the force
        grows as ``t^1.5``, not smooth, and DOP853's own first step,
        estimated from derivatives that vanish there, was too long (3e-13 of
        the energy lost per touch, 1e-13 with the short first step). The
        tolerance is not below the round-off of the force, though: δ is a
        difference of coordinates of size ``X`` (the disks' centres, the
        contact point), known to ``ε·X`` only, so the force is known to
        ``k_eff·ε·X`` and a step of :meth:`max_step` changes the velocity by
        round-off ``Δv = h·ω²·ε·X`` (ω² = k_eff/m) and the work by ``m·|v|·Δv``.
        A tolerance far below that noise makes the step control refuse step
        after step (a Hertz cradle 10 m from the origin took 14 s instead of
        1.5 s), so the velocities' ``atol`` is at least ``NOISE_SHARE·Δv`` and
        the work's ``m·|v|`` times that.
        """
        options: dict[str, Any] = {
            "rtol": min(rtol, COMPLIANT_RTOL),
            "atol": min(atol, COMPLIANT_ATOL),
            "max_step": max_step,
        }
        reach = list(self._pressing_reach(q, v))
        if not reach:
            return options
        step = self.max_step(q, v)
        options["max_step"] = min(max_step, step)
        options["first_step"] = FIRST_STEP_SHARE * options["max_step"]
        noise = max(  # Δv = h·ω²·ε·X, h = max_step
            (NOISE_SHARE * step * k_eff / m * EPS * size for m, _, k_eff, size in reach),
            default=0.0,
        )
        system = self.system
        N = system.N
        floor = options["atol"]
        speed = float(np.abs(v).max(initial=0.0))
        mass = float(np.sum(system.M_diag[system._disk_ix]))
        out = np.full(2 * N + 3, floor)
        out[N : 2 * N] = max(floor, noise)
        out[2 * N :] = max(floor, mass * speed * noise)
        options["atol"] = out
        return options

    def _pressing_reach(
        self, q: np.ndarray, v: np.ndarray
    ) -> Iterator[tuple[float, float, float, float]]:
        """``(m, δ_m, k_eff, X)`` of every pressing pair.

        ``δ_m = (δ^(p+1) + (p+1) m δ̇²/(2k))^(1/(p+1))`` the deepest overlap
        the motion can reach from here (energy, damping ignored), ``k_eff =
        p·k·δ_m^(p−1)`` the spring linearised there, m the disk's mass (two
        disks: their reduced mass), X the largest coordinate δ is computed
        from (the centres', the contact point's).
        """
        centres = self.system.centres(q)
        base = len(self.features)
        for k, f, dc in self._pairs(q, v):
            pressing = dc.g <= 0.0 if self.engaged is None else (k, f) in self.engaged
            if pressing:
                p, stiff = self._p[f], self._k[f]
                m = self._mass(k, f)
                reach = (-dc.g) ** (p + 1.0) + (p + 1.0) * m * dc.u_n**2 / (2.0 * stiff)
                delta_m = reach ** (1.0 / (p + 1.0))
                size = max(abs(centres[k]).max(), abs(dc.point).max())
                if f >= base:
                    size = max(size, abs(centres[f - base]).max())
                yield m, delta_m, p * stiff * delta_m ** (p - 1.0), float(size)

    def max_step(self, q: np.ndarray, v: np.ndarray) -> float:
        """Longest ODE step (s) while a compliant contact presses: ``STEP_SHARE`` of its period.

        Per pressing pair, the period ``2π/√(k_eff/m)`` of the spring
        linearised at the deepest overlap the motion can reach from here
        (:meth:`_pressing_reach`). ``inf`` when nothing presses (a disk
        released inside a stop feels no force).
        """
        best = math.inf
        for m, _, k_eff, _ in self._pressing_reach(q, v):
            if k_eff > 0.0:
                best = min(best, STEP_SHARE * 2.0 * math.pi * math.sqrt(m / k_eff))
        return best

    def event_values(
        self, q: np.ndarray, v: np.ndarray, other: np.ndarray | None = None
    ) -> np.ndarray:
        """Per disk and feature: ``(touch, release, stick, slip, touch rate)``.

        The first four fall through 0 at their event; the fifth is the gap's
        rate ``u_n`` (m/s) where the touch value is the gap or the pair
        presses, NaN elsewhere (inside a stop, not pressing): a gap positive
        at two sub-points whose rate turns from negative to positive between
        them has a minimum there, which may dip below 0; a pressing pair whose
        force is 0 at a sub-point (just touched, c = 0) has its deepest
        overlap where the rate turns, and the force may rise and fall back
        between two sub-points (:meth:`solver.compliant_events.CompliantEvents.first`).

        A pressing pair (:attr:`engaged`): touch ``+inf``; release ``k·δ^p +
        c·δ̇`` (smooth through δ = 0, where it is ``c·δ̇``: for c = 0 the force
        ends at δ = 0). Any other pair: release ``+inf``; touch the gap while
        it is positive, and inside the stop ``−(k·δ^p + c·δ̇)`` (a released
        disk pushed back in before it got out presses again). One row per pair
        whatever ``q`` (:meth:`_every_pair`; a pair without a contact: ``+inf``).
        """
        engaged = self.engaged or frozenset()
        every = self._every_pair(q, v)
        pairs = [pair for pair in every if pair[2] is not None]
        held = {}
        if other is not None and 0.0 in self.modes.values():
            held = {pair: (t, n) for pair, t, n in self._sticking(q, v, other, pairs)}
        rows = []
        for k, f, dc in every:
            if dc is None:
                rows.append((math.inf, math.inf, math.inf, math.inf, math.nan))
                continue
            stick = slip = math.inf
            mode = self.modes.get((k, f))
            if mode:  # slipping: s·u_t falls to 0 where it stops
                stick = mode * dc.u_t
            elif mode == 0.0 and (k, f) in held:  # stuck: μF − |T| falls to 0 where it slips
                tangential, normal = held[k, f]
                slip = self.friction[f] * normal - abs(tangential)
            if (k, f) in engaged:
                rows.append((math.inf, self._press(f, dc), stick, slip, dc.u_n))
            elif dc.g >= 0.0:
                rows.append((dc.g, math.inf, stick, slip, dc.u_n))
            else:
                rows.append((-self._press(f, dc), math.inf, stick, slip, math.nan))
        return np.array(rows, dtype=float).reshape(-1, 5)

    def pressing_forces(self, q: np.ndarray, v: np.ndarray) -> dict[tuple[str, str], float]:
        """The force (N) of every pressing pair under :attr:`engaged`, by ``(body, other)``."""
        system = self.system
        return {
            (system.disk_body_id(k), self._other_id(f)): self._force(k, f, dc)
            for k, f, dc in self._pairs(q, v)
            if self.engaged is None or (k, f) in self.engaged
            if self.engaged is not None or dc.g < 0.0
        }

    def pair_names(
        self, q: np.ndarray, v: np.ndarray
    ) -> list[tuple[tuple[str, str], tuple[int, int]]]:
        """``((body, other), (disk, other index))`` of each row of :meth:`event_values`."""
        system = self.system
        return [
            ((system.disk_body_id(k), self._other_id(f)), (k, f))
            for k, f, _ in self._every_pair(q, v)
        ]

    def states(
        self,
        q: np.ndarray,
        v: np.ndarray,
        t: float | None = None,
        tangential: dict[tuple[str, str], float] | None = None,
    ) -> list[ContactState]:
        """The pressing compliant contacts as ``contacts.csv`` rows: ``lam`` = F ≥ 0.

        ``tau`` is the friction: ``−μ F s`` slipping, the holding force stuck
        (given the time ``t`` of the state, for the applied force); the
        time-stepper gives its step's mean friction forces (``tangential``,
        :meth:`StepFriction.forces`).
        """
        out = []
        system = self.system
        held = {}
        if t is not None and 0.0 in self.modes.values():
            other = system.applied_force(t, q, v, compliant=False)
            held = {pair: tangential for pair, tangential, _ in self._sticking(q, v, other)}
        for k, f, dc in self._pairs(q, v):
            force = self._force(k, f, dc)
            if force > 0.0 or (self.engaged is not None and (k, f) in self.engaged):
                slip = self.modes.get((k, f))
                tau = -self.friction[f] * force * slip if slip else held.get((k, f), 0.0)
                if tangential is not None:
                    tau = tangential.get((system.disk_body_id(k), self._other_id(f)), 0.0)
                out.append(
                    ContactState(
                        body=system.disk_body_id(k),
                        other=self._other_id(f),
                        lam=max(force, 0.0),
                        tau=float(tau),
                        u_n=float(dc.u_n),
                        u_t=float(dc.u_t),
                        mode="compliant",
                        point=(float(dc.point[0]), float(dc.point[1])),
                        normal=(float(dc.n[0]), float(dc.n[1])),
                    )
                )
        return out


class Apart(NamedTuple):
    """A compliant pair apart, not pressing: its gap ``g`` (m, > 0) and normal rate ``u_n`` (m/s).

    The same bits as the pair's :class:`~solver.geometry.DiskContact`, the
    only fields of it that a pair apart is read for (its event row; every
    force, energy and power is 0 there).
    """

    g: float
    u_n: float


def _pair_contacts(pairs: CompliantSet, q: np.ndarray, v: np.ndarray) -> list[tuple[int, int, Any]]:
    """The entries of :meth:`CompliantSet._every_pair` at ``(q, v)``.

    Each gap comes from the floats the full contact is made from
    (:meth:`Segment.foot`, :func:`~solver.geometry.corner_foot`), its rate
    from numpy's dot product as :func:`~solver.geometry.disk_contact_from_nearest`
    forms it; a pair apart and not pressing stops there (an :class:`Apart`),
    any other gets its :class:`~solver.geometry.DiskContact` from the full route.
    """
    system, engaged = pairs.system, pairs.engaged
    c, cd = system.centres(q), system.centre_velocities(v)
    om = system.angular_velocities(v)
    radii = system.radii.tolist()
    points = c.tolist()
    out: list[tuple[int, int, Any]] = []
    for f, (_, feature, _) in enumerate(pairs.features):
        for k, (cx, cy) in enumerate(points):
            g = math.nan
            if isinstance(feature, Segment):
                s, _, _, d, nx, ny = feature.foot(cx, cy)
                if not 0.0 < s < 1.0:
                    out.append((k, f, None))
                    continue
                g = d - radii[k]
            elif isinstance(feature, Vertex) and (foot := corner_foot(feature.p, cx, cy)):
                d, nx, ny = foot
                g = d - radii[k]
            if g > 0.0 and math.isfinite(g) and (engaged is None or (k, f) not in engaged):
                out.append((k, f, Apart(g, float(np.array((nx, ny)).dot(cd[k])))))
                continue
            out.append((k, f, disk_feature_contact(feature, c[k], cd[k], system.radii[k], om[k])))
    if pairs.between is not None:
        base = len(pairs.features)
        for i, (cx, cy) in enumerate(points):
            for j in range(i + 1, len(points)):
                foot = corner_foot(tuple(points[j]), cx, cy)
                g = foot[0] - radii[i] - radii[j] if foot else math.nan
                if (
                    g > 0.0
                    and math.isfinite(g)
                    and (engaged is None or (i, base + j) not in engaged)
                ):
                    rate = np.array(foot[1:]).dot(cd[i] - cd[j])
                    out.append((i, base + j, Apart(g, float(rate))))
                    continue
                dc = disk_disk_contact(c[i], cd[i], radii[i], om[i], c[j], cd[j], radii[j], om[j])
                out.append((i, base + j, dc))
    return out
