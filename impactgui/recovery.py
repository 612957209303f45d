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
not a JSON object, or with metadata any field of which is missing, of the
wrong type or out of range (a ``saved_at`` without a time zone or outside
1970–9000, an ``original_path`` that is not an absolute path, a title longer
than a scene's) — is set aside: renamed to ``<session>.damaged-<time>.json``
(kept for the user, never offered again) and reported in
``RecoveryStore.set_aside`` (one line each, the field named); the window shows
it on one status-bar line and starts as usual. A missing metadata file is no
damage (a crash between the two writes). A restored
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
from solver.scene import MAX_TEXT, SceneError, read_scene_text, scene_data_from_text

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
META_MAX_BYTES = 256 * 2**10
"""Largest metadata file read (a path and a title fit many times over)."""
META_MAX_PATH = 4096
"""Longest ``original_path``, characters (Linux's ``PATH_MAX``)."""
META_MAX_TEXT = MAX_TEXT
"""Longest ``title``, characters (a scene's own limit)."""
REASON_MAX = 300
"""Longest reason kept for a set-aside file (it is shown on one status-bar line)."""
SAVED_AT_RANGE = (datetime(1970, 1, 1, tzinfo=UTC), datetime(9000, 1, 1, tzinfo=UTC))
"""The ``saved_at`` times accepted (UTC): any other is damage, not when an autosave was made."""


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
        reason = " ".join(reason.split())[:REASON_MAX] or type(error).__name__
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

    Every field of the metadata, when its file exists, is checked before use
    (``_checked_meta``): a damaged one damages the pair.

    Raises
    ------
    OSError, ValueError, SceneError
        When the scene file cannot be read or holds no JSON object, or the
        metadata file exists but is damaged (the message names the field).
    """
    data = scene_data_from_text(read_scene_text(scene_file), str(scene_file))
    if not isinstance(data, dict):
        raise ValueError(f"{scene_file.name}: not a JSON object")
    meta_file = _meta_file(scene_file)
    if os.path.lexists(meta_file):
        meta = _checked_meta(meta_file)
        saved_at = meta["saved_at"]
        title = meta["title"]
        original = meta["original_path"]
    else:
        try:  # a crash between the two writes: the scene file's own time
            mtime = datetime.fromtimestamp(scene_file.stat().st_mtime, UTC)
            saved_at = _checked_time(mtime, "modification time")
        except (OverflowError, ValueError, OSError):
            saved_at = datetime.now(UTC)
        title, original = "", None
    return RecoveredScene(
        data=data,
        original_path=Path(original) if original else None,
        title=title or _scene_title(data),
        saved_at=saved_at,
        scene_file=scene_file,
    )


def _scene_title(data: dict[str, Any]) -> str:
    """The scene's own title when it is short, encodable text; else ``""``."""
    title = data.get("title")
    return title if isinstance(title, str) and _is_text(title, META_MAX_TEXT) else ""


def _is_text(text: str, limit: int) -> bool:
    """True for text of at most ``limit`` characters that UTF-8 can encode (no lone surrogate)."""
    if len(text) > limit:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _checked_meta(meta_file: Path) -> dict[str, Any]:
    """The fields of a recovery metadata file, each checked; ``saved_at`` as a datetime.

    Raises
    ------
    ValueError, SceneError
        Naming the first field that is missing, of the wrong type or out of range.
    """
    meta = scene_data_from_text(read_scene_text(meta_file, META_MAX_BYTES), meta_file.name)
    if not isinstance(meta, dict):
        raise ValueError(f"{meta_file.name}: not a JSON object")
    if meta.get("format") != META_FORMAT:
        raise ValueError(f"{meta_file.name}: format: not {META_FORMAT!r}")
    version = meta.get("version")
    if type(version) is not int or version != META_VERSION:
        raise ValueError(f"{meta_file.name}: version: not {META_VERSION}")
    original = meta.get("original_path")
    if original is not None and not (
        isinstance(original, str)
        and _is_text(original, META_MAX_PATH)
        and "\0" not in original
        and Path(original).is_absolute()
    ):
        raise ValueError(
            f"{meta_file.name}: original_path: not null nor an absolute path of at most "
            f"{META_MAX_PATH} characters"
        )
    title = meta.get("title")
    if not (isinstance(title, str) and _is_text(title, META_MAX_TEXT)):
        raise ValueError(f"{meta_file.name}: title: not text of at most {META_MAX_TEXT} characters")
    text = meta.get("saved_at")
    if not (isinstance(text, str) and len(text) <= 64):
        raise ValueError(f"{meta_file.name}: saved_at: not an ISO 8601 time")
    try:
        saved_at = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{meta_file.name}: saved_at: not an ISO 8601 time") from None
    return {
        "original_path": original or None,
        "title": title,
        "saved_at": _checked_time(saved_at, f"{meta_file.name}: saved_at"),
    }


def _checked_time(saved_at: datetime, field: str) -> datetime:
    """``saved_at`` in UTC when it has a time zone and lies in ``SAVED_AT_RANGE``.

    The local-time conversion the restore question shows is tried here, so
    that no date reaches the question that cannot be shown (``9999-12-31T23:59:59-14:00``
    overflows at ``astimezone``).

    Raises
    ------
    ValueError
        Naming ``field``, for a naive time or one out of range.
    """
    if saved_at.tzinfo is None or saved_at.utcoffset() is None:
        raise ValueError(f"{field}: no time zone")
    first, last = SAVED_AT_RANGE
    try:
        utc = saved_at.astimezone(UTC)
        utc.astimezone()
    except (OverflowError, ValueError, OSError):
        raise ValueError(f"{field}: out of range") from None
    if not first <= utc <= last:
        raise ValueError(f"{field}: {utc.isoformat()} not between {first.year} and {last.year}")
    return utc


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
