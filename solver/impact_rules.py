"""The scene's impact law applied to the contacts closed at an event (a part of the stepper).

:class:`ImpactRules` resolves an impact of closed contacts with the scene's
law (:func:`solver.impact.resolve_impact` on their constraint columns), and
one frictionless contact in closed form (Newton's law: every law reduces to
it there, exact for an elastic bounce). It owns nothing: the event handler
and the Zeno summer call it with the contacts and velocities they hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse

from solver.contact_pairs import RailContacts
from solver.event_tolerances import SPARSE_ABOVE
from solver.impact import ImpactResult, ImpactStage, resolve_impact
from solver.motion_state import MotionState, Setup
from solver.single_contact import resolve_single_impact
from solver.system import Contact


class ImpactRules:
    """The impact law on closed contacts (a part of the event-driven stepper); no state."""

    def __init__(self, setup: Setup, motion: MotionState) -> None:
        self.s, self.m = setup, motion

    def law_result(self, closed: Sequence[Contact], v_minus: np.ndarray) -> ImpactResult:
        """The scene's impact law on the ``closed`` contacts from velocities ``v_minus``.

        One contact takes the closed form (:mod:`solver.single_contact`) where it decides.
        """
        if len(closed) == 1:
            e = closed[0]
            if e.friction == 0.0:
                return self.newton_single(e, e.restitution, v_minus)
            single = resolve_single_impact(
                self.s.system.M_diag,
                e.G_local,
                v_minus,
                e.restitution,
                self.s.law,
                h=e.H_local,
                friction=e.friction,
                dofs=e.dofs,
            )
            if single is not None:
                return single
        G = self.columns(closed, "G_local")
        if isinstance(closed, RailContacts):
            restitution, friction = closed.restitution, closed.friction
        else:
            restitution = np.array([e.restitution for e in closed])
            friction = np.array([e.friction for e in closed])
        kwargs: dict[str, Any] = {}
        if np.any(friction > 0.0):
            kwargs = {"H": self.columns(closed, "H_local"), "friction": friction}
        return resolve_impact(
            self.s.system.M_diag, G, v_minus, restitution, law=self.s.law, **kwargs
        )

    def newton_single(
        self, contact: Contact, restitution: float, v: np.ndarray | None = None
    ) -> ImpactResult:
        """Impact of one frictionless contact in closed form (Newton's law).

        With a single frictionless constraint every law of MECHANICS §3 reduces to
        ``u_n⁺ = −e u_n⁻`` with the effective mass ``1/(GᵀM⁻¹G)``. The velocity
        jump is formed from the direction ``M⁻¹G/(GᵀM⁻¹G)`` (exactly ``±1``
        per coordinate for a bead against a wall, so an elastic bounce is an
        exact reversal), the impulse from the momentum balance
        ``Λ = Gᵀ M Δv / GᵀG`` (N·s) and the energy change from
        ``ΔT = −(1 − e²)/2 · u_n⁻²/(GᵀM⁻¹G)`` (J), which is exactly zero for
        ``e = 1``: no rounding error accumulates over many bounces.

        Parameters
        ----------
        contact : Contact
            The closed, approaching contact.
        restitution : float
            ``e`` in [0, 1].
        v : numpy.ndarray, optional
            Velocities before the impact (N,); default the current ones.

        Returns
        -------
        ImpactResult
            One stage; the plastic multiplier is ``Λ/(1 + e)``.
        """
        v = self.m.v if v is None else v
        dofs, G = contact.dofs, contact.G_local
        v_plus, dv, energy_change = self.newton_jump(contact, restitution, v)
        impulse = float(G.dot(self.s.system.M_diag[dofs] * dv[dofs])) / float(G.dot(G))
        lam = np.array([impulse / (1.0 + restitution)])
        stage = ImpactStage(
            y=v.copy(),
            w=v + dv / (1.0 + restitution),
            lam=lam,
            tangent_impulse=np.zeros(1),
        )
        return ImpactResult(
            v_plus=v_plus,
            impulse=np.array([impulse]),
            stages=[stage],
            energy_change=energy_change,
            admissible=True,
            tangent_impulse=np.zeros(1),
            law=self.s.law,
        )

    def newton_jump(
        self,
        contact: Contact,
        restitution: float,
        v: np.ndarray,
        direction: tuple[np.ndarray, float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """Velocities after a frictionless Newton impact of ``contact``, the jump and ``ΔT``.

        The arithmetic of :meth:`_newton_single` without its impulse and
        stage (a bounce summed by :meth:`_sum_bounces` needs only these).
        ``direction`` is :meth:`_jump_direction` of ``contact`` if already made.

        Returns
        -------
        v_plus, dv : numpy.ndarray
            Velocities after the impact and their jump (N,), m/s or rad/s.
        energy_change : float
            ``T⁺ − T⁻`` (J).
        """
        dofs, G = contact.dofs, contact.G_local
        step, k = self.jump_direction(contact) if direction is None else direction
        u = float(G.dot(v[dofs]))
        dv = np.zeros(self.s.N)
        dv[dofs] = (-(1.0 + restitution) * u) * step  # a contact's dofs are distinct
        return v + dv, dv, -0.5 * (1.0 - restitution * restitution) * u * u / k

    def jump_direction(self, contact: Contact) -> tuple[np.ndarray, float]:
        """``M⁻¹G/(GᵀM⁻¹G)`` on the contact's coordinates and ``GᵀM⁻¹G`` (1/kg, or per kg·m²).

        A frictionless impact of the contact changes the velocities along the
        first, by ``−(1 + e) u_n`` times it.
        """
        G = contact.G_local
        w = G * self.s.M_inv[contact.dofs]
        k = float(G.dot(w))
        return w / k, k

    def columns(self, evals: Sequence[Contact], field: str) -> Any:
        """The contacts' G (or H) as columns: dense for small systems, sparse (CSC) for large."""
        if isinstance(evals, RailContacts):
            dofs, values = evals.dofs, getattr(evals, field)
            K = len(evals)
            if self.s.N <= SPARSE_ABOVE:
                dense = np.zeros((self.s.N, K))
                dense[dofs, np.arange(K)[:, None]] = values
                return dense
            cols = np.repeat(np.arange(K), dofs.shape[1])
            return scipy.sparse.csc_matrix(
                (values.ravel(), (dofs.ravel(), cols)), shape=(self.s.N, K)
            )
        if self.s.N <= SPARSE_ABOVE:
            return np.column_stack([e.G if field == "G_local" else e.H for e in evals])
        rows = np.concatenate([e.dofs for e in evals])
        cols = np.concatenate([np.full(len(e.dofs), k) for k, e in enumerate(evals)])
        data = np.concatenate([getattr(e, field) for e in evals])
        return scipy.sparse.csc_matrix((data, (rows, cols)), shape=(self.s.N, len(evals)))
