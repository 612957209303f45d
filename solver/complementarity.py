"""Exact solvers for linear complementarity problems and least-distance QPs.

Plain arrays in, plain arrays out; no mechanics here (STYLE.md, Siconos
numerics). Four tools:

* :func:`lemke` — Lemke's complementary pivoting for ``w = M z + q``,
  ``z, w >= 0``, ``zᵀw = 0`` with the lexicographic minimum ratio test, so
  degenerate problems cannot cycle.
* :func:`least_distance` — ``min ½(z − y)ᵀM(z − y)`` subject to
  ``Gᵀz >= lower``, solved exactly as a least-distance program (LDP) through
  ``scipy.optimize.nnls`` (Lawson & Hanson, *Solving Least Squares Problems*,
  ch. 23), returning the minimum-norm multipliers.
* :func:`banded_lcp` — block principal pivoting (Júdice & Pires 1994, with
  Murty's least-index fallback) on a symmetric positive definite *banded*
  matrix, every linear solve a banded Cholesky: O(n) per pivot for a chain.
* :func:`projected_fixed_point` — the projection iteration of paper 004
  (13a), (14a), (33): ``λ = [λ − ρ u_n]⁺``, ``τ = Π(τ + ρ u_t)``; an
  independent check, bounded, never the production solver.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, solve_triangular, solveh_banded
from scipy.optimize import nnls

from solver.errors import InputError, SolverError

_RELATIVE_TOL = 1e-9
"""Residual (relative to the data's scale) above which an LCP answer is refused."""


@dataclass(frozen=True)
class LCPResult:
    """Outcome of an LCP solve ``w = M z + q``, ``0 <= z ⊥ w >= 0``.

    ``status`` is ``"solved"``, ``"ray_termination"`` or ``"iteration_limit"``;
    ``z`` and ``w`` are only a solution when ``status == "solved"`` (they hold
    the last iterate otherwise). ``iterations`` counts pivots.
    """

    z: np.ndarray
    w: np.ndarray
    status: str
    iterations: int


@dataclass(frozen=True)
class FixedPointResult:
    """Outcome of :func:`projected_fixed_point`.

    ``lam`` are the normal multipliers (>= 0), ``tau`` the friction
    multipliers in [-1, 1], ``converged`` says whether the step between two
    sweeps fell below the tolerance within ``iterations`` sweeps.
    """

    lam: np.ndarray
    tau: np.ndarray
    iterations: int
    converged: bool


def _square_matrix(M: np.ndarray, name: str) -> np.ndarray:
    M = np.asarray(M, dtype=float)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise InputError(f"`{name}` must be a square matrix, got shape {M.shape}")
    if not np.all(np.isfinite(M)):
        raise InputError(f"`{name}` must be finite")
    return M


def _vector(q: np.ndarray, n: int, name: str) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    if q.shape != (n,):
        raise InputError(f"`{name}` must have shape ({n},), got {q.shape}")
    if not np.all(np.isfinite(q)):
        raise InputError(f"`{name}` must be finite")
    return q


def _complementarity_residual(z: np.ndarray, w: np.ndarray) -> float:
    """Largest violation of ``z >= 0``, ``w >= 0``, ``z_i w_i = 0`` (as min(z, w))."""
    if z.size == 0:
        return 0.0
    return float(np.max(np.abs(np.minimum(z, w))))


# ---------------------------------------------------------------------------
# Lemke
# ---------------------------------------------------------------------------


def _lexicographic_min_row(
    tableau: np.ndarray, column: np.ndarray, rows: np.ndarray, n: int, scale: float
) -> int:
    """Row of ``rows`` minimising ``(rhs_i, B⁻¹_i) / column_i`` lexicographically.

    ``tableau[:, -1]`` is the basic solution and ``tableau[:, :n]`` the basis
    inverse. Two ratios closer than ``1e-12 * scale`` count as a tie and are
    resolved by the next column of the basis inverse, which is nonsingular,
    so exactly one row remains.
    """
    candidates = rows
    for k in [-1, *range(n)]:
        ratios = tableau[candidates, k] / column[candidates]
        best = ratios.min()
        tie = 1e-12 * max(scale, abs(best)) if k == -1 else 1e-12 * max(1.0, abs(best))
        candidates = candidates[ratios <= best + tie]
        if candidates.size == 1:
            break
    return int(candidates[0])


def lemke(M: np.ndarray, q: np.ndarray, max_iter: int | None = None) -> LCPResult:
    """Solve ``w = M z + q``, ``z >= 0``, ``w >= 0``, ``zᵀw = 0`` by Lemke's method.

    Complementary pivoting with the covering vector ``d = 1`` and the
    lexicographic minimum ratio test (Cottle, Pang & Stone, *The Linear
    Complementarity Problem*, §4.4), so degenerate bases cannot cycle.
    Lemke's method solves every LCP whose matrix is a P-matrix, and every
    feasible one whose matrix is copositive-plus (positive semidefinite
    included); otherwise it may end on a secondary ray.

    The answer of a ``"solved"`` run is recomputed from its final basis and
    checked against the complementarity conditions; if that check fails the
    method raises rather than return a wrong answer.

    Parameters
    ----------
    M : (n, n) array_like
        The LCP matrix (units: whatever maps ``z`` to ``w``).
    q : (n,) array_like
        The constant term.
    max_iter : int, optional
        Bound on the number of pivots, default ``max(100, 50 n)``.

    Returns
    -------
    LCPResult
        ``status`` is ``"solved"``, ``"ray_termination"`` (no solution found:
        the problem may be infeasible) or ``"iteration_limit"``.

    Raises
    ------
    InputError
        On a non-square or non-finite ``M`` or a ``q`` of the wrong shape.
    SolverError
        If the final basis does not give a solution to working precision.
    """
    M = _square_matrix(M, "M")
    n = M.shape[0]
    q = _vector(q, n, "q")
    if max_iter is None:
        max_iter = max(100, 50 * n)
    if max_iter < 1:
        raise InputError(f"`max_iter` must be >= 1, got {max_iter}")
    round_off = 1e-14 * max(1.0, float(np.max(np.abs(q))), float(np.max(np.abs(M))))
    if n == 0 or np.all(q >= -round_off):
        return LCPResult(z=np.zeros(n), w=q.copy(), status="solved", iterations=0)

    # Equilibrate: z = D z', D M D z' + D q keeps complementarity and evens out
    # the pivots of badly scaled problems (a mass matrix with condition 1e6).
    magnitude = np.max(np.abs(M), axis=1)
    d = 1.0 / np.sqrt(np.where(magnitude > 0.0, magnitude, 1.0))
    M_scaled = d[:, None] * M * d[None, :]
    q_scaled = d * q
    scale = float(np.max(np.abs(q_scaled)))  # > 0: some q_i < 0 here
    artificial = 2 * n
    tableau = np.hstack([np.eye(n), -M_scaled, -np.ones((n, 1)), q_scaled[:, None]])
    basis = np.arange(n)
    rows = np.arange(n)

    entering = artificial
    # First pivot: z0 enters at the level that makes every w_i >= 0.
    leave_row = _lexicographic_min_row(tableau, np.ones(n), rows, n, scale)
    status = "iteration_limit"
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        pivot_row = tableau[leave_row] / tableau[leave_row, entering]
        tableau -= np.outer(tableau[:, entering], pivot_row)
        tableau[leave_row] = pivot_row
        leaving = basis[leave_row]
        basis[leave_row] = entering
        if leaving == artificial:
            status = "solved"
            break
        entering = leaving + n if leaving < n else leaving - n
        column = tableau[:, entering]
        positive = rows[column > 1e-12 * max(1.0, np.max(np.abs(column)))]
        if positive.size == 0:
            status = "ray_termination"
            break
        artificial_row = np.flatnonzero(basis == artificial)
        if artificial_row.size and artificial_row[0] in positive:
            ratios = tableau[positive, -1] / column[positive]
            r = int(artificial_row[0])
            if tableau[r, -1] / column[r] <= ratios.min() + 1e-12 * scale:
                leave_row = r
                continue
        leave_row = _lexicographic_min_row(tableau, column, positive, n, scale)

    z = np.zeros(n)
    in_basis = basis[(basis >= n) & (basis < artificial)] - n
    z_rows = np.flatnonzero((basis >= n) & (basis < artificial))
    z[in_basis] = d[in_basis] * tableau[z_rows, -1]
    if status == "solved":
        z = _polish(M, q, z, in_basis)
    return LCPResult(z=z, w=M @ z + q, status=status, iterations=iterations)


def _polish(M: np.ndarray, q: np.ndarray, z: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Recompute ``z`` on its final complementary basis and verify it.

    On the basis, ``(M z + q)_F = 0`` with ``F`` the basic z-variables; the
    solve is repeated from the original data to remove the round-off the
    pivots accumulated. The more accurate of the two answers is kept, and
    refused if even that one is not a solution.
    """
    candidates = [np.maximum(z, 0.0)]
    if free.size:
        refined = np.zeros_like(z)
        refined[free], *_ = np.linalg.lstsq(M[np.ix_(free, free)], -q[free], rcond=None)
        candidates.append(np.maximum(refined, 0.0))
    scale = max(
        1.0,
        float(np.max(np.abs(q))),
        float(np.max(np.abs(M))) * float(np.max(np.abs(z), initial=0.0)),
    )
    residuals = [_complementarity_residual(c, M @ c + q) for c in candidates]
    best = int(np.argmin(residuals))
    if residuals[best] > _RELATIVE_TOL * scale:
        raise SolverError(
            "Lemke's method ended on a basis that is not a solution to working precision "
            f"(complementarity residual {residuals[best]:.3g}); the LCP is too ill-conditioned"
        )
    return candidates[best]


# ---------------------------------------------------------------------------
# Least distance (frictionless plastic impact, paper 000 (8), (10)-(13))
# ---------------------------------------------------------------------------


def _least_distance_program(E: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Solve ``min ½‖x‖²`` subject to ``E x >= f`` (LDP) through one NNLS.

    Lawson & Hanson, ch. 23: with ``û = argmin_{u >= 0} ‖[Eᵀ; fᵀ] u − e_last‖``
    and residual ``r``, the solution is ``x = −r[:-1] / r[-1]`` and the KKT
    multipliers (``x = Eᵀλ``, ``λ >= 0``) are ``λ = û / (−r[-1])``. A zero
    residual means the constraints are inconsistent: ``None`` is returned.
    """
    m, k = E.shape
    if m == 0 or np.all(f <= 0.0):
        return np.zeros(k), np.zeros(m)
    # Scale f to unit size: then ‖x‖ = O(1) and the residual's last entry,
    # −1 / (1 + ‖x‖²)-like, cannot be mistaken for the zero of infeasibility.
    size = float(np.max(np.abs(f)))
    A = np.vstack([E.T, f[None, :] / size])
    b = np.zeros(k + 1)
    b[-1] = 1.0
    u, _ = nnls(A, b, maxiter=max(100, 10 * (k + m)))
    r = A @ u - b
    if -r[-1] <= 1e-12:
        return None
    return -size * r[:-1] / r[-1], size * u / (-r[-1])


def minimum_norm_nonnegative(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Minimum-norm ``x >= 0`` with ``A x = b``, for a consistent system with such an ``x``.

    The least-squares solution ``x_p`` is the minimum-norm one; when it has
    negative entries, every solution is ``x_p + N c`` (``N`` an orthonormal
    basis of the null space of ``A``, orthogonal to ``x_p``), so the
    minimum-norm nonnegative one solves the least-distance program
    ``min ½‖c‖²``, ``N c >= −x_p``.

    Raises
    ------
    SolverError
        If no nonnegative solution exists.
    """
    A = np.asarray(A, dtype=float)
    x_p, *_ = np.linalg.lstsq(A, b, rcond=None)
    tol = 1e-12 * max(1.0, float(np.max(np.abs(x_p), initial=0.0)))
    if np.all(x_p >= -tol):
        return np.maximum(x_p, 0.0)
    _, sing, vt = np.linalg.svd(A)
    rank = int(np.sum(sing > sing[0] * max(A.shape) * np.finfo(float).eps)) if sing.size else 0
    null_basis = vt[rank:].T
    solved = _least_distance_program(null_basis, -x_p)
    if solved is None:
        raise SolverError("no nonnegative solution of the linear system exists")
    c, _ = solved
    return np.maximum(x_p + null_basis @ c, 0.0)


def least_distance(
    M: np.ndarray, G: np.ndarray, y: np.ndarray, *, lower: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Closest point to ``y`` in the metric of ``M`` with ``Gᵀz >= lower``.

    Solves ``min ½(z − y)ᵀM(z − y)`` subject to ``Gᵀz >= lower`` (default
    ``lower = 0``: the plastic phase of paper 000, (8) and (10)-(13)), whose
    KKT conditions are ``M(z − y) = Gλ``, ``λ >= 0``, ``λ ⊥ Gᵀz − lower``.

    With ``M = L Lᵀ`` and ``x = Lᵀ(z − y)`` this is the least-distance program
    ``min ½‖x‖²``, ``(L⁻¹G)ᵀ x >= lower − Gᵀy``, solved exactly by one NNLS.
    The answer is then polished on its active set by an equality-constrained
    projection. ``z`` is unique; when ``G`` has dependent columns the
    multipliers are not, and the one of minimum Euclidean norm is returned.

    Parameters
    ----------
    M : (N, N) array_like
        Symmetric positive definite metric (a mass matrix, kg or kg m²).
    G : (N, n) array_like
        Constraint gradients, one column per constraint.
    y : (N,) array_like
        The point to project (a velocity, m/s).
    lower : (n,) array_like, optional
        Right-hand side of the constraints; zero when omitted.

    Returns
    -------
    z : (N,) ndarray
        The projection (same units as ``y``).
    lam : (n,) ndarray
        Minimum-norm multipliers ``λ >= 0`` with ``M(z − y) = Gλ`` (an
        impulse, N·s, when ``M`` is a mass matrix and ``y`` a velocity).

    Raises
    ------
    InputError
        If ``M`` is not symmetric positive definite or shapes do not match.
    SolverError
        If ``Gᵀz >= lower`` has no solution.
    """
    M = _square_matrix(M, "M")
    N = M.shape[0]
    G = np.asarray(G, dtype=float)
    if G.ndim != 2 or G.shape[0] != N:
        raise InputError(f"`G` must have shape ({N}, n), got {G.shape}")
    if not np.all(np.isfinite(G)):
        raise InputError("`G` must be finite")
    y = _vector(y, N, "y")
    n = G.shape[1]
    lower = np.zeros(n) if lower is None else _vector(lower, n, "lower")
    if not np.allclose(M, M.T, rtol=1e-12, atol=1e-14 * np.max(np.abs(M), initial=0.0)):
        raise InputError("`M` must be symmetric")
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError as err:
        raise InputError("`M` must be positive definite") from err

    # Each constraint row is normalised (an equivalent constraint) so that NNLS
    # sees evenly scaled columns; the multipliers are scaled back at the end.
    E = solve_triangular(L, G, lower=True).T
    row_norms = np.linalg.norm(E, axis=1)
    if np.any(row_norms == 0.0):
        raise InputError(f"`G` column {int(np.argmin(row_norms))} is zero")
    E = E / row_norms[:, None]
    f = (lower - G.T @ y) / row_norms
    solved = _least_distance_program(E, f)
    if solved is None:
        raise SolverError("the constraints `Gᵀz >= lower` are inconsistent (no feasible z)")
    x, lam = solved
    scale = max(
        float(np.max(np.abs(f), initial=0.0)),
        float(np.max(np.linalg.norm(E, axis=1), initial=0.0)) * float(np.linalg.norm(x)),
        np.finfo(float).tiny,
    )
    tol = 1e-9 * scale
    active = (E @ x - f <= tol) | (lam > 0.0)
    if np.any(active):
        E_A = E[active]
        x_polished, *_ = np.linalg.lstsq(E_A, f[active], rcond=None)
        feasible = np.all(E @ x_polished - f >= -tol)
        if feasible:
            try:
                lam_A = minimum_norm_nonnegative(E_A.T, x_polished)
            except SolverError:
                lam_A = None
            if lam_A is not None and np.allclose(
                E_A.T @ lam_A, x_polished, rtol=1e-9, atol=1e-12 * scale
            ):
                x = x_polished
                lam = np.zeros(n)
                lam[active] = lam_A
    z = y + solve_triangular(L.T, x, lower=False)
    # z comes out of a cancellation when the impulses are large (an ill-conditioned
    # M): Gᵀz = lower then holds on the pushing constraints only to ~eps cond(M) |y|,
    # and an elastic stage gains or loses 2 λᵀ(Gᵀz − lower). One step of iterative
    # refinement removes that residual; its correction is M⁻¹G_P c, so
    # M(z − y) = Gλ keeps holding to round-off.
    pushing = lam > 0.0
    if np.any(pushing):
        residual = (G[:, pushing].T @ z - lower[pushing]) / row_norms[pushing]
        dx, *_ = np.linalg.lstsq(E[pushing], -residual, rcond=None)
        z = z + solve_triangular(L.T, dx, lower=False)
    return z, lam / row_norms


# ---------------------------------------------------------------------------
# Banded LCP (chains: tridiagonal Delassus matrix)
# ---------------------------------------------------------------------------


def band_of(W: np.ndarray, bandwidth: int) -> np.ndarray:
    """Upper band storage of a symmetric matrix (numpy or scipy.sparse), as ``solveh_banded`` wants.

    ``band[bandwidth + i − j, j] = W[i, j]`` for ``i <= j <= i + bandwidth``.
    """
    band = np.zeros((bandwidth + 1, W.shape[0]))
    for k in range(bandwidth + 1):
        band[bandwidth - k, k:] = W.diagonal(k)
    return band


def _banded_matvec(band: np.ndarray, z: np.ndarray) -> np.ndarray:
    b = band.shape[0] - 1
    out = band[b] * z
    for k in range(1, b + 1):
        diag = band[b - k, k:]
        out[:-k] += diag * z[k:]
        out[k:] += diag * z[:-k]
    return out


def _principal_band(band: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Band storage of the principal submatrix on the sorted index set ``free``.

    A principal submatrix of a band matrix is banded with the same width (or
    less, when it is smaller than that): its entry ``(a, a + k)`` is
    ``W[free[a], free[a + k]]``, nonzero only when the original indices differ
    by at most the bandwidth.
    """
    b = band.shape[0] - 1
    m = free.size
    width = min(b, m - 1)
    sub = np.zeros((width + 1, m))
    sub[width] = band[b, free]
    for k in range(1, width + 1):
        gap = free[k:] - free[:-k]
        near = gap <= b
        sub[width - k, k:][near] = band[b - gap[near], free[k:][near]]
    return sub


def banded_lcp(
    band: np.ndarray,
    q: np.ndarray,
    max_iter: int | None = None,
    *,
    initial_free: np.ndarray | None = None,
) -> LCPResult:
    """Solve ``w = W z + q``, ``0 <= z ⊥ w >= 0`` for a symmetric positive definite band ``W``.

    Block principal pivoting (Júdice & Pires, *Comput. Oper. Res.* 21, 1994):
    guess the set ``F`` of positive ``z``, solve ``W_FF z_F = −q_F`` by a
    banded Cholesky (``solveh_banded``), exchange every infeasible index at
    once while their number keeps falling, and fall back to Murty's
    single-index rule (finite for P-matrices) when it does not. A principal
    submatrix of a band matrix is a band matrix, so each pivot costs
    ``O(n b²)``.

    Parameters
    ----------
    band : (b + 1, n) array_like
        ``W`` in upper band storage (see :func:`band_of`).
    q : (n,) array_like
        The constant term.
    max_iter : int, optional
        Bound on the number of block pivots, default ``max(50, 2 n)``.
    initial_free : (n,) bool array_like, optional
        Starting guess of ``z > 0``; default ``q <= 1e-12 max|q|`` (for an
        impact: every contact that is not separating takes part, and a resting
        contact whose speed is round-off counts as resting — otherwise the
        pivots would add such contacts one at a time, ``O(n)`` pivots).

    Returns
    -------
    LCPResult
        ``status`` ``"solved"`` or ``"iteration_limit"``.

    Raises
    ------
    SolverError
        If a principal submatrix is not positive definite (``W`` singular:
        use :func:`least_distance` or :func:`lemke` instead).
    """
    band = np.asarray(band, dtype=float)
    if band.ndim != 2 or not np.all(np.isfinite(band)):
        raise InputError("`band` must be a finite 2-D array in upper band storage")
    n = band.shape[1]
    q = _vector(q, n, "q")
    if max_iter is None:
        max_iter = max(50, 2 * n)
    scale = max(float(np.max(np.abs(q), initial=0.0)), np.finfo(float).tiny)
    tol = 1e-12 * scale
    free = (q <= tol) if initial_free is None else np.asarray(initial_free, dtype=bool).copy()
    best_count, tries_left = n + 1, 3
    z = np.zeros(n)
    w = q.copy()
    for iteration in range(1, max_iter + 1):
        z = np.zeros(n)
        index = np.flatnonzero(free)
        if index.size:
            try:
                z[index] = solveh_banded(_principal_band(band, index), -q[index])
            except LinAlgError as err:
                raise SolverError(
                    "banded LCP: a principal submatrix of W is not positive definite"
                ) from err
        w = _banded_matvec(band, z) + q
        w[free] = 0.0
        infeasible = np.flatnonzero((free & (z < -tol)) | (~free & (w < -tol)))
        if infeasible.size == 0:
            return LCPResult(
                z=np.maximum(z, 0.0), w=np.maximum(w, 0.0), status="solved", iterations=iteration
            )
        if infeasible.size < best_count:
            best_count, tries_left = infeasible.size, 3
            free[infeasible] = ~free[infeasible]
        elif tries_left > 0:
            tries_left -= 1
            free[infeasible] = ~free[infeasible]
        else:
            free[infeasible[-1]] = ~free[infeasible[-1]]
    return LCPResult(z=z, w=w, status="iteration_limit", iterations=max_iter)


# ---------------------------------------------------------------------------
# Paper 004's projected fixed point (a check, not the production solver)
# ---------------------------------------------------------------------------


def projected_fixed_point(
    W: np.ndarray,
    c: np.ndarray,
    mu: np.ndarray,
    *,
    rho: float = 1.0,
    tol: float = 1e-13,
    max_iter: int = 20000,
) -> FixedPointResult:
    """Solve an impact with Coulomb friction by paper 004's projections, sweep by sweep.

    The unknowns are normal multipliers ``λ >= 0`` and friction multipliers
    ``τ ∈ [−1, 1]`` of ``n`` contacts; with the impulse ``p = [λ; −μλτ]`` the
    contact velocities are ``u = [u_n; u_t] = c + W p``. Paper 004 (33):
    ``λ = [λ − ρ u_n]⁺`` and ``τ = Π(τ + ρ u_t)``. Here they are applied
    contact by contact (Gauss-Seidel) with ``ρ`` scaled by the diagonal of
    ``W`` (``ρ_n = rho / W_nn``, ``ρ_t = rho / (μλ W_tt)``), which converges
    for many but not all problems — hence ``converged`` in the result.

    Parameters
    ----------
    W : (2n, 2n) array_like
        Delassus matrix ``[G H]ᵀ M⁻¹ [G H]`` (1/kg).
    c : (2n,) array_like
        Contact velocities without impulse ``[Gᵀy; Hᵀy]`` (m/s).
    mu : (n,) array_like
        Friction coefficients (>= 0).
    rho : float
        Relaxation factor in (0, 2); 1 is Gauss-Seidel.
    tol : float
        Stop when no impulse changes by more than ``tol`` times the largest one.
    max_iter : int
        Bound on the number of sweeps.
    """
    W = _square_matrix(W, "W")
    if W.shape[0] % 2:
        raise InputError(f"`W` must be 2n x 2n, got {W.shape}")
    n = W.shape[0] // 2
    c = _vector(c, 2 * n, "c")
    mu = _vector(mu, n, "mu")
    if not 0.0 < rho < 2.0:
        raise InputError(f"`rho` must lie in (0, 2), got {rho}")
    lam = np.zeros(n)
    tau = np.zeros(n)
    p = np.zeros(2 * n)
    for sweep in range(1, max_iter + 1):
        p_old = p.copy()
        for i in range(n):
            if W[i, i] > 0.0:
                u_n = c[i] + W[i] @ p
                lam[i] = max(0.0, lam[i] - rho / W[i, i] * u_n)
                p[i] = lam[i]
                p[n + i] = -mu[i] * lam[i] * tau[i]
            t = n + i
            if mu[i] * lam[i] > 0.0 and W[t, t] > 0.0:
                u_t = c[t] + W[t] @ p
                tau[i] = float(np.clip(tau[i] + rho / (mu[i] * lam[i] * W[t, t]) * u_t, -1, 1))
                p[t] = -mu[i] * lam[i] * tau[i]
        change = float(np.max(np.abs(p - p_old), initial=0.0))
        if change <= tol * max(float(np.max(np.abs(p), initial=0.0)), np.finfo(float).tiny):
            return FixedPointResult(lam=lam, tau=tau, iterations=sweep, converged=True)
    return FixedPointResult(lam=lam, tau=tau, iterations=max_iter, converged=False)
