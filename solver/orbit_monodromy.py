"""The monodromy matrix of a bead scene's motion with impacts (docs/ORBITS.md).

The Jacobian of the flow map ``z(t0) ↦ z(t0 + span)``, ``z = (q, v)``, of a
linear bead scene ``M q̈ + C q̇ + K q = f0 + Σ a_j sin(ω_j t + φ_j)`` whose
motion over the span is free flight broken by impacts at times ``t_1 < … < t_m``:

    Φ = E(span − t_m) S_m E(t_m − t_{m−1}) ⋯ S_1 E(t_1 − t0),

with ``E(τ) = expm(A τ)``, ``A = [[0, I], [−M⁻¹K, −M⁻¹C]]`` (the forcing does
not enter a linear flow's state-transition matrix), and ``S_k`` the saltation
matrix of the k-th impact,

    S = R + (f⁺ − R f⁻) ∇hᵀ / (∇h · f⁻),

``h(z) = n·q − c`` the gap, ``R`` the Jacobian of the reset
``(q, v⁻) ↦ (q, v⁺)``, and ``f∓ = (v∓, a∓)`` the vector field just before and
after, the accelerations ``a = M⁻¹(f0 + forcing(t) − K q − C v)`` at the
impact's time. For one contact under Newton's law ``n·v⁺ = −e n·v⁻`` with the
impulse along ``M⁻¹ n``,

    R_v = I − (1 + e) M⁻¹ n nᵀ / (nᵀ M⁻¹ n).

The contact direction ``n`` is read off the impact itself, ``n ∝ M (v⁺ − v⁻)``
(``S`` does not depend on the length or sign of ``n``), and ``e`` likewise,
``e = −n·v⁺ / n·v⁻``: the impact the engine computed is the one differentiated.

Compliant stops (linear, p = 1, vertical segments; :mod:`solver.compliance_flow`)
add two events with no reset (``R = I``): a ``touch`` starts a phase whose flow
has the stop's spring and damper in ``K`` and ``C``, a ``release`` ends it. Their
saltation is ``S = I + (f⁺ − f⁻) ∇hᵀ / (∇h · f⁻)``, ``h`` the event function the
engine watches: the gap ``g`` at a touch from outside, the force
``F = k δ + c δ̇`` (δ = −g) at a release and at a touch inside the stop (a
released bead pushed back in). The force is continuous at a release and an
inside touch (F = 0 there) and at any touch of an undamped stop (F = k·0): ``S = I``.
At a touch of a damped stop it jumps from 0 to ``c δ̇``: for a bead, contact
direction ``n`` (its coordinate's unit row), ``f⁺ − f⁻ = (0, c (n·v) M⁻¹ n)``,
``∇h = (n, 0)`` and ``∇h·f⁻ = n·v``, so

    S = I − [[0, 0], [c M⁻¹ n nᵀ, 0]],

``−c/m`` in the (velocity, position) entry of the bead, whatever the speed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg

from solver.compliance_flow import compliant_bead_model
from solver.errors import InputError, SolverError
from solver.linear_bead_model import linear_bead_model
from solver.system import System

GRAZING_TOL = 1e-9
"""An impact whose normal velocity is below this (m/s, relative to |v|) is grazing: no saltation."""


CONTACT_EVENTS = ("touch", "release", "liftoff")
HELD = "held"
"""The kind of the pseudo-event at t = 0 of a run that starts with a bead held on a stop."""
"""Events without a velocity jump that the monodromy differentiates: a compliant stop's
touch and release, a sticking bead's lift-off from a rigid stop."""


@dataclass
class Impact:
    """One impact (or compliant ``touch`` / ``release``) of a run: time (s, the run's
    clock), state before and velocity after.

    ``kind`` is ``"impact"``, one of :data:`CONTACT_EVENTS`, or :data:`HELD` (a bead
    held on a stop at the run's start, t = 0); for those ``v_minus`` equals ``v_plus``
    and ``normal`` holds the gap's gradient in ``q`` (the engine writes no state at
    them: :func:`fill_contact_states` computes it).
    """

    t: float
    v_minus: np.ndarray | None
    v_plus: np.ndarray | None
    q: np.ndarray | None = None
    body: str = ""
    other: str = ""
    kind: str = "impact"
    normal: np.ndarray | None = None
    held_after: bool = False
    """An impact after which the bead stays held on the stop to the span's end."""
    captured: bool = False
    """The impact after which the engine captured a chattering sequence (a ``zeno`` event):
    ``v_plus`` is the captured velocity, the contact's separation speed removed."""

    def normal_velocities(self, M: np.ndarray) -> tuple[float, float]:
        """``(u_n⁻, u_n⁺)``: the gap's rate before and after (m/s; negative closing).

        The gap's gradient is the impulse's direction ``M (v⁺ − v⁻)`` scaled to a
        largest entry of 1 (for beads: ``±1`` at a stop, ``±(1, −1)`` between two beads);
        at a compliant touch or release, :attr:`normal` (the two rates are equal).
        """
        if self.normal is not None:
            return float(self.normal @ self.v_minus), float(self.normal @ self.v_plus)
        n = M @ (self.v_plus - self.v_minus)
        n = n / float(np.max(np.abs(n)))
        return float(n @ self.v_minus), float(n @ self.v_plus)


def flow_generator(M: np.ndarray, C: np.ndarray, K: np.ndarray) -> np.ndarray:
    """``A = [[0, I], [−M⁻¹K, −M⁻¹C]]`` of ``M q̈ + C q̇ + K q = f(t)``."""
    n = len(M)
    A = np.zeros((2 * n, 2 * n))
    A[:n, n:] = np.eye(n)
    A[n:, :n] = -np.linalg.solve(M, K)
    A[n:, n:] = -np.linalg.solve(M, C)
    return A


def saltation(
    M: np.ndarray, v_minus: np.ndarray, v_plus: np.ndarray, a_minus: np.ndarray, a_plus: np.ndarray
) -> np.ndarray:
    """The saltation matrix of one impact (module docstring); SolverError when grazing."""
    N = len(M)
    n = M @ (v_plus - v_minus)
    scale = float(np.max(np.abs(n)))
    if scale == 0.0:
        raise SolverError("an impact that changed no velocity (grazing)")
    n = n / scale
    un_minus = float(n @ v_minus)
    if abs(un_minus) <= GRAZING_TOL * (1.0 + float(np.max(np.abs(v_minus)))):
        raise SolverError(f"a grazing impact (normal velocity {un_minus:.3g} m/s)")
    e = -float(n @ v_plus) / un_minus
    Minv_n = np.linalg.solve(M, n)
    Rv = np.eye(N) - (1.0 + e) * np.outer(Minv_n, n) / float(n @ Minv_n)
    R = np.eye(2 * N)
    R[N:, N:] = Rv
    f_minus = np.concatenate([v_minus, a_minus])
    f_plus = np.concatenate([v_plus, a_plus])
    grad = np.concatenate([n, np.zeros(N)])
    return saltation_matrix(R, f_minus, f_plus, grad)


def saltation_matrix(
    R: np.ndarray, f_minus: np.ndarray, f_plus: np.ndarray, grad: np.ndarray
) -> np.ndarray:
    """``S = R + (f⁺ − R f⁻) ∇hᵀ / (∇h · f⁻)``: an event ``h(z) = 0`` with reset Jacobian ``R``."""
    rate = float(grad @ f_minus)
    if rate == 0.0:
        raise SolverError("an event whose function does not change along the flow (grazing)")
    return R + np.outer(f_plus - R @ f_minus, grad) / rate


def _acceleration(model: Any, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    force = model.f0 - model.K @ q - model.C @ v
    for h in model.harmonics:
        force = force + h.amplitude * np.sin(h.omega * t + h.phase)
    return np.linalg.solve(model.M, force)


def _model(system: System, q: np.ndarray, engaged: frozenset = frozenset()) -> Any:
    """The linear model of the phase in which the compliant pairs ``engaged`` press."""
    if system.compliance is None:
        model = linear_bead_model(system, q)
    else:
        model = compliant_bead_model(system, q, engaged)
    if model is None:
        raise InputError(
            "`bodies`/`springs`: periodic orbits need a linear bead scene (beads on rails, "
            "springs along the rails, compliant stops linear and vertical)"
        )
    return model


class _Phases:
    """The phases along a run: the pressing compliant pairs (from the run's start and its
    touch/release events) and the rigid contacts a bead sticks on (from a plastic impact
    to its ``liftoff``)."""

    def __init__(self, system: System, q: np.ndarray, v: np.ndarray, events: list[Impact]):
        self.system = system
        self.M = system.M
        compliance = system.compliance
        self.engaged: frozenset = frozenset()
        self.pairs: dict[tuple[str, str], tuple[int, int]] = {}
        self.stuck: dict[tuple[str, str], tuple[np.ndarray, float]] = {}
        """Rigid contacts held: ``(body, other) → (n, n·q)`` (the gap's row and offset)."""
        self.events = events
        if compliance is not None:
            own = compliance.for_system(system)
            own.engage(q, v)  # as the engine's event-driven run does at its start
            self.engaged = frozenset(own.engaged or ())
            for f, (cid, _, _) in enumerate(compliance.features):
                for k in range(system.n_disks):
                    self.pairs[system.disk_body_id(k), cid] = (k, f)
        for n, event in enumerate(events):
            if event.kind == "liftoff":
                before = [e for e in events[:n] if (e.body, e.other) == (event.body, event.other)]
                if not before or before[-1].kind not in ("impact", HELD):
                    raise SolverError(
                        f"t = {event.t!r} s: a lift-off of {event.body} from {event.other} "
                        "whose sticking began before the section or without a plastic impact "
                        "(choose another section time)"
                    )

    # ----------------------------------------------------------- models

    def model(self, q: np.ndarray, engaged: frozenset | None = None) -> Any:
        return _model(self.system, q, self.engaged if engaged is None else engaged)

    def _rows(self) -> tuple[np.ndarray, np.ndarray] | None:
        if not self.stuck:
            return None
        rows = np.array([n for n, _ in self.stuck.values()])
        return rows, np.array([c for _, c in self.stuck.values()])

    def projector(self, rows: np.ndarray | None = None) -> np.ndarray:
        """``P = I − M⁻¹Nᵀ(N M⁻¹ Nᵀ)⁻¹N``: the accelerations the held contacts allow."""
        N = len(self.M)
        if rows is None:
            held = self._rows()
            if held is None:
                return np.eye(N)
            rows = held[0]
        Minv_Nt = np.linalg.solve(self.M, rows.T)
        return np.eye(N) - Minv_Nt @ np.linalg.solve(rows @ Minv_Nt, rows)

    def generator(self, model: Any) -> np.ndarray:
        """The phase's ``A``: ``[[0, I], [−P M⁻¹K, −P M⁻¹C]]`` (``P = I`` when nothing is held)."""
        A = flow_generator(model.M, model.C, model.K)
        if self.stuck:
            n = len(model.M)
            A[n:] = self.projector() @ A[n:]
        return A

    def state(self, model: Any, t: float, q: np.ndarray, v: np.ndarray, t_end: float):
        held = self._rows()
        flow = model.flow() if held is None else model.flow(*held)
        q_end, v_end = flow.start(t, q, v).state(t_end)
        return np.array(q_end, dtype=float), np.array(v_end, dtype=float)

    def acceleration(self, model: Any, t: float, q: np.ndarray, v: np.ndarray, rows=None):
        a = _acceleration(model, t, q, v)
        if rows is None and not self.stuck:
            return a
        return self.projector(rows) @ a

    # ----------------------------------------------------------- events

    def held_rows(self, impact: Impact) -> np.ndarray | None:
        """The held contacts' rows at ``impact`` (None when nothing is held).

        An impact while a bead is held is differentiated when its impulse leaves the
        held contacts alone — its direction ``M⁻¹n`` M-orthogonal to their rows
        (``N M⁻¹ n = 0``: another bead's own stop): Newton's reset is then the free one
        and the held contacts stay closed and pressed. Otherwise (an impulse through a
        held contact: the contact problem shares it) a SolverError says so.
        """
        held = self._rows()
        if held is None:
            return None
        n = self.M @ (impact.v_plus - impact.v_minus)
        Minv_n = np.linalg.solve(self.M, n)
        coupling = held[0] @ Minv_n
        if float(np.max(np.abs(coupling))) > 1e-12 * float(np.max(np.abs(Minv_n))):
            raise SolverError(
                f"t = {impact.t!r} s: an impact of {impact.body} and {impact.other} whose "
                "impulse reaches a contact held at the time (the impact problem shares it "
                "with the held contact): its saltation is not implemented"
            )
        return held[0]

    def sticks(self, index: int) -> bool:
        """Impact ``index`` starts a sticking phase: its pair's next event is a lift-off."""
        impact = self.events[index]
        for later in self.events[index + 1 :]:
            if (later.body, later.other) == (impact.body, impact.other):
                return later.kind == "liftoff"
        return impact.held_after

    def pair(self, event: Impact) -> tuple[int, int]:
        try:
            return self.pairs[event.body, event.other]
        except KeyError:
            raise SolverError(
                f"t = {event.t!r} s: a {event.kind} of {event.body} and {event.other}, "
                "not a compliant stop the orbit code knows"
            ) from None

    def after(self, event: Impact) -> frozenset:
        pair = self.pair(event)
        return self.engaged | {pair} if event.kind == "touch" else self.engaged - {pair}

    def gradient(self, event: Impact, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``∇h`` of a touch's or release's function (module docstring); sets ``event.normal``."""
        k, f = self.pair(event)
        term = self.system.compliance.linear_term(k, f, q)
        if term is None:
            raise InputError(
                f"`boundaries`: the compliant stop {event.other!r} is not linear and vertical "
                "(periodic orbits need p = 1 on a vertical segment)"
            )
        a, stiffness, damping, d0, _ = term  # overlap δ = d0 − a·q (CompliantSet.linear_term)
        N = len(q)
        event.normal = a.copy()  # the gap's gradient: g = −δ = a·q − d0
        overlap = d0 - float(a @ q)
        rate = -float(a @ v)
        grad = np.zeros(2 * N)
        at_surface = abs(overlap) <= 1e-9 * (1.0 + abs(rate))
        if event.kind == "touch" and at_surface:
            grad[:N] = a  # the gap
        else:  # the force k δ + c δ̇ (its sign does not matter)
            grad[:N], grad[N:] = stiffness * a, damping * a
        return grad


def _walk(scene: Any, z0: np.ndarray, events: list[Impact], span: float, jacobian: bool):
    """Follow a run's phases from ``z0``: fill in the states of the events the engine writes
    none for (touch, release, lift-off) and, with ``jacobian``, return the monodromy."""
    system = System(scene)
    N = system.N
    q, v = np.array(z0[:N], dtype=float), np.array(z0[N:], dtype=float)
    phases = _Phases(system, q, v, events)
    t = 0.0
    Phi = np.eye(2 * N)
    times = [i.t for i in events if i.kind != HELD]
    if len(set(times)) != len(times):
        raise SolverError("simultaneous events: their saltation is not implemented")
    for index, event in enumerate(events):
        if event.kind == HELD:
            # a section inside a sticking phase: the map is defined on the held states
            # (n·q = c, n·v = 0); Φ is its Jacobian there, extended off them by the
            # M-orthogonal projection onto them (for a bead on a stop: its columns zero)
            n = event.normal
            phases.stuck[event.body, event.other] = (n, float(n @ q))
            if jacobian:
                Minv_n = np.linalg.solve(system.M, n)
                Pi = np.eye(N) - np.outer(Minv_n, n) / float(n @ Minv_n)
                Phi = scipy.linalg.block_diag(Pi, Pi) @ Phi
            continue
        model = phases.model(q)
        if jacobian:
            Phi = scipy.linalg.expm(phases.generator(model) * (event.t - t)) @ Phi
        if event.kind == "impact":
            if event.q is None:
                q, _ = phases.state(model, t, q, v, event.t)
            q = np.array(event.q if event.q is not None else q, dtype=float)
            held = phases.held_rows(event)
            sticks = phases.sticks(index)
            if jacobian:
                # the fields before and after: the motion with the contacts held then
                a_minus = phases.acceleration(model, event.t, q, event.v_minus)
                if sticks:  # the field after is the held motion's, this contact held too
                    n = system.M @ (event.v_plus - event.v_minus)
                    rows = n[None, :] if held is None else np.vstack([held, n])
                    a_plus = phases.acceleration(model, event.t, q, event.v_plus, rows)
                else:
                    a_plus = phases.acceleration(model, event.t, q, event.v_plus)
                try:
                    S = saltation(model.M, event.v_minus, event.v_plus, a_minus, a_plus)
                except SolverError as error:
                    raise SolverError(f"t = {event.t!r} s: {error}") from None
                Phi = S @ Phi
            if sticks:
                n = system.M @ (event.v_plus - event.v_minus)
                n = n / float(np.max(np.abs(n)))
                phases.stuck[event.body, event.other] = (n, float(n @ q))
            t, v = event.t, np.array(event.v_plus, dtype=float)
            continue
        q, v = phases.state(model, t, q, v, event.t)
        event.q, event.v_minus, event.v_plus = q, v, v.copy()
        t = event.t
        if event.kind == "liftoff":
            # the contact force falls continuously to 0: f⁺ = f⁻ and S = I
            n, _ = phases.stuck.pop((event.body, event.other))
            event.normal = n
            continue
        grad = phases.gradient(event, q, v)
        after = phases.after(event)
        if jacobian:
            f_minus = np.concatenate([v, phases.acceleration(model, t, q, v)])
            f_plus = np.concatenate([v, phases.acceleration(phases.model(q, after), t, q, v)])
            try:
                S = saltation_matrix(np.eye(2 * N), f_minus, f_plus, grad)
            except SolverError as error:
                raise SolverError(f"t = {t!r} s: a {event.kind}: {error}") from None
            Phi = S @ Phi
        phases.engaged = after
    if jacobian:
        model = phases.model(q)
        Phi = scipy.linalg.expm(phases.generator(model) * (span - t)) @ Phi
    return Phi


def fill_contact_states(scene: Any, z0: np.ndarray, events: list[Impact]) -> None:
    """Set ``q``, ``v_minus``, ``v_plus`` of each compliant touch/release and lift-off of a
    run: the engine writes no state at them; it is the phase's closed-form flow (the
    engine's own) from the previous event, or from ``z0`` at time 0."""
    if any(e.kind != "impact" for e in events):
        _walk(scene, z0, events, 0.0, jacobian=False)


def monodromy(scene: Any, z0: np.ndarray, impacts: list[Impact], span: float) -> np.ndarray:
    """Jacobian of ``z(0) ↦ z(span)`` for ``scene`` run from ``z0`` with these impacts.

    ``impacts`` may hold compliant touches and releases and lift-offs (their states
    filled in by :func:`fill_contact_states`). The impacts' ``q`` (positions at
    impact) are used when given; otherwise they are found by propagating the
    closed-form flow from the previous event.
    """
    return _walk(scene, z0, impacts, span, jacobian=True)
