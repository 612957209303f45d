"""The status bar's run read-out: computed time of t_end, a progress bar, the solver's speed.

``running: 169.7 of 1000 s computed · 12.5× real time`` next to a bar at
17 %; ``preparing the solver…`` with a busy bar while the worker thread
compiles the scene. The speed is simulated seconds per wall-clock second, averaged over
the last ``SPEED_WINDOW_S`` of wall-clock time the solver was computing
(paused time does not count).
"""

from __future__ import annotations

import math
import time
from collections import deque

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QWidget

SPEED_WINDOW_S = 2.0
"""The solver's speed is measured over this much recent wall-clock time, s."""
BAR_STEPS = 1000
"""Resolution of the progress bar (steps from 0 to t_end)."""
PREPARING_TEXT = "preparing the solver…"
"""The read-out while the worker thread compiles the scene."""
REFRESH_INTERVAL_S = 0.25
"""While a run streams, the read-out is redrawn at most this often (wall clock), s: the
label and the bar repaint (and re-lay out) the status bar, which 60 times a second costs
the drawing of the run more than it tells. A figure held back by this limit is shown
when the interval has passed, whether or not another comes (the solver may send none
for a while)."""


class SolverSpeed:
    """Simulated seconds computed per wall-clock second, over a sliding window."""

    def __init__(self, window_s: float = SPEED_WINDOW_S) -> None:
        self.window_s = window_s
        self._samples: deque[tuple[float, float]] = deque()

    def reset(self) -> None:
        """Forget every sample (a new run, or a resume after a pause)."""
        self._samples.clear()

    def add(self, computed: float, wall: float | None = None) -> None:
        """The solver has computed up to ``computed`` (s) at wall-clock time ``wall`` (s)."""
        wall = time.monotonic() if wall is None else wall
        self._samples.append((wall, computed))
        while len(self._samples) > 2 and wall - self._samples[1][0] > self.window_s:
            self._samples.popleft()

    @property
    def speed(self) -> float | None:
        """Simulated s per wall-clock s over the window; None before two samples."""
        if len(self._samples) < 2:
            return None
        (w0, c0), (w1, c1) = self._samples[0], self._samples[-1]
        return (c1 - c0) / (w1 - w0) if w1 > w0 else None


def progress_text(state: str, computed: float, t_end: float | None, speed: float | None) -> str:
    """The read-out for a run in ``state`` that has computed ``computed`` of ``t_end`` seconds."""
    if state not in ("running", "paused"):
        return f"{state} at t = {computed:.6g} s"
    of = f" of {t_end:.4g}" if t_end is not None else ""
    text = f"{state}: {computed:.4g}{of} s computed"
    if state == "running" and speed is not None and math.isfinite(speed):
        text += f" · {speed:.3g}× real time"
    return text


class RunProgress(QWidget):
    """Label and progress bar of the current run, for the status bar."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel("editing")
        self.bar = QProgressBar()
        self.bar.setRange(0, BAR_STEPS)
        self.bar.setMaximumWidth(160)
        self.bar.setTextVisible(True)
        # the hidden bar keeps its room: showing it at Run would make the status bar taller
        # and re-lay out (and repaint) every view of the window at once
        policy = self.bar.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.bar.setSizePolicy(policy)
        self.bar.hide()
        self.speed = SolverSpeed()
        self.t_end: float | None = None
        self._shown_state = ""
        self._shown_at = -math.inf
        self._held: float | None = None
        """The newest computed time held back by ``REFRESH_INTERVAL_S`` (s), if any."""
        self._held_timer = QTimer(self)
        self._held_timer.setSingleShot(True)
        self._held_timer.timeout.connect(self._show_held)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)

    def start(self, t_end: float | None) -> None:
        """A run to ``t_end`` (s) starts (its solver is built)."""
        self.t_end = t_end
        self.bar.setRange(0, BAR_STEPS)
        self._shown_state = ""
        self._drop_held()
        self.speed.reset()
        self.bar.setVisible(t_end is not None and t_end > 0)

    def preparing(self) -> None:
        """The run's solver is being built (worker thread): a busy bar, no figures yet."""
        self._drop_held()
        self.bar.setRange(0, 0)
        self.bar.show()
        self.label.setText(PREPARING_TEXT)

    def idle(self) -> None:
        """No run: editing."""
        self.t_end = None
        self._drop_held()
        self.speed.reset()
        self.bar.hide()
        self.label.setText("editing")

    def show_state(self, state: str, computed: float) -> None:
        """The run is in ``state`` and has computed up to ``computed`` (s).

        While running, the read-out changes at most every ``REFRESH_INTERVAL_S``; a
        figure held back is shown once that interval has passed.
        """
        now = time.monotonic()
        if state == "running":
            self.speed.add(computed, now)
            wait_s = self._shown_at + REFRESH_INTERVAL_S - now
            if state == self._shown_state and wait_s > 0:
                self._held = computed
                if not self._held_timer.isActive():
                    self._held_timer.start(max(1, math.ceil(1000 * wait_s)))
                return
        else:
            self.speed.reset()
        self._drop_held()
        self._display(state, computed, now)

    def _display(self, state: str, computed: float, now: float) -> None:
        self._shown_state, self._shown_at = state, now
        self.label.setText(progress_text(state, computed, self.t_end, self.speed.speed))
        if self.t_end:
            # QProgressBar.setValue repaints at once (the whole window's pending paint with
            # it, outside the display tick); with updates off it only marks the bar for the
            # next paint
            self.bar.setUpdatesEnabled(False)
            self.bar.setValue(round(BAR_STEPS * min(max(computed / self.t_end, 0.0), 1.0)))
            self.bar.setUpdatesEnabled(True)
            self.bar.update()

    @Slot()
    def _show_held(self) -> None:
        """The refresh interval has passed: show the computed time held back meanwhile."""
        held, self._held = self._held, None
        if held is not None and self._shown_state == "running":
            self._display("running", held, time.monotonic())

    def _drop_held(self) -> None:
        self._held = None
        self._held_timer.stop()
