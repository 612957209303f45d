"""Playback of a run: a clock that walks through the computed frames at a chosen speed.

The solver fills a ``Trajectory`` as fast as it can; the ``PlaybackClock``
decides which of its frames is on screen. It ticks at display rate (a
``QTimer`` of ~16 ms) and advances the playback time by the wall-clock time
since the last tick times the speed (real time ×1, slow motion down to
×0.01), or jumps to the newest frame ("as fast as possible"). It never runs
past what has been computed. When drawing falls behind, ticks skip frames:
each tick shows only the newest frame due, never every buffered one, and
costs O(1) in the length of the run (no copies of the frame or event lists).
``resume_at`` follows a recomputed run up to a given time as fast as its
frames arrive, then plays on (or holds) from there: a run restarted with a
strike goes on from the time the strike was given.
``PlaybackBar`` is the time slider (scrub through everything computed) and
the speed slider.
"""

from __future__ import annotations

import math
import time

import numpy as np
from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QWidget

from solver.frames import Event, Frame
from solver.record import Trajectory

DISPLAY_INTERVAL_MS = 16
"""Period of the display timer, ms (about 60 frames per second)."""

AS_FAST_AS_POSSIBLE = math.inf
"""Speed value meaning: always show the newest computed frame."""

SPEEDS: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, AS_FAST_AS_POSSIBLE)
"""The speeds the speed slider offers, ×real time."""

_SLIDER_STEPS = 10000


def speed_label(speed: float) -> str:
    """Human text for a playback speed: ``"×0.1"``, ``"real time"``, ``"max"``."""
    if math.isinf(speed):
        return "as fast as possible"
    if speed == 1.0:
        return "real time"
    return f"×{speed:g}"


class PlaybackClock(QObject):
    """Chooses the frame on screen and tells the view when it changes.

    Parameters
    ----------
    parent : QObject, optional
        Qt parent.

    Notes
    -----
    ``frame_shown`` fires only when the shown frame changes, with the frame
    and the events that happened since the previous one (for impact
    flashes); ``time_changed`` fires with every new playback time.
    """

    frame_shown = Signal(object, object)
    """``(Frame, tuple[Event, ...])``: draw this frame; these events just happened."""
    time_changed = Signal(float)
    """The playback time, s."""
    ticked = Signal()
    """Every display tick (the benchmark measures the gaps between these)."""
    playing_changed = Signal(bool)
    """The clock started (True) or stopped (False) advancing on its own."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._trajectory: Trajectory | None = None
        self._time = 0.0
        self._index = -1
        self._event_count = 0
        self._events: list[Event] = []
        self._events_at = -1
        self._speed = 1.0
        self._playing = False
        self._last_tick = time.monotonic()
        self._resume_time: float | None = None
        self._resume_playing = True
        self.loop_end: float | None = None
        """Playback time (s) at which playing starts again from 0 once computed (an orbit)."""
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(DISPLAY_INTERVAL_MS)
        self._timer.timeout.connect(self._on_tick)

    @property
    def time(self) -> float:
        """Playback time, s."""
        return self._time

    @property
    def index(self) -> int:
        """Index of the frame on screen in the trajectory, -1 for none."""
        return self._index

    @property
    def speed(self) -> float:
        """Playback speed, ×real time (``AS_FAST_AS_POSSIBLE`` for the newest frame)."""
        return self._speed

    @property
    def is_playing(self) -> bool:
        """True while the clock advances on its own."""
        return self._playing

    @property
    def trajectory(self) -> Trajectory | None:
        """The run being shown."""
        return self._trajectory

    @property
    def resuming(self) -> bool:
        """True while ``resume_at`` waits for frames up to its time."""
        return self._resume_time is not None

    def set_trajectory(self, trajectory: Trajectory | None) -> None:
        """Show another run from its start; ``None`` shows nothing."""
        self._trajectory = trajectory
        self._resume_time = None
        self._time = 0.0
        self._index = -1
        self._event_count = 0
        self._events = []
        self._events_at = -1
        self.refresh()

    def set_speed(self, speed: float) -> None:
        """Set the speed, ×real time; ``AS_FAST_AS_POSSIBLE`` follows the solver."""
        if not speed > 0:
            raise ValueError(f"playback speed must be > 0, got {speed}")
        self._speed = speed

    def play(self) -> None:
        """Advance on every display tick."""
        self._set_playing(True)
        self._last_tick = time.monotonic()
        self._timer.start()

    def pause(self) -> None:
        """Hold the current time (and stop the display timer until ``play``)."""
        self._set_playing(False)
        self._resume_time = None
        self._timer.stop()

    def _set_playing(self, playing: bool) -> None:
        if playing != self._playing:
            self._playing = playing
            self.playing_changed.emit(playing)

    def resume_at(self, t: float, playing: bool) -> None:
        """Follow the run's newest frame up to time ``t`` (s), then play on or hold there.

        For a run being recomputed from its start: the screen goes to ``t`` as
        fast as the frames arrive, and from there plays at the chosen speed
        (``playing``) or holds (paused). ``pause`` or ``seek`` cancel it.
        """
        self._resume_time = float(t)
        self._resume_playing = playing
        self._set_playing(True)
        self._last_tick = time.monotonic()
        self._timer.start()

    def seek(self, t: float) -> None:
        """Show the frame at time ``t`` (s), clamped to what has been computed."""
        self._resume_time = None
        self._time = float(t)
        self.refresh()

    def step_frame(self) -> bool:
        """Show the next computed frame; False when there is none yet."""
        if self._trajectory is None or self._index + 1 >= len(self._trajectory):
            return False
        self._time = float(self._trajectory.times()[self._index + 1])
        self._show_index(self._index + 1)
        return True

    def end_time(self) -> float:
        """Time of the newest computed frame, s (0 when none)."""
        if self._trajectory is None or len(self._trajectory) == 0:
            return 0.0
        return float(self._trajectory.times()[-1])

    def frame_index_at(self, t: float) -> int:
        """Index of the last frame with time ≤ ``t`` (the ``post`` frame at an impact)."""
        if self._trajectory is None or len(self._trajectory) == 0:
            return -1
        times = self._trajectory.times()
        return max(0, int(np.searchsorted(times, t, side="right")) - 1)

    def refresh(self) -> None:
        """Re-resolve the frame for the current time (e.g. after new frames arrived)."""
        end = self.end_time()
        self._time = min(max(self._time, 0.0), end)
        self._show_index(self.frame_index_at(self._time))
        self.time_changed.emit(self._time)

    @Slot()
    def _on_tick(self) -> None:
        now = time.monotonic()
        elapsed = now - self._last_tick
        self._last_tick = now
        self.ticked.emit()
        if self._trajectory is None or not self._playing:
            return
        if self._resume_time is not None:
            self._time = min(self._resume_time, self.end_time())
            if self._time >= self._resume_time:
                self._resume_time = None
                if not self._resume_playing:
                    self.pause()
        elif math.isinf(self._speed):
            self._time = self.end_time()
        else:
            t = self._time + elapsed * self._speed
            if self.loop_end is not None and t >= self.loop_end <= self.end_time():
                t = 0.0  # one period of an orbit: it starts again
            self._time = min(t, self.end_time())
        self._show_index(self.frame_index_at(self._time))
        self.time_changed.emit(self._time)

    def _show_index(self, index: int) -> None:
        if index == self._index or self._trajectory is None or index < 0:
            return
        frame: Frame = self._trajectory.frame(index)
        events = self._recorded_events()
        if index < self._index:
            self._event_count = int(
                np.searchsorted([event.t for event in events], frame.t, side="right")
            )
            recent: tuple[Event, ...] = ()
        else:
            recent_list = []
            while self._event_count < len(events) and events[self._event_count].t <= frame.t:
                recent_list.append(events[self._event_count])
                self._event_count += 1
            recent = tuple(recent_list)
        self._index = index
        self.frame_shown.emit(frame, recent)

    def _recorded_events(self) -> list[Event]:
        """The run's events, re-read only after new frames arrived (their batch brings them)."""
        assert self._trajectory is not None
        count = len(self._trajectory)
        if count != self._events_at:
            self._events = self._trajectory.events
            self._events_at = count
        return self._events


TIME_SLIDER_MIN_PX = 120
"""Least width of the time slider, px."""


class PlaybackBar(QWidget):
    """Time slider over everything computed, time readout and speed slider.

    Parameters
    ----------
    clock : PlaybackClock
        The clock this bar shows and moves.
    parent : QWidget, optional
        Qt parent.
    """

    def __init__(self, clock: PlaybackClock, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._clock = clock
        self._updating = False
        self.time_slider = QSlider(Qt.Orientation.Horizontal)
        self.time_slider.setRange(0, _SLIDER_STEPS)
        self.time_slider.setToolTip("Scrub through everything computed so far")
        self.time_slider.setAccessibleName("time")
        # a lecture scrubs with it: never squeezed to its handle by a large font (presentation)
        self.time_slider.setMinimumWidth(TIME_SLIDER_MIN_PX)
        self.time_label = QLabel()
        self.time_label.setMinimumWidth(170)
        self.speed_slider = QSlider(Qt.Orientation.Horizontal)
        self.speed_slider.setRange(0, len(SPEEDS) - 1)
        self.speed_slider.setValue(SPEEDS.index(1.0))
        self.speed_slider.setMaximumWidth(140)
        self.speed_slider.setToolTip("Playback speed: slow motion down to ×0.01, real time, max")
        self.speed_slider.setAccessibleName("speed")
        self.speed_label = QLabel(speed_label(1.0))
        self.speed_label.setMinimumWidth(120)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.addWidget(QLabel("t"))
        layout.addWidget(self.time_slider, 1)
        layout.addWidget(self.time_label)
        layout.addWidget(QLabel("speed"))
        layout.addWidget(self.speed_slider)
        layout.addWidget(self.speed_label)
        self.time_slider.valueChanged.connect(self._on_time_slider)
        self.speed_slider.valueChanged.connect(self._on_speed_slider)
        clock.time_changed.connect(self._on_time_changed)
        self._on_time_changed(clock.time)

    def set_speed(self, speed: float) -> None:
        """Select ``speed`` (one of ``SPEEDS``) on the slider and the clock."""
        self.speed_slider.setValue(SPEEDS.index(speed))

    @Slot(int)
    def _on_speed_slider(self, position: int) -> None:
        speed = SPEEDS[position]
        self._clock.set_speed(speed)
        self.speed_label.setText(speed_label(speed))

    @Slot(int)
    def _on_time_slider(self, position: int) -> None:
        if self._updating:
            return
        self._clock.seek(position / _SLIDER_STEPS * self._clock.end_time())

    @Slot(float)
    def _on_time_changed(self, t: float) -> None:
        end = self._clock.end_time()
        self._updating = True
        self.time_slider.setValue(round(_SLIDER_STEPS * t / end) if end > 0 else 0)
        self._updating = False
        self.time_label.setText(f"{t:.4f} s / {end:.4f} s")
