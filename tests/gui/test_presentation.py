"""Presentation mode and playback honesty, with real widgets and pixels."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from impactgui import scene_items
from impactgui.image_export import image_array, render_widget
from impactgui.plots import ENERGY_TERMS, LEGEND_TEXT_SIZE
from impactgui.presentation import CONTRAST_LIGHTNESS, SCALE_RANGE, ScaleDialog, contrast_colour
from tests.gui.conftest import run_to_end, scene_path


@pytest.fixture
def presenting(qtbot, window):
    """The window after a finished wheel run, in presentation mode (turned off after)."""
    assert window.open_file(scene_path("wheel_curb_e03"))
    run_to_end(qtbot, window)
    base = QApplication.font().pointSizeF()
    # scale 2 chosen: these tests check what the scale does; the one the screen gives until a
    # scale is chosen (1.5 on the offscreen 800 x 800 screen) is checked on its own
    window.presentation.set_scale(2.0)
    window.presentation_action.trigger()
    qtbot.waitUntil(lambda: window.presentation.enabled)
    # going full screen refits the legends' columns (plots.legend_columns), laid out by the
    # layout at its next activation: until then a refilled legend stands at the origin
    shown = [plot for plot in window.plots.plots if plot.isVisible()]
    qtbot.waitUntil(lambda: all(p.legend.sceneBoundingRect().left() > 0 for p in shown))
    yield window, base
    window.presentation.set_enabled(False)


def test_presentation_scales_fonts_lines_and_goes_full_screen(presenting) -> None:
    window, base = presenting
    scale = window.presentation.scale
    assert scale == 2.0
    assert QApplication.font().pointSizeF() == pytest.approx(2 * base)
    assert scene_items.line_scale() == 2.0
    assert window.isFullScreen()
    assert not window.properties_dock.isVisible()
    total = window.plots.energy_curves["total"]
    assert total.opts["pen"].widthF() == pytest.approx(4.0)  # made 2 px wide
    assert window.plots.energy_plot.titleLabel.opts["size"] == "18pt"
    assert window.presentation_action.isChecked()
    assert window.honesty.enabled and window.honesty_action.isChecked()


def test_legends_sit_beside_the_plots_not_over_the_curves(presenting) -> None:
    window, _base = presenting
    plots = window.plots
    styler = window.presentation.styler
    energy = plots.energy_plot
    assert styler.legend_texts(energy) == [name for name, _colour in ENERGY_TERMS]
    legend = styler.outside_legend(energy)
    view = energy.vb.sceneBoundingRect()
    assert not legend.sceneBoundingRect().intersects(view)
    assert legend.sceneBoundingRect().left() >= view.right()
    assert legend is energy.legend  # the plot's own legend, beside it in every mode
    # the legends share one column of the layout: the plots line up under one time axis
    lefts = {round(p.legend.sceneBoundingRect().left()) for p in plots.plots if p.isVisible()}
    rights = {round(p.vb.sceneBoundingRect().right()) for p in plots.plots if p.isVisible()}
    assert len(lefts) == 1 and len(rights) == 1


def test_event_log_cells_are_never_cut_short(presenting) -> None:
    window, _base = presenting
    log = window.event_log
    window.honesty.set_enabled(False)  # every event listed
    log.flush()
    assert log.textElideMode() == Qt.TextElideMode.ElideNone
    model = log.model()
    metrics = log.fontMetrics()
    assert model.rowCount() >= 4
    for row in range(model.rowCount()):
        log.scrollTo(model.index(row, 0))  # columns fit the rows in view
        for column in range(model.columnCount() - 1):  # the last column stretches
            text = model.data(model.index(row, column)) or ""
            assert metrics.horizontalAdvance(text) <= log.columnWidth(column), (row, column)
    assert log.verticalHeader().defaultSectionSize() >= metrics.height()


def test_scale_is_adjustable_within_its_range(presenting) -> None:
    window, base = presenting
    window.presentation.set_scale(1.5)
    assert QApplication.font().pointSizeF() == pytest.approx(1.5 * base)
    assert window.plots.energy_curves["total"].opts["pen"].widthF() == pytest.approx(3.0)
    window.presentation.set_scale(9.0)
    assert window.presentation.scale == SCALE_RANGE[1]
    window.presentation.set_scale(0.1)
    assert window.presentation.scale == SCALE_RANGE[0]


def test_turning_it_off_restores_everything(qtbot, presenting) -> None:
    window, base = presenting
    window.presentation_action.trigger()
    assert not window.presentation.enabled
    assert QApplication.font().pointSizeF() == pytest.approx(base)
    assert scene_items.line_scale() == 1.0
    assert not window.isFullScreen()
    assert window.properties_dock.isVisible()
    assert window.plots.energy_curves["total"].opts["pen"].widthF() == pytest.approx(2.0)
    assert window.plots.energy_curves["total"].opts["pen"].color() == QColor("#000000")
    assert window.plots.energy_plot.legend.isVisible()
    assert window.presentation.styler.outside_legend(window.plots.energy_plot) is None
    assert window.plots.energy_plot.legend.opts["labelTextSize"] == LEGEND_TEXT_SIZE
    assert not window.honesty.enabled and not window.honesty_action.isChecked()


def test_curves_of_a_new_run_are_styled_too(qtbot, presenting) -> None:
    window, _base = presenting
    window.reset_run()
    assert window.open_file(scene_path("newton_cradle_3_staged"))
    run_to_end(qtbot, window)
    window.presentation.restyle_plots()
    jumps = [item for item in window.plots.jump_plot.listDataItems() if item.name()]
    assert jumps and all(item.opts["pen"].widthF() == pytest.approx(3.0) for item in jumps)
    assert window.plots.jump_plot.titleLabel.opts["size"] == "18pt"
    # the curtains of playback honesty stay on the plots of the new run
    window.clock.pause()
    window.clock.seek(0.5)
    for curtain in window.honesty.curtains:
        assert curtain.scene() is curtain.plot.scene()
        assert curtain.rect().left() == pytest.approx(0.5, abs=0.02)
    assert window.event_log.model().rowCount() == _events_until(window, 0.5)


def test_contrast_colours_are_dark_with_the_same_hue() -> None:
    for name in ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#ffff00"):
        colour = QColor(name)
        dark = contrast_colour(colour)
        assert dark.lightnessF() <= CONTRAST_LIGHTNESS + 1e-3
        assert abs(dark.hslHueF() - colour.hslHueF()) < 2e-3


# ------------------------------------------------------------------- honesty


def _events_until(window, t: float) -> int:
    return sum(event.t <= t for event in window.runner.trajectory.events)


def test_honest_event_log_lists_only_what_happened_by_the_playback_time(qtbot, window) -> None:
    assert window.open_file(scene_path("wheel_curb_e03"))
    run_to_end(qtbot, window)
    window.event_log.flush()
    total = window.event_log.table_model.rowCount()
    window.honesty_action.trigger()
    assert window.honesty.enabled
    window.clock.pause()
    for t in (0.0, 0.05, 0.1, 0.3, 0.6, 1.0):
        window.clock.seek(t)
        shown = window.event_log.model().rowCount()
        assert shown == _events_until(window, t)
    assert _events_until(window, 0.05) < _events_until(window, 0.6) <= total
    # clicking a shown row still seeks to its event
    window.clock.seek(1.0)
    index = window.event_log.model().index(1, 0)
    window.event_log.clicked.emit(index)
    assert window.clock.time == pytest.approx(window.runner.trajectory.events[1].t)
    window.honesty_action.trigger()
    assert window.event_log.model().rowCount() == total


def test_honest_plots_show_nothing_right_of_the_playback_time(qtbot, window) -> None:
    assert window.open_file(scene_path("wheel_curb_e03"))
    run_to_end(qtbot, window)
    window.set_honest(True)
    window.clock.pause()
    window.clock.seek(0.3)
    plot = window.plots.energy_plot
    graphics = window.plots.graphics
    image = image_array(render_widget(graphics, 1.0))
    view = plot.vb
    # pixel columns (in the panel) of t = 0.35 s and of the view's right edge
    left = graphics.mapFromScene(view.mapViewToScene(QPointF(0.35, 0.0))).x()
    right = graphics.mapFromScene(view.sceneBoundingRect().topRight().toPoint()).x()
    top = graphics.mapFromScene(view.sceneBoundingRect().topLeft().toPoint()).y()
    bottom = graphics.mapFromScene(view.sceneBoundingRect().bottomLeft().toPoint()).y()
    legend = graphics.mapFromScene(plot.legend.sceneBoundingRect()).boundingRect()
    image[legend.top() : legend.bottom() + 1, legend.left() : legend.right() + 1] = 255
    # the legend and the time axis's tick marks are drawn over the view
    covered = image[top + 2 : bottom - 10, left : right - 2]
    assert covered.size > 0
    assert np.all(covered == 255)  # white: no curve, no grid
    # and left of the time the curves are there
    shown = image[top + 2 : bottom - 2, graphics.mapFromScene(
        view.mapViewToScene(QPointF(0.02, 0.0))).x() : left - 30]  # fmt: skip
    assert np.any(shown < 200)
    window.set_honest(False)
    image = image_array(render_widget(graphics, 1.0))
    assert np.any(image[top + 2 : bottom - 2, left : right - 2] < 200)


def test_the_scale_slider_sets_the_scale_live(qtbot, presenting) -> None:
    window, base = presenting
    window.presentation_scale_action.trigger()
    dialog = window.findChild(ScaleDialog)
    assert dialog is not None and dialog.slider.value() == pytest.approx(2.0)
    dialog.slider.setValue(2.5)
    assert window.presentation.scale == pytest.approx(2.5)
    assert QApplication.font().pointSizeF() == pytest.approx(2.5 * base)
    assert window.plots.energy_curves["total"].opts["pen"].widthF() == pytest.approx(5.0)
    dialog.close()


def test_canvas_lines_widen_and_come_back(qtbot, presenting) -> None:
    window, _base = presenting

    def widest_boundary() -> float:
        items = window.canvas.view.addedItems
        curves = [item for item in items if isinstance(item, pg.PlotCurveItem)]
        return max(item.opts["pen"].widthF() for item in curves)

    assert widest_boundary() == pytest.approx(2 * scene_items.BOUNDARY_WIDTH)
    window.presentation.set_enabled(False)
    assert widest_boundary() == pytest.approx(scene_items.BOUNDARY_WIDTH)
