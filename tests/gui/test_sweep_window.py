"""Run ▸ Sweep: real sweeps of bundled scenes, streamed, cancelled, exported and clicked.

Numbers are checked against closed forms: the bouncing ball's accumulation
time ``t∞ = √(2h/g)(1 + e)/(1 − e)`` and the elastic mass between two stops,
whose every impact has the approach speed it started with, at
``t_k = (0.5 m + k·1 m)/V``. The exported CSV files are compared byte for
byte with what ``python -m solver sweep`` writes for the same grid.
"""

from __future__ import annotations

import math
import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, Qt

from impactgui.sweep_window import IMPACT_SPEED, SweepWindow
from tests.gui.conftest import distinct_colours, scene_path

G = 9.81


def t_zeno(h: float, e: float) -> float:
    """Accumulation time of a ball dropped from rest through ``h`` (m) with restitution ``e``."""
    return math.sqrt(2.0 * h / G) * (1.0 + e) / (1.0 - e)


def open_sweep(qtbot, window, scene: str) -> SweepWindow:
    """Open the bundled ``scene`` in the main window, then Run ▸ Sweep from the menu."""
    assert window.open_preset(scene_path(scene))
    window.sweep_action.trigger()
    sweep = window.sweeps.windows[-1]
    qtbot.waitExposed(sweep)
    sweep.workers.setValue(2)
    return sweep


def run_sweep(qtbot, sweep: SweepWindow, timeout_ms: int = 60000) -> list[int]:
    """Start the sweep and wait for its end; the ``point_added`` counts seen on the way."""
    seen: list[int] = []
    sweep.point_added.connect(seen.append)
    assert sweep.start(), sweep.status.text()
    qtbot.waitUntil(lambda: sweep.state != "running", timeout=timeout_ms)
    assert sweep.state == "finished", sweep.status.text()
    return seen


def click_at(qtbot, sweep: SweepWindow, x: float, y: float) -> None:
    """A real left click on the plot at data coordinates ``(x, y)``."""
    scene_pos = sweep.plot_item.vb.mapViewToScene(QPointF(x, y))
    pos = sweep.plot.mapFromScene(scene_pos)
    qtbot.mouseClick(sweep.plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def test_restitution_sweep_streams_t_zeno_of_the_closed_form(qtbot, window, tmp_path: Path):
    sweep = open_sweep(qtbot, window, "bouncing_ball")
    sweep.first.choose("contact.restitution", 0.3, 0.5, 3)
    sweep.set_observable("t_zeno")
    seen = run_sweep(qtbot, sweep)

    assert seen == [1, 2, 3]
    assert sweep.progress.value() == sweep.progress.maximum() == 3
    shown = sorted(sweep.shown_points())
    assert [x for x, _, _ in shown] == pytest.approx([0.3, 0.4, 0.5])
    expected = [t_zeno(1.0, e) for e in (0.3, 0.4, 0.5)]
    assert [y for _, y, _ in shown] == pytest.approx(expected, rel=1e-9)
    assert sweep.plot_item.getAxis("bottom").labelText == "restitution e"

    png = tmp_path / "t_zeno.png"
    assert sweep.export_png(png)
    assert distinct_colours(png) > 5


def test_exported_csv_files_are_the_bytes_of_the_command_line(qtbot, window, tmp_path: Path):
    sweep = open_sweep(qtbot, window, "bouncing_ball")
    sweep.first.choose("contact.restitution", 0.3, 0.5, 3)
    sweep.transient.setValue(0.9)
    sweep.dt_out.setValue(0.25)
    run_sweep(qtbot, sweep)
    app_files = sweep.export_csv(tmp_path / "app")
    assert app_files is not None

    cli = subprocess.run(
        [
            sys.executable, "-m", "solver", "sweep", str(scene_path("bouncing_ball")),
            "--vary", "contact.restitution=0.3:0.5:3", "--out", str(tmp_path / "cli"),
            "--workers", "1", "--transient", "0.9", "--dt-out", "0.25",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert len((tmp_path / "app" / "impacts.csv").read_text().splitlines()) > 3
    for name in ("summary.csv", "impacts.csv"):
        assert (tmp_path / "app" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()


def test_bifurcation_diagram_of_the_elastic_mass_between_stops(qtbot, window):
    sweep = open_sweep(qtbot, window, "mass_between_stops")
    sweep.first.choose("bodies[0].vx", 1.0, 2.0, 3)
    sweep.transient.setValue(5.0)
    sweep.set_observable(IMPACT_SPEED)
    run_sweep(qtbot, sweep)

    shown = sweep.shown_points()
    for speed in (1.0, 1.5, 2.0):
        # free travel 1 m, the first contact 0.5 m away: impacts at (0.5 + k)/V
        expected = sum(1 for k in range(100) if 5.0 <= (0.5 + k) / speed <= 10.0)
        speeds = [y for x, y, _ in shown if x == pytest.approx(speed)]
        assert len(speeds) == expected
        assert speeds == pytest.approx([speed] * expected, rel=1e-12)

    sweep.plot_item.vb.setRange(xRange=(0.9, 2.1), yRange=(0.9, 2.1), padding=0)
    click_at(qtbot, sweep, 1.5, 1.5)
    qtbot.waitUntil(lambda: window.runner is not None, timeout=10000)
    assert window.doc.data["bodies"][0]["vx"] == pytest.approx(1.5)
    assert "bodies[0].vx = 1.5" in window.doc.data["title"]
    assert window.run_state in ("running", "finished")


def colour_map_sweep(qtbot, window) -> SweepWindow:
    """The bouncing ball's t_zeno over e = 0.3, 0.5 and a drop height of 0.6, 1.1 m, run."""
    sweep = open_sweep(qtbot, window, "bouncing_ball")
    sweep.first.choose("contact.restitution", 0.3, 0.5, 2)
    sweep.second_enabled.setChecked(True)
    sweep.second.choose("bodies[0].position[1]", 0.6, 1.1, 2)
    sweep.set_observable("t_zeno")
    run_sweep(qtbot, sweep)
    return sweep


def test_two_fields_make_a_colour_map_and_a_cell_opens_its_run(qtbot, window):
    sweep = colour_map_sweep(qtbot, window)

    grid = sweep.image.image
    assert grid.shape == (2, 2)
    for i, e in enumerate((0.3, 0.5)):
        for j, height in enumerate((0.5, 1.0)):  # the centre is one radius (0.1 m) up
            assert grid[i, j] == pytest.approx(t_zeno(height, e), rel=1e-9)
    assert sweep.colour_bar is not None

    click_at(qtbot, sweep, 0.5, 0.6)
    qtbot.waitUntil(lambda: window.runner is not None, timeout=10000)
    assert window.doc.data["contact"]["restitution"] == pytest.approx(0.5)
    assert window.doc.data["bodies"][0]["position"][1] == pytest.approx(0.6)


def test_cancel_stops_a_long_sweep_at_once_and_keeps_the_window_usable(qtbot, window):
    assert window.open_preset(scene_path("mass_between_stops"))
    data = window.doc.data
    data["solver"].update(t_end=1e5, dt_out=0.1)  # 10⁵ impacts per point: many minutes each
    window.doc.set_data(data)
    window.sweep_action.trigger()
    sweep = window.sweeps.windows[-1]
    sweep.workers.setValue(2)
    sweep.first.choose("bodies[0].vx", 1.0, 2.0, 4)
    assert sweep.start()
    qtbot.wait(1500)
    assert sweep.is_running()
    sweep.cancel()
    assert sweep.state == "cancelling"  # cancel() returns at once, the window stays live
    qtbot.waitUntil(lambda: not sweep.is_running(), timeout=20000)  # a point takes minutes

    assert sweep.state == "cancelled"
    assert sweep.run_button.isEnabled()
    assert not sweep.cancel_button.isEnabled()
    assert sweep.progress.value() == 0
    assert not multiprocessing.active_children()  # the pool's processes were stopped
    sweep.t_end.setValue(10.0)
    sweep.first.choose("bodies[0].vx", 1.0, 1.0, 1)
    run_sweep(qtbot, sweep)
    assert len(sweep.result.by_run) == 1


def test_a_range_the_scene_refuses_is_named_before_anything_runs(qtbot, window):
    sweep = open_sweep(qtbot, window, "bouncing_ball")
    sweep.first.choose("bodies[0].mass", -1.0, 1.0, 3)
    assert not sweep.start()
    assert "bodies[0].mass" in sweep.status.text()
    assert not sweep.is_running()


def test_the_scene_numbers_are_listed_with_their_units(qtbot, window):
    sweep = open_sweep(qtbot, window, "forced_mass_between_stops")
    items = {
        sweep.first.combo.itemData(k): sweep.first.combo.itemText(k)
        for k in range(sweep.first.combo.count())
    }
    assert "(rad/s, now 10)" in items["forces[0].omega"]
    assert "(N, now 20)" in items["forces[0].amplitude[0]"]
    assert "(kg, now 1)" in items["bodies[0].mass"]
    assert "(m, now 0.05)" in items["bodies[0].radius"]
    assert "(m/s, now 0)" in items["bodies[0].vx"]
    assert "(dimensionless, now 0.8)" in items["contact.restitution"]
    assert "(dimensionless, now 0)" in items["contact.friction"]
    assert sweep.first.path() == "forces[0].omega"
    assert sweep.second.path() == "contact.restitution"
    assert sweep.transient.value() == pytest.approx(15.0)  # half the forced run
    observables = [sweep.observable.itemText(k) for k in range(sweep.observable.count())]
    assert "final mass.vx (m/s)" in observables and "final mass.x (m)" in observables


# ------------------------------------------------------------- on a Dask cluster


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("127.0.0.1:8786", "write tcp://HOST:PORT"),
        ("tcp://127.0.0.1", "write tcp://HOST:PORT"),
        ("tcp://127.0.0.1:99999", "the port must be 1 to 65535"),
    ],
)
def test_a_malformed_scheduler_address_is_named_before_anything_runs(
    qtbot, window, address, problem
):
    sweep = open_sweep(qtbot, window, "bouncing_ball")
    sweep.use_dask(address)
    assert not sweep.workers.isEnabled() and sweep.scheduler.isEnabled()
    assert not sweep.start()
    assert "Dask scheduler address" in sweep.status.text()
    assert problem in sweep.status.text()
    assert not sweep.is_running()


def test_an_unreachable_scheduler_fails_with_its_reason_and_the_window_stays_live(qtbot, window):
    pytest.importorskip("distributed")
    sweep = open_sweep(qtbot, window, "bouncing_ball")
    sweep.first.choose("contact.restitution", 0.3, 0.5, 3)
    sweep.use_dask("tcp://127.0.0.1:9")  # the discard port: nothing listens
    assert sweep.start()
    # the connection is tried in the sweep's thread: start() has returned before it failed
    assert sweep.state == "running" and sweep.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: not sweep.is_running(), timeout=60000)
    assert sweep.state == "failed"
    assert "cannot reach tcp://127.0.0.1:9" in sweep.status.text()
    assert sweep.run_button.isEnabled()


def test_a_sweep_on_a_dask_cluster_streams_the_closed_form(qtbot, window):
    distributed = pytest.importorskip("distributed")
    sweep = open_sweep(qtbot, window, "bouncing_ball")
    sweep.first.choose("contact.restitution", 0.3, 0.5, 3)
    sweep.set_observable("t_zeno")
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        sweep.use_dask(cluster.scheduler_address)
        assert sweep.workers.isEnabled() is False
        seen = run_sweep(qtbot, sweep, timeout_ms=120000)
    assert sorted(seen) == [1, 2, 3]
    shown = sorted(sweep.shown_points())
    assert [x for x, _, _ in shown] == pytest.approx([0.3, 0.4, 0.5])
    expected = [t_zeno(1.0, e) for e in (0.3, 0.4, 0.5)]
    assert [y for _, y, _ in shown] == pytest.approx(expected, rel=1e-9)
    sweep.use_dask(None)
    assert sweep.workers.isEnabled() and not sweep.scheduler.isEnabled()
