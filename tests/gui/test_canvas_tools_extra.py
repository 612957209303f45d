"""The three-point arc tool, the axle-cart tool and the arc drawing convention."""

from __future__ import annotations

import math

import numpy as np
import pytest

from impactgui.canvas import SceneCanvas
from impactgui.document import SceneDocument
from impactgui.presets import SCENES_DIR
from impactgui.scene_items import arc_points, arc_sweep_deg
from impactgui.tools import arc_through


def _on_span(arc: dict, point: tuple[float, float]) -> bool:
    """True when ``point`` is on the circle of ``arc`` within its counter-clockwise span."""
    cx, cy = arc["center"]
    on_circle = math.isclose(math.dist((cx, cy), point), arc["radius"], abs_tol=1e-9)
    angle = math.degrees(math.atan2(point[1] - cy, point[0] - cx))
    inside = 0.0 < (angle - arc["start_deg"]) % 360.0 < arc["end_deg"] - arc["start_deg"]
    return on_circle and inside


@pytest.mark.parametrize(
    ("points", "expected"),
    [
        # counter-clockwise clicks: the arc starts at the first point
        (((1.5, 0.0), (1.0, 0.5), (0.5, 0.0)), ((1.0, 0.0), 0.5, 0.0, 180.0)),
        # clockwise clicks over the same arc: start and end swap, same wall
        (((0.5, 0.0), (1.0, 0.5), (1.5, 0.0)), ((1.0, 0.0), 0.5, 0.0, 180.0)),
        # the lower half
        (((0.5, 0.0), (1.0, -0.5), (1.5, 0.0)), ((1.0, 0.0), 0.5, 180.0, 360.0)),
        # three quarters of a turn, clicked clockwise
        (((1.5, 0.0), (1.0, -0.5), (1.0, 0.5)), ((1.0, 0.0), 0.5, 90.0, 360.0)),
        # 3-4-5 triangle: centre (0, 0), radius 5
        (((5.0, 0.0), (3.0, 4.0), (-4.0, 3.0)), ((0.0, 0.0), 5.0, 0.0, 143.130102354)),
    ],
)
def test_arc_through_three_points_has_exact_geometry(points, expected) -> None:
    centre, radius, start_deg, end_deg = arc_through(*points)
    assert centre == pytest.approx(expected[0], abs=1e-10)
    assert radius == pytest.approx(expected[1], abs=1e-10)
    assert (start_deg, end_deg) == pytest.approx(expected[2:], abs=1e-8)
    arc = {"center": centre, "radius": radius, "start_deg": start_deg, "end_deg": end_deg}
    assert _on_span(arc, points[1])
    for end in (points[0], points[2]):
        assert math.dist(centre, end) == pytest.approx(radius, abs=1e-9)


def test_arc_through_refuses_collinear_or_repeated_points() -> None:
    assert arc_through((0.0, 0.0), (0.5, 0.5), (1.0, 1.0)) is None
    assert arc_through((0.0, 0.0), (0.5, 0.0), (0.0, 0.0)) is None
    assert arc_through((0.0, 0.0), (0.0, 0.0), (1.0, 0.0)) is None


def test_arc3_tool_previews_and_adds_an_undoable_arc(
    qtbot, canvas: SceneCanvas, doc: SceneDocument
) -> None:
    canvas.set_tool("arc3")
    canvas.deliver_click((2.0, 0.0))
    canvas.tool.hover((1.5, 0.5))
    assert canvas.preview_points() == [(2.0, 0.0), (1.5, 0.5)]
    canvas.deliver_click((1.5, 0.5))
    canvas.tool.hover((1.01, 0.01))
    preview = np.array(canvas.preview_points())
    assert len(preview) > 8
    assert np.hypot(preview[:, 0] - 1.5, preview[:, 1]) == pytest.approx(0.5)
    with qtbot.waitSignal(canvas.status_message) as blocker:
        canvas.deliver_click((2.5, -0.5))
    assert "one line" in blocker.args[0]
    assert doc.data["boundaries"] == []
    canvas.deliver_click((1.0, 0.0))
    canvas.deliver_click((1.0, 0.0), double=True)
    assert canvas.tool.points == [], "a double click on the end starts no new arc"
    arc = doc.data["boundaries"][0]
    assert arc["id"] == "arc1" and arc["type"] == "arc"
    assert arc["center"] == pytest.approx([1.5, 0.0]) and arc["radius"] == pytest.approx(0.5)
    assert (arc["start_deg"], arc["end_deg"]) == pytest.approx((0.0, 180.0))
    assert _on_span(arc, (1.5, 0.5))
    assert canvas.preview_points() == [] and doc.problems() == []
    doc.undo_stack.undo()
    assert doc.data["boundaries"] == []
    doc.undo_stack.redo()
    assert doc.data["boundaries"][0] == arc


def test_arc_is_drawn_counter_clockwise_from_start_to_end() -> None:
    lower = arc_points((0.0, 0.0), 1.0, 180.0, 0.0)
    assert lower[:, 1].max() <= 1e-12 and lower[:, 1].min() == pytest.approx(-1.0, abs=1e-3)
    assert arc_sweep_deg(180.0, 0.0) == 180.0
    assert arc_sweep_deg(0.0, 360.0) == 360.0 and arc_sweep_deg(30.0, -330.0) == 360.0
    assert arc_sweep_deg(10.0, 10.0) == 0.0


def test_cart_tool_places_undoable_carts_in_top_view_only(
    canvas: SceneCanvas, doc: SceneDocument
) -> None:
    actions = {a.data(): a for a in canvas.tool_actions()}
    assert not actions["cart"].isEnabled()
    assert actions["wheel"].isEnabled() and actions["bead"].isEnabled()
    assert actions["arc3"].isEnabled()
    doc.load(SCENES_DIR / "axle_cart.json")
    assert actions["cart"].isEnabled() and not actions["arc3"].isEnabled()
    assert not actions["wheel"].isEnabled() and not actions["bead"].isEnabled()
    canvas.set_tool("cart")
    canvas.deliver_click((1.01, 0.49))
    canvas.deliver_click((-1.0, 1.0))
    new = doc.data["bodies"][1:]
    assert [b["id"] for b in new] == ["cart1", "cart2"]
    assert new[0] == {
        "id": "cart1",
        "type": "axle_cart",
        "axle_mass": 1.0,
        "half_length": 0.2,
        "wheel_mass": 0.5,
        "wheel_radius": 0.1,
        "position": [1.0, 0.5],
        "angle": 0.0,
        "wheel_angles": [0.0, 0.0],
        "wheel_rates": [0.0, 0.0],
    }
    assert doc.problems() == [] and doc.selection == ("bodies", 2)
    assert {"cart1", "cart2"} <= set(canvas.layer.bodies)
    doc.undo_stack.undo()
    assert [b["id"] for b in doc.data["bodies"]] == ["cart", "cart1"]
    doc.set_data({"format": "impactgui-scene", "version": 1})
    assert canvas.tool.name == "select" and not actions["cart"].isEnabled()


def test_springs_run_rim_to_rim_and_impulses_are_labelled(
    canvas: SceneCanvas, doc: SceneDocument
) -> None:
    canvas.set_tool("bead")
    canvas.deliver_click((0.0, 0.5))
    canvas.deliver_click((0.6, 0.5))
    canvas.set_tool("spring")
    canvas.deliver_click((0.0, 0.5))
    canvas.deliver_click((0.6, 0.5))
    xs, ys = canvas.layer.springs[0].getData()
    assert (xs.min(), xs.max()) == pytest.approx((0.05, 0.55))
    assert np.abs(ys - 0.5).max() == pytest.approx(0.015)
    doc.load(SCENES_DIR / "axle_cart.json")
    assert canvas.impulse_labels() == ["1 N·s at 4 s"]
    label_y = canvas.layer._labels["cart"].pos().y()
    assert 0.1 * math.sqrt(2) < label_y < 0.2, "just above the turned cart, not l + r above"
