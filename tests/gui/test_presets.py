"""The Presets menu: every bundled scene is listed, opens, and runs."""

from __future__ import annotations

import json

import pytest

from impactgui.presets import SCENES_DIR, bundled_presets

PRESETS = bundled_presets()


def test_the_menu_lists_every_bundled_scene_with_its_description(window) -> None:
    files = sorted(SCENES_DIR.glob("*.json"))
    assert len(files) >= 10
    actions = window.presets_menu.actions()
    assert [action.data() for action in actions] == [str(path) for path in files]
    for action, path in zip(actions, files, strict=True):
        data = json.loads(path.read_text())
        assert action.text() == data["title"]
        assert action.toolTip() == action.statusTip() == data["description"]


@pytest.mark.parametrize("preset", PRESETS, ids=[preset.path.stem for preset in PRESETS])
def test_every_preset_opens_and_runs(qtbot, window, preset) -> None:
    action = next(a for a in window.presets_menu.actions() if a.data() == str(preset.path))
    action.trigger()
    assert window.doc.data["title"] == preset.title
    assert not window.doc.is_dirty
    assert window.doc.problems() == []
    window.playback_bar.set_speed(0.1)  # three frames drawn before a short scene has played
    assert window.start_run()
    qtbot.waitUntil(lambda: window.frames_drawn >= 3, timeout=10000)
    qtbot.waitUntil(lambda: window.plots.point_count() > 0, timeout=10000)
    assert window.run_state in ("running", "finished")
    assert window.canvas.animating
    window.reset_run()
    assert not window.canvas.animating
