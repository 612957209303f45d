"""Closed-form references of paper 003: a bead between two stops ((40)), a bead on a spring
with a stop ((42)–(47)) and a bead against a compliant stop (§2, (10)–(12); Hertz). The
forms and their conditions: :mod:`solver.reference`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from solver.compliant_stop import hertz_overlap, hertz_stop, linear_overlap, linear_stop
from solver.reference_model import (
    _TOUCH,
    Piece,
    Reference,
    StateFunction,
    _flights,
    _horizontal_spring,
    _only,
    _restitution,
    _vertical_wall_across,
)
from solver.scene import (
    Bead,
    Scene,
)


def _mass_between_stops(scene: Scene, t_end: float) -> Reference | None:
    if not _only(scene, boundaries=2, bodies=1) or scene.gravity[0] != 0.0:
        return None
    bead = scene.bodies[0]
    if not isinstance(bead, Bead) or bead.vx == 0.0:
        return None
    walls = [(_vertical_wall_across(b, bead.rail_y), b) for b in scene.boundaries]
    if any(x is None for x, _ in walls):
        return None
    walls.sort(key=lambda item: item[0])
    (x_left, left), (x_right, right) = walls
    if not x_left < bead.x < x_right:
        return None
    r = bead.radius
    lo, hi = x_left + r, x_right - r
    gap = hi - lo
    e_left, e_right = _restitution(scene, left), _restitution(scene, right)
    name = bead.id
    v0 = bead.vx
    first = ((hi - bead.x) / v0) if v0 > 0 else ((bead.x - lo) / -v0)

    velocities = [v0]  # velocities[k]: after impact k (impacts alternate walls)

    def piece(k: int) -> StateFunction:
        v = velocities[k]
        x_start = bead.x if k == 0 else (hi if v < 0 else lo)

        def state(tau: np.ndarray) -> dict[str, np.ndarray]:
            return {f"{name}.x": x_start + v * tau, f"{name}.vx": np.full_like(tau, v)}

        return state

    def flight(k: int) -> float:
        before = velocities[k - 1]
        v = -before * (e_right if before > 0 else e_left)
        velocities.append(v)
        return 0.0 if v == 0.0 else gap / abs(v)

    def rest(tau: np.ndarray) -> dict[str, np.ndarray]:
        x_stop = hi if velocities[-2] > 0 else lo
        return {f"{name}.x": np.full_like(tau, x_stop), f"{name}.vx": np.zeros_like(tau)}

    pieces, impacts, t_valid = _flights(t_end, first, flight, piece, rest)
    values = {"gap": gap, "speed": abs(v0)}
    if e_left == e_right == 1.0:
        values["period"] = 2.0 * gap / abs(v0)
    return Reference(
        name="mass_between_stops",
        title=f"mass between two stops: period 2·gap/V = {2 * gap / abs(v0):.6g} s",
        source="paper 003 (40): sawtooth of period T = 2(x₁ − x₂)/V₁",
        conditions=(
            "one bead between two vertical walls across its rail, no spring, no force",
            "Newton's restitution at each wall (e = 1: energy exactly conserved)",
        ),
        columns=(f"{name}.x", f"{name}.vx"),
        units=("m", "m/s"),
        t_valid=t_valid,
        impact_times=tuple(impacts),
        values=values,
        pieces=tuple(pieces),
    )


def spring_stop_period(speed: float, lam: float, d: float) -> float:
    """Time from leaving a stop at ``speed`` (m/s) to returning to it (s).

    ``lam`` is ``√(k/m)`` (rad/s) and ``d`` the distance (m) from the stop to
    the spring's rest position, positive when the rest position lies on the
    mass's side of the stop: ``T = (2/λ)(π − atan2(u/λ, d))``. ``π/λ`` for
    ``d = 0``; ``2π/λ`` for ``u = 0, d > 0``; 0 for ``u = 0, d < 0`` (the
    spring holds the mass against the stop).
    """
    if speed == 0.0 and d <= 0.0:
        return 0.0
    return 2.0 / lam * (math.pi - math.atan2(speed / lam, d))


def _mass_spring_stop(scene: Scene, t_end: float) -> Reference | None:
    if not _only(scene, boundaries=1, bodies=1, springs=1) or scene.gravity[0] != 0.0:
        return None
    bead = scene.bodies[0]
    if not isinstance(bead, Bead):
        return None
    wall_x = _vertical_wall_across(scene.boundaries[0], bead.rail_y)
    spring = _horizontal_spring(scene, scene.springs[0], bead)
    if wall_x is None or spring is None or wall_x == bead.x:
        return None
    c, k = spring
    m, r = bead.mass, bead.radius
    lam = math.sqrt(k / m)
    s = 1.0 if wall_x > bead.x else -1.0  # the stop is on the +x side of the mass
    x_stop = wall_x - s * r
    anchor_x = scene.springs[0].anchor[0]
    d = s * (x_stop - c)
    e = _restitution(scene, scene.boundaries[0])
    x0, v0 = bead.x, bead.vx
    amplitude = math.hypot(x0 - c, v0 / lam)
    name = bead.id

    # the spring must not pass its anchor (its force would no longer be linear)
    far_end = c - s * amplitude
    if (far_end - anchor_x) * (x0 - anchor_x) <= 0.0:
        return None

    def harmonic(x_start: float, v_start: float) -> StateFunction:
        def state(tau: np.ndarray) -> dict[str, np.ndarray]:
            cos, sin = np.cos(lam * tau), np.sin(lam * tau)
            return {
                f"{name}.x": c + (x_start - c) * cos + v_start / lam * sin,
                f"{name}.vx": -(x_start - c) * lam * sin + v_start * cos,
            }

        return state

    rho = (x_stop - c) / amplitude if amplitude > 0.0 else math.inf
    if abs(rho) > 1.0:  # the oscillation never reaches the stop
        first = math.inf
        u1 = 0.0
    else:
        phi0 = math.atan2(-v0 / lam, x0 - c)
        first = ((-s * math.acos(rho) - phi0) % (2.0 * math.pi)) / lam
        if abs(x0 - x_stop) <= _TOUCH * max(1.0, abs(x0)) and s * v0 <= 0.0:
            first = spring_stop_period(abs(v0), lam, d)  # leaving the stop: back after T(u)
        elif abs(x0 - x_stop) <= _TOUCH * max(1.0, abs(x0)) and s * v0 > 0.0:
            first = 0.0
        u1 = amplitude * lam * math.sqrt(max(0.0, 1.0 - rho * rho))
    tiny = 1e-12 * max(u1, 1e-300)

    def piece(j: int) -> StateFunction:
        if j == 0:
            return harmonic(x0, v0)
        return harmonic(x_stop, -s * e**j * u1)

    def flight(j: int) -> float:
        w = e**j * u1
        if w <= tiny:
            return 0.0 if d <= 0.0 else spring_stop_period(0.0, lam, d)
        return spring_stop_period(w, lam, d)

    def rest(tau: np.ndarray) -> dict[str, np.ndarray]:
        return {f"{name}.x": np.full_like(tau, x_stop), f"{name}.vx": np.zeros_like(tau)}

    pieces, impacts, t_valid = _flights(t_end, first, flight, piece, rest)
    values = {"lambda": lam, "rest_to_stop": d, "u_first": u1}
    if math.isfinite(first):
        values["t_first"] = first
        values["period"] = spring_stop_period(u1, lam, d)
        values["energy_loss_per_impact"] = 0.5 * (1.0 - e * e) * m * u1 * u1
    return Reference(
        name="mass_spring_stop",
        title=(
            f"mass–spring–stop: T = {values['period']:.6g} s"
            if "period" in values
            else "mass on a spring (never reaches the stop)"
        ),
        source="paper 003 (42)–(47); period T = (2/λ)(π − atan2(u/λ, d)), corrected (44)",
        conditions=(
            "one bead on one undamped spring to an anchor on its rail, one vertical wall",
            "the spring never passes its anchor (its force stays linear)",
            "Newton's restitution at the wall (e = 1: periodic)",
        ),
        columns=(f"{name}.x", f"{name}.vx"),
        units=("m", "m/s"),
        t_valid=t_valid,
        impact_times=tuple(impacts),
        values=values,
        pieces=tuple(pieces),
    )


def _compliant_stop(scene: Scene, t_end: float) -> Reference | None:
    if not _only(scene, boundaries=1, bodies=1) or scene.gravity[0] != 0.0:
        return None
    bead, wall = scene.bodies[0], scene.boundaries[0]
    x_wall = _vertical_wall_across(wall, bead.rail_y) if isinstance(bead, Bead) else None
    law = scene.compliance_for(wall)
    if x_wall is None or law is None or bead.vx == 0.0:
        return None
    side = 1.0 if x_wall > bead.x else -1.0  # the wall's side of the bead
    if side * bead.vx <= 0.0 or abs(x_wall - bead.x) <= bead.radius:
        return None
    m, V, k, c = bead.mass, abs(bead.vx), law.stiffness, law.damping
    if law.exponent == 1.0:
        impact = linear_stop(m, k, c, V)

        def overlap(tau: np.ndarray) -> Any:
            return linear_overlap(m, k, c, V, tau)

        source = "paper 003 (10)–(12): τ = π/λ, peak V√(km), exit speed V (c = 0)"
    elif c == 0.0:
        impact = hertz_stop(m, k, V)

        def overlap(tau: np.ndarray) -> Any:
            return hertz_overlap(m, k, V, tau)

        source = "Hertz: τ = 2(δ_m/V)(2/5)B(2/5, 1/2), δ_m = (5mV²/4k)^(2/5)"
    else:
        return None  # a damped Hertz stop has no closed form
    name = bead.id
    x_touch = x_wall - side * bead.radius
    t_touch = abs(x_touch - bead.x) / V
    t_release = t_touch + impact.duration
    x_release = x_touch + side * impact.overlap_at_release
    v_exit = -side * impact.exit_speed

    def flight(tau: np.ndarray) -> dict[str, np.ndarray]:
        return {f"{name}.x": bead.x + bead.vx * tau, f"{name}.vx": np.full_like(tau, bead.vx)}

    def contact(tau: np.ndarray) -> dict[str, np.ndarray]:
        delta, rate = overlap(tau)
        return {f"{name}.x": x_touch + side * delta, f"{name}.vx": side * rate}

    def leave(tau: np.ndarray) -> dict[str, np.ndarray]:
        return {f"{name}.x": x_release + v_exit * tau, f"{name}.vx": np.full_like(tau, v_exit)}

    pieces = (Piece(0.0, flight), Piece(t_touch, contact), Piece(t_release, leave))
    return Reference(
        name="compliant_stop",
        title=f"compliant stop: contact time {impact.duration:.6g} s, "
        f"peak force {impact.peak_force:.6g} N",
        source=source,
        conditions=(
            "one bead moving towards one vertical wall with compliance, no spring, no force",
            "linear stop (p = 1, any damping) or undamped Hertz stop (p = 1.5)",
        ),
        columns=(f"{name}.x", f"{name}.vx"),
        units=("m", "m/s"),
        t_valid=t_end,
        impact_times=tuple(t for t in (t_touch, t_release) if t <= t_end),
        values={
            "contact_time": impact.duration,
            "peak_force": impact.peak_force,
            "exit_speed": impact.exit_speed,
            "restitution": impact.restitution,
            "impulse": impact.impulse,
            "overlap_at_release": impact.overlap_at_release,
        },
        pieces=pieces,
    )
