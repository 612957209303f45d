"""Canary for the PySide6 6.12.0 refcount bug (docs/INSTALL.md)."""

import sys

import pytest
from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    fired = Signal()


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="True is immortal on >= 3.12")
def test_signal_emit_keeps_bool_refcount() -> None:
    emitter = _Emitter()
    before = sys.getrefcount(True)
    for _ in range(100):
        emitter.fired.emit()
    assert sys.getrefcount(True) >= before - 10, "PySide6 emit() leaks refs to True: pin PySide6"
