"""Where the gaps of a GapSet close over a stretch of motion (MECHANICS §4).

Along a free flight with constant accelerations the gaps to segments, to
disks with the same acceleration and to vertices met by an unaccelerated
disk are quadratics in time: :func:`closing_times` gives their roots in
closed form (:func:`solver.gap_kernel.closing_rows`) and marks the others
that can come within reach. Between two states of a flight piece, :func:`crossed` and
:func:`passed_through` tell whether a disk went through a segment or arc, a
corner or another disk although its gap is positive at both (a gap is a
distance, positive on both sides).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from solver.event_tolerances import GAP_TOL, PENETRATION_TOL
from solver.gap_kernel import compiled_clear_rows, compiled_closing_rows
from solver.gap_set import FEW_PAIRS, GapSet, row_dots


def closing_times(
    gaps: GapSet, q: np.ndarray, v: np.ndarray, a: np.ndarray, duration: float
) -> tuple[np.ndarray, np.ndarray]:
    """Exact closing times of the pairs along the flight ``q + v τ + ½ a τ²``.

    Parameters
    ----------
    q, v, a : numpy.ndarray
        Positions, velocities and the constant accelerations (N,) of a
        free flight.
    duration : float
        Length of the flight (s).

    Returns
    -------
    tau : numpy.ndarray
        Per pair the time (s) after the start at which its gap closes
        (:func:`solver.gap_kernel.closing_one`), ``inf`` if it does not close.
    state : numpy.ndarray of int8
        Per pair 0 where ``tau`` is exact; 1 (unresolved) where the gap is
        not a quadratic in τ (an arc; a vertex or a disk pair under relative
        acceleration; a centre on a segment's line) and can come within
        reach during the flight: its closing must be searched on samples; 2
        where such a gap provably stays above ``GAP_TOL`` (out of reach).

    One compiled loop for every size (:func:`solver.gap_kernel.closing_rows`);
    arcs are decided here, one by one.
    """
    system, kin, rows = gaps.kin.system, gaps.kin, gaps.pairs
    c = system.centres(q)
    cd = system.centre_velocities(v)
    ca = system.centre_velocities(a)
    tau, state = np.empty(len(gaps)), np.empty(len(gaps), dtype=np.int8)
    kinds, numbers, _, _ = kin.gap_tables
    compiled_closing_rows()[1](
        c, cd, ca, rows.first, rows.second, rows.feature, rows.order, kin.radii, kinds, numbers,
        float(duration), tau, state,
    )  # fmt: skip
    if gaps.arc_rows:
        # within reach: the gap (its distance to the whole circle) can shrink at most by the
        # disk's travel
        T = duration
        g = np.full(len(gaps), np.inf)
        gaps.arc_gaps(c, None, g, None)
        for n in gaps.arc_rows:
            pair = gaps.pairs[n]
            rho = float(np.hypot(*(c[pair.i] - np.asarray(pair.feature.center))))
            gap = min(g[n], abs(rho - pair.feature.radius) - kin.radii[pair.i])
            speed = np.hypot(cd[pair.i, 0], cd[pair.i, 1])
            accel = np.hypot(ca[pair.i, 0], ca[pair.i, 1])
            travel = speed * T + 0.5 * accel * T * T
            state[n] = 1 if not gap - (travel + 0.0) > GAP_TOL else 2
    return tau, state


def flight_clear(
    gaps: GapSet, q: np.ndarray, v: np.ndarray, a: np.ndarray, duration: float
) -> bool:
    """Whether no watched gap can close along the flight ``q + v τ + ½ a τ²``, ``τ ∈ [0, T]``.

    A proof in closed form that the check for missed closings
    (:meth:`solver.gap_roots.GapRoots.missed`) can only find nothing:
    at every instant of the flight every disk keeps at least its radius
    less ``PENETRATION_TOL`` (less a margin above the rounding) from the
    whole of its feature — a segment with both its ends, a vertex, another
    disk, an arc's circle — so no gap falls below ``−PENETRATION_TOL`` and
    no disk crosses a segment or arc or passes through a corner or a disk
    (:func:`solver.gap_kernel.pair_clear`, one pair at a time).

    False leaves the decision to the samples of the check: the bound may be
    too loose, there are more than ``FEW_PAIRS`` pairs (the check's
    vectorised gaps cost less than a proof per pair), or beads on one rail
    are watched (ordered pairs are never proved here). ``T`` is
    ``duration`` (s).
    """
    if gaps.ordered or len(gaps) > FEW_PAIRS:
        return False
    system = gaps.kin.system
    c, cd, ca = system.centres(q), system.centre_velocities(v), system.centre_velocities(a)
    return all(clear_rows(gaps, range(len(gaps)), c, cd, ca, duration).tolist())


def clear_rows(
    gaps: GapSet,
    rows: Iterable[int],
    c: np.ndarray,
    cd: np.ndarray,
    ca: np.ndarray,
    duration: float,
    clearance: float = 0.0,
) -> np.ndarray:
    """Per pair of ``rows``: whether its gap provably stays above ``clearance − PENETRATION_TOL``.

    Along the flight of the disk centres ``c + ċ τ + ½ c̈ τ²``, ``τ ∈ [0, T]``
    (``c``, ``cd``, ``ca`` of shape (K, 2) in m, m/s, m/s²; ``T`` =
    ``duration``, s), by :func:`solver.gap_kernel.pair_clear` (the disk
    keeps ``r + clearance − PENETRATION_TOL`` from the whole of its feature;
    ``clearance`` in m): one compiled loop (:func:`solver.gap_kernel.clear_rows`).
    A pair of beads on one rail (ordered: its gap counts passing) is never
    proved.
    """
    kin, pairs = gaps.kin, gaps.pairs
    rows = np.fromiter(rows, dtype=np.intp)
    clear = np.empty(len(rows), dtype=np.bool_)
    compiled_clear_rows()(
        c, cd, ca, rows, pairs.first, pairs.second, pairs.feature, pairs.order, kin.radii,
        kin.hull_table, float(duration), float(clearance), clear,
    )  # fmt: skip
    return clear


def passed_through(
    gaps: GapSet,
    qa: np.ndarray,
    va: np.ndarray,
    qb: np.ndarray,
    vb: np.ndarray,
    duration: float,
) -> np.ndarray:
    """Per pair: whether its disk came into a vertex or the other disk between two states.

    A gap is a distance, positive on both sides: a disk that went
    through a corner, or through another disk, inside one flight piece
    shows a positive gap at both ends (and a corner may be hidden by its
    faces at both). The centre's path from ``qa`` to ``qb`` (the other
    disk's relative to it) lies within ``|Δċ| T / 8`` of the straight chord
    between them for a constant acceleration over the piece's
    ``duration`` ``T`` (s); with twice that margin, a chord that passes
    closer to the vertex point (to the other centre) than ``r −
    margin − PENETRATION_TOL`` (m) means the disk overlapped it. Rows of
    segments and arcs are False (:func:`crossed` sees those).
    """
    system = gaps.kin.system
    ca, cb = system.centres(qa), system.centres(qb)
    dv = system.centre_velocities(vb) - system.centre_velocities(va)
    passed = np.zeros(len(gaps.pairs), dtype=bool)
    if len(gaps.vertex_rows):
        k = gaps.vertex_disks
        near = chord_distance(ca[k] - gaps.vertex_p, cb[k] - gaps.vertex_p)
        margin = 0.25 * duration * np.hypot(dv[k, 0], dv[k, 1])
        passed[gaps.vertex_rows] = near < gaps.vertex_radii - margin - PENETRATION_TOL
    if len(gaps.disk_rows):
        I, J = gaps.I, gaps.J
        near = chord_distance(ca[I] - ca[J], cb[I] - cb[J])
        rel = dv[I] - dv[J]
        margin = 0.25 * duration * np.hypot(rel[:, 0], rel[:, 1])
        passed[gaps.disk_rows] = near < gaps.rsum - margin - PENETRATION_TOL
    return passed


def crossed(gaps: GapSet, qa: np.ndarray, qb: np.ndarray) -> np.ndarray:
    """Per pair: whether its disk's centre changed sides of a segment's line or an arc's circle.

    The gap to a segment or an arc is a distance, positive on both sides:
    a disk that went through the feature between ``qa`` and ``qb`` has a
    positive gap at both. Its centre is then on the other side; it crossed
    the feature itself if it was inside the feature's region at both times
    (both gaps finite), which the caller checks on the rows flagged here
    only, so that the gaps at ``qa`` are evaluated only when a centre
    changed sides.
    """
    system = gaps.kin.system
    crossed = np.zeros(len(gaps.pairs), dtype=bool)
    ca, cb = system.centres(qa), system.centres(qb)
    rows = gaps.segment_rows
    if len(rows):
        disks = gaps.seg_disks
        side_a = row_dots(ca[disks] - gaps.seg_a, gaps.seg_normal)
        side_b = row_dots(cb[disks] - gaps.seg_a, gaps.seg_normal)
        crossed[rows] = side_a * side_b < 0.0
    for n in gaps.arc_rows:
        pair = gaps.pairs[n]
        centre, radius = np.asarray(pair.feature.center), pair.feature.radius
        rho_a = float(np.hypot(*(ca[pair.i] - centre))) - radius
        rho_b = float(np.hypot(*(cb[pair.i] - centre))) - radius
        crossed[n] = rho_a * rho_b < 0.0
    return crossed


def chord_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row: distance (m) from the origin to the straight segment from ``a`` to ``b`` (K, 2)."""
    e = b - a
    length2 = row_dots(e, e)
    s = np.clip(-row_dots(a, e) / np.where(length2 > 0.0, length2, 1.0), 0.0, 1.0)
    p = a + s[:, None] * e
    return np.hypot(p[:, 0], p[:, 1])
