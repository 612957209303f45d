"""A solver stepper that computes in a child process, stepped from the GUI's worker thread.

The worker thread (``impactgui.worker``) steps the solver and the GUI thread
draws; both need Python's interpreter lock. Most solver work gives it up
every few milliseconds, but a long call into compiled code keeps it: the
dense decomposition of a linear flow of beads joined by springs
(``solver.linear_flow``: ``scipy.linalg.schur`` of the whole state) held it
for 0.24 s with 50 beads, 0.55 s with 100 and minutes with 2000, and the
window then answered nothing — not Pause, not Reset, not Close.

``ProcessStepper`` has the solver stepper's shape (``system``, ``t``,
``status``, ``message``, ``reached``, ``step()``) but every ``make_stepper``
and ``step()`` runs in a child process; the worker thread waits for the
answer on a pipe, which holds no lock. ``kill`` ends the child at once from
any thread: a reset or a closed window never waits for a step to end. A
child that dies (a crash in compiled code, the system's out-of-memory
killer) makes the next ``step()`` raise ``SolverError`` naming its exit: a
failed run with its message, never a dead window.

The child computes exactly what the command line computes (the same
``make_stepper`` of the same scene); frames and events come back pickled,
float bits unchanged.
"""

from __future__ import annotations

import multiprocessing
import pickle
import signal
import threading
from typing import Any

from solver.errors import InputError, SolverError
from solver.scene import SceneError

PROCESS_MIN_BODIES = 32
"""Scenes of at least this many bodies with springs or forcing compute in a child process.

Their event-driven phases are closed forms of the whole linear state
(``solver.linear_flow``), whose dense decompositions keep the interpreter
lock for O(N³) time; smaller scenes, and scenes without springs or forcing
(a 2000-bead chain of touching beads: 22 ms at most), step in the worker
thread as before, with no start-up cost.
"""

JOIN_S = 2.0
"""How long ``close`` waits for a child it has asked to quit before killing it, s."""


def needs_process(scene: Any) -> bool:
    """True when ``scene`` should be computed in a child process (``PROCESS_MIN_BODIES``)."""
    return len(scene.bodies) >= PROCESS_MIN_BODIES and bool(scene.springs or scene.forces)


class StoppedError(SolverError):
    """The child was killed on purpose (``ProcessStepper.kill``): the run was stopped."""


def _context() -> multiprocessing.context.BaseContext:
    """Forkserver where there is one (a clean server process, not a fork of the GUI), else spawn."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["solver.simulation"])
        return context
    return multiprocessing.get_context("spawn")


def _portable(error: BaseException) -> tuple[str, Any]:
    """An exception as something that survives pickling with its meaning (SceneError's list)."""
    if isinstance(error, SceneError):
        return ("scene", list(error.problems))
    if isinstance(error, InputError):
        return ("input", str(error))
    if isinstance(error, SolverError):
        return ("solver", str(error))
    return ("other", f"{type(error).__name__}: {error}")


def _rebuilt(kind: str, payload: Any) -> Exception:
    """The exception ``_portable`` described."""
    if kind == "scene":
        return SceneError(payload)
    if kind == "input":
        return InputError(payload)
    if kind == "solver":
        return SolverError(payload)
    return RuntimeError(payload)


def _state(stepper: Any) -> tuple[float, float, str, str]:
    t = float(stepper.t)
    return t, max(t, float(getattr(stepper, "reached", t))), stepper.status, stepper.message


def serve(connection: Any, scene: Any) -> None:
    """The child process: build the stepper of ``scene``, then step it on each request."""
    from solver.simulation import make_stepper

    try:
        stepper = make_stepper(scene)
    except Exception as error:
        connection.send(("error", _portable(error)))
        return
    accepts_impulses = callable(getattr(stepper, "add_impulse", None))
    connection.send(("ready", stepper.system, accepts_impulses, _state(stepper)))
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):
            return
        if request != "step":
            return
        try:
            output = stepper.step()
        except Exception as error:  # reaches the worker as the same failure
            connection.send(("raise", _portable(error), _state(stepper)))
            continue
        connection.send(("out", output, _state(stepper)))


class ProcessStepper:
    """A stepper of ``scene`` whose work happens in a child process.

    Made in the GUI thread (nothing starts); ``start`` (the worker's
    ``prepare``) starts the child and waits for its stepper; ``step`` asks
    for one step and waits for it. ``kill`` may be called from any thread at
    any time, before ``start`` included.

    Attributes
    ----------
    system : solver.system.System or None
        The child's compiled scene (a copy), once started.
    accepts_impulses : bool
        The child's stepper takes strikes (axle carts).
    t, reached : float
        Time of the last step, s, and how far a cut phase got (``solver.simulation.progress``).
    status, message : str
        As the child's stepper's.
    pid : int or None
        The child's process id, once started.
    """

    def __init__(self, scene: Any) -> None:
        self._scene = scene
        self._lock = threading.Lock()
        self._process: Any = None
        self._connection: Any = None
        self._killed = False
        self.system: Any = None
        self.accepts_impulses = False
        self.t = self.reached = 0.0
        self.status, self.message = "running", ""
        self.pid: int | None = None

    def start(self) -> Any:
        """Start the child and wait (without the interpreter lock) until its stepper is built.

        Raises the child's ``SceneError``, ``InputError`` or ``SolverError``
        as make_stepper would, ``StoppedError`` when killed meanwhile. Where
        no child process can be started (``OSError``: no process or socket
        allowed), returns the plain stepper, which steps in the worker thread.
        """
        if self._killed:
            raise StoppedError("stopped by the user")
        try:  # not under the lock: kill() must never wait for a start (forkserver: seconds)
            context = _context()
            here, there = context.Pipe()
            process = context.Process(
                target=serve, args=(there, self._scene), name="impactgui-solver", daemon=True
            )
            process.start()
        except OSError:
            from solver.simulation import make_stepper

            return make_stepper(self._scene)
        with self._lock:
            self._process, self._connection, self.pid = process, here, process.pid
            killed = self._killed
        if killed:  # Reset or Close while it started
            there.close()
            process.kill()
            process.join(JOIN_S)
            raise StoppedError("stopped by the user")
        there.close()
        reply = self._receive()
        if reply[0] == "error":
            self.close()
            raise _rebuilt(*reply[1])
        _, self.system, self.accepts_impulses, state = reply
        self._take(state)
        return self

    def step(self) -> Any:
        """One step of the child's stepper: its ``StepOutput`` (its exception is raised here)."""
        try:
            self._connection.send("step")
        except (OSError, ValueError):
            self._receive()  # the child is gone: raises why
        reply = self._receive()
        self._take(reply[-1])
        if reply[0] == "raise":
            raise _rebuilt(*reply[1])
        return reply[1]

    def kill(self) -> None:
        """End the child now (any thread); the worker's wait then ends with ``StoppedError``."""
        with self._lock:
            self._killed = True
            if self._process is not None and self._process.exitcode is None:
                self._process.kill()

    def close(self) -> None:
        """Let the child go (worker thread, after the run): ask it to quit, then reap it."""
        with self._lock:
            process, connection = self._process, self._connection
        if process is None:
            return
        try:
            connection.send("quit")
        except (OSError, ValueError):
            pass
        process.join(JOIN_S)
        if process.exitcode is None:
            process.kill()
            process.join(JOIN_S)
        connection.close()

    def _take(self, state: tuple[float, float, str, str]) -> None:
        self.t, self.reached, self.status, self.message = state

    def _receive(self) -> tuple:
        """The child's next reply; ``SolverError`` (``StoppedError`` if killed) once it is gone."""
        try:
            return self._connection.recv()
        except (EOFError, OSError, pickle.UnpicklingError):
            pass
        self._process.join(JOIN_S)
        if self._killed:
            raise StoppedError("stopped by the user")
        raise SolverError(f"the solver process ended unexpectedly ({_exit_words(self._process)})")


def _exit_words(process: Any) -> str:
    """How a child process ended, in words."""
    code = process.exitcode
    if code is None:
        return "it no longer answers"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"
