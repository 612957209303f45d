"""The Sweep window's legend stands beside its plot, never over the data, in every state.

Issue 25 item 6 asks for legends beside the plots. The periodic-orbit cascade's legend
(branch 0 stable … period doubling) was pyqtgraph's legend inside the view box, in its
lower right corner, over branch 0's end (docs/screenshots/sweep_cascade.png).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF

from impactgui.sweep_window import IMPACT_SPEED, SweepWindow
from tests.gui.test_sweep_orbits import _continued
from tests.gui.test_sweep_window import colour_map_sweep, run_sweep
from tests.test_orbits import oscillator


def assert_legend_beside(sweep: SweepWindow) -> None:
    """The plot's legend lies right of its view box (and of a colour map's bar), inside the
    window's plot widget, and no drawn point of any curve or scatter is under it."""
    plot = sweep.plot_item
    legend = plot.legend
    view = plot.vb.sceneBoundingRect()
    box = legend.mapRectToScene(legend.boundingRect())
    if legend.items:
        assert not box.intersects(view), f"legend {box} over the view box {view}"
        assert box.left() >= view.right()
        assert box.right() <= sweep.plot.width() and box.bottom() <= sweep.plot.height()
    if sweep.colour_bar is not None:
        assert not box.intersects(sweep.colour_bar.sceneBoundingRect())
    for item in plot.listDataItems():
        x, y = item.getData()
        if x is None or not len(x):
            continue
        for px, py in zip(np.asarray(x, float), np.asarray(y, float), strict=True):
            if np.isfinite(px) and np.isfinite(py):
                point = plot.vb.mapViewToScene(QPointF(px, py))
                assert not box.contains(point), f"({px}, {py}) of {item} under the legend"


def test_orbit_branches_over_a_bifurcation_diagram_have_their_legend_beside(qtbot) -> None:
    # the linear impact oscillator's period doubling at ω ≈ 1.13: its branches of
    # periods 1 and 2 named in the legend, over the sweep's own bifurcation diagram
    sweep, overlay = _continued(qtbot, oscillator(), (1.15, 1.1), 6, 0.01, 1, 120000)
    sweep.plot_item.vb.autoRange()
    qtbot.wait(100)  # the layout's turn
    names = [label.text for _sample, label in sweep.plot_item.legend.items]
    assert names[:2] == ["branch 0, stable", "branch 0, unstable"]
    assert "period doubling" in names
    assert_legend_beside(sweep)
    sweep.first.choose("forces[0].omega", 1.15, 1.1, 3)
    sweep.transient.setValue(40.0)
    sweep.t_end.setValue(60.0)  # the impacts of the runs' last 20 s
    sweep.set_observable(IMPACT_SPEED)
    run_sweep(qtbot, sweep, timeout_ms=120000)
    overlay.draw()  # the branches again over the finished diagram
    sweep.plot_item.vb.autoRange()
    qtbot.wait(100)
    assert len(sweep.shown_points()) > 3
    assert sweep.plot_item.legend.items
    assert_legend_beside(sweep)
    overlay.clear()
    qtbot.wait(100)
    assert not sweep.plot_item.legend.items
    assert_legend_beside(sweep)


def test_a_colour_map_keeps_its_bar_and_legend_off_the_map(qtbot, window) -> None:
    sweep = colour_map_sweep(qtbot, window)
    qtbot.wait(100)
    assert sweep.colour_bar is not None
    view = sweep.plot_item.vb.sceneBoundingRect()
    assert not sweep.colour_bar.sceneBoundingRect().intersects(view)
    assert_legend_beside(sweep)
