"""Live interaction with a run: grab a body, change e, μ and g from the time shown on.

What a user does here is recorded in the scene as a timed action
(``actions``: ``solver.actions``), the way a strike on a cart is recorded as
a scheduled impulse: the run is computed again from the start, exactly as
``python -m solver run`` computes the saved scene, and the screen goes on
from the action's time (paused when it was paused). Undo (Ctrl+Z) takes the
action back.

* The **Grab** tool (``impactgui.tools.GrabTool``) pauses the playback when
  it takes a body; at the release the body is put where it was dropped (at
  rest), or given the velocity drawn from the head of its arrow.
* The **Live** dock's sliders set the restitution e, the friction μ (the
  scene's defaults) and the size of gravity g (its direction kept) from the
  time shown on; they show the values in force at that time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QDockWidget, QGridLayout, QLabel, QSlider, QWidget

if TYPE_CHECKING:
    from impactgui.mainwindow import MainWindow

SLIDERS = (
    # key, label, unit, largest value, steps
    ("restitution", "restitution e", "", 1.0, 100),
    ("friction", "friction μ", "", 1.5, 150),
    ("gravity", "gravity |g|", "m/s²", 20.0, 2000),
)
"""The live sliders: the scene field each sets, its label, unit and range (0 to largest)."""


SLIDER_MIN_PX = 80
"""Least width of a live slider, px."""


def values_at(data: Mapping[str, Any], t: float) -> dict[str, float]:
    """e, μ and |g| in force at time ``t`` (s): the scene's, then its set actions up to ``t``."""
    contact = data.get("contact", {})
    gravity = data.get("gravity", (0.0, -9.81))
    values = {
        "restitution": float(contact.get("restitution", 0.5)),
        "friction": float(contact.get("friction", 0.0)),
        "gravity": math.hypot(*gravity),
    }
    for action in sorted(data.get("actions", []), key=lambda a: a.get("time", 0.0)):
        if action.get("type") != "set" or action.get("time", 0.0) > t:
            continue
        for key in ("restitution", "friction"):
            if action.get(key) is not None:
                values[key] = float(action[key])
        if action.get("gravity") is not None:
            values["gravity"] = math.hypot(*action["gravity"])
    return values


def gravity_of_size(data: Mapping[str, Any], size: float) -> list[float]:
    """Gravity of ``size`` (m/s²) along the scene's own direction (straight down if it has none)."""
    gx, gy = data.get("gravity", (0.0, -9.81))
    norm = math.hypot(gx, gy)
    ux, uy = (gx / norm, gy / norm) if norm > 0 else (0.0, -1.0)
    return [round(size * ux, 10) + 0.0, round(size * uy, 10) + 0.0]


class LiveControls(QWidget):
    """Sliders for e, μ and |g|; ``chosen(key, value)`` when the user lets one go."""

    chosen = Signal(str, float)

    def __init__(self) -> None:
        super().__init__()
        grid = QGridLayout(self)
        self.sliders: dict[str, QSlider] = {}
        self.readouts: dict[str, QLabel] = {}
        self._scale: dict[str, float] = {}
        self._units: dict[str, str] = {}
        for row, (key, label, unit, largest, steps) in enumerate(SLIDERS):
            slider = QSlider(Qt.Orientation.Horizontal)
            slider.setRange(0, steps)
            slider.setObjectName(key)
            slider.setMinimumWidth(SLIDER_MIN_PX)  # not its handle alone beside a large font
            slider.setToolTip(f"{label} from the time shown on (recorded in the scene)")
            readout = QLabel()
            readout.setMinimumWidth(80)
            grid.addWidget(QLabel(label), row, 0)
            grid.addWidget(slider, row, 1)
            grid.addWidget(readout, row, 2)
            self.sliders[key], self.readouts[key] = slider, readout
            self._scale[key], self._units[key] = largest / steps, unit
            slider.valueChanged.connect(self._on_moved)
            slider.sliderReleased.connect(self._on_released)
        grid.setColumnStretch(1, 1)
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        grid.addWidget(self.hint, len(SLIDERS), 0, 1, 3)

    def value(self, key: str) -> float:
        """The value the slider ``key`` shows."""
        return round(self.sliders[key].value() * self._scale[key], 10)

    def show_values(self, values: Mapping[str, float]) -> None:
        """Move the sliders to ``values`` (no ``chosen``), unless the user holds one."""
        for key, slider in self.sliders.items():
            if slider.isSliderDown() or key not in values:
                continue
            position = round(values[key] / self._scale[key])
            if slider.value() != position:
                slider.blockSignals(True)
                slider.setValue(position)
                slider.blockSignals(False)
            self._show_readout(key)

    def _show_readout(self, key: str) -> None:
        unit = self._units[key]
        self.readouts[key].setText(f"{self.value(key):.3g} {unit}".strip())

    @Slot(int)
    def _on_moved(self, _value: int) -> None:
        slider = self.sender()
        assert isinstance(slider, QSlider)
        key = slider.objectName()
        self._show_readout(key)
        if not slider.isSliderDown():  # keys, a click on the groove: chosen at once
            self.chosen.emit(key, self.value(key))

    @Slot()
    def _on_released(self) -> None:
        slider = self.sender()
        assert isinstance(slider, QSlider)
        self.chosen.emit(slider.objectName(), self.value(slider.objectName()))


class LiveInteraction(QObject):
    """The window's live controls: the Live dock, the grab tool's requests, their records."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.controls = LiveControls()
        self.dock = QDockWidget("Live", window)
        self.dock.setObjectName("live")
        self.dock.setWidget(self.controls)
        window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.dock)
        window.view_menu.addAction(self.dock.toggleViewAction())  # closed, it can come back
        self.controls.chosen.connect(self._on_chosen)
        window.canvas.grab_started.connect(self._on_grab_started)
        window.canvas.state_requested.connect(self._on_state_requested)
        window.run_state_changed.connect(self._sync)
        window.clock.time_changed.connect(self._sync)
        # an opened or edited scene: the sliders read its e, μ and |g| (they showed the
        # empty scene's 0.5, 0 and 9.81 beside a wheel of e = 0.3, μ = 0.4 until a run)
        window.doc.changed.connect(self._sync)
        self._sync()

    def _shown_time(self) -> float | None:
        """Time of the frame on screen, s; None when no run is shown."""
        runner = self.window.runner
        index = self.window.clock.index
        if runner is None or runner.system is None or index < 0:
            return None
        return float(runner.trajectory.frame(index).t)

    @Slot()
    def _sync(self, *_args: object) -> None:
        t = self._shown_time()
        side = not self.window.doc.is_top_view
        self.controls.setEnabled(t is not None and side)
        self.controls.hint.setText(
            "From the time shown on; recorded in the scene (undo with Ctrl+Z)."
            if t is not None and side
            else "Run a (side-view) scene: these apply from the time shown on."
        )
        data = self.window.doc.data
        self.controls.show_values(values_at(data, math.inf if t is None else t))

    def set_value(self, key: str, value: float) -> bool:
        """From the time shown on, ``key`` (``restitution``, ``friction``, ``gravity``: |g|)."""
        t = self._shown_time()
        if t is None:
            self.window.statusBar().showMessage("Run the scene: e, μ and g change during a run.")
            return False
        shown = value if key != "gravity" else gravity_of_size(self.window.doc.data, value)
        action = {"time": t, "type": "set", key: shown}
        words = {"restitution": "e", "friction": "μ", "gravity": "|g|"}[key]
        return self.window.rerun_with(
            "actions", action, t, f"{words} = {value:.3g} from t = {t:.4g} s"
        )

    def put_body(self, body_id: str, centre: Any, velocity: Any) -> bool:
        """Put ``body_id`` at ``centre`` (m) with ``velocity`` (m/s) from the time shown on."""
        t = self._shown_time()
        if t is None:
            return False
        action = {
            "time": t,
            "type": "state",
            "body": body_id,
            "position": [float(c) for c in centre],
            "velocity": [float(c) for c in velocity],
        }
        return self.window.rerun_with(
            "actions",
            action,
            t,
            f"{body_id} put at ({centre[0]:.3g}, {centre[1]:.3g}) m "
            f"with ({velocity[0]:.3g}, {velocity[1]:.3g}) m/s at t = {t:.4g} s",
        )

    @Slot(str, float)
    def _on_chosen(self, key: str, value: float) -> None:
        if not math.isclose(value, values_at(self.window.doc.data, self._shown_time() or 0.0)[key]):
            self.set_value(key, value)

    @Slot()
    def _on_grab_started(self) -> None:
        self.window.pause_run()

    @Slot(str, object, object)
    def _on_state_requested(self, body_id: str, centre: object, velocity: object) -> None:
        self.put_body(body_id, centre, velocity)
