"""Moreau–Jean time-stepping: one velocity-level LCP per step (SPEC §4).

The robust alternative to the event-driven stepper for scenes with many
contacts: no event location, impacts and persistent contact are the same
velocity-level problem, first order in the step ``h``. One step of size
``h`` from ``(t_k, q_k, v_k)`` with ``θ ∈ [1/2, 1]``:

    q_θ     = q_k + (1 − θ) h v_k                      (mid-step for θ = 1/2)
    v_k+1   = v_k + h M⁻¹ f(t_k + (1 − θ) h, q_θ, v_k) + M⁻¹ (Σ G_i Λ_i + Σ H_i Λ_t,i)
    q_k+1   = q_k + h ((1 − θ) v_k + θ v_k+1)

θ = 1/2 is Moreau's midpoint scheme (leapfrog between impacts); θ = 1 is
symplectic Euler between impacts. The contacts closed at mid-step,
``g_i(q_θ) + (θ − 1/2) h u_n,i ≤ 0``, carry Moreau's velocity-level Newton
law and Coulomb friction with the 2-edge cone (Anitescu & Potra 1997; in
the plane it stays an LCP), solved exactly — by one linear solve when the
previous step's positive unknowns still give a solution, else by
:func:`complementarity.lemke`:

    Λ_n ≥ 0  ⊥  u_n⁺ + e u_n⁻ ≥ 0
    Λ_+ ≥ 0  ⊥  β + u_t⁺ ≥ 0,     Λ_− ≥ 0  ⊥  β − u_t⁺ ≥ 0
    β   ≥ 0  ⊥  μ Λ_n − Λ_+ − Λ_− ≥ 0

with ``u⁻ = G·v_k``, ``u⁺ = G·v_k+1`` and the tangential impulse
``Λ_t = Λ_+ − Λ_−`` (N·s along the contact tangent ``t``). A persistent
contact reports the force ``λ = Λ_n / h``; a contact whose approach speed is
far above what finite forces reach in one step (``IMPACT_SPEED_STEPS``) is
an impact and gets an ``impact`` event with ``pre`` / ``post`` frames at
``t_k + (1 − θ) h``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np

from solver.complementarity import lemke
from solver.contact import SLIP_SPEED_TOL
from solver.errors import InputError, SolverError
from solver.frames import ContactState, EnergyBudget, Event, Frame, StepOutput

if TYPE_CHECKING:
    from solver.system import Contact, System

DEFAULT_STEP = 1e-4
"""Default step ``h`` (s), the scene's ``solver.dt`` default."""

GAP_TOL = 1e-10
"""Gap (m) at or below which a contact counts as closed: absorbs round-off at rest."""

ROUND_OFF = 1e-13
"""Relative size below which a free contact speed in the LCP is round-off and set to 0."""

QUERY_MARGIN = 0.5
"""Contacts are looked for within this share of the smallest radius, so that queries can be
skipped until the bodies have moved that far."""

IMPACT_SPEED_STEPS = 10.0
"""An approach speed above this many steps' worth of normal acceleration is an impact."""


class TimeSteppingStepper:
    """Moreau–Jean time-stepping with a velocity-level LCP per step.

    Same shape as the event-driven stepper (``status``, ``t``, ``message``,
    ``system``, ``step()``): each ``step()`` advances to the next output
    sample and returns the sample frame, plus ``pre`` / ``post`` frames and
    ``impact`` events of the impacts on the way. Output samples are at
    ``k · dt_out`` and at ``t_end``; each output interval is cut into equal
    steps no longer than ``h``, so samples fall exactly on step ends.

    Parameters
    ----------
    system : System
        The compiled scene.
    t_end : float
        End of the run, s (> 0).
    dt_out : float
        Spacing of output samples, s (> 0).
    h : float, optional
        Largest time step, s (> 0): accuracy against CPU time. Errors in
        positions after impacts shrink in proportion to ``h``; the cost grows
        as ``1/h``. Default ``DEFAULT_STEP``.
    theta : float, optional
        θ of the scheme, in [1/2, 1]; 1/2 (default) is second order between
        impacts, 1 is the classical first-order Moreau–Jean choice.

    Raises
    ------
    InputError
        When an argument is not a finite number in its range.
    """

    def __init__(
        self,
        system: System,
        t_end: float,
        dt_out: float,
        h: float = DEFAULT_STEP,
        theta: float = 0.5,
    ) -> None:
        for name, value in (("t_end", t_end), ("dt_out", dt_out), ("h", h)):
            if not math.isfinite(value) or value <= 0:
                raise InputError(f"`{name}` must be a finite number > 0, got {value!r}")
        if not 0.5 <= theta <= 1.0:
            raise InputError(f"`theta` must be in [0.5, 1], got {theta!r}")
        self.system = system
        self.t_end = float(t_end)
        self.dt_out = float(dt_out)
        self.h = float(h)
        self.theta = float(theta)
        self.t = 0.0
        self.q = np.array(system.q0, dtype=float)
        self.v = np.array(system.v0, dtype=float)
        self.status = "running"
        self.message = ""
        self._n_intervals = max(1, math.ceil(self.t_end / self.dt_out - 1e-9))
        self._interval = 0
        self._dissipated = 0.0
        self._input = 0.0
        self._m_inv = 1.0 / np.diag(system.M)
        self._query_margin = QUERY_MARGIN * float(np.min(system.radii, initial=1.0))
        self._clearance = -math.inf  # every gap is at least this, m (-inf: unknown)
        self._closing_speed_now = self._closing_speed(self.v)
        self._basis_keys: list[Hashable] = []  # contacts of the last LCP solved
        self._basis = np.zeros(0, dtype=bool)  # its unknowns that were positive
        self._started = False

    # ------------------------------------------------------------------ stepping

    def step(self) -> StepOutput:
        """Advance to the next output sample.

        Returns
        -------
        StepOutput
            Frames in time order (the first call also returns the sample at
            t = 0) and the events on the way. A failure (no solution of a
            contact LCP, a non-finite state) sets ``status = "failed"`` and
            ends the output with an ``error`` event instead of raising.
            After the run has finished or failed the output is empty.
        """
        out = StepOutput()
        if self.status != "running":
            return out
        if not self._started:
            self._started = True
            out.frames.append(self._frame("sample", self.t, self.q, self.v, ()))
        self._interval += 1
        if self._interval == self._n_intervals:
            t_next = self.t_end
        else:
            t_next = self._interval * self.dt_out
        t_start = self.t
        n_steps = max(1, math.ceil((t_next - t_start) / self.h - 1e-9))
        h = (t_next - t_start) / n_steps
        contacts: tuple[ContactState, ...] = ()
        try:
            for k in range(n_steps):
                contacts = self._advance(t_start + k * h, h, out)
        except (SolverError, np.linalg.LinAlgError) as error:
            self.status = "failed"
            self.message = f"t = {self.t!r} s: {error}"
            out.events.append(Event(t=self.t, type="error", message=self.message))
            return out
        self.t = t_next
        out.frames.append(self._frame("sample", self.t, self.q, self.v, contacts))
        if self._interval == self._n_intervals:
            self.status = "finished"
            self.message = f"reached t_end = {self.t_end!r} s"
        return out

    def _advance(self, t: float, h: float, out: StepOutput) -> tuple[ContactState, ...]:
        """One Moreau–Jean step from ``(t, self.q, self.v)``; returns the persistent contacts."""
        system, theta = self.system, self.theta
        q, v = self.q, self.v
        t_theta = t + (1.0 - theta) * h
        q_theta = q + (1.0 - theta) * h * v
        accel = self._m_inv * system.applied_force(t_theta, q_theta, v)
        v_free = v + h * accel
        if not np.all(np.isfinite(v_free)):
            raise SolverError("the applied forces are no longer finite")
        closing_speed = self._closing_speed_now
        closed = self._closed_contacts(q_theta, v, h, closing_speed)
        if closed:
            impulse_n, impulse_t, v_next = self._solve_contact_lcp(closed, v, v_free, t_theta)
        else:
            impulse_n = impulse_t = np.zeros(0)
            v_next = v_free
        q_next = q + h * ((1.0 - theta) * v + theta * v_next)
        if not np.all(np.isfinite(q_next)):
            raise SolverError("the state is no longer finite (step too large for the forces?)")

        v_mean = (q_next - q) / h
        self._input += h * system.input_power(t_theta, q_theta, v_mean)
        self._dissipated += h * system.damping_power(q_theta, v_mean)
        persistent: list[ContactState] = []
        impacts: list[Event] = []
        v_pre = v + (1.0 - theta) * h * accel
        v_post = v_next - theta * h * accel
        for c, lam_n, lam_t in zip(closed, impulse_n, impulse_t, strict=True):
            if lam_n <= 0.0:
                continue
            u_n0, u_n1 = float(c.G @ v), float(c.G @ v_next)
            u_t0, u_t1 = float(c.H @ v), float(c.H @ v_next)
            work = 0.5 * (lam_n * (u_n0 + u_n1) + lam_t * (u_t0 + u_t1))
            self._dissipated -= work
            if self._is_impact(c, u_n0, accel, h):
                impacts.append(
                    Event(
                        t=t_theta,
                        type="impact",
                        body=c.body,
                        other=c.other,
                        normal_impulse=float(lam_n),
                        tangent_impulse=float(lam_t),
                        stages=1,
                        energy_change=work,
                        v_minus=v_pre,
                        v_plus=v_post,
                    )
                )
            else:
                persistent.append(_contact_state(c, lam_n / h, lam_t / h, u_n1, u_t1))
        if impacts:
            dissipated_before = self._dissipated + sum(e.energy_change for e in impacts)
            out.frames.append(self._frame("pre", t_theta, q_theta, v_pre, (), dissipated_before))
            out.frames.append(self._frame("post", t_theta, q_theta, v_post, ()))
            out.events.extend(impacts)
        self._closing_speed_now = self._closing_speed(v_next)
        closing_speed = max(closing_speed, self._closing_speed_now)
        self._clearance = -math.inf if closed else self._clearance - h * closing_speed
        self.q, self.v, self.t = q_next, v_next, t + h
        return tuple(persistent)

    def _closing_speed(self, v: np.ndarray) -> float:
        """Bound on the rate at which any gap can shrink, m/s: twice the fastest centre."""
        if not self.system.n_disks:
            return 0.0
        return 2.0 * float(np.max(np.hypot(*self.system.centre_velocities(v).T)))

    def _closed_contacts(
        self, q_theta: np.ndarray, v: np.ndarray, h: float, closing_speed: float
    ) -> list[Contact]:
        """Contacts predicted closed at mid-step: ``g(q_θ) + (θ − 1/2) h u_n ≤ GAP_TOL``.

        The geometric query is skipped while ``self._clearance`` (a lower
        bound on every gap) shows that nothing can close within this step.
        """
        if self._clearance - h * closing_speed > GAP_TOL:
            return []
        lead = (self.theta - 0.5) * h
        margin = max(GAP_TOL + lead * closing_speed, self._query_margin)
        closed = []
        clearance = margin
        for c in self.system.contacts(q_theta, v, margin):
            if c.g + lead * c.u_n <= GAP_TOL:
                closed.append(c)
            else:
                clearance = min(clearance, c.g)
        self._clearance = clearance
        return closed

    def _solve_contact_lcp(
        self, closed: list[Contact], v: np.ndarray, v_free: np.ndarray, t: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Impulses of the closed contacts and the end-of-step velocity.

        Returns
        -------
        impulse_n : (n,) normal impulses Λ_n, N·s
        impulse_t : (n,) tangential impulses Λ_t along each contact's ``t``, N·s
        v_next : (N,) velocity at the end of the step
        """
        n = len(closed)
        rubbing = [i for i, c in enumerate(closed) if c.friction > 0.0]
        m = len(rubbing)
        G = np.column_stack([c.G for c in closed])
        H = np.array([closed[i].H for i in rubbing]).reshape(m, len(v)).T
        B = np.hstack((G, H, -H))
        A = B.T @ (self._m_inv[:, None] * B)
        size = n + 3 * m
        lcp_matrix = np.zeros((size, size))
        lcp_matrix[: n + 2 * m, : n + 2 * m] = A
        identity = np.eye(m)
        lcp_matrix[n : n + m, n + 2 * m :] = identity
        lcp_matrix[n + m : n + 2 * m, n + 2 * m :] = identity
        lcp_matrix[n + 2 * m :, n : n + m] = -identity
        lcp_matrix[n + 2 * m :, n + m : n + 2 * m] = -identity
        for row, i in enumerate(rubbing):
            lcp_matrix[n + 2 * m + row, i] = closed[i].friction
        restitution = np.array([c.restitution for c in closed])
        u_t_free = H.T @ v_free
        lcp_q = np.concatenate(
            (G.T @ v_free + restitution * (G.T @ v), u_t_free, -u_t_free, np.zeros(m))
        )
        if np.all(lcp_q[:n] >= 0.0):  # the free motion already obeys the impact law
            self._basis_keys = []
            return np.zeros(n), np.zeros(n), v_free
        # Speeds at round-off level are zero: this keeps Lemke's first pivot unambiguous.
        lcp_q[np.abs(lcp_q) <= ROUND_OFF * max(1.0, float(np.max(np.abs(lcp_q))))] = 0.0
        keys = [c.key for c in closed]
        z = self._solve_on_previous_basis(keys, lcp_matrix, lcp_q)
        if z is None:
            result = lemke(lcp_matrix, lcp_q)
            if result.status != "solved":
                names = ", ".join(f"{c.body}–{c.other}" for c in closed)
                raise SolverError(
                    f"the contact LCP has no solution ({result.status}) at t = {t!r} s "
                    f"for the contacts {names}"
                )
            z = result.z
        self._basis_keys, self._basis = keys, z > 0.0
        impulses = z[: n + 2 * m]
        v_next = v_free + self._m_inv * (B @ impulses)
        impulse_t = np.zeros(n)
        impulse_t[rubbing] = impulses[n : n + m] - impulses[n + m : n + 2 * m]
        return impulses[:n], impulse_t, v_next

    def _solve_on_previous_basis(
        self, keys: list[Hashable], lcp_matrix: np.ndarray, lcp_q: np.ndarray
    ) -> np.ndarray | None:
        """The LCP solution when the last step's positive unknowns are again the positive ones.

        In persistent contact the same unknowns stay positive from step to
        step, so one linear solve on that set replaces Lemke's pivoting. The
        answer is accepted only when it satisfies the LCP to round-off;
        otherwise ``None`` is returned and Lemke decides.
        """
        if self._basis_keys != keys:
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

    def _is_impact(self, c: Contact, u_n_minus: float, accel: np.ndarray, h: float) -> bool:
        """True when the approach speed is beyond what finite forces give in a few steps."""
        smooth_speed = IMPACT_SPEED_STEPS * h * (abs(float(c.G @ accel)) + abs(c.gamma_n))
        return -u_n_minus > smooth_speed

    # ------------------------------------------------------------------ output

    def _frame(
        self,
        kind: str,
        t: float,
        q: np.ndarray,
        v: np.ndarray,
        contacts: tuple[ContactState, ...],
        dissipated: float | None = None,
    ) -> Frame:
        """A frame with the energy budget; ``dissipated`` (J) defaults to the running total."""
        kinetic, potential, spring = self.system.energy(q, v)
        energy = EnergyBudget(
            kinetic=kinetic,
            potential=potential,
            spring=spring,
            dissipated=float(self._dissipated if dissipated is None else dissipated),
            input=self._input,
        )
        return Frame(
            t=t,
            kind=kind,
            q=q.copy(),
            v=v.copy(),
            contacts=contacts,
            energy=energy,
        )


def _contact_state(
    c: Contact, lam: float, friction_force: float, u_n: float, u_t: float
) -> ContactState:
    """A persistent contact's state: normal force ``lam`` and tangential force (N), end speeds."""
    if abs(u_t) <= SLIP_SPEED_TOL:
        mode = "stick"
    else:
        mode = "slip+" if u_t > 0 else "slip-"
    tau = 0.0
    if c.friction > 0.0 and friction_force != 0.0:
        tau = -friction_force / (c.friction * lam)
    return ContactState(
        body=c.body,
        other=c.other,
        lam=float(lam),
        tau=float(tau),
        u_n=u_n,
        u_t=u_t,
        mode=mode,
        point=(float(c.point[0]), float(c.point[1])),
        normal=(float(c.n[0]), float(c.n[1])),
        friction=float(c.friction),
    )
