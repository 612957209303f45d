"""Rolling of axle carts between scheduled impulses (paper 001; top view, no gravity).

Between impulses each cart obeys Maggi's equations (paper 001 (1.2)) in its
two independent rates ``u = (omegaA, omegaB)``, the wheels' spin rates:

    v = C(q) u,    Cᵀ M (C u̇ + Ċ u) = Cᵀ f = 0,

where ``C`` is :func:`solver.nonholonomic.maggi_basis` with the wheel rates
independent. That choice never needs pivoting: the dependent block ``A₂``
(columns ``vxC, vyC, omega`` of :meth:`AxleCart.constraint_matrix`) has
determinant ``2 l > 0`` for every pose. ``Ċ u`` is the vector ``w`` with
zero wheel-rate components and ``A₂ w₂ = −Ȧ v`` (differentiate ``A C u = 0``).
The cart's mass matrix is constant, so ``∂T/∂q = 0``.

The state integrated by DOP853 is ``(q, u)`` per cart; the
full velocity is rebuilt as ``v = C(q) u`` at every output, which is the
projection onto ``A v = 0``: the no-slip constraints hold to rounding at
every frame, never drift. Impulses are applied exactly at their times with
:func:`solver.nonholonomic.impulsive_response`, in world axes or in the
cart's own axes (``frame = "body"``: the same spot of the cart struck from
the same side wherever it has rolled; :func:`strike_in_body_frame` turns a
strike given on screen into such an impulse).

A phase (from an impulse to the next, or to ``t_end``) is integrated lazily,
one DOP853 step at a time and only as far as the next output sample or
impulse, and a ``step()`` returns when its wall-time slice
(:data:`solver.event_tolerances.STEP_WALL_SLICE_S`) is spent between two
DOP853 steps; the next call goes on with the same integrator. The steps
and their dense outputs are those of one ``solve_ivp`` call over the whole
phase, so the motion is the same to the bit wherever a call returns.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import DOP853

from solver import event_tolerances
from solver.cart_rolling import (  # initial_velocity: public here too
    ROLLING,
    WHEEL_RATES,
    initial_velocity,  # noqa: F401
    wheel_rate_basis,
)
from solver.errors import InputError, SolverError
from solver.frames import EnergyBudget, Event, Frame, StepOutput
from solver.nonholonomic import AxleCart, impulsive_response, maggi_basis
from solver.system import axle_cart_model

COORD_NAMES = ("xC", "yC", "phi", "thetaA", "thetaB")
RATE_NAMES = ("vxC", "vyC", "omega", "omegaA", "omegaB")
RTOL = 1e-12
ATOL = 1e-12
"""Tolerances of the DOP853 integration (relative; absolute in m, rad, rad/s)."""

CONSTRAINT_TOL = 1e-9
"""Largest ``|A v|`` (m/s, relative to ``1 + |v|``) accepted for an initial velocity."""


def _maggi_rates(cart: AxleCart, q: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(q̇, u̇)`` of one cart from Maggi's equations without applied forces."""
    A = cart.constraint_matrix(q)
    C = wheel_rate_basis(cart, q)
    v = C @ u
    basis_rate = np.zeros(5)
    basis_rate[ROLLING] = np.linalg.solve(A[:, ROLLING], -cart.constraint_matrix_rate(q, v) @ v)
    M = cart.mass_matrix(q)
    u_dot = np.linalg.solve(C.T @ M @ C, -(C.T @ M @ basis_rate))
    return v, u_dot


class CartStepper:
    """Event stepper for axle carts rolling between scheduled impulses.

    The shape of ``docs/ARCHITECTURE.md``: ``status``, ``t``, ``message`` and
    :meth:`step`. Frames are emitted on the grid ``k · dt_out`` (and at
    ``t_end``), plus a ``"pre"`` and a ``"post"`` frame and an ``impulse``
    event at every impulse. A grid time that coincides with an impulse gets
    its sample after the ``"post"`` frame (the state after the impulse).

    Parameters
    ----------
    carts : sequence of (AxleCart, q0, v0)
        Each cart with its initial configuration ``(xC, yC, phi, thetaA,
        thetaB)`` (m, rad) and velocity ``(vxC, vyC, omega, omegaA, omegaB)``
        (m/s, rad/s); ``v0`` must satisfy the no-slip constraints (build it
        with :func:`initial_velocity`).
    impulses : sequence of mappings with keys ``time``, ``body``, ``point``, ``vector``, ``frame``
        ``time`` (s); ``body`` a cart id; ``frame`` (optional) ``"world"``
        (default) or ``"body"``. In world axes ``point`` is the signed distance
        (m) along the axle from C towards wheel B (``|point| <= half_length``),
        or a world point ``(x, y)`` (m, as the scene file gives it) projected
        onto the axle at the impulse time, and ``vector`` the impulse
        ``(Sx, Sy)`` (N·s). In body axes (x along the axle towards wheel B, y
        the rolling direction, at the impulse time) ``point`` is ``(s, 0)``
        or ``s`` and ``vector`` ``(S_along, S_rolling)`` (N·s). Impulses
        after ``t_end`` never happen; those at one time are applied in the
        given order.
    t_end : float
        End time (s), > 0.
    dt_out : float
        Output sampling interval (s), > 0.
    cart_ids : sequence of str
        One distinct id per cart, used in events and ``dof_labels``.

    Attributes
    ----------
    status : str
        ``"running"``, ``"finished"`` or ``"failed"``.
    t : float
        Current time (s).
    message : str
        Why the run finished or failed.
    dof_labels : list of (str, tuple, tuple)
        ``(cart_id, COORD_NAMES, RATE_NAMES)`` per cart: the layout of
        ``Frame.q`` and ``Frame.v``.
    clock : callable
        The monotonic clock (s) of the wall-time slice (``time.monotonic``;
        tests set their own).
    """

    def __init__(
        self,
        carts: Sequence[tuple[AxleCart, ArrayLike, ArrayLike]],
        impulses: Sequence[Mapping[str, object]],
        t_end: float,
        dt_out: float,
        cart_ids: Sequence[str],
    ) -> None:
        self.t_end = _positive(t_end, "t_end")
        self.dt_out = _positive(dt_out, "dt_out")
        if len(carts) == 0:
            raise InputError("carts: need at least one cart")
        self.cart_ids = [str(cart_id) for cart_id in cart_ids]
        if len(self.cart_ids) != len(carts):
            raise InputError(
                f"cart_ids: need one id per cart ({len(carts)}), got {len(self.cart_ids)}"
            )
        if len(set(self.cart_ids)) != len(self.cart_ids):
            raise InputError(f"cart_ids: must be distinct, got {self.cart_ids}")
        self._carts: list[AxleCart] = []
        self._q: list[np.ndarray] = []
        self._u: list[np.ndarray] = []
        for index, (cart, q0, v0) in enumerate(carts):
            self._add_cart(index, cart, q0, v0)
        self._impulses = self._check_impulses(impulses)
        count = int(np.floor(self.t_end / self.dt_out * (1.0 + 1e-12)))
        grid = [k * self.dt_out for k in range(count + 1)]
        if abs(self.t_end - grid[-1]) <= 1e-9 * self.dt_out:
            grid[-1] = self.t_end
        else:
            grid.append(self.t_end)
        self._grid = grid
        self._next_sample = 0
        self._next_impulse = 0
        self._ode: DOP853 | None = None  # the phase's integrator, stepped as far as needed
        self._dense: Any = None  # the dense output of its last step
        self._phase_end = 0.0
        self._deadline = np.inf  # when the current step's wall-time slice ends (clock s)
        self.clock: Callable[[], float] = time.monotonic
        self._input = 0.0
        self.dof_labels = [(cart_id, COORD_NAMES, RATE_NAMES) for cart_id in self.cart_ids]
        self.status = "running"
        self.t = 0.0
        self.message = ""
        self.system: Any = None

    def _add_cart(self, index: int, cart: AxleCart, q0: ArrayLike, v0: ArrayLike) -> None:
        if not isinstance(cart, AxleCart):
            raise InputError(f"carts[{index}]: must start with an AxleCart, got {type(cart)}")
        q = np.asarray(q0, dtype=float)
        v = np.asarray(v0, dtype=float)
        for name, value in (("q0", q), ("v0", v)):
            if value.shape != (5,) or not np.all(np.isfinite(value)):
                raise InputError(f"carts[{index}].{name}: must be 5 finite numbers")
        maggi_basis(cart.constraint_matrix(q), WHEEL_RATES)  # A₂ solvable here: at every pose
        slip = float(np.max(np.abs(cart.constraint_matrix(q) @ v)))
        if slip > CONSTRAINT_TOL * (1.0 + float(np.max(np.abs(v)))):
            raise InputError(
                f"carts[{index}].v0: violates the no-slip constraints by {slip:.3g} m/s "
                "(build it with initial_velocity)"
            )
        self._carts.append(cart)
        self._q.append(q.copy())
        self._u.append(v[WHEEL_RATES].copy())

    def _check_impulses(self, impulses: Sequence[Mapping[str, object]]) -> list[_Impulse]:
        checked = []
        for index, impulse in enumerate(impulses):
            where = f"impulses[{index}]"
            missing = {"time", "body", "point", "vector"} - set(impulse)
            if missing:
                raise InputError(f"{where}: missing {sorted(missing)}")
            time = _number(impulse["time"], f"{where}.time")
            if time < 0:
                raise InputError(f"{where}.time: must be finite and >= 0, got {time}")
            if impulse["body"] not in self.cart_ids:
                raise InputError(f"{where}.body: unknown cart id {impulse['body']!r}")
            cart_index = self.cart_ids.index(impulse["body"])
            frame = impulse.get("frame", "world")
            if frame not in ("world", "body"):
                raise InputError(f"{where}.frame: must be 'world' or 'body', got {frame!r}")
            point = _impulse_point(impulse["point"], f"{where}.point")
            if frame == "body" and not isinstance(point, float):
                if point[1] != 0.0:
                    raise InputError(
                        f"{where}.point: a body-frame point must be (s, 0) on the axle"
                    )
                point = float(point[0])
            vector = _finite_pair(impulse["vector"], f"{where}.vector (N·s)")
            half_length = self._carts[cart_index].half_length
            if isinstance(point, float) and abs(point) > half_length:
                raise InputError(
                    f"{where}.point: must lie on the axle, |point| <= {half_length} m, got {point}"
                )
            if time <= self.t_end:
                checked.append((time, cart_index, point, vector, frame))
        checked.sort(key=lambda item: item[0])
        return checked

    @classmethod
    def from_system(cls, system: Any, t_end: float, dt_out: float) -> CartStepper:
        """A stepper for the axle carts of a compiled top-view scene.

        Parameters
        ----------
        system : solver.system.System
            Compiled from a scene whose bodies are axle carts; its ``q0``/``v0``
            hold each cart's pose and rolling velocity, its scene the impulses.
        t_end, dt_out : float
            End time and output spacing (s).
        """
        carts = []
        for body in system.scene.bodies:
            part = system.body_slices[body.id]
            carts.append((axle_cart_model(body), system.q0[part], system.v0[part]))
        impulses = [
            {
                "time": i.time,
                "body": i.body,
                "point": tuple(i.point),
                "vector": tuple(i.vector),
                "frame": i.frame,
            }
            for i in system.scene.impulses
        ]
        stepper = cls(carts, impulses, t_end, dt_out, [b.id for b in system.scene.bodies])
        stepper.system = system
        return stepper

    def add_impulse(
        self, body: str, point: float | ArrayLike, vector: ArrayLike, time: float | None = None
    ) -> None:
        """Schedule one more impulse during a run (the GUI's impulse tool).

        Parameters
        ----------
        body : str
            Id of the cart that is struck.
        point : float or array_like, shape (2,)
            Distance along the axle from C towards wheel B (m), or a world point (m).
        vector : array_like, shape (2,)
            The impulse ``(Sx, Sy)`` in world axes (N·s).
        time : float, optional
            When it acts (s); the current time by default, never earlier.

        Raises
        ------
        InputError
            For an unknown cart, a point off the axle, or a bad vector.
        """
        when = self.t if time is None else max(float(time), self.t)
        entry = {"time": when, "body": body, "point": point, "vector": vector}
        checked = self._check_impulses([entry])  # empty when after t_end: it never happens
        if checked and self._dense is not None and when <= self._ode.t_old:
            self._ode = None  # a cut phase's steps went past it: roll again from t
        pending = self._impulses[self._next_impulse :] + checked
        pending.sort(key=lambda item: item[0])
        self._impulses = self._impulses[: self._next_impulse] + pending

    @property
    def reached(self) -> float:
        """How far (s) the motion is computed: ``t``, or the current phase's last DOP853 step."""
        return self.t if self._ode is None else max(self.t, float(self._ode.t))

    def step(self) -> StepOutput:
        """Advance to the next output sample or impulse time and return what happened.

        The work of one call is bounded: once ``STEP_WALL_SLICE_S`` of wall
        time is spent, it returns after the DOP853 step it is in, with an
        empty output (``reached`` says how far the integration got), and
        the next call goes on from there with the same integrator.

        Returns
        -------
        StepOutput
            The frames and events produced, in time order. A failure of the
            integrator sets ``status = "failed"`` and emits an ``error`` event.

        Raises
        ------
        RuntimeError
            If called after the stepper finished or failed.
        """
        if self.status != "running":
            raise RuntimeError(f"CartStepper.step: the run is {self.status} ({self.message})")
        out = StepOutput()
        self._deadline = self.clock() + event_tolerances.STEP_WALL_SLICE_S
        try:
            self._advance(out)
        except SolverError as exc:
            self.status = "failed"
            self.message = str(exc)
            out.events.append(Event(t=self.t, type="error", message=self.message))
        return out

    def _advance(self, out: StepOutput) -> None:
        sample_time = self._grid[self._next_sample]
        impulse_time = (
            self._impulses[self._next_impulse][0]
            if self._next_impulse < len(self._impulses)
            else np.inf
        )
        if impulse_time <= sample_time:
            if not self._move_to(impulse_time):
                return  # the slice is spent: the next step goes on
            while (
                self._next_impulse < len(self._impulses)
                and self._impulses[self._next_impulse][0] == impulse_time
            ):
                self._apply(self._impulses[self._next_impulse], out)
                self._next_impulse += 1
            if impulse_time < sample_time:
                return
        if not self._move_to(sample_time):
            return
        out.frames.append(self._frame("sample"))
        self._next_sample += 1
        if self._next_sample == len(self._grid):
            self.status = "finished"
            self.message = f"reached t_end = {self.t_end} s"

    def _move_to(self, time: float) -> bool:
        """Roll from ``self.t`` to ``time`` (within the current phase); False when cut.

        The phase's integrator takes DOP853 steps until one ends at or past
        ``time`` (the state there is its dense output, or the step's end at
        the phase's end, as ``solve_ivp`` gives). When the step's slice is
        spent before that, it returns False with the state unchanged; the
        next call goes on from the integrator's last step.
        """
        if time == self.t:
            return True
        ode = self._ode
        if ode is None:
            self._phase_end = (
                self._impulses[self._next_impulse][0]
                if self._next_impulse < len(self._impulses)
                else self.t_end
            )
            ode = DOP853(self._rhs, self.t, self._state(), self._phase_end, rtol=RTOL, atol=ATOL)
            self._ode, self._dense = ode, None
        while ode.t < time:
            message = ode.step()
            if ode.status == "failed":
                raise SolverError(f"integration of the rolling failed at t = {self.t}: {message}")
            self._dense = ode.dense_output()
            if ode.t < time and self.clock() > self._deadline:
                return False
        state = ode.y if time == self._phase_end else self._dense(time)
        self._set_state(state)
        self.t = time
        return True

    def _state(self) -> np.ndarray:
        return np.concatenate(
            [np.concatenate([q, u]) for q, u in zip(self._q, self._u, strict=True)]
        )

    def _set_state(self, state: np.ndarray) -> None:
        for index in range(len(self._carts)):
            chunk = state[7 * index : 7 * index + 7]
            self._q[index] = chunk[:5].copy()
            self._u[index] = chunk[5:].copy()

    def _rhs(self, _t: float, state: np.ndarray) -> np.ndarray:
        rates = []
        for index, cart in enumerate(self._carts):
            chunk = state[7 * index : 7 * index + 7]
            v, u_dot = _maggi_rates(cart, chunk[:5], chunk[5:])
            rates.append(np.concatenate([v, u_dot]))
        return np.concatenate(rates)

    def _velocities(self) -> list[np.ndarray]:
        return [
            wheel_rate_basis(cart, q) @ u
            for cart, q, u in zip(self._carts, self._q, self._u, strict=True)
        ]

    def _frame(self, kind: str) -> Frame:
        velocities = self._velocities()
        kinetic = sum(
            cart.kinetic_energy(q, v)
            for cart, q, v in zip(self._carts, self._q, velocities, strict=True)
        )
        energy = EnergyBudget(
            kinetic=kinetic, potential=0.0, spring=0.0, dissipated=0.0, input=self._input
        )
        return Frame(
            t=self.t,
            kind=kind,
            q=np.concatenate(self._q) if self._q else np.zeros(0),
            v=np.concatenate(velocities) if velocities else np.zeros(0),
            contacts=(),
            energy=energy,
        )

    def _axle_coordinate(self, index: int, where: float | np.ndarray) -> float:
        """Signed distance (m) from C towards wheel B of an impulse's point of application.

        A world point (x, y) is projected onto the axle line at the current pose;
        it must fall on the axle, else the run fails with a message saying so.
        """
        if isinstance(where, float):
            return where
        cart, q = self._carts[index], self._q[index]
        along = float((where - q[:2]) @ np.array([np.cos(q[2]), np.sin(q[2])]))
        if abs(along) > cart.half_length * (1.0 + 1e-9):
            raise SolverError(
                f"impulse on {self.cart_ids[index]!r} at t = {self.t:.9g} s: the point "
                f"({where[0]:.6g}, {where[1]:.6g}) projects {along:.6g} m from the axle's "
                f"centre, beyond its half-length {cart.half_length} m"
            )
        return float(np.clip(along, -cart.half_length, cart.half_length))

    def _apply(self, impulse: _Impulse, out: StepOutput) -> None:
        """Apply one impulse at the current time: pre frame, jump, post frame, event."""
        _, index, where, given, frame = impulse
        cart, q = self._carts[index], self._q[index]
        point = self._axle_coordinate(index, where)
        vector = given if frame == "world" else body_axes(q) @ given
        pre = self._frame("pre")
        v_minus = wheel_rate_basis(cart, q) @ self._u[index]
        v_plus = impulsive_response(
            cart.mass_matrix(q),
            cart.constraint_matrix(q),
            cart.generalized_impulse(q, point, vector),
            v_minus,
            WHEEL_RATES,
        )
        self._u[index] = v_plus[WHEEL_RATES]
        change = cart.kinetic_energy(q, v_plus) - cart.kinetic_energy(q, v_minus)
        self._input += change
        self._ode = None
        post = self._frame("post")
        out.frames.extend([pre, post])
        out.events.append(
            Event(
                t=self.t,
                type="impulse",
                body=self.cart_ids[index],
                normal_impulse=float(np.hypot(*vector)),
                energy_change=change,
                v_minus=pre.v,
                v_plus=post.v,
            )
        )


_Impulse = tuple[float, int, float | np.ndarray, np.ndarray, str]
"""A checked impulse: time (s), cart index, point, vector (N·s), frame of point and vector."""


def body_axes(q: ArrayLike) -> np.ndarray:
    """Columns ``e`` (along the axle, towards wheel B) and ``n`` (rolling direction) at pose ``q``.

    A vector with body-frame components ``b`` is ``body_axes(q) @ b`` in world
    axes, and a world vector ``w`` has components ``body_axes(q).T @ w``.
    """
    phi = float(np.asarray(q, dtype=float)[2])
    c, s = np.cos(phi), np.sin(phi)
    return np.array([[c, -s], [s, c]])


def strike_in_body_frame(
    cart: AxleCart, q: ArrayLike, point: ArrayLike, vector: ArrayLike
) -> tuple[list[float], list[float]]:
    """A strike given in world axes on the cart at pose ``q``, in the cart's own axes.

    Parameters
    ----------
    cart : AxleCart
        The cart struck.
    q : array_like, shape (5,)
        Its configuration when struck (m, rad).
    point : array_like, shape (2,)
        Where it is struck, world axes (m); projected onto the axle.
    vector : array_like, shape (2,)
        The impulse ``S``, world axes (N·s); not zero.

    Returns
    -------
    point, vector : list of float
        ``[s, 0]`` (m along the axle from C towards wheel B) and
        ``[S_along, S_rolling]`` (N·s): the ``point`` and ``vector`` of a
        scene impulse with ``frame = "body"``.

    Raises
    ------
    InputError
        When ``point`` or ``vector`` is not two finite numbers, the vector is
        zero, or the point projects beyond the axle's ends.
    """
    pose = np.asarray(q, dtype=float)
    where = _finite_pair(point, "the point (m)")
    impulse = _finite_pair(vector, "the impulse S (N·s)")
    if not np.any(impulse):
        raise InputError("the impulse S is zero: drag away from the point to give it a size")
    axes = body_axes(pose)
    along = float(axes[:, 0] @ (where - pose[:2]))
    if abs(along) > cart.half_length * (1.0 + 1e-9):
        raise InputError(
            f"the point must lie on the axle: it is {along:+.3g} m from the centre along "
            f"the axle, beyond the half-length {cart.half_length:g} m"
        )
    along = float(np.clip(along, -cart.half_length, cart.half_length))
    return [along, 0.0], [float(x) for x in axes.T @ impulse]


def strike_impulse(
    system: Any, q: ArrayLike, t: float, body_id: str, point: ArrayLike, vector: ArrayLike
) -> dict[str, Any]:
    """The scene impulse that records a strike on cart ``body_id`` given at time ``t``.

    Parameters
    ----------
    system : solver.system.System
        The compiled scene of the run struck.
    q : array_like
        The configuration of the whole system when struck (the ``Frame.q``
        on screen).
    t : float
        The time of that frame (s): when the impulse acts.
    body_id : str
        Id of the cart struck.
    point, vector : array_like, shape (2,)
        Where (m) and how hard (N·s), world axes, as drawn on the screen.

    Returns
    -------
    dict
        A scene-file impulse object with ``frame = "body"`` (see
        :func:`strike_in_body_frame`), to append to the scene's ``impulses``.

    Raises
    ------
    InputError
        When ``body_id`` is no axle cart of ``system`` or the strike is off the
        axle or zero.
    """
    try:
        body = system.scene.body(body_id)
    except KeyError:
        raise InputError(f"there is no body {body_id!r} in this run") from None
    if body.type != "axle_cart":
        raise InputError(f"impulses act on axle carts only, {body_id!r} is a {body.type}")
    pose = np.asarray(q, dtype=float)[system.body_slices[body_id]]
    where, impulse = strike_in_body_frame(axle_cart_model(body), pose, point, vector)
    return {"time": float(t), "body": body_id, "point": where, "vector": impulse, "frame": "body"}


def _finite_pair(value: object, name: str) -> np.ndarray:
    """``value`` as two finite floats, or an InputError naming ``name``."""
    try:
        pair = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be two numbers, got {value!r}") from exc
    if pair.shape != (2,) or not np.all(np.isfinite(pair)):
        raise InputError(f"{name} must be two finite numbers, got {value!r}")
    return pair


def _impulse_point(value: object, name: str) -> float | np.ndarray:
    """An impulse's point: a distance along the axle (m) or a world point (x, y) (m)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        point = np.asarray(value, dtype=float)
        if point.shape != (2,) or not np.all(np.isfinite(point)):
            raise InputError(f"{name}: must be a number or two finite numbers (m), got {value!r}")
        return point
    return _number(value, name)


def _number(value: object, name: str) -> float:
    """``value`` as a finite float, or an InputError naming ``name``."""
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: must be a number, got {value!r}") from exc
    if not np.isfinite(number):
        raise InputError(f"{name}: must be finite, got {value!r}")
    return number


def _positive(value: object, name: str) -> float:
    """``value`` as a finite float > 0, or an InputError naming ``name``."""
    number = _number(value, name)
    if number <= 0:
        raise InputError(f"{name}: must be > 0, got {value!r}")
    return number
