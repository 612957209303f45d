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
import importlib.util
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from solver.chain_lcp import SOLVED, banded_contact_lcp
from solver.geometry import Arc, Segment, Vertex

if TYPE_CHECKING:
    from solver.system import System

COMPILED = importlib.util.find_spec("numba") is not None
"""True when numba is installed: :func:`compiled_quiet_steps` is then compiled."""

if COMPILED:
    from numba.extending import register_jitable as _jitable
else:

    def _jitable(function):
        return function


KERNEL_PAIRS = 64
"""Most disk–feature plus disk–disk pairs for which a scene is stepped by the loop (it
looks at every pair at every step)."""

SEGMENT, VERTEX, ARC, DISK = 0, 1, 2, 3
"""Kinds of a pair in the loop's tables."""

DONE, NEEDS_STEPPER, IMPACT, CUT = 0, 1, 2, 3
"""Outcomes of :func:`quiet_steps`: all steps made; the next step is the stepper's; the
last step made had an impact (its events and frames are the stepper's to write); a pair
closes within the next step (the stepper cuts it at the closing instant)."""

REPORT_COLUMNS = 12
"""Columns of the report of a step's closed contacts: ``Λ_n``, ``Λ_t`` (N·s), ``u_n`` at
the start and end, ``u_t`` at the start and end (m/s), work of the impulses (J), contact
point (2, m), normal (2), friction coefficient."""


@dataclass(frozen=True, eq=False)
class KernelScene:
    """A scene as the loop's tables (see :func:`kernel_scene`).

    Attributes
    ----------
    accel : numpy.ndarray, shape (N,)
        ``M⁻¹ f``, the constant applied acceleration (m/s², rad/s²).
    m_inv : numpy.ndarray, shape (N,)
        Inverse masses and inertias (1/kg, 1/(kg·m²)).
    ix, iy, iphi : numpy.ndarray of int, shape (D,)
        Coordinates of each disk in ``q`` (−1: none, a bead's ``y`` and ``phi``).
    radius, rail_y : numpy.ndarray, shape (D,)
        Radii and the beads' rail heights (m).
    pair_kind, pair_i, pair_j : numpy.ndarray of int, shape (P,)
        With ``all_pairs``, every pair: its kind (``SEGMENT`` … ``DISK``),
        its disk and the other disk (``DISK``) or feature index; disk–feature
        pairs first, by disk then feature, then disk pairs ``i < j`` (the
        stepper's order). Empty otherwise: the stepper's candidates are used.
    all_pairs : bool
        The scene has at most ``KERNEL_PAIRS`` pairs, all looked at each step.
    feature_kind : numpy.ndarray of int, shape (F,)
        Kind of each feature.
    feature_a, feature_b : numpy.ndarray, shape (F, 2)
        Segment ends; a vertex's or an arc centre's point in ``feature_a`` (m).
    feature_arc : numpy.ndarray, shape (F, 3)
        Arc radius (m), start and span (rad).
    feature_restitution, feature_friction : numpy.ndarray, shape (F,)
        Contact laws against each feature.
    disk_restitution, disk_friction : float
        Contact law between disks.
    key_stride : int
        Keys of pairs as the stepper makes them: ``i · key_stride + feature``,
        or ``+ n_features + j`` for a disk pair.
    """

    accel: np.ndarray
    m_inv: np.ndarray
    ix: np.ndarray
    iy: np.ndarray
    iphi: np.ndarray
    radius: np.ndarray
    rail_y: np.ndarray
    pair_kind: np.ndarray
    pair_i: np.ndarray
    pair_j: np.ndarray
    all_pairs: bool
    feature_kind: np.ndarray
    feature_a: np.ndarray
    feature_b: np.ndarray
    feature_arc: np.ndarray
    feature_restitution: np.ndarray
    feature_friction: np.ndarray
    disk_restitution: float
    disk_friction: float
    key_stride: int


def kernel_scene(system: System) -> KernelScene | None:
    """The loop's tables of ``system``, or ``None`` when the loop cannot step it.

    It can when every body is a disk (wheel or bead) and the applied force
    is the constant weight (no springs, no forcing). With at most
    ``KERNEL_PAIRS`` disk–feature plus disk–disk pairs the loop looks at
    all of them; otherwise at the stepper's candidate pairs.
    """
    D = system.n_disks
    features = system.features
    disk_dofs = system.disk_dofs
    n_disk_dofs = int(np.sum(disk_dofs.iy >= 0)) * 3 + int(np.sum(disk_dofs.iy < 0))
    if D == 0 or system.has_springs or system.has_forcing or n_disk_dofs != system.N:
        return None
    all_pairs = D * len(features) + D * (D - 1) // 2 <= KERNEL_PAIRS
    F = len(features)
    kinds = {Segment: SEGMENT, Vertex: VERTEX, Arc: ARC}
    feature_a, feature_b, feature_arc = np.zeros((F, 2)), np.zeros((F, 2)), np.zeros((F, 3))
    feature_kind = np.zeros(F, dtype=np.int64)
    for k, (_, feature, _, _) in enumerate(features):
        feature_kind[k] = kinds[type(feature)]
        if isinstance(feature, Segment):
            feature_a[k], feature_b[k] = feature.a, feature.b
        elif isinstance(feature, Vertex):
            feature_a[k] = feature.p
        else:
            feature_a[k] = feature.center
            feature_arc[k] = (feature.radius, feature.start, feature.span)
    kind, first, second = [], [], []
    for i in range(D if all_pairs else 0):
        for f in range(F):
            kind.append(int(feature_kind[f]))
            first.append(i)
            second.append(f)
    for i in range(D if all_pairs else 0):
        for j in range(i + 1, D):
            kind.append(DISK)
            first.append(i)
            second.append(j)
    m_inv = 1.0 / np.asarray(system.M_diag, dtype=float)
    rail_y = system.centres(system.q0)[:, 1]
    return KernelScene(
        accel=m_inv * system.applied_force(0.0, system.q0, system.v0),
        m_inv=m_inv,
        ix=np.asarray(disk_dofs.ix, dtype=np.int64),
        iy=np.asarray(disk_dofs.iy, dtype=np.int64),
        iphi=np.asarray(disk_dofs.iphi, dtype=np.int64),
        radius=np.asarray(system.radii, dtype=float),
        rail_y=np.where(disk_dofs.iy < 0, rail_y, 0.0),
        pair_kind=np.array(kind, dtype=np.int64),
        pair_i=np.array(first, dtype=np.int64),
        pair_j=np.array(second, dtype=np.int64),
        all_pairs=all_pairs,
        feature_kind=feature_kind,
        feature_a=feature_a,
        feature_b=feature_b,
        feature_arc=feature_arc,
        feature_restitution=np.array([e for _, _, e, _ in features], dtype=float),
        feature_friction=np.array([mu for _, _, _, mu in features], dtype=float),
        disk_restitution=float(system.disk_restitution),
        disk_friction=float(system.disk_friction),
        key_stride=F + D,
    )


# ---------------------------------------------------------------------- Lemke


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


# ---------------------------------------------------------------------- kinematics


@_jitable
def _pair_kinematics(
    kind: int, c_i: np.ndarray, cd_i: np.ndarray, rolling_i: float, r_i: float,
    c_j: np.ndarray, cd_j: np.ndarray, rolling_j: float, r_j: float,
    a: np.ndarray, b: np.ndarray, arc: np.ndarray, out: np.ndarray,
) -> bool:  # fmt: skip
    """Kinematics of one pair as :mod:`solver.contact_arrays` computes them.

    ``rolling_i = ω_i`` (and ``ω_j`` of the other disk). Writes
    ``(g, n_x, n_y, point_x, point_y, u_n, u_t, gamma_n)`` to ``out`` and
    returns whether they exist (``valid``).
    """
    curvature = 0.0
    if kind == DISK:
        wx, wy = c_i[0] - c_j[0], c_i[1] - c_j[1]
        d = math.hypot(wx, wy)
        valid = d > 0.0
        nx, ny = (wx / d, wy / d) if d != 0.0 else (0.0, 0.0)
        curvature = 1.0 / d if d != 0.0 else 0.0
        g = d - r_i - r_j
        px, py = c_j[0] + r_j * nx, c_j[1] + r_j * ny
        vx, vy = cd_i[0] - cd_j[0], cd_i[1] - cd_j[1]
        rolling = r_i * rolling_i + r_j * rolling_j
    elif kind == SEGMENT:
        ex, ey = b[0] - a[0], b[1] - a[1]
        length2 = ex * ex + ey * ey
        s = ((c_i[0] - a[0]) * ex + (c_i[1] - a[1]) * ey) / length2
        px, py = a[0] + s * ex, a[1] + s * ey
        wx, wy = c_i[0] - px, c_i[1] - py
        d = math.hypot(wx, wy)
        if d != 0.0:
            nx, ny = wx / d, wy / d
        else:
            length = math.sqrt(length2)
            nx, ny = -ey / length, ex / length
        valid = (s > 0.0) and (s < 1.0)
        g = d - r_i
        vx, vy = cd_i[0], cd_i[1]
        rolling = r_i * rolling_i
    elif kind == VERTEX:
        wx, wy = c_i[0] - a[0], c_i[1] - a[1]
        d = math.hypot(wx, wy)
        valid = d > 0.0
        nx, ny = (wx / d, wy / d) if d != 0.0 else (0.0, 0.0)
        curvature = 1.0 / d if d != 0.0 else 0.0
        g = d - r_i
        px, py = a[0], a[1]
        vx, vy = cd_i[0], cd_i[1]
        rolling = r_i * rolling_i
    else:
        wx, wy = c_i[0] - a[0], c_i[1] - a[1]
        rho = math.hypot(wx, wy)
        ux, uy = (wx / rho, wy / rho) if rho != 0.0 else (0.0, 0.0)
        theta = math.atan2(wy, wx)
        angle = (theta - arc[1]) % (2.0 * math.pi)
        valid = rho > 0.0 and (arc[2] == 2.0 * math.pi or (angle > 0.0 and angle < arc[2]))
        side = 1.0 if rho >= arc[0] else -1.0
        curvature = side * (1.0 / rho if rho != 0.0 else 0.0)
        g = abs(rho - arc[0]) - r_i
        nx, ny = side * ux, side * uy
        px, py = a[0] + arc[0] * ux, a[1] + arc[0] * uy
        vx, vy = cd_i[0], cd_i[1]
        rolling = r_i * rolling_i
    u_n = nx * vx + ny * vy
    ndx, ndy = curvature * (vx - nx * u_n), curvature * (vy - ny * u_n)
    out[0] = g
    out[1], out[2] = nx, ny
    out[3], out[4] = px, py
    out[5] = u_n
    out[6] = (ny * vx - nx * vy) + rolling
    out[7] = vx * ndx + vy * ndy
    return valid


@_jitable
def _disk_motion(
    k: int, q: np.ndarray, v: np.ndarray, ix: np.ndarray, iy: np.ndarray, iphi: np.ndarray,
    rail_y: np.ndarray, c: np.ndarray, cd: np.ndarray,
) -> float:  # fmt: skip
    """Centre and centre velocity of disk ``k`` into ``c`` and ``cd``; returns ``ω``."""
    c[0], cd[0] = q[ix[k]], v[ix[k]]
    if iy[k] < 0:
        c[1], cd[1] = rail_y[k], 0.0
        return 0.0
    c[1], cd[1] = q[iy[k]], v[iy[k]]
    return v[iphi[k]]


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
    open at its start, closes (as ``timestepping._closing`` predicts it,
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


@functools.cache
def compiled_lemke_solve() -> Callable[..., int]:
    """:func:`lemke_solve` compiled by numba on its own (for the tests that compare it)."""
    import numba

    return numba.njit(cache=True)(lemke_solve)
