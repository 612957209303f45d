"""SceneDocument and its undoable commands: exact undo/redo, dirty flag, files."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from impactgui.commands import (
    AddItem,
    DeleteItem,
    MoveItem,
    RenameBody,
    SetInitialVelocity,
    SetProperty,
)
from impactgui.document import SceneDocument, structure_problems
from solver.scene import SceneError
from tests.gui.conftest import scene_path

WHEEL = {
    "id": "wheel1",
    "type": "wheel",
    "mass": 1.0,
    "inertia": 0.005,
    "radius": 0.1,
    "position": [0.5, 0.3],
    "angle": 0.0,
    "velocity": [0.0, 0.0],
    "angular_velocity": 0.0,
}
BEAD = {"id": "bead1", "type": "bead", "rail_y": 1.0, "mass": 2.0, "radius": 0.05, "x": 0, "vx": 0}
WALL = {"id": "wall1", "type": "segment", "a": [0.0, 0.0], "b": [2.0, 0.0]}


@pytest.fixture
def doc(qtbot) -> Iterator[SceneDocument]:
    """A document holding a wall, a wheel, a bead and a spring between them."""
    document = SceneDocument()
    data = copy.deepcopy(document.data)
    data["boundaries"] = [copy.deepcopy(WALL)]
    data["bodies"] = [copy.deepcopy(WHEEL), copy.deepcopy(BEAD)]
    data["springs"] = [{"a": "wheel1", "b": "bead1", "stiffness": 100.0, "rest_length": 0.8}]
    document.set_data(data)
    yield document


EDITS: dict[str, Callable[[SceneDocument], object]] = {
    "add boundary": lambda d: AddItem(
        d, "boundaries", {"id": "w2", "type": "segment", "a": [0, 1.5], "b": [1, 1.5]}
    ),
    "add body": lambda d: AddItem(d, "bodies", {**WHEEL, "id": "wheel2", "position": [1.5, 0.5]}),
    "add spring": lambda d: AddItem(
        d, "springs", {"a": "bead1", "anchor": [0, 1.5], "stiffness": 10, "rest_length": 0.5}
    ),
    "delete body": lambda d: DeleteItem(d, ("bodies", 0)),
    "delete boundary": lambda d: DeleteItem(d, ("boundaries", 0)),
    "move body": lambda d: MoveItem(d, ("bodies", 0), {("bodies", 0, "position"): [1.0, 0.4]}),
    "move vertex": lambda d: MoveItem(d, ("boundaries", 0), {("boundaries", 0, "b"): [2.0, -0.5]}),
    "set property": lambda d: SetProperty(d, ("bodies", 0, "mass"), 3.5),
    "set scene property": lambda d: SetProperty(d, ("contact", "friction"), 0.7),
    "set velocity": lambda d: SetInitialVelocity(d, ("bodies", 0), [1.0, -2.0]),
    "set bead velocity": lambda d: SetInitialVelocity(d, ("bodies", 1), [0.5, 9.0]),
    "rename body": lambda d: RenameBody(d, ("bodies", 1), "slider"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_undo_and_redo_restore_the_exact_scene(doc: SceneDocument, edit: str) -> None:
    before = copy.deepcopy(doc.data)
    doc.push(EDITS[edit](doc))
    after = copy.deepcopy(doc.data)
    assert after != before
    assert doc.is_dirty
    doc.undo_stack.undo()
    assert doc.data == before
    assert not doc.is_dirty
    doc.undo_stack.redo()
    assert doc.data == after
    assert doc.problems() == []


def test_edits_change_only_their_field(doc: SceneDocument) -> None:
    doc.push(SetInitialVelocity(doc, ("bodies", 0), [1.0, -2.0]))
    doc.push(SetInitialVelocity(doc, ("bodies", 1), [0.5, 9.0]))
    assert doc.data["bodies"][0]["velocity"] == [1.0, -2.0]
    assert doc.data["bodies"][1]["vx"] == 0.5
    assert "velocity" not in doc.data["bodies"][1]


def test_deleting_a_body_removes_its_springs(doc: SceneDocument) -> None:
    doc.push(DeleteItem(doc, ("bodies", 1)))
    assert [b["id"] for b in doc.data["bodies"]] == ["wheel1"]
    assert doc.data["springs"] == []
    assert doc.problems() == []


def test_renaming_a_body_renames_the_spring_ends(doc: SceneDocument) -> None:
    doc.push(RenameBody(doc, ("bodies", 0), "big"))
    assert doc.data["springs"][0]["a"] == "big"


def test_moves_of_one_drag_merge_into_one_undo_step(doc: SceneDocument) -> None:
    before = copy.deepcopy(doc.data)
    for x in (0.6, 0.7, 0.8):
        doc.push(MoveItem(doc, ("bodies", 0), {("bodies", 0, "position"): [x, 0.3]}, drag_id=7))
    doc.push(MoveItem(doc, ("bodies", 0), {("bodies", 0, "position"): [0.9, 0.3]}, drag_id=8))
    assert doc.undo_stack.count() == 2
    doc.undo_stack.undo()
    assert doc.data["bodies"][0]["position"] == [0.8, 0.3]
    doc.undo_stack.undo()
    assert doc.data == before


def test_a_drag_back_to_the_start_leaves_no_undo_step(doc: SceneDocument) -> None:
    doc.push(MoveItem(doc, ("bodies", 0), {("bodies", 0, "position"): [0.9, 0.3]}, drag_id=3))
    doc.push(MoveItem(doc, ("bodies", 0), {("bodies", 0, "position"): [0.5, 0.3]}, drag_id=3))
    assert doc.undo_stack.count() == 0
    assert not doc.is_dirty


def test_undoing_an_add_clears_a_selection_of_the_added_item(doc: SceneDocument, qtbot) -> None:
    doc.push(EDITS["add body"](doc))
    doc.select(("bodies", 2))
    with qtbot.waitSignal(doc.selection_changed) as blocker:
        doc.undo_stack.undo()
    assert blocker.args == [None]
    assert doc.selection is None


def test_unique_ids_count_up(doc: SceneDocument) -> None:
    assert doc.unique_id("wheel") == "wheel2"
    assert doc.unique_id("wall") == "wall2"
    assert doc.unique_id("arc") == "arc1"


def test_problems_name_the_field(doc: SceneDocument) -> None:
    doc.push(SetProperty(doc, ("bodies", 0, "mass"), -1.0))
    assert doc.problems() == ["bodies[0].mass: must be > 0, got -1.0"]
    with pytest.raises(SceneError) as refused:
        doc.scene()
    assert refused.value.problems == doc.problems()


def test_the_scene_is_validated_once_per_change_and_follows_every_change(
    doc: SceneDocument,
) -> None:
    first = doc.scene()
    assert doc.scene() is first, "validated once while the scene does not change"
    assert first.bodies[0].mass == 1.0
    doc.push(SetProperty(doc, ("bodies", 0, "mass"), 2.5))
    assert doc.scene().bodies[0].mass == 2.5
    doc.undo_stack.undo()
    assert doc.scene().bodies[0].mass == 1.0
    doc.data["bodies"][0]["mass"] = 7.0  # the scene shares nothing with the data
    assert first.bodies[0].mass == 1.0
    doc.data["bodies"][0]["mass"] = 1.0


def test_dirty_after_an_edit_and_clean_after_save(
    doc: SceneDocument, tmp_path: Path, qtbot
) -> None:
    assert not doc.is_dirty
    with qtbot.waitSignal(doc.dirty_changed) as blocker:
        doc.push(SetProperty(doc, ("bodies", 0, "mass"), 2.0))
    assert blocker.args == [True]
    target = tmp_path / "scene.json"
    assert doc.save(target) == target
    assert not doc.is_dirty
    assert doc.path == target
    saved = json.loads(target.read_text())
    assert saved["bodies"][0]["mass"] == 2.0
    doc.undo_stack.undo()
    assert doc.is_dirty


def test_load_round_trips_and_an_invalid_file_leaves_the_document_alone(
    doc: SceneDocument, tmp_path: Path
) -> None:
    good = tmp_path / "good.json"
    doc.save(good)
    other = SceneDocument()
    other.load(good)
    assert other.data == doc.data
    assert other.path == good
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**doc.data, "bodies": [{**WHEEL, "mass": -1}]}))
    before = copy.deepcopy(other.data)
    with pytest.raises(SceneError) as error:
        other.load(bad)
    assert any(p.startswith("bodies[0].mass") for p in error.value.problems)
    assert other.data == before
    assert other.path == good


def test_set_data_fills_in_the_defaults_of_a_valid_scene(doc: SceneDocument) -> None:
    assert doc.data["springs"][0]["damping"] == 0.0
    assert doc.data["solver"]["t_end"] == 1.0


def test_new_gives_an_empty_valid_clean_scene(doc: SceneDocument) -> None:
    doc.push(SetProperty(doc, ("bodies", 0, "mass"), 2.0))
    doc.new()
    assert doc.data["bodies"] == [] and doc.data["boundaries"] == []
    assert doc.problems() == []
    assert not doc.is_dirty
    assert doc.path is None
    assert doc.undo_stack.count() == 0


def test_saving_an_invalid_scene_writes_nothing(doc: SceneDocument, tmp_path: Path) -> None:
    doc.push(SetProperty(doc, ("bodies", 0, "radius"), 0.0))
    target = tmp_path / "x.json"
    with pytest.raises(SceneError):
        doc.save(target)
    assert not target.exists()
    assert doc.is_dirty


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda d: d["bodies"].append(1), "bodies[1]: must be an object, got 1"),
        (lambda d: d["boundaries"].append([0, 1]), "boundaries[1]: must be an object, got [0, 1]"),
        (lambda d: d["springs"].append(None), "springs[0]: must be an object, got null"),
        (lambda d: d.__setitem__("bodies", {"a": 1}), 'bodies: must be a list, got {"a": 1}'),
        (lambda d: d.__setitem__("solver", 5), "solver: must be an object, got 5"),
    ],
)
def test_data_not_shaped_like_a_scene_is_refused_and_the_document_kept(
    doc: SceneDocument, edit, problem: str
) -> None:
    data = json.loads(scene_path("bouncing_ball").read_text())
    doc.set_data(data)
    kept = copy.deepcopy(doc.data)
    damaged = copy.deepcopy(data)
    edit(damaged)
    assert structure_problems(damaged) == [problem]
    for install in (doc.set_data, doc.restore):
        with pytest.raises(SceneError) as raised:
            install(damaged)
        assert raised.value.problems == [problem]
        assert doc.data == kept
    assert structure_problems(data) == []
    (whole,) = structure_problems([data])  # the value is quoted, cut short
    assert whole.startswith('(scene): must be a JSON object, got [{"format": ')
    assert whole.endswith("...") and len(whole) < 100
