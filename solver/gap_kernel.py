"""The gaps and normal speeds of a set of contact pairs at one or more states: one compiled loop.

:meth:`solver.gap_set.GapSet.values` and :meth:`~solver.gap_set.GapSet.gaps`
(and :func:`solver.gap_set.values_many`, many states at once) call
:func:`gap_values` for every size of set: a ball's three pairs, a wheel's nine,
a chain's ten thousand. It reads the pairs' index arrays and the features'
numbers (:attr:`solver.contact_pairs.DiskKinematics.gap_tables`) and takes,
pair by pair, the operations the arrays took when they were the route:
``math.hypot`` (the C library's, as ``numpy.hypot``), a dot product written
``0.0 + x₀y₀ + x₁y₁`` (numpy's sum of a row starts from ``0.0``), no fused
multiply-add (numba fuses only with ``fastmath``), a division by a zero
distance giving ``±inf`` or NaN (``error_model="numpy"``). The tests keep the
array route as the reference and compare the bits (``tests/gap_arrays.py``).

Arcs are not in the loop: their rows are left as they are, for
:meth:`~solver.gap_set.GapSet.arc_gaps` (one by one), and so is the hiding of
a corner by an arc ending at it (:func:`solver.feature_regions.in_region`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from solver.contact_pairs import SEGMENT, VERTEX
from solver.event_tolerances import GAP_EVENT_TOL, GAP_TOL, PENETRATION_TOL


def gap_values(C, CD, speeds, first, second, feature, order, radii, kinds, nums, covers, cover_nums,
               band, bare, G, U):  # fmt: skip
    """Fill ``G[t, n]`` (m) and, with ``speeds``, ``U[t, n]`` (m/s) of pair ``n`` at state ``t``.

    ``C``, ``CD``: disk centres and their velocities (T, K, 2) (m, m/s);
    ``first``, ``second``, ``feature``, ``order``: the pairs' index arrays
    (:class:`solver.contact_pairs.PairRows`); ``radii`` (K,) (m); ``kinds``
    (F,), ``nums`` (F, 6), ``covers`` (F + 1,) and ``cover_nums`` the
    features' table (``DiskKinematics.gap_tables``). A segment or a corner
    counts ``band`` (m) beyond a feature's ends; with ``bare`` no corner is
    hidden. ``g = inf`` (``u_n`` NaN) outside a segment's region, ``g = inf``
    for a hidden corner; an arc's row is not written.
    """
    for t in range(C.shape[0]):
        for n in range(first.shape[0]):
            i, j = first[n], second[n]
            x, y = C[t, i, 0], C[t, i, 1]
            if (
                j >= 0
            ):  # two disks; beads that have passed each other overlap by more than their size
                w0, w1 = x - C[t, j, 0], y - C[t, j, 1]
                d = math.hypot(w0, w1)
                rsum = radii[i] + radii[j]
                passed = order[n] * w0 < 0.0
                G[t, n] = -d - rsum if passed else d - rsum
                if speeds:
                    speed = (
                        w0 * (CD[t, i, 0] - CD[t, j, 0]) + w1 * (CD[t, i, 1] - CD[t, j, 1])
                    ) / d
                    U[t, n] = -speed if passed else speed
                continue
            f = feature[n]
            kind = kinds[f]
            if kind == SEGMENT:
                w0, w1 = x - nums[f, 0], y - nums[f, 1]
                e0, e1 = nums[f, 2], nums[f, 3]
                s = (0.0 + w0 * e0 + w1 * e1) / nums[f, 4]
                w0, w1 = w0 - s * e0, w1 - s * e1
                d = math.hypot(w0, w1)
                if band:
                    reach = band / nums[f, 5]
                    inside = s > -reach and s < 1.0 + reach
                else:
                    inside = s > 0.0 and s < 1.0
                if inside:
                    G[t, n] = d - radii[i]
                    if speeds:
                        U[t, n] = (0.0 + w0 * CD[t, i, 0] + w1 * CD[t, i, 1]) / d
                else:
                    G[t, n] = math.inf
                    if speeds:
                        U[t, n] = math.nan
            elif kind == VERTEX:
                w0, w1 = x - nums[f, 0], y - nums[f, 1]
                d = math.hypot(w0, w1)
                hidden = False
                if not bare:  # a segment ending at the corner covers the centre
                    for m in range(covers[f], covers[f + 1]):
                        e0, e1 = cover_nums[m, 2], cover_nums[m, 3]
                        s = (0.0 + (x - cover_nums[m, 0]) * e0 + (y - cover_nums[m, 1]) * e1) / (
                            cover_nums[m, 4]
                        )
                        reach = band / cover_nums[m, 5]
                        if s > -reach and s < 1.0 + reach:
                            hidden = True
                G[t, n] = math.inf if hidden else d - radii[i]
                if speeds:
                    U[t, n] = (0.0 + w0 * CD[t, i, 0] + w1 * CD[t, i, 1]) / d


def closing_one(c0, c1, c2, T, floor, rising):
    """When ``p(τ) = c0 + c1 τ + c2 τ²`` closes in ``[0, T]`` (s), ``inf`` if it does not.

    ``p`` stands for a gap (or a function with the gap's sign) along a
    parabolic flight. It closes when it falls below ``floor`` somewhere in
    the interval; its closing time is then the root where ``p`` decreases (0
    if ``p`` is already negative and not rising back above 0 first). Below
    ``floor`` at the start but opening (``c1 > 0``, ``c2 ≥ 0``: a contact
    left a hair inside after an impact, separating) it never closes in this
    flight. The special values (NaN, infinities, ``c2 = 0``) are those of
    the numpy form it replaced (``tests/gap_arrays.py``): a
    NaN bound never closes, numpy's ``fmin``/``fmax`` take the root that is
    not NaN; only the sign of a zero time may differ from numpy's (its vector
    ``fmin`` and its one-element loop disagree there). ``rising``: some row
    of the call has ``c2 > 0``, so every row's bound takes ``p`` at the
    clipped vertex ``τ = −c1/(2 c2)`` (at 0 where ``c2 ≤ 0``), as the arrays did.
    """
    end = c0 + T * (c1 + T * c2)
    t_min = -c1 / (2.0 * c2) if c2 > 0.0 else 0.0
    if t_min < 0.0:
        t_min = 0.0
    elif t_min > T:
        t_min = T
    low = c0 + t_min * (c1 + t_min * c2) if rising else c0
    if math.isnan(end) or math.isnan(low) or not min(c0, end, low) < floor:
        return math.inf
    if c1 > 0.0 and c2 >= 0.0:  # below the floor but opening, never coming back down
        return math.inf
    disc = c1 * c1 - 4.0 * c2 * c0
    half = -0.5 * (c1 + math.copysign(math.sqrt(0.0 if disc < 0.0 else disc), c1))
    r1, r2 = half / c2, c0 / half
    if math.isnan(r1) or math.isnan(r2):
        down = r2 if math.isnan(r1) else r1
    else:
        down = min(r1, r2) if c2 > 0.0 else max(r1, r2)
    if c2 == 0.0:
        down = -c0 / c1 if c1 < 0.0 else 0.0
    if disc < 0.0 or math.isnan(down):
        down = 0.0
    return min(max(down, 0.0), T)


def segment_closing(x, y, vx, vy, wx, wy, ax, ay, ex, ey, length2, length, r, T, rising):
    """When (s) a disk's gap to a segment closes along its parabola, ``inf`` if not in ``T``.

    The centre ``(x, y)`` (m), its velocity (m/s) and constant acceleration
    (m/s²); the segment's numbers as in ``DiskKinematics.gap_tables``
    (``a``, ``e = b − a``, ``|e|²``, ``|e|``), the disk's radius ``r`` (m).
    The gap to the segment's line is a quadratic (:func:`closing_one`,
    ``rising`` as there); a root beyond the segment's ends is no closing.
    Returns the time and whether the centre is on the line (its side is
    unknown: the caller must search).
    """
    scale = length if length > 0.0 else 1.0
    nx, ny = -ey / scale, ex / scale
    w0, w1 = x - ax, y - ay
    height = 0.0 + w0 * nx + w1 * ny
    side = 1.0 if height > 0.0 else (-1.0 if height < 0.0 else (0.0 if height == 0.0 else height))
    h = closing_one(
        side * height - r,
        side * (0.0 + vx * nx + vy * ny),
        0.5 * side * (0.0 + wx * nx + wy * ny),
        T,
        -GAP_EVENT_TOL,
        rising,
    )
    if math.isfinite(h):
        at0 = w0 + h * (vx + 0.5 * h * wx)
        at1 = w1 + h * (vy + 0.5 * h * wy)
        s = (0.0 + at0 * ex + at1 * ey) / length2
        if not (s > 0.0 and s < 1.0):
            h = math.inf
    return h, side == 0.0


def _segment_curvature(x, y, wx, wy, ax, ay, ex, ey, length):
    """``c2`` of :func:`segment_closing`'s quadratic (1/s²·m): whether it rises."""
    scale = length if length > 0.0 else 1.0
    nx, ny = -ey / scale, ex / scale
    height = 0.0 + (x - ax) * nx + (y - ay) * ny
    side = 1.0 if height > 0.0 else (-1.0 if height < 0.0 else (0.0 if height == 0.0 else height))
    return 0.5 * side * (0.0 + wx * nx + wy * ny)


def closing_rows(C, CD, CA, first, second, feature, order, radii, kinds, nums, T, tau, state):
    """When the gaps of a set of pairs close along a free flight: ``tau[n]`` (s), ``state[n]``.

    The disk centres ``C`` (K, 2) (m), their velocities ``CD`` (m/s) and
    constant accelerations ``CA`` (m/s²); the pairs and features as for
    :func:`gap_values`; the flight's length ``T`` (s). A gap that is a
    quadratic in time (a segment's; another disk's with the same
    acceleration; a corner's for an unaccelerated disk) gets its closing
    time (:func:`closing_one`, ``inf`` if none) and ``state`` 0. Any other
    (a corner or disk pair under acceleration, a centre on a segment's
    line) gets ``state`` 1, "search it", unless its gap (a corner's bare
    distance) less both disks' travel in ``T`` stays above ``GAP_TOL``:
    ``state`` 2, out of reach. An arc's row gets ``inf`` and 1 (the caller
    decides). The numbers are those of the arrays that were the route per
    kind (``tests/gap_arrays.py``): each kind's ``rising`` is taken over
    that kind's rows, as one call of the array form did.
    """
    rise_disk = rise_segment = rise_vertex = False
    for n in range(first.shape[0]):
        i, j = first[n], second[n]
        if j >= 0:
            if CA[i, 0] == CA[j, 0] and CA[i, 1] == CA[j, 1]:
                dv0, dv1 = CD[i, 0] - CD[j, 0], CD[i, 1] - CD[j, 1]
                rise_disk = rise_disk or 0.0 + dv0 * dv0 + dv1 * dv1 > 0.0
        elif kinds[feature[n]] == SEGMENT:
            f = feature[n]
            c2 = _segment_curvature(
                C[i, 0], C[i, 1], CA[i, 0], CA[i, 1], nums[f, 0], nums[f, 1], nums[f, 2],
                nums[f, 3], nums[f, 5],
            )  # fmt: skip
            rise_segment = rise_segment or c2 > 0.0
        elif kinds[feature[n]] == VERTEX:
            rise_vertex = rise_vertex or 0.0 + CD[i, 0] * CD[i, 0] + CD[i, 1] * CD[i, 1] > 0.0
    for n in range(first.shape[0]):
        i, j = first[n], second[n]
        x, y = C[i, 0], C[i, 1]
        tau[n], state[n], g = math.inf, 0, math.inf
        if j >= 0:
            d0, d1 = x - C[j, 0], y - C[j, 1]
            rsum = radii[i] + radii[j]
            if CA[i, 0] == CA[j, 0] and CA[i, 1] == CA[j, 1]:
                dv0, dv1 = CD[i, 0] - CD[j, 0], CD[i, 1] - CD[j, 1]
                tau[n] = closing_one(
                    0.0 + d0 * d0 + d1 * d1 - rsum * rsum,
                    2.0 * (0.0 + d0 * dv0 + d1 * dv1),
                    0.0 + dv0 * dv0 + dv1 * dv1,
                    T,
                    (rsum - GAP_EVENT_TOL) * (rsum - GAP_EVENT_TOL) - rsum * rsum,
                    rise_disk,
                )
                continue
            d = math.hypot(d0, d1)
            g = -d - rsum if order[n] * d0 < 0.0 else d - rsum
        else:
            f = feature[n]
            kind = kinds[f]
            if kind == SEGMENT:
                h, on_line = segment_closing(
                    x, y, CD[i, 0], CD[i, 1], CA[i, 0], CA[i, 1], nums[f, 0], nums[f, 1],
                    nums[f, 2], nums[f, 3], nums[f, 4], nums[f, 5], radii[i], T, rise_segment,
                )  # fmt: skip
                tau[n] = h
                if not on_line:
                    continue
                # the gap as gap_values has it (no band)
                w0, w1 = x - nums[f, 0], y - nums[f, 1]
                e0, e1 = nums[f, 2], nums[f, 3]
                s = (0.0 + w0 * e0 + w1 * e1) / nums[f, 4]
                if s > 0.0 and s < 1.0:
                    g = math.hypot(w0 - s * e0, w1 - s * e1) - radii[i]
            elif kind == VERTEX:
                w0, w1 = x - nums[f, 0], y - nums[f, 1]
                r = radii[i]
                if CA[i, 0] == 0.0 and CA[i, 1] == 0.0:
                    tau[n] = closing_one(
                        0.0 + w0 * w0 + w1 * w1 - r * r,
                        2.0 * (0.0 + w0 * CD[i, 0] + w1 * CD[i, 1]),
                        0.0 + CD[i, 0] * CD[i, 0] + CD[i, 1] * CD[i, 1],
                        T,
                        (r - GAP_EVENT_TOL) * (r - GAP_EVENT_TOL) - r * r,
                        rise_vertex,
                    )
                    continue
                g = math.hypot(w0, w1) - r  # its bare distance, hidden or not
            else:
                state[n] = 1  # an arc
                continue
        # within reach: the gap can shrink at most by both disks' travel
        reach = travel(CD, CA, i, T) + (travel(CD, CA, j, T) if j >= 0 else 0.0)
        state[n] = 1 if not g - reach > GAP_TOL else 2


def travel(CD, CA, k, T):
    """The most disk ``k`` can travel (m) in ``T`` (s) from its speed and constant acceleration."""
    speed = math.hypot(CD[k, 0], CD[k, 1])
    accel = math.hypot(CA[k, 0], CA[k, 1])
    return speed * T + 0.5 * accel * T * T


def clear_rows(C, CD, CA, rows, first, second, feature, order, radii, hulls, T, clearance, clear):
    """Per pair of ``rows``: whether its gap provably stays above ``clearance − PENETRATION_TOL``.

    Along the flight of the disk centres ``C`` (K, 2) (m) with their
    velocities ``CD`` (m/s) and constant accelerations ``CA`` (m/s²) for
    ``T`` (s), by :func:`pair_clear` of the centre (less the other centre
    for a disk pair) and the pair's hull: the feature's row of ``hulls``
    (``DiskKinematics.hull_table``: a segment's ends, a corner's point
    twice, an arc's centre twice and its radius ``R``) with the reach ``r``
    (an arc's ``R + r`` and room ``R − r``; a disk pair's the origin and
    ``r_i + r_j``), ``clearance`` (m) added to the reach and taken from the
    room. A pair of beads on one rail (ordered: its gap counts passing) is
    never proved. Writes ``clear[m]`` for ``rows[m]``.
    """
    for m in range(rows.shape[0]):
        n = rows[m]
        i, j = first[n], second[n]
        x, y, vx, vy, wx, wy = C[i, 0], C[i, 1], CD[i, 0], CD[i, 1], CA[i, 0], CA[i, 1]
        room = math.nan
        if j >= 0:
            if order[n] != 0.0:
                clear[m] = False
                continue
            x, y, vx, vy = x - C[j, 0], y - C[j, 1], vx - CD[j, 0], vy - CD[j, 1]
            wx, wy = wx - CA[j, 0], wy - CA[j, 1]
            ax = ay = bx = by = 0.0
            reach = radii[i] + radii[j]
        else:
            f = feature[n]
            ax, ay, bx, by, R = hulls[f, 0], hulls[f, 1], hulls[f, 2], hulls[f, 3], hulls[f, 4]
            reach = radii[i]
            if not math.isnan(R):
                reach, room = R + radii[i], R - radii[i]
        if clearance != 0.0:
            reach += clearance
            room = room - clearance
        clear[m] = pair_clear(x, y, vx, vy, 0.5 * wx, 0.5 * wy, ax, ay, bx, by, reach, room, T)


def pair_clear(x, y, vx, vy, wx, wy, ax, ay, bx, by, reach, room, T):
    """Whether a parabola keeps ``reach − PENETRATION_TOL`` (m) from a straight segment.

    The point ``p(τ) = p0 + p1 τ + p2 τ²`` with ``p0 = (x, y)`` (m), ``p1 =
    (vx, vy)`` (m/s), ``p2 = (wx, wy)`` (half the acceleration, m/s²) for
    ``τ ∈ [0, T]`` (s), and the segment ``[A, B]`` (m; ``A = B``: a point).
    The distance from ``p`` to ``[A, B]`` is at least ``n·p − max(n·A,
    n·B)`` for any unit ``n``, a quadratic in ``τ`` along the parabola whose
    least value on ``[0, T]`` is exact; ``n`` points from the segment's
    nearest point to ``p`` at the start, then (if that bound fails) at the
    end. The margin above ``−PENETRATION_TOL`` is ``1e-12`` times the scale
    of the numbers, far above their rounding.

    With ``room`` (m, an arc's ``R − r``; ``[A, B]`` its centre; NaN for
    none) the point may instead keep within ``room + PENETRATION_TOL`` of
    the centre: ``|p(τ) − A| ≤ max(|p(0) − A|, |p(T) − A|) + |p2| T²/4``,
    since the parabola keeps within ``|p2| T²/4`` of its chord.
    """
    ex, ey = bx - ax, by - ay
    length2 = ex * ex + ey * ey
    x1, y1 = x + T * (vx + T * wx), y + T * (vy + T * wy)
    scale = 1.0 + max(abs(x), abs(y), abs(ax), abs(ay), abs(bx), abs(by))
    scale += T * max(abs(vx), abs(vy)) + T * T * max(abs(wx), abs(wy))
    floor = -PENETRATION_TOL + 1e-12 * scale
    for end in range(2):
        px, py = (x, y) if end == 0 else (x1, y1)
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
    if math.isnan(room):
        return False
    farthest = max(math.hypot(x - ax, y - ay), math.hypot(x1 - ax, y1 - ay))
    return room - farthest - 0.25 * T * T * math.hypot(wx, wy) > floor


def lowest_value(c0, c1, c2, T):
    """Least value of ``c0 + c1 τ + c2 τ²`` for ``τ ∈ [0, T]`` (s).

    At an end, or where the derivative vanishes inside for ``c2 > 0``;
    NaN coefficients give NaN (no bound).
    """
    low = min(c0, c0 + T * (c1 + T * c2))
    if c2 > 0.0:
        t_min = min(max(-c1 / (2.0 * c2), 0.0), T)
        low = min(low, c0 + t_min * (c1 + t_min * c2))
    return low


@functools.cache
def compiled_gap_values() -> Callable[..., None]:
    """:func:`gap_values` compiled by numba (made on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True, error_model="numpy")(gap_values)


@functools.cache
def compiled_closing_rows() -> tuple[Callable[..., tuple[float, bool]], Callable[..., None]]:
    """:func:`segment_closing` (one row, from Python) and :func:`closing_rows`, compiled."""
    import numba
    from numba.extending import register_jitable

    for function in (closing_one, segment_closing, _segment_curvature, travel):
        register_jitable(function)
    one = numba.njit(cache=True, error_model="numpy")(segment_closing)
    rows = numba.njit(cache=True, error_model="numpy")(closing_rows)
    return one, rows


@functools.cache
def compiled_clear_rows() -> Callable[..., None]:
    """:func:`clear_rows` compiled by numba (cached on disk)."""
    import numba
    from numba.extending import register_jitable

    for function in (pair_clear, lowest_value):
        register_jitable(function)
    return numba.njit(cache=True, error_model="numpy")(clear_rows)
