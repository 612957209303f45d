"""The app on a real X display (Qt's xcb platform under Xvfb), not the offscreen platform.

Regression: on a fresh Debian machine ``make run`` aborted with ``Could not load
the Qt platform plugin "xcb"`` because the Makefile installed only the libraries
of the offscreen platform. ``make test`` installs the xcb libraries and Xvfb (as
root), and these tests start the app on a virtual X server and look at its window
there. When xcb cannot load, the app must say which packages are missing and run
headless instead of aborting.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from impactgui.display_check import XCB_LIBRARIES, missing_xcb_packages, uses_xcb
from tests.gui.conftest import distinct_colours

ROOT = Path(__file__).resolve().parents[2]

# Runs in a child process on the X server: the main window on the default scene,
# shown, then the *screen* (not the widget) grabbed, so the picture is what X shows.
_SHOW_WINDOW = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from impactgui.mainwindow import MainWindow
from impactgui.presets import DEFAULT_SCENE

app = QApplication(["impactgui"])
window = MainWindow()
window.open_file(DEFAULT_SCENE)
window.resize(1000, 700)
window.move(0, 0)
window.show()

def look():
    handle = window.windowHandle()
    print("platform", app.platformName())
    print("visible", window.isVisible(), "exposed", handle is not None and handle.isExposed())
    shot = app.primaryScreen().grabWindow(0, 0, 0, 1000, 700)
    print("saved", shot.save(sys.argv[1], "PNG"))
    window.shutdown()
    app.quit()

QTimer.singleShot(1500, look)
app.exec()
"""


def _xvfb_run() -> str:
    found = shutil.which("xvfb-run")
    if found is None:
        if os.geteuid() == 0:
            pytest.fail("xvfb-run is missing although make test installs it as root (Makefile)")
        pytest.skip("xvfb-run is not installed (make test installs it when run as root)")
    return found


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(QT_QPA_PLATFORM="xcb", PYTHONPATH=str(ROOT), PYQTGRAPH_QT_LIB="PySide6")
    return env


def _on_xvfb(arguments: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run this Python with ``arguments`` on a fresh Xvfb display, with Qt's xcb platform."""
    return subprocess.run(
        [_xvfb_run(), "-a", "-s", "-screen 0 1280x800x24", sys.executable, *arguments],
        env=_env(),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_xcb_platform_finds_every_library_it_links() -> None:
    missing = missing_xcb_packages()
    if missing and os.geteuid() != 0:
        pytest.skip(f"not root, so make test could not install {missing}")
    assert missing == [], "make test installs these Debian packages as root"


def test_the_window_appears_on_a_real_x_display(tmp_path: Path) -> None:
    png = tmp_path / "screen.png"
    result = _on_xvfb(["-c", _SHOW_WINDOW, str(png)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Could not load the Qt platform plugin" not in result.stderr
    assert "platform xcb" in result.stdout
    assert "visible True exposed True" in result.stdout
    assert "saved True" in result.stdout
    # Without a window manager the rest of the X screen is black: colours come from the window.
    assert distinct_colours(png) > 20


def test_make_run_command_opens_the_app_on_a_real_x_display(tmp_path: Path) -> None:
    """``impactgui`` as ``make run`` starts it, on xcb, screenshot of the window, exit 0."""
    png = tmp_path / "window.png"
    result = _on_xvfb(["-m", "impactgui", "--screenshot", str(png), "--after", "1.5"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "headless" not in result.stderr
    assert distinct_colours(png) > 20


def test_missing_xcb_libraries_are_named_by_their_debian_packages() -> None:
    absent = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}
    missing = missing_xcb_packages(XCB_LIBRARIES, loads=lambda soname: soname not in absent)
    assert missing == ["libxcb-icccm4", "libxcb-keysyms1"]


@pytest.mark.parametrize(
    ("environ", "platform", "expected"),
    [
        ({"DISPLAY": ":0"}, "linux", True),
        ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, "linux", False),
        ({"QT_QPA_PLATFORM": "xcb"}, "linux", True),
        ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, "linux", False),
        ({}, "linux", False),
        ({"DISPLAY": ":0"}, "darwin", False),
    ],
)
def test_xcb_is_checked_only_where_qt_would_load_it(
    environ: dict[str, str], platform: str, expected: bool
) -> None:
    assert uses_xcb(environ, platform) is expected


def test_an_x_display_without_the_xcb_libraries_runs_headless_instead_of_aborting(
    tmp_path: Path,
) -> None:
    """A missing xcb library (the check is replaced in the child) → a notice, headless, exit 0."""
    script = (
        "import sys, impactgui.display_check as d, impactgui.app as a\n"
        "a.missing_xcb_packages = lambda: ['libxcb-icccm4']\n"
        "sys.exit(a.main(['--out', sys.argv[1]]))\n"
    )
    env = _env()
    env.pop("QT_QPA_PLATFORM")
    env["DISPLAY"] = ":99"
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "out")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "libxcb-icccm4" in result.stderr
    assert "headless" in result.stderr
    assert (tmp_path / "out" / "trajectory.csv").is_file()
