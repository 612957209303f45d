"""The gaps of many contact pairs at once, per kind of pair (MECHANICS §1, §4).

:class:`GapSet` holds the candidate pairs of a phase as index arrays and
gives, through one compiled loop for every size (:mod:`solver.gap_kernel`;
arcs one by one), their gaps (m) and normal speeds (m/s) at one state: a segment or arc has a
gap only within its region (``REGION_TOL`` beyond its ends with ``band``), a
vertex only where no feature ending at it reaches (its bare distance with
``bare``), and two beads on one rail that have passed each other overlap by
more than their size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from solver.contact_pairs import (
    ARC,
    SEGMENT,
    VERTEX,
    ContactPair,
    DiskKinematics,
    PairRows,
)
from solver.event_tolerances import REGION_TOL
from solver.feature_regions import continued_nearest, in_region
from solver.gap_kernel import compiled_gap_values
from solver.geometry import Arc

FEW_PAIRS = 16
"""Up to this many pairs a free flight's check for missed closings is first a proof
in closed form (:func:`solver.gap_closing.flight_clear`) and a lone disk's bounce
train is looked for; more pairs go to the check's samples."""


class GapSet:
    """Gaps and normal speeds of many candidate pairs, vectorised for disk pairs."""

    def __init__(self, kin: DiskKinematics, pairs: Sequence[ContactPair]) -> None:
        self.kin = kin
        # index arrays, a ContactPair made only for a row that is read (PairRows)
        self.pairs = rows = PairRows.of(kin, pairs)
        self._n = len(rows)
        self.first, self.second = rows.first, rows.second

    def subset(self, rows: list[int]) -> GapSet:
        """The pairs at ``rows`` (increasing indices) as a GapSet."""
        return GapSet(self.kin, self.pairs.select(np.array(rows, dtype=np.intp)))

    @cached_property
    def disk_rows(self) -> np.ndarray:
        """Rows that are disk pairs."""
        return (self.second >= 0).nonzero()[0]

    @cached_property
    def I(self) -> np.ndarray:  # noqa: E743 - the first disk of each disk pair
        """First disk of each disk pair."""
        return self.first[self.disk_rows]

    @cached_property
    def J(self) -> np.ndarray:
        """Second disk of each disk pair."""
        return self.second[self.disk_rows]

    @cached_property
    def rsum(self) -> np.ndarray:
        """``r_i + r_j`` of each disk pair (m)."""
        return self.kin.radii[self.I] + self.kin.radii[self.J]

    @cached_property
    def order(self) -> np.ndarray:
        """:attr:`ContactPair.order` of each disk pair."""
        return self.pairs.order[self.disk_rows]

    @cached_property
    def ordered(self) -> bool:
        """Whether a disk pair keeps its order (two beads on one rail).

        A pair with a feature has order 0 (:attr:`ContactPair.order`): every row is read;
        a scene of one disk has no disk pair.
        """
        return self.kin.n_disks > 1 and bool(self.pairs.order.any())

    @cached_property
    def _kind(self) -> np.ndarray:
        """Kind of each pair's feature (``SEGMENT``, ``VERTEX``, ``ARC``), −1 for a disk pair."""
        rows = self.pairs
        kind = np.full(self._n, -1, dtype=np.intp)
        against = rows.feature >= 0
        kind[against] = self.kin.feature_kind[rows.feature[against]]
        return kind

    @cached_property
    def segment_rows(self) -> np.ndarray:
        """Rows that are a disk against a segment."""
        return (self._kind == SEGMENT).nonzero()[0]

    @cached_property
    def vertex_rows(self) -> np.ndarray:
        """Rows that are a disk against a vertex."""
        return (self._kind == VERTEX).nonzero()[0]

    @cached_property
    def arc_rows(self) -> list[int]:
        """Rows that are a disk against an arc (a list: arcs go one by one)."""
        if not self.kin.arcs:  # a scene without arcs: none, without the kinds' arrays
            return []
        return (self._kind == ARC).nonzero()[0].tolist()

    @cached_property
    def seg_disks(self) -> np.ndarray:
        """Disk of each segment pair."""
        return self.first[self.segment_rows]

    @cached_property
    def seg_radii(self) -> np.ndarray:
        """Radius of each segment pair's disk (m)."""
        return self.kin.radii[self.seg_disks]

    @cached_property
    def vertex_disks(self) -> np.ndarray:
        """Disk of each vertex pair."""
        return self.first[self.vertex_rows]

    @cached_property
    def vertex_radii(self) -> np.ndarray:
        """Radius of each vertex pair's disk (m)."""
        return self.kin.radii[self.vertex_disks]

    @cached_property
    def _segment_ends(self) -> np.ndarray:
        """``(ax, ay, bx, by)`` of each segment pair's segment (m)."""
        return self.kin.feature_ends[self.pairs.feature[self.segment_rows]]

    @cached_property
    def seg_a(self) -> np.ndarray:
        """Start point ``a`` of each segment pair's segment (m), shape (S, 2)."""
        return self._segment_ends[:, :2]

    @cached_property
    def seg_e(self) -> np.ndarray:
        """``b − a`` of each segment pair's segment (m), shape (S, 2)."""
        ends = self._segment_ends
        return ends[:, 2:] - ends[:, :2]

    @cached_property
    def seg_len2(self) -> np.ndarray:
        """``|b − a|²`` of each segment pair's segment (m²)."""
        return row_dots(self.seg_e, self.seg_e)

    @cached_property
    def seg_normal(self) -> np.ndarray:
        """Unit normal ``(−e_y, e_x) / |e|`` of each segment pair's segment, shape (S, 2)."""
        length = np.sqrt(self.seg_len2)
        return (
            np.column_stack((-self.seg_e[:, 1], self.seg_e[:, 0]))
            / np.where(length > 0.0, length, 1.0)[:, None]
        )

    @cached_property
    def vertex_p(self) -> np.ndarray:
        """Point of each vertex pair's vertex (m), shape (V, 2)."""
        return self.kin.feature_point[self.pairs.feature[self.vertex_rows]]

    @cached_property
    def _covering(self) -> list[tuple[int, object]]:
        """``(vertex place, feature)`` of each segment or arc ending at a vertex pair's vertex."""
        neighbours = self.kin.neighbours
        vertices = self.pairs.feature[self.vertex_rows].tolist()
        return [(r, f) for r, index in enumerate(vertices) for f in neighbours[index]]

    @cached_property
    def cover_arcs(self) -> list[tuple[int, Arc]]:
        """``(vertex place, arc)`` of each arc ending at a vertex pair's vertex."""
        if not self.kin.arcs:
            return []
        return [(r, f) for r, f in self._covering if isinstance(f, Arc)]

    def __len__(self) -> int:
        return self._n

    def values(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(g, u_n)`` per pair (m, m/s); ``g = inf`` outside a feature's region."""
        system = self.kin.system
        return self._values(system.centres(q)[None], system.centre_velocities(v)[None])

    def gaps(self, q: np.ndarray, band: bool = False, bare: bool = False) -> np.ndarray:
        """``g`` per pair (m), as :meth:`values` without the speeds.

        With ``band`` a segment or arc counts ``REGION_TOL`` beyond its ends;
        with ``bare`` a vertex's gap is its distance also where a feature
        ending at it hides it.
        """
        return self._values(self.kin.system.centres(q)[None], None, band, bare)[0]

    def _values(
        self, C: np.ndarray, CD: np.ndarray | None, band: bool = False, bare: bool = False
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`values` (``CD`` given) or :meth:`gaps` at one state (``C`` of shape (1, K, 2)).

        :func:`solver.gap_kernel.gap_values` fills every row but the arcs'
        (:meth:`arc_gaps`, one by one) and the hiding of corners by arcs.
        """
        n, kin = self._n, self.kin
        reach = REGION_TOL if band else 0.0
        g = np.empty((1, n))
        u_n = g if CD is None else np.empty((1, n))
        rows = self.pairs
        kinds, numbers, covers, cover_numbers = kin.gap_tables
        compiled_gap_values()(
            C, C if CD is None else CD, CD is not None, rows.first, rows.second, rows.feature,
            rows.order, kin.radii, kinds, numbers, covers, cover_numbers, reach, bare, g, u_n,
        )  # fmt: skip
        g, u_n = g[0], None if CD is None else u_n[0]
        if self.arc_rows:
            self.arc_gaps(C[0], None if CD is None else CD[0], g, u_n, reach)
        if self.cover_arcs and not bare:
            self._arc_hidden(C[0], g, reach)
        return g, u_n

    def _arc_hidden(self, c: np.ndarray, g: np.ndarray, band: float) -> None:
        """``g = inf`` for a corner hidden by an arc ending at it (``band`` (m) past its ends)."""
        for place, arc in self.cover_arcs:
            n = int(self.vertex_rows[place])
            if g[n] != math.inf and in_region(arc, c[self.first[n]], band):
                g[n] = math.inf

    def of_disks(self, rows: np.ndarray) -> GapSet:
        """The pairs of ``rows`` and every other pair of their disks (both disks of a disk pair)."""
        disks = np.concatenate((self.first[rows], self.second[rows]))
        disks = disks[disks >= 0]
        mine = np.isin(self.first, disks) | np.isin(self.second, disks)
        mine[rows] = True
        return GapSet(self.kin, self.pairs.select(mine))

    def arc_gaps(  # the arcs' rows, one by one (m, m/s): what the compiled loop leaves
        self,
        c: np.ndarray,
        cd: np.ndarray | None,
        g: np.ndarray,
        u_n: np.ndarray | None,
        band: float = 0.0,
    ) -> None:
        for n in self.arc_rows:
            pair = self.pairs[n]
            near = pair.feature.nearest(c[pair.i])
            if near is None and band and in_region(pair.feature, c[pair.i], band):
                near = continued_nearest(pair.feature, c[pair.i])
            if near is None:
                g[n] = np.inf
                if cd is not None:
                    u_n[n] = np.nan
            else:
                g[n] = near.d - self.kin.radii[pair.i]
                if cd is not None:
                    u_n[n] = float(near.n @ cd[pair.i])


def values_many(gaps: GapSet, Q: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """:meth:`GapSet.values` of ``gaps`` at each row of ``Q``, ``V`` (T, N): each (T, pairs).

    Row ``k`` holds the numbers :meth:`GapSet.values` gives at ``(Q[k], V[k])``,
    bit for bit (the same compiled loop over one more axis). None for a set
    with arcs (they go one by one: ask :meth:`GapSet.values`).
    """
    if gaps.arc_rows or gaps.cover_arcs:
        return None
    system, kin, rows = gaps.kin.system, gaps.kin, gaps.pairs
    C, CD = system.centres_many(Q), system.centre_velocities_many(V)
    g, u_n = np.empty((len(Q), len(gaps))), np.empty((len(Q), len(gaps)))
    kinds, numbers, covers, cover_numbers = kin.gap_tables
    compiled_gap_values()(
        C, CD, True, rows.first, rows.second, rows.feature, rows.order, kin.radii, kinds,
        numbers, covers, cover_numbers, 0.0, False, g, u_n,
    )  # fmt: skip
    return g, u_n


def row_dots(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Dot products of the rows of two (K, 2) arrays: ``x₀y₀ + x₁y₁``, one per row."""
    return np.add.reduce(x * y, axis=1)
