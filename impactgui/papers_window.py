"""Help ▸ Papers: every item of the five papers, printed against computed, and its figure.

The tree lists the papers; expanding one regenerates it
(:func:`solver.papers.build_paper`, into a temporary folder the window
owns: from half a second to a few seconds) and lists its items — each
example, equation or case whose values the paper prints — and its figures.
Selecting an item shows its rows (printed, computed, difference, note) and
the figure redrawn from the same scene, with the closed form overlaid;
selecting a figure shows it. **Open and run the scene** opens the bundled
scene that makes the item (as an unsaved copy) in the main window and runs
it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QGuiApplication, QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from solver.papers import PAPERS, build_paper
from solver.papers.common import SCENES, PaperOutput, Row

if TYPE_CHECKING:
    from impactgui.mainwindow import MainWindow

ROW_COLUMNS = ("quantity", "printed", "computed", "difference", "note")
ROLE = Qt.ItemDataRole.UserRole
TITLES = {
    "000": "000 — multi-contact impacts, staged Poisson restitution",
    "001": "001 — impulsive motion of a nonholonomic system",
    "002": "002 — event-driven simulation, Gauss' principle",
    "003": "003 — impact forces, vibro-impact closed forms",
    "004": "004 — a wheel hitting a curb, Coulomb friction",
}


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.12g}"


class PapersWindow(QDialog):
    """The papers' items and figures, each openable as a run in the main window.

    Attributes
    ----------
    tree : QTreeWidget
        Papers, then their items and figures.
    rows : QTableWidget
        The selected item's rows.
    figure : QLabel
        The selected figure (or the item's scene's figure).
    open_button : QPushButton
        Opens and runs the selection's scene.
    outputs : dict of str to PaperOutput
        The papers regenerated so far.
    """

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.setWindowTitle("Papers: printed against computed")
        self._folder = tempfile.TemporaryDirectory(prefix="impactgui-papers-")
        self.outputs: dict[str, PaperOutput] = {}
        self._scene = ""
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["paper / item"])
        for number in PAPERS:
            top = QTreeWidgetItem([TITLES.get(number, number)])
            top.setData(0, ROLE, ("paper", number, ""))
            top.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
            self.tree.addTopLevelItem(top)
        self.tree.itemExpanded.connect(self._on_expanded)
        self.tree.currentItemChanged.connect(self._on_current)
        self.header = QLabel("Expand a paper to regenerate it and list its items.")
        self.header.setWordWrap(True)
        self.rows = QTableWidget(0, len(ROW_COLUMNS))
        self.rows.setHorizontalHeaderLabels(list(ROW_COLUMNS))
        self.rows.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.rows.horizontalHeader().setStretchLastSection(True)
        self.rows.verticalHeader().setVisible(False)
        for column, width in enumerate((190, 120, 120, 90)):
            self.rows.setColumnWidth(column, width)
        self.figure = QLabel()
        self.figure.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.figure.setMinimumHeight(260)
        self.open_button = QPushButton("Open and run the scene")
        self.open_button.setEnabled(False)
        self.open_button.clicked.connect(self.open_scene)
        right = QWidget()
        layout = QVBoxLayout(right)
        layout.addWidget(self.header)
        layout.addWidget(self.rows, 2)
        layout.addWidget(self.figure, 3)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.open_button)
        layout.addLayout(buttons)
        splitter = QSplitter()
        splitter.addWidget(self.tree)
        splitter.addWidget(right)
        splitter.setSizes([330, 770])
        outer = QVBoxLayout(self)
        outer.addWidget(splitter)
        self.resize(1150, 760)
        self.finished.connect(lambda _result: self._folder.cleanup())

    # ------------------------------------------------------------------ papers

    def paper(self, number: str) -> PaperOutput:
        """Paper ``number`` regenerated (once; later calls return it)."""
        if number not in self.outputs:
            QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
            try:
                self.outputs[number] = build_paper(number, Path(self._folder.name))
            finally:
                QGuiApplication.restoreOverrideCursor()
        return self.outputs[number]

    def expand(self, number: str) -> QTreeWidgetItem:
        """Expand paper ``number``'s node (regenerating it); returns the node."""
        top = self.tree.topLevelItem(PAPERS.index(number))
        top.setExpanded(True)
        return top

    def find(self, number: str, text: str) -> QTreeWidgetItem:
        """The child of paper ``number`` whose text starts with ``text`` (expands the paper)."""
        top = self.expand(number)
        for k in range(top.childCount()):
            if top.child(k).text(0).startswith(text):
                return top.child(k)
        raise KeyError(text)

    @Slot(QTreeWidgetItem)
    def _on_expanded(self, top: QTreeWidgetItem) -> None:
        kind, number, _ = top.data(0, ROLE)
        if kind != "paper" or top.childCount():
            return
        output = self.paper(number)
        items = list(dict.fromkeys(row.item for row in output.rows))
        for item in items:
            flagged = any(row.note for row in output.rows if row.item == item)
            child = QTreeWidgetItem([item + ("  ⚑" if flagged else "")])
            child.setData(0, ROLE, ("item", number, item))
            if flagged:
                child.setToolTip(0, "the paper slips here, or the row needs a word: see the note")
            top.addChild(child)
        for stem, caption in output.figures:
            child = QTreeWidgetItem([f"figure: {stem}"])
            child.setData(0, ROLE, ("figure", number, stem))
            child.setToolTip(0, caption)
            top.addChild(child)

    @Slot(QTreeWidgetItem, QTreeWidgetItem)
    def _on_current(self, current: QTreeWidgetItem | None, _previous: object) -> None:
        if current is None:
            return
        kind, number, key = current.data(0, ROLE)
        if kind == "paper":
            output = self.outputs.get(number)
            text = output.title if output else "Expand the paper to regenerate it."
            self._show(text, [], None, "")
            return
        output = self.paper(number)
        if kind == "item":
            rows = [row for row in output.rows if row.item == key]
            scene = next((row.scene for row in rows if row.scene), "")
            stem = next((s for s, n in output.figure_scenes.items() if scene and n == scene), None)
            self._show(f"Paper {number}: {key}", rows, stem and (number, stem), scene)
        else:
            caption = dict(output.figures)[key]
            self._show(caption, [], (number, key), output.figure_scenes.get(key, ""))

    def _show(self, text: str, rows: list[Row], figure: tuple[str, str] | None, scene: str) -> None:
        self.header.setText(text)
        self.rows.setRowCount(len(rows))
        for r, row in enumerate(rows):
            cells = (
                row.quantity,
                _cell(row.printed),
                _cell(row.computed),
                _cell(row.difference),
                row.note,
            )
            for c, value in enumerate(cells):
                item = QTableWidgetItem(value)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                if c == 4 and value:
                    item.setToolTip(value)
                self.rows.setItem(r, c, item)
        if figure is None:
            self.figure.clear()
        else:
            number, stem = figure
            path = Path(self._folder.name) / f"paper-{number}" / f"{stem}.png"
            pixmap = QPixmap(str(path))
            self.figure.setPixmap(
                pixmap.scaled(
                    760,
                    420,
                    Qt.AspectRatioMode.KeepAspectRatio,
                    Qt.TransformationMode.SmoothTransformation,
                )
            )
        self._scene = scene
        self.open_button.setEnabled(bool(scene))
        self.open_button.setToolTip(f"resources/scenes/{scene}.json" if scene else "")

    @Slot()
    def open_scene(self) -> bool:
        """Open the selection's bundled scene in the main window and run it."""
        if not self._scene:
            return False
        if not self.window.open_preset(SCENES / f"{self._scene}.json"):
            return False
        return self.window.start_run()
