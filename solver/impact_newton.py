"""The ``newton`` impact law: Moreau's law ``0 <= Λ ⊥ u_n⁺ + e u_n⁻ >= 0`` on the constraints
that do not separate, repeated while another one is left approaching; rounds that repeat a
pattern followed in closed form. Called by :func:`solver.impact.resolve_impact`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import solve_triangular

from solver.impact_problem import (
    ImpactStage,
    _Budget,
    _ImpactProblem,
)
from solver.impact_tail import (
    _column_combination,
    _tail_impulse,
)


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
