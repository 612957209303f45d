"""The trajectory buffer and the CSV files of the public contract."""

from __future__ import annotations

import contextlib
import csv
import math
import threading
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver import record
from solver.frames import ContactState, EnergyBudget, Event, Frame, StepOutput
from solver.record import Trajectory, csv_set_problems, trajectory_columns, write_csv

SYSTEM = SimpleNamespace(
    N=4, dof_labels=[("wheel", ("x", "y", "phi"), ("vx", "vy", "omega")), ("b1", ("x",), ("vx",))]
)


def make_frame(t: float, kind: str = "sample", contacts: tuple[ContactState, ...] = ()) -> Frame:
    q = np.array([t, 2 * t, 3 * t, 4 * t])
    v = np.array([-t, -2 * t, -3 * t, -4 * t])
    energy = EnergyBudget(kinetic=t, potential=0.5, spring=0.25, dissipated=t / 3, input=0.0)
    return Frame(t=t, kind=kind, q=q, v=v, contacts=contacts, energy=energy)


def read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="") as stream:
        return list(csv.reader(stream))


def sample_trajectory() -> Trajectory:
    contact = ContactState(
        body="wheel", other="curb#v2", lam=98.1, tau=-0.25, u_n=0.0, u_t=1e-17, mode="stick"
    )
    impact = Event(
        t=0.1,
        type="impact",
        body="wheel",
        other="curb#s1",
        normal_impulse=1.5,
        tangent_impulse=-0.2,
        stages=2,
        energy_change=-0.7,
    )
    trajectory = Trajectory(SYSTEM)
    trajectory.append(StepOutput(frames=[make_frame(0.0), make_frame(0.05, contacts=(contact,))]))
    trajectory.append(
        StepOutput(
            frames=[make_frame(0.1, "pre", (contact,)), make_frame(0.1, "post", (contact,))],
            events=[impact],
        )
    )
    trajectory.append(StepOutput(frames=[make_frame(0.1 + 0.05, contacts=(contact,))]))
    return trajectory


def test_times_and_states_are_read_only_views_of_every_frame_appended():
    trajectory = sample_trajectory()

    times, states = trajectory.times(), trajectory.states()

    assert times.tolist() == [0.0, 0.05, 0.1, 0.1, 0.1 + 0.05]
    assert states.shape == (5, 8)
    np.testing.assert_array_equal(states[1], np.r_[make_frame(0.05).q, make_frame(0.05).v])
    assert trajectory.energies()[1].tolist() == [0.05, 0.5, 0.25, 0.8, 0.05 / 3, 0.0]
    assert len(trajectory) == 5 and len(trajectory.frames) == 5 and len(trajectory.events) == 1
    with pytest.raises(ValueError):
        times[0] = 1.0


def test_frames_of_one_output_with_states_of_different_sizes_are_refused():
    trajectory = Trajectory(SYSTEM)
    short = Frame(0.1, "sample", np.zeros(1), np.zeros(1), (), make_frame(0.1).energy)
    with pytest.raises(ValueError, match="different sizes"):
        trajectory.append(StepOutput(frames=[make_frame(0.0), short]))


def test_views_taken_earlier_keep_their_content_while_the_buffer_grows():
    trajectory = Trajectory(SYSTEM)
    trajectory.append(StepOutput(frames=[make_frame(k * 1e-3) for k in range(10)]))
    early_times, early_states = trajectory.times(), trajectory.states()
    early_frames = trajectory.frames

    trajectory.append(StepOutput(frames=[make_frame(k * 1e-3) for k in range(10, 5000)]))

    assert early_times.tolist() == [k * 1e-3 for k in range(10)]
    assert early_states[9, 0] == 9 * 1e-3
    assert len(early_frames) == 10
    assert len(trajectory.times()) == 5000


@given(st.lists(st.integers(min_value=1, max_value=3000), min_size=1, max_size=6))
def test_states_are_the_frames_rows_in_order_across_blocks(batch_sizes):
    trajectory = Trajectory(SYSTEM)
    frames: list[Frame] = []
    earlier = []
    for size in batch_sizes:
        start = len(frames)
        batch = [make_frame(k * 1e-3) for k in range(start, start + size)]
        frames += batch
        trajectory.append(StepOutput(frames=batch))
        earlier.append(trajectory.states())
    # an independent stacking of every frame's q and v
    expected = np.array([np.r_[frame.q, frame.v] for frame in frames])
    np.testing.assert_array_equal(trajectory.states(), expected)
    for states in earlier:  # views taken while it grew keep their rows
        np.testing.assert_array_equal(states, expected[: len(states)])


def test_full_state_blocks_are_never_copied_when_frames_are_added():
    trajectory = Trajectory(SYSTEM)
    rows = record.STATE_BLOCK_ROWS
    trajectory.append(StepOutput(frames=[make_frame(k * 1e-3) for k in range(rows + 10)]))
    trajectory.states()  # the rows are written when they are read
    blocks = list(trajectory._state_blocks)
    trajectory.append(StepOutput(frames=[make_frame(k * 1e-3) for k in range(rows + 10, 3 * rows)]))
    trajectory.states()
    assert len(trajectory._state_blocks) == 3
    assert all(new is old for new, old in zip(trajectory._state_blocks, blocks, strict=False))


@pytest.mark.parametrize("readers", [1, 3])
def test_a_reader_thread_always_sees_a_consistent_prefix_while_frames_are_appended(readers):
    """Readers write the rows of the frames appended since the last read (one at a time)."""
    trajectory = Trajectory(SYSTEM)
    n_frames = 20000
    inconsistencies: list[str] = []
    done = threading.Event()

    ready = threading.Barrier(readers + 1)  # every reader has read the empty arrays

    def read_until_done() -> None:
        assert trajectory.states().shape == (0, 8)
        ready.wait()
        while not done.is_set():
            times = trajectory.times()
            states = trajectory.states()
            frames = trajectory.frames
            n = min(len(times), len(states), len(frames))
            if not np.array_equal(states[:n, 0], times[:n]):
                inconsistencies.append("states do not belong to their times")
            if n and frames[n - 1].t != times[n - 1]:
                inconsistencies.append("frames do not belong to their times")
            if np.any(np.diff(times) <= 0):
                inconsistencies.append("times not increasing")

    def read_and_report() -> None:
        try:
            read_until_done()
        except Exception as error:  # the reader must not fail silently
            inconsistencies.append(repr(error))
            done.set()
            ready.abort()  # the writer does not wait for a reader that failed

    threads = [threading.Thread(target=read_and_report) for _ in range(readers)]
    for reader in threads:
        reader.start()
    with contextlib.suppress(threading.BrokenBarrierError):  # a reader failed: reported below
        ready.wait()
    for k in range(n_frames):
        trajectory.append(StepOutput(frames=[make_frame(k * 1e-4)]))
    done.set()
    for reader in threads:
        reader.join()

    assert not inconsistencies
    assert len(trajectory.times()) == n_frames


def test_trajectory_csv_has_the_documented_columns_and_pre_post_rows_at_impacts(tmp_path):
    write_csv(sample_trajectory(), tmp_path)

    rows = read_csv(tmp_path / "trajectory.csv")

    assert rows[0] == [
        "t", "kind",
        "wheel.x", "wheel.y", "wheel.phi", "wheel.vx", "wheel.vy", "wheel.omega",
        "b1.x", "b1.vx",
        "E_kin", "E_pot", "E_spring", "E_total", "E_dissipated", "E_input",
    ]  # fmt: skip
    assert rows[0] == trajectory_columns(SYSTEM)
    assert [row[1] for row in rows[1:]] == ["sample", "sample", "pre", "post", "sample"]
    # The bead's coordinate and rate come after all of the wheel's: x=4t, vx=-4t.
    assert rows[2][8:10] == [repr(4 * 0.05), repr(-4 * 0.05)]
    wheel = (0.05, 2 * 0.05, 3 * 0.05, -0.05, -2 * 0.05, -3 * 0.05)
    assert rows[2][2:8] == [repr(x) for x in wheel]


def test_contacts_csv_has_one_row_per_active_contact_at_sample_frames_only(tmp_path):
    write_csv(sample_trajectory(), tmp_path)

    rows = read_csv(tmp_path / "contacts.csv")

    assert rows[0] == ["t", "body", "other", "lambda", "tau", "u_n", "u_t", "mode"]
    assert rows[1:] == [
        ["0.05", "wheel", "curb#v2", "98.1", "-0.25", "0.0", "1e-17", "stick"],
        [repr(0.1 + 0.05), "wheel", "curb#v2", "98.1", "-0.25", "0.0", "1e-17", "stick"],
    ]


def test_events_csv_lists_every_event_with_its_impulses_and_stages(tmp_path):
    write_csv(sample_trajectory(), tmp_path)

    rows = read_csv(tmp_path / "events.csv")

    assert rows == [
        ["t", "type", "body", "other", "normal_impulse", "tangent_impulse", "stages",
         "energy_change"],
        ["0.1", "impact", "wheel", "curb#s1", "1.5", "-0.2", "2", "-0.7"],
    ]  # fmt: skip


@given(
    st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=20)
)
def test_every_float_reads_back_exactly_from_the_csv(values):
    system = SimpleNamespace(N=1, dof_labels=[("b", ("x",), ("vx",))])
    trajectory = Trajectory(system)
    energy = EnergyBudget(kinetic=0.0, potential=0.0, spring=0.0, dissipated=0.0, input=0.0)
    for k, value in enumerate(values):
        frame = Frame(
            t=float(k), kind="sample", q=np.array([value]), v=np.array([-value]),
            contacts=(), energy=energy,
        )  # fmt: skip
        trajectory.append(StepOutput(frames=[frame]))
    rows = list(record._trajectory_rows(trajectory))

    assert [float(row[2]) for row in rows] == values
    assert [float(row[3]) for row in rows] == [-v for v in values]


def test_writing_the_same_trajectory_twice_gives_identical_bytes(tmp_path):
    trajectory = sample_trajectory()

    write_csv(trajectory, tmp_path / "a")
    write_csv(trajectory, tmp_path / "b")

    for name in ("trajectory.csv", "contacts.csv", "events.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_write_csv_creates_the_directory_and_leaves_no_temporary_files(tmp_path):
    out_dir = tmp_path / "nested" / "run"

    paths = write_csv(sample_trajectory(), out_dir)

    assert sorted(p.name for p in out_dir.iterdir()) == [
        "contacts.csv", "events.csv", "stages.csv", "trajectory.csv",
    ]  # fmt: skip
    assert set(paths) == {"trajectory", "contacts", "events", "stages"}


def test_a_failed_write_leaves_the_previous_file_intact_and_no_temporary_file(tmp_path):
    target = tmp_path / "events.csv"
    target.write_text("old contents\n")

    def rows_that_break():
        yield ["1.0"]
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        record.write_csv_atomic(target, ["t"], rows_that_break())

    assert target.read_text() == "old contents\n"
    assert [p.name for p in tmp_path.iterdir()] == ["events.csv"]


def test_non_finite_values_are_written_as_python_reads_them(tmp_path):
    trajectory = Trajectory(SYSTEM)
    trajectory.append(StepOutput(events=[Event(t=0.5, type="error", energy_change=math.nan)]))
    trajectory.append(StepOutput(frames=[make_frame(0.0)]))

    write_csv(trajectory, tmp_path)

    assert read_csv(tmp_path / "events.csv")[1] == [
        "0.5", "error", "", "", "0.0", "0.0", "0", "nan",
    ]  # fmt: skip


def test_a_trajectory_without_a_system_cannot_be_exported(tmp_path):
    with pytest.raises(ValueError, match="no system"):
        write_csv(Trajectory(), tmp_path)


def test_frame_accessor_reads_one_frame_without_copying():
    energy = EnergyBudget(0.0, 0.0, 0.0, 0.0, 0.0)
    traj = Trajectory()
    frames = [Frame(t, "sample", np.zeros(1), np.zeros(1), (), energy) for t in (0.0, 0.5, 1.0)]
    traj.append(StepOutput(frames=frames))
    assert traj.frame(1) is frames[1]
    assert traj.frame(-1) is frames[2]
    with pytest.raises(IndexError):
        traj.frame(3)


def test_quick_constructors_keep_the_dataclass_contract():
    from dataclasses import FrozenInstanceError, astuple

    energy = EnergyBudget(kinetic=1.0, potential=2.0, spring=0.5, dissipated=0.25, input=0.125)
    assert astuple(energy) == (1.0, 2.0, 0.5, 0.25, 0.125)
    assert energy == EnergyBudget(1.0, 2.0, 0.5, 0.25, 0.125)
    assert hash(energy) == hash(EnergyBudget(1.0, 2.0, 0.5, 0.25, 0.125))
    with pytest.raises(FrozenInstanceError):
        energy.kinetic = 0.0  # type: ignore[misc]
    contact = ContactState("ball", "ground", 9.81, 0.0, 0.0, 0.0, "stick", friction=0.3)
    assert (contact.point, contact.normal, contact.friction) == ((0.0, 0.0), (0.0, 1.0), 0.3)
    with pytest.raises(TypeError):
        ContactState("ball", "ground")  # the required fields stay required
    frame = Frame(t=0.5, kind="sample", q=np.zeros(1), v=np.ones(1), contacts=(), energy=energy)
    assert (frame.t, frame.kind, frame.energy) == (0.5, "sample", energy)
    with pytest.raises(FrozenInstanceError):
        frame.t = 1.0  # type: ignore[misc]


def test_csv_set_problems_names_the_file_row_and_column_of_a_non_finite_number(tmp_path):
    (tmp_path / "trajectory.csv").write_text("t,kind,b.x\n0.0,sample,1.5\n0.1,sample,nan\n")
    (tmp_path / "contacts.csv").write_text("t,body,other,lambda\n0.0,b,floor,inf\n")
    assert csv_set_problems(tmp_path) == [
        "trajectory.csv: row 2, column b.x: not finite",
        "contacts.csv: row 1, column lambda: not finite",
        "events.csv: missing",
    ]
    (tmp_path / "trajectory.csv").write_text("t,kind,b.x\n0.0,sample,1.5\n")
    (tmp_path / "contacts.csv").write_text("t,body,other,lambda\n0.0,b,floor,2.0\n")
    (tmp_path / "events.csv").write_text("t,type,message\n0.5,error,inf is a word here\n")
    assert csv_set_problems(tmp_path) == []
