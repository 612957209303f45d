"""The ``sequential`` impact law: one constraint at a time, Newton's law with its effective mass
(dense, and sparse for long chains), the fastest approach first; an infinite converging tail
is summed in closed form (:mod:`solver.impact_tail`). Called by
:func:`solver.impact.resolve_impact`.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from solver.impact_problem import (
    TIE_TOLERANCE,
    ImpactStage,
    _Budget,
    _ImpactProblem,
)
from solver.impact_tail import (
    _column_combination,
    _tail_impulse,
    _tail_set,
)


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
        else:
            lam_i = -u[i] / diagonal[i]
            total = np.array([(1.0 + problem.e[i]) * lam_i])
            collisions.append(cols, np.array([lam_i]), total, np.zeros(1))
            v += _column_combination(problem.MinvG, cols, total)
            u += _column_combination(W_columns, cols, total)
        history.append(i)
        if len(history) >= next_tail_check:
            next_tail_check = int(1.25 * next_tail_check) + 1
            tail = _friction_tail if problem.has_friction else _sum_infinite_tail
            jumped = tail(problem, v, u, history, collisions)
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
