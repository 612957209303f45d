"""Candidate search: which disks may touch which boundary features or each other.

The exact contact geometry (``solver.geometry``) is cheap per pair but a scene
with hundreds of disks has too many pairs to test them all. Both searches here
test only pairs sharing a neighbourhood:

* disk–feature: the static features are binned once (``StaticIndex``); a
  pair is a candidate when the square around the disk, half-width
  ``r + margin``, meets the feature's bounding box (closed boxes), so every
  disk within ``margin`` of a feature is a candidate;
* disk–disk: pairs of centres within ``2 r_max + margin`` from a k-d tree
  (``scipy.spatial.cKDTree``); a pair is a candidate when
  ``|c_i − c_j| <= r_i + r_j + margin``.

Each search reports how many exact pair tests it made, so tests can check
that the cost stays far below the brute-force count.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.spatial import cKDTree

from solver.cached import cached_property
from solver.errors import InputError
from solver.geometry import Feature, bounding_box

MAX_CELLS_PER_FEATURE = 4096
FEW_FEATURES = 8
"""Up to this many features :meth:`StaticIndex.query` tests every box (no grid is built)."""


@dataclass(frozen=True, eq=False)
class CandidatePairs:
    """Result of a candidate search.

    Attributes
    ----------
    pairs : numpy.ndarray
        Integer array of shape (P, 2), rows sorted lexicographically:
        ``(disk, feature)`` indices for ``StaticIndex.query``, ``(i, j)`` with
        ``i < j`` for ``disk_pairs``.
    checks : int
        Number of exact pair tests performed (brute force would make
        ``K·F`` or ``K(K−1)/2``).
    """

    pairs: np.ndarray
    checks: int


def _disks(centres: Any, radii: Any, margin: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Validate disk centres (K×2, m), radii (K, m) and the margin (m)."""
    c = np.asarray(centres, dtype=float)
    if c.ndim != 2 or c.shape[1] != 2 or not np.all(np.isfinite(c)):
        raise InputError(f"`centres` must be a finite K×2 array in m, got shape {c.shape}")
    r = np.asarray(radii, dtype=float)
    if r.shape != (c.shape[0],) or not np.all(np.isfinite(r)) or np.any(r < 0):
        raise InputError(
            f"`radii` must be {c.shape[0]} finite non-negative lengths in m, got shape {r.shape}"
        )
    m = float(margin)
    if not (math.isfinite(m) and m >= 0.0):
        raise InputError(f"`margin` must be a finite non-negative length in m, got {margin!r}")
    return c, r, m


def _median(values: list[float]) -> float:
    """Median of sorted ``values`` as ``numpy.median`` gives it (the mean of the middle two)."""
    middle = len(values) // 2
    if len(values) % 2:
        return values[middle]
    return (values[middle - 1] + values[middle]) / 2.0


def _disk_columns(
    centres: Any, radii: Any, margin: float
) -> tuple[list[float], list[float], list[float]]:
    """:func:`_disks`'s checks, in floats: the centres' x and y (m) and ``r + margin`` (m).

    The query that reads them loops over the disks in floats: the checks cost
    a fraction of that, and a few disks no array calls.
    """
    c = np.asarray(centres, dtype=float)
    if c.ndim != 2 or c.shape[1] != 2:
        raise InputError(f"`centres` must be a finite K×2 array in m, got shape {c.shape}")
    xs, ys = c[:, 0].tolist(), c[:, 1].tolist()
    if not (all(map(math.isfinite, xs)) and all(map(math.isfinite, ys))):
        raise InputError(f"`centres` must be a finite K×2 array in m, got shape {c.shape}")
    r = np.asarray(radii, dtype=float)
    rs = r.tolist() if r.shape == (c.shape[0],) else None
    if rs is None or not all(math.isfinite(x) and x >= 0.0 for x in rs):
        raise InputError(
            f"`radii` must be {c.shape[0]} finite non-negative lengths in m, got shape {r.shape}"
        )
    m = float(margin)
    if not (math.isfinite(m) and m >= 0.0):
        raise InputError(f"`margin` must be a finite non-negative length in m, got {margin!r}")
    return xs, ys, [x + m for x in rs]


def _coarsen_boxes(cell: float, boxes: list[tuple[float, float, float, float]]) -> float:
    """Widen ``cell`` (m) so the boxes' corners span at most 2**30 cells (no key overflow)."""
    if not boxes:
        return cell
    xs = [x for x0, _, x1, _ in boxes for x in (x0, x1)]
    ys = [y for _, y0, _, y1 in boxes for y in (y0, y1)]
    return max(cell, max(max(xs) - min(xs), max(ys) - min(ys)) * 2.0**-30)


CELL_KEY_LIMIT = 2.0**60
"""Cell indices are clipped to ``±CELL_KEY_LIMIT``: far-away points stay in range."""


def _cell_key(x: float, cell: float) -> int:
    """Integer cell index of the coordinate ``x`` (m) for cells of side ``cell`` (m).

    ``floor(x / cell)`` is monotone in ``x``, so overlapping intervals map to
    overlapping index ranges; clipping keeps far-away points in range and
    preserves that monotonicity.
    """
    return math.floor(min(max(x / cell, -CELL_KEY_LIMIT), CELL_KEY_LIMIT))


FEW_SORTED = 64
"""Up to this many pairs are sorted as tuples (the same order as the arrays' lexsort)."""


def _sorted_pairs(pairs: list[tuple[int, int]]) -> np.ndarray:
    if not pairs:
        return np.zeros((0, 2), dtype=np.intp)
    if len(pairs) <= FEW_SORTED:
        return np.array(sorted(pairs), dtype=np.intp)
    arr = np.array(pairs, dtype=np.intp)
    return arr[np.lexsort((arr[:, 1], arr[:, 0]))]


class StaticIndex:
    """Uniform-grid index of static boundary features, built once per scene.

    Parameters
    ----------
    features : sequence of Segment, Vertex or Arc
        The features; query results refer to them by position.
    cell : float, optional
        Grid cell side (m). Smaller cells mean fewer pair tests per disk but
        more cells per long wall. Default: the median extent of the features'
        bounding boxes (ignoring zero-size ones), or 1 m if all are points.
        A feature spanning more than ``MAX_CELLS_PER_FEATURE`` cells (a long
        diagonal wall) is kept aside and tested against every disk.
    """

    def __init__(self, features: Sequence[Feature], cell: float | None = None) -> None:
        # in floats: a scene has a few features, and a drawn one a few hundred
        self._box_list = [tuple(map(float, bounding_box(f))) for f in features]
        if cell is not None:
            self.cell = self._checked_cell(cell)

    @cached_property
    def cell(self) -> float:
        """Grid cell side (m): the median extent of the boxes unless given, made on first use.

        A query of a few features (``FEW_FEATURES``) tests every box and
        never reads it.
        """
        extents = [max(x1 - x0, y1 - y0) for x0, y0, x1, y1 in self._box_list]
        extents = sorted([e for e in extents if e > 0.0])
        return self._checked_cell(_median(extents) if extents else 1.0)

    def _checked_cell(self, cell: float) -> float:
        """``cell`` (m) checked, widened so the boxes' corners span at most 2**30 cells."""
        if not (math.isfinite(cell) and cell > 0.0):
            raise InputError(f"`cell` must be a positive finite length in m, got {cell!r}")
        return _coarsen_boxes(float(cell), self._box_list)

    @cached_property
    def _grid(self) -> tuple[dict[tuple[int, int], list[int]], list[int]]:
        """The features by cell, and the large ones (tested against every disk): made when used."""
        cell = self.cell
        bins: dict[tuple[int, int], list[int]] = defaultdict(list)
        large: list[int] = []
        for index, (x0, y0, x1, y1) in enumerate(self._box_list):
            ix0, iy0 = _cell_key(x0, cell), _cell_key(y0, cell)
            ix1, iy1 = _cell_key(x1, cell), _cell_key(y1, cell)
            if (ix1 - ix0 + 1) * (iy1 - iy0 + 1) > MAX_CELLS_PER_FEATURE:
                large.append(index)
                continue
            for ix in range(ix0, ix1 + 1):
                for iy in range(iy0, iy1 + 1):
                    bins[(ix, iy)].append(index)
        return bins, large

    @cached_property
    def boxes(self) -> np.ndarray:
        """Bounding box ``(xmin, ymin, xmax, ymax)`` of each feature (m), shape (F, 4)."""
        return np.array(self._box_list, dtype=float).reshape(-1, 4)

    def __len__(self) -> int:
        """Number of indexed features."""
        return len(self._box_list)

    def _cell_of(self, x: float, y: float) -> tuple[int, int]:
        return (_cell_key(x, self.cell), _cell_key(y, self.cell))

    def query(self, centres: Any, radii: Any, margin: float) -> CandidatePairs:
        """Disk–feature pairs that may be within ``margin`` of each other.

        Parameters
        ----------
        centres : array_like, shape (K, 2)
            Disk centres (m).
        radii : array_like, shape (K,)
            Disk radii (m).
        margin : float
            Gap (m) below which a pair must be reported; larger margins report
            more pairs and let the caller reuse the result for longer.

        Returns
        -------
        CandidatePairs
            ``(disk, feature)`` rows where the square ``c ± (r + margin)``
            meets the feature's bounding box.
        """
        # columns as flat lists: a list per disk would be an object per disk the garbage
        # collector may promote and walk
        xs, ys, reaches = _disk_columns(centres, radii, margin)
        if len(self._box_list) <= FEW_FEATURES:
            return self._query_every_box(xs, ys, reaches)
        return self._query_grid(xs, ys, reaches)

    def query_floats(
        self, xs: list[float], ys: list[float], reaches: list[float]
    ) -> list[tuple[int, int]]:
        """:meth:`query`'s pairs as a sorted list, from the columns of :func:`_disk_columns`."""
        if len(self._box_list) <= FEW_FEATURES:
            return self._every_box(xs, ys, reaches)
        found = self._query_grid(xs, ys, reaches).pairs.tolist()
        return [(disk, feature) for disk, feature in found]

    def _every_box(
        self, xs: list[float], ys: list[float], reaches: list[float]
    ) -> list[tuple[int, int]]:
        """The pairs of :meth:`_query_every_box` as a list (disks, then features, in order)."""
        pairs: list[tuple[int, int]] = []
        boxes = list(enumerate(self._box_list))
        for disk, (x, y, reach) in enumerate(zip(xs, ys, reaches, strict=True)):
            lo0, lo1, hi0, hi1 = x - reach, y - reach, x + reach, y + reach
            for feature, (xmin, ymin, xmax, ymax) in boxes:
                if xmin <= hi0 and lo0 <= xmax and ymin <= hi1 and lo1 <= ymax:
                    pairs.append((disk, feature))
        return pairs

    def _query_every_box(
        self, xs: list[float], ys: list[float], reaches: list[float]
    ) -> CandidatePairs:
        """:meth:`query` testing every feature's box against every disk: the same pairs.

        The grid only skips box tests; with a few features the tests cost less
        than the cell lookups. The pairs come out sorted (disks, then features,
        in order).
        """
        found = np.array(self._every_box(xs, ys, reaches), dtype=np.intp).reshape(-1, 2)
        return CandidatePairs(found, len(xs) * len(self._box_list))

    def _query_grid(self, xs: list[float], ys: list[float], reaches: list[float]) -> CandidatePairs:
        """:meth:`query` through the grid: the features in the cells each disk's square meets."""
        bins, large = self._grid
        pairs: list[tuple[int, int]] = []
        checks = 0
        boxes = self._box_list
        for disk, (x, y, reach) in enumerate(zip(xs, ys, reaches, strict=True)):
            lo = (x - reach, y - reach)
            hi = (x + reach, y + reach)
            (ix0, iy0), (ix1, iy1) = self._cell_of(*lo), self._cell_of(*hi)
            seen = set(large)
            if (ix1 - ix0 + 1) * (iy1 - iy0 + 1) > len(bins):
                for (ix, iy), members in bins.items():
                    if ix0 <= ix <= ix1 and iy0 <= iy <= iy1:
                        seen.update(members)
            else:
                for ix in range(ix0, ix1 + 1):
                    for iy in range(iy0, iy1 + 1):
                        seen.update(bins.get((ix, iy), ()))
            for feature in seen:
                checks += 1
                xmin, ymin, xmax, ymax = boxes[feature]
                if xmin <= hi[0] and lo[0] <= xmax and ymin <= hi[1] and lo[1] <= ymax:
                    pairs.append((disk, feature))
        return CandidatePairs(_sorted_pairs(pairs), checks)


def disk_pairs(centres: Any, radii: Any, margin: float) -> CandidatePairs:
    """Disk–disk pairs whose gap ``|c_i − c_j| − r_i − r_j`` is at most ``margin``.

    Parameters
    ----------
    centres : array_like, shape (K, 2)
        Disk centres (m).
    radii : array_like, shape (K,)
        Disk radii (m).
    margin : float
        Gap threshold (m).

    Returns
    -------
    CandidatePairs
        ``(i, j)`` rows with ``i < j``. The pairs of centres within
        ``2 r_max + margin`` come from a k-d tree (``scipy.spatial.cKDTree``);
        each is then tested on arrays, and the few whose distance lies within
        rounding of ``r_i + r_j + margin`` by ``math.dist``, so the answer is
        that of the test ``math.dist(c_i, c_j) <= r_i + r_j + margin`` on
        every pair. One disk much larger than the rest makes the tree return
        more pairs to test, never a wrong answer.
    """
    c, r, m = _disks(centres, radii, margin)
    if len(c) < 2:
        return CandidatePairs(_sorted_pairs([]), 0)
    reach = 2.0 * float(r.max()) + m
    pairs = cKDTree(c).query_pairs(reach * (1.0 + 1e-9), output_type="ndarray")
    if not len(pairs):
        return CandidatePairs(_sorted_pairs([]), 0)
    pairs = np.sort(pairs.astype(np.intp), axis=1)
    i, j = pairs[:, 0], pairs[:, 1]
    distance = np.hypot(c[i, 0] - c[j, 0], c[i, 1] - c[j, 1])
    bound = r[i] + r[j] + m
    near = distance <= bound
    # np.hypot and math.dist agree to an ulp or two: decide the close calls as math.dist does
    close = np.nonzero(np.abs(distance - bound) <= 1e-12 * np.maximum(distance, bound))[0]
    xs, ys = c[:, 0].tolist(), c[:, 1].tolist()  # flat: no list per disk
    for k, a, b in zip(close.tolist(), i[close].tolist(), j[close].tolist(), strict=True):
        near[k] = math.dist((xs[a], ys[a]), (xs[b], ys[b])) <= bound[k]
    found = pairs[near]
    return CandidatePairs(found[np.lexsort((found[:, 1], found[:, 0]))], len(pairs))
