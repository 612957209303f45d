"""Help ▸ Papers: the papers' items with printed and computed values; one click runs the scene.

Paper 000's example 4 prints the staged answer's impulse as [4/3, 1/3]; its
own formula (z + √(4z − 3z²))/2 at z = 4/3 gives 2/3, which the program
computes: that row carries a note. Its scene is Newton's cradle of three
balls under the staged law.
"""

from __future__ import annotations

import pytest


def cells(table, row: int) -> list[str]:
    return [table.item(row, c).text() for c in range(table.columnCount())]


def test_papers_lists_items_shows_rows_and_opens_the_scene(qtbot, window):
    window.papers_action.trigger()
    dialog = window.help.page
    qtbot.addWidget(dialog)
    assert dialog.tree.topLevelItemCount() == 5
    item = dialog.find("000", "ex. 4 staged (z = 4/3)")
    assert item.text(0).endswith("⚑")  # a slip of the paper's is flagged
    dialog.tree.setCurrentItem(item)
    rows = [cells(dialog.rows, r) for r in range(dialog.rows.rowCount())]
    lam = next(row for row in rows if row[0] == "lambda[1]")
    assert float(lam[1]) == pytest.approx(1 / 3, abs=1e-11)
    assert float(lam[2]) == pytest.approx(2 / 3, abs=1e-11)
    assert "1/3" in lam[4]
    assert not dialog.figure.pixmap().isNull()  # example 4's family
    assert dialog.open_button.isEnabled()
    assert dialog.open_scene()
    qtbot.waitUntil(lambda: window.run_state in ("finished", "failed"), timeout=30000)
    assert window.run_state == "finished"
    assert "staged" in window.doc.scene().title


def test_a_figure_of_paper_004_is_shown_with_its_scene(qtbot, window):
    window.help.show_papers()
    dialog = window.help.page
    qtbot.addWidget(dialog)
    figure = dialog.find("004", "figure: fig-13")
    dialog.tree.setCurrentItem(figure)
    assert "figure 13" in dialog.header.text()
    assert not dialog.figure.pixmap().isNull()
    assert dialog.open_button.toolTip().endswith("wheel_curb_e0.json")
