"""Run ▸ Compare draws its runs on the main canvas: one trail per run, in its own colour.

Paper 004's wheel (10 kg, r = 0.1 m) thrown from (0.8, 0.2) m at (−5, −3) m/s
is compared with restitution 0 and 0.3. Until the first impact at
t₁ = (−3 + √(9 + 2g·0.1))/g both runs fly the same parabola
x = 0.8 − 5t, y = 0.2 − 3t − g t²/2; after it their paths part.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.gui.conftest import run_to_end, scene_path

G = 9.81


def _compare_restitutions(qtbot, window):
    assert window.open_preset(scene_path("wheel_curb_e0"))
    dialog = window.open_compare()
    qtbot.addWidget(dialog)
    dialog.vary.setCurrentIndex(dialog.vary.findData("contact.restitution"))
    dialog.values.setText("0, 0.3")
    assert dialog.run()
    qtbot.waitUntil(lambda: not dialog.is_running(), timeout=60000)
    return dialog


def _centres(panel, up_to: float = math.inf) -> np.ndarray:
    """The wheel's centre (state columns x, y) at every frame of the run up to ``up_to``."""
    t = panel.runner.trajectory.times()
    return panel.runner.trajectory.states()[: len(t)][t <= up_to][:, :2]


def test_compared_runs_are_trails_on_the_canvas_in_their_own_colours(qtbot, window):
    dialog = _compare_restitutions(qtbot, window)
    trails = dialog.trails
    assert trails.titles == ["contact.restitution = 0", "contact.restitution = 0.3"]
    curves = trails.curves()
    assert len(curves) == 2 and all(curve.getViewBox() is window.canvas.view for curve in curves)
    # no run shown in the window: each trail is its whole compared run
    for k, panel in enumerate(dialog.panels):
        drawn = trails.trail(k, "wheel")
        assert np.array_equal(drawn, _centres(panel))
        x, y = curves[k].getData()
        assert np.array_equal(np.column_stack((x, y)), drawn)
        # before the first impact: the free-flight parabola of the paper's throw
        t = panel.runner.trajectory.times()
        t1 = (-3.0 + math.sqrt(9.0 + 2 * G * 0.1)) / G
        flight = t < t1
        assert flight.sum() > 3
        assert drawn[flight, 0] == pytest.approx(0.8 - 5.0 * t[flight], abs=1e-12)
        assert drawn[flight, 1] == pytest.approx(
            0.2 - 3.0 * t[flight] - G * t[flight] ** 2 / 2, abs=1e-12
        )
    # the two restitutions end in different places, so the trails differ
    assert not np.array_equal(trails.trail(0, "wheel")[-1], trails.trail(1, "wheel")[-1])
    colours = [curve.opts["pen"].color().name() for curve in curves]
    assert colours[0] != colours[1]
    legend = trails.legend.text()
    assert trails.legend.isVisible()
    for colour, title in zip(colours, trails.titles, strict=True):
        assert colour in legend and title in legend
    dialog.close()
    assert all(curve.scene() is None for curve in curves)  # off the canvas
    assert trails.curves() == [] and not trails.legend.isVisible()


def test_the_trails_follow_the_playback_time(qtbot, window):
    dialog = _compare_restitutions(qtbot, window)
    run_to_end(qtbot, window)  # the window's own run, for its clock
    window.pause_run()
    end = window.clock.end_time()
    for fraction in (0.1, 1.0, 0.0, 0.5):
        window.clock.seek(fraction * end)
        shown = window.canvas.current_time
        for k, panel in enumerate(dialog.panels):
            drawn = dialog.trails.trail(k, "wheel")
            assert np.array_equal(drawn, _centres(panel, shown))
            x, y = dialog.trails.curves()[k].getData()
            assert np.array_equal(np.column_stack((x, y)), drawn)
    assert len(dialog.trails.trail(0, "wheel")) < len(_centres(dialog.panels[0]))
    window.reset_run()  # back to editing: the whole compared runs again
    for k, panel in enumerate(dialog.panels):
        x, y = dialog.trails.curves()[k].getData()
        assert np.array_equal(np.column_stack((x, y)), _centres(panel))
    # another scene opened: the trails of the one compared go
    assert window.open_preset(scene_path("bouncing_ball"))
    assert dialog.trails.curves() == [] and not dialog.trails.legend.isVisible()
    dialog.close()


def test_comparing_laws_names_them_and_a_new_comparison_replaces_the_trails(qtbot, window):
    assert window.open_preset(scene_path("wheel_curb_e0"))
    dialog = window.open_compare()
    qtbot.addWidget(dialog)
    assert dialog.run(["staged", "sequential", "newton"])
    qtbot.waitUntil(lambda: not dialog.is_running(), timeout=60000)
    assert dialog.trails.titles == ["law: staged", "law: sequential", "law: newton"]
    old = dialog.trails.curves()
    assert len({curve.opts["pen"].color().name() for curve in old}) == 3
    assert dialog.run(["staged", "poisson"])
    qtbot.waitUntil(lambda: not dialog.is_running(), timeout=60000)
    assert dialog.trails.titles == ["law: staged", "law: poisson"]
    assert all(curve.scene() is None for curve in old)
    dialog.close()


def test_a_chain_of_beads_draws_one_trail_per_bead_decimated_within_budget(
    qtbot, window, monkeypatch
):
    """Four beads on a rail at y = 0: each trail is its bead's x column at every
    ``stride``-th frame (the newest one always), the curve broken between beads."""
    from impactgui import compare_trails

    monkeypatch.setattr(compare_trails, "POINT_BUDGET", 40)  # 10 positions per bead
    assert window.open_preset(scene_path("chain_forced"))
    dialog = window.open_compare()
    qtbot.addWidget(dialog)
    assert dialog.run(["staged", "sequential"])
    qtbot.waitUntil(lambda: not dialog.is_running(), timeout=60000)
    for k, panel in enumerate(dialog.panels):
        states = panel.runner.trajectory.states()
        n = len(panel.runner.trajectory.times())
        assert n > 40
        stride = math.ceil(n / 10)
        rows = [*range(0, n, stride)]
        rows += [n - 1] if rows[-1] != n - 1 else []
        drawn = []
        for bead, body_id in enumerate(("m1", "m2", "m3", "m4")):
            trail = dialog.trails.trail(k, body_id)
            assert len(trail) <= 11
            assert np.array_equal(trail[:, 0], states[rows, bead])  # a bead has one coordinate
            assert np.array_equal(trail[:, 1], np.zeros(len(rows)))  # its rail_y
            drawn.append(trail)
        curve = dialog.trails.curves()[k]
        x, y = curve.getData()
        assert np.array_equal(np.column_stack((x, y)), np.concatenate(drawn))
        breaks = np.flatnonzero(np.asarray(curve.opts["connect"]) == 0)
        assert breaks.tolist() == [len(rows) * j - 1 for j in range(1, 5)]
    dialog.close()
