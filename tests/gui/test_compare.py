"""Compare impact laws: each law's answer at the first impact, its energy and admissibility.

Paper 000 examples 2/3 (four unit balls, ``v⁻ = [1, 0, 0, 1/3]``, ``e = 1``):
``poisson`` gives ``[−1/3, 2/3, 2/3, 1/3]`` with ``Gᵀv⁺ = [1, 0, −1/3]``
(inadmissible); ``staged`` gives ``[−1/3, 4/9, 4/9, 7/9]``. Both keep the
kinetic energy ``½(1 + 1/9) = 5/9 J``, which the test checks by summing ½mv²
itself.
"""

from __future__ import annotations

import pytest

from impactgui.compare import first_impact_outcome
from solver.scene import load_scene
from solver.simulation import make_stepper
from tests.gui.conftest import scene_path


def kinetic(v) -> float:
    """½ Σ v² for unit masses (J)."""
    return 0.5 * sum(x * x for x in v)


def test_four_balls_poisson_is_inadmissible_and_staged_is_not(qtbot, window):
    assert window.open_file(scene_path("four_balls"))
    dialog = window.open_compare()
    assert dialog.run(["staged", "poisson"])
    qtbot.waitUntil(lambda: not dialog.is_running(), timeout=20000)
    outcomes = {panel.law: panel for panel in dialog.panels}

    poisson = outcomes["poisson"].outcome
    assert poisson is not None
    assert poisson.v_plus == pytest.approx([-1 / 3, 2 / 3, 2 / 3, 1 / 3], abs=1e-12)
    assert poisson.u_n_plus == pytest.approx([1.0, 0.0, -1 / 3], abs=1e-12)
    assert not poisson.admissible
    assert poisson.energy_lost == pytest.approx(kinetic([1, 0, 0, 1 / 3]) - kinetic(poisson.v_plus))
    text = outcomes["poisson"].outcome_label.text()
    assert "inadmissible" in text and "ball3–ball4 still approaches" in text
    assert "energy lost 0 J" in text

    staged = outcomes["staged"].outcome
    assert staged is not None
    assert staged.v_plus == pytest.approx([-1 / 3, 4 / 9, 4 / 9, 7 / 9], abs=1e-12)
    assert staged.admissible
    assert min(staged.u_n_plus) >= -1e-12
    assert kinetic(staged.v_plus) == pytest.approx(5 / 9, abs=1e-12)
    assert staged.energy_lost == pytest.approx(0.0, abs=1e-12)
    text = outcomes["staged"].outcome_label.text()
    assert "admissible" in text and "inadmissible" not in text
    assert "ball4.vx = 0.7778" in text
    dialog.close()


def test_cradle_outcome_follows_each_law():
    scene = load_scene(scene_path("newton_cradle_3_staged"))
    stepper = make_stepper(scene)
    before = None
    while before is None and stepper.status == "running":
        before = next((f for f in stepper.step().frames if f.kind == "pre"), None)
    assert before is not None
    system = stepper.system
    sequential = first_impact_outcome(system, before, "sequential")
    assert sequential.v_plus == pytest.approx([0.0, 0.0, 1.0], abs=1e-12)
    staged = first_impact_outcome(system, before, "staged")
    assert staged.v_plus == pytest.approx([-1 / 3, 2 / 3, 2 / 3], abs=1e-12)
    assert staged.admissible and sequential.admissible
    assert staged.energy_lost == pytest.approx(0.0, abs=1e-12)
