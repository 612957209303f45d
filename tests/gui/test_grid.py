"""The opaque plot grid: the same lines and shades as pyqtgraph's translucent grid, beneath
the curves, coarse lines never cut by fine ones.

References are independent of ``impactgui.grid``: Qt's own compositing of a
translucent colour, and pyqtgraph's grid drawn by its axes.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyqtgraph as pg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage, QPainter

from impactgui.grid import FlatGrid, blend, show_grid

SIZE = (400, 300)
LINE = 250
"""A pixel darker than this (every channel) is on a grid line; the background is white."""


def _pixels(widget: pg.GraphicsLayoutWidget) -> np.ndarray:
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    rows = np.frombuffer(image.constBits(), dtype=np.uint8).reshape(
        image.height(), image.bytesPerLine() // 4, 4
    )
    return rows[:, : image.width(), 2::-1].astype(int)  # BGRA in memory → RGB


@pytest.fixture
def plot_image(qtbot) -> Iterator:
    """``render(flat, curve=False)``: pixels inside the plot area (RGB) of a 400×300 plot,
    x 0–10, y −1–1, with pyqtgraph's grid (``flat=False``) or ``FlatGrid``."""
    widgets = []

    def render(flat: bool, curve: bool = False) -> np.ndarray:
        widget = pg.GraphicsLayoutWidget()
        widgets.append(widget)
        qtbot.addWidget(widget)
        widget.setBackground("w")
        widget.resize(*SIZE)
        plot = widget.addPlot()
        if flat:
            grid = show_grid(plot, "w", 0.2)
            assert isinstance(grid, FlatGrid)
        else:
            plot.showGrid(x=True, y=True, alpha=0.2)
        if curve:
            plot.plot([0.0, 10.0], [0.0, 0.0], pen=pg.mkPen("#ff0000", width=5))
        plot.setXRange(0, 10, padding=0)
        plot.setYRange(-1, 1, padding=0)
        widget.show()
        qtbot.waitExposed(widget)
        area: QRect = plot.vb.sceneBoundingRect().toAlignedRect()
        pixels = _pixels(widget)
        # inside the plot area, clear of the axis lines and of the frame
        return pixels[area.top() + 2 : area.bottom() - 2, area.left() + 2 : area.right() - 2]

    yield render
    for widget in widgets:
        widget.close()


def test_blend_gives_the_colour_qt_composites_for_black_at_a_fifth_over_white() -> None:
    assert blend(QColor("black"), 0.2, QColor("white")).getRgb()[:3] == (204, 204, 204)


@settings(max_examples=60)
@given(
    colour=st.tuples(*[st.integers(0, 255)] * 3),
    background=st.tuples(*[st.integers(0, 255)] * 3),
    alpha=st.integers(0, 255),
)
def test_blend_equals_qt_source_over_compositing(colour, background, alpha) -> None:
    image = QImage(1, 1, QImage.Format.Format_RGB32)
    image.fill(QColor(*background))
    painter = QPainter(image)
    painter.fillRect(0, 0, 1, 1, QColor(*colour, alpha))
    painter.end()
    expected = QColor(image.pixel(0, 0)).getRgb()[:3]
    got = blend(QColor(*colour), alpha / 255, QColor(*background)).getRgb()[:3]
    assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) <= 1


def _line_positions(pixels: np.ndarray, axis: int) -> list[int]:
    """Columns (axis 0) or rows (axis 1) where nearly every pixel is on a line."""
    dark = (pixels.max(axis=2) < LINE).mean(axis=axis)
    return np.nonzero(dark > 0.9)[0].tolist()


def test_the_flat_grid_has_pyqtgraphs_lines_in_the_same_places_and_shades(plot_image) -> None:
    reference, flat = plot_image(flat=False), plot_image(flat=True)
    for axis in (0, 1):
        expected, got = _line_positions(reference, axis), _line_positions(flat, axis)
        assert len(got) == len(expected) >= 5
        # the same lines, each within a pixel (rounding of the line position)
        assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) <= 1
        for a, b in zip(expected, got, strict=True):
            shade_a = np.median(np.take(reference, a, axis=1 - axis), axis=0)
            shade_b = np.median(np.take(flat, b, axis=1 - axis), axis=0)
            assert np.abs(shade_a - shade_b).max() <= 3


def test_coarse_lines_are_not_cut_where_fine_lines_cross_them(plot_image) -> None:
    flat = plot_image(flat=True)
    for axis in (0, 1):
        for position in _line_positions(flat, axis):
            line = np.take(flat, position, axis=1 - axis).max(axis=1)
            # every pixel of a line is at least as dark as the line's own shade
            assert line.max() <= np.median(line)


def test_the_grid_lies_beneath_the_curves(plot_image) -> None:
    flat = plot_image(flat=True, curve=True)
    # the 5-pixel red curve along y = 0 crosses every vertical grid line: it stays red there
    red = (flat[:, :, 0] == 255) & (flat[:, :, 1] == 0) & (flat[:, :, 2] == 0)
    curve_rows = np.nonzero(red.mean(axis=1) > 0.99)[0]
    assert len(curve_rows) >= 3
    assert red[curve_rows].all()
