"""The stages of multi-stage impacts, shown beside the event log.

An impact law resolves an impact of several contacts in stages (the staged
law: a plastic phase, then a restitution phase, repeated while something
still approaches; the sequential law: one collision per stage). The event
log counts them; this table writes them out. One row per ``impact`` event
with more than one stage or of several contacts resolved together — its
time, contact, number of stages and total normal impulse — expands into one
row per stage (:func:`solver.stages.stage_rows`): the contact's share of the
normal impulse in that stage, its friction impulse, and the velocities after
the stage (every rate for a small system, the two bodies' rates otherwise),
and, as paper 000's tables print a stage, the contact's plastic multiplier
``λ^(k)``, the velocities ``y_k`` at the stage's start and ``w_k`` after its
plastic phase. *Family of answers…* plots every admissible answer to the
selected impact that keeps its energy (paper 000 §4,
:mod:`impactgui.stage_family`), the staged and sequential answers marked.
Clicking a row asks to move the playback time there (``time_selected``),
like the event log.

With playback honesty on (:mod:`impactgui.playback_honesty`) the table, like
the event log, shows only the impacts up to the playback time
(:meth:`StageTable.show_until`): later ones are hidden and not counted in
the title.
"""

from __future__ import annotations

import bisect
import math
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from impactgui.names import contact_name
from solver.frames import Event
from solver.stages import impact_contacts, stage_rows, velocity_columns

if TYPE_CHECKING:
    from solver.system import System

COLUMNS = (
    "t (s) / stage",
    "contact",
    "impulse n (N·s)",
    "impulse t (N·s)",
    "velocities after",
    "λ^(k) (N·s)",
    "y_k (stage start)",
    "w_k (after plastic phase)",
)
"""The last three as paper 000 (10)–(14) name them: the contact's plastic-phase
multiplier of the stage and the system's velocities at its start and after
its plastic phase (its tables of ``y_k``, ``w_k``, ``λ^(k)``)."""
IMPACT_LIMIT = 2000
"""At most this many multi-stage impacts are listed (the first ones of the run)."""
ALL_RATES_UP_TO = 8
"""Systems with at most this many rates show all of them after each stage; larger
ones show the rates of the contact's two bodies."""
ROUNDING_NOISE = 1e-12
"""Velocities smaller than this times the largest one are shown as 0."""


def _number(x: float) -> str:
    return f"{x:.6g}"


class StageTable(QWidget):
    """Expandable rows of the stages of every multi-stage impact of the run.

    Signals
    -------
    time_selected(float)
        A row was clicked: its impact time (s).

    Attributes
    ----------
    tree : QTreeWidget
        One top-level item per impact of several stages or contacts; children (made when it is
        first expanded) per stage.
    """

    time_selected = Signal(float)
    count_changed = Signal(int)
    """The number of rows (contacts of impacts in stages) shown changed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel()
        self.title.setToolTip(
            "Each stage's impulse on the contact and the velocities after the stage"
        )
        self.tree = QTreeWidget()
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setUniformRowHeights(True)
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.tree.header().setStretchLastSection(True)
        for column, width in enumerate((95, 110, 95, 95, 260, 95, 260)):
            self.tree.setColumnWidth(column, width)
        self.tree.itemExpanded.connect(self._on_item_expanded)
        self.tree.itemClicked.connect(self._on_item_clicked)
        self.family_button = QPushButton("Family of answers…")
        self.family_button.setToolTip(
            "Every admissible answer to the selected impact that keeps its energy "
            "(paper 000 §4), with the staged and sequential answers marked"
        )
        self.family_button.setEnabled(False)
        self.family_button.clicked.connect(self.show_family)
        self.family_dialog: QWidget | None = None
        self.tree.currentItemChanged.connect(self._on_current_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.family_button)
        layout.addLayout(top)
        layout.addWidget(self.tree, 1)
        self._system: System | None = None
        self._labels: list[str] = []
        self._events: list[Event] = []
        self._all_events: list[Event] = []
        """Every impact event of the run (the contacts of an impact, for its family)."""
        self._until = math.inf
        self._shown = 0
        self._show_title()

    def set_system(self, system: System | None) -> None:
        """Start listing a new run of ``system`` (None: no run)."""
        self._system = system
        self._labels = velocity_columns(system) if system is not None else []
        self._events = []
        self._all_events = []
        self._shown = 0
        self.tree.clear()
        self._show_title()

    def append(self, events: list[Event]) -> None:
        """List the multi-stage impacts among ``events`` (a batch of the run)."""
        added = False
        self._all_events.extend(event for event in events if event.type == "impact")
        for event in events:
            if event.type != "impact" or len(self._events) >= IMPACT_LIMIT:
                continue
            if event.stages < 2 and impact_contacts(event) < 2:
                continue
            self._events.append(event)
            item = QTreeWidgetItem(
                [
                    _number(event.t),
                    contact_name(event.body, event.other),
                    _number(event.normal_impulse),
                    _number(event.tangent_impulse),
                    f"{event.stages} stage{'s' if event.stages != 1 else ''} (expand)",
                ]
            )
            item.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
            self.tree.addTopLevelItem(item)
            item.setHidden(event.t > self._until)
            added = True
        if added:
            self._shown = self._count_until(self._until)
            self._show_title()

    def show_until(self, t: float) -> None:
        """Show only the impacts at times ≤ ``t`` (s); ``math.inf`` shows all (honesty off).

        The impacts come in time order: only the rows between the old and the
        new limit change.
        """
        self._until = t
        count = self._count_until(t)
        if count == self._shown:
            return
        low, high = sorted((count, self._shown))
        for index in range(low, high):
            self.tree.topLevelItem(index).setHidden(index >= count)
        self._shown = count
        self._show_title()

    def _count_until(self, t: float) -> int:
        return bisect.bisect_right(self._events, t, key=lambda event: event.t)

    def impact_count(self) -> int:
        """Number of multi-stage impacts listed (shown: up to the playback time with honesty)."""
        return self._shown

    def expand(self, index: int) -> QTreeWidgetItem:
        """Expand the ``index``-th impact (its stage rows are made now); returns its item."""
        item = self.tree.topLevelItem(index)
        item.setExpanded(True)
        return item

    def impacts_shown(self) -> int:
        """Impacts in stages shown: a simultaneous impact, one row per contact, is one."""
        return len({event.t for event in self._events[: self._shown]})

    def _show_title(self) -> None:
        count = self._shown
        self.count_changed.emit(count)
        if count == 0:
            self.title.setText("Stages: no impact in stages so far.")
            return
        impacts = self.impacts_shown()
        more = f" (the first {IMPACT_LIMIT} contacts)" if len(self._events) >= IMPACT_LIMIT else ""
        noun = "impact" if impacts == 1 else "impacts"
        contacts = f"{count} contact" if count == 1 else f"{count} contacts"
        self.title.setText(f"Stages of {impacts} {noun}, {contacts}{more} (expand a row):")

    @Slot(QTreeWidgetItem)
    def _on_item_expanded(self, item: QTreeWidgetItem) -> None:
        if item.parent() is not None or item.childCount():
            return
        event = self._events[self.tree.indexOfTopLevelItem(item)]
        for row in stage_rows(event):
            item.addChild(
                QTreeWidgetItem(
                    [
                        f"stage {row.stage}",
                        contact_name(event.body, event.other),
                        _number(row.normal_impulse),
                        _number(row.tangent_impulse),
                        self._velocities(event, row.v_after),
                        "" if row.lam is None else _number(row.lam),
                        "" if row.y is None else self._velocities(event, row.y),
                        "" if row.w is None else self._velocities(event, row.w),
                    ]
                )
            )

    def _velocities(self, event: Event, v: np.ndarray) -> str:
        if len(v) != len(self._labels):
            return ""
        scale = float(np.max(np.abs(v))) if len(v) else 0.0
        shown = np.where(np.abs(v) < ROUNDING_NOISE * scale, 0.0, v)
        if len(v) <= ALL_RATES_UP_TO:
            indices = range(len(v))
        else:
            bodies = (f"{event.body}.", f"{event.other}.")
            indices = [k for k, label in enumerate(self._labels) if label.startswith(bodies)]
        return ", ".join(f"{self._labels[k]} = {shown[k]:.4g}" for k in indices)

    def selected_event(self) -> Event | None:
        """The impact of the current row (or of its stage row), if any."""
        item = self.tree.currentItem()
        if item is None:
            return None
        top = item.parent() or item
        return self._events[self.tree.indexOfTopLevelItem(top)]

    @Slot(QTreeWidgetItem, QTreeWidgetItem)
    def _on_current_changed(self, current: QTreeWidgetItem | None, _previous: object) -> None:
        self.family_button.setEnabled(current is not None and self._system is not None)

    @Slot()
    def show_family(self) -> QWidget | None:
        """Open the family of admissible answers of the selected impact (None if it has none)."""
        from impactgui.stage_family import FamilyDialog, impact_family

        event = self.selected_event()
        if event is None or self._system is None:
            return None
        data = impact_family(event, self._all_events, self._system)
        if data is None:
            self.title.setText("This impact has one contact: its answer is unique.")
            return None
        dialog = FamilyDialog(data, f"t = {event.t:.6g} s", self)
        dialog.show()
        self.family_dialog = dialog
        return dialog

    @Slot(QTreeWidgetItem, int)
    def _on_item_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        top = item.parent() or item
        self.time_selected.emit(self._events[self.tree.indexOfTopLevelItem(top)].t)


def with_stage_table(event_log: QWidget, stage_table: StageTable) -> QSplitter:
    """The event log with the stage table beside it, in one splitter (the event dock's widget).

    The stage table shows only while it lists an impact in stages: empty, it
    would take half the width the event log's columns need.
    """
    splitter = QSplitter(Qt.Orientation.Horizontal)
    splitter.addWidget(event_log)
    splitter.addWidget(stage_table)
    splitter.setStretchFactor(0, 1)
    splitter.setStretchFactor(1, 1)
    stage_table.setVisible(stage_table.impact_count() > 0)
    stage_table.count_changed.connect(lambda count: stage_table.setVisible(count > 0))
    return splitter
