"""Where the gaps of a GapSet close over a stretch of motion (MECHANICS §4).

Along a free flight with constant accelerations the gaps to segments, to
disks with the same acceleration and to vertices met by an unaccelerated
disk are quadratics in time: :func:`closing_times` gives their roots in
closed form (:func:`first_closing`) and marks the others that can come
within reach. Between two states of a flight piece, :func:`crossed` and
:func:`passed_through` tell whether a disk went through a segment or arc, a
corner or another disk although its gap is positive at both (a gap is a
distance, positive on both sides).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from solver.event_tolerances import GAP_EVENT_TOL, GAP_TOL, PENETRATION_TOL
from solver.gap_kernel import compiled_closing
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
        (see :func:`first_closing`), ``inf`` if it does not close.
    unresolved : numpy.ndarray of bool
        Pairs whose gap is not a quadratic in τ (an arc; a vertex or a
        disk pair under relative acceleration) and which can come within
        reach during the flight: their closing must be searched on samples.

    Up to ``FEW_PAIRS`` pairs are done in float arithmetic
    (:func:`closing_times_few`, the same numbers to the last bit), more on
    arrays (:func:`closing_times_arrays`).
    """
    few = closing_times_few(gaps, q, v, a, duration)
    if few is not None:
        return few
    return closing_times_arrays(gaps, q, v, a, duration)


def closing_times_few(
    gaps: GapSet, q: np.ndarray, v: np.ndarray, a: np.ndarray, duration: float
) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`closing_times` of a few pairs in float arithmetic; None where the arrays decide.

    The operations of :func:`closing_times_arrays` in the same order, one
    pair at a time (each array operation costs about a microsecond, a
    handful of them per pair of the bouncing ball), so the same times and
    flags to the last bit (``np.hypot`` as there; each quadratic through the
    compiled :func:`solver.gap_kernel.closing_one` that the arrays loop over).
    None for more than ``FEW_PAIRS`` pairs, an arc, a disk pair under
    relative acceleration, or a disk centre on a segment's line: those take
    the array form whole.
    """
    if gaps.arc_rows or len(gaps) > FEW_PAIRS:
        return None
    system = gaps.kin.system
    c = system.centres(q).tolist()
    cd = system.centre_velocities(v).tolist()
    ca = system.centre_velocities(a).tolist()
    few = closing_times_of(gaps, c, cd, ca, duration)
    if few is None:
        return None
    tau, unresolved = few
    return np.array(tau), np.array(unresolved, dtype=bool)


def closing_times_of(
    gaps: GapSet,
    c: list[list[float]],
    cd: list[list[float]],
    ca: list[list[float]],
    duration: float,
) -> tuple[list[float], list[bool]] | None:
    """:func:`closing_times_few` from the disk centres as lists, its answer as lists.

    ``c``, ``cd`` and ``ca`` are the centres (m), their velocities (m/s) and
    accelerations (m/s²), one ``[x, y]`` per disk; ``duration`` in s. None
    where :func:`closing_times_few` is (callers check ``arc_rows`` and
    ``FEW_PAIRS`` first).
    """
    T = duration
    tau = [math.inf] * len(gaps)
    unresolved = [False] * len(gaps)
    for n, i, j, rsum, _ in gaps.few_disk_rows:
        if ca[i] != ca[j]:
            return None
        d0, d1 = c[i][0] - c[j][0], c[i][1] - c[j][1]
        dv0, dv1 = cd[i][0] - cd[j][0], cd[i][1] - cd[j][1]
        tol = (rsum - GAP_EVENT_TOL) * (rsum - GAP_EVENT_TOL) - rsum * rsum
        tau[n] = _closing_one(
            d0 * d0 + d1 * d1 - rsum * rsum,
            2.0 * (d0 * dv0 + d1 * dv1),
            dv0 * dv0 + dv1 * dv1,
            T,
            tol,
        )
    for row in gaps.few_segment_rows:
        k = row[1]
        h = segment_closing(row, c[k], cd[k], ca[k], T)
        if h is None:
            return None
        tau[row[0]] = h
    travels: dict[int, float] = {}  # per disk: the most it can travel (m) in T
    for n, k, px, py, r in gaps.few_vertex_rows:
        w0, w1 = c[k][0] - px, c[k][1] - py
        if ca[k][0] == 0.0 and ca[k][1] == 0.0:
            cd0, cd1 = cd[k]
            tau[n] = _closing_one(
                w0 * w0 + w1 * w1 - r * r,
                2.0 * (w0 * cd0 + w1 * cd1),
                cd0 * cd0 + cd1 * cd1,
                T,
                (r - GAP_EVENT_TOL) * (r - GAP_EVENT_TOL) - r * r,
            )
            continue
        # within reach: the gap (its bare distance) can shrink at most by the disk's travel
        travel = travels.get(k)
        if travel is None:
            speed = float(np.hypot(cd[k][0], cd[k][1]))
            accel = float(np.hypot(ca[k][0], ca[k][1]))
            travel = travels[k] = speed * T + 0.5 * accel * T * T
        unresolved[n] = not (float(np.hypot(w0, w1)) - r - (travel + 0.0) > GAP_TOL)
    return tau, unresolved


def segment_closing(
    row: tuple[int, int, float, float, float, float, float, float, float, float],
    c: list[float],
    cd: list[float],
    ca: list[float],
    duration: float,
) -> float | None:
    """When (s) a disk's gap to a segment closes along its parabola, ``inf`` if not in ``duration``.

    ``row`` is the pair's entry of :attr:`solver.gap_set.GapSet.few_segment_rows`
    (``n, k, Ax, Ay, ex, ey, |e|², nx, ny, r``), ``c``, ``cd``, ``ca`` the disk
    centre (m), its velocity (m/s) and acceleration (m/s²). The gap to the
    segment's line is a quadratic (:func:`_closing_one`); a root beyond the
    segment's ends is no closing. None for a centre on the line (the array
    form decides).
    """
    _, _, ax, ay, ex, ey, length2, nx, ny, r = row
    w0, w1 = c[0] - ax, c[1] - ay
    height = w0 * nx + w1 * ny
    if height == 0.0:
        return None
    side = 1.0 if height > 0.0 else -1.0
    (wd0, wd1), (wa0, wa1) = cd, ca
    h = _closing_one(
        side * height - r,
        side * (wd0 * nx + wd1 * ny),
        0.5 * side * (wa0 * nx + wa1 * ny),
        duration,
        -GAP_EVENT_TOL,
    )
    if math.isfinite(h):
        at0 = w0 + h * (wd0 + 0.5 * h * wa0)
        at1 = w1 + h * (wd1 + 0.5 * h * wa1)
        s = (at0 * ex + at1 * ey) / length2
        if not (s > 0.0 and s < 1.0):
            h = math.inf
    return h


def _closing_one(c0: float, c1: float, c2: float, duration: float, floor: float) -> float:
    """:func:`first_closing` of one quadratic: :func:`solver.gap_kernel.closing_one`, compiled."""
    return compiled_closing()[0](c0, c1, c2, duration, floor, c2 > 0.0)


def closing_times_arrays(
    gaps: GapSet, q: np.ndarray, v: np.ndarray, a: np.ndarray, duration: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`closing_times` on arrays, each kind of pair at once."""
    system = gaps.kin.system
    c = system.centres(q)
    cd = system.centre_velocities(v)
    ca = system.centre_velocities(a)
    T = duration
    tau = np.full(len(gaps), np.inf)
    unresolved = np.zeros(len(gaps.pairs), dtype=bool)
    if len(gaps.disk_rows):
        d, dv = c[gaps.I] - c[gaps.J], cd[gaps.I] - cd[gaps.J]
        uniform = (ca[gaps.I] == ca[gaps.J]).all(axis=1)
        rows = gaps.disk_rows[uniform]
        d, dv, rsum = d[uniform], dv[uniform], gaps.rsum[uniform]
        tol = (rsum - GAP_EVENT_TOL) ** 2 - rsum * rsum
        tau[rows] = first_closing(
            row_dots(d, d) - rsum * rsum,
            2.0 * row_dots(d, dv),
            row_dots(dv, dv),
            T,
            tol,
        )
        if not uniform.all():
            unresolved[gaps.disk_rows[~uniform]] = True
    if len(gaps.segment_rows):
        k = gaps.seg_disks
        nrm = gaps.seg_normal
        w, wd, wa = c[k] - gaps.seg_a, cd[k], ca[k]
        height = row_dots(w, nrm)
        side = np.sign(height)
        h = first_closing(
            side * height - gaps.seg_radii,
            side * row_dots(wd, nrm),
            0.5 * side * row_dots(wa, nrm),
            T,
            -GAP_EVENT_TOL,
        )
        hit = np.isfinite(h)
        if hit.any():
            th = np.where(hit, h, 0.0)[:, None]
            at = w + th * (wd + 0.5 * th * wa)
            s = row_dots(at, gaps.seg_e) / gaps.seg_len2
            h = np.where((s > 0.0) & (s < 1.0), h, np.inf)
        tau[gaps.segment_rows] = h
        on_line = side == 0.0
        if on_line.any():
            unresolved[gaps.segment_rows[on_line]] = True
    if len(gaps.vertex_rows):
        k = gaps.vertex_disks
        still = (ca[k] == 0.0).all(axis=1)
        if still.any():
            w = c[k] - gaps.vertex_p
            r = gaps.vertex_radii
            tau[gaps.vertex_rows] = np.where(
                still,
                first_closing(
                    row_dots(w, w) - r * r,
                    2.0 * row_dots(w, cd[k]),
                    row_dots(cd[k], cd[k]),
                    T,
                    (r - GAP_EVENT_TOL) ** 2 - r * r,
                ),
                np.inf,
            )
        if not still.all():
            # their bound below is the bare distance (nearest_possible), hidden or not
            unresolved[gaps.vertex_rows[~still]] = True
    if gaps.arc_rows:
        unresolved[gaps.arc_rows] = True
    if unresolved.any():
        # within reach: the gap can shrink at most by both disks' travel
        speed = np.hypot(cd[:, 0], cd[:, 1])
        accel = np.hypot(ca[:, 0], ca[:, 1])
        travel = np.append(speed * T + 0.5 * accel * T * T, 0.0)
        g = gaps.gaps(q)  # read at the unresolved rows only
        gaps.nearest_possible(c, g)
        reach = travel[gaps.first] + travel[gaps.second]
        unresolved &= ~(g - reach > GAP_TOL)
    return tau, unresolved


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


def first_closing(
    c0: np.ndarray, c1: np.ndarray, c2: np.ndarray, duration: float, floor: np.ndarray | float
) -> np.ndarray:
    """When the quadratics ``p(τ) = c0 + c1 τ + c2 τ²`` close, for ``τ ∈ [0, duration]`` (s).

    ``p`` stands for a gap (or a function with the gap's sign) along a
    parabolic flight. A row closes when ``p`` falls below ``floor`` (one
    value or one per row) somewhere in the interval; its closing time is
    then the root of ``p`` where ``p`` decreases (0 if ``p`` is already
    negative and not rising back above 0 first). Rows that do not close get
    ``inf``; so do rows below ``floor`` at the start that open (``p`` rising
    with ``c2 ≥ 0``: a contact left a hair inside after an impact, separating,
    never comes back down in this flight — its decreasing root lies before
    the start).

    One compiled loop (:func:`solver.gap_kernel.first_closing_rows`) for any
    number of rows.
    """
    c0, c1, c2 = (np.ascontiguousarray(x, dtype=float) for x in (c0, c1, c2))
    floors = np.ascontiguousarray(np.broadcast_to(floor, c0.shape), dtype=float)
    tau = np.empty(c0.shape)
    compiled_closing()[1](c0, c1, c2, float(duration), floors, tau)
    return tau
