"""Value axes whose tick labels and axis label stay legible on a short plot.

pyqtgraph always labels every major tick, and it takes at least 2.25 intervals
whatever the axis's length: a 50 px plot at presentation size (22 px tick text)
stacked "1.0 0.8 0.6 0.4 0.2 0" into one smudge. Its axis label is centred on the
axis and drawn whole, so a label longer than its plot ran into the next plot's
("impulse (N·s)Δv (m/s)").

``LegibleAxis`` (a vertical axis) spaces its major ticks at least
``TICK_PITCH`` text lines apart, so a short plot gets fewer ticks, never
overlapping labels, and drops any finer-level label that would touch another.
Its label shows only what fits along the axis: the whole label, else the unit
in its parentheses (the plot's title names the quantity), else nothing.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFont, QFontMetricsF, QPainter

TICK_PITCH = 1.0
"""Major tick labels of a vertical axis are at least this many text lines apart (their
digits, about 0.7 of a line tall, then stand a third of their height apart)."""
NICE_STEPS = (1.0, 2.0, 5.0)
"""Mantissas of the tick spacings (× 10^k)."""
PYQTGRAPH_TEXT_SHARE = 0.8
"""pyqtgraph keeps this share of a tick text's bounding height as its rectangle."""

_UNIT = re.compile(r"\(([^()]*)\)\s*$")
"""The unit at the end of an axis label: ``impulse (N·s)`` → ``N·s``."""


def nice_at_least(value: float) -> float:
    """The smallest 1, 2 or 5 × 10^k that is ≥ ``value`` (> 0)."""
    exponent = math.floor(math.log10(value))
    for power in (exponent, exponent + 1):
        for step in NICE_STEPS:
            nice = step * 10.0**power
            if nice >= value * (1.0 - 1e-12):
                return nice
    return 10.0 ** (exponent + 1)  # not reached


def nice_below(value: float) -> float:
    """The largest 1, 2 or 5 × 10^k below ``value`` (itself such a number)."""
    exponent = math.floor(math.log10(value) + 1e-9)
    mantissa = round(value / 10.0**exponent)
    if mantissa == 1:
        return 0.5 * 10.0**exponent
    return (1.0 if mantissa == 2 else 2.0) * 10.0**exponent


def label_forms(text: str) -> list[str]:
    """An axis label and its shorter forms, longest first: whole, the unit alone, nothing."""
    forms = [text]
    unit = _UNIT.search(text)
    if unit is not None and unit.group(1) and unit.group(1) != text:
        forms.append(unit.group(1))
    forms.append("")
    return forms


def text_line_height(axis: pg.AxisItem) -> float:
    """Height of one line of ``axis``'s tick text, px (its tick font, or the application's)."""
    font = axis.style.get("tickFont") or QFont()
    return QFontMetricsF(font).height()


class LegibleAxis(pg.AxisItem):
    """A pyqtgraph axis that never stacks its tick labels or overruns its label (see module)."""

    def __init__(self, orientation: str, **options: Any) -> None:
        self._shown_label = ""
        super().__init__(orientation, **options)

    def _vertical(self) -> bool:
        return self.orientation in ("left", "right")

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:
        """pyqtgraph's spacing, widened until the major labels are ``TICK_PITCH`` lines apart."""
        levels = super().tickSpacing(minVal, maxVal, size)
        if not levels or not self._vertical() or size <= 0:
            return levels
        span = abs(maxVal - minVal)
        least = span * TICK_PITCH * text_line_height(self) / size
        if levels[0][0] >= least:
            return levels
        major = nice_at_least(least)
        low, high = sorted((minVal, maxVal))
        while math.floor(high / major) * major < low:
            # no tick in view at that spacing (a 15 px plot): the next finer one, as long
            # as a single label stands there (a second too close is dropped with the text)
            major = nice_below(major)
        mantissa = round(major / 10.0 ** math.floor(math.log10(major) + 1e-9))
        minor = major / (5 if mantissa == 5 else 2)
        return [(major, 0.0), (minor, 0.0)] if self.style["maxTickLevel"] >= 1 else [(major, 0.0)]

    def generateDrawSpecs(self, p: QPainter) -> Any:
        """pyqtgraph's specs without any label that would touch one kept before it.

        The labels come major level first; a label is kept when its text, a whole line
        tall, overlaps none kept so far (pyqtgraph's rectangles are 0.8 of a line).
        """
        specs = super().generateDrawSpecs(p)
        if specs is None or not self._vertical():
            return specs
        axis, ticks, texts = specs
        kept: list[tuple[QRectF, Any, str]] = []
        lines: list[QRectF] = []
        for spec in texts:
            line = full_line(spec[0])
            if not any(line.intersects(other) for other in lines):
                kept.append(spec)
                lines.append(line)
        return axis, ticks, kept

    def labelString(self) -> str:
        """The label's HTML with the text that fits along the axis (``_fit_label``)."""
        if not self._vertical():
            return super().labelString()
        style = ";".join(f"{key}: {value}" for key, value in self.labelStyle.items())
        return f"<span style='{style}'>{self._shown_label}</span>"

    def _updateLabel(self) -> None:
        self._fit_label()
        super()._updateLabel()
        if self._vertical():
            super().resizeEvent()  # centred afresh: pyqtgraph places a label only on a resize

    def resizeEvent(self, ev: Any = None) -> None:
        """Refit the label to the new length, then let pyqtgraph centre it."""
        if self.label is not None and self._vertical() and self._fit_label():
            self.label.setHtml(self.labelString())
        super().resizeEvent(ev)

    def _fit_label(self) -> bool:
        """Choose the longest form of the label that fits the axis's length; True if changed."""
        if self.label is None:
            return False
        full = super().labelString()
        whole = re.sub(r"<[^>]*>", "", full).strip()
        room = self.size().height()
        style = ";".join(f"{key}: {value}" for key, value in self.labelStyle.items())
        shown = ""
        for form in label_forms(whole):
            # nothing is a no-break space: the label keeps its line's height (the axis's width)
            shown = form or "\u00a0"
            self.label.setHtml(f"<span style='{style}'>{shown}</span>")
            if not form or self.label.boundingRect().width() <= room:
                break
        changed = shown != self._shown_label
        self._shown_label = shown
        return changed

    def shown_label(self) -> str:
        """The text of the axis label as drawn (a shorter form on a short axis)."""
        if not self._vertical():
            return self.labelText
        return self._shown_label.replace("\u00a0", "")


def full_line(rect: QRectF) -> QRectF:
    """A tick label's rectangle from pyqtgraph grown to a whole line of its text, same centre."""
    height = rect.height() / PYQTGRAPH_TEXT_SHARE
    return QRectF(rect.left(), rect.center().y() - height / 2, rect.width(), height)


def legible_axes() -> dict[str, pg.AxisItem]:
    """Axis items for a new ``PlotItem`` (``axisItems=``): a ``LegibleAxis`` on the left."""
    return {"left": LegibleAxis("left")}
