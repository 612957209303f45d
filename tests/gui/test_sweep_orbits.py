"""Run ▸ Sweep ▸ Continue orbits: the branches drawn over the diagram.

The linear impact oscillator (m = k = 1, c = 0.1, F = 1, e = 0.8, stop at 0.2) from
ω = 1.15 down through its period doubling at ω ≈ 1.13004, with the doubled branch.
What is drawn is checked against ``python -m solver orbits`` run on the same scene
and range (its branches.csv and orbit_impacts.csv): every orbit's impact speed, solid
where the CSV says stable and dashed where not, split at the doubling, and the
doubling's marker at its row; a click on an orbit opens a scene that starts on it,
and the main window plays that period in a loop.
"""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
import time
from collections import defaultdict

import numpy as np
import pytest
from PySide6.QtCore import Qt

from impactgui.sweep_window import SweepWindow
from solver.orbits import run_map, start_state
from solver.scene import parse_scene, scene_to_dict
from tests.gui.test_sweep_window import click_at
from tests.test_orbits import oscillator


def _continued(qtbot, scene, omegas, points, step, doublings, timeout_ms):
    """A shown Sweep window on ``scene`` whose Continue orbits has run over ``omegas``
    ``(start, stop)`` (transient 100 s), the real widgets set as a user sets them."""
    sweep = SweepWindow(scene)
    qtbot.addWidget(sweep)
    sweep.resize(1100, 900)
    sweep.show()
    qtbot.waitExposed(sweep)
    sweep.first.choose("forces[0].omega", *omegas, 6)
    sweep.transient.setValue(100.0)
    overlay = sweep.orbits
    overlay.points.setValue(points)
    overlay.step.setValue(step)
    overlay.doublings.setValue(doublings)
    with qtbot.waitSignal(overlay.ended, timeout=timeout_ms) as ended:
        assert overlay.start()
        assert not overlay.button.isEnabled()  # the window keeps running meanwhile
    assert ended.args == ["finished"] and overlay.button.isEnabled()
    return sweep, overlay


def _command(tmp_path, scene, vary, step, points, more):
    """``python -m solver orbits`` on ``scene`` over ``vary``: its branches.csv rows and,
    per (branch, point), the impact speeds of orbit_impacts.csv."""
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(scene_to_dict(scene)))
    cli = subprocess.run(
        [
            sys.executable, "-m", "solver", "orbits", str(path), "--out", str(tmp_path / "out"),
            "--vary", f"forces[0].omega={vary}", "--step", step, "--transient", "100",
            "--max-points", str(points), *more,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    rows = list(csv.DictReader(open(tmp_path / "out" / "branches.csv")))
    speeds = defaultdict(list)
    for impact in csv.DictReader(open(tmp_path / "out" / "orbit_impacts.csv")):
        speeds[impact["branch"], impact["point"]].append(-float(impact["u_n_minus"]))
    return rows, speeds


def test_continue_orbits_draws_stable_solid_unstable_dashed_and_the_doubling(qtbot, tmp_path):
    scene = oscillator()
    sweep, overlay = _continued(qtbot, scene, (1.15, 1.1), 6, 0.01, 1, 120000)

    rows, speeds = _command(tmp_path, scene, "1.15:1.1", "0.01", 6, ["--follow-doubling"])

    # every orbit's impacts are on the drawn pieces, with the CSV's stability
    drawn = {
        (s.branch, p, round(v, 12), s.stable)
        for s in overlay.stretches
        for p, v in zip(s.p, s.speed, strict=True)
    }
    for row in rows:
        for v in speeds[row["branch"], row["point"]]:
            key = (int(row["branch"]), float(row["forces[0].omega"]), round(v, 12))
            assert (*key, row["stable"] == "1") in drawn
    branch0 = [s for s in overlay.stretches if s.branch == 0]
    assert [s.stable for s in branch0] == [True, False]
    pd = next(r for r in rows if r["bifurcation"] == "period_doubling")
    w_pd = float(pd["forces[0].omega"])
    assert branch0[0].p[-1] == branch0[1].p[0] == w_pd  # split at the doubling
    assert {s.branch for s in overlay.stretches} == {0, 1}
    # the pens: solid stable, dashed unstable
    styles = {item.opts["pen"].style() for item in overlay._items if item.opts["pen"] is not None}
    assert styles == {Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine}
    kinds = [k for k, *_ in overlay.marks]
    assert "period_doubling" in kinds
    (mark,) = [m for m in overlay.marks if m[0] == "period_doubling"]
    assert mark[1] == w_pd and mark[2] == pytest.approx(speeds["0", pd["point"]][0], abs=1e-12)
    assert f"period doubling at forces[0].omega = {w_pd:.9g}" in overlay.report.text()
    assert "branch 1 (period 2)" in overlay.report.text()

    # a click on a drawn orbit opens it: the scene starts on it and runs one period
    row = next(r for r in rows if r["branch"] == "0" and r["point"] == "1")
    w = float(row["forces[0].omega"])
    sweep.plot_item.vb.autoRange()
    opened = []
    sweep.orbit_requested.connect(opened.append)
    click_at(qtbot, sweep, w, speeds["0", "1"][0])
    assert len(opened) == 1
    data = opened[0]
    assert data["forces"][0]["omega"] == w and data["solver"]["t_end"] == 2 * math.pi / w
    z0 = np.array([data["bodies"][0]["x"], data["bodies"][0]["vx"]])
    assert np.array_equal(z0, [float(row["mass.x"]), float(row["mass.vx"])])
    assert "periodic orbit (period 1, stable)" in data["title"] and "multipliers" in data["title"]
    # the program's own run of that scene over its end time comes back to where it started
    back = run_map(parse_scene(data), start_state(parse_scene(data)), data["solver"]["t_end"])
    assert np.max(np.abs(back.z_end - z0)) < 1e-10


def test_an_orbit_opened_from_the_sweep_plays_its_period_in_a_loop(qtbot, window):
    window.doc.set_data(scene_to_dict(oscillator()))
    window.sweep_action.trigger()
    sweep = window.sweeps.windows[-1]
    qtbot.waitExposed(sweep)
    sweep.first.choose("forces[0].omega", 1.15, 1.1, 6)
    sweep.transient.setValue(100.0)
    sweep.orbits.points.setValue(2)
    sweep.orbits.step.setValue(0.01)
    with qtbot.waitSignal(sweep.orbits.ended, timeout=120000):
        assert sweep.orbits.start()
    p, orbit, _mark = sweep.orbits.branches[0].rows[0]
    speed = abs(orbit.impacts[0].normal_velocities(np.eye(1))[0])  # m = 1
    sweep.plot_item.vb.autoRange()
    click_at(qtbot, sweep, p, speed)
    qtbot.waitUntil(lambda: window.run_state == "finished", timeout=60000)
    data = window.doc.data
    period = 2 * math.pi / p
    assert data["solver"]["t_end"] == period and "periodic orbit" in data["title"]
    clock = window.clock
    assert clock.end_time() == period
    shown = []
    clock.frame_shown.connect(lambda frame, _events: shown.append(frame))

    def tick_past_the_end() -> None:
        """One display tick, by hand, from 10 ms before the end over 20 ms (speed 1)."""
        clock.pause()
        clock.set_speed(1.0)
        clock.seek(clock.end_time() - 0.01)
        clock._playing = True  # as the timer would, 20 ms later
        clock._last_tick = time.monotonic() - 0.02
        clock._on_tick()

    tick_past_the_end()
    assert clock.time == 0.0 and clock.index == 0 and clock.is_playing  # wrapped, plays on
    start = shown[-1]
    end = clock.trajectory.frame(len(clock.trajectory) - 1)
    assert start.t == 0.0 and end.t == period
    z0 = [data["bodies"][0]["x"], data["bodies"][0]["vx"]]
    assert np.array_equal([start.q[0], start.v[0]], z0)
    # the orbit is periodic: where the loop jumps from is where it lands, so no jump is seen
    assert np.max(np.abs(np.concatenate([end.q - start.q, end.v - start.v]))) < 1e-9

    # an ordinary scene (any change makes it one) stops at its end
    window.doc.set_data(dict(data, title="not an orbit"))
    assert window.start_run()
    qtbot.waitUntil(lambda: window.run_state == "finished", timeout=60000)
    tick_past_the_end()
    assert clock.time == clock.end_time() == period and not clock.is_playing


def test_continue_orbits_says_why_it_cannot_run(qtbot):
    sweep = SweepWindow(oscillator(forcing=False))
    qtbot.addWidget(sweep)
    sweep.first.choose("springs[0].stiffness", 1.0, 2.0, 3)
    with qtbot.waitSignal(sweep.orbits.ended, timeout=60000) as ended:
        sweep.orbits.start()
    assert ended.args == ["finished"]
    assert "harmonic" in sweep.orbits.report.text() and not sweep.orbits.stretches


def test_continue_orbits_on_a_compliant_stop_draws_its_touch_speeds(qtbot):
    """A linear compliant stop (tests/test_orbits_compliant.py's bead, k = 400, c = 2) is
    continued like a rigid one: each orbit's one contact is drawn at its touch speed (the
    engine's touch, replayed here with the program's own run), stable then dashed past
    the period doubling at ω ≈ 2.2345."""
    from solver.orbits import orbit_scene
    from solver.record import Trajectory
    from solver.scene_paths import with_values
    from solver.simulation import drive, make_stepper
    from solver.system import System
    from tests.test_orbits_compliant import compliant_oscillator

    scene = compliant_oscillator()
    sweep = SweepWindow(scene)
    qtbot.addWidget(sweep)
    sweep.first.choose("forces[0].omega", 2.0, 2.3, 4)
    sweep.transient.setValue(120.0)
    overlay = sweep.orbits
    overlay.points.setValue(32)
    overlay.step.setValue(0.05)
    with qtbot.waitSignal(overlay.ended, timeout=180000) as ended:
        assert overlay.start()
    assert ended.args == ["finished"]
    assert "compliance" not in overlay.report.text()
    (followed,) = overlay.branches
    drawn = {(p, round(v, 9)) for s in overlay.stretches for p, v in zip(s.p, s.speed, strict=True)}
    for p, orbit, _ in followed.rows:
        (touch,) = orbit.contacts
        assert touch.kind == "touch"
        # the touch's speed from an ordinary run of the scene started on the orbit
        started = System(orbit_scene(with_values(scene, {"forces[0].omega": p}), orbit))
        stepper = make_stepper(started, t_end=orbit.span, method="event-driven", dt_out=0.01)
        trajectory = Trajectory(started)
        drive(stepper, trajectory)
        (event,) = [e for e in trajectory.events if e.type == "touch"]
        assert event.t == pytest.approx(touch.t, abs=1e-9)
        assert (p, round(abs(float(touch.v_minus[0])), 9)) in drawn
    assert [s.stable for s in overlay.stretches if s.branch == 0] == [True, False]
    assert [k for k, *_ in overlay.marks if k == "period_doubling"]


def _ticks(axis) -> list[tuple[float, float]]:
    """The tick values an axis labels now, ``(spacing, value)``."""
    low, high = axis.range
    size = axis.geometry().height() if axis.orientation in ("left", "right") else 1.0
    return [
        (spacing, value) for spacing, values in axis.tickValues(low, high, size) for value in values
    ]


def test_continue_orbits_follows_a_period_doubling_cascade(qtbot, tmp_path):
    """The box's "doubled branches" at 3: branches of periods 1, 2, 4, 8, each started at the
    located doubling of the one before, all drawn (each in its own colour) as
    ``python -m solver orbits --doublings 3`` writes them (the box used to follow one
    doubled branch at most: a check box)."""
    scene = oscillator()
    sweep, overlay = _continued(qtbot, scene, (2.26, 2.285), 8, 0.05, 3, 300000)

    rows, speeds = _command(tmp_path, scene, "2.26:2.285", "0.05", 8, ["--doublings", "3"])
    assert {r["branch"]: r["period"] for r in rows} == {"0": "1", "1": "2", "2": "4", "3": "8"}

    # every orbit of the four branches is drawn, with the CSV's stability
    drawn = {
        (s.branch, p, round(v, 12), s.stable)
        for s in overlay.stretches
        for p, v in zip(s.p, s.speed, strict=True)
    }
    for row in rows:
        assert len(speeds[row["branch"], row["point"]]) == int(row["period"])
        for v in speeds[row["branch"], row["point"]]:
            key = (int(row["branch"]), float(row["forces[0].omega"]), round(v, 12))
            assert (*key, row["stable"] == "1") in drawn
    assert {s.branch for s in overlay.stretches} == {0, 1, 2, 3}
    assert len(overlay.branches) == 4 and all(not f.failure for f in overlay.branches)
    # each doubled branch starts at the doubling of the branch before, marked there
    doublings = [
        float(next(r for r in rows if r["branch"] == b and r["bifurcation"] == "period_doubling")
              ["forces[0].omega"])
        for b in "012"
    ]  # fmt: skip
    for b, w_pd in enumerate(doublings, start=1):
        assert overlay.branches[b].rows[0][0] == w_pd
        assert any(k == "period_doubling" and p == w_pd for k, p, _s in overlay.marks)
        assert f"period doubling at forces[0].omega = {w_pd:.9g}" in overlay.report.text()
    assert all(f"branch {b} (period {2**b})" in overlay.report.text() for b in range(4))
    # each branch in its own colour
    colours = {}
    for item in overlay._items:
        name = item.opts.get("name") or ""
        if name.startswith("branch "):
            colours.setdefault(int(name.split()[1].rstrip(",")), set()).add(
                item.opts["pen"].color().getRgb()
            )
    assert sorted(colours) == [0, 1, 2, 3]
    assert len({c for cs in colours.values() for c in cs}) == 4
    sweep.plot_item.vb.autoRange()
    qtbot.wait(50)
    # the impact speeds (0.17-0.30 m/s) read in m/s: pyqtgraph's prefix wrote "170-300" and
    # "(m/s) (x0.001)"
    left = sweep.plot_item.getAxis("left")
    assert left.autoSIPrefixScale == 1.0 and "x0.001" not in left.labelString()
    assert all(0.1 < v < 0.4 for _p, v in _ticks(left))
    bar = sweep.controls_scroll.verticalScrollBar()
    bar.setValue(bar.maximum())  # the "Periodic orbits" box and its list in view
    qtbot.wait(200)
    sweep.grab().save(str(tmp_path / "sweep_cascade.png"))
