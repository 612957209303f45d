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
and a timer in the GUI thread collects the young generations instead, as
CPython would. A full collection would walk every frame of the growing
trajectory (70 ms at 1e5 frames of a wheel, seconds for a 200-bead chain),
so there is none during a run: when the first worker starts, everything
alive is frozen (``gc.freeze``, which moves the generations aside without
walking them: no stop of the window at Run, where a full collection of a
2000-bead scene took 0.2–1.7 s), and so are the survivors of each
generation-1 collection. Frozen objects are still freed by reference
counting (a dropped trajectory goes at once); only reference cycles among
them wait — until the last worker has ended, when everything is unfrozen
and the interpreter's own collector is back on, collecting the oldest
generation when its own rule says so (as in any Python program).
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer, Slot

from impactgui.holds import Holds

CHECK_INTERVAL_MS = 20
"""How often the GUI thread looks at the collector's counts during a run, ms.

A young collection walks every object allocated since the last one and still
alive: checked every 100 ms, the paper-004 wheel's worker had allocated 40 000
to 130 000 of them, a walk of 5-14 ms of the GUI thread in one gap between two
frames drawn (bench/gui.py); every 20 ms, a fifth of that."""
FREEZE_ABOVE = 5_000
"""A young generation larger than this is frozen, not walked: a burst of allocations
(one solver step of a rolling wheel makes up to 100 000 frames at once, alive until the
window has taken them) would cost the GUI thread 10 ms and more to walk, and it is not
garbage. Reference cycles among it wait for the end of the run, as those of the
frozen survivors do. Streaming runs stay under it between two checks (the paper-004
wheel and the 200-bead chain: 700-2700 objects), so their young garbage is still freed."""


class GuiThreadCollector(QObject):
    """Owns ``gc`` while worker threads run; create and use it in the GUI thread only.

    ``hold()`` when a worker thread starts and ``release()`` once it has
    been joined or has finished; holds nest. The first hold freezes
    everything alive and turns automatic collection off (remembering
    whether it was on); the last release unfreezes and restores it.
    """

    def __init__(self) -> None:
        super().__init__()
        self._was_enabled = True
        self._holds = Holds(self._take, self._give_back)
        self._timer = QTimer(self)
        self._timer.setInterval(CHECK_INTERVAL_MS)
        self._timer.timeout.connect(self.collect_due)

    @property
    def holders(self) -> int:
        """Number of ``hold()`` calls not yet released."""
        return self._holds.count

    def hold(self) -> None:
        """A worker thread is about to run: collect only in this (GUI) thread from now on.

        The first hold walks nothing: what is alive now is frozen, not collected.
        """
        self._holds.hold()

    def release(self) -> None:
        """A worker thread has ended; after the last one ``gc`` is as it was before, unfrozen."""
        self._holds.release()

    def _take(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()
        gc.freeze()
        self._timer.start()

    def _give_back(self) -> None:
        self._timer.stop()
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()

    @Slot()
    def collect_due(self) -> None:
        """Collect the young generations whose thresholds are crossed (GUI thread).

        After a generation-1 collection its survivors are frozen, so the
        oldest generation never grows and is never walked during a run; a
        young generation over ``FREEZE_ABOVE`` objects is frozen unwalked.
        """
        threshold0, threshold1, _ = gc.get_threshold()
        count0, count1, _ = gc.get_count()
        if threshold0 <= 0 or count0 <= threshold0:
            return
        if count0 > FREEZE_ABOVE:
            gc.freeze()
        elif count1 > threshold1:
            gc.collect(1)
            gc.freeze()
        else:
            gc.collect(0)


_collector: GuiThreadCollector | None = None


def gui_thread_collector() -> GuiThreadCollector:
    """The process's one collector (created on first use, which must be in the GUI thread)."""
    global _collector
    if _collector is None:
        _collector = GuiThreadCollector()
    return _collector
