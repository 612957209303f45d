"""The scene canvas: drawing tools, dragging, snapping, and the animation of frames."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QImage

from impactgui.canvas import TRAIL_LENGTH, SceneCanvas
from impactgui.document import SceneDocument
from impactgui.presets import SCENES_DIR
from solver.frames import ContactState, EnergyBudget, Event, Frame
from solver.system import System


def _viewport_point(canvas: SceneCanvas, x: float, y: float) -> QPoint:
    scene_pos = canvas.view.mapViewToScene(QPointF(x, y))
    return canvas.plot.mapFromScene(scene_pos)


def _drag(canvas: SceneCanvas, *points: tuple[float, float]) -> None:
    assert canvas.deliver_press(points[0])
    for point in points[1:]:
        canvas.deliver_drag(point)
    canvas.deliver_release(points[-1])


def _add_floor(canvas: SceneCanvas) -> None:
    canvas.set_tool("wall")
    _drag(canvas, (0.0, 0.0), (1.0, 0.02), (2.0, 0.01))


def test_wall_tool_draws_a_snapped_segment(canvas: SceneCanvas, doc: SceneDocument) -> None:
    canvas.set_tool("wall")
    _drag(canvas, (0.01, -0.02), (1.0, 0.3), (1.98, 0.03))
    assert doc.data["boundaries"] == [
        {"id": "wall1", "type": "segment", "a": [0.0, 0.0], "b": [2.0, 0.05]}
    ]
    assert canvas.preview_points() == []
    assert doc.problems() == []


def test_wheel_tool_places_a_wheel_where_the_mouse_clicks(
    qtbot, canvas: SceneCanvas, doc: SceneDocument
) -> None:
    canvas.set_tool("wheel")
    qtbot.mouseClick(
        canvas.plot.viewport(), Qt.MouseButton.LeftButton, pos=_viewport_point(canvas, 0.8, 0.52)
    )
    qtbot.waitUntil(lambda: len(doc.data["bodies"]) == 1, timeout=2000)
    wheel = doc.data["bodies"][0]
    assert wheel["id"] == "wheel1"
    assert wheel["position"] == pytest.approx([0.8, 0.5])
    assert (wheel["mass"], wheel["radius"], wheel["inertia"]) == (1.0, 0.1, pytest.approx(0.005))
    assert doc.selection == ("bodies", 0)
    canvas.deliver_click((1.5, 0.5))
    assert [b["id"] for b in doc.data["bodies"]] == ["wheel1", "wheel2"]
    assert set(canvas.layer.bodies) == {"wheel1", "wheel2"}


def test_a_body_over_a_wall_is_refused_with_a_message(
    qtbot, canvas: SceneCanvas, doc: SceneDocument
) -> None:
    _add_floor(canvas)
    canvas.set_tool("bead")
    with qtbot.waitSignal(canvas.status_message) as blocker:
        canvas.deliver_click((1.0, 0.02))
    assert "overlaps boundary 'wall1'" in blocker.args[0]
    assert doc.data["bodies"] == []
    canvas.deliver_click((1.0, 0.05))
    assert doc.data["bodies"][0]["rail_y"] == 0.05


def test_curb_tool_collects_clicks_until_enter(canvas: SceneCanvas, doc: SceneDocument) -> None:
    canvas.set_tool("curb")
    for point in ((0.0, 0.6), (0.0, 0.05), (0.4, 0.05)):
        canvas.deliver_click(point)
    canvas.tool.hover((0.41, 0.0))
    assert canvas.preview_points()[-1] == (0.4, 0.0)
    canvas.deliver_click((0.4, 0.0))
    canvas.deliver_click((2.0, 0.0), double=True)
    boundary = doc.data["boundaries"][0]
    assert boundary["type"] == "polyline" and boundary["id"] == "curb1"
    assert boundary["points"] == [[0.0, 0.6], [0.0, 0.05], [0.4, 0.05], [0.4, 0.0], [2.0, 0.0]]
    canvas.deliver_click((1.0, 1.0))
    canvas.deliver_finish()
    assert len(doc.data["boundaries"]) == 1, "one point is no curb"


def test_arc_tool_takes_centre_start_and_end(canvas: SceneCanvas, doc: SceneDocument) -> None:
    canvas.set_tool("arc")
    _drag(canvas, (1.0, 0.0), (1.2, 0.0))
    canvas.deliver_click((0.9, 0.0))
    arc = doc.data["boundaries"][0]
    assert arc["center"] == [1.0, 0.0]
    assert arc["radius"] == pytest.approx(0.2)
    assert (arc["start_deg"], arc["end_deg"]) == (0.0, 180.0)


def test_spring_tool_joins_two_bodies_relaxed(canvas: SceneCanvas, doc: SceneDocument) -> None:
    canvas.set_tool("bead")
    canvas.deliver_click((0.0, 0.5))
    canvas.deliver_click((0.6, 0.5))
    canvas.set_tool("spring")
    canvas.deliver_click((0.01, 0.5))
    canvas.deliver_click((0.61, 0.49))
    canvas.deliver_click((0.0, 0.5))
    canvas.deliver_click((0.0, 1.0))
    first, second = doc.data["springs"]
    assert (first["a"], first["b"], first["rest_length"]) == ("bead1", "bead2", 0.6)
    assert second["anchor"] == [0.0, 1.0] and second["rest_length"] == pytest.approx(0.5)
    assert len(canvas.layer.springs) == 2


def test_delete_tool_removes_what_is_clicked(canvas: SceneCanvas, doc: SceneDocument) -> None:
    _add_floor(canvas)
    canvas.set_tool("wheel")
    canvas.deliver_click((1.0, 0.5))
    canvas.set_tool("delete")
    canvas.deliver_click((1.03, 0.52))
    assert doc.data["bodies"] == []
    canvas.deliver_click((1.4, 0.0))
    assert doc.data["boundaries"] == []
    doc.undo_stack.undo()
    assert doc.data["boundaries"][0]["id"] == "wall1"


def test_dragging_a_body_moves_it_in_one_undo_step(canvas: SceneCanvas, doc: SceneDocument) -> None:
    canvas.set_tool("wheel")
    canvas.deliver_click((1.0, 0.5))
    count = doc.undo_stack.count()
    canvas.set_tool("select")
    _drag(canvas, (1.05, 0.5), (1.2, 0.6), (1.35, 0.81))
    assert doc.data["bodies"][0]["position"] == [1.3, 0.8]
    assert doc.undo_stack.count() == count + 1
    doc.undo_stack.undo()
    assert doc.data["bodies"][0]["position"] == [1.0, 0.5]


def test_dragging_a_wheel_into_a_wall_stops_at_the_wall(
    canvas: SceneCanvas, doc: SceneDocument
) -> None:
    _add_floor(canvas)
    canvas.set_tool("wheel")
    canvas.deliver_click((1.0, 0.5))
    canvas.set_tool("select")
    _drag(canvas, (1.05, 0.5), (1.05, 0.3), (1.05, 0.1), (1.05, 0.0))
    assert doc.data["bodies"][0]["position"] == [1.0, 0.1]


def test_dragging_a_wall_end_point(canvas: SceneCanvas, doc: SceneDocument) -> None:
    _add_floor(canvas)
    canvas.set_tool("select")
    _drag(canvas, (2.0, 0.0), (2.0, 0.5))
    assert doc.data["boundaries"][0]["b"] == [2.0, 0.5]
    _drag(canvas, (1.0, 0.25), (1.0, 0.35))
    assert doc.data["boundaries"][0]["a"] == [0.0, 0.1]


def test_dragging_from_the_centre_sets_the_initial_velocity(
    canvas: SceneCanvas, doc: SceneDocument
) -> None:
    canvas.set_tool("wheel")
    canvas.deliver_click((1.0, 0.5))
    canvas.set_tool("select")
    _drag(canvas, (1.0, 0.5), (1.2, 0.4), (1.5, 0.2))
    assert doc.data["bodies"][0]["velocity"] == pytest.approx([5.0, -3.0])
    assert doc.data["bodies"][0]["position"] == [1.0, 0.5]
    _drag(canvas, (1.5, 0.2), (0.8, 0.5))
    assert doc.data["bodies"][0]["velocity"] == pytest.approx([-2.0, 0.0])


def test_snapping_can_be_switched_off(canvas: SceneCanvas, doc: SceneDocument) -> None:
    assert canvas.snap((0.123, -0.26)) == (0.1, -0.25)
    canvas.snap_action.trigger()
    assert not canvas.snapping
    assert canvas.snap((0.123, -0.26)) == (0.123, -0.26)
    canvas.set_tool("wheel")
    canvas.deliver_click((0.777, 0.444))
    assert doc.data["bodies"][0]["position"] == [0.777, 0.444]


def test_tool_actions_are_exclusive_and_follow_the_view(
    canvas: SceneCanvas, doc: SceneDocument
) -> None:
    actions = {a.data(): a for a in canvas.tool_actions()}
    assert set(actions) >= {"select", "wall", "curb", "arc", "wheel", "bead", "spring", "delete"}
    actions["curb"].trigger()
    assert canvas.tool.name == "curb"
    assert [a.data() for a in canvas.tool_actions() if a.isChecked()] == ["curb"]
    assert not actions["impulse"].isEnabled()
    doc.load(SCENES_DIR / "axle_cart.json")
    assert canvas.tool.name == "select"
    assert actions["impulse"].isEnabled() and not actions["wheel"].isEnabled()


def test_impulse_tool_schedules_or_requests_an_impulse(
    qtbot, canvas: SceneCanvas, doc: SceneDocument
) -> None:
    doc.load(SCENES_DIR / "axle_cart.json")
    canvas.set_tool("impulse")
    _drag(canvas, (0.0, 0.0), (0.1, 0.1), (0.2, 0.0))
    # recorded in the cart's own axes (at 45°): S = (1, 0) is (cos 45°, -sin 45°) along (e, n)
    assert doc.data["impulses"][-1] == {
        "time": 0.0,
        "body": "cart",
        "point": [0.0, 0.0],
        "vector": [pytest.approx(math.sqrt(0.5)), pytest.approx(-math.sqrt(0.5))],
        "frame": "body",
    }
    assert canvas.hit_test((0.0, 0.0)) is not None
    canvas.set_editing_enabled(False)
    system = System(doc.scene())
    q = system.q0 + np.array([0.5, 0.0, 0.0, 0.0, 0.0])
    canvas.show_frame(_frame(system, q, 1.0), system)
    assert not canvas.deliver_press((0.0, 0.0)), "the cart has moved away"
    with qtbot.waitSignal(canvas.impulse_requested) as blocker:
        _drag(canvas, (0.5, 0.0), (0.5, -0.2))
    assert blocker.args[0] == "cart"
    assert blocker.args[1] == [0.5, 0.0]
    assert blocker.args[2] == [0.0, pytest.approx(-1.0)]
    assert len(doc.data["impulses"]) == 2


def test_editing_is_blocked_while_running(canvas: SceneCanvas, doc: SceneDocument) -> None:
    canvas.set_editing_enabled(False)
    assert not {a.data(): a for a in canvas.tool_actions()}["wheel"].isEnabled()
    canvas.set_tool("select")
    canvas.deliver_click((1.0, 0.5))
    assert not canvas.deliver_press((1.0, 0.5))
    canvas.set_editing_enabled(True)
    canvas.set_tool("wheel")
    canvas.deliver_click((1.0, 0.5))
    assert len(doc.data["bodies"]) == 1


# ------------------------------------------------------------------ animation


def _frame(system: System, q: np.ndarray, t: float, contacts=()) -> Frame:
    return Frame(t, "sample", q, system.v0, tuple(contacts), EnergyBudget(0, 0, 0, 0, 0))


@pytest.fixture
def curb_system(doc: SceneDocument) -> System:
    doc.load(SCENES_DIR / "wheel_curb_e03.json")
    return System(doc.scene())


def test_show_frame_places_the_wheel_and_turns_its_spoke(
    canvas: SceneCanvas, curb_system: System
) -> None:
    q = np.array([0.5, 0.25, 1.0])
    canvas.show_frame(_frame(curb_system, q, 0.1), curb_system)
    item = canvas.layer.bodies["wheel"]
    assert (item.pos().x(), item.pos().y()) == pytest.approx((0.5, 0.25))
    end = item.spoke_end()
    expected = (0.5 + 0.1 * math.cos(1.0), 0.25 + 0.1 * math.sin(1.0))
    assert (end.x(), end.y()) == pytest.approx(expected)
    assert canvas.animating and canvas.current_time == 0.1


def test_trails_are_bounded_and_restart_when_time_goes_back(
    canvas: SceneCanvas, curb_system: System
) -> None:
    for k in range(TRAIL_LENGTH + 50):
        q = np.array([0.8 - 1e-4 * k, 0.2, 0.0])
        canvas.show_frame(_frame(curb_system, q, 1e-3 * k), curb_system)
    trail = canvas.trail("wheel")
    assert TRAIL_LENGTH <= len(trail) <= 2 * TRAIL_LENGTH + 1  # the whole run, bounded
    assert trail[0] == pytest.approx([0.8, 0.2])
    assert trail[-1] == pytest.approx([0.8 - 1e-4 * (TRAIL_LENGTH + 49), 0.2])
    canvas.show_frame(_frame(curb_system, curb_system.q0, 0.0), curb_system)
    assert len(canvas.trail("wheel")) == 1


def test_contact_forces_are_drawn_to_scale_with_a_legend(
    canvas: SceneCanvas, curb_system: System
) -> None:
    contact = ContactState(
        "wheel",
        "curb#s3",
        lam=98.1,
        tau=0.5,
        u_n=0.0,
        u_t=-0.2,
        mode="slip-",
        point=(0.7, 0.0),
        normal=(0.0, 1.0),
        friction=0.4,
    )
    q = np.array([0.7, 0.1, 0.0])
    canvas.show_frame(_frame(curb_system, q, 0.2, [contact]), curb_system)
    arrows = canvas.force_arrows
    scale = canvas.force_scale()
    assert "10 cm = 100 N" in canvas.legend.text()
    normal, friction = arrows
    assert normal[:4] == pytest.approx((0.7, 0.0, 0.7, 98.1 * scale))
    assert friction[:4] == pytest.approx((0.7, 0.0, 0.7 - 0.4 * 98.1 * 0.5 * scale, 0.0))


def test_impacts_flash_and_clear_animation_returns_to_the_editor(
    qtbot, canvas: SceneCanvas, doc: SceneDocument, curb_system: System
) -> None:
    q = np.array([0.5, 0.1, 0.0])
    impact = Event(0.03, "impact", "wheel", "curb#s3", normal_impulse=30.0)
    canvas.show_frame(_frame(curb_system, q, 0.03), curb_system, [impact])
    assert canvas.flashing
    qtbot.waitUntil(lambda: not canvas.flashing, timeout=2000)
    canvas.clear_animation()
    assert not canvas.animating and canvas.legend.isHidden()
    item = canvas.layer.bodies["wheel"]
    assert (item.pos().x(), item.pos().y()) == (0.8, 0.2)


def test_export_png_writes_the_picture(
    canvas: SceneCanvas, curb_system: System, tmp_path: Path
) -> None:
    canvas.show_frame(_frame(curb_system, curb_system.q0, 0.0), curb_system)
    target = tmp_path / "canvas.png"
    assert canvas.export_png(target)
    image = QImage(str(target))
    assert image.width() == 800
    colours = {image.pixel(x, y) for x in range(0, 800, 9) for y in range(0, 600, 9)}
    assert len(colours) > 10


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["bodies"][0].__setitem__("velocity", "fast"),
        lambda d: d["bodies"][0].__setitem__("radius", -1e308),
        lambda d: d["boundaries"][0].__setitem__("a", [float("nan"), 0.0]),
        lambda d: d["boundaries"].append(
            {"id": "p", "type": "polyline", "points": [[0, "a"], [1, 1]]}
        ),
        lambda d: d["springs"].append({"a": "ball", "anchor": ["x", None], "stiffness": 1}),
    ],
)
def test_unreadable_values_are_drawn_around_and_the_view_still_fits(
    qtbot, canvas: SceneCanvas, doc: SceneDocument, edit
) -> None:
    data = json.loads((SCENES_DIR / "bouncing_ball.json").read_text())
    edit(data)
    doc.restore(data)  # as a recovered scene: kept exactly, its problems listed
    assert doc.problems()
    canvas.fit_view()
    (x0, x1), (y0, y1) = canvas.view.viewRange()
    assert all(math.isfinite(v) for v in (x0, x1, y0, y1))
    canvas.clear_animation()  # redraws the editable scene
