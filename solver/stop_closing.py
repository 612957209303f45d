"""The first closing of affine gaps along a closed-form motion, and the state there, compiled.

A phase of beads on rails without active contacts, whose watched gaps are
all affine in the coordinates (beads against stops across their rail, beads
on one rail: :mod:`solver.affine_gaps`), moves in closed form
(:meth:`solver.linear_flow.LinearFlow.coordinate_maps`, made in
:func:`initial_forms` from the state):

    q_n(t) = Re Σ_s D_ns exp(λ_s τ) + Σ_p P_pn τ^p,    τ = t − t0 (m),

and its gaps are ``g = A q − b``. :func:`first_closing` walks the whole
phase on sub-intervals of ``1 / (SUBINTERVALS_PER_RATE · max_rate)`` (a
sixteenth of the general scan's, so that a gap's rate turns at most once in
one of them) and decides each gap as
:meth:`solver.gap_roots.GapRoots.gap_event` does: a value below
``−GAP_EVENT_TOL`` at a sub-point is a closing at the root before it; a
minimum between two open sub-points (the rate turning from negative to
positive, located on the rate) below ``−GAP_EVENT_TOL`` is a closing at the
root before the minimum; a contact just left (a gap within ``GAP_TOL`` at
the start, opening) closes again only after its maximum. Roots are polished
by safeguarded Newton steps on the closed form (rtsafe: bisection where a
step would leave the bracket) to ``TIME_TOL``. A gap that comes within a
rounding margin of one of those tolerances at a sub-point or a minimum — a
decision that rounding could turn — is not decided here: the loop reports
``UNDECIDED`` and the phase goes to the general scan. :func:`carried_row`
makes the state where the phase ends with its work integrals, summed as the
phase's pieces sum them (:meth:`solver.flight.SmoothMotion.linear_pieces`).

The loops are written on floats and arrays; :func:`compiled_phase_end`
compiles :func:`phase_end` with numba, which runs them for one phase (a few
seconds, once: cached on disk). Tests compare the compiled and the plain
loop.
"""

from __future__ import annotations

import cmath
import functools
import math
from collections.abc import Callable

import numpy as np

from solver.event_tolerances import (
    GAP_EVENT_TOL,
    GAP_TOL,
    IMPACT_SPEED_TOL,
    SUBPOINTS_LINEAR,
    TIME_TOL,
    WORK_NODES,
)

SUBINTERVALS_PER_RATE = 16
"""Sub-intervals per ``1 / max_rate`` (s) of the flow."""
ROOT_ITERATIONS = 200
"""Most safeguarded Newton steps of one root (bisection halves the bracket at least)."""

NONE, CLOSING, UNDECIDED = 0, 1, 2
"""Outcomes of :func:`first_closing`: no gap closes before the end; a gap closes (its time,
row, rate and second derivative are in ``result``); a decision within rounding of a
tolerance, left to the general scan."""


def _motion(tau, lam, D, P, q, v, a):
    """Coordinates (m), velocities (m/s) and accelerations (m/s²) at ``τ`` (s), in place."""
    N = len(q)
    for n in range(N):
        q[n] = 0.0
        v[n] = 0.0
        a[n] = 0.0
    for s in range(len(lam)):
        e = cmath.exp(lam[s] * tau)
        for n in range(N):
            term = D[n, s] * e
            q[n] += term.real
            v[n] += (lam[s] * term).real
            a[n] += (lam[s] * lam[s] * term).real
    for n in range(N):
        p0 = 0.0
        p1 = 0.0
        p2 = 0.0
        for p in range(len(P) - 1, -1, -1):  # Horner's scheme with two derivatives
            p2 = p2 * tau + 2.0 * p1
            p1 = p1 * tau + p0
            p0 = p0 * tau + P[p, n]
        q[n] += p0
        v[n] += p1
        a[n] += p2


def initial_forms(t0, q0, v0, project, q_p, omegas, to_singles, to_poly, D, P):
    """The coordinates' closed forms ``D`` (N, S) and ``P`` (k, N) from ``(q0, v0)`` at ``t0``.

    The maps of :meth:`solver.linear_flow.LinearFlow.coordinate_maps`
    applied to the augmented initial state, in place.
    """
    r = project.shape[0]
    m = to_singles.shape[2]
    w0 = np.empty(m)
    for i in range(r):
        wq = 0.0
        wv = 0.0
        for j in range(len(q0)):
            wq += project[i, j] * (q0[j] - q_p[j])
            wv += project[i, j] * v0[j]
        w0[i] = wq
        w0[r + i] = wv
    for k in range(len(omegas)):
        w0[2 * r + 2 * k] = math.sin(omegas[k] * t0)
        w0[2 * r + 2 * k + 1] = math.cos(omegas[k] * t0)
    w0[m - 1] = 1.0
    for n in range(D.shape[0]):
        for s in range(D.shape[1]):
            z = 0j
            for i in range(m):
                z += to_singles[n, s, i] * w0[i]
            D[n, s] = z
        for p in range(P.shape[0]):
            x = 0.0
            for i in range(m):
                x += to_poly[p, n, i] * w0[i]
            P[p, n] = x


def _gaps(tau, lam, D, P, A, b, g, u, q, v, a):
    """Gaps ``A q − b`` (m) and their rates (m/s) at ``τ`` (s) in place; ``q``, ``v``, ``a`` too."""
    _motion(tau, lam, D, P, q, v, a)
    for k in range(len(b)):
        gk = -b[k]
        uk = 0.0
        for n in range(len(q)):
            gk += A[k, n] * q[n]
            uk += A[k, n] * v[n]
        g[k] = gk
        u[k] = uk


def _gap(k, tau, lam, D, P, A, b):
    """Gap ``k`` (m), its rate (m/s) and second derivative (m/s²) at ``τ`` (s)."""
    N = A.shape[1]
    q = np.empty(N)
    v = np.empty(N)
    a = np.empty(N)
    _motion(tau, lam, D, P, q, v, a)
    g = -b[k]
    u = 0.0
    c = 0.0
    for n in range(N):
        g += A[k, n] * q[n]
        u += A[k, n] * v[n]
        c += A[k, n] * a[n]
    return g, u, c


def _root(k, order, ta, tb, t0, lam, D, P, A, b):
    """Root in ``[ta, tb]`` (s) of gap ``k`` (``order`` 0) or of its rate (``order`` 1).

    The function has opposite signs (or a zero) at the ends. Safeguarded
    Newton steps with its derivative, bisection where a step would leave the
    bracket or not halve it, until a step is below ``TIME_TOL``.
    """
    fa = _gap(k, ta - t0, lam, D, P, A, b)[order]
    fb = _gap(k, tb - t0, lam, D, P, A, b)[order]
    if fa == 0.0:
        return ta
    if fb == 0.0:
        return tb
    lo, hi = (ta, tb) if fa < 0.0 else (tb, ta)  # f(lo) < 0 < f(hi)
    t = ta + (tb - ta) * fa / (fa - fb)
    if not (min(ta, tb) < t < max(ta, tb)):
        t = 0.5 * (ta + tb)
    step_before = abs(tb - ta)
    step = step_before
    values = _gap(k, t - t0, lam, D, P, A, b)
    f, df = values[order], values[order + 1]
    for _ in range(ROOT_ITERATIONS):
        if f == 0.0:
            return t
        if f < 0.0:
            lo = t
        else:
            hi = t
        if ((t - hi) * df - f) * ((t - lo) * df - f) > 0.0 or abs(2.0 * f) > abs(step_before * df):
            step_before = step
            step = 0.5 * (hi - lo)
            t_next = lo + step
        else:
            step_before = step
            step = f / df
            t_next = t - step
        if abs(step) <= TIME_TOL or t_next == t:
            return t_next
        t = t_next
        values = _gap(k, t - t0, lam, D, P, A, b)
        f, df = values[order], values[order + 1]
    return t


def _stays_open(k, tau_a, tau_b, g, u, lam, D, P, A, floor):
    """Whether gap ``k`` is above ``floor`` (m) at the 15 inner sixteenths of ``[τa, τb]`` (s).

    ``g`` (m) and ``u`` (m/s) are the gap and its rate at ``τa``. The gap is
    at least ``g + u s − C s² / 2`` at ``s`` after ``τa``, ``C`` a bound of
    its second derivative over the interval from the terms' moduli
    (``|λ² Σ_n A_kn D_ns| exp(Re λ τ)`` at the end where it is larger, and
    ``p (p − 1) |Σ_n A_kn P_pn| |τ|^(p − 2)`` at the larger ``|τ|``): a
    concave bound, above ``floor`` at the first and the last sample, so on
    all (:func:`solver.affine_gaps._stays_open`, the general scan's).
    """
    bound = 0.0
    for s in range(len(lam)):
        c = 0j
        for n in range(A.shape[1]):
            c += A[k, n] * D[n, s]
        grow = math.exp(max(lam[s].real * tau_a, lam[s].real * tau_b))
        bound += abs(lam[s] * lam[s] * c) * grow
    far = max(abs(tau_a), abs(tau_b))
    for p in range(2, P.shape[0]):
        d = 0.0
        for n in range(A.shape[1]):
            d += A[k, n] * P[p, n]
        bound += p * (p - 1) * abs(d) * far ** (p - 2)
    width = tau_b - tau_a
    for s in (width / 16.0, width * 15.0 / 16.0):
        if not g + u * s - 0.5 * bound * s * s > floor:
            return False
    return True


def first_closing(t0, t_stop, h, lam, D, P, A, b, margin, result):
    """The first closing of the gaps ``g_k`` in ``[t0, t_stop]`` (s), on sub-intervals of ``h`` (s).

    Parameters
    ----------
    t0, t_stop : float
        Start of the motion and end of the search (s).
    h : float
        Sub-interval length (s).
    lam, D, P : numpy.ndarray
        The coordinates' closed forms (:func:`initial_forms`).
    A, b : numpy.ndarray, shapes (K, N) and (K,)
        The affine gaps ``g = A q − b`` (m).
    margin : float
        Rounding margin (m) about the tolerances within which a value is undecided.
    result : numpy.ndarray, shape (4,) or longer
        Filled on ``CLOSING``: time (s), gap row, its rate (m/s) and its
        second derivative (m/s²) there.

    Returns
    -------
    int
        ``NONE``, ``CLOSING`` or ``UNDECIDED``.
    """
    K = len(b)
    N = A.shape[1]
    q = np.empty(N)
    v = np.empty(N)
    a = np.empty(N)
    high = GAP_TOL + margin  # at or below: closed, or about to be
    low = -GAP_EVENT_TOL - margin  # below: a closing
    ga = np.empty(K)
    ua = np.empty(K)
    gb = np.empty(K)
    ub = np.empty(K)
    _gaps(0.0, lam, D, P, A, b, ga, ua, q, v, a)
    leaving = np.zeros(K, dtype=np.bool_)
    for k in range(K):
        if not ga[k] > high:
            # a contact just left after an impact: opening clearly, or the general scan's
            if not (abs(ga[k]) <= GAP_TOL and ua[k] > IMPACT_SPEED_TOL):
                return UNDECIDED
            leaving[k] = True
    ta = t0
    while ta < t_stop:
        tb = min(ta + h, t_stop)
        _gaps(tb - t0, lam, D, P, A, b, gb, ub, q, v, a)
        best = math.inf
        row = -1
        for k in range(K):
            t_hit = math.inf
            if leaving[k]:
                if gb[k] < low:
                    if not (ua[k] > 0.0 and ub[k] < 0.0):
                        return UNDECIDED
                    t_max = _root(k, 1, ta, tb, t0, lam, D, P, A, b)
                    if not _gap(k, t_max - t0, lam, D, P, A, b)[0] > high:
                        return UNDECIDED
                    t_hit = _root(k, 0, t_max, tb, t0, lam, D, P, A, b)
                elif not gb[k] > high:
                    return UNDECIDED
                else:
                    # open at the end: a dip below zero between needs its rate to turn twice;
                    # the samples the general scan looks at, or the bound that spares it them
                    if not _stays_open(
                        k, ta - t0, tb - t0, ga[k], ua[k], lam, D, P, A, low + margin
                    ):
                        for n in range(1, 16):
                            if _gap(k, ta + (tb - ta) * n / 16.0 - t0, lam, D, P, A, b)[0] < low:
                                return UNDECIDED
                    leaving[k] = False
            elif gb[k] < low:
                t_hit = _root(k, 0, ta, tb, t0, lam, D, P, A, b)
            elif not gb[k] > high:
                return UNDECIDED
            elif ua[k] < 0.0 and ub[k] > 0.0:
                t_min = _root(k, 1, ta, tb, t0, lam, D, P, A, b)
                lowest = _gap(k, t_min - t0, lam, D, P, A, b)[0]
                if lowest < low:
                    t_hit = _root(k, 0, ta, t_min, t0, lam, D, P, A, b)
                elif not lowest > high:
                    return UNDECIDED
            if t_hit < best:
                best = t_hit
                row = k
        if row >= 0:
            values = _gap(row, best - t0, lam, D, P, A, b)
            result[0] = best
            result[1] = row
            result[2] = values[1]
            result[3] = values[2]
            return CLOSING
        for k in range(K):
            ga[k] = gb[k]
            ua[k] = ub[k]
        ta = tb
    return NONE


def carried_row(t0, t_end, t, rate, lam, D, P, forcing, C, work, nodes, weights, row):
    """The state ``(q, v, work)`` at ``t`` (s) of a closed-form phase started at ``t0``, in ``row``.

    The work terms (friction, damping loss, input work; J) are those of
    :meth:`solver.flight.SmoothMotion.linear_pieces`: the phase is cut into
    pieces of ``SUBPOINTS_LINEAR / rate`` (s) up to ``t_end``, and each
    piece's share up to ``t`` is a Gauss–Legendre sum with as many nodes as
    its length needs (``WORK_NODES`` for a whole piece, at least 6).

    Parameters
    ----------
    forcing : numpy.ndarray, shape (H, N + 2)
        Per harmonic force its amplitudes (N), frequency (rad/s) and phase (rad).
    C : numpy.ndarray, shape (N, N)
        Damping matrix (N·s/m).
    work : numpy.ndarray, shape (3,)
        The work terms at ``t0`` (J).
    nodes, weights : numpy.ndarray, shape (WORK_NODES + 1, WORK_NODES)
        Row ``n``: the ``n`` Gauss–Legendre nodes on [−1, 1] and their weights.
    row : numpy.ndarray, shape (2N + 3,)
        Filled with ``q``, ``v`` and the work terms at ``t``.
    """
    N = C.shape[0]
    q = np.empty(N)
    v = np.empty(N)
    a = np.empty(N)
    damping = 0.0
    gained = 0.0
    length = SUBPOINTS_LINEAR / rate
    ta = t0
    while True:
        tb = min(t_end, ta + length)
        end = min(t, tb)
        if end > ta:
            half = 0.5 * (end - ta)
            n = min(
                max(math.ceil(WORK_NODES * abs(2.0 * half) * rate / SUBPOINTS_LINEAR), 6),
                WORK_NODES,
            )
            lost = 0.0
            fed = 0.0
            for i in range(n):
                tn = end - half * (1.0 - nodes[n, i])
                _motion(tn - t0, lam, D, P, q, v, a)
                for j in range(N):
                    for m in range(N):
                        lost += weights[n, i] * v[j] * C[j, m] * v[m]
                for h in range(len(forcing)):
                    push = 0.0
                    for j in range(N):
                        push += v[j] * forcing[h, j]
                    fed += weights[n, i] * math.sin(forcing[h, N] * tn + forcing[h, N + 1]) * push
            damping += half * lost
            gained += half * fed
        if t <= tb:
            break
        ta = tb
    _motion(t - t0, lam, D, P, q, v, a)
    for j in range(N):
        row[j] = q[j]
        row[N + j] = v[j]
    row[2 * N] = work[0]
    row[2 * N + 1] = work[1] + damping
    row[2 * N + 2] = work[2] + gained


GAUSS_LEGENDRE = np.zeros((2, WORK_NODES + 1, WORK_NODES))
"""Row ``n`` of ``GAUSS_LEGENDRE[0]`` (``[1]``): the ``n`` Gauss–Legendre nodes (weights)."""
for _n in range(1, WORK_NODES + 1):
    GAUSS_LEGENDRE[:, _n, :_n] = np.polynomial.legendre.leggauss(_n)


def phase_end(
    t0, t_end, h, rate, q0, v0, project, q_p, omegas, lam, to_singles, to_poly, A, b, margin,
    forcing, C, work, nodes, weights, sample, result, row,
):  # fmt: skip
    """:func:`first_closing` up to ``t_end``, and :func:`carried_row` where the phase ends.

    One call for a phase from ``(q0, v0)`` at ``t0``, with the maps of
    :meth:`solver.linear_flow.LinearFlow.coordinate_maps` (``project`` …
    ``to_poly``). The row holds the state at the closing (at ``t_end``
    when nothing closes) when the next output sample, at ``sample`` (s),
    comes after it (:func:`samples_due` false); else, and when
    ``UNDECIDED``, it is not filled. With the row filled at a closing,
    ``result[4]`` is the closing gap (m) and ``result[5]`` the lowest of the
    others (``inf`` without others) at the row's coordinates, ``A q − b`` as
    numpy forms it (:func:`row_gaps`).
    """
    D = np.empty((to_singles.shape[0], to_singles.shape[1]), dtype=np.complex128)
    P = np.empty((to_poly.shape[0], to_poly.shape[1]))
    initial_forms(t0, q0, v0, project, q_p, omegas, to_singles, to_poly, D, P)
    status = first_closing(t0, t_end, h, lam, D, P, A, b, margin, result)
    if status != UNDECIDED:
        t = result[0] if status == CLOSING else t_end
        if not samples_due(sample, t, t_end):
            carried_row(t0, t_end, t, rate, lam, D, P, forcing, C, work, nodes, weights, row)
            if status == CLOSING:
                row_gaps(A, b, row, int(result[1]), result)
    return status


def row_gaps(A, b, row, k, result):
    """Gap ``k`` (m) at the coordinates ``row[:N]`` in ``result[4]``, the lowest other in
    ``result[5]`` (``inf`` without others): each ``Σ_n A_jn q_n − b_j``, summed in order
    from 0 as numpy's product of a few coordinates sums it."""
    lowest = math.inf
    for j in range(len(b)):
        s = 0.0
        for n in range(A.shape[1]):
            s += A[j, n] * row[n]
        g = s - b[j]
        if j == k:
            result[4] = g
        elif g < lowest:
            lowest = g
    result[5] = lowest


def samples_due(sample, t, t_end):
    """Whether an output sample at ``sample`` (s) is due by ``t`` (s), as the stepper emits them."""
    return sample <= min(t, t_end * (1 + 1e-12))


@functools.cache
def compiled_phase_end() -> Callable[..., int]:
    """:func:`phase_end` compiled by numba (made on first use; cached on disk).

    numba is imported here, not with the module: an event-driven run that
    never takes this path (a bouncing ball) does not load it.
    """
    import numba
    from numba.extending import register_jitable

    for function in (
        _motion, _gaps, _gap, _root, _stays_open, initial_forms, first_closing, carried_row,
        row_gaps,
        samples_due,
    ):  # fmt: skip
        register_jitable(function)  # callable from compiled code, unchanged for Python
    return numba.njit(cache=True)(phase_end)


def load_compiled() -> None:
    """Compile (or load from numba's cache) the loop now, for the argument types the stepper passes.

    A sweep's fork server calls this once (:mod:`solver.sweep_preload`): the
    workers it forks start with the loop in memory instead of each loading it
    at its first phase (about 0.8 s).
    """
    N, S, m = 1, 2, 5
    vector = np.zeros(N)
    compiled_phase_end()(
        0.0, 1.0, 0.1, 1.0, vector, vector, np.zeros((N, N)), vector, np.ones(1),
        np.zeros(S, dtype=np.complex128), np.zeros((N, S, m), dtype=np.complex128),
        np.zeros((3, N, m)), np.ones((1, N)), np.ones(1), 1e-13, np.zeros((1, N + 2)),
        np.zeros((N, N)), np.zeros(3), GAUSS_LEGENDRE[0], GAUSS_LEGENDRE[1], 0.0,
        np.zeros(6), np.zeros(2 * N + 3),
    )  # fmt: skip
