"""The nonholonomic cart lab (issue 4 item 7): strike the rolling axle cart during a run.

The canvas's impulse tool asks for an impulse with ``impulse_requested``; the
window hands it to the stepper in the worker thread, the velocity jump is
logged and plotted, and the cart rolls on without slipping.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from PySide6.QtCore import Qt

from solver.frames import Event, Frame
from solver.nonholonomic import AxleCart, impulsive_response
from tests.gui.conftest import scene_path

ALONG = 0.05
"""Where the test strikes the axle: metres from C towards wheel B."""
S = (0.3, 0.8)
"""The impulse the test gives, N·s (world axes)."""


def _cart_model() -> AxleCart:
    body = json.loads(scene_path("axle_cart").read_text())["bodies"][0]
    return AxleCart(
        body["axle_mass"], body["half_length"], body["wheel_mass"], body["wheel_radius"]
    )


def _axle_point(frame: Frame, along: float) -> list[float]:
    """World point ``along`` m from the cart's centre along its axle, in ``frame``."""
    x, y, phi = frame.q[:3]
    return [float(x + along * math.cos(phi)), float(y + along * math.sin(phi))]


def _impulse_events(window) -> list[Event]:
    return [event for event in window.runner.trajectory.events if event.type == "impulse"]


@pytest.fixture
def cart_run(qtbot, window):
    """The axle-cart scene running at real time, shown from t = 0.3 s on."""
    assert window.open_file(scene_path("axle_cart"))
    assert window.start_run()
    qtbot.waitUntil(lambda: window.clock.time >= 0.3, timeout=5000)
    return window


def test_an_impulse_during_the_run_jumps_the_rates_and_the_cart_rolls_on(qtbot, cart_run):
    window = cart_run
    trajectory = window.runner.trajectory
    shown = trajectory.frame(window.clock.index)
    window.canvas.impulse_requested.emit("cart", _axle_point(shown, ALONG), list(S))
    assert "handed to the solver" in window.statusBar().currentMessage()

    qtbot.waitUntil(lambda: len(_impulse_events(window)) == 1, timeout=5000)
    event = _impulse_events(window)[0]
    assert shown.t <= event.t <= shown.t + 0.5  # the scene's own impulse is at 4 s
    qtbot.waitUntil(lambda: trajectory.times()[-1] >= event.t + 0.5, timeout=5000)

    # the jump: the multiplier-free impulse response of the cart, computed here on its own
    frames = trajectory.frames
    pre = next(f for f in frames if f.kind == "pre" and f.t == event.t)
    post = next(f for f in frames if f.kind == "post" and f.t == event.t)
    cart = _cart_model()
    q_hat = cart.generalized_impulse(pre.q, ALONG, S)
    expected = impulsive_response(
        cart.mass_matrix(pre.q), cart.constraint_matrix(pre.q), q_hat, pre.v
    )
    np.testing.assert_allclose(event.v_minus, pre.v, rtol=0, atol=1e-12)
    np.testing.assert_allclose(event.v_plus, expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(post.v, expected, rtol=0, atol=1e-10)
    assert not np.allclose(post.v, pre.v)
    assert event.normal_impulse == pytest.approx(math.hypot(*S))
    work = cart.kinetic_energy(pre.q, expected) - cart.kinetic_energy(pre.q, pre.v)
    assert event.energy_change == pytest.approx(work, abs=1e-12)

    # the cart rolls on: later frames move and keep A v = 0
    later = [f for f in frames if f.t > event.t]
    assert len(later) >= 40
    for frame in later:
        assert np.max(np.abs(cart.constraint_matrix(frame.q) @ frame.v)) <= 1e-9
    assert np.linalg.norm(later[-1].q[:2] - post.q[:2]) > 1e-3

    # shown: a row of the event log with the five rates before and after ...
    model = window.event_log.table_model
    row = next(i for i, e in enumerate(model.events) if e.type == "impulse")
    cells = [model.data(model.index(row, column)) for column in range(model.columnCount())]
    assert cells[1] == "impulse"
    assert cells[3].startswith("cart (") and cells[3].count(",") == 4
    assert cells[4].startswith("cart (") and cells[4].count(",") == 4
    assert f"{math.hypot(*S):.4g}" in cells[5]
    tooltip = model.data(model.index(row, 4), Qt.ItemDataRole.ToolTipRole)
    for name in ("vxC", "vyC", "omega", "omegaA", "omegaB"):
        assert f"{name} = " in tooltip
    # ... stems of every rate's jump and of |S|, and the energy put in
    window.plots.redraw()
    jumps = window.plots.jump_data()
    for index, name in enumerate(("vxC", "vyC", "omega", "omegaA", "omegaB")):
        delta = expected[index] - pre.v[index]
        if abs(delta) > 1e-12:
            x, y = jumps[f"cart Δ{name}"]
            assert x[-1] == event.t and y[-1] == pytest.approx(delta)
    x, y = window.plots.impulse_data()["applied |S|"]
    assert list(x) == [event.t] and y[0] == pytest.approx(math.hypot(*S))
    t, work_in = window.plots.energy_curves["input"].getData()
    assert work_in[t > event.t][0] == pytest.approx(work, abs=1e-12)
    assert work_in[t < event.t].max() == 0.0


def test_a_point_off_the_axle_is_refused_with_a_message(qtbot, cart_run):
    window = cart_run
    shown = window.runner.trajectory.frame(window.clock.index)
    window.canvas.impulse_requested.emit("cart", _axle_point(shown, 0.15), list(S))
    message = window.statusBar().currentMessage()
    assert "Impulse refused" in message and "axle" in message
    window.canvas.impulse_requested.emit("cart", _axle_point(shown, 0.0), [0.0, 0.0])
    assert "zero" in window.statusBar().currentMessage()
    qtbot.wait(300)
    assert window.run_state == "running"
    assert _impulse_events(window) == []


def test_an_impulse_while_paused_acts_at_once(qtbot, cart_run):
    window = cart_run
    window.pause_run()
    qtbot.wait(100)
    computed = len(window.runner.trajectory)
    shown = window.runner.trajectory.frame(window.clock.index)
    window.canvas.impulse_requested.emit("cart", _axle_point(shown, 0.0), list(S))
    qtbot.waitUntil(lambda: len(_impulse_events(window)) == 1, timeout=5000)
    assert window.run_state == "paused"
    assert len(window.runner.trajectory) == computed + 2  # its pre and post frames only
    assert window.event_log.row_count() == 1


def test_after_the_run_the_impulse_tool_says_what_to_do(qtbot, window):
    assert window.open_file(scene_path("axle_cart"))
    window.playback_bar.set_speed(math.inf)
    assert window.start_run()
    qtbot.waitUntil(lambda: window.run_state == "finished", timeout=10000)
    window.canvas.impulse_requested.emit("cart", [0.0, 0.0], list(S))
    assert "Reset" in window.statusBar().currentMessage()
