"""The Motion tab offers x, y, φ, ẋ, ẏ, ω per body (a bead's x and ẋ): free flight closed forms."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.gui.conftest import run_to_end
from tests.gui.test_motion_plots import BEAD, WHEEL, G, _scene


def test_a_wheel_in_free_flight_has_phi_and_both_velocity_components(qtbot, window, tmp_path):
    assert window.open_file(_scene(tmp_path, [WHEEL]))
    run_to_end(qtbot, window)
    plots = window.motion_plots
    t, phi = plots.series("wheel", "phi")
    _, vx = plots.series("wheel", "vx")
    _, vy = plots.series("wheel", "vy")
    assert np.allclose(phi, 2.0 * t, atol=1e-9)  # ω = 2 rad/s, no torque
    assert np.allclose(vx, 0.3, atol=1e-12)
    assert np.allclose(vy, -G * t, atol=1e-9)
    plots.set_quantities(["phi", "vx", "vy", "omega"])
    window.motion_dock.raise_()
    qtbot.waitUntil(lambda: ("wheel", "phi") in plots.curves)
    assert set(plots.curves) == {("wheel", q) for q in ("phi", "vx", "vy", "omega")}
    assert [q for q, p in plots.plot_of.items() if p.isVisible()] == ["phi", "vx", "vy", "omega"]
    assert np.array_equal(plots.curves["wheel", "vy"].getData()[1], vy)
    plots.boxes["x"].setChecked(True)  # a click on a box adds its plot
    qtbot.waitUntil(lambda: ("wheel", "x") in plots.curves)
    assert plots.plot_of["x"].isVisible()


def test_a_bead_offers_x_and_its_velocity_only(qtbot, window, tmp_path: Path):
    assert window.open_file(_scene(tmp_path, [BEAD]))
    run_to_end(qtbot, window)
    plots = window.motion_plots
    plots.set_quantities(["x", "phi", "vx", "vy", "omega"])
    window.motion_dock.raise_()
    qtbot.waitUntil(lambda: ("bead", "vx") in plots.curves)
    assert set(plots.curves) == {("bead", "x"), ("bead", "vx")}
    assert plots.shown_quantities() == ["x", "vx"]
    _t, vx = plots.series("bead", "vx")
    assert np.all(vx == 0.5)
