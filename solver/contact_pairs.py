"""Contact pairs and their gaps: what the event-driven stepper watches (MECHANICS §1, §4).

A :class:`ContactPair` is a disk against a boundary feature (segment, vertex,
arc) or against another disk. :class:`DiskKinematics` finds the pairs near
the disks (broad phase) and evaluates one pair fully; :class:`GapSet` gives
the gaps and normal speeds of many pairs at once and their exact closing
times along a parabolic flight. Junctions: a segment or arc counts
``REGION_TOL`` beyond its ends, and a vertex where segments or arcs end is
hidden wherever one of them reaches (that feature holds the contact); two
beads on one rail keep their order (a signed gap).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from solver.broadphase import StaticIndex, disk_pairs
from solver.errors import SolverError
from solver.event_tolerances import (
    FEW_DISKS,
    GAP_EVENT_TOL,
    GAP_TOL,
    JUNCTION_TOL,
    PENETRATION_TOL,
    REGION_TOL,
)
from solver.geometry import (
    Arc,
    Nearest,
    Segment,
    Vertex,
    disk_contact_from_nearest,
    disk_disk_contact,
)
from solver.system import Contact


def continued_nearest(feature: Any, c: np.ndarray) -> Nearest:
    """Closest-point data of the feature's smooth continuation (line or full circle).

    Used only to keep the right-hand side of an active contact defined for
    stage points a hair beyond the feature's end, where the ``region`` event
    stops the phase.
    """
    if isinstance(feature, Segment):
        a, b = np.asarray(feature.a), np.asarray(feature.b)
        e = b - a
        p = a + e * float((c - a) @ e / (e @ e))
        w = c - p
        d = float(np.hypot(*w))
        n = w / d if d > 0 else np.array([-e[1], e[0]]) / float(np.hypot(*e))
        return Nearest(d, n, p, np.zeros((2, 2)))
    if isinstance(feature, Arc):
        full = Arc(feature.center, feature.radius, 0.0, 2.0 * math.pi)
        near = full.nearest(c)
        if near is not None:
            return near
    raise SolverError(f"no contact normal for a disk centred at {tuple(c)} on {feature!r}")


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


def in_region(feature: Any, c: np.ndarray, band: float) -> bool:
    """True when ``c`` (m) projects onto ``feature`` (segment or arc) or ``band`` (m) beyond it."""
    if isinstance(feature, Segment):
        a, b = np.asarray(feature.a), np.asarray(feature.b)
        e = b - a
        length = float(np.hypot(*e))
        along = float((c - a) @ e) / length
        return -band < along < length + band
    if isinstance(feature, Arc):
        if feature.is_full_circle:
            return True
        w = c - np.asarray(feature.center)
        rho = float(np.hypot(*w))
        if rho == 0.0:
            return False
        tol = band / feature.radius
        angle = (math.atan2(w[1], w[0]) - feature.start + tol) % (2.0 * math.pi)
        return 0.0 < angle < feature.span + 2.0 * tol
    return False


def vertex_hidden(pair: ContactPair, c: np.ndarray) -> bool:
    """True when a vertex is covered by a feature ending at it: that feature holds the contact."""
    return any(in_region(f, c, REGION_TOL) for f in pair.neighbours)


def junction_neighbours(features: list[Any]) -> list[tuple[Any, ...]]:
    """Per feature: for a vertex, the segments and arcs with an end point on it; else ``()``."""
    ends = []
    for feature in features:
        if isinstance(feature, Segment):
            ends.append((feature, np.asarray(feature.a)))
            ends.append((feature, np.asarray(feature.b)))
        elif isinstance(feature, Arc) and not feature.is_full_circle:
            ends.append((feature, feature.point_at(feature.start)))
            ends.append((feature, feature.point_at(feature.end)))
    found = []
    for feature in features:
        if not isinstance(feature, Vertex):
            found.append(())
            continue
        p = np.asarray(feature.p)
        near = [f for f, end in ends if float(np.hypot(*(end - p))) <= JUNCTION_TOL]
        found.append(tuple(dict.fromkeys(near)))
    return found


class DiskKinematics:
    """Disk layout of a System, for evaluating chosen contact pairs quickly."""

    def __init__(self, system: Any) -> None:
        self.system = system
        self.N = system.N
        k = system.n_disks
        self.radii = np.asarray(system.radii, dtype=float) if k else np.zeros(0)
        self.feature_list = system.features
        self.index = (
            StaticIndex([f for _, f, _, _ in self.feature_list]) if self.feature_list else None
        )
        self.neighbours = junction_neighbours([f for _, f, _, _ in self.feature_list])
        # a bead's rail height, NaN for a wheel (two beads on rails closer than their
        # radii keep their order along x)
        self.rail_y = np.array(
            [d.rail_y if d.iy is None else np.nan for d in system._disks], dtype=float
        )
        self.pairs: dict[Hashable, ContactPair] = {}

    def candidates(self, q: np.ndarray, margin: float, disks: np.ndarray) -> list[ContactPair]:
        """Every pair of one of ``disks`` that may come within ``margin`` (m): broad phase only.

        A few disks are tested against all others directly (vectorised); many
        go through the uniform-grid broad phase.
        """
        system = self.system
        c = system.centres(q)
        pairs = []
        if self.index is not None:
            for k, index in self.index.query(c[disks], self.radii[disks], margin).pairs:
                fid, feature, e, mu = self.feature_list[index]
                disk = int(disks[k])
                body = system.disk_body_id(disk)
                pairs.append(
                    self._pair(
                        (body, fid), body, fid, disk, -1, feature, e, mu, self.neighbours[index]
                    )
                )
        if len(disks) > FEW_DISKS:
            found = [(int(i), int(j)) for i, j in disk_pairs(c, self.radii, margin).pairs]
            chosen = np.zeros(len(c), dtype=bool)
            chosen[disks] = True
            found = [(i, j) for i, j in found if chosen[i] or chosen[j]]
        else:
            found = set()
            for i in disks:
                d = np.hypot(c[:, 0] - c[i, 0], c[:, 1] - c[i, 1]) - self.radii - self.radii[i]
                for j in np.nonzero(d <= margin)[0]:
                    if j != i:
                        found.add((min(int(i), int(j)), max(int(i), int(j))))
            found = sorted(found)
        for i, j in found:
            bi, bj = system.disk_body_id(i), system.disk_body_id(j)
            order = 0.0
            if abs(self.rail_y[i] - self.rail_y[j]) < self.radii[i] + self.radii[j]:
                order = float(np.sign(c[i, 0] - c[j, 0]))  # used only when first met
            pairs.append(
                self._pair(
                    (bi, bj),
                    bi,
                    bj,
                    i,
                    j,
                    None,
                    system.disk_restitution,
                    system.disk_friction,
                    order=order,
                )
            )
        return pairs

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
    ) -> ContactPair:
        found = self.pairs.get(key)
        if found is None:
            found = ContactPair(
                key,
                body,
                other,
                i,
                j,
                feature,
                float(restitution),
                float(friction),
                neighbours,
                order,
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
            near = pair.feature.nearest(ci)
            if near is None:
                near = continued_nearest(pair.feature, ci)
            return float(near.d - self.radii[i]), float(near.n.dot(np.asarray(cdi, dtype=float)))
        e = self.evaluate(pair, q, v)
        return e.g, e.u_n

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


class GapSet:
    """Gaps and normal speeds of many candidate pairs, vectorised for disk pairs."""

    def __init__(self, kin: DiskKinematics, pairs: list[ContactPair]) -> None:
        self.kin = kin
        self.pairs = pairs
        ij = np.array([(p.i, p.j) for p in pairs], dtype=int).reshape(-1, 2)
        self.first, self.second = ij[:, 0], ij[:, 1]
        self.disk_rows = np.nonzero(self.second >= 0)[0]
        self.I = self.first[self.disk_rows]
        self.J = self.second[self.disk_rows]
        self.rsum = kin.radii[self.I] + kin.radii[self.J]
        # segments and vertices vectorised, arcs one by one
        self.segment_rows = np.array(
            [n for n, p in enumerate(pairs) if isinstance(p.feature, Segment)], dtype=int
        )
        self.vertex_rows = np.array(
            [n for n, p in enumerate(pairs) if isinstance(p.feature, Vertex)], dtype=int
        )
        self.arc_rows = [n for n, p in enumerate(pairs) if isinstance(p.feature, Arc)]
        self._never = np.full(len(pairs), np.inf)
        self.seg_disks = self.first[self.segment_rows]
        self.seg_radii = kin.radii[self.seg_disks]
        self.vertex_disks = self.first[self.vertex_rows]
        self.vertex_radii = kin.radii[self.vertex_disks]
        ends = np.array(
            [(*pairs[n].feature.a, *pairs[n].feature.b) for n in self.segment_rows], dtype=float
        ).reshape(-1, 4)
        self.seg_a = ends[:, :2]
        self.seg_e = ends[:, 2:] - ends[:, :2]
        self.seg_len2 = row_dots(self.seg_e, self.seg_e)
        self.vertex_p = np.array(
            [pairs[n].feature.p for n in self.vertex_rows], dtype=float
        ).reshape(-1, 2)
        self.order = np.array([pairs[n].order for n in self.disk_rows], dtype=float)
        self.ordered = bool(np.any(self.order))
        # vertices hidden by the segments and arcs that end at them
        covering = [(r, f) for r, n in enumerate(self.vertex_rows) for f in pairs[n].neighbours]
        self.cover_rows = np.array([r for r, f in covering if isinstance(f, Segment)], dtype=int)
        cover_ends = np.array(
            [(*f.a, *f.b) for _, f in covering if isinstance(f, Segment)], dtype=float
        ).reshape(-1, 4)
        self.cover_a = cover_ends[:, :2]
        self.cover_e = cover_ends[:, 2:] - cover_ends[:, :2]
        self.cover_len2 = row_dots(self.cover_e, self.cover_e)
        self.cover_arcs = [(r, f) for r, f in covering if isinstance(f, Arc)]
        length = np.sqrt(self.seg_len2)
        self.seg_normal = (
            np.column_stack((-self.seg_e[:, 1], self.seg_e[:, 0]))
            / np.where(length > 0.0, length, 1.0)[:, None]
        )

    def __len__(self) -> int:
        return len(self.pairs)

    def closing_times(
        self, q: np.ndarray, v: np.ndarray, a: np.ndarray, duration: float
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
        """
        system = self.kin.system
        c = system.centres(q)
        cd = system.centre_velocities(v)
        ca = system.centre_velocities(a)
        T = duration
        tau = self._never.copy()
        unresolved = np.zeros(len(self.pairs), dtype=bool)
        doubtful = []  # the kinds of pair with unresolved rows, by their gap functions
        if len(self.disk_rows):
            d, dv = c[self.I] - c[self.J], cd[self.I] - cd[self.J]
            uniform = (ca[self.I] == ca[self.J]).all(axis=1)
            rows = self.disk_rows[uniform]
            d, dv, rsum = d[uniform], dv[uniform], self.rsum[uniform]
            tol = (rsum - GAP_EVENT_TOL) ** 2 - rsum * rsum
            tau[rows] = first_closing(
                row_dots(d, d) - rsum * rsum,
                2.0 * row_dots(d, dv),
                row_dots(dv, dv),
                T,
                tol,
            )
            if not uniform.all():
                unresolved[self.disk_rows[~uniform]] = True
                doubtful.append(self._disk_values)
        if len(self.segment_rows):
            k = self.seg_disks
            nrm = self.seg_normal
            w, wd, wa = c[k] - self.seg_a, cd[k], ca[k]
            height = row_dots(w, nrm)
            side = np.sign(height)
            h = first_closing(
                side * height - self.seg_radii,
                side * row_dots(wd, nrm),
                0.5 * side * row_dots(wa, nrm),
                T,
                -GAP_EVENT_TOL,
            )
            hit = np.isfinite(h)
            if hit.any():
                th = np.where(hit, h, 0.0)[:, None]
                at = w + th * (wd + 0.5 * th * wa)
                s = row_dots(at, self.seg_e) / self.seg_len2
                h = np.where((s > 0.0) & (s < 1.0), h, np.inf)
            tau[self.segment_rows] = h
            on_line = side == 0.0
            if on_line.any():
                unresolved[self.segment_rows[on_line]] = True
                doubtful.append(self._segment_values)
        if len(self.vertex_rows):
            k = self.vertex_disks
            still = (ca[k] == 0.0).all(axis=1)
            if still.any():
                w = c[k] - self.vertex_p
                r = self.vertex_radii
                tau[self.vertex_rows] = np.where(
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
                unresolved[self.vertex_rows[~still]] = True
                doubtful.append(self._vertex_values)
        if self.arc_rows:
            unresolved[self.arc_rows] = True
            doubtful.append(self._arc_values)
        if doubtful:
            # within reach: the gap can shrink at most by both disks' travel
            speed = np.hypot(cd[:, 0], cd[:, 1])
            accel = np.hypot(ca[:, 0], ca[:, 1])
            travel = np.append(speed * T + 0.5 * accel * T * T, 0.0)
            g = self._never.copy()  # the other kinds are resolved
            for fill in doubtful:
                fill(c, None, g, None)
            self._nearest_possible(c, g)
            reach = travel[self.first] + travel[self.second]
            unresolved &= ~(g - reach > GAP_TOL)
        return tau, unresolved

    def values(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(g, u_n)`` per pair (m, m/s); ``g = inf`` outside a feature's region."""
        system = self.kin.system
        g, u_n = np.empty(len(self.pairs)), np.empty(len(self.pairs))
        c, cd = system.centres(q), system.centre_velocities(v)
        for fill in (self._disk_values, self._segment_values, self._vertex_values):
            fill(c, cd, g, u_n)
        self._arc_values(c, cd, g, u_n)
        return g, u_n

    def gaps(self, q: np.ndarray, band: bool = False, bare: bool = False) -> np.ndarray:
        """``g`` per pair (m), as :meth:`values` without the speeds.

        With ``band`` a segment or arc counts ``REGION_TOL`` beyond its ends;
        with ``bare`` a vertex's gap is its distance also where a feature
        ending at it hides it.
        """
        g = np.empty(len(self.pairs))
        c = self.kin.system.centres(q)
        self._disk_values(c, None, g, None)
        self._segment_values(c, None, g, None, REGION_TOL if band else 0.0)
        self._vertex_values(c, None, g, None, REGION_TOL if band else 0.0, bare)
        self._arc_values(c, None, g, None, REGION_TOL if band else 0.0)
        return g

    def passed_through(
        self, qa: np.ndarray, va: np.ndarray, qb: np.ndarray, vb: np.ndarray, duration: float
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
        segments and arcs are False (:meth:`crossed` sees those).
        """
        system = self.kin.system
        ca, cb = system.centres(qa), system.centres(qb)
        dv = system.centre_velocities(vb) - system.centre_velocities(va)
        passed = np.zeros(len(self.pairs), dtype=bool)
        if len(self.vertex_rows):
            k = self.vertex_disks
            near = chord_distance(ca[k] - self.vertex_p, cb[k] - self.vertex_p)
            margin = 0.25 * duration * np.hypot(dv[k, 0], dv[k, 1])
            passed[self.vertex_rows] = near < self.vertex_radii - margin - PENETRATION_TOL
        if len(self.disk_rows):
            I, J = self.I, self.J
            near = chord_distance(ca[I] - ca[J], cb[I] - cb[J])
            rel = dv[I] - dv[J]
            margin = 0.25 * duration * np.hypot(rel[:, 0], rel[:, 1])
            passed[self.disk_rows] = near < self.rsum - margin - PENETRATION_TOL
        return passed

    def crossed(
        self, qa: np.ndarray, qb: np.ndarray, g_a: np.ndarray, g_b: np.ndarray
    ) -> np.ndarray:
        """Per pair: whether its disk crossed a segment's line or an arc's circle, ``qa`` to ``qb``.

        The gap to a segment or an arc is a distance, positive on both sides:
        a disk that went through the feature between two times has a positive
        gap at both. Its centre is then on the other side (both times inside
        the feature's region: ``g_a``, ``g_b`` finite, m).
        """
        system = self.kin.system
        crossed = np.zeros(len(self.pairs), dtype=bool)
        ca, cb = system.centres(qa), system.centres(qb)
        rows = self.segment_rows
        if len(rows):
            disks = self.seg_disks
            side_a = row_dots(ca[disks] - self.seg_a, self.seg_normal)
            side_b = row_dots(cb[disks] - self.seg_a, self.seg_normal)
            crossed[rows] = (side_a * side_b < 0.0) & np.isfinite(g_a[rows] + g_b[rows])
        for n in self.arc_rows:
            pair = self.pairs[n]
            if math.isfinite(g_a[n] + g_b[n]):
                centre, radius = np.asarray(pair.feature.center), pair.feature.radius
                rho_a = float(np.hypot(*(ca[pair.i] - centre))) - radius
                rho_b = float(np.hypot(*(cb[pair.i] - centre))) - radius
                crossed[n] = rho_a * rho_b < 0.0
        return crossed

    def of_disks(self, rows: np.ndarray) -> GapSet:
        """The pairs of ``rows`` and every other pair of their disks (both disks of a disk pair)."""
        disks = np.concatenate((self.first[rows], self.second[rows]))
        disks = disks[disks >= 0]
        mine = np.isin(self.first, disks) | np.isin(self.second, disks)
        mine[rows] = True
        return GapSet(self.kin, [self.pairs[n] for n in np.nonzero(mine)[0]])

    # Each of the following fills the rows of one kind of pair: the gaps ``g``
    # (m) from the disk centres ``c`` (K, 2) and, given their velocities
    # ``cd``, the normal speeds ``u_n`` (m/s).

    def _disk_values(
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

    def _segment_values(
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

    def _vertex_values(
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

    def _nearest_possible(self, c: np.ndarray, g: np.ndarray) -> None:
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
            w = c[self.vertex_disks[self.cover_rows]] - self.cover_a
            s = row_dots(w, self.cover_e) / self.cover_len2
            reach = band / np.sqrt(self.cover_len2)
            hidden[self.cover_rows[(s > -reach) & (s < 1.0 + reach)]] = True
        for r, arc in self.cover_arcs:
            if not hidden[r] and in_region(arc, c[self.vertex_disks[r]], band):
                hidden[r] = True
        return hidden

    def _arc_values(
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


def chord_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row: distance (m) from the origin to the straight segment from ``a`` to ``b`` (K, 2)."""
    e = b - a
    length2 = row_dots(e, e)
    s = np.clip(-row_dots(a, e) / np.where(length2 > 0.0, length2, 1.0), 0.0, 1.0)
    p = a + s[:, None] * e
    return np.hypot(p[:, 0], p[:, 1])


def row_dots(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Dot products of the rows of two (K, 2) arrays: ``x₀y₀ + x₁y₁``, one per row."""
    return np.add.reduce(x * y, axis=1)


def first_closing(
    c0: np.ndarray, c1: np.ndarray, c2: np.ndarray, duration: float, floor: np.ndarray | float
) -> np.ndarray:
    """When the quadratics ``p(τ) = c0 + c1 τ + c2 τ²`` close, for ``τ ∈ [0, duration]`` (s).

    ``p`` stands for a gap (or a function with the gap's sign) along a
    parabolic flight. A row closes when ``p`` falls below ``floor`` (one
    value or one per row) somewhere in the interval; its closing time is
    then the root of ``p`` where ``p`` decreases (0 if ``p`` is already
    negative and not rising back above 0 first). Rows that do not close get
    ``inf``.
    """
    T = duration
    lowest = np.minimum(c0, c0 + T * (c1 + T * c2))
    rising = c2 > 0.0
    if rising.any():  # the minimum inside the interval, where p' = 0
        t_min = np.where(rising, (-c1 / np.where(rising, 2.0 * c2, 1.0)).clip(0.0, T), 0.0)
        lowest = np.minimum(lowest, c0 + t_min * (c1 + t_min * c2))
    closes = lowest < floor
    tau = np.full(c0.shape, np.inf)
    if not closes.any():
        return tau
    a, b, c = c2[closes], c1[closes], c0[closes]
    with np.errstate(invalid="ignore", divide="ignore"):
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
