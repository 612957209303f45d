"""The batched drawing paths of the canvas and the frame-skipping playback clock.

Behaviour only: speed is measured by ``bench/gui.py``, never asserted here.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QGraphicsItem

from impactgui.canvas import LABELLED_BODIES_MAX, TRAIL_POINT_BUDGET, SceneCanvas
from impactgui.document import SceneDocument
from impactgui.playback import PlaybackClock
from impactgui.plots import _StemTips
from impactgui.scene_items import (
    BEAD_COLOUR,
    FLASHES_MAX,
    SELECTION_COLOUR,
    ArrowField,
    BeadDrawing,
    BeadField,
    DiskItem,
    FlashField,
    TrailField,
)
from solver.frames import EnergyBudget, Event, Frame, StepOutput
from solver.record import Trajectory
from solver.system import System

N_BEADS = 60


def bead_chain(n: int) -> dict:
    """``n`` touching-distance beads on one rail between two walls."""
    pitch = 0.025
    beads = [
        {"id": f"b{k}", "type": "bead", "rail_y": 0.0, "mass": 1.0, "radius": 0.01, "x": k * pitch}
        for k in range(n)
    ]
    walls = [
        {"id": "left", "type": "segment", "a": [-pitch, -0.1], "b": [-pitch, 0.1]},
        {"id": "right", "type": "segment", "a": [n * pitch, -0.1], "b": [n * pitch, 0.1]},
    ]
    return {
        "format": "impactgui-scene",
        "version": 1,
        "gravity": [0.0, 0.0],
        "boundaries": walls,
        "bodies": beads,
    }


@pytest.fixture
def canvas(qtbot) -> Iterator[SceneCanvas]:
    """A shown canvas on a chain of ``N_BEADS`` beads."""
    doc = SceneDocument()
    doc.set_data(bead_chain(N_BEADS))
    widget = SceneCanvas(doc)
    qtbot.addWidget(widget)
    widget.resize(800, 600)
    widget.show()
    qtbot.waitExposed(widget)
    widget.fit_view()
    yield widget
    widget.clear_animation()


def _frame(system: System, t: float, shift: float) -> Frame:
    q = system.q0 + shift * np.arange(system.N)
    return Frame(t, "sample", q, system.v0, (), EnergyBudget(0, 0, 0, 0, 0))


def _item_count(canvas: SceneCanvas) -> int:
    return len(canvas.view.childGroup.childItems())


def test_frames_move_the_bodies_without_creating_items(canvas: SceneCanvas) -> None:
    system = System(canvas.document.scene())
    canvas.show_frame(_frame(system, 0.0, 0.0), system)
    items = _item_count(canvas)
    for k in range(1, 30):
        canvas.show_frame(_frame(system, 1e-3 * k, 1e-4 * k), system)
    assert _item_count(canvas) == items
    last = canvas.layer.bodies[f"b{N_BEADS - 1}"]
    assert last.pos().x() == pytest.approx(system.q0[-1] + 29e-4 * (N_BEADS - 1))
    assert canvas.trail("b1")[-1] == pytest.approx([system.q0[1] + 29e-4, 0.0])
    trails = [item for item in canvas.view.childGroup.childItems() if isinstance(item, TrailField)]
    assert len(trails) == 1, "one trail item for all bodies"


def test_many_bodies_share_the_trail_budget_and_run_without_labels(
    canvas: SceneCanvas,
) -> None:
    system = System(canvas.document.scene())
    length = TRAIL_POINT_BUDGET // N_BEADS
    for k in range(length + 20):
        canvas.show_frame(_frame(system, 1e-3 * k, 1e-5 * k), system)
    assert length <= len(canvas.trail("b0")) <= 2 * length + 1  # the whole run, bounded
    assert N_BEADS > LABELLED_BODIES_MAX
    assert not any(label.isVisible() for label in canvas.layer._labels.values())
    canvas.clear_animation()
    assert all(label.isVisible() for label in canvas.layer._labels.values())


def test_trail_drawing_leaves_out_bodies_at_rest(qtbot) -> None:
    trails = TrailField()
    trails.start(3, 10)
    for k in range(5):
        trails.append(np.array([[0.0, 0.0], [0.1 * k, 0.0], [1.0, 0.2 * k]]))
    xs, _ = trails.getData()
    assert len(xs) == 1 + 5 + 5, "the resting body is one point, the others five each"
    assert len(trails.trail(0)) == 5
    trails.clear_trails()
    assert len(trails.trail(2)) == 0


def test_beads_on_one_rail_share_one_rail_line(canvas: SceneCanvas) -> None:
    rails = [i for i in canvas.view.childGroup.childItems() if isinstance(i, pg.InfiniteLine)]
    assert len(rails) == 1


def test_arrow_field_draws_many_arrows_in_every_colour(qtbot) -> None:
    red, blue = QColor("#ff0000"), QColor("#0000ff")
    widget = pg.PlotWidget(background="w")
    qtbot.addWidget(widget)
    field = ArrowField()
    widget.getViewBox().addItem(field)
    widget.getViewBox().setRange(xRange=(0, 10), yRange=(0, 10), padding=0)
    arrows = [(0.5 + 0.2 * k, 1.0, 0.5 + 0.2 * k, 4.0, red if k % 2 else blue) for k in range(40)]
    field.set_arrows([*arrows, (5.0, 5.0, 5.0, 5.0, red)])
    assert field.arrows[:40] == arrows
    widget.resize(400, 400)
    widget.show()
    qtbot.waitExposed(widget)
    image = widget.grab().toImage()
    colours = {image.pixelColor(x, y).name() for x in range(0, 400, 2) for y in range(0, 400, 2)}
    assert {"#ff0000", "#0000ff"} <= colours


def test_the_clock_draws_only_the_newest_frame_due(qtbot) -> None:
    trajectory = Trajectory()
    frames = [
        Frame(
            1e-3 * k, "sample", np.array([1e-3 * k]), np.zeros(1), (), EnergyBudget(0, 0, 0, 0, 0)
        )
        for k in range(1000)
    ]
    impacts = [Event(0.1 * k, "impact", "b0", "wall") for k in range(1, 5)]
    trajectory.append(StepOutput(frames=frames, events=impacts))
    clock = PlaybackClock()
    shown: list[tuple[Frame, tuple[Event, ...]]] = []
    clock.frame_shown.connect(lambda frame, events: shown.append((frame, events)))
    clock.set_trajectory(trajectory)
    clock.play()
    clock.pause()
    clock._playing = True  # tick by hand, as the timer would after a 0.45 s stall
    clock._last_tick = time.monotonic() - 0.45
    clock._on_tick()
    assert len(shown) == 2, "the first frame, then one frame for the whole stall"
    frame, events = shown[-1]
    assert 0.45 <= frame.t < 0.6
    assert [event.t for event in events] == pytest.approx([0.1, 0.2, 0.3, 0.4])


def test_only_the_newest_flashes_are_kept(qtbot) -> None:
    flashes = FlashField()
    for k in range(3 * FLASHES_MAX):
        flashes.add(0.01 * k, 0.0)
    assert len(flashes._flashes) == FLASHES_MAX
    assert flashes._flashes[0][0] == pytest.approx(0.01 * 2 * FLASHES_MAX)  # the oldest kept


def _bead_fields(canvas: SceneCanvas) -> list[BeadField]:
    return [item for item in canvas.view.childGroup.childItems() if isinstance(item, BeadField)]


def _shown_image(canvas: SceneCanvas) -> QImage:
    return canvas.plot.grab().toImage()


def _pixel_of(canvas: SceneCanvas, x: float, y: float) -> tuple[int, int]:
    point = canvas.plot.mapFromScene(canvas.view.mapViewToScene(QPointF(x, y)))
    return point.x(), point.y()


def _near(image: QImage, x: int, y: int, colour: QColor, reach: int = 2) -> bool:
    """True when a pixel within ``reach`` px of (x, y) has ``colour`` (to a few levels)."""
    return any(
        max(
            abs(image.pixelColor(x + dx, y + dy).red() - colour.red()),
            abs(image.pixelColor(x + dx, y + dy).green() - colour.green()),
            abs(image.pixelColor(x + dx, y + dy).blue() - colour.blue()),
        )
        < 40
        for dx in range(-reach, reach + 1)
        for dy in range(-reach, reach + 1)
    )


def _zoom_on_the_first_ten(qtbot, canvas: SceneCanvas) -> None:
    canvas.view.setRange(xRange=(-0.0125, 10 * 0.025 - 0.0125), yRange=(-0.1, 0.1), padding=0)
    qtbot.wait(50)


def test_every_bead_is_drawn_by_one_item(qtbot, canvas: SceneCanvas) -> None:
    # issue 10 bug 6: one Qt item per bead made each paint of 2000 beads cost about 58 ms
    fields = _bead_fields(canvas)
    assert len(fields) == 1 and fields[0].count == N_BEADS
    assert not any(isinstance(item, DiskItem) for item in canvas.view.childGroup.childItems())
    system = System(canvas.document.scene())
    canvas.show_frame(_frame(system, 0.0, 0.0), system)  # a run hides the editing handles
    qtbot.wait(50)
    image = _shown_image(canvas)
    for k in range(N_BEADS):
        assert _near(image, *_pixel_of(canvas, k * 0.025, 0.0), BEAD_COLOUR), f"b{k} drawn"
    assert not _near(image, *_pixel_of(canvas, 0.0, 0.05), BEAD_COLOUR)  # 5 radii above b0


def test_beads_off_screen_are_not_stamped(qtbot, canvas: SceneCanvas) -> None:
    # issue 10 bug 6: the cost of a frame must not grow with what is off-screen
    _zoom_on_the_first_ten(qtbot, canvas)
    field = _bead_fields(canvas)[0]
    width, height = canvas.plot.viewport().width(), canvas.plot.viewport().height()
    transform = field.deviceTransform(canvas.plot.viewportTransform())
    looks = field.stamps(transform, width, height)
    stamped = np.concatenate([xs for _, _, xs, _ in looks])
    assert 10 <= len(stamped) <= 11, "the ten beads in view, and at most one just past its edge"
    radius_px = 0.01 / canvas.pixel_size()
    assert np.all((stamped >= -radius_px - 10) & (stamped <= width + radius_px + 10))


def test_a_click_selects_the_bead_under_it_and_draws_it_selected(
    qtbot, canvas: SceneCanvas
) -> None:
    _zoom_on_the_first_ten(qtbot, canvas)
    k = 3
    canvas.set_tool("select")
    click = QPoint(*_pixel_of(canvas, k * 0.025 + 0.006, 0.002))  # inside b3, off its centre
    qtbot.mouseClick(canvas.plot.viewport(), Qt.MouseButton.LeftButton, pos=click)
    qtbot.waitUntil(lambda: canvas.document.selection == ("bodies", k), timeout=2000)
    bead = canvas.layer.bodies[f"b{k}"]
    assert isinstance(bead, BeadDrawing) and bead.selected
    assert [b for b, item in canvas.layer.bodies.items() if item.selected] == [f"b{k}"]
    qtbot.wait(50)
    image = _shown_image(canvas)
    for index, colour, other in (
        (k, SELECTION_COLOUR, BEAD_COLOUR),
        (k + 2, BEAD_COLOUR, SELECTION_COLOUR),
    ):
        x, y = _pixel_of(canvas, index * 0.025, 0.01)  # the top of the bead's rim
        assert _near(image, x, y, colour) and not _near(image, x, y, other)


def _body_items(canvas: SceneCanvas) -> dict[str, QGraphicsItem]:
    return dict(canvas.layer.bodies)


def test_selecting_or_editing_one_bead_remakes_only_its_items(canvas: SceneCanvas) -> None:
    # issue 10 bug 6: with 2000 beads one selection or edit re-made every item (≈ 2 s)
    from impactgui.commands import SetProperty

    before = _body_items(canvas)
    items = _item_count(canvas)
    canvas.document.select(("bodies", 7))
    after = _body_items(canvas)
    assert after["b7"] is not before["b7"] and after["b7"].selected
    assert all(after[k] is before[k] for k in before if k != "b7")
    canvas.document.push(SetProperty(canvas.document, ("bodies", 9, "x"), 9 * 0.025 + 0.002))
    edited = _body_items(canvas)
    assert edited["b9"] is not after["b9"]
    assert edited["b9"].pos().x() == pytest.approx(9 * 0.025 + 0.002)
    assert all(edited[k] is after[k] for k in after if k != "b9")
    assert _item_count(canvas) == items
    canvas.document.undo_stack.undo()
    assert canvas.layer.bodies["b9"].pos().x() == pytest.approx(9 * 0.025)


def test_after_a_run_the_kept_items_go_back_to_the_scene(canvas: SceneCanvas) -> None:
    system = System(canvas.document.scene())
    before = _body_items(canvas)
    canvas.show_frame(_frame(system, 0.5, 1e-3), system)
    assert canvas.layer.bodies["b5"].pos().x() != pytest.approx(5 * 0.025)
    canvas.clear_animation()
    assert all(canvas.layer.bodies[k] is before[k] for k in before), "no item re-made"
    for k in range(N_BEADS):
        assert canvas.layer.bodies[f"b{k}"].pos().x() == pytest.approx(k * 0.025)


def test_selecting_validates_nothing_and_an_edit_validates_once(
    canvas: SceneCanvas, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 10 bug 6: each selection re-validated (and deep-copied) every bead of the scene
    from impactgui import document as document_module
    from impactgui.commands import SetProperty
    from impactgui.properties import PropertyPanel

    calls = []
    validate = document_module.validated_scene
    monkeypatch.setattr(
        document_module, "validated_scene", lambda data: calls.append(1) or validate(data)
    )
    panel = PropertyPanel(canvas.document)
    before = len(calls)
    for index in (3, 4, 5):
        canvas.document.select(("bodies", index))
    assert len(calls) == before
    canvas.document.push(SetProperty(canvas.document, ("bodies", 4, "mass"), 2.0))
    assert len(calls) == before + 1
    assert canvas.document.problems() == []
    panel.deleteLater()


def test_stem_tips_remember_their_bounds_until_the_data_or_zoom_change(qtbot) -> None:
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    tips = _StemTips(size=6)
    widget.addItem(tips)
    widget.setRange(xRange=(0, 10), yRange=(0, 10), padding=0)
    tips.set_tips(0, QColor("red"), np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    first = tips.boundingRect()
    assert first.contains(QPointF(1.0, 1.0)) and first.contains(QPointF(2.0, 2.0))
    assert tips.boundingRect() is first, "asked again: the same rectangle, not worked out anew"
    tips.set_tips(0, QColor("red"), np.array([1.0, 8.0]), np.array([1.0, 9.0]))
    assert tips.boundingRect().contains(QPointF(8.0, 9.0))
    widget.setRange(xRange=(0, 100), yRange=(0, 100), padding=0)
    widget.resize(300, 300)
    qtbot.wait(20)
    zoomed = tips.boundingRect()
    assert zoomed.contains(QPointF(8.0, 9.0))
    pad = zoomed.right() - 8.0  # half a 6 px dot, in data units of the wider view
    assert pad > 0
