"""Files that survive faults: CSV sets all-or-nothing, no temporary files left, no umask changes.

The kills are real: a child process writes a set and ends with ``os._exit``
at the chosen moment, skipping every clean-up, as SIGKILL would.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from solver import atomic_file, record
from solver.atomic_file import (
    COMMIT_MARKER,
    SET_PREFIX,
    atomic_write,
    complete_interrupted_sets,
    replace_together,
)
from solver.scene import load_scene
from solver.simulation import simulate

ROOT = Path(__file__).resolve().parents[1]
NAMES = ("trajectory.csv", "contacts.csv", "events.csv")


def write_set(directory: Path, text: str) -> None:
    replace_together(directory, {name: _writer(f"{text} {name}\n") for name in NAMES})


def _writer(text: str):
    def write(path: Path) -> None:
        path.write_text(text, encoding="utf-8")

    return write


def contents(directory: Path) -> dict[str, str]:
    return {name: (directory / name).read_text(encoding="utf-8") for name in NAMES}


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name not in NAMES)


def run_child_that_dies(directory: Path, die_at: str) -> int:
    """A child writes the set "new" into ``directory`` and exits abruptly at ``die_at``."""
    script = textwrap.dedent(
        f"""
        import os, sys
        from pathlib import Path
        sys.path.insert(0, {str(ROOT)!r})
        from solver import atomic_file
        directory = Path({str(directory)!r})
        names = {NAMES!r}
        calls = []
        real_replace = os.replace

        def replace(src, dst):
            calls.append(dst)
            if {die_at!r} == "between renames" and len(calls) == 2 + 1:
                os._exit(9)  # the marker's own rename, then one file renamed
            return real_replace(src, dst)

        def writer(name):
            def write(path):
                if {die_at!r} == "while writing" and name == names[1]:
                    os._exit(9)
                path.write_text("new " + name + "\\n", encoding="utf-8")
            return write

        atomic_file.os.replace = replace
        atomic_file.replace_together(directory, {{n: writer(n) for n in names}})
        """
    )
    return subprocess.run([sys.executable, "-c", script], check=False).returncode


def test_a_kill_while_the_set_is_written_leaves_the_old_set_and_the_next_write_cleans_up(
    tmp_path,
):
    write_set(tmp_path, "old")
    assert run_child_that_dies(tmp_path, "while writing") == 9
    assert contents(tmp_path) == {name: f"old {name}\n" for name in NAMES}
    assert [n for n in leftovers(tmp_path) if n.startswith(SET_PREFIX)]  # what the kill left
    write_set(tmp_path, "next")
    assert contents(tmp_path) == {name: f"next {name}\n" for name in NAMES}
    assert leftovers(tmp_path) == []


def test_a_kill_between_the_renames_is_completed_to_the_whole_new_set(tmp_path):
    write_set(tmp_path, "old")
    assert run_child_that_dies(tmp_path, "between renames") == 9
    mixed = contents(tmp_path)
    assert mixed[NAMES[0]] == f"new {NAMES[0]}\n" and mixed[NAMES[1]] == f"old {NAMES[1]}\n"
    staging = [p for p in tmp_path.iterdir() if p.name.startswith(SET_PREFIX)]
    assert len(staging) == 1 and (staging[0] / COMMIT_MARKER).exists()
    complete_interrupted_sets(tmp_path)
    assert contents(tmp_path) == {name: f"new {name}\n" for name in NAMES}
    assert leftovers(tmp_path) == []


def test_a_full_disk_between_the_files_leaves_every_old_file(tmp_path):
    write_set(tmp_path, "old")

    def disk_full(path: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        replace_together(
            tmp_path,
            {NAMES[0]: _writer("new"), NAMES[1]: _writer("new"), NAMES[2]: disk_full},
        )
    assert contents(tmp_path) == {name: f"old {name}\n" for name in NAMES}
    assert leftovers(tmp_path) == []


def test_write_csv_replaces_the_whole_set_or_nothing(tmp_path, monkeypatch):
    scene = load_scene(ROOT / "resources" / "scenes" / "bouncing_ball.json")
    first = simulate(scene, t_end=0.05)
    record.write_csv(first, tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert sorted(before) == ["contacts.csv", "events.csv", "stages.csv", "trajectory.csv"]

    def full_disk(path, header, rows):
        if path.name == "events.csv":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, header, rows)

    real = record.write_csv_atomic
    monkeypatch.setattr(record, "write_csv_atomic", full_disk)
    with pytest.raises(OSError):
        record.write_csv(simulate(scene, t_end=0.1), tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def _dead_pid() -> int:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(child.stdout)


def test_stale_temporary_files_of_dead_writers_are_removed_at_the_next_write(tmp_path):
    target = tmp_path / "trajectory.csv"
    stale = tmp_path / f".trajectory.csv.{_dead_pid()}.0a1b2c3d.tmp"
    live = tmp_path / f".trajectory.csv.{os.getppid()}.0a1b2c3d.tmp"  # a running process
    stale.write_text("half")
    live.write_text("being written")
    with atomic_write(target) as stream:
        stream.write("t\n")
    assert not stale.exists() and live.exists()
    assert target.read_text() == "t\n"


def test_atomic_write_never_changes_the_process_umask(tmp_path, monkeypatch):
    previous = os.umask(0o027)
    try:

        def refuse(mask):
            raise AssertionError("os.umask called: not thread-safe")

        monkeypatch.setattr(atomic_file.os, "umask", refuse)
        with atomic_write(tmp_path / "new.txt") as stream:
            stream.write("x")
        with atomic_write(tmp_path / "private.txt", mode=0o600) as stream:
            stream.write("x")
    finally:
        monkeypatch.undo()
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "private.txt").stat().st_mode) == 0o600


def test_text_that_cannot_be_encoded_is_refused_and_leaves_the_old_file(tmp_path):
    target = tmp_path / "scene.json"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError), atomic_write(target) as stream:
        stream.write("title \ud800")
    assert target.read_text() == "old" and leftovers(tmp_path) == ["scene.json"]
