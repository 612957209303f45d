"""One mass against a compliant stop in closed form (paper 003 §2–3; Hertz).

A mass m arrives at speed V on a stop of stiffness k (N/m^p) and damping c
(N·s/m): the contact's duration, exit speed, peak force and impulse, and the
overlap δ(t) while it presses. Linear stops (p = 1) follow paper 003 (10)–(12)
(``δ = (V/λ) sin λt``, ``λ² = k/m`` undamped; the damped oscillator's half
wave otherwise); the Hertz stop (p = 1.5) has contact time
``2·(δ_m/V)·(2/5)·B(2/5, 1/2)`` with ``δ_m = (5mV²/4k)^(2/5)``. These are the
references of :mod:`solver.reference` and of the tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import beta, betaincinv


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
