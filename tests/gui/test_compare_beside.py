"""Run ▸ Compare beside a preset: the Hertzian cradle beside the rigid staged cradle.

The staged law gives five 1 kg balls [−3/5, 2/5, 2/5, 2/5, 2/5] (paper 000);
the Hertz chain of five steel balls leaves its last ball with nearly all of
V and the others with small velocities (tests/test_compliant_bodies.py has
the independent integration).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.gui.conftest import scene_path


def test_the_hertzian_cradle_runs_beside_the_staged_one(qtbot, window):
    assert window.open_preset(scene_path("newton_cradle_5_hertz"))
    dialog = window.open_compare()
    qtbot.addWidget(dialog)
    dialog.vary.setCurrentIndex(dialog.vary.findData("@beside-preset"))
    assert dialog.beside.isVisible() and not dialog.values.isVisible()
    assert not dialog.checkboxes["staged"].isEnabled()
    dialog.beside.setCurrentIndex(dialog.beside.findData(str(scene_path("newton_cradle_5_staged"))))
    assert dialog.run()
    qtbot.waitUntil(lambda: not dialog.is_running(), timeout=120000)
    hertz, staged = dialog.panels
    assert hertz.title == "open: Newton's cradle, 5 steel balls, Hertz contacts"
    assert staged.title == "preset: Newton's cradle, 5 balls, staged impact law"
    assert hertz.runner.status == staged.runner.status == "finished"
    v_staged = staged.runner.trajectory.states()[-1, 5:]
    np.testing.assert_allclose(v_staged, [-0.6, 0.4, 0.4, 0.4, 0.4], atol=1e-12)
    v_hertz = hertz.runner.trajectory.states()[-1, 5:]
    assert v_hertz[4] == pytest.approx(0.989, abs=1e-3)
    assert np.all(np.abs(v_hertz[:4]) < 0.15)
    assert [e.type for e in hertz.runner.trajectory.events] == ["touch"] * 3 + ["release"] * 4
    dialog.close()
