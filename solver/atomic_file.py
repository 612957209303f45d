"""Writing files so that each is either the old file or the complete new one, alone or as a set.

Scene files, CSV exports and the GUI's recovery files all go through
:func:`atomic_write`: the text goes to a temporary file in the same folder,
is flushed to disk, and is then renamed over the target (``os.replace``). A
failure at any point removes the temporary file and leaves the target as it
was — never a half-written file. The temporary file is created with the mode
the target will have (the existing file's, else what a plain ``open`` gives
under the process umask, which is never changed), or a mode given by the
caller (``0o600`` for private files).

:func:`replace_together` writes a *set* of files (the CSV files of one run)
so that all of them replace the old ones or none does: every file is written
into a staging folder beside the targets; only when all are complete on disk
is a ``COMMIT`` marker written, and then the files are renamed into place. A
failure before the marker (a full disk, an exception in a writer) removes the
staging folder and leaves the old set. A process killed between the renames
leaves the staging folder with its marker; the next write into that folder
(:func:`complete_interrupted_sets`) finishes the renames first, so the set is
never left mixed.

Temporary names carry the writer's process id: a temporary file or staging
folder whose process no longer runs was left by a kill and is removed (or, a
committed set, completed) at the next write into the same folder.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TextIO

SET_PREFIX = ".impactgui-set-"
"""Name prefix of the staging folders of :func:`replace_together`."""
COMMIT_MARKER = "COMMIT"
"""File in a staging folder that says its set is complete and is being renamed into place."""


def _is_running(pid: int) -> bool:
    """Whether process ``pid`` exists (a temporary name of a live writer is left alone)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _writer_pid(name: str, prefix: str) -> int | None:
    """The process id in a temporary ``name`` after ``prefix`` (``<pid>.<token>...``), if any."""
    head = name[len(prefix) :].split(".", 1)[0].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def remove_stale_temporaries(directory: Path, name: str) -> None:
    """Delete temporary files of ``name`` in ``directory`` whose writing process is gone."""
    prefix = f".{name}."
    with suppress(OSError):
        for entry in os.scandir(directory):
            if not (entry.name.startswith(prefix) and entry.name.endswith(".tmp")):
                continue
            pid = _writer_pid(entry.name, prefix)
            if pid is None or not _is_running(pid):
                with suppress(OSError):
                    os.unlink(entry.path)


def _fsync_directory(directory: Path) -> None:
    """Make renames in ``directory`` durable (no-op where folders cannot be opened)."""
    with suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextmanager
def atomic_write(
    path: str | os.PathLike[str], newline: str | None = None, mode: int | None = None
) -> Iterator[TextIO]:
    """Open a UTF-8 text stream whose content replaces ``path`` when the block ends cleanly.

    Parameters
    ----------
    path : path-like
        The file to (re)write; its folder must exist.
    newline : str, optional
        Passed to ``open`` (``""`` for the csv module).
    mode : int, optional
        Permission bits of the file (``0o600`` keeps it private). By default
        an existing file keeps its mode and a new one gets ``0o666`` less the
        process umask, as a plain ``open`` would.

    Raises
    ------
    OSError
        When the folder cannot be written (the target is then untouched).
    UnicodeEncodeError
        When the text holds characters UTF-8 cannot encode (lone surrogates).
    """
    path = Path(path)
    remove_stale_temporaries(path.parent, path.name)
    if mode is None:
        with suppress(FileNotFoundError):
            mode = stat.S_IMODE(path.stat().st_mode)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags, 0o666 if mode is None else mode)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def complete_interrupted_sets(directory: Path) -> None:
    """Finish or undo the file sets of :func:`replace_together` that a killed process left.

    A staging folder of a process that no longer runs is completed (its
    remaining files renamed into place) when it holds the ``COMMIT`` marker,
    and removed without touching the targets otherwise.
    """
    with suppress(OSError):
        for entry in os.scandir(directory):
            if not (entry.name.startswith(SET_PREFIX) and entry.is_dir(follow_symlinks=False)):
                continue
            pid = _writer_pid(entry.name, SET_PREFIX)
            if pid is not None and _is_running(pid):
                continue
            staging = Path(entry.path)
            if (staging / COMMIT_MARKER).exists():
                _rename_into_place(staging, directory)
            shutil.rmtree(staging, ignore_errors=True)


def _rename_into_place(staging: Path, directory: Path) -> None:
    names = (staging / COMMIT_MARKER).read_text(encoding="utf-8").splitlines()
    for name in names:
        source = staging / name
        if source.exists():
            os.replace(source, directory / name)
    _fsync_directory(directory)


def replace_together(
    directory: str | os.PathLike[str], writers: Mapping[str, Callable[[Path], None]]
) -> dict[str, Path]:
    """Write a set of files into ``directory`` so that all replace the old ones, or none does.

    Parameters
    ----------
    directory : path-like
        Where the files go; created (with parents) when missing.
    writers : mapping of str to callable
        File name → a function that writes the complete file at the path it
        is given (a path in the staging folder).

    Returns
    -------
    dict of str to Path
        File name → its path in ``directory``.

    Raises
    ------
    OSError, or whatever a writer raises
        The old files are then all untouched and the staging folder removed.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    complete_interrupted_sets(directory)
    staging = Path(os.path.join(directory, f"{SET_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"))
    staging.mkdir(mode=0o700)
    try:
        for name, write in writers.items():
            write(staging / name)
            with suppress(FileNotFoundError):
                os.chmod(staging / name, stat.S_IMODE((directory / name).stat().st_mode))
        with atomic_write(staging / COMMIT_MARKER) as marker:
            marker.write("".join(f"{name}\n" for name in writers))
        _fsync_directory(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    # Committed: a failure from here on leaves the staging folder for the next write to finish.
    _rename_into_place(staging, directory)
    shutil.rmtree(staging, ignore_errors=True)
    return {name: directory / name for name in writers}
