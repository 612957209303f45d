"""Run ▸ Sweep over the elastic stop's stiffness, log–log: the contact time is π√(m/k).

docs/SWEEPS.md, "Example: from a soft stop to a rigid one": a 2 kg mass meets a
linear stop of stiffness k; the contact is half a period of the mass on the
spring, π√(m/k), a straight line of slope −½ over six decades of k; the peak
force V√(km) grows as √k and the impulse stays 2mV.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.gui.test_sweep_window import open_sweep, run_sweep

MASS = 2.0  # kg, the bead of resources/scenes/elastic_stop.json
SPEED = 1.5  # m/s, its approach speed


def test_contact_time_over_six_decades_of_stiffness_is_pi_sqrt_m_over_k(qtbot, window):
    sweep = open_sweep(qtbot, window, "elastic_stop")
    sweep.first.choose("boundaries[0].compliance.stiffness", 1e3, 1e9, 13, log=True)
    sweep.set_observable("contact_time")
    sweep.log_y.setChecked(True)
    run_sweep(qtbot, sweep)
    shown = sorted(sweep.shown_points())
    stiffness = [x for x, _, _ in shown]
    assert stiffness == pytest.approx([10.0 ** (3 + i / 2) for i in range(13)], rel=1e-12)
    expected = [math.pi * math.sqrt(MASS / k) for k in stiffness]
    assert [y for _, y, _ in shown] == pytest.approx(expected, rel=1e-9)
    assert sweep.plot_item.ctrl.logXCheck.isChecked() and sweep.plot_item.ctrl.logYCheck.isChecked()
    # on log–log axes the points lie on a line of slope −1/2
    x_view, y_view = sweep.scatter.getData()
    slope, _ = np.polyfit(x_view, y_view, 1)
    assert slope == pytest.approx(-0.5, abs=1e-9)
    # the same runs' peak force V√(km), slope ½, and impulse 2mV (the rigid (1 + e)mV, e = 1)
    sweep.set_observable("peak_force")
    forces = [y for _, y, _ in sorted(sweep.shown_points())]
    assert forces == pytest.approx([SPEED * math.sqrt(k * MASS) for k in stiffness], rel=1e-9)
    sweep.set_observable("impulse")
    impulses = [y for _, y, _ in sorted(sweep.shown_points())]
    assert impulses == pytest.approx([2.0 * MASS * SPEED] * 13, rel=1e-9)
