"""Pictures of widgets at any resolution: PNG export for slides and papers, video frames.

A widget is rendered (not grabbed and enlarged) at a device pixel ratio
of the wanted scale, so text, bodies and curves are drawn afresh at 2× or
3000 px wide: sharp, never blurred. Lines keep their width in pixels (Qt's
cosmetic pens), so in a large picture they are crisp and comparatively
thin; for thicker lines, export in presentation mode. File ▸ Export
canvas PNG… and Export plots PNG… ask for the resolution among
``RESOLUTIONS``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QInputDialog, QWidget

BACKGROUND = QColor("white")
RESOLUTIONS = (("screen size", 1.0, None), ("2×", 2.0, None), ("3000 px wide", None, 3000))
"""PNG resolutions offered: name, scale (or None) and width in px (or None)."""


def export_scale(widget: QWidget, scale: float | None = None, width: int | None = None) -> float:
    """The scale of a picture of ``widget``: ``scale``, or the one giving ``width`` px."""
    if width is not None:
        return width / max(widget.width(), 1)
    return 1.0 if scale is None else scale


def render_widget(widget: QWidget, scale: float) -> QImage:
    """``widget`` painted at ``scale`` times its size, px (text and lines stay sharp)."""
    size = QSize(max(1, round(widget.width() * scale)), max(1, round(widget.height() * scale)))
    image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(scale)
    image.fill(BACKGROUND)
    # QWidget's render (a graphics view's own render draws its scene, not the widget)
    QWidget.render(widget, image, QPoint(0, 0))
    image.setDevicePixelRatio(1.0)
    return image


def render_widgets(widgets: list[QWidget], size: QSize) -> QImage:
    """``widgets`` side by side, rendered at the scale that fits ``size`` (px), centred on white.

    Larger than on screen, they are rendered at that scale (sharp); smaller,
    at their own size and then smoothly reduced (a fractional device pixel
    ratio below 1 draws thin lines blotchy).
    """
    widths = [widget.width() for widget in widgets]
    natural = QSize(sum(widths), max(widget.height() for widget in widgets))
    scale = min(size.width() / natural.width(), size.height() / natural.height())
    image = QImage(size, QImage.Format.Format_RGB888)
    image.fill(BACKGROUND)
    painter = QPainter(image)
    x = (size.width() - scale * natural.width()) / 2
    top = (size.height() - scale * natural.height()) / 2
    for widget, width in zip(widgets, widths, strict=True):
        if scale >= 1.0:
            part = render_widget(widget, scale)
        else:  # smaller than on screen: drawn at its own size, then smoothly reduced
            full = render_widget(widget, 1.0)
            part = full.scaled(
                max(1, round(full.width() * scale)),
                max(1, round(full.height() * scale)),
                Qt.AspectRatioMode.IgnoreAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
        painter.drawImage(QRect(round(x), round(top), part.width(), part.height()), part)
        x += scale * width
    painter.end()
    return image


def image_array(image: QImage) -> np.ndarray:
    """A QImage as an ``(h, w, 3)`` uint8 RGB array (a copy)."""
    rgb = image.convertToFormat(QImage.Format.Format_RGB888)
    width, height, stride = rgb.width(), rgb.height(), rgb.bytesPerLine()
    buffer = np.frombuffer(rgb.constBits(), dtype=np.uint8, count=stride * height)
    return buffer.reshape(height, stride)[:, : 3 * width].reshape(height, width, 3).copy()


def save_png(widget: QWidget, path: str | Path, scale: float) -> bool:
    """Write ``widget`` at ``scale`` to the PNG file ``path``; False when it cannot be written."""
    return bool(render_widget(widget, scale).save(str(path), "PNG"))


def ask_scale(parent: QWidget, widget: QWidget) -> float | None:
    """Ask which of ``RESOLUTIONS`` to export ``widget`` at; its scale, or None when cancelled."""
    names = []
    for name, scale, width in RESOLUTIONS:
        factor = export_scale(widget, scale, width)
        w, h = round(widget.width() * factor), round(widget.height() * factor)
        names.append(f"{name} ({w} × {h} px)")
    chosen, ok = QInputDialog.getItem(parent, "PNG resolution", "Resolution:", names, 1, False)
    if not ok:
        return None
    _name, scale, width = RESOLUTIONS[names.index(chosen)]
    return export_scale(widget, scale, width)
