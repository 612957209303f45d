"""The window's menus, actions and toolbars, declared in one table.

Every menu item of the main window is one ``ActionSpec`` line of ``ACTIONS``:
the window attribute that holds the ``QAction`` (``run_action``), the menu it
sits in, its text, what it calls — a dotted path from the window, such as
``"start_run"`` or ``"canvas.fit_view"`` — its shortcut and status tip.
Adding a feature to a menu is one line here (plus the method it calls);
``install_actions`` builds the actions, the menus and the toolbars from the
table when the window is made. Lines of one menu appear in table order; a
new ``section`` starts after a separator.

A few items are not plain actions and are added around the table's:
File ▸ Open Recent (filled by the window from its settings), Edit ▸ Undo and
Redo (made by the document's undo stack), the Presets menu, the drawing tools
(made by the canvas, in the Tools toolbar), Edit ▸ Snap to grid (the canvas's
own checkable action) and View's show/hide toggles of the toolbars and docks.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QStyle, QToolBar

from impactgui.presets import PresetsMenu

if TYPE_CHECKING:
    from impactgui.mainwindow import MainWindow

Shortcut = QKeySequence.StandardKey | str | None
Keys = QKeySequence.StandardKey
Icons = QStyle.StandardPixmap

SHORTCUT_GAP_EM = 3.0
"""Room between a menu item's text and its shortcut, in widths of "M" (Fusion leaves about
one: "Keyboard shortcuts  F1" read as one word)."""
MENU_MARGINS_PX = 48
"""A menu's frame, icon column and padding around the text and the shortcut, px."""

MENUS = ("&File", "&Edit", "&Run", "&View", "&Help")
"""Menu titles in menu-bar order (the Presets menu goes between Run and View)."""


@dataclass(frozen=True)
class ActionSpec:
    """One menu item of the main window.

    Parameters
    ----------
    name : str
        Attribute of the window that holds the ``QAction``.
    menu : str
        Title of the menu it sits in, one of ``MENUS``.
    text : str
        Menu text (``&`` marks the mnemonic).
    slot : str
        What it calls: an attribute path from the window (``"canvas.fit_view"``).
        A checkable action calls it with its new state (bool); others with
        no argument.
    shortcut : QKeySequence.StandardKey or str, optional
        Its key (a portable standard key or a portable text such as ``"F5"``).
    tip : str
        Status-bar and tool tip.
    section : str
        Items of a menu are grouped by section, separated by a line.
    icon : QStyle.StandardPixmap, optional
        A standard icon (shown in toolbars).
    toolbar : str, optional
        Object name of the toolbar that shows it too (``"run"``).
    checkable : bool
        A toggle (its slot receives the new state).
    """

    name: str
    menu: str
    text: str
    slot: str
    shortcut: Shortcut = None
    tip: str = ""
    section: str = ""
    icon: QStyle.StandardPixmap | None = None
    toolbar: str | None = None
    checkable: bool = False


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("new_action", "&File", "&New", "new_scene", Keys.New, "Start an empty scene"),
    ActionSpec("open_action", "&File", "&Open…", "open_file", Keys.Open, "Open a scene file"),
    ActionSpec("save_action", "&File", "&Save", "save", Keys.Save, "Save the scene", "save"),
    ActionSpec(
        "save_as_action", "&File", "Save &As…", "save_as", Keys.SaveAs,
        "Save the scene under a new name", "save",
    ),
    ActionSpec(
        "export_csv_action", "&File", "Export &CSV…", "export_csv", None,
        "Write the run as CSV files to a directory", "export",
    ),
    ActionSpec(
        "export_canvas_action", "&File", "Export canvas &PNG…", "export_canvas_png", None,
        "Save the canvas as an image", "export",
    ),
    ActionSpec(
        "export_plots_action", "&File", "Export p&lots PNG…", "export_plots_png", None,
        "Save the plots as an image", "export",
    ),
    ActionSpec(
        "export_video_action", "&File", "Export &video…", "export_video", None,
        "Record the run as an MP4 video or a GIF animation", "export",
    ),
    # Keys.Quit is empty on some Linux desktops; Ctrl+Q is Cmd+Q on macOS
    ActionSpec("quit_action", "&File", "&Quit", "close", "Ctrl+Q", "Close impactgui", "quit"),
    ActionSpec(
        "run_action", "&Run", "Run", "start_run", "F5", "Run (or resume) the scene",
        icon=Icons.SP_MediaPlay, toolbar="run",
    ),
    ActionSpec(
        "pause_action", "&Run", "Pause", "pause_run", "F6", "Pause the solver and the playback",
        icon=Icons.SP_MediaPause, toolbar="run",
    ),
    ActionSpec(
        "step_action", "&Run", "Step", "step_run", "F7", "Show the next frame",
        icon=Icons.SP_MediaSkipForward, toolbar="run",
    ),
    ActionSpec(
        "reset_action", "&Run", "Reset", "reset_run", "F8", "Stop the run and go back to editing",
        icon=Icons.SP_MediaStop, toolbar="run",
    ),
    ActionSpec(
        "compare_action", "&Run", "&Compare impact laws or a field…", "open_compare", None,
        "Run copies of the scene under several impact laws, or values of one of its numbers, "
        "side by side", "compare",
    ),
    ActionSpec(
        "sweep_action", "&Run", "S&weep…", "sweeps.open", None,
        "Run the scene over a range of one or two of its fields: bifurcation diagrams", "compare",
    ),
    ActionSpec(
        "presentation_action", "&View", "&Presentation", "presentation.set_enabled", "F11",
        "Full screen, large fonts, wide lines, legends beside the plots: for a lecture hall",
        "present", checkable=True,
    ),
    ActionSpec(
        "presentation_scale_action", "&View", "Presentation &scale…", "presentation.ask_scale",
        None, "How much larger fonts and lines are in presentation mode (1.5–2.5×)", "present",
    ),
    ActionSpec(
        "honesty_action", "&View", "Show only up to the &playback time", "set_honest", None,
        "Plots and event log hide what the solver computed beyond the time shown",
        "present", checkable=True,
    ),
    ActionSpec(
        "fit_action", "&View", "&Fit scene", "canvas.fit_view", "F",
        "Show the whole scene (during a run: where the bodies are); the view follows the run "
        "again after a pan or zoom", "camera",
    ),
    ActionSpec(
        "follow_action", "&View", "F&ollow selected body", "canvas.set_following", "Shift+F",
        "Keep the selected body at the centre of the view", "camera", checkable=True,
    ),
    ActionSpec(
        "shortcuts_action", "&Help", "&Keyboard shortcuts", "help.show_shortcuts",
        Keys.HelpContents, "Every key of every menu and tool",
    ),
    ActionSpec(
        "getting_started_action", "&Help", "&Getting started", "help.show_getting_started",
        None, "A scene, a run, the plots and exports in six steps",
    ),
    ActionSpec(
        "papers_action", "&Help", "&Papers…", "help.show_papers", None,
        "Every item of the five papers, printed against computed, with its figure and scene",
    ),
    ActionSpec("about_action", "&Help", "&About impactgui", "help.show_about", section="about"),
)  # fmt: skip


def make_action(window: MainWindow, spec: ActionSpec) -> QAction:
    """The ``QAction`` of ``spec``, parented to ``window`` and connected to its slot."""
    action = QAction(spec.text, window)
    if spec.shortcut is not None:
        action.setShortcut(QKeySequence(spec.shortcut))
    if spec.tip:
        action.setStatusTip(spec.tip)
        action.setToolTip(spec.tip)
    if spec.icon is not None:
        action.setIcon(window.style().standardIcon(spec.icon))
    slot: Callable[..., object] = operator.attrgetter(spec.slot)(window)
    if spec.checkable:
        action.setCheckable(True)
        action.toggled.connect(slot)
    else:
        action.triggered.connect(lambda _checked=False: slot())
    return action


def keep_shortcuts_apart(menu: QMenu) -> None:
    """Make ``menu`` wide enough for ``SHORTCUT_GAP_EM`` between its texts and shortcuts.

    Called each time the menu is about to show (the font grows in presentation mode).
    """
    metrics = menu.fontMetrics()
    actions = menu.actions()
    texts = [metrics.horizontalAdvance(action.text().replace("&", "")) for action in actions]
    keys = [
        metrics.horizontalAdvance(
            action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        )
        for action in actions
    ]
    if not any(keys):
        return
    gap = SHORTCUT_GAP_EM * metrics.horizontalAdvance("M")
    menu.setMinimumWidth(round(max(texts) + max(keys) + gap + MENU_MARGINS_PX))


def install_actions(window: MainWindow) -> None:
    """Make the window's actions, menus and toolbars from ``ACTIONS``.

    Sets one attribute per spec (``window.run_action``…) and
    ``undo_action``, ``redo_action``, ``recent_menu``, ``presets_menu``,
    ``view_menu``, ``help_menu`` and ``menus`` (title → ``QMenu``).
    """
    actions = {spec.name: make_action(window, spec) for spec in ACTIONS}
    for name, action in actions.items():
        setattr(window, name, action)
    window.undo_action = window.doc.undo_stack.createUndoAction(window, "&Undo")
    window.undo_action.setShortcut(QKeySequence(Keys.Undo))
    window.redo_action = window.doc.undo_stack.createRedoAction(window, "&Redo")
    window.redo_action.setShortcut(QKeySequence(Keys.Redo))

    bar = window.menuBar()
    menus: dict[str, QMenu] = {}
    for title in MENUS:
        if title == "&View":
            window.presets_menu = PresetsMenu(window)
            bar.addMenu(window.presets_menu)
        menus[title] = bar.addMenu(title)
    window.menus = menus
    for menu in menus.values():
        menu.aboutToShow.connect(lambda menu=menu: keep_shortcuts_apart(menu))
    window.view_menu = menus["&View"]
    window.help_menu = menus["&Help"]
    menus["&Edit"].addActions([window.undo_action, window.redo_action])
    menus["&Edit"].addSeparator()
    menus["&Edit"].addAction(window.canvas.snap_action)

    sections: dict[str, str] = {}
    for spec in ACTIONS:
        menu = menus[spec.menu]
        if spec.menu in sections and sections[spec.menu] != spec.section:
            menu.addSeparator()
        sections[spec.menu] = spec.section
        menu.addAction(actions[spec.name])
        if spec.name == "open_action":
            window.recent_menu = menu.addMenu("Open &Recent")

    tools = QToolBar("Tools", window)
    tools.setObjectName("tools")
    tools.addActions(window.canvas.tool_actions())
    window.addToolBar(tools)
    window.tools_bar = tools
    run_bar = QToolBar("Run", window)
    run_bar.setObjectName("run")
    run_bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    run_bar.addActions([actions[spec.name] for spec in ACTIONS if spec.toolbar == "run"])
    window.addToolBar(run_bar)
    window.view_menu.addSeparator()
    for item in (
        tools,
        run_bar,
        window.properties_dock,
        window.plots_dock,
        window.motion_dock,
        window.reference_dock,
        window.event_dock,
    ):
        window.view_menu.addAction(item.toggleViewAction())
