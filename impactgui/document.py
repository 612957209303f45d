"""The scene being edited: a JSON-shaped dict, its undo stack, file and selection.

``SceneDocument`` is the model the editor widgets observe. ``doc.data`` is the
scene object exactly as it is saved (docs/CONTRACT.md, "Scene file"); it is replaced
only by the undoable commands of :mod:`impactgui.commands` (``doc.push``) or
wholesale by ``new`` / ``load`` / ``set_data`` / ``restore``. Validation is the solver's:
``doc.problems()`` lists what ``solver.scene.parse_scene`` refuses, as
``"json.path: message"`` lines, and ``doc.scene()`` gives the validated
``Scene`` for a run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QUndoCommand, QUndoStack

from impactgui.commands import COLLECTIONS, ItemRef, copy_scene
from solver.scene import (
    FORMAT,
    VERSION,
    Scene,
    SceneError,
    load_scene,
    parse_scene,
    save_scene,
    scene_to_dict,
)


def default_scene() -> dict[str, Any]:
    """The scene of File ▸ New: an empty side view with gravity and the default contact law."""
    return scene_to_dict(parse_scene({"format": FORMAT, "version": VERSION, "title": "Untitled"}))


def validated_scene(data: Mapping[str, Any]) -> tuple[Scene | None, list[str]]:
    """The ``Scene`` of the scene object ``data`` and no problem, or None and every problem.

    ``data`` is copied first: the ``Scene`` shares nothing with it.
    """
    try:
        return parse_scene(copy_scene(dict(data))), []
    except SceneError as error:
        return None, list(error.problems)


def scene_problems(data: Mapping[str, Any]) -> list[str]:
    """Every validation problem of the scene object ``data`` (empty when it is valid)."""
    return validated_scene(data)[1]


OBJECT_SECTIONS = ("contact", "solver")
"""Scene keys that hold one object."""


def _shown(value: Any) -> str:
    """``value`` as a problem message quotes it: JSON, cut short."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def structure_problems(data: Any) -> list[str]:
    """The problems of ``data``'s shape that no view can draw around.

    The scene must be an object, each of ``COLLECTIONS`` (when present) a
    list of objects and each of ``OBJECT_SECTIONS`` an object. Wrong values
    inside the objects are not this function's business: the document
    holds such a scene and ``problems()`` lists them.
    """
    if not isinstance(data, Mapping):
        return [f"(scene): must be a JSON object, got {_shown(data)}"]
    problems = []
    for key in COLLECTIONS:
        if key not in data:
            continue
        items = data[key]
        if not isinstance(items, list):
            problems.append(f"{key}: must be a list, got {_shown(items)}")
            continue
        problems += [
            f"{key}[{index}]: must be an object, got {_shown(item)}"
            for index, item in enumerate(items)
            if not isinstance(item, Mapping)
        ]
    for key in OBJECT_SECTIONS:
        if key in data and not isinstance(data[key], Mapping):
            problems.append(f"{key}: must be an object, got {_shown(data[key])}")
    return problems


class SceneDocument(QObject):
    """The scene under edit.

    Attributes
    ----------
    data : dict
        The scene object (JSON-shaped). Read it freely; change it only through
        ``push(command)``.
    undo_stack : QUndoStack
        Every edit since the last ``new`` / ``load`` / ``set_data`` / ``restore``.
    path : pathlib.Path or None
        The file the scene was loaded from or last saved to.
    selection : tuple[str, int] or None
        The selected item, e.g. ``("bodies", 0)``, or ``None``.

    Signals
    -------
    changed()
        ``data`` was replaced (edit, undo, redo, new, load).
    selection_changed(object)
        The selection changed; the argument is the new ``selection``.
    dirty_changed(bool)
        ``is_dirty`` changed.
    path_changed(object)
        ``path`` changed (a ``Path`` or ``None``).
    reset()
        A different scene was installed (``new``, ``load``, ``set_data``, ``restore``):
        views re-fit and drop what they were drawing.
    """

    changed = Signal()
    selection_changed = Signal(object)
    dirty_changed = Signal(bool)
    path_changed = Signal(object)
    reset = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.data: dict[str, Any] = default_scene()
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self.path: Path | None = None
        self.selection: ItemRef | None = None
        self._validated: tuple[Scene | None, list[str]] | None = None
        """``validated_scene`` of the current ``data``; None until asked after a change."""

    # ------------------------------------------------------------------ state

    @property
    def is_dirty(self) -> bool:
        """True when there are edits since the last load or save."""
        return not self.undo_stack.isClean()

    @property
    def is_top_view(self) -> bool:
        """True for a top-view (axle cart) scene."""
        return self.data.get("view") == "top"

    def scene(self) -> Scene:
        """The validated scene for a run (frozen; shares nothing with ``data``).

        Validated once per change of the scene, as ``problems()``: a run of a
        2000-bead scene does not copy and parse it again at Run.

        Raises
        ------
        SceneError
            When the scene is invalid (``error.problems`` lists why).
        """
        scene, problems = self._validation()
        if scene is None:
            raise SceneError(problems)
        return scene

    def problems(self) -> list[str]:
        """Every problem of the current scene, ``"json.path: message"``; empty when valid.

        Computed once per change of the scene (selecting an item changes nothing).
        """
        return list(self._validation()[1])

    def _validation(self) -> tuple[Scene | None, list[str]]:
        if self._validated is None:
            self._validated = validated_scene(self.data)
        return self._validated

    def item(self, ref: ItemRef) -> dict[str, Any]:
        """The item dict ``ref`` refers to (read-only by convention)."""
        return self.data[ref[0]][ref[1]]

    def ids(self) -> set[str]:
        """Ids of every boundary and body."""
        return {
            item["id"]
            for key in ("boundaries", "bodies")
            for item in self.data.get(key, [])
            if "id" in item
        }

    def body_index(self, body_id: str) -> int | None:
        """Index in ``data["bodies"]`` of the body called ``body_id``, or None."""
        for index, body in enumerate(self.data.get("bodies", [])):
            if body.get("id") == body_id:
                return index
        return None

    def unique_id(self, prefix: str) -> str:
        """The first of ``prefix1``, ``prefix2``, ... not used by any boundary or body."""
        taken = self.ids()
        number = 1
        while f"{prefix}{number}" in taken:
            number += 1
        return f"{prefix}{number}"

    # -------------------------------------------------------------- whole-file

    def new(self) -> None:
        """Start an empty scene (not undoable; the caller asks about unsaved changes first)."""
        self._reset(default_scene(), None)

    def load(self, path: str | Path, read: Callable[[Path], Scene] = load_scene) -> None:
        """Open the scene file at ``path``.

        ``read`` reads and validates the file (``load_scene``; the window
        passes :func:`impactgui.file_io.read_scene_in_background`, which does
        it off the GUI thread).

        Raises
        ------
        SceneError
            When the file cannot be read or is not a valid scene; the
            document is left as it was.
        """
        scene = read(Path(path))
        self._reset(scene_to_dict(scene), Path(path))

    def set_data(self, data: Mapping[str, Any], path: str | Path | None = None) -> None:
        """Replace the whole scene (e.g. a preset), clearing the undo history.

        A valid ``data`` is stored with every default filled in (as it would
        be saved); an invalid one is kept as given, and ``problems()`` says
        what is wrong with it.

        Raises
        ------
        SceneError
            When ``data`` is not shaped like a scene (``structure_problems``);
            the document is left as it was.
        """
        _check_structure(data)
        try:
            installed = scene_to_dict(parse_scene(copy_scene(dict(data))))
        except SceneError:
            installed = copy_scene(dict(data))
        self._reset(installed, Path(path) if path is not None else None)

    def restore(self, data: Mapping[str, Any], path: str | Path | None = None) -> None:
        """Install a scene recovered after a crash, exactly as it was, with unsaved changes.

        Unlike ``set_data`` nothing is filled in: ``data`` (valid or not, then
        ``problems()`` lists why) becomes ``self.data`` as given. ``path``, if
        given, becomes the file Save writes; the window passes none, so Save
        asks where to save rather than trusting a path read from the
        recovery folder. The
        document stays dirty until it is saved, even when every later edit is
        undone; there is no undo history before the restore.

        Raises
        ------
        SceneError
            When ``data`` is not shaped like a scene (``structure_problems``);
            the document is left as it was.
        """
        _check_structure(data)
        self._reset(copy_scene(dict(data)), Path(path) if path is not None else None)
        self.undo_stack.resetClean()

    def save(self, path: str | Path | None = None) -> Path:
        """Write the scene to ``path`` (default: ``self.path``) atomically and mark it clean.

        Returns the path written.

        Raises
        ------
        SceneError
            When the scene is invalid (nothing is written).
        ValueError
            When neither ``path`` nor ``self.path`` is set.
        OSError
            When the file cannot be written.
        """
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ValueError("no file name: save with a path")
        save_scene(self.scene(), target)
        self.undo_stack.setClean()
        if target != self.path:
            self.path = target
            self.path_changed.emit(target)
        return target

    # ------------------------------------------------------------------ edits

    def push(self, command: QUndoCommand) -> None:
        """Apply an edit (a command from :mod:`impactgui.commands`) and record it for undo."""
        self.undo_stack.push(command)

    def replace_data(self, data: Mapping[str, Any]) -> None:
        """Install ``data`` as the scene; called by commands only (use ``push`` to edit)."""
        self.data = copy_scene(dict(data))
        self._validated = None
        if self.selection is not None and not self._exists(self.selection):
            self.selection = None
            self.selection_changed.emit(None)
        self.changed.emit()

    # -------------------------------------------------------------- selection

    @Slot(object)
    def select(self, ref: ItemRef | None) -> None:
        """Select ``ref`` (``None`` clears the selection)."""
        if ref is not None:
            ref = (ref[0], int(ref[1]))
            if not self._exists(ref):
                raise IndexError(f"no item {ref!r} in the scene")
        if ref != self.selection:
            self.selection = ref
            self.selection_changed.emit(ref)

    # --------------------------------------------------------------- internal

    def _exists(self, ref: ItemRef) -> bool:
        collection, index = ref
        return collection in COLLECTIONS and 0 <= index < len(self.data.get(collection, []))

    def _reset(self, data: dict[str, Any], path: Path | None) -> None:
        self.undo_stack.clear()
        self.undo_stack.setClean()
        self.data = data
        self._validated = None
        if self.selection is not None:
            self.selection = None
            self.selection_changed.emit(None)
        if path != self.path:
            self.path = path
            self.path_changed.emit(path)
        self.changed.emit()
        self.reset.emit()
        self.dirty_changed.emit(False)

    @Slot(bool)
    def _on_clean_changed(self, clean: bool) -> None:
        self.dirty_changed.emit(not clean)


PROBLEM_PATH = re.compile(r"^(?P<path>[^:]+): (?P<message>.*)$")
"""Splits a problem line ``"bodies[0].mass: must be > 0"`` into path and message."""


def problem_path(problem: str) -> tuple[str, str]:
    """``"bodies[0].mass: must be > 0, got -1"`` → ``("bodies[0].mass", "must be > 0, got -1")``."""
    match = PROBLEM_PATH.match(problem)
    if match is None:
        return "", problem
    return match["path"], match["message"]


def _check_structure(data: Any) -> None:
    problems = structure_problems(data)
    if problems:
        raise SceneError(problems)
