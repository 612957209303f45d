"""Infinite converging tails of impacts in closed form: the constraints hit again and again
with ``e < 1`` (the ``sequential`` law's collisions, the ``newton`` law's rounds) and their
total impulse, the limit of the geometric series.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from solver.complementarity import (
    minimum_norm_nonnegative,
)
from solver.errors import SolverError
from solver.impact_problem import _ImpactProblem


def _column_combination(matrix, cols: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``matrix[:, cols] @ weights`` for a dense or CSC matrix, touching only those columns."""
    if sp.issparse(matrix):
        out = np.zeros(matrix.shape[0])
        for c, weight in zip(cols, weights, strict=True):
            lo, hi = matrix.indptr[c], matrix.indptr[c + 1]
            out[matrix.indices[lo:hi]] += weight * matrix.data[lo:hi]
        return out
    return matrix[:, cols] @ weights


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
