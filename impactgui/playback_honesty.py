"""Playback honesty: plots and event log show nothing later than the playback time.

The solver usually runs ahead of the picture. A lecturer who pauses to ask
"what happens next?" must not have the plots and the event log answer it.
With honesty on (View ▸ Show only up to the playback time; on in
presentation mode):

* each plot gets a ``PlotCurtain``: an opaque rectangle of the plot's
  background over everything right of the playback time, beneath the time
  cursor. It moves with the cursor (one ``setRect``, no data touched), so
  it costs the GUI thread nothing while the run streams;
* the event log shows ``EventsUntil``, a prefix of its model: the events
  up to the playback time (events come in time order, so a bisection
  finds the prefix; rows are inserted or removed as the time moves);
* the stage table beside it (``StageTable.show_until``) hides its impacts
  after the playback time.

* ``until_changed`` tells the plot panels the time (None when honesty goes
  off): their value ranges and legends follow the data up to it only
  (``PlotPanel.set_until``), so neither hints at what comes next.
"""

from __future__ import annotations

import bisect
import math
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRectF,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QBrush, QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QTableView

CURTAIN_Z = 900
"""Above every curve and stem (the time cursor is drawn above it)."""

Index = QModelIndex | QPersistentModelIndex


class PlotCurtain(QGraphicsRectItem):
    """Covers a plot's view right of a time with its background colour.

    Parameters
    ----------
    plot : pg.PlotItem
        The plot to cover (its view's range is followed).
    colour : QColor
        The plot's background.
    """

    def __init__(self, plot: pg.PlotItem, colour: QColor) -> None:
        super().__init__()
        self.plot = plot
        self.time = float("inf")
        self.setBrush(QBrush(colour))
        self.setPen(QPen(Qt.PenStyle.NoPen))
        self.setZValue(CURTAIN_Z)
        plot.addItem(self, ignoreBounds=True)
        plot.vb.sigRangeChanged.connect(self._on_range_changed)

    def set_time(self, t: float) -> None:
        """Hide what is right of ``t`` (s); moves only when ``t`` reaches another pixel column."""
        pixel = self._pixel()
        same_column = pixel > 0 and math.isfinite(self.time + t)
        if same_column and round(t / pixel) == round(self.time / pixel):
            return
        self.time = t
        self._cover()

    def _pixel(self) -> float:
        """Width of a pixel column of the plot's view, s (0 before it has a width)."""
        (x0, x1), width = self.plot.vb.viewRange()[0], self.plot.vb.width()
        return (x1 - x0) / width if width > 0 else 0.0

    def _cover(self) -> None:
        (x0, x1), (y0, y1) = self.plot.vb.viewRange()
        # one pixel column right of the time: the time cursor stays in view
        start = max(self.time + 1.5 * self._pixel(), x0)
        if start >= x1:
            self.setRect(QRectF())
        else:
            self.setRect(QRectF(start, y0, x1 - start, y1 - y0))

    @Slot(object, object, object)
    def _on_range_changed(self, *_args: object) -> None:
        self._cover()

    def remove(self) -> None:
        """Take the curtain off its plot."""
        self.plot.vb.sigRangeChanged.disconnect(self._on_range_changed)
        self.plot.removeItem(self)


class EventsUntil(QAbstractTableModel):
    """The rows of an event table model up to a time (its events are in time order).

    Parameters
    ----------
    source : QAbstractTableModel
        A model with an ``events`` list (``impactgui.eventlog.EventTableModel``).
    """

    def __init__(self, source: QAbstractTableModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.source = source
        self.time = float("inf")
        self._shown = source.rowCount()
        source.rowsInserted.connect(self._on_source_changed)
        source.modelReset.connect(self._on_source_reset)
        source.dataChanged.connect(self._on_source_changed)

    def _visible_count(self) -> int:
        events = self.source.events
        return bisect.bisect_right(events, self.time, key=lambda event: event.t)

    def set_time(self, t: float) -> None:
        """Show the events at times ≤ ``t`` (s)."""
        self.time = t
        self._update()

    def _update(self) -> None:
        count = self._visible_count()
        if count > self._shown:
            self.beginInsertRows(QModelIndex(), self._shown, count - 1)
            self._shown = count
            self.endInsertRows()
        elif count < self._shown:
            self.beginRemoveRows(QModelIndex(), count, self._shown - 1)
            self._shown = count
            self.endRemoveRows()

    @Slot()
    def _on_source_changed(self, *_args: object) -> None:
        self._update()

    @Slot()
    def _on_source_reset(self) -> None:
        self.beginResetModel()
        self._shown = self._visible_count()
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Rows shown (Qt model API)."""
        return 0 if parent.isValid() else self._shown

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """As the source (Qt model API)."""
        return self.source.columnCount(parent)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """As the source (Qt model API)."""
        return self.source.headerData(section, orientation, role)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """As the source's same cell (Qt model API)."""
        if not index.isValid():
            return None
        return self.source.data(self.source.index(index.row(), index.column()), role)


class PlaybackHonesty(QObject):
    """Hides, in plots and an event log, what lies after the playback time.

    Parameters
    ----------
    plots : callable
        ``() -> list of pg.PlotItem``: the plots to cover (asked when turned on).
    event_log : QTableView
        The event log; its ``table_model`` is shown through ``EventsUntil``.
    stage_table : impactgui.stage_table.StageTable, optional
        Shown up to the playback time with its ``show_until``.
    """

    until_changed = Signal(object)
    """The time (s) up to which the plots may show their data; None: everything."""

    def __init__(
        self,
        plots: Any,
        event_log: QTableView,
        parent: QObject | None = None,
        stage_table: Any = None,
    ) -> None:
        super().__init__(parent)
        self._plots = plots
        self.event_log = event_log
        self.stage_table = stage_table
        self.enabled = False
        self.time = 0.0
        self.curtains: list[PlotCurtain] = []
        self.events = EventsUntil(event_log.table_model, self)

    def set_enabled(self, enabled: bool) -> None:
        """Turn honesty on or off (off: everything computed shows)."""
        if enabled == self.enabled:
            return
        self.enabled = enabled
        log = self.event_log
        widths = [log.columnWidth(column) for column in range(log.model().columnCount())]
        if enabled:
            self.curtains = [PlotCurtain(plot, QColor("white")) for plot in self._plots()]
            self.events.set_time(self.time)
            log.setModel(self.events)
        else:
            for curtain in self.curtains:
                curtain.remove()
            self.curtains = []
            log.setModel(log.table_model)
        for column, width in enumerate(widths):
            log.setColumnWidth(column, width)
        if self.stage_table is not None and not enabled:
            self.stage_table.show_until(math.inf)
        if not enabled:
            self.until_changed.emit(None)
        self.set_time(self.time)

    @Slot(float)
    def set_time(self, t: float) -> None:
        """The playback time moved to ``t`` (s)."""
        self.time = t
        if not self.enabled:
            return
        for curtain in self.curtains:
            curtain.set_time(t)
        self.until_changed.emit(t)
        self.events.set_time(t)
        if self.stage_table is not None:
            self.stage_table.show_until(t)
