"""The event log: one table row per solver event (impacts, impulses, lift-offs, stick/slip, errors).

Columns: time, type, contacts (body – obstacle), the body's velocities
before and after (``v⁻``, ``v⁺``; an axle cart's five rates ``vxC, vyC,
omega, omegaA, omegaB``, named in the tooltip), normal and tangential
impulse (for an ``impulse`` applied to a cart: its size ``|S|``), number of
stages of the impact law, energy change (for an applied impulse: the work
it put in), and the message (why an event is inadmissible, why the run
failed). Clicking a row asks to move the playback time there
(``time_selected``).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from impactgui.names import contact_name, rates_text
from solver.frames import Event
from solver.roundoff import RoundoffScales, clean, clean_array

if TYPE_CHECKING:
    from solver.system import System

COLUMNS = (
    "t (s)",
    "type",
    "contacts",
    "v⁻",
    "v⁺",
    "impulse n / t (N·s)",
    "stages",
    "ΔE (J)",
    "message",
)

_ALERT_TYPES = ("error", "inadmissible", "zeno", "energy_gain")
VELOCITY_WIDTH = 170
"""Width of a ``v⁻`` / ``v⁺`` column, px, for bodies of up to three rates."""
VELOCITY_WIDTH_PER_RATE = 64
"""Width of a ``v⁻`` / ``v⁺`` column per rate, px, for bodies with more (axle carts)."""

FIT_ROWS = 50
"""At most this many new rows are measured when the columns widen to fit their texts."""

FLUSH_INTERVAL_MS = 200
"""New rows reach the table at most this often, ms. A 200-bead chain has impacts every
few milliseconds; listing each batch at once cost 3 ms of scrolling and repainting 60
times a second (a fifth of the GUI thread), now five times a second."""

_JUMP_TYPES = ("impact", "impulse", "action")
"""Events that carry an impulse and an energy change."""

Index = QModelIndex | QPersistentModelIndex


def _vector(values: np.ndarray) -> str:
    return "(" + ", ".join(f"{x:.4g}" for x in values) + ")"


class EventTableModel(QAbstractTableModel):
    """The events of one run as table rows; grows with ``append``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.events: list[Event] = []
        self._rates: dict[str, tuple[slice, tuple[str, ...]]] = {}
        self._scales = RoundoffScales.exact()
        self._rate_scales = np.zeros(0)
        """Scale of each generalized rate (m/s, rad/s): smaller values are round-off, shown 0."""
        self._texts: dict[tuple[int, int], str] = {}
        """Cell texts already formatted (events never change): repaints only look them up."""

    def set_system(self, system: System | None) -> None:
        """Forget every row; ``system`` says which velocities belong to which body."""
        self.beginResetModel()
        self.events = []
        self._rates = {}
        self._texts = {}
        self._scales = RoundoffScales.exact()
        self._rate_scales = np.zeros(0)
        if system is not None:
            self._scales = RoundoffScales.of(system)
            start = 0
            scales: list[float] = []
            for body_id, _coords, rates in system.dof_labels:
                self._rates[body_id] = (slice(start, start + len(rates)), tuple(rates))
                scales += [self._scales.rate(name) for name in rates]
                start += len(rates)
            self._rate_scales = np.array(scales)
        self.endResetModel()

    def append(self, events: list[Event]) -> None:
        """Add rows at the end."""
        if not events:
            return
        first = len(self.events)
        self.beginInsertRows(QModelIndex(), first, first + len(events) - 1)
        self.events.extend(events)
        self.endInsertRows()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Number of events (Qt model API)."""
        return 0 if parent.isValid() else len(self.events)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Number of columns (Qt model API)."""
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Column titles (Qt model API)."""
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Cell text, tooltip and colour (Qt model API)."""
        if not index.isValid():
            return None
        event = self.events[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(index.row(), index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() in (3, 4):
                v = event.v_minus if index.column() == 3 else event.v_plus
                return self._body_velocity(event, v, named=True) or None
            return self._cell(event, index.column()) or event.message or None
        if role == Qt.ItemDataRole.ForegroundRole and event.type in _ALERT_TYPES:
            return QBrush(QColor("#b00020"))
        return None

    def text(self, row: int, column: int) -> str:
        """The text of a cell, formatted once (``data``'s display text, without a Qt index)."""
        key = (row, column)
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = self._cell(self.events[row], column)
        return text

    def _cell(self, event: Event, column: int) -> str:
        match column:
            case 0:
                return f"{event.t:.6f}"
            case 1:
                return event.type
            case 2:
                return contact_name(event.body, event.other)
            case 3:
                return self._body_velocity(event, event.v_minus)
            case 4:
                return self._body_velocity(event, event.v_plus)
            case 5:
                impulse = self._scales.impulse
                normal = clean(event.normal_impulse, impulse)
                if event.type == "impulse":
                    return f"|S| = {normal:.4g}"
                if event.type != "impact":
                    return ""
                return f"{normal:.4g} / {clean(event.tangent_impulse, impulse):.4g}"
            case 6:
                return str(event.stages) if event.stages else ""
            case 7:  # round-off of a lossless impact is 0, not 6e-17 or -0
                if event.type not in _JUMP_TYPES:
                    return ""
                return f"{clean(event.energy_change, self._scales.energy):.4g}"
            case _:
                return event.message

    def _body_velocity(self, event: Event, v: np.ndarray | None, named: bool = False) -> str:
        """The velocities of the bodies the event names, each component labelled with its unit.

        ``ball: vx = 0.1, vy = -3 m/s; ω = 0 rad/s`` (``names.rates_text``). With
        ``named`` (the tooltip), six significant digits rather than four.
        """
        if v is None:
            return ""
        if len(v) == len(self._rate_scales):
            v = clean_array(v, self._rate_scales)
        parts = []
        for body_id in (event.body, event.other):
            if body_id in self._rates:
                rates, names = self._rates[body_id]
                values = np.asarray(v)[rates]
                if named:
                    text = ", ".join(f"{n} = {x:.6g}" for n, x in zip(names, values, strict=True))
                    parts.append(f"{body_id}: {text}")
                else:
                    parts.append(f"{body_id}: {rates_text(names, values)}")
        return "; ".join(parts) if parts else _vector(np.asarray(v))


class EventLog(QTableView):
    """Table view of the run's events; clicking a row selects its time.

    Parameters
    ----------
    parent : QWidget, optional
        Qt parent.
    """

    time_selected = Signal(float)
    """The time (s) of the event the user clicked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._pending: list[Event] = []
        self._last_flush = -math.inf
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.timeout.connect(self.flush)
        self.table_model = EventTableModel(self)
        self.setModel(self.table_model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(20)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        widths = (80, 70, 120, VELOCITY_WIDTH, VELOCITY_WIDTH, 120, 50, 80)
        for column, width in enumerate(widths):
            self.setColumnWidth(column, width)
        self.clicked.connect(self._on_clicked)

    def set_system(self, system: System | None) -> None:
        """Start a new run's log; the velocity columns fit the body with the most rates."""
        self._flush_timer.stop()
        self._pending = []
        self.table_model.set_system(system)
        rates = max((len(labels[2]) for labels in system.dof_labels), default=0) if system else 0
        width = VELOCITY_WIDTH if rates <= 3 else VELOCITY_WIDTH_PER_RATE * rates
        for column in (3, 4):
            self.setColumnWidth(column, width)

    def append(self, events: list[Event]) -> None:
        """Add the run's newest events.

        They are listed at once when the last rows came in more than
        ``FLUSH_INTERVAL_MS`` ago, else together with the others of that
        interval (``flush``): each insertion scrolls and repaints the table.
        """
        if not events:
            return
        self._pending.extend(events)
        if self._flush_timer.isActive():
            return
        since = (time.monotonic() - self._last_flush) * 1000.0
        if since >= FLUSH_INTERVAL_MS:
            self.flush()
        else:
            self._flush_timer.start(math.ceil(FLUSH_INTERVAL_MS - since))

    @Slot()
    def flush(self) -> None:
        """List the events appended so far now; keeps the view at the bottom if it was there."""
        self._flush_timer.stop()
        if not self._pending:
            return
        events, self._pending = self._pending, []
        at_bottom = self.verticalScrollBar().value() >= self.verticalScrollBar().maximum()
        first = self.table_model.rowCount()
        self.table_model.append(events)
        self._fit_columns(first)
        if at_bottom:
            self.scrollToBottom()
        self._last_flush = time.monotonic()

    def _fit_columns(self, first: int) -> None:
        """Widen the columns to the texts of the rows from ``first`` on: no cell is cut short.

        Only the first ``FIT_ROWS`` new rows are measured (a flush of a 2000-bead chain
        lists hundreds, all alike); columns never narrow.
        """
        model = self.table_model
        metrics = self.fontMetrics()
        last = min(model.rowCount(), first + FIT_ROWS)
        for column in range(len(COLUMNS) - 1):  # the last column stretches
            texts = [model.text(row, column) or "" for row in range(first, last)]
            needed = max((metrics.horizontalAdvance(text) for text in texts), default=0) + 14
            if needed > self.columnWidth(column):
                self.setColumnWidth(column, needed)

    def row_count(self) -> int:
        """Number of events appended (those still to be listed are listed first)."""
        self.flush()
        return self.table_model.rowCount()

    @Slot(QModelIndex)
    def _on_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self.time_selected.emit(self.table_model.events[index.row()].t)
