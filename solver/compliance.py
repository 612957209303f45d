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

The closed forms of one mass against a stop (:func:`linear_stop`,
:func:`hertz_stop`) are the references of :mod:`solver.reference` and of
the tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import beta, betaincinv

from solver.event_tolerances import TIME_TOL
from solver.frames import ContactState, Event
from solver.geometry import disk_feature_contact

STEP_SHARE = 0.02
"""Largest ODE step while a compliant contact presses, as a share of its period."""

_GAUSS = np.polynomial.legendre.leggauss(8)
"""Gauss–Legendre nodes and weights on [−1, 1] for a contact's impulse over a piece."""

COMPLIANT_EVENTS = ("touch", "release")
"""Event types of compliant contacts (``events.csv``): no impact, no velocity jump."""


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
        ``None`` (the time-stepper): the force is ``max(0, k·δ^p + c·δ̇)``
        of every overlap, a function of the state. The event-driven stepper
        sets, at each phase's start (:meth:`engage`), the ``(disk, feature)``
        pairs that press; within the phase only they carry a force, the smooth
        ``k·δ^p + c·δ̇`` (no clamp, so that no ODE step straddles a kink), and
        the phase ends at a ``touch`` or ``release`` (:class:`CompliantEvents`).
    """

    def __init__(self, system: Any, features: list[tuple[str, Any, Any]]) -> None:
        self.system = system
        self.features = features
        self._k = [float(law.stiffness) for _, _, law in features]
        self._c = [float(law.damping) for _, _, law in features]
        self._p = [float(law.exponent) for _, _, law in features]
        self.engaged: frozenset[tuple[int, int]] | None = None

    def __len__(self) -> int:
        return len(self.features)

    def _pairs(self, q: np.ndarray, v: np.ndarray) -> list[tuple[int, int, Any]]:
        """``(disk, feature, DiskContact)`` of every disk and compliant feature whose
        Voronoi region holds the disk's centre (:func:`disk_feature_contact`)."""
        return [pair for pair in self._every_pair(q, v) if pair[2] is not None]

    def _every_pair(self, q: np.ndarray, v: np.ndarray) -> list[tuple[int, int, Any]]:
        """``(disk, feature, DiskContact or None)`` of every disk and compliant feature, in
        a fixed order (None: the centre is outside the feature's Voronoi region)."""
        system = self.system
        c, cd = system.centres(q), system.centre_velocities(v)
        om = system.angular_velocities(v)
        return [
            (k, f, disk_feature_contact(feature, c[k], cd[k], system.radii[k], om[k]))
            for f, (_, feature, _) in enumerate(self.features)
            for k in range(system.n_disks)
        ]

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

    def engage(self, q: np.ndarray, v: np.ndarray) -> None:
        """Fix the pressing pairs for the phase starting at ``(q, v)``.

        A pair presses when it overlaps or touches (``g ≤ 0``) and either its
        force ``k·δ^p + c·δ̇`` is positive or it is closing (``u_n < 0``: just
        touched, δ = 0).
        """
        self.engaged = frozenset(
            (k, f)
            for k, f, dc in self._pairs(q, v)
            if dc.g <= 0.0 and (self._press(f, dc) > 0.0 or dc.u_n < 0.0)
        )

    def force(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Generalized force (N, N·m) of the compliant contacts at ``(q, v)``."""
        out = np.zeros(self.system.N)
        for k, f, dc in self._pairs(q, v):
            force = self._force(k, f, dc)
            if force != 0.0:
                self.system._add_disk_force(out, k, force * dc.n)
        return out

    def energy(self, q: np.ndarray) -> float:
        """Elastic energy ``Σ k·δ^(p+1)/(p+1)`` (J) stored in the stops (δ > 0)."""
        zero = np.zeros(self.system.N)
        total = 0.0
        for _, f, dc in self._pairs(q, zero):
            if dc.g < 0.0:
                p = self._p[f]
                total += self._k[f] * (-dc.g) ** (p + 1.0) / (p + 1.0)
        return total

    def dissipation_power(self, q: np.ndarray, v: np.ndarray) -> float:
        """Power dissipated (W): ``(F − k·δ^p)·δ̇`` summed over the overlaps.

        ``c·δ̇²`` while a contact presses; ``k·δ^p·|δ̇|`` while a disk released
        with δ > 0 leaves the stop (the stored energy going out as loss).
        """
        total = 0.0
        for k, f, dc in self._pairs(q, v):
            if dc.g < 0.0:
                total += (self._force(k, f, dc) - self._spring(f, dc.g)) * (-dc.u_n)
        return total

    def max_step(self, q: np.ndarray, v: np.ndarray) -> float:
        """Longest ODE step (s) while a compliant contact presses: ``STEP_SHARE`` of its period.

        Per overlap, the period ``2π/√(k_eff/m)`` of the spring linearised at
        the deepest overlap the motion can reach from here, ``δ_m =
        (δ^(p+1) + (p+1) m δ̇²/(2k))^(1/(p+1))`` (energy, damping ignored),
        ``k_eff = p·k·δ_m^(p−1)``. ``inf`` when nothing presses (a disk
        released inside a stop feels no force).
        """
        system = self.system
        best = math.inf
        for k, f, dc in self._pairs(q, v):
            pressing = dc.g <= 0.0 if self.engaged is None else (k, f) in self.engaged
            if pressing:
                p, stiff = self._p[f], self._k[f]
                m = float(system.M_diag[system._disk_ix[k]])
                reach = (-dc.g) ** (p + 1.0) + (p + 1.0) * m * dc.u_n**2 / (2.0 * stiff)
                delta_m = reach ** (1.0 / (p + 1.0))
                k_eff = p * stiff * delta_m ** (p - 1.0)
                if k_eff > 0.0:
                    best = min(best, STEP_SHARE * 2.0 * math.pi * math.sqrt(m / k_eff))
        return best

    def event_values(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Per disk and feature: ``(touch, release)``, each falling through 0 at its event.

        A pressing pair (:attr:`engaged`): touch ``+inf``; release ``k·δ^p +
        c·δ̇`` (smooth through δ = 0, where it is ``c·δ̇``: for c = 0 the force
        ends at δ = 0). Any other pair: release ``+inf``; touch the gap while
        it is positive, and inside the stop ``−(k·δ^p + c·δ̇)`` (a released
        disk pushed back in before it got out presses again). One row per disk
        and feature whatever ``q`` (rows of two instants are compared): a
        centre outside the feature's Voronoi region has no event there, ``+inf``.
        """
        engaged = self.engaged or frozenset()
        rows = []
        for k, f, dc in self._every_pair(q, v):
            if dc is None:
                rows.append((math.inf, math.inf))
            elif (k, f) in engaged:
                rows.append((math.inf, self._press(f, dc)))
            else:
                rows.append((dc.g if dc.g >= 0.0 else -self._press(f, dc), math.inf))
        return np.array(rows, dtype=float).reshape(-1, 2)

    def pressing_forces(self, q: np.ndarray, v: np.ndarray) -> dict[tuple[str, str], float]:
        """The force (N) of every pressing pair under :attr:`engaged`, by ``(body, other)``."""
        system = self.system
        return {
            (system.disk_body_id(k), self.features[f][0]): self._force(k, f, dc)
            for k, f, dc in self._pairs(q, v)
            if self.engaged is None or (k, f) in self.engaged
            if self.engaged is not None or dc.g < 0.0
        }

    def pair_names(self, q: np.ndarray, v: np.ndarray) -> list[tuple[str, str]]:
        """``(body, other)`` of each row of :meth:`event_values`, in the same order."""
        system = self.system
        return [(system.disk_body_id(k), self.features[f][0]) for k, f, _ in self._every_pair(q, v)]

    def states(self, q: np.ndarray, v: np.ndarray) -> list[ContactState]:
        """The pressing compliant contacts as ``contacts.csv`` rows: ``lam`` = F ≥ 0."""
        out = []
        system = self.system
        for k, f, dc in self._pairs(q, v):
            force = self._force(k, f, dc)
            if force > 0.0 or (self.engaged is not None and (k, f) in self.engaged):
                out.append(
                    ContactState(
                        body=system.disk_body_id(k),
                        other=self.features[f][0],
                        lam=max(force, 0.0),
                        tau=0.0,
                        u_n=float(dc.u_n),
                        u_t=float(dc.u_t),
                        mode="compliant",
                        point=(float(dc.point[0]), float(dc.point[1])),
                        normal=(float(dc.n[0]), float(dc.n[1])),
                    )
                )
        return out


# ------------------------------------------------------------- events


@dataclass(frozen=True)
class CompliantEvent:
    """A ``touch`` or ``release`` at ``t`` (s) of disk ``body`` and feature ``other``."""

    t: float
    kind: str
    key: tuple[str, str]


class CompliantEvents:
    """The event-driven stepper's part for compliant contacts: where their events are.

    Reached through three methods: :meth:`begin` (a phase starts: which
    contacts press in it), :meth:`first` (the earliest ``touch`` or
    ``release`` of a smooth piece) and :meth:`emit` (the event row). The
    forces themselves are in the applied force (:meth:`CompliantSet.force`).
    """

    def __init__(self, compliance: CompliantSet, N: int, n_sub: int) -> None:
        self.compliance, self.N, self.n_sub = compliance, N, n_sub
        # each pressing contact's touch time, impulse ∫F dt so far and largest force
        self._measures: dict[tuple[str, str], list[float]] = {}

    def _values(self, y: np.ndarray) -> np.ndarray:
        """:meth:`CompliantSet.event_values` of the row ``y = (q, v, work)``."""
        N = self.N
        return self.compliance.event_values(y[:N], y[N : 2 * N])

    def begin(self, q: np.ndarray, v: np.ndarray) -> None:
        """A phase starts at ``(q, v)``: fix which compliant contacts press in it."""
        self.compliance.engage(q, v)

    def first(self, piece: Any, ta: float, tb: float) -> CompliantEvent | None:
        """The earliest ``touch`` or ``release`` in ``(ta, tb]`` of ``piece`` (or None).

        Sub-points split the piece; a value positive at a sub-point and not
        positive at the next is bisected to ``TIME_TOL``, and the event is put
        on the side where it has happened (gap ≤ 0 after a touch, force 0
        after a release), so the next phase does not find it again.
        """
        found = self._first(piece, ta, tb)
        self._measure(piece, ta, tb if found is None else found.t)
        return found

    def _measure(self, piece: Any, ta: float, tb: float) -> None:
        """Add ``∫F dt`` over ``[ta, tb]`` (Gauss–Legendre) and the largest F to each contact."""
        if not tb > ta or not self.compliance.engaged:
            return
        nodes, weights = _GAUSS
        half = 0.5 * (tb - ta)
        N = self.N
        for x, w in zip(nodes, weights, strict=True):
            y = piece.state(ta + half * (1.0 + x))
            forces = self.compliance.pressing_forces(y[:N], y[N : 2 * N])
            for key, force in forces.items():
                record = self._measures.setdefault(key, [ta, 0.0, 0.0])
                record[1] += half * w * force
                record[2] = max(record[2], force)

    def _first(self, piece: Any, ta: float, tb: float) -> CompliantEvent | None:
        if not tb > ta:
            return None
        ts = np.linspace(ta, tb, self.n_sub + 1)
        before = self._values(piece.state(ts[0]))
        for j in range(1, len(ts)):
            after = self._values(piece.state(ts[j]))
            crossed = (before > 0.0) & (after <= 0.0)
            if crossed.any():
                best: CompliantEvent | None = None
                names = None
                for row, col in zip(*np.nonzero(crossed), strict=True):
                    t_hit = self._bisect(piece, int(row), int(col), ts[j - 1], ts[j])
                    if best is None or t_hit < best.t:
                        if names is None:
                            y = piece.state(ts[j - 1])
                            names = self.compliance.pair_names(y[: self.N], y[self.N : 2 * self.N])
                        best = CompliantEvent(t_hit, COMPLIANT_EVENTS[col], names[row])
                return best
            before = after
        return None

    def _bisect(self, piece: Any, row: int, col: int, lo: float, hi: float) -> float:
        """The first time (s) in ``(lo, hi]`` where value ``(row, col)`` is ≤ 0, to ``TIME_TOL``."""
        while hi - lo > TIME_TOL:
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:
                break
            if self._values(piece.state(mid))[row, col] > 0.0:
                lo = mid
            else:
                hi = mid
        return hi

    def emit(self, out: Any, found: CompliantEvent) -> None:
        """The event row of ``found`` (no impact: the velocities do not jump).

        A ``touch`` starts the contact's measures; its ``release`` reports
        them: ``normal_impulse`` = ∫F dt (N·s), ``peak_force`` (N) and the
        contact time in ``message``.
        """
        body, other = found.key
        if found.kind == "touch":
            self._measures[found.key] = [found.t, 0.0, 0.0]
            out.events.append(Event(t=found.t, type="touch", body=body, other=other))
            return
        t_touch, impulse, peak = self._measures.pop(found.key, [math.nan, 0.0, 0.0])
        out.events.append(
            Event(
                t=found.t,
                type="release",
                body=body,
                other=other,
                normal_impulse=float(impulse),
                peak_force=float(peak),
                message=f"contact time {found.t - t_touch:.12g} s, peak force {peak:.12g} N",
            )
        )


# ------------------------------------------------------------- closed forms


@dataclass(frozen=True)
class StopImpact:
    """One mass m arriving at speed V > 0 on a stop: what the contact amounts to.

    Attributes
    ----------
    duration : float
        Contact time, touch to release (s).
    exit_speed : float
        Speed of the mass at the release (m/s, ≥ 0, away from the stop).
    restitution : float
        ``exit_speed / V``: the restitution the contact amounts to.
    peak_force : float
        Largest force (N).
    impulse : float
        ``∫F dt = m (V + exit_speed)`` (N·s): ``(1 + e) m V``.
    overlap_at_release : float
        δ when F returns to 0 (m): 0 without damping.
    """

    duration: float
    exit_speed: float
    restitution: float
    peak_force: float
    impulse: float
    overlap_at_release: float


def linear_overlap(m: float, k: float, c: float, V: float, t: np.ndarray | float) -> Any:
    """``(δ, δ̇)`` at time ``t`` (s) after the touch, linear stop (p = 1), while it presses.

    ``m δ̈ + c δ̇ + k δ = 0``, ``δ(0) = 0``, ``δ̇(0) = V``: paper 003 (12)
    for c = 0, ``δ = (V/λ) sin λt``, ``λ² = k/m``.
    """
    t = np.asarray(t, dtype=float)
    w = math.sqrt(k / m)
    zeta = c / (2.0 * math.sqrt(k * m))
    if zeta < 1.0:
        wd = w * math.sqrt(1.0 - zeta * zeta)
        decay = np.exp(-zeta * w * t)
        s, co = np.sin(wd * t), np.cos(wd * t)
        return V / wd * decay * s, V * decay * (co - zeta * w / wd * s)
    if zeta == 1.0:
        decay = np.exp(-w * t)
        return V * t * decay, V * decay * (1.0 - w * t)
    root = w * math.sqrt(zeta * zeta - 1.0)
    s1, s2 = -zeta * w + root, -zeta * w - root
    a = V / (s1 - s2)
    return a * (np.exp(s1 * t) - np.exp(s2 * t)), a * (s1 * np.exp(s1 * t) - s2 * np.exp(s2 * t))


def linear_release_time(m: float, k: float, c: float) -> float:
    """Contact time (s) of a linear stop (p = 1): the first t > 0 with ``k δ + c δ̇ = 0``.

    Independent of V. Undamped: ``π/λ`` (paper 003 (10)). Underdamped
    (ζ = c/(2√(km)) < 1): ``ω_d t = π − atan2(2ζ√(1−ζ²), 1 − 2ζ²)``;
    critical: ``2/λ``; overdamped: ``ln((s₂ + k/c)/(s₁ + k/c))/(s₁ − s₂)``.
    """
    w = math.sqrt(k / m)
    zeta = c / (2.0 * math.sqrt(k * m))
    if zeta < 1.0:
        root = math.sqrt(1.0 - zeta * zeta)
        return (math.pi - math.atan2(2.0 * zeta * root, 1.0 - 2.0 * zeta * zeta)) / (w * root)
    if zeta == 1.0:
        return 2.0 / w
    root = w * math.sqrt(zeta * zeta - 1.0)
    s1, s2 = -zeta * w + root, -zeta * w - root
    r = k / c
    return math.log((s2 + r) / (s1 + r)) / (s1 - s2)


def linear_stop(m: float, k: float, c: float, V: float) -> StopImpact:
    """Mass ``m`` (kg) at speed ``V`` (m/s) on a linear stop ``k`` (N/m), damper ``c`` (N·s/m).

    Undamped: τ = π/λ, peak force V√(km), exit speed V (paper 003 (10)–(12)).
    The peak force is where ``dF/dt = k δ̇ + c δ̈ = 0`` (or ``cV`` at the touch
    when that is larger), found on the closed form.
    """
    tau = linear_release_time(m, k, c)
    delta, rate = linear_overlap(m, k, c, V, tau)
    exit_speed = float(-rate)
    if c == 0.0:
        peak = V * math.sqrt(k * m)
    else:  # F(t) = kδ + cδ̇ sampled finely, its largest value polished by a golden search
        ts = np.linspace(0.0, tau, 2001)
        d, r = linear_overlap(m, k, c, V, ts)
        j = int(np.argmax(k * d + c * r))
        lo, hi = ts[max(j - 1, 0)], ts[min(j + 1, len(ts) - 1)]

        def force(t: float) -> float:
            dd, rr = linear_overlap(m, k, c, V, t)
            return float(k * dd + c * rr)

        g = (math.sqrt(5.0) - 1.0) / 2.0
        for _ in range(80):
            a, b = hi - g * (hi - lo), lo + g * (hi - lo)
            if force(a) < force(b):
                lo = a
            else:
                hi = b
        peak = max(force(0.5 * (lo + hi)), c * V)
    return StopImpact(
        duration=tau,
        exit_speed=exit_speed,
        restitution=exit_speed / V,
        peak_force=peak,
        impulse=m * (V + exit_speed),
        overlap_at_release=float(delta),
    )


HERTZ_FACTOR = 2.0 * 0.4 * float(beta(0.4, 0.5))
"""``2·(2/5)·B(2/5, 1/2) ≈ 2.943``: Hertz contact time in units of ``δ_m/V``."""


def hertz_stop(m: float, k: float, V: float) -> StopImpact:
    """Mass ``m`` at speed ``V`` on an undamped Hertz stop ``F = k δ^1.5`` (k in N/m^1.5).

    ``δ_m = (5 m V² / 4k)^(2/5)`` (energy), contact time ``2·(δ_m/V)·(2/5)·B(2/5, 1/2)``
    (≈ 2.943 δ_m/V), peak force ``k δ_m^1.5``, exit speed V.
    """
    delta_m = (5.0 * m * V * V / (4.0 * k)) ** 0.4
    return StopImpact(
        duration=HERTZ_FACTOR * delta_m / V,
        exit_speed=V,
        restitution=1.0,
        peak_force=k * delta_m**1.5,
        impulse=2.0 * m * V,
        overlap_at_release=0.0,
    )


def hertz_overlap(m: float, k: float, V: float, t: np.ndarray | float) -> Any:
    """``(δ, δ̇)`` at time ``t`` (s) after the touch, undamped Hertz stop, while it presses.

    From the energy ``½mδ̇² + (2/5)kδ^(5/2) = ½mV²``: the time to reach
    ``δ = δ_m w^(2/5)`` is ``(δ_m/V)(2/5)B(w; 2/5, 1/2)`` (an incomplete beta
    function), so ``w = I⁻¹(t / t_m)`` with ``I`` the regularised incomplete
    beta function and ``t_m`` half the contact time; ``δ̇ = ±V√(1 − w)``,
    positive before ``t_m``; the second half mirrors the first.
    """
    t = np.asarray(t, dtype=float)
    delta_m = (5.0 * m * V * V / (4.0 * k)) ** 0.4
    half = 0.5 * HERTZ_FACTOR * delta_m / V
    rising = t <= half
    share = np.clip(np.where(rising, t, 2.0 * half - t) / half, 0.0, 1.0)
    w = betaincinv(0.4, 0.5, share)
    return delta_m * w**0.4, np.where(rising, 1.0, -1.0) * V * np.sqrt(1.0 - w)
