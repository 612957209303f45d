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


@functools.cache
def compiled_gap_values() -> Callable[..., None]:
    """:func:`gap_values` compiled by numba (made on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True, error_model="numpy")(gap_values)
