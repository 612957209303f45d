"""The time-stepper's contact detector: candidate pairs kept, their kinematics, closed contacts.

:class:`ContactDetector` is the part of :class:`solver.timestepping.TimeSteppingStepper`
that finds, for a step, the contacts closed at mid-step (MECHANICS §4) and the
pairs about to close within it (the step is then cut at their closing instant,
:mod:`solver.timestep_instant`). It owns the candidate pairs, searched within a
margin and kept until some disk has moved far enough to close a pair that was
not a candidate, and a lower bound on every gap (``clearance``) that skips the
kinematics while nothing can close. The kinematics of all candidate pairs are
computed on arrays (:mod:`solver.contact_arrays`), or pair by pair up to
``SCALAR_PAIRS``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial import cKDTree

from solver import timestep_kernels
from solver.broadphase import StaticIndex
from solver.contact_arrays import (
    ContactArrays,
    SparseRows,
    disk_disk,
    empty_contacts,
    from_disk_contacts,
)
from solver.geometry import disk_disk_contact, disk_feature_contact

if TYPE_CHECKING:
    from solver.system import System

GAP_TOL = 1e-10
"""Gap (m) at or below which a contact counts as closed: absorbs round-off at rest."""

QUERY_MARGIN = 0.5
"""Candidate pairs are looked for within this share of the smallest radius, so that the
search can be skipped until the disks have moved that far."""

SCALAR_PAIRS = 8
"""Up to this many candidate pairs the kinematics are computed pair by pair (cheaper)."""

CUT_SPEED = 1e-6
"""A closing pair cuts its step only when it approaches faster than this share of the
fastest closing speed (beads of a chain that move together touch again at 1e-8 m/s: their
contacts are left to plain steps, as persistent ones)."""


@dataclass(frozen=True, eq=False)
class Closed:
    """The closed contacts of a step: kinematics, Jacobian rows, laws and identities."""

    rows: ContactArrays
    G: SparseRows
    H: SparseRows
    restitution: np.ndarray
    friction: np.ndarray
    keys: np.ndarray  # one integer per pair, stable from step to step

    def __len__(self) -> int:
        return len(self.keys)


@dataclass(frozen=True, eq=False)
class Hits:
    """Pairs that close within a step: disk ``i``, other disk ``j`` (−1) or ``feature`` (−1)."""

    i: np.ndarray
    j: np.ndarray
    feature: np.ndarray


class ContactDetector:
    """Candidate pairs of a system kept between steps, and the contacts they give.

    Parameters
    ----------
    system : System
        The compiled scene.
    theta : float
        θ of the scheme (the mid-step ``q_θ`` at which contacts are taken).
    """

    def __init__(self, system: System, theta: float) -> None:
        self.system = system
        self.theta = theta
        features = system.features
        self._feature_ids = [fid for fid, _, _, _ in features]
        self._feature_restitution = np.array([e for _, _, e, _ in features], dtype=float)
        self._feature_friction = np.array([mu for _, _, _, mu in features], dtype=float)
        self._static_index = StaticIndex([f for _, f, _, _ in features]) if features else None
        self._key_stride = len(features) + system.n_disks
        self._query_margin = QUERY_MARGIN * float(np.min(system.radii, initial=1.0))
        self._clearance = -math.inf  # every gap is at least this, m (-inf: unknown)
        self._candidates: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._candidate_tables: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._candidate_centres = np.zeros((0, 2))
        self._candidate_margin = 0.0

    @property
    def key_stride(self) -> int:
        """Contact keys are ``disk · key_stride + other`` (features, then disks)."""
        return self._key_stride

    def forget_clearance(self) -> None:
        """Steps were made elsewhere (the compiled loop): no gap bound is known."""
        self._clearance = -math.inf

    def stepped(self, closed: bool, shrink: float) -> None:
        """A step was made: with closed contacts no gap bound is known; else every gap
        shrank by at most ``shrink`` (m)."""
        self._clearance = -math.inf if closed else self._clearance - shrink

    def closed_contacts(
        self,
        q_theta: np.ndarray,
        v: np.ndarray,
        h: float,
        closing_speed: float,
        accel: np.ndarray,
        detect: bool = False,
        gap_tol: float = GAP_TOL,
    ) -> tuple[Closed | None, Hits | None]:
        """Contacts predicted closed at mid-step: ``g(q_θ) + (θ − 1/2) h u_n ≤ gap_tol``.

        Skipped while ``self._clearance`` (a lower bound on every gap) shows
        that nothing can close within this step; ``None`` when nothing is
        closed. With ``detect``, the pairs that close within the step are
        returned instead of the closed contacts when there are any: those
        whose gap, predicted from its value ``g``, rate ``u_n`` and second
        derivative ``a_n = n·(a_i − a_j) + gamma_n`` at ``q_θ``, is above
        ``GAP_TOL`` at the step's start and at most ``GAP_TOL`` at its end,
        approaching faster than ``CUT_SPEED`` times the fastest closing speed,
        and involve a wheel (beads on their rails keep plain steps: a chain's
        strikes are the exact Moreau LCP's to spread, and cutting each of
        thousands of collisions would cost a round trip through Python).
        """
        if self._clearance - h * closing_speed > gap_tol or not self.system.n_disks:
            return None, None
        system = self.system
        lead = (self.theta - 0.5) * h
        needed = GAP_TOL + h * closing_speed
        c = system.centres(q_theta)
        moved = self._largest_move(c)
        if self._candidates is None or 2.0 * moved >= self._candidate_margin - needed:
            self._search_candidates(c, max(needed, self._query_margin))
            moved = 0.0
        rows = self._kinematics(c, system.centre_velocities(v), system.angular_velocities(v))
        if detect:
            centre_accel = system.centre_velocities(accel)
            wheel = np.asarray(system.disk_dofs.iy) >= 0
            pair = rows.j >= 0
            hit = rows.valid & (wheel[rows.i] | (pair & wheel[np.where(pair, rows.j, 0)]))
            hit &= closing(rows, centre_accel, self.theta, h, closing_speed)
            if np.any(hit):
                return None, Hits(rows.i[hit], rows.j[hit], rows.feature[hit])
        closed = rows.valid & (rows.g + lead * rows.u_n <= gap_tol)
        open_gaps = rows.g[rows.valid & ~closed]
        self._clearance = min(
            self._candidate_margin - 2.0 * moved, float(np.min(open_gaps, initial=math.inf))
        )
        if not np.any(closed):
            return None, None
        rows = rows.select(closed)
        G, H = system.disk_dofs.jacobians(rows)
        is_pair = rows.j >= 0
        feature = np.where(is_pair, 0, rows.feature)
        if len(self._feature_ids):
            restitution = np.where(
                is_pair, system.disk_restitution, self._feature_restitution[feature]
            )
            friction = np.where(is_pair, system.disk_friction, self._feature_friction[feature])
        else:
            restitution = np.full(len(rows), float(system.disk_restitution))
            friction = np.full(len(rows), float(system.disk_friction))
        keys = rows.i.astype(np.int64) * self._key_stride + np.where(
            is_pair, len(self._feature_ids) + rows.j, rows.feature
        )
        return Closed(rows, G, H, restitution, friction, keys), None

    def candidate_disk_pairs(self) -> tuple[np.ndarray, np.ndarray, float] | None:
        """The candidate disk pairs, the centres (m) they were searched at and their margin (m)."""
        if self._candidates is None:
            return None
        return self._candidates[2], self._candidate_centres, self._candidate_margin

    def _largest_move(self, c: np.ndarray) -> float:
        """Largest distance (m) of a disk centre from where the candidates were searched."""
        if self._candidates is None or len(c) != len(self._candidate_centres):
            return math.inf
        d = c - self._candidate_centres
        return math.sqrt(float(np.max(np.einsum("kd,kd->k", d, d))))

    def _search_candidates(self, c: np.ndarray, margin: float) -> None:
        """Disk–feature and disk–disk pairs that may come within ``margin`` (m) at ``c``."""
        radii = self.system.radii
        if self._static_index is not None:
            feature_pairs = self._static_index.query(c, radii, margin).pairs
        else:
            feature_pairs = np.zeros((0, 2), dtype=int)
        # compliant body–body contacts are forces (solver.compliance), not contacts
        pairs = disk_pairs(c, radii, margin) if self.system.rigid_disk_pairs else NO_PAIRS
        self._candidates = (feature_pairs[:, 0], feature_pairs[:, 1], pairs)
        self._candidate_tables = None
        self._candidate_centres = c.copy()
        self._candidate_margin = margin

    def _kinematics(self, c: np.ndarray, cd: np.ndarray, omega: np.ndarray) -> ContactArrays:
        """Kinematics of every candidate pair: disk–feature pairs first, then disk–disk."""
        assert self._candidates is not None
        disk, feature, pairs = self._candidates
        radii = self.system.radii
        if len(disk) + len(pairs) <= SCALAR_PAIRS:
            return self._few_kinematics(c, cd, omega)
        parts = []
        if len(disk):
            parts.append(self.system.feature_arrays.contacts(disk, feature, c, cd, omega, radii))
        if len(pairs):
            parts.append(disk_disk(c, cd, omega, radii, pairs[:, 0], pairs[:, 1]))
        if not parts:
            return empty_contacts()
        return parts[0] if len(parts) == 1 else ContactArrays.concatenate(parts)

    def _few_kinematics(self, c: np.ndarray, cd: np.ndarray, omega: np.ndarray) -> ContactArrays:
        """:meth:`_kinematics` for a few pairs, one :mod:`solver.geometry` call each."""
        assert self._candidates is not None
        disk, feature, pairs = self._candidates
        radii, features = self.system.radii, self.system.features
        contacts = [
            disk_feature_contact(features[f][1], c[k], cd[k], radii[k], omega[k])
            for k, f in zip(disk.tolist(), feature.tolist(), strict=True)
        ]
        contacts += [
            disk_disk_contact(c[a], cd[a], radii[a], omega[a], c[b], cd[b], radii[b], omega[b])
            for a, b in pairs.tolist()
        ]
        return from_disk_contacts(
            np.concatenate((disk, pairs[:, 0])),
            np.concatenate((np.full(len(disk), -1), pairs[:, 1])),
            np.concatenate((feature, np.full(len(pairs), -1))),
            contacts,
        )

    def kernel_pairs(
        self,
        scene: timestep_kernels.KernelScene,
        q: np.ndarray,
        v: np.ndarray,
        h: float,
        closing_speed: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
        """The pairs the compiled loop looks at: kinds, disks, others; search centres, margin.

        All pairs of a small scene (margin ``inf``), else the candidate pairs,
        searched again first when the disks may have left them (as
        :meth:`closed_contacts` does), for steps of ``h`` from ``(q, v)`` at the
        fastest ``closing_speed`` (m/s).
        """
        if scene.all_pairs:
            return scene.pair_kind, scene.pair_i, scene.pair_j, np.zeros((0, 2)), math.inf
        c = self.system.centres(q + (1.0 - self.theta) * h * v)
        needed = GAP_TOL + h * closing_speed
        if self._candidates is None or 2.0 * self._largest_move(c) >= (
            self._candidate_margin - needed
        ):
            self._search_candidates(c, max(needed, self._query_margin))
        if self._candidate_tables is None:
            disk, feature, pairs = self._candidates
            self._candidate_tables = (
                np.concatenate((scene.feature_kind[feature],
                                np.full(len(pairs), timestep_kernels.DISK))).astype(np.int64),
                np.concatenate((disk, pairs[:, 0])).astype(np.int64),
                np.concatenate((feature, pairs[:, 1])).astype(np.int64),
            )  # fmt: skip
        return (*self._candidate_tables, self._candidate_centres, self._candidate_margin)


def closing(
    rows: ContactArrays, centre_accel: np.ndarray, theta: float, h: float, closing_speed: float
) -> np.ndarray:
    """Which pairs close within a step of length ``h``: open at its start, closed at its end.

    The gap is predicted to second order from its value, rate and second
    derivative ``a_n = n·(a_i − a_j) + gamma_n`` at ``q_θ`` (``centre_accel``:
    the centres' free accelerations, m/s²): above ``GAP_TOL`` a time
    ``(1 − θ) h`` before, at most ``GAP_TOL`` a time ``θ h`` after; and the
    pair approaches faster than ``CUT_SPEED`` times ``closing_speed`` (m/s).
    """
    accel = centre_accel[rows.i]
    pair = rows.j >= 0
    accel[pair] -= centre_accel[rows.j[pair]]
    a_n = rows.n[:, 0] * accel[:, 0] + rows.n[:, 1] * accel[:, 1] + rows.gamma_n
    before, after = (1.0 - theta) * h, theta * h
    start = rows.g - before * rows.u_n + 0.5 * before * before * a_n
    end = rows.g + after * rows.u_n + 0.5 * after * after * a_n
    return (start > GAP_TOL) & (end <= GAP_TOL) & (rows.u_n < -CUT_SPEED * closing_speed)


NO_PAIRS = np.zeros((0, 2), dtype=int)
"""No disk pairs (:func:`disk_pairs` of disks that meet by a compliant force)."""


def disk_pairs(c: np.ndarray, radii: np.ndarray, margin: float) -> np.ndarray:
    """Disk pairs ``(i, j)``, ``i < j``, with gap at most ``margin`` (m), sorted.

    The same pairs as :func:`solver.broadphase.disk_pairs`, found by
    ``scipy.spatial.cKDTree`` (a few times faster on thousands of disks).
    """
    if len(c) < 2:
        return np.zeros((0, 2), dtype=int)
    reach = 2.0 * float(np.max(radii)) + margin
    pairs = cKDTree(c).query_pairs(reach * (1.0 + 1e-9), output_type="ndarray")
    i, j = pairs[:, 0], pairs[:, 1]
    d = c[i] - c[j]
    near = np.hypot(d[:, 0], d[:, 1]) <= radii[i] + radii[j] + margin
    pairs = pairs[near]
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
