"""The status bar's read-out shows the time computed while a run streams.

The read-out is redrawn at most every ``REFRESH_INTERVAL_S``; a figure that
came within that interval was dropped, so when the solver sent nothing more for
a while (a large batch handed over in pieces, a worker far ahead of the screen)
the status bar read "running: 0 of 100 s computed" while seconds were computed.
"""

from __future__ import annotations

from impactgui.presets import SCENES_DIR
from impactgui.run_progress import BAR_STEPS, RunProgress
from solver.scene import load_scene, scene_to_dict


def _reads(progress: RunProgress, computed: float, t_end: float) -> bool:
    return progress.label.text().startswith(f"running: {computed:.4g} of {t_end:.4g} s computed")


def test_a_figure_held_back_by_the_refresh_limit_is_shown_after_it(qtbot) -> None:
    progress = RunProgress()
    qtbot.addWidget(progress)
    progress.start(100.0)
    progress.show_state("running", 0.0)
    progress.show_state("running", 3.7)  # within the refresh interval: held back
    assert _reads(progress, 0.0, 100.0)
    qtbot.waitUntil(lambda: _reads(progress, 3.7, 100.0), timeout=3000)
    assert progress.bar.value() == round(BAR_STEPS * 3.7 / 100.0)


def test_a_held_figure_does_not_outlive_the_run(qtbot) -> None:
    progress = RunProgress()
    qtbot.addWidget(progress)
    progress.start(100.0)
    progress.show_state("running", 0.0)
    progress.show_state("running", 3.7)
    progress.show_state("finished", 4.0)  # shown at once, whatever the interval
    assert progress.label.text() == "finished at t = 4 s"
    qtbot.wait(600)
    assert progress.label.text() == "finished at t = 4 s"


def test_the_status_shows_the_computed_time_while_the_wheel_streams(qtbot, window) -> None:
    data = scene_to_dict(load_scene(SCENES_DIR / "wheel_curb_e03.json"))
    data["solver"] = {**data["solver"], "t_end": 100.0}
    window.doc.set_data(data)
    held = {"at": None}

    def on_frames(_count: int) -> None:
        # the first batch the read-out did not show: the solver sends nothing more
        computed = window.clock.end_time()
        if held["at"] is None and computed > 0 and not _reads(window.progress, computed, 100.0):
            window.runner.pause()
            held["at"] = computed

    window.frames_arrived.connect(on_frames)
    assert window.start_run()
    qtbot.waitUntil(lambda: held["at"] is not None, timeout=30000)
    assert window.run_state == "running"
    qtbot.waitUntil(lambda: _reads(window.progress, window.clock.end_time(), 100.0), timeout=3000)
    assert window.clock.end_time() >= held["at"] > 0
    window.reset_run()
