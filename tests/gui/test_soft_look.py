"""Compliant contact on the canvas and in the λ plot: paper 003's elastic stop.

A 2 kg mass at V = 1.5 m/s (radius 0.1 m, from x = 0) meets a stop at x = 1
of stiffness k = 2·10⁴ N/m at T = 0.9 / 1.5 s. With λ = √(k/m) the overlap is
δ(t) = (V/λ) sin(λ(t − T)) for T ≤ t ≤ T + π/λ and the force k·δ, a half
sine of height V√(km) = 300 N (paper 003, eqs. 10–12): the test's own
closed forms.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsPathItem

from tests.gui.conftest import run_to_end, scene_path

M, V, K = 2.0, 1.5, 2e4
LAM = math.sqrt(K / M)
T = 0.9 / V


def _bands(canvas) -> list[QGraphicsPathItem]:
    return [
        item
        for item in canvas.view.addedItems
        if isinstance(item, QGraphicsPathItem)
        and item.brush().style() == Qt.BrushStyle.BDiagPattern
    ]


def test_a_soft_stop_has_a_hatched_band_behind_its_surface_a_rigid_one_none(qtbot, window) -> None:
    assert window.open_file(scene_path("elastic_stop"))
    (band,) = _bands(window.canvas)
    box = band.path().boundingRect()
    # behind the stop (x = 1), away from the mass at x = 0: 5 % of its 0.4 m, 0.02 m wide
    assert (box.left(), box.right()) == pytest.approx((1.0, 1.02))
    assert (box.top(), box.bottom()) == pytest.approx((-0.2, 0.2))
    window.doc.select(("boundaries", 0))
    assert window.properties.submit("boundaries[0].compliance.stiffness", "")  # rigid
    assert _bands(window.canvas) == []
    window.doc.undo_stack.undo()  # soft again: the band is back
    assert len(_bands(window.canvas)) == 1


def test_the_overlap_is_drawn_and_the_force_pulse_plotted(qtbot, window) -> None:
    assert window.open_file(scene_path("elastic_stop"))
    window.playback_bar.set_speed(float("inf"))
    run_to_end(qtbot, window)
    canvas = window.canvas
    # the λ plot: one half sine of height V√(km) lasting π/λ
    (curve,) = window.plots.lambda_plot.listDataItems()
    t, force = curve.getOriginalDataset()
    pressing = np.isfinite(force) & (force > 0)
    # the peak to the sampling (1 ms samples, λ = 100/s: at most (λ·0.5 ms)²/2 = 1.25e-3 low)
    assert force[pressing].max() == pytest.approx(V * math.sqrt(K * M), rel=1.3e-3)
    assert t[pressing].min() >= T and t[pressing].max() <= T + math.pi / LAM
    inside = t[pressing]
    assert force[pressing] == pytest.approx(K * (V / LAM) * np.sin(LAM * (inside - T)), rel=1e-6)
    # halfway through the contact: δ of the frame shown, drawn and labelled when zoomed in
    window.clock.seek(T + 0.5 * math.pi / LAM)
    qtbot.waitUntil(lambda: bool(canvas.overlaps.depths))
    shown = canvas.current_time
    ((body, other, depth),) = canvas.overlaps.depths
    assert (body, other) == ("mass", "stop")
    assert depth == pytest.approx((V / LAM) * math.sin(LAM * (shown - T)), abs=1e-9)
    assert canvas.overlaps.path.path().boundingRect().right() == pytest.approx(1.0 + depth)
    (label, *_) = canvas.overlaps._labels
    canvas.view.setRange(xRange=(-5.0, 5.0), yRange=(-3.0, 3.0), padding=0)
    qtbot.waitUntil(lambda: not label.isVisible())  # 15 mm: under a pixel from afar
    canvas.view.setRange(xRange=(0.8, 1.1), yRange=(-0.12, 0.12), padding=0)
    qtbot.waitUntil(label.isVisible)
    assert label.textItem.toPlainText() == f"δ = {depth * 1e3:.3g} mm"
    # issue 22: the stop's name reads beside the shaded overlap and the δ label, not under them
    (name,) = [
        item
        for item in canvas.view.addedItems
        if isinstance(item, pg.TextItem) and item.textItem.toPlainText() == "stop"
    ]
    qtbot.waitUntil(lambda: name.isVisible())
    shading = canvas.view.mapViewToScene(canvas.overlaps.path.path().boundingRect())
    shading = shading.boundingRect()
    assert not name.sceneBoundingRect().intersects(shading)
    assert not name.sceneBoundingRect().intersects(label.sceneBoundingRect())
    # before the touch: nothing pressed, no overlap
    window.clock.seek(T - 0.05)
    qtbot.waitUntil(lambda: not canvas.overlaps.depths)
    assert canvas.overlaps.path.path().isEmpty() and not label.isVisible()
