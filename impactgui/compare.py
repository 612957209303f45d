"""Compare impact laws: run copies of one scene under several laws, side by side.

The user ticks two or more of the laws of SPEC §3 (staged, poisson,
sequential, newton); each ticked law runs a copy of the current scene with
``contact.impact_law`` replaced, in its own worker thread, and gets a plot
of the bodies' velocities over time and a line of the velocities at the
newest frame — e.g. Newton's cradle: staged spreads the impact over the
row, sequential lets only the last ball leave.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from impactgui.grid import show_grid
from impactgui.worker import SimulationRunner
from solver.errors import InputError
from solver.frames import StepOutput
from solver.scene import IMPACT_LAWS, Scene, parse_scene, scene_to_dict
from solver.simulation import make_stepper

BODY_LIMIT = 10
"""At most this many bodies get velocity curves (the first ones in scene order)."""

ANGULAR_RATES = ("omega", "omegaA", "omegaB")


def scene_with_law(scene: Scene, law: str) -> Scene:
    """A copy of ``scene`` whose default contact law is ``law`` (one of ``IMPACT_LAWS``)."""
    data = scene_to_dict(scene)
    data.setdefault("contact", {})["impact_law"] = law
    return parse_scene(data)


class LawPanel(QWidget):
    """One law's run: a velocity plot and the velocities at the newest frame.

    Parameters
    ----------
    law : str
        The impact law this panel runs.
    runner : SimulationRunner
        The run (not started yet).
    parent : QWidget, optional
        Qt parent.
    """

    def __init__(self, law: str, runner: SimulationRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.law = law
        self.runner = runner
        self.plot = pg.PlotWidget(background="w", title=f"<b>{law}</b>")
        self.plot.setLabel("left", "velocity (m/s)")
        self.plot.setLabel("bottom", "t (s)")
        show_grid(self.plot, "w", alpha=0.2)
        self.plot.addLegend(offset=(-5, 5), labelTextSize="8pt")
        self.plot.setDownsampling(auto=True, mode="peak")
        self.plot.setClipToView(True)
        self.summary = QLabel("running…")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.summary)
        self.columns: list[tuple[str, int]] = []
        self._curves: list[pg.PlotDataItem] = []
        system = runner.system
        if system is not None:
            n_coords = sum(len(coords) for _, coords, _ in system.dof_labels)
            column = n_coords
            for body_index, (body_id, _coords, rates) in enumerate(system.dof_labels):
                for name in rates:
                    if body_index < BODY_LIMIT and name not in ANGULAR_RATES:
                        self.columns.append((f"{body_id}.{name}", column))
                    column += 1
        for index, (label, _column) in enumerate(self.columns):
            pen = pg.mkPen(pg.intColor(index, hues=max(len(self.columns), 3)), width=1.5)
            self._curves.append(self.plot.plot(name=label, pen=pen))
        runner.frames_added.connect(self._on_frames_added)
        runner.ended.connect(self._on_ended)

    @Slot(object)
    def _on_frames_added(self, _batch: StepOutput) -> None:
        trajectory = self.runner.trajectory
        t = trajectory.times()
        states = trajectory.states()[: len(t)]
        for curve, (_label, column) in zip(self._curves, self.columns, strict=True):
            curve.setData(t, states[:, column])
        self.summary.setText(self._velocities_text(t, states, "running"))

    @Slot(str, str)
    def _on_ended(self, status: str, message: str) -> None:
        trajectory = self.runner.trajectory
        text = self._velocities_text(trajectory.times(), trajectory.states(), status)
        if status == "failed":
            text += f"<br><span style='color:#b00020'>failed: {message}</span>"
        self.summary.setText(text)

    def _velocities_text(self, t: np.ndarray, states: np.ndarray, status: str) -> str:
        if len(t) == 0 or len(states) == 0:
            return status
        values = ", ".join(f"{label} = {states[-1, column]:.4g}" for label, column in self.columns)
        return f"{status}, t = {t[-1]:.4g} s: {values}"


class CompareDialog(QDialog):
    """Runs the scene under several impact laws side by side.

    Parameters
    ----------
    scene : Scene
        The validated scene to copy (the document is not changed).
    parent : QWidget, optional
        Qt parent.
    """

    def __init__(self, scene: Scene, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Compare impact laws — {scene.title}")
        self.resize(1100, 520)
        self.scene = scene
        self.panels: list[LawPanel] = []
        self.checkboxes: dict[str, QCheckBox] = {}
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Impact laws:"))
        for law in IMPACT_LAWS:
            box = QCheckBox(law)
            box.setChecked(law in ("staged", "sequential"))
            self.checkboxes[law] = box
            controls.addWidget(box)
        controls.addStretch(1)
        self.run_button = QPushButton("Run")
        self.run_button.clicked.connect(self._on_run_clicked)
        controls.addWidget(self.run_button)
        self.message = QLabel("Tick two or more laws and press Run.")
        self.grid = QGridLayout()
        layout = QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.message)
        layout.addLayout(self.grid, 1)

    def chosen_laws(self) -> list[str]:
        """The ticked laws, in the order of ``IMPACT_LAWS``."""
        return [law for law, box in self.checkboxes.items() if box.isChecked()]

    def run(self, laws: list[str] | None = None) -> bool:
        """Run the scene under ``laws`` (default: the ticked ones); False on bad input."""
        laws = self.chosen_laws() if laws is None else laws
        if len(laws) < 2:
            self.message.setText("Tick at least two laws to compare.")
            return False
        self.shutdown()
        self._clear_panels()
        runners: list[tuple[str, Any]] = []
        try:
            for law in laws:
                runners.append((law, make_stepper(scene_with_law(self.scene, law))))
        except InputError as error:
            self.message.setText(f"Cannot run: {error}")
            return False
        for column, (law, stepper) in enumerate(runners):
            panel = LawPanel(law, SimulationRunner(stepper, self))
            self.grid.addWidget(panel, 0, column)
            self.panels.append(panel)
        for panel in self.panels[1:]:
            panel.plot.setXLink(self.panels[0].plot)
            panel.plot.setYLink(self.panels[0].plot)
        for law, box in self.checkboxes.items():
            box.setChecked(law in laws)
        for panel in self.panels:
            panel.runner.ended.connect(self._on_run_ended)
            panel.runner.start()
        self.message.setText(f"Running {', '.join(laws)} in parallel…")
        return True

    @Slot(str, str)
    def _on_run_ended(self, _status: str, _message: str) -> None:
        if self.is_running():
            return
        outcome = ", ".join(f"{p.law} {p.runner.status}" for p in self.panels)
        self.message.setText(f"Done: {outcome}. Below each plot: the velocities at the end.")

    def is_running(self) -> bool:
        """True while any law's run is still stepping."""
        return any(panel.runner.is_running for panel in self.panels)

    def _clear_panels(self) -> None:
        for panel in self.panels:
            self.grid.removeWidget(panel)
            panel.deleteLater()
        self.panels = []

    @Slot()
    def _on_run_clicked(self) -> None:
        self.run()

    def shutdown(self) -> None:
        """Stop every run and join its thread; idempotent."""
        for panel in self.panels:
            panel.runner.stop()

    def done(self, result: int) -> None:
        """Closing the dialog stops its runs."""
        self.shutdown()
        super().done(result)
