"""The event log lists a stream of events in a few insertions, never losing or reordering one."""

from __future__ import annotations

import numpy as np
import pytest

from impactgui.eventlog import FLUSH_INTERVAL_MS, EventLog
from solver.frames import Event


def _impacts(start: int, count: int) -> list[Event]:
    return [
        Event(1e-3 * k, "impact", body="b", other="wall", normal_impulse=float(k))
        for k in range(start, start + count)
    ]


@pytest.fixture
def log(qtbot) -> EventLog:
    widget = EventLog()
    qtbot.addWidget(widget)
    widget.resize(600, 300)
    widget.show()
    qtbot.waitExposed(widget)
    widget.set_system(None)
    return widget


def test_a_burst_of_batches_is_listed_in_two_insertions_in_order(qtbot, log) -> None:
    inserted: list[tuple[int, int]] = []
    log.table_model.rowsInserted.connect(
        lambda _parent, first, last: inserted.append((first, last))
    )
    for start in range(0, 500, 10):  # 50 batches, as a busy run hands them over
        log.append(_impacts(start, 10))
    # the first batch after a quiet spell is listed at once, the rest wait for the interval
    assert inserted == [(0, 9)]
    assert log.table_model.rowCount() == 10
    qtbot.waitUntil(lambda: log.table_model.rowCount() == 500, timeout=20 * FLUSH_INTERVAL_MS)
    assert inserted == [(0, 9), (10, 499)]
    times = [event.t for event in log.table_model.events]
    np.testing.assert_array_equal(times, [1e-3 * k for k in range(500)])


def test_the_row_count_includes_events_not_listed_yet(log) -> None:
    log.append(_impacts(0, 3))
    log.append(_impacts(3, 4))
    assert log.row_count() == 7
    assert log.table_model.rowCount() == 7


def test_a_new_run_drops_the_events_of_the_old_one_still_waiting(qtbot, log) -> None:
    log.append(_impacts(0, 3))
    log.append(_impacts(3, 4))  # waiting
    log.set_system(None)
    qtbot.wait(2 * FLUSH_INTERVAL_MS)
    assert log.row_count() == 0


def test_the_view_follows_the_newest_rows_when_it_was_at_the_bottom(qtbot, log) -> None:
    for start in range(0, 300, 30):
        log.append(_impacts(start, 30))
        log.flush()
    bar = log.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
    bar.setValue(0)  # the user scrolled up: new rows do not pull the view down
    log.append(_impacts(300, 30))
    log.flush()
    assert bar.value() == 0


def test_round_off_is_shown_as_0_at_the_scene_s_scale(qtbot) -> None:
    # issue 10 bug 7: ΔE 6.168e-17 and v⁺ 5.551e-16 were shown as data
    from impactgui.eventlog import EventTableModel
    from solver.scene import parse_scene
    from solver.system import System

    bead = {"type": "bead", "rail_y": 0.0, "mass": 1.0, "radius": 0.05}
    beads = [{**bead, "id": "b1", "x": 0.0, "vx": 1.0}, {**bead, "id": "b2", "x": 0.2}]
    system = System(parse_scene({"format": "impactgui-scene", "version": 2, "bodies": beads}))
    model = EventTableModel()
    model.set_system(system)
    v_minus, v_plus = np.array([1.0, 0.0]), np.array([5.551e-16, 1.0])
    model.append(
        [
            Event(0.1, "impact", "b1", "b2", 1.0, -0.0, 1, 6.168e-17, v_minus, v_plus),
            Event(0.2, "impact", "b1", "b2", 1.0, 0.0, 1, -1e-6, v_minus, v_minus),
        ]
    )
    cells = [model.data(model.index(0, column)) for column in range(model.columnCount())]
    assert cells[4] == "b1: vx = 0 m/s; b2: vx = 1 m/s"
    assert cells[5] == "1 / 0"
    assert cells[7] == "0"
    assert model.data(model.index(1, 7)) == "-1e-06"  # a real loss, however small, stays


def test_an_energy_gain_row_is_marked_red(qtbot, log) -> None:
    from PySide6.QtCore import Qt

    gain = Event(t=0.5, type="energy_gain", body="ball", other="wall", energy_change=0.2)
    impact = Event(t=0.5, type="impact", body="ball", other="wall", energy_change=0.2)
    log.append([impact, gain])
    qtbot.waitUntil(lambda: log.table_model.rowCount() == 2, timeout=3000)
    brushes = [
        log.table_model.data(log.table_model.index(row, 1), Qt.ItemDataRole.ForegroundRole)
        for row in range(2)
    ]
    assert brushes[0] is None
    assert brushes[1].color().name() == "#b00020"
