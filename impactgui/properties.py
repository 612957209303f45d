"""The property panel: edit the selected item's fields, or the scene's settings, with units.

Every value typed is checked by the scene validator before it is applied: the
candidate scene (the document with the new value) goes through
``solver.scene.parse_scene``; when that reports a problem at the field's JSON
path, or a new problem anywhere (a larger radius that makes a wheel overlap a
wall), the field turns red with the validator's reason and the document is
left unchanged. A valid value is applied as one undoable ``SetProperty``.
A field shown red keeps the scene from running: Run asks ``refused`` first
and names the field, rather than running the value the document still holds.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from impactgui.commands import (
    FieldPath,
    ItemRef,
    RenameBody,
    SetProperty,
    get_field,
    path_text,
    set_field,
)
from impactgui.document import SceneDocument, problem_path, scene_problems
from solver.scene import IMPACT_LAWS

INVALID_STYLE = "QLineEdit, QComboBox { background: #ffebee; border: 1px solid #d32f2f; }"
ERROR_LABEL_STYLE = "color: #c62828;"


@dataclass(frozen=True)
class FieldSpec:
    """One editable field: its key path inside the item, label, unit and editor kind.

    ``kind``: ``"number"``, ``"optional"`` (a number or blank for the default),
    ``"compliance"`` (a number of a boundary's ``compliance``: a blank stiffness
    is a rigid boundary, ``PropertyPanel._compliance_edit``), ``"pair"`` (two
    numbers), ``"text"``, ``"choice"`` (one of ``choices``) or ``"info"``
    (shown, not editable).
    """

    key: tuple[str, ...]
    label: str
    unit: str = ""
    kind: str = "number"
    choices: tuple[str, ...] = ()


def _f(key: str, label: str, unit: str = "", kind: str = "number", *choices: str) -> FieldSpec:
    return FieldSpec(tuple(key.split(".")), label, unit, kind, choices)


_CONTACT_OVERRIDES = (
    _f("restitution", "restitution e", "–", "optional"),
    _f("friction", "friction μ", "–", "optional"),
    _f("compliance.stiffness", "soft: stiffness k", "N/m^p", "compliance"),
    _f("compliance.damping", "soft: damping c", "N·s/m", "compliance"),
    _f("compliance.exponent", "soft: exponent p", "1 or 1.5", "compliance"),
)

COMPLIANCE_DEFAULTS = {"damping": 0.0, "exponent": 1.0}
"""A soft boundary's damping and exponent until they are typed (the scene format's defaults);
a blank stiffness makes the boundary rigid again."""

ITEM_FIELDS: dict[str, tuple[FieldSpec, ...]] = {
    "wheel": (
        _f("id", "id", "", "text"),
        _f("mass", "mass", "kg"),
        _f("inertia", "inertia J", "kg·m²"),
        _f("radius", "radius", "m"),
        _f("position", "position", "m", "pair"),
        _f("angle", "angle φ", "rad"),
        _f("velocity", "velocity", "m/s", "pair"),
        _f("angular_velocity", "angular velocity ω", "rad/s"),
    ),
    "bead": (
        _f("id", "id", "", "text"),
        _f("mass", "mass", "kg"),
        _f("radius", "radius", "m"),
        _f("rail_y", "rail height y", "m"),
        _f("x", "position x", "m"),
        _f("vx", "velocity vx", "m/s"),
    ),
    "axle_cart": (
        _f("id", "id", "", "text"),
        _f("axle_mass", "axle mass", "kg"),
        _f("half_length", "half length l", "m"),
        _f("wheel_mass", "wheel mass", "kg"),
        _f("wheel_radius", "wheel radius r", "m"),
        _f("position", "centre C", "m", "pair"),
        _f("angle", "angle φ", "rad"),
        _f("wheel_angles", "wheel angles θA, θB", "rad", "pair"),
        _f("wheel_rates", "wheel rates θ̇A, θ̇B", "rad/s", "pair"),
    ),
    "segment": (
        _f("id", "id", "", "text"),
        _f("a", "end a", "m", "pair"),
        _f("b", "end b", "m", "pair"),
        *_CONTACT_OVERRIDES,
    ),
    "polyline": (
        _f("id", "id", "", "text"),
        _f("points", "points", "", "info"),
        *_CONTACT_OVERRIDES,
    ),
    "arc": (
        _f("id", "id", "", "text"),
        _f("center", "centre", "m", "pair"),
        _f("radius", "radius", "m"),
        _f("start_deg", "start angle", "°"),
        _f("end_deg", "end angle", "°"),
        *_CONTACT_OVERRIDES,
    ),
    "spring_to_body": (
        _f("a", "body a", "", "text"),
        _f("b", "body b", "", "text"),
        _f("stiffness", "stiffness k", "N/m"),
        _f("rest_length", "rest length", "m"),
        _f("damping", "damping c", "N·s/m"),
    ),
    "spring_to_anchor": (
        _f("a", "body a", "", "text"),
        _f("anchor", "anchor", "m", "pair"),
        _f("stiffness", "stiffness k", "N/m"),
        _f("rest_length", "rest length", "m"),
        _f("damping", "damping c", "N·s/m"),
    ),
    "harmonic": (
        _f("body", "body", "", "text"),
        _f("amplitude", "amplitude F", "N", "pair"),
        _f("omega", "frequency ω", "rad/s"),
        _f("phase", "phase", "rad"),
    ),
    "impulse": (
        _f("time", "time", "s"),
        _f("body", "body", "", "text"),
        _f("point", "point", "m", "pair"),
        _f("vector", "impulse S", "N·s", "pair"),
    ),
    "scene": (
        _f("title", "title", "", "text"),
        _f("gravity", "gravity g", "m/s²", "pair"),
        _f("contact.restitution", "restitution e", "–"),
        _f("contact.friction", "friction μ", "–"),
        _f("contact.impact_law", "impact law", "", "choice", *IMPACT_LAWS),
        _f("solver.method", "method", "", "choice", "event-driven", "time-stepping"),
        _f("solver.t_end", "end time", "s"),
        _f("solver.dt_out", "output step", "s"),
        _f("solver.dt", "time step (time-stepping)", "s"),
    ),
}
"""The fields shown for each kind of item, in order."""

_TITLES = {
    "wheel": "Wheel",
    "bead": "Bead",
    "axle_cart": "Axle cart",
    "segment": "Wall",
    "polyline": "Curb",
    "arc": "Arc",
    "spring_to_body": "Spring",
    "spring_to_anchor": "Spring (anchored)",
    "harmonic": "Harmonic force",
    "impulse": "Scheduled impulse",
    "scene": "Scene",
}


def item_kind(collection: str, item: dict[str, Any]) -> str:
    """Which field list describes ``item`` of ``collection`` (a key of ``ITEM_FIELDS``)."""
    if collection == "springs":
        return "spring_to_body" if "b" in item else "spring_to_anchor"
    if collection == "impulses":
        return "impulse"
    if collection == "forces":
        return "harmonic"
    kind = str(item.get("type", ""))
    if kind in ITEM_FIELDS:
        return kind
    return "wheel" if collection == "bodies" else "segment"


def _number_text(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.12g}"
    return "" if value is None else str(value)


def _parse_number(text: str) -> float:
    """The number typed in ``text`` (a decimal comma is accepted); ValueError if none."""
    cleaned = text.strip().replace(",", ".")
    if not cleaned:
        raise ValueError("enter a number")
    try:
        return float(cleaned)
    except ValueError:
        raise ValueError(f"not a number: {text.strip()!r}") from None


class FieldEditor(QWidget):
    """The editor(s) of one field, its unit and the line that says why a value is refused."""

    def __init__(self, spec: FieldSpec, apply: Callable[[FieldEditor], None]) -> None:
        super().__init__()
        self.spec = spec
        self._apply = apply
        self.editors: list[QLineEdit | QComboBox] = []
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        if spec.kind == "choice":
            combo = QComboBox()
            combo.addItems(list(spec.choices))
            combo.activated.connect(self._on_edited)
            self.editors.append(combo)
        else:
            for _ in range(2 if spec.kind == "pair" else 1):
                edit = QLineEdit()
                edit.setMinimumWidth(48)
                edit.setReadOnly(spec.kind == "info")
                edit.editingFinished.connect(self._on_edited)
                self.editors.append(edit)
        for editor in self.editors:
            row.addWidget(editor, 1)
        if spec.unit:
            unit = QLabel(spec.unit)
            unit.setMinimumWidth(28)
            row.addWidget(unit)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet(ERROR_LABEL_STYLE)
        self.error.hide()
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(1)
        column.addLayout(row)
        column.addWidget(self.error)

    @property
    def invalid(self) -> bool:
        """True while the field shows a refused value."""
        return not self.error.isHidden()

    def show_value(self, value: Any, default: Any = None) -> None:
        """Display ``value`` (clearing any error); ``default`` is the placeholder of a blank."""
        self.show_error("")
        if self.spec.kind == "choice":
            combo = self.editors[0]
            assert isinstance(combo, QComboBox)
            combo.setCurrentText(str(value))
            return
        if self.spec.kind == "info":
            count = len(value) if isinstance(value, list) else 0
            self._set_text(0, f"{count} points (drag the square handles)")
            return
        if self.spec.kind == "pair":
            pair = value if isinstance(value, (list, tuple)) and len(value) == 2 else ("", "")
            for k in range(2):
                self._set_text(k, _number_text(pair[k]))
            return
        self._set_text(0, _number_text(value))
        edit = self.editors[0]
        assert isinstance(edit, QLineEdit)
        if self.spec.kind == "optional":
            edit.setPlaceholderText(f"scene default ({_number_text(default)})")
        elif self.spec.kind == "compliance":
            name = self.spec.key[-1]
            edit.setPlaceholderText(
                "rigid (type k to make it soft)"
                if name == "stiffness"
                else f"{_number_text(COMPLIANCE_DEFAULTS[name])} when soft"
            )

    def _set_text(self, k: int, text: str) -> None:
        edit = self.editors[k]
        assert isinstance(edit, QLineEdit)
        if edit.text() != text:
            edit.setText(text)
            edit.setCursorPosition(0)

    def value(self) -> Any:
        """The value typed, converted for the scene file.

        Raises
        ------
        ValueError
            With a message for the user when the text is not a number.
        """
        if self.spec.kind == "choice":
            combo = self.editors[0]
            assert isinstance(combo, QComboBox)
            return combo.currentText()
        texts = [e.text() for e in self.editors if isinstance(e, QLineEdit)]
        if self.spec.kind == "text":
            return texts[0].strip()
        if self.spec.kind in ("optional", "compliance"):
            return _parse_number(texts[0]) if texts[0].strip() else None
        numbers = [_parse_number(text) for text in texts]
        return numbers if self.spec.kind == "pair" else numbers[0]

    def show_error(self, reason: str) -> None:
        """Mark the field red with ``reason``; an empty reason clears the mark."""
        for editor in self.editors:
            editor.setStyleSheet(INVALID_STYLE if reason else "")
            editor.setToolTip(reason)
        self.error.setText(reason)
        self.error.setVisible(bool(reason))

    @Slot()
    def _on_edited(self) -> None:
        if self.spec.kind != "info":
            self._apply(self)


def _compliance_edit(
    data: dict[str, Any], path: FieldPath, value: float | None
) -> tuple[FieldPath, Any]:
    """The field set by typing ``value`` (None: blank) in a boundary's compliance field ``path``.

    A stiffness typed on a rigid boundary makes it soft: the whole
    ``compliance`` object, ``{"stiffness": k, "damping": 0, "exponent": 1}``,
    as the scene format writes it; a blank stiffness makes it rigid (the
    object is removed). A blank damping or exponent is its default. Raises
    ValueError (shown red) for a damping or exponent of a rigid boundary.
    """
    owner, name = path[:-1], str(path[-1])
    compliance = get_field(data, owner)
    if name == "stiffness":
        if value is None or compliance is None:
            return owner, None if value is None else {"stiffness": value, **COMPLIANCE_DEFAULTS}
        return path, value
    if compliance is None:
        raise ValueError("a rigid boundary: type its stiffness k first")
    return path, COMPLIANCE_DEFAULTS[name] if value is None else value


class PropertyPanel(QWidget):
    """Edits the selected item of a SceneDocument, or the scene settings when nothing is selected.

    Attributes
    ----------
    fields : dict[str, FieldEditor]
        The editors shown now, keyed by the field's JSON path
        (``"bodies[0].mass"``, ``"contact.friction"``).
    """

    def __init__(self, document: SceneDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.fields: dict[str, FieldEditor] = {}
        self._paths: dict[str, FieldPath] = {}
        self._shown: tuple[Any, ...] | None = None
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: bold; padding: 2px 0;")
        self._form_host = QWidget()
        self._form = QFormLayout(self._form_host)
        self._form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self._form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        self._form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.problems = QLabel()
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet(ERROR_LABEL_STYLE)
        self.problems.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        inner = QWidget()
        column = QVBoxLayout(inner)
        column.addWidget(self.title)
        column.addWidget(self._form_host)
        column.addWidget(self.problems)
        column.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(inner)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        document.changed.connect(self._on_document_changed)
        document.selection_changed.connect(self._on_selection_changed)
        self._refresh()

    # ------------------------------------------------------------------- API

    def field(self, path: str) -> FieldEditor:
        """The editor of the field at JSON path ``path`` (``"bodies[0].mass"``)."""
        return self.fields[path]

    def submit(self, path: str, text: str | tuple[str, str]) -> bool:
        """Type ``text`` into the field at ``path`` and apply it; True if it was applied."""
        editor = self.fields[path]
        texts = (text,) if isinstance(text, str) else text
        for widget, value in zip(editor.editors, texts, strict=True):
            if isinstance(widget, QComboBox):
                widget.setCurrentText(value)
            else:
                widget.setText(value)
        before = self.document.undo_stack.index()
        self._apply(editor)
        return self.document.undo_stack.index() != before

    def apply_pending(self) -> None:
        """Apply the value being typed in the focused field (Run pressed before Enter)."""
        for editor in self.fields.values():
            if any(e.hasFocus() for e in editor.editors) and editor.spec.kind != "info":
                self._apply(editor)

    def refused(self) -> list[str]:
        """The fields shown red, ``"Wheel “ball”, mass: must be > 0, got -3"``, one a line."""
        return [
            f"{self.title.text()}, {editor.spec.label}: {editor.error.text()}"
            for editor in self.fields.values()
            if editor.invalid
        ]

    # -------------------------------------------------------------- building

    def _target(self) -> tuple[ItemRef | None, str, dict[str, Any]]:
        ref = self.document.selection
        if ref is None:
            return None, "scene", self.document.data
        item = self.document.item(ref)
        return ref, item_kind(ref[0], item), item

    def _refresh(self) -> None:
        ref, kind, item = self._target()
        shown = (ref, kind)
        if shown != self._shown:
            self._build(ref, kind)
            self._shown = shown
        heading = _TITLES[kind]
        if ref is not None and item.get("id"):
            heading += f" “{item['id']}”"
        self.title.setText(heading)
        data = self.document.data
        for path_key, editor in self.fields.items():
            if editor.invalid and any(e.hasFocus() for e in editor.editors):
                continue
            path = self._paths[path_key]
            default = None
            if editor.spec.kind == "optional":
                default = get_field(data, ("contact", editor.spec.key[-1]))
            editor.show_value(get_field(data, path), default)
        problems = self.document.problems()
        self.problems.setText(
            "Scene problems:\n" + "\n".join(f"• {p}" for p in problems) if problems else ""
        )
        self.problems.setVisible(bool(problems))

    def _build(self, ref: ItemRef | None, kind: str) -> None:
        self.fields.clear()
        self._paths.clear()
        while self._form.rowCount():
            self._form.removeRow(0)
        for spec in ITEM_FIELDS[kind]:
            path: FieldPath = (*ref, *spec.key) if ref is not None else spec.key
            editor = FieldEditor(spec, self._apply)
            label = QLabel(spec.label)
            self._form.addRow(label, editor)
            self.fields[path_text(path)] = editor
            self._paths[path_text(path)] = path

    @Slot()
    def _on_document_changed(self) -> None:
        self._refresh()

    @Slot(object)
    def _on_selection_changed(self, selection: object) -> None:
        self._refresh()

    # -------------------------------------------------------------- applying

    def _apply(self, editor: FieldEditor) -> None:
        """Validate the editor's value against the whole scene; apply it or show why not."""
        key = next((k for k, e in self.fields.items() if e is editor), None)
        if key is None or not self.isEnabled():
            return
        path = self._paths[key]
        try:
            value = editor.value()
        except ValueError as error:
            editor.show_error(str(error))
            return
        data = self.document.data
        if editor.spec.kind == "compliance":
            try:
                path, value = _compliance_edit(data, path, value)
            except ValueError as error:
                editor.show_error(str(error))
                return
        if value == get_field(data, path):
            editor.show_error("")
            return
        candidate = copy.deepcopy(data)
        renaming = path[0] == "bodies" and path[-1] == "id" and len(path) == 3
        if renaming:
            command = RenameBody(self.document, (str(path[0]), int(path[1])), str(value))
            candidate = command.after
        else:
            set_field(candidate, path, value)
        reasons = self._refusals(key, candidate)
        if reasons:
            editor.show_error("; ".join(reasons))
            return
        editor.show_error("")
        self.document.push(command if renaming else SetProperty(self.document, path, value))

    def _refusals(self, key: str, candidate: dict[str, Any]) -> list[str]:
        """Why ``candidate`` is refused: problems at this field, or new problems elsewhere."""
        before = {problem_path(p)[0] for p in self.document.problems()}
        reasons = []
        for problem in scene_problems(candidate):
            where, message = problem_path(problem)
            at_field = where == key or where.startswith((key + ".", key + "["))
            if at_field:
                reasons.append(message)
            elif where not in before:
                reasons.append(problem)
        return reasons
