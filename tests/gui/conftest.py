"""Fixtures of the GUI tests: a main window kept alive for the whole test, then shut down.

docs/INSTALL.md, "Qt in tests": ``qtbot.addWidget`` holds only a weak reference, so
the window lives in a ``yield`` fixture and ``shutdown()`` joins the worker
thread before the widget goes away.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QMessageBox

from impactgui.canvas import SceneCanvas
from impactgui.document import SceneDocument
from impactgui.presets import RESOURCES_DIR, SCENES_DIR

if TYPE_CHECKING:
    from impactgui.mainwindow import MainWindow


def resource_hashes() -> dict[str, str]:
    """SHA-256 of every file under ``resources/``, by path relative to it."""
    return {
        str(path.relative_to(RESOURCES_DIR)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(RESOURCES_DIR.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="session", autouse=True)
def resources_stay_untouched() -> Iterator[None]:
    """The application never writes under ``resources/``: the tree is the same after the suite."""
    before = resource_hashes()
    yield
    after = resource_hashes()
    names = before.keys() | after.keys()
    changed = sorted(name for name in names if before.get(name) != after.get(name))
    assert not changed, f"the GUI tests changed files under resources/: {changed}"


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    """Application settings in a temporary file (recent files must not leak between tests)."""
    return QSettings(str(tmp_path / "impactgui.ini"), QSettings.Format.IniFormat)


def _unexpected_prompt() -> QMessageBox.StandardButton:
    pytest.fail("the unsaved-changes prompt appeared unexpectedly")


@pytest.fixture
def window(qtbot, settings: QSettings) -> Iterator[MainWindow]:
    """The main window, shown, on an empty scene; unexpected prompts fail the test."""
    from impactgui.mainwindow import MainWindow

    win = MainWindow(settings=settings)
    win.confirm_discard = _unexpected_prompt
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.shutdown()


def scene_path(name: str) -> Path:
    """Path of the bundled scene ``name`` (without ``.json``)."""
    return SCENES_DIR / f"{name}.json"


def run_to_end(qtbot, win: MainWindow, timeout_ms: int = 30000) -> None:
    """Start the window's run and wait until it has finished (or failed) and is all plotted.

    At the end of a run the energy curves take every frame at once, the contact
    curves and the stems with the next parts of the plots' redraw (``PlotPanel.finish``).
    """
    assert win.start_run(), "the run did not start"
    qtbot.waitUntil(lambda: win.run_state in ("finished", "failed"), timeout=timeout_ms)
    qtbot.waitUntil(lambda: win.plots.is_drawn, timeout=timeout_ms)


def run_solver_cli(scene_file: Path, out: Path) -> None:
    """``python -m solver run scene_file --out out`` in a subprocess; it must succeed."""
    cli = subprocess.run(
        [sys.executable, "-m", "solver", "run", str(scene_file), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert cli.returncode == 0, cli.stderr


def distinct_colours(png: Path, stride: int = 7) -> int:
    """Number of distinct colours on a grid of pixels of the image ``png`` (0 if unreadable)."""
    image = QImage(str(png))
    if image.isNull():
        return 0
    return len(
        {
            image.pixel(x, y)
            for x in range(0, image.width(), stride)
            for y in range(0, image.height(), stride)
        }
    )


@pytest.fixture
def doc(qtbot) -> Iterator[SceneDocument]:
    """An empty side-view scene."""
    yield SceneDocument()


@pytest.fixture
def canvas(qtbot, doc: SceneDocument) -> Iterator[SceneCanvas]:
    """A shown canvas on ``doc``, 800×600, viewing x ∈ [−0.5, 2.5], y ∈ [−0.5, 1.5]."""
    widget = SceneCanvas(doc)
    qtbot.addWidget(widget)
    widget.resize(800, 600)
    widget.show()
    qtbot.waitExposed(widget)
    widget.view.setRange(xRange=(-0.5, 2.5), yRange=(-0.5, 1.5), padding=0)
    yield widget
    widget.clear_animation()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """GUI tests race a solver thread on a shared 2-core machine: bound them, never retry.

    A GUI test that hangs fails after 90 s with the stacks of all threads. None
    is retried: a retry would hide a hang a user would meet. Tests that watch a
    run play wait for what the app guarantees (frames computed, the playback
    reaching a time), never for a number of display ticks, which a loaded
    machine gives only a few of per second.
    """
    for item in items:
        if "tests/gui/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.timeout(90))
