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
from typing import Any

import numpy as np
import scipy.sparse
from numpy.typing import ArrayLike

from solver.errors import InputError
from solver.linear_flow import Harmonic, LinearFlow, sparse_matrix

MODAL_MIN_BEADS = 8
"""Beads from which an unconstrained bead model's flow is modal (:mod:`solver.modal_flow`).

Below, the general flow's compiled stop phases
(:meth:`solver.linear_flow.LinearFlow.coordinate_maps`) serve the small scenes."""

_SIGNS = np.array([1.0, -1.0])

BEAD_MODELS_KEPT = 8
"""Bead models kept per system, one per orientation of its rest-length springs."""

FLOWS_KEPT = 8
"""Compiled flows a stepper keeps (:class:`KeptFlows`), the last used ones."""

FLOW_ELEMENTS_KEPT = 2
"""Beyond ``FLOW_NUMBERS_FREE``, the flows kept hold at most this many times ``n²`` numbers."""

FLOW_NUMBERS_FREE = 1 << 20
"""Numbers (8 MiB) the flows kept may hold whatever their size: small scenes keep ``FLOWS_KEPT``."""

_BEAD_MODELS: weakref.WeakKeyDictionary[Any, dict[bytes, LinearBeadModel]] = (
    weakref.WeakKeyDictionary()
)


def _unit(n: int, i: int) -> np.ndarray:
    """Row ``i`` of the identity of size ``n`` (without making the identity)."""
    row = np.zeros(n)
    row[i] = 1.0
    return row


class LinearBeadModel:
    """The linear dynamics of a bead scene (see :func:`linear_bead_model`), O(N) memory.

    A chain's matrices are banded (tridiagonal): they are kept sparse, the
    masses as a vector. The dense ``M``, ``C`` and ``K`` are made on each
    access (N² memory: for small models and dense algebra only).

    Parameters
    ----------
    M : array_like, shape (N,) or (N, N), or sparse
        Diagonal mass matrix (kg), or its diagonal.
    C, K : array_like or sparse, shape (N, N)
        Damping (N·s/m) and stiffness (N/m) matrices.
    f0 : numpy.ndarray, shape (N,)
        Constant force (N): gravity along the rails and rest-length terms.
    harmonics : tuple of Harmonic
        The scene's harmonic forces (rail components).
    separation_rows : array_like or sparse, shape (S, N)
    separation_offsets : numpy.ndarray, shape (S,)
        One row per pair of ends joined by springs of nonzero rest length (springs
        between the same ends share it): the model holds while
        ``separation_rows @ q − separation_offsets > 0`` (the spring's ends
        keep their order along the rail); a zero is an event that ends the phase.

    Attributes
    ----------
    masses : numpy.ndarray, shape (N,)
        The diagonal of ``M`` (kg).
    damping, stiffness : scipy.sparse.csr_array, shape (N, N)
        ``C`` and ``K``.
    separation_rows : scipy.sparse.csr_array, shape (S, N)
        Two entries a row (one for a spring to an anchor).
    """

    def __init__(
        self,
        M: Any,
        C: Any,
        K: Any,
        f0: ArrayLike,
        harmonics: tuple[Harmonic, ...],
        separation_rows: Any,
        separation_offsets: ArrayLike,
    ) -> None:
        self.f0 = np.asarray(f0, dtype=float)
        n = len(self.f0)
        mass = sparse_matrix("M", M, n)
        if mass.shape != (n, n) or mass.nnz != np.count_nonzero(mass.diagonal()):
            raise InputError(f"M must be a diagonal ({n}, {n}) matrix (or its diagonal)")
        self.masses = mass.diagonal()
        self.damping = sparse_matrix("C", C, n)
        self.stiffness = sparse_matrix("K", K, n)
        self.harmonics = tuple(harmonics)
        rows = sparse_matrix("separation rows", separation_rows, n)
        rows.sort_indices()
        self.separation_rows = rows
        self.separation_offsets = np.asarray(separation_offsets, dtype=float)
        # the flows' key (solver.flight): the rows' sparse data, O(S) bytes
        self.key = (rows.indptr.tobytes(), rows.indices.tobytes(), rows.data.tobytes())

    @property
    def M(self) -> np.ndarray:
        """Dense mass matrix (kg), shape (N, N), made on each access."""
        return np.diag(self.masses)

    @property
    def C(self) -> np.ndarray:
        """Dense damping matrix (N·s/m), shape (N, N), made on each access."""
        return self.damping.toarray()

    @property
    def K(self) -> np.ndarray:
        """Dense stiffness matrix (N/m), shape (N, N), made on each access."""
        return self.stiffness.toarray()

    @property
    def damped(self) -> bool:
        """Whether any damper acts (``C ≠ 0``)."""
        return bool(self.damping.count_nonzero())

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
                flow = modal_flow(
                    self.masses, self.damping, self.stiffness, self.f0, self.harmonics
                )
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


class KeptFlows:
    """The compiled flows of a run by key (active set, spring orientation), the last used kept.

    At most ``FLOWS_KEPT`` flows, and beyond ``FLOW_NUMBERS_FREE`` numbers
    at most ``FLOW_ELEMENTS_KEPT · n²`` (a flow of ``n`` coordinates counted
    as ``n²``: a modal flow holds its ``n × n`` ``Φ``): a long chain that
    meets many contact sets keeps one or two flows, never one per set. A
    flow let go is made again when its set comes back (the same numbers: a
    flow is a function of its model).
    """

    def __init__(self) -> None:
        self._flows: dict[Any, Any] = {}

    def get(self, key: Any) -> Any:
        """The flow kept under ``key`` (now the last used), or None."""
        flow = self._flows.pop(key, None)
        if flow is not None:
            self._flows[key] = flow
        return flow

    def __setitem__(self, key: Any, flow: Any) -> None:
        self._flows.pop(key, None)
        self._flows[key] = flow
        budget = max(FLOW_NUMBERS_FREE, FLOW_ELEMENTS_KEPT * getattr(flow, "n", 0) ** 2)
        while len(self._flows) > 1 and (
            len(self._flows) > FLOWS_KEPT
            or sum(getattr(f, "n", 0) ** 2 for f in self._flows.values()) > budget
        ):
            self._flows.pop(next(iter(self._flows)))

    def values(self) -> list[Any]:
        """The flows kept, least recently used first."""
        return list(self._flows.values())

    def __len__(self) -> int:
        return len(self._flows)


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
    # one model per orientation, kept with the system (sparse matrices, made once)
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
    """:func:`linear_bead_model` made afresh (the scene is linear near ``q``).

    ``K`` and ``C`` are summed entry by entry in scene order, as into dense
    matrices (the same numbers), and kept sparse.
    """
    disks = system._disks
    N = system.N
    entries: tuple[dict[tuple[int, int], float], dict[tuple[int, int], float]] = ({}, {})
    f0 = system.M_diag * system.gravity[0]
    row_ends: list[list[int]] = []
    row_values: list[np.ndarray] = []
    offsets: list[float] = []
    seen: set[tuple] = set()
    for s in system._springs:
        a = disks[s.i]
        b = disks[s.j] if s.j is not None else None
        ends = [a.ix] if b is None else [a.ix, b.ix]
        signs = _SIGNS[: len(ends)]
        # K[ends, ends] += k · signs signsᵀ, entry by entry (k · ±1 is exact)
        for matrix, value in zip(entries, (s.stiffness, s.damping), strict=True):
            if value == 0.0:
                continue  # adds nothing: 0 + (±0) = 0
            matrix[a.ix, a.ix] = matrix.get((a.ix, a.ix), 0.0) + value
            if b is not None:
                matrix[a.ix, b.ix] = matrix.get((a.ix, b.ix), 0.0) + -value
                matrix[b.ix, a.ix] = matrix.get((b.ix, a.ix), 0.0) + -value
                matrix[b.ix, b.ix] = matrix.get((b.ix, b.ix), 0.0) + value
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
        row_ends.append(ends)
        row_values.append(sign * signs)
        offsets.append(offset)
    K, C = (_from_entries(matrix, N) for matrix in entries)
    harmonics = tuple(
        Harmonic(_unit(N, disks[h.disk].ix) * h.amplitude[0], h.omega, h.phase)
        for h in system._forcing
    )
    lengths = [len(ends) for ends in row_ends]
    rows = scipy.sparse.csr_array(
        (
            np.concatenate(row_values) if row_values else np.zeros(0),
            np.array([i for ends in row_ends for i in ends], dtype=np.int64),
            np.concatenate(([0], np.cumsum(lengths, dtype=np.int64))),
        ),
        shape=(len(row_ends), N),
    )
    return LinearBeadModel(
        M=system.M_diag,  # a vector: no N × N array
        C=C,
        K=K,
        f0=f0,
        harmonics=harmonics,
        separation_rows=rows,
        separation_offsets=np.array(offsets),
    )


def _from_entries(entries: dict[tuple[int, int], float], n: int) -> scipy.sparse.csr_array:
    """The ``(n, n)`` CSR array of ``{(row, column): value}`` (zeros left out)."""
    kept = [(ij, value) for ij, value in entries.items() if value != 0.0]
    rows = np.array([i for (i, _), _ in kept], dtype=np.int64)
    cols = np.array([j for (_, j), _ in kept], dtype=np.int64)
    values = np.array([value for _, value in kept], dtype=float)
    return scipy.sparse.csr_array(scipy.sparse.coo_array((values, (rows, cols)), shape=(n, n)))
