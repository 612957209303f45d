"""Video of a run: the canvas, with or without the plots, as MP4 or GIF.

File ▸ Export video… asks for the file, the frame size, the frame rate,
the playback speed and whether the plots are in the picture, then renders
the run computed so far frame by frame — under a progress bar with a
Cancel button — and hands the pictures to imageio: MP4 through its ffmpeg
plugin (H.264, the ffmpeg binary ships in the ``imageio-ffmpeg`` wheel),
GIF through Pillow. ``impactgui SCENE --video OUT.mp4`` runs the scene and
does the same without a window.

Video frame ``k`` shows the run at simulated time ``t_k = k · speed / fps``
(``speed``: simulated seconds per second of video, 1 for real time), from
0 to the last computed time, so a video has ``⌊t_last · fps / speed⌋ + 1``
frames. Each picture is the widgets rendered at the scale that fits the
chosen size (sharp, not an enlarged screenshot), centred on white. With
the plots, playback honesty is on while recording: the curves grow with
the video's time instead of showing the whole run from the first frame.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import QSize, Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressDialog,
    QPushButton,
    QSpinBox,
    QWidget,
)

from impactgui.image_export import image_array, render_widgets

if TYPE_CHECKING:
    from impactgui.mainwindow import MainWindow

FORMATS = {".mp4": "MP4 video (H.264)", ".gif": "GIF animation"}
"""File suffixes written and what they are."""
MAX_SIDE = 7680
"""Largest frame width or height, px."""
MAX_FPS = 120.0
"""Highest frame rate, frames per second."""
MP4_QUALITY = 8
"""imageio-ffmpeg quality (0–10) of MP4 files."""


class VideoSettingsError(ValueError):
    """A video setting is out of range; the message names the setting."""


@dataclass(frozen=True)
class VideoSettings:
    """What to record.

    Parameters
    ----------
    path : Path
        Output file, ``.mp4`` or ``.gif``.
    width, height : int
        Frame size, px (even numbers, for H.264's colour subsampling).
    fps : float
        Frames per second of video.
    speed : float
        Simulated seconds per second of video (1: real time; 0.1: slow motion).
    with_plots : bool
        The plots beside the canvas (else the canvas alone).
    """

    path: Path
    width: int = 1280
    height: int = 720
    fps: float = 30.0
    speed: float = 1.0
    with_plots: bool = False

    def check(self) -> VideoSettings:
        """``self`` when every setting is usable; else ``VideoSettingsError`` naming it."""
        suffix = Path(self.path).suffix.lower()
        if suffix not in FORMATS:
            known = ", ".join(FORMATS)
            raise VideoSettingsError(f"video file: {self.path} must end in one of {known}")
        for name, side in (("width", self.width), ("height", self.height)):
            if not (isinstance(side, int) and 16 <= side <= MAX_SIDE and side % 2 == 0):
                raise VideoSettingsError(
                    f"video {name}: must be an even number of pixels from 16 to {MAX_SIDE}, "
                    f"got {side}"
                )
        if not (math.isfinite(self.fps) and 0 < self.fps <= MAX_FPS):
            raise VideoSettingsError(f"video fps: must be in (0, {MAX_FPS:g}], got {self.fps}")
        if not (math.isfinite(self.speed) and self.speed > 0):
            raise VideoSettingsError(f"video speed: must be a number > 0, got {self.speed}")
        return self


def parse_size(text: str) -> tuple[int, int]:
    """``"1280x720"`` → ``(1280, 720)``; ``VideoSettingsError`` when it is not ``WxH``."""
    parts = text.lower().replace("×", "x").split("x")
    try:
        width, height = (int(part) for part in parts)
    except ValueError:
        raise VideoSettingsError(
            f"video size: must be WIDTHxHEIGHT in pixels (as 1280x720), got {text!r}"
        ) from None
    return width, height


def frame_times(t_last: float, fps: float, speed: float) -> np.ndarray:
    """Simulated times of the video frames, s: ``k · speed / fps`` up to ``t_last``."""
    count = math.floor(t_last * fps / speed + 1e-9) + 1 if t_last >= 0 else 0
    return np.arange(count) * (speed / fps)


class VideoRecorder:
    """Renders a window's run frame by frame into a video file.

    Drive it with ``frames()``: a generator that renders and writes one
    frame per step and yields how many are done, so a progress dialog (or
    the command line) can show progress and stop early; closing the
    generator early (Cancel) deletes the partial file.

    Parameters
    ----------
    window : MainWindow
        The window whose run (``window.runner``) is recorded.
    settings : VideoSettings
        What to record (checked here).
    """

    def __init__(self, window: MainWindow, settings: VideoSettings) -> None:
        self.window = window
        self.settings = settings.check()
        runner = window.runner
        if runner is None or runner.system is None or len(runner.trajectory) == 0:
            raise VideoSettingsError("video: there is no run to record; press Run first")
        self.times = frame_times(window.clock.end_time(), settings.fps, settings.speed)
        self.done = 0
        self.completed = False

    @property
    def count(self) -> int:
        """Number of frames the video will have."""
        return len(self.times)

    def _widgets(self) -> list[QWidget]:
        window = self.window
        widgets: list[QWidget] = [window.canvas]
        if self.settings.with_plots:
            widgets.append(window.plots)
        return widgets

    def _writer(self) -> Any:
        import imageio.v2 as imageio

        path = str(self.settings.path)
        if Path(path).suffix.lower() == ".gif":
            # GIF frame durations are whole hundredths of a second
            return imageio.get_writer(path, mode="I", duration=1000.0 / self.settings.fps, loop=0)
        return imageio.get_writer(
            path,
            format="FFMPEG",
            mode="I",
            fps=self.settings.fps,
            codec="libx264",
            quality=MP4_QUALITY,
            pixelformat="yuv420p",
            macro_block_size=2,
        )

    def frames(self) -> Iterator[int]:
        """Render and write each frame; yields the number written so far."""
        window = self.window
        runner = window.runner
        assert runner is not None and runner.system is not None
        trajectory, system = runner.trajectory, runner.system
        size = QSize(self.settings.width, self.settings.height)
        shown = window.clock.index
        honest = window.honesty.enabled
        Path(self.settings.path).parent.mkdir(parents=True, exist_ok=True)
        writer = self._writer()
        if self.settings.with_plots:
            window.honesty.set_enabled(True)  # the curves grow with the video's time
        try:
            for t in self.times:
                index = window.clock.frame_index_at(float(t))
                window.canvas.show_frame(trajectory.frame(index), system)
                window.plots.set_cursor(float(t))
                window.honesty.set_time(float(t))
                writer.append_data(image_array(render_widgets(self._widgets(), size)))
                self._repaint_live()
                self.done += 1
                yield self.done
            self.completed = True
        finally:
            writer.close()
            if not self.completed:
                Path(self.settings.path).unlink(missing_ok=True)
            if shown >= 0:
                window.canvas.show_frame(trajectory.frame(shown), system)
            window.plots.set_cursor(window.clock.time)
            window.honesty.set_enabled(honest)
            window.honesty.set_time(window.clock.time)
            self._repaint_live()

    def _repaint_live(self) -> None:
        """Repaint the window's views whole at their next paint.

        Rendering a graphics view into a picture paints, and so forgets, the
        regions its items marked for repainting: on screen the old places of
        the moved items (the time cursors, the canvas's arrows, a wheel)
        stayed painted until something repainted them.
        """
        for view in self.window.findChildren(QGraphicsView):
            view.viewport().update()

    def run(self) -> None:
        """Render every frame now (no event loop needed: the command line)."""
        for _done in self.frames():
            pass


class VideoDialog(QDialog):
    """File ▸ Export video…: file, size, frame rate, speed, plots; then records with progress.

    Parameters
    ----------
    window : MainWindow
        The window whose run is recorded.
    """

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.setWindowTitle("Export video")
        self.path = QLineEdit(str(Path.cwd() / "impactgui.mp4"))
        browse = QPushButton("Choose…")
        browse.clicked.connect(self._on_browse)
        where = QHBoxLayout()
        where.addWidget(self.path, 1)
        where.addWidget(browse)
        self.width_box = QSpinBox()
        self.height_box = QSpinBox()
        for box, value in ((self.width_box, 1280), (self.height_box, 720)):
            box.setRange(16, MAX_SIDE)
            box.setSingleStep(2)
            box.setValue(value)
            box.setSuffix(" px")
        size = QHBoxLayout()
        size.addWidget(self.width_box)
        size.addWidget(QLabel("×"))
        size.addWidget(self.height_box)
        self.fps_box = QDoubleSpinBox()
        self.fps_box.setRange(1.0, MAX_FPS)
        self.fps_box.setValue(30.0)
        self.fps_box.setSuffix(" frames/s")
        self.speed_box = QDoubleSpinBox()
        self.speed_box.setDecimals(3)
        self.speed_box.setRange(0.001, 1000.0)
        speed = window.clock.speed
        self.speed_box.setValue(speed if math.isfinite(speed) else 1.0)
        self.speed_box.setSuffix(" × real time")
        self.plots_box = QCheckBox("plots beside the canvas")
        form = QFormLayout(self)
        form.addRow("file (.mp4, .gif)", where)
        form.addRow("frame size", size)
        form.addRow("frame rate", self.fps_box)
        form.addRow("speed", self.speed_box)
        form.addRow("", self.plots_box)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def settings(self) -> VideoSettings:
        """The settings as filled in (not yet checked)."""
        return VideoSettings(
            Path(self.path.text()),
            self.width_box.value(),
            self.height_box.value(),
            self.fps_box.value(),
            self.speed_box.value(),
            self.plots_box.isChecked(),
        )

    @Slot()
    def _on_browse(self) -> None:
        filters = ";;".join(f"{text} (*{suffix})" for suffix, text in FORMATS.items())
        chosen, _ = QFileDialog.getSaveFileName(self, "Export video", self.path.text(), filters)
        if chosen:
            self.path.setText(chosen)


class VideoProgress(QProgressDialog):
    """Records a video one frame per event-loop turn, with a progress bar and Cancel.

    Parameters
    ----------
    recorder : VideoRecorder
        What to record.
    parent : QWidget
        The window.
    """

    def __init__(self, recorder: VideoRecorder, parent: QWidget) -> None:
        super().__init__("Recording the video…", "Cancel", 0, recorder.count, parent)
        self.recorder = recorder
        self.setWindowTitle("Export video")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.setMinimumDuration(0)
        self._frames = recorder.frames()
        self._busy = False
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._step)
        self.canceled.connect(self._stop)
        self._timer.start()

    @Slot()
    def _step(self) -> None:
        # a modal progress dialog's setValue processes events: the timer may fire inside it
        if self._busy or not self._timer.isActive():
            return
        self._busy = True
        try:
            done = next(self._frames)
        except StopIteration:
            self._timer.stop()
            self.setValue(self.maximum())
            self.accept()  # emits finished, as Cancel does
            return
        finally:
            self._busy = False
        self.setLabelText(f"Recording the video… frame {done} of {self.recorder.count}")
        self._busy = True
        self.setValue(done)
        self._busy = False

    @Slot()
    def _stop(self) -> None:
        self._timer.stop()
        self._frames.close()
        self.reject()
