"""Every value axis of the stacked plots is legible: tick labels and axis labels never overlap.

Issue 25 item 6: in presentation mode (a 1440 x 810 screen, docs/screenshots/
presentation_honest.png) the λ and τ plots were about 50 px tall and pyqtgraph
labelled every major tick, at least 2.25 intervals of them whatever the axis's
length: "1.0 0.8 0.6 0.4 0.2 0" stood on top of each other; the impulse plot's
rotated label, longer than its plot, ran into the jump plot's ("impulse (N·s)Δv (m/s)").
"""

from __future__ import annotations

import itertools

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from impactgui.legible_axis import (
    full_line,
    label_forms,
    legible_axes,
    nice_at_least,
    nice_below,
)
from tests.gui.conftest import run_to_end, scene_path
from tests.gui.test_legend_room import bead_chain


def tick_lines(axis: pg.AxisItem) -> list[tuple[str, QRectF]]:
    """The tick labels ``axis`` draws, each as a whole line of its text in scene coordinates.

    pyqtgraph's own rectangles are 0.8 of the text's line: two labels whose lines touch are
    drawn touching (a line holds the digits and the gaps above and below them).
    """
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    if axis.style["tickFont"] is not None:
        painter.setFont(axis.style["tickFont"])
    _axis, _ticks, texts = axis.generateDrawSpecs(painter)
    painter.end()
    lines = []
    for rect, _flags, text in texts:
        height = rect.height() / 0.8
        line = QRectF(rect.left(), rect.center().y() - height / 2, rect.width(), height)
        lines.append((text, axis.mapRectToScene(line)))
    return lines


def label_rect(axis: pg.AxisItem) -> QRectF:
    """The axis label's rectangle in scene coordinates (it is drawn turned by 90°)."""
    return axis.label.mapRectToScene(axis.label.boundingRect())


def assert_legible(plots: list[pg.PlotItem]) -> None:
    """No two tick labels of the plots' left axes overlap, nor two axis labels; each axis
    label lies within its own axis's length; every axis with room for a label shows one."""
    ticks = []
    for plot in plots:
        lines = tick_lines(plot.getAxis("left"))
        assert lines, f"{plot.titleLabel.text}: no tick label at all"
        ticks += [(plot.titleLabel.text, text, line) for text, line in lines]
    for (plot_a, a, line_a), (plot_b, b, line_b) in itertools.combinations(ticks, 2):
        overlap = line_a.intersected(line_b)
        assert overlap.height() <= 0.5 or overlap.width() <= 0.5, (
            f"tick labels {a!r} ({plot_a}) and {b!r} ({plot_b}) overlap: {line_a}, {line_b}"
        )
    labels = []
    for plot in plots:
        axis = plot.getAxis("left")
        shown = axis.label.toPlainText().strip()
        if not shown:
            continue
        rect, extent = label_rect(axis), axis.sceneBoundingRect()
        # pyqtgraph places it at whole pixels: a pixel of rounding either way
        assert rect.top() >= extent.top() - 1 and rect.bottom() <= extent.bottom() + 1, (
            f"{plot.titleLabel.text}: axis label {shown!r} {rect} beyond its axis {extent}"
        )
        labels.append((plot.titleLabel.text, shown, rect))
    for (plot_a, a, rect_a), (plot_b, b, rect_b) in itertools.combinations(labels, 2):
        assert not rect_a.intersects(rect_b), f"axis labels {a!r} ({plot_a}) and {b!r} ({plot_b})"


def test_nice_spacings_and_label_forms() -> None:
    assert [nice_at_least(v) for v in (0.3, 0.2, 0.21, 7.0, 10.0, 0.0049)] == [
        0.5,
        0.2,
        0.5,
        10.0,
        10.0,
        0.005,
    ]
    assert [nice_below(v) for v in (1.0, 2.0, 5.0, 0.05, 200.0)] == pytest.approx(
        [0.5, 1.0, 2.0, 0.02, 100.0]
    )
    assert label_forms("impulse (N·s)") == ["impulse (N·s)", "N·s", ""]
    assert label_forms("τ") == ["τ", ""]
    # a tick label's rectangle from pyqtgraph (0.8 of a line) grows about its centre
    line = full_line(QRectF(0.0, 10.0, 20.0, 16.0))
    assert (line.top(), line.height()) == pytest.approx((8.0, 20.0))


def test_presentation_plots_have_legible_axes(qtbot, window) -> None:
    # the paper-004 wheel at t = 0.3 s, presented: docs/screenshots/presentation_honest.png
    assert window.open_preset(scene_path("wheel_curb_e03"))
    window.playback_bar.set_speed(float("inf"))
    run_to_end(qtbot, window)
    window.presentation_action.trigger()
    qtbot.waitUntil(lambda: window.presentation.enabled)
    window.clock.pause()
    window.clock.seek(0.3)
    qtbot.wait(300)  # honesty's refit (100 ms) and the layout after going full screen
    shown = [plot for plot in window.plots.plots if plot.isVisible()]
    assert len(shown) == 5
    # the short plots the issue saw: under 60 px for text 2x the size
    assert min(plot.vb.height() for plot in shown) < 60
    assert_legible(shown)
    window.presentation.set_enabled(False)


def test_a_short_window_of_many_legend_entries_has_legible_axes_and_legends(qtbot, window) -> None:
    # a 30-bead chain in a 1400 x 700 window: five plots of about 60 px in normal mode
    window.resize(1400, 700)
    window.doc.set_data(bead_chain(30))
    panel = window.plots
    assert window.start_run()
    qtbot.waitUntil(lambda: len(panel.jump_plot.legend.items) >= 8, timeout=30000)
    window.pause_run()
    qtbot.wait(300)
    assert_legible(list(panel.plots))
    # every legend whole inside the panel (the energy's in three columns, 318 px, stood
    # beyond the 520 px panel's right edge: "spring" and "total" cut), none over another
    view = panel.graphics.viewport().rect()
    boxes = []
    for plot in panel.plots:
        legend = plot.legend
        # what it draws: its entries may stand beyond the geometry the layout gave it
        drawn = legend.boundingRect() | legend.childrenBoundingRect()
        box = legend.mapRectToScene(drawn)
        shown = panel.graphics.mapFromScene(box).boundingRect()
        assert view.contains(shown), f"{plot.titleLabel.text}: legend {shown} beyond {view}"
        boxes.append(box)
    for a, b in itertools.combinations(boxes, 2):
        overlap = a.intersected(b)
        assert overlap.height() <= 0.5 or overlap.width() <= 0.5, (a, b)
    window.reset_run()


def test_a_label_changed_without_a_resize_is_centred_on_its_axis(qtbot) -> None:
    # pyqtgraph places an axis label only when its axis is resized: a longer text set
    # later started where the shorter one had, 84 px off centre here, past its axis's end
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    widget.resize(400, 300)
    widget.show()
    qtbot.waitExposed(widget)
    axis = widget.addPlot(row=0, col=0, axisItems=legible_axes()).getAxis("left")
    axis.setLabel("E (J)", color="k")
    qtbot.wait(50)
    axis.setLabel("a much longer label (m/s, rad/s)", color="k")
    assert axis.shown_label() == "a much longer label (m/s, rad/s)"
    rect, extent = label_rect(axis), axis.sceneBoundingRect()
    assert abs(rect.center().y() - extent.center().y()) <= 1.0
    assert extent.top() - 1 <= rect.top() and rect.bottom() <= extent.bottom() + 1
