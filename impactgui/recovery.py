"""Crash recovery: the unsaved scene is autosaved, and what a crashed session left is offered back.

Each window that autosaves owns a ``RecoverySession``: while its scene has
unsaved changes it writes, into the recovery directory (``default_recovery_dir``),

* ``<session>.scene.json`` — the scene object exactly as it is in the editor:
  a valid scene file when the scene validates, the same JSON-shaped data
  with its problems when the user is mid-edit;
* ``<session>.meta.json`` — where the scene came from (``original_path``),
  its title and when it was written;
* ``<session>.lock`` — a ``QLockFile`` held while the session is alive.

Both JSON files are written atomically (a temporary file, then ``os.replace``)
and privately: the recovery directory is ``0700`` and its files ``0600``, so
other users of the machine cannot read unsaved work or where it came from
(no process-wide umask is changed for that). Text that UTF-8 cannot encode
is written escaped (``\ud800``), so an autosave never fails on it.
The window removes them when its scene becomes clean (saved, or replaced after
the unsaved-changes prompt) and when the user discards the changes at close.
A session that ends any other way — a crash, a kill, a ``shutdown`` without
``close`` — leaves them behind: ``RecoveryStore.pending`` lists such
leftovers (a lock held by a running process, another open impactgui window,
keeps its files out of the list).

An autosave that cannot be read back — damaged, too large, nested too deep,
not a JSON object — is set aside: renamed to ``<session>.damaged-<time>.json``
(kept for the user, never offered again) and reported in
``RecoveryStore.set_aside``; the application starts as usual. A restored
scene is opened without a file name: Save asks where to save it, rather
than trusting the path stored beside the autosave.
"""

from __future__ import annotations

import json
import os
import stat
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from PySide6.QtCore import QLockFile, QStandardPaths

from solver.atomic_file import atomic_write
from solver.scene import SceneError, read_scene_text, scene_data_from_text

RECOVERY_DIR_ENV = "IMPACTGUI_RECOVERY_DIR"
"""Environment variable naming the recovery directory (tests point it at a temporary one)."""
META_FORMAT = "impactgui-recovery"
META_VERSION = 1
SCENE_SUFFIX = ".scene.json"
META_SUFFIX = ".meta.json"
LOCK_SUFFIX = ".lock"
DAMAGED_INFIX = ".damaged-"
DIRECTORY_MODE = 0o700
FILE_MODE = 0o600
"""Permissions of the recovery directory and its files: the user's own, nobody else's."""


class RecoveryAnswer(StrEnum):
    """What the user chose for a recovered scene."""

    RESTORE = "restore"
    """Open it in the window (unsaved, titled with its original file)."""
    DISCARD = "discard"
    """Delete it."""
    LATER = "later"
    """Keep it for the next start-up."""


def default_recovery_dir() -> Path:
    """``$IMPACTGUI_RECOVERY_DIR``, else ``recovery`` in the user's application data directory."""
    override = os.environ.get(RECOVERY_DIR_ENV)
    if override:
        return Path(override)
    location = QStandardPaths.StandardLocation.AppDataLocation
    base = QStandardPaths.writableLocation(location) or str(Path.home() / ".impactgui")
    return Path(base) / "recovery"


@dataclass(frozen=True)
class RecoveredScene:
    """A scene autosaved by a session that ended without cleaning up.

    Attributes
    ----------
    data : dict
        The scene object as it was in the editor (possibly invalid).
    original_path : pathlib.Path or None
        The file the scene was opened from or saved to, ``None`` if it never had one.
    title : str
        The scene's title when it was written.
    saved_at : datetime
        When it was written (UTC).
    scene_file : pathlib.Path
        The recovery file holding ``data``.
    """

    data: dict[str, Any]
    original_path: Path | None
    title: str
    saved_at: datetime
    scene_file: Path

    def discard(self) -> None:
        """Delete the recovery files (nothing happens for files already gone)."""
        _remove_files(self.scene_file)

    def set_aside(self) -> Path:
        """Rename the recovery file aside (kept, never offered again); returns its new path."""
        return _set_aside(self.scene_file)


class RecoverySession:
    """The autosave files of one window, kept under a lock while the window lives.

    Parameters
    ----------
    directory : pathlib.Path
        The recovery directory (created on the first write).
    """

    def __init__(self, directory: Path) -> None:
        name = uuid.uuid4().hex
        self.directory = directory
        self.scene_file = directory / f"{name}{SCENE_SUFFIX}"
        self._lock: QLockFile | None = None

    @property
    def has_file(self) -> bool:
        """True while an autosaved scene of this session is on disk."""
        return self.scene_file.exists()

    def write(self, data: dict[str, Any], original_path: Path | None) -> None:
        """Autosave ``data`` (the scene, valid or not) and where it came from, atomically.

        Raises
        ------
        OSError
            When the directory or a file cannot be written, or the session's
            lock cannot be taken.
        TypeError, ValueError
            When ``data`` is not JSON-shaped.
        """
        scene_text = _json_text(data)
        meta = {
            "format": META_FORMAT,
            "version": META_VERSION,
            "original_path": str(original_path.resolve()) if original_path else None,
            "title": str(data.get("title") or ""),
            "saved_at": datetime.now(UTC).isoformat(),
        }
        _private_directory(self.directory)
        if self._lock is None:
            lock = QLockFile(str(self.scene_file.with_name(_stem(self.scene_file) + LOCK_SUFFIX)))
            lock.setStaleLockTime(0)
            if not lock.tryLock(0):
                raise OSError(f"cannot lock {lock.fileName()} ({lock.error().name})")
            self._lock = lock
        _write_text(self.scene_file, scene_text)
        _write_text(_meta_file(self.scene_file), _json_text(meta))

    def remove(self) -> None:
        """Delete this session's autosaved scene (there is nothing left to recover)."""
        _remove_files(self.scene_file)

    def close(self) -> None:
        """Release the lock and keep the files: they are then offered at the next start-up."""
        if self._lock is not None:
            self._lock.unlock()
            self._lock = None


class RecoveryStore:
    """The recovery directory: new sessions, and the scenes crashed sessions left.

    Parameters
    ----------
    directory : str or pathlib.Path, optional
        Where the files live (``default_recovery_dir()`` by default).
    """

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_recovery_dir()
        self.set_aside: list[str] = []
        """One line per damaged autosave that ``pending`` renamed aside: where it is, and why."""

    def open_session(self) -> RecoverySession:
        """A new session with a name of its own (nothing is written until its first autosave)."""
        return RecoverySession(self.directory)

    def pending(self) -> list[RecoveredScene]:
        """Scenes left by sessions that are no longer running, newest first.

        A file that cannot be read back as a JSON object (damaged, too large,
        nested too deep, not a regular file) is renamed aside and reported
        in ``set_aside``; it never stops the caller. Tightens the directory
        to ``0700`` and its files to ``0600`` (an older version made them
        readable by everyone).
        """
        found: list[tuple[float, RecoveredScene]] = []
        try:
            _private_directory(self.directory, create=False)
            scene_files = list(self.directory.glob(f"*{SCENE_SUFFIX}"))
        except OSError:
            return []
        for scene_file in scene_files:
            if DAMAGED_INFIX in scene_file.name or _is_live(scene_file):
                continue
            try:
                recovered = _read(scene_file)
                mtime = scene_file.stat().st_mtime
            except Exception as error:  # every damage becomes a message, never a crash
                self._set_aside(scene_file, error)
                continue
            found.append((mtime, recovered))
        found.sort(key=lambda pair: pair[0], reverse=True)
        return [recovered for _mtime, recovered in found]

    def _set_aside(self, scene_file: Path, error: BaseException) -> None:
        reason = "; ".join(error.problems) if isinstance(error, SceneError) else str(error)
        try:
            moved = _set_aside(scene_file)
        except OSError as failure:
            self.set_aside.append(f"{scene_file}: damaged ({reason}); cannot move it: {failure}")
            return
        self.set_aside.append(f"{scene_file.name} was damaged ({reason}); kept as {moved}")


def _stem(scene_file: Path) -> str:
    return scene_file.name.removesuffix(SCENE_SUFFIX)


def _meta_file(scene_file: Path) -> Path:
    return scene_file.with_name(_stem(scene_file) + META_SUFFIX)


def _is_live(scene_file: Path) -> bool:
    """True when the session of ``scene_file`` still runs (its lock is held by a live process)."""
    lock_path = scene_file.with_name(_stem(scene_file) + LOCK_SUFFIX)
    if not lock_path.exists():
        return False
    lock = QLockFile(str(lock_path))
    lock.setStaleLockTime(0)
    if lock.tryLock(0):
        lock.unlock()
        return False
    return True


def _read(scene_file: Path) -> RecoveredScene:
    """The recovered scene in ``scene_file``; its metadata is optional (a crash between writes).

    Raises
    ------
    OSError, UnicodeDecodeError, ValueError
        When the scene file cannot be read or holds no JSON object.
    """
    data = scene_data_from_text(read_scene_text(scene_file), str(scene_file))
    if not isinstance(data, dict):
        raise ValueError(f"{scene_file}: not a JSON object")
    try:
        meta = scene_data_from_text(read_scene_text(_meta_file(scene_file)))
    except SceneError:
        meta = {}
    if not isinstance(meta, dict) or meta.get("format") != META_FORMAT:
        meta = {}
    original = meta.get("original_path")
    try:
        saved_at = datetime.fromisoformat(str(meta["saved_at"]))
    except (KeyError, ValueError):
        saved_at = datetime.fromtimestamp(scene_file.stat().st_mtime, UTC)
    return RecoveredScene(
        data=data,
        original_path=Path(original) if isinstance(original, str) and original else None,
        title=str(meta.get("title") or data.get("title") or ""),
        saved_at=saved_at,
        scene_file=scene_file,
    )


def _json_text(data: Any) -> str:
    """JSON text with every non-ASCII character escaped (lone surrogates too: always writable)."""
    return json.dumps(data, indent=1, ensure_ascii=True) + "\n"


def _private_directory(directory: Path, create: bool = True) -> None:
    """Make ``directory`` (created when ``create``) ``0700`` and its files ``0600``."""
    if create:
        directory.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)
    elif not directory.is_dir():
        return
    if stat.S_IMODE(directory.stat().st_mode) != DIRECTORY_MODE:
        directory.chmod(DIRECTORY_MODE)
        for entry in directory.iterdir():
            if entry.is_file() and not entry.is_symlink():
                entry.chmod(FILE_MODE)


def _set_aside(scene_file: Path) -> Path:
    """Rename a damaged recovery file (and its metadata) aside; returns the new scene path."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    moved = scene_file.with_name(f"{_stem(scene_file)}{DAMAGED_INFIX}{stamp}.json")
    os.replace(scene_file, moved)
    meta = _meta_file(scene_file)
    if meta.exists():
        os.replace(meta, moved.with_name(moved.stem + ".meta.json"))
    return moved


def _write_text(path: Path, text: str) -> None:
    with atomic_write(path, mode=FILE_MODE) as stream:
        stream.write(text)


def _remove_files(scene_file: Path) -> None:
    """Delete a recovered scene and its metadata."""
    scene_file.unlink(missing_ok=True)
    _meta_file(scene_file).unlink(missing_ok=True)
