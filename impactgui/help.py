"""The Help menu: keyboard shortcuts, a getting-started page, About.

The shortcuts page is read off the window's own actions — every menu
(with its submenus) and the drawing tools' toolbar — so it lists what the
keys do today, never a hand-kept copy that drifts.
"""

from __future__ import annotations

import html
from importlib import metadata
from typing import TYPE_CHECKING

import PySide6
from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QMenu, QMessageBox, QTextBrowser, QToolBar, QVBoxLayout

if TYPE_CHECKING:
    from impactgui.mainwindow import MainWindow

GETTING_STARTED = """
<h2>Getting started</h2>
<ol>
<li><b>Open a scene</b>: <i>Presets</i> holds the bundled ones (a wheel against a curb,
Newton's cradles, an axle cart); <i>File ▸ Open</i> reads a scene file.</li>
<li><b>Draw</b> with the tools of the toolbar: <i>Wall</i>, <i>Curb</i>, <i>Arc</i> for
obstacles; <i>Wheel</i>, <i>Bead</i>, <i>Axle cart</i> for bodies; <i>Spring</i> between
them; <i>Force</i> (drag from a body) for a harmonic force A sin(ωt + φ), drawn as an arrow
that pulses with it during a run. <i>Select / move</i> drags things and their handles; the
properties panel edits numbers. Positions snap to a grid (<i>Edit ▸ Snap to grid</i>).</li>
<li><b>Run</b> (F5): the bodies move at real time while the solver computes; the plots
show contact forces λ, friction τ, the energy budget and the velocity jumps; the event
log lists every impact — click a row to see its instant. <i>Pause</i> (F6),
<i>Step</i> (F7) one frame, <i>Reset</i> (F8) back to editing. The time slider below
the canvas replays what was computed. During a run, the <i>Grab</i> tool puts a body
somewhere (or throws it: drag from the head of its velocity arrow) and the <i>Live</i>
dock's sliders change e, μ and g, from the time shown on; each is recorded in the scene
(undo with Ctrl+Z).</li>
<li><b>Motion</b>: the <i>Motion</i> tab beside the plots shows x(t), y(t), v(t) and ω(t)
of the selected body.</li>
<li><b>Lecture</b>: <i>View ▸ Presentation</i> (F11) is full screen with large fonts and
wide lines, and shows nothing the playback has not reached yet.</li>
<li><b>Keep</b>: <i>File ▸ Save</i> the scene, <i>Export CSV</i> the run (the same files as
<code>python -m solver run SCENE.json</code>), <i>Export video</i> as MP4 or GIF,
<i>Export canvas PNG</i> at 2× or 3000 px wide.</li>
</ol>
"""
"""The getting-started page (HTML)."""


def shortcut_rows(window: MainWindow) -> list[tuple[str, str, str]]:
    """``(where, what, key)`` of every action of the window that has a shortcut.

    ``where`` is the menu path (``"View"``, ``"File ▸ Open Recent"``) or
    ``"Tools"`` for the drawing tools; ``what`` the action's text without
    its ``&`` mnemonic marks; ``key`` in the platform's native notation.
    Each action is listed once, where it is first found.
    """
    rows: list[tuple[str, str, str]] = []
    seen: set[int] = set()

    def add(where: str, actions: list[QAction]) -> None:
        for action in actions:
            menu = action.menu()
            if isinstance(menu, QMenu):
                add(f"{where} ▸ {_plain(menu.title())}", menu.actions())
                continue
            key = action.shortcut()
            if action.isSeparator() or key.isEmpty() or id(action) in seen:
                continue
            seen.add(id(action))
            text = key.toString(QKeySequence.SequenceFormat.NativeText)
            rows.append((where, _plain(action.text()), text))

    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        if isinstance(menu, QMenu):
            add(_plain(menu.title()), menu.actions())
    for toolbar in window.findChildren(QToolBar):
        add(_plain(toolbar.windowTitle()), toolbar.actions())
    return rows


def _plain(text: str) -> str:
    """Menu text without its mnemonic marks (``&Open…`` → ``Open…``; ``&&`` → ``&``)."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def shortcuts_html(rows: list[tuple[str, str, str]]) -> str:
    """The shortcuts as an HTML table, grouped by where they are."""
    lines = ["<h2>Keyboard shortcuts</h2>", "<table cellspacing='0' cellpadding='3'>"]
    where_before = None
    for where, what, key in rows:
        if where != where_before:
            lines.append(f"<tr><td colspan='2'><br><b>{html.escape(where)}</b></td></tr>")
            where_before = where
        lines.append(
            f"<tr><td><code>{html.escape(key)}</code></td><td>{html.escape(what)}</td></tr>"
        )
    lines.append("</table>")
    lines.append(
        "<p>On the canvas: Enter finishes what a tool draws, Escape cancels it, "
        "Delete removes the selection.</p>"
    )
    return "\n".join(lines)


def about_text() -> str:
    """The About box: version, what it is, the libraries it stands on."""
    try:
        version = metadata.version("impactgui")
    except metadata.PackageNotFoundError:
        version = "(not installed)"
    return (
        f"<h3>impactgui {html.escape(version)}</h3>"
        "<p>A desktop laboratory for nonsmooth mechanics: impacts, friction and "
        "unilateral contact of wheels, beads and axle carts, solved event by event "
        "or by time-stepping.</p>"
        f"<p>Qt for Python (PySide6) {html.escape(PySide6.__version__)}, pyqtgraph, "
        "NumPy, SciPy, imageio. MIT licence.</p>"
    )


class HelpPages(QObject):
    """The pages of the Help menu of a window.

    Attributes
    ----------
    page : QDialog or None
        The help page shown last (kept so it is not collected while open).
    """

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.page: QDialog | None = None

    def _show(self, title: str, text: str) -> QDialog:
        dialog = QDialog(self.window)
        dialog.setWindowTitle(title)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        browser = QTextBrowser(dialog)
        browser.setHtml(text)
        browser.setOpenExternalLinks(True)
        layout = QVBoxLayout(dialog)
        layout.addWidget(browser)
        dialog.resize(560, 640)
        dialog.show()
        self.page = dialog
        return dialog

    @Slot()
    def show_shortcuts(self) -> QDialog:
        """Help ▸ Keyboard shortcuts."""
        return self._show("Keyboard shortcuts", shortcuts_html(shortcut_rows(self.window)))

    @Slot()
    def show_getting_started(self) -> QDialog:
        """Help ▸ Getting started."""
        return self._show("Getting started", GETTING_STARTED)

    @Slot()
    def show_papers(self) -> QDialog:
        """Help ▸ Papers: the items of the papers (:mod:`impactgui.papers_window`)."""
        from impactgui.papers_window import PapersWindow

        dialog = PapersWindow(self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        self.page = dialog
        return dialog

    @Slot()
    def show_about(self) -> None:
        """Help ▸ About impactgui."""
        QMessageBox.about(self.window, "About impactgui", about_text())
