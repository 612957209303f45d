"""The time-stepper's contact solver: the impulses of a step's closed contacts (MECHANICS §4).

:class:`StepContactSolver` is the part of
:class:`solver.timestepping.TimeSteppingStepper` that solves the velocity-level
LCP of a step with Moreau's Newton law and Coulomb friction on the 2-edge
cone: exactly (Lemke, started from the previous step's positive unknowns when
they still give a solution) up to ``EXACT_CONTACTS`` closed contacts,
frictionless chains on their banded Delassus matrix (block principal pivoting),
and the rest by projected Gauss–Seidel warm-started from the previous step's
impulses. It owns what is carried from step to step: the last basis and the
last impulses by contact key.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from solver import chain_lcp, gauss_seidel
from solver.complementarity import banded_lcp, lemke
from solver.contact_arrays import SparseRows
from solver.errors import SolverError
from solver.timestep_contacts import Closed

ROUND_OFF = 1e-13
"""Relative size below which a free contact speed in the LCP is round-off and set to 0."""

EXACT_CONTACTS = 8
"""Most closed contacts whose LCP is solved exactly (Lemke); more go to Gauss–Seidel."""

BAND_MAX = 8
"""Widest band of a frictionless Delassus matrix solved exactly (block principal pivoting)."""

PGS_TOL = 1e-10
"""Gauss–Seidel stops when no impulse changed by more than this share of the largest."""

PGS_MAX_SWEEPS = 50
"""Most Gauss–Seidel sweeps per step."""

CONTACT_SOLVERS = ("auto", "lemke", "pgs")


class StepContactSolver:
    """Impulses of the closed contacts of one step after another.

    Parameters
    ----------
    m_inv : numpy.ndarray
        The inverse of the diagonal mass matrix (1/kg, 1/(kg m²)).
    contact_solver : {"auto", "lemke", "pgs"}
        See :class:`solver.timestepping.TimeSteppingStepper`.
    compiled : bool
        Banded contacts by the compiled :mod:`solver.chain_lcp` (else numpy and scipy).
    names : callable
        ``names(i, j, feature)``: the scene ids of a contact (for messages).
    """

    def __init__(
        self,
        m_inv: np.ndarray,
        contact_solver: str,
        compiled: bool,
        names: Callable[[int, int, int], tuple[str, str]],
    ) -> None:
        self._m_inv = m_inv
        self.contact_solver = contact_solver
        self.compiled = compiled
        self.names = names
        self._basis_keys = np.zeros(0, dtype=np.int64)  # contacts of the last LCP solved
        self._basis = np.zeros(0, dtype=bool)  # its unknowns that were positive
        self._warm_keys = np.zeros(0, dtype=np.int64)  # sorted keys of the last impulses
        self._warm = np.zeros((0, 2))  # their (Λ_n, Λ_t), N·s

    def forget_basis(self) -> None:
        """Steps were solved elsewhere (the compiled loop): the last basis is unknown."""
        self._basis_keys = np.zeros(0, dtype=np.int64)

    def keep_impulses(self, keys: np.ndarray, impulses: np.ndarray) -> None:
        """The last impulses ``(Λ_n, Λ_t)`` (N·s) of the contacts ``keys``, sorted by key."""
        self._warm_keys, self._warm = keys, impulses

    def solve(
        self, closed: Closed, v: np.ndarray, v_free: np.ndarray, t: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Impulses ``(Λ_n, Λ_t)`` (N·s) of the closed contacts and the end-of-step velocity."""
        exact = self.contact_solver == "lemke" or (
            self.contact_solver == "auto" and len(closed) <= EXACT_CONTACTS
        )
        if exact:
            return self._solve_contact_lcp(closed, v, v_free, t)
        if self.contact_solver == "auto" and not np.any(closed.friction > 0.0):
            solution = self._solve_banded(closed, v, v_free)
            if solution is not None:
                return solution
        return self._solve_by_gauss_seidel(closed, v, v_free)

    def _solve_banded(
        self, closed: Closed, v: np.ndarray, v_free: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Frictionless contacts whose Delassus matrix is banded (a chain): solved exactly.

        ``W = G M⁻¹ Gᵀ`` is assembled sparse; when its bandwidth in contact
        order is at most ``BAND_MAX`` the LCP
        ``Λ_n ≥ 0 ⊥ W Λ_n + u_free + e u⁻ ≥ 0`` goes to
        :func:`complementarity.banded_lcp` (block principal pivoting, one
        banded Cholesky per pivot), starting from the contacts that pressed
        at the last step (new ones: those not separating). ``None`` when the
        band is wider, ``W`` is singular (dependent contacts) or the pivoting
        does not finish: then Gauss–Seidel decides.
        """
        if self.compiled:
            return self._solve_banded_compiled(closed, v, v_free)
        G = closed.G.to_csr()
        W = (G @ sp.diags_array(self._m_inv) @ G.T).tocoo()
        upper = W.row <= W.col
        rows, cols, values = W.row[upper], W.col[upper], W.data[upper]
        bandwidth = int(np.max(cols - rows, initial=0))
        if bandwidth > BAND_MAX:
            return None
        band = np.zeros((bandwidth + 1, len(closed)))
        band[bandwidth + rows - cols, cols] = values
        q = _without_round_off(G @ v_free + closed.restitution * (G @ v))
        initial = self._warm_active(closed, q <= 0.0)
        try:
            result = banded_lcp(band, q, initial_free=initial)
        except SolverError:
            return None
        if result.status != "solved":
            return None
        impulse_n = result.z
        self._keep_warm(closed, impulse_n, np.zeros(len(closed)))
        return impulse_n, np.zeros(len(closed)), v_free + self._m_inv * (G.T @ impulse_n)

    def _solve_banded_compiled(
        self, closed: Closed, v: np.ndarray, v_free: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """:meth:`_solve_banded` in one compiled call (:mod:`solver.chain_lcp`)."""
        G = closed.G
        q = _without_round_off(G.dot(v_free) + closed.restitution * G.dot(v))
        initial = self._warm_active(closed, q <= 0.0)
        impulse_n = np.zeros(len(closed))
        outcome = chain_lcp.compiled_banded_contact_lcp()(
            G.cols, G.values, self._m_inv, q, initial, BAND_MAX, impulse_n
        )
        if outcome != chain_lcp.SOLVED:
            return None
        self._keep_warm(closed, impulse_n, np.zeros(len(closed)))
        return impulse_n, np.zeros(len(closed)), v_free + self._m_inv * G.transpose_dot(impulse_n)

    def _warm_active(self, closed: Closed, initial: np.ndarray) -> np.ndarray:
        """``initial`` where the last impulses are known: whether those contacts pressed."""
        if len(self._warm_keys):
            at = np.minimum(np.searchsorted(self._warm_keys, closed.keys), len(self._warm_keys) - 1)
            known = self._warm_keys[at] == closed.keys
            initial[known] = self._warm[at[known], 0] > 0.0
        return initial

    def _keep_warm(self, closed: Closed, impulse_n: np.ndarray, impulse_t: np.ndarray) -> None:
        """Keep the impulses by contact key, the start of the next step's solve."""
        order = np.argsort(closed.keys)
        self._warm_keys = closed.keys[order]
        self._warm = np.column_stack((impulse_n, impulse_t))[order]

    def _solve_by_gauss_seidel(
        self, closed: Closed, v: np.ndarray, v_free: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Projected Gauss–Seidel on the sparse Delassus operator, warm-started by pair."""
        G, H = closed.G, closed.H
        m_inv = self._m_inv
        w_nn = G.diagonal_gram(m_inv)
        w_tt = H.diagonal_gram(m_inv)
        solvable = w_nn > 0.0  # a bead pressed across its rail: the rail takes it all
        mu = np.where(w_tt > 0.0, closed.friction, 0.0)
        impulse_n = np.zeros(len(closed))
        impulse_t = np.zeros(len(closed))
        if len(self._warm_keys):
            at = np.minimum(np.searchsorted(self._warm_keys, closed.keys), len(self._warm_keys) - 1)
            known = self._warm_keys[at] == closed.keys
            impulse_n[known] = self._warm[at[known], 0]
            impulse_t[known] = np.clip(self._warm[at[known], 1], -mu[known] * impulse_n[known],
                                       mu[known] * impulse_n[known])  # fmt: skip
        impulse_n[~solvable] = 0.0
        impulse_t[~solvable] = 0.0
        v_next = v_free + m_inv * (G.transpose_dot(impulse_n) + H.transpose_dot(impulse_t))
        rows = np.flatnonzero(solvable)
        lam_n, lam_t = impulse_n[rows], impulse_t[rows]
        gauss_seidel.sweeps(
            G.cols[rows], G.values[rows], H.cols[rows], H.values[rows], m_inv,
            closed.restitution[rows] * G.dot(v)[rows], mu[rows], w_nn[rows],
            np.where(w_tt[rows] > 0.0, w_tt[rows], 1.0), lam_n, lam_t, v_next,
            PGS_TOL, PGS_MAX_SWEEPS,
        )  # fmt: skip
        impulse_n[rows], impulse_t[rows] = lam_n, lam_t
        self._keep_warm(closed, impulse_n, impulse_t)
        return impulse_n, impulse_t, v_next

    def _solve_contact_lcp(
        self, closed: Closed, v: np.ndarray, v_free: np.ndarray, t: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The exact LCP of the closed contacts (2-edge friction cone) on their own coordinates.

        Returns
        -------
        impulse_n : (n,) normal impulses Λ_n, N·s
        impulse_t : (n,) tangential impulses Λ_t along each contact's ``t``, N·s
        v_next : (N,) velocity at the end of the step
        """
        n = len(closed)
        rubbing = np.flatnonzero(closed.friction > 0.0)
        m = len(rubbing)
        # the coordinates the contacts touch, and their rows restricted to them (dense)
        dofs = np.unique(np.concatenate((closed.G.cols.ravel(), closed.H.cols.ravel())))
        G = _local_columns(closed.G, dofs)
        H = _local_columns(closed.H, dofs)[:, rubbing]
        B = np.hstack((G, H, -H))
        m_inv = self._m_inv[dofs]
        A = B.T @ (m_inv[:, None] * B)
        size = n + 3 * m
        lcp_matrix = np.zeros((size, size))
        lcp_matrix[: n + 2 * m, : n + 2 * m] = A
        identity = np.eye(m)
        lcp_matrix[n : n + m, n + 2 * m :] = identity
        lcp_matrix[n + m : n + 2 * m, n + 2 * m :] = identity
        lcp_matrix[n + 2 * m :, n : n + m] = -identity
        lcp_matrix[n + 2 * m :, n + m : n + 2 * m] = -identity
        lcp_matrix[n + 2 * m + np.arange(m), rubbing] = closed.friction[rubbing]
        u_t_free = H.T @ v_free[dofs]
        lcp_q = np.concatenate(
            (
                G.T @ v_free[dofs] + closed.restitution * (G.T @ v[dofs]),
                u_t_free,
                -u_t_free,
                np.zeros(m),
            )
        )
        if np.all(lcp_q[:n] >= 0.0):  # the free motion already obeys the impact law
            self._basis_keys = np.zeros(0, dtype=np.int64)
            return np.zeros(n), np.zeros(n), v_free
        # Speeds at round-off level are zero: this keeps Lemke's first pivot unambiguous.
        lcp_q[np.abs(lcp_q) <= ROUND_OFF * max(1.0, float(np.max(np.abs(lcp_q))))] = 0.0
        z = self._solve_on_previous_basis(closed.keys, lcp_matrix, lcp_q)
        if z is None:
            result = lemke(lcp_matrix, lcp_q)
            if result.status != "solved":
                rows = closed.rows
                names = ", ".join(
                    "–".join(self.names(int(rows.i[k]), int(rows.j[k]), int(rows.feature[k])))
                    for k in range(len(closed))
                )
                raise SolverError(
                    f"the contact LCP has no solution ({result.status}) at t = {t!r} s "
                    f"for the contacts {names}"
                )
            z = result.z
        self._basis_keys, self._basis = closed.keys, z > 0.0
        impulses = z[: n + 2 * m]
        v_next = v_free.copy()
        v_next[dofs] += m_inv * (B @ impulses)
        impulse_t = np.zeros(n)
        impulse_t[rubbing] = impulses[n : n + m] - impulses[n + m : n + 2 * m]
        return impulses[:n], impulse_t, v_next

    def _solve_on_previous_basis(
        self, keys: np.ndarray, lcp_matrix: np.ndarray, lcp_q: np.ndarray
    ) -> np.ndarray | None:
        """The LCP solution when the last step's positive unknowns are again the positive ones.

        In persistent contact the same unknowns stay positive from step to
        step, so one linear solve on that set replaces Lemke's pivoting. The
        answer is accepted only when it satisfies the LCP to round-off;
        otherwise ``None`` is returned and Lemke decides.
        """
        if not np.array_equal(self._basis_keys, keys):
            return None
        basic = self._basis
        z = np.zeros(len(lcp_q))
        if basic.any():
            try:
                z[basic] = np.linalg.solve(lcp_matrix[np.ix_(basic, basic)], -lcp_q[basic])
            except np.linalg.LinAlgError:
                return None
        w = lcp_matrix @ z + lcp_q
        tol = ROUND_OFF * max(1.0, float(np.max(np.abs(lcp_q))))
        if np.all(z >= 0.0) and np.all(w[~basic] >= -tol):
            return z
        return None


def _without_round_off(speeds: np.ndarray) -> np.ndarray:
    """``speeds`` (m/s) with those at round-off level (``ROUND_OFF``, relative) set to 0.

    Beads of a chain moving together touch at speeds of 1e-18 m/s of either
    sign; taken as they are, the pivoting would chase their signs.
    """
    scale = ROUND_OFF * max(1.0, float(np.max(np.abs(speeds), initial=0.0)))
    return np.where(np.abs(speeds) <= scale, 0.0, speeds)


def _local_columns(rows: SparseRows, dofs: np.ndarray) -> np.ndarray:
    """The rows as dense columns over the coordinates ``dofs`` (sorted): shape (len(dofs), K)."""
    out = np.zeros((len(dofs), len(rows.cols)))
    K, W = rows.cols.shape
    np.add.at(out, (np.searchsorted(dofs, rows.cols.ravel()), np.repeat(np.arange(K), W)),
              rows.values.ravel())  # fmt: skip
    return out
