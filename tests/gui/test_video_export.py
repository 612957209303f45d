"""Video export: MP4 and GIF files read back with imageio, frame counts and sizes, cancel, CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import imageio.v2 as imageio
import numpy as np
import pytest
from PIL import Image

from impactgui.video_export import (
    VideoRecorder,
    VideoSettings,
    VideoSettingsError,
    frame_times,
    parse_size,
)
from tests.gui.conftest import run_to_end, scene_path

ROOT = Path(__file__).resolve().parents[2]


def _frames(path: Path) -> list[np.ndarray]:
    reader = imageio.get_reader(str(path))
    try:
        return [np.asarray(frame) for frame in reader]
    finally:
        reader.close()


def test_frame_times_step_by_speed_over_fps_up_to_the_last_computed_time() -> None:
    # 1 s at 25 frames/s: t = 0, 0.04, ..., 1.0 -> 26 frames; half speed: 51 frames over 2 s
    times = frame_times(1.0, 25.0, 1.0)
    assert len(times) == 26
    assert times[-1] == pytest.approx(1.0)
    assert np.allclose(np.diff(times), 0.04)
    assert len(frame_times(1.0, 25.0, 0.5)) == 51
    assert len(frame_times(0.999, 10.0, 1.0)) == 10


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        (VideoSettings(Path("a.avi")), "video file"),
        (VideoSettings(Path("a.mp4"), width=641), "video width"),
        (VideoSettings(Path("a.mp4"), height=8), "video height"),
        (VideoSettings(Path("a.mp4"), fps=0.0), "video fps"),
        (VideoSettings(Path("a.gif"), speed=float("nan")), "video speed"),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(settings: VideoSettings, named: str) -> None:
    with pytest.raises(VideoSettingsError, match=named):
        settings.check()


def test_size_text_is_width_by_height() -> None:
    assert parse_size("1280x720") == (1280, 720)
    assert parse_size("640×480") == (640, 480)
    with pytest.raises(VideoSettingsError, match="video size"):
        parse_size("1280")


def test_mp4_of_the_cradle_has_one_frame_per_step_at_the_chosen_size(
    qtbot, window, tmp_path: Path
) -> None:
    assert window.open_file(scene_path("newton_cradle_3_staged"))  # t_end = 1 s
    run_to_end(qtbot, window)
    assert window.clock.end_time() == pytest.approx(1.0)
    path = tmp_path / "cradle.mp4"
    VideoRecorder(window, VideoSettings(path, 320, 240, fps=20.0)).run()
    frames = _frames(path)
    assert len(frames) == 21  # t = 0, 0.05, ..., 1.0
    assert frames[0].shape == (240, 320, 3)
    # the first ball moves at 1 m/s until t = 0.125 s, then the last one: the pictures change
    assert np.mean(np.abs(frames[0].astype(int) - frames[-1].astype(int))) > 0.5
    assert len(np.unique(frames[10].reshape(-1, 3), axis=0)) > 20


def test_gif_with_plots_in_slow_motion(qtbot, window, tmp_path: Path) -> None:
    assert window.open_file(scene_path("newton_cradle_3_staged"))
    run_to_end(qtbot, window)
    path = tmp_path / "cradle.gif"
    settings = VideoSettings(path, 400, 200, fps=10.0, speed=0.25, with_plots=True)
    VideoRecorder(window, settings).run()
    frames = _frames(path)
    assert len(frames) == 41  # 1 s of run at 0.25 s per second of video, 10 frames/s
    assert frames[0].shape[:2] == (200, 400)
    with Image.open(path) as gif:
        assert gif.info["duration"] == 100  # ms a frame, at 10 frames/s
    assert not window.honesty.enabled  # switched on only while recording


def test_cancelled_recording_leaves_no_file(qtbot, window, tmp_path: Path) -> None:
    assert window.open_file(scene_path("newton_cradle_3_staged"))
    run_to_end(qtbot, window)
    path = tmp_path / "cut.mp4"
    recorder = VideoRecorder(window, VideoSettings(path, 160, 120, fps=30.0))
    frames = recorder.frames()
    assert [next(frames) for _ in range(3)] == [1, 2, 3]
    frames.close()
    assert not recorder.completed
    assert not path.exists()


def test_export_video_records_under_a_progress_dialog(qtbot, window, tmp_path: Path) -> None:
    assert window.open_file(scene_path("newton_cradle_3_staged"))
    run_to_end(qtbot, window)
    path = tmp_path / "dialog.mp4"
    progress = window.export_video(VideoSettings(path, 160, 120, fps=10.0))
    assert progress is not None
    qtbot.waitUntil(lambda: progress.recorder.completed, timeout=30000)
    assert progress.recorder.done == progress.maximum() == 11
    qtbot.waitUntil(lambda: "video written" in window.statusBar().currentMessage())
    assert len(_frames(path)) == 11


def test_cancel_in_the_progress_dialog_stops_and_removes_the_file(
    qtbot, window, tmp_path: Path
) -> None:
    assert window.open_file(scene_path("newton_cradle_3_staged"))
    run_to_end(qtbot, window)
    path = tmp_path / "cancelled.mp4"
    progress = window.export_video(VideoSettings(path, 160, 120, fps=60.0, speed=0.01))
    assert progress is not None
    qtbot.waitUntil(lambda: progress.recorder.done >= 2, timeout=30000)
    progress.canceled.emit()  # the Cancel button
    qtbot.waitUntil(lambda: "cancelled" in window.statusBar().currentMessage())
    assert progress.recorder.done < progress.recorder.count == 6001
    assert not path.exists()


def test_export_video_without_a_run_says_so(window, tmp_path: Path) -> None:
    warnings: list[str] = []
    window.warn = lambda title, text, details=(): warnings.append(text)
    assert window.export_video(VideoSettings(tmp_path / "none.mp4")) is None
    assert "no run to record" in warnings[0]


def test_command_line_video_without_a_window(tmp_path: Path) -> None:
    path = tmp_path / "cli.mp4"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "impactgui",
            str(scene_path("newton_cradle_3_staged")),
            "--video",
            str(path),
            "--video-size",
            "256x144",
            "--fps",
            "12",
        ],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    frames = _frames(path)
    assert len(frames) == 13  # 1 s at 12 frames/s
    assert frames[0].shape == (144, 256, 3)


def test_command_line_refuses_an_odd_size(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "impactgui", "--video", "x.mp4", "--video-size", "255x144"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "video width" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_dialog_gathers_the_settings(window, tmp_path: Path) -> None:
    from impactgui.video_export import VideoDialog

    dialog = VideoDialog(window)
    dialog.path.setText(str(tmp_path / "lecture.gif"))
    dialog.width_box.setValue(640)
    dialog.height_box.setValue(360)
    dialog.fps_box.setValue(12.5)
    dialog.speed_box.setValue(0.5)
    dialog.plots_box.setChecked(True)
    settings = dialog.settings().check()
    assert settings == VideoSettings(tmp_path / "lecture.gif", 640, 360, 12.5, 0.5, True)
    dialog.close()
