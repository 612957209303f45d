"""The closed-form reference of paper 002: two beads on one rail, each on its own spring, up
to and across their first impact (a plastic one: moving as one while the contact presses).
The form and its conditions: :mod:`solver.reference`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq

from solver.reference_model import (
    Piece,
    Reference,
    StateFunction,
    _horizontal_spring,
    _only,
    _restitution,
)
from solver.scene import (
    Bead,
    Scene,
)


def _two_masses(scene: Scene, t_end: float) -> Reference | None:
    if not _only(scene, bodies=2, springs=2) or scene.gravity[0] != 0.0:
        return None
    b1, b2 = sorted(scene.bodies, key=lambda b: getattr(b, "x", 0.0))
    if not (isinstance(b1, Bead) and isinstance(b2, Bead)) or b1.rail_y != b2.rail_y:
        return None
    springs = {}
    for spring in scene.springs:
        for bead in (b1, b2):
            found = _horizontal_spring(scene, spring, bead)
            if found is not None:
                springs[bead.id] = found
    if len(springs) != 2:
        return None
    (c1, k1), (c2, k2) = springs[b1.id], springs[b2.id]
    m1, m2 = b1.mass, b2.mass
    w1, w2 = math.sqrt(k1 / m1), math.sqrt(k2 / m2)
    D = b1.radius + b2.radius
    e = _restitution(scene)
    n1, n2 = b1.id, b2.id

    def free(
        t0: float, x1: float, v1: float, x2: float, v2: float
    ) -> Callable[[np.ndarray], tuple]:
        def motion(tau: np.ndarray) -> tuple:
            tau = np.asarray(tau, dtype=float)
            c_1, s_1 = np.cos(w1 * tau), np.sin(w1 * tau)
            c_2, s_2 = np.cos(w2 * tau), np.sin(w2 * tau)
            return (
                c1 + (x1 - c1) * c_1 + v1 / w1 * s_1,
                -(x1 - c1) * w1 * s_1 + v1 * c_1,
                c2 + (x2 - c2) * c_2 + v2 / w2 * s_2,
                -(x2 - c2) * w2 * s_2 + v2 * c_2,
            )

        return motion

    M, K = m1 + m2, k1 + k2
    W = math.sqrt(K / M)
    x_eq = (k1 * c1 + k2 * (c2 - D)) / K

    def joint(x1: float, v: float) -> Callable[[np.ndarray], tuple]:
        def motion(tau: np.ndarray) -> tuple:
            tau = np.asarray(tau, dtype=float)
            X = x_eq + (x1 - x_eq) * np.cos(W * tau) + v / W * np.sin(W * tau)
            V = -(x1 - x_eq) * W * np.sin(W * tau) + v * np.cos(W * tau)
            return X, V, X + D, V

        return motion

    def contact_force(x1: float, v: float) -> Callable[[float], float]:
        motion = joint(x1, v)

        def force(tau: float) -> float:
            X, _, _, _ = motion(np.array([tau]))
            acceleration = -W * W * (X[0] - x_eq)
            return float(m2 * acceleration + k2 * (X[0] + D - c2))

        return force

    def first_root(f: Callable[[float], float], start: float, stop: float, step: float) -> float:
        """First zero of ``f`` on ``(start, stop]`` where it turns from positive to ≤ 0."""
        a, fa = start, f(start)
        while a < stop:
            b = min(a + step, stop)
            fb = f(b)
            if fa > 0.0 >= fb:
                return brentq(f, a, b, xtol=1e-15, rtol=4 * np.finfo(float).eps)
            a, fa = b, fb
        return math.inf

    step = min(2 * math.pi / w1, 2 * math.pi / w2, 2 * math.pi / W) / 400.0
    phases: list[tuple[float, Callable[[np.ndarray], tuple]]] = []
    impacts: list[float] = []
    values: dict[str, float] = {"omega_1": w1, "omega_2": w2}
    t = 0.0
    motion = free(0.0, b1.x, b1.vx, b2.x, b2.vx)
    phases.append((0.0, motion))

    def gap_of(motion: Callable[[np.ndarray], tuple], t0: float) -> Callable[[float], float]:
        def gap(tt: float) -> float:
            x1, _, x2, _ = motion(np.array([tt - t0]))
            return float(x2[0] - x1[0] - D)

        return gap

    t_valid = t_end
    for number in (1, 2):
        t_hit = first_root(gap_of(motion, t), t + 1e-12 if impacts else t, t_end, step)
        if not math.isfinite(t_hit):
            break
        impacts.append(t_hit)
        x1, v1, x2, v2 = (float(a[0]) for a in motion(np.array([t_hit - t])))
        P = (1.0 + e) * m1 * m2 / M * (v1 - v2)
        v1, v2 = v1 - P / m1, v2 + P / m2
        t = t_hit
        if number == 2:  # the instant after the second impact ends the reference
            t_valid = t_hit
            phases.append((t, free(t, x1, v1, x2, v2)))
            break
        values.update({"t_first_impact": t_hit, "impulse": P, "v1_after": v1, "v2_after": v2})
        if e == 0.0 and contact_force(x1, v1)(0.0) > 0.0:
            motion = joint(x1, v1)
            phases.append((t, motion))
            force = contact_force(x1, v1)
            t_lift = first_root(lambda tt, f=force, t0=t: f(tt - t0), t, t_end, step)
            if not math.isfinite(t_lift):
                break
            values["t_liftoff"] = t_lift
            x1, v1, x2, v2 = (float(a[0]) for a in motion(np.array([t_lift - t])))
            t = t_lift
        motion = free(t, x1, v1, x2, v2)
        phases.append((t, motion))

    def as_state(motion: Callable[[np.ndarray], tuple]) -> StateFunction:
        def state(tau: np.ndarray) -> dict[str, np.ndarray]:
            x1, v1, x2, v2 = motion(tau)
            return {f"{n1}.x": x1, f"{n1}.vx": v1, f"{n2}.x": x2, f"{n2}.vx": v2}

        return state

    return Reference(
        name="two_masses",
        title="two masses on springs (paper 002)",
        source="paper 002: free oscillators, Newton's law at the impact, joint motion if plastic",
        conditions=(
            "two beads on one rail, each on an undamped spring to an anchor on the rail",
            "no walls, no forces; valid up to the second impact",
        ),
        columns=(f"{n1}.x", f"{n1}.vx", f"{n2}.x", f"{n2}.vx"),
        units=("m", "m/s", "m", "m/s"),
        t_valid=t_valid,
        impact_times=tuple(impacts),
        values=values,
        pieces=tuple(Piece(t0, as_state(motion)) for t0, motion in phases),
    )
