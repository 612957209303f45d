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
from collections.abc import Hashable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from solver.broadphase import StaticIndex, disk_pairs
from solver.errors import SolverError
from solver.event_tolerances import FEW_DISKS, FRICTION_FLOOR, JUNCTION_TOL, REGION_TOL
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
    # scalar arithmetic: it runs at every evaluation of an active contact's event functions
    cx, cy = float(c[0]), float(c[1])
    if isinstance(feature, Segment):
        (ax, ay), (bx, by) = feature.a, feature.b
        ex, ey = bx - ax, by - ay
        length = math.hypot(ex, ey)
        along = ((cx - ax) * ex + (cy - ay) * ey) / length
        return -band < along < length + band
    if isinstance(feature, Arc):
        if feature.is_full_circle:
            return True
        wx, wy = cx - feature.center[0], cy - feature.center[1]
        if wx == 0.0 and wy == 0.0:
            return False
        tol = band / feature.radius
        angle = (math.atan2(wy, wx) - feature.start + tol) % (2.0 * math.pi)
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
        self.rail_y = np.where(system._is_wheel, np.nan, system._rail_y)
        self.pairs: dict[Hashable, ContactPair] = {}
        self._disk_pairs: dict[tuple[int, int], ContactPair] = {}  # the same, by disk indices

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
        return pairs + self._disk_disk_pairs(c, self._disk_pair_rows(c, margin, disks))

    def count_candidates(self, q: np.ndarray, margin: float, disks: np.ndarray) -> int:
        """``len(candidates(q, margin, disks))``, without making the pairs."""
        c = self.system.centres(q)
        found = len(self._disk_pair_rows(c, margin, disks))
        if self.index is not None:
            found += len(self.index.query(c[disks], self.radii[disks], margin).pairs)
        return found

    def _disk_pair_rows(self, c: np.ndarray, margin: float, disks: np.ndarray) -> np.ndarray:
        """Disk pairs ``(i, j)``, ``i < j``, of one of ``disks`` within ``margin`` (m): sorted."""
        if len(disks) > FEW_DISKS:
            found = disk_pairs(c, self.radii, margin).pairs
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

    def _disk_disk_pairs(self, c: np.ndarray, found: np.ndarray) -> list[ContactPair]:
        """The :class:`ContactPair` of each disk pair ``(i, j)`` of ``found`` (rows), in order.

        Pairs met before are looked up by their indices; two beads whose disks
        overlap in height get, when first met, the sign of ``x_i − x_j``
        (:attr:`ContactPair.order`) from the centres ``c`` (m).
        """
        i, j = found[:, 0], found[:, 1]
        ordered = np.abs(self.rail_y[i] - self.rail_y[j]) < self.radii[i] + self.radii[j]
        orders = np.where(ordered, np.sign(c[i, 0] - c[j, 0]), 0.0).tolist()
        known = self._disk_pairs
        out = []
        for ij, order in zip(zip(i.tolist(), j.tolist(), strict=True), orders, strict=True):
            pair = known.get(ij)
            if pair is None:
                pair = known[ij] = self._new_disk_pair(*ij, order)
            out.append(pair)
        return out

    def _new_disk_pair(self, i: int, j: int, order: float) -> ContactPair:
        system = self.system
        bi, bj = system.disk_body_id(i), system.disk_body_id(j)
        return self._pair(
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

    def evaluate_many(
        self, pairs: list[ContactPair], q: np.ndarray, v: np.ndarray
    ) -> list[Contact]:
        """:meth:`evaluate` of each of ``pairs`` at ``(q, v)``, in order: the same numbers.

        Two beads on one rail (a chain) are done together on arrays: their
        normal is ``(±1, 0)``, their gap ``|x_i − x_j| − r_i − r_j`` and their
        normal speed ``±(v_i − v_j)``; tangential speed and curvature terms
        are zero. Each number is the one :meth:`evaluate` computes, bit for
        bit (``tests/test_contact_pairs_many.py``). Other pairs go one by one.
        """
        out: list[Contact | None] = [None] * len(pairs)
        system = self.system
        rail = [
            k
            for k, pair in enumerate(pairs)
            if pair.j >= 0 and self.rail_y[pair.i] == self.rail_y[pair.j]
        ]
        if rail:
            i = np.array([pairs[k].i for k in rail])
            j = np.array([pairs[k].j for k in rail])
            ix, jx = system._ix[i], system._ix[j]
            wx = q[ix] - q[jx]
            d = np.array([math.hypot(w, 0.0) for w in wx.tolist()])
            if np.all(d > 0.0):
                self._rail_pairs(out, [pairs[k] for k in rail], rail, q, v, i, j, wx, d)
        for k, pair in enumerate(pairs):
            if out[k] is None:
                out[k] = self.evaluate(pair, q, v)
        return out  # type: ignore[return-value]

    def _rail_pairs(
        self,
        out: list[Contact | None],
        pairs: list[ContactPair],
        slots: list[int],
        q: np.ndarray,
        v: np.ndarray,
        i: np.ndarray,
        j: np.ndarray,
        wx: np.ndarray,
        d: np.ndarray,
    ) -> None:
        """:meth:`evaluate_many`'s pairs of beads on one rail, written to ``out[slots]``.

        ``wx`` is ``x_i − x_j`` and ``d`` its ``math.hypot`` (m), positive.
        The arithmetic is :func:`solver.geometry.disk_disk_contact`'s with
        the normal's second component ``±0.0``: dot products of two terms
        with one of them zero are the other term (``+0.0`` when it is zero).
        """
        system = self.system
        ri, rj = self.radii[i], self.radii[j]
        nx = wx / d
        ny = (self.rail_y[i] - self.rail_y[j]) / d  # ±0.0: rails of 0.0 and -0.0 differ in sign
        normals = np.column_stack((nx, ny))
        tangents = np.column_stack((ny, -nx))
        points = np.column_stack((q[system._ix[j]] + rj * nx, self.rail_y[j] + rj * ny))
        G_local = np.column_stack((nx, -nx))
        H_local = np.column_stack((ny, -ny))
        for rows in (normals, tangents, points, G_local, H_local):
            rows.setflags(write=False)
        g = d - ri - rj
        u_n = nx * (v[system._ix[i]] - v[system._ix[j]]) + 0.0
        orders = np.array([pair.order for pair in pairs])
        passed = (orders != 0.0) & (orders * wx < 0.0)
        g = np.where(passed, -g - 2.0 * (ri + rj), g)
        u_n = np.where(passed, -u_n, u_n)
        N = system.N
        dofs = system.bead_pair_dofs(i, j)
        for k, (pair, slot, g_k, u_k) in enumerate(
            zip(pairs, slots, g.tolist(), u_n.tolist(), strict=True)
        ):
            out[slot] = Contact(
                key=pair.key,
                body=pair.body,
                other=pair.other,
                g=g_k,
                n=normals[k],
                t=tangents[k],
                point=points[k],
                dofs=dofs[k],
                G_local=G_local[k],
                H_local=H_local[k],
                u_n=u_k,
                u_t=0.0,
                gamma_n=0.0,
                gamma_t=0.0,
                restitution=pair.restitution,
                friction=pair.friction,
                N=N,
                inside=True,
            )

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
