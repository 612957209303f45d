"""The array route of GapSet's gaps and normal speeds: the tests' reference for the compiled loop.

Before :func:`solver.gap_kernel.gap_values` served every size of set, the
solver computed a set's gaps with these numpy operations on arrays of each
kind of pair (and, for up to 16 pairs, with the same operations on floats).
They stay here, unchanged, so the tests can compare the compiled loop's bits
with them: disk pairs, segments and vertices vectorised (``numpy.hypot``, a
row's dot product by ``numpy.add.reduce``), corners hidden by the segments
and arcs ending at them, arcs one by one. The closing times along a flight
on arrays (``closing_times_arrays``) and the float proofs that a gap stays
open (``clear_rows_floats``) are here for the same reason.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from solver import gap_kernel
from solver.event_tolerances import GAP_EVENT_TOL, GAP_TOL, PENETRATION_TOL
from solver.feature_regions import in_region
from solver.gap_set import GapSet, row_dots
from solver.geometry import Arc, Segment, Vertex


def reference_values(
    gaps: GapSet, c: np.ndarray, cd: np.ndarray | None, band: float = 0.0, bare: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """``(g, u_n)`` from the centres ``c`` (K, 2) (m) and velocities ``cd`` (m/s).

    ``cd`` None: the gaps alone (``u_n`` None), a segment or corner's region
    ``band`` (m) wider and, with ``bare``, no corner hidden.
    """
    g, u_n = np.empty(len(gaps)), None if cd is None else np.empty(len(gaps))
    with np.errstate(invalid="ignore", divide="ignore"):
        disk_gaps(gaps, c, cd, g, u_n)
        segment_gaps(gaps, c, cd, g, u_n, band)
        vertex_gaps(gaps, c, cd, g, u_n, band, bare)
        gaps.arc_gaps(c, cd, g, u_n, band)
    return g, u_n


def disk_gaps(gaps, c, cd, g, u_n) -> None:
    if not len(gaps.disk_rows):
        return
    d = c[gaps.I] - c[gaps.J]
    dist = np.hypot(d[:, 0], d[:, 1])
    gap = dist - gaps.rsum
    if gaps.ordered:  # beads that have passed each other overlap by more than their size
        passed = gaps.order * d[:, 0] < 0.0
        gap = np.where(passed, -dist - gaps.rsum, gap)
    g[gaps.disk_rows] = gap
    if cd is not None:
        rel = cd[gaps.I] - cd[gaps.J]
        speed = (d[:, 0] * rel[:, 0] + d[:, 1] * rel[:, 1]) / dist
        u_n[gaps.disk_rows] = np.where(passed, -speed, speed) if gaps.ordered else speed


def segment_gaps(gaps, c, cd, g, u_n, band) -> None:
    if not len(gaps.segment_rows):
        return
    k = gaps.seg_disks
    w = c[k] - gaps.seg_a
    s = row_dots(w, gaps.seg_e) / gaps.seg_len2
    w -= s[:, None] * gaps.seg_e
    d = np.hypot(w[:, 0], w[:, 1])
    if band:
        reach = band / np.sqrt(gaps.seg_len2)
        inside = (s > -reach) & (s < 1.0 + reach)
    else:
        inside = (s > 0.0) & (s < 1.0)
    g[gaps.segment_rows] = np.where(inside, d - gaps.seg_radii, np.inf)
    if cd is not None:
        u_n[gaps.segment_rows] = np.where(inside, row_dots(w, cd[k]) / d, np.nan)


def vertex_gaps(gaps, c, cd, g, u_n, band, bare) -> None:
    if not len(gaps.vertex_rows):
        return
    k = gaps.vertex_disks
    w = c[k] - gaps.vertex_p
    d = np.hypot(w[:, 0], w[:, 1])
    gap = d - gaps.vertex_radii
    hidden = None if bare else _hidden(gaps, c, band)
    if hidden is not None:
        gap = np.where(hidden, np.inf, gap)
    g[gaps.vertex_rows] = gap
    if cd is not None:
        u_n[gaps.vertex_rows] = row_dots(w, cd[k]) / d


def _hidden(gaps, c, band) -> np.ndarray | None:
    """Per vertex row: True where a segment or arc ending at it covers the disk centre."""
    neighbours = gaps.kin.neighbours
    vertices = gaps.pairs.feature[gaps.vertex_rows].tolist()
    covering = [(r, f) for r, index in enumerate(vertices) for f in neighbours[index]]
    segments = [(r, f) for r, f in covering if isinstance(f, Segment)]
    arcs = [(r, f) for r, f in covering if isinstance(f, Arc)]
    if not segments and not arcs:
        return None
    hidden = np.zeros(len(gaps.vertex_rows), dtype=bool)
    if segments:
        rows = np.array([r for r, _ in segments], dtype=int)
        ends = np.array([(*f.a, *f.b) for _, f in segments], dtype=float).reshape(-1, 4)
        a, e = ends[:, :2], ends[:, 2:] - ends[:, :2]
        length2 = row_dots(e, e)
        w = c[gaps.vertex_disks[rows]] - a
        s = row_dots(w, e) / length2
        reach = band / np.sqrt(length2)
        hidden[rows[(s > -reach) & (s < 1.0 + reach)]] = True
    for r, arc in arcs:
        if not hidden[r] and in_region(arc, c[gaps.vertex_disks[r]], band):
            hidden[r] = True
    return hidden


def first_closing_arrays(
    c0: np.ndarray, c1: np.ndarray, c2: np.ndarray, duration: float, floor: np.ndarray | float
) -> np.ndarray:
    """The array form of :func:`solver.gap_closing.first_closing`, as it was before the loop."""
    T = duration
    lowest = np.minimum(c0, c0 + T * (c1 + T * c2))
    rising = c2 > 0.0
    if rising.any():  # the minimum inside the interval, where p' = 0
        t_min = np.where(rising, (-c1 / np.where(rising, 2.0 * c2, 1.0)).clip(0.0, T), 0.0)
        lowest = np.minimum(lowest, c0 + t_min * (c1 + t_min * c2))
    closes = (lowest < floor) & ~((c1 > 0.0) & (c2 >= 0.0))
    tau = np.full(c0.shape, np.inf)
    if not closes.any():
        return tau
    a, b, c = c2[closes], c1[closes], c0[closes]
    disc = b * b - 4.0 * a * c
    half = -0.5 * (b + np.copysign(np.sqrt(np.maximum(disc, 0.0)), b))
    r1, r2 = half / a, c / half
    down = np.where(a > 0.0, np.fmin(r1, r2), np.fmax(r1, r2))
    linear = a == 0.0
    if linear.any():
        down = np.where(linear, np.where(b < 0.0, -c / b, 0.0), down)
    down = np.where((disc < 0.0) | np.isnan(down), 0.0, down)
    tau[closes] = down.clip(0.0, T)
    return tau


def closing_times_arrays(
    gaps: GapSet, q: np.ndarray, v: np.ndarray, a: np.ndarray, duration: float
) -> tuple[np.ndarray, np.ndarray]:
    """The array route of :func:`solver.gap_closing.closing_times` (tau, unresolved).

    Each kind of pair at once, as the solver computed it before
    :func:`solver.gap_kernel.closing_rows` served every size (and, for up
    to 16 pairs without arcs, with the same operations on floats).
    """
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
        tau[rows] = first_closing_arrays(
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
        h = first_closing_arrays(
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
                first_closing_arrays(
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
        nearest_possible(gaps, c, g)
        reach = travel[gaps.first] + travel[gaps.second]
        unresolved &= ~(g - reach > GAP_TOL)
    return tau, unresolved


def nearest_possible(gaps: GapSet, c: np.ndarray, g: np.ndarray) -> None:
    """Lower the gaps ``g`` of vertices and arcs to a bound valid beyond their regions.

    A disk outside an arc's sector (or where a vertex is hidden) has no gap
    to it, yet may enter with the gap already closed: its distance to the
    whole circle (to the bare vertex) bounds the gap from below.
    """
    if len(gaps.vertex_rows):
        w = c[gaps.vertex_disks] - gaps.vertex_p
        g[gaps.vertex_rows] = np.minimum(
            g[gaps.vertex_rows], np.hypot(w[:, 0], w[:, 1]) - gaps.vertex_radii
        )
    for n in gaps.arc_rows:
        pair = gaps.pairs[n]
        rho = float(np.hypot(*(c[pair.i] - np.asarray(pair.feature.center))))
        g[n] = min(g[n], abs(rho - pair.feature.radius) - gaps.kin.radii[pair.i])


def first_closing(
    c0: np.ndarray, c1: np.ndarray, c2: np.ndarray, duration: float, floor: np.ndarray | float
) -> np.ndarray:
    """:func:`solver.gap_kernel.closing_one` of every row (compiled), ``floor`` one or per row.

    ``rising`` is whether any row has ``c2 > 0``, as one call of the array
    form (:func:`first_closing_arrays`) took it.
    """
    c0, c1, c2 = (np.ascontiguousarray(x, dtype=float) for x in (c0, c1, c2))
    floors = np.ascontiguousarray(np.broadcast_to(floor, c0.shape), dtype=float)
    tau = np.empty(c0.shape)
    _closing_loop()(c0, c1, c2, float(duration), floors, tau)
    return tau


@functools.cache
def _closing_loop():
    import numba

    one = gap_kernel.compiled_closing_rows  # registers closing_one as callable from numba
    one()
    closing_one = gap_kernel.closing_one

    def rows(c0, c1, c2, T, floor, tau):
        rising = False
        for n in range(c0.shape[0]):
            rising = rising or c2[n] > 0.0
        for n in range(c0.shape[0]):
            tau[n] = closing_one(c0[n], c1[n], c2[n], T, floor[n], rising)

    return numba.njit(error_model="numpy")(rows)


def clear_rows_floats(gaps, rows, c, cd, ca, duration, clearance=0.0) -> list[bool]:
    """The float route of :func:`solver.gap_closing.clear_rows` (before the compiled loop).

    ``c``, ``cd``, ``ca``: the disk centres (m), velocities (m/s) and
    accelerations (m/s²) as lists of ``[x, y]``.
    """
    table = hulls(gaps)
    clear = []
    for n in rows:
        i, j, ax, ay, bx, by, reach, room = table[n]
        (x, y), (vx, vy), (wx, wy) = c[i], cd[i], ca[i]
        if j >= 0:
            if gaps.pairs[n].order:
                clear.append(False)
                continue
            x, y, vx, vy, wx, wy = (
                x - c[j][0], y - c[j][1], vx - cd[j][0], vy - cd[j][1], wx - ca[j][0], wy - ca[j][1]
            )  # fmt: skip
        path = (x, y, vx, vy, 0.5 * wx, 0.5 * wy)
        if clearance:
            reach += clearance
            room = None if room is None else room - clearance
        clear.append(pair_clear_floats(path, (ax, ay, bx, by), reach, room, duration))
    return clear


def hulls(gaps: GapSet) -> list[tuple[int, int, float, float, float, float, float, float | None]]:
    """Per pair ``(i, j, Ax, Ay, Bx, By, ρ, room)``: a segment ``[A, B]``, a reach ``ρ`` (m).

    The pair's disk ``i`` overlaps its feature only if its centre (less
    disk ``j``'s centre for a disk pair; ``j = -1`` otherwise) comes closer
    than ``ρ`` to ``[A, B]``: a segment itself with the disk's radius, a
    vertex point or the origin (a disk pair) with the radius (the radii's
    sum), an arc's centre with ``R + r`` while outside its circle. For an
    arc ``room`` is ``R − r`` (m), the room of a disk inside the circle;
    None for the other kinds.
    """
    rows = []
    radii = gaps.kin.radii.tolist()
    shapes = [shape for _, shape, _, _ in gaps.kin.feature_list]
    pairs = gaps.pairs
    # from the pairs' indices: no ContactPair is made for a pair not read
    for i, j, index in zip(
        pairs.first.tolist(), pairs.second.tolist(), pairs.feature.tolist(), strict=True
    ):
        r = radii[i]
        if j >= 0:
            rows.append((i, j, 0.0, 0.0, 0.0, 0.0, r + radii[j], None))
            continue
        feature = shapes[index]
        if isinstance(feature, Segment):
            (ax, ay), (bx, by) = feature.a, feature.b
            rows.append((i, -1, float(ax), float(ay), float(bx), float(by), r, None))
        elif isinstance(feature, Vertex):
            px, py = feature.p
            rows.append((i, -1, float(px), float(py), float(px), float(py), r, None))
        else:
            ox, oy = feature.center
            R = float(feature.radius)
            rows.append((i, -1, float(ox), float(oy), float(ox), float(oy), R + r, R - r))
    return rows


def pair_clear_floats(
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
        low = lowest_value_floats(
            nx * x + ny * y - support - reach, nx * vx + ny * vy, nx * wx + ny * wy, T
        )
        if low > floor:
            return True
    if room is None:
        return False
    farthest = max(math.hypot(x - ax, y - ay), math.hypot(x1 - ax, y1 - ay))
    return room - farthest - 0.25 * T * T * math.hypot(wx, wy) > floor


def lowest_value_floats(c0: float, c1: float, c2: float, duration: float) -> float:
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
