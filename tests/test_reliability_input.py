"""Every input ends in a documented outcome: regression tests for the reliability issue.

Scene files past the limits (nesting, size, magnitudes, sample counts, text
that cannot be saved) are refused with exit 2 and a line naming the field;
an unexpected exception mid-run is exit 3 with the files computed so far,
one line on stderr and a traceback only with ``--debug``; a run that stops
advancing in simulated time fails instead of hanging.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from solver import cli
from solver.errors import InputError, SolverError
from solver.frames import StepOutput
from solver.record import Trajectory
from solver.scene import (
    MAX_FILE_BYTES,
    MAX_NESTING,
    MAX_PROBLEMS,
    SceneError,
    load_scene,
    nesting_depth,
    parse_scene,
    text_nesting_depth,
)
from solver.simulation import Watchdog, drive, make_stepper

ROOT = Path(__file__).resolve().parents[1]
BALL = ROOT / "resources" / "scenes" / "bouncing_ball.json"


def run_cli(*argv: str | Path) -> tuple[int, str]:
    stream = io.StringIO()
    status = cli.main([str(a) for a in argv], stderr=stream)
    return status, stream.getvalue()


def ball_data() -> dict:
    return json.loads(BALL.read_text(encoding="utf-8"))


def write_text(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scene.json"
    path.write_text(text, encoding="utf-8")
    return path


def write_data(tmp_path: Path, data: dict) -> Path:
    return write_text(tmp_path, json.dumps(data))


# ------------------------------------------------------------------- scene files


def test_deeply_nested_json_is_refused_before_parsing(tmp_path):
    depth = 100_000  # json.loads raised RecursionError (a crash, exit 1)
    path = write_text(
        tmp_path, '{"format": "impactgui-scene", "title": ' + "[" * depth + "]" * depth + "}"
    )
    status, err = run_cli("run", path, "--out", tmp_path / "out")
    assert status == 2
    assert f"nested more than {MAX_NESTING} levels" in err and "Traceback" not in err


def test_nesting_depth_of_text_skips_brackets_inside_strings():
    assert text_nesting_depth('{"a": "[[[{{", "b": [1, {"c": "\\"[["}]}') == 3
    assert nesting_depth({"a": [1, {"b": [[]]}]}) == 5


def test_nested_data_handed_to_parse_scene_is_refused_without_recursion():
    data = ball_data()
    node: list = []
    data["title"] = node
    for _ in range(50_000):
        node.append([])
        node = node[0]
    with pytest.raises(SceneError, match="nested more than"):
        parse_scene(data)


@pytest.mark.parametrize(
    ("change", "path", "reason"),
    [
        (
            lambda d: d["bodies"][0].update(position=[0.0, 1e308]),
            "bodies[0].position[1]",
            "1e+06 m",
        ),
        (
            lambda d: d["bodies"][0].update(position=[-1e308, 1.1]),
            "bodies[0].position[0]",
            "1e+06 m",
        ),
        (lambda d: d["bodies"][0].update(mass=1e-12), "bodies[0].mass", "1e-06 to 1e+06 kg"),
        (lambda d: d["bodies"][0].update(velocity=[1e200, 0.0]), "bodies[0].velocity[0]", "m/s"),
        (lambda d: d["boundaries"][0].update(a=[1e300, 0.0]), "boundaries[0].a[0]", "1e+06 m"),
        (lambda d: d.update(gravity=[0.0, -1e30]), "gravity[1]", "m/s²"),
        (lambda d: d["solver"].update(t_end=1e300), "solver.t_end", "s"),
    ],
)
def test_numbers_outside_the_stated_magnitudes_are_refused_with_the_reason(
    tmp_path, change, path, reason
):
    data = ball_data()
    change(data)
    status, err = run_cli("run", write_data(tmp_path, data), "--out", tmp_path / "out")
    assert status == 2, err
    line = next(line for line in err.splitlines() if line.startswith(path))
    assert "magnitude" in line and reason in line
    assert not (tmp_path / "out").exists()


def test_an_integer_too_long_for_a_float_is_refused(tmp_path):
    data = ball_data()
    text = json.dumps(data).replace('"mass": 1.0', '"mass": 1' + "0" * 400)
    status, err = run_cli("run", write_text(tmp_path, text), "--out", tmp_path / "out")
    assert status == 2 and err.startswith("bodies[0].mass: must be a number")


def test_a_file_past_the_size_limit_is_refused_unread(tmp_path):
    path = tmp_path / "big.json"
    with path.open("wb") as stream:
        stream.truncate(MAX_FILE_BYTES + 1)  # sparse: no 16 MiB written
    with pytest.raises(SceneError, match="more than the limit"):
        load_scene(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_is_refused_at_once_instead_of_blocking(tmp_path):
    fifo = tmp_path / "scene.json"
    os.mkfifo(fifo)
    status, err = run_cli("run", fifo, "--out", tmp_path / "out")
    assert status == 2 and "not a regular file" in err


def test_a_lone_surrogate_in_the_title_is_refused_at_load(tmp_path):
    data = ball_data()
    data["title"] = "ball \ud800"
    status, err = run_cli("run", write_text(tmp_path, json.dumps(data)), "--out", tmp_path / "o")
    assert status == 2 and err.startswith("title: holds a character that cannot be saved")


def test_a_lone_surrogate_in_an_id_is_refused_at_load(tmp_path):
    # It loaded, ran, and the CSV writer raised UnicodeEncodeError (exit 3, no files).
    data = ball_data()
    data["boundaries"][0]["id"] = "\ud800"
    status, err = run_cli("run", write_text(tmp_path, json.dumps(data)), "--out", tmp_path / "o")
    assert status == 2
    assert err.startswith("boundaries[0].id: holds a character that cannot be saved as UTF-8")


def test_dt_out_giving_too_many_samples_is_refused_before_allocating(tmp_path):
    # --dt-out 1e-12 tried to allocate 1.77 TiB of sample times.
    status, err = run_cli("run", BALL, "--out", tmp_path / "out", "--dt-out", "1e-12")
    assert status == 2 and err.startswith("--dt-out: must lie between 1e-09")
    status, err = run_cli("run", BALL, "--out", tmp_path / "out", "--dt-out", "1e-8")
    assert status == 2
    assert err.startswith("--dt-out: gives 2.5e+08 output samples over t_end = 2.5 s")


def test_a_scene_asking_for_too_many_samples_names_its_field(tmp_path):
    data = ball_data()
    data["solver"].update(dt_out=1e-7, t_end=1.0)
    status, err = run_cli("run", write_data(tmp_path, data), "--out", tmp_path / "out")
    assert status == 2 and err.startswith("solver.dt_out: gives 1e+07 output samples")


def test_time_stepping_with_a_tiny_step_is_refused_instead_of_hanging(tmp_path):
    data = ball_data()
    data["solver"].update(method="time-stepping", dt=1e-9)
    status, err = run_cli("run", write_data(tmp_path, data), "--out", tmp_path / "out")
    assert status == 2 and err.startswith("solver.dt: gives 2.5e+09 time steps")
    data["solver"].update(method="event-driven")
    path = write_data(tmp_path, data)
    status, err = run_cli("run", path, "--out", tmp_path / "o", "--method", "time-stepping")
    assert status == 2 and err.startswith("solver.dt: gives 2.5e+09 time steps")


def test_make_stepper_refuses_a_run_too_large_for_its_callers_too():
    scene = load_scene(BALL)
    with pytest.raises(InputError, match="output samples"):
        make_stepper(scene, dt_out=1e-9)


@pytest.mark.parametrize(
    ("boundary", "where"),
    [
        ({"type": "segment", "a": [0.4, 1e-303], "b": [0.4, 0.0]}, "boundaries[0].b"),
        (
            {"type": "polyline", "points": [[0, 1], [0, 5e-303], [0, 0], [2, 0]]},
            "boundaries[0].points[2]",
        ),
    ],
)
def test_a_wall_shorter_than_the_smallest_length_is_refused(tmp_path, boundary, where):
    # ends 5e-303 m apart: the squared length underflows to 0 and the overlap check divided by it
    data = ball_data()
    data["boundaries"] = [{"id": "wall", **boundary}]
    status, err = run_cli("run", write_data(tmp_path, data), "--out", tmp_path / "out")
    assert status == 2
    assert err.startswith(f"{where}: a wall ")
    assert "walls are at least 1e-06 m long" in err
    assert not (tmp_path / "out").exists()


def test_thousands_of_coincident_bodies_are_refused_with_a_bounded_list(tmp_path):
    # Every pair of 3000 disks at one centre was checked and listed: minutes, millions of lines.
    data = ball_data()
    ball = data["bodies"][0]
    data["bodies"] = [{**ball, "id": f"b{k}"} for k in range(3000)]
    status, err = run_cli("run", write_data(tmp_path, data), "--out", tmp_path / "out")
    lines = err.splitlines()
    assert status == 2 and len(lines) == MAX_PROBLEMS + 1
    assert lines[0] == "bodies[1]: has the same centre as body 'b0' at t = 0"
    assert lines[-1] == f"(scene): more problems not listed (the first {MAX_PROBLEMS} are)"


def test_a_scene_without_bodies_runs_and_writes_its_files(tmp_path):
    # The CSV writer's round-off scales took max() of nothing: exit 3 and no files.
    data = ball_data()
    data["bodies"] = []
    status, err = run_cli("run", write_data(tmp_path, data), "--out", tmp_path / "out")
    assert (status, err) == (0, "")
    assert (tmp_path / "out" / "trajectory.csv").read_text().startswith("t,kind,E_kin")


# ------------------------------------------------------------- failures mid-run


class BreaksAfter:
    """Delegates to a real stepper and raises ``error`` at its ``calls``-th step."""

    def __init__(self, inner, calls: int, error: Exception) -> None:
        self.inner, self.system, self.calls, self.error = inner, inner.system, calls, error

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def step(self) -> StepOutput:
        self.calls -= 1
        if self.calls == 0:
            raise self.error
        return self.inner.step()


@pytest.mark.parametrize(
    "error",
    [OverflowError("math range error"), InputError("`margin` must be finite"), KeyError("x")],
)
def test_an_unexpected_exception_mid_run_is_exit_3_with_the_files_so_far(
    tmp_path, monkeypatch, error
):
    real = cli.make_stepper
    monkeypatch.setattr(cli, "make_stepper", lambda *a, **k: BreaksAfter(real(*a, **k), 4, error))
    status, err = run_cli("run", BALL, "--out", tmp_path)
    assert status == 3
    assert err.count("\n") == 1 and err.startswith("solver failed: t = ")
    assert type(error).__name__ in err and "Traceback" not in err
    rows = (tmp_path / "trajectory.csv").read_text().splitlines()
    assert len(rows) > 3  # the header and the frames computed before the failure
    events = (tmp_path / "events.csv").read_text().splitlines()
    assert events[-1].split(",")[1] == "error"


def test_debug_prints_the_traceback_of_an_unexpected_exception(tmp_path, monkeypatch):
    real = cli.make_stepper
    boom = OverflowError("math range error")
    monkeypatch.setattr(cli, "make_stepper", lambda *a, **k: BreaksAfter(real(*a, **k), 3, boom))
    status, err = run_cli("run", BALL, "--out", tmp_path, "--debug")
    assert status == 3 and "Traceback" in err and "OverflowError: math range error" in err


def test_an_exception_while_compiling_the_system_is_exit_3(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise MemoryError("no room")

    monkeypatch.setattr(cli, "make_stepper", broken)
    status, err = run_cli("run", BALL, "--out", tmp_path)
    assert (status, err) == (3, "solver failed: internal error (MemoryError: no room)\n")


# ------------------------------------------------------------------- watchdog


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_watchdog_fails_a_run_whose_time_stops_advancing():
    clock = FakeClock()
    watchdog = Watchdog(stall_seconds=30.0, clock=clock)
    for t in (0.0, 0.1, 0.2):
        clock.now += 10.0
        watchdog.check(t)
    clock.now += 29.0
    watchdog.check(0.2)  # 29 s without progress: still allowed
    clock.now += 2.0
    with pytest.raises(SolverError, match="no progress in simulated time for 30 s"):
        watchdog.check(0.2)


class StuckStepper:
    """A stepper that advances to t = 0.5 s and then returns empty outputs at the same time."""

    def __init__(self, system, clock: FakeClock) -> None:
        self.system, self.clock = system, clock
        self.status, self.message, self.t = "running", "", 0.0

    def step(self) -> StepOutput:
        self.clock.now += 1.0
        self.t = min(self.t + 0.1, 0.5)
        return StepOutput()


def test_drive_turns_a_stall_into_a_failed_run_with_an_error_event():
    system = make_stepper(load_scene(BALL)).system
    clock = FakeClock()
    trajectory = Trajectory(system)
    unexpected = drive(StuckStepper(system, clock), trajectory, Watchdog(5.0, clock))
    assert unexpected is None
    assert trajectory.status == "failed"
    assert "no progress in simulated time" in trajectory.message
    assert trajectory.events[-1].type == "error" and trajectory.events[-1].t == 0.5


def test_distance_to_a_polyline_with_a_repeated_point_is_that_of_its_other_pieces():
    # the editor can hold such a curb while it is drawn; the squared length 0 was divided by
    from solver.scene import PolylineBoundary, distance_to_boundary

    curb = PolylineBoundary(id="c", type="polyline", points=[[0, 1], [0, 0], [0, 0], [2, 0]])
    assert distance_to_boundary((1.0, 0.5), curb) == 0.5
    assert distance_to_boundary((-3.0, -4.0), curb) == 5.0
