"""Frictionless contacts of a chain in one compiled call: Delassus band and exact LCP.

The time-stepper solves the frictionless contacts of a step whose Delassus
matrix ``W = G M⁻¹ Gᵀ`` is banded (a chain on a rail) exactly: ``W`` in band
storage, then :func:`solver.complementarity.banded_lcp` (block principal
pivoting, Júdice & Pires 1994, one banded Cholesky per pivot). On the numpy
path that is a ``scipy.sparse`` product and a dozen LAPACK calls per step,
each with its Python overhead. :func:`banded_contact_lcp` does the same in
one call, compiled by numba:

* the band of ``W`` from the sparse rows of ``G`` (index/value arrays of
  :class:`solver.contact_arrays.SparseRows`), the bandwidth being that of
  the sparsity pattern, as ``scipy.sparse`` finds it;
* the pivoting of :func:`~solver.complementarity.banded_lcp` step by step
  (same start, same exchange rules, same tolerances), each principal
  submatrix factorised by a banded Cholesky written out here.

The plain function is the reference for the compiled one; both are tested
against :func:`~solver.complementarity.banded_lcp`. The loop of
:mod:`solver.timestep_kernels` compiles these functions into itself; numba's
disk cache of that loop is keyed on its own file only, so after editing this
one clear ``solver/__pycache__/timestep_kernels*.nb*``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from numba.extending import register_jitable as _jitable

SOLVED, TOO_WIDE, SINGULAR, ITERATION_LIMIT = 0, 1, 2, 3
"""Outcomes of :func:`banded_contact_lcp`."""


@_jitable
def delassus_band(
    g_cols: np.ndarray, g_vals: np.ndarray, m_inv: np.ndarray, band_max: int, band: np.ndarray
) -> int:
    """``W = G M⁻¹ Gᵀ`` of ``K`` contacts in upper band storage; returns the bandwidth.

    Parameters
    ----------
    g_cols, g_vals : numpy.ndarray, shape (K, W)
        Sparse rows of ``G`` (zero values are padding).
    m_inv : numpy.ndarray, shape (N,)
        Inverse masses and inertias.
    band_max : int
        Widest band stored.
    band : numpy.ndarray, shape (band_max + 1, K)
        Zeros on entry; on exit ``band[band_max + i − j, j] = W[i, j]`` for
        ``i ≤ j ≤ i + b``, ``b`` the bandwidth (its last ``b + 1`` rows are
        the band storage of ``W``).

    Returns
    -------
    int
        The bandwidth ``b``: the largest ``|i − j|`` of two contacts sharing a
        coordinate; −1 when it exceeds ``band_max`` (``band`` is then not filled).
    """
    K, width = g_cols.shape
    N = len(m_inv)
    count = np.zeros(N + 1, dtype=np.int64)
    for k in range(K):
        for w in range(width):
            if g_vals[k, w] != 0.0:
                count[g_cols[k, w] + 1] += 1
    for col in range(N):
        count[col + 1] += count[col]
    start = count.copy()
    touching = np.empty(count[N], dtype=np.int64)
    weight = np.empty(count[N])
    for k in range(K):
        for w in range(width):
            if g_vals[k, w] != 0.0:
                col = g_cols[k, w]
                touching[start[col]] = k
                weight[start[col]] = g_vals[k, w]
                start[col] += 1
    bandwidth = 0
    for col in range(N):
        for a in range(count[col], count[col + 1]):
            for b in range(count[col], count[col + 1]):
                bandwidth = max(bandwidth, abs(touching[a] - touching[b]))
    if bandwidth > band_max:
        return -1
    for col in range(N):
        for a in range(count[col], count[col + 1]):
            for b in range(count[col], count[col + 1]):
                i, j = touching[a], touching[b]
                if i <= j:
                    band[band_max + i - j, j] += weight[a] * m_inv[col] * weight[b]
    return bandwidth


@_jitable
def _entry(band: np.ndarray, i: int, j: int) -> float:
    """``W[i, j]`` of a symmetric matrix in upper band storage (0 outside the band)."""
    b = band.shape[0] - 1
    if i > j:
        i, j = j, i
    if j - i > b:
        return 0.0
    return band[b + i - j, j]


@_jitable
def _solve_principal(
    band: np.ndarray, index: np.ndarray, count: int, rhs: np.ndarray, x: np.ndarray
) -> bool:
    """Solve ``W_FF x = rhs`` on the sorted indices ``index[:count]`` by a banded Cholesky.

    Returns False when ``W_FF`` is not positive definite.
    """
    b = band.shape[0] - 1
    lower = np.zeros((count, b + 1))  # lower[i, i − j] = L[i, j]
    for j in range(count):
        total = _entry(band, index[j], index[j])
        for k in range(max(0, j - b), j):
            total -= lower[j, j - k] * lower[j, j - k]
        if not total > 0.0:
            return False
        pivot = math.sqrt(total)
        lower[j, 0] = pivot
        for i in range(j + 1, min(count, j + b + 1)):
            value = _entry(band, index[i], index[j])
            for k in range(max(0, i - b), j):
                value -= lower[i, i - k] * lower[j, j - k]
            lower[i, i - j] = value / pivot
    for i in range(count):
        value = rhs[i]
        for k in range(max(0, i - b), i):
            value -= lower[i, i - k] * x[k]
        x[i] = value / lower[i, 0]
    for i in range(count - 1, -1, -1):
        value = x[i]
        for k in range(i + 1, min(count, i + b + 1)):
            value -= lower[k, k - i] * x[k]
        x[i] = value / lower[i, 0]
    return True


@_jitable
def banded_bpp(band: np.ndarray, q: np.ndarray, free: np.ndarray, z: np.ndarray) -> int:
    """Block principal pivoting as :func:`solver.complementarity.banded_lcp`.

    ``band`` is ``W`` in upper band storage, ``free`` (bool, changed) the
    starting guess of ``z > 0``, ``z`` the output. Returns ``SOLVED``,
    ``SINGULAR`` (a principal submatrix is not positive definite) or
    ``ITERATION_LIMIT``.
    """
    n = len(q)
    b = band.shape[0] - 1
    max_iter = max(50, 2 * n)
    scale = np.finfo(np.float64).tiny
    for i in range(n):
        scale = max(scale, abs(q[i]))
    tol = 1e-12 * scale
    best_count, tries_left = n + 1, 3
    index = np.empty(n, dtype=np.int64)
    rhs = np.empty(n)
    x = np.empty(n)
    w = np.empty(n)
    infeasible = np.empty(n, dtype=np.int64)
    for _ in range(max_iter):
        count = 0
        for i in range(n):
            z[i] = 0.0
            if free[i]:
                index[count] = i
                rhs[count] = -q[i]
                count += 1
        if count:
            if not _solve_principal(band, index, count, rhs, x):
                return SINGULAR
            for a in range(count):
                z[index[a]] = x[a]
        for i in range(n):
            total = band[b, i] * z[i]
            for k in range(1, b + 1):
                if i + k < n:
                    total += band[b - k, i + k] * z[i + k]
                if i - k >= 0:
                    total += band[b - k, i] * z[i - k]
            w[i] = 0.0 if free[i] else total + q[i]
        n_bad = 0
        for i in range(n):
            if (free[i] and z[i] < -tol) or (not free[i] and w[i] < -tol):
                infeasible[n_bad] = i
                n_bad += 1
        if n_bad == 0:
            for i in range(n):
                z[i] = max(z[i], 0.0)
            return SOLVED
        if n_bad < best_count:
            best_count, tries_left = n_bad, 3
            for a in range(n_bad):
                free[infeasible[a]] = not free[infeasible[a]]
        elif tries_left > 0:
            tries_left -= 1
            for a in range(n_bad):
                free[infeasible[a]] = not free[infeasible[a]]
        else:
            free[infeasible[n_bad - 1]] = not free[infeasible[n_bad - 1]]
    return ITERATION_LIMIT


@_jitable
def banded_contact_lcp(
    g_cols: np.ndarray, g_vals: np.ndarray, m_inv: np.ndarray, q: np.ndarray,
    free: np.ndarray, band_max: int, z: np.ndarray,
) -> int:  # fmt: skip
    """Normal impulses ``z`` (N·s) of frictionless contacts with a banded ``W``.

    Solves ``z ≥ 0 ⊥ W z + q ≥ 0`` with ``W = G M⁻¹ Gᵀ`` (:func:`delassus_band`)
    by :func:`banded_bpp` from the guess ``free`` (bool, changed).

    Returns
    -------
    int
        ``SOLVED``; ``TOO_WIDE`` (bandwidth above ``band_max``), ``SINGULAR``
        or ``ITERATION_LIMIT``, where the caller decides otherwise.
    """
    band_store = np.zeros((band_max + 1, len(q)))
    bandwidth = delassus_band(g_cols, g_vals, m_inv, band_max, band_store)
    if bandwidth < 0:
        return TOO_WIDE
    band = band_store[band_max - bandwidth :, :].copy()
    return banded_bpp(band, q, free, z)


@functools.cache
def compiled_banded_contact_lcp() -> Callable[..., int]:
    """:func:`banded_contact_lcp` compiled by numba (made on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True)(banded_contact_lcp)
