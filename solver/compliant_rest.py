"""When bodies pressing compliant floors are at rest to round-off, and the rest of a run.

A disk that presses one straight linear (p = 1) damped compliant feature
and moves only along its normal ``n`` is a damped oscillator there: with
``x = g − g_eq`` its gap's distance from the static one and ``u = u_n = ẋ``,

    ẍ = −ω² x − (c/m) ẋ,     ω² = k/m,

so ``x² + u²/ω²`` never grows (its rate is ``−2 (c/m) u²/ω² ≤ 0``): the gap
stays within ``A = √(x² + u²/ω²)`` of ``g_eq`` for the rest of the run, and
``x`` is read off the state, ``x = −(n·a + (c/m) u)/ω²``, ``a`` the centre's
acceleration. When every disk of a scene whose every contact is compliant
is such a disk, its motion along the feature exactly 0 (no slip speed, no
spin, no tangential or angular acceleration: a level floor, no friction
force), and ``A`` is below :data:`REST_ULPS` units of round-off of the
coordinates, the motion to the run's end is that state to within ``A``: its
force stays above ``k (δ_eq − A) − c ω A > 0`` (no release) and every other
pair stays apart by more than ``2 A`` (no touch). The event-driven stepper
then makes the rest of the run one piece at the static state, each centre
moved by ``−x n`` to its static gap and the velocities 0
(:meth:`solver.compliant_events.CompliantEvents.phase_pieces`): the motion
converges to it, the positions and forces it reports differ from the
integrated motion's by at most ``A``, and the oscillation's energy it drops
(``½ v·M v + ½ k x²``, ``½ k A²`` per disk) is counted as dissipated, so
that the energy balance holds as before.
"""

from __future__ import annotations

import math

import numpy as np

from solver.compliance import Apart, CompliantSet
from solver.geometry import Segment

REST_ULPS = 8.0
"""Largest swing ``A`` (m) of a resting disk, in units of ``ε·X`` (X its coordinates' size)."""


def can_rest(compliance: CompliantSet) -> bool:
    """Whether the phase's pressing set may rest: every disk presses one linear damped segment.

    And the scene has no springs, no forcing and no rigid contact (every
    boundary compliant, one disk or compliant disk–disk contacts), so
    that the applied force is the whole force.
    """
    system, engaged = compliance.system, compliance.engaged
    if system._springs or system._forcing or system._features:
        return False
    if (system.n_disks > 1 and system.rigid_disk_pairs) or not engaged:
        return False
    disks = [k for k, _ in engaged]
    if sorted(disks) != list(range(system.n_disks)):  # each disk presses exactly one
        return False
    base = len(compliance.features)
    return all(
        f < base
        and isinstance(compliance.features[f][1], Segment)
        and compliance._p[f] == 1.0
        and compliance._c[f] > 0.0
        for _, f in engaged
    )


def rest_row(compliance: CompliantSet, t: float, row: np.ndarray) -> np.ndarray | None:
    """The static row ``(q_eq, 0, work)`` the run keeps to its end if ``row`` at ``t`` (s) rests.

    ``row`` is ``(q, v, work)``; the phase's pressing set (``engaged``) must
    pass :func:`can_rest`. The oscillation's energy dropped is added to the
    damping work. None when the state is not at rest to round-off.
    """
    system = compliance.system
    N = system.N
    q, v = row[:N], row[N : 2 * N]
    a = system.applied_force(t, q, v) / system.M_diag
    engaged = compliance.engaged or frozenset()
    swing = lost = 0.0
    apart: list[float] = []
    rest = row.copy()
    for k, f, dc in compliance._pairs(q, v):
        if (k, f) not in engaged:
            if not isinstance(dc, Apart):
                return None
            apart.append(dc.g)
            continue
        n, ix, iy = dc.n, system._disk_ix[k], system._disk_iy[k]
        if iy is None:  # a bead moves along its rail: the normal must be the rail's
            if n[1] != 0.0:
                return None
            a_n = n[0] * a[ix]
        else:
            phi = int(system._iphi[k])
            if v[phi] != 0.0 or a[phi] != 0.0 or dc.u_t != 0.0:
                return None
            if dc.t[0] * a[ix] + dc.t[1] * a[iy] != 0.0:
                return None
            a_n = n[0] * a[ix] + n[1] * a[iy]
        m = float(system.M_diag[ix])
        stiff, damp = compliance._k[f], compliance._c[f]
        omega = math.sqrt(stiff / m)
        x = -(a_n + damp / m * dc.u_n) / (omega * omega)
        amplitude = math.hypot(x, dc.u_n / omega)
        centre = np.abs(system.centres(q)[k]).max()
        size = max(float(centre), float(np.abs(dc.point).max()))
        if not amplitude <= REST_ULPS * np.finfo(float).eps * size:
            return None
        if not stiff * (x - dc.g - amplitude) - damp * omega * amplitude > 0.0:  # δ_eq = x − g
            return None
        swing = max(swing, amplitude)
        rest[ix] -= x * n[0]  # the centre at its static gap g − x
        if iy is not None:
            rest[iy] -= x * n[1]
        lost += 0.5 * stiff * x * x
    if len(apart) + len(engaged) != len(compliance._pairs(q, v)):
        return None  # a pressing pair without a contact (its disk off the segment's ends)
    if any(not g > 2.0 * swing for g in apart):
        return None
    rest[N : 2 * N] = 0.0
    rest[2 * N + 1] += lost + 0.5 * float(system.M_diag @ (v * v))
    return rest
