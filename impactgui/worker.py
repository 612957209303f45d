"""Build the solver's stepper and run it off the GUI thread, handing its output over in batches.

``SimulationWorker`` lives in a ``QThread``: it builds the stepper (compiling
a scene of 2000 beads takes seconds, which in the GUI thread would freeze the
window) and calls ``stepper.step()`` in a loop; ``SimulationRunner`` lives in
the GUI thread, owns the thread, the worker and the run's ``Trajectory``, and
re-emits everything as GUI-thread signals (docs/INSTALL.md: worker signals
reach only ``@Slot`` methods of GUI-thread objects; tests wait on the
runner's signals, never the worker's).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractEventDispatcher,
    QCoreApplication,
    QEvent,
    QObject,
    QThread,
    QTimer,
    Signal,
    Slot,
)

from impactgui.collector import gui_thread_collector
from impactgui.holds import Holds
from impactgui.solver_process import StoppedError
from solver.errors import SolverError
from solver.frames import StepOutput
from solver.record import Trajectory
from solver.simulation import Watchdog, progress

if TYPE_CHECKING:
    from solver.system import System

BATCH_INTERVAL_S = 0.016
"""How long the worker gathers stepper output before handing it over, s (one display frame)."""

WORK_SLICE_S = 0.004
"""The worker computes for at most this long before it rests, s."""
REST_S = 0.002
"""How long the worker rests after a work slice, s: the GUI thread then has the GIL to itself."""
AHEAD_WORK_SLICE_S = 0.002
"""Work slice while the solver is far ahead of what is on screen (``set_ahead``), s."""
AHEAD_REST_S = 0.006
"""Rest after such a slice, s: the GUI thread, which has frames to show, comes first."""

GUI_SWITCH_INTERVAL_S = 0.0005
"""The interpreter's thread switch interval while a worker runs, s (Python's default: 0.005).

Each time the GUI thread calls into Qt (a paint, a ``setData``) it lets go
of the interpreter lock, and each Python item Qt then paints must take it
back: while the solver computes, that wait lasts up to the switch interval.
A canvas paint makes dozens of such calls; at the default 5 ms a frame of a
2000-bead chain took twice as long (108 instead of 43 ms, median, measured
against a busy Python thread). The worker's throughput hardly changes: the
interval only counts while another thread waits for the lock.
"""

GUI_FIRST_S = 0.010
"""For this long after the GUI thread starts handling events, the worker takes no step, s.

While the GUI thread handles events (a display tick, its paint, a batch)
every call it makes into Qt lets go of the interpreter lock, and coming back
waits for the worker's turn to end (``GUI_SWITCH_INTERVAL_S``): a canvas or
plot paint spent two to four times its CPU time waiting so. The worker
therefore waits while the GUI thread is busy (``_GuiActivity``), but for at
most this long from the start of the busy spell: a longer spell (or a loop
that polls for events instead of waiting) then shares the lock as before.
Measured in one run of the 200-bead chain, the wait alternately on and off
every 2 s (load average 5): 27 against 18 frames drawn per second, 62
against 87 gaps over 50 ms, the solver 10 % slower (30 ms: 55 % slower).
"""

AHEAD_GUI_FIRST_S = 0.060
"""``GUI_FIRST_S`` while the solver is far ahead of what is on screen (``set_ahead``), s.

Then the screen has all the frames it needs, and the worker can wait out
almost any busy spell of the GUI thread. A step of the plots' time axis
(the paper-004 wheel, every few seconds of playback) keeps the GUI thread
busy for 25-40 ms of CPU, and with the worker stepping after 10 ms its
wall time was about 1.5 times that (a 53 ms gap of which 36 ms CPU).
"""

HANDOVER_FRAMES_MAX = 4000
"""A batch of more frames is handed over in pieces of about this many (``split_output``),
each once the GUI thread has taken the one before: one step of a rolling wheel can hold
100 s of frames (100 000), whose appending and plotting took the GUI thread 160-190 ms in
one piece, and pieces posted together were taken in one turn all the same."""
HANDOVER_SPACING_MS = 16
"""The GUI thread lets the worker post the next piece this long after it took one, ms (a
display frame): posted at once, the next piece was taken before the display tick due
meanwhile, and two to four pieces (5 ms of the GUI thread each) fell in one gap between
two frames drawn (bench/gui.py, the paper-004 wheel rolling on: 15-20 ms of the gap's
CPU). Spaced so, a display tick comes between two pieces; the window still takes 4000
frames a display frame, far more than it shows."""
HANDOVER_WAIT_MAX_S = 0.5
"""The worker waits at most this long for a piece to be taken before it posts the next, s."""

_PAUSE_POLL_S = 0.05


def _switch_interval_holds() -> Holds:
    """Holds ``sys.setswitchinterval`` at ``GUI_SWITCH_INTERVAL_S`` while any worker runs."""
    before = [sys.getswitchinterval()]

    def shorten() -> None:
        before[0] = sys.getswitchinterval()
        sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)

    def restore() -> None:
        sys.setswitchinterval(before[0])

    return Holds(shorten, restore)


_switch_interval = _switch_interval_holds()


_gui_idle = threading.Event()
"""Clear while the GUI thread handles events and a worker runs (``_GuiActivity``); else set."""
_gui_idle.set()
_gui_busy_since = [0.0]
"""``time.monotonic()`` when ``_gui_idle`` was last cleared, s."""


class _GuiActivity(QObject):
    """Keeps ``_gui_idle`` clear while the GUI thread handles events, while any worker runs.

    Any event the GUI thread handles (a timer's tick, a paint, a batch
    handed over) clears it, through an event filter on the application; the
    event dispatcher's ``aboutToBlock`` sets it again once the GUI thread
    has nothing left to do and waits. ``holds``: hold and release in the GUI thread only.
    """

    def __init__(self) -> None:
        super().__init__()
        self.idle = _gui_idle
        self._application: QCoreApplication | None = None
        self._dispatcher: QAbstractEventDispatcher | None = None
        self.holds = Holds(self._watch, self._unwatch)

    def _watch(self) -> None:
        application = QCoreApplication.instance()
        dispatcher = QAbstractEventDispatcher.instance()
        if application is not None and dispatcher is not None:
            application.installEventFilter(self)
            dispatcher.aboutToBlock.connect(self._on_about_to_block)
            self._application, self._dispatcher = application, dispatcher

    def _unwatch(self) -> None:
        if self._application is not None and self._dispatcher is not None:
            self._application.removeEventFilter(self)
            self._dispatcher.aboutToBlock.disconnect(self._on_about_to_block)
            self._application = self._dispatcher = None
        self.idle.set()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The GUI thread is handling an event: the worker waits (the event goes on)."""
        if self.idle.is_set():
            _gui_busy_since[0] = time.monotonic()
            self.idle.clear()
        return False

    @Slot()
    def _on_about_to_block(self) -> None:
        self.idle.set()


_gui_activity_instance: _GuiActivity | None = None


def _gui_activity() -> _GuiActivity:
    """The process's one ``_GuiActivity`` (created on first use, in the GUI thread)."""
    global _gui_activity_instance
    if _gui_activity_instance is None:
        _gui_activity_instance = _GuiActivity()
    return _gui_activity_instance


def split_output(batch: StepOutput, size: int) -> list[StepOutput]:
    """``batch`` as pieces of about ``size`` frames, in order; their union is ``batch``.

    A cut never falls between frames of the same time (an impact's ``pre``
    and ``post``); each event goes with the piece whose last frame is at or
    after its time (events after the last frame: the last piece).
    """
    frames, events = batch.frames, batch.events
    if len(frames) <= size:
        return [batch]
    pieces: list[StepOutput] = []
    start = first_event = 0
    while start < len(frames):
        end = min(start + size, len(frames))
        while end < len(frames) and frames[end].t == frames[end - 1].t:
            end += 1
        last = frames[end - 1].t if end < len(frames) else float("inf")
        stop = first_event
        while stop < len(events) and events[stop].t <= last:
            stop += 1
        pieces.append(StepOutput(frames[start:end], events[first_event:stop]))
        start, first_event = end, stop
    if first_event < len(events):
        pieces[-1].events.extend(events[first_event:])
    return pieces


class SimulationWorker(QObject):
    """Builds one stepper (if given a way to) and steps it to its end in a worker thread.

    Given ``prepare`` instead of a stepper, ``run`` first calls it and emits
    ``prepared`` with the stepper it returns, or ``preparation_failed`` with
    the exception it raised (the run then ends as ``"failed"``).
    Output is coalesced: ``batch_ready`` fires at most every
    ``batch_interval`` seconds (and whenever the run pauses or ends), so the
    GUI thread gets a few dozen signals per second however fast the solver
    is. A physics failure is the stepper's ``status == "failed"``; a
    ``SolverError`` or any other exception raised by ``step()`` ends the run
    the same way, with the exception's text as the message — the worker
    never lets one escape. Nothing is added to the output, so what was
    computed stays exactly what the command line would write.

    Control methods (``pause``, ``resume``, ``step_once``, ``stop``,
    ``set_horizon``, ``set_ahead``) are thread-safe and are meant to be
    called from the GUI thread.

    Parameters
    ----------
    stepper
        Anything with ``status``, ``t``, ``message`` and ``step()`` (solver
        stepper shape); None when ``prepare`` builds it.
    batch_interval : float
        Seconds of stepping gathered into one ``batch_ready``.
    prepare : callable, optional
        Returns the stepper; called in the worker thread by ``run``.
    watchdog : solver.simulation.Watchdog, optional
        Ends the run as ``"failed"`` when its simulated time has not advanced
        for ``STALL_WALL_TIME_S`` (30 s) of wall time while it was meant to
        compute (time paused or held at the horizon does not count), as the
        command line does; default ``Watchdog()``.
    """

    prepared = Signal(object)
    """The stepper ``prepare`` built, before its first step."""
    preparation_failed = Signal(object)
    """The exception ``prepare`` raised (then ``run_ended`` follows with ``"failed"``)."""
    batch_ready = Signal(object)
    """A ``StepOutput`` holding every frame and event since the last batch."""
    run_ended = Signal(str, str)
    """``(status, message)`` once stepping is over: finished, failed or stopped."""

    def __init__(
        self,
        stepper: Any,
        batch_interval: float = BATCH_INTERVAL_S,
        prepare: Callable[[], Any] | None = None,
        watchdog: Watchdog | None = None,
    ) -> None:
        super().__init__()
        self._stepper = stepper
        self._watchdog = Watchdog() if watchdog is None else watchdog
        self._prepare = prepare
        self._batch_interval = batch_interval
        self._control = threading.Condition()
        self._paused = False
        self._pending_steps = 0
        self._stop_requested = False
        self._horizon: float | None = None
        self._duty = (WORK_SLICE_S, REST_S)
        self._gui_first = GUI_FIRST_S
        """How long the worker waits, at most, for a busy spell of the GUI thread to end, s."""
        self._taken = threading.Event()
        """Set by ``piece_taken`` (or ``stop``): the next piece of a large batch may go."""
        self.awaits_taking = False
        """True while the batch last handed over is a piece with more to follow, or a large
        one: the GUI thread then answers ``piece_taken`` (read in the GUI thread, written
        here)."""
        self._last_large = False  # the last piece handed over was large (``_hand_over``)

    def pause(self) -> None:
        """Stop stepping after the current step until ``resume`` or ``step_once``."""
        with self._control:
            self._paused = True

    def resume(self) -> None:
        """Continue stepping after ``pause``."""
        with self._control:
            self._paused = False
            self._control.notify_all()

    def step_once(self) -> None:
        """While paused: take exactly one more stepper step, then hand it over."""
        with self._control:
            self._pending_steps += 1
            self._control.notify_all()

    def stop(self) -> None:
        """End the run after the current step (the thread must still be joined)."""
        with self._control:
            self._stop_requested = True
            self._control.notify_all()
        self._taken.set()

    def piece_taken(self) -> None:
        """The GUI thread has taken the last batch handed over (thread-safe)."""
        self._taken.set()

    def set_horizon(self, t: float | None) -> None:
        """Take no step once the stepper's time has reached ``t`` (s); ``None``: no limit.

        Keeps an interactive run just ahead of the playback: a strike given
        on the canvas restarts the run, and what was computed beyond the
        screen is then computed again.
        """
        with self._control:
            self._horizon = t
            self._control.notify_all()

    def set_ahead(self, ahead: bool) -> None:
        """Compute in the background (short slices, long rests) while ``ahead`` is True.

        Both threads need the GIL; when the solver is far ahead of the
        playback, every repaint would otherwise wait for its turn on it.
        """
        self._duty = (AHEAD_WORK_SLICE_S, AHEAD_REST_S) if ahead else (WORK_SLICE_S, REST_S)
        self._gui_first = AHEAD_GUI_FIRST_S if ahead else GUI_FIRST_S

    def _would_wait(self, t: float) -> bool:
        """True when ``_next_step_allowed`` would block now (lock held by the caller)."""
        if self._stop_requested:
            return False
        if self._paused:
            return not self._pending_steps
        return self._horizon is not None and t >= self._horizon

    def _must_hand_over(self, t: float) -> bool:
        """True when the worker is about to block (paused, or at the horizon)."""
        with self._control:
            return self._would_wait(t)

    def _next_step_allowed(self, thread: QThread, t: float) -> tuple[bool, bool, bool]:
        """Block while paused or at the horizon.

        Returns ``(go on, this is a single step, it had to wait)``.
        """
        waited = False
        with self._control:
            while True:
                if self._stop_requested or thread.isInterruptionRequested():
                    return False, False, waited
                if not self._would_wait(t):
                    single = self._paused
                    if single:
                        self._pending_steps -= 1
                    return True, single, waited
                waited = True
                self._control.wait(_PAUSE_POLL_S)

    def _build(self) -> bool:
        """Build the stepper with ``prepare`` (worker thread); False when that failed."""
        if self._stepper is not None or self._prepare is None:
            return True
        try:
            self._stepper = self._prepare()
        except StoppedError:  # the child process was ended by Reset or Close meanwhile
            self.run_ended.emit("stopped", "stopped by the user")
            return False
        except Exception as exc:  # bad input or a solver bug: a message, not a crash
            self.preparation_failed.emit(exc)
            self.run_ended.emit("failed", f"the solver could not start: {exc}")
            return False
        self.prepared.emit(self._stepper)
        return True

    @Slot()
    def run(self) -> None:
        """Build the stepper if need be, then step until it is done or the run is stopped.

        Runs in the worker thread.
        """
        if not self._build():
            return
        thread = QThread.currentThread()
        stepper = self._stepper
        watchdog = self._watchdog
        watchdog.restart()
        gui_idle = _gui_idle
        batch = StepOutput()
        last_handover = rest_due = time.monotonic()
        status, message = "stopped", "stopped by the user"
        steps = 0
        try:
            while True:
                if (batch.frames or batch.events) and self._must_hand_over(stepper.t):
                    batch = self._hand_over(batch)
                go_on, single, waited = self._next_step_allowed(thread, stepper.t)
                if not go_on:
                    break
                if waited:  # paused or at the horizon: no progress was due meanwhile
                    watchdog.restart()
                if not gui_idle.is_set():
                    waited_s = _gui_busy_since[0] + self._gui_first - time.monotonic()
                    gui_idle.wait(max(0.0, waited_s))
                output = stepper.step()
                first, steps = steps == 0, steps + 1
                watchdog.check(progress(stepper))
                batch.frames.extend(output.frames)
                batch.events.extend(output.events)
                if stepper.status != "running":
                    status, message = stepper.status, stepper.message
                    break
                now = time.monotonic()
                # the first step's frames at once: the next step may take long (a big flow)
                if single or first or now - last_handover >= self._batch_interval:
                    batch = self._hand_over(batch, keep_tail=not (single or first))
                    last_handover = now
                work_slice, rest = self._duty
                if now - rest_due >= work_slice:
                    time.sleep(rest)
                    rest_due = time.monotonic()
        except StoppedError:  # the child process was ended by Reset or Close
            pass
        except SolverError as exc:
            status, message = "failed", str(exc)
        except Exception as exc:  # any solver bug must reach the user as a message, not a crash
            status, message = "failed", f"{type(exc).__name__}: {exc}"
        close = getattr(stepper, "close", None)
        if callable(close):  # a child process (impactgui.solver_process): let it go
            close()
        if batch.frames or batch.events:
            self._hand_over(batch)
        self.run_ended.emit(status, message)

    def _hand_over(self, batch: StepOutput, keep_tail: bool = False) -> StepOutput:
        """Emit ``batch``; a very large one in pieces, each once the one before was taken.

        The GUI thread then appends and draws each piece in a turn of its
        own, with display ticks between them. Once the run is stopped the
        rest goes at once (``stop`` delivers what was handed over).
        ``keep_tail``: a large batch's last, smaller piece is not emitted but
        returned, to start the next batch (the next large piece would otherwise
        follow it in the same turn); else an empty output is returned.
        """
        pieces = split_output(batch, HANDOVER_FRAMES_MAX)
        tail = StepOutput()
        if keep_tail and len(pieces) > 1 and len(pieces[-1].frames) < HANDOVER_FRAMES_MAX:
            tail = pieces.pop()
        for k, piece in enumerate(pieces):
            large = len(piece.frames) >= HANDOVER_FRAMES_MAX
            # a large piece waits for the one before, of this batch or, when that one was large
            # too, of the batch before: a free flight's samples come a block a step
            # (solver.output_frames.VECTOR_CHUNK), gathered into batches handed over one
            # after the other, whose large pieces were otherwise taken in one turn
            if k or (large and self._last_large):
                self._taken.wait(HANDOVER_WAIT_MAX_S)
            self._taken.clear()
            if self._stop_requested:
                self._taken.set()
            self.awaits_taking = k < len(pieces) - 1 or large
            self._last_large = large
            self.batch_ready.emit(piece)
        return tail


class SimulationRunner(QObject):
    """One run of one stepper, seen from the GUI thread.

    Owns the worker thread and the ``Trajectory`` the batches are appended
    to. Everything computed stays in ``trajectory`` after the run ends,
    fails or is stopped, ready to scrub and export.

    Given ``prepare`` instead of a stepper, the stepper is built in the
    worker thread: until ``prepared`` fires, ``is_preparing`` is True,
    ``system`` is None and ``trajectory`` is an empty placeholder; at
    ``prepared`` the runner has its ``system`` and a fresh ``trajectory``
    (before any frame arrives).

    Parameters
    ----------
    stepper
        A solver stepper (``make_stepper(...)``); its ``system`` names the
        trajectory's columns. None when ``prepare`` is given.
    parent : QObject, optional
        Qt parent (GUI thread).
    prepare : callable, optional
        Builds and returns the stepper; called in the worker thread.
    watchdog : solver.simulation.Watchdog, optional
        Fails a run that stops advancing (``SimulationWorker``).
    cancel : callable, optional
        Ends the solver's work at once from the GUI thread, wherever it is
        (``ProcessStepper.kill``: its child process); called by ``abandon``
        and ``stop``.

    Attributes
    ----------
    accepts_impulses : bool
        True when the run may be struck (axle carts: the stepper has
        ``add_impulse``); the window then keeps it just ahead of the screen.
    ahead : bool
        As last given to ``set_ahead``: the worker computes in the background.
    is_preparing : bool
        True while the worker thread builds the stepper (``prepare``).
    """

    prepared = Signal()
    """The stepper is built: ``system`` and ``trajectory`` are the run's (GUI thread)."""
    preparation_failed = Signal(object)
    """The exception that kept the stepper from being built; ``ended`` follows (GUI thread)."""
    frames_added = Signal(object)
    """The ``StepOutput`` batch just appended to ``trajectory`` (GUI thread)."""
    ended = Signal(str, str)
    """``(status, message)``: ``"finished"``, ``"failed"`` or ``"stopped"`` (GUI thread)."""
    thread_finished = Signal()
    """The worker thread has ended (its run is over, or abandoned and built) (GUI thread)."""

    def __init__(
        self,
        stepper: Any = None,
        parent: QObject | None = None,
        prepare: Callable[[], Any] | None = None,
        watchdog: Watchdog | None = None,
        cancel: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(parent)
        self._cancel = cancel
        if (stepper is None) == (prepare is None):
            raise ValueError("give a stepper or a way to prepare one, not both")
        self.system: System | None = None
        self.accepts_impulses = False
        self.is_preparing = stepper is None
        self._take_stepper(stepper)
        self.status = "running"
        self.message = ""
        self.ahead = False
        self._paused = False
        self._thread: QThread | None = QThread()
        self._thread.setObjectName("simulation")
        self._worker: SimulationWorker | None = SimulationWorker(
            stepper, prepare=prepare, watchdog=watchdog
        )
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        self._worker.prepared.connect(self._on_prepared)
        self._worker.preparation_failed.connect(self._on_preparation_failed)
        self._worker.batch_ready.connect(self._on_batch)
        self._worker.run_ended.connect(self._on_run_ended)
        self._thread.finished.connect(self._on_thread_finished)
        self._holds_collector = False
        self._handover_timer = QTimer(self)
        self._handover_timer.setSingleShot(True)
        self._handover_timer.setInterval(HANDOVER_SPACING_MS)
        self._handover_timer.timeout.connect(self._let_next_piece_go)

    def start(self) -> None:
        """Start stepping in the worker thread.

        From now until the thread has finished, Python's cyclic garbage
        collection runs only in the GUI thread (``impactgui.collector``), the
        interpreter switches threads every ``GUI_SWITCH_INTERVAL_S`` and the
        worker steps only while the GUI thread waits for events (or has been
        busy for ``GUI_FIRST_S``, or ``AHEAD_GUI_FIRST_S`` while the solver is far ahead).
        """
        if self._thread is not None and not self._thread.isRunning():
            if not self._holds_collector:
                gui_thread_collector().hold()
                _switch_interval.hold()
                _gui_activity().holds.hold()
                self._holds_collector = True
            self._thread.start()

    @Slot()
    def _on_thread_finished(self) -> None:
        self._release_collector()
        self.thread_finished.emit()

    def _release_collector(self) -> None:
        if self._holds_collector:
            self._holds_collector = False
            gui_thread_collector().release()
            _switch_interval.release()
            _gui_activity().holds.release()

    @property
    def is_running(self) -> bool:
        """True until the run has ended (finished, failed or stopped)."""
        return self.status == "running"

    @property
    def is_joined(self) -> bool:
        """True once the worker thread has been stopped and joined (``stop``)."""
        return self._thread is None

    @property
    def is_paused(self) -> bool:
        """True between ``pause`` and ``resume``."""
        return self._paused

    def pause(self) -> None:
        """Hold the worker after its current step."""
        self._paused = True
        if self._worker is not None:
            self._worker.pause()

    def resume(self) -> None:
        """Let a paused worker continue."""
        self._paused = False
        if self._worker is not None:
            self._worker.resume()

    def step_once(self) -> None:
        """Pause (if running) and advance the solver by one stepper step."""
        if self._worker is None or not self.is_running:
            return
        self.pause()
        self._worker.step_once()

    def set_horizon(self, t: float | None) -> None:
        """Let the solver compute up to time ``t`` (s) only; ``None`` lifts the limit."""
        if self._worker is not None:
            self._worker.set_horizon(t)

    def set_ahead(self, ahead: bool) -> None:
        """Tell the worker whether it is far ahead of the screen (it then yields more)."""
        self.ahead = bool(ahead)
        if self._worker is not None:
            self._worker.set_ahead(ahead)

    def abandon(self) -> None:
        """Drop the run at once, whatever the worker is doing: Reset and Close never wait.

        The solver's work is ended now when it can be (``cancel``: a child
        process is killed); else the worker takes no step after the one it
        is in (a step is bounded: ``solver.events.STEP_WALL_SLICE_S``), or
        after the stepper's build, and its thread then ends on its own
        (``thread_finished``). Nothing more reaches the runner's signals'
        receivers; the status is ``"stopped"``. ``stop`` still joins the thread.
        """
        if self._thread is None:
            return
        for signal in (self.prepared, self.preparation_failed, self.frames_added, self.ended):
            signal.disconnect()
        self._end_work()
        self.status, self.message = "stopped", "stopped by the user"

    def _end_work(self) -> None:
        """Ask the worker to stop after its current step, and end a child's work now."""
        if self._worker is not None:
            self._worker.stop()
        if self._cancel is not None:
            self._cancel()
        if self._thread is not None:
            self._thread.requestInterruption()
            self._thread.quit()

    def stop(self, timeout_ms: int = 10000) -> bool:
        """End the run and join the worker thread; idempotent. False if it did not end in time.

        Batches already handed over but not yet delivered are delivered
        before this returns, so ``trajectory`` holds everything computed.
        A worker still inside a step after ``timeout_ms`` is left to end on
        its own (its thread is kept alive until then: destroying a running
        ``QThread`` aborts the process); the run is stopped all the same.
        """
        if self._thread is None:
            return True
        self._end_work()
        joined = self._thread.wait(timeout_ms)
        if joined:
            QCoreApplication.sendPostedEvents(self, QEvent.Type.MetaCall)
            self._release_collector()
        else:  # the collector stays held until the thread ends (_on_thread_finished)
            _keep_until_finished(self._thread, self._worker)
        self._thread = None
        self._worker = None
        if self.status == "running":
            self.status, self.message = "stopped", "stopped by the user"
            self.trajectory.status, self.trajectory.message = self.status, self.message
            self.ended.emit(self.status, self.message)
        return joined

    def _take_stepper(self, stepper: Any) -> None:
        """The run's system, impulse ability and (empty) trajectory, from its stepper."""
        self.system = getattr(stepper, "system", None)
        accepts = getattr(stepper, "accepts_impulses", None)  # a ProcessStepper says so
        if accepts is None:
            accepts = callable(getattr(stepper, "add_impulse", None))
        self.accepts_impulses = bool(accepts)
        self.trajectory = Trajectory(self.system)

    @Slot(object)
    def _on_prepared(self, stepper: Any) -> None:
        self._take_stepper(stepper)
        self.is_preparing = False
        self.prepared.emit()

    @Slot(object)
    def _on_preparation_failed(self, error: BaseException) -> None:
        self.is_preparing = False
        self.preparation_failed.emit(error)

    @Slot(object)
    def _on_batch(self, batch: StepOutput) -> None:
        self.trajectory.append(batch)
        self.frames_added.emit(batch)
        if self._worker is not None and self._worker.awaits_taking:
            self._handover_timer.start()  # no timer for a whole batch: no wake-up for nothing

    @Slot()
    def _let_next_piece_go(self) -> None:
        """A display frame after a piece was taken: the worker may post the next one."""
        if self._worker is not None:
            self._worker.piece_taken()

    @Slot(str, str)
    def _on_run_ended(self, status: str, message: str) -> None:
        if self.status != "running":
            return
        self.status, self.message = status, message
        self.trajectory.status, self.trajectory.message = status, message
        if self._thread is not None:
            self._thread.quit()
        self.ended.emit(status, message)


_lingering: list[tuple[QThread, QObject | None]] = []
"""Worker threads ``stop`` gave up waiting for, kept until they end (GUI thread)."""


def _keep_until_finished(thread: QThread, worker: QObject | None) -> None:
    """Hold ``thread`` (and its worker) until it has finished, then let both go."""
    entry = (thread, worker)
    _lingering.append(entry)

    def forget() -> None:
        if entry in _lingering:
            _lingering.remove(entry)

    thread.finished.connect(forget)
    if thread.isFinished():
        forget()
