"""The menus come from one table: every ActionSpec is an action in its menu, and one more
line makes one more menu item."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction, QKeySequence

from impactgui import actions
from impactgui.actions import ACTIONS, MENUS, ActionSpec


def test_every_spec_is_an_action_in_its_menu(window) -> None:
    assert [menu.title() for menu in window.menus.values()] == list(MENUS)
    for spec in ACTIONS:
        action = getattr(window, spec.name)
        assert isinstance(action, QAction)
        assert action.text() == spec.text
        assert action in window.menus[spec.menu].actions(), spec.name
        assert action.isCheckable() == spec.checkable
        if spec.shortcut is not None:
            assert action.shortcut() == QKeySequence(spec.shortcut)


def test_snap_to_grid_is_in_the_edit_menu(window) -> None:
    assert window.canvas.snap_action in window.menus["&Edit"].actions()


def test_one_more_line_is_one_more_menu_item(
    qtbot, monkeypatch: pytest.MonkeyPatch, settings: QSettings
) -> None:
    from impactgui.mainwindow import MainWindow

    calls: list[bool] = []
    extra = ActionSpec("shout_action", "&View", "&Shout", "fit_shout", "Ctrl+Alt+S", "say so")
    monkeypatch.setattr(actions, "ACTIONS", (*ACTIONS, extra))
    monkeypatch.setattr(MainWindow, "fit_shout", lambda self: calls.append(True), raising=False)
    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    try:
        assert window.shout_action in window.view_menu.actions()
        window.shout_action.trigger()
        assert calls == [True]
    finally:
        window.shutdown()


def test_checkable_actions_pass_their_state(window) -> None:
    window.honesty_action.trigger()
    assert window.honesty.enabled
    window.honesty_action.trigger()
    assert not window.honesty.enabled
