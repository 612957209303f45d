"""A live run's plots show, at every playback time, the data the window has up to that time,
on one time range.

The paper-004 wheel (restitution 0.3, friction 0.4) strikes the curb's side at
t = 0.0317 s and its vertex at t = 0.0926 s; the solver computes far ahead of
the screen. The plots are redrawn in turns (energy, contacts, stems, a timer
tick each), and the stems of those impacts and the last frames of the energy
curves waited for their turn while the time shown passed them. Now a plot
holds back at most what lies within one pixel column of the time axis before
the time shown (a column of 0-100 s is 10 frames at the run's start), and a
group's first stem not even that.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from impactgui.plots import CATCH_UP_FRAMES
from impactgui.presets import SCENES_DIR
from solver.scene import load_scene, scene_to_dict


def _column(plot) -> float:
    """Width of one pixel column of ``plot``'s time range, s: stems are drawn one per column."""
    (t0, t1), _ = plot.vb.viewRange()
    return (t1 - t0) / max(1.0, plot.vb.width())


def _drawn_stem_times(plot) -> np.ndarray:
    """Times of the stems drawn in ``plot`` (the tips' abscissae of its stem curves)."""
    times = [np.zeros(0)]
    for item in plot.items:
        if isinstance(item, pg.PlotCurveItem) and item.opts.get("connect") == "pairs":
            x, _ = item.getData()
            if x is not None:
                times.append(np.asarray(x))
    return np.concatenate(times)


def test_stems_and_energy_reach_the_time_shown_while_the_wheel_streams(qtbot, window) -> None:
    data = scene_to_dict(load_scene(SCENES_DIR / "wheel_curb_e03.json"))
    data["solver"] = {**data["solver"], "t_end": 100.0}
    window.doc.set_data(data)
    panel = window.plots
    have = {"frames": 0}
    misses: list[str] = []
    checked = {"impacts": 0, "frames": 0}

    def on_frames(count: int) -> None:
        have["frames"] = count

    def on_time(t: float) -> None:  # after the panel's own slot (connected first)
        for name, (times, _values) in panel.jump_data().items():
            drawn = _drawn_stem_times(panel.jump_plot)
            for impact in times[times <= t - _column(panel.jump_plot)]:  # waits a column at most
                checked["impacts"] += 1
                if not np.any(np.abs(drawn - impact) <= _column(panel.jump_plot)):
                    misses.append(f"t = {t:.4f} s shown: no {name} stem at {impact:.4f} s")
        impulses = _drawn_stem_times(panel.impulse_plot)
        for times, _values in panel.impulse_data().values():
            for impact in times[times <= t - _column(panel.impulse_plot)]:
                if not np.any(np.abs(impulses - impact) <= _column(panel.impulse_plot)):
                    misses.append(f"t = {t:.4f} s shown: no impulse stem at {impact:.4f} s")
        frames = window.runner.trajectory.times()[: have["frames"]]
        reached = frames[frames <= t]
        if len(reached):
            checked["frames"] += 1
            x = panel.energy_curves["total"].xData  # all its data, not only the part in view
            end = -np.inf if x is None or len(x) == 0 else x[-1]
            if end < reached[-1] - _column(panel.energy_plot):  # a part waits a column at most
                misses.append(f"t = {t:.4f} s shown: energy drawn to {end:.4f} s")
            (t0, t1), _ = panel.energy_plot.vb.viewRange()
            if not t0 <= t <= t1:
                misses.append(f"t = {t:.4f} s shown: the energy plot shows {t0:.4f}-{t1:.4f} s")

    behind = {"now": 0, "longest": 0, "seen": 0}

    def on_time_axes(_t: float) -> None:
        shown = panel.energy_plot.vb.viewRange()[0]
        lagging = [p for p in panel.plots if not np.allclose(p.vb.viewRange()[0], shown)]
        behind["now"] = behind["now"] + 1 if lagging else 0
        behind["seen"] += bool(lagging)
        behind["longest"] = max(behind["longest"], behind["now"])

    window.frames_arrived.connect(on_frames)
    window.clock.time_changed.connect(on_time_axes)
    window.clock.time_changed.connect(on_time)
    assert window.start_run()
    qtbot.waitUntil(lambda: window.clock.time >= 0.3, timeout=60000)
    # the time axis steps as the computed run grows (to 100 s, where it ends)
    qtbot.waitUntil(lambda: window.run_state == "finished", timeout=60000)
    qtbot.waitUntil(lambda: behind["now"] == 0 and behind["seen"] > 0, timeout=60000)
    window.pause_run()
    # the two impacts were shown, checked at every frame after them
    assert checked["impacts"] >= 2 and checked["frames"] > 0
    assert not misses, misses[:5]
    # after a step of the energy plot's time range, the other plots take it within
    # 2 x CATCH_UP_FRAMES frames (not at their turn of the redraw's round)
    assert behind["longest"] <= 2 * CATCH_UP_FRAMES, behind
