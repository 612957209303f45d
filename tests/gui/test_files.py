"""Files: save/open round trip, the unsaved-changes prompt, CSV and PNG export, recent files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from impactgui.commands import SetProperty
from solver import cli
from tests.gui.conftest import distinct_colours, run_to_end, scene_path

Answer = QMessageBox.StandardButton


class Prompt:
    """Stands in for the unsaved-changes dialog: records the calls, gives a fixed answer."""

    def __init__(self, answer: QMessageBox.StandardButton) -> None:
        self.answer = answer
        self.calls = 0

    def __call__(self) -> QMessageBox.StandardButton:
        self.calls += 1
        return self.answer


def _edit(window, title: str = "Edited") -> None:
    window.doc.push(SetProperty(window.doc, ("title",), title))
    assert window.doc.is_dirty


def test_save_then_open_gives_back_the_same_scene(window, tmp_path: Path) -> None:
    assert window.open_preset(scene_path("newton_cradle_3_staged"))
    assert window.doc.path is None
    _edit(window, "cradle copy")
    target = tmp_path / "cradle.json"
    assert window.save_as(target)
    assert not window.doc.is_dirty
    assert window.doc.path == target
    saved = dict(window.doc.data)
    assert window.new_scene()
    assert window.open_file(target)
    assert window.doc.data == saved
    assert json.loads(target.read_text())["title"] == "cradle copy"
    assert window.recent_files()[0] == str(target.resolve())
    assert window.recent_menu.actions()[0].text() == str(target.resolve())


@pytest.mark.parametrize("way", ["close", "new", "open"])
def test_unsaved_changes_prompt_cancel_keeps_the_scene(window, way: str) -> None:
    assert window.open_file(scene_path("bouncing_ball"))
    _edit(window)
    prompt = window.confirm_discard = Prompt(Answer.Cancel)
    if way == "close":
        assert not window.close()
        assert window.isVisible()
    elif way == "new":
        assert not window.new_scene()
    else:
        assert not window.open_file(scene_path("four_balls"))
    assert prompt.calls == 1
    assert window.doc.data["title"] == "Edited"
    assert window.doc.is_dirty


@pytest.mark.parametrize("way", ["close", "new", "open", "preset"])
def test_unsaved_changes_prompt_discard_drops_the_edit(window, way: str) -> None:
    assert window.open_file(scene_path("bouncing_ball"))
    _edit(window)
    prompt = window.confirm_discard = Prompt(Answer.Discard)
    if way == "close":
        assert window.close()
        assert not window.isVisible()
    elif way == "new":
        assert window.new_scene()
    elif way == "open":
        assert window.open_file(scene_path("four_balls"))
    else:
        window.presets_menu.actions()[0].trigger()
    assert prompt.calls == 1
    assert window.doc.data["title"] != "Edited" or way == "close"


def test_unsaved_changes_prompt_save_writes_the_file_first(window, tmp_path: Path) -> None:
    target = tmp_path / "ball.json"
    target.write_text(scene_path("bouncing_ball").read_text())
    assert window.open_file(target)
    _edit(window, "saved on the way out")
    prompt = window.confirm_discard = Prompt(Answer.Save)
    assert window.new_scene()
    assert prompt.calls == 1
    assert json.loads(target.read_text())["title"] == "saved on the way out"


def test_a_clean_scene_is_dropped_without_asking(window) -> None:
    assert window.open_file(scene_path("bouncing_ball"))
    assert window.new_scene()  # the fixture's prompt hook fails the test if asked


def test_opening_a_bad_file_names_the_problem_and_keeps_the_scene(qtbot, window, tmp_path):
    good = tmp_path / "good.json"
    good.write_bytes(scene_path("bouncing_ball").read_bytes())
    assert window.open_file(good)
    bad = tmp_path / "bad.json"
    bad_data = json.loads(scene_path("bouncing_ball").read_text())
    bad_data["bodies"][0]["mass"] = -1
    bad.write_text(json.dumps(bad_data))
    assert not window.open_file(bad)
    assert window.doc.path == good
    boxes = [box for box in window.findChildren(QMessageBox) if box.isVisible()]
    assert boxes and "bodies[0].mass" in boxes[-1].informativeText()
    assert "bodies[0].mass" in window.statusBar().currentMessage()
    boxes[-1].close()


def test_csv_export_equals_the_command_line_byte_for_byte(qtbot, window, tmp_path: Path):
    scene = scene_path("wheel_curb_e03")
    assert window.open_file(scene)
    run_to_end(qtbot, window)
    assert window.export_csv(tmp_path / "gui") == tmp_path / "gui"
    assert cli.main(["run", str(scene), "--out", str(tmp_path / "cli")]) == 0
    for name in ("trajectory.csv", "contacts.csv", "events.csv"):
        gui_bytes = (tmp_path / "gui" / name).read_bytes()
        assert gui_bytes == (tmp_path / "cli" / name).read_bytes(), name
        assert gui_bytes.count(b"\n") > 1 or name != "trajectory.csv"


def test_export_without_a_run_says_so(window, tmp_path: Path) -> None:
    assert window.export_csv(tmp_path / "nothing") is None
    assert not (tmp_path / "nothing").exists()
    assert "Run the scene first" in window.statusBar().currentMessage()


def test_canvas_and_plots_export_non_blank_pngs(qtbot, window, tmp_path: Path) -> None:
    assert window.open_file(scene_path("bouncing_ball"))
    run_to_end(qtbot, window)
    exports = {"canvas.png": window.export_canvas_png, "plots.png": window.export_plots_png}
    for name, export in exports.items():
        path = tmp_path / name
        assert export(path)
        assert distinct_colours(path) > 5, name
