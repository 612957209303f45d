"""Python's cyclic garbage collection, kept in the GUI thread while simulations run.

CPython runs its cyclic collector in whichever thread happens to allocate
when a generation's threshold is crossed. The solver allocates heavily, so
without care that thread is the simulation worker, and the garbage it frees
may hold Qt objects (pyqtgraph items, menus of a closed window, ...). Freeing
a ``QObject`` there deadlocks: the worker takes Qt's connection lock in
``~QObject`` and then waits for the GIL, while the GUI thread, holding the
GIL, waits for the same lock (seen as a hung test run, both threads asleep).
pyqtgraph's ``GarbageCollector`` answers the same problem the same way.

While at least one simulation worker is alive, automatic collection is off
and a timer in the GUI thread collects instead, generation by generation as
CPython would. Outside runs the interpreter's own collector is back on.
"""

from __future__ import annotations

import gc
import time

from PySide6.QtCore import QObject, QTimer, Slot

CHECK_INTERVAL_MS = 100
"""How often the GUI thread looks at the collector's counts during a run, ms."""

FULL_COLLECTION_MIN_INTERVAL_S = 10.0
"""A full (generation 2) collection during a run happens at most this often, s.

A full pass walks every tracked object of a long run's trajectory (up to a
few hundred ms for millions of frames), so it is rationed to keep the
animation smooth; the pass at the end of the run is never skipped.
"""


class GuiThreadCollector(QObject):
    """Owns ``gc`` while worker threads run; create and use it in the GUI thread only.

    ``hold()`` when a worker thread starts and ``release()`` once it has
    been joined or has finished; holds nest. The first hold turns automatic
    collection off (remembering whether it was on), the last release collects
    everything once and restores it.
    """

    def __init__(self) -> None:
        super().__init__()
        self._holders = 0
        self._was_enabled = True
        self._last_full = 0.0
        self._timer = QTimer(self)
        self._timer.setInterval(CHECK_INTERVAL_MS)
        self._timer.timeout.connect(self.collect_due)

    @property
    def holders(self) -> int:
        """Number of ``hold()`` calls not yet released."""
        return self._holders

    def hold(self) -> None:
        """A worker thread is about to run: collect only in this (GUI) thread from now on."""
        if self._holders == 0:
            self._was_enabled = gc.isenabled()
            gc.disable()
            self._last_full = time.monotonic()
            self._timer.start()
        self._holders += 1

    def release(self) -> None:
        """A worker thread has ended; the last release collects fully and restores ``gc``."""
        if self._holders == 0:
            return
        self._holders -= 1
        if self._holders == 0:
            self._timer.stop()
            gc.collect()
            if self._was_enabled:
                gc.enable()

    @Slot()
    def collect_due(self) -> None:
        """Collect the generations whose thresholds are crossed, youngest first (GUI thread)."""
        threshold0, threshold1, threshold2 = gc.get_threshold()
        count0, count1, count2 = gc.get_count()
        if threshold0 <= 0 or count0 <= threshold0:
            return
        generation = 0
        if count1 > threshold1:
            generation = 1
            now = time.monotonic()
            if count2 > threshold2 and now - self._last_full >= FULL_COLLECTION_MIN_INTERVAL_S:
                generation = 2
                self._last_full = now
        gc.collect(generation)


_collector: GuiThreadCollector | None = None


def gui_thread_collector() -> GuiThreadCollector:
    """The process's one collector (created on first use, which must be in the GUI thread)."""
    global _collector
    if _collector is None:
        _collector = GuiThreadCollector()
    return _collector
