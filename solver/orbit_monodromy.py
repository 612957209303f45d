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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg

from solver.errors import InputError, SolverError
from solver.linear_bead_model import linear_bead_model
from solver.system import System

GRAZING_TOL = 1e-9
"""An impact whose normal velocity is below this (m/s, relative to |v|) is grazing: no saltation."""


@dataclass
class Impact:
    """One impact of a run: time (s, the run's clock), state before and velocity after."""

    t: float
    v_minus: np.ndarray
    v_plus: np.ndarray
    q: np.ndarray | None = None
    body: str = ""
    other: str = ""

    def normal_velocities(self, M: np.ndarray) -> tuple[float, float]:
        """``(u_n⁻, u_n⁺)``: the gap's rate before and after (m/s; negative closing).

        The gap's gradient is the impulse's direction ``M (v⁺ − v⁻)`` scaled to a
        largest entry of 1 (for beads: ``±1`` at a stop, ``±(1, −1)`` between two beads).
        """
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
    return R + np.outer(f_plus - R @ f_minus, grad) / un_minus


def _acceleration(model: Any, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    force = model.f0 - model.K @ q - model.C @ v
    for h in model.harmonics:
        force = force + h.amplitude * np.sin(h.omega * t + h.phase)
    return np.linalg.solve(model.M, force)


def _model(system: System, q: np.ndarray) -> Any:
    model = linear_bead_model(system, q)
    if model is None:
        raise InputError(
            "`bodies`/`springs`: periodic orbits need a linear bead scene (beads on rails, "
            "springs along the rails)"
        )
    return model


def monodromy(scene: Any, z0: np.ndarray, impacts: list[Impact], span: float) -> np.ndarray:
    """Jacobian of ``z(0) ↦ z(span)`` for ``scene`` run from ``z0`` with these impacts.

    The impacts' ``q`` (positions at impact) are used when given; otherwise
    they are found by propagating the closed-form flow from the previous event.
    """
    system = System(scene)
    N = system.N
    q, v = np.array(z0[:N], dtype=float), np.array(z0[N:], dtype=float)
    t = 0.0
    Phi = np.eye(2 * N)
    times = [i.t for i in impacts]
    if len(set(times)) != len(times):
        raise SolverError("simultaneous impacts: their saltation is not implemented")
    for impact in impacts:
        model = _model(system, q)
        tau = impact.t - t
        Phi = scipy.linalg.expm(flow_generator(model.M, model.C, model.K) * tau) @ Phi
        if impact.q is None:
            q, _ = model.flow().start(t, q, v).state(impact.t)
        else:
            q = np.array(impact.q, dtype=float)
        a_minus = _acceleration(model, impact.t, q, impact.v_minus)
        a_plus = _acceleration(model, impact.t, q, impact.v_plus)
        try:
            S = saltation(model.M, impact.v_minus, impact.v_plus, a_minus, a_plus)
        except SolverError as error:
            raise SolverError(f"t = {impact.t!r} s: {error}") from None
        Phi = S @ Phi
        t, v = impact.t, np.array(impact.v_plus, dtype=float)
    model = _model(system, q)
    return scipy.linalg.expm(flow_generator(model.M, model.C, model.K) * (span - t)) @ Phi
