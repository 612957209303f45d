"""Closed-form phases of bead chains in modal form: O(N) per gap value (MECHANICS §4).

A phase of beads joined by linear springs obeys

    M q̈ + C q̇ + K q = f0 + Σ_j a_j sin(ω_j t + φ_j)

with ``M`` diagonal. When the damping is proportional, ``C = α M + β K``
(no damping at all included), the mass-normalised eigenvectors ``Φ`` of the
symmetric problem ``K φ = ω² M φ`` (``Φᵀ M Φ = I``, ``Φᵀ K Φ = diag ω²``,
``Φᵀ C Φ = diag c``, ``c = α + β ω²``) decouple it into scalar modes. The
eigenvectors come from :func:`scipy.linalg.eigh_tridiagonal` when ``K`` is
tridiagonal (a chain), from :func:`scipy.linalg.eigh` otherwise, once per
flow.

A phase from ``(q0, v0)`` at ``t0`` is written ``q = q0 + Φ η``: the modal
coordinates start at ``η = 0``, ``η̇ = Φᵀ M v0``, and each obeys
``η̈ + c η̇ + ω² η = g0 + Re Σ_j z_j exp(i Ω_j τ)`` (``τ = t − t0``,
``g0 = Φᵀ (f0 − K q0)``, the harmonic forces folded into one complex
amplitude per distinct frequency ``Ω_j``, taken at ``t0``). With the roots
``λ₁,₂`` of ``p(λ) = λ² + c λ + ω²`` its closed form is

    η = A e^{λ₁τ} + B e^{λ₂τ} + g0 / ω² + Re Σ_j z_j e^{iΩ_j τ} / p(iΩ_j),

``A`` and ``B`` fixed by ``η(0) = 0`` and ``η̇(0)``: two complex
exponentials per mode and time, so a projection ``a · q(t)`` (a gap between
two beads: the difference of two rows of ``Φ``, kept per row) costs
O(modes) per time, the whole state O(N · modes).

That form divides by ``ω² = λ₁ λ₂``, ``λ₁ − λ₂`` and ``p(iΩ_j) = (iΩ_j − λ₁)
(iΩ_j − λ₂)``. An undamped free-body mode (``ω = 0``, ``c = 0``: a bead or a
group of beads with no spring to the ground) is a parabola plus the forcing's
particular part, ``η = a + b τ + g0 τ² / 2 + Re Σ_j P_j e^{iΩ_j τ}`` with
``P_j = −z_j / Ω_j²`` (``a``, ``b`` from ``η(0) = 0``, ``η̇(0)``), as long as
no ``Ω_j`` is within ``SEPARATION`` of 0. The other modes with a root
``λ₁, λ₂`` closer to the other, to 0 or to an ``iΩ_j`` than ``SEPARATION``
times the fastest rate — a damped free body, a resonance (``Ω = ω``, secular
growth), critical damping — are *special*: their
absolute modal coordinates ``ζ = Φᵀ M q`` obey a small system of the same
kind, integrated by the general :class:`solver.linear_flow.LinearFlow`
(its clustered eigenvalues exact by Taylor series), made once per flow;
they enter as ``η = ζ(t) − ζ(t0)``. The accelerations follow from the modal
equations.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.csgraph
from numpy.typing import ArrayLike

from solver.errors import InputError
from solver.linear_flow import Harmonic, LinearFlow, _vector, sparse_matrix

PROPORTIONAL_TOL = 1e-13
"""Largest ``|C − α M − β K|`` relative to ``|C|`` for damping taken as proportional."""

ZERO_MODE_TOL = 64.0
"""Eigenvalues ``ω²`` below this many ``n · eps · max ω²`` are free-body modes (exactly 0)."""

SEPARATION = 1e-4
"""Nodes of a mode closer than this fraction of the fastest rate make it special.

The generic form's terms grow like the inverse of the nodes' distances and cancel: its
error is ``eps / SEPARATION`` of the displacement scale ``force / rate²``, 1e-12."""

SPARSE_KEPT = 4
"""Row arrays (gaps, springs) whose sparse moduli a flow keeps (:meth:`ModalFlow.sparse_rows`)."""

ABS_CHUNK = 64
"""Rows of ``|Φ|`` made at a time for :meth:`ModalPhase.curvature_bounds` (O(N) memory)."""

NO_BOUND = 1e300
"""A mode's curvature bound past this is none (finite, so that ``0 · NO_BOUND = 0``)."""


def proportional_damping(M: Any, C: Any, K: Any) -> tuple[float, float] | None:
    """``(α, β)`` with ``C = α M + β K`` to ``PROPORTIONAL_TOL``, or None when there are none.

    ``M``, ``C``, ``K`` sparse (:func:`solver.linear_flow.sparse_matrix`): the
    fit reads the entries where one of them is nonzero (elsewhere all three are 0).
    """
    size = float(np.max(np.abs(C.data), initial=0.0))
    if size == 0.0:
        return 0.0, 0.0
    pattern = abs(M) + abs(C) + abs(K)
    rows, cols = pattern.nonzero()
    m, c, k = (np.asarray(X[rows, cols], dtype=float).ravel() for X in (M, C, K))
    (alpha, beta), *_ = np.linalg.lstsq(np.column_stack((m, k)), c, rcond=None)
    if float(np.max(np.abs(c - alpha * m - beta * k))) > PROPORTIONAL_TOL * size:
        return None
    return float(alpha), float(beta)


class ModalFlow:
    """``M q̈ + C q̇ + K q = f0 + Σ_j a_j sin(ω_j t + φ_j)`` in modal form (see module docstring).

    The interface of :class:`solver.linear_flow.LinearFlow` without
    constraints; :func:`modal_flow` makes one where the structure allows.

    The matrices are kept sparse (a chain's are tridiagonal): the flow's one
    N × N array is ``Φ`` (:attr:`modes`).

    Parameters
    ----------
    M : array_like or sparse, shape (n, n) or (n,)
        Diagonal mass matrix (kg), or its diagonal; positive.
    C : array_like or sparse, shape (n, n) or (n,)
        Damping matrix (N·s/m), ``α M + β K``.
    K : array_like or sparse, shape (n, n) or (n,)
        Symmetric positive semidefinite stiffness matrix (N/m).
    f0 : array_like, shape (n,)
        Constant generalized force (N).
    harmonics : iterable of Harmonic or (amplitude, omega, phase)
        Harmonic forces ``amplitude · sin(omega t + phase)`` (N, rad/s, rad).
    damping : (float, float)
        ``(α, β)`` of the damping (1/s, s).
    """

    def __init__(
        self,
        M: ArrayLike,
        C: ArrayLike,
        K: ArrayLike,
        f0: ArrayLike,
        harmonics: Iterable[Harmonic | tuple[ArrayLike, float, float]],
        damping: tuple[float, float],
    ) -> None:
        self.f0 = _vector("f0", f0, np.size(f0))
        n = self.n = len(self.f0)
        self.C, self.K = (_sparse_square(name, X, n) for name, X in (("C", C), ("K", K)))
        self.masses = _sparse_square("M", M, n).diagonal()
        self.harmonics = tuple(
            Harmonic(_vector("harmonic amplitude", a, n), float(w), float(ph))
            for a, w, ph in harmonics
        )
        self.A = np.zeros((0, n))
        self.b = np.zeros(0)
        root = np.sqrt(self.masses)
        rows, cols = self.K.nonzero()
        if n > 1 and np.all(np.abs(rows - cols) <= 1):  # a chain: tridiagonal
            scaled_diag = self.K.diagonal() / self.masses
            scaled_off = self.K.diagonal(1) / (root[:-1] * root[1:])
            w2, V = scipy.linalg.eigh_tridiagonal(scaled_diag, scaled_off)
        else:
            w2, V = scipy.linalg.eigh(self.K.toarray() / np.outer(root, root))
        top = float(np.max(np.abs(w2), initial=0.0))
        w2 = np.where(np.abs(w2) <= ZERO_MODE_TOL * n * np.finfo(float).eps * top, 0.0, w2)
        self.omega2 = np.maximum(w2, 0.0)
        V /= root[:, None]
        self.modes = V  # Φ: Φᵀ M Φ = I (in place: one N × N array, the one a modal flow needs)
        self._sparse_rows: list[tuple[Any, tuple[scipy.sparse.csr_matrix, np.ndarray]]] = []
        alpha, beta = damping
        self.rates = alpha + beta * self.omega2  # c per mode (1/s)
        m = -0.5 * self.rates
        d = np.sqrt((m * m - self.omega2).astype(complex))
        l1, l2 = m + d, m - d

        # the constant force and one complex amplitude per distinct frequency |Ω| > 0
        constant = self.f0.copy()
        pairs: dict[float, np.ndarray] = {}
        for amplitude, omega, phase in self.harmonics:
            if omega == 0.0:
                constant = constant + amplitude * math.sin(phase)
                continue
            # a sin(ω t + φ) = Re((a sin φ − i a sign(ω) cos φ) exp(i |ω| t))
            z = pairs.setdefault(abs(omega), np.zeros(n, dtype=complex))
            z += amplitude * complex(math.sin(phase), -math.copysign(1.0, omega) * math.cos(phase))
        self._constant = constant
        omegas = np.array(sorted(pairs))
        self._omegas = omegas
        rates = np.concatenate((np.abs(l1), np.abs(l2), omegas))
        self._max_rate = float(np.max(rates, initial=0.0))

        # special modes: a root λ₁, λ₂ closer than SEPARATION · max_rate to the other root,
        # to 0 or to an iΩ_j (the divisors of the generic form; the forcing's own nodes
        # 0 and iΩ_j are never divided by each other's distance)
        forced = np.column_stack((np.zeros(n), np.broadcast_to(1j * omegas, (n, len(omegas)))))
        closest = np.minimum(
            np.abs(l1 - l2),
            np.minimum(np.abs(forced - l1[:, None]), np.abs(forced - l2[:, None])).min(axis=1),
        )
        special = closest <= SEPARATION * self._max_rate
        # free bodies (ω = 0 undamped, no forcing frequency near 0): polynomial plus the
        # forcing's particular part in closed form, never a cluster of the general flow
        slow = bool(np.any(omegas <= SEPARATION * self._max_rate))
        free = special & (self.omega2 == 0.0) & (self.rates == 0.0) & (not slow)
        special &= ~free
        self._free = np.nonzero(free)[0]
        self._generic = np.nonzero(~special & ~free)[0]
        self._special = np.nonzero(special)[0]
        g = self._generic
        self._l1, self._l2 = l1[g], l2[g]
        self._split = 1.0 / (l1[g] - l2[g])
        self._static = 1.0 / self.omega2[g]
        # 1 / p(iΩ_j) per generic mode and frequency, and iΩ_j / p(iΩ_j)
        mu = 1j * omegas[None, :]
        self._response = 1.0 / ((mu - l1[g, None]) * (mu - l2[g, None]))
        self._free_response = np.broadcast_to(1.0 / (mu * mu), (len(self._free), len(omegas)))
        # (modes, h): Φᵀ of each frequency's amplitude, its real and imaginary parts apart
        # (Φᵀ times a complex array would make a complex copy of Φ: twice its memory)
        self._forcing = np.zeros((n, len(omegas)), dtype=complex)
        if len(omegas):
            amplitudes = np.array([pairs[w] for w in omegas]).T
            self._forcing.real = self.modes.T @ amplitudes.real
            self._forcing.imag = self.modes.T @ amplitudes.imag
        self._special_flow: LinearFlow | None = None
        if len(self._special):
            S = self._special
            modes_s = self.modes[:, S]
            self._special_flow = LinearFlow(
                np.ones(len(S)),
                self.rates[S],
                self.omega2[S],
                modes_s.T @ self.f0,  # the harmonics of ω = 0 it folds into f0 itself
                [Harmonic(modes_s.T @ h.amplitude, h.omega, h.phase) for h in self.harmonics],
            )

    @property
    def M(self) -> np.ndarray:
        """Dense mass matrix (kg), shape (n, n), made on each access."""
        return np.diag(self.masses)

    @property
    def max_rate(self) -> float:
        """Largest rate of the motion (1/s): fastest frequency or decay rate.

        Event scans of a phase need sub-points about ``1 / max_rate`` apart.
        """
        return self._max_rate

    def sparse_rows(self, rows: Any) -> tuple[scipy.sparse.csr_matrix, np.ndarray]:
        """``|rows|`` (dense or sparse) as a sparse matrix of the columns it reads, and those
        columns; kept for the last ``SPARSE_KEPT`` arrays (by identity)."""
        for kept, found in self._sparse_rows:
            if kept is rows:
                return found
        sparse = scipy.sparse.csr_matrix(abs(rows) if scipy.sparse.issparse(rows) else np.abs(rows))
        sparse.eliminate_zeros()
        columns = np.unique(sparse.indices)
        found = (scipy.sparse.csr_matrix(sparse[:, columns]), columns)
        self._sparse_rows = [(rows, found), *self._sparse_rows[: SPARSE_KEPT - 1]]
        return found

    def start(self, t0: float, q0: ArrayLike, v0: ArrayLike) -> ModalPhase:
        """The motion from ``(q0, v0)`` at time ``t0`` (s, m, m/s)."""
        q0 = _vector("q0", q0, self.n)
        v0 = _vector("v0", v0, self.n)
        return ModalPhase(self, float(t0), q0, v0)


class ModalPhase:
    """Exact motion of a :class:`ModalFlow` from one state (interface of ``LinearPhase``).

    Every method takes a time ``t`` (s), scalar or array of shape (k,), and
    returns rows: shape (n,) for a scalar, (k, n) for an array.
    """

    def __init__(self, flow: ModalFlow, t0: float, q0: np.ndarray, v0: np.ndarray) -> None:
        self.flow = flow
        self.t0 = t0
        self._q0 = q0.copy()  # the caller's state may change in place after the start
        modes = flow.modes
        g = flow._generic
        self._eta_dot0 = modes.T @ (flow.masses * v0)
        u = self._eta_dot0[g]
        self._g0 = modes.T @ (flow._constant - flow.K @ q0)  # modal forces at q0 (all modes)
        g0 = self._g0[g]
        # the harmonic amplitudes at t0, z_j exp(i Ω_j t0), over p(iΩ_j): the particular parts
        self._P = flow._forcing[g] * np.exp(1j * flow._omegas * t0) * flow._response
        self._P_rate = self._P * (1j * flow._omegas)
        self._static = g0 * flow._static
        P0 = self._static + self._P.real.sum(axis=1)
        U = u - self._P_rate.real.sum(axis=1)
        self._A = (U + flow._l2 * P0) * flow._split
        self._B = -P0 - self._A
        self._A_rate = self._A * flow._l1
        self._B_rate = self._B * flow._l2
        # free modes: η = a + b τ + g τ²/2 + Re Σ_j P_j e^{iΩ_j τ}, P_j = −z_j / Ω_j²
        f = flow._free
        self._free_P = flow._forcing[f] * np.exp(1j * flow._omegas * t0) * flow._free_response
        self._free_P_rate = self._free_P * (1j * flow._omegas)
        self._free_g = self._g0[f]
        self._free_a = -self._free_P.real.sum(axis=1)
        self._free_b = self._eta_dot0[f] - self._free_P_rate.real.sum(axis=1)
        self._special = None
        self._special_curves: Any = None
        if flow._special_flow is not None:
            S = flow._special
            zeta = modes[:, S].T @ (flow.masses * q0)
            self._special = (flow._special_flow.start(t0, zeta, self._eta_dot0[S]), zeta)

    def modal(self, t: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Modal coordinates ``η``, rates and accelerations at ``t``: (modes,) or (k, modes)."""
        flow = self.flow
        tau = np.asarray(t, dtype=float) - self.t0
        T = tau[..., None]
        e1 = np.exp(flow._l1 * T)
        e2 = np.exp(flow._l2 * T)
        generic = (self._A * e1 + self._B * e2).real + self._static
        generic_dot = (self._A_rate * e1 + self._B_rate * e2).real
        if len(flow._omegas):
            rot = np.exp(1j * flow._omegas * T)[..., None, :]  # (..., 1, h)
            generic = generic + (self._P * rot).real.sum(axis=-1)
            generic_dot = generic_dot + (self._P_rate * rot).real.sum(axis=-1)
        shape = (*np.shape(tau), flow.n)
        eta = np.empty(shape)
        eta_dot = np.empty(shape)
        eta[..., flow._generic] = generic
        eta_dot[..., flow._generic] = generic_dot
        if len(flow._free):
            free = self._free_a + (self._free_b + 0.5 * self._free_g * T) * T
            free_dot = self._free_b + self._free_g * T
            if len(flow._omegas):
                free = free + (self._free_P * rot).real.sum(axis=-1)
                free_dot = free_dot + (self._free_P_rate * rot).real.sum(axis=-1)
            eta[..., flow._free] = free
            eta_dot[..., flow._free] = free_dot
        if self._special is not None:
            motion, zeta0 = self._special
            zeta, zeta_dot, _ = motion.kinematics(float(t) if np.ndim(t) == 0 else tau + self.t0)
            eta[..., flow._special] = zeta - zeta0
            eta_dot[..., flow._special] = zeta_dot
        force = self._forcing_now(T)
        eta_ddot = force - flow.rates * eta_dot - flow.omega2 * eta
        return eta, eta_dot, eta_ddot

    def _forcing_now(self, T: np.ndarray) -> np.ndarray:
        """The modal forces ``g0 + Re Σ_j z_j e^{iΩ_j τ}`` at ``τ = T`` (N/kg^½)."""
        flow = self.flow
        force = self._g0
        if len(flow._omegas):
            rot = np.exp(1j * flow._omegas * (T + self.t0))
            force = force + (rot[..., None, :] * flow._forcing).real.sum(axis=-1)
        return force

    def kinematics(self, t: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Coordinates (m), velocities (m/s) and accelerations (m/s²) at ``t``."""
        eta, eta_dot, eta_ddot = self.modal(t)
        modes = self.flow.modes
        return self._q0 + eta @ modes.T, eta_dot @ modes.T, eta_ddot @ modes.T

    def state(self, t: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Coordinates (m) and velocities (m/s) at ``t``: ``(q, v)``."""
        eta, eta_dot, _ = self.modal(t)
        modes = self.flow.modes
        return self._q0 + eta @ modes.T, eta_dot @ modes.T

    def __call__(self, t: ArrayLike) -> np.ndarray:
        """``(q, v)`` stacked like :class:`scipy.integrate.OdeSolution`: (2n,) or (2n, k)."""
        q, v = self.state(t)
        return np.concatenate((q, v), axis=-1).T

    def acceleration(self, t: ArrayLike) -> np.ndarray:
        """Generalized accelerations ``q̈`` (m/s²) at ``t``."""
        return self.modal(t)[2] @ self.flow.modes.T

    def curvature_terms(self, ta: float, tb: float) -> np.ndarray:
        """Bounds of ``|η̈|`` per mode over ``[ta, tb]`` (s), kept for the last span.

        A generic mode's from the moduli of its terms, ``|λ² A| e^{Re λ τ}``
        at the end where it is largest and ``Ω² |P|``; a special mode's from
        :meth:`solver.linear_flow.Projections.curvature_bound` of the small
        flow (a resonance's too), ``NO_BOUND`` past it (an exponential past the floats).
        """
        kept = self.__dict__.get("_curvature_kept")
        if kept is not None and kept[0] == (ta, tb):
            return kept[1]
        flow = self.flow
        taus = np.array([ta - self.t0, tb - self.t0])
        grow1 = np.exp(np.multiply.outer(taus, flow._l1.real)).max(axis=0)
        grow2 = np.exp(np.multiply.outer(taus, flow._l2.real)).max(axis=0)
        terms = np.empty(flow.n)
        terms[flow._generic] = (
            np.abs(self._A_rate * flow._l1) * grow1
            + np.abs(self._B_rate * flow._l2) * grow2
            + (np.abs(self._P_rate) * flow._omegas).sum(axis=1)
        )
        terms[flow._free] = np.abs(self._free_g) + (np.abs(self._free_P_rate) * flow._omegas).sum(
            axis=1
        )
        if self._special is not None:
            motion, _ = self._special
            if self._special_curves is None:
                self._special_curves = motion.projections(np.eye(len(flow._special)))
            for i, mode in enumerate(flow._special):
                terms[mode] = min(self._special_curves.curvature_bound(i, ta, tb), NO_BOUND)
        self._curvature_kept = ((ta, tb), terms)
        return terms

    def curvature_bounds(self, rows: Any, ta: float, tb: float) -> np.ndarray:
        """Bounds of ``|d²/dt² rows @ q|`` (m/s²) over ``[ta, tb]`` (s), one per row.

        ``|rows| |Φ| b`` with ``b`` the modes' bounds (:meth:`curvature_terms`):
        each bead the rows read has its acceleration bounded apart, O(N · modes),
        then the rows' (sparse: a gap or a spring has two entries,
        :meth:`ModalFlow.sparse_rows`). ``|Φ|`` is made ``ABS_CHUNK`` rows at
        a time, never kept. Looser than ``|rows Φ| b`` (it forgets how the two
        beads of a gap move together), enough to show a quiet gap open.
        """
        sparse, columns = self.flow.sparse_rows(rows)
        terms = self.curvature_terms(ta, tb)
        modes = self.flow.modes
        beads = np.empty(len(columns))
        for start in range(0, len(columns), ABS_CHUNK):
            chunk = columns[start : start + ABS_CHUNK]
            beads[start : start + ABS_CHUNK] = np.abs(modes[chunk]) @ terms
        return sparse @ beads

    def reaction(self, t: ArrayLike) -> np.ndarray:
        """No constraints: an empty row per time."""
        return np.zeros((*np.shape(t), 0))

    def initial_state(self) -> tuple[np.ndarray, np.ndarray]:
        """Coordinates (m) and velocities (m/s) at ``t0``: ``q0`` exactly, ``Φ Φᵀ M v0``."""
        return self._q0.copy(), self.flow.modes @ self._eta_dot0

    def projections(self, rows: Any) -> ModalProjections:
        """The projections ``rows @ q(t)`` (m) as closed forms, O(modes) per value.

        ``rows`` dense or sparse (a chain's gaps: two entries a row, O(N) memory).
        """
        if scipy.sparse.issparse(rows):
            rows = scipy.sparse.csr_array(rows)
            if not rows.has_sorted_indices:
                rows = rows.copy()
                rows.sort_indices()  # a row's terms summed in the order of a dense row's
        else:
            rows = np.asarray(rows, dtype=float)
        return ModalProjections(self, rows)


class ModalProjections:
    """Projections ``a · q(t)`` of a :class:`ModalPhase` (interface of ``Projections``).

    Row ``k`` of ``rows`` times ``Φ`` is made from its nonzero entries the
    first time it is asked for (a gap between two beads: two rows of ``Φ``),
    so a value is O(modes).
    """

    def __init__(self, phase: ModalPhase, rows: Any) -> None:
        self._phase = phase
        self._rows = rows
        self._weights: dict[int, tuple[np.ndarray, float]] = {}

    def _entries(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The columns of row ``k``'s nonzero entries (increasing) and the entries."""
        rows = self._rows
        if scipy.sparse.issparse(rows):
            span = slice(rows.indptr[k], rows.indptr[k + 1])
            idx, values = rows.indices[span], rows.data[span]
            keep = values != 0.0
            return idx[keep], values[keep]
        idx = np.nonzero(rows[k])[0]
        return idx, rows[k][idx]

    def _weight(self, k: int) -> tuple[np.ndarray, float]:
        found = self._weights.get(k)
        if found is None:
            idx, values = self._entries(k)
            phase = self._phase
            found = (values @ phase.flow.modes[idx], float(values @ phase._q0[idx]))
            self._weights[k] = found
        return found

    def kinematics(self, k: int, t: float) -> tuple[float, float, float]:
        """Projection ``k`` and its first two time derivatives at ``t`` (s): m, m/s, m/s²."""
        w, offset = self._weight(k)
        eta, eta_dot, eta_ddot = self._phase.modal(t)
        return offset + float(w @ eta), float(w @ eta_dot), float(w @ eta_ddot)

    def value(self, k: int, t: float) -> float:
        """Projection ``k`` at time ``t`` (s), in the units of ``q`` (m)."""
        w, offset = self._weight(k)
        return offset + float(w @ self._phase.modal(t)[0])

    def rate(self, k: int, t: float) -> float:
        """Time derivative of projection ``k`` at ``t`` (s): m/s for positions."""
        w, _ = self._weight(k)
        return float(w @ self._phase.modal(t)[1])

    def curvature_bound(self, k: int, ta: float, tb: float) -> float | None:
        """A bound of ``|d²/dt²|`` of projection ``k`` over ``[ta, tb]`` (s), or None.

        ``Σ |a Φ|_m b_m`` with the modes' bounds ``b``
        (:meth:`ModalPhase.curvature_terms`); None when a mode's is
        ``NO_BOUND`` (an exponential past the floats) and enters the projection.
        """
        w, _ = self._weight(k)
        bound = float(np.abs(w) @ self._phase.curvature_terms(ta, tb))
        return None if bound >= NO_BOUND else bound


def modal_flow(
    M: np.ndarray,
    C: np.ndarray,
    K: np.ndarray,
    f0: np.ndarray,
    harmonics: Iterable[Any],
) -> ModalFlow | None:
    """The :class:`ModalFlow` of an unconstrained system, or None when it does not apply.

    It applies when ``M`` is diagonal and positive, ``K`` symmetric and the
    damping proportional (:func:`proportional_damping`).
    """
    n = np.size(f0)
    M, C, K = (_sparse_square(name, X, n) for name, X in (("M", M), ("C", C), ("K", K)))
    masses = M.diagonal()
    if M.nnz != np.count_nonzero(masses) or not np.all(masses > 0.0):
        return None
    if (K != K.T).nnz:
        return None
    damping = proportional_damping(M, C, K)
    if damping is None:
        return None
    return ModalFlow(masses, C, K, f0, harmonics, damping)


def _sparse_square(name: str, value: Any, n: int) -> scipy.sparse.csr_array:
    """:func:`solver.linear_flow.sparse_matrix` of shape ``(n, n)``."""
    out = sparse_matrix(name, value, n)
    if out.shape != (n, n):
        raise InputError(f"{name} must be a finite ({n}, {n}) matrix (or its diagonal)")
    return out


def quiet_rows(
    motion: Any, rows: np.ndarray, ts: np.ndarray, values: np.ndarray, floor: float
) -> np.ndarray | None:
    """Which of ``rows @ q − b`` stay above ``floor`` on each sub-interval, or None.

    ``values`` (J + 1, K) are the rows' values at the sub-points ``ts``. A
    function whose second derivative is at most ``C`` in modulus lies above
    its chord less ``C (t − ta)(tb − t) / 2``, so above ``min(g_a, g_b) −
    C (tb − ta)² / 8``; ``C`` from :meth:`ModalPhase.curvature_bounds`. A
    long chain's far beads are at rest to rounding: their gaps' rates have
    either sign about zero, a turning point for the event scan at every
    sub-point, which this bound shows harmless. None when ``motion`` is
    not a :class:`ModalPhase` (mask (J, K) otherwise).
    """
    if not isinstance(motion, ModalPhase) or not rows.shape[0]:
        return None
    lows = np.minimum(values[:-1], values[1:])
    quiet = np.empty(lows.shape, dtype=bool)
    for j in range(len(ts) - 1):
        width = float(ts[j + 1] - ts[j])
        bounds = motion.curvature_bounds(rows, ts[j], ts[j + 1])
        quiet[j] = lows[j] - 0.125 * width * width * bounds > floor
    return quiet


class SplitFlow:
    """A constrained bead model as two independent flows: the held beads and the rest.

    The beads joined to a persistent contact ``A q = b`` through springs,
    dampers or other contacts (``held``) move apart from the others
    (``rest``): no spring, damper, mass or constraint couples the two sets.
    ``held`` gets the general :class:`solver.linear_flow.LinearFlow` with the
    constraints, ``rest`` its own flow (modal where it applies: free beads
    are parabolas), so free beads never join the constrained flow's
    clusters. The interface of ``LinearFlow`` (full-size ``M``, ``C``,
    ``K``, ``A``, ``harmonics``; ``C`` and ``K`` sparse, ``M`` dense made on
    each access); made by :meth:`LinearBeadModel.flow`.
    """

    def __init__(self, model: Any, A: np.ndarray, b: np.ndarray, held: np.ndarray) -> None:
        n = len(model.f0)
        self.n = n
        self.masses, self.C, self.K = model.masses, model.damping, model.stiffness
        self.f0 = model.f0
        self.harmonics = model.harmonics
        self.A, self.b = A, b
        self.held = held
        self.rest = np.setdiff1d(np.arange(n), held)
        self.parts = tuple(
            _part_flow(model, idx, A[:, idx] if k == 0 else None, b if k == 0 else None)
            for k, idx in enumerate((self.held, self.rest))
        )
        self.max_rate = max(part.max_rate for part in self.parts)

    @property
    def M(self) -> np.ndarray:
        """Dense mass matrix (kg), shape (n, n), made on each access."""
        return np.diag(self.masses)

    def start(self, t0: float, q0: ArrayLike, v0: ArrayLike) -> SplitPhase:
        """The motion from ``(q0, v0)`` at time ``t0`` (s, m, m/s)."""
        q0 = _vector("q0", q0, self.n)
        v0 = _vector("v0", v0, self.n)
        idx = (self.held, self.rest)
        return SplitPhase(
            self,
            float(t0),
            [p.start(t0, q0[i], v0[i]) for p, i in zip(self.parts, idx, strict=True)],
        )


def _part_flow(model: Any, idx: np.ndarray, A: np.ndarray | None, b: np.ndarray | None) -> Any:
    """The flow of the beads ``idx`` of ``model`` alone (modal where it applies)."""
    M = model.masses[idx]
    C, K = (m[idx][:, idx] for m in (model.damping, model.stiffness))
    harmonics = [Harmonic(h.amplitude[idx], h.omega, h.phase) for h in model.harmonics]
    if A is None:
        flow = modal_flow(M, C, K, model.f0[idx], harmonics)
        if flow is not None:
            return flow
    return LinearFlow(M, C, K, model.f0[idx], harmonics, A, b)


def split_flow(model: Any, A: np.ndarray, b: np.ndarray) -> SplitFlow | None:
    """The :class:`SplitFlow` of ``model`` with constraints ``A q = b``, or None.

    None when every bead is held (joined to a constraint through springs,
    dampers and constraints). ``model`` a
    :class:`solver.linear_bead_model.LinearBeadModel` (diagonal mass matrix).
    """
    n = len(model.f0)
    links = abs(model.stiffness) + abs(model.damping)
    rows = np.abs(A) > 0.0
    # a constraint joins its beads: each to the next it reads (connected as the clique)
    ends = [np.nonzero(row)[0] for row in rows]
    first = np.concatenate([e[:-1] for e in ends] + [np.zeros(0, dtype=np.int64)])
    second = np.concatenate([e[1:] for e in ends] + [np.zeros(0, dtype=np.int64)])
    joined = scipy.sparse.csr_array((np.ones(len(first)), (first, second)), shape=(n, n))
    links = links + joined
    _, labels = scipy.sparse.csgraph.connected_components(links, directed=False)
    held_labels = np.unique(labels[rows.any(axis=0)])
    held = np.nonzero(np.isin(labels, held_labels))[0]
    if len(held) == n:
        return None
    return SplitFlow(model, A, b, held)


class SplitPhase:
    """Exact motion of a :class:`SplitFlow`: its two parts' phases side by side."""

    def __init__(self, flow: SplitFlow, t0: float, parts: list[Any]) -> None:
        self.flow = flow
        self.t0 = t0
        self.parts = parts

    def _join(self, values: list[np.ndarray]) -> np.ndarray:
        held, rest = values
        out = np.empty((*held.shape[:-1], self.flow.n))
        out[..., self.flow.held] = held
        out[..., self.flow.rest] = rest
        return out

    def kinematics(self, t: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Coordinates (m), velocities (m/s) and accelerations (m/s²) at ``t``."""
        held, rest = (p.kinematics(t) for p in self.parts)
        return tuple(self._join([h, r]) for h, r in zip(held, rest, strict=True))  # type: ignore[return-value]

    def state(self, t: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Coordinates (m) and velocities (m/s) at ``t``: ``(q, v)``."""
        held, rest = (p.state(t) for p in self.parts)
        return self._join([held[0], rest[0]]), self._join([held[1], rest[1]])

    def __call__(self, t: ArrayLike) -> np.ndarray:
        """``(q, v)`` stacked like :class:`scipy.integrate.OdeSolution`: (2n,) or (2n, k)."""
        q, v = self.state(t)
        return np.concatenate((q, v), axis=-1).T

    def acceleration(self, t: ArrayLike) -> np.ndarray:
        """Generalized accelerations ``q̈`` (m/s²) at ``t``."""
        return self._join([p.acceleration(t) for p in self.parts])

    def reaction(self, t: ArrayLike) -> np.ndarray:
        """Constraint multipliers ``λ`` (N) at ``t``: the held part's."""
        return self.parts[0].reaction(t)

    def initial_state(self) -> tuple[np.ndarray, np.ndarray]:
        """Coordinates (m) and velocities (m/s) at ``t0``."""
        held, rest = (p.initial_state() for p in self.parts)
        return self._join([held[0], rest[0]]), self._join([held[1], rest[1]])

    def projections(self, rows: Any) -> SplitProjections:
        """The projections ``rows @ q(t)`` (m): the sum of the parts'.

        ``rows`` dense or sparse; a part that is not modal reads them dense.
        """
        if not scipy.sparse.issparse(rows):
            rows = np.asarray(rows, dtype=float)
        parts = []
        for p, idx in zip(self.parts, (self.flow.held, self.flow.rest), strict=True):
            part = rows[:, idx]
            if scipy.sparse.issparse(part) and not isinstance(p, ModalPhase):
                part = part.toarray()
            parts.append(p.projections(part))
        return SplitProjections(parts)


class SplitProjections:
    """Projections of a :class:`SplitPhase`: sums of its parts' (interface of ``Projections``)."""

    def __init__(self, parts: list[Any]) -> None:
        self._parts = parts

    def value(self, k: int, t: float) -> float:
        """Projection ``k`` at time ``t`` (s), in the units of ``q`` (m)."""
        return sum(p.value(k, t) for p in self._parts)

    def rate(self, k: int, t: float) -> float:
        """Time derivative of projection ``k`` at ``t`` (s)."""
        return sum(p.rate(k, t) for p in self._parts)

    def kinematics(self, k: int, t: float) -> tuple[float, float, float]:
        """Projection ``k`` and its first two time derivatives at ``t`` (s)."""
        held, rest = (p.kinematics(k, t) for p in self._parts)
        return held[0] + rest[0], held[1] + rest[1], held[2] + rest[2]

    def curvature_bound(self, k: int, ta: float, tb: float) -> float | None:
        """A bound of ``|d²/dt²|`` of projection ``k`` over ``[ta, tb]`` (s), or None."""
        bounds = [p.curvature_bound(k, ta, tb) for p in self._parts]
        return None if any(b is None for b in bounds) else sum(bounds)
