"""Periodic orbits of harmonically forced bead scenes (docs/ORBITS.md).

A periodic orbit of period ``K T`` (``T = 2π/ω`` the forcing period) is a
fixed point of the stroboscopic map ``P: z(t0) ↦ z(t0 + K T)``, ``z = (q, v)``.
:func:`find_orbit` finds it by Newton's method on ``P(z) − z`` with the map's
exact Jacobian, the monodromy matrix of :mod:`solver.orbit_monodromy`: the
impacts (times, velocities before and after) come from the program's own
event-driven run of the scene over the span, so the orbit is the engine's.

The section is the scene's clock ``t = t_section`` (mod ``T``); the scene is
run from its time 0 with each harmonic force's phase advanced by
``ω t_section``, so ``t_section`` may be chosen off the impacts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from solver.errors import InputError, SolverError
from solver.orbit_monodromy import CONTACT_EVENTS, Impact, fill_contact_states, monodromy
from solver.record import Trajectory
from solver.scene_paths import with_values
from solver.simulation import drive, make_stepper
from solver.system import System

MAX_NEWTON_STEPS = 30
"""Newton steps before :func:`find_orbit` gives up (never a hang)."""

NEWTON_TOL = 1e-12
"""Converged when ``|P(z) − z| ≤ NEWTON_TOL · (1 + |z|)`` (max norm)."""


@dataclass
class StroboscopicRun:
    """One application of the stroboscopic map: the end state and the impacts on the way."""

    z_end: np.ndarray
    impacts: list[Impact]


@dataclass
class PeriodicOrbit:
    """A fixed point of the stroboscopic map and its stability.

    Attributes
    ----------
    state : numpy.ndarray, shape (2 N,)
        ``(q, v)`` at the section, in the system's layout (``dof_labels``).
    t_section : float
        Section time (s) on the scene's clock (mod the forcing period).
    period : int
        ``K``: the orbit repeats after ``K`` forcing periods.
    span : float
        ``K T`` (s).
    monodromy : numpy.ndarray, shape (2 N, 2 N)
        Jacobian of the stroboscopic map at ``state``.
    multipliers : numpy.ndarray, complex
        Floquet multipliers (eigenvalues of ``monodromy``), by decreasing modulus.
    impacts : list of Impact
        The impacts over one span from the section (t from the section's run start, s),
        compliant touches and releases included (``kind``).
    iterations : int
        Newton steps taken.
    residual : float
        ``max |P(state) − state|`` at the end.
    """

    state: np.ndarray
    t_section: float
    period: int
    span: float
    monodromy: np.ndarray
    multipliers: np.ndarray
    impacts: list[Impact] = field(default_factory=list)
    iterations: int = 0
    residual: float = 0.0

    @property
    def contacts(self) -> list[Impact]:
        """The impacts and compliant touches: one per contact the orbit makes (the
        ``n_impacts`` of ``branches.csv`` and the rows of ``orbit_impacts.csv``)."""
        return [i for i in self.impacts if i.kind in ("impact", "touch")]

    @property
    def stable(self) -> bool:
        """All multipliers strictly inside the unit circle."""
        return bool(np.all(np.abs(self.multipliers) < 1.0))


def forcing_period(scene: Any, period_s: float | None = None) -> float:
    """The forcing period ``T`` (s) of ``scene``, or ``period_s`` when given.

    Raises
    ------
    InputError
        No harmonic force with ``omega > 0`` (and no ``period_s``), harmonic
        forces of different ``omega`` (and no ``period_s``), or a ``period_s``
        that is not a positive number.
    """
    if period_s is not None:
        if not (isinstance(period_s, int | float) and math.isfinite(period_s) and period_s > 0):
            raise InputError(f"`period` must be a positive number of seconds, got {period_s!r}")
        return float(period_s)
    omegas = {
        (j, f.omega)
        for j, f in enumerate(scene.forces)
        if getattr(f, "type", "") == "harmonic" and f.omega > 0.0
    }
    if not omegas:
        raise InputError(
            "`forces`: the scene has no harmonic force with omega > 0, so no forcing period; "
            "add one or give the period in seconds"
        )
    values = sorted({w for _, w in omegas})
    if len(values) > 1:
        raise InputError(
            f"`forces`: harmonic forces of different omega ({', '.join(f'{w:g}' for w in values)}"
            " rad/s); give the common period in seconds"
        )
    return 2.0 * math.pi / values[0]


def _bead_paths(system: System) -> list[tuple[int, int]]:
    """``(body index, q index)`` of each bead; InputError for a scene with other bodies."""
    scene = system.scene
    out = []
    for b, body in enumerate(scene.bodies):
        if body.type != "bead":
            raise InputError(
                f"`bodies[{b}].type`: periodic orbits are computed for bead scenes only, "
                f"got {body.type!r}"
            )
        out.append((b, system._disk_ix[system._disk_of_body[body.id]]))
    if scene.actions:
        raise InputError("`actions`: periodic orbits need a scene without timed actions")
    if scene.impulses:
        raise InputError("`impulses`: periodic orbits need a scene without scheduled impulses")
    _check_compliance(scene)
    return out


def _check_compliance(scene: Any) -> None:
    """InputError, naming the field, for a compliant contact the monodromy does not know.

    Supported: linear (p = 1) compliant stops that are vertical segments (their touch and
    release saltations, :mod:`solver.orbit_monodromy`). Not: Hertz stops (p = 1.5, a
    nonlinear phase), slanted segments, polylines and arcs, and compliant contacts between
    beads (``contact.compliance`` with two beads or more).
    """
    shared = scene.contact.compliance
    if shared is not None and len(scene.bodies) > 1:
        raise InputError(
            "`contact.compliance`: periodic orbits do not support compliant contacts between "
            "bodies (their force is not linear along the rails); give the stops their own "
            "`compliance` instead"
        )
    for i, boundary in enumerate(scene.boundaries):
        law = scene.compliance_for(boundary)
        if law is None:
            continue
        own = boundary.compliance is not None
        where = f"boundaries[{i}].compliance" if own else "contact.compliance"
        if law.exponent != 1:
            raise InputError(
                f"`{where}.exponent`: periodic orbits support linear compliant stops only "
                f"(p = 1), got p = {law.exponent:g} (a Hertz phase has no closed-form flow)"
            )
        if boundary.type != "segment" or boundary.a[0] != boundary.b[0]:
            raise InputError(
                f"`boundaries[{i}]`: periodic orbits support compliant stops that are vertical "
                "segments only (a bead's overlap linear in its coordinate)"
            )


def shifted_scene(scene: Any, t_section: float) -> Any:
    """``scene`` with each harmonic force's phase advanced by ``ω t_section``."""
    if t_section == 0.0:
        return scene
    values = {
        f"forces[{j}].phase": f.phase + f.omega * t_section
        for j, f in enumerate(scene.forces)
        if getattr(f, "type", "") == "harmonic"
    }
    return with_values(scene, values) if values else scene


def orbit_scene(scene: Any, orbit: PeriodicOrbit) -> Any:
    """``scene`` started on ``orbit``: its state at the section, the forcing's phase there.

    The scene's clock starts at the section (each harmonic force's phase advanced by
    ``ω t_section``) and runs one span (``solver.t_end = K T``), so a run of it is
    the orbit's period from its section. ``scene`` must be at the orbit's parameter.
    """
    base = shifted_scene(scene, orbit.t_section)
    system = System(base)
    n = system.N
    values: dict[str, float] = {"solver.t_end": float(orbit.span)}
    for b, ix in _bead_paths(system):
        values[f"bodies[{b}].x"] = float(orbit.state[ix])
        values[f"bodies[{b}].vx"] = float(orbit.state[n + ix])
    return with_values(base, values)


def start_state(scene: Any) -> np.ndarray:
    """The scene's initial ``(q, v)``."""
    system = System(scene)
    return np.concatenate([system.q0, system.v0])


def run_map(scene: Any, z: np.ndarray, span: float) -> StroboscopicRun:
    """Run ``scene`` (its clock from 0) from the state ``z`` for ``span`` s, event-driven.

    Raises
    ------
    SolverError
        The run failed, or had an event the orbit code cannot differentiate. A run
        that starts held on a stop (a section inside a sticking phase) begins with an
        event of kind ``held`` at t = 0; an impact after which a bead stays held to the
        span's end has ``held_after`` set.
    """
    system = System(scene)
    n = system.N
    values: dict[str, float] = {}
    for b, ix in _bead_paths(system):
        values[f"bodies[{b}].x"] = float(z[ix])
        values[f"bodies[{b}].vx"] = float(z[n + ix])
    system = System(with_values(scene, values))
    stepper = make_stepper(system, t_end=span, method="event-driven", dt_out=span)
    trajectory = Trajectory(system)
    drive(stepper, trajectory)
    if trajectory.status != "finished":
        raise SolverError(f"the run over one span failed: {trajectory.message}")
    last = trajectory.frames[-1]
    if not math.isclose(last.t, span, rel_tol=1e-12, abs_tol=1e-12):
        raise SolverError(f"the run ended at t = {last.t!r} s, not at the span's end {span!r} s")
    first = trajectory.frames[0]
    held_start = [c for c in first.contacts if c.mode != "compliant"] if first.t == 0.0 else []
    pre = {f.t: f.q for f in trajectory.frames if f.kind == "pre"}
    impacts: list[Impact] = [_held(system, z, c) for c in held_start]
    for event in trajectory.events:
        if event.type == "zeno":
            _capture(impacts, event, System(scene).M)
        elif event.type in ("impact",):
            impacts.append(
                Impact(
                    t=float(event.t),
                    v_minus=np.array(event.v_minus),
                    v_plus=np.array(event.v_plus),
                    q=pre.get(event.t),
                    body=event.body,
                    other=event.other,
                )
            )
        elif event.type in CONTACT_EVENTS:
            impacts.append(
                Impact(
                    float(event.t), None, None, body=event.body, other=event.other, kind=event.type
                )
            )
        elif event.type not in ("energy_gain",):
            raise SolverError(
                f"t = {event.t!r} s: a {event.type!r} event; periodic orbits are computed for "
                "motions of free flight, impacts, sticking that ends in a lift-off, and "
                "compliant touches and releases only"
            )
    for contact in last.contacts:  # a sticking phase that lasts to the span's end
        if contact.mode == "compliant":
            continue
        own = [i for i in impacts if (i.body, i.other) == (contact.body, contact.other)]
        if own and own[-1].kind == "impact":
            own[-1].held_after = True
    fill_contact_states(scene, z, impacts)
    return StroboscopicRun(np.concatenate([last.q, last.v]), impacts)


def _held(system: System, z: np.ndarray, contact: Any) -> Impact:
    """A bead held on a rigid stop at the run's start (a section inside a sticking phase):
    an event of kind ``held`` at t = 0 whose ``normal`` is the gap's gradient in ``q``."""
    if contact.other not in {b.id for b in system.scene.boundaries}:
        raise SolverError(
            f"t = 0 s: {contact.body} rests on {contact.other} at the section; periodic orbits "
            "support a section inside a sticking phase on a stop only (choose another section "
            "time)"
        )
    n = np.zeros(system.N)
    bead = next(i for i, b in enumerate(system.scene.bodies) if b.id == contact.body)
    n[_bead_paths(system)[bead][1]] = float(contact.normal[0])  # a bead's rail is along x
    v = np.array(z[system.N :], dtype=float)
    return Impact(
        0.0, v, v.copy(), q=np.array(z[: system.N], dtype=float), body=contact.body,
        other=contact.other, kind="held", normal=n,
    )  # fmt: skip


def counted_events(impacts: list[Impact]) -> list[Impact]:
    """The events of a run, each chattering sequence that ends in a capture counted once.

    A branch compares its orbits' events to see an impact appear or vanish (a grazing).
    The number of bounces before the engine captures a chattering sequence changes along
    a branch without one: the capture comes after the bounce that completes a geometric
    run, and the held phase after it forgets how the bead got there (for the held bead
    the map through complete chattering is the same whichever bounce is captured). So
    the pair's impacts from its last other event (a lift-off, a ``held`` start, or the
    run's start) to the captured one count as one event (the captured one).
    """
    chattering: set[int] = set()
    for k, impact in enumerate(impacts):
        if not impact.captured:
            continue
        pair = (impact.body, impact.other)
        j = k - 1
        while j >= 0:
            other = impacts[j]
            if (other.body, other.other) == pair:
                if other.kind != "impact":
                    break
                chattering.add(j)
            j -= 1
    return [impact for k, impact in enumerate(impacts) if k not in chattering]


def event_count(impacts: list[Impact]) -> int:
    """The number of :func:`counted_events` of a run."""
    return len(counted_events(impacts))


def _side(impact: Impact) -> np.ndarray:
    """A vector along the event's contact normal, pointing to the side the bead is on:
    the gap's gradient (:attr:`Impact.normal`) at a touch, release or ``held`` start, the
    velocity jump ``v⁺ − v⁻ = λ M⁻¹ n`` (``λ ≥ 0``) at an impact."""
    return impact.normal if impact.normal is not None else impact.v_plus - impact.v_minus


def same_events(impacts: list[Impact], reference: list[Impact]) -> bool:
    """The run's :func:`counted_events` are the reference's: in the same order, of the
    same kind and pair ``(body, other)``, each from the same side of its contact.

    The side matters: a bead on the far side of a stop (or two beads swapped) makes an
    orbit with as many impacts that is no continuation of the reference. Two events of
    one contact come from the same side when their vectors :func:`_side` (``M⁻¹ n`` times a
    non-negative factor at an impact, with ``n`` the contact's fixed gap gradient up to its
    sign) do not point against each other; ``(M⁻¹ n)·(M⁻¹ n) > 0`` makes this exact for
    any positive definite ``M``. A zero vector (an impact at zero speed) takes either side.
    """
    ours, theirs = counted_events(impacts), counted_events(reference)
    return len(ours) == len(theirs) and all(
        (a.kind, a.body, a.other) == (b.kind, b.body, b.other) and _side(a) @ _side(b) >= 0.0
        for a, b in zip(ours, theirs, strict=True)
    )


def _capture(impacts: list[Impact], event: Any, M: np.ndarray) -> None:
    """A chattering sequence's end (a ``zeno`` event): the engine's plastic capture.

    For a scene with springs or forcing the engine, once the last impacts of one contact
    form a geometric sequence or a shrinking run (:mod:`solver.zeno`) that would rise less
    than ``ZENO_HEIGHT``, removes the contact's separation speed right after the last impact
    (an M-orthogonal projection) and holds the bead from there; the event's time is the
    series' accumulation time, its state the last impact's. So the map goes on as if that
    impact had been plastic: its ``v_plus`` becomes the captured velocity
    ``v⁺ − M⁻¹n (n·v⁺)/(nᵀM⁻¹n)``, and it starts a sticking phase (docs/ORBITS.md).
    Other Zeno ends (a series summed in closed form: scenes without springs or forcing; a
    capture of several contacts at once) are refused.
    """
    last = impacts[-1] if impacts else None
    message = str(event.message or "")
    one_contact = message.startswith("geometric bouncing accumulates") or message.startswith(
        f"bouncing on several contacts ({event.body}–{event.other}) would rise less"
    )  # the two captures at the last impact's time (ZenoSummer.check_zeno, ._capture)
    if (
        last is None
        or last.kind != "impact"
        or (last.body, last.other) != (event.body, event.other)
        or not one_contact
    ):
        raise SolverError(
            f"t = {event.t!r} s: a Zeno end of {event.body} and {event.other} other than the "
            "capture after a geometric chattering sequence of one contact (its map is not "
            "implemented)"
        )
    n = M @ (last.v_plus - last.v_minus)
    w = np.linalg.solve(M, n)
    last.v_plus = last.v_plus - w * (float(n @ last.v_plus) / float(n @ w))
    last.captured = True


def find_orbit(
    scene: Any,
    z0: np.ndarray | None = None,
    *,
    period: int = 1,
    transient: float = 0.0,
    t_section: float = 0.0,
    period_s: float | None = None,
    label: str = "",
    max_steps: int = MAX_NEWTON_STEPS,
    tol: float = NEWTON_TOL,
) -> PeriodicOrbit:
    """The periodic orbit of ``period`` forcing periods nearest the start.

    Parameters
    ----------
    scene : Scene
        A bead scene (linear springs and dampers, harmonic forcing, rigid stops).
    z0 : array_like, optional
        Starting guess ``(q, v)`` at the section; default the scene's initial state.
    period : int
        ``K`` (≥ 1).
    transient : float
        Seconds simulated from ``z0`` first (rounded up to whole spans), so the
        guess is the attractor the simulation reaches.
    t_section : float
        Section time on the scene's clock (s).
    period_s : float, optional
        Forcing period in seconds (needed when the scene has no harmonic force).
    label : str
        Names the parameter value in error messages (``"forces[0].omega = 12"``).

    Raises
    ------
    InputError
        Bad scene or arguments (the field is named).
    SolverError
        Newton did not converge in ``max_steps`` steps, or a run failed.
    """
    if not (isinstance(period, int) and period >= 1):
        raise InputError(f"`period` must be a whole number ≥ 1, got {period!r}")
    if not (math.isfinite(transient) and transient >= 0.0):
        raise InputError(f"`transient` must be ≥ 0 s, got {transient!r}")
    span = period * forcing_period(scene, period_s)
    where = f" at {label}" if label else ""
    base = shifted_scene(scene, t_section)
    z = start_state(scene) if z0 is None else np.array(z0, dtype=float)
    system = System(base)
    if z.shape != (2 * system.N,):
        raise InputError(f"`state` must hold {2 * system.N} numbers (q, v), got {z.shape}")
    for _ in range(math.ceil(transient / span - 1e-9)):
        z = _map(base, z, span, where).z_end
    residual = math.inf
    for step in range(max_steps + 1):
        run = _map(base, z, span, where)
        g = run.z_end - z
        residual = float(np.max(np.abs(g)))
        J = monodromy(base, z, run.impacts, span)
        if converged(residual, z, tol):
            return make_orbit(z, t_section, period, span, J, run.impacts, step, residual)
        if step == max_steps:
            break
        A = J - np.eye(len(z))
        try:
            dz = np.linalg.solve(A, -g)
        except np.linalg.LinAlgError:
            raise SolverError(
                f"Newton for a period-{period} orbit{where}: a multiplier is 1 (singular step)"
            ) from None
        z = z + dz
    raise SolverError(
        f"Newton for a period-{period} orbit{where} did not converge in {max_steps} steps "
        f"(residual {residual:.3g})"
    )


def converged(residual: float, z: np.ndarray, tol: float = NEWTON_TOL) -> bool:
    """The Newton test: ``residual ≤ tol (1 + max |z|)``."""
    return residual <= tol * (1.0 + float(np.max(np.abs(z))))


def make_orbit(
    z: np.ndarray,
    t_section: float,
    period: int,
    span: float,
    J: np.ndarray,
    impacts: list[Impact],
    steps: int,
    residual: float,
) -> PeriodicOrbit:
    """A :class:`PeriodicOrbit` with its multipliers (eigenvalues of ``J``, largest first)."""
    mu = np.linalg.eigvals(J)
    mu = mu[np.argsort(-np.abs(mu), kind="stable")]
    return PeriodicOrbit(z, t_section, period, span, J, mu, impacts, steps, residual)


def _map(scene: Any, z: np.ndarray, span: float, where: str) -> StroboscopicRun:
    try:
        return run_map(scene, z, span)
    except SolverError as error:
        raise SolverError(f"periodic orbit{where}: {error}") from None
