"""The event-driven stepper (SPEC §4; paper 004 §6, paper 002).

Motion is split into smooth phases with a fixed set of active contacts and
fixed friction modes. A phase is integrated with DOP853 (dense output) using
the accelerations of :func:`solver.contact.solve_with_modes`; where the
applied force is constant (gravity only) and every active contact is a disk
on a straight segment (constant ``G``, ``H``, no curvature terms), the contact
forces are constant and the phase is an exact parabola instead, its gaps to
segments and to disks with the same acceleration closing at the roots of
quadratics computed in closed form, its output frames — the active contacts'
states included (:func:`solver.geometry.disk_segment_contacts`), one object
shared by equal rows — and its event functions built in one vectorised pass.
Bead scenes with springs or forcing are linear
(:func:`solver.linear_flow.linear_bead_model`); while every active contact
has a constant ``G`` (its normal along the rail: two beads on one rail, a
bead against a vertical wall) a phase is the exact motion of a
:class:`solver.linear_flow.LinearFlow` with ``A`` the active ``G`` rows,
compiled once per active set and spring orientation. Its damping loss
``∫ vᵀCv dt`` and input work ``∫ F(t)·v dt`` are Gauss–Legendre integrals of
the exact state (``WORK_NODES`` nodes over at most ``2 / max_rate``, exact to
rounding), its events are searched on sub-points ``1 / max_rate`` apart and
its frames are built in one vectorised pass. Friction does nothing there: a
bead's ``H`` is ``t_x``, which is 0 for a normal along the rail. A phase
ends at the first event, found by a root search on the dense output (or
those closed forms):

* ``gap`` — an inactive contact's gap reaching 0 (impact or grazing);
* ``liftoff`` — an active contact's λ reaching 0;
* ``stick`` — a sliding contact's slip speed reaching 0;
* ``slip`` — a sticking contact's friction reaching μλ;
* ``region`` — an active contact leaving its feature (a wheel rolling off a
  segment onto the corner vertex that ends it).
* ``spring`` — (closed-form phases only) a rest-length spring's ends
  meeting, which changes the sign in its linear force; the next phase is
  integrated by DOP853 across the change.

Event functions are sampled at sub-points of every step and, for gaps, the
minima between sub-points (where ``u_n`` turns from negative to positive)
are checked too, so a gap that dips below zero inside one step is not
missed. At an event all closed contacts (``|g| ≤ GAP_TOL``) that approach
take part in one impact (:func:`solver.impact.resolve_impact`), then the
contact LCP (:func:`solver.contact.solve_contact_problem`) decides which
closed contacts carry force and how they slide, and positions and
velocities are projected back onto the active constraints (M-metric
Gauss–Newton) so nothing drifts. An impact of one frictionless contact is
Newton's law in closed form (every law reduces to it), exact for an elastic
bounce. A bouncing contact whose impacts form a geometric sequence is
brought to rest at the accumulation time; bounces shared among several
contacts are captured plastically once they would rise less than
``ZENO_HEIGHT`` (:mod:`solver.zeno`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np
import scipy.sparse
from scipy.integrate import DOP853
from scipy.optimize import brentq

from solver.broadphase import StaticIndex, disk_pairs
from solver.contact import ContactForces, solve_contact_problem, solve_with_modes
from solver.errors import InputError, SolverError
from solver.frames import ContactState, EnergyBudget, Event, Frame, StepOutput
from solver.geometry import (
    Arc,
    Nearest,
    Segment,
    Vertex,
    bounding_box,
    disk_contact_from_nearest,
    disk_disk_contact,
    disk_segment_contacts,
)
from solver.impact import ImpactResult, ImpactStage, resolve_impact
from solver.linear_flow import LinearBeadModel, LinearFlow, LinearPhase, linear_bead_model
from solver.stages import ImpactStages
from solver.system import Contact
from solver.zeno import ImpactCluster, ZenoWatch, accumulation_time

GAP_TOL = 1e-10
"""Gap (m) within which a contact counts as closed."""
GAP_EVENT_TOL = 1e-12
"""Overlap (m) that a closed, non-active contact may reach before it is an event."""
IMPACT_SPEED_TOL = 1e-7
"""Approach speed (m/s) below which a closing contact is taken up without an impact."""
REST_SPEED_TOL = 1e-9
"""Normal speed (m/s) below which a closed contact may become active."""
TIME_TOL = 1e-14
"""Absolute accuracy of event times (s)."""
ZENO_HEIGHT = 1e-6
"""A geometric bounce sequence is ended once its next hop would rise less than this (m)."""
MAX_ZENO_BOUNCES = 1000
"""Bound on the bounces summed in closed form on the way to an accumulation point."""
ZENO_SPEED_FLOOR = 1e-12
"""Approach speed (m/s) at which a summed bounce series has reached its accumulation point."""
MAX_IMPACT_ROUNDS = 1000
"""Bound on impacts resolved one after another at a single instant."""
MAX_STALLED_EVENTS = 200
"""Bound on consecutive events without time advancing."""
MAX_PHASES_PER_STEP = 256
"""Smooth phases one ``step()`` integrates at most before it returns (bounded work per step)."""
PENETRATION_TOL = 1e-9
"""Overlap (m) of a watched contact at the end of a flight piece that is never accepted silently."""
REGION_TOL = 1e-12
"""Distance (m) beyond a segment's or arc's end within which a contact on it still counts.

A disk exactly at a junction (a scene drawn that way, or an event located
there) is then in the contact set of both features that meet."""
JUNCTION_TOL = 1e-12
"""Distance (m) within which the end points of two features are one junction."""
MAX_PROJECTION_ITERATIONS = 20
"""Bound on the Gauss–Newton iterations of the position projection."""
FEW_DISKS = 16
"""Up to this many disks are searched for neighbours directly, more through the grid."""
SPARSE_ABOVE = 64
"""Systems with more coordinates than this pass sparse Jacobians to the impact law."""
MISSED_SAMPLES = 64
"""Samples of a piece on which a gap closing that the search missed is looked for."""
REOPEN_SAMPLES = 16
"""Samples of a step searched for a contact that opened after an impact closing again."""
SUBPOINTS_ODE = 4
SUBPOINTS_FLIGHT = 8
SUBPOINTS_LINEAR = 2
"""Sub-points per closed-form linear piece; a piece lasts ``SUBPOINTS_LINEAR / max_rate``."""
WORK_NODES = 24
"""Gauss–Legendre nodes integrating damping and input power over a closed-form piece."""
_T = TypeVar("_T")
_GAUSS_LEGENDRE = {n: np.polynomial.legendre.leggauss(n) for n in range(6, WORK_NODES + 1)}


# ----------------------------------------------------------------- contact pairs


def _continued_nearest(feature: Any, c: np.ndarray) -> Nearest:
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
class _Pair:
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


def _in_region(feature: Any, c: np.ndarray, band: float) -> bool:
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


def _hidden(pair: _Pair, c: np.ndarray) -> bool:
    """True when a vertex is covered by a feature ending at it: that feature holds the contact."""
    return any(_in_region(f, c, REGION_TOL) for f in pair.neighbours)


def _junction_neighbours(features: list[Any]) -> list[tuple[Any, ...]]:
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


class _Kinematics:
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
        self.neighbours = _junction_neighbours([f for _, f, _, _ in self.feature_list])
        # a bead's rail height, NaN for a wheel (two beads on rails closer than their
        # radii keep their order along x)
        self.rail_y = np.array(
            [d.rail_y if d.iy is None else np.nan for d in system._disks], dtype=float
        )
        self.pairs: dict[Hashable, _Pair] = {}

    def candidates(self, q: np.ndarray, margin: float, disks: np.ndarray) -> list[_Pair]:
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
    ) -> _Pair:
        found = self.pairs.get(key)
        if found is None:
            found = _Pair(
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

    def evaluate(self, pair: _Pair, q: np.ndarray, v: np.ndarray) -> Contact:
        """Full kinematics of ``pair`` at ``(q, v)``, continued beyond its feature if needed.

        ``inside`` is False more than ``REGION_TOL`` beyond the feature's ends
        and for a vertex hidden by a feature that ends at it. Two beads that
        have passed each other (against :attr:`_Pair.order`) get the gap
        ``−|d| − r_i − r_j`` and the matching normal speed.
        """
        system = self.system
        i, j = pair.i, pair.j
        ci, cdi, omi = system.disk_motion(q, v, i)
        inside = True
        if j < 0:
            near = pair.feature.nearest(ci)
            if near is None:
                inside = _in_region(pair.feature, ci, REGION_TOL)
                near = _continued_nearest(pair.feature, ci)
            elif pair.neighbours and _hidden(pair, ci):
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


class _GapSet:
    """Gaps and normal speeds of many candidate pairs, vectorised for disk pairs."""

    def __init__(self, kin: _Kinematics, pairs: list[_Pair]) -> None:
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
        self.seg_len2 = _row_dots(self.seg_e, self.seg_e)
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
        self.cover_len2 = _row_dots(self.cover_e, self.cover_e)
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
            (see :func:`_first_closing`), ``inf`` if it does not close.
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
            tau[rows] = _first_closing(
                _row_dots(d, d) - rsum * rsum,
                2.0 * _row_dots(d, dv),
                _row_dots(dv, dv),
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
            height = _row_dots(w, nrm)
            side = np.sign(height)
            h = _first_closing(
                side * height - self.seg_radii,
                side * _row_dots(wd, nrm),
                0.5 * side * _row_dots(wa, nrm),
                T,
                -GAP_EVENT_TOL,
            )
            hit = np.isfinite(h)
            if hit.any():
                th = np.where(hit, h, 0.0)[:, None]
                at = w + th * (wd + 0.5 * th * wa)
                s = _row_dots(at, self.seg_e) / self.seg_len2
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
                    _first_closing(
                        _row_dots(w, w) - r * r,
                        2.0 * _row_dots(w, cd[k]),
                        _row_dots(cd[k], cd[k]),
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

    def gaps(self, q: np.ndarray, band: bool = False) -> np.ndarray:
        """``g`` per pair (m), as :meth:`values` without the speeds.

        With ``band`` a segment or arc counts ``REGION_TOL`` beyond its ends.
        """
        g = np.empty(len(self.pairs))
        c = self.kin.system.centres(q)
        self._disk_values(c, None, g, None)
        self._segment_values(c, None, g, None, REGION_TOL if band else 0.0)
        self._vertex_values(c, None, g, None)
        self._arc_values(c, None, g, None, REGION_TOL if band else 0.0)
        return g

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
        s = _row_dots(w, self.seg_e) / self.seg_len2
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
                u_n[self.segment_rows] = np.where(inside, _row_dots(w, cd[k]) / d, np.nan)

    def _vertex_values(
        self, c: np.ndarray, cd: np.ndarray | None, g: np.ndarray, u_n: np.ndarray | None
    ) -> None:
        if not len(self.vertex_rows):
            return
        k = self.vertex_disks
        w = c[k] - self.vertex_p
        d = np.hypot(w[:, 0], w[:, 1])
        gap = d - self.vertex_radii
        hidden = self._hidden(c)
        if hidden is not None:
            gap = np.where(hidden, np.inf, gap)
        g[self.vertex_rows] = gap
        if cd is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                u_n[self.vertex_rows] = _row_dots(w, cd[k]) / d

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

    def _hidden(self, c: np.ndarray) -> np.ndarray | None:
        """Per vertex row: True where a segment or arc ending at it covers the disk centre."""
        if not len(self.cover_rows) and not self.cover_arcs:
            return None
        hidden = np.zeros(len(self.vertex_rows), dtype=bool)
        if len(self.cover_rows):
            w = c[self.vertex_disks[self.cover_rows]] - self.cover_a
            s = _row_dots(w, self.cover_e) / self.cover_len2
            reach = REGION_TOL / np.sqrt(self.cover_len2)
            hidden[self.cover_rows[(s > -reach) & (s < 1.0 + reach)]] = True
        for r, arc in self.cover_arcs:
            if not hidden[r] and _in_region(arc, c[self.vertex_disks[r]], REGION_TOL):
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
            if near is None and band and _in_region(pair.feature, c[pair.i], band):
                near = _continued_nearest(pair.feature, c[pair.i])
            if near is None:
                g[n] = np.inf
                if cd is not None:
                    u_n[n] = np.nan
            else:
                g[n] = near.d - self.kin.radii[pair.i]
                if cd is not None:
                    u_n[n] = float(near.n @ cd[pair.i])


def _grazing(contact: Contact, qdd: np.ndarray | None) -> bool:
    """True when ``contact`` closes so slowly and turns back so fast that it stays in ``GAP_TOL``.

    With the normal acceleration ``a_n = G·q̈ + γ_n`` (m/s²) of the motion so
    far, an approach at ``u_n < 0`` bottoms out ``u_n²/(2 a_n)`` (m) further
    on: a contact grazed within the closing tolerance, as a wheel leaving an
    arc for the floor it is tangent to, is taken up without an impact.
    """
    if qdd is None:
        return False
    a_n = float(contact.G @ qdd) + contact.gamma_n
    return a_n > 0.0 and contact.u_n * contact.u_n <= 2.0 * a_n * GAP_TOL


def _bracketed_root(f: Callable[[float], float], ta: float, tb: float) -> float:
    """Root of ``f`` in ``[ta, tb]`` (s, to ``TIME_TOL``), or the end where ``f`` is already 0.

    ``f`` should change sign in the interval; rounding may leave an end at
    the sign it should not have (a rate of 1e-17 on either side of zero),
    and then that end is taken.
    """
    fa = f(ta)
    if not fa < 0.0:
        return ta
    if not f(tb) > 0.0:
        return tb
    return brentq(f, ta, tb, xtol=TIME_TOL)


def _row_dots(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Dot products of the rows of two (K, 2) arrays: ``x₀y₀ + x₁y₁``, one per row."""
    return np.add.reduce(x * y, axis=1)


def _first_closing(
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


def _shared_rows(rows: np.ndarray, make: Callable[..., _T]) -> list[_T]:
    """``make(*row)`` for every row of ``rows`` (2-D), one object for a run of equal rows.

    Rows equal bit for bit (``-0.0`` differs from ``0.0``) share the object
    made for the first of them: a contact at rest gives the same state in
    every frame. The objects must be immutable.
    """
    values = rows.tolist()
    bits = np.ascontiguousarray(rows).view(np.int64)
    repeats = (bits[1:] == bits[:-1]).all(axis=1)
    if not repeats.any():
        return [make(*row) for row in values]
    made = [make(*values[0])]
    for row, repeat in zip(values[1:], repeats.tolist(), strict=True):
        made.append(made[-1] if repeat else make(*row))
    return made


# ----------------------------------------------------------------- the stepper


@dataclass
class _Piece:
    """A stretch ``[ta, tb]`` of smooth motion with its state function."""

    ta: float
    tb: float
    state: Callable[[float], np.ndarray]
    states: Callable[[np.ndarray], np.ndarray] | None = None
    """Vectorised ``state`` (rows for an array of times), where the motion has one."""
    motion: LinearPhase | None = None
    """The exact ``(q, v)`` of a closed-form linear piece (without the work terms)."""


@dataclass(frozen=True, eq=False)
class _Parabola:
    """Motion under constant accelerations from ``t0`` (s), as rows ``(q, v, work)``.

    ``q0``, ``v0`` and ``a`` are the positions, velocities and accelerations
    (N,) at ``t0``, ``work`` the friction, damping and input work (J) so
    far; the friction work grows with the power ``power[0] + power[1] τ``
    (W, W/s), ``τ`` the time since ``t0``.
    """

    t0: float
    q0: np.ndarray
    v0: np.ndarray
    a: np.ndarray
    work: np.ndarray
    power: np.ndarray

    def state(self, t: float) -> np.ndarray:
        """The row ``(q, v, work)`` at time ``t`` (s)."""
        dt = t - self.t0
        friction = dt * (self.power[0] + 0.5 * dt * self.power[1])
        return np.concatenate(
            (
                self.q0 + dt * (self.v0 + 0.5 * dt * self.a),
                self.v0 + dt * self.a,
                self.work + np.array((friction, 0.0, 0.0)),
            )
        )

    def states(self, ts: np.ndarray) -> np.ndarray:
        """:meth:`state` at every time of ``ts`` (s), one row each."""
        N = len(self.q0)
        dt = (ts - self.t0)[:, None]
        rows = np.empty((len(ts), 2 * N + 3))
        rows[:, :N] = self.q0 + dt * (self.v0 + 0.5 * dt * self.a)
        rows[:, N : 2 * N] = self.v0 + dt * self.a
        rows[:, 2 * N :] = self.work
        # the damping and input work stay as they are: no springs, no forcing
        rows[:, 2 * N] += dt[:, 0] * (self.power[0] + 0.5 * dt[:, 0] * self.power[1])
        return rows


@dataclass(frozen=True)
class _Found:
    t: float
    kind: str
    key: Hashable | None


def _positive(value: float, name: str) -> float:
    value = float(value)
    if not (math.isfinite(value) and value > 0.0):
        raise InputError(f"`{name}` must be a positive finite number, got {value!r}")
    return value


class EventDrivenStepper:
    """Event-driven simulation of a side-view scene (SPEC §4).

    Parameters
    ----------
    system : solver.system.System
        The compiled scene.
    t_end : float
        End of the run (s).
    dt_out : float
        Spacing of the output samples (s).
    rtol, atol : float
        DOP853 tolerances of the smooth phases (relative; absolute in SI
        units): tighter is more accurate and slower.
    closed_form : bool
        Integrate the phases of linear bead scenes in closed form (default).
        False sends them to DOP853 (for comparisons in tests and benchmarks).

    Attributes
    ----------
    status : str
        ``"running"``, ``"finished"`` or ``"failed"``.
    t : float
        Current time (s).
    message : str
        Why the run finished or failed.
    system : System
        As given.
    """

    def __init__(
        self,
        system: Any,
        t_end: float,
        dt_out: float,
        rtol: float = 1e-10,
        atol: float = 1e-12,
        closed_form: bool = True,
    ) -> None:
        self.system = system
        self.t_end = _positive(t_end, "t_end")
        self.dt_out = _positive(dt_out, "dt_out")
        self.rtol = _positive(rtol, "rtol")
        self.atol = _positive(atol, "atol")
        self.status = "running"
        self.message = ""
        self.t = 0.0
        self._N = system.N
        self._M_inv = 1.0 / np.asarray(system.M_diag, dtype=float)  # M is diagonal (SPEC §1)
        self._q = np.array(system.q0, dtype=float)
        self._v = np.array(system.v0, dtype=float)
        self._work = np.zeros(3)  # friction, damping dissipation and input work (J)
        self._impact_loss = 0.0  # J dissipated by impacts (Zeno included)
        self._kin = _Kinematics(system)
        self._active: dict[Hashable, tuple[_Pair, str]] = {}
        self._law = system.scene.contact.impact_law
        self._flight = not system.has_springs and not system.has_forcing
        # constant gravity force (N, N·m) of such scenes; their potential energy is −f·q
        self._gravity = system.applied_force(0.0, self._q, self._v) if self._flight else None
        radii = self._kin.radii
        self._margin = self._choose_margin()
        self._r_min = float(radii.min()) if len(radii) else 1.0
        self._pair_set = _GapSet(self._kin, [])
        self._pairs_found_at: np.ndarray | None = None
        self._watched: tuple[Any, ...] = (None, None, None)
        self._next_sample = 0
        self._started = False
        self._stalled = 0
        self._zeno = ZenoWatch()
        self._cluster = ImpactCluster()
        # constant for a whole phase, set only while every active contact is a disk on a segment
        self._phase_forces: ContactForces | None = None
        self._no_gaps = _GapSet(self._kin, [])
        self._closed_form = bool(closed_form) and not self._flight
        self._flows: dict[Hashable, LinearFlow] = {}  # per active set and spring orientation
        self._across_spring = False  # the next phase crosses a spring's sign change

    # ------------------------------------------------------------ public

    def step(self) -> StepOutput:
        """Advance by at least one output sample or one event, or by ``MAX_PHASES_PER_STEP`` phases.

        The work of one call is bounded: a run that needs very many short
        phases between two output samples (a bead at 1e6 m/s) returns
        between them with an empty output and a later ``t``.

        Returns
        -------
        StepOutput
            Frames and events in time order. A physics failure sets
            ``status = "failed"`` and ends with an ``error`` event; it never
            raises.
        """
        out = StepOutput()
        if self.status != "running":
            return out
        try:
            if not self._started:
                self._started = True
                self._settle(out, {})
                self._emit_samples(out, lambda _t: self._y(), self.t, inclusive=True)
            for _ in range(MAX_PHASES_PER_STEP):
                if self.status != "running" or out.frames or out.events:
                    break
                self._phase(out)
        except (SolverError, np.linalg.LinAlgError, ValueError) as exc:
            self.status = "failed"
            self.message = f"t = {self.t:.12g} s: {exc}"
            out.events.append(Event(t=self.t, type="error", message=self.message))
        return out

    # ------------------------------------------------------------ state helpers

    def _y(self) -> np.ndarray:
        return np.concatenate((self._q, self._v, self._work))

    def _set_y(self, y: np.ndarray) -> None:
        N = self._N
        self._q = np.array(y[:N])
        self._v = np.array(y[N : 2 * N])
        self._work = np.array(y[2 * N :])

    def _energy(self, q: np.ndarray, v: np.ndarray, work: np.ndarray) -> EnergyBudget:
        kinetic, potential, spring = self.system.energy(q, v)
        return EnergyBudget(
            kinetic=kinetic,
            potential=potential,
            spring=spring,
            dissipated=self._impact_loss + float(work[0] + work[1]),
            input=float(work[2]),
        )

    def _active_evals(self, q: np.ndarray, v: np.ndarray) -> list[Contact]:
        return [self._kin.evaluate(pair, q, v) for pair, _ in self._active.values()]

    def _active_forces(
        self, t: float, q: np.ndarray, v: np.ndarray
    ) -> tuple[list[Contact], ContactForces]:
        evals = self._active_evals(q, v)
        if self._phase_forces is not None:
            return evals, self._phase_forces
        modes = [mode for _, mode in self._active.values()]
        f = self.system.applied_force(t, q, v)
        return evals, solve_with_modes(evals, modes, self._M_inv, f)

    def _contact_states(self, t: float, q: np.ndarray, v: np.ndarray) -> tuple[ContactState, ...]:
        if not self._active:
            return ()
        evals, forces = self._active_forces(t, q, v)
        return tuple(
            ContactState(
                body=e.body,
                other=e.other,
                lam=float(forces.lam[k]),
                tau=float(forces.tau[k]),
                u_n=e.u_n,
                u_t=e.u_t,
                mode=forces.modes[k],
                point=(float(e.point[0]), float(e.point[1])),
                normal=(float(e.n[0]), float(e.n[1])),
                friction=e.friction,
            )
            for k, e in enumerate(evals)
        )

    def _frame(self, t: float, kind: str, y: np.ndarray) -> Frame:
        N = self._N
        q, v, work = y[:N], y[N : 2 * N], y[2 * N :]
        return Frame(
            t=t,
            kind=kind,
            q=np.array(q),
            v=np.array(v),
            contacts=self._contact_states(t, q, v),
            energy=self._energy(q, v, work),
        )

    def _bead_energies(self, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gravitational and spring energy (J) of a bead-only scene, one per row of ``Q``.

        The same terms as :meth:`solver.system.System.energy`: a bead's
        gravitational energy is ``−m g_x x`` (its rail's reaction does no
        work), a spring's ``½ k (length − rest length)²``.
        """
        system = self.system
        disks = system._disks
        potential = -(Q @ (system.M_diag * system.gravity[0]))
        spring = np.zeros(len(Q))
        for s in system._springs:
            a = disks[s.i]
            if s.j is None:
                bx, by = s.anchor
            else:
                bx, by = Q[:, disks[s.j].ix], disks[s.j].rail_y
            length = np.hypot(Q[:, a.ix] - bx, a.rail_y - by)
            spring = spring + 0.5 * s.stiffness * (length - s.rest_length) ** 2
        return potential, spring

    def _sample_frames(self, ts: np.ndarray, Y: np.ndarray) -> list[Frame]:
        """Sample frames at times ``ts`` (s) with states ``Y`` (rows), energies vectorised.

        For phases without springs or forcing (the applied force ``f`` is then
        constant gravity and the gravitational energy is ``−f·q``, J) and for
        closed-form phases of bead scenes (:meth:`_bead_energies`).
        """
        N = self._N
        # fresh copies: every frame owns its rows, no frame shares memory with the stepper
        Q, V, W = Y[:, :N].copy(), Y[:, N : 2 * N].copy(), Y[:, 2 * N :]
        kinetic = 0.5 * ((V * V) @ self.system.M_diag)
        if self._flight:
            potential, spring = -(Q @ self._gravity), np.zeros(len(ts))
        else:
            potential, spring = self._bead_energies(Q)
        dissipated = self._impact_loss + W[:, 0] + W[:, 1]
        energies = _shared_rows(
            np.column_stack((kinetic, potential, spring, dissipated, W[:, 2])), EnergyBudget
        )
        times = ts.tolist()
        contacts = self._sample_contacts(times, Q, V)
        return [
            Frame(t, "sample", q, v, c, energy)
            for t, q, v, c, energy in zip(times, Q, V, contacts, energies, strict=True)
        ]

    def _sample_contacts(
        self, ts: list[float], Q: np.ndarray, V: np.ndarray
    ) -> list[tuple[ContactState, ...]]:
        """The active contacts' states at times ``ts`` (s), positions ``Q`` and velocities ``V``.

        While the contact forces are constant (``_phase_forces``: disks on
        straight segments) the kinematics are computed for all rows at once
        (:func:`solver.geometry.disk_segment_contacts`), and a row equal to
        the one before it, bit for bit, shares its ContactState objects.
        """
        if not self._active:
            return [()] * len(ts)
        forces = self._phase_forces
        if forces is not None:
            columns = []
            for k, (pair, _) in enumerate(self._active.values()):
                column = self._segment_contact_states(pair, forces, k, Q, V)
                if column is None:  # a row beyond the segment's end: evaluated one by one
                    break
                columns.append(column)
            else:
                return list(zip(*columns, strict=True))
        return [self._contact_states(t, q, v) for t, q, v in zip(ts, Q, V, strict=True)]

    def _segment_contact_states(
        self, pair: _Pair, forces: ContactForces, k: int, Q: np.ndarray, V: np.ndarray
    ) -> list[ContactState] | None:
        """States of active contact ``k`` (a disk on a segment) per row of ``Q``, ``V``.

        ``None`` when a row lies beyond the segment's ends.
        """
        C, Cdot, omega = self.system.disk_motions(Q, V, pair.i)
        kin = disk_segment_contacts(pair.feature, C, Cdot, self._kin.radii[pair.i], omega)
        if not kin.inside.all():
            return None
        lam, tau, mode = float(forces.lam[k]), float(forces.tau[k]), forces.modes[k]

        def state(
            u_n: float, u_t: float, px: float, py: float, nx: float, ny: float
        ) -> ContactState:
            return ContactState(
                body=pair.body,
                other=pair.other,
                lam=lam,
                tau=tau,
                u_n=u_n,
                u_t=u_t,
                mode=mode,
                point=(px, py),
                normal=(nx, ny),
                friction=pair.friction,
            )

        return _shared_rows(np.column_stack((kin.u_n, kin.u_t, kin.point, kin.n)), state)

    def _emit_samples(
        self,
        out: StepOutput,
        state: Callable[[float], np.ndarray],
        limit: float,
        inclusive: bool,
        states: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> None:
        """Sample frames on the output grid up to ``limit`` (s).

        ``states`` maps an array of times to the rows of their states; given
        (a constant-force or closed-form linear phase), the frames are built
        in one vectorised pass.
        """
        last = min(limit, self.t_end * (1 + 1e-12))
        if self._next_sample * self.dt_out > last:
            return
        ks = np.arange(self._next_sample, math.floor(last / self.dt_out) + 2)
        ts = ks * self.dt_out
        keep = (ts <= self.t_end * (1 + 1e-12)) & ((ts < limit) | ((ts == limit) & inclusive))
        # the grid is increasing: the samples due are a leading run of ``keep``
        count = int(keep.argmin()) if not keep.all() else len(ks)
        if not count:
            return
        ts = ts[:count]
        if states is not None:
            out.frames += self._sample_frames(ts, states(ts))
        else:
            out.frames += [self._frame(float(t), "sample", state(float(t))) for t in ts]
        self._next_sample += count

    # ------------------------------------------------------------ phases

    def _choose_margin(self) -> float:
        """Candidate margin (m): as wide as the scene while that keeps the pair list short.

        A wider margin means fewer broad-phase searches and longer phases; a
        crowded scene (many disks close together) falls back to twice the
        largest radius.
        """
        radii = self._kin.radii
        if not len(radii):
            return 1.0
        c = self.system.centres(self._q)
        lo, hi = c.min(axis=0) - radii.max(), c.max(axis=0) + radii.max()
        for _, feature, _, _ in self._kin.feature_list:
            box = bounding_box(feature)
            lo = np.minimum(lo, box[:2])
            hi = np.maximum(hi, box[2:])
        widest = float(np.hypot(*(hi - lo)))
        margin = 2.0 * float(radii.max())
        everything = np.arange(len(radii))
        # grow from the narrowest margin: counting pairs costs as many pairs as are found
        while margin < widest:
            wider = min(2.0 * margin, widest)
            if len(self._kin.candidates(self._q, wider, everything)) > 4 * len(radii) + 16:
                break
            margin = wider
        return margin

    def _displacements(self) -> np.ndarray:
        """How far (m) each disk centre is from where its pairs were last searched."""
        d = self.system.centres(self._q) - self._pairs_found_at
        return np.hypot(d[:, 0], d[:, 1])

    def _moved(self) -> float:
        """Largest displacement (m) of a disk centre since its pairs were searched."""
        return float(self._displacements().max(initial=0.0))

    def _all_candidates(self) -> _GapSet:
        """Every pair that can touch while no disk moves ``margin/4`` (m) from its search point.

        A pair missing from the list had a gap above ``margin`` when one of
        its disks was last searched; since then that disk moved less than
        ``margin/4`` and the other less than ``margin/2``, so the gap is
        still positive. Disks that have moved ``margin/8`` are searched again
        (only those), so a phase always has at least that much room.
        """
        if self._pairs_found_at is None:
            self._pairs_found_at = self.system.centres(self._q)
            disks = np.arange(self.system.n_disks)
        else:
            disks = np.nonzero(self._displacements() > 0.125 * self._margin)[0]
        if len(disks):
            old = self._pair_set
            moved = np.zeros(self.system.n_disks + 1, dtype=bool)
            moved[disks] = True
            keep = ~(moved[old.first] | moved[old.second])
            pairs = [p for p, k in zip(old.pairs, keep, strict=True) if k]
            pairs += self._kin.candidates(self._q, self._margin, disks)
            if pairs != old.pairs:  # pairs are unique objects: compared by identity
                self._pair_set = _GapSet(self._kin, pairs)
            self._pairs_found_at[disks] = self.system.centres(self._q)[disks]
        return self._pair_set

    def _candidates(self) -> _GapSet:
        """The candidate pairs that are not active: their gaps are watched."""
        every = self._all_candidates()
        if not self._active:
            return every
        active = tuple(self._active)
        if self._watched[:2] != (every, active):
            watched = _GapSet(self._kin, [p for p in every.pairs if p.key not in self._active])
            self._watched = (every, active, watched)
        return self._watched[2]

    def _horizon(self, a: np.ndarray, half: float) -> float:
        """Time (s) in which no disk centre can move more than ``half`` (m)."""
        cd = self.system.centre_velocities(self._v)
        acc = self.system.centre_velocities(a)
        speed = float(np.hypot(cd[:, 0], cd[:, 1]).max(initial=0.0))
        accel = 2.0 * float(np.hypot(acc[:, 0], acc[:, 1]).max(initial=0.0))
        if accel > 0.0 or speed > 0.0:
            # the root of ½ accel τ² + speed τ = half, in the form without cancellation
            return 2.0 * half / (math.sqrt(speed * speed + 2.0 * accel * half) + speed)
        return math.inf

    def _constant_motion(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Constant accelerations (N,) and friction power terms (W, W/s) of this phase, if any.

        Without springs or forcing the applied force is constant; when every
        active contact is a disk on a straight segment, ``G``, ``H`` are
        constant and the curvature terms vanish, so the contact forces of the
        phase (fixed modes) are constant too and the motion is a parabola.
        The contact forces are then kept for the whole phase
        (``_phase_forces``). Returns ``None`` when the motion is not of this
        kind. The friction power is ``P0 + P1 τ`` (``τ`` from the start).
        """
        if not self._flight or not all(
            pair.j < 0 and isinstance(pair.feature, Segment) for pair, _ in self._active.values()
        ):
            return None
        if not self._active:
            return self._gravity * self._M_inv, np.zeros(2)
        evals, forces = self._active_forces(self.t, self._q, self._v)
        self._phase_forces = forces
        H = np.column_stack([e.H for e in evals])
        ff = forces.friction_force
        return forces.qdd, np.array([-(ff @ (H.T @ self._v)), -(ff @ (H.T @ forces.qdd))])

    def _linear_motion(self) -> tuple[LinearPhase, LinearBeadModel] | None:
        """The closed-form motion of this phase of a linear bead scene, if it is one.

        The scene must be linear near ``q`` (:func:`solver.linear_flow.linear_bead_model`,
        every rest-length spring's ends apart) and every active contact's
        normal must lie along the rail (``n_y = 0``: two beads on one rail, a
        bead against a vertical wall), so that its ``G`` is constant and its
        ``H = t_x = n_y`` vanishes: friction does nothing. The flow, with
        ``A`` the active contacts' ``G`` rows and ``b = A q``, is compiled once
        per active set and spring orientation. Returns ``None`` otherwise,
        and once after a ``spring`` event, so that DOP853 crosses it.
        """
        if not self._closed_form or self._across_spring:
            self._across_spring = False
            return None
        model = linear_bead_model(self.system, self._q)
        if model is None or np.any(model.separations(self._q) <= 0.0):
            return None
        evals = self._active_evals(self._q, self._v)
        if any(e.n[1] != 0.0 for e in evals):
            return None
        key = (tuple(self._active), model.separation_rows.tobytes())
        flow = self._flows.get(key)
        if flow is None:
            A = np.array([e.G for e in evals]).reshape(-1, self._N)
            flow = model.flow(A, A @ self._q)
            self._flows[key] = flow
        return flow.start(self.t, self._q, self._v), model

    def _linear_pieces(self, motion: LinearPhase, model: LinearBeadModel) -> Iterator[_Piece]:
        """Pieces of ``SUBPOINTS_LINEAR / max_rate`` (s) of a closed-form phase, up to ``t_end``.

        A piece's state holds the exact ``(q, v)`` and the work terms: the
        friction work is unchanged (beads on rails do not rub), the damping
        loss ``∫ vᵀCv dt`` and the input work ``∫ F(t)·v dt`` (J) are
        Gauss–Legendre integrals from the piece's start, summed over the
        stretches between the requested times. The integrands oscillate at
        most at ``2 max_rate``: ``WORK_NODES`` nodes over a whole piece, and
        proportionally fewer (at least 6) over shorter stretches, keep the
        quadrature exact to rounding.
        """
        rate = motion.flow.max_rate
        length = SUBPOINTS_LINEAR / rate if rate > 0.0 else math.inf
        N = self._N
        ta, work = motion.t0, self._work.copy()

        def states(ts: np.ndarray, ta: float, work: np.ndarray) -> np.ndarray:
            # the work at sorted times: a sum of integrals between consecutive times,
            # each with as many nodes as its length needs (WORK_NODES for a whole piece)
            ts = np.asarray(ts, dtype=float)
            order = np.argsort(ts)
            ends = ts[order]
            half = 0.5 * np.diff(ends, prepend=ta)
            widest = 2.0 * float(np.max(np.abs(half)))
            n = int(
                np.clip(math.ceil(WORK_NODES * widest * rate / SUBPOINTS_LINEAR), 6, WORK_NODES)
            )
            nodes, weights = _GAUSS_LEGENDRE[n]
            tn = (ends[:, None] - half[:, None] * (1.0 - nodes)).ravel()
            _, vn = motion.state(tn)
            power = np.zeros((len(tn), 3))
            power[:, 1] = np.sum((vn @ model.C) * vn, axis=1)
            for h in model.harmonics:
                power[:, 2] += np.sin(h.omega * tn + h.phase) * (vn @ h.amplitude)
            gained = np.einsum("knj,n->kj", power.reshape(len(ts), n, 3), weights)
            rows = np.empty((len(ts), 3))
            rows[order] = work + np.cumsum(half[:, None] * gained, axis=0)
            q, v = motion.state(ts)
            return np.hstack((q, v, rows))

        while True:
            tb = min(self.t_end, ta + length)

            def piece_states(ts: np.ndarray, ta: float = ta, work: np.ndarray = work) -> np.ndarray:
                return states(ts, ta, work)

            def piece_state(t: float, ta: float = ta, work: np.ndarray = work) -> np.ndarray:
                return states(np.array([t]), ta, work)[0]

            yield _Piece(ta, tb, piece_state, piece_states, motion)
            ta, work = tb, piece_state(tb)[2 * N :]

    def _linear_scan(self, piece: _Piece, gaps: _GapSet, model: LinearBeadModel) -> _Found | None:
        """Earliest event of a closed-form piece: :meth:`_scan`, then spring sign changes.

        Gaps, lift-off and the contacts' other tests are scanned on the exact
        ``(q, v)`` at ``SUBPOINTS_LINEAR`` sub-points. A rest-length spring
        whose ends meet before that event (its separation reaching 0, also
        at a minimum between sub-points) ends the piece with a ``spring``
        event.
        """
        motion = piece.motion
        found = self._scan(_Piece(piece.ta, piece.tb, motion), gaps, SUBPOINTS_LINEAR)
        if not len(model.separation_rows):
            return found
        end = found.t if found is not None else piece.tb
        ts = np.linspace(piece.ta, end, SUBPOINTS_LINEAR + 1)
        Q, V = motion.state(ts)
        sep = model.separations(Q)
        rate = V @ model.separation_rows.T

        def separation(t: float, k: int) -> float:
            return float(model.separations(motion.state(t)[0])[k])

        def closing(t: float, k: int) -> float:
            return float(model.separation_rows[k] @ motion.state(t)[1])

        for j in range(1, len(ts)):
            ta, tb = ts[j - 1], ts[j]
            best: float | None = None
            for k in range(sep.shape[1]):
                if not sep[j, k] > 0.0:
                    t_hit = brentq(separation, ta, tb, args=(k,), xtol=TIME_TOL)
                elif rate[j - 1, k] < 0.0 < rate[j, k]:
                    t_min = _bracketed_root(lambda t, k=k: closing(t, k), ta, tb)
                    if separation(t_min, k) > 0.0:
                        continue
                    t_hit = brentq(separation, ta, t_min, args=(k,), xtol=TIME_TOL)
                else:
                    continue
                best = t_hit if best is None else min(best, t_hit)
            if best is not None:
                return _Found(best, "spring", None)
        return found

    def _phase(self, out: StepOutput) -> None:
        """Integrate one smooth phase up to its first event, a horizon or ``t_end``."""
        t0 = self.t
        gaps = self._candidates()
        budget = 0.25 * self._margin - self._moved()
        constant = self._constant_motion()
        linear = None if constant is not None else self._linear_motion()
        if linear is not None:
            pieces = self._linear_pieces(*linear)
            reach = budget
        elif constant is not None:
            a, power = constant
            tb = min(self.t_end, t0 + self._horizon(a, budget))
            flight = _Parabola(t0, self._q.copy(), self._v.copy(), a, self._work.copy(), power)
            pieces = iter([_Piece(t0, tb, flight.state, flight.states)])
            reach = 0.0
        else:
            pieces = self._ode_pieces(t0, self._y(), budget)
            reach = budget
        c0 = self.system.centres(self._q)
        for piece in pieces:
            if linear is not None:
                found = self._linear_scan(piece, gaps, linear[1])
            elif constant is None:
                found = self._scan(piece, gaps, SUBPOINTS_ODE)
            else:
                found = self._flight_scan(piece, gaps, a)
                if self._active:
                    # slip → stick and leaving a segment; λ and friction are constant
                    end = found.t if found is not None else piece.tb
                    other = self._scan(
                        _Piece(t0, end, piece.state, piece.states), self._no_gaps, SUBPOINTS_FLIGHT
                    )
                    found = other or found
            found = self._missed(piece, gaps, found) or found
            limit = found.t if found else piece.tb
            self._emit_samples(
                out,
                piece.state,
                limit,
                inclusive=found is None and piece.tb >= self.t_end,
                states=piece.states,
            )
            if found is not None:
                self._set_y(piece.state(found.t))
                self._advance_clock(found.t)
                if found.kind == "spring":
                    self._across_spring = True
                    self._project()
                else:
                    self._handle(out, found)
                return
            y_end = piece.state(piece.tb)
            if piece.tb < self.t_end and reach > 0.0:
                moved = self.system.centres(y_end[: self._N]) - c0
                if np.hypot(moved[:, 0], moved[:, 1]).max(initial=0.0) < reach:
                    continue  # the next piece
            self._set_y(y_end)
            self._advance_clock(piece.tb)
            self._project()
            if piece.tb >= self.t_end:
                self._finish(out)
            return
        raise SolverError("smooth phase ended without reaching an event or the horizon")

    def _missed(self, piece: _Piece, gaps: _GapSet, found: _Found | None) -> _Found | None:
        """A gap closing that the search missed in ``piece``, located; None if there is none.

        Every watched gap is checked where the piece ends (at ``found`` or its
        end). One below ``−PENETRATION_TOL`` there was either closed already
        at the start — a ``SolverError`` naming the contact, time and depth —
        or closed in between: its first closing on ``MISSED_SAMPLES`` samples
        is bisected to ``TIME_TOL``.
        """
        if not len(gaps):
            return None
        N = self._N
        ta, tb = piece.ta, found.t if found is not None else piece.tb
        deep = np.nonzero(gaps.gaps(piece.state(tb)[:N]) < -PENETRATION_TOL)[0]
        if not len(deep):
            return None
        start = gaps.gaps(piece.state(ta)[:N])[deep]
        if np.any(start < -PENETRATION_TOL):
            k = int(deep[int(np.argmin(start))])
            pair = gaps.pairs[k]
            raise SolverError(
                f"contact {pair.body}–{pair.other} overlaps by {-float(np.min(start)):.3g} m "
                f"at t = {ta:.12g} s (more than {PENETRATION_TOL:g} m) without an event"
            )
        pairs = _GapSet(self._kin, [gaps.pairs[k] for k in deep])
        ts = np.linspace(ta, tb, MISSED_SAMPLES + 1)
        before = ta
        for t in ts[1:]:
            if np.any(pairs.gaps(piece.state(t)[:N]) < -GAP_EVENT_TOL):
                break
            before = t
        after = t
        while after - before > TIME_TOL:
            mid = 0.5 * (before + after)
            if np.any(pairs.gaps(piece.state(mid)[:N]) < -GAP_EVENT_TOL):
                after = mid
            else:
                before = mid
        k = int(np.argmin(pairs.gaps(piece.state(after)[:N])))
        return _Found(after, "gap", pairs.pairs[k].key)

    def _advance_clock(self, t: float) -> None:
        if t > self.t:
            self._stalled = 0
        else:
            self._stalled += 1
            if self._stalled > MAX_STALLED_EVENTS:
                raise SolverError(
                    f"{MAX_STALLED_EVENTS} events in a row without time advancing "
                    f"(contacts {list(k for k in self._active)})"
                )
        self.t = t

    def _finish(self, out: StepOutput) -> None:
        if not out.frames or out.frames[-1].t < self.t_end:
            out.frames.append(self._frame(self.t_end, "sample", self._y()))
        self.status = "finished"
        self.message = f"reached t_end = {self.t_end:g} s"

    def _rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        N = self._N
        q, v = y[:N], y[N : 2 * N]
        system = self.system
        power_friction = 0.0
        if self._active:
            evals, forces = self._active_forces(t, q, v)
            qdd = forces.qdd
            power_friction = -float(
                sum(ff * e.u_t for ff, e in zip(forces.friction_force, evals, strict=True))
            )
        else:
            qdd = system.applied_force(t, q, v) * self._M_inv
        return np.concatenate(
            (v, qdd, (power_friction, system.damping_power(q, v), system.input_power(t, q, v)))
        )

    def _ode_pieces(self, t0: float, y0: np.ndarray, budget: float) -> Iterator[_Piece]:
        a0 = self._rhs(t0, y0)[self._N : 2 * self._N]
        max_step = min(self._horizon(a0, budget), self.t_end - t0)
        if max_step <= 0.0:
            max_step = self.t_end - t0
        solver = DOP853(
            self._rhs, t0, y0, self.t_end, rtol=self.rtol, atol=self.atol, max_step=max_step
        )
        while solver.status == "running":
            ta = solver.t
            message = solver.step()
            if solver.status == "failed":
                raise SolverError(f"the ODE integrator failed at t = {solver.t:.12g} s: {message}")
            yield _Piece(ta, solver.t, solver.dense_output())

    # ------------------------------------------------------------ event search

    def _event_values(
        self, t: float, y: np.ndarray, gaps: _GapSet
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Gap values, their normal speeds, and the active contacts' event functions."""
        N = self._N
        q, v = y[:N], y[N : 2 * N]
        g, u_n = gaps.values(q, v) if len(gaps) else (np.zeros(0), np.zeros(0))
        return g, u_n, self._active_values(t, q, v)

    def _active_values(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Per active contact: λ, the friction test (cone or slip speed), inside its feature.

        Each is positive while the phase's assumptions hold; a sign change is an event.
        """
        if not self._active:
            return np.zeros(0)
        evals, forces = self._active_forces(t, q, v)
        scale = 1e-9 * (1.0 + float(np.max(np.abs(forces.lam))))
        values = []
        for k, (e, (_, mode)) in enumerate(zip(evals, self._active.values(), strict=True)):
            values.append(forces.lam[k] + scale)
            if e.friction > 0.0:
                if mode == "stick":
                    values.append(
                        e.friction * forces.lam[k]
                        - abs(forces.friction_force[k])
                        + e.friction * scale
                    )
                else:
                    values.append((1.0 if mode == "slip+" else -1.0) * e.u_t + 1e-12)
            else:
                values.append(1.0)
            values.append(1.0 if e.inside else -1.0)
        return np.asarray(values)

    def _segment_active_values(self, Q: np.ndarray, V: np.ndarray) -> np.ndarray | None:
        """:meth:`_active_values` at every row of ``Q``, ``V``, while the forces are constant.

        Valid while ``_phase_forces`` is set (every active contact a disk on
        a segment); ``None`` when a row lies beyond a segment's ends.
        """
        forces = self._phase_forces
        scale = 1e-9 * (1.0 + float(np.max(np.abs(forces.lam))))
        values = np.ones((len(Q), 3 * len(self._active)))  # frictionless and inside: 1
        for k, (pair, mode) in enumerate(self._active.values()):
            C, Cdot, omega = self.system.disk_motions(Q, V, pair.i)
            kin = disk_segment_contacts(pair.feature, C, Cdot, self._kin.radii[pair.i], omega)
            if not kin.inside.all():
                return None
            values[:, 3 * k] = forces.lam[k] + scale
            if pair.friction > 0.0:
                if mode == "stick":
                    values[:, 3 * k + 1] = (
                        pair.friction * forces.lam[k]
                        - abs(forces.friction_force[k])
                        + pair.friction * scale
                    )
                else:
                    values[:, 3 * k + 1] = (1.0 if mode == "slip+" else -1.0) * kin.u_t + 1e-12
        return values

    def _sub_point_values(
        self, piece: _Piece, ts: np.ndarray, gaps: _GapSet
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """:meth:`_event_values` at the times ``ts`` (s), in order, as the scan asks for them.

        Without watched gaps, with constant contact forces and a vectorised
        state (a parabolic phase) they are computed for all times at once.
        """
        if piece.states is not None and self._phase_forces is not None and not len(gaps):
            N = self._N
            Y = piece.states(ts)
            rows = self._segment_active_values(Y[:, :N], Y[:, N : 2 * N])
            if rows is not None:
                none = np.zeros(0)
                for row in rows:
                    yield none, none, row
                return
        for t in ts:
            yield self._event_values(t, piece.state(t), gaps)

    def _scan(self, piece: _Piece, gaps: _GapSet, n_sub: int) -> _Found | None:
        """Earliest event in ``piece`` (or None), located to ``TIME_TOL``."""
        ts = np.linspace(piece.ta, piece.tb, n_sub + 1)
        active = list(self._active.values())
        values = self._sub_point_values(piece, ts, gaps)
        after = next(values)
        for j in range(1, len(ts)):
            ta, tb = ts[j - 1], ts[j]
            before, after = after, next(values)
            best = self._gap_event(piece, gaps, ta, tb, before, after) if len(gaps) else None
            if active:
                other = self._active_event(piece, gaps, active, ta, tb, before[2], after[2])
                if other is not None and (best is None or other.t < best.t):
                    best = other
            if best is not None:
                return best
        return None

    def _gap_event(
        self,
        piece: _Piece,
        gaps: _GapSet,
        ta: float,
        tb: float,
        before: tuple[np.ndarray, ...],
        after: tuple[np.ndarray, ...],
    ) -> _Found | None:
        """Earliest gap closing in ``[ta, tb]`` (s), from the event values at both ends.

        A gap closes at a sign change, or at a minimum below zero between the
        sub-points (``u_n`` turning from negative to positive).
        """
        (ga, una, _), (gb, unb, _) = before, after
        best: _Found | None = None
        for n in np.nonzero(gb < -GAP_EVENT_TOL)[0]:
            t_hit = self._gap_root(piece, gaps, n, ta, tb, ga[n])
            if best is None or t_hit < best.t:
                best = _Found(t_hit, "gap", gaps.pairs[n].key)
        dips = np.nonzero((ga > 0) & (gb > 0) & (una < 0) & (unb > 0))[0]
        for n in dips:
            t_min = brentq(lambda t, n=n: self._gap_speed(piece, gaps, n, t), ta, tb, xtol=TIME_TOL)
            if self._gap(piece, gaps, n, t_min) < -GAP_EVENT_TOL:
                t_hit = self._gap_root(piece, gaps, n, ta, t_min, ga[n])
                if best is None or t_hit < best.t:
                    best = _Found(t_hit, "gap", gaps.pairs[n].key)
        # closed at the start and not pressing (just after an impact): it may open a
        # hair and close again between the sub-points, seen on REOPEN_SAMPLES samples
        reopen = np.nonzero((np.abs(ga) <= GAP_TOL) & (gb >= -GAP_EVENT_TOL))[0]
        if len(reopen):
            rows = _GapSet(self._kin, [gaps.pairs[n] for n in reopen])
            N = self._N
            for t in np.linspace(ta, tb, REOPEN_SAMPLES + 1)[1:-1]:
                if best is not None and t >= best.t:
                    break
                dipped = np.nonzero(rows.gaps(piece.state(t)[:N]) < -GAP_EVENT_TOL)[0]
                if len(dipped):
                    for k in dipped:
                        n = int(reopen[k])
                        t_hit = self._gap_root(piece, gaps, n, ta, t, ga[n])
                        if best is None or t_hit < best.t:
                            best = _Found(t_hit, "gap", gaps.pairs[n].key)
                    break
        return best

    def _active_event(
        self,
        piece: _Piece,
        gaps: _GapSet,
        active: list[tuple[_Pair, str]],
        ta: float,
        tb: float,
        fa: np.ndarray,
        fb: np.ndarray,
    ) -> _Found | None:
        """Earliest change of an active contact in ``[ta, tb]`` (s): λ, friction, feature region.

        ``fa`` and ``fb`` are :meth:`_active_values` at both ends.
        """
        best: _Found | None = None
        for col in np.nonzero(fb < 0)[0]:
            contact, what = divmod(int(col), 3)
            key = active[contact][0].key
            kind = ("liftoff", "friction", "region")[what]
            if fa[col] < 0:
                t_hit = ta
            elif kind == "region":
                t_hit = self._bisect_region(piece, gaps, col, ta, tb)
            else:
                t_hit = brentq(
                    lambda t, c=col: self._active_value(piece, gaps, c, t),
                    ta,
                    tb,
                    xtol=TIME_TOL,
                )
            if best is None or t_hit < best.t:
                best = _Found(t_hit, kind, key)
        return best

    def _flight_scan(self, piece: _Piece, gaps: _GapSet, a: np.ndarray) -> _Found | None:
        """Earliest gap closing in a free flight with constant accelerations ``a``.

        Gaps that are quadratics in time (segments, disk pairs with equal
        accelerations, vertices met by an unaccelerated disk) close at the
        root of that quadratic, computed in closed form; the few others
        within reach are searched on sub-points no farther apart than half
        the smallest radius of travel.
        """
        if not len(gaps):
            return None
        y0 = piece.state(piece.ta)
        q0, v0 = y0[: self._N], y0[self._N : 2 * self._N]
        tau, unresolved = gaps.closing_times(q0, v0, a, piece.tb - piece.ta)
        best: _Found | None = None
        n = int(tau.argmin())
        if math.isfinite(tau[n]):
            best = _Found(piece.ta + float(tau[n]), "gap", gaps.pairs[n].key)
        if unresolved.any():
            rest = _GapSet(self._kin, [gaps.pairs[k] for k in np.nonzero(unresolved)[0]])
            end = best.t if best is not None else piece.tb
            travel = float(np.max(np.abs(piece.state(end) - y0)[: self._N], initial=0.0))
            n_sub = int(np.clip(math.ceil(2.0 * travel / self._r_min), SUBPOINTS_FLIGHT, 1024))
            other = self._scan(_Piece(piece.ta, end, piece.state), rest, n_sub)
            if other is not None and (best is None or other.t < best.t):
                best = other
        return best

    def _gap(self, piece: _Piece, gaps: _GapSet, n: int, t: float) -> float:
        y = piece.state(t)
        pair = gaps.pairs[n]
        return self._kin.evaluate(pair, y[: self._N], y[self._N : 2 * self._N]).g

    def _gap_speed(self, piece: _Piece, gaps: _GapSet, n: int, t: float) -> float:
        y = piece.state(t)
        pair = gaps.pairs[n]
        return self._kin.evaluate(pair, y[: self._N], y[self._N : 2 * self._N]).u_n

    def _gap_root(
        self, piece: _Piece, gaps: _GapSet, n: int, ta: float, tb: float, g_a: float
    ) -> float:
        """First time in ``[ta, tb]`` where gap ``n`` closes, given ``g(tb) < 0``.

        A contact that starts closed but separating (just after an impact)
        closes again after its gap's maximum, found where ``u_n = 0``. A
        contact whose disk enters the feature's region during the step
        (``g_a`` infinite: the arc beginning on a floor, a vertex no longer
        hidden) closes where it enters if its gap there is already about zero.
        """
        if math.isinf(g_a):
            ta = self._region_entry(piece, gaps.pairs[n], ta, tb)
            g_entry = self._gap(piece, gaps, n, ta)
            if g_entry <= GAP_TOL:
                return ta
            return brentq(lambda t: self._gap(piece, gaps, n, t), ta, tb, xtol=TIME_TOL)
        if not g_a > 0.0:
            if not self._gap_speed(piece, gaps, n, ta) > 0.0:
                return ta
            if self._gap_speed(piece, gaps, n, tb) < 0.0:  # one maximum in between
                t_max = brentq(lambda t: self._gap_speed(piece, gaps, n, t), ta, tb, xtol=TIME_TOL)
                if not self._gap(piece, gaps, n, t_max) > 0.0:
                    return ta
                return brentq(lambda t: self._gap(piece, gaps, n, t), t_max, tb, xtol=TIME_TOL)
            # it opens, then closes: the first sub-sample below zero after one above it
            ts = np.linspace(ta, tb, REOPEN_SAMPLES + 1)
            g = np.array([self._gap(piece, gaps, n, t) for t in ts])
            below = np.nonzero(g < -GAP_EVENT_TOL)[0]
            last = int(below[0]) if len(below) else REOPEN_SAMPLES
            lo, hi = ts[max(last - 1, 0)], ts[last]
            if not g[last] < 0.0:
                return hi
            if not g[max(last - 1, 0)] > 0.0:
                # a hop shorter than the samples: its top is where u_n = 0
                speed = lambda t: self._gap_speed(piece, gaps, n, t)  # noqa: E731
                if not (speed(lo) > 0.0 and speed(hi) < 0.0):
                    return lo
                lo = brentq(speed, lo, hi, xtol=TIME_TOL)
                if not self._gap(piece, gaps, n, lo) > 0.0:
                    return lo
            ta, tb = lo, hi
        return brentq(lambda t: self._gap(piece, gaps, n, t), ta, tb, xtol=TIME_TOL)

    def _region_entry(self, piece: _Piece, pair: _Pair, ta: float, tb: float) -> float:
        """First time (s, to ``TIME_TOL``) in ``[ta, tb]`` with ``pair``'s disk inside its region.

        The pair is outside at ``ta`` and inside at ``tb``.
        """
        N = self._N
        for _ in range(200):
            if tb - ta <= TIME_TOL:
                return tb
            mid = 0.5 * (ta + tb)
            y = piece.state(mid)
            if self._kin.evaluate(pair, y[:N], y[N : 2 * N]).inside:
                tb = mid
            else:
                ta = mid
        raise SolverError("bisection for a disk entering a contact's region did not converge")

    def _active_value(self, piece: _Piece, gaps: _GapSet, col: int, t: float) -> float:
        y = piece.state(t)
        return float(self._active_values(t, y[: self._N], y[self._N : 2 * self._N])[col])

    def _bisect_region(self, piece: _Piece, gaps: _GapSet, col: int, ta: float, tb: float) -> float:
        for _ in range(200):
            if tb - ta <= TIME_TOL:
                return tb
            mid = 0.5 * (ta + tb)
            if self._active_value(piece, gaps, col, mid) < 0:
                tb = mid
            else:
                ta = mid
        raise SolverError("bisection for a contact leaving its feature did not converge")

    # ------------------------------------------------------------ events

    def _handle(self, out: StepOutput, found: _Found) -> None:
        previous = dict(self._active)
        hints: dict[Hashable, str] = {}
        if found.kind == "friction" and previous[found.key][1] == "stick":
            # the friction needed has reached μλ: the contact starts to slide
            # against it (the LCP at this very instant would still allow sticking)
            forces = self._active_forces(self.t, self._q, self._v)[1]
            k = list(previous).index(found.key)
            hints[found.key] = "slip+" if forces.friction_force[k] < 0.0 else "slip-"
        self._settle(out, previous, hints)

    def _closed_pairs(self) -> list[_Pair]:
        """Every pair with ``|g| ≤ GAP_TOL`` at the current positions, in scene order."""
        every = self._all_candidates()
        if not len(every):
            return []
        g = every.gaps(self._q, band=True)
        touching = np.nonzero(np.abs(g) <= GAP_TOL)[0]
        if len(touching) > 1:
            # scene order (by disk, then feature or second disk): deterministic columns
            touching = touching[np.lexsort((every.second[touching], every.first[touching]))]
        return [every.pairs[n] for n in touching]

    def _closed(self, pairs: list[_Pair]) -> list[Contact]:
        """The closed ``pairs`` at the current velocities, those with a nonzero normal Jacobian."""
        evals = []
        for pair in pairs:
            e = self._kin.evaluate(pair, self._q, self._v)
            if e.inside and e.G_local.any():
                evals.append(e)
        return evals

    def _settle(
        self,
        out: StepOutput,
        previous: dict[Hashable, tuple[_Pair, str]],
        hints: dict[Hashable, str] | None = None,
    ) -> None:
        """Resolve impacts at the current instant, then choose the active contacts.

        ``hints`` imposes a friction mode on some contacts (a contact whose
        sticking friction has just reached the cone slides).
        """
        impacted = False
        pairs = self._closed_pairs()  # impacts change velocities only
        qdd = self._accelerations()
        for _ in range(MAX_IMPACT_ROUNDS):
            closed = self._closed(pairs)
            if not any(e.u_n < -REST_SPEED_TOL for e in closed):
                break
            approaching = [e for e in closed if e.u_n < -IMPACT_SPEED_TOL]
            if approaching and not all(_grazing(e, qdd) for e in approaching):
                # every law is given all closed contacts: the staged and poisson laws
                # act on the separating ones too (paper 000), the sequential law takes
                # one at a time until none approaches (a jam cascades through rounds)
                self._impact(out, closed)
                impacted = True
            else:
                self._absorb([e for e in closed if e.u_n < REST_SPEED_TOL])
            qdd = None  # after a jump the motion so far says nothing
        else:
            raise SolverError(
                f"impacts did not end after {MAX_IMPACT_ROUNDS} rounds at one instant"
            )
        evaluated = closed
        closed = [e for e in closed if abs(e.u_n) <= max(IMPACT_SPEED_TOL, REST_SPEED_TOL)]
        self._active = {}
        self._phase_forces = None
        if closed:
            f = self.system.applied_force(self.t, self._q, self._v)
            hints = hints or {}
            modes = [hints.get(e.key) for e in closed]
            forces = solve_contact_problem(closed, self._M_inv, f, modes=modes)
            tol = 1e-12 * (1.0 + float(np.max(forces.lam)))
            for k, e in enumerate(closed):
                if forces.lam[k] > tol:
                    self._active[e.key] = (self._kin.pairs[e.key], forces.modes[k])
        self._project()
        self._report_changes(out, previous, impacted)
        if impacted:
            # without active contacts nothing was projected: the evaluations still hold
            self._check_zeno(out, [] if self._active else evaluated)

    def _accelerations(self) -> np.ndarray | None:
        """``q̈`` (N,) of the motion that led to this instant (active contacts as they were)."""
        if self._active:
            return self._active_forces(self.t, self._q, self._v)[1].qdd
        return self.system.applied_force(self.t, self._q, self._v) * self._M_inv

    def _report_changes(
        self, out: StepOutput, previous: dict[Hashable, tuple[_Pair, str]], impacted: bool
    ) -> None:
        new_bodies = {pair.body for pair, _ in self._active.values()}
        for key, (pair, mode) in previous.items():
            if key not in self._active:
                if not impacted and pair.body not in new_bodies:
                    out.events.append(
                        Event(t=self.t, type="liftoff", body=pair.body, other=pair.other)
                    )
                continue
            new_mode = self._active[key][1]
            if new_mode != mode:
                kind = "stick" if new_mode == "stick" else "slip"
                out.events.append(
                    Event(
                        t=self.t,
                        type=kind,
                        body=pair.body,
                        other=pair.other,
                        message=f"{mode} -> {new_mode}",
                    )
                )

    def _absorb(self, closed: list[Contact]) -> None:
        """Stop approach speeds below ``IMPACT_SPEED_TOL`` with a silent plastic impact.

        This ends the geometric ladder of ever smaller rebounds of jammed
        contacts (a bead squeezed between walls) and the creeping of a
        contact that closes with rounding-level speed; the kinetic energy
        removed (of order ``m · IMPACT_SPEED_TOL²``) is booked as dissipated.
        """
        if len(closed) == 1:
            result = self._newton_single(closed[0], 0.0)
        else:
            G = self._columns(closed, "G_local")
            result = resolve_impact(self.system.M_diag, G, self._v, 0.0, law="staged")
        self._v = np.array(result.v_plus, dtype=float)
        self._impact_loss -= float(result.energy_change)

    def _impact(self, out: StepOutput, closed: list[Contact]) -> None:
        """One impact of the closed contacts; frames ``pre`` and ``post``, events per contact."""
        v_minus = self._v.copy()
        result = self._law_result(closed, v_minus)
        out.frames.append(self._frame(self.t, "pre", self._y()))
        self._v = np.array(result.v_plus, dtype=float)
        self._impact_loss -= float(result.energy_change)
        out.frames.append(self._frame(self.t, "post", self._y()))
        impulse = np.asarray(result.impulse, dtype=float)
        tangent = getattr(result, "tangent_impulse", None)
        tangent = np.zeros(len(closed)) if tangent is None else np.asarray(tangent, dtype=float)
        loudest = int(impulse.argmax())
        for k, e in enumerate(closed):
            if impulse[k] <= 0.0 and e.u_n >= -IMPACT_SPEED_TOL:
                continue
            out.events.append(
                Event(
                    t=self.t,
                    type="impact",
                    body=e.body,
                    other=e.other,
                    normal_impulse=float(impulse[k]),
                    tangent_impulse=float(tangent[k]),
                    stages=len(result.stages),
                    energy_change=float(result.energy_change) if k == loudest else 0.0,
                    v_minus=v_minus,
                    v_plus=self._v.copy(),
                    impact_stages=ImpactStages(e.dofs, e.G_local, k, result.stages),
                )
            )
        if not result.admissible:
            u_plus = np.asarray(self._columns(closed, "G_local").T @ self._v).ravel()
            worst = int(np.argmin(u_plus))
            out.events.append(
                Event(
                    t=self.t,
                    type="inadmissible",
                    body=closed[worst].body,
                    other=closed[worst].other,
                    v_minus=v_minus,
                    v_plus=self._v.copy(),
                    message=f"the {self._law} law left u_n = {u_plus[worst]:.6g} m/s < 0",
                )
            )
        hit = frozenset(e.key for k, e in enumerate(closed) if impulse[k] > 0.0)
        self._zeno.record(self.t, hit)
        self._cluster.record(self.t, hit)

    def _law_result(self, closed: list[Contact], v_minus: np.ndarray) -> ImpactResult:
        """The scene's impact law on the ``closed`` contacts from velocities ``v_minus``."""
        if len(closed) == 1 and closed[0].friction == 0.0:
            return self._newton_single(closed[0], closed[0].restitution, v_minus)
        G = self._columns(closed, "G_local")
        restitution = np.array([e.restitution for e in closed])
        friction = np.array([e.friction for e in closed])
        kwargs: dict[str, Any] = {}
        if np.any(friction > 0.0):
            kwargs = {"H": self._columns(closed, "H_local"), "friction": friction}
        return resolve_impact(self.system.M_diag, G, v_minus, restitution, law=self._law, **kwargs)

    def _newton_single(
        self, contact: Contact, restitution: float, v: np.ndarray | None = None
    ) -> ImpactResult:
        """Impact of one frictionless contact in closed form (Newton's law).

        With a single frictionless constraint every law of SPEC §3 reduces to
        ``u_n⁺ = −e u_n⁻`` with the effective mass ``1/(GᵀM⁻¹G)``. The velocity
        jump is formed from the direction ``M⁻¹G/(GᵀM⁻¹G)`` (exactly ``±1``
        per coordinate for a bead against a wall, so an elastic bounce is an
        exact reversal), the impulse from the momentum balance
        ``Λ = Gᵀ M Δv / GᵀG`` (N·s) and the energy change from
        ``ΔT = −(1 − e²)/2 · u_n⁻²/(GᵀM⁻¹G)`` (J), which is exactly zero for
        ``e = 1``: no rounding error accumulates over many bounces.

        Parameters
        ----------
        contact : Contact
            The closed, approaching contact.
        restitution : float
            ``e`` in [0, 1].
        v : numpy.ndarray, optional
            Velocities before the impact (N,); default the current ones.

        Returns
        -------
        ImpactResult
            One stage; the plastic multiplier is ``Λ/(1 + e)``.
        """
        v = self._v if v is None else v
        dofs, G = contact.dofs, contact.G_local
        w = G * self._M_inv[dofs]
        k = float(G.dot(w))
        u = float(G.dot(v[dofs]))
        dv = np.zeros(self._N)
        dv[dofs] = (-(1.0 + restitution) * u) * (w / k)  # a contact's dofs are distinct
        v_plus = v + dv
        impulse = float(G.dot(self.system.M_diag[dofs] * dv[dofs])) / float(G.dot(G))
        lam = np.array([impulse / (1.0 + restitution)])
        stage = ImpactStage(
            y=v.copy(),
            w=v + dv / (1.0 + restitution),
            lam=lam,
            tangent_impulse=np.zeros(1),
        )
        return ImpactResult(
            v_plus=v_plus,
            impulse=np.array([impulse]),
            stages=[stage],
            energy_change=-0.5 * (1.0 - restitution * restitution) * u * u / k,
            admissible=True,
            tangent_impulse=np.zeros(1),
            law=self._law,
        )

    def _columns(self, evals: list[Contact], field: str) -> Any:
        """The contacts' G (or H) as columns: dense for small systems, sparse (CSC) for large."""
        if self._N <= SPARSE_ABOVE:
            return np.column_stack([e.G if field == "G_local" else e.H for e in evals])
        rows = np.concatenate([e.dofs for e in evals])
        cols = np.concatenate([np.full(len(e.dofs), k) for k, e in enumerate(evals)])
        data = np.concatenate([getattr(e, field) for e in evals])
        return scipy.sparse.csc_matrix((data, (rows, cols)), shape=(self._N, len(evals)))

    def _check_zeno(self, out: StepOutput, evaluated: list[Contact]) -> None:
        """End a geometric bounce sequence at its accumulation time (SPEC §4).

        ``evaluated`` are closed contacts already evaluated at the current
        state. Bounces shared among several contacts are ended by
        :meth:`_capture`.
        """
        if not self._zeno.geometric:
            if self._cluster.shrinking:
                self._capture(out)
            return
        key = self._zeno.key
        pair = self._kin.pairs[key]
        if key in self._active or pair.restitution >= 1.0:
            return
        e = next((c for c in evaluated if c.key == key), None)
        if e is None:
            e = self._kin.evaluate(pair, self._q, self._v)
        f = self.system.applied_force(self.t, self._q, self._v)
        a_n = float(e.G @ (f * self._M_inv)) + e.gamma_n
        if a_n >= 0.0 or e.u_n <= 0.0 or e.u_n * e.u_n / (2.0 * -a_n) > ZENO_HEIGHT:
            return
        if self._can_sum_bounces():
            bounces = self._sum_bounces(out, [e])
            if bounces is not None:
                self._end_bounces(out, [e], bounces)
                return
        t_inf = accumulation_time(self.t, e.u_n, pair.restitution, a_n)
        kinetic_before = self.system.kinetic_energy(self._v)
        w = e.G * self._M_inv
        self._v = self._v - w * (e.u_n / float(e.G @ w))
        self._impact_loss += kinetic_before - self.system.kinetic_energy(self._v)
        previous = dict(self._active)
        self._settle(out, previous)
        self._zeno.reset()
        self._cluster.reset()
        out.events.append(
            Event(
                t=t_inf,
                type="zeno",
                body=pair.body,
                other=pair.other,
                message=f"geometric bouncing accumulates at t = {t_inf:.15g} s; resting contact",
            )
        )

    def _can_sum_bounces(self) -> bool:
        """True when the bounces ahead are free flights under constant gravity between impacts."""
        return self._flight and not self._active

    def _sum_bounces(self, out: StepOutput, contacts: list[Contact]) -> int | None:
        """Carry the bounces of ``contacts`` to their accumulation point (SPEC §4).

        Between impacts the motion is a free flight under gravity, a parabola;
        each gap ``g_k`` is followed in closed form (``g + u_n τ + ½ a_n τ²``,
        ``a_n`` the normal acceleration of the flight) so that hops far below
        the rounding of positions still close exactly, and every impact is the
        scene's law with its friction, so the friction impulse of each bounce
        is included. The series converges geometrically; it ends when no
        contact approaches faster than ``ZENO_SPEED_FLOOR``, when the run ends,
        or after ``MAX_ZENO_BOUNCES`` (a sequence that does not converge: what
        is left is then captured plastically, as by :meth:`_end_bounces`).
        Output samples on the way are written; the bounces are not events.

        Returns
        -------
        int or None
            The number of bounces summed, or None (nothing changed) when a
            flight would not close any of the contacts again.
        """
        a = self._gravity * self._M_inv
        pairs = self._bounce_pairs(contacts, a)
        q, v = self._q.copy(), self._v.copy()
        gaps = np.maximum([self._kin.evaluate(pair, q, v).g for pair in pairs], 0.0)
        t, loss = self.t, self._impact_loss
        for bounce in range(MAX_ZENO_BOUNCES):
            evals = [self._kin.evaluate(pair, q, v) for pair in pairs]
            u = np.array([e.u_n for e in evals])
            a_n = np.array([float(e.G @ a) + e.gamma_n for e in evals])
            with np.errstate(invalid="ignore", divide="ignore"):
                tau = np.where(
                    a_n < 0.0,
                    (u + np.sqrt(np.maximum(u * u - 2.0 * a_n * gaps, 0.0))) / -a_n,
                    np.inf,
                )
            k = int(np.argmin(tau))
            if not math.isfinite(tau[k]):
                if bounce == 0:
                    return None
                break
            tau_k = float(tau[k])
            if -(u[k] + a_n[k] * tau_k) <= ZENO_SPEED_FLOOR:  # the next approach speed
                break
            flight = _Parabola(t, q, v, a, self._work.copy(), np.zeros(2))
            if t + tau_k >= self.t_end:
                self._impact_loss = loss
                self._emit_samples(out, flight.state, self.t_end, True, flight.states)
                self._set_y(flight.state(self.t_end))
                self.t = self.t_end
                return bounce
            self._emit_samples(out, flight.state, t + tau_k, False, flight.states)
            q, v = flight.state(t + tau_k)[: self._N], v + tau_k * a
            gaps = np.maximum(gaps + tau_k * (u + 0.5 * tau_k * a_n), 0.0)
            gaps[k] = 0.0
            t += tau_k
            evals = [self._kin.evaluate(pair, q, v) for pair in pairs]
            hit = [e for e, g in zip(evals, gaps, strict=True) if g <= GAP_TOL]
            result = self._law_result(hit, v)
            v = np.array(result.v_plus, dtype=float)
            loss -= float(result.energy_change)
            self._impact_loss = loss
        self._q, self._v, self._impact_loss = q, v, loss
        self._advance_clock(t)
        return bounce

    def _bounce_pairs(self, contacts: list[Contact], a: np.ndarray) -> list[_Pair]:
        """The bouncing contacts and every other pair the disks can reach before they settle.

        The series lasts about ``T = 2 max u_n / ((1 − max e) min |a_n|)``;
        pairs whose gap is within twice the distance a disk centre travels in
        that time are followed too (a ball bouncing in a corner touches one
        wall at a time).
        """
        u = max(e.u_n for e in contacts)
        a_n = min(abs(float(e.G @ a) + e.gamma_n) for e in contacts)
        e_max = max(e.restitution for e in contacts)
        T = 2.0 * u / ((1.0 - min(e_max, 0.999)) * a_n)
        cd = self.system.centre_velocities(self._v)
        ca = self.system.centre_velocities(a)
        reach = 2.0 * float(
            np.max(np.hypot(cd[:, 0], cd[:, 1]) * T + 0.5 * np.hypot(ca[:, 0], ca[:, 1]) * T * T)
        )
        every = self._all_candidates()
        near = set(np.nonzero(every.gaps(self._q, band=True) <= reach)[0].tolist())
        keys = {e.key for e in contacts}
        return [self._kin.pairs[e.key] for e in contacts] + [
            every.pairs[n] for n in sorted(near) if every.pairs[n].key not in keys
        ]

    def _end_bounces(self, out: StepOutput, contacts: list[Contact], bounces: int) -> None:
        """Persistent contact from the accumulation point: the rest of ``u_n`` removed, LCP."""
        self._zeno.reset()
        self._cluster.reset()
        first = contacts[0]
        where = ""
        if len(contacts) > 1:
            where = (
                " on several contacts (" + ", ".join(f"{e.body}–{e.other}" for e in contacts) + ")"
            )
        event = Event(
            t=self.t,
            type="zeno",
            body=first.body,
            other=first.other,
            message=f"bouncing{where} accumulates at t = {self.t:.15g} s after {bounces} more "
            "bounces summed in closed form; resting contact",
        )
        if self.t >= self.t_end:
            out.events.append(event)
            self._finish(out)
            return
        evals = [self._kin.evaluate(self._kin.pairs[e.key], self._q, self._v) for e in contacts]
        C = np.column_stack([e.G for e in evals])
        W = self._M_inv[:, None] * C
        kinetic_before = self.system.kinetic_energy(self._v)
        u = np.maximum(C.T @ self._v, 0.0)
        self._v = self._v - W @ np.linalg.lstsq(C.T @ W, u, rcond=1e-12)[0]
        self._impact_loss += kinetic_before - self.system.kinetic_energy(self._v)
        self._settle(out, dict(self._active))
        out.events.append(event)

    def _capture(self, out: StepOutput) -> None:
        """Plastic capture of bounces shared among several contacts (never an endless run).

        Rule: after a shrinking run of impacts (:class:`solver.zeno.ImpactCluster`),
        take the closed contacts that separate (``u_n > 0``) although the
        applied force presses them (free normal acceleration ``a_n < 0``). If
        every contact that took an impulse in the latest impact is one of them
        and none of them would rise more than ``ZENO_HEIGHT`` (``u_n²/(2|a_n|)``),
        their separation speeds are set to zero together (M-orthogonal
        projection; the kinetic energy removed is booked as dissipated), the
        contact problem decides which of them carry force, and a ``zeno``
        event at the current time says so. The bounces given up would have
        risen less than ``ZENO_HEIGHT``.
        """
        f = self.system.applied_force(self.t, self._q, self._v) * self._M_inv
        chosen = []
        for e in self._closed(self._closed_pairs()):
            a_n = float(e.G @ f) + e.gamma_n
            if e.u_n > 0.0 and a_n < 0.0:
                if e.u_n * e.u_n / (2.0 * -a_n) > ZENO_HEIGHT:
                    return
                chosen.append(e)
        if not chosen or not self._cluster.last <= {e.key for e in chosen}:
            return
        if self._can_sum_bounces():
            bounces = self._sum_bounces(out, chosen)
            if bounces is not None:
                self._end_bounces(out, chosen, bounces)
                return
        C = np.column_stack([e.G for e in chosen])
        W = self._M_inv[:, None] * C
        kinetic_before = self.system.kinetic_energy(self._v)
        self._v = self._v - W @ np.linalg.lstsq(C.T @ W, C.T @ self._v, rcond=1e-12)[0]
        self._impact_loss += kinetic_before - self.system.kinetic_energy(self._v)
        self._settle(out, dict(self._active))
        self._zeno.reset()
        self._cluster.reset()
        names = ", ".join(f"{e.body}–{e.other}" for e in chosen)
        out.events.append(
            Event(
                t=self.t,
                type="zeno",
                body=chosen[0].body,
                other=chosen[0].other,
                message=f"bouncing on several contacts ({names}) would rise less than "
                f"{ZENO_HEIGHT:g} m: captured plastically into resting contact",
            )
        )

    # ------------------------------------------------------------ projection

    def _project(self) -> None:
        """Put active contacts back on ``g = 0``, their velocities on ``u_n = 0``.

        Sticking contacts also get ``u_t = 0``. Both projections are
        M-orthogonal (the smallest change in kinetic-energy norm); the kinetic
        energy they remove is booked as dissipated.
        """
        if not self._active:
            return
        M_inv = self._M_inv[:, None]
        for _ in range(MAX_PROJECTION_ITERATIONS):
            evals = self._active_evals(self._q, self._v)
            g = np.array([e.g for e in evals])
            if np.max(np.abs(g)) <= 1e-14:
                break
            G = np.column_stack([e.G for e in evals])
            W = M_inv * G
            self._q = self._q - W @ np.linalg.lstsq(G.T @ W, g, rcond=1e-12)[0]
        else:
            raise SolverError(
                f"projecting the active contacts onto g = 0 did not converge in "
                f"{MAX_PROJECTION_ITERATIONS} iterations"
            )
        evals = self._active_evals(self._q, self._v)
        columns = [e.G for e in evals]
        columns += [
            e.H
            for e, (_, mode) in zip(evals, self._active.values(), strict=True)
            if mode == "stick" and e.friction > 0.0
        ]
        C = np.column_stack(columns)
        W = M_inv * C
        kinetic_before = self.system.kinetic_energy(self._v)
        self._v = self._v - W @ np.linalg.lstsq(C.T @ W, C.T @ self._v, rcond=1e-12)[0]
        self._impact_loss += kinetic_before - self.system.kinetic_energy(self._v)
