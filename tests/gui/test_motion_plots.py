"""Motion plots x(t), y(t), v(t), ω(t) against closed forms: free flight and a bead on a rail."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tests.gui.conftest import run_to_end

G = 9.81


def _scene(tmp_path: Path, bodies: list[dict], t_end: float = 0.4, e: float = 0.5) -> Path:
    scene = {
        "format": "impactgui-scene",
        "version": 2,
        "title": "free motion",
        "view": "side",
        "gravity": [0.0, -G],
        "contact": {"restitution": e, "friction": 0.0, "impact_law": "staged"},
        "boundaries": [],
        "bodies": bodies,
        "springs": [],
        "forces": [],
        "impulses": [],
        "solver": {"method": "event-driven", "t_end": t_end, "dt_out": 0.01, "dt": 0.001},
    }
    path = tmp_path / "free.json"
    path.write_text(json.dumps(scene))
    return path


WHEEL = {
    "id": "wheel",
    "type": "wheel",
    "mass": 2.0,
    "inertia": 0.01,
    "radius": 0.1,
    "position": [0.2, 1.5],
    "angle": 0.0,
    "velocity": [0.3, 0.0],
    "angular_velocity": 2.0,
}
BEAD = {"id": "bead", "type": "bead", "rail_y": 0.25, "mass": 1.0, "radius": 0.05, "x": -0.5,
        "vx": 0.5}  # fmt: skip


def test_free_flight_of_a_wheel_follows_the_parabola(qtbot, window, tmp_path: Path) -> None:
    assert window.open_file(_scene(tmp_path, [WHEEL]))
    run_to_end(qtbot, window)
    plots = window.motion_plots
    assert plots.bodies == ["wheel"]
    t, x = plots.series("wheel", "x")
    _, y = plots.series("wheel", "y")
    _, v = plots.series("wheel", "v")
    _, omega = plots.series("wheel", "omega")
    assert t[-1] == pytest.approx(0.4)
    assert np.allclose(x, 0.2 + 0.3 * t, atol=1e-9)
    assert np.allclose(y, 1.5 - 0.5 * G * t**2, atol=1e-9)
    assert np.allclose(v, np.hypot(0.3, G * t), atol=1e-9)
    assert np.allclose(omega, 2.0, atol=1e-12)  # no torque in free flight
    assert plots.plot_of["omega"].isVisible()
    # hidden behind the live plots, no curve is made; raised, they show the run
    assert plots.curves == {}
    window.motion_dock.raise_()
    qtbot.waitUntil(lambda: ("wheel", "y") in plots.curves)
    assert np.array_equal(plots.curves["wheel", "y"].getData()[1], y)
    assert plots.curves["wheel", "v"].name() == "wheel |v|"


def test_a_bead_plots_its_signed_rail_velocity_and_no_spin(qtbot, window, tmp_path: Path) -> None:
    assert window.open_file(_scene(tmp_path, [BEAD]))
    run_to_end(qtbot, window)
    plots = window.motion_plots
    t, x = plots.series("bead", "x")
    _, y = plots.series("bead", "y")
    _, v = plots.series("bead", "v")
    assert np.allclose(x, -0.5 + 0.5 * t, atol=1e-12)
    assert np.all(y == 0.25)
    assert np.all(v == 0.5)
    window.motion_dock.raise_()
    qtbot.waitUntil(lambda: ("bead", "v") in plots.curves)
    assert ("bead", "omega") not in plots.curves
    assert not plots.plot_of["omega"].isVisible()
    assert plots.curves["bead", "v"].name() == "bead vx"


def test_selecting_a_body_plots_it_alone(qtbot, window, tmp_path: Path) -> None:
    assert window.open_file(_scene(tmp_path, [WHEEL, BEAD]))
    run_to_end(qtbot, window)
    plots = window.motion_plots
    assert plots.bodies == ["wheel", "bead"]  # nothing selected: the first bodies
    window.doc.select(("bodies", 1))
    assert plots.bodies == ["bead"]
    t, x = plots.series("bead", "x")
    assert len(t) == len(window.runner.trajectory)  # rebuilt from the whole run
    assert np.allclose(x, -0.5 + 0.5 * t, atol=1e-12)
    window.doc.select(None)
    assert plots.bodies == ["wheel", "bead"]


def test_an_impact_is_a_vertical_step_in_v(qtbot, window, tmp_path: Path) -> None:
    # two equal beads, elastic: the first stops and the second leaves at 0.5 m/s
    other = {**BEAD, "id": "other", "x": 0.0, "vx": 0.0}
    assert window.open_file(_scene(tmp_path, [BEAD, other], t_end=1.0, e=1.0))
    run_to_end(qtbot, window)
    t, v = window.motion_plots.series("bead", "v")
    # contact when the centres are 0.1 m apart: x = -0.5 + 0.5 t = -0.1 at t = 0.8 s
    jump = int(np.argmax(np.diff(v) != 0))
    assert t[jump] == pytest.approx(0.8, abs=1e-9)
    assert t[jump + 1] == t[jump]  # pre and post frames at the same instant
    assert v[jump] == pytest.approx(0.5) and v[jump + 1] == pytest.approx(0.0, abs=1e-12)
    _, v_other = window.motion_plots.series("other", "v")
    assert v_other[-1] == pytest.approx(0.5)
    assert math.isclose(t[-1], 1.0)


def test_a_coordinate_flat_to_round_off_shows_a_clean_axis(qtbot, tmp_path: Path) -> None:
    # issue 25: round-off read 0 on the τ axis; a motion plot's axis spread a rolling wheel's
    # height 0.1 m ± 3e-17 over its whole height, ticks 1e-17 apart
    from impactgui.motion_plots import MotionPlots
    from solver.frames import EnergyBudget, Frame, StepOutput
    from solver.record import Trajectory
    from solver.scene import load_scene
    from solver.system import System

    system = System(load_scene(_scene(tmp_path, [WHEEL])))
    plots = MotionPlots()
    qtbot.addWidget(plots)
    plots.resize(520, 900)
    plots.show()
    plots.set_quantities(("x", "y", "vy", "v", "omega"))
    trajectory = Trajectory()
    plots.set_run(trajectory, system, None)
    noise = (1.4e-17, -2.8e-17, 0.0)
    frames = [
        Frame(
            k * 1e-3,
            "sample",
            np.array([0.2 + 0.3e-3 * k, 0.1 + noise[k % 3], -3e-3 * k]),  # rolls: ω r = -v
            np.array([0.3, 100 * noise[k % 3], -3.0 + 16 * noise[(k + 1) % 3]]),
            (),
            EnergyBudget(0.09, 0.0, 0.0, 0.0, 0.0),
        )
        for k in range(200)
    ]
    trajectory.append(StepOutput(frames, []))
    plots.redraw()
    x_view = plots.plot_of["x"].vb
    qtbot.waitUntil(lambda: x_view.viewRange()[1][1] < 0.3)  # pyqtgraph's auto-range ran
    # (quantity, the value it stands at): the wheel's height, ẏ, speed and spin
    for quantity, value in (("y", 0.1), ("vy", 0.0), ("v", 0.3), ("omega", -3.0)):
        plot = plots.plot_of[quantity]
        low, high = plot.vb.viewRange()[1]
        margin = 0.2 * abs(value) or 1.0
        assert (low, high) == pytest.approx((value - margin, value + margin), rel=1e-9), quantity
        axis = plot.getAxis("left")
        texts = [
            text
            for spacing, values in axis.tickValues(low, high, axis.height())
            for text in axis.tickStrings(values, 1.0, spacing)
        ]
        assert len(set(texts)) >= 2 and not any("e" in text for text in texts), (quantity, texts)
    # x moves: pyqtgraph's auto-range shows it all, as before
    low, high = x_view.viewRange()[1]
    assert low <= 0.2 and 0.2 + 0.3e-3 * 199 <= high
    # once the height moves (a bounce), the axis follows the data again
    more = [
        Frame(0.2 + k * 1e-3, "sample", np.array([0.26, 0.1 + 0.01 * k, 0.0]), np.zeros(3), (),
              EnergyBudget(0.09, 0.0, 0.0, 0.0, 0.0))
        for k in range(1, 30)
    ]  # fmt: skip
    trajectory.append(StepOutput(more, []))
    plots.redraw()
    qtbot.waitUntil(lambda: plots.plot_of["y"].vb.viewRange()[1][1] >= 0.1 + 0.01 * 29)
    plots.clear()
