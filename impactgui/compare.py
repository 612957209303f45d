"""Compare: run copies of one scene under several impact laws, or several values of a field.

The user ticks two or more of the laws of MECHANICS §3 (staged, poisson,
sequential, newton); each ticked law runs a copy of the current scene with
``contact.impact_law`` replaced, in its own worker thread, and gets a plot
of the bodies' velocities over time and a line of the velocities at the
newest frame — e.g. Newton's cradle: staged spreads the impact over the
row, sequential lets only the last ball leave.

Beside the velocities each panel gives the law's own answer at the first
impact of the scene (:func:`first_impact_outcome`): the impact resolved once
by that law over every contact closed at that instant — touching contacts
that separate included, as paper 000 poses its examples — with the energy it
loses and whether it is admissible (no closed contact left approaching,
``Gᵀv⁺ ≥ 0``). Four touching balls hit with ``[1, 0, 0, 1/3]``: ``poisson``
gives ``[−1/3, 2/3, 2/3, 1/3]``, inadmissible (``Gᵀv⁺ = [1, 0, −1/3]``);
``staged`` gives ``[−1/3, 4/9, 4/9, 7/9]``, admissible; both keep the
energy (``e = 1``). The run itself never goes on from an inadmissible
velocity: the engine resolves the contacts still approaching in further
rounds at the same instant.

Instead of the law, any number of the scene can vary (*Vary*: a restitution,
a friction, a speed, a stiffness — the numbers Run ▸ Sweep offers, by their
path): each value listed runs a copy with that field changed, under the
scene's own law (paper 004's wheel with ``contact.restitution`` 0 and 0.3).
Or the open scene runs *beside a preset*, a bundled scene chosen by its
title, each under its own law and contacts: the Hertzian cradle (compliant
contacts) beside the rigid staged cradle shows what the staged law idealises.
Below the panels the runs' velocities of the first body are overlaid in one
plot, one colour per run; with the main window's canvas given, every run's
bodies' centres are drawn there too, as trails in the same colours
(:mod:`impactgui.compare_trails`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from impactgui.compare_trails import CompareTrails, run_colour
from impactgui.grid import show_grid
from impactgui.plots import plot_with_legend_beside
from impactgui.presets import bundled_presets
from impactgui.worker import SimulationRunner
from solver.errors import InputError
from solver.events import GAP_TOL
from solver.frames import Frame, StepOutput
from solver.impact import resolve_impact
from solver.scene import (
    IMPACT_LAWS,
    Scene,
    SceneError,
    load_scene,
    parse_scene,
    scene_to_dict,
)
from solver.scene_paths import numeric_fields, with_values
from solver.simulation import make_stepper
from solver.system import System

BODY_LIMIT = 10
"""At most this many bodies get velocity curves (the first ones in scene order)."""

ANGULAR_RATES = ("omega", "omegaA", "omegaB")
ENERGY_ROUNDOFF = 1e-12
"""An energy change below this fraction of the energy before is shown as 0 (round-off)."""


BESIDE_PRESET = "@beside-preset"
"""The Vary entry that runs the open scene beside a chosen bundled scene."""


def scene_with_law(scene: Scene, law: str) -> Scene:
    """A copy of ``scene`` whose default contact law is ``law`` (one of ``IMPACT_LAWS``)."""
    data = scene_to_dict(scene)
    data.setdefault("contact", {})["impact_law"] = law
    return parse_scene(data)


@dataclass(frozen=True)
class ImpactOutcome:
    """One law's resolution of one impact over all its closed contacts.

    Attributes
    ----------
    t : float
        Time of the impact (s).
    contacts : list of str
        The closed contacts, ``"body–other"``, in the order of ``u_n_plus``.
    v_plus : ndarray
        Generalized velocity after the impact (system layout; m/s, rad/s).
    energy_before : float
        ``T⁻``, the kinetic energy before (J).
    energy_lost : float
        ``T⁻ − T⁺`` (J); 0 for an elastic law that keeps the energy.
    admissible : bool
        No closed contact approaches after the impact (``Gᵀv⁺ ≥ −tol``).
    u_n_plus : ndarray
        ``Gᵀv⁺``: each closed contact's normal speed after (m/s, > 0 separating).
    """

    t: float
    contacts: list[str]
    v_plus: np.ndarray
    energy_before: float
    energy_lost: float
    admissible: bool
    u_n_plus: np.ndarray


def first_impact_outcome(system: System, before: Frame, law: str) -> ImpactOutcome | None:
    """``law``'s answer to the impact at the state ``before`` (a ``pre`` frame).

    Every contact whose gap is within ``GAP_TOL`` takes part, whether it
    approaches or not; each has its restitution and friction. Returns None
    when no contact is closed.
    """
    contacts = [
        contact
        for contact in system.contacts(before.q, before.v, margin=GAP_TOL)
        if abs(contact.g) <= GAP_TOL and contact.G_local.any()
    ]
    if not contacts:
        return None
    G = np.column_stack([contact.G for contact in contacts])
    friction = np.array([contact.friction for contact in contacts])
    kwargs: dict[str, Any] = {}
    if np.any(friction > 0.0):
        kwargs = {"H": np.column_stack([c.H for c in contacts]), "friction": friction}
    result = resolve_impact(
        system.M_diag,
        G,
        before.v,
        np.array([contact.restitution for contact in contacts]),
        law=law,
        **kwargs,
    )
    return ImpactOutcome(
        t=before.t,
        contacts=[f"{contact.body}–{contact.other}" for contact in contacts],
        v_plus=np.asarray(result.v_plus, dtype=float),
        energy_before=system.kinetic_energy(before.v),
        energy_lost=-float(result.energy_change),
        admissible=bool(result.admissible),
        u_n_plus=G.T @ np.asarray(result.v_plus, dtype=float),
    )


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

    def __init__(
        self,
        law: str,
        runner: SimulationRunner,
        parent: QWidget | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.law = law
        self.title = title or law
        """What the panel's run varies: the law, or ``path = value``."""
        self.runner = runner
        self.overlay_curves: list[tuple[pg.PlotDataItem, int]] = []
        """Curves of this run in the dialog's overlay plot, with their state columns."""
        self.graphics, self.plot = plot_with_legend_beside(f"<b>{self.title}</b>")
        self.plot.setLabel("left", "velocity (m/s)")
        self.plot.setLabel("bottom", "t (s)")
        show_grid(self.plot, "w", alpha=0.2)
        self.plot.setDownsampling(auto=True, mode="peak")
        self.plot.setClipToView(True)
        self.summary = QLabel("running…")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.summary)
        self.columns: list[tuple[str, int]] = []
        self._curves: list[pg.PlotDataItem] = []
        self._n_coords = 0
        system = runner.system
        if system is not None:
            self._n_coords = sum(len(coords) for _, coords, _ in system.dof_labels)
            column = self._n_coords
            for body_index, (body_id, _coords, rates) in enumerate(system.dof_labels):
                for name in rates:
                    if body_index < BODY_LIMIT and name not in ANGULAR_RATES:
                        self.columns.append((f"{body_id}.{name}", column))
                    column += 1
        for index, (label, _column) in enumerate(self.columns):
            pen = pg.mkPen(pg.intColor(index, hues=max(len(self.columns), 3)), width=1.5)
            self._curves.append(self.plot.plot(name=label, pen=pen))
        self.outcome: ImpactOutcome | None = None
        self.outcome_label = QLabel()
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.outcome_label)
        runner.frames_added.connect(self._on_frames_added)
        runner.ended.connect(self._on_ended)

    @Slot(object)
    def _on_frames_added(self, batch: StepOutput) -> None:
        if self.outcome is None and self.runner.system is not None:
            before = next((frame for frame in batch.frames if frame.kind == "pre"), None)
            if before is not None:
                self.outcome = first_impact_outcome(self.runner.system, before, self.law)
                self.outcome_label.setText(self._outcome_text())
        trajectory = self.runner.trajectory
        t = trajectory.times()
        states = trajectory.states()[: len(t)]
        for curve, (_label, column) in zip(self._curves, self.columns, strict=True):
            curve.setData(t, states[:, column])
        for curve, column in self.overlay_curves:
            curve.setData(t, states[:, column])
        self.summary.setText(self._velocities_text(t, states, "running"))

    @Slot(str, str)
    def _on_ended(self, status: str, message: str) -> None:
        trajectory = self.runner.trajectory
        text = self._velocities_text(trajectory.times(), trajectory.states(), status)
        if status == "failed":
            text += f"<br><span style='color:#b00020'>failed: {message}</span>"
        self.summary.setText(text)

    def _outcome_text(self) -> str:
        outcome = self.outcome
        if outcome is None:
            return ""
        velocities = ", ".join(
            f"{label} = {outcome.v_plus[column - self._n_coords]:.4g}"
            for label, column in self.columns
        )
        lost = outcome.energy_lost
        if abs(lost) <= ENERGY_ROUNDOFF * max(outcome.energy_before, 1.0):
            lost = 0.0
        text = (
            f"<b>{self.title}</b> at the first impact (t = {outcome.t:.4g} s, "
            f"{len(outcome.contacts)} closed contacts): {velocities}; "
            f"energy lost {lost:.4g} J; "
        )
        if outcome.admissible:
            return text + "<span style='color:#1b5e20'>admissible</span>"
        speeds = ", ".join(f"{u:.4g}" for u in outcome.u_n_plus)
        worst = outcome.contacts[int(np.argmin(outcome.u_n_plus))]
        return text + (
            f"<span style='color:#b00020'>inadmissible: Gᵀv⁺ = [{speeds}] m/s, "
            f"{worst} still approaches</span>"
        )

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

    def __init__(
        self,
        scene: Scene,
        parent: QWidget | None = None,
        canvas: Any = None,
        redraw_on: tuple[Any, ...] = (),
    ) -> None:
        super().__init__(parent)
        self.trails = CompareTrails(canvas, redraw_on, self) if canvas is not None else None
        """The runs drawn on the main window's canvas (None without a canvas)."""
        self.setWindowTitle(f"Compare impact laws or a field — {scene.title}")
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
        controls.addWidget(QLabel("Vary:"))
        self.vary = QComboBox()
        self.vary.addItem("the impact law", "")
        for field in numeric_fields(scene):
            self.vary.addItem(f"{field.path} (now {field.value:.6g})", field.path)
        self.vary.addItem("beside a preset", BESIDE_PRESET)
        self.vary.currentIndexChanged.connect(self._on_vary_changed)
        controls.addWidget(self.vary)
        self.beside = QComboBox()
        for preset in bundled_presets():
            self.beside.addItem(preset.title, str(preset.path))
        self.beside.setToolTip("The bundled scene to run beside the open one")
        self.beside.setVisible(False)
        controls.addWidget(self.beside)
        self.values = QLineEdit()
        self.values.setPlaceholderText("values, e.g. 0, 0.3")
        self.values.setToolTip("The values of the field to compare, separated by commas")
        self.values.setVisible(False)
        controls.addWidget(self.values)
        self.run_button = QPushButton("Run")
        self.run_button.clicked.connect(self._on_run_clicked)
        controls.addWidget(self.run_button)
        self.message = QLabel("Tick two or more laws and press Run.")
        self.grid = QGridLayout()
        layout = QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.message)
        layout.addLayout(self.grid, 1)
        self.overlay, self.overlay_plot = plot_with_legend_beside("the runs overlaid")
        self.overlay_plot.setLabel("left", "velocity (m/s)")
        self.overlay_plot.setLabel("bottom", "t (s)")
        show_grid(self.overlay_plot, "w", alpha=0.2)
        self.overlay.setVisible(False)
        layout.addWidget(self.overlay, 1)

    @Slot(int)
    def _on_vary_changed(self, _index: int) -> None:
        beside = self.vary.currentData() == BESIDE_PRESET
        field = bool(self.vary.currentData()) and not beside
        self.values.setVisible(field)
        self.beside.setVisible(beside)
        for box in self.checkboxes.values():
            box.setEnabled(not field and not beside)
        if beside:
            text = "Choose the preset to run beside the open scene and press Run."
        elif field:
            text = "List two or more values of the field and press Run."
        else:
            text = "Tick two or more laws and press Run."
        self.message.setText(text)

    def run_beside(self, path: str | Path) -> bool:
        """Run the open scene and the bundled scene at ``path`` side by side, each its own way.

        E.g. the Hertzian cradle (compliant contacts) beside the rigid staged
        one: what the staged law idealises.
        """
        try:
            other = load_scene(path)
        except (SceneError, InputError, OSError) as error:
            problems = getattr(error, "problems", None) or [str(error)]
            self.message.setText(f"beside: {Path(path).name}: {problems[0]}")
            return False
        return self._start(
            [
                (f"open: {self.scene.title}", self.scene.contact.impact_law, self.scene),
                (f"preset: {other.title}", other.contact.impact_law, other),
            ],
            linked=False,
        )

    def run_field(self, path: str, values: list[float]) -> bool:
        """Run the scene once per value of the field ``path``, under its own law."""
        if len(values) < 2:
            self.message.setText("values: list at least two values to compare, e.g. 0, 0.3")
            return False
        variants: list[tuple[str, str, Scene]] = []
        for value in values:
            try:
                scene = with_values(self.scene, {path: value})
            except (SceneError, InputError) as error:
                problems = getattr(error, "problems", None) or [str(error)]
                self.message.setText(f"values: {path} = {value:g}: {problems[0]}")
                return False
            variants.append((f"{path} = {value:g}", scene.contact.impact_law, scene))
        return self._start(variants)

    def chosen_laws(self) -> list[str]:
        """The ticked laws, in the order of ``IMPACT_LAWS``."""
        return [law for law, box in self.checkboxes.items() if box.isChecked()]

    def run(self, laws: list[str] | None = None) -> bool:
        """Run the scene under ``laws`` (default: the ticked ones); False on bad input."""
        if laws is None and self.vary.currentData() == BESIDE_PRESET:
            return self.run_beside(str(self.beside.currentData()))
        if laws is None and self.vary.currentData():
            text = self.values.text()
            try:
                numbers = [
                    float(part) for part in text.replace(";", ",").split(",") if part.strip()
                ]
            except ValueError:
                self.message.setText(f"values: not a list of numbers: {text!r}")
                return False
            return self.run_field(str(self.vary.currentData()), numbers)
        laws = self.chosen_laws() if laws is None else laws
        if len(laws) < 2:
            self.message.setText("Tick at least two laws to compare.")
            return False
        for law, box in self.checkboxes.items():
            box.setChecked(law in laws)
        return self._start([(law, law, scene_with_law(self.scene, law)) for law in laws])

    def _start(self, variants: list[tuple[str, str, Scene]], linked: bool = True) -> bool:
        """Run each ``(title, law, scene)`` in its own panel and in the overlay.

        ``linked``: the panels share their axes (copies of one scene); two
        different scenes keep their own ranges.
        """
        self.shutdown()
        self._clear_panels()
        if self.trails is not None:
            self.trails.clear()
        runners: list[tuple[str, str, Any]] = []
        try:
            for title, law, scene in variants:
                runners.append((title, law, make_stepper(scene)))
        except InputError as error:
            self.message.setText(f"Cannot run: {error}")
            return False
        for column, (title, law, stepper) in enumerate(runners):
            panel = LawPanel(law, SimulationRunner(stepper, self), title=title)
            self.grid.addWidget(panel, 0, column)
            self.panels.append(panel)
        for panel in self.panels[1:] if linked else ():
            panel.plot.setXLink(self.panels[0].plot)
            panel.plot.setYLink(self.panels[0].plot)
        self._fill_overlay()
        if self.trails is not None:
            self.trails.show_runs(
                [
                    (f"law: {panel.law}" if panel.title == panel.law else panel.title, panel.runner)
                    for panel in self.panels
                ]
            )
        for panel in self.panels:
            panel.runner.ended.connect(self._on_run_ended)
            panel.runner.start()
        titles = ", ".join(panel.title for panel in self.panels)
        self.message.setText(f"Running {titles} in parallel…")
        return True

    def _fill_overlay(self) -> None:
        """One colour per run, one line style per velocity of the first body."""
        self.overlay_plot.clear()
        self.overlay_plot.legend.clear()
        styles = (Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine)
        for index, panel in enumerate(self.panels):
            colour = run_colour(index, len(self.panels))
            first = panel.columns[0][0].split(".")[0] if panel.columns else ""
            own = [
                (label, column) for label, column in panel.columns if label.startswith(f"{first}.")
            ]
            for j, (label, column) in enumerate(own):
                pen = pg.mkPen(colour, width=1.5, style=styles[j % len(styles)])
                curve = self.overlay_plot.plot(name=f"{panel.title}: {label}", pen=pen)
                panel.overlay_curves.append((curve, column))
        self.overlay.setVisible(bool(self.panels))

    @Slot(str, str)
    def _on_run_ended(self, _status: str, _message: str) -> None:
        if self.is_running():
            return
        outcome = ", ".join(f"{p.title} {p.runner.status}" for p in self.panels)
        self.message.setText(
            f"Done: {outcome}. Below each plot: the velocities at the end, then the law's "
            "own answer at the first impact."
        )

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
        """Closing the dialog stops its runs and takes their trails off the canvas."""
        self.shutdown()
        if self.trails is not None:
            self.trails.clear()
        super().done(result)
