"""Reading scene files without blocking the window.

``read_scene_in_background(path, parent)`` reads, parses and validates a
scene file in a worker thread while the GUI thread keeps painting, with a
progress dialog when it takes longer than ``PROGRESS_DELAY_MS``. Only
regular files of at most ``solver.scene.MAX_FILE_BYTES`` are read (a FIFO or
a device is refused at once, never waited on: see
``solver.scene.read_scene_text``), and every failure — a missing file, an
invalid scene, even an unexpected exception or a lack of memory — comes back
as a :class:`solver.scene.SceneError` whose lines the window shows.

The worker runs plain Python (no Qt object is touched off the GUI thread) and
the process's collector is held meanwhile, so cyclic garbage collection stays
in the GUI thread (docs/ARCHITECTURE.md, "Threads, the GIL and the garbage
collector").
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QProgressDialog, QWidget

from impactgui.collector import gui_thread_collector
from solver.scene import Scene, SceneError, load_scene

PROGRESS_DELAY_MS = 300
"""A read that takes longer than this shows a progress dialog, ms."""
POLL_INTERVAL_MS = 20
"""How often the GUI thread looks whether the worker is done, ms."""


def _load(path: Path) -> Scene:
    """``load_scene`` with every failure turned into a ``SceneError`` (worker thread)."""
    try:
        return load_scene(path)
    except SceneError:
        raise
    except Exception as error:  # MemoryError and RecursionError included
        raise SceneError([f"{path}: cannot be read ({type(error).__name__}: {error})"]) from None


def read_scene_in_background(path: str | Path, parent: QWidget | None = None) -> Scene:
    """Read and validate the scene file at ``path`` off the GUI thread; returns the ``Scene``.

    The GUI thread runs a local event loop until the worker is done (the
    window repaints; a window-modal progress dialog, shown after
    ``PROGRESS_DELAY_MS``, keeps the user from starting another action).

    Raises
    ------
    SceneError
        For every failure, with the reason.
    """
    path = Path(path)
    collector = gui_thread_collector()
    collector.hold()
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scene-reader")
    try:
        future: Future[Scene] = executor.submit(_load, path)
        if not _finished_soon(future):
            _wait_with_progress(future, path, parent)
        return future.result()
    finally:
        executor.shutdown(wait=True)
        collector.release()


def _finished_soon(future: Future[Scene]) -> bool:
    """Whether the worker ends within ``PROGRESS_DELAY_MS`` (the usual small scene)."""
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(POLL_INTERVAL_MS)
    deadline = time.monotonic() + PROGRESS_DELAY_MS / 1000

    def poll() -> None:
        if future.done() or time.monotonic() >= deadline:
            loop.quit()

    timer.timeout.connect(poll)
    timer.start()
    if not future.done():
        loop.exec()
    timer.stop()
    return future.done()


def _wait_with_progress(future: Future[Scene], path: Path, parent: QWidget | None) -> None:
    """Show a busy progress dialog until ``future`` is done."""
    dialog = QProgressDialog(f"Reading {path.name}…", "", 0, 0, parent)
    dialog.setWindowTitle("Opening scene")
    dialog.setCancelButton(None)
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(0)
    dialog.show()
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(POLL_INTERVAL_MS)
    timer.timeout.connect(lambda: future.done() and loop.quit())
    timer.start()
    if not future.done():
        loop.exec()
    timer.stop()
    dialog.close()
    dialog.deleteLater()
