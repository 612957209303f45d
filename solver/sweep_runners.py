"""How a sweep's points are run (:mod:`solver.sweep`): a process pool started from a fork
server (workers that end with their sweep, Ctrl+C deferred while a pool starts) or a Dask
cluster.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from itertools import islice
from multiprocessing import forkserver
from typing import Any

from solver.simulation import one_blas_thread
from solver.sweep_point import (
    PointResult,
    PointTask,
    SweepError,
    run_point,
)

# -------------------------------------------------------------------- runners


def default_workers() -> int:
    """The number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


PARENT_CHECK_S = 1.0
"""How often a pool worker checks that the process running the sweep still exists, s."""


def _start_worker(sweep_pid: int) -> None:
    """Pool worker start-up: Ctrl-C is the parent's to handle; end with the sweep.

    A sweep killed outright (SIGKILL, a crash) cannot stop its workers, and
    they would finish their points for nobody (the pool's fork server keeps
    them alive): each worker ends itself within ``PARENT_CHECK_S`` of the
    process that ran the sweep.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with, args=(sweep_pid,), daemon=True).start()
    one_blas_thread()


def _end_with(pid: int) -> None:
    while True:
        time.sleep(PARENT_CHECK_S)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:
            continue


def _lost(task: PointTask, reason: str) -> PointResult:
    return PointResult(
        run=task.run,
        values=task.values,
        status="failed",
        t_end=0.0,
        n_impacts=0,
        t_zeno=None,
        E_dissipated=None,
        final_state=(),
        message=f"the worker running this point was lost: {reason}",
    )


STOP_POLL_S = 0.05
"""How often a running sweep looks at its ``stop`` event while no point finishes, s."""


POINTS_PER_WORKER = 2
"""Points handed to the pool at a time, per worker: each worker has its next point
waiting, and an interrupted sweep has only these few to abandon."""


def _start_fork_server() -> None:
    """Start the pool's fork server (once per process) deaf to Ctrl-C.

    Ctrl-C on a terminal signals every process of the foreground group, the
    pool's included. Workers ignore it once started (``_start_worker``), but
    the fork server that forks them spends seconds importing the solver
    first, and a Ctrl-C then would end it with a traceback. An ignored
    signal stays ignored in a started program (a blocked one does not:
    the start unblocks it), so the server is started with SIGINT ignored;
    its workers inherit that. Only the main thread may change it; the
    server starts in a few milliseconds, and a Ctrl-C within them is lost.
    """
    if threading.current_thread() is not threading.main_thread():
        forkserver.ensure_running()
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def _ctrl_c_deferred() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) that comes within the block until its end.

    Submitting a point may start a worker; a Ctrl-C in the middle of that
    leaves a process the pool does not know of, which no one stops. The
    signal is raised again once the block is done. Outside the main thread
    signals cannot be handled, and nothing is held.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, _frame: came.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if came:
            signal.raise_signal(signal.SIGINT)


class _PoolRunner:
    """Points on a local ``ProcessPoolExecutor`` (forkserver processes: safe beside threads).

    At most ``POINTS_PER_WORKER`` points per worker are submitted at a time,
    the next ones as points finish: stopping early has only those to abandon,
    and their processes are ended at once instead of finishing them.
    """

    def __init__(self, workers: int | None) -> None:
        if workers is not None and workers < 1:
            raise SweepError(f"--workers: must be >= 1, got {workers}")
        self._workers = workers or default_workers()
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["solver.sweep_preload"])
        _start_fork_server()
        self._executor = ProcessPoolExecutor(
            max_workers=self._workers,
            mp_context=context,
            initializer=_start_worker,
            initargs=(os.getpid(),),
        )
        self._submitted: dict[Future[PointResult], PointTask] = {}

    def run(self, tasks: list[PointTask], stop: threading.Event) -> Iterator[PointResult]:
        waiting = iter(tasks)
        self._submit(waiting)
        while self._submitted and not stop.is_set():
            done, _ = wait(self._submitted, timeout=STOP_POLL_S, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: self._submitted[f].run):
                error = future.exception()
                yield _lost(self._submitted[future], str(error)) if error else future.result()
                del self._submitted[future]  # only once the caller has the point
            self._submit(waiting)

    def _submit(self, waiting: Iterator[PointTask]) -> None:
        with _ctrl_c_deferred():
            for task in islice(waiting, POINTS_PER_WORKER * self._workers - len(self._submitted)):
                self._submitted[self._executor.submit(run_point, task)] = task

    def stop(self) -> None:
        """Abandon the points not done: end the workers now, then the pool.

        No future is cancelled here: the pool's own thread marks the
        abandoned ones (cancelling them from this thread as well makes that
        thread fail on a cancelled future when it finds the workers gone).
        """
        if any(not future.done() for future in self._submitted):
            for process in list((getattr(self._executor, "_processes", None) or {}).values()):
                process.terminate()
        self._executor.shutdown(wait=True, cancel_futures=True)


class _DaskRunner:
    """Points on a Dask distributed cluster (``pip install impactgui[cluster]``)."""

    def __init__(self, address: str) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise SweepError(
                "--scheduler: needs Dask distributed (pip install impactgui[cluster])"
            ) from None
        try:
            self._client = Client(address, timeout="10s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as error:
            raise SweepError(f"--scheduler: cannot reach {address}: {error}") from None
        self._futures: list[Any] = []

    def run(self, tasks: list[PointTask], stop: threading.Event) -> Iterator[PointResult]:
        from distributed import as_completed

        token = uuid.uuid4().hex[:12]
        owner = {}
        for task in tasks:
            future = self._client.submit(
                run_point, task, key=f"impactgui-point-{token}-{task.run}", pure=False
            )
            owner[future.key] = task
            self._futures.append(future)
        finished = as_completed(self._futures, loop=self._client.loop)
        while not finished.is_empty() and not stop.is_set():
            if not finished.has_ready():
                stop.wait(STOP_POLL_S)
                continue
            for future in finished.next_batch(block=False):
                task = owner[future.key]
                if future.status == "finished":
                    yield future.result()
                else:
                    yield _lost(task, f"{future.status}: {future.exception()}")

    def stop(self) -> None:
        unfinished = [future for future in self._futures if not future.done()]
        if unfinished:
            self._client.cancel(unfinished)
        self._client.close()
