"""The Presets menu: every bundled scene of ``resources/scenes``, one click to open.

Each entry shows the scene's ``title``; its ``description`` is the tooltip
and the status-bar tip. Choosing one emits ``preset_chosen(path)``; the main
window opens it (after the unsaved-changes prompt). Presets are read-only: a
bundled file (``is_bundled``), however it is opened, becomes an untitled copy
with its title kept, and Save asks for a new file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QWidget

SCENES_DIR = Path(__file__).resolve().parent.parent / "resources" / "scenes"
"""Where the bundled scenes live."""

DEFAULT_SCENE = SCENES_DIR / "wheel_curb_e03.json"
"""The scene the application opens when none is given (paper 004, e = 0.3)."""

RESOURCES_DIR = SCENES_DIR.parent
"""The application's bundled files: read-only, the application never writes here."""


def is_bundled(path: str | Path) -> bool:
    """True for a file under ``RESOURCES_DIR`` (a preset): opened as a copy, never written."""
    return Path(path).resolve().is_relative_to(RESOURCES_DIR.resolve())


@dataclass(frozen=True)
class Preset:
    """A bundled scene file with the title and description it carries."""

    path: Path
    title: str
    description: str


def bundled_presets(directory: Path = SCENES_DIR) -> list[Preset]:
    """Every ``*.json`` scene in ``directory``, sorted by file name.

    Title and description are read from the file without validating it (a
    broken preset still shows, and opening it reports its problems); a file
    that is not JSON at all is listed under its file name.
    """
    presets = []
    for path in sorted(directory.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        if not isinstance(data, dict):
            data = {}
        title = str(data.get("title") or path.stem)
        presets.append(Preset(path, title, str(data.get("description", ""))))
    return presets


class PresetsMenu(QMenu):
    """Menu with one action per bundled scene.

    Parameters
    ----------
    parent : QWidget, optional
        Qt parent.
    directory : Path
        Where to look for scenes (the bundled ones by default).
    """

    preset_chosen = Signal(object)
    """The ``Path`` of the scene the user picked."""

    def __init__(self, parent: QWidget | None = None, directory: Path = SCENES_DIR) -> None:
        super().__init__("&Presets", parent)
        self.setToolTipsVisible(True)
        self.presets = bundled_presets(directory)
        for preset in self.presets:
            action = QAction(preset.title, self)
            action.setToolTip(preset.description or preset.title)
            action.setStatusTip(preset.description or preset.title)
            action.setData(str(preset.path))
            action.triggered.connect(self._on_action)
            self.addAction(action)
        if not self.presets:
            empty = self.addAction(f"no scenes in {directory}")
            empty.setEnabled(False)

    @Slot()
    def _on_action(self) -> None:
        action = self.sender()
        if isinstance(action, QAction):
            self.preset_chosen.emit(Path(action.data()))
