"""Linear models of bead scenes: ``M q̈ + C q̇ + K q = f0 + Σ a sin(ω t + φ)`` of a System.

:func:`linear_bead_model` reads a bead-only :class:`solver.system.System` near
``q`` as a :class:`LinearBeadModel` (one per orientation of its rest-length
springs, kept with the system); the model's :meth:`LinearBeadModel.flow`
integrates it in closed form (:class:`solver.linear_flow.LinearFlow`, or the
modal form of :mod:`solver.modal_flow` from ``MODAL_MIN_BEADS`` beads on).
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from solver.linear_flow import Harmonic, LinearFlow

MODAL_MIN_BEADS = 8
"""Beads from which an unconstrained bead model's flow is modal (:mod:`solver.modal_flow`).

Below, the general flow's compiled stop phases
(:meth:`solver.linear_flow.LinearFlow.coordinate_maps`) serve the small scenes."""

_SIGNS = np.array([1.0, -1.0])

BEAD_MODELS_KEPT = 8
"""Bead models kept per system, one per orientation of its rest-length springs."""

_BEAD_MODELS: weakref.WeakKeyDictionary[Any, dict[bytes, LinearBeadModel]] = (
    weakref.WeakKeyDictionary()
)


def _unit(n: int, i: int) -> np.ndarray:
    """Row ``i`` of the identity of size ``n`` (without making the identity)."""
    row = np.zeros(n)
    row[i] = 1.0
    return row


@dataclass(frozen=True)
class LinearBeadModel:
    """The linear dynamics of a bead scene (see :func:`linear_bead_model`).

    Attributes
    ----------
    M, C, K : numpy.ndarray, shape (N, N)
        Mass (kg), damping (N·s/m) and stiffness (N/m) matrices.
    f0 : numpy.ndarray, shape (N,)
        Constant force (N): gravity along the rails and rest-length terms.
    harmonics : tuple of Harmonic
        The scene's harmonic forces (rail components).
    separation_rows : numpy.ndarray, shape (S, N)
    separation_offsets : numpy.ndarray, shape (S,)
        One row per pair of ends joined by springs of nonzero rest length (springs
        between the same ends share it): the model holds while
        ``separation_rows @ q − separation_offsets > 0`` (the spring's ends
        keep their order along the rail); a zero is an event that ends the phase.
    """

    M: np.ndarray
    C: np.ndarray
    K: np.ndarray
    f0: np.ndarray
    harmonics: tuple[Harmonic, ...]
    separation_rows: np.ndarray
    separation_offsets: np.ndarray

    def flow(self, A: ArrayLike | None = None, b: ArrayLike | None = None) -> Any:
        """The flow of this model with persistent constraints ``A q = b``.

        Without constraints, from ``MODAL_MIN_BEADS`` beads on and with
        proportional damping, the modal form of :mod:`solver.modal_flow`
        (O(N) per gap value); with constraints, from ``MODAL_MIN_BEADS`` beads
        on, the beads not joined to them move in a flow of their own
        (:class:`solver.modal_flow.SplitFlow`); a :class:`LinearFlow` otherwise.
        """
        if len(self.f0) >= MODAL_MIN_BEADS:
            from solver.modal_flow import modal_flow, split_flow

            if A is None or not np.size(A):
                flow = modal_flow(self.M, self.C, self.K, self.f0, self.harmonics)
            else:
                A = np.asarray(A, dtype=float).reshape(-1, len(self.f0))
                b = np.zeros(len(A)) if b is None else np.asarray(b, dtype=float)
                flow = split_flow(self, A, b)
            if flow is not None:
                return flow
        return LinearFlow(self.M, self.C, self.K, self.f0, self.harmonics, A, b)

    def separations(self, q: ArrayLike) -> np.ndarray:
        """Signed end-to-end distances (m) of the rest-length springs; rows for rows of ``q``."""
        return np.asarray(q, dtype=float) @ self.separation_rows.T - self.separation_offsets


def linear_bead_model(system: Any, q: ArrayLike) -> LinearBeadModel | None:
    """The linear model of a bead-only :class:`solver.system.System` near ``q``, or None.

    A bead ``x`` on the rail ``y = rail_y`` feels only the x components of its
    forces. A spring of zero rest length pulls with ``−k Δx − c Δẋ`` whatever
    the positions of its ends; a spring of rest length ``L0`` whose ends lie
    on one horizontal line (two beads on the same rail, or a bead and an
    anchor at its rail's height) pulls with ``−k (Δx − s L0) − c Δẋ``, where
    ``s = sign(Δx)`` is fixed by ``q`` for the phase. Any other scene (wheels,
    axle carts, a rest-length spring leaving the rail line, or one whose ends
    coincide in ``q``) is not linear.

    Parameters
    ----------
    system : solver.system.System
        The compiled scene.
    q : array_like, shape (N,)
        Current coordinates (m); they fix the sign ``s`` of each rest-length spring.

    Returns
    -------
    LinearBeadModel or None
        ``M q̈ + C q̇ + K q = f0 + Σ harmonics`` equals ``system.applied_force``
        as long as ``model.separations(q) > 0``; None when the scene is not linear.
    """
    if getattr(system, "compliance", None) is not None:  # solver.compliance_flow adds it
        return None
    return rigid_bead_model(system, q)


def rigid_bead_model(system: Any, q: ArrayLike) -> LinearBeadModel | None:
    """:func:`linear_bead_model` of the scene's beads, springs and forcing alone.

    The forces of compliant contacts are left out: while a set of them
    presses, :func:`solver.compliance_flow.compliant_bead_model` adds theirs.
    """
    disks = system._disks
    if system.n_disks != system.N or any(d.iy is not None for d in disks):
        return None
    q = np.asarray(q, dtype=float)
    # the model depends on q only through the orientation of the rest-length springs:
    # one model per orientation, kept with the system (N × N matrices, made once)
    signs = []
    for s in system._springs:
        if s.rest_length == 0.0:
            continue
        a = disks[s.i]
        b = disks[s.j] if s.j is not None else None
        other_y = s.anchor[1] if b is None else b.rail_y
        other_x = s.anchor[0] if b is None else q[b.ix]
        gap = q[a.ix] - other_x
        if other_y != a.rail_y or gap == 0.0:
            return None
        signs.append(gap > 0.0)
    kept = _BEAD_MODELS.setdefault(system, {})
    key = np.packbits(np.array(signs, dtype=bool)).tobytes() + len(signs).to_bytes(8, "little")
    model = kept.get(key)
    if model is None:
        model = _bead_model(system, q)
        if len(kept) >= BEAD_MODELS_KEPT:
            kept.pop(next(iter(kept)))
        kept[key] = model
    return model


def _bead_model(system: Any, q: np.ndarray) -> LinearBeadModel:
    """:func:`linear_bead_model` made afresh (the scene is linear near ``q``)."""
    disks = system._disks
    N = system.N
    K = np.zeros((N, N))
    C = np.zeros((N, N))
    f0 = system.M_diag * system.gravity[0]
    rows: list[np.ndarray] = []
    offsets: list[float] = []
    seen: set[tuple] = set()
    for s in system._springs:
        a = disks[s.i]
        b = disks[s.j] if s.j is not None else None
        ends = [a.ix] if b is None else [a.ix, b.ix]
        signs = _SIGNS[: len(ends)]
        # K[ends, ends] += k · signs signsᵀ, entry by entry (k · ±1 is exact)
        for matrix, value in ((K, s.stiffness), (C, s.damping)):
            matrix[a.ix, a.ix] += value
            if b is not None:
                matrix[a.ix, b.ix] += -value
                matrix[b.ix, a.ix] += -value
                matrix[b.ix, b.ix] += value
        if b is None:
            f0[a.ix] += s.stiffness * s.anchor[0]
        if s.rest_length == 0.0:
            continue
        other_x = s.anchor[0] if b is None else q[b.ix]
        sign = math.copysign(1.0, q[a.ix] - other_x)
        f0[ends] += s.stiffness * s.rest_length * sign * signs
        offset = sign * s.anchor[0] if b is None else 0.0
        key = (tuple(ends), sign, offset)
        if key in seen:
            continue  # another spring between the same ends: one separation serves both
        seen.add(key)
        row = np.zeros(N)
        row[ends] = sign * signs
        rows.append(row)
        offsets.append(offset)
    harmonics = tuple(
        Harmonic(_unit(N, disks[h.disk].ix) * h.amplitude[0], h.omega, h.phase)
        for h in system._forcing
    )
    return LinearBeadModel(
        M=np.diag(system.M_diag),  # not system.M: that would keep a second N × N in the system
        C=C,
        K=K,
        f0=f0,
        harmonics=harmonics,
        separation_rows=np.array(rows).reshape(-1, N),
        separation_offsets=np.array(offsets),
    )
