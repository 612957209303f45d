"""The stage table shows y_k, w_k and λ^(k) per stage, as paper 000's example 3 prints them.

Four unit balls, ``v(t−0) = [1, 0, 0, 1/3]``, ``ε = 1`` (the bundled
``four_balls`` scene). The paper's tables, contact 1–2: stage 1
``λ^(0) = 2/3``, ``y_0 = [1, 0, 0, 1/3]``, ``w_0 = [1/3, 1/3, 1/3, 1/3]``;
stage 2 ``λ^(1) = 0``, ``y_1 = [−1/3, 2/3, 2/3, 1/3]``,
``w_1 = [−1/3, 5/9, 5/9, 5/9]``.
"""

from __future__ import annotations

import numpy as np
import pytest

from impactgui.stage_table import COLUMNS, StageTable
from solver.scene import load_scene
from solver.simulation import simulate
from tests.gui.conftest import scene_path


def values(text: str) -> list[float]:
    return [float(part.split("=")[1]) for part in text.split(",")]


def test_stage_rows_carry_the_papers_y_w_and_lambda(qtbot):
    run = simulate(load_scene(scene_path("four_balls")), t_end=0.2)
    table = StageTable()
    qtbot.addWidget(table)
    table.set_system(run.system)
    table.append(list(run.events))
    assert COLUMNS[5:] == ("λ^(k) (N·s)", "y_k (stage start)", "w_k (after plastic phase)")
    index = next(
        k for k in range(table.tree.topLevelItemCount())
        if table.tree.topLevelItem(k).text(1) == "ball1 – ball2"
    )  # fmt: skip
    item = table.expand(index)
    one, two = item.child(0), item.child(1)
    assert float(one.text(5)) == pytest.approx(2 / 3, abs=1e-6)
    assert float(two.text(5)) == pytest.approx(0.0, abs=1e-12)
    assert values(one.text(6)) == pytest.approx([1, 0, 0, 1 / 3], abs=1e-4)
    assert values(one.text(7)) == pytest.approx([1 / 3] * 4, abs=1e-4)
    assert values(two.text(6)) == pytest.approx([-1 / 3, 2 / 3, 2 / 3, 1 / 3], abs=1e-4)
    assert values(two.text(7)) == pytest.approx([-1 / 3, 5 / 9, 5 / 9, 5 / 9], abs=1e-4)


def test_the_family_of_example_4_runs_from_the_sequential_to_the_staged_answer(qtbot):
    """Paper 000 ex. 4: λ = [z, (z + √(4z − 3z²))/2], z from 1 (sequential) to 4/3 (staged)."""
    run = simulate(load_scene(scene_path("newton_cradle_3_staged")), t_end=0.3)
    table = StageTable()
    qtbot.addWidget(table)
    table.set_system(run.system)
    table.append(list(run.events))
    table.tree.setCurrentItem(table.tree.topLevelItem(0))
    assert table.family_button.isEnabled()
    dialog = table.show_family()
    qtbot.addWidget(dialog)
    data = dialog.data
    z = data.family.impulse[:, 0]
    assert z.min() == pytest.approx(1.0, abs=1e-12) and z.max() == pytest.approx(4 / 3, abs=1e-12)
    closed = 0.5 * (z + np.sqrt(np.clip(4 * z - 3 * z * z, 0.0, None)))
    assert np.allclose(data.family.impulse[:, 1], closed, atol=1e-9)
    assert data.staged == pytest.approx([4 / 3, 2 / 3], abs=1e-12)
    assert data.sequential == pytest.approx([1.0, 1.0], abs=1e-12)
    assert data.run_impulse == pytest.approx([4 / 3, 2 / 3], abs=1e-12)  # the scene is staged
    xs, _ys = dialog.family_curve.getData()
    assert len(xs) == len(z)
