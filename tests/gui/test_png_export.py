"""PNG export at a chosen resolution: screen size, 2×, 3000 px wide; sharp, not enlarged."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QImage

from impactgui.image_export import RESOLUTIONS, export_scale
from tests.gui.conftest import distinct_colours, run_to_end, scene_path


def test_canvas_at_twice_its_size(qtbot, window, tmp_path: Path) -> None:
    assert window.open_file(scene_path("wheel_curb_e03"))
    path = tmp_path / "canvas2x.png"
    assert window.export_canvas_png(path, scale=2.0)
    image = QImage(str(path))
    plot = window.canvas.plot
    assert (image.width(), image.height()) == (2 * plot.width(), 2 * plot.height())
    assert distinct_colours(path) > 10


def test_canvas_3000_px_wide_draws_thin_lines_sharp(qtbot, window, tmp_path: Path) -> None:
    assert window.open_file(scene_path("wheel_curb_e03"))
    plot = window.canvas.plot
    scale = export_scale(plot, width=3000)
    big, small = tmp_path / "wide.png", tmp_path / "screen.png"
    assert window.export_canvas_png(big, scale=scale)
    assert window.export_canvas_png(small, scale=1.0)
    wide, screen = QImage(str(big)), QImage(str(small))
    assert wide.width() == 3000
    assert abs(wide.height() - plot.height() * scale) <= 1
    # rendered, not enlarged: the curb keeps its crisp 4-pixel line (an enlarged screenshot
    # would smear it over 4 × 4.9 pixels), while bodies and text grow with the picture
    thin, thick = _dark_run(screen), _dark_run(wide)
    assert 3 <= thin <= 6
    assert thick <= thin + 2


def _dark_run(image: QImage) -> int:
    """Longest vertical run of dark pixels down the picture's middle column (the curb)."""
    x = image.width() // 2
    run = best = 0
    for y in range(image.height()):
        if image.pixelColor(x, y).lightness() < 90:
            run += 1
            best = max(best, run)
        else:
            run = 0
    return best


def test_plots_at_twice_their_size(qtbot, window, tmp_path: Path) -> None:
    assert window.open_file(scene_path("bouncing_ball"))
    run_to_end(qtbot, window)
    path = tmp_path / "plots2x.png"
    assert window.export_plots_png(path, scale=2.0)
    image = QImage(str(path))
    graphics = window.plots.graphics
    assert (image.width(), image.height()) == (2 * graphics.width(), 2 * graphics.height())
    assert distinct_colours(path) > 10


def test_resolutions_offered() -> None:
    assert [name for name, _scale, _width in RESOLUTIONS] == [
        "screen size",
        "2×",
        "3000 px wide",
    ]
