"""Run ▸ Sweep: the current scene over a range of one or two of its fields, as a diagram.

The window lists every number of the scene a sweep can vary
(:func:`solver.scene_paths.numeric_fields`, with its unit), takes a range
and a count for one field (and optionally a second), the transient, the end
time, the output step and the observable, and runs the grid with :class:`solver.sweep.Sweep`
on a local process pool or, under *Run on*, on a Dask distributed cluster
given by its scheduler's address (``tcp://HOST:PORT``, checked before the
sweep starts; a scheduler that cannot be reached within 10 s ends the sweep
with that message). The sweep is driven from a worker thread
(:class:`SweepWorker`); points stream into the plot as they finish:

* one field, observable *impact speed*: a bifurcation diagram, the approach
  speed ``u_n⁻`` (m/s) of every impact after the transient against the field;
* one field, a summary column (``t_zeno``, ``n_impacts``, ``E_dissipated``, the
  period columns ``period``, ``impacts_per_period``, ``period_s``,
  a final coordinate): that column against the field;
* two fields: a colour map of the column (of the largest impact speed after
  the transient for *impact speed*) over the grid, with a colour bar.

Cancel stops the worker processes at once; the points finished so far stay.
Export writes ``summary.csv`` and ``impacts.csv`` — the same bytes as
``python -m solver sweep`` writes for the same grid — and a PNG of the plot.
Clicking a point asks for that run (the scene with those values) in the main
window (:class:`SweepLauncher` opens it there and runs it). A field with
*log spacing* runs values evenly spaced on a log scale and is drawn on a log
axis; *log scale* puts the observable on a log axis. *Continue orbits*
(:mod:`impactgui.sweep_orbits`) draws the branches of periodic orbits over the
first field on the same axes.
"""

from __future__ import annotations

import math
import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QPointF, QRectF, Qt, QThread, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from impactgui.grid import show_grid
from impactgui.image_export import render_widget
from impactgui.names import IMPACT_SPEED_LABEL, field_label
from impactgui.plots import plot_with_legend_beside
from impactgui.sweep_orbits import OrbitOverlay
from solver.scene import Scene, SceneError, scene_to_dict
from solver.scene_paths import NumericField, numeric_fields
from solver.sweep import (
    CONTACT_COLUMNS,
    Axis,
    PointResult,
    Sweep,
    SweepError,
    SweepResult,
    default_workers,
)

if TYPE_CHECKING:
    from impactgui.mainwindow import MainWindow

IMPACT_SPEED = "u_n_minus"
"""The bifurcation observable: approach speed of each impact after the transient."""
SUMMARY_OBSERVABLES = ("t_zeno", "n_impacts", "E_dissipated")
"""Summary columns offered as observables, before the final state."""
PERIOD_OBSERVABLES = {
    "period": "period, forcing periods (0: none found)",
    "impacts_per_period": "impacts per period (0: none found)",
    "period_s": "period",
}
"""The period columns of summary.csv (solver.impact_period), offered after the summary ones."""
CONTACT_OBSERVABLES = {
    "contact_time": "contact_time, first compliant contact (touch to release)",
    "peak_force": "peak_force of that contact",
    "impulse": "impulse of that contact (∫F dt)",
}
"""The compliant contact's summary.csv columns (solver.sweep.CONTACT_COLUMNS), if it has them."""
OBSERVABLE_UNITS = {
    IMPACT_SPEED: "m/s",
    "t_zeno": "s",
    "n_impacts": "",
    "E_dissipated": "J",
    "period": "",
    "impacts_per_period": "",
    "period_s": "s",
    "contact_time": "s",
    "peak_force": "N",
    "impulse": "N·s",
}
STATE_UNITS = {
    "x": "m",
    "y": "m",
    "phi": "rad",
    "vx": "m/s",
    "vy": "m/s",
    "omega": "rad/s",
}
"""Units of the final-state columns (``ID.x``…) by their name after the dot."""
REDRAW_MS = 150
"""Points arriving closer together than this are drawn together, ms."""
CLICK_RADIUS_PX = 12.0
"""A click within this distance of a point (screen px) opens its run."""
SPIN_LIMIT = 1e9
SCHEDULER_ADDRESS = re.compile(
    r"(?:tcp|tls)://(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):(?P<port>\d+)"
)
"""A Dask scheduler's address: ``tcp://HOST:PORT`` (``tls://`` too; an IPv6 host in brackets)."""
RUN_ON_LOCAL = "local processes"
RUN_ON_DASK = "Dask scheduler"


def state_unit(column: str) -> str:
    """Unit of a final-state column such as ``ball.vy`` (``""`` if not known)."""
    return STATE_UNITS.get(column.rpartition(".")[2], "")


def unit_text(unit: str) -> str:
    """A unit for a label: ``"m/s"``, or ``"dimensionless"`` for pure numbers."""
    return unit if unit else "dimensionless"


def default_range(field: NumericField) -> tuple[float, float]:
    """A starting range around a field's current value (the user edits it)."""
    value = field.value
    key = field.path.rpartition(".")[2]
    if key in ("restitution", "friction"):
        return max(0.0, value - 0.4), min(1.0, value + 0.4)
    if value == 0.0:
        return 0.0, 1.0
    return 0.5 * value, 1.5 * value


# ------------------------------------------------------------------ the worker


class SweepWorker(QObject):
    """Runs a sweep's points, from its own thread, on a process pool or a Dask cluster.

    The points run through :meth:`solver.sweep.Sweep.results`, as for
    ``python -m solver sweep``: on a local pool of forkserver processes (safe
    beside Qt's threads), or with ``scheduler`` on the Dask distributed
    cluster at that address — connecting to it happens here too, so the
    window never waits for it. A cancel takes effect within
    ``solver.sweep.STOP_POLL_S``: running points are abandoned and their
    processes stopped (on a cluster, cancelled).

    Parameters
    ----------
    plan : Sweep
        The validated sweep.
    workers : int
        Processes of the local pool (unused with ``scheduler``).
    scheduler : str, optional
        ``tcp://HOST:PORT`` of a running Dask scheduler.

    Signals
    -------
    point_done(PointResult)
        A point finished (emitted in the worker thread: connect it to a
        ``@Slot`` of a GUI-thread object).
    failed(str)
        The points could not run (the message says why: an unreachable
        scheduler, a broken pool).
    finished()
        The sweep ended: every point done, cancelled, or failed.
    """

    point_done = Signal(object)
    failed = Signal(str)
    finished = Signal()

    def __init__(self, plan: Sweep, workers: int, scheduler: str | None = None) -> None:
        super().__init__()
        self._plan = plan
        self._workers = workers
        self._scheduler = scheduler
        self._cancelled = threading.Event()

    @Slot()
    def run(self) -> None:
        """Run every point and emit each as it finishes (the thread's ``started``)."""
        try:
            with self._plan.results(
                workers=self._workers, scheduler=self._scheduler, stop=self._cancelled
            ) as points:
                for point in points:
                    if self._cancelled.is_set():
                        break
                    self.point_done.emit(point)
        except SweepError as error:  # Dask missing, the scheduler unreachable
            if not self._cancelled.is_set():
                self.failed.emit(str(error).removeprefix("--scheduler: "))
        except Exception as error:  # the pool broke: tell the window, keep it alive
            if not self._cancelled.is_set():
                self.failed.emit(f"{type(error).__name__}: {error}")
        finally:
            self.finished.emit()

    def cancel(self) -> None:
        """Stop, from any thread: the points are abandoned; nothing more is emitted."""
        self._cancelled.set()


def scheduler_problem(address: str) -> str | None:
    """Why ``address`` is not a Dask scheduler address ``tcp://HOST:PORT`` (None if it is)."""
    match = SCHEDULER_ADDRESS.fullmatch(address.strip())
    if match is None:
        return f"write tcp://HOST:PORT (as the dask scheduler command prints it), got {address!r}"
    if not 1 <= int(match["port"]) <= 65535:
        return f"the port must be 1 to 65535, got {match['port']}"
    return None


# -------------------------------------------------------------- the controls


class FieldChooser(QWidget):
    """One varied field: which one, from where to where, how many values."""

    def __init__(
        self, fields: list[NumericField], parent: QWidget | None = None, scene: dict | None = None
    ) -> None:
        super().__init__(parent)
        self.fields = fields
        self.combo = QComboBox()
        for field in fields:
            label = field_label(field.path, scene or {})
            self.combo.addItem(
                f"{label}  ({unit_text(field.unit)}, now {field.value:.6g})", field.path
            )
            self.combo.setItemData(self.combo.count() - 1, field.path, Qt.ItemDataRole.ToolTipRole)
        self.start = self._spin()
        self.stop = self._spin()
        self.count = QSpinBox()
        self.count.setRange(1, 100000)
        self.count.setValue(21)
        self.unit = QLabel()
        self.log = QCheckBox("log spacing (start and stop > 0)")
        self.log.setToolTip(
            "Values evenly spaced on a log scale, as PATH=START:STOP:COUNT:log on the command "
            "line; the plot's axis is logarithmic"
        )
        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addRow("field", self.combo)
        layout.addRow("from", self.start)
        layout.addRow("to", self.stop)
        layout.addRow("count", self.count)
        layout.addRow("unit", self.unit)
        layout.addRow("", self.log)
        self.combo.currentIndexChanged.connect(self._on_field_changed)
        self._on_field_changed(self.combo.currentIndex())

    @staticmethod
    def _spin() -> QDoubleSpinBox:
        spin = QDoubleSpinBox()
        spin.setRange(-SPIN_LIMIT, SPIN_LIMIT)
        spin.setDecimals(6)
        spin.setKeyboardTracking(False)
        return spin

    @Slot(int)
    def _on_field_changed(self, index: int) -> None:
        if not 0 <= index < len(self.fields):
            return
        field = self.fields[index]
        start, stop = default_range(field)
        self.start.setValue(start)
        self.stop.setValue(stop)
        self.unit.setText(unit_text(field.unit))
        step = 10.0 ** math.floor(math.log10(abs(field.value))) / 10 if field.value else 0.1
        self.start.setSingleStep(step)
        self.stop.setSingleStep(step)

    def choose(self, path: str, start: float, stop: float, count: int, log: bool = False) -> None:
        """Set the field (by path), its range and count (``log``: log spacing)."""
        index = self.combo.findData(path)
        if index < 0:
            raise KeyError(f"{path}: not a number of this scene")
        self.combo.setCurrentIndex(index)
        self.start.setValue(start)
        self.stop.setValue(stop)
        self.count.setValue(count)
        self.log.setChecked(log)

    def path(self) -> str:
        """The chosen field's path."""
        return str(self.combo.currentData())

    def field(self) -> NumericField:
        """The chosen field."""
        return self.fields[self.combo.currentIndex()]

    def axis(self) -> Axis:
        """The chosen values (raises ``SweepError`` for a bad range)."""
        spacing = Axis.logspace if self.log.isChecked() else Axis.linspace
        return spacing(self.path(), self.start.value(), self.stop.value(), self.count.value())


# ------------------------------------------------------------------ the window


class SweepWindow(QWidget):
    """Run ▸ Sweep: a sweep of one scene, its diagram, progress, cancel and export.

    Parameters
    ----------
    scene : Scene
        The scene to sweep (a copy of the document's scene when opened).
    parent : QWidget, optional
        Owner (the window stays a separate top-level window).

    Signals
    -------
    point_added(int)
        A point arrived (GUI thread); the number of points done so far.
    sweep_ended(str)
        ``"finished"``, ``"cancelled"`` or ``"failed"``.
    run_requested(object)
        A point was clicked: the scene of that run, as a JSON object.
    orbit_requested(object)
        A periodic orbit was clicked: its scene, one period long, as a JSON object
        (the main window plays it in a loop).

    Attributes
    ----------
    plan : Sweep or None
        The running (or last) sweep.
    result : SweepResult or None
        Its points so far, in grid order.
    state : str
        ``"idle"``, ``"running"``, ``"cancelling"``, ``"finished"``, ``"cancelled"``
        or ``"failed"``.
    """

    point_added = Signal(int)
    sweep_ended = Signal(str)
    run_requested = Signal(object)
    orbit_requested = Signal(object)

    def __init__(self, scene: Scene, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setWindowTitle(f"Sweep — {scene.title}")
        self.resize(1200, 700)
        self.scene = scene
        self.fields = numeric_fields(scene)
        self.plan: Sweep | None = None
        self.result: SweepResult | None = None
        self.state = "idle"
        self._thread: QThread | None = None
        self._worker: SweepWorker | None = None
        self._started_at = 0.0
        self._shown: list[tuple[float, float, int]] = []
        self._log_x = False
        self._log_y = False
        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.setInterval(REDRAW_MS)
        self._redraw_timer.timeout.connect(self.redraw)

        self._scene_data = scene_to_dict(scene)
        self.first = FieldChooser(self.fields, scene=self._scene_data)
        self.second = FieldChooser(self.fields, scene=self._scene_data)
        self.second.count.setValue(11)
        self.second_enabled = QCheckBox("vary a second field (colour map)")
        self.second_enabled.toggled.connect(self._on_second_toggled)
        self.second.setEnabled(False)
        self.transient = QDoubleSpinBox()
        self.transient.setRange(0.0, SPIN_LIMIT)
        self.transient.setDecimals(4)
        self.transient.setSuffix(" s")
        self.t_end = QDoubleSpinBox()
        self.t_end.setRange(1e-6, SPIN_LIMIT)
        self.t_end.setDecimals(4)
        self.t_end.setSuffix(" s")
        self.t_end.setValue(scene.solver.t_end)
        self.dt_out = QDoubleSpinBox()
        self.dt_out.setRange(1e-6, SPIN_LIMIT)
        self.dt_out.setDecimals(4)
        self.dt_out.setSuffix(" s")
        self.dt_out.setValue(scene.solver.dt_out)
        self.dt_out.setToolTip(
            "Spacing of the output samples of each run. A sweep keeps only the impacts "
            "and the final state: an output step as long as the end time costs least."
        )
        if scene.forces:
            self.transient.setValue(0.5 * scene.solver.t_end)
        self.workers = QSpinBox()
        self.workers.setRange(1, max(1, default_workers()))
        self.workers.setValue(max(1, default_workers()))
        self.run_on = QComboBox()
        self.run_on.addItems([RUN_ON_LOCAL, RUN_ON_DASK])
        self.run_on.setToolTip(
            "Where the points run: processes of this computer, or the workers of a running "
            "Dask distributed cluster (pip install impactgui[cluster]; start one with "
            "`dask scheduler` and `dask worker tcp://HOST:8786`)."
        )
        self.scheduler = QLineEdit()
        self.scheduler.setPlaceholderText("tcp://HOST:PORT")
        self.scheduler.setToolTip("The address `dask scheduler` prints, e.g. tcp://10.0.0.5:8786")
        self.run_on.currentIndexChanged.connect(self._on_run_on_changed)
        self._on_run_on_changed(self.run_on.currentIndex())
        self.log_y = QCheckBox("log scale (values > 0)")
        self.log_y.setToolTip("The observable on a log axis (when every value shown is > 0)")
        self.log_y.toggled.connect(self._on_observable_changed)
        self.observable = QComboBox()
        self._fill_observables()
        self.observable.currentIndexChanged.connect(self._on_observable_changed)
        self._choose_default_field()

        self.run_button = QPushButton("Run sweep")
        self.run_button.clicked.connect(self._on_run_clicked)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        self.export_csv_button = QPushButton("Export CSV…")
        self.export_csv_button.clicked.connect(self._on_export_csv_clicked)
        self.export_png_button = QPushButton("Export PNG…")
        self.export_png_button.clicked.connect(self._on_export_png_clicked)
        self.progress = QProgressBar()
        self.progress.setFormat("%v / %m points")
        self.progress.setValue(0)
        for spin in (self.first.count, self.second.count):
            spin.valueChanged.connect(self._show_planned)
        self.second_enabled.toggled.connect(self._show_planned)
        self._show_planned()
        self.status = QLabel("Choose a field and a range, then Run sweep.")
        self.status.setWordWrap(True)

        # the legend (the orbit overlay's branches) beside the plot, never over the data
        self.plot, self.plot_item = plot_with_legend_beside()
        show_grid(self.plot_item, "w", alpha=0.2)
        for side in ("left", "bottom"):  # black, as the live plots (grey was pale)
            axis = self.plot_item.getAxis(side)
            axis.setPen("k")
            axis.setTextPen("k")
            # the values in the label's unit: pyqtgraph's own prefix wrote impact speeds of
            # 0.17-0.30 m/s as "170-300" beside "(m/s) (x0.001)"
            axis.enableAutoSIPrefix(False)
        self.scatter = pg.ScatterPlotItem(
            size=4, pen=None, brush=pg.mkBrush(20, 60, 160, 150), pxMode=True
        )
        self.line = pg.PlotDataItem(pen=pg.mkPen(20, 60, 160, 120, width=1))
        self.image = pg.ImageItem()
        self.colour_bar: pg.ColorBarItem | None = None
        self.plot.scene().sigMouseClicked.connect(self._on_plot_clicked)
        self.orbits = OrbitOverlay(self)

        self._layout()
        self._update_buttons()

    # ------------------------------------------------------------------ layout

    def _layout(self) -> None:
        first_box = QGroupBox("Field")
        QVBoxLayout(first_box).addWidget(self.first)
        second_box = QGroupBox("Second field")
        second_layout = QVBoxLayout(second_box)
        second_layout.addWidget(self.second_enabled)
        second_layout.addWidget(self.second)
        run_box = QGroupBox("Runs")
        form = QFormLayout(run_box)
        form.addRow("transient", self.transient)
        form.addRow("end time", self.t_end)
        form.addRow("output step", self.dt_out)
        form.addRow("observable", self.observable)
        form.addRow("", self.log_y)
        run_on_box = QGroupBox("Run on")
        run_on = QFormLayout(run_on_box)
        run_on.addRow("where", self.run_on)
        run_on.addRow("processes", self.workers)
        run_on.addRow("scheduler", self.scheduler)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        exports = QHBoxLayout()
        exports.addWidget(self.export_csv_button)
        exports.addWidget(self.export_png_button)
        controls = QVBoxLayout()
        for widget in (first_box, second_box, run_box, run_on_box):
            controls.addWidget(widget)
        controls.addLayout(buttons)
        controls.addWidget(self.progress)
        controls.addWidget(self.status)
        controls.addLayout(exports)
        controls.addWidget(self.orbits.box)
        controls.addStretch(1)
        side = QWidget()
        side.setLayout(controls)
        side.setFixedWidth(380)
        self.controls_scroll = scroll = QScrollArea()
        scroll.setWidget(side)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setFixedWidth(400)
        side = scroll
        layout = QHBoxLayout(self)
        layout.addWidget(side)
        layout.addWidget(self.plot, 1)

    @Slot()
    def _show_planned(self) -> None:
        """Before a run the bar counts the points the fields ask for ("0 / 29 points")."""
        if self.is_running():
            return
        planned = self.first.count.value()
        if self.second_enabled.isChecked():
            planned *= self.second.count.value()
        self.progress.setRange(0, planned)
        self.progress.setValue(0)

    def _fill_observables(self) -> None:
        self.observable.clear()
        self.observable.addItem("impact speeds before each impact (bifurcation, m/s)", IMPACT_SPEED)
        names = {
            "t_zeno": "t_zeno, first Zeno accumulation",
            "n_impacts": "n_impacts, all impacts",
            "E_dissipated": "E_dissipated by the end",
        }
        for column in SUMMARY_OBSERVABLES:
            self.observable.addItem(
                f"{names[column]} ({unit_text(OBSERVABLE_UNITS[column])})", column
            )
        for column, name in PERIOD_OBSERVABLES.items():
            self.observable.addItem(f"{name} ({unit_text(OBSERVABLE_UNITS[column])})", column)
        if self.scene.has_compliance:
            for column, name in CONTACT_OBSERVABLES.items():
                self.observable.addItem(f"{name} ({unit_text(OBSERVABLE_UNITS[column])})", column)
        probe = Sweep(self.scene, [Axis(self.fields[0].path, (self.fields[0].value,))])
        for column in probe.state_columns:
            self.observable.addItem(f"final {column} ({unit_text(state_unit(column))})", column)

    def _choose_default_field(self) -> None:
        """First a forcing frequency, else the restitution; the second field the other one."""
        paths = [field.path for field in self.fields]
        preferred = [p for p in paths if p.startswith("forces") and p.endswith(".omega")]
        preferred += [p for p in paths if p == "contact.restitution"]
        for chooser, path in zip((self.first, self.second), preferred, strict=False):
            chooser.combo.setCurrentIndex(paths.index(path))

    # ---------------------------------------------------------------- settings

    def set_observable(self, column: str) -> None:
        """Show ``column`` (``"u_n_minus"``, a summary or final-state column)."""
        index = self.observable.findData(column)
        if index < 0:
            raise KeyError(f"{column}: not an observable of this sweep")
        self.observable.setCurrentIndex(index)

    def observable_column(self) -> str:
        """The column shown."""
        return str(self.observable.currentData())

    def axes(self) -> list[Axis]:
        """The varied fields (raises ``SweepError`` for a bad range)."""
        axes = [self.first.axis()]
        if self.second_enabled.isChecked():
            axes.append(self.second.axis())
        return axes

    def use_dask(self, address: str | None) -> None:
        """Run the next sweeps on the Dask scheduler at ``address`` (None: local processes)."""
        self.run_on.setCurrentText(RUN_ON_LOCAL if address is None else RUN_ON_DASK)
        self.scheduler.setText(address or "")

    def scheduler_address(self) -> str | None:
        """The Dask scheduler's address when *Run on* names one, else None (local processes)."""
        if self.run_on.currentText() != RUN_ON_DASK:
            return None
        return self.scheduler.text().strip()

    def t_end_override(self) -> float | None:
        """The end time if it differs from the scene's, else None (s)."""
        value = self.t_end.value()
        return None if math.isclose(value, self.scene.solver.t_end) else value

    def dt_out_override(self) -> float | None:
        """The output step if it differs from the scene's, else None (s)."""
        value = self.dt_out.value()
        return None if math.isclose(value, self.scene.solver.dt_out) else value

    # --------------------------------------------------------------------- run

    def start(self) -> bool:
        """Run the sweep set in the controls; False (with the reason shown) on bad input."""
        if self.is_running():
            return False
        address = self.scheduler_address()
        problem = None if address is None else scheduler_problem(address)
        if problem is not None:
            self.status.setText(
                f"<span style='color:#b00020'>Dask scheduler address: {problem}</span>"
            )
            return False
        try:
            plan = Sweep(
                self.scene,
                self.axes(),
                t_end=self.t_end_override(),
                transient=self.transient.value(),
                dt_out=self.dt_out_override(),
            )
        except SweepError as error:
            self.status.setText(f"<span style='color:#b00020'>Cannot sweep: {error}</span>")
            return False
        self.plan = plan
        self.result = SweepResult(plan)
        self._log_x = len(plan.axes) == 1 and self.first.log.isChecked()
        self._clear_plot()
        self.progress.setRange(0, len(plan))
        self.progress.setValue(0)
        self._started_at = time.monotonic()
        self.state = "running"
        where = (
            f"{self.workers.value()} processes"
            if address is None
            else f"the Dask cluster at {address}"
        )
        self.status.setText(f"Running {len(plan)} points on {where}…")
        self._thread = QThread()
        self._worker = SweepWorker(plan, self.workers.value(), address)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        self._worker.point_done.connect(self._on_point_done)
        self._worker.failed.connect(self._on_failed)
        self._worker.finished.connect(self._on_worker_finished)
        self._worker.finished.connect(self._thread.quit)
        self._thread.start()
        self._update_buttons()
        return True

    def cancel(self) -> None:
        """Stop the sweep; the points finished so far stay (and export).

        Returns at once: the worker stops the points within
        ``solver.sweep.STOP_POLL_S`` (once the pool has started or the
        scheduler answered), then ``sweep_ended("cancelled")`` follows.
        """
        if self._worker is None or self.state != "running":
            return
        self._worker.cancel()
        self.state = "cancelling"
        self.status.setText("Cancelling: stopping the processes…")
        self.cancel_button.setEnabled(False)

    def is_running(self) -> bool:
        """True while a sweep's worker thread runs."""
        return self._thread is not None

    def _join(self) -> None:
        thread = self._thread
        if thread is None:
            return
        thread.quit()
        thread.wait()
        self._thread = None
        self._worker = None

    @Slot(object)
    def _on_point_done(self, point: PointResult) -> None:
        if not self._from_current_worker() or self.state != "running" or self.plan is None:
            return
        assert self.result is not None
        self.result.add(point)
        done = len(self.result.by_run)
        self.progress.setValue(done)
        self.status.setText(self._progress_text(done, len(self.plan)))
        if not self._redraw_timer.isActive():
            self._redraw_timer.start()
        self.point_added.emit(done)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        if not self._from_current_worker() or self.state != "running":
            return
        self.status.setText(f"<span style='color:#b00020'>The sweep failed: {message}</span>")
        self.state = "failed"

    @Slot()
    def _on_worker_finished(self) -> None:
        if not self._from_current_worker():
            return
        self._join()
        self._end({"running": "finished", "cancelling": "cancelled"}.get(self.state, "failed"))

    def _from_current_worker(self) -> bool:
        """Whether the signal being handled comes from the running sweep (not a cancelled one)."""
        return self._worker is not None and self.sender() is self._worker

    def _end(self, state: str) -> None:
        self.state = state
        self.redraw()
        self._update_buttons()
        if self.result is not None and self.plan is not None and state != "failed":
            done = len(self.result.by_run)
            failed = sum(1 for point in self.result.points if point.status == "failed")
            elapsed = time.monotonic() - self._started_at
            text = f"{state}: {done} of {len(self.plan)} points in {elapsed:.1f} s"
            if failed:
                text += f"; {failed} failed (their rows in summary.csv say why)"
            self.status.setText(text + ". Click a point to open its run.")
        self.sweep_ended.emit(state)

    def _progress_text(self, done: int, total: int) -> str:
        elapsed = max(time.monotonic() - self._started_at, 1e-9)
        rate = done / elapsed
        left = (total - done) / rate if rate > 0 else math.inf
        return f"{done} / {total} points, {rate:.2f} points/s, about {left:.0f} s left"

    def _update_buttons(self) -> None:
        running = self.is_running()
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        has_points = self.result is not None and bool(self.result.by_run)
        self.export_csv_button.setEnabled(has_points)
        self.export_png_button.setEnabled(has_points)

    # -------------------------------------------------------------------- plot

    def _clear_plot(self) -> None:
        self._redraw_timer.stop()
        self._shown = []
        for item in (self.scatter, self.line, self.image):
            if item.scene() is not None:
                self.plot_item.removeItem(item)
        if self.colour_bar is not None:
            self.plot_item.layout.removeItem(self.colour_bar)
            self.colour_bar.setParentItem(None)
            self.plot.scene().removeItem(self.colour_bar)
            self.colour_bar = None
        self.scatter.clear()
        self.line.clear()
        self.image.clear()

    @Slot(int)
    def _on_observable_changed(self, _index: int) -> None:
        self.redraw()

    @Slot()
    def redraw(self) -> None:
        """Draw the points finished so far (called at most every ``REDRAW_MS`` while running)."""
        if self.plan is None or self.result is None:
            return
        column = self.observable_column()
        axes = self.plan.axes
        if len(axes) == 1:
            self._draw_line(axes[0], column)
        else:
            self._draw_map(axes[0], axes[1], column)

    def _axis_label(self, path: str) -> str:
        unit = next((f.unit for f in self.fields if f.path == path), "")
        label = field_label(path, self._scene_data)
        return f"{label} ({unit})" if unit else label

    def _column_label(self, column: str) -> str:
        unit = OBSERVABLE_UNITS.get(column, state_unit(column))
        return f"{column} ({unit})" if unit else column

    def _draw_line(self, axis: Axis, column: str) -> None:
        assert self.result is not None
        points = self.result.points
        if self.scatter.scene() is None:
            self.plot_item.addItem(self.line)
            self.plot_item.addItem(self.scatter)
        shown: list[tuple[float, float, int]] = []
        if column == IMPACT_SPEED:
            for point in points:
                x = float(point.values[0])
                shown += [
                    (x, impact.u_n_minus, point.run)
                    for impact in point.impacts
                    if impact.u_n_minus is not None
                ]
            self.line.clear()
            self.plot_item.setTitle(
                "Bifurcation diagram: impact speed after the transient", color="k"
            )
        else:
            for point in points:
                value = point_value(point, column, self.plan)
                if value is not None:
                    shown.append((float(point.values[0]), value, point.run))
            self.line.setData([p[0] for p in shown], [p[1] for p in shown])
            self.plot_item.setTitle(
                f"{column} against {field_label(axis.path, self._scene_data)}", color="k"
            )
        self._shown = shown
        data = np.array([(x, y) for x, y, _ in shown], dtype=float).reshape(-1, 2)
        self._log_y = self.log_y.isChecked() and bool(len(data)) and bool(np.all(data[:, 1] > 0))
        self.plot_item.setLogMode(x=self._log_x, y=self._log_y)
        view = self.to_view(data)
        self.scatter.setData(x=view[:, 0], y=view[:, 1], data=[run for *_, run in shown])
        self.scatter.setSize(4 if column == IMPACT_SPEED else 7)
        self.plot_item.setLabel("bottom", self._axis_label(axis.path))
        ylabel = (
            f"{IMPACT_SPEED_LABEL} (m/s)" if column == IMPACT_SPEED else self._column_label(column)
        )
        self.plot_item.setLabel("left", ylabel)
        for side, log in (("bottom", self._log_x), ("left", self._log_y)):
            # an SI prefix on a log axis scales the powers of ten ("×0.001"): none there
            axis = self.plot_item.getAxis(side)
            axis.setSIPrefixEnableRanges(() if log else None)
            axis.updateAutoSIPrefix()

    def to_view(self, data: np.ndarray) -> np.ndarray:
        """Data ``(x, y)`` rows in the plot's view coordinates (log10 on a log axis).

        The line (a PlotDataItem) follows the plot's log mode by itself; the
        scatter and the click test take these.
        """
        view = np.array(data, dtype=float).reshape(-1, 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            if self._log_x:
                view[:, 0] = np.log10(view[:, 0])
            if self._log_y:
                view[:, 1] = np.log10(view[:, 1])
        return view

    def _draw_map(self, first: Axis, second: Axis, column: str) -> None:
        assert self.result is not None and self.plan is not None
        self._log_y = False
        self.plot_item.setLogMode(x=False, y=False)
        n1, n2 = len(first.values), len(second.values)
        grid = np.full((n1, n2), np.nan)
        for point in self.result.points:
            if column == IMPACT_SPEED:
                speeds = [i.u_n_minus for i in point.impacts if i.u_n_minus is not None]
                value = max(speeds) if speeds else None
            else:
                value = point_value(point, column, self.plan)
            if value is not None:
                grid[divmod(point.run, n2)] = value
        x0, dx = _cell(first)
        y0, dy = _cell(second)
        if self.image.scene() is None:
            self.plot_item.addItem(self.image)
        finite = grid[np.isfinite(grid)]
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if high <= low:
            high = low + 1.0
        self.image.setImage(grid, autoLevels=False, levels=(low, high))
        self.image.setRect(QRectF(x0 - dx / 2, y0 - dy / 2, n1 * dx, n2 * dy))
        if self.colour_bar is None:
            self.colour_bar = pg.ColorBarItem(
                values=(low, high), colorMap="viridis", interactive=False
            )
            self.colour_bar.setImageItem(self.image, insert_in=self.plot_item)
            self.colour_bar.axis.enableAutoSIPrefix(False)
        self.colour_bar.setLevels((low, high))
        name = f"largest {IMPACT_SPEED_LABEL} (m/s)" if column == IMPACT_SPEED else None
        self.colour_bar.axis.setLabel(name or self._column_label(column))
        self._shown = [(x0 + i * dx, y0 + j * dy, i * n2 + j) for i in range(n1) for j in range(n2)]
        self.plot_item.setLabel("bottom", self._axis_label(first.path))
        self.plot_item.setLabel("left", self._axis_label(second.path))
        self.plot_item.setTitle(f"{name or column} over the grid", color="k")

    def shown_points(self) -> list[tuple[float, float, int]]:
        """What the plot shows: ``(x, y, run)`` per marker (per cell for a colour map)."""
        return list(self._shown)

    # ------------------------------------------------------------------- click

    @Slot(object)
    def _on_plot_clicked(self, event: Any) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        orbit = self.orbits.orbit_at(event.scenePos())
        if orbit is not None:  # a branch's orbit under the click comes first
            event.accept()
            self.orbits.open_orbit(*orbit)
            return
        if not self._shown:
            return
        run = self.point_at(event.scenePos())
        if run is not None:
            event.accept()
            self.open_run(run)

    def point_at(self, scene_pos: QPointF) -> int | None:
        """The run of the point under ``scene_pos`` (plot scene coordinates), if any."""
        view = self.plot_item.vb
        if not view.sceneBoundingRect().contains(scene_pos):
            return None
        if self.image.scene() is not None and self.plan is not None:
            where = view.mapSceneToView(scene_pos)
            first, second = self.plan.axes
            x0, dx = _cell(first)
            y0, dy = _cell(second)
            i = round((where.x() - x0) / dx)
            j = round((where.y() - y0) / dy)
            if 0 <= i < len(first.values) and 0 <= j < len(second.values):
                return i * len(second.values) + j
            return None
        best, best_distance = None, CLICK_RADIUS_PX
        where = self.to_view(np.array([(x, y) for x, y, _ in self._shown]))
        for (x, y), (*_, run) in zip(where, self._shown, strict=True):
            marker = view.mapViewToScene(QPointF(float(x), float(y)))
            distance = math.hypot(marker.x() - scene_pos.x(), marker.y() - scene_pos.y())
            if distance <= best_distance:
                best, best_distance = run, distance
        return best

    def open_run(self, run: int) -> dict[str, Any] | None:
        """Ask for point ``run``'s scene in the main window (``run_requested``); returns it."""
        if self.plan is None or not 0 <= run < len(self.plan):
            return None
        values = self.plan.points[run]
        assignment = dict(zip((axis.path for axis in self.plan.axes), values, strict=True))
        data = scene_to_dict(self.plan.point_scene(run))
        given = ", ".join(f"{path} = {value:.6g}" for path, value in assignment.items())
        data["title"] = f"{self.scene.title} — {given}"
        self.status.setText(f"Opened run {run} ({given}) in the main window.")
        self.run_requested.emit(data)
        return data

    # ----------------------------------------------------------------- exports

    def export_csv(self, directory: str | Path | None = None) -> dict[str, Path] | None:
        """Write ``summary.csv`` and ``impacts.csv`` of the points so far into ``directory``."""
        if self.result is None or not self.result.by_run:
            return None
        if directory is None:
            directory = QFileDialog.getExistingDirectory(self, "Export sweep CSV to directory")
            if not directory:
                return None
        try:
            paths = self.result.write_csv(directory)
        except OSError as error:
            self.status.setText(f"Cannot write {directory}: {error}")
            return None
        self.status.setText(f"Wrote {paths['summary']} and {paths['impacts'].name}.")
        return paths

    def export_png(self, path: str | Path | None = None, scale: float = 2.0) -> bool:
        """Save the plot as a PNG (``scale`` times its size on screen)."""
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export sweep plot", "", "PNG (*.png)")
            if not path:
                return False
        ok = render_widget(self.plot, scale).save(str(path))
        self.status.setText(f"Saved {path}." if ok else f"Cannot write {path}.")
        return bool(ok)

    # ------------------------------------------------------------------- slots

    @Slot(int)
    def _on_run_on_changed(self, _index: int) -> None:
        dask = self.run_on.currentText() == RUN_ON_DASK
        self.workers.setEnabled(not dask)
        self.scheduler.setEnabled(dask)

    @Slot(bool)
    def _on_second_toggled(self, checked: bool) -> None:
        self.second.setEnabled(checked)

    @Slot()
    def _on_run_clicked(self) -> None:
        self.start()

    @Slot()
    def _on_cancel_clicked(self) -> None:
        self.cancel()

    @Slot()
    def _on_export_csv_clicked(self) -> None:
        self.export_csv()

    @Slot()
    def _on_export_png_clicked(self) -> None:
        self.export_png()

    def shutdown(self) -> None:
        """Cancel a running sweep and join its thread (and a continuation's); idempotent."""
        self._redraw_timer.stop()
        self.orbits.shutdown()
        if self._worker is not None:
            self._worker.cancel()
        self._join()

    def closeEvent(self, event: Any) -> None:
        """Closing the window cancels its sweep."""
        self.shutdown()
        super().closeEvent(event)


def point_value(point: PointResult, column: str, plan: Sweep | None) -> float | None:
    """A point's value of a summary or final-state column (None when it has none)."""
    if column in SUMMARY_OBSERVABLES:
        value = getattr(point, column)
        return None if value is None else float(value)
    if column in PERIOD_OBSERVABLES:
        value = {
            "period": point.period.period,
            "impacts_per_period": point.period.impacts_per_period,
            "period_s": point.period.seconds,
        }[column]
        return None if value is None else float(value)
    if column in CONTACT_OBSERVABLES:
        if point.contact is None:
            return None
        value = point.contact[CONTACT_COLUMNS.index(column)]
        return None if value is None else float(value)
    if plan is None or not point.final_state:
        return None
    return float(point.final_state[plan.state_columns.index(column)])


def _cell(axis: Axis) -> tuple[float, float]:
    """First value of a numeric axis and its step (1 for a single value)."""
    values = [float(v) for v in axis.values]
    step = (values[-1] - values[0]) / (len(values) - 1) if len(values) > 1 else 1.0
    return values[0], step if step != 0.0 else 1.0


# ---------------------------------------------------------------- the launcher


class SweepLauncher(QObject):
    """Run ▸ Sweep in the main window: opens sweep windows, opens their runs.

    Parameters
    ----------
    window : MainWindow
        The main window whose current scene is swept and where clicked runs open.
    """

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window
        self.windows: list[SweepWindow] = []

    def open(self) -> SweepWindow | None:
        """Open a sweep window on the current scene (None, with a warning, if it is invalid)."""
        try:
            scene = self._window.doc.scene()
        except SceneError as error:
            self._window.warn("Cannot sweep", "The scene has problems:", error.problems)
            return None
        sweep_window = SweepWindow(scene, self._window)
        sweep_window.run_requested.connect(self._on_run_requested)
        sweep_window.orbit_requested.connect(self._on_orbit_requested)
        self.windows.append(sweep_window)
        sweep_window.show()
        return sweep_window

    @Slot(object)
    def _on_run_requested(self, data: dict[str, Any]) -> bool:
        window = self._window
        if not window.maybe_discard_changes():
            return False
        window.reset_run()
        window.doc.set_data(data)
        window.start_run()
        window.activateWindow()
        return True

    @Slot(object)
    def _on_orbit_requested(self, data: dict[str, Any]) -> None:
        """Run the orbit's scene; its playback starts again at the end of the period."""
        if self._on_run_requested(data):
            self._window.clock.loop_end = float(data["solver"]["t_end"])

    def shutdown(self) -> None:
        """Cancel every sweep and join its thread; idempotent."""
        for sweep_window in self.windows:
            sweep_window.shutdown()
