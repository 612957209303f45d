"""Contact forces during smooth motion: the acceleration-level problem of MECHANICS §2.

For the active contacts (``g = 0``, ``u_n = 0``) the accelerations solve
(paper 002, Gauss' principle; paper 004 (25) with friction)

    M q̈ = f + Σ G_i λ_i − Σ μ_i λ_i τ_i H_i,
    λ_i ≥ 0 ⊥ a_n,i = G_iᵀ q̈ + gamma_n,i ≥ 0,
    τ_i = sign(u_t,i) when sliding, τ_i ∈ [−1, 1] opposing a_t,i when sticking.

In the plane the friction cone of a sticking contact has two edges, so the
whole problem is a linear complementarity problem. With the tangential force
``β = β⁺ − β⁻`` (N, along ``t``) and the slack ``σ`` (m/s², the magnitude of
a starting slip) of every sticking contact with ``μ > 0``:

    β⁺ ≥ 0 ⊥ σ + a_t ≥ 0,    β⁻ ≥ 0 ⊥ σ − a_t ≥ 0,    σ ≥ 0 ⊥ μλ − β⁺ − β⁻ ≥ 0.

``solve_contact_problem`` solves it exactly with Lemke's method (it decides
which contacts carry force and which stick); ``solve_with_modes`` solves the
equality system of a smooth phase whose contact set and modes are fixed
(``a_n = 0`` for every contact, ``a_t = 0`` for the sticking ones), whose
``λ`` and friction the event-driven stepper watches for sign changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from scipy.optimize import linprog

from solver.complementarity import least_distance, lemke
from solver.errors import SolverError

SLIP_SPEED_TOL = 1e-9
"""Slip speed |u_t| (m/s) below which a contact counts as sticking."""
ACCELERATION_TOL = 1e-9
"""Relative size of a normal or tangential acceleration treated as zero."""
FORCE_EVENT_TOL = 1e-9
"""Relative size (of ``1 + max |λ|``, N) by which a λ, or a sticking contact's
friction margin ``μλ − |β|`` over ``μ``, may be negative before it is an event."""


class ContactLike(Protocol):
    """What the contact problem reads from a ``system.Contact``."""

    body: str
    other: str
    G: np.ndarray
    H: np.ndarray
    u_t: float
    gamma_n: float
    gamma_t: float
    friction: float


@dataclass(frozen=True)
class ContactForces:
    """Accelerations and contact forces of one instant.

    Attributes
    ----------
    qdd : numpy.ndarray
        Generalized accelerations q̈, shape (N,) (m/s², rad/s²).
    lam : numpy.ndarray
        Normal force λ_i ≥ 0 per contact (N).
    tau : numpy.ndarray
        Friction multiplier τ_i ∈ [−1, 1]: the friction force is ``−μ λ τ`` along ``t``.
    a_n, a_t : numpy.ndarray
        Normal and tangential contact accelerations (m/s²).
    modes : tuple of str
        ``"stick"``, ``"slip+"`` or ``"slip-"`` per contact (slip+ : the contact
        point slides along +t, friction pushes along −t).
    friction_force : numpy.ndarray
        Tangential friction force ``−μ λ τ`` per contact (N).
    """

    qdd: np.ndarray
    lam: np.ndarray
    tau: np.ndarray
    a_n: np.ndarray
    a_t: np.ndarray
    modes: tuple[str, ...]
    friction_force: np.ndarray


def _apply(M_inv: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``M⁻¹ x`` for a full inverse (N, N) or the diagonal (N,) of a diagonal one."""
    if M_inv.ndim == 1:
        return x * (M_inv if x.ndim == 1 else M_inv[:, None])
    return M_inv @ x


def _slip_sign(contact: ContactLike, mode: str | None) -> float:
    """+1 / −1 for a sliding contact, 0 for a sticking or frictionless one."""
    if contact.friction <= 0.0:
        return 0.0
    if mode is not None:
        return {"slip+": 1.0, "slip-": -1.0}.get(mode, 0.0)
    if abs(contact.u_t) > SLIP_SPEED_TOL:
        return float(np.sign(contact.u_t))
    return 0.0


def _row_times(contact: ContactLike, row: str, x: np.ndarray) -> float:
    """``contact.G @ x`` (``row = "G"``) or ``contact.H @ x`` (``"H"``).

    A ``system.Contact`` holds its rows sparsely (``dofs``, ``G_local``,
    ``H_local``): the product is taken over those coordinates, without
    making (and caching) a row of length N per contact — N × contacts
    numbers for a long resting chain.
    """
    dofs = getattr(contact, "dofs", None)
    if dofs is None:
        return float(getattr(contact, row) @ x)
    return float(getattr(contact, f"{row}_local") @ x[dofs])


def _held_as_arrays(contacts: Sequence[ContactLike]) -> bool:
    """Whether ``contacts`` hold their rows as arrays: ``dofs``, ``G_local``, ``H_local`` of
    shape (K, w), ``gamma_n``, ``gamma_t``, ``friction`` of shape (K,)
    (:class:`solver.contact_pairs.RailContacts`, a chain's contacts)."""
    dofs = getattr(contacts, "dofs", None)
    return isinstance(dofs, np.ndarray) and dofs.ndim == 2


def _rows_times(contacts: Any, row: str, x: np.ndarray) -> np.ndarray:
    """:func:`_row_times` of every contact held as arrays: ``Σ_w row[k, w] x[dofs[k, w]]``."""
    return np.sum(getattr(contacts, f"{row}_local") * x[contacts.dofs], axis=1)


def _describe(contact: ContactLike) -> str:
    return f"contact of {contact.body!r} with {contact.other!r}"


def _assemble(
    contacts: Sequence[ContactLike], signs: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Columns G, H, the normal-force directions W = G − μ s H, and γ_n, γ_t."""
    G = np.column_stack([c.G for c in contacts])
    H = np.column_stack([c.H for c in contacts])
    mu = np.array([c.friction for c in contacts])
    W = G - H * (mu * signs)
    gamma_n = np.array([c.gamma_n for c in contacts])
    gamma_t = np.array([c.gamma_t for c in contacts])
    return G, H, W, gamma_n, gamma_t


def _result(
    contacts: Sequence[ContactLike],
    qdd: np.ndarray,
    a_free: np.ndarray,
    lam: np.ndarray,
    beta: np.ndarray,
    signs: np.ndarray,
    G: np.ndarray,
    H: np.ndarray,
    gamma_n: np.ndarray,
    gamma_t: np.ndarray,
) -> ContactForces:
    """Package the solution; ``beta`` is the tangential force of sticking contacts (0 elsewhere)."""
    mu = np.array([c.friction for c in contacts])
    a_n = G.T @ qdd + gamma_n
    a_t = H.T @ qdd + gamma_t
    friction_force = np.where(signs != 0.0, -mu * lam * signs, beta)
    bound = mu * lam
    tau = np.zeros(len(contacts))
    free_n = G.T @ a_free + gamma_n
    free_t = H.T @ a_free + gamma_t
    scale = ACCELERATION_TOL * (1.0 + np.abs(free_n).max() + np.abs(free_t).max())
    modes = []
    for i in range(len(contacts)):
        if signs[i] != 0.0:
            tau[i] = signs[i]
            modes.append("slip+" if signs[i] > 0 else "slip-")
            continue
        if bound[i] > 0.0:
            tau[i] = float(np.clip(-beta[i] / bound[i], -1.0, 1.0))
        if contacts[i].friction > 0.0 and abs(a_t[i]) > scale:
            tau[i] = 1.0 if a_t[i] > 0 else -1.0
            modes.append("slip+" if a_t[i] > 0 else "slip-")
        else:
            modes.append("stick")
    return ContactForces(qdd, lam, tau, a_n, a_t, tuple(modes), friction_force)


def solve_contact_problem(
    contacts: Sequence[ContactLike],
    M_inv: np.ndarray,
    f: np.ndarray,
    modes: Sequence[str | None] | None = None,
) -> ContactForces:
    """Solve MECHANICS §2 exactly (Lemke) for the given active contacts.

    Parameters
    ----------
    contacts : sequence of Contact
        The active contacts (``g = 0``, ``u_n = 0``), each with ``G``, ``H``
        (N,), ``u_t`` (m/s), ``gamma_n``, ``gamma_t`` (m/s²) and ``friction`` μ.
    M_inv : numpy.ndarray
        Inverse mass matrix (N, N), or its diagonal (N,) when M is diagonal.
    f : numpy.ndarray
        Applied generalized force (N,) (N or N·m).
    modes : sequence of str or None, optional
        Per contact ``"slip+"`` / ``"slip-"`` to impose a sliding direction,
        ``"stick"`` or ``None`` to decide from ``u_t`` (sliding when
        ``|u_t| > SLIP_SPEED_TOL``, else the friction cone).

    Returns
    -------
    ContactForces
        A sticking contact that must start to slide (its friction is at
        ``μλ`` and ``a_t ≠ 0``) is reported as ``"slip+"`` / ``"slip-"`` in
        the direction of ``a_t``.

    Raises
    ------
    SolverError
        When the LCP has no solution (Painlevé-type inconsistency) or Lemke's
        method stops at its iteration limit; the message names the contacts.
    """
    f = np.asarray(f, dtype=float)
    if not contacts:
        qdd = _apply(M_inv, f)
        empty = np.zeros(0)
        return ContactForces(qdd, empty, empty, empty, empty, (), empty)
    m = len(contacts)
    a_free = _apply(M_inv, f)
    arrays = _held_as_arrays(contacts)
    if m == 1 and not arrays and M_inv.ndim == 1:
        # one contact: the test below in floats, the closed form if it presses
        contact = contacts[0]
        if not _row_times(contact, "G", a_free) + contact.gamma_n >= 0.0:
            mode = None if modes is None else modes[0]
            one = _one_contact_problem(contact, _slip_sign(contact, mode), M_inv, a_free)
            if one is not None:
                return one
    if arrays:
        free_n = _rows_times(contacts, "G", a_free) + contacts.gamma_n  # type: ignore[attr-defined]
    else:
        free_n = np.array([_row_times(c, "G", a_free) + c.gamma_n for c in contacts])
    if np.all(free_n >= 0.0):
        # nothing presses: λ = 0 (with σ = |a_t| the friction rows hold too)
        empty = np.zeros(m)
        if arrays:
            free_t = _rows_times(contacts, "H", a_free) + contacts.gamma_t  # type: ignore[attr-defined]
            friction = contacts.friction.tolist()  # type: ignore[attr-defined]
        else:
            free_t = np.array([_row_times(c, "H", a_free) + c.gamma_t for c in contacts])
            friction = [c.friction for c in contacts]
        modes_free = tuple(
            "stick" if mu <= 0.0 or a == 0.0 else ("slip+" if a > 0 else "slip-")
            for mu, a in zip(friction, free_t.tolist(), strict=True)
        )
        return ContactForces(a_free, empty, empty.copy(), free_n, free_t, modes_free, empty.copy())
    contacts = list(contacts)  # contacts held as arrays are made here: something presses
    if modes is None:
        modes = [None] * m
    if m == 1 and M_inv.ndim == 1:
        one = _one_contact_problem(contacts[0], _slip_sign(contacts[0], modes[0]), M_inv, a_free)
        if one is not None:
            return one
    signs = np.array([_slip_sign(c, mode) for c, mode in zip(contacts, modes, strict=True)])
    G, H, W, gamma_n, gamma_t = _assemble(contacts, signs)
    stick = [i for i, c in enumerate(contacts) if signs[i] == 0.0 and c.friction > 0.0]
    k = len(stick)
    Hs = H[:, stick]
    mu_s = np.array([contacts[i].friction for i in stick])
    # force directions of the unknowns z = [λ, β⁺, β⁻, σ] (σ carries no force)
    D = np.hstack([W, Hs, -Hs, np.zeros((W.shape[0], k))])
    MinvD = _apply(M_inv, D)
    rows_n = G.T
    rows_t = Hs.T
    A = np.zeros((m + 3 * k, m + 3 * k))
    q = np.zeros(m + 3 * k)
    A[:m] = rows_n @ MinvD
    q[:m] = rows_n @ a_free + gamma_n
    if k:
        at_A = rows_t @ MinvD
        at_q = rows_t @ a_free + gamma_t[stick]
        eye = np.eye(k)
        A[m : m + k] = at_A
        A[m : m + k, m + 2 * k :] += eye
        q[m : m + k] = at_q
        A[m + k : m + 2 * k] = -at_A
        A[m + k : m + 2 * k, m + 2 * k :] += eye
        q[m + k : m + 2 * k] = -at_q
        A[m + 2 * k :, stick] = np.diag(mu_s)
        A[m + 2 * k :, m : m + k] = -eye
        A[m + 2 * k :, m + k : m + 2 * k] = -eye
    result = lemke(A, q)
    if result.status != "solved":
        names = ", ".join(_describe(c) for c in contacts)
        raise SolverError(
            f"no consistent contact forces for the {names} (Lemke: {result.status} after "
            f"{result.iterations} pivots): a Painlevé-type inconsistency of friction and contact"
        )
    z = np.maximum(np.asarray(result.z, dtype=float), 0.0)
    lam = z[:m]
    beta = np.zeros(m)
    beta[stick] = z[m : m + k] - z[m + k : m + 2 * k]
    qdd = a_free + MinvD @ z
    return _result(contacts, qdd, a_free, lam, beta, signs, G, H, gamma_n, gamma_t)


def frictionless_multiplier(contact: ContactLike, M_inv: np.ndarray, f: np.ndarray) -> float:
    """``λ`` (N) of :func:`solve_contact_problem` for one frictionless contact, diagonal ``M⁻¹``.

    The same arithmetic: ``0.0`` when the free normal acceleration
    ``G·M⁻¹f + γ_n`` does not press, else ``λ = −free_n/(GᵀM⁻¹G)``
    (:func:`_one_contact_problem`; the rest of its answer is not formed),
    and where that has no positive denominator the general solution's.
    ``M_inv`` is the diagonal (N,), ``f`` the applied force (N,).
    """
    a_free = f * M_inv  # _apply of a diagonal
    if _row_times(contact, "G", a_free) + contact.gamma_n >= 0.0:
        return 0.0
    G = contact.G
    A = float(G @ (M_inv * G))
    if not A > 0.0:
        return float(solve_contact_problem([contact], M_inv, f).lam[0])
    return -(float(G @ a_free) + contact.gamma_n) / A


def _one_contact_problem(
    contact: ContactLike, sign: float, M_inv: np.ndarray, a_free: np.ndarray
) -> ContactForces | None:
    """:func:`solve_contact_problem` for one pressed contact and a diagonal ``M⁻¹``, in closed form.

    The LCP of one contact has a single unknown per friction case, so its
    solution is one of three candidates, each checked against every
    condition of the LCP (``free_n = G·a_free + γ_n < 0`` here):

    * sliding (``sign = ±1``) or frictionless: ``λ = −free_n/(G·M⁻¹W)``,
      ``W = G − μ·sign·H``, valid when ``G·M⁻¹W > 0``;
    * sticking: ``a_n = 0``, ``a_t = 0`` solved for ``(λ, β)`` by Cramer's
      rule, valid when ``λ > 0`` and ``|β| < μλ``;
    * else a slip starting in the direction ``s = ±1``: ``β = −μ s λ`` with
      ``λ = −free_n/(G·M⁻¹(G − μ s H))``, valid when ``λ > 0`` and the
      tangential acceleration ``a_t`` has the sign ``s`` (σ = |a_t| ≥ 0).

    None when no candidate, or more than one slip direction, passes (a
    Painlevé-type problem, a singular system, a tie at the cone's edge):
    Lemke's method then answers or reports the inconsistency. The answer is
    packaged as Lemke's is (:func:`_result`), with the solution's bits of
    the closed form rather than of the pivots (equal to rounding).
    """
    G, H = contact.G, contact.H
    mu = contact.friction
    free_n = float(G @ a_free) + contact.gamma_n
    MinvG = M_inv * G
    beta = 0.0
    if sign != 0.0 or mu <= 0.0:
        MinvW = M_inv * (G - H * (mu * sign)) if mu > 0.0 else MinvG
        A = float(G @ MinvW)
        if not A > 0.0:
            return None
        lam = -free_n / A
        qdd = a_free + MinvW * lam
    else:
        free_t = float(H @ a_free) + contact.gamma_t
        MinvH = M_inv * H
        A_nn, A_nt = float(G @ MinvG), float(G @ MinvH)
        A_tn, A_tt = float(H @ MinvG), float(H @ MinvH)
        det = A_nn * A_tt - A_nt * A_tn
        stuck = None
        if abs(det) > 1e-12 * (abs(A_nn * A_tt) + abs(A_nt * A_tn)):
            lam = (A_nt * free_t - A_tt * free_n) / det
            beta = (A_tn * free_n - A_nn * free_t) / det
            if lam > 0.0 and abs(beta) < mu * lam:
                stuck = (lam, beta)
        if stuck is None:
            starts = []
            for s in (1.0, -1.0):
                A_s = A_nn - mu * s * A_nt
                if not A_s > 0.0:
                    continue
                lam_s = -free_n / A_s
                a_t = free_t + A_tn * lam_s - mu * s * A_tt * lam_s
                if lam_s > 0.0 and a_t * s > 0.0:
                    starts.append((lam_s, -mu * s * lam_s))
            if len(starts) != 1:
                return None
            stuck = starts[0]
        lam, beta = stuck
        qdd = a_free + MinvG * lam + MinvH * beta
    return _one_result(contact, qdd, a_free, lam, beta, sign if mu > 0.0 else 0.0)


def _one_result(
    contact: ContactLike,
    qdd: np.ndarray,
    a_free: np.ndarray,
    lam: float,
    beta: float,
    sign: float,
) -> ContactForces:
    """:func:`_result` of one contact, in floats: the same operations, the same bits.

    ``sign`` is the slip sign (0 for sticking or frictionless), ``beta`` the
    tangential force of a sticking contact (N).
    """
    G, H = contact.G, contact.H
    mu = contact.friction
    a_n = float(G @ qdd) + contact.gamma_n
    a_t = float(H @ qdd) + contact.gamma_t
    free_n = float(G @ a_free) + contact.gamma_n
    free_t = float(H @ a_free) + contact.gamma_t
    scale = ACCELERATION_TOL * (1.0 + abs(free_n) + abs(free_t))
    tau = 0.0
    if sign != 0.0:
        tau, mode = sign, "slip+" if sign > 0 else "slip-"
        friction_force = -mu * lam * sign
    else:
        bound = mu * lam
        if bound > 0.0:
            tau = float(np.clip(-beta / bound, -1.0, 1.0))
        mode = "stick"
        if mu > 0.0 and abs(a_t) > scale:
            tau, mode = (1.0, "slip+") if a_t > 0 else (-1.0, "slip-")
        friction_force = beta
    return ContactForces(
        qdd,
        np.array([lam]),
        np.array([tau]),
        np.array([a_n]),
        np.array([a_t]),
        (mode,),
        np.array([friction_force]),
    )


def solve_with_modes(
    contacts: Sequence[ContactLike],
    modes: Sequence[str],
    M_inv: np.ndarray,
    f: np.ndarray,
) -> ContactForces:
    """Contact forces of a smooth phase with a fixed contact set and fixed modes.

    Every contact is held bilaterally (``a_n = 0``); a ``"stick"`` contact
    with friction also keeps ``a_t = 0`` with a free tangential force; a
    sliding contact carries ``−μ λ τ`` with ``τ = ±1`` from its mode. The
    stepper ends the phase when a ``λ`` turns negative or a sticking
    friction force leaves the cone, so the forces returned here may lie
    outside the admissible set by the amount the event finder needs to see.
    Where the forces are statically indeterminate (a ball wedged in a corner,
    sticking on both), the member returned is admissible whenever one is
    (:func:`_admissible_member`): a negative λ or a force outside its cone
    then means that no admissible member exists.

    Parameters
    ----------
    contacts : sequence of Contact
        The active contacts.
    modes : sequence of str
        ``"stick"``, ``"slip+"`` or ``"slip-"`` per contact.
    M_inv : numpy.ndarray
        Inverse mass matrix (N, N), or its diagonal (N,) when M is diagonal.
    f : numpy.ndarray
        Applied generalized force (N,).

    Returns
    -------
    ContactForces
        ``tau`` of a sticking contact is ``−β/(μλ)`` unclipped in spirit (|τ| > 1
        means the friction needed exceeds the cone); it is clipped to [−1, 1]
        in ``tau`` and the raw tangential force is in ``friction_force``.
    """
    f = np.asarray(f, dtype=float)
    a_free = _apply(M_inv, f)
    if not contacts:
        empty = np.zeros(0)
        return ContactForces(a_free, empty, empty, empty, empty, (), empty)
    if len(contacts) == 1 and M_inv.ndim == 1:
        if contacts[0].friction == 0.0:
            one = _one_frictionless(contacts[0], M_inv, a_free)
        else:
            one = _one_with_mode(contacts[0], _slip_sign(contacts[0], modes[0]), M_inv, a_free)
        if one is not None:
            return one
    m = len(contacts)
    signs = np.array([_slip_sign(c, mode) for c, mode in zip(contacts, modes, strict=True)])
    G, H, W, gamma_n, gamma_t = _assemble(contacts, signs)
    stick = [i for i, c in enumerate(contacts) if signs[i] == 0.0 and c.friction > 0.0]
    D = np.hstack([W, H[:, stick]])
    rows = np.hstack([G, H[:, stick]]).T
    MinvD = _apply(M_inv, D)
    A = rows @ MinvD
    b = rows @ a_free + np.concatenate([gamma_n, gamma_t[stick]])
    x0, _, rank, _ = np.linalg.lstsq(A, -b, rcond=1e-12)
    x = x0
    if rank < len(x0):
        # more force unknowns than the motion fixes (statically indeterminate): the
        # members x0 + null(D) move alike; an admissible one is taken if there is one
        x = _admissible_member(x0, D, m, *_margin_rows(contacts, stick, m))
    lam = x[:m]
    beta = np.zeros(m)
    beta[stick] = x[m:]
    qdd = a_free + MinvD @ x0
    return _result(contacts, qdd, a_free, lam, beta, signs, G, H, gamma_n, gamma_t)


def _margin_rows(
    contacts: Sequence[ContactLike], stick: list[int], m: int
) -> tuple[np.ndarray, np.ndarray]:
    """The margins of a fixed-mode phase as rows ``C`` on its unknowns ``x = [λ, β_stick]``.

    ``C x`` holds ``λ_i`` for every contact, then ``μλ_s − β_s`` and
    ``μλ_s + β_s`` for every sticking contact with friction: all are
    ``≥ 0`` exactly when the forces are admissible (``λ ≥ 0``, ``|β| ≤ μλ``).
    ``weight`` is the factor of the event tolerance each may fall short by
    (1 for a λ, μ for a friction margin), as the stepper's event functions allow.
    """
    k = len(stick)
    C = np.zeros((m + 2 * k, m + k))
    C[:m, :m] = np.eye(m)
    weight = np.ones(m + 2 * k)
    for j, i in enumerate(stick):
        mu = contacts[i].friction
        C[m + 2 * j : m + 2 * j + 2, i] = mu
        C[m + 2 * j, m + j], C[m + 2 * j + 1, m + j] = -1.0, 1.0
        weight[m + 2 * j : m + 2 * j + 2] = mu
    return C, weight


def _admissible_member(
    x0: np.ndarray, D: np.ndarray, m: int, C: np.ndarray, weight: np.ndarray
) -> np.ndarray:
    """An admissible member of the forces ``x0 + null(D)`` of a fixed-mode phase.

    ``D`` (N, n) maps the unknowns ``x = [λ, β_stick]`` (``m`` normal forces
    first, N) to generalized forces, so every ``x0 + z`` with ``D z = 0`` (a
    self-equilibrated set of contact forces, a *self-stress*: a ball wedged
    between a slope and a wall, beads jammed between two stops) gives the
    same accelerations. Rigid contact does not say which member acts; the
    phase assumes only that an admissible one exists (the complementarity
    of the contact LCP: every λ ≥ 0, every sticking force in its cone). So
    the member returned is

    * ``x0`` (the least-squares, minimum-norm answer) when its margins
      ``C x0`` (:func:`_margin_rows`) pass the event tolerance;
    * else the admissible member nearest to ``x0`` (a least-distance program
      over the null space: the admissible member of minimum norm when ``x0``
      is orthogonal to the null space, as for sticking and frictionless contacts);
    * else, no member being admissible, the one of largest least margin (a
      linear program): that margin is negative, and it crosses zero
      continuously where admissibility is lost — the λ or friction event of
      its contact.

    Any one member, such as the minimum-norm one, may have a negative λ while
    an admissible member exists: a lift-off that the LCP at the event undoes
    at once, the instant repeated without end.
    """
    _, s, Vt = np.linalg.svd(D)
    rank = int(np.count_nonzero(s > 1e-12 * s[0])) if s.size and s[0] > 0.0 else 0
    Z = Vt[rank:].T
    value = C @ x0
    scale = FORCE_EVENT_TOL * (1.0 + float(np.max(np.abs(x0[:m]))))
    if not Z.shape[1] or np.all(value + weight * scale >= 0.0):
        return x0
    CZ = C @ Z
    moves = np.linalg.norm(CZ, axis=1) > 1e-12 * np.linalg.norm(C, axis=1)
    if np.all(value[~moves] + weight[~moves] * scale >= 0.0):
        try:
            y, _ = least_distance(
                np.eye(Z.shape[1]), CZ[moves].T, np.zeros(Z.shape[1]), lower=-value[moves]
            )
        except SolverError:
            pass  # no admissible member
        else:
            return x0 + Z @ y
    # maximize t with C (x0 + Z y) >= t, t <= 0: unknowns [y, t]
    d = Z.shape[1]
    best = linprog(
        np.concatenate([np.zeros(d), [-1.0]]),
        A_ub=np.hstack([-CZ, np.ones((len(C), 1))]),
        b_ub=value,
        bounds=[(None, None)] * d + [(None, 0.0)],
        method="highs",
    )
    return x0 + Z @ best.x[:d] if best.status == 0 else x0


def _one_with_mode(
    contact: ContactLike, sign: float, M_inv: np.ndarray, a_free: np.ndarray
) -> ContactForces | None:
    """:func:`solve_with_modes` for one contact and a diagonal ``M⁻¹``, in closed form.

    Sliding (or frictionless): ``λ = −(G·a_free + γ_n)/(G·M⁻¹W)``, ``W = G −
    μτH``. Sticking: the 2×2 system of ``a_n = 0``, ``a_t = 0`` in ``(λ, β)``
    by Cramer's rule. None when its matrix is singular to ``1e-12`` (the
    general least-squares route answers then). Packaged as :func:`_result`
    does, on scalars.
    """
    G, H = contact.G, contact.H
    mu = contact.friction
    free_n = float(G @ a_free) + contact.gamma_n
    free_t = float(H @ a_free) + contact.gamma_t
    MinvG = M_inv * G
    if sign != 0.0 or mu <= 0.0:
        MinvW = M_inv * (G - H * (mu * sign))
        A = float(G @ MinvW)
        if A == 0.0:
            return None
        lam, beta = -free_n / A, 0.0
        qdd = a_free + MinvW * lam
    else:
        MinvH = M_inv * H
        A_nn, A_nt = float(G @ MinvG), float(G @ MinvH)
        A_tn, A_tt = float(H @ MinvG), float(H @ MinvH)
        det = A_nn * A_tt - A_nt * A_tn
        if abs(det) <= 1e-12 * (abs(A_nn * A_tt) + abs(A_nt * A_tn)):
            return None
        lam = (A_nt * free_t - A_tt * free_n) / det
        beta = (A_tn * free_n - A_nn * free_t) / det
        qdd = a_free + MinvG * lam + MinvH * beta
    return _one_result(contact, qdd, a_free, lam, beta, sign)


def _one_frictionless(
    contact: ContactLike, M_inv: np.ndarray, a_free: np.ndarray
) -> ContactForces | None:
    """:func:`_one_with_mode` of one frictionless contact (``μ = ±0``): the same bits.

    ``λ = −(G·a_free + γ_n)/(G·M⁻¹W)`` with ``W = G − μ·0·H`` (``G`` with the
    signs of zero that subtraction gives), ``q̈ = a_free + M⁻¹W λ``, packaged
    as :func:`_one_result` packages a frictionless contact: mode ``"stick"``,
    ``τ = 0``, no friction force; the tangential free acceleration and the
    tolerance it scales (read with friction only) are not formed. None when
    ``G·M⁻¹W = 0``, as there.
    """
    G, H = contact.G, contact.H
    MinvW = M_inv * (G - H * (contact.friction * 0.0))
    A = float(G.dot(MinvW))
    if A == 0.0:
        return None
    lam = -(float(G.dot(a_free)) + contact.gamma_n) / A
    qdd = a_free + MinvW * lam
    return ContactForces(
        qdd,
        np.array([lam]),
        np.array([0.0]),
        np.array([float(G.dot(qdd)) + contact.gamma_n]),
        np.array([float(H.dot(qdd)) + contact.gamma_t]),
        ("stick",),
        np.array([0.0]),
    )
