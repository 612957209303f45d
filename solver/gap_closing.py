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

import math
from collections.abc import Iterable

import numpy as np

from solver.event_tolerances import GAP_TOL, PENETRATION_TOL
from solver.gap_kernel import compiled_closing_rows
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
    (:func:`pair_clear`, one pair at a time).

    False leaves the decision to the samples of the check: the bound may be
    too loose, there are more than ``FEW_PAIRS`` pairs (the check's
    vectorised gaps cost less than a proof per pair), or beads on one rail
    are watched (ordered pairs are never proved here). ``T`` is
    ``duration`` (s).
    """
    if gaps.ordered or len(gaps) > FEW_PAIRS:
        return False
    return all(clear_rows(gaps, range(len(gaps)), q, v, a, duration))


def clear_rows(
    gaps: GapSet,
    rows: Iterable[int],
    q: np.ndarray,
    v: np.ndarray,
    a: np.ndarray,
    duration: float,
    clearance: float = 0.0,
) -> list[bool]:
    """Per pair of ``rows``: whether its gap provably stays above ``clearance − PENETRATION_TOL``.

    Along the flight ``q + v τ + ½ a τ²``, ``τ ∈ [0, T]`` (``T`` =
    ``duration``, s), by :func:`pair_clear` (the disk keeps ``r + clearance
    − PENETRATION_TOL`` from the whole of its feature; ``clearance`` in m).
    A pair of beads on one rail (ordered: its gap counts passing) is never
    proved.
    """
    system = gaps.kin.system
    c = system.centres(q).tolist()
    cd = system.centre_velocities(v).tolist()
    ca = system.centre_velocities(a).tolist()
    return clear_rows_of(gaps, rows, c, cd, ca, duration, clearance)


def clear_rows_of(
    gaps: GapSet,
    rows: Iterable[int],
    c: list[list[float]],
    cd: list[list[float]],
    ca: list[list[float]],
    duration: float,
    clearance: float = 0.0,
) -> list[bool]:
    """:func:`clear_rows` from the disk centres (m), velocities (m/s), accelerations (m/s²)."""
    hulls = gaps.hulls
    clear = []
    for n in rows:
        i, j, ax, ay, bx, by, reach, room = hulls[n]
        (x, y), (vx, vy), (wx, wy) = c[i], cd[i], ca[i]
        if j >= 0:
            if gaps.pairs[n].order:
                clear.append(False)
                continue
            x, y, vx, vy, wx, wy = (
                x - c[j][0],
                y - c[j][1],
                vx - cd[j][0],
                vy - cd[j][1],
                wx - ca[j][0],
                wy - ca[j][1],
            )
        path = (x, y, vx, vy, 0.5 * wx, 0.5 * wy)
        if clearance:
            reach += clearance
            room = None if room is None else room - clearance
        clear.append(pair_clear(path, (ax, ay, bx, by), reach, room, duration))
    return clear


def pair_clear(
    path: tuple[float, ...],
    hull: tuple[float, float, float, float],
    reach: float,
    room: float | None,
    duration: float,
) -> bool:
    """Whether a parabola keeps ``reach − PENETRATION_TOL`` (m) from a straight segment.

    ``path`` is ``(x, y, vx, vy, ax, ay)``: the point ``p(τ) = p0 + p1 τ +
    p2 τ²`` (m, m/s, m/s²; ``p2`` is half the acceleration) for ``τ ∈ [0,
    T]`` (s, ``duration``), and ``hull`` the segment ``(Ax, Ay, Bx, By)``
    (m; ``A = B``: a point). The distance from ``p`` to ``[A, B]`` is at
    least ``n·p − max(n·A, n·B)`` for any unit ``n``, a quadratic in ``τ``
    along the parabola whose least value on ``[0, T]`` is exact; ``n``
    points from the segment's nearest point to ``p`` at the start, then (if
    that bound fails) at the end. The margin above ``−PENETRATION_TOL`` is
    ``1e-12`` times the scale of the numbers, far above their rounding.

    With ``room`` (m, an arc's ``R − r``; ``[A, B]`` its centre) the
    point may instead keep within ``room + PENETRATION_TOL`` of the centre:
    ``|p(τ) − A| ≤ max(|p(0) − A|, |p(T) − A|) + |p2| T²/4``, since the
    parabola keeps within ``|p2| T²/4`` of its chord.
    """
    x, y, vx, vy, wx, wy = path
    ax, ay, bx, by = hull
    T = duration
    ex, ey = bx - ax, by - ay
    length2 = ex * ex + ey * ey
    x1, y1 = x + T * (vx + T * wx), y + T * (vy + T * wy)
    scale = 1.0 + max(abs(x), abs(y), abs(ax), abs(ay), abs(bx), abs(by))
    scale += T * max(abs(vx), abs(vy)) + T * T * max(abs(wx), abs(wy))
    floor = -PENETRATION_TOL + 1e-12 * scale
    for px, py in ((x, y), (x1, y1)):
        s = ((px - ax) * ex + (py - ay) * ey) / length2 if length2 > 0.0 else 0.0
        s = min(max(s, 0.0), 1.0)
        dx, dy = px - ax - s * ex, py - ay - s * ey
        size = math.hypot(dx, dy)
        if not size > 0.0:
            continue
        nx, ny = dx / size, dy / size
        support = max(nx * ax + ny * ay, nx * bx + ny * by)
        low = lowest_value(
            nx * x + ny * y - support - reach, nx * vx + ny * vy, nx * wx + ny * wy, T
        )
        if low > floor:
            return True
    if room is None:
        return False
    farthest = max(math.hypot(x - ax, y - ay), math.hypot(x1 - ax, y1 - ay))
    return room - farthest - 0.25 * T * T * math.hypot(wx, wy) > floor


def lowest_value(c0: float, c1: float, c2: float, duration: float) -> float:
    """Least value of ``c0 + c1 τ + c2 τ²`` for ``τ ∈ [0, duration]`` (s).

    At an end, or where the derivative vanishes inside for ``c2 > 0``;
    NaN coefficients give NaN (no bound).
    """
    T = duration
    low = min(c0, c0 + T * (c1 + T * c2))
    if c2 > 0.0:
        t_min = min(max(-c1 / (2.0 * c2), 0.0), T)
        low = min(low, c0 + t_min * (c1 + t_min * c2))
    return low


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
