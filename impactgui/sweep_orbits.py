"""The Sweep window's "Continue orbits": branches of periodic orbits over the diagram.

:class:`OrbitOverlay` (owned by :class:`impactgui.sweep_window.SweepWindow`)
follows the periodic orbits of the window's scene over its first field, from
*from* to *to* (:func:`solver.orbit_branches.follow_branches`, as ``python -m
solver orbits`` does), in a worker thread, and draws them on the sweep's plot
in the bifurcation diagram's units: for each impact of an orbit, its approach
speed ``|u_n⁻|`` (m/s) against the field. A stable stretch of a branch is a
solid line, an unstable one dashed; each located bifurcation is a marker
(fold ○, period doubling □, torus ◇, grazing △) and a line of the list under
the button. The brute-force diagram (Run sweep) and the branches share the
axes, so the branches show the unstable orbits and coexisting motions the
simulations miss. A click on a branch opens that orbit in the main window: the
scene started on it at its section, one period long and played in a loop, its
multipliers in the title.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QPointF, Qt, QThread, Signal, Slot
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QSpinBox,
)

from solver.orbit_branches import Followed, follow_branches
from solver.orbits import orbit_scene
from solver.orbits_command import MAX_DOUBLINGS
from solver.scene import scene_to_dict
from solver.scene_paths import with_values
from solver.system import System

if TYPE_CHECKING:
    from impactgui.sweep_window import SweepWindow

MARKERS = {"fold": "o", "period_doubling": "s", "torus": "d", "grazing": "t"}
"""pyqtgraph symbol of each bifurcation kind."""
KIND_NAMES = {
    "fold": "fold",
    "period_doubling": "period doubling",
    "torus": "torus",
    "grazing": "grazing",
}
BRANCH_COLOURS = [(200, 40, 40), (230, 140, 0), (120, 40, 160), (20, 140, 60), (120, 80, 30)]
"""Branch 0, the doubled branches 1, 2, … of a cascade (the sweep's points are blue)."""


@dataclass
class Stretch:
    """One drawn piece of a branch: an impact's speed over consecutive orbits of one stability."""

    branch: int
    p: list[float]
    speed: list[float]
    stable: bool


class OrbitWorker(QObject):
    """Runs :func:`solver.orbit_branches.follow_branches` in its own thread."""

    finished = Signal(object)
    """The list of :class:`~solver.orbit_branches.Followed`, or a str when it could not run."""

    def __init__(self, arguments: dict[str, Any]) -> None:
        super().__init__()
        self._arguments = arguments

    @Slot()
    def run(self) -> None:
        try:
            result: Any = follow_branches(**self._arguments)
        except Exception as error:  # bad input the solver refused: say it, keep the window
            result = f"{type(error).__name__}: {error}"
        self.finished.emit(result)


class OrbitOverlay(QObject):
    """Controls, worker and drawing of "Continue orbits" in a Sweep window.

    Signals
    -------
    ended(str)
        ``"finished"`` or ``"failed"``.

    Attributes
    ----------
    branches : list of Followed
        The last continuation's branches.
    stretches : list of Stretch
        What is drawn: solid (stable) and dashed (unstable) pieces.
    marks : list of tuple
        ``(kind, p, speed)`` of each bifurcation marker.
    state : str
        ``"idle"``, ``"running"``, ``"finished"`` or ``"failed"``.
    """

    ended = Signal(str)

    def __init__(self, window: SweepWindow) -> None:
        super().__init__(window)
        self.window = window
        self.branches: list[Followed] = []
        self.stretches: list[Stretch] = []
        self.marks: list[tuple[str, float, float]] = []
        self.state = "idle"
        self._items: list[Any] = []
        self._thread: QThread | None = None
        self._worker: OrbitWorker | None = None
        self.period = QSpinBox()
        self.period.setRange(1, 64)
        self.period.setToolTip("K: orbits that repeat after K forcing periods")
        self.points = QSpinBox()
        self.points.setRange(2, 10000)
        self.points.setValue(100)
        self.step = QDoubleSpinBox()
        self.step.setRange(0.0, 1e6)
        self.step.setDecimals(5)
        self.step.setSpecialValueText("auto")
        self.step.setToolTip("Arclength step in (state, field); auto: |to − from| / (points − 1)")
        self.doublings = QSpinBox()
        self.doublings.setRange(0, MAX_DOUBLINGS)
        self.doublings.setSpecialValueText("none")
        self.doublings.setToolTip(
            "Doubled branches to follow (a period-doubling cascade): branch d, of period "
            "2^d K, starts at the first period doubling of branch d − 1"
        )
        self.button = QPushButton("Continue orbits")
        self.button.setToolTip(
            "Follow the periodic orbit reached after the transient at 'from' over the field "
            "(pseudo-arclength), with its stability and bifurcations, drawn over the diagram"
        )
        self.button.clicked.connect(self.start)
        self.report = QLabel("Periodic orbits: none yet.")
        self.report.setWordWrap(True)
        self.report.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.box = QGroupBox("Periodic orbits")
        form = QFormLayout(self.box)
        form.addRow("period K", self.period)
        form.addRow("most orbits", self.points)
        form.addRow("step", self.step)
        form.addRow("doubled branches", self.doublings)
        form.addRow(self.button)
        form.addRow(self.report)

    # ------------------------------------------------------------------- run

    def arguments(self) -> dict[str, Any]:
        """What :func:`follow_branches` gets from the window's controls."""
        first = self.window.first
        start, stop = first.start.value(), first.stop.value()
        n = self.points.value()
        step = self.step.value() or abs(stop - start) / (n - 1)
        return {
            "scene": self.window.scene,
            "path": first.path(),
            "p_start": start,
            "p_stop": stop,
            "step": step,
            "max_points": n,
            "period": self.period.value(),
            "transient": self.window.transient.value(),
            "doublings": self.doublings.value(),
        }

    @Slot()
    def start(self) -> bool:
        """Start the continuation in the worker thread (False while one runs)."""
        if self._thread is not None:
            return False
        arguments = self.arguments()
        self.state = "running"
        self.button.setEnabled(False)
        self.report.setText(
            f"Following the orbits of {arguments['path']} from {arguments['p_start']:g} "
            f"to {arguments['p_stop']:g}…"
        )
        self._thread = QThread()
        self._worker = OrbitWorker(arguments)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        self._worker.finished.connect(self._on_finished)
        self._worker.finished.connect(self._thread.quit)
        self._thread.start()
        return True

    @Slot(object)
    def _on_finished(self, result: Any) -> None:
        if self._thread is not None:
            self._thread.quit()
            self._thread.wait()
        self._thread = self._worker = None
        self.button.setEnabled(True)
        if isinstance(result, str):
            self.state = "failed"
            self.report.setText(f"<span style='color:#b00020'>Cannot continue: {result}</span>")
        else:
            self.branches = result
            self.state = "finished"
            self.draw()
            self.report.setText(self.summary())
        self.ended.emit(self.state)

    def shutdown(self) -> None:
        """Wait for a running continuation (the window is closing)."""
        if self._thread is not None:
            self._thread.quit()
            self._thread.wait()
            self._thread = self._worker = None

    # ------------------------------------------------------------------ draw

    def clear(self) -> None:
        """Remove the drawn branches (and their legend entries) from the plot."""
        legend = self.window.plot_item.legend
        for item in self._items:
            legend.removeItem(item)
            self.window.plot_item.removeItem(item)
        self._items = []
        self.stretches = []
        self.marks = []

    def draw(self) -> None:
        """Draw :attr:`branches` on the window's plot (impact speed against the field)."""
        self.clear()
        window = self.window
        M = System(window.scene).M
        for b, followed in enumerate(self.branches):
            self.stretches += _stretches(b, followed, M)
            for p, orbit, mark in followed.rows:
                if mark in MARKERS:
                    speeds = [abs(i.normal_velocities(M)[0]) for i in orbit.contacts] or [0.0]
                    self.marks += [(mark, p, s) for s in speeds]
        plot = window.plot_item  # its legend stands beside it (plots.legend_beside)
        named: set[tuple[int, bool]] = set()
        for stretch in self.stretches:
            colour = BRANCH_COLOURS[stretch.branch % len(BRANCH_COLOURS)]
            style = Qt.PenStyle.SolidLine if stretch.stable else Qt.PenStyle.DashLine
            key = (stretch.branch, stretch.stable)
            name = None
            if key not in named:
                named.add(key)
                name = f"branch {stretch.branch}, {'stable' if stretch.stable else 'unstable'}"
            item = pg.PlotDataItem(
                stretch.p, stretch.speed, pen=pg.mkPen(colour, width=2, style=style), name=name
            )
            plot.addItem(item)
            self._items.append(item)
        for kind, symbol in MARKERS.items():
            points = [(p, s) for k, p, s in self.marks if k == kind]
            if not points:
                continue
            item = pg.PlotDataItem(
                [p for p, _ in points],
                [s for _, s in points],
                pen=None,
                symbol=symbol,
                symbolSize=11,
                symbolPen=pg.mkPen("k", width=1.5),
                symbolBrush=pg.mkBrush(255, 255, 255, 220),
                name=KIND_NAMES[kind],
            )
            plot.addItem(item)
            self._items.append(item)
        if window.plan is None:  # no sweep drawn: the branches set the axes
            window.plot_item.setLabel("bottom", window._axis_label(window.first.path()))
            window.plot_item.setLabel("left", "impact speed |u_n⁻| (m/s)")
            window.plot_item.setTitle("Periodic orbits: stable solid, unstable dashed", color="k")
        plot.setLogMode(x=window._log_x, y=False)

    def orbit_at(self, scene_pos: Any) -> tuple[int, int] | None:
        """``(branch, row)`` of the drawn orbit nearest ``scene_pos`` within the click radius."""
        from impactgui.sweep_window import CLICK_RADIUS_PX

        window = self.window
        view = window.plot_item.vb
        if not self.branches or not view.sceneBoundingRect().contains(scene_pos):
            return None
        M = System(window.scene).M
        best, best_distance = None, CLICK_RADIUS_PX
        for b, followed in enumerate(self.branches):
            for k, (p, orbit, _mark) in enumerate(followed.rows):
                speeds = [abs(i.normal_velocities(M)[0]) for i in orbit.contacts]
                for x, y in window.to_view(np.array([(p, v) for v in speeds])):
                    marker = view.mapViewToScene(QPointF(float(x), float(y)))
                    distance = math.hypot(marker.x() - scene_pos.x(), marker.y() - scene_pos.y())
                    if distance <= best_distance:
                        best, best_distance = (b, k), distance
        return best

    def open_orbit(self, branch: int, row: int) -> dict[str, Any]:
        """Ask for the orbit's scene in the main window (``orbit_requested``); returns it.

        The scene starts on the orbit at its section and runs one period
        (:func:`solver.orbits.orbit_scene`); its title gives the parameter and the
        multipliers.
        """
        window = self.window
        p, orbit, _mark = self.branches[branch].rows[row]
        path = window.first.path()
        scene = orbit_scene(with_values(window.scene, {path: p}), orbit)
        data = scene_to_dict(scene)
        mu = ", ".join(
            f"{m.real:.4g}{m.imag:+.4g}i" if m.imag else f"{m.real:.4g}" for m in orbit.multipliers
        )
        kind = "stable" if orbit.stable else "unstable"
        data["title"] = (
            f"{window.scene.title} — periodic orbit (period {orbit.period}, {kind}) at "
            f"{path} = {p:.9g}; multipliers {mu}"
        )
        window.status.setText(f"Opened the {kind} orbit at {path} = {p:.6g} in the main window.")
        window.orbit_requested.emit(data)
        return data

    def summary(self) -> str:
        """The list under the button: each branch's length and how it ended, each bifurcation."""
        lines = []
        path = self.window.first.path()
        for b, followed in enumerate(self.branches):
            rows = followed.rows
            if rows:
                period = rows[-1][1].period
                lines.append(
                    f"branch {b} (period {period}): {len(rows)} orbits, {path} "
                    f"{rows[0][0]:.6g} → {rows[-1][0]:.6g}"
                )
            for p, _orbit, mark in rows:
                if mark in MARKERS:
                    lines.append(f"  {KIND_NAMES[mark]} at {path} = {p:.9g}")
            if followed.failure:
                lines.append(f"  ended: {followed.failure}")
        solid = "solid: stable, dashed: unstable; ○ fold, □ period doubling, ◇ torus, △ grazing"
        return "<br>".join([*lines, solid])


def _stretches(branch: int, followed: Followed, M: np.ndarray) -> list[Stretch]:
    """A branch's pieces: for each impact (by its order in the period), runs of one stability.

    A piece ends where the stability or the impact count changes; the orbit where the
    stability changes (a located bifurcation's row) ends one piece and starts the next.
    """
    out: list[Stretch] = []
    current: dict[int, Stretch] = {}
    previous_count = None
    for p, orbit, _mark in followed.rows:
        speeds = [abs(i.normal_velocities(M)[0]) for i in orbit.contacts]
        if len(speeds) != previous_count:
            current = {}
        previous_count = len(speeds)
        for j, speed in enumerate(speeds):
            piece = current.get(j)
            if piece is not None and piece.stable != orbit.stable:
                piece.p.append(p)
                piece.speed.append(speed)
                piece = None
            if piece is None:
                piece = Stretch(branch, [], [], orbit.stable)
                out.append(piece)
                current[j] = piece
            piece.p.append(p)
            piece.speed.append(speed)
    return [s for s in out if not all(math.isnan(v) for v in s.speed)]
