"""The family of admissible impacts that keep a given share of the energy (paper 000 §4).

Momentum balance, admissibility and the energy alone do not fix a
multi-contact impact: paper 000 (36)–(39) ask for impulses ``Λ ≥ 0`` with

    M(v⁺ − v⁻) = GΛ,    Gᵀv⁺ ≥ 0,    ½ v⁺ᵀMv⁺ = η · ½ v⁻ᵀMv⁻,

and for two or more closed contacts there is in general a whole set of
them. The staged law (paper 000 §3) picks one member, the sequential law
(one collision at a time) another.

* :func:`admissible_family` samples the set for any ``M``, ``G``, ``v⁻``:
  along each direction ``d ≥ 0`` of the impulse (``Λ = ρ d``) the energy is a
  quadratic in ``ρ``; its positive roots whose ``v⁺`` is admissible are
  members. For two contacts the directions are a fine grid of the quarter
  circle and the ends of the admissible arcs are found to round-off (the
  staged and the sequential answers of paper 000's example 4 are those ends).
* :func:`example_4` is the paper's closed form for its example 4 (three equal
  balls, the first at speed 1): eqs. (40)–(42), ``μ₁ = 1/(1 − s)``,
  ``μ₂ = t/(1 − s)``, ``t² − t + s = 0``; of the range ``−1/2 ≤ s < 1`` that
  (42) states, the admissible members are ``0 ≤ s ≤ 1/4`` with
  ``t = (1 + √(1 − 4s))/2`` — in the paper's parameter ``z = μ₁ ∈ [1, 4/3]``,
  ``λ = m[z, (z + √(4z − 3z²))/2]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq

from solver.errors import SolverError

ADMISSIBLE_TOL = 1e-12
"""Admissibility tolerance, relative to the largest approach speed."""


@dataclass(frozen=True)
class Family:
    """Sampled members of the family, one row each, in the order of the sampling.

    Attributes
    ----------
    impulse : (K, n) ndarray
        The impulses ``Λ`` per contact (N·s).
    v_plus : (K, N) ndarray
        The velocities after the impact.
    energy_ratio : float
        ``η``: the kinetic energy after over the energy before.
    """

    impulse: np.ndarray
    v_plus: np.ndarray
    energy_ratio: float

    def __len__(self) -> int:
        return len(self.impulse)


def _inputs(M: ArrayLike, G: ArrayLike, v_minus: ArrayLike) -> tuple[np.ndarray, ...]:
    M = np.asarray(M, dtype=float)
    G = np.asarray(G, dtype=float)
    v = np.asarray(v_minus, dtype=float)
    if M.ndim == 1:
        M = np.diag(M)
    N = len(v)
    if v.ndim != 1 or M.shape != (N, N) or G.ndim != 2 or G.shape[0] != N:
        raise SolverError(
            f"admissible_family: M must be ({N}, {N}) and G ({N}, n) for a velocity of length {N}"
        )
    if not (np.all(np.isfinite(M)) and np.all(np.isfinite(G)) and np.all(np.isfinite(v))):
        raise SolverError("admissible_family: M, G and v_minus must be finite")
    return M, G, v


def _roots(a: float, b: float, c: float) -> list[float]:
    """Positive roots of ``a ρ²/2 + b ρ + c = 0`` (``a > 0``)."""
    disc = b * b - 2.0 * a * c
    if a <= 0.0 or disc < 0.0:
        return []
    root = math.sqrt(disc)
    # the stable pair: q = −(b + sgn(b)·√disc); roots q/a and 2c/q
    q = -(b + math.copysign(root, b))
    found = [q / a]
    if q != 0.0:
        found.append(2.0 * c / q)
    return sorted({r for r in found if r > 0.0})


def admissible_family(
    M: ArrayLike,
    G: ArrayLike,
    v_minus: ArrayLike,
    energy_ratio: float = 1.0,
    samples: int = 401,
) -> Family:
    """Sample the impulses ``Λ ≥ 0`` that leave ``η`` of the energy and an admissible velocity.

    Parameters
    ----------
    M : (N, N) or (N,) array_like
        Mass matrix (or its diagonal).
    G : (N, n) array_like
        Constraint gradients, one column per closed contact (``Gᵀv`` are the
        normal speeds, > 0 separating).
    v_minus : (N,) array_like
        Velocity before the impact.
    energy_ratio : float
        ``η`` in [0, 1]: ``T⁺ = η T⁻`` (1: energy kept, paper 000 example 4).
    samples : int
        Directions of the impulse sampled (for ``n = 2`` along the quarter
        circle; for ``n ≥ 3`` a grid of the simplex with about this many
        points per edge squared).

    Returns
    -------
    Family
        The members found, ordered along the sampling; for ``n = 2`` the
        ends of each admissible arc are included exactly (to round-off).
    """
    if not 0.0 <= energy_ratio <= 1.0 or not math.isfinite(energy_ratio):
        raise SolverError(f"admissible_family: energy_ratio must be in [0, 1], got {energy_ratio}")
    if samples < 2:
        raise SolverError(f"admissible_family: samples must be at least 2, got {samples}")
    M, G, v = _inputs(M, G, v_minus)
    n = G.shape[1]
    Minv_G = np.linalg.solve(M, G)
    W = G.T @ Minv_G
    u = G.T @ v
    T = 0.5 * float(v @ M @ v)
    scale = max(float(np.max(np.abs(u))), 1e-300) if n else 1.0

    def members(d: np.ndarray) -> list[tuple[float, np.ndarray, np.ndarray]]:
        out = []
        for rho in _roots(float(d @ W @ d), float(d @ u), (1.0 - energy_ratio) * T):
            lam = rho * d
            v_plus = v + Minv_G @ lam
            out.append((float(np.min(G.T @ v_plus)) / scale, lam, v_plus))
        return out

    impulses: list[np.ndarray] = []
    velocities: list[np.ndarray] = []
    if n == 1:
        for margin, lam, v_plus in members(np.ones(1)):
            if margin >= -ADMISSIBLE_TOL:
                impulses.append(lam)
                velocities.append(v_plus)
    elif n == 2:
        angles = np.linspace(0.0, 0.5 * math.pi, samples)

        def direction(a: float) -> np.ndarray:
            return np.array([math.cos(a), math.sin(a)])

        def branch(a: float, k: int) -> tuple[float, np.ndarray, np.ndarray] | None:
            found = members(direction(a))
            return found[k] if k < len(found) else None

        for k in (0, 1):
            previous: tuple[float, tuple[float, np.ndarray, np.ndarray] | None] | None = None
            for a in angles:
                here = branch(float(a), k)
                inside = here is not None and here[0] >= 0.0
                if previous is not None:
                    a0, before = previous
                    was_inside = before is not None and before[0] >= 0.0
                    if inside != was_inside and before is not None and here is not None:
                        edge = _edge(lambda x, k=k: _margin(branch(x, k)), a0, float(a))
                        end = branch(edge, k)
                        if end is not None:
                            impulses.append(end[1])
                            velocities.append(end[2])
                if inside and here is not None:
                    impulses.append(here[1])
                    velocities.append(here[2])
                previous = (float(a), here)
    else:
        steps = max(2, round(math.sqrt(samples)))
        for index in np.ndindex(*([steps + 1] * (n - 1))):
            if sum(index) > steps:
                continue
            d = np.array([*index, steps - sum(index)], dtype=float) / steps
            for margin, lam, v_plus in members(d):
                if margin >= -ADMISSIBLE_TOL:
                    impulses.append(lam)
                    velocities.append(v_plus)
    if not impulses:
        return Family(np.empty((0, n)), np.empty((0, len(v))), energy_ratio)
    return Family(np.array(impulses), np.array(velocities), energy_ratio)


def _edge(margin, a0: float, a1: float) -> float:
    """Where ``margin`` (≥ 0 at one end, < 0 at the other) crosses zero in ``[a0, a1]``."""
    return brentq(margin, a0, a1, xtol=1e-16, rtol=1e-15)


def _margin(member: tuple[float, np.ndarray, np.ndarray] | None) -> float:
    return -1.0 if member is None else member[0]


def example_4(z: ArrayLike, m: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Paper 000 example 4 in closed form: impulses and velocities after, for ``z ∈ [1, 4/3]``.

    ``λ = m[z, (z + √(4z − 3z²))/2]``,
    ``ẋ(t+0) = [1 − z, (z − √(4z − 3z²))/2, (z + √(4z − 3z²))/2]`` (the
    struck ball at speed 1, the two others at rest; equal masses ``m``).
    ``z = 1`` is the sequential answer ``[0, 0, 1]``, ``z = 4/3`` the staged
    one ``[−1/3, 2/3, 2/3]`` (impulse ``[4/3, 2/3]``; the paper prints
    ``[4/3, 1/3]``, a slip of its own formula).

    Returns
    -------
    impulse : (K, 2) ndarray, v_plus : (K, 3) ndarray
    """
    z = np.atleast_1d(np.asarray(z, dtype=float))
    if np.any(z < 1.0 - 1e-15) or np.any(z > 4.0 / 3.0 + 1e-15):
        raise SolverError("example_4: z must lie in [1, 4/3] (paper 000, after (42))")
    root = np.sqrt(np.clip(4.0 * z - 3.0 * z * z, 0.0, None))
    impulse = m * np.column_stack([z, 0.5 * (z + root)])
    v_plus = np.column_stack([1.0 - z, 0.5 * (z - root), 0.5 * (z + root)])
    return impulse, v_plus
