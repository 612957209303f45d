"""Moreau–Jean steps of a small scene in one compiled loop (the ``fast`` extra: numba).

A step of :class:`solver.timestepping.TimeSteppingStepper` in plain Python
and numpy costs tens of microseconds before any contact is met: a few dozen
numpy calls of about a microsecond each. For a scene of a few disks and
boundary features (paper 004's wheel) that overhead, not arithmetic, is the
cost. :func:`quiet_steps` runs many steps of such a scene in one call, doing
what the stepper's numpy path does, step by step and in the same order:

* the free velocity under the constant weights, ``v_free = v + h M⁻¹ f``;
* the kinematics (MECHANICS §1) of every disk–feature and disk–disk pair at
  mid-step ``q_θ`` (:mod:`solver.contact_arrays`: segment, vertex, arc,
  disk), closed where ``g + (θ − 1/2) h u_n ≤ GAP_TOL``;
* the exact LCP of the closed contacts with the 2-edge friction cone, on the
  coordinates they touch: a linear solve on the previous step's basis when
  it is still a solution, else Lemke's method with the lexicographic ratio
  test and the same polishing as :func:`solver.complementarity.lemke`
  (:func:`lemke_solve` is a line-by-line transcription, tested equal);
* the velocity and position update and the work of the impulses.

It stops *before* any step that asks for more than that — an impact (which
has events and frames to write), more than ``exact_limit`` closed contacts,
an LCP without solution, a non-finite state — and returns how many steps it
made; the stepper makes that step on its numpy path and calls the loop
again. Which scenes qualify (disks only, constant applied forces, few pairs)
is decided by :func:`kernel_scene`.

:func:`quiet_steps` is plain Python (the reference, run as such by the tests
when numba is missing) compiled by numba when it is installed; the helpers
it calls are marked with numba's ``register_jitable`` so that the compiled
loop compiles them too, and are plain functions otherwise.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from solver.chain_lcp import SOLVED, banded_contact_lcp
from solver.kernel_kinematics import _disk_motion, _pair_kinematics
from solver.kernel_lemke import _solve_on_basis, lemke_solve
from solver.kernel_tables import (
    ARC,
    COMPILED,
    CUT,
    DISK,
    DONE,
    IMPACT,
    KERNEL_PAIRS,
    NEEDS_STEPPER,
    REPORT_COLUMNS,
    SEGMENT,
    VERTEX,
    KernelScene,
    kernel_scene,
)
from solver.kernel_tables import jitable as _jitable

__all__ = [
    "ARC",
    "COMPILED",
    "CUT",
    "DISK",
    "DONE",
    "IMPACT",
    "KERNEL_PAIRS",
    "NEEDS_STEPPER",
    "REPORT_COLUMNS",
    "SEGMENT",
    "VERTEX",
    "KernelScene",
    "compiled_quiet_steps",
    "kernel_scene",
    "lemke_solve",
    "quiet_steps",
]


# ---------------------------------------------------------------------- steps


@_jitable
def _contact_lcp(
    n: int, rows_g_cols: np.ndarray, rows_g_vals: np.ndarray, rows_h_cols: np.ndarray,
    rows_h_vals: np.ndarray, restitution: np.ndarray, friction: np.ndarray, keys: np.ndarray,
    m_inv: np.ndarray, v: np.ndarray, v_free: np.ndarray, basis_keys: np.ndarray,
    basis: np.ndarray, basis_state: np.ndarray, impulse_n: np.ndarray, impulse_t: np.ndarray,
    v_next: np.ndarray,
) -> int:  # fmt: skip
    """The exact LCP of ``n`` closed contacts, as ``TimeSteppingStepper._solve_contact_lcp``.

    ``basis_keys``, ``basis`` and ``basis_state = (count, size)`` hold the
    last basis (count −1: none). Returns 0, or 1 when Lemke finds no
    solution (the stepper then makes the step and reports it).
    """
    N = len(m_inv)
    used = np.zeros(N, dtype=np.bool_)
    for k in range(n):
        for w in range(rows_g_cols.shape[1]):
            used[rows_g_cols[k, w]] = True
        for w in range(rows_h_cols.shape[1]):
            used[rows_h_cols[k, w]] = True
    n_dofs = 0
    local = np.full(N, -1, dtype=np.int64)
    for col in range(N):
        if used[col]:
            local[col] = n_dofs
            n_dofs += 1
    dofs = np.empty(n_dofs, dtype=np.int64)
    for col in range(N):
        if used[col]:
            dofs[local[col]] = col
    m = 0
    for k in range(n):
        if friction[k] > 0.0:
            m += 1
    rubbing = np.empty(m, dtype=np.int64)
    m = 0
    for k in range(n):
        if friction[k] > 0.0:
            rubbing[m] = k
            m += 1
    G = np.zeros((n_dofs, n))
    H_all = np.zeros((n_dofs, n))
    for k in range(n):
        for w in range(rows_g_cols.shape[1]):
            G[local[rows_g_cols[k, w]], k] += rows_g_vals[k, w]
        for w in range(rows_h_cols.shape[1]):
            H_all[local[rows_h_cols[k, w]], k] += rows_h_vals[k, w]
    cols = n + 2 * m
    B = np.zeros((n_dofs, cols))
    for r in range(n_dofs):
        for k in range(n):
            B[r, k] = G[r, k]
        for a in range(m):
            B[r, n + a] = H_all[r, rubbing[a]]
            B[r, n + m + a] = -H_all[r, rubbing[a]]
    m_local = np.empty(n_dofs)
    for r in range(n_dofs):
        m_local[r] = m_inv[dofs[r]]
    size = n + 3 * m
    lcp = np.zeros((size, size))
    for a in range(cols):
        for b in range(cols):
            total = 0.0
            for r in range(n_dofs):
                total += B[r, a] * (m_local[r] * B[r, b])
            lcp[a, b] = total
    for a in range(m):
        lcp[n + a, n + 2 * m + a] = 1.0
        lcp[n + m + a, n + 2 * m + a] = 1.0
        lcp[n + 2 * m + a, n + a] = -1.0
        lcp[n + 2 * m + a, n + m + a] = -1.0
        lcp[n + 2 * m + a, rubbing[a]] = friction[rubbing[a]]
    lcp_q = np.zeros(size)
    all_open = True
    for k in range(n):
        free_speed, pre_speed = 0.0, 0.0
        for r in range(n_dofs):
            free_speed += G[r, k] * v_free[dofs[r]]
            pre_speed += G[r, k] * v[dofs[r]]
        lcp_q[k] = free_speed + restitution[k] * pre_speed
        if lcp_q[k] < 0.0:
            all_open = False
    for a in range(m):
        slip = 0.0
        for r in range(n_dofs):
            slip += H_all[r, rubbing[a]] * v_free[dofs[r]]
        lcp_q[n + a] = slip
        lcp_q[n + m + a] = -slip
    impulse_n[:n] = 0.0
    impulse_t[:n] = 0.0
    v_next[:] = v_free
    if all_open:
        basis_state[0] = -1
        return 0
    largest = 0.0
    for a in range(size):
        largest = max(largest, abs(lcp_q[a]))
    tol = 1e-13 * max(1.0, largest)
    for a in range(size):
        if abs(lcp_q[a]) <= tol:
            lcp_q[a] = 0.0
    z = np.zeros(size)
    found = False
    if basis_state[0] == n and basis_state[1] == size:
        same = True
        for k in range(n):
            if basis_keys[k] != keys[k]:
                same = False
        if same:
            found = _solve_on_basis(lcp, lcp_q, basis[:size], z)
    if not found:
        if lemke_solve(lcp, lcp_q, z) != 0:
            return 1
    basis_state[0], basis_state[1] = n, size
    for k in range(n):
        basis_keys[k] = keys[k]
    for a in range(size):
        basis[a] = z[a] > 0.0
    for r in range(n_dofs):
        total = 0.0
        for a in range(cols):
            total += B[r, a] * z[a]
        v_next[dofs[r]] += m_local[r] * total
    for k in range(n):
        impulse_n[k] = z[k]
    for a in range(m):
        impulse_t[rubbing[a]] = z[n + a] - z[n + m + a]
    return 0


@_jitable
def _banded_contacts(
    n: int, g_cols: np.ndarray, g_vals: np.ndarray, restitution: np.ndarray,
    friction: np.ndarray, closed_pairs: np.ndarray, warm: np.ndarray, m_inv: np.ndarray,
    v: np.ndarray, v_free: np.ndarray, band_max: int, impulse_n: np.ndarray,
    impulse_t: np.ndarray, v_next: np.ndarray,
) -> bool:  # fmt: skip
    """As ``TimeSteppingStepper._solve_banded``: frictionless contacts of a banded ``W``.

    Starts from the contacts that pressed at the last step they were closed
    (``warm``, by pair; updated), new ones from those not separating.
    Returns False when the contacts rub, the band is too wide or the
    pivoting fails (the stepper's Gauss–Seidel decides then).
    """
    for a in range(n):
        if friction[a] > 0.0:
            return False
    q = np.empty(n)
    free = np.empty(n, dtype=np.bool_)
    largest = 1.0
    for a in range(n):
        free_speed, pre_speed = 0.0, 0.0
        for w in range(g_cols.shape[1]):
            free_speed += g_vals[a, w] * v_free[g_cols[a, w]]
            pre_speed += g_vals[a, w] * v[g_cols[a, w]]
        q[a] = free_speed + restitution[a] * pre_speed
        largest = max(largest, abs(q[a]))
    for a in range(n):
        if abs(q[a]) <= 1e-13 * largest:  # round-off speeds are 0, as on the numpy path
            q[a] = 0.0
        state = warm[closed_pairs[a]]
        free[a] = q[a] <= 0.0 if state == 0 else state == 1
    z = np.zeros(n)
    if banded_contact_lcp(g_cols[:n], g_vals[:n], m_inv, q, free, band_max, z) != SOLVED:
        return False
    push = np.zeros(len(m_inv))
    for a in range(n):
        impulse_n[a], impulse_t[a] = z[a], 0.0
        warm[closed_pairs[a]] = 1 if z[a] > 0.0 else 2
        for w in range(g_cols.shape[1]):
            push[g_cols[a, w]] += g_vals[a, w] * z[a]
    for r in range(len(m_inv)):
        v_next[r] = v_free[r] + m_inv[r] * push[r]
    return True


def quiet_steps(
    q: np.ndarray, v: np.ndarray, first_h: float, h: float, n_steps: int, theta: float,
    dissipated: float, accel: np.ndarray, m_inv: np.ndarray, ix: np.ndarray, iy: np.ndarray,
    iphi: np.ndarray,
    radius: np.ndarray, rail_y: np.ndarray, pair_kind: np.ndarray, pair_i: np.ndarray,
    pair_j: np.ndarray, feature_a: np.ndarray, feature_b: np.ndarray, feature_arc: np.ndarray,
    feature_restitution: np.ndarray, feature_friction: np.ndarray, disk_restitution: float,
    disk_friction: float, key_stride: int, candidate_centres: np.ndarray,
    candidate_margin: float, exact_limit: int, lemke_only: bool, band_max: int,
    gap_tol: float, detect: bool, cut_speed: float, impact_speed_steps: float,
    basis_keys: np.ndarray,
    basis: np.ndarray, basis_state: np.ndarray, report: np.ndarray, report_pair: np.ndarray,
    report_impact: np.ndarray, hit_pairs: np.ndarray, q_prev: np.ndarray, v_prev: np.ndarray,
    status: np.ndarray,
) -> float:  # fmt: skip
    """Up to ``n_steps`` Moreau–Jean steps, the first of length ``first_h`` (s, ≥ 0: the rest
    of a step cut at an impact, or a piece of one), the others ``h``; ``q`` and ``v`` are
    updated in place.

    The arguments after ``dissipated`` are the fields of :class:`KernelScene`
    (the pairs: all of a small scene's, or the stepper's candidates), the
    centres where the candidates were searched and their margin (m; ``inf``
    for all pairs: a step that may close a pair that is not a candidate is
    left to the stepper), and the stepper's settings (``EXACT_CONTACTS``,
    ``contact_solver == "lemke"``, ``BAND_MAX``, the gap at or below which a
    contact is closed, whether to look for closing pairs, ``CUT_SPEED``,
    ``IMPACT_SPEED_STEPS``).
    ``h`` may be 0: a step of length zero is Moreau's impact law alone, and
    every contact it presses is an impact. Up to ``exact_limit`` closed contacts are
    solved exactly (Lemke); more, when frictionless, by
    :func:`solver.chain_lcp.banded_contact_lcp`; otherwise the stepper decides.

    ``basis_keys`` (``exact_limit``), ``basis`` (``4 exact_limit``) and
    ``basis_state`` (2) keep the last LCP basis from call to call
    (``basis_state[0] = −1``: none). Of the last step made, ``report``
    (pairs × ``REPORT_COLUMNS``), ``report_pair`` and ``report_impact``
    receive the closed contacts (their pair index and whether each is an
    impact) and ``q_prev``, ``v_prev`` the state at its start. With
    ``detect``, the loop stops before a step in which a pair with a wheel,
    open at its start, closes (as ``timestep_contacts.closing`` predicts it,
    from the kinematics at ``q_θ``): ``hit_pairs`` receives those pairs.

    Returns
    -------
    float
        The dissipated energy (J) after the steps made, from ``dissipated``
        minus the work of the persistent contacts' impulses, step by step
        (not of an ``IMPACT`` step: the stepper accounts it with its events).
        ``status`` (int array of 4) receives the outcome (``DONE``,
        ``NEEDS_STEPPER``, ``IMPACT`` or ``CUT``), the number of steps made,
        the number of closed contacts of the last one and of closing pairs.
    """
    N = len(q)
    D = len(ix)
    P = len(pair_kind)
    n_features = len(feature_restitution)
    capacity = max(P, 1)
    kin = np.empty(8)
    warm = np.zeros(capacity, dtype=np.int8)  # per pair: 0 unknown, 1 pressed, 2 did not
    table = np.empty((P, 8))
    valid_pair = np.zeros(P, dtype=np.bool_)
    c = np.empty((D, 2))
    cd = np.empty((D, 2))
    omega = np.empty(D)
    g_cols = np.zeros((capacity, 4), dtype=np.int64)
    g_vals = np.zeros((capacity, 4))
    h_cols = np.zeros((capacity, 6), dtype=np.int64)
    h_vals = np.zeros((capacity, 6))
    restitution = np.empty(capacity)
    friction = np.empty(capacity)
    keys = np.empty(capacity, dtype=np.int64)
    gamma_n = np.empty(capacity)
    impulse_n = np.empty(capacity)
    impulse_t = np.empty(capacity)
    closed_pairs = np.empty(P, dtype=np.int64)
    q_theta = np.empty(N)
    v_free = np.empty(N)
    v_next = np.empty(N)
    status[0], status[1], status[2], status[3] = DONE, 0, 0, 0
    for step in range(n_steps):
        hk = first_h if step == 0 else h
        lead = (theta - 0.5) * hk
        before, after = (1.0 - theta) * hk, theta * hk
        dissipated_before = dissipated
        any_impact = False
        for r in range(N):
            q_theta[r] = q[r] + (1.0 - theta) * hk * v[r]
            v_free[r] = v[r] + hk * accel[r]
        fastest = 0.0
        for k in range(D):
            omega[k] = _disk_motion(k, q_theta, v, ix, iy, iphi, rail_y, c[k], cd[k])
            fastest = max(fastest, cd[k, 0] * cd[k, 0] + cd[k, 1] * cd[k, 1])
        closing_speed = 2.0 * math.sqrt(fastest)
        round_off = 1e-13 * closing_speed
        if candidate_margin < math.inf:
            moved = 0.0
            for k in range(D):
                dx, dy = c[k, 0] - candidate_centres[k, 0], c[k, 1] - candidate_centres[k, 1]
                moved = max(moved, dx * dx + dy * dy)
            if 2.0 * math.sqrt(moved) >= candidate_margin - (gap_tol + hk * closing_speed):
                status[0], status[1], status[2] = NEEDS_STEPPER, step, 0
                return dissipated
        n = 0
        n_hits = 0
        for p in range(P):
            i, j = pair_i[p], pair_j[p]
            if pair_kind[p] == DISK:
                valid = _pair_kinematics(
                    DISK, c[i], cd[i], omega[i], radius[i], c[j], cd[j], omega[j], radius[j],
                    c[j], c[j], kin, kin,
                )  # fmt: skip
            else:
                valid = _pair_kinematics(
                    pair_kind[p], c[i], cd[i], omega[i], radius[i], c[i], cd[i], 0.0, 0.0,
                    feature_a[j], feature_b[j], feature_arc[j], kin,
                )  # fmt: skip
            valid_pair[p] = valid
            table[p] = kin
            if valid and kin[0] + lead * kin[5] <= gap_tol:
                closed_pairs[n] = p
                n += 1
            if detect and valid and (iy[i] >= 0 or (pair_kind[p] == DISK and iy[j] >= 0)):
                ax = accel[ix[i]]
                ay = accel[iy[i]] if iy[i] >= 0 else 0.0
                if pair_kind[p] == DISK:
                    ax -= accel[ix[j]]
                    ay -= accel[iy[j]] if iy[j] >= 0 else 0.0
                a_n = kin[1] * ax + kin[2] * ay + kin[7]
                start = kin[0] - before * kin[5] + 0.5 * before * before * a_n
                end = kin[0] + after * kin[5] + 0.5 * after * after * a_n
                if start > gap_tol and end <= gap_tol and kin[5] < -cut_speed * closing_speed:
                    hit_pairs[n_hits] = p
                    n_hits += 1
        if n_hits:
            status[0], status[1], status[2], status[3] = CUT, step, 0, n_hits
            return dissipated
        if n == 0:
            for r in range(N):
                v_next[r] = v_free[r]
        else:
            for a in range(n):
                p = closed_pairs[a]
                i, j = pair_i[p], pair_j[p]
                nx, ny = table[p, 1], table[p, 2]
                tx, ty = ny, -nx
                g_cols[a, :] = ix[i]
                g_vals[a, :] = 0.0
                h_cols[a, :] = ix[i]
                h_vals[a, :] = 0.0
                g_cols[a, 0], g_vals[a, 0] = ix[i], nx
                h_cols[a, 0], h_vals[a, 0] = ix[i], tx
                if iy[i] >= 0:
                    g_cols[a, 1], g_vals[a, 1] = iy[i], ny
                    h_cols[a, 1], h_vals[a, 1] = iy[i], ty
                    h_cols[a, 2], h_vals[a, 2] = iphi[i], radius[i]
                if pair_kind[p] == DISK:
                    g_cols[a, 2], g_vals[a, 2] = ix[j], -nx
                    g_cols[a, 3] = ix[j]
                    h_cols[a, 3], h_vals[a, 3] = ix[j], -tx
                    h_cols[a, 4] = ix[j]
                    h_cols[a, 5] = ix[j]
                    if iy[j] >= 0:
                        g_cols[a, 3], g_vals[a, 3] = iy[j], -ny
                        h_cols[a, 4], h_vals[a, 4] = iy[j], -ty
                        h_cols[a, 5], h_vals[a, 5] = iphi[j], radius[j]
                    restitution[a], friction[a] = disk_restitution, disk_friction
                    keys[a] = i * key_stride + n_features + j
                else:
                    restitution[a] = feature_restitution[j]
                    friction[a] = feature_friction[j]
                    keys[a] = i * key_stride + j
                gamma_n[a] = table[p, 7]
            if n <= exact_limit:
                if _contact_lcp(
                    n, g_cols, g_vals, h_cols, h_vals, restitution, friction, keys, m_inv, v,
                    v_free, basis_keys, basis, basis_state, impulse_n, impulse_t, v_next,
                ) != 0:  # fmt: skip
                    status[0], status[1], status[2] = NEEDS_STEPPER, step, 0
                    return dissipated
            elif lemke_only or not _banded_contacts(
                n, g_cols, g_vals, restitution, friction, closed_pairs, warm, m_inv, v, v_free,
                band_max, impulse_n, impulse_t, v_next,
            ):  # fmt: skip
                status[0], status[1], status[2] = NEEDS_STEPPER, step, 0
                return dissipated
            work_sum = 0.0
            for a in range(n):
                u_n0, u_n1, u_t0, u_t1, normal_accel = 0.0, 0.0, 0.0, 0.0, 0.0
                for w in range(4):
                    u_n0 += g_vals[a, w] * v[g_cols[a, w]]
                    u_n1 += g_vals[a, w] * v_next[g_cols[a, w]]
                    normal_accel += g_vals[a, w] * accel[g_cols[a, w]]
                for w in range(6):
                    u_t0 += h_vals[a, w] * v[h_cols[a, w]]
                    u_t1 += h_vals[a, w] * v_next[h_cols[a, w]]
                work = 0.5 * (impulse_n[a] * (u_n0 + u_n1) + impulse_t[a] * (u_t0 + u_t1))
                smooth_speed = impact_speed_steps * hk * (abs(normal_accel) + abs(gamma_n[a]))
                pressing = impulse_n[a] > 0.0
                report_impact[a] = pressing and (hk == 0.0 or -u_n0 > smooth_speed + round_off)
                any_impact = any_impact or report_impact[a]
                if pressing:
                    work_sum += work
                p = closed_pairs[a]
                report_pair[a] = p
                report[a, 0], report[a, 1] = impulse_n[a], impulse_t[a]
                report[a, 2], report[a, 3], report[a, 4], report[a, 5] = u_n0, u_n1, u_t0, u_t1
                report[a, 6] = work
                report[a, 7], report[a, 8] = table[p, 3], table[p, 4]
                report[a, 9], report[a, 10] = table[p, 1], table[p, 2]
                report[a, 11] = friction[a]
            if not any_impact:
                dissipated = dissipated_before - work_sum
        for r in range(N):
            q_theta[r] = q[r] + hk * ((1.0 - theta) * v[r] + theta * v_next[r])
            if not (math.isfinite(q_theta[r]) and math.isfinite(v_free[r])):
                status[0], status[1], status[2] = NEEDS_STEPPER, step, 0
                return dissipated_before
        status[2] = n
        if n and any_impact:
            q_prev[:] = q
            v_prev[:] = v
        q[:] = q_theta
        v[:] = v_next
        if n and any_impact:
            status[0], status[1] = IMPACT, step + 1
            return dissipated
    status[0], status[1] = DONE, n_steps
    return dissipated


@functools.cache
def compiled_quiet_steps() -> Callable[..., float]:
    """:func:`quiet_steps` compiled by numba (made on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True)(quiet_steps)
