"""The deepest overlap of each measured frame, compiled: the loop of the accuracy measure.

:func:`deepest` is what :class:`solver.timestep_accuracy.AccuracyMonitor`
runs for one kind of pair (disk–feature or disk–disk) over a run of frames:
each pair's valid gap at each frame, the first of the smallest at each frame,
kept where it is an overlap deeper than the frame's deepest so far. A pair
none of whose disks moved since the last frame measured with the same pairs
keeps that frame's gap (the same arithmetic on the same numbers), so a long
chain struck at one end computes a few gaps a frame. Disk–feature gaps are
:func:`solver.kernel_kinematics._pair_kinematics`'s, the arithmetic of
:mod:`solver.contact_arrays`; disk–disk gaps those of
:func:`solver.contact_arrays.disk_disk_gaps` with ``disk_disk``'s validity
(``0 < d ≤ r_i + r_j``). Compiled by numba (:func:`compiled_deepest`, cached
on disk); the plain function is the tests' reference.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from solver.kernel_kinematics import _pair_kinematics
from solver.kernel_tables import DISK


def deepest(
    C: np.ndarray, kind: np.ndarray, first: np.ndarray, second: np.ndarray, radius: np.ndarray,
    feature_a: np.ndarray, feature_b: np.ndarray, feature_arc: np.ndarray,
    last_c: np.ndarray, last_g: np.ndarray, fresh: bool, best: np.ndarray, which: np.ndarray,
) -> None:  # fmt: skip
    """Deepest overlaps of the pairs ``(kind, first, second)`` (K,) at the centres ``C`` (F, D, 2).

    A pair is ``(SEGMENT … ARC, disk, feature)`` or ``(DISK, disk i, disk j)``
    (:mod:`solver.kernel_tables`); the features' tables as in
    :class:`~solver.kernel_tables.KernelScene`. ``best`` (F,): each frame's
    smallest valid gap so far (m; inf for none); where the smallest valid gap
    of these pairs (the first of equals) is smaller and negative it replaces
    it and ``which`` takes the pair's index (else ``which`` is −1).
    ``last_c`` (D, 2) and ``last_g`` (K,): the centres and gaps of the last
    frame measured with these pairs (unless ``fresh``), overwritten with
    those of ``C[-1]``.
    """
    F, D = C.shape[0], C.shape[1]
    K = len(kind)
    moved = np.ones(D, dtype=np.bool_)
    if not fresh:
        for d in range(D):
            still = True
            for f in range(F):
                # NaN has always moved
                if not (C[f, d, 0] == last_c[d, 0] and C[f, d, 1] == last_c[d, 1]):
                    still = False
                    break
            moved[d] = not still
    smallest = np.full(F, math.inf)  # each frame's smallest gap of these pairs, m
    at = np.full(F, -1)  # and its pair: np.argmin's, the first of the smallest
    zero = np.zeros(2)
    c_i, c_j = np.zeros(2), np.zeros(2)
    out = np.zeros(8)
    for k in range(K):
        i, j = first[k], second[k]
        if not (moved[i] or (kind[k] == DISK and moved[j])):
            g = last_g[k]  # the same gap at every frame
            for f in range(F):
                if g < smallest[f] or at[f] < 0:
                    smallest[f], at[f] = g, k
            continue
        for f in range(F):
            if kind[k] == DISK:
                wx, wy = C[f, i, 0] - C[f, j, 0], C[f, i, 1] - C[f, j, 1]
                # hypot(x, ±0) is |x| (C99 F.9.4.3): beads on one rail
                d = abs(wx) if wy == 0.0 else math.hypot(wx, wy)
                g = d - radius[i] - radius[j]
                if not (d <= radius[i] + radius[j] + 0.0 and d > 0.0):
                    g = math.inf
            else:
                c_i[0], c_i[1] = C[f, i, 0], C[f, i, 1]
                valid = _pair_kinematics(
                    kind[k], c_i, zero, 0.0, radius[i], c_j, zero, 0.0, 0.0,
                    feature_a[j], feature_b[j], feature_arc[j], out,
                )  # fmt: skip
                g = out[0] if valid else math.inf
            if g < smallest[f] or at[f] < 0:
                smallest[f], at[f] = g, k
        last_g[k] = g  # of the last frame
    for f in range(F):
        which[f] = -1
        if at[f] >= 0 and smallest[f] < best[f] and smallest[f] < 0.0:
            best[f], which[f] = smallest[f], at[f]
    for d in range(D):
        last_c[d, 0], last_c[d, 1] = C[F - 1, d, 0], C[F - 1, d, 1]


def frame_centres(
    Q: np.ndarray, ix: np.ndarray, iy: np.ndarray, rail_y: np.ndarray, C: np.ndarray
) -> None:
    """The disks' centres at each row of ``Q`` (F, N) into ``C`` (F, D, 2), as
    :meth:`solver.system.System.centres_many`: ``x`` from ``ix``, ``y`` from ``iy`` or, for a
    bead (``iy < 0``), its rail's height ``rail_y``."""
    for f in range(Q.shape[0]):
        for d in range(len(ix)):
            C[f, d, 0] = Q[f, ix[d]]
            C[f, d, 1] = Q[f, iy[d]] if iy[d] >= 0 else rail_y[d]


def covered(C: np.ndarray, centres: np.ndarray, margin: float, out: np.ndarray) -> None:
    """For each frame of ``C`` (F, D, 2) into ``out``: ``4√2 · max |C[f] − centres| < margin``
    (False where a coordinate is NaN), as
    :func:`solver.timestep_accuracy._covered` reads it (no disk moved a quarter of the margin)."""
    bound = 4.0 * math.sqrt(2.0)
    for f in range(C.shape[0]):
        largest, nan = 0.0, False
        for d in range(C.shape[1]):
            for x in range(2):
                move = abs(C[f, d, x] - centres[d, x])
                if move > largest:
                    largest = move
                elif move != move:
                    nan = True
        out[f] = (not nan) and bound * largest < margin


@functools.cache
def compiled_frame_centres() -> Callable[..., None]:
    """:func:`frame_centres` compiled by numba (made on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True)(frame_centres)


@functools.cache
def compiled_covered() -> Callable[..., None]:
    """:func:`covered` compiled by numba (made on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True)(covered)


@functools.cache
def compiled_deepest() -> Callable[..., None]:
    """:func:`deepest` compiled by numba (made on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True)(deepest)
