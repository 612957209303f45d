"""Run ▸ Compare varying a field: paper 004's wheel with restitution 0 and 0.3 side by side.

The first impact (on the lower floor at t₁, the wheel thrown at (−5, −3) m/s
from 0.2 m) leaves ẏ = 0 for β = 0 and ẏ = −0.3·ẏ⁻ for β = 0.3, with
ẏ⁻ = −√(9 + 2g·0.1) — paper 004 (44), (52).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.gui.conftest import scene_path

G = 9.81


def test_restitution_varied_overlays_the_two_wheels(qtbot, window):
    assert window.open_preset(scene_path("wheel_curb_e0"))
    dialog = window.open_compare()
    qtbot.addWidget(dialog)
    dialog.vary.setCurrentIndex(dialog.vary.findData("contact.restitution"))
    assert dialog.values.isVisible() and not dialog.checkboxes["staged"].isEnabled()
    dialog.values.setText("0, 0.3")
    assert dialog.run()
    qtbot.waitUntil(lambda: not dialog.is_running(), timeout=60000)
    assert [p.title for p in dialog.panels] == [
        "contact.restitution = 0",
        "contact.restitution = 0.3",
    ]
    t1 = (-3.0 + math.sqrt(9.0 + 2 * G * 0.1)) / G
    vy_minus = -3.0 - G * t1
    for panel, beta in zip(dialog.panels, (0.0, 0.3), strict=True):
        assert panel.runner.status == "finished"
        event = next(e for e in panel.runner.trajectory.events if e.type == "impact")
        assert event.t == pytest.approx(t1, abs=1e-12)
        assert event.v_plus[1] == pytest.approx(-beta * vy_minus, abs=1e-12)
        # its velocities are in the overlay, in the run's own colour
        assert len(panel.overlay_curves) == 2  # the wheel's vx and vy
        t, vy = panel.overlay_curves[1][0].getData()
        assert np.array_equal(t, panel.runner.trajectory.times())
        assert np.array_equal(vy, panel.runner.trajectory.states()[:, 4])  # x, y, φ, vx, vy
    assert dialog.overlay.isVisible()
    dialog.close()


def test_bad_values_are_named(qtbot, window):
    assert window.open_preset(scene_path("wheel_curb_e0"))
    dialog = window.open_compare()
    qtbot.addWidget(dialog)
    dialog.vary.setCurrentIndex(dialog.vary.findData("contact.restitution"))
    dialog.values.setText("0, zero")
    assert not dialog.run()
    assert dialog.message.text().startswith("values:")
    dialog.values.setText("0.3")
    assert not dialog.run()
    assert dialog.message.text().startswith("values:")
    dialog.values.setText("0, 1.5")  # restitution must be in [0, 1]
    assert not dialog.run()
    assert dialog.message.text().startswith("values:") and "restitution" in dialog.message.text()
    dialog.close()
