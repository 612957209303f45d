"""Contact pairs: what the event-driven stepper watches (MECHANICS §1, §4).

A :class:`ContactPair` is a disk against a boundary feature (segment, vertex,
arc) or against another disk. :class:`DiskKinematics` finds the pairs near
the disks (broad phase) and evaluates one pair fully. Junctions: a segment
or arc counts ``REGION_TOL`` beyond its ends, and a vertex where segments or
arcs end is hidden wherever one of them reaches (that feature holds the
contact); two beads on one rail keep their order (a signed gap). The gaps of
many pairs at once are :class:`solver.gap_set.GapSet`'s; where they close
over a stretch of motion, :mod:`solver.gap_closing`'s.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, TypeVar

import numpy as np

from solver.broadphase import StaticIndex, disk_pairs
from solver.errors import SolverError
from solver.event_tolerances import FEW_DISKS, FRICTION_FLOOR, REGION_TOL
from solver.feature_regions import (
    _straight_nearest,
    continued_nearest,
    in_region,
    junction_neighbours,
)
from solver.geometry import (
    Segment,
    Vertex,
    disk_contact_from_nearest,
    disk_disk_contact,
)
from solver.system import Contact

SEGMENT, VERTEX, ARC = 0, 1, 2
"""Kinds of feature (``DiskKinematics.feature_kind``)."""


@dataclass(frozen=True, eq=False)
class ContactPair:
    """A disk–feature (``j < 0``) or disk–disk pair, evaluable at any state."""

    key: Hashable
    body: str
    other: str
    i: int
    j: int
    feature: Any
    restitution: float
    friction: float
    neighbours: tuple[Any, ...] = ()
    """For a vertex: the segments and arcs that end at it (they hide it where they reach)."""
    order: float = 0.0
    """For two beads whose disks overlap in height: the sign of ``x_i − x_j`` (they never pass)."""
    feature_index: int = -1
    """The feature's place in ``System.features`` (−1 for a disk–disk pair)."""


_Row = TypeVar("_Row")


class _MadeOnRead(Sequence[_Row]):
    """Rows held as arrays, made into objects (``_make(k)``) when first read and then kept.

    The sequence part of :class:`PairRows` and :class:`RailContacts`. ``_made``
    maps a row index (no unit) to its object; ``_noun`` names the rows in the ``IndexError``.
    """

    def _make(self, k: int) -> _Row:
        raise NotImplementedError

    def __getitem__(self, k):  # type: ignore[override]
        if isinstance(k, slice):
            return [self[n] for n in range(*k.indices(len(self)))]
        k = int(k)
        if k < 0:
            k += len(self)
        found = self._made.get(k)
        if found is None:
            if not 0 <= k < len(self):
                raise IndexError(f"{self._noun} index out of range")
            found = self._made[k] = self._make(k)
        return found

    def __iter__(self) -> Iterator[_Row]:
        for k in range(len(self)):
            yield self[k]


class PairRows(_MadeOnRead[ContactPair]):
    """Candidate pairs as index arrays; a :class:`ContactPair` is made only for a row read.

    A chain of 10⁴ beads has three candidate pairs per bead, of which the
    event loop reads a handful (the active contacts, the pair of a found
    event): the gaps, the closed set and the impact work on the arrays.
    Reading row ``n`` gives the pair :class:`DiskKinematics` holds for it
    (one object per pair key, as before).

    Attributes
    ----------
    first : numpy.ndarray of int
        The disk of each pair (``ContactPair.i``).
    second : numpy.ndarray of int
        The other disk, −1 against a feature (``ContactPair.j``).
    feature : numpy.ndarray of int
        The feature's place in ``System.features``, −1 for a disk pair.
    order : numpy.ndarray of float
        ``ContactPair.order`` of each pair.
    """

    _noun = "pair"

    def __init__(
        self,
        kin: DiskKinematics,
        first: np.ndarray,
        second: np.ndarray,
        feature: np.ndarray,
        order: np.ndarray,
        made: dict[int, ContactPair] | None = None,
    ) -> None:
        self.kin = kin
        self.first, self.second, self.feature, self.order = first, second, feature, order
        self._made = {} if made is None else made
        self._n = len(first)
        self._codes: np.ndarray | None = None  # codes(), made on first use

    @classmethod
    def of(cls, kin: DiskKinematics, pairs: Sequence[ContactPair]) -> PairRows:
        """The pairs of a list (already made), as arrays."""
        if isinstance(pairs, PairRows):
            return pairs
        n = len(pairs)
        if not n:  # no pairs: nothing to read from them (an empty array has no entry to write)
            none = np.zeros(0, dtype=np.intp)
            return cls(kin, none, none, none, np.zeros(0), {})
        return cls(
            kin,
            np.array([p.i for p in pairs], dtype=np.intp).reshape(n),
            np.array([p.j for p in pairs], dtype=np.intp).reshape(n),
            np.array([p.feature_index for p in pairs], dtype=np.intp).reshape(n),
            np.array([p.order for p in pairs], dtype=float).reshape(n),
            dict(enumerate(pairs)),
        )

    def __len__(self) -> int:
        return self._n

    def _make(self, n: int) -> ContactPair:
        return self.kin.pair_of(int(self.first[n]), int(self.second[n]), int(self.feature[n]))

    def __eq__(self, other: object) -> bool:
        """The same pairs in the same order (pairs are unique per key: compared by rows)."""
        if isinstance(other, PairRows):
            return (
                np.array_equal(self.first, other.first)
                and np.array_equal(self.second, other.second)
                and np.array_equal(self.feature, other.feature)
            )
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(a is b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def select(self, rows: np.ndarray) -> PairRows:
        """The pairs at ``rows`` (indices or a boolean mask), in that order."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = rows.nonzero()[0]
        made = self._made
        kept = {k: made[n] for k, n in enumerate(rows.tolist()) if n in made} if made else None
        return PairRows(
            self.kin, self.first[rows], self.second[rows], self.feature[rows], self.order[rows],
            kept,
        )  # fmt: skip

    def __add__(self, other: PairRows) -> PairRows:
        """These pairs, then ``other``'s."""
        made = dict(self._made)
        made.update((k + len(self), pair) for k, pair in other._made.items())
        return PairRows(
            self.kin,
            np.concatenate((self.first, other.first)),
            np.concatenate((self.second, other.second)),
            np.concatenate((self.feature, other.feature)),
            np.concatenate((self.order, other.order)),
            made,
        )

    def codes(self) -> np.ndarray:
        """One integer per pair, distinct for distinct pairs (:meth:`DiskKinematics.pair_code`);
        made once (the rows never change) for the completeness check and the watched set."""
        codes = self._codes
        if codes is None:
            features = len(self.kin.feature_list)
            other = np.where(self.feature >= 0, self.feature, features + self.second)
            codes = self._codes = self.first * (features + self.kin.n_disks) + other
        return codes

    def rail_rows(self) -> np.ndarray:
        """Rows that are two beads on one rail (their kinematics on arrays)."""
        j = self.second
        rail_y = self.kin.rail_y
        mask = j >= 0
        mask[mask] = rail_y[self.first[mask]] == rail_y[j[mask]]
        return mask


FEW_EVALUATED = 8
"""Up to this many pairs without two beads on one rail, :meth:`DiskKinematics.evaluate_many`
evaluates them one by one (arrays would cost more than they save)."""


class RailContacts(_MadeOnRead[Contact]):
    """Pairs of beads on one rail evaluated at one state, as arrays (a chain's contacts).

    Row ``k`` is the :class:`Contact` :meth:`DiskKinematics.evaluate` makes
    for pair ``k`` — the same numbers, bit for bit — made only when read;
    the impact law, the contact problem and the event handling read the
    arrays. The normal is ``(n_x, n_y) = (±1, ±0.0)``: ``G`` is ``(n_x, −n_x)``
    on the beads' ``x``, ``H`` is ``(n_y, −n_y)``, the tangential speed and
    the curvature terms are 0.

    Attributes
    ----------
    pairs : PairRows
        The pairs, one row each.
    g, u_n : numpy.ndarray, shape (K,)
        Gaps (m) and normal speeds (m/s).
    dofs : numpy.ndarray of int, shape (K, 2)
        The beads' ``x`` coordinates in ``q``, read-only.
    G_local, H_local : numpy.ndarray, shape (K, 2)
        The Jacobian rows there, read-only.
    restitution, friction : numpy.ndarray, shape (K,)
        The pairs' coefficients.
    """

    _noun = "contact"

    def __init__(
        self,
        kin: DiskKinematics,
        pairs: PairRows,
        g: np.ndarray,
        u_n: np.ndarray,
        nx: np.ndarray,
        ny: np.ndarray,
        dofs: np.ndarray,
        point_x: np.ndarray,
    ) -> None:
        self.kin, self.pairs, self.g, self.u_n = kin, pairs, g, u_n
        self._nx, self._ny, self._point_x = nx, ny, point_x
        dofs.setflags(write=False)
        self.dofs = dofs
        self.G_local = _read_only(np.column_stack((nx, -nx)))
        self.H_local = _read_only(np.column_stack((ny, -ny)))
        system = kin.system
        friction = float(system.disk_friction)
        K = len(g)
        self.restitution = np.full(K, float(system.disk_restitution))
        self.friction = np.full(K, friction if friction >= FRICTION_FLOOR else 0.0)
        self.u_t = self.gamma_n = self.gamma_t = np.zeros(K)
        self._made: dict[int, Contact] = {}

    def __len__(self) -> int:
        return len(self.g)

    def select(self, rows: np.ndarray) -> RailContacts:
        """The contacts at ``rows`` (indices or a boolean mask), in that order."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = rows.nonzero()[0]
        return RailContacts(
            self.kin, self.pairs.select(rows), self.g[rows], self.u_n[rows],
            self._nx[rows], self._ny[rows], self.dofs[rows], self._point_x[rows],
        )  # fmt: skip

    def keys(self, rows: np.ndarray) -> list[Hashable]:
        """The pair keys ``(body, other body)`` of ``rows`` (indices), without making the pairs."""
        ids = self.kin.system.disk_body_id
        first, second = self.pairs.first, self.pairs.second
        return [(ids(first[k]), ids(second[k])) for k in np.asarray(rows).tolist()]

    def body_ids(self, rows: np.ndarray) -> tuple[list[str], list[str]]:
        """The ids of the two beads of each of ``rows`` (indices): ``body`` and ``other``."""
        ids = self.kin.system.disk_body_id
        first, second = self.pairs.first[rows].tolist(), self.pairs.second[rows].tolist()
        return [ids(i) for i in first], [ids(j) for j in second]

    @cached_property
    def _rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Normals, tangents and contact points (K, 2), read-only (rows of the Contacts)."""
        nx, ny = self._nx, self._ny
        j = self.pairs.second
        rj = self.kin.radii[j]
        points = np.column_stack((self._point_x, self.kin.rail_y[j] + rj * ny))
        return (
            _read_only(np.column_stack((nx, ny))),
            _read_only(np.column_stack((ny, -nx))),
            _read_only(points),
        )

    def _make(self, k: int) -> Contact:
        pair = self.pairs[k]
        normals, tangents, points = self._rows
        return Contact(
            key=pair.key,
            body=pair.body,
            other=pair.other,
            g=float(self.g[k]),
            n=normals[k],
            t=tangents[k],
            point=points[k],
            dofs=self.dofs[k],
            G_local=self.G_local[k],
            H_local=self.H_local[k],
            u_n=float(self.u_n[k]),
            u_t=0.0,
            gamma_n=0.0,
            gamma_t=0.0,
            restitution=pair.restitution,
            friction=pair.friction,
            N=self.kin.system.N,
            inside=True,
        )


def _read_only(rows: np.ndarray) -> np.ndarray:
    rows.setflags(write=False)
    return rows


class _PairsByKey(dict):
    """``DiskKinematics.pairs``: the pair of a key, made when first asked for.

    A disk pair's key is ``(body, other body)``, a feature pair's ``(body,
    feature id)``; a disk pair is known only once a search has met it (its
    :attr:`ContactPair.order` is fixed then).
    """

    def __init__(self, kin: DiskKinematics) -> None:
        super().__init__()
        self._kin = weakref.proxy(kin)  # kin holds this dict: no cycle

    def __missing__(self, key: Hashable) -> ContactPair:
        kin = self._kin
        try:
            body, other = key  # type: ignore[misc]
            i = kin.system.disk_index(body)
        except (TypeError, ValueError, KeyError):
            raise KeyError(key) from None
        index = kin.feature_of_id.get(other, -1)
        if index >= 0:
            return kin.pair_of(i, -1, index)
        try:
            j = kin.system.disk_index(other)
        except KeyError:
            raise KeyError(key) from None
        if i * kin.n_disks + j not in kin.orders:
            raise KeyError(key)
        return kin.pair_of(i, j, -1)


def vertex_hidden(pair: ContactPair, c: np.ndarray) -> bool:
    """True when a vertex is covered by a feature ending at it: that feature holds the contact."""
    return any(in_region(f, c, REGION_TOL) for f in pair.neighbours)


class DiskKinematics:
    """Disk layout of a System, for evaluating chosen contact pairs quickly."""

    def __init__(self, system: Any) -> None:
        self.system = system
        self.N = system.N
        k = system.n_disks
        self.radii = np.asarray(system.radii, dtype=float) if k else np.zeros(0)
        self.feature_list = system.features
        self._shapes = [f for _, f, _, _ in self.feature_list]
        self.neighbours = junction_neighbours(self._shapes)
        # any arc (neither segment nor vertex)? Without, a GapSet has no arc row to look for
        self.arcs = not all(isinstance(f, (Segment, Vertex)) for f in self._shapes)
        self.n_disks = k
        self.feature_of_id: dict[str, int] = {}
        for index, (fid, _, _, _) in enumerate(self.feature_list):
            self.feature_of_id.setdefault(fid, index)
        self.pairs: dict[Hashable, ContactPair] = _PairsByKey(self)
        # ContactPair.order of each disk pair met, by i·n_disks + j (plain numbers: a
        # dict the garbage collector does not walk)
        self.orders: dict[int, float] = {}
        # the disk pairs last searched: the centres and the pairs per margin
        self._searched: tuple[np.ndarray | None, dict[float, np.ndarray]] = (None, {})

    @cached_property
    def rail_y(self) -> np.ndarray:
        """A bead's rail height (m), NaN for a wheel, made on first use.

        Two beads on rails closer than their radii keep their order along x.
        """
        return np.where(self.system._is_wheel, np.nan, self.system._rail_y)

    @property
    def index(self) -> StaticIndex | None:
        """The System's index of the boundary features (read-only, built once per System)."""
        return self.system._static_index if self.feature_list else None

    @cached_property
    def feature_kind(self) -> np.ndarray:
        """Per feature its kind: ``SEGMENT``, ``VERTEX`` or ``ARC``."""
        kinds = [
            SEGMENT if isinstance(f, Segment) else VERTEX if isinstance(f, Vertex) else ARC
            for f in self._shapes
        ]
        return np.array(kinds, dtype=np.intp).reshape(-1)

    @cached_property
    def gap_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The features as :func:`solver.gap_kernel.gap_values` reads them.

        ``(kinds, numbers, covers, cover numbers)``: per feature its kind and
        six numbers (a segment's ``(ax, ay, ex, ey, |e|², |e|)``, a vertex's
        ``(px, py)`` then zeros, an arc's zeros), ``e = b − a``, ``|e|² = e_x
        e_x + e_y e_y`` and a correctly rounded square root (the operations of
        the array route the loops replaced); the segments ending at vertex
        ``f`` are rows ``covers[f]`` to ``covers[f + 1]`` of the cover numbers
        (a segment's six numbers).
        """

        def segment(f: Segment) -> tuple[float, ...]:
            (ax, ay), (bx, by) = f.a, f.b  # tuples of floats (geometry._point)
            ex, ey = bx - ax, by - ay
            length2 = ex * ex + ey * ey
            return (ax, ay, ex, ey, length2, math.sqrt(length2))

        # rows as lists, one array each at the end (cheaper than writing rows into arrays)
        numbers: list[tuple[float, ...]] = []
        cover_numbers: list[tuple[float, ...]] = []
        covers = [0]
        for shape, near in zip(self._shapes, self.neighbours, strict=True):
            if isinstance(shape, Segment):
                numbers.append(segment(shape))
            elif isinstance(shape, Vertex):
                numbers.append((*shape.p, 0.0, 0.0, 0.0, 0.0))
                cover_numbers += [segment(g) for g in near if isinstance(g, Segment)]
            else:
                numbers.append((0.0,) * 6)
            covers.append(len(cover_numbers))
        return (
            self.feature_kind,
            np.array(numbers, dtype=float).reshape(-1, 6),
            np.array(covers, dtype=np.intp),
            np.array(cover_numbers, dtype=float).reshape(-1, 6),
        )

    @cached_property
    def hull_table(self) -> np.ndarray:
        """Per feature ``(Ax, Ay, Bx, By, R)`` (m): :func:`solver.gap_kernel.clear_rows` reads it.

        A segment's ends, a corner's point twice, an arc's centre twice and
        its radius ``R`` (NaN for the other kinds).
        """
        rows = []
        for f in self._shapes:
            if isinstance(f, Segment):
                rows.append((*f.a, *f.b, math.nan))
            elif isinstance(f, Vertex):
                rows.append((*f.p, *f.p, math.nan))
            else:
                rows.append((*f.center, *f.center, f.radius))
        return np.array(rows, dtype=float).reshape(-1, 5)

    @cached_property
    def feature_ends(self) -> np.ndarray:
        """Per feature ``(ax, ay, bx, by)`` of a segment (m), NaN for the other kinds."""
        nowhere = (math.nan, math.nan)
        return np.array(
            [(*f.a, *f.b) if isinstance(f, Segment) else nowhere * 2 for f in self._shapes],
            dtype=float,
        ).reshape(-1, 4)

    @cached_property
    def feature_point(self) -> np.ndarray:
        """Per feature the point of a vertex (m), NaN for the other kinds."""
        nowhere = (math.nan, math.nan)
        return np.array(
            [f.p if isinstance(f, Vertex) else nowhere for f in self._shapes], dtype=float
        ).reshape(-1, 2)

    def candidates(self, q: np.ndarray, margin: float, disks: np.ndarray) -> PairRows:
        """Every pair of one of ``disks`` that may come within ``margin`` (m): broad phase only.

        A few disks are tested against all others directly (vectorised); many
        go through the uniform-grid broad phase. Feature pairs come first
        (by disk, then feature), then disk pairs ``(i, j)``, ``i < j``, sorted.
        """
        c = self.system.centres(q)
        if self.n_disks == 1:
            return self._lone_disk_candidates(c, margin, disks)
        return self._searched_candidates(c, margin, disks)

    def _searched_candidates(self, c: np.ndarray, margin: float, disks: np.ndarray) -> PairRows:
        """:meth:`candidates` on arrays, from the centres ``c`` (m): any number of disks."""
        empty = np.zeros(0, dtype=np.intp)
        first, feature = empty, empty
        if self.index is not None:
            found = self.index.query(c[disks], self.radii[disks], margin).pairs
            found = np.asarray(found, dtype=np.intp).reshape(-1, 2)
            first = np.asarray(disks, dtype=np.intp)[found[:, 0]]
            feature = found[:, 1]
        if self.n_disks < 2:  # no disk pairs: the feature pairs alone
            n = len(first)
            return PairRows(self, first, np.full(n, -1, dtype=np.intp), feature.copy(), np.zeros(n))
        rows = self._disk_pair_rows(c, margin, disks)
        i, j = rows[:, 0].astype(np.intp), rows[:, 1].astype(np.intp)
        return PairRows(
            self,
            np.concatenate((first, i)),
            np.concatenate((np.full(len(first), -1, dtype=np.intp), j)),
            np.concatenate((feature, np.full(len(i), -1, dtype=np.intp))),
            np.concatenate((np.zeros(len(first)), self._disk_orders(c, i, j))),
        )

    def _lone_disk_candidates(self, c: np.ndarray, margin: float, disks: np.ndarray) -> PairRows:
        """:meth:`candidates` of a scene of one disk, in floats: the same rows.

        Its pairs are the features the index finds (no disk pairs), listed in
        floats (:meth:`StaticIndex.query_floats`); a centre or margin that is
        not finite gets :meth:`StaticIndex.query`'s error.
        """
        features: list[int] = []
        index = self.index
        if index is not None and len(disks):
            ((x, y),) = c.tolist()
            radius = float(self.radii[0])
            m = float(margin)
            if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(m) and m >= 0.0):
                index.query(c, self.radii, margin)  # raises: what is wrong, by name
            features = [f for _, f in index.query_floats([x], [y], [radius + m])]
        n = len(features)
        return PairRows(
            self,
            np.zeros(n, dtype=np.intp),
            np.full(n, -1, dtype=np.intp),
            np.array(features, dtype=np.intp).reshape(n),
            np.zeros(n),
        )

    def count_candidates(self, q: np.ndarray, margin: float, disks: np.ndarray) -> int:
        """``len(candidates(q, margin, disks))``, without making the pairs."""
        c = self.system.centres(q)
        found = len(self._disk_pair_rows(c, margin, disks))
        if self.index is not None:
            found += len(self.index.query(c[disks], self.radii[disks], margin).pairs)
        return found

    def _disk_pair_rows(self, c: np.ndarray, margin: float, disks: np.ndarray) -> np.ndarray:
        """Disk pairs ``(i, j)``, ``i < j``, of one of ``disks`` within ``margin`` (m): sorted.

        None when the disks meet by a compliant force (``System.rigid_disk_pairs``).
        """
        if not self.system.rigid_disk_pairs:  # issue 22's hook: solver.compliance has them
            return np.zeros((0, 2), dtype=np.intp)
        if len(disks) > FEW_DISKS:
            found = self._all_disk_pairs(c, margin)
            chosen = np.zeros(len(c), dtype=bool)
            chosen[disks] = True
            return found[chosen[found[:, 0]] | chosen[found[:, 1]]]
        near = set()
        for i in disks:
            d = np.hypot(c[:, 0] - c[i, 0], c[:, 1] - c[i, 1]) - self.radii - self.radii[i]
            for j in np.nonzero(d <= margin)[0]:
                if j != i:
                    near.add((min(int(i), int(j)), max(int(i), int(j))))
        return np.array(sorted(near), dtype=np.intp).reshape(-1, 2)

    def _all_disk_pairs(self, c: np.ndarray, margin: float) -> np.ndarray:
        """:func:`solver.broadphase.disk_pairs` of the centres ``c`` (m), kept per margin.

        The candidate margin is chosen by counting the pairs of growing
        margins, and the pairs of the chosen one are searched right after,
        at the same centres: that search is the count's.
        """
        held_c, by_margin = self._searched
        if held_c is None or held_c.shape != c.shape or not np.array_equal(held_c, c):
            by_margin = {}
            self._searched = (c.copy(), by_margin)
        found = by_margin.get(margin)
        if found is None:
            found = by_margin[margin] = disk_pairs(c, self.radii, margin).pairs
        return found

    def _disk_orders(self, c: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """:attr:`ContactPair.order` of the disk pairs ``(i[k], j[k])``.

        A pair met before keeps its order; two beads whose disks overlap in
        height get, when first met, the sign of ``x_i − x_j`` from the
        centres ``c`` (m); other pairs 0.
        """
        ordered = np.abs(self.rail_y[i] - self.rail_y[j]) < self.radii[i] + self.radii[j]
        signs = np.where(ordered, np.sign(c[i, 0] - c[j, 0]), 0.0).tolist()
        known = self.orders
        codes = (i * self.n_disks + j).tolist()
        return np.array(
            [known.setdefault(code, sign) for code, sign in zip(codes, signs, strict=True)],
            dtype=float,
        )

    def pair_code(self, pair: ContactPair) -> int:
        """The integer :meth:`PairRows.codes` gives ``pair``."""
        features = len(self.feature_list)
        other = pair.feature_index if pair.j < 0 else features + pair.j
        return pair.i * (features + self.n_disks) + other

    def pair_of(self, i: int, j: int, feature: int) -> ContactPair:
        """The :class:`ContactPair` of disk ``i`` with disk ``j``, or (``j < 0``) with a feature.

        One object per key: made at the first call. A disk pair must have
        been met by :meth:`candidates` (its order is fixed there).
        """
        system = self.system
        body = system.disk_body_id(i)
        if j < 0:
            fid, shape, e, mu = self.feature_list[feature]
            return self._pair(
                (body, fid), body, fid, i, -1, shape, e, mu, self.neighbours[feature],
                feature_index=feature,
            )  # fmt: skip
        other = system.disk_body_id(j)
        return self._pair(
            (body, other),
            body,
            other,
            i,
            j,
            None,
            system.disk_restitution,
            system.disk_friction,
            order=self.orders[i * self.n_disks + j],
        )

    def _pair(
        self,
        key: Hashable,
        body: str,
        other: str,
        i: int,
        j: int,
        feature: Any,
        restitution: float,
        friction: float,
        neighbours: tuple[Any, ...] = (),
        order: float = 0.0,
        feature_index: int = -1,
    ) -> ContactPair:
        found = self.pairs.get(key)
        if found is None:
            friction = float(friction)
            found = ContactPair(
                key,
                body,
                other,
                i,
                j,
                feature,
                float(restitution),
                friction if friction >= FRICTION_FLOOR else 0.0,
                neighbours,
                order,
                feature_index,
            )
            self.pairs[key] = found
        return found

    def gap_and_speed(self, pair: ContactPair, q: np.ndarray, v: np.ndarray) -> tuple[float, float]:
        """``(g, u_n)`` of ``pair`` at ``(q, v)`` (m, m/s): :meth:`evaluate`'s numbers, no more.

        Root brackets of a gap ask for these at one time after another; the
        Jacobians and the rest of the kinematics are not made.
        """
        system = self.system
        i, j = pair.i, pair.j
        ci, cdi, _ = system.disk_motion(q, v, i)
        if j < 0:
            normal = _straight_nearest(pair.feature, ci)
            if normal is not None:
                d, n = normal
                return float(d - self.radii[i]), float(n.dot(np.asarray(cdi, dtype=float)))
            near = pair.feature.nearest(ci)
            if near is None:
                near = continued_nearest(pair.feature, ci)
            return float(near.d - self.radii[i]), float(near.n.dot(np.asarray(cdi, dtype=float)))
        e = self.evaluate(pair, q, v)
        return e.g, e.u_n

    def evaluate_many(
        self, pairs: Sequence[ContactPair], q: np.ndarray, v: np.ndarray
    ) -> Sequence[Contact]:
        """:meth:`evaluate` of each of ``pairs`` at ``(q, v)``, in order: the same numbers.

        Two beads on one rail (a chain) are done together on arrays: their
        normal is ``(±1, 0)``, their gap ``|x_i − x_j| − r_i − r_j`` and their
        normal speed ``±(v_i − v_j)``; tangential speed and curvature terms
        are zero. Each number is the one :meth:`evaluate` computes, bit for
        bit (``tests/test_contact_pairs_many.py``). Other pairs go one by one.
        When every pair is two beads on one rail the answer is a
        :class:`RailContacts`: the contacts as arrays, a :class:`Contact`
        made only for one that is read.
        """
        if len(pairs) <= FEW_EVALUATED and not any(
            pair.j >= 0 and self.rail_y[pair.i] == self.rail_y[pair.j] for pair in pairs
        ):
            return [self.evaluate(pair, q, v) for pair in pairs]  # a wheel's few contacts
        rows = PairRows.of(self, pairs)
        rail = rows.rail_rows()
        on_rail = None
        if rail.any():
            on_rail = self.rail_contacts(rows.select(rail) if not rail.all() else rows, q, v)
        if on_rail is not None and rail.all():
            return on_rail
        out: list[Contact] = []
        made = iter(on_rail if on_rail is not None else ())
        for k, pair in enumerate(pairs):
            out.append(next(made) if on_rail is not None and rail[k] else self.evaluate(pair, q, v))
        return out

    def rail_contacts(self, pairs: PairRows, q: np.ndarray, v: np.ndarray) -> RailContacts | None:
        """The contacts of ``pairs`` (all two beads on one rail) at ``(q, v)``, as arrays.

        None when two centres coincide (:meth:`evaluate` raises there). The
        arithmetic is :func:`solver.geometry.disk_disk_contact`'s with the
        normal's second component ``±0.0``: dot products of two terms with
        one of them zero are the other term (``+0.0`` when it is zero).
        """
        system = self.system
        i, j = pairs.first, pairs.second
        ix, jx = system._ix[i], system._ix[j]
        wx = q[ix] - q[jx]
        d = np.abs(wx)  # math.hypot(w, 0.0), the distance of disk_disk_contact
        if not np.all(d > 0.0):
            return None
        ri, rj = self.radii[i], self.radii[j]
        nx = wx / d
        ny = (self.rail_y[i] - self.rail_y[j]) / d  # ±0.0: rails of 0.0 and -0.0 differ in sign
        g = d - ri - rj
        u_n = nx * (v[ix] - v[jx]) + 0.0
        passed = (pairs.order != 0.0) & (pairs.order * wx < 0.0)
        if passed.any():
            g = np.where(passed, -g - 2.0 * (ri + rj), g)
            u_n = np.where(passed, -u_n, u_n)
        return RailContacts(self, pairs, g, u_n, nx, ny, np.column_stack((ix, jx)), q[jx] + rj * nx)

    def evaluate(self, pair: ContactPair, q: np.ndarray, v: np.ndarray) -> Contact:
        """Full kinematics of ``pair`` at ``(q, v)``, continued beyond its feature if needed.

        ``inside`` is False more than ``REGION_TOL`` beyond the feature's ends
        and for a vertex hidden by a feature that ends at it. Two beads that
        have passed each other (against :attr:`ContactPair.order`) get the gap
        ``−|d| − r_i − r_j`` and the matching normal speed.
        """
        system = self.system
        i, j = pair.i, pair.j
        ci, cdi, omi = system.disk_motion(q, v, i)
        inside = True
        if j < 0:
            near = pair.feature.nearest(ci)
            if near is None:
                inside = in_region(pair.feature, ci, REGION_TOL)
                near = continued_nearest(pair.feature, ci)
            elif pair.neighbours and vertex_hidden(pair, ci):
                inside = False
            dc = disk_contact_from_nearest(near, cdi, self.radii[i], omi)
        else:
            cj, cdj, omj = system.disk_motion(q, v, j)
            found = disk_disk_contact(ci, cdi, self.radii[i], omi, cj, cdj, self.radii[j], omj)
            if found is None:
                raise SolverError(f"the centres of {pair.body!r} and {pair.other!r} coincide")
            dc = found
            if pair.order and pair.order * (ci[0] - cj[0]) < 0.0:
                dc = replace(dc, g=-dc.g - 2.0 * (self.radii[i] + self.radii[j]), u_n=-dc.u_n)
        return system.generalize(
            pair.key,
            pair.body,
            pair.other,
            dc,
            i,
            None if j < 0 else j,
            pair.restitution,
            pair.friction,
            inside,
        )
