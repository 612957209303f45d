"""A live run's legends never re-lay out the plots as their entries come.

A legend taller than its plot's row makes the row taller and the other rows
shorter, which re-renders all five plots in one paint. The jump plot's legend
gets one entry per bead struck, up to ``LEGEND_LIMIT``: in the first seconds
of a bead chain it grew four times past its row (bench/gui.py, the 200-bead chain).
"""

from __future__ import annotations

import math

from impactgui.plots import LEGEND_LIMIT, legend_height


def bead_chain(n: int) -> dict:
    """``n`` beads of radius 1 cm, 5 mm apart on one rail, the first thrown at the rest at 1 m/s."""
    pitch = 0.025
    beads = [
        {
            "id": f"b{k}",
            "type": "bead",
            "rail_y": 0.0,
            "mass": 1.0,
            "radius": 0.01,
            "x": k * pitch,
            "vx": 1.0 if k == 0 else 0.0,
        }
        for k in range(n)
    ]
    return {
        "format": "impactgui-scene",
        "version": 1,
        "title": f"{n}-bead chain",
        "gravity": [0.0, 0.0],
        "contact": {"restitution": 1.0, "friction": 0.0, "impact_law": "staged"},
        "boundaries": [
            {"id": "left", "type": "segment", "a": [-pitch, -0.1], "b": [-pitch, 0.1]},
            {"id": "right", "type": "segment", "a": [n * pitch, -0.1], "b": [n * pitch, 0.1]},
        ],
        "bodies": beads,
        "solver": {"method": "event-driven", "t_end": 100.0, "dt_out": 0.001},
    }


def test_the_plots_keep_their_size_while_the_jump_legend_fills(qtbot, window) -> None:
    window.resize(1400, 900)
    window.doc.set_data(bead_chain(30))
    panel = window.plots
    legend = panel.jump_plot.legend

    def sizes() -> list[tuple[float, float]]:
        return [(plot.vb.width(), plot.vb.height()) for plot in panel.plots]

    assert window.start_run()
    qtbot.waitUntil(lambda: len(legend.items) >= 1, timeout=30000)
    qtbot.wait(50)  # the layout of the run's start
    first = sizes()
    seen: list[list[tuple[float, float]]] = []
    window.clock.time_changed.connect(lambda _t: seen.append(sizes()))
    qtbot.waitUntil(lambda: len(legend.items) == LEGEND_LIMIT, timeout=30000)
    qtbot.wait(100)  # a later layout would have run
    seen.append(sizes())
    changed = [s for s in seen if s != first]
    assert not changed, f"the plots went from {first} to {changed[0]} as the legend filled"
    # the room of all its entries from the start, in the columns its row's height needs
    rows = math.ceil(LEGEND_LIMIT / legend.columnCount)
    assert legend.geometry().height() >= legend_height(rows) - 0.5
    window.reset_run()


def test_a_short_window_takes_the_legends_room_from_their_column_not_the_plots(
    qtbot, window, tmp_path
) -> None:
    """In a plots panel about 620 px tall (a 1400 x 900 window) the energy's seven entries and
    the jump plot's eight need more height than a fifth of the panel: they are laid out in
    columns, and every plot keeps an even share of the height (before: λ, τ and the impulses
    squeezed to 47 px, the energy and jump plots 109 and 126 px; the panel as it was:
    docs/screenshots/chain_plots_legend_reserved.png)."""
    window.resize(1400, 900)
    window.doc.set_data(bead_chain(30))
    panel = window.plots
    legend = panel.jump_plot.legend
    assert window.start_run()
    qtbot.waitUntil(lambda: len(legend.items) == LEGEND_LIMIT, timeout=30000)
    qtbot.wait(100)  # the layout's turn
    window.pause_run()
    assert panel.graphics.height() <= 650
    heights = [plot.vb.height() for plot in panel.plots]
    share = sum(heights) / len(heights)
    assert min(heights) >= 0.85 * share, f"plot heights {heights}: some squeezed"
    # the legends still show every entry, within their plots' rows
    for plot in panel.plots:
        box = plot.legend.sceneBoundingRect()
        row = plot.sceneBoundingRect()
        assert box.height() <= row.height() + 1, (plot.titleLabel.text, box, row)
    assert panel.energy_plot.legend.columnCount >= 2
    assert panel.graphics.grab().save(str(tmp_path / "short_panel_plots.png"))
    window.reset_run()
