"""Legends of the Reference tab and the Compare dialog: beside their plots, every curve named.

Issue 25 put the main plots' legends beside them (never over the newest
data); the Reference tab and the Compare dialog kept theirs floating in the
top right corner of each plot, over the curves.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.gui.conftest import run_to_end, scene_path

SHOTS = os.environ.get("IMPACTGUI_SHOTS")
"""A folder to save the screenshots in (unset: none are saved)."""


def _names(plot) -> list[str]:
    return [label.text for _sample, label in plot.legend.items]


def _beside(plot) -> None:
    """``plot``'s legend is right of its view box and names every named curve in it."""
    view = plot.vb.sceneBoundingRect()
    box = plot.legend.sceneBoundingRect()
    assert box.left() >= view.right(), "the legend covers the curves"
    named = [item.name() for item in plot.listDataItems() if item.name()]
    assert _names(plot) == named and named


def _shot(widget, name: str) -> None:
    if SHOTS:
        widget.grab().save(str(Path(SHOTS) / f"{name}.png"))


def test_the_reference_tabs_legends_sit_beside_its_plots(qtbot, window) -> None:
    assert window.open_file(scene_path("bouncing_ball"))
    window.reference_dock.raise_()
    run_to_end(qtbot, window)
    overlay = window.reference_view
    qtbot.wait(50)
    columns = list(overlay.reference.columns)
    for plot in overlay.plots[: len(columns)]:
        _beside(plot)
        assert _names(plot) == ["simulated", overlay.reference.title]
    # the impact row's time axis lines up with the plots' above it
    lefts = {round(plot.vb.sceneBoundingRect().left()) for plot in overlay.plots}
    rights = {round(plot.vb.sceneBoundingRect().right()) for plot in overlay.plots}
    assert len(lefts) == 1 and len(rights) == 1
    _shot(overlay, "reference_legends_beside")


def test_the_compare_dialogs_legends_sit_beside_its_plots(qtbot, window) -> None:
    assert window.open_file(scene_path("four_balls"))
    dialog = window.open_compare()
    dialog.resize(1300, 800)
    assert dialog.run(["staged", "poisson"])
    qtbot.waitUntil(lambda: not dialog.is_running(), timeout=20000)
    qtbot.wait(50)
    for panel in dialog.panels:
        _beside(panel.plot)
        assert _names(panel.plot) == ["ball1.vx", "ball2.vx", "ball3.vx", "ball4.vx"]
    _beside(dialog.overlay_plot)
    assert _names(dialog.overlay_plot) == ["staged: ball1.vx", "poisson: ball1.vx"]
    _shot(dialog, "compare_legends_beside")
    dialog.close()
