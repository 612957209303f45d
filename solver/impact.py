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

import heapq
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.linalg import solve_triangular
from scipy.sparse.csgraph import reverse_cuthill_mckee

from solver.complementarity import (
    banded_lcp,
    least_distance,
    lemke,
    minimum_norm_nonnegative,
)
from solver.errors import InputError, SolverError

IMPACT_LAWS = ("staged", "poisson", "sequential", "newton")

TIE_TOLERANCE = 1e-12
"""Approach speeds closer than this (m/s) tie in the ``sequential`` law; the lowest index wins."""

_BANDED_MIN_SIZE = 16
"""Below this many constraints the dense least-distance route is used even for band matrices."""

TIME_BUDGET_S = 2.0
"""CPU time (s) one call of :func:`resolve_impact` may take before it gives up (SolverError).

The calling thread's CPU time (``time.thread_time``), not wall time: the same
call ends the same way on a busy machine as on an idle one.
"""
MAX_STAGES = 1000
"""Default bound on the stages of the ``staged`` law."""
MAX_ROUNDS = 200
"""Default bound on the rounds of the ``newton`` law."""


def max_collisions(n: int) -> int:
    """Default bound on the collisions of the ``sequential`` law for ``n`` constraints."""
    return 50_000 + 100 * n


class _Budget:
    """The bounds of one call: a count of stages (collisions, rounds) and a CPU-time deadline."""

    def __init__(self, law: str, unit: str, limit: int, seconds: float) -> None:
        self.law, self.unit, self.limit, self.seconds = law, unit, limit, seconds
        self._deadline = time.thread_time() + seconds

    def check(self, count: int, detail: str = "") -> None:
        """Raise :class:`SolverError` naming the bound when ``count`` or the deadline is past."""
        if count >= self.limit:
            bound = f"max_stages={self.limit} {self.unit}"
        elif time.thread_time() > self._deadline:
            bound = f"the time budget of {self.seconds:g} s ({count} {self.unit})"
        else:
            return
        raise SolverError(f"{self.law} impact did not end within {bound}{detail}")


@dataclass(frozen=True)
class ImpactStage:
    """One stage of an impact law (paper 000 (10)-(14)).

    ``y`` is the velocity at the start of the stage, ``w`` after its plastic
    phase (both in the generalized velocity layout, m/s or rad/s), ``lam``
    the plastic-phase normal impulses ``λ^(k)`` per constraint (N·s): the
    restitution phase adds ``e λ^(k)``. ``tangent_impulse`` is the friction
    impulse of the whole stage per constraint along ``+H`` (N·s).
    """

    y: np.ndarray
    w: np.ndarray
    lam: np.ndarray
    tangent_impulse: np.ndarray


@dataclass(frozen=True)
class ImpactResult:
    """The outcome of :func:`resolve_impact`.

    Attributes
    ----------
    v_plus : (N,) ndarray
        Velocity after the impact.
    impulse : (n,) ndarray
        Total normal impulse per constraint, N·s (>= 0).
    stages : sequence of ImpactStage
        One entry per stage (``staged``, ``poisson``), per single-constraint
        collision (``sequential``; a summed infinite tail is one entry), or one
        entry (``newton``).
    energy_change : float
        ``T⁺ − T⁻`` (J); <= 0 for every law without friction.
    admissible : bool
        Whether ``Gᵀv⁺ >= −tol`` holds (always for ``staged``, ``sequential``,
        ``newton``; ``poisson`` may fail it).
    tangent_impulse : (n,) ndarray
        Friction impulse per constraint along ``+H`` (N·s), ``−μ Σ Λ τ``;
        zeros without friction.
    law : str
        The law used.
    note : str
        What the law did beyond its plain form, in words (empty when nothing):
        an infinite tail summed in closed form, or the ``newton`` law's
        friction taken in its energetically consistent form.
    """

    v_plus: np.ndarray
    impulse: np.ndarray
    stages: Sequence[ImpactStage]
    energy_change: float
    admissible: bool
    tangent_impulse: np.ndarray
    law: str
    note: str = ""
    gains_energy: bool = False
    """``energy_change > ENERGY_GAIN_TOLERANCE · T⁻``: the impact gained kinetic energy
    beyond round-off (possible for ``staged`` and ``poisson`` with restitutions that
    differ per contact, docs/LIMITS.md)."""


# ---------------------------------------------------------------------------
# Input checking
# ---------------------------------------------------------------------------


def _finite_array(value: object, name: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise InputError(f"`{name}` must be numeric") from err
    if not np.all(np.isfinite(array)):
        raise InputError(f"`{name}` must be finite (no NaN or inf)")
    return array


def _constraint_matrix(value: object, N: int, name: str, n: int | None = None):
    if sp.issparse(value):
        matrix = sp.csc_array(value, dtype=float)
        if not np.all(np.isfinite(matrix.data)):
            raise InputError(f"`{name}` must be finite (no NaN or inf)")
    else:
        matrix = _finite_array(value, name)
        if matrix.ndim == 1 and N == matrix.shape[0]:
            matrix = matrix[:, None]
        if matrix.ndim != 2:
            raise InputError(f"`{name}` must be an N x n matrix, got shape {matrix.shape}")
    if matrix.shape[0] != N or (n is not None and matrix.shape[1] != n):
        expected = f"({N}, {'n' if n is None else n})"
        raise InputError(f"`{name}` must have shape {expected}, got {matrix.shape}")
    return matrix


def _per_constraint(value: object, n: int, name: str, upper: float | None) -> np.ndarray:
    array = _finite_array(value, name)
    if array.ndim == 0:
        array = np.full(n, float(array))
    if array.shape != (n,):
        raise InputError(f"`{name}` must be a scalar or have shape ({n},), got {array.shape}")
    if np.any(array < 0.0) or (upper is not None and np.any(array > upper)):
        bound = f"[0, {upper:g}]" if upper is not None else ">= 0"
        raise InputError(f"`{name}` must lie in {bound}, got {array}")
    return array


class _Inertia:
    """The mass matrix, dense (N, N) or diagonal (given as its diagonal, (N,))."""

    def __init__(self, M: object) -> None:
        if sp.issparse(M):
            M = sp.csr_array(M)
            off_diagonal = M - sp.diags_array(M.diagonal())
            M = M.diagonal() if off_diagonal.count_nonzero() == 0 else M.toarray()
        M = _finite_array(M, "M")
        if M.ndim == 1:
            if np.any(M <= 0.0):
                raise InputError("`M` given as a diagonal must have positive entries")
            self.diagonal: np.ndarray | None = M
            self.N = M.shape[0]
            return
        if M.ndim != 2 or M.shape[0] != M.shape[1]:
            raise InputError(f"`M` must be a square matrix, got shape {M.shape}")
        scale = float(np.max(np.abs(M), initial=0.0))
        if not np.allclose(M, M.T, rtol=0.0, atol=1e-12 * scale):
            raise InputError("`M` must be symmetric")
        try:
            self.factor = np.linalg.cholesky(M)
        except np.linalg.LinAlgError as err:
            raise InputError("`M` must be positive definite") from err
        self.diagonal = None
        self.matrix = M
        self.N = M.shape[0]

    def dense(self) -> np.ndarray:
        return np.diag(self.diagonal) if self.diagonal is not None else self.matrix

    def solve(self, X):
        """``M⁻¹ X`` for a vector, a dense or a sparse matrix."""
        if self.diagonal is not None:
            if sp.issparse(X):
                return sp.csc_array(sp.diags_array(1.0 / self.diagonal) @ X)
            return X / (self.diagonal[:, None] if np.ndim(X) == 2 else self.diagonal)
        if sp.issparse(X):
            X = X.toarray()
        L = self.factor
        return np.linalg.solve(L.T, np.linalg.solve(L, X))

    def times(self, v: np.ndarray) -> np.ndarray:
        return self.diagonal * v if self.diagonal is not None else self.matrix @ v


def _bandwidth(W) -> int:
    rows, cols = W.nonzero()
    return int(np.max(np.abs(rows - cols), initial=0))


def _band_form(W) -> tuple[np.ndarray, np.ndarray] | None:
    """A constraint order in which ``W`` is a band matrix, and ``W`` in that band storage.

    The constraints may come in any order (a wall listed after the bead gaps
    it closes off), so the order is the given one or the reverse
    Cuthill-McKee one, whichever has the smaller bandwidth. Returns
    ``(order, band)`` with ``band`` as :func:`banded_lcp` takes it for
    ``W[order][:, order]``, or ``None`` when even that is wider than an
    eighth of the constraints (the dense route is then cheaper).
    """
    W = sp.csr_array(W)
    n = W.shape[0]
    order = np.arange(n)
    b = _bandwidth(W)
    if b > 1:
        rcm = reverse_cuthill_mckee(W, symmetric_mode=True).astype(np.intp)
        permuted = W[rcm][:, rcm]
        b_rcm = _bandwidth(permuted)
        if b_rcm < b:
            order, b, W = rcm, b_rcm, permuted
    if b > max(1, n // 8):
        return None
    band = np.zeros((b + 1, n))
    for k in range(b + 1):
        band[b - k, k:] = W.diagonal(k)
    return order, band


# ---------------------------------------------------------------------------
# The mechanics of one impact problem
# ---------------------------------------------------------------------------


@dataclass
class _ImpactProblem:
    """Everything the laws share: M, G, H and their Delassus blocks."""

    inertia: _Inertia
    G: object
    e: np.ndarray
    mu: np.ndarray
    H: np.ndarray | None
    tol: float
    MinvG: object = field(init=False)
    W: object = field(init=False)
    band: np.ndarray | None = field(init=False, default=None)
    band_order: np.ndarray | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        if sp.issparse(self.G) and self.inertia.diagonal is None:
            self.G = self.G.toarray()
        self.MinvG = self.inertia.solve(self.G)
        W = self.G.T @ self.MinvG
        self.W = sp.csc_array(W) if sp.issparse(W) else W
        diagonal = self.W.diagonal()
        if np.any(diagonal <= 0.0):
            zero = int(np.flatnonzero(diagonal <= 0.0)[0])
            raise InputError(f"`G` column {zero} is zero: it constrains nothing")
        n = diagonal.size
        if n >= _BANDED_MIN_SIZE and not self.has_friction:
            band_form = _band_form(self.W)
            if band_form is not None:
                self.band_order, self.band = band_form
        if self.has_friction:
            self.G_dense = self.G.toarray() if sp.issparse(self.G) else self.G
            self.MinvG_dense = self.MinvG.toarray() if sp.issparse(self.MinvG) else self.MinvG
            self.MinvH = np.asarray(self.inertia.solve(self.H))
            self.W_dense = self.G_dense.T @ self.MinvG_dense
            self.Wnt = self.G_dense.T @ self.MinvH
            self.Wtt = self.H.T @ self.MinvH

    @property
    def has_friction(self) -> bool:
        return self.H is not None and bool(np.any(self.mu > 0.0))

    def speeds(self, v: np.ndarray) -> np.ndarray:
        return np.asarray(self.G.T @ v)

    def approaching(self, v: np.ndarray) -> bool:
        return bool(np.any(self.speeds(v) < -self.tol))

    def kick(self, impulse: np.ndarray) -> np.ndarray:
        """``M⁻¹ G impulse``: the velocity change of normal impulses (N·s)."""
        return np.asarray(self.MinvG @ impulse)

    # -- frictionless plastic phase -------------------------------------------------

    def plastic(self, y: np.ndarray, offset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Plastic phase ``min ½(z − y)ᵀM(z − y)``, ``Gᵀz + offset >= 0`` (paper 000 (8)).

        Returns ``(w, λ)``, ``λ`` the minimum-norm multipliers. Delassus
        matrices that are banded in some constraint order (chains) go through
        :func:`banded_lcp` in that order; if that route fails (a singular
        ``W``, e.g. a chain squeezed between two walls), the dense
        least-distance route answers.
        """
        if self.band is not None:
            order = self.band_order
            try:
                result = banded_lcp(self.band, (self.speeds(y) + offset)[order])
            except SolverError:
                result = None
            if result is not None and result.status == "solved":
                lam = np.zeros(order.size)
                lam[order] = result.z
                return y + self.kick(lam), lam
        G = self.G.toarray() if sp.issparse(self.G) else self.G
        w, lam = least_distance(self.inertia.dense(), G, y, lower=-offset)
        if lam.size == 1 and lam[0] > 0.0:
            # One constraint: read the impulse off the velocity jump, λ = gᵀM(w − y)/gᵀg,
            # so both agree to the last bit (a bead of mass m bouncing elastically off a
            # wall reports 2 m |v⁻| exactly, impact after impact).
            g = G[:, 0]
            lam = np.array([g @ self.inertia.times(w - y) / (g @ g)])
        return w, lam

    def plastic_on(
        self, y: np.ndarray, offset: np.ndarray, cols: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Plastic phase on the constraints ``cols`` only: ``(w, λ on cols)``."""
        if cols.size == self.e.size:
            return self.plastic(y, offset)
        G = self.G.toarray() if sp.issparse(self.G) else self.G
        return least_distance(self.inertia.dense(), G[:, cols], y, lower=-offset[cols])

    # -- phases with friction (paper 004 (31)-(35)) ---------------------------------

    def _solve_lcp(self, A: np.ndarray, q: np.ndarray, phase: str) -> np.ndarray:
        result = lemke(A, q)
        if result.status != "solved":
            raise SolverError(
                f"{phase} phase with friction: Lemke's method ended with "
                f"{result.status}; no consistent impulse found"
            )
        return result.z

    def plastic_with_friction(
        self,
        y: np.ndarray,
        offset: np.ndarray,
        cols: np.ndarray,
        tangent_offset: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Plastic phase with Routh friction on constraints ``cols``: ``(w, Λ̃, p_t)``.

        Friction opposes ``u_t⁺ + tangent_offset`` (``u_t⁺`` alone by default).
        """
        k = cols.size
        Wnn = self.W_dense[np.ix_(cols, cols)]
        Wnt = self.Wnt[np.ix_(cols, cols)]
        Wtt = self.Wtt[np.ix_(cols, cols)]
        eye, zero = np.eye(k), np.zeros((k, k))
        A = np.block(
            [
                [Wnn, Wnt, -Wnt, zero],
                [Wnt.T, Wtt, -Wtt, eye],
                [-Wnt.T, -Wtt, Wtt, eye],
                [np.diag(self.mu[cols]), -eye, -eye, zero],
            ]
        )
        u_t = self.H[:, cols].T @ y
        if tangent_offset is not None:
            u_t = u_t + tangent_offset[cols]
        q = np.concatenate([self.G_dense[:, cols].T @ y + offset[cols], u_t, -u_t, np.zeros(k)])
        x = self._solve_lcp(A, q, "plastic")
        lam, p_t = x[:k], x[k : 2 * k] - x[2 * k : 3 * k]
        w = y + self.MinvG_dense[:, cols] @ lam + self.MinvH[:, cols] @ p_t
        return w, lam, p_t

    def restitution_with_friction(
        self, w: np.ndarray, lam_star: np.ndarray, cols: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Restitution phase, normal impulse ``Λ* = eΛ̃`` given (paper 004 (35)): ``(v*, p_t*)``."""
        v_c = w + self.MinvG_dense[:, cols] @ lam_star
        bound = self.mu[cols] * lam_star
        slipping = np.flatnonzero(bound > 0.0)
        p_t = np.zeros(cols.size)
        if slipping.size == 0:
            return v_c, p_t
        # Unknowns in units of the friction bound (β = bound β'): the bound may be
        # tiny next to the slip speeds (e ≈ 0), and this keeps the pivots even.
        sub = cols[slipping]
        S = np.diag(bound[slipping])
        Wtt_S = self.Wtt[np.ix_(sub, sub)] @ S
        k = sub.size
        eye = np.eye(k)
        A = np.block([[Wtt_S, -Wtt_S, eye], [-Wtt_S, Wtt_S, eye], [-eye, -eye, np.zeros((k, k))]])
        u_t = self.H[:, sub].T @ v_c
        x = self._solve_lcp(A, np.concatenate([u_t, -u_t, np.ones(k)]), "restitution")
        p_t[slipping] = bound[slipping] * (x[:k] - x[k : 2 * k])
        return v_c + self.MinvH[:, cols] @ p_t, p_t

    def poisson_stage(self, y: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, ImpactStage]:
        """One plastic + restitution stage on ``cols``: ``(y_next, stage record)``."""
        n = self.e.size
        lam = np.zeros(n)
        tangent = np.zeros(n)
        if self.has_friction:
            w, lam_c, p_plastic = self.plastic_with_friction(y, np.zeros(n), cols)
            y_next, p_restitution = self.restitution_with_friction(w, self.e[cols] * lam_c, cols)
            lam[cols] = lam_c
            tangent[cols] = p_plastic + p_restitution
        elif cols.size == n:
            w, lam = self.plastic(y, np.zeros(n))
            y_next = self.release(y, w, lam)
        else:
            w, lam_c = self.plastic_single(y, int(cols[0]))
            lam[cols] = lam_c
            y_next = w + self.kick(self.e * lam)
        return y_next, ImpactStage(y=y, w=w, lam=lam, tangent_impulse=tangent)

    def release(self, y: np.ndarray, w: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """Restitution phase without friction: ``w + M⁻¹G(eλ)`` (m/s).

        When the constraints that took an impulse share one ``e``, this is
        ``w + e(w − y)`` (``M(w − y) = Gλ``): no second solve with ``M``, so no
        round-off of order ``cond(M)``, and for ``e = 1`` the stage is an exact
        reflection about ``w`` (a bead bouncing off a wall leaves with ``−v⁻``).
        """
        e_active = self.e[lam > 0.0]
        if e_active.size and np.ptp(e_active) == 0.0:
            return w + e_active[0] * (w - y)
        return w + self.kick(self.e * lam)

    def plastic_single(self, y: np.ndarray, i: int) -> tuple[np.ndarray, float]:
        """Plastic collision on constraint ``i`` alone: effective mass ``1/(G_iᵀM⁻¹G_i)``."""
        u_i = float(self.speeds(y)[i])
        lam_i = max(0.0, -u_i / float(self.W.diagonal()[i]))
        impulse = np.zeros(self.e.size)
        impulse[i] = lam_i
        return y + self.kick(impulse), lam_i


# ---------------------------------------------------------------------------
# The laws
# ---------------------------------------------------------------------------


def _staged(
    problem: _ImpactProblem, v_minus: np.ndarray, budget: _Budget, single_stage: bool
) -> tuple[np.ndarray, list[ImpactStage], np.ndarray]:
    """Stages of paper 000 (9)-(14) until no constraint approaches.

    Theorem 2 of paper 000 assumes ``rank G = n``. With dependent columns (a
    bead clamped between two walls) the stages can go on forever: if a stage
    ends at the same plastic velocity ``w`` as the one before, both ``d = y_k − w``
    and ``−e d`` lie in the normal cone of ``{Gᵀz >= 0}`` at ``w``, so every
    later stage is ``y = w + (−e)^j d`` with the same ``w`` (when the active
    constraints share one ``e``). For ``e < 1`` the limit is ``w``; the
    impulses reported are then the minimum-norm nonnegative ones with
    ``GΛ = M(w − v⁻)`` (the split among dependent constraints is not unique).
    For ``e = 1`` the velocity oscillates without limit and
    :class:`SolverError` says so.

    Returns the final velocity, the stage records and the normal impulse
    per constraint ``(1 + e) Σ λ^(k)`` (N·s).
    """
    all_cols = np.arange(problem.e.size)
    y = v_minus
    stages: list[ImpactStage] = []
    while problem.approaching(y):
        if single_stage and stages:
            break
        budget.check(len(stages), f" (largest approach speed {-problem.speeds(y).min():.3g} m/s)")
        y_next, stage = problem.poisson_stage(y, all_cols)
        previous = stages[-1] if stages else None
        stages.append(stage)
        if (
            previous is not None
            and not problem.has_friction
            and _self_similar(problem, previous, stage)
        ):
            if np.all(problem.e[previous.lam > 0.0] >= 1.0):
                raise SolverError(
                    "staged impact with restitution 1 on dependent constraints does not "
                    "converge: the velocity oscillates between stages (paper 000, Theorem 2 "
                    "needs rank G = n)"
                )
            W = problem.W.toarray() if sp.issparse(problem.W) else problem.W
            impulse = minimum_norm_nonnegative(W, problem.speeds(stage.w - v_minus))
            return stage.w, stages, impulse
        y = y_next
    return y, stages, sum(((1.0 + problem.e) * s.lam for s in stages), np.zeros(problem.e.size))


def _self_similar(problem: _ImpactProblem, previous: ImpactStage, stage: ImpactStage) -> bool:
    """Whether two consecutive stages end at the same ``w`` with one shared ``e``."""
    active = (previous.lam > 0.0) | (stage.lam > 0.0)
    if np.any(active) and np.ptp(problem.e[active]) > 0.0:
        return False
    scale = max(float(np.max(np.abs(previous.y))), np.finfo(float).tiny)
    return bool(np.max(np.abs(stage.w - previous.w)) <= 1e-12 * scale)


def _newton(
    problem: _ImpactProblem, v_minus: np.ndarray, budget: _Budget, consistent: bool = False
) -> tuple[np.ndarray, list[ImpactStage], str]:
    """Moreau's law ``0 <= Λ ⊥ u_n⁺ + e u_n⁻ >= 0``, repeated until admissible.

    Each round applies the law to the constraints that are not separating
    (``u_n <= tol``): for those ``u_n⁺ >= −e u_n⁻ >= 0``, and the energy change
    ``½ Σ Λ_i (1 − e_i) u_n,i⁻`` is never positive. A constraint that was
    separating and is made to approach by the others' impulses is taken in
    the next round (a round is reported as a stage). When every closed
    constraint approaches or rests — the case Siconos' event-driven scheme
    sees — this is one round of MECHANICS §3's law exactly. Applying the law to a
    separating constraint as well would let it end up approaching
    (``u⁺ = −e u⁻ < 0``) and could gain energy (paper 000 ex. 2 gains
    0.042 J that way), so separating constraints are left out.

    Without friction, rounds that take turns on a few nearly parallel
    constraints are relaxed M-projections (factor ``1 + e``) like the
    ``sequential`` law's collisions, and converge geometrically to the
    projection onto ``{G_Sᵀv = 0}``; such an infinite tail is summed in
    closed form (:func:`_tail_impulse`) instead of followed round by round.

    With ``consistent``, friction opposes ``ξ_t = u_t⁺ + e u_t⁻`` instead of
    ``u_t⁺`` (Glocker's energetically consistent Newton–Coulomb law): with
    one ``e <= 1`` for all constraints, ``T⁺ − T⁻ = P·ξ/(1 + e) −
    (1 − e)/(2(1 + e)) PᵀM⁻¹P`` with ``P·ξ = Σ Λ ξ_n + p_t ξ_t <= 0``, so no
    round gains energy whatever the coupling of tangents and normals.

    Returns the final velocity, the rounds and a note (the summed tail).
    """
    n = problem.e.size
    stages: list[ImpactStage] = []
    history: list[int] = []
    pattern: list[tuple[np.ndarray, np.ndarray]] = []
    next_tail_check = 8
    next_stall_check = STALL_ROUNDS
    skipped_rounds = 0
    rounds_before = 0
    note = ""
    y = v_minus
    while problem.approaching(y):
        # the bound counts the rounds since the last repeating pattern followed in closed form
        budget.check(len(stages) - rounds_before, "; no admissible velocity reached")
        u = problem.speeds(y)
        cols = np.flatnonzero(u <= problem.tol)
        offset = np.zeros(n)
        offset[cols] = problem.e[cols] * np.minimum(u[cols], 0.0)
        lam = np.zeros(n)
        p_t = np.zeros(n)
        if problem.has_friction:
            tangent_offset = None
            if consistent:
                tangent_offset = np.zeros(n)
                tangent_offset[cols] = problem.e[cols] * (problem.H[:, cols].T @ y)
            w, lam[cols], p_t[cols] = problem.plastic_with_friction(y, offset, cols, tangent_offset)
        else:
            # separating constraints get no bound: the least-distance problem on cols only
            w, lam_cols = problem.plastic_on(y, offset, cols)
            lam[cols] = lam_cols
        stages.append(ImpactStage(y=y, w=w, lam=lam, tangent_impulse=p_t))
        y = w
        if problem.has_friction:
            continue
        pattern.append((cols, np.flatnonzero(lam > 0.0)))
        if len(pattern) >= next_stall_check:
            next_stall_check = len(pattern) + STALL_ROUNDS
            jump = _periodic_rounds(problem, y, pattern, budget, len(stages) - rounds_before)
            if jump is not None:
                w, impulse, skipped, period = jump
                stages.append(ImpactStage(y=y, w=w, lam=impulse, tangent_impulse=np.zeros(n)))
                skipped_rounds += skipped
                note = (
                    f"{skipped_rounds} rounds repeating with a period of {period} "
                    "followed in closed form"
                )
                pattern.clear()
                next_stall_check = STALL_ROUNDS
                rounds_before = len(stages)
                y = w
                continue
        history += np.flatnonzero(lam > 0.0).tolist()
        if len(stages) >= next_tail_check:
            next_tail_check = int(1.25 * next_tail_check) + 1
            tail = _tail_impulse(problem, problem.speeds(y), history)
            if tail is not None:
                S, impulse = tail
                lam = np.zeros(n)
                lam[S] = impulse
                w = y + _column_combination(problem.MinvG, S, impulse)
                stages.append(ImpactStage(y=y, w=w, lam=lam, tangent_impulse=np.zeros(n)))
                note = (
                    f"an infinite tail of rounds on constraints {S.tolist()} summed in "
                    f"closed form after {len(stages) - 1} rounds"
                )
                y = w
    return y, stages, note


STALL_ROUNDS = 8
"""Rounds of the ``newton`` law after which a repeating pattern is sought."""
_MAX_PERIOD = 4
"""Longest repeating pattern of rounds (active sets) followed in closed form."""
_BLOCK = 512
"""Periods checked at once when repeating rounds are followed in closed form."""
_DENSE_LIMIT = 4_000_000
"""Largest ``N · max(n, N)`` for which repeating rounds are followed in closed form (dense)."""


def _period(pattern: list[tuple[np.ndarray, np.ndarray]]) -> int:
    """The shortest period ``p <= _MAX_PERIOD`` the last ``4p`` rounds repeat with, else 0.

    Rounds are compared by the constraints they were solved on and those
    that took an impulse.
    """
    for p in range(1, _MAX_PERIOD + 1):
        if len(pattern) < 4 * p:
            break
        recent = pattern[-4 * p :]
        if all(
            np.array_equal(recent[k][0], recent[k + p][0])
            and np.array_equal(recent[k][1], recent[k + p][1])
            for k in range(3 * p)
        ):
            return p
    return 0


def _periodic_rounds(
    problem: _ImpactProblem,
    y: np.ndarray,
    pattern: list[tuple[np.ndarray, np.ndarray]],
    budget: _Budget,
    rounds_so_far: int,
) -> tuple[np.ndarray, np.ndarray, int, int] | None:
    """Follow newton rounds that repeat a pattern in closed form, as far as it holds.

    A round solved on the constraints ``C`` (``u_C <= tol``) in which exactly
    ``A ⊆ C`` take an impulse, all with ``u_A <= 0``, is linear:
    ``u_A⁺ = −e_A u_A``. In the coordinates ``x = Lᵀv`` (``M = LLᵀ``, so the
    kinetic energy is ``½‖x‖²`` and ``u = Bᵀx`` with ``B = L⁻¹G``) it is
    ``x ← x − Q R⁻ᵀ (1 + e_A) Rᵀ Qᵀ x`` with ``B_A = QR``: for one ``e`` on
    ``A`` a reflection (``e = 1``) or a contraction, orthogonal up to
    round-off whatever ``cond W``, so thousands of rounds lose no energy to
    round-off. While the rounds repeat a period of such rounds, ``p`` of them
    are one matrix ``P`` on the span of ``B_S`` (``S`` the constraints taking
    impulses), with the impulses carried along, and ``k`` periods are ``P^k``.
    Ill-conditioned problems with ``e`` at or near 1 take turns that way for
    thousands of rounds (two nearly parallel constraints, ``cond W = 1e7``: a
    billiard in a wedge of angle ``~1/√cond``) before they separate. The
    periods are checked in blocks, each round of each against the conditions
    that make the solver's round this linear one (the same ``C``, something
    approaching, ``u_A <= 0``, ``Λ_A >= 0``, ``u⁺ + e min(u⁻, 0) >= −tol`` on
    ``C`` without ``A``); the jump stops at the start of the first period that
    fails one, and the rounds go on from there as usual.

    When the period shrinks the speeds monotonically in the end (its largest
    eigenvalue real, positive, below 1), rounds that would take ``1e8``
    periods to end (``cond W = 1e9``, ``e = 0.05``) are skipped by galloping
    (see ``gallop``) before the dense check.

    Returns ``(w, Λ, rounds skipped, period)``, or ``None`` when the last
    rounds repeat no pattern, the problem is too large for dense factors, or
    not even one period holds.
    """
    period = _period(pattern)
    if period == 0:
        return None
    rounds = pattern[-period:]
    S = np.unique(np.concatenate([active for _cols, active in rounds]))
    s, n, N = S.size, problem.e.size, problem.inertia.N
    if s == 0 or N * max(n, N) > _DENSE_LIMIT:
        return None
    G = problem.G.toarray() if sp.issparse(problem.G) else np.asarray(problem.G)
    L = np.linalg.cholesky(problem.inertia.dense())
    B = solve_triangular(L, G, lower=True)  # u = Bᵀx, x = Lᵀv
    if s > N:
        return None
    Q_S, R_S = np.linalg.qr(B[:, S])
    if np.min(np.abs(np.diag(R_S))) <= 1e-12 * np.max(np.abs(R_S)):
        return None  # dependent constraints: the impulse split is the rounds' own
    x_hat = L.T @ y
    c0 = Q_S.T @ x_hat
    x_perp = x_hat - Q_S @ c0  # untouched by the rounds
    C = B.T @ Q_S  # u = u_perp + C c
    u_perp = B.T @ x_perp
    position = {int(j): k for k, j in enumerate(S)}
    maps, gains, masks = [], [], []
    for cols, active in rounds:
        at = [position[int(j)] for j in active]
        Q, R = np.linalg.qr(C[active].T)  # C_A = Q_Sᵀ B_A (s, |A|) = Q R
        D = 1.0 + problem.e[active]
        K = np.zeros((s, s))  # Λ_S = K c
        K[at] = -solve_triangular(R, D[:, None] * Q.T, lower=False)
        if np.ptp(D) == 0.0:
            T = np.eye(s) - D[0] * (Q @ Q.T)
        else:
            T = np.eye(s) - Q @ solve_triangular(R, D[:, None] * R.T, trans="T") @ Q.T
        step = np.eye(2 * s)
        step[:s, :s] = T
        step[s:, :s] = K
        maps.append(step)
        gains.append(K)
        in_cols = np.zeros(n, dtype=bool)
        in_cols[cols] = True
        masks.append((in_cols, active, np.setdiff1d(cols, active)))
    P = np.eye(2 * s)
    for step in maps:
        P = step @ P
    powers = np.empty((_BLOCK, 2 * s, 2 * s))
    powers[0] = np.eye(2 * s)
    for k in range(1, _BLOCK):
        powers[k] = P @ powers[k - 1]
    P_block = P @ powers[-1]
    tol = problem.tol
    z = np.concatenate([c0, np.zeros(s)])  # (c, Λ_S)
    # A period whose largest eigenvalue is real, positive and below 1 shrinks the
    # speeds monotonically in the end (no turning): they may be followed by galloping.
    eigenvalues = np.linalg.eigvals(P[:s, :s])
    dominant = eigenvalues[np.argmax(np.abs(eigenvalues))]
    monotone = bool(dominant.imag == 0.0 and 0.0 < dominant.real < 1.0)

    def holds(Z: np.ndarray) -> np.ndarray:
        """For each state (row of Z) at the start of a period: whether all its rounds are linear."""
        valid = np.ones(Z.shape[0], dtype=bool)
        state = Z
        for step, K, (in_cols, active, resting) in zip(maps, gains, masks, strict=True):
            u = u_perp + state[:, :s] @ C.T  # the speeds before this round
            lam = state[:, :s] @ K.T
            u_plus = u + (state[:, :s] @ step[:s, :s].T - state[:, :s]) @ C.T
            valid &= np.all((u <= tol) == in_cols, axis=1)
            valid &= np.any(u < -tol, axis=1)
            valid &= np.all(u[:, active] <= 0.0, axis=1)
            valid &= np.all(lam >= 0.0, axis=1)
            if resting.size:
                bound = problem.e[resting] * np.minimum(u[:, resting], 0.0)
                valid &= np.all(u_plus[:, resting] + bound >= -tol, axis=1)
            state = state @ step.T
        return valid

    def gallop(z: np.ndarray) -> int:
        """Periods that may be skipped from ``z`` in a slowly, monotonically shrinking pattern.

        The speeds are then sums of geometric terms in the period count, the
        slowest real and positive; the rounds are checked at ``2^j`` block
        lengths until one fails (at the latest when nothing approaches any
        more), and the failure is located by bisection between the last two
        checks. The dense check of the next block finds the exact period.
        """
        k = _BLOCK
        while k < 2**60 and holds((np.linalg.matrix_power(P, k) @ z)[None, :])[0]:
            k *= 2
        lo, hi = k // 2, k
        while hi - lo > _BLOCK:
            mid = (lo + hi) // 2
            if holds((np.linalg.matrix_power(P, mid) @ z)[None, :])[0]:
                lo = mid
            else:
                hi = mid
        return max(lo - _BLOCK, 0)

    done = 0
    while True:
        budget.check(rounds_so_far, "; no admissible velocity reached")
        Z = powers @ z  # (B, 2s): the state at the start of each period of the block
        valid = holds(Z)
        failed = np.flatnonzero(~valid)
        if failed.size:
            held = int(failed[0])
            z = Z[held]
            done += held
            break
        z = P_block @ z
        done += _BLOCK
        if monotone:
            skip = gallop(z)
            z = np.linalg.matrix_power(P, skip) @ z
            done += skip
    if done == 0:
        return None
    impulse = np.zeros(n)
    impulse[S] = z[s:]
    w = solve_triangular(L.T, x_perp + Q_S @ z[:s], lower=False)
    return w, impulse, done * period, period


class _Collisions(Sequence[ImpactStage]):
    """Stage records of the ``sequential`` law, rebuilt on demand.

    A long chain has as many collisions as beads; storing two velocity
    vectors per collision would take O(N²) memory, so the records keep only
    which constraints took which impulses and replay them when read: a
    collision with friction as ``(cols, λ, total, tangential)`` arrays
    (:meth:`append`), a frictionless one of :func:`_sequential_sparse` as the
    three numbers ``(i, λ_i, total)``.
    """

    def __init__(self, problem: _ImpactProblem, v_minus: np.ndarray) -> None:
        self._problem = problem
        self._v_minus = v_minus
        self._steps: list[tuple] = []
        self._cursor = (0, v_minus)

    def append(
        self, cols: np.ndarray, lam: np.ndarray, total: np.ndarray, tangent: np.ndarray
    ) -> None:
        self._steps.append((cols, lam, total, tangent))

    def _step(self, j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Collision ``j`` as ``(cols, λ, total impulse, tangential impulse)`` arrays."""
        step = self._steps[j]
        if len(step) == 3:
            i, lam, total = step
            return np.array([i]), np.array([lam]), np.array([total]), np.zeros(1)
        return step

    def __len__(self) -> int:
        return len(self._steps)

    def last_impulses(self, S: np.ndarray) -> dict[int, tuple[float, float]]:
        """Normal and tangential impulse (N·s) of the last collision on each constraint of ``S``."""
        wanted = set(S.tolist())
        last: dict[int, tuple[float, float]] = {}
        for j in range(len(self._steps) - 1, -1, -1):
            cols, _, total, tangent = self._step(j)
            for c, lam_c, p_c in zip(cols.tolist(), total, tangent, strict=True):
                if c in wanted:
                    last.setdefault(c, (float(lam_c), float(p_c)))
            if len(last) == len(wanted):
                break
        return last

    def totals(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Summed normal and tangential impulse per constraint (N·s)."""
        if all(len(step) == 3 for step in self._steps):
            # frictionless collisions only: summed in Python floats, in order (the same sums)
            summed = [0.0] * n
            for i, _, total in self._steps:
                summed[i] += total
            return np.array(summed, dtype=float).reshape(n), np.zeros(n)
        impulse, tangent = np.zeros(n), np.zeros(n)
        for step in self._steps:
            if len(step) == 3:
                i, _, total = step
                impulse[i] += total
                continue
            cols, _, total, p_t = step
            impulse[cols] += total
            tangent[cols] += p_t
        return impulse, tangent

    def _velocity_before(self, k: int) -> np.ndarray:
        start, v = self._cursor if self._cursor[0] <= k else (0, self._v_minus)
        for j in range(start, k):
            v = self._advance(v, j)
        self._cursor = (k, v)
        return v

    def _advance(self, v: np.ndarray, j: int) -> np.ndarray:
        cols, _, total, tangent = self._step(j)
        p = self._problem
        v = v + _column_combination(p.MinvG, cols, total)
        if p.has_friction:
            v = v + p.MinvH[:, cols] @ tangent
        return v

    def __getitem__(self, k):  # type: ignore[override]
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError("stage index out of range")
        cols, lam, _, tangent = self._step(k)
        n = self._problem.e.size
        y = self._velocity_before(k)
        lam_full = np.zeros(n)
        lam_full[cols] = lam
        tangent_full = np.zeros(n)
        tangent_full[cols] = tangent
        w = y + _column_combination(self._problem.MinvG, cols, lam)
        return ImpactStage(y=y, w=w, lam=lam_full, tangent_impulse=tangent_full)


def _column_combination(matrix, cols: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``matrix[:, cols] @ weights`` for a dense or CSC matrix, touching only those columns."""
    if sp.issparse(matrix):
        out = np.zeros(matrix.shape[0])
        for c, weight in zip(cols, weights, strict=True):
            lo, hi = matrix.indptr[c], matrix.indptr[c + 1]
            out[matrix.indices[lo:hi]] += weight * matrix.data[lo:hi]
        return out
    return matrix[:, cols] @ weights


def _sequential(
    problem: _ImpactProblem, v_minus: np.ndarray, budget: _Budget
) -> tuple[np.ndarray, _Collisions, str]:
    """One constraint at a time, most negative approach speed first.

    Ties (speeds within :data:`TIE_TOLERANCE`) go to the lowest index. Without
    friction a collision on ``i`` is Newton's law ``u_i⁺ = −e_i u_i⁻`` with the
    effective mass ``1/W_ii``; speeds are updated through the column ``W[:, i]``
    only, so a chain costs O(n) per collision.

    With ``e < 1`` the sequence can be infinite (a touching cradle). Whenever
    the number of collisions grows by a quarter, those hit in the latter half,
    ``S``, are tried as the set of an infinite tail: each collision is then a
    relaxed M-projection (factor ``1 + e``) onto ``G_iᵀv = 0``, and such a
    product converges to the M-projection of ``v`` onto ``{G_Sᵀv = 0}``. The
    tail's impulse solves ``W_SS Λ = −u_S``, ``Λ >= 0``, unique when
    ``G_S`` has full column rank. The jump is taken only then, if ``Λ >= 0``
    and no other constraint approaches at the limit, so it equals the
    infinite sequence; otherwise the collisions go on (a rank-deficient tail,
    say a bead jammed between walls, has many impulse splits with the same
    limit velocity; only the collisions themselves give the law's).

    With friction each collision is a Poisson stage with Routh friction
    (two LCPs), and tails of tens of thousands of collisions are summed the
    same way with each constraint's friction mode held (:func:`_friction_tail`).

    Returns the final velocity, the collisions and a note naming a summed tail.
    """
    n = problem.e.size
    if n and not problem.has_friction and _canonical(problem.W) and _canonical(problem.MinvG):
        return _sequential_sparse(problem, v_minus, budget)
    v = v_minus.copy()
    u = problem.speeds(v)
    diagonal = problem.W.diagonal()
    W_columns = problem.W if sp.issparse(problem.W) else np.asarray(problem.W)
    collisions = _Collisions(problem, v_minus)
    history: list[int] = []
    next_tail_check = 16
    summed: list[str] = []
    while True:
        u_min = float(u.min()) if n else 0.0
        if u_min >= -problem.tol:
            u = problem.speeds(v)  # the speeds were updated incrementally: check afresh
            u_min = float(u.min()) if n else 0.0
            if u_min >= -problem.tol:
                break
        budget.check(len(collisions), f" (largest approach speed {-u_min:.3g} m/s)")
        i = int(np.argmax(u <= u_min + TIE_TOLERANCE))
        cols = np.array([i])
        if problem.has_friction:
            y_next, stage = problem.poisson_stage(v, cols)
            lam_c = stage.lam[cols]
            collisions.append(
                cols, lam_c, (1.0 + problem.e[cols]) * lam_c, stage.tangent_impulse[cols]
            )
            v = y_next
            u = problem.speeds(v)
            history.append(i)
            if len(history) >= next_tail_check:
                next_tail_check = int(1.25 * next_tail_check) + 1
                jumped = _friction_tail(problem, v, u, history, collisions)
                if jumped is not None:
                    v, u = jumped
                    summed.append(len(collisions) - 1)
        else:
            lam_i = -u[i] / diagonal[i]
            total = np.array([(1.0 + problem.e[i]) * lam_i])
            collisions.append(cols, np.array([lam_i]), total, np.zeros(1))
            v += _column_combination(problem.MinvG, cols, total)
            u += _column_combination(W_columns, cols, total)
            history.append(i)
            if len(history) >= next_tail_check:
                next_tail_check = int(1.25 * next_tail_check) + 1
                jumped = _sum_infinite_tail(problem, v, u, history, collisions)
                if jumped is not None:
                    v, u = jumped
                    summed.append(len(collisions) - 1)
    note = ""
    if summed:
        note = f"infinite tails of collisions summed in closed form at collisions {summed}"
    return v, collisions, note


def _canonical(matrix) -> bool:
    """Whether ``matrix`` is a CSC matrix with sorted, distinct row indices per column."""
    return sp.issparse(matrix) and matrix.format == "csc" and bool(matrix.has_canonical_format)


_TIME_CHECK_EVERY = 64
"""Collisions between two looks at the CPU-time budget in :func:`_sequential_sparse`."""


def _sequential_sparse(
    problem: _ImpactProblem, v_minus: np.ndarray, budget: _Budget
) -> tuple[np.ndarray, _Collisions, str]:
    """:func:`_sequential` without friction on sparse ``W`` and ``M⁻¹G``: the same collisions.

    A long chain takes as many collisions as it has beads, each touching a
    few coordinates: here a collision costs what its columns hold, not
    O(N). The speeds and velocities are Python floats updated entry by entry
    where the column has entries (the same two roundings per entry as
    :func:`_column_combination`), and the most negative speed comes from a
    heap of ``(u_i, i)`` (stale entries dropped when they surface). Ties
    within :data:`TIE_TOLERANCE` of the minimum go to the lowest index, as
    in :func:`_sequential`. The collisions are the dense loop's, in its order,
    and the velocities equal to round-off (a velocity that comes out as
    ``-0.0`` there is ``+0.0``, as there); at a tolerance far below round-off
    (1e-15) an infinite tail of collisions can part from the dense loop's by
    round-off, and with it whether the stage limit is reached.
    """
    g_ptr, g_rows, g_vals = (
        problem.MinvG.indptr.tolist(),
        problem.MinvG.indices.tolist(),
        problem.MinvG.data.tolist(),
    )
    w_ptr, w_rows, w_vals = (
        problem.W.indptr.tolist(),
        problem.W.indices.tolist(),
        problem.W.data.tolist(),
    )
    diagonal = problem.W.diagonal().tolist()
    restitution = problem.e.tolist()
    # an infinite tail needs e < 1 on each of its constraints (_tail_set)
    tails = any(e_k < 1.0 for e_k in restitution)
    tol = problem.tol
    # a speed above this can be neither the most negative one (< -tol) nor tie with it
    # (u_k <= u_min + TIE_TOLERANCE, rounded, for some u_min < -tol: rounding is monotone):
    # it stays off the heap (a struck chain's resting and separating pairs), and a
    # changed speed is pushed only if it is at most this
    listed = float(np.nextafter(-tol, -np.inf)) + TIE_TOLERANCE
    v = v_minus.tolist()
    u = problem.speeds(v_minus).tolist()
    heap = _speed_heap(u, listed)
    push, pop = heapq.heappush, heapq.heappop
    collisions = _Collisions(problem, v_minus)
    # a frictionless collision on constraint i is three numbers, (i, λ_i, total impulse),
    # appended in this loop (a chain has one per bead)
    steps = collisions._steps
    history: list[int] = []
    next_tail_check = 16
    summed: list[str] = []
    count = 0
    while True:
        while heap and heap[0][0] != u[heap[0][1]]:
            pop(heap)  # a speed that has changed since
        u_min = heap[0][0] if heap else math.inf
        if u_min >= -tol:
            # check afresh, as _sequential does
            u = problem.speeds(_array(v, count)).tolist()
            heap = _speed_heap(u, listed)
            u_min = heap[0][0] if heap else math.inf
            if u_min >= -tol:
                break
        if count >= budget.limit or count % _TIME_CHECK_EVERY == 0:
            budget.check(count, f" (largest approach speed {-u_min:.3g} m/s)")
        i = pop(heap)[1]
        while heap and heap[0][0] != u[heap[0][1]]:
            pop(heap)
        if heap and heap[0][0] <= u_min + TIE_TOLERANCE:
            # a tie: index: speed, one entry each (a speed that comes back is pushed again)
            tied = {i: u_min}
            while heap and heap[0][0] <= u_min + TIE_TOLERANCE:
                u_k, k = pop(heap)
                if u_k == u[k]:
                    tied[k] = u_k
            for k, u_k in tied.items():
                push(heap, (u_k, k))
            i = min(tied)
        # else the entry of i, popped, is not pushed back: the collision changes u_i
        # (W_ii > 0), which is pushed anew below
        lam_i = -u[i] / diagonal[i]
        total = (1.0 + restitution[i]) * lam_i
        steps.append((i, lam_i, total))
        count += 1
        for r in range(g_ptr[i], g_ptr[i + 1]):
            v[g_rows[r]] += total * g_vals[r]
        for r in range(w_ptr[i], w_ptr[i + 1]):
            k = w_rows[r]
            u[k] += total * w_vals[r]
            if u[k] <= listed:
                push(heap, (u[k], k))
        if not tails:
            continue
        history.append(i)
        if len(history) >= next_tail_check:
            next_tail_check = int(1.25 * next_tail_check) + 1
            jumped = None
            if _tail_set(problem, history) is not None:
                jumped = _sum_infinite_tail(
                    problem, _array(v, count), _array(u, count), history, collisions
                )
            if jumped is not None:
                v, u = jumped[0].tolist(), jumped[1].tolist()
                heap = _speed_heap(u, listed)
                summed.append(len(collisions) - 1)
                count = len(collisions)
    note = ""
    if summed:
        note = f"infinite tails of collisions summed in closed form at collisions {summed}"
    return _array(v, count), collisions, note


def _speed_heap(u: list[float], listed: float) -> list[tuple[float, int]]:
    """A heap of ``(u_k, k)`` for the speeds ``u`` (m/s) at most ``listed``."""
    heap = [(u_k, k) for k, u_k in enumerate(u) if u_k <= listed]
    heapq.heapify(heap)
    return heap


def _array(values: list[float], collisions: int) -> np.ndarray:
    """``values`` as an array; after a collision with ``-0.0`` written ``+0.0``.

    :func:`_sequential` adds a whole column vector at each collision, which
    turns every ``-0.0`` into ``+0.0``; the entry-wise updates do not.
    """
    array = np.array(values, dtype=float)
    if collisions:
        array += 0.0
    return array


def _tail_set(problem: _ImpactProblem, history: list[int]) -> np.ndarray | None:
    """The constraints of a possible infinite tail: hit in the latter half of ``history``.

    ``None`` unless each was hit there at least twice and has ``e < 1``.
    """
    recent = np.asarray(history[len(history) // 2 :])
    S, counts = np.unique(recent, return_counts=True)
    if S.size == 0 or np.any(counts < 2) or np.any(problem.e[S] >= 1.0):
        return None
    return S


def _tail_impulse(
    problem: _ImpactProblem, u: np.ndarray, history: list[int]
) -> tuple[np.ndarray, np.ndarray] | None:
    """The impulse of an infinite converging tail, if the recent history is one.

    ``history`` lists the constraints hit, oldest first (a collision each, or
    those a round pushed). Those hit in its latter half, ``S``, each at least
    twice and with ``e < 1``, are tried as the tail's set: its impulse solves
    ``W_SS Λ = −u_S``, ``Λ >= 0`` (the M-projection onto ``{G_Sᵀv = 0}``). It
    is taken only when ``G_S`` has full column rank, ``Λ >= 0`` and no other
    constraint approaches at the limit. Returns ``(S, Λ)`` or ``None``.
    """
    S = _tail_set(problem, history)
    if S is None:
        return None
    W = problem.W
    W_SS = W[np.ix_(S, S)].toarray() if sp.issparse(W) else W[np.ix_(S, S)]
    if np.linalg.matrix_rank(W_SS) < S.size:
        # Dependent constraints (a bead jammed between walls): the limit velocity
        # is still the projection, but many impulse splits reach it, and only the
        # sum over the actual collisions is the law's answer. Their order need not
        # repeat (it changes as the speeds shrink), so the collisions go on.
        return None
    try:
        tail = minimum_norm_nonnegative(W_SS, -u[S])
    except SolverError:
        return None
    W_cols = W if sp.issparse(W) else np.asarray(W)
    u_limit = u + _column_combination(W_cols, S, tail)
    if np.any(u_limit < -problem.tol) or np.max(np.abs(u_limit[S])) > 1e3 * problem.tol:
        return None
    return S, tail


def _sum_infinite_tail(
    problem: _ImpactProblem,
    v: np.ndarray,
    u: np.ndarray,
    history: list[int],
    collisions: _Collisions,
):
    """Jump to the limit of an infinite converging tail of collisions, if the history is one."""
    found = _tail_impulse(problem, u, history)
    if found is None:
        return None
    S, tail = found
    collisions.append(S, tail / (1.0 + problem.e[S]), tail, np.zeros(S.size))
    v_limit = v + _column_combination(problem.MinvG, S, tail)
    return v_limit, problem.speeds(v_limit)


def _friction_tail(
    problem: _ImpactProblem,
    v: np.ndarray,
    u: np.ndarray,
    history: list[int],
    collisions: _Collisions,
):
    """Jump to the limit of an infinite tail of collisions with friction, if the history is one.

    ``S`` is chosen as in :func:`_tail_impulse`. Each constraint of ``S``
    keeps the friction mode of its last collision: slipping (its tangential
    impulse on the bound ``μΛ``) with ``τ`` fixed, or sticking. With the
    modes held, every collision is linear in ``v`` and the tail converges to
    the velocity with ``G_Sᵀv = 0`` and ``H_Kᵀv = 0`` on the sticking ones
    ``K``, reached by ``M Δv = G_S Λ − H_L μ τ Λ_L + H_K p_K``. That linear
    system is solved (square: ``|S| + |K|`` unknowns), and the jump is taken
    only when its matrix is regular and the answer keeps the modes:
    ``Λ >= 0``, ``|p_K| <= μΛ_K``, slip not reversed at the limit, and no
    other constraint approaching. Otherwise the collisions go on.
    """
    recent = np.asarray(history[len(history) // 2 :])
    S, counts = np.unique(recent, return_counts=True)
    if np.any(counts < 2) or np.any(problem.e[S] >= 1.0):
        return None
    last = collisions.last_impulses(S)
    mu = problem.mu[S]
    bound = np.array([mu[k] * last[int(c)][0] for k, c in enumerate(S)])
    p_last = np.array([last[int(c)][1] for c in S])
    slipping = (bound > 0.0) & (np.abs(p_last) >= (1.0 - 1e-9) * bound)
    tau = -np.sign(p_last) * slipping
    K = S[~slipping & (mu > 0.0)]
    # Normal directions of S with the slip friction folded in, then the sticking tangents.
    MinvD = problem.MinvG_dense[:, S] - problem.MinvH[:, S] * (mu * tau)
    MinvHK = problem.MinvH[:, K]
    rows = np.vstack((problem.G_dense[:, S].T, problem.H[:, K].T))
    A = rows @ np.hstack((MinvD, MinvHK))
    if np.linalg.matrix_rank(A) < A.shape[0]:
        return None
    x = np.linalg.solve(A, -(rows @ v))
    lam, p_K = x[: S.size], x[S.size :]
    stick = np.isin(S, K)
    if np.any(lam < 0.0) or np.any(np.abs(p_K) > problem.mu[K] * lam[stick] * (1 + 1e-9)):
        return None
    v_limit = v + MinvD @ lam + MinvHK @ p_K
    u_limit = problem.speeds(v_limit)
    slip_limit = problem.H[:, S].T @ v_limit
    scale = max(1.0, float(np.max(np.abs(u))))
    if (
        np.any(u_limit < -problem.tol)
        or np.max(np.abs(u_limit[S])) > 1e3 * problem.tol
        or np.any(tau * slip_limit < -1e3 * problem.tol * scale)
        or not np.all(np.isfinite(v_limit))
    ):
        return None
    tangent = -mu * tau * lam
    tangent[stick] = p_K
    collisions.append(S, lam / (1.0 + problem.e[S]), lam, tangent)
    return v_limit, u_limit


# ---------------------------------------------------------------------------
# Public entry point
# ---------------------------------------------------------------------------


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
