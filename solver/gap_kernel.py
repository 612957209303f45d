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

    :func:`solver.gap_closing.first_closing` of one row, with the special
    values (NaN, infinities, ``c2 = 0``) of the numpy form it replaced: a
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


def first_closing_rows(c0, c1, c2, T, floor, tau):
    """:func:`closing_one` of every row (``floor`` one per row) into ``tau`` (s)."""
    rising = False
    for n in range(c0.shape[0]):
        rising = rising or c2[n] > 0.0
    for n in range(c0.shape[0]):
        tau[n] = closing_one(c0[n], c1[n], c2[n], T, floor[n], rising)


@functools.cache
def compiled_gap_values() -> Callable[..., None]:
    """:func:`gap_values` compiled by numba (made on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True, error_model="numpy")(gap_values)


@functools.cache
def compiled_closing() -> tuple[Callable[..., float], Callable[..., None]]:
    """:func:`closing_one` and :func:`first_closing_rows` compiled by numba (cached on disk)."""
    import numba
    from numba.extending import register_jitable

    register_jitable(closing_one)  # callable from compiled code, unchanged for Python
    one = numba.njit(cache=True, error_model="numpy")(closing_one)
    rows = numba.njit(cache=True, error_model="numpy")(first_closing_rows)
    return one, rows
