"""What every impact law shares: the problem (M, G, H and their Delassus blocks), its checks,
the bounds of one call and the results (:mod:`solver.impact`, MECHANICS §3).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from solver.complementarity import (
    band_of,
    banded_lcp,
    least_distance,
    lemke,
)
from solver.errors import InputError, SolverError
from solver.frames import _quick_init

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


@_quick_init
@dataclass(frozen=True, slots=True)
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
    return order, band_of(W, b)


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
