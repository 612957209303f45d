"""Pseudo-arclength continuation of periodic orbits in one scene field (docs/ORBITS.md).

The unknowns are ``x = (z, p)``: the state at the section and the parameter. A
branch point solves ``P(z; p) − z = 0``; from a point ``x_k`` with unit tangent
``t_k`` (the null vector of ``[Φ − I, ∂P/∂p]``) the predictor is ``x_k + h t_k`` and
the corrector is Newton on

    P(z; p) − z = 0,    t_kᵀ (x − x_k) = h,

with the Jacobian ``[[Φ − I, ∂P/∂p], [t_kᵀ]]`` (``Φ`` the exact monodromy,
``∂P/∂p`` by a one-sided difference of the program's own map, once per point).
The parameter may thus turn back: a fold is passed. :func:`bisect_on_arclength`
locates a sign change of a test function (:mod:`solver.orbit_bifurcations`) between two points.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from solver.errors import InputError, SolverError
from solver.orbit_monodromy import Impact, monodromy
from solver.orbits import (
    PeriodicOrbit,
    converged,
    event_count,
    forcing_period,
    make_orbit,
    run_map,
    same_events,
    shifted_scene,
)
from solver.scene_paths import with_values

MAX_CORRECTOR_STEPS = 12
P_STEP = 1.5e-8
"""Relative step of the one-sided difference ∂P/∂p (about √ε: truncation and round-off alike)."""
P_STEP_CENTRAL = 6e-6
"""Relative step of the central difference ∂P/∂p (about ε^(1/3))."""
ARC_TOL = 1e-6
"""Arclength bracket at which :func:`bisect_on_arclength` may stop."""
SLOW_CONVERGENCE = 0.1
"""A corrector step that leaves more than this fraction of the residual renews ∂P/∂p at the
iterate by a central difference: the kept one-sided column's error, amplified near a branch
point where the extended system is nearly singular, makes Newton converge only linearly
(docs/ORBITS.md, period 8)."""
MAX_DAMPING = 8
"""Halvings of a Newton step whose map changed the orbit's events (:meth:`Branch._damped`)."""
MIN_STEP_FRACTION = 1.0 / 64.0
"""A failed corrector halves the step down to this fraction of the first; then the branch ends."""


@dataclass
class BranchPoint:
    """One point of a branch: parameter, orbit, unit tangent in ``(z, p)``."""

    p: float
    orbit: PeriodicOrbit
    tangent: np.ndarray


class Branch:
    """The stroboscopic map of ``scene`` in ``(z, p)``, ``p`` the field at ``path``."""

    def __init__(
        self, scene: Any, path: str, period: int = 1, t_section: float = 0.0, period_s=None
    ) -> None:
        self.scene, self.path, self.period = scene, path, period
        self.t_section, self.period_s = t_section, period_s

    def label(self, p: float) -> str:
        return f"{self.path} = {p!r}"

    def evaluate(self, z: np.ndarray, p: float) -> tuple[Any, np.ndarray, float]:
        """``(run, Φ, span)`` of the map from ``z`` at parameter ``p``."""
        try:
            scene = with_values(self.scene, {self.path: p})
            span = self.period * forcing_period(scene, self.period_s)
            base = shifted_scene(scene, self.t_section)
            run = run_map(base, z, span)
        except (SolverError, InputError) as error:
            # an iterate may put a bead inside a stop (the scene's check refuses the state) or
            # move the parameter out of its field's range: a failed step, which the
            # corrector's callers halve
            raise SolverError(f"periodic orbit at {self.label(p)}: {error}") from None
        return run, monodromy(base, z, run.impacts, span), span

    def p_derivative(
        self, z: np.ndarray, p: float, z_end: np.ndarray | None = None, central: bool = False
    ) -> np.ndarray:
        """``∂P/∂p`` by a one-sided difference, step ``P_STEP · max(1, |p|)``.

        ``z_end`` is ``P(z; p)`` when the caller has it (the corrector's own run): then
        the column costs one run of the map. ``central``: a central difference, step
        ``P_STEP_CENTRAL · max(1, |p|)`` (two runs), for a map curved so strongly in ``p``
        that the one-sided difference's truncation error ``h ∂²P/∂p² / 2`` matters (a
        period-8 orbit near a doubling: ``∂²P/∂p²`` about 2e4).
        """
        if central:
            h = P_STEP_CENTRAL * max(1.0, abs(p))
            ahead, behind = self.evaluate(z, p + h)[0].z_end, self.evaluate(z, p - h)[0].z_end
            return (ahead - behind) / (2.0 * h)
        h = P_STEP * max(1.0, abs(p))
        if z_end is None:
            z_end = self.evaluate(z, p)[0].z_end
        return (self.evaluate(z, p + h)[0].z_end - z_end) / h

    def jacobian(
        self, z: np.ndarray, p: float, J: np.ndarray, column: np.ndarray | None = None
    ) -> np.ndarray:
        """``[Φ − I, ∂P/∂p]``, shape (n, n + 1) (``column`` the ∂P/∂p to use, if known)."""
        n = len(z)
        if column is None:
            column = self.p_derivative(z, p)
        return np.column_stack([J - np.eye(n), column])

    def tangent(
        self,
        z: np.ndarray,
        p: float,
        J: np.ndarray,
        previous: np.ndarray,
        column: np.ndarray | None = None,
    ) -> np.ndarray:
        """Unit null vector of ``[Φ − I, ∂P/∂p]``, oriented along ``previous``."""
        A = self.jacobian(z, p, J, column)
        t = np.linalg.solve(np.vstack([A, previous]), np.r_[np.zeros(len(z)), 1.0])
        t /= np.linalg.norm(t)
        return t if t @ previous >= 0 else -t

    def correct(
        self,
        x0: np.ndarray,
        t0: np.ndarray,
        h: float,
        events: list[Impact] | None = None,
        renew: bool = False,
    ) -> BranchPoint:
        """The branch point at arclength ``h`` from ``x0`` along ``t0`` (Newton, bounded).

        ``events`` (the impacts of the orbit at ``x0``): an iterate whose map's events
        differ (:func:`~solver.orbits.same_events`: another count, order, contact or side)
        is halved (:meth:`_damped`), and a failure says when the impact count changed on
        the way (a grazing in free flight). ``renew``: a step
        that converges only linearly renews ∂P/∂p by a central difference
        (:data:`SLOW_CONVERGENCE`; next to a branch point).
        """
        n = len(x0) - 1
        x = x0 + h * t0
        residual = math.inf
        previous = None
        column = None  # ∂P/∂p, computed at the first iterate and kept (a chord in that column)
        last_residual = math.inf  # while Newton converges fast; renewed when it slows down
        for step in range(MAX_CORRECTOR_STEPS + 1):
            z, p = x[:n], float(x[n])
            run, J, span = self.evaluate(z, p)
            if events is not None and previous is not None:
                x, run, J, span = self._damped(x, previous, events, run, J, span)
                z, p = x[:n], float(x[n])
                if not same_events(run.impacts, events):
                    break  # no step along Newton's direction keeps the impacts
            g = run.z_end - z
            residual = float(np.max(np.abs(g)))
            same = events is None or same_events(run.impacts, events)  # step 0 is not damped
            if same and converged(residual, z) and abs(t0 @ (x - x0) - h) < 1e-12 * (1 + abs(h)):
                orbit = make_orbit(
                    z, self.t_section, self.period, span, J, run.impacts, step, residual
                )
                if column is not None:  # renewed here: ∂P/∂p at the predictor is stale
                    column = self.p_derivative(z, p, run.z_end)
                return BranchPoint(p, orbit, self.tangent(z, p, J, t0, column))
            if step == MAX_CORRECTOR_STEPS:
                break
            if column is None:
                column = self.p_derivative(z, p, run.z_end)
            elif renew and SLOW_CONVERGENCE * last_residual < residual < last_residual:
                column = self.p_derivative(z, p, central=True)
            last_residual = residual
            A = np.vstack([self.jacobian(z, p, J, column), t0])
            previous = x
            x = x + np.linalg.solve(A, -np.r_[g, t0 @ (x - x0) - h])
        changed = ""
        if events is not None and event_count(run.impacts) != event_count(events):
            changed = (
                f"; its last map had {event_count(run.impacts)} events, the orbit before "
                f"{event_count(events)} (a grazing in free flight?)"
            )
        elif events is not None and not same_events(run.impacts, events):
            changed = "; its last map's impacts were not the orbit's (another contact or side)"
        raise SolverError(
            f"the corrector at {self.label(float(x[n]))} did not converge in "
            f"{MAX_CORRECTOR_STEPS} steps (residual {residual:.3g}){changed}"
        )

    def _damped(self, x, previous, events, run, J, span):
        """Halve a Newton step (up to ``MAX_DAMPING`` times) whose map changed the events.

        Near a grazing the map is only piecewise smooth: a full Newton step may land where
        an impact is missing (or an extra one appears) and the step is then meaningless.
        A step may also land on another orbit with as many impacts, e.g. the bead behind a
        stop hitting it from the far side: no continuation of this orbit either
        (:func:`~solver.orbits.same_events`).
        """
        n = len(x) - 1
        for _ in range(MAX_DAMPING):
            if same_events(run.impacts, events):
                break
            x = 0.5 * (previous + x)
            run, J, span = self.evaluate(x[:n], float(x[n]))
        return x, run, J, span

    def orbit_at(self, p: float, z: np.ndarray, events: list[Impact]) -> PeriodicOrbit:
        """The orbit with the impacts ``events`` (another orbit's, at another parameter) at
        the fixed parameter ``p``, Newton from ``z``.

        The orbit's impacts must be the same events (:func:`~solver.orbits.same_events`:
        count, order, contacts, sides); Newton steps that change them are halved
        (:meth:`_damped`).

        Raises
        ------
        SolverError
            No such orbit found in ``MAX_CORRECTOR_STEPS`` steps (or a run failed).
        """
        n = len(z)
        x = np.r_[z, p]
        previous = None
        extra = False
        n_impacts = event_count(events)
        for step in range(MAX_CORRECTOR_STEPS + 1):
            run, J, span = self.evaluate(x[:n], p)
            extra = extra or event_count(run.impacts) > n_impacts
            if previous is not None:
                x, run, J, span = self._damped(x, previous, events, run, J, span)
                if not same_events(run.impacts, events):
                    break
            z = x[:n]
            g = run.z_end - z
            residual = float(np.max(np.abs(g)))
            if same_events(run.impacts, events) and converged(residual, z):
                impacts = run.impacts
                return make_orbit(z, self.t_section, self.period, span, J, impacts, step, residual)
            if step == MAX_CORRECTOR_STEPS:
                break
            try:
                dz = np.linalg.solve(J - np.eye(n), -g)
            except np.linalg.LinAlgError:
                break
            previous, x = x, np.r_[z + dz, p]
        error = SolverError(f"no orbit with {n_impacts} impacts found at {self.label(p)}")
        error.extra_impact = extra  # a step met an extra impact (a free flight grazing?)
        raise error

    def doubled_start(self, at: BranchPoint, h: float) -> tuple[BranchPoint, BranchPoint]:
        """Branch switching at a period doubling: ``self`` is the doubled branch (period 2K).

        ``at`` is the located period doubling of the period-K branch. There the 2K map
        has a multiplier +1 (−1 squared) and the doubled orbits bifurcate from the
        period-K one along ``v``, the eigenvector of the multiplier −1, with the parameter
        changing only to second order: the first doubled orbit is the corrector's point
        at arclength ``h`` (halved while it fails, down to ``MIN_STEP_FRACTION``) along
        the tangent ``(v, 0)``, the predictor ``z + h v``.

        Returns the junction (the period-doubling orbit as a period-2K orbit) and the
        first doubled orbit. That orbit is taken before the doubled branch's own first
        doubling when a step allows it: at the junction ``det(Φ + I) > 0`` (its
        multipliers are the squares of the period-K ones, +1 and less), so a first orbit
        with ``det(Φ + I) < 0`` has jumped over the next doubling (which the branch's watch
        would then miss) and the step is halved (down to ``MIN_STEP_FRACTION``; the
        largest such orbit is kept when no step stays before it).

        Raises
        ------
        SolverError
            No doubled orbit found (the corrector fell back on the period-K orbit, or failed).
        """
        mu, vectors = np.linalg.eig(at.orbit.monodromy)
        j = int(np.argmin(np.abs(mu + 1.0)))
        v = np.real(vectors[:, j])
        t0 = np.r_[v / np.linalg.norm(v), 0.0]
        x0 = np.r_[at.orbit.state, at.p]
        run, J, span = self.evaluate(at.orbit.state, at.p)
        residual = float(np.max(np.abs(run.z_end - at.orbit.state)))
        orbit = make_orbit(
            at.orbit.state, self.t_section, self.period, span, J, run.impacts, 0, residual
        )
        junction = BranchPoint(at.p, orbit, t0)
        single = Branch(self.scene, self.path, self.period // 2, self.t_section, self.period_s)
        step, problem, past = h, "", None
        eye = np.eye(len(at.orbit.state))
        while step >= h * MIN_STEP_FRACTION:
            try:
                point = self.correct(x0, t0, step, renew=True)
            except SolverError as error:
                problem = str(error)
            else:
                half = single.evaluate(point.orbit.state, point.p)[0].z_end - point.orbit.state
                if float(np.max(np.abs(half))) <= 1e-3 * step:
                    problem = (
                        f"the corrector at {self.label(point.p)} found the period-K orbit again"
                    )
                elif np.linalg.det(point.orbit.monodromy + eye) > 0.0:
                    return junction, point
                else:  # past the doubled branch's own doubling: det(Φ + I) > 0 at the junction
                    past = past or point
            step /= 2
        if past is not None:
            return junction, past
        raise SolverError(
            f"no period-{self.period} orbit found next to the period doubling at "
            f"{self.label(at.p)}: {problem}"
        )

    def first(self, orbit: PeriodicOrbit, p: float, direction: float) -> BranchPoint:
        """The branch point of a found orbit; its tangent's ``p`` has the sign of ``direction``."""
        n = len(orbit.state)
        guess = np.zeros(n + 1)
        guess[n] = direction
        return BranchPoint(p, orbit, self.tangent(orbit.state, p, orbit.monodromy, guess))

    def points(
        self, start: BranchPoint, h: float, stop: float, max_points: int
    ) -> Iterator[BranchPoint]:
        """Points after ``start``, ``h`` apart, until ``p`` passes ``stop`` or ``max_points``.

        A failed corrector halves the step (down to ``MIN_STEP_FRACTION``); then the
        SolverError propagates.
        """
        point, step = start, h
        direction = math.copysign(1.0, stop - start.p) if stop != start.p else 1.0
        for _ in range(max_points - 1):
            x0 = np.r_[point.orbit.state, point.p]
            while True:
                try:
                    new = self.correct(x0, point.tangent, step, point.orbit.impacts)
                    break
                except SolverError:
                    if step / 2 < h * MIN_STEP_FRACTION:
                        raise
                    step /= 2
            yield new
            point = new
            step = min(h, 2 * step)
            if (point.p - stop) * direction >= 0:
                return


def bisect_on_arclength(
    branch: Branch,
    a: BranchPoint,
    h: float,
    sign_at_a: Callable[[BranchPoint], bool],
    tol: float,
) -> BranchPoint:
    """Halve the arclength bracket ``[0, h]`` from ``a`` until its ends' ``p`` differ by ≤ ``tol``.

    and the bracket is at most ``ARC_TOL`` long: at a fold ``p`` is flat in the
    arclength (its error goes like the bracket's square), so ``p`` alone would stop early.

    ``sign_at_a(point)`` says whether the test function at ``point`` has ``a``'s sign.
    """
    x0, t0 = np.r_[a.orbit.state, a.p], a.tangent
    lo, hi = 0.0, h
    best = a
    p_hi = None
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        point = branch.correct(x0, t0, mid)
        if sign_at_a(point):
            lo = mid
        else:
            hi = mid
        best = point
        if p_hi is not None and abs(point.p - p_hi) <= tol and hi - lo <= ARC_TOL:
            break
        p_hi = point.p
        if hi - lo <= 1e-15 * (1 + h):
            break
    return best


def _has_other_events(scene: Any) -> bool:
    """The scene can have events besides impacts (compliant stops, plastic impacts)."""
    soft = scene.contact.compliance is not None or any(
        b.compliance is not None for b in scene.boundaries
    )
    return soft or scene.contact.restitution == 0.0
