"""Run ▸ Sweep plots summary.csv's period: paper 003's T(V) of a mass, a spring and a stop.

T(u) = (2/λ)(π − arctan(u/(λ x₁))), λ = 10 1/s, the stop x₁ = 0.05 m beyond the
rest point (paper 003 (44), V read as the speed of arrival).
"""

from __future__ import annotations

import math

import pytest

from tests.gui.test_sweep_window import open_sweep, run_sweep


def test_period_of_the_spring_stop_against_the_leaving_speed(qtbot, window):
    sweep = open_sweep(qtbot, window, "mass_spring_stop_offset")
    sweep.first.choose("bodies[0].vx", -0.5, -2.0, 4)
    sweep.transient.setValue(0.5)
    sweep.set_observable("period_s")
    run_sweep(qtbot, sweep)
    shown = sorted(sweep.shown_points())
    assert [x for x, _, _ in shown] == pytest.approx([-2.0, -1.5, -1.0, -0.5])
    expected = [0.2 * (math.pi - math.atan(-x / 0.5)) for x, _, _ in shown]
    assert [y for _, y, _ in shown] == pytest.approx(expected, abs=1e-9)
