"""The stage table beside the event log: every stage of a multi-stage impact.

Newton's cradle of three unit balls under the sequential law (paper 000
ex. 4): ball 1 at 1 m/s hits the touching balls 2 and 3. Collision by
collision, equal masses with e = 1 exchange velocities: after the first
(1–2) ``[0, 1, 0]``, after the second (2–3) ``[0, 0, 1]``; contact 1–2 takes
the impulse 1 N·s in the first stage and none in the second, contact 2–3 the
other way round.
"""

from __future__ import annotations

import pytest

from tests.gui.conftest import run_to_end, scene_path


def cells(item) -> list[str]:
    return [item.text(column) for column in range(item.columnCount())]


def test_cradle_stages_are_listed_with_impulses_and_velocities(qtbot, window):
    assert window.open_file(scene_path("newton_cradle_3_sequential"))
    run_to_end(qtbot, window)
    table = window.stage_table
    assert table.impact_count() == 2
    assert "Stages of 1 impact, 2 contacts" in table.title.text()  # one simultaneous impact

    first = table.expand(0)
    assert cells(first)[1] == "ball1 – ball2"
    assert float(cells(first)[2]) == pytest.approx(1.0)
    stages = [cells(first.child(k)) for k in range(first.childCount())]
    assert [row[0] for row in stages] == ["stage 1", "stage 2"]
    assert [float(row[2]) for row in stages] == pytest.approx([1.0, 0.0], abs=1e-12)
    assert stages[0][4] == "ball1.vx = 0, ball2.vx = 1, ball3.vx = 0"
    assert stages[1][4] == "ball1.vx = 0, ball2.vx = 0, ball3.vx = 1"

    second = table.expand(1)
    assert cells(second)[1] == "ball2 – ball3"
    impulses = [float(second.child(k).text(2)) for k in range(second.childCount())]
    assert impulses == pytest.approx([0.0, 1.0], abs=1e-12)

    seen: list[float] = []
    table.time_selected.connect(seen.append)
    table.tree.itemClicked.emit(first.child(1), 0)
    assert seen == [pytest.approx(0.125)]  # 0.125 m of free flight at 1 m/s
    assert window.clock.time == pytest.approx(0.125)


def test_single_stage_impacts_are_not_listed_and_reset_clears(qtbot, window):
    assert window.open_file(scene_path("bouncing_ball"))
    run_to_end(qtbot, window)
    assert window.stage_table.impact_count() == 0
    assert "no impact in stages" in window.stage_table.title.text()
    assert not window.stage_table.isVisible()  # empty, it leaves the width to the event log
    assert window.open_file(scene_path("newton_cradle_3_sequential"))
    run_to_end(qtbot, window)
    assert window.stage_table.impact_count() == 2
    assert window.stage_table.isVisible()
    window.reset_run()
    assert window.stage_table.impact_count() == 0
    assert not window.stage_table.isVisible()


def test_with_playback_honesty_the_table_shows_only_impacts_up_to_the_playback_time(qtbot, window):
    # the cradle's one multi-stage impact (both contacts) is at 0.125 s: 0.125 m at 1 m/s
    assert window.open_file(scene_path("newton_cradle_3_sequential"))
    run_to_end(qtbot, window)
    table = window.stage_table
    window.set_honest(True)
    window.clock.seek(0.1)
    assert table.impact_count() == 0
    assert "no impact in stages" in table.title.text()
    assert all(table.tree.topLevelItem(k).isHidden() for k in range(2))
    window.clock.seek(0.125)
    assert table.impact_count() == 2
    assert not any(table.tree.topLevelItem(k).isHidden() for k in range(2))
    window.clock.seek(0.05)
    assert table.impact_count() == 0
    window.set_honest(False)  # every impact computed shows, whatever the playback time
    assert table.impact_count() == 2
    assert "Stages of 1 impact, 2 contacts" in table.title.text()  # one simultaneous impact
    assert not any(table.tree.topLevelItem(k).isHidden() for k in range(2))
