"""One closed contact at an impact: the laws of MECHANICS §3 in closed form.

With one constraint, the normal direction ``g`` and the tangent ``h`` of the
contact span a 2×2 Delassus block

    W = [[W_nn, W_nt], [W_nt, W_tt]],   W_nn = gᵀM⁻¹g,  W_nt = gᵀM⁻¹h,  W_tt = hᵀM⁻¹h,

and every phase of :mod:`solver.impact` has a closed form on it:

* plastic phase with Routh friction (paper 004 (31)-(34)), normal target
  ``u_n⁺ + offset = 0``: the sticking impulse solves ``W [Λ, p]ᵀ = −[u_n +
  offset, u_t]ᵀ``; it is the answer when ``|p| <= μΛ``. Otherwise the contact
  slides the way that impulse would have pushed, ``p = −μτΛ`` with ``τ =
  −sign(p_stick)`` and ``Λ = −(u_n + offset)/(W_nn − μτW_nt)``. With ``det W
  > 0`` and ``W_nn − μτW_nt > 0`` this is the only solution of the phase's
  LCP (the slip speed after it is ``(det W/W_nn)(p − p_stick)``, of the sign
  ``τ`` needs);
* restitution phase (paper 004 (35)), normal impulse ``eΛ̃`` given: the
  tangential impulse sticks (``−u_t/W_tt``) or is clipped to ``±μeΛ̃``;
* without friction, Newton's ``u_n⁺ = −e u_n⁻`` with the effective mass
  ``1/W_nn``.

:func:`resolve_single_impact` runs the laws' stage loops (``staged``,
``poisson``, ``sequential``, ``newton`` with its energetically consistent
fallbacks) on these scalars and returns the :class:`solver.impact.ImpactResult`
that :func:`solver.impact.resolve_impact` gives for the same contact, equal
to round-off (``tests/test_single_contact.py``). Where the closed form does
not decide (``det W`` at round-off: ``g`` and ``h`` dependent; ``W_nn −
μτW_nt <= 0``: an impulsive Painlevé configuration with several or no
solutions; a stage loop longer than ``MAX_SINGLE_STAGES``) it returns None
and the caller uses the general law.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from solver.impact import ENERGY_GAIN_TOLERANCE, ImpactResult, ImpactStage

MAX_SINGLE_STAGES = 32
"""Stages (rounds, collisions) after which the closed form gives the impact to the general law."""

SEQUENTIAL_TAIL_CHECK = 16
"""Collisions after which the general ``sequential`` law first looks for a tail to sum."""

DEPENDENT_DIRECTIONS = 1e-12
"""``det W <= DEPENDENT_DIRECTIONS · W_nn W_tt``: ``g`` and ``h`` count as dependent."""


class _UndecidedError(Exception):
    """The closed form does not decide this impact; the general law must."""


@dataclass(frozen=True)
class _Contact:
    """One contact on the coordinates it moves: ``M⁻¹g``, ``M⁻¹h`` and the Delassus block."""

    m: np.ndarray
    g: np.ndarray
    h: np.ndarray
    a: np.ndarray
    b: np.ndarray
    W_nn: float
    W_nt: float
    W_tt: float
    e: float
    mu: float
    tol: float

    @property
    def has_friction(self) -> bool:
        return self.mu > 0.0

    def speed(self, y: np.ndarray) -> float:
        return float(self.g @ y)

    def approaching(self, y: np.ndarray) -> bool:
        return self.speed(y) < -self.tol

    def plastic(
        self, y: np.ndarray, offset: float, tangent_offset: float
    ) -> tuple[np.ndarray, float, float]:
        """Plastic phase to ``u_n⁺ + offset = 0``: ``(w, Λ, p_t)`` (m/s, N·s, N·s)."""
        u = self.speed(y) + offset
        if u >= 0.0:
            return y, 0.0, 0.0
        if not self.has_friction:
            # the impulse read off the jump, as the general law does: Λ = gᵀM(w − y)/gᵀg
            w = y + self.a * (-u / self.W_nn)
            return w, float(self.g @ _times(self.m, w - y)) / float(self.g @ self.g), 0.0
        s = float(self.h @ y) + tangent_offset
        det = self.W_nn * self.W_tt - self.W_nt * self.W_nt
        if det <= DEPENDENT_DIRECTIONS * self.W_nn * self.W_tt:
            raise _UndecidedError
        lam = (s * self.W_nt - u * self.W_tt) / det
        p = (u * self.W_nt - s * self.W_nn) / det
        if abs(p) > self.mu * lam:
            tau = -math.copysign(1.0, p)
            effective = self.W_nn - self.mu * tau * self.W_nt
            if effective <= 0.0:
                raise _UndecidedError
            lam = -u / effective
            p = -self.mu * tau * lam
        return y + self.a * lam + self.b * p, lam, p

    def restitution(self, w: np.ndarray, lam_star: float) -> tuple[np.ndarray, float]:
        """Restitution phase with normal impulse ``Λ*`` given: ``(v*, p_t*)``."""
        v_c = w + self.a * lam_star
        bound = self.mu * lam_star
        if bound <= 0.0:
            return v_c, 0.0
        p = -float(self.h @ v_c) / self.W_tt
        if abs(p) > bound:
            p = math.copysign(bound, p)
        return v_c + self.b * p, p


class _Record:
    """Stage records in the full coordinate layout (the general law's)."""

    def __init__(self, v_full: np.ndarray, dofs: np.ndarray | None) -> None:
        self.v_full, self.dofs = v_full, dofs
        self.stages: list[ImpactStage] = []

    def full(self, x: np.ndarray) -> np.ndarray:
        if self.dofs is None:
            return x
        out = self.v_full.copy()
        out[self.dofs] = x
        return out

    def add(self, y: np.ndarray, w: np.ndarray, lam: float, p: float) -> None:
        self.stages.append(
            ImpactStage(
                y=self.full(y), w=self.full(w), lam=np.array([lam]), tangent_impulse=np.array([p])
            )
        )


def _staged(c: _Contact, record: _Record, v: np.ndarray, single_stage: bool) -> np.ndarray:
    """Plastic + restitution stages until the contact no longer approaches (one: ``poisson``)."""
    y = v
    while c.approaching(y):
        if single_stage and record.stages:
            break
        if len(record.stages) >= MAX_SINGLE_STAGES or (record.stages and not c.has_friction):
            raise _UndecidedError
        w, lam, p_plastic = c.plastic(y, 0.0, 0.0)
        if c.has_friction:
            y_next, p_restitution = c.restitution(w, c.e * lam)
        else:
            y_next, p_restitution = w + c.e * (w - y), 0.0
        record.add(y, w, lam, p_plastic + p_restitution)
        y = y_next
    return y


def _sequential(c: _Contact, record: _Record, v: np.ndarray) -> np.ndarray:
    """The ``sequential`` law on one contact: Poisson collisions, recorded as it replays them."""
    if c.has_friction:
        y = v
        while c.approaching(y):
            if len(record.stages) >= SEQUENTIAL_TAIL_CHECK - 1:
                raise _UndecidedError
            w, lam, p_plastic = c.plastic(y, 0.0, 0.0)
            y_next, p_restitution = c.restitution(w, c.e * lam)
            record.add(y, y + c.a * lam, lam, p_plastic + p_restitution)
            y = y_next
        return y
    u = c.speed(v)
    if u >= -c.tol:
        return v
    lam = -u / c.W_nn
    w = v + c.a * lam
    v_plus = v + c.a * ((1.0 + c.e) * lam)
    record.add(v, w, lam, 0.0)
    if c.approaching(v_plus):
        raise _UndecidedError
    return v_plus


def _newton(c: _Contact, record: _Record, v: np.ndarray, consistent: bool) -> np.ndarray:
    """Moreau's law ``u_n⁺ = −e u_n⁻`` with friction on ``u_t⁺`` (or ``u_t⁺ + e u_t⁻``)."""
    y = v
    while c.approaching(y):
        if len(record.stages) >= MAX_SINGLE_STAGES or (record.stages and not c.has_friction):
            raise _UndecidedError
        u = c.speed(y)
        tangent_offset = c.e * float(c.h @ y) if consistent else 0.0
        w, lam, p = c.plastic(y, c.e * min(u, 0.0), tangent_offset)
        record.add(y, w, lam, p)
        y = w
    return y


def _times(M: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``M x`` for a mass matrix given as its diagonal (N,) or dense (N, N)."""
    return M * x if M.ndim == 1 else M @ x


def resolve_single_impact(
    M: np.ndarray,
    g: np.ndarray,
    v_minus: np.ndarray,
    restitution: float,
    law: str = "staged",
    *,
    h: np.ndarray | None = None,
    friction: float = 0.0,
    dofs: np.ndarray | None = None,
    tol: float = 1e-12,
) -> ImpactResult | None:
    """The velocity jump of one closed contact, in closed form (MECHANICS §3).

    Parameters
    ----------
    M : (N,) or (N, N) ndarray
        The mass matrix, as its diagonal (kg, kg m²) or dense (symmetric
        positive definite).
    g, h : ndarray
        Normal and tangential Jacobian of the contact (``gᵀv`` and ``hᵀv``
        are the normal and slip speeds, m/s): (N,), or their entries on
        ``dofs`` when given. ``h`` may be omitted without friction.
    v_minus : (N,) ndarray
        Velocity before the impact.
    restitution : float
        ``e`` in [0, 1].
    law : {"staged", "poisson", "sequential", "newton"}
        The impact law (:mod:`solver.impact`).
    friction : float
        Coulomb coefficient ``μ >= 0``.
    dofs : (k,) ndarray of int, optional
        The distinct coordinates the contact moves (``M`` then diagonal):
        the work is done on those only.
    tol : float
        Admissibility tolerance relative to ``max(1 m/s, |gᵀv⁻|)``, as in
        :func:`solver.impact.resolve_impact`.

    Returns
    -------
    ImpactResult or None
        What :func:`solver.impact.resolve_impact` returns for this contact
        (to round-off), or None where the closed form does not decide (see
        the module docstring): use the general law then.
    """
    v_minus = np.asarray(v_minus, dtype=float)
    mu = float(friction) if h is not None else 0.0
    if dofs is None:
        m, v = M, v_minus
    else:
        m, v = M[dofs], v_minus[dofs]
    g = np.asarray(g, dtype=float)
    h = np.zeros_like(g) if h is None else np.asarray(h, dtype=float)
    if m.ndim == 1:
        a, b = g / m, h / m
    else:
        a, b = np.linalg.solve(m, np.column_stack((g, h))).T
    W_nn = float(g @ a)
    if not W_nn > 0.0:
        return None
    u_minus = float(g @ v)
    contact = _Contact(
        m=m,
        g=g,
        h=h,
        a=a,
        b=b,
        W_nn=W_nn,
        W_nt=float(g @ b),
        W_tt=float(h @ b),
        e=float(restitution),
        mu=mu,
        tol=tol * max(1.0, abs(u_minus)),
    )
    note = ""
    try:
        record = _Record(v_minus, dofs)
        if law in ("staged", "poisson"):
            v_plus = _staged(contact, record, v, law == "poisson")
        elif law == "sequential":
            v_plus = _sequential(contact, record, v)
        else:
            v_plus = _newton(contact, record, v, consistent=False)
            kinetic_before = 0.5 * float(v_minus @ _times(M, v_minus))
            gain = ENERGY_GAIN_TOLERANCE * kinetic_before
            if contact.has_friction and _kinetic_change(m, v, v_plus) > gain:
                record = _Record(v_minus, dofs)
                v_plus = _newton(contact, record, v, consistent=True)
                note = (
                    "friction on u_t+ + e u_t- (energetically consistent form): with friction "
                    "on u_t+ the coupled tangents gained energy"
                )
                if _kinetic_change(m, v, v_plus) > gain:
                    record = _Record(v_minus, dofs)
                    v_plus = _newton(replace(contact, e=0.0), record, v, consistent=False)
                    note = (
                        "plastic impact with friction: the newton law gained energy with these "
                        "restitutions and coupled tangents"
                    )
    except _UndecidedError:
        return None
    lam = np.array([sum(float(s.lam[0]) for s in record.stages)])
    if law != "newton":
        lam *= 1.0 + contact.e
    return ImpactResult(
        v_plus=record.full(v_plus),
        impulse=lam,
        stages=record.stages,
        energy_change=_kinetic_change(m, v, v_plus),
        admissible=not contact.approaching(v_plus),
        tangent_impulse=np.array([sum(float(s.tangent_impulse[0]) for s in record.stages)]),
        law=law,
        note=note,
    )


def _kinetic_change(M: np.ndarray, v: np.ndarray, v_plus: np.ndarray) -> float:
    """``T⁺ − T⁻ = ½ (v⁺ − v)ᵀ M (v⁺ + v)`` (J), as the general law forms it."""
    return 0.5 * float((v_plus - v) @ _times(M, v_plus + v))
