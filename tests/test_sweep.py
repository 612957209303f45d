"""Parameter sweeps: grid, tables, closed-form values, refusals, failures, Ctrl-C, Dask."""

from __future__ import annotations

import csv
import io
import itertools
import math
import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver import cli
from solver.scene import load_scene, parse_scene, scene_to_dict
from solver.scene_paths import (
    ScenePathError,
    field_value,
    format_path,
    numeric_fields,
    parse_path,
    with_values,
)
from solver.sweep import Axis, PointResult, Sweep, SweepError, run_point, sweep

ROOT = Path(__file__).resolve().parents[1]
BALL = ROOT / "resources" / "scenes" / "bouncing_ball.json"
G = 9.81
DROP = 1.0  # the ball's first fall (m)


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as stream:
        return list(csv.DictReader(stream))


def run_cli(*argv: str | Path, stderr: io.StringIO | None = None) -> tuple[int, list[str]]:
    stream = io.StringIO() if stderr is None else stderr
    status = cli.main([str(a) for a in argv], stderr=stream)
    return status, stream.getvalue().splitlines()


class TerminalStream(io.StringIO):
    def isatty(self) -> bool:
        return True


# --------------------------------------------------------------- field paths


def test_paths_read_as_the_problem_lines_write_them():
    assert parse_path("bodies[0].velocity[1]") == ("bodies", 0, "velocity", 1)
    scene = load_scene(BALL)
    assert field_value(scene, "contact.restitution") == 0.5
    assert field_value(scene, "bodies[0].position[1]") == 1.1
    changed = with_values(scene, {"bodies[0].velocity[0]": 2.0, "contact.impact_law": "newton"})
    assert changed.bodies[0].velocity == (2.0, 0.0)
    assert changed.contact.impact_law == "newton"
    assert scene.bodies[0].velocity == (0.0, 0.0)


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("contact.elasticity", "no such field"),
        ("bodies[3].mass", "no item 3"),
        ("bodies[0]", "is an object"),
        ("bodies[0].velocity", "is a list"),
        ("bodies..mass", "not a field path"),
    ],
)
def test_a_path_that_names_no_value_is_refused_with_the_reason(path, reason):
    with pytest.raises(ScenePathError) as error:
        with_values(load_scene(BALL), {path: 1.0})
    assert str(error.value).startswith(f"{path}: ")
    assert reason in str(error.value)


def test_numeric_fields_list_what_can_vary_with_units():
    fields = {f.path: f for f in numeric_fields(load_scene(BALL))}
    assert fields["bodies[0].mass"].unit == "kg"
    assert fields["bodies[0].velocity[1]"].unit == "m/s"
    assert fields["contact.restitution"].value == 0.5
    assert "version" not in fields


# --------------------------------------------------------------------- axes


def test_a_range_axis_has_count_evenly_spaced_values_ends_included():
    axis = Axis.parse("contact.restitution=0.2:0.8:4")
    assert axis.path == "contact.restitution"
    assert axis.values == pytest.approx((0.2, 0.4, 0.6, 0.8), abs=1e-15)
    assert Axis.parse("forces[0].omega=3").values == (3.0,)
    assert Axis.parse("contact.impact_law=staged,newton").values == ("staged", "newton")


@pytest.mark.parametrize("text", ["contact.restitution=0:1:0", "contact.restitution=", "x=1:2"])
def test_an_empty_or_malformed_range_is_refused(text):
    with pytest.raises(SweepError):
        Axis.parse(text)


# ---------------------------------------------------------- the tables' values


@pytest.fixture(scope="module")
def ball_sweep():
    """Restitution × drop height: 3 × 2 points on two workers."""
    scene = load_scene(BALL)
    axes = [
        Axis("contact.restitution", (0.25, 0.5, 0.75)),
        Axis("bodies[0].position[1]", (1.1, 0.6)),  # drops of 1 m and 0.5 m
    ]
    return sweep(scene, axes, t_end=12.0, transient=0.0, workers=2)


def test_rows_come_in_grid_order_last_axis_fastest(ball_sweep):
    rows = ball_sweep.summary_rows()
    assert [row[0] for row in rows] == list(range(6))
    assert [tuple(row[1:3]) for row in rows] == [
        (e, y) for e in (0.25, 0.5, 0.75) for y in (1.1, 0.6)
    ]
    assert ball_sweep.summary_columns[:3] == ["run", "contact.restitution", "bodies[0].position[1]"]
    assert ball_sweep.summary_columns[3:8] == [
        "status",
        "t_end",
        "n_impacts",
        "t_zeno",
        "E_dissipated",
    ]
    assert ball_sweep.summary_columns[8:] == [
        "ball.x",
        "ball.y",
        "ball.phi",
        "ball.vx",
        "ball.vy",
        "ball.omega",
        "message",
        "period",
        "impacts_per_period",
        "period_s",
    ]


def test_zeno_time_and_dissipated_energy_match_the_bouncing_ball_closed_form(ball_sweep):
    for point in ball_sweep.points:
        e, y0 = point.values
        h = y0 - 0.1  # the ball's radius is 0.1 m
        t0 = math.sqrt(2.0 * h / G)
        assert point.status == "finished"
        assert point.t_zeno == pytest.approx(t0 * (1 + e) / (1 - e), rel=1e-9)
        assert point.E_dissipated == pytest.approx(1.0 * G * h, rel=1e-9)  # m = 1 kg, at rest
        assert point.final_state[1] == pytest.approx(0.1, abs=1e-12)


def test_impact_rows_give_approach_and_rebound_speeds_and_the_state_before(ball_sweep):
    columns = ball_sweep.impact_columns
    assert columns == [
        "run",
        "contact.restitution",
        "bodies[0].position[1]",
        "t",
        "body",
        "other",
        "u_n_minus",
        "u_n_plus",
        "impulse",
        "x",
        "y",
        "phi",
        "vx",
        "vy",
        "omega",
    ]
    rows = [dict(zip(columns, row, strict=True)) for row in ball_sweep.impact_rows()]
    for point in ball_sweep.points:
        e, y0 = point.values
        h = y0 - 0.1
        first = next(row for row in rows if row["run"] == point.run)
        v0 = math.sqrt(2.0 * G * h)
        assert first["t"] == pytest.approx(math.sqrt(2.0 * h / G), rel=1e-10)
        assert (first["body"], first["other"]) == ("ball", "ground")
        assert first["u_n_minus"] == pytest.approx(v0, rel=1e-10)
        assert first["u_n_plus"] == pytest.approx(e * v0, rel=1e-10)
        assert first["impulse"] == pytest.approx((1 + e) * v0, rel=1e-10)
        assert first["vy"] == pytest.approx(-v0, rel=1e-10)
        assert first["y"] == pytest.approx(0.1, abs=1e-12)
        successive = [row for row in rows if row["run"] == point.run]
        for before, after in itertools.pairwise(successive):
            assert after["u_n_minus"] == pytest.approx(e * before["u_n_minus"], rel=1e-8)


def test_the_transient_leaves_out_earlier_impacts():
    scene = load_scene(BALL)
    result = sweep(scene, {"contact.restitution": [0.5]}, transient=0.5, workers=1)
    times = [row[2] for row in result.impact_rows()]
    assert times and min(times) >= 0.5
    first_impact = math.sqrt(2.0 * DROP / G)  # 0.4515 s: before the transient
    assert all(abs(t - first_impact) > 1e-6 for t in times)
    assert result.points[0].n_impacts == len(times) + 1


def test_the_files_hold_the_tables(tmp_path, ball_sweep):
    paths = ball_sweep.write_csv(tmp_path)
    summary = read_rows(paths["summary"])
    assert len(summary) == 6
    for row, point in zip(summary, ball_sweep.points, strict=True):
        assert float(row["t_zeno"]) == point.t_zeno
        assert float(row["contact.restitution"]) == point.values[0]
        assert row["status"] == "finished"
    impacts = read_rows(paths["impacts"])
    assert len(impacts) == len(ball_sweep.impact_rows())


# --------------------------------------------------------------- failures


class OnePointBroken(Sweep):
    """A sweep whose point 1 carries a scene the worker cannot read."""

    def task(self, run):
        task = super().task(run)
        if run == 1:
            broken = dict(task.scene, bodies=[dict(task.scene["bodies"][0], mass=-1.0)])
            task = type(task)(**{**task.__dict__, "scene": broken})
        return task


def test_a_failed_point_is_a_failed_row_and_the_others_finish():
    plan = OnePointBroken(load_scene(BALL), [Axis("contact.restitution", (0.2, 0.4, 0.6))])
    result = plan.run(workers=2)
    statuses = [point.status for point in result.points]
    assert statuses == ["finished", "failed", "finished"]
    assert "bodies[0].mass" in result.points[1].message
    assert result.points[1].final_state == ()
    row = result.summary_rows()[1]
    assert row[2] == "failed" and row[-4] == result.points[1].message
    assert row[-3:] == [0, 0, None]  # no period found


def test_run_point_never_raises():
    plan = OnePointBroken(load_scene(BALL), [Axis("contact.restitution", (0.2, 0.4))])
    point = run_point(plan.task(1))
    assert isinstance(point, PointResult)
    assert point.status == "failed"


# ------------------------------------------------------------ command line


def test_cli_writes_both_files_and_exits_0(tmp_path):
    status, lines = run_cli(
        "sweep", BALL, "--vary", "contact.restitution=0.2:0.6:3", "--out", tmp_path,
        "--t-end", "2", "--workers", "2",
    )  # fmt: skip
    assert status == 0 and lines == []
    summary = read_rows(tmp_path / "summary.csv")
    values = [float(row["contact.restitution"]) for row in summary]
    assert values == pytest.approx([0.2, 0.4, 0.6], abs=1e-15)
    assert all(row["status"] == "finished" for row in summary)
    assert (tmp_path / "impacts.csv").is_file()


@pytest.mark.parametrize(
    ("vary", "starts"),
    [
        ("contact.elasticity=0:1:3", "contact.elasticity: no such field"),
        ("bodies[0].mass=1,-1", "bodies[0].mass: must be > 0"),
        ("contact.restitution=0:1:0", "contact.restitution: empty range"),
        ("contact.restitution=0.2,1.5", "contact.restitution: must be <= 1"),
        ("bodies[0].position[1]=1,0.05", "bodies[0].position[1] = 0.05: the scene refuses it"),
    ],
)
def test_cli_refuses_a_bad_sweep_in_one_line_before_anything_runs(tmp_path, vary, starts):
    out = tmp_path / "out"
    status, lines = run_cli("sweep", BALL, "--vary", vary, "--out", out)
    assert status == 2
    assert len(lines) == 1 and lines[0].startswith(starts), lines
    assert not out.exists()


def test_cli_progress_on_a_terminal_only(tmp_path):
    terminal = TerminalStream()
    args = ("sweep", BALL, "--vary", "contact.restitution=0.3,0.6", "--t-end", "1")
    status, _ = run_cli(*args, "--out", tmp_path / "a", stderr=terminal)
    assert status == 0
    text = terminal.getvalue()
    assert "2/2 points" in text and "points/s" in text and "left" in text
    status, lines = run_cli(*args, "--out", tmp_path / "b")
    assert status == 0 and lines == []


def test_a_count_that_comes_too_soon_after_a_redraw_is_drawn_a_moment_later():
    from solver.sweep_command import SweepProgress

    terminal = TerminalStream()
    progress = SweepProgress(terminal, 6)
    progress.update(1)
    progress.update(2)  # within the redraw interval: not drawn now, but soon
    deadline = time.monotonic() + 30.0
    while "2/6 points" not in terminal.getvalue() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "2/6 points" in terminal.getvalue()
    progress.close(2)
    assert terminal.getvalue().endswith("\n")


FORCED = ROOT / "resources" / "scenes" / "forced_mass_between_stops.json"
SHORT_AND_LONG = "solver.t_end=0.2,0.2,5000,5000,5000,5000"
"""Two points of 0.2 s, then four of 5000 s: each a few minutes of CPU at least."""


def _read_until(fd: int, text: str, limit_s: float) -> str:
    """What a pseudo-terminal shows, read until ``text`` appears (or ``limit_s`` passes)."""
    seen = ""
    deadline = time.monotonic() + limit_s
    while text not in seen and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.5)[0]:
            try:
                seen += os.read(fd, 4096).decode(errors="replace")
            except OSError:  # the process ended: the terminal is closed
                break
    return seen


def _ctrl_c_as_in_a_terminal() -> None:
    """In the child, before exec: SIGINT at its default, as a terminal's foreground job has it.

    A shell starts a background job (``make test &``) with SIGINT ignored, and
    Python then never turns Ctrl-C into KeyboardInterrupt.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def ctrl_c_raises():
    """SIGINT raises KeyboardInterrupt in this process during the test, whatever it inherited."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_cli_ctrl_c_leaves_files_with_every_finished_point(tmp_path):
    # Ctrl-C as a terminal sends it (to the whole process group, pool included) once the two
    # short points are reported done, while the four long ones run: a fixed wait would race
    out = tmp_path / "out"
    terminal, terminal_side = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "solver", "sweep", str(FORCED), "--vary", SHORT_AND_LONG,
         "--dt-out", "0.1", "--workers", "2", "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=terminal_side, start_new_session=True,
        preexec_fn=_ctrl_c_as_in_a_terminal,
    )  # fmt: skip
    os.close(terminal_side)
    shown = _read_until(terminal, "2/6 points", limit_s=240.0)
    assert "2/6 points" in shown, shown
    os.killpg(process.pid, signal.SIGINT)
    shown += _read_until(terminal, "never shown", limit_s=120.0)
    os.close(terminal)
    # the long points are abandoned, not awaited: the command ends long before they could
    assert process.wait(timeout=120) == 130, shown
    assert "Traceback" not in shown and "Exception" not in shown, shown
    assert "interrupted: 2 of 6 points finished and written" in shown
    summary = read_rows(out / "summary.csv")
    assert [row["run"] for row in summary] == ["0", "1"]
    assert all(row["status"] == "finished" for row in summary)
    assert not list(out.glob(".*.tmp"))


def test_leaving_a_sweep_early_abandons_its_running_points_without_a_thread_error(monkeypatch):
    thread_errors: list = []
    monkeypatch.setattr(threading, "excepthook", thread_errors.append)
    plan = Sweep(load_scene(FORCED), [Axis.parse(SHORT_AND_LONG)], dt_out=0.1)
    with plan.results(workers=2) as points:
        first = next(points)
    assert first.run in (0, 1) and first.status == "finished"
    assert thread_errors == []


def test_a_ctrl_c_while_points_are_submitted_abandons_the_running_points(
    monkeypatch, ctrl_c_raises
):
    # regression: a Ctrl-C inside the first submit (which waits for the pool to start) left
    # the submitted point unknown to the runner, and the sweep waited for it to finish
    from concurrent.futures import ProcessPoolExecutor

    submit = ProcessPoolExecutor.submit

    def submit_interrupted(self, *args, **kwargs):
        future = submit(self, *args, **kwargs)
        signal.raise_signal(signal.SIGINT)
        return future

    monkeypatch.setattr(ProcessPoolExecutor, "submit", submit_interrupted)
    plan = Sweep(load_scene(FORCED), [Axis.parse("solver.t_end=5000,5000,5000")], dt_out=0.1)
    with pytest.raises(KeyboardInterrupt) as interrupt:
        plan.run(workers=2)
    assert interrupt.value.partial.by_run == {}


def test_the_pool_starts_deaf_to_ctrl_c():
    # a terminal's Ctrl-C reaches the fork server too, which spends seconds importing the solver
    from multiprocessing import forkserver

    from solver.sweep_runners import _start_fork_server

    _start_fork_server()
    server = forkserver._forkserver._forkserver_pid
    ignored = next(
        line for line in Path(f"/proc/{server}/status").read_text().splitlines()
        if line.startswith("SigIgn:")
    )  # fmt: skip
    assert int(ignored.split()[1], 16) & (1 << (signal.SIGINT - 1))


# ----------------------------------------------------- same bytes anywhere


def _small_sweep_files(out: Path, *extra: str) -> dict[str, bytes]:
    status, lines = run_cli(
        "sweep", BALL, "--vary", "contact.restitution=0.3,0.8", "--vary",
        "bodies[0].velocity[0]=0,0.5", "--t-end", "2.5", "--transient", "0.4",
        "--out", out, *extra,
    )  # fmt: skip
    assert status == 0, lines
    return {name: (out / name).read_bytes() for name in ("summary.csv", "impacts.csv")}


def test_same_bytes_for_one_worker_two_workers_and_a_dask_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    one = _small_sweep_files(tmp_path / "one", "--workers", "1")
    two = _small_sweep_files(tmp_path / "two", "--workers", "2")
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        on_cluster = _small_sweep_files(tmp_path / "dask", "--scheduler", cluster.scheduler_address)
    assert one == two == on_cluster
    assert one["impacts.csv"].count(b"\n") > 4


def test_an_unreachable_scheduler_is_refused(tmp_path):
    pytest.importorskip("distributed")
    status, lines = run_cli(
        "sweep", BALL, "--vary", "contact.restitution=0.5", "--out", tmp_path / "x",
        "--scheduler", "tcp://127.0.0.1:9",
    )  # fmt: skip
    assert status == 2
    assert len(lines) == 1 and lines[0].startswith("--scheduler: cannot reach")


def test_each_point_has_its_scene():
    plan = Sweep(load_scene(BALL), [Axis.parse("contact.restitution=0.2,0.7")])
    assert [plan.point_scene(run).contact.restitution for run in range(len(plan))] == [0.2, 0.7]
    assert plan.point_scene(1).bodies == load_scene(BALL).bodies


@pytest.mark.parametrize("e", [0.5, 0.8])
def test_time_stepping_impacts_have_the_normal_speeds_of_a_dropped_ball(e):
    # Moreau–Jean with step h: the impact is met within one step of the contact, so the
    # speeds are the closed form's to within a step's worth of gravity, g·h
    scene = load_scene(BALL)
    h = scene.solver.dt
    result = sweep(scene, {"contact.restitution": [e]}, t_end=1.0, method="time-stepping")
    columns = result.impact_columns
    rows = [dict(zip(columns, row, strict=True)) for row in result.impact_rows()]
    first = rows[0]
    assert (first["body"], first["other"]) == ("ball", "ground")
    assert first["u_n_minus"] == pytest.approx(math.sqrt(2.0 * G * DROP), abs=2.0 * G * h)
    assert first["u_n_plus"] == pytest.approx(e * first["u_n_minus"], abs=G * h)
    mass = 1.0  # kg
    assert first["impulse"] == pytest.approx(
        mass * (first["u_n_minus"] + first["u_n_plus"]), abs=2.0 * mass * G * h
    )
    for before, after in itertools.pairwise(rows):  # free flight: back at the ground as fast
        assert after["u_n_minus"] == pytest.approx(before["u_n_plus"], abs=2.0 * G * h)


def test_time_stepping_impacts_of_two_beads_have_their_relative_normal_speeds():
    # no force acts: Moreau–Jean keeps the speeds exactly, u+ = e u- for the relative speed
    with_springs = scene_to_dict(
        load_scene(ROOT / "resources" / "scenes" / "two_masses_elastic.json")
    )
    scene = with_values(
        parse_scene({**with_springs, "springs": []}),
        {"bodies[0].vx": 1.5, "bodies[1].vx": -0.5, "contact.restitution": 0.6},
    )
    result = sweep(scene, {"bodies[1].mass": [100.0]}, t_end=0.5, method="time-stepping")
    columns = result.impact_columns
    (impact,) = [dict(zip(columns, row, strict=True)) for row in result.impact_rows()]
    assert {impact["body"], impact["other"]} == {"m1", "m2"}
    assert impact["u_n_minus"] == pytest.approx(2.0, rel=1e-12)
    assert impact["u_n_plus"] == pytest.approx(0.6 * 2.0, rel=1e-12)


@given(
    st.lists(
        st.one_of(
            st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
            st.integers(min_value=0, max_value=99),
        ),
        min_size=1,
        max_size=6,
    ).filter(lambda parts: isinstance(parts[0], str))
)
def test_paths_read_back_as_written(parts):
    assert parse_path(format_path(tuple(parts))) == tuple(parts)


def test_a_stalled_point_fails_with_the_watchdog_message(monkeypatch):
    from solver import sweep_point as sweep_module
    from solver.errors import SolverError

    class StallAfterThreeSteps:
        def __init__(self):
            self.steps = 0

        def check(self, t):
            self.steps += 1
            if self.steps > 3:
                raise SolverError(f"no progress past t = {t} s")

    monkeypatch.setattr(sweep_module, "Watchdog", StallAfterThreeSteps)
    plan = Sweep(load_scene(BALL), [Axis("contact.restitution", (0.5,))])
    point = run_point(plan.task(0))
    assert point.status == "failed" and point.message.startswith("no progress past")
    assert point.impacts  # what was computed before the stall is kept


def test_a_sweep_too_large_to_record_is_refused_before_it_runs():
    with pytest.raises(SweepError, match="output samples"):
        Sweep(load_scene(BALL), [Axis("contact.restitution", (0.5,))], t_end=1e5)


def test_an_output_directory_that_cannot_be_made_is_refused_before_the_points_run(tmp_path):
    (tmp_path / "file").write_text("")
    status, lines = run_cli(
        "sweep", BALL, "--vary", "contact.restitution=0.5", "--out", tmp_path / "file" / "out"
    )
    assert status == 2
    assert len(lines) == 1 and lines[0].startswith("--out: cannot create")


def test_sampling_only_the_end_keeps_the_impacts_and_the_final_state():
    scene = load_scene(BALL)
    axes = {"contact.restitution": [0.3, 0.8]}
    dense = sweep(scene, axes, t_end=2.0, workers=1)
    sparse = sweep(scene, axes, t_end=2.0, dt_out=2.0, workers=1)
    for a, b in zip(dense.points, sparse.points, strict=True):
        assert a.final_state == pytest.approx(b.final_state, rel=1e-12, abs=1e-12)
        assert [i.t for i in a.impacts] == pytest.approx([i.t for i in b.impacts], rel=1e-12)


def test_cli_refuses_a_bad_sample_spacing(tmp_path):
    status, lines = run_cli(
        "sweep", BALL, "--vary", "contact.restitution=0.5", "--dt-out", "0", "--out", tmp_path
    )
    assert status == 2 and lines == ["--dt-out: must be > 0, got 0"]


def test_workers_end_when_the_sweep_is_killed_outright(tmp_path):
    psutil = pytest.importorskip("psutil")
    process = subprocess.Popen(
        [sys.executable, "-m", "solver", "sweep", str(BALL), "--vary",
         "contact.restitution=0.1:0.9:400", "--t-end", "30", "--workers", "2",
         "--out", str(tmp_path / "out")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    sweep_process = psutil.Process(process.pid)
    deadline = time.monotonic() + 120.0
    workers: list = []
    while len(workers) < 2 and time.monotonic() < deadline:
        servers = [p for p in sweep_process.children() if "forkserver" in " ".join(p.cmdline())]
        workers = servers[0].children() if servers else []
        time.sleep(0.1)
    assert len(workers) == 2
    process.kill()
    process.wait()
    _, alive = psutil.wait_procs(workers, timeout=30)
    assert alive == []


def test_cli_ctrl_c_while_the_files_are_written_finishes_them_and_exits_130(tmp_path, monkeypatch):
    # regression: a Ctrl-C after the last point, during the final write, ended in a traceback
    from solver.sweep import SweepResult

    write = SweepResult.write_csv

    def write_interrupted(self, out_dir):
        signal.raise_signal(signal.SIGINT)
        return write(self, out_dir)

    monkeypatch.setattr(SweepResult, "write_csv", write_interrupted)
    args = (
        "sweep",
        BALL,
        "--vary",
        "contact.restitution=0.3,0.6",
        "--t-end",
        "1",
        "--workers",
        "1",
    )
    status, lines = run_cli(*args, "--out", tmp_path)
    assert status == 130
    assert lines == ["interrupted: 2 of 2 points finished and written"]
    assert [row["contact.restitution"] for row in read_rows(tmp_path / "summary.csv")] == [
        "0.3",
        "0.6",
    ]
