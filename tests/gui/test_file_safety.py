"""The window never blocks on a file and never crashes on one; unsaved work stays private.

Regression tests for the reliability issue: a FIFO blocked the GUI thread
forever, large files froze it, a damaged autosave made every start-up crash,
exceptions other than ``OSError`` escaped save and export, and the recovery
folder was readable by every user.
"""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QMessageBox

from impactgui import file_io
from impactgui.commands import SetProperty
from impactgui.recovery import RECOVERY_DIR_ENV, RecoveryStore
from solver.scene import MAX_FILE_BYTES, SceneError
from tests.gui.conftest import run_to_end, scene_path


def _close_boxes(win) -> list[str]:
    """Close the warning boxes the window opened; their texts."""
    texts = []
    for box in win.findChildren(QMessageBox):
        texts.append(f"{box.text()} {box.informativeText()}")
        box.close()
    return texts


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_opening_a_fifo_is_refused_at_once(window, tmp_path: Path) -> None:
    fifo = tmp_path / "scene.json"
    os.mkfifo(fifo)
    assert not window.open_file(fifo)
    assert any("not a regular file" in text for text in _close_boxes(window))


def test_a_file_past_the_size_limit_is_refused_unread(window, tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as stream:
        stream.truncate(MAX_FILE_BYTES + 1)
    assert not window.open_file(big)
    assert any("more than the limit" in text for text in _close_boxes(window))


def test_the_file_is_read_and_parsed_off_the_gui_thread(window, monkeypatch) -> None:
    readers: list[threading.Thread] = []
    real = file_io.load_scene

    def spy(path):
        readers.append(threading.current_thread())
        return real(path)

    monkeypatch.setattr(file_io, "load_scene", spy)
    assert window.open_file(scene_path("bouncing_ball"))
    assert readers and readers[0] is not threading.main_thread()
    assert window.doc.data["title"].startswith("Bouncing ball")


def test_a_slow_read_shows_progress_and_the_window_keeps_painting(window, monkeypatch) -> None:
    real = file_io.load_scene
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(10)

    def slow(path):
        time.sleep(1.5)
        return real(path)

    monkeypatch.setattr(file_io, "load_scene", slow)
    seen_dialog = []
    timer.timeout.connect(
        lambda: seen_dialog.append(bool(window.findChildren(file_io.QProgressDialog)))
    )
    assert window.open_file(scene_path("bouncing_ball"))
    timer.stop()
    assert any(seen_dialog)
    assert len(ticks) > 10  # the GUI thread's event loop ran while the file was read


@pytest.mark.parametrize("error", [RecursionError("deep"), MemoryError(), KeyError("x")])
def test_any_exception_while_reading_is_a_message(window, monkeypatch, error) -> None:
    def broken(path):
        raise error

    monkeypatch.setattr(file_io, "load_scene", broken)
    assert not window.open_file(scene_path("bouncing_ball"))
    assert any(type(error).__name__ in text for text in _close_boxes(window))


def test_read_scene_in_background_turns_failures_into_scene_errors(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SceneError, match="nested more than"):
        file_io.read_scene_in_background(deep)


def test_an_unexpected_exception_while_saving_is_a_message(window, tmp_path, monkeypatch) -> None:
    assert window.open_file(scene_path("bouncing_ball"))

    def broken(path=None):
        raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")

    monkeypatch.setattr(window.doc, "save", broken)
    assert not window.save_as(tmp_path / "x.json")
    assert any("surrogates not allowed" in text for text in _close_boxes(window))


def test_an_unexpected_exception_while_exporting_is_a_message(
    qtbot, window, tmp_path, monkeypatch
) -> None:
    from impactgui import mainwindow

    assert window.open_file(scene_path("two_masses_plastic"))
    run_to_end(qtbot, window)

    def broken(trajectory, directory):
        raise ValueError("trajectory has no system")

    monkeypatch.setattr(mainwindow, "write_csv", broken)
    assert window.export_csv(tmp_path) is None
    assert any("trajectory has no system" in text for text in _close_boxes(window))


# ------------------------------------------------------------------- recovery


@pytest.fixture
def recovery_window(qtbot, tmp_path: Path, monkeypatch):
    from impactgui.mainwindow import MainWindow

    directory = tmp_path / "recovery"
    monkeypatch.setenv(RECOVERY_DIR_ENV, str(directory))
    made = []

    def make():
        win = MainWindow(
            settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
            recovery=RecoveryStore(),
        )
        win.confirm_discard = lambda: QMessageBox.StandardButton.Discard
        qtbot.addWidget(win, before_close_func=MainWindow.shutdown)
        made.append(win)
        return win

    yield make, directory


def test_recovery_folder_and_files_are_private(recovery_window) -> None:
    make, directory = recovery_window
    win = make()
    assert win.open_file(scene_path("bouncing_ball"))
    win.doc.push(SetProperty(win.doc, ("title",), "private \ud800 work"))
    assert win.autosave()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    files = [p for p in directory.iterdir() if p.suffix == ".json"]
    assert len(files) == 2
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)
    (scene,) = directory.glob("*.scene.json")
    assert json.loads(scene.read_text(encoding="ascii"))["title"] == "private \ud800 work"
    win.shutdown()


def test_an_old_readable_recovery_folder_is_made_private(tmp_path: Path) -> None:
    directory = tmp_path / "recovery"
    directory.mkdir(mode=0o755)
    leftover = directory / "abc.scene.json"
    leftover.write_text(json.dumps({"format": "impactgui-scene", "version": 2}))
    leftover.chmod(0o644)
    assert len(RecoveryStore(directory).pending()) == 1
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(leftover.stat().st_mode) == 0o600


def test_a_deeply_nested_autosave_is_set_aside_and_the_app_starts(recovery_window) -> None:
    make, directory = recovery_window
    directory.mkdir(mode=0o700)
    damaged = directory / "0123.scene.json"
    damaged.write_text("[" * 100_000 + "]" * 100_000)  # RecursionError at every start-up
    win = make()
    asked = []
    win.confirm_restore = asked.append
    assert not win.offer_recovery()
    assert asked == []
    assert not damaged.exists()
    (kept,) = directory.glob("0123.damaged-*.json")
    assert kept.read_text().startswith("[[[")
    line = win.statusBar().currentMessage()  # one status-bar line, no box
    assert line.startswith("damaged autosave set aside: 0123.scene.json") and "nested" in line
    assert "\n" not in line and _close_boxes(win) == []
    assert RecoveryStore(directory).pending() == []  # never offered again
