"""The tables of a scene that :func:`solver.timestep_kernels.quiet_steps` steps.

Which scenes the compiled Moreau–Jean loop can step (disks only, constant
applied forces) and the scene as flat arrays for it (:class:`KernelScene`,
made by :func:`kernel_scene`): masses, the disks' coordinates, the pairs and
the boundary features with their contact laws. Also the loop's codes (kinds
of pair, outcomes, the report's columns) and :func:`jitable`, which marks the
loop's helpers so that numba compiles them into it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from solver.geometry import Arc, Segment, Vertex

if TYPE_CHECKING:
    from solver.system import System

COMPILED = importlib.util.find_spec("numba") is not None
"""True when numba is installed: :func:`compiled_quiet_steps` is then compiled."""

if COMPILED:
    from numba.extending import register_jitable as jitable
else:

    def jitable(function):
        """Plain Python: the function itself (numba is not installed)."""
        return function


KERNEL_PAIRS = 64
"""Most disk–feature plus disk–disk pairs for which a scene is stepped by the loop (it
looks at every pair at every step)."""

SEGMENT, VERTEX, ARC, DISK = 0, 1, 2, 3
"""Kinds of a pair in the loop's tables."""

DONE, NEEDS_STEPPER, IMPACT, CUT = 0, 1, 2, 3
"""Outcomes of :func:`quiet_steps`: all steps made; the next step is the stepper's; the
last step made had an impact (its events and frames are the stepper's to write); a pair
closes within the next step (the stepper cuts it at the closing instant)."""

REPORT_COLUMNS = 12
"""Columns of the report of a step's closed contacts: ``Λ_n``, ``Λ_t`` (N·s), ``u_n`` at
the start and end, ``u_t`` at the start and end (m/s), work of the impulses (J), contact
point (2, m), normal (2), friction coefficient."""


@dataclass(frozen=True, eq=False)
class KernelScene:
    """A scene as the loop's tables (see :func:`kernel_scene`).

    Attributes
    ----------
    accel : numpy.ndarray, shape (N,)
        ``M⁻¹ f``, the constant applied acceleration (m/s², rad/s²).
    m_inv : numpy.ndarray, shape (N,)
        Inverse masses and inertias (1/kg, 1/(kg·m²)).
    ix, iy, iphi : numpy.ndarray of int, shape (D,)
        Coordinates of each disk in ``q`` (−1: none, a bead's ``y`` and ``phi``).
    radius, rail_y : numpy.ndarray, shape (D,)
        Radii and the beads' rail heights (m).
    pair_kind, pair_i, pair_j : numpy.ndarray of int, shape (P,)
        With ``all_pairs``, every pair: its kind (``SEGMENT`` … ``DISK``),
        its disk and the other disk (``DISK``) or feature index; disk–feature
        pairs first, by disk then feature, then disk pairs ``i < j`` (the
        stepper's order). Empty otherwise: the stepper's candidates are used.
    all_pairs : bool
        The scene has at most ``KERNEL_PAIRS`` pairs, all looked at each step.
    feature_kind : numpy.ndarray of int, shape (F,)
        Kind of each feature.
    feature_a, feature_b : numpy.ndarray, shape (F, 2)
        Segment ends; a vertex's or an arc centre's point in ``feature_a`` (m).
    feature_arc : numpy.ndarray, shape (F, 3)
        Arc radius (m), start and span (rad).
    feature_restitution, feature_friction : numpy.ndarray, shape (F,)
        Contact laws against each feature.
    disk_restitution, disk_friction : float
        Contact law between disks.
    key_stride : int
        Keys of pairs as the stepper makes them: ``i · key_stride + feature``,
        or ``+ n_features + j`` for a disk pair.
    """

    accel: np.ndarray
    m_inv: np.ndarray
    ix: np.ndarray
    iy: np.ndarray
    iphi: np.ndarray
    radius: np.ndarray
    rail_y: np.ndarray
    pair_kind: np.ndarray
    pair_i: np.ndarray
    pair_j: np.ndarray
    all_pairs: bool
    feature_kind: np.ndarray
    feature_a: np.ndarray
    feature_b: np.ndarray
    feature_arc: np.ndarray
    feature_restitution: np.ndarray
    feature_friction: np.ndarray
    disk_restitution: float
    disk_friction: float
    key_stride: int


def feature_tables(
    features: Sequence[tuple[str, Segment | Vertex | Arc, float, float]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The boundary features ``(contact id, feature, e, μ)`` as the loops' tables.

    ``(kind, a, b, arc)`` as :class:`KernelScene`'s ``feature_kind``,
    ``feature_a``, ``feature_b`` and ``feature_arc``.
    """
    F = len(features)
    kinds = {Segment: SEGMENT, Vertex: VERTEX, Arc: ARC}
    feature_a, feature_b, feature_arc = np.zeros((F, 2)), np.zeros((F, 2)), np.zeros((F, 3))
    feature_kind = np.zeros(F, dtype=np.int64)
    for k, (_, feature, _, _) in enumerate(features):
        feature_kind[k] = kinds[type(feature)]
        if isinstance(feature, Segment):
            feature_a[k], feature_b[k] = feature.a, feature.b
        elif isinstance(feature, Vertex):
            feature_a[k] = feature.p
        else:
            feature_a[k] = feature.center
            feature_arc[k] = (feature.radius, feature.start, feature.span)
    return feature_kind, feature_a, feature_b, feature_arc


def kernel_scene(system: System) -> KernelScene | None:
    """The loop's tables of ``system``, or ``None`` when the loop cannot step it.

    It can when every body is a disk (wheel or bead) and the applied force
    is the constant weight (no springs, no forcing). With at most
    ``KERNEL_PAIRS`` disk–feature plus disk–disk pairs the loop looks at
    all of them; otherwise at the stepper's candidate pairs.
    """
    D = system.n_disks
    features = system.features
    disk_dofs = system.disk_dofs
    n_disk_dofs = int(np.sum(disk_dofs.iy >= 0)) * 3 + int(np.sum(disk_dofs.iy < 0))
    if D == 0 or system.has_springs or system.has_forcing or n_disk_dofs != system.N:
        return None
    all_pairs = D * len(features) + D * (D - 1) // 2 <= KERNEL_PAIRS
    F = len(features)
    feature_kind, feature_a, feature_b, feature_arc = feature_tables(features)
    kind, first, second = [], [], []
    for i in range(D if all_pairs else 0):
        for f in range(F):
            kind.append(int(feature_kind[f]))
            first.append(i)
            second.append(f)
    for i in range(D if all_pairs else 0):
        for j in range(i + 1, D):
            kind.append(DISK)
            first.append(i)
            second.append(j)
    m_inv = 1.0 / np.asarray(system.M_diag, dtype=float)
    rail_y = system.centres(system.q0)[:, 1]
    return KernelScene(
        accel=m_inv * system.applied_force(0.0, system.q0, system.v0),
        m_inv=m_inv,
        ix=np.asarray(disk_dofs.ix, dtype=np.int64),
        iy=np.asarray(disk_dofs.iy, dtype=np.int64),
        iphi=np.asarray(disk_dofs.iphi, dtype=np.int64),
        radius=np.asarray(system.radii, dtype=float),
        rail_y=np.where(disk_dofs.iy < 0, rail_y, 0.0),
        pair_kind=np.array(kind, dtype=np.int64),
        pair_i=np.array(first, dtype=np.int64),
        pair_j=np.array(second, dtype=np.int64),
        all_pairs=all_pairs,
        feature_kind=feature_kind,
        feature_a=feature_a,
        feature_b=feature_b,
        feature_arc=feature_arc,
        feature_restitution=np.array([e for _, _, e, _ in features], dtype=float),
        feature_friction=np.array([mu for _, _, _, mu in features], dtype=float),
        disk_restitution=float(system.disk_restitution),
        disk_friction=float(system.disk_friction),
        key_stride=F + D,
    )
