"""stages.csv carries y_k, w_k and λ^(k) per stage as paper 000's example 3 prints them.

The values below are the paper's own tables (example 3: four unit balls,
``v(t−0) = [1, 0, 0, 1/3]``, ``ε = 1``, two stages), written as fractions.
"""

from __future__ import annotations

import csv
from fractions import Fraction as Q
from pathlib import Path

import numpy as np
import pytest

from solver.record import write_csv
from solver.scene import load_scene
from solver.simulation import simulate
from solver.stages import STAGE_COLUMNS, stage_rows

ROOT = Path(__file__).resolve().parents[1]
FOUR_BALLS = ROOT / "resources" / "scenes" / "four_balls.json"

# paper 000, example 3: {y_k} (columns k = 0, 1, 2), {w_k} (k = 0, 1), {λ^(k)} (k = 0, 1)
Y = [[Q(1), Q(0), Q(0), Q(1, 3)], [Q(-1, 3), Q(2, 3), Q(2, 3), Q(1, 3)]]
Y_END = [Q(-1, 3), Q(4, 9), Q(4, 9), Q(7, 9)]
W = [[Q(1, 3)] * 4, [Q(-1, 3), Q(5, 9), Q(5, 9), Q(5, 9)]]
LAMBDA = [[Q(2, 3), Q(1, 3), Q(0)], [Q(0), Q(1, 9), Q(2, 9)]]
CONTACTS = [("ball1", "ball2"), ("ball2", "ball3"), ("ball3", "ball4")]
RATES = ["ball1.vx", "ball2.vx", "ball3.vx", "ball4.vx"]


def floats(values) -> np.ndarray:
    return np.array([float(v) for v in values])


@pytest.fixture(scope="module")
def stages(tmp_path_factory) -> list[dict[str, str]]:
    scene = load_scene(FOUR_BALLS)
    run = simulate(scene, t_end=0.2)
    out = tmp_path_factory.mktemp("four_balls")
    write_csv(run, out)
    with (out / "stages.csv").open(newline="") as stream:
        return list(csv.DictReader(stream))


def test_header_extends_the_old_one_at_the_end(stages):
    header = list(stages[0].keys())
    assert header[: len(STAGE_COLUMNS) + 4] == [*STAGE_COLUMNS, *RATES]
    assert header[len(STAGE_COLUMNS) + 4 :] == [
        "lambda_k",
        *(f"y.{r}" for r in RATES),
        *(f"w.{r}" for r in RATES),
    ]


def test_each_contact_has_the_papers_two_stages(stages):
    first_t = stages[0]["t"]
    rows = [row for row in stages if row["t"] == first_t]
    for j, (body, other) in enumerate(CONTACTS):
        mine = [r for r in rows if {r["body"], r["other"]} == {body, other}]
        assert [r["stage"] for r in mine] == ["1", "2"], (body, other)
        for k, row in enumerate(mine):
            y = floats(row[f"y.{r}"] for r in RATES)
            w = floats(row[f"w.{r}"] for r in RATES)
            after = floats(row[r] for r in RATES)
            assert np.allclose(y, floats(Y[k]), atol=1e-14, rtol=0)
            assert np.allclose(w, floats(W[k]), atol=1e-14, rtol=0)
            assert float(row["lambda_k"]) == pytest.approx(float(LAMBDA[k][j]), abs=1e-14)
            # ε = 1: the stage's impulse on the contact is (1 + ε) λ^(k)
            assert float(row["normal_impulse"]) == pytest.approx(2 * float(LAMBDA[k][j]), abs=1e-14)
            expected_after = Y[1] if k == 0 else Y_END
            assert np.allclose(after, floats(expected_after), atol=1e-14, rtol=0)


def test_stage_rows_of_an_impact_without_stages_have_no_lambda_or_w():
    from solver.frames import Event

    event = Event(
        t=0.0,
        type="impact",
        normal_impulse=2.0,
        v_minus=np.array([1.0, 0.0]),
        v_plus=np.array([-1.0, 0.0]),
    )
    (row,) = stage_rows(event)
    assert row.lam is None and row.w is None
    assert np.array_equal(row.y, [1.0, 0.0])


def test_the_impacts_jacobian_is_the_papers_G():
    """Paper 000 ex. 2/3: G's columns (−1, 1, 0, 0), (0, −1, 1, 0), (0, 0, −1, 1)."""
    from solver.stages import impact_contacts, impact_jacobian

    run = simulate(load_scene(FOUR_BALLS), t_end=0.1)
    first = next(event for event in run.events if event.type == "impact")
    G = impact_jacobian(first, run.events, 4)
    paper = np.array([[-1, 0, 0], [1, -1, 0], [0, 1, -1], [0, 0, 1]], dtype=float)
    assert np.array_equal(G, paper)
    assert impact_contacts(first) == 3
