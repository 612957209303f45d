"""Forcing you can see (issue 25, item 3): a tool draws a harmonic force, the canvas shows it.

Before, a harmonic force (paper 003's vibro-impact scenes) was not drawn,
could not be selected, and no tool added or edited one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from impactgui.canvas import SceneCanvas
from impactgui.document import SceneDocument
from impactgui.forcing import FORCING_COLOUR
from impactgui.scene_items import SELECTION_COLOUR
from tests.gui.conftest import run_to_end, scene_path


def _drag(canvas: SceneCanvas, start, *path) -> None:
    assert canvas.deliver_press(start)
    for pos in path:
        canvas.deliver_drag(pos)
    canvas.deliver_release(path[-1])


def test_dragging_from_a_body_adds_a_harmonic_force_undoably(
    canvas: SceneCanvas, doc: SceneDocument
) -> None:
    canvas.set_tool("wheel")
    canvas.deliver_click((1.0, 0.5))
    canvas.set_tool("bead")
    canvas.deliver_click((0.0, 0.5))
    canvas.set_tool("force")
    # 10 cm = 10 N: a drag of (0.12, 0.2) m from the wheel's centre is A = (12, 20) N
    _drag(canvas, (1.02, 0.49), (1.05, 0.6), (1.12, 0.7))
    # a bead feels only F_x on its rail: the drag's x alone
    _drag(canvas, (0.0, 0.5), (-0.3, 0.9))
    wheel, bead = (b["id"] for b in doc.data["bodies"])
    assert doc.data["forces"] == [
        {"body": wheel, "type": "harmonic", "amplitude": [12.0, 20.0], "omega": 5.0, "phase": 0.0},
        {"body": bead, "type": "harmonic", "amplitude": [-30.0, 0.0], "omega": 5.0, "phase": 0.0},
    ]
    assert doc.selection == ("forces", 1)
    assert doc.problems() == []
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert doc.data.get("forces", []) == []
    doc.undo_stack.redo()
    assert len(doc.data["forces"]) == 1
    # a press away from any body draws nothing
    assert not canvas.deliver_press((2.0, 1.0))


def test_a_force_is_drawn_labelled_selected_edited_and_deleted(qtbot, window) -> None:
    assert window.open_file(scene_path("chain_forced"))  # 10 N at 8 rad/s on m4, at x = 0.6 m
    canvas, doc = window.canvas, window.doc
    ((x0, y0, x1, y1, colour),) = canvas.forcing.arrows.arrows
    assert (x0, y0, x1, y1) == pytest.approx((0.6, 0.0, 0.7, 0.0))
    assert colour == FORCING_COLOUR
    assert [label.textItem.toPlainText() for label in canvas.forcing.labels] == [
        "F = 10 N · sin(8 t + 0)"
    ]
    canvas.set_tool("select")
    canvas.deliver_click((0.68, 0.001))  # on the arrow, beyond the bead's rim
    assert doc.selection == ("forces", 0)
    assert canvas.forcing.arrows.arrows[0][4] == SELECTION_COLOUR
    panel = window.properties
    assert panel.title.text().startswith("Harmonic force")
    units = {p: panel.field(f"forces[0].{p}").spec.unit for p in ("amplitude", "omega", "phase")}
    assert units == {"amplitude": "N", "omega": "rad/s", "phase": "rad"}
    assert not panel.submit("forces[0].omega", "-2")
    assert panel.field("forces[0].omega").invalid
    assert doc.data["forces"][0]["omega"] == 8.0
    assert panel.submit("forces[0].omega", "3")
    assert panel.submit("forces[0].phase", "-1.5")
    assert [label.textItem.toPlainText() for label in canvas.forcing.labels] == [
        "F = 10 N · sin(3 t − 1.5)"
    ]
    canvas.set_tool("delete")
    canvas.deliver_click((0.68, 0.001))
    assert doc.data["forces"] == [] and canvas.forcing.arrows.arrows == []
    assert [b["id"] for b in doc.data["bodies"]] == ["m1", "m2", "m3", "m4"]
    doc.undo_stack.undo()
    assert doc.data["forces"][0]["phase"] == -1.5
    assert len(canvas.forcing.arrows.arrows) == 1
    doc.undo_stack.setClean()


def test_the_arrow_pulses_with_the_forcing_at_the_playback_time(qtbot, window) -> None:
    assert window.open_file(scene_path("chain_forced"))
    run_to_end(qtbot, window)
    trajectory = window.runner.trajectory
    m4 = 3  # m4's x: the fourth bead's one coordinate
    seen = set()
    for index in (0, 10, 100, 197, 250, 600, len(trajectory) - 1):
        window.clock.seek(trajectory.frame(index).t)
        frame = trajectory.frame(window.clock.index)
        force = 10.0 * math.sin(8.0 * frame.t)  # paper 003's F sin(ωt), N
        ((x0, y0, x1, y1, _),) = window.canvas.forcing.arrows.arrows
        assert (x0, y0) == pytest.approx((frame.q[m4], 0.0), abs=1e-12)
        assert (x1 - x0, y1 - y0) == pytest.approx((force / 100.0, 0.0), abs=1e-12)
        seen.add(np.sign(round(force, 6)))
    assert seen == {-1.0, 0.0, 1.0}, "it grows, vanishes and turns round"
    assert window.canvas.forcing.labels == []
    window.reset_run()
    assert window.canvas.forcing.arrows.arrows[0][:4] == pytest.approx((0.6, 0.0, 0.7, 0.0))
