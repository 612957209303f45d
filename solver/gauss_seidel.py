"""Projected Gauss–Seidel for the contact impulses of a time step (Moreau–Jean's NSGS).

Given the sparse rows ``G`` and ``H`` of ``K`` contacts (``u_n = G·v``,
``u_t = H·v``), a diagonal mass matrix and the free velocity, the impulses
``Λ_n`` (normal) and ``Λ_t`` (tangential) of the step satisfy, contact by
contact, Moreau's velocity-level Newton law with Coulomb's friction:

    Λ_n ≥ 0  ⊥  u_n⁺ + b_n ≥ 0                      (b_n = e u_n⁻)
    |Λ_t| ≤ μ Λ_n,   u_t⁺ = 0 where |Λ_t| < μ Λ_n,  else Λ_t = −μ Λ_n sign(u_t⁺)

with ``v⁺ = v_free + M⁻¹ (Gᵀ Λ_n + Hᵀ Λ_t)``. Each sweep visits the contacts
in order and solves each one's law with the others frozen (Jean & Moreau's
non-smooth Gauss–Seidel; Jourdan, Alart & Jean 1998), updating ``v``
in place: the normal impulse is the projection on ``Λ_n ≥ 0`` of the value
that closes the normal speed, the tangential one the projection on the
friction interval of the value that stops the slip (exact for one disk
contact alone, whose rows are M-orthogonal: ``G M⁻¹ Hᵀ = n·t/m = 0``;
several coupled frictional contacts have no convergence guarantee, which
is why ``max_sweeps`` bounds the work). The sweeps stop when
no impulse changed by more than ``tol`` times the largest impulse, or after
``max_sweeps``.

:func:`reference_sweeps` is the loop as written; :func:`sweeps` is that
function compiled by numba (a dependency: docs/INSTALL.md) and cached on
disk. Tests check that the two agree.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np


def reference_sweeps(
    g_cols: np.ndarray,
    g_vals: np.ndarray,
    h_cols: np.ndarray,
    h_vals: np.ndarray,
    m_inv: np.ndarray,
    bias_n: np.ndarray,
    mu: np.ndarray,
    w_nn: np.ndarray,
    w_tt: np.ndarray,
    lam_n: np.ndarray,
    lam_t: np.ndarray,
    v: np.ndarray,
    tol: float,
    max_sweeps: int,
) -> int:
    """Projected Gauss–Seidel sweeps; updates ``lam_n``, ``lam_t`` and ``v`` in place.

    Parameters
    ----------
    g_cols, g_vals, h_cols, h_vals : numpy.ndarray, shape (K, W)
        Sparse rows of ``G`` and ``H`` (:class:`solver.contact_arrays.SparseRows`).
    m_inv : numpy.ndarray, shape (N,)
        Inverse masses and inertias (1/kg, 1/(kg·m²)).
    bias_n : numpy.ndarray, shape (K,)
        ``e u_n⁻`` (m/s): the law asks ``u_n⁺ + bias_n ≥ 0``.
    mu : numpy.ndarray, shape (K,)
        Friction coefficients (0: no tangential unknown).
    w_nn, w_tt : numpy.ndarray, shape (K,)
        Diagonals of the Delassus operator ``G M⁻¹ Gᵀ`` and ``H M⁻¹ Hᵀ`` (1/kg), > 0.
    lam_n, lam_t : numpy.ndarray, shape (K,)
        Impulses (N·s): the starting guess on entry, the result on exit.
    v : numpy.ndarray, shape (N,)
        ``v_free + M⁻¹ (Gᵀ lam_n + Hᵀ lam_t)`` on entry (m/s), kept so.
    tol : float
        Relative change of the impulses at which the sweeps stop.
    max_sweeps : int
        Most sweeps.

    Returns
    -------
    int
        The number of sweeps made.
    """
    K, Wg = g_cols.shape
    Wh = h_cols.shape[1]
    for sweep in range(1, max_sweeps + 1):
        change = 0.0
        largest = 0.0
        for k in range(K):
            u = bias_n[k]
            for w in range(Wg):
                u += g_vals[k, w] * v[g_cols[k, w]]
            new = max(0.0, lam_n[k] - u / w_nn[k])
            delta = new - lam_n[k]
            if delta != 0.0:
                lam_n[k] = new
                for w in range(Wg):
                    col = g_cols[k, w]
                    v[col] += m_inv[col] * g_vals[k, w] * delta
            change = max(change, abs(delta))
            largest = max(largest, new)
            if mu[k] > 0.0:
                u = 0.0
                for w in range(Wh):
                    u += h_vals[k, w] * v[h_cols[k, w]]
                bound = mu[k] * lam_n[k]
                new = min(bound, max(-bound, lam_t[k] - u / w_tt[k]))
                delta = new - lam_t[k]
                if delta != 0.0:
                    lam_t[k] = new
                    for w in range(Wh):
                        col = h_cols[k, w]
                        v[col] += m_inv[col] * h_vals[k, w] * delta
                change = max(change, abs(delta))
        if change <= tol * largest:
            return sweep
    return max_sweeps


@functools.cache
def _kernel() -> Callable[..., int]:
    """The compiled kernel, made on first use (importing numba takes a while)."""
    import numba

    return numba.njit(cache=True)(reference_sweeps)


def sweeps(*args) -> int:
    """:func:`reference_sweeps` (same arguments), compiled by numba."""
    return _kernel()(*args)
