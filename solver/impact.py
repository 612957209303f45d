"""Impact laws: the velocity jump of a system hitting several unilateral constraints.

``resolve_impact`` implements the four laws of MECHANICS §3 on plain arrays:

* ``staged`` — paper 000 §3, (9)-(14): stages of a plastic phase (the
  least-distance projection of Theorem 1) followed by a Poisson restitution
  phase, repeated until no constraint approaches.
* ``poisson`` — paper 000 §2, (3)-(7): one such stage; its result may still
  violate ``Gᵀv⁺ >= 0`` (example 2) and is then flagged, not corrected.
* ``sequential`` — one constraint at a time, Newton's law with its effective
  mass; an infinite converging tail (``e < 1``) is summed in closed form.
* ``newton`` — Moreau's law ``0 <= Λ ⊥ u_n⁺ + e u_n⁻ >= 0`` on the
  constraints that do not separate, repeated while another one is left
  approaching (so the result is admissible and never gains energy).

With friction every phase carries Routh's impulse (paper 004 (31)-(35)):
``M(v⁺ − v⁻) = GΛ − HμΛτ`` with ``τ = sign(u_t⁺)`` (``τ ∈ [−1, 1]`` when
``u_t⁺ = 0``); with the MECHANICS §1 scaling of ``G`` and ``H`` the friction bound
is ``μΛ`` (paper 004 (32) writes ``μ‖G‖Λ``). In 2-D each phase is an LCP
(the friction cone has two edges) solved exactly by Lemke's method:

    plastic phase, unknowns Λ, β⁺, β⁻, σ >= 0 (p_t = β⁺ − β⁻ = −μΛτ):
        u_n⁺ + offset >= 0 ⊥ Λ,     u_t⁺ + σ >= 0 ⊥ β⁺,
        −u_t⁺ + σ >= 0 ⊥ β⁻,        μΛ − β⁺ − β⁻ >= 0 ⊥ σ,
    restitution phase: the same tangential part with Λ* = eΛ̃ given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from solver.errors import InputError, SolverError
from solver.impact_newton import _newton
from solver.impact_problem import (
    IMPACT_LAWS,
    MAX_ROUNDS,
    MAX_STAGES,
    TIE_TOLERANCE,
    TIME_BUDGET_S,
    ImpactResult,
    ImpactStage,
    _Budget,
    _constraint_matrix,
    _finite_array,
    _ImpactProblem,
    _Inertia,
    _per_constraint,
    max_collisions,
)
from solver.impact_sequential import _sequential
from solver.impact_staged import _staged

__all__ = [
    "ENERGY_GAIN_TOLERANCE",
    "IMPACT_LAWS",
    "MAX_ROUNDS",
    "MAX_STAGES",
    "TIE_TOLERANCE",
    "TIME_BUDGET_S",
    "TINY_SPEED",
    "ImpactResult",
    "ImpactStage",
    "max_collisions",
    "resolve_impact",
]


def resolve_impact(
    M: np.ndarray,
    G: np.ndarray,
    v_minus: np.ndarray,
    restitution: float | np.ndarray,
    law: str = "staged",
    *,
    H: np.ndarray | None = None,
    friction: float | np.ndarray | None = None,
    tol: float = 1e-12,
    max_stages: int | None = None,
    time_budget: float = TIME_BUDGET_S,
) -> ImpactResult:
    """Velocity jump of a system hitting closed unilateral constraints (MECHANICS §3).

    Every column of ``G`` is a closed contact (gap zero); pass only those.
    Momentum balance: ``M(v⁺ − v⁻) = G Λ + H p_t`` with ``Λ = impulse >= 0``
    and ``p_t = tangent_impulse = −μΛτ``.

    Parameters
    ----------
    M : (N, N) array_like, or (N,) for a diagonal mass matrix
        Symmetric positive definite mass matrix (kg, kg m²).
    G : (N, n) array_like or scipy.sparse matrix
        Constraint gradients, one column per constraint (paper 000), scaled so
        that ``Gᵀv`` are normal approach speeds (m/s). A sparse ``G`` with a
        diagonal ``M`` stays sparse (long chains).
    v_minus : (N,) array_like
        Velocity before the impact.
    restitution : float or (n,) array_like
        Coefficient(s) of restitution ``e`` in [0, 1].
    law : {"staged", "poisson", "sequential", "newton"}
        The impact law, see the module docstring.
    H : (N, n) array_like, optional
        Tangential Jacobian: ``Hᵀv`` are slip speeds (m/s). Needed when any
        friction coefficient is positive.
    friction : float or (n,) array_like, optional
        Coulomb coefficients ``μ >= 0``; none means frictionless.
    tol : float
        Admissibility tolerance relative to the approach-speed scale
        ``max(1 m/s, max |Gᵀv⁻|)``: a constraint with ``Gᵀv >= −tol·scale``
        does not approach.
    max_stages : int, optional
        Bound on stages (``staged``), rounds (``newton``) or collisions
        (``sequential``); default ``MAX_STAGES`` (1000), ``MAX_ROUNDS`` (200)
        and ``max_collisions(n)`` = ``50000 + 100 n`` (a pair jammed between
        walls with e = 0.999 takes 40 000 collisions, 0.5 s). Hitting it raises
        :class:`SolverError`.
    time_budget : float, optional
        CPU time (s) of the calling thread the call may take, ``TIME_BUDGET_S``
        (2 s) by default;
        past it :class:`SolverError` says so (docs/LIMITS.md).

    Returns
    -------
    ImpactResult

    Raises
    ------
    InputError
        Non-symmetric or non-positive-definite ``M``, shape mismatch, NaN or
        inf, restitution outside [0, 1], negative friction, friction without
        ``H``, unknown ``law``.
    SolverError
        A stage bound is hit or no consistent impulse exists (e.g. the
        ``newton`` law with incompatible restitutions on dependent constraints),
        naming the bound that was hit.

    Notes
    -----
    The ``newton`` law with friction never gains energy: when its plain form
    (friction opposing ``u_t⁺``) would, with tangents coupled to the normals
    through ``M``, the impact is computed again with friction opposing
    ``u_t⁺ + e u_t⁻`` (energetically consistent for one ``e <= 1``), and if that
    still gains (restitutions differing per constraint), as a plastic impact
    with friction; ``note`` says which.
    """
    if law not in IMPACT_LAWS:
        raise InputError(f"`law` must be one of {', '.join(IMPACT_LAWS)}, got {law!r}")
    inertia = _Inertia(M)
    N = inertia.N
    G = _constraint_matrix(G, N, "G")
    n = G.shape[1]
    v_minus = _finite_array(v_minus, "v_minus")
    if v_minus.shape != (N,):
        raise InputError(f"`v_minus` must have shape ({N},), got {v_minus.shape}")
    e = _per_constraint(restitution, n, "restitution", upper=1.0)
    mu = np.zeros(n) if friction is None else _per_constraint(friction, n, "friction", None)
    if H is not None:
        H = _constraint_matrix(H, N, "H", n)
        H = H.toarray() if sp.issparse(H) else H
    elif np.any(mu > 0.0):
        raise InputError("`H` (tangential Jacobian) is required when `friction` is positive")
    if not (np.isfinite(tol) and tol > 0.0):
        raise InputError(f"`tol` must be a positive number, got {tol}")
    if max_stages is not None and max_stages < 1:
        raise InputError(f"`max_stages` must be >= 1, got {max_stages}")
    if not (np.isfinite(time_budget) and time_budget > 0.0):
        raise InputError(f"`time_budget` must be a positive number of seconds, got {time_budget}")

    args = (inertia, G, e, mu, H, tol, law, max_stages, time_budget)
    try:
        return _resolve(v_minus, *args)
    except SolverError:
        # A frictional impact at speeds of round-off size (a ball settling in a rough
        # corner, 1e-12 m/s) can fail Lemke's working-precision check only for its size;
        # every law is positively homogeneous in v⁻, so it is solved again at speeds
        # scaled by a power of two near 1 (exact), and the answer scaled back.
        u_size = float(np.max(np.abs(G.T @ v_minus), initial=0.0))
        if law == "sequential" or not np.any(mu > 0.0) or not 0.0 < u_size < TINY_SPEED:
            raise
    k = -math.frexp(u_size)[1]
    scaled = _resolve(math.ldexp(1.0, k) * v_minus, *args)
    return _scaled_back(scaled, k)


TINY_SPEED = 2.0**-20
"""Approach speeds (m/s) below which a frictional impact that fails is solved again scaled up."""


def _scaled_back(result: ImpactResult, k: int) -> ImpactResult:
    """``result`` of the speeds scaled by ``2^k``, in the original units (exact)."""

    def back(x: np.ndarray) -> np.ndarray:
        return np.ldexp(np.asarray(x, dtype=float), -k)

    stages = [
        ImpactStage(
            y=back(s.y), w=back(s.w), lam=back(s.lam), tangent_impulse=back(s.tangent_impulse)
        )
        for s in result.stages
    ]
    note = f"solved at speeds scaled by 2^{k} (it failed at speeds of round-off size)"
    return ImpactResult(
        v_plus=back(result.v_plus),
        impulse=back(result.impulse),
        stages=stages,
        energy_change=math.ldexp(result.energy_change, -2 * k),
        admissible=result.admissible,
        tangent_impulse=back(result.tangent_impulse),
        law=result.law,
        note=f"{result.note}; {note}" if result.note else note,
        gains_energy=result.gains_energy,
    )


def _resolve(
    v_minus: np.ndarray,
    inertia: _Inertia,
    G: object,
    e: np.ndarray,
    mu: np.ndarray,
    H: np.ndarray | None,
    tol: float,
    law: str,
    max_stages: int | None,
    time_budget: float,
) -> ImpactResult:
    """:func:`resolve_impact` on checked inputs."""
    n = e.size
    u_minus = np.asarray(G.T @ v_minus)
    scale = max(1.0, float(np.max(np.abs(u_minus), initial=0.0)))
    problem = _ImpactProblem(inertia=inertia, G=G, e=e, mu=mu, H=H, tol=tol * scale)

    stages: Sequence[ImpactStage]
    note = ""
    if law in ("staged", "poisson"):
        budget = _Budget(law, "stages", max_stages or MAX_STAGES, time_budget)
        v_plus, stages, impulse = _staged(problem, v_minus, budget, law == "poisson")
        tangent = sum((s.tangent_impulse for s in stages), np.zeros(n))
    elif law == "newton":
        budget = _Budget(law, "rounds", max_stages or MAX_ROUNDS, time_budget)
        v_plus, stages, note = _newton(problem, v_minus, budget)
        if problem.has_friction and _gains_energy(inertia, v_minus, v_plus):
            v_plus, stages, note = _dissipative_newton(problem, v_minus, budget, inertia)
        impulse = sum((s.lam for s in stages), np.zeros(n))
        tangent = sum((s.tangent_impulse for s in stages), np.zeros(n))
    else:
        budget = _Budget(law, "collisions", max_stages or max_collisions(n), time_budget)
        v_plus, stages, note = _sequential(problem, v_minus, budget)
        impulse, tangent = stages.totals(n)
    dv = v_plus - v_minus
    energy_change = 0.5 * float(dv @ inertia.times(v_plus + v_minus))
    gains = energy_change > ENERGY_GAIN_TOLERANCE * _kinetic(inertia, v_minus)
    return ImpactResult(
        v_plus=v_plus,
        impulse=impulse,
        stages=stages,
        energy_change=energy_change,
        admissible=not problem.approaching(v_plus),
        tangent_impulse=tangent,
        law=law,
        note=note,
        gains_energy=gains,
    )


ENERGY_GAIN_TOLERANCE = 1e-10
"""Relative gain of kinetic energy (of T⁻) under which an impact counts as not gaining."""


def _kinetic(inertia: _Inertia, v: np.ndarray) -> float:
    return 0.5 * float(v @ inertia.times(v))


def _gains_energy(inertia: _Inertia, v_minus: np.ndarray, v_plus: np.ndarray) -> bool:
    before = _kinetic(inertia, v_minus)
    return _kinetic(inertia, v_plus) - before > ENERGY_GAIN_TOLERANCE * before


def _dissipative_newton(
    problem: _ImpactProblem, v_minus: np.ndarray, budget: _Budget, inertia: _Inertia
) -> tuple[np.ndarray, list[ImpactStage], str]:
    """The ``newton`` law with friction in a form that cannot gain energy (see resolve_impact)."""
    v_plus, stages, _ = _newton(problem, v_minus, budget, consistent=True)
    if not _gains_energy(inertia, v_minus, v_plus):
        return (
            v_plus,
            stages,
            (
                "friction on u_t+ + e u_t- (energetically consistent form): with friction on "
                "u_t+ the coupled tangents gained energy"
            ),
        )
    plastic = _ImpactProblem(
        inertia=inertia,
        G=problem.G,
        e=np.zeros_like(problem.e),
        mu=problem.mu,
        H=problem.H,
        tol=problem.tol,
    )
    v_plus, stages, _ = _newton(plastic, v_minus, budget)
    return (
        v_plus,
        stages,
        (
            "plastic impact with friction: the newton law gained energy with these "
            "restitutions and coupled tangents"
        ),
    )
