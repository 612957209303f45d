"""The reaction of one pressing contact with a fixed mode, as a function of the state.

While one contact presses and its friction mode does not change (it sticks,
or it slides in a known direction), its normal force ``λ`` and friction are
those of the equality system of :func:`solver.contact.solve_with_modes`:
with the contact's rows ``G``, ``H`` (``u_n = G·v``, ``u_t = H·v``), the
free accelerations ``a = M⁻¹ f`` and the curvature terms ``γ_n``, ``γ_t`` of
the feature,

* sliding along ``s = ±1`` (or frictionless): ``λ = −(G·a + γ_n)/(G·M⁻¹W)``
  with ``W = G − μ s H``, and ``q̈ = a + M⁻¹W λ``;
* sticking: ``a_n = 0`` and ``a_t = 0`` solved for ``(λ, β)`` on the 2×2
  Delassus block by Cramer's rule, and ``q̈ = a + M⁻¹(G λ + H β)``.

No LCP: the contact problem is solved once, at the event that starts the
phase, and the phase ends at the events that change its mode (``λ → 0``,
the friction reaching ``μλ``, the slip speed reaching 0, the disk leaving
its feature). :class:`OneContactReaction` evaluates this at any ``(q, v)``
of a phase in scalar arithmetic on the few coordinates of the pair (a
disk's ``x``, ``y``, ``φ``, or a bead's ``x``), with the kinematics of
:mod:`solver.geometry` written out for its feature (a corner or another
disk, an arc, a segment, each continued past its ends as
:meth:`solver.contact_pairs.DiskKinematics.evaluate` continues them). It
makes no :class:`solver.system.Contact` and no length-``N`` row; it agrees
with ``solve_with_modes`` on ``DiskKinematics.evaluate`` to rounding
(their dot products are summed in another order).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from solver.contact import ACCELERATION_TOL
from solver.contact_pairs import ContactPair, vertex_hidden
from solver.event_tolerances import REGION_TOL
from solver.feature_regions import in_region
from solver.frames import ContactState
from solver.geometry import Arc, Segment, Vertex

SINGULAR_TOL = 1e-12
"""Relative size of the 2×2 determinant below which the sticking system is singular
(as in :func:`solver.contact.solve_with_modes`, whose least-squares route answers then)."""


class ModeForces(NamedTuple):
    """What a smooth phase reads from its one active contact at one state.

    Attributes
    ----------
    qdd : numpy.ndarray
        Generalized accelerations (N,) (m/s², rad/s²).
    lam : float
        Normal force λ (N); negative where the contact would pull.
    friction_force : float
        Friction force along the tangent ``t`` (N): ``−μλs`` sliding along
        ``s``, the sticking force ``β`` (possibly outside the cone).
    u_t : float
        Slip speed of the contact point along ``t`` (m/s).
    """

    qdd: np.ndarray
    lam: float
    friction_force: float
    u_t: float


class _Disk(NamedTuple):
    ix: int
    iy: int  # -1 for a bead (its y is its rail's)
    iphi: int  # -1 for a bead (it does not rotate)
    radius: float
    rail_y: float


def _disk(system: Any, k: int) -> _Disk:
    dofs = system.disk_dofs
    ix, iy, iphi = int(dofs.ix[k]), int(dofs.iy[k]), int(dofs.iphi[k])
    rail_y = 0.0
    if iy < 0:  # a bead: its centre's height is its rail's
        rail_y = float(system.centres(np.asarray(system.q0, dtype=float))[k, 1])
    return _Disk(ix, iy, iphi, float(dofs.radius[k]), rail_y)


def _motion(disk: _Disk, q: np.ndarray, v: np.ndarray) -> tuple[float, float, float, float, float]:
    """Centre (m), its velocity (m/s) and the angular velocity (rad/s) of ``disk``."""
    if disk.iy < 0:
        return float(q[disk.ix]), disk.rail_y, float(v[disk.ix]), 0.0, 0.0
    return (
        float(q[disk.ix]),
        float(q[disk.iy]),
        float(v[disk.ix]),
        float(v[disk.iy]),
        float(v[disk.iphi]),
    )


class OneContactReaction:
    """λ, friction and ``q̈`` of one active disk contact with a fixed mode, at any state.

    Parameters
    ----------
    system : solver.system.System
        The compiled scene (a diagonal mass matrix).
    pair : solver.contact_pairs.ContactPair
        The active pair: a disk against a segment, vertex or arc, or another disk.
    mode : str
        ``"stick"``, ``"slip+"`` or ``"slip-"``.
    M_inv : numpy.ndarray
        The diagonal of ``M⁻¹`` (N,).
    """

    def __init__(self, system: Any, pair: ContactPair, mode: str, M_inv: np.ndarray) -> None:
        self.pair = pair
        self.mode = mode
        self._i = _disk(system, pair.i)
        self._j = _disk(system, pair.j) if pair.j >= 0 else None
        # per disk: its layout, the sign of n and t on it, and M⁻¹ on its x, y, φ
        self._disks = tuple(
            (
                disk,
                sign,
                float(M_inv[disk.ix]),
                0.0 if disk.iy < 0 else float(M_inv[disk.iy]),
                0.0 if disk.iy < 0 else float(M_inv[disk.iphi]),
            )
            for disk, sign in ((self._i, 1.0), (self._j, -1.0))
            if disk is not None
        )
        self._mu = float(pair.friction)
        if self._mu <= 0.0:
            self._sign = 0.0
        else:
            self._sign = {"slip+": 1.0, "slip-": -1.0}.get(mode, 0.0)
        feature = pair.feature
        self._feature = feature
        if self._j is not None:
            self._kind = "disk"
        elif isinstance(feature, Vertex):
            self._kind = "vertex"
        elif isinstance(feature, Arc):
            self._kind = "arc"
        elif isinstance(feature, Segment):
            self._kind = "segment"
        else:
            raise TypeError(f"no fixed-mode reaction for a feature {feature!r}")

    def _kinematics(
        self, q: np.ndarray, v: np.ndarray
    ) -> tuple[float, float, float, float, float] | None:
        """``(n_x, n_y, γ_n, γ_t, u_t)`` of the pair at ``(q, v)``; None where it has no normal.

        As :func:`solver.geometry.disk_contact_from_nearest` on the feature's
        closest point (continued past its ends as the stepper does).
        """
        cx, cy, vx, vy, om = _motion(self._i, q, v)
        rolling = self._i.radius * om
        kind = self._kind
        if kind == "segment":
            _, _, _, _, nx, ny = self._feature.foot(cx, cy)
            # a straight feature: the distance's Hessian is 0, so are γ_n and γ_t
            return nx, ny, 0.0, 0.0, ny * vx - nx * vy + rolling
        if kind == "arc":
            ox, oy = self._feature.center
            wx, wy = cx - ox, cy - oy
            rho = math.hypot(wx, wy)
            if rho == 0.0:
                return None
            ux, uy = wx / rho, wy / rho
            side = 1.0 if rho >= self._feature.radius else -1.0
            nx, ny, k = side * ux, side * uy, side / rho
        else:
            if kind == "vertex":
                px, py = self._feature.p
            else:
                px, py, vjx, vjy, omj = _motion(self._j, q, v)
                vx, vy = vx - vjx, vy - vjy
                rolling += self._j.radius * omj
            wx, wy = cx - px, cy - py
            d = math.hypot(wx, wy)
            if d == 0.0:
                return None
            nx, ny = wx / d, wy / d
            ux, uy, k = nx, ny, 1.0 / d
        # ṅ = ∇²d ċ with ∇²d = k (I − u uᵀ); γ_n = ċ·ṅ, γ_t = ṫ·ċ with ṫ = (ṅ_y, −ṅ_x)
        h_xy = -k * ux * uy
        n_dot_x = k * (1.0 - ux * ux) * vx + h_xy * vy
        n_dot_y = h_xy * vx + k * (1.0 - uy * uy) * vy
        gamma_n = vx * n_dot_x + vy * n_dot_y
        gamma_t = n_dot_y * vx - n_dot_x * vy
        return nx, ny, gamma_n, gamma_t, ny * vx - nx * vy + rolling

    def forces(self, q: np.ndarray, v: np.ndarray, a_free: np.ndarray) -> ModeForces | None:
        """The contact force and ``q̈`` at ``(q, v)`` with free accelerations ``a_free = M⁻¹f``.

        None where the answer needs the general route (the disk's centre on
        the corner or the arc's centre: no normal; a singular system):
        :func:`solver.contact.solve_with_modes` on the evaluated contact then
        answers, or says what is wrong.
        """
        kinematics = self._kinematics(q, v)
        if kinematics is None:
            return None
        nx, ny, gamma_n, gamma_t, u_t = kinematics
        tx, ty = ny, -nx
        # G·a, H·a and the Delassus entries, disk by disk: disk i has G = (n_x, n_y, 0)
        # and H = (t_x, t_y, r) on (x, y, φ) (a bead its x entry only), disk j the
        # opposite n and t with its own +r (solver.system.System.generalize)
        free_n, free_t = gamma_n, gamma_t
        A_nn = A_nt = A_tt = 0.0
        terms = []
        for disk, sign, m_x, m_y, m_phi in self._disks:
            a_x = float(a_free[disk.ix])
            if disk.iy < 0:
                a_y = a_phi = 0.0
            else:
                a_y, a_phi = float(a_free[disk.iy]), float(a_free[disk.iphi])
            r = disk.radius
            free_n += sign * (nx * a_x + ny * a_y)
            free_t += sign * (tx * a_x + ty * a_y) + r * a_phi
            A_nn += nx * nx * m_x + ny * ny * m_y
            A_nt += nx * tx * m_x + ny * ty * m_y
            A_tt += tx * tx * m_x + ty * ty * m_y + r * r * m_phi
            terms.append((disk, sign, m_x, m_y, m_phi, a_x, a_y, a_phi))
        mu, slip = self._mu, self._sign
        if slip != 0.0 or mu <= 0.0:
            # W = G − μ s H: λ = −(G·a + γ_n)/(G·M⁻¹W)
            A = A_nn - mu * slip * A_nt
            if A == 0.0:
                return None
            lam = -free_n / A
            along_t = -mu * slip * lam
            friction_force = along_t if slip != 0.0 else 0.0
        else:
            # a_n = 0 and a_t = 0 in (λ, β); G·M⁻¹H = H·M⁻¹G
            det = A_nn * A_tt - A_nt * A_nt
            if abs(det) <= SINGULAR_TOL * (abs(A_nn * A_tt) + abs(A_nt * A_nt)):
                return None
            lam = (A_nt * free_t - A_tt * free_n) / det
            friction_force = along_t = (A_nt * free_n - A_nn * free_t) / det
        # q̈ = a + M⁻¹(G λ + H β), β the force along t (−μsλ when sliding)
        fx = nx * lam + tx * along_t
        fy = ny * lam + ty * along_t
        qdd = a_free.copy()
        for disk, sign, m_x, m_y, m_phi, a_x, a_y, a_phi in terms:
            qdd[disk.ix] = a_x + m_x * sign * fx
            if disk.iy >= 0:
                qdd[disk.iy] = a_y + m_y * sign * fy
                qdd[disk.iphi] = a_phi + m_phi * disk.radius * along_t
        return ModeForces(qdd, lam, friction_force, u_t)

    def contact_state(
        self, q: np.ndarray, v: np.ndarray, a_free: np.ndarray
    ) -> ContactState | None:
        """The contact's state for an output frame at ``(q, v)``, as the general route reports it.

        λ, ``τ`` and the mode as :func:`solver.contact.solve_with_modes`
        gives them (a sticking contact whose tangential acceleration is not
        zero, beyond ``ACCELERATION_TOL``, is reported sliding that way), the
        normal and slip speeds, the contact point and the normal. None where
        :meth:`forces` has no answer.
        """
        one = self.forces(q, v, a_free)
        if one is None:
            return None
        nx, ny, gamma_n, gamma_t, u_t = self._kinematics(q, v)
        tx, ty = ny, -nx
        free_n, free_t, a_t = gamma_n, gamma_t, gamma_t
        for disk, sign, *_ in self._disks:
            a_x, qdd_x = float(a_free[disk.ix]), float(one.qdd[disk.ix])
            free_n += sign * nx * a_x
            free_t += sign * tx * a_x
            a_t += sign * tx * qdd_x
            if disk.iy >= 0:
                a_y, a_phi = float(a_free[disk.iy]), float(a_free[disk.iphi])
                free_n += sign * ny * a_y
                free_t += sign * ty * a_y + disk.radius * a_phi
                a_t += sign * ty * float(one.qdd[disk.iy]) + disk.radius * float(one.qdd[disk.iphi])
        mu, lam = self._mu, one.lam
        if self._sign != 0.0:
            tau, mode = self._sign, "slip+" if self._sign > 0.0 else "slip-"
        else:
            bound = mu * lam
            tau = min(max(-one.friction_force / bound, -1.0), 1.0) if bound > 0.0 else 0.0
            mode = "stick"
            if mu > 0.0 and abs(a_t) > ACCELERATION_TOL * (1.0 + abs(free_n) + abs(free_t)):
                tau, mode = (1.0, "slip+") if a_t > 0.0 else (-1.0, "slip-")
        u_n, point = self._surface(q, v, nx, ny)
        return ContactState(
            body=self.pair.body,
            other=self.pair.other,
            lam=float(lam),
            tau=float(tau),
            u_n=u_n,
            u_t=u_t,
            mode=mode,
            point=point,
            normal=(nx, ny),
            friction=self._mu,
        )

    def _surface(
        self, q: np.ndarray, v: np.ndarray, nx: float, ny: float
    ) -> tuple[float, tuple[float, float]]:
        """Normal speed (m/s) and contact point (m) of the pair, its normal ``n`` known.

        The point is the feature's closest point to the disk's centre (for a
        disk pair the point of disk j facing disk i); two beads that have
        passed each other (:attr:`solver.contact_pairs.ContactPair.order`)
        approach where their distance grows.
        """
        cx, cy, vx, vy, _ = _motion(self._i, q, v)
        kind = self._kind
        if kind == "disk":
            px, py, vjx, vjy, _ = _motion(self._j, q, v)
            u_n = nx * (vx - vjx) + ny * (vy - vjy)
            if self.pair.order and self.pair.order * (cx - px) < 0.0:
                u_n = -u_n
            return u_n, (px + self._j.radius * nx, py + self._j.radius * ny)
        u_n = nx * vx + ny * vy
        if kind == "vertex":
            return u_n, self._feature.p
        if kind == "arc":
            (ox, oy), radius = self._feature.center, self._feature.radius
            rho = math.hypot(cx - ox, cy - oy)
            return u_n, (ox + radius * (cx - ox) / rho, oy + radius * (cy - oy) / rho)
        (ax, ay), (bx, by) = self._feature.a, self._feature.b
        ex, ey = bx - ax, by - ay
        s = ((cx - ax) * ex + (cy - ay) * ey) / (ex * ex + ey * ey)
        return u_n, (ax + s * ex, ay + s * ey)

    def slip_speed(self, q: np.ndarray, v: np.ndarray) -> float | None:
        """``u_t`` (m/s) at ``(q, v)``; None where the pair has no normal."""
        kinematics = self._kinematics(q, v)
        return None if kinematics is None else kinematics[4]

    def inside(self, q: np.ndarray) -> bool:
        """Whether the disk is on its feature (the ``region`` test of the stepper).

        A segment or an arc counts ``REGION_TOL`` beyond its ends; a vertex
        is left where a feature ending at it takes the contact over; a disk
        pair is always inside.
        """
        if self._kind == "disk":
            return True
        disk = self._i
        c = np.array((float(q[disk.ix]), disk.rail_y if disk.iy < 0 else float(q[disk.iy])))
        if self._kind == "vertex":
            return not (self.pair.neighbours and vertex_hidden(self.pair, c))
        # where the feature's closest point exists, the centre is in its region too
        return in_region(self._feature, c, REGION_TOL)
