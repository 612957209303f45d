"""Choosing a stepper for a scene and running it to the end.

``make_stepper`` picks the stepper a scene needs — top-view axle-cart scenes
roll with :class:`solver.cart_motion.CartStepper`, ``"time-stepping"`` uses
:class:`solver.timestepping.TimeSteppingStepper` (Moreau–Jean), everything
else the event-driven :class:`solver.events.EventDrivenStepper` — and
``simulate`` drives it into a :class:`solver.record.Trajectory`. The GUI
worker and the command line use the same two calls.
"""

from __future__ import annotations

from typing import Any

from solver.cart_motion import CartStepper
from solver.errors import InputError
from solver.events import EventDrivenStepper
from solver.record import Trajectory
from solver.system import System
from solver.timestepping import TimeSteppingStepper

METHODS = ("event-driven", "time-stepping")
DEFAULT_RTOL = 1e-10
DEFAULT_ATOL = 1e-12
"""Event-driven ODE tolerances used when the scene gives none."""


def make_stepper(
    scene_or_system: Any,
    t_end: float | None = None,
    method: str | None = None,
    dt_out: float | None = None,
) -> Any:
    """A ready-to-step stepper for a scene (ARCHITECTURE "Stepper shape").

    Parameters
    ----------
    scene_or_system : solver.scene.Scene or solver.system.System
        The scene, or a system already compiled from it.
    t_end : float, optional
        End of the run (s); default ``scene.solver.t_end``.
    method : {"event-driven", "time-stepping"}, optional
        Default ``scene.solver.method``. Ignored for top-view (axle cart)
        scenes, which always roll between their scheduled impulses.
    dt_out : float, optional
        Output sample spacing (s); default ``scene.solver.dt_out``.

    Returns
    -------
    EventDrivenStepper, TimeSteppingStepper or CartStepper
        All with ``status``, ``t``, ``message``, ``system`` and ``step()``.

    Raises
    ------
    InputError
        For an unknown ``method``.
    """
    system = scene_or_system if isinstance(scene_or_system, System) else System(scene_or_system)
    settings = system.scene.solver
    t_end = settings.t_end if t_end is None else t_end
    dt_out = settings.dt_out if dt_out is None else dt_out
    method = settings.method if method is None else method
    if method not in METHODS:
        raise InputError(f"`method` must be one of {', '.join(METHODS)}, got {method!r}")
    if system.scene.view == "top":
        return CartStepper.from_system(system, t_end=t_end, dt_out=dt_out)
    if method == "time-stepping":
        return TimeSteppingStepper(system, t_end, dt_out, h=settings.dt)
    return EventDrivenStepper(
        system,
        t_end,
        dt_out,
        rtol=settings.rtol or DEFAULT_RTOL,
        atol=settings.atol or DEFAULT_ATOL,
    )


def simulate(
    scene: Any,
    t_end: float | None = None,
    method: str | None = None,
    dt_out: float | None = None,
) -> Trajectory:
    """Run a scene to its end (or to a failure) and return everything computed.

    Parameters are those of :func:`make_stepper`. A failure mid-run does not
    raise: the trajectory's ``status`` is ``"failed"``, its ``message`` says
    why and its last event is the ``error`` event.
    """
    stepper = make_stepper(scene, t_end=t_end, method=method, dt_out=dt_out)
    trajectory = Trajectory(stepper.system)
    while stepper.status == "running":
        trajectory.append(stepper.step())
    trajectory.status = stepper.status
    trajectory.message = stepper.message
    return trajectory
