"""The λ plot's value axis always shows 0: a resting contact's λ = m g is read against it."""

from __future__ import annotations

import pytest

from tests.gui.conftest import run_to_end, scene_path


def test_lambda_axis_includes_zero_for_a_ball_at_rest(qtbot, window) -> None:
    assert window.open_file(scene_path("bouncing_ball"))
    run_to_end(qtbot, window)
    window.plots.redraw()
    scene = window.doc.scene()
    weight = scene.bodies[0].mass * abs(scene.gravity[1])
    low, high = window.plots.lambda_plot.vb.viewRange()[1]
    assert low <= 0.0
    assert high >= weight * (1 - 1e-9)
    lam = window.runner.trajectory.frame(-1).contacts[0].lam
    assert lam == pytest.approx(weight, rel=1e-6)  # at rest on the floor: λ = m g
