"""Impulsive motion of nonholonomic systems without multipliers (paper 001).

A system with generalized velocities ``v`` (n,) and constant symmetric
positive definite mass matrix ``M`` carries ``s`` linear velocity constraints
``A v + a0 = 0`` (rolling without slip). An impulse does not move the
configuration, so ``A`` and ``a0`` are the same before and after it and the
velocity jump ``Δv`` satisfies ``A Δv = 0`` (paper 001 (1.1)''').

Maggi's form (paper 001 (2.5), (2.6), (3.3)): choose ``l = n − s`` independent
velocities ``u``; then ``v = C u + C0`` with ``C = [I; −A₂⁻¹A₁]`` (rows in the
order independent, dependent) and the impulse equations are

    Cᵀ M Δv = Cᵀ Q̂,    A Δv = 0,

with no constraint multipliers. The paper takes the first ``l`` velocities as
independent; here the choice is made by a column-pivoted QR factorisation of
``A`` so that ``A₂`` is the best-conditioned block and a singular "natural"
``A₂`` never breaks the solve. The classical form with multipliers,
``[M Aᵀ; A 0][Δv; σ] = [Q̂; 0]``, is :func:`multiplier_response`; both give the
same ``Δv`` (MECHANICS §5).

Redundant constraint rows (rows of ``A`` that are linear combinations of the
others) add no condition on ``Δv``; they are dropped, see
:func:`independent_rows`.

The module also holds the two-wheel axle cart of paper 001's example,
:class:`AxleCart`.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import cho_factor, cho_solve, qr, solve_triangular

from solver.errors import InputError

RANK_RTOL = 1e-10
"""Relative tolerance of the rank decision: a row of ``A`` whose component
outside the span of the rows already kept is below ``RANK_RTOL`` times the
largest row is treated as redundant."""

SYMMETRY_RTOL = 1e-10
"""Relative tolerance on ``|M − Mᵀ|`` for the mass matrix to count as symmetric."""

CONDITION_LIMIT = 1e12
"""A caller-chosen dependent block ``A₂`` counts as singular when its smallest
singular value is below ``‖A‖₂ / CONDITION_LIMIT``."""


def _finite_array(value: ArrayLike, name: str, ndim: int) -> np.ndarray:
    """Return ``value`` as a float array of ``ndim`` dimensions, refusing NaN/inf."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: must be an array of numbers ({exc})") from exc
    if array.ndim != ndim:
        raise InputError(f"{name}: must have {ndim} dimension(s), got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise InputError(f"{name}: all components must be finite")
    return array


def _mass_matrix(M: ArrayLike) -> np.ndarray:
    """Validate a symmetric positive definite mass matrix and return it as an array."""
    matrix = _finite_array(M, "M", 2)
    n = matrix.shape[0]
    if matrix.shape != (n, n) or n == 0:
        raise InputError(f"M: must be a non-empty square matrix, got shape {matrix.shape}")
    asymmetry = float(np.max(np.abs(matrix - matrix.T)))
    if asymmetry > SYMMETRY_RTOL * max(1.0, float(np.max(np.abs(matrix)))):
        raise InputError(f"M: must be symmetric, max |M - M.T| = {asymmetry:.3g}")
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError as exc:
        raise InputError("M: must be positive definite") from exc
    return matrix


def _constraint_matrix(A: ArrayLike, n: int) -> np.ndarray:
    """Validate a constraint matrix with ``n`` columns (zero rows allowed)."""
    matrix = _finite_array(A, "A", 2)
    if matrix.shape[1] != n:
        raise InputError(f"A: must have n = {n} columns (one per velocity), got {matrix.shape[1]}")
    return matrix


def _vector(value: ArrayLike, name: str, n: int) -> np.ndarray:
    """Validate a finite vector of length ``n``."""
    vector = _finite_array(value, name, 1)
    if vector.shape != (n,):
        raise InputError(f"{name}: must have shape ({n},), got {vector.shape}")
    return vector


def independent_rows(A: ArrayLike) -> np.ndarray:
    """Indices of the rows of ``A`` that are not combinations of earlier rows.

    Rows are taken in order; a row is dropped when its component outside the
    span of the rows kept so far is below :data:`RANK_RTOL` times the largest
    row norm. Dropped rows repeat conditions already imposed on a velocity
    jump (``A Δv = 0``), so :func:`maggi_basis` and :func:`multiplier_response`
    ignore them.

    Parameters
    ----------
    A : array_like, shape (s, n)
        Constraint matrix, one constraint per row.

    Returns
    -------
    ndarray of int
        Increasing row indices; their count is the rank of ``A``.
    """
    matrix = _finite_array(A, "A", 2)
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=int)
    threshold = RANK_RTOL * float(np.max(np.linalg.norm(matrix, axis=1)))
    kept: list[int] = []
    orthonormal = np.zeros((0, matrix.shape[1]))
    for index, row in enumerate(matrix):
        residual = row - orthonormal.T @ (orthonormal @ row)
        residual -= orthonormal.T @ (orthonormal @ residual)
        size = float(np.linalg.norm(residual))
        if size > threshold:
            kept.append(index)
            orthonormal = np.vstack([orthonormal, residual / size])
    return np.array(kept, dtype=int)


def maggi_basis(A: ArrayLike, independent: ArrayLike | None = None) -> np.ndarray:
    """Matrix ``C`` (n × l) of paper 001 (2.6): ``A C = 0``, identity on the independent velocities.

    Parameters
    ----------
    A : array_like, shape (s, n)
        Constraint matrix; redundant rows are dropped first.
    independent : array_like of int, optional
        Indices of the ``l = n − rank(A)`` velocities chosen independent. By
        default they are chosen by a column-pivoted QR factorisation of ``A``,
        which picks the best-conditioned dependent block ``A₂``.

    Returns
    -------
    ndarray, shape (n, l)
        ``C[independent] = I`` and ``C[dependent] = −A₂⁻¹A₁``.

    Raises
    ------
    InputError
        If ``independent`` has the wrong count, repeats or is out of range, or
        leaves a singular block ``A₂`` of the remaining columns.
    """
    matrix = _finite_array(A, "A", 2)
    reduced = matrix[independent_rows(matrix)]
    rank, n = reduced.shape
    basis = np.zeros((n, n - rank))
    if independent is None:
        if rank == 0:
            return np.eye(n)
        _, R, perm = qr(reduced, mode="economic", pivoting=True)
        dependent, free = perm[:rank], perm[rank:]
        coupling = -solve_triangular(R[:, :rank], R[:, rank:])
    else:
        free = np.asarray(independent)
        if free.size == 0:
            free = free.astype(int)
        if free.ndim != 1 or not np.issubdtype(free.dtype, np.integer):
            raise InputError("independent: must be a sequence of velocity indices")
        if free.size != n - rank or len(set(free.tolist())) != free.size:
            raise InputError(
                f"independent: must name {n - rank} distinct velocities (n - rank A), "
                f"got {free.tolist()}"
            )
        if free.size and (free.min() < 0 or free.max() >= n):
            raise InputError(f"independent: indices must lie in [0, {n}), got {free.tolist()}")
        dependent = np.setdiff1d(np.arange(n), free)
        block = reduced[:, dependent]
        if rank and np.linalg.svd(block, compute_uv=False)[-1] * CONDITION_LIMIT <= np.linalg.norm(
            reduced, 2
        ):
            raise InputError(
                f"independent: the remaining velocities {dependent.tolist()} cannot be solved "
                "from the constraints (their block A2 of A is singular)"
            )
        coupling = -np.linalg.solve(block, reduced[:, free]) if rank else np.zeros((0, free.size))
    basis[free, np.arange(n - rank)] = 1.0
    basis[dependent] = coupling
    return basis


def impulsive_response(
    M: ArrayLike,
    A: ArrayLike,
    impulse: ArrayLike,
    v_minus: ArrayLike,
    independent: ArrayLike | None = None,
) -> np.ndarray:
    """Velocity after an impulse on a nonholonomic system, without multipliers (paper 001 (3.3)).

    Solves ``Cᵀ M Δv = Cᵀ Q̂`` with ``Δv = C Δu`` (so ``A Δv = 0``) and
    returns ``v⁺ = v⁻ + Δv``.

    Parameters
    ----------
    M : array_like, shape (n, n)
        Symmetric positive definite mass matrix (kg, kg m², ... per coordinate).
    A : array_like, shape (s, n)
        Rows of the velocity constraints ``A v + a0 = 0``; ``a0`` is not needed
        because an impulse leaves it unchanged. Redundant rows are dropped.
    impulse : array_like, shape (n,)
        Generalized impulse ``Q̂`` of the applied impulsive forces
        (N·s, N·m·s for angles), paper 001 (3.1).
    v_minus : array_like, shape (n,)
        Generalized velocity just before the impulse.
    independent : array_like of int, optional
        Velocities taken as independent (see :func:`maggi_basis`); the result
        does not depend on this choice up to rounding.

    Returns
    -------
    ndarray, shape (n,)
        Generalized velocity just after the impulse; ``A v⁺ = A v⁻``.
    """
    mass = _mass_matrix(M)
    n = mass.shape[0]
    constraints = _constraint_matrix(A, n)
    q_hat = _vector(impulse, "impulse", n)
    before = _vector(v_minus, "v_minus", n)
    basis = maggi_basis(constraints, independent)
    if basis.shape[1] == 0:
        return before.copy()
    reduced_mass = basis.T @ mass @ basis
    delta_u = cho_solve(cho_factor(reduced_mass), basis.T @ q_hat)
    return before + basis @ delta_u


def multiplier_response(
    M: ArrayLike, A: ArrayLike, impulse: ArrayLike, v_minus: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Velocity after an impulse from the classical equations with multipliers.

    Solves ``[M Aᵀ; A 0][Δv; −σ] = [Q̂; 0]`` for the independent rows of
    ``A``, that is paper 001's ``Δp = Q̂ + Aᵀσ'`` (§1) together with
    ``A Δv = 0``.

    Parameters
    ----------
    M, A, impulse, v_minus
        As in :func:`impulsive_response`.

    Returns
    -------
    v_plus : ndarray, shape (n,)
        Generalized velocity just after the impulse.
    sigma : ndarray, shape (s,)
        The paper's multipliers ``σ'``, one per row of ``A``: the constraint
        impulse ``Aᵀσ`` is added to ``Q̂`` (N·s for a row that measures a
        speed in m/s); 0 on redundant rows, which were dropped.
    """
    mass = _mass_matrix(M)
    n = mass.shape[0]
    constraints = _constraint_matrix(A, n)
    q_hat = _vector(impulse, "impulse", n)
    before = _vector(v_minus, "v_minus", n)
    rows = independent_rows(constraints)
    reduced = constraints[rows]
    rank = rows.size
    kkt = np.block([[mass, reduced.T], [reduced, np.zeros((rank, rank))]])
    solution = np.linalg.solve(kkt, np.concatenate([q_hat, np.zeros(rank)]))
    sigma = np.zeros(constraints.shape[0])
    sigma[rows] = -solution[n:]
    return before + solution[:n], sigma


@dataclass(frozen=True)
class AxleCart:
    """Two equal wheels on a common axle rolling without slip on the floor (paper 001 example).

    Top view. Generalized coordinates ``q = (xC, yC, phi, thetaA, thetaB)``:
    the axle's centre C (m), the axle's angle ``phi`` from the x axis (rad,
    counter-clockwise), and the two wheels' spin angles (rad). Velocities
    ``v = (vxC, vyC, omega, omegaA, omegaB)``.

    Geometry and signs, read off paper 001's constraints (a)', (b)', (c)':
    with ``e = (cos phi, sin phi)`` along the axle and ``n = (−sin phi, cos phi)``
    the rolling direction, wheel A sits at ``C − l e`` and wheel B at
    ``C + l e``, and a positive spin rate rolls a wheel forward along ``n``:
    its centre moves with velocity ``r thetȧ n``.

    Parameters
    ----------
    axle_mass : float
        Mass ``M`` of the axle, a uniform rod (kg); inertia ``M l²/3`` about C.
    half_length : float
        Half the axle length ``l`` (m): distance from C to each wheel.
    wheel_mass : float
        Mass ``m`` of each wheel, a uniform disk (kg): spin inertia ``m r²/2``,
        inertia about a diameter ``m r²/4``.
    wheel_radius : float
        Radius ``r`` of each wheel (m).
    """

    axle_mass: float
    half_length: float
    wheel_mass: float
    wheel_radius: float

    def __post_init__(self) -> None:
        for name in ("axle_mass", "half_length", "wheel_mass", "wheel_radius"):
            value = getattr(self, name)
            if not isinstance(value, Real) or not np.isfinite(value) or value <= 0:
                raise InputError(f"{name}: must be a finite number > 0, got {value!r}")

    @staticmethod
    def _pose(q: ArrayLike) -> np.ndarray:
        return _vector(q, "q", 5)

    def axle_inertia(self) -> float:
        """Moment of inertia (kg m²) of the whole cart about the vertical through C.

        ``M l²/3`` (axle) ``+ 2 m l²`` (wheel centres) ``+ 2 · m r²/4``
        (wheels about a diameter): the coefficient of ``omega`` in ``M``.
        """
        M, l, m, r = self.axle_mass, self.half_length, self.wheel_mass, self.wheel_radius
        return M * l**2 / 3.0 + 2.0 * m * l**2 + m * r**2 / 2.0

    def mass_matrix(self, q: ArrayLike) -> np.ndarray:
        """Mass matrix (5 × 5) of ``T = ½ vᵀ M v``; constant, so ``q`` is only checked.

        ``diag(M + 2m, M + 2m, M l²/3 + 2 m l² + m r²/2, m r²/2, m r²/2)``
        (paper 001's kinetic energy; the wheels' mass terms ``m |vC ± l omega n|²``
        have no cross term because the wheels sit symmetrically about C).
        """
        self._pose(q)
        mass = self.axle_mass + 2.0 * self.wheel_mass
        spin = self.wheel_mass * self.wheel_radius**2 / 2.0
        return np.diag([mass, mass, self.axle_inertia(), spin, spin])

    def constraint_matrix(self, q: ArrayLike) -> np.ndarray:
        """No-slip constraint rows ``A(q)`` (3 × 5) of ``A v = 0``; rank 3 for every ``phi``.

        Rows: no sideways slip along the axle ``e · vC = 0``; wheel A rolls,
        ``n · vC − l omega − r omegaA = 0``; wheel B rolls,
        ``n · vC + l omega − r omegaB = 0``.

        They span the same space as paper 001's (a)', (b)', (c)' (x and y of
        wheel A's contact velocity, x of wheel B's) whenever ``sin phi ≠ 0``:
        (a)' = cos phi · row 1 − sin phi · row 2, (b)' = sin phi · row 1 +
        cos phi · row 2, (c)' = cos phi · row 1 − sin phi · row 3. At
        ``sin phi = 0`` the paper's (a)' and (c)' both reduce to ``vxC = 0``
        and its set has rank 2; these rows do not.
        """
        _, _, phi, _, _ = self._pose(q)
        l, r = self.half_length, self.wheel_radius
        c, s = np.cos(phi), np.sin(phi)
        return np.array(
            [
                [c, s, 0.0, 0.0, 0.0],
                [-s, c, -l, -r, 0.0],
                [-s, c, l, 0.0, -r],
            ]
        )

    def constraint_matrix_rate(self, q: ArrayLike, v: ArrayLike) -> np.ndarray:
        """Time derivative ``dA/dt = ∂A/∂phi · omega`` (3 × 5, 1/s) along the motion ``v``."""
        _, _, phi, _, _ = self._pose(q)
        omega = _vector(v, "v", 5)[2]
        c, s = np.cos(phi), np.sin(phi)
        rate = np.zeros((3, 5))
        rate[0, :2] = (-s, c)
        rate[1, :2] = (-c, -s)
        rate[2, :2] = (-c, -s)
        return rate * omega

    def generalized_impulse(self, q: ArrayLike, point: float, vector: ArrayLike) -> np.ndarray:
        """Generalized impulse ``Q̂`` (paper 001 (3.1)) of a force impulse on the axle.

        Parameters
        ----------
        q : array_like, shape (5,)
            Configuration.
        point : float
            Signed distance (m) along the axle from C towards wheel B of the
            point hit; ``|point| <= half_length``.
        vector : array_like, shape (2,)
            Impulse ``S`` in world axes (N·s).

        Returns
        -------
        ndarray, shape (5,)
            ``(Sx, Sy, point · (n · S), 0, 0)``: the point moves with
            ``vC + point · omega · n``, so only the perpendicular part of ``S``
            has a moment about C (N·m·s). The wheel spins receive none.
        """
        _, _, phi, _, _ = self._pose(q)
        if not isinstance(point, Real) or not np.isfinite(point):
            raise InputError(f"point: must be a finite number (m along the axle), got {point!r}")
        if abs(point) > self.half_length:
            raise InputError(
                f"point: must lie on the axle, |point| <= {self.half_length}, got {point}"
            )
        S = _vector(vector, "vector", 2)
        normal = np.array([-np.sin(phi), np.cos(phi)])
        return np.array([S[0], S[1], point * float(normal @ S), 0.0, 0.0])

    def kinetic_energy(self, q: ArrayLike, v: ArrayLike) -> float:
        """Kinetic energy ``T = ½ vᵀ M v`` (J)."""
        rates = _vector(v, "v", 5)
        return 0.5 * float(rates @ self.mass_matrix(q) @ rates)
