"""``python -m solver run``: exit codes, problem lines, CSV files, failures, progress."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from solver import cli
from solver.frames import Event, StepOutput
from solver.record import write_csv
from solver.scene import load_scene
from solver.simulation import simulate

ROOT = Path(__file__).resolve().parents[1]
BALL = ROOT / "resources" / "scenes" / "bouncing_ball.json"
FILES = ["contacts.csv", "events.csv", "stages.csv", "trajectory.csv"]


def run_cli(*argv: str | Path, stderr: io.StringIO | None = None) -> tuple[int, list[str]]:
    """``main`` in this process; returns the exit status and the stderr lines."""
    stream = io.StringIO() if stderr is None else stderr
    status = cli.main([str(a) for a in argv], stderr=stream)
    return status, stream.getvalue().splitlines()


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as stream:
        return list(csv.DictReader(stream))


def write_scene(tmp_path: Path, **changes) -> Path:
    data = json.loads(BALL.read_text())
    for key, value in changes.items():
        data[key] = value
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(data))
    return path


class TerminalStream(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class FailingAfter:
    """A stepper that delegates to a real one and fails mid-run once past ``fail_at`` (s)."""

    def __init__(self, inner, fail_at: float) -> None:
        self.inner = inner
        self.system = inner.system
        self.fail_at = fail_at
        self.status = "running"
        self.message = ""
        self.frames_delivered = 0

    @property
    def t(self) -> float:
        return self.inner.t

    def step(self) -> StepOutput:
        if self.t >= self.fail_at:
            self.status = "failed"
            self.message = f"no consistent contact mode for ball–ground at t = {self.t}"
            return StepOutput(events=[Event(t=self.t, type="error", message=self.message)])
        out = self.inner.step()
        self.frames_delivered += len(out.frames)
        return out


def test_python_m_solver_run_writes_the_three_files_and_exits_0(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "solver", "run", str(BALL), "--out", str(out),
         "--t-end", "0.6", "--dt-out", "0.01"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert (done.returncode, done.stderr) == (0, "")
    assert sorted(p.name for p in out.iterdir()) == FILES
    rows = read_rows(out / "trajectory.csv")
    assert list(rows[0]) == [
        "t", "kind", "ball.x", "ball.y", "ball.phi", "ball.vx", "ball.vy", "ball.omega",
        "E_kin", "E_pot", "E_spring", "E_total", "E_dissipated", "E_input",
    ]  # fmt: skip
    assert float(rows[-1]["t"]) == 0.6
    assert read_rows(out / "events.csv")[0]["type"] == "impact"
    assert (out / "contacts.csv").read_text().startswith("t,body,other,lambda,tau,u_n,u_t,mode\n")


def test_an_impact_has_a_pre_and_a_post_row_at_the_same_time_with_the_velocity_jump(tmp_path):
    status, errors = run_cli("run", BALL, "--out", tmp_path, "--t-end", "0.6", "--dt-out", "0.01")

    rows = read_rows(tmp_path / "trajectory.csv")
    (i,) = [k for k, row in enumerate(rows) if row["kind"] == "pre"]
    pre, post = rows[i], rows[i + 1]
    assert (status, errors) == (0, [])
    assert post["kind"] == "post" and pre["t"] == post["t"]
    assert float(pre["t"]) == pytest.approx(math.sqrt(2 / 9.81), rel=1e-9)
    assert float(post["ball.vy"]) == pytest.approx(-0.5 * float(pre["ball.vy"]), rel=1e-9)
    assert float(pre["ball.y"]) == float(post["ball.y"])
    (impact,) = read_rows(tmp_path / "events.csv")
    assert impact["t"] == pre["t"] and impact["body"] == "ball" and impact["other"] == "ground"
    energy_jump = float(post["E_kin"]) - float(pre["E_kin"])
    assert float(impact["energy_change"]) == pytest.approx(energy_jump, rel=1e-9)


def test_help_lists_the_run_command():
    done = subprocess.run(
        [sys.executable, "-m", "solver", "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    assert done.returncode == 0
    assert "run" in done.stdout and "Traceback" not in done.stderr


def test_run_help_documents_every_option(capsys):
    status = cli.main(["run", "--help"])

    text = capsys.readouterr().out
    assert status == 0
    for option in ("--out", "--t-end", "--method", "--dt-out", "event-driven", "time-stepping"):
        assert option in text


def test_an_invalid_scene_gives_one_line_per_problem_starting_with_its_json_path(tmp_path):
    data = json.loads(BALL.read_text())
    data["bodies"][0]["mass"] = -1
    data["bodies"][0]["radius"] = "big"
    scene = tmp_path / "bad.json"
    scene.write_text(json.dumps(data))

    status, errors = run_cli("run", scene, "--out", tmp_path / "out")

    assert status == 2
    assert sorted(errors) == [
        "bodies[0].mass: must be > 0, got -1",
        "bodies[0].radius: must be a number, got 'big'",
    ]
    assert not (tmp_path / "out").exists()


def test_bad_options_and_scene_problems_are_all_reported_together(tmp_path):
    scene = write_scene(tmp_path, gravity=[0.0])

    status, errors = run_cli(
        "run", scene, "--out", tmp_path, "--t-end", "-1", "--dt-out", "fast", "--method", "rk4"
    )

    assert status == 2
    assert errors == [
        "--t-end: must be > 0, got -1",
        "--dt-out: must be a number, got 'fast'",
        "--method: must be one of event-driven, time-stepping, got 'rk4'",
        "gravity: must be a pair [x, y], got [0.0]",
    ]


def test_a_missing_scene_file_is_named(tmp_path):
    status, errors = run_cli("run", tmp_path / "x.json", "--out", tmp_path)

    assert (status, errors) == (2, [f"SCENE: no such file: {tmp_path / 'x.json'}"])


def test_invalid_json_is_one_line_with_line_and_column(tmp_path):
    scene = tmp_path / "broken.json"
    scene.write_text('{"format": "impactgui-scene",\n "version": 1,,}')

    status, errors = run_cli("run", scene, "--out", tmp_path)

    assert status == 2 and len(errors) == 1
    assert "line 2" in errors[0] and "column" in errors[0]


@pytest.mark.parametrize(
    "argv",
    [["run", str(BALL)], ["run", "--out", "x"], ["walk", str(BALL)], ["run", str(BALL), "--o"]],
)
def test_a_malformed_command_line_is_one_line_and_exit_2_without_traceback(argv):
    status, errors = run_cli(*argv)

    assert status == 2 and len(errors) == 1
    assert errors[0].startswith("python -m solver: ")


def test_no_command_prints_the_help_and_exits_2():
    status, errors = run_cli()

    assert status == 2 and any("run" in line for line in errors)


def test_out_that_is_a_file_is_refused(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")

    status, errors = run_cli("run", BALL, "--out", blocker)

    assert (status, errors) == (2, [f"--out: not a directory: {blocker}"])


def test_a_run_that_fails_exits_3_and_keeps_everything_up_to_the_failure(tmp_path, monkeypatch):
    steppers: list[FailingAfter] = []

    def failing_stepper(*args, **kwargs) -> FailingAfter:
        steppers.append(FailingAfter(real_make_stepper(*args, **kwargs), 1.2))
        return steppers[-1]

    real_make_stepper = cli.make_stepper
    monkeypatch.setattr(cli, "make_stepper", failing_stepper)

    status, errors = run_cli("run", BALL, "--out", tmp_path, "--dt-out", "0.01")

    (stepper,) = steppers
    assert status == 3
    assert errors == [f"solver failed: {stepper.message}"]
    rows = read_rows(tmp_path / "trajectory.csv")
    assert len(rows) == stepper.frames_delivered
    assert 0.0 < float(rows[-1]["t"]) <= stepper.t < 2.5
    assert {row["kind"] for row in rows} == {"sample", "pre", "post"}
    events = read_rows(tmp_path / "events.csv")
    assert events[-1]["type"] == "error" and events[0]["type"] == "impact"
    assert sorted(p.name for p in tmp_path.iterdir()) == FILES


def test_files_are_replaced_whole_and_no_temporary_file_is_left(tmp_path):
    (tmp_path / "trajectory.csv").write_text("stale\n")

    status, _ = run_cli("run", BALL, "--out", tmp_path, "--t-end", "0.1", "--dt-out", "0.05")

    assert status == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == FILES
    assert (tmp_path / "trajectory.csv").read_text().startswith("t,kind,ball.x,")


def test_the_same_run_writes_byte_identical_files(tmp_path):
    for name in ("a", "b"):
        run_cli("run", BALL, "--out", tmp_path / name, "--t-end", "0.6", "--dt-out", "0.01")

    for name in FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_the_command_line_writes_the_same_bytes_as_an_export_of_simulate(tmp_path):
    trajectory = simulate(load_scene(BALL), t_end=0.6, dt_out=0.01)
    write_csv(trajectory, tmp_path / "export")

    run_cli("run", BALL, "--out", tmp_path / "cli", "--t-end", "0.6", "--dt-out", "0.01")

    for name in FILES:
        assert (tmp_path / "cli" / name).read_bytes() == (tmp_path / "export" / name).read_bytes()


def test_time_stepping_is_selected_by_the_method_option(tmp_path):
    status, errors = run_cli(
        "run", BALL, "--out", tmp_path, "--t-end", "1.5", "--dt-out", "0.01",
        "--method", "time-stepping",
    )  # fmt: skip

    assert (status, errors) == (0, [])
    events = read_rows(tmp_path / "events.csv")
    # Moreau–Jean cuts its step at the first bounce's instant; the bounces accumulate at
    # t∞ = 3 t_hit ≈ 1.35 s, which the event-driven engine sums in one `zeno` event and
    # the time-stepper steps through (its steps absorb the tail of the series).
    assert float(events[0]["t"]) == pytest.approx(math.sqrt(2 / 9.81), abs=1e-12)
    assert {e["type"] for e in events} == {"impact", "accuracy"} and len(events) > 10
    assert events[-1]["type"] == "accuracy" and float(events[-1]["t"]) == 1.5  # its error


def test_the_progress_bar_is_drawn_on_a_terminal_only(tmp_path):
    terminal = TerminalStream()
    run_cli("run", BALL, "--out", tmp_path / "a", "--t-end", "0.1", stderr=terminal)
    status, plain = run_cli("run", BALL, "--out", tmp_path / "b", "--t-end", "0.1")

    assert "\r[" in terminal.getvalue() and "100.0%" in terminal.getvalue()
    assert terminal.getvalue().endswith("\n")
    assert (status, plain) == (0, [])
