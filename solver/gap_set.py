"""The gaps of many contact pairs at once, per kind of pair (MECHANICS §1, §4).

:class:`GapSet` holds the candidate pairs of a phase as arrays by kind —
disk pairs, segments and vertices vectorised, arcs one by one — and gives
their gaps (m) and normal speeds (m/s) at one state: a segment or arc has a
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
from solver.geometry import Arc, Segment, Vertex

FEW_PAIRS = 16
"""Up to this many pairs a GapSet's gaps (and the closing times and proofs of
:mod:`solver.gap_closing`) are computed in float arithmetic, one pair at a time:
each array operation costs about a microsecond, a pair's float arithmetic less."""


class GapSet:
    """Gaps and normal speeds of many candidate pairs, vectorised for disk pairs."""

    def __init__(self, kin: DiskKinematics, pairs: Sequence[ContactPair]) -> None:
        self.kin = kin
        # index arrays, a ContactPair made only for a row that is read (PairRows)
        self.pairs = rows = PairRows.of(kin, pairs)
        self._n = len(rows)
        self.first, self.second = rows.first, rows.second

    def subset(self, rows: list[int]) -> GapSet:
        """The pairs at ``rows`` (increasing indices) as a GapSet.

        The float rows this set has made (:attr:`hulls`, the ``few_…`` rows)
        are carried over, the same tuples with the pairs' and vertices'
        places renumbered: those the new set would make from the pairs'
        indices, in the same order.
        """
        part = GapSet(self.kin, self.pairs.select(np.array(rows, dtype=np.intp)))
        made = self.__dict__
        if "hulls" in made:
            hulls = made["hulls"]
            part.__dict__["hulls"] = [hulls[n] for n in rows]
        if "_few_rows" in made:
            place = {n: k for k, n in enumerate(rows)}
            disks, segments, vertices, arcs, covers, cover_arcs = made["_few_rows"]
            vertex_place: dict[int, int] = {}
            kept_vertices = []
            for m, row in enumerate(vertices):
                if row[0] in place:
                    vertex_place[m] = len(kept_vertices)
                    kept_vertices.append((place[row[0]], *row[1:]))
            few = (
                [(place[row[0]], *row[1:]) for row in disks if row[0] in place],
                [(place[row[0]], *row[1:]) for row in segments if row[0] in place],
                kept_vertices,
                [place[n] for n in arcs if n in place],
                [(vertex_place[row[0]], *row[1:]) for row in covers if row[0] in vertex_place],
                [(vertex_place[m], f) for m, f in cover_arcs if m in vertex_place],
            )
            part.__dict__.update(
                _few_rows=few,
                few_disk_rows=few[0],
                few_segment_rows=few[1],
                few_vertex_rows=few[2],
                few_cover_rows=few[4],
            )
            if part._n <= FEW_PAIRS:
                part.__dict__.update(arc_rows=few[3], cover_arcs=few[5])
        return part

    # The arrays of each kind of pair are made when first read: a set of up to
    # FEW_PAIRS pairs is read through the float rows below (few_disk_rows, ...),
    # which come from the pairs' indices and DiskKinematics.float_tables without them.

    @cached_property
    def disk_rows(self) -> np.ndarray:
        """Rows that are disk pairs."""
        return np.nonzero(self.second >= 0)[0]

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
        """Whether a disk pair keeps its order (two beads on one rail)."""
        if self._n <= FEW_PAIRS:
            return any(row[4] for row in self.few_disk_rows)
        return bool(np.any(self.order))

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
        return np.nonzero(self._kind == SEGMENT)[0]

    @cached_property
    def vertex_rows(self) -> np.ndarray:
        """Rows that are a disk against a vertex."""
        return np.nonzero(self._kind == VERTEX)[0]

    @cached_property
    def arc_rows(self) -> list[int]:
        """Rows that are a disk against an arc (a list: arcs go one by one)."""
        if self._n <= FEW_PAIRS:
            return self._few_rows[3]
        return np.nonzero(self._kind == ARC)[0].tolist()

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
    def cover_rows(self) -> np.ndarray:
        """Vertex place (in :attr:`vertex_rows`) of each segment covering a vertex."""
        return np.array([r for r, f in self._covering if isinstance(f, Segment)], dtype=int)

    @cached_property
    def _cover_ends(self) -> np.ndarray:
        return np.array(
            [(*f.a, *f.b) for _, f in self._covering if isinstance(f, Segment)], dtype=float
        ).reshape(-1, 4)

    @cached_property
    def cover_a(self) -> np.ndarray:
        """Start point of each covering segment (m), shape (C, 2)."""
        return self._cover_ends[:, :2]

    @cached_property
    def cover_e(self) -> np.ndarray:
        """``b − a`` of each covering segment (m), shape (C, 2)."""
        return self._cover_ends[:, 2:] - self._cover_ends[:, :2]

    @cached_property
    def cover_len2(self) -> np.ndarray:
        """``|b − a|²`` of each covering segment (m²)."""
        return row_dots(self.cover_e, self.cover_e)

    @cached_property
    def cover_len(self) -> np.ndarray:
        """``|b − a|`` of each covering segment (m)."""
        return np.sqrt(self.cover_len2)

    @cached_property
    def cover_disks(self) -> np.ndarray:
        """Disk of the vertex pair each covering segment hides."""
        return self.vertex_disks[self.cover_rows]

    @cached_property
    def cover_arcs(self) -> list[tuple[int, Arc]]:
        """``(vertex place, arc)`` of each arc ending at a vertex pair's vertex."""
        if self._n <= FEW_PAIRS:
            return self._few_rows[5]
        return [(r, f) for r, f in self._covering if isinstance(f, Arc)]

    def __len__(self) -> int:
        return self._n

    @cached_property
    def _few_rows(self) -> tuple[list, list, list, list, list, list]:
        """The float rows of every kind, from the pairs' indices (the arrays are not made).

        The numbers are those of the arrays (``DiskKinematics.float_tables``
        computes a segment's ``e``, ``|e|²``, normal and ``|e|`` as the arrays
        do): ``(disk rows, segment rows, vertex rows, arc rows, cover rows,
        cover arcs)``. The ``few_…`` attributes are set from them at once.
        """
        radii, features, covering = self.kin.float_tables
        disks: list[tuple[int, int, int, float, float]] = []
        segments: list[tuple] = []
        vertices: list[tuple[int, int, float, float, float]] = []
        arcs: list[int] = []
        covers: list[tuple] = []
        cover_arcs: list[tuple[int, Arc]] = []
        rows = self.pairs
        for n, (i, j, index, order) in enumerate(
            zip(
                rows.first.tolist(),
                rows.second.tolist(),
                rows.feature.tolist(),
                rows.order.tolist(),
                strict=True,
            )
        ):
            if j >= 0:
                disks.append((n, i, j, radii[i] + radii[j], order))
                continue
            kind, numbers = features[index]
            if kind == SEGMENT:
                ax, ay, ex, ey, length2, nx, ny, _ = numbers
                segments.append((n, i, ax, ay, ex, ey, length2, nx, ny, radii[i]))
            elif kind == VERTEX:
                m = len(vertices)
                vertices.append((n, i, *numbers, radii[i]))
                for f, cover in covering[index]:
                    if cover is None:
                        cover_arcs.append((m, f))
                    else:
                        covers.append((m, i, *cover))
            else:
                arcs.append(n)
        # one lookup for all of them (a cached_property's first read takes a lock)
        self.__dict__.update(
            few_disk_rows=disks,
            few_segment_rows=segments,
            few_vertex_rows=vertices,
            few_cover_rows=covers,
        )
        if self._n <= FEW_PAIRS:
            self.__dict__.update(arc_rows=arcs, cover_arcs=cover_arcs)
        return disks, segments, vertices, arcs, covers, cover_arcs

    @cached_property
    def few_disk_rows(self) -> list[tuple[int, int, int, float, float]]:
        """Per disk pair ``(row, i, j, r_i + r_j, order)`` in floats, for the scalar paths."""
        return self._few_rows[0]

    @cached_property
    def few_cover_rows(self) -> list[tuple[int, int, float, float, float, float, float, float]]:
        """Per segment covering a vertex ``(vertex place, disk, ax, ay, ex, ey, |e|², |e|)``."""
        return self._few_rows[4]

    @cached_property
    def few_segment_rows(self) -> list[tuple[int, int, float, ...]]:
        """Per segment pair ``(row, disk, ax, ay, ex, ey, |e|², nx, ny, r)`` in floats."""
        return self._few_rows[1]

    @cached_property
    def few_vertex_rows(self) -> list[tuple[int, int, float, float, float]]:
        """Per vertex pair ``(row, disk, px, py, r)`` in floats."""
        return self._few_rows[2]

    @cached_property
    def hulls(self) -> list[tuple[int, int, float, float, float, float, float, float | None]]:
        """Per pair ``(i, j, Ax, Ay, Bx, By, ρ, room)``: a segment ``[A, B]`` and a reach ``ρ`` (m).

        The pair's disk ``i`` overlaps its feature only if its centre (less
        disk ``j``'s centre for a disk pair; ``j = -1`` otherwise) comes closer
        than ``ρ`` to ``[A, B]``: a segment itself with the disk's radius, a
        vertex point or the origin (a disk pair) with the radius (the radii's
        sum), an arc's centre with ``R + r`` while outside its circle. For an
        arc ``room`` is ``R − r`` (m), the room of a disk inside the circle;
        None for the other kinds.
        """
        rows = []
        radii = self.kin.radii.tolist()
        shapes = [shape for _, shape, _, _ in self.kin.feature_list]
        pairs = self.pairs
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

    def values(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(g, u_n)`` per pair (m, m/s); ``g = inf`` outside a feature's region."""
        system = self.kin.system
        c, cd = system.centres(q), system.centre_velocities(v)
        if self._n <= FEW_PAIRS:
            return self._few_values(c, cd)
        g, u_n = np.empty(self._n), np.empty(self._n)
        for fill in (self.disk_gaps, self.segment_gaps, self.vertex_gaps):
            fill(c, cd, g, u_n)
        self.arc_gaps(c, cd, g, u_n)
        return g, u_n

    def gaps(self, q: np.ndarray, band: bool = False, bare: bool = False) -> np.ndarray:
        """``g`` per pair (m), as :meth:`values` without the speeds.

        With ``band`` a segment or arc counts ``REGION_TOL`` beyond its ends;
        with ``bare`` a vertex's gap is its distance also where a feature
        ending at it hides it.
        """
        c = self.kin.system.centres(q)
        if self._n <= FEW_PAIRS:
            return self._few_values(c, None, REGION_TOL if band else 0.0, bare)[0]
        g = np.empty(self._n)
        self.disk_gaps(c, None, g, None)
        self.segment_gaps(c, None, g, None, REGION_TOL if band else 0.0)
        self.vertex_gaps(c, None, g, None, REGION_TOL if band else 0.0, bare)
        self.arc_gaps(c, None, g, None, REGION_TOL if band else 0.0)
        return g

    def _few_values(
        self, c: np.ndarray, cd: np.ndarray | None, band: float = 0.0, bare: bool = False
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`values` (``cd`` given) or :meth:`gaps` (``cd`` None: no speeds) in floats.

        The operations of :meth:`disk_gaps`, :meth:`segment_gaps` and
        :meth:`vertex_gaps` (with :meth:`_hidden`) in the same order, one pair
        at a time: the same numbers, bit for bit. The distances of all pairs
        from one ``np.hypot`` call, as there; a :func:`row_dots` sum as
        numpy's (from ``0.0``: two products of ``−0.0`` add to ``0.0``); a
        division by a zero distance as numpy's (:func:`_quotient`); arcs as in
        :meth:`arc_gaps`. ``c`` and ``cd`` are the disk centres (K, 2) (m) and
        their velocities (m/s); ``band`` (m) and ``bare`` as :meth:`gaps` takes
        them.
        """
        n = self._n
        g, u_n = [0.0] * n, [0.0] * n
        points = c.tolist()
        rates = None if cd is None else cd.tolist()
        # the vectors w whose lengths are needed: disk pairs, segments whose region
        # holds the centre, vertices, in this order
        w0s: list[float] = []
        w1s: list[float] = []
        disk_rows = self.few_disk_rows
        for _, i, j, _, _ in disk_rows:
            (xi, yi), (xj, yj) = points[i], points[j]
            w0s.append(xi - xj)
            w1s.append(yi - yj)
        inside = []
        for m, k, ax, ay, ex, ey, length2, _, _, r in self.few_segment_rows:
            x, y = points[k]
            w0, w1 = x - ax, y - ay
            s = (w0 * ex + w1 * ey) / length2
            reach = band / math.sqrt(length2) if band else 0.0
            if s > -reach and s < 1.0 + reach:
                inside.append((m, k, r))
                w0s.append(w0 - s * ex)
                w1s.append(w1 - s * ey)
            else:
                g[m], u_n[m] = math.inf, math.nan
        vertex_rows = self.few_vertex_rows
        for _, k, px, py, _ in vertex_rows:
            x, y = points[k]
            w0s.append(x - px)
            w1s.append(y - py)
        distances = np.hypot(w0s, w1s).tolist() if w0s else w0s
        at = 0
        for m, i, j, rsum, order in disk_rows:
            w0, d = w0s[at], distances[at]
            passed = order * w0 < 0.0  # beads that have passed each other
            g[m] = -d - rsum if passed else d - rsum
            if rates is not None:
                (ui, vi), (uj, vj) = rates[i], rates[j]
                x = w0 * (ui - uj) + w1s[at] * (vi - vj)
                speed = x / d if d else _quotient(x, d)
                u_n[m] = -speed if passed else speed
            at += 1
        for m, k, r in inside:
            d = distances[at]
            g[m] = d - r
            if rates is not None:
                ui, vi = rates[k]
                x = 0.0 + w0s[at] * ui + w1s[at] * vi  # row_dots: numpy's sum starts from 0.0
                u_n[m] = x / d if d else _quotient(x, d)
            at += 1
        if vertex_rows:
            hidden = set() if bare else self._few_hidden(c, points, band)
            for place, (m, k, _, _, r) in enumerate(vertex_rows):
                d = distances[at]
                g[m] = math.inf if place in hidden else d - r
                if rates is not None:
                    ui, vi = rates[k]
                    x = 0.0 + w0s[at] * ui + w1s[at] * vi
                    u_n[m] = x / d if d else _quotient(x, d)
                at += 1
        out_g = np.array(g)
        out_u = None if rates is None else np.array(u_n)
        if self.arc_rows:
            self.arc_gaps(c, cd, out_g, out_u, band)
        return out_g, out_u

    def _few_hidden(self, c: np.ndarray, points: list[list[float]], band: float) -> set[int]:
        """:meth:`_hidden` in float arithmetic: the hidden vertex rows (their places)."""
        hidden = set()
        for m, k, ax, ay, ex, ey, length2, length in self.few_cover_rows:
            w0, w1 = points[k][0] - ax, points[k][1] - ay
            s = (w0 * ex + w1 * ey) / length2
            reach = band / length
            if s > -reach and s < 1.0 + reach:
                hidden.add(m)
        vertex_rows = self.few_vertex_rows
        for m, arc in self.cover_arcs:
            if m not in hidden and in_region(arc, c[vertex_rows[m][1]], band):
                hidden.add(m)
        return hidden

    def of_disks(self, rows: np.ndarray) -> GapSet:
        """The pairs of ``rows`` and every other pair of their disks (both disks of a disk pair)."""
        disks = np.concatenate((self.first[rows], self.second[rows]))
        disks = disks[disks >= 0]
        mine = np.isin(self.first, disks) | np.isin(self.second, disks)
        mine[rows] = True
        return GapSet(self.kin, self.pairs.select(mine))

    # Each of the following fills the rows of one kind of pair: the gaps ``g``
    # (m) from the disk centres ``c`` (K, 2) and, given their velocities
    # ``cd``, the normal speeds ``u_n`` (m/s).

    def disk_gaps(
        self, c: np.ndarray, cd: np.ndarray | None, g: np.ndarray, u_n: np.ndarray | None
    ) -> None:
        if not len(self.disk_rows):
            return
        d = c[self.I] - c[self.J]
        dist = np.hypot(d[:, 0], d[:, 1])
        gap = dist - self.rsum
        if self.ordered:  # beads that have passed each other overlap by more than their size
            passed = self.order * d[:, 0] < 0.0
            gap = np.where(passed, -dist - self.rsum, gap)
        g[self.disk_rows] = gap
        if cd is not None:
            rel = cd[self.I] - cd[self.J]
            with np.errstate(invalid="ignore", divide="ignore"):
                speed = (d[:, 0] * rel[:, 0] + d[:, 1] * rel[:, 1]) / dist
            u_n[self.disk_rows] = np.where(passed, -speed, speed) if self.ordered else speed

    def segment_gaps(
        self,
        c: np.ndarray,
        cd: np.ndarray | None,
        g: np.ndarray,
        u_n: np.ndarray | None,
        band: float = 0.0,
    ) -> None:
        if not len(self.segment_rows):
            return
        k = self.seg_disks
        w = c[k] - self.seg_a
        s = row_dots(w, self.seg_e) / self.seg_len2
        w -= s[:, None] * self.seg_e
        d = np.hypot(w[:, 0], w[:, 1])
        if band:
            reach = band / np.sqrt(self.seg_len2)
            inside = (s > -reach) & (s < 1.0 + reach)
        else:
            inside = (s > 0.0) & (s < 1.0)
        g[self.segment_rows] = np.where(inside, d - self.seg_radii, np.inf)
        if cd is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                u_n[self.segment_rows] = np.where(inside, row_dots(w, cd[k]) / d, np.nan)

    def vertex_gaps(
        self,
        c: np.ndarray,
        cd: np.ndarray | None,
        g: np.ndarray,
        u_n: np.ndarray | None,
        band: float = 0.0,
        bare: bool = False,
    ) -> None:
        if not len(self.vertex_rows):
            return
        k = self.vertex_disks
        w = c[k] - self.vertex_p
        d = np.hypot(w[:, 0], w[:, 1])
        gap = d - self.vertex_radii
        hidden = None if bare else self._hidden(c, band)
        if hidden is not None:
            gap = np.where(hidden, np.inf, gap)
        g[self.vertex_rows] = gap
        if cd is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                u_n[self.vertex_rows] = row_dots(w, cd[k]) / d

    def nearest_possible(self, c: np.ndarray, g: np.ndarray) -> None:
        """Lower the gaps ``g`` of vertices and arcs to a bound valid beyond their regions.

        A disk outside an arc's sector (or where a vertex is hidden) has no
        gap to it, yet may enter with the gap already closed: its distance to
        the whole circle (to the bare vertex) bounds the gap from below.
        """
        if len(self.vertex_rows):
            w = c[self.vertex_disks] - self.vertex_p
            g[self.vertex_rows] = np.minimum(
                g[self.vertex_rows], np.hypot(w[:, 0], w[:, 1]) - self.vertex_radii
            )
        for n in self.arc_rows:
            pair = self.pairs[n]
            rho = float(np.hypot(*(c[pair.i] - np.asarray(pair.feature.center))))
            g[n] = min(g[n], abs(rho - pair.feature.radius) - self.kin.radii[pair.i])

    def _hidden(self, c: np.ndarray, band: float) -> np.ndarray | None:
        """Per vertex row: True where a segment or arc ending at it covers the disk centre.

        A feature covers its region and ``band`` (m) beyond its ends: the
        contact set at an event uses ``REGION_TOL``, the watched gaps none, so
        a corner is watched wherever its faces' own gaps are not.
        """
        if not len(self.cover_rows) and not self.cover_arcs:
            return None
        hidden = np.zeros(len(self.vertex_rows), dtype=bool)
        if len(self.cover_rows):
            w = c[self.cover_disks] - self.cover_a
            s = row_dots(w, self.cover_e) / self.cover_len2
            reach = band / self.cover_len
            hidden[self.cover_rows[(s > -reach) & (s < 1.0 + reach)]] = True
        for r, arc in self.cover_arcs:
            if not hidden[r] and in_region(arc, c[self.vertex_disks[r]], band):
                hidden[r] = True
        return hidden

    def arc_gaps(
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
    bit for bit: the array route's elementwise operations on one more
    axis (a :func:`row_dots` sum written out from ``0.0``, as numpy sums).
    None for a set with arcs (they go one by one: ask :meth:`GapSet.values`).
    """
    if gaps.arc_rows or gaps.cover_arcs:
        return None
    system = gaps.kin.system
    C, CD = system.centres_many(Q), system.centre_velocities_many(V)
    g, u_n = np.empty((len(Q), len(gaps))), np.empty((len(Q), len(gaps)))
    with np.errstate(invalid="ignore", divide="ignore"):
        if len(gaps.disk_rows):
            d = C[:, gaps.I] - C[:, gaps.J]
            d0, d1 = d[..., 0], d[..., 1]
            dist = np.hypot(d0, d1)
            rel = CD[:, gaps.I] - CD[:, gaps.J]
            speed = (d0 * rel[..., 0] + d1 * rel[..., 1]) / dist
            passed = gaps.order * d0 < 0.0
            g[:, gaps.disk_rows] = np.where(passed, -dist - gaps.rsum, dist - gaps.rsum)
            u_n[:, gaps.disk_rows] = np.where(passed, -speed, speed)
        if len(gaps.segment_rows):
            k = gaps.seg_disks
            w = C[:, k] - gaps.seg_a
            e0, e1 = gaps.seg_e[:, 0], gaps.seg_e[:, 1]
            s = (0.0 + w[..., 0] * e0 + w[..., 1] * e1) / gaps.seg_len2
            w0, w1 = w[..., 0] - s * e0, w[..., 1] - s * e1
            dist = np.hypot(w0, w1)
            inside = (s > 0.0) & (s < 1.0)
            rate = CD[:, k]
            g[:, gaps.segment_rows] = np.where(inside, dist - gaps.seg_radii, np.inf)
            u_n[:, gaps.segment_rows] = np.where(
                inside, (0.0 + w0 * rate[..., 0] + w1 * rate[..., 1]) / dist, np.nan
            )
        if len(gaps.vertex_rows):
            k = gaps.vertex_disks
            w = C[:, k] - gaps.vertex_p
            w0, w1 = w[..., 0], w[..., 1]
            dist = np.hypot(w0, w1)
            gap = dist - gaps.vertex_radii
            if len(gaps.cover_rows):
                cw = C[:, gaps.cover_disks] - gaps.cover_a
                e0, e1 = gaps.cover_e[:, 0], gaps.cover_e[:, 1]
                s = (0.0 + cw[..., 0] * e0 + cw[..., 1] * e1) / gaps.cover_len2
                reach = 0.0 / gaps.cover_len
                covered = (s > -reach) & (s < 1.0 + reach)
                hidden = np.zeros(gap.shape, dtype=bool)
                for column, place in enumerate(gaps.cover_rows.tolist()):
                    hidden[:, place] |= covered[:, column]
                gap = np.where(hidden, np.inf, gap)
            rate = CD[:, k]
            g[:, gaps.vertex_rows] = gap
            u_n[:, gaps.vertex_rows] = (0.0 + w0 * rate[..., 0] + w1 * rate[..., 1]) / dist
    return g, u_n


def _quotient(x: float, d: float) -> float:
    """``x / d`` (floats) as numpy divides: a zero ``d`` gives ``±inf`` or NaN, not an error."""
    if d:
        return x / d
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(np.float64(x) / d)


def row_dots(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Dot products of the rows of two (K, 2) arrays: ``x₀y₀ + x₁y₁``, one per row."""
    return np.add.reduce(x * y, axis=1)
