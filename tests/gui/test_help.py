"""Help menu: the shortcuts page is read off the actions, getting started, About."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QTextBrowser

from impactgui.help import about_text, shortcut_rows, shortcuts_html


def _keys(window) -> dict[str, tuple[str, str]]:
    return {key: (where, what) for where, what, key in shortcut_rows(window)}


def test_every_advertised_key_is_listed_with_what_it_does(window) -> None:
    keys = _keys(window)
    assert keys["F5"] == ("Run", "Run")
    assert keys["F6"] == ("Run", "Pause")
    assert keys["F7"] == ("Run", "Step")
    assert keys["F8"] == ("Run", "Reset")
    assert keys["F11"] == ("View", "Presentation")
    for key, tool in (("W", "Wall"), ("C", "Curb"), ("A", "Arc"), ("H", "Wheel"), ("B", "Bead"),
                      ("P", "Spring"), ("K", "Axle cart"), ("I", "Impulse")):  # fmt: skip
        assert keys[key] == ("Tools", tool)
    for standard, text in (
        (QKeySequence.StandardKey.Undo, "Undo"),
        (QKeySequence.StandardKey.Redo, "Redo"),
        (QKeySequence.StandardKey.Save, "Save"),
        (QKeySequence.StandardKey.Open, "Open…"),
    ):
        native = QKeySequence(standard).toString(QKeySequence.SequenceFormat.NativeText)
        assert keys[native][1] == text
    assert keys["Ctrl+Z"] == ("Edit", "Undo")
    assert keys["Ctrl+Q"] == ("File", "Quit")


def test_a_new_menu_action_appears_on_the_page_without_editing_it(window) -> None:
    action = QAction("&Fit scene", window)
    action.setShortcut(QKeySequence("Ctrl+F"))
    window.view_menu.addAction(action)
    assert _keys(window)["Ctrl+F"] == ("View", "Fit scene")
    assert "Fit scene" in shortcuts_html(shortcut_rows(window))


def test_each_action_is_listed_once(window) -> None:
    rows = shortcut_rows(window)
    assert len({key for _where, _what, key in rows}) == len(rows)


def test_help_pages_open_from_the_menu(qtbot, window) -> None:
    assert [a.text() for a in window.help_menu.actions() if not a.isSeparator()] == [
        "&Keyboard shortcuts",
        "&Getting started",
        "&Papers…",
        "&About impactgui",
    ]
    window.shortcuts_action.trigger()
    page = window.help.page
    assert page is not None and page.isVisible()
    text = page.findChild(QTextBrowser).toPlainText()
    assert "F5" in text and "Reset" in text and "Ctrl+Q" in text
    window.getting_started_action.trigger()
    assert "Getting started" in window.help.page.windowTitle()


def test_about_names_the_version() -> None:
    from importlib import metadata

    assert metadata.version("impactgui") in about_text()
