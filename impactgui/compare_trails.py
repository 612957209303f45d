"""The runs of Run ▸ Compare drawn on the main canvas as trails, one colour per run.

Each compared run (a law, or a value of a field) draws the path of every
body's centre as one curve on the canvas, in the colour of its curves in
the Compare dialog's overlay plot, with a legend naming what the run varies
("contact.restitution = 0.3", "law: sequential"). The trails follow the
playback time: while a run of the window is shown (the canvas animates),
each trail ends at the clock's time; otherwise it shows the whole compared
run as far as it is computed. They are cleared when the Compare dialog
closes or starts a new comparison.

A trail keeps at most ``POINTS_MAX`` positions per body and ``POINT_BUDGET``
per run (evenly decimated, the newest position always drawn), so a long run
or a long chain costs bounded drawing on every playback tick.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel

from solver.scene import scene_to_dict

POINTS_MAX = 4000
"""Per body and run: at most this many positions are drawn (decimated beyond)."""

POINT_BUDGET = 30_000
"""Per run, over all its bodies: a chain of 2000 beads draws 15 positions per bead."""

TRAIL_Z = 5.0
"""Above the canvas's own trail (4), below the arrows."""


def run_colour(index: int, count: int) -> QColor:
    """The colour of the ``index``-th of ``count`` compared runs (as in the overlay plot)."""
    return pg.intColor(index, hues=max(count, 3))


def centre_columns(system: Any) -> list[tuple[str, int, int | None, float]]:
    """Per body: ``(id, x column, y column or None, constant y)`` in the state row.

    A bead runs on a rail at a fixed height (its ``rail_y``): it has no y
    column. A cart's centre is ``(xC, yC)``.
    """
    bodies = {body["id"]: body for body in scene_to_dict(system.scene)["bodies"]}
    found: list[tuple[str, int, int | None, float]] = []
    offset = 0
    for body_id, coord_names, _rates in system.dof_labels:
        coords = {name: offset + k for k, name in enumerate(coord_names)}
        offset += len(coord_names)
        if "xC" in coords:
            found.append((body_id, coords["xC"], coords.get("yC"), 0.0))
        elif "x" in coords:
            rail = float(bodies.get(body_id, {}).get("rail_y", 0.0))
            found.append((body_id, coords["x"], coords.get("y"), rail))
    return found


class CompareTrails(QObject):
    """Draws the compared runs of one Compare dialog on a ``SceneCanvas``.

    Parameters
    ----------
    canvas : SceneCanvas
        The main window's canvas (its ``view``, ``plot``, ``animating`` and
        ``current_time`` are read; nothing of it is changed but the items added).
    redraw_on : iterable of signals
        Signals after which the trails' ends move: the playback clock's
        ``time_changed``, the window's ``run_state_changed`` (after Reset the
        canvas no longer animates and the whole compared runs are drawn).

    Another scene opened in the window (the document's ``reset``) clears the
    trails: they belong to the scene that was compared.
    """

    def __init__(
        self, canvas: Any, redraw_on: Iterable[Any] = (), parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.canvas = canvas
        self._runs: list[tuple[str, Any, pg.PlotCurveItem, list]] = []
        self.legend = QLabel(canvas.plot)
        self.legend.setStyleSheet(
            "QLabel { background: rgba(255,255,255,220); color: #37474f; padding: 3px 6px;"
            " border: 1px solid #b0bec5; border-radius: 3px; }"
        )
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.hide()
        for signal in redraw_on:
            signal.connect(self.refresh)
        canvas.document.reset.connect(self.clear)

    def show_runs(self, runs: list[tuple[str, Any]]) -> None:
        """Draw ``(title, SimulationRunner)`` pairs, replacing the runs drawn before."""
        self.clear()
        for index, (title, runner) in enumerate(runs):
            colour = run_colour(index, len(runs))
            curve = pg.PlotCurveItem(pen=pg.mkPen(colour, width=2.0))
            curve.setZValue(TRAIL_Z)
            self.canvas.view.addItem(curve, ignoreBounds=True)
            columns = centre_columns(runner.system) if runner.system is not None else []
            self._runs.append((title, runner, curve, columns))
            runner.frames_added.connect(self._on_frames_added)
        self._update_legend()
        self.refresh()

    @Slot()
    def clear(self) -> None:
        """Remove every compared run's trail and the legend from the canvas."""
        for _title, runner, curve, _columns in self._runs:
            try:
                runner.frames_added.disconnect(self._on_frames_added)
            except (RuntimeError, TypeError):  # the runner is gone already
                pass
            self.canvas.view.removeItem(curve)
        self._runs = []
        self.legend.hide()

    @property
    def titles(self) -> list[str]:
        """What each drawn run varies, in drawing order."""
        return [title for title, *_ in self._runs]

    def curves(self) -> list[pg.PlotCurveItem]:
        """The drawn curves, one per run (all its bodies, broken between them)."""
        return [curve for _title, _runner, curve, _columns in self._runs]

    def shown_time(self) -> float:
        """Where the trails end: the playback time while a run is shown, else no limit."""
        return float(self.canvas.current_time) if self.canvas.animating else math.inf

    def trail(self, run: int, body_id: str) -> np.ndarray:
        """The positions drawn for one body of the ``run``-th run, shape (n, 2), m."""
        _title, runner, _curve, columns = self._runs[run]
        ids = [found_id for found_id, *_rest in columns]
        if body_id not in ids:
            raise KeyError(body_id)
        return self._positions(runner, columns)[:, ids.index(body_id)]

    def _positions(self, runner: Any, columns: list) -> np.ndarray:
        """Every body's centre up to ``shown_time``, decimated: shape (frames, bodies, 2)."""
        trajectory = runner.trajectory
        t = trajectory.times()
        n = int(np.searchsorted(t, self.shown_time(), side="right"))
        if n == 0 or not columns:
            return np.zeros((0, len(columns), 2))
        limit = max(2, min(POINTS_MAX, POINT_BUDGET // len(columns)))
        rows = np.arange(0, n, max(1, math.ceil(n / limit)))
        if rows[-1] != n - 1:
            rows = np.append(rows, n - 1)  # the newest position is always drawn
        states = trajectory.states()[rows]
        x = states[:, [x_col for _id, x_col, _y, _rail in columns]]
        rails = np.array([rail for *_rest, rail in columns])
        y_cols = [y_col if y_col is not None else 0 for _id, _x, y_col, _rail in columns]
        has_y = np.array([y_col is not None for _id, _x, y_col, _rail in columns])
        y = np.where(has_y, states[:, y_cols], rails)
        return np.stack((x, y), axis=2)

    @Slot()
    @Slot(float)
    @Slot(str)
    def refresh(self, _argument: object = None) -> None:
        """Redraw every trail up to ``shown_time``."""
        if self._runs:
            self._place_legend()
        for _title, runner, curve, columns in self._runs:
            positions = self._positions(runner, columns)
            if len(positions) == 0:
                curve.setData([], [])
                continue
            frames, bodies = positions.shape[:2]
            points = positions.transpose(1, 0, 2).reshape(frames * bodies, 2)  # body by body
            connect = np.ones((bodies, frames), dtype=np.int32)
            connect[:, -1] = 0  # broken between bodies
            curve.setData(points[:, 0], points[:, 1], connect=connect.ravel())

    @Slot(object)
    def _on_frames_added(self, _batch: object) -> None:
        self.refresh()

    def _update_legend(self) -> None:
        if not self._runs:
            self.legend.hide()
            return
        rows = [
            f"<span style='color:{run_colour(k, len(self._runs)).name()}'>━━</span> {title}"
            for k, (title, *_rest) in enumerate(self._runs)
        ]
        self.legend.setText("compared runs:<br>" + "<br>".join(rows))
        self.legend.adjustSize()
        self._place_legend()
        self.legend.show()
        self.legend.raise_()

    def _place_legend(self) -> None:
        """The legend at the canvas's top right corner, below the canvas's own legend."""
        own = getattr(self.canvas, "legend", None)
        top = own.geometry().bottom() + 6 if own is not None and own.isVisible() else 8
        self.legend.move(max(self.canvas.plot.width() - self.legend.width() - 12, 60), top)
