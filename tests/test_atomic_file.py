"""atomic_write: the target is the old file or the complete new one, with ordinary permissions."""

import os
import stat

import pytest

from solver.atomic_file import atomic_write


def test_new_file_gets_the_mode_a_plain_open_would_give(tmp_path):
    umask = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "a.txt") as stream:
            stream.write("hello")
    finally:
        os.umask(umask)
    assert (tmp_path / "a.txt").read_text() == "hello"
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o644


def test_rewriting_keeps_the_existing_mode(tmp_path):
    target = tmp_path / "b.txt"
    target.write_text("old")
    target.chmod(0o600)
    with atomic_write(target) as stream:
        stream.write("new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_failure_mid_write_leaves_the_old_file_and_no_temporary_file(tmp_path):
    target = tmp_path / "c.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_write(target) as stream:
        stream.write("half")
        raise RuntimeError("disk full")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["c.txt"]
