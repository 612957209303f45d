"""The 2000-bead spring chain's first frame: springs seen from afar, the run drawn before it.

The first frame stalled the window about 105 ms (``_start_animation``'s
layer build and frame layout, then a paint of 40 000 spring segments with
round caps). The springs are now drawn straight when their coils are under
a pixel wide, and the canvas draws the run as soon as it is prepared. Speed
is measured by ``bench/gui.py``; these tests check what is drawn.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QImage

from impactgui.scene_items import SPRING_COLOUR
from impactgui.spring_field import SpringCurve
from solver.scene import scene_to_dict
from solver.system import System
from tests.scene_data import spring_chain


def _pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    data = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), -1, 4)
    return data[:, : image.width(), 2::-1].astype(int)  # BGRA → RGB


def _spring_rows(canvas) -> np.ndarray:
    """Per row of the canvas's plot: how many pixels have the spring colour."""
    rgb = _pixels(canvas.plot.grab().toImage())
    colour = np.array([SPRING_COLOUR.red(), SPRING_COLOUR.green(), SPRING_COLOUR.blue()])
    return (np.abs(rgb - colour).sum(axis=2) < 40).sum(axis=1)


def _spring_curve(canvas) -> SpringCurve:
    (curve,) = [i for i in canvas.view.addedItems if isinstance(i, SpringCurve)]
    return curve


def test_springs_seen_from_afar_are_straight_and_up_close_zig_zag(qtbot, window) -> None:
    # two beads 50 m apart (radius 0.05 m): the spring between them has coils 0.03 m wide
    window.doc.set_data(scene_to_dict(spring_chain(2, t_end=1.0, gap=49.9)))
    canvas = window.canvas
    canvas.view.setRange(xRange=(-5.0, 55.0), yRange=(-5.0, 5.0), padding=0)
    qtbot.wait(50)
    curve = _spring_curve(canvas)
    assert curve.drawn_straight(), "a pixel is about 0.15 m: coils 0.03 m wide cannot be seen"
    rows = _spring_rows(canvas)
    assert rows.max() > 0.6 * canvas.plot.width(), "the spring is drawn along the rail"
    assert np.count_nonzero(rows > 20) <= 3, "a straight line: two or three pixel rows"
    # the zig-zags stay the data of the curve (hit tests, the selected spring)
    _, ys = curve.getData()
    assert np.nanmax(ys) == pytest.approx(0.015)
    # zoomed in on the anchor's spring (5 coils 0.03 m wide over 0.15 m): tens of pixels wide
    canvas.view.setRange(xRange=(-0.25, 0.05), yRange=(-0.05, 0.05), padding=0)
    qtbot.wait(50)
    assert not curve.drawn_straight()
    rows = _spring_rows(canvas)
    assert np.count_nonzero(rows) > 20, "the zig-zags span many pixel rows"


def test_the_run_is_drawn_from_the_prepared_system_before_any_frame(qtbot, window) -> None:
    scene = spring_chain(50, t_end=1.0)
    window.doc.set_data(scene_to_dict(scene))
    canvas = window.canvas
    assert not canvas.animating
    system = System(scene)
    canvas.start_run(system)
    assert canvas.animating
    # no frame yet: the beads stay where the scene has them, the springs between them
    centres = canvas.layer.centres()
    assert centres["c0b7"] == pytest.approx((7 * 0.2, 0.0))
    xs, _ = canvas.layer.springs[7].getData()
    assert (xs.min(), xs.max()) == pytest.approx((6 * 0.2 + 0.05, 7 * 0.2 - 0.05))
    layout_before = canvas._layout
    canvas.start_run(system)  # the same run: kept
    assert canvas._layout is layout_before
