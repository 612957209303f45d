"""Can Qt's X11 (xcb) platform plugin load here?  Which Debian packages would it need?

Qt aborts the whole process (``Could not load the Qt platform plugin "xcb"``)
when a shared library of its xcb plugin is missing, so ``impactgui`` asks
first: it tries to load each library the plugin links (the list below was
read with ``ldd`` from PySide6-Essentials 6.11.3's ``libqxcb.so``,
``libQt6XcbQpa.so.6`` and its GL integrations) and, when one is missing,
names the Debian packages to install and runs headless instead of aborting.
``make run`` and ``make test`` install these packages when run as root.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Mapping

#: Shared library of Qt's xcb platform → the Debian 12 package that ships it.
XCB_LIBRARIES: dict[str, str] = {
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-glx.so.0": "libxcb-glx0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
}


def _loads(soname: str) -> bool:
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_xcb_packages(
    libraries: Mapping[str, str] = XCB_LIBRARIES, loads: Callable[[str], bool] = _loads
) -> list[str]:
    """Debian packages whose libraries Qt's xcb plugin needs but cannot load, sorted.

    Parameters
    ----------
    libraries : mapping of str to str
        Shared-library name → package (default :data:`XCB_LIBRARIES`).
    loads : callable
        ``loads(soname)`` is True when the library can be loaded (default: ``ctypes.CDLL``).
    """
    return sorted({package for soname, package in libraries.items() if not loads(soname)})


def uses_xcb(environ: Mapping[str, str], platform: str) -> bool:
    """True when Qt will pick its xcb plugin: X11 on Linux, no other platform requested.

    Parameters
    ----------
    environ : mapping
        The process environment (``QT_QPA_PLATFORM``, ``DISPLAY``, ``WAYLAND_DISPLAY``).
    platform : str
        ``sys.platform``.
    """
    if not platform.startswith("linux"):
        return False
    requested = environ.get("QT_QPA_PLATFORM", "").split(":")[0].split(";")[0]
    if requested:
        return requested == "xcb"
    return bool(environ.get("DISPLAY")) and not environ.get("WAYLAND_DISPLAY")


def install_hint(packages: list[str]) -> str:
    """One line telling how to install ``packages`` on Debian."""
    return "sudo apt-get install " + " ".join(packages)
