"""What a time-stepping run reports of its own error, and the largest step it takes.

:class:`AccuracyMonitor` is the part of
:class:`solver.timestepping.TimeSteppingStepper` that measures every output
frame: the deepest overlap of any disk with a boundary or another disk and the
drift of the energy balance, written as ``accuracy`` event rows (docs/MECHANICS.md
§4). It keeps near pairs between frames and measures all frames of a step at
once (the cost of a step stays that of its steps). :func:`largest_step`: the
step a scene is refused beyond.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from solver import timestep_kernels
from solver.broadphase import StaticIndex
from solver.frames import Event, Frame
from solver.kernel_accuracy import compiled_covered, compiled_deepest, compiled_frame_centres
from solver.kernel_tables import DISK, feature_tables
from solver.timestep_contacts import QUERY_MARGIN, disk_pairs

if TYPE_CHECKING:
    from solver.system import System

STEP_FRACTION = 1.0 / 20.0
"""Largest step as a fraction of the scene's shortest period (docs/MECHANICS.md §6):
``h ω <= 2π/20 ≈ 0.31`` keeps the midpoint scheme's phase error under 0.5 % a period
(``(hω)²/24``) and far inside its stability bound ``hω < 2``."""

PENETRATION_BOUND = 0.01
"""Penetration (fraction of the smallest disk radius) past which an ``accuracy`` row is written."""

DRIFT_BOUND = 0.01
"""Energy-balance drift (fraction of the energy scale) past which an ``accuracy`` row is written."""

_DEEPEST, _COVERED, _FRAME_CENTRES = (
    compiled_deepest(),
    compiled_covered(),
    compiled_frame_centres(),
)

ALL_PAIRS = timestep_kernels.KERNEL_PAIRS
"""Up to this many disk–feature (or disk–disk) pairs the accuracy measure looks at every pair
of the kind, never searching."""


def largest_step(system: System) -> tuple[float, str]:
    """The largest acceptable step for ``system`` (s) and the period that sets it, in words.

    ``STEP_FRACTION`` of the shortest period of the scene: of its springs,
    bounded below by ``2π/ω`` with ``ω² = max_i Σ_springs at i (2k or k) / m_i``
    (Gershgorin's bound on the largest eigenvalue of ``M⁻¹K``: a spring
    between two bodies counts twice, one to an anchor once), and of its
    harmonic forces, ``2π/ω``. Contacts are rigid and set no time scale.
    ``(inf, "")`` for a scene with neither.
    """
    scene = system.scene
    masses = {body.id: float(body.mass) for body in scene.bodies}
    load: dict[str, float] = {}
    for spring in scene.springs:
        share = 2.0 * spring.stiffness if spring.b is not None else spring.stiffness
        for end in (spring.a, spring.b):
            if end is not None:
                load[end] = load.get(end, 0.0) + share
    periods = [
        (2.0 * math.pi * math.sqrt(masses[body] / k), f"the period of the springs on {body}")
        for body, k in load.items()
        if body in masses and k > 0.0
    ]
    periods += [
        (2.0 * math.pi / force.omega, f"the period of the force on {force.body}")
        for force in scene.forces
        if force.omega > 0.0
    ]
    if not periods:
        return math.inf, ""
    period, name = min(periods)
    return STEP_FRACTION * period, f"{name}, {period:.6g} s"


class AccuracyMonitor:
    """What a time-stepping run reports of its own error (``accuracy`` event rows).

    Measured at every output sample: the largest penetration of any disk
    into a boundary or another disk (the deepest overlap of the pairs that
    overlap there, m) and the drift of the energy balance
    ``E_total + E_dissipated − E_input`` from its value at t = 0 (J). A row
    is written the first time either passes its bound (``PENETRATION_BOUND``
    of the smallest disk radius; ``DRIFT_BOUND`` of the energy scale, the
    largest ``E_kin + E_spring`` seen plus what was put in and dissipated)
    and at the end of the run. In the row, ``normal_impulse`` holds the
    penetration (m) and ``energy_change`` the drift (J); ``body`` and
    ``other`` name the deepest pair; the message says both in words.
    """

    def __init__(
        self,
        system: System,
        shared_pairs: Callable[[], tuple[np.ndarray, np.ndarray, float] | None] = lambda: None,
    ) -> None:
        self.system = system
        self._shared_pairs = shared_pairs
        radii = np.asarray(system.radii, dtype=float)
        self.penetration_bound = PENETRATION_BOUND * float(np.min(radii, initial=math.inf))
        self.penetration = 0.0
        self.penetration_t = 0.0
        self.pair = ("", "")
        self.drift = 0.0
        self.drift_t = 0.0
        self.scale = 0.0
        self._balance0: float | None = None
        self._index = (
            StaticIndex([f for _, f, _, _ in system.features]) if system.features else None
        )
        self._crossed: set[str] = set()
        self._measured_q: np.ndarray | None = None  # q of the last frame measured
        no_pairs = np.zeros((0, 2), dtype=int)
        self._kept_features: list = [no_pairs, np.zeros((0, 2)), 0.0]  # see _near
        self._kept_disks: list = [no_pairs, np.zeros((0, 2)), 0.0]
        # per kind: the pairs, their kernel table, and the centres (m) and valid gaps (m) of the
        # last frame measured with them
        self._last_gaps: dict[str, tuple] = {}
        self._radii = np.asarray(system.radii, dtype=float)
        self._feature_kind, *self._features = feature_tables(system.features)
        dofs = system.disk_dofs
        ix, iy = np.asarray(dofs.ix, dtype=np.int64), np.asarray(dofs.iy, dtype=np.int64)
        rail_y = np.where(iy < 0, system.centres(np.asarray(system.q0, dtype=float))[:, 1], 0.0)
        self._centre_tables = (ix, iy, rail_y)

    def measure(self, frames: list[Frame]) -> list[tuple[int, Event]]:
        """Take the frames' penetration and drift, in order: rows at first crossings of a bound,
        each with the index of its frame.

        The penetrations of all frames are found at once (:meth:`_deepest`); an
        impact's pre and post frames share ``q`` and count once.
        """
        Q = np.array([frame.q for frame in frames])
        previous = self._measured_q if self._measured_q is not None else np.full_like(Q[0], np.nan)
        # a frame whose q is the previous one's (NaN never is) has its depth already
        distinct = np.flatnonzero(np.any(Q != np.vstack((previous, Q[:-1])), axis=1))
        self._measured_q = Q[-1]
        depths = dict(zip(distinct.tolist(), self._deepest(Q[distinct]), strict=True))
        rows = []
        for k, frame in enumerate(frames):
            energy = frame.energy
            balance = energy.balance
            if self._balance0 is None:
                self._balance0 = balance
            self.scale = max(
                self.scale,
                energy.kinetic + energy.spring + abs(energy.input) + abs(energy.dissipated),
            )
            drift = balance - self._balance0
            if abs(drift) > abs(self.drift):
                self.drift, self.drift_t = drift, frame.t
            if k in depths:
                depth, pair = depths[k]
                if depth > self.penetration:
                    self.penetration, self.penetration_t, self.pair = depth, frame.t, pair
            crossed = []
            if self.penetration > self.penetration_bound and "penetration" not in self._crossed:
                crossed.append("penetration")
            if abs(self.drift) > DRIFT_BOUND * self.scale > 0.0 and "drift" not in self._crossed:
                crossed.append("drift")
            if crossed:
                self._crossed.update(crossed)
                rows.append((k, self.report(frame.t, f"{' and '.join(crossed)} past its bound: ")))
        return rows

    def _deepest(self, Q: np.ndarray) -> list[tuple[float, tuple[str, str]]]:
        """The deepest overlap (m) at each row of ``Q`` and its pair; ``(0, ("", ""))`` for none.

        Of the rows of each ``q``, disk–feature pairs first and then disk–disk pairs,
        each sorted, the first of the smallest valid gap. The rows are kept near
        pairs (:meth:`_near`), a superset of the overlapping pairs in the same
        order, measured for all frames they hold in one pass of the compiled
        :func:`solver.kernel_accuracy.deepest`.
        """
        system = self.system
        F = len(Q)
        best = np.full(F, math.inf)  # each frame's smallest valid gap so far, m
        names: list[tuple[str, str]] = [("", "")] * F
        if not system.n_disks or not F:
            return [(0.0, name) for name in names]
        C = np.empty((F, system.n_disks, 2))
        _FRAME_CENTRES(Q, *self._centre_tables, C)  # system.centres_many(Q), compiled
        D = C.shape[1]
        which = np.empty(F, dtype=np.int64)
        kinds = []
        if self._index is not None:
            kinds.append(("features", self._kept_features, self._search_features))
        if D > 1 and system.rigid_disk_pairs:  # a compliant body–body overlap is no penetration
            kinds.append(("disks", self._kept_disks, self._search_disks))
        for kind, kept, search in kinds:
            for frames, pairs in self._near(C, kept, search):
                if not len(pairs):
                    continue
                table, last_c, last_g, fresh = self._table(kind, pairs, D)
                deepest = which[frames]
                centres = np.ascontiguousarray(C[frames])  # one layout: one compiled signature
                _DEEPEST(
                    centres, *table, self._radii, *self._features, last_c, last_g, fresh,
                    best[frames], deepest,
                )  # fmt: skip
                for f in np.flatnonzero(deepest >= 0).tolist():
                    disk, other = pairs[deepest[f]].tolist()
                    other_id = system.disk_body_id(other) if kind == "disks" else None
                    name = other_id if other_id is not None else system.features[other][0]
                    names[frames.start + f] = (system.disk_body_id(disk), name)
        return [
            (float(-gap), name) if gap < 0.0 else (0.0, ("", ""))
            for gap, name in zip(best.tolist(), names, strict=True)
        ]

    def _table(
        self, kind: str, pairs: np.ndarray, D: int
    ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray, np.ndarray, bool]:
        """The kernel's table of ``pairs`` of ``kind`` (kinds, disks, others) and the centres
        and gaps of the last frame measured with them (``fresh``: none yet, these pairs are new).
        """
        last = self._last_gaps.get(kind)
        if last is not None and last[0] is pairs:
            return last[1], last[2], last[3], False
        first = np.ascontiguousarray(pairs[:, 0], dtype=np.int64)
        second = np.ascontiguousarray(pairs[:, 1], dtype=np.int64)
        codes = np.full(len(pairs), DISK) if kind == "disks" else self._feature_kind[second]
        table = (codes.astype(np.int64), first, second)
        self._last_gaps[kind] = (pairs, table, np.zeros((D, 2)), np.zeros(len(pairs)))
        return table, self._last_gaps[kind][2], self._last_gaps[kind][3], True

    def _near(
        self,
        C: np.ndarray,
        kept: list,
        search: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, float]],
    ) -> list[tuple[slice, np.ndarray]]:
        """Runs of the frames' centres ``C`` (F, D, 2) and sorted pairs that hold their overlaps.

        ``kept`` is ``[pairs, centres, margin]``: the pairs within ``margin`` (m) of
        each other at ``centres``, a superset of those overlapping at any centres
        where no disk has moved a quarter of the margin (:func:`_covered`); else
        ``search(C[f:])`` gives new ones for frame ``f`` on, kept.
        """
        out: list[tuple[slice, np.ndarray]] = []
        start = 0
        while start < len(C):
            covered = _covered(C[start:], kept[1], kept[2])
            if not covered[0]:
                kept[:] = search(C[start:])
                covered = _covered(C[start:], kept[1], kept[2])
            # at least the frame searched at (its centres may not be finite)
            n = len(covered) if covered.all() else max(int(np.argmin(covered)), 1)
            out.append((slice(start, start + n), kept[0]))
            start += n
        return out

    def _search_features(self, C: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """Disk–feature pairs within ``QUERY_MARGIN`` of the smallest radius at ``C[0]``; all
        pairs (margin ``inf``) in a scene of at most ``ALL_PAIRS``."""
        assert self._index is not None
        radii = np.asarray(self.system.radii, dtype=float)
        D, n = len(radii), len(self.system.features)
        if D * n <= ALL_PAIRS:
            every = np.column_stack((np.repeat(np.arange(D), n), np.tile(np.arange(n), D)))
            return every, C[0].copy(), math.inf
        margin = QUERY_MARGIN * float(np.min(radii))
        return self._index.query(C[0], radii, margin).pairs, C[0].copy(), margin

    def _search_disks(self, C: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """All disk pairs in a scene of at most ``ALL_PAIRS``, else the stepper's candidate
        disk pairs if they hold the overlaps at ``C[0]``, else a search there."""
        D = C.shape[1]
        if D * (D - 1) // 2 <= ALL_PAIRS:
            return np.array(list(itertools.combinations(range(D), 2))), C[0].copy(), math.inf
        shared = self._shared_pairs()
        if shared is not None and _covered(C[:1], shared[1], shared[2])[0]:
            return shared
        radii = np.asarray(self.system.radii, dtype=float)
        margin = QUERY_MARGIN * float(np.min(radii))
        return disk_pairs(C[0], radii, margin), C[0].copy(), margin

    def summary(self) -> str:
        """The run's accuracy in words (the status line and the rows' message)."""
        return (
            f"largest penetration {self.penetration:.3g} m at t = {self.penetration_t:.6g} s "
            f"(bound {self.penetration_bound:.3g} m), energy-balance drift "
            f"{self.drift:.3g} J at t = {self.drift_t:.6g} s "
            f"(bound {DRIFT_BOUND * self.scale:.3g} J)"
        )

    def report(self, t: float, why: str = "at the end: ") -> Event:
        """An ``accuracy`` row at ``t`` with the largest values so far."""
        return Event(
            t=t,
            type="accuracy",
            body=self.pair[0],
            other=self.pair[1],
            normal_impulse=self.penetration,
            energy_change=self.drift,
            message=f"time-stepping accuracy {why}{self.summary()}",
        )


def _covered(C: np.ndarray, centres: np.ndarray, margin: float) -> np.ndarray:
    """For each of the centres ``C`` (F, D, 2): pairs near within ``margin`` (m) at
    ``centres`` hold every pair that overlaps there.

    Each gap changes by at most the moves of its two disks: true while every
    disk has moved less than a quarter of the margin (half, with room for round-off;
    a move is at most √2 times its largest coordinate change). Compiled
    (:func:`solver.kernel_accuracy.covered`).
    """
    out = np.zeros(len(C), dtype=bool)
    if centres.shape == C.shape[1:]:
        _COVERED(np.ascontiguousarray(C), np.ascontiguousarray(centres, dtype=float), margin, out)
    return out
