"""The property panel: values with units, refused values shown red with the validator's reason."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt

from impactgui.document import SceneDocument
from impactgui.presets import SCENES_DIR
from impactgui.properties import PropertyPanel


@pytest.fixture
def doc(qtbot) -> Iterator[SceneDocument]:
    """The wheel-and-curb scene (paper 004) with one spring added to the wheel."""
    document = SceneDocument()
    document.load(SCENES_DIR / "wheel_curb_e03.json")
    data = copy.deepcopy(document.data)
    data["springs"] = [{"a": "wheel", "anchor": [1.5, 0.5], "stiffness": 50, "rest_length": 0.7}]
    document.set_data(data)
    yield document


@pytest.fixture
def panel(qtbot, doc: SceneDocument) -> Iterator[PropertyPanel]:
    """A shown property panel on ``doc`` with the wheel selected."""
    widget = PropertyPanel(doc)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    doc.select(("bodies", 0))
    yield widget


def test_the_selected_wheel_shows_its_fields_with_units(panel: PropertyPanel) -> None:
    assert panel.title.text() == "Wheel “wheel”"
    mass = panel.field("bodies[0].mass")
    assert mass.editors[0].text() == "10"
    assert mass.spec.unit == "kg"
    assert panel.field("bodies[0].inertia").spec.unit == "kg·m²"
    assert [e.text() for e in panel.field("bodies[0].velocity").editors] == ["-5", "-3"]


def test_a_negative_mass_shows_red_with_the_reason_and_is_not_applied(
    panel: PropertyPanel, doc: SceneDocument
) -> None:
    before = copy.deepcopy(doc.data)
    assert not panel.submit("bodies[0].mass", "-1")
    field = panel.field("bodies[0].mass")
    assert field.invalid
    assert field.error.text() == "must be > 0, got -1.0"
    assert "#ffebee" in field.editors[0].styleSheet()
    assert doc.data == before
    assert not doc.is_dirty
    assert panel.submit("bodies[0].mass", "12.5")
    assert not field.invalid
    assert doc.data["bodies"][0]["mass"] == 12.5


def test_typing_and_pressing_return_applies_the_value(
    qtbot, panel: PropertyPanel, doc: SceneDocument
) -> None:
    edit = panel.field("bodies[0].angle").editors[0]
    edit.selectAll()
    qtbot.keyClicks(edit, "1.5")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert doc.data["bodies"][0]["angle"] == 1.5


def test_text_that_is_not_a_number_is_refused(panel: PropertyPanel, doc: SceneDocument) -> None:
    assert not panel.submit("bodies[0].radius", "big")
    assert panel.field("bodies[0].radius").error.text() == "not a number: 'big'"
    assert doc.data["bodies"][0]["radius"] == 0.1


def test_a_radius_that_makes_the_wheel_overlap_the_curb_is_refused(
    panel: PropertyPanel, doc: SceneDocument
) -> None:
    assert not panel.submit("bodies[0].radius", "0.25")
    assert "overlaps boundary 'curb'" in panel.field("bodies[0].radius").error.text()
    assert doc.data["bodies"][0]["radius"] == 0.1


def test_a_valid_value_is_one_undoable_step(panel: PropertyPanel, doc: SceneDocument) -> None:
    assert panel.submit("bodies[0].velocity", ("-4", "0,5"))
    assert doc.data["bodies"][0]["velocity"] == [-4.0, 0.5]
    assert doc.is_dirty
    doc.undo_stack.undo()
    assert doc.data["bodies"][0]["velocity"] == [-5.0, -3.0]
    assert [e.text() for e in panel.field("bodies[0].velocity").editors] == ["-5", "-3"]


def test_renaming_a_body_keeps_its_spring(panel: PropertyPanel, doc: SceneDocument) -> None:
    assert panel.submit("bodies[0].id", "rim")
    assert doc.data["springs"][0]["a"] == "rim"
    assert panel.title.text() == "Wheel “rim”"
    assert not panel.submit("bodies[0].id", "curb")
    assert "duplicate id 'curb'" in panel.field("bodies[0].id").error.text()


def test_scene_settings_show_when_nothing_is_selected(
    panel: PropertyPanel, doc: SceneDocument
) -> None:
    doc.select(None)
    assert panel.title.text() == "Scene"
    assert panel.field("contact.friction").editors[0].text() == "0.4"
    assert panel.submit("contact.impact_law", "poisson")
    assert doc.data["contact"]["impact_law"] == "poisson"
    assert not panel.submit("contact.restitution", "1.5")
    assert panel.field("contact.restitution").error.text() == "must be <= 1, got 1.5"
    assert not panel.submit("solver.t_end", "0")
    assert doc.data["solver"]["t_end"] == 1.0


def test_a_boundary_override_can_be_set_and_cleared(
    panel: PropertyPanel, doc: SceneDocument
) -> None:
    doc.select(("boundaries", 0))
    override = panel.field("boundaries[0].restitution")
    assert override.editors[0].text() == ""
    assert override.editors[0].placeholderText() == "scene default (0.3)"
    assert panel.submit("boundaries[0].restitution", "0.9")
    assert doc.data["boundaries"][0]["restitution"] == 0.9
    assert panel.submit("boundaries[0].restitution", "")
    assert "restitution" not in doc.data["boundaries"][0]


def test_a_spring_to_an_anchor_shows_its_anchor(panel: PropertyPanel, doc: SceneDocument) -> None:
    doc.select(("springs", 0))
    assert panel.title.text() == "Spring (anchored)"
    assert panel.field("springs[0].stiffness").spec.unit == "N/m"
    assert panel.submit("springs[0].damping", "2")
    assert doc.data["springs"][0]["damping"] == 2.0


def test_scene_problems_are_listed(panel: PropertyPanel, doc: SceneDocument) -> None:
    data = copy.deepcopy(doc.data)
    data["bodies"][0]["mass"] = -2
    doc.set_data(data)
    assert "bodies[0].mass: must be > 0" in panel.problems.text()
    assert not panel.problems.isHidden()
