"""Run ▸ Sweep on log axes: a log-spaced sweep (PATH=START:STOP:COUNT:log) plots on a log axis.

The bouncing ball's accumulation time ``t∞ = √(2h/g)(1 + e)/(1 − e)`` over
restitutions spaced evenly in log e, on log x and log y axes: the points are the
closed form's, the axes are logarithmic, a point is drawn at (log10 e, log10 t∞)
in the view, and a click there opens that run.
"""

from __future__ import annotations

import math

import pytest

from tests.gui.test_sweep_window import click_at, open_sweep, run_sweep, t_zeno


def test_log_spaced_sweep_is_drawn_on_log_axes_and_clicks_find_the_runs(qtbot, window, tmp_path):
    sweep = open_sweep(qtbot, window, "bouncing_ball")
    sweep.first.choose("contact.restitution", 0.05, 0.45, 3, log=True)
    sweep.set_observable("t_zeno")
    sweep.log_y.setChecked(True)
    run_sweep(qtbot, sweep)
    shown = sorted(sweep.shown_points())
    assert [x for x, _, _ in shown] == pytest.approx([0.05, 0.15, 0.45], rel=1e-12)
    assert [y for _, y, _ in shown] == pytest.approx([t_zeno(1.0, x) for x, *_ in shown], rel=1e-9)
    assert sweep.plot_item.ctrl.logXCheck.isChecked() and sweep.plot_item.ctrl.logYCheck.isChecked()
    # the ticks read the values themselves (no SI scaling of the powers of ten: "×0.001")
    assert sweep.plot_item.getAxis("bottom").autoSIPrefixScale == 1.0
    assert sweep.plot_item.getAxis("bottom").tickStrings([math.log10(0.05)], 1.0, 1.0) == ["0.05"]
    x_view, y_view = sweep.scatter.getData()
    assert sorted(x_view) == pytest.approx([math.log10(v) for v in (0.05, 0.15, 0.45)], abs=1e-12)
    assert sorted(y_view) == pytest.approx(sorted(math.log10(y) for _, y, _ in shown), abs=1e-12)
    sweep.plot_item.vb.autoRange()
    opened = []
    sweep.run_requested.connect(opened.append)
    x, y, _ = shown[1]
    click_at(qtbot, sweep, math.log10(x), math.log10(y))
    assert len(opened) == 1 and opened[0]["contact"]["restitution"] == pytest.approx(0.15)
    # linear spacing again: linear axes
    sweep.first.choose("contact.restitution", 0.3, 0.5, 3)
    sweep.log_y.setChecked(False)
    run_sweep(qtbot, sweep)
    assert not sweep.plot_item.ctrl.logXCheck.isChecked()
    assert sorted(sweep.scatter.getData()[0]) == pytest.approx([0.3, 0.4, 0.5])
