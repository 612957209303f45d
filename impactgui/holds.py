"""Nesting holds: something turned on by the first holder and off after the last."""

from __future__ import annotations

from collections.abc import Callable


class Holds:
    """Counts unreleased ``hold()`` calls: ``on_first`` at the first, ``on_last`` after the last.

    A ``release()`` with nothing held does nothing.
    """

    def __init__(self, on_first: Callable[[], None], on_last: Callable[[], None]) -> None:
        self.count = 0
        self._on_first = on_first
        self._on_last = on_last

    def hold(self) -> None:
        if self.count == 0:
            self._on_first()
        self.count += 1

    def release(self) -> None:
        if self.count == 0:
            return
        self.count -= 1
        if self.count == 0:
            self._on_last()
