"""Lemke's method and the solve on a known basis, for the compiled Moreau–Jean loop.

:func:`lemke_solve` is a line-by-line transcription of
:func:`solver.complementarity.lemke` (the lexicographic ratio test and the
same polishing; tested equal) for the small LCPs of a step's closed
contacts; :func:`_solve_on_basis` tries the previous step's basis first, as
``TimeSteppingStepper._solve_on_previous_basis`` does, with a plain
elimination (:func:`_gauss_solve`). Marked :func:`~solver.kernel_tables.jitable`:
compiled into :func:`solver.timestep_kernels.quiet_steps`, plain Python otherwise.
"""

from __future__ import annotations

import math

import numpy as np

from solver.kernel_tables import jitable as _jitable


@_jitable
def _lexicographic_min_row(
    tableau: np.ndarray, column: np.ndarray, rows: np.ndarray, n: int, scale: float
) -> int:
    """As ``complementarity._lexicographic_min_row``: ties within 1e-12 go to the next column."""
    candidates = rows.copy()
    count = len(candidates)
    for step in range(n + 1):
        k = tableau.shape[1] - 1 if step == 0 else step - 1
        best = math.inf
        for a in range(count):
            ratio = tableau[candidates[a], k] / column[candidates[a]]
            best = min(best, ratio)
        if step == 0:
            tie = 1e-12 * max(scale, abs(best))
        else:
            tie = 1e-12 * max(1.0, abs(best))
        kept = 0
        for a in range(count):
            if tableau[candidates[a], k] / column[candidates[a]] <= best + tie:
                candidates[kept] = candidates[a]
                kept += 1
        count = kept
        if count == 1:
            break
    return int(candidates[0])


@_jitable
def _residual(M: np.ndarray, q: np.ndarray, z: np.ndarray) -> float:
    """Largest ``|min(z, M z + q)|``: the violation of the LCP (0 for a solution)."""
    worst = 0.0
    for i in range(len(z)):
        w = q[i]
        for j in range(len(z)):
            w += M[i, j] * z[j]
        worst = max(worst, abs(min(z[i], w)))
    return worst


@_jitable
def lemke_solve(M: np.ndarray, q: np.ndarray, z: np.ndarray) -> int:
    """Lemke's method as :func:`solver.complementarity.lemke`; the answer is written to ``z``.

    Parameters
    ----------
    M : numpy.ndarray, shape (n, n)
        The LCP matrix.
    q : numpy.ndarray, shape (n,)
        The constant term.
    z : numpy.ndarray, shape (n,)
        Output: the solution when the result is 0.

    Returns
    -------
    int
        0 solved; 1 no solution found (secondary ray or pivot limit); 2 the
        final basis is not a solution to working precision (where
        :func:`~solver.complementarity.lemke` raises).
    """
    n = M.shape[0]
    z[:] = 0.0
    max_iter = max(100, 50 * n)
    largest_q = 0.0
    for i in range(n):
        largest_q = max(largest_q, abs(q[i]))
    largest_m = 0.0
    for i in range(n):
        for j in range(n):
            largest_m = max(largest_m, abs(M[i, j]))
    round_off = 1e-14 * max(1.0, largest_q, largest_m)
    feasible = True
    for i in range(n):
        if q[i] < -round_off:
            feasible = False
    if n == 0 or feasible:
        return 0
    d = np.empty(n)
    for i in range(n):
        magnitude = 0.0
        for j in range(n):
            magnitude = max(magnitude, abs(M[i, j]))
        d[i] = 1.0 / math.sqrt(magnitude if magnitude > 0.0 else 1.0)
    width = 2 * n + 2
    tableau = np.zeros((n, width))
    scale = 0.0
    for i in range(n):
        tableau[i, i] = 1.0
        for j in range(n):
            tableau[i, n + j] = -(d[i] * M[i, j] * d[j])
        tableau[i, 2 * n] = -1.0
        tableau[i, width - 1] = d[i] * q[i]
        scale = max(scale, abs(tableau[i, width - 1]))
    artificial = 2 * n
    basis = np.arange(n)
    rows = np.arange(n)
    entering = artificial
    leave_row = _lexicographic_min_row(tableau, np.ones(n), rows, n, scale)
    solved = False
    iterations = 0
    column = np.empty(n)
    pivot_row = np.empty(width)
    while iterations < max_iter:
        iterations += 1
        pivot = tableau[leave_row, entering]
        for j in range(width):
            pivot_row[j] = tableau[leave_row, j] / pivot
        for i in range(n):
            column[i] = tableau[i, entering]
        for i in range(n):
            for j in range(width):
                tableau[i, j] -= column[i] * pivot_row[j]
        for j in range(width):
            tableau[leave_row, j] = pivot_row[j]
        leaving = basis[leave_row]
        basis[leave_row] = entering
        if leaving == artificial:
            solved = True
            break
        entering = leaving + n if leaving < n else leaving - n
        largest = 0.0
        for i in range(n):
            column[i] = tableau[i, entering]
            largest = max(largest, abs(column[i]))
        threshold = 1e-12 * max(1.0, largest)
        count = 0
        for i in range(n):
            if column[i] > threshold:
                count += 1
        if count == 0:
            break
        positive = np.empty(count, dtype=np.int64)
        count = 0
        for i in range(n):
            if column[i] > threshold:
                positive[count] = i
                count += 1
        artificial_row = -1
        for i in range(n):
            if basis[i] == artificial:
                artificial_row = i
                break
        if artificial_row >= 0 and column[artificial_row] > threshold:
            smallest = math.inf
            for a in range(count):
                smallest = min(smallest, tableau[positive[a], width - 1] / column[positive[a]])
            r = artificial_row
            if tableau[r, width - 1] / column[r] <= smallest + 1e-12 * scale:
                leave_row = r
                continue
        leave_row = _lexicographic_min_row(tableau, column, positive, n, scale)
    if not solved:
        return 1
    n_free = 0
    for i in range(n):
        if n <= basis[i] < artificial:
            n_free += 1
    free = np.empty(n_free, dtype=np.int64)
    n_free = 0
    for i in range(n):
        if n <= basis[i] < artificial:
            free[n_free] = basis[i] - n
            z[basis[i] - n] = d[basis[i] - n] * tableau[i, width - 1]
            n_free += 1
    return _polish(M, q, z, free, largest_q, largest_m)


@_jitable
def _polish(
    M: np.ndarray, q: np.ndarray, z: np.ndarray, free: np.ndarray, largest_q: float,
    largest_m: float,
) -> int:  # fmt: skip
    """As ``complementarity._polish``: the basis solved again from the data, the better kept."""
    n = len(z)
    largest_z = 0.0
    for i in range(n):
        largest_z = max(largest_z, abs(z[i]))
    clipped = np.maximum(z, 0.0)
    best = clipped
    best_residual = _residual(M, q, clipped)
    if len(free):
        sub = np.empty((len(free), len(free)))
        rhs = np.empty(len(free))
        for a in range(len(free)):
            rhs[a] = -q[free[a]]
            for b in range(len(free)):
                sub[a, b] = M[free[a], free[b]]
        solution = np.linalg.lstsq(sub, rhs, rcond=np.finfo(np.float64).eps * len(free))[0]
        refined = np.zeros(n)
        for a in range(len(free)):
            refined[free[a]] = max(solution[a], 0.0)
        residual = _residual(M, q, refined)
        if residual < best_residual:
            best, best_residual = refined, residual
    scale = max(1.0, largest_q, largest_m * largest_z)
    if best_residual > 1e-9 * scale:
        return 2
    z[:] = best
    return 0


@_jitable
def _gauss_solve(A: np.ndarray, b: np.ndarray) -> bool:
    """Solve ``A x = b`` in place (``b`` becomes ``x``) by elimination with partial pivoting.

    LU with row pivoting, as LAPACK's ``gesv`` that ``numpy.linalg.solve``
    calls, without its per-call cost on these few-by-few systems. Returns
    False at an exactly zero pivot, where ``gesv`` reports a singular matrix.
    """
    n = len(b)
    for col in range(n):
        pivot_row = col
        for r in range(col + 1, n):
            if abs(A[r, col]) > abs(A[pivot_row, col]):
                pivot_row = r
        if A[pivot_row, col] == 0.0:
            return False
        if pivot_row != col:
            for c in range(n):
                A[col, c], A[pivot_row, c] = A[pivot_row, c], A[col, c]
            b[col], b[pivot_row] = b[pivot_row], b[col]
        for r in range(col + 1, n):
            factor = A[r, col] / A[col, col]
            for c in range(col + 1, n):
                A[r, c] -= factor * A[col, c]
            b[r] -= factor * b[col]
    for r in range(n - 1, -1, -1):
        total = b[r]
        for c in range(r + 1, n):
            total -= A[r, c] * b[c]
        b[r] = total / A[r, r]
    return True


@_jitable
def _solve_on_basis(lcp: np.ndarray, lcp_q: np.ndarray, basic: np.ndarray, z: np.ndarray) -> bool:
    """As ``TimeSteppingStepper._solve_on_previous_basis``: one solve, accepted if a solution."""
    size = len(lcp_q)
    count = 0
    for a in range(size):
        if basic[a]:
            count += 1
    index = np.empty(count, dtype=np.int64)
    count = 0
    for a in range(size):
        if basic[a]:
            index[count] = a
            count += 1
    z[:] = 0.0
    if count:
        sub = np.empty((count, count))
        rhs = np.empty(count)
        for a in range(count):
            rhs[a] = -lcp_q[index[a]]
            for b in range(count):
                sub[a, b] = lcp[index[a], index[b]]
        if not _gauss_solve(sub, rhs):
            return False
        for a in range(count):
            z[index[a]] = rhs[a]
    largest = 0.0
    for a in range(size):
        largest = max(largest, abs(lcp_q[a]))
    tol = 1e-13 * max(1.0, largest)
    for a in range(size):
        if z[a] < 0.0:
            return False
        if not basic[a]:
            w = lcp_q[a]
            for b in range(size):
                w += lcp[a, b] * z[b]
            if w < -tol:
                return False
    return True
