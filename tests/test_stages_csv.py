"""The stages of every impact: solver.stages and stages.csv beside events.csv."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest

from solver import cli
from solver.frames import Event
from solver.impact import resolve_impact
from solver.record import write_csv
from solver.scene import load_scene
from solver.simulation import simulate
from solver.stages import STAGE_COLUMNS, ImpactStages, normal_speeds, stage_rows

ROOT = Path(__file__).resolve().parents[1]
SCENES = ROOT / "resources" / "scenes"
CRADLE = SCENES / "newton_cradle_3_sequential.json"
BALL = SCENES / "bouncing_ball.json"


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as stream:
        return list(csv.DictReader(stream))


def impact_event(result, k: int, G: np.ndarray, v_minus: np.ndarray) -> Event:
    return Event(
        t=0.0,
        type="impact",
        normal_impulse=float(result.impulse[k]),
        v_minus=v_minus,
        v_plus=result.v_plus,
        impact_stages=ImpactStages(np.arange(len(v_minus)), G[:, k], k, result.stages),
    )


def test_paper_000_example_3_stages_split_the_impulse_and_give_the_velocities():
    G = np.array([[-1, 0, 0], [1, -1, 0], [0, 1, -1], [0, 0, 1]], dtype=float)
    v_minus = np.array([1.0, 0.0, 0.0, 1.0 / 3.0])
    result = resolve_impact(np.eye(4), G, v_minus, 1.0, law="staged")
    stage_one_impulse = [4 / 3, 2 / 3, 0.0]  # the Poisson stage (paper 000 ex. 2)
    stage_two_impulse = [0.0, 2 / 9, 4 / 9]
    for k in range(3):
        rows = stage_rows(impact_event(result, k, G, v_minus))
        assert [row.stage for row in rows] == [1, 2]
        assert rows[0].normal_impulse == pytest.approx(stage_one_impulse[k], abs=1e-14)
        assert rows[1].normal_impulse == pytest.approx(stage_two_impulse[k], abs=1e-14)
        assert np.allclose(rows[0].v_after, [-1 / 3, 2 / 3, 2 / 3, 1 / 3], atol=1e-14)
        assert np.allclose(rows[1].v_after, [-1 / 3, 4 / 9, 4 / 9, 7 / 9], atol=1e-14)


def test_normal_speeds_are_approach_before_and_separation_after():
    G = np.array([[-1.0], [1.0]])
    v_minus = np.array([2.0, 0.0])
    result = resolve_impact(np.eye(2), G, v_minus, 0.5, law="staged")
    assert normal_speeds(impact_event(result, 0, G, v_minus)) == pytest.approx((2.0, 1.0))


def test_newton_cradle_sequential_stages_through_the_command_line(tmp_path):
    status = cli.main(["run", str(CRADLE), "--out", str(tmp_path), "--t-end", "0.3"],
                      stderr=io.StringIO())  # fmt: skip
    assert status == 0
    events = read_rows(tmp_path / "events.csv")
    stages = read_rows(tmp_path / "stages.csv")
    header = list(stages[0])
    assert header[: len(STAGE_COLUMNS)] == list(STAGE_COLUMNS)
    rates = ["ball1.vx", "ball2.vx", "ball3.vx"]
    assert header[len(STAGE_COLUMNS) :] == [
        *rates, "lambda_k", *(f"y.{r}" for r in rates), *(f"w.{r}" for r in rates)
    ]  # fmt: skip
    impacts = [i for i, row in enumerate(events) if row["type"] == "impact"]
    assert sorted({int(row["event"]) for row in stages}) == impacts
    for index in impacts:
        rows = [row for row in stages if int(row["event"]) == index]
        assert [int(row["stage"]) for row in rows] == list(
            range(1, int(events[index]["stages"]) + 1)
        )
        assert rows[0]["body"] == events[index]["body"] and rows[0]["t"] == events[index]["t"]
        total = sum(float(row["normal_impulse"]) for row in rows)
        assert total == pytest.approx(float(events[index]["normal_impulse"]), rel=1e-12)
    # the classroom cradle: ball 1 stops and hands its speed to ball 2, ball 2 to ball 3
    first = [row for row in stages if int(row["event"]) == impacts[0]]
    velocities = [[float(row[c]) for c in ("ball1.vx", "ball2.vx", "ball3.vx")] for row in first]
    assert np.allclose(velocities, [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], atol=1e-14)
    trajectory = read_rows(tmp_path / "trajectory.csv")
    post = next(row for row in trajectory if row["kind"] == "post")
    after = [float(post[c]) for c in ("ball1.vx", "ball2.vx", "ball3.vx")]
    assert after == pytest.approx(velocities[-1], abs=1e-14)


def test_time_stepping_impacts_have_one_stage_row(tmp_path):
    run = simulate(load_scene(BALL), t_end=0.6, method="time-stepping")
    write_csv(run, tmp_path)
    events = read_rows(tmp_path / "events.csv")
    stages = read_rows(tmp_path / "stages.csv")
    impacts = [i for i, row in enumerate(events) if row["type"] == "impact"]
    assert impacts and [int(row["event"]) for row in stages] == impacts
    assert all(row["stage"] == "1" for row in stages)
    for row in stages:
        event = events[int(row["event"])]
        assert float(row["normal_impulse"]) == pytest.approx(float(event["normal_impulse"]))


def test_a_run_without_impacts_has_a_header_only(tmp_path):
    run = simulate(load_scene(BALL), t_end=0.2)
    write_csv(run, tmp_path)
    rates = ["ball.vx", "ball.vy", "ball.omega"]
    assert (tmp_path / "stages.csv").read_text() == ",".join(
        [*STAGE_COLUMNS, *rates, "lambda_k", *(f"y.{r}" for r in rates), *(f"w.{r}" for r in rates)]
    ) + "\n"
