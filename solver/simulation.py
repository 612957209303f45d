"""Choosing a stepper for a scene and running it to the end.

``make_stepper`` picks the stepper a scene needs — top-view axle-cart scenes
roll with :class:`solver.cart_motion.CartStepper`, ``"time-stepping"`` uses
:class:`solver.timestepping.TimeSteppingStepper` (Moreau–Jean), everything
else the event-driven :class:`solver.events.EventDrivenStepper` — and
``drive`` runs it into a :class:`solver.record.Trajectory` under a
``Watchdog``: a run whose simulated time stops advancing for
``STALL_WALL_TIME_S`` of wall time fails instead of hanging, and an
unexpected exception ends the run as a failure that keeps everything
computed so far. ``simulate`` and the command line use these calls.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from threadpoolctl import threadpool_limits

from solver.cart_motion import CartStepper
from solver.errors import InputError, SolverError
from solver.events import EventDrivenStepper
from solver.frames import Event, StepOutput
from solver.record import Trajectory
from solver.scene import run_size_problems
from solver.system import System

METHODS = ("event-driven", "time-stepping")
DEFAULT_RTOL = 1e-10
DEFAULT_ATOL = 1e-12
"""Event-driven ODE tolerances used when the scene gives none."""
STALL_WALL_TIME_S = 30.0
"""Wall time (s) a run may go on without advancing simulated time before it fails."""
PROGRESS_REL = 1e-9
"""Least advance of simulated time that counts as progress, relative to it (at least 1 s).

A run that creeps on by a few ulps a phase (an event found again a moment
after the instant it was handled) still raises ``t``: it is a stall all the same."""


class Watchdog:
    """Fails a run whose simulated time has not advanced for ``stall_seconds`` of wall time.

    Advanced means by more than ``PROGRESS_REL`` of the time it last advanced
    from (at least 1 s): creeping on by ulps is no progress.

    Call :meth:`check` with the stepper's :func:`progress` after every step.
    The work inside one step is bounded on its own (a wall-time slice, at
    which a long phase is cut and resumed by the next step; the impact laws'
    budgets), so a stall is always seen at the next check.

    Parameters
    ----------
    stall_seconds : float
        Wall time allowed without progress, s.
    clock : callable, optional
        Monotonic clock in seconds (``time.monotonic``; tests pass their own).
    """

    def __init__(
        self, stall_seconds: float = STALL_WALL_TIME_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stall_seconds = stall_seconds
        self._clock = clock
        self._t = -math.inf
        self._since = clock()

    def restart(self) -> None:
        """Start the stall clock afresh (after a pause, when no progress was due)."""
        self._t = -math.inf
        self._since = self._clock()

    def check(self, t: float) -> None:
        """Note simulated time ``t`` (s); raise :class:`SolverError` past the stall limit."""
        now = self._clock()
        last = self._t
        if t > last and (last == -math.inf or t > last + PROGRESS_REL * max(1.0, abs(last))):
            self._t, self._since = t, now
            return
        if now - self._since > self.stall_seconds:
            where = (
                f"stuck at t = {t!r} s"
                if t <= last
                else f"t crept from {last!r} to {t!r} s, less than {PROGRESS_REL:g} of it"
            )
            raise SolverError(
                f"no progress in simulated time for {self.stall_seconds:g} s of wall time "
                f"({where}; STALL_WALL_TIME_S)"
            )


def progress(stepper: Any) -> float:
    """How far (s) ``stepper`` has computed the motion: its time, or further inside a cut phase.

    The event-driven stepper cuts a long smooth phase at its wall-time slice
    and notes in ``reached`` how far its pieces got, while ``t`` stays at the
    phase's start: a watchdog that reads this sees the work inside a phase.
    """
    return max(float(stepper.t), float(getattr(stepper, "reached", stepper.t)))


def drive(
    stepper: Any,
    trajectory: Trajectory,
    watchdog: Watchdog | None = None,
    on_step: Callable[[float], None] | None = None,
) -> Exception | None:
    """Step ``stepper`` to its end, appending every output to ``trajectory``.

    Sets ``trajectory.status`` and ``message``. A :class:`SolverError` (a stall
    seen by ``watchdog`` included) or any other exception ends the run as
    ``"failed"`` with an ``error`` event, keeping everything recorded so far;
    ``KeyboardInterrupt`` propagates.

    Parameters
    ----------
    stepper : stepper
        From :func:`make_stepper`.
    trajectory : Trajectory
        Where the frames and events go.
    watchdog : Watchdog, optional
        Default ``Watchdog()`` (``STALL_WALL_TIME_S``).
    on_step : callable, optional
        Called with the simulated time (s) after each step (a progress bar).

    Returns
    -------
    Exception or None
        The unexpected exception (not a ``SolverError``) that ended the run,
        for a caller that logs its traceback; ``None`` otherwise.
    """
    watchdog = Watchdog() if watchdog is None else watchdog
    unexpected: Exception | None = None
    try:
        while stepper.status == "running":
            trajectory.append(stepper.step())
            if on_step is not None:
                on_step(stepper.t)
            watchdog.check(progress(stepper))
        trajectory.status, trajectory.message = stepper.status, stepper.message
        return None
    except SolverError as error:
        message = str(error)
    except Exception as error:
        unexpected = error
        message = f"internal error ({type(error).__name__}: {error})"
    t = float(getattr(stepper, "t", 0.0))
    message = f"t = {t!r} s: {message}"
    trajectory.append(StepOutput(events=[Event(t=t, type="error", message=message)]))
    trajectory.status, trajectory.message = "failed", message
    return unexpected


COMPLIANT_BODIES_MAX = 50
"""Most disks with compliant body–body contacts: every pair is evaluated at every step."""


def _too_many_compliant_bodies(n_disks: int) -> str:
    """The refusal of ``contact.compliance`` between more than ``COMPLIANT_BODIES_MAX`` disks.

    Compliant body–body contacts (solver.compliance) evaluate every pair of
    disks at every force evaluation, n(n − 1)/2 of them (docs/LIMITS.md).
    """
    return (
        f"contact.compliance: compliant contacts between bodies are computed for at most "
        f"{COMPLIANT_BODIES_MAX} disks (every pair is evaluated at every step), got {n_disks}; "
        "give the boundaries their own `compliance` and remove it from `contact`"
    )


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
        For an unknown ``method``, or a run past the bounds of
        :func:`solver.scene.run_size_problems` (too many output samples or
        time steps), refused before anything is allocated.
    """
    system = scene_or_system if isinstance(scene_or_system, System) else System(scene_or_system)
    settings = system.scene.solver
    t_end = settings.t_end if t_end is None else t_end
    dt_out = settings.dt_out if dt_out is None else dt_out
    method = settings.method if method is None else method
    if method not in METHODS:
        raise InputError(f"`method` must be one of {', '.join(METHODS)}, got {method!r}")
    for key, problem in run_size_problems(t_end, dt_out, settings.dt, method):
        raise InputError(f"`{key}` {problem}")
    if system.scene.contact.compliance is not None and system.n_disks > COMPLIANT_BODIES_MAX:
        raise InputError(_too_many_compliant_bodies(system.n_disks))
    if system.scene.actions:  # timed user actions: plain runs between them (solver.actions)
        from solver.actions import ActionStepper

        def plain(scene: Any, segment_end: float) -> Any:
            return make_stepper(scene, t_end=segment_end, method=method, dt_out=dt_out)

        return ActionStepper(system, plain, t_end)
    if system.scene.view == "top":
        return CartStepper.from_system(system, t_end=t_end, dt_out=dt_out)
    if method == "time-stepping":
        # imported here: it brings numba (compiled kernels), which an event-driven run,
        # most runs, need not load (0.2 s at every start, and 28 000 objects on the heap)
        from solver.timestepping import TimeSteppingStepper

        return TimeSteppingStepper(system, t_end, dt_out, h=settings.dt)
    one_blas_thread()
    return EventDrivenStepper(
        system,
        t_end,
        dt_out,
        rtol=settings.rtol or DEFAULT_RTOL,
        atol=settings.atol or DEFAULT_ATOL,
    )


_BLAS_LIMITED = False


def one_blas_thread() -> None:
    """Limit this process's BLAS and OpenMP pools to one thread, once per process.

    OpenBLAS keeps its idle threads spinning after each call. The event-driven
    engine makes many small products (a long chain's modal state, ``N × N``
    once per time, :mod:`solver.modal_flow`; a sweep's points, one per worker
    and core): on two shared cores a pool per process made a 1000-bead chain
    5× slower in CPU time and a sweep worker's impacts 2×.
    """
    global _BLAS_LIMITED
    if not _BLAS_LIMITED:
        threadpool_limits(1)
        _BLAS_LIMITED = True


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
    drive(stepper, trajectory)
    return trajectory
