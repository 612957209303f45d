"""Candidate contact pairs of the event-driven stepper: the broad phase kept up to date.

:class:`CandidateSearch` keeps every pair that can touch while no disk
moves a quarter of the broad-phase margin from where its pairs were last
searched, searches again only the disks that moved an eighth of it, and
gives the watched set: the candidates that are not active.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from solver.gap_set import GapSet
from solver.geometry import bounding_box
from solver.motion_state import MotionState, Setup


def disk_box(centres: np.ndarray, radius: float) -> tuple[float, float, float, float]:
    """Box ``(xmin, ymin, xmax, ymax)`` (m) of the disk ``centres`` (K, 2) grown by ``radius`` (m).

    One disk in floats: its centre's coordinates are the columns' minima
    and maxima, and a float's sum is the array's.
    """
    if len(centres) == 1:
        ((x, y),) = centres.tolist()
        return x - radius, y - radius, x + radius, y + radius
    (lx, ly), (hx, hy) = (
        (centres.min(axis=0) - radius).tolist(),
        (centres.max(axis=0) + radius).tolist(),
    )
    return lx, ly, hx, hy


class CandidateSearch:
    """The candidate contact pairs of the motion (a part of the event-driven stepper).

    Owns the broad-phase margin, where each disk's pairs were last searched,
    the candidate set and the watched (inactive) subset.
    """

    def __init__(self, setup: Setup, motion: MotionState) -> None:
        self.s, self.m = setup, motion
        self._covered: tuple | None = None
        self.margin = self.choose_margin()
        self._pair_set = setup.no_gaps
        self.pairs_found_at: np.ndarray | None = None
        self._watched: tuple[Any, ...] = (None, None, None)

    def choose_margin(self) -> float:
        """Candidate margin (m): as wide as the scene while that keeps the pair list short.

        A wider margin means fewer broad-phase searches and longer phases; a
        crowded scene (many disks close together) falls back to twice the
        largest radius.
        """
        radii = self.s.kin.radii
        if not len(radii):
            return 1.0
        r_max = float(radii[0]) if len(radii) == 1 else float(radii.max())
        lx, ly, hx, hy = disk_box(self.s.system.centres(self.m.q), r_max)
        # in floats, as np.minimum and np.maximum choose (a scene has few features)
        for _, feature, _, _ in self.s.kin.feature_list:
            x0, y0, x1, y1 = map(float, bounding_box(feature))
            lx, ly = lx if lx < x0 else x0, ly if ly < y0 else y0
            hx, hy = hx if hx > x1 else x1, hy if hy > y1 else y1
        widest = float(np.hypot(hx - lx, hy - ly))
        margin = 2.0 * r_max
        n, limit = len(radii), 4 * len(radii) + 16
        if n * len(self.s.kin.feature_list) + n * (n - 1) // 2 <= limit:
            # no margin finds more pairs than the scene has: the search below reaches widest
            margin = max(margin, widest)
        if margin < widest:
            everything = np.arange(n)
            # grow from the narrowest margin: counting pairs costs as many pairs as are found
            while margin < widest:
                wider = min(2.0 * margin, widest)
                if self.s.kin.count_candidates(self.m.q, wider, everything) > limit:
                    break
                margin = wider
        # a disk whose centre is in the box is within the margin of every feature
        self._covered = ((lx, ly), (hx, hy)) if margin >= widest else None
        return margin

    def displacements(self) -> np.ndarray:
        """How far (m) each disk centre is from where its pairs were last searched."""
        d = self.s.system.centres(self.m.q) - self.pairs_found_at
        return np.hypot(d[:, 0], d[:, 1])

    def moved(self) -> float:
        """Largest displacement (m) of a disk centre since its pairs were searched."""
        return float(self.displacements().max(initial=0.0))

    def all_candidates(self) -> GapSet:
        """Every pair that can touch while no disk moves ``margin/4`` (m) from its search point.

        A pair missing from the list had a gap above ``margin`` when one of
        its disks was last searched; since then that disk moved less than
        ``margin/4`` and the other less than ``margin/2``, so the gap is
        still positive. Disks that have moved ``margin/8`` are searched again
        (only those), so a phase always has at least that much room.
        """
        if self.pairs_found_at is None:
            self.pairs_found_at = self.s.system.centres(self.m.q)
            disks = np.arange(self.s.system.n_disks)
            if len(disks):  # the first search: no pairs held to keep or compare
                found = self.s.kin.candidates(self.m.q, self.margin, disks)
                self._pair_set = GapSet(self.s.kin, found)
            return self._pair_set
        elif self.s.system.n_disks == 1:  # one disk: its displacement on floats
            ((x, y),), ((x0, y0),) = (
                self.s.system.centres(self.m.q).tolist(),
                self.pairs_found_at.tolist(),
            )
            if not float(np.hypot(x - x0, y - y0)) > 0.125 * self.margin:
                return self._pair_set
            if self.search_finds_the_same((x, y)):
                self.pairs_found_at = np.array([[x, y]])
                return self._pair_set
            disks = np.zeros(1, dtype=int)
        else:
            # (search_finds_the_same holds only for one disk)
            disks = (self.displacements() > 0.125 * self.margin).nonzero()[0]
        if len(disks):
            old = self._pair_set
            moved = np.zeros(self.s.system.n_disks + 1, dtype=bool)
            moved[disks] = True
            keep = ~(moved[old.first] | moved[old.second])
            # index arrays: a ContactPair is made only for a pair that is read
            pairs = old.pairs.select(keep) + self.s.kin.candidates(self.m.q, self.margin, disks)
            if pairs != old.pairs:  # the same rows: the same pairs
                self._pair_set = GapSet(self.s.kin, pairs)
            self.pairs_found_at[disks] = self.s.system.centres(self.m.q)[disks]
        return self._pair_set

    def search_finds_the_same(self, centre: tuple[float, float] | None = None) -> bool:
        """Whether searching the pairs again would give the pairs held, in their order.

        One disk (its pairs are all the pairs, found in one sorted search),
        every pair a candidate, a margin at least the diagonal of the box of
        the scene's features and first disk positions, and the disk's centre
        (``centre``, m, when the caller has it) still in that box: the search
        reports every feature again.
        """
        covered = getattr(self, "_covered", None)
        if covered is None or self.s.system.n_disks != 1 or not self.pairs_complete():
            return False
        x, y = centre if centre is not None else self.s.system.centres(self.m.q)[0].tolist()
        (lo_x, lo_y), (hi_x, hi_y) = covered
        return lo_x <= x <= hi_x and lo_y <= y <= hi_y

    def pairs_complete(self) -> bool:
        """Whether the candidate pairs are every pair of the scene: no travel can add one.

        Each disk with each feature and each other disk, every pair once (the
        pairs are unique objects). A phase then needs no reach: its disks may
        go anywhere without leaving the candidates' cover.
        """
        pairs = self._pair_set.pairs
        known = getattr(self, "_complete_pairs", None)
        if known is not None and known[0] is pairs:
            return known[1]  # the same candidate set as the last phase's
        n = self.s.system.n_disks
        features = len(self.s.kin.feature_list)
        every = n * features + n * (n - 1) // 2
        complete = len(pairs) == every and len(set(pairs.codes().tolist())) == every
        self._complete_pairs = (pairs, complete)
        return complete

    def candidates(self) -> GapSet:
        """The candidate pairs that are not active: their gaps are watched."""
        every = self.all_candidates()
        if not self.m.active:
            return every
        active = tuple(self.m.active)
        if self._watched[:2] != (every, active):
            active_codes = {self.s.kin.pair_code(pair) for pair, _ in self.m.active.values()}
            # the rows kept, as increasing indices; the watched set takes the float rows
            # the candidates have made (GapSet.subset)
            kept = [
                n for n, code in enumerate(every.pairs.codes().tolist()) if code not in active_codes
            ]
            watched = every.subset(kept) if kept else self.s.no_gaps
            self._watched = (every, active, watched)
        return self._watched[2]
